/* test_rt_api.c — the sfcrt C API: the pull loop walks pb_example_full (pointers at
 * the planned offsets, tiles with their boxes, swaps counted), the sim device's
 * numbers derived by hand, misuse -> SFC_ERR_STATE, external tensors, and zero heap
 * allocations per iteration (counting allocator) on every device. */
#include "rt_plans.h"
#include "rt_test_util.h"

/* pb_example_full, walked by hand: op, segment, tile and the box rows of operand 0. */
static void test_walk_example_full(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  sfcrt_session_t *s = NULL;
  sfc_error_t err;
  CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
  CHECK_STR_EQ(sfcrt_session_device(s), "host");
  static const char *const names[] = {"conv_a", "relu_b", "conv_c", "relu_b", "conv_c", "add_d"};
  static const uint32_t tiles[] = {SFC_PLAN_NONE, 0, 0, 1, 1, SFC_PLAN_NONE};
  static const int64_t row_lo[] = {-1, 0, 0, 3, 3, -1}, row_hi[] = {-1, 5, 5, 8, 8, -1};
  /* block offsets of each step's operands (inputs, then outputs) */
  static const uint64_t offs[6][3] = {{0, 256},   {256, 512}, {512, 768},
                                      {256, 512}, {512, 768}, {768, 256, 512}};
  for (int it = 0; it < 2; it++) {
    CHECK_OK(sfcrt_iteration_begin(s, &err), err);
    const sfcrt_step_t *st = NULL;
    void *base = NULL;
    for (uint32_t k = 0; k < 6; k++) {
      CHECK_OK(sfcrt_step_next(s, &st, &err), err);
      if (!st)
        break;
      CHECK_EQ_U64(st->index, k);
      CHECK_STR_EQ(st->name, names[k]);
      CHECK_EQ_U64(st->tile, tiles[k]);
      CHECK(st->stream == NULL);
      if (k == 0)
        base = st->inputs[0];
      uint32_t n = st->input_count + st->output_count;
      for (uint32_t i = 0; i < n; i++) {
        void *p = i < st->input_count ? st->inputs[i] : st->outputs[i - st->input_count];
        CHECK_EQ_U64((uint64_t)((uint8_t *)p - (uint8_t *)base), offs[k][i]);
      }
      if (row_lo[k] < 0) {
        CHECK(st->boxes == NULL);
        CHECK_EQ_U64(st->segment, SFC_PLAN_NONE);
      } else {
        CHECK(st->boxes != NULL);
        CHECK_EQ_U64(st->segment, 0);
        if (st->boxes) {
          CHECK_EQ_I64(st->boxes[0].lo[2], row_lo[k]);
          CHECK_EQ_I64(st->boxes[0].hi[2], row_hi[k]);
        }
      }
      CHECK_OK(sfcrt_step_done(s, &err), err);
    }
    CHECK_OK(sfcrt_step_next(s, &st, &err), err);
    CHECK(st == NULL);
    CHECK_OK(sfcrt_iteration_end(s, &err), err);
  }
  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  CHECK_EQ_U64(stats.iterations, 2);
  CHECK_EQ_U64(stats.steps, 12);
  CHECK_EQ_U64(stats.swaps_in, 2);
  CHECK_EQ_U64(stats.swaps_out, 2);
  CHECK_EQ_U64(stats.bytes_swapped_in, 512);
  CHECK_EQ_U64(stats.bytes_swapped_out, 512);
  CHECK_EQ_U64(stats.arena_bytes, 1024);
  CHECK_EQ_U64(stats.host_arena_bytes, 256);
  CHECK_EQ_U64(stats.peak_device_bytes, 1024); /* x, a, b, c at step 2..3 */
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* Sim on pb_example_full: ops 10 us, link 25e9 B/s, latency 10 us, 256-byte swaps.
 * A tile step costs its share of the op (sfc/steps.h): relu_b's tiles compute rows
 * [0,5) and [3,8) of b (5 of 8 rows with conv_c's halo: 6.25 us each), conv_c's tiles
 * 4 of 8 rows of c (5 us each). step0 [0,10]; steps 1-4 end at 10 + 22.5 = 32.5
 * (step 3, a's last reader, at 27.5); swap-out waits step0: D2H [10, 20.01024];
 * swap-in waits it and step 3 (it writes a's bytes): H2D [27.5, 37.51024]; step 5
 * waits the swap-in (a stall of 5.01024) and ends at 47.51024. */
static void test_sim_by_hand(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_stats_t st;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, &st, &err), err);
  const double copy = 10.0 + 256 / 25e3; /* latency + bytes / (bytes per us) */
  CHECK_NEAR(st.predicted_iteration_us, 27.5 + copy + 10, 1e-9);
  CHECK_NEAR(st.compute_us, 42.5, 1e-9);
  CHECK_NEAR(st.h2d_busy_us, copy, 1e-9);
  CHECK_NEAR(st.d2h_busy_us, copy, 1e-9);
  CHECK_EQ_U64(st.stalls, 2); /* one per iteration */
  CHECK_NEAR(st.stall_us, 2 * (27.5 + copy - 32.5), 1e-9);
  /* copy_latency_s 0 is a link without latency, not the plan's 10 us (which -1, the
   * default, takes): the swap-in [27.5, 27.51024] ends before step 5 starts, no stall */
  opt.sim.copy_latency_s = 0;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, &st, &err), err);
  CHECK_NEAR(st.h2d_busy_us, 256 / 25e3, 1e-9);
  CHECK_NEAR(st.predicted_iteration_us, 42.5, 1e-9);
  CHECK_EQ_U64(st.stalls, 0);
  CHECK(opt.sim.copy_latency_s == 0);
  sfcrt_options_init(&opt);
  CHECK(opt.sim.copy_latency_s < 0); /* the default: the plan's */
  opt.device = "sim";
  sfcrt_plan_destroy(plan);
  pb_free(b);

  /* Same plan with relu_b and conv_c free: step 5 starts at 10 but the swap-in ends
   * at 10 + 2 * copy: one stall of 2 * copy per iteration. */
  b = pb_new();
  pb_example_full(b);
  pb_op_at(b, 1)->time_us = 0;
  pb_op_at(b, 2)->time_us = 0;
  plan = rt_load(b);
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  double stall = 2 * copy; /* swap-in ends at 10 + 2 * copy, compute clock is 10 */
  CHECK_NEAR(st.predicted_iteration_us, 10 + 2 * copy + 10, 1e-9);
  CHECK_NEAR(st.compute_us, 20.0, 1e-9);
  CHECK_EQ_U64(st.stalls, 3);
  CHECK_NEAR(st.stall_us, 3 * stall, 1e-9);
  sfcrt_plan_destroy(plan);
  pb_free(b);

  /* Unknown op times: flops / flops_per_s, else default_op_us. */
  b = pb_new();
  pb_simple_chain(b, 3);
  pb_op_at(b, 0)->time_us = -1;
  pb_op_at(b, 0)->flops = 4000000; /* 4e6 / 1e12 per s = 4 us */
  pb_op_at(b, 1)->time_us = -1;    /* no flops: default 7 us */
  plan = rt_load(b);
  opt.sim.flops_per_s = 1e12;
  opt.sim.default_op_us = 7;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 1, &st, &err), err);
  CHECK_NEAR(st.compute_us, 4 + 7 + 10, 1e-9);
  CHECK_NEAR(st.predicted_iteration_us, 21, 1e-9);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* Duplex: 1000-byte copies at 1000 B/us, latency 0, duplex 0.5, ops 10 us.
 *   step 0 writes q [0,10]; swap-out q waits it: D2H [10,11]
 *   step 1 writes p [10,20]; before step 2: swap-out p waits step 1: D2H [20,21];
 *   swap-in q waits step 1 too: H2D from 20, sharing the link with p's swap-out until
 *   21 (500 bytes at 500 B/us), then 500 bytes alone (0.5 us): [20,21.5]
 *   step 2 [20,30]; step 3 reads q and r, writes d [30,40]: no stall.
 * The old "is the other engine's clock ahead" rule would have charged 2 us. */
