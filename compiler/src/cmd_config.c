/* cmd_config.c — `sfc config`: show the effective configuration or the profiles. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "cli_config.h"
#include "units.h"

static const char help[] =
    "usage: sfc config --print [-c CONFIG] [--budget SIZE] [--profile NAME]\n"
    "       sfc config --profiles\n"
    "\n"
    "--print writes the effective configuration — built-in defaults, then CONFIG,\n"
    "then the overrides — as a complete config v1 YAML file you can edit and pass\n"
    "back with -c. --profiles lists the built-in device profiles.\n"
    "\n"
    "example:\n"
    "  sfc config --print --profile v100-nvlink2 > v100.yaml\n"
    "  sfc compile model.json -c v100.yaml -o model.plan\n";

static int run(int argc, char **argv) {
  const char *file = NULL, *budget = NULL, *profile = NULL;
  bool print = false, profiles = false;
  for (int i = 1; i < argc; i++) {
    const char *v = NULL;
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_config);
    if (strcmp(argv[i], "--print") == 0) {
      print = true;
    } else if (strcmp(argv[i], "--profiles") == 0) {
      profiles = true;
    } else if (sfc_cli_option(argc, argv, &i, "--config", "-c", &v)) {
      if (!(file = v))
        return sfc_cli_usage("config", "option '-c' needs a value");
    } else if (sfc_cli_option(argc, argv, &i, "--budget", "-b", &v)) {
      if (!(budget = v))
        return sfc_cli_usage("config", "option '--budget' needs a value");
    } else if (sfc_cli_option(argc, argv, &i, "--profile", NULL, &v)) {
      if (!(profile = v))
        return sfc_cli_usage("config", "option '--profile' needs a value");
    } else {
      return sfc_cli_usage("config", "unexpected argument '%s'", argv[i]);
    }
  }
  if (profiles && (print || file || budget || profile))
    return sfc_cli_usage("config", "--profiles lists the built-in profiles and takes no other "
                                   "option (--print, -c, --budget and --profile are --print's)");
  if (profiles) {
    size_t n;
    const sfc_profile_t *all = sfc_profiles(&n);
    printf("%-16s %10s %10s %10s  %s\n", "profile", "memory", "h2d", "d2h", "description");
    for (size_t i = 0; i < n; i++) {
      char m[32], h[32], d[32];
      printf("%-16s %10s %10s %10s  %s\n", all[i].name,
             sfc_format_size(all[i].memory_bytes, m, sizeof m),
             sfc_format_rate(all[i].h2d_bytes_per_s, h, sizeof h),
             sfc_format_rate(all[i].d2h_bytes_per_s, d, sizeof d), all[i].description);
    }
    return SFC_EXIT_OK;
  }
  if (!print)
    return sfc_cli_usage("config", "say --print or --profiles");
  sfc_error_t err = {0};
  sfc_config_t cfg;
  sfc_cli_config_args_t ca = {.file = file, .profile = profile, .budget = budget};
  if (sfc_cli_load_config(&ca, &cfg, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfc_config_write_yaml(&cfg, stdout);
  return SFC_EXIT_OK;
}

const sfc_command_t sfc_cmd_config = {"config", "config --print: the effective configuration", help,
                                      run};
