// test_torch_shim.cpp — libsfcrt_torch.so as PyTorch uses it (issue 13, item 3).
//
// PyTorch's CUDAPluggableAllocator::allocate (2.x) does, in essence:
//     void *r = alloc_fn_(size, device, stream);   // the dlsym'ed entry point
//     return DataPtr{r, ...};                       // no NULL check
// so an allocator that returns NULL on failure hands out a tensor at address 0.
// pytorch_allocate below is that code; the test drives it with the entry point named by
// $SFC_SHIM_ENTRY (default sfcrt_torch_alloc_checked), resolved with dlsym from the
// shim library like PyTorch does, and requires an exception for every failure: out of
// memory (host backend, an impossible size) as an out-of-memory error whose text says
// "CUDA out of memory", any other failure (a bad configuration) as an error that is not
// out of memory; a 0-byte request is a NULL without exception. With
// SFC_SHIM_ENTRY=sfcrt_torch_alloc (libsfcrt's NULL-returning entry, reached through the
// shim's dependencies) it fails: that is the bug.
#include <dlfcn.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <string>

#include "sfcrt_torch.h"

static int failures = 0;
#define EXPECT(cond)                                                                               \
  do {                                                                                             \
    if (!(cond)) {                                                                                 \
      failures++;                                                                                  \
      std::fprintf(stderr, "%s:%d: EXPECT failed: %s\n", __FILE__, __LINE__, #cond);               \
    }                                                                                              \
  } while (0)

using alloc_fn_t = void *(*)(size_t, int, void *);
using free_fn_t = void (*)(void *, size_t, int, void *);

struct DataPtr {
  void *ptr;
};

static DataPtr pytorch_allocate(alloc_fn_t fn, size_t size) {
  void *r = fn(size, 0, nullptr);
  return DataPtr{r};
}

// What the caller sees: "tensor" (a pointer, maybe NULL), "oom" or "error", + message.
struct Outcome {
  std::string kind, what;
  void *ptr = nullptr;
};

static Outcome attempt(alloc_fn_t fn, size_t size) {
  Outcome o;
  try {
    DataPtr d = pytorch_allocate(fn, size);
    o.kind = "tensor";
    o.ptr = d.ptr;
  } catch (const std::bad_alloc &e) { // sfcrt::out_of_memory (std build)
    o.kind = "oom";
    o.what = e.what();
  } catch (const std::exception &e) { // c10 build: c10::OutOfMemoryError / c10::Error
    o.what = e.what();
    o.kind = o.what.find("CUDA out of memory") != std::string::npos ? "oom" : "error";
  }
  return o;
}

int main() {
  const char *lib_path = std::getenv("SFC_SHIM_LIB");
  const char *entry = std::getenv("SFC_SHIM_ENTRY");
  if (!lib_path) {
    std::printf("skipped: $SFC_SHIM_LIB is not set\n");
    return 77;
  }
  if (!entry)
    entry = "sfcrt_torch_alloc_checked";
  void *lib = dlopen(lib_path, RTLD_NOW | RTLD_LOCAL);
  EXPECT(lib != nullptr);
  if (!lib) {
    std::fprintf(stderr, "%s\n", dlerror());
    return 1;
  }
  auto fn = reinterpret_cast<alloc_fn_t>(dlsym(lib, entry));
  auto free_fn = reinterpret_cast<free_fn_t>(dlsym(lib, "sfcrt_torch_free_checked"));
  auto raises = reinterpret_cast<int (*)()>(dlsym(lib, "sfcrt_torch_shim_raises"));
  EXPECT(fn && free_fn && raises);
  if (!fn || !free_fn || !raises)
    return 1;
  std::printf("shim raises %s\n", raises() == 2 ? "c10 errors" : "std exceptions");

  // host backend: a working request, then one no host can satisfy
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  EXPECT(sfcrt_torch_configure(SFCRT_TORCH_MODE_OFF, nullptr) == 0);
  Outcome ok = attempt(fn, 4096);
  EXPECT(ok.kind == "tensor" && ok.ptr != nullptr);
  free_fn(ok.ptr, 4096, 0, nullptr);
  Outcome zero = attempt(fn, 0); // empty tensors: NULL is fine, no exception
  EXPECT(zero.kind == "tensor" && zero.ptr == nullptr);
  Outcome huge = attempt(fn, SIZE_MAX / 2);
  if (huge.kind != "oom")
    std::fprintf(stderr, "%s(%zu): got %s %p, not an out-of-memory error\n", entry,
                 (size_t)(SIZE_MAX / 2), huge.kind.c_str(), huge.ptr);
  EXPECT(huge.kind == "oom");
  EXPECT(huge.what.find("CUDA out of memory. Tried to allocate") != std::string::npos);
  EXPECT(huge.what.find("host backend: no memory") != std::string::npos);
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  EXPECT(s.failed == 1);
  EXPECT(sfcrt_torch_shutdown() == 0);

  // a failure that is not out of memory: the configuration (an unknown backend)
  setenv("SFCRT_TORCH_BACKEND", "tpu", 1);
  Outcome bad = attempt(fn, 64);
  EXPECT(bad.kind == "error");
  EXPECT(bad.what.find("SFCRT_TORCH_BACKEND=tpu") != std::string::npos);
  unsetenv("SFCRT_TORCH_BACKEND");
  EXPECT(sfcrt_torch_shutdown() == 0);

  dlclose(lib);
  std::printf("%s\n", failures ? "FAILED" : "ok");
  return failures ? 1 : 0;
}
