/* pack_split.c — decomposition of a DSA problem at the times no lifetime crosses.
 *
 * Sort the blocks by start and sweep, keeping the largest end seen so far: when
 * the next start is at or past it, no earlier block is live any more (lifetimes
 * are half-open), so every later block is independent of every earlier one and
 * the problem splits there. Each part is packed on its own from offset 0 and the
 * parts share the arena's bytes; the peak is the largest part's. O(n log n) for
 * the split, plus the packer's time on each part (never more than on the whole,
 * and usually far less, since packers are superlinear).
 */
#include <stdlib.h>
#include <string.h>

#include "pack.h"

typedef struct by_start {
  int64_t start;
  uint32_t id;
} by_start_t;

static int by_start_cmp(const void *pa, const void *pb) {
  const by_start_t *x = pa, *y = pb;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

void sfc_pack_parts_free(sfc_pack_parts_t *parts) {
  free(parts->blocks);
  free(parts->first);
  memset(parts, 0, sizeof *parts);
}

sfc_status_t sfc_pack_split(const sfc_pack_problem_t *p, sfc_pack_parts_t *out, sfc_error_t *err) {
  size_t n = p->count;
  memset(out, 0, sizeof *out);
  if (n > UINT32_MAX - 1)
    return sfc_error_set(err, SFC_ERR_LIMIT, "too many blocks to split (%zu)", n);
  by_start_t *s = malloc((n ? n : 1) * sizeof *s);
  out->blocks = malloc((n ? n : 1) * sizeof *out->blocks);
  out->first = malloc((n + 1) * sizeof *out->first);
  if (!s || !out->blocks || !out->first) {
    free(s);
    sfc_pack_parts_free(out);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory splitting %zu blocks", n);
  }
  for (size_t i = 0; i < n; i++)
    s[i] = (by_start_t){p->blocks[i].start, (uint32_t)i};
  qsort(s, n, sizeof *s, by_start_cmp);
  int64_t reach = 0;
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *b = &p->blocks[s[i].id];
    if (i == 0 || b->start >= reach)
      out->first[out->count++] = i;
    if (i == 0 || b->end > reach)
      reach = b->end;
    out->blocks[i] = s[i].id;
  }
  out->first[out->count] = n;
  free(s);
  return SFC_OK;
}

sfc_status_t sfc_pack_run_split(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                                sfc_packer_fn fn, sfc_pack_result_t *out, sfc_error_t *err) {
  sfc_pack_parts_t parts;
  SFC_TRY(sfc_pack_split(p, &parts, err));
  memset(out, 0, sizeof *out);
  if (parts.count <= 1) {
    sfc_pack_parts_free(&parts);
    return fn(p, opt, out, err);
  }
  size_t most = 0;
  for (size_t k = 0; k < parts.count; k++)
    if (parts.first[k + 1] - parts.first[k] > most)
      most = parts.first[k + 1] - parts.first[k];
  sfc_pack_block_t *sub = malloc(most * sizeof *sub);
  if (!sub) {
    sfc_pack_parts_free(&parts);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory splitting %zu blocks",
                         p->count);
  }
  sfc_status_t st = SFC_OK;
  bool peak_optimal = false;
  for (size_t k = 0; k < parts.count && st == SFC_OK; k++) {
    const uint32_t *ids = parts.blocks + parts.first[k];
    size_t m = parts.first[k + 1] - parts.first[k];
    for (size_t j = 0; j < m; j++)
      sub[j] = p->blocks[ids[j]];
    sfc_pack_problem_t part = {
        .blocks = sub, .count = m, .alignment = p->alignment, .capacity = p->capacity};
    sfc_pack_result_t r = {0};
    st = fn(&part, opt, &r, err);
    if (st != SFC_OK)
      break;
    for (size_t j = 0; j < m; j++)
      p->blocks[ids[j]].offset = sub[j].offset;
    bool opt_k = r.optimal || r.peak == sfc_pack_lower_bound(&part);
    if (r.peak > out->peak || k == 0) {
      out->peak = r.peak;
      out->algorithm = r.algorithm;
      peak_optimal = opt_k;
    } else if (r.peak == out->peak && opt_k) {
      peak_optimal = true;
    }
  }
  out->optimal = st == SFC_OK && peak_optimal;
  free(sub);
  sfc_pack_parts_free(&parts);
  return st;
}
