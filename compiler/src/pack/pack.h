/* pack.h — the packer interface shared by every DSA algorithm.
 *
 * The problem (dynamic storage allocation): blocks with a size and a half-open
 * lifetime [start, end); give each an offset so that blocks whose lifetimes
 * intersect never share a byte, minimising the peak max(offset + size). Offsets are
 * multiples of `alignment`. A packer only writes blocks[i].offset and the result.
 *
 * The inputs are three numbers per block, as in TensorFlow Lite Micro's planner
 * (AddBuffer(size, first_used, last_used)); the compiler converts its inclusive step
 * ranges [first, last] into [first, last + 1). The minimalloc CSV format
 * (id,lower,upper,size) maps onto it directly.
 *
 *   sfc_pack_block_t b[3] = {{.size = 100, .start = 0, .end = 2},
 *                            {.size = 80, .start = 1, .end = 3},
 *                            {.size = 60, .start = 2, .end = 4}};
 *   sfc_pack_problem_t p = {.blocks = b, .count = 3, .alignment = 1};
 *   sfc_pack_result_t r;
 *   sfc_pack_run("greedy-size", &p, NULL, &r, &err);   // r.peak == 180
 */
#ifndef SFC_PACK_H
#define SFC_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfc/status.h"

typedef struct sfc_pack_block {
  uint64_t size;   /* bytes, > 0 */
  int64_t start;   /* first time the block is live */
  int64_t end;     /* first time it is free again; end > start */
  uint64_t offset; /* output; an input when fixed */
  bool fixed;      /* pre-placed (TFLite Micro's offline offsets): offset is given and kept */
} sfc_pack_block_t;

typedef struct sfc_pack_problem {
  sfc_pack_block_t *blocks; /* [count] */
  size_t count;
  uint64_t alignment; /* >= 1, power of two */
  uint64_t capacity;  /* the peak a packer should reach (a hint), 0 = none */
} sfc_pack_problem_t;

typedef struct sfc_pack_options {
  double time_limit_s;     /* for exact and anytime packers; <= 0: their default. Measured
                              on the work clock (pack_clock.h: the modelled cost of the work
                              done, so the result depends on the input alone) unless
                              wall_clock is set */
  uint64_t work_limit;     /* "mip"/"search": stop after this many branch-and-bound or search
                              nodes (0: no limit). Unlike the time limit, the result then
                              depends on the input alone: tests use it with a time limit
                              they never reach */
  uint32_t mip_max_blocks; /* "auto" tries the MIP only up to this many blocks */
  int verbose;             /* > 0: progress lines on stderr */
  bool minimize;           /* "mip"/"search": keep lowering the peak below capacity (see below) */
  bool fit_is_enough;      /* "auto": a peak within the capacity is done (a scheduled plan:
                              the schedule aimed at the budget, a lower arena buys nothing) */
  bool wall_clock;         /* measure time_limit_s on the wall clock (benchmarks); the
                              result then depends on the machine's speed and load */
  double backstop_s;       /* on the work clock: the wall-clock backstop, in wall seconds
                              from the start (pack_clock.h); <= 0: SFC_PACK_WALL_FACTOR x
                              time_limit_s + 1 s. A caller that splits its limit among
                              many packings gives each the backstop of the whole */
} sfc_pack_options_t;

typedef struct sfc_pack_result {
  uint64_t peak;         /* max(offset + size), 0 for no blocks */
  uint64_t lower_bound;  /* sfc_pack_lower_bound: max live bytes (aligned) */
  bool optimal;          /* peak proven minimal (peak == lower_bound, or exact solver) */
  uint64_t best_bound;   /* proven: no packing has a smaller peak; >= lower_bound, == peak
                            when optimal; peak - best_bound is the remaining gap */
  double seconds;        /* wall time */
  double work_s;         /* the anytime packers: the work clock's reading at the end
                            (modelled seconds; pack_clock.h), 0 for the others */
  bool wall_stopped;     /* work clock: the wall-clock backstop stopped the packer (its
                            result may depend on this machine's speed and load) */
  const char *algorithm; /* name of the packer that produced the offsets */
} sfc_pack_result_t;

/* A packer: writes every blocks[i].offset and *out (peak, optimal, algorithm). The
 * caller (sfc_pack_run) fills lower_bound and seconds and verifies the result. */
typedef sfc_status_t (*sfc_packer_fn)(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                      sfc_pack_result_t *out, sfc_error_t *err);

typedef struct sfc_packer {
  const char *name;    /* "greedy-size" */
  const char *summary; /* one line for --help */
  sfc_packer_fn fn;
  bool preplaced; /* places blocks around pre-placed ones (the greedy family) */
} sfc_packer_t;

/* The registry of packers, in --help order. */
const sfc_packer_t *sfc_packers(size_t *out_count);
const sfc_packer_t *sfc_packer_find(const char *name); /* NULL when unknown */

