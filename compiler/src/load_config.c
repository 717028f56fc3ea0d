/* load_config.c — placeholder, being written. */
