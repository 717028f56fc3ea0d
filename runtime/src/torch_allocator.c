/* torch_allocator.c — the PyTorch CUDAPluggableAllocator entry points (sfcrt_torch.h).
 *
 * One process-wide allocator: a torch_match.c matcher behind a mutex, given memory by
 * a backend. The cuda backend (built where cuda.h exists) loads the driver at run
 * time (cuda_loader.c), retains each device's primary context — the one PyTorch and
 * the CUDA runtime use — and pushes/pops it around every driver call, so it works
 * whatever context the calling thread has current; fallback memory is cuMemAlloc, the
 * replay arena one cuMemAlloc made when replay is configured. The host backend
 * (SFCRT_TORCH_BACKEND=host) uses aligned host memory, so the whole entry-point path
 * (environment, record file, replay) is testable without a GPU. O(1) work per request
 * besides the matcher's.
 */
#include "sfcrt_torch.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "torch_match.h"
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
#include "cuda_loader.h"
#endif

#define TORCH_MAX_DEVICES 64
#define TORCH_ALIGN       512 /* what PyTorch's caching allocator guarantees */

enum { BACKEND_CUDA = 0, BACKEND_HOST = 1 };

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static struct {
  int configured;
  int backend;
  sfcrt_torch_mode_t mode;
  char path[4096];
  sfcrt_torch_match_t m;
  int request_device; /* the device of the request being served (fallback callbacks) */
  int arena_device;
  void *arena;
  uint64_t arena_bytes;
  int trace_written;
  char last_error[SFC_ERROR_MESSAGE_BYTES];
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  sfcrt_cuda_driver_t drv;
  CUcontext ctx[TORCH_MAX_DEVICES]; /* retained primary contexts */
#endif
} g;

static int fail(const sfc_error_t *err) {
  snprintf(g.last_error, sizeof(g.last_error), "%s", err->message);
  return (int)err->status;
}

/* ---- backends ----------------------------------------------------------------------- */

#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
static sfc_status_t cuda_enter(int device, sfc_error_t *err) {
  if (device < 0 || device >= TORCH_MAX_DEVICES)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "device %d is not in 0..%d", device,
                         TORCH_MAX_DEVICES - 1);
  if (!g.drv.fn.cuInit)
    SFC_TRY(sfcrt_cuda_driver_load(&g.drv, err));
  if (!g.ctx[device]) {
    CUdevice dev;
    SFC_TRY(sfcrt_cuda_check(&g.drv, g.drv.fn.cuDeviceGet(&dev, device), "cuDeviceGet", err));
    SFC_TRY(sfcrt_cuda_check(&g.drv, g.drv.fn.cuDevicePrimaryCtxRetain(&g.ctx[device], dev),
                             "cuDevicePrimaryCtxRetain", err));
  }
  return sfcrt_cuda_check(&g.drv, g.drv.fn.cuCtxPushCurrent(g.ctx[device]), "cuCtxPushCurrent",
                          err);
}
static void cuda_leave(void) {
  CUcontext popped;
  g.drv.fn.cuCtxPopCurrent(&popped);
}
#endif

/* Device (or host-backend) memory of `bytes`; NULL with err set on failure. */
static void *mem_alloc(int device, size_t bytes, sfc_error_t *err) {
  if (g.backend == BACKEND_HOST) {
    void *p = NULL;
    size_t rounded = (bytes + TORCH_ALIGN - 1) / TORCH_ALIGN * TORCH_ALIGN;
    if (rounded < bytes || posix_memalign(&p, TORCH_ALIGN, rounded) != 0) {
      sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "host backend: no memory for %zu bytes", bytes);
      return NULL;
    }
    return p;
  }
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  if (cuda_enter(device, err) != SFC_OK)
    return NULL;
  CUdeviceptr p = 0;
  sfc_status_t st = sfcrt_cuda_check(&g.drv, g.drv.fn.cuMemAlloc(&p, bytes), "cuMemAlloc", err);
  cuda_leave();
  return st == SFC_OK ? (void *)(uintptr_t)p : NULL;
#else
  sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                "libsfcrt was built without cuda.h: only SFCRT_TORCH_BACKEND=host works");
  return NULL;
#endif
}

static void mem_free(int device, void *p) {
  if (!p)
    return;
  if (g.backend == BACKEND_HOST) {
    free(p);
    return;
  }
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  sfc_error_t err;
  if (cuda_enter(device, &err) != SFC_OK) {
    fail(&err);
    return;
  }
  sfc_status_t st =
      sfcrt_cuda_check(&g.drv, g.drv.fn.cuMemFree((CUdeviceptr)(uintptr_t)p), "cuMemFree", &err);
  cuda_leave();
  if (st != SFC_OK)
    fail(&err);
#endif
}

