/* plan_builder.c — the test-only plan builder (see plan_builder.h).
 *
 * One growable array per section; add functions append with defaults, accessors
 * hand out pointers for edits, pb_view lays out DEPS and points a view at the
 * arrays, pb_write hands it to sfc_plan_write_buffer. Aborts on misuse.
 */
#include "plan_builder.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "emit.h"

typedef struct pb_edge {
  uint32_t kind, index; /* the waiting node */
  sfc_plan_dep_t on;
} pb_edge_t;

#define ARRAY(type, name)                                                                          \
  type *name;                                                                                      \
  uint32_t name##_n, name##_cap

struct pb {
  sfc_plan_view_t view;
  sfc_plan_header_t header;
  sfc_plan_meta_t meta;
  char *strings;
  size_t strings_n, strings_cap;
  ARRAY(sfc_plan_tensor_t, tensors);
  ARRAY(sfc_plan_op_t, ops);
  ARRAY(uint32_t, op_operands);
  ARRAY(sfc_plan_block_t, blocks);
  ARRAY(sfc_plan_block_t, host_blocks);
  ARRAY(sfc_plan_step_t, steps);
  ARRAY(uint32_t, step_operands);
  ARRAY(sfc_plan_swap_t, swaps);
  ARRAY(sfc_plan_dep_t, deps);
  ARRAY(sfc_plan_segment_t, segments);
  ARRAY(sfc_plan_box_t, boxes);
  ARRAY(pb_edge_t, edges);
  int finished;
};

static void die(const char *what) {
  fprintf(stderr, "plan_builder: %s\n", what);
  abort();
}

/* Makes room for one more element of `size` bytes; returns its (zeroed) address. */
static void *grow(void **arr, uint32_t *n, uint32_t *cap, size_t size) {
  if (*n == *cap) {
    uint32_t ncap = *cap ? *cap * 2 : 16;
    void *p = realloc(*arr, (size_t)ncap * size);
    if (!p)
      die("out of memory");
    *arr = p;
    *cap = ncap;
  }
  void *slot = (char *)*arr + (size_t)(*n)++ * size;
  memset(slot, 0, size);
  return slot;
}
#define PUSH(b, name)                                                                              \
  ((__typeof__((b)->name))grow((void **)&(b)->name, &(b)->name##_n, &(b)->name##_cap,              \
                               sizeof *(b)->name))

static void *at(void *arr, uint32_t n, uint32_t i, size_t size) {
  if (i >= n)
    die("index out of range in a pb_*_at call");
  return (char *)arr + (size_t)i * size;
}

pb_t *pb_new(void) {
  pb_t *b = calloc(1, sizeof *b);
  if (!b)
    die("out of memory");
  pb_str(b, ""); /* offset 0 = "" */
  b->header.alignment = 64;
  b->meta.graph_name = pb_str(b, "test");
  b->meta.profile_name = pb_str(b, "test-device");
  b->meta.generator = pb_str(b, "plan_builder");
  b->meta.h2d_bytes_per_s = 25e9;
  b->meta.d2h_bytes_per_s = 25e9;
  b->meta.duplex_factor = 0.8;
  b->meta.copy_latency_s = 10e-6;
  b->meta.va_chunk_bytes = 2u << 20;
  return b;
}

void pb_free(pb_t *b) {
  if (!b)
    return;
  free(b->strings);
  free(b->tensors);
  free(b->ops);
  free(b->op_operands);
  free(b->blocks);
  free(b->host_blocks);
  free(b->steps);
  free(b->step_operands);
  free(b->swaps);
  free(b->deps);
  free(b->segments);
  free(b->boxes);
  free(b->edges);
  free(b);
}

uint32_t pb_str(pb_t *b, const char *s) {
  if (*s == '\0' && b->strings_n > 0)
    return 0;
  size_t len = strlen(s) + 1;
  if (b->strings_n + len > b->strings_cap) {
    size_t ncap = (b->strings_cap + len) * 2;
    char *p = realloc(b->strings, ncap);
    if (!p)
      die("out of memory");
    b->strings = p;
    b->strings_cap = ncap;
  }
  memcpy(b->strings + b->strings_n, s, len);
  b->strings_n += len;
  return (uint32_t)(b->strings_n - len);
}

uint32_t pb_tensor(pb_t *b, const char *name, uint64_t bytes, int kind) {
  uint32_t name_ref = pb_str(b, name);
  sfc_plan_tensor_t *t = PUSH(b, tensors);
  t->graph_id = b->tensors_n - 1;
  t->bytes = bytes;
  t->name = name_ref;
  t->kind = (uint8_t)kind;
  t->dtype = SFC_DTYPE_F32;
  t->ndim = 1;
  t->batch_axis = -1;
  t->shape[0] = (int64_t)(bytes / 4);
  if (kind == SFC_KIND_INPUT || kind == SFC_KIND_PARAM || kind == SFC_KIND_OPTIMIZER)
    t->flags = SFC_TENSOR_PERSISTENT;
  return b->tensors_n - 1;
}

