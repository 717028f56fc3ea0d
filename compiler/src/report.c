/* report.c — the human-readable output of the compiler: the compile summary and
 * the --dump-after IR dump. Machine-readable output is `sfc inspect --json`. */
#include "report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline.h"
#include "time_model.h"
#include "units.h"

static void line_bytes(FILE *out, const char *label, uint64_t bytes) {
  char h[32];
  fprintf(out, "  %-18s %12s  (%" PRIu64 " B)\n", label, sfc_format_size(bytes, h, sizeof h),
          bytes);
}

/* Keeps out[0 .. *k) the longest first (by key; on ties the one put there first stays
 * ahead), at most max of them: where an item of length v goes, after moving the shorter
 * ones one place down (the last falls off when *k is max), *k grown to count it; max when
 * it is not among the longest (nothing moved). */
static uint32_t top_place(void *out, size_t size, uint32_t *k, uint32_t max, double v,
                          double (*key)(const void *)) {
  char *o = out;
  uint32_t at = *k;
  while (at > 0 && key(o + (size_t)(at - 1) * size) < v)
    at--;
  if (at >= max)
    return max;
  uint32_t last = *k < max ? (*k)++ : max - 1; /* the place the last one moves to */
  memmove(o + (size_t)(at + 1) * size, o + (size_t)at * size, (size_t)(last - at) * size);
  return at;
}

static double behind_key(const void *p) {
  return ((const sfc_behind_t *)p)->seconds;
}
static double wait_key(const void *p) {
  return ((const sfc_bound_wait_t *)p)->stall_s;
}

uint32_t sfc_behind_bound(const sfc_ir_t *ir, sfc_behind_t *out, uint32_t max, double *total,
                          uint32_t *early) {
  uint32_t n = ir->n_steps, k = 0;
  *total = 0;
  *early = 0;
  if (!ir->predicted || ir->step_start_n != n || ir->step_bound_n != n + 1 || n == 0 ||
      !(ir->fits_budget || ir->schedule_infeasible)) /* the bound holds for these only */
    return 0;
  double *kept = malloc(((size_t)n + 1) * sizeof *kept);
  if (!kept)
    return 0; /* a report: without memory it names no step */
  kept[n] = *total = ir->predicted_iteration_s - ir->step_bound_s[n];
  for (uint32_t s = n; s-- > 0;) { /* the lag from step s on, at least: kept to the end */
    double lag = ir->step_start_s[s] - ir->step_bound_s[s];
    kept[s] = lag < kept[s + 1] ? lag : kept[s + 1];
    *early += ir->step_start_s[s] < ir->step_bound_s[s] * (1 - 1e-9) - 1e-12;
  }
  for (uint32_t s = 0; s <= n; s++) {
    double grew = kept[s] - (s > 0 ? kept[s - 1] : 0);
    if (!(grew > 1e-9)) /* a nanosecond: the two sums' rounding, not a wait */
      continue;
    uint32_t at = top_place(out, sizeof *out, &k, max, grew, behind_key);
    if (at < max)
      out[at] = (sfc_behind_t){s, grew};
  }
  free(kept);
  return k;
}

uint32_t sfc_bound_waits_top(const sfc_ir_t *ir, sfc_bound_wait_t *out, uint32_t max) {
  uint32_t k = 0;
  for (uint32_t i = 0; ir->bound_waits && i < ir->n_bound_waits; i++) {
    const sfc_bound_wait_t *w = &ir->bound_waits[i]; /* in step order: earlier first on ties */
    uint32_t at = top_place(out, sizeof *out, &k, max, w->stall_s, wait_key);
    if (at < max)
      out[at] = *w;
  }
  return k;
}

static const char *const WAIT_NAMES[SFC_WAIT_COUNT] = {
    "in", "in_forced", "out", "out_forced", "both", "both_forced", "whole_tensor"};

const char *sfc_wait_why_name(uint8_t why) {
  return why < SFC_WAIT_COUNT ? WAIT_NAMES[why] : "unknown";
}

