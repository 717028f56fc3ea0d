/* safe_write_cases.h — one set of cases for both safe file writers: the compiler's
 * (compiler/src/outfile.h) and the runtime's trace writer (runtime/src/torch_trace.c),
 * which must follow the same rules (docs/cli.md#output-files).
 *
 *   static const sw_impl_t impl = {"outfile", write_v, content_v, seed, temp_name};
 *   sw_run_all(&impl);
 *
 * Every case works in a fresh scratch folder and removes it. Nothing depends on
 * timing: the FIFO case blocks until the reader child opens the FIFO; alarm() only
 * bounds a broken writer. Include after check.h.
 */
#ifndef SFC_TEST_SAFE_WRITE_CASES_H
#define SFC_TEST_SAFE_WRITE_CASES_H

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sfc/status.h"

typedef struct sw_impl {
  const char *name;
  /* writes content(version) to path through the writer under test */
  sfc_status_t (*write)(const char *path, int version, sfc_error_t *err);
  const char *(*content)(int version);  /* the exact bytes expected, NUL-terminated */
  void (*seed)(uint64_t seed);          /* restart the temporary names' generator */
  char *(*temp_name)(const char *path); /* the next temporary name it would try */
} sw_impl_t;

static char *sw_path(const char *dir, const char *name) {
  size_t n = strlen(dir) + strlen(name) + 2;
  char *p = malloc(n);
  snprintf(p, n, "%s/%s", dir, name);
  return p;
}

static char *sw_scratch(void) {
  const char *t = getenv("TMPDIR");
  char *d = sw_path(t && *t ? t : "/tmp", "sfc_safe_write_XXXXXX");
  if (!mkdtemp(d)) {
    fprintf(stderr, "mkdtemp: %s\n", strerror(errno));
    exit(1);
  }
  return d;
}

static void sw_rm_rf(const char *path) {
  struct stat st;
  if (lstat(path, &st) != 0)
    return;
  if (S_ISDIR(st.st_mode)) {
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)) != NULL) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
        continue;
      char *p = sw_path(path, e->d_name);
      sw_rm_rf(p);
      free(p);
    }
    if (d)
      closedir(d);
    rmdir(path);
  } else {
    unlink(path);
  }
}

static int sw_entries(const char *dir) {
  int n = 0;
  DIR *d = opendir(dir);
  struct dirent *e;
  while (d && (e = readdir(d)) != NULL)
    n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
  if (d)
    closedir(d);
  return n;
}

/* The whole file as a string ("" when missing, to keep checks simple; see sw_exists). */
static char *sw_read(const char *path) {
  FILE *f = fopen(path, "rb");
  size_t cap = 1 << 16, n = 0;
  char *buf = calloc(1, cap + 1);
  if (f) {
    n = fread(buf, 1, cap, f);
    fclose(f);
  }
  buf[n] = '\0';
  return buf;
}

static void sw_put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  fputs(text, f);
  fclose(f);
}

static bool sw_exists(const char *path) {
  struct stat st;
  return lstat(path, &st) == 0;
}

static bool sw_is_link_to(const char *path, const char *to) {
  char buf[4096];
  ssize_t n = readlink(path, buf, sizeof buf - 1);
  if (n < 0)
    return false;
  buf[n] = '\0';
  return strcmp(buf, to) == 0;
}

#define SW_CHECK_CONTENT(path, text)                                                               \
  do {                                                                                             \
    char *sw_got_ = sw_read(path);                                                                 \
    CHECK_STR_EQ(sw_got_, text);                                                                   \
    free(sw_got_);                                                                                 \
  } while (0)

static char *sw_msg(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
static char *sw_msg(const char *fmt, ...) {
  char *m = malloc(4096);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(m, 4096, fmt, ap);
  va_end(ap);
  return m;
}

/* A new file, then a replaced one: content, mode 0666 & ~umask, no leftovers. */
static void sw_case_new_and_replace(const sw_impl_t *w) {
  char *d = sw_scratch(), *out = sw_path(d, "out.plan");
  mode_t old = umask(027);
  sfc_error_t err;
  CHECK_EQ_I64(w->write(out, 1, &err), SFC_OK);
  SW_CHECK_CONTENT(out, w->content(1));
  struct stat st;
  CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640);
  chmod(out, 0600);
  CHECK_EQ_I64(w->write(out, 2, &err), SFC_OK);
  SW_CHECK_CONTENT(out, w->content(2));
  CHECK(stat(out, &st) == 0 && (st.st_mode & 07777) == 0640); /* like a fresh create */
  CHECK_EQ_I64(sw_entries(d), 1);
  umask(old);
  sw_rm_rf(d);
  free(out);
  free(d);
}