/* Validates the problem (sizes > 0, end > start, alignment a power of two, no
 * overflow; pre-placed blocks aligned and not colliding among themselves), runs the
 * named packer, checks the packing with sfc_pack_check, and fills *out. opt may be
 * NULL. With pre-placed blocks a packer that cannot keep them (every one but the
 * greedy family) is replaced by greedy-size, and out->algorithm says so. */
sfc_status_t sfc_pack_run(const char *algorithm, sfc_pack_problem_t *problem,
                          const sfc_pack_options_t *opt, sfc_pack_result_t *out, sfc_error_t *err);

/* Max over time of the sum of live sizes, each rounded up to the alignment, minus
 * the largest rounding of any block (the topmost block needs only its real size):
 * no packing has a smaller peak; with alignment 1 it is max live bytes. Frees sort
 * before allocations at equal times (half-open lifetimes). */
uint64_t sfc_pack_lower_bound(const sfc_pack_problem_t *problem);

/* A lifetime event: a block's start (kind 1, allocation) or end (kind 0, free). */
typedef struct sfc_pack_event {
  int64_t time;
  uint32_t kind;
  uint32_t block;
} sfc_pack_event_t;

/* The 2 * count events of a problem sorted by time, frees before allocations at
 * equal times (half-open lifetimes), then by block: what every sweep over time
 * starts from. malloc'ed (free() it); NULL when out of memory. */
sfc_pack_event_t *sfc_pack_events_sorted(const sfc_pack_problem_t *problem);

/* Time compression: writes the distinct start and end times of the blocks, sorted,
 * to times[0 .. n) (times holds 2 * count) and returns n. sfc_pack_time_rank gives a
 * time's index among them (the first index whose time is >= t). O(n log n). */
size_t sfc_pack_times_distinct(const sfc_pack_problem_t *problem, int64_t *times);
uint32_t sfc_pack_time_rank(const int64_t *times, size_t n, int64_t t);

/* The physical memory a paged arena needs for a packing: the most bytes of whole pages
 * of `page` bytes that blocks live at one time touch (a block touches the pages
 * offset / page .. (offset + size - 1) / page; frees before allocations at equal times).
 * With page 1 it is the most live bytes of an overlap-free packing. SFC_ERR_INVALID_ARGUMENT
 * when page is 0 or a block's offset + size overflows, SFC_ERR_OUT_OF_MEMORY; *out is 0
 * for no blocks. O(n log n): a sweep
 * over time with a segment tree of the pages covered (the union of the live blocks' page
 * ranges, over the ranges' endpoints). */
sfc_status_t sfc_pack_page_peak(const sfc_pack_problem_t *problem, uint64_t page, uint64_t *out,
                                sfc_error_t *err);

/* Independent check of a packing: alignment, no overlap in time and bytes, peak.
 * Returns SFC_ERR_VERIFY naming the two blocks that collide (also stored in
 * out_pair when it is not NULL; UINT32_MAX when the failure is not a pair).
 * O(n log n). */
sfc_status_t sfc_pack_check(const sfc_pack_problem_t *problem, uint64_t *out_peak,
                            uint32_t out_pair[2], sfc_error_t *err);

/* The first packer (TFLite Micro's greedy-by-size): blocks by size descending (ties:
 * earlier start, then index), each at the lowest aligned offset that collides with
 * no time-overlapping block placed before it, gaps below placed blocks included. */
sfc_status_t sfc_pack_greedy_size(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                  sfc_pack_result_t *out, sfc_error_t *err);

/* Which gap a greedy placement takes: the lowest that holds the block (first fit)
 * or the smallest (best fit; ties: the lowest). */
typedef enum sfc_pack_gap { SFC_PACK_GAP_FIRST, SFC_PACK_GAP_BEST } sfc_pack_gap_t;

/* Greedy placement in the given order (order[k] = the k-th block to place, a
 * permutation of 0..count-1; NULL = by size descending as greedy-size). Writes the
 * offsets and out->peak; out->algorithm is left for the caller to name. */
sfc_status_t sfc_pack_greedy_ordered(sfc_pack_problem_t *problem, const uint32_t *order,
                                     sfc_pack_gap_t gap, sfc_pack_result_t *out, sfc_error_t *err);

/* Block orders for the greedy portfolio (pack_order.c). Each fills order[count]
 * with a permutation; ties always end on the block index, so orders are
 * deterministic. */
typedef enum sfc_pack_order {
  SFC_PACK_ORDER_SIZE,     /* size descending, then start */
  SFC_PACK_ORDER_LIFETIME, /* lifetime descending, then size descending */
  SFC_PACK_ORDER_AREA,     /* size x lifetime descending, then size */
  SFC_PACK_ORDER_START,    /* start ascending, then size descending */
  SFC_PACK_ORDER_COUNT
} sfc_pack_order_t;
extern const char *const sfc_pack_order_names[SFC_PACK_ORDER_COUNT];
sfc_status_t sfc_pack_order_make(const sfc_pack_problem_t *problem, sfc_pack_order_t kind,
                                 uint32_t *order, sfc_error_t *err);

