/* fake_libcuda.c — fake_cuda.c as a shared library that exports cuGetProcAddress_v2,
 * so the real loader (dlopen + dlsym + resolve + cuInit) runs against it end to end:
 * SFCRT_CUDA_LIBRARY=/path/libsfc_fake_cuda.so makes the runtime load it. */
#include "fake_cuda.h"

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *status);

CUresult CUDAAPI cuGetProcAddress_v2(const char *symbol, void **pfn, int cuda_version,
                                     cuuint64_t flags, CUdriverProcAddressQueryResult *status) {
  return fake_cuda_getproc(symbol, pfn, cuda_version, flags, status);
}
