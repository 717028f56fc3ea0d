/* fake_cuda.c — the fake CUDA driver (see fake_cuda.h). Test code: fixed-size tables,
 * linear searches, one thread; misuse by the code under test is counted, never fatal.
 *
 * Streams hold FIFO lists of queued operations. Every operation gets a global sequence
 * number; a dependency is (stream, seq): satisfied once that stream has run every
 * operation up to seq (streams run in order, so one number per stream says it all).
 * force(stream, seq) runs the stream's operations up to seq, each after forcing its
 * own dependencies first. Dependencies always point to earlier sequence numbers, so
 * there are no cycles.
 */
#define _GNU_SOURCE
#include "fake_cuda.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define FAKE_MAX     4096
#define FAKE_DEVICES 8
#define FAKE_STREAMS 1024
#define STREAM_MAGIC 0x5f5eu
#define EVENT_MAGIC  0xe7e7u

typedef struct {
  int fd;
  size_t size;
  int device;
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
  size_t handle;  /* index */
  int access_dev; /* -1 = no access granted yet */
  int live;
} fake_mapping_t;
typedef struct {
  uintptr_t base;
  size_t size;
  int device;
  int live; /* 0 = freed (kept to recognise use after free) */
} fake_alloc_t;

struct fake_stream;
typedef struct fake_dep {
  struct fake_stream *s;
  uint64_t seq;
} fake_dep_t;

enum { OP_H2D, OP_D2H, OP_D2D, OP_MEMSET, OP_MARK };

typedef struct fake_op {
  struct fake_op *next;
  uint64_t seq;
  int kind;
  uintptr_t dst, src; /* device or host addresses, by kind */
  size_t bytes;
  uint32_t value;
  fake_dep_t deps[4];
  size_t ndeps;
  fake_dep_t *more; /* further dependencies (legacy stream: many blocking streams) */
  size_t nmore;
} fake_op_t;

typedef struct fake_ctx {
  int device;
  struct fake_stream *legacy, *per_thread;
} fake_ctx_t;

typedef struct fake_stream {
  unsigned magic;
  fake_ctx_t *ctx;
  unsigned flags;
  int special; /* 1 legacy, 2 per-thread default */
  int live;
  int capturing; /* 0 none, 1 active, 2 invalidated */
  fake_op_t *head, *tail;
  uint64_t last_seq, done_seq;
} fake_stream_t;

typedef struct fake_event {
  unsigned magic;
  unsigned flags;
  fake_stream_t *s; /* last record, NULL = never recorded */
  uint64_t seq;
  int captured; /* recorded into a capture */
} fake_event_t;

static fake_cuda_state_t st_;
static fake_handle_t handles_[FAKE_MAX];
static fake_reservation_t res_[FAKE_MAX];
static fake_mapping_t maps_[FAKE_MAX];
static fake_alloc_t allocs_[FAKE_MAX];
static fake_alloc_t hosts_[FAKE_MAX];
static fake_ctx_t ctxs_[FAKE_DEVICES];
static fake_stream_t *streams_[FAKE_STREAMS]; /* every stream ever made (kept for deps) */
static size_t stream_count_;
static fake_ctx_t *stack_[64];
static int depth_;
static uint64_t seq_;
static int inited_;

static void drop_all(void);

fake_cuda_state_t *fake_cuda_state(void) {
  if (!inited_)
    fake_cuda_reset();
  return &st_;
}

void fake_cuda_reset(void) {
  if (inited_)
    drop_all();
  memset(&st_, 0, sizeof(st_));
  st_.granularity = 64 * 1024;
  st_.driver_version = 12080;
  st_.device_count = 1;
  memset(allocs_, 0, sizeof(allocs_));
  memset(hosts_, 0, sizeof(hosts_));
  depth_ = 0;
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
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED",
     "operation not permitted when stream is capturing"},
    {CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED",
     "operation failed due to a previous error during capture"},
    {CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION",
     "dependency created on uncaptured work in another stream"},
    {CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT",
     "operation would make the legacy stream depend on a capturing blocking stream"},
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
  if (ordinal < 0 || ordinal >= st_.device_count || ordinal >= FAKE_DEVICES)
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
  if (d < 0 || d >= st_.device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  *v = 1; /* VMM supported, and any other yes/no attribute */
  return CUDA_SUCCESS;
}

