/* plan_examples.c — ready-made valid plans and byte-level helpers for the plan builder.
 *
 * pb_simple_chain(b, n): tensors x (input) and t1..tn (tn is the output), all 256
 * bytes; op i is relu(t[i-1]) -> t[i] at step i-1. Blocks: x at offset 0 live the
 * whole iteration (PERSISTENT); t[i] lives from step i-1 to step i (tn only at
 * n-1) at offset 256 or 512, alternating, so neighbours in time never share bytes.
 * Arena 768 bytes (512 when n == 1), alignment 64.
 *
 * pb_example_full(b): every section non-empty. Tensors x, a, b, c, d (1x1x8x8 f32,
 * 256 bytes). Ops: conv_a x->a, relu_b a->b, conv_c b->c, add_d (c, a)->d.
 *
 *   step  op       tile  blocks (device offset, live steps)
 *   0     conv_a   -     x@0 [0,5]  a@256 [0,3]
 *   1     relu_b   0     a@256      b@512 [1,4]        SEGMENTS[0]: steps 1..4,
 *   2     conv_c   0     b@512      c@768 [2,5]        ops relu_b, conv_c,
 *   3     relu_b   1     a@256      b@512              grid 1x1x2x1 (rows 0-3 / 4-7)
 *   4     conv_c   1     b@512      c@768
 *   5     add_d    -     c@768  a'@256 [4,5]  d@512 [5,5]
 *
 * a is swapped out before step 4 (after its last use at step 3) into HOST_BLOCKS[0]
 * and swapped back in, also before step 4, into a' (BLOCKS[4], SWAPPED_IN), which
 * reuses a's bytes. Deps: the swap-out waits for step 0 (a's producer), the swap-in
 * for the swap-out and for step 3 (a's last reader: the swap-in writes a's bytes),
 * step 5 for the swap-in. Arena 1024, host arena 256.
 *
 * pb_example_paged(b, page) (1.7, page a multiple of 128): a PAGED arena. x (page
 * bytes, PERSISTENT) has page 0; t1 .. t6 (page / 2 bytes each) follow, two to a page
 * (t1 and t2 page 1, t3 and t4 page 2, t5 and t6 page 3), t(i) live over steps
 * i - 1 .. i (t6 at step 5 only), op i relu(t(i-1)) -> t(i) at step i - 1:
 *
 *   step  reads  writes  pages touched by live blocks
 *   0     x      t1      0, 1
 *   1     t1     t2      0, 1
 *   2     t2     t3      0, 1, 2
 *   3     t3     t4      0, 2
 *   4     t4     t5      0, 2, 3
 *   5     t5     t6      0, 3
 *
 * so the arena is 4 pages of offsets and the page peak 3 pages: META.page_peak_bytes
 * = 3 * page (counted here by hand, not by the code under test), the budget exactly,
 * which the contiguous arena exceeds. META.va_chunk_bytes = page.
 */
#include <stdio.h>
#include <string.h>

#include "plan_builder.h"

void pb_simple_chain(pb_t *b, uint32_t n) {
  char name[32];
  uint32_t relu = pb_str(b, "relu");
  uint32_t prev = pb_tensor(b, "x", 256, SFC_KIND_INPUT);
  uint32_t prev_block = pb_block(b, prev, 0, 256, 0, n - 1, SFC_BLOCK_PERSISTENT);
  for (uint32_t i = 1; i <= n; i++) {
    snprintf(name, sizeof name, "t%u", i);
    uint32_t t = pb_tensor(b, name, 256, i == n ? SFC_KIND_OUTPUT : SFC_KIND_ACTIVATION);
    snprintf(name, sizeof name, "relu%u", i);
    uint32_t op = pb_op(b, name, PB_LIST(prev), PB_LIST(t));
    pb_op_at(b, op)->type = relu;
    uint32_t blk =
        pb_block(b, t, 256 + (uint64_t)((i - 1) % 2) * 256, 256, i - 1, i == n ? n - 1 : i, 0);
    pb_step(b, op, PB_LIST(prev_block, blk));
    prev = t;
    prev_block = blk;
  }
  pb_fit_arenas(b);
  pb_header(b)->budget_bytes = pb_header(b)->arena_bytes;
  sfc_plan_meta_t *m = pb_meta(b);
  m->graph_op_count = n;
  m->graph_tensor_count = n + 1;
  m->in_core_peak_bytes = pb_header(b)->arena_bytes;
  m->lower_bound_bytes = pb_header(b)->arena_bytes;
}

