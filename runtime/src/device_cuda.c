/* device_cuda.c — the `cuda` device: the plan replayed on a GPU through the CUDA Driver
 * API loaded at run time (cuda_loader.c), in one of three memory modes.
 *
 * Setup (create/arena_alloc/host_alloc, once per session): load the driver; use the
 * caller's context (its device from cuCtxGetDevice) or retain the device's primary
 * context (the one the CUDA runtime and PyTorch use) and push/pop it around every call,
 * checking each pop, so the device works inside a process that already has a context
 * current; two copy streams (H2D for swap-ins, D2H for swap-outs,
 * CU_STREAM_NON_BLOCKING) plus the framework's compute stream (checked to belong to the
 * context; handle 0 is the legacy default stream, CU_STREAM_LEGACY) or our own; one
 * event per plan event (CU_EVENT_DISABLE_TIMING); one pinned staging arena
 * (cuMemHostAlloc — never per iteration).
 *
 * Arena mode: one cuMemAlloc of arena_bytes; block = base + offset. Replay is copies,
 * cuEventRecord and cuStreamWaitEvent only; the one synchronisation is at
 * iteration_end (cuStreamSynchronize, or with opt.cuda.blocking_sync a
 * CU_EVENT_BLOCKING_SYNC event per queue, so the host sleeps instead of spinning).
 * A compute stream being captured into a CUDA graph is refused at iteration_begin and
 * iteration_end (cuStreamIsCapturing): capture forbids the synchronisation.
 *
 * Virtual-addressing mode (seed out-of-core-window-scheduling.txt §4, cuda_va.c): each
 * non-external tensor reserves one stable range (its largest block, rounded up to
 * chunks); every block of a tensor has that address. A block's range is mapped when the
 * block begins — at arena_alloc for persistent blocks, before the swap-in copy for
 * swapped-in blocks, at step_begin(first_step) otherwise — and unmapped when it ends:
 * after its last step and after its swap-out copy, whichever is issued later. Unmapping
 * is deferred (nnabla's lazy unmap): an event is recorded on each queue that last used
 * the block — compute, the D2H swap-out and, for a swapped-in block, the H2D copy that
 * filled it (an unused prefetch is otherwise only ordered by nothing) — and the tensor
 * joins a pending list; a later map that needs chunks reclaims pending tensors whose
 * events completed (cuEventQuery), blocking on the oldest only when none did;
 * iteration_end reclaims the rest. A tensor mapped again while its unmap is pending
 * keeps its chunks: the queue that touches it next waits on the pending events
 * (cuStreamWaitEvent) instead. Requires that two blocks of one tensor never live at
 * the same step (checked at arena_alloc).
 *
 * Physical memory: arena_alloc replays the issue order once without the driver (the
 * same begin/end rules, pending unmaps counted as reclaimed) to find the peak of
 * chunk-rounded mapped ranges, and creates exactly that many chunks: the pool never
 * grows, so no cuMemCreate runs inside an iteration and an out-of-memory shows at
 * session creation. Maps then block on pending unmaps when the free chunks run out.
 *
 * Paged mode: the plan's arena as virtual memory. One reservation of the arena rounded
 * up to pages of one chunk each (va_chunk_bytes); every block is base + offset, as in
 * arena mode, but a page has a physical chunk only while some live block touches it
 * (the same begin/end rules as VA mode, per block: a count per page). A page no live
 * block touches is pending: it keeps its chunk — a block that touches it again takes
 * it back without any wait, since the plan orders overlapping bytes as in arena mode —
 * until a map needs the chunk; then the oldest pending pages whose last users are done
 * are unmapped (per queue, the page remembers the block whose end event on that queue
 * was recorded last, events on one queue completing in order), and only when none is
 * done does the host wait for the oldest. The pool is the plan's page peak (the issue
 * order replayed as in VA mode), created at arena_alloc; a plan packed with holes needs
 * only the pages its live blocks touch. Pending pages stay mapped across iterations.
 *
 * Costs: arena mode O(1) driver calls per copy/event/wait; VA mode adds O(chunks) per
 * block begin/end and O(pending) event queries per map; paged mode adds O(pages of the
 * block) per block begin/end (two driver calls per page mapped, one per page unmapped)
 * and event queries over the pending pages only when the free chunks run short. No heap
 * allocation after arena_alloc.
 */
#include <stdbool.h>
#include <string.h>

#include "cuda_loader.h"
#include "cuda_va.h"
#include "device.h"
#include "life.h"

typedef struct cuda_dev {
  const sfc_plan_view_t *plan;
  const sfc_allocator_t *alloc;
  sfcrt_cuda_mode_t mode;
  uint64_t va_chunk_bytes;
  sfcrt_cuda_driver_t drv;
  CUdevice device;
  CUcontext ctx;
  bool retained; /* we retained the primary context */
  CUstream q[SFCRT_QUEUE_COUNT];
  bool own_compute;                   /* q[COMPUTE] created here */
  unsigned sync_flags;                /* event flags of host-waited events */
  CUevent sync_ev[SFCRT_QUEUE_COUNT]; /* blocking_sync: iteration_end's events */
  CUevent begin_ev;                   /* iteration_begin: the copy queues wait for it */
  CUevent *events;                    /* [events_cap], event_count of them created */
  uint32_t event_count, events_cap;
  CUdeviceptr arena_raw, arena; /* arena mode: raw allocation, aligned base */
  uint64_t arena_bytes;
  void *host;
  uint64_t host_bytes;
  uint32_t current_step; /* the step being run (step_begin .. next step_begin) */

  /* VA mode */
  bool va_ready;
  sfcrt_cuda_va_pool_t pool;
  size_t pre_chunks;             /* chunks preallocated: the plan's arena */
  sfcrt_cuda_va_range_t *ranges; /* [tensor_count], chunks == 0 for external/unused */
  CUevent *ev_compute, *ev_d2h;  /* [tensor_count] end-of-block events */
  CUevent *ev_h2d;               /* [tensor_count] swap-in landed (tensors swapped in) */
  uint8_t *ev_flags;             /* [tensor_count] EV_COMPUTE | EV_D2H | EV_H2D recorded */
  uint64_t *pending_seq;         /* [tensor_count] 0 = not pending, else FIFO order */
  uint32_t *pending;             /* [tensor_count] the pending tensors, pending_count used */
  uint64_t next_seq;
  uint32_t pending_count;
  uint64_t unmap_waits; /* VA and paged: unmaps that waited for their last users */
  /* paged mode: the plan's arena as one reservation of pg_count pages of one chunk each */
  CUdeviceptr pg_base;
  size_t pg_chunk;
  uint32_t pg_count;
  CUmemGenericAllocationHandle *pg_handle; /* [pg_count] the page's chunk, 0 = unmapped */
  uint32_t *pg_refs;                       /* [pg_count] live blocks touching the page */
  uint32_t *pg_last;         /* [3 * pg_count] per queue, the block whose end event on it was
                                recorded last among the page's users since it was mapped; NONE */
  CUevent *pg_ev;            /* [3 * block_count] a block's events by queue */
  uint64_t *pg_ev_seq;       /* [3 * block_count] when each was last recorded (0 = never) */
  uint64_t *pg_ev_done;      /* [3 * block_count] the record seen complete (== pg_ev_seq) */
  uint64_t pg_seq;           /* event records */
  sfcrt_page_fifo_t pg_fifo; /* the pending pages */

  sfcrt_life_t life; /* VA and paged mode: when each block begins and ends (life.h) */
} cuda_dev_t;

#define EV_COMPUTE 1u
#define EV_D2H     2u
#define EV_H2D     4u

