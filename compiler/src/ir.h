/* ir.h — the compiler's intermediate representation.
 *
 * One sfc_ir_t flows through the pipeline (pipeline.c). The graph is filled by the
 * graph loader (which appends one synthetic workspace tensor per op that declares
 * workspace_bytes, and --batch rescaling, both before the pipeline starts) and is
 * immutable afterwards: passes write only sfc_ir_t. Each pass reads some fields and
 * writes others; the comment on every field names its writer.
 *
 * Who reads the graph's operand lists: only the steps pass (and the tiler, when it
 * lands) reads ops[].inputs/outputs to decide anything. It turns them into per-step
 * uses; every later pass reads uses (steps[].use_begin/use_count), and per-tensor use
 * steps from liveness, so a tiled step's box or a swapped residency is seen by all of
 * them. (The plan builder copies the graph's op records, operand lists included,
 * verbatim into OPS/OP_OPERANDS: a description of the source graph, not a use.)
 *
 * Indices vs ids: the file names tensors and ops by arbitrary non-negative ids;
 * inside the compiler everything refers to tensors and ops by dense uint32_t index
 * (position in the arrays below). SFC_PLAN_NONE (UINT32_MAX) means "no index".
 */
#ifndef SFC_IR_H
#define SFC_IR_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "pool.h"
#include "sfc/plan_format.h"
#include "sfc/status.h"

/* Limits the graph loader enforces so no count or byte total can overflow. */
#define SFC_MAX_TENSORS      (UINT32_C(1) << 24) /* 16,777,216 */
#define SFC_MAX_OPS          (UINT32_C(1) << 24)
#define SFC_MAX_OPERANDS     (UINT32_C(1) << 26)      /* sum over ops of inputs + outputs */
#define SFC_MAX_OP_OPERANDS  4096u                    /* per op, inputs or outputs */
#define SFC_MAX_TENSOR_BYTES (UINT64_C(1) << 50)      /* 1 PiB */
#define SFC_MAX_TOTAL_BYTES  (UINT64_C(1) << 56)      /* sum of all tensors' bytes */
#define SFC_MAX_ID           ((INT64_C(1) << 53) - 1) /* ids are exact JSON integers */
#define SFC_MAX_GRAPH_FILE   (UINT64_C(1) << 31)      /* 2 GiB of JSON */
#define SFC_MAX_SPATIAL      3                        /* attrs hold up to 3 spatial dims */

/* Bits of sfc_attrs_t.present. */
#define SFC_ATTR_KERNEL         0x01u
#define SFC_ATTR_STRIDE         0x02u
#define SFC_ATTR_PADDING        0x04u
#define SFC_ATTR_DILATION       0x08u
#define SFC_ATTR_GROUPS         0x10u
#define SFC_ATTR_CEIL_MODE      0x20u
#define SFC_ATTR_OUTPUT_PADDING 0x40u
#define SFC_ATTR_SCALE          0x80u

/* The spatial attributes the tiler needs; other attrs in the file are ignored. An
 * array attribute holds 1..SFC_MAX_SPATIAL values; a single value given for a
 * 2-D op applies to every spatial dim (loader expands it). */
typedef struct sfc_attrs {
  uint32_t present; /* SFC_ATTR_* bits of the attrs given */
  uint8_t rank;     /* spatial dims described (max over given arrays) */
  int64_t kernel[SFC_MAX_SPATIAL];
  int64_t stride[SFC_MAX_SPATIAL];
  int64_t padding[SFC_MAX_SPATIAL];
  int64_t dilation[SFC_MAX_SPATIAL];
  int64_t output_padding[SFC_MAX_SPATIAL];
  int64_t scale[SFC_MAX_SPATIAL]; /* integer upsampling factor */
  int64_t groups;
  bool ceil_mode;
} sfc_attrs_t;

