/* test_load_graph.c — unit tests of the graph loader (compiler/src/load_graph.c).
 *
 * 1. The hand-written graphs of tests/data/graphs load, and their fields come out as
 *    the file says: ids mapped to indices, attrs expanded, workspaces synthesized,
 *    flags, backward_of, defaults.
 * 2. Every file of tests/data/bad_graphs fails with exactly the line its sidecar
 *    <file>.err specifies ("sfc: " + message, @INPUT@ standing for the path), so the
 *    corpus is checked at the library level even without the CLI; a few files also
 *    pin their status code (SFC_ERR_VERSION, SFC_ERR_LIMIT).
 * 3. Loading from memory: messages start at "$" / "line:col", gzip in memory, NULLs.
 * 4. Strict JSON (RFC 8259): what cJSON alone would take and sfc refuses, what stays
 *    accepted, numbers quoted with the file's own digits; the escaping of names.
 * 5. gzip: the inflated size is capped while streaming, before anything is held (the
 *    cap injected small, a counting allocator shows what was allocated).
 * 6. A large generated graph (200k ops) loads; its load time is printed.
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "load_graph.h"
#include "load_graph_internal.h"

static sfc_graph_t *load_good(const char *name) {
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  char rel[256];
  snprintf(rel, sizeof rel, "graphs/%s", name);
  CHECK_OK(sfc_graph_load_file(test_data(rel), &g, &err), err);
  return g;
}

static uint32_t tensor_by_name(const sfc_graph_t *g, const char *name) {
  for (uint32_t i = 0; i < g->n_tensors; i++)
    if (strcmp(g->tensors[i].name, name) == 0)
      return i;
  return SFC_PLAN_NONE;
}

static uint32_t op_by_name(const sfc_graph_t *g, const char *name) {
  for (uint32_t i = 0; i < g->n_ops; i++)
    if (strcmp(g->ops[i].name, name) == 0)
      return i;
  return SFC_PLAN_NONE;
}

/* ---- good graphs ------------------------------------------------------------------- */

static void test_minimal(void) {
  sfc_graph_t *g = load_good("minimal.json");
  if (!g)
    return;
  CHECK_STR_EQ(g->name, "minimal");
  CHECK_EQ_U64(g->n_tensors, 2);
  CHECK_EQ_U64(g->n_file_tensors, 2);
  CHECK_EQ_U64(g->n_ops, 1);
  const sfc_op_t *op = &g->ops[0];
  CHECK_STR_EQ(op->type, "relu");
  CHECK_EQ_U64(op->phase, SFC_PHASE_FORWARD);
  CHECK_EQ_U64(op->n_inputs, 1);
  CHECK_EQ_U64(op->inputs[0], 0);
  CHECK_EQ_U64(op->n_outputs, 1);
  CHECK_EQ_U64(op->outputs[0], 1);
  /* Defaults of everything absent. */
  CHECK_EQ_U64(op->workspace, SFC_PLAN_NONE);
  CHECK_EQ_U64(op->backward_of, SFC_PLAN_NONE);
  CHECK_NEAR(op->time_us, -1, 0);
  CHECK_EQ_U64(op->flops, 0);
  CHECK_EQ_U64(op->workspace_bytes, 0);
  CHECK_EQ_U64(op->attrs.present, 0);
  CHECK_EQ_U64(op->attrs.rank, 0);
  CHECK_EQ_I64(op->attrs.kernel[0], 1);
  CHECK_EQ_I64(op->attrs.stride[2], 1);
  CHECK_EQ_I64(op->attrs.padding[1], 0);
  CHECK_EQ_I64(op->attrs.dilation[0], 1);
  CHECK_EQ_I64(op->attrs.scale[0], 1);
  CHECK_EQ_I64(op->attrs.groups, 1);
  CHECK(!op->attrs.ceil_mode);
  const sfc_tensor_t *x = &g->tensors[0], *y = &g->tensors[1];
  CHECK_EQ_U64(x->kind, SFC_KIND_INPUT);
  CHECK_EQ_U64(x->flags, SFC_TENSOR_PERSISTENT);
  CHECK_EQ_U64(y->kind, SFC_KIND_OUTPUT);
  CHECK_EQ_U64(y->flags, 0);
  CHECK_EQ_U64(x->dtype, SFC_DTYPE_F32);
  CHECK_EQ_U64(x->ndim, 1);
  CHECK_EQ_I64(x->shape[0], 16);
  CHECK_EQ_I64(x->batch_axis, -1);
  sfc_graph_destroy(g);
}

static void test_tiny_mlp(void) {
  sfc_graph_t *g = load_good("tiny_mlp.json");
  if (!g)
    return;
  CHECK_EQ_U64(g->n_ops, 14);
  CHECK_EQ_U64(g->n_tensors, 23);
  uint32_t loss = op_by_name(g, "nll_loss"), bwd = op_by_name(g, "nll_loss_backward");
  CHECK_EQ_U64(g->ops[loss].phase, SFC_PHASE_LOSS);
  CHECK_EQ_U64(g->ops[bwd].phase, SFC_PHASE_BACKWARD);
  CHECK_EQ_U64(g->ops[bwd].backward_of, loss);
  CHECK_EQ_U64(g->ops[op_by_name(g, "fc1_backward")].backward_of, op_by_name(g, "fc1"));
  const sfc_tensor_t *l = &g->tensors[tensor_by_name(g, "loss")];
  CHECK_EQ_U64(l->kind, SFC_KIND_OUTPUT);
  CHECK_EQ_U64(l->bytes, 4);
  CHECK_EQ_U64(l->ndim, 0);
  CHECK_EQ_U64(g->tensors[tensor_by_name(g, "labels")].dtype, SFC_DTYPE_I64);
  CHECK_EQ_I64(g->tensors[tensor_by_name(g, "x")].batch_axis, 0);
  /* SGD writes the param in place: it is both an input and an output. */
  const sfc_op_t *sgd = &g->ops[op_by_name(g, "sgd.fc1.weight")];
  uint32_t w = tensor_by_name(g, "fc1.weight");
  CHECK_EQ_U64(sgd->phase, SFC_PHASE_UPDATE);
  CHECK_EQ_U64(sgd->inputs[0], w);
  CHECK_EQ_U64(sgd->outputs[0], w);
  CHECK_EQ_U64(g->tensors[tensor_by_name(g, "fc1.weight.momentum")].flags, SFC_TENSOR_PERSISTENT);
  CHECK_EQ_U64(g->tensors[tensor_by_name(g, "h1.grad")].kind, SFC_KIND_GRAD);
  CHECK_NEAR(g->ops[0].time_us, 4.0, 0);
  CHECK_EQ_U64(g->ops[0].flops, 4096);
  sfc_graph_destroy(g);
}

