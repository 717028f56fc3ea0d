/* cmd_compile.c — placeholder, being written. */
