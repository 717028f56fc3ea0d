/* make_bad_plans.c — writes the plan corpora from the test-only builder.
 *
 *   make_bad_plans BAD_DIR INVALID_DIR SEED_DIR     (run by regen-bad-plans.sh)
 *
 * BAD_DIR (tests/data/bad_plans): structurally corrupt files, one damage each,
 * starting from pb_example_full (every section non-empty), and well-formed files that
 * break one reference rule (4-13 of docs/plan-format.md "Invariants": the CLI's exit
 * 2). INVALID_DIR (tests/data/invalid_plans): well-formed files with correct CRCs
 * that break one semantic rule each, one file per rule 14-59 (exit 1). SEED_DIR
 * (tests/fuzz/corpus/plan): small valid plans.
 * Only the .plan files are written; the sidecar .err files are the specification
 * and are written by hand. Output is deterministic: rerunning changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_builder.h"

static const char *bad_dir, *invalid_dir, *seed_dir;

static void put(const char *dir, const char *name, const void *data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.plan", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "make_bad_plans: cannot write %s\n", path);
    exit(1);
  }
}

static uint8_t *full(size_t *n) {
  pb_t *b = pb_new();
  pb_example_full(b);
  void *d;
  pb_write(b, &d, n);
  pb_free(b);
  return d;
}

static void put64(uint8_t *d, size_t at, uint64_t v) {
  memcpy(d + at, &v, 8);
}

/* One damaged copy of the full example: edit(d, n) may change n; fix re-CRCs after. */
static void bad(const char *name, size_t (*edit)(uint8_t *d, size_t n), int fix) {
  size_t n;
  uint8_t *src = full(&n);
  uint8_t *d = calloc(1, n * 2 + 64);
  memcpy(d, src, n);
  n = edit(d, n);
  if (fix)
    pb_recrc(d, n);
  put(bad_dir, name, d, n);
  free(d);
  free(src);
}

static size_t e_empty(uint8_t *d, size_t n) {
  return 0;
}
static size_t e_short(uint8_t *d, size_t n) {
  return 100;
}
static size_t e_half(uint8_t *d, size_t n) {
  return n / 2;
}
static size_t e_trailing(uint8_t *d, size_t n) {
  return n + 16;
}
static size_t e_version(uint8_t *d, size_t n) {
  d[8] = 2;
  return n;
}
static size_t e_endian(uint8_t *d, size_t n) {
  for (int i = 0; i < 8; i++)
    d[16 + i] = (uint8_t)(i + 1); /* 01 02 .. 08: the big-endian spelling */
  return n;
}
static size_t e_float(uint8_t *d, size_t n) {
  double f = 370.25;
  memcpy(d + 24, &f, 8);
  return n;
}
static size_t e_header_flip(uint8_t *d, size_t n) {
  d[64] ^= 0x01; /* arena_bytes */
  return n;
}
static size_t e_table_flip(uint8_t *d, size_t n) {
  d[128 + 5 * 32 + 8] ^= 0x40; /* BLOCKS offset */
  return n;
}
static size_t flip_in(uint8_t *d, size_t n, uint32_t kind) {
  uint64_t off;
  memcpy(&off, d + pb_file_entry(d, n, kind) + 8, 8);
  d[off + 3] ^= 0x04;
  return n;
}
static size_t e_blocks_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_BLOCKS);
}
static size_t e_steps_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_STEPS);
}
static size_t e_strings_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_STRINGS);
}
static size_t e_misaligned(uint8_t *d, size_t n) {
  size_t at = pb_file_entry(d, n, SFC_SECTION_BLOCKS) + 8;
  uint64_t off;
  memcpy(&off, d + at, 8);
  put64(d, at, off + 8);
  return n;
}
static size_t e_missing(uint8_t *d, size_t n) {
  uint32_t k = 99;
  memcpy(d + pb_file_entry(d, n, SFC_SECTION_STEPS), &k, 4);
  return n;
}
static size_t e_unterminated(uint8_t *d, size_t n) {
  size_t at = pb_file_entry(d, n, SFC_SECTION_STRINGS);
  uint64_t off, bytes;
  memcpy(&off, d + at + 8, 8);
  memcpy(&bytes, d + at + 16, 8);
  d[off + bytes - 1] = '!';
  return n;
}
static size_t e_crlf(uint8_t *d, size_t n) {
  uint8_t *src = malloc(n);
  memcpy(src, d, n);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (src[i] == '\n')
      d[o++] = '\r';
    d[o++] = src[i];
  }
  free(src);
  return o;
}
static size_t e_json(uint8_t *d, size_t n) {
  const char *text = "{\n  \"tensors\": [\n    {\"id\": 0, \"name\": \"x\", \"bytes\": 256, "
                     "\"kind\": \"input\"},\n    {\"id\": 1, \"name\": \"y\", \"bytes\": 256, "
                     "\"kind\": \"output\"}\n  ],\n  \"ops\": [{\"id\": 0, \"name\": \"relu\", "
                     "\"type\": \"relu\", \"phase\": \"forward\", \"inputs\": [0], \"outputs\": "
                     "[1]}]\n}\n";
  memcpy(d, text, strlen(text));
  return strlen(text);
}

