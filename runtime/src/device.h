/* device.h — the internal device table the interpreter (interp.c) talks to.
 *
 * One interpreter replays a plan on three devices (ARCHITECTURE.md, "The runtime"):
 * `host` (device_host.c: real bytes, worker threads, integrity mode), `sim`
 * (device_sim.c: virtual clocks, no bytes) and `cuda` (device_cuda.c: Driver API
 * loaded at run time, arena or virtual-addressing mode). A device is a table of
 * function pointers (sfcrt_device_ops_t) plus an opaque `self`; the interpreter
 * never looks inside `self`.
 *
 * Life cycle, as the interpreter drives it (interp.c):
 *
 *   create(cfg)                         once per session: streams/threads, events
 *   arena_alloc(arena_bytes, align)     once per session: the device arena
 *   host_alloc(host_arena_bytes)        once per session: pinned staging memory
 *   block_address(b) / host_block_address(h)
 *                                       once per block at session creation; the
 *                                       interpreter caches every pointer
 *   per iteration:
 *     iteration_begin(it)
 *     for k in 0..step_count:           issue order of docs/plan-format.md
 *       for each swap s with issue_step == k:
 *         queue_wait(q, event(dep))     for each dep of s (q = H2D or D2H)
 *         copy(q, &copies[s])
 *         event_record(q, event(s))     only when some node depends on s
 *       (k < step_count:)
 *         queue_wait(COMPUTE, event(dep)) for each dep of step k
 *         step_begin(k)                 -> returns the stream the framework launches on
 *         ... the framework launches the op ...
 *         step_end(k)
 *         event_record(COMPUTE, event(k)) only when some node depends on k
 *     iteration_end()                   waits for all three queues (the only
 *                                       device-wide synchronisation, once per iteration)
 *   stats(&s)                           any time between iterations
 *   destroy()                           frees everything create/alloc made
 *
 * Events are abstract indices allocated once per session from the plan:
 * event(step k) = k, event(swap s) = step_count + s; cfg->event_count =
 * step_count + swap_count. An event recorded in iteration i is "complete for
 * iteration i" once the work issued before it on its queue has completed; a wait
 * in iteration i waits for the recording of iteration i (every wait targets an
 * event recorded earlier in the same iteration: deps point backwards in issue
 * order, which the reader validated). Devices may reuse event objects across
 * iterations because iteration_end synchronises every queue.
 *
 * Rules every device follows: no heap allocation after create/arena_alloc/
 * host_alloc (the interpreter's zero-allocation promise covers the device), no
 * printing, no exit/abort; every failure is a status plus a one-line message in
 * `err` (which is never NULL when the interpreter calls). Calls come from one
 * thread at a time (the session is not thread-safe; a device may run its own
 * worker threads internally). After any call fails, the interpreter calls only
 * stats and destroy.
 *
 * Registry: sfcrt_device_find(name) returns the table for "host", "sim" and, when
 * built with SFC_HAVE_CUDA, "cuda" (see device_registry in interp.c).
 */
#ifndef SFCRT_DEVICE_H
#define SFCRT_DEVICE_H

#include <stdint.h>

#include "sfc/allocator.h"
#include "sfc/plan_format.h"
#include "sfc/status.h"
#include "sfcrt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The three queues of docs/plan-format.md. Work on one queue completes in issue order. */
typedef enum sfcrt_queue {
  SFCRT_QUEUE_COMPUTE = 0, /* the framework's stream: steps */
  SFCRT_QUEUE_H2D = 1,     /* swap-ins */
  SFCRT_QUEUE_D2H = 2,     /* swap-outs */
  SFCRT_QUEUE_COUNT = 3
} sfcrt_queue_t;

/* What a device gets at creation. All pointers stay valid until destroy. */
typedef struct sfcrt_device_config {
  const sfc_plan_view_t *plan;    /* the validated plan being replayed */
  const sfc_allocator_t *alloc;   /* every heap allocation of the device goes here */
  const sfcrt_options_t *options; /* the session options (device-specific parts inside) */
  uint32_t event_count;           /* step_count + swap_count: event(step k) = k,
                                     event(swap s) = step_count + s */
} sfcrt_device_config_t;

/* One swap copy, precomputed by the interpreter at session creation (one per plan
 * swap; the same record is passed every iteration). */
typedef struct sfcrt_copy {
  uint32_t swap;         /* index into plan SWAPS */
  uint32_t tensor;       /* tensor index */
  uint32_t device_block; /* index into plan BLOCKS */
  uint32_t host_block;   /* index into plan HOST_BLOCKS */
  uint32_t direction;    /* SFC_SWAP_OUT (device -> host) or SFC_SWAP_IN (host -> device) */
  uint32_t reserved;
  uint64_t bytes;   /* bytes copied (sfc_plan_swap_t.bytes) */
  void *device_ptr; /* block_address(device_block) */
  void *host_ptr;   /* host_block_address(host_block) */
} sfcrt_copy_t;

