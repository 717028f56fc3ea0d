/* torch_trace.c — read and write the PyTorch allocator's DSA CSV (see torch_trace.h).
 *
 * The reader makes two passes: the first counts newlines to bound the row count
 * before anything is allocated, the second splits each line at commas and parses
 * strict unsigned decimals with overflow checks. Ids index the block array directly;
 * a seen-flag per id rejects duplicates, and ids < rows with no duplicates means
 * every id 0..rows-1 is present. O(bytes) time, O(rows) memory.
 */
#include "torch_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum { COL_ID, COL_LOWER, COL_UPPER, COL_SIZE, COL_OFFSET, N_COLS };
static const char *const col_names[N_COLS] = {"id", "lower", "upper", "size", "offset"};

typedef struct reader {
  const char *p, *end, *name;
  uint64_t line;
  sfc_error_t *err;
} reader_t;

static sfc_status_t bad(reader_t *r, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static sfc_status_t bad(reader_t *r, const char *fmt, ...) {
  char msg[SFC_ERROR_MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof(msg), fmt, ap);
  va_end(ap);
  return sfc_error_set(r->err, SFC_ERR_BAD_INPUT, "%s%s%" PRIu64 ": %s", r->name ? r->name : "",
                       r->name ? ":" : "", r->line, msg);
}

static bool next_line(reader_t *r, const char **s, size_t *n) {
  if (r->p >= r->end)
    return false;
  const char *b = r->p, *nl = memchr(b, '\n', (size_t)(r->end - b));
  const char *e = nl ? nl : r->end;
  r->p = nl ? nl + 1 : r->end;
  r->line++;
  if (e > b && e[-1] == '\r')
    e--;
  *s = b;
  *n = (size_t)(e - b);
  return true;
}

/* Splits the next comma-separated field off [*s, *s + *n), trimmed of spaces/tabs. */
static void next_field(const char **s, size_t *n, const char **f, size_t *fn) {
  const char *c = memchr(*s, ',', *n);
  size_t len = c ? (size_t)(c - *s) : *n;
  *f = *s;
  *fn = len;
  *s += c ? len + 1 : len;
  *n -= c ? len + 1 : len;
  while (*fn && (**f == ' ' || **f == '\t'))
    (*f)++, (*fn)--;
  while (*fn && ((*f)[*fn - 1] == ' ' || (*f)[*fn - 1] == '\t'))
    (*fn)--;
}

static bool parse_u64(const char *f, size_t n, uint64_t *out) {
  if (n == 0 || n > 20)
    return false;
  uint64_t v = 0;
  for (size_t i = 0; i < n; i++) {
    if (f[i] < '0' || f[i] > '9')
      return false;
    unsigned d = (unsigned)(f[i] - '0');
    if (v > (UINT64_MAX - d) / 10)
      return false;
    v = v * 10 + d;
  }
  *out = v;
  return true;
}

static bool blank(const char *s, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (s[i] != ' ' && s[i] != '\t')
      return false;
  return true;
}

static sfc_status_t parse_header(reader_t *r, bool need_offsets, int col_of[N_COLS], int *ncols) {
  const char *s;
  size_t n;
  if (!next_line(r, &s, &n))
    return bad(r, "empty file: expected the header 'id,lower,upper,size%s'",
               need_offsets ? ",offset" : "[,offset]");
  for (int c = 0; c < N_COLS; c++)
    col_of[c] = -1;
  int fields = 1;
  for (size_t i = 0; i < n; i++)
    fields += s[i] == ',';
  if (fields > N_COLS)
    return bad(r, "%d columns in the header, at most %d (id, lower, upper, size, offset)", fields,
               N_COLS);
  int k = 0;
  while (k < fields) {
    const char *f;
    size_t fn;
    next_field(&s, &n, &f, &fn);
    int c = 0;
    while (c < N_COLS && !(strlen(col_names[c]) == fn && memcmp(col_names[c], f, fn) == 0))
      c++;
    if (c == N_COLS)
      return bad(r, "unknown column '%.*s' (expected id, lower, upper, size and offset)",
                 (int)(fn > 32 ? 32 : fn), f);
    if (col_of[c] >= 0)
      return bad(r, "column '%s' appears twice", col_names[c]);
    col_of[c] = k++;
  }
  for (int c = 0; c < N_COLS; c++)
    if (col_of[c] < 0 && (c != COL_OFFSET || need_offsets))
      return bad(r, "missing column '%s'%s", col_names[c],
                 c == COL_OFFSET ? " (run the trace through `sfc pack -o` first)" : "");
  *ncols = k;
  return SFC_OK;
}

sfc_status_t sfcrt_torch_trace_parse(const char *data, size_t bytes, const char *name,
                                     bool need_offsets, const sfc_allocator_t *alloc,
                                     sfcrt_torch_trace_t *out, sfc_error_t *err) {
  memset(out, 0, sizeof(*out));
  if (bytes > SFCRT_TORCH_TRACE_MAX_BYTES)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%s: %zu bytes is more than the 1 GiB limit",
                         name ? name : "trace", bytes);
  size_t lines = 0;
  for (const char *p = data; p && (p = memchr(p, '\n', bytes - (size_t)(p - data))); p++)
    lines++;
  reader_t r = {data, data + bytes, name, 0, err};
  int col_of[N_COLS], ncols = 0;
  SFC_TRY(parse_header(&r, need_offsets, col_of, &ncols));
  size_t cap = lines + 1; /* rows <= lines after the header, + an unterminated last line */
  if (cap > SFCRT_TORCH_TRACE_MAX_ROWS + 1)
    cap = SFCRT_TORCH_TRACE_MAX_ROWS + 1;
  sfcrt_torch_block_t *blocks = sfc_calloc(alloc, cap, sizeof(*blocks));
  uint8_t *seen = sfc_calloc(alloc, cap, 1);
  sfc_status_t st = SFC_OK;
  size_t rows = 0;
  if (!blocks || !seen) {
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "no memory for a %zu-row trace", cap);
    goto done;
  }
  const char *s;
  size_t n;
  while (st == SFC_OK && next_line(&r, &s, &n)) {
    if (blank(s, n))
      continue;
    if (rows == SFCRT_TORCH_TRACE_MAX_ROWS) {
      st = sfc_error_set(err, SFC_ERR_LIMIT, "%s:%" PRIu64 ": more than %u rows",
                         name ? name : "trace", r.line, (unsigned)SFCRT_TORCH_TRACE_MAX_ROWS);
      break;
    }
    int fields = 1;
    for (size_t i = 0; i < n; i++)
      fields += s[i] == ',';
    if (fields != ncols) {
      st = bad(&r, "expected %d fields, got %d", ncols, fields);
      break;
    }
    uint64_t v[N_COLS] = {0};
    for (int k = 0; k < ncols && st == SFC_OK; k++) {
      const char *f;
      size_t fn;
      next_field(&s, &n, &f, &fn);
      int c = 0;
      while (col_of[c] != k)
        c++;
      if (!parse_u64(f, fn, &v[c]))
        st = bad(&r, "%s: expected a non-negative integer, got '%.*s'", col_names[c],
                 (int)(fn > 32 ? 32 : fn), f);
    }
    if (st != SFC_OK)
      break;
    if (v[COL_ID] >= cap || v[COL_ID] >= SFCRT_TORCH_TRACE_MAX_ROWS) {
      st = bad(&r, "id: %" PRIu64 " is not a request number of this trace", v[COL_ID]);
      break;
    }
    if (seen[v[COL_ID]]) {
      st = bad(&r, "id: %" PRIu64 " appears twice", v[COL_ID]);
      break;
    }
    if (v[COL_LOWER] >= v[COL_UPPER]) {
      st = bad(&r, "lower %" PRIu64 " is not below upper %" PRIu64, v[COL_LOWER], v[COL_UPPER]);
      break;
    }
    if (v[COL_SIZE] == 0 || v[COL_SIZE] > SFCRT_TORCH_TRACE_MAX_SIZE) {
      st = bad(&r, "size: %" PRIu64 " is not in 1..2^50", v[COL_SIZE]);
      break;
    }
    if (v[COL_OFFSET] > SFCRT_TORCH_TRACE_MAX_END - v[COL_SIZE]) {
      st = bad(&r, "offset: %" PRIu64 " + size is beyond 2^62", v[COL_OFFSET]);
      break;
    }
    seen[v[COL_ID]] = 1;
    blocks[v[COL_ID]] =
        (sfcrt_torch_block_t){v[COL_LOWER], v[COL_UPPER], v[COL_SIZE], v[COL_OFFSET]};
    rows++;
  }
  if (st == SFC_OK)
    for (size_t i = 0; i < rows; i++)
      if (!seen[i]) {
        st = sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "%s: ids must be 0..%zu (the request numbers), id %zu is missing",
                           name ? name : "trace", rows - 1, i);
        break;
      }
