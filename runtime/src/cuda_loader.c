/* cuda_loader.c — dlopen the CUDA driver, resolve cuda_symbols.h, map CUresult.
 *
 * Algorithm (IREE's dynamic symbol table, iree/hal/drivers/cuda/dynamic_symbols.c,
 * reduced to what sfc needs): try the library names in order; look up the one symbol
 * that is not versioned, cuGetProcAddress_v2, with dlsym; ask it for every table row at
 * the pinned API version with CU_GET_PROC_ADDRESS_DEFAULT, so the driver hands back the
 * ABI variant that matches the cuda.h prototypes we compiled against (cuMemAlloc ->
 * cuMemAlloc_v2); then cuInit and a version check. O(rows) lookups, once per load. The
 * library is opened RTLD_NODELETE: unload drops the handle, never the driver.
 */
#include "cuda_loader.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const sfcrt_cuda_symbol_names_[] = {
#define SFCRT_CUDA_NAME_(name, params) #name,
    SFCRT_CUDA_SYMBOLS(SFCRT_CUDA_NAME_)
#undef SFCRT_CUDA_NAME_
};

size_t sfcrt_cuda_symbol_count(void) {
  return sizeof(sfcrt_cuda_symbol_names_) / sizeof(sfcrt_cuda_symbol_names_[0]);
}

const char *sfcrt_cuda_symbol_name(size_t index) {
  return index < sfcrt_cuda_symbol_count() ? sfcrt_cuda_symbol_names_[index] : NULL;
}

sfc_status_t sfcrt_cuda_check(const sfcrt_cuda_driver_t *drv, CUresult result, const char *call,
                              sfc_error_t *err) {
  if (result == CUDA_SUCCESS)
    return SFC_OK;
  sfc_status_t status;
  switch (result) {
    case CUDA_ERROR_OUT_OF_MEMORY:
      status = SFC_ERR_OUT_OF_MEMORY;
      break;
    case CUDA_ERROR_NO_DEVICE:
    case (CUresult)36: /* CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER, absent from older cuda.h */
    case CUDA_ERROR_STUB_LIBRARY:
    case CUDA_ERROR_DEVICE_UNAVAILABLE:
    case CUDA_ERROR_NOT_SUPPORTED:
    case CUDA_ERROR_SYSTEM_DRIVER_MISMATCH:
    case CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE:
    case CUDA_ERROR_DEVICE_NOT_LICENSED:
      status = SFC_ERR_UNAVAILABLE;
      break;
    default:
      status = SFC_ERR_DEVICE;
      break;
  }
  const char *name = NULL, *text = NULL;
  if (drv && drv->fn.cuGetErrorName && drv->fn.cuGetErrorName(result, &name) != CUDA_SUCCESS)
    name = NULL;
  if (drv && drv->fn.cuGetErrorString && drv->fn.cuGetErrorString(result, &text) != CUDA_SUCCESS)
    text = NULL;
  if (name && text)
    return sfc_error_set(err, status, "%s: %s (%s)", call, name, text);
  if (name)
    return sfc_error_set(err, status, "%s: %s", call, name);
  return sfc_error_set(err, status, "%s: CUresult %d", call, (int)result);
}

