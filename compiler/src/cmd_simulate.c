/* cmd_simulate.c — `sfc simulate PLAN`: replay a plan on the runtime's `sim` device
 * and print its report (predicted iteration time, compute-only time, stalls and the
 * steps that stall most, copy-engine utilisation).
 *
 * The prediction is the runtime's own sim device (runtime/src/device_sim.c) driven
 * through the public pull loop, so what the compiler predicts and what the runtime
 * replays cannot drift apart. Link parameters come from the plan's META unless a
 * config (-c / --profile) is given; then the config's device overrides them and its
 * peak_flops times ops without a measured time. O(steps + swaps + deps).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cli_config.h"
#include "evaluate.h"
#include "outfile.h"
#include "report.h"
#include "sfc/steps.h"
#include "sfcrt.h"
#include "time_model.h"
#include "units.h"

static const char simulate_help[] =
    "usage: sfc simulate PLAN [-c CONFIG] [--profile NAME] [--top N] [--json]\n"
    "                    [--trace OUT.json] [--paged] [--page-map-us US]\n"
    "\n"
    "Replays one iteration of PLAN on the runtime's sim device: virtual clocks for the\n"
    "compute queue and the two copy engines, advanced by the plan's op times and the\n"
    "link's bandwidths, latency and duplex factor. Prints the predicted iteration time,\n"
    "the compute-only time, the stall time and the N steps that stall most (default 5),\n"
    "and how busy each copy engine is. The link comes from the plan (the profile it was\n"
    "compiled for) unless -c or --profile is given; then that device's link is used and\n"
    "its peak FLOP/s times ops without a measured time (otherwise such ops take 0).\n"
    "'op times' says where the op times come from: measured on the graph's device\n"
    "(e.g. 'a100-pcie4 (measured)'), or modelled for the plan's profile when the graph\n"
    "was recorded elsewhere (e.g. 'v100-nvlink2 (modelled: roofline)').\n"
    "'time bound' is the least iteration time any schedule within the budget can take,\n"
    "proven by sfc compile for the plan's link and recorded in the plan (format 1.4;\n"
    "not shown for older plans), with predicted/bound; with -c or --profile it is\n"
    "shown for the plan's link only, without the ratio.\n"
    "--json prints one object: predicted_iteration_us, compute_us, stall_us, stalls,\n"
    "h2d_busy_us, d2h_busy_us, h2d_utilisation, d2h_utilisation, swaps_in, swaps_out,\n"
    "bytes_swapped_in, bytes_swapped_out, steps, times_from, lower_bound_iteration_us\n"
    "(null when the plan records none or the link is not the plan's), paged,\n"
    "top_stalls [{step, op, name, stall_us}].\n"
    "--trace OUT.json writes the replayed iteration as a Chrome trace (open it in\n"
    "https://ui.perfetto.dev or chrome://tracing): one track per queue (compute with\n"
    "each step and each stall, naming the copy it waited for; the H2D and D2H engines\n"
    "with each copy, named by its tensor), and the device bytes the plan holds at each\n"
    "step as a counter. Times are the sim device's predictions, in microseconds.\n"
    "A paged plan (format 1.7), or any plan with --paged, is replayed as the cuda\n"
    "device's paged mode runs it (docs/runtime.md): pages of the plan's va_chunk_bytes\n"
    "mapped from a pool of its page peak, and when no freed page's last user has\n"
    "finished, the host waits for the oldest before it issues more work. Two\n"
    "iterations run and the second (the steady state: pages stay mapped across\n"
    "iterations) is reported, with a 'pages' line (--json: paged, pages_mapped,\n"
    "pages_unmapped, page_waits, per iteration). --page-map-us charges the host that\n"
    "many microseconds per page mapped (default 0: not yet measured on a GPU;\n"
    "tools/gpu-check prints 'paged cost per chunk mapped').\n"
    "\n"
    "examples:\n"
    "  sfc simulate cnn.plan\n"
    "  sfc simulate cnn.plan --profile a100-pcie4 --top 10\n"
    "  sfc simulate cnn.plan --trace cnn-trace.json\n";

typedef struct sim_report {
  sfcrt_stats_t st;
  uint32_t top[64];     /* step indices, largest stall first */
  double top_stall[64]; /* their stalls, us */
  uint32_t top_count;
  char times_from[128]; /* where the op times come from (report.h) */
  char times_note[128]; /* ", not PROFILE times (...)" or "" */
  bool trace_failed;    /* the error is write_trace's: it names its file itself */
  bool paged;           /* replayed as paged mode: st is the second iteration's */
} sim_report_t;