typedef struct sfc_tensor {
  /* loader */
  int64_t id;       /* id in the file; -1 for synthetic tensors */
  const char *name; /* never NULL ("" when the file gives none) */
  uint64_t bytes;   /* 1 .. SFC_MAX_TENSOR_BYTES */
  sfc_tensor_kind_t kind;
  sfc_dtype_t dtype; /* SFC_DTYPE_UNKNOWN when absent */
  uint8_t ndim;      /* 0 when shape absent */
  int8_t batch_axis; /* -1 when unknown */
  int64_t shape[SFC_PLAN_MAX_DIMS];
  uint32_t flags; /* SFC_TENSOR_PERSISTENT / SYNTHETIC (loader) */
} sfc_tensor_t;

typedef struct sfc_op {
  /* loader */
  int64_t id;
  const char *name; /* never NULL */
  const char *type; /* e.g. "conv2d" */
  sfc_phase_t phase;
  uint32_t *inputs; /* [n_inputs] tensor indices */
  uint32_t n_inputs;
  uint32_t *outputs; /* [n_outputs] tensor indices */
  uint32_t n_outputs;
  uint32_t workspace; /* synthetic workspace tensor, or SFC_PLAN_NONE */
  sfc_attrs_t attrs;
  double time_us;           /* measured; < 0 when unknown */
  double time_fixed_us;     /* batch-independent part of time_us, 0 .. time_us; 0 when absent */
  uint64_t flops;           /* 0 when unknown */
  uint64_t workspace_bytes; /* 0 when none */
  uint32_t backward_of;     /* op index, or SFC_PLAN_NONE */
} sfc_op_t;

/* Whether op lists tensor t among its inputs (reads) or outputs (writes). O(operands). */
static inline bool sfc_op_reads(const sfc_op_t *op, uint32_t t) {
  for (uint32_t i = 0; i < op->n_inputs; i++)
    if (op->inputs[i] == t)
      return true;
  return false;
}

static inline bool sfc_op_writes(const sfc_op_t *op, uint32_t t) {
  for (uint32_t i = 0; i < op->n_outputs; i++)
    if (op->outputs[i] == t)
      return true;
  return false;
}

typedef struct sfc_graph {
  const char *name;      /* "" when absent */
  int64_t batch;         /* root "batch": the batch it was recorded at; 0 when absent */
  const char *device;    /* root "device": where the op times were measured; "" when absent */
  sfc_tensor_t *tensors; /* [n_tensors]; file tensors first, then synthetic */
  uint32_t n_tensors;
  uint32_t n_file_tensors; /* tensors declared in the file */
  sfc_op_t *ops;           /* [n_ops] execution order */
  uint32_t n_ops;
  struct sfc_inplace { /* what `--inplace` rewrote (inplace.h); zero when not asked */
    uint32_t ops;      /* ops that now write an input in place */
    uint64_t bytes;    /* their results' bytes, no longer held apart */
    uint8_t *untiled;  /* [n_ops] (pool), NULL when none: 1 for each such op's forward op,
                          which the FT partitioner leaves out of segments (tiler.c) */
  } inplace;
  sfc_pool_t pool; /* owns every array and string above */
} sfc_graph_t;

/* How a step touches a tensor. */
typedef enum sfc_access {
  SFC_ACCESS_READ = 1,
  SFC_ACCESS_WRITE = 2,
  SFC_ACCESS_RW = 3 /* read and written by one step (an in-place op) */
} sfc_access_t;

/* One tensor a step touches: uses[steps[s].use_begin .. + use_count), in the op's
 * operand order (inputs, outputs, workspace), so use i is the plan's step operand i. */
typedef struct sfc_use {
  uint32_t tensor;
  uint32_t box;   /* index into boxes (a tile's part of the tensor); SFC_PLAN_NONE = whole */
  uint8_t access; /* sfc_access_t */
  uint8_t flags;  /* SFC_USE_* */
} sfc_use_t;

/* sfc_use_t.flags */
/* tiler: the step adds its result into the box (access RW); the tensor is zero before
 * its segment's first tile */
#define SFC_USE_ACCUMULATE 0x1u
/* tiler: the tensor is made and used only inside the segment (one per-tile buffer) */
#define SFC_USE_PARTIAL 0x2u

/* sfc_step_t.flags: the plan's SFC_STEP_RECOMPUTE (tiler: a forward op rerun in a
 * backward tile) */

