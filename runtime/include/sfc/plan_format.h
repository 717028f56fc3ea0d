/* sfc/plan_format.h — the single definition of the sfc plan file (format v1.5).
 *
 * The compiler writes plans through these structs and reads them back through the
 * runtime's reader; the runtime replays them. docs/plan-format.md explains every
 * field with an example; this header is the normative layout.
 *
 * Layout of a file (all integers little-endian, all records fixed-width):
 *
 *   offset 0     sfc_plan_header_t   (128 bytes, CRC-32 over its first 124 bytes)
 *   header.section_table_offset
 *                sfc_plan_section_t[section_count]   (CRC-32 in header)
 *   each section's payload at a 64-byte aligned offset, CRC-32 in its table entry
 *
 * A section is an array of `count` records of `entry_bytes` each (STRINGS is a
 * byte blob with entry_bytes 1). Readers skip section kinds they do not know.
 *
 * Version policy: the major version changes when an old reader would misread a new
 * file; a reader refuses any other major. The minor version changes when fields are
 * appended to the end of a record or a section kind is added: a reader accepts any
 * minor, zero-fills fields a shorter (older) record lacks, ignores the tail of a
 * longer (newer) record, and skips unknown sections.
 *
 * Steps and time. A plan is a sequence of compute steps (one per op, or one per
 * (tile, op) inside a tiled segment). Step ranges are inclusive: a block with
 * first_step 3 and last_step 5 is occupied by its tensor from the start of step 3
 * until the end of step 5. Two device blocks conflict when their step ranges
 * intersect; conflicting blocks never share a byte.
 *
 * Dependencies. Work runs on three queues: compute (the framework's stream), H2D
 * (swap-ins) and D2H (swap-outs). Work on one queue completes in issue order. A
 * step or swap lists the nodes on other queues it must wait for in DEPS; a node
 * may only depend on nodes issued before it (so the graph is acyclic by
 * construction). Issue order within an iteration: for k = 0..step_count, first
 * every swap whose issue_step is k (in SWAPS order), then step k itself.
 */
#ifndef SFC_PLAN_FORMAT_H
#define SFC_PLAN_FORMAT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- constants --------------------------------------------------------------- */

/* PNG-style magic: the high bit catches 7-bit channels, \r\n catches CRLF
 * conversion, 0x1A stops DOS `type`, the final \n catches LF -> CRLF. */
#define SFC_PLAN_MAGIC         "\x89SFC\r\n\x1a\n"
#define SFC_PLAN_MAGIC_BYTES   8
#define SFC_PLAN_VERSION_MAJOR 1
#define SFC_PLAN_VERSION_MINOR 7
#define SFC_PLAN_ENDIAN_CHECK  UINT64_C(0x0102030405060708)
#define SFC_PLAN_FLOAT_CHECK   370.5 /* exactly representable; catches non-IEEE hosts */
#define SFC_PLAN_SECTION_ALIGN 64
#define SFC_PLAN_NONE          UINT32_MAX /* "no index" in any uint32_t reference */
#define SFC_PLAN_MAX_DIMS      8          /* tensor shape rank limit */
#define SFC_PLAN_BOX_DIMS      4          /* tile boxes describe up to 4 dims (N, C, H, W) */

/* Reader limits: counts and sizes are checked against these before they size an
 * allocation. They are far above any real training iteration. */
#define SFC_PLAN_MAX_FILE_BYTES    (UINT64_C(1) << 36) /* 64 GiB */
#define SFC_PLAN_MAX_SECTIONS      64u
#define SFC_PLAN_MAX_RECORDS       (UINT32_C(1) << 28)
#define SFC_PLAN_MAX_RECORD_BYTES  4096u
#define SFC_PLAN_MAX_STRINGS_BYTES (UINT64_C(1) << 30)
#define SFC_PLAN_MAX_ARENA_BYTES   (UINT64_C(1) << 50) /* 1 PiB */
/* Invariant 58 walks each window's taps per tile step operand: a plan whose steps add up
 * to more taps (kernel rows plus columns, per operand) is refused with SFC_ERR_LIMIT
 * before the walk, so a hostile kernel cannot stall the loader. VGG-16 at 20480² in 361
 * tiles needs about 2^17. */
#define SFC_PLAN_MAX_MAP_TAPS (UINT64_C(1) << 27)

/* ---- enumerations shared with the compiler's IR ------------------------------ */

