/* sfc/allocator.h — the runtime's allocator: one function plus user data (Lua style).
 *
 * Every heap allocation the runtime makes goes through an sfc_allocator_t the
 * caller passes in (NULL means libc). fn(user, ptr, old_bytes, new_bytes):
 *   new_bytes > 0 -> (re)allocate, return the block or NULL on failure (ptr stays valid)
 *   new_bytes == 0 -> free ptr (may be NULL), return NULL
 * Tests pass an allocator that fails the N-th call to prove every error path frees
 * what it allocated.
 */
#ifndef SFC_ALLOCATOR_H
#define SFC_ALLOCATOR_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sfc_allocator {
  void *(*fn)(void *user, void *ptr, size_t old_bytes, size_t new_bytes);
  void *user;
} sfc_allocator_t;

/* The libc allocator (malloc/realloc/free). */
const sfc_allocator_t *sfc_allocator_default(void);

/* Helpers that route through a (possibly NULL = default) allocator. */
void *sfc_alloc(const sfc_allocator_t *a, size_t bytes);
void *sfc_calloc(const sfc_allocator_t *a, size_t count, size_t size); /* overflow-checked */
void sfc_free(const sfc_allocator_t *a, void *ptr, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif /* SFC_ALLOCATOR_H */
