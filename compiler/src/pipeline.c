/* pipeline.c — the whole compiler, one pass per line (QBE's func() is the model).
 *
 *   graph + config ─> steps ─> liveness ─> blocks ─> schedule ─> pack ─> plan ─> verify
 *                                             ^                   │
 *                                             └── fragmentation ──┘   ─> predict ─> (emit)
 *
 * Passes never call each other; each reads and writes documented fields of the IR
 * (ir.h). The one loop: the schedule pass plans live bytes per step, which the packer
 * may not reach (fragmentation); when the packed device arena exceeds the budget, the
 * pipeline schedules again from the blocks pass for the budget minus the excess (see
 * reschedule_budget), at most SCHEDULE_ROUNDS rounds (+1 to return to the best one),
 * each a line with -v, so "fits" always means the packed arena fits. The verifier checks the
 * finished plan view before anything is written, and the runtime validates the file again when it
 * loads it; predict replays the plan on the sim device in memory (evaluate.h) for the predicted
 * iteration time.
 * --dump-after PASS prints the IR after a pass (report.c).
 */
#include "pipeline.h"
#include "units.h"

#include <inttypes.h>
#include <string.h>

#include "evaluate.h"
#include "passes.h"
#include "report.h"

#define SCHEDULE_ROUNDS 8

/* Not a pass of its own file: the plan replayed on the sim device. */
static sfc_status_t predict(sfc_ir_t *ir, sfc_error_t *err) {
  sfc_eval_t e;
  SFC_TRY(sfc_evaluate(ir, NULL, &e, err));
  ir->predicted = true;
  ir->predicted_iteration_s = e.predicted_iteration_s;
  ir->stall_s = e.stall_s;
  return SFC_OK;
}

static const struct {
  const char *name;
  sfc_pass_fn fn;
} passes[] = {
    {"steps", sfc_pass_steps},       /* one step per op */
    {"tile", sfc_pass_tile},         /* FT segments: per-tile steps (tiling.mode on) */
    {"liveness", sfc_pass_liveness}, /* live ranges, in-core peak */
    {"blocks", sfc_pass_blocks},     /* arena residencies, lower bound */
    {"schedule", sfc_pass_schedule}, /* swaps: who leaves the device, when, back when */
    {"pack", sfc_pass_pack},         /* offsets */
    {"plan", sfc_pass_plan},         /* the plan view */
    {"verify", sfc_pass_verify},     /* invariants */
    {"predict", predict},            /* sim replay: predicted iteration time */
};

#define N_PASSES (sizeof passes / sizeof passes[0])

const char *sfc_pass_name(size_t index) {
  return index < N_PASSES ? passes[index].name : NULL;
}

/* The fragmentation rounds: after each pack, while the packed device arena exceeds the
 * budget, schedule again: first for the same target without the swap-ins the schedule
 * pass moved earlier (they fill the budget's room, which packs worse), then for the
 * current target minus the excess (doubled each round), but never below halfway to the
 * schedule's floor (a target near the floor packs worse); at most SCHEDULE_ROUNDS
 * rounds, and when the last round packed worse than an earlier one, one more round for
 * that one's target. */
typedef struct rounds {
  uint64_t best_target, best_arena; /* the round that packed smallest */
  bool final;                       /* the round that redoes the best one */
} rounds_t;

/* After pack: the target of another round, or 0 to go on. */
static uint64_t reschedule_budget(sfc_ir_t *ir, rounds_t *r) {
  const sfc_config_t *cfg = ir->config;
  uint64_t budget = cfg->budget_bytes;
  uint64_t now = ir->schedule_budget ? ir->schedule_budget : budget;
  if ((cfg->scheduler.policy != SFC_SCHED_WINDOW && cfg->scheduler.policy != SFC_SCHED_LMS) ||
      budget == 0 || ir->arena_bytes <= budget || ir->schedule_infeasible || r->final)
    return 0;
  if (ir->schedule_prefetched) { /* first the same target without the early swap-ins */
    ir->schedule_no_prefetch = true;
    r->best_arena = 0;
    return now;
  }
  if (r->best_arena == 0 || ir->arena_bytes < r->best_arena) {
    r->best_arena = ir->arena_bytes;
    r->best_target = now;
  }
  /* the excess, doubled each round: a packer that overshoots by a little every time
   * would otherwise take all the rounds */
  uint64_t excess = (ir->arena_bytes - budget) << (ir->schedule_rounds - 1);
  uint64_t floor = ir->schedule_floor;
  uint64_t next = now > excess ? now - excess : 0, half = floor + (now - floor) / 2;
  if (now <= floor)
    next = floor;
  else if (next < half)
    next = half;
  if (next > 0 && next < now && ir->schedule_rounds < SCHEDULE_ROUNDS)
    return next;
  if (r->best_target == 0)
    return 0;
  if (r->best_target == now) /* this round is the best one: keep it */
    return 0;
  r->final = true;
  return r->best_target;
}

static size_t pass_index(sfc_pass_fn fn) {
  size_t i = 0;
  while (i < N_PASSES && passes[i].fn != fn)
    i++;
  return i;
}

/* window: auto. Runs blocks .. predict for each candidate (eviction priority x early
 * swap-ins or not), packed by best-fit (fast: the sim needs offsets; the final plan uses
 * the configured packer, and its fragmentation rounds) and replayed on sim in memory,
 * and keeps the fastest candidate whose scheduled blocks fit (or, when none does, the
 * smallest). Deterministic: the sim is. Leaves the choice in schedule_priority and
 * schedule_no_prefetch; the caller reruns from blocks. */