static void shape_nchw(pb_t *b, uint32_t t) {
  sfc_plan_tensor_t *x = pb_tensor_at(b, t);
  x->ndim = 4;
  x->batch_axis = 0;
  int64_t shape[4] = {1, 1, 8, 8};
  memcpy(x->shape, shape, sizeof shape);
}

/* Box over rows [r0, r1) of a 1x1x8x8 tensor, with pad_lo/pad_hi rows of halo. */
static uint32_t rows(pb_t *b, uint32_t t, int64_t r0, int64_t r1, uint32_t pad_lo,
                     uint32_t pad_hi) {
  uint32_t i = pb_box(b, t, (const int64_t[4]){0, 0, r0, 0}, (const int64_t[4]){1, 1, r1, 8});
  pb_box_at(b, i)->pad_lo[2] = pad_lo;
  pb_box_at(b, i)->pad_hi[2] = pad_hi;
  return i;
}

void pb_example_full(pb_t *b) {
  const uint64_t T = 256;
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t a = pb_tensor(b, "a", T, SFC_KIND_ACTIVATION);
  uint32_t bt = pb_tensor(b, "b", T, SFC_KIND_ACTIVATION);
  uint32_t c = pb_tensor(b, "c", T, SFC_KIND_ACTIVATION);
  uint32_t d = pb_tensor(b, "d", T, SFC_KIND_OUTPUT);
  for (uint32_t t = x; t <= d; t++)
    shape_nchw(b, t);
  uint32_t conv = pb_str(b, "conv2d");
  uint32_t op0 = pb_op(b, "conv_a", PB_LIST(x), PB_LIST(a));
  uint32_t op1 = pb_op(b, "relu_b", PB_LIST(a), PB_LIST(bt));
  uint32_t op2 = pb_op(b, "conv_c", PB_LIST(bt), PB_LIST(c));
  uint32_t op3 = pb_op(b, "add_d", PB_LIST(c, a), PB_LIST(d));
  pb_op_at(b, op0)->type = pb_op_at(b, op2)->type = conv;
  pb_op_at(b, op1)->type = pb_str(b, "relu");
  pb_op_at(b, op3)->type = pb_str(b, "add");
  /* the maps of the segment's ops (1.5): conv_c a 3x1 window, padding 1 along H */
  pb_op_at(b, op1)->map = SFC_MAP_POINTWISE;
  sfc_plan_op_t *cc = pb_op_at(b, op2);
  cc->map = SFC_MAP_WINDOW;
  cc->kernel[0] = 3;
  cc->kernel[1] = cc->stride[0] = cc->stride[1] = cc->dilation[0] = cc->dilation[1] = 1;
  cc->padding[0] = 1;
  pb_op_at(b, op0)->flops = 2 * 9 * 64;

  uint32_t X = pb_block(b, x, 0, T, 0, 5, SFC_BLOCK_PERSISTENT);
  uint32_t A1 = pb_block(b, a, 256, T, 0, 3, 0);
  uint32_t B = pb_block(b, bt, 512, T, 1, 4, 0);
  uint32_t C = pb_block(b, c, 768, T, 2, 5, 0);
  uint32_t A2 = pb_block(b, a, 256, T, 4, 5, SFC_BLOCK_SWAPPED_IN);
  uint32_t D = pb_block(b, d, 512, T, 5, 5, 0);
  uint32_t HA = pb_host_block(b, a, 0, T, 4, 4);

  uint32_t s0 = pb_step(b, op0, PB_LIST(X, A1));
  for (uint32_t tile = 0; tile < 2; tile++) {
    int64_t r0 = tile ? 3 : 0, r1 = tile ? 8 : 5; /* relu_b computes conv_c's halo row */
    uint32_t box = rows(b, a, r0, r1, 0, 0);
    rows(b, bt, r0, r1, 0, 0);
    pb_step_tile(b, pb_step(b, op1, PB_LIST(A1, B)), 0, tile, box);
    box = rows(b, bt, r0, r1, tile ? 0 : 1, tile ? 1 : 0);
    rows(b, c, 4 * tile, 4 * tile + 4, 0, 0);
    pb_step_tile(b, pb_step(b, op2, PB_LIST(B, C)), 0, tile, box);
  }
  pb_segment(b, 1, 4, op1, 2, 1, 1, 2, 1);
  uint32_t s5 = pb_step(b, op3, PB_LIST(C, A2, D));

  uint32_t out = pb_swap(b, SFC_SWAP_OUT, A1, HA, 4);
  uint32_t in = pb_swap(b, SFC_SWAP_IN, A2, HA, 4);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_SWAP, out);
  pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_STEP, s0 + 3);
  pb_dep(b, SFC_NODE_STEP, s5, SFC_NODE_SWAP, in);

  pb_fit_arenas(b);
  sfc_plan_header_t *h = pb_header(b);
  h->budget_bytes = 1024;
  h->host_budget_bytes = 256;
  sfc_plan_meta_t *m = pb_meta(b);
  m->graph_op_count = 4;
  m->graph_tensor_count = 5;
  m->in_core_peak_bytes = 1280; /* x, a, b, c, d all live at step 5 without reuse */
  m->lower_bound_bytes = 1024;
}

