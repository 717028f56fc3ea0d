/* test_plan_big.c — validation stays O(n log n) on big plans: a chain of 10^5 steps
 * (10^5 blocks alternating between two offsets), 10^5 blocks all at offset 0 with
 * disjoint lifetimes, 10^5 blocks in 100 lanes of 1000 steps (100 live at once), and a
 * chain with 10^5 swaps and deps (the happens-before, data-flow and reuse checks).
 * Each load is timed and printed; a quadratic validator would take minutes. */
#include <time.h>

#include "plan_test_util.h"

/* plan_validate.c's entry point (internal to libsfcrt), timed on its own below. */
static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void load_timed(pb_t *b, const char *label, sfc_status_t want, const char *msg) {
  void *d;
  size_t n;
  pb_write(b, &d, &n);
  double t0 = now();
  expect_load(d, n, want, msg, label);
  double t_load = now() - t0;
  /* The validator alone, on the builder's view (the same arrays the reader made). */
  sfc_error_t err;
  t0 = now();
  sfc_status_t s = sfcrt_plan_validate(pb_view(b), NULL, &err);
  double t_validate = now() - t0;
  CHECK_EQ_I64(s, want);
  const sfc_plan_view_t *v = pb_view(b);
  fprintf(stderr,
          "  %s: %u blocks, %u steps, %zu bytes: load %.1f ms, of which validation %.1f ms\n",
          label, v->block_count, v->step_count, n, t_load * 1e3, t_validate * 1e3);
  CHECK(t_load < 10.0); /* generous for sanitizer builds; a quadratic check takes minutes */
  free(d);
}

static void test_chain(void) {
  pb_t *b = pb_new();
  pb_simple_chain(b, 100000);
  load_timed(b, "chain of 10^5", SFC_OK, NULL);
  pb_free(b);
}

/* The chain moved up by 64 bytes; 10^5 more blocks at offset 0, block i live only at
 * step i. */
static void test_all_at_zero(void) {
  const uint32_t n = 100000;
  pb_t *b = pb_new();
  pb_simple_chain(b, n);
  for (uint32_t i = 0; i <= n; i++)
    pb_block_at(b, i)->offset += 64;
  for (uint32_t i = 0; i < n; i++) {
    uint32_t t = pb_tensor(b, "", 64, SFC_KIND_WORKSPACE);
    pb_block(b, t, 0, 64, i, i, 0);
  }
  pb_header(b)->arena_bytes = pb_header(b)->budget_bytes = 832;
  load_timed(b, "10^5 more blocks at one offset", SFC_OK, NULL);
  /* One of them stretched by a step overlaps its neighbour. */
  pb_block_at(b, 100001 + 500)->last_step = 501;
  load_timed(b, "same, one overlap", SFC_ERR_VERIFY,
             "BLOCKS[100501] (tensor 100501 \"\") and BLOCKS[100502] (tensor 100502 \"\") share "
             "bytes [0, 64) while both are live at step 501");
  pb_free(b);
}

static void test_lanes(void) {
  pb_t *b = pb_new();
  pb_simple_chain(b, 1000);
  for (uint32_t j = 0; j < 100000; j++) {
    uint32_t lane = j % 100, slot = j / 100;
    uint32_t t = pb_tensor(b, "", 256, SFC_KIND_WORKSPACE);
    pb_block(b, t, 768 + (uint64_t)lane * 256, 256, slot, slot, 0);
  }
  pb_header(b)->arena_bytes = pb_header(b)->budget_bytes = 768 + 100 * 256;
  load_timed(b, "10^5 blocks in 100 lanes", SFC_OK, NULL);
  pb_free(b);
}

/* A chain of 10^5 steps in which every tensor is also copied out right after its
 * producer, through two host slots that take turns; the producer that reuses a device
 * slot waits for the copy of its previous occupant: 10^5 swaps and deps through every
 * happens-before and reuse check, in both arenas. */
static void test_swaps(void) {
  const uint32_t n = 100000;
  pb_t *b = pb_new();
  pb_simple_chain(b, n);
  uint32_t out_prev = SFC_PLAN_NONE;
  for (uint32_t i = 1; i < n; i++) { /* t_i (block i) is written by step i - 1 */
    uint32_t h = pb_host_block(b, i, (uint64_t)(i % 2) * 256, 256, i, i);
    uint32_t out = pb_swap(b, SFC_SWAP_OUT, i, h, i);
    pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, i - 1);
    if (out_prev != SFC_PLAN_NONE) /* step i writes t_{i+1} over t_{i-1} */
      pb_dep(b, SFC_NODE_STEP, i, SFC_NODE_SWAP, out_prev);
    out_prev = out;
  }
  pb_fit_arenas(b);
  load_timed(b, "10^5 swaps", SFC_OK, NULL);
  pb_step_at(b, 50000)->dep_count = 0; /* t50001 over t49999 before its copy is done */
  load_timed(b, "same, one wait missing", SFC_ERR_VERIFY,
             "BLOCKS[50001] (tensor 50001 \"t50001\") reuses bytes of BLOCKS[49999] (tensor "
             "49999 \"t49999\"), but its first access, STEPS[50000] (op \"relu50001\"), does "
             "not wait for SWAPS[49998] (swap-out of tensor 49999 \"t49999\")");
  pb_free(b);
}

int main(void) {
  RUN(test_chain);
  RUN(test_all_at_zero);
  RUN(test_lanes);
  RUN(test_swaps);
  return check_summary();
}
