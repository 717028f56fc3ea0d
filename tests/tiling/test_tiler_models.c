/* test_tiler_models.c — the partitioner and the IR rewrite on the bundled exports
 * (the plans/ folder's .json.gz files: real PyTorch graphs, not written for this test).
 *
 * For each model and tile budget: every segment the partitioner returns is accepted by
 * sfc_ft_analyze, the rewrite succeeds, and the rewritten steps say what the plan will
 * have to: each box lies inside its tensor; in each forward segment the tiles' boxes of
 * every kept tensor the segment writes cover it exactly once (volumes add up to the
 * tensor's and no two overlap); accumulated uses are outputs read and written; the step
 * count is tiles x ops plus the recomputed ops; untiled ops keep their one step.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "batch_scale.h"
#include "check.h"
#include "halo_csv.h"
#include "emit.h"
#include "graph_build.h"
#include "image_scale.h"
#include "load_graph.h"
#include "passes.h"
#include "pipeline.h"
#include "sfc/steps.h"
#include "sfcrt.h"
#include "tiler.h"
#include "verify.h"

static bool boxes_overlap(const sfc_plan_box_t *a, const sfc_plan_box_t *b) {
  for (int d = 0; d < 4; d++)
    if (a->hi[d] <= b->lo[d] || b->hi[d] <= a->lo[d])
      return false;
  return true;
}

static uint64_t box_volume(const sfc_plan_box_t *b) {
  uint64_t v = 1;
  for (int d = 0; d < 4; d++)
    v *= (uint64_t)(b->hi[d] - b->lo[d]);
  return v;
}

static void check_model_halo(const char *file, uint64_t tile_bytes, uint8_t halo) {
  const char *src = getenv("SFC_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/plans/%s", src ? src : ".", file);
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  if (sfc_graph_load_file(path, &g, &err) != SFC_OK) {
    fprintf(stderr, "%s\n", err.message);
    CHECK(0);
    return;
  }
  sfc_pool_t pool = {0};
  sfc_ft_segment_t *segs = NULL;
  uint32_t n = 0;
  CHECK(sfc_ft_partition_halo(g, halo, tile_bytes, 8 * tile_bytes, 1024, 4, false, &segs, &n, &pool,
                              &err) == SFC_OK);
  sfc_config_t cfg;
  sfc_config_defaults(&cfg);
  sfc_ir_t ir;
  sfc_ir_init(&ir, g, &cfg);
  CHECK(sfc_pass_steps(&ir, &err) == SFC_OK);
  uint64_t expect_steps = g->n_ops;
  uint32_t tiles_total = 0;
  for (uint32_t k = 0; k < n; k++) {
    sfc_ft_info_t info;
    CHECK(sfc_ft_analyze(g, &segs[k], &info, &pool, &err) == SFC_OK);
    uint32_t tiles = sfc_ft_tile_count(&segs[k]), recompute = 0;
    for (uint32_t i = segs[k].fwd_begin; i < segs[k].fwd_end; i++)
      recompute += info.recompute[i];
    uint32_t fwd = segs[k].fwd_end - segs[k].fwd_begin, bwd = segs[k].bwd_end - segs[k].bwd_begin;
    CHECK_EQ_U64(segs[k].halo, halo);
    /* seed: a convolution_backward with an input gradient and a weight's is two steps */
    for (uint32_t i = segs[k].bwd_begin; halo == SFC_HALO_SEED && i < segs[k].bwd_end; i++) {
      const sfc_op_t *op = &g->ops[i];
      if (strcmp(op->type, "convolution_backward") != 0 || op->n_outputs < 2)
        continue;
      const sfc_tensor_t *dx = &g->tensors[op->outputs[0]];
      const sfc_tensor_t *x = &g->tensors[g->ops[op->backward_of].inputs[0]];
      if (dx->ndim == 4 && memcmp(dx->shape, x->shape, 4 * sizeof x->shape[0]) == 0 &&
          info.role[op->outputs[0]] != SFC_FT_ROLE_WHOLE && dx->kind != SFC_KIND_WORKSPACE)
        expect_steps += tiles;
    }
    expect_steps += (uint64_t)(tiles - 1) * (fwd + bwd) + (uint64_t)tiles * recompute;
    tiles_total += tiles;
  }
  sfc_status_t st = sfc_ft_rewrite(&ir, segs, n, &err);
  if (st != SFC_OK)
    fprintf(stderr, "%s: %s\n", file, err.message);
  CHECK(st == SFC_OK);
  CHECK_EQ_U64(ir.n_steps, expect_steps);
  /* boxes inside tensors; accumulate only on outputs, written by a segment's first step
   * writing them, read and written by the others */
  uint32_t bad_box = 0, bad_acc = 0;
  uint32_t *acc = calloc(g->n_tensors, sizeof *acc);
  CHECK(acc != NULL);
  for (uint32_t s = 0; s < ir.n_steps; s++) {
    const sfc_step_t *step = &ir.steps[s];
    const sfc_op_t *op = &g->ops[step->op];
    for (uint32_t u = 0; u < step->use_count; u++) {
      const sfc_use_t *use = &ir.uses[step->use_begin + u];
      if ((use->flags & SFC_USE_ACCUMULATE) && acc) {
        bool first = acc[use->tensor] != step->segment + 1;
        acc[use->tensor] = step->segment + 1;
        bad_acc += u < op->n_inputs || use->access != (first ? SFC_ACCESS_WRITE : SFC_ACCESS_RW) ||
                   (first && step->tile != 0);
      }
      if (use->box == SFC_PLAN_NONE)
        continue;
      const sfc_plan_box_t *b = &ir.boxes[use->box];
      const sfc_tensor_t *t = &g->tensors[use->tensor];
      bad_box += b->tensor != use->tensor;
      for (int d = 0; d < 4; d++)
        bad_box += b->lo[d] < 0 || b->lo[d] > b->hi[d] || b->hi[d] > t->shape[d];
    }
  }
  free(acc);
  CHECK_EQ_U64(bad_box, 0);
  CHECK_EQ_U64(bad_acc, 0);
  /* each forward segment's kept outputs: covered exactly once by its tiles */
  uint32_t covered = 0, seg_index = 0;
  for (uint32_t s = 0; s < ir.n_steps;) {
    if (ir.steps[s].segment == SFC_PLAN_NONE) {
      s++;
      continue;
    }
    uint32_t seg = ir.steps[s].segment, e = s;
    while (e < ir.n_steps && ir.steps[e].segment == seg)
      e++;
    CHECK_EQ_U64(seg, seg_index);
    seg_index++;
    bool forward = g->ops[ir.steps[s].op].phase == SFC_PHASE_FORWARD &&
                   !(ir.steps[s].flags & SFC_STEP_RECOMPUTE);
    if (forward) {
      /* the segment's output tensor: written by the segment's steps and read outside */
      const sfc_ft_segment_t *fs = NULL;
      for (uint32_t k = 0; k < n; k++)
        if (segs[k].fwd_begin == ir.steps[s].op)
          fs = &segs[k];
      CHECK(fs != NULL);
      if (fs) {
        uint64_t vol = 0;
        uint32_t writes = 0, overlaps = 0;
        const sfc_plan_box_t *seen[4096];
        for (uint32_t i = s; i < e; i++) {
          const sfc_step_t *step = &ir.steps[i];
          const sfc_op_t *op = &g->ops[step->op];
          for (uint32_t u = op->n_inputs; u < op->n_inputs + op->n_outputs; u++) {
            const sfc_use_t *use = &ir.uses[step->use_begin + u];
            if (use->tensor != fs->output || use->access == SFC_ACCESS_RW)
              continue; /* in-place rewrites of the same box are not new parts */
            const sfc_plan_box_t *b = &ir.boxes[use->box];
            for (uint32_t j = 0; j < writes && j < 4096; j++)
              overlaps += boxes_overlap(seen[j], b);
            if (writes < 4096)
              seen[writes] = b;
            writes++;
            vol += box_volume(b);
          }
        }
        const sfc_tensor_t *t = &g->tensors[fs->output];
        uint64_t whole = (uint64_t)t->shape[0] * t->shape[1] * t->shape[2] * t->shape[3];
        CHECK_EQ_U64(vol, whole);
        CHECK_EQ_U64(overlaps, 0);
        CHECK_EQ_U64(writes, sfc_ft_tile_count(fs));
        covered++;
      }
    }
    s = e;
  }
  CHECK_EQ_U64(covered, n);
  printf("%-20s %-6s tile budget %8.2f MiB: %u segments, %u tiles, %u ops -> %u steps, %u "
         "boxes\n",
         file, sfc_tiling_halo_name((sfc_tiling_halo_t)halo), (double)tile_bytes / 1048576.0, n,
         tiles_total, g->n_ops, ir.n_steps, ir.n_boxes);
  for (uint32_t k = 0; k < n; k++)
    printf("    ops [%u, %u) %s..%s, backward [%u, %u), grid %ux%ux%u\n", segs[k].fwd_begin,
           segs[k].fwd_end, g->ops[segs[k].fwd_begin].type, g->ops[segs[k].fwd_end - 1].type,
           segs[k].bwd_begin, segs[k].bwd_end, segs[k].grid[0], segs[k].grid[2], segs[k].grid[3]);
  sfc_ir_deinit(&ir);
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
}

static void check_model(const char *file, uint64_t tile_bytes) {
  check_model_halo(file, tile_bytes, SFC_HALO_MASKED);
  check_model_halo(file, tile_bytes, SFC_HALO_SEED);
}