/* The greedy portfolio members, registered as greedy-lifetime, greedy-area,
 * greedy-start (first fit) and greedy-*-bestgap (best fit) (pack_order.c). */
sfc_status_t sfc_pack_greedy_lifetime(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                      sfc_pack_result_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_greedy_area(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                  sfc_pack_result_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_greedy_start(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                   sfc_pack_result_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_greedy_size_bestgap(sfc_pack_problem_t *problem,
                                          const sfc_pack_options_t *opt, sfc_pack_result_t *out,
                                          sfc_error_t *err);
sfc_status_t sfc_pack_greedy_lifetime_bestgap(sfc_pack_problem_t *problem,
                                              const sfc_pack_options_t *opt, sfc_pack_result_t *out,
                                              sfc_error_t *err);
sfc_status_t sfc_pack_greedy_area_bestgap(sfc_pack_problem_t *problem,
                                          const sfc_pack_options_t *opt, sfc_pack_result_t *out,
                                          sfc_error_t *err);
sfc_status_t sfc_pack_greedy_start_bestgap(sfc_pack_problem_t *problem,
                                           const sfc_pack_options_t *opt, sfc_pack_result_t *out,
                                           sfc_error_t *err);

/* The seed's best-fit with offset lines (pack_bestfit.c): the lowest line first
 * (leftmost on ties) takes the longest-lived unplaced block that fits inside its
 * time span; when none fits the line is lifted to its lower neighbour and merged.
 * O(n log^2 n). */
sfc_status_t sfc_pack_best_fit(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                               sfc_pack_result_t *out, sfc_error_t *err);

/* The same with another preference among the blocks that fit a line: order[0] is
 * taken first (a permutation; NULL = the seed's longest lifetime, then larger). */
sfc_status_t sfc_pack_best_fit_ordered(sfc_pack_problem_t *problem, const uint32_t *order,
                                       sfc_pack_result_t *out, sfc_error_t *err);

/* Decomposition (pack_split.c): the problem falls apart at every time t that no
 * lifetime crosses (start < t < end); the parts are independent. */
typedef struct sfc_pack_parts {
  uint32_t *blocks; /* [problem count] block indices, part by part, by start within a part */
  size_t *first;    /* [count + 1] part k is blocks[first[k] .. first[k + 1]) */
  size_t count;     /* number of parts (0 for no blocks) */
} sfc_pack_parts_t;
sfc_status_t sfc_pack_split(const sfc_pack_problem_t *problem, sfc_pack_parts_t *out,
                            sfc_error_t *err);
void sfc_pack_parts_free(sfc_pack_parts_t *parts);

/* Packs every part with fn from offset 0 and writes the offsets back: the peak is
 * the largest part's; optimal when a part reaching that peak is proven optimal.
 * out->algorithm is the name fn gave the part with the peak. */
sfc_status_t sfc_pack_run_split(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                                sfc_packer_fn fn, sfc_pack_result_t *out, sfc_error_t *err);

/* The portfolio ("auto", pack_portfolio.c), part by part: best-fit, then greedy
 * under every order x gap rule, stopping as soon as one reaches the part's lower
 * bound; then an iterated re-pack that moves the blocks at the peak to the front;
 * on parts too large for the exact search, mirror-compaction and randomised
 * best-fit restarts (those parts get the whole time limit); then the exact packers "mip" (up to
 * opt->mip_max_blocks blocks) and "search" when they are registered, within opt->time_limit_s.
 * Keeps the smallest peak. */
sfc_status_t sfc_pack_auto(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                           sfc_pack_result_t *out, sfc_error_t *err);

/* The exact packers ("mip": GLPK branch and cut on the seed's MIP, small instances;
 * "search": MiniMalloc-style depth-first search over canonical placements, up to a
 * few hundred blocks). Both are anytime: they return the best packing found when
 * opt->time_limit_s expires (default 10 s), with out->optimal and out->best_bound
 * saying what was proven.
 *
 * Incumbent convention (how "auto" hands them its best heuristic packing): on entry
 * the offsets already in problem->blocks[] are checked with sfc_pack_check; when
 * they form a valid packing they are the incumbent: the packer starts from it, gives
 * it to the solver, and never returns a larger peak. Otherwise (e.g. all offsets 0
 * on a fresh problem) the packer runs greedy-size itself to get one.
 *
 * Goal: with problem->capacity > 0 and !opt->minimize, stop at the first packing
 * whose peak is <= capacity (the incumbent counts: it is returned at once if it
 * fits); with capacity == 0, or opt->minimize, minimise the peak until it is proven
 * optimal or the time runs out (capacity is then only an upper bound). So "auto"
 * passes its best packing in blocks[], and either a capacity to fit (the peak the
 * earlier parts need, or the caller's capacity when it is over it) or capacity 0
 * with minimize = true. */
sfc_status_t sfc_pack_mip(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                          sfc_pack_result_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_search(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                             sfc_pack_result_t *out, sfc_error_t *err);

#endif /* SFC_PACK_H */
