/* bench_cuda.c — the numbers tools/gpu-check reports, on whatever driver the loader
 * finds (the real one; SFCRT_CUDA_LIBRARY=libsfc_fake_libcuda.so for a smoke run).
 * Each command prints one JSON object on stdout; exit 0 ok, 1 failure (the JSON then
 * has "error"), 77 no driver or device.
 *
 *   bench_cuda bandwidth [MIB [REPS]]   pinned H2D, D2H and both at once (GB/s)
 *   bench_cuda replay PLAN arena|va|paged [ITERATIONS]
 *                                       session creation time, replay us per step and
 *                                       per iteration (nothing launched: the runtime's
 *                                       own cost, copies and synchronisation included),
 *                                       swap bytes per iteration
 *   bench_cuda sessions PLAN            two sessions alive at once (arena and VA), used
 *                                       in turn, destroyed, then a third
 *   bench_cuda abi                      sizeof/offsetof of the public structs, so a
 *                                       ctypes mirror can check itself
 *
 * Timing: wall clock (CLOCK_MONOTONIC) around work that ends in a synchronisation, so
 * the numbers are what the host sees. VA and paged mode's map/unmap cost per step is
 * the difference of their replay number and arena mode's for one plan (gpu-check
 * prints it).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda_loader.h"
#include "sfcrt.h"

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static sfcrt_cuda_driver_t drv;
static CUcontext ctx;

static int fail(const char *what, const char *msg) {
  printf("{\"command\": \"%s\", \"error\": \"", what);
  for (const char *c = msg; *c; c++)
    putchar(*c == '"' || *c == '\\' ? '\'' : *c);
  printf("\"}\n");
  return 1;
}

static int cu(CUresult r, const char *call, const char *what) {
  sfc_error_t err;
  if (sfcrt_cuda_check(&drv, r, call, &err) == SFC_OK)
    return 0;
  fail(what, err.message);
  return 1;
}

static int bandwidth(size_t mib, int reps) {
  size_t bytes = mib << 20;
  void *host = NULL, *host2 = NULL;
  CUdeviceptr dev = 0, dev2 = 0;
  CUstream s1 = NULL, s2 = NULL;
  int rc = cu(drv.fn.cuMemHostAlloc(&host, bytes, 0), "cuMemHostAlloc", "bandwidth") ||
           cu(drv.fn.cuMemHostAlloc(&host2, bytes, 0), "cuMemHostAlloc", "bandwidth") ||
           cu(drv.fn.cuMemAlloc(&dev, bytes), "cuMemAlloc", "bandwidth") ||
           cu(drv.fn.cuMemAlloc(&dev2, bytes), "cuMemAlloc", "bandwidth") ||
           cu(drv.fn.cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "bandwidth") ||
           cu(drv.fn.cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING), "cuStreamCreate", "bandwidth");
  double h2d = 0, d2h = 0, duplex = 0;
  if (!rc) {
    memset(host, 1, bytes);
    memset(host2, 2, bytes);
    /* warm-up: first touches and lazy driver setup out of the timings */
    drv.fn.cuMemcpyHtoDAsync(dev, host, bytes, s1);
    drv.fn.cuMemcpyDtoHAsync(host2, dev2, bytes, s2);
    drv.fn.cuStreamSynchronize(s1);
    drv.fn.cuStreamSynchronize(s2);
    double t0 = now_s();
    for (int i = 0; i < reps; i++)
      drv.fn.cuMemcpyHtoDAsync(dev, host, bytes, s1);
    rc = cu(drv.fn.cuStreamSynchronize(s1), "cuStreamSynchronize", "bandwidth");
    h2d = (double)bytes * reps / (now_s() - t0) / 1e9;
    t0 = now_s();
    for (int i = 0; i < reps; i++)
      drv.fn.cuMemcpyDtoHAsync(host2, dev2, bytes, s2);
    rc = rc || cu(drv.fn.cuStreamSynchronize(s2), "cuStreamSynchronize", "bandwidth");
    d2h = (double)bytes * reps / (now_s() - t0) / 1e9;
    t0 = now_s();
    for (int i = 0; i < reps; i++) {
      drv.fn.cuMemcpyHtoDAsync(dev, host, bytes, s1);
      drv.fn.cuMemcpyDtoHAsync(host2, dev2, bytes, s2);
    }
    rc = rc || cu(drv.fn.cuStreamSynchronize(s1), "cuStreamSynchronize", "bandwidth") ||
         cu(drv.fn.cuStreamSynchronize(s2), "cuStreamSynchronize", "bandwidth");
    duplex = 2.0 * (double)bytes * reps / (now_s() - t0) / 1e9;
  }
  if (!rc)
    printf("{\"command\": \"bandwidth\", \"bytes\": %zu, \"reps\": %d, \"h2d_GBps\": %.3f, "
           "\"d2h_GBps\": %.3f, \"duplex_GBps\": %.3f}\n",
           bytes, reps, h2d, d2h, duplex);
  if (s1)
    drv.fn.cuStreamDestroy(s1);
  if (s2)
    drv.fn.cuStreamDestroy(s2);
  if (dev)
    drv.fn.cuMemFree(dev);
  if (dev2)
    drv.fn.cuMemFree(dev2);
  if (host)
    drv.fn.cuMemFreeHost(host);
  if (host2)
    drv.fn.cuMemFreeHost(host2);
  return rc;
}

