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
  uint64_t offset; /* output */
} sfc_pack_block_t;

typedef struct sfc_pack_problem {
  sfc_pack_block_t *blocks; /* [count] */
  size_t count;
  uint64_t alignment; /* >= 1, power of two */
  uint64_t capacity;  /* the peak a packer should reach (a hint), 0 = none */
} sfc_pack_problem_t;

typedef struct sfc_pack_options {
  double time_limit_s;     /* for exact and anytime packers; <= 0: their default */
  uint32_t mip_max_blocks; /* "auto" tries the MIP only up to this many blocks */
  int verbose;             /* > 0: progress lines on stderr */
  bool minimize;           /* "mip"/"search": keep lowering the peak below capacity (see below) */
} sfc_pack_options_t;

typedef struct sfc_pack_result {
  uint64_t peak;         /* max(offset + size), 0 for no blocks */
  uint64_t lower_bound;  /* max over time of live bytes (aligned sizes) */
  bool optimal;          /* peak proven minimal (peak == lower_bound, or exact solver) */
  uint64_t best_bound;   /* proven: no packing has a smaller peak; >= lower_bound, == peak
                            when optimal; peak - best_bound is the remaining gap */
  double seconds;        /* wall time */
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
} sfc_packer_t;

/* The registry of packers, in --help order. */
const sfc_packer_t *sfc_packers(size_t *out_count);
const sfc_packer_t *sfc_packer_find(const char *name); /* NULL when unknown */

/* Validates the problem (sizes > 0, end > start, alignment a power of two, no
 * overflow), runs the named packer, checks the packing with sfc_pack_check, and
 * fills *out. opt may be NULL. */
sfc_status_t sfc_pack_run(const char *algorithm, sfc_pack_problem_t *problem,
                          const sfc_pack_options_t *opt, sfc_pack_result_t *out, sfc_error_t *err);

/* Max over time of the sum of live sizes (each rounded up to the alignment). Frees
 * sort before allocations at equal times (half-open lifetimes). */
uint64_t sfc_pack_lower_bound(const sfc_pack_problem_t *problem);

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
 * passes its best packing in blocks[], capacity = its peak, and minimize = true. */
sfc_status_t sfc_pack_mip(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                          sfc_pack_result_t *out, sfc_error_t *err);
sfc_status_t sfc_pack_search(sfc_pack_problem_t *problem, const sfc_pack_options_t *opt,
                             sfc_pack_result_t *out, sfc_error_t *err);

#endif /* SFC_PACK_H */
