/* load_graph.c — read and validate an sfc-graph v1 file into an sfc_graph_t (load_graph.h).
 *
 * The format is documented in docs/graph-format.md (schema: schemas/graph.schema.json).
 * load_graph_input.c turns the bytes (gzip or not) into a cJSON tree; this file walks
 * the tree once, in document order, and fills the graph:
 *
 *   root     duplicate keys, format, version, name, batch and device (optional), the tensors
 *            and ops arrays
 *   tensors  id (unique, via an open-addressing hash map id -> index), name, bytes
 *            (1..2^50, running total bounded by SFC_MAX_TOTAL_BYTES), kind, shape,
 *            dtype, batch_axis; persistent kinds get SFC_TENSOR_PERSISTENT
 *   ops      in execution order: id (unique, second map), name, type, phase, inputs
 *            and outputs (ids -> indices; a non-persistent tensor must be produced by
 *            an earlier op, or by this op's outputs, before it is read), attrs,
 *            time_us, time_fixed_us (0 .. time_us), flops, workspace_bytes (lowered to
 *            a synthetic workspace tensor appended after the file's tensors),
 *            backward_of (an earlier op)
 *
 * Numbers are judged on the file's digits where the double differs (an integer above
 * 2^53, a fraction that rounds to an integer: sfc_graph_input_number), and quoted with
 * them; every integer field ends within +-(2^53 - 1).
 *
 * Every object is checked for duplicate keys (cJSON keeps both). The first problem
 * found stops the load with one line "<path>: $.ops[3].inputs[0]: reason"; the JSON
 * path is a chain of stack frames (jpath_t) formatted only when an error happens, so
 * the walk costs nothing for it. Unknown fields are ignored (forward compatibility).
 *
 * Memory: the graph struct is calloc'ed, everything it points to lives in graph->pool;
 * maps and the "produced" bits live in a scratch pool freed before returning. Any
 * failure frees both pools and the cJSON tree, so no input can leak. Cost: O(file)
 * for the parse and O(tensors + ops + operands) expected for the walk.
 */
#include "load_graph.h"

#include <cjson/cJSON.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "load_graph_internal.h"

#define ATTR_MAX      INT64_C(2147483647) /* spatial attrs and groups: at most 2^31 - 1 */
#define FLOPS_MAX     SFC_MAX_ID          /* 2^53 - 1: like every integer, exact in a double */
#define DUP_QUADRATIC 64                  /* objects up to this many keys are checked pairwise */

/* ---- JSON paths and errors ------------------------------------------------------------ */

/* One step of a JSON path, living on the walker's stack: ".key" or "[index]". */
typedef struct jpath {
  const struct jpath *up; /* NULL: the parent is the root "$" */
  const char *key;        /* NULL for an array index */
  uint32_t index;
} jpath_t;

static size_t path_format(const jpath_t *p, char *buf, size_t cap) {
  size_t n = p && p->up ? path_format(p->up, buf, cap) : (size_t)snprintf(buf, cap, "$");
  if (!p || n >= cap)
    return n;
  if (p->key)
    n += (size_t)snprintf(buf + n, cap - n, ".%s", p->key);
  else
    n += (size_t)snprintf(buf + n, cap - n, "[%" PRIu32 "]", p->index);
  return n;
}

static jpath_t key_path(const jpath_t *up, const char *key) {
  jpath_t p = {up, key, 0};
  return p;
}
static jpath_t index_path(const jpath_t *up, uint32_t index) {
  jpath_t p = {up, NULL, index};
  return p;
}

typedef struct idmap { /* open addressing, linear probing; key stored as id + 1 (0 = empty) */
  uint64_t *keys;      /* [mask + 1] */
  uint32_t *values;    /* [mask + 1] */
  uint32_t mask;
} idmap_t;

typedef struct loader {
  sfc_graph_t *graph;
  sfc_error_t *err;
  const char *prefix;        /* file path, or NULL */
  const sfc_json_doc_t *doc; /* the raw text of numbers a double does not show */
  sfc_pool_t scratch;        /* maps and flags; freed when the load ends */
  idmap_t tensor_ids;        /* tensor id -> index */
  idmap_t op_ids;            /* op id -> index */
  uint8_t *produced;         /* [n_file_tensors] 1 once an op has written the tensor */
  uint64_t total_bytes;      /* sum of all tensors' bytes so far */
  uint64_t total_operands;
  uint32_t tensor_cap; /* file tensors + ops that may declare a workspace */
} loader_t;

#if defined(__GNUC__)
__attribute__((format(printf, 4, 5)))
#endif
static sfc_status_t
fail(loader_t *L, sfc_status_t status, const jpath_t *p, const char *fmt, ...) {
  char path[256], reason[SFC_ERROR_MESSAGE_BYTES];
  path_format(p, path, sizeof path);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  if (L->prefix)
    return sfc_error_set(L->err, status, "%s: %s: %s", L->prefix, path, reason);
  return sfc_error_set(L->err, status, "%s: %s", path, reason);
}

static sfc_status_t out_of_memory(loader_t *L) {
  return sfc_error_set(L->err, SFC_ERR_OUT_OF_MEMORY, "%s%sout of memory loading the graph",
                       L->prefix ? L->prefix : "", L->prefix ? ": " : "");
}

static const char *type_name(const cJSON *v) {
  if (cJSON_IsBool(v))
    return "a boolean";
  if (cJSON_IsNull(v))
    return "null";
  if (cJSON_IsNumber(v))
    return "a number";
  if (cJSON_IsString(v))
    return "a string";
  if (cJSON_IsArray(v))
    return "an array";
  return "an object";
}

