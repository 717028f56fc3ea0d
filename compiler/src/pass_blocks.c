/* pass_blocks.c — placeholder, being written. */
