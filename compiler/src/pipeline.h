/* pipeline.h — run the compiler's passes over an IR (see pipeline.c). */
#ifndef SFC_PIPELINE_H
#define SFC_PIPELINE_H

#include <stdio.h>

#include "ir.h"

typedef struct sfc_compile_options {
  const char *dump_after; /* pass name, "all", or NULL: dump the IR after that pass */
  FILE *dump;             /* where dumps and -v timings go (stderr when NULL) */
  int verbose;            /* > 0: one timing line per pass */
  const char *stop_after; /* pass name: stop after it, before any fragmentation round
                             (NULL: run every pass); no window tuning then */
  int progress;           /* what the long parts are doing, on stderr: SFC_PROGRESS_* */
} sfc_compile_options_t;

enum {
  SFC_PROGRESS_OFF = 0,
  SFC_PROGRESS_LINE = 1, /* a line per candidate and round (a log) */
  SFC_PROGRESS_TTY = 2   /* one line rewritten in place ("\r"), erased at the end */
};

/* Runs every pass in order. On failure the message names the pass that failed
 * only for internal errors; input errors read as the pass wrote them. */
sfc_status_t sfc_compile_ir(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err);

/* Erases the terminal's status line (SFC_PROGRESS_TTY) so that a summary or an error
 * starts on a clean line; does nothing otherwise. */
void sfc_compile_progress_end(const sfc_compile_options_t *opt);

/* The window tuner's name for an SFC_PRIORITY_* value. */
const char *sfc_priority_name(unsigned priority);

/* Sets window: auto's candidate c (0 <= c < SFC_WINDOW_CANDIDATES): the eviction priority
 * and the timing mode the tuner tries (tests set them one by one). */
void sfc_window_candidate(sfc_ir_t *ir, int c);

/* The pass names, in order, for --dump-after and --help. */
const char *sfc_pass_name(size_t index); /* NULL past the last */

#endif /* SFC_PIPELINE_H */
