/* tiler.h — FT segments: which runs of spatial ops run tile by tile, every tile's boxes,
 * and the IR rewrite into per-tile steps (issue 12 items 2–4; docs/algorithms.md "FT
 * tiling"; seed segmented-fused-tiled §3–4, Listings 2–4).
 *
 * A segment is a run of forward ops [fwd_begin, fwd_end) that the op catalog can tile,
 * with the backward ops of those ops [bwd_begin, bwd_end). Its output (the tensor its
 * last op hands to the rest of the network) is cut by a grid into disjoint tiles.
 *
 *   forward  for each tile: every forward op on its tile's boxes (the output's part of
 *            the tile, every other tensor on the receptive field of that part);
 *   backward for each tile: recompute the forward ops whose results were not kept, then
 *            every backward op on the tile's boxes; weight gradients and the gradient of
 *            the segment's input are summed over tiles.
 *
 * Halo mode "masked" (the default): tile t backpropagates the output gradient
 * restricted to its own output tile O_t (zero elsewhere). By linearity the gradients
 * summed over tiles equal the untiled ones; the tile's gradient of any tensor X is zero
 * outside X's forward receptive field of O_t, so the backward needs no halo of its own:
 * every tensor and its gradient use one box per tile, the receptive field.
 *
 * Halo mode "seed" (the SFT artifact's, Listing 4 and Figure 7): tile t computes every
 * gradient the segment hands on exactly on its own disjoint tile of that tensor (the
 * grid applied to its shape), and every weight gradient over its own disjoint tile of
 * the convolution's output (its gradient's iteration space, "the initial iterSpace").
 * Going backwards each gradient is needed on the hull of what its readers read — a
 * backward halo — and is computed exactly there (not masked); the forward is recomputed
 * on what the backward reads of it. A convolution_backward then runs as two steps per
 * tile: the input gradient (on its box, from the output gradient's haloed box; the
 * weight and bias gradients' boxes empty: not computed) and the weight and bias
 * gradients (from the output gradient's disjoint tile; the input gradient's box empty).
 * The forward segment is the same as in masked mode.
 *
 * Tensors a segment touches, by role:
 *   WHOLE       not spatial here (weights, biases): read whole by every tile;
 *   CHECKPOINT  spatial and kept whole: read (the segment's input, the output's
 *               gradient) or written (the output) one box per tile;
 *   PARTIAL     made and used only inside the segment: one box per tile, recomputed in
 *               the backward (a per-tile buffer);
 *   ACCUMULATE  a gradient the segment hands on (weights', the input's): every tile adds
 *               its part; the tensor is zero before the segment's first tile.
 */
#ifndef SFC_TILER_H
#define SFC_TILER_H

#include "ir.h"

enum { SFC_FT_GRID_N = 0, SFC_FT_GRID_C = 1, SFC_FT_GRID_H = 2, SFC_FT_GRID_W = 3 };

typedef struct sfc_ft_segment {
  uint32_t fwd_begin, fwd_end; /* forward ops [fwd_begin, fwd_end) */
  uint32_t bwd_begin, bwd_end; /* their backward ops; equal when the graph has none */
  uint32_t output;             /* the tensor the tiles partition */
  uint32_t grid[4];            /* tiles along N, C (always 1), H, W */
  uint8_t halo;                /* sfc_tiling_halo_t: SFC_HALO_MASKED (0) or SFC_HALO_SEED */
} sfc_ft_segment_t;

typedef enum sfc_ft_role {
  SFC_FT_ROLE_NONE = 0, /* not touched by the segment */
  SFC_FT_ROLE_WHOLE,
  SFC_FT_ROLE_CHECKPOINT,
  SFC_FT_ROLE_PARTIAL,
  SFC_FT_ROLE_ACCUMULATE,
} sfc_ft_role_t;

/* What the tiler knows of one segment (sfc_ft_analyze). Arrays are per tensor / per op
 * of the graph, allocated in the caller's pool. */
typedef struct sfc_ft_info {
  uint8_t *role;      /* [n_tensors] sfc_ft_role_t */
  uint32_t *fwd_of;   /* [n_tensors] the forward tensor a gradient belongs to (itself for a
                         forward tensor, NONE for weights' gradients and untouched ones) */
  bool *recompute;    /* [n_ops] forward ops the backward reruns per tile */
  uint32_t n_partial; /* tensors recomputed per tile */
} sfc_ft_info_t;