static void test_vgg16(void) {
  check_model("vgg16.json.gz", 64u << 20);
  check_model("vgg16.json.gz", 4u << 20);
}

static void test_unet(void) {
  check_model("unet.json.gz", 4u << 20);
}

static void test_resnet50(void) {
  check_model("resnet50.json.gz", 4u << 20);
}

/* ---- VGG-16's convolutions at 10240 x 10240, the seed's halo example --------------- */

static uint32_t t4(sfc_graph_t *g, const char *name, sfc_tensor_kind_t kind, int64_t n, int64_t c,
                   int64_t h, int64_t w) {
  return tg_tensor4(g, name, kind, 4, n, c, h, w);
}

static uint32_t top(sfc_graph_t *g, const char *type, sfc_phase_t phase, uint32_t n_in,
                    const uint32_t *in, uint32_t n_out, const uint32_t *out, int64_t k, int64_t s,
                    int64_t p) {
  uint32_t o = tg_op(g, type, phase, n_in, in, n_out, out);
  g->ops[o].type = sfc_pool_strdup(&g->pool, type);
  sfc_attrs_t *a = &g->ops[o].attrs;
  a->present = SFC_ATTR_KERNEL | SFC_ATTR_STRIDE | SFC_ATTR_PADDING | SFC_ATTR_DILATION;
  a->rank = 2;
  for (int i = 0; i < 2; i++) {
    a->kernel[i] = k;
    a->stride[i] = s;
    a->padding[i] = p;
    a->dilation[i] = 1;
  }
  a->groups = 1;
  return o;
}

/* VGG-16's 13 convolutions and 5 poolings (batch 1, H x H), forward and backward as the
 * exporter writes them; *out is the last pooling's output. */
static sfc_graph_t *vgg16_features(int64_t H, uint32_t *out) {
  static const int cfg[] = {64, 64,  0,   128, 128, 0,   256, 256, 256,
                            0,  512, 512, 512, 0,   512, 512, 512, 0};
  enum { L = sizeof cfg / sizeof cfg[0] };
  sfc_graph_t *g = tg_new("vgg16-features");
  int64_t c = 3, h = H;
  uint32_t x = t4(g, "x", SFC_KIND_INPUT, 1, 3, H, H), cur = x;
  uint32_t fwd[L], act_in[L], act_out[L], idx[L], w[L], dws[L], n_dw = 0;
  for (int l = 0; l < L; l++) {
    act_in[l] = cur;
    if (cfg[l]) {
      w[l] = t4(g, "w", SFC_KIND_PARAM, cfg[l], c, 3, 3);
      uint32_t y = t4(g, "a", SFC_KIND_ACTIVATION, 1, cfg[l], h, h);
      fwd[l] = top(g, "convolution", SFC_PHASE_FORWARD, 2, (uint32_t[]){cur, w[l]}, 1,
                   (uint32_t[]){y}, 3, 1, 1);
      top(g, "relu_", SFC_PHASE_FORWARD, 1, (uint32_t[]){y}, 1, (uint32_t[]){y}, 1, 1, 0);
      c = cfg[l];
      cur = act_out[l] = y;
    } else {
      h /= 2;
      uint32_t y = t4(g, "p", SFC_KIND_ACTIVATION, 1, c, h, h);
      idx[l] = t4(g, "i", SFC_KIND_ACTIVATION, 1, c, h, h);
      fwd[l] = top(g, "max_pool2d_with_indices", SFC_PHASE_FORWARD, 1, (uint32_t[]){cur}, 2,
                   (uint32_t[]){y, idx[l]}, 2, 2, 0);
      cur = act_out[l] = y;
    }
  }
  *out = cur;
  uint32_t target = t4(g, "t", SFC_KIND_INPUT, 1, c, h, h);
  uint32_t loss = tg_tensor(g, "loss", 4, SFC_KIND_OUTPUT);
  top(g, "mse_loss", SFC_PHASE_LOSS, 2, (uint32_t[]){cur, target}, 1, (uint32_t[]){loss}, 1, 1, 0);
  uint32_t d = t4(g, "d", SFC_KIND_GRAD, 1, c, h, h);
  top(g, "mse_loss_backward", SFC_PHASE_BACKWARD, 2, (uint32_t[]){cur, target}, 1, (uint32_t[]){d},
      1, 1, 0);
  for (int l = L - 1; l >= 0; l--) {
    const sfc_tensor_t *xi = &g->tensors[act_in[l]];
    int64_t ci = xi->shape[1], hi = xi->shape[2];
    uint32_t dx = l > 0 ? t4(g, "dx", SFC_KIND_GRAD, 1, ci, hi, hi) : SFC_PLAN_NONE, o;
    if (cfg[l]) {
      const sfc_tensor_t *yo = &g->tensors[act_out[l]];
      uint32_t dr = t4(g, "dr", SFC_KIND_GRAD, 1, yo->shape[1], yo->shape[2], yo->shape[3]);
      o = top(g, "threshold_backward", SFC_PHASE_BACKWARD, 2, (uint32_t[]){d, act_out[l]}, 1,
              (uint32_t[]){dr}, 1, 1, 0);
      g->ops[o].backward_of = fwd[l] + 1;
      uint32_t dw = t4(g, "dw", SFC_KIND_GRAD, cfg[l], ci, 3, 3);
      o = top(g, "convolution_backward", SFC_PHASE_BACKWARD, 3, (uint32_t[]){dr, act_in[l], w[l]},
              dx != SFC_PLAN_NONE ? 2 : 1,
              dx != SFC_PLAN_NONE ? (uint32_t[]){dx, dw} : (uint32_t[]){dw}, 3, 1, 1);
      g->ops[o].backward_of = fwd[l];
      top(g, "detach", SFC_PHASE_BACKWARD, 1, (uint32_t[]){dw}, 0, NULL, 1, 1, 0);
      dws[n_dw++] = dw;
    } else {
      o = top(g, "max_pool2d_with_indices_backward", SFC_PHASE_BACKWARD, 3,
              (uint32_t[]){d, act_in[l], idx[l]}, 1, (uint32_t[]){dx}, 2, 2, 0);
      g->ops[o].backward_of = fwd[l];
    }
    d = dx;
  }
  for (uint32_t k = 0; k < n_dw; k++) /* the optimizer reads them */
    top(g, "detach", SFC_PHASE_UPDATE, 1, (uint32_t[]){dws[k]}, 0, NULL, 1, 1, 0);
  return g;
}

/* The seed's example (docs/algorithms.md "FT tiling"): the whole convolution stack as one
 * segment, 8 x 8 tiles of the 320 x 320 output: an interior tile's input box is 1280
 * rows plus the stack's receptive-field halo, 90 on each side (13 convolutions of
 * radius 1 at scales 1, 1, 2, 2, 4, 4, 4, 8, 8, 8, 16, 16, 16: 2 + 4 + 12 + 24 + 48),
 * so 1460; the artifact, with its backward halo, needs 1652. */
