/* pass_steps.c — placeholder, being written. */