/* One step, as the interpreter announces it to the device (step_begin/step_end). */
typedef struct sfcrt_device_step {
  uint32_t index;              /* step index */
  const sfc_plan_step_t *step; /* plan record */
  const sfc_plan_op_t *op;     /* plan record of step->op */
  void *const *operands;       /* resolved pointers, one per op operand (inputs,
                                  outputs, temps in op order); external tensors are
                                  the bound framework pointers */
  const uint32_t *blocks;      /* the step's device block indices, same order */
  const uint32_t *tensors;     /* the op's tensor indices, same order */
  uint32_t operand_count;      /* input_count + output_count + temp_count */
} sfcrt_device_step_t;

/* The device table. `self` is what create returned. */
typedef struct sfcrt_device_ops {
  const char *name; /* "host", "sim", "cuda" */

  /* Creates the device: queues (streams or threads), cfg->event_count events, any
   * per-session state. Allocates through cfg->alloc. On failure frees everything
   * and leaves *out_self NULL. */
  sfc_status_t (*create)(const sfcrt_device_config_t *cfg, void **out_self, sfc_error_t *err);

  /* Allocates the device arena of `bytes` (0 allowed: then nothing is allocated)
   * aligned to `alignment` (a power of two, the plan's). Called once, after create.
   * In cuda VA mode this reserves address space and maps the non-swapped blocks. */
  sfc_status_t (*arena_alloc)(void *self, uint64_t bytes, uint32_t alignment, sfc_error_t *err);

  /* Allocates the pinned host staging arena of `bytes` (0 allowed). Called once per
   * session, after arena_alloc — never per iteration (the seed's lesson: pinned
   * allocation per iteration kills overlap). */
  sfc_status_t (*host_alloc)(void *self, uint64_t bytes, sfc_error_t *err);

  /* The address the framework sees for device block `block` (plan BLOCKS index):
   * arena base + offset in arena mode; the tensor's stable virtual address in VA
   * mode (every block of one tensor gets the same address). Never called for
   * SFC_BLOCK_EXTERNAL blocks. The sim device may return NULL (it has no bytes). */
  void *(*block_address)(void *self, uint32_t block);

  /* The address of host staging block `host_block` (plan HOST_BLOCKS index). */
  void *(*host_block_address)(void *self, uint32_t host_block);

  /* Called at sfcrt_iteration_begin with the 0-based iteration number (since the
   * session was created). May be NULL. */
  sfc_status_t (*iteration_begin)(void *self, uint64_t iteration, sfc_error_t *err);

  /* Enqueues an asynchronous copy on queue q (H2D for SFC_SWAP_IN, D2H for
   * SFC_SWAP_OUT). Returns without waiting for the copy. In cuda VA mode a
   * swap-in maps the tensor's chunks before the copy and a swap-out unmaps them
   * after it (ordered on the queue). */
  sfc_status_t (*copy)(void *self, sfcrt_queue_t q, const sfcrt_copy_t *copy, sfc_error_t *err);

  /* Enqueues the recording of `event` on queue q: the event completes when all
   * work issued on q before it has completed. */
  sfc_status_t (*event_record)(void *self, sfcrt_queue_t q, uint32_t event, sfc_error_t *err);

  /* Makes queue q wait (without blocking the caller where the device can avoid
   * it) until `event`, recorded earlier in this iteration, completes. The only
   * cross-queue ordering the interpreter uses. */
  sfc_status_t (*queue_wait)(void *self, sfcrt_queue_t q, uint32_t event, sfc_error_t *err);

  /* Announces step `s` on the compute queue, after its waits: returns in
   * *out_stream the stream the framework launches the op on (a CUstream for cuda,
   * NULL for host and sim). Host integrity mode checks the inputs here; sim
   * advances the compute clock. */
  sfc_status_t (*step_begin)(void *self, const sfcrt_device_step_t *s, void **out_stream,
                             sfc_error_t *err);

  /* The framework has launched (host: finished) the op of step `s`. Host
   * integrity mode writes the outputs' patterns here. May be NULL. */
  sfc_status_t (*step_end)(void *self, const sfcrt_device_step_t *s, sfc_error_t *err);

  /* Waits until every queue has drained (the once-per-iteration synchronisation)
   * and reports any asynchronous failure (a worker's integrity error, a CUDA
   * error surfaced by the synchronisation). */
  sfc_status_t (*iteration_end)(void *self, sfc_error_t *err);

  /* Adds the device's view to *stats (the interpreter fills the counters it owns
   * first: iterations, steps, swap bytes and counts). Devices fill what they
   * measure: stalls, peak, sim predictions. May be NULL. */
  void (*stats)(void *self, sfcrt_stats_t *stats);

  /* Stops threads/streams and frees everything; NULL self is a no-op. Safe after
   * any failure, including a failed create (then self is NULL). */
  void (*destroy)(void *self);
} sfcrt_device_ops_t;

/* The registry: the table for a device name ("host", "sim", "cuda"), NULL when the
 * name is unknown or that backend was not built. Defined in interp.c. */
const sfcrt_device_ops_t *sfcrt_device_find(const char *name);

/* The built-in tables. */
extern const sfcrt_device_ops_t sfcrt_device_host;
extern const sfcrt_device_ops_t sfcrt_device_sim;
#if defined(SFC_HAVE_CUDA) && SFC_HAVE_CUDA
extern const sfcrt_device_ops_t sfcrt_device_cuda; /* device_cuda.c */
#endif

#ifdef __cplusplus
}
#endif

#endif /* SFCRT_DEVICE_H */
