/* pass_plan.c — lay the IR out as a plan view (sfc/plan_format.h).
 *
 * Builds every section from the IR, one function per section: a deduplicated string
 * table and META; tensors (SFC_TENSOR_UNUSED from liveness); ops with their operand
 * lists; device blocks (BLOCKS) and host staging blocks (HOST_BLOCKS), renumbered per
 * arena; steps with their predicted time (TIMED when known) and, for each use, the
 * device block holding that tensor (or that box of it) at that step; the boxes the
 * uses and partial blocks refer to; the schedule pass's swaps (SWAPS, in issue order:
 * by issue step, and within one step after the swaps of that step they depend on,
 * with BLOCKS/HOST_BLOCKS indices) and dependencies (DEPS: the swaps' in SWAPS order,
 * then the steps'). Segments come from the tiler and are empty until it lands. The view's arrays
 * live in the pool it is given; emit.c serialises the view and pass_verify.c checks
 * it. sfc_plan_view_build is also what the in-memory evaluator (evaluate.c) calls.
 *
 * Reads: graph, config, steps, uses, boxes, live, blocks, swaps, deps, arena_bytes,
 * host_arena_bytes, in_core_peak, lower_bound. Writes: plan.
 * O(strings + uses + blocks + steps + swaps + deps).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "passes.h"
#include "tiler.h"

/* ---- deduplicating string table ---------------------------------------------- */

typedef struct strtab {
  char *data;
  uint64_t bytes, capacity;
  uint32_t *slots; /* open addressing: offset + 1, 0 = empty */
  uint32_t n_slots, used;
} strtab_t;

static uint32_t hash_str(const char *s) {
  uint32_t h = 2166136261u; /* FNV-1a */
  while (*s)
    h = (h ^ (uint8_t)*s++) * 16777619u;
  return h;
}

static bool strtab_grow_slots(strtab_t *t) {
  uint32_t n = t->n_slots ? t->n_slots * 2 : 1024;
  uint32_t *slots = calloc(n, sizeof *slots);
  if (!slots)
    return false;
  for (uint32_t i = 0; i < t->n_slots; i++) {
    if (!t->slots[i])
      continue;
    uint32_t h = hash_str(t->data + t->slots[i] - 1) & (n - 1);
    while (slots[h])
      h = (h + 1) & (n - 1);
    slots[h] = t->slots[i];
  }
  free(t->slots);
  t->slots = slots;
  t->n_slots = n;
  return true;
}

/* Offset of s in the table (added if new), or UINT32_MAX on failure. */
static uint32_t strtab_add(strtab_t *t, const char *s) {
  if (!*s)
    return 0;
  if ((t->used + 1) * 2 > t->n_slots && !strtab_grow_slots(t))
    return UINT32_MAX;
  uint32_t h = hash_str(s) & (t->n_slots - 1);
  while (t->slots[h]) {
    if (strcmp(t->data + t->slots[h] - 1, s) == 0)
      return t->slots[h] - 1;
    h = (h + 1) & (t->n_slots - 1);
  }
  size_t len = strlen(s) + 1;
  if (t->bytes + len > SFC_PLAN_MAX_STRINGS_BYTES)
    return UINT32_MAX;
  if (t->bytes + len > t->capacity) {
    uint64_t cap = t->capacity ? t->capacity * 2 : 4096;
    while (cap < t->bytes + len)
      cap *= 2;
    char *d = realloc(t->data, cap);
    if (!d)
      return UINT32_MAX;
    t->data = d;
    t->capacity = cap;
  }
  uint32_t off = (uint32_t)t->bytes;
  memcpy(t->data + off, s, len);
  t->bytes += len;
  t->slots[h] = off + 1;
  t->used++;
  return off;
}

static void strtab_free(strtab_t *t) {
  free(t->data);
  free(t->slots);
}

/* ---- the sections ------------------------------------------------------------ */

typedef struct builder {
  const sfc_ir_t *ir;
  sfc_plan_view_t *v;
  sfc_pool_t *pool;
  strtab_t st;
  uint32_t *plan_index;   /* [n_blocks] index of an IR block in BLOCKS or HOST_BLOCKS */
  uint32_t *first;        /* device blocks of tensor t: by_tensor[first[t] .. first[t + 1]) */
  uint32_t *by_tensor;    /* IR block indices */
  sfc_plan_step_t *steps; /* the view's STEPS, for build_deps */
  sfc_plan_swap_t *swaps; /* the view's SWAPS, for build_deps */
  uint32_t *swap_order;   /* [n_swaps] SWAPS index -> IR swap */
  uint32_t *swap_index;   /* [n_swaps] IR swap -> SWAPS index */
} builder_t;