/* The shortest text that reads back as d ("12", "1.5", "1e+300", "inf"). */
static const char *num_text(double d, char buf[40]) {
  if (d == floor(d) && fabs(d) < 9.2e18) {
    snprintf(buf, 40, "%" PRId64, (int64_t)d);
    return buf;
  }
  for (int prec = 15; prec <= 17; prec++) {
    snprintf(buf, 40, "%.*g", prec, d);
    if (strtod(buf, NULL) == d)
      break;
  }
  return buf;
}

/* Number v (whose double is d) for a message: its digits as the file wrote them when
 * the double does not show its value (9007199254740993, 1e400), else num_text(d). */
static const char *show_num(const loader_t *L, const cJSON *v, double d, char buf[40]) {
  const char *raw = sfc_graph_input_number(L->doc, v, NULL);
  return raw ? raw : num_text(d, buf);
}

/* A string from the file, quoted for a message (at most 40 bytes, escaped). */
static const char *quote_text(const char *s, char buf[200]) {
  buf[0] = '"';
  sfc_graph_input_quote(s, strlen(s), 40, false, buf + 1, 196);
  strcat(buf, "\"");
  return buf;
}

/* ---- id maps ---------------------------------------------------------------------------- */

static uint64_t mix64(uint64_t x) { /* splitmix64's finalizer */
  x ^= x >> 30;
  x *= UINT64_C(0xbf58476d1ce4e5b9);
  x ^= x >> 27;
  x *= UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static bool idmap_init(idmap_t *m, sfc_pool_t *pool, uint32_t n) {
  uint64_t cap = 16;
  while (cap < 2 * (uint64_t)n)
    cap <<= 1;
  m->keys = sfc_pool_calloc(pool, (size_t)cap, sizeof *m->keys);
  m->values = sfc_pool_calloc(pool, (size_t)cap, sizeof *m->values);
  m->mask = (uint32_t)(cap - 1);
  return m->keys && m->values;
}

/* The value of id, or SFC_PLAN_NONE. */
static uint32_t idmap_find(const idmap_t *m, int64_t id) {
  uint64_t key = (uint64_t)id + 1;
  for (uint32_t i = (uint32_t)mix64(key) & m->mask;; i = (i + 1) & m->mask) {
    if (m->keys[i] == key)
      return m->values[i];
    if (m->keys[i] == 0)
      return SFC_PLAN_NONE;
  }
}

/* Inserts id -> value; returns the value already there, or SFC_PLAN_NONE. The map is
 * sized for every id it will hold, so it never fills up. */
static uint32_t idmap_insert(idmap_t *m, int64_t id, uint32_t value) {
  uint64_t key = (uint64_t)id + 1;
  for (uint32_t i = (uint32_t)mix64(key) & m->mask;; i = (i + 1) & m->mask) {
    if (m->keys[i] == key)
      return m->values[i];
    if (m->keys[i] == 0) {
      m->keys[i] = key;
      m->values[i] = value;
      return SFC_PLAN_NONE;
    }
  }
}

/* ---- objects and their fields -------------------------------------------------------- */

typedef struct key_ref {
  const char *key;
  size_t index;
} key_ref_t;

static int key_ref_cmp(const void *a, const void *b) {
  const key_ref_t *x = a, *y = b;
  int c = strcmp(x->key, y->key);
  if (c)
    return c;
  return x->index < y->index ? -1 : x->index > y->index;
}

/* Reports the first key of obj (in document order) that repeats an earlier one. */
static sfc_status_t check_duplicate_keys(loader_t *L, const cJSON *obj, const jpath_t *p) {
  size_t n = 0;
  for (const cJSON *c = obj->child; c; c = c->next)
    n++;
  const char *dup = NULL;
  if (n <= DUP_QUADRATIC) {
    for (const cJSON *c = obj->child; c && !dup; c = c->next)
      for (const cJSON *e = obj->child; e != c; e = e->next)
        if (strcmp(e->string, c->string) == 0) {
          dup = c->string;
          break;
        }
  } else {
    key_ref_t *refs = malloc(n * sizeof *refs);
    if (!refs)
      return out_of_memory(L);
    size_t i = 0, best = SIZE_MAX;
    for (const cJSON *c = obj->child; c; c = c->next, i++)
      refs[i] = (key_ref_t){c->string, i};
    qsort(refs, n, sizeof *refs, key_ref_cmp);
    for (i = 1; i < n; i++) /* the second entry of each run of equal keys is a repeat */
      if (strcmp(refs[i].key, refs[i - 1].key) == 0 &&
          (i < 2 || strcmp(refs[i - 1].key, refs[i - 2].key) != 0) && refs[i].index < best) {
        best = refs[i].index;
        dup = refs[i].key;
      }
    free(refs);
  }
  if (!dup)
    return SFC_OK;
  char q[200];
  return fail(L, SFC_ERR_BAD_INPUT, p, "duplicate key %s", quote_text(dup, q));
}

/* Checks that v is an object without duplicate keys and sorts its members into
 * out[n_keys] by name (NULL when absent; unknown keys are ignored). */
static sfc_status_t read_object(loader_t *L, const cJSON *v, const jpath_t *p,
                                const char *const *keys, int n_keys, const cJSON **out) {
  if (!cJSON_IsObject(v))
    return fail(L, SFC_ERR_BAD_INPUT, p, "expected an object, got %s", type_name(v));
  for (int k = 0; k < n_keys; k++)
    out[k] = NULL;
  int unknown = 0;
  bool repeated = false;
  for (const cJSON *c = v->child; c; c = c->next) {
    int k = 0; /* the first byte decides most mismatches without a call */
    while (k < n_keys && (keys[k][0] != c->string[0] || strcmp(keys[k], c->string) != 0))
      k++;
    if (k == n_keys)
      unknown++;
    else if (out[k])
      repeated = true;
    else
      out[k] = c;
  }
  /* Known keys can only repeat each other, and so can unknown ones. */
  if (repeated || unknown > 1)
    return check_duplicate_keys(L, v, p);
  return SFC_OK;
}

static sfc_status_t missing(loader_t *L, const jpath_t *p, const char *key) {
  return fail(L, SFC_ERR_BAD_INPUT, p, "missing required field \"%s\"", key);
}

static sfc_status_t get_string(loader_t *L, const cJSON *v, const jpath_t *p, const char **out) {
  if (!cJSON_IsString(v))
    return fail(L, SFC_ERR_BAD_INPUT, p, "expected a string, got %s", type_name(v));
  *out = v->valuestring;
  return SFC_OK;
}

/* An optional name: a pool copy, or "" when absent. */
static sfc_status_t get_name(loader_t *L, const cJSON *v, const jpath_t *p, const char **out) {
  if (!v) {
    *out = "";
    return SFC_OK;
  }
  const char *s = NULL;
  SFC_TRY(get_string(L, v, p, &s));
  char *copy = sfc_pool_strdup(&L->graph->pool, s);
  if (!copy)
    return out_of_memory(L);
  *out = copy;
  return SFC_OK;
}

/* A JSON number with an integral value (1 and 1.0 are the same), as a double. The
 * value is judged on the file's digits, not on the double: 4.0000000000000001 is not an
 * integer, 1e400 is. One above 2^53 comes back rounded (or infinite), but still beyond
 * +-(2^53 - 1), where every caller's range ends, so it is refused with its real digits
 * (show_num). */
static sfc_status_t get_integral(loader_t *L, const cJSON *v, const jpath_t *p, double *out) {
  char num[40];
  unsigned flags = SFC_JSON_NUM_INTEGRAL;
  if (!cJSON_IsNumber(v))
    return fail(L, SFC_ERR_BAD_INPUT, p, "expected an integer, got %s", type_name(v));
  double d = v->valuedouble;
  const char *raw = sfc_graph_input_number(L->doc, v, &flags);
  if (raw ? !(flags & SFC_JSON_NUM_INTEGRAL) : !isfinite(d) || d != floor(d))
    return fail(L, SFC_ERR_BAD_INPUT, p, "expected an integer, got %s",
                raw ? raw : num_text(d, num));
  *out = d;
  return SFC_OK;
}

/* An integer in [lo, hi] (both within +-(2^53 - 1), so the conversions are exact and
 * safe, and a value beyond, rounded or not, is out of range). */
static sfc_status_t get_int(loader_t *L, const cJSON *v, const jpath_t *p, int64_t lo, int64_t hi,
                            int64_t *out) {
  double d = 0;
  char num[40];
  SFC_TRY(get_integral(L, v, p, &d));
  if (d < (double)lo)
    return fail(L, SFC_ERR_BAD_INPUT, p, "must be at least %" PRId64 ", got %s", lo,
                show_num(L, v, d, num));
  if (d > (double)hi)
    return fail(L, SFC_ERR_BAD_INPUT, p, "must be at most %" PRId64 ", got %s", hi,
                show_num(L, v, d, num));
  *out = (int64_t)d;
  return SFC_OK;
}

/* A byte count: 1 (or 0 when zero_ok) .. SFC_MAX_TENSOR_BYTES; above is SFC_ERR_LIMIT. */
static sfc_status_t get_bytes(loader_t *L, const cJSON *v, const jpath_t *p, bool zero_ok,
                              uint64_t *out) {
  double d = 0;
  char num[40];
  SFC_TRY(get_integral(L, v, p, &d));
  if (d < (zero_ok ? 0.0 : 1.0))
    return fail(L, SFC_ERR_BAD_INPUT, p, "must be at least %d, got %s", zero_ok ? 0 : 1,
                show_num(L, v, d, num));
  if (d > (double)SFC_MAX_TENSOR_BYTES)
    return fail(L, SFC_ERR_LIMIT, p, "must be at most %" PRIu64 " (1 PiB), got %s",
                SFC_MAX_TENSOR_BYTES, show_num(L, v, d, num));
  *out = (uint64_t)d;
  return SFC_OK;
}

/* Adds bytes to the graph's running total, bounded by SFC_MAX_TOTAL_BYTES. Each term is
 * at most 2^50 and the total at most 2^56 before the addition, so it cannot wrap. */
static sfc_status_t add_total(loader_t *L, const jpath_t *p, uint64_t bytes) {
  L->total_bytes += bytes;
  if (L->total_bytes > SFC_MAX_TOTAL_BYTES)
    return fail(L, SFC_ERR_LIMIT, p,
                "the graph's tensors add up to more than the limit of %" PRIu64 " bytes (64 PiB)",
                SFC_MAX_TOTAL_BYTES);
  return SFC_OK;
}

/* The array's element count, bounded by limit (SFC_ERR_LIMIT above it). */
static sfc_status_t get_array(loader_t *L, const cJSON *v, const jpath_t *p, uint64_t limit,
                              const char *what, uint32_t *out_n) {
  if (!cJSON_IsArray(v))
    return fail(L, SFC_ERR_BAD_INPUT, p, "expected an array, got %s", type_name(v));
  uint64_t n = 0;
  for (const cJSON *c = v->child; c; c = c->next)
    n++;
  if (n > limit)
    return fail(L, SFC_ERR_LIMIT, p, "%" PRIu64 " %s, more than the limit of %" PRIu64, n, what,
                limit);
  *out_n = (uint32_t)n;
  return SFC_OK;
}

/* ---- tensors -------------------------------------------------------------------------- */

static const char *const kind_list = "input, param, optimizer, activation, grad, workspace, output";
static const char *const phase_list = "forward, loss, backward, update";
static const char *const dtype_list = "f64, f32, f16, bf16, i64, i32, i16, i8, u8, bool";

/* Parses a name with parse(); an unknown one is an error listing the valid names. */
static sfc_status_t get_enum(loader_t *L, const cJSON *v, const jpath_t *p,
                             int (*parse)(const char *), const char *what, const char *list,
                             int *out) {
  const char *s = NULL;
  SFC_TRY(get_string(L, v, p, &s));
  int e = parse(s);
  char q[200];
  if (e < 0)
    return fail(L, SFC_ERR_BAD_INPUT, p, "unknown %s %s (expected one of %s)", what,
                quote_text(s, q), list);
  *out = e;
  return SFC_OK;
}

enum { T_ID, T_NAME, T_BYTES, T_KIND, T_SHAPE, T_DTYPE, T_BATCH_AXIS, T_COUNT };
static const char *const tensor_keys[T_COUNT] = {"id",    "name",  "bytes",     "kind",
                                                 "shape", "dtype", "batch_axis"};

static sfc_status_t load_tensor(loader_t *L, const cJSON *v, const jpath_t *p, uint32_t index) {
  sfc_tensor_t *t = &L->graph->tensors[index];
  const cJSON *f[T_COUNT];
  SFC_TRY(read_object(L, v, p, tensor_keys, T_COUNT, f));
  for (int k = 0; k < T_COUNT; k++)
    if (!f[k] && (k == T_ID || k == T_BYTES || k == T_KIND))
      return missing(L, p, tensor_keys[k]);

  jpath_t fp = key_path(p, "id");
  SFC_TRY(get_int(L, f[T_ID], &fp, 0, SFC_MAX_ID, &t->id));
  uint32_t first = idmap_insert(&L->tensor_ids, t->id, index);
  if (first != SFC_PLAN_NONE)
    return fail(L, SFC_ERR_BAD_INPUT, &fp,
                "duplicate tensor id %" PRId64 " (first at $.tensors[%" PRIu32 "])", t->id, first);

  fp = key_path(p, "name");
  SFC_TRY(get_name(L, f[T_NAME], &fp, &t->name));

  fp = key_path(p, "bytes");
  SFC_TRY(get_bytes(L, f[T_BYTES], &fp, false, &t->bytes));
  SFC_TRY(add_total(L, &fp, t->bytes));

  int kind;
  fp = key_path(p, "kind");
  SFC_TRY(get_enum(L, f[T_KIND], &fp, sfc_tensor_kind_parse, "kind", kind_list, &kind));
  t->kind = (sfc_tensor_kind_t)kind;

  if (f[T_SHAPE]) {
    fp = key_path(p, "shape");
    uint32_t n = 0;
    SFC_TRY(get_array(L, f[T_SHAPE], &fp, UINT32_MAX, "dimensions", &n));
    if (n > SFC_PLAN_MAX_DIMS)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "%" PRIu32 " dimensions, more than the limit of %d", n,
                  SFC_PLAN_MAX_DIMS);
    uint32_t i = 0;
    for (const cJSON *c = f[T_SHAPE]->child; c; c = c->next, i++) {
      jpath_t ep = index_path(&fp, i);
      SFC_TRY(get_int(L, c, &ep, 0, SFC_MAX_ID, &t->shape[i]));
    }
    t->ndim = (uint8_t)n;
  }

  t->dtype = SFC_DTYPE_UNKNOWN;
  if (f[T_DTYPE]) {
    int dtype;
    fp = key_path(p, "dtype");
    SFC_TRY(get_enum(L, f[T_DTYPE], &fp, sfc_dtype_parse, "dtype", dtype_list, &dtype));
    t->dtype = (sfc_dtype_t)dtype;
  }

  t->batch_axis = -1;
  if (f[T_BATCH_AXIS]) {
    fp = key_path(p, "batch_axis");
    double d = 0;
    char num[40];
    SFC_TRY(get_integral(L, f[T_BATCH_AXIS], &fp, &d));
    if (t->ndim == 0 && d != -1)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "must be -1 when the tensor has no shape, got %s",
                  show_num(L, f[T_BATCH_AXIS], d, num));
    if (d < -1 || d >= t->ndim)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "must be -1 or an axis of the shape (0..%d), got %s",
                  t->ndim - 1, show_num(L, f[T_BATCH_AXIS], d, num));
    t->batch_axis = (int8_t)d;
  }

  t->flags = sfc_kind_is_persistent(t->kind) ? SFC_TENSOR_PERSISTENT : 0;
  return SFC_OK;
}

