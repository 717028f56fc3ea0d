/* torch_allocator.c — the PyTorch CUDAPluggableAllocator entry points (sfcrt_torch.h).
 *
 * One process-wide allocator: a torch_match.c matcher behind a mutex, given memory by
 * a backend. The cuda backend (built where cuda.h exists) loads the driver at run
 * time (cuda_loader.c), retains each device's primary context — the one PyTorch and
 * the CUDA runtime use — and pushes/pops it around every driver call (each pop
 * checked), so it works whatever context the calling thread has current; fallback
 * memory is cuMemAlloc, freed after cuStreamSynchronize of the stream PyTorch frees it
 * on (cuMemFree does not promise to wait for queued kernels); the replay arena is one
 * cuMemAlloc made when replay is configured. Stream 0 is the legacy default stream
 * (CU_STREAM_LEGACY). Reuse of planned memory across streams is ordered with events
 * (torch_match.h: an event recorded at the free once a second stream has been seen,
 * else recorded on the freeing stream at the reuse). Every request and free first asks
 * cuStreamIsCapturing: during CUDA graph capture requests are refused with a message
 * and frees are held (nothing that capture forbids is called). The host backend
 * (SFCRT_TORCH_BACKEND=host) uses aligned host memory, so the whole entry-point path
 * (environment, record file, replay) is testable without a GPU. O(1) driver calls per
 * request besides the matcher's work.
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
  int request_device;   /* the device of the request being served (fallback callbacks) */
  void *request_stream; /* ... and its stream (the legacy stream for 0, cuda backend) */
  int arena_device;
  void *arena;
  uint64_t arena_bytes;
  int trace_written;
  char last_error[SFC_ERROR_MESSAGE_BYTES];
  sfc_status_t last_status; /* of the last failure */
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  sfcrt_cuda_driver_t drv;
  CUcontext ctx[TORCH_MAX_DEVICES]; /* retained primary contexts */
  void *first_stream;               /* the first stream a request came on */
  int multi_stream;                 /* a request came on another stream since */
  CUevent *ev;                      /* replay: [plan count] free events, made on first use */
  size_t ev_count;
  CUevent ev_now; /* a reuse whose free recorded no event: recorded at the reuse */
#endif
} g;

/* A copy of last_error per thread: the pointer sfcrt_torch_last_error returns stays
 * valid and unchanged until that thread calls it again, whatever other threads do. */
static _Thread_local char tl_error[SFC_ERROR_MESSAGE_BYTES];

static int fail(const sfc_error_t *err) {
  snprintf(g.last_error, sizeof(g.last_error), "%s", err->message);
  g.last_status = err->status;
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
/* Pops what cuda_enter pushed; st, or the pop's failure when st is OK. */
static sfc_status_t cuda_leave(sfc_status_t st, sfc_error_t *err) {
  CUcontext popped = NULL;
  CUresult r = g.drv.fn.cuCtxPopCurrent(&popped);
  if (st != SFC_OK)
    return st;
  return sfcrt_cuda_check(&g.drv, r, "cuCtxPopCurrent", err);
}

/* Handle 0 is the legacy default stream (PyTorch's default stream). */
static CUstream cuda_stream(void *stream) {
  return stream ? (CUstream)stream : CU_STREAM_LEGACY;
}

/* 1 when `stream` is capturing a CUDA graph (or is the legacy stream while a blocking
 * stream captures), 0 when not; SFC_ERR_* < 0 never: errors return -1 with err set.
 * The caller has entered the stream's context. */
static int cuda_capturing(void *stream, sfc_error_t *err) {
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = g.drv.fn.cuStreamIsCapturing(cuda_stream(stream), &cs);
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT)
    return 1;
  if (sfcrt_cuda_check(&g.drv, r, "cuStreamIsCapturing", err) != SFC_OK)
    return -1;
  return cs != CU_STREAM_CAPTURE_STATUS_NONE;
}

/* Capture state of a request's stream: 1 capturing, 0 not, -1 error (err set). */
static int request_capturing(int device, void *stream, sfc_error_t *err) {
  if (g.backend != BACKEND_CUDA)
    return 0;
  if (cuda_enter(device, err) != SFC_OK)
    return -1;
  int cap = cuda_capturing(stream, err);
  if (cuda_leave(SFC_OK, err) != SFC_OK)
    return -1;
  return cap;
}

/* ---- stream ordering of planned memory (torch_match.h) ------------------------------ */

static CUevent *sync_event(uint64_t k, sfc_error_t *err) {
  CUevent *e = k == UINT64_MAX ? &g.ev_now : k < g.ev_count ? &g.ev[k] : NULL;
  if (!e) {
    sfc_error_set(err, SFC_ERR_INTERNAL, "no event slot for request %llu", (unsigned long long)k);
    return NULL;
  }
  if (!*e && sfcrt_cuda_check(&g.drv, g.drv.fn.cuEventCreate(e, CU_EVENT_DISABLE_TIMING),
                              "cuEventCreate", err) != SFC_OK) {
    *e = NULL;
    return NULL;
  }
  return e;
}

