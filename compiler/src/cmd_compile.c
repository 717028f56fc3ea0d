/* cmd_compile.c — `sfc compile`: graph + config -> plan file.
 *
 * Order matters for error reporting: the config is loaded and the overrides
 * applied before the graph is read, so a bad config is reported even when the
 * graph is huge; no plan file is written unless every step succeeded. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "batch_scale.h"
#include "image_scale.h"
#include "inplace.h"
#include "batch_search.h"
#include "cli_config.h"
#include "emit.h"
#include "load_graph.h"
#include "tiler.h"
#include "outfile.h"
#include "pipeline.h"
#include "report.h"
#include "units.h"

static const char help[] =
    "usage: sfc compile GRAPH [-c CONFIG] [--budget SIZE] [--profile NAME] [--packer NAME]\n"
    "                         [--policy P] [--tiling M] [--staging-budget SIZE] [-o PLAN]\n"
    "                         [--batch N] [--image-size N] [--inplace] [--dump-after PASS] "
    "[--json]\n"
    "                         [-v] [-q] [--progress] [--arena contiguous|paged] [--page SIZE]\n"
    "                         [--page-map-cost TIME]\n"
    "\n"
    "Plans the device memory of one training iteration: live ranges, the arena\n"
    "residency of every tensor, exact byte offsets, and writes a plan file the\n"
    "runtime replays. GRAPH is sfc-graph v1 JSON (gzip accepted), see\n"
    "docs/graph-format.md.\n"
    "\n"
    "options:\n"
    "  -c, --config FILE   config v1 YAML (docs/config-format.md); defaults otherwise\n"
    "  -b, --budget SIZE   device memory the plan may use, e.g. 16GiB (overrides config)\n"
    "      --staging-budget SIZE\n"
    "                      pinned host memory the plan may stage swapped tensors in\n"
    "                      (host.staging_budget; 0 = unlimited): the scheduler plans\n"
    "                      for it, tiling: auto may tile to meet it\n"
    "      --profile NAME  built-in device profile (sfc config --profiles)\n"
    "      --packer NAME   packer (overrides config): auto, best-fit, greedy-size, ...\n"
    "                      (sfc pack --list)\n"
    "      --policy P      scheduler policy (overrides config): window (default), none\n"
    "                      (in-core only), vdnn or lms (baselines; docs/algorithms.md)\n"
    "      --tiling M      FT tiling (overrides config): on (tile every spatial segment\n"
    "                      whose recomputed tensors pass 1/16 of the budget), off, auto\n"
    "                      (only where untiled does not fit; the fastest predicted\n"
    "                      grid), fastest (auto, and where tiling is predicted 2 percent\n"
    "                      faster than the untiled plan's swaps: not bitwise equal to\n"
    "                      untiled training); docs/config-format.md\n"
    "      --arena A       contiguous (default): the budget holds the packed arena; paged:\n"
    "                      the runtime maps a page only while live blocks touch it, the\n"
    "                      budget holds the most pages touched at once (plan format 1.7;\n"
    "                      sfc run --device cuda --paged; device.arena)\n"
    "      --page SIZE     the page of a paged arena (default 2MiB; device.page)\n"
    "      --page-map-cost TIME\n"
    "                      host time to map one page, e.g. 12us (device.page_map_cost;\n"
    "                      default 0: not modelled): the chosen paged plan's prediction\n"
    "                      (its steady state: the second iteration) charges it per page\n"
    "                      mapped; the tuners still choose with maps free. tools/gpu-check\n"
    "                      measures it ('paged cost per chunk mapped')\n"
    "      --batch N       rescale the graph from its recorded \"batch\" to N first\n"
    "                      (batch-carrying tensors, their ops' times; docs/exporter.md)\n"
    "      --image-size N  rescale the graph's square input image to N x N first: every\n"
    "                      spatial size derived again op by op (docs/algorithms.md)\n"
    "      --inplace       then let elementwise ops (add, threshold_backward, ...) write\n"
    "                      their result into an input that dies there, as the framework\n"
    "                      must then run them (docs/cli.md): less memory held, fewer swaps\n"
    "  -o, --output PLAN   write the plan here (atomically; never over GRAPH or CONFIG);\n"
    "                      without it nothing is written\n"
    "      --dump-after P  print the IR after pass P (steps, tile, liveness, blocks, schedule,\n"
    "                      pack, slack, plan, verify, predict, bound) or after every pass (all),\n"
    "                      on stderr\n"
    "  -v, --verbose       time each pass on stderr\n"
    "  -q, --quiet         no summary on stdout, no status line on stderr (--progress\n"
    "                      still writes its lines)\n"
    "      --progress      a line on stderr per tuner candidate and packing round (by\n"
    "                      default, when stderr is a terminal, one line rewritten in place)\n"
    "      --json          the summary as one JSON object on stdout (for scripts)\n"
    "\n"
    "example:\n"
    "  sfc compile tests/data/graphs/small_cnn.json --budget 64MiB -o cnn.plan\n"
    "\n"
    "exit status: 0 plan fits the budget; 1 plan written but does not fit;\n"
    "             2 bad input or usage (nothing written); 3 internal error\n";

typedef struct args {
  const char *graph, *output, *dump_after, *batch, *image_size;
  sfc_cli_config_args_t ca; /* -c, --budget, --profile, --packer, --policy */
  int verbose, quiet, json, progress, inplace;
} args_t;