/* ---- attrs --------------------------------------------------------------------------- */

enum {
  A_KERNEL,
  A_STRIDE,
  A_PADDING,
  A_DILATION,
  A_OUTPUT_PADDING,
  A_SCALE,
  A_GROUPS,
  A_CEIL_MODE,
  A_COUNT
};
#define A_SPATIAL 6 /* the first six are integer-or-array attrs */
static const char *const attr_keys[A_COUNT] = {"kernel",         "stride", "padding", "dilation",
                                               "output_padding", "scale",  "groups",  "ceil_mode"};
static const uint32_t attr_bits[A_COUNT] = {
    SFC_ATTR_KERNEL,         SFC_ATTR_STRIDE, SFC_ATTR_PADDING, SFC_ATTR_DILATION,
    SFC_ATTR_OUTPUT_PADDING, SFC_ATTR_SCALE,  SFC_ATTR_GROUPS,  SFC_ATTR_CEIL_MODE};
/* Smallest value, which is also the default when absent (kernel 1 = pointwise). */
static const int64_t attr_min[A_SPATIAL] = {1, 1, 0, 1, 0, 1};

static int64_t *attr_values(sfc_attrs_t *a, int k) {
  switch (k) {
    case A_KERNEL:
      return a->kernel;
    case A_STRIDE:
      return a->stride;
    case A_PADDING:
      return a->padding;
    case A_DILATION:
      return a->dilation;
    case A_OUTPUT_PADDING:
      return a->output_padding;
    default:
      return a->scale;
  }
}