sfc_status_t sfcrt_cuda_driver_resolve(sfcrt_cuda_getproc_fn getproc, sfcrt_cuda_symbols_t *out,
                                       sfc_error_t *err) {
  memset(out, 0, sizeof(*out));
  CUresult r;
  CUdriverProcAddressQueryResult found;
  void *fn;
#define SFCRT_CUDA_RESOLVE_(name, params)                                                          \
  fn = NULL;                                                                                       \
  found = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                                                    \
  r = getproc(#name, &fn, SFCRT_CUDA_API_VERSION, CU_GET_PROC_ADDRESS_DEFAULT, &found);            \
  if (r != CUDA_SUCCESS || found != CU_GET_PROC_ADDRESS_SUCCESS || fn == NULL) {                   \
    memset(out, 0, sizeof(*out));                                                                  \
    return sfc_error_set(err, SFC_ERR_UNAVAILABLE,                                                 \
                         "CUDA driver lacks %s at API version %d (cuGetProcAddress: result %d, "   \
                         "status %d); a CUDA 12.0+ driver is required",                            \
                         #name, SFCRT_CUDA_API_VERSION, (int)r, (int)found);                       \
  }                                                                                                \
  memcpy(&out->name, &fn, sizeof(fn));
  SFCRT_CUDA_SYMBOLS(SFCRT_CUDA_RESOLVE_)
#undef SFCRT_CUDA_RESOLVE_
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_driver_init(sfcrt_cuda_driver_t *drv, sfc_error_t *err) {
  SFC_TRY(sfcrt_cuda_check(drv, drv->fn.cuInit(0), "cuInit", err));
  int version = 0;
  SFC_TRY(sfcrt_cuda_check(drv, drv->fn.cuDriverGetVersion(&version), "cuDriverGetVersion", err));
  if (version < SFCRT_CUDA_API_VERSION)
    return sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                         "CUDA driver API version %d is older than the %d sfc needs", version,
                         SFCRT_CUDA_API_VERSION);
  drv->driver_version = version;
  return SFC_OK;
}

void sfcrt_cuda_driver_unload(sfcrt_cuda_driver_t *drv) {
  if (!drv)
    return;
  if (drv->library)
    dlclose(drv->library);
  memset(drv, 0, sizeof(*drv));
}

sfc_status_t sfcrt_cuda_driver_load_names(const char *const *names, size_t count,
                                          sfcrt_cuda_driver_t *out, sfc_error_t *err) {
  memset(out, 0, sizeof(*out));
  char tried[SFC_ERROR_MESSAGE_BYTES] = "";
  size_t used = 0;
  void *lib = NULL;
  for (size_t i = 0; i < count && !lib; i++) {
    /* RTLD_NODELETE: a session's destroy dlcloses its handle, but libcuda stays in
     * the process, as with the CUDA runtime: unloading a driver that other code (the
     * framework, another session) may be using is never safe, and reloading it per
     * session costs a full cuInit. */
    lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
    if (!lib && used < sizeof(tried)) {
      const char *why = dlerror();
      int n = snprintf(tried + used, sizeof(tried) - used, "%s%s", used ? "; " : "",
                       why ? why : names[i]);
      used += n > 0 ? (size_t)n : 0;
    }
  }
  if (!lib)
    return sfc_error_set(err, SFC_ERR_UNAVAILABLE, "CUDA driver not found (%s)",
                         count ? tried : "no library names given");
  void *sym = dlsym(lib, "cuGetProcAddress_v2");
  if (!sym) {
    dlclose(lib);
    return sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                         "CUDA driver has no cuGetProcAddress_v2: a CUDA 12.0+ driver is required");
  }
  sfcrt_cuda_getproc_fn getproc;
  memcpy(&getproc, &sym, sizeof(sym));
  sfc_status_t st = sfcrt_cuda_driver_resolve(getproc, &out->fn, err);
  if (st == SFC_OK) {
    out->library = lib;
    st = sfcrt_cuda_driver_init(out, err);
  } else {
    dlclose(lib);
  }
  if (st != SFC_OK)
    sfcrt_cuda_driver_unload(out);
  return st;
}

sfc_status_t sfcrt_cuda_driver_load(sfcrt_cuda_driver_t *out, sfc_error_t *err) {
  static const char *const names[] = {"libcuda.so.1", "libcuda.so"};
  const char *custom = getenv("SFCRT_CUDA_LIBRARY");
  if (custom && *custom)
    return sfcrt_cuda_driver_load_names(&custom, 1, out, err);
  return sfcrt_cuda_driver_load_names(names, 2, out, err);
}