/* One compute step: an op, or one tile of an op inside a tiled segment. */
typedef struct sfc_step {
  uint32_t op;
  uint32_t segment;   /* SFC_PLAN_NONE when untiled */
  uint32_t tile;      /* SFC_PLAN_NONE when untiled */
  uint32_t use_begin; /* uses[use_begin .. use_begin + use_count) */
  uint32_t use_count;
  double time_us;     /* predicted duration (sfc/steps.h rule); < 0 when unknown */
  uint32_t dep_begin; /* schedule pass: deps[dep_begin .. + dep_count), the swaps the */
  uint32_t dep_count; /* step waits for (0 when nothing is swapped) */
  uint32_t flags;     /* SFC_STEP_RECOMPUTE (sfc/plan_format.h) */
} sfc_step_t;

/* A tensor's life over the steps (liveness). */
typedef struct sfc_live {
  uint32_t first_step; /* inclusive; SFC_PLAN_NONE when no step touches the tensor */
  uint32_t last_step;  /* inclusive; persistent tensors and outputs extend to the end */
  uint32_t use_begin;  /* use_steps[use_begin .. use_begin + use_count): sorted, distinct */
  uint32_t use_count;
} sfc_live_t;

/* Which arena a block lives in. */
typedef enum sfc_arena {
  SFC_ARENA_DEVICE = 0, /* the device arena, packed against device.budget */
  SFC_ARENA_HOST = 1,   /* the pinned host staging arena, against host.staging_budget */
  SFC_ARENA_COUNT = 2
} sfc_arena_t;

/* One residency of a tensor (or of a box of it) in an arena: the unit a packer places. */
typedef struct sfc_block {
  uint32_t tensor;
  uint32_t first_step; /* inclusive */
  uint32_t last_step;  /* inclusive */
  uint32_t flags;      /* SFC_BLOCK_* (PARTIAL with box) */
  uint32_t box;        /* index into boxes when PARTIAL; SFC_PLAN_NONE = whole tensor */
  uint8_t arena;       /* sfc_arena_t */
  bool placed;         /* pre-placed: offset is given and the packer keeps it */
  uint64_t bytes;      /* bytes held, rounded up to the arena's alignment */
  uint64_t offset;     /* packer (or given when placed) */
} sfc_block_t;

/* A copy between a device residency and the tensor's host staging block (schedule
 * pass). Issued before step issue_step (plan_format.h issue order); it waits for
 * deps[dep_begin .. + dep_count). */
typedef struct sfc_swap {
  uint32_t tensor;
  uint32_t device_block; /* IR block index: the source (OUT) or destination (IN) */
  uint32_t host_block;   /* IR block index (arena HOST) */
  uint32_t issue_step;
  uint32_t dep_begin;
  uint32_t dep_count;
  uint8_t direction; /* SFC_SWAP_OUT or SFC_SWAP_IN */
} sfc_swap_t;

/* What a step or a swap waits for: SFC_NODE_STEP (index into steps) or SFC_NODE_SWAP
 * (index into the IR's swaps; the plan builder renumbers to SWAPS order). */
typedef struct sfc_dep {
  uint32_t kind;
  uint32_t index;
} sfc_dep_t;

/* Why the time bound waits in one piece of its chain (pass_bound.c; docs/algorithms.md
 * "The time bound"): the term that sets the piece's least stall. */
typedef enum sfc_wait_why {
  SFC_WAIT_IN = 0,      /* bytes that must come back, beyond what the compute hides */
  SFC_WAIT_IN_FORCED,   /*   of tensors too large to stay beside a step's operands */
  SFC_WAIT_OUT,         /* bytes that must leave */
  SFC_WAIT_OUT_FORCED,  /*   of tensors too large to stay beside a step's operands */
  SFC_WAIT_BOTH,        /* both directions' copies sharing the links */
  SFC_WAIT_BOTH_FORCED, /*   the forced ones' */
  SFC_WAIT_WHOLE,       /* a whole tensor's copy longer than the compute before its reader */
  SFC_WAIT_COUNT
} sfc_wait_why_t;

