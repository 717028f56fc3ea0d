/* pack.c — placeholder, being written. */