/* Every time the report prints is a finite number (an extreme op time or link in a
 * hand-made plan could overflow a sum): the caller reports an error instead. */
static bool report_finite(const sim_report_t *r) {
  const sfcrt_stats_t *st = &r->st;
  bool ok = isfinite(st->predicted_iteration_us) && isfinite(st->compute_us) &&
            isfinite(st->stall_us) && isfinite(st->h2d_busy_us) && isfinite(st->d2h_busy_us);
  for (uint32_t i = 0; i < r->top_count; i++)
    ok = ok && isfinite(r->top_stall[i]);
  return ok;
}

/* Where the plan's op times come from: the plan's META times_device, or the device
 * time model of the profile it was compiled for when its step times are modelled
 * (time_model.h), matched against the profile the link comes from. */
static void times_source(const sfc_plan_view_t *v, const char *profile, sim_report_t *r) {
  uint32_t measured = 0;
  for (uint32_t i = 0; i < v->op_count; i++)
    measured += v->ops[i].time_us >= 0 && isfinite(v->ops[i].time_us);
  const char *device = sfc_plan_string(v, v->meta.times_device);
  const char *modelled =
      sfc_plan_times_modelled(v) ? sfc_plan_string(v, v->meta.profile_name) : NULL;
  sfc_times_from(device, measured, v->op_count, modelled, r->times_from, sizeof r->times_from);
  sfc_times_note(device, measured, modelled, profile, r->times_note, sizeof r->times_note);
}

/* s as the body of a JSON string, to f. */
static void fput_json_text(FILE *f, const char *s) {
  for (const char *c = s; *c; c++) {
    if (*c == '"' || *c == '\\')
      fprintf(f, "\\%c", *c);
    else if ((unsigned char)*c < 0x20)
      fprintf(f, "\\u%04x", (unsigned char)*c);
    else
      fputc(*c, f);
  }
}

static void put_json_text(const char *s) {
  fput_json_text(stdout, s);
}

static double ns(double us) {
  return round(us * 1e3);
}

/* The swap among step k's dependencies whose copy ended last (what its stall waited
 * for), or SFC_PLAN_NONE. */
static uint32_t waited_swap(const sfc_plan_view_t *v, const sfcrt_stats_t *st, uint32_t k) {
  uint32_t best = SFC_PLAN_NONE;
  const sfc_plan_step_t *s = &v->steps[k];
  for (uint32_t j = 0; j < s->dep_count; j++) {
    const sfc_plan_dep_t *d = &v->deps[s->dep_begin + j];
    if (d->node_kind == SFC_NODE_SWAP && d->index < st->swap_count &&
        (best == SFC_PLAN_NONE || st->copy_end_us[d->index] > st->copy_end_us[best]))
      best = d->index;
  }
  return best;
}

static const char *swap_dir(const sfc_plan_swap_t *w) {
  return w->direction == SFC_SWAP_IN ? "swap-in" : "swap-out";
}

/* Writes the last iteration of the session as a Chrome trace (JSON object format,
 * "X" complete events, one thread per queue, a "C" counter for device bytes): what
 * `--trace` promises in the help. The stats' timeline must be the sim device's. */