static int parse(int argc, char **argv, args_t *a) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL, *arg = argv[i];
    const char **slot = NULL;
    if (sfc_cli_is_help(arg))
      return -1;
    if (sfc_cli_config_option(argc, argv, &i, &a->ca, &slot, &v))
      ;
    else if (sfc_cli_option(argc, argv, &i, "--output", "-o", &v))
      slot = &a->output;
    else if (sfc_cli_option(argc, argv, &i, "--dump-after", NULL, &v))
      slot = &a->dump_after;
    else if (sfc_cli_option(argc, argv, &i, "--batch", NULL, &v))
      slot = &a->batch;
    else if (sfc_cli_option(argc, argv, &i, "--image-size", NULL, &v))
      slot = &a->image_size;
    else if (strcmp(arg, "-v") == 0 || strcmp(arg, "--verbose") == 0)
      a->verbose++;
    else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0)
      a->quiet = 1;
    else if (strcmp(arg, "--json") == 0)
      a->json = 1;
    else if (strcmp(arg, "--progress") == 0)
      a->progress = 1;
    else if (strcmp(arg, "--inplace") == 0)
      a->inplace = 1;
    else if (arg[0] == '-' && arg[1] != '\0')
      return sfc_cli_usage("compile", "unknown option '%s'", arg);
    else if (a->graph)
      return sfc_cli_usage("compile", "more than one graph given ('%s' and '%s')", a->graph, arg);
    else
      a->graph = arg;
    if (slot) {
      if (!v)
        return sfc_cli_usage("compile", "option '%s' needs a value", arg);
      *slot = v;
    }
  }
  if (!a->graph)
    return sfc_cli_usage("compile", "no graph given");
  if (a->dump_after && strcmp(a->dump_after, "all") != 0) {
    bool known = false;
    for (size_t k = 0; sfc_pass_name(k); k++)
      known |= strcmp(sfc_pass_name(k), a->dump_after) == 0;
    if (!known)
      return sfc_cli_usage("compile", "--dump-after: unknown pass '%s'", a->dump_after);
  }
  return 0;
}

#define JSON_BEHIND 5 /* steps "behind_bound" names */
#define JSON_WAITS  5 /* pieces "bound_waits" names */

/* A new object appended to list, or NULL (out of memory: nothing appended). */
static cJSON *json_item(cJSON *list) {
  cJSON *e = cJSON_CreateObject();
  if (e && !cJSON_AddItemToArray(list, e)) {
    cJSON_Delete(e);
    return NULL;
  }
  return e;
}

