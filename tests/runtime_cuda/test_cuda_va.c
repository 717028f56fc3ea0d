/* test_cuda_va.c — the virtual-addressing chunk pool on the fake driver, whose VA calls
 * are real host mappings (memfd chunks mapped into PROT_NONE reservations), so a range
 * the pool says is mapped can be written and read, and every driver misuse is counted.
 * Numbers are hand-derived from the 64 KiB fake granularity. */
#include <string.h>

#include "check.h"
#include "rt_test_util.h"
#include "cuda_va.h"
#include "fake_cuda.h"

#define G (64u * 1024u)

static sfcrt_cuda_driver_t drv;

static void setup(void) {
  fake_cuda_reset();
  fake_cuda_driver(&drv);
}

/* Every invariant the pool promises, plus the fake's view of the driver. */
static void check_pool(const sfcrt_cuda_va_pool_t *p) {
  CHECK(p->free_count <= p->created);
  CHECK(p->created <= p->max_chunks);
  CHECK_EQ_U64(fake_cuda_state()->handles_live, p->created);
  CHECK_EQ_U64(fake_cuda_state()->mappings_live, sfcrt_cuda_va_pool_mapped(p));
  CHECK_EQ_U64(fake_cuda_state()->violations, 0);
  if (fake_cuda_state()->violations)
    fprintf(stderr, "fake driver: %s\n", fake_cuda_state()->violation);
}

static void fill(const sfcrt_cuda_va_range_t *r, unsigned char v) {
  memset((void *)(uintptr_t)r->base, v, r->bytes);
}
static int holds(const sfcrt_cuda_va_range_t *r, unsigned char v) {
  const unsigned char *m = (const unsigned char *)(uintptr_t)r->base;
  for (size_t i = 0; i < r->bytes; i++)
    if (m[i] != v)
      return 0;
  return 1;
}

static void test_chunk_size(void) {
  sfcrt_cuda_va_pool_t p;
  sfc_error_t err;
  setup();
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 10 * G, 0, NULL, &err), SFC_OK);
  CHECK_EQ_U64(p.chunk_bytes, G); /* 0 = the granularity */
  CHECK_EQ_U64(p.max_chunks, 10);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 100000, 10 * G, 0, NULL, &err), SFC_OK);
  CHECK_EQ_U64(p.chunk_bytes, 2 * G); /* rounded up to a multiple of the granularity */
  CHECK_EQ_U64(p.max_chunks, 5);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 2 * G, G, 0, NULL, &err), SFC_ERR_DOES_NOT_FIT);
  CHECK(strstr(err.message, "smaller than one") != NULL);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 2 * G, 3 * G, NULL, &err),
               SFC_ERR_INVALID_ARGUMENT);
  check_pool(&p);
}

