/* oset.h — an ordered set of (key, id) pairs: a treap over caller-numbered ids.
 *
 * Used by sweeps that keep "the blocks live right now, ordered by offset": the
 * packing checker and the verifier insert a block when its lifetime starts, look
 * at its neighbours (only they can overlap it if the set is overlap-free so far),
 * and erase it when its lifetime ends. O(log n) expected per operation.
 *
 *   sfc_oset_t s;
 *   if (!sfc_oset_init(&s, n_ids)) ...out of memory
 *   sfc_oset_insert(&s, offset, id);
 *   uint32_t below = sfc_oset_prev(&s, offset, id);  // largest (key,id) < (offset,id)
 *   uint32_t above = sfc_oset_next(&s, offset, id);  // smallest (key,id) > (offset,id)
 *   sfc_oset_erase(&s, offset, id);
 *   sfc_oset_deinit(&s);
 *
 * Ids are 0..capacity-1 and each id is in the set at most once. SFC_OSET_NONE
 * means "no such element".
 */
#ifndef SFC_OSET_H
#define SFC_OSET_H

#include <stdbool.h>
#include <stdint.h>

#define SFC_OSET_NONE UINT32_MAX

typedef struct sfc_oset {
  uint64_t *key;   /* [capacity] key of each id while it is in the set */
  uint32_t *left;  /* [capacity] */
  uint32_t *right; /* [capacity] */
  uint32_t *prio;  /* [capacity] heap priority (hash of the id) */
  uint32_t root;
  uint32_t capacity;
} sfc_oset_t;

bool sfc_oset_init(sfc_oset_t *set, uint32_t capacity);
void sfc_oset_deinit(sfc_oset_t *set);
void sfc_oset_insert(sfc_oset_t *set, uint64_t key, uint32_t id);
void sfc_oset_erase(sfc_oset_t *set, uint64_t key, uint32_t id);
uint32_t sfc_oset_prev(const sfc_oset_t *set, uint64_t key, uint32_t id);
uint32_t sfc_oset_next(const sfc_oset_t *set, uint64_t key, uint32_t id);

#endif /* SFC_OSET_H */
