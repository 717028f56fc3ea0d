/* test_cuda_loader.c — the CUDA loader without a GPU: the real dlopen path with no
 * driver (or a library that is not a driver), resolution through a fake
 * cuGetProcAddress, the pinned version, init failures, the CUresult mapping, and the
 * whole load/unload path against the fake driver built as a shared library. */
#include <dlfcn.h>
#include <string.h>

#include "check.h"
#include "cuda_loader.h"
#include "fake_cuda.h"

static void test_missing_library(void) {
  const char *names[] = {"libsfc-no-such-driver.so.1", "libsfc-no-such-driver.so"};
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  sfc_error_clear(&err);
  CHECK_EQ_U64(sfcrt_cuda_driver_load_names(names, 2, &d, &err), SFC_ERR_UNAVAILABLE);
  CHECK(strstr(err.message, "CUDA driver not found") != NULL);
  CHECK(strstr(err.message, "libsfc-no-such-driver.so.1") != NULL);
  CHECK(strstr(err.message, "libsfc-no-such-driver.so:") != NULL);
  CHECK(d.library == NULL && d.fn.cuInit == NULL);
  CHECK(strchr(err.message, '\n') == NULL);
}

/* The real entry point: UNAVAILABLE (with the names tried) where no driver is
 * installed, as on the CI machines; success where one is. */
static void test_real_load(void) {
  void *probe = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  void *probe2 = probe ? NULL : dlopen("libcuda.so", RTLD_NOW | RTLD_LOCAL);
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  sfc_error_clear(&err);
  sfc_status_t st = sfcrt_cuda_driver_load(&d, &err);
  if (!probe && !probe2) {
    CHECK_EQ_U64(st, SFC_ERR_UNAVAILABLE);
    CHECK(strstr(err.message, "libcuda.so.1") != NULL);
    printf("no driver here, as expected: %s\n", err.message);
  } else {
    /* a driver is installed: either it works or it says why it cannot */
    CHECK(st == SFC_OK || st == SFC_ERR_UNAVAILABLE || st == SFC_ERR_DEVICE);
    if (st == SFC_OK)
      CHECK(d.driver_version >= SFCRT_CUDA_API_VERSION);
    sfcrt_cuda_driver_unload(&d);
  }
  if (probe)
    dlclose(probe);
  if (probe2)
    dlclose(probe2);
}

/* A library that exists but is not a CUDA driver. */
static void test_not_a_driver(void) {
  const char *names[] = {"libm.so.6"};
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_cuda_driver_load_names(names, 1, &d, &err), SFC_ERR_UNAVAILABLE);
  CHECK(strstr(err.message, "cuGetProcAddress_v2") != NULL);
  CHECK(d.library == NULL);
}

static void test_table_names(void) {
  /* base names, never the _v2 spelling cuda.h #defines: cuGetProcAddress picks the
   * variant from the version */
  size_t n = sfcrt_cuda_symbol_count();
  CHECK(n >= 30);
  int saw_alloc = 0, saw_map = 0;
  for (size_t i = 0; i < n; i++) {
    const char *s = sfcrt_cuda_symbol_name(i);
    CHECK(strncmp(s, "cu", 2) == 0);
    CHECK(strstr(s, "_v2") == NULL && strstr(s, "_ptsz") == NULL);
    saw_alloc += strcmp(s, "cuMemAlloc") == 0;
    saw_map += strcmp(s, "cuMemMap") == 0;
  }
  CHECK_EQ_U64(saw_alloc, 1);
  CHECK_EQ_U64(saw_map, 1);
  CHECK(sfcrt_cuda_symbol_name(n) == NULL);
}

