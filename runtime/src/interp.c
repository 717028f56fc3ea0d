/* interp.c — the plan interpreter: the per-iteration pull loop of sfcrt.h.
 *
 * Algorithm (docs/plan-format.md "Steps, issue order and dependencies"; seed
 * out-of-core-window-scheduling §4): walk the plan in issue order. Before step k,
 * issue every swap whose issue_step is k (SWAPS is sorted by issue_step, so one
 * cursor suffices): make its copy queue wait on the events of its dependencies,
 * enqueue the copy, record its event. Then make the compute queue wait on the
 * step's dependencies and hand the step to the framework; on step_done record the
 * step's event. After the last step, issue the swaps due "at the end"; iteration_end
 * synchronises the device once.
 *
 * Event discipline: a dependency on a node of the same queue is skipped (a queue
 * completes in issue order), and an event is recorded only when a node on another
 * queue waits for it (event_needed, computed once at session creation). So a block
 * is reused only after what the plan's DEPS say touched its previous occupant has
 * completed, and never through a device-wide synchronisation inside an iteration.
 *
 * Cost per step: O(deps) device calls and a few stores; no allocation, no search.
 */
#include "interp.h"

#include <string.h>

static sfc_status_t fail(sfcrt_session_t *s, sfc_status_t st, sfc_error_t *err) {
  /* The device wrote err; keep it so every later call reports the same failure. */
  if (err->status == SFC_OK || err->message[0] == '\0')
    sfc_error_set(err, st, "device %s failed without a message", s->dev->name);
  err->status = st;
  s->failure = *err;
  s->state = SFCRT_STATE_FAILED;
  return st;
}

/* Every entry point starts here: a scratch error when the caller passed none, and
 * the saved failure of a failed session. */
#define ENTER(s, err, local)                                                                       \
  do {                                                                                             \
    if (!(err))                                                                                    \
      (err) = &(local);                                                                            \
    sfc_error_clear(err);                                                                          \
    if (!(s))                                                                                      \
      return sfc_error_set((err), SFC_ERR_INVALID_ARGUMENT, "session is NULL");                    \
    if ((s)->state == SFCRT_STATE_FAILED) {                                                        \
      *(err) = (s)->failure;                                                                       \
      return (s)->failure.status;                                                                  \
    }                                                                                              \
  } while (0)

static sfcrt_queue_t node_queue(const sfc_plan_view_t *v, const sfc_plan_dep_t *d) {
  return d->node_kind == SFC_NODE_STEP ? SFCRT_QUEUE_COMPUTE
                                       : sfcrt_swap_queue(&v->swaps[d->index]);
}

static uint32_t node_event(const sfc_plan_view_t *v, const sfc_plan_dep_t *d) {
  return d->node_kind == SFC_NODE_STEP ? d->index : v->step_count + d->index;
}

/* Makes queue q wait for every dependency in DEPS[begin, begin + count) that runs
 * on another queue. */
static sfc_status_t wait_deps(sfcrt_session_t *s, sfcrt_queue_t q, uint32_t begin, uint32_t count,
                              sfc_error_t *err) {
  const sfc_plan_view_t *v = s->plan;
  for (uint32_t i = begin; i < begin + count; i++) {
    const sfc_plan_dep_t *d = &v->deps[i];
    if (node_queue(v, d) == q)
      continue;
    sfc_status_t st = s->dev->queue_wait(s->self, q, node_event(v, d), err);
    if (st != SFC_OK)
      return st;
  }
  return SFC_OK;
}

/* Issues every swap due before step k (k == step_count: at the end). */
static sfc_status_t issue_swaps(sfcrt_session_t *s, uint32_t k, sfc_error_t *err) {
  const sfc_plan_view_t *v = s->plan;
  while (s->next_swap < v->swap_count && v->swaps[s->next_swap].issue_step == k) {
    uint32_t i = s->next_swap++;
    const sfc_plan_swap_t *sw = &v->swaps[i];
    sfcrt_queue_t q = sfcrt_swap_queue(sw);
    SFC_TRY(wait_deps(s, q, sw->dep_begin, sw->dep_count, err));
    SFC_TRY(s->dev->copy(s->self, q, &s->copies[i], err));
    if (s->event_needed[v->step_count + i])
      SFC_TRY(s->dev->event_record(s->self, q, v->step_count + i, err));
    if (sw->direction == SFC_SWAP_IN) {
      s->stats.swaps_in++;
      s->stats.bytes_swapped_in += sw->bytes;
    } else {
      s->stats.swaps_out++;
      s->stats.bytes_swapped_out += sw->bytes;
    }
  }
  return SFC_OK;
}

sfc_status_t sfcrt_iteration_begin(sfcrt_session_t *s, sfc_error_t *err) {
  sfc_error_t local;
  ENTER(s, err, local);
  if (s->state != SFCRT_STATE_IDLE)
    return sfc_error_set(err, SFC_ERR_STATE,
                         "iteration_begin: iteration %llu is still running (call "
                         "iteration_end first)",
                         (unsigned long long)s->iteration - 1);
  if (s->unbound_count > 0) {
    for (uint32_t t = 0; t < s->plan->tensor_count; t++)
      if (s->unbound[t])
        return sfc_error_set(err, SFC_ERR_STATE,
                             "iteration_begin: external tensor %u '%s' is not bound "
                             "(sfcrt_session_bind)",
                             t, sfc_plan_string(s->plan, s->plan->tensors[t].name));
  }
  if (s->dev->iteration_begin) {
    sfc_status_t st = s->dev->iteration_begin(s->self, s->iteration, err);
    if (st != SFC_OK)
      return fail(s, st, err);
  }
  s->iteration++;
  s->next_step = 0;
  s->next_swap = 0;
  s->state = SFCRT_STATE_RUNNING;
  return SFC_OK;
}