/* ---- well-formed plans that break one rule (tests/data/invalid_plans, and the
 * reference rules 4-13 in tests/data/bad_plans) -------------------------------------
 * Each edit breaks the invariant its comment names (docs/plan-format.md, "Invariants"),
 * and where it can, only that one; both the loader and the compiler's verifier must
 * report that invariant first (tests/plan/test_plan_rules.c). */

static void chain1(pb_t *b) {
  pb_simple_chain(b, 1);
}
static void chain3(pb_t *b) {
  pb_simple_chain(b, 3);
}

/* 1.3: a parameter w homed on the host. Step 0 reads x and w, step 1 updates w in
 * place; w's residency is swapped in from its home before step 0 and swapped out to
 * it after step 1 (no swap-out with `lost`). */
static void home_plan(pb_t *b, int lost) {
  uint32_t x = pb_tensor(b, "x", 256, SFC_KIND_INPUT);
  uint32_t w = pb_tensor(b, "w", 256, SFC_KIND_PARAM);
  uint32_t y = pb_tensor(b, "y", 256, SFC_KIND_ACTIVATION);
  uint32_t fwd = pb_op(b, "fwd", PB_LIST(x, w), PB_LIST(y));
  uint32_t upd = pb_op(b, "update", PB_LIST(w, y), PB_LIST(w));
  uint32_t X = pb_block(b, x, 0, 256, 0, 1, SFC_BLOCK_PERSISTENT);
  uint32_t W = pb_block(b, w, 256, 256, 0, 1, SFC_BLOCK_SWAPPED_IN);
  uint32_t Y = pb_block(b, y, 512, 256, 0, 1, 0);
  uint32_t H = pb_host_block(b, w, 0, 256, 0, 1);
  pb_host_block_at(b, H)->flags = SFC_BLOCK_PERSISTENT;
  uint32_t in = pb_swap(b, SFC_SWAP_IN, W, H, 0);
  uint32_t s0 = pb_step(b, fwd, PB_LIST(X, W, Y));
  uint32_t s1 = pb_step(b, upd, PB_LIST(W, Y, W));
  pb_dep(b, SFC_NODE_STEP, s0, SFC_NODE_SWAP, in);
  if (!lost) {
    uint32_t out = pb_swap(b, SFC_SWAP_OUT, W, H, 2);
    pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s1);
  }
  pb_fit_arenas(b);
  pb_header(b)->budget_bytes = 768;
}
static void home_example(pb_t *b) {
  home_plan(b, 0);
}
static void home_lost(pb_t *b) {
  home_plan(b, 1);
}
/* 23: the home lives only from step 1 */
static void i_home_short(pb_t *b) {
  pb_host_block_at(b, 0)->first_step = 1;
}
/* 24: w's residency is PERSISTENT too: two homes, one on each side */
static void i_home_device_persistent(pb_t *b) {
  pb_block_at(b, 1)->flags |= SFC_BLOCK_PERSISTENT;
}
/* 20: w's home smaller than w */
static void i_home_too_small(pb_t *b) {
  pb_host_block_at(b, 0)->bytes = 128;
}
/* 25: a second PERSISTENT host block of w */
static void i_two_homes(pb_t *b) {
  pb_host_block(b, 1, 256, 256, 0, 1);
  pb_host_block_at(b, 1)->flags = SFC_BLOCK_PERSISTENT;
  pb_header(b)->host_arena_bytes = 512;
}
/* 56: w's swap-out goes to a staging block, not its home */
static void i_home_bypassed(pb_t *b) {
  pb_host_block(b, 1, 256, 256, 0, 1);
  pb_header(b)->host_arena_bytes = 512;
  pb_swap_at(b, 1)->host_block = 1;
}

