/* cmd_config.c — placeholder, being written. */