uint32_t pb_op_temps(pb_t *b, const char *name, const uint32_t *in, uint32_t n_in,
                     const uint32_t *out, uint32_t n_out, const uint32_t *tmp, uint32_t n_tmp) {
  uint32_t name_ref = pb_str(b, name);
  sfc_plan_op_t *o = PUSH(b, ops);
  o->graph_id = b->ops_n - 1;
  o->name = o->type = name_ref;
  o->phase = SFC_PHASE_FORWARD;
  o->operand_begin = b->op_operands_n;
  o->input_count = (uint16_t)n_in;
  o->output_count = (uint16_t)n_out;
  o->temp_count = (uint16_t)n_tmp;
  o->backward_of = SFC_PLAN_NONE;
  o->time_us = 10.0;
  const uint32_t *lists[3] = {in, out, tmp};
  uint32_t counts[3] = {n_in, n_out, n_tmp};
  for (int l = 0; l < 3; l++)
    for (uint32_t i = 0; i < counts[l]; i++)
      *PUSH(b, op_operands) = lists[l][i];
  return b->ops_n - 1;
}

uint32_t pb_op(pb_t *b, const char *name, const uint32_t *in, uint32_t n_in, const uint32_t *out,
               uint32_t n_out) {
  return pb_op_temps(b, name, in, n_in, out, n_out, NULL, 0);
}

uint32_t pb_block(pb_t *b, uint32_t tensor, uint64_t offset, uint64_t bytes, uint32_t first,
                  uint32_t last, uint32_t flags) {
  *PUSH(b, blocks) = (sfc_plan_block_t){.offset = offset,
                                        .bytes = bytes,
                                        .tensor = tensor,
                                        .first_step = first,
                                        .last_step = last,
                                        .flags = flags};
  return b->blocks_n - 1;
}

uint32_t pb_host_block(pb_t *b, uint32_t tensor, uint64_t offset, uint64_t bytes, uint32_t first,
                       uint32_t last) {
  *PUSH(b, host_blocks) = (sfc_plan_block_t){
      .offset = offset, .bytes = bytes, .tensor = tensor, .first_step = first, .last_step = last};
  return b->host_blocks_n - 1;
}

uint32_t pb_step(pb_t *b, uint32_t op, const uint32_t *blocks, uint32_t n) {
  sfc_plan_step_t *s = PUSH(b, steps);
  s->op = op;
  s->segment = s->tile = s->box_begin = SFC_PLAN_NONE;
  s->operand_begin = b->step_operands_n;
  for (uint32_t i = 0; i < n; i++)
    *PUSH(b, step_operands) = blocks[i];
  return b->steps_n - 1;
}

void pb_step_tile(pb_t *b, uint32_t step, uint32_t segment, uint32_t tile, uint32_t box_begin) {
  sfc_plan_step_t *s = pb_step_at(b, step);
  s->segment = segment;
  s->tile = tile;
  s->box_begin = box_begin;
}

uint32_t pb_swap(pb_t *b, uint32_t direction, uint32_t device_block, uint32_t host_block,
                 uint32_t issue_step) {
  uint32_t tensor = pb_block_at(b, device_block)->tensor;
  uint64_t bytes = pb_tensor_at(b, tensor)->bytes;
  sfc_plan_swap_t *w = PUSH(b, swaps);
  w->bytes = bytes;
  w->tensor = tensor;
  w->device_block = device_block;
  w->host_block = host_block;
  w->issue_step = issue_step;
  w->direction = (uint8_t)direction;
  return b->swaps_n - 1;
}

void pb_dep(pb_t *b, uint32_t kind, uint32_t index, uint32_t on_kind, uint32_t on_index) {
  if (b->finished)
    die("pb_dep after pb_view: edit pb_dep_at instead");
  *PUSH(b, edges) = (pb_edge_t){kind, index, {on_kind, on_index}};
}

uint32_t pb_segment(pb_t *b, uint32_t first_step, uint32_t step_count, uint32_t first_op,
                    uint32_t op_count, uint32_t n, uint32_t c, uint32_t h, uint32_t w) {
  sfc_plan_segment_t *g = PUSH(b, segments);
  *g = (sfc_plan_segment_t){first_step, step_count,   first_op, op_count, n * c * h * w,
                            0,          {n, c, h, w}, 0,        0};
  return b->segments_n - 1;
}

uint32_t pb_box(pb_t *b, uint32_t tensor, const int64_t lo[4], const int64_t hi[4]) {
  sfc_plan_box_t *x = PUSH(b, boxes);
  x->tensor = tensor;
  x->ndim = 4;
  memcpy(x->lo, lo, sizeof x->lo);
  memcpy(x->hi, hi, sizeof x->hi);
  return b->boxes_n - 1;
}