/* A builder plan made by base, laid out, edited, written with correct CRCs. */
static void built(const char *dir, const char *name, void (*base)(pb_t *), void (*edit)(pb_t *)) {
  pb_t *b = pb_new();
  base(b);
  pb_view(b);
  if (edit)
    edit(b);
  void *d;
  size_t n;
  pb_write(b, &d, &n);
  put(dir, name, d, n);
  free(d);
  pb_free(b);
}

/* Grows the arena (and the budget with it) of a builder plan to `bytes`. */
static void arena(pb_t *b, uint64_t bytes) {
  pb_header(b)->arena_bytes = pb_header(b)->budget_bytes = bytes;
}

/* 5 */ static void i_alignment(pb_t *b) {
  pb_header(b)->alignment = 48;
}
/* 6 */ static void i_tensor_kind(pb_t *b) {
  pb_tensor_at(b, 2)->kind = 9;
}
/* 7 */ static void i_op_operand(pb_t *b) {
  *pb_op_operand_at(b, 1) = 4;
}
/* 8 */ static void i_tensor_oob(pb_t *b) {
  pb_block_at(b, 1)->tensor = 99;
}
/* 9 */ static void i_step_op(pb_t *b) {
  pb_step_at(b, 1)->op = 7;
}
/* 10 */ static void i_direction(pb_t *b) {
  pb_swap_at(b, 1)->direction = 3;
}
/* 11 */ static void i_dep_index(pb_t *b) {
  pb_dep_at(b, 2)->index = 2;
}
/* 12 */ static void i_segment_steps(pb_t *b) {
  pb_segment_at(b, 0)->step_count = 9;
}
/* 12 (1.2): a backward segment must name an earlier forward segment */
static void i_segment_forward_later(pb_t *b) {
  pb_segment_at(b, 0)->flags = SFC_SEGMENT_BACKWARD;
  pb_segment_at(b, 0)->forward_segment = 0;
}
/* 13 */ static void i_box_ndim(pb_t *b) {
  pb_box_at(b, 0)->ndim = 5;
}
/* 14 */ static void i_budget_flag(pb_t *b) {
  pb_header(b)->flags = SFC_PLAN_OVER_BUDGET; /* arena 768 = budget 768: not over */
}
/* 1.7: pages of 512 bytes, page peak 1536 = the budget, arena 2048 */
static void paged512(pb_t *b) {
  pb_example_paged(b, 512);
}
/* 1.7: pb_example_full paged in pages of 256 bytes, with a' (BLOCKS[4]) moved from a's
 * bytes to its own page (offset 1024). a's swap-out is issued before step 4, after a's
 * last step (3), so a counts at step 4 too: x, a, b, c and a' touch pages 0-4 there,
 * 5 pages = 1280 bytes, where the blocks' steps alone touch 4 at most (steps 2, 3, 5). */