static void attrs_defaults(sfc_attrs_t *a) {
  memset(a, 0, sizeof *a);
  for (int k = 0; k < A_SPATIAL; k++)
    for (int i = 0; i < SFC_MAX_SPATIAL; i++)
      attr_values(a, k)[i] = attr_min[k];
  a->groups = 1;
}

static sfc_status_t load_attrs(loader_t *L, const cJSON *v, const jpath_t *p, sfc_attrs_t *a) {
  const cJSON *f[A_COUNT];
  SFC_TRY(read_object(L, v, p, attr_keys, A_COUNT, f));
  int len_of[A_SPATIAL] = {0}; /* array length given, 0 for a scalar or absent */
  for (int k = 0; k < A_SPATIAL; k++) {
    if (!f[k])
      continue;
    jpath_t fp = key_path(p, attr_keys[k]);
    int64_t *vals = attr_values(a, k);
    if (cJSON_IsNumber(f[k])) {
      int64_t x;
      SFC_TRY(get_int(L, f[k], &fp, attr_min[k], ATTR_MAX, &x));
      for (int i = 0; i < SFC_MAX_SPATIAL; i++)
        vals[i] = x;
    } else if (cJSON_IsArray(f[k])) {
      uint32_t n = 0;
      SFC_TRY(get_array(L, f[k], &fp, UINT32_MAX, "values", &n));
      if (n < 1 || n > SFC_MAX_SPATIAL)
        return fail(L, SFC_ERR_BAD_INPUT, &fp, "expected 1 to %d values, got %" PRIu32,
                    SFC_MAX_SPATIAL, n);
      uint32_t i = 0;
      for (const cJSON *c = f[k]->child; c; c = c->next, i++) {
        jpath_t ep = index_path(&fp, i);
        SFC_TRY(get_int(L, c, &ep, attr_min[k], ATTR_MAX, &vals[i]));
      }
      for (; i < SFC_MAX_SPATIAL; i++) /* one value applies to every dim */
        vals[i] = n == 1 ? vals[0] : attr_min[k];
      len_of[k] = (int)n;
      if ((int)n > a->rank)
        a->rank = (uint8_t)n;
    } else {
      return fail(L, SFC_ERR_BAD_INPUT, &fp,
                  "expected an integer or an array of 1 to %d integers, got %s", SFC_MAX_SPATIAL,
                  type_name(f[k]));
    }
    a->present |= attr_bits[k];
  }
  /* Arrays of two or more values describe the same spatial dims, so they agree. */
  for (int k = 0; k < A_SPATIAL; k++)
    for (int j = 0; j < k; j++)
      if (len_of[k] > 1 && len_of[j] > 1 && len_of[k] != len_of[j]) {
        jpath_t fp = key_path(p, attr_keys[k]);
        return fail(L, SFC_ERR_BAD_INPUT, &fp, "has %d values but %s has %d", len_of[k],
                    attr_keys[j], len_of[j]);
      }
  if (f[A_GROUPS]) {
    jpath_t fp = key_path(p, "groups");
    SFC_TRY(get_int(L, f[A_GROUPS], &fp, 1, ATTR_MAX, &a->groups));
    a->present |= SFC_ATTR_GROUPS;
  }
  if (f[A_CEIL_MODE]) {
    jpath_t fp = key_path(p, "ceil_mode");
    if (!cJSON_IsBool(f[A_CEIL_MODE]))
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "expected a boolean, got %s",
                  type_name(f[A_CEIL_MODE]));
    a->ceil_mode = cJSON_IsTrue(f[A_CEIL_MODE]);
    a->present |= SFC_ATTR_CEIL_MODE;
  }
  return SFC_OK;
}