/* External tensors bound to device memory the bench owns (freed by unbind). */
static int bind(sfcrt_session_t *s, const sfc_plan_view_t *v, CUdeviceptr *ext, sfc_error_t *err) {
  for (uint32_t t = 0; t < v->tensor_count; t++)
    if ((v->tensors[t].flags & SFC_TENSOR_EXTERNAL) && !(v->tensors[t].flags & SFC_TENSOR_UNUSED)) {
      if (!ext[t] &&
          sfcrt_cuda_check(
              &drv, drv.fn.cuMemAlloc(&ext[t], v->tensors[t].bytes ? v->tensors[t].bytes : 1),
              "cuMemAlloc", err) != SFC_OK)
        return 1;
      if (sfcrt_session_bind(s, t, (void *)(uintptr_t)ext[t], v->tensors[t].bytes, err) != SFC_OK)
        return 1;
    }
  return 0;
}

static void unbind(const sfc_plan_view_t *v, CUdeviceptr *ext) {
  for (uint32_t t = 0; t < v->tensor_count; t++)
    if (ext[t])
      drv.fn.cuMemFree(ext[t]);
}

static int replay(const char *path, const char *mode, long iterations) {
  sfc_error_t err;
  sfcrt_plan_t *plan = NULL;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return fail("replay", err.message);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  CUdeviceptr *ext = calloc(v->tensor_count ? v->tensor_count : 1, sizeof(*ext));
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = strcmp(mode, "va") == 0      ? SFCRT_CUDA_VA
                  : strcmp(mode, "paged") == 0 ? SFCRT_CUDA_PAGED
                                               : SFCRT_CUDA_ARENA;
  sfcrt_session_t *s = NULL;
  double t0 = now_s();
  int rc = !ext || sfcrt_session_create(plan, &opt, &s, &err) != SFC_OK;
  double create_ms = (now_s() - t0) * 1e3;
  rc = rc || bind(s, v, ext, &err) || sfcrt_session_run(s, 1, &err) != SFC_OK; /* warm-up */
  double run_s = 0;
  sfcrt_stats_t st0 = {0}; /* after the warm-up: the timed iterations' maps are the rest */
  if (!rc) {
    sfcrt_session_stats(s, &st0);
    t0 = now_s();
    rc = sfcrt_session_run(s, (uint64_t)iterations, &err) != SFC_OK;
    run_s = now_s() - t0;
  }
  if (rc) {
    fail("replay", ext ? err.message : "out of memory");
  } else {
    sfcrt_stats_t st;
    sfcrt_session_stats(s, &st);
    double steps = (double)v->step_count * (double)iterations;
    printf("{\"command\": \"replay\", \"plan\": \"%s\", \"mode\": \"%s\", \"steps\": %u, "
           "\"swaps\": %u, \"iterations\": %ld, \"create_ms\": %.3f, \"us_per_step\": %.4f, "
           "\"us_per_iteration\": %.3f, \"device_bytes\": %llu, \"swap_bytes_per_iteration\": "
           "%llu, \"maps_per_iteration\": %.1f, \"unmaps_per_iteration\": %.1f, "
           "\"unmap_waits_per_iteration\": %.1f}\n",
           path, mode, v->step_count, v->swap_count, iterations, create_ms,
           steps > 0 ? run_s * 1e6 / steps : 0.0, run_s * 1e6 / (double)iterations,
           (unsigned long long)st.arena_bytes,
           (unsigned long long)((st.bytes_swapped_in + st.bytes_swapped_out) /
                                (st.iterations ? st.iterations : 1)),
           (double)(st.chunks_mapped - st0.chunks_mapped) / (double)iterations,
           (double)(st.chunks_unmapped - st0.chunks_unmapped) / (double)iterations,
           (double)(st.unmap_waits - st0.unmap_waits) / (double)iterations);
  }
  sfcrt_session_destroy(s);
  if (ext)
    unbind(v, ext);
  free(ext);
  sfcrt_plan_destroy(plan);
  return rc;
}