typedef enum sfc_tensor_kind {
  SFC_KIND_INPUT = 0,      /* fed by the framework; lives the whole iteration */
  SFC_KIND_PARAM = 1,      /* weights; lives the whole iteration */
  SFC_KIND_OPTIMIZER = 2,  /* optimizer state (momentum, Adam moments); whole iteration */
  SFC_KIND_ACTIVATION = 3, /* producer to last consumer */
  SFC_KIND_GRAD = 4,       /* producer to last consumer */
  SFC_KIND_WORKSPACE = 5,  /* producer to last consumer (usually one op) */
  SFC_KIND_OUTPUT = 6,     /* producer to the end of the iteration (e.g. the loss) */
  SFC_KIND_COUNT = 7
} sfc_tensor_kind_t;

typedef enum sfc_phase {
  SFC_PHASE_FORWARD = 0,
  SFC_PHASE_LOSS = 1,
  SFC_PHASE_BACKWARD = 2,
  SFC_PHASE_UPDATE = 3,
  SFC_PHASE_COUNT = 4
} sfc_phase_t;

typedef enum sfc_dtype {
  SFC_DTYPE_UNKNOWN = 0,
  SFC_DTYPE_F64 = 1,
  SFC_DTYPE_F32 = 2,
  SFC_DTYPE_F16 = 3,
  SFC_DTYPE_BF16 = 4,
  SFC_DTYPE_I64 = 5,
  SFC_DTYPE_I32 = 6,
  SFC_DTYPE_I16 = 7,
  SFC_DTYPE_I8 = 8,
  SFC_DTYPE_U8 = 9,
  SFC_DTYPE_BOOL = 10,
  SFC_DTYPE_COUNT = 11
} sfc_dtype_t;

typedef enum sfc_plan_section_kind {
  SFC_SECTION_STRINGS = 1,       /* char blob; string references are byte offsets, 0 = "" */
  SFC_SECTION_META = 2,          /* exactly one sfc_plan_meta_t */
  SFC_SECTION_TENSORS = 3,       /* sfc_plan_tensor_t[] */
  SFC_SECTION_OPS = 4,           /* sfc_plan_op_t[], execution order of the source graph */
  SFC_SECTION_OP_OPERANDS = 5,   /* uint32_t[] tensor indices, see sfc_plan_op_t */
  SFC_SECTION_BLOCKS = 6,        /* sfc_plan_block_t[] in the device arena */
  SFC_SECTION_HOST_BLOCKS = 7,   /* sfc_plan_block_t[] in the pinned host staging arena */
  SFC_SECTION_STEPS = 8,         /* sfc_plan_step_t[] in execution order */
  SFC_SECTION_STEP_OPERANDS = 9, /* uint32_t[] device block indices, see sfc_plan_step_t */
  SFC_SECTION_SWAPS = 10,        /* sfc_plan_swap_t[] sorted by issue_step */
  SFC_SECTION_DEPS = 11,         /* sfc_plan_dep_t[] */
  SFC_SECTION_SEGMENTS = 12,     /* sfc_plan_segment_t[] tiled segments */
  SFC_SECTION_BOXES = 13,        /* sfc_plan_box_t[] per-step tile geometry */
  SFC_SECTION_KIND_MAX = 13
} sfc_plan_section_kind_t;

/* sfc_plan_tensor_t.flags */
#define SFC_TENSOR_PERSISTENT 0x1u /* lives across iterations (input, param, optimizer) */
#define SFC_TENSOR_EXTERNAL   0x2u /* owned by the framework, bound at session creation */
#define SFC_TENSOR_SYNTHETIC  0x4u /* created by the compiler (e.g. an op's workspace) */
#define SFC_TENSOR_UNUSED     0x8u /* declared but touched by no op: gets no block */

/* sfc_plan_block_t.flags */
#define SFC_BLOCK_PERSISTENT 0x1u /* contents survive to the next iteration: live at every step */
#define SFC_BLOCK_SWAPPED_IN 0x2u /* contents arrive by a swap-in, not by a producing op */
#define SFC_BLOCK_EXTERNAL   0x4u /* framework memory: offset and bytes are 0 */
#define SFC_BLOCK_PARTIAL    0x8u /* (1.1) holds only BOXES[box] of its tensor: one tile's buffer */

/* sfc_plan_step_t.flags */
#define SFC_STEP_TIMED     0x1u /* (1.1) time_us is the step's predicted duration */
#define SFC_STEP_RECOMPUTE 0x2u /* (1.2) reruns a forward op in a tile of a backward segment */

