/* sfc/status.h — the one status type of sfc, shared by the runtime and the compiler.
 *
 * Every fallible function returns an sfc_status_t (0 = SFC_OK) and, when it fails,
 * writes a one-line human-readable reason into a caller-provided sfc_error_t. The
 * error pointer may be NULL when the caller only wants the code. Nothing in sfc
 * prints, exits or aborts on an error: the caller decides what to do with it.
 *
 *   sfc_error_t err;
 *   if (sfcrt_plan_load_file("p.bin", NULL, &plan, &err) != SFC_OK)
 *     fprintf(stderr, "%s\n", err.message);
 *
 * Propagation inside sfc uses one macro, SFC_TRY(expr): return the status of expr
 * if it is not SFC_OK. The message was already written by the callee.
 */
#ifndef SFC_STATUS_H
#define SFC_STATUS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum sfc_status {
  SFC_OK = 0,
  SFC_ERR_INVALID_ARGUMENT = 1, /* the caller passed something impossible */
  SFC_ERR_BAD_INPUT = 2,        /* a graph, config, plan or CSV is malformed */
  SFC_ERR_VERSION = 3,          /* a file's format version is not supported */
  SFC_ERR_OUT_OF_MEMORY = 4,    /* a host allocation failed */
  SFC_ERR_IO = 5,               /* a file could not be opened, read or written */
  SFC_ERR_DOES_NOT_FIT = 6,     /* the plan needs more memory than the budget */
  SFC_ERR_VERIFY = 7,           /* a plan violates an invariant */
  SFC_ERR_STATE = 8,            /* an API call came in the wrong order */
  SFC_ERR_DEVICE = 9,           /* a device backend call failed */
  SFC_ERR_UNAVAILABLE = 10,     /* a backend is missing (no driver, no device) */
  SFC_ERR_INTEGRITY = 11,       /* replay caught corrupted tensor contents */
  SFC_ERR_LIMIT = 12,           /* a size or count exceeds a documented limit */
  SFC_ERR_INTERNAL = 13,        /* a bug in sfc: please report it */
} sfc_status_t;

#define SFC_ERROR_MESSAGE_BYTES 512

typedef struct sfc_error {
  sfc_status_t status;
  char message[SFC_ERROR_MESSAGE_BYTES]; /* NUL-terminated, one line, no trailing newline */
} sfc_error_t;

/* Writes status and a printf-style message into err (if err is not NULL) and
 * returns status, so a failure site reads `return sfc_error_set(err, ...);`. The
 * message is escaped with sfc_text_escape: a name or a quote from a file can never
 * carry a newline or a terminal control sequence into a log. */
sfc_status_t sfc_error_set(sfc_error_t *err, sfc_status_t status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Prefixes err->message with "prefix: " (e.g. a file name) keeping it one line. */
void sfc_error_prefix(sfc_error_t *err, const char *prefix);

/* Copies s[len] (len SIZE_MAX: up to its NUL) into out[cap] so that it is safe in a one-line
 * message or on a terminal: well-formed UTF-8 stays as it is, except C0 controls (U+0000..U+001F)
 * and DEL, shown as \xNN, and C1 controls (U+0080..U+009F), shown as \u00NN; a byte
 * that is not part of well-formed UTF-8 is shown as \xNN. At most max_bytes of s are
 * copied ("..." marks the cut); the copy also stops, without "...", where out is full.
 * NUL-terminated when cap > 0; returns out. Every sfc_error_set message goes through
 * it, and so does every name a summary prints. */
const char *sfc_text_escape(const char *s, size_t len, size_t max_bytes, char *out, size_t cap);

/* A name (any NUL-terminated text; NULL shows as "") for a summary line or a table:
 * sfc_text_escape of its first SFC_NAME_SHOWN_MAX bytes into out[SFC_NAME_SHOWN_BYTES]. */
#define SFC_NAME_SHOWN_MAX   160
#define SFC_NAME_SHOWN_BYTES (4 * SFC_NAME_SHOWN_MAX + 8)
const char *sfc_name_shown(const char *s, char *out);

/* Resets err to SFC_OK with an empty message. */
void sfc_error_clear(sfc_error_t *err);

/* A stable lowercase name for a status code ("bad-input", "does-not-fit", ...). */
const char *sfc_status_name(sfc_status_t status);

#define SFC_TRY(expr)                                                                              \
  do {                                                                                             \
    sfc_status_t sfc_try_status_ = (expr);                                                         \
    if (sfc_try_status_ != SFC_OK)                                                                 \
      return sfc_try_status_;                                                                      \
  } while (0)

#ifdef __cplusplus
}
#endif

#endif /* SFC_STATUS_H */
