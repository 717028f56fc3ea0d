/* test_plan_validate.c — well-formed files that break a reference (SFC_ERR_BAD_INPUT) or
 * an invariant (SFC_ERR_VERIFY), one row each with the exact message.
 *
 * Base plans (plan_examples.c): chain = pb_simple_chain(b, 3): tensors x t1 t2 t3,
 * ops relu1..3, blocks X@0 [0,2] T1@256 [0,1] T2@512 [1,2] T3@256 [2,2], arena 768.
 * full = pb_example_full(b): see its table; swaps 0 (out of a) and 1 (in to a'),
 * DEPS[0] step 5 -> swap 1, DEPS[1] swap 0 -> step 0, DEPS[2] swap 1 -> swap 0,
 * DEPS[3] swap 1 -> step 3. */
#include "plan_test_util.h"

typedef struct row {
  const char *name;
  int full;              /* base: 0 chain, 1 full */
  void (*edit)(pb_t *b); /* runs after pb_view, on the laid-out records */
  sfc_status_t status;
  const char *message; /* "%S" marks where the string table size goes */
} row_t;

/* chain edits */
static void overlap(pb_t *b) {
  pb_block_at(b, 3)->offset = 448;
}
static void past_arena(pb_t *b) {
  pb_block_at(b, 2)->offset = 576;
}
static void misaligned(pb_t *b) {
  pb_block_at(b, 1)->offset = 260;
}
static void not_resident(pb_t *b) {
  pb_block_at(b, 1)->last_step = 0;
}
static void wrong_tensor(pb_t *b) {
  *pb_step_operand_at(b, 2) = 2;
}
static void too_small(pb_t *b) {
  pb_block_at(b, 1)->bytes = 128;
}
static void first_after_last(pb_t *b) {
  pb_block_at(b, 2)->first_step = 2;
  pb_block_at(b, 2)->last_step = 1;
}
static void persistent_short(pb_t *b) {
  pb_block_at(b, 0)->last_step = 1;
}
static void external_bytes(pb_t *b) {
  pb_block_at(b, 0)->flags = SFC_BLOCK_EXTERNAL;
}
static void zero_bytes_share(pb_t *b) { /* zero-byte blocks share nothing */
  pb_block_at(b, 3)->offset = 512;
  pb_block_at(b, 3)->bytes = 0;
  pb_tensor_at(b, 3)->bytes = 0;
}
/* chain reference edits */
static void tensor_oob(pb_t *b) {
  pb_block_at(b, 1)->tensor = 99;
}
static void last_oob(pb_t *b) {
  pb_block_at(b, 2)->last_step = 3;
}
static void op_oob(pb_t *b) {
  pb_step_at(b, 1)->op = 7;
}
static void block_oob(pb_t *b) {
  *pb_step_operand_at(b, 2) = 9;
}
static void operand_tensor_oob(pb_t *b) {
  *pb_op_operand_at(b, 1) = 4;
}
static void name_oob(pb_t *b) {
  pb_tensor_at(b, 1)->name = 9999;
}
static void times_device_oob(pb_t *b) {
  pb_meta(b)->times_device = 9999;
}
static void bad_kind(pb_t *b) {
  pb_tensor_at(b, 2)->kind = 9;
}
static void operands_past(pb_t *b) {
  pb_step_at(b, 2)->operand_begin = 5;
}
static void tile_no_segment(pb_t *b) {
  pb_step_at(b, 0)->tile = 0;
}
static void backward_oob(pb_t *b) {
  pb_op_at(b, 2)->backward_of = 3;
}

