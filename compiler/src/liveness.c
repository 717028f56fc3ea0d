/* liveness.c — placeholder, being written. */
