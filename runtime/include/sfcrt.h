/* sfcrt.h — the sfc runtime: replay a compiled plan, one training iteration at a time.
 *
 * A complete program (runtime/examples/replay_host.c is this, buildable):
 *
 *   #include <stdio.h>
 *   #include "sfcrt.h"
 *
 *   int main(int argc, char **argv) {
 *     sfc_error_t err;
 *     sfcrt_plan_t *plan = NULL;
 *     sfcrt_session_t *s = NULL;
 *     if (sfcrt_plan_load_file(argv[1], NULL, &plan, &err) != SFC_OK) goto fail;
 *
 *     sfcrt_options_t opt;
 *     sfcrt_options_init(&opt);
 *     opt.device = "host";                  // "host" | "sim" | "cuda"
 *     if (sfcrt_session_create(plan, &opt, &s, &err) != SFC_OK) goto fail;
 *
 *     // External tensors (SFC_TENSOR_EXTERNAL: inputs, params the framework owns)
 *     // must be bound before the first iteration:
 *     //   sfcrt_session_bind(s, tensor_index, framework_ptr, bytes, &err);
 *
 *     for (int it = 0; it < 3; it++) {
 *       if (sfcrt_iteration_begin(s, &err) != SFC_OK) goto fail;
 *       const sfcrt_step_t *st;
 *       while (sfcrt_step_next(s, &st, &err) == SFC_OK && st) {
 *         // launch op st->op (st->name, st->type) on st->stream with st->inputs[],
 *         // st->outputs[], st->temps[]; st->boxes != NULL for a tile of a segment
 *         if (sfcrt_step_done(s, &err) != SFC_OK) goto fail;
 *       }
 *       if (err.status != SFC_OK || sfcrt_iteration_end(s, &err) != SFC_OK) goto fail;
 *     }
 *     sfcrt_stats_t stats;
 *     sfcrt_session_stats(s, &stats);
 *     printf("swapped out %llu bytes\n", (unsigned long long)stats.bytes_swapped_out);
 *     sfcrt_session_destroy(s);
 *     sfcrt_plan_destroy(plan);
 *     return 0;
 *   fail:
 *     fprintf(stderr, "%s\n", err.message);
 *     sfcrt_session_destroy(s);
 *     sfcrt_plan_destroy(plan);
 *     return 1;
 *   }
 *
 * Contract:
 *  - Every call returns an sfc_status_t and writes a one-line message into `err`
 *    (may be NULL) on failure. The library never prints, exits or aborts.
 *  - Call order (anything else is SFC_ERR_STATE and changes nothing):
 *      create -> [bind]* -> ( iteration_begin -> (step_next -> step_done)* ->
 *      step_next returning NULL -> iteration_end )* -> destroy
 *    After a device failure (SFC_ERR_INTEGRITY, SFC_ERR_DEVICE) the session is
 *    failed: every later call returns that error again; destroy still works.
 *  - No heap allocation per iteration: everything (pointer tables, copy records,
 *    queues, events, pinned staging memory) is allocated by sfcrt_session_create.
 *  - A session is used from one thread at a time.
 *  - Pointers in sfcrt_step_t stay valid for the life of the session.
 *
 * docs/runtime.md explains the interpreter, the event discipline and each device.
 */
#ifndef SFCRT_H
#define SFCRT_H

#include <stddef.h>
#include <stdint.h>

#include "sfc/allocator.h"
#include "sfc/plan_format.h"
#include "sfc/plan_reader.h"
#include "sfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options --------------------------------------------------------------- */

/* cuda memory mode. */
typedef enum sfcrt_cuda_mode {
  SFCRT_CUDA_ARENA = 0, /* one cuMemAlloc arena; block = base + offset */
  SFCRT_CUDA_VA = 1,    /* virtual addressing: a stable address per tensor, physical
                           chunks unmapped on swap-out and mapped again on swap-in */
  SFCRT_CUDA_PAGED = 2  /* the arena's addresses (block = base + offset) reserved, and a
                           physical chunk mapped under each chunk-sized page only while a
                           live block touches it: the plan's page peak, not its arena */
} sfcrt_cuda_mode_t;

/* options.host.lag */
enum { SFCRT_HOST_LAG_NONE = 0, SFCRT_HOST_LAG_COPIES = 1, SFCRT_HOST_LAG_COMPUTE = 2 };