/* ---- ops ------------------------------------------------------------------------------ */

/* Reads an operand list ($.ops[i].inputs or .outputs) into pool memory. Inputs must be
 * persistent or already produced; outputs become produced. */
static sfc_status_t load_operands(loader_t *L, const cJSON *v, const jpath_t *p, bool inputs,
                                  uint32_t **out, uint32_t *out_n) {
  uint32_t n = 0;
  SFC_TRY(get_array(L, v, p, SFC_MAX_OP_OPERANDS, "entries", &n));
  L->total_operands += n;
  if (L->total_operands > SFC_MAX_OPERANDS)
    return fail(L, SFC_ERR_LIMIT, p,
                "the ops list more than the limit of %" PRIu32 " inputs and outputs in all",
                (uint32_t)SFC_MAX_OPERANDS);
  uint32_t *idx = sfc_pool_calloc(&L->graph->pool, n, sizeof *idx);
  if (!idx)
    return out_of_memory(L);
  uint32_t i = 0;
  for (const cJSON *c = v->child; c; c = c->next, i++) {
    jpath_t ep = index_path(p, i);
    double d = 0;
    char num[40];
    SFC_TRY(get_integral(L, c, &ep, &d));
    uint32_t t =
        d >= 0 && d <= (double)SFC_MAX_ID ? idmap_find(&L->tensor_ids, (int64_t)d) : SFC_PLAN_NONE;
    if (t == SFC_PLAN_NONE)
      return fail(L, SFC_ERR_BAD_INPUT, &ep, "no tensor has id %s", show_num(L, c, d, num));
    const sfc_tensor_t *tensor = &L->graph->tensors[t];
    if (inputs && !(tensor->flags & SFC_TENSOR_PERSISTENT) && !L->produced[t]) {
      char q[200];
      return fail(L, SFC_ERR_BAD_INPUT, &ep,
                  "tensor %" PRId64 " (%s%s%s) is used before any op produces it", tensor->id,
                  sfc_tensor_kind_name(tensor->kind), tensor->name[0] ? " " : "",
                  tensor->name[0] ? quote_text(tensor->name, q) : "");
    }
    if (!inputs)
      L->produced[t] = 1;
    idx[i] = t;
  }
  *out = idx;
  *out_n = n;
  return SFC_OK;
}

