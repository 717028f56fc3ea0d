/* bench_rt_replay.c — per-step replay overhead of the pull loop (not a test: prints
 * numbers). For each plan (default: a 100000-step chain from the plan builder; or the
 * plan files named on the command line) it replays whole iterations for at least
 * 0.5 s per device and prints ns per step and steps per second:
 *   sim            virtual clocks (the compiler's predictor; target >= 10^6 steps/s)
 *   host           real host arena, no integrity: the interpreter's own cost per step
 *                  (the framework launches nothing); copies only where the plan swaps
 *                  (the default run adds seeded random swap plans, rt_plans.h: copies
 *                  on worker threads, events between them and the caller's thread)
 *   host+integrity fill/check patterns of every tensor (cost grows with bytes)
 *
 *   cmake --build build --target bench_rt_replay
 *   build/tests/runtime/bench_rt_replay                  # builder chain
 *   build/tests/runtime/bench_rt_replay resnet50.plan    # a compiled plan
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "plan_builder.h"
#include "rt_plans.h"
#include "sfcrt.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static int bench(const char *label, const sfcrt_plan_t *plan, const char *device, int integrity,
                 double min_s) {
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = device;
  opt.host.integrity = integrity;
  sfcrt_session_t *s;
  sfc_error_t err;
  if (sfcrt_session_create(plan, &opt, &s, &err) != SFC_OK) {
    fprintf(stderr, "%s: %s\n", label, err.message);
    return 1;
  }
  long iterations = 0;
  double t0 = now_s(), t = t0;
  while (t - t0 < min_s || iterations < 2) {
    if (sfcrt_session_run(s, 1, &err) != SFC_OK)
      break;
    iterations++;
    t = now_s();
  }
  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  sfcrt_session_destroy(s);
  if (err.status != SFC_OK) {
    fprintf(stderr, "%s: %s\n", label, err.message);
    return 1;
  }
  double ns = (t - t0) * 1e9 / (double)stats.steps;
  printf("%-28s %-15s %8ld iterations %10llu steps %10.1f ns/step %14.0f steps/s\n", label,
         integrity ? "host+integrity" : device, iterations, (unsigned long long)stats.steps, ns,
         1e9 / ns);
  return 0;
}

static int bench_all(const char *label, const sfcrt_plan_t *plan) {
  int rc = bench(label, plan, "sim", 0, 0.5);
  rc |= bench(label, plan, "host", 0, 0.5);
  rc |= bench(label, plan, "host", 1, 0.5);
  return rc;
}

int main(int argc, char **argv) {
  int rc = 0;
  sfc_error_t err;
  if (argc < 2) {
    pb_t *b = pb_new();
    pb_simple_chain(b, 100000);
    void *data;
    size_t n;
    pb_write(b, &data, &n);
    sfcrt_plan_t *plan;
    if (sfcrt_plan_load_buffer(data, n, NULL, &plan, &err) != SFC_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    rc = bench_all("chain-100000 (256 B tensors)", plan);
    sfcrt_plan_destroy(plan);
    free(data);
    pb_free(b);
    for (uint64_t seed = 1; seed <= 3; seed++) {
      b = pb_new();
      rt_gen_t g;
      rt_random_plan(b, &g, seed, 0);
      pb_write(b, &data, &n);
      if (sfcrt_plan_load_buffer(data, n, NULL, &plan, &err) != SFC_OK) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
      }
      char label[64];
      snprintf(label, sizeof label, "random swaps s%llu (%u st, %u sw)", (unsigned long long)seed,
               sfcrt_plan_view(plan)->step_count, sfcrt_plan_view(plan)->swap_count);
      rc |= bench(label, plan, "sim", 0, 0.3);
      rc |= bench(label, plan, "host", 0, 0.3);
      sfcrt_plan_destroy(plan);
      free(data);
      pb_free(b);
    }
  }
  for (int i = 1; i < argc; i++) {
    sfcrt_plan_t *plan;
    if (sfcrt_plan_load_file(argv[i], NULL, &plan, &err) != SFC_OK) {
      fprintf(stderr, "%s\n", err.message);
      rc = 1;
      continue;
    }
    rc |= bench_all(argv[i], plan);
    sfcrt_plan_destroy(plan);
  }
  return rc;
}