static void paged_full(pb_t *b) {
  pb_example_full(b);
  pb_block_at(b, 4)->offset = 1024;
  arena(b, 1280);
  pb_header(b)->flags = SFC_PLAN_PAGED;
  pb_meta(b)->va_chunk_bytes = 256;
  pb_meta(b)->page_peak_bytes = 1280;
}
/* 59 (1.7): the page peak of the blocks' steps alone, without a's swap-out at step 4 */
static void i_page_peak_swap_out(pb_t *b) {
  pb_meta(b)->page_peak_bytes = 1024;
}
/* 14 (1.7): the flag judged by the contiguous arena (2048 > 1536), not the page peak */
static void i_budget_flag_paged(pb_t *b) {
  pb_header(b)->flags |= SFC_PLAN_OVER_BUDGET;
}
/* 59 (1.7): the page peak claimed is 2 pages, the blocks touch 3 at steps 2 and 4 */
static void i_page_peak_wrong(pb_t *b) {
  pb_meta(b)->page_peak_bytes = 1024;
}
/* 59 (1.7): a page peak in a plan that is not paged */
static void i_page_peak_unpaged(pb_t *b) {
  pb_meta(b)->page_peak_bytes = 768;
}
/* 59 (1.7): a paged arena of pages of 0 bytes */
static void i_paged_no_chunk(pb_t *b) {
  pb_meta(b)->va_chunk_bytes = 0;
}
/* 15 */ static void i_block_backwards(pb_t *b) {
  pb_block_at(b, 2)->first_step = 2;
  pb_block_at(b, 2)->last_step = 1;
}
/* 16 */ static void i_misaligned(pb_t *b) {
  pb_block_at(b, 1)->offset = 260;
}
/* 17 */ static void i_past_arena(pb_t *b) {
  pb_block_at(b, 2)->offset = 576;
}
/* 18 */ static void i_overlap(pb_t *b) {
  pb_block_at(b, 3)->offset = 448;
}
/* 19: a second host block over the first while both are live at step 4 */
static void i_host_overlap(pb_t *b) {
  pb_host_block(b, 2, 128, 256, 4, 4);
  pb_header(b)->host_arena_bytes = 384;
}
/* 20 */ static void i_block_small(pb_t *b) {
  pb_block_at(b, 1)->bytes = 128;
}
/* 21: x external (tensor and block) but its block still claims arena bytes */
static void i_external_bytes(pb_t *b) {
  pb_tensor_at(b, 0)->flags |= SFC_TENSOR_EXTERNAL;
  pb_block_at(b, 0)->flags = SFC_BLOCK_EXTERNAL | SFC_BLOCK_PERSISTENT;
}
/* 22: an EXTERNAL block of a tensor that is not */
static void i_external_tensor(pb_t *b) {
  sfc_plan_block_t *x = pb_block_at(b, 0);
  x->flags = SFC_BLOCK_EXTERNAL | SFC_BLOCK_PERSISTENT;
  x->bytes = 0;
}
/* 23: x (read only by step 0) persistent but live at steps 0..1 of 3 */
static void i_persistent_short(pb_t *b) {
  pb_block_at(b, 0)->last_step = 1;
}
/* 24: the issue's case: input x's block lost its PERSISTENT flag */
static void i_persistent_cleared(pb_t *b) {
  pb_block_at(b, 0)->flags = 0;
}
/* 25: a second (untouched) block of persistent x */
static void i_persistent_two(pb_t *b) {
  pb_block(b, 0, 768, 256, 0, 2, SFC_BLOCK_PERSISTENT);
  arena(b, 1024);
}
/* 26: an UNUSED tensor with a block */
static void i_unused_block(pb_t *b) {
  uint32_t u = pb_tensor(b, "u", 256, SFC_KIND_ACTIVATION);
  pb_tensor_at(b, u)->flags = SFC_TENSOR_UNUSED;
  pb_block(b, u, 768, 256, 0, 0, 0);
  arena(b, 1024);
}
/* 27: c0 (BLOCKS[2]) PARTIAL with a box of d */
static void i_partial_tensor(pb_t *b) {
  pb_block_at(b, 2)->box = 3;
}
/* 28: c0's box (BOXES[1], also step 0's output box) empty */
static void i_partial_empty(pb_t *b) {
  pb_box_at(b, 1)->hi[2] = 0;
}
/* 29: c0 smaller than its box (4 rows of 8 f32: 128 bytes) */
static void i_partial_small(pb_t *b) {
  pb_block_at(b, 2)->bytes = 64;
}
/* 30: step 1 reads t2's block as its input t1 */
static void i_operand_tensor(pb_t *b) {
  *pb_step_operand_at(b, 2) = 2;
}
/* 31 */ static void i_not_resident(pb_t *b) {
  pb_block_at(b, 1)->last_step = 0;
}
/* 32: step 1 reads rows 0..4 of c from c0, which holds rows 0..3 */
static void i_partial_outside(pb_t *b) {
  pb_box_at(b, 2)->hi[2] = 5;
}
/* 33 */ static void i_timed_negative(pb_t *b) {
  pb_step_at(b, 1)->time_us = -1;
}
/* 34: step 1 reads t1 from a block of its own that nothing wrote */
static void i_read_unwritten(pb_t *b) {
  pb_block_at(b, 1)->last_step = 0;
  *pb_step_operand_at(b, 2) = pb_block(b, 1, 768, 256, 1, 1, 0);
  arena(b, 1024);
}
/* 35 */ static void i_tile_count(pb_t *b) {
  pb_segment_at(b, 0)->tile_count = 3;
}
/* 36 */ static void i_segment_gap(pb_t *b) {
  pb_step_at(b, 2)->segment = SFC_PLAN_NONE;
  pb_step_at(b, 2)->tile = SFC_PLAN_NONE;
}
/* 36 (1.2): a recomputing step outside a backward segment */
static void i_recompute_forward(pb_t *b) {
  pb_step_at(b, 1)->flags |= SFC_STEP_RECOMPUTE;
}
/* 37 */ static void i_tile_no_boxes(pb_t *b) {
  pb_step_at(b, 1)->box_begin = SFC_PLAN_NONE;
}
/* 38 */ static void i_box_tensor(pb_t *b) {
  pb_box_at(b, 0)->tensor = 0;
}
/* 39: a's box of step 1 reaches row 9 of 8 */
static void i_box_outside(pb_t *b) {
  pb_box_at(b, 0)->hi[2] = 9;
}
/* 40: conv_c's tiles compute row 4 of c twice */
static void i_tiles_overlap(pb_t *b) {
  pb_box_at(b, 3)->hi[2] = 5;
}
/* 58's limit: conv_c's window 3 x 2^30 would have the checkers walk 2^30 taps per box */
static void b_window_taps(pb_t *b) {
  pb_op_at(b, 2)->kernel[1] = 1 << 30;
}
/* 57: conv_c's window with stride 0 */
static void i_op_map_window(pb_t *b) {
  pb_op_at(b, 2)->stride[0] = 0;
}
/* 58: conv_c's tile 0 computes rows 0-3 of c, which read rows 0-4 of b (and one zero row
 * above): its box of b stops at row 3 */