static void test_small_cnn(void) {
  sfc_graph_t *g = load_good("small_cnn.json");
  if (!g)
    return;
  CHECK_EQ_U64(g->n_ops, 30);
  CHECK_EQ_U64(g->n_file_tensors, 41);
  CHECK_EQ_U64(g->n_tensors, 42); /* + conv1's workspace */
  uint32_t conv1 = op_by_name(g, "conv1");
  const sfc_op_t *c = &g->ops[conv1];
  CHECK_EQ_U64(c->attrs.present, SFC_ATTR_KERNEL | SFC_ATTR_STRIDE | SFC_ATTR_PADDING |
                                     SFC_ATTR_DILATION | SFC_ATTR_GROUPS);
  CHECK_EQ_U64(c->attrs.rank, 2);
  CHECK_EQ_I64(c->attrs.kernel[0], 3);
  CHECK_EQ_I64(c->attrs.kernel[1], 3);
  CHECK_EQ_I64(c->attrs.kernel[2], 1); /* beyond the rank: the default */
  CHECK_EQ_I64(c->attrs.padding[1], 1);
  CHECK_EQ_I64(c->attrs.padding[2], 0);
  CHECK_EQ_U64(c->workspace_bytes, 65536);
  CHECK_EQ_U64(c->workspace, 41);
  const sfc_tensor_t *ws = &g->tensors[41];
  CHECK_STR_EQ(ws->name, "conv1.workspace");
  CHECK_EQ_I64(ws->id, -1);
  CHECK_EQ_U64(ws->bytes, 65536);
  CHECK_EQ_U64(ws->kind, SFC_KIND_WORKSPACE);
  CHECK_EQ_U64(ws->flags, SFC_TENSOR_SYNTHETIC);
  CHECK_EQ_I64(ws->batch_axis, -1);
  CHECK_EQ_U64(sfc_op_operand_count(c), 4);
  CHECK_EQ_U64(sfc_op_operand(c, 3), 41);
  const sfc_op_t *pool = &g->ops[op_by_name(g, "pool1")];
  CHECK(pool->attrs.present & SFC_ATTR_CEIL_MODE);
  CHECK(!pool->attrs.ceil_mode);
  CHECK_EQ_I64(pool->attrs.stride[0], 2);
  CHECK_EQ_U64(g->ops[op_by_name(g, "conv1_backward")].backward_of, conv1);
  CHECK_EQ_U64(g->ops[op_by_name(g, "conv2")].workspace, SFC_PLAN_NONE);
  CHECK_EQ_U64(g->ops[op_by_name(g, "conv1")].flops, 7077888);
  const sfc_tensor_t *x = &g->tensors[tensor_by_name(g, "x")];
  CHECK_EQ_U64(x->ndim, 4);
  CHECK_EQ_I64(x->shape[1], 3);
  CHECK_EQ_U64(x->bytes, 8 * 3 * 32 * 32 * 4);
  sfc_graph_destroy(g);
}

static void test_inplace(void) {
  sfc_graph_t *g = load_good("inplace.json");
  if (!g)
    return;
  uint32_t h = tensor_by_name(g, "h");
  const sfc_op_t *relu = &g->ops[op_by_name(g, "relu_")], *add = &g->ops[op_by_name(g, "add_")];
  CHECK_EQ_U64(relu->inputs[0], h);
  CHECK_EQ_U64(relu->outputs[0], h);
  CHECK_EQ_U64(add->inputs[0], h);
  CHECK_EQ_U64(add->outputs[0], h);
  sfc_graph_destroy(g);
}

static void test_sparse_ids(void) {
  sfc_graph_t *g = load_good("sparse_ids.json");
  if (!g)
    return;
  /* Tensors keep file order; ids map to those indices. */
  CHECK_EQ_I64(g->tensors[0].id, 5000);
  CHECK_EQ_I64(g->tensors[3].id, 13);
  CHECK_EQ_I64(g->ops[0].id, 300);
  CHECK_EQ_U64(g->ops[0].inputs[0], 3);   /* id 13 */
  CHECK_EQ_U64(g->ops[0].inputs[1], 1);   /* id 907 */
  CHECK_EQ_U64(g->ops[0].outputs[0], 0);  /* id 5000 */
  CHECK_EQ_U64(g->ops[2].backward_of, 1); /* op id 12 */
  CHECK_EQ_U64(g->ops[3].backward_of, 0); /* op id 300 */
  CHECK_EQ_U64(g->n_tensors, 7);
  CHECK_STR_EQ(g->tensors[6].name, "fc.workspace");
  CHECK_EQ_U64(g->tensors[6].bytes, 1024);
  CHECK_EQ_U64(g->ops[0].workspace, 6);
  sfc_graph_destroy(g);
}

