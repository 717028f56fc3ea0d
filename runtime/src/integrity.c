/* integrity.c — the host device's integrity mode: patterns and the per-tensor
 * tracker (integrity.h; docs/runtime.md "Integrity mode").
 *
 * The pattern is a counter-mode hash: word w of (tensor t, version v) is
 * splitmix64(seed + w) with seed = splitmix64(t * K1 ^ v * K2) (splitmix64: Steele,
 * Lea, Flood, "Fast splittable pseudorandom number generators", OOPSLA 2014). Fill
 * and check are O(bytes), byte-order independent (words are stored little-endian
 * byte by byte where unaligned) and need no memory of their own. The tracker costs O(tensor_count)
 * memory, O(bytes of the operands) per step and O(tensor bytes) per resident persistent or output
 * tensor at iteration end.
 */
#include "integrity.h"

#include <stdio.h>
#include <string.h>

static uint64_t mix(uint64_t z) {
  z += UINT64_C(0x9E3779B97F4A7C15);
  z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
  return z ^ (z >> 31);
}

static uint64_t seed_of(uint32_t tensor, uint64_t version) {
  return mix(((uint64_t)tensor + 1) * UINT64_C(0xD1B54A32D192ED03) ^
             (version + 1) * UINT64_C(0xC2B2AE3D27D4EB4F));
}

static int little_endian(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

static void store_le(uint8_t *p, uint64_t w, uint64_t n) {
  if (n == 8 && little_endian()) {
    memcpy(p, &w, 8);
    return;
  }
  for (uint64_t i = 0; i < n; i++)
    p[i] = (uint8_t)(w >> (8 * i));
}

static uint64_t load_le(const uint8_t *p, uint64_t n) {
  uint64_t w = 0;
  if (n == 8 && little_endian()) {
    memcpy(&w, p, 8);
    return w;
  }
  for (uint64_t i = 0; i < n; i++)
    w |= (uint64_t)p[i] << (8 * i);
  return w;
}

uint64_t sfcrt_pattern_word(uint32_t tensor, uint64_t version, uint64_t offset) {
  return mix(seed_of(tensor, version) + offset / 8);
}

void sfcrt_pattern_fill(void *p, uint64_t bytes, uint32_t tensor, uint64_t version) {
  uint8_t *b = p;
  uint64_t seed = seed_of(tensor, version);
  uint64_t words = bytes / 8;
  for (uint64_t w = 0; w < words; w++)
    store_le(b + 8 * w, mix(seed + w), 8);
  if (bytes % 8)
    store_le(b + 8 * words, mix(seed + words), bytes % 8);
}

uint64_t sfcrt_pattern_check(const void *p, uint64_t bytes, uint32_t tensor, uint64_t version,
                             uint64_t *found, uint64_t *expected) {
  const uint8_t *b = p;
  uint64_t seed = seed_of(tensor, version);
  uint64_t words = (bytes + 7) / 8;
  for (uint64_t w = 0; w < words; w++) {
    uint64_t n = (w + 1) * 8 <= bytes ? 8 : bytes % 8;
    uint64_t want = mix(seed + w);
    uint64_t got = load_le(b + 8 * w, n);
    if (n < 8)
      want &= (UINT64_C(1) << (8 * n)) - 1;
    if (got != want) {
      uint64_t off = 8 * w;
      while (((got ^ want) & 0xFF) == 0) {
        got >>= 8, want >>= 8;
        off++;
      }
      if (found)
        *found = load_le(b + 8 * w, n);
      if (expected)
        *expected = n < 8 ? mix(seed + w) & ((UINT64_C(1) << (8 * n)) - 1) : mix(seed + w);
      return off;
    }
  }
  return SFCRT_PATTERN_OK;
}

/* ---- the tracker ------------------------------------------------------------------ */

sfc_status_t sfcrt_integrity_init(sfcrt_integrity_t *g, const sfc_plan_view_t *plan,
                                  const sfc_allocator_t *alloc, sfc_error_t *err) {
  memset(g, 0, sizeof *g);
  g->plan = plan;
  g->alloc = alloc;
  size_t n = plan->tensor_count ? plan->tensor_count : 1;
  g->version = sfc_calloc(alloc, n, sizeof(uint64_t));
  g->last_ptr = sfc_calloc(alloc, n, sizeof(void *));
  g->last_block = sfc_calloc(alloc, n, sizeof(uint32_t));
  if (!g->version || !g->last_ptr || !g->last_block) {
    sfcrt_integrity_deinit(g);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "host: out of memory (integrity tables)");
  }
  for (uint32_t t = 0; t < plan->tensor_count; t++)
    g->version[t] = SFCRT_VERSION_NONE;
  return SFC_OK;
}