/* pb_example_tiled(b): a 2-tile segment whose intermediate lives in PARTIAL blocks.
 * Tensors x (input), c, d (output), all 1x1x8x8 f32 (256 bytes). Ops: conv_c x->c,
 * relu_d c->d, both in SEGMENTS[0] (steps 0..3, grid 1x1x2x1: rows 0-3 / 4-7).
 *
 *   step  op      tile  boxes (rows)               blocks (device offset, live steps)
 *   0     conv_c  0     x [0,5) pad_lo 1  c [0,4)  x@0 [0,3]  c0@256 [0,1] PARTIAL (128 B)
 *   1     relu_d  0     c [0,4)           d [0,4)  c0         d@512 [1,3]
 *   2     conv_c  1     x [3,8) pad_hi 1  c [4,8)  x          c1@256 [2,3] PARTIAL (128 B)
 *   3     relu_d  1     c [4,8)           d [4,8)  c1         d
 *
 * c0 holds BOXES[1] (c rows 0-3), c1 BOXES[5] (rows 4-7) and reuses c0's bytes; d is
 * whole and the tiles' d boxes cover it exactly once. Every step is TIMED (5 us).
 * Arena 768, no swaps. */
void pb_example_tiled(pb_t *b) {
  const uint64_t T = 256;
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t c = pb_tensor(b, "c", T, SFC_KIND_ACTIVATION);
  uint32_t d = pb_tensor(b, "d", T, SFC_KIND_OUTPUT);
  for (uint32_t t = x; t <= d; t++)
    shape_nchw(b, t);
  uint32_t conv = pb_op(b, "conv_c", PB_LIST(x), PB_LIST(c));
  uint32_t relu = pb_op(b, "relu_d", PB_LIST(c), PB_LIST(d));
  pb_op_at(b, conv)->type = pb_str(b, "conv2d");
  pb_op_at(b, relu)->type = pb_str(b, "relu");
  uint32_t X = pb_block(b, x, 0, T, 0, 3, SFC_BLOCK_PERSISTENT);
  uint32_t D = pb_block(b, d, 512, T, 1, 3, 0);
  for (uint32_t tile = 0; tile < 2; tile++) {
    int64_t r0 = 4 * tile, r1 = r0 + 4;
    uint32_t in = rows(b, x, tile ? 3 : 0, tile ? 8 : 5, tile ? 0 : 1, tile ? 1 : 0);
    uint32_t cbox = rows(b, c, r0, r1, 0, 0);
    uint32_t C = pb_block(b, c, 256, T / 2, 2 * tile, 2 * tile + 1, SFC_BLOCK_PARTIAL);
    pb_block_at(b, C)->box = cbox;
    pb_step_tile(b, pb_step(b, conv, PB_LIST(X, C)), 0, tile, in);
    uint32_t cin = rows(b, c, r0, r1, 0, 0);
    rows(b, d, r0, r1, 0, 0);
    pb_step_tile(b, pb_step(b, relu, PB_LIST(C, D)), 0, tile, cin);
  }
  pb_segment(b, 0, 4, conv, 2, 1, 1, 2, 1);
  for (uint32_t k = 0; k < 4; k++) {
    pb_step_at(b, k)->flags = SFC_STEP_TIMED;
    pb_step_at(b, k)->time_us = 5.0;
  }
  pb_fit_arenas(b);
  sfc_plan_header_t *h = pb_header(b);
  h->budget_bytes = 768;
  sfc_plan_meta_t *m = pb_meta(b);
  m->graph_op_count = 2;
  m->graph_tensor_count = 3;
  m->in_core_peak_bytes = 768;
  m->lower_bound_bytes = 640; /* x, c's half, d */
}

