/* pipeline.c — the whole compiler, one pass per line (QBE's func() is the model).
 *
 *   graph + config ─> steps ─> liveness ─> blocks ─> schedule ─> pack ─> plan ─> verify
 *                                             ^                   │
 *                                             └── fragmentation ──┘   ─> predict ─> bound ─> (emit)
 *
 * Passes never call each other; each reads and writes documented fields of the IR
 * (ir.h). The one loop: the schedule pass plans live bytes per step, which the packer
 * may not reach (fragmentation); when the packed device arena exceeds the budget, the
 * pipeline schedules again from the blocks pass for the budget minus the excess (see
 * reschedule_budget), at most SCHEDULE_ROUNDS rounds (+1 to return to the best one),
 * each a line with -v, so "fits" always means the packed arena fits. The verifier checks the
 * finished plan view before anything is written, and the runtime validates the file again when it
 * loads it; predict replays the plan on the sim device in memory (evaluate.h) for the predicted
 * iteration time, and bound proves the least time any plan within the budget can take. With
 * window: auto, the tuner's choice and, when the final rounds undo it, further candidates
 * each run blocks .. bound, and the best stays (end of sfc_compile_ir). Every plan the
 * passes finish has its copy queues reordered where it replays faster (sfc_slack_reorder;
 * the finals are judged after it); the plan kept then has its plan view, check and replay
 * made again.
 * --dump-after PASS prints the IR after a pass (report.c).
 */
#include "pipeline.h"
#include "units.h"

#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "evaluate.h"
#include "passes.h"
#include "report.h"
#include "tiler.h"

#define SCHEDULE_ROUNDS 8
#define MARGIN_ROUNDS   2    /* of them keeping more room free from the early swap-ins */
#define MARGIN_REFINE   6    /* rounds that look for a smaller margin that still fits */
#define HIDDEN_FINALS   2    /* hidden-first finals where a rank-only plan leads */
#define WINDOW_FINALS   4    /* window: auto candidates that may go through the final rounds */
#define LATE_HOMES_MIN  0.01 /* window: auto: tunes late homes from this share of compute */

/* The plan replayed on the sim device, each page a paged plan maps costing the host
 * map_s (evaluate.h: a paged plan's second iteration). */
static sfc_status_t predict_at(sfc_ir_t *ir, double map_s, sfc_error_t *err) {
  sfc_eval_t e;
  sfcrt_options_t o;
  sfcrt_options_init(&o);
  o.sim.page_map_s = map_s;
  ir->step_start_n = 0;
  if (ir->n_steps > 0) {
    double *starts = realloc(ir->step_start_s, (size_t)ir->n_steps * sizeof *starts);
    if (!starts)
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory keeping the step times");
    ir->step_start_s = starts;
  }
  SFC_TRY(sfc_evaluate_timeline(ir, &o, &e, ir->n_steps ? ir->step_start_s : NULL, err));
  ir->step_start_n = ir->n_steps;
  ir->predicted = true;
  ir->predicted_iteration_s = e.predicted_iteration_s;
  ir->stall_s = e.stall_s;
  ir->pages_mapped = e.pages_mapped;
  return SFC_OK;
}

/* Not a pass of its own file: the plan replayed on the sim device, page maps free. The
 * tuners and the rounds choose by it; the plan chosen is predicted again at the end with
 * device.page_map_cost (sfc_compile_ir). Charged here, the tuner's pack_fast times
 * misranked the candidates: ResNet-50 b1440 paged at 10 us a map ended 1.0902 of its
 * time bound, against 1.0601 for the plan chosen with maps free and replayed at 10 us. */
static sfc_status_t predict(sfc_ir_t *ir, sfc_error_t *err) {
  return predict_at(ir, 0, err);
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
    {"slack", sfc_pass_slack},       /* copies into the packed arena's free bytes */
    {"plan", sfc_pass_plan},         /* the plan view */
    {"verify", sfc_pass_verify},     /* invariants */
    {"predict", predict},            /* sim replay: predicted iteration time */
    {"bound", sfc_pass_bound},       /* the chain bound on the iteration time */
};

#define N_PASSES (sizeof passes / sizeof passes[0])

const char *sfc_pass_name(size_t index) {
  return index < N_PASSES ? passes[index].name : NULL;
}

/* The fragmentation rounds: after each pack, while the packed device arena exceeds the
 * budget, schedule again: first for the same target with the swap-ins the schedule pass
 * moved earlier (and the swap-out waits it moved later) keeping twice the excess more of
 * it free, up to MARGIN_ROUNDS times, then without them (they fill the budget's room,
 * which packs worse), then for the
 * current target minus the excess (doubled each round), but never below halfway to the
 * schedule's floor (a target near the floor packs worse); at most SCHEDULE_ROUNDS
 * rounds, and when the last round packed worse than an earlier one, one more round for
 * that one's target. Once a margin round fits, up to MARGIN_REFINE more bisect between
 * that margin and the largest that did not fit, and the margin whose plan replays fastest
 * on sim stays.
 * With a host.staging_budget, a lower target sends more to pinned memory: the device
 * holds at most x bytes more at any step for a target x bytes higher, so a round whose
 * host staging arena is e bytes over that budget needs a target at least e higher. That
 * bounds the targets from below: a round over the staging budget alone schedules again
 * for its target plus its excess (never above the budget), and the rounds that lower the
 * target for the device stop at that least target; the best round is the smallest
 * device arena among those within the staging budget, when any is. */
typedef struct rounds {
  uint64_t best_target, best_arena; /* the round that packed smallest */
  bool in_margin;                   /* margin rounds (same target, early swap-ins kept) */
  uint64_t margin_over, margin_fit; /* the largest margin over, the smallest that fits */
  uint8_t refined;                  /* margin rounds that halved the interval between them */
  uint64_t best_margin;             /* the fastest margin that fits, */
  double best_margin_s;             /*   its predicted iteration, */
  bool best_brief;                  /*   and whether its round was packed briefly */
  bool best_staged;                 /* its host staging arena is within host.staging_budget */
  uint64_t host_least;              /* the least target the staging arena may fit at, or 0 */
  bool final;                       /* the round that redoes the best one */
} rounds_t;

