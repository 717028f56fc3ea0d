/* test_plan_roundtrip.c — builder -> writer -> reader gives back the same view, and
 * re-writing the loaded view gives back the same bytes; the file layout rules hold
 * (64-byte aligned sections in kind order, all 13 kinds, zero padding); file writes
 * are atomic and report errors with the path and strerror. */
#include <errno.h>
#include <unistd.h>

#include "emit.h"
#include "plan_test_util.h"

static void chain1(pb_t *b) {
  pb_simple_chain(b, 1);
}
static void chain5(pb_t *b) {
  pb_simple_chain(b, 5);
}

static void roundtrip(void (*make)(pb_t *), const char *label) {
  pb_t *b = pb_new();
  make(b);
  void *data, *again, *third;
  size_t n, n2, n3;
  pb_write(b, &data, &n);
  pb_write(b, &third, &n3); /* deterministic: same view, same bytes */
  CHECK(n == n3 && memcmp(data, third, n) == 0);

  sfcrt_plan_t *plan;
  sfc_error_t err;
  CHECK_OK(sfcrt_plan_load_buffer(data, n, NULL, &plan, &err), err);
  if (!plan) {
    fprintf(stderr, "  in %s\n", label);
    return;
  }
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  CHECK(views_equal(v, pb_view(b)));
  CHECK_EQ_U64(v->header.file_bytes, n);
  CHECK_EQ_U64(v->header.version_major, 1);
  CHECK_EQ_U64(v->header.version_minor, SFC_PLAN_VERSION_MINOR);
  CHECK_OK(sfc_plan_write_buffer(v, &again, &n2, &err), err);
  CHECK(n == n2 && memcmp(data, again, n) == 0);

  /* Layout: table after the header, 13 entries in kind order, aligned, padded. */
  const uint8_t *d = data;
  CHECK_EQ_U64(v->header.section_table_offset, 128);
  CHECK_EQ_U64(v->header.section_count, 13);
  CHECK_EQ_U64(n % 64, 0);
  uint64_t end = 128 + 13 * 32;
  for (uint32_t k = 1; k <= 13; k++) {
    sfc_plan_section_t e;
    memcpy(&e, d + 128 + (k - 1) * 32, sizeof e);
    CHECK_EQ_U64(e.kind, k);
    CHECK_EQ_U64(e.offset % 64, 0);
    CHECK(e.offset >= end);
    for (uint64_t i = end; i < e.offset; i++)
      CHECK(d[i] == 0);
    end = e.offset + e.bytes;
  }
  fprintf(stderr, "  %s: %zu bytes\n", label, n);
  sfcrt_plan_destroy(plan);
  free(data);
  free(again);
  free(third);
  pb_free(b);
}

static void test_roundtrip(void) {
  roundtrip(chain1, "chain of 1");
  roundtrip(chain5, "chain of 5");
  roundtrip(pb_example_full, "full example");
}

/* CRC-32 bit by bit, as the polynomial defines it */
static uint32_t crc32_bitwise(uint32_t crc, const uint8_t *p, size_t n) {
  crc = ~crc;
  while (n--) {
    crc ^= *p++;
    for (int b = 0; b < 8; b++)
      crc = crc & 1u ? 0xEDB88320u ^ (crc >> 1) : crc >> 1;
  }
  return ~crc;
}

static void test_crc32_vector(void) {
  CHECK_EQ_U64(sfc_crc32(0, "123456789", 9), 0xCBF43926u); /* the standard check value */
  /* the sliced tables against the definition: every length 0..300 at every start 0..7
   * of a pseudo-random buffer, whole and split in two (a CRC continues from a prefix's) */
  uint8_t buf[320];
  uint32_t x = 12345;
  for (size_t i = 0; i < sizeof buf; i++) {
    x = x * 1103515245u + 12345u;
    buf[i] = (uint8_t)(x >> 16);
  }
  unsigned bad = 0;
  for (size_t start = 0; start < 8; start++)
    for (size_t n = 0; n <= 300; n++) {
      uint32_t want = crc32_bitwise(0, buf + start, n);
      bad += sfc_crc32(0, buf + start, n) != want;
      bad += sfc_crc32(sfc_crc32(0, buf + start, n / 3), buf + start + n / 3, n - n / 3) != want;
    }
  CHECK_EQ_U64(bad, 0);
}

static void test_file_roundtrip(void) {
  char path[] = "/tmp/sfc_plan_rt_XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  close(fd);
  pb_t *b = pb_new();
  pb_example_full(b);
  pb_write_file(b, path);
  char tmp[64];
  snprintf(tmp, sizeof tmp, "%s.tmp", path);
  CHECK(access(tmp, F_OK) != 0); /* renamed away */
  sfcrt_plan_t *plan;
  sfc_error_t err;
  CHECK_OK(sfcrt_plan_load_file(path, NULL, &plan, &err), err);
  if (plan)
    CHECK(views_equal(sfcrt_plan_view(plan), pb_view(b)));
  sfcrt_plan_destroy(plan);
  remove(path);
  pb_free(b);
}

static void test_file_errors(void) {
  pb_t *b = pb_new();
  pb_simple_chain(b, 2);
  sfc_error_t err;
  const char *bad = "/nonexistent-dir-sfc/out.plan";
  CHECK_EQ_I64(sfc_plan_write_file(pb_view(b), bad, &err), SFC_ERR_IO);
  CHECK_STR_EQ(err.message, fmt("%s: cannot create: %s", bad, strerror(ENOENT))); /* not a temp */
  pb_free(b);

  sfcrt_plan_t *plan;
  CHECK_EQ_I64(sfcrt_plan_load_file("/nonexistent-dir-sfc/in.plan", NULL, &plan, &err), SFC_ERR_IO);
  CHECK_STR_EQ(err.message, fmt("/nonexistent-dir-sfc/in.plan: cannot open: %s", strerror(ENOENT)));
  CHECK(plan == NULL);
  CHECK_EQ_I64(sfcrt_plan_load_file("/tmp", NULL, &plan, &err), SFC_ERR_IO);
  CHECK_STR_EQ(err.message, fmt("/tmp: read failed: %s", strerror(EISDIR)));
}

static void test_writer_arguments(void) {
  sfc_plan_view_t v;
  memset(&v, 0, sizeof v);
  void *data;
  size_t n;
  sfc_error_t err;
  v.block_count = 3; /* no pointer */
  CHECK_EQ_I64(sfc_plan_write_buffer(&v, &data, &n, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "plan writer: section BLOCKS has 3 records but no data");
  v.block_count = 0;
  v.strings = "x";
  v.strings_bytes = 2;
  CHECK_EQ_I64(sfc_plan_write_buffer(&v, &data, &n, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_STR_EQ(err.message, "plan writer: the string table must start with the NUL of \"\"");
  /* An empty view still writes a file (with STRINGS = ""); the reader rejects it. */
  v.strings = NULL;
  v.strings_bytes = 0;
  CHECK_OK(sfc_plan_write_buffer(&v, &data, &n, &err), err);
  expect_load(data, n, SFC_ERR_BAD_INPUT, "header: alignment 0 is not a power of two",
              "empty view");
  free(data);
}

int main(void) {
  RUN(test_crc32_vector);
  RUN(test_roundtrip);
  RUN(test_file_roundtrip);
  RUN(test_file_errors);
  RUN(test_writer_arguments);
  return check_summary();
}