static sfc_status_t ck(cuda_dev_t *d, CUresult r, const char *call, sfc_error_t *err) {
  return sfcrt_cuda_check(&d->drv, r, call, err);
}

static sfc_status_t enter(cuda_dev_t *d, sfc_error_t *err) {
  return ck(d, d->drv.fn.cuCtxPushCurrent(d->ctx), "cuCtxPushCurrent", err);
}

/* Pops the context enter pushed; returns st, or the pop's failure when st is OK (a pop
 * that fails, or pops another context, leaves the caller's context stack wrong). */
static sfc_status_t leave(cuda_dev_t *d, sfc_status_t st, sfc_error_t *err) {
  CUcontext popped = NULL;
  CUresult r = d->drv.fn.cuCtxPopCurrent(&popped);
  if (st != SFC_OK)
    return st;
  if (r != CUDA_SUCCESS)
    return ck(d, r, "cuCtxPopCurrent", err);
  if (popped != d->ctx)
    return sfc_error_set(err, SFC_ERR_DEVICE,
                         "cuCtxPopCurrent: popped context %p, not the session's %p (the "
                         "context stack changed during a call)",
                         (void *)popped, (void *)d->ctx);
  return SFC_OK;
}

/* SFC_ERR_STATE when the compute stream is being captured into a CUDA graph. */
static sfc_status_t check_capture(cuda_dev_t *d, const char *when, sfc_error_t *err) {
  CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
  CUresult r = d->drv.fn.cuStreamIsCapturing(d->q[SFCRT_QUEUE_COMPUTE], &cs);
  /* IMPLICIT: the compute stream is the legacy stream and a blocking stream captures */
  if (r == CUDA_ERROR_STREAM_CAPTURE_IMPLICIT ||
      (r == CUDA_SUCCESS && cs != CU_STREAM_CAPTURE_STATUS_NONE))
    return sfc_error_set(err, SFC_ERR_STATE,
                         "cuda device: %s while the compute stream is being captured into a "
                         "CUDA graph (torch.cuda.graph / cuStreamBeginCapture): a session "
                         "synchronises its queues, which capture forbids; run sfc iterations "
                         "outside graph capture",
                         when);
  return ck(d, r, "cuStreamIsCapturing", err);
}

/* ---- VA mode ------------------------------------------------------------------------ */

/* Removes t from the pending list (swap with the last: O(pending)). */
static void va_unpend(cuda_dev_t *d, uint32_t t) {
  for (uint32_t i = 0; i < d->pending_count; i++)
    if (d->pending[i] == t) {
      d->pending[i] = d->pending[--d->pending_count];
      break;
    }
  d->pending_seq[t] = 0;
}

/* Unmaps a pending tensor whose events have completed (or are waited for here). */
static sfc_status_t va_reclaim(cuda_dev_t *d, uint32_t t, bool block, sfc_error_t *err) {
  if (block) {
    d->unmap_waits++;
    if (d->ev_flags[t] & EV_COMPUTE)
      SFC_TRY(ck(d, d->drv.fn.cuEventSynchronize(d->ev_compute[t]), "cuEventSynchronize", err));
    if (d->ev_flags[t] & EV_D2H)
      SFC_TRY(ck(d, d->drv.fn.cuEventSynchronize(d->ev_d2h[t]), "cuEventSynchronize", err));
    if (d->ev_flags[t] & EV_H2D)
      SFC_TRY(ck(d, d->drv.fn.cuEventSynchronize(d->ev_h2d[t]), "cuEventSynchronize", err));
  }
  d->ev_flags[t] = 0;
  va_unpend(d, t);
  return sfcrt_cuda_va_range_unmap(&d->pool, &d->ranges[t], err);
}

static bool va_event_done(cuda_dev_t *d, CUevent e) {
  return d->drv.fn.cuEventQuery(e) == CUDA_SUCCESS;
}

/* The pending tensor unmapped longest ago... first pended (FIFO), UINT32_MAX if none. */
static uint32_t va_oldest_pending(const cuda_dev_t *d) {
  uint32_t oldest = UINT32_MAX;
  for (uint32_t i = 0; i < d->pending_count; i++) {
    uint32_t t = d->pending[i];
    if (oldest == UINT32_MAX || d->pending_seq[t] < d->pending_seq[oldest])
      oldest = t;
  }
  return oldest;
}

/* Makes room for a range of `chunks` chunks. First every pending tensor whose events
 * have completed is unmapped (no waiting). Then, while the pool would have to grow
 * beyond its preallocation (the plan's arena, i.e. the packer's peak) or its limit,
 * the oldest pending tensor is unmapped after waiting for its events: the plan's
 * memory bound wins over overlap. */
static sfc_status_t va_make_room(cuda_dev_t *d, size_t chunks, sfc_error_t *err) {
  if (d->pool.free_count >= chunks || d->pending_count == 0)
    return SFC_OK;
  for (uint32_t i = d->pending_count; i-- > 0 && d->pool.free_count < chunks;) {
    uint32_t t = d->pending[i]; /* reclaiming moves the last entry to i: scan downwards */
    if ((!(d->ev_flags[t] & EV_COMPUTE) || va_event_done(d, d->ev_compute[t])) &&
        (!(d->ev_flags[t] & EV_D2H) || va_event_done(d, d->ev_d2h[t])) &&
        (!(d->ev_flags[t] & EV_H2D) || va_event_done(d, d->ev_h2d[t])))
      SFC_TRY(va_reclaim(d, t, false, err));
  }
  if (d->pool.free_count < chunks && d->pending_count > 0)
    SFC_TRY(check_capture(d, "a VA map must wait for pending unmaps", err));
  while (d->pool.free_count < chunks && d->pending_count > 0 &&
         d->pool.created + (chunks - d->pool.free_count) > d->pre_chunks)
    SFC_TRY(va_reclaim(d, va_oldest_pending(d), true, err));
  return SFC_OK;
}

/* Tensor t's block begins; `q` is the queue that touches it first. */
static sfc_status_t va_begin(cuda_dev_t *d, uint32_t t, sfcrt_queue_t q, sfc_error_t *err) {
  sfcrt_cuda_va_range_t *r = &d->ranges[t];
  if (d->pending_seq[t]) {
    /* unmap pending: keep the chunks, order q after the previous block's last users */
    if (d->ev_flags[t] & EV_COMPUTE)
      SFC_TRY(ck(d, d->drv.fn.cuStreamWaitEvent(d->q[q], d->ev_compute[t], 0), "cuStreamWaitEvent",
                 err));
    if (d->ev_flags[t] & EV_D2H)
      SFC_TRY(
          ck(d, d->drv.fn.cuStreamWaitEvent(d->q[q], d->ev_d2h[t], 0), "cuStreamWaitEvent", err));
    if ((d->ev_flags[t] & EV_H2D) && q != SFCRT_QUEUE_H2D)
      SFC_TRY(
          ck(d, d->drv.fn.cuStreamWaitEvent(d->q[q], d->ev_h2d[t], 0), "cuStreamWaitEvent", err));
    d->ev_flags[t] = 0;
    va_unpend(d, t);
    return SFC_OK;
  }
  if (r->mapped)
    return SFC_OK; /* persistent, or a second block begun without an end: validated away */
  SFC_TRY(va_make_room(d, r->chunks, err));
  return sfcrt_cuda_va_range_map(&d->pool, r, err);
}

/* Tensor t's block ends: its last users are on the queues in ev_flags. */
static void va_end(cuda_dev_t *d, uint32_t t) {
  if (!d->ranges[t].mapped || d->pending_seq[t])
    return;
  d->pending_seq[t] = ++d->next_seq;
  d->pending[d->pending_count++] = t;
}

