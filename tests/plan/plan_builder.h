/* plan_builder.h — build plan files by hand, for tests only (never linked into sfc).
 *
 *   pb_t *b = pb_new();
 *   uint32_t x = pb_tensor(b, "x", 256, SFC_KIND_INPUT);
 *   uint32_t y = pb_tensor(b, "y", 256, SFC_KIND_OUTPUT);
 *   uint32_t relu = pb_op(b, "relu", PB_LIST(x), PB_LIST(y));
 *   uint32_t bx = pb_block(b, x, 0, 256, 0, 0, SFC_BLOCK_PERSISTENT);
 *   uint32_t by = pb_block(b, y, 256, 256, 0, 0, 0);
 *   pb_step(b, relu, PB_LIST(bx, by));        // one block per op operand, in op order
 *   pb_fit_arenas(b);                         // arena_bytes = end of the last block
 *   void *data; size_t n;
 *   pb_write(b, &data, &n);                   // sfc_plan_write_buffer; free(data) after
 *   pb_free(b);
 *
 * Every add function returns the new record's index. Records get sensible defaults
 * (see each function) and stay editable through the pb_*_at accessors, which is how
 * tests build deliberately broken plans: the builder checks nothing and the writer
 * checks almost nothing, so anything the reader must reject can be written.
 *
 * Dependencies are collected per node and laid out in DEPS by pb_view (steps in
 * order, then swaps in order), which also sets every step's and swap's dep_begin
 * and dep_count. After the first pb_view, pb_dep aborts; edit pb_dep_at instead.
 * Misuse and out-of-memory abort with a message: this is test code.
 *
 * Ready-made plans (all valid; see plan_builder.c for the exact layout):
 *   pb_simple_chain(b, n)  x -> relu1 -> ... -> relun, n steps, ping-pong blocks;
 *   pb_example_full(b)     6 steps with a 2-tile segment, a swap-out/swap-in pair,
 *                          host block, deps and boxes: every section non-empty;
 *   pb_example_paged(b, p) (1.7) a PAGED arena of pages of p bytes: 4 pages of
 *                          offsets, at most 3 touched at once (the budget);
 *   pb_example_tiled(b)    a 2-tile segment whose intermediate tensor lives in one
 *                          PARTIAL block per tile; TIMED steps.
 *
 * File helpers for hand-editing written bytes: pb_file_entry finds a section's
 * table entry, pb_recrc recomputes every CRC-32 after an edit.
 */
#ifndef SFC_TEST_PLAN_BUILDER_H
#define SFC_TEST_PLAN_BUILDER_H

#include <stddef.h>
#include <stdint.h>

#include "sfc/plan_format.h"

typedef struct pb pb_t;

/* PB_LIST(a, b, c) expands to "pointer, count" for the list arguments below. */
#define PB_LIST(...)                                                                               \
  (const uint32_t[]){__VA_ARGS__},                                                                 \
      (uint32_t)(sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
#define PB_NONE NULL, 0u

pb_t *pb_new(void); /* alignment 64, meta filled with test names and link speeds */
void pb_free(pb_t *b);

uint32_t pb_str(pb_t *b, const char *s); /* appends s to STRINGS; "" is offset 0 */

/* dtype f32, shape [bytes / 4], graph_id = index; PERSISTENT for input/param/optimizer. */
uint32_t pb_tensor(pb_t *b, const char *name, uint64_t bytes, int kind);

/* type = name, phase forward, time_us 10, backward_of NONE, operands in, out, temps. */
uint32_t pb_op(pb_t *b, const char *name, const uint32_t *in, uint32_t n_in, const uint32_t *out,
               uint32_t n_out);
uint32_t pb_op_temps(pb_t *b, const char *name, const uint32_t *in, uint32_t n_in,
                     const uint32_t *out, uint32_t n_out, const uint32_t *tmp, uint32_t n_tmp);

uint32_t pb_block(pb_t *b, uint32_t tensor, uint64_t offset, uint64_t bytes, uint32_t first,
                  uint32_t last, uint32_t flags);
uint32_t pb_host_block(pb_t *b, uint32_t tensor, uint64_t offset, uint64_t bytes, uint32_t first,
                       uint32_t last);

/* segment, tile and box_begin NONE; operands are device block indices. */
uint32_t pb_step(pb_t *b, uint32_t op, const uint32_t *blocks, uint32_t n);
void pb_step_tile(pb_t *b, uint32_t step, uint32_t segment, uint32_t tile, uint32_t box_begin);

/* tensor = the device block's tensor, bytes = the tensor's bytes. */
uint32_t pb_swap(pb_t *b, uint32_t direction, uint32_t device_block, uint32_t host_block,
                 uint32_t issue_step);

/* Node (kind, index) waits for node (on_kind, on_index); kinds are SFC_NODE_*. */
void pb_dep(pb_t *b, uint32_t kind, uint32_t index, uint32_t on_kind, uint32_t on_index);

/* tile_count = n * c * h * w. */
uint32_t pb_segment(pb_t *b, uint32_t first_step, uint32_t step_count, uint32_t first_op,
                    uint32_t op_count, uint32_t n, uint32_t c, uint32_t h, uint32_t w);
/* ndim 4 box [lo, hi) over N, C, H, W; pads zero. */
uint32_t pb_box(pb_t *b, uint32_t tensor, const int64_t lo[4], const int64_t hi[4]);

/* arena_bytes / host_arena_bytes = the end of the last block, rounded up to alignment. */
void pb_fit_arenas(pb_t *b);

/* Editable records; valid until the next add of the same kind. */
sfc_plan_header_t *pb_header(pb_t *b); /* only the fields the writer takes matter */
sfc_plan_meta_t *pb_meta(pb_t *b);
sfc_plan_tensor_t *pb_tensor_at(pb_t *b, uint32_t i);
sfc_plan_op_t *pb_op_at(pb_t *b, uint32_t i);
uint32_t *pb_op_operand_at(pb_t *b, uint32_t i);
sfc_plan_block_t *pb_block_at(pb_t *b, uint32_t i);
sfc_plan_block_t *pb_host_block_at(pb_t *b, uint32_t i);
sfc_plan_step_t *pb_step_at(pb_t *b, uint32_t i);
uint32_t *pb_step_operand_at(pb_t *b, uint32_t i);
sfc_plan_swap_t *pb_swap_at(pb_t *b, uint32_t i);
sfc_plan_dep_t *pb_dep_at(pb_t *b, uint32_t i); /* after pb_view */
sfc_plan_segment_t *pb_segment_at(pb_t *b, uint32_t i);
sfc_plan_box_t *pb_box_at(pb_t *b, uint32_t i);

/* The view over the builder's arrays (lays out DEPS on the first call). */
const sfc_plan_view_t *pb_view(pb_t *b);
void pb_write(pb_t *b, void **out_data, size_t *out_bytes); /* malloc'ed, caller frees */
void pb_write_file(pb_t *b, const char *path);

void pb_simple_chain(pb_t *b, uint32_t n);
void pb_example_full(pb_t *b);
void pb_example_tiled(pb_t *b);
void pb_example_paged(pb_t *b, uint64_t page);

/* File offset of the section table entry of `kind` in a written plan, 0 if none. */
size_t pb_file_entry(const uint8_t *data, size_t bytes, uint32_t kind);
/* Recomputes every section CRC the table can reach, the table CRC and the header CRC. */
void pb_recrc(uint8_t *data, size_t bytes);

#endif /* SFC_TEST_PLAN_BUILDER_H */