done:
  if (seen)
    sfc_free(alloc, seen, cap);
  if (st != SFC_OK) {
    if (blocks)
      sfc_free(alloc, blocks, cap * sizeof(*blocks));
    return st;
  }
  out->blocks = blocks;
  out->count = rows;
  out->has_offsets = col_of[COL_OFFSET] >= 0;
  out->capacity_ = cap;
  return SFC_OK;
}

sfc_status_t sfcrt_torch_trace_read_file(const char *path, bool need_offsets,
                                         const sfc_allocator_t *alloc, sfcrt_torch_trace_t *out,
                                         sfc_error_t *err) {
  memset(out, 0, sizeof(*out));
  FILE *f = fopen(path, "rb");
  if (!f)
    return sfc_error_set(err, SFC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  sfc_status_t st = SFC_OK;
  char *data = NULL;
  long len = -1;
  if (fseek(f, 0, SEEK_END) == 0)
    len = ftell(f);
  if (len < 0 || fseek(f, 0, SEEK_SET) != 0)
    st = sfc_error_set(err, SFC_ERR_IO, "%s: cannot size the file", path);
  else if ((uint64_t)len > SFCRT_TORCH_TRACE_MAX_BYTES)
    st = sfc_error_set(err, SFC_ERR_LIMIT, "%s: %ld bytes is more than the 1 GiB limit", path, len);
  else if (!(data = sfc_alloc(alloc, (size_t)len + 1)))
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: no memory for %ld bytes", path, len);
  else if (fread(data, 1, (size_t)len, f) != (size_t)len)
    st = sfc_error_set(err, SFC_ERR_IO, "%s: read failed", path);
  fclose(f);
  if (st == SFC_OK)
    st = sfcrt_torch_trace_parse(data, (size_t)len, path, need_offsets, alloc, out, err);
  if (data)
    sfc_free(alloc, data, (size_t)len + 1);
  return st;
}

void sfcrt_torch_trace_free(sfcrt_torch_trace_t *trace, const sfc_allocator_t *alloc) {
  if (trace->blocks)
    sfc_free(alloc, trace->blocks, trace->capacity_ * sizeof(*trace->blocks));
  memset(trace, 0, sizeof(*trace));
}

/* ---- the writer: the safe-output rules of compiler/src/outfile.h, restated here
 * because the runtime may not use compiler code. A new or regular-file target is
 * written to a fresh temporary next to it (O_CREAT|O_EXCL|O_NOFOLLOW, 0666 & ~umask,
 * an unpredictable name, another one tried on EEXIST, so a planted link is never
 * followed), fsync'ed and renamed over it; an existing non-regular file (/dev/null, a
 * FIFO) is written in place; a symlink to a regular file replaces the file it points
 * to and keeps the link; a dangling link or a directory is refused. Messages name
 * `path`, never the temporary. */

static sfc_status_t io_error(sfc_error_t *err, const char *path, const char *what, int e) {
  return sfc_error_set(err, SFC_ERR_IO, "%s: %s: %s", path, what, strerror(e));
}

static uint64_t temp_state;
static bool temp_seeded;

static uint64_t temp_random(void) {
  if (!temp_seeded) {
    struct timespec a = {0, 0}, b = {0, 0};
    clock_gettime(CLOCK_REALTIME, &a);
    clock_gettime(CLOCK_MONOTONIC, &b);
    int local = 0;
    temp_state = (uint64_t)a.tv_sec * 1000000007u ^ (uint64_t)a.tv_nsec ^
                 (uint64_t)b.tv_nsec << 21 ^ (uint64_t)getpid() << 40 ^ (uint64_t)(uintptr_t)&local;
    temp_seeded = true;
  }
  uint64_t z = (temp_state += 0x9E3779B97F4A7C15ull); /* splitmix64 */
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* The next temporary name for `name`: "DIR/.BASE.<16 hex>.tmp", malloc'ed. */
static char *temp_name(const char *name) {
  const char *slash = strrchr(name, '/'), *base = slash ? slash + 1 : name;
  int dir_len = slash ? (slash == name ? 1 : (int)(slash - name)) : 1;
  size_t cap = (size_t)dir_len + 240;
  char *t = malloc(cap);
  if (t)
    snprintf(t, cap, "%.*s/.%.200s.%016llx.tmp", dir_len, slash ? name : ".", base,
             (unsigned long long)temp_random());
  return t;
}

void sfcrt_torch_trace_test_seed_(uint64_t seed) {
  temp_state = seed;
  temp_seeded = true;
}

char *sfcrt_torch_trace_test_temp_name_(const char *path) {
  return temp_name(path);
}

static int write_fd(int fd, const char *p, size_t n) {
  while (n > 0) {
    ssize_t put = write(fd, p, n < ((size_t)1 << 30) ? n : ((size_t)1 << 30));
    if (put < 0 && errno == EINTR)
      continue;
    if (put <= 0) {
      if (put == 0)
        errno = EIO;
      return -1;
    }
    p += put;
    n -= (size_t)put;
  }
  return 0;
}

static sfc_status_t safe_write_file(const char *path, const char *data, size_t bytes,
                                    sfc_error_t *err) {
  if (!path || !*path)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "empty trace path");
  struct stat ls, st;
  char *target = NULL; /* a symlink's resolved regular file */
  if (lstat(path, &ls) != 0) {
    if (errno != ENOENT)
      return io_error(err, path, "cannot create", errno);
    if (path[strlen(path) - 1] == '/')
      return io_error(err, path, "cannot create", EISDIR);
  } else {
    st = ls;
    if (S_ISLNK(ls.st_mode) && stat(path, &st) != 0)
      return errno == ENOENT
                 ? sfc_error_set(err, SFC_ERR_IO,
                                 "%s: is a dangling symbolic link; not following it", path)
                 : io_error(err, path, "cannot open", errno);
    if (S_ISDIR(st.st_mode))
      return io_error(err, path, "cannot create", EISDIR);
    if (!S_ISREG(st.st_mode)) { /* /dev/null, a FIFO: in place, never replaced */
      int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
      if (fd < 0)
        return io_error(err, path, "cannot open", errno);
      struct stat now;
      if (fstat(fd, &now) != 0 || S_ISREG(now.st_mode)) {
        close(fd);
        return sfc_error_set(err, SFC_ERR_IO, "%s: changed while being opened; not writing", path);
      }
      int e = write_fd(fd, data, bytes) != 0 ? errno : 0;
      if (close(fd) != 0 && !e && errno != EINTR)
        e = errno;
      return e ? io_error(err, path, "write failed", e) : SFC_OK;
    }
    if (S_ISLNK(ls.st_mode) && !(target = realpath(path, NULL)))
      return io_error(err, path, "cannot resolve", errno);
  }
  const char *name = target ? target : path;
  char *tmp = NULL;
  int fd = -1;
  for (int i = 0; i < 100 && fd < 0; i++) {
    free(tmp);
    if (!(tmp = temp_name(name))) {
      free(target);
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0 && errno != EEXIST)
      break;
  }
  sfc_status_t s = SFC_OK;
  if (fd < 0) {
    s = io_error(err, path, "cannot create", errno);
  } else {
    if (write_fd(fd, data, bytes) != 0 || fsync(fd) != 0) {
      s = io_error(err, path, "write failed", errno);
      close(fd);
    } else if (close(fd) != 0) {
      s = io_error(err, path, "write failed", errno);
    } else if (rename(tmp, name) != 0) {
      s = io_error(err, path, "cannot replace", errno);
    }
    if (s != SFC_OK)
      unlink(tmp); /* never leave a partial trace behind */
  }
  free(tmp);
  free(target);
  return s;
}

sfc_status_t sfcrt_torch_trace_write_file(const char *path, const sfcrt_torch_block_t *blocks,
                                          size_t count, bool with_offsets, sfc_error_t *err) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  fputs(with_offsets ? "id,lower,upper,size,offset\n" : "id,lower,upper,size\n", f);
  for (size_t i = 0; i < count; i++) {
    fprintf(f, "%zu,%" PRIu64 ",%" PRIu64 ",%" PRIu64, i, blocks[i].lower, blocks[i].upper,
            blocks[i].size);
    if (with_offsets)
      fprintf(f, ",%" PRIu64, blocks[i].offset);
    fputc('\n', f);
  }
  int bad = ferror(f);
  if (fclose(f) != 0 || bad) {
    free(buf);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  sfc_status_t s = safe_write_file(path, buf, len, err);
  free(buf);
  return s;
}
