/* life.c — the runtime's block begin/end tables and the peak replay (life.h). */
#include "life.h"

#include <string.h>

bool sfcrt_life_managed(const sfc_plan_block_t *b) {
  return !(b->flags & (SFC_BLOCK_EXTERNAL | SFC_BLOCK_PERSISTENT));
}

void sfcrt_life_free(sfcrt_life_t *l, const sfc_allocator_t *a) {
  size_t nbc = l->block_count ? l->block_count : 1, nsc = (size_t)l->step_count + 2;
  if (l->swap_out_step)
    sfc_free(a, l->swap_out_step, nbc * sizeof(uint32_t));
  if (l->begin_at)
    sfc_free(a, l->begin_at, nsc * sizeof(uint32_t));
  if (l->end_at)
    sfc_free(a, l->end_at, nsc * sizeof(uint32_t));
  if (l->begin_idx)
    sfc_free(a, l->begin_idx, nbc * sizeof(uint32_t));
  if (l->end_idx)
    sfc_free(a, l->end_idx, nbc * sizeof(uint32_t));
  memset(l, 0, sizeof *l);
}

sfc_status_t sfcrt_life_init(sfcrt_life_t *l, const sfc_plan_view_t *v, const sfc_allocator_t *a,
                             sfc_error_t *err) {
  memset(l, 0, sizeof *l);
  uint32_t nb = v->block_count, ns = v->step_count;
  size_t nbc = nb ? nb : 1;
  l->block_count = nb;
  l->step_count = ns;
  l->swap_out_step = sfc_calloc(a, nbc, sizeof(uint32_t));
  l->begin_at = sfc_calloc(a, (size_t)ns + 2, sizeof(uint32_t));
  l->end_at = sfc_calloc(a, (size_t)ns + 2, sizeof(uint32_t));
  l->begin_idx = sfc_calloc(a, nbc, sizeof(uint32_t));
  l->end_idx = sfc_calloc(a, nbc, sizeof(uint32_t));
  uint32_t *cursor = sfc_calloc(a, (size_t)ns + 2, sizeof(uint32_t));
  if (!l->swap_out_step || !l->begin_at || !l->end_at || !l->begin_idx || !l->end_idx || !cursor) {
    if (cursor)
      sfc_free(a, cursor, ((size_t)ns + 2) * sizeof(uint32_t));
    sfcrt_life_free(l, a);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory for the blocks' life tables");
  }
  for (uint32_t b = 0; b < nb; b++)
    l->swap_out_step[b] = SFC_PLAN_NONE;
  for (uint32_t s = 0; s < v->swap_count; s++)
    if (v->swaps[s].direction == SFC_SWAP_OUT)
      l->swap_out_step[v->swaps[s].device_block] = v->swaps[s].issue_step;
  for (uint32_t b = 0; b < nb; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    if (!sfcrt_life_managed(x))
      continue;
    if (!(x->flags & SFC_BLOCK_SWAPPED_IN))
      l->begin_at[x->first_step + 1]++;
    l->end_at[x->last_step + 1]++;
  }
  for (uint32_t k = 0; k < ns; k++) {
    l->begin_at[k + 1] += l->begin_at[k];
    l->end_at[k + 1] += l->end_at[k];
  }
  memcpy(cursor, l->begin_at, ((size_t)ns + 1) * sizeof(uint32_t));
  for (uint32_t b = 0; b < nb; b++)
    if (sfcrt_life_managed(&v->blocks[b]) && !(v->blocks[b].flags & SFC_BLOCK_SWAPPED_IN))
      l->begin_idx[cursor[v->blocks[b].first_step]++] = b;
  memcpy(cursor, l->end_at, ((size_t)ns + 1) * sizeof(uint32_t));
  for (uint32_t b = 0; b < nb; b++)
    if (sfcrt_life_managed(&v->blocks[b]))
      l->end_idx[cursor[v->blocks[b].last_step]++] = b;
  sfc_free(a, cursor, ((size_t)ns + 2) * sizeof(uint32_t));
  return SFC_OK;
}

