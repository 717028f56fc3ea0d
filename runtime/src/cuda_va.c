/* cuda_va.c — the virtual-addressing chunk pool (see cuda_va.h for the contract).
 *
 * Algorithm (seed out-of-core-window-scheduling.txt §4, nnabla's VA allocator): a
 * request of m bytes gets a virtual range of k = ceil(m / chunk) chunks reserved once;
 * physical chunks live on a LIFO free stack; mapping pops k handles and maps them back
 * to back; unmapping pushes them back. Internal fragmentation < one chunk per range.
 * Every failure midway is rolled back so a range is either fully mapped or not at all,
 * and the pool's counts always satisfy created == free_count + chunks mapped.
 */
#include "cuda_va.h"

#include <string.h>

static sfc_status_t va_check(const sfcrt_cuda_va_pool_t *pool, CUresult r, const char *call,
                             sfc_error_t *err) {
  return sfcrt_cuda_check(pool->drv, r, call, err);
}

/* Creates one physical chunk and pushes it on the free stack. */
static sfc_status_t va_chunk_create(sfcrt_cuda_va_pool_t *pool, sfc_error_t *err) {
  CUmemGenericAllocationHandle h = 0;
  SFC_TRY(va_check(pool, pool->drv->fn.cuMemCreate(&h, pool->chunk_bytes, &pool->prop, 0),
                   "cuMemCreate", err));
  pool->free_stack[pool->free_count++] = h;
  pool->created++;
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_va_chunk_size(const sfcrt_cuda_driver_t *drv, CUdevice device,
                                      size_t chunk_bytes, size_t *out_chunk, sfc_error_t *err) {
  CUmemAllocationProp prop;
  memset(&prop, 0, sizeof(prop));
  prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id = device;
  size_t gran = 0;
  SFC_TRY(sfcrt_cuda_check(
      drv, drv->fn.cuMemGetAllocationGranularity(&gran, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
      "cuMemGetAllocationGranularity", err));
  if (gran == 0)
    return sfc_error_set(err, SFC_ERR_DEVICE, "cuMemGetAllocationGranularity returned 0");
  if (chunk_bytes == 0)
    chunk_bytes = gran;
  if (chunk_bytes > SIZE_MAX - gran)
    return sfc_error_set(err, SFC_ERR_LIMIT, "VA chunk size %zu is too large", chunk_bytes);
  *out_chunk = (chunk_bytes + gran - 1) / gran * gran;
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_va_pool_init(sfcrt_cuda_va_pool_t *pool, const sfcrt_cuda_driver_t *drv,
                                     CUdevice device, size_t chunk_bytes, size_t max_bytes,
                                     size_t prealloc_bytes, const sfc_allocator_t *alloc,
                                     sfc_error_t *err) {
  memset(pool, 0, sizeof(*pool));
  pool->drv = drv;
  pool->alloc = alloc;
  pool->prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
  pool->prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  pool->prop.location.id = device;
  pool->access.location = pool->prop.location;
  pool->access.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

  SFC_TRY(sfcrt_cuda_va_chunk_size(drv, device, chunk_bytes, &pool->chunk_bytes, err));
  pool->max_chunks = max_bytes / pool->chunk_bytes;
  if (pool->max_chunks == 0)
    return sfc_error_set(err, SFC_ERR_DOES_NOT_FIT,
                         "VA pool limit %zu bytes is smaller than one %zu-byte chunk", max_bytes,
                         pool->chunk_bytes);
  if (prealloc_bytes > max_bytes)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "VA prealloc %zu bytes exceeds the pool limit %zu", prealloc_bytes,
                         max_bytes);
  pool->free_stack = sfc_calloc(alloc, pool->max_chunks, sizeof(*pool->free_stack));
  if (!pool->free_stack)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "VA pool: no memory for %zu chunk handles",
                         pool->max_chunks);
  size_t want = (prealloc_bytes + pool->chunk_bytes - 1) / pool->chunk_bytes;
  for (size_t i = 0; i < want; i++) {
    sfc_status_t st = va_chunk_create(pool, err);
    if (st != SFC_OK) {
      sfc_error_t ignored;
      sfcrt_cuda_va_pool_deinit(pool, &ignored);
      return st;
    }
  }
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_va_pool_deinit(sfcrt_cuda_va_pool_t *pool, sfc_error_t *err) {
  sfc_status_t st = SFC_OK;
  size_t mapped = sfcrt_cuda_va_pool_mapped(pool);
  for (size_t i = 0; i < pool->free_count; i++) {
    sfc_status_t s = va_check(pool, pool->drv->fn.cuMemRelease(pool->free_stack[i]), "cuMemRelease",
                              st == SFC_OK ? err : NULL);
    if (st == SFC_OK)
      st = s;
  }
  if (st == SFC_OK && mapped != 0)
    st =
        sfc_error_set(err, SFC_ERR_STATE, "VA pool destroyed with %zu chunks still mapped", mapped);
  if (pool->free_stack)
    sfc_free(pool->alloc, pool->free_stack, pool->max_chunks * sizeof(*pool->free_stack));
  memset(pool, 0, sizeof(*pool));
  return st;
}

sfc_status_t sfcrt_cuda_va_range_reserve(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                         size_t bytes, sfc_error_t *err) {
  memset(range, 0, sizeof(*range));
  if (bytes == 0)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "VA range of 0 bytes");
  if (bytes > SIZE_MAX - pool->chunk_bytes)
    return sfc_error_set(err, SFC_ERR_LIMIT, "VA range of %zu bytes is too large", bytes);
  size_t chunks = (bytes + pool->chunk_bytes - 1) / pool->chunk_bytes;
  if (chunks > pool->max_chunks)
    return sfc_error_set(err, SFC_ERR_DOES_NOT_FIT,
                         "VA range of %zu bytes needs %zu chunks, the pool has at most %zu", bytes,
                         chunks, pool->max_chunks);
  range->handles = sfc_calloc(pool->alloc, chunks, sizeof(*range->handles));
  if (!range->handles)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "VA range: no memory for %zu handles", chunks);
  /* alignment 0: the driver's default (the allocation granularity). The driver takes
   * only a power of two or 0, and a chunk need not be a power of two (v100-nvlink2's is
   * 40 MiB); chunks are mapped at multiples of chunk_bytes from the base, which keeps
   * every mapping granularity-aligned. */
  CUdeviceptr base = 0;
  sfc_status_t st =
      va_check(pool, pool->drv->fn.cuMemAddressReserve(&base, chunks * pool->chunk_bytes, 0, 0, 0),
               "cuMemAddressReserve", err);
  if (st != SFC_OK) {
    sfc_free(pool->alloc, range->handles, chunks * sizeof(*range->handles));
    range->handles = NULL;
    return st;
  }
  range->base = base;
  range->chunks = chunks;
  range->bytes = chunks * pool->chunk_bytes;
  return SFC_OK;
}