static sfc_status_t write_trace(const char *out, const char *plan_path, const sfc_plan_view_t *v,
                                const sfcrt_stats_t *st, sfc_error_t *err) {
  if (!st->step_start_us || !st->step_us || !st->step_stall_us ||
      (st->swap_count && (!st->copy_start_us || !st->copy_end_us))) {
    sfc_error_set(err, SFC_ERR_INTERNAL, "the sim device reported no timeline");
    sfc_error_prefix(err, plan_path); /* errors below the outfile's name the trace */
    return err->status;
  }
  bool finite = isfinite(st->predicted_iteration_us); /* JSON has no inf or nan */
  for (uint32_t k = 0; k < v->step_count && k < st->step_count; k++)
    finite = finite && isfinite(st->step_start_us[k]) && isfinite(st->step_us[k]) &&
             isfinite(st->step_stall_us[k]);
  for (uint32_t i = 0; i < st->swap_count; i++)
    finite = finite && isfinite(st->copy_start_us[i]) && isfinite(st->copy_end_us[i]);
  if (!finite) {
    sfc_error_set(err, SFC_ERR_BAD_INPUT,
                  "the predicted times overflow (an op time or the link in the plan is "
                  "out of range); no trace written");
    sfc_error_prefix(err, plan_path);
    return err->status;
  }
  int64_t *diff = calloc((size_t)v->step_count + 1, sizeof *diff);
  if (!diff)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory writing the trace");
  for (uint32_t b = 0; b < v->block_count; b++) /* device bytes the plan holds per step */
    if (v->blocks[b].first_step <= v->blocks[b].last_step && v->blocks[b].last_step < v->step_count)
      sfc_sweep_add(diff, v->blocks[b].first_step, v->blocks[b].last_step, v->blocks[b].bytes);
  sfc_outfile_t o;
  sfc_status_t rc = sfc_outfile_begin(&o, out, err);
  if (rc != SFC_OK) {
    free(diff);
    return rc;
  }
  FILE *f = o.f;
  fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"plan\":\"");
  fput_json_text(f, plan_path);
  fprintf(f, "\",\"graph\":\"");
  fput_json_text(f, sfc_plan_string(v, v->meta.graph_name));
  fprintf(f, "\",\"profile\":\"");
  fput_json_text(f, sfc_plan_string(v, v->meta.profile_name));
  fprintf(f,
          "\",\"times\":\"predicted by the sfc sim device, not measured\","
          "\"predicted_iteration_us\":%.6f},\n\"traceEvents\":[\n",
          st->predicted_iteration_us);
  fprintf(f, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{\"name\":\"sfc sim: ");
  fput_json_text(f, sfc_plan_string(v, v->meta.graph_name));
  fprintf(f, "\"}}");
  static const char *const tracks[] = {"compute", "H2D engine", "D2H engine"};
  for (int t = 0; t < 3; t++)
    fprintf(f,
            ",\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":"
            "{\"name\":\"%s\"}},\n{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,"
            "\"tid\":%d,\"args\":{\"sort_index\":%d}}",
            t + 1, tracks[t], t + 1, t + 1);
  int64_t live = 0;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_op_t *op = &v->ops[v->steps[k].op];
    double start = st->step_start_us[k], stall = st->step_stall_us[k];
    live += diff[k];
    fprintf(f,
            ",\n{\"name\":\"device memory\",\"ph\":\"C\",\"pid\":1,\"ts\":%.6f,"
            "\"args\":{\"bytes\":%" PRId64 "}}",
            start - stall, live);
    if (stall > 0) {
      uint32_t w = waited_swap(v, st, k);
      fprintf(f,
              ",\n{\"name\":\"stall\",\"cat\":\"stall\",\"ph\":\"X\",\"pid\":1,\"tid\":1,"
              "\"ts\":%.6f,\"dur\":%.6f,\"args\":{\"step\":%u",
              start - stall, stall, k);
      if (w != SFC_PLAN_NONE) {
        fprintf(f, ",\"waits_for\":\"%s of ", swap_dir(&v->swaps[w]));
        fput_json_text(f, sfc_plan_string(v, v->tensors[v->swaps[w].tensor].name));
        fprintf(f, "\",\"swap\":%u", w);
      }
      fprintf(f, "}}");
    }
    fprintf(f, ",\n{\"name\":\"");
    fput_json_text(f, sfc_plan_string(v, op->name));
    const char *phase = sfc_phase_name(op->phase);
    fprintf(f,
            "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":%.6f,\"dur\":%.6f,"
            "\"args\":{\"step\":%u,\"op\":%" PRId64 "}}",
            phase ? phase : "step", start, st->step_us[k], k, op->graph_id);
  }
  for (uint32_t i = 0; i < st->swap_count && i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    double a = st->copy_start_us[i], b = st->copy_end_us[i];
    if (a < 0 || b < a)
      continue; /* not issued */
    fprintf(f, ",\n{\"name\":\"");
    fput_json_text(f, sfc_plan_string(v, v->tensors[w->tensor].name));
    fprintf(f,
            "\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.6f,\"dur\":%.6f,"
            "\"args\":{\"swap\":%u,\"bytes\":%" PRIu64 ",\"issue_step\":%u}}",
            swap_dir(w), w->direction == SFC_SWAP_IN ? 2 : 3, a, b - a, i, w->bytes, w->issue_step);
  }
  fprintf(f, "\n]}\n");
  free(diff);
  return sfc_outfile_commit(&o, err);
}

