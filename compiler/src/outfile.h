/* outfile.h — the one way the compiler writes a file: `sfc compile -o`, `sfc pack -o`
 * and `--svg`, `sfc inspect --svg` (docs/cli.md#output-files).
 *
 *   const char *inputs[] = {graph, config};
 *   SFC_TRY(sfc_outfile_check(out, inputs, 2, err));   // before any expensive work
 *   ...
 *   SFC_TRY(sfc_outfile_write(out, data, bytes, err)); // or begin / fprintf / commit
 *
 * What a write does, by what the path names:
 *  - nothing, or a regular file: the bytes go to a fresh temporary file in the same
 *    directory, created with O_CREAT|O_EXCL|O_NOFOLLOW and mode 0666 & ~umask (as a
 *    plain create) under an unpredictable name; a file or symlink already there makes
 *    the create fail and another name is tried, so no planted link is ever followed.
 *    It is flushed, fsync'ed and renamed over the path; every failure removes it.
 *  - an existing file that is not regular (/dev/null, a FIFO, a character device):
 *    opened for writing in place (no truncation, no rename), never replaced.
 *  - a symbolic link to a regular file: the file it points to is replaced as above
 *    (the temporary goes in that file's directory) and the link itself is kept; a
 *    link to anything else is written through in place; a dangling link is refused.
 *  - a directory: refused.
 * Every message names the path as given, never the temporary:
 *   "out.plan: cannot create: Permission denied", "/dev/full: write failed: No space
 *   left on device". Errors are SFC_ERR_IO, SFC_ERR_INVALID_ARGUMENT (same-file
 *   refusals) or SFC_ERR_OUT_OF_MEMORY.
 */
#ifndef SFC_OUTFILE_H
#define SFC_OUTFILE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sfc/status.h"

/* Refuses (SFC_ERR_INVALID_ARGUMENT, "OUT: is the same file as the input IN; not
 * overwriting it") when `path` is the same regular file as one of inputs[0..n) —
 * compared by (st_dev, st_ino), so hard links and symlinks count; NULL inputs are
 * skipped. Then checks that the path can be written (its directory exists and is
 * writable, or an existing non-regular file is writable) without creating anything,
 * so a command can fail before its work. */
sfc_status_t sfc_outfile_check(const char *path, const char *const *inputs, size_t n,
                               sfc_error_t *err);

/* Refuses (SFC_ERR_INVALID_ARGUMENT) when two outputs name the same file: the same
 * existing regular file, or the same name in the same directory when it does not
 * exist yet. Two names of one device or FIFO are allowed. */
sfc_status_t sfc_outfile_check_distinct(const char *a, const char *b, sfc_error_t *err);

/* Writes bytes[0..n) to path by the rules above. */
sfc_status_t sfc_outfile_write(const char *path, const void *data, size_t bytes, sfc_error_t *err);

/* A stream in memory for writers that print (SVG, CSV): begin, print to o->f,
 * then commit (writes by sfc_outfile_write) or abort. */
typedef struct sfc_outfile {
  FILE *f;          /* print here */
  const char *path; /* as given */
  char *buf_;       /* private */
  size_t bytes_;    /* private */
} sfc_outfile_t;

sfc_status_t sfc_outfile_begin(sfc_outfile_t *o, const char *path, sfc_error_t *err);
sfc_status_t sfc_outfile_commit(sfc_outfile_t *o, sfc_error_t *err); /* always frees */
void sfc_outfile_abort(sfc_outfile_t *o);

/* For tests only: restart the generator of temporary names from seed, and return the
 * next name a write to `name` (a path without links) would try, malloc'ed; a write
 * after the same seed tries the same names in the same order (tests plant links there). */
void sfc_outfile_test_seed(uint64_t seed);
char *sfc_outfile_test_temp_name(const char *name);

#endif /* SFC_OUTFILE_H */
