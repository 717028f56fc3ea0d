/* pack.c — the packer registry, problem validation, lower bound and the
 * independent packing checker every packing goes through (see pack.h).
 *
 * Lower bound: sort the 2n lifetime events by time, frees before allocations at
 * equal times (lifetimes are half-open), and keep a running sum of aligned sizes;
 * subtract the largest alignment padding of any block, because the topmost block
 * at the peak needs only its real size (every block below it does occupy its
 * aligned size: the next offset up is aligned). O(n log n).
 *
 * Check: the same sweep, keeping the live blocks in an ordered set by offset. When
 * a block starts, only its two neighbours in offset order can overlap it if the
 * live set was overlap-free so far, so each start costs O(log n). O(n log n).
 */
#include "pack.h"
#include "units.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "oset.h"

static const sfc_packer_t packers[] = {
    {"auto", "the portfolio: every heuristic below, then the exact packers; keeps the best",
     sfc_pack_auto, false},
    {"best-fit", "the seed's best-fit with offset lines (lowest line, longest-lived block)",
     sfc_pack_best_fit, false},
    {"greedy-size", "by size descending, each at the lowest offset free over its lifetime",
     sfc_pack_greedy_size, true},
    {"greedy-lifetime", "greedy by lifetime descending, lowest gap", sfc_pack_greedy_lifetime,
     true},
    {"greedy-area", "greedy by size x lifetime descending, lowest gap", sfc_pack_greedy_area, true},
    {"greedy-start", "greedy by start time, lowest gap", sfc_pack_greedy_start, true},
    {"greedy-size-bestgap", "greedy by size descending, tightest gap", sfc_pack_greedy_size_bestgap,
     true},
    {"greedy-lifetime-bestgap", "greedy by lifetime descending, tightest gap",
     sfc_pack_greedy_lifetime_bestgap, true},
    {"greedy-area-bestgap", "greedy by size x lifetime descending, tightest gap",
     sfc_pack_greedy_area_bestgap, true},
    {"greedy-start-bestgap", "greedy by start time, tightest gap", sfc_pack_greedy_start_bestgap,
     true},
    {"mip", "exact: the seed's MIP solved by GLPK branch and cut (small instances)", sfc_pack_mip,
     false},
    {"search", "exact: depth-first search over canonical placements (MiniMalloc), anytime",
     sfc_pack_search, false},
};

const sfc_packer_t *sfc_packers(size_t *out_count) {
  *out_count = sizeof packers / sizeof packers[0];
  return packers;
}

const sfc_packer_t *sfc_packer_find(const char *name) {
  size_t n;
  const sfc_packer_t *all = sfc_packers(&n);
  for (size_t i = 0; i < n; i++)
    if (strcmp(all[i].name, name) == 0)
      return &all[i];
  return NULL;
}

static int event_cmp(const void *pa, const void *pb) {
  const sfc_pack_event_t *a = pa, *b = pb;
  if (a->time != b->time)
    return a->time < b->time ? -1 : 1;
  if (a->kind != b->kind)
    return a->kind < b->kind ? -1 : 1;
  return a->block < b->block ? -1 : (a->block > b->block);
}

sfc_pack_event_t *sfc_pack_events_sorted(const sfc_pack_problem_t *p) {
  if (p->count > SIZE_MAX / 2 / sizeof(sfc_pack_event_t))
    return NULL;
  sfc_pack_event_t *ev = malloc((p->count ? p->count : 1) * 2 * sizeof *ev);
  if (!ev)
    return NULL;
  for (size_t i = 0; i < p->count; i++) {
    ev[2 * i] = (sfc_pack_event_t){p->blocks[i].start, 1, (uint32_t)i};
    ev[2 * i + 1] = (sfc_pack_event_t){p->blocks[i].end, 0, (uint32_t)i};
  }
  qsort(ev, p->count * 2, sizeof *ev, event_cmp);
  return ev;
}

static int cmp_i64(const void *pa, const void *pb) {
  int64_t a = *(const int64_t *)pa, b = *(const int64_t *)pb;
  return a < b ? -1 : (a > b);
}

size_t sfc_pack_times_distinct(const sfc_pack_problem_t *p, int64_t *times) {
  size_t n = p->count;
  for (size_t i = 0; i < n; i++) {
    times[2 * i] = p->blocks[i].start;
    times[2 * i + 1] = p->blocks[i].end;
  }
  qsort(times, 2 * n, sizeof *times, cmp_i64);
  size_t nt = 0;
  for (size_t i = 0; i < 2 * n; i++)
    if (nt == 0 || times[nt - 1] != times[i])
      times[nt++] = times[i];
  return nt;
}

