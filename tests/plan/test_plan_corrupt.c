/* test_plan_corrupt.c — structural damage, each row with its exact message:
 * a bit flip in every header field, in the section table and in each section's
 * payload; truncations at many lengths and trailing bytes; text-mode damage; and
 * well-checksummed files whose header, table or section entries lie (each edit is
 * followed by pb_recrc so the check behind the CRC is what fires). */
#include "plan_test_util.h"

/* the writer's minor version as text, for messages that name it */
#define SFC_TEST_STR_(x) #x
#define SFC_TEST_STR(x)  SFC_TEST_STR_(x)
#define SFC_TEST_MINOR   SFC_TEST_STR(SFC_PLAN_VERSION_MINOR)

static uint8_t *base; /* pb_example_full: every section non-empty */
static size_t base_n;

static uint8_t *copy_base(void) {
  uint8_t *d = malloc(base_n + 64);
  memcpy(d, base, base_n);
  return d;
}

static uint32_t rd32(const uint8_t *p) {
  uint32_t x;
  memcpy(&x, p, 4);
  return x;
}

/* The message a header CRC mismatch on d must produce. */
static const char *header_crc_msg(const uint8_t *d) {
  return fmt("header: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)", rd32(d + 124),
             sfc_crc32(0, d, 124));
}

typedef struct header_row {
  const char *field;
  size_t offset; /* byte of the field whose bit is flipped */
  int bit;
  sfc_status_t status;
  const char *message; /* NULL: a header CRC mismatch */
} header_row_t;

static const header_row_t header_rows[] = {
    {"magic[0]", 0, 0, SFC_ERR_BAD_INPUT, "bad magic: not an sfc plan file"},
    {"magic[0] high bit", 0, 7, SFC_ERR_BAD_INPUT,
     "bad magic: the file went through a 7-bit channel (high bit stripped)"},
    {"magic[3]", 3, 1, SFC_ERR_BAD_INPUT, "bad magic: not an sfc plan file"},
    {"version_major", 8, 1, SFC_ERR_VERSION,
     "unsupported plan version 3." SFC_TEST_MINOR " (this reader reads major version 1)"},
    {"version_minor", 10, 0, SFC_ERR_BAD_INPUT, NULL},
    {"header_bytes", 12, 7, SFC_ERR_BAD_INPUT, "header: header_bytes 0, expected at least 128"},
    {"header_bytes high", 15, 7, SFC_ERR_BAD_INPUT,
     "header: header_bytes 2147483776 exceeds the limit 4096"},
    {"endian_check", 16, 0, SFC_ERR_BAD_INPUT,
     "header: endian_check 0x0102030405060709, expected 0x0102030405060708"},
    {"float_check", 24, 0, SFC_ERR_BAD_INPUT,
     "header: float_check 370.50000000000006, expected 370.5"},
    {"file_bytes", 32, 3, SFC_ERR_BAD_INPUT, NULL},
    {"section_table_offset", 40, 0, SFC_ERR_BAD_INPUT, NULL},
    {"section_count", 48, 0, SFC_ERR_BAD_INPUT, NULL},
    {"section_entry_bytes", 52, 5, SFC_ERR_BAD_INPUT, NULL},
    {"section_table_crc32", 56, 0, SFC_ERR_BAD_INPUT, NULL},
    {"alignment", 60, 0, SFC_ERR_BAD_INPUT, NULL},
    {"arena_bytes", 64, 0, SFC_ERR_BAD_INPUT, NULL},
    {"host_arena_bytes", 72, 0, SFC_ERR_BAD_INPUT, NULL},
    {"budget_bytes", 80, 0, SFC_ERR_BAD_INPUT, NULL},
    {"host_budget_bytes", 88, 0, SFC_ERR_BAD_INPUT, NULL},
    {"flags", 96, 0, SFC_ERR_BAD_INPUT, NULL},
    {"reserved", 100, 0, SFC_ERR_BAD_INPUT, NULL},
    {"header_crc32", 124, 0, SFC_ERR_BAD_INPUT, NULL},
};

static void test_header_bit_flips(void) {
  for (size_t i = 0; i < sizeof header_rows / sizeof header_rows[0]; i++) {
    const header_row_t *r = &header_rows[i];
    uint8_t *d = copy_base();
    d[r->offset] ^= (uint8_t)(1u << r->bit);
    expect_load(d, base_n, r->status, r->message ? r->message : header_crc_msg(d), r->field);
    free(d);
  }
}

static const char *const kind_names[14] = {"",         "STRINGS",       "META",   "TENSORS",
                                           "OPS",      "OP_OPERANDS",   "BLOCKS", "HOST_BLOCKS",
                                           "STEPS",    "STEP_OPERANDS", "SWAPS",  "DEPS",
                                           "SEGMENTS", "BOXES"};