/* A tile's part of a tensor: [lo, hi) on N, C, H, W (a tensor of rank < 4 is whole). */
typedef struct sfc_ft_box {
  int64_t lo[4], hi[4];
} sfc_ft_box_t;

/* Checks that a segment can be tiled and classifies what it touches. Errors (the reason
 * in err, SFC_ERR_BAD_INPUT): an op the catalog does not know or that ends a segment, a
 * backward op whose gradients cannot be matched to forward tensors, a tensor made inside
 * and used outside other than through the output, a grid that does not fit the output. */
sfc_status_t sfc_ft_analyze(const sfc_graph_t *g, const sfc_ft_segment_t *s, sfc_ft_info_t *info,
                            sfc_pool_t *pool, sfc_error_t *err);

/* Fills rec->map and its window (plan format 1.5) for op `op_index`: the map its tile
 * steps' boxes follow (invariant 58 of docs/plan-format.md). */
void sfc_ft_op_map(const sfc_graph_t *g, uint32_t op_index, sfc_plan_op_t *rec);

uint32_t sfc_ft_tile_count(const sfc_ft_segment_t *s);

/* The boxes of tile `tile` (0 .. tile_count - 1, row-major over the grid) for every
 * tensor the segment touches (boxes[t], [n_tensors]; untouched tensors get an empty
 * box), in the backward segment's tile (seed: the forward tensors on what the backward
 * reads, recomputed there). A box may be empty (a tile whose receptive field misses a
 * tensor). */
void sfc_ft_tile_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s, const sfc_ft_info_t *info,
                       uint32_t tile, sfc_ft_box_t *boxes);

/* The same in the forward segment's tile: every forward tensor on its forward receptive
 * field of the tile's output (both modes; gradients' boxes are left empty). */
void sfc_ft_tile_boxes_forward(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                               const sfc_ft_info_t *info, uint32_t tile, sfc_ft_box_t *boxes);

/* The boxes of op op_index's operands (plan order: inputs, outputs, workspace) in the tile
 * whose tensor boxes are tb (sfc_ft_tile_boxes): a forward op's outputs on their box, its
 * data inputs on what that reads; a backward op's on the box its input gradient can be
 * nonzero on, and the forward input's read box of it; weights whole. pad_lo/pad_hi (may
 * be NULL; [operands][4]) get the zeros a window supplies around a read box. Masked mode
 * (a seed segment's steps get their boxes in the rewrite). */
void sfc_ft_op_boxes(const sfc_graph_t *g, const sfc_ft_segment_t *s, const sfc_ft_info_t *info,
                     const sfc_ft_box_t *tb, uint32_t op_index, sfc_ft_box_t *boxes,
                     uint32_t (*pad_lo)[4], uint32_t (*pad_hi)[4]);

/* Bytes of a box of tensor t (its element size times the box's elements). */
uint64_t sfc_ft_box_bytes(const sfc_graph_t *g, uint32_t t, const sfc_ft_box_t *b);

/* The largest sum, over tiles, of the PARTIAL tensors' box bytes: what one tile needs
 * beyond the checkpoints. */
uint64_t sfc_ft_partial_peak(const sfc_graph_t *g, const sfc_ft_segment_t *s,
                             const sfc_ft_info_t *info, sfc_ft_box_t *scratch);

/* Finds segments (the partitioner): runs of forward ops the catalog tiles, cut greedily
 * from the front: the longest segment whose inner tensors are used only inside it and
 * its backward ops, whose output (kept whole: a checkpoint) takes at most
 * checkpoint_bytes unless the run ends there, and which some grid fits: near-square
 * spatial grids by tile count, then batch splits, the smallest whose recomputed tensors
 * take at most tile_bytes on a sample of tiles, within max_tiles and min_tile. Segments
 * that fit with one tile are kept only when `all` is set. Returns the count in *n. */
sfc_status_t sfc_ft_partition(const sfc_graph_t *g, uint64_t tile_bytes, uint64_t checkpoint_bytes,
                              uint32_t max_tiles, uint32_t min_tile, bool all,
                              sfc_ft_segment_t **segments, uint32_t *n, sfc_pool_t *pool,
                              sfc_error_t *err);