uint32_t sfc_pack_time_rank(const int64_t *times, size_t n, int64_t t) {
  size_t lo = 0, hi = n;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (times[mid] < t)
      lo = mid + 1;
    else
      hi = mid;
  }
  return (uint32_t)lo;
}

static uint64_t align_up(uint64_t x, uint64_t a) {
  return (x + a - 1) & ~(a - 1);
}

uint64_t sfc_pack_lower_bound(const sfc_pack_problem_t *p) {
  sfc_pack_event_t *ev = sfc_pack_events_sorted(p);
  if (!ev)
    return 0;
  uint64_t a = p->alignment ? p->alignment : 1, live = 0, peak = 0, pad = 0;
  for (size_t i = 0; i < p->count; i++)
    if (align_up(p->blocks[i].size, a) - p->blocks[i].size > pad)
      pad = align_up(p->blocks[i].size, a) - p->blocks[i].size;
  for (size_t i = 0; i < p->count * 2; i++) {
    uint64_t size = align_up(p->blocks[ev[i].block].size, a);
    if (ev[i].kind == 1) {
      live += size;
      if (live > peak)
        peak = live;
    } else {
      live -= size;
    }
  }
  free(ev);
  return peak - pad; /* peak >= the largest aligned size >= pad */
}

static int cmp_u64(const void *pa, const void *pb) {
  uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
  return a < b ? -1 : (a > b);
}

/* The covered length of a segment tree over elementary intervals [x[i], x[i + 1]):
 * node v covers [lo, hi); cover[v] counts the ranges that cover it whole, len[v] is the
 * length of its covered part (the classic union-of-intervals tree). */
typedef struct page_tree {
  const uint64_t *x;
  uint32_t *cover;
  uint64_t *len;
} page_tree_t;

static void page_tree_add(page_tree_t *t, size_t v, size_t lo, size_t hi, size_t a, size_t b,
                          int d) {
  if (b <= lo || hi <= a)
    return;
  if (a <= lo && hi <= b) {
    if (d > 0)
      t->cover[v]++;
    else
      t->cover[v]--; /* a removal follows its own addition */
  } else {
    size_t mid = lo + (hi - lo) / 2;
    page_tree_add(t, 2 * v, lo, mid, a, b, d);
    page_tree_add(t, 2 * v + 1, mid, hi, a, b, d);
  }
  if (t->cover[v])
    t->len[v] = t->x[hi] - t->x[lo];
  else if (hi - lo == 1)
    t->len[v] = 0;
  else
    t->len[v] = t->len[2 * v] + t->len[2 * v + 1];
}

/* The index of value y in the sorted distinct x[0 .. m). */
static size_t page_rank(const uint64_t *x, size_t m, uint64_t y) {
  size_t lo = 0, hi = m;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (x[mid] < y)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

sfc_status_t sfc_pack_page_peak(const sfc_pack_problem_t *p, uint64_t page, uint64_t *out,
                                sfc_error_t *err) {
  *out = 0;
  if (page == 0)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "page size 0");
  if (p->count == 0)
    return SFC_OK;
  if (p->count > SIZE_MAX / 8 / sizeof(uint64_t))
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "too many blocks (%zu)", p->count);
  size_t n = p->count, m = 0;
  uint64_t *x = malloc(2 * n * sizeof *x);
  sfc_pack_event_t *ev = sfc_pack_events_sorted(p);
  page_tree_t t = {x, calloc(8 * n, sizeof *t.cover), calloc(8 * n, sizeof *t.len)};
  if (!x || !ev || !t.cover || !t.len) {
    free(x), free(ev), free(t.cover), free(t.len);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for %zu blocks' pages", n);
  }
  for (size_t i = 0; i < n; i++) { /* page ranges [first, last + 1) */
    const sfc_pack_block_t *b = &p->blocks[i];
    if (b->offset > UINT64_MAX - b->size) {
      free(x), free(ev), free(t.cover), free(t.len);
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "block %zu: offset + size overflows", i);
    }
    x[2 * i] = b->offset / page;
    x[2 * i + 1] = (b->offset + (b->size ? b->size - 1 : 0)) / page + 1;
  }
  qsort(x, 2 * n, sizeof *x, cmp_u64);
  for (size_t i = 0; i < 2 * n; i++)
    if (m == 0 || x[m - 1] != x[i])
      x[m++] = x[i];
  uint64_t most = 0; /* pages */
  for (size_t i = 0; i < 2 * n; i++) {
    const sfc_pack_block_t *b = &p->blocks[ev[i].block];
    if (b->size == 0)
      continue;
    size_t lo = page_rank(x, m, b->offset / page);
    size_t hi = page_rank(x, m, (b->offset + b->size - 1) / page + 1);
    page_tree_add(&t, 1, 0, m - 1, lo, hi, ev[i].kind == 1 ? 1 : -1);
    if (ev[i].kind == 1 && t.len[1] > most)
      most = t.len[1];
  }
  free(x), free(ev), free(t.cover), free(t.len);
  *out = most > UINT64_MAX / page ? UINT64_MAX : most * page;
  return SFC_OK;
}