/* sfc_plan_segment_t.flags */
#define SFC_SEGMENT_BACKWARD                                                                       \
  0x1u /* (1.2) the backward of segment forward_segment: per tile,                                 \
          its recomputed forward ops, then its backward ops */
#define SFC_SEGMENT_SEED_HALO                                                                      \
  0x2u /* (1.5) tiling.halo seed: gradients exact on their boxes, not masked */

/* sfc_plan_op_t.map (1.5): how the op's indices along H and W map between its operands,
 * for tiled execution; invariant 58 checks every tile step's boxes against it. */
typedef enum sfc_plan_map {
  SFC_MAP_NONE = 0,           /* not recorded (plans before 1.5; ops no segment may hold) */
  SFC_MAP_WINDOW = 1,         /* convolution, pooling: output o reads input 0 by the window */
  SFC_MAP_POINTWISE = 2,      /* relu, add, mul: the same index in every 4-D operand */
  SFC_MAP_NEAREST = 3,        /* nearest upsampling of input 0 */
  SFC_MAP_BILINEAR = 4,       /* bilinear upsampling (align_corners false) of input 0 */
  SFC_MAP_CAT = 5,            /* channel concatenation: the same spatial index */
  SFC_MAP_VIEW = 6,           /* detach, empty: no data movement */
  SFC_MAP_GRAD_DATA = 7,      /* backward of backward_of's map: input 0 its output's gradient */
  SFC_MAP_GRAD_POINTWISE = 8, /* threshold_backward: the same index */
  SFC_MAP_GRAD_SUM = 9,       /* a gradient sum: output = the inputs' hull */
  SFC_MAP_GRAD_SLICE = 10,    /* cat's backward: each output a channel slice of input 0 */
  SFC_MAP_WINDOW_T = 11,      /* transposed convolution: output o gets input i when
                                 o = i*s - p + j*d; no zeros to supply */
  SFC_MAP_MAX = 11
} sfc_plan_map_t;

/* sfc_plan_swap_t.direction */
#define SFC_SWAP_OUT 1u /* device -> host (D2H queue) */
#define SFC_SWAP_IN  2u /* host -> device (H2D queue) */

/* sfc_plan_dep_t.node_kind */
#define SFC_NODE_STEP 0u /* index into STEPS */
#define SFC_NODE_SWAP 1u /* index into SWAPS */

/* sfc_plan_header_t.flags */
#define SFC_PLAN_OVER_BUDGET                                                                       \
  0x1u /* the device need (arena_bytes, or a PAGED plan's                                          \
          META.page_peak_bytes) > budget_bytes: the compiler said so */
#define SFC_PLAN_PAGED                                                                             \
  0x2u /* (1.7) the device arena is paged: arena_bytes is its virtual                              \
          size, pages of META.va_chunk_bytes are backed only while live                            \
          blocks touch them, META.page_peak_bytes at most at once;                                 \
          an unknown bit (ignored) in a file of minor < 7 */

/* ---- records ----------------------------------------------------------------- */

typedef struct sfc_plan_header {
  uint8_t magic[SFC_PLAN_MAGIC_BYTES]; /*   0 SFC_PLAN_MAGIC */
  uint16_t version_major;              /*   8 */
  uint16_t version_minor;              /*  10 */
  uint32_t header_bytes;               /*  12 sizeof(sfc_plan_header_t) when written */
  uint64_t endian_check;               /*  16 SFC_PLAN_ENDIAN_CHECK */
  double float_check;                  /*  24 SFC_PLAN_FLOAT_CHECK */
  uint64_t file_bytes;                 /*  32 size of the whole file */
  uint64_t section_table_offset;       /*  40 multiple of 8 */
  uint32_t section_count;              /*  48 */
  uint32_t section_entry_bytes;        /*  52 >= sizeof(sfc_plan_section_t): never zero-filled */
  uint32_t section_table_crc32;        /*  56 CRC-32 of the section table */
  uint32_t alignment;                  /*  60 every device offset is a multiple (power of 2) */
  uint64_t arena_bytes;                /*  64 device arena size */
  uint64_t host_arena_bytes;           /*  72 pinned host staging arena size */
  uint64_t budget_bytes;               /*  80 device budget compiled for (0 = none) */
  uint64_t host_budget_bytes;          /*  88 host staging budget (0 = none) */
  uint32_t flags;                      /*  96 SFC_PLAN_* */
  uint32_t reserved[6];                /* 100 zero */
  uint32_t header_crc32;               /* 124 CRC-32 of bytes [0, 124) */
} sfc_plan_header_t;                   /* 128 */

