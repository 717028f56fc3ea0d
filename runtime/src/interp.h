/* interp.h — the session object shared by session.c (create, bind, stats, destroy)
 * and interp.c (the per-iteration pull loop). Private to the runtime.
 *
 * Everything the replay touches is allocated by sfcrt_session_create; the pull loop
 * only reads these tables and calls the device (docs/runtime.md, "Interpreter").
 */
#ifndef SFCRT_INTERP_H
#define SFCRT_INTERP_H

#include <stdint.h>

#include "device.h"
#include "sfcrt.h"

typedef enum sfcrt_state {
  SFCRT_STATE_IDLE = 0,    /* between iterations: bind allowed */
  SFCRT_STATE_RUNNING = 1, /* inside an iteration, no step pending */
  SFCRT_STATE_STEP = 2,    /* step_next returned a step, step_done not yet called */
  SFCRT_STATE_DRAINED = 3, /* step_next returned NULL: only iteration_end allowed */
  SFCRT_STATE_FAILED = 4   /* a device call failed: every call repeats `failure` */
} sfcrt_state_t;

struct sfcrt_session {
  const sfc_plan_view_t *plan;
  const sfc_allocator_t *alloc;
  sfcrt_options_t options; /* a copy: the caller's struct may go away */
  const sfcrt_device_ops_t *dev;
  void *self; /* the device's state */

  void **operand_ptrs; /* [plan->step_operand_count] resolved pointer per step operand */
  const sfc_plan_box_t **operand_held; /* [step_operand_count] a PARTIAL block's box, or NULL */
  uint8_t *operand_acc;                /* [step_operand_count] SFCRT_ACCUMULATE* or 0 */
  sfcrt_copy_t *copies;                /* [plan->swap_count] */
  uint8_t *event_needed;  /* [step_count + swap_count] some node on another queue waits */
  uint8_t *unbound;       /* [tensor_count] 1: external tensor with blocks, not bound yet */
  uint32_t unbound_count; /* how many 1s in unbound */

  sfcrt_state_t state;
  sfc_error_t failure; /* the error that failed the session */
  uint64_t iteration;  /* iterations begun */
  uint32_t next_step;  /* next step to return in this iteration */
  uint32_t next_swap;  /* next swap to issue (SWAPS are sorted by issue_step) */
  sfcrt_step_t step;   /* the pending step handed to the framework */
  sfcrt_device_step_t dstep;

  sfcrt_stats_t stats; /* counters the interpreter owns */
  uint64_t peak_device_bytes;
};

/* sfcrt_session_create on a view that was never validated: for tests that replay
 * deliberately broken plans (overlaps, missing deps) to prove integrity mode
 * catches them. The view's references must still be in range (the builder's
 * plans are); the view must outlive the session. */
sfc_status_t sfcrt_session_create_view(const sfc_plan_view_t *view, const sfcrt_options_t *opt,
                                       sfcrt_session_t **out_session, sfc_error_t *err);

/* The queue a swap runs on. */
static inline sfcrt_queue_t sfcrt_swap_queue(const sfc_plan_swap_t *s) {
  return s->direction == SFC_SWAP_IN ? SFCRT_QUEUE_H2D : SFCRT_QUEUE_D2H;
}

#endif /* SFCRT_INTERP_H */