static sfc_status_t simulate(const sfcrt_plan_t *plan, const sfcrt_options_t *opt, sim_report_t *r,
                             uint32_t top_n, const char *trace, const char *plan_path,
                             sfc_error_t *err) {
  sfcrt_session_t *s = NULL;
  SFC_TRY(sfcrt_session_create(plan, opt, &s, err));
  /* paged mode: the second iteration, pages left mapped by the first (the steady state) */
  r->paged = opt->sim.paged || sfc_plan_paged(sfcrt_plan_view(plan));
  sfc_status_t st = sfc_sim_steady(s, r->paged, &r->st, err);
  if (st == SFC_OK) {
    const double *stall = r->st.step_stall_us;
    /* Top N by stall rounded to the nanosecond (so floating-point noise cannot reorder
     * equal stalls; ties: earlier step first): insertion into a short sorted list. */
    r->top_count = 0;
    for (uint32_t k = 0; k < r->st.step_count && stall; k++) {
      double v = ns(stall[k]);
      if (v <= 0 || (r->top_count == top_n && (top_n == 0 || ns(stall[r->top[top_n - 1]]) >= v)))
        continue;
      uint32_t i = r->top_count < top_n ? r->top_count++ : top_n - 1;
      while (i > 0 && ns(stall[r->top[i - 1]]) < v) {
        r->top[i] = r->top[i - 1];
        i--;
      }
      r->top[i] = k;
    }
    for (uint32_t i = 0; i < r->top_count; i++)
      r->top_stall[i] = stall[r->top[i]];
    if (trace) {
      st = write_trace(trace, plan_path, sfcrt_plan_view(plan), &r->st, err);
      r->trace_failed = st != SFC_OK;
    }
    r->st.step_stall_us = r->st.step_start_us = r->st.step_us = NULL; /* they die with */
    r->st.copy_start_us = r->st.copy_end_us = NULL;                   /* the session */
  }
  sfcrt_session_destroy(s);
  return st;
}

/* The bound recorded in the plan (us), or -1: none (a plan before 1.4, or garbage), or
 * not for this link (-c / --profile replaced the plan's). */
static double recorded_bound_us(const sfc_plan_view_t *v, bool own_link) {
  double b = v->meta.time_bound_s;
  return own_link && isfinite(b) && b > 0 && b < 1e9 ? b * 1e6 : -1;
}

static double pct(double part, double whole) {
  return whole > 0 ? 100.0 * part / whole : 0.0;
}

static void print_text(const char *path, const sfc_plan_view_t *v, const sim_report_t *r,
                       const sfcrt_options_t *opt, const char *link_source, bool own_link) {
  const sfcrt_stats_t *st = &r->st;
  char a[32], b[32];
  double h2d = opt->sim.h2d_bytes_per_s > 0 ? opt->sim.h2d_bytes_per_s : v->meta.h2d_bytes_per_s;
  double d2h = opt->sim.d2h_bytes_per_s > 0 ? opt->sim.d2h_bytes_per_s : v->meta.d2h_bytes_per_s;
  double duplex = opt->sim.duplex_factor > 0 ? opt->sim.duplex_factor : v->meta.duplex_factor;
  double lat = opt->sim.copy_latency_s >= 0 ? opt->sim.copy_latency_s : v->meta.copy_latency_s;
  char n1[SFC_NAME_SHOWN_BYTES], n2[SFC_NAME_SHOWN_BYTES], shown[SFC_PATH_SHOWN_BYTES];
  printf("sfc simulate: %s (graph %s, profile %s)\n", sfc_cli_path_shown(path, shown),
         sfc_name_shown(sfc_plan_string(v, v->meta.graph_name), n1),
         sfc_name_shown(sfc_plan_string(v, v->meta.profile_name), n2));
  printf("  link                  h2d %s, d2h %s, duplex %.2f, latency %.3f us (%s)\n",
         sfc_format_rate(h2d, a, sizeof a), sfc_format_rate(d2h, b, sizeof b), duplex, lat * 1e6,
         link_source);
  printf("  op times              %s%s\n", r->times_from, r->times_note);
  printf("  steps                 %u\n", v->step_count);
  printf("  predicted iteration   %.3f us\n", st->predicted_iteration_us);
  printf("  compute only          %.3f us\n", st->compute_us);
  double bound = recorded_bound_us(v, own_link), theirs = recorded_bound_us(v, true);
  if (bound > 0)
    printf("  time bound            %.3f us (recorded by sfc compile); predicted/bound %.4f\n",
           bound, st->predicted_iteration_us / bound);
  else if (theirs > 0)
    printf("  time bound            %.3f us for the plan's link, not this one\n", theirs);
  printf("  stall                 %.3f us (%.1f %% of the iteration, %" PRIu64 " waits)\n",
         st->stall_us, pct(st->stall_us, st->predicted_iteration_us), st->stalls);
  printf("  H2D engine            busy %.3f us (%.1f %%), swap-ins %" PRIu64 ", %s\n",
         st->h2d_busy_us, pct(st->h2d_busy_us, st->predicted_iteration_us), st->swaps_in,
         sfc_format_size(st->bytes_swapped_in, a, sizeof a));
  printf("  D2H engine            busy %.3f us (%.1f %%), swap-outs %" PRIu64 ", %s\n",
         st->d2h_busy_us, pct(st->d2h_busy_us, st->predicted_iteration_us), st->swaps_out,
         sfc_format_size(st->bytes_swapped_out, a, sizeof a));
  if (r->paged)
    printf("  pages                 %s, pages of %s; the second iteration %" PRIu64
           " mapped, %" PRIu64 " unmapped, %" PRIu64
           " waited for their last users; %.3f us per map (%s)\n",
           sfc_plan_paged(v) ? "a paged plan" : "paged mode (--paged)",
           sfc_format_size(v->meta.va_chunk_bytes, a, sizeof a), st->chunks_mapped,
           st->chunks_unmapped, st->unmap_waits, opt->sim.page_map_s * 1e6,
           opt->sim.page_map_s > 0 ? "--page-map-us" : "not measured: 0");
  if (r->top_count) {
    printf("  top stalls            %8s %8s  %-28s %12s\n", "step", "op", "name", "stall us");
    for (uint32_t i = 0; i < r->top_count; i++) {
      const sfc_plan_op_t *op = &v->ops[v->steps[r->top[i]].op];
      printf("                        %8u %8" PRId64 "  %-28.28s %12.3f\n", r->top[i], op->graph_id,
             sfc_name_shown(sfc_plan_string(v, op->name), n1), r->top_stall[i]);
    }
  }
}

