/* test_alloc.h — the counting, failing allocator the plan, runtime and cuda tests pass
 * as an sfc_allocator_t (sfc/allocator.h): it counts calls, live blocks and live
 * bytes, and fails call number fail_at (0 = never, -1 = never and the count runs on).
 * A test fails call N = 1, 2, ... and checks each error path left live_blocks and
 * live_bytes at 0; live_bytes going wrong proves a free was given the wrong size.
 *
 *   test_alloc_t count = {.fail_at = 3};
 *   sfc_allocator_t a = {test_alloc_fn, &count};
 *
 * Each call is O(1) plus realloc. Header-only (static inline) so each test stays one file.
 */
#ifndef SFC_TEST_ALLOC_H
#define SFC_TEST_ALLOC_H

#include <stdlib.h>

#include "sfc/allocator.h"

typedef struct test_alloc {
  long calls, fail_at;
  long live_blocks;
  long long live_bytes;
} test_alloc_t;

static inline void *test_alloc_fn(void *user, void *ptr, size_t old_bytes, size_t new_bytes) {
  test_alloc_t *f = user;
  if (new_bytes == 0) {
    if (ptr) {
      f->live_blocks--;
      f->live_bytes -= (long long)old_bytes;
      free(ptr);
    }
    return NULL;
  }
  if (++f->calls == f->fail_at)
    return NULL;
  void *p = realloc(ptr, new_bytes);
  if (!p)
    return NULL;
  if (!ptr)
    f->live_blocks++;
  f->live_bytes += (long long)new_bytes - (long long)old_bytes;
  return p;
}

#endif /* SFC_TEST_ALLOC_H */