/* Symlinks planted at every predictable name next to the output are never followed. */
static void sw_case_predictable_names(const sw_impl_t *w) {
  static const char *const names[] = {"out.plan.tmp", ".out.plan.tmp", "out.plan~",
                                      "out.plan.new", ".out.plan.swp", "out.plan.part",
                                      ".#out.plan",   ".out.plan",     "out.tmp"};
  const int n = (int)(sizeof names / sizeof *names);
  char *d = sw_scratch(), *out = sw_path(d, "out.plan"), *victim = sw_path(d, "victim");
  sw_put(victim, "precious\n");
  for (int i = 0; i < n; i++) {
    char *p = sw_path(d, names[i]);
    CHECK(symlink(victim, p) == 0);
    free(p);
  }
  sfc_error_t err;
  for (int round = 1; round <= 2; round++) { /* out new, then out existing */
    CHECK_EQ_I64(w->write(out, round, &err), SFC_OK);
    SW_CHECK_CONTENT(out, w->content(round));
    SW_CHECK_CONTENT(victim, "precious\n");
    for (int i = 0; i < n; i++) {
      char *p = sw_path(d, names[i]);
      CHECK(sw_is_link_to(p, victim));
      free(p);
    }
    CHECK_EQ_I64(sw_entries(d), n + 2);
  }
  sw_rm_rf(d);
  free(out);
  free(victim);
  free(d);
}

/* Links planted at the exact names the writer will try (same seed): it skips them;
 * planted at all of them: it fails, follows none and leaves nothing behind. */
static void sw_case_seeded_names(const sw_impl_t *w) {
  char *d = sw_scratch(), *out = sw_path(d, "out.csv"), *victim = sw_path(d, "victim"),
       *ghost = sw_path(d, "ghost");
  sw_put(victim, "precious\n");
  char *names[100];
  w->seed(12345);
  for (int i = 0; i < 5; i++)
    names[i] = w->temp_name(out);
  for (int i = 0; i < 5; i++) /* the last one dangles: O_CREAT alone would create ghost */
    CHECK(symlink(i < 4 ? victim : ghost, names[i]) == 0);
  w->seed(12345);
  sfc_error_t err;
  CHECK_EQ_I64(w->write(out, 1, &err), SFC_OK);
  SW_CHECK_CONTENT(out, w->content(1));
  SW_CHECK_CONTENT(victim, "precious\n");
  CHECK(!sw_exists(ghost));
  for (int i = 0; i < 5; i++) {
    CHECK(sw_is_link_to(names[i], i < 4 ? victim : ghost));
    unlink(names[i]);
    free(names[i]);
  }
  CHECK_EQ_I64(sw_entries(d), 2);

  char *out2 = sw_path(d, "out2.csv");
  w->seed(777);
  for (int i = 0; i < 100; i++) {
    names[i] = w->temp_name(out2);
    CHECK(symlink(victim, names[i]) == 0);
  }
  w->seed(777);
  CHECK_EQ_I64(w->write(out2, 1, &err), SFC_ERR_IO);
  char *want = sw_msg("%s: cannot create: %s", out2, strerror(EEXIST));
  CHECK_STR_EQ(err.message, want);
  SW_CHECK_CONTENT(victim, "precious\n");
  CHECK(!sw_exists(out2));
  CHECK_EQ_I64(sw_entries(d), 102);
  for (int i = 0; i < 100; i++) {
    CHECK(sw_is_link_to(names[i], victim));
    free(names[i]);
  }
  w->seed(0x5eed5eedull ^ (uint64_t)getpid()); /* later writes: fresh names */
  free(want);
  free(out2);
  sw_rm_rf(d);
  free(out);
  free(victim);
  free(ghost);
  free(d);
}

/* A failed write (the file size limit) keeps the old file and removes the temporary. */
static void sw_case_failure_cleans_up(const sw_impl_t *w) {
  char *d = sw_scratch(), *out = sw_path(d, "out.plan");
  sw_put(out, "old\n");
  struct rlimit old, small = {8, 8};
  CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
  small.rlim_max = old.rlim_max;
  void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
  CHECK(setrlimit(RLIMIT_FSIZE, &small) == 0);
  sfc_error_t err;
  sfc_status_t st = w->write(out, 1, &err);
  setrlimit(RLIMIT_FSIZE, &old);
  signal(SIGXFSZ, prev);
  CHECK_EQ_I64(st, SFC_ERR_IO);
  char *want = sw_msg("%s: write failed: %s", out, strerror(EFBIG));
  CHECK_STR_EQ(err.message, want);
  SW_CHECK_CONTENT(out, "old\n");
  CHECK_EQ_I64(sw_entries(d), 1);
  free(want);
  sw_rm_rf(d);
  free(out);
  free(d);
}

/* Character devices are written in place, never replaced. Run in a child that, as
 * root, first drops to nobody: a broken writer then cannot rename over /dev/null. */