/* Appends the synthetic workspace tensor of op (workspace_bytes > 0). */
static sfc_status_t add_workspace(loader_t *L, const jpath_t *p, sfc_op_t *op) {
  sfc_graph_t *g = L->graph;
  if (g->n_tensors >= SFC_MAX_TENSORS)
    return fail(L, SFC_ERR_LIMIT, p,
                "with the synthetic workspace tensors the graph has more than the limit of "
                "%" PRIu32 " tensors",
                (uint32_t)SFC_MAX_TENSORS);
  if (g->n_tensors >= L->tensor_cap) /* cannot happen: tensor_cap counts these fields */
    return sfc_error_set(L->err, SFC_ERR_INTERNAL, "graph loader: workspace count mismatch");
  SFC_TRY(add_total(L, p, op->workspace_bytes));
  char name[64];
  if (!op->name[0])
    snprintf(name, sizeof name, "op%" PRId64 ".workspace", op->id);
  size_t len = op->name[0] ? strlen(op->name) : 0;
  char *s = op->name[0] ? sfc_pool_calloc(&g->pool, len + sizeof ".workspace", 1)
                        : sfc_pool_strdup(&g->pool, name);
  if (!s)
    return out_of_memory(L);
  if (op->name[0]) {
    memcpy(s, op->name, len);
    memcpy(s + len, ".workspace", sizeof ".workspace");
  }
  sfc_tensor_t *t = &g->tensors[g->n_tensors];
  t->id = -1;
  t->name = s;
  t->bytes = op->workspace_bytes;
  t->kind = SFC_KIND_WORKSPACE;
  t->dtype = SFC_DTYPE_U8; /* bytes: a 1-D shape, so a tiled step can name it by a box */
  t->ndim = 1;
  t->shape[0] = (int64_t)op->workspace_bytes;
  t->batch_axis = -1;
  t->flags = SFC_TENSOR_SYNTHETIC;
  op->workspace = g->n_tensors++;
  return SFC_OK;
}

/* backward_of names an earlier op. When it is not found among the earlier ones, look
 * ahead so the message can tell "later" from "unknown". */
static sfc_status_t load_backward_of(loader_t *L, const cJSON *v, const jpath_t *p, uint32_t index,
                                     const cJSON *self, uint32_t *out) {
  double d = 0;
  char num[40];
  SFC_TRY(get_integral(L, v, p, &d));
  uint32_t b =
      d >= 0 && d <= (double)SFC_MAX_ID ? idmap_find(&L->op_ids, (int64_t)d) : SFC_PLAN_NONE;
  if (b == index)
    return fail(L, SFC_ERR_BAD_INPUT, p, "op %s is this op; backward_of must name an earlier op",
                show_num(L, v, d, num));
  if (b != SFC_PLAN_NONE) {
    *out = b;
    return SFC_OK;
  }
  uint32_t later = index + 1;
  for (const cJSON *c = d >= 0 && d <= (double)SFC_MAX_ID ? self->next : NULL; c;
       c = c->next, later++) {
    const cJSON *id = cJSON_IsObject(c) ? cJSON_GetObjectItemCaseSensitive(c, "id") : NULL;
    if (cJSON_IsNumber(id) && id->valuedouble == d)
      return fail(L, SFC_ERR_BAD_INPUT, p,
                  "op %s is listed later, at $.ops[%" PRIu32 "]; backward_of must name an "
                  "earlier op",
                  show_num(L, v, d, num), later);
  }
  return fail(L, SFC_ERR_BAD_INPUT, p, "no op has id %s", show_num(L, v, d, num));
}

enum {
  O_ID,
  O_NAME,
  O_TYPE,
  O_PHASE,
  O_INPUTS,
  O_OUTPUTS,
  O_ATTRS,
  O_TIME_US,
  O_TIME_FIXED_US,
  O_FLOPS,
  O_WORKSPACE_BYTES,
  O_BACKWARD_OF,
  O_COUNT
};
static const char *const op_keys[O_COUNT] = {
    "id",    "name",    "type",          "phase", "inputs",          "outputs",
    "attrs", "time_us", "time_fixed_us", "flops", "workspace_bytes", "backward_of"};

