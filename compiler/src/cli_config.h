/* cli_config.h — load the effective config for a command (see cli_config.c). */
#ifndef SFC_CLI_CONFIG_H
#define SFC_CLI_CONFIG_H

#include "config.h"

typedef struct sfc_cli_config_args {
  const char *file;    /* -c, or NULL */
  const char *profile; /* --profile, or NULL */
  const char *budget;  /* --budget, or NULL */
  const char *packer;  /* --packer, or NULL */
  const char *policy;  /* --policy, or NULL */
  const char *tiling;  /* --tiling, or NULL */
  const char *staging; /* --staging-budget, or NULL */
  const char *arena;   /* --arena, or NULL */
  const char *page;    /* --page, or NULL */
  const char *map;     /* --page-map-cost, or NULL */
} sfc_cli_config_args_t;

/* Whether argv[*i] is one of the options above (-c/--config, -b/--budget, --profile,
 * --packer, --policy, --tiling, --staging-budget, --arena, --page, --page-map-cost); then *slot is
 * the field of args it sets, *value its value (NULL when missing, which the caller reports) and *i
 * is past it. */
bool sfc_cli_config_option(int argc, char **argv, int *i, sfc_cli_config_args_t *args,
                           const char ***slot, const char **value);

sfc_status_t sfc_cli_load_config(const sfc_cli_config_args_t *args, sfc_config_t *cfg,
                                 sfc_error_t *err);

#endif /* SFC_CLI_CONFIG_H */