static void test_leading_gap(void) {
  sfc_graph_t *g = load_good("leading_gap.json");
  if (!g)
    return;
  CHECK_EQ_U64(g->n_tensors, 3);
  CHECK_EQ_U64(g->n_ops, 4);
  uint64_t total = 0;
  for (uint32_t i = 0; i < g->n_tensors; i++) {
    CHECK_EQ_U64(g->tensors[i].kind, SFC_KIND_ACTIVATION);
    total += g->tensors[i].bytes;
  }
  CHECK_EQ_U64(total, 240);
  CHECK_EQ_U64(g->ops[0].n_inputs, 0);
  CHECK_EQ_U64(g->ops[3].n_outputs, 0);
  sfc_graph_destroy(g);
}

/* ---- the bad graph corpus --------------------------------------------------------------- */

static const struct {
  const char *file;
  sfc_status_t status;
} special_status[] = {
    {"version_2.json", SFC_ERR_VERSION},     {"bytes_huge.json", SFC_ERR_LIMIT},
    {"bytes_overflow.json", SFC_ERR_LIMIT},  {"total_bytes.json", SFC_ERR_LIMIT},
    {"too_many_inputs.json", SFC_ERR_LIMIT}, {"workspace_huge.json", SFC_ERR_LIMIT},
    {"deep_nesting.json", SFC_ERR_LIMIT},    {"json_number_too_long.json", SFC_ERR_LIMIT},
};

static sfc_status_t expected_status(const char *file) {
  for (size_t i = 0; i < sizeof special_status / sizeof special_status[0]; i++)
    if (strcmp(special_status[i].file, file) == 0)
      return special_status[i].status;
  return SFC_ERR_BAD_INPUT;
}

static int name_cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The sidecar's line with @INPUT@ replaced by path. */
static int expected_line(const char *path, char *out, size_t cap) {
  char errpath[4096], line[2048];
  if (snprintf(errpath, sizeof errpath, "%s.err", path) >= (int)sizeof errpath)
    return 0;
  FILE *f = fopen(errpath, "r");
  if (!f)
    return 0;
  int ok = fgets(line, sizeof line, f) != NULL;
  fclose(f);
  if (!ok)
    return 0;
  line[strcspn(line, "\n")] = '\0';
  char *at = strstr(line, "@INPUT@");
  int n = at ? snprintf(out, cap, "%.*s%s%s", (int)(at - line), line, path, at + 7)
             : snprintf(out, cap, "%s", line);
  return n >= 0 && (size_t)n < cap;
}

static void test_bad_graph_corpus(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", test_data("bad_graphs"));
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d)
    return;
  char *names[512];
  size_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < 512) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || (len > 4 && strcmp(e->d_name + len - 4, ".err") == 0))
      continue;
    names[n++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, n, sizeof *names, name_cmp);
  CHECK(n >= 24);
  for (size_t i = 0; i < n; i++) {
    char path[4096], want[4096], got[SFC_ERROR_MESSAGE_BYTES + 8];
    int have = snprintf(path, sizeof path, "%s/%s", dir, names[i]) < (int)sizeof path &&
               expected_line(path, want, sizeof want);
    CHECK(have);
    sfc_graph_t *g = NULL;
    sfc_error_t err = {0};
    sfc_status_t s = sfc_graph_load_file(path, &g, &err);
    snprintf(got, sizeof got, "sfc: %s", err.message);
    if (s == SFC_OK)
      fprintf(stderr, "  %s: loaded, but it should fail\n", names[i]);
    CHECK(s != SFC_OK);
    CHECK(g == NULL);
    CHECK_EQ_U64(s, expected_status(names[i]));
    CHECK(strchr(err.message, '\n') == NULL);
    if (have)
      CHECK_STR_EQ(got, want);
    sfc_graph_destroy(g);
    free(names[i]);
  }
  fprintf(stderr, "  %zu bad graphs checked\n", n);
}

/* ---- loading from memory -------------------------------------------------------------- */

static sfc_status_t load_str(const char *json, sfc_error_t *err) {
  sfc_graph_t *g = NULL;
  sfc_status_t s = sfc_graph_load_buffer(json, strlen(json), &g, err);
  sfc_graph_destroy(g);
  return s;
}

#define GRAPH(tensors, ops)                                                                        \
  "{\"format\": \"sfc-graph\", \"version\": 1, \"tensors\": [" tensors "], \"ops\": [" ops "]}"
#define T_IN(id)  "{\"id\": " #id ", \"bytes\": 8, \"kind\": \"input\"}"
#define T_ACT(id) "{\"id\": " #id ", \"bytes\": 8, \"kind\": \"activation\"}"