/* Unmaps the first `count` chunks of range and pushes their handles back. Reports the
 * first failure but always returns every handle, so the pool's counts stay consistent. */
static sfc_status_t va_unmap_prefix(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                    size_t count, sfc_error_t *err) {
  sfc_status_t st = SFC_OK;
  for (size_t i = count; i-- > 0;) {
    CUdeviceptr at = range->base + (CUdeviceptr)(i * pool->chunk_bytes);
    sfc_status_t s = va_check(pool, pool->drv->fn.cuMemUnmap(at, pool->chunk_bytes), "cuMemUnmap",
                              st == SFC_OK ? err : NULL);
    pool->unmaps++;
    if (st == SFC_OK)
      st = s;
    pool->free_stack[pool->free_count++] = range->handles[i];
    range->handles[i] = 0;
  }
  return st;
}

sfc_status_t sfcrt_cuda_va_range_map(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                     sfc_error_t *err) {
  if (range->mapped)
    return sfc_error_set(err, SFC_ERR_STATE, "VA range at 0x%llx is already mapped",
                         (unsigned long long)range->base);
  if (range->chunks > pool->free_count + (pool->max_chunks - pool->created))
    return sfc_error_set(err, SFC_ERR_DOES_NOT_FIT,
                         "VA pool exhausted: range needs %zu chunks, %zu free, %zu more may be "
                         "created (limit %zu chunks of %zu bytes)",
                         range->chunks, pool->free_count, pool->max_chunks - pool->created,
                         pool->max_chunks, pool->chunk_bytes);
  size_t done = 0;
  sfc_status_t st = SFC_OK;
  for (; done < range->chunks; done++) {
    if (pool->free_count == 0 && (st = va_chunk_create(pool, err)) != SFC_OK)
      break;
    CUmemGenericAllocationHandle h = pool->free_stack[--pool->free_count];
    CUdeviceptr at = range->base + (CUdeviceptr)(done * pool->chunk_bytes);
    st = va_check(pool, pool->drv->fn.cuMemMap(at, pool->chunk_bytes, 0, h, 0), "cuMemMap", err);
    if (st != SFC_OK) {
      pool->free_stack[pool->free_count++] = h;
      break;
    }
    pool->maps++;
    range->handles[done] = h;
  }
  if (st == SFC_OK)
    st = va_check(pool, pool->drv->fn.cuMemSetAccess(range->base, range->bytes, &pool->access, 1),
                  "cuMemSetAccess", err);
  if (st != SFC_OK) {
    va_unmap_prefix(pool, range, done, NULL);
    return st;
  }
  range->mapped = true;
  size_t mapped = sfcrt_cuda_va_pool_mapped(pool);
  if (mapped > pool->mapped_peak)
    pool->mapped_peak = mapped;
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_va_range_unmap(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                       sfc_error_t *err) {
  if (!range->mapped)
    return sfc_error_set(err, SFC_ERR_STATE, "VA range at 0x%llx is not mapped",
                         (unsigned long long)range->base);
  range->mapped = false;
  return va_unmap_prefix(pool, range, range->chunks, err);
}

sfc_status_t sfcrt_cuda_va_range_release(sfcrt_cuda_va_pool_t *pool, sfcrt_cuda_va_range_t *range,
                                         sfc_error_t *err) {
  sfc_status_t st = SFC_OK;
  if (range->mapped)
    st = sfcrt_cuda_va_range_unmap(pool, range, err);
  if (range->chunks) {
    sfc_status_t s = va_check(pool, pool->drv->fn.cuMemAddressFree(range->base, range->bytes),
                              "cuMemAddressFree", st == SFC_OK ? err : NULL);
    if (st == SFC_OK)
      st = s;
  }
  if (range->handles)
    sfc_free(pool->alloc, range->handles, range->chunks * sizeof(*range->handles));
  memset(range, 0, sizeof(*range));
  return st;
}

sfc_status_t sfcrt_cuda_va_chunk_map(sfcrt_cuda_va_pool_t *pool, CUdeviceptr at,
                                     CUmemGenericAllocationHandle *out, sfc_error_t *err) {
  *out = 0;
  if (pool->free_count == 0 && pool->created == pool->max_chunks)
    return sfc_error_set(err, SFC_ERR_DOES_NOT_FIT,
                         "VA pool exhausted: all %zu chunks of %zu bytes are mapped",
                         pool->max_chunks, pool->chunk_bytes);
  if (pool->free_count == 0)
    SFC_TRY(va_chunk_create(pool, err));
  CUmemGenericAllocationHandle h = pool->free_stack[--pool->free_count];
  sfc_status_t st =
      va_check(pool, pool->drv->fn.cuMemMap(at, pool->chunk_bytes, 0, h, 0), "cuMemMap", err);
  if (st == SFC_OK) {
    pool->maps++;
    st = va_check(pool, pool->drv->fn.cuMemSetAccess(at, pool->chunk_bytes, &pool->access, 1),
                  "cuMemSetAccess", err);
    if (st != SFC_OK) {
      pool->drv->fn.cuMemUnmap(at, pool->chunk_bytes);
      pool->unmaps++;
    }
  }
  if (st != SFC_OK) {
    pool->free_stack[pool->free_count++] = h;
    return st;
  }
  *out = h;
  size_t mapped = sfcrt_cuda_va_pool_mapped(pool);
  if (mapped > pool->mapped_peak)
    pool->mapped_peak = mapped;
  return SFC_OK;
}

sfc_status_t sfcrt_cuda_va_chunk_unmap(sfcrt_cuda_va_pool_t *pool, CUdeviceptr at,
                                       CUmemGenericAllocationHandle h, sfc_error_t *err) {
  sfc_status_t st =
      va_check(pool, pool->drv->fn.cuMemUnmap(at, pool->chunk_bytes), "cuMemUnmap", err);
  pool->unmaps++;
  pool->free_stack[pool->free_count++] = h; /* back in any case: the counts stay consistent */
  return st;
}
