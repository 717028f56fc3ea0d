/* test_torch_allocator.c — the exported entry points of sfcrt_torch.h, as PyTorch
 * calls them: the host backend (record file, replay arena, configuration errors, the
 * environment), the cuda backend without a driver, and — where cuda.h was found — the
 * cuda backend on the fake driver library (primary context retained and released,
 * arena and fallback through cuMemAlloc). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sfc/status.h"
#include "sfcrt_torch.h"
#include "torch_trace.h"

static char dir_[256];

static const char *tmp(const char *name) {
  static char buf[4][512];
  static int i;
  i = (i + 1) % 4;
  snprintf(buf[i], sizeof(buf[i]), "%s/sfc_torch_%d_%s", dir_, (int)getpid(), name);
  return buf[i];
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  fputs(text, f);
  fclose(f);
}

static void test_record_host(void) {
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  const char *trace = tmp("rec.csv");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_RECORD, trace), SFC_OK);
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_RECORD, trace), SFC_ERR_STATE);
  CHECK(strstr(sfcrt_torch_last_error(), "already configured") != NULL);
  CHECK_EQ_U64(sfcrt_torch_flush(), SFC_ERR_STATE); /* nothing recorded yet */
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  void *a = sfcrt_torch_alloc(1000, 0, NULL);
  void *other = sfcrt_torch_alloc(50, 1, NULL); /* device 1: not part of the profile */
  void *b = sfcrt_torch_alloc(3000, 0, NULL);
  CHECK(a && b && ((uintptr_t)a % 512) == 0 && ((uintptr_t)b % 512) == 0);
  sfcrt_torch_free(other, 50, 1, NULL); /* no tick of the clock either */
  memset(a, 1, 1000);
  memset(b, 2, 3000);
  sfcrt_torch_free(a, 1000, 0, NULL);
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK); /* writes the trace */
  sfcrt_torch_free(b, 3000, 0, NULL);
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.recorded, 2);
  CHECK_EQ_U64(s.requests, 3);
  CHECK_EQ_U64(s.fallback_outside, 1);
  CHECK_EQ_U64(s.fallback_bytes_live, 0);
  sfcrt_torch_trace_t t;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_trace_read_file(trace, false, NULL, &t, &err), SFC_OK);
  CHECK_EQ_U64(t.count, 2);
  if (t.count == 2) { /* a [0,2) 1000, b [1,3) 3000: b still live at the end (clock 3) */
    CHECK(t.blocks[0].lower == 0 && t.blocks[0].upper == 2 && t.blocks[0].size == 1000);
    CHECK(t.blocks[1].lower == 1 && t.blocks[1].upper == 3 && t.blocks[1].size == 3000);
  }
  sfcrt_torch_trace_free(&t, NULL);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  remove(trace);
}

static void test_replay_host(void) {
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  const char *packed = tmp("packed.csv");
  write_text(packed, "id,lower,upper,size,offset\n0,0,2,1000,0\n1,1,3,3000,1024\n");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_OK);
  for (int it = 0; it < 2; it++) {
    CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
    char *a = sfcrt_torch_alloc(1000, 0, NULL);
    char *b = sfcrt_torch_alloc(3000, 0, NULL);
    CHECK(a && b && b - a == 1024);
    memset(a, 1, 1000);
    memset(b, 2, 3000);
    void *c = sfcrt_torch_alloc(10, 0, NULL); /* extra */
    void *d = sfcrt_torch_alloc(10, 1, NULL); /* another device: never the arena */
    sfcrt_torch_free(a, 1000, 0, NULL);
    sfcrt_torch_free(b, 3000, 0, NULL);
    sfcrt_torch_free(c, 10, 0, NULL);
    sfcrt_torch_free(d, 10, 1, NULL);
  }
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.arena_bytes, 4024);
  CHECK_EQ_U64(s.planned, 4);
  CHECK_EQ_U64(s.fallback_extra, 2);
  CHECK_EQ_U64(s.fallback_outside, 2);
  CHECK_EQ_U64(s.fallback_frees, 4);
  CHECK_EQ_U64(s.fallback_bytes_live, 0);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);

  /* offsets not aligned for PyTorch are refused with the fix */
  write_text(packed, "id,lower,upper,size,offset\n0,0,2,1000,0\n1,1,3,3000,1000\n");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_ERR_BAD_INPUT);
  CHECK(strstr(sfcrt_torch_last_error(), "--alignment 512") != NULL);
  /* a record trace (no offsets) is refused */
  write_text(packed, "id,lower,upper,size\n0,0,2,1000\n");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_ERR_BAD_INPUT);
  CHECK(strstr(sfcrt_torch_last_error(), "sfc pack") != NULL);
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, tmp("missing.csv")), SFC_ERR_IO);
  CHECK_EQ_U64(sfcrt_torch_configure(7, packed), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_RECORD, NULL), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  remove(packed);
}

