/* session.c — sfcrt session life cycle: options, the device registry, create (every
 * table the replay needs, the device, its arenas), bind, stats and destroy.
 *
 * Creation does all the work the pull loop (interp.c) must not: resolve one pointer
 * per step operand (arena base + offset, or the device's virtual address), one copy
 * record per swap, mark the events some other queue waits on, and compute the
 * plan's device peak (a sweep over block step ranges). O(blocks + steps + operands
 * + deps) time and memory; every allocation goes through the session's allocator
 * and every failure path frees what was allocated (tests/runtime/test_rt_alloc.c).
 */
#include <stdbool.h>
#include <string.h>

#include "interp.h"
#include "sfc/steps.h"

void sfcrt_options_init(sfcrt_options_t *opt) {
  if (!opt)
    return;
  memset(opt, 0, sizeof *opt);
  opt->device = "host";
  opt->cuda.mode = SFCRT_CUDA_ARENA;
  opt->sim.copy_latency_s = -1; /* the plan's */
}

const sfcrt_device_ops_t *sfcrt_device_find(const char *name) {
  static const sfcrt_device_ops_t *const registry[] = {
    &sfcrt_device_host,
    &sfcrt_device_sim,
#if defined(SFC_HAVE_CUDA) && SFC_HAVE_CUDA
    &sfcrt_device_cuda,
#endif
  };
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (strcmp(registry[i]->name, name) == 0)
      return registry[i];
  return NULL;
}

/* Allocates a zeroed table of count entries (at least one, so a NULL result always
 * means out of memory). */
static void *table_new(const sfc_allocator_t *a, size_t count, size_t size) {
  return sfc_calloc(a, count ? count : 1, size);
}

static void table_free(const sfc_allocator_t *a, void *p, size_t count, size_t size) {
  sfc_free(a, p, (count ? count : 1) * size);
}

void sfcrt_session_destroy(sfcrt_session_t *s) {
  if (!s)
    return;
  const sfc_allocator_t *a = s->alloc;
  const sfc_plan_view_t *v = s->plan;
  if (s->dev && s->self)
    s->dev->destroy(s->self);
  table_free(a, s->operand_ptrs, v->step_operand_count, sizeof(void *));
  table_free(a, s->operand_held, v->step_operand_count, sizeof(const sfc_plan_box_t *));
  table_free(a, s->operand_acc, v->step_operand_count, 1);
  table_free(a, s->copies, v->swap_count, sizeof(sfcrt_copy_t));
  table_free(a, s->event_needed, (size_t)v->step_count + v->swap_count, 1);
  table_free(a, s->unbound, v->tensor_count, 1);
  sfc_free(a, s, sizeof *s);
}

static sfcrt_queue_t dep_queue(const sfc_plan_view_t *v, const sfc_plan_dep_t *d) {
  return d->node_kind == SFC_NODE_STEP ? SFCRT_QUEUE_COMPUTE
                                       : sfcrt_swap_queue(&v->swaps[d->index]);
}

static void mark_events(sfcrt_session_t *s, sfcrt_queue_t q, uint32_t begin, uint32_t count) {
  const sfc_plan_view_t *v = s->plan;
  for (uint32_t i = begin; i < begin + count; i++) {
    const sfc_plan_dep_t *d = &v->deps[i];
    if (dep_queue(v, d) != q)
      s->event_needed[d->node_kind == SFC_NODE_STEP ? d->index : v->step_count + d->index] = 1;
  }
}

/* Max over steps of the bytes of device blocks live at that step (external blocks
 * excluded: they are the framework's memory). */
static sfc_status_t compute_peak(sfcrt_session_t *s, sfc_error_t *err) {
  const sfc_plan_view_t *v = s->plan;
  size_t n = (size_t)v->step_count + 1;
  int64_t *diff = table_new(s->alloc, n, sizeof *diff);
  if (!diff)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "session: out of memory (peak sweep)");
  for (uint32_t b = 0; b < v->block_count && v->step_count > 0; b++) {
    const sfc_plan_block_t *blk = &v->blocks[b];
    if (blk->flags & SFC_BLOCK_EXTERNAL)
      continue;
    bool whole = blk->flags & SFC_BLOCK_PERSISTENT; /* the loader checked the ranges */
    sfc_sweep_add(diff, whole ? 0 : blk->first_step, whole ? v->step_count - 1 : blk->last_step,
                  blk->bytes);
  }
  s->peak_device_bytes = sfc_sweep_peak(diff, v->step_count, NULL);
  table_free(s->alloc, diff, n, sizeof *diff);
  return SFC_OK;
}

