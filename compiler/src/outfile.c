/* outfile.c — safe output files (see outfile.h).
 *
 * A write first resolves what the path names (lstat, then stat through a link):
 * nothing or a regular file is replaced by rename from a temporary created with
 * O_CREAT|O_EXCL|O_NOFOLLOW next to it; anything else that exists is written in
 * place. The temporary's name is ".BASE.<16 hex digits>.tmp" with the digits drawn
 * from a generator seeded by the clock, the pid and an address: not secret, but
 * O_EXCL makes a guessed name harmless (the create fails with EEXIST, even for a
 * dangling symlink, and the next name is tried, up to 100). The runtime has its own copy of
 * these rules (runtime/src/torch_trace.c): its floor may not use compiler code.
 */
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { TEMP_TRIES = 100, TEMP_BASE_MAX = 200 };

/* Where a write goes: `name` is renamed onto (or, in place, opened). */
typedef struct target {
  char *name;
  bool in_place;
  bool replaces; /* a regular file is there: a failed temporary is not a failed create */
} target_t;

static sfc_status_t io_error(sfc_error_t *err, const char *path, const char *what, int e) {
  return sfc_error_set(err, SFC_ERR_IO, "%s: %s: %s", path, what, strerror(e));
}

static sfc_status_t no_memory(sfc_error_t *err, const char *path) {
  return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
}

static sfc_status_t resolve(const char *path, target_t *t, sfc_error_t *err) {
  t->name = NULL;
  t->in_place = false;
  t->replaces = false;
  if (!path || !*path)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "empty output path");
  struct stat ls, st;
  if (lstat(path, &ls) != 0) {
    if (errno != ENOENT)
      return io_error(err, path, "cannot create", errno);
    if (path[strlen(path) - 1] == '/')
      return io_error(err, path, "cannot create", EISDIR);
    t->name = strdup(path);
    return t->name ? SFC_OK : no_memory(err, path);
  }
  st = ls;
  if (S_ISLNK(ls.st_mode) && stat(path, &st) != 0) {
    if (errno == ENOENT)
      return sfc_error_set(err, SFC_ERR_IO, "%s: is a dangling symbolic link; not following it",
                           path);
    return io_error(err, path, "cannot open", errno);
  }
  if (S_ISDIR(st.st_mode))
    return io_error(err, path, "cannot create", EISDIR);
  if (!S_ISREG(st.st_mode)) {
    t->in_place = true;
    t->name = strdup(path);
    return t->name ? SFC_OK : no_memory(err, path);
  }
  t->replaces = true;
  if (S_ISLNK(ls.st_mode)) {
    t->name = realpath(path, NULL);
    if (!t->name)
      return errno == ENOMEM ? no_memory(err, path) : io_error(err, path, "cannot resolve", errno);
    return SFC_OK;
  }
  t->name = strdup(path);
  return t->name ? SFC_OK : no_memory(err, path);
}

/* Splits name into a malloc'ed directory ("." when it has none) and its last part. */
static char *dir_of(const char *name, const char **base) {
  const char *slash = strrchr(name, '/');
  if (!slash) {
    *base = name;
    return strdup(".");
  }
  *base = slash + 1;
  size_t n = slash == name ? 1 : (size_t)(slash - name);
  char *dir = malloc(n + 1);
  if (dir) {
    memcpy(dir, name, n);
    dir[n] = '\0';
  }
  return dir;
}

static uint64_t random_state;
static bool random_seeded;