static void duplex_plan(pb_t *b) {
  uint32_t x = pb_tensor(b, "x", 64, SFC_KIND_INPUT);
  uint32_t q = pb_tensor(b, "q", 1000, SFC_KIND_ACTIVATION);
  uint32_t p = pb_tensor(b, "p", 1000, SFC_KIND_ACTIVATION);
  uint32_t r = pb_tensor(b, "r", 1000, SFC_KIND_ACTIVATION);
  uint32_t d = pb_tensor(b, "d", 1000, SFC_KIND_OUTPUT);
  uint32_t op0 = pb_op(b, "make_q", PB_LIST(x), PB_LIST(q));
  uint32_t op1 = pb_op(b, "make_p", PB_LIST(x), PB_LIST(p));
  uint32_t op2 = pb_op(b, "make_r", PB_LIST(x), PB_LIST(r));
  uint32_t op3 = pb_op(b, "join", PB_LIST(q, r), PB_LIST(d));
  uint32_t X = pb_block(b, x, 0, 64, 0, 3, SFC_BLOCK_PERSISTENT);
  uint32_t Q1 = pb_block(b, q, 64, 1024, 0, 0, 0);
  uint32_t P = pb_block(b, p, 1088, 1024, 1, 1, 0);
  uint32_t R = pb_block(b, r, 2112, 1024, 2, 3, 0);
  uint32_t Q2 = pb_block(b, q, 64, 1024, 2, 3, SFC_BLOCK_SWAPPED_IN);
  uint32_t D = pb_block(b, d, 1088, 1024, 3, 3, 0);
  uint32_t HQ = pb_host_block(b, q, 0, 1024, 1, 3);
  uint32_t HP = pb_host_block(b, p, 1024, 1024, 2, 3);
  uint32_t s0 = pb_step(b, op0, PB_LIST(X, Q1));
  uint32_t s1 = pb_step(b, op1, PB_LIST(X, P));
  pb_step(b, op2, PB_LIST(X, R));
  uint32_t s3 = pb_step(b, op3, PB_LIST(Q2, R, D));
  uint32_t out_q = pb_swap(b, SFC_SWAP_OUT, Q1, HQ, 1);
  uint32_t out_p = pb_swap(b, SFC_SWAP_OUT, P, HP, 2);
  uint32_t in_q = pb_swap(b, SFC_SWAP_IN, Q2, HQ, 2);
  pb_dep(b, SFC_NODE_SWAP, out_q, SFC_NODE_STEP, s0);
  pb_dep(b, SFC_NODE_SWAP, out_p, SFC_NODE_STEP, s1);
  pb_dep(b, SFC_NODE_SWAP, in_q, SFC_NODE_SWAP, out_q);
  pb_dep(b, SFC_NODE_SWAP, in_q, SFC_NODE_STEP, s1);
  pb_dep(b, SFC_NODE_STEP, s3, SFC_NODE_SWAP, in_q);
  pb_dep(b, SFC_NODE_STEP, s3, SFC_NODE_SWAP, out_p); /* d reuses p's bytes */
  pb_fit_arenas(b);
  sfc_plan_meta_t *m = pb_meta(b);
  m->h2d_bytes_per_s = m->d2h_bytes_per_s = 1e9;
  m->duplex_factor = 0.5;
  m->copy_latency_s = 0;
}