/* For tiled steps: the part of its tensor each operand's memory holds (a PARTIAL
 * block's box), and which outputs accumulate (1.2: an output of a BACKWARD segment's
 * step in a whole block; 2 for the segment's first step writing that tensor, which
 * zeroes it first). */
static sfc_status_t tile_tables(sfcrt_session_t *s, sfc_error_t *err) {
  const sfc_plan_view_t *v = s->plan;
  uint32_t *acc = table_new(s->alloc, v->tensor_count, sizeof *acc);
  if (!acc)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "session: out of memory (tile tables)");
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *ps = &v->steps[k];
    const sfc_plan_op_t *op = &v->ops[ps->op];
    uint32_t n = (uint32_t)op->input_count + op->output_count + op->temp_count;
    bool backward =
        ps->segment != SFC_PLAN_NONE && (v->segments[ps->segment].flags & SFC_SEGMENT_BACKWARD);
    for (uint32_t j = 0; j < n; j++) {
      uint32_t i = ps->operand_begin + j;
      const sfc_plan_block_t *b = &v->blocks[v->step_operands[i]];
      bool partial = b->flags & SFC_BLOCK_PARTIAL;
      s->operand_held[i] = partial ? &v->boxes[b->box] : NULL;
      if (backward && !partial && j >= op->input_count &&
          j < (uint32_t)op->input_count + op->output_count) {
        uint32_t t = v->op_operands[op->operand_begin + j];
        s->operand_acc[i] = acc[t] == ps->segment + 1 ? SFCRT_ACCUMULATE : SFCRT_ACCUMULATE_FIRST;
        acc[t] = ps->segment + 1;
      }
    }
  }
  table_free(s->alloc, acc, v->tensor_count, sizeof *acc);
  return SFC_OK;
}

static sfc_status_t session_build(sfcrt_session_t *s, sfc_error_t *err) {
  const sfc_plan_view_t *v = s->plan;
  const sfc_allocator_t *a = s->alloc;
  s->operand_ptrs = table_new(a, v->step_operand_count, sizeof(void *));
  s->copies = table_new(a, v->swap_count, sizeof(sfcrt_copy_t));
  s->event_needed = table_new(a, (size_t)v->step_count + v->swap_count, 1);
  s->unbound = table_new(a, v->tensor_count, 1);
  s->operand_held = table_new(a, v->step_operand_count, sizeof(const sfc_plan_box_t *));
  s->operand_acc = table_new(a, v->step_operand_count, 1);
  if (!s->operand_ptrs || !s->copies || !s->event_needed || !s->unbound || !s->operand_held ||
      !s->operand_acc)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "session: out of memory (replay tables)");
  SFC_TRY(tile_tables(s, err));

  for (uint32_t k = 0; k < v->step_count; k++)
    mark_events(s, SFCRT_QUEUE_COMPUTE, v->steps[k].dep_begin, v->steps[k].dep_count);
  for (uint32_t i = 0; i < v->swap_count; i++)
    mark_events(s, sfcrt_swap_queue(&v->swaps[i]), v->swaps[i].dep_begin, v->swaps[i].dep_count);
  for (uint32_t b = 0; b < v->block_count && s->dev != &sfcrt_device_sim; b++)
    if ((v->blocks[b].flags & SFC_BLOCK_EXTERNAL) && !s->unbound[v->blocks[b].tensor]) {
      s->unbound[v->blocks[b].tensor] = 1;
      s->unbound_count++;
    }
  SFC_TRY(compute_peak(s, err));

  sfcrt_device_config_t cfg = {v, a, &s->options, v->step_count + v->swap_count};
  SFC_TRY(s->dev->create(&cfg, &s->self, err));
  SFC_TRY(s->dev->arena_alloc(s->self, v->header.arena_bytes, v->header.alignment, err));
  SFC_TRY(s->dev->host_alloc(s->self, v->header.host_arena_bytes, err));

  for (uint32_t i = 0; i < v->step_operand_count; i++) {
    uint32_t b = v->step_operands[i];
    s->operand_ptrs[i] =
        (v->blocks[b].flags & SFC_BLOCK_EXTERNAL) ? NULL : s->dev->block_address(s->self, b);
  }
  for (uint32_t i = 0; i < v->swap_count; i++) {
    const sfc_plan_swap_t *sw = &v->swaps[i];
    sfcrt_copy_t *c = &s->copies[i];
    c->swap = i;
    c->tensor = sw->tensor;
    c->device_block = sw->device_block;
    c->host_block = sw->host_block;
    c->direction = sw->direction;
    c->bytes = sw->bytes;
    c->device_ptr = (v->blocks[sw->device_block].flags & SFC_BLOCK_EXTERNAL)
                        ? NULL
                        : s->dev->block_address(s->self, sw->device_block);
    c->host_ptr = s->dev->host_block_address(s->self, sw->host_block);
  }
  s->stats.arena_bytes = v->header.arena_bytes;
  s->stats.host_arena_bytes = v->header.host_arena_bytes;
  return SFC_OK;
}

