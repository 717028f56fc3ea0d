/* units.c — placeholder, being written. */