static sfc_status_t oom(sfc_error_t *err) {
  return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory building the plan");
}

static sfc_status_t build_meta(builder_t *b, sfc_error_t *err) {
  const sfc_graph_t *g = b->ir->graph;
  const sfc_config_t *cfg = b->ir->config;
  /* Offset 0 is the empty string. */
  b->st.data = malloc(4096);
  if (!b->st.data)
    return oom(err);
  b->st.data[0] = '\0';
  b->st.bytes = 1;
  b->st.capacity = 4096;
  uint32_t name = strtab_add(&b->st, g->name), prof = strtab_add(&b->st, cfg->device.name);
  uint32_t gen = strtab_add(&b->st, "sfc " SFC_VERSION_STRING);
  uint32_t dev = strtab_add(&b->st, g->device ? g->device : "");
  if (name == UINT32_MAX || prof == UINT32_MAX || gen == UINT32_MAX || dev == UINT32_MAX)
    return oom(err);
  b->v->meta = (sfc_plan_meta_t){.graph_name = name,
                                 .profile_name = prof,
                                 .generator = gen,
                                 .graph_op_count = g->n_ops,
                                 .graph_tensor_count = g->n_file_tensors,
                                 .in_core_peak_bytes = b->ir->in_core_peak,
                                 .lower_bound_bytes = b->ir->lower_bound,
                                 .h2d_bytes_per_s = cfg->device.h2d_bytes_per_s,
                                 .d2h_bytes_per_s = cfg->device.d2h_bytes_per_s,
                                 .duplex_factor = cfg->device.duplex_factor,
                                 .copy_latency_s = cfg->device.copy_latency_s,
                                 .va_chunk_bytes = cfg->device.va_chunk_bytes,
                                 .times_device = dev};
  return SFC_OK;
}

static sfc_status_t build_tensors(builder_t *b, sfc_error_t *err) {
  const sfc_graph_t *g = b->ir->graph;
  sfc_plan_tensor_t *tensors = sfc_pool_calloc(b->pool, g->n_tensors + 1u, sizeof *tensors);
  if (!tensors)
    return oom(err);
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    uint32_t s = strtab_add(&b->st, x->name);
    if (s == UINT32_MAX)
      return oom(err);
    tensors[t] = (sfc_plan_tensor_t){
        .graph_id = x->id,
        .bytes = x->bytes,
        .name = s,
        .kind = (uint8_t)x->kind,
        .dtype = (uint8_t)x->dtype,
        .ndim = x->ndim,
        .batch_axis = x->batch_axis,
        .flags = x->flags | (sfc_ir_tensor_unused(b->ir, t) ? SFC_TENSOR_UNUSED : 0)};
    memcpy(tensors[t].shape, x->shape, sizeof x->shape);
  }
  b->v->tensors = tensors;
  b->v->tensor_count = g->n_tensors;
  return SFC_OK;
}

static sfc_status_t build_ops(builder_t *b, sfc_error_t *err) {
  const sfc_graph_t *g = b->ir->graph;
  uint64_t n_operands = 0;
  for (uint32_t o = 0; o < g->n_ops; o++)
    n_operands += sfc_op_operand_count(&g->ops[o]);
  if (n_operands > SFC_PLAN_MAX_RECORDS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%llu operands exceed the plan limit",
                         (unsigned long long)n_operands);
  sfc_plan_op_t *ops = sfc_pool_calloc(b->pool, g->n_ops + 1u, sizeof *ops);
  uint32_t *op_operands = sfc_pool_calloc(b->pool, n_operands + 1, sizeof *op_operands);
  if (!ops || !op_operands)
    return oom(err);
  uint32_t k = 0;
  for (uint32_t o = 0; o < g->n_ops; o++) {
    const sfc_op_t *op = &g->ops[o];
    uint32_t sn = strtab_add(&b->st, op->name), sty = strtab_add(&b->st, op->type);
    if (sn == UINT32_MAX || sty == UINT32_MAX)
      return oom(err);
    ops[o] = (sfc_plan_op_t){.graph_id = op->id,
                             .name = sn,
                             .type = sty,
                             .phase = (uint8_t)op->phase,
                             .operand_begin = k,
                             .input_count = (uint16_t)op->n_inputs,
                             .output_count = (uint16_t)op->n_outputs,
                             .temp_count = op->workspace != SFC_PLAN_NONE ? 1 : 0,
                             .backward_of = op->backward_of,
                             .time_us = op->time_us,
                             .flops = op->flops};
    for (uint32_t i = 0, m = sfc_op_operand_count(op); i < m; i++)
      op_operands[k++] = sfc_op_operand(op, i);
  }
  /* the maps of the ops tiled segments run (1.5), which invariant 58 checks */
  for (uint32_t i = 0; i < b->ir->n_segments; i++) {
    const sfc_plan_segment_t *sg = &b->ir->segments[i];
    for (uint32_t o = sg->first_op; o - sg->first_op < sg->op_count && o < g->n_ops; o++)
      sfc_ft_op_map(g, o, &ops[o]);
  }
  b->v->ops = ops;
  b->v->op_count = g->n_ops;
  b->v->op_operands = op_operands;
  b->v->op_operand_count = k;
  return SFC_OK;
}