static sfc_status_t va_record(cuda_dev_t *d, uint32_t t, sfcrt_queue_t q, sfc_error_t *err) {
  static const uint8_t bit[SFCRT_QUEUE_COUNT] = {EV_COMPUTE, EV_H2D, EV_D2H};
  CUevent e = q == SFCRT_QUEUE_D2H   ? d->ev_d2h[t]
              : q == SFCRT_QUEUE_H2D ? d->ev_h2d[t]
                                     : d->ev_compute[t];
  SFC_TRY(ck(d, d->drv.fn.cuEventRecord(e, d->q[q]), "cuEventRecord", err));
  d->ev_flags[t] |= bit[q];
  return SFC_OK;
}

/* VA mode's counter for sfcrt_life_peak: a tensor's chunks, mapped while any of its
 * blocks is live (ctx: a va_count_t). */
typedef struct {
  const sfc_plan_view_t *plan;
  const uint64_t *chunks; /* [tensor] chunks of its range */
  uint8_t *live;          /* [tensor] mapped */
} va_count_t;

static uint64_t va_count_begin(sfcrt_peak_counter_t *c, uint32_t b) {
  va_count_t *vc = c->ctx;
  uint32_t t = vc->plan->blocks[b].tensor;
  if (vc->live[t])
    return 0;
  vc->live[t] = 1;
  return vc->chunks[t];
}

static uint64_t va_count_end(sfcrt_peak_counter_t *c, uint32_t b) {
  va_count_t *vc = c->ctx;
  uint32_t t = vc->plan->blocks[b].tensor;
  if (!vc->live[t])
    return 0;
  vc->live[t] = 0;
  return vc->chunks[t];
}

/* The chunk pool of VA and paged mode: exactly `peak` chunks, created now (it never
 * grows, so an out-of-memory shows at session creation). */
static sfc_status_t pool_create(cuda_dev_t *d, uint64_t peak, size_t chunk, const char *what,
                                sfc_error_t *err) {
  sfc_status_t st;
  if (peak > SIZE_MAX / 2 / chunk)
    st = sfc_error_set(err, SFC_ERR_LIMIT, "%llu chunks of %zu bytes", (unsigned long long)peak,
                       chunk);
  else
    st = sfcrt_cuda_va_pool_init(&d->pool, &d->drv, d->device, chunk,
                                 (size_t)(peak ? peak : 1) * chunk, (size_t)peak * chunk, d->alloc,
                                 err);
  if (st != SFC_OK) {
    sfc_error_prefix(err, "chunk pool");
    sfc_error_prefix(err, what);
    return st;
  }
  d->va_ready = true;
  d->pre_chunks = d->pool.created;
  return SFC_OK;
}

/* Builds the VA tables, sizes and creates the chunk pool, reserves every tensor's
 * range and maps persistent blocks. */
static sfc_status_t va_setup(cuda_dev_t *d, sfc_error_t *err) {
  const sfc_plan_view_t *v = d->plan;
  const sfc_allocator_t *a = d->alloc;
  uint32_t nt = v->tensor_count, nb = v->block_count;
  size_t ntc = nt ? nt : 1;
  d->ranges = sfc_calloc(a, ntc, sizeof(*d->ranges));
  d->ev_compute = sfc_calloc(a, ntc, sizeof(CUevent));
  d->ev_d2h = sfc_calloc(a, ntc, sizeof(CUevent));
  d->ev_h2d = sfc_calloc(a, ntc, sizeof(CUevent));
  d->ev_flags = sfc_calloc(a, ntc, 1);
  d->pending_seq = sfc_calloc(a, ntc, sizeof(uint64_t));
  d->pending = sfc_calloc(a, ntc, sizeof(uint32_t));
  uint64_t *need = sfc_calloc(a, ntc, sizeof(uint64_t));
  uint8_t *swapped_in = sfc_calloc(a, ntc, 1);
  sfc_status_t st = SFC_OK;
  if (!d->ranges || !d->ev_compute || !d->ev_d2h || !d->ev_h2d || !d->ev_flags || !d->pending_seq ||
      !d->pending || !need || !swapped_in) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "cuda VA mode: out of memory for tables");
    goto done;
  }
  if ((st = sfcrt_life_init(&d->life, v, a, err)) != SFC_OK)
    goto done;
  for (uint32_t s = 0; s < v->swap_count; s++)
    if (v->swaps[s].direction == SFC_SWAP_IN &&
        sfcrt_life_managed(&v->blocks[v->swaps[s].device_block]))
      swapped_in[v->swaps[s].tensor] = 1;
  for (uint32_t b = 0; b < nb; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    if (x->flags & SFC_BLOCK_EXTERNAL)
      continue;
    if (x->bytes > need[x->tensor])
      need[x->tensor] = x->bytes;
    /* one address per tensor: its blocks must not be live at the same step. O(b^2) in
     * the blocks of one tensor, which are few. */
    for (uint32_t c = b + 1; c < nb; c++) {
      const sfc_plan_block_t *y = &v->blocks[c];
      if (y->tensor != x->tensor || (y->flags & SFC_BLOCK_EXTERNAL))
        continue;
      if ((x->flags | y->flags) & SFC_BLOCK_PERSISTENT ||
          (x->first_step <= y->last_step && y->first_step <= x->last_step)) {
        st = sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                           "cuda VA mode: blocks %u and %u of tensor %u are live at the same "
                           "step; VA mode needs one block per tensor at a time (use arena mode)",
                           b, c, x->tensor);
        goto done;
      }
    }
  }
  size_t chunk = 0;
  if ((st = enter(d, err)) != SFC_OK)
    goto done;
  st = sfcrt_cuda_va_chunk_size(&d->drv, d->device, (size_t)d->va_chunk_bytes, &chunk, err);
  if (st == SFC_OK) {
    /* need[] becomes chunks per tensor; the pool is the peak of mapped chunks */
    for (uint32_t t = 0; t < nt; t++)
      need[t] = need[t] ? (need[t] + chunk - 1) / chunk : 0;
    uint8_t *live = sfc_calloc(a, ntc, 1);
    va_count_t vc = {v, need, live};
    sfcrt_peak_counter_t c = {va_count_begin, va_count_end, &vc};
    uint64_t peak = live ? sfcrt_life_peak(&d->life, v, &c) : 0;
    if (live)
      sfc_free(a, live, ntc);
    if (!live)
      st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "cuda VA mode: out of memory for tables");
    else
      st = pool_create(d, peak, chunk, "cuda VA mode", err);
  }
  unsigned ev_flags = CU_EVENT_DISABLE_TIMING | d->sync_flags;
  for (uint32_t t = 0; st == SFC_OK && t < nt; t++) {
    if (!need[t])
      continue;
    st = sfcrt_cuda_va_range_reserve(&d->pool, &d->ranges[t], (size_t)need[t] * chunk, err);
    if (st == SFC_OK)
      st = ck(d, d->drv.fn.cuEventCreate(&d->ev_compute[t], ev_flags), "cuEventCreate", err);
    if (st == SFC_OK)
      st = ck(d, d->drv.fn.cuEventCreate(&d->ev_d2h[t], ev_flags), "cuEventCreate", err);
    if (st == SFC_OK && swapped_in[t])
      st = ck(d, d->drv.fn.cuEventCreate(&d->ev_h2d[t], ev_flags), "cuEventCreate", err);
  }
  for (uint32_t b = 0; st == SFC_OK && b < nb; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    if ((x->flags & SFC_BLOCK_PERSISTENT) && !(x->flags & SFC_BLOCK_EXTERNAL) &&
        !d->ranges[x->tensor].mapped)
      st = sfcrt_cuda_va_range_map(&d->pool, &d->ranges[x->tensor], err);
  }
  st = leave(d, st, err);