/* Within host.staging_budget, or below what any plan stages (the CLI says so; only the
 * device arena is planned for then). */
static bool staging_fits(const sfc_ir_t *ir) {
  uint64_t staging = ir->config->host.staging_budget_bytes;
  return staging == 0 || ir->host_arena_bytes <= staging || staging < ir->staging_least;
}

/* Keeps this round as the best one when it is: within the staging budget before over
 * it, then the device arena fitting before not, then the smaller device arena. */
static void note_round(rounds_t *r, const sfc_ir_t *ir, uint64_t now) {
  bool staged = staging_fits(ir), fits = sfc_ir_device_bytes(ir) <= ir->config->budget_bytes;
  bool best_fits = r->best_arena <= ir->config->budget_bytes;
  if (r->best_arena == 0 || (staged && !r->best_staged) ||
      (staged == r->best_staged &&
       ((fits && !best_fits) || (fits == best_fits && sfc_ir_device_bytes(ir) < r->best_arena)))) {
    r->best_arena = sfc_ir_device_bytes(ir);
    r->best_target = now;
    r->best_staged = staged;
  }
}

/* The last round's (or the best one's) verdict: 0 to go on, or the best round's target
 * once more when the last round was not it. */
static uint64_t rounds_end(rounds_t *r, uint64_t now) {
  if (r->best_target == 0 || r->best_target == now) /* this round is the best one: keep it */
    return 0;
  r->final = true;
  return r->best_target;
}

/* After pack: the target of another round, or 0 to go on. */
static uint64_t reschedule_budget(sfc_ir_t *ir, rounds_t *r) {
  const sfc_config_t *cfg = ir->config;
  uint64_t budget = cfg->budget_bytes;
  uint64_t now = ir->schedule_budget ? ir->schedule_budget : budget;
  bool device_fits = sfc_ir_device_bytes(ir) <= budget, staged = staging_fits(ir);
  if ((cfg->scheduler.policy != SFC_SCHED_WINDOW && cfg->scheduler.policy != SFC_SCHED_LMS) ||
      budget == 0 || ir->schedule_infeasible || r->final)
    return 0;
  if (r->in_margin) {
    /* a margin that fits: the room it keeps free costs the early swap-ins time, so
     * halfway down to the largest margin that did not fit, MARGIN_REFINE times, each
     * packed with half the usual time (a failed search spends all of it); of those that
     * fit, the fastest on the sim device stays (a smaller margin is not always faster:
     * once more, packed as it was, when the last round was not it) */
    uint64_t m = ir->schedule_prefetch_margin, step = budget / 64;
    bool brief = ir->pack_brief, fits = device_fits && staged;
    ir->pack_brief = false;
    if (fits) {
      sfc_eval_t e;
      sfc_error_t ignored = {0};
      double t =
          sfc_evaluate(ir, NULL, &e, &ignored) == SFC_OK ? e.predicted_iteration_s : INFINITY;
      ir->schedule_margins_fit++;
      if (r->margin_fit == 0 || t < r->best_margin_s) {
        r->best_margin = m;
        r->best_margin_s = t;
        r->best_brief = brief;
      }
      r->margin_fit = m;
    } else if (r->margin_fit) {
      r->margin_over = m;
    }
    if (r->margin_fit) {
      if (r->refined < MARGIN_REFINE && r->margin_fit - r->margin_over > step &&
          !ir->schedule_no_refine) {
        ir->schedule_prefetch_margin = r->margin_over + (r->margin_fit - r->margin_over) / 2;
        r->refined++;
        ir->pack_brief = true;
        return now;
      }
      if (fits && r->best_margin == m)
        return 0;
      ir->schedule_prefetch_margin = r->best_margin;
      ir->pack_brief = r->best_brief;
      r->final = true;
      return now;
    }
  }
  if (device_fits && staged)
    return 0;
  if (!staged) {
    uint64_t least = now + (ir->host_arena_bytes - cfg->host.staging_budget_bytes);
    if (least > r->host_least)
      r->host_least = least < budget ? least : budget;
  }
  if (device_fits) {
    /* only the staging arena is over: a higher target stages less. None is left at the
     * budget itself; below it, the least target the staging arena may fit at */
    if (now < budget) /* a round of the lowering phase (same flags as its best one) */
      note_round(r, ir, now);
    if (now < budget && r->host_least > now && ir->schedule_rounds < SCHEDULE_ROUNDS)
      return r->host_least;
    return rounds_end(r, now);
  }
  if (ir->schedule_prefetched && ir->schedule_margin_rounds < MARGIN_ROUNDS) {
    /* the same target, the early swap-ins keeping twice the excess more room free */
    r->in_margin = true;
    r->margin_over = ir->schedule_prefetch_margin;
    ir->schedule_prefetch_margin += 2 * (sfc_ir_device_bytes(ir) - budget);
    ir->schedule_margin_rounds++;
    return now;
  }
  r->in_margin = false;
  if (ir->schedule_prefetched) { /* then the same target without the early swap-ins */
    ir->schedule_no_prefetch = true;
    r->best_arena = 0;
    return now;
  }
  note_round(r, ir, now);
  /* the excess, doubled each round: a packer that overshoots by a little every time
   * would otherwise take all the rounds */
  uint64_t excess = (sfc_ir_device_bytes(ir) - budget) << (ir->schedule_rounds - 1);
  uint64_t floor = ir->schedule_floor;
  uint64_t next = now > excess ? now - excess : 0, half = floor + (now - floor) / 2;
  if (now <= floor)
    next = floor;
  else if (next < half)
    next = half;
  if (next < r->host_least) /* below it the staging arena is over */
    next = r->host_least;
  if (next > 0 && next < now && ir->schedule_rounds < SCHEDULE_ROUNDS)
    return next;
  return rounds_end(r, now);
}

static size_t pass_index(sfc_pass_fn fn) {
  size_t i = 0;
  while (i < N_PASSES && passes[i].fn != fn)
    i++;
  return i;
}