typedef struct sfc_bound_wait {
  uint32_t from, to; /* the piece: steps from .. to - 1 (to = n_steps: the end) */
  double compute_s;  /* the compute of its steps */
  double stall_s;    /* the least any plan waits in it */
  double bytes;      /* the bytes of the term that sets it (0 for SFC_WAIT_WHOLE) */
  uint8_t why;       /* sfc_wait_why_t */
} sfc_bound_wait_t;

/* One traffic LP solve kept (sfc_ir_t traffic_lp_*; pass_schedule.c traffic_lp). */
typedef struct sfc_lp_seen {
  double *x;
  uint64_t key;
  uint32_t n;
  bool none;
  double bytes;
} sfc_lp_seen_t;

typedef struct sfc_ir {
  sfc_graph_t *graph;         /* loader; not owned */
  const sfc_config_t *config; /* config loader + CLI overrides; not owned */

  /* steps pass (the tiler will add per-tile steps and boxes) */
  sfc_step_t *steps; /* [n_steps] */
  uint32_t n_steps;
  sfc_use_t *uses; /* [n_uses] by step */
  uint32_t n_uses;
  sfc_plan_box_t *boxes;        /* [n_boxes] tile boxes uses and blocks refer to: the */
  uint32_t n_boxes;             /* tiler's n_use_boxes, then the blocks pass's per-tile */
  uint32_t n_use_boxes;         /* buffers' (replaced, not appended, each time it runs) */
  uint32_t cap_boxes;           /* boxes allocated (the blocks pass's) */
  sfc_plan_segment_t *segments; /* tiler: the plan's SEGMENTS, forward and backward, */
  uint32_t n_segments;          /* in step order */
  const struct sfc_ft_segment *tile_given; /* tests, and tiling: auto's tuner (pipeline.c): */
  uint32_t n_tile_given;                   /*   tile these segments instead of partitioning */
  uint32_t tiling_candidates;              /* tiling: auto: candidates the tuner compared */

  /* liveness pass */
  sfc_live_t *live;      /* [graph->n_tensors] */
  uint32_t *use_steps;   /* by tensor, see sfc_live_t */
  uint64_t *live_bytes;  /* [n_steps] logical bytes live during each step */
  uint64_t in_core_peak; /* max of live_bytes: everything stays on the device */

  /* blocks pass (one residency per tensor); the schedule pass splits residencies */
  sfc_block_t *blocks; /* [n_blocks] residencies in every arena */
  uint32_t n_blocks;
  uint64_t lower_bound; /* device arena: max over steps of live block bytes */

  /* schedule pass (the residency scheduler, pass_schedule.c) */
  uint64_t schedule_budget;          /* pipeline: device bytes to schedule for; 0 = the config's */
  bool schedule_no_prefetch;         /* pipeline: issue no swap-in earlier than its own lead */
  bool schedule_prefetched;          /* some swap-in was moved earlier to wait behind others */
  bool schedule_lazy_waits;          /* window: also move swap-out waits later (the tuner's) */
  bool schedule_sorted_waits;        /* window: then wait for them in queue order (the tuner's) */
  bool schedule_rank_only;           /* window: the eviction priority alone picks among the
                                        gaps that cover a step, the hideable ones not first
                                        (the tuner's) */
  bool schedule_traffic_lp;          /* window: the traffic LP's values rank the gaps before
                                        the eviction priority (the tuner's; pass_schedule.c
                                        traffic_lp) */
  double *traffic_lp_x;              /*   its value per gap (pool), for traffic_lp_key */
  uint64_t traffic_lp_key;           /*   the target and gaps it was solved for (0: none) */
  uint32_t traffic_lp_n;             /*   gaps it has values for */
  bool traffic_lp_none;              /*   that LP gave no solution (too large, or the
                                        simplex stopped): the gaps ranked without it */
  double traffic_lp_bytes;           /*   its least bytes copied */
  sfc_lp_seen_t traffic_lp_seen[4];  /*   earlier solves (the targets alternate) */
  uint32_t traffic_lp_seen_next;     /*   the slot the next solve replaces */
  uint64_t traffic_lp_matrix;        /*   the last scaled LP's matrix (a hash; 0: none) */
  double *traffic_lp_rii;            /*   GLPK's scale factors for it (pool): the rows' */
  double *traffic_lp_sjj;            /*   and the columns' */
  bool schedule_late_homes;          /* window: a persistent tensor whose copy home after its
                                        last write cannot hide gets no hidden gap (the
                                        tuner's; pass_schedule.c late_homes) */
  double schedule_late_s;            /*   the time such copies would wait, summed */
  uint8_t window_late;               /* window: auto: the late-homes candidate the finals try
                                        last (0: none) */
  bool window_plain_only;            /* tests: window: auto tries no late-homes candidate */
  bool window_hidden_first_only;     /* tests: window: auto tries no rank-only candidate */
  uint64_t schedule_prefetch_margin; /* pipeline: the early swap-ins and late waits keep this
                                        much of the target free (room for the packer) */
  uint8_t schedule_margin_rounds;    /* pipeline: fragmentation rounds that raised it */
  uint8_t schedule_margins_fit;      /* pipeline: margins tried that fit (refinement) */
  bool schedule_no_refine;           /* pipeline: keep the first margin that fits (a test's
                                        baseline; the pipeline never sets it) */
  sfc_swap_t *swaps;                 /* [n_swaps] in the order made (the plan sorts them) */
  uint32_t n_swaps;
  sfc_dep_t *deps; /* [n_deps] of swaps and steps */
  uint32_t n_deps;
  uint32_t swapped_tensors; /* tensors with at least one swap */
  uint64_t swap_out_bytes;  /* one iteration's traffic */
  uint64_t swap_in_bytes;
  uint64_t schedule_floor;            /* device bytes no schedule of this pass goes below */
  uint32_t schedule_floor_step;       /* the step that sets it, where stay: */
  uint64_t schedule_floor_persistent; /*   persistent tensors' blocks */
  uint64_t schedule_floor_operands;   /*   the step's own non-persistent operands */
  bool schedule_infeasible;           /* the budget is below schedule_floor: scheduled for it */
  uint64_t staging_least;             /* pinned bytes any plan within the device budget stages:
                                         max over steps of live_bytes - budget */
  uint32_t staging_least_step;        /*   the step that sets it */
  uint64_t host_lower_bound;          /* host arena: max over steps of live block bytes */
  double compute_s;                   /* sum of step times (in-core iteration, no stalls) */
  double time_bound_s;                /* lower bound on any swap schedule's iteration time */
  double time_bound_split_s;          /* the schedule pass's one-split part of it (pass_bound.c) */
  double *step_bound_s;               /* pass_bound: [step_bound_n] the least start of each
                                         step in any schedule within the budget (the chain's;
                                         index n_steps: the end, time_bound_s); NULL: none */
  uint32_t step_bound_n;              /*   n_steps + 1 when computed, else 0 */
  struct sfc_bound_wait *bound_waits; /* pass_bound: the pieces of the chain that sets
                                         time_bound_s where it waits, in step order (malloc'd,
                                         rewritten by every round); NULL: none */
  uint32_t n_bound_waits;
  struct sfc_bound_memo {         /* pass_bound: the last chain computed (malloc'd), kept
                                     for the next plan of the same compile */
    uint64_t key;                 /*   a hash of what the chain reads (0: none) */
    double chain_s;               /*   its length */
    double *starts;               /*   [n_steps] each step's least start */
    struct sfc_bound_wait *waits; /*   its waiting pieces, */
    uint32_t n_waits;             /*   how many */
    uint32_t hits;                /*   rounds that took the chain from it */
  } bound_memo;
  uint32_t lms_threshold, lms_ahead; /* policy lms: the n and l used (0 otherwise) */
  uint8_t schedule_priority;         /* window: SFC_PRIORITY_* of the gaps (the tuner's) */
  uint8_t window_candidates;         /* window: candidates the auto tuner evaluated */
  uint8_t window_ranked;             /* window: candidates within both budgets in the tuner, */
  uint8_t window_rank[32];           /*   fastest first (the finals try them in this order) */
  double window_rank_s[32];          /*   and their times there */
  bool pack_fast;                    /* tuner: best-fit instead of the configured packer */
  bool pack_brief;                   /* pipeline: a scheduled plan's packing gets a quarter
                                        of its usual time (a margin round's trial) */
  uint32_t lms_fixed_threshold;      /* tests: n and l for policy lms instead of the */
  uint32_t lms_fixed_ahead;          /*   tuner's (0: tune) */

  /* pack pass, one packing per arena */
  uint64_t arena_bytes;      /* device arena: peak of its packing */
  uint64_t host_arena_bytes; /* pinned host staging arena: peak of its packing */
  uint64_t page_peak_bytes;  /* device.arena paged: the most bytes of whole pages the live
                                device blocks touch (plan invariant 59; sfc_ir_page_peak) */
  const char *packer_name;   /* algorithm that produced the packing */
  bool packing_optimal;      /* the packer proved arena_bytes optimal */
  bool pack_wall_stopped;    /* some packing of this compile was stopped by the wall-clock
                                backstop (pack_clock.h): the plan may differ elsewhere */
  double pack_seconds;

  /* slack pass: copies moved into the packed arena's free bytes */
  bool schedule_no_slack;      /* pipeline and tests: leave the packed plan's copies as scheduled */
  uint32_t slack_moved_in;     /* swap-ins issued earlier */
  uint32_t slack_moved_out;    /* swap-out waits moved later */
  uint32_t slack_relocated;    /*   swap-in destinations moved aside for them */
  bool schedule_no_reorder;    /* tests: leave the chosen plan's copy queues as they are */
  uint32_t slack_delayed_in;   /* sfc_slack_reorder: copies issued later, behind those */
  uint32_t slack_delayed_out;  /*   waited for earlier (swap-ins, swap-outs) */
  uint32_t slack_advanced_out; /* sfc_slack_reorder: swap-outs issued earlier */
  uint32_t slack_advanced_in;  /* sfc_slack_reorder: swap-ins issued ahead of copies
                                  waited for earlier */
  double slack_reorder_s[2];   /*   the replay before and after them (0: not run) */
  bool slack_reverted;         /* sfc_slack_judge: the moves replayed slower, undone */
  void *slack_undo;            /* pass_slack.c: what the last moves changed (pool memory) */

  /* plan pass: the view emit writes and verify checks */
  sfc_plan_view_t plan;
  bool fits_budget;

  /* pipeline, after verify: the plan replayed on the sim device (evaluate.h) */
  bool predicted;
  double predicted_iteration_s;
  double stall_s;
  uint64_t pages_mapped;    /* paged: pages the predicted iteration maps */
  double *step_start_s;     /* [step_start_n] each step's start on sim (after its stall), s */
  uint32_t step_start_n;    /*   n_steps after a replay, 0 when the replay gave none */
  uint32_t schedule_rounds; /* schedule + pack rounds run (fragmentation retries) */

  sfc_pool_t pool; /* owns every pass's arrays */
} sfc_ir_t;