static void test_sim_duplex(void) {
  pb_t *b = pb_new();
  duplex_plan(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_stats_t st;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, &st, &err), err);
  CHECK_NEAR(st.h2d_busy_us, 1.5, 1e-12);
  CHECK_NEAR(st.d2h_busy_us, 2.0, 1e-12);
  CHECK_NEAR(st.predicted_iteration_us, 40, 1e-12);
  CHECK_EQ_U64(st.stalls, 0);
  /* ops free: step 3 starts at 0 but waits the swap-in (ends 21.5): stall 21.5 */
  for (uint32_t i = 0; i < 4; i++)
    pb_op_at(b, i)->time_us = 0;
  sfcrt_plan_destroy(plan);
  plan = rt_load(b);
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 1, &st, &err), err);
  /* all at 0: out_q [0,1], out_p [1,2] (engine busy), in_q waits out_q (1): shares
   * [1,2] (500 B), then 500 B alone: [1,2.5]; step 3 stalls 2.5 */
  CHECK_NEAR(st.h2d_busy_us, 1.5, 1e-12);
  CHECK_NEAR(st.predicted_iteration_us, 2.5, 1e-12);
  CHECK_NEAR(st.stall_us, 2.5, 1e-12);
  /* and the plan is correct: integrity on host with each queue slowed */
  for (int q = 0; q < 3; q++) {
    sfcrt_options_init(&opt);
    opt.host.integrity = 1;
    opt.host.delay_us[q] = 2000;
    CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, NULL, &err), err);
  }
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* Sim on a paged plan: pb_example_paged (4 pages of offsets, a pool of 3), ops 10 us.
 * The pages, by hand (the table in plan_examples.c): page 0 (x) is mapped at creation;
 * iteration 1 maps pages 1, 2 at steps 0, 2; at step 4 page 3 needs a chunk and the
 * only pending page is 1 (t2's, pending since step 2 ended at 30), whose last user has
 * not finished by the host clock: the host waits to 30 and unmaps it. Later
 * iterations begin with pages 2 and 3 pending from the last one (finished: no wait),
 * and wait once at step 4 again. So 3 iterations: 1 + 3 * 3 maps, 1 + 3 + 3 unmaps,
 * 3 waits, the cuda device's counts (test_cuda_device test_paged_pages). With maps
 * free the waits are for steps already done when the compute clock gets there: 60 us,
 * no stall. Maps of m us delay the steps that map: with m = 5 step 0 starts at 5
 * (65 us); with m = 50: step 0 at 50 ([50, 60], step 1 [60, 70]), step 2 maps at 100
 * ([100, 110]: stall 30), step 4 waits for page 1's last user (step 2, ends 110) and
 * maps at 160 ([160, 170]: stall 40): 180 us, 120 us of stall per iteration. */
static void test_sim_paged_by_hand(void) {
  pb_t *b = pb_new();
  pb_example_paged(b, 1024);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_stats_t st;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  CHECK_EQ_U64(st.chunks_mapped, 10);
  CHECK_EQ_U64(st.chunks_unmapped, 7);
  CHECK_EQ_U64(st.unmap_waits, 3);
  CHECK_NEAR(st.predicted_iteration_us, 60, 1e-9);
  CHECK_NEAR(st.stall_us, 0, 0);
  opt.sim.page_map_s = 5e-6;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  CHECK_NEAR(st.predicted_iteration_us, 65, 1e-9);
  CHECK_NEAR(st.stall_us, 3 * 5, 1e-9);
  CHECK_EQ_U64(st.unmap_waits, 3);
  opt.sim.page_map_s = 50e-6;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  CHECK_NEAR(st.predicted_iteration_us, 180, 1e-9);
  CHECK_NEAR(st.stall_us, 3 * 120, 1e-9);
  CHECK_EQ_U64(st.chunks_mapped, 10);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* The wait paged mode adds that no dependency shows. Pages of 1024 bytes, ops 10 us, a
 * link of 1 byte/us without latency: step 0 writes a (page 0), which is swapped out
 * before step 1 (D2H [10, 1034]), ending a's block; step 1 writes b (page 1); step 2
 * reads b and writes c at page 2 — bytes no other block used, so no dependency orders
 * it after a's copy. But the pool is the page peak, 2 pages, so c's page takes page
 * 0's chunk: the host waits for a's copy to end (1034) before it maps, and step 2
 * starts at 1034 (a stall of 1014) where the arena (not paged) runs it at 20. */
static void paged_wait_plan(pb_t *b, int paged) {
  const uint64_t P = 1024;
  uint32_t a = pb_tensor(b, "a", P, SFC_KIND_OUTPUT);
  uint32_t bt = pb_tensor(b, "b", P, SFC_KIND_ACTIVATION);
  uint32_t c = pb_tensor(b, "c", P, SFC_KIND_OUTPUT);
  uint32_t op0 = pb_op(b, "make_a", PB_NONE, PB_LIST(a));
  uint32_t op1 = pb_op(b, "make_b", PB_NONE, PB_LIST(bt));
  uint32_t op2 = pb_op(b, "make_c", PB_LIST(bt), PB_LIST(c));
  uint32_t A = pb_block(b, a, 0, P, 0, 0, 0);
  uint32_t B = pb_block(b, bt, P, P, 1, 2, 0);
  uint32_t C = pb_block(b, c, 2 * P, P, 2, 2, 0);
  uint32_t s0 = pb_step(b, op0, PB_LIST(A));
  pb_step(b, op1, PB_LIST(B));
  pb_step(b, op2, PB_LIST(B, C));
  uint32_t HA = pb_host_block(b, a, 0, P, 1, 2);
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, A, HA, 1);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  pb_fit_arenas(b); /* 3 pages */
  sfc_plan_meta_t *m = pb_meta(b);
  m->h2d_bytes_per_s = m->d2h_bytes_per_s = 1e6;
  m->copy_latency_s = 0;
  m->va_chunk_bytes = P;
  if (paged) {
    /* a counts through its swap-out's step 1 (with b), then b and c: 2 pages */
    m->page_peak_bytes = 2 * P;
    pb_header(b)->flags = SFC_PLAN_PAGED;
    pb_header(b)->budget_bytes = 2 * P;
  }
}

static void test_sim_paged_wait(void) {
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfc_error_t err;
  for (int paged = 0; paged <= 2; paged++) { /* arena, paged plan, arena plan + sim.paged */
    pb_t *b = pb_new();
    paged_wait_plan(b, paged == 1);
    sfcrt_plan_t *plan = rt_load(b);
    opt.sim.paged = paged == 2;
    sfcrt_session_t *s;
    CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
    for (int it = 0; it < 2; it++) {
      CHECK_OK(sfcrt_iteration_begin(s, &err), err);
      const sfcrt_step_t *st;
      while (sfcrt_step_next(s, &st, &err) == SFC_OK && st)
        sfcrt_step_done(s, &err);
      CHECK_OK(sfcrt_iteration_end(s, &err), err);
    }
    sfcrt_stats_t stats;
    sfcrt_session_stats(s, &stats);
    CHECK(stats.step_start_us != NULL && stats.copy_end_us != NULL);
    if (stats.step_start_us && stats.copy_end_us) {
      CHECK_NEAR(stats.copy_end_us[0], 10 + 1024, 1e-9);
      CHECK_NEAR(stats.step_start_us[2], paged ? 1034 : 20, 1e-9);
      CHECK_NEAR(stats.step_stall_us[2], paged ? 1014 : 0, 1e-9);
      CHECK_NEAR(stats.predicted_iteration_us, paged ? 1044 : 1034, 1e-9);
    }
    /* per iteration: c maps (waiting for a's copy), then a's page at step 0 (pages 1
     * and 2 pending, finished); the pool was created with none mapped */
    CHECK_EQ_U64(stats.unmap_waits, (paged ? 2 : 0));
    CHECK_EQ_U64(stats.chunks_mapped, (paged ? 6 : 0));
    sfcrt_session_destroy(s);
    sfcrt_plan_destroy(plan);
    pb_free(b);
  }
}

/* Per-step stalls stay readable while the session lives. */
static void test_sim_step_stalls(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  pb_op_at(b, 1)->time_us = 0;
  pb_op_at(b, 2)->time_us = 0;
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_session_t *s;
  sfc_error_t err;
  CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
  CHECK_OK(sfcrt_iteration_begin(s, &err), err);
  const sfcrt_step_t *st;
  while (sfcrt_step_next(s, &st, &err) == SFC_OK && st)
    sfcrt_step_done(s, &err);
  CHECK_OK(sfcrt_iteration_end(s, &err), err);
  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  CHECK_EQ_U64(stats.step_count, 6);
  CHECK(stats.step_stall_us != NULL);
  if (stats.step_stall_us) {
    const double copy = 10.0 + 256 / 25e3;
    for (int k = 0; k < 5; k++)
      CHECK_NEAR(stats.step_stall_us[k], 0, 0);
    CHECK_NEAR(stats.step_stall_us[5], 2 * copy, 1e-9);
  }
  /* the timeline (sfc simulate --trace), by hand: step 0 runs [0, t0]; the swap-out waits
   * for it and copies [t0, t0 + copy]; the swap-in waits for the swap-out and copies
   * [t0 + copy, t0 + 2 copy]; steps 1-4 take 0 us, so step 5 starts at t0 + 2 copy */
  CHECK_EQ_U64(stats.swap_count, 2);
  CHECK(stats.step_start_us && stats.step_us && stats.copy_start_us && stats.copy_end_us);
  if (stats.step_start_us && stats.step_us && stats.copy_start_us && stats.copy_end_us) {
    const double copy = 10.0 + 256 / 25e3, t0 = stats.step_us[0];
    CHECK(t0 > 0);
    CHECK_NEAR(stats.step_start_us[0], 0, 0);
    for (int k = 1; k < 5; k++)
      CHECK_NEAR(stats.step_start_us[k], t0, 1e-9);
    CHECK_NEAR(stats.copy_start_us[0], t0, 1e-9); /* the plan's swap 0: the swap-out */
    CHECK_NEAR(stats.copy_end_us[0], t0 + copy, 1e-9);
    CHECK_NEAR(stats.copy_start_us[1], t0 + copy, 1e-9);
    CHECK_NEAR(stats.copy_end_us[1], t0 + 2 * copy, 1e-9);
    CHECK_NEAR(stats.step_start_us[5], t0 + 2 * copy, 1e-9);
    CHECK_NEAR(stats.step_start_us[5] + stats.step_us[5], stats.predicted_iteration_us, 1e-9);
  }
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* A swap-out issued at the end (issue_step == step_count): issued by the step_next
 * that returns NULL. chain(3), 10 us per op: the copy waits step 2 (ends at 30) and
 * takes 10 + 256 / 25e3 us, so the sim iteration ends when the D2H engine drains. */
static void test_swap_at_end(void) {
  pb_t *b = pb_new();
  pb_simple_chain(b, 3);
  uint32_t hb = pb_host_block(b, 3, 0, 256, 2, 2);
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, 3, hb, 3); /* block 3 = t3 at step 2 */
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, 2);
  pb_fit_arenas(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_stats_t st, st2;
  sfc_error_t err;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 2, &st, &err), err);
  CHECK_NEAR(st.predicted_iteration_us, 30 + 10 + 256 / 25e3, 1e-9);
  CHECK_NEAR(st.compute_us, 30, 1e-9);
  CHECK_EQ_U64(st.swaps_out, 2);
  /* deterministic: the same plan gives bit-identical numbers */
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 5, &st2, &err), err);
  CHECK(st.predicted_iteration_us == st2.predicted_iteration_us);
  CHECK(st.d2h_busy_us == st2.d2h_busy_us);
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  opt.host.delay_us[SFCRT_QUEUE_D2H] = 1000;
  CHECK_OK(rt_replay(sfcrt_plan_view(plan), &opt, 3, &st, &err), err);
  CHECK_EQ_U64(st.swaps_out, 3);
  CHECK_EQ_U64(st.bytes_swapped_out, 3 * 256);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