sfc_status_t sfc_pack_check(const sfc_pack_problem_t *p, uint64_t *out_peak, uint32_t out_pair[2],
                            sfc_error_t *err) {
  uint64_t a = p->alignment ? p->alignment : 1, peak = 0;
  if (out_pair)
    out_pair[0] = out_pair[1] = UINT32_MAX;
  for (size_t i = 0; i < p->count; i++) {
    const sfc_pack_block_t *b = &p->blocks[i];
    if (b->offset % a != 0)
      return sfc_error_set(err, SFC_ERR_VERIFY,
                           "block %zu: offset %" PRIu64
                           " is not a multiple of the alignment %" PRIu64,
                           i, b->offset, a);
    if (b->offset > UINT64_MAX - b->size)
      return sfc_error_set(err, SFC_ERR_VERIFY, "block %zu: offset + size overflows", i);
    if (b->offset + b->size > peak)
      peak = b->offset + b->size;
  }
  if (p->count > UINT32_MAX - 1)
    return sfc_error_set(err, SFC_ERR_LIMIT, "too many blocks to check (%zu)", p->count);
  sfc_pack_event_t *ev = sfc_pack_events_sorted(p);
  sfc_oset_t live;
  if (!ev || !sfc_oset_init(&live, (uint32_t)p->count)) {
    free(ev);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory checking %zu blocks", p->count);
  }
  sfc_status_t st = SFC_OK;
  for (size_t i = 0; i < p->count * 2 && st == SFC_OK; i++) {
    uint32_t id = ev[i].block;
    const sfc_pack_block_t *b = &p->blocks[id];
    if (ev[i].kind == 0) {
      sfc_oset_erase(&live, b->offset, id);
      continue;
    }
    uint32_t nb[2] = {sfc_oset_prev(&live, b->offset, id), sfc_oset_next(&live, b->offset, id)};
    for (int k = 0; k < 2 && st == SFC_OK; k++) {
      if (nb[k] == SFC_OSET_NONE)
        continue;
      const sfc_pack_block_t *o = &p->blocks[nb[k]];
      if (b->offset < o->offset + o->size && o->offset < b->offset + b->size) {
        if (out_pair) {
          out_pair[0] = nb[k];
          out_pair[1] = id;
        }
        st = sfc_error_set(err, SFC_ERR_VERIFY,
                           "blocks %u [%" PRIu64 ", %" PRIu64 ") and %u [%" PRIu64 ", %" PRIu64
                           ") overlap in bytes while both live at time %" PRId64,
                           nb[k], o->offset, o->offset + o->size, id, b->offset,
                           b->offset + b->size, b->start);
      }
    }
    sfc_oset_insert(&live, b->offset, id);
  }
  sfc_oset_deinit(&live);
  free(ev);
  if (st == SFC_OK && out_peak)
    *out_peak = peak;
  return st;
}

static sfc_status_t validate(const sfc_pack_problem_t *p, sfc_error_t *err) {
  uint64_t a = p->alignment;
  if (a == 0 || (a & (a - 1)) != 0)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "alignment %" PRIu64 " is not a power of two", a);
  if (p->count > 0 && !p->blocks)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "no block array for %zu blocks", p->count);
  uint64_t total = 0;
  for (size_t i = 0; i < p->count; i++) {
    const sfc_pack_block_t *b = &p->blocks[i];
    if (b->size == 0)
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "block %zu: size is 0", i);
    if (b->end <= b->start)
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "block %zu: lifetime [%" PRId64 ", %" PRId64 ") is empty", i, b->start,
                           b->end);
    if (b->size > (UINT64_C(1) << 62) || total + align_up(b->size, a) > (UINT64_C(1) << 62))
      return sfc_error_set(err, SFC_ERR_LIMIT, "block %zu: sizes sum past 2^62 bytes", i);
    total += align_up(b->size, a);
    if (b->fixed && b->offset % a != 0)
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "block %zu: pre-placed offset %" PRIu64 " is not a multiple of %" PRIu64,
                           i, b->offset, a);
    if (b->fixed && b->offset > (UINT64_C(1) << 62))
      return sfc_error_set(err, SFC_ERR_LIMIT, "block %zu: pre-placed offset past 2^62 bytes", i);
  }
  return SFC_OK;
}