static void print_json(const sfc_plan_view_t *v, const sim_report_t *r, bool own_link) {
  const sfcrt_stats_t *st = &r->st;
  printf("{\"predicted_iteration_us\":%.6f,\"compute_us\":%.6f,\"stall_us\":%.6f,"
         "\"stalls\":%" PRIu64 ",\"h2d_busy_us\":%.6f,\"d2h_busy_us\":%.6f,"
         "\"h2d_utilisation\":%.6f,\"d2h_utilisation\":%.6f,\"swaps_in\":%" PRIu64
         ",\"swaps_out\":%" PRIu64 ",\"bytes_swapped_in\":%" PRIu64
         ",\"bytes_swapped_out\":%" PRIu64 ",\"steps\":%u,\"times_from\":\"",
         st->predicted_iteration_us, st->compute_us, st->stall_us, st->stalls, st->h2d_busy_us,
         st->d2h_busy_us, pct(st->h2d_busy_us, st->predicted_iteration_us) / 100,
         pct(st->d2h_busy_us, st->predicted_iteration_us) / 100, st->swaps_in, st->swaps_out,
         st->bytes_swapped_in, st->bytes_swapped_out, v->step_count);
  put_json_text(r->times_from);
  double bound = recorded_bound_us(v, own_link);
  if (bound > 0)
    printf("\",\"lower_bound_iteration_us\":%.6f", bound);
  else
    printf("\",\"lower_bound_iteration_us\":null");
  printf(",\"paged\":%s", r->paged ? "true" : "false");
  if (r->paged)
    printf(",\"pages_mapped\":%" PRIu64 ",\"pages_unmapped\":%" PRIu64 ",\"page_waits\":%" PRIu64,
           st->chunks_mapped, st->chunks_unmapped, st->unmap_waits);
  printf(",\"top_stalls\":[");
  for (uint32_t i = 0; i < r->top_count; i++) {
    const sfc_plan_op_t *op = &v->ops[v->steps[r->top[i]].op];
    printf("%s{\"step\":%u,\"op\":%" PRId64 ",\"name\":\"", i ? "," : "", r->top[i], op->graph_id);
    put_json_text(sfc_plan_string(v, op->name));
    printf("\",\"stall_us\":%.6f}", r->top_stall[i]);
  }
  printf("]}\n");
}