typedef struct sfcrt_options {
  /* "host" (default when NULL), "sim" or "cuda". */
  const char *device;
  /* Every heap allocation of the session (NULL = libc). Must outlive the session. */
  const sfc_allocator_t *alloc;

  struct {
    /* Integrity mode: every tensor is filled with a pattern derived from (tensor,
     * iteration) when produced and checked at every use; a mismatch fails the
     * session with SFC_ERR_INTEGRITY naming step, tensor and byte offset. The host
     * device then writes the arena itself: the framework must not. */
    int integrity;
    /* Test knob: each worker (compute, H2D, D2H) sleeps this many microseconds
     * before each work item, so a missing wait deterministically loses its race.
     * Index by sfcrt queue: 0 compute, 1 H2D, 2 D2H. 0 = no delay. */
    uint32_t delay_us[3];
    /* Test knob (integrity mode only): SFCRT_HOST_LAG_COPIES holds every copy until
     * the compute queue has drained or sleeps on a wait; SFCRT_HOST_LAG_COMPUTE holds
     * every step until both copy queues have drained or sleep on a wait; and in both
     * the workers start an iteration's work only at iteration_end, when all of it is
     * queued. A missing wait then loses its race whatever the scheduler does. */
    int lag;
  } host;

  struct {
    /* Link model; 0 (or < 0) = take the plan's meta (h2d/d2h bytes/s, duplex
     * factor). copy_latency_s: < 0 = the plan's (sfcrt_options_init sets -1), 0 = none:
     * a link with no fixed cost per copy is a real one. */
    double h2d_bytes_per_s;
    double d2h_bytes_per_s;
    double duplex_factor;
    double copy_latency_s;
    /* Time of an op whose time_us is unknown (< 0): flops / flops_per_s when the op
     * has flops and flops_per_s > 0, else default_op_us. Defaults: 0 and 0. */
    double flops_per_s;
    double default_op_us;
    /* A paged plan only: the host's time per page mapped (cuMemMap + cuMemSetAccess,
     * its later unmap included), in seconds. Default 0: not yet measured on a GPU
     * (tools/gpu-check prints "paged cost per chunk mapped"). */
    double page_map_s;
    /* 1: replay any plan as the cuda device's paged mode would run it (pages of the
     * plan's META.va_chunk_bytes); 0 (default): only a paged plan (format 1.7). */
    int paged;
  } sim;

  struct {
    int device_ordinal;      /* CUDA device index; default 0. With `context` the device
                                is the context's (cuCtxGetDevice); a nonzero ordinal
                                must then name that device */
    sfcrt_cuda_mode_t mode;  /* default SFCRT_CUDA_ARENA */
    uint64_t va_chunk_bytes; /* VA and paged mode physical chunk (paged: the page);
                                0 = plan meta, else the allocation granularity */
    void *context;           /* an existing CUcontext to use; NULL = the device's
                                primary context (what PyTorch uses) */
    void *stream;            /* the framework's CUstream for compute (see has_stream);
                                it must belong to the session's context (checked with
                                cuStreamGetCtx at creation) */
    /* 1: `stream` is the compute stream whatever its value; handle 0 (NULL) is the
     * legacy default stream, CU_STREAM_LEGACY — PyTorch's default stream, whose
     * torch.cuda.current_stream().cuda_stream is 0. 0 (default, the old rule): a
     * non-NULL `stream` is used and NULL makes the session create its own
     * CU_STREAM_NON_BLOCKING stream, which does not synchronise with the legacy
     * stream. From PyTorch: set both stream and has_stream = 1. */
    int has_stream;
    /* 1: the host's waits (iteration_end, VA mode's blocking reclaim) block on
     * CU_EVENT_BLOCKING_SYNC events instead of spinning a core in cuStreamSynchronize.
     * Default 0. */
    int blocking_sync;
  } cuda;
} sfcrt_options_t;

/* Fills *opt with the defaults above. */
void sfcrt_options_init(sfcrt_options_t *opt);

/* ---- session ------------------------------------------------------------------ */

typedef struct sfcrt_session sfcrt_session_t;