static void i_input_box_not_exact(pb_t *b) {
  pb_box_at(b, 2)->hi[2] = 4;
}
/* 41 */ static void i_swaps_unsorted(pb_t *b) {
  pb_swap_at(b, 1)->issue_step = 3;
}
/* 42 */ static void i_swap_tensor(pb_t *b) {
  pb_swap_at(b, 0)->tensor = 3;
}
/* 43: the issue's case: a swap-out copying half of its block */
static void i_swap_bytes(pb_t *b) {
  pb_swap_at(b, 0)->bytes = 128;
}
/* 44: the host block holds a box (rows 0..4) of a, the device block all of it */
static void i_swap_host_part(pb_t *b) {
  pb_host_block_at(b, 0)->flags = SFC_BLOCK_PARTIAL;
  pb_host_block_at(b, 0)->box = 0;
}
/* 45: the swap-out of a before step 0 (a is not live at any step before; its wait on
 * step 0, the writer, would point forward, so it goes too) */
static void i_swap_out_early(pb_t *b) {
  pb_swap_at(b, 0)->issue_step = 0;
  pb_swap_at(b, 0)->dep_count = 0;
}
/* 46 */ static void i_swap_in_not_live(pb_t *b) {
  pb_block_at(b, 4)->first_step = 5;
}
/* 47 */ static void i_unfilled(pb_t *b) {
  pb_block_at(b, 5)->flags = SFC_BLOCK_SWAPPED_IN;
}
/* 48: the issue's VA case: t1 swapped out before step 1 and back in before step 2
 * into a block no step reads (in VA mode its chunks could be reclaimed while the copy
 * still writes them) */