static void sw_devices_checks(const sw_impl_t *w) {
  sfc_error_t err;
  struct stat st;
  CHECK_EQ_I64(w->write("/dev/null", 1, &err), SFC_OK);
  CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
  if (stat("/dev/full", &st) != 0)
    return;
  CHECK_EQ_I64(w->write("/dev/full", 1, &err), SFC_ERR_IO);
  char *want = sw_msg("%s: write failed: %s", "/dev/full", strerror(ENOSPC));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK(stat("/dev/full", &st) == 0 && S_ISCHR(st.st_mode));
}

static void sw_case_devices(const sw_impl_t *w) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    if (geteuid() == 0 && (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0))
      _exit(4);
    sw_devices_checks(w);
    _exit(check_failures_ ? 1 : 0);
  }
  int status = 0;
  CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 4)
    fprintf(stderr, "note: %s: device cases skipped (running as root, cannot drop to nobody)\n",
            w->name);
  else
    CHECK_EQ_I64(WEXITSTATUS(status), 0);
}

/* A FIFO is written in place: a reader child gets the bytes, the FIFO stays. */
static void sw_case_fifo(const sw_impl_t *w) {
  char *d = sw_scratch(), *fifo = sw_path(d, "pipe"), *got = sw_path(d, "got");
  CHECK(mkfifo(fifo, 0600) == 0);
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    alarm(120); /* only bounds a broken writer */
    int in = open(fifo, O_RDONLY), outfd = open(got, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    char buf[4096];
    ssize_t n;
    while (in >= 0 && outfd >= 0 && (n = read(in, buf, sizeof buf)) > 0)
      if (write(outfd, buf, (size_t)n) != n)
        _exit(2);
    _exit(in >= 0 && outfd >= 0 && close(outfd) == 0 ? 0 : 1);
  }
  CHECK(pid > 0);
  sfc_error_t err;
  sfc_status_t st = w->write(fifo, 3, &err);
  CHECK_EQ_I64(st, SFC_OK);
  if (st != SFC_OK) { /* let the child see end of file */
    int fd = open(fifo, O_WRONLY | O_NONBLOCK);
    if (fd >= 0)
      close(fd);
  }
  int status = 0;
  CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
  SW_CHECK_CONTENT(got, w->content(3));
  struct stat sb;
  CHECK(lstat(fifo, &sb) == 0 && S_ISFIFO(sb.st_mode));
  CHECK_EQ_I64(sw_entries(d), 2);
  sw_rm_rf(d);
  free(fifo);
  free(got);
  free(d);
}

/* A symlink to a regular file: the file it points to is replaced, the link stays;
 * a dangling link and a directory are refused, a missing folder named. */
static void sw_case_links_and_dirs(const sw_impl_t *w) {
  char *d = sw_scratch(), *sub = sw_path(d, "real"), *target = sw_path(sub, "target.csv"),
       *link = sw_path(d, "link.csv"), *dangle = sw_path(d, "dangle.csv"),
       *nowhere = sw_path(d, "nowhere.csv"), *missing = sw_path(d, "no-such-dir/x.csv");
  CHECK(mkdir(sub, 0700) == 0);
  sw_put(target, "old\n");
  CHECK(symlink("real/target.csv", link) == 0);
  sfc_error_t err;
  CHECK_EQ_I64(w->write(link, 4, &err), SFC_OK);
  CHECK(sw_is_link_to(link, "real/target.csv"));
  SW_CHECK_CONTENT(target, w->content(4));
  CHECK_EQ_I64(sw_entries(sub), 1);

  CHECK(symlink(nowhere, dangle) == 0);
  CHECK_EQ_I64(w->write(dangle, 1, &err), SFC_ERR_IO);
  char *want = sw_msg("%s: is a dangling symbolic link; not following it", dangle);
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK(!sw_exists(nowhere));

  CHECK_EQ_I64(w->write(sub, 1, &err), SFC_ERR_IO);
  want = sw_msg("%s: cannot create: %s", sub, strerror(EISDIR));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(w->write(missing, 1, &err), SFC_ERR_IO);
  want = sw_msg("%s: cannot create: %s", missing, strerror(ENOENT));
  CHECK_STR_EQ(err.message, want);
  free(want);
  CHECK_EQ_I64(sw_entries(d), 3); /* real, link.csv, dangle.csv */
  sw_rm_rf(d);
  free(sub);
  free(target);
  free(link);
  free(dangle);
  free(nowhere);
  free(missing);
  free(d);
}

static void sw_run_all(const sw_impl_t *w) {
  sw_case_new_and_replace(w);
  sw_case_predictable_names(w);
  sw_case_seeded_names(w);
  sw_case_failure_cleans_up(w);
  sw_case_devices(w);
  sw_case_fifo(w);
  sw_case_links_and_dirs(w);
}

#endif /* SFC_TEST_SAFE_WRITE_CASES_H */
