/* names.c — the names of tensor kinds, phases and dtypes used in files and messages. */
#include "sfc/plan_format.h"

#include <string.h>

static const char *const kind_names[SFC_KIND_COUNT] = {
    "input", "param", "optimizer", "activation", "grad", "workspace", "output"};
static const char *const phase_names[SFC_PHASE_COUNT] = {"forward", "loss", "backward", "update"};
static const char *const dtype_names[SFC_DTYPE_COUNT] = {
    "unknown", "f64", "f32", "f16", "bf16", "i64", "i32", "i16", "i8", "u8", "bool"};
static const uint32_t dtype_bytes[SFC_DTYPE_COUNT] = {0, 8, 4, 2, 2, 8, 4, 2, 1, 1, 1};

static int find(const char *const *names, int count, const char *name) {
  if (!name)
    return -1;
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0)
      return i;
  return -1;
}

const char *sfc_tensor_kind_name(int kind) {
  return kind >= 0 && kind < SFC_KIND_COUNT ? kind_names[kind] : NULL;
}
const char *sfc_phase_name(int phase) {
  return phase >= 0 && phase < SFC_PHASE_COUNT ? phase_names[phase] : NULL;
}
const char *sfc_dtype_name(int dtype) {
  return dtype >= 0 && dtype < SFC_DTYPE_COUNT ? dtype_names[dtype] : NULL;
}
int sfc_tensor_kind_parse(const char *name) {
  return find(kind_names, SFC_KIND_COUNT, name);
}
int sfc_phase_parse(const char *name) {
  return find(phase_names, SFC_PHASE_COUNT, name);
}
int sfc_dtype_parse(const char *name) {
  int d = find(dtype_names, SFC_DTYPE_COUNT, name);
  return d == SFC_DTYPE_UNKNOWN ? -1 : d; /* "unknown" is not a valid name in a file */
}
uint32_t sfc_dtype_bytes(int dtype) {
  return dtype >= 0 && dtype < SFC_DTYPE_COUNT ? dtype_bytes[dtype] : 0;
}