static void test_vgg16_halo(void) {
  uint32_t out;
  sfc_graph_t *g = vgg16_features(10240, &out);
  sfc_pool_t pool = {0};
  sfc_error_t err = {0};
  uint32_t last_fwd = 0;
  while (g->ops[last_fwd + 1].phase == SFC_PHASE_FORWARD)
    last_fwd++;
  uint32_t bwd_begin = last_fwd + 3, bwd_end = bwd_begin; /* after mse_loss, its backward */
  while (bwd_end < g->n_ops && g->ops[bwd_end].phase == SFC_PHASE_BACKWARD)
    bwd_end++;
  sfc_ft_segment_t s = {.fwd_begin = 0,
                        .fwd_end = last_fwd + 1,
                        .bwd_begin = bwd_begin,
                        .bwd_end = bwd_end,
                        .output = out,
                        .grid = {1, 1, 8, 8}};
  sfc_ft_info_t info;
  sfc_status_t st = sfc_ft_analyze(g, &s, &info, &pool, &err);
  if (st != SFC_OK)
    fprintf(stderr, "%s\n", err.message);
  CHECK(st == SFC_OK);
  if (st == SFC_OK) {
    sfc_ft_box_t *b = sfc_pool_calloc(&pool, g->n_tensors, sizeof *b);
    sfc_ft_tile_boxes(g, &s, &info, 3 * 8 + 3, b); /* an interior tile */
    int64_t hx = b[0].hi[2] - b[0].lo[2], wx = b[0].hi[3] - b[0].lo[3];
    CHECK_EQ_I64(hx, 1460);
    CHECK_EQ_I64(wx, 1460);
    CHECK_EQ_I64(b[out].hi[2] - b[out].lo[2], 40);
    sfc_ft_tile_boxes(g, &s, &info, 0, b); /* a corner tile: clipped at the image's edge */
    CHECK_EQ_I64(b[0].hi[2] - b[0].lo[2], 1280 + 90);
    int64_t corner = b[0].hi[2] - b[0].lo[2];
    double peak = (double)sfc_ft_partial_peak(g, &s, &info, b) / 1073741824.0;
    /* halo seed, the artifact's: the input's gradient on the disjoint 1280, so the
     * gradients carry a backward halo (2 + 4 + 12 + 24 + 48 at the input's scale: the
     * output's gradient is read on 46 rows instead of 40) and the forward is recomputed
     * on the forward halo of that: 46 x 32 + 180 = 1652, the artifact's */
    sfc_ft_segment_t seed = s;
    seed.halo = SFC_HALO_SEED;
    sfc_ft_info_t sinfo;
    CHECK(sfc_ft_analyze(g, &seed, &sinfo, &pool, &err) == SFC_OK);
    sfc_ft_tile_boxes(g, &seed, &sinfo, 3 * 8 + 3, b);
    int64_t sh = b[0].hi[2] - b[0].lo[2], sw = b[0].hi[3] - b[0].lo[3];
    CHECK_EQ_I64(sh, 1652);
    CHECK_EQ_I64(sw, 1652);
    uint32_t dout = SFC_PLAN_NONE, dx1 = SFC_PLAN_NONE; /* the output's gradient; conv 2's */
    for (uint32_t i = bwd_begin; i < bwd_end; i++) {
      const sfc_op_t *op = &g->ops[i];
      if (i == bwd_begin)
        dout = op->inputs[0];
      if (strcmp(op->type, "convolution_backward") == 0 && op->n_outputs == 2)
        dx1 = op->outputs[0]; /* the last: conv 2's input gradient, relu 1's */
    }
    CHECK_EQ_I64(b[dout].hi[2] - b[dout].lo[2], 46);
    CHECK(dx1 != SFC_PLAN_NONE);
    /* the image has no gradient: conv 1 reads its output's gradient only for its weight
     * gradient, on its disjoint tile, so relu 1's gradient is needed on 1280 exactly */
    if (dx1 != SFC_PLAN_NONE)
      CHECK_EQ_I64(b[dx1].hi[2] - b[dx1].lo[2], 1280);
    sfc_ft_tile_boxes_forward(g, &seed, &sinfo, 3 * 8 + 3, b); /* the forward: as masked */
    CHECK_EQ_I64(b[0].hi[2] - b[0].lo[2], 1460);
    sfc_ft_tile_boxes(g, &seed, &sinfo, 0, b);
    int64_t seed_corner = b[0].hi[2] - b[0].lo[2];
    CHECK_EQ_I64(seed_corner, 1280 + 186);
    /* not necessarily above masked's: seed gradients are exact on tight boxes, masked
     * ones span the whole receptive field */
    double seed_peak = (double)sfc_ft_partial_peak(g, &seed, &sinfo, b) / 1073741824.0;
    printf("VGG-16 10240^2, 8x8 tiles of the 320^2 output: interior input tile %lld x %lld "
           "masked (disjoint 1280), %lld x %lld seed (the SFT artifact's 1652), corner %lld / "
           "%lld; %u tensors recomputed per tile; peak of one tile's recomputed tensors "
           "%.2f GiB masked, %.2f GiB seed\n",
           (long long)hx, (long long)wx, (long long)sh, (long long)sw, (long long)corner,
           (long long)seed_corner, info.n_partial, peak, seed_peak);
  }
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
}

/* Seed halo boxes against shared/data/tiling/halo_vectors.csv: the rows of the backward
 * maps whose query (a range of an input gradient) is one tile of a grid over the input.
 * A one-op segment whose input's gradient is handed on computes it on exactly that tile,
 * so the output gradient it reads must be the row's exact range (conv_bwd_data,
 * maxpool_bwd dX->dY; a convolution without a weight gradient, a pooling that ends the
 * segment), and a pooling recomputed for its indices (a ReLU after it ends the segment)
 * must read the row's input range (maxpool_bwd dX->X for argmax). */
static bool seed_row(const char *op, int64_t n_in, int64_t n_out, int64_t k, int64_t st, int64_t p,
                     int64_t d, int64_t qlo, int64_t qhi, int64_t elo, int64_t ehi) {
  bool conv = strncmp(op, "conv_bwd_data(", 14) == 0, argmax = strstr(op, "argmax") != NULL;
  if (!conv && strncmp(op, "maxpool_bwd(", 12) != 0)
    return false;
  uint32_t grid = 0, tile = 0; /* the query as tile `tile` of `grid` rows of the input */
  for (int64_t n = 1; n <= n_out && !grid; n++)
    for (int64_t i = 0; i < n && !grid; i++)
      if (n_in * i / n == qlo && n_in * (i + 1) / n == qhi + 1) {
        grid = (uint32_t)n;
        tile = (uint32_t)i;
      }
  if (!grid)
    return false;
  sfc_graph_t *g = tg_new("row");
  uint32_t x = t4(g, "x", SFC_KIND_INPUT, 1, 1, n_in, n_in);
  uint32_t y = t4(g, "y", SFC_KIND_ACTIVATION, 1, 1, n_out, n_out);
  uint32_t dy = t4(g, "dy", SFC_KIND_GRAD, 1, 1, n_out, n_out);
  uint32_t dx = t4(g, "dx", SFC_KIND_GRAD, 1, 1, n_in, n_in);
  uint32_t f, b, last, idx = SFC_PLAN_NONE, r = SFC_PLAN_NONE;
  if (conv) {
    uint32_t w = t4(g, "w", SFC_KIND_PARAM, 1, 1, k, k);
    f = top(g, "convolution", SFC_PHASE_FORWARD, 2, (uint32_t[]){x, w}, 1, (uint32_t[]){y}, k, st,
            p);
    last = y;
  } else {
    idx = t4(g, "idx", SFC_KIND_ACTIVATION, 1, 1, n_out, n_out);
    f = top(g, "max_pool2d_with_indices", SFC_PHASE_FORWARD, 1, (uint32_t[]){x}, 2,
            (uint32_t[]){y, idx}, k, st, p);
    last = y;
    if (argmax) { /* the pooling's results are recomputed: a ReLU makes the output */
      r = t4(g, "r", SFC_KIND_ACTIVATION, 1, 1, n_out, n_out);
      top(g, "relu", SFC_PHASE_FORWARD, 1, (uint32_t[]){y}, 1, (uint32_t[]){r}, 1, 1, 0);
      last = r;
    }
  }
  g->ops[f].attrs.dilation[0] = g->ops[f].attrs.dilation[1] = d;
  uint32_t fwd_end = g->n_ops;
  uint32_t l = top(g, "mse_loss_backward", SFC_PHASE_BACKWARD, 1, (uint32_t[]){last}, 1,
                   (uint32_t[]){dy}, 1, 1, 0);
  (void)l;
  uint32_t bwd_begin = g->n_ops, d_in = dy;
  if (argmax) {
    uint32_t dp = t4(g, "dp", SFC_KIND_GRAD, 1, 1, n_out, n_out);
    b = top(g, "threshold_backward", SFC_PHASE_BACKWARD, 2, (uint32_t[]){dy, r}, 1,
            (uint32_t[]){dp}, 1, 1, 0);
    g->ops[b].backward_of = f + 1;
    d_in = dp;
  }
  if (conv)
    b = top(g, "convolution_backward", SFC_PHASE_BACKWARD, 3,
            (uint32_t[]){d_in, x, g->ops[f].inputs[1]}, 1, (uint32_t[]){dx}, k, st, p);
  else
    b = top(g, "max_pool2d_with_indices_backward", SFC_PHASE_BACKWARD, 3,
            (uint32_t[]){d_in, x, idx}, 1, (uint32_t[]){dx}, k, st, p);
  g->ops[b].backward_of = f;
  top(g, "detach", SFC_PHASE_UPDATE, 1, (uint32_t[]){dx}, 0, NULL, 1, 1, 0); /* handed on */
  sfc_ft_segment_t seg = {.fwd_begin = f,
                          .fwd_end = fwd_end,
                          .bwd_begin = bwd_begin,
                          .bwd_end = g->n_ops - 1,
                          .output = last,
                          .grid = {1, 1, grid, 1},
                          .halo = SFC_HALO_SEED};
  sfc_pool_t pool = {0};
  sfc_error_t err = {0};
  sfc_ft_info_t info;
  bool ok = sfc_ft_analyze(g, &seg, &info, &pool, &err) == SFC_OK;
  if (!ok)
    fprintf(stderr, "%s: %s\n", op, err.message);
  CHECK(ok);
  if (ok) {
    sfc_ft_box_t *tb = sfc_pool_calloc(&pool, g->n_tensors, sizeof *tb), ob[8];
    sfc_ft_tile_boxes(g, &seg, &info, tile, tb);
    CHECK_EQ_I64(tb[dx].lo[2], qlo); /* the input's gradient on its own disjoint tile */
    CHECK_EQ_I64(tb[dx].hi[2], qhi + 1);
    const sfc_ft_box_t *got = &tb[d_in];
    if (argmax) { /* the recomputed pooling's input box */
      CHECK(info.recompute[f]);
      uint32_t pl[8][4], ph[8][4];
      sfc_ft_op_boxes(g, &seg, &info, tb, f, ob, pl, ph);
      got = &ob[0];
    }
    if (elo < 0) {
      CHECK(got->lo[2] >= got->hi[2]); /* no output reads the range */
    } else {
      CHECK_EQ_I64(got->lo[2], elo);
      CHECK_EQ_I64(got->hi[2], ehi + 1);
    }
  }
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
  return ok;
}

/* Seed mode refuses, in one line, a segment whose handed-on gradient is also read inside
 * it (its tiles compute it only on their disjoint part); masked mode takes it. */