sfc_status_t sfcrt_step_next(sfcrt_session_t *s, const sfcrt_step_t **out_step, sfc_error_t *err) {
  sfc_error_t local;
  if (out_step)
    *out_step = NULL;
  ENTER(s, err, local);
  if (!out_step)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "step_next: out_step is NULL");
  if (s->state == SFCRT_STATE_STEP)
    return sfc_error_set(err, SFC_ERR_STATE, "step_next: step %u is pending (call step_done first)",
                         s->step.index);
  if (s->state == SFCRT_STATE_DRAINED)
    return sfc_error_set(err, SFC_ERR_STATE,
                         "step_next: the iteration has no more steps (call iteration_end)");
  if (s->state != SFCRT_STATE_RUNNING)
    return sfc_error_set(err, SFC_ERR_STATE,
                         "step_next: no iteration is running (call iteration_begin)");
  const sfc_plan_view_t *v = s->plan;
  uint32_t k = s->next_step;
  sfc_status_t st = issue_swaps(s, k, err);
  if (st != SFC_OK)
    return fail(s, st, err);
  if (k == v->step_count) {
    s->state = SFCRT_STATE_DRAINED;
    return SFC_OK;
  }
  const sfc_plan_step_t *ps = &v->steps[k];
  st = wait_deps(s, SFCRT_QUEUE_COMPUTE, ps->dep_begin, ps->dep_count, err);
  if (st != SFC_OK)
    return fail(s, st, err);

  const sfc_plan_op_t *op = &v->ops[ps->op];
  void **ptrs = s->operand_ptrs + ps->operand_begin;
  sfcrt_device_step_t *ds = &s->dstep;
  ds->index = k;
  ds->step = ps;
  ds->op = op;
  ds->operands = ptrs;
  ds->blocks = v->step_operands + ps->operand_begin;
  ds->tensors = v->op_operands + op->operand_begin;
  ds->operand_count = (uint32_t)op->input_count + op->output_count + op->temp_count;

  sfcrt_step_t *out = &s->step;
  out->stream = NULL;
  st = s->dev->step_begin(s->self, ds, &out->stream, err);
  if (st != SFC_OK)
    return fail(s, st, err);
  out->index = k;
  out->op = ps->op;
  out->op_id = op->graph_id;
  out->name = sfc_plan_string(v, op->name);
  out->type = sfc_plan_string(v, op->type);
  out->segment = ps->segment;
  out->tile = ps->tile;
  out->boxes = ps->box_begin == SFC_PLAN_NONE ? NULL : v->boxes + ps->box_begin;
  out->flags = ps->flags;
  out->held = s->operand_held + ps->operand_begin;
  out->accumulate = s->operand_acc + ps->operand_begin + op->input_count;
  out->inputs = ptrs;
  out->outputs = ptrs + op->input_count;
  out->temps = ptrs + op->input_count + op->output_count;
  out->input_count = op->input_count;
  out->output_count = op->output_count;
  out->temp_count = op->temp_count;
  s->state = SFCRT_STATE_STEP;
  *out_step = out;
  return SFC_OK;
}

sfc_status_t sfcrt_step_done(sfcrt_session_t *s, sfc_error_t *err) {
  sfc_error_t local;
  ENTER(s, err, local);
  if (s->state != SFCRT_STATE_STEP)
    return sfc_error_set(err, SFC_ERR_STATE, "step_done: no step is pending (call step_next)");
  uint32_t k = s->next_step;
  sfc_status_t st = SFC_OK;
  if (s->dev->step_end)
    st = s->dev->step_end(s->self, &s->dstep, err);
  if (st == SFC_OK && s->event_needed[k])
    st = s->dev->event_record(s->self, SFCRT_QUEUE_COMPUTE, k, err);
  if (st != SFC_OK)
    return fail(s, st, err);
  s->next_step = k + 1;
  s->stats.steps++;
  s->state = SFCRT_STATE_RUNNING;
  return SFC_OK;
}

sfc_status_t sfcrt_iteration_end(sfcrt_session_t *s, sfc_error_t *err) {
  sfc_error_t local;
  ENTER(s, err, local);
  if (s->state != SFCRT_STATE_DRAINED) {
    if (s->state == SFCRT_STATE_IDLE)
      return sfc_error_set(err, SFC_ERR_STATE,
                           "iteration_end: no iteration is running (call iteration_begin)");
    return sfc_error_set(err, SFC_ERR_STATE,
                         "iteration_end: step %u of %u not finished (step_next must return "
                         "NULL first)",
                         s->next_step, s->plan->step_count);
  }
  sfc_status_t st = s->dev->iteration_end(s->self, err);
  if (st != SFC_OK)
    return fail(s, st, err);
  s->stats.iterations++;
  s->state = SFCRT_STATE_IDLE;
  return SFC_OK;
}

sfc_status_t sfcrt_session_run(sfcrt_session_t *s, uint64_t iterations, sfc_error_t *err) {
  sfc_error_t local;
  if (!err)
    err = &local;
  for (uint64_t it = 0; it < iterations; it++) {
    SFC_TRY(sfcrt_iteration_begin(s, err));
    const sfcrt_step_t *step = NULL;
    for (;;) {
      SFC_TRY(sfcrt_step_next(s, &step, err));
      if (!step)
        break;
      SFC_TRY(sfcrt_step_done(s, err));
    }
    SFC_TRY(sfcrt_iteration_end(s, err));
  }
  return SFC_OK;
}