typedef struct sfc_plan_section {
  uint32_t kind;        /*  0 sfc_plan_section_kind_t */
  uint32_t entry_bytes; /*  4 bytes per record (1 for STRINGS) */
  uint64_t offset;      /*  8 from the start of the file, multiple of 64 */
  uint64_t bytes;       /* 16 payload size = count * entry_bytes */
  uint32_t count;       /* 24 number of records */
  uint32_t crc32;       /* 28 CRC-32 of the payload */
} sfc_plan_section_t;   /* 32 */

typedef struct sfc_plan_meta {
  uint32_t graph_name;         /*   0 string */
  uint32_t profile_name;       /*   4 string: device profile compiled for */
  uint32_t generator;          /*   8 string: "sfc 0.1.0" */
  uint32_t graph_op_count;     /*  12 ops in the source graph */
  uint32_t graph_tensor_count; /*  16 tensors in the source graph */
  uint32_t flags;              /*  20 zero */
  uint64_t in_core_peak_bytes; /*  24 max live bytes with everything on the device */
  uint64_t lower_bound_bytes;  /*  32 max over steps of the device blocks' live bytes */
  double h2d_bytes_per_s;      /*  40 host link, for the sim device */
  double d2h_bytes_per_s;      /*  48 */
  double duplex_factor;        /*  56 each direction's share when both copy at once */
  double copy_latency_s;       /*  64 fixed cost per copy */
  uint64_t va_chunk_bytes;     /*  72 physical chunk size for virtual-addressing mode */
  uint32_t times_device;       /*  80 (1.1) string: device the ops' time_us were measured on */
  uint32_t reserved0;          /*  84 zero */
  double time_bound_s;         /*  88 (1.4) least iteration time of any schedule within the
                                *     budget, the compiler's bound (s); 0: not recorded */
  uint64_t page_peak_bytes;    /*  96 (1.7) PAGED: the most bytes of va_chunk_bytes pages the
                                *     live device blocks touch at one step; else 0 */
  uint64_t reserved1;          /* 104 zero */
} sfc_plan_meta_t;             /* 112 */

typedef struct sfc_plan_tensor {
  int64_t graph_id;                 /*  0 id in the source graph (-1: synthetic) */
  uint64_t bytes;                   /*  8 logical size */
  uint32_t name;                    /* 16 string */
  uint8_t kind;                     /* 20 sfc_tensor_kind_t */
  uint8_t dtype;                    /* 21 sfc_dtype_t */
  uint8_t ndim;                     /* 22 0..SFC_PLAN_MAX_DIMS */
  int8_t batch_axis;                /* 23 axis carrying the batch, -1 none */
  uint32_t flags;                   /* 24 SFC_TENSOR_* */
  uint32_t reserved;                /* 28 zero */
  int64_t shape[SFC_PLAN_MAX_DIMS]; /* 32 first ndim entries used */
} sfc_plan_tensor_t;                /* 96 */

typedef struct sfc_plan_op {
  int64_t graph_id;       /*  0 id in the source graph */
  uint32_t name;          /*  8 string */
  uint32_t type;          /* 12 string, e.g. "conv2d" */
  uint8_t phase;          /* 16 sfc_phase_t */
  uint8_t reserved0[3];   /* 17 zero */
  uint32_t flags;         /* 20 zero */
  uint32_t operand_begin; /* 24 OP_OPERANDS[operand_begin ..] = inputs, outputs, temps */
  uint16_t input_count;   /* 28 */
  uint16_t output_count;  /* 30 */
  uint16_t temp_count;    /* 32 compiler-made temporaries (workspace) */
  uint16_t reserved1;     /* 34 zero */
  uint32_t backward_of;   /* 36 op index this op differentiates, or SFC_PLAN_NONE */
  double time_us;         /* 40 measured time, < 0 when unknown */
  uint64_t flops;         /* 48 0 when unknown */
  uint64_t reserved2;     /* 56 zero */
  uint8_t map;            /* 64 (1.5) sfc_plan_map_t */
  uint8_t reserved3[3];   /* 65 zero */
  int32_t kernel[2];      /* 68 (1.5) SFC_MAP_WINDOW(_T): H, W; else zero */
  int32_t stride[2];      /* 76 */
  int32_t padding[2];     /* 84 leading zeros */
  int32_t dilation[2];    /* 92 */
  uint32_t reserved4;     /* 100 zero */
} sfc_plan_op_t;          /* 104 */