/* full edits */
static void dep_forward(pb_t *b) {
  pb_dep_at(b, 1)->index = 4;
}
static void dep_self(pb_t *b) {
  *pb_dep_at(b, 0) = (sfc_plan_dep_t){SFC_NODE_STEP, 5};
}
static void swap_wrong_tensor(pb_t *b) {
  pb_swap_at(b, 0)->tensor = 3;
}
static void swaps_unsorted(pb_t *b) {
  pb_swap_at(b, 1)->issue_step = 3;
}
static void swapped_in_unfilled(pb_t *b) {
  pb_block_at(b, 5)->flags = SFC_BLOCK_SWAPPED_IN;
}
static void first_use_no_dep(pb_t *b) {
  pb_dep_at(b, 0)->index = 0;
}
static void swap_in_unflagged(pb_t *b) {
  pb_block_at(b, 4)->flags = 0;
}
static void swap_out_at_0(pb_t *b) {
  pb_swap_at(b, 0)->issue_step = 0;
}
static void swap_in_not_live(pb_t *b) {
  pb_block_at(b, 4)->first_step = 5;
}
static void swap_too_big(pb_t *b) {
  pb_swap_at(b, 0)->bytes = 512;
}
static void swap_host_wrong_tensor(pb_t *b) {
  pb_host_block_at(b, 0)->tensor = 2;
}
static void host_overlap(pb_t *b) {
  pb_host_block(b, 2, 128, 256, 4, 4);
  pb_header(b)->host_arena_bytes = 384;
}
static void host_past_arena(pb_t *b) {
  pb_header(b)->host_arena_bytes = 128;
}
static void two_fills(pb_t *b) {
  pb_swap(b, SFC_SWAP_IN, 4, 0, 5);
}
static void tile_count_bad(pb_t *b) {
  pb_segment_at(b, 0)->tile_count = 3;
}
static void box_wrong_tensor(pb_t *b) {
  pb_box_at(b, 0)->tensor = 0;
}
static void box_inverted(pb_t *b) {
  pb_box_at(b, 3)->lo[2] = 6;
  pb_box_at(b, 3)->hi[2] = 2;
}
static void step_outside_segment(pb_t *b) {
  pb_step_at(b, 5)->segment = 0;
  pb_step_at(b, 5)->tile = 0;
}
static void segment_misses_step(pb_t *b) {
  pb_step_at(b, 2)->segment = SFC_PLAN_NONE;
  pb_step_at(b, 2)->tile = SFC_PLAN_NONE;
}
static void bad_direction(pb_t *b) {
  pb_swap_at(b, 1)->direction = 3;
}
static void dep_kind_bad(pb_t *b) {
  pb_dep_at(b, 2)->node_kind = 2;
}
static void dep_index_oob(pb_t *b) {
  pb_dep_at(b, 2)->index = 2;
}
static void tile_oob(pb_t *b) {
  pb_step_at(b, 3)->tile = 2;
}