/* The same with the segments' halo mode (sfc_tiling_halo_t) sizing the grids. */
sfc_status_t sfc_ft_partition_halo(const sfc_graph_t *g, uint8_t halo, uint64_t tile_bytes,
                                   uint64_t checkpoint_bytes, uint32_t max_tiles, uint32_t min_tile,
                                   bool all, sfc_ft_segment_t **segments, uint32_t *n,
                                   sfc_pool_t *pool, sfc_error_t *err);

/* The partitioner's settings (sfc_ft_partition_with). */
typedef struct sfc_ft_partition_opts {
  uint8_t halo;              /* sfc_tiling_halo_t: the boxes that size the grids */
  uint64_t tile_bytes;       /* one tile's recomputed tensors at most */
  uint64_t checkpoint_bytes; /* a segment's output kept whole (where it ends) at most */
  uint32_t max_tiles, min_tile;
  uint32_t grid[2]; /* tiling.grid: rows, columns forced on every segment; {0, 0}:
                       chosen per segment (near-square, then batch splits) */
  bool longest;     /* tiling.segments longest: no checkpoint budget, and the
                       longest segment the tiler accepts from each start */
  bool all;         /* keep segments that fit with one tile too */
} sfc_ft_partition_opts_t;

/* The partitioner with every setting. A forced grid (grid[0], grid[1] > 0) replaces the
 * grid choice: every segment found is tiled with it (rows x columns of its output, no
 * batch split; 1 x 1 too: one tile, the forward recomputed in the backward), its length
 * still chosen so that a tile fits tile_bytes where it can; a segment end whose output
 * cannot take the grid (fewer rows or columns than the grid, or tiles under min_tile) is
 * passed over, and when that leaves a run's start with none, or drops the whole run
 * under `longest`, the result is SFC_ERR_BAD_INPUT naming the segment and its output's
 * size. */
sfc_status_t sfc_ft_partition_with(const sfc_graph_t *g, const sfc_ft_partition_opts_t *opts,
                                   sfc_ft_segment_t **segments, uint32_t *n, sfc_pool_t *pool,
                                   sfc_error_t *err);

/* The settings of cfg's tiling section (halo, max_tiles, min_tile, grid, segments) with
 * these budgets. */
sfc_ft_partition_opts_t sfc_ft_partition_config(const sfc_config_t *cfg, uint64_t tile_bytes,
                                                uint64_t checkpoint_bytes);

/* Replaces the steps of each segment's ops by per-tile steps (forward tiles; then, at
 * the segment's backward ops, per tile: the recomputed forward ops and the backward ops;
 * seed mode: a convolution_backward with an input gradient as two steps, above),
 * every use with its tile's box. Reads and rewrites ir->steps, uses, boxes (the steps
 * pass's output); segments sorted and disjoint. step_recompute marks recomputed steps. */
sfc_status_t sfc_ft_rewrite(sfc_ir_t *ir, const sfc_ft_segment_t *segments, uint32_t n,
                            sfc_error_t *err);

/* The runs of steps in which one tile of a segment uses a per-tile tensor (uses flagged
 * SFC_USE_PARTIAL): fn(ctx, tensor, first step, last step, hull of the run's boxes),
 * once per run. The blocks pass makes one PARTIAL block of each; liveness counts their
 * bytes. */
typedef void (*sfc_ft_run_fn)(void *ctx, uint32_t tensor, uint32_t first, uint32_t last,
                              const sfc_plan_box_t *hull);
sfc_status_t sfc_ft_partial_runs(const sfc_ir_t *ir, sfc_ft_run_fn fn, void *ctx, sfc_error_t *err);

/* Sets partial[t] (zeroed, [n_tensors]) for every per-tile tensor; returns how many. */
uint32_t sfc_ft_mark_partial(const sfc_ir_t *ir, bool *partial);

/* Bytes of box b of tensor x (its elements times the element size). */
uint64_t sfc_ft_plan_box_bytes(const sfc_tensor_t *x, const sfc_plan_box_t *b);

/* Why FT tiling leaves op i's step whole, for sfc compile's hint when no schedule fits:
 * one sentence into buf (n bytes, NUL-terminated), true when there is one. Spatial ops
 * only (the op's forward op has a 4-D output): the op, or its forward op, ends segments
 * or is not in the catalog (the catalog's reason); or it can run in tiles but the run
 * of tileable ops around it is bounded by such ops (named), so a segment there keeps
 * its inputs and output whole on the device while its tiles run. */
bool sfc_ft_why_whole(const sfc_graph_t *g, uint32_t i, char *buf, size_t n);

#endif /* SFC_TILER_H */
