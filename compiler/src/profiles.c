/* profiles.c — placeholder, being written. */
