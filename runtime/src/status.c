/* status.c — sfc_error_t helpers: set, prefix, clear, and status names. */
#include "sfc/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

sfc_status_t sfc_error_set(sfc_error_t *err, sfc_status_t status, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    /* One line: a message never carries a newline into a log. */
    for (char *p = err->message; *p; p++)
      if (*p == '\n' || *p == '\r')
        *p = ' ';
    err->status = status;
  }
  return status;
}

void sfc_error_prefix(sfc_error_t *err, const char *prefix) {
  if (!err || !prefix || !*prefix)
    return;
  size_t plen = strlen(prefix), cap = sizeof err->message;
  size_t mlen = strnlen(err->message, cap - 1);
  if (plen + 2 >= cap)
    plen = cap - 3;
  if (plen + 2 + mlen >= cap)
    mlen = cap - 1 - plen - 2; /* keep the prefix, cut the tail of the message */
  memmove(err->message + plen + 2, err->message, mlen);
  memcpy(err->message, prefix, plen);
  err->message[plen] = ':';
  err->message[plen + 1] = ' ';
  err->message[plen + 2 + mlen] = '\0';
}

void sfc_error_clear(sfc_error_t *err) {
  if (err) {
    err->status = SFC_OK;
    err->message[0] = '\0';
  }
}

const char *sfc_status_name(sfc_status_t status) {
  switch (status) {
    case SFC_OK:
      return "ok";
    case SFC_ERR_INVALID_ARGUMENT:
      return "invalid-argument";
    case SFC_ERR_BAD_INPUT:
      return "bad-input";
    case SFC_ERR_VERSION:
      return "unsupported-version";
    case SFC_ERR_OUT_OF_MEMORY:
      return "out-of-memory";
    case SFC_ERR_IO:
      return "io";
    case SFC_ERR_DOES_NOT_FIT:
      return "does-not-fit";
    case SFC_ERR_VERIFY:
      return "verify-failed";
    case SFC_ERR_STATE:
      return "bad-state";
    case SFC_ERR_DEVICE:
      return "device";
    case SFC_ERR_UNAVAILABLE:
      return "unavailable";
    case SFC_ERR_INTEGRITY:
      return "integrity";
    case SFC_ERR_LIMIT:
      return "limit";
    case SFC_ERR_INTERNAL:
      return "internal";
  }
  return "unknown";
}