/* Creates a session replaying `plan` (which must outlive the session) on
 * opt->device: allocates the device arena (cuda VA mode: every chunk the replay will
 * ever map), the pinned staging arena, events, queues and every table the replay
 * needs. opt may be NULL (defaults). On failure *out_session is NULL and everything
 * allocated is freed. Status: SFC_ERR_INVALID_ARGUMENT (unknown device name; cuda: a
 * stream or ordinal that does not belong to the context), SFC_ERR_UNAVAILABLE
 * (backend not built / no driver), SFC_ERR_OUT_OF_MEMORY (host or device memory),
 * SFC_ERR_DEVICE. */
sfc_status_t sfcrt_session_create(const sfcrt_plan_t *plan, const sfcrt_options_t *opt,
                                  sfcrt_session_t **out_session, sfc_error_t *err);

/* Stops the device and frees everything; NULL is a no-op. */
void sfcrt_session_destroy(sfcrt_session_t *session);

/* Binds framework memory to an external tensor (SFC_TENSOR_EXTERNAL; its blocks are
 * SFC_BLOCK_EXTERNAL). ptr must hold at least the tensor's bytes; bytes is checked
 * against the plan. Allowed whenever no iteration is running; every external tensor
 * must be bound before the first iteration_begin (except on sim, which has no bytes). */
sfc_status_t sfcrt_session_bind(sfcrt_session_t *session, uint32_t tensor, void *ptr,
                                uint64_t bytes, sfc_error_t *err);

/* Where a persistent (not external) tensor keeps its value between iterations: its
 * home. *out_where is SFCRT_HOME_DEVICE (its PERSISTENT device block: a device pointer
 * on cuda, an arena address on host) or SFCRT_HOME_HOST (plan 1.3: its PERSISTENT host
 * block in the pinned staging arena; the plan brings it to the device before each use
 * and takes every update back). The framework writes the tensor's initial value there
 * before the first iteration_begin and reads the trained value there after
 * iteration_end; steps see only the residencies. *out_ptr is NULL on sim. Allowed
 * whenever no iteration is running (SFC_ERR_STATE otherwise); SFC_ERR_INVALID_ARGUMENT
 * for a tensor out of range, not persistent, external (framework memory is its home)
 * or without a block (unused). */
#define SFCRT_HOME_DEVICE 0
#define SFCRT_HOME_HOST   1
sfc_status_t sfcrt_session_home(sfcrt_session_t *session, uint32_t tensor, void **out_ptr,
                                int *out_where, sfc_error_t *err);

/* The index of the tensor called `name`, or SFC_PLAN_NONE. */
uint32_t sfcrt_session_find_tensor(const sfcrt_session_t *session, const char *name);

/* ---- the pull loop ---------------------------------------------------------------- */

/* One step as handed to the framework. */
typedef struct sfcrt_step {
  uint32_t index;              /* step index in the plan */
  uint32_t op;                 /* op index in the plan */
  int64_t op_id;               /* the op's id in the source graph */
  const char *name;            /* op name */
  const char *type;            /* op type, e.g. "conv2d" */
  uint32_t segment;            /* segment index, SFC_PLAN_NONE when not tiled */
  uint32_t tile;               /* tile index in the segment, SFC_PLAN_NONE when not tiled */
  const sfc_plan_box_t *boxes; /* tile geometry, one box per operand (inputs, outputs,
                                  temps), NULL when not tiled */
  void *const *inputs;         /* [input_count] */
  void *const *outputs;        /* [output_count] */
  void *const *temps;          /* [temp_count] workspace */
  uint32_t input_count;
  uint32_t output_count;
  uint32_t temp_count;
  void *stream; /* launch on this stream (CUstream for cuda — CU_STREAM_LEGACY, (void *)1,
                  when the framework passed its default stream 0; NULL for host/sim) */
  /* Tiled steps (plan format 1.2; docs/plan-format.md "Tiled execution"): */
  uint32_t flags;                    /* the plan step's SFC_STEP_* (RECOMPUTE: a
                                        forward op rerun in a backward tile) */
  const sfc_plan_box_t *const *held; /* [operands] the part of its tensor an operand's
                                        memory holds, dense and row-major: NULL for the
                                        whole tensor, else a per-tile buffer's box */
  const uint8_t *accumulate;         /* [output_count] 0: write the output's box;
                                        SFCRT_ACCUMULATE: add into it;
                                        SFCRT_ACCUMULATE_FIRST: zero the whole output,
                                        then add (the segment's first write) */
} sfcrt_step_t;

#define SFCRT_ACCUMULATE       1
#define SFCRT_ACCUMULATE_FIRST 2