void pb_fit_arenas(pb_t *b) {
  uint64_t a = b->header.alignment ? b->header.alignment : 1, dev = 0, host = 0;
  for (uint32_t i = 0; i < b->blocks_n; i++)
    if (b->blocks[i].offset + b->blocks[i].bytes > dev)
      dev = b->blocks[i].offset + b->blocks[i].bytes;
  for (uint32_t i = 0; i < b->host_blocks_n; i++)
    if (b->host_blocks[i].offset + b->host_blocks[i].bytes > host)
      host = b->host_blocks[i].offset + b->host_blocks[i].bytes;
  b->header.arena_bytes = (dev + a - 1) / a * a;
  b->header.host_arena_bytes = (host + a - 1) / a * a;
}

sfc_plan_header_t *pb_header(pb_t *b) {
  return &b->header;
}
sfc_plan_meta_t *pb_meta(pb_t *b) {
  return &b->meta;
}
#define ACCESSOR(type, fn, name)                                                                   \
  type *fn(pb_t *b, uint32_t i) {                                                                  \
    return at(b->name, b->name##_n, i, sizeof *b->name);                                           \
  }
ACCESSOR(sfc_plan_tensor_t, pb_tensor_at, tensors)
ACCESSOR(sfc_plan_op_t, pb_op_at, ops)
ACCESSOR(uint32_t, pb_op_operand_at, op_operands)
ACCESSOR(sfc_plan_block_t, pb_block_at, blocks)
ACCESSOR(sfc_plan_block_t, pb_host_block_at, host_blocks)
ACCESSOR(sfc_plan_step_t, pb_step_at, steps)
ACCESSOR(uint32_t, pb_step_operand_at, step_operands)
ACCESSOR(sfc_plan_swap_t, pb_swap_at, swaps)
ACCESSOR(sfc_plan_dep_t, pb_dep_at, deps)
ACCESSOR(sfc_plan_segment_t, pb_segment_at, segments)
ACCESSOR(sfc_plan_box_t, pb_box_at, boxes)

/* DEPS: every step's deps in step order, then every swap's, each in pb_dep order
 * (a counting sort of the edges by node: steps are nodes 0.., swaps follow). */
static void layout_deps(pb_t *b) {
  uint32_t nodes = b->steps_n + b->swaps_n;
  uint32_t *begin = calloc((size_t)nodes + 1, sizeof *begin);
  if (!begin)
    die("out of memory");
  for (uint32_t e = 0; e < b->edges_n; e++) {
    const pb_edge_t *x = &b->edges[e];
    uint32_t n = x->kind == SFC_NODE_STEP ? b->steps_n : b->swaps_n;
    if (x->index >= n)
      die("pb_dep names a step or swap that does not exist");
    begin[(x->kind == SFC_NODE_STEP ? 0 : b->steps_n) + x->index + 1]++;
  }
  for (uint32_t i = 0; i < nodes; i++)
    begin[i + 1] += begin[i];
  for (uint32_t e = 0; e < b->edges_n; e++)
    PUSH(b, deps);
  uint32_t *fill = calloc((size_t)nodes + 1, sizeof *fill);
  if (!fill)
    die("out of memory");
  for (uint32_t e = 0; e < b->edges_n; e++) {
    const pb_edge_t *x = &b->edges[e];
    uint32_t node = (x->kind == SFC_NODE_STEP ? 0 : b->steps_n) + x->index;
    b->deps[begin[node] + fill[node]++] = x->on;
  }
  for (uint32_t i = 0; i < nodes; i++) {
    uint32_t first = fill[i] ? begin[i] : 0;
    if (i < b->steps_n) {
      b->steps[i].dep_begin = first;
      b->steps[i].dep_count = fill[i];
    } else {
      b->swaps[i - b->steps_n].dep_begin = first;
      b->swaps[i - b->steps_n].dep_count = fill[i];
    }
  }
  free(fill);
  free(begin);
}

const sfc_plan_view_t *pb_view(pb_t *b) {
  if (!b->finished) {
    layout_deps(b);
    b->finished = 1;
  }
  sfc_plan_view_t *v = &b->view;
  v->header = b->header;
  v->meta = b->meta;
  v->strings = b->strings;
  v->strings_bytes = b->strings_n;
#define VIEW(name, count) (v->name = b->name, v->count = b->name##_n)
  VIEW(tensors, tensor_count);
  VIEW(ops, op_count);
  VIEW(op_operands, op_operand_count);
  VIEW(blocks, block_count);
  VIEW(host_blocks, host_block_count);
  VIEW(steps, step_count);
  VIEW(step_operands, step_operand_count);
  VIEW(swaps, swap_count);
  VIEW(deps, dep_count);
  VIEW(segments, segment_count);
  VIEW(boxes, box_count);
#undef VIEW
  return v;
}

void pb_write(pb_t *b, void **out_data, size_t *out_bytes) {
  sfc_error_t err;
  if (sfc_plan_write_buffer(pb_view(b), out_data, out_bytes, &err) != SFC_OK)
    die(err.message);
}

void pb_write_file(pb_t *b, const char *path) {
  sfc_error_t err;
  if (sfc_plan_write_file(pb_view(b), path, &err) != SFC_OK)
    die(err.message);
}