/* ---- byte-level helpers --------------------------------------------------------- */

size_t pb_file_entry(const uint8_t *data, size_t bytes, uint32_t kind) {
  sfc_plan_header_t h;
  if (bytes < sizeof h)
    return 0;
  memcpy(&h, data, sizeof h);
  for (uint32_t i = 0; i < h.section_count && i < SFC_PLAN_MAX_SECTIONS; i++) {
    uint64_t at = h.section_table_offset + (uint64_t)i * h.section_entry_bytes;
    if (at > bytes || bytes - at < sizeof(sfc_plan_section_t))
      return 0;
    uint32_t k;
    memcpy(&k, data + at, sizeof k);
    if (k == kind)
      return (size_t)at;
  }
  return 0;
}

void pb_recrc(uint8_t *data, size_t bytes) {
  sfc_plan_header_t h;
  if (bytes < sizeof h)
    return;
  memcpy(&h, data, sizeof h);
  uint64_t table = (uint64_t)h.section_count * h.section_entry_bytes;
  if (h.section_table_offset <= bytes && table <= bytes - h.section_table_offset &&
      h.section_entry_bytes >= sizeof(sfc_plan_section_t)) {
    for (uint32_t i = 0; i < h.section_count; i++) {
      uint8_t *at = data + h.section_table_offset + (uint64_t)i * h.section_entry_bytes;
      sfc_plan_section_t e;
      memcpy(&e, at, sizeof e);
      if (e.offset <= bytes && e.bytes <= bytes - e.offset) {
        e.crc32 = sfc_crc32(0, data + e.offset, (size_t)e.bytes);
        memcpy(at, &e, sizeof e);
      }
    }
    h.section_table_crc32 = sfc_crc32(0, data + h.section_table_offset, (size_t)table);
  }
  h.header_crc32 = sfc_crc32(0, &h, offsetof(sfc_plan_header_t, header_crc32));
  memcpy(data, &h, sizeof h);
}

void pb_example_paged(pb_t *b, uint64_t page) {
  char name[16];
  uint32_t relu = pb_str(b, "relu");
  uint32_t prev = pb_tensor(b, "x", page, SFC_KIND_INPUT);
  uint32_t prev_block = pb_block(b, prev, 0, page, 0, 5, SFC_BLOCK_PERSISTENT);
  for (uint32_t i = 1; i <= 6; i++) {
    snprintf(name, sizeof name, "t%u", i);
    uint32_t t = pb_tensor(b, name, page / 2, i == 6 ? SFC_KIND_OUTPUT : SFC_KIND_ACTIVATION);
    snprintf(name, sizeof name, "relu%u", i);
    uint32_t op = pb_op(b, name, PB_LIST(prev), PB_LIST(t));
    pb_op_at(b, op)->type = relu;
    uint32_t blk = pb_block(b, t, page + (i - 1) * (page / 2), page / 2, i - 1, i == 6 ? 5 : i, 0);
    pb_step(b, op, PB_LIST(prev_block, blk));
    prev = t;
    prev_block = blk;
  }
  pb_fit_arenas(b); /* 4 pages */
  sfc_plan_meta_t *m = pb_meta(b);
  m->va_chunk_bytes = page;
  m->page_peak_bytes = 3 * page;
  pb_header(b)->flags = SFC_PLAN_PAGED;
  pb_header(b)->budget_bytes = 3 * page;
  m->graph_op_count = 6;
  m->graph_tensor_count = 7;
  m->in_core_peak_bytes = m->lower_bound_bytes = 2 * page; /* x and two half pages */
}