static void *fb_alloc(void *user, size_t size) {
  sfc_error_t err;
  void *p = mem_alloc(g.request_device, size, &err);
  if (!p)
    fail(&err);
  return p;
}

static void fb_free(void *user, void *ptr, size_t size) {
  mem_free(g.request_device, ptr);
}

/* ---- configuration ------------------------------------------------------------------ */

static sfc_status_t configure_locked(int mode, const char *path, sfc_error_t *err) {
  if (g.configured)
    return sfc_error_set(err, SFC_ERR_STATE,
                         "sfcrt_torch_configure: already configured (call it once, before the "
                         "first allocation)");
  if (mode < SFCRT_TORCH_MODE_OFF || mode > SFCRT_TORCH_MODE_REPLAY)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "sfcrt_torch_configure: mode %d is not 0 (off), 1 (record) or 2 (replay)",
                         mode);
  if (mode != SFCRT_TORCH_MODE_OFF && (!path || !*path))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "sfcrt_torch_configure: record and replay need a trace path");
  if (path && strlen(path) >= sizeof(g.path))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "sfcrt_torch_configure: path too long");
  const char *backend = getenv("SFCRT_TORCH_BACKEND");
  if (backend && strcmp(backend, "host") != 0 && strcmp(backend, "cuda") != 0)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "SFCRT_TORCH_BACKEND=%.64s: expected cuda or host", backend);
  g.backend = backend && strcmp(backend, "host") == 0 ? BACKEND_HOST : BACKEND_CUDA;
  const char *dev = getenv("SFCRT_TORCH_DEVICE");
  g.arena_device = dev ? atoi(dev) : 0;
  snprintf(g.path, sizeof(g.path), "%s", path ? path : "");
  g.mode = (sfcrt_torch_mode_t)mode;
  g.trace_written = 0;

  if (mode == SFCRT_TORCH_MODE_OFF) {
    sfcrt_torch_match_init_off(&g.m, fb_alloc, fb_free, NULL);
  } else if (mode == SFCRT_TORCH_MODE_RECORD) {
    const char *cap_s = getenv("SFCRT_TORCH_MAX_REQUESTS");
    char *end = NULL;
    unsigned long long cap = cap_s ? strtoull(cap_s, &end, 10) : 1048576ull;
    if (cap_s && (!*cap_s || *end))
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "SFCRT_TORCH_MAX_REQUESTS=%.64s: expected a positive integer", cap_s);
    SFC_TRY(sfcrt_torch_match_init_record(&g.m, (size_t)cap, fb_alloc, fb_free, NULL, NULL, err));
  } else {
    sfcrt_torch_trace_t plan;
    SFC_TRY(sfcrt_torch_trace_read_file(path, true, NULL, &plan, err));
    for (size_t k = 0; k < plan.count; k++)
      if (plan.blocks[k].offset % TORCH_ALIGN) {
        unsigned long long off = (unsigned long long)plan.blocks[k].offset;
        sfcrt_torch_trace_free(&plan, NULL);
        return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                             "%s: request %zu has offset %llu, not a multiple of %d: pack with "
                             "`sfc pack --alignment %d`",
                             path, k, off, TORCH_ALIGN, TORCH_ALIGN);
      }
    uint64_t bytes = sfcrt_torch_trace_arena_bytes(&plan);
    void *arena = NULL;
    if (bytes > 0) {
      if (bytes > SIZE_MAX) {
        sfcrt_torch_trace_free(&plan, NULL);
        return sfc_error_set(err, SFC_ERR_LIMIT, "arena of %llu bytes", (unsigned long long)bytes);
      }
      arena = mem_alloc(g.arena_device, (size_t)bytes, err);
      if (!arena) {
        sfcrt_torch_trace_free(&plan, NULL);
        sfc_error_prefix(err, "replay arena");
        return err->status;
      }
    }
    sfc_status_t st =
        sfcrt_torch_match_init_replay(&g.m, &plan, fb_alloc, fb_free, NULL, NULL, err);
    if (st != SFC_OK) {
      sfcrt_torch_trace_free(&plan, NULL);
      mem_free(g.arena_device, arena);
      return st;
    }
    g.arena = arena;
    g.arena_bytes = bytes;
    sfcrt_torch_match_set_arena(&g.m, arena);
  }
  g.configured = 1;
  return SFC_OK;
}