static void test_seed_refuses(void) {
  sfc_graph_t *g = tg_new("refuse");
  uint32_t x = t4(g, "x", SFC_KIND_INPUT, 1, 2, 16, 16), w = t4(g, "w", SFC_KIND_PARAM, 2, 2, 3, 3);
  uint32_t a = t4(g, "a", SFC_KIND_ACTIVATION, 1, 2, 16, 16);
  uint32_t y = t4(g, "y", SFC_KIND_ACTIVATION, 1, 2, 16, 16);
  uint32_t dy = t4(g, "dy", SFC_KIND_GRAD, 1, 2, 16, 16),
           da = t4(g, "da", SFC_KIND_GRAD, 1, 2, 16, 16);
  uint32_t dx = t4(g, "dx", SFC_KIND_GRAD, 1, 2, 16, 16),
           dw = t4(g, "dw", SFC_KIND_GRAD, 2, 2, 3, 3);
  uint32_t f0 =
      top(g, "convolution", SFC_PHASE_FORWARD, 2, (uint32_t[]){x, w}, 1, (uint32_t[]){a}, 3, 1, 1);
  uint32_t f1 = top(g, "relu", SFC_PHASE_FORWARD, 1, (uint32_t[]){a}, 1, (uint32_t[]){y}, 1, 1, 0);
  top(g, "mse_loss_backward", SFC_PHASE_BACKWARD, 1, (uint32_t[]){y}, 1, (uint32_t[]){dy}, 1, 1, 0);
  uint32_t b0 = top(g, "threshold_backward", SFC_PHASE_BACKWARD, 2, (uint32_t[]){dy, y}, 1,
                    (uint32_t[]){da}, 1, 1, 0);
  g->ops[b0].backward_of = f1;
  uint32_t b1 = top(g, "convolution_backward", SFC_PHASE_BACKWARD, 3, (uint32_t[]){da, x, w}, 2,
                    (uint32_t[]){dx, dw}, 3, 1, 1);
  g->ops[b1].backward_of = f0;
  for (uint32_t t = 0; t < 3; t++) /* the optimizer reads dx, dw, and da */
    top(g, "detach", SFC_PHASE_UPDATE, 1,
        (uint32_t[]){t == 0   ? dx
                     : t == 1 ? dw
                              : da},
        0, NULL, 1, 1, 0);
  sfc_ft_segment_t seg = {.fwd_begin = f0,
                          .fwd_end = f1 + 1,
                          .bwd_begin = b0,
                          .bwd_end = b1 + 1,
                          .output = y,
                          .grid = {1, 1, 2, 2}};
  sfc_pool_t pool = {0};
  sfc_error_t err = {0};
  sfc_ft_info_t info;
  CHECK_OK(sfc_ft_analyze(g, &seg, &info, &pool, &err), err);
  seg.halo = SFC_HALO_SEED;
  CHECK_EQ_I64(sfc_ft_analyze(g, &seg, &info, &pool, &err), SFC_ERR_BAD_INPUT);
  CHECK(strstr(err.message, "tiling.halo seed: gradient") != NULL &&
        strstr(err.message, "(da) is handed on by the segment and also read by its op") != NULL);
  printf("seed refuses: %s\n", err.message);
  seg.halo = 7;
  CHECK_EQ_I64(sfc_ft_analyze(g, &seg, &info, &pool, &err), SFC_ERR_BAD_INPUT);
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
}

static void test_seed_halo_vectors(void) {
  FILE *f = halo_csv_open();
  if (!f)
    return;
  halo_row_t r = {0};
  int checked = 0;
  while (halo_csv_next(f, &r))
    checked += seed_row(r.op, r.n_in, r.n_out, r.k, r.s, r.p, r.d, r.qlo, r.qhi, r.elo, r.ehi);
  fclose(f);
  printf("halo_vectors.csv: %d backward-map rows checked against seed tile boxes\n", checked);
  CHECK(checked >= 90);
}

/* ---- compiled plans: the pipeline, the runtime's loader and the verifier ------------ */

/* Boxes no step operand and no PARTIAL block refers to. Every schedule round reruns the
 * blocks pass; until 2026-12-02 each run appended its per-tile buffers' boxes again, so a
 * tiled plan carried every earlier round's (the tiled U-Net-plain: 639,032 boxes, 43,580
 * in use, 67 MB of its 68). */
static uint32_t unused_boxes(const sfc_plan_view_t *v) {
  bool *used = calloc(v->box_count ? v->box_count : 1, sizeof *used);
  if (!used)
    return UINT32_MAX;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    const sfc_plan_op_t *o = &v->ops[s->op];
    uint32_t n = (uint32_t)o->input_count + o->output_count + o->temp_count;
    for (uint32_t j = 0; s->box_begin != SFC_PLAN_NONE && j < n; j++)
      used[s->box_begin + j] = true;
  }
  for (uint32_t b = 0; b < v->block_count; b++)
    if (v->blocks[b].flags & SFC_BLOCK_PARTIAL)
      used[v->blocks[b].box] = true;
  uint32_t unused = 0;
  for (uint32_t i = 0; i < v->box_count; i++)
    unused += !used[i];
  free(used);
  return unused;
}

/* Compiles g with cfg into ir (the caller deinits it); the plan is written, loaded by the
 * runtime and verified, and holds no box nothing refers to. */
static sfc_status_t compile_verified(sfc_graph_t *g, const sfc_config_t *cfg, sfc_ir_t *ir) {
  sfc_error_t err = {0};
  sfc_ir_init(ir, g, cfg);
  sfc_status_t st = sfc_compile_ir(ir, NULL, &err);
  void *data = NULL;
  size_t bytes = 0;
  sfcrt_plan_t *plan = NULL;
  if (st == SFC_OK)
    st = sfc_plan_write_buffer(&ir->plan, &data, &bytes, &err);
  if (st == SFC_OK)
    st = sfcrt_plan_load_buffer(data, bytes, NULL, &plan, &err);
  free(data);
  if (st == SFC_OK)
    st = sfc_verify_plan(sfcrt_plan_view(plan), ir->fits_budget, NULL, &err);
  if (st == SFC_OK) {
    uint32_t unused = unused_boxes(sfcrt_plan_view(plan));
    if (unused)
      st = sfc_error_set(&err, SFC_ERR_INTERNAL, "%u of the plan's %u boxes are unused", unused,
                         sfcrt_plan_view(plan)->box_count);
  }
  if (plan)
    sfcrt_plan_destroy(plan);
  if (st != SFC_OK)
    fprintf(stderr, "compile: %s\n", err.message);
  return st;
}

/* A plain CNN as sfc-export writes it today: convolutions with workspace_bytes (the
 * loader's synthetic workspace tensors) and a convolution_backward that lists a
 * workspace-kind buffer among its outputs. Before the fix every op with a workspace
 * ended FT segments ("an operand with no shape"), so tiling.mode on tiled nothing. */
static const char plain_cnn_json[] =
    "{\"format\":\"sfc-graph\",\"version\":1,\"name\":\"plain-ws\",\"tensors\":["
    "{\"id\":0,\"name\":\"x\",\"bytes\":49152,\"kind\":\"input\",\"shape\":[1,3,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":1,\"name\":\"w1\",\"bytes\":864,\"kind\":\"param\",\"shape\":[8,3,3,3],\"dtype\":"
    "\"f32\"},"
    "{\"id\":2,\"name\":\"w2\",\"bytes\":2304,\"kind\":\"param\",\"shape\":[8,8,3,3],\"dtype\":"
    "\"f32\"},"
    "{\"id\":3,\"name\":\"a1\",\"bytes\":131072,\"kind\":\"activation\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":4,\"name\":\"r1\",\"bytes\":131072,\"kind\":\"activation\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":5,\"name\":\"a2\",\"bytes\":131072,\"kind\":\"activation\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":6,\"name\":\"r2\",\"bytes\":131072,\"kind\":\"activation\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":7,\"name\":\"p\",\"bytes\":32768,\"kind\":\"activation\",\"shape\":[1,8,32,32],"
    "\"dtype\":\"f32\"},"
    "{\"id\":8,\"name\":\"idx\",\"bytes\":65536,\"kind\":\"activation\",\"shape\":[1,8,32,32],"
    "\"dtype\":\"i64\"},"
    "{\"id\":9,\"name\":\"t\",\"bytes\":32768,\"kind\":\"input\",\"shape\":[1,8,32,32],"
    "\"dtype\":\"f32\"},"
    "{\"id\":10,\"name\":\"loss\",\"bytes\":4,\"kind\":\"output\",\"shape\":[],\"dtype\":\"f32\"},"
    "{\"id\":11,\"name\":\"dp\",\"bytes\":32768,\"kind\":\"grad\",\"shape\":[1,8,32,32],"
    "\"dtype\":\"f32\"},"
    "{\"id\":12,\"name\":\"dr2\",\"bytes\":131072,\"kind\":\"grad\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":13,\"name\":\"da2\",\"bytes\":131072,\"kind\":\"grad\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":14,\"name\":\"dr1\",\"bytes\":131072,\"kind\":\"grad\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":15,\"name\":\"dw2\",\"bytes\":2304,\"kind\":\"grad\",\"shape\":[8,8,3,3],\"dtype\":"
    "\"f32\"},"
    "{\"id\":16,\"name\":\"ws\",\"bytes\":4096,\"kind\":\"workspace\",\"shape\":[4096],"
    "\"dtype\":\"u8\"},"
    "{\"id\":17,\"name\":\"da1\",\"bytes\":131072,\"kind\":\"grad\",\"shape\":[1,8,64,64],"
    "\"dtype\":\"f32\"},"
    "{\"id\":18,\"name\":\"dw1\",\"bytes\":864,\"kind\":\"grad\",\"shape\":[8,3,3,3],\"dtype\":"
    "\"f32\"}"
    "],\"ops\":["