void sfcrt_integrity_deinit(sfcrt_integrity_t *g) {
  if (!g->plan)
    return;
  size_t n = g->plan->tensor_count ? g->plan->tensor_count : 1;
  sfc_free(g->alloc, g->version, n * sizeof(uint64_t));
  sfc_free(g->alloc, g->last_ptr, n * sizeof(void *));
  sfc_free(g->alloc, g->last_block, n * sizeof(uint32_t));
  memset(g, 0, sizeof *g);
}

/* The bytes of its tensor block b holds: all of them, or (PARTIAL, 1.1) its box's
 * elements times the element size (the dtype's, else the tensor's bytes over its
 * element count, rounded up), as the loader checked against the block's bytes. */
static uint64_t held_bytes(const sfc_plan_view_t *v, uint32_t b) {
  const sfc_plan_block_t *x = &v->blocks[b];
  const sfc_plan_tensor_t *t = &v->tensors[x->tensor];
  if (!(x->flags & SFC_BLOCK_PARTIAL) || (x->flags & SFC_BLOCK_EXTERNAL))
    return t->bytes;
  const sfc_plan_box_t *box = &v->boxes[x->box];
  uint64_t n = 1, elem = sfc_dtype_bytes(t->dtype);
  if (!elem) { /* the element count saturates, as in the loader's check */
    for (uint32_t d = 0; d < t->ndim; d++) {
      uint64_t s = (uint64_t)t->shape[d]; /* >= 1: the box is a non-empty part of it */
      n = n > UINT64_MAX / s ? UINT64_MAX : n * s;
    }
    elem = t->bytes / n + (t->bytes % n != 0);
  }
  n = elem;
  for (uint32_t d = 0; d < box->ndim; d++)
    n *= (uint64_t)(box->hi[d] - box->lo[d]);
  return n; /* <= the block's bytes: no overflow */
}

static const char *tensor_name(const sfcrt_integrity_t *g, uint32_t t) {
  return sfc_plan_string(g->plan, g->plan->tensors[t].name);
}

static int tensor_persistent(const sfcrt_integrity_t *g, uint32_t t) {
  return (g->plan->tensors[t].flags & (SFC_TENSOR_PERSISTENT | SFC_TENSOR_EXTERNAL)) != 0;
}

/* Names what the unexpected word is: an older version of the tensor (searched back
 * 64 versions), or something else. */
static void diagnose(const sfcrt_integrity_t *g, uint64_t tag, uint32_t t, uint64_t bytes,
                     uint64_t off, uint64_t found, char *buf, size_t n) {
  uint64_t n8 = (off / 8) * 8 + 8 <= bytes ? 8 : bytes % 8;
  for (uint64_t back = 1; back <= tag && back <= 64; back++) {
    uint64_t v = tag - back, w = sfcrt_pattern_word(t, v, off);
    if (n8 < 8)
      w &= (UINT64_C(1) << (8 * n8)) - 1;
    if (w == found) {
      if (v == 0)
        snprintf(buf, n,
                 "stale: it holds this tensor's initial contents (a lost swap or a "
                 "missing wait)");
      else
        snprintf(buf, n,
                 "stale: it holds this tensor's contents of iteration %llu (a lost "
                 "swap or a missing wait)",
                 (unsigned long long)(v - 1));
      return;
    }
  }
  snprintf(buf, n, "overwritten: overlap, early reuse of the block or a missing wait");
}

void sfcrt_integrity_fill_homes(sfcrt_integrity_t *g, void *harena) {
  const sfc_plan_view_t *v = g->plan;
  for (uint32_t h = 0; h < v->host_block_count && harena; h++) {
    const sfc_plan_block_t *b = &v->host_blocks[h];
    if (!(b->flags & SFC_BLOCK_PERSISTENT))
      continue;
    uint64_t bytes = v->tensors[b->tensor].bytes; /* a home holds the whole tensor */
    sfcrt_pattern_fill((uint8_t *)harena + b->offset, bytes, b->tensor, 0);
    g->version[b->tensor] = 0;
  }
  g->harena = harena;
}