static const row_t rows[] = {
    /* semantics */
    {"overlap", 0, overlap, SFC_ERR_VERIFY,
     "BLOCKS[2] (tensor 2 \"t2\") and BLOCKS[3] (tensor 3 \"t3\") share bytes [512, 704) while "
     "both are live at step 2"},
    {"past arena", 0, past_arena, SFC_ERR_VERIFY,
     "BLOCKS[2] (tensor 2 \"t2\"): bytes [576, 832) extend past the arena (768 bytes)"},
    {"misaligned", 0, misaligned, SFC_ERR_VERIFY,
     "BLOCKS[1] (tensor 1 \"t1\"): offset 260 is not a multiple of the alignment 64"},
    {"not resident", 0, not_resident, SFC_ERR_VERIFY,
     "STEPS[1] operand 0: BLOCKS[1] (tensor 1 \"t1\") is not resident at step 1 (live at steps "
     "0..0)"},
    {"wrong tensor", 0, wrong_tensor, SFC_ERR_VERIFY,
     "STEPS[1] operand 0: BLOCKS[2] (tensor 2 \"t2\"), but operand 0 of OPS[1] (\"relu2\") is "
     "tensor 1 \"t1\""},
    {"too small", 0, too_small, SFC_ERR_VERIFY,
     "BLOCKS[1] (tensor 1 \"t1\"): 128 bytes, smaller than the tensor (256 bytes)"},
    {"first after last", 0, first_after_last, SFC_ERR_VERIFY,
     "BLOCKS[2] (tensor 2 \"t2\"): first_step 2 is after last_step 1"},
    {"persistent short", 0, persistent_short, SFC_ERR_VERIFY,
     "BLOCKS[0] (tensor 0 \"x\"): PERSISTENT but live only at steps 0..1 (must be 0..2)"},
    {"external with bytes", 0, external_bytes, SFC_ERR_VERIFY,
     "BLOCKS[0] (tensor 0 \"x\"): EXTERNAL but offset 0 and bytes 256 (both must be 0)"},
    {"zero-byte block", 0, zero_bytes_share, SFC_OK, NULL},
    {"dep forward", 1, dep_forward, SFC_ERR_VERIFY,
     "SWAPS[0]: dependency DEPS[1] on STEPS[4] points forward in issue order"},
    {"dep on itself", 1, dep_self, SFC_ERR_VERIFY,
     "STEPS[5]: dependency DEPS[0] on STEPS[5] points forward in issue order"},
    {"swap wrong tensor", 1, swap_wrong_tensor, SFC_ERR_VERIFY,
     "SWAPS[0]: moves tensor 3 \"c\" but its device block is BLOCKS[1] (tensor 1 \"a\")"},
    {"swap host block wrong tensor", 1, swap_host_wrong_tensor, SFC_ERR_VERIFY,
     "SWAPS[0]: moves tensor 1 \"a\" but its host block is HOST_BLOCKS[0] (tensor 2 \"b\")"},
    {"swaps unsorted", 1, swaps_unsorted, SFC_ERR_VERIFY,
     "SWAPS[1]: issue_step 3 is before SWAPS[0]'s 4 (SWAPS must be sorted by issue_step)"},
    {"swapped-in without swap", 1, swapped_in_unfilled, SFC_ERR_VERIFY,
     "BLOCKS[5] (tensor 4 \"d\"): SWAPPED_IN but no swap-in fills it"},
    {"first use without dep", 1, first_use_no_dep, SFC_ERR_VERIFY,
     "STEPS[5] is the first use of BLOCKS[4] (tensor 1 \"a\") but does not wait for SWAPS[1], "
     "the swap-in that fills it"},
    {"swap-in into unflagged block", 1, swap_in_unflagged, SFC_ERR_VERIFY,
     "SWAPS[1]: swap-in into BLOCKS[4] (tensor 1 \"a\"), which is not marked SWAPPED_IN"},
    {"swap-out before step 0", 1, swap_out_at_0, SFC_ERR_VERIFY,
     "SWAPS[0]: swap-out issued before step 0 but BLOCKS[1] (tensor 1 \"a\") is not live at the "
     "step before (live at steps 0..3)"},
    {"swap-in not live", 1, swap_in_not_live, SFC_ERR_VERIFY,
     "SWAPS[1]: swap-in issued before step 4 but BLOCKS[4] (tensor 1 \"a\") is not live at that "
     "step (live at steps 5..5)"},
    {"swap too big", 1, swap_too_big, SFC_ERR_VERIFY,
     "SWAPS[0]: copies 512 bytes but BLOCKS[1] (tensor 1 \"a\") holds 256 (a swap moves its "
     "block's whole contents: the tensor, or the box of a PARTIAL block)"},
    {"host overlap", 1, host_overlap, SFC_ERR_VERIFY,
     "HOST_BLOCKS[0] (tensor 1 \"a\") and HOST_BLOCKS[1] (tensor 2 \"b\") share bytes [128, 256) "
     "while both are live at step 4"},
    {"host past arena", 1, host_past_arena, SFC_ERR_VERIFY,
     "HOST_BLOCKS[0] (tensor 1 \"a\"): bytes [0, 256) extend past the host arena (128 bytes)"},
    {"two fills", 1, two_fills, SFC_ERR_VERIFY,
     "BLOCKS[4] (tensor 1 \"a\"): filled by two swap-ins (SWAPS[1] and SWAPS[2])"},
    {"tile count", 1, tile_count_bad, SFC_ERR_VERIFY,
     "SEGMENTS[0]: tile_count 3 is not the product of its grid 1x1x2x1"},
    {"box wrong tensor", 1, box_wrong_tensor, SFC_ERR_VERIFY,
     "STEPS[1] operand 0: BOXES[0] describes tensor 0, not tensor 1"},
    {"box inverted", 1, box_inverted, SFC_ERR_VERIFY, "BOXES[3]: lo[2] 6 > hi[2] 2"},
    {"step outside segment", 1, step_outside_segment, SFC_ERR_VERIFY,
     "STEPS[5]: in SEGMENTS[0] but outside its steps [1, 5)"},
    {"segment misses a step", 1, segment_misses_step, SFC_ERR_VERIFY,
     "STEPS[2].segment: not 0 although SEGMENTS[0] covers the step"},
    /* references */
    {"tensor out of range", 0, tensor_oob, SFC_ERR_BAD_INPUT,
     "BLOCKS[1].tensor: 99 is out of range (4 tensors)"},
    {"last_step out of range", 0, last_oob, SFC_ERR_BAD_INPUT,
     "BLOCKS[2].last_step: 3 is out of range (3 steps)"},
    {"op out of range", 0, op_oob, SFC_ERR_BAD_INPUT, "STEPS[1].op: 7 is out of range (3 ops)"},
    {"block out of range", 0, block_oob, SFC_ERR_BAD_INPUT,
     "STEP_OPERANDS[2]: block 9 is out of range (4 blocks)"},
    {"operand tensor out of range", 0, operand_tensor_oob, SFC_ERR_BAD_INPUT,
     "OP_OPERANDS[1]: tensor 4 is out of range (4 tensors)"},
    {"string out of range", 0, name_oob, SFC_ERR_BAD_INPUT,
     "TENSORS[1].name: string offset 9999 is past the string table (%S bytes)"},
    {"times_device out of range", 0, times_device_oob, SFC_ERR_BAD_INPUT,
     "META.times_device: string offset 9999 is past the string table (%S bytes)"},
    {"bad kind", 0, bad_kind, SFC_ERR_BAD_INPUT, "TENSORS[2].kind: 9 is not a tensor kind"},
    {"operands past", 0, operands_past, SFC_ERR_BAD_INPUT,
     "STEPS[2]: operands [5, 7) extend past STEP_OPERANDS (6 entries)"},
    {"tile without segment", 0, tile_no_segment, SFC_ERR_BAD_INPUT,
     "STEPS[0].tile: 0 but the step has no segment"},
    {"backward_of out of range", 0, backward_oob, SFC_ERR_BAD_INPUT,
     "OPS[2].backward_of: 3 is out of range (3 ops)"},
    {"direction", 1, bad_direction, SFC_ERR_BAD_INPUT,
     "SWAPS[1].direction: 3 is neither 1 (out) nor 2 (in)"},
    {"dep kind", 1, dep_kind_bad, SFC_ERR_BAD_INPUT,
     "DEPS[2].node_kind: 2 is neither 0 (step) nor 1 (swap)"},
    {"dep index", 1, dep_index_oob, SFC_ERR_BAD_INPUT,
     "DEPS[2].index: 2 is out of range (2 swaps)"},
    {"tile out of range", 1, tile_oob, SFC_ERR_BAD_INPUT,
     "STEPS[3].tile: 2 is out of range (SEGMENTS[0] has 2 tiles)"},
};

static void test_rows(void) {
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
    const row_t *r = &rows[i];
    pb_t *b = pb_new();
    if (r->full)
      pb_example_full(b);
    else
      pb_simple_chain(b, 3);
    pb_view(b);
    r->edit(b);
    void *data;
    size_t n;
    pb_write(b, &data, &n);
    const char *msg = r->message;
    char expanded[512];
    const char *mark = msg ? strstr(msg, "%S") : NULL;
    if (mark) {
      snprintf(expanded, sizeof expanded, "%.*s%llu%s", (int)(mark - msg), msg,
               (unsigned long long)pb_view(b)->strings_bytes, mark + 2);
      msg = expanded;
    }
    expect_load(data, n, r->status, msg, r->name);
    free(data);
    pb_free(b);
  }
}

int main(void) {
  RUN(test_rows);
  return check_summary();
}
