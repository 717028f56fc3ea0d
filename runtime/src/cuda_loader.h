/* cuda_loader.h — load the CUDA driver at run time and turn CUresult into sfc_status_t.
 *
 *   sfcrt_cuda_driver_t drv;
 *   if (sfcrt_cuda_driver_load(&drv, &err) != SFC_OK) return err.status; // UNAVAILABLE w/o libcuda
 *   CUdeviceptr p;
 *   SFC_TRY(sfcrt_cuda_check(&drv, drv.fn.cuMemAlloc(&p, 1 << 20), "cuMemAlloc", &err));
 *   sfcrt_cuda_driver_unload(&drv);
 *
 * Loading: dlopen("libcuda.so.1"), then "libcuda.so" (the unversioned name exists only
 * with the development package); dlsym("cuGetProcAddress_v2") (CUDA 12.0+); every row of
 * cuda_symbols.h resolved through it at SFCRT_CUDA_API_VERSION; cuInit(0); the driver
 * version checked against SFCRT_CUDA_API_VERSION. Nothing is linked against libcuda, and
 * the build needs only cuda.h. A missing library, a missing symbol or an old driver is
 * SFC_ERR_UNAVAILABLE with a message naming what is missing.
 *
 * Fake drivers: the symbol table is plain function pointers, so a test fills
 * sfcrt_cuda_driver_t.fn itself (library = NULL) or passes its own cuGetProcAddress to
 * sfcrt_cuda_driver_resolve, and drives the code above the table without a GPU.
 */
#ifndef SFCRT_CUDA_LOADER_H
#define SFCRT_CUDA_LOADER_H

#include <stddef.h>

#include "cuda_symbols.h"
#include "sfc/status.h"

typedef CUresult(CUDAAPI *sfcrt_cuda_getproc_fn)(const char *symbol, void **pfn, int cuda_version,
                                                 cuuint64_t flags,
                                                 CUdriverProcAddressQueryResult *symbol_status);

typedef struct sfcrt_cuda_symbols {
#define SFCRT_CUDA_FIELD_(name, params) CUresult(CUDAAPI *name) params;
  SFCRT_CUDA_SYMBOLS(SFCRT_CUDA_FIELD_)
#undef SFCRT_CUDA_FIELD_
} sfcrt_cuda_symbols_t;

typedef struct sfcrt_cuda_driver {
  void *library;      /* dlopen handle; NULL for a fake driver */
  int driver_version; /* from cuDriverGetVersion after init; 0 before */
  sfcrt_cuda_symbols_t fn;
} sfcrt_cuda_driver_t;

/* dlopen + resolve + cuInit. On failure *out is zeroed and nothing stays loaded.
 * SFCRT_CUDA_LIBRARY, when set, names the one library to try instead (a driver in an
 * unusual place, or the tests' fake driver). */
sfc_status_t sfcrt_cuda_driver_load(sfcrt_cuda_driver_t *out, sfc_error_t *err);

/* As above with the library names to try, in order (tests pass names that do not exist). */
sfc_status_t sfcrt_cuda_driver_load_names(const char *const *names, size_t count,
                                          sfcrt_cuda_driver_t *out, sfc_error_t *err);

/* Resolves every table row through getproc. Fails on the first row the driver lacks. */
sfc_status_t sfcrt_cuda_driver_resolve(sfcrt_cuda_getproc_fn getproc, sfcrt_cuda_symbols_t *out,
                                       sfc_error_t *err);

/* cuInit(0), then cuDriverGetVersion; a driver older than the pinned API is UNAVAILABLE. */
sfc_status_t sfcrt_cuda_driver_init(sfcrt_cuda_driver_t *drv, sfc_error_t *err);

/* dlclose (when loaded) and zero the table; safe on a zeroed or fake driver. The
 * library was opened RTLD_NODELETE, so it stays in the process (one process-wide copy of
 * the driver, never unloaded while something else may use it). */
void sfcrt_cuda_driver_unload(sfcrt_cuda_driver_t *drv);

/* The one CUresult -> sfc_status_t mapping. CUDA_SUCCESS is SFC_OK and leaves err alone;
 * otherwise err reads "<call>: CUDA_ERROR_NAME (driver's description)":
 *   out of memory                                 -> SFC_ERR_OUT_OF_MEMORY
 *   no device, no/old/stub driver, not supported  -> SFC_ERR_UNAVAILABLE
 *   anything else                                 -> SFC_ERR_DEVICE
 * drv may be NULL or lack cuGetErrorName/String: the message then carries the number. */
sfc_status_t sfcrt_cuda_check(const sfcrt_cuda_driver_t *drv, CUresult result, const char *call,
                              sfc_error_t *err);

/* The table's rows, for tests and diagnostics. */
size_t sfcrt_cuda_symbol_count(void);
const char *sfcrt_cuda_symbol_name(size_t index);

#endif /* SFCRT_CUDA_LOADER_H */