/* Pre-placed blocks must not collide among themselves: the check on them alone. */
static sfc_status_t check_fixed(const sfc_pack_problem_t *p, size_t n_fixed, sfc_error_t *err) {
  sfc_pack_block_t *f = malloc((n_fixed ? n_fixed : 1) * sizeof *f);
  uint32_t *index = malloc((n_fixed ? n_fixed : 1) * sizeof *index);
  if (!f || !index) {
    free(f);
    free(index);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory checking pre-placed blocks");
  }
  size_t k = 0;
  for (size_t i = 0; i < p->count; i++)
    if (p->blocks[i].fixed) {
      index[k] = (uint32_t)i;
      f[k++] = p->blocks[i];
    }
  sfc_pack_problem_t sub = {.blocks = f, .count = k, .alignment = p->alignment};
  uint32_t pair[2];
  sfc_status_t st = sfc_pack_check(&sub, NULL, pair, err);
  if (st == SFC_ERR_VERIFY && pair[0] != UINT32_MAX)
    st = sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                       "pre-placed blocks %u and %u overlap in time and bytes", index[pair[0]],
                       index[pair[1]]);
  free(f);
  free(index);
  return st;
}

sfc_status_t sfc_pack_run(const char *algorithm, sfc_pack_problem_t *problem,
                          const sfc_pack_options_t *opt, sfc_pack_result_t *out, sfc_error_t *err) {
  static const sfc_pack_options_t defaults = {0};
  const sfc_packer_t *packer = sfc_packer_find(algorithm);
  if (!packer)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "unknown packer '%s'", algorithm);
  SFC_TRY(validate(problem, err));
  size_t n_fixed = 0;
  for (size_t i = 0; i < problem->count; i++)
    n_fixed += problem->blocks[i].fixed;
  if (n_fixed) {
    SFC_TRY(check_fixed(problem, n_fixed, err));
    if (!packer->preplaced) /* only the greedy family places around given offsets */
      packer = sfc_packer_find("greedy-size");
  }
  uint64_t *given = NULL;
  if (n_fixed && !(given = malloc(problem->count * sizeof *given)))
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for pre-placed blocks");
  for (size_t i = 0; given && i < problem->count; i++)
    given[i] = problem->blocks[i].offset;
  memset(out, 0, sizeof *out);
  double t0 = sfc_clock_seconds();
  sfc_status_t run = packer->fn(problem, opt ? opt : &defaults, out, err);
  for (size_t i = 0; run == SFC_OK && given && i < problem->count; i++)
    if (problem->blocks[i].fixed && problem->blocks[i].offset != given[i])
      run = sfc_error_set(err, SFC_ERR_INTERNAL, "%s moved pre-placed block %zu", packer->name, i);
  free(given);
  SFC_TRY(run);
  out->seconds = sfc_clock_seconds() - t0;
  out->lower_bound = sfc_pack_lower_bound(problem);
  if (!out->algorithm)
    out->algorithm = packer->name;
  uint64_t peak;
  sfc_status_t st = sfc_pack_check(problem, &peak, NULL, err);
  if (st != SFC_OK) {
    sfc_error_prefix(err, out->algorithm);
    if (st == SFC_ERR_VERIFY && err)
      err->status = SFC_ERR_INTERNAL; /* a packer bug, not bad input */
    return st == SFC_ERR_VERIFY ? SFC_ERR_INTERNAL : st;
  }
  if (peak != out->peak)
    return sfc_error_set(err, SFC_ERR_INTERNAL, "%s: reported peak %" PRIu64 ", actual %" PRIu64,
                         out->algorithm, out->peak, peak);
  if (peak == out->lower_bound)
    out->optimal = true;
  if (out->best_bound < out->lower_bound)
    out->best_bound = out->lower_bound;
  if (out->optimal || out->best_bound > out->peak)
    out->best_bound = out->peak;
  return SFC_OK;
}
