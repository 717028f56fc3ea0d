/* test_plan_version.c — the version policy, on files re-laid-out by hand.
 *
 * relayout() rewrites a written plan with a different record size per section,
 * an optional longer header and longer table entries (junk in the extra bytes),
 * sections in reverse kind order and an optional unknown section, then fixes
 * every CRC. A newer-minor file (longer records, unknown section, bigger header)
 * must load with the extra bytes ignored; an older-minor file (shorter records)
 * must load with the missing tail fields read as zero. */
#include "plan_test_util.h"

/* the writer's minor version as text, for messages that name it */
#define SFC_TEST_STR_(x) #x
#define SFC_TEST_STR(x)  SFC_TEST_STR_(x)
#define SFC_TEST_MINOR   SFC_TEST_STR(SFC_PLAN_VERSION_MINOR)

typedef struct layout {
  int delta[14];         /* bytes added to (or cut from) each kind's records */
  uint32_t header_bytes; /* >= 128 */
  uint32_t entry_bytes;  /* table entry size, >= 32 */
  uint16_t minor;
  int unknown_section; /* append a section of kind 99 */
} layout_t;

static size_t align64(size_t x) {
  return (x + 63) & ~(size_t)63;
}

static uint8_t *relayout(const uint8_t *src, size_t n, const layout_t *L, size_t *out_n) {
  sfc_plan_header_t h;
  memcpy(&h, src, sizeof h);
  sfc_plan_section_t ents[14];
  uint32_t count = 0;
  for (uint32_t k = 13; k >= 1; k--) { /* reverse kind order */
    memcpy(&ents[count], src + pb_file_entry(src, n, k), sizeof ents[0]);
    count++;
  }
  size_t table_at = align64(L->header_bytes);
  size_t cursor = align64(table_at + (size_t)(count + 1) * L->entry_bytes);
  size_t cap = cursor + 64 * 16;
  for (uint32_t i = 0; i < count; i++)
    cap += (size_t)ents[i].count * (ents[i].entry_bytes + 64) + 64;
  uint8_t *d = calloc(1, cap);
  memset(d + 128, 0xA5, L->header_bytes - 128); /* header extension: junk */
  uint32_t written = 0;
  for (uint32_t i = 0; i <= count; i++) {
    sfc_plan_section_t e = {0};
    if (i < count) {
      e = ents[i];
      uint32_t old = e.entry_bytes, neu = (uint32_t)((int)old + L->delta[e.kind]);
      for (uint32_t r = 0; r < e.count; r++) {
        uint8_t *dst = d + cursor + (size_t)r * neu;
        memset(dst, 0xA5, neu);
        memcpy(dst, src + e.offset + (size_t)r * old, old < neu ? old : neu);
      }
      e.entry_bytes = neu;
    } else if (L->unknown_section) {
      e.kind = 99;
      e.entry_bytes = 16;
      e.count = 3;
      memset(d + cursor, 0x5A, 48);
    } else {
      break;
    }
    e.offset = cursor;
    e.bytes = (uint64_t)e.count * e.entry_bytes;
    uint8_t *slot = d + table_at + (size_t)written * L->entry_bytes;
    memset(slot, 0xA5, L->entry_bytes);
    memcpy(slot, &e, sizeof e);
    written++;
    cursor = align64(cursor + (size_t)e.bytes);
  }
  h.version_minor = L->minor;
  h.header_bytes = L->header_bytes;
  h.section_table_offset = table_at;
  h.section_count = written;
  h.section_entry_bytes = L->entry_bytes;
  h.file_bytes = cursor;
  memcpy(d, &h, sizeof h);
  pb_recrc(d, cursor);
  *out_n = cursor;
  return d;
}

static sfcrt_plan_t *load(const uint8_t *d, size_t n) {
  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  CHECK_OK(sfcrt_plan_load_buffer(d, n, NULL, &plan, &err), err);
  return plan;
}

