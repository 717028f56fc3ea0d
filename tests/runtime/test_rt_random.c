/* test_rt_random.c — seeded random swap plans, valid by construction, replayed on
 * `host` with integrity under random queue delays or either lag mode; then each with
 * one essential wait removed (a step no longer waits for its swap-in) must be caught
 * (copies held back: timing-independent).
 *
 * The generator is rt_random_plan (rt_plans.h).
 */
#include "rt_plans.h"
#include "rt_test_util.h"

static void test_random_valid(void) {
  uint32_t swaps = 0, reused = 0;
  for (uint64_t seed = 1; seed <= 40; seed++) {
    pb_t *b = pb_new();
    rt_gen_t g;
    rt_random_plan(b, &g, seed, 0);
    sfcrt_plan_t *plan = rt_load(b);
    if (!plan) {
      fprintf(stderr, "  seed %llu: invalid plan\n", (unsigned long long)seed);
      pb_free(b);
      continue;
    }
    const sfc_plan_view_t *v = sfcrt_plan_view(plan);
    swaps += v->swap_count;
    for (uint32_t i = 0; i < g.res_count; i++)
      reused += g.res[i].prev >= 0 && g.res[g.res[i].prev].tensor != g.res[i].tensor;
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    /* a third each: random small delays, copies held back, steps held back */
    if (seed % 3 == 0)
      for (int q = 0; q < 3; q++)
        opt.host.delay_us[q] = (uint32_t)((seed * 7 + (uint64_t)q * 3) % 3) * 100;
    else
      opt.host.lag = seed % 3 == 1 ? SFCRT_HOST_LAG_COPIES : SFCRT_HOST_LAG_COMPUTE;
    sfc_error_t err;
    sfc_status_t st = rt_replay(v, &opt, 2, NULL, &err);
    CHECK_OK(st, err);
    if (st != SFC_OK)
      fprintf(stderr, "  seed %llu\n", (unsigned long long)seed);
    sfcrt_plan_destroy(plan);
    pb_free(b);
  }
  fprintf(stderr, "  40 plans, %u swaps, %u slots reused by another tensor\n", swaps, reused);
  CHECK(swaps > 40);
  CHECK(reused > 40);
}

static void test_random_missing_wait(void) {
  uint32_t tried = 0;
  for (uint64_t seed = 1; seed <= 40 && tried < 10; seed++) {
    pb_t *b = pb_new();
    rt_gen_t g;
    rt_random_plan(b, &g, seed, 1);
    if (g.victim_step == SFC_PLAN_NONE) {
      pb_free(b);
      continue;
    }
    tried++;
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    opt.host.lag = SFCRT_HOST_LAG_COPIES; /* the swap-in runs only when step k cannot */
    sfc_error_t err;
    CHECK_EQ_I64(rt_replay(pb_view(b), &opt, 1, NULL, &err), SFC_ERR_INTEGRITY);
    char want[64];
    snprintf(want, sizeof want, "step %u (op 'op%u')", g.victim_step, g.victim_step);
    CHECK_CONTAINS(err.message, want);
    pb_free(b);
  }
  fprintf(stderr, "  %u plans with one missing wait, each caught at its step\n", tried);
  CHECK(tried >= 5);
}

int main(void) {
  RUN(test_random_valid);
  RUN(test_random_missing_wait);
  return check_summary();
}
