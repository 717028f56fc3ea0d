/* life.h — when the runtime begins and ends each device block: the tables the cuda
 * device's VA and paged modes map and unmap by, and the sim device's paged model
 * replays (docs/runtime.md "Paged mode"), and the pending-page queue both unmap by.
 * Pure C over a validated plan view.
 *
 * The rules (the plan's, as the interpreter issues it): a block that is not swapped in
 * begins at step_begin(first_step); a swapped-in block begins at its swap-in's issue; a
 * block ends at step_end(last_step), unless a swap-out of it is issued at a later step,
 * which then ends it when issued. External and persistent blocks never begin or end
 * (persistent ones are resident for the session). */
#ifndef SFCRT_LIFE_H
#define SFCRT_LIFE_H

#include <stdbool.h>
#include <stdint.h>

#include "sfc/allocator.h"
#include "sfc/plan_format.h"
#include "sfc/status.h"

typedef struct sfcrt_life {
  uint32_t *swap_out_step;        /* [block_count] issue step of the swap-out from it, or NONE */
  uint32_t *begin_at, *begin_idx; /* CSR: blocks begun at step_begin(k) (not swapped in) */
  uint32_t *end_at, *end_idx;     /* CSR: blocks whose compute life ends at step_end(k) */
  uint32_t block_count, step_count;
} sfcrt_life_t;

/* Whether the runtime begins and ends block b (not external, not persistent). */
bool sfcrt_life_managed(const sfc_plan_block_t *b);

/* Builds the tables (counting sort, O(blocks + steps)); on failure *l is empty. */
sfc_status_t sfcrt_life_init(sfcrt_life_t *l, const sfc_plan_view_t *v, const sfc_allocator_t *a,
                             sfc_error_t *err);
void sfcrt_life_free(sfcrt_life_t *l, const sfc_allocator_t *a);

/* Whether block b ends at step_end(k), k its last step (no later swap-out ends it). */
static inline bool sfcrt_life_ends_at_step(const sfcrt_life_t *l, uint32_t b, uint32_t k) {
  return l->swap_out_step[b] == SFC_PLAN_NONE || l->swap_out_step[b] <= k;
}

/* What a block's begin or end maps or frees, for sfcrt_life_peak: units newly mapped
 * when the block begins, freed when it ends. A counter sees each block begin at most
 * once and end at most once per replay. */
typedef struct sfcrt_peak_counter {
  uint64_t (*begin)(struct sfcrt_peak_counter *c, uint32_t block);
  uint64_t (*end)(struct sfcrt_peak_counter *c, uint32_t block);
  void *ctx;
} sfcrt_peak_counter_t;

/* The most units mapped at once over one iteration: the issue order replayed with the
 * rules above (persistent blocks first; each step's swaps at their issue step, then its
 * begins, then its ends), pending unmaps counted as reclaimed (a map can always wait
 * for them). O(blocks + swaps + steps) counter calls. */
uint64_t sfcrt_life_peak(const sfcrt_life_t *l, const sfc_plan_view_t *v, sfcrt_peak_counter_t *c);

/* Pages [*first, *last] of `page` bytes block b touches; false for a block of 0 bytes. */
static inline bool sfcrt_block_pages(const sfc_plan_block_t *b, uint64_t page, uint32_t *first,
                                     uint32_t *last) {
  if (b->bytes == 0 || page == 0)
    return false;
  *first = (uint32_t)(b->offset / page);
  *last = (uint32_t)((b->offset + b->bytes - 1) / page);
  return true;
}

/* The most pages of `page` bytes the runtime's paged mode maps at once (the chunk
 * pool it needs): sfcrt_life_peak counting the pages whose count of live blocks leaves
 * or returns to 0. refs: [pages of the arena], live: [block_count], both zeroed on entry
 * and left dirty. */
uint64_t sfcrt_life_page_peak(const sfcrt_life_t *l, const sfc_plan_view_t *v, uint64_t page,
                              uint32_t *refs, uint8_t *live);

/* Paged mode's pending pages (docs/runtime.md "Paged mode"): pages no live block
 * touches, in the order they became so — the order both the cuda device and the sim
 * device unmap them in when a map needs their chunks. An entry goes stale when its page
 * is touched again or reclaimed (cancel); stale entries stay until the head passes them
 * or a full queue is compacted (at most `count` entries are current), so push,
 * cancel and current are O(1) amortised. */
typedef struct sfcrt_page_fifo {
  uint64_t *pend; /* [count] 0 = not pending, else its entry's sequence number */
  uint32_t *page; /* [2 * count] the entries' pages, oldest first */
  uint64_t *seq;  /* [2 * count] and their sequence numbers */
  size_t head, tail;
  uint64_t next;
  uint32_t count;
} sfcrt_page_fifo_t;

/* For an arena of `count` pages; false when out of memory (*f is then empty). */
bool sfcrt_page_fifo_init(sfcrt_page_fifo_t *f, uint32_t count, const sfc_allocator_t *a);
void sfcrt_page_fifo_free(sfcrt_page_fifo_t *f, const sfc_allocator_t *a);

/* Page p becomes pending (the newest entry). */
void sfcrt_page_fifo_push(sfcrt_page_fifo_t *f, uint32_t p);

/* Page p is no longer pending: touched again, or reclaimed. */
static inline void sfcrt_page_fifo_cancel(sfcrt_page_fifo_t *f, uint32_t p) {
  f->pend[p] = 0;
}

/* Whether entry i (head <= i < tail) is current: its page is still pending from it. */
static inline bool sfcrt_page_fifo_current(const sfcrt_page_fifo_t *f, size_t i) {
  return f->pend[f->page[i]] == f->seq[i];
}

/* Moves the head past stale entries: afterwards the head, if any, is the oldest pending
 * page. */
static inline void sfcrt_page_fifo_trim(sfcrt_page_fifo_t *f) {
  while (f->head < f->tail && !sfcrt_page_fifo_current(f, f->head))
    f->head++;
}

#endif
