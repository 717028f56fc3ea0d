/* units.c — parse and print sizes, rates and durations with units (see units.h).
 *
 * How: one scanner reads the number of every form, "12", "1.5", "25e9", ".5", into
 * an exact decimal: a mantissa M of at most 19 significant digits and a power of ten
 * E, so the text means M * 10^E. The unit after it (an optional space between) is
 * looked up in a small table of (base, exponent) pairs: decimal units are powers of
 * ten, binary units powers of two.
 *
 *  - Sizes are computed in integers, never through a double: M * 10^E * 2^k must be a
 *    whole number of bytes <= 2^60 ("1.5GiB" is, "1.3B" is not).
 *  - Rates and durations become doubles: the decimal part goes through strtod once
 *    (correctly rounded) and a binary unit scales by ldexp (exact), so a value has
 *    exactly one double for each text. A duration without a unit is seconds ("60").
 *
 * The *_exact/rate/duration formatters try every unit and keep the shortest text
 * that this file parses back to the very same value; "%.17g" in the base unit is
 * the fallback that always round-trips.
 */
#include "units.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SIZE_LIMIT     ((uint64_t)1 << 60)
#define MAX_SIG_DIGITS 19
#define QUOTE_CHARS    40 /* input text quoted in a reason is cut after this many */

/* An exact decimal number: m * 10^e. */
typedef struct decimal {
  uint64_t m;
  int e;
} decimal_t;

typedef struct unit {
  const char *name;
  int base;     /* 10 or 2 */
  int exponent; /* value of one unit = base^exponent (bytes or seconds) */
} unit_t;

static const unit_t size_units[] = {
    {"B", 10, 0},   {"kB", 10, 3},  {"KB", 10, 3},  {"MB", 10, 6},  {"GB", 10, 9},  {"TB", 10, 12},
    {"PB", 10, 15}, {"KiB", 2, 10}, {"MiB", 2, 20}, {"GiB", 2, 30}, {"TiB", 2, 40}, {"PiB", 2, 50},
};
#define SIZE_UNIT_LIST "B, kB, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB"
#define RATE_UNIT_LIST "B/s, kB/s, KB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s"

static const unit_t time_units[] = {
    {"s", 10, 0},          {"ms", 10, -3},
    {"us", 10, -6},        {"\xc2\xb5s", 10, -6}, /* U+00B5 MICRO SIGN */
    {"\xce\xbcs", 10, -6},                        /* U+03BC GREEK SMALL LETTER MU */
    {"ns", 10, -9},
};
#define TIME_UNIT_LIST "ns, us, ms, s"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* The text as it may appear in a reason: cut after QUOTE_CHARS with "...". */
static const char *quoted(const char *text, char *buf, size_t buf_bytes) {
  size_t n = strlen(text);
  if (n <= QUOTE_CHARS)
    snprintf(buf, buf_bytes, "%s", text);
  else
    snprintf(buf, buf_bytes, "%.*s...", QUOTE_CHARS, text);
  return buf;
}

#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static bool
fail(char *why, size_t why_bytes, const char *fmt, ...) {
  if (why && why_bytes) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, why_bytes, fmt, ap);
    va_end(ap);
  }
  return false;
}

static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

/* Scans a non-negative decimal number at the start of s. On success *out_end points
 * after it. Returns 0 on success, 1 when there is no number, 2 when it has more than
 * MAX_SIG_DIGITS significant digits. */
static int scan_decimal(const char *s, decimal_t *out, const char **out_end) {
  const char *p = s;
  const char *int_begin = p;
  while (is_digit(*p))
    p++;
  const char *int_end = p;
  const char *frac_begin = p, *frac_end = p;
  if (*p == '.') {
    frac_begin = ++p;
    while (is_digit(*p))
      p++;
    frac_end = p;
  }
  size_t n_int = (size_t)(int_end - int_begin), n_frac = (size_t)(frac_end - frac_begin);
  if (n_int + n_frac == 0)
    return 1;
  long exp10 = 0;
  if (*p == 'e' || *p == 'E') {
    const char *q = p + 1;
    int sign = 1;
    if (*q == '+' || *q == '-')
      sign = *q++ == '-' ? -1 : 1;
    if (is_digit(*q)) {
      while (is_digit(*q)) {
        if (exp10 < 100000)
          exp10 = exp10 * 10 + (*q - '0');
        q++;
      }
      exp10 *= sign;
      p = q;
    } /* else: "1E" is the number 1 and the unit "E" */
  }
  /* The digits as one sequence d[0..n): integer digits then fraction digits; digit i
   * is worth 10^(n_int - 1 - i). Keep the span between the first and last non-zero. */
  size_t n = n_int + n_frac, first = n, last = 0;
  for (size_t i = 0; i < n; i++) {
    char c = i < n_int ? int_begin[i] : frac_begin[i - n_int];
    if (c != '0') {
      if (first == n)
        first = i;
      last = i;
    }
  }
  decimal_t d = {0, 0};
  if (first < n) {
    if (last - first + 1 > MAX_SIG_DIGITS)
      return 2;
    for (size_t i = first; i <= last; i++)
      d.m = d.m * 10 + (uint64_t)((i < n_int ? int_begin[i] : frac_begin[i - n_int]) - '0');
    d.e = (int)((long)n_int - 1 - (long)last + exp10);
  }
  *out = d;
  *out_end = p;
  return 0;
}

