/* pack_sections.c — time sections, overlap lists and cut counts of a DSA instance
 * (see pack_sections.h), after MiniMalloc's sweep (Moffitt, ASPLOS 2023).
 *
 * One sort of the 2n lifetime events (frees first at equal times), then two sweeps
 * keeping the live set in an array with a position index (O(1) insert and erase):
 * the first counts each block's overlaps and sections, the second fills the lists.
 * O(n log n + pairs + memberships).
 */
#include "pack_sections.h"

#include <stdlib.h>
#include <string.h>

void sfc_pack_sections_free(sfc_pack_sections_t *x) {
  free(x->lo);
  free(x->hi);
  free(x->member_start);
  free(x->member);
  free(x->overlap_start);
  free(x->overlap);
  free(x->total);
  free(x->cut);
  memset(x, 0, sizeof *x);
}

sfc_status_t sfc_pack_sections_build(const sfc_pack_problem_t *p, uint64_t max_pairs,
                                     sfc_pack_sections_t *x, sfc_error_t *err) {
  memset(x, 0, sizeof *x);
  if (p->count > (UINT32_C(1) << 31))
    return sfc_error_set(err, SFC_ERR_LIMIT, "sections: too many blocks (%zu)", p->count);
  uint32_t n = (uint32_t)p->count;
  x->n = n;
  size_t n1 = n ? n : 1;
  sfc_pack_event_t *ev = sfc_pack_events_sorted(p);
  uint32_t *live = malloc(n1 * sizeof *live), *pos = malloc(n1 * sizeof *pos);
  uint32_t *fill = calloc(n1, sizeof *fill);
  x->lo = malloc(n1 * sizeof *x->lo);
  x->hi = malloc(n1 * sizeof *x->hi);
  x->overlap_start = calloc(n1 + 1, sizeof *x->overlap_start);
  sfc_status_t st = SFC_OK;
  if (!ev || !live || !pos || !fill || !x->lo || !x->hi || !x->overlap_start)
    goto oom;

  /* Sweep 1: section ranges and overlap counts (each pair at the later start). */
  uint32_t nlive = 0, nsec = 0;
  bool any_free = false;
  int64_t last_free = 0;
  uint64_t pairs = 0, members = 0;
  for (size_t e = 0; e < 2 * (size_t)n; e++) {
    uint32_t i = ev[e].block;
    if (ev[e].kind == 1) {
      x->lo[i] = nsec;
      for (uint32_t k = 0; k < nlive; k++)
        x->overlap_start[live[k]]++;
      x->overlap_start[i] += nlive;
      pairs += nlive;
      pos[i] = nlive;
      live[nlive++] = i;
    } else {
      if (!any_free || ev[e].time != last_free) {
        members += nlive;
        nsec++;
        any_free = true;
        last_free = ev[e].time;
      }
      x->hi[i] = nsec;
      uint32_t last = live[--nlive];
      live[pos[i]] = last;
      pos[last] = pos[i];
    }
    if (pairs > max_pairs || members > max_pairs) {
      st = sfc_error_set(err, SFC_ERR_LIMIT, "sections: more than %llu overlaps",
                         (unsigned long long)max_pairs);
      goto out;
    }
  }
  x->count = nsec;
  uint64_t acc = 0;
  for (uint32_t i = 0; i <= n; i++) {
    uint64_t c = i < n ? x->overlap_start[i] : 0;
    x->overlap_start[i] = (uint32_t)acc;
    acc += c;
  }
  size_t ns = nsec ? nsec : 1;
  x->overlap = malloc((acc ? acc : 1) * sizeof *x->overlap);
  x->member_start = calloc(ns + 1, sizeof *x->member_start);
  x->member = malloc((members ? members : 1) * sizeof *x->member);
  x->total = calloc(ns, sizeof *x->total);
  x->cut = calloc(ns, sizeof *x->cut);
  if (!x->overlap || !x->member_start || !x->member || !x->total || !x->cut)
    goto oom;

  /* Sweep 2: the overlap lists. */
  nlive = 0;
  for (size_t e = 0; e < 2 * (size_t)n; e++) {
    uint32_t i = ev[e].block;
    if (ev[e].kind == 1) {
      for (uint32_t k = 0; k < nlive; k++) {
        uint32_t o = live[k];
        x->overlap[x->overlap_start[o] + fill[o]++] = i;
        x->overlap[x->overlap_start[i] + fill[i]++] = o;
      }
      pos[i] = nlive;
      live[nlive++] = i;
    } else {
      uint32_t last = live[--nlive];
      live[pos[i]] = last;
      pos[last] = pos[i];
    }
  }
  /* Section members, totals, cuts. */
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t c = x->lo[i]; c < x->hi[i]; c++) {
      x->member_start[c + 1]++;
      x->total[c] += p->blocks[i].size;
      if (c + 1 < x->hi[i])
        x->cut[c]++;
    }
  for (uint32_t c = 0; c < nsec; c++)
    x->member_start[c + 1] += x->member_start[c];
  memset(fill, 0, n1 * sizeof *fill);
  uint32_t *sfill = fill; /* reused: n >= sections, as every section ends a block */
  for (uint32_t i = 0; i < n; i++)
    for (uint32_t c = x->lo[i]; c < x->hi[i]; c++)
      x->member[x->member_start[c] + sfill[c]++] = i;
  goto out;
oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "sections: out of memory for %u blocks", n);
out:
  if (st != SFC_OK)
    sfc_pack_sections_free(x);
  free(ev);
  free(live);
  free(pos);
  free(fill);
  return st;
}
