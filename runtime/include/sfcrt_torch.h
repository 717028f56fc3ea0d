/* sfcrt_torch.h — PyTorch allocator entry points in libsfcrt.so: record one training
 * iteration's allocations, plan them offline with `sfc pack`, then serve the same
 * requests at their planned offsets in one arena (seed profile-guided-dsa.txt §4).
 *
 * Python (PyTorch >= 2.0 on CUDA; tools/torch-two-run does all of this):
 *
 *   import ctypes, torch
 *   lib = ctypes.CDLL("libsfcrt.so")
 *   alloc = torch.cuda.memory.CUDAPluggableAllocator("libsfcrt.so", "sfcrt_torch_alloc",
 *                                                    "sfcrt_torch_free")
 *   torch.cuda.memory.change_current_allocator(alloc)   # before any CUDA allocation
 *   lib.sfcrt_torch_configure(1, b"trace.csv")          # 1 = record (or SFCRT_TORCH_MODE)
 *   for step in range(2):
 *       lib.sfcrt_torch_iteration_begin()               # marks the iteration boundary
 *       loss = model(x).sum(); loss.backward(); opt.step()
 *   lib.sfcrt_torch_flush()                             # trace.csv now holds iteration 1
 *   #   sfc pack trace.csv --alignment 512 -o packed.csv
 *   # next process: sfcrt_torch_configure(2, b"packed.csv") (2 = replay), same loop;
 *   # sfcrt_torch_get_stats() then says how many requests missed the plan.
 *
 * Modes:
 *  - record: every request is served by the fallback allocator (cuMemAlloc) and the
 *    requests between the first and the second sfcrt_torch_iteration_begin are written
 *    to `path` as a DSA CSV (`id,lower,upper,size`: id = request number k, lower/upper
 *    = a clock that ticks at every allocation and every free; blocks still live at the
 *    end of the iteration end there). The file is written at the second
 *    iteration_begin or at sfcrt_torch_flush, whichever comes first.
 *  - replay: `path` is the packed CSV (with `offset`). One arena of max(offset + size)
 *    bytes is allocated when replay is configured (sfcrt_torch_configure, or the first
 *    call when the environment configures it); the k-th request of each iteration
 *    (counted from sfcrt_torch_iteration_begin) is served at arena + offset[k] when its
 *    size equals the profile's and no block still live overlaps that range. Anything
 *    else — a different size, more requests than profiled, a live-range conflict, a
 *    request outside an iteration — is served by the fallback allocator and counted, so
 *    the user knows to re-plan (§4.3). The request counter advances either way, so one
 *    miss does not shift the rest of the iteration.
 *  - off: everything goes to the fallback allocator.
 *
 * Configuration: sfcrt_torch_configure, or, if it was not called before the first
 * request, the environment: SFCRT_TORCH_MODE (off|record|replay), SFCRT_TORCH_TRACE
 * (path), SFCRT_TORCH_MAX_REQUESTS (record capacity, default 1048576),
 * SFCRT_TORCH_DEVICE (the arena's device index, default 0: requests on other devices
 * are outside the profile), SFCRT_TORCH_BACKEND (cuda, the default, or host: malloc
 * memory, for tests without a GPU), SFCRT_CUDA_LIBRARY (driver library to dlopen
 * instead of libcuda.so.1).
 *
 * Contract: the functions are thread-safe (one mutex); alloc returns NULL on failure
 * and the reason is in sfcrt_torch_last_error() (PyTorch does NOT raise on NULL: use
 * sfcrt_torch_alloc_checked from libsfcrt_torch.so); nothing prints or aborts. Requests
 * of 0 bytes return NULL without counting. Streams: stream 0 is the legacy default
 * stream. Planned memory freed on one stream and handed to a request on another is
 * ordered by an event (the new stream waits for the free; stream_waits counts it), so
 * no record_stream is needed for planned memory; fallback memory is freed after its
 * stream's queued work. While a request's stream is capturing a CUDA graph, requests
 * fail (SFC_ERR_STATE, capture_refused) and frees are held (capture_frees): nothing
 * capture forbids is called. Functions returning int return an sfc_status_t (0 = OK).
 */
#ifndef SFCRT_TORCH_H
#define SFCRT_TORCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sfcrt_torch_mode {
  SFCRT_TORCH_MODE_OFF = 0,
  SFCRT_TORCH_MODE_RECORD = 1,
  SFCRT_TORCH_MODE_REPLAY = 2
} sfcrt_torch_mode_t;