/* First request without sfcrt_torch_configure: the environment decides. */
static sfc_status_t configure_from_env_locked(sfc_error_t *err) {
  const char *mode_s = getenv("SFCRT_TORCH_MODE");
  const char *path = getenv("SFCRT_TORCH_TRACE");
  int mode = SFCRT_TORCH_MODE_OFF;
  if (!mode_s || !*mode_s || strcmp(mode_s, "off") == 0)
    mode = SFCRT_TORCH_MODE_OFF;
  else if (strcmp(mode_s, "record") == 0)
    mode = SFCRT_TORCH_MODE_RECORD;
  else if (strcmp(mode_s, "replay") == 0)
    mode = SFCRT_TORCH_MODE_REPLAY;
  else
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "SFCRT_TORCH_MODE=%.64s: expected off, record or replay", mode_s);
  return configure_locked(mode, path, err);
}

static sfc_status_t write_trace_locked(sfc_error_t *err) {
  if (g.mode != SFCRT_TORCH_MODE_RECORD || g.trace_written)
    return SFC_OK;
  SFC_TRY(sfcrt_torch_match_record_finish(&g.m, err));
  SFC_TRY(sfcrt_torch_trace_write_file(g.path, g.m.rec, g.m.rec_count, false, err));
  g.trace_written = 1;
  return SFC_OK;
}

/* ---- entry points ----------------------------------------------------------------- */

int sfcrt_torch_configure(int mode, const char *path) {
  sfc_error_t err;
  pthread_mutex_lock(&g_lock);
  sfc_status_t st = configure_locked(mode, path, &err);
  int rc = st == SFC_OK ? 0 : fail(&err);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

void *sfcrt_torch_alloc(size_t size, int device, void *stream) {
  sfc_error_t err;
  void *p = NULL;
  pthread_mutex_lock(&g_lock);
  if (!g.configured && configure_from_env_locked(&err) != SFC_OK) {
    fail(&err);
  } else {
    g.request_device = device;
    if (device != g.arena_device) /* another GPU: outside the profile and the arena */
      p = sfcrt_torch_match_alloc_unprofiled(&g.m, size);
    else
      p = sfcrt_torch_match_alloc(&g.m, size);
  }
  pthread_mutex_unlock(&g_lock);
  return p;
}

void sfcrt_torch_free(void *ptr, size_t size, int device, void *stream) {
  pthread_mutex_lock(&g_lock);
  g.request_device = device;
  if (g.configured)
    sfcrt_torch_match_free(&g.m, ptr, size);
  pthread_mutex_unlock(&g_lock);
}

int sfcrt_torch_iteration_begin(void) {
  sfc_error_t err;
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  if (!g.configured && configure_from_env_locked(&err) != SFC_OK) {
    rc = fail(&err);
  } else {
    bool complete = false;
    sfcrt_torch_match_iteration_begin(&g.m, &complete);
    if (complete && write_trace_locked(&err) != SFC_OK)
      rc = fail(&err);
  }
  pthread_mutex_unlock(&g_lock);
  return rc;
}

int sfcrt_torch_flush(void) {
  sfc_error_t err;
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  if (g.configured && write_trace_locked(&err) != SFC_OK)
    rc = fail(&err);
  pthread_mutex_unlock(&g_lock);
  return rc;
}

void sfcrt_torch_get_stats(sfcrt_torch_stats_t *out) {
  pthread_mutex_lock(&g_lock);
  *out = g.m.stats;
  pthread_mutex_unlock(&g_lock);
}

const char *sfcrt_torch_last_error(void) {
  return g.last_error;
}

int sfcrt_torch_shutdown(void) {
  sfc_error_t err;
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  if (g.configured && g.mode == SFCRT_TORCH_MODE_RECORD && g.m.record_state != 0 &&
      write_trace_locked(&err) != SFC_OK)
    rc = fail(&err);
  if (g.arena)
    mem_free(g.arena_device, g.arena);
  sfcrt_torch_match_deinit(&g.m);
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  if (g.drv.fn.cuInit) {
    for (int d = 0; d < TORCH_MAX_DEVICES; d++)
      if (g.ctx[d]) {
        CUdevice dev;
        if (g.drv.fn.cuDeviceGet(&dev, d) == CUDA_SUCCESS)
          g.drv.fn.cuDevicePrimaryCtxRelease(dev);
      }
    sfcrt_cuda_driver_unload(&g.drv);
  }
  memset(g.ctx, 0, sizeof(g.ctx));
#endif
  g.configured = 0;
  g.arena = NULL;
  g.arena_bytes = 0;
  g.trace_written = 0;
  pthread_mutex_unlock(&g_lock);
  return rc;
}