/* The summary as JSON: the same numbers as the text summary, for scripts. */
static void print_json(const sfc_ir_t *ir, double seconds, const char *plan, uint64_t plan_bytes) {
  const sfc_graph_t *g = ir->graph;
  const sfc_config_t *cfg = ir->config;
  cJSON *o = cJSON_CreateObject();
  bool ok = o != NULL;
  ok = ok && cJSON_AddStringToObject(o, "graph", g->name);
  ok = ok && (g->batch > 0 ? cJSON_AddNumberToObject(o, "batch", (double)g->batch) != NULL
                           : cJSON_AddNullToObject(o, "batch") != NULL);
  ok = ok && cJSON_AddNumberToObject(o, "ops", g->n_ops);
  ok = ok && cJSON_AddNumberToObject(o, "tensors", g->n_file_tensors);
  ok = ok && cJSON_AddNumberToObject(o, "steps", ir->n_steps);
  ok = ok && cJSON_AddNumberToObject(o, "blocks", ir->plan.block_count);
  uint32_t segs = 0, tiles = 0, recomputed = 0;
  sfc_ir_tiling_counts(ir, &segs, &tiles, &recomputed);
  ok = ok && cJSON_AddNumberToObject(o, "tiled_segments", segs);
  ok = ok && cJSON_AddNumberToObject(o, "tiles", tiles);
  ok = ok && cJSON_AddNumberToObject(o, "recomputed_steps", recomputed);
  ok = ok && cJSON_AddNumberToObject(o, "inplace_ops", g->inplace.ops);
  ok = ok && cJSON_AddNumberToObject(o, "inplace_bytes", (double)g->inplace.bytes);
  ok = ok && cJSON_AddStringToObject(o, "profile", cfg->device.name);
  char from[128];
  ok = ok &&
       cJSON_AddStringToObject(o, "times_from",
                               sfc_times_from(g->device, sfc_graph_measured_ops(g), g->n_ops,
                                              sfc_ir_times_modelled_for(ir), from, sizeof from));
  ok = ok && cJSON_AddNumberToObject(o, "budget_bytes", (double)cfg->budget_bytes);
  ok = ok && cJSON_AddNumberToObject(o, "in_core_peak_bytes", (double)ir->in_core_peak);
  ok = ok && cJSON_AddNumberToObject(o, "lower_bound_bytes", (double)ir->lower_bound);
  ok = ok && cJSON_AddNumberToObject(o, "arena_bytes", (double)ir->arena_bytes);
  ok = ok && cJSON_AddBoolToObject(o, "paged", sfc_ir_paged(ir));
  ok = ok && cJSON_AddNumberToObject(o, "page_bytes",
                                     sfc_ir_paged(ir) ? (double)cfg->arena.page_bytes : 0.0);
  ok = ok && cJSON_AddNumberToObject(o, "page_peak_bytes", (double)ir->page_peak_bytes);
  ok = ok &&
       cJSON_AddNumberToObject(o, "page_map_s", sfc_ir_paged(ir) ? cfg->arena.page_map_s : 0.0);
  ok = ok && cJSON_AddNumberToObject(o, "pages_mapped", (double)ir->pages_mapped);
  ok = ok && cJSON_AddNumberToObject(o, "host_arena_bytes", (double)ir->host_arena_bytes);
  ok = ok && cJSON_AddNumberToObject(o, "staging_least_bytes", (double)ir->staging_least);
  ok = ok && cJSON_AddNumberToObject(
                 o, "arena_over_lower_bound",
                 ir->lower_bound ? (double)ir->arena_bytes / (double)ir->lower_bound : 1.0);
  ok = ok && cJSON_AddStringToObject(o, "packer", ir->packer_name ? ir->packer_name : "");
  ok = ok && cJSON_AddBoolToObject(o, "packing_optimal", ir->packing_optimal);
  ok = ok && cJSON_AddBoolToObject(o, "packing_reproducible", !ir->pack_wall_stopped);
  ok = ok && cJSON_AddBoolToObject(o, "fits_budget", ir->fits_budget);
  ok = ok && cJSON_AddStringToObject(o, "policy", sfc_sched_policy_name(cfg->scheduler.policy));
  ok = ok && cJSON_AddNumberToObject(o, "swaps", ir->n_swaps);
  ok = ok && cJSON_AddNumberToObject(o, "swap_out_bytes", (double)ir->swap_out_bytes);
  ok = ok && cJSON_AddNumberToObject(o, "swap_in_bytes", (double)ir->swap_in_bytes);
  ok = ok && cJSON_AddNumberToObject(o, "predicted_iteration_s", ir->predicted_iteration_s);
  ok = ok && cJSON_AddNumberToObject(o, "stall_s", ir->stall_s);
  ok = ok && cJSON_AddNumberToObject(o, "in_core_iteration_s", ir->compute_s);
  ok = ok && cJSON_AddNumberToObject(o, "lower_bound_iteration_s", ir->time_bound_s);
  sfc_behind_t behind[JSON_BEHIND];
  double lag;
  uint32_t early, nb = sfc_behind_bound(ir, behind, JSON_BEHIND, &lag, &early);
  cJSON *list = ok ? cJSON_AddArrayToObject(o, "behind_bound") : NULL;
  ok = ok && list;
  for (uint32_t i = 0; ok && i < nb; i++) {
    cJSON *e = json_item(list);
    ok = e != NULL;
    ok = ok && cJSON_AddNumberToObject(e, "step", behind[i].step);
    uint32_t st = behind[i].step;
    ok = ok &&
         (st < ir->n_steps ? cJSON_AddStringToObject(e, "op", g->ops[ir->steps[st].op].name) != NULL
                           : cJSON_AddNullToObject(e, "op") != NULL);
    ok = ok && cJSON_AddNumberToObject(e, "s", behind[i].seconds);
  }
  sfc_bound_wait_t waits[JSON_WAITS];
  uint32_t nw = sfc_bound_waits_top(ir, waits, JSON_WAITS);
  cJSON *wl = ok ? cJSON_AddArrayToObject(o, "bound_waits") : NULL;
  ok = ok && wl;
  for (uint32_t i = 0; ok && i < nw; i++) {
    cJSON *e = json_item(wl);
    ok = e != NULL;
    ok = ok && cJSON_AddNumberToObject(e, "first_step", waits[i].from);
    ok = ok && cJSON_AddNumberToObject(e, "last_step", waits[i].to - 1);
    ok = ok && cJSON_AddNumberToObject(e, "compute_s", waits[i].compute_s);
    ok = ok && cJSON_AddNumberToObject(e, "s", waits[i].stall_s);
    ok = ok && cJSON_AddStringToObject(e, "why", sfc_wait_why_name(waits[i].why));
    ok = ok && cJSON_AddNumberToObject(e, "bytes", waits[i].bytes);
  }
  ok = ok && (ir->schedule_infeasible ? cJSON_AddNumberToObject(o, "min_budget_bytes",
                                                                (double)ir->schedule_floor) != NULL
                                      : cJSON_AddNullToObject(o, "min_budget_bytes") != NULL);
  ok = ok && cJSON_AddNumberToObject(o, "compile_ms", seconds * 1e3);
  ok = ok && (plan ? cJSON_AddStringToObject(o, "plan", plan) != NULL
                   : cJSON_AddNullToObject(o, "plan") != NULL);
  ok = ok && cJSON_AddNumberToObject(o, "plan_bytes", (double)plan_bytes);
  char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
  if (text)
    puts(text);
  else
    fputs("sfc: out of memory printing the summary\n", stderr);
  free(text);
  cJSON_Delete(o);
}

