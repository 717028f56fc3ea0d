/* fake_cuda.h — a fake CUDA driver on host memory, for tests without a GPU.
 *
 * Implements every row of runtime/src/cuda_symbols.h and enforces the real driver's
 * rules where sfc depends on them; every misuse by the code under test is counted in
 * `violations`, the first one described in `violation` (never fatal):
 *
 *  - Asynchronous streams. Copies, memsets, event records and event waits are queued
 *    on their stream and run only when something forces them (lazy, the default):
 *    cuStreamSynchronize, cuEventSynchronize, cuCtxSynchronize, or a forced operation
 *    that depends on them. An operation depends on the previous one of its stream, on
 *    the record an event wait names (as it was when the wait was issued), and —
 *    the legacy default stream's implicit ordering — an operation on the legacy stream
 *    (NULL or CU_STREAM_LEGACY) waits for everything issued earlier on the blocking
 *    streams of its context (created without CU_STREAM_NON_BLOCKING), and an operation
 *    on a blocking stream waits for everything issued earlier on the legacy stream.
 *    Non-blocking streams are ordered by events only. So a missing wait is a real,
 *    deterministic race: the reader runs first and sees stale bytes. cuEventQuery
 *    answers CUDA_ERROR_NOT_READY until the record has run (nothing runs by itself).
 *    `eager = 1` runs every operation as soon as it is issued (after what it depends on);
 *    `eager = 2` runs copies so (memsets and the rest stay lazy), except those on the
 *    legacy stream or on `lazy_stream` (a test's compute stream, whose copies stand for
 *    kernels reading memory): a copy then runs before the compute work it does not
 *    wait for, the race lazy mode cannot lose.
 *  - Memory. cuMemAlloc memory belongs to the current context's device; a queued
 *    operation that touches freed memory, an unmapped VA range, a range another device
 *    has no access to, or memory the fake does not know is a violation and is skipped.
 *    cuMemFree, cuMemFreeHost and cuMemUnmap while a queued operation still uses the
 *    memory are violations (cuMemFree "may" synchronise: the driver does not promise
 *    it). `mem_limit` bounds device bytes (cuMemAlloc + cuMemCreate):
 *    CUDA_ERROR_OUT_OF_MEMORY beyond it.
 *  - Virtual memory on real host mappings: cuMemAddressReserve is a PROT_NONE
 *    reservation (alignment 0 or a power of two, else CUDA_ERROR_INVALID_VALUE),
 *    cuMemCreate a memfd of the chunk size, cuMemMap maps it without access,
 *    cuMemSetAccess grants read/write to one device; cuMemUnmap puts the PROT_NONE
 *    reservation back. Mapping outside a reservation or over a mapping, releasing a
 *    mapped handle or freeing a reservation with mappings are violations.
 *  - Contexts: one primary context per device (device_count, default 1); a stack of
 *    current contexts; cuMemAlloc, cuStreamCreate and the legacy stream need a
 *    current context (CUDA_ERROR_INVALID_CONTEXT); cuCtxGetDevice and cuStreamGetCtx
 *    answer from it. A stream belongs to the context current at its creation.
 *  - Stream capture (global mode), started by fake_cuda_begin_capture: operations
 *    queued on the capturing stream are captured (never run); synchronising it,
 *    querying or synchronising an event recorded in the capture, using the legacy
 *    stream while a blocking stream captures, or cuMemAlloc/cuMemFree/cuMemHostAlloc/
 *    cuMemFreeHost/cuMemCreate during any capture return the real error codes
 *    (STREAM_CAPTURE_UNSUPPORTED / _IMPLICIT), invalidate the capture and are
 *    violations. cuStreamIsCapturing answers as the driver does.
 *  - Waits: cuStreamSynchronize, cuCtxSynchronize and cuEventSynchronize on an event
 *    without CU_EVENT_BLOCKING_SYNC count as spin_waits (the calling thread spins),
 *    cuEventSynchronize on a blocking-sync event as blocking_waits.
 *  - failure injection: the `fail_nth`-th call (1-based) to the entry point named
 *    `fail_name` returns `fail_result` (set fail_seen_ = 0 when arming it).
 *
 * Install: fake_cuda_driver(&drv) fills a sfcrt_cuda_driver_t directly;
 * fake_cuda_getproc is a cuGetProcAddress_v2 for sfcrt_cuda_driver_resolve. The shared
 * library fake_libcuda.so exports it as cuGetProcAddress_v2 for the real loader (tests
 * reach that copy's state with dlsym(lib, "fake_cuda_state") and friends).
 */