/* Runs pass i (its name prefixes an internal error). */
static sfc_status_t run_pass(sfc_ir_t *ir, size_t i, sfc_error_t *err) {
  sfc_status_t st = passes[i].fn(ir, err);
  if (st == SFC_OK && passes[i].fn == sfc_pass_slack) /* the moves may touch more pages */
    st = sfc_ir_page_peak(ir, err);
  if (st == SFC_ERR_INTERNAL)
    sfc_error_prefix(err, passes[i].name);
  return st;
}

/* window: auto. Runs blocks .. predict for each candidate (eviction priority x early
 * swap-ins with late swap-out waits, early swap-ins only, or neither), packed by best-fit (fast:
 * the sim needs offsets; the final plan uses the configured packer, and its fragmentation rounds)
 * and replayed on sim in memory, and keeps the fastest candidate whose scheduled blocks fit and
 * whose host staging fits host.staging_budget (else the fastest whose blocks fit; or, when none
 * does, the smallest). Deterministic: the sim is. Leaves the choice in schedule_priority
 * and schedule_no_prefetch; the caller reruns from blocks. */
/* Candidate c of window: auto (c < SFC_WINDOW_CANDIDATES): eviction priority
 * c / SFC_WINDOW_MODES and mode c % SFC_WINDOW_MODES — early swap-ins with late swap-out
 * waits, early swap-ins only, neither, early swap-ins with the late waits in queue order
 * — for the first three priorities; then the recent priority with the queue-ordered
 * waits; then (from SFC_WINDOW_HIDDEN_FIRST) schedule_rank_only with bytes x length,
 * length, and the traffic LP's values then bytes x length or bytes x length per copy, each
 * with the late waits and with them in queue order. Candidate
 * SFC_WINDOW_CANDIDATES + c (c < SFC_WINDOW_HIDDEN_FIRST) is candidate c with
 * schedule_late_homes (pass_schedule.c late_homes); the finals try the fastest of those
 * last. */
void sfc_window_candidate(sfc_ir_t *ir, int c) {
  ir->schedule_late_homes = c >= SFC_WINDOW_CANDIDATES;
  c %= SFC_WINDOW_CANDIDATES;
  bool grid = c < SFC_WINDOW_MODES * SFC_PRIORITY_GRID;
  int mode = grid ? c % SFC_WINDOW_MODES : 3;
  ir->schedule_priority = (uint8_t)(grid ? c / SFC_WINDOW_MODES : SFC_PRIORITY_RECENT);
  ir->schedule_rank_only = c >= SFC_WINDOW_HIDDEN_FIRST;
  ir->schedule_traffic_lp = false;
  if (ir->schedule_rank_only) { /* bytes x length, length, the traffic LP's values then
                                   bytes x length, then per copy; late waits, in queue order */
    int r = c - SFC_WINDOW_HIDDEN_FIRST;
    ir->schedule_priority = (uint8_t)(r / 2 == 1   ? SFC_PRIORITY_LENGTH
                                      : r / 2 == 3 ? SFC_PRIORITY_AREA_COPY
                                                   : SFC_PRIORITY_AREA);
    ir->schedule_traffic_lp = r / 2 >= 2;
    mode = r % 2 ? 3 : 0;
  }
  ir->schedule_lazy_waits = mode == 0 || mode == 3;
  ir->schedule_sorted_waits = mode == 3;
  ir->schedule_no_prefetch = mode == 2;
}

void sfc_compile_progress_end(const sfc_compile_options_t *opt) {
  if (opt && opt->progress == SFC_PROGRESS_TTY)
    fputs("\r\033[K", stderr); /* back to the line's start, erase to its end */
}

/* opt->progress: what the long parts of a compile are doing (the tuners' candidates,
 * the fragmentation rounds), on stderr (the caller erases a terminal's line at the end:
 * sfc_compile_progress_end). */