static void test_resolve(void) {
  fake_cuda_reset();
  sfcrt_cuda_symbols_t fn;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_cuda_driver_resolve(fake_cuda_getproc, &fn, &err), SFC_OK);
  int v = 0;
  CHECK(fn.cuDriverGetVersion != NULL && fn.cuDriverGetVersion(&v) == CUDA_SUCCESS);
  CHECK_EQ_U64(v, 12080);
  CHECK(fn.cuMemSetAccess != NULL && fn.cuGetErrorName != NULL);

  /* a driver lacking one entry point: UNAVAILABLE naming it, table left empty */
  fake_cuda_state()->missing = "cuMemMap";
  CHECK_EQ_U64(sfcrt_cuda_driver_resolve(fake_cuda_getproc, &fn, &err), SFC_ERR_UNAVAILABLE);
  CHECK(strstr(err.message, "cuMemMap") != NULL);
  CHECK(strstr(err.message, "12000") != NULL);
  CHECK(fn.cuInit == NULL && fn.cuMemMap == NULL);
  fake_cuda_reset();
}

static void test_init(void) {
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  fake_cuda_reset();
  fake_cuda_driver(&d);
  d.driver_version = 0;
  CHECK_EQ_U64(sfcrt_cuda_driver_init(&d, &err), SFC_OK);
  CHECK_EQ_U64(d.driver_version, 12080);

  fake_cuda_state()->init_result = CUDA_ERROR_NO_DEVICE;
  CHECK_EQ_U64(sfcrt_cuda_driver_init(&d, &err), SFC_ERR_UNAVAILABLE);
  CHECK_EQ_U64(
      strcmp(err.message, "cuInit: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"), 0);
  fake_cuda_reset();
  fake_cuda_state()->driver_version = 11080;
  CHECK_EQ_U64(sfcrt_cuda_driver_init(&d, &err), SFC_ERR_UNAVAILABLE);
  CHECK(strstr(err.message, "11080") != NULL);
  sfcrt_cuda_driver_unload(&d); /* a fake (library NULL) unloads to zero */
  CHECK(d.fn.cuInit == NULL && d.library == NULL);
  fake_cuda_reset();
}

/* The one mapping, row by row (hand-written expectations). */
static void test_status_mapping(void) {
  static const struct {
    CUresult r;
    sfc_status_t want;
    const char *msg;
  } rows[] = {
      {CUDA_SUCCESS, SFC_OK, ""},
      {CUDA_ERROR_OUT_OF_MEMORY, SFC_ERR_OUT_OF_MEMORY,
       "cuMemAlloc: CUDA_ERROR_OUT_OF_MEMORY (out of memory)"},
      {CUDA_ERROR_NO_DEVICE, SFC_ERR_UNAVAILABLE,
       "cuMemAlloc: CUDA_ERROR_NO_DEVICE (no CUDA-capable device is detected)"},
      {CUDA_ERROR_NOT_SUPPORTED, SFC_ERR_UNAVAILABLE,
       "cuMemAlloc: CUDA_ERROR_NOT_SUPPORTED (operation not supported)"},
      {CUDA_ERROR_INVALID_VALUE, SFC_ERR_DEVICE,
       "cuMemAlloc: CUDA_ERROR_INVALID_VALUE (invalid argument)"},
      {CUDA_ERROR_LAUNCH_FAILED, SFC_ERR_DEVICE,
       "cuMemAlloc: CUDA_ERROR_LAUNCH_FAILED (unspecified launch failure)"},
      {(CUresult)77777, SFC_ERR_DEVICE, "cuMemAlloc: CUresult 77777"}, /* unknown to the driver */
  };
  sfcrt_cuda_driver_t d;
  fake_cuda_reset();
  fake_cuda_driver(&d);
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    sfc_error_t err;
    sfc_error_clear(&err);
    CHECK_EQ_U64(sfcrt_cuda_check(&d, rows[i].r, "cuMemAlloc", &err), rows[i].want);
    if (strcmp(err.message, rows[i].msg) != 0) {
      fprintf(stderr, "row %zu: got '%s'\n", i, err.message);
      CHECK(0);
    }
    if (rows[i].want != SFC_OK)
      CHECK_EQ_U64(err.status, rows[i].want);
  }
  /* no driver at all (e.g. the load itself failed): the number */
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_cuda_check(NULL, CUDA_ERROR_OUT_OF_MEMORY, "cuMemAlloc", &err),
               SFC_ERR_OUT_OF_MEMORY);
  CHECK_EQ_U64(strcmp(err.message, "cuMemAlloc: CUresult 2"), 0);
  CHECK_EQ_U64(sfcrt_cuda_check(NULL, CUDA_ERROR_OUT_OF_MEMORY, "x", NULL), SFC_ERR_OUT_OF_MEMORY);
}

