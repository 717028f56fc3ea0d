/* test_outfile.c — the compiler's safe output files (compiler/src/outfile.h): the
 * shared writer cases (tests/safe_write_cases.h) through sfc_outfile_write and through
 * begin/commit, abort, and the checks a command runs before its work: an output that
 * is an input (same name, hard link, symlink), two outputs naming one file, an
 * unwritable place. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "outfile.h"
#include "safe_write_cases.h"

static const char *content(int version) {
  static char buf[4][64];
  snprintf(buf[version & 3], sizeof buf[0], "sfc outfile test, version %d\n", version);
  return buf[version & 3];
}

static sfc_status_t write_direct(const char *path, int version, sfc_error_t *err) {
  const char *c = content(version);
  return sfc_outfile_write(path, c, strlen(c), err);
}

static sfc_status_t write_printed(const char *path, int version, sfc_error_t *err) {
  sfc_outfile_t o;
  SFC_TRY(sfc_outfile_begin(&o, path, err));
  fputs(content(version), o.f);
  return sfc_outfile_commit(&o, err);
}

static void test_writer_cases(void) {
  const sw_impl_t direct = {"sfc_outfile_write", write_direct, content, sfc_outfile_test_seed,
                            sfc_outfile_test_temp_name};
  sw_run_all(&direct);
  const sw_impl_t printed = {"sfc_outfile_begin/commit", write_printed, content,
                             sfc_outfile_test_seed, sfc_outfile_test_temp_name};
  sw_run_all(&printed);
}

static void test_abort_writes_nothing(void) {
  char *d = sw_scratch(), *out = sw_path(d, "x.svg");
  sfc_outfile_t o;
  sfc_error_t err;
  CHECK_EQ_I64(sfc_outfile_begin(&o, out, &err), SFC_OK);
  fputs("half a picture", o.f);
  sfc_outfile_abort(&o);
  CHECK_EQ_I64(sw_entries(d), 0);
  sw_rm_rf(d);
  free(out);
  free(d);
}

/* A file that exists but has no room for a temporary beside it (every name taken here;
 * /proc in `sfc compile -o /proc/version`) is not "cannot create": the message says what
 * failed, and the file stays as it was. A new file in the same state is "cannot create". */
static void test_replace_without_temporary(void) {
  char *d = sw_scratch(), *victim = sw_path(d, "victim"), *out = sw_path(d, "out.plan"),
       *fresh = sw_path(d, "new.plan");
  sw_put(victim, "precious\n");
  sw_put(out, "old\n");
  char *names[2][100];
  const char *targets[2] = {out, fresh};
  for (int k = 0; k < 2; k++) {
    sfc_outfile_test_seed(4242);
    for (int i = 0; i < 100; i++) {
      names[k][i] = sfc_outfile_test_temp_name(targets[k]);
      CHECK(symlink(victim, names[k][i]) == 0);
    }
  }
  sfc_error_t err;
  sfc_outfile_test_seed(4242);
  CHECK_EQ_I64(write_direct(out, 1, &err), SFC_ERR_IO);
  char *want = sw_msg("%s: cannot create a temporary file beside it: %s", out, strerror(EEXIST));
  CHECK_STR_EQ(err.message, want);
  free(want);
  SW_CHECK_CONTENT(out, "old\n");
  sfc_outfile_test_seed(4242);
  CHECK_EQ_I64(write_direct(fresh, 1, &err), SFC_ERR_IO);
  want = sw_msg("%s: cannot create: %s", fresh, strerror(EEXIST));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK(!sw_exists(fresh));
  SW_CHECK_CONTENT(victim, "precious\n");
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < 100; i++)
      free(names[k][i]);
  sw_rm_rf(d);
  free(victim);
  free(out);
  free(fresh);
  free(d);
}

static void test_same_file_as_input(void) {
  char *d = sw_scratch(), *in = sw_path(d, "m.json"), *hard = sw_path(d, "hard.json"),
       *sym = sw_path(d, "sym.json"), *other = sw_path(d, "other.json"),
       *fresh = sw_path(d, "new.plan");
  sw_put(in, "{}\n");
  sw_put(other, "{}\n");
  CHECK(link(in, hard) == 0);
  CHECK(symlink("m.json", sym) == 0);
  sfc_error_t err;
  const char *inputs[] = {other, NULL, in};
  const char *outs[] = {in, hard, sym};
  for (int i = 0; i < 3; i++) {
    CHECK_EQ_I64(sfc_outfile_check(outs[i], inputs, 3, &err), SFC_ERR_INVALID_ARGUMENT);
    char *want = sw_msg("%s: is the same file as the input %s; not overwriting it", outs[i], in);
    CHECK_STR_EQ(err.message, want);
    free(want);
  }
  /* the input named through a link is the same file too */
  const char *via_link[] = {sym};
  CHECK_EQ_I64(sfc_outfile_check(in, via_link, 1, &err), SFC_ERR_INVALID_ARGUMENT);
  SW_CHECK_CONTENT(in, "{}\n");
  CHECK_EQ_I64(sfc_outfile_check(fresh, inputs, 3, &err), SFC_OK);
  CHECK_EQ_I64(sfc_outfile_check(other, inputs, 0, &err), SFC_OK);
  CHECK(!sw_exists(fresh)); /* a check creates nothing */
  /* devices are no input's copy: /dev/stdin and /dev/stdout may be one terminal */
  const char *dev[] = {"/dev/null"};
  CHECK_EQ_I64(sfc_outfile_check("/dev/null", dev, 1, &err), SFC_OK);
  CHECK_EQ_I64(sw_entries(d), 4);
  sw_rm_rf(d);
  free(in);
  free(hard);
  free(sym);
  free(other);
  free(fresh);
  free(d);
}

