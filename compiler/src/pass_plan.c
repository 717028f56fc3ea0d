/* pass_plan.c — lay the IR out as a plan view (sfc/plan_format.h).
 *
 * Builds every section from the IR: a deduplicated string table, tensors, ops with
 * their operand lists, device blocks, steps and, for each step operand, the device
 * block of that tensor resident at that step. Sections later passes fill (host
 * blocks, swaps, deps, segments, boxes) come from the IR when present and are
 * empty otherwise. The view's arrays live in the IR's pool; emit.c serialises the
 * view and pass_verify.c checks it.
 *
 * Reads: graph, config, steps, blocks, arena_bytes, in_core_peak, lower_bound.
 * Writes: plan. O(strings + operands + blocks log blocks).
 */
#include <stdlib.h>
#include <string.h>

#include "passes.h"

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

/* ---- the pass ---------------------------------------------------------------- */

static sfc_status_t oom(sfc_error_t *err) {
  return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory building the plan");
}

/* Blocks of tensor t are blocks[by_tensor[first[t]] .. by_tensor[first[t+1]]). */
static uint32_t find_block(const sfc_ir_t *ir, const uint32_t *by_tensor, const uint32_t *first,
                           uint32_t t, uint32_t step) {
  for (uint32_t k = first[t]; k < first[t + 1]; k++) {
    const sfc_block_t *b = &ir->blocks[by_tensor[k]];
    if (b->first_step <= step && step <= b->last_step)
      return by_tensor[k];
  }
  return SFC_PLAN_NONE;
}