/* The window scheduler's eviction priorities (pass_schedule.c), tried by the pipeline's
 * window: auto tuner. */
enum {
  SFC_PRIORITY_AREA = 0,  /* bytes x gap length (the default) */
  SFC_PRIORITY_LENGTH,    /* gap length (Belady-like), then bytes */
  SFC_PRIORITY_BYTES,     /* bytes, then gap length */
  SFC_PRIORITY_RECENT,    /* the latest use before the gap first (made last), then bytes */
  SFC_PRIORITY_AREA_COPY, /* bytes x gap length per byte copied (a gap that needs no
                             swap-out counts twice; after the traffic LP's values only) */
  SFC_PRIORITY_COUNT
};
/* The priorities every timing mode is tried with (the first three). */
enum { SFC_PRIORITY_GRID = 3 };

/* The tuner's timing modes per priority: early swap-ins and late swap-out waits, early
 * swap-ins only, neither. */
enum { SFC_WINDOW_MODES = 4 };

/* window: auto's candidates (sfc_window_candidate): every mode of the first three
 * priorities, then the recent priority with the queue-ordered late waits only (the mode
 * it wins with; all four would cost the largest graphs a quarter more tuning): the
 * SFC_WINDOW_HIDDEN_FIRST candidates that evict hideable gaps first. Then
 * SFC_WINDOW_RANK_ONLY with schedule_rank_only: priorities bytes x length and length,
 * then bytes x length and bytes x length per copy after the traffic LP's values
 * (schedule_traffic_lp; the last SFC_WINDOW_LP), each with the late waits and with them
 * in queue order. Candidate
 * SFC_WINDOW_CANDIDATES + c (c < SFC_WINDOW_HIDDEN_FIRST) is candidate c with
 * schedule_late_homes (the finals' last; late homes change only which gaps are hideable,
 * so the rank-only candidates have no such twin). */
