/* fake_cuda.c — the fake CUDA driver (see fake_cuda.h). Test code: fixed-size tables,
 * linear searches; misuse by the code under test is counted, never fatal. */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_MAX 4096

typedef struct {
  int fd;
  size_t size;
  int live, mapped;
} fake_handle_t;
typedef struct {
  uintptr_t base, raw;
  size_t size, raw_size;
  int live;
} fake_reservation_t;
typedef struct {
  uintptr_t addr;
  size_t size;
  size_t handle; /* index */
  int live;
} fake_mapping_t;

static fake_cuda_state_t st_;
static fake_handle_t handles_[FAKE_MAX];
static fake_reservation_t res_[FAKE_MAX];
static fake_mapping_t maps_[FAKE_MAX];
static int inited_;

fake_cuda_state_t *fake_cuda_state(void) {
  if (!inited_)
    fake_cuda_reset();
  return &st_;
}

void fake_cuda_reset(void) {
  memset(&st_, 0, sizeof(st_));
  st_.granularity = 64 * 1024;
  st_.driver_version = 12080;
  st_.device_count = 1;
  inited_ = 1;
}

static void violate(const char *fmt, ...) {
  if (st_.violations++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(st_.violation, sizeof(st_.violation), fmt, ap);
    va_end(ap);
  }
}

static int fail_now(const char *name) {
  fake_cuda_state();
  st_.calls++;
  if (st_.fail_name && strcmp(st_.fail_name, name) == 0 && ++st_.fail_seen_ == st_.fail_nth)
    return 1;
  return 0;
}
#define ENTER(name)                                                                                \
  do {                                                                                             \
    if (fail_now(name))                                                                            \
      return st_.fail_result;                                                                      \
  } while (0)

static const struct {
  CUresult r;
  const char *name, *text;
} errors_[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
};