done:
  if (need)
    sfc_free(a, need, ntc * sizeof(uint64_t));
  if (swapped_in)
    sfc_free(a, swapped_in, ntc);
  return st;
}

static void va_teardown(cuda_dev_t *d) {
  const sfc_plan_view_t *v = d->plan;
  const sfc_allocator_t *a = d->alloc;
  size_t ntc = v->tensor_count ? v->tensor_count : 1;
  sfc_error_t ignored;
  if (d->ranges && d->va_ready)
    for (uint32_t t = 0; t < v->tensor_count; t++)
      if (d->ranges[t].chunks)
        sfcrt_cuda_va_range_release(&d->pool, &d->ranges[t], &ignored);
  if (d->va_ready)
    sfcrt_cuda_va_pool_deinit(&d->pool, &ignored);
  for (uint32_t t = 0; d->ev_compute && t < v->tensor_count; t++) {
    if (d->ev_compute[t])
      d->drv.fn.cuEventDestroy(d->ev_compute[t]);
    if (d->ev_d2h && d->ev_d2h[t])
      d->drv.fn.cuEventDestroy(d->ev_d2h[t]);
    if (d->ev_h2d && d->ev_h2d[t])
      d->drv.fn.cuEventDestroy(d->ev_h2d[t]);
  }
  if (d->ranges)
    sfc_free(a, d->ranges, ntc * sizeof(*d->ranges));
  if (d->ev_compute)
    sfc_free(a, d->ev_compute, ntc * sizeof(CUevent));
  if (d->ev_d2h)
    sfc_free(a, d->ev_d2h, ntc * sizeof(CUevent));
  if (d->ev_h2d)
    sfc_free(a, d->ev_h2d, ntc * sizeof(CUevent));
  if (d->ev_flags)
    sfc_free(a, d->ev_flags, ntc);
  if (d->pending_seq)
    sfc_free(a, d->pending_seq, ntc * sizeof(uint64_t));
  if (d->pending)
    sfc_free(a, d->pending, ntc * sizeof(uint32_t));
  sfcrt_life_free(&d->life, d->alloc);
}

/* ---- paged mode --------------------------------------------------------------------- */

/* Pages [*first, *last] of block b; false for a block of 0 bytes. */
static bool pg_span(const cuda_dev_t *d, uint32_t b, uint32_t *first, uint32_t *last) {
  return sfcrt_block_pages(&d->plan->blocks[b], d->pg_chunk, first, last);
}

static CUdeviceptr pg_at(const cuda_dev_t *d, uint32_t p) {
  return d->pg_base + (CUdeviceptr)p * d->pg_chunk;
}

/* Whether the record of block b's event on queue q has completed (remembered, so each
 * record is queried until it has, and then never again). */
static bool pg_event_done(cuda_dev_t *d, uint32_t b, int q) {
  size_t i = (size_t)b * 3 + (size_t)q;
  if (d->pg_ev_done[i] == d->pg_ev_seq[i])
    return true;
  if (d->drv.fn.cuEventQuery(d->pg_ev[i]) != CUDA_SUCCESS)
    return false;
  d->pg_ev_done[i] = d->pg_ev_seq[i];
  return true;
}

/* Unmaps pending page p: without waiting when `block` is false (its events have been
 * seen complete), else after waiting for them. */
static sfc_status_t pg_reclaim(cuda_dev_t *d, uint32_t p, bool block, sfc_error_t *err) {
  bool waited = false;
  for (int q = 0; q < SFCRT_QUEUE_COUNT; q++) {
    uint32_t b = d->pg_last[(size_t)p * 3 + (size_t)q];
    if (b == SFC_PLAN_NONE)
      continue;
    if (block && !pg_event_done(d, b, q)) {
      size_t i = (size_t)b * 3 + (size_t)q;
      SFC_TRY(ck(d, d->drv.fn.cuEventSynchronize(d->pg_ev[i]), "cuEventSynchronize", err));
      d->pg_ev_done[i] = d->pg_ev_seq[i];
      waited = true;
    }
    d->pg_last[(size_t)p * 3 + (size_t)q] = SFC_PLAN_NONE;
  }
  d->unmap_waits += waited;
  sfcrt_page_fifo_cancel(&d->pg_fifo, p);
  CUmemGenericAllocationHandle h = d->pg_handle[p];
  d->pg_handle[p] = 0;
  return sfcrt_cuda_va_chunk_unmap(&d->pool, pg_at(d, p), h, err);
}

/* What one reclaim scan has learnt of each queue: the sequence number of the earliest
 * record it found not complete, 0 if none. A stream completes its records in order, so a
 * later record on that queue has not completed either and is not queried: a record is
 * queried only when it is older than every incomplete one the scan found on its queue
 * (pages go pending in about the order of their last users' records, so a scan queries
 * about one incomplete record per queue, not one per pending page). */
typedef struct {
  uint64_t not_done[SFCRT_QUEUE_COUNT];
} pg_scan_t;

static bool pg_events_done(cuda_dev_t *d, uint32_t p, pg_scan_t *scan) {
  for (int q = 0; q < SFCRT_QUEUE_COUNT; q++) {
    uint32_t b = d->pg_last[(size_t)p * 3 + (size_t)q];
    if (b == SFC_PLAN_NONE)
      continue;
    uint64_t seq = d->pg_ev_seq[(size_t)b * 3 + (size_t)q];
    if (d->pg_ev_done[(size_t)b * 3 + (size_t)q] == seq)
      continue;
    if (scan->not_done[q] && seq >= scan->not_done[q])
      return false;
    if (!pg_event_done(d, b, q)) {
      scan->not_done[q] = seq;
      return false;
    }
  }
  return true;
}

/* Makes `need` chunks free: first the pending pages whose events have completed, oldest
 * first, without waiting (one scan of the FIFO, pg_scan_t); then the oldest pending
 * page after waiting for its events.
 * The FIFO holds stale entries (pages touched again, or reclaimed); it is compacted
 * when full. */
static sfc_status_t pg_make_room(cuda_dev_t *d, size_t need, sfc_error_t *err) {
  if (d->pool.free_count >= need)
    return SFC_OK;
  pg_scan_t scan = {{0}};
  sfcrt_page_fifo_t *f = &d->pg_fifo;
  for (size_t i = f->head; i < f->tail && d->pool.free_count < need; i++)
    if (sfcrt_page_fifo_current(f, i) && pg_events_done(d, f->page[i], &scan))
      SFC_TRY(pg_reclaim(d, f->page[i], false, err));
  sfcrt_page_fifo_trim(f);
  if (d->pool.free_count < need && f->head < f->tail)
    SFC_TRY(check_capture(d, "a page map must wait for pending unmaps", err));
  for (; f->head < f->tail && d->pool.free_count < need; f->head++)
    if (sfcrt_page_fifo_current(f, f->head))
      SFC_TRY(pg_reclaim(d, f->page[f->head], true, err));
  return SFC_OK;
}

/* Block b begins: every page it touches is mapped (a pending one keeps its chunk: the
 * plan orders overlapping bytes as in arena mode). */
static sfc_status_t pg_begin(cuda_dev_t *d, uint32_t b, sfc_error_t *err) {
  uint32_t first, last;
  for (int q = 0; q < SFCRT_QUEUE_COUNT; q++) /* this residency's end events, not a past one's */
    d->pg_ev_seq[(size_t)b * 3 + (size_t)q] = d->pg_ev_done[(size_t)b * 3 + (size_t)q] = 0;
  if (!pg_span(d, b, &first, &last))
    return SFC_OK;
  size_t need = 0;
  for (uint32_t p = first; p <= last; p++) {
    if (d->pg_refs[p]++ == 0)
      sfcrt_page_fifo_cancel(&d->pg_fifo, p);
    need += d->pg_handle[p] == 0;
  }
  SFC_TRY(pg_make_room(d, need, err));
  for (uint32_t p = first; p <= last; p++)
    if (d->pg_handle[p] == 0)
      SFC_TRY(sfcrt_cuda_va_chunk_map(&d->pool, pg_at(d, p), &d->pg_handle[p], err));
  return SFC_OK;
}