const char *sfc_wait_why_text(const sfc_bound_wait_t *w, char *buf, size_t buf_bytes) {
  static const char *const text[SFC_WAIT_COUNT] = {
      " must come back",
      " must come back (too large to stay beside a step's operands)",
      " must leave",
      " must leave (too large to stay beside a step's operands)",
      " of copies both ways share the links",
      " of forced copies both ways share the links",
      "a whole tensor's copy outlasts the compute before its reader"};
  uint8_t why = w->why < SFC_WAIT_COUNT ? w->why : SFC_WAIT_WHOLE;
  char b[32] = "";
  if (why != SFC_WAIT_WHOLE)
    sfc_format_size(w->bytes > 0 ? (uint64_t)w->bytes : 0, b, sizeof b);
  snprintf(buf, buf_bytes, "%s%s", b, text[why]);
  return buf;
}

#define SHOWN_WAITS        3  /* pieces the summary names where the bound waits */
#define SHOWN_DEVICE_CHARS 60 /* a device name in times_from is cut after this many */
#define SHOWN_BEHIND       3  /* steps the summary names where the replay falls behind */

const char *sfc_times_from(const char *device, uint32_t measured, uint32_t ops,
                           const char *modelled_for, char *buf, size_t buf_bytes) {
  char shown[SFC_NAME_SHOWN_BYTES];
  const char *dev = device && *device ? sfc_name_shown(device, shown) : "unknown device";
  bool on_device = modelled_for && sfc_time_device_matches(device, modelled_for);
  if (modelled_for && (!on_device || measured == 0)) {
    char name[SFC_NAME_SHOWN_BYTES];
    snprintf(buf, buf_bytes, "%.*s (modelled: " SFC_TIME_MODEL_NAME ")", SHOWN_DEVICE_CHARS,
             sfc_name_shown(modelled_for, name));
  } else if (measured == 0) {
    snprintf(buf, buf_bytes, "none");
  } else if (measured < ops) {
    snprintf(buf, buf_bytes, "%.*s (measured, %u of %u ops%s)", SHOWN_DEVICE_CHARS, dev, measured,
             ops, modelled_for ? "; the rest modelled: " SFC_TIME_MODEL_NAME : "");
  } else {
    snprintf(buf, buf_bytes, "%.*s (measured)", SHOWN_DEVICE_CHARS, dev);
  }
  return buf;
}

const char *sfc_times_note(const char *device, uint32_t measured, const char *modelled_for,
                           const char *profile, char *buf, size_t buf_bytes) {
  char shown[SFC_NAME_SHOWN_BYTES];
  buf[0] = '\0';
  if (!profile || !*profile)
    return buf;
  if (modelled_for) {
    if (strcmp(modelled_for, profile) != 0)
      snprintf(buf, buf_bytes, ", not %s times (modelled for %s)", profile,
               sfc_name_shown(modelled_for, shown));
  } else if (measured == 0 || sfc_time_device_matches(device, profile) ||
             (device && strcmp(device, profile) == 0)) {
    /* measured on the profile's device, or nothing measured: nothing to say */
  } else if (!device || !*device) {
    snprintf(buf, buf_bytes, ", maybe not %s times (the graph does not name its device)", profile);
  } else {
    snprintf(buf, buf_bytes, ", not %s times (measured on another device)", profile);
  }
  return buf;
}

const char *sfc_ir_times_modelled_for(const sfc_ir_t *ir) {
  const sfc_profile_t *p = &ir->config->device;
  if (!sfc_time_model_ready(p))
    return NULL;
  if (!sfc_time_device_matches(ir->graph->device, p->name))
    return p->name;
  return sfc_graph_measured_ops(ir->graph) < ir->graph->n_ops ? p->name : NULL;
}

uint32_t sfc_graph_measured_ops(const sfc_graph_t *g) {
  uint32_t n = 0;
  for (uint32_t i = 0; i < g->n_ops; i++)
    n += g->ops[i].time_us >= 0 && isfinite(g->ops[i].time_us);
  return n;
}

