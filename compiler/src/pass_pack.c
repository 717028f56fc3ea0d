/* pass_pack.c — placeholder, being written. */