typedef struct sfc_plan_block {
  uint64_t offset;     /*  0 byte offset in its arena */
  uint64_t bytes;      /*  8 reserved bytes, >= the tensor's bytes */
  uint32_t tensor;     /* 16 tensor index */
  uint32_t first_step; /* 20 inclusive */
  uint32_t last_step;  /* 24 inclusive */
  uint32_t flags;      /* 28 SFC_BLOCK_* */
  uint32_t box;        /* 32 (1.1) BOXES index when SFC_BLOCK_PARTIAL, else 0 */
  uint32_t reserved;   /* 36 zero */
} sfc_plan_block_t;    /* 40 */

typedef struct sfc_plan_step {
  uint32_t op;            /*  0 op index */
  uint32_t segment;       /*  4 segment index, or SFC_PLAN_NONE when not tiled */
  uint32_t tile;          /*  8 tile index within the segment, or SFC_PLAN_NONE */
  uint32_t operand_begin; /* 12 STEP_OPERANDS[operand_begin ..], one per op operand */
  uint32_t box_begin;     /* 16 BOXES[box_begin ..], one per op operand, or SFC_PLAN_NONE */
  uint32_t dep_begin;     /* 20 DEPS[dep_begin .. dep_begin + dep_count) */
  uint32_t dep_count;     /* 24 */
  uint32_t flags;         /* 28 SFC_STEP_* */
  double time_us;         /* 32 (1.1) predicted duration when SFC_STEP_TIMED, else 0 */
} sfc_plan_step_t;        /* 40 */

typedef struct sfc_plan_swap {
  uint64_t bytes;        /*  0 bytes copied */
  uint32_t tensor;       /*  8 tensor index */
  uint32_t device_block; /* 12 source (OUT) or destination (IN) */
  uint32_t host_block;   /* 16 destination (OUT) or source (IN) */
  uint32_t issue_step;   /* 20 issued before step issue_step (step_count = at the end) */
  uint32_t dep_begin;    /* 24 DEPS[dep_begin .. dep_begin + dep_count) */
  uint32_t dep_count;    /* 28 */
  uint8_t direction;     /* 32 SFC_SWAP_OUT or SFC_SWAP_IN */
  uint8_t reserved0[3];  /* 33 zero */
  uint32_t flags;        /* 36 zero */
  uint64_t reserved1;    /* 40 zero */
} sfc_plan_swap_t;       /* 48 */

typedef struct sfc_plan_dep {
  uint32_t node_kind; /* 0 SFC_NODE_STEP or SFC_NODE_SWAP */
  uint32_t index;     /* 4 */
} sfc_plan_dep_t;     /* 8 */

/* SEGMENTS are sorted by first_step and disjoint; exactly the steps in
 * [first_step, first_step + step_count) name the segment. */
typedef struct sfc_plan_segment {
  uint32_t first_step;              /*  0 the segment's steps are contiguous */
  uint32_t step_count;              /*  4 */
  uint32_t first_op;                /*  8 the segment's ops are contiguous in OPS */
  uint32_t op_count;                /* 12 */
  uint32_t tile_count;              /* 16 product of grid */
  uint32_t flags;                   /* 20 SFC_SEGMENT_* (1.2; zero before) */
  uint32_t grid[SFC_PLAN_BOX_DIMS]; /* 24 tiles along N, C, H, W */
  uint32_t forward_segment;         /* 40 (1.2) a BACKWARD segment's forward segment, else 0 */
  uint32_t reserved;                /* 44 zero */
} sfc_plan_segment_t;               /* 48 */

typedef struct sfc_plan_box {
  uint32_t tensor;                    /*   0 tensor index */
  uint32_t ndim;                      /*   4 1..SFC_PLAN_BOX_DIMS */
  int64_t lo[SFC_PLAN_BOX_DIMS];      /*   8 half-open [lo, hi) in the tensor's index space */
  int64_t hi[SFC_PLAN_BOX_DIMS];      /*  40 */
  uint32_t pad_lo[SFC_PLAN_BOX_DIMS]; /*  72 zeros to supply before lo (clipped halo) */
  uint32_t pad_hi[SFC_PLAN_BOX_DIMS]; /*  88 zeros to supply after hi */
} sfc_plan_box_t;                     /* 104 */