static int sessions(const char *path) {
  sfc_error_t err;
  sfcrt_plan_t *plan = NULL;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return fail("sessions", err.message);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  CUdeviceptr *ext = calloc(v->tensor_count ? v->tensor_count : 1, sizeof(*ext));
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  sfcrt_session_t *a = NULL, *b = NULL, *c = NULL;
  int rc = !ext || sfcrt_session_create(plan, &opt, &a, &err) != SFC_OK;
  opt.cuda.mode = SFCRT_CUDA_VA;
  rc = rc || sfcrt_session_create(plan, &opt, &b, &err) != SFC_OK;
  rc = rc || bind(a, v, ext, &err) || bind(b, v, ext, &err);
  for (int i = 0; !rc && i < 3; i++)
    rc = sfcrt_session_run(a, 1, &err) != SFC_OK || sfcrt_session_run(b, 1, &err) != SFC_OK;
  sfcrt_session_destroy(a);
  rc = rc || sfcrt_session_run(b, 1, &err) != SFC_OK;
  sfcrt_session_destroy(b);
  opt.cuda.mode = SFCRT_CUDA_ARENA;
  rc = rc || sfcrt_session_create(plan, &opt, &c, &err) != SFC_OK || bind(c, v, ext, &err) ||
       sfcrt_session_run(c, 2, &err) != SFC_OK;
  sfcrt_session_destroy(c);
  if (rc)
    fail("sessions", ext ? err.message : "out of memory");
  else
    printf("{\"command\": \"sessions\", \"plan\": \"%s\", \"ok\": true}\n", path);
  if (ext)
    unbind(v, ext);
  free(ext);
  sfcrt_plan_destroy(plan);
  return rc;
}

static int abi(void) {
  printf("{\"command\": \"abi\", \"sfcrt_options_t\": %zu, \"cuda\": %zu, \"cuda.stream\": %zu, "
         "\"cuda.has_stream\": %zu, \"cuda.blocking_sync\": %zu, \"sfcrt_step_t\": %zu, "
         "\"step.stream\": %zu, \"sfc_error_t\": %zu, \"sfcrt_stats_t\": %zu, "
         "\"stats.step_count\": %zu, \"stats.swap_count\": %zu}\n",
         sizeof(sfcrt_options_t), offsetof(sfcrt_options_t, cuda),
         offsetof(sfcrt_options_t, cuda.stream), offsetof(sfcrt_options_t, cuda.has_stream),
         offsetof(sfcrt_options_t, cuda.blocking_sync), sizeof(sfcrt_step_t),
         offsetof(sfcrt_step_t, stream), sizeof(sfc_error_t), sizeof(sfcrt_stats_t),
         offsetof(sfcrt_stats_t, step_count), offsetof(sfcrt_stats_t, swap_count));
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr,
            "usage: %s bandwidth [MIB [REPS]] | replay PLAN arena|va|paged [ITERATIONS] | "
            "sessions PLAN | abi\n",
            argv[0]);
    return 2;
  }
  if (strcmp(argv[1], "abi") == 0)
    return abi();
  sfc_error_t err;
  if (sfcrt_cuda_driver_load(&drv, &err) != SFC_OK) {
    fail(argv[1], err.message);
    return 77;
  }
  int count = 0;
  if (drv.fn.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    fail(argv[1], "no CUDA device");
    sfcrt_cuda_driver_unload(&drv);
    return 77;
  }
  /* the primary context of device 0, current while the bench runs (the sessions push
   * the same context themselves) */
  int rc = cu(drv.fn.cuDevicePrimaryCtxRetain(&ctx, 0), "cuDevicePrimaryCtxRetain", argv[1]) ||
           cu(drv.fn.cuCtxPushCurrent(ctx), "cuCtxPushCurrent", argv[1]);
  if (rc) {
  } else if (strcmp(argv[1], "bandwidth") == 0) {
    rc = bandwidth(argc > 2 ? (size_t)atol(argv[2]) : 256, argc > 3 ? atoi(argv[3]) : 10);
  } else if (strcmp(argv[1], "replay") == 0 && argc >= 4) {
    rc = replay(argv[2], argv[3], argc > 4 ? atol(argv[4]) : 20);
  } else if (strcmp(argv[1], "sessions") == 0 && argc >= 3) {
    rc = sessions(argv[2]);
  } else {
    fprintf(stderr, "%s: unknown command or missing argument\n", argv[0]);
    rc = 2;
  }
  CUcontext popped;
  drv.fn.cuCtxPopCurrent(&popped);
  drv.fn.cuDevicePrimaryCtxRelease(0);
  sfcrt_cuda_driver_unload(&drv);
  return rc;
}