static sfc_status_t load_op(loader_t *L, const cJSON *v, const jpath_t *p, uint32_t index) {
  sfc_op_t *op = &L->graph->ops[index];
  const cJSON *f[O_COUNT];
  SFC_TRY(read_object(L, v, p, op_keys, O_COUNT, f));
  for (int k = 0; k < O_COUNT; k++)
    if (!f[k] && (k == O_ID || k == O_TYPE || k == O_PHASE || k == O_INPUTS || k == O_OUTPUTS))
      return missing(L, p, op_keys[k]);

  jpath_t fp = key_path(p, "id");
  SFC_TRY(get_int(L, f[O_ID], &fp, 0, SFC_MAX_ID, &op->id));
  uint32_t first = idmap_insert(&L->op_ids, op->id, index);
  if (first != SFC_PLAN_NONE)
    return fail(L, SFC_ERR_BAD_INPUT, &fp,
                "duplicate op id %" PRId64 " (first at $.ops[%" PRIu32 "])", op->id, first);

  fp = key_path(p, "name");
  SFC_TRY(get_name(L, f[O_NAME], &fp, &op->name));

  const char *type = NULL;
  fp = key_path(p, "type");
  SFC_TRY(get_string(L, f[O_TYPE], &fp, &type));
  if (!type[0])
    return fail(L, SFC_ERR_BAD_INPUT, &fp, "must not be empty");
  if (!(op->type = sfc_pool_strdup(&L->graph->pool, type)))
    return out_of_memory(L);

  int phase;
  fp = key_path(p, "phase");
  SFC_TRY(get_enum(L, f[O_PHASE], &fp, sfc_phase_parse, "phase", phase_list, &phase));
  op->phase = (sfc_phase_t)phase;

  fp = key_path(p, "inputs");
  SFC_TRY(load_operands(L, f[O_INPUTS], &fp, true, &op->inputs, &op->n_inputs));
  fp = key_path(p, "outputs");
  SFC_TRY(load_operands(L, f[O_OUTPUTS], &fp, false, &op->outputs, &op->n_outputs));

  attrs_defaults(&op->attrs);
  if (f[O_ATTRS]) {
    fp = key_path(p, "attrs");
    SFC_TRY(load_attrs(L, f[O_ATTRS], &fp, &op->attrs));
  }

  op->time_us = -1;
  if (f[O_TIME_US]) {
    fp = key_path(p, "time_us");
    char num[40];
    if (!cJSON_IsNumber(f[O_TIME_US]))
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "expected a number, got %s", type_name(f[O_TIME_US]));
    double d = f[O_TIME_US]->valuedouble;
    if (!isfinite(d) || d < 0)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "must be a finite number >= 0, got %s",
                  show_num(L, f[O_TIME_US], d, num));
    op->time_us = d;
  }

  op->time_fixed_us = 0;
  if (f[O_TIME_FIXED_US]) {
    fp = key_path(p, "time_fixed_us");
    char num[40], lim[40];
    if (!cJSON_IsNumber(f[O_TIME_FIXED_US]))
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "expected a number, got %s",
                  type_name(f[O_TIME_FIXED_US]));
    double d = f[O_TIME_FIXED_US]->valuedouble;
    if (op->time_us < 0)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "given without time_us");
    if (!isfinite(d) || d < 0 || d > op->time_us)
      return fail(L, SFC_ERR_BAD_INPUT, &fp, "must be a number from 0 to time_us (%s), got %s",
                  num_text(op->time_us, lim), show_num(L, f[O_TIME_FIXED_US], d, num));
    op->time_fixed_us = d;
  }

  if (f[O_FLOPS]) {
    int64_t flops;
    fp = key_path(p, "flops");
    SFC_TRY(get_int(L, f[O_FLOPS], &fp, 0, FLOPS_MAX, &flops));
    op->flops = (uint64_t)flops;
  }

  op->workspace = SFC_PLAN_NONE;
  if (f[O_WORKSPACE_BYTES]) {
    fp = key_path(p, "workspace_bytes");
    SFC_TRY(get_bytes(L, f[O_WORKSPACE_BYTES], &fp, true, &op->workspace_bytes));
    if (op->workspace_bytes > 0)
      SFC_TRY(add_workspace(L, &fp, op));
  }

  op->backward_of = SFC_PLAN_NONE;
  if (f[O_BACKWARD_OF]) {
    fp = key_path(p, "backward_of");
    SFC_TRY(load_backward_of(L, f[O_BACKWARD_OF], &fp, index, v, &op->backward_of));
  }
  return SFC_OK;
}

/* ---- the root ---------------------------------------------------------------------------- */

enum { R_FORMAT, R_VERSION, R_NAME, R_TENSORS, R_OPS, R_BATCH, R_DEVICE, R_COUNT };
static const char *const root_keys[R_COUNT] = {"format", "version", "name",  "tensors",
                                               "ops",    "batch",   "device"};