void sfc_report_compile(const sfc_ir_t *ir, double seconds, const char *plan_path,
                        uint64_t plan_bytes, FILE *out) {
  const sfc_graph_t *g = ir->graph;
  const sfc_config_t *cfg = ir->config;
  char h[32], from[128], note[128];
  char name[SFC_NAME_SHOWN_BYTES], profile[SFC_NAME_SHOWN_BYTES];
  fprintf(out, "sfc compile: %s (%u ops, %u tensors) for %s\n",
          *g->name ? sfc_name_shown(g->name, name) : "(unnamed)", g->n_ops, g->n_file_tensors,
          sfc_name_shown(cfg->device.name, profile));
  fprintf(out, "  %-18s %12u\n", "steps", ir->n_steps);
  fprintf(out, "  %-18s %12u\n", "device blocks", ir->plan.block_count);
  if (ir->n_segments) {
    uint32_t segs = 0, tiles = 0, recomputed = 0;
    sfc_ir_tiling_counts(ir, &segs, &tiles, &recomputed);
    fprintf(out, "  %-18s %12u  FT segments (%u tiles; %u recomputed steps)\n", "tiled", segs,
            tiles, recomputed);
  }
  if (g->inplace.ops) { /* sfc compile --inplace */
    char ib[32];
    fprintf(out, "  %-18s %12u  ops write a dying input (%s of results not held apart)\n",
            "in place", g->inplace.ops, sfc_format_size(g->inplace.bytes, ib, sizeof ib));
  }
  line_bytes(out, "in-core peak", ir->in_core_peak);
  line_bytes(out, "lower bound", ir->lower_bound);
  line_bytes(out, sfc_ir_paged(ir) ? "virtual arena" : "packed arena", ir->arena_bytes);
  fprintf(out, "  %-18s %12.4f  (%s%s)\n", "arena/lower bound",
          ir->lower_bound ? (double)ir->arena_bytes / (double)ir->lower_bound : 1.0,
          ir->packer_name ? ir->packer_name : "?", ir->packing_optimal ? ", optimal" : "");
  if (ir->pack_wall_stopped)
    fprintf(out,
            "  %-18s the wall clock stopped the packer (4 x packer.time_limit + 1 s):\n"
            "  %-18s this plan may differ on another machine or under another load\n",
            "note", "");
  if (sfc_ir_paged(ir)) {
    char pg[32];
    line_bytes(out, "page peak", ir->page_peak_bytes);
    fprintf(out, "  %-18s %12s  pages; the budget holds the pages live blocks touch at once\n",
            "paged", sfc_format_size(cfg->arena.page_bytes, pg, sizeof pg));
  }
  uint64_t device = sfc_ir_device_bytes(ir);
  if (device <= cfg->budget_bytes) {
    fprintf(out, "  %-18s %12s  fits\n", "budget", sfc_format_size(cfg->budget_bytes, h, sizeof h));
  } else {
    char more[32];
    fprintf(out, "  %-18s %12s  does NOT fit (%s over)\n", "budget",
            sfc_format_size(cfg->budget_bytes, h, sizeof h),
            sfc_format_size(device - cfg->budget_bytes, more, sizeof more));
  }
  uint64_t staging = cfg->host.staging_budget_bytes;
  if (staging && ir->host_arena_bytes > staging) { /* the other half of fits_budget */
    char more[32], need[32];
    fprintf(out, "  %-18s %12s  does NOT fit host.staging_budget %s (%s over)\n", "host staging",
            sfc_format_size(ir->host_arena_bytes, need, sizeof need),
            sfc_format_size(staging, h, sizeof h),
            sfc_format_size(ir->host_arena_bytes - staging, more, sizeof more));
  } else if (staging) {
    char need[32];
    fprintf(out, "  %-18s %12s  fits host.staging_budget %s\n", "host staging",
            sfc_format_size(ir->host_arena_bytes, need, sizeof need),
            sfc_format_size(staging, h, sizeof h));
  }
  if (ir->n_swaps) { /* the schedule pass's swaps: count, tensors, one iteration's traffic */
    char o[32], i[32];
    fprintf(out, "  %-18s %12u  (%u tensors; %s out, %s in; policy %s", "swaps", ir->n_swaps,
            ir->swapped_tensors, sfc_format_size(ir->swap_out_bytes, o, sizeof o),
            sfc_format_size(ir->swap_in_bytes, i, sizeof i),
            sfc_sched_policy_name(cfg->scheduler.policy));
    if (cfg->scheduler.policy == SFC_SCHED_LMS)
      fprintf(out, ", n %u, l %u", ir->lms_threshold, ir->lms_ahead);
    if (ir->window_candidates)
      fprintf(out, ", best of %u: priority %s%s%s%s", ir->window_candidates,
              ir->schedule_traffic_lp ? "traffic LP, then " : "",
              sfc_priority_name(ir->schedule_priority), ir->schedule_rank_only ? " alone" : "",
              ir->schedule_no_prefetch    ? ", no early swap-ins"
              : ir->schedule_sorted_waits ? ", late swap-out waits in queue order"
              : ir->schedule_lazy_waits   ? ", late swap-out waits"
                                          : "");
    if (ir->window_candidates && ir->schedule_late_homes)
      fprintf(out, ", late write-backs avoided");
    if (cfg->scheduler.policy == SFC_SCHED_WINDOW && cfg->scheduler.prefetch_limit)
      fprintf(out, "; swap-ins at most %u steps ahead", cfg->scheduler.prefetch_limit);
    if (cfg->scheduler.policy == SFC_SCHED_WINDOW && !cfg->scheduler.window_auto) {
      char w[32];
      fprintf(out, "; window %s", sfc_format_size(cfg->scheduler.window_bytes, w, sizeof w));
    }
    fprintf(out, ")\n");
  }
  if (ir->predicted) { /* sim replay vs. in-core and the bound on any swap schedule */
    fprintf(out, "  %-18s %12.3f ms  predicted (stall %.3f ms)", "iteration",
            ir->predicted_iteration_s * 1e3, ir->stall_s * 1e3);
    if (sfc_ir_paged(ir) && cfg->arena.page_map_s > 0) {
      char d[32];
      fprintf(out,
              "; the steady state's: the host's waits for pages and its %llu page maps at "
              "%s each charged (device.page_map_cost)",
              (unsigned long long)ir->pages_mapped,
              sfc_format_duration(cfg->arena.page_map_s, d, sizeof d));
    } else if (sfc_ir_paged(ir)) {
      fprintf(out,
              "; the steady state's: the host's waits for pages charged, its %llu page "
              "maps not (device.page_map_cost 0; tools/gpu-check measures one)",
              (unsigned long long)ir->pages_mapped);
    }
    fputc('\n', out);
    fprintf(out, "  %-18s %12.3f ms  in-core %.3f ms; predicted/bound %.4f\n", "time bound",
            ir->time_bound_s * 1e3, ir->compute_s * 1e3,
            ir->time_bound_s > 0 ? ir->predicted_iteration_s / ir->time_bound_s : 1.0);
    sfc_bound_wait_t waits[SHOWN_WAITS];
    uint32_t nw = ir->n_swaps ? sfc_bound_waits_top(ir, waits, SHOWN_WAITS) : 0;
    if (nw)
      fprintf(
          out,
          "  %-18s %12.3f ms  the least any plan waits for copies (bound - in-core); most in:\n",
          "bound waits", (ir->time_bound_s - ir->compute_s) * 1e3);
    for (uint32_t i = 0; i < nw; i++) {
      char why[128], steps[48];
      if (waits[i].to - waits[i].from > 1)
        snprintf(steps, sizeof steps, "steps %u-%u", waits[i].from, waits[i].to - 1);
      else
        snprintf(steps, sizeof steps, "step %u", waits[i].from);
      fprintf(out, "  %-18s %12.3f ms  %s, %s\n", "", waits[i].stall_s * 1e3, steps,
              sfc_wait_why_text(&waits[i], why, sizeof why));
    }
    sfc_behind_t behind[SHOWN_BEHIND];
    double total;
    uint32_t early, nb = sfc_behind_bound(ir, behind, SHOWN_BEHIND, &total, &early);
    if (early) /* the bound's proof says this cannot happen */
      fprintf(out,
              "  %-18s %12u  steps start before the time bound allows: a bug in sfc, "
              "please report it\n",
              "bound check", early);
    if (ir->n_swaps && nb)
      fprintf(out, "  %-18s %12.3f ms  predicted - bound; most lost before:\n", "behind the bound",
              total * 1e3);
    for (uint32_t i = 0; ir->n_swaps && i < nb; i++) {
      char opn[SFC_NAME_SHOWN_BYTES];
      if (behind[i].step < ir->n_steps)
        fprintf(out, "  %-18s %12.3f ms  step %u, %s\n", "", behind[i].seconds * 1e3,
                behind[i].step, sfc_name_shown(g->ops[ir->steps[behind[i].step].op].name, opn));
      else
        fprintf(out, "  %-18s %12.3f ms  the end (copies draining)\n", "", behind[i].seconds * 1e3);
    }
  }
  uint32_t measured = sfc_graph_measured_ops(g);
  const char *modelled_for = sfc_ir_times_modelled_for(ir);
  fprintf(out, "  %-18s %s%s\n", "op times",
          sfc_times_from(g->device, measured, g->n_ops, modelled_for, from, sizeof from),
          sfc_times_note(g->device, measured, modelled_for, cfg->device.name, note, sizeof note));
  fprintf(out, "  %-18s %12.3f ms\n", "compile time", seconds * 1e3);
  if (plan_path)
    fprintf(out, "  %-18s %12s  %s\n", "plan", sfc_format_size(plan_bytes, h, sizeof h), plan_path);
  else
    fprintf(out, "  %-18s %12s\n", "plan", "not written (no -o)");
}