static void test_map_unmap_reuse(void) {
  sfcrt_cuda_va_pool_t p;
  sfcrt_cuda_va_range_t a, b, c;
  sfc_error_t err;
  setup();
  /* at most 6 chunks, 2 created now */
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 6 * G, 2 * G, NULL, &err), SFC_OK);
  CHECK_EQ_U64(p.created, 2);
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &a, 1, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &b, G + 1, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &c, 200 * 1024, &err), SFC_OK);
  CHECK_EQ_U64(a.chunks, 1);
  CHECK_EQ_U64(b.chunks, 2);
  CHECK_EQ_U64(c.chunks, 4);       /* 204800 / 65536 = 3.1 -> 4 */
  CHECK(c.bytes - 200 * 1024 < G); /* internal fragmentation < one chunk */
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 3);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 0);

  CUdeviceptr b_base = b.base;
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &a, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &b, &err), SFC_OK);
  CHECK_EQ_U64(p.created, 3); /* 2 preallocated + 1 lazily */
  CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 3);
  fill(&a, 0xA1);
  fill(&b, 0xB2);
  CHECK(holds(&a, 0xA1) && holds(&b, 0xB2));
  check_pool(&p);

  /* c needs 4: 0 free + 3 more may be created: does not fit, nothing changes */
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &c, &err), SFC_ERR_DOES_NOT_FIT);
  CHECK(strstr(err.message, "needs 4 chunks") != NULL);
  CHECK(!c.mapped);
  CHECK_EQ_U64(p.created, 3);
  check_pool(&p);

  /* swap b out: its 2 chunks go back; now c fits (2 free + 2 created) */
  CHECK_EQ_U64(sfcrt_cuda_va_range_unmap(&p, &b, &err), SFC_OK);
  CHECK_EQ_U64(p.free_count, 2);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &c, &err), SFC_OK);
  CHECK_EQ_U64(p.created, 5);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 5);
  CHECK_EQ_U64(p.mapped_peak, 5);
  fill(&c, 0xC3);
  CHECK(holds(&a, 0xA1) && holds(&c, 0xC3)); /* chunks are not shared */
  check_pool(&p);

  /* b comes back at the same address */
  CHECK_EQ_U64(sfcrt_cuda_va_range_unmap(&p, &c, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &b, &err), SFC_OK);
  CHECK(b.base == b_base);
  fill(&b, 0x5B);
  /* a range unmapped and mapped again with nothing in between gets its own chunks back
   * (LIFO stack, pushed in reverse): its bytes survive */
  CHECK_EQ_U64(sfcrt_cuda_va_range_unmap(&p, &b, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &b, &err), SFC_OK);
  CHECK(holds(&b, 0x5B));
  check_pool(&p);

  /* misuse */
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &b, &err), SFC_ERR_STATE);
  CHECK_EQ_U64(sfcrt_cuda_va_range_unmap(&p, &c, &err), SFC_ERR_STATE);
  sfcrt_cuda_va_range_t empty;
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &empty, 0, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 3); /* c's old range still reserved */

  /* release unmaps what is mapped (a, b) and frees every reservation (c unmapped) */
  CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &a, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &b, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &c, &err), SFC_OK);
  check_pool(&p);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->violations, 0);
}

/* A failure at any driver call inside map leaves the range unmapped and the pool
 * consistent; the mapping then succeeds once the failure is gone. */
static void test_map_failures(void) {
  static const struct {
    const char *call;
    int nth;
    sfc_status_t want;
  } rows[] = {
      {"cuMemMap", 1, SFC_ERR_DEVICE},
      {"cuMemMap", 3, SFC_ERR_DEVICE},
      {"cuMemCreate", 2, SFC_ERR_OUT_OF_MEMORY},
      {"cuMemSetAccess", 1, SFC_ERR_DEVICE},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    sfcrt_cuda_va_pool_t p;
    sfcrt_cuda_va_range_t r;
    sfc_error_t err;
    setup();
    CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 8 * G, 1 * G, NULL, &err), SFC_OK);
    CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &r, 4 * G, &err), SFC_OK);
    fake_cuda_state()->fail_name = rows[i].call;
    fake_cuda_state()->fail_nth = rows[i].nth;
    fake_cuda_state()->fail_result =
        rows[i].want == SFC_ERR_OUT_OF_MEMORY ? CUDA_ERROR_OUT_OF_MEMORY : CUDA_ERROR_INVALID_VALUE;
    CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &r, &err), rows[i].want);
    CHECK(strncmp(err.message, rows[i].call, strlen(rows[i].call)) == 0);
    CHECK(!r.mapped);
    CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 0);
    check_pool(&p);
    fake_cuda_state()->fail_name = NULL;
    CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &r, &err), SFC_OK);
    fill(&r, 0x77);
    CHECK(holds(&r, 0x77));
    CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &r, &err), SFC_OK);
    CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
    CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
    CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
    CHECK_EQ_U64(fake_cuda_state()->violations, 0);
  }
}

/* Single chunks at addresses of the caller's own reservation (paged mode's pages): data
 * survives, the pool's limit is a clear error, a failing driver call leaves the address
 * unmapped and the chunk in the pool, an unmapped chunk is reused. */
