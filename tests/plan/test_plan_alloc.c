/* test_plan_alloc.c — every allocation failure is handled: for N = 1, 2, ... a test
 * allocator fails the N-th allocation; each load must return SFC_ERR_OUT_OF_MEMORY
 * with nothing left allocated, until N is past the last allocation and the load
 * succeeds. Also proves sfc_free is always given the size that was allocated. */
#include <unistd.h>

#include "plan_test_util.h"
#include "test_alloc.h"

/* Runs load for N = 1.. until it succeeds; returns the number of allocations. */
static long fail_every(const char *label, const void *data, size_t n, const char *path) {
  for (long at = 1; at < 1000; at++) {
    test_alloc_t f = {0, at, 0, 0};
    sfc_allocator_t a = {test_alloc_fn, &f};
    sfcrt_plan_t *plan = NULL;
    sfc_error_t err;
    sfc_status_t s = path ? sfcrt_plan_load_file(path, &a, &plan, &err)
                          : sfcrt_plan_load_buffer(data, n, &a, &plan, &err);
    if (s == SFC_OK) {
      CHECK(plan != NULL);
      sfcrt_plan_destroy(plan);
      CHECK_EQ_I64(f.live_blocks, 0);
      CHECK_EQ_I64(f.live_bytes, 0);
      fprintf(stderr, "  %s: %ld allocations, each failure handled\n", label, at - 1);
      return at - 1;
    }
    CHECK_EQ_I64(s, SFC_ERR_OUT_OF_MEMORY);
    CHECK(plan == NULL);
    CHECK_CONTAINS(err.message, "out of memory");
    CHECK_EQ_I64(f.live_blocks, 0);
    CHECK_EQ_I64(f.live_bytes, 0);
  }
  CHECK(!"load never succeeded");
  return 0;
}

static void test_buffer(void) {
  size_t n;
  uint8_t *d = build(pb_example_full, &n);
  CHECK(fail_every("full example from memory", d, n, NULL) >= 4);
  free(d);
}

static void test_file(void) {
  size_t n;
  uint8_t *d = build(pb_example_full, &n);
  char path[] = "/tmp/sfc_plan_alloc_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0 && write(fd, d, n) == (ssize_t)n);
  close(fd);
  CHECK(fail_every("full example from a file", NULL, 0, path) >= 5);
  remove(path);
  free(d);
}

/* A validation failure after allocation must free as well. */
static void test_failure_frees(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  pb_view(b);
  pb_block_at(b, 5)->flags = SFC_BLOCK_SWAPPED_IN; /* fails in the last check */
  void *d;
  size_t n;
  pb_write(b, &d, &n);
  test_alloc_t f = {0, -1, 0, 0};
  sfc_allocator_t a = {test_alloc_fn, &f};
  sfcrt_plan_t *plan;
  sfc_error_t err;
  CHECK_EQ_I64(sfcrt_plan_load_buffer(d, n, &a, &plan, &err), SFC_ERR_VERIFY);
  CHECK(f.calls >= 3);
  CHECK_EQ_I64(f.live_blocks, 0);
  free(d);
  pb_free(b);
}

int main(void) {
  RUN(test_buffer);
  RUN(test_file);
  RUN(test_failure_frees);
  return check_summary();
}
