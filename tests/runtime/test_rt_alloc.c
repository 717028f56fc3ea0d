/* test_rt_alloc.c — every allocation failure in plan load and session creation is
 * handled: for N = 1, 2, ... a counting allocator fails the N-th allocation of
 * "load the plan, create a session"; each attempt must fail with
 * SFC_ERR_OUT_OF_MEMORY and leave nothing allocated, until N is past the last
 * allocation and both succeed (then one iteration runs and everything is freed).
 * Run under ASan/LSan in CI, which also catches any free of a wrong pointer. */
#include "rt_plans.h"
#include "rt_test_util.h"

static long fail_every(const char *label, const void *data, size_t n, const char *device,
                       int integrity) {
  for (long at = 1; at < 1000; at++) {
    test_alloc_t c = {0, at, 0, 0};
    sfc_allocator_t a = {test_alloc_fn, &c};
    sfcrt_plan_t *plan = NULL;
    sfcrt_session_t *s = NULL;
    sfc_error_t err;
    sfc_status_t st = sfcrt_plan_load_buffer(data, n, &a, &plan, &err);
    if (st == SFC_OK) {
      sfcrt_options_t opt;
      sfcrt_options_init(&opt);
      opt.device = device;
      opt.alloc = &a;
      opt.host.integrity = integrity;
      st = sfcrt_session_create(plan, &opt, &s, &err);
      if (st != SFC_OK)
        CHECK(s == NULL);
    }
    if (st == SFC_OK) {
      CHECK_OK(
          rt_replay(sfcrt_plan_view(plan), &(sfcrt_options_t){.device = device}, 1, NULL, &err),
          err);
      sfcrt_session_destroy(s);
      sfcrt_plan_destroy(plan);
      CHECK_EQ_I64(c.live_blocks, 0);
      CHECK_EQ_I64(c.live_bytes, 0);
      fprintf(stderr, "  %s on %s%s: %ld allocations, each failure handled\n", label, device,
              integrity ? " (integrity)" : "", at - 1);
      return at - 1;
    }
    int before = check_failures_;
    CHECK_EQ_I64(st, SFC_ERR_OUT_OF_MEMORY);
    CHECK_CONTAINS(err.message, "out of memory");
    sfcrt_plan_destroy(plan);
    CHECK_EQ_I64(c.live_blocks, 0);
    CHECK_EQ_I64(c.live_bytes, 0);
    if (check_failures_ != before)
      fprintf(stderr, "  in %s on %s, failing allocation %ld: %s\n", label, device, at,
              err.message);
  }
  CHECK(!"load + create never succeeded");
  return 0;
}

static void test_fail_each_allocation(void) {
  static const char *const devices[] = {"host", "host", "sim"};
  for (int plan_kind = 0; plan_kind < 3; plan_kind++) {
    pb_t *b = pb_new();
    const char *label = plan_kind == 0 ? "chain" : plan_kind == 1 ? "full" : "swap";
    if (plan_kind == 0)
      pb_simple_chain(b, 4);
    else if (plan_kind == 1)
      pb_example_full(b);
    else
      rt_swap_plan(b, RT_VALID);
    void *data;
    size_t n;
    pb_write(b, &data, &n);
    for (int d = 0; d < 3; d++)
      CHECK(fail_every(label, data, n, devices[d], d == 1) > 3);
    free(data);
    pb_free(b);
  }
}

int main(void) {
  RUN(test_fail_each_allocation);
  return check_summary();
}