sfc_status_t sfcrt_session_create_view(const sfc_plan_view_t *view, const sfcrt_options_t *opt,
                                       sfcrt_session_t **out_session, sfc_error_t *err) {
  sfc_error_t local;
  if (!err)
    err = &local;
  sfc_error_clear(err);
  if (!out_session)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "session_create: out_session is NULL");
  *out_session = NULL;
  if (!view)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "session_create: plan is NULL");
  sfcrt_options_t o;
  if (opt)
    o = *opt;
  else
    sfcrt_options_init(&o);
  if (!o.device)
    o.device = "host";
  const sfcrt_device_ops_t *dev = sfcrt_device_find(o.device);
  if (!dev) {
    if (strcmp(o.device, "cuda") == 0)
      return sfc_error_set(err, SFC_ERR_UNAVAILABLE,
                           "session_create: device 'cuda' is not built into this library "
                           "(cuda.h was not found at build time)");
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "session_create: unknown device '%s' (expected host, sim or cuda)",
                         o.device);
  }
  o.device = dev->name; /* the caller's string may go away */
  sfcrt_session_t *s = sfc_calloc(o.alloc, 1, sizeof *s);
  if (!s)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "session_create: out of memory");
  s->plan = view;
  s->alloc = o.alloc;
  s->options = o;
  s->dev = dev;
  sfc_status_t st = session_build(s, err);
  if (st != SFC_OK) {
    sfcrt_session_destroy(s);
    return st;
  }
  *out_session = s;
  return SFC_OK;
}

sfc_status_t sfcrt_session_create(const sfcrt_plan_t *plan, const sfcrt_options_t *opt,
                                  sfcrt_session_t **out_session, sfc_error_t *err) {
  return sfcrt_session_create_view(plan ? sfcrt_plan_view(plan) : NULL, opt, out_session, err);
}

sfc_status_t sfcrt_session_bind(sfcrt_session_t *s, uint32_t tensor, void *ptr, uint64_t bytes,
                                sfc_error_t *err) {
  sfc_error_t local;
  if (!err)
    err = &local;
  sfc_error_clear(err);
  if (!s)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "bind: session is NULL");
  if (s->state == SFCRT_STATE_FAILED) {
    *err = s->failure;
    return s->failure.status;
  }
  if (s->state != SFCRT_STATE_IDLE)
    return sfc_error_set(err, SFC_ERR_STATE, "bind: an iteration is running");
  const sfc_plan_view_t *v = s->plan;
  if (tensor >= v->tensor_count)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "bind: tensor %u out of range (%u tensors)",
                         tensor, v->tensor_count);
  const sfc_plan_tensor_t *t = &v->tensors[tensor];
  const char *name = sfc_plan_string(v, t->name);
  if (!(t->flags & SFC_TENSOR_EXTERNAL))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "bind: tensor %u '%s' is not external (the plan places it in the arena)",
                         tensor, name);
  if (!ptr)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "bind: tensor %u '%s': pointer is NULL",
                         tensor, name);
  if (bytes < t->bytes)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "bind: tensor %u '%s' needs %llu bytes, got %llu", tensor, name,
                         (unsigned long long)t->bytes, (unsigned long long)bytes);
  for (uint32_t i = 0; i < v->step_operand_count; i++) {
    const sfc_plan_block_t *b = &v->blocks[v->step_operands[i]];
    if (b->tensor == tensor && (b->flags & SFC_BLOCK_EXTERNAL))
      s->operand_ptrs[i] = ptr;
  }
  for (uint32_t i = 0; i < v->swap_count; i++) {
    const sfc_plan_block_t *b = &v->blocks[v->swaps[i].device_block];
    if (b->tensor == tensor && (b->flags & SFC_BLOCK_EXTERNAL))
      s->copies[i].device_ptr = ptr;
  }
  if (s->unbound[tensor]) {
    s->unbound[tensor] = 0;
    s->unbound_count--;
  }
  return SFC_OK;
}

