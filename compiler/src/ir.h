/* ir.h — the compiler's intermediate representation.
 *
 * One sfc_ir_t flows through the pipeline (pipeline.c). The graph part is filled by
 * the graph loader and never changes afterwards, except that loading appends one
 * synthetic workspace tensor per op that declares workspace_bytes. Each pass reads
 * some fields and writes others; the comment on every field names its writer.
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
  uint32_t flags; /* SFC_TENSOR_PERSISTENT / SYNTHETIC (loader),
                     SFC_TENSOR_UNUSED (liveness) */
  /* liveness */
  uint32_t first_step; /* inclusive; SFC_PLAN_NONE when unused */
  uint32_t last_step;  /* inclusive */
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

typedef struct sfc_graph {
  const char *name;      /* "" when absent */
  int64_t batch;         /* root "batch": the batch it was recorded at; 0 when absent */
  sfc_tensor_t *tensors; /* [n_tensors]; file tensors first, then synthetic */
  uint32_t n_tensors;
  uint32_t n_file_tensors; /* tensors declared in the file */
  sfc_op_t *ops;           /* [n_ops] execution order */
  uint32_t n_ops;
  sfc_pool_t pool; /* owns every array and string above */
} sfc_graph_t;

/* One compute step: an op, or one tile of an op inside a tiled segment. */
typedef struct sfc_step {
  uint32_t op;
  uint32_t segment; /* SFC_PLAN_NONE when untiled */
  uint32_t tile;    /* SFC_PLAN_NONE when untiled */
} sfc_step_t;

/* One residency of a tensor in an arena: the unit the packer places. */
typedef struct sfc_block {
  uint32_t tensor;
  uint32_t first_step; /* inclusive */
  uint32_t last_step;  /* inclusive */
  uint32_t flags;      /* SFC_BLOCK_* */
  uint64_t bytes;      /* tensor bytes rounded up to the alignment */
  uint64_t offset;     /* packer */
} sfc_block_t;

typedef struct sfc_ir {
  sfc_graph_t *graph;         /* loader; not owned */
  const sfc_config_t *config; /* config loader + CLI overrides; not owned */

  /* steps pass */
  sfc_step_t *steps; /* [n_steps] */
  uint32_t n_steps;

  /* liveness pass */
  uint64_t *live_bytes;  /* [n_steps] logical bytes live during each step */
  uint64_t in_core_peak; /* max of live_bytes: everything stays on the device */

  /* blocks pass (the window scheduler will split residencies here) */
  sfc_block_t *blocks; /* [n_blocks] device arena residencies */
  uint32_t n_blocks;
  uint64_t lower_bound; /* max over steps of live block bytes */

  /* pack pass */
  uint64_t arena_bytes;    /* peak of the packing */
  const char *packer_name; /* algorithm that produced the packing */
  bool packing_optimal;    /* the packer proved arena_bytes optimal */
  double pack_seconds;

  /* plan pass: the view emit writes and verify checks */
  sfc_plan_view_t plan;
  bool fits_budget;

  sfc_pool_t pool; /* owns every pass's arrays */
} sfc_ir_t;

/* Per-op operand iteration helpers used by several passes. */
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

static inline bool sfc_kind_is_persistent(sfc_tensor_kind_t kind) {
  return kind == SFC_KIND_INPUT || kind == SFC_KIND_PARAM || kind == SFC_KIND_OPTIMIZER;
}

void sfc_ir_init(sfc_ir_t *ir, sfc_graph_t *graph, const sfc_config_t *config);
void sfc_ir_deinit(sfc_ir_t *ir); /* frees the IR's pool, not the graph */

void sfc_graph_destroy(sfc_graph_t *graph); /* NULL is a no-op */

#endif /* SFC_IR_H */
