/* cmd_maxbatch.c — `sfc maxbatch`: the largest batch a budget trains, how fast, and how
 * far from the physical limit (issue 11 item 7). Searches over `--batch` with the whole
 * compiler in process (batch_search.h); progress on stderr, the answer on stdout. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "batch_scale.h"
#include "inplace.h"
#include "batch_search.h"
#include "cli.h"
#include "cli_config.h"
#include "load_graph.h"
#include "report.h"
#include "units.h"

static const char help[] =
    "usage: sfc maxbatch GRAPH [-c CONFIG] [--budget SIZE] [--profile NAME] [--policy P]\n"
    "                          [--packer NAME] [--staging-budget SIZE] [--tiling M] [--max N]\n"
    "                          [--arena contiguous|paged] [--page SIZE]\n"
    "                          [--page-map-cost TIME] [--inplace] [--json] [-q]\n"
    "\n"
    "Finds the largest batch whose plan fits the budget: GRAPH (sfc-graph v1 with a\n"
    "recorded \"batch\", as sfc-export writes) rescaled with --batch and compiled in\n"
    "process, exactly as 'sfc compile --batch N' would. Prints:\n"
    "  physical limit  the largest batch whose schedule floor fits (what no schedule can\n"
    "                  leave: persistent tensors and one step's own operands); no larger\n"
    "                  batch can fit under any policy. Bisection on the floor (exact).\n"
    "  max batch       the largest batch whose packed plan fits under the policy (and\n"
    "                  host.staging_budget when the config sets one), and its\n"
    "                  predicted samples/s (sim device). Doubling from batch 1, then\n"
    "                  bisection below the physical limit, assuming a batch that fits\n"
    "                  means every smaller one fits (packing does not promise it).\n"
    "  in-core best    the best samples/s of any batch whose plan fits in-core (policy\n"
    "                  none): the largest such batch is found by bisection, and every\n"
    "                  power of two below it and itself are evaluated; the ratio of the\n"
    "                  max batch's samples/s to it.\n"
    "All times are predicted (device time model and sim), never measured.\n"
    "\n"
    "options:\n"
    "  -c, --config FILE   config v1 YAML; defaults otherwise\n"
    "  -b, --budget SIZE   device memory a plan may use (overrides config)\n"
    "      --staging-budget SIZE\n"
    "                      pinned host memory a plan may stage in (host.staging_budget)\n"
    "      --profile NAME  built-in device profile (sfc config --profiles)\n"
    "      --policy P      window (default), vdnn, lms or none\n"
    "      --packer NAME   packer for every probe (default: the config's, auto)\n"
    "      --tiling M      FT tiling for every probe: on, off, auto, fastest (as compile's;\n"
    "                      default: the config's, auto)\n"
    "      --arena A       contiguous or paged (as compile's: a paged plan fits when its\n"
    "                      page peak does), --page SIZE its page, --page-map-cost\n"
    "                      TIME the host time a page map costs (device.page_map_cost)\n"
    "      --max N         the largest batch to consider (default 1048576)\n"
    "      --inplace       elementwise ops write a dying input, as 'sfc compile --inplace'\n"
    "      --json          one JSON object on stdout: max_batch, samples_per_s,\n"
    "                      in_core_best_samples_per_s, in_core_best_batch,\n"
    "                      in_core_max_batch, physical_limit_batch,\n"
    "                      physical_limit_capped (the floor still fits at --max),\n"
    "                      ratio_to_in_core_best (batches and rates: null where no\n"
    "                      batch fits), graph, policy, profile, budget_bytes,\n"
    "                      times_from, probes, inplace_ops\n"
    "  -q, --quiet         no progress lines on stderr\n"
    "\n"
    "example:\n"
    "  sfc maxbatch plans/resnet50.json.gz --profile v100-nvlink2 --budget 16GiB\n"
    "\n"
    "exit status: 0 some batch fits; 1 not even batch 1 fits; 2 bad input or usage\n";

typedef struct args {
  const char *graph, *max;
  sfc_cli_config_args_t ca; /* -c, --budget, --profile, --policy, --packer */
  int json, quiet, inplace;
} args_t;

