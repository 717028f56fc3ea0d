/* plan_test_util.h — helpers shared by the plan tests: load-and-expect, view equality.
 *
 *   expect_load(data, n, SFC_ERR_BAD_INPUT, "truncated: 0 bytes, a plan header needs 128", "row");
 *   CHECK(views_equal(view_a, view_b));
 *
 * Include after check.h; every function is static so each test is one file.
 */
#ifndef SFC_TEST_PLAN_UTIL_H
#define SFC_TEST_PLAN_UTIL_H

#include <stdarg.h>

#include "check.h"
#include "plan_builder.h"
#include "sfc/plan_reader.h"

/* Loads data and checks the status and (when msg is not NULL) the exact message. */
static inline void expect_load(const void *data, size_t n, sfc_status_t status, const char *msg,
                               const char *label) {
  sfcrt_plan_t *plan = (sfcrt_plan_t *)1;
  sfc_error_t err;
  sfc_error_clear(&err);
  sfc_status_t s = sfcrt_plan_load_buffer(data, n, NULL, &plan, &err);
  int before = check_failures_;
  CHECK_EQ_I64(s, status);
  if (status != SFC_OK)
    CHECK(plan == NULL);
  if (msg)
    CHECK_STR_EQ(err.message, msg);
  if (check_failures_ != before)
    fprintf(stderr, "  in row: %s\n", label);
  sfcrt_plan_destroy(s == SFC_OK ? plan : NULL);
}

/* printf into a static buffer: the expected message of a table row. */
static inline const char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static inline const char *fmt(const char *f, ...) {
  static char buf[1024];
  va_list ap;
  va_start(ap, f);
  vsnprintf(buf, sizeof buf, f, ap);
  va_end(ap);
  return buf;
}

#define SAME_ARRAY(a, b, p, n)                                                                     \
  ((a)->n == (b)->n && ((a)->n == 0 || memcmp((a)->p, (b)->p, (a)->n * sizeof *(a)->p) == 0))

/* Every array, the meta record and the header fields the writer takes. */
static inline int views_equal(const sfc_plan_view_t *a, const sfc_plan_view_t *b) {
  const sfc_plan_header_t *x = &a->header, *y = &b->header;
  return x->alignment == y->alignment && x->arena_bytes == y->arena_bytes &&
         x->host_arena_bytes == y->host_arena_bytes && x->budget_bytes == y->budget_bytes &&
         x->host_budget_bytes == y->host_budget_bytes && x->flags == y->flags &&
         a->strings_bytes == b->strings_bytes &&
         memcmp(a->strings, b->strings, a->strings_bytes) == 0 &&
         memcmp(&a->meta, &b->meta, sizeof a->meta) == 0 &&
         SAME_ARRAY(a, b, tensors, tensor_count) && SAME_ARRAY(a, b, ops, op_count) &&
         SAME_ARRAY(a, b, op_operands, op_operand_count) && SAME_ARRAY(a, b, blocks, block_count) &&
         SAME_ARRAY(a, b, host_blocks, host_block_count) && SAME_ARRAY(a, b, steps, step_count) &&
         SAME_ARRAY(a, b, step_operands, step_operand_count) &&
         SAME_ARRAY(a, b, swaps, swap_count) && SAME_ARRAY(a, b, deps, dep_count) &&
         SAME_ARRAY(a, b, segments, segment_count) && SAME_ARRAY(a, b, boxes, box_count);
}

/* Writes a builder's plan; the caller frees *out. */
static inline uint8_t *build(void (*make)(pb_t *), size_t *out_n) {
  pb_t *b = pb_new();
  make(b);
  void *data;
  pb_write(b, &data, out_n);
  pb_free(b);
  return data;
}

#endif /* SFC_TEST_PLAN_UTIL_H */
