/* cli_config.c — the configuration a command runs with: built-in defaults, then
 * the -c file, then command-line overrides (--profile, --budget, --packer, --policy,
 * --tiling, --staging-budget, --arena, --page, --page-map-cost). */
#include <string.h>

#include "cli.h"
#include "cli_config.h"
#include "pack.h"
#include "sfc/plan_format.h"
#include "units.h"

bool sfc_cli_config_option(int argc, char **argv, int *i, sfc_cli_config_args_t *args,
                           const char ***slot, const char **value) {
  if (sfc_cli_option(argc, argv, i, "--config", "-c", value))
    *slot = &args->file;
  else if (sfc_cli_option(argc, argv, i, "--budget", "-b", value))
    *slot = &args->budget;
  else if (sfc_cli_option(argc, argv, i, "--profile", NULL, value))
    *slot = &args->profile;
  else if (sfc_cli_option(argc, argv, i, "--packer", NULL, value))
    *slot = &args->packer;
  else if (sfc_cli_option(argc, argv, i, "--policy", NULL, value))
    *slot = &args->policy;
  else if (sfc_cli_option(argc, argv, i, "--tiling", NULL, value))
    *slot = &args->tiling;
  else if (sfc_cli_option(argc, argv, i, "--staging-budget", NULL, value))
    *slot = &args->staging;
  else if (sfc_cli_option(argc, argv, i, "--arena", NULL, value))
    *slot = &args->arena;
  else if (sfc_cli_option(argc, argv, i, "--page", NULL, value))
    *slot = &args->page;
  else if (sfc_cli_option(argc, argv, i, "--page-map-cost", NULL, value))
    *slot = &args->map;
  else
    return false;
  return true;
}

sfc_status_t sfc_cli_load_config(const sfc_cli_config_args_t *a, sfc_config_t *cfg,
                                 sfc_error_t *err) {
  sfc_config_defaults(cfg);
  if (a->file)
    SFC_TRY(sfc_config_load_file(a->file, cfg, err));
  if (a->profile) {
    const sfc_profile_t *p = sfc_profile_find(a->profile);
    if (!p)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--profile: unknown profile '%s' (see 'sfc config --profiles')",
                           a->profile);
    cfg->device = *p;
    cfg->budget_bytes = p->memory_bytes; /* a profile brings its own memory */
  }
  if (a->budget) {
    char why[128];
    uint64_t bytes;
    if (!sfc_parse_size(a->budget, &bytes, why, sizeof why))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--budget: %s", why);
    if (bytes == 0)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--budget: a budget of 0 bytes fits nothing");
    if (bytes > cfg->device.memory_bytes) {
      char m[32];
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--budget: %s is more than the %s of device memory (device.memory: "
                           "profile %s's unless the config sets it; pick another --profile or "
                           "set device.memory in a config)",
                           a->budget, sfc_format_size_exact(cfg->device.memory_bytes, m, sizeof m),
                           cfg->device.name);
    }
    cfg->budget_bytes = bytes;
  }
  if (a->staging) {
    char why[128];
    uint64_t bytes;
    if (!sfc_parse_size(a->staging, &bytes, why, sizeof why))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--staging-budget: %s", why);
    cfg->host.staging_budget_bytes = bytes; /* 0: unlimited, as in a config */
  }
  if (a->packer) {
    if (strlen(a->packer) >= sizeof cfg->packer.algorithm)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--packer: name too long");
    strcpy(cfg->packer.algorithm, a->packer);
  }
  if (a->policy) {
    int found = -1;
    for (int p = SFC_SCHED_NONE; p <= SFC_SCHED_LMS; p++)
      if (strcmp(a->policy, sfc_sched_policy_name((sfc_sched_policy_t)p)) == 0)
        found = p;
    if (found < 0)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--policy: unknown scheduler policy '%s' (expected one of: none, "
                           "window, vdnn, lms)",
                           a->policy);
    cfg->scheduler.policy = (sfc_sched_policy_t)found;
  }
  if (a->tiling) {
    int found = -1;
    for (int m = SFC_TILING_OFF; m <= SFC_TILING_FASTEST; m++)
      if (strcmp(a->tiling, sfc_tiling_mode_name((sfc_tiling_mode_t)m)) == 0)
        found = m;
    if (found < 0)
      return sfc_error_set(
          err, SFC_ERR_BAD_INPUT,
          "--tiling: unknown tiling mode '%s' (expected one of: off, on, auto, fastest)",
          a->tiling);
    cfg->tiling.mode = (sfc_tiling_mode_t)found;
  }
  if (a->arena) {
    if (strcmp(a->arena, "paged") == 0)
      cfg->arena.kind = SFC_ARENA_PAGED;
    else if (strcmp(a->arena, "contiguous") == 0)
      cfg->arena.kind = SFC_ARENA_CONTIGUOUS;
    else
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--arena: unknown arena '%s' (expected contiguous or paged)", a->arena);
  }
  if (a->page) {
    char why[128], al[32];
    uint64_t bytes;
    if (!sfc_parse_size(a->page, &bytes, why, sizeof why))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--page: %s", why);
    if (bytes == 0 || bytes > SFC_PLAN_MAX_ARENA_BYTES || bytes % cfg->device.alignment != 0)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--page: %s is not a page size: more than 0, at most 1 PiB and a "
                           "multiple of the alignment (%s)",
                           a->page, sfc_format_size_exact(cfg->device.alignment, al, sizeof al));
    cfg->arena.page_bytes = bytes;
  }
  if (a->map) {
    char why[128];
    double s;
    if (!sfc_parse_duration(a->map, &s, why, sizeof why))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "--page-map-cost: %s", why);
    if (!(s >= 0 && s <= SFC_PAGE_MAP_MAX_S))
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "--page-map-cost: %s is not a time to map a page: 0 .. 1s", a->map);
    cfg->arena.page_map_s = s;
  }
  /* The config loader checked a packer.algorithm the file gave (with its line and column). */
  if (!sfc_packer_find(cfg->packer.algorithm)) {
    char list[512] = "";
    size_t n;
    const sfc_packer_t *all = sfc_packers(&n); /* "auto" is the first */
    for (size_t i = 0; i < n; i++) {
      if (i)
        strncat(list, ", ", sizeof list - strlen(list) - 1);
      strncat(list, all[i].name, sizeof list - strlen(list) - 1);
    }
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "%s: unknown packer '%s' (expected one of: %s)",
                         a->packer ? "--packer" : "packer.algorithm", cfg->packer.algorithm, list);
  }
  return SFC_OK;
}
