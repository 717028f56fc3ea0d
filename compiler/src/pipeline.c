/* pipeline.c — placeholder, being written. */