/* Starts an iteration. SFC_ERR_STATE when one is running or an external tensor is
 * unbound; cuda: SFC_ERR_STATE (and the session is failed) when the compute stream is
 * being captured into a CUDA graph. cuda: work already issued on the compute stream
 * (homes and bound tensors written asynchronously) happens before every copy of the
 * iteration: the copy queues wait for it. */
sfc_status_t sfcrt_iteration_begin(sfcrt_session_t *session, sfc_error_t *err);

/* Issues the swaps due before the next step and its waits, then returns it in
 * *out_step; *out_step is NULL (with SFC_OK) once every step of the iteration was
 * returned (the swaps due at the end are then issued). The step stays valid until
 * the next call. SFC_ERR_STATE outside an iteration or while a step is pending. */
sfc_status_t sfcrt_step_next(sfcrt_session_t *session, const sfcrt_step_t **out_step,
                             sfc_error_t *err);

/* The framework has launched the pending step's op. SFC_ERR_STATE when no step is
 * pending. */
sfc_status_t sfcrt_step_done(sfcrt_session_t *session, sfc_error_t *err);

/* Waits for every queue and ends the iteration. SFC_ERR_STATE unless step_next has
 * returned NULL in this iteration. */
sfc_status_t sfcrt_iteration_end(sfcrt_session_t *session, sfc_error_t *err);

/* Runs `iterations` whole iterations with nothing launched (each step is marked done
 * as soon as it is handed out): what `sfc run`, `sfc simulate` and the tests do to
 * replay a plan without a framework. Stops at the first failure. */
sfc_status_t sfcrt_session_run(sfcrt_session_t *session, uint64_t iterations, sfc_error_t *err);

/* ---- stats ------------------------------------------------------------------------ */

typedef struct sfcrt_stats {
  uint64_t iterations; /* completed iterations */
  uint64_t steps;      /* steps completed, all iterations */
  uint64_t swaps_in;   /* copies issued, all iterations */
  uint64_t swaps_out;
  uint64_t bytes_swapped_in; /* all iterations */
  uint64_t bytes_swapped_out;
  uint64_t arena_bytes;       /* device arena allocated */
  uint64_t host_arena_bytes;  /* pinned staging allocated */
  uint64_t peak_device_bytes; /* the plan's max over steps of live device block bytes */
  uint64_t stalls;            /* compute-queue waits that had to wait (host: blocked;
                                 sim: the event completed after the compute clock) */
  double stall_us;            /* total time of those waits (host: measured; sim: virtual) */
  /* sim only (0 elsewhere), for the last completed iteration: */
  double predicted_iteration_us; /* end of the last queue to drain */
  double compute_us;             /* sum of op times: the iteration without stalls */
  double h2d_busy_us;            /* time the H2D engine copied */
  double d2h_busy_us;
  const double *step_stall_us; /* [step_count] stall before each step, or NULL */
  uint32_t step_count;
  /* sim only (NULL elsewhere), the last completed iteration's timeline on the virtual
   * clocks (what `sfc simulate --trace` draws): */
  const double *step_start_us; /* [step_count] when each step began, after its stall */
  const double *step_us;       /* [step_count] how long it ran (its op time) */
  const double *copy_start_us; /* [swap_count] when each copy of the plan's SWAPS began on
                                  its engine (latency included); -1: not issued */
  const double *copy_end_us;   /* [swap_count] when its last byte arrived; -1: not issued */
  uint32_t swap_count;
  /* cuda VA and paged mode, and sim on a paged plan (its model of paged mode; 0
   * elsewhere), all iterations since session creation (its own maps included): */
  uint64_t chunks_mapped;   /* physical chunks mapped (cuMemMap) */
  uint64_t chunks_unmapped; /* and unmapped (cuMemUnmap) */
  uint64_t unmap_waits;     /* unmaps that waited on the host (cuEventSynchronize) for the
                               last users of their memory: no freed chunk was ready */
} sfcrt_stats_t;

/* Fills *stats. Valid until the next call on the session. */
void sfcrt_session_stats(const sfcrt_session_t *session, sfcrt_stats_t *stats);

/* The name of the session's device ("host", "sim", "cuda"). */
const char *sfcrt_session_device(const sfcrt_session_t *session);

#ifdef __cplusplus
}
#endif

#endif /* SFCRT_H */
