/* pack_bench.c — benchmark driver for the exact packers, run by hand (not a test).
 *
 *   pack_bench [--algorithm NAME] [--capacity N] [--minimize] [--time-limit S]
 *              [--verbose] FILE.csv...
 *
 * Reads each minimalloc CSV file, runs the packer through sfc_pack_run (which
 * verifies the packing with sfc_pack_check), and prints one row per file: blocks,
 * lower bound, peak, peak / lower bound, proven bound, optimal, seconds. With
 * --capacity 0 (default) a file named like A.1048576.csv takes its capacity from
 * the name; --capacity -1 means none (minimise).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "pack_csv.h"

static uint64_t capacity_from_name(const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strchr(base, '.');
  if (!dot)
    return 0;
  char *end;
  unsigned long long v = strtoull(dot + 1, &end, 10);
  return (end != dot + 1 && *end == '.') ? (uint64_t)v : 0;
}

int main(int argc, char **argv) {
  const char *algorithm = "search";
  long long capacity = 0;
  sfc_pack_options_t opt = {.wall_clock = true}; /* a benchmark: limits on this machine's clock */
  int first = 1, failures = 0;
  for (; first < argc && argv[first][0] == '-'; first++) {
    if (strcmp(argv[first], "--algorithm") == 0 && first + 1 < argc)
      algorithm = argv[++first];
    else if (strcmp(argv[first], "--capacity") == 0 && first + 1 < argc)
      capacity = strtoll(argv[++first], NULL, 10);
    else if (strcmp(argv[first], "--time-limit") == 0 && first + 1 < argc)
      opt.time_limit_s = strtod(argv[++first], NULL);
    else if (strcmp(argv[first], "--minimize") == 0)
      opt.minimize = true;
    else if (strcmp(argv[first], "--verbose") == 0)
      opt.verbose = 1;
    else {
      fprintf(stderr, "usage: pack_bench [--algorithm NAME] [--capacity N] [--minimize] "
                      "[--time-limit S] [--verbose] FILE.csv...\n");
      return 2;
    }
  }
  printf("%-40s %6s %12s %12s %8s %12s %5s %8s\n", "file", "blocks", "lower", "peak", "peak/lb",
         "bound", "opt", "seconds");
  for (int f = first; f < argc; f++) {
    sfc_error_t err;
    sfc_pack_csv_t csv;
    if (sfc_pack_csv_read_file(argv[f], &csv, &err) != SFC_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 2;
    }
    for (size_t i = 0; i < csv.count; i++)
      csv.blocks[i].offset = 0;
    sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
    p.capacity = capacity > 0    ? (uint64_t)capacity
                 : capacity == 0 ? capacity_from_name(argv[f])
                                 : 0;
    sfc_pack_result_t r;
    if (sfc_pack_run(algorithm, &p, &opt, &r, &err) != SFC_OK) {
      fprintf(stderr, "%s: %s\n", argv[f], err.message);
      failures++;
    } else {
      const char *name = strrchr(argv[f], '/');
      printf("%-40s %6zu %12" PRIu64 " %12" PRIu64 " %8.4f %12" PRIu64 " %5s %8.3f%s\n",
             name ? name + 1 : argv[f], csv.count, r.lower_bound, r.peak,
             r.lower_bound ? (double)r.peak / (double)r.lower_bound : 1.0, r.best_bound,
             r.optimal ? "yes" : "no", r.seconds,
             p.capacity && r.peak > p.capacity ? "  OVER CAPACITY" : "");
      if (p.capacity && r.peak > p.capacity)
        failures++;
    }
    fflush(stdout);
    sfc_pack_csv_free(&csv);
  }
  return failures ? 1 : 0;
}