static sfc_status_t pg_record(cuda_dev_t *d, uint32_t b, sfcrt_queue_t q, sfc_error_t *err) {
  size_t i = (size_t)b * 3 + (size_t)q;
  SFC_TRY(ck(d, d->drv.fn.cuEventRecord(d->pg_ev[i], d->q[q]), "cuEventRecord", err));
  d->pg_ev_seq[i] = ++d->pg_seq;
  return SFC_OK;
}

/* Block b ends: its pages remember its last users, and those no block touches any more
 * become pending. */
static void pg_end(cuda_dev_t *d, uint32_t b) {
  uint32_t first, last;
  if (!pg_span(d, b, &first, &last))
    return;
  for (uint32_t p = first; p <= last; p++) {
    for (int q = 0; q < SFCRT_QUEUE_COUNT; q++) {
      uint64_t seq = d->pg_ev_seq[(size_t)b * 3 + (size_t)q];
      uint32_t *l = &d->pg_last[(size_t)p * 3 + (size_t)q];
      if (seq && (*l == SFC_PLAN_NONE || d->pg_ev_seq[(size_t)*l * 3 + (size_t)q] < seq))
        *l = b;
    }
    if (d->pg_refs[p] > 0 && --d->pg_refs[p] == 0)
      sfcrt_page_fifo_push(&d->pg_fifo, p);
  }
}

/* Reserves the arena's pages, sizes and creates the chunk pool (the page peak), creates
 * the blocks' events and maps the persistent blocks' pages. */
static sfc_status_t pg_setup(cuda_dev_t *d, uint64_t bytes, uint32_t alignment, sfc_error_t *err) {
  const sfc_plan_view_t *v = d->plan;
  const sfc_allocator_t *a = d->alloc;
  uint32_t nb = v->block_count;
  size_t nbc = nb ? nb : 1;
  SFC_TRY(sfcrt_life_init(&d->life, v, a, err));
  SFC_TRY(enter(d, err));
  size_t chunk = 0;
  sfc_status_t st =
      sfcrt_cuda_va_chunk_size(&d->drv, d->device, (size_t)d->va_chunk_bytes, &chunk, err);
  uint64_t pages = chunk ? (bytes + chunk - 1) / chunk : 0;
  if (st == SFC_OK && (pages > UINT32_MAX / 2 || pages * chunk > SIZE_MAX / 2))
    st = sfc_error_set(err, SFC_ERR_LIMIT,
                       "cuda paged mode: an arena of %llu bytes in %zu-byte pages",
                       (unsigned long long)bytes, chunk);
  if (st == SFC_OK) {
    d->pg_chunk = chunk;
    d->pg_count = (uint32_t)(pages ? pages : 1);
    size_t np = d->pg_count;
    d->pg_handle = sfc_calloc(a, np, sizeof(*d->pg_handle));
    d->pg_refs = sfc_calloc(a, np, sizeof(uint32_t));
    d->pg_last = sfc_calloc(a, 3 * np, sizeof(uint32_t));
    d->pg_ev = sfc_calloc(a, 3 * nbc, sizeof(CUevent));
    d->pg_ev_seq = sfc_calloc(a, 3 * nbc, sizeof(uint64_t));
    d->pg_ev_done = sfc_calloc(a, 3 * nbc, sizeof(uint64_t));
    uint8_t *live = sfc_calloc(a, nbc, 1);
    if (!d->pg_handle || !d->pg_refs || !d->pg_last || !d->pg_ev || !d->pg_ev_seq ||
        !d->pg_ev_done || !live || !sfcrt_page_fifo_init(&d->pg_fifo, d->pg_count, a))
      st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "cuda paged mode: out of memory for tables");
    uint64_t peak =
        st == SFC_OK ? sfcrt_life_page_peak(&d->life, v, d->pg_chunk, d->pg_refs, live) : 0;
    if (live)
      sfc_free(a, live, nbc);
    if (st == SFC_OK) {
      memset(d->pg_refs, 0, np * sizeof(uint32_t));
      for (size_t i = 0; i < 3 * np; i++)
        d->pg_last[i] = SFC_PLAN_NONE;
      st = pool_create(d, peak, chunk, "cuda paged mode", err);
    }
  }
  if (st == SFC_OK) {
    st = ck(d, d->drv.fn.cuMemAddressReserve(&d->pg_base, (size_t)d->pg_count * chunk, 0, 0, 0),
            "cuMemAddressReserve", err);
    if (st != SFC_OK)
      d->pg_base = 0;
    else if (alignment > 1 && d->pg_base % alignment != 0)
      st = sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                         "cuda paged mode: the reserved arena at 0x%llx is not aligned to the "
                         "plan's %u bytes (use arena mode)",
                         (unsigned long long)d->pg_base, alignment);
  }
  unsigned ev_flags = CU_EVENT_DISABLE_TIMING | d->sync_flags;
  for (uint32_t b = 0; st == SFC_OK && b < nb; b++) {
    const sfc_plan_block_t *x = &v->blocks[b];
    if (!sfcrt_life_managed(x))
      continue;
    st = ck(d, d->drv.fn.cuEventCreate(&d->pg_ev[(size_t)b * 3 + SFCRT_QUEUE_COMPUTE], ev_flags),
            "cuEventCreate", err);
    if (st == SFC_OK && d->life.swap_out_step[b] != SFC_PLAN_NONE)
      st = ck(d, d->drv.fn.cuEventCreate(&d->pg_ev[(size_t)b * 3 + SFCRT_QUEUE_D2H], ev_flags),
              "cuEventCreate", err);
    if (st == SFC_OK && (x->flags & SFC_BLOCK_SWAPPED_IN))
      st = ck(d, d->drv.fn.cuEventCreate(&d->pg_ev[(size_t)b * 3 + SFCRT_QUEUE_H2D], ev_flags),
              "cuEventCreate", err);
  }
  for (uint32_t b = 0; st == SFC_OK && b < nb; b++) /* persistent pages stay mapped */
    if ((v->blocks[b].flags & SFC_BLOCK_PERSISTENT) && !(v->blocks[b].flags & SFC_BLOCK_EXTERNAL))
      st = pg_begin(d, b, err);
  return leave(d, st, err);
}

static void pg_teardown(cuda_dev_t *d) {
  const sfc_allocator_t *a = d->alloc;
  size_t np = d->pg_count, nbc = d->plan->block_count ? d->plan->block_count : 1;
  sfc_error_t ignored;
  for (uint32_t p = 0; d->pg_handle && p < d->pg_count; p++)
    if (d->pg_handle[p]) {
      sfcrt_cuda_va_chunk_unmap(&d->pool, pg_at(d, p), d->pg_handle[p], &ignored);
      d->pg_handle[p] = 0;
    }
  if (d->pg_base)
    d->drv.fn.cuMemAddressFree(d->pg_base, np * d->pg_chunk);
  if (d->va_ready)
    sfcrt_cuda_va_pool_deinit(&d->pool, &ignored);
  for (size_t i = 0; d->pg_ev && i < 3 * nbc; i++)
    if (d->pg_ev[i])
      d->drv.fn.cuEventDestroy(d->pg_ev[i]);
  if (d->pg_handle)
    sfc_free(a, d->pg_handle, np * sizeof(*d->pg_handle));
  if (d->pg_refs)
    sfc_free(a, d->pg_refs, np * sizeof(uint32_t));
  if (d->pg_last)
    sfc_free(a, d->pg_last, 3 * np * sizeof(uint32_t));
  sfcrt_page_fifo_free(&d->pg_fifo, a);
  if (d->pg_ev)
    sfc_free(a, d->pg_ev, 3 * nbc * sizeof(CUevent));
  if (d->pg_ev_seq)
    sfc_free(a, d->pg_ev_seq, 3 * nbc * sizeof(uint64_t));
  if (d->pg_ev_done)
    sfc_free(a, d->pg_ev_done, 3 * nbc * sizeof(uint64_t));
  sfcrt_life_free(&d->life, d->alloc);
}