static void test_chunk_at(void) {
  sfcrt_cuda_va_pool_t p;
  sfc_error_t err;
  setup();
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 2 * G, 2 * G, NULL, &err), SFC_OK);
  CUdeviceptr base = 0;
  CHECK_EQ_U64(drv.fn.cuMemAddressReserve(&base, 4 * G, 0, 0, 0), CUDA_SUCCESS);
  CUmemGenericAllocationHandle h[4] = {0};
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_map(&p, base + 3 * G, &h[3], &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_map(&p, base + 1 * G, &h[1], &err), SFC_OK);
  memset((void *)(uintptr_t)(base + 3 * G), 0x5a, G);
  CHECK(((unsigned char *)(uintptr_t)(base + 3 * G))[G - 1] == 0x5a);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 2);
  check_pool(&p);
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_map(&p, base, &h[0], &err), SFC_ERR_DOES_NOT_FIT);
  CHECK(strstr(err.message, "all 2 chunks") != NULL);
  CHECK_EQ_U64(h[0], 0);
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_unmap(&p, base + 1 * G, h[1], &err), SFC_OK);
  static const char *const calls[] = {"cuMemMap", "cuMemSetAccess"};
  for (int i = 0; i < 2; i++) {
    fake_cuda_state()->fail_name = calls[i];
    fake_cuda_state()->fail_nth = 1;
    fake_cuda_state()->fail_seen_ = 0;
    fake_cuda_state()->fail_result = CUDA_ERROR_INVALID_VALUE;
    CHECK_EQ_U64(sfcrt_cuda_va_chunk_map(&p, base, &h[0], &err), SFC_ERR_DEVICE);
    CHECK(strncmp(err.message, calls[i], strlen(calls[i])) == 0);
    CHECK_EQ_U64(sfcrt_cuda_va_pool_mapped(&p), 1);
    fake_cuda_state()->fail_name = NULL;
    check_pool(&p);
  }
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_map(&p, base, &h[0], &err), SFC_OK); /* the freed chunk */
  CHECK_EQ_U64(p.created, 2);
  memset((void *)(uintptr_t)base, 0x11, G);
  CHECK(((unsigned char *)(uintptr_t)(base + 3 * G))[0] == 0x5a);
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_unmap(&p, base, h[0], &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_chunk_unmap(&p, base + 3 * G, h[3], &err), SFC_OK);
  check_pool(&p);
  CHECK_EQ_U64(drv.fn.cuMemAddressFree(base, 4 * G), CUDA_SUCCESS);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->violations, 0);
}

static void test_deinit_mapped(void) {
  sfcrt_cuda_va_pool_t p;
  sfcrt_cuda_va_range_t r;
  sfc_error_t err;
  setup();
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 4 * G, 0, NULL, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &r, 2 * G, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &r, &err), SFC_OK);
  sfcrt_cuda_va_pool_t copy = p;
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&copy, &err), SFC_ERR_STATE);
  CHECK(strstr(err.message, "2 chunks still mapped") != NULL);
  /* clean up what the pool left behind, through the driver directly */
  CUmemGenericAllocationHandle h0 = r.handles[0], h1 = r.handles[1];
  drv.fn.cuMemUnmap(r.base, G);
  drv.fn.cuMemUnmap(r.base + G, G);
  drv.fn.cuMemRelease(h0);
  drv.fn.cuMemRelease(h1);
  drv.fn.cuMemAddressFree(r.base, r.bytes);
  sfc_free(NULL, r.handles, r.chunks * sizeof(*r.handles));
  CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->violations, 0);
}

/* A failing allocator / failing driver call in init and reserve frees what they made
 * (test_alloc_t: live blocks back to 0). */
static void test_failing_setup(void) {
  for (long fail_at = 1; fail_at <= 2; fail_at++) {
    test_alloc_t count = {.fail_at = fail_at};
    sfc_allocator_t a = {test_alloc_fn, &count};
    sfcrt_cuda_va_pool_t p;
    sfcrt_cuda_va_range_t r;
    sfc_error_t err;
    setup();
    sfc_status_t st = sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 4 * G, 2 * G, &a, &err);
    if (fail_at == 1) {
      CHECK_EQ_U64(st, SFC_ERR_OUT_OF_MEMORY);
      CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
      CHECK_EQ_U64(count.live_blocks, 0);
      continue;
    }
    CHECK_EQ_U64(st, SFC_OK);
    CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &r, G, &err), SFC_ERR_OUT_OF_MEMORY);
    CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
    CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
    CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
    CHECK_EQ_U64(count.live_blocks, 0);
  }
  /* the driver fails the 2nd cuMemCreate of the prealloc: the first chunk is released */
  sfcrt_cuda_va_pool_t p;
  sfc_error_t err;
  setup();
  fake_cuda_state()->fail_name = "cuMemCreate";
  fake_cuda_state()->fail_nth = 2;
  fake_cuda_state()->fail_result = CUDA_ERROR_OUT_OF_MEMORY;
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 4 * G, 3 * G, NULL, &err),
               SFC_ERR_OUT_OF_MEMORY);
  CHECK_EQ_U64(fake_cuda_state()->handles_live, 0);
  /* and a failed address reservation frees the handle array */
  setup();
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 0, 4 * G, 0, NULL, &err), SFC_OK);
  fake_cuda_state()->fail_name = "cuMemAddressReserve";
  fake_cuda_state()->fail_nth = 1;
  fake_cuda_state()->fail_result = CUDA_ERROR_OUT_OF_MEMORY;
  sfcrt_cuda_va_range_t r;
  CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &r, G, &err), SFC_ERR_OUT_OF_MEMORY);
  CHECK(r.handles == NULL && r.chunks == 0);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
}