static CUresult CUDAAPI f_cuGetErrorName(CUresult e, const char **s) {
  for (size_t i = 0; i < sizeof(errors_) / sizeof(errors_[0]); i++)
    if (errors_[i].r == e) {
      *s = errors_[i].name;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_cuGetErrorString(CUresult e, const char **s) {
  for (size_t i = 0; i < sizeof(errors_) / sizeof(errors_[0]); i++)
    if (errors_[i].r == e) {
      *s = errors_[i].text;
      return CUDA_SUCCESS;
    }
  *s = NULL;
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_cuInit(unsigned int flags) {
  ENTER("cuInit");
  return st_.init_result;
}
static CUresult CUDAAPI f_cuDriverGetVersion(int *v) {
  ENTER("cuDriverGetVersion");
  *v = st_.driver_version;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuDeviceGet(CUdevice *d, int ordinal) {
  ENTER("cuDeviceGet");
  if (ordinal < 0 || ordinal >= st_.device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  *d = ordinal;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuDeviceGetCount(int *n) {
  ENTER("cuDeviceGetCount");
  *n = st_.device_count;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d) {
  ENTER("cuDeviceGetAttribute");
  *v = 1; /* VMM supported, and any other yes/no attribute */
  return CUDA_SUCCESS;
}
static struct CUctx_st *fake_ctx_(void) {
  static char ctx;
  return (struct CUctx_st *)(void *)&ctx;
}
static CUresult CUDAAPI f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  ENTER("cuDevicePrimaryCtxRetain");
  st_.ctx_retained++;
  *c = fake_ctx_();
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuDevicePrimaryCtxRelease(CUdevice d) {
  ENTER("cuDevicePrimaryCtxRelease");
  if (st_.ctx_retained <= 0)
    violate("cuDevicePrimaryCtxRelease without retain");
  st_.ctx_retained--;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxPushCurrent(CUcontext c) {
  ENTER("cuCtxPushCurrent");
  st_.ctx_pushed++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxPopCurrent(CUcontext *c) {
  ENTER("cuCtxPopCurrent");
  if (st_.ctx_pushed <= 0)
    violate("cuCtxPopCurrent with an empty stack");
  st_.ctx_pushed--;
  if (c)
    *c = fake_ctx_();
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxGetCurrent(CUcontext *c) {
  ENTER("cuCtxGetCurrent");
  *c = st_.ctx_pushed > 0 ? fake_ctx_() : NULL;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemAlloc(CUdeviceptr *p, size_t n) {
  ENTER("cuMemAlloc");
  void *m = NULL;
  if (n == 0 || posix_memalign(&m, 256, n) != 0)
    return n == 0 ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_OUT_OF_MEMORY;
  st_.allocs_live++;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemFree(CUdeviceptr p) {
  ENTER("cuMemFree");
  st_.allocs_live--;
  free((void *)(uintptr_t)p);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemGetInfo(size_t *f, size_t *t) {
  ENTER("cuMemGetInfo");
  *f = (size_t)1 << 30;
  *t = (size_t)1 << 31;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  ENTER("cuMemHostAlloc");
  *p = malloc(n ? n : 1);
  if (!*p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  st_.host_allocs_live++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemFreeHost(void *p) {
  ENTER("cuMemFreeHost");
  st_.host_allocs_live--;
  free(p);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream q) {
  ENTER("cuMemcpyHtoDAsync");
  st_.memcpy_h2d++;
  memcpy((void *)(uintptr_t)d, s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream q) {
  ENTER("cuMemcpyDtoHAsync");
  st_.memcpy_d2h++;
  memcpy(d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream q) {
  ENTER("cuMemcpyDtoDAsync");
  memmove((void *)(uintptr_t)d, (const void *)(uintptr_t)s, n);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream q) {
  ENTER("cuMemsetD32Async");
  st_.memsets++;
  uint32_t x = v;
  for (size_t i = 0; i < n; i++)
    memcpy((char *)(uintptr_t)d + 4 * i, &x, 4);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamCreate(CUstream *q, unsigned int flags) {
  ENTER("cuStreamCreate");
  *q = (CUstream)malloc(1);
  st_.streams_live++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamDestroy(CUstream q) {
  ENTER("cuStreamDestroy");
  st_.streams_live--;
  free(q);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamSynchronize(CUstream q) {
  ENTER("cuStreamSynchronize");
  st_.syncs++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamWaitEvent(CUstream q, CUevent e, unsigned int flags) {
  ENTER("cuStreamWaitEvent");
  st_.stream_waits++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventCreate(CUevent *e, unsigned int flags) {
  ENTER("cuEventCreate");
  if (!(flags & CU_EVENT_DISABLE_TIMING))
    violate("cuEventCreate without CU_EVENT_DISABLE_TIMING");
  *e = (CUevent)malloc(1);
  st_.events_live++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventDestroy(CUevent e) {
  ENTER("cuEventDestroy");
  st_.events_live--;
  free(e);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventRecord(CUevent e, CUstream q) {
  ENTER("cuEventRecord");
  st_.event_records++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventSynchronize(CUevent e) {
  ENTER("cuEventSynchronize");
  st_.syncs++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventQuery(CUevent e) {
  ENTER("cuEventQuery");
  return CUDA_SUCCESS;
}

/* ---- virtual memory management on host mappings ---------------------------- */

static CUresult CUDAAPI f_cuMemGetAllocationGranularity(size_t *g, const CUmemAllocationProp *p,
                                                        CUmemAllocationGranularity_flags o) {
  ENTER("cuMemGetAllocationGranularity");
  if (p->type != CU_MEM_ALLOCATION_TYPE_PINNED || p->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    violate("granularity asked for a non-pinned or non-device allocation");
  *g = st_.granularity;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
                                      const CUmemAllocationProp *p, unsigned long long flags) {
  ENTER("cuMemCreate");
  if (size == 0 || size % st_.granularity)
    return CUDA_ERROR_INVALID_VALUE;
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (!handles_[i].live) {
      int fd = memfd_create("fake_cuda_chunk", MFD_CLOEXEC);
      if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
          close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      handles_[i] = (fake_handle_t){.fd = fd, .size = size, .live = 1};
      st_.handles_live++;
      *h = i + 1;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_OUT_OF_MEMORY;
}
static fake_handle_t *handle_at(CUmemGenericAllocationHandle h) {
  return h >= 1 && h <= FAKE_MAX && handles_[h - 1].live ? &handles_[h - 1] : NULL;
}
static CUresult CUDAAPI f_cuMemRelease(CUmemGenericAllocationHandle h) {
  ENTER("cuMemRelease");
  fake_handle_t *x = handle_at(h);
  if (!x) {
    violate("cuMemRelease of unknown handle %llu", h);
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (x->mapped)
    violate("cuMemRelease of handle %llu while mapped", h);
  close(x->fd);
  x->live = 0;
  st_.handles_live--;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align,
                                              CUdeviceptr addr, unsigned long long flags) {
  ENTER("cuMemAddressReserve");
  if (size == 0 || size % st_.granularity || (align && align % st_.granularity))
    return CUDA_ERROR_INVALID_VALUE;
  if (align == 0)
    align = st_.granularity;
  size_t raw_size = size + align;
  void *raw = mmap(NULL, raw_size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (raw == MAP_FAILED)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (!res_[i].live) {
      uintptr_t base = ((uintptr_t)raw + align - 1) / align * align;
      res_[i] = (fake_reservation_t){base, (uintptr_t)raw, size, raw_size, 1};
      st_.reservations_live++;
      *p = (CUdeviceptr)base;
      return CUDA_SUCCESS;
    }
  munmap(raw, raw_size);
  return CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult CUDAAPI f_cuMemAddressFree(CUdeviceptr p, size_t size) {
  ENTER("cuMemAddressFree");
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (res_[i].live && res_[i].base == p && res_[i].size == size) {
      for (size_t j = 0; j < FAKE_MAX; j++)
        if (maps_[j].live && maps_[j].addr >= p && maps_[j].addr < p + size)
          violate("cuMemAddressFree of 0x%llx with a live mapping at 0x%llx", (unsigned long long)p,
                  (unsigned long long)maps_[j].addr);
      munmap((void *)res_[i].raw, res_[i].raw_size);
      res_[i].live = 0;
      st_.reservations_live--;
      return CUDA_SUCCESS;
    }
  violate("cuMemAddressFree of 0x%llx+%zu: not a reservation", (unsigned long long)p, size);
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_cuMemMap(CUdeviceptr p, size_t size, size_t offset,
                                   CUmemGenericAllocationHandle h, unsigned long long flags) {
  ENTER("cuMemMap");
  fake_handle_t *x = handle_at(h);
  if (!x || offset != 0 || size != x->size) {
    violate("cuMemMap with a bad handle/offset/size (%llu, %zu, %zu)", h, offset, size);
    return CUDA_ERROR_INVALID_VALUE;
  }
  int inside = 0;
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (res_[i].live && p >= res_[i].base && p + size <= res_[i].base + res_[i].size)
      inside = 1;
  if (!inside) {
    violate("cuMemMap at 0x%llx+%zu outside every reservation", (unsigned long long)p, size);
    return CUDA_ERROR_INVALID_VALUE;
  }
  for (size_t j = 0; j < FAKE_MAX; j++)
    if (maps_[j].live && p < maps_[j].addr + maps_[j].size && maps_[j].addr < p + size) {
      violate("cuMemMap at 0x%llx over a live mapping", (unsigned long long)p);
      return CUDA_ERROR_INVALID_VALUE;
    }
  if (x->mapped)
    violate("cuMemMap of handle %llu that is already mapped (the pool must not share chunks)", h);
  for (size_t j = 0; j < FAKE_MAX; j++)
    if (!maps_[j].live) {
      void *m = mmap((void *)(uintptr_t)p, size, PROT_NONE, MAP_SHARED | MAP_FIXED, x->fd, 0);
      if (m == MAP_FAILED)
        return CUDA_ERROR_OUT_OF_MEMORY;
      maps_[j] = (fake_mapping_t){(uintptr_t)p, size, (size_t)(h - 1), 1};
      x->mapped++;
      if (++st_.mappings_live > st_.mappings_peak)
        st_.mappings_peak = st_.mappings_live;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_OUT_OF_MEMORY;
}
static CUresult CUDAAPI f_cuMemUnmap(CUdeviceptr p, size_t size) {
  ENTER("cuMemUnmap");
  for (size_t j = 0; j < FAKE_MAX; j++)
    if (maps_[j].live && maps_[j].addr == p && maps_[j].size == size) {
      mmap((void *)(uintptr_t)p, size, PROT_NONE,
           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
      handles_[maps_[j].handle].mapped--;
      maps_[j].live = 0;
      st_.mappings_live--;
      return CUDA_SUCCESS;
    }
  violate("cuMemUnmap of 0x%llx+%zu: not one whole mapping", (unsigned long long)p, size);
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d,
                                         size_t count) {
  ENTER("cuMemSetAccess");
  /* every byte of the range must be mapped */
  for (uintptr_t at = p; at < p + size;) {
    size_t j = 0;
    while (j < FAKE_MAX && !(maps_[j].live && maps_[j].addr == at))
      j++;
    if (j == FAKE_MAX) {
      violate("cuMemSetAccess over unmapped 0x%llx", (unsigned long long)at);
      return CUDA_ERROR_INVALID_VALUE;
    }
    at += maps_[j].size;
  }
  if (count != 1 || d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE)
    violate("cuMemSetAccess without one read/write descriptor");
  mprotect((void *)(uintptr_t)p, size, PROT_READ | PROT_WRITE);
  return CUDA_SUCCESS;
}

void fake_cuda_driver(sfcrt_cuda_driver_t *drv) {
  memset(drv, 0, sizeof(*drv));
  fake_cuda_state();
#define FAKE_SET_(name, params) drv->fn.name = f_##name;
  SFCRT_CUDA_SYMBOLS(FAKE_SET_)
#undef FAKE_SET_
  drv->driver_version = st_.driver_version;
}

CUresult CUDAAPI fake_cuda_getproc(const char *symbol, void **pfn, int cuda_version,
                                   cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  fake_cuda_state();
  sfcrt_cuda_driver_t d;
  fake_cuda_driver(&d);
  *pfn = NULL;
  *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
  if (st_.missing && strcmp(symbol, st_.missing) == 0)
    return CUDA_ERROR_NOT_FOUND;
  if (cuda_version != SFCRT_CUDA_API_VERSION)
    return CUDA_ERROR_INVALID_VALUE;
  void *fn = NULL;
#define FAKE_FIND_(name, params)                                                                   \
  if (strcmp(symbol, #name) == 0)                                                                  \
    memcpy(&fn, &d.fn.name, sizeof(fn));
  SFCRT_CUDA_SYMBOLS(FAKE_FIND_)
#undef FAKE_FIND_
  if (!fn)
    return CUDA_ERROR_NOT_FOUND;
  *pfn = fn;
  *status = CU_GET_PROC_ADDRESS_SUCCESS;
  return CUDA_SUCCESS;
}
