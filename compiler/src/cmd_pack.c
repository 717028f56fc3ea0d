/* cmd_pack.c — `sfc pack`: pack a DSA instance given as a minimalloc CSV file.
 *
 * Reads id,lower,upper,size (pack_csv.h), runs one packer through sfc_pack_run
 * (which verifies the packing independently), prints a summary, and optionally
 * writes the packing as CSV with an offset column and as an SVG picture. Lets sfc
 * be compared with other packers (MiniMalloc, idealloc, TelaMalloc) on the same
 * files. Outputs are checked before the packing (never the input, never each other,
 * writable: outfile.h) and written atomically, only after the packing succeeded. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "config.h"
#include "outfile.h"
#include "pack.h"
#include "pack_csv.h"
#include "svg.h"
#include "units.h"

static const char help[] =
    "usage: sfc pack BLOCKS.csv [--algorithm NAME] [--capacity SIZE] [--alignment N]\n"
    "                           [--time-limit DUR] [--wall-clock] [--mip-max-blocks N]\n"
    "                           [--page SIZE] [-o OUT.csv] [--svg OUT.svg] [-v] [--list]\n"
    "\n"
    "Packs one dynamic storage allocation instance: every buffer gets an offset so\n"
    "that buffers live at the same time never share a byte, minimising the peak.\n"
    "BLOCKS.csv is the minimalloc format: a header 'id,lower,upper,size' and one row\n"
    "per buffer, live over [lower, upper) (an offset column is allowed and ignored).\n"
    "Prints buffers, lower bound (max live bytes), peak, peak / lower bound, whether\n"
    "the peak is proven optimal, the packer that produced it and the time.\n"
    "\n"
    "options:\n"
    "  -a, --algorithm NAME     packer (default auto; see below)\n"
    "  -c, --capacity SIZE      the peak must not exceed SIZE, at least 1 (exit 1 when\n"
    "                           it does; without it there is no limit)\n"
    "      --alignment N        every offset a multiple of N, a power of two (default 1)\n"
    "  -t, --time-limit DUR     for exact and anytime packers, e.g. 10s (default 10s),\n"
    "                           on the work clock: each run is charged its modelled\n"
    "                           cost (seconds of a 2-core x86-64 VM), so the result\n"
    "                           depends on the input alone; the wall clock stops a\n"
    "                           run at 4 x the limit + 1 s anyway (then said on stderr)\n"
    "      --wall-clock         measure --time-limit on the wall clock instead (the\n"
    "                           result then depends on this machine's speed and load)\n"
    "      --mip-max-blocks N   auto tries the MIP on parts up to N buffers (default 30)\n"
    "      --page SIZE          also print the page peak: the most bytes of whole pages\n"
    "                           of SIZE (e.g. 2MiB) that buffers live at one time touch,\n"
    "                           i.e. what a paged arena (pages mapped while in use)\n"
    "                           would hold for this packing\n"
    "  -o, --output OUT.csv     write id,lower,upper,size,offset\n"
    "      --svg OUT.svg        write a picture: time on x, offset on y\n"
    "  -v, --verbose            progress on stderr\n"
    "      --list               list the packers with one line each, and exit\n"
    "\n"
    "packers: auto (best of the heuristics, then the exact ones), best-fit,\n"
    "greedy-size, greedy-lifetime, greedy-area, greedy-start, the same four with\n"
    "-bestgap (tightest gap instead of lowest), and the exact mip and search when\n"
    "this build has them (sfc pack --list).\n"
    "\n"
    "example:\n"
    "  sfc pack ../shared/data/minimalloc/challenging/C.1048576.csv --capacity 1048576 \\\n"
    "      -o C.packed.csv --svg C.svg\n"
    "\n"
    "exit status: 0 packed (within the capacity, if given); 1 the peak exceeds the\n"
    "             capacity (outputs still written); 2 bad input or usage; 3 internal error\n";

static int print_list(void) {
  size_t n;
  const sfc_packer_t *all = sfc_packers(&n);
  for (size_t i = 0; i < n; i++)
    printf("%-24s %s\n", all[i].name, all[i].summary);
  return SFC_EXIT_OK;
}

static int run_pack(int argc, char **argv) {
  const char *input = NULL, *algorithm = "auto", *capacity_s = NULL, *alignment_s = NULL,
             *limit_s = NULL, *mip_s = NULL, *page_s = NULL, *output = NULL, *svg = NULL, *v;
  int verbose = 0;
  bool wall_clock = false;
  for (int i = 1; i < argc; i++) {
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_pack);
    if (strcmp(argv[i], "--list") == 0)
      return print_list();
  }
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (sfc_cli_option(argc, argv, &i, "--algorithm", "-a", &v))
      algorithm = v;
    else if (sfc_cli_option(argc, argv, &i, "--capacity", "-c", &v))
      capacity_s = v;
    else if (sfc_cli_option(argc, argv, &i, "--alignment", NULL, &v))
      alignment_s = v;
    else if (sfc_cli_option(argc, argv, &i, "--time-limit", "-t", &v))
      limit_s = v;
    else if (strcmp(a, "--wall-clock") == 0) {
      wall_clock = true;
      continue;
    } else if (sfc_cli_option(argc, argv, &i, "--mip-max-blocks", NULL, &v))
      mip_s = v;
    else if (sfc_cli_option(argc, argv, &i, "--output", "-o", &v))
      output = v;
    else if (sfc_cli_option(argc, argv, &i, "--svg", NULL, &v))
      svg = v;
    else if (sfc_cli_option(argc, argv, &i, "--page", NULL, &v))
      page_s = v;
    else if (strcmp(a, "-v") == 0 || strcmp(a, "--verbose") == 0) {
      verbose++;
      continue;
    } else if (a[0] == '-' && a[1])
      return sfc_cli_usage("pack", "unknown option '%s'", a);
    else if (input)
      return sfc_cli_usage("pack", "more than one input given");
    else {
      input = a;
      continue;
    }
    if (!v)
      return sfc_cli_usage("pack", "option '%s' needs a value", a);
  }
  if (!input)
    return sfc_cli_usage("pack", "no input given");
  if (!sfc_packer_find(algorithm))
    return sfc_cli_usage("pack", "unknown algorithm '%s'", algorithm);
  char why[128];
  uint64_t capacity = 0, alignment = 1;
  if (capacity_s && !sfc_parse_size(capacity_s, &capacity, why, sizeof why))
    return sfc_cli_usage("pack", "--capacity: %s", why);
  if (capacity_s && capacity == 0)
    return sfc_cli_usage("pack", "--capacity: must be at least 1 byte (leave it out for none)");
  if (alignment_s) {
    if (!sfc_parse_size(alignment_s, &alignment, why, sizeof why))
      return sfc_cli_usage("pack", "--alignment: %s", why);
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
      return sfc_cli_usage("pack", "--alignment: %" PRIu64 " is not a power of two", alignment);
  }
  uint64_t page = 0;
  if (page_s && !sfc_parse_size(page_s, &page, why, sizeof why))
    return sfc_cli_usage("pack", "--page: %s", why);
  if (page_s && page == 0)
    return sfc_cli_usage("pack", "--page: must be at least 1 byte");
  sfc_pack_options_t opt = {
      .time_limit_s = 10.0, .mip_max_blocks = 30, .verbose = verbose, .wall_clock = wall_clock};
  if (limit_s && !sfc_parse_time_limit(limit_s, &opt.time_limit_s, why, sizeof why))
    return sfc_cli_usage("pack", "--time-limit: %s", why);
  if (mip_s) {
    int64_t m = 0;
    if (!sfc_cli_count(mip_s, 0, SFC_MIP_MAX_BLOCKS_MAX, &m))
      return sfc_cli_usage("pack",
                           "--mip-max-blocks: expected 0..%d (as packer.mip_max_blocks), got '%s'",
                           SFC_MIP_MAX_BLOCKS_MAX, mip_s);
    opt.mip_max_blocks = (uint32_t)m;
  }

  /* outputs: never the input, never each other, and writable, before any packing */
  sfc_error_t err = {0};
  if ((output && sfc_outfile_check(output, &input, 1, &err) != SFC_OK) ||
      (svg && sfc_outfile_check(svg, &input, 1, &err) != SFC_OK) ||
      sfc_outfile_check_distinct(output, svg, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfc_pack_csv_t csv;
  if (sfc_pack_csv_read_file(input, &csv, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfc_pack_problem_t problem = {
      .blocks = csv.blocks, .count = csv.count, .alignment = alignment, .capacity = capacity};
  sfc_pack_result_t res;
  sfc_status_t st = sfc_pack_run(algorithm, &problem, &opt, &res, &err);
  if (st != SFC_OK) {
    sfc_error_prefix(&err, input);
    sfc_pack_csv_free(&csv);
    return sfc_cli_fail(&err);
  }
  int rc = capacity && res.peak > capacity ? SFC_EXIT_FAIL : SFC_EXIT_OK;
  char a[32], b[32], shown[SFC_PATH_SHOWN_BYTES];
  printf("%s: %zu buffers\n", sfc_cli_path_shown(input, shown), csv.count);
  printf("  lower bound   %" PRIu64 " (%s)\n", res.lower_bound,
         sfc_format_size(res.lower_bound, a, sizeof a));
  printf("  peak          %" PRIu64 " (%s)\n", res.peak, sfc_format_size(res.peak, b, sizeof b));
  printf("  peak/lower    %.4f\n",
         res.lower_bound ? (double)res.peak / (double)res.lower_bound : 1.0);
  printf("  optimal       %s\n", res.optimal ? "yes (proven)" : "not proven");
  if (page) {
    uint64_t page_peak = 0;
    char c[32];
    if (sfc_pack_page_peak(&problem, page, &page_peak, &err) != SFC_OK) {
      sfc_pack_csv_free(&csv);
      return sfc_cli_fail(&err);
    }
    printf("  page peak     %" PRIu64 " (%s in pages of %s; %.4f x lower bound)\n", page_peak,
           sfc_format_size(page_peak, a, sizeof a), sfc_format_size(page, c, sizeof c),
           res.lower_bound ? (double)page_peak / (double)res.lower_bound : 1.0);
  }
  if (capacity)
    printf("  capacity      %" PRIu64 " (%s)\n", capacity,
           res.peak <= capacity ? "fits" : "exceeded");
  if (strcmp(algorithm, res.algorithm) == 0)
    printf("  algorithm     %s\n", algorithm);
  else
    printf("  algorithm     %s (best: %s)\n", algorithm, res.algorithm);
  printf("  time          %.1f ms\n", res.seconds * 1e3);
  if (res.work_s > 0)
    printf("  work clock    %.3f ms (modelled; what --time-limit counts)\n", res.work_s * 1e3);
  if (res.wall_stopped)
    fprintf(stderr,
            "sfc: note: %s: the wall clock stopped %s at 4 x --time-limit + 1 s; another "
            "machine may pack it differently\n",
            input, algorithm);

  if (output && sfc_pack_csv_write_file(output, &csv, &err) != SFC_OK)
    rc = sfc_cli_fail(&err);
  if (svg && rc != SFC_EXIT_INTERNAL && rc != SFC_EXIT_BAD_INPUT) {
    char title[512];
    snprintf(title, sizeof title, "%s: %s, peak %" PRIu64 ", %.4f x lower bound", input,
             res.algorithm, res.peak,
             res.lower_bound ? (double)res.peak / (double)res.lower_bound : 1.0);
    sfc_svg_packing_t pic = {.blocks = csv.blocks,
                             .names = csv.ids,
                             .count = csv.count,
                             .lower_bound = res.lower_bound,
                             .capacity = capacity,
                             .title = title};
    if (sfc_svg_write_file(svg, &pic, &err) != SFC_OK)
      rc = sfc_cli_fail(&err);
  }
  sfc_pack_csv_free(&csv);
  return rc;
}

const sfc_command_t sfc_cmd_pack = {
    "pack", "pack BLOCKS.csv [--algorithm NAME]: pack a DSA instance (minimalloc CSV)", help,
    run_pack};
