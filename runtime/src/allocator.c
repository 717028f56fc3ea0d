/* allocator.c — the default libc allocator and helpers that route through one. */
#include "sfc/allocator.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *libc_fn(void *user, void *ptr, size_t old_bytes, size_t new_bytes) {
  (void)user;
  (void)old_bytes;
  if (new_bytes == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, new_bytes);
}

static const sfc_allocator_t libc_allocator = {libc_fn, NULL};

const sfc_allocator_t *sfc_allocator_default(void) {
  return &libc_allocator;
}

void *sfc_alloc(const sfc_allocator_t *a, size_t bytes) {
  if (!a)
    a = &libc_allocator;
  return bytes ? a->fn(a->user, NULL, 0, bytes) : NULL;
}

void *sfc_calloc(const sfc_allocator_t *a, size_t count, size_t size) {
  if (count == 0 || size == 0 || count > SIZE_MAX / size)
    return NULL;
  if (!a || a->fn == libc_fn) /* libc's calloc: fresh pages come zeroed, unwritten */
    return calloc(count, size);
  void *p = sfc_alloc(a, count * size);
  if (p)
    memset(p, 0, count * size);
  return p;
}

void sfc_free(const sfc_allocator_t *a, void *ptr, size_t bytes) {
  if (!ptr)
    return;
  if (!a)
    a = &libc_allocator;
  a->fn(a->user, ptr, bytes, 0);
}
