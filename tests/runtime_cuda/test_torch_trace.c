/* test_torch_trace.c — the runtime's trace CSV reader and writer: a table of bad
 * inputs with their exact messages, limits, row order, and round trips through the
 * compiler's independent reader (compiler/src/pack/pack_csv.h) in both directions, and
 * the writer's safe-output rules (tests/safe_write_cases.h). */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "rt_test_util.h"
#include "pack_csv.h"
#include "safe_write_cases.h"
#include "torch_trace.h"

static void test_good(void) {
  const char *csv = "offset, size ,id,lower,upper\r\n"
                    "512,100,1,1,3\r\n"
                    "\n"
                    "0,200,0,0,2\r\n"
                    "1024,7,2,2,4"; /* no final newline */
  sfcrt_torch_trace_t t;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_trace_parse(csv, strlen(csv), "t.csv", true, NULL, &t, &err), SFC_OK);
  CHECK_EQ_U64(t.count, 3);
  CHECK(t.has_offsets);
  /* rows land at their id */
  CHECK_EQ_U64(t.blocks[0].size, 200);
  CHECK_EQ_U64(t.blocks[0].offset, 0);
  CHECK_EQ_U64(t.blocks[1].size, 100);
  CHECK_EQ_U64(t.blocks[1].offset, 512);
  CHECK_EQ_U64(t.blocks[1].lower, 1);
  CHECK_EQ_U64(t.blocks[1].upper, 3);
  CHECK_EQ_U64(t.blocks[2].offset, 1024);
  sfcrt_torch_trace_free(&t, NULL);
  CHECK(t.blocks == NULL);
  /* no offset column is fine when not needed; a header alone is an empty trace */
  const char *rec = "id,lower,upper,size\n0,0,1,5\n";
  CHECK_EQ_U64(sfcrt_torch_trace_parse(rec, strlen(rec), NULL, false, NULL, &t, &err), SFC_OK);
  CHECK(!t.has_offsets && t.count == 1);
  sfcrt_torch_trace_free(&t, NULL);
  const char *empty = "id,lower,upper,size,offset\n";
  CHECK_EQ_U64(sfcrt_torch_trace_parse(empty, strlen(empty), NULL, true, NULL, &t, &err), SFC_OK);
  CHECK_EQ_U64(t.count, 0);
  sfcrt_torch_trace_free(&t, NULL);
}

static void test_bad(void) {
  static const struct {
    const char *in;
    bool need_offsets;
    sfc_status_t st;
    const char *msg;
  } rows[] = {
      {"", false, SFC_ERR_BAD_INPUT,
       "t.csv:0: empty file: expected the header 'id,lower,upper,size[,offset]'"},
      {"id,lower,upper,size\n0,0,1,5\n", true, SFC_ERR_BAD_INPUT,
       "t.csv:1: missing column 'offset' (run the trace through `sfc pack -o` first)"},
      {"id,lower,upper\n", false, SFC_ERR_BAD_INPUT, "t.csv:1: missing column 'size'"},
      {"id,lower,upper,size,colour\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:1: unknown column 'colour' (expected id, lower, upper, size and offset)"},
      {"id,lower,upper,size,size\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:1: column 'size' appears twice"},
      {"id,lower,upper,size,offset,x\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:1: 6 columns in the header, at most 5 (id, lower, upper, size, offset)"},
      {"id,lower,upper,size,\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:1: unknown column '' (expected id, lower, upper, size and offset)"},
      {"id,lower,upper,size\n0,0,1\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: expected 4 fields, got 3"},
      {"id,lower,upper,size\n0,0,1,5,\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: expected 4 fields, got 5"},
      {"id,lower,upper,size\n0,0,1,-5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: size: expected a non-negative integer, got '-5'"},
      {"id,lower,upper,size\nb1,0,1,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: id: expected a non-negative integer, got 'b1'"},
      {"id,lower,upper,size\n0,0,1,99999999999999999999\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: size: expected a non-negative integer, got '99999999999999999999'"},
      {"id,lower,upper,size\n0,0,1,0\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: size: 0 is not in 1..2^50"},
      {"id,lower,upper,size\n0,0,1,1125899906842625\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: size: 1125899906842625 is not in 1..2^50"},
      {"id,lower,upper,size\n0,3,3,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: lower 3 is not below upper 3"},
      {"id,lower,upper,size\n0,0,1,5\n0,1,2,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:3: id: 0 appears twice"},
      {"id,lower,upper,size\n1,0,1,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv: ids must be 0..0 (the request numbers), id 0 is missing"},
      {"id,lower,upper,size\n0,0,1,5\n2,0,1,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv: ids must be 0..1 (the request numbers), id 1 is missing"},
      {"id,lower,upper,size\n0,0,1,5\n7,0,1,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:3: id: 7 is not a request number of this trace"},
      {"id,lower,upper,size\n99,0,1,5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: id: 99 is not a request number of this trace"},
      {"id,lower,upper,size,offset\n0,0,1,5,4611686018427387900\n", true, SFC_ERR_BAD_INPUT,
       "t.csv:2: offset: 4611686018427387900 + size is beyond 2^62"},
      {"id,lower,upper,size\n0,0,1,5 5\n", false, SFC_ERR_BAD_INPUT,
       "t.csv:2: size: expected a non-negative integer, got '5 5'"},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    sfcrt_torch_trace_t t;
    sfc_error_t err;
    sfc_error_clear(&err);
    sfc_status_t st = sfcrt_torch_trace_parse(rows[i].in, strlen(rows[i].in), "t.csv",
                                              rows[i].need_offsets, NULL, &t, &err);
    CHECK_EQ_U64(st, rows[i].st);
    if (strcmp(err.message, rows[i].msg) != 0) {
      fprintf(stderr, "row %zu: got  '%s'\n        want '%s'\n", i, err.message, rows[i].msg);
      CHECK(0);
    }
    CHECK(t.blocks == NULL && t.count == 0);
  }
}