static sfc_status_t tune_window(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  size_t from = pass_index(sfc_pass_blocks), to = pass_index(predict);
  uint64_t budget = ir->config->budget_bytes;
  int best = -1;
  double best_time = 0;
  uint64_t best_arena = 0;
  bool best_fits = false;
  ir->pack_fast = true;
  for (int c = 0; c < 2 * SFC_PRIORITY_COUNT; c++) {
    ir->schedule_priority = (uint8_t)(c / 2);
    ir->schedule_no_prefetch = c % 2 == 1;
    for (size_t i = from; i <= to; i++) {
      sfc_status_t st = passes[i].fn(ir, err);
      if (st != SFC_OK) {
        ir->pack_fast = false;
        if (st == SFC_ERR_INTERNAL)
          sfc_error_prefix(err, passes[i].name);
        return st;
      }
    }
    bool fits = ir->lower_bound <= budget; /* packing is the rounds' business */
    double t = ir->predicted_iteration_s;
    if (opt && opt->verbose > 0)
      fprintf(dump, "sfc: window candidate %d (priority %s, %s): arena %" PRIu64 " B%s, %.3f ms\n",
              c, sfc_priority_name(ir->schedule_priority),
              ir->schedule_no_prefetch ? "no early swap-ins" : "early swap-ins", ir->arena_bytes,
              fits ? "" : " (over)", t * 1e3);
    bool better = best < 0 || (fits && !best_fits) ||
                  (fits == best_fits && (fits ? t < best_time : ir->lower_bound < best_arena));
    if (better) {
      best = c;
      best_time = t;
      best_arena = ir->lower_bound;
      best_fits = fits;
    }
    if (ir->schedule_infeasible)
      break; /* below the floor every candidate is scheduled for the floor */
  }
  ir->pack_fast = false;
  ir->schedule_priority = (uint8_t)(best / 2);
  ir->schedule_no_prefetch = best % 2 == 1;
  ir->window_candidates = 2 * SFC_PRIORITY_COUNT;
  ir->predicted = false;
  return SFC_OK;
}

const char *sfc_priority_name(unsigned priority) {
  static const char *const names[] = {"bytes x length", "length", "bytes"};
  return priority < SFC_PRIORITY_COUNT ? names[priority] : "?";
}

sfc_status_t sfc_compile_ir(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  SFC_TRY(sfc_config_check_implemented(ir->config, err));
  ir->schedule_rounds = 1;
  rounds_t rounds = {0};
  for (size_t i = 0; i < N_PASSES; i++) {
    double t0 = sfc_clock_seconds();
    sfc_status_t st = passes[i].fn(ir, err);
    if (st == SFC_ERR_INTERNAL)
      sfc_error_prefix(err, passes[i].name);
    SFC_TRY(st);
    if (opt && opt->verbose > 0)
      fprintf(dump, "sfc: pass %-9s %9.3f ms\n", passes[i].name, (sfc_clock_seconds() - t0) * 1e3);
    if (opt && opt->dump_after &&
        (strcmp(opt->dump_after, "all") == 0 || strcmp(opt->dump_after, passes[i].name) == 0))
      sfc_report_dump_ir(ir, passes[i].name, dump);
    if (opt && opt->stop_after && strcmp(opt->stop_after, passes[i].name) == 0)
      return SFC_OK;
    if (passes[i].fn == sfc_pass_blocks && ir->schedule_rounds == 1 && !ir->window_candidates &&
        !(opt && opt->stop_after) && ir->config->scheduler.policy == SFC_SCHED_WINDOW &&
        ir->config->scheduler.window_auto && ir->config->budget_bytes &&
        ir->lower_bound > ir->config->budget_bytes) {
      SFC_TRY(tune_window(ir, opt, err));
      i = pass_index(sfc_pass_blocks) - 1; /* again, with the choice, and the real packer */
      continue;
    }
    uint64_t now = ir->schedule_budget ? ir->schedule_budget : ir->config->budget_bytes;
    uint64_t again = passes[i].fn == sfc_pass_pack ? reschedule_budget(ir, &rounds) : 0;
    if (again) { /* fragmentation: blocks, schedule and pack once more */
      if (opt && opt->verbose > 0) {
        char a[32], b[32];
        if (again == now)
          fprintf(dump,
                  "sfc: round %u: packed arena %s is %" PRIu64 " B over the budget: scheduling "
                  "again without the early swap-ins\n",
                  ir->schedule_rounds + 1, sfc_format_size(ir->arena_bytes, a, sizeof a),
                  ir->arena_bytes - ir->config->budget_bytes);
        else
          fprintf(dump,
                  "sfc: round %u: packed arena %s is %" PRIu64 " B over the budget: scheduling "
                  "for %s (%" PRIu64 " B)\n",
                  ir->schedule_rounds + 1, sfc_format_size(ir->arena_bytes, a, sizeof a),
                  ir->arena_bytes - ir->config->budget_bytes, sfc_format_size(again, b, sizeof b),
                  again);
      }
      ir->schedule_budget = again;
      ir->schedule_rounds++;
      i = pass_index(sfc_pass_blocks) - 1;
    }
  }
  return SFC_OK;
}