static void test_newer_minor(void) {
  size_t n, m;
  uint8_t *src = build(pb_example_full, &n);
  layout_t L = {.header_bytes = 192, .entry_bytes = 48, .minor = 99, .unknown_section = 1};
  for (int k = 2; k <= 13; k++)
    L.delta[k] = 8 * k; /* every record longer, by a different amount */
  uint8_t *d = relayout(src, n, &L, &m);
  sfcrt_plan_t *a = load(src, n), *b = load(d, m);
  if (a && b) {
    CHECK(views_equal(sfcrt_plan_view(a), sfcrt_plan_view(b)));
    CHECK_EQ_U64(sfcrt_plan_view(b)->header.version_minor, 99);
  }
  sfcrt_plan_destroy(a);
  sfcrt_plan_destroy(b);
  free(d);
  free(src);
}

static void test_older_minor(void) {
  size_t n, m;
  uint8_t *src = build(pb_example_full, &n);
  /* Cut only tails that are zero in the example, so the views must be equal. */
  layout_t L = {.header_bytes = 128, .entry_bytes = 32, .minor = 0};
  L.delta[SFC_SECTION_META] = -32;
  L.delta[SFC_SECTION_TENSORS] = -8;
  L.delta[SFC_SECTION_OPS] = -4;    /* reserved4 */
  L.delta[SFC_SECTION_BLOCKS] = -8; /* a 1.0 block: no box */
  L.delta[SFC_SECTION_HOST_BLOCKS] = -12;
  L.delta[SFC_SECTION_STEPS] = -8; /* a 1.0 step: no time_us */
  L.delta[SFC_SECTION_SWAPS] = -8;
  L.delta[SFC_SECTION_SEGMENTS] = -8;
  L.delta[SFC_SECTION_BOXES] = -4;
  uint8_t *d = relayout(src, n, &L, &m);
  sfcrt_plan_t *a = load(src, n), *b = load(d, m);
  if (a && b)
    CHECK(views_equal(sfcrt_plan_view(a), sfcrt_plan_view(b)));
  sfcrt_plan_destroy(b);
  free(d);

  /* Cutting OPS to 40 bytes drops time_us and flops (1.0) and the maps (1.5): they must
   * read as zero (an op with no map: its tile steps' boxes are not checked against one). */
  memset(L.delta, 0, sizeof L.delta);
  L.delta[SFC_SECTION_OPS] = 40 - (int)sizeof(sfc_plan_op_t);
  d = relayout(src, n, &L, &m);
  b = load(d, m);
  if (a && b) {
    const sfc_plan_view_t *va = sfcrt_plan_view(a), *vb = sfcrt_plan_view(b);
    CHECK(va->ops[0].flops != 0);
    CHECK(va->ops[0].time_us != 0);
    for (uint32_t i = 0; i < vb->op_count; i++) {
      CHECK_EQ_U64(vb->ops[i].flops, 0);
      CHECK(vb->ops[i].time_us == 0.0);
      CHECK_EQ_U64(vb->ops[i].map, SFC_MAP_NONE);
      CHECK_EQ_U64(vb->ops[i].kernel[0], 0);
      CHECK_EQ_U64(vb->ops[i].backward_of, va->ops[i].backward_of);
      CHECK_EQ_U64(vb->ops[i].operand_begin, va->ops[i].operand_begin);
    }
    CHECK(SAME_ARRAY(va, vb, blocks, block_count));
  }
  sfcrt_plan_destroy(a);
  sfcrt_plan_destroy(b);
  free(d);
  free(src);
}

static void test_other_major(void) {
  size_t n;
  uint8_t *d = build(pb_example_full, &n);
  d[8] = 2; /* the version check comes before the header CRC */
  expect_load(d, n, SFC_ERR_VERSION,
              "unsupported plan version 2." SFC_TEST_MINOR " (this reader reads major version 1)",
              "2." SFC_TEST_MINOR);
  d[8] = 0;
  d[10] = 5;
  expect_load(d, n, SFC_ERR_VERSION,
              "unsupported plan version 0.5 (this reader reads major version 1)", "0.5");
  free(d);
}

int main(void) {
  RUN(test_newer_minor);
  RUN(test_older_minor);
  RUN(test_other_major);
  return check_summary();
}
