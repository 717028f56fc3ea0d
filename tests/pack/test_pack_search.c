/* test_pack_search.c — the search packer on minimalloc's challenging instances.
 *
 *   test_pack_search [NAME...]     (default: K, the quickest: ~0.1 s, 454 buffers)
 *
 * Each $SFC_SHARED/data/minimalloc/challenging/NAME.1048576.csv must be packed
 * within its capacity 1,048,576 (the number in the file name; greedy orderings alone
 * reach 1.12–1.41 x the lower bound there) within 20 million search nodes (no clock:
 * the same outcome on any machine under any load), with every packing
 * checked by sfc_pack_run (sfc_pack_check) and again here. C is also solved in
 * minimise mode and must reach its lower bound 1,039,360, proven optimal. Without
 * arguments the stored record packings of D and J are checked too. Exit 77 when
 * the data is absent.
 */
#include "check.h"
#include "pack.h"
#include "pack_csv.h"

static bool load(const char *name, sfc_pack_csv_t *csv) {
  const char *shared = getenv("SFC_SHARED");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/minimalloc/challenging/%s.1048576.csv",
           shared ? shared : "../shared", name);
  sfc_error_t err;
  if (sfc_pack_csv_read_file(path, csv, &err) != SFC_OK) {
    fprintf(stderr, "%s\n", err.message);
    return false;
  }
  for (size_t i = 0; i < csv->count; i++)
    csv->blocks[i].offset = 0; /* cold: no incumbent */
  return true;
}

static int solve(const char *name, uint64_t capacity, bool minimize, sfc_pack_result_t *r) {
  sfc_pack_csv_t csv;
  if (!load(name, &csv))
    return 77;
  sfc_pack_problem_t p = {
      .blocks = csv.blocks, .count = csv.count, .alignment = 1, .capacity = capacity};
  /* a node budget, not a clock (A..K need 2,000-155,000 nodes): the outcome depends on
   * the instance alone, whatever the machine's load */
  sfc_pack_options_t opt = {.time_limit_s = 3600, .work_limit = 20000000, .minimize = minimize};
  sfc_error_t err;
  CHECK_OK(sfc_pack_run("search", &p, &opt, r, &err), err);
  uint64_t peak = 0;
  CHECK(sfc_pack_check(&p, &peak, NULL, NULL) == SFC_OK);
  CHECK_EQ_U64(peak, r->peak);
  printf("%s: %zu buffers, lower bound %" PRIu64 ", peak %" PRIu64 " (%s), %.3f s\n", name,
         csv.count, r->lower_bound, r->peak, r->optimal ? "optimal" : "not proven", r->seconds);
  sfc_pack_csv_free(&csv);
  return 0;
}

/* The record packings the search found for D and J in 60 s (tests/pack/records,
 * written by `sfc pack X.1048576.csv --algorithm search --time-limit 60s -o ...`):
 * valid, at the peak their file name says, and of the very instance in
 * $SFC_SHARED (same ids, lifetimes and sizes). */
static void check_record(const char *name, uint64_t peak) {
  const char *src = getenv("SFC_SOURCE_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/tests/pack/records/%s.%" PRIu64 ".csv", src ? src : ".", name,
           peak);
  sfc_pack_csv_t rec, orig;
  sfc_error_t err;
  sfc_status_t st = sfc_pack_csv_read_file(path, &rec, &err);
  CHECK_OK(st, err);
  if (st != SFC_OK)
    return;
  CHECK(rec.has_offsets);
  sfc_pack_problem_t p = {.blocks = rec.blocks, .count = rec.count, .alignment = 1};
  uint64_t got = 0;
  CHECK(sfc_pack_check(&p, &got, NULL, NULL) == SFC_OK);
  CHECK_EQ_U64(got, peak);
  if (load(name, &orig)) {
    CHECK_EQ_U64(orig.count, rec.count);
    for (size_t i = 0; i < rec.count && i < orig.count; i++) {
      CHECK_STR_EQ(rec.ids[i], orig.ids[i]);
      CHECK(rec.blocks[i].size == orig.blocks[i].size &&
            rec.blocks[i].start == orig.blocks[i].start && rec.blocks[i].end == orig.blocks[i].end);
    }
    sfc_pack_csv_free(&orig);
  }
  printf("record %s: %zu buffers at peak %" PRIu64 " (best known before: %s)\n", name, rec.count,
         got, strcmp(name, "D") == 0 ? "1048576" : "1036288");
  sfc_pack_csv_free(&rec);
}

int main(int argc, char **argv) {
  static const char *const quick[] = {"K"};
  const char *const *names = argc > 1 ? (const char *const *)argv + 1 : quick;
  int count = argc > 1 ? argc - 1 : 1;
  if (argc == 1) {
    check_record("D", 1031168);
    check_record("J", 1035264);
  }
  for (int k = 0; k < count; k++) {
    sfc_pack_result_t r;
    if (solve(names[k], 1048576, false, &r) == 77)
      return 77;
    CHECK(r.peak <= 1048576);
    if (strcmp(names[k], "C") == 0) {
      if (solve("C", 0, true, &r) == 77)
        return 77;
      CHECK_EQ_U64(r.peak, 1039360);
      CHECK(r.optimal);
    }
  }
  return check_summary();
}
