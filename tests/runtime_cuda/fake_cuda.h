/* fake_cuda.h — a fake CUDA driver on host memory, for tests without a GPU.
 *
 * Implements every row of runtime/src/cuda_symbols.h:
 *  - cuMemAlloc/cuMemHostAlloc: host heap; copies and memsets run synchronously
 *    (streams complete at once, so ordering bugs are NOT caught here: that is the host
 *    device's integrity mode's job);
 *  - virtual memory management on real host mappings: cuMemAddressReserve is a
 *    PROT_NONE reservation, cuMemCreate a memfd of the chunk size, cuMemMap maps the
 *    memfd at the address without access, cuMemSetAccess grants read/write, cuMemUnmap
 *    puts the PROT_NONE reservation back. Data survive unmap/map round trips because
 *    they live in the memfd; touching an unmapped range faults. Every misuse (mapping
 *    outside a reservation, over a mapping, a released handle, unmapping what is not a
 *    whole mapping, freeing a reservation that still has mappings, releasing a mapped
 *    handle) is counted in `violations` with the first one described in `violation`;
 *  - streams, events, contexts: counted, so tests prove every create has its destroy;
 *  - failure injection: the `fail_nth`-th call (1-based) to the entry point named
 *    `fail_name` returns `fail_result` (counting resets when fail_name is set).
 *
 * Install: fake_cuda_driver(&drv) fills a sfcrt_cuda_driver_t directly;
 * fake_cuda_getproc is a cuGetProcAddress_v2 for sfcrt_cuda_driver_resolve. The shared
 * library fake_libcuda.so exports it as cuGetProcAddress_v2 for the real loader.
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
  int device_count;     /* default 1 */
  CUresult init_result; /* cuInit; default CUDA_SUCCESS */
  const char *missing;  /* fake_cuda_getproc reports this symbol as not found */
  const char *fail_name;
  int fail_nth;
  CUresult fail_result;
  int fail_seen_;
  /* counters */
  long calls;
  long allocs_live, host_allocs_live, streams_live, events_live, ctx_retained, ctx_pushed;
  long handles_live, reservations_live, mappings_live, mappings_peak;
  long memcpy_h2d, memcpy_d2h, memsets, event_records, stream_waits, syncs;
  long violations;
  char violation[256];
} fake_cuda_state_t;

/* The one fake driver's state (a process has one fake driver). */
fake_cuda_state_t *fake_cuda_state(void);

/* Resets configuration to the defaults and zeroes the counters. Tests call it first. */
void fake_cuda_reset(void);

/* Fills drv->fn with the fakes; drv->library stays NULL. */
void fake_cuda_driver(sfcrt_cuda_driver_t *drv);

CUresult CUDAAPI fake_cuda_getproc(const char *symbol, void **pfn, int cuda_version,
                                   cuuint64_t flags, CUdriverProcAddressQueryResult *status);

#endif /* SFC_TEST_FAKE_CUDA_H */