void sfc_report_dump_ir(const sfc_ir_t *ir, const char *after_pass, FILE *out) {
  const sfc_graph_t *g = ir->graph;
  fprintf(out, "## IR after %s\n", after_pass);
  if (ir->steps) {
    fprintf(out, "steps %u\n", ir->n_steps);
    for (uint32_t s = 0; s < ir->n_steps; s++) {
      const sfc_op_t *op = &g->ops[ir->steps[s].op];
      char type[SFC_NAME_SHOWN_BYTES], name[SFC_NAME_SHOWN_BYTES];
      fprintf(out, "  step %u: op %u %s \"%s\" (%s)", s, ir->steps[s].op,
              sfc_name_shown(op->type, type), sfc_name_shown(op->name, name),
              sfc_phase_name(op->phase));
      if (ir->live_bytes)
        fprintf(out, " live %" PRIu64, ir->live_bytes[s]);
      if (ir->steps[s].time_us >= 0)
        fprintf(out, " time %.3f us", ir->steps[s].time_us);
      static const char *access[] = {"?", "R", "W", "RW"};
      fputs(" uses", out);
      for (uint32_t k = 0; k < ir->steps[s].use_count; k++) {
        const sfc_use_t *u = &ir->uses[ir->steps[s].use_begin + k];
        fprintf(out, " %u:%s", u->tensor, access[u->access & 3]);
      }
      fputc('\n', out);
    }
  }
  fprintf(out, "tensors %u\n", g->n_tensors);
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    char name[SFC_NAME_SHOWN_BYTES];
    fprintf(out, "  tensor %u id %" PRId64 " \"%s\" %s %" PRIu64 " B", t, x->id,
            sfc_name_shown(x->name, name), sfc_tensor_kind_name(x->kind), x->bytes);
    if (ir->live && sfc_ir_tensor_unused(ir, t)) {
      fputs(" unused", out);
    } else if (ir->live) {
      const sfc_live_t *l = &ir->live[t];
      fprintf(out, " live [%u, %u] uses", l->first_step, l->last_step);
      for (uint32_t k = 0; k < l->use_count; k++)
        fprintf(out, " %u", ir->use_steps[l->use_begin + k]);
    }
    fputc('\n', out);
  }
  if (ir->blocks) {
    fprintf(out, "blocks %u (lower bound %" PRIu64 ", arena %" PRIu64 ")\n", ir->n_blocks,
            ir->lower_bound, ir->arena_bytes);
    for (uint32_t b = 0; b < ir->n_blocks; b++) {
      const sfc_block_t *x = &ir->blocks[b];
      fprintf(out, "  block %u tensor %u [%u, %u] %" PRIu64 " B at %" PRIu64 " %s%s\n", b,
              x->tensor, x->first_step, x->last_step, x->bytes, x->offset,
              x->arena == SFC_ARENA_HOST ? "host" : "device", x->placed ? " pre-placed" : "");
    }
  }
  if (ir->n_swaps) { /* the schedule pass's copies, in the order it made them */
    fprintf(out, "swaps %u\n", ir->n_swaps);
    for (uint32_t i = 0; i < ir->n_swaps; i++) {
      const sfc_swap_t *w = &ir->swaps[i];
      fprintf(out, "  swap %u %s tensor %u block %u host %u before step %u waits", i,
              w->direction == SFC_SWAP_IN ? "in" : "out", w->tensor, w->device_block, w->host_block,
              w->issue_step);
      for (uint32_t j = 0; j < w->dep_count; j++)
        fprintf(out, " %s%u", ir->deps[w->dep_begin + j].kind == SFC_NODE_STEP ? "step " : "swap ",
                ir->deps[w->dep_begin + j].index);
      fputc('\n', out);
    }
  }
}