static void test_files(void) {
  sfcrt_torch_trace_t t;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_trace_read_file("/nonexistent/sfc.csv", true, NULL, &t, &err),
               SFC_ERR_IO);
  CHECK(strstr(err.message, "/nonexistent/sfc.csv: cannot open") == err.message);
  sfcrt_torch_block_t b = {0, 1, 1, 0};
  CHECK_EQ_U64(sfcrt_torch_trace_write_file("/nonexistent/dir/x.csv", &b, 1, false, &err),
               SFC_ERR_IO);
}

/* the writer follows the safe-output rules (tests/safe_write_cases.h): one block whose
 * times are the version */
static const char *trace_content(int version) {
  static char buf[4][64];
  snprintf(buf[version & 3], sizeof buf[0], "id,lower,upper,size\n0,%d,%d,4096\n", version,
           version + 1);
  return buf[version & 3];
}

static sfc_status_t trace_write(const char *path, int version, sfc_error_t *err) {
  sfcrt_torch_block_t b = {(uint64_t)version, (uint64_t)version + 1, 4096, 0};
  return sfcrt_torch_trace_write_file(path, &b, 1, false, err);
}

static void test_safe_writer(void) {
  const sw_impl_t impl = {"sfcrt_torch_trace_write_file", trace_write, trace_content,
                          sfcrt_torch_trace_test_seed_, sfcrt_torch_trace_test_temp_name_};
  sw_run_all(&impl);
}

/* writer -> compiler reader, and compiler writer -> runtime reader, on random traces */
static void test_round_trips(void) {
  char path[512];
  snprintf(path, sizeof(path), "%s/sfc_trace_rt_%d.csv",
           getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
  uint64_t x = 7;
  for (int round = 0; round < 20; round++) {
    size_t n = 1 + (size_t)round * 37;
    sfcrt_torch_block_t *b = calloc(n, sizeof(*b));
    for (size_t i = 0; i < n; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      b[i].lower = (x >> 20) % 1000;
      b[i].upper = b[i].lower + 1 + (x >> 40) % 50;
      b[i].size = 1 + (x >> 8) % (1u << 30);
      b[i].offset = ((x >> 3) % 100000) * 512;
    }
    bool offs = round % 2;
    sfc_error_t err;
    CHECK_EQ_U64(sfcrt_torch_trace_write_file(path, b, n, offs, &err), SFC_OK);
    sfc_pack_csv_t csv;
    CHECK_EQ_U64(sfc_pack_csv_read_file(path, &csv, &err), SFC_OK);
    CHECK_EQ_U64(csv.count, n);
    CHECK(csv.has_offsets == offs);
    int bad = 0;
    for (size_t i = 0; i < csv.count && i < n; i++) {
      bad += csv.blocks[i].size != b[i].size || (uint64_t)csv.blocks[i].start != b[i].lower ||
             (uint64_t)csv.blocks[i].end != b[i].upper;
      bad += offs && csv.blocks[i].offset != b[i].offset;
      char id[32];
      snprintf(id, sizeof(id), "%zu", i);
      bad += strcmp(csv.ids[i], id) != 0;
    }
    CHECK_EQ_U64(bad, 0);
    /* back through the compiler's writer (with offsets) into the runtime reader */
    for (size_t i = 0; i < csv.count; i++)
      csv.blocks[i].offset = b[i].offset;
    FILE *f = fopen(path, "w");
    sfc_pack_csv_write(f, &csv, true);
    fclose(f);
    sfc_pack_csv_free(&csv);
    sfcrt_torch_trace_t t;
    CHECK_EQ_U64(sfcrt_torch_trace_read_file(path, true, NULL, &t, &err), SFC_OK);
    CHECK_EQ_U64(t.count, n);
    CHECK(t.count != n || memcmp(t.blocks, b, n * sizeof(*b)) == 0);
    sfcrt_torch_trace_free(&t, NULL);
    free(b);
  }
  remove(path);
}

/* A failing allocator at every allocation of parse frees what came before. */
static void test_failing_allocator(void) {
  const char *csv = "id,lower,upper,size,offset\n0,0,1,5,0\n1,0,2,5,512\n";
  for (long fail_at = 1; fail_at <= 3; fail_at++) {
    test_alloc_t count = {.fail_at = fail_at};
    sfc_allocator_t a = {test_alloc_fn, &count};
    sfcrt_torch_trace_t t;
    sfc_error_t err;
    sfc_status_t st = sfcrt_torch_trace_parse(csv, strlen(csv), NULL, true, &a, &t, &err);
    if (fail_at <= 2) {
      CHECK_EQ_U64(st, SFC_ERR_OUT_OF_MEMORY);
    } else {
      CHECK_EQ_U64(st, SFC_OK);
      CHECK_EQ_U64(t.count, 2);
      sfcrt_torch_trace_free(&t, &a);
    }
    CHECK_EQ_U64(count.live_blocks, 0);
  }
}

int main(void) {
  RUN(test_good);
  RUN(test_bad);
  RUN(test_files);
  RUN(test_safe_writer);
  RUN(test_round_trips);
  RUN(test_failing_allocator);
  return check_summary();
}
