// torch_shim.cpp — libsfcrt_torch.so: the sfcrt_torch.h allocator pair for PyTorch's
// CUDAPluggableAllocator, raising instead of returning NULL.
//
// PyTorch (2.x) builds a DataPtr from whatever the alloc function returns, without a
// check: a NULL from sfcrt_torch_alloc becomes a tensor at address 0 and the first
// kernel faults far from the cause. sfcrt_torch_alloc_checked throws instead, and the
// exception travels through PyTorch's C++ frames to its Python binding, which turns it
// into a Python exception with our message:
//   - built with PyTorch's C++ headers (SFCRT_TORCH_C10, CMake found torch/include and
//     libc10): c10::OutOfMemoryError for SFC_ERR_OUT_OF_MEMORY — Python's
//     torch.cuda.OutOfMemoryError — and c10::Error (RuntimeError) for any other reason;
//   - without them: sfcrt::out_of_memory, a std::bad_alloc carrying the message (what
//     PyTorch's binding makes of a std::exception: a Python exception with that text),
//     and std::runtime_error for any other reason.
// The headers must be those of the PyTorch that loads the library (the C++ ABI of
// c10::Error changes between versions): CMake takes them from the python3 it finds.
// Everything else is libsfcrt.so's (one allocator, one mutex): this file only wraps.
#include <cstddef>
#include <cstdio>
#include <new>
#include <stdexcept>
#include <string>

#include "sfc/status.h"
#include "sfcrt_torch.h"

#if defined(SFCRT_TORCH_C10) && SFCRT_TORCH_C10
#include <c10/util/Exception.h>
#endif

namespace sfcrt {

class out_of_memory : public std::bad_alloc {
public:
  explicit out_of_memory(std::string msg) : msg_(std::move(msg)) {}
  const char *what() const noexcept override {
    return msg_.c_str();
  }

private:
  std::string msg_;
};

// PyTorch's wording, so code matching "CUDA out of memory" keeps working.
static std::string oom_message(size_t size, int device) {
  char head[160];
  std::snprintf(head, sizeof(head),
                "CUDA out of memory. Tried to allocate %zu bytes on device %d (sfc allocator, "
                "libsfcrt_torch): ",
                size, device);
  return std::string(head) + sfcrt_torch_last_error();
}

[[noreturn]] static void raise(int status, size_t size, int device) {
  if (status == SFC_ERR_OUT_OF_MEMORY || status == SFC_ERR_DOES_NOT_FIT) {
    std::string msg = oom_message(size, device);
#if defined(SFCRT_TORCH_C10) && SFCRT_TORCH_C10
    TORCH_CHECK_WITH(OutOfMemoryError, false, msg);
#endif
    throw out_of_memory(msg);
  }
  std::string msg = std::string("sfc allocator (libsfcrt_torch): ") + sfcrt_torch_last_error();
#if defined(SFCRT_TORCH_C10) && SFCRT_TORCH_C10
  TORCH_CHECK(false, msg);
#endif
  throw std::runtime_error(msg);
}

} // namespace sfcrt

extern "C" {

__attribute__((visibility("default"))) void *sfcrt_torch_alloc_checked(size_t size, int device,
                                                                       void *stream) {
  void *p = nullptr;
  int status = sfcrt_torch_alloc_status(size, device, stream, &p);
  if (status != SFC_OK)
    sfcrt::raise(status, size, device);
  return p;
}

__attribute__((visibility("default"))) void sfcrt_torch_free_checked(void *ptr, size_t size,
                                                                     int device, void *stream) {
  sfcrt_torch_free(ptr, size, device, stream);
}

__attribute__((visibility("default"))) int sfcrt_torch_shim_raises(void) {
#if defined(SFCRT_TORCH_C10) && SFCRT_TORCH_C10
  return 2;
#else
  return 1;
#endif
}

} // extern "C"
