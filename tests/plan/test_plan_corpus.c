/* test_plan_corpus.c — the corrupt-plan corpora, checked without the CLI.
 *
 * Every tests/data/bad_plans/NAME.plan must fail to load with a status other than
 * SFC_ERR_VERIFY (the CLI's exit 2), every tests/data/invalid_plans/NAME.plan with
 * SFC_ERR_VERIFY (exit 1); and "sfc: " + the loader's message must equal the first
 * line of NAME.plan.err with @INPUT@ replaced by the path, exactly as the CLI's
 * corpus tests (sfc_add_error_corpus) will compare it. */
#include <dirent.h>

#include "check.h"
#include "sfc/plan_reader.h"

static void replace_input(const char *line, const char *path, char *out, size_t cap) {
  size_t o = 0;
  for (const char *p = line; *p && o + 1 < cap;) {
    if (strncmp(p, "@INPUT@", 7) == 0) {
      o += (size_t)snprintf(out + o, cap - o, "%s", path);
      p += 7;
    } else {
      out[o++] = *p++;
    }
  }
  out[o < cap ? o : cap - 1] = '\0';
}

static int check_file(const char *path, int want_verify) {
  char errpath[4300], line[1024] = "", want[2048];
  snprintf(errpath, sizeof errpath, "%s.err", path);
  FILE *f = fopen(errpath, "r");
  CHECK(f != NULL);
  if (!f) {
    fprintf(stderr, "  missing %s\n", errpath);
    return 0;
  }
  if (!fgets(line, sizeof line, f))
    line[0] = '\0';
  fclose(f);
  line[strcspn(line, "\n")] = '\0';
  replace_input(line, path, want, sizeof want);

  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  sfc_status_t s = sfcrt_plan_load_file(path, NULL, &plan, &err);
  char got[2048];
  snprintf(got, sizeof got, "sfc: %s", s == SFC_OK ? "(loaded)" : err.message);
  int before = check_failures_;
  CHECK(s != SFC_OK);
  CHECK(want_verify ? s == SFC_ERR_VERIFY : s != SFC_ERR_VERIFY);
  CHECK_STR_EQ(got, want);
  if (check_failures_ != before)
    fprintf(stderr, "  in %s (status %s)\n", path, sfc_status_name(s));
  sfcrt_plan_destroy(plan);
  return 1;
}

static int check_dir(const char *rel, int want_verify) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", test_data(rel));
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d)
    return 0;
  int count = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".plan") != 0)
      continue;
    char path[4200];
    int n = snprintf(path, sizeof path, "%s/%.255s", dir, e->d_name);
    CHECK(n > 0 && (size_t)n < sizeof path);
    if (n > 0 && (size_t)n < sizeof path)
      count += check_file(path, want_verify);
  }
  closedir(d);
  fprintf(stderr, "  %s: %d files\n", rel, count);
  return count;
}

static void test_bad_plans(void) {
  CHECK(check_dir("bad_plans", 0) >= 12);
}

static void test_invalid_plans(void) {
  CHECK(check_dir("invalid_plans", 1) >= 4);
}

int main(void) {
  RUN(test_bad_plans);
  RUN(test_invalid_plans);
  return check_summary();
}
