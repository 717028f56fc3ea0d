/* plan_build.c — placeholder, being written. */