static void progress(const sfc_compile_options_t *opt, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static void progress(const sfc_compile_options_t *opt, const char *fmt, ...) {
  if (!opt || opt->progress == SFC_PROGRESS_OFF)
    return;
  va_list ap;
  va_start(ap, fmt);
  sfc_compile_progress_end(opt); /* a terminal's line is rewritten in place */
  fputs("sfc compile: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (opt->progress == SFC_PROGRESS_LINE)
    fputc('\n', stderr);
  fflush(stderr);
}

/* One candidate of the tuner: blocks .. predict, packed fast (pack_fast), and where its
 * plan stands: *level 2 when its blocks and host staging fit, 1 the blocks only, 0
 * neither; its time on sim. */
static sfc_status_t try_candidate(sfc_ir_t *ir, int c, const sfc_compile_options_t *opt, int *level,
                                  double *t, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  size_t from = pass_index(sfc_pass_blocks), to = pass_index(predict);
  progress(opt, "window: auto: candidate %d (%d of %d)", c, c + 1,
           c < SFC_WINDOW_CANDIDATES ? SFC_WINDOW_CANDIDATES
                                     : SFC_WINDOW_CANDIDATES + SFC_WINDOW_HIDDEN_FIRST);
  sfc_window_candidate(ir, c);
  for (size_t i = from; i <= to; i++)
    SFC_TRY(run_pass(ir, i, err));
  /* packing is the rounds' business; the host staging arena is packed (by best-fit)
   * here too, and a candidate within both budgets comes first */
  *level = ir->lower_bound > ir->config->budget_bytes ? 0 : staging_fits(ir) ? 2 : 1;
  *t = ir->predicted_iteration_s;
  if (opt && opt->verbose > 0)
    fprintf(dump,
            "sfc: window candidate %d (priority %s%s%s, %s%s): arena %" PRIu64 " B%s, %.3f ms\n", c,
            ir->schedule_traffic_lp ? "traffic LP, then " : "",
            sfc_priority_name(ir->schedule_priority), ir->schedule_rank_only ? " alone" : "",
            ir->schedule_no_prefetch    ? "no early swap-ins"
            : ir->schedule_sorted_waits ? "early swap-ins, late waits in queue order"
            : ir->schedule_lazy_waits   ? "early swap-ins, late waits"
                                        : "early swap-ins",
            ir->schedule_late_homes ? ", late write-backs avoided" : "", ir->arena_bytes,
            *level == 2 ? ""
            : *level    ? " (host staging over)"
                        : " (over)",
            *t * 1e3);
  return SFC_OK;
}

/* The traffic LP's candidates: the last SFC_WINDOW_LP plain ones (sfc_window_candidate). */
static bool lp_candidate(int c) {
  return c >= SFC_WINDOW_CANDIDATES - SFC_WINDOW_LP && c < SFC_WINDOW_CANDIDATES;
}

static sfc_status_t tune_window(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  int best = -1, late = -1;
  double best_time = 0, late_time = 0;
  uint64_t best_arena = 0;
  int best_level = 0; /* 2: blocks and host staging fit, 1: the blocks only, 0: neither */
  uint64_t rank_arena[sizeof ir->window_rank] = {0}; /* the ranked ones' packed arenas */
  ir->window_ranked = 0;
  ir->pack_fast = true;
  int n = ir->window_hidden_first_only ? SFC_WINDOW_HIDDEN_FIRST : SFC_WINDOW_CANDIDATES;
  for (int c = 0; c < n; c++) {
    int level;
    double t;
    if (lp_candidate(c) && c > SFC_WINDOW_CANDIDATES - SFC_WINDOW_LP && ir->traffic_lp_none)
      continue; /* no LP: the first LP candidate ranks without it, the others are skipped */
    sfc_status_t st = try_candidate(ir, c, opt, &level, &t, err);
    if (st != SFC_OK) {
      ir->pack_fast = false;
      return st;
    }
    /* a candidate another one's plan already is: the same time and packed arena (the
     * LP's two tie-breaks can give the same time, packed apart, final rounds apart) */
    bool seen = false;
    for (uint8_t j = 0; j < ir->window_ranked; j++)
      seen = seen || (ir->window_rank_s[j] == t && rank_arena[j] == ir->arena_bytes);
    if (level == 2 && !seen) { /* ranked by time: insertion, fastest first */
      uint8_t j = ir->window_ranked++;
      for (; j > 0 && ir->window_rank_s[j - 1] > t; j--) {
        ir->window_rank[j] = ir->window_rank[j - 1];
        ir->window_rank_s[j] = ir->window_rank_s[j - 1];
        rank_arena[j] = rank_arena[j - 1];
      }
      ir->window_rank[j] = (uint8_t)c;
      ir->window_rank_s[j] = t;
      rank_arena[j] = ir->arena_bytes;
    }
    /* within both budgets the fastest; the blocks within the device budget only, the
     * least pinned staging; neither, the least device bytes */
    uint64_t over = level == 1 ? ir->host_arena_bytes : ir->lower_bound;
    if (best < 0 || level > best_level ||
        (level == best_level && (level == 2 ? t < best_time : over < best_arena))) {
      best = c;
      best_time = t;
      best_arena = over;
      best_level = level;
    }
    if (ir->schedule_infeasible)
      break; /* below the floor every candidate is scheduled for the floor */
  }
  /* where homing the late-written state would cost the iteration's end 1 % of its
   * compute or more (pass_schedule.c late_homes; the same for every candidate), every
   * candidate again with late homes: the fastest within both budgets goes through the
   * finals last (window_late), after the plain candidates' */
  bool gate = !ir->window_plain_only && !ir->schedule_infeasible &&
              ir->schedule_late_s >= LATE_HOMES_MIN * ir->compute_s;
  for (int c = 0; gate && c < SFC_WINDOW_HIDDEN_FIRST; c++) {
    int level;
    double t;
    sfc_status_t st = try_candidate(ir, SFC_WINDOW_CANDIDATES + c, opt, &level, &t, err);
    if (st != SFC_OK) {
      ir->pack_fast = false;
      return st;
    }
    if (level == 2 && (late < 0 || t < late_time))
      late = SFC_WINDOW_CANDIDATES + c, late_time = t;
  }
  ir->pack_fast = false;
  sfc_window_candidate(ir, best);
  ir->window_candidates = (uint8_t)n;
  ir->window_late = late > 0 ? (uint8_t)late : 0;
  ir->predicted = false;
  return SFC_OK;
}

/* tiling: auto. The candidates: no tiling, then the partitioner's segments for tile
 * budgets of 4x .. 1/64 and checkpoint budgets of 1/4 .. 1/16 of the device budget
 * (tiling: on's fixed pair, 1/16 and 1/8, among them), duplicates dropped. Each runs
 * steps .. schedule on a scratch IR: it is feasible when the scheduled blocks fit the
 * budget, and their pinned staging blocks host.staging_budget (as for window: auto;
 * packing is the rounds' business). When the untiled
 * graph is feasible, nothing is tiled (no recompute). Otherwise the fastest feasible
 * candidate is kept: by its sum of step times (the modelled iteration: exact when the
 * schedule swaps nothing) or, for one that swaps, by its replay on the sim device
 * (evaluate.h, packed by best-fit), tried in order of step-time sum and stopped once
 * that sum reaches the best time found (it bounds any replay from below); ties go to
 * fewer tiles. When no tiled candidate is feasible either, nothing is tiled (the
 * schedule pass then says what does not fit). tiling.grid forces every candidate's grid
 * (they then differ only in where segments end; with tiling.segments longest they are
 * one); tiling.segments longest keeps whole runs (the checkpoint budgets then do not
 * matter). Leaves the choice in tile_given. */
/* Tiling a graph whose untiled schedule fits with swaps must be predicted this much
 * faster (a tiled plan recomputes and has more steps; a tie keeps the simpler plan). */
#define SFC_TILE_OVER_SWAPS_GAIN 0.02

typedef struct tiling_candidate {
  sfc_ft_segment_t *segs;
  uint32_t n, tiles, tile_div, checkpoint_div;
  bool fits, staged, swaps, tried; /* fits: the device budget; staged: host.staging_budget */
  uint64_t lower_bound;
  double compute_s, time_s;
} tiling_candidate_t;

/* Whether the pinned staging blocks' bytes live at any step (the host arena's lower bound,
 * before packing) fit host.staging_budget, when one is set: a tiling whose least staging
 * is over it does not (another tiling's may not be). */
static bool staging_bound_fits(const sfc_ir_t *ir) {
  uint64_t staging = ir->config->host.staging_budget_bytes;
  if (staging == 0)
    return true;
  return staging >= ir->staging_least && ir->host_lower_bound <= staging;
}

static sfc_status_t run_candidate(sfc_ir_t *ir, tiling_candidate_t *c, bool replay,
                                  sfc_error_t *err) {
  sfc_ir_t t;
  sfc_ir_init(&t, ir->graph, ir->config);
  t.tile_given = c->segs;
  t.n_tile_given = c->n;
  t.pack_fast = true;
  sfc_pass_fn run[] = {sfc_pass_steps,    sfc_pass_tile, sfc_pass_liveness, sfc_pass_blocks,
                       sfc_pass_schedule, sfc_pass_pack, sfc_pass_slack};
  size_t n_run = replay ? 7 : 5;
  sfc_status_t st = SFC_OK;
  for (size_t i = 0; i < n_run && st == SFC_OK; i++) {
    st = run[i](&t, err);
    if (st == SFC_ERR_INTERNAL)
      sfc_error_prefix(err, passes[pass_index(run[i])].name);
  }
  if (st == SFC_OK) {
    uint64_t budget = ir->config->budget_bytes;
    c->fits = !t.schedule_infeasible && t.lower_bound <= budget;
    c->staged = staging_bound_fits(&t);
    c->swaps = t.n_swaps > 0;
    c->lower_bound = t.lower_bound;
    c->compute_s = t.compute_s;
    c->time_s = t.compute_s;
    if (replay) {
      sfc_eval_t e;
      st = sfc_evaluate(&t, NULL, &e, err);
      if (st == SFC_OK)
        c->time_s = e.predicted_iteration_s;
    }
  }
  sfc_ir_deinit(&t);
  return st;
}

/* cand[0], the untiled graph, is feasible: in core (nothing to gain) or under auto (tile
 * only what must be) it stays (*done); under fastest, when it swaps, tiling may still be
 * faster (recomputing a tile can cost less than waiting for the link), and its replay is
 * the time to beat (*best = 0). */
static sfc_status_t keep_untiled(sfc_ir_t *ir, tiling_candidate_t *c0, int *best, bool *done,
                                 const sfc_compile_options_t *opt, sfc_error_t *err) {
  if (!c0->swaps || ir->config->tiling.mode != SFC_TILING_FASTEST) {
    *done = true;
    return SFC_OK;
  }
  SFC_TRY(run_candidate(ir, c0, true, err));
  c0->tried = true;
  *best = 0;
  if (opt && opt->verbose > 0)
    fprintf(opt->dump ? opt->dump : stderr, "sfc: tiling candidate 0 replayed on sim: %.3f ms\n",
            c0->time_s * 1e3);
  return SFC_OK;
}

static bool same_segments(const tiling_candidate_t *a, const tiling_candidate_t *b) {
  return a->n == b->n && (a->n == 0 || memcmp(a->segs, b->segs, a->n * sizeof *a->segs) == 0);
}

static sfc_status_t tune_tiling(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  const sfc_config_t *cfg = ir->config;
  uint64_t budget = cfg->budget_bytes;
  /* tile budgets 4x .. 1/64 of the device budget: tile_div 1 .. 256 quarters (the
   * partitioner's estimate, every per-tile tensor of a segment at once, is far above
   * a tile's real peak, so the real one may fit well above the budget) */
  static const uint32_t tile_divs[] = {1, 2, 4, 8, 16, 32, 64, 128, 256},
                        checkpoint_divs[] = {4, 8, 16};
  enum { N_CAND = 1 + 9 * 3 };
  tiling_candidate_t cand[N_CAND];
  uint32_t nc = 0;
  memset(cand, 0, sizeof cand);
  nc = 1; /* cand[0]: untiled, tried first: a graph that fits untiled is not partitioned */
  SFC_TRY(run_candidate(ir, &cand[0], false, err));
  if (opt && opt->verbose > 0)
    fprintf(dump, "sfc: tiling candidate 0 (untiled): lower bound %" PRIu64 " B%s\n",
            cand[0].lower_bound,
            !cand[0].fits    ? " (over)"
            : cand[0].staged ? ""
                             : " (host staging over)");
  int best = -1;
  bool done = false;
  if (cand[0].fits && cand[0].staged) {
    SFC_TRY(keep_untiled(ir, &cand[0], &best, &done, opt, err));
    if (done)
      return SFC_OK;
  }
  for (size_t a = 0; a < sizeof tile_divs / sizeof tile_divs[0]; a++)
    for (size_t b = 0; b < sizeof checkpoint_divs / sizeof checkpoint_divs[0]; b++) {
      tiling_candidate_t *c = &cand[nc];
      *c = (tiling_candidate_t){0};
      c->tile_div = tile_divs[a];
      c->checkpoint_div = checkpoint_divs[b];
      sfc_ft_partition_opts_t o =
          sfc_ft_partition_config(cfg, budget / c->tile_div * 4, budget / c->checkpoint_div);
      sfc_status_t st = sfc_ft_partition_with(ir->graph, &o, &c->segs, &c->n, &ir->pool, err);
      if (st == SFC_ERR_BAD_INPUT)
        sfc_error_prefix(err, cfg->source); /* a tiling.grid the graph cannot take */
      SFC_TRY(st);
      for (uint32_t k = 0; k < c->n; k++)
        c->tiles += sfc_ft_tile_count(&c->segs[k]);
      bool dup = c->n == 0;
      for (uint32_t j = 1; j < nc && !dup; j++)
        dup = same_segments(&cand[j], c);
      if (!dup)
        nc++;
    }
  if (nc == 1)
    return SFC_OK; /* nothing the partitioner would tile */
  for (uint32_t k = 1; k < nc; k++) {
    progress(opt, "tiling: auto: grid %u of %u", k, nc - 1);
    SFC_TRY(run_candidate(ir, &cand[k], false, err));
    if (opt && opt->verbose > 0)
      fprintf(dump,
              "sfc: tiling candidate %u (tile budget %g, checkpoints 1/%u): %u segments, %u "
              "tiles, lower bound %" PRIu64 " B%s, step times %.3f ms%s\n",
              k, 4.0 / cand[k].tile_div, cand[k].checkpoint_div, cand[k].n, cand[k].tiles,
              cand[k].lower_bound,
              !cand[k].fits    ? " (over)"
              : cand[k].staged ? ""
                               : " (host staging over)",
              cand[k].compute_s * 1e3, cand[k].swaps ? ", swaps" : "");
  }
  /* with host.staging_budget: feasible means within both budgets when any candidate is;
   * when none is, the device budget alone decides (the untiled plan first), as without */
  bool any_staged = false;
  for (uint32_t k = 1; k < nc; k++)
    any_staged = any_staged || (cand[k].fits && cand[k].staged);
  if (!any_staged && cand[0].fits && !cand[0].staged) {
    SFC_TRY(keep_untiled(ir, &cand[0], &best, &done, opt, err));
    if (done)
      return SFC_OK;
  }
  for (uint32_t k = 1; k < nc; k++)
    cand[k].fits = cand[k].fits && (cand[k].staged || !any_staged);
  /* the fastest feasible one, by step-time sum first (a lower bound on its replay) */
  for (;;) {
    int next = -1;
    for (uint32_t k = 1; k < nc; k++) {
      const tiling_candidate_t *c = &cand[k];
      if (c->fits && !c->tried &&
          (next < 0 || c->compute_s < cand[next].compute_s ||
           (c->compute_s == cand[next].compute_s && c->tiles < cand[next].tiles)))
        next = (int)k;
    }
    if (next < 0 || (best >= 0 && cand[next].compute_s >= cand[best].time_s))
      break;
    tiling_candidate_t *c = &cand[next];
    c->tried = true;
    if (c->swaps) {
      progress(opt, "tiling: auto: replaying grid %d", next);
      SFC_TRY(run_candidate(ir, c, true, err));
      if (opt && opt->verbose > 0)
        fprintf(dump, "sfc: tiling candidate %d replayed on sim: %.3f ms\n", next, c->time_s * 1e3);
    }
    if (best == 0 ? c->time_s < cand[0].time_s * (1.0 - SFC_TILE_OVER_SWAPS_GAIN)
                  : best < 0 || c->time_s < cand[best].time_s ||
                        (c->time_s == cand[best].time_s && c->tiles < cand[best].tiles))
      best = next;
  }
  if (best <= 0)
    return SFC_OK;
  ir->tile_given = cand[best].segs;
  ir->n_tile_given = cand[best].n;
  ir->tiling_candidates = nc;
  if (opt && opt->verbose > 0)
    fprintf(dump, "sfc: tiling: candidate %d, %u segments, %u tiles\n", best, cand[best].n,
            cand[best].tiles);
  return SFC_OK;
}

/* What a round's schedule and pack read besides the candidate (sfc_window_candidate):
 * the last round of a final made its plan, so these alone make that plan again; and the
 * rounds' counts when the final ended (set after its rounds), which a rerun of its last
 * round alone gives back. */
typedef struct round_params {
  uint64_t budget, margin; /* schedule_budget, schedule_prefetch_margin */
  bool no_prefetch, brief; /* schedule_no_prefetch, pack_brief */
  uint32_t rounds;         /* at the end: schedule_rounds, */
  uint8_t margin_rounds;   /*   schedule_margin_rounds, */
  uint8_t margins_fit;     /*   schedule_margins_fit */
} round_params_t;

static round_params_t round_params(const sfc_ir_t *ir) {
  return (round_params_t){.budget = ir->schedule_budget,
                          .margin = ir->schedule_prefetch_margin,
                          .no_prefetch = ir->schedule_no_prefetch,
                          .brief = ir->pack_brief};
}

const char *sfc_priority_name(unsigned priority) {
  static const char *const names[] = {"bytes x length", "length", "bytes", "recent",
                                      "bytes x length per copy"};
  return priority < SFC_PRIORITY_COUNT ? names[priority] : "?";
}

sfc_status_t sfc_compile_ir(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  SFC_TRY(sfc_config_check_consistent(ir->config, err));
  ir->schedule_rounds = 1;
  rounds_t rounds = {0};
  size_t start = 0;
  int stage = 0, best_stage = -1; /* window: auto finals: the place in window_rank tried */
  int final_runs = 1;             /* and how many went through the rounds (progress) */
  double best_s = 0;
  uint64_t best_over = 0;
  bool best_fits = false, best_dev = false, rerun = false, late_tried = false;
  int hidden_runs = 0;                        /* finals of hidden-first candidates */
  double best_pre = 0;                        /* the best final's time before its reorder */
  double reorder_s = 0;                       /* this machine's time of the last reorder (-v) */
  int lp_runs = 0;                            /* finals of the traffic LP's candidates */
  round_params_t last = {0}, best_last = {0}; /* this final's last round, the best one's */
again:
  for (size_t i = start; i < N_PASSES; i++) {
    double t0 = sfc_clock_seconds();
    if (passes[i].fn == sfc_pass_tile &&
        (ir->config->tiling.mode == SFC_TILING_AUTO ||
         ir->config->tiling.mode == SFC_TILING_FASTEST) &&
        !ir->n_tile_given && ir->config->budget_bytes && ir->schedule_rounds == 1)
      SFC_TRY(tune_tiling(ir, opt, err));
    if (passes[i].fn == sfc_pass_pack && ir->n_swaps > 0 && ir->window_ranked > 0)
      progress(opt, "packing: window candidate %d (final %d), round %u", ir->window_rank[stage],
               final_runs, ir->schedule_rounds);
    else if (passes[i].fn == sfc_pass_pack && ir->n_swaps > 0)
      progress(opt, "packing: round %u", ir->schedule_rounds);
    else if (passes[i].fn == sfc_pass_bound)
      progress(opt, "time bound");
    if (passes[i].fn == sfc_pass_schedule)
      last = round_params(ir);
    SFC_TRY(run_pass(ir, i, err));
    if (opt && opt->verbose > 0)
      fprintf(dump, "sfc: pass %-9s %9.3f ms\n", passes[i].name, (sfc_clock_seconds() - t0) * 1e3);
    if (opt && opt->dump_after &&
        (strcmp(opt->dump_after, "all") == 0 || strcmp(opt->dump_after, passes[i].name) == 0))
      sfc_report_dump_ir(ir, passes[i].name, dump);
    if (opt && opt->stop_after && strcmp(opt->stop_after, passes[i].name) == 0)
      return SFC_OK;
    if (passes[i].fn == sfc_pass_blocks && ir->schedule_rounds == 1 && !ir->window_candidates &&
        !(opt && opt->stop_after) && ir->config->scheduler.policy == SFC_SCHED_WINDOW &&
        ir->config->budget_bytes && ir->lower_bound > ir->config->budget_bytes) {
      SFC_TRY(tune_window(ir, opt, err));
      i = pass_index(sfc_pass_blocks) - 1; /* again, with the choice, and the real packer */
      continue;
    }
    uint64_t now = ir->schedule_budget ? ir->schedule_budget : ir->config->budget_bytes;
    uint64_t again = passes[i].fn == sfc_pass_slack ? reschedule_budget(ir, &rounds) : 0;
    if (passes[i].fn == sfc_pass_slack && !again) { /* the last round: keep its moves? */
      sfc_slack_judge(ir);
      SFC_TRY(sfc_ir_page_peak(ir, err));
    }
    if (again) { /* fragmentation: blocks, schedule and pack once more */
      if (opt && opt->verbose > 0) {
        char a[32], b[32], c[32];
        if (sfc_ir_device_bytes(ir) <= ir->config->budget_bytes && staging_fits(ir))
          fprintf(dump,
                  "sfc: round %u: packed arena %s fits: scheduling again, the early swap-ins "
                  "keeping %s free\n",
                  ir->schedule_rounds + 1, sfc_format_size(sfc_ir_device_bytes(ir), a, sizeof a),
                  sfc_format_size(ir->schedule_prefetch_margin, b, sizeof b));
        else if (sfc_ir_device_bytes(ir) <=
                 ir->config->budget_bytes) /* the staging arena is over */
          fprintf(dump,
                  "sfc: round %u: host staging arena %s is over host.staging_budget %s: "
                  "scheduling for %s (%" PRIu64 " B)\n",
                  ir->schedule_rounds + 1, sfc_format_size(ir->host_arena_bytes, a, sizeof a),
                  sfc_format_size(ir->config->host.staging_budget_bytes, c, sizeof c),
                  sfc_format_size(again, b, sizeof b), again);
        else if (again == now && !ir->schedule_no_prefetch)
          fprintf(dump,
                  "sfc: round %u: packed arena %s is %" PRIu64 " B over the budget: scheduling "
                  "again, the early swap-ins keeping %s free\n",
                  ir->schedule_rounds + 1, sfc_format_size(sfc_ir_device_bytes(ir), a, sizeof a),
                  sfc_ir_device_bytes(ir) - ir->config->budget_bytes,
                  sfc_format_size(ir->schedule_prefetch_margin, b, sizeof b));
        else if (again == now)
          fprintf(dump,
                  "sfc: round %u: packed arena %s is %" PRIu64 " B over the budget: scheduling "
                  "again without the early swap-ins\n",
                  ir->schedule_rounds + 1, sfc_format_size(sfc_ir_device_bytes(ir), a, sizeof a),
                  sfc_ir_device_bytes(ir) - ir->config->budget_bytes);
        else
          fprintf(dump,
                  "sfc: round %u: packed arena %s is %" PRIu64 " B over the budget: scheduling "
                  "for %s (%" PRIu64 " B)\n",
                  ir->schedule_rounds + 1, sfc_format_size(sfc_ir_device_bytes(ir), a, sizeof a),
                  sfc_ir_device_bytes(ir) - ir->config->budget_bytes,
                  sfc_format_size(again, b, sizeof b), again);
      }
      ir->schedule_budget = again;
      ir->schedule_rounds++;
      i = pass_index(sfc_pass_blocks) - 1;
    }
  }
  if (rerun) { /* the best final's last round alone: the counts its rounds left */
    ir->schedule_rounds = best_last.rounds;
    ir->schedule_margin_rounds = best_last.margin_rounds;
    ir->schedule_margins_fit = best_last.margins_fit;
  }
  last.rounds = ir->schedule_rounds;
  last.margin_rounds = ir->schedule_margin_rounds;
  last.margins_fit = ir->schedule_margins_fit;
  /* every plan the passes finish: its copies behind those waited for earlier, where it
   * replays faster. The window finals are judged after it (below), as they would ship;
   * the reorder can turn the order of two close finals around. */
  double pre = ir->predicted_iteration_s; /* before the reorder */
  if (!(opt && opt->stop_after)) {
    double t0 = sfc_clock_seconds();
    if (ir->window_ranked > 1 && !rerun)
      progress(opt, "reordering the copy queues (final %d)", final_runs);
    else
      progress(opt, "reordering the copy queues");
    SFC_TRY(sfc_slack_reorder(ir, err));
    reorder_s = sfc_clock_seconds() - t0;
  }
  /* window: auto. The tuner packs fast; the final packer's fragmentation rounds can
   * leave its choice over the budget or slower than the tuner saw it (more than 2 %):
   * then the next candidates by the tuner's time go through the final rounds too, up to
   * WINDOW_FINALS in all and while one could still be faster than the best so far, and
   * the best of them stays (when it was not the last, its last round runs once more,
   * from that round's round_params: the passes are deterministic). */
  if (ir->window_ranked > 1 && !rerun && !(opt && opt->stop_after)) {
    bool fits = ir->fits_budget;
    /* each final judged after its reorder; the gates on trying more compare the tuner's
     * times, taken before any reorder, with the times before it */
    double t = ir->slack_reorder_s[0] > 0 ? ir->slack_reorder_s[1] : pre;
    /* fitting first, then the faster; of plans that do not fit, one whose device arena
     * fits, then the smaller arena over its budget (the host's when the device fits) */
    bool dev = sfc_ir_device_bytes(ir) <= ir->config->budget_bytes;
    uint64_t over = dev ? ir->host_arena_bytes : sfc_ir_device_bytes(ir);
    if (best_stage < 0 || (fits && !best_fits) || (fits && best_fits && t < best_s) ||
        (!fits && !best_fits && (dev > best_dev || (dev == best_dev && over < best_over)))) {
      best_stage = stage;
      best_s = t;
      best_pre = pre;
      best_fits = fits;
      best_dev = dev;
      best_over = over;
      best_last = last;
    }
    /* the traffic LP's candidates (the tuner's last two plain ones) take no place of
     * WINDOW_FINALS: the finals that ran before them still run; the second runs only
     * where the first one's plan leads (the final rounds mostly turn the two into one
     * plan) */
    lp_runs += lp_candidate(ir->window_rank[stage]);
    int next = stage + 1;
    if (next < ir->window_ranked && lp_candidate(ir->window_rank[next]) && lp_runs > 0 &&
        !lp_candidate(ir->window_rank[best_stage]))
      next++;
    int lp_before = 0; /* LP candidates ranked before next */
    for (int j = 0; j < next && j < ir->window_ranked; j++)
      lp_before += lp_candidate(ir->window_rank[j]);
    bool good = fits && pre <= ir->window_rank_s[stage] * 1.02;
    bool more = !good && next < ir->window_ranked && next - lp_before < WINDOW_FINALS &&
                (!best_fits || ir->window_rank_s[next] < best_pre);
    hidden_runs += ir->window_rank[stage] < SFC_WINDOW_HIDDEN_FIRST;
    /* a rank-only plan best: the next hidden-first candidates by the tuner's time through
     * the finals too, until HIDDEN_FINALS of them have run (the tuner's best-fit packing
     * can rank the rank-only ones first and the final packing undo that) */
    int bc = ir->window_rank[best_stage];
    bool rank_best = bc >= SFC_WINDOW_HIDDEN_FIRST && bc < SFC_WINDOW_CANDIDATES;
    for (int j = stage + 1;
         !more && rank_best && hidden_runs < HIDDEN_FINALS && best_fits && j < ir->window_ranked;
         j++)
      if (ir->window_rank[j] < SFC_WINDOW_HIDDEN_FIRST) {
        more = true;
        next = j;
      }
    /* then the fastest late-homes candidate of the tuner */
    if (!more && ir->window_late && best_fits && !late_tried) {
      late_tried = true;
      next = ir->window_ranked++;
      ir->window_rank[next] = ir->window_late;
      ir->window_rank_s[next] = best_pre;
      more = true;
    }
    if (more || best_stage != stage) {
      int c = ir->window_rank[more ? next : best_stage];
      if (opt && opt->verbose > 0)
        fprintf(dump,
                "sfc: window candidate %d took %.3f ms after the final rounds (%.3f ms after "
                "its reorder)%s: candidate %d through them %s\n",
                ir->window_rank[stage], pre * 1e3, t * 1e3, fits ? "" : " (over)", c,
                more ? "too" : "again (it was better)");
      sfc_window_candidate(ir, c);
      stage = more ? next : best_stage;
      rerun = !more;
      ir->schedule_budget = 0;
      ir->schedule_rounds = 1;
      ir->schedule_prefetch_margin = 0;
      ir->schedule_margin_rounds = 0;
      ir->schedule_margins_fit = 0;
      ir->pack_brief = false;
      ir->predicted = false;
      rounds = (rounds_t){0};
      if (rerun) { /* the best final again: its last round alone (the passes are
                      deterministic), not all its rounds */
        ir->schedule_budget = best_last.budget;
        ir->schedule_prefetch_margin = best_last.margin;
        ir->schedule_no_prefetch = best_last.no_prefetch;
        ir->pack_brief = best_last.brief;
        rounds.final = true;
      }
      start = pass_index(sfc_pass_blocks);
      final_runs++;
      goto again;
    }
  }
  /* the plan chosen, reordered above: its plan view, the check and the replay again (the
   * bound stays: it holds for any plan within the budget, and the reorder keeps every
   * block within it) */
  if (!(opt && opt->stop_after)) {
    SFC_TRY(sfc_ir_page_peak(ir, err));
    if (opt && opt->verbose > 0 && ir->slack_reorder_s[0] > 0)
      fprintf(dump,
              "sfc: reorder: %u swap-ins and %u swap-outs issued behind copies waited for "
              "earlier, %u swap-outs issued earlier, %u swap-ins issued ahead: %.3f ms -> "
              "%.3f ms on sim (%.3f ms)\n",
              ir->slack_delayed_in, ir->slack_delayed_out, ir->slack_advanced_out,
              ir->slack_advanced_in, ir->slack_reorder_s[0] * 1e3, ir->slack_reorder_s[1] * 1e3,
              reorder_s * 1e3);
    if (ir->slack_delayed_in || ir->slack_delayed_out || ir->slack_advanced_out ||
        ir->slack_advanced_in) {
      SFC_TRY(run_pass(ir, pass_index(sfc_pass_plan), err));
      ir->plan.meta.time_bound_s = ir->time_bound_s;
      SFC_TRY(run_pass(ir, pass_index(sfc_pass_verify), err));
      SFC_TRY(run_pass(ir, pass_index(predict), err));
    }
  }
  /* a paged plan's page maps charged (device.page_map_cost): its prediction */
  if (!(opt && opt->stop_after) && ir->predicted && sfc_ir_paged(ir) &&
      ir->config->arena.page_map_s > 0)
    SFC_TRY(predict_at(ir, ir->config->arena.page_map_s, err));
  return SFC_OK;
}