static int run(int argc, char **argv) {
  args_t a = {0};
  int rc = parse(argc, argv, &a);
  if (rc < 0)
    return sfc_cli_print_help(&sfc_cmd_compile);
  if (rc)
    return rc;
  int64_t image_size = 0;
  if (a.image_size && !sfc_cli_count(a.image_size, 1, SFC_MAX_IMAGE_SIZE, &image_size))
    return sfc_cli_usage("compile",
                         "--image-size: expected an integer from 1 to %" PRId64 ", got '%s'",
                         SFC_MAX_IMAGE_SIZE, a.image_size);
  int64_t batch = 0;
  if (a.batch && !sfc_cli_count(a.batch, 1, SFC_MAX_BATCH, &batch))
    return sfc_cli_usage("compile", "--batch: expected an integer from 1 to %" PRId64 ", got '%s'",
                         SFC_MAX_BATCH, a.batch);

  double t0 = sfc_clock_seconds();
  sfc_error_t err = {0};
  /* the plan: never the graph or the config, and writable, before any work */
  const char *inputs[] = {a.graph, a.ca.file};
  if (a.output && sfc_outfile_check(a.output, inputs, 2, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfc_config_t cfg;
  if (sfc_cli_load_config(&a.ca, &cfg, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfc_graph_t *graph = NULL;
  char gshown[SFC_PATH_SHOWN_BYTES]; /* the graph's path in messages, escaped: one line */
  char oshown[SFC_PATH_SHOWN_BYTES]; /* the plan's, for the summary */
  sfc_cli_path_shown(a.graph, gshown);
  if (sfc_graph_load_file(a.graph, &graph, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  if ((image_size && sfc_graph_image_scale(graph, image_size, &err) != SFC_OK) ||
      (a.batch && sfc_graph_batch_scale(graph, batch, &err) != SFC_OK) ||
      (a.inplace && sfc_graph_inplace(graph, &graph->inplace, &err) != SFC_OK)) {
    sfc_graph_destroy(graph);
    sfc_error_prefix(&err, a.graph);
    return sfc_cli_fail(&err);
  }

  sfc_ir_t ir;
  sfc_ir_init(&ir, graph, &cfg);
  sfc_compile_options_t opt = {.dump_after = a.dump_after, .verbose = a.verbose};
  /* progress: asked for, or on a terminal (not beside -v's lines, nor with -q) */
  if (a.progress)
    opt.progress = SFC_PROGRESS_LINE;
  else if (!a.quiet && !a.verbose && !a.dump_after && isatty(STDERR_FILENO))
    opt.progress = SFC_PROGRESS_TTY;
  sfc_status_t st = sfc_compile_ir(&ir, &opt, &err);
  sfc_compile_progress_end(&opt); /* the status line goes before any summary or error */
  uint64_t plan_bytes = 0;
  if (st == SFC_OK && a.output) {
    void *data = NULL;
    size_t bytes = 0;
    st = sfc_plan_write_buffer(&ir.plan, &data, &bytes, &err);
    if (st == SFC_OK)
      st = sfc_outfile_write(a.output, data, bytes, &err); /* /dev/null and FIFOs too */
    if (st == SFC_OK)
      plan_bytes = bytes;
    free(data);
  }
  if (st == SFC_OK && a.json)
    print_json(&ir, sfc_clock_seconds() - t0, a.output, plan_bytes);
  else if (st == SFC_OK && !a.quiet)
    sfc_report_compile(&ir, sfc_clock_seconds() - t0,
                       a.output ? sfc_cli_path_shown(a.output, oshown) : NULL, plan_bytes, stdout);
  bool fits = ir.fits_budget;
  if (st == SFC_OK && !fits && ir.schedule_infeasible) { /* no schedule reaches the budget */
    char need[32], have[32], pers[32], ops[32], rest[32], op[SFC_NAME_SHOWN_BYTES], more[96];
    int64_t most = -1;
    sfc_error_t ignored;
    if (a.batch && sfc_batch_floor_limit(graph, &cfg, 1, batch, &most, &ignored) != SFC_OK)
      most = -1; /* the line still says what it knows */
    if (most > 0)
      snprintf(more, sizeof more,
               "no --batch above %" PRId64 " can fit (the largest whose floor does)", most);
    else if (most == 0)
      snprintf(more, sizeof more, "not even --batch 1 can fit");
    else
      snprintf(more, sizeof more, "a smaller --batch could fit");
    uint64_t floor = ir.schedule_floor;
    uint64_t kept = ir.schedule_floor_persistent + ir.schedule_floor_operands;
    fprintf(stderr,
            "sfc: %s: no schedule fits %s: at least %s stays on the device at step %u "
            "(\"%s\": %s persistent, %s of the step's operands, %s in flight or unswappable); "
            "%s\n",
            gshown, sfc_format_size(cfg.budget_bytes, have, sizeof have),
            sfc_format_size(floor, need, sizeof need), ir.schedule_floor_step,
            sfc_name_shown(graph->ops[ir.steps[ir.schedule_floor_step].op].name, op),
            sfc_format_size(ir.schedule_floor_persistent, pers, sizeof pers),
            sfc_format_size(ir.schedule_floor_operands, ops, sizeof ops),
            sfc_format_size(floor > kept ? floor - kept : 0, rest, sizeof rest), more);
    /* why FT tiling does not shrink that step, when it is a spatial one left whole */
    char why[4 * SFC_NAME_SHOWN_BYTES + 512];
    uint32_t k = ir.schedule_floor_step;
    if (cfg.tiling.mode != SFC_TILING_OFF && k < ir.n_steps &&
        ir.steps[k].segment == SFC_PLAN_NONE &&
        sfc_ft_why_whole(graph, ir.steps[k].op, why, sizeof why))
      fprintf(stderr, "sfc: hint: FT tiling cannot shrink step %u: %s\n", k, why);
  } else if (st == SFC_OK && !fits && sfc_ir_device_bytes(&ir) > cfg.budget_bytes) {
    char need[32], have[32];
    fprintf(stderr, "sfc: %s: the plan needs %s%s, more than the budget of %s\n", gshown,
            sfc_format_size(sfc_ir_device_bytes(&ir), need, sizeof need),
            sfc_ir_paged(&ir) ? " of pages" : "",
            sfc_format_size(cfg.budget_bytes, have, sizeof have));
  }
  if (st == SFC_OK && !fits && cfg.host.staging_budget_bytes &&
      ir.host_arena_bytes > cfg.host.staging_budget_bytes) { /* the pinned staging arena */
    char need[32], have[32], live[32], dev[32], op[96];
    /* Any plan: at step k every live byte the device budget cannot hold waits in pinned
     * host memory (a swapped tensor's staging block, or a home there) */
    uint64_t floor = ir.staging_least;
    uint32_t at = ir.staging_least_step;
    if (floor > cfg.host.staging_budget_bytes)
      fprintf(stderr,
              "sfc: %s: no schedule fits host.staging_budget %s: at step %u (\"%s\") %s is "
              "live and the device budget holds %s, so at least %s waits in pinned host "
              "memory\n",
              gshown, sfc_format_size(cfg.host.staging_budget_bytes, have, sizeof have), at,
              sfc_name_shown(graph->ops[ir.steps[at].op].name, op),
              sfc_format_size(ir.live_bytes[at], live, sizeof live),
              sfc_format_size(cfg.budget_bytes, dev, sizeof dev),
              sfc_format_size(floor, need, sizeof need));
    else
      fprintf(stderr,
              "sfc: %s: no plan found within host.staging_budget %s: the closest stages %s "
              "in pinned host memory (any plan at least %s; the device budget comes first)\n",
              gshown, sfc_format_size(cfg.host.staging_budget_bytes, have, sizeof have),
              sfc_format_size(ir.host_arena_bytes, need, sizeof need),
              sfc_format_size(floor, live, sizeof live));
  }
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(graph);
  if (st == SFC_ERR_LIMIT) /* the graph's: a plan past the format's limits */
    sfc_error_prefix(&err, a.graph);
  if (st != SFC_OK)
    return sfc_cli_fail(&err);
  return fits ? SFC_EXIT_OK : SFC_EXIT_FAIL;
}

const sfc_command_t sfc_cmd_compile = {"compile", "compile GRAPH -o PLAN: plan one iteration", help,
                                       run};