static void test_buffer_messages(void) {
  sfc_error_t err;
  CHECK_EQ_U64(load_str("{\"format\": 1", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "1:13: not valid JSON: unexpected end of input");
  CHECK_EQ_U64(load_str("", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "1:1: not valid JSON: the input is empty");
  CHECK_EQ_U64(load_str("{\"a\": ]}", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "1:7: not valid JSON: unexpected ']}'");
  CHECK_EQ_U64(load_str("{\"a\": 1 ]", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "1:9: not valid JSON: unexpected ']'");
  CHECK_EQ_U64(load_str("{\n  \"a\": \"\xc3\xa9t\xc3\xa9\" x}", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "2:14: not valid JSON: unexpected 'x}'"); /* columns count chars */
  CHECK_EQ_U64(load_str("42", &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "$: expected an object, got a number");
  CHECK_EQ_U64(load_str(GRAPH(T_IN(0) "," T_ACT(1),
                              "{\"id\": 0, \"type\": \"relu\", \"phase\": \"forward\", "
                              "\"inputs\": [0], \"outputs\": [1], \"backward_of\": 0}"),
                        &err),
               SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message,
               "$.ops[0].backward_of: op 0 is this op; backward_of must name an earlier op");
  /* A name with a control character and a non-ASCII name, quoted safely. */
  CHECK_EQ_U64(
      load_str(GRAPH("{\"id\": 0, \"name\": \"a\\tb\", \"bytes\": 8, \"kind\": \"activation\"}",
                     "{\"id\": 0, \"type\": \"relu\", \"phase\": \"forward\", "
                     "\"inputs\": [0], \"outputs\": []}"),
               &err),
      SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message,
               "$.ops[0].inputs[0]: tensor 0 (activation \"a\\x09b\") is used before any op "
               "produces it");
  CHECK_EQ_U64(load_str(GRAPH("{\"id\": 0, \"name\": \"\xe5\x8d\xb7\", \"bytes\": 8, \"kind\": "
                              "\"activation\"}",
                              "{\"id\": 0, \"type\": \"relu\", \"phase\": \"forward\", "
                              "\"inputs\": [0], \"outputs\": []}"),
                        &err),
               SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "$.ops[0].inputs[0]: tensor 0 (activation \"\xe5\x8d\xb7\") is used "
                            "before any op produces it");
  /* Duplicate keys among many unknown ones (the sorting path) report the first repeat. */
  char big[8192];
  size_t o = (size_t)snprintf(big, sizeof big, "{\"format\": \"sfc-graph\"");
  for (int i = 0; i < 100; i++)
    o += (size_t)snprintf(big + o, sizeof big - o, ", \"k%d\": %d", i % 90 == 89 ? 3 : i, i);
  snprintf(big + o, sizeof big - o, "}");
  CHECK_EQ_U64(load_str(big, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "$: duplicate key \"k3\"");
  /* Unknown fields are ignored, everywhere. */
  sfc_graph_t *g = NULL;
  const char *fwd = GRAPH("{\"id\": 0, \"bytes\": 8, \"kind\": \"input\", \"future\": [1, {}]}",
                          "{\"id\": 0, \"type\": \"relu\", \"phase\": \"forward\", \"inputs\": "
                          "[0], \"outputs\": [], \"attrs\": {\"alpha\": 0.5, \"beta\": 1, "
                          "\"scale\": [2]}, \"x\": null}");
  CHECK_OK(sfc_graph_load_buffer(fwd, strlen(fwd), &g, &err), err);
  if (g) {
    CHECK_EQ_U64(g->ops[0].attrs.present, SFC_ATTR_SCALE);
    CHECK_EQ_U64(g->ops[0].attrs.rank, 1);
    CHECK_EQ_I64(g->ops[0].attrs.scale[2], 2); /* one value applies to every dim */
    CHECK_STR_EQ(g->name, "");
    CHECK_STR_EQ(g->ops[0].name, "");
  }
  sfc_graph_destroy(g);
  /* Scalar attrs fill every dim; an unnamed op's workspace is named after its id. */
  g = NULL;
  const char *sc = GRAPH(T_IN(0) "," T_ACT(1),
                         "{\"id\": 17, \"type\": \"conv2d\", \"phase\": \"forward\", \"inputs\": "
                         "[0], \"outputs\": [1], \"attrs\": {\"kernel\": 5, \"padding\": 2, "
                         "\"dilation\": [1, 2], \"ceil_mode\": true, \"groups\": 4}, "
                         "\"workspace_bytes\": 7, \"time_us\": 0}");
  CHECK_OK(sfc_graph_load_buffer(sc, strlen(sc), &g, &err), err);
  if (g) {
    const sfc_attrs_t *a = &g->ops[0].attrs;
    CHECK_EQ_U64(a->rank, 2);
    CHECK_EQ_I64(a->kernel[2], 5);
    CHECK_EQ_I64(a->padding[0], 2);
    CHECK_EQ_I64(a->dilation[1], 2);
    CHECK_EQ_I64(a->dilation[2], 1);
    CHECK_EQ_I64(a->groups, 4);
    CHECK(a->ceil_mode);
    CHECK_STR_EQ(g->tensors[2].name, "op17.workspace");
    CHECK_EQ_U64(g->tensors[2].bytes, 7);
    CHECK_NEAR(g->ops[0].time_us, 0, 0);
  }
  sfc_graph_destroy(g);
  /* workspace_bytes 0 means none. */
  g = NULL;
  const char *w0 = GRAPH(T_IN(0), "{\"id\": 0, \"type\": \"x\", \"phase\": \"forward\", "
                                  "\"inputs\": [0, 0], \"outputs\": [], \"workspace_bytes\": 0}");
  CHECK_OK(sfc_graph_load_buffer(w0, strlen(w0), &g, &err), err);
  if (g) {
    CHECK_EQ_U64(g->n_tensors, 1);
    CHECK_EQ_U64(g->ops[0].workspace, SFC_PLAN_NONE);
  }
  sfc_graph_destroy(g);
  /* Bad arguments. */
  CHECK_EQ_U64(sfc_graph_load_buffer("{}", 2, NULL, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(sfc_graph_load_buffer(NULL, 5, &g, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(sfc_graph_load_file(NULL, &g, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_U64(sfc_graph_load_buffer("{", 1, &g, NULL), SFC_ERR_BAD_INPUT); /* err optional */
}

static void test_gzip_buffer(void) {
  const char *json = GRAPH(T_IN(0) "," T_ACT(1), "{\"id\": 0, \"type\": \"relu\", \"phase\": "
                                                 "\"forward\", \"inputs\": [0], \"outputs\": [1]}");
  unsigned char gz[1024];
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  CHECK(deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = (Bytef *)(uintptr_t)json;
  zs.avail_in = (uInt)strlen(json);
  zs.next_out = gz;
  zs.avail_out = sizeof gz;
  CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  size_t n = sizeof gz - zs.avail_out;
  deflateEnd(&zs);
  sfc_graph_t *g = NULL;
  sfc_error_t err;
  CHECK_OK(sfc_graph_load_buffer((const char *)gz, n, &g, &err), err);
  CHECK(g && g->n_ops == 1);
  sfc_graph_destroy(g);
  /* Two members, as `gzip -c a b` writes, are one stream; anything else after is not. */
  unsigned char two[2048];
  memcpy(two, gz, n);
  memcpy(two + n, gz, n);
  CHECK_EQ_U64(sfc_graph_load_buffer((const char *)two, 2 * n, &g, &err), SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message, "not valid JSON: unexpected text after the document");
  two[n] = 'x';
  CHECK_EQ_U64(sfc_graph_load_buffer((const char *)two, n + 1, &g, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "not valid gzip: 1 bytes of trailing data after the compressed stream");
  CHECK_EQ_U64(sfc_graph_load_buffer("\x1f\x8b", 2, &g, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "not valid gzip: unexpected end of compressed data");
}

/* ---- strict JSON -------------------------------------------------------------------- */

static sfc_status_t load_n(const char *json, size_t n, sfc_error_t *err) {
  sfc_graph_t *g = NULL;
  sfc_status_t s = sfc_graph_load_buffer(json, n, &g, err);
  sfc_graph_destroy(g);
  return s;
}

#define OP0                                                                                        \
  "{\"id\": 0, \"type\": \"relu\", \"phase\": \"forward\", \"inputs\": [0], \"outputs\": []"

static void test_strict_json(void) {
  sfc_error_t err;
  /* What cJSON takes and RFC 8259 does not: each is refused where it is. */
  static const struct {
    const char *json;
    size_t len; /* 0: strlen */
    const char *message;
  } bad[] = {
      {"{\"a\": [1, 2, 03]}", 0, "1:14: not valid JSON: number with a leading zero '03'"},
      {"{\"a\": -00.5}", 0, "1:7: not valid JSON: number with a leading zero '-00.5'"},
      {"{\"a\": 1.}", 0, "1:7: not valid JSON: a digit must follow the decimal point: '1.'"},
      {"{\"a\": 1.e5}", 0, "1:7: not valid JSON: a digit must follow the decimal point: '1.e5'"},
      {"{\"a\":\v1}", 0, "1:6: not valid JSON: unexpected '\\x0b1}'"},
      {"{\"a\": 1}\0", 9, "1:9: not valid JSON: unexpected text after the document: '\\x00'"},
      {"{\"a\": \"x\ty\"}", 0,
       "1:9: not valid JSON: raw control character '\\x09' in a string (escape it, as \\u0009)"},
      {"{\"a\": \"x\0y\"}", 12, "1:9: not valid JSON: NUL byte in a string"},
      {"{\"a\\u0000b\": 1}", 0,
       "1:4: '\\u0000' in a string: sfc keeps strings as C strings, which end at NUL"},
      {"{\"a\": \"\\uD83D\\u0041\"}", 0,
       "1:8: not valid JSON: lone surrogate '\\uD83D' in a string (a high surrogate must be "
       "followed by a low one, \\udc00..\\udfff)"},
      {"{\"a\": \"\\uD83D\"}", 0,
       "1:8: not valid JSON: lone surrogate '\\uD83D' in a string (a high surrogate must be "
       "followed by a low one, \\udc00..\\udfff)"},
      {"{\"a\": \"\\uZZZZ\"}", 0,
       "1:8: not valid JSON: invalid escape '\\uZZZZ' in a string (\\u takes 4 hex digits)"},
      {"{\"a\": \"\xc3\"}", 0, "1:8: not valid UTF-8: '\\xc3' in a string is a truncated sequence"},
      {"{\"a\": \"\xf0\x9f\x98\"}", 0,
       "1:8: not valid UTF-8: '\\xf0\\x9f\\x98' in a string is a truncated sequence"},
      {"{\"a\": \"\xf0\x8f\xbf\xbf\"}", 0,
       "1:8: not valid UTF-8: '\\xf0\\x8f\\xbf\\xbf' in a string is an overlong encoding"},
      {"{\"\xed\xbf\xbf\": 1}", 0,
       "1:3: not valid UTF-8: '\\xed\\xbf\\xbf' in a string is a UTF-16 surrogate encoded in "
       "UTF-8"},
      /* cJSON's own messages for plain bad structure stay as they were */
      {"{\"a\": [1, 2}", 0, "1:12: not valid JSON: unexpected '}'"},
      {"{\"a\": \"\\u12", 0, "1:7: not valid JSON: unterminated string"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t n = bad[i].len ? bad[i].len : strlen(bad[i].json);
    CHECK_EQ_U64(load_n(bad[i].json, n, &err), SFC_ERR_BAD_INPUT);
    CHECK_STR_EQ(err.message, bad[i].message);
  }
  char big[400];
  snprintf(big, sizeof big, "{\"a\": 1.%064d}", 0);
  CHECK_EQ_U64(load_str(big, &err), SFC_ERR_LIMIT);
  CHECK_STR_EQ(err.message, "1:7: JSON number '1.0000000000000000000000...' is longer than 63 "
                            "characters");
  snprintf(big, sizeof big, GRAPH(T_IN(0), OP0 ", \"time_us\": 1.%061d}"), 0); /* 63: fine */
  CHECK_OK(load_str(big, &err), err);

  /* Still accepted: a byte order mark, surrogate pairs, UTF-8 and escaped controls in
   * names, -0, exponents, 4.0 for 4, and numbers of any size in unknown fields. */
  sfc_graph_t *g = NULL;
  const char *ok =
      "\xef\xbb\xbf" GRAPH("{\"id\": 0, \"name\": \"\\ud83d\\ude00 caf\xc3\xa9 \\u001b[31m\", "
                           "\"bytes\": 1E2, \"kind\": \"input\", \"hash\": 18446744073709551615, "
                           "\"far\": 1e400, \"tiny\": -1e-400, \"pi\": 3.14159265358979323846}",
                           OP0 ", \"time_us\": -0, \"flops\": 9007199254740991, "
                               "\"workspace_bytes\": 4.0}");
  CHECK_OK(sfc_graph_load_buffer(ok, strlen(ok), &g, &err), err);
  if (g) {
    CHECK_STR_EQ(g->tensors[0].name, "\xf0\x9f\x98\x80 caf\xc3\xa9 \x1b[31m");
    CHECK_EQ_U64(g->tensors[0].bytes, 100);
    CHECK_EQ_U64(g->ops[0].flops, UINT64_C(9007199254740991));
    CHECK_EQ_U64(g->ops[0].workspace_bytes, 4);
  }
  sfc_graph_destroy(g);

  /* Numbers a double does not show are quoted as written, also after many others that
   * were kept (each message must find its own number). */
  static const struct {
    const char *field, *message;
  } num[] = {
      {"\"flops\": 9007199254740993",
       "$.ops[2].flops: must be at most 9007199254740991, got 9007199254740993"},
      {"\"flops\": 1e400", "$.ops[2].flops: must be at most 9007199254740991, got 1e400"},
      {"\"flops\": 90071992547409930e-1",
       "$.ops[2].flops: must be at most 9007199254740991, got 90071992547409930e-1"},
      {"\"workspace_bytes\": 1e-400", "$.ops[2].workspace_bytes: expected an integer, got 1e-400"},
      {"\"workspace_bytes\": 7.00000000000000001",
       "$.ops[2].workspace_bytes: expected an integer, got 7.00000000000000001"},
      {"\"backward_of\": -9007199254740993", "$.ops[2].backward_of: no op has id "
                                             "-9007199254740993"},
      {"\"flops\": 9007199254740992", /* exact in a double: shown as it is */
       "$.ops[2].flops: must be at most 9007199254740991, got 9007199254740992"},
  };
  for (size_t i = 0; i < sizeof num / sizeof num[0]; i++) {
    char json[1024];
    snprintf(json, sizeof json,
             GRAPH("{\"id\": 0, \"bytes\": 8, \"kind\": \"input\", \"h\": [12345678901234567890, "
                   "1e-999]}",
                   "{\"id\": 5, \"type\": \"a\", \"phase\": \"forward\", \"inputs\": [0], "
                   "\"outputs\": [], \"time_us\": 0.30000000000000004}, "
                   "{\"id\": 6, \"type\": \"b\", \"phase\": \"forward\", \"inputs\": [0], "
                   "\"outputs\": [], \"time_us\": 1.0000000000000002, \"x\": 1e999}, "
                   "{\"id\": 7, \"type\": \"c\", \"phase\": \"forward\", \"inputs\": [0], "
                   "\"outputs\": [], \"time_us\": 2.5000000000000001, %s}"),
             num[i].field);
    CHECK_EQ_U64(load_str(json, &err), SFC_ERR_BAD_INPUT);
    CHECK_STR_EQ(err.message, num[i].message);
  }
}

/* ---- escaping names ------------------------------------------------------------------- */

static void test_escape(void) {
  char out[64];
  /* C0 controls and DEL as \xNN, C1 controls as \u00NN, bad UTF-8 byte by byte */
  CHECK_STR_EQ(sfc_text_escape("a\x1b[2Jb\x7f", SIZE_MAX, SIZE_MAX, out, sizeof out),
               "a\\x1b[2Jb\\x7f");
  CHECK_STR_EQ(sfc_text_escape("\xc2\x9b\x31m \xc2\xa0", SIZE_MAX, SIZE_MAX, out, sizeof out),
               "\\u009b1m \xc2\xa0");
  CHECK_STR_EQ(sfc_text_escape("\xff\xc0\xaf\xed\xa0\x80", SIZE_MAX, SIZE_MAX, out, sizeof out),
               "\\xff\\xc0\\xaf\\xed\\xa0\\x80");
  CHECK_STR_EQ(sfc_text_escape("\xf0\x9f\x98\x80\xe2\x82\xac", SIZE_MAX, SIZE_MAX, out, sizeof out),
               "\xf0\x9f\x98\x80\xe2\x82\xac");
  CHECK_STR_EQ(sfc_text_escape("a\0b", 3, SIZE_MAX, out, sizeof out), "a\\x00b");
  /* cut after max_bytes with "...", and where out is full, never inside an escape */
  CHECK_STR_EQ(sfc_text_escape("abcdef", SIZE_MAX, 3, out, sizeof out), "abc...");
  CHECK_STR_EQ(sfc_text_escape("\x01\x02", SIZE_MAX, SIZE_MAX, out, 8), "\\x01");
  CHECK_STR_EQ(sfc_text_escape("\xe2\x82\xac", SIZE_MAX, SIZE_MAX, out, 3), "");
  char shown[SFC_NAME_SHOWN_BYTES], longname[400];
  CHECK_STR_EQ(sfc_name_shown(NULL, shown), "");
  memset(longname, '\x1b', sizeof longname - 1);
  longname[sizeof longname - 1] = '\0';
  CHECK_EQ_U64(strlen(sfc_name_shown(longname, shown)), 4 * SFC_NAME_SHOWN_MAX + 3);
  /* every message is one line without terminal controls */
  sfc_error_t err;
  sfc_error_set(&err, SFC_ERR_BAD_INPUT, "tensor '%s'", "a\nb\x1b]0;title\x07");
  CHECK_STR_EQ(err.message, "tensor 'a\\x0ab\\x1b]0;title\\x07'");
  /* names with controls reach the loader's messages escaped */
  CHECK_EQ_U64(load_str(GRAPH("{\"id\": 0, \"name\": \"\\u001b[2J\\u0085\\u007f\", \"bytes\": 8, "
                              "\"kind\": \"activation\"}",
                              OP0 "}"),
                        &err),
               SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "$.ops[0].inputs[0]: tensor 0 (activation \"\\x1b[2J\\u0085\\x7f\") is "
                            "used before any op produces it");
}

/* ---- gzip: the inflated size is capped before anything is held ------------------------ */

typedef struct peak_alloc {
  long calls;
  size_t live, peak;
} peak_alloc_t;

static void *peak_fn(void *user, void *ptr, size_t old_bytes, size_t new_bytes) {
  peak_alloc_t *a = user;
  if (new_bytes == 0) {
    a->live -= ptr ? old_bytes : 0;
    free(ptr);
    return NULL;
  }
  a->calls++;
  void *p = realloc(ptr, new_bytes);
  if (p) {
    a->live += new_bytes - (ptr ? old_bytes : 0);
    a->peak = a->live > a->peak ? a->live : a->peak;
  }
  return p;
}

/* One gzip member holding n bytes of zeros (about n / 1000 bytes compressed). */
static size_t gzip_zeros(size_t n, unsigned char *out, size_t cap) {
  unsigned char *zeros = calloc(n, 1);
  z_stream zs;
  memset(&zs, 0, sizeof zs);
  CHECK(zeros && deflateInit2(&zs, 9, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
  zs.next_in = zeros;
  zs.avail_in = (uInt)n;
  zs.next_out = out;
  zs.avail_out = (uInt)cap;
  CHECK(deflate(&zs, Z_FINISH) == Z_STREAM_END);
  size_t len = cap - zs.avail_out;
  deflateEnd(&zs);
  free(zeros);
  return len;
}

static void test_gzip_limit(void) {
  /* A bomb of 64 members of 64 KiB each: 4 MiB inflated from a few KiB. Its last footer
   * says 64 KiB, so only counting while inflating can tell its real size. */
  enum { MEMBER = 64 << 10, MEMBERS = 64, TOTAL = MEMBER * MEMBERS };
  unsigned char member[4096];
  size_t m = gzip_zeros(MEMBER, member, sizeof member);
  unsigned char *bomb = malloc(m * MEMBERS + 4);
  CHECK(bomb != NULL);
  if (!bomb)
    return;
  for (int i = 0; i < MEMBERS; i++)
    memcpy(bomb + (size_t)i * m, member, m);
  size_t n = m * MEMBERS;
  CHECK(n < TOTAL / 100);
  char *out = NULL;
  size_t out_len = 0;
  sfc_error_t err;

  /* At the limit: one allocation of exactly its size (plus the spare byte). */
  peak_alloc_t a = {0};
  sfc_allocator_t alloc = {peak_fn, &a};
  CHECK_OK(
      sfc_graph_input_gunzip((const char *)bomb, n, TOTAL, "b.gz", &alloc, &out, &out_len, &err),
      err);
  CHECK_EQ_U64(out_len, TOTAL);
  CHECK_EQ_U64(a.calls, 1);
  CHECK_EQ_U64(a.peak, TOTAL + 1);
  sfc_free(&alloc, out, out_len + 1);
  CHECK_EQ_U64(a.live, 0);

  /* One byte less: refused, and nothing was allocated for the output. */
  a = (peak_alloc_t){0};
  CHECK_EQ_U64(sfc_graph_input_gunzip((const char *)bomb, n, TOTAL - 1, "b.gz", &alloc, &out,
                                      &out_len, &err),
               SFC_ERR_LIMIT);
  CHECK_STR_EQ(err.message, "b.gz: the decompressed graph is more than the limit of 4194303 bytes");
  CHECK_EQ_U64(a.calls, 0);

  /* It stops once past the limit: the damage after the first members is never read. */
  memcpy(bomb + n, "junk", 4);
  a = (peak_alloc_t){0};
  CHECK_EQ_U64(
      sfc_graph_input_gunzip((const char *)bomb, n + 4, MEMBER, NULL, &alloc, &out, &out_len, &err),
      SFC_ERR_LIMIT);
  CHECK_STR_EQ(err.message, "the decompressed graph is more than the limit of 65536 bytes");
  CHECK_EQ_U64(a.calls, 0);
  /* ... and under a limit it does read to the end, damage included. */
  CHECK_EQ_U64(
      sfc_graph_input_gunzip((const char *)bomb, n + 4, TOTAL, NULL, &alloc, &out, &out_len, &err),
      SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "not valid gzip: 4 bytes of trailing data after the compressed stream");
  CHECK_EQ_U64(a.calls, 0);
  free(bomb);
}

static void test_file_errors(void) {
  sfc_graph_t *g = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfc_graph_load_file("/nonexistent/graph.json", &g, &err), SFC_ERR_IO);
  CHECK_STR_EQ(err.message, "/nonexistent/graph.json: cannot open: No such file or directory");
  CHECK_EQ_U64(sfc_graph_load_file(test_data("graphs"), &g, &err), SFC_ERR_IO);
  CHECK_CONTAINS(err.message, ": is a directory, not a graph file");
  /* A sparse file just over the limit is refused before it is read. */
  char path[] = "/tmp/sfc_test_big_graph_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0)
    return;
  int ok = ftruncate(fd, (off_t)SFC_MAX_GRAPH_FILE + 1) == 0;
  close(fd);
  if (ok) {
    CHECK_EQ_U64(sfc_graph_load_file(path, &g, &err), SFC_ERR_LIMIT);
    char want[512];
    snprintf(want, sizeof want,
             "%s: the file is 2147483649 bytes, more than the limit of 2147483648 (2 GiB)", path);
    CHECK_STR_EQ(err.message, want);
  }
  unlink(path);
}

/* ---- a large graph ---------------------------------------------------------------------- */

typedef struct sbuf {
  char *p;
  size_t n, cap;
} sbuf_t;

static void sb_printf(sbuf_t *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sbuf_t *b, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
    va_end(ap);
    if (k >= 0 && (size_t)k < b->cap - b->n) {
      b->n += (size_t)k;
      return;
    }
    b->cap = b->cap * 2 + (size_t)k + 1;
    b->p = realloc(b->p, b->cap);
    if (!b->p)
      abort();
  }
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* A chain of n_layers forward ops (each with a param and an activation; every 8th with
 * a workspace), a loss, n_layers backward ops and n_layers in-place updates: 3n + 1 ops.
 * Ids are scrambled (odd multiples) so the maps see non-dense keys. */
static void test_large_graph(void) {
  const uint32_t layers = 66667; /* 200,002 ops */
  sbuf_t b = {malloc(1 << 20), 0, 1 << 20};
  if (!b.p)
    return;
  sb_printf(&b,
            "{\"format\": \"sfc-graph\", \"version\": 1, \"name\": \"large\", \"tensors\": [\n");
  /* tensor ids: x = 1; w_i = 3 + 8i; a_i = 5 + 8i; g_i = 7 + 8i; dw_i = 9 + 8i; loss = 2 */
  sb_printf(&b, "{\"id\": 1, \"name\": \"x\", \"bytes\": 4096, \"kind\": \"input\"},\n");
  sb_printf(&b, "{\"id\": 2, \"name\": \"loss\", \"bytes\": 4, \"kind\": \"output\"}");
  for (uint32_t i = 0; i < layers; i++)
    sb_printf(&b,
              ",\n{\"id\": %u, \"name\": \"w%u\", \"bytes\": 1024, \"kind\": \"param\"},"
              "{\"id\": %u, \"name\": \"a%u\", \"bytes\": 4096, \"kind\": \"activation\", "
              "\"shape\": [32, 32], \"dtype\": \"f32\", \"batch_axis\": 0},"
              "{\"id\": %u, \"bytes\": 4096, \"kind\": \"grad\"},"
              "{\"id\": %u, \"bytes\": 1024, \"kind\": \"grad\"}",
              3 + 8 * i, i, 5 + 8 * i, i, 7 + 8 * i, 9 + 8 * i);
  sb_printf(&b, "\n], \"ops\": [\n");
  uint64_t op_id = 0;
  for (uint32_t i = 0; i < layers; i++) {
    sb_printf(&b,
              "{\"id\": %" PRIu64 ", \"name\": \"fwd%u\", \"type\": \"conv2d\", \"phase\": "
              "\"forward\", \"inputs\": [%u, %u], \"outputs\": [%u], \"attrs\": {\"kernel\": [3, "
              "3], \"padding\": 1}, \"time_us\": 12.5, \"flops\": 1000%s},\n",
              op_id * 7919 % 1000003, i, i ? 5 + 8 * (i - 1) : 1, 3 + 8 * i, 5 + 8 * i,
              i % 8 == 0 ? ", \"workspace_bytes\": 512" : "");
    op_id++;
  }
  sb_printf(&b,
            "{\"id\": %" PRIu64 ", \"type\": \"sum\", \"phase\": \"loss\", \"inputs\": [%u], "
            "\"outputs\": [2]},\n",
            op_id * 7919 % 1000003, 5 + 8 * (layers - 1));
  op_id++;
  for (uint32_t k = 0; k < layers; k++) {
    uint32_t i = layers - 1 - k;
    uint64_t fwd_id = (uint64_t)i * 7919 % 1000003;
    sb_printf(&b,
              "{\"id\": %" PRIu64 ", \"type\": \"conv2d_backward\", \"phase\": \"backward\", "
              "\"inputs\": [%u, %u], \"outputs\": [%u, %u], \"backward_of\": %" PRIu64 "},\n",
              op_id * 7919 % 1000003, k ? 7 + 8 * (i + 1) : 2, 3 + 8 * i, 7 + 8 * i, 9 + 8 * i,
              fwd_id);
    op_id++;
  }
  for (uint32_t i = 0; i < layers; i++) {
    sb_printf(&b,
              "{\"id\": %" PRIu64 ", \"type\": \"sgd_update\", \"phase\": \"update\", "
              "\"inputs\": [%u, %u], \"outputs\": [%u]}%s\n",
              op_id * 7919 % 1000003, 3 + 8 * i, 9 + 8 * i, 3 + 8 * i, i + 1 < layers ? "," : "");
    op_id++;
  }
  sb_printf(&b, "]}\n");

  sfc_graph_t *g = NULL;
  sfc_error_t err;
  double t0 = now_ms();
  CHECK_OK(sfc_graph_load_buffer(b.p, b.n, &g, &err), err);
  double ms = now_ms() - t0;
  if (g) {
    CHECK_EQ_U64(g->n_ops, 3 * (uint64_t)layers + 1);
    CHECK_EQ_U64(g->n_file_tensors, 4 * (uint64_t)layers + 2);
    CHECK_EQ_U64(g->n_tensors, g->n_file_tensors + (layers + 7) / 8);
    CHECK_EQ_U64(g->ops[layers + 1].backward_of, layers - 1);
    CHECK_EQ_U64(g->ops[2 * layers].backward_of, 0);
    fprintf(stderr, "  large graph: %u ops, %u tensors, %.1f MB of JSON loaded in %.0f ms\n",
            g->n_ops, g->n_tensors, b.n / 1e6, ms);
  }
  sfc_graph_destroy(g);
  free(b.p);
}

int main(void) {
  RUN(test_minimal);
  RUN(test_tiny_mlp);
  RUN(test_small_cnn);
  RUN(test_inplace);
  RUN(test_sparse_ids);
  RUN(test_leading_gap);
  RUN(test_bad_graph_corpus);
  RUN(test_buffer_messages);
  RUN(test_gzip_buffer);
  RUN(test_strict_json);
  RUN(test_escape);
  RUN(test_gzip_limit);
  RUN(test_file_errors);
  RUN(test_large_graph);
  return check_summary();
}
