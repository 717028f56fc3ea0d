/* make_bad_plans.c — writes the plan corpora from the test-only builder.
 *
 *   make_bad_plans BAD_DIR INVALID_DIR SEED_DIR     (run by regen-bad-plans.sh)
 *
 * BAD_DIR (tests/data/bad_plans): structurally corrupt files, one damage each,
 * starting from pb_example_full (every section non-empty). INVALID_DIR
 * (tests/data/invalid_plans): well-formed files with correct CRCs that break one
 * semantic rule. SEED_DIR (tests/fuzz/corpus/plan): small valid plans.
 * Only the .plan files are written; the sidecar .err files are the specification
 * and are written by hand. Output is deterministic: rerunning changes nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan_builder.h"

static const char *bad_dir, *invalid_dir, *seed_dir;

static void put(const char *dir, const char *name, const void *data, size_t n) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.plan", dir, name);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, n, f) != n || fclose(f) != 0) {
    fprintf(stderr, "make_bad_plans: cannot write %s\n", path);
    exit(1);
  }
}

static uint8_t *full(size_t *n) {
  pb_t *b = pb_new();
  pb_example_full(b);
  void *d;
  pb_write(b, &d, n);
  pb_free(b);
  return d;
}

static void put64(uint8_t *d, size_t at, uint64_t v) {
  memcpy(d + at, &v, 8);
}

/* One damaged copy of the full example: edit(d, n) may change n; fix re-CRCs after. */
static void bad(const char *name, size_t (*edit)(uint8_t *d, size_t n), int fix) {
  size_t n;
  uint8_t *src = full(&n);
  uint8_t *d = calloc(1, n * 2 + 64);
  memcpy(d, src, n);
  n = edit(d, n);
  if (fix)
    pb_recrc(d, n);
  put(bad_dir, name, d, n);
  free(d);
  free(src);
}

static size_t e_empty(uint8_t *d, size_t n) {
  return 0;
}
static size_t e_short(uint8_t *d, size_t n) {
  return 100;
}
static size_t e_half(uint8_t *d, size_t n) {
  return n / 2;
}
static size_t e_trailing(uint8_t *d, size_t n) {
  return n + 16;
}
static size_t e_version(uint8_t *d, size_t n) {
  d[8] = 2;
  return n;
}
static size_t e_endian(uint8_t *d, size_t n) {
  for (int i = 0; i < 8; i++)
    d[16 + i] = (uint8_t)(i + 1); /* 01 02 .. 08: the big-endian spelling */
  return n;
}
static size_t e_float(uint8_t *d, size_t n) {
  double f = 370.25;
  memcpy(d + 24, &f, 8);
  return n;
}
static size_t e_header_flip(uint8_t *d, size_t n) {
  d[64] ^= 0x01; /* arena_bytes */
  return n;
}
static size_t e_table_flip(uint8_t *d, size_t n) {
  d[128 + 5 * 32 + 8] ^= 0x40; /* BLOCKS offset */
  return n;
}
static size_t flip_in(uint8_t *d, size_t n, uint32_t kind) {
  uint64_t off;
  memcpy(&off, d + pb_file_entry(d, n, kind) + 8, 8);
  d[off + 3] ^= 0x04;
  return n;
}
static size_t e_blocks_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_BLOCKS);
}
static size_t e_steps_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_STEPS);
}
static size_t e_strings_flip(uint8_t *d, size_t n) {
  return flip_in(d, n, SFC_SECTION_STRINGS);
}
static size_t e_misaligned(uint8_t *d, size_t n) {
  size_t at = pb_file_entry(d, n, SFC_SECTION_BLOCKS) + 8;
  uint64_t off;
  memcpy(&off, d + at, 8);
  put64(d, at, off + 8);
  return n;
}
static size_t e_missing(uint8_t *d, size_t n) {
  uint32_t k = 99;
  memcpy(d + pb_file_entry(d, n, SFC_SECTION_STEPS), &k, 4);
  return n;
}
static size_t e_unterminated(uint8_t *d, size_t n) {
  size_t at = pb_file_entry(d, n, SFC_SECTION_STRINGS);
  uint64_t off, bytes;
  memcpy(&off, d + at + 8, 8);
  memcpy(&bytes, d + at + 16, 8);
  d[off + bytes - 1] = '!';
  return n;
}
static size_t e_crlf(uint8_t *d, size_t n) {
  uint8_t *src = malloc(n);
  memcpy(src, d, n);
  size_t o = 0;
  for (size_t i = 0; i < n; i++) {
    if (src[i] == '\n')
      d[o++] = '\r';
    d[o++] = src[i];
  }
  free(src);
  return o;
}
static size_t e_json(uint8_t *d, size_t n) {
  const char *text = "{\n  \"tensors\": [\n    {\"id\": 0, \"name\": \"x\", \"bytes\": 256, "
                     "\"kind\": \"input\"},\n    {\"id\": 1, \"name\": \"y\", \"bytes\": 256, "
                     "\"kind\": \"output\"}\n  ],\n  \"ops\": [{\"id\": 0, \"name\": \"relu\", "
                     "\"type\": \"relu\", \"phase\": \"forward\", \"inputs\": [0], \"outputs\": "
                     "[1]}]\n}\n";
  memcpy(d, text, strlen(text));
  return strlen(text);
}