static uint64_t next_random(void) {
  if (!random_seeded) {
    struct timespec a = {0, 0}, b = {0, 0};
    clock_gettime(CLOCK_REALTIME, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    int local = 0;
    random_state = (uint64_t)a.tv_sec * 1000000007u ^ (uint64_t)a.tv_nsec ^
                   (uint64_t)b.tv_nsec << 21 ^ (uint64_t)getpid() << 40 ^
                   (uint64_t)(uintptr_t)&local;
    random_seeded = true;
  }
  uint64_t z = (random_state += 0x9E3779B97F4A7C15ull); /* splitmix64 */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The next temporary name for `name`: "DIR/.BASE.<16 hex>.tmp" (BASE cut to 200 bytes),
 * malloc'ed. */
static char *temp_name(const char *name) {
  const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
  int dir_len = slash ? (slash == name ? 1 : (int)(slash - name)) : 1;
  size_t cap = (size_t)dir_len + TEMP_BASE_MAX + 32;
  char *t = malloc(cap);
  if (t)
    snprintf(t, cap, "%.*s/.%.*s.%016llx.tmp", dir_len, slash ? name : ".", TEMP_BASE_MAX, base,
             (unsigned long long)next_random());
  return t;
}

void sfc_outfile_test_seed(uint64_t seed) {
  random_state = seed;
  random_seeded = true;
}

char *sfc_outfile_test_temp_name(const char *name) {
  return temp_name(name);
}

/* Creates a fresh temporary next to `name`; *tmp is malloc'ed. Returns the fd or -1
 * with errno set. */
static int create_temp(const char *name, char **tmp) {
  for (int i = 0; i < TEMP_TRIES; i++) {
    char *t = temp_name(name);
    if (!t) {
      errno = ENOMEM;
      return -1;
    }
    int fd = open(t, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd >= 0) {
      *tmp = t;
      return fd;
    }
    int e = errno;
    free(t);
    errno = e;
    if (e != EEXIST)
      return -1;
  }
  return -1; /* errno is EEXIST */
}

static int write_all(int fd, const void *data, size_t bytes) {
  const char *p = data;
  while (bytes > 0) {
    size_t chunk = bytes < ((size_t)1 << 30) ? bytes : ((size_t)1 << 30);
    ssize_t put = write(fd, p, chunk);
    if (put < 0 && errno == EINTR)
      continue;
    if (put < 0)
      return -1;
    if (put == 0) {
      errno = EIO;
      return -1;
    }
    p += put;
    bytes -= (size_t)put;
  }
  return 0;
}

static sfc_status_t write_in_place(const char *path, const char *name, const void *data,
                                   size_t bytes, sfc_error_t *err) {
  int fd = open(name, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  if (fd < 0)
    return io_error(err, path, "cannot open", errno);
  struct stat st;
  if (fstat(fd, &st) != 0 || S_ISREG(st.st_mode)) { /* it changed since resolve() */
    close(fd);
    return sfc_error_set(err, SFC_ERR_IO, "%s: changed while being opened; not writing", path);
  }
  if (write_all(fd, data, bytes) != 0) {
    int e = errno;
    close(fd);
    return io_error(err, path, "write failed", e);
  }
  if (close(fd) != 0 && errno != EINTR)
    return io_error(err, path, "write failed", errno);
  return SFC_OK;
}

sfc_status_t sfc_outfile_write(const char *path, const void *data, size_t bytes, sfc_error_t *err) {
  target_t t;
  SFC_TRY(resolve(path, &t, err));
  if (t.in_place) {
    sfc_status_t st = write_in_place(path, t.name, data, bytes, err);
    free(t.name);
    return st;
  }
  char *tmp = NULL;
  int fd = create_temp(t.name, &tmp);
  if (fd < 0) {
    int e = errno;
    bool replaces = t.replaces;
    free(t.name);
    return e == ENOMEM ? no_memory(err, path)
           : replaces  ? io_error(err, path, "cannot create a temporary file beside it", e)
                       : io_error(err, path, "cannot create", e);
  }
  sfc_status_t st = SFC_OK;
  if (write_all(fd, data, bytes) != 0 || fsync(fd) != 0) {
    st = io_error(err, path, "write failed", errno);
    close(fd);
  } else if (close(fd) != 0) {
    st = io_error(err, path, "write failed", errno);
  } else if (rename(tmp, t.name) != 0) {
    st = io_error(err, path, "cannot replace", errno);
  }
  if (st != SFC_OK)
    unlink(tmp); /* never leave a partial file behind */
  free(tmp);
  free(t.name);
  return st;
}

/* ---- checks before the work ---------------------------------------------------- */

sfc_status_t sfc_outfile_check(const char *path, const char *const *inputs, size_t n,
                               sfc_error_t *err) {
  struct stat out;
  if (path && stat(path, &out) == 0 && S_ISREG(out.st_mode)) {
    for (size_t i = 0; i < n; i++) {
      struct stat in;
      if (inputs[i] && stat(inputs[i], &in) == 0 && in.st_dev == out.st_dev &&
          in.st_ino == out.st_ino)
        return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                             "%s: is the same file as the input %s; not overwriting it", path,
                             inputs[i]);
    }
  }
  target_t t;
  SFC_TRY(resolve(path, &t, err));
  sfc_status_t st = SFC_OK;
  if (t.in_place) {
    if (access(t.name, W_OK) != 0)
      st = io_error(err, path, "cannot open", errno);
  } else {
    const char *base;
    char *dir = dir_of(t.name, &base);
    struct stat d;
    if (!dir)
      st = no_memory(err, path);
    else if (stat(dir, &d) != 0)
      st = io_error(err, path, "cannot create", errno);
    else if (!S_ISDIR(d.st_mode))
      st = io_error(err, path, "cannot create", ENOTDIR);
    else if (access(dir, W_OK | X_OK) != 0)
      st = io_error(err, path, "cannot create", errno);
    free(dir);
  }
  free(t.name);
  return st;
}

/* What a name refers to, for comparing two outputs. */
typedef struct ident {
  enum { ID_NONE, ID_FILE, ID_NEW } kind;
  bool regular;
  dev_t dev; /* the file's, or for ID_NEW its directory's */
  ino_t ino;
  const char *base; /* ID_NEW: the last part of the name */
} ident_t;

static ident_t identify(const char *path) {
  ident_t id = {.kind = ID_NONE};
  struct stat st;
  if (stat(path, &st) == 0) {
    id = (ident_t){
        .kind = ID_FILE, .regular = S_ISREG(st.st_mode), .dev = st.st_dev, .ino = st.st_ino};
  } else if (errno == ENOENT && lstat(path, &st) != 0) {
    const char *base;
    char *dir = dir_of(path, &base);
    if (dir && *base && stat(dir, &st) == 0)
      id = (ident_t){.kind = ID_NEW, .dev = st.st_dev, .ino = st.st_ino, .base = base};
    free(dir);
  }
  return id;
}

sfc_status_t sfc_outfile_check_distinct(const char *a, const char *b, sfc_error_t *err) {
  if (!a || !b)
    return SFC_OK;
  ident_t x = identify(a), y = identify(b);
  bool same = x.kind != ID_NONE && x.kind == y.kind && x.dev == y.dev && x.ino == y.ino &&
              (x.kind == ID_FILE ? x.regular : strcmp(x.base, y.base) == 0);
  if (same)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "%s: is the same file as the output %s; give each output its own file", b,
                         a);
  return SFC_OK;
}

/* ---- printing writers --------------------------------------------------------- */

sfc_status_t sfc_outfile_begin(sfc_outfile_t *o, const char *path, sfc_error_t *err) {
  *o = (sfc_outfile_t){.path = path};
  o->f = open_memstream(&o->buf_, &o->bytes_);
  return o->f ? SFC_OK : no_memory(err, path);
}

sfc_status_t sfc_outfile_commit(sfc_outfile_t *o, sfc_error_t *err) {
  bool bad = ferror(o->f) != 0;
  bad |= fclose(o->f) != 0;
  o->f = NULL;
  sfc_status_t st =
      bad ? no_memory(err, o->path) : sfc_outfile_write(o->path, o->buf_, o->bytes_, err);
  free(o->buf_);
  o->buf_ = NULL;
  return st;
}

void sfc_outfile_abort(sfc_outfile_t *o) {
  if (o->f)
    fclose(o->f);
  o->f = NULL;
  free(o->buf_);
  o->buf_ = NULL;
}