sfc_status_t sfcrt_session_home(sfcrt_session_t *s, uint32_t tensor, void **out_ptr, int *out_where,
                                sfc_error_t *err) {
  sfc_error_t local;
  if (!err)
    err = &local;
  sfc_error_clear(err);
  if (out_ptr)
    *out_ptr = NULL;
  if (!s || !out_ptr || !out_where)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "home: session or output is NULL");
  if (s->state == SFCRT_STATE_FAILED) {
    *err = s->failure;
    return s->failure.status;
  }
  if (s->state != SFCRT_STATE_IDLE)
    return sfc_error_set(err, SFC_ERR_STATE, "home: an iteration is running");
  const sfc_plan_view_t *v = s->plan;
  if (tensor >= v->tensor_count)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "home: tensor %u out of range (%u tensors)",
                         tensor, v->tensor_count);
  const sfc_plan_tensor_t *t = &v->tensors[tensor];
  const char *name = sfc_plan_string(v, t->name);
  if (!(t->flags & SFC_TENSOR_PERSISTENT) || (t->flags & SFC_TENSOR_EXTERNAL))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "home: tensor %u '%s' is %s: only a persistent tensor placed by the plan "
                         "has a home",
                         tensor, name,
                         (t->flags & SFC_TENSOR_EXTERNAL) ? "external (bound to framework memory)"
                                                          : "not persistent");
  for (uint32_t h = 0; h < v->host_block_count; h++)
    if (v->host_blocks[h].tensor == tensor && (v->host_blocks[h].flags & SFC_BLOCK_PERSISTENT)) {
      *out_ptr = s->dev->host_block_address(s->self, h);
      *out_where = SFCRT_HOME_HOST;
      return SFC_OK;
    }
  for (uint32_t b = 0; b < v->block_count; b++)
    if (v->blocks[b].tensor == tensor && (v->blocks[b].flags & SFC_BLOCK_PERSISTENT)) {
      *out_ptr = s->dev->block_address(s->self, b);
      *out_where = SFCRT_HOME_DEVICE;
      return SFC_OK;
    }
  return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                       "home: tensor %u '%s' has no block (no step uses it)", tensor, name);
}

uint32_t sfcrt_session_find_tensor(const sfcrt_session_t *s, const char *name) {
  if (!s || !name)
    return SFC_PLAN_NONE;
  for (uint32_t t = 0; t < s->plan->tensor_count; t++)
    if (strcmp(sfc_plan_string(s->plan, s->plan->tensors[t].name), name) == 0)
      return t;
  return SFC_PLAN_NONE;
}

void sfcrt_session_stats(const sfcrt_session_t *s, sfcrt_stats_t *stats) {
  if (!stats)
    return;
  memset(stats, 0, sizeof *stats);
  if (!s)
    return;
  *stats = s->stats;
  stats->peak_device_bytes = s->peak_device_bytes;
  stats->step_count = s->plan->step_count;
  stats->swap_count = s->plan->swap_count;
  if (s->dev->stats && s->self)
    s->dev->stats(s->self, stats);
}

const char *sfcrt_session_device(const sfcrt_session_t *s) {
  return s ? s->dev->name : "";
}