enum { CHAIN3, FULL, CHAIN1 };

/* A builder plan (base CHAIN3, FULL or CHAIN1), edited, written with correct CRCs. */
static void built(const char *dir, const char *name, int base, void (*edit)(pb_t *)) {
  pb_t *b = pb_new();
  if (base == FULL)
    pb_example_full(b);
  else
    pb_simple_chain(b, base == CHAIN1 ? 1 : 3);
  pb_view(b);
  if (edit)
    edit(b);
  void *d;
  size_t n;
  pb_write(b, &d, &n);
  put(dir, name, d, n);
  free(d);
  pb_free(b);
}

static void i_tensor_oob(pb_t *b) {
  pb_block_at(b, 1)->tensor = 99;
}
static void i_overlap(pb_t *b) {
  pb_block_at(b, 3)->offset = 448;
}
static void i_past_arena(pb_t *b) {
  pb_block_at(b, 2)->offset = 576;
}
static void i_misaligned(pb_t *b) {
  pb_block_at(b, 1)->offset = 260;
}
static void i_not_resident(pb_t *b) {
  pb_block_at(b, 1)->last_step = 0;
}
static void i_dep_forward(pb_t *b) {
  pb_dep_at(b, 1)->index = 4;
}
static void i_swap_wrong_tensor(pb_t *b) {
  pb_swap_at(b, 0)->tensor = 3;
}
static void i_unfilled(pb_t *b) {
  pb_block_at(b, 5)->flags = SFC_BLOCK_SWAPPED_IN;
}

int main(int argc, char **argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: make_bad_plans BAD_DIR INVALID_DIR SEED_DIR\n");
    return 2;
  }
  bad_dir = argv[1];
  invalid_dir = argv[2];
  seed_dir = argv[3];

  bad("empty", e_empty, 0);
  bad("short_header", e_short, 0);
  bad("not_a_plan", e_json, 0);
  bad("crlf_damaged", e_crlf, 0);
  bad("version_2", e_version, 0);
  bad("big_endian", e_endian, 0);
  bad("float_check", e_float, 0);
  bad("header_crc", e_header_flip, 0);
  bad("truncated_half", e_half, 0);
  bad("trailing_bytes", e_trailing, 0);
  bad("table_crc", e_table_flip, 0);
  bad("blocks_crc", e_blocks_flip, 0);
  bad("steps_crc", e_steps_flip, 0);
  bad("strings_crc", e_strings_flip, 0);
  bad("section_misaligned", e_misaligned, 1);
  bad("missing_steps", e_missing, 1);
  bad("strings_unterminated", e_unterminated, 1);
  built(bad_dir, "tensor_out_of_range", CHAIN3, i_tensor_oob);

  built(invalid_dir, "overlap", CHAIN3, i_overlap);
  built(invalid_dir, "past_arena", CHAIN3, i_past_arena);
  built(invalid_dir, "misaligned", CHAIN3, i_misaligned);
  built(invalid_dir, "not_resident", CHAIN3, i_not_resident);
  built(invalid_dir, "dep_forward", FULL, i_dep_forward);
  built(invalid_dir, "swap_wrong_tensor", FULL, i_swap_wrong_tensor);
  built(invalid_dir, "swapped_in_unfilled", FULL, i_unfilled);

  built(seed_dir, "chain1", CHAIN1, NULL);
  built(seed_dir, "chain3", CHAIN3, NULL);
  built(seed_dir, "full", FULL, NULL);
  return 0;
}