static void test_environment(void) {
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  const char *trace = tmp("env.csv");
  setenv("SFCRT_TORCH_MODE", "record", 1);
  setenv("SFCRT_TORCH_TRACE", trace, 1);
  void *early = sfcrt_torch_alloc(64, 0, NULL); /* configures from the environment */
  CHECK(early != NULL);
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_ERR_STATE);
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  void *a = sfcrt_torch_alloc(64, 0, NULL);
  sfcrt_torch_free(a, 64, 0, NULL);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK); /* writes the pending trace */
  sfcrt_torch_trace_t t;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_trace_read_file(trace, false, NULL, &t, &err), SFC_OK);
  CHECK_EQ_U64(t.count, 1);
  sfcrt_torch_trace_free(&t, NULL);
  free(early); /* host backend memory; the allocator was shut down */
  remove(trace);

  setenv("SFCRT_TORCH_MODE", "bogus", 1);
  CHECK(sfcrt_torch_alloc(64, 0, NULL) == NULL);
  CHECK(strstr(sfcrt_torch_last_error(), "SFCRT_TORCH_MODE=bogus") != NULL);
  setenv("SFCRT_TORCH_MODE", "record", 1);
  setenv("SFCRT_TORCH_MAX_REQUESTS", "12x", 1);
  CHECK(sfcrt_torch_alloc(64, 0, NULL) == NULL);
  CHECK(strstr(sfcrt_torch_last_error(), "SFCRT_TORCH_MAX_REQUESTS") != NULL);
  unsetenv("SFCRT_TORCH_MAX_REQUESTS");
  setenv("SFCRT_TORCH_BACKEND", "tpu", 1);
  CHECK(sfcrt_torch_alloc(64, 0, NULL) == NULL);
  CHECK(strstr(sfcrt_torch_last_error(), "SFCRT_TORCH_BACKEND=tpu") != NULL);
  unsetenv("SFCRT_TORCH_MODE");
  unsetenv("SFCRT_TORCH_TRACE");
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
}

/* Issue 13, item 8: sfcrt_torch_last_error hands each thread its own copy: a failure
 * on another thread does not change the string a caller is reading. */
static void *fail_on_thread(void *arg) {
  (void)arg;
  sfcrt_torch_configure(9, NULL); /* "mode 9 is not ..." */
  sfcrt_torch_last_error();
  return NULL;
}

static void test_last_error_snapshot(void) {
  CHECK_EQ_U64(sfcrt_torch_configure(7, NULL), SFC_ERR_INVALID_ARGUMENT);
  const char *mine = sfcrt_torch_last_error();
  CHECK(strstr(mine, "mode 7") != NULL);
  pthread_t t;
  CHECK_EQ_U64(pthread_create(&t, NULL, fail_on_thread, NULL), 0);
  pthread_join(t, NULL);
  CHECK(strstr(mine, "mode 7") != NULL); /* unchanged until this thread asks again */
  CHECK(strstr(sfcrt_torch_last_error(), "mode 9") != NULL);
  /* and the device index is checked, not atoi'ed */
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  setenv("SFCRT_TORCH_DEVICE", "one", 1);
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_ERR_INVALID_ARGUMENT);
  CHECK(strstr(sfcrt_torch_last_error(), "SFCRT_TORCH_DEVICE=one") != NULL);
  unsetenv("SFCRT_TORCH_DEVICE");
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
}