enum {
  SFC_WINDOW_HIDDEN_FIRST = SFC_WINDOW_MODES * SFC_PRIORITY_GRID + 1,
  SFC_WINDOW_RANK_ONLY = 8,
  SFC_WINDOW_LP = 4,
  SFC_WINDOW_CANDIDATES = SFC_WINDOW_HIDDEN_FIRST + SFC_WINDOW_RANK_ONLY
};
/* the finals rank every candidate and one late-homes twin, each a uint8_t */
_Static_assert(SFC_WINDOW_CANDIDATES + 1 <= sizeof(((sfc_ir_t *)0)->window_rank),
               "window_rank holds every candidate and the late-homes one");
_Static_assert(SFC_WINDOW_CANDIDATES + SFC_WINDOW_HIDDEN_FIRST <= UINT8_MAX,
               "window_rank's entries are uint8_t");

/* Per-op operand iteration: the steps pass and the tiler only (see the top). */
static inline uint32_t sfc_op_operand_count(const sfc_op_t *op) {
  return op->n_inputs + op->n_outputs + (op->workspace != SFC_PLAN_NONE ? 1u : 0u);
}

/* Operand i in the plan's order: inputs, then outputs, then the workspace. */
static inline uint32_t sfc_op_operand(const sfc_op_t *op, uint32_t i) {
  if (i < op->n_inputs)
    return op->inputs[i];
  i -= op->n_inputs;
  if (i < op->n_outputs)
    return op->outputs[i];
  return op->workspace;
}