/* ---- contexts and streams ------------------------------------------------------------ */

static fake_stream_t *stream_new(fake_ctx_t *ctx, unsigned flags, int special) {
  if (stream_count_ == FAKE_STREAMS)
    return NULL;
  fake_stream_t *s = calloc(1, sizeof(*s));
  if (!s)
    return NULL;
  s->magic = STREAM_MAGIC;
  s->ctx = ctx;
  s->flags = flags;
  s->special = special;
  s->live = 1;
  streams_[stream_count_++] = s;
  return s;
}

static fake_ctx_t *ctx_of_device(int device) {
  fake_ctx_t *c = &ctxs_[device];
  c->device = device;
  if (!c->legacy)
    c->legacy = stream_new(c, 0, 1);
  if (!c->per_thread)
    c->per_thread = stream_new(c, 0, 2);
  return c;
}

static fake_ctx_t *ctx_valid(CUcontext c) {
  for (int d = 0; d < FAKE_DEVICES; d++)
    if ((void *)c == (void *)&ctxs_[d])
      return &ctxs_[d];
  return NULL;
}

static fake_ctx_t *current_ctx(void) {
  return depth_ > 0 ? stack_[depth_ - 1] : NULL;
}

/* The stream a handle names; NULL (with *r set) when it names none. */
static fake_stream_t *stream_of(CUstream h, CUresult *r) {
  *r = CUDA_SUCCESS;
  if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
    fake_ctx_t *c = current_ctx();
    if (!c) {
      *r = CUDA_ERROR_INVALID_CONTEXT;
      return NULL;
    }
    return h == CU_STREAM_PER_THREAD ? c->per_thread : c->legacy;
  }
  fake_stream_t *s = (fake_stream_t *)(void *)h;
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i] == s && s->magic == STREAM_MAGIC && s->live)
      return s;
  violate("unknown or destroyed stream %p", (void *)h);
  *r = CUDA_ERROR_INVALID_HANDLE;
  return NULL;
}

static int blocking(const fake_stream_t *s) {
  return s->special != 1 && !(s->flags & CU_STREAM_NON_BLOCKING);
}

/* A blocking stream of s's context is capturing (the legacy stream is then unusable). */
static int blocking_capture(const fake_ctx_t *c) {
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i]->live && streams_[i]->ctx == c && streams_[i]->capturing &&
        blocking(streams_[i]))
      return 1;
  return 0;
}

static int any_capture(void) {
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i]->live && streams_[i]->capturing)
      return 1;
  return 0;
}

/* A call that capture forbids: the capture is invalidated. */
static CUresult capture_error(const char *call, CUresult r) {
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i]->live && streams_[i]->capturing)
      streams_[i]->capturing = 2;
  violate("%s during stream capture (capture invalidated)", call);
  return r;
}

