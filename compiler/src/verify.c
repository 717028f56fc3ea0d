/* verify.c — placeholder, being written. */