static int run_simulate(int argc, char **argv) {
  const char *path = NULL, *value = NULL, *trace = NULL;
  sfc_cli_config_args_t ca = {0};
  bool json = false, have_cfg = false, paged = false;
  double map_us = 0;
  uint32_t top_n = 5;
  for (int i = 1; i < argc; i++) {
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_simulate);
    if (sfc_cli_option(argc, argv, &i, "--config", "-c", &value)) {
      if (!value)
        return sfc_cli_usage("simulate", "-c needs a file");
      ca.file = value;
      have_cfg = true;
    } else if (sfc_cli_option(argc, argv, &i, "--profile", NULL, &value)) {
      if (!value)
        return sfc_cli_usage("simulate", "--profile needs a name");
      ca.profile = value;
      have_cfg = true;
    } else if (sfc_cli_option(argc, argv, &i, "--top", NULL, &value)) {
      int64_t n = 0;
      if (!sfc_cli_count(value, 0, 64, &n))
        return sfc_cli_usage("simulate", "--top needs a number from 0 to 64");
      top_n = (uint32_t)n;
    } else if (sfc_cli_option(argc, argv, &i, "--trace", NULL, &value)) {
      if (!value || !*value)
        return sfc_cli_usage("simulate", "--trace needs a file");
      trace = value;
    } else if (strcmp(argv[i], "--json") == 0) {
      json = true;
    } else if (strcmp(argv[i], "--paged") == 0) {
      paged = true;
    } else if (sfc_cli_option(argc, argv, &i, "--page-map-us", NULL, &value)) {
      char *end = NULL;
      map_us = value ? strtod(value, &end) : -1;
      if (!value || !*value || *end || !(map_us >= 0 && map_us <= 1e9))
        return sfc_cli_usage("simulate", "--page-map-us needs microseconds from 0 to 1e9");
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return sfc_cli_usage("simulate", "unknown option '%s'", argv[i]);
    } else if (path) {
      return sfc_cli_usage("simulate", "one plan at a time ('%s' and '%s')", path, argv[i]);
    } else {
      path = argv[i];
    }
  }
  if (!path)
    return sfc_cli_usage("simulate", "missing PLAN");

  sfc_error_t err;
  const char *inputs[] = {path, ca.file};
  if (trace && sfc_outfile_check(trace, inputs, 2, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  opt.sim.paged = paged;
  opt.sim.page_map_s = map_us * 1e-6;
  char link_source[128] = "the plan's", profile[SFC_NAME_BYTES] = "";
  if (have_cfg) {
    sfc_config_t cfg;
    if (sfc_cli_load_config(&ca, &cfg, &err) != SFC_OK)
      return sfc_cli_fail(&err);
    opt.sim.h2d_bytes_per_s = cfg.device.h2d_bytes_per_s;
    opt.sim.d2h_bytes_per_s = cfg.device.d2h_bytes_per_s;
    opt.sim.duplex_factor = cfg.device.duplex_factor;
    opt.sim.copy_latency_s = cfg.device.copy_latency_s;
    opt.sim.flops_per_s = cfg.device.peak_flops;
    snprintf(link_source, sizeof link_source, "device %s", cfg.device.name);
    snprintf(profile, sizeof profile, "%s", cfg.device.name);
  }
  sfcrt_plan_t *plan = NULL;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return sfc_cli_fail(&err); /* the reader's message names the file */
  sim_report_t r;
  memset(&r, 0, sizeof r);
  sfc_status_t st = simulate(plan, &opt, &r, top_n, trace, path, &err);
  if (st == SFC_OK && !report_finite(&r))
    st = sfc_error_set(&err, SFC_ERR_BAD_INPUT,
                       "the predicted times overflow (an op time or the link in the plan is "
                       "out of range)");
  if (st != SFC_OK) {
    if (!r.trace_failed)
      sfc_error_prefix(&err, path);
    sfcrt_plan_destroy(plan);
    return sfc_cli_fail(&err);
  }
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  times_source(v, have_cfg ? profile : sfc_plan_string(v, v->meta.profile_name), &r);
  if (json)
    print_json(sfcrt_plan_view(plan), &r, !have_cfg);
  else
    print_text(path, sfcrt_plan_view(plan), &r, &opt, link_source, !have_cfg);
  sfcrt_plan_destroy(plan);
  return SFC_EXIT_OK;
}

const sfc_command_t sfc_cmd_simulate = {
    "simulate", "simulate PLAN [-c CONFIG]: predicted iteration time, stalls", simulate_help,
    run_simulate};