static int parse(int argc, char **argv, args_t *a) {
  for (int i = 1; i < argc; i++) {
    const char *v = NULL, *arg = argv[i];
    const char **slot = NULL;
    if (sfc_cli_is_help(arg))
      return -1;
    if (sfc_cli_config_option(argc, argv, &i, &a->ca, &slot, &v))
      ;
    else if (sfc_cli_option(argc, argv, &i, "--max", NULL, &v))
      slot = &a->max;
    else if (strcmp(arg, "--json") == 0)
      a->json = 1;
    else if (strcmp(arg, "--inplace") == 0)
      a->inplace = 1;
    else if (strcmp(arg, "-q") == 0 || strcmp(arg, "--quiet") == 0)
      a->quiet = 1;
    else if (arg[0] == '-' && arg[1] != '\0')
      return sfc_cli_usage("maxbatch", "unknown option '%s'", arg);
    else if (a->graph)
      return sfc_cli_usage("maxbatch", "more than one graph given ('%s' and '%s')", a->graph, arg);
    else
      a->graph = arg;
    if (slot) {
      if (!v)
        return sfc_cli_usage("maxbatch", "option '%s' needs a value", arg);
      *slot = v;
    }
  }
  if (!a->graph)
    return sfc_cli_usage("maxbatch", "no graph given");
  return 0;
}

typedef struct search {
  sfc_graph_t *g;
  const args_t *a;
  unsigned probes;
  /* the last full probe that fit, and the config it was made with: the max batch is
   * the last batch the search found fitting, so its answer needs no compile again
   * (compiles are deterministic: the packers' time limits are on a work clock) */
  const sfc_config_t *fit_cfg;
  int64_t fit_batch;
  sfc_batch_probe_t fit;
} search_t;

static sfc_status_t probe(search_t *s, const sfc_config_t *cfg, int64_t b, bool full,
                          sfc_batch_probe_t *p, sfc_error_t *err) {
  double t0 = sfc_clock_seconds();
  SFC_TRY(sfc_batch_probe(s->g, cfg, b, full, p, err));
  s->probes++;
  if (full && p->fits) {
    s->fit_cfg = cfg;
    s->fit_batch = b;
    s->fit = *p;
  }
  if (!s->a->quiet && full)
    fprintf(stderr, "maxbatch: %-6s batch %" PRId64 ": %s (arena %.2f GiB, %.1f s)\n",
            sfc_sched_policy_name(cfg->scheduler.policy), b, p->fits ? "fits" : "does not fit",
            (double)p->arena_bytes / (1 << 30), sfc_clock_seconds() - t0);
  return SFC_OK;
}

/* The largest b in [lo, hi) whose full plan fits, given it fits at lo (bisection). */
static sfc_status_t largest_fit(search_t *s, const sfc_config_t *cfg, int64_t lo, int64_t hi,
                                int64_t *out, sfc_error_t *err) {
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    sfc_batch_probe_t p;
    SFC_TRY(probe(s, cfg, mid, true, &p, err));
    if (p.fits)
      lo = mid;
    else
      hi = mid;
  }
  *out = lo;
  return SFC_OK;
}

/* The physical limit: doubling from `from` (whose floor fits) while the floor fits,
 * then bisection. 0 when not even batch 1. */
static sfc_status_t physical_limit(search_t *s, const sfc_config_t *cfg, int64_t max, int64_t *out,
                                   bool *capped, sfc_error_t *err) {
  *capped = false;
  sfc_batch_probe_t p;
  SFC_TRY(sfc_batch_probe(s->g, cfg, 1, false, &p, err));
  s->probes++;
  if (!p.floor_fits) {
    *out = 0;
    return SFC_OK;
  }
  int64_t lo = 1, hi = 2;
  while (hi <= max) {
    SFC_TRY(sfc_batch_probe(s->g, cfg, hi, false, &p, err));
    s->probes++;
    if (!p.floor_fits)
      break;
    lo = hi;
    hi = hi > max / 2 ? max + 1 : hi * 2;
  }
  if (hi > max) { /* the floor still fits at --max: the limit is past it */
    *out = max;
    *capped = true;
    return SFC_OK;
  }
  return sfc_batch_floor_limit(s->g, cfg, lo + 1, hi, out, err);
}

static void add_batch(cJSON *o, const char *key, int64_t b, bool *ok) {
  *ok = *ok && (b > 0 ? cJSON_AddNumberToObject(o, key, (double)b) != NULL
                      : cJSON_AddNullToObject(o, key) != NULL);
}