/* Splits text into number and unit. Reports empty, negative and non-numbers. */
static bool split_number(const char *text, const char *what, decimal_t *out, const char **unit,
                         bool *spaced, char *why, size_t why_bytes) {
  char q[QUOTE_CHARS + 4];
  if (!text || !*text)
    return fail(why, why_bytes, "empty %s", what);
  if (text[0] == '-')
    return fail(why, why_bytes, "negative %s '%s'", what, quoted(text, q, sizeof q));
  const char *end;
  int rc = scan_decimal(text, out, &end);
  if (rc == 1)
    return fail(why, why_bytes, "expected a number in '%s'", quoted(text, q, sizeof q));
  if (rc == 2)
    return fail(why, why_bytes, "too many significant digits in '%s'", quoted(text, q, sizeof q));
  *spaced = false;
  while (*end == ' ') {
    end++;
    *spaced = true;
  }
  *unit = end;
  return true;
}

static const unit_t *find_unit(const unit_t *units, size_t count, const char *name, size_t len) {
  for (size_t i = 0; i < count; i++)
    if (strlen(units[i].name) == len && memcmp(units[i].name, name, len) == 0)
      return &units[i];
  return NULL;
}

/* m * 10^e as a double, correctly rounded (strtod does the rounding once). */
static double decimal_to_double(decimal_t d) {
  if (d.m == 0)
    return 0.0;
  char buf[64];
  snprintf(buf, sizeof buf, "%" PRIu64 "e%d", d.m, d.e);
  return strtod(buf, NULL);
}

static bool unknown_unit(const char *unit, const char *text, const char *list, char *why,
                         size_t why_bytes) {
  char q1[QUOTE_CHARS + 4], q2[QUOTE_CHARS + 4];
  if (why && why_bytes)
    snprintf(why, why_bytes, "unknown unit '%s' in '%s' (%s)", quoted(unit, q1, sizeof q1),
             quoted(text, q2, sizeof q2), list);
  return false;
}

bool sfc_parse_size(const char *text, uint64_t *out_bytes, char *why, size_t why_bytes) {
  char q[QUOTE_CHARS + 4];
  decimal_t d;
  const char *unit_text;
  bool spaced;
  if (!split_number(text, "size", &d, &unit_text, &spaced, why, why_bytes))
    return false;
  const unit_t *u = &size_units[0]; /* plain number: bytes */
  if (*unit_text || spaced) {
    u = find_unit(size_units, COUNT(size_units), unit_text, strlen(unit_text));
    if (!u)
      return unknown_unit(unit_text, text, "sizes take " SIZE_UNIT_LIST, why, why_bytes);
  }
  uint64_t v = d.m;
  int e10 = d.e + (u->base == 10 ? u->exponent : 0);
  int e2 = u->base == 2 ? u->exponent : 0;
  if (v != 0) {
    /* Divide out negative powers of ten: 10^-n = 5^-n * 2^-n. */
    for (; e10 < 0; e10++) {
      if (v % 5 != 0)
        return fail(why, why_bytes, "'%s' is not a whole number of bytes",
                    quoted(text, q, sizeof q));
      v /= 5;
      e2--;
    }
    for (; e10 > 0; e10--) {
      if (v > SIZE_LIMIT / 10)
        return fail(why, why_bytes, "size '%s' is larger than 2^60 bytes",
                    quoted(text, q, sizeof q));
      v *= 10;
    }
    for (; e2 < 0; e2++) {
      if (v % 2 != 0)
        return fail(why, why_bytes, "'%s' is not a whole number of bytes",
                    quoted(text, q, sizeof q));
      v /= 2;
    }
    for (; e2 > 0; e2--) {
      if (v > SIZE_LIMIT / 2)
        return fail(why, why_bytes, "size '%s' is larger than 2^60 bytes",
                    quoted(text, q, sizeof q));
      v *= 2;
    }
    if (v > SIZE_LIMIT)
      return fail(why, why_bytes, "size '%s' is larger than 2^60 bytes", quoted(text, q, sizeof q));
  }
  *out_bytes = v;
  return true;
}