/* BLOCKS and HOST_BLOCKS in IR order within each arena, and an index of the device
 * blocks by tensor for the step operands. */
static sfc_status_t build_blocks(builder_t *b, sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  uint32_t nt = ir->graph->n_tensors, count[SFC_ARENA_COUNT] = {0};
  for (uint32_t i = 0; i < ir->n_blocks; i++)
    count[ir->blocks[i].arena]++;
  sfc_plan_block_t *out[SFC_ARENA_COUNT];
  for (int a = 0; a < SFC_ARENA_COUNT; a++)
    out[a] = sfc_pool_calloc(b->pool, count[a] + 1u, sizeof *out[a]);
  b->plan_index = sfc_pool_calloc(b->pool, ir->n_blocks + 1u, sizeof *b->plan_index);
  b->first = sfc_pool_calloc(b->pool, nt + 2u, sizeof *b->first);
  b->by_tensor = sfc_pool_calloc(b->pool, count[SFC_ARENA_DEVICE] + 1u, sizeof *b->by_tensor);
  if (!out[SFC_ARENA_DEVICE] || !out[SFC_ARENA_HOST] || !b->plan_index || !b->first ||
      !b->by_tensor)
    return oom(err);
  uint32_t at[SFC_ARENA_COUNT] = {0};
  for (uint32_t i = 0; i < ir->n_blocks; i++) {
    const sfc_block_t *x = &ir->blocks[i];
    b->plan_index[i] = at[x->arena];
    out[x->arena][at[x->arena]++] =
        (sfc_plan_block_t){.offset = x->offset,
                           .bytes = x->bytes,
                           .tensor = x->tensor,
                           .first_step = x->first_step,
                           .last_step = x->last_step,
                           .flags = x->flags,
                           .box = (x->flags & SFC_BLOCK_PARTIAL) ? x->box : 0};
    if (x->arena == SFC_ARENA_DEVICE)
      b->first[x->tensor + 2]++;
  }
  for (uint32_t t = 0; t < nt; t++)
    b->first[t + 2] += b->first[t + 1];
  for (uint32_t i = 0; i < ir->n_blocks; i++)
    if (ir->blocks[i].arena == SFC_ARENA_DEVICE)
      b->by_tensor[b->first[ir->blocks[i].tensor + 1]++] = i;
  b->v->blocks = out[SFC_ARENA_DEVICE];
  b->v->block_count = count[SFC_ARENA_DEVICE];
  b->v->host_blocks = out[SFC_ARENA_HOST];
  b->v->host_block_count = count[SFC_ARENA_HOST];
  return SFC_OK;
}

static bool box_inside(const sfc_plan_box_t *in, const sfc_plan_box_t *out) {
  for (uint32_t a = 0; a < in->ndim && a < SFC_PLAN_BOX_DIMS; a++)
    if (in->lo[a] < out->lo[a] || in->hi[a] > out->hi[a])
      return false;
  return true;
}

/* The device block (plan index) holding use u's tensor, or the part of it u's box names,
 * at step: a whole block, or a per-tile (PARTIAL) block whose box holds u's. */