#if defined(__STDC_VERSION__) && __STDC_VERSION__ >= 201112L
_Static_assert(sizeof(sfc_plan_header_t) == 128, "plan header layout");
_Static_assert(sizeof(sfc_plan_section_t) == 32, "plan section layout");
_Static_assert(sizeof(sfc_plan_meta_t) == 112, "plan meta layout");
_Static_assert(sizeof(sfc_plan_tensor_t) == 96, "plan tensor layout");
_Static_assert(sizeof(sfc_plan_op_t) == 104, "plan op layout");
_Static_assert(sizeof(sfc_plan_block_t) == 40, "plan block layout");
_Static_assert(sizeof(sfc_plan_step_t) == 40, "plan step layout");
_Static_assert(sizeof(sfc_plan_swap_t) == 48, "plan swap layout");
_Static_assert(sizeof(sfc_plan_dep_t) == 8, "plan dep layout");
_Static_assert(sizeof(sfc_plan_segment_t) == 48, "plan segment layout");
_Static_assert(sizeof(sfc_plan_box_t) == 104, "plan box layout");
#endif

/* ---- the in-memory view -------------------------------------------------------
 * What a reader produces and a writer consumes: the header and one array per
 * section. The reader's view points into memory the plan object owns; the
 * compiler builds its own view from its IR and hands it to the writer. */
typedef struct sfc_plan_view {
  sfc_plan_header_t header;
  const char *strings; /* [strings_bytes], strings[0] == '\0' */
  uint64_t strings_bytes;
  sfc_plan_meta_t meta;
  const sfc_plan_tensor_t *tensors; /* [tensor_count] */
  uint32_t tensor_count;
  const sfc_plan_op_t *ops; /* [op_count] */
  uint32_t op_count;
  const uint32_t *op_operands; /* [op_operand_count] */
  uint32_t op_operand_count;
  const sfc_plan_block_t *blocks; /* [block_count] */
  uint32_t block_count;
  const sfc_plan_block_t *host_blocks; /* [host_block_count] */
  uint32_t host_block_count;
  const sfc_plan_step_t *steps; /* [step_count] */
  uint32_t step_count;
  const uint32_t *step_operands; /* [step_operand_count] */
  uint32_t step_operand_count;
  const sfc_plan_swap_t *swaps; /* [swap_count] */
  uint32_t swap_count;
  const sfc_plan_dep_t *deps; /* [dep_count] */
  uint32_t dep_count;
  const sfc_plan_segment_t *segments; /* [segment_count] */
  uint32_t segment_count;
  const sfc_plan_box_t *boxes; /* [box_count] */
  uint32_t box_count;
} sfc_plan_view_t;

/* Returns the string at byte offset `ref` of the view's string blob ("" when out of
 * range; the reader has already checked every reference). */
static inline const char *sfc_plan_string(const sfc_plan_view_t *view, uint32_t ref) {
  return (view->strings && ref < view->strings_bytes) ? view->strings + ref : "";
}

/* Whether the plan's device arena is paged (SFC_PLAN_PAGED, a bit that means nothing in
 * a file written before 1.7), and the device bytes it needs: the arena, or a paged
 * arena's page peak. */
static inline int sfc_plan_paged(const sfc_plan_view_t *view) {
  return (view->header.flags & SFC_PLAN_PAGED) && view->header.version_minor >= 7;
}
static inline uint64_t sfc_plan_device_need(const sfc_plan_view_t *view) {
  return sfc_plan_paged(view) ? view->meta.page_peak_bytes : view->header.arena_bytes;
}

/* CRC-32 (IEEE 802.3, reflected, polynomial 0xEDB88320), as zlib's crc32():
 * start with crc = 0, feed chunks, the result of one call is the next call's crc. */
uint32_t sfc_crc32(uint32_t crc, const void *data, size_t bytes);

/* Names used in files and messages ("activation", "backward", "f32"); NULL when out
 * of range. The parse functions return -1 for an unknown name. */
const char *sfc_tensor_kind_name(int kind);
const char *sfc_phase_name(int phase);
const char *sfc_dtype_name(int dtype);
int sfc_tensor_kind_parse(const char *name);
int sfc_phase_parse(const char *name);
int sfc_dtype_parse(const char *name);
uint32_t sfc_dtype_bytes(int dtype); /* 0 for SFC_DTYPE_UNKNOWN */

#ifdef __cplusplus
}
#endif

#endif /* SFC_PLAN_FORMAT_H */