bool sfc_parse_rate(const char *text, double *out_bytes_per_s, char *why, size_t why_bytes) {
  char q[QUOTE_CHARS + 4];
  decimal_t d;
  const char *unit_text;
  bool spaced;
  if (!split_number(text, "rate", &d, &unit_text, &spaced, why, why_bytes))
    return false;
  size_t len = strlen(unit_text);
  const unit_t *u = NULL;
  if (len > 2 && strcmp(unit_text + len - 2, "/s") == 0)
    u = find_unit(size_units, COUNT(size_units), unit_text, len - 2);
  if (!u) {
    if (find_unit(size_units, COUNT(size_units), unit_text, len) || len == 0)
      return fail(why, why_bytes, "missing '/s' in '%s' (rates take %s)", quoted(text, q, sizeof q),
                  RATE_UNIT_LIST);
    return unknown_unit(unit_text, text, "rates take " RATE_UNIT_LIST, why, why_bytes);
  }
  if (u->base == 10)
    d.e += u->exponent;
  double v = decimal_to_double(d);
  if (u->base == 2)
    v = ldexp(v, u->exponent);
  if (!isfinite(v))
    return fail(why, why_bytes, "rate '%s' is too large", quoted(text, q, sizeof q));
  *out_bytes_per_s = v;
  return true;
}

bool sfc_parse_duration(const char *text, double *out_seconds, char *why, size_t why_bytes) {
  char q[QUOTE_CHARS + 4];
  decimal_t d;
  const char *unit_text;
  bool spaced;
  if (!split_number(text, "duration", &d, &unit_text, &spaced, why, why_bytes))
    return false;
  const unit_t *u = &time_units[0]; /* a plain number is seconds: "60", "0", "1.5" */
  if (*unit_text || spaced)
    u = find_unit(time_units, COUNT(time_units), unit_text, strlen(unit_text));
  if (!u) {
    if (!*unit_text)
      return fail(why, why_bytes, "missing unit in '%s' (durations take %s)",
                  quoted(text, q, sizeof q), TIME_UNIT_LIST);
    return unknown_unit(unit_text, text, "durations take " TIME_UNIT_LIST, why, why_bytes);
  }
  d.e += u->exponent;
  double v = decimal_to_double(d);
  if (!isfinite(v))
    return fail(why, why_bytes, "duration '%s' is too large", quoted(text, q, sizeof q));
  *out_seconds = v;
  return true;
}