/* ---- the device table --------------------------------------------------------------- */

static void cuda_destroy(void *self);

/* The device of the context current on this thread. */
static sfc_status_t context_device(cuda_dev_t *d, CUcontext ctx, CUdevice *out, sfc_error_t *err) {
  SFC_TRY(ck(d, d->drv.fn.cuCtxPushCurrent(ctx), "cuCtxPushCurrent", err));
  CUresult r = d->drv.fn.cuCtxGetDevice(out);
  CUcontext popped = NULL;
  CUresult p = d->drv.fn.cuCtxPopCurrent(&popped);
  SFC_TRY(ck(d, r, "cuCtxGetDevice", err));
  return ck(d, p, "cuCtxPopCurrent", err);
}

/* The framework's compute stream must belong to the session's context: work the
 * session orders on it would otherwise run on another device. */
static sfc_status_t check_stream_context(cuda_dev_t *d, sfc_error_t *err) {
  CUcontext sctx = NULL;
  SFC_TRY(ck(d, d->drv.fn.cuStreamGetCtx(d->q[SFCRT_QUEUE_COMPUTE], &sctx), "cuStreamGetCtx", err));
  if (sctx == d->ctx)
    return SFC_OK;
  CUdevice other = -1;
  sfc_error_t ignored;
  if (sctx)
    context_device(d, sctx, &other, &ignored);
  return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                       "cuda device: the compute stream %p belongs to another context (%p, "
                       "device %d) than the session's (%p, device %d)",
                       (void *)d->q[SFCRT_QUEUE_COMPUTE], (void *)sctx, (int)other, (void *)d->ctx,
                       (int)d->device);
}

static sfc_status_t cuda_create(const sfcrt_device_config_t *cfg, void **out_self,
                                sfc_error_t *err) {
  *out_self = NULL;
  cuda_dev_t *d = sfc_calloc(cfg->alloc, 1, sizeof(*d));
  if (!d)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "cuda device: out of memory");
  d->plan = cfg->plan;
  d->alloc = cfg->alloc;
  const sfcrt_options_t *o = cfg->options;
  d->mode = o ? o->cuda.mode : SFCRT_CUDA_ARENA;
  d->va_chunk_bytes =
      o && o->cuda.va_chunk_bytes ? o->cuda.va_chunk_bytes : cfg->plan->meta.va_chunk_bytes;
  d->sync_flags = o && o->cuda.blocking_sync ? CU_EVENT_BLOCKING_SYNC : 0;
  int ordinal = o ? o->cuda.device_ordinal : 0;
  sfc_status_t st = SFC_OK;
  if (d->mode != SFCRT_CUDA_ARENA && d->mode != SFCRT_CUDA_VA && d->mode != SFCRT_CUDA_PAGED) {
    st = sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "cuda device: unknown mode %d", (int)d->mode);
    goto fail;
  }
  if ((st = sfcrt_cuda_driver_load(&d->drv, err)) != SFC_OK)
    goto fail;
  if (o && o->cuda.context) {
    /* the caller's context decides the device */
    if ((st = context_device(d, (CUcontext)o->cuda.context, &d->device, err)) != SFC_OK)
      goto fail;
    if (ordinal != 0 && ordinal != (int)d->device) {
      st = sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "cuda device: device_ordinal %d, but the given context is on device %d",
                         ordinal, (int)d->device);
      goto fail;
    }
    d->ctx = (CUcontext)o->cuda.context;
  } else {
    if ((st = ck(d, d->drv.fn.cuDeviceGet(&d->device, ordinal), "cuDeviceGet", err)) != SFC_OK)
      goto fail;
    st = ck(d, d->drv.fn.cuDevicePrimaryCtxRetain(&d->ctx, d->device), "cuDevicePrimaryCtxRetain",
            err);
    if (st != SFC_OK)
      goto fail;
    d->retained = true;
  }
  if (d->mode != SFCRT_CUDA_ARENA) {
    int vmm = 0;
    st = ck(d,
            d->drv.fn.cuDeviceGetAttribute(
                &vmm, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, d->device),
            "cuDeviceGetAttribute", err);
    if (st == SFC_OK && !vmm)
      st = sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                         "cuda device %d does not support virtual memory management (%s mode)",
                         (int)d->device, d->mode == SFCRT_CUDA_VA ? "VA" : "paged");
    if (st != SFC_OK)
      goto fail;
  }
  if ((st = enter(d, err)) != SFC_OK)
    goto fail;
  if (o && (o->cuda.has_stream || o->cuda.stream)) {
    /* handle 0 is the legacy default stream (PyTorch's default stream) */
    d->q[SFCRT_QUEUE_COMPUTE] = o->cuda.stream ? (CUstream)o->cuda.stream : CU_STREAM_LEGACY;
    st = check_stream_context(d, err);
  } else {
    st = ck(d, d->drv.fn.cuStreamCreate(&d->q[SFCRT_QUEUE_COMPUTE], CU_STREAM_NON_BLOCKING),
            "cuStreamCreate", err);
    d->own_compute = st == SFC_OK;
  }
  if (st == SFC_OK)
    st = ck(d, d->drv.fn.cuStreamCreate(&d->q[SFCRT_QUEUE_H2D], CU_STREAM_NON_BLOCKING),
            "cuStreamCreate", err);
  if (st == SFC_OK)
    st = ck(d, d->drv.fn.cuStreamCreate(&d->q[SFCRT_QUEUE_D2H], CU_STREAM_NON_BLOCKING),
            "cuStreamCreate", err);
  for (int q = 0; st == SFC_OK && d->sync_flags && q < SFCRT_QUEUE_COUNT; q++)
    st = ck(
        d,
        d->drv.fn.cuEventCreate(&d->sync_ev[q], CU_EVENT_DISABLE_TIMING | CU_EVENT_BLOCKING_SYNC),
        "cuEventCreate", err);
  if (st == SFC_OK)
    st =
        ck(d, d->drv.fn.cuEventCreate(&d->begin_ev, CU_EVENT_DISABLE_TIMING), "cuEventCreate", err);
  if (st == SFC_OK && cfg->event_count) {
    d->events = sfc_calloc(d->alloc, cfg->event_count, sizeof(CUevent));
    d->events_cap = d->events ? cfg->event_count : 0;
    if (!d->events)
      st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "cuda device: out of memory for events");
  }
  for (uint32_t e = 0; st == SFC_OK && e < cfg->event_count; e++) {
    st = ck(d, d->drv.fn.cuEventCreate(&d->events[e], CU_EVENT_DISABLE_TIMING), "cuEventCreate",
            err);
    if (st == SFC_OK)
      d->event_count = e + 1;
  }
  if ((st = leave(d, st, err)) != SFC_OK)
    goto fail;
  *out_self = d;
  return SFC_OK;
fail:
  cuda_destroy(d);
  return st;
}

