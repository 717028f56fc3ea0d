/* status.c — sfc_error_t helpers: set, prefix, clear, and status names. */
#include "sfc/status.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at s[0..n) (RFC 3629: no overlong
 * forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_length(const unsigned char *s, size_t n) {
  unsigned char c = s[0];
  size_t len = c < 0x80                 ? 1
               : c >= 0xc2 && c <= 0xdf ? 2
               : c >= 0xe0 && c <= 0xef ? 3
               : c >= 0xf0 && c <= 0xf4 ? 4
                                        : 0;
  if (len == 0 || len > n)
    return 0;
  /* The second byte's range depends on the first; the others are 80..BF. */
  unsigned char lo = c == 0xe0 ? 0xa0 : c == 0xf0 ? 0x90 : 0x80;
  unsigned char hi = c == 0xed ? 0x9f : c == 0xf4 ? 0x8f : 0xbf;
  if (len > 1 && (s[1] < lo || s[1] > hi))
    return 0;
  for (size_t k = 2; k < len; k++)
    if ((s[k] & 0xc0) != 0x80)
      return 0;
  return len;
}

const char *sfc_text_escape(const char *s, size_t len, size_t max_bytes, char *out, size_t cap) {
  if (cap == 0)
    return out;
  if (len == SIZE_MAX)
    len = strlen(s);
  const unsigned char *u = (const unsigned char *)s;
  size_t o = 0, i = 0;
  while (i < len) {
    char esc[8];
    const char *piece = esc;
    size_t n = 0, take = 1; /* bytes written, bytes of s consumed */
    size_t seq = utf8_length(u + i, len - i);
    if (i >= max_bytes) {
      piece = "...";
      n = 3;
      take = len - i;
    } else if (seq == 0 || u[i] < 0x20 || u[i] == 0x7f) {
      n = (size_t)snprintf(esc, sizeof esc, "\\x%02x", u[i]);
    } else if (seq == 2 && u[i] == 0xc2 && u[i + 1] < 0xa0) { /* C1: U+0080..U+009F */
      n = (size_t)snprintf(esc, sizeof esc, "\\u%04x", u[i + 1]);
      take = 2;
    } else {
      piece = s + i;
      n = take = seq;
    }
    if (o + n >= cap)
      break;
    memcpy(out + o, piece, n);
    o += n;
    i += take;
  }
  out[o] = '\0';
  return out;
}

const char *sfc_name_shown(const char *s, char *out) {
  return sfc_text_escape(s ? s : "", s ? strlen(s) : 0, SFC_NAME_SHOWN_MAX, out,
                         SFC_NAME_SHOWN_BYTES);
}

sfc_status_t sfc_error_set(sfc_error_t *err, sfc_status_t status, const char *fmt, ...) {
  if (err) {
    char raw[SFC_ERROR_MESSAGE_BYTES];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    /* One line, no terminal controls: a message never carries a newline or an escape
     * sequence from a name into a log. */
    sfc_text_escape(raw, strlen(raw), SIZE_MAX, err->message, sizeof err->message);
    err->status = status;
  }
  return status;
}

void sfc_error_prefix(sfc_error_t *err, const char *raw) {
  if (!err || !raw || !*raw)
    return;
  char prefix[SFC_ERROR_MESSAGE_BYTES]; /* a path with a newline stays on one line */
  sfc_text_escape(raw, strlen(raw), SIZE_MAX, prefix, sizeof prefix);
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