static int sync_freed(void *user, uint64_t k, void *stream) {
  if (!g.multi_stream) /* one stream so far: a reuse on another one records then */
    return 0;
  sfc_error_t err;
  if (cuda_enter(g.arena_device, &err) != SFC_OK)
    return 0;
  CUevent *e = sync_event(k, &err);
  sfc_status_t st = e ? sfcrt_cuda_check(&g.drv, g.drv.fn.cuEventRecord(*e, cuda_stream(stream)),
                                         "cuEventRecord", &err)
                      : SFC_ERR_DEVICE;
  return cuda_leave(st, &err) == SFC_OK;
}

static sfc_status_t sync_reuse(void *user, void *stream, uint64_t k, void *old_stream,
                               int recorded) {
  sfc_error_t err;
  SFC_TRY(cuda_enter(g.arena_device, &err));
  sfc_status_t st = SFC_OK;
  CUevent *e = NULL;
  int cap = recorded ? 0 : cuda_capturing(old_stream, &err);
  if (cap != 0)
    st = cap > 0 ? sfc_error_set(&err, SFC_ERR_STATE,
                                 "planned memory freed on stream %p, which is capturing a CUDA "
                                 "graph, cannot be ordered before stream %p",
                                 old_stream, stream)
                 : err.status;
  if (st == SFC_OK && !(e = sync_event(recorded ? k : UINT64_MAX, &err)))
    st = err.status;
  if (st == SFC_OK && !recorded)
    st = sfcrt_cuda_check(&g.drv, g.drv.fn.cuEventRecord(*e, cuda_stream(old_stream)),
                          "cuEventRecord", &err);
  if (st == SFC_OK)
    st = sfcrt_cuda_check(&g.drv, g.drv.fn.cuStreamWaitEvent(cuda_stream(stream), *e, 0),
                          "cuStreamWaitEvent", &err);
  st = cuda_leave(st, &err);
  if (st != SFC_OK)
    fail(&err);
  return st;
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
  if (cuda_leave(st, err) != SFC_OK) {
    if (st == SFC_OK)
      g.drv.fn.cuMemFree(p); /* the context stack is broken: report, keep nothing */
    return NULL;
  }
  return (void *)(uintptr_t)p;
#else
  sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                "libsfcrt was built without cuda.h: only SFCRT_TORCH_BACKEND=host works");
  return NULL;
#endif
}

/* Frees device memory once the work queued on `stream` — the stream PyTorch frees the
 * block on — has completed (whole_context: every stream of the context, e.g. the
 * arena at shutdown). cuMemFree itself may or may not wait: the driver promises
 * nothing. */
static void mem_free(int device, void *p, void *stream, int whole_context) {
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
      whole_context
          ? sfcrt_cuda_check(&g.drv, g.drv.fn.cuCtxSynchronize(), "cuCtxSynchronize", &err)
          : sfcrt_cuda_check(&g.drv, g.drv.fn.cuStreamSynchronize(cuda_stream(stream)),
                             "cuStreamSynchronize", &err);
  if (st == SFC_OK)
    st = sfcrt_cuda_check(&g.drv, g.drv.fn.cuMemFree((CUdeviceptr)(uintptr_t)p), "cuMemFree", &err);
  if (cuda_leave(st, &err) != SFC_OK)
    fail(&err);
#else
  (void)device;
  (void)stream;
  (void)whole_context;
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
  mem_free(g.request_device, ptr, g.request_stream, 0);
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
  char *dev_end = NULL;
  long dev_n = dev ? strtol(dev, &dev_end, 10) : 0;
  if (dev && (!*dev || *dev_end || dev_n < 0 || dev_n >= TORCH_MAX_DEVICES))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "SFCRT_TORCH_DEVICE=%.64s: expected a device index 0..%d", dev,
                         TORCH_MAX_DEVICES - 1);
  g.arena_device = (int)dev_n;
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
    size_t count = plan.count;
    sfc_status_t st =
        sfcrt_torch_match_init_replay(&g.m, &plan, fb_alloc, fb_free, NULL, NULL, err);
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
    if (st == SFC_OK && g.backend == BACKEND_CUDA) {
      g.ev = calloc(count ? count : 1, sizeof(CUevent));
      g.ev_count = g.ev ? count : 0;
      if (!g.ev) {
        sfcrt_torch_match_deinit(&g.m);
        st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "no memory for %zu events", count);
      }
    }
    if (st == SFC_OK && g.backend == BACKEND_CUDA) {
      sfcrt_torch_sync_t sync = {sync_freed, sync_reuse, NULL};
      sfcrt_torch_match_set_sync(&g.m, &sync);
    }