static uint32_t find_block(const builder_t *b, const sfc_use_t *u, uint32_t step) {
  for (uint32_t k = b->first[u->tensor]; k < b->first[u->tensor + 1]; k++) {
    const sfc_block_t *x = &b->ir->blocks[b->by_tensor[k]];
    if (x->first_step > step || step > x->last_step)
      continue;
    if (!(x->flags & SFC_BLOCK_PARTIAL) ||
        (u->box != SFC_PLAN_NONE && box_inside(&b->ir->boxes[u->box], &b->ir->boxes[x->box])))
      return b->plan_index[b->by_tensor[k]];
  }
  return SFC_PLAN_NONE;
}

static sfc_status_t build_steps(builder_t *b, sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  const sfc_graph_t *g = ir->graph;
  sfc_plan_step_t *steps = sfc_pool_calloc(b->pool, ir->n_steps + 1u, sizeof *steps);
  uint32_t *step_operands = sfc_pool_calloc(b->pool, ir->n_uses + 1u, sizeof *step_operands);
  if (!steps || !step_operands)
    return oom(err);
  bool boxed = false;
  for (uint32_t s = 0; s < ir->n_steps; s++) {
    const sfc_step_t *x = &ir->steps[s];
    bool timed = x->time_us >= 0;
    steps[s] =
        (sfc_plan_step_t){.op = x->op,
                          .segment = x->segment,
                          .tile = x->tile,
                          .operand_begin = x->use_begin,
                          .box_begin = SFC_PLAN_NONE,
                          .flags = (timed ? SFC_STEP_TIMED : 0) | (x->flags & SFC_STEP_RECOMPUTE),
                          .time_us = timed ? x->time_us : 0};
    for (uint32_t k = 0; k < x->use_count; k++) {
      const sfc_use_t *u = &ir->uses[x->use_begin + k];
      uint32_t blk = find_block(b, u, s);
      if (blk == SFC_PLAN_NONE)
        return sfc_error_set(err, SFC_ERR_INTERNAL,
                             "step %u (op \"%s\"): tensor \"%s\" has no resident block", s,
                             g->ops[x->op].name, g->tensors[u->tensor].name);
      step_operands[x->use_begin + k] = blk;
      boxed = boxed || u->box != SFC_PLAN_NONE;
    }
  }
  if (boxed) /* the tiler writes a step's boxes as one run per operand */
    for (uint32_t s = 0; s < ir->n_steps; s++)
      if (ir->steps[s].use_count && ir->uses[ir->steps[s].use_begin].box != SFC_PLAN_NONE)
        steps[s].box_begin = ir->uses[ir->steps[s].use_begin].box;
  b->steps = steps;
  b->v->steps = steps;
  b->v->step_count = ir->n_steps;
  b->v->step_operands = step_operands;
  b->v->step_operand_count = ir->n_uses;
  b->v->boxes = ir->boxes;
  b->v->box_count = ir->n_boxes;
  b->v->segments = ir->segments;
  b->v->segment_count = ir->n_segments;
  return SFC_OK;
}

/* Orders the IR swaps group[0 .. n) (one issue step) so every dependency on another
 * swap of the group comes first: a depth-first search over those dependencies, in
 * IR order otherwise. state: 0 new, 1 on the path, 2 placed. */
static sfc_status_t order_group(builder_t *b, const uint32_t *group, uint32_t n, uint8_t *state,
                                uint32_t *stack, uint32_t *next_dep, uint32_t *out,
                                sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  uint32_t at = 0;
  for (uint32_t i = 0; i < n; i++) {
    if (state[group[i]])
      continue;
    uint32_t top = 0;
    stack[top++] = group[i];
    state[group[i]] = 1;
    next_dep[group[i]] = 0;
    while (top) {
      uint32_t x = stack[top - 1];
      const sfc_swap_t *w = &ir->swaps[x];
      if (next_dep[x] < w->dep_count) {
        const sfc_dep_t *d = &ir->deps[w->dep_begin + next_dep[x]++];
        if (d->kind != SFC_NODE_SWAP || ir->swaps[d->index].issue_step != w->issue_step ||
            state[d->index] == 2)
          continue;
        if (state[d->index] == 1)
          return sfc_error_set(err, SFC_ERR_INTERNAL,
                               "swaps issued before step %u depend on each other in a cycle",
                               w->issue_step);
        state[d->index] = 1;
        next_dep[d->index] = 0;
        stack[top++] = d->index;
      } else {
        state[x] = 2;
        out[at++] = x;
        top--;
      }
    }
  }
  return SFC_OK;
}

/* SWAPS in issue order: by issue_step, and within one issue step every swap after
 * the swaps of that step it depends on (plan_format.h); device and host blocks as
 * BLOCKS and HOST_BLOCKS indices. Dependency ranges come from build_deps. */