sfc_status_t sfcrt_integrity_check_step(sfcrt_integrity_t *g, uint64_t tag, uint32_t k,
                                        void *const *ptrs, sfc_error_t *err) {
  const sfc_plan_view_t *v = g->plan;
  const sfc_plan_step_t *ps = &v->steps[k];
  const sfc_plan_op_t *op = &v->ops[ps->op];
  const uint32_t *tensors = v->op_operands + op->operand_begin;
  const uint32_t *blocks = v->step_operands + ps->operand_begin;
  for (uint32_t i = 0; i < op->input_count; i++) {
    uint32_t t = tensors[i];
    uint64_t bytes = held_bytes(v, blocks[i]);
    if (g->version[t] == SFCRT_VERSION_NONE || (!tensor_persistent(g, t) && g->version[t] != tag)) {
      if (!tensor_persistent(g, t))
        return sfc_error_set(err, SFC_ERR_INTEGRITY,
                             "integrity: iteration %llu step %u (op '%s'): input %u tensor %u "
                             "'%s' (block %u) is read before any step produced it in this "
                             "iteration",
                             (unsigned long long)(tag - 1), k, sfc_plan_string(v, op->name), i, t,
                             tensor_name(g, t), blocks[i]);
      sfcrt_pattern_fill(ptrs[i], bytes, t, 0); /* first read of a parameter or input */
      g->version[t] = 0;
    }
    uint64_t found = 0, expected = 0;
    uint64_t off = sfcrt_pattern_check(ptrs[i], bytes, t, g->version[t], &found, &expected);
    if (off != SFCRT_PATTERN_OK) {
      char why[160];
      diagnose(g, tag, t, bytes, off, found, why, sizeof why);
      return sfc_error_set(err, SFC_ERR_INTEGRITY,
                           "integrity: iteration %llu step %u (op '%s'): input %u tensor %u '%s' "
                           "(block %u) byte %llu of %llu: found 0x%016llx, expected 0x%016llx: "
                           "%s",
                           (unsigned long long)(tag - 1), k, sfc_plan_string(v, op->name), i, t,
                           tensor_name(g, t), blocks[i], (unsigned long long)off,
                           (unsigned long long)bytes, (unsigned long long)found,
                           (unsigned long long)expected, why);
    }
    g->last_ptr[t] = ptrs[i];
    g->last_block[t] = blocks[i];
  }
  return SFC_OK;
}

void sfcrt_integrity_fill_step(sfcrt_integrity_t *g, uint64_t tag, uint32_t k, void *const *ptrs) {
  const sfc_plan_view_t *v = g->plan;
  const sfc_plan_step_t *ps = &v->steps[k];
  const sfc_plan_op_t *op = &v->ops[ps->op];
  const uint32_t *tensors = v->op_operands + op->operand_begin;
  const uint32_t *blocks = v->step_operands + ps->operand_begin;
  uint32_t n = (uint32_t)op->input_count + op->output_count + op->temp_count;
  for (uint32_t i = op->input_count; i < n; i++) {
    uint32_t t = tensors[i];
    sfcrt_pattern_fill(ptrs[i], held_bytes(v, blocks[i]), t, tag);
    g->version[t] = tag;
    g->last_ptr[t] = ptrs[i];
    g->last_block[t] = blocks[i];
  }
}

/* At iteration end: the bytes at p (`where`: "block 3", "its home (host block 1)")
 * hold tensor t's current version. */
static sfc_status_t check_end_bytes(sfcrt_integrity_t *g, uint64_t tag, uint32_t t, const void *p,
                                    uint64_t bytes, const char *where, sfc_error_t *err) {
  uint64_t found = 0, expected = 0;
  uint64_t off = sfcrt_pattern_check(p, bytes, t, g->version[t], &found, &expected);
  if (off == SFCRT_PATTERN_OK)
    return SFC_OK;
  char why[160];
  diagnose(g, tag, t, bytes, off, found, why, sizeof why);
  return sfc_error_set(err, SFC_ERR_INTEGRITY,
                       "integrity: iteration %llu end: tensor %u '%s' (%s) byte %llu of %llu: "
                       "found 0x%016llx, expected 0x%016llx: %s",
                       (unsigned long long)(tag - 1), t, tensor_name(g, t), where,
                       (unsigned long long)off, (unsigned long long)bytes,
                       (unsigned long long)found, (unsigned long long)expected, why);
}

sfc_status_t sfcrt_integrity_check_end(sfcrt_integrity_t *g, uint64_t tag, sfc_error_t *err) {
  const sfc_plan_view_t *v = g->plan;
  char where[64];
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    if (!g->last_ptr[t] || g->version[t] == SFCRT_VERSION_NONE)
      continue;
    if (!tensor_persistent(g, t) && v->tensors[t].kind != SFC_KIND_OUTPUT)
      continue;
    const sfc_plan_block_t *b = &v->blocks[g->last_block[t]];
    if (!(b->flags & (SFC_BLOCK_PERSISTENT | SFC_BLOCK_EXTERNAL)) &&
        b->last_step + 1 < v->step_count)
      continue;
    snprintf(where, sizeof where, "block %u", g->last_block[t]);
    SFC_TRY(
        check_end_bytes(g, tag, t, g->last_ptr[t], held_bytes(v, g->last_block[t]), where, err));
  }
  for (uint32_t h = 0; h < v->host_block_count && g->harena; h++) {
    const sfc_plan_block_t *b = &v->host_blocks[h];
    if (!(b->flags & SFC_BLOCK_PERSISTENT) || g->version[b->tensor] == SFCRT_VERSION_NONE)
      continue;
    snprintf(where, sizeof where, "its home, host block %u", h);
    SFC_TRY(check_end_bytes(g, tag, b->tensor, (const uint8_t *)g->harena + b->offset,
                            v->tensors[b->tensor].bytes, where, err));
  }
  return SFC_OK;
}
