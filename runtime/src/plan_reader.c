/* plan_reader.c — placeholder, being written. */