uint64_t sfcrt_life_peak(const sfcrt_life_t *l, const sfc_plan_view_t *v, sfcrt_peak_counter_t *c) {
  uint64_t mapped = 0, peak = 0;
  for (uint32_t b = 0; b < v->block_count; b++)
    if ((v->blocks[b].flags & SFC_BLOCK_PERSISTENT) && !(v->blocks[b].flags & SFC_BLOCK_EXTERNAL))
      mapped += c->begin(c, b);
  peak = mapped;
  uint32_t next_swap = 0;
  for (uint32_t k = 0; k <= v->step_count; k++) {
    for (; next_swap < v->swap_count && v->swaps[next_swap].issue_step == k; next_swap++) {
      const sfc_plan_swap_t *w = &v->swaps[next_swap];
      uint32_t b = w->device_block;
      if (!sfcrt_life_managed(&v->blocks[b]))
        continue;
      if (w->direction == SFC_SWAP_IN)
        mapped += c->begin(c, b);
      else if (v->blocks[b].last_step < k)
        mapped -= c->end(c, b);
      if (mapped > peak)
        peak = mapped;
    }
    if (k == v->step_count)
      break;
    for (uint32_t i = l->begin_at[k]; i < l->begin_at[k + 1]; i++)
      mapped += c->begin(c, l->begin_idx[i]);
    if (mapped > peak)
      peak = mapped;
    for (uint32_t i = l->end_at[k]; i < l->end_at[k + 1]; i++) {
      uint32_t b = l->end_idx[i];
      if (sfcrt_life_ends_at_step(l, b, k))
        mapped -= c->end(c, b);
    }
  }
  return peak;
}

typedef struct {
  const sfc_plan_view_t *v;
  uint64_t page;
  uint32_t *refs;
  uint8_t *live;
} page_count_t;

static uint64_t page_begin(sfcrt_peak_counter_t *c, uint32_t b) {
  page_count_t *pc = c->ctx;
  uint32_t first, last;
  uint64_t n = 0;
  if (pc->live[b])
    return 0;
  pc->live[b] = 1;
  if (sfcrt_block_pages(&pc->v->blocks[b], pc->page, &first, &last))
    for (uint32_t p = first; p <= last; p++)
      n += pc->refs[p]++ == 0;
  return n;
}

static uint64_t page_end(sfcrt_peak_counter_t *c, uint32_t b) {
  page_count_t *pc = c->ctx;
  uint32_t first, last;
  uint64_t n = 0;
  if (!pc->live[b])
    return 0;
  pc->live[b] = 0;
  if (sfcrt_block_pages(&pc->v->blocks[b], pc->page, &first, &last))
    for (uint32_t p = first; p <= last; p++)
      n += --pc->refs[p] == 0;
  return n;
}

uint64_t sfcrt_life_page_peak(const sfcrt_life_t *l, const sfc_plan_view_t *v, uint64_t page,
                              uint32_t *refs, uint8_t *live) {
  page_count_t pc = {v, page, refs, live};
  sfcrt_peak_counter_t c = {page_begin, page_end, &pc};
  return sfcrt_life_peak(l, v, &c);
}

bool sfcrt_page_fifo_init(sfcrt_page_fifo_t *f, uint32_t count, const sfc_allocator_t *a) {
  memset(f, 0, sizeof *f);
  size_t n = count ? count : 1;
  f->count = (uint32_t)n;
  f->pend = sfc_calloc(a, n, sizeof(uint64_t));
  f->page = sfc_calloc(a, 2 * n, sizeof(uint32_t));
  f->seq = sfc_calloc(a, 2 * n, sizeof(uint64_t));
  if (f->pend && f->page && f->seq)
    return true;
  sfcrt_page_fifo_free(f, a);
  return false;
}

void sfcrt_page_fifo_free(sfcrt_page_fifo_t *f, const sfc_allocator_t *a) {
  size_t n = f->count ? f->count : 1;
  if (f->pend)
    sfc_free(a, f->pend, n * sizeof(uint64_t));
  if (f->page)
    sfc_free(a, f->page, 2 * n * sizeof(uint32_t));
  if (f->seq)
    sfc_free(a, f->seq, 2 * n * sizeof(uint64_t));
  memset(f, 0, sizeof *f);
}

void sfcrt_page_fifo_push(sfcrt_page_fifo_t *f, uint32_t p) {
  if (f->tail == 2 * (size_t)f->count) { /* compact: at most count entries are current */
    size_t n = 0;
    for (size_t i = f->head; i < f->tail; i++)
      if (sfcrt_page_fifo_current(f, i)) {
        f->page[n] = f->page[i];
        f->seq[n++] = f->seq[i];
      }
    f->head = 0;
    f->tail = n;
  }
  f->pend[p] = ++f->next;
  f->page[f->tail] = p;
  f->seq[f->tail++] = f->next;
}
