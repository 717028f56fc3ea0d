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
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "graph_build.h"
#include "load_graph.h"
#include "passes.h"
#include "tiler.h"

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

static void check_model(const char *file, uint64_t tile_bytes) {
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
  CHECK(sfc_ft_partition(g, tile_bytes, 8 * tile_bytes, 1024, 4, false, &segs, &n, &pool, &err) ==
        SFC_OK);
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
    expect_steps += (uint64_t)(tiles - 1) * (fwd + bwd) + (uint64_t)tiles * recompute;
    tiles_total += tiles;
  }
  sfc_status_t st = sfc_ft_rewrite(&ir, segs, n, &err);
  if (st != SFC_OK)
    fprintf(stderr, "%s: %s\n", file, err.message);
  CHECK(st == SFC_OK);
  CHECK_EQ_U64(ir.n_steps, expect_steps);
  /* boxes inside tensors; accumulate only on outputs, written by a segment's first tile,
   * read and written by the others */
  uint32_t bad_box = 0, bad_acc = 0;
  for (uint32_t s = 0; s < ir.n_steps; s++) {
    const sfc_step_t *step = &ir.steps[s];
    const sfc_op_t *op = &g->ops[step->op];
    for (uint32_t u = 0; u < step->use_count; u++) {
      const sfc_use_t *use = &ir.uses[step->use_begin + u];
      if (use->flags & SFC_USE_ACCUMULATE)
        bad_acc +=
            u < op->n_inputs || use->access != (step->tile == 0 ? SFC_ACCESS_WRITE : SFC_ACCESS_RW);
      if (use->box == SFC_PLAN_NONE)
        continue;
      const sfc_plan_box_t *b = &ir.boxes[use->box];
      const sfc_tensor_t *t = &g->tensors[use->tensor];
      bad_box += b->tensor != use->tensor;
      for (int d = 0; d < 4; d++)
        bad_box += b->lo[d] < 0 || b->lo[d] > b->hi[d] || b->hi[d] > t->shape[d];
    }
  }
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
  printf("%-20s tile budget %8.2f MiB: %u segments, %u tiles, %u ops -> %u steps, %u boxes\n", file,
         (double)tile_bytes / 1048576.0, n, tiles_total, g->n_ops, ir.n_steps, ir.n_boxes);
  for (uint32_t k = 0; k < n; k++)
    printf("    ops [%u, %u) %s..%s, backward [%u, %u), grid %ux%ux%u\n", segs[k].fwd_begin,
           segs[k].fwd_end, g->ops[segs[k].fwd_begin].type, g->ops[segs[k].fwd_end - 1].type,
           segs[k].bwd_begin, segs[k].bwd_end, segs[k].grid[0], segs[k].grid[2], segs[k].grid[3]);
  sfc_ir_deinit(&ir);
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
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
    printf("VGG-16 10240^2, 8x8 tiles of the 320^2 output: interior input tile %lld x %lld "
           "(disjoint 1280; the SFT artifact's, with its backward halo: 1652), corner %lld; "
           "%u tensors recomputed per tile; peak of one tile's recomputed tensors %.2f GiB\n",
           (long long)hx, (long long)wx, (long long)(b[0].hi[2] - b[0].lo[2]), info.n_partial,
           (double)sfc_ft_partial_peak(g, &s, &info, b) / 1073741824.0);
  }
  sfc_pool_free_all(&pool);
  sfc_graph_destroy(g);
}

int main(void) {
  RUN(test_vgg16_halo);
  RUN(test_vgg16);
  RUN(test_unet);
  RUN(test_resnet50);
  return check_summary();
}
