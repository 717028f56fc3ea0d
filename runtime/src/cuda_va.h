/* cuda_va.h — virtual-addressing chunk pool: stable per-tensor addresses over a pool of
 * physical chunks (seed out-of-core-window-scheduling.txt §4; ALGORITHMS.md §4).
 *
 *   sfcrt_cuda_va_pool_t pool;
 *   SFC_TRY(sfcrt_cuda_va_pool_init(&pool, &drv, dev, 0, 8 << 30, 0, NULL, &err)); // chunk =
 * granularity sfcrt_cuda_va_range_t r; SFC_TRY(sfcrt_cuda_va_range_reserve(&pool, &r, tensor_bytes,
 * &err)); // address fixed from now on SFC_TRY(sfcrt_cuda_va_range_map(&pool, &r, &err));     //
 * swap-in target / produced tensor
 *   ... kernels use (void *)r.base ...
 *   SFC_TRY(sfcrt_cuda_va_range_unmap(&pool, &r, &err));   // swapped out: chunks back to the pool
 *   sfcrt_cuda_va_range_release(&pool, &r, &err);
 *   sfcrt_cuda_va_pool_deinit(&pool, &err);
 *
 * Each range reserves ceil(bytes / chunk) * chunk bytes of virtual address space once
 * (cuMemAddressReserve); mapping takes that many physical chunks (cuMemCreate handles)
 * from the pool's free stack, maps them back to back (cuMemMap) and grants read/write
 * to the device (cuMemSetAccess); unmapping returns them. Physical chunks combine in any
 * order, so there is no external fragmentation; internal fragmentation is < one chunk per
 * mapped range. Chunks are created eagerly (`prealloc_bytes` at init) or lazily on map,
 * never beyond `max_bytes`: a map that would exceed it is SFC_ERR_DOES_NOT_FIT and leaves
 * the range unmapped.
 *
 * The caller orders unmapping after the device is done with the range (an event query or
 * synchronize): the pool does no synchronisation of its own. Host memory: the free stack
 * is allocated at init and each range's handle array at reserve; map/unmap allocate
 * nothing. Cost: map/unmap O(chunks of the range) driver calls.
 */
#ifndef SFCRT_CUDA_VA_H
#define SFCRT_CUDA_VA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cuda_loader.h"
#include "sfc/allocator.h"

typedef struct sfcrt_cuda_va_pool {
  const sfcrt_cuda_driver_t *drv;
  const sfc_allocator_t *alloc;
  CUmemAllocationProp prop;                 /* pinned device memory on `device` */
  CUmemAccessDesc access;                   /* read/write from `device` */
  size_t chunk_bytes;                       /* a multiple of the allocation granularity */
  size_t max_chunks;                        /* created never exceeds this */
  size_t created;                           /* physical chunks that exist */
  CUmemGenericAllocationHandle *free_stack; /* [max_chunks], free_count used */
  size_t free_count;
  size_t mapped_peak; /* most chunks mapped at once */
  uint64_t maps;      /* cuMemMap calls that succeeded (sfcrt_stats_t.chunks_mapped) */
  uint64_t unmaps;    /* cuMemUnmap calls */
} sfcrt_cuda_va_pool_t;

typedef struct sfcrt_cuda_va_range {
  CUdeviceptr base; /* stable for the range's lifetime */
  size_t bytes;     /* reserved: chunks * chunk_bytes */
  size_t chunks;
  CUmemGenericAllocationHandle *handles; /* [chunks], valid while mapped */
  bool mapped;
} sfcrt_cuda_va_range_t;

/* The chunk size a pool would use: chunk_bytes rounded up to the device's minimum
 * allocation granularity (0 = the granularity itself). */
sfc_status_t sfcrt_cuda_va_chunk_size(const sfcrt_cuda_driver_t *drv, CUdevice device,
                                      size_t chunk_bytes, size_t *out_chunk, sfc_error_t *err);

/* chunk_bytes 0 = the device's minimum granularity; otherwise rounded up to a multiple
 * of it. max_bytes bounds the physical memory (rounded down to chunks, at least one
 * chunk); prealloc_bytes (<= max_bytes) is created now. */
sfc_status_t sfcrt_cuda_va_pool_init(sfcrt_cuda_va_pool_t *pool, const sfcrt_cuda_driver_t *drv,
                                     CUdevice device, size_t chunk_bytes, size_t max_bytes,
                                     size_t prealloc_bytes, const sfc_allocator_t *alloc,
                                     sfc_error_t *err);

/* Releases every free chunk. Ranges must have been released first: a chunk still mapped
 * is SFC_ERR_STATE (the pool is deinitialised anyway, leaking those chunks to the
 * driver, which frees them with the context). */
sfc_status_t sfcrt_cuda_va_pool_deinit(sfcrt_cuda_va_pool_t *pool, sfc_error_t *err);

sfc_status_t sfcrt_cuda_va_range_reserve(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                         size_t bytes, sfc_error_t *err);
sfc_status_t sfcrt_cuda_va_range_map(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                     sfc_error_t *err);
sfc_status_t sfcrt_cuda_va_range_unmap(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                       sfc_error_t *err);
/* Unmaps when mapped, frees the address range and the handle array. */
sfc_status_t sfcrt_cuda_va_range_release(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                         sfc_error_t *err);

/* One chunk mapped at `at`, an address of a reservation the caller owns (cuMemAddressReserve;
 * `at` a multiple of chunk_bytes from its base), with read/write access granted: the
 * paged arena's page (device_cuda.c). *out is the chunk's handle, for the unmap. A pool
 * whose chunks are all mapped is SFC_ERR_DOES_NOT_FIT; a failure leaves `at` unmapped.
 * 2 driver calls (+ cuMemCreate when a lazy pool grows). */
sfc_status_t sfcrt_cuda_va_chunk_map(sfcrt_cuda_va_pool_t *pool, CUdeviceptr at,
                                     CUmemGenericAllocationHandle *out, sfc_error_t *err);
/* Unmaps the chunk at `at` and returns its handle to the pool (even when cuMemUnmap
 * fails, so the pool's counts stay consistent). The caller orders it after every use. */
sfc_status_t sfcrt_cuda_va_chunk_unmap(sfcrt_cuda_va_pool_t *pool, CUdeviceptr at,
                                       CUmemGenericAllocationHandle h, sfc_error_t *err);

/* Chunks mapped right now. */
static inline size_t sfcrt_cuda_va_pool_mapped(const sfcrt_cuda_va_pool_t *pool) {
  return pool->created - pool->free_count;
}

#endif /* SFCRT_CUDA_VA_H */