static sfc_status_t cuda_arena_alloc(void *self, uint64_t bytes, uint32_t alignment,
                                     sfc_error_t *err) {
  cuda_dev_t *d = self;
  if (d->mode == SFCRT_CUDA_VA)
    return va_setup(d, err);
  if (d->mode == SFCRT_CUDA_PAGED)
    return pg_setup(d, bytes, alignment, err);
  if (bytes == 0)
    return SFC_OK;
  /* cuMemAlloc aligns to at least 256 bytes; over-allocate for larger alignments */
  uint64_t extra = alignment > 256 ? alignment : 0;
  if (bytes > SIZE_MAX - extra)
    return sfc_error_set(err, SFC_ERR_LIMIT, "cuda arena of %llu bytes", (unsigned long long)bytes);
  SFC_TRY(enter(d, err));
  sfc_status_t st =
      ck(d, d->drv.fn.cuMemAlloc(&d->arena_raw, (size_t)(bytes + extra)), "cuMemAlloc", err);
  if (st != SFC_OK)
    d->arena_raw = 0;
  st = leave(d, st, err);
  if (st != SFC_OK) {
    sfc_error_prefix(err, "cuda arena");
    return st;
  }
  d->arena = extra ? (d->arena_raw + extra - 1) / extra * extra : d->arena_raw;
  d->arena_bytes = bytes;
  return SFC_OK;
}

static sfc_status_t cuda_host_alloc(void *self, uint64_t bytes, sfc_error_t *err) {
  cuda_dev_t *d = self;
  if (bytes == 0)
    return SFC_OK;
  if (bytes > SIZE_MAX)
    return sfc_error_set(err, SFC_ERR_LIMIT, "pinned arena of %llu bytes",
                         (unsigned long long)bytes);
  SFC_TRY(enter(d, err));
  sfc_status_t st =
      ck(d, d->drv.fn.cuMemHostAlloc(&d->host, (size_t)bytes, 0), "cuMemHostAlloc", err);
  if (st != SFC_OK)
    d->host = NULL;
  st = leave(d, st, err);
  if (st == SFC_OK)
    d->host_bytes = bytes;
  return st;
}

static void *cuda_block_address(void *self, uint32_t block) {
  cuda_dev_t *d = self;
  const sfc_plan_block_t *b = &d->plan->blocks[block];
  if (d->mode == SFCRT_CUDA_VA)
    return (void *)(uintptr_t)d->ranges[b->tensor].base;
  if (d->mode == SFCRT_CUDA_PAGED)
    return d->pg_base ? (void *)(uintptr_t)(d->pg_base + b->offset) : NULL;
  return d->arena_bytes ? (void *)(uintptr_t)(d->arena + b->offset) : NULL;
}

static void *cuda_host_block_address(void *self, uint32_t host_block) {
  cuda_dev_t *d = self;
  return d->host ? (char *)d->host + d->plan->host_blocks[host_block].offset : NULL;
}

static sfc_status_t cuda_copy(void *self, sfcrt_queue_t q, const sfcrt_copy_t *c,
                              sfc_error_t *err) {
  cuda_dev_t *d = self;
  SFC_TRY(enter(d, err));
  sfc_status_t st = SFC_OK;
  CUdeviceptr dev = (CUdeviceptr)(uintptr_t)c->device_ptr;
  bool managed = sfcrt_life_managed(&d->plan->blocks[c->device_block]);
  bool va = d->mode == SFCRT_CUDA_VA && managed, pg = d->mode == SFCRT_CUDA_PAGED && managed;
  if (c->direction == SFC_SWAP_IN) {
    if (va)
      st = va_begin(d, c->tensor, q, err);
    else if (pg)
      st = pg_begin(d, c->device_block, err);
    if (st == SFC_OK && c->bytes)
      st = ck(d, d->drv.fn.cuMemcpyHtoDAsync(dev, c->host_ptr, (size_t)c->bytes, d->q[q]),
              "cuMemcpyHtoDAsync", err);
    /* the chunks must not be reclaimed before the copy into them has landed, whether
     * or not a step ever waits for it */
    if (st == SFC_OK && va)
      st = va_record(d, c->tensor, SFCRT_QUEUE_H2D, err);
    else if (st == SFC_OK && pg)
      st = pg_record(d, c->device_block, SFCRT_QUEUE_H2D, err);
  } else {
    if (c->bytes)
      st = ck(d, d->drv.fn.cuMemcpyDtoHAsync(c->host_ptr, dev, (size_t)c->bytes, d->q[q]),
              "cuMemcpyDtoHAsync", err);
    if (st == SFC_OK && va) {
      st = va_record(d, c->tensor, SFCRT_QUEUE_D2H, err);
      /* the block's compute life is over when its last step has been issued */
      if (st == SFC_OK && d->plan->blocks[c->device_block].last_step < d->current_step)
        va_end(d, c->tensor);
    } else if (st == SFC_OK && pg) {
      st = pg_record(d, c->device_block, SFCRT_QUEUE_D2H, err);
      if (st == SFC_OK && d->plan->blocks[c->device_block].last_step < d->current_step)
        pg_end(d, c->device_block);
    }
  }
  return leave(d, st, err);
}

static sfc_status_t cuda_event_record(void *self, sfcrt_queue_t q, uint32_t event,
                                      sfc_error_t *err) {
  cuda_dev_t *d = self;
  SFC_TRY(enter(d, err));
  sfc_status_t st = ck(d, d->drv.fn.cuEventRecord(d->events[event], d->q[q]), "cuEventRecord", err);
  return leave(d, st, err);
}

static sfc_status_t cuda_queue_wait(void *self, sfcrt_queue_t q, uint32_t event, sfc_error_t *err) {
  cuda_dev_t *d = self;
  SFC_TRY(enter(d, err));
  sfc_status_t st =
      ck(d, d->drv.fn.cuStreamWaitEvent(d->q[q], d->events[event], 0), "cuStreamWaitEvent", err);
  return leave(d, st, err);
}

/* Work the framework issued on the compute stream before iteration_begin (initial
 * values or a new batch written into homes and bound tensors, asynchronously) happens
 * before every copy of the iteration: the copy queues wait for it, as compute does by
 * stream order. Without this, a swap-in could read a host home, or a swap-out a
 * persistent block, before the framework's write landed. */
static sfc_status_t cuda_iteration_begin(void *self, uint64_t iteration, sfc_error_t *err) {
  cuda_dev_t *d = self;
  d->current_step = 0;
  SFC_TRY(enter(d, err));
  sfc_status_t st = check_capture(d, "iteration_begin", err);
  if (st == SFC_OK)
    st = ck(d, d->drv.fn.cuEventRecord(d->begin_ev, d->q[SFCRT_QUEUE_COMPUTE]), "cuEventRecord",
            err);
  for (int q = SFCRT_QUEUE_H2D; st == SFC_OK && q <= SFCRT_QUEUE_D2H; q++)
    st = ck(d, d->drv.fn.cuStreamWaitEvent(d->q[q], d->begin_ev, 0), "cuStreamWaitEvent", err);
  return leave(d, st, err);
}

static sfc_status_t cuda_step_begin(void *self, const sfcrt_device_step_t *s, void **out_stream,
                                    sfc_error_t *err) {
  cuda_dev_t *d = self;
  d->current_step = s->index;
  *out_stream = d->q[SFCRT_QUEUE_COMPUTE];
  if (d->mode == SFCRT_CUDA_ARENA || d->life.begin_at[s->index] == d->life.begin_at[s->index + 1])
    return SFC_OK;
  SFC_TRY(enter(d, err));
  sfc_status_t st = SFC_OK;
  for (uint32_t i = d->life.begin_at[s->index]; st == SFC_OK && i < d->life.begin_at[s->index + 1];
       i++)
    st = d->mode == SFCRT_CUDA_PAGED
             ? pg_begin(d, d->life.begin_idx[i], err)
             : va_begin(d, d->plan->blocks[d->life.begin_idx[i]].tensor, SFCRT_QUEUE_COMPUTE, err);
  return leave(d, st, err);
}