static sfc_status_t build(sfc_ir_t *ir, strtab_t *st, sfc_error_t *err) {
  const sfc_graph_t *g = ir->graph;
  const sfc_config_t *cfg = ir->config;
  sfc_plan_view_t *v = &ir->plan;
  sfc_pool_t *pool = &ir->pool;
  memset(v, 0, sizeof *v);
  /* Offset 0 is the empty string. */
  st->data = malloc(4096);
  if (!st->data)
    return oom(err);
  st->data[0] = '\0';
  st->bytes = 1;
  st->capacity = 4096;

  /* meta */
  uint32_t name = strtab_add(st, g->name), prof = strtab_add(st, cfg->device.name);
  uint32_t gen = strtab_add(st, "sfc " SFC_VERSION_STRING);
  if (name == UINT32_MAX || prof == UINT32_MAX || gen == UINT32_MAX)
    return oom(err);
  v->meta = (sfc_plan_meta_t){.graph_name = name,
                              .profile_name = prof,
                              .generator = gen,
                              .graph_op_count = g->n_ops,
                              .graph_tensor_count = g->n_file_tensors,
                              .in_core_peak_bytes = ir->in_core_peak,
                              .lower_bound_bytes = ir->lower_bound,
                              .h2d_bytes_per_s = cfg->device.h2d_bytes_per_s,
                              .d2h_bytes_per_s = cfg->device.d2h_bytes_per_s,
                              .duplex_factor = cfg->device.duplex_factor,
                              .copy_latency_s = cfg->device.copy_latency_s,
                              .va_chunk_bytes = cfg->device.va_chunk_bytes};

  /* tensors */
  sfc_plan_tensor_t *tensors = sfc_pool_calloc(pool, g->n_tensors + 1u, sizeof *tensors);
  if (!tensors)
    return oom(err);
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    uint32_t s = strtab_add(st, x->name);
    if (s == UINT32_MAX)
      return oom(err);
    tensors[t] = (sfc_plan_tensor_t){.graph_id = x->id,
                                     .bytes = x->bytes,
                                     .name = s,
                                     .kind = (uint8_t)x->kind,
                                     .dtype = (uint8_t)x->dtype,
                                     .ndim = x->ndim,
                                     .batch_axis = x->batch_axis,
                                     .flags = x->flags};
    memcpy(tensors[t].shape, x->shape, sizeof x->shape);
  }
  v->tensors = tensors;
  v->tensor_count = g->n_tensors;

  /* ops and their operands */
  uint64_t n_operands = 0;
  for (uint32_t o = 0; o < g->n_ops; o++)
    n_operands += sfc_op_operand_count(&g->ops[o]);
  if (n_operands > SFC_PLAN_MAX_RECORDS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%llu operands exceed the plan limit",
                         (unsigned long long)n_operands);
  sfc_plan_op_t *ops = sfc_pool_calloc(pool, g->n_ops + 1u, sizeof *ops);
  uint32_t *op_operands = sfc_pool_calloc(pool, n_operands + 1, sizeof *op_operands);
  if (!ops || !op_operands)
    return oom(err);
  uint32_t k = 0;
  for (uint32_t o = 0; o < g->n_ops; o++) {
    const sfc_op_t *op = &g->ops[o];
    uint32_t sn = strtab_add(st, op->name), sty = strtab_add(st, op->type);
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
  v->ops = ops;
  v->op_count = g->n_ops;
  v->op_operands = op_operands;
  v->op_operand_count = k;

  /* device blocks, and an index of them by tensor */
  sfc_plan_block_t *blocks = sfc_pool_calloc(pool, ir->n_blocks + 1u, sizeof *blocks);
  uint32_t *first = sfc_pool_calloc(pool, g->n_tensors + 2u, sizeof *first);
  uint32_t *by_tensor = sfc_pool_calloc(pool, ir->n_blocks + 1u, sizeof *by_tensor);
  if (!blocks || !first || !by_tensor)
    return oom(err);
  for (uint32_t b = 0; b < ir->n_blocks; b++) {
    const sfc_block_t *x = &ir->blocks[b];
    blocks[b] = (sfc_plan_block_t){.offset = x->offset,
                                   .bytes = x->bytes,
                                   .tensor = x->tensor,
                                   .first_step = x->first_step,
                                   .last_step = x->last_step,
                                   .flags = x->flags};
    first[x->tensor + 2]++;
  }
  for (uint32_t t = 0; t < g->n_tensors; t++)
    first[t + 2] += first[t + 1];
  for (uint32_t b = 0; b < ir->n_blocks; b++)
    by_tensor[first[ir->blocks[b].tensor + 1]++] = b;
  v->blocks = blocks;
  v->block_count = ir->n_blocks;

  /* steps and the block each step operand uses */
  uint64_t n_step_operands = 0;
  for (uint32_t s = 0; s < ir->n_steps; s++)
    n_step_operands += sfc_op_operand_count(&g->ops[ir->steps[s].op]);
  if (n_step_operands > SFC_PLAN_MAX_RECORDS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%llu step operands exceed the plan limit",
                         (unsigned long long)n_step_operands);
  sfc_plan_step_t *steps = sfc_pool_calloc(pool, ir->n_steps + 1u, sizeof *steps);
  uint32_t *step_operands = sfc_pool_calloc(pool, n_step_operands + 1, sizeof *step_operands);
  if (!steps || !step_operands)
    return oom(err);
  k = 0;
  for (uint32_t s = 0; s < ir->n_steps; s++) {
    const sfc_step_t *x = &ir->steps[s];
    const sfc_op_t *op = &g->ops[x->op];
    steps[s] = (sfc_plan_step_t){.op = x->op,
                                 .segment = x->segment,
                                 .tile = x->tile,
                                 .operand_begin = k,
                                 .box_begin = SFC_PLAN_NONE};
    for (uint32_t i = 0, m = sfc_op_operand_count(op); i < m; i++) {
      uint32_t t = sfc_op_operand(op, i);
      uint32_t b = find_block(ir, by_tensor, first, t, s);
      if (b == SFC_PLAN_NONE)
        return sfc_error_set(err, SFC_ERR_INTERNAL,
                             "step %u (op \"%s\"): tensor \"%s\" has no resident block", s,
                             op->name, g->tensors[t].name);
      step_operands[k++] = b;
    }
  }
  v->steps = steps;
  v->step_count = ir->n_steps;
  v->step_operands = step_operands;
  v->step_operand_count = k;

  /* strings: copy the table into the pool so the view owns nothing outside it */
  char *strings = sfc_pool_calloc(pool, st->bytes, 1);
  if (!strings)
    return oom(err);
  memcpy(strings, st->data, st->bytes);
  v->strings = strings;
  v->strings_bytes = st->bytes;

  /* header fields the writer takes from the view */
  v->header.alignment = (uint32_t)cfg->device.alignment;
  v->header.arena_bytes = ir->arena_bytes;
  v->header.host_arena_bytes = 0;
  v->header.budget_bytes = cfg->budget_bytes;
  v->header.host_budget_bytes = cfg->host.staging_budget_bytes;
  v->header.flags = ir->arena_bytes > cfg->budget_bytes ? SFC_PLAN_OVER_BUDGET : 0;
  return SFC_OK;
}

sfc_status_t sfc_pass_plan(sfc_ir_t *ir, sfc_error_t *err) {
  strtab_t st = {0};
  sfc_status_t s = build(ir, &st, err);
  strtab_free(&st);
  return s;
}
