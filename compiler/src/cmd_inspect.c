/* cmd_inspect.c — placeholder, being written. */
