/* oset.c — treap keyed by (key, id) with split/merge, nodes stored in arrays
 * indexed by id (no per-node allocation). Priorities are a fixed hash of the id, so
 * the shape, and therefore the running time, is deterministic. */
#include "oset.h"

#include <stdlib.h>

static uint32_t hash_id(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

/* Element a compared with the pair (key, id). */
static bool less(const sfc_oset_t *s, uint32_t a, uint64_t key, uint32_t id) {
  return s->key[a] < key || (s->key[a] == key && a < id);
}

static bool greater(const sfc_oset_t *s, uint32_t a, uint64_t key, uint32_t id) {
  return s->key[a] > key || (s->key[a] == key && a > id);
}

bool sfc_oset_init(sfc_oset_t *s, uint32_t capacity) {
  size_t n = capacity ? capacity : 1;
  s->key = malloc(n * sizeof *s->key);
  s->left = malloc(n * sizeof *s->left);
  s->right = malloc(n * sizeof *s->right);
  s->prio = malloc(n * sizeof *s->prio);
  s->root = SFC_OSET_NONE;
  s->capacity = capacity;
  if (!s->key || !s->left || !s->right || !s->prio) {
    sfc_oset_deinit(s);
    return false;
  }
  for (uint32_t i = 0; i < capacity; i++)
    s->prio[i] = hash_id(i + 1);
  return true;
}

void sfc_oset_deinit(sfc_oset_t *s) {
  free(s->key);
  free(s->left);
  free(s->right);
  free(s->prio);
  s->key = NULL;
  s->left = s->right = s->prio = NULL;
  s->root = SFC_OSET_NONE;
}

/* Splits t into elements < (key,id) and elements >= (key,id). Iterative. */
static void split(sfc_oset_t *s, uint32_t t, uint64_t key, uint32_t id, uint32_t *out_l,
                  uint32_t *out_r) {
  uint32_t *l = out_l, *r = out_r;
  while (t != SFC_OSET_NONE) {
    if (less(s, t, key, id)) {
      *l = t;
      l = &s->right[t];
      t = s->right[t];
    } else {
      *r = t;
      r = &s->left[t];
      t = s->left[t];
    }
  }
  *l = SFC_OSET_NONE;
  *r = SFC_OSET_NONE;
}

/* Merges a and b where every element of a < every element of b. Iterative. */
static uint32_t merge(sfc_oset_t *s, uint32_t a, uint32_t b) {
  uint32_t root = SFC_OSET_NONE, *slot = &root;
  while (a != SFC_OSET_NONE && b != SFC_OSET_NONE) {
    if (s->prio[a] > s->prio[b]) {
      *slot = a;
      slot = &s->right[a];
      a = s->right[a];
    } else {
      *slot = b;
      slot = &s->left[b];
      b = s->left[b];
    }
  }
  *slot = a != SFC_OSET_NONE ? a : b;
  return root;
}

void sfc_oset_insert(sfc_oset_t *s, uint64_t key, uint32_t id) {
  s->key[id] = key;
  s->left[id] = s->right[id] = SFC_OSET_NONE;
  /* Descend while the path's priorities beat the new node, then split there. */
  uint32_t *slot = &s->root;
  while (*slot != SFC_OSET_NONE && s->prio[*slot] > s->prio[id])
    slot = less(s, *slot, key, id) ? &s->right[*slot] : &s->left[*slot];
  split(s, *slot, key, id, &s->left[id], &s->right[id]);
  *slot = id;
}

void sfc_oset_erase(sfc_oset_t *s, uint64_t key, uint32_t id) {
  uint32_t *slot = &s->root;
  while (*slot != SFC_OSET_NONE && *slot != id)
    slot = less(s, *slot, key, id) ? &s->right[*slot] : &s->left[*slot];
  if (*slot == id)
    *slot = merge(s, s->left[id], s->right[id]);
}

uint32_t sfc_oset_prev(const sfc_oset_t *s, uint64_t key, uint32_t id) {
  uint32_t t = s->root, best = SFC_OSET_NONE;
  while (t != SFC_OSET_NONE) {
    if (less(s, t, key, id)) {
      best = t;
      t = s->right[t];
    } else {
      t = s->left[t];
    }
  }
  return best;
}

uint32_t sfc_oset_next(const sfc_oset_t *s, uint64_t key, uint32_t id) {
  uint32_t t = s->root, best = SFC_OSET_NONE;
  while (t != SFC_OSET_NONE) {
    if (greater(s, t, key, id)) {
      best = t;
      t = s->left[t];
    } else {
      t = s->right[t];
    }
  }
  return best;
}