static void test_check_writable(void) {
  char *d = sw_scratch(), *missing = sw_path(d, "missing_dir/out.svg"), *file = sw_path(d, "file"),
       *under_file = sw_path(d, "file/out.svg"), *dangle = sw_path(d, "dangle");
  sw_put(file, "x");
  CHECK(symlink("nowhere", dangle) == 0);
  sfc_error_t err;
  CHECK_EQ_I64(sfc_outfile_check(missing, NULL, 0, &err), SFC_ERR_IO);
  char *want = sw_msg("%s: cannot create: %s", missing, strerror(ENOENT));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sfc_outfile_check(under_file, NULL, 0, &err), SFC_ERR_IO);
  want = sw_msg("%s: cannot create: %s", under_file, strerror(ENOTDIR));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sfc_outfile_check(d, NULL, 0, &err), SFC_ERR_IO);
  want = sw_msg("%s: cannot create: %s", d, strerror(EISDIR));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sfc_outfile_check(dangle, NULL, 0, &err), SFC_ERR_IO);
  want = sw_msg("%s: is a dangling symbolic link; not following it", dangle);
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sfc_outfile_check(file, NULL, 0, &err), SFC_OK);
  CHECK_EQ_I64(sfc_outfile_check("/dev/null", NULL, 0, &err), SFC_OK);
  if (geteuid() != 0) { /* root may write anywhere */
    CHECK(chmod(d, 0500) == 0);
    char *in_ro = sw_path(d, "new.plan");
    CHECK_EQ_I64(sfc_outfile_check(in_ro, NULL, 0, &err), SFC_ERR_IO);
    want = sw_msg("%s: cannot create: %s", in_ro, strerror(EACCES));
    CHECK_STR_EQ(err.message, want);
    free(want);
    free(in_ro);
    chmod(d, 0700);
  }
  sw_rm_rf(d);
  free(missing);
  free(file);
  free(under_file);
  free(dangle);
  free(d);
}

static void test_distinct_outputs(void) {
  char *d = sw_scratch(), *a = sw_path(d, "a.csv"), *b = sw_path(d, "b.svg"),
       *hard = sw_path(d, "hard.csv"), *sym = sw_path(d, "sym.csv"), *dot = sw_path(d, "./a.csv");
  sfc_error_t err;
  /* not created yet: the same name in the same folder */
  CHECK_EQ_I64(sfc_outfile_check_distinct(a, dot, &err), SFC_ERR_INVALID_ARGUMENT);
  char *want =
      sw_msg("%s: is the same file as the output %s; give each output its own file", dot, a);
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sfc_outfile_check_distinct(a, b, &err), SFC_OK);
  CHECK_EQ_I64(sfc_outfile_check_distinct(a, NULL, &err), SFC_OK);
  CHECK_EQ_I64(sfc_outfile_check_distinct(NULL, b, &err), SFC_OK);
  /* existing: by inode, through hard and symbolic links */
  sw_put(a, "x");
  CHECK(link(a, hard) == 0);
  CHECK(symlink("a.csv", sym) == 0);
  CHECK_EQ_I64(sfc_outfile_check_distinct(a, hard, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_I64(sfc_outfile_check_distinct(sym, a, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_I64(sfc_outfile_check_distinct(a, b, &err), SFC_OK);
  /* a device twice is fine */
  CHECK_EQ_I64(sfc_outfile_check_distinct("/dev/null", "/dev/null", &err), SFC_OK);
  sw_rm_rf(d);
  free(a);
  free(b);
  free(hard);
  free(sym);
  free(dot);
  free(d);
}

int main(void) {
  RUN(test_writer_cases);
  RUN(test_abort_writes_nothing);
  RUN(test_replace_without_temporary);
  RUN(test_same_file_as_input);
  RUN(test_check_writable);
  RUN(test_distinct_outputs);
  return check_summary();
}