/* The cuda backend where no driver exists: NULL and a clear reason, never a crash. */
static void test_cuda_without_driver(void) {
  void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (probe) {
    dlclose(probe);
    printf("a CUDA driver is installed: skipping the no-driver case\n");
    return;
  }
  unsetenv("SFCRT_TORCH_BACKEND");
  unsetenv("SFCRT_CUDA_LIBRARY");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_OK);
  CHECK(sfcrt_torch_alloc(4096, 0, NULL) == NULL);
  const char *e = sfcrt_torch_last_error();
#if defined(SFC_FAKE_LIBCUDA)
  CHECK(strstr(e, "CUDA driver not found") != NULL);
#else
  CHECK(strstr(e, "without cuda.h") != NULL);
#endif
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.failed, 1);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
}

#if defined(SFC_FAKE_LIBCUDA)
#include "cuda_loader.h"
#include "fake_cuda.h"
static void test_cuda_fake_driver(void) {
  void *lib = dlopen(SFC_FAKE_LIBCUDA, RTLD_NOW | RTLD_LOCAL);
  CHECK(lib != NULL);
  if (!lib)
    return;
  fake_cuda_state_t *(*state)(void) = NULL;
  void *sym = dlsym(lib, "fake_cuda_state");
  memcpy(&state, &sym, sizeof(sym));
  CHECK(state != NULL);
  if (!state)
    return;
  unsetenv("SFCRT_TORCH_BACKEND");
  setenv("SFCRT_CUDA_LIBRARY", SFC_FAKE_LIBCUDA, 1);
  const char *packed = tmp("cpacked.csv");
  write_text(packed, "id,lower,upper,size,offset\n0,0,2,1000,0\n1,1,3,3000,1024\n");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_OK);
  CHECK_EQ_U64(state()->allocs_live, 1); /* the arena */
  CHECK_EQ_U64(state()->ctx_retained, 1);
  CHECK_EQ_U64(state()->ctx_pushed, 0); /* every push was popped */
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  char *a = sfcrt_torch_alloc(1000, 0, NULL);
  char *b = sfcrt_torch_alloc(3000, 0, NULL);
  char *c = sfcrt_torch_alloc(5000, 0, NULL); /* extra: cuMemAlloc */
  CHECK(a && b && c && b - a == 1024);
  CHECK_EQ_U64(state()->allocs_live, 2);
  sfcrt_torch_free(c, 5000, 0, NULL);
  sfcrt_torch_free(a, 1000, 0, NULL);
  sfcrt_torch_free(b, 3000, 0, NULL);
  CHECK_EQ_U64(state()->allocs_live, 1);
  CHECK_EQ_U64(state()->ctx_pushed, 0);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  CHECK_EQ_U64(state()->allocs_live, 0);
  CHECK_EQ_U64(state()->ctx_retained, 0);
  CHECK_EQ_U64(state()->violations, 0);
  unsetenv("SFCRT_CUDA_LIBRARY");
  remove(packed);
  dlclose(lib);
}

/* The fake driver as the allocator sees it, for the stream tests: its table (through
 * the real loader), the state, its capture helpers, and two streams A and B made in
 * device 0's primary context, which stays pushed on this thread. */
typedef struct fake_env {
  void *lib;
  sfcrt_cuda_driver_t drv;
  fake_cuda_state_t *(*state)(void);
  CUresult (*begin_capture)(CUstream);
  CUresult (*end_capture)(CUstream);
  CUcontext ctx;
  CUstream a, b;
} fake_env_t;

static int fake_env_open(fake_env_t *e) {
  memset(e, 0, sizeof(*e));
  const char *names[] = {SFC_FAKE_LIBCUDA};
  sfc_error_t err;
  if (sfcrt_cuda_driver_load_names(names, 1, &e->drv, &err) != SFC_OK) {
    fprintf(stderr, "%s\n", err.message);
    return 0;
  }
  void *sym[3] = {dlsym(e->drv.library, "fake_cuda_state"),
                  dlsym(e->drv.library, "fake_cuda_begin_capture"),
                  dlsym(e->drv.library, "fake_cuda_end_capture")};
  if (!sym[0] || !sym[1] || !sym[2])
    return 0;
  memcpy(&e->state, &sym[0], sizeof(sym[0]));
  memcpy(&e->begin_capture, &sym[1], sizeof(sym[1]));
  memcpy(&e->end_capture, &sym[2], sizeof(sym[2]));
  e->drv.fn.cuDevicePrimaryCtxRetain(&e->ctx, 0);
  e->drv.fn.cuCtxPushCurrent(e->ctx);
  e->drv.fn.cuStreamCreate(&e->a, CU_STREAM_NON_BLOCKING);
  e->drv.fn.cuStreamCreate(&e->b, CU_STREAM_NON_BLOCKING);
  unsetenv("SFCRT_TORCH_BACKEND");
  setenv("SFCRT_CUDA_LIBRARY", SFC_FAKE_LIBCUDA, 1);
  return 1;
}