/* dlopen + dlsym + resolve + init + unload against the fake driver library. */
static void test_fake_library(void) {
  const char *names[] = {"libsfc-no-such-driver.so.1", SFC_FAKE_LIBCUDA};
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_cuda_driver_load_names(names, 2, &d, &err), SFC_OK);
  CHECK(d.library != NULL);
  CHECK_EQ_U64(d.driver_version, 12080);
  /* like the real driver, the fake allocates in the current context */
  CUdeviceptr p = 0;
  CUcontext ctx = NULL, popped = NULL;
  CHECK_EQ_U64(d.fn.cuMemAlloc(&p, 4096), CUDA_ERROR_INVALID_CONTEXT);
  CHECK_EQ_U64(d.fn.cuDevicePrimaryCtxRetain(&ctx, 0), CUDA_SUCCESS);
  CHECK_EQ_U64(d.fn.cuCtxPushCurrent(ctx), CUDA_SUCCESS);
  CHECK_EQ_U64(sfcrt_cuda_check(&d, d.fn.cuMemAlloc(&p, 4096), "cuMemAlloc", &err), SFC_OK);
  CHECK(p != 0);
  CHECK_EQ_U64(sfcrt_cuda_check(&d, d.fn.cuMemFree(p), "cuMemFree", &err), SFC_OK);
  CHECK_EQ_U64(d.fn.cuCtxPopCurrent(&popped), CUDA_SUCCESS);
  CHECK(popped == ctx);
  CHECK_EQ_U64(d.fn.cuDevicePrimaryCtxRelease(0), CUDA_SUCCESS);
  sfcrt_cuda_driver_unload(&d);
  CHECK(d.library == NULL && d.fn.cuMemAlloc == NULL);
  /* twice in a row: no state survives an unload */
  CHECK_EQ_U64(sfcrt_cuda_driver_load_names(names + 1, 1, &d, &err), SFC_OK);
  sfcrt_cuda_driver_unload(&d);
  sfcrt_cuda_driver_unload(&d); /* idempotent on a zeroed driver */
}

/* A session's destroy unloads its driver handle; the driver itself must stay in the
 * process (it is shared with the framework and other sessions, and reloading it costs a
 * cuInit): after load + unload the library is still mapped (dlopen RTLD_NOLOAD finds it).
 * This binary links the fake statically and never opens the shared fake itself. */
static void test_driver_stays_loaded(void) {
  CHECK(dlopen(SFC_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD) == NULL); /* not loaded yet */
  const char *names[] = {SFC_FAKE_LIBCUDA};
  sfcrt_cuda_driver_t d;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_cuda_driver_load_names(names, 1, &d, &err), SFC_OK);
  sfcrt_cuda_driver_unload(&d);
  void *still = dlopen(SFC_FAKE_LIBCUDA, RTLD_NOW | RTLD_NOLOAD);
  CHECK(still != NULL);
  if (still)
    dlclose(still);
}

int main(void) {
  RUN(test_driver_stays_loaded); /* first: before test_fake_library loads the library */
  RUN(test_missing_library);
  RUN(test_real_load);
  RUN(test_not_a_driver);
  RUN(test_table_names);
  RUN(test_resolve);
  RUN(test_init);
  RUN(test_status_mapping);
  RUN(test_fake_library);
  return check_summary();
}
