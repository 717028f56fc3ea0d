/* pack_greedy.c — placeholder, being written. */