static void fake_env_close(fake_env_t *e) {
  CUcontext popped;
  e->drv.fn.cuStreamDestroy(e->a);
  e->drv.fn.cuStreamDestroy(e->b);
  e->drv.fn.cuCtxPopCurrent(&popped);
  e->drv.fn.cuDevicePrimaryCtxRelease(0);
  sfcrt_cuda_driver_unload(&e->drv);
  unsetenv("SFCRT_CUDA_LIBRARY");
}

/* The first word of device memory p, read on stream q after everything queued. */
static uint32_t read_word(fake_env_t *e, void *p) {
  uint32_t w = 0;
  e->drv.fn.cuCtxSynchronize();
  e->drv.fn.cuMemcpyDtoHAsync(&w, (CUdeviceptr)(uintptr_t)p, 4, e->b);
  e->drv.fn.cuStreamSynchronize(e->b);
  return w;
}

/* Issue 13, item 4: planned memory freed on stream A and handed to a request on stream
 * B: B's work must come after A's (the fake runs queued work lazily, so B's kernel runs
 * first unless B waits for A, and A's late kernel then overwrites B's tensor). */
static void test_cuda_cross_stream(void) {
  fake_env_t e;
  CHECK(fake_env_open(&e));
  if (!e.state)
    return;
  long violations = e.state()->violations;
  const char *packed = tmp("xstream.csv");
  /* requests 0 and 1 share offset 0 in turn, in both iterations */
  write_text(packed, "id,lower,upper,size,offset\n0,0,1,1024,0\n1,2,3,1024,0\n");
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_OK);
  for (int it = 0; it < 2; it++) {
    /* iteration 0: request 0 on A, 1 on B; iteration 1 swaps them (then the free of the
     * block on B was recorded as an event: a second stream had been seen) */
    CUstream first = it ? e.b : e.a, second = it ? e.a : e.b;
    uint32_t v1 = 0xA0000000u + (uint32_t)it, v2 = 0xB0000000u + (uint32_t)it;
    CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
    void *p0 = sfcrt_torch_alloc(1024, 0, first);
    e.drv.fn.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p0, v1, 256, first); /* a kernel */
    sfcrt_torch_free(p0, 1024, 0, first);
    void *p1 = sfcrt_torch_alloc(1024, 0, second);
    CHECK(p1 == p0 && p1 != NULL);
    e.drv.fn.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p1, v2, 256, second);
    e.drv.fn.cuStreamSynchronize(second); /* the second tensor's work first... */
    uint32_t w = read_word(&e, p1);       /* ... then everything */
    if (w != v2)
      fprintf(stderr, "iteration %d: the tensor on the second stream holds 0x%08x, not 0x%08x\n",
              it, w, v2);
    CHECK_EQ_U64(w, v2);
    sfcrt_torch_free(p1, 1024, 0, second);
  }
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.planned, 4);
  /* request 1 waits for request 0's free in each iteration; request 0 of iteration 1
   * follows request 1 on its own stream: no wait. Iteration 0 orders through an event
   * recorded at the reuse (one stream seen at the free), iteration 1 through the event
   * recorded at the free. */
  CHECK_EQ_U64(s.stream_waits, 2);
  CHECK_EQ_U64(s.fallback, 0);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  CHECK_EQ_U64(e.state()->violations, violations);
  CHECK_EQ_U64(e.state()->allocs_live, 0);
  CHECK_EQ_U64(e.state()->events_live, 0);
  fake_env_close(&e);
  remove(packed);
}

/* Issue 13, item 8: fallback memory is freed only after the kernels queued on its
 * stream have run (cuMemFree does not promise to wait). Stream 0 is the legacy stream. */