static CUresult CUDAAPI f_cuDevicePrimaryCtxRetain(CUcontext *c, CUdevice d) {
  ENTER("cuDevicePrimaryCtxRetain");
  if (d < 0 || d >= st_.device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  st_.ctx_retained++;
  *c = (CUcontext)(void *)ctx_of_device(d);
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
  fake_ctx_t *x = ctx_valid(c);
  if (!x) {
    violate("cuCtxPushCurrent of an unknown context %p", (void *)c);
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  if (depth_ == (int)(sizeof(stack_) / sizeof(stack_[0])))
    return CUDA_ERROR_INVALID_VALUE;
  stack_[depth_++] = x;
  st_.ctx_pushed++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxPopCurrent(CUcontext *c) {
  ENTER("cuCtxPopCurrent");
  if (depth_ <= 0) {
    violate("cuCtxPopCurrent with an empty stack");
    return CUDA_ERROR_INVALID_CONTEXT;
  }
  fake_ctx_t *x = stack_[--depth_];
  st_.ctx_pushed--;
  if (c)
    *c = (CUcontext)(void *)x;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxGetCurrent(CUcontext *c) {
  ENTER("cuCtxGetCurrent");
  *c = (CUcontext)(void *)current_ctx();
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxGetDevice(CUdevice *d) {
  ENTER("cuCtxGetDevice");
  fake_ctx_t *c = current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  *d = c->device;
  return CUDA_SUCCESS;
}

/* ---- memory classification ------------------------------------------------------------ */

static fake_alloc_t *alloc_containing(fake_alloc_t *table, uintptr_t p, size_t n, int any) {
  for (size_t i = 0; i < FAKE_MAX; i++)
    if ((table[i].live || (any && table[i].size)) && p >= table[i].base &&
        p + n <= table[i].base + table[i].size)
      return &table[i];
  return NULL;
}

static fake_reservation_t *reservation_containing(uintptr_t p) {
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (res_[i].live && p >= res_[i].base && p < res_[i].base + res_[i].size)
      return &res_[i];
  return NULL;
}

/* 1 when device `dev` may access [p, p + n) of device memory; else a violation. */
static int device_range_ok(uintptr_t p, size_t n, int dev, const char *what) {
  if (n == 0)
    return 1;
  fake_alloc_t *a = alloc_containing(allocs_, p, n, 0);
  if (a) {
    if (a->device != dev) {
      violate("%s: device %d touched 0x%llx, memory of device %d", what, dev, (unsigned long long)p,
              a->device);
      return 0;
    }
    return 1;
  }
  if (reservation_containing(p)) {
    for (uintptr_t at = p; at < p + n;) {
      size_t j = 0;
      while (j < FAKE_MAX &&
             !(maps_[j].live && at >= maps_[j].addr && at < maps_[j].addr + maps_[j].size))
        j++;
      if (j == FAKE_MAX) {
        violate("%s: touched unmapped virtual address 0x%llx", what, (unsigned long long)at);
        return 0;
      }
      if (maps_[j].access_dev != dev) {
        violate("%s: device %d touched 0x%llx, mapped without access for it", what, dev,
                (unsigned long long)at);
        return 0;
      }
      at = maps_[j].addr + maps_[j].size;
    }
    return 1;
  }
  if (alloc_containing(allocs_, p, n, 1))
    violate("%s: touched 0x%llx after cuMemFree", what, (unsigned long long)p);
  else
    violate("%s: 0x%llx+%zu is not device memory", what, (unsigned long long)p, n);
  return 0;
}

static int host_range_ok(uintptr_t p, size_t n, const char *what) {
  if (n && !alloc_containing(hosts_, p, n, 0) && alloc_containing(hosts_, p, n, 1)) {
    violate("%s: touched pinned memory 0x%llx after cuMemFreeHost", what, (unsigned long long)p);
    return 0;
  }
  return 1;
}

/* ---- operations --------------------------------------------------------------------- */

static void force(fake_stream_t *s, uint64_t seq);

static int dep_done(const fake_dep_t *d) {
  return d->s == NULL || d->s->done_seq >= d->seq;
}

static void op_run(fake_stream_t *s, fake_op_t *op) {
  int dev = s->ctx->device, ok = 1;
  switch (op->kind) {
    case OP_H2D:
      ok = device_range_ok(op->dst, op->bytes, dev, "cuMemcpyHtoDAsync") &&
           host_range_ok(op->src, op->bytes, "cuMemcpyHtoDAsync");
      if (ok)
        memcpy((void *)op->dst, (const void *)op->src, op->bytes);
      break;
    case OP_D2H:
      ok = device_range_ok(op->src, op->bytes, dev, "cuMemcpyDtoHAsync") &&
           host_range_ok(op->dst, op->bytes, "cuMemcpyDtoHAsync");
      if (ok)
        memcpy((void *)op->dst, (const void *)op->src, op->bytes);
      break;
    case OP_D2D:
      ok = device_range_ok(op->src, op->bytes, dev, "cuMemcpyDtoDAsync") &&
           device_range_ok(op->dst, op->bytes, dev, "cuMemcpyDtoDAsync");
      if (ok)
        memmove((void *)op->dst, (const void *)op->src, op->bytes);
      break;
    case OP_MEMSET:
      ok = device_range_ok(op->dst, op->bytes * 4, dev, "cuMemsetD32Async");
      for (size_t i = 0; ok && i < op->bytes; i++)
        memcpy((char *)op->dst + 4 * i, &op->value, 4);
      break;
    default:
      break;
  }
  if (ok)
    st_.ops_run++;
  else
    st_.ops_skipped++;
}

/* Runs s's queued operations up to seq, each after what it depends on. */
static void force(fake_stream_t *s, uint64_t seq) {
  while (s->done_seq < seq && s->head) {
    fake_op_t *op = s->head;
    for (size_t i = 0; i < op->ndeps; i++)
      if (!dep_done(&op->deps[i]))
        force(op->deps[i].s, op->deps[i].seq);
    for (size_t i = 0; i < op->nmore; i++)
      if (!dep_done(&op->more[i]))
        force(op->more[i].s, op->more[i].seq);
    s->head = op->next;
    if (!s->head)
      s->tail = NULL;
    op_run(s, op);
    s->done_seq = op->seq;
    free(op->more);
    free(op);
  }
  if (!s->head)
    s->done_seq = s->last_seq;
}

static void add_dep(fake_op_t *op, fake_stream_t *s, uint64_t seq) {
  if (!s || s->done_seq >= seq)
    return;
  if (op->ndeps < sizeof(op->deps) / sizeof(op->deps[0])) {
    op->deps[op->ndeps++] = (fake_dep_t){s, seq};
    return;
  }
  fake_dep_t *m = realloc(op->more, (op->nmore + 1) * sizeof(*m));
  if (!m)
    abort(); /* test code: out of memory in the fake */
  op->more = m;
  op->more[op->nmore++] = (fake_dep_t){s, seq};
}

/* The dependencies an operation issued on s now has besides s's own order: the legacy
 * stream's implicit ordering. */
static void implicit_deps(fake_op_t *op, fake_stream_t *s) {
  if (s->special == 1) {
    for (size_t i = 0; i < stream_count_; i++) {
      fake_stream_t *t = streams_[i];
      if (t != s && t->live && t->ctx == s->ctx && blocking(t))
        add_dep(op, t, t->last_seq);
    }
  } else if (blocking(s)) {
    add_dep(op, s->ctx->legacy, s->ctx->legacy->last_seq);
  }
}

/* Queues an operation on stream handle h; *out_op NULL when it was captured. */
static CUresult enqueue(CUstream h, int kind, fake_op_t **out_op, const char *call) {
  *out_op = NULL;
  CUresult r;
  fake_stream_t *s = stream_of(h, &r);
  if (!s)
    return r;
  if (s->special == 1 && blocking_capture(s->ctx))
    return capture_error(call, CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  if (s->capturing) {
    st_.captured_ops++;
    return CUDA_SUCCESS;
  }
  fake_op_t *op = calloc(1, sizeof(*op));
  if (!op)
    return CUDA_ERROR_OUT_OF_MEMORY;
  op->seq = ++seq_;
  op->kind = kind;
  implicit_deps(op, s);
  if (s->tail)
    s->tail->next = op;
  else
    s->head = op;
  s->tail = op;
  s->last_seq = op->seq;
  *out_op = op;
  return CUDA_SUCCESS;
}

/* After the caller filled the operation in: eager mode runs it now (eager 2: copies
 * only, so a copy runs before compute work it does not wait for). */
static void issued(CUstream h, fake_op_t *op) {
  CUresult r;
  int copy = op && (op->kind == OP_H2D || op->kind == OP_D2H || op->kind == OP_D2D) &&
             h != st_.lazy_stream && h != NULL && h != CU_STREAM_LEGACY;
  if (op && (st_.eager == 1 || (st_.eager == 2 && copy))) {
    fake_stream_t *s = stream_of(h, &r);
    if (s)
      force(s, op->seq);
  }
}

/* Queued operations that touch [p, p + n) (device side, or host side when host). */
static int pending_touching(uintptr_t p, size_t n, int host) {
  for (size_t i = 0; i < stream_count_; i++)
    for (fake_op_t *op = streams_[i]->head; op; op = op->next) {
      uintptr_t a = 0, b = 0;
      size_t len = op->kind == OP_MEMSET ? op->bytes * 4 : op->bytes;
      switch (op->kind) {
        case OP_H2D:
          a = host ? op->src : op->dst;
          break;
        case OP_D2H:
          a = host ? op->dst : op->src;
          break;
        case OP_D2D:
          a = host ? 0 : op->dst;
          b = host ? 0 : op->src;
          break;
        case OP_MEMSET:
          a = host ? 0 : op->dst;
          break;
        default:
          break;
      }
      if ((a && a < p + n && p < a + len) || (b && b < p + n && p < b + len))
        return 1;
    }
  return 0;
}

long fake_cuda_pending(void) {
  long n = 0;
  for (size_t i = 0; i < stream_count_; i++)
    for (fake_op_t *op = streams_[i]->head; op; op = op->next)
      n++;
  return n;
}

const char *fake_cuda_violation(long *count) {
  fake_cuda_state();
  if (count)
    *count = st_.violations;
  return st_.violation;
}

static void drop_all(void) {
  for (size_t i = 0; i < stream_count_; i++) {
    fake_stream_t *s = streams_[i];
    while (s->head) {
      fake_op_t *op = s->head;
      s->head = op->next;
      free(op->more);
      free(op);
    }
    free(s);
  }
  stream_count_ = 0;
  memset(ctxs_, 0, sizeof(ctxs_));
}

/* ---- memory ------------------------------------------------------------------------- */

static int over_limit(size_t n) {
  return st_.mem_limit && st_.device_bytes + n > st_.mem_limit;
}

static CUresult CUDAAPI f_cuMemAlloc(CUdeviceptr *p, size_t n) {
  ENTER("cuMemAlloc");
  if (any_capture())
    return capture_error("cuMemAlloc", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  fake_ctx_t *c = current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (n == 0)
    return CUDA_ERROR_INVALID_VALUE;
  if (over_limit(n))
    return CUDA_ERROR_OUT_OF_MEMORY;
  size_t slot = 0;
  while (slot < FAKE_MAX && allocs_[slot].live)
    slot++;
  void *m = NULL;
  if (slot == FAKE_MAX || posix_memalign(&m, 256, n) != 0)
    return CUDA_ERROR_OUT_OF_MEMORY;
  /* freed entries at this address no longer describe it */
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (!allocs_[i].live && allocs_[i].size && allocs_[i].base < (uintptr_t)m + n &&
        (uintptr_t)m < allocs_[i].base + allocs_[i].size)
      allocs_[i].size = 0;
  allocs_[slot] = (fake_alloc_t){(uintptr_t)m, n, c->device, 1};
  st_.allocs_live++;
  st_.mem_allocs++;
  st_.device_bytes += n;
  *p = (CUdeviceptr)(uintptr_t)m;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemFree(CUdeviceptr p) {
  ENTER("cuMemFree");
  if (any_capture())
    return capture_error("cuMemFree", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (allocs_[i].live && allocs_[i].base == (uintptr_t)p) {
      if (pending_touching(allocs_[i].base, allocs_[i].size, 0))
        violate("cuMemFree of 0x%llx while queued work still uses it", (unsigned long long)p);
      allocs_[i].live = 0;
      st_.allocs_live--;
      st_.device_bytes -= allocs_[i].size;
      free((void *)(uintptr_t)p);
      return CUDA_SUCCESS;
    }
  violate("cuMemFree of 0x%llx: not a live allocation", (unsigned long long)p);
  return CUDA_ERROR_INVALID_VALUE;
}
static CUresult CUDAAPI f_cuMemGetInfo(size_t *f, size_t *t) {
  ENTER("cuMemGetInfo");
  size_t total = st_.mem_limit ? (size_t)st_.mem_limit : (size_t)1 << 31;
  *t = total;
  *f = total > st_.device_bytes ? total - (size_t)st_.device_bytes : 0;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemHostAlloc(void **p, size_t n, unsigned int flags) {
  ENTER("cuMemHostAlloc");
  if (any_capture())
    return capture_error("cuMemHostAlloc", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  size_t slot = 0;
  while (slot < FAKE_MAX && hosts_[slot].live)
    slot++;
  *p = slot < FAKE_MAX ? malloc(n ? n : 1) : NULL;
  if (!*p)
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (!hosts_[i].live && hosts_[i].size && hosts_[i].base < (uintptr_t)*p + n &&
        (uintptr_t)*p < hosts_[i].base + hosts_[i].size)
      hosts_[i].size = 0;
  hosts_[slot] = (fake_alloc_t){(uintptr_t)*p, n, -1, 1};
  st_.host_allocs_live++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemFreeHost(void *p) {
  ENTER("cuMemFreeHost");
  if (any_capture())
    return capture_error("cuMemFreeHost", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (hosts_[i].live && hosts_[i].base == (uintptr_t)p) {
      if (pending_touching(hosts_[i].base, hosts_[i].size, 1))
        violate("cuMemFreeHost of %p while queued work still uses it", p);
      hosts_[i].live = 0;
      st_.host_allocs_live--;
      free(p);
      return CUDA_SUCCESS;
    }
  violate("cuMemFreeHost of %p: not a live allocation", p);
  return CUDA_ERROR_INVALID_VALUE;
}

/* ---- copies and fills --------------------------------------------------------------- */

static CUresult CUDAAPI f_cuMemcpyHtoDAsync(CUdeviceptr d, const void *s, size_t n, CUstream q) {
  ENTER("cuMemcpyHtoDAsync");
  fake_op_t *op;
  CUresult r = enqueue(q, OP_H2D, &op, "cuMemcpyHtoDAsync");
  if (r == CUDA_SUCCESS && op) {
    st_.memcpy_h2d++;
    op->dst = (uintptr_t)d;
    op->src = (uintptr_t)s;
    op->bytes = n;
    issued(q, op);
  }
  return r;
}
static CUresult CUDAAPI f_cuMemcpyDtoHAsync(void *d, CUdeviceptr s, size_t n, CUstream q) {
  ENTER("cuMemcpyDtoHAsync");
  fake_op_t *op;
  CUresult r = enqueue(q, OP_D2H, &op, "cuMemcpyDtoHAsync");
  if (r == CUDA_SUCCESS && op) {
    st_.memcpy_d2h++;
    op->dst = (uintptr_t)d;
    op->src = (uintptr_t)s;
    op->bytes = n;
    issued(q, op);
  }
  return r;
}
static CUresult CUDAAPI f_cuMemcpyDtoDAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream q) {
  ENTER("cuMemcpyDtoDAsync");
  fake_op_t *op;
  CUresult r = enqueue(q, OP_D2D, &op, "cuMemcpyDtoDAsync");
  if (r == CUDA_SUCCESS && op) {
    op->dst = (uintptr_t)d;
    op->src = (uintptr_t)s;
    op->bytes = n;
    issued(q, op);
  }
  return r;
}
static CUresult CUDAAPI f_cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream q) {
  ENTER("cuMemsetD32Async");
  fake_op_t *op;
  CUresult r = enqueue(q, OP_MEMSET, &op, "cuMemsetD32Async");
  if (r == CUDA_SUCCESS && op) {
    st_.memsets++;
    op->dst = (uintptr_t)d;
    op->value = v;
    op->bytes = n; /* words */
    issued(q, op);
  }
  return r;
}

/* ---- streams and events ------------------------------------------------------------- */

static CUresult CUDAAPI f_cuStreamCreate(CUstream *q, unsigned int flags) {
  ENTER("cuStreamCreate");
  fake_ctx_t *c = current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  fake_stream_t *s = stream_new(c, flags, 0);
  if (!s)
    return CUDA_ERROR_OUT_OF_MEMORY;
  st_.streams_live++;
  *q = (CUstream)(void *)s;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamDestroy(CUstream q) {
  ENTER("cuStreamDestroy");
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  if (s->special) {
    violate("cuStreamDestroy of a default stream");
    return CUDA_ERROR_INVALID_HANDLE;
  }
  force(s, s->last_seq); /* queued work still completes */
  s->live = 0;
  st_.streams_live--;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamSynchronize(CUstream q) {
  ENTER("cuStreamSynchronize");
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  if (s->capturing)
    return capture_error("cuStreamSynchronize of a capturing stream",
                         CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (s->special == 1 && blocking_capture(s->ctx))
    return capture_error("cuStreamSynchronize of the legacy stream",
                         CUDA_ERROR_STREAM_CAPTURE_IMPLICIT);
  st_.syncs++;
  st_.spin_waits++;
  /* what an operation issued now would wait for, then the stream itself */
  fake_op_t probe;
  memset(&probe, 0, sizeof(probe));
  implicit_deps(&probe, s);
  for (size_t i = 0; i < probe.ndeps; i++)
    force(probe.deps[i].s, probe.deps[i].seq);
  for (size_t i = 0; i < probe.nmore; i++)
    force(probe.more[i].s, probe.more[i].seq);
  free(probe.more);
  force(s, s->last_seq);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuCtxSynchronize(void) {
  ENTER("cuCtxSynchronize");
  fake_ctx_t *c = current_ctx();
  if (!c)
    return CUDA_ERROR_INVALID_CONTEXT;
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i]->ctx == c && streams_[i]->capturing)
      return capture_error("cuCtxSynchronize", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  st_.syncs++;
  st_.spin_waits++;
  for (size_t i = 0; i < stream_count_; i++)
    if (streams_[i]->ctx == c)
      force(streams_[i], streams_[i]->last_seq);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamGetCtx(CUstream q, CUcontext *c) {
  ENTER("cuStreamGetCtx");
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  *c = (CUcontext)(void *)s->ctx;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuStreamIsCapturing(CUstream q, CUstreamCaptureStatus *status) {
  ENTER("cuStreamIsCapturing");
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  if (s->special == 1 && blocking_capture(s->ctx))
    return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
  *status = s->capturing == 0   ? CU_STREAM_CAPTURE_STATUS_NONE
            : s->capturing == 1 ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                : CU_STREAM_CAPTURE_STATUS_INVALIDATED;
  return CUDA_SUCCESS;
}

static fake_event_t *event_of(CUevent e) {
  fake_event_t *x = (fake_event_t *)(void *)e;
  if (!x || x->magic != EVENT_MAGIC) {
    violate("unknown or destroyed event %p", (void *)e);
    return NULL;
  }
  return x;
}

static CUresult CUDAAPI f_cuStreamWaitEvent(CUstream q, CUevent e, unsigned int flags) {
  ENTER("cuStreamWaitEvent");
  fake_event_t *x = event_of(e);
  if (!x)
    return CUDA_ERROR_INVALID_HANDLE;
  if (x->captured) {
    CUresult r;
    fake_stream_t *s = stream_of(q, &r);
    if (s && !s->capturing)
      return capture_error("cuStreamWaitEvent on an event recorded in a capture",
                           CUDA_ERROR_STREAM_CAPTURE_ISOLATION);
  }
  fake_op_t *op;
  CUresult r = enqueue(q, OP_MARK, &op, "cuStreamWaitEvent");
  if (r == CUDA_SUCCESS) {
    st_.stream_waits++;
    if (op && x->s)
      add_dep(op, x->s, x->seq);
    issued(q, op);
  }
  return r;
}
static CUresult CUDAAPI f_cuEventCreate(CUevent *e, unsigned int flags) {
  ENTER("cuEventCreate");
  if (!(flags & CU_EVENT_DISABLE_TIMING))
    violate("cuEventCreate without CU_EVENT_DISABLE_TIMING");
  fake_event_t *x = calloc(1, sizeof(*x));
  if (!x)
    return CUDA_ERROR_OUT_OF_MEMORY;
  x->magic = EVENT_MAGIC;
  x->flags = flags;
  *e = (CUevent)(void *)x;
  st_.events_live++;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventDestroy(CUevent e) {
  ENTER("cuEventDestroy");
  fake_event_t *x = event_of(e);
  if (!x)
    return CUDA_ERROR_INVALID_HANDLE;
  x->magic = 0;
  st_.events_live--;
  free(x);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventRecord(CUevent e, CUstream q) {
  ENTER("cuEventRecord");
  fake_event_t *x = event_of(e);
  if (!x)
    return CUDA_ERROR_INVALID_HANDLE;
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  fake_op_t *op;
  r = enqueue(q, OP_MARK, &op, "cuEventRecord");
  if (r != CUDA_SUCCESS)
    return r;
  st_.event_records++;
  x->captured = s->capturing != 0;
  x->s = op ? s : NULL;
  x->seq = op ? op->seq : 0;
  issued(q, op);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventSynchronize(CUevent e) {
  ENTER("cuEventSynchronize");
  fake_event_t *x = event_of(e);
  if (!x)
    return CUDA_ERROR_INVALID_HANDLE;
  if (x->captured)
    return capture_error("cuEventSynchronize of an event recorded in a capture",
                         CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  st_.syncs++;
  if (x->flags & CU_EVENT_BLOCKING_SYNC)
    st_.blocking_waits++;
  else
    st_.spin_waits++;
  if (x->s)
    force(x->s, x->seq);
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuEventQuery(CUevent e) {
  ENTER("cuEventQuery");
  st_.event_queries++;
  fake_event_t *x = event_of(e);
  if (!x)
    return CUDA_ERROR_INVALID_HANDLE;
  if (x->captured)
    return capture_error("cuEventQuery of an event recorded in a capture",
                         CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  fake_dep_t d = {x->s, x->seq};
  return dep_done(&d) ? CUDA_SUCCESS : CUDA_ERROR_NOT_READY;
}

CUresult fake_cuda_begin_capture(CUstream q) {
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  if (s->special == 1 || s->capturing)
    return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
  s->capturing = 1;
  return CUDA_SUCCESS;
}

CUresult fake_cuda_end_capture(CUstream q) {
  CUresult r;
  fake_stream_t *s = stream_of(q, &r);
  if (!s)
    return r;
  int was = s->capturing;
  s->capturing = 0;
  return was == 2 ? CUDA_ERROR_STREAM_CAPTURE_INVALIDATED
         : was    ? CUDA_SUCCESS
                  : CUDA_ERROR_INVALID_VALUE;
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
  if (any_capture())
    return capture_error("cuMemCreate", CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED);
  if (size == 0 || size % st_.granularity)
    return CUDA_ERROR_INVALID_VALUE;
  if (p->location.id < 0 || p->location.id >= st_.device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  if (over_limit(size))
    return CUDA_ERROR_OUT_OF_MEMORY;
  for (size_t i = 0; i < FAKE_MAX; i++)
    if (!handles_[i].live) {
      int fd = memfd_create("fake_cuda_chunk", MFD_CLOEXEC);
      if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        if (fd >= 0)
          close(fd);
        return CUDA_ERROR_OUT_OF_MEMORY;
      }
      handles_[i] = (fake_handle_t){.fd = fd, .size = size, .device = p->location.id, .live = 1};
      st_.handles_live++;
      st_.mem_creates++;
      st_.device_bytes += size;
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
  st_.device_bytes -= x->size;
  return CUDA_SUCCESS;
}
static CUresult CUDAAPI f_cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align,
                                              CUdeviceptr addr, unsigned long long flags) {
  ENTER("cuMemAddressReserve");
  /* the driver's rule: the alignment is a power of two, or 0 for the default */
  if (size == 0 || size % st_.granularity || (align & (align - 1)) != 0 ||
      (align && align % st_.granularity))
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
      maps_[j] = (fake_mapping_t){(uintptr_t)p, size, (size_t)(h - 1), -1, 1};
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
      if (pending_touching((uintptr_t)p, size, 0))
        violate("cuMemUnmap of 0x%llx while queued work still uses it", (unsigned long long)p);
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
  if (count != 1 || d->flags != CU_MEM_ACCESS_FLAGS_PROT_READWRITE ||
      d->location.type != CU_MEM_LOCATION_TYPE_DEVICE)
    violate("cuMemSetAccess without one read/write device descriptor");
  if (d->location.id < 0 || d->location.id >= st_.device_count)
    return CUDA_ERROR_INVALID_DEVICE;
  for (size_t j = 0; j < FAKE_MAX; j++)
    if (maps_[j].live && maps_[j].addr >= p && maps_[j].addr < p + size)
      maps_[j].access_dev = d->location.id;
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
