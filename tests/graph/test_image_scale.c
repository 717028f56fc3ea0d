/* test_image_scale.c — `sfc compile --image-size` against the exporter (issue 12 item 5).
 *
 * tests/data/graphs/image_size holds real exports (tools/sfc-export, batch 2, no probe)
 * of VGG-16, ResNet-18 (strided windows, adaptive pooling) and U-Net (batch norm,
 * upsampling, concatenation, per-pixel targets) at 64 x 64 and 96 x 96 images. Each
 * 64 export rescaled to 96 by sfc_graph_image_scale must equal the 96 export to the
 * byte: same tensors, each with the same shape and bytes (the compiler-made workspace
 * tensors aside, which come from PyTorch's allocator inside an op), and every op the
 * export's FLOPs.
 * Also: bad arguments, a non-square input and an op the rules cannot size are errors
 * that leave the graph unchanged. */
#include <math.h>
#include <string.h>

#include "check.h"
#include "image_scale.h"
#include "load_graph.h"

static sfc_graph_t *load(const char *name) {
  char path[4096];
  snprintf(path, sizeof path, "%s/graphs/image_size/%s", getenv("SFC_TEST_DATA"), name);
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_load_file(path, &g, &err), err);
  return g;
}

static void compare(const char *model) {
  char a[128], b[128];
  snprintf(a, sizeof a, "%s-64.json.gz", model);
  snprintf(b, sizeof b, "%s-96.json.gz", model);
  sfc_graph_t *small = load(a), *big = load(b);
  if (!small || !big) {
    sfc_graph_destroy(small);
    sfc_graph_destroy(big);
    return;
  }
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_image_scale(small, 96, &err), err);
  CHECK_EQ_U64(small->n_file_tensors, big->n_file_tensors);
  CHECK_EQ_U64(small->n_ops, big->n_ops);
  uint32_t equal = 0, scaled = 0,
           n = small->n_file_tensors < big->n_file_tensors ? small->n_file_tensors
                                                           : big->n_file_tensors;
  for (uint32_t t = 0; t < n; t++) {
    const sfc_tensor_t *x = &small->tensors[t], *y = &big->tensors[t];
    bool same = x->id == y->id && x->ndim == y->ndim && x->bytes == y->bytes &&
                memcmp(x->shape, y->shape, sizeof x->shape) == 0;
    if (!same)
      fprintf(stderr,
              "  %s tensor %u \"%s\": %llu B [%lld %lld %lld %lld] vs the export's %llu B "
              "[%lld %lld %lld %lld]\n",
              model, t, x->name, (unsigned long long)x->bytes, (long long)x->shape[0],
              (long long)x->shape[1], (long long)x->shape[2], (long long)x->shape[3],
              (unsigned long long)y->bytes, (long long)y->shape[0], (long long)y->shape[1],
              (long long)y->shape[2], (long long)y->shape[3]);
    equal += same;
    scaled += x->ndim >= 3 && x->shape[x->ndim - 1] == 96;
  }
  CHECK_EQ_U64(equal, n);
  CHECK(scaled > 0);
  double worst = 0;
  for (uint32_t i = 0; i < small->n_ops && i < big->n_ops; i++) {
    double f = (double)small->ops[i].flops, e = (double)big->ops[i].flops;
    double r = e > 0 ? fabs(f - e) / e : (f > 0);
    if (r > 1e-9 && getenv("SFC_TEST_VERBOSE"))
      fprintf(stderr, "  %s op %u %s flops %.0f vs %.0f\n", model, i, small->ops[i].type, f, e);
    worst = r > worst ? r : worst;
  }
  CHECK(worst < 1e-9);
  printf("%-9s 64 -> 96: %u tensors equal the 96 export's (shape and bytes; %u scaled), %u ops; "
         "FLOPs worst relative difference %.2g\n",
         model, equal, scaled, small->n_ops, worst);
  sfc_graph_destroy(small);
  sfc_graph_destroy(big);
}

static void test_exports(void) {
  compare("vgg16");
  compare("resnet18");
  compare("unet");
}

static void test_errors(void) {
  sfc_graph_t *g = load("vgg16-64.json.gz");
  if (!g)
    return;
  sfc_error_t err = {0};
  uint64_t bytes = g->tensors[0].bytes;
  CHECK_EQ_I64(sfc_graph_image_scale(g, 0, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "must be between 1 and") != NULL);
  CHECK_EQ_I64(sfc_graph_image_scale(g, SFC_MAX_IMAGE_SIZE + 1, &err), SFC_ERR_INVALID_ARGUMENT);
  /* 16 x 16 leaves VGG-16's fifth pooling nothing to pool */
  CHECK_EQ_I64(sfc_graph_image_scale(g, 16, &err), SFC_ERR_BAD_INPUT);
  CHECK(strstr(err.message, "has no output at that size") != NULL);
  CHECK_EQ_U64(g->tensors[0].bytes, bytes);          /* unchanged */
  CHECK_OK(sfc_graph_image_scale(g, 64, &err), err); /* its own size: nothing to do */
  /* a non-square input */
  for (uint32_t t = 0; t < g->n_tensors; t++)
    if (g->tensors[t].kind == SFC_KIND_INPUT && g->tensors[t].ndim == 4) {
      g->tensors[t].shape[3] = 65;
      break;
    }
  CHECK_EQ_I64(sfc_graph_image_scale(g, 96, &err), SFC_ERR_BAD_INPUT);
  CHECK(strstr(err.message, "not square") != NULL);
  sfc_graph_destroy(g);
  /* an op no rule sizes: U-Net's first pooling, renamed */
  g = load("unet-64.json.gz");
  if (!g)
    return;
  for (uint32_t i = 0; i < g->n_ops; i++)
    if (strcmp(g->ops[i].type, "max_pool2d_with_indices") == 0) {
      g->ops[i].type = "mystery_op";
      break;
    }
  CHECK_EQ_I64(sfc_graph_image_scale(g, 96, &err), SFC_ERR_BAD_INPUT);
  CHECK(strstr(err.message, "by a rule sfc does not know") != NULL);
  sfc_graph_destroy(g);
}

int main(void) {
  RUN(test_exports);
  RUN(test_errors);
  return check_summary();
}