typedef struct sfcrt_torch_stats {
  uint64_t iterations;        /* sfcrt_torch_iteration_begin calls */
  uint64_t requests;          /* allocations of > 0 bytes */
  uint64_t planned;           /* replay: served at the planned arena offset */
  uint64_t fallback;          /* served by the fallback allocator (sum of the four below
                                 and fallback_stream in replay; every request in record
                                 and off) */
  uint64_t fallback_size;     /* replay: size differs from the profile's k-th request */
  uint64_t fallback_extra;    /* replay: more requests than the profile has */
  uint64_t fallback_conflict; /* replay: the planned range is still occupied */
  uint64_t fallback_outside;  /* replay: before the first iteration_begin; any mode: a
                                 device other than SFCRT_TORCH_DEVICE (never recorded) */
  uint64_t short_iterations;  /* replay: iterations with fewer requests than profiled */
  uint64_t frees;             /* frees of non-NULL pointers */
  uint64_t fallback_frees;    /* ... of fallback memory */
  uint64_t unknown_frees;     /* ... inside the arena but not a live planned block */
  uint64_t failed;            /* allocations that returned NULL */
  uint64_t fallback_bytes_live, fallback_bytes_peak;
  uint64_t arena_bytes; /* replay: the arena, max(offset + size) */
  uint64_t recorded;    /* record: requests in the written trace (0 until written) */
  /* (fields below were added after the first release; older readers ignore them) */
  uint64_t stream_waits;    /* replay: planned memory freed on one stream and handed to a
                               request on another: that stream waited for the free */
  uint64_t fallback_stream; /* replay: ... and the wait could not be set up: fallback */
  uint64_t capture_refused; /* cuda: requests refused because their stream was capturing
                               a CUDA graph (also counted in failed) */
  uint64_t capture_frees;   /* cuda: frees during capture: the memory is kept allocated
                               (a captured graph may still use it) */
} sfcrt_torch_stats_t;

/* The CUDAPluggableAllocator pair (stream is a cudaStream_t; 0 is the legacy default
 * stream). sfcrt_torch_alloc returns NULL on failure, and PyTorch (2.x) does not check:
 * the tensor would sit at address 0. Give PyTorch the raising pair below where it is
 * built; else check sfcrt_torch_get_stats().failed after each step (tools/torch-two-run
 * does). */
void *sfcrt_torch_alloc(size_t size, int device, void *stream);
void sfcrt_torch_free(void *ptr, size_t size, int device, void *stream);

/* As sfcrt_torch_alloc, saying why it failed: SFC_OK with *out set (NULL only for 0
 * bytes), or SFC_ERR_OUT_OF_MEMORY (no device/host memory for the fallback or arena),
 * SFC_ERR_STATE (the stream is capturing a CUDA graph), SFC_ERR_UNAVAILABLE (no
 * driver), SFC_ERR_INVALID_ARGUMENT (bad configuration), SFC_ERR_DEVICE, with *out NULL
 * and the reason in sfcrt_torch_last_error(). */
int sfcrt_torch_alloc_status(size_t size, int device, void *stream, void **out);

/* libsfcrt_torch.so — a small C++ library next to libsfcrt.so, built where CMake finds
 * a C++ compiler — exports the same pair for CUDAPluggableAllocator, except that a
 * failed allocation throws instead of returning NULL: c10::OutOfMemoryError (Python:
 * torch.cuda.OutOfMemoryError) for SFC_ERR_OUT_OF_MEMORY when it was built against
 * PyTorch's C++ headers (SFC_TORCH_C10: torch/include found), else, and for the other
 * statuses, a C++ exception carrying the message ("CUDA out of memory. Tried to
 * allocate ..." for out of memory), which PyTorch turns into a Python exception
 * (a std::bad_alloc subclass; c10::Error, a RuntimeError, with the headers).
 * sfcrt_torch_shim_raises() says which: 2 c10 errors, 1 std exceptions. */
void *sfcrt_torch_alloc_checked(size_t size, int device, void *stream);
void sfcrt_torch_free_checked(void *ptr, size_t size, int device, void *stream);
int sfcrt_torch_shim_raises(void);

/* Sets the mode and its file (record: where to write; replay: the packed CSV to load).
 * Allowed once, before the first request; SFC_ERR_STATE afterwards. Replay loads and
 * checks the CSV here (SFC_ERR_BAD_INPUT with file:line). */
int sfcrt_torch_configure(int mode, const char *path);

/* Starts an iteration: the request counter restarts at 0. */
int sfcrt_torch_iteration_begin(void);

/* Record mode: writes the trace now if it was not written yet (SFC_ERR_STATE when no
 * iteration was begun). Other modes: no-op. */
int sfcrt_torch_flush(void);

void sfcrt_torch_get_stats(sfcrt_torch_stats_t *out);

/* The message of the last failure ("" if none), copied for the calling thread: valid
 * and unchanged until this thread calls sfcrt_torch_last_error again. */
const char *sfcrt_torch_last_error(void);

/* Writes a pending trace, frees the arena and every table, unloads the driver, and
 * returns to the unconfigured state (fallback memory still held by PyTorch is leaked
 * to the process: call it only when PyTorch is done with the allocator). */
int sfcrt_torch_shutdown(void);

#ifdef __cplusplus
}
#endif

#endif /* SFCRT_TORCH_H */
