/* bench_torch_match.c — prints the host-side cost of the PyTorch allocator's matcher
 * (replay and record, per alloc+free pair) on a synthetic training iteration, and the
 * cuda device's own per-step cost (interpreter + device_cuda.c, arena and VA mode) on
 * the fake driver, whose calls cost nothing — i.e. sfc's overhead without the GPU's.
 *
 *   build-rtcuda/tests/runtime_cuda/bench_torch_match [requests] [steps]
 *   (SFCRT_CUDA_LIBRARY=.../libsfc_fake_libcuda.so for the device part)
 *
 * The iteration: `requests` allocations; the first half (forward) stay live until the
 * backward half frees them in reverse order, each backward request freeing its own
 * block right away — the live set peaks at requests/2, the worst case for the sorted
 * live array. Packed by a bump allocator for the forward half plus one shared slot. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "plan_builder.h"
#include "sfcrt.h"
#include "torch_match.h"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void *fb_alloc(void *user, size_t size) {
  return malloc(size);
}
static void fb_free(void *user, void *ptr, size_t size) {
  free(ptr);
}

static void run_iteration(sfcrt_torch_match_t *m, size_t n, void **live) {
  size_t half = n / 2;
  for (size_t i = 0; i < half; i++)
    live[i] = sfcrt_torch_match_alloc(m, 512 * (1 + i % 7));
  for (size_t i = half; i < n; i++) {
    void *p = sfcrt_torch_match_alloc(m, 1024);
    sfcrt_torch_match_free(m, p, 1024);
    size_t j = n - 1 - i;
    sfcrt_torch_match_free(m, live[j], 512 * (1 + j % 7));
  }
}

int main(int argc, char **argv) {
  size_t n = argc > 1 ? (size_t)atol(argv[1]) : 20000;
  uint32_t steps = argc > 2 ? (uint32_t)atol(argv[2]) : 100000;
  void **live = calloc(n, sizeof(void *));
  /* the plan: forward block i at a bump offset, every backward block in one slot */
  sfcrt_torch_trace_t t = {.count = n, .has_offsets = true, .capacity_ = n};
  t.blocks = calloc(n, sizeof(*t.blocks));
  uint64_t off = 0, clock = 0, half = n / 2;
  for (size_t i = 0; i < half; i++) {
    t.blocks[i] = (sfcrt_torch_block_t){clock++, 0, 512 * (1 + i % 7), off};
    off += t.blocks[i].size;
  }
  for (size_t i = half; i < n; i++) {
    size_t j = n - 1 - i;
    t.blocks[i] = (sfcrt_torch_block_t){clock, clock + 1, 1024, off};
    clock += 2;
    t.blocks[j].upper = clock++;
  }
  sfc_error_t err;
  sfcrt_torch_match_t m;
  if (sfcrt_torch_match_init_replay(&m, &t, fb_alloc, fb_free, NULL, NULL, &err) != SFC_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 1;
  }
  char *arena = malloc(m.stats.arena_bytes);
  sfcrt_torch_match_set_arena(&m, arena);
  int iters = 20;
  double t0 = now_s();
  for (int it = 0; it < iters; it++) {
    sfcrt_torch_match_iteration_begin(&m, NULL);
    run_iteration(&m, n, live);
  }
  double dt = now_s() - t0;
  printf("replay: %zu requests/iteration (live set up to %zu): %.1f ns per alloc+free, "
         "%llu planned, %llu fallback\n",
         n, n / 2, 1e9 * dt / ((double)iters * (double)n), (unsigned long long)m.stats.planned,
         (unsigned long long)m.stats.fallback);
  sfcrt_torch_match_deinit(&m);
  free(arena);

  /* the iteration on plain malloc/free: warms the heap, and is the fallback's own cost */
  double base = 0;
  for (int rep = 0; rep < 2; rep++) {
    t0 = now_s();
    for (size_t i = 0; i < n / 2; i++)
      live[i] = malloc(512 * (1 + i % 7));
    for (size_t i = n / 2; i < n; i++) {
      free(malloc(1024));
      free(live[n - 1 - i]);
    }
    base = now_s() - t0;
  }
  if (sfcrt_torch_match_init_record(&m, n, fb_alloc, fb_free, NULL, NULL, &err) != SFC_OK)
    return 1;
  sfcrt_torch_match_iteration_begin(&m, NULL);
  t0 = now_s();
  run_iteration(&m, n, live);
  dt = now_s() - t0;
  sfcrt_torch_match_deinit(&m);
  printf("record: %.1f ns per alloc+free (of which malloc/free %.1f ns)\n", 1e9 * dt / (double)n,
         1e9 * base / (double)n);
  free(live);

  /* the cuda device on whatever driver is loaded (the fake one: sfc's own overhead) */
  for (int mode = 0; mode < 2; mode++) {
    /* VA mode reserves one range per tensor: the fake driver holds 4096 at most */
    uint32_t nsteps = mode && steps > 2000 ? 2000 : steps;
    pb_t *b = pb_new();
    pb_simple_chain(b, nsteps);
    void *data;
    size_t bytes;
    pb_write(b, &data, &bytes);
    pb_free(b);
    sfcrt_plan_t *plan = NULL;
    if (sfcrt_plan_load_buffer(data, bytes, NULL, &plan, &err) != SFC_OK) {
      fprintf(stderr, "%s\n", err.message);
      return 1;
    }
    free(data);
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = "cuda";
    opt.cuda.mode = mode ? SFCRT_CUDA_VA : SFCRT_CUDA_ARENA;
    sfcrt_session_t *s = NULL;
    if (sfcrt_session_create(plan, &opt, &s, &err) != SFC_OK) {
      printf("cuda device: %s\n", err.message);
      sfcrt_plan_destroy(plan);
      return 0;
    }
    t0 = now_s();
    for (int it = 0; it < 3; it++) {
      sfcrt_iteration_begin(s, &err);
      const sfcrt_step_t *st;
      while (sfcrt_step_next(s, &st, &err) == SFC_OK && st)
        sfcrt_step_done(s, &err);
      sfcrt_iteration_end(s, &err);
    }
    dt = now_s() - t0;
    printf("cuda device (%s mode): %u steps: %.1f ns/step\n", mode ? "VA" : "arena", nsteps,
           1e9 * dt / (3.0 * nsteps));
    sfcrt_session_destroy(s);
    sfcrt_plan_destroy(plan);
  }
  return 0;
}