static void test_section_bit_flips(void) {
  for (uint32_t k = 1; k <= 13; k++) {
    uint8_t *d = copy_base();
    size_t at = pb_file_entry(d, base_n, k);
    sfc_plan_section_t e;
    memcpy(&e, d + at, sizeof e);
    CHECK(e.count > 0);
    d[e.offset + e.bytes / 2] ^= 0x10;
    expect_load(d, base_n, SFC_ERR_BAD_INPUT,
                fmt("section %s: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)", kind_names[k],
                    e.crc32, sfc_crc32(0, d + e.offset, e.bytes)),
                kind_names[k]);
    free(d);
  }
  /* A flip in the table itself: caught by the table's CRC in the header. */
  uint8_t *d = copy_base();
  d[128 + 5 * 32 + 8] ^= 0x40; /* BLOCKS offset */
  expect_load(d, base_n, SFC_ERR_BAD_INPUT,
              fmt("section table: CRC-32 mismatch (stored 0x%08x, computed 0x%08x)", rd32(d + 56),
                  sfc_crc32(0, d + 128, 13 * 32)),
              "section table");
  free(d);
}

static void test_truncations(void) {
  size_t blocks = pb_file_entry(base, base_n, SFC_SECTION_BLOCKS);
  sfc_plan_section_t e;
  memcpy(&e, base + blocks, sizeof e);
  size_t short_lens[] = {0, 1, 7, 8, 37, 127};
  for (size_t i = 0; i < sizeof short_lens / sizeof short_lens[0]; i++)
    expect_load(base, short_lens[i], SFC_ERR_BAD_INPUT,
                fmt("truncated: %zu bytes, a plan header needs 128", short_lens[i]), "short");
  size_t lens[] = {128,           129,       128 + 13 * 32 / 2,
                   128 + 13 * 32, 576,       (size_t)e.offset + 17,
                   base_n - 64,   base_n - 1};
  for (size_t i = 0; i < sizeof lens / sizeof lens[0]; i++)
    expect_load(base, lens[i], SFC_ERR_BAD_INPUT,
                fmt("truncated: %zu bytes, the header says %zu", lens[i], base_n), "truncated");
  uint8_t *d = copy_base();
  uint32_t longer = 300; /* a (newer) header longer than the whole file */
  memcpy(d + 12, &longer, 4);
  expect_load(d, 200, SFC_ERR_BAD_INPUT, "truncated: 200 bytes, the header alone needs 300",
              "long header");
  memcpy(d, base, 128);
  memset(d + base_n, 0, 64);
  expect_load(d, base_n + 1, SFC_ERR_BAD_INPUT,
              fmt("trailing bytes: %zu bytes, the header says %zu", base_n + 1, base_n), "+1");
  expect_load(d, base_n + 64, SFC_ERR_BAD_INPUT,
              fmt("trailing bytes: %zu bytes, the header says %zu", base_n + 64, base_n), "+64");
  free(d);
}

/* Text-mode damage: CRLF -> LF and LF -> CRLF conversions of the whole file. */
static void test_text_mode(void) {
  uint8_t *lf = malloc(base_n), *crlf = malloc(base_n * 2);
  size_t nlf = 0, ncrlf = 0;
  for (size_t i = 0; i < base_n; i++) {
    if (!(base[i] == '\r' && i + 1 < base_n && base[i + 1] == '\n'))
      lf[nlf++] = base[i];
    if (base[i] == '\n')
      crlf[ncrlf++] = '\r';
    crlf[ncrlf++] = base[i];
  }
  const char *msg = "bad magic: the file was damaged by a text-mode (CRLF/LF) conversion";
  expect_load(lf, nlf, SFC_ERR_BAD_INPUT, msg, "CRLF -> LF");
  expect_load(crlf, ncrlf, SFC_ERR_BAD_INPUT, msg, "LF -> CRLF");
  free(lf);
  free(crlf);
  const char json[] = "{\"tensors\": [], \"ops\": []}                                          "
                      "                                                                   ";
  expect_load(json, sizeof json - 1, SFC_ERR_BAD_INPUT, "bad magic: not an sfc plan file", "json");
}

/* ---- edits behind the CRCs ---------------------------------------------------------- */

static void put32(uint8_t *d, size_t at, uint32_t v) {
  memcpy(d + at, &v, 4);
}
static void put64(uint8_t *d, size_t at, uint64_t v) {
  memcpy(d + at, &v, 8);
}
static size_t entry(uint8_t *d, uint32_t kind) {
  return pb_file_entry(d, base_n, kind);
}
static uint64_t get64(const uint8_t *d, size_t at) {
  uint64_t v;
  memcpy(&v, d + at, 8);
  return v;
}