#define CONV_ATTRS                                                                                 \
  "\"attrs\":{\"kernel\":[3,3],\"stride\":[1,1],\"padding\":[1,1],\"dilation\":[1,1],\"groups\":"  \
  "1}"
    "{\"id\":0,\"name\":\"c1\",\"type\":\"convolution\",\"phase\":\"forward\",\"inputs\":[0,1],"
    "\"outputs\":[3]," CONV_ATTRS ",\"time_us\":50,\"workspace_bytes\":8192},"
    "{\"id\":1,\"name\":\"r1\",\"type\":\"relu\",\"phase\":\"forward\",\"inputs\":[3],\"outputs\":["
    "4],"
    "\"time_us\":5},"
    "{\"id\":2,\"name\":\"c2\",\"type\":\"convolution\",\"phase\":\"forward\",\"inputs\":[4,2],"
    "\"outputs\":[5]," CONV_ATTRS ",\"time_us\":50,\"workspace_bytes\":8192},"
    "{\"id\":3,\"name\":\"r2\",\"type\":\"relu\",\"phase\":\"forward\",\"inputs\":[5],\"outputs\":["
    "6],"
    "\"time_us\":5},"
    "{\"id\":4,\"name\":\"pool\",\"type\":\"max_pool2d_with_indices\",\"phase\":\"forward\","
    "\"inputs\":[6],\"outputs\":[7,8],\"attrs\":{\"kernel\":[2,2],\"stride\":[2,2],\"padding\":[0,"
    "0],"
    "\"dilation\":[1,1]},\"time_us\":5},"
    "{\"id\":5,\"name\":\"mse\",\"type\":\"mse_loss\",\"phase\":\"loss\",\"inputs\":[7,9],"
    "\"outputs\":[10],\"time_us\":5},"
    "{\"id\":6,\"name\":\"mse_b\",\"type\":\"mse_loss_backward\",\"phase\":\"backward\",\"inputs\":"
    "[7,9],"
    "\"outputs\":[11],\"time_us\":5,\"backward_of\":5},"
    "{\"id\":7,\"name\":\"pool_b\",\"type\":\"max_pool2d_with_indices_backward\",\"phase\":"
    "\"backward\",\"inputs\":[11,6,8],\"outputs\":[12],\"attrs\":{\"kernel\":[2,2],\"stride\":[2,2]"
    ","
    "\"padding\":[0,0],\"dilation\":[1,1]},\"time_us\":5,\"backward_of\":4},"
    "{\"id\":8,\"name\":\"r2_b\",\"type\":\"threshold_backward\",\"phase\":\"backward\","
    "\"inputs\":[12,6],\"outputs\":[13],\"time_us\":5,\"backward_of\":3},"
    "{\"id\":9,\"name\":\"c2_b\",\"type\":\"convolution_backward\",\"phase\":\"backward\","
    "\"inputs\":[13,4,2],\"outputs\":[14,15,16]," CONV_ATTRS ",\"time_us\":100,\"backward_of\":2},"
    "{\"id\":10,\"name\":\"r1_b\",\"type\":\"threshold_backward\",\"phase\":\"backward\","
    "\"inputs\":[14,4],\"outputs\":[17],\"time_us\":5,\"backward_of\":1},"
    "{\"id\":11,\"name\":\"c1_b\",\"type\":\"convolution_backward\",\"phase\":\"backward\","
    "\"inputs\":[17,0,1],\"outputs\":[18]," CONV_ATTRS ",\"time_us\":100,\"backward_of\":0,"
    "\"workspace_bytes\":4096},"
    "{\"id\":12,\"name\":\"upd1\",\"type\":\"add_\",\"phase\":\"update\",\"inputs\":[1,18],"
    "\"outputs\":[1],\"time_us\":1},"
    "{\"id\":13,\"name\":\"upd2\",\"type\":\"add_\",\"phase\":\"update\",\"inputs\":[2,15],"
    "\"outputs\":[2],\"time_us\":1}"
#undef CONV_ATTRS
    "]}";

/* json with `old` (which must occur) replaced once by `new`, in a malloc'd string. */
static char *replaced(const char *json, const char *old, const char *new) {
  const char *at = strstr(json, old);
  CHECK(at != NULL);
  size_t n = strlen(json), a = (size_t)(at ? at - json : 0), lo = strlen(old), ln = strlen(new);
  char *out = malloc(n - lo + ln + 1);
  if (!out || !at)
    abort();
  memcpy(out, json, a);
  memcpy(out + a, new, ln);
  memcpy(out + a + ln, json + a + lo, n - a - lo + 1);
  return out;
}

/* A plain-CNN graph compiled with tiling on at 2 MiB (tile budget 128 KiB: the segment
 * needs tiles), verified; NULL (after a failed check) when it does not load. */
static sfc_graph_t *compile_plain(const char *json, sfc_ir_t *ir) {
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  sfc_status_t st = sfc_graph_load_buffer(json, strlen(json), &g, &err);
  if (st != SFC_OK)
    fprintf(stderr, "%s\n", err.message);
  CHECK(st == SFC_OK);
  if (st != SFC_OK)
    return NULL;
  sfc_config_t cfg;
  sfc_config_defaults(&cfg);
  strcpy(cfg.packer.algorithm, "best-fit");
  cfg.tiling.mode = SFC_TILING_ON;
  cfg.tiling.min_tile = 4;
  cfg.budget_bytes = 2u << 20;
  CHECK(compile_verified(g, &cfg, ir) == SFC_OK);
  return g;
}

/* The same net with c2 a transposed convolution (kernel 3, stride 1, padding 1: the same
 * size) that lists its columns buffer among its outputs, as PyTorch's CPU kernel makes
 * sfc-export record it, and the pooling (whose output the segment keeps) a scratch
 * output too, as the exporter records some ops' allocator scratch: the segment still
 * holds both convolutions, the scratch a per-tile buffer and never kept (a kept op's
 * other outputs are kept, scratch aside), and the plan records c2's map as WINDOW_T. */