/* A tensor no step touches (liveness): it gets no block. */
static inline bool sfc_ir_tensor_unused(const sfc_ir_t *ir, uint32_t t) {
  return ir->live[t].first_step == SFC_PLAN_NONE;
}

/* Whether the device arena is paged (device.arena: paged, plan format 1.7). */
static inline bool sfc_ir_paged(const sfc_ir_t *ir) {
  return ir->config->arena.kind == SFC_ARENA_PAGED;
}

/* What the device budget must hold: the page peak of a paged arena (as last computed by
 * sfc_ir_page_peak), else the packed arena. */
static inline uint64_t sfc_ir_device_bytes(const sfc_ir_t *ir) {
  return sfc_ir_paged(ir) ? ir->page_peak_bytes : ir->arena_bytes;
}

static inline bool sfc_kind_is_persistent(sfc_tensor_kind_t kind) {
  return kind == SFC_KIND_INPUT || kind == SFC_KIND_PARAM || kind == SFC_KIND_OPTIMIZER;
}

void sfc_ir_init(sfc_ir_t *ir, sfc_graph_t *graph, const sfc_config_t *config);
void sfc_ir_deinit(sfc_ir_t *ir); /* frees the IR's pool, not the graph */

void sfc_graph_destroy(sfc_graph_t *graph); /* NULL is a no-op */

/* Tiling in numbers: forward FT segments, their tiles, steps that recompute. */
void sfc_ir_tiling_counts(const sfc_ir_t *ir, uint32_t *segments, uint32_t *tiles,
                          uint32_t *recomputed);

#endif /* SFC_IR_H */