static void test_cuda_fallback_free(void) {
  fake_env_t e;
  CHECK(fake_env_open(&e));
  if (!e.state)
    return;
  long violations = e.state()->violations;
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_OK);
  for (int legacy = 0; legacy < 2; legacy++) {
    CUstream q = legacy ? NULL : e.a;
    void *p = sfcrt_torch_alloc(4096, 0, q);
    CHECK(p != NULL);
    e.drv.fn.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p, 7, 1024, q); /* still queued */
    sfcrt_torch_free(p, 4096, 0, q);
    if (e.state()->violations != violations)
      fprintf(stderr, "fallback free: %s\n", e.state()->violation);
    CHECK_EQ_U64(e.state()->violations, violations);
  }
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  CHECK_EQ_U64(e.state()->allocs_live, 0);
  fake_env_close(&e);
}

/* Issue 13, item 8: a failing cuCtxPopCurrent is reported, not ignored. */
static void test_cuda_pop_checked(void) {
  fake_env_t e;
  CHECK(fake_env_open(&e));
  if (!e.state)
    return;
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_OK);
  long pushed = e.state()->ctx_pushed;
  e.state()->fail_name = "cuCtxPopCurrent";
  e.state()->fail_nth = 1;
  e.state()->fail_seen_ = 0;
  e.state()->fail_result = CUDA_ERROR_INVALID_CONTEXT;
  void *p = NULL;
  int st = sfcrt_torch_alloc_status(4096, 0, e.a, &p);
  e.state()->fail_name = NULL;
  CHECK(p == NULL);
  CHECK_EQ_U64(st, SFC_ERR_DEVICE);
  CHECK(strstr(sfcrt_torch_last_error(), "cuCtxPopCurrent") != NULL);
  CUcontext popped;
  while (e.state()->ctx_pushed > pushed) /* what the failed pop left behind */
    e.drv.fn.cuCtxPopCurrent(&popped);
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.failed, 1);
  CHECK_EQ_U64(s.capture_refused, 0);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  CHECK_EQ_U64(e.state()->allocs_live, 0);
  fake_env_close(&e);
}

/* Issue 13, item 6: during CUDA graph capture of the request's stream the allocator
 * calls nothing capture forbids: requests fail with a clear reason, frees are held. */
static void test_cuda_capture(void) {
  fake_env_t e;
  CHECK(fake_env_open(&e));
  if (!e.state)
    return;
  long violations = e.state()->violations;
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, NULL), SFC_OK);
  void *before = sfcrt_torch_alloc(4096, 0, e.a);
  CHECK(before != NULL);
  CHECK_EQ_U64(e.begin_capture(e.a), CUDA_SUCCESS);
  void *p = sfcrt_torch_alloc(4096, 0, e.a);
  CHECK(p == NULL);
  CHECK(strstr(sfcrt_torch_last_error(), "captured into a CUDA graph") != NULL);
  sfcrt_torch_free(before, 4096, 0, e.a); /* the graph may use it: kept */
  if (e.state()->violations != violations)
    fprintf(stderr, "capture: %s\n", e.state()->violation);
  CHECK_EQ_U64(e.state()->violations, violations);
  CHECK_EQ_U64(e.end_capture(e.a), CUDA_SUCCESS); /* not invalidated */
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.capture_refused, 1);
  CHECK_EQ_U64(s.failed, 1);
  CHECK_EQ_U64(s.capture_frees, 1);
  p = sfcrt_torch_alloc(4096, 0, e.a); /* after the capture: served again */
  CHECK(p != NULL);
  sfcrt_torch_free(p, 4096, 0, e.a);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  CHECK_EQ_U64(e.state()->allocs_live, 1); /* the held block: leaked to the process */
  e.drv.fn.cuMemFree((CUdeviceptr)(uintptr_t)before);
  fake_env_close(&e);
}
#endif

int main(void) {
  snprintf(dir_, sizeof(dir_), "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  RUN(test_record_host);
  RUN(test_replay_host);
  RUN(test_environment);
  RUN(test_cuda_without_driver);
  RUN(test_last_error_snapshot);
#if defined(SFC_FAKE_LIBCUDA)
  RUN(test_cuda_fake_driver);
  RUN(test_cuda_cross_stream);
  RUN(test_cuda_fallback_free);
  RUN(test_cuda_pop_checked);
  RUN(test_cuda_capture);
#endif
  return check_summary();
}
