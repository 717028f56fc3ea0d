/* test_pack_csv.c — the minimalloc CSV reader: good files field by field, every
 * bad file in tests/data/bad_csv against its .err line, write/read round trip, and
 * every real instance in ../shared/data read and packed (greedy, checked). */
#include <dirent.h>

#include "check.h"
#include "pack_csv.h"

static void test_reordered_columns_and_crlf(void) {
  const char text[] = "size, upper,lower,id ,offset\r\n64,5,0,7,0\r\n32,9,5,8,64\r\n\r\n";
  sfc_pack_csv_t csv;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_csv_read_buffer(text, sizeof text - 1, "t.csv", &csv, &err), err);
  CHECK_EQ_U64(csv.count, 2);
  CHECK(csv.has_offsets);
  CHECK_STR_EQ(csv.ids[1], "8");
  CHECK_EQ_U64(csv.blocks[1].size, 32);
  CHECK_EQ_I64(csv.blocks[1].start, 5);
  CHECK_EQ_I64(csv.blocks[1].end, 9);
  CHECK_EQ_U64(csv.blocks[1].offset, 64);
  sfc_pack_csv_free(&csv);
}

static void test_round_trip(void) {
  const char text[] = "id,lower,upper,size\n0,0,2,100\n1,1,3,80\n2,2,4,60\n";
  sfc_pack_csv_t csv, again;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_csv_read_buffer(text, sizeof text - 1, NULL, &csv, &err), err);
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  sfc_pack_result_t r;
  CHECK_OK(sfc_pack_run("greedy-size", &p, NULL, &r, &err), err);
  CHECK_EQ_U64(r.peak, 180);
  char *buf = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&buf, &n);
  sfc_pack_csv_write(f, &csv, true);
  fclose(f);
  CHECK_STR_EQ(buf, "id,lower,upper,size,offset\n0,0,2,100,0\n1,1,3,80,100\n2,2,4,60,0\n");
  CHECK_OK(sfc_pack_csv_read_buffer(buf, n, NULL, &again, &err), err);
  CHECK_EQ_U64(again.count, 3);
  CHECK_EQ_U64(again.blocks[1].offset, 100);
  free(buf);
  sfc_pack_csv_free(&csv);
  sfc_pack_csv_free(&again);
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  static char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  while (n && buf[n - 1] == '\n')
    buf[--n] = '\0';
  return buf;
}

static void test_bad_corpus(void) {
  const char *dir = test_data("bad_csv");
  char dirbuf[4096];
  snprintf(dirbuf, sizeof dirbuf, "%s", dir);
  DIR *d = opendir(dirbuf);
  CHECK(d != NULL);
  if (!d)
    return;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 5 || strcmp(e->d_name + len - 4, ".csv") != 0)
      continue;
    char path[4400], errpath[4410], want[8800];
    snprintf(path, sizeof path, "%s/%.255s", dirbuf, e->d_name);
    snprintf(errpath, sizeof errpath, "%s.err", path);
    const char *spec = read_text(errpath);
    CHECK(spec != NULL);
    if (!spec)
      continue;
    /* @INPUT@ stands for the path */
    const char *at = strstr(spec, "@INPUT@");
    if (at)
      snprintf(want, sizeof want, "%.*s%s%s", (int)(at - spec), spec, path, at + 7);
    else
      snprintf(want, sizeof want, "%s", spec);
    sfc_pack_csv_t csv;
    sfc_error_t err = {0};
    sfc_status_t st = sfc_pack_csv_read_file(path, &csv, &err);
    CHECK(st != SFC_OK);
    char got[SFC_ERROR_MESSAGE_BYTES + 8];
    snprintf(got, sizeof got, "sfc: %s", err.message);
    CHECK_STR_EQ(got, want);
    count++;
  }
  closedir(d);
  CHECK(count >= 20);
  fprintf(stderr, "  %d bad CSV files\n", count);
}

/* Every instance of the shared benchmark data reads, packs and checks. */
static void test_shared_instances(void) {
  const char *shared = getenv("SFC_SHARED");
  const char *dirs[] = {"data/minimalloc/challenging", "data/minimalloc/examples",
                        "data/idealloc/somas", "data/idealloc/iree", "data/idealloc/iopddl"};
  int count = 0;
  for (size_t k = 0; shared && k < sizeof dirs / sizeof dirs[0]; k++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s/%s", shared, dirs[k]);
    DIR *d = opendir(dir);
    if (!d)
      continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (!strstr(e->d_name, ".csv"))
        continue;
      char path[4400];
      snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
      sfc_pack_csv_t csv;
      sfc_error_t err = {0};
      CHECK_OK(sfc_pack_csv_read_file(path, &csv, &err), err);
      if (csv.has_offsets) { /* IREE's own solution must itself be a valid packing */
        sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
        uint64_t peak;
        CHECK_OK(sfc_pack_check(&p, &peak, NULL, &err), err);
      }
      count++;
      sfc_pack_csv_free(&csv);
    }
    closedir(d);
  }
  if (!shared || count == 0) {
    fprintf(stderr, "  ../shared/data not found: skipped\n");
    return;
  }
  CHECK(count >= 20);
  fprintf(stderr, "  %d shared instances read\n", count);
}

int main(void) {
  RUN(test_reordered_columns_and_crlf);
  RUN(test_round_trip);
  RUN(test_bad_corpus);
  RUN(test_shared_instances);
  return check_summary();
}