static sfc_status_t load_root(loader_t *L, const cJSON *root) {
  sfc_graph_t *g = L->graph;
  const cJSON *f[R_COUNT];
  char num[40], q[200];
  SFC_TRY(read_object(L, root, NULL, root_keys, R_COUNT, f));

  jpath_t fp = key_path(NULL, "format");
  const char *format = NULL;
  if (!f[R_FORMAT])
    return missing(L, NULL, "format");
  SFC_TRY(get_string(L, f[R_FORMAT], &fp, &format));
  if (strcmp(format, "sfc-graph") != 0)
    return fail(L, SFC_ERR_BAD_INPUT, &fp, "expected \"sfc-graph\", got %s", quote_text(format, q));

  fp = key_path(NULL, "version");
  double version;
  if (!f[R_VERSION])
    return missing(L, NULL, "version");
  SFC_TRY(get_integral(L, f[R_VERSION], &fp, &version));
  if (version != 1)
    return fail(L, SFC_ERR_VERSION, &fp, "unsupported version %s (this sfc reads version 1)",
                show_num(L, f[R_VERSION], version, num));

  fp = key_path(NULL, "name");
  SFC_TRY(get_name(L, f[R_NAME], &fp, &g->name));

  g->batch = 0; /* optional: the batch the graph was recorded at (sfc compile --batch) */
  if (f[R_BATCH]) {
    fp = key_path(NULL, "batch");
    SFC_TRY(get_int(L, f[R_BATCH], &fp, 1, SFC_MAX_ID, &g->batch));
  }
  fp = key_path(NULL, "device"); /* optional: where time_us was measured, e.g. "cpu" */
  SFC_TRY(get_name(L, f[R_DEVICE], &fp, &g->device));

  jpath_t tp = key_path(NULL, "tensors"), opp = key_path(NULL, "ops");
  uint32_t n_tensors, n_ops;
  if (!f[R_TENSORS])
    return missing(L, NULL, "tensors");
  SFC_TRY(get_array(L, f[R_TENSORS], &tp, SFC_MAX_TENSORS, "tensors", &n_tensors));
  if (!f[R_OPS])
    return missing(L, NULL, "ops");
  SFC_TRY(get_array(L, f[R_OPS], &opp, SFC_MAX_OPS, "ops", &n_ops));
  if (n_ops == 0)
    return fail(L, SFC_ERR_BAD_INPUT, &opp, "a graph needs at least one op");

  /* Room for one synthetic tensor per op that has a workspace_bytes field at all. */
  uint32_t n_ws = 0;
  for (const cJSON *c = f[R_OPS]->child; c; c = c->next)
    if (cJSON_IsObject(c) && cJSON_GetObjectItemCaseSensitive(c, "workspace_bytes"))
      n_ws++;
  L->tensor_cap = n_tensors + n_ws; /* < 2^25: no overflow */
  g->tensors = sfc_pool_calloc(&g->pool, L->tensor_cap, sizeof *g->tensors);
  g->ops = sfc_pool_calloc(&g->pool, n_ops, sizeof *g->ops);
  L->produced = sfc_pool_calloc(&L->scratch, n_tensors, 1);
  if (!g->tensors || !g->ops || !L->produced ||
      !idmap_init(&L->tensor_ids, &L->scratch, n_tensors) ||
      !idmap_init(&L->op_ids, &L->scratch, n_ops))
    return out_of_memory(L);

  uint32_t i = 0;
  for (const cJSON *c = f[R_TENSORS]->child; c; c = c->next, i++) {
    jpath_t ep = index_path(&tp, i);
    SFC_TRY(load_tensor(L, c, &ep, i));
  }
  g->n_tensors = g->n_file_tensors = n_tensors;

  i = 0;
  for (const cJSON *c = f[R_OPS]->child; c; c = c->next, i++) {
    jpath_t ep = index_path(&opp, i);
    SFC_TRY(load_op(L, c, &ep, i));
  }
  g->n_ops = n_ops;
  return SFC_OK;
}

static sfc_status_t load(const char *data, size_t bytes, const char *prefix,
                         sfc_graph_t **out_graph, sfc_error_t *err) {
  sfc_json_doc_t doc;
  sfc_status_t status = sfc_graph_input_parse(data, bytes, prefix, &doc, err);
  if (status != SFC_OK) {
    sfc_json_doc_free(&doc);
    return status;
  }
  const cJSON *root = doc.root;
  loader_t L;
  memset(&L, 0, sizeof L);
  L.err = err;
  L.prefix = prefix;
  L.doc = &doc;
  if (!cJSON_IsObject(root)) {
    status = fail(&L, SFC_ERR_BAD_INPUT, NULL, "expected an object, got %s", type_name(root));
  } else if (!(L.graph = calloc(1, sizeof *L.graph))) {
    status = out_of_memory(&L);
  } else {
    status = load_root(&L, root);
  }
  sfc_json_doc_free(&doc);
  sfc_pool_free_all(&L.scratch);
  if (status != SFC_OK) {
    sfc_graph_destroy(L.graph);
    return status;
  }
  *out_graph = L.graph;
  return SFC_OK;
}

sfc_status_t sfc_graph_load_buffer(const char *data, size_t bytes, sfc_graph_t **out_graph,
                                   sfc_error_t *err) {
  sfc_error_clear(err);
  if (!out_graph || (!data && bytes))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "sfc_graph_load_buffer: no %s",
                         out_graph ? "data" : "out_graph");
  *out_graph = NULL;
  return load(data ? data : "", bytes, NULL, out_graph, err);
}

sfc_status_t sfc_graph_load_file(const char *path, sfc_graph_t **out_graph, sfc_error_t *err) {
  sfc_error_clear(err);
  if (!out_graph || !path)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "sfc_graph_load_file: no %s",
                         out_graph ? "path" : "out_graph");
  *out_graph = NULL;
  char *data = NULL;
  size_t len = 0;
  SFC_TRY(sfc_graph_input_read_file(path, &data, &len, err));
  sfc_status_t status = load(data, len, path, out_graph, err);
  free(data);
  return status;
}