static void add_rate(cJSON *o, const char *key, double v, bool *ok) {
  *ok = *ok && (v > 0 && v < 1e300 ? cJSON_AddNumberToObject(o, key, v) != NULL
                                   : cJSON_AddNullToObject(o, key) != NULL);
}

static int run(int argc, char **argv) {
  args_t a = {0};
  int rc = parse(argc, argv, &a);
  if (rc)
    return rc < 0 ? sfc_cli_print_help(&sfc_cmd_maxbatch) : rc;
  int64_t max = 1 << 20;
  if (a.max && !sfc_cli_count(a.max, 1, SFC_MAX_BATCH, &max))
    return sfc_cli_usage("maxbatch", "--max: expected an integer from 1 to %" PRId64 ", got '%s'",
                         SFC_MAX_BATCH, a.max);
  sfc_error_t err = {0};
  sfc_config_t cfg;
  if (sfc_cli_load_config(&a.ca, &cfg, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  if (cfg.budget_bytes == 0) {
    sfc_error_set(&err, SFC_ERR_BAD_INPUT, "maxbatch needs a budget (--budget or a profile)");
    return sfc_cli_fail(&err);
  }
  sfc_graph_t *g = NULL;
  if (sfc_graph_load_file(a.graph, &g, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  if (g->batch <= 0) {
    sfc_graph_destroy(g);
    sfc_error_set(&err, SFC_ERR_BAD_INPUT,
                  "%s: the graph records no \"batch\" (sfc-export writes it); maxbatch rescales "
                  "from it",
                  a.graph);
    return sfc_cli_fail(&err);
  }
  /* the rewrite keeps to same-shaped tensors with the same batch axis: it holds at any
   * batch the search rescales to */
  if (a.inplace && sfc_graph_inplace(g, &g->inplace, &err) != SFC_OK) {
    sfc_graph_destroy(g);
    return sfc_cli_fail(&err);
  }
  search_t s = {.g = g, .a = &a};
  sfc_config_t none = cfg;
  none.scheduler.policy = SFC_SCHED_NONE;
  int64_t phys = 0, best = 0, in_core_max = 0, in_core_best = 0;
  bool capped = false; /* the floor still fits at --max */
  double rate = 0, in_core_rate = 0;
  sfc_status_t st = physical_limit(&s, &cfg, max, &phys, &capped, &err);
  const char *phys_note =
      capped ? "(--max: the floor still fits there)" : "(the largest batch whose floor fits)";
  if (st == SFC_OK && !a.quiet)
    fprintf(stderr, "maxbatch: physical limit %" PRId64 " %s\n", phys, phys_note);
  /* the max batch: from the largest power of two that fits, bisection up to phys */
  sfc_batch_probe_t p = {0};
  int64_t lo = 0, hi = phys + 1;
  for (int64_t b = 1; st == SFC_OK && b <= phys; b *= 2) {
    int64_t at = b * 2 > phys ? phys : b;
    st = probe(&s, &cfg, at, true, &p, &err);
    if (st != SFC_OK || !p.fits) {
      hi = at;
      break;
    }
    lo = at;
    if (at == phys)
      break;
  }
  if (st == SFC_OK && lo > 0)
    st = largest_fit(&s, &cfg, lo, hi, &best, &err);
  if (st == SFC_OK && best > 0) {
    if (s.fit_cfg == &cfg && s.fit_batch == best)
      p = s.fit; /* the search's own probe of it (it fit last) */
    else
      st = probe(&s, &cfg, best, true, &p, &err);
  }
  if (st == SFC_OK && best > 0 && p.predicted_s > 0)
    rate = (double)best / p.predicted_s;
  /* in-core: the largest batch whose in-core plan fits, then the best rate below it */
  lo = 0;
  hi = best + 1;
  for (int64_t b = 1; st == SFC_OK && b <= best; b *= 2) {
    st = probe(&s, &none, b, true, &p, &err);
    if (st != SFC_OK || !p.fits) {
      hi = b;
      break;
    }
    lo = b;
  }
  if (st == SFC_OK && lo > 0)
    st = largest_fit(&s, &none, lo, hi, &in_core_max, &err);
  for (int64_t b = 1; st == SFC_OK && in_core_max > 0; b *= 2) {
    int64_t at = b > in_core_max ? in_core_max : b;
    st = sfc_batch_probe(g, &none, at, false, &p, &err); /* the in-core time needs no packing */
    s.probes++;
    if (st == SFC_OK && p.in_core_s > 0 && (double)at / p.in_core_s > in_core_rate) {
      in_core_rate = (double)at / p.in_core_s;
      in_core_best = at;
    }
    if (at == in_core_max)
      break;
  }
  if (st != SFC_OK) {
    sfc_graph_destroy(g);
    return sfc_cli_fail(&err);
  }
  char from[128], size[32];
  sfc_ir_t view; /* where the times come from, as compile says it */
  sfc_ir_init(&view, g, &cfg);
  sfc_times_from(g->device, sfc_graph_measured_ops(g), g->n_ops, sfc_ir_times_modelled_for(&view),
                 from, sizeof from);
  sfc_ir_deinit(&view);
  double ratio = in_core_rate > 0 && rate > 0 ? rate / in_core_rate : 0;
  if (a.json) {
    cJSON *o = cJSON_CreateObject();
    bool ok = o != NULL;
    ok = ok && cJSON_AddStringToObject(o, "graph", g->name);
    ok = ok && cJSON_AddStringToObject(o, "policy", sfc_sched_policy_name(cfg.scheduler.policy));
    ok = ok && cJSON_AddStringToObject(o, "profile", cfg.device.name);
    ok = ok && cJSON_AddNumberToObject(o, "budget_bytes", (double)cfg.budget_bytes);
    ok = ok && cJSON_AddStringToObject(o, "times_from", from);
    add_batch(o, "max_batch", best, &ok);
    add_rate(o, "samples_per_s", rate, &ok);
    add_rate(o, "in_core_best_samples_per_s", in_core_rate, &ok);
    add_batch(o, "in_core_best_batch", in_core_best, &ok);
    add_batch(o, "in_core_max_batch", in_core_max, &ok);
    add_batch(o, "physical_limit_batch", phys, &ok);
    ok = ok && cJSON_AddBoolToObject(o, "physical_limit_capped", capped);
    add_rate(o, "ratio_to_in_core_best", ratio, &ok);
    ok = ok && cJSON_AddNumberToObject(o, "probes", s.probes);
    ok = ok && cJSON_AddNumberToObject(o, "inplace_ops", g->inplace.ops);
    char *text = ok ? cJSON_PrintUnformatted(o) : NULL;
    if (text)
      puts(text);
    else
      fputs("sfc: out of memory printing the result\n", stderr);
    free(text);
    cJSON_Delete(o);
  } else {
    printf("sfc maxbatch: %s for %s, budget %s, policy %s", g->name, cfg.device.name,
           sfc_format_size(cfg.budget_bytes, size, sizeof size),
           sfc_sched_policy_name(cfg.scheduler.policy));
    if (cfg.host.staging_budget_bytes)
      printf(", host.staging_budget %s",
             sfc_format_size(cfg.host.staging_budget_bytes, size, sizeof size));
    printf("\n");
    printf("  %-16s %8" PRId64 "  %s\n", "physical limit", phys, phys_note);
    if (best > 0)
      printf("  %-16s %8" PRId64 "  %.1f samples/s predicted\n", "max batch", best, rate);
    else
      printf("  %-16s %8s  (not even batch 1 fits)\n", "max batch", "-");
    if (in_core_max > 0)
      printf("  %-16s %8" PRId64 "  %.1f samples/s (largest in-core batch %" PRId64
             "); the max batch runs at %.3f of it\n",
             "in-core best", in_core_best, in_core_rate, in_core_max, ratio);
    else
      printf("  %-16s %8s  (no batch fits in-core)\n", "in-core best", "-");
    if (g->inplace.ops)
      printf("  %-16s %8u  ops write a dying input (--inplace)\n", "in place", g->inplace.ops);
    printf("  %-16s %s; %u probe%s\n", "op times", from, s.probes, s.probes == 1 ? "" : "s");
  }
  sfc_graph_destroy(g);
  return best > 0 ? SFC_EXIT_OK : SFC_EXIT_FAIL;
}

const sfc_command_t sfc_cmd_maxbatch = {
    "maxbatch", "maxbatch GRAPH: the largest batch that fits, and how fast", help, run};