const char *sfc_format_size(uint64_t bytes, char *buf, size_t buf_bytes) {
  static const char *names[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (bytes < 1024) {
    snprintf(buf, buf_bytes, "%" PRIu64 " B", bytes);
    return buf;
  }
  size_t i = 0;
  double v = (double)bytes;
  while (v >= 1024.0 && i + 1 < COUNT(names)) {
    v /= 1024.0;
    i++;
  }
  snprintf(buf, buf_bytes, "%.2f %s", v, names[i]);
  return buf;
}

const char *sfc_format_size_exact(uint64_t bytes, char *buf, size_t buf_bytes) {
  /* Every unit that divides the value; the smallest mantissa gives the shortest text.
   * Decimal units are tried first, so on a tie (never in practice) KB beats KiB. */
  uint64_t best_m = bytes;
  const char *best_u = "B";
  for (size_t i = 1; i < COUNT(size_units); i++) {
    const unit_t *u = &size_units[i];
    if (strcmp(u->name, "kB") == 0)
      continue; /* print KB */
    uint64_t one = 1;
    for (int k = 0; k < u->exponent; k++)
      one *= (uint64_t)u->base;
    if (bytes != 0 && bytes % one == 0 && bytes / one < best_m) {
      best_m = bytes / one;
      best_u = u->name;
    }
  }
  snprintf(buf, buf_bytes, "%" PRIu64 "%s", best_m, best_u);
  return buf;
}

/* The shortest decimal digits of v >= 0 that strtod reads back as v:
 * v = 0.DIGITS * 10^point ("55", 11 for 55e9). */
static void shortest_digits(double v, char *digits, size_t digits_bytes, int *point) {
  char buf[48];
  for (int p = 0; p <= 17; p++) {
    snprintf(buf, sizeof buf, "%.*e", p, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  size_t n = 0;
  const char *s = buf;
  for (; *s && *s != 'e'; s++)
    if (is_digit(*s) && n + 1 < digits_bytes)
      digits[n++] = *s;
  while (n > 1 && digits[n - 1] == '0')
    n--;
  digits[n] = '\0';
  *point = (*s == 'e' ? atoi(s + 1) : 0) + 1;
}

/* 0.DIGITS * 10^point in the shorter of positional ("0.7", "1500") and scientific
 * ("6.7e13") notation; positional on a tie. */
static void render_decimal(const char *digits, int point, char *buf, size_t buf_bytes) {
  int n = (int)strlen(digits);
  char pos[96] = "", sci[64];
  if (point >= n && point - n <= 24) { /* 1500 */
    snprintf(pos, sizeof pos, "%s", digits);
    for (int i = n; i < point; i++)
      pos[i] = '0';
    pos[point] = '\0';
  } else if (point > 0 && point < n) { /* 1.5 */
    snprintf(pos, sizeof pos, "%.*s.%s", point, digits, digits + point);
  } else if (point <= 0 && point >= -24) { /* 0.015 */
    int z = -point;
    memcpy(pos, "0.", 2);
    memset(pos + 2, '0', (size_t)z);
    snprintf(pos + 2 + z, sizeof pos - 2 - (size_t)z, "%s", digits);
  }
  if (n > 1)
    snprintf(sci, sizeof sci, "%c.%se%d", digits[0], digits + 1, point - 1);
  else
    snprintf(sci, sizeof sci, "%se%d", digits, point - 1);
  snprintf(buf, buf_bytes, "%s", pos[0] && strlen(pos) <= strlen(sci) ? pos : sci);
}

typedef bool (*parse_double_fn)(const char *, double *, char *, size_t);

/* Tries every unit and keeps the shortest text that parses back to exactly `value`
 * (the check is cheap and makes the promise of units.h hold by construction); suffix
 * is "/s" for rates, "" for durations. */
static const char *format_double(double value, const unit_t *units, size_t count,
                                 const char *suffix, parse_double_fn parse, char *buf,
                                 size_t buf_bytes) {
  char best[96] = "", cand[96], mant[80], digits[32], value_digits[32];
  int point, value_point;
  if (isfinite(value) && value >= 0) {
    shortest_digits(value, value_digits, sizeof value_digits, &value_point);
    for (size_t i = 0; i < count; i++) {
      const unit_t *u = &units[i];
      /* print KB, not kB, and us, not the micro signs */
      if (strcmp(u->name, "kB") == 0 || (unsigned char)u->name[0] >= 0x80)
        continue;
      if (u->base == 10) {
        /* a decimal unit only moves the decimal point: exact */
        render_decimal(value_digits, value_point - u->exponent, mant, sizeof mant);
      } else {
        /* a binary unit divides by a power of two: exact unless it underflows */
        shortest_digits(ldexp(value, -u->exponent), digits, sizeof digits, &point);
        render_decimal(digits, point, mant, sizeof mant);
      }
      snprintf(cand, sizeof cand, "%s%s%s", mant, u->name, suffix);
      double back = -1;
      if (parse(cand, &back, NULL, 0) && back == value && (!best[0] || strlen(cand) < strlen(best)))
        snprintf(best, sizeof best, "%s", cand);
    }
  }
  if (!best[0]) /* not finite or negative: nothing parses back to it */
    snprintf(best, sizeof best, "%.17g%s%s", value, units[0].name, suffix);
  snprintf(buf, buf_bytes, "%s", best);
  return buf;
}

const char *sfc_format_rate(double bytes_per_s, char *buf, size_t buf_bytes) {
  return format_double(bytes_per_s, size_units, COUNT(size_units), "/s", sfc_parse_rate, buf,
                       buf_bytes);
}

const char *sfc_format_duration(double seconds, char *buf, size_t buf_bytes) {
  return format_double(seconds, time_units, COUNT(time_units), "", sfc_parse_duration, buf,
                       buf_bytes);
}

double sfc_clock_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