static void swapped_in_unread(pb_t *b) {
  pb_simple_chain(b, 3);
  uint32_t h = pb_host_block(b, 1, 0, 256, 1, 2);
  uint32_t back = pb_block(b, 1, 768, 256, 2, 2, SFC_BLOCK_SWAPPED_IN);
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, 1, h, 1);
  uint32_t in = pb_swap(b, SFC_SWAP_IN, back, h, 2);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, 0);
  pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_SWAP, out);
  pb_fit_arenas(b);
  pb_header(b)->budget_bytes = 1024;
}
/* A valid seed with empty ranges into empty sections: an op without operands whose
 * step names box 0 of an empty BOXES (replay computes `boxes + 0`; found by fuzz_plan). */
static void empty_ranges(pb_t *b) {
  pb_op_at(b, 0)->input_count = 0;
  pb_op_at(b, 0)->output_count = 0;
  pb_step_at(b, 0)->box_begin = 0;
}
/* 49 */ static void i_dep_forward(pb_t *b) {
  pb_dep_at(b, 1)->index = 4;
}
/* 50: step 5 waits for the swap-out instead of the swap-in that fills a' */
static void i_use_before_fill(pb_t *b) {
  pb_dep_at(b, 0)->index = 0;
}
/* 51: the swap-out of a waits for nothing (a is written by step 0) */
static void i_out_before_write(pb_t *b) {
  pb_swap_at(b, 0)->dep_count = 0;
}
/* 52: a' moved to its own bytes; the swap-in waits only for step 3, not the swap-out */
static void i_in_before_host_copy(pb_t *b) {
  pb_block_at(b, 4)->offset = 1024;
  arena(b, 1280);
  pb_swap_at(b, 1)->dep_begin = 3;
  pb_swap_at(b, 1)->dep_count = 1;
}
/* 53: t written at step 0, copied out before step 1, overwritten in place by step 1,
 * which does not wait for the copy */
static void write_during_copy(pb_t *b) {
  uint32_t x = pb_tensor(b, "x", 256, SFC_KIND_INPUT);
  uint32_t t = pb_tensor(b, "t", 256, SFC_KIND_OUTPUT);
  uint32_t init = pb_op(b, "init", PB_LIST(x), PB_LIST(t));
  uint32_t update = pb_op(b, "update", PB_LIST(t), PB_LIST(t));
  uint32_t X = pb_block(b, x, 0, 256, 0, 1, SFC_BLOCK_PERSISTENT);
  uint32_t T = pb_block(b, t, 256, 256, 0, 1, 0);
  uint32_t H = pb_host_block(b, t, 0, 256, 1, 1);
  uint32_t s0 = pb_step(b, init, PB_LIST(X, T));
  pb_step(b, update, PB_LIST(T, T));
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, T, H, 1);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  pb_fit_arenas(b);
  pb_header(b)->budget_bytes = 512;
}
/* 54: the issue's case: t1 copied out before step 2 (after its last use), and t3,
 * written by step 2 over t1's bytes, does not wait for the copy */
static void reuse_after_swap_out(pb_t *b) {
  pb_simple_chain(b, 3);
  uint32_t h = pb_host_block(b, 1, 0, 256, 2, 2);
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, 1, h, 2);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, 0);
  pb_fit_arenas(b);
}
/* 55: c copied out at the end into HOST_BLOCKS[1], over HOST_BLOCKS[0]'s bytes,
 * without waiting for the swap-in that still reads HOST_BLOCKS[0] */