/* Applies edit `which` to d; returns the expected message (status in *st). */
static const char *edit(int which, uint8_t *d, sfc_status_t *st) {
  size_t blk = entry(d, SFC_SECTION_BLOCKS), str = entry(d, SFC_SECTION_STRINGS);
  uint64_t boff = get64(d, blk + 8), toff = get64(d, entry(d, SFC_SECTION_TENSORS) + 8);
  *st = SFC_ERR_BAD_INPUT;
  switch (which) {
    case 0:
      put32(d, 48, 65);
      *st = SFC_ERR_LIMIT;
      return "header: section_count 65 exceeds the limit 64";
    case 1:
      put32(d, 52, 16);
      return "header: section_entry_bytes 16 out of range [32, 4096]";
    case 2:
      put64(d, 40, 132);
      return "header: section_table_offset 132 is not a multiple of 8";
    case 3:
      put64(d, 40, 64);
      return "header: section_table_offset 64 is inside the header (128 bytes)";
    case 23:
      put64(d, 40, base_n + 8);
      return fmt("header: section_table_offset %zu is past the end of the file (%zu bytes)",
                 base_n + 8, base_n);
    case 4:
      put64(d, 40, base_n - 64);
      return fmt("section table: bytes [%zu, %zu) extend past the end of the file (%zu bytes)",
                 base_n - 64, base_n - 64 + 416, base_n);
    case 5:
      put32(d, blk, SFC_SECTION_TENSORS);
      return "section TENSORS: appears twice (table entries 2 and 5)";
    case 6:
      put32(d, str + 4, 2);
      return "section STRINGS: entry_bytes 2, expected 1";
    case 7:
      put32(d, blk + 4, 0);
      return "section BLOCKS: entry_bytes 0 out of range [1, 4096]";
    case 8:
      put32(d, blk + 4, 5000);
      return "section BLOCKS: entry_bytes 5000 out of range [1, 4096]";
    case 9:
      put32(d, blk + 24, (1u << 28) + 1);
      *st = SFC_ERR_LIMIT;
      return "section BLOCKS: count 268435457 exceeds the limit 268435456";
    case 10:
      put64(d, blk + 16, 6 * sizeof(sfc_plan_block_t) + 1);
      return fmt("section BLOCKS: bytes %zu != count 6 * entry_bytes %zu",
                 6 * sizeof(sfc_plan_block_t) + 1, sizeof(sfc_plan_block_t));
    case 11:
      put64(d, blk + 8, boff + 8);
      return fmt("section BLOCKS: offset %llu is not a multiple of 64",
                 (unsigned long long)boff + 8);
    case 12:
      put64(d, blk + 8, base_n);
      return fmt("section BLOCKS: bytes [%zu, %zu) extend past the end of the file (%zu bytes)",
                 base_n, base_n + 6 * sizeof(sfc_plan_block_t), base_n);
    case 13:
      put64(d, blk + 8, 0xFFFFFFFFFFFFFFC0u);
      return fmt("section BLOCKS: offset 18446744073709551552 is past the end of the file (%zu "
                 "bytes)",
                 base_n);
    case 14:
      put64(d, blk + 8, 512);
      return fmt("section BLOCKS: bytes [512, %zu) overlap the header or the section table",
                 512 + 6 * sizeof(sfc_plan_block_t));
    case 15:
      put64(d, blk + 8, toff);
      return fmt("section BLOCKS: bytes [%llu, %llu) overlap table entry 2 [%llu, %llu)",
                 (unsigned long long)toff,
                 (unsigned long long)(toff + 6 * sizeof(sfc_plan_block_t)),
                 (unsigned long long)toff, (unsigned long long)toff + 5 * 96);
    case 16:
      put32(d, entry(d, SFC_SECTION_STEPS), 99);
      return "missing section STEPS";
    case 17:
      put32(d, entry(d, SFC_SECTION_META) + 24, 0);
      put64(d, entry(d, SFC_SECTION_META) + 16, 0);
      return "section META: count 0, expected 1";
    case 18:
      d[get64(d, str + 8)] = 'x';
      return "section STRINGS: does not start with NUL (offset 0 must be \"\")";
    case 19:
      d[get64(d, str + 8) + get64(d, str + 16) - 1] = 'x';
      return "section STRINGS: does not end with NUL";
    case 20:
      put32(d, 60, 48);
      return "header: alignment 48 is not a power of two";
    case 21:
      put64(d, 64, (uint64_t)1 << 51);
      *st = SFC_ERR_LIMIT;
      return "header: arena_bytes 2251799813685248 / host_arena_bytes 256 exceed the limit "
             "1125899906842624";
    case 22:
      d[10] = 7;
      put32(d, 96, 0xFFFF0000u);
      put32(d, 100, 5);
      *st = SFC_OK;
      return NULL; /* minor 7, unknown flags and reserved bits: ignored */
    default:
      return "";
  }
}

static void test_edits_behind_crc(void) {
  for (int i = 0; i <= 23; i++) {
    uint8_t *d = copy_base();
    sfc_status_t st;
    const char *msg = edit(i, d, &st);
    char label[32];
    snprintf(label, sizeof label, "edit %d", i);
    pb_recrc(d, base_n);
    expect_load(d, base_n, st, msg, label);
    free(d);
  }
}

int main(void) {
  base = build(pb_example_full, &base_n);
  RUN(test_header_bit_flips);
  RUN(test_section_bit_flips);
  RUN(test_truncations);
  RUN(test_text_mode);
  RUN(test_edits_behind_crc);
  free(base);
  return check_summary();
}
