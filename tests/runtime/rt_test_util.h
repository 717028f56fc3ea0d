/* rt_test_util.h — helpers shared by the runtime tests: load a builder plan through
 * the reader (so every valid plan a test replays passes the validator), replay N
 * iterations through the pull loop; the counting allocator is tests/test_alloc.h.
 *
 *   pb_t *b = pb_new(); pb_example_full(b);
 *   sfcrt_plan_t *plan = rt_load(b);               // validated
 *   sfc_error_t err;
 *   CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, NULL, &err), err);
 *
 * Include after check.h; everything is static so each test is one file.
 */
#ifndef SFC_TEST_RT_UTIL_H
#define SFC_TEST_RT_UTIL_H

#include "check.h"
#include "interp.h" /* sfcrt_session_create_view: replay unvalidated (broken) views */
#include "plan_builder.h"
#include "sfcrt.h"
#include "test_alloc.h" /* test_alloc_t: the counting, failing allocator */

/* Writes the builder's plan and loads it back through the validating reader. */
static inline sfcrt_plan_t *rt_load(pb_t *b) {
  void *data;
  size_t n;
  pb_write(b, &data, &n);
  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  if (sfcrt_plan_load_buffer(data, n, NULL, &plan, &err) != SFC_OK) {
    fprintf(stderr, "rt_load: %s\n", err.message);
    CHECK(!"builder plan failed validation");
  }
  free(data);
  return plan;
}

/* Creates a session on view (validated or not), runs `iterations` iterations of the
 * pull loop (the framework does nothing), returns the first failure. When
 * out_stats is not NULL the session's stats are copied there. */
static inline sfc_status_t rt_replay(const sfc_plan_view_t *view, const sfcrt_options_t *opt,
                                     int iterations, sfcrt_stats_t *out_stats, sfc_error_t *err) {
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create_view(view, opt, &s, err);
  if (st == SFC_OK)
    st = sfcrt_session_run(s, (uint64_t)iterations, err);
  if (out_stats)
    sfcrt_session_stats(s, out_stats);
  sfcrt_session_destroy(s);
  return st;
}

#endif /* SFC_TEST_RT_UTIL_H */