static void host_reuse(pb_t *b) {
  pb_example_full(b);
  uint32_t h = pb_host_block(b, 3, 0, 256, 5, 5);
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, 3, h, 6);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, 4);
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: make_bad_plans BAD_DIR INVALID_DIR SEED_DIR\n");
    return 2;
  }
  bad_dir = argv[1];
  invalid_dir = argv[2];
  seed_dir = argv[3];

  bad("empty", e_empty, 0);
  bad("short_header", e_short, 0);
  bad("not_a_plan", e_json, 0);
  bad("crlf_damaged", e_crlf, 0);
  bad("version_2", e_version, 0);
  bad("big_endian", e_endian, 0);
  bad("float_check", e_float, 0);
  bad("header_crc", e_header_flip, 0);
  bad("truncated_half", e_half, 0);
  bad("trailing_bytes", e_trailing, 0);
  bad("table_crc", e_table_flip, 0);
  bad("blocks_crc", e_blocks_flip, 0);
  bad("steps_crc", e_steps_flip, 0);
  bad("strings_crc", e_strings_flip, 0);
  bad("section_misaligned", e_misaligned, 1);
  bad("missing_steps", e_missing, 1);
  bad("strings_unterminated", e_unterminated, 1);
  /* references (exit 2): 4 is strings_unterminated above */
  built(bad_dir, "alignment_not_pow2", chain3, i_alignment);                         /* 5 */
  built(bad_dir, "tensor_bad_kind", chain3, i_tensor_kind);                          /* 6 */
  built(bad_dir, "window_taps", pb_example_full, b_window_taps);                     /* 58 */
  built(bad_dir, "op_operand_out_of_range", chain3, i_op_operand);                   /* 7 */
  built(bad_dir, "tensor_out_of_range", chain3, i_tensor_oob);                       /* 8 */
  built(bad_dir, "step_op_out_of_range", chain3, i_step_op);                         /* 9 */
  built(bad_dir, "swap_direction", pb_example_full, i_direction);                    /* 10 */
  built(bad_dir, "dep_index_out_of_range", pb_example_full, i_dep_index);            /* 11 */
  built(bad_dir, "segment_steps_out_of_range", pb_example_full, i_segment_steps);    /* 12 */
  built(bad_dir, "segment_forward_later", pb_example_full, i_segment_forward_later); /* 12 */
  built(bad_dir, "box_ndim", pb_example_full, i_box_ndim);                           /* 13 */

  /* semantics (exit 1), one file per invariant 14-59 */
  built(invalid_dir, "budget_flag", chain3, i_budget_flag);                               /* 14 */
  built(invalid_dir, "budget_flag_paged", paged512, i_budget_flag_paged);                 /* 14 */
  built(invalid_dir, "page_peak_wrong", paged512, i_page_peak_wrong);                     /* 59 */
  built(invalid_dir, "page_peak_unpaged", chain3, i_page_peak_unpaged);                   /* 59 */
  built(invalid_dir, "page_peak_swap_out", paged_full, i_page_peak_swap_out);             /* 59 */
  built(invalid_dir, "paged_no_chunk", paged512, i_paged_no_chunk);                       /* 59 */
  built(invalid_dir, "block_steps_backwards", chain3, i_block_backwards);                 /* 15 */
  built(invalid_dir, "misaligned", chain3, i_misaligned);                                 /* 16 */
  built(invalid_dir, "past_arena", chain3, i_past_arena);                                 /* 17 */
  built(invalid_dir, "overlap", chain3, i_overlap);                                       /* 18 */
  built(invalid_dir, "host_overlap", pb_example_full, i_host_overlap);                    /* 19 */
  built(invalid_dir, "block_too_small", chain3, i_block_small);                           /* 20 */
  built(invalid_dir, "external_bytes", chain3, i_external_bytes);                         /* 21 */
  built(invalid_dir, "external_tensor_mismatch", chain3, i_external_tensor);              /* 22 */
  built(invalid_dir, "persistent_short", chain3, i_persistent_short);                     /* 23 */
  built(invalid_dir, "persistent_flag_cleared", chain3, i_persistent_cleared);            /* 24 */
  built(invalid_dir, "persistent_two_blocks", chain3, i_persistent_two);                  /* 25 */
  built(invalid_dir, "unused_with_block", chain3, i_unused_block);                        /* 26 */
  built(invalid_dir, "partial_box_tensor", pb_example_tiled, i_partial_tensor);           /* 27 */
  built(invalid_dir, "partial_box_empty", pb_example_tiled, i_partial_empty);             /* 28 */
  built(invalid_dir, "partial_too_small", pb_example_tiled, i_partial_small);             /* 29 */
  built(invalid_dir, "operand_wrong_tensor", chain3, i_operand_tensor);                   /* 30 */
  built(invalid_dir, "not_resident", chain3, i_not_resident);                             /* 31 */
  built(invalid_dir, "partial_operand_outside", pb_example_tiled, i_partial_outside);     /* 32 */
  built(invalid_dir, "timed_negative", pb_example_tiled, i_timed_negative);               /* 33 */
  built(invalid_dir, "read_before_write", chain3, i_read_unwritten);                      /* 34 */
  built(invalid_dir, "tile_count", pb_example_full, i_tile_count);                        /* 35 */
  built(invalid_dir, "segment_misses_step", pb_example_full, i_segment_gap);              /* 36 */
  built(invalid_dir, "recompute_forward", pb_example_full, i_recompute_forward);          /* 36 */
  built(invalid_dir, "tile_without_boxes", pb_example_full, i_tile_no_boxes);             /* 37 */
  built(invalid_dir, "box_wrong_tensor", pb_example_full, i_box_tensor);                  /* 38 */
  built(invalid_dir, "box_outside_tensor", pb_example_full, i_box_outside);               /* 39 */
  built(invalid_dir, "tiles_overlap", pb_example_full, i_tiles_overlap);                  /* 40 */
  built(invalid_dir, "swaps_unsorted", pb_example_full, i_swaps_unsorted);                /* 41 */
  built(invalid_dir, "swap_wrong_tensor", pb_example_full, i_swap_tensor);                /* 42 */
  built(invalid_dir, "swap_bytes", pb_example_full, i_swap_bytes);                        /* 43 */
  built(invalid_dir, "swap_host_part", pb_example_full, i_swap_host_part);                /* 44 */
  built(invalid_dir, "swap_out_at_0", pb_example_full, i_swap_out_early);                 /* 45 */
  built(invalid_dir, "swap_in_not_live", pb_example_full, i_swap_in_not_live);            /* 46 */
  built(invalid_dir, "swapped_in_unfilled", pb_example_full, i_unfilled);                 /* 47 */
  built(invalid_dir, "swapped_in_unread", swapped_in_unread, NULL);                       /* 48 */
  built(invalid_dir, "dep_forward", pb_example_full, i_dep_forward);                      /* 49 */
  built(invalid_dir, "use_before_swap_in", pb_example_full, i_use_before_fill);           /* 50 */
  built(invalid_dir, "swap_out_before_write", pb_example_full, i_out_before_write);       /* 51 */
  built(invalid_dir, "swap_in_before_host_copy", pb_example_full, i_in_before_host_copy); /* 52 */
  built(invalid_dir, "write_during_copy", write_during_copy, NULL);                       /* 53 */
  built(invalid_dir, "reuse_after_swap_out", reuse_after_swap_out, NULL);                 /* 54 */
  built(invalid_dir, "host_reuse_without_wait", host_reuse, NULL);                        /* 55 */
  built(invalid_dir, "home_short", home_example, i_home_short);                           /* 23 */
  built(invalid_dir, "home_device_persistent", home_example, i_home_device_persistent);   /* 24 */
  built(invalid_dir, "home_too_small", home_example, i_home_too_small);                   /* 20 */
  built(invalid_dir, "two_homes", home_example, i_two_homes);                             /* 25 */
  built(invalid_dir, "home_write_lost", home_lost, NULL);                                 /* 56 */
  built(invalid_dir, "home_bypassed", home_example, i_home_bypassed);                     /* 56 */
  built(invalid_dir, "op_map_window", pb_example_full, i_op_map_window);                  /* 57 */
  built(invalid_dir, "input_box_not_exact", pb_example_full, i_input_box_not_exact);      /* 58 */

  /* valid seeds for fuzz_plan and the mutant census */
  built(seed_dir, "chain1", chain1, NULL);
  built(seed_dir, "chain3", chain3, NULL);
  built(seed_dir, "full", pb_example_full, NULL);
  built(seed_dir, "tiled", pb_example_tiled, NULL);
  built(seed_dir, "empty_ranges", chain1, empty_ranges);
  built(seed_dir, "home", home_example, NULL);
  built(seed_dir, "paged", paged512, NULL);
  built(seed_dir, "paged_full", paged_full, NULL);
  return 0;
}