/* Internal fragmentation per range is below one chunk for any size (seed eq. 1). */
static void test_internal_fragmentation(void) {
  sfcrt_cuda_va_pool_t p;
  sfc_error_t err;
  setup();
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, 3 * G, 300 * G, 0, NULL, &err), SFC_OK);
  uint64_t x = 12345;
  for (int i = 0; i < 200; i++) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    size_t bytes = 1 + (size_t)(x >> 33) % (40 * G);
    sfcrt_cuda_va_range_t r;
    CHECK_EQ_U64(sfcrt_cuda_va_range_reserve(&p, &r, bytes, &err), SFC_OK);
    CHECK(r.bytes >= bytes && r.bytes - bytes < p.chunk_bytes);
    CHECK_EQ_U64(r.bytes % (3 * G), 0);
    CHECK_EQ_U64(r.base % G, 0); /* granularity-aligned: the driver's default alignment */
    CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &r, &err), SFC_OK);
  }
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
}

/* A chunk that is not a power of two: v100-nvlink2's 40 MiB over a 2 MiB granularity.
 * The driver takes only a power-of-two (or 0) alignment in cuMemAddressReserve, so the
 * pool must not pass the chunk size as the alignment (issue 13, item 1). */
static void test_non_power_of_two_chunk(void) {
  sfcrt_cuda_va_pool_t p;
  sfcrt_cuda_va_range_t r;
  sfc_error_t err;
  setup();
  fake_cuda_state()->granularity = 2u << 20;
  const size_t chunk = 40u << 20;
  CHECK_EQ_U64(sfcrt_cuda_va_pool_init(&p, &drv, 0, chunk, 3 * chunk, 0, NULL, &err), SFC_OK);
  CHECK_EQ_U64(p.chunk_bytes, chunk);
  sfc_status_t st = sfcrt_cuda_va_range_reserve(&p, &r, 50u << 20, &err);
  CHECK_EQ_U64(st, SFC_OK);
  if (st != SFC_OK) {
    fprintf(stderr, "reserve: %s\n", err.message);
    sfcrt_cuda_va_pool_deinit(&p, &err);
    return;
  }
  CHECK_EQ_U64(r.chunks, 2);
  CHECK_EQ_U64(r.base % (2u << 20), 0);
  CHECK_EQ_U64(sfcrt_cuda_va_range_map(&p, &r, &err), SFC_OK);
  unsigned char *m = (unsigned char *)(uintptr_t)r.base;
  m[0] = 1;
  m[r.bytes - 1] = 2; /* both chunks mapped and accessible */
  CHECK(m[0] == 1 && m[r.bytes - 1] == 2);
  check_pool(&p);
  CHECK_EQ_U64(sfcrt_cuda_va_range_release(&p, &r, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_cuda_va_pool_deinit(&p, &err), SFC_OK);
  CHECK_EQ_U64(fake_cuda_state()->reservations_live, 0);
  CHECK_EQ_U64(fake_cuda_state()->violations, 0);
}

int main(void) {
  RUN(test_chunk_size);
  RUN(test_non_power_of_two_chunk);
  RUN(test_map_unmap_reuse);
  RUN(test_map_failures);
  RUN(test_chunk_at);
  RUN(test_deinit_mapped);
  RUN(test_failing_setup);
  RUN(test_internal_fragmentation);
  return check_summary();
}