#ifndef SFC_TEST_FAKE_CUDA_H
#define SFC_TEST_FAKE_CUDA_H

#include <stddef.h>
#include <stdint.h>

#include "cuda_loader.h"

typedef struct fake_cuda_state {
  /* configuration */
  size_t granularity;   /* cuMemGetAllocationGranularity; default 64 KiB */
  int driver_version;   /* cuDriverGetVersion; default 12080 */
  int device_count;     /* default 1, at most 8 */
  CUresult init_result; /* cuInit; default CUDA_SUCCESS */
  const char *missing;  /* fake_cuda_getproc reports this symbol as not found */
  const char *fail_name;
  int fail_nth;
  CUresult fail_result;
  int fail_seen_;
  int eager;            /* 1: run each operation when issued; 2: copies only; 0 (default):
                           lazily */
  CUstream lazy_stream; /* eager 2: this stream's copies stay lazy */
  uint64_t mem_limit;   /* device bytes; 0 = unlimited */
  /* counters */
  long calls;
  long allocs_live, host_allocs_live, streams_live, events_live, ctx_retained, ctx_pushed;
  long handles_live, reservations_live, mappings_live, mappings_peak;
  long memcpy_h2d, memcpy_d2h, memsets, event_records, stream_waits, syncs;
  long mem_creates;          /* cuMemCreate calls that succeeded */
  long mem_allocs;           /* cuMemAlloc calls that succeeded */
  uint64_t device_bytes;     /* live cuMemAlloc + cuMemCreate bytes */
  long spin_waits;           /* stream/context syncs, syncs on non-blocking-sync events */
  long event_queries;        /* cuEventQuery calls */
  long blocking_waits;       /* cuEventSynchronize on CU_EVENT_BLOCKING_SYNC events */
  long ops_run, ops_skipped; /* queued operations run / skipped for a violation */
  long captured_ops;         /* operations queued on a capturing stream */
  long violations;
  char violation[256];
} fake_cuda_state_t;

/* The one fake driver's state (a process has one fake driver per copy of this file). */
fake_cuda_state_t *fake_cuda_state(void);

/* Resets configuration to the defaults, zeroes the counters, drops queued operations
 * and every stream. Tests call it first. */
void fake_cuda_reset(void);

/* Fills drv->fn with the fakes; drv->library stays NULL. */
void fake_cuda_driver(sfcrt_cuda_driver_t *drv);

CUresult CUDAAPI fake_cuda_getproc(const char *symbol, void **pfn, int cuda_version,
                                   cuuint64_t flags, CUdriverProcAddressQueryResult *status);

/* Stream capture (what cuStreamBeginCapture/EndCapture in global mode would do; the
 * runtime never starts a capture, so these are not rows of the table). Begin on the
 * legacy stream is CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED. End discards the captured
 * operations and returns CUDA_ERROR_STREAM_CAPTURE_INVALIDATED when the capture was
 * invalidated. */
CUresult fake_cuda_begin_capture(CUstream stream);
CUresult fake_cuda_end_capture(CUstream stream);

/* Operations queued and not yet run, on every stream. */
long fake_cuda_pending(void);

/* The violations counted so far (*count, when count is not NULL) and the first one's
 * description ("" when none): for callers that reach the fake only through dlopen and
 * do not mirror fake_cuda_state_t (tools/sfc-train --fake-driver). */
const char *fake_cuda_violation(long *count);

#endif /* SFC_TEST_FAKE_CUDA_H */
