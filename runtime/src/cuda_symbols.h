/* cuda_symbols.h — the one table of CUDA Driver API entry points the runtime uses.
 *
 * An X-macro (the pattern of IREE's cuda_dynamic_symbol_table.h): each row is
 *   X(name, (parameter list))
 * and every entry point returns CUresult. cuda_loader.c expands the table three
 * times: into the function-pointer struct sfcrt_cuda_symbols_t, into the list of names
 * it resolves with cuGetProcAddress at SFCRT_CUDA_API_VERSION, and into the check that
 * every pointer was found. Tests expand it to install fake drivers.
 *
 * The name is the driver's *base* name ("cuMemAlloc"): cuGetProcAddress picks the
 * variant (cuMemAlloc_v2) that matches the pinned API version. cuda.h #defines some
 * base names to their _v2 spelling; stringizing (#name) sees the unexpanded token, so
 * the resolved string is always the base name, while struct members and call sites are
 * renamed by the same #define consistently, which is harmless.
 *
 * Adding an entry point: add one row here; nothing else changes. Needs cuda.h only.
 * The prototypes come from the cuda.h we compile with while the driver hands back the
 * variant of SFCRT_CUDA_API_VERSION, so a row must not be an entry point whose newest
 * variant in cuda.h is newer than that version (today's rows: all their _v2 variants
 * date from CUDA 11.0 or earlier; checked against CUDA 13.0's cuda.h).
 */
#ifndef SFCRT_CUDA_SYMBOLS_H
#define SFCRT_CUDA_SYMBOLS_H

#include <cuda.h>

#if CUDA_VERSION < 12000
#error "sfc's CUDA backend needs cuda.h from CUDA 12.0 or newer (cuGetProcAddress_v2)"
#endif

/* The API version every symbol is resolved at (1000 * major + 10 * minor). CUDA 12.0
 * introduced cuGetProcAddress_v2, which the loader needs, so 12.0 is also the oldest
 * driver the runtime accepts. */
#define SFCRT_CUDA_API_VERSION 12000

#define SFCRT_CUDA_SYMBOLS(X)                                                                      \
  /* errors and setup */                                                                           \
  X(cuGetErrorName, (CUresult error, const char **pStr))                                           \
  X(cuGetErrorString, (CUresult error, const char **pStr))                                         \
  X(cuInit, (unsigned int Flags))                                                                  \
  X(cuDriverGetVersion, (int *driverVersion))                                                      \
  X(cuDeviceGet, (CUdevice * device, int ordinal))                                                 \
  X(cuDeviceGetCount, (int *count))                                                                \
  X(cuDeviceGetAttribute, (int *pi, CUdevice_attribute attrib, CUdevice dev))                      \
  /* contexts: the primary context, shared with the CUDA runtime and PyTorch */                    \
  X(cuDevicePrimaryCtxRetain, (CUcontext * pctx, CUdevice dev))                                    \
  X(cuDevicePrimaryCtxRelease, (CUdevice dev))                                                     \
  X(cuCtxPushCurrent, (CUcontext ctx))                                                             \
  X(cuCtxPopCurrent, (CUcontext * pctx))                                                           \
  X(cuCtxGetCurrent, (CUcontext * pctx))                                                           \
  X(cuCtxGetDevice, (CUdevice * device))                                                           \
  X(cuCtxSynchronize, (void))                                                                      \
  /* memory: arena mode and pinned host staging */                                                 \
  X(cuMemAlloc, (CUdeviceptr * dptr, size_t bytesize))                                             \
  X(cuMemFree, (CUdeviceptr dptr))                                                                 \
  X(cuMemGetInfo, (size_t * free, size_t * total))                                                 \
  X(cuMemHostAlloc, (void **pp, size_t bytesize, unsigned int Flags))                              \
  X(cuMemFreeHost, (void *p))                                                                      \
  /* copies and fills */                                                                           \
  X(cuMemcpyHtoDAsync,                                                                             \
    (CUdeviceptr dstDevice, const void *srcHost, size_t ByteCount, CUstream hStream))              \
  X(cuMemcpyDtoHAsync, (void *dstHost, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream)) \
  X(cuMemcpyDtoDAsync,                                                                             \
    (CUdeviceptr dstDevice, CUdeviceptr srcDevice, size_t ByteCount, CUstream hStream))            \
  X(cuMemsetD32Async, (CUdeviceptr dstDevice, unsigned int ui, size_t N, CUstream hStream))        \
  /* streams and events */                                                                         \
  X(cuStreamCreate, (CUstream * phStream, unsigned int Flags))                                     \
  X(cuStreamDestroy, (CUstream hStream))                                                           \
  X(cuStreamSynchronize, (CUstream hStream))                                                       \
  X(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags))                     \
  X(cuStreamGetCtx, (CUstream hStream, CUcontext * pctx))                                          \
  X(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus * captureStatus))                \
  X(cuEventCreate, (CUevent * phEvent, unsigned int Flags))                                        \
  X(cuEventDestroy, (CUevent hEvent))                                                              \
  X(cuEventRecord, (CUevent hEvent, CUstream hStream))                                             \
  X(cuEventSynchronize, (CUevent hEvent))                                                          \
  X(cuEventQuery, (CUevent hEvent))                                                                \
  /* virtual memory management: VA mode */                                                         \
  X(cuMemGetAllocationGranularity, (size_t * granularity, const CUmemAllocationProp *prop,         \
                                    CUmemAllocationGranularity_flags option))                      \
  X(cuMemCreate, (CUmemGenericAllocationHandle * handle, size_t size,                              \
                  const CUmemAllocationProp *prop, unsigned long long flags))                      \
  X(cuMemRelease, (CUmemGenericAllocationHandle handle))                                           \
  X(cuMemAddressReserve, (CUdeviceptr * ptr, size_t size, size_t alignment, CUdeviceptr addr,      \
                          unsigned long long flags))                                               \
  X(cuMemAddressFree, (CUdeviceptr ptr, size_t size))                                              \
  X(cuMemMap, (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,   \
               unsigned long long flags))                                                          \
  X(cuMemUnmap, (CUdeviceptr ptr, size_t size))                                                    \
  X(cuMemSetAccess, (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count))

#endif /* SFCRT_CUDA_SYMBOLS_H */
