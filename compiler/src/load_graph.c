/* load_graph.c — placeholder, being written. */