#else
    (void)count;
#endif
    if (st != SFC_OK) {
      sfcrt_torch_trace_free(&plan, NULL);
      mem_free(g.arena_device, arena, NULL, 1);
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
  void *p = NULL;
  sfcrt_torch_alloc_status(size, device, stream, &p);
  return p;
}

int sfcrt_torch_alloc_status(size_t size, int device, void *stream, void **out) {
  sfc_error_t err;
  void *p = NULL;
  int rc = SFC_OK;
  pthread_mutex_lock(&g_lock);
  g.last_status = SFC_OK;
  if (!g.configured && configure_from_env_locked(&err) != SFC_OK) {
    fail(&err);
  } else if (size > 0) {
    g.request_device = device;
    g.request_stream = stream;
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
    if (g.backend == BACKEND_CUDA) {
      g.request_stream = cuda_stream(stream);
      if (!g.first_stream)
        g.first_stream = g.request_stream;
      else if (g.request_stream != g.first_stream)
        g.multi_stream = 1;
    }
#endif
    int cap = request_capturing(device, stream, &err);
    if (cap != 0) {
      if (cap > 0)
        sfc_error_set(&err, SFC_ERR_STATE,
                      "sfcrt_torch_alloc: %zu bytes on device %d, stream %p, which is being "
                      "captured into a CUDA graph (torch.cuda.graph): the sfc allocator does not "
                      "serve graph capture (its memory is reused every iteration and its "
                      "fallback calls cuMemAlloc, which capture forbids); capture with PyTorch's "
                      "own allocator",
                      size, device, stream);
      fail(&err);
      sfcrt_torch_match_alloc_refused(&g.m, size, cap > 0);
    } else if (device != g.arena_device) { /* another GPU: outside the profile and arena */
      p = sfcrt_torch_match_alloc_unprofiled(&g.m, size);
    } else {
      p = sfcrt_torch_match_alloc_on(&g.m, size, g.request_stream);
    }
  }
  if (!p && size > 0) {
    /* the reason's status; a failure nobody described is the matcher's fallback */
    rc = g.last_status != SFC_OK ? (int)g.last_status : (int)SFC_ERR_OUT_OF_MEMORY;
    if (g.last_status == SFC_OK)
      snprintf(g.last_error, sizeof(g.last_error), "no memory for %zu bytes on device %d", size,
               device);
  }
  pthread_mutex_unlock(&g_lock);
  *out = p;
  return rc;
}

void sfcrt_torch_free(void *ptr, size_t size, int device, void *stream) {
  sfc_error_t err;
  pthread_mutex_lock(&g_lock);
  g.request_device = device;
  g.request_stream = stream;
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  if (g.backend == BACKEND_CUDA)
    g.request_stream = cuda_stream(stream);
#endif
  if (g.configured && ptr) {
    /* during capture the block may belong to the graph: keep it, call nothing */
    int cap = request_capturing(device, stream, &err);
    if (cap < 0)
      fail(&err);
    if (cap != 0)
      sfcrt_torch_match_free_held(&g.m, ptr, size);
    else
      sfcrt_torch_match_free_on(&g.m, ptr, size, g.request_stream);
  }
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
  pthread_mutex_lock(&g_lock);
  snprintf(tl_error, sizeof(tl_error), "%s", g.last_error);
  pthread_mutex_unlock(&g_lock);
  return tl_error;
}

int sfcrt_torch_shutdown(void) {
  sfc_error_t err;
  int rc = 0;
  pthread_mutex_lock(&g_lock);
  if (g.configured && g.mode == SFCRT_TORCH_MODE_RECORD && g.m.record_state != 0 &&
      write_trace_locked(&err) != SFC_OK)
    rc = fail(&err);
  if (g.arena)
    mem_free(g.arena_device, g.arena, NULL, 1);
  sfcrt_torch_match_deinit(&g.m);
#if defined(SFCRT_CUDA_H) && SFCRT_CUDA_H
  if (g.drv.fn.cuInit && (g.ev || g.ev_now)) {
    sfc_error_t ignored;
    if (cuda_enter(g.arena_device, &ignored) == SFC_OK) {
      for (size_t k = 0; k < g.ev_count; k++)
        if (g.ev[k])
          g.drv.fn.cuEventDestroy(g.ev[k]);
      if (g.ev_now)
        g.drv.fn.cuEventDestroy(g.ev_now);
      cuda_leave(SFC_OK, &ignored);
    }
  }
  free(g.ev);
  g.ev = NULL;
  g.ev_count = 0;
  g.ev_now = NULL;
  g.first_stream = NULL;
  g.multi_stream = 0;
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