static void test_transposed_workspace_tile(void) {
  char *a0 = replaced(plain_cnn_json, "{\"id\":17,",
                      "{\"id\":19,\"name\":\"cols\",\"bytes\":16384,\"kind\":\"workspace\","
                      "\"shape\":[4096],\"dtype\":\"f32\"},{\"id\":20,\"name\":\"pool.ws\","
                      "\"bytes\":2048,\"kind\":\"workspace\",\"shape\":[2048],\"dtype\":\"u8\"},"
                      "{\"id\":17,");
  char *a =
      replaced(a0, "\"inputs\":[6],\"outputs\":[7,8],", "\"inputs\":[6],\"outputs\":[7,8,20],");
  free(a0);
  char *b = replaced(a,
                     "\"outputs\":[5],\"attrs\":{\"kernel\":[3,3],\"stride\":[1,1],"
                     "\"padding\":[1,1],\"dilation\":[1,1],\"groups\":1}",
                     "\"outputs\":[5,19],\"attrs\":{\"kernel\":[3,3],\"stride\":[1,1],"
                     "\"padding\":[1,1],\"dilation\":[1,1],\"groups\":1,"
                     "\"output_padding\":[0,0]}");
  free(a);
  sfc_ir_t ir;
  sfc_graph_t *g = compile_plain(b, &ir);
  free(b);
  if (!g)
    return;
  uint32_t segments = 0, tiles = 0, recomputed = 0;
  sfc_ir_tiling_counts(&ir, &segments, &tiles, &recomputed);
  printf("plain CNN, c2 transposed with a columns output, tiling on at 2 MiB: %u segments, %u "
         "tiles, %u recomputed steps; c2's map %u\n",
         segments, tiles, recomputed, ir.plan.op_count > 2 ? ir.plan.ops[2].map : 0);
  CHECK(tiles > 1);
  CHECK(ir.n_segments >= 1 && ir.segments[0].first_op == 0 && ir.segments[0].op_count == 5);
  CHECK(ir.plan.op_count > 2 && ir.plan.ops[2].map == SFC_MAP_WINDOW_T);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

static void test_workspaces_tile(void) {
  sfc_ir_t ir;
  sfc_graph_t *g = compile_plain(plain_cnn_json, &ir);
  if (!g)
    return;
  uint32_t segments = 0, tiles = 0, recomputed = 0;
  sfc_ir_tiling_counts(&ir, &segments, &tiles, &recomputed);
  printf("plain CNN with workspaces, tiling on at 2 MiB: %u segments, %u tiles, %u recomputed "
         "steps\n",
         segments, tiles, recomputed);
  CHECK(segments >= 1);
  CHECK(tiles > 1);
  /* the segment holds both convolutions (ops 0 .. 4), workspaces and all */
  CHECK(ir.n_segments >= 1);
  if (ir.n_segments >= 1) {
    printf("    forward segment: ops [%u, %u)\n", ir.segments[0].first_op,
           ir.segments[0].first_op + ir.segments[0].op_count);
    CHECK_EQ_U64(ir.segments[0].first_op, 0);
    CHECK_EQ_U64(ir.segments[0].op_count, 5);
  }
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* ---- tiling: auto ---------------------------------------------------------------- */

/* Defaults with the deterministic best-fit packer and a device budget. */
static sfc_config_t bestfit_config(uint64_t budget) {
  sfc_config_t cfg;
  sfc_config_defaults(&cfg);
  strcpy(cfg.packer.algorithm, "best-fit");
  cfg.budget_bytes = budget;
  return cfg;
}

static sfc_graph_t *load_model(const char *name, int64_t image, int64_t batch) {
  const char *src = getenv("SFC_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/plans/%s.json.gz", src ? src : ".", name);
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  sfc_status_t st = sfc_graph_load_file(path, &g, &err);
  if (st == SFC_OK)
    st = sfc_graph_batch_scale(g, batch, &err);
  if (st == SFC_OK)
    st = sfc_graph_image_scale(g, image, &err);
  if (st != SFC_OK) {
    fprintf(stderr, "%s: %s\n", name, err.message);
    sfc_graph_destroy(g);
    return NULL;
  }
  return g;
}

static sfc_graph_t *load_vgg16(int64_t image, int64_t batch) {
  return load_model("vgg16", image, batch);
}

/* tiling.mode fastest: DarkNet-19 at 4096^2 in the 2080 Ti's 11 GiB fits untiled, with
 * swaps that stall (auto keeps it, 0.93 s predicted); fastest also replays the tiler's
 * candidates and takes a tiled plan predicted at least 2 % faster (0.64 s: recomputing
 * a few tiles costs less than waiting for the link). Both plans verified. In core (the
 * A100's 40 GiB, which the untiled graph fits without swaps) fastest tiles nothing. */
static void test_fastest(void) {
  sfc_graph_t *g = load_model("darknet19", 4096, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  const sfc_profile_t *p = sfc_profile_find("rtx2080ti-pcie3");
  CHECK(p != NULL);
  if (!p) {
    sfc_graph_destroy(g);
    return;
  }
  double t[2] = {0};
  uint32_t segments[2] = {0}, tiles = 0, recomputed = 0;
  for (int m = 0; m < 2; m++) {
    sfc_config_t cfg = bestfit_config(UINT64_C(11) << 30);
    cfg.device = *p;
    cfg.tiling.mode = m == 0 ? SFC_TILING_AUTO : SFC_TILING_FASTEST;
    sfc_ir_t ir;
    CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
    CHECK(ir.fits_budget);
    CHECK(m == 1 || ir.n_swaps > 0); /* the untiled plan swaps */
    sfc_ir_tiling_counts(&ir, &segments[m], &tiles, &recomputed);
    t[m] = ir.predicted_iteration_s;
    sfc_ir_deinit(&ir);
  }
  printf("DarkNet-19 4096^2 in 11 GiB (rtx2080ti-pcie3): auto %u segments, %.3f s predicted; "
         "fastest %u segments, %.3f s\n",
         segments[0], t[0], segments[1], t[1]);
  CHECK_EQ_U64(segments[0], 0);
  CHECK(segments[1] > 0);
  CHECK(t[1] <= 0.98 * t[0]);
  const sfc_profile_t *a100 = sfc_profile_find("a100-pcie4"); /* 40 GiB: in core */
  CHECK(a100 != NULL);
  sfc_config_t cfg = bestfit_config(UINT64_C(40) << 30);
  if (a100)
    cfg.device = *a100;
  cfg.tiling.mode = SFC_TILING_FASTEST;
  sfc_ir_t ir;
  CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
  sfc_ir_tiling_counts(&ir, &segments[0], &tiles, &recomputed);
  CHECK(ir.n_swaps == 0);
  CHECK_EQ_U64(segments[0], 0);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* The U-Net without batch norm (plans/unet-plain: the paper's blocks) at 8192^2 in the
 * 2080 Ti's 11 GiB under tiling: auto. Untiled, one convolution_backward's operands and
 * scratch alone take 64 GiB. Every forward op from the image to the logits is one FT
 * segment (skips, cats and transposed convolutions inside it), and the plan fits,
 * verified. The tuner's coarser candidates (tile budgets above half the device budget)
 * win: the plan uses more than half the budget. Scratch follows the tile: each tile
 * step's workspace box holds the step's share of the op's scratch (the share of its
 * first data output, else input, that is not whole: the rule the step's time follows),
 * rounded up — recomputed here from the plan's boxes with the runtime's sfc_box_share;
 * at least one is smaller than the whole (the whole would put 24 GiB of scratch in one
 * step). */
static void test_unet_plain_8192(void) {
  sfc_graph_t *g = load_model("unet-plain", 8192, 1);
  CHECK(g != NULL);
  const sfc_profile_t *p = sfc_profile_find("rtx2080ti-pcie3");
  CHECK(p != NULL);
  if (!g || !p) {
    sfc_graph_destroy(g);
    return;
  }
  uint32_t n_forward = 0;
  while (n_forward < g->n_ops && g->ops[n_forward].phase == SFC_PHASE_FORWARD)
    n_forward++;
  sfc_config_t cfg = bestfit_config(UINT64_C(11) << 30);
  cfg.device = *p;
  cfg.budget_bytes = UINT64_C(11) << 30;
  cfg.tiling.mode = SFC_TILING_AUTO;
  sfc_ir_t ir;
  CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
  uint32_t segments = 0, tiles = 0, recomputed = 0;
  sfc_ir_tiling_counts(&ir, &segments, &tiles, &recomputed);
  uint32_t scratch_steps = 0, scratch_smaller = 0, scratch_bad = 0;
  uint64_t scratch_max = 0, scratch_whole_max = 0;
  for (uint32_t s = 0; s < ir.n_steps; s++) {
    const sfc_step_t *st = &ir.steps[s];
    if (st->segment == SFC_PLAN_NONE)
      continue;
    const sfc_op_t *op = &g->ops[st->op];
    double share = 1; /* sfc/steps.h's rule over the plan's boxes: outputs, then inputs */
    uint32_t nio = op->n_inputs + op->n_outputs;
    for (uint32_t i = 0; i < nio && share >= 1; i++) {
      uint32_t j = i < op->n_outputs ? op->n_inputs + i : i - op->n_outputs;
      const sfc_use_t *u = &ir.uses[st->use_begin + j];
      const sfc_tensor_t *x = &g->tensors[u->tensor];
      if (x->kind != SFC_KIND_WORKSPACE && u->box != SFC_PLAN_NONE)
        share = sfc_box_share(&ir.boxes[u->box], x->shape, x->ndim);
    }
    for (uint32_t k = 0; k < st->use_count; k++) {
      const sfc_use_t *u = &ir.uses[st->use_begin + k];
      const sfc_tensor_t *x = &g->tensors[u->tensor];
      if (x->kind != SFC_KIND_WORKSPACE || !(u->flags & SFC_USE_PARTIAL) ||
          u->box == SFC_PLAN_NONE || x->ndim != 1)
        continue;
      const sfc_plan_box_t *b = &ir.boxes[u->box];
      double want = ceil(share * (double)x->shape[0]);
      int64_t n = b->hi[0] - b->lo[0];
      scratch_steps++;
      scratch_smaller += n < x->shape[0];
      scratch_bad += b->lo[0] != 0 || n < 1 || n > x->shape[0] || (want >= 1 && (double)n != want);
      uint64_t bytes = sfc_ft_plan_box_bytes(x, b);
      scratch_max = bytes > scratch_max ? bytes : scratch_max;
      scratch_whole_max = x->bytes > scratch_whole_max ? x->bytes : scratch_whole_max;
    }
  }
  printf("U-Net (no BN) 8192^2 in 11 GiB (rtx2080ti-pcie3, auto): %s, arena %.2f GiB, %u "
         "segments, %u tiles, %.3f s predicted; first segment ops [%u, %u) of %u forward; "
         "%u tile steps with scratch, %u below the whole, largest %.2f GiB (whole %.2f GiB)\n",
         ir.fits_budget ? "fits" : "over", ir.arena_bytes / 1073741824.0, segments, tiles,
         ir.predicted_iteration_s, ir.n_segments ? ir.segments[0].first_op : 0,
         ir.n_segments ? ir.segments[0].first_op + ir.segments[0].op_count : 0, n_forward,
         scratch_steps, scratch_smaller, scratch_max / 1073741824.0,
         scratch_whole_max / 1073741824.0);
  CHECK(ir.fits_budget);
  /* the grid tuner's tile budgets above half the device budget: the partitioner's
   * per-tile estimate sums every per-tile tensor at once, so with budgets up to 1/2 the
   * best grid used 3.97 of the 11 GiB (72 tiles); coarser grids that really fit win */
  CHECK(ir.arena_bytes > cfg.budget_bytes / 2);
  CHECK(segments == 1 && tiles > 1);
  CHECK(ir.n_segments >= 1 && ir.segments[0].first_op == 0 &&
        ir.segments[0].op_count == n_forward); /* the image to the logits */
  CHECK(scratch_steps > 0);
  CHECK(scratch_smaller > 0);
  CHECK_EQ_U64(scratch_bad, 0);
  CHECK(scratch_max < scratch_whole_max);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* A graph that fits untiled gets no tiling under auto (no recompute), where on tiles. */
static void test_auto_fits_untiled(void) {
  sfc_graph_t *g = load_vgg16(1024, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  sfc_config_t cfg = bestfit_config(UINT64_C(11) << 30);
  uint32_t segments[2] = {0}, tiles = 0, recomputed[2] = {0};
  for (int m = 0; m < 2; m++) {
    cfg.tiling.mode = m == 0 ? SFC_TILING_AUTO : SFC_TILING_ON;
    sfc_ir_t ir;
    CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
    CHECK(ir.fits_budget);
    sfc_ir_tiling_counts(&ir, &segments[m], &tiles, &recomputed[m]);
    sfc_ir_deinit(&ir);
  }
  printf("VGG-16 1024^2 at 11 GiB: auto %u segments, %u recomputed steps; on %u segments, %u\n",
         segments[0], recomputed[0], segments[1], recomputed[1]);
  CHECK_EQ_U64(segments[0], 0);
  CHECK_EQ_U64(recomputed[0], 0);
  CHECK(segments[1] > 0); /* on tiles regardless (its fixed fractions) */
  sfc_graph_destroy(g);
}

/* A graph that does not fit untiled: auto tiles, fits, and is predicted no slower than
 * on (on's fixed fractions are among auto's candidates). */
static void test_auto_tiles_when_needed(void) {
  sfc_graph_t *g = load_vgg16(4096, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  sfc_config_t cfg = bestfit_config(UINT64_C(4) << 30);
  double t[3] = {0};
  bool fits[3] = {false};
  uint32_t segments[3] = {0}, tiles[3] = {0}, recomputed = 0;
  for (int m = 0; m < 3; m++) {
    cfg.tiling.mode = m == 0 ? SFC_TILING_AUTO : m == 1 ? SFC_TILING_ON : SFC_TILING_OFF;
    sfc_ir_t ir;
    sfc_status_t st = compile_verified(g, &cfg, &ir);
    CHECK(st == SFC_OK);
    fits[m] = ir.fits_budget;
    t[m] = ir.predicted_iteration_s;
    sfc_ir_tiling_counts(&ir, &segments[m], &tiles[m], &recomputed);
    sfc_ir_deinit(&ir);
  }
  printf("VGG-16 4096^2 at 4 GiB: auto %u segments %u tiles %s %.3f s predicted; on %u "
         "segments %u tiles %s %.3f s; untiled %s\n",
         segments[0], tiles[0], fits[0] ? "fits" : "over", t[0], segments[1], tiles[1],
         fits[1] ? "fits" : "over", t[1], fits[2] ? "fits" : "does not fit");
  CHECK(!fits[2]);
  CHECK(fits[0]);
  CHECK(segments[0] > 0);
  CHECK(fits[1]);
  CHECK(t[0] <= t[1]); /* predicted (modelled), deterministic: not a timing */
  sfc_graph_destroy(g);
}

/* tiling.halo seed through the whole pipeline, verified: VGG-16 at 4096^2 in 4 GiB with
 * tiling on and auto, beside masked (modelled times: deterministic, not timings). */
static void test_seed_plans(void) {
  sfc_graph_t *g = load_vgg16(4096, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  sfc_config_t cfg = bestfit_config(UINT64_C(4) << 30);
  for (int m = 0; m < 2; m++) {
    uint32_t seg[2] = {0}, tiles[2] = {0}, rec[2] = {0};
    bool fits[2] = {false};
    double t[2] = {0};
    for (int h = 0; h < 2; h++) {
      cfg.tiling.mode = m == 0 ? SFC_TILING_ON : SFC_TILING_AUTO;
      cfg.tiling.halo = h == 0 ? SFC_HALO_MASKED : SFC_HALO_SEED;
      sfc_ir_t ir;
      CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
      fits[h] = ir.fits_budget;
      t[h] = ir.predicted_iteration_s;
      sfc_ir_tiling_counts(&ir, &seg[h], &tiles[h], &rec[h]);
      sfc_ir_deinit(&ir);
    }
    printf("VGG-16 4096^2 at 4 GiB, tiling %s: masked %u segments %u tiles %u recomputed steps "
           "%s %.3f s; seed %u segments %u tiles %u recomputed steps %s %.3f s\n",
           m == 0 ? "on" : "auto", seg[0], tiles[0], rec[0], fits[0] ? "fits" : "over", t[0],
           seg[1], tiles[1], rec[1], fits[1] ? "fits" : "over", t[1]);
    CHECK(seg[1] > 0);
    CHECK(fits[1]);
  }
  sfc_graph_destroy(g);
}

/* The bundled U-Net at 1024^2 in 1.5 GiB, tiling on, both halo modes, through the
 * whole pipeline and both checkers. Its decoder's backward sums the gradient of a cat,
 * read through a channel slice and made by an earlier segment, with a pooling's
 * gradient: masked, that gradient once dropped out of the sum (an empty box in every
 * tile); seed, its box covered only the slice's channels (invariant 58 refused it). */
static void test_unet_sums(void) {
  sfc_graph_t *g = load_model("unet", 1024, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  sfc_config_t cfg = bestfit_config(UINT64_C(1500) << 20);
  cfg.tiling.mode = SFC_TILING_ON;
  for (int h = 0; h < 2; h++) {
    cfg.tiling.halo = h == 0 ? SFC_HALO_MASKED : SFC_HALO_SEED;
    sfc_ir_t ir;
    CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
    uint32_t seg = 0, tiles = 0, rec = 0, sums = 0, fed = 0;
    sfc_ir_tiling_counts(&ir, &seg, &tiles, &rec);
    /* every tile step of a gradient sum reads each of its inputs on some box */
    for (uint32_t i = 0; i < ir.n_steps; i++) {
      const sfc_step_t *st = &ir.steps[i];
      const sfc_op_t *op = &g->ops[st->op];
      if (st->segment == SFC_PLAN_NONE || op->phase != SFC_PHASE_BACKWARD ||
          strcmp(op->type, "add") != 0)
        continue;
      sums++;
      bool all = true;
      for (uint32_t u = 0; u < op->n_inputs; u++) {
        const sfc_use_t *use = &ir.uses[st->use_begin + u];
        const sfc_plan_box_t *b = use->box != SFC_PLAN_NONE ? &ir.boxes[use->box] : NULL;
        all &= b && b->lo[1] == 0 && b->hi[1] == g->tensors[use->tensor].shape[1] &&
               b->lo[2] < b->hi[2];
      }
      fed += all;
    }
    printf("U-Net 1024^2 at 1.5 GiB, tiling on, %s: %u segments, %u tiles, %u tiled gradient "
           "sums, %u reading every input on a box of all its channels\n",
           h == 0 ? "masked" : "seed", seg, tiles, sums, fed);
    CHECK(seg > 0 && sums > 0);
    CHECK_EQ_U64(fed, sums);
    sfc_ir_deinit(&ir);
  }
  sfc_graph_destroy(g);
}

/* tests/data/graphs/tiny_fcn.json (sfc-export tiny-fcn --batch 2 --image-size 32): a
 * residual block whose input `a` is read by c2 and by the residual add. Under seed
 * halos at these budgets the partitioner once made one segment of c1 .. c2's relu,
 * with `a` inside it and the add after it: the tiles wrote `a`, handed on, on their
 * overlapping receptive fields (invariant 40 refused the plan as a compiler bug). Now a
 * segment that would write a kept tensor twice is not chosen. */
static void test_kept_branch(void) {
  const char *src = getenv("SFC_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/data/graphs/tiny_fcn.json", src ? src : ".");
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  CHECK(sfc_graph_load_file(path, &g, &err) == SFC_OK);
  if (!g)
    return;
  uint32_t compiled = 0, tiled = 0;
  for (int h = 0; h < 2; h++)
    for (uint64_t kib = 550; kib <= 850; kib += 50) {
      sfc_config_t cfg = bestfit_config(kib << 10);
      cfg.tiling.mode = SFC_TILING_ON;
      cfg.tiling.halo = h == 0 ? SFC_HALO_MASKED : SFC_HALO_SEED;
      sfc_ir_t ir;
      sfc_status_t st = compile_verified(g, &cfg, &ir);
      CHECK(st == SFC_OK);
      uint32_t seg = 0, tiles = 0, rec = 0;
      sfc_ir_tiling_counts(&ir, &seg, &tiles, &rec);
      compiled += st == SFC_OK;
      tiled += seg > 0;
      sfc_ir_deinit(&ir);
    }
  printf("tiny-fcn (a residual block) at 550..850 KiB, tiling on, masked and seed: %u plans "
         "verified, %u tiled\n",
         compiled, tiled);
  CHECK_EQ_U64(tiled, 14);
  sfc_graph_destroy(g);
}

/* ---- tiling.grid and tiling.segments ------------------------------------------------ */

/* Every FT segment of a compiled plan: its grid is rows x cols (no batch split), and the
 * tiles add up to rows x cols per segment. Returns the number of forward segments. */
static uint32_t check_forced_grid(const sfc_ir_t *ir, uint32_t rows, uint32_t cols) {
  uint32_t segments = 0, tiles = 0, recomputed = 0, fwd = 0;
  sfc_ir_tiling_counts(ir, &segments, &tiles, &recomputed);
  for (uint32_t k = 0; k < ir->n_segments; k++) {
    const sfc_plan_segment_t *sg = &ir->segments[k];
    CHECK_EQ_U64(sg->grid[0], 1);
    CHECK_EQ_U64(sg->grid[1], 1);
    CHECK_EQ_U64(sg->grid[2], rows);
    CHECK_EQ_U64(sg->grid[3], cols);
    CHECK_EQ_U64(sg->tile_count, (uint64_t)rows * cols);
    fwd += !(sg->flags & SFC_SEGMENT_BACKWARD);
  }
  CHECK_EQ_U64(fwd, segments);
  CHECK_EQ_U64(tiles, (uint64_t)segments * rows * cols);
  return segments;
}

/* tiling.grid forces every tiled segment's grid, under on and auto, with the segments
 * the partitioner cuts or (segments: longest) the whole convolution stack as one; 1x1
 * too (one tile: the stack's forward recomputed in the backward). Every plan verified. */
static void test_forced_grid(void) {
  sfc_graph_t *g = load_vgg16(4096, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  static const struct {
    sfc_tiling_mode_t mode;
    uint32_t rows, cols;
    sfc_tiling_segments_t segments;
    sfc_tiling_halo_t halo;
  } cases[] = {
      {SFC_TILING_ON, 4, 4, SFC_SEGMENTS_AUTO, SFC_HALO_MASKED},
      {SFC_TILING_ON, 3, 5, SFC_SEGMENTS_LONGEST, SFC_HALO_MASKED},
      {SFC_TILING_ON, 8, 8, SFC_SEGMENTS_LONGEST, SFC_HALO_SEED},
      {SFC_TILING_ON, 1, 1, SFC_SEGMENTS_LONGEST, SFC_HALO_SEED},
      {SFC_TILING_AUTO, 6, 6, SFC_SEGMENTS_AUTO, SFC_HALO_MASKED},
      {SFC_TILING_AUTO, 4, 4, SFC_SEGMENTS_LONGEST, SFC_HALO_SEED},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sfc_config_t cfg = bestfit_config(UINT64_C(4) << 30); /* untiled: 24.5 GiB */
    cfg.tiling.mode = cases[i].mode;
    cfg.tiling.grid[0] = cases[i].rows;
    cfg.tiling.grid[1] = cases[i].cols;
    cfg.tiling.segments = cases[i].segments;
    cfg.tiling.halo = cases[i].halo;
    sfc_ir_t ir;
    CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
    uint32_t segments = check_forced_grid(&ir, cases[i].rows, cases[i].cols);
    printf("VGG-16 4096^2 at 4 GiB, tiling %s, grid %ux%u, segments %s, halo %s: %u segments, "
           "%s, %.3f s predicted\n",
           sfc_tiling_mode_name(cases[i].mode), cases[i].rows, cases[i].cols,
           sfc_tiling_segments_name(cases[i].segments), sfc_tiling_halo_name(cases[i].halo),
           segments, ir.fits_budget ? "fits" : "over", ir.predicted_iteration_s);
    CHECK(segments > 0);
    if (cases[i].segments == SFC_SEGMENTS_LONGEST)
      CHECK_EQ_U64(segments, 1); /* the 13 convolutions and 5 poolings */
    if (cases[i].mode == SFC_TILING_AUTO)
      CHECK(ir.fits_budget); /* auto keeps a candidate whose schedule fits */
    sfc_ir_deinit(&ir);
  }
  sfc_graph_destroy(g);
}

/* The SFT artifact's configuration through the whole pipeline: the bundled VGG-16 at
 * 10240^2, tiling.grid 8x8, segments longest, halo seed. The plan's interior tiles
 * recompute the first convolution on a 1652 x 1652 box of the image (the artifact's;
 * test_vgg16_halo has the same from the partitioner's boxes), its corner tiles on
 * 1466 x 1466. */
static void test_forced_grid_artifact_box(void) {
  sfc_graph_t *g = load_vgg16(10240, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  sfc_config_t cfg = bestfit_config(UINT64_C(11) << 30);
  cfg.tiling.mode = SFC_TILING_ON;
  cfg.tiling.grid[0] = cfg.tiling.grid[1] = 8;
  cfg.tiling.segments = SFC_SEGMENTS_LONGEST;
  cfg.tiling.halo = SFC_HALO_SEED;
  sfc_ir_t ir;
  CHECK(compile_verified(g, &cfg, &ir) == SFC_OK);
  CHECK_EQ_U64(check_forced_grid(&ir, 8, 8), 1);
  uint32_t image = g->ops[0].inputs[0], found = 0;
  int64_t rows[64] = {0}, cols[64] = {0};
  CHECK(strcmp(g->ops[0].type, "convolution") == 0);
  for (uint32_t i = 0; i < ir.n_steps; i++) {
    const sfc_step_t *st = &ir.steps[i];
    if (st->op != 0 || !(st->flags & SFC_STEP_RECOMPUTE) || st->tile >= 64)
      continue;
    for (uint32_t u = 0; u < st->use_count; u++) {
      const sfc_use_t *use = &ir.uses[st->use_begin + u];
      if (use->tensor != image || use->box == SFC_PLAN_NONE)
        continue;
      const sfc_plan_box_t *b = &ir.boxes[use->box];
      rows[st->tile] = b->hi[2] - b->lo[2];
      cols[st->tile] = b->hi[3] - b->lo[3];
      found++;
    }
  }
  CHECK_EQ_U64(found, 64); /* one recomputed first convolution per tile */
  CHECK_EQ_I64(rows[3 * 8 + 3], 1652);
  CHECK_EQ_I64(cols[3 * 8 + 3], 1652);
  CHECK_EQ_I64(rows[0], 1466);
  CHECK_EQ_I64(cols[0], 1466);
  printf("VGG-16 10240^2, tiling.grid 8x8, segments longest, halo seed: interior input box "
         "%lld x %lld, corner %lld x %lld, %s, %.2f s predicted\n",
         (long long)rows[27], (long long)cols[27], (long long)rows[0], (long long)cols[0],
         ir.fits_budget ? "fits" : "over", ir.predicted_iteration_s);
  sfc_ir_deinit(&ir);
  sfc_graph_destroy(g);
}

/* A grid the segment's output cannot take is one clear error naming the segment and its
 * output's size, from the partitioner, and from sfc_compile_ir under on and auto (the
 * config file named); never a crash. */
static void test_forced_grid_too_large(void) {
  uint32_t out;
  sfc_graph_t *g = vgg16_features(224, &out); /* the stack's output: 7 x 7 */
  sfc_pool_t pool = {0};
  sfc_error_t err = {0};
  sfc_ft_segment_t *segs = NULL;
  uint32_t n = 0;
  sfc_ft_partition_opts_t o = {.tile_bytes = UINT64_C(1) << 20,
                               .checkpoint_bytes = UINT64_C(1) << 30,
                               .max_tiles = 1024,
                               .min_tile = 1,
                               .grid = {8, 8},
                               .longest = true};
  CHECK_EQ_I64(sfc_ft_partition_with(g, &o, &segs, &n, &pool, &err), SFC_ERR_BAD_INPUT);
  CHECK_EQ_U64(n, 0);
  CHECK_CONTAINS(err.message, "tiling.grid: 8x8 does not fit the tileable run \"");
  CHECK_CONTAINS(err.message, "its output is 7 x 7: fewer rows than the grid");
  o.grid[0] = 7; /* 7 x 7 tiles of one element: the grid fits when min_tile allows */
  o.grid[1] = 7;
  CHECK_OK(sfc_ft_partition_with(g, &o, &segs, &n, &pool, &err), err);
  CHECK_EQ_U64(n, 1);
  if (n == 1) {
    CHECK_EQ_U64(segs[0].output, out);
    CHECK_EQ_U64(sfc_ft_tile_count(&segs[0]), 49);
  }
  o.min_tile = 2; /* 7 / 7 = 1 row per tile, under min_tile */
  CHECK_EQ_I64(sfc_ft_partition_with(g, &o, &segs, &n, &pool, &err), SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message, "its output is 7 x 7: tiles of 1 x 1, under tiling.min_tile = 2");
  o.grid[0] = 1; /* 1 row: only the columns must fit */
  o.grid[1] = 8;
  o.longest = false;
  CHECK_EQ_I64(sfc_ft_partition_with(g, &o, &segs, &n, &pool, &err), SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message, "fewer columns than the grid");
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);

  /* through the pipeline: the bundled VGG-16 at 224^2 (its stack ends at 7 x 7) */
  g = load_vgg16(224, 1);
  CHECK(g != NULL);
  if (!g)
    return;
  for (int m = 0; m < 2; m++) {
    sfc_config_t cfg = bestfit_config(UINT64_C(64) << 20); /* auto must tile: untiled over */
    snprintf(cfg.source, sizeof cfg.source, "grid.yaml");
    cfg.tiling.mode = m == 0 ? SFC_TILING_ON : SFC_TILING_AUTO;
    cfg.tiling.grid[0] = cfg.tiling.grid[1] = 16;
    sfc_ir_t ir;
    sfc_ir_init(&ir, g, &cfg);
    sfc_status_t st = sfc_compile_ir(&ir, NULL, &err);
    CHECK_EQ_I64(st, SFC_ERR_BAD_INPUT);
    CHECK_CONTAINS(err.message, "grid.yaml: tiling.grid: 16x16 does not fit the segment \"");
    CHECK(strstr(err.message, "its output is") != NULL);
    CHECK(strchr(err.message, '\n') == NULL);
    printf("tiling %s, grid 16x16 on VGG-16 224^2: %s\n", sfc_tiling_mode_name(cfg.tiling.mode),
           err.message);
    sfc_ir_deinit(&ir);
  }
  sfc_graph_destroy(g);
}

int main(void) {
  RUN(test_vgg16_halo);
  RUN(test_seed_plans);
  RUN(test_seed_halo_vectors);
  RUN(test_seed_refuses);
  RUN(test_vgg16);
  RUN(test_unet);
  RUN(test_unet_sums);
  RUN(test_kept_branch);
  RUN(test_resnet50);
  RUN(test_workspaces_tile);
  RUN(test_transposed_workspace_tile);
  RUN(test_auto_fits_untiled);
  RUN(test_unet_plain_8192);
  RUN(test_fastest);
  RUN(test_auto_tiles_when_needed);
  RUN(test_forced_grid);
  RUN(test_forced_grid_artifact_box);
  RUN(test_forced_grid_too_large);
  return check_summary();
}