static sfc_status_t build_swaps(builder_t *b, sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  uint32_t n = ir->n_swaps, ns = ir->n_steps;
  sfc_plan_swap_t *swaps = sfc_pool_calloc(b->pool, n + 1u, sizeof *swaps);
  b->swap_order = sfc_pool_calloc(b->pool, n + 1u, sizeof *b->swap_order);
  b->swap_index = sfc_pool_calloc(b->pool, n + 1u, sizeof *b->swap_index);
  uint32_t *start = calloc((size_t)ns + 2, sizeof *start);
  uint32_t *sorted = malloc(((size_t)n + 1) * sizeof *sorted);
  uint32_t *scratch = malloc(((size_t)n + 1) * 2 * sizeof *scratch);
  uint8_t *state = calloc((size_t)n + 1, 1);
  sfc_status_t st = SFC_OK;
  if (!swaps || !b->swap_order || !b->swap_index || !start || !sorted || !scratch || !state) {
    st = oom(err);
    goto done;
  }
  for (uint32_t i = 0; i < n; i++) {
    const sfc_swap_t *w = &ir->swaps[i];
    if (w->issue_step > ns || w->device_block >= ir->n_blocks || w->host_block >= ir->n_blocks ||
        ir->blocks[w->device_block].arena != SFC_ARENA_DEVICE ||
        ir->blocks[w->host_block].arena != SFC_ARENA_HOST) {
      st = sfc_error_set(err, SFC_ERR_INTERNAL, "swap %u: bad issue step or blocks", i);
      goto done;
    }
    start[w->issue_step + 1]++;
  }
  for (uint32_t k = 0; k <= ns; k++)
    start[k + 1] += start[k];
  for (uint32_t i = 0; i < n; i++) /* stable: IR order within an issue step */
    sorted[start[ir->swaps[i].issue_step]++] = i;
  for (uint32_t i = 0, j; i < n && st == SFC_OK; i = j) {
    for (j = i + 1; j < n && ir->swaps[sorted[j]].issue_step == ir->swaps[sorted[i]].issue_step;)
      j++;
    st = order_group(b, sorted + i, j - i, state, scratch, scratch + n, b->swap_order + i, err);
  }
  for (uint32_t i = 0; i < n && st == SFC_OK; i++) {
    const sfc_swap_t *w = &ir->swaps[b->swap_order[i]];
    b->swap_index[b->swap_order[i]] = i;
    /* a swap copies its block's whole contents: the tensor (the tiler will add boxes) */
    swaps[i] = (sfc_plan_swap_t){.bytes = ir->graph->tensors[w->tensor].bytes,
                                 .tensor = w->tensor,
                                 .device_block = b->plan_index[w->device_block],
                                 .host_block = b->plan_index[w->host_block],
                                 .issue_step = w->issue_step,
                                 .direction = w->direction};
  }
  b->swaps = swaps;
  b->v->swaps = swaps;
  b->v->swap_count = n;
done:
  free(start);
  free(sorted);
  free(scratch);
  free(state);
  return st;
}

/* DEPS: each swap's dependencies in SWAPS order, then each step's; swap references
 * renumbered to SWAPS indices; the swaps' and steps' ranges. */
static sfc_status_t build_deps(builder_t *b, sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  uint64_t total = 0;
  for (uint32_t i = 0; i < ir->n_swaps; i++)
    total += ir->swaps[i].dep_count;
  for (uint32_t k = 0; k < ir->n_steps; k++)
    total += ir->steps[k].dep_count;
  if (total > SFC_PLAN_MAX_RECORDS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%llu dependencies exceed the plan limit",
                         (unsigned long long)total);
  sfc_plan_dep_t *deps = sfc_pool_calloc(b->pool, total + 1, sizeof *deps);
  if (!deps)
    return oom(err);
  uint32_t at = 0;
  for (uint32_t i = 0; i < ir->n_swaps + ir->n_steps; i++) {
    bool swap = i < ir->n_swaps;
    uint32_t begin, count;
    if (swap) {
      const sfc_swap_t *w = &ir->swaps[b->swap_order[i]];
      begin = w->dep_begin;
      count = w->dep_count;
      b->swaps[i].dep_begin = at;
      b->swaps[i].dep_count = count;
    } else {
      const sfc_step_t *x = &ir->steps[i - ir->n_swaps];
      begin = x->dep_begin;
      count = x->dep_count;
      b->steps[i - ir->n_swaps].dep_begin = count ? at : 0;
      b->steps[i - ir->n_swaps].dep_count = count;
    }
    for (uint32_t j = 0; j < count; j++) {
      const sfc_dep_t *d = &ir->deps[begin + j];
      bool to_swap = d->kind == SFC_NODE_SWAP;
      if (begin + j >= ir->n_deps || (to_swap ? d->index >= ir->n_swaps : d->index >= ir->n_steps))
        return sfc_error_set(err, SFC_ERR_INTERNAL, "dependency %u out of range", begin + j);
      deps[at++] = (sfc_plan_dep_t){.node_kind = d->kind,
                                    .index = to_swap ? b->swap_index[d->index] : d->index};
    }
  }
  b->v->deps = deps;
  b->v->dep_count = at;
  return SFC_OK;
}