static void test_misuse(void) {
  pb_t *b = pb_new();
  pb_simple_chain(b, 2);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_session_t *s;
  sfc_error_t err;
  CHECK_OK(sfcrt_session_create(plan, NULL, &s, &err), err);
  const sfcrt_step_t *st = (const sfcrt_step_t *)&err;
  CHECK_EQ_I64(sfcrt_step_next(s, &st, &err), SFC_ERR_STATE);
  CHECK(st == NULL);
  CHECK_CONTAINS(err.message, "no iteration is running");
  CHECK_EQ_I64(sfcrt_step_done(s, &err), SFC_ERR_STATE);
  CHECK_EQ_I64(sfcrt_iteration_end(s, &err), SFC_ERR_STATE);
  CHECK_OK(sfcrt_iteration_begin(s, &err), err);
  CHECK_EQ_I64(sfcrt_iteration_begin(s, &err), SFC_ERR_STATE); /* double begin */
  CHECK_CONTAINS(err.message, "still running");
  CHECK_EQ_I64(sfcrt_step_done(s, &err), SFC_ERR_STATE); /* done before next */
  CHECK_OK(sfcrt_step_next(s, &st, &err), err);
  CHECK_EQ_I64(sfcrt_step_next(s, &st, &err), SFC_ERR_STATE); /* next while pending */
  CHECK_CONTAINS(err.message, "step 0 is pending");
  CHECK_EQ_I64(sfcrt_iteration_end(s, &err), SFC_ERR_STATE); /* end mid-iteration */
  CHECK_CONTAINS(err.message, "step 0 of 2 not finished");
  CHECK_OK(sfcrt_step_done(s, &err), err);
  CHECK_OK(sfcrt_step_next(s, &st, &err), err);
  CHECK_OK(sfcrt_step_done(s, &err), err);
  CHECK_OK(sfcrt_step_next(s, &st, &err), err);
  CHECK(st == NULL);
  CHECK_EQ_I64(sfcrt_step_next(s, &st, &err), SFC_ERR_STATE); /* step after end of steps */
  CHECK_CONTAINS(err.message, "no more steps");
  CHECK_EQ_I64(sfcrt_session_bind(s, 0, &err, 256, &err), SFC_ERR_STATE);
  CHECK_OK(sfcrt_iteration_end(s, &err), err);
  CHECK_EQ_I64(sfcrt_step_next(s, &st, &err), SFC_ERR_STATE); /* step after end */
  CHECK_EQ_I64(sfcrt_session_bind(s, 0, &err, 256, &err), SFC_ERR_INVALID_ARGUMENT); /* not ext */
  CHECK_EQ_I64(sfcrt_session_bind(s, 99, &err, 256, &err), SFC_ERR_INVALID_ARGUMENT);
  /* NULL arguments and NULL err are fine */
  CHECK_EQ_I64(sfcrt_step_next(NULL, &st, NULL), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_I64(sfcrt_step_next(s, NULL, NULL), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_I64(sfcrt_iteration_end(s, NULL), SFC_ERR_STATE);
  sfcrt_session_destroy(s);
  sfcrt_session_destroy(NULL);

  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "tpu";
  s = (sfcrt_session_t *)&err;
  CHECK_EQ_I64(sfcrt_session_create(plan, &opt, &s, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK(s == NULL);
  CHECK_STR_EQ(err.message, "session_create: unknown device 'tpu' (expected host, sim or cuda)");
  CHECK_EQ_I64(sfcrt_session_create(NULL, NULL, &s, &err), SFC_ERR_INVALID_ARGUMENT);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* x is external: bind it, replay with integrity; unbound -> SFC_ERR_STATE. */
static void test_external(void) {
  pb_t *b = pb_new();
  rt_external_plan(b);
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.host.integrity = 1;
  sfcrt_session_t *s;
  sfc_error_t err;
  CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
  CHECK_EQ_I64(sfcrt_iteration_begin(s, &err), SFC_ERR_STATE);
  CHECK_STR_EQ(err.message,
               "iteration_begin: external tensor 0 'x' is not bound (sfcrt_session_bind)");
  uint32_t t = sfcrt_session_find_tensor(s, "x");
  CHECK_EQ_U64(t, 0);
  CHECK_EQ_U64(sfcrt_session_find_tensor(s, "nope"), SFC_PLAN_NONE);
  static uint64_t mem[32];
  CHECK_EQ_I64(sfcrt_session_bind(s, t, mem, 255, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "bind: tensor 0 'x' needs 256 bytes, got 255");
  CHECK_OK(sfcrt_session_bind(s, t, mem, sizeof mem, &err), err);
  for (int it = 0; it < 2; it++) {
    CHECK_OK(sfcrt_iteration_begin(s, &err), err);
    const sfcrt_step_t *st;
    while (sfcrt_step_next(s, &st, &err) == SFC_OK && st) {
      if (st->index == 0)
        CHECK(st->inputs[0] == (void *)mem);
      CHECK_OK(sfcrt_step_done(s, &err), err);
    }
    CHECK_OK(sfcrt_iteration_end(s, &err), err);
  }
  sfcrt_session_destroy(s);
  /* sim has no bytes: nothing to bind */
  opt.device = "sim";
  CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
  CHECK_OK(sfcrt_session_run(s, 2, &err), err);
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* Zero heap allocations per iteration, on every device and mode. */
static void test_no_allocation_per_iteration(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  sfcrt_plan_t *plan = rt_load(b);
  static const char *const devices[] = {"host", "host", "sim"};
  for (int i = 0; i < 3; i++) {
    test_alloc_t c = {0, 0, 0, 0};
    sfc_allocator_t a = {test_alloc_fn, &c};
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = devices[i];
    opt.alloc = &a;
    opt.host.integrity = i == 1;
    sfcrt_session_t *s;
    sfc_error_t err;
    CHECK_OK(sfcrt_session_create(plan, &opt, &s, &err), err);
    long after_create = c.calls;
    CHECK(after_create > 0);
    for (int it = 0; it < 5; it++) {
      CHECK_OK(sfcrt_iteration_begin(s, &err), err);
      const sfcrt_step_t *st;
      while (sfcrt_step_next(s, &st, &err) == SFC_OK && st)
        CHECK_OK(sfcrt_step_done(s, &err), err);
      CHECK_OK(sfcrt_iteration_end(s, &err), err);
    }
    CHECK_EQ_I64(c.calls - after_create, 0);
    sfcrt_session_destroy(s);
    CHECK_EQ_I64(c.live_blocks, 0);
    CHECK_EQ_I64(c.live_bytes, 0);
    fprintf(stderr, "  %s%s: %ld allocations at create, 0 in 5 iterations\n", devices[i],
            i == 1 ? " (integrity)" : "", after_create);
  }
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

/* sfcrt_plan_wrap_view: a loaded plan's view wrapped (no copy) gives the same sim
 * replay as the plan itself; an empty array may be NULL; a view that breaks an
 * invariant is refused with the validator's message; NULL arguments refused. */
static void test_wrap_view(void) {
  pb_t *b = pb_new();
  pb_example_full(b);
  sfcrt_plan_t *plan = rt_load(b);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "sim";
  sfcrt_stats_t loaded, wrapped;
  sfc_error_t err;
  CHECK_OK(rt_replay(v, &opt, 2, &loaded, &err), err);
  pb_t *chain = pb_new();
  pb_simple_chain(chain, 3); /* no swaps, deps, segments or boxes */
  sfcrt_plan_t *cp = rt_load(chain);
  sfc_plan_view_t copy = *sfcrt_plan_view(cp);
  CHECK(copy.swap_count == 0 && copy.dep_count == 0 && copy.box_count == 0);
  copy.swaps = NULL; /* empty, as a compiler's view may leave them */
  copy.deps = NULL;
  copy.boxes = NULL;
  sfcrt_plan_t *w = NULL;
  CHECK_OK(sfcrt_plan_wrap_view(&copy, NULL, &w, &err), err);
  CHECK(w && sfcrt_plan_view(w)->swaps && sfcrt_plan_view(w)->deps && sfcrt_plan_view(w)->boxes);
  if (w)
    CHECK_OK(rt_replay(sfcrt_plan_view(w), &opt, 1, NULL, &err), err);
  sfcrt_plan_destroy(w);
  sfcrt_plan_destroy(cp);
  pb_free(chain);
  copy = *v;
  CHECK_OK(sfcrt_plan_wrap_view(&copy, NULL, &w, &err), err);
  CHECK(w != NULL && sfcrt_plan_view(w)->steps == v->steps); /* the caller's arrays */
  if (w)
    CHECK_OK(rt_replay(sfcrt_plan_view(w), &opt, 2, &wrapped, &err), err);
  CHECK_NEAR(wrapped.predicted_iteration_us, loaded.predicted_iteration_us, 0);
  CHECK_EQ_U64(wrapped.stalls, loaded.stalls);
  sfcrt_plan_destroy(w);
  /* a block past the arena: refused, one message, no plan */
  sfc_plan_block_t *blocks = malloc(v->block_count * sizeof *blocks);
  memcpy(blocks, v->blocks, v->block_count * sizeof *blocks);
  blocks[0].offset = v->header.arena_bytes;
  copy.blocks = blocks;
  w = (sfcrt_plan_t *)1;
  CHECK(sfcrt_plan_wrap_view(&copy, NULL, &w, &err) != SFC_OK);
  CHECK(w == NULL);
  CHECK(strstr(err.message, "BLOCKS") != NULL);
  free(blocks);
  copy = *v; /* an array NULL though it has records: refused, not read */
  copy.steps = NULL;
  CHECK(sfcrt_plan_wrap_view(&copy, NULL, &w, &err) == SFC_ERR_INVALID_ARGUMENT);
  CHECK(w == NULL && strstr(err.message, "view.steps is NULL") != NULL);
  CHECK(sfcrt_plan_wrap_view(NULL, NULL, &w, &err) == SFC_ERR_INVALID_ARGUMENT);
  CHECK(sfcrt_plan_wrap_view(v, NULL, NULL, &err) == SFC_ERR_INVALID_ARGUMENT);
  sfcrt_plan_destroy(plan);
  pb_free(b);
}

int main(void) {
  RUN(test_walk_example_full);
  RUN(test_sim_by_hand);
  RUN(test_sim_duplex);
  RUN(test_sim_step_stalls);
  RUN(test_sim_paged_by_hand);
  RUN(test_sim_paged_wait);
  RUN(test_swap_at_end);
  RUN(test_misuse);
  RUN(test_external);
  RUN(test_no_allocation_per_iteration);
  RUN(test_wrap_view);
  return check_summary();
}