static sfc_status_t cuda_step_end(void *self, const sfcrt_device_step_t *s, sfc_error_t *err) {
  cuda_dev_t *d = self;
  d->current_step = s->index + 1;
  if (d->mode == SFCRT_CUDA_ARENA || d->life.end_at[s->index] == d->life.end_at[s->index + 1])
    return SFC_OK;
  SFC_TRY(enter(d, err));
  sfc_status_t st = SFC_OK;
  bool pg = d->mode == SFCRT_CUDA_PAGED;
  for (uint32_t i = d->life.end_at[s->index]; st == SFC_OK && i < d->life.end_at[s->index + 1];
       i++) {
    uint32_t b = d->life.end_idx[i], t = d->plan->blocks[b].tensor;
    st = pg ? pg_record(d, b, SFCRT_QUEUE_COMPUTE, err) : va_record(d, t, SFCRT_QUEUE_COMPUTE, err);
    /* a swap-out issued after this step ends the block itself */
    if (st == SFC_OK && sfcrt_life_ends_at_step(&d->life, b, s->index)) {
      if (pg)
        pg_end(d, b);
      else
        va_end(d, t);
    }
  }
  return leave(d, st, err);
}

static sfc_status_t cuda_iteration_end(void *self, sfc_error_t *err) {
  cuda_dev_t *d = self;
  SFC_TRY(enter(d, err));
  sfc_status_t st = check_capture(d, "iteration_end", err);
  static const char *const names[SFCRT_QUEUE_COUNT] = {"compute", "H2D", "D2H"};
  for (int q = 0; q < SFCRT_QUEUE_COUNT && st == SFC_OK; q++) {
    if (d->sync_flags) /* the host sleeps on a blocking-sync event instead of spinning */
      st = ck(d, d->drv.fn.cuEventRecord(d->sync_ev[q], d->q[q]), "cuEventRecord", err);
    if (st == SFC_OK)
      st = d->sync_flags
               ? ck(d, d->drv.fn.cuEventSynchronize(d->sync_ev[q]), "cuEventSynchronize", err)
               : ck(d, d->drv.fn.cuStreamSynchronize(d->q[q]), "cuStreamSynchronize", err);
    if (st != SFC_OK)
      sfc_error_prefix(err, names[q]);
  }
  /* every queue drained: the pending unmaps need no wait */
  while (st == SFC_OK && d->mode == SFCRT_CUDA_VA && d->pending_count > 0)
    st = va_reclaim(d, d->pending[d->pending_count - 1], false, err);
  /* paged: the pending pages stay mapped (the next iteration's blocks may touch them
   * again), but their users are done */
  const sfcrt_page_fifo_t *f = &d->pg_fifo;
  for (size_t i = f->head; st == SFC_OK && d->mode == SFCRT_CUDA_PAGED && i < f->tail; i++)
    if (sfcrt_page_fifo_current(f, i))
      for (int q = 0; q < SFCRT_QUEUE_COUNT; q++)
        d->pg_last[(size_t)f->page[i] * 3 + (size_t)q] = SFC_PLAN_NONE;
  return leave(d, st, err);
}

static void cuda_stats(void *self, sfcrt_stats_t *stats) {
  cuda_dev_t *d = self;
  if (d->mode != SFCRT_CUDA_ARENA && d->va_ready) {
    stats->arena_bytes = (uint64_t)d->pool.created * d->pool.chunk_bytes;
    stats->chunks_mapped = d->pool.maps;
    stats->chunks_unmapped = d->pool.unmaps;
    stats->unmap_waits = d->unmap_waits;
  }
}

static void cuda_destroy(void *self) {
  cuda_dev_t *d = self;
  if (!d)
    return;
  if (d->drv.fn.cuInit && d->ctx) {
    /* When the push fails (the context is gone or broken) everything is still freed:
     * streams, events and memory carry their context, so the calls reach it (or fail
     * harmlessly); only the pop is skipped. */
    sfc_error_t ignored;
    bool pushed = enter(d, &ignored) == SFC_OK;
    for (int q = 0; q < SFCRT_QUEUE_COUNT; q++)
      if (d->q[q] && (q != SFCRT_QUEUE_COMPUTE || d->own_compute))
        d->drv.fn.cuStreamSynchronize(d->q[q]);
    if (d->q[SFCRT_QUEUE_COMPUTE] && !d->own_compute) {
      /* the framework's stream: wait for what the session ordered on it, unless it is
       * being captured (a synchronisation would invalidate the capture) */
      CUstreamCaptureStatus cs = CU_STREAM_CAPTURE_STATUS_NONE;
      if (d->drv.fn.cuStreamIsCapturing(d->q[SFCRT_QUEUE_COMPUTE], &cs) == CUDA_SUCCESS &&
          cs == CU_STREAM_CAPTURE_STATUS_NONE)
        d->drv.fn.cuStreamSynchronize(d->q[SFCRT_QUEUE_COMPUTE]);
    }
    if (d->mode == SFCRT_CUDA_VA)
      va_teardown(d);
    else if (d->mode == SFCRT_CUDA_PAGED)
      pg_teardown(d);
    if (d->arena_raw)
      d->drv.fn.cuMemFree(d->arena_raw);
    if (d->host)
      d->drv.fn.cuMemFreeHost(d->host);
    for (uint32_t e = 0; e < d->event_count; e++)
      d->drv.fn.cuEventDestroy(d->events[e]);
    for (int q = 0; q < SFCRT_QUEUE_COUNT; q++)
      if (d->sync_ev[q])
        d->drv.fn.cuEventDestroy(d->sync_ev[q]);
    if (d->begin_ev)
      d->drv.fn.cuEventDestroy(d->begin_ev);
    if (d->q[SFCRT_QUEUE_H2D])
      d->drv.fn.cuStreamDestroy(d->q[SFCRT_QUEUE_H2D]);
    if (d->q[SFCRT_QUEUE_D2H])
      d->drv.fn.cuStreamDestroy(d->q[SFCRT_QUEUE_D2H]);
    if (d->own_compute)
      d->drv.fn.cuStreamDestroy(d->q[SFCRT_QUEUE_COMPUTE]);
    if (pushed)
      leave(d, SFC_OK, &ignored);
    if (d->retained)
      d->drv.fn.cuDevicePrimaryCtxRelease(d->device);
  } else if (d->mode == SFCRT_CUDA_VA) {
    va_teardown(d);
  } else if (d->mode == SFCRT_CUDA_PAGED) {
    pg_teardown(d);
  }
  if (d->events)
    sfc_free(d->alloc, d->events, (size_t)d->events_cap * sizeof(CUevent));
  sfcrt_cuda_driver_unload(&d->drv);
  sfc_free(d->alloc, d, sizeof(*d));
}

const sfcrt_device_ops_t sfcrt_device_cuda = {
    .name = "cuda",
    .create = cuda_create,
    .arena_alloc = cuda_arena_alloc,
    .host_alloc = cuda_host_alloc,
    .block_address = cuda_block_address,
    .host_block_address = cuda_host_block_address,
    .iteration_begin = cuda_iteration_begin,
    .copy = cuda_copy,
    .event_record = cuda_event_record,
    .queue_wait = cuda_queue_wait,
    .step_begin = cuda_step_begin,
    .step_end = cuda_step_end,
    .iteration_end = cuda_iteration_end,
    .stats = cuda_stats,
    .destroy = cuda_destroy,
};