/* The string table goes into the pool so the view owns nothing outside it; then the
 * header fields the writer takes from the view. */
static sfc_status_t build_header(builder_t *b, sfc_error_t *err) {
  const sfc_ir_t *ir = b->ir;
  const sfc_config_t *cfg = ir->config;
  sfc_plan_view_t *v = b->v;
  char *strings = sfc_pool_calloc(b->pool, b->st.bytes, 1);
  if (!strings)
    return oom(err);
  memcpy(strings, b->st.data, b->st.bytes);
  v->strings = strings;
  v->strings_bytes = b->st.bytes;
  v->header.version_major = SFC_PLAN_VERSION_MAJOR; /* what the writer writes: the */
  v->header.version_minor = SFC_PLAN_VERSION_MINOR; /* verifier's rules follow it */
  v->header.alignment = (uint32_t)cfg->device.alignment;
  v->header.arena_bytes = ir->arena_bytes;
  v->header.host_arena_bytes = ir->host_arena_bytes;
  v->header.budget_bytes = cfg->budget_bytes;
  v->header.host_budget_bytes = cfg->host.staging_budget_bytes;
  v->header.flags = ir->arena_bytes > cfg->budget_bytes ? SFC_PLAN_OVER_BUDGET : 0;
  if (sfc_ir_paged(ir)) { /* format 1.7: the budget holds the pages (invariants 14, 59) */
    uint64_t need = 0;
    SFC_TRY(sfc_ir_count_pages(ir, &need, err));
    v->meta.page_peak_bytes = need;
    v->meta.va_chunk_bytes = cfg->arena.page_bytes;
    v->header.flags = SFC_PLAN_PAGED | (need > cfg->budget_bytes ? SFC_PLAN_OVER_BUDGET : 0);
  }
  return SFC_OK;
}

sfc_status_t sfc_plan_view_build(const sfc_ir_t *ir, sfc_plan_view_t *view, sfc_pool_t *pool,
                                 sfc_error_t *err) {
  memset(view, 0, sizeof *view);
  builder_t b = {.ir = ir, .v = view, .pool = pool};
  sfc_status_t st = build_meta(&b, err);
  if (st == SFC_OK)
    st = build_tensors(&b, err);
  if (st == SFC_OK)
    st = build_ops(&b, err);
  if (st == SFC_OK)
    st = build_blocks(&b, err);
  if (st == SFC_OK)
    st = build_steps(&b, err);
  if (st == SFC_OK)
    st = build_swaps(&b, err);
  if (st == SFC_OK)
    st = build_deps(&b, err);
  if (st == SFC_OK)
    st = build_header(&b, err);
  strtab_free(&b.st);
  return st;
}

sfc_status_t sfc_pass_plan(sfc_ir_t *ir, sfc_error_t *err) {
  /* a graph within its limits (tensors up to 2^50 bytes each) can need a larger arena
   * than a plan records: the user's to shrink, not a compiler bug for the verifier */
  uint64_t top = ir->arena_bytes > ir->host_arena_bytes ? ir->arena_bytes : ir->host_arena_bytes;
  if (top > SFC_PLAN_MAX_ARENA_BYTES)
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "the plan needs a%s arena of %" PRIu64 " bytes, more than a plan records "
                         "(%" PRIu64 " bytes, 1 PiB)",
                         ir->arena_bytes >= ir->host_arena_bytes ? " device" : " host staging", top,
                         (uint64_t)SFC_PLAN_MAX_ARENA_BYTES);
  return sfc_plan_view_build(ir, &ir->plan, &ir->pool, err);
}
