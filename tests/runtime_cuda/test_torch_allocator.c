/* test_torch_allocator.c — the exported entry points of sfcrt_torch.h, as PyTorch
 * calls them: the host backend (record file, replay arena, configuration errors, the
 * environment), the cuda backend without a driver, and — where cuda.h was found — the
 * cuda backend on the fake driver library (primary context retained and released,
 * arena and fallback through cuMemAlloc). */
#include <dlfcn.h>
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
#endif

int main(void) {
  snprintf(dir_, sizeof(dir_), "%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
  RUN(test_record_host);
  RUN(test_replay_host);
  RUN(test_environment);
  RUN(test_cuda_without_driver);
#if defined(SFC_FAKE_LIBCUDA)
  RUN(test_cuda_fake_driver);
#endif
  return check_summary();
}
