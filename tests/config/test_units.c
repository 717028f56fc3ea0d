/* test_units.c — sizes, rates and durations (units.h): every unit form, good and bad,
 * from tables; then the property that the exact formatters round-trip,
 * parse(format(x)) == x, over hand-picked edge values and ~60k pseudo-random ones. */
#include <float.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "units.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)
#define GiB (1ull << 30)
#define TiB (1ull << 40)
#define PiB (1ull << 50)

typedef struct {
  const char *text;
  uint64_t bytes;
} good_size_t;

typedef struct {
  const char *text;
  double value;
} good_double_t;

typedef struct {
  const char *text;
  const char *why; /* the exact reason */
} bad_t;

#define SIZE_UNITS "(sizes take B, kB, KB, MB, GB, TB, PB, KiB, MiB, GiB, TiB, PiB)"
#define RATE_UNITS                                                                                 \
  "(rates take B/s, kB/s, KB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s)"

static void test_size_good(void) {
  static const good_size_t cases[] = {
      {"0", 0},
      {"256", 256},
      {"00016", 16},
      {"1B", 1},
      {"16GiB", 16 * GiB},
      {"16 GiB", 16 * GiB},
      {"16  GiB", 16 * GiB},
      {"1.5GiB", 3 * GiB / 2},
      {"1.5GB", 1500000000},
      {"4KiB", 4 * KiB},
      {"2MB", 2000000},
      {"1kB", 1000},
      {"1KB", 1000},
      {"3MiB", 3 * MiB},
      {"141GB", 141000000000ull},
      {"2TB", 2000000000000ull},
      {"2TiB", 2 * TiB},
      {"1PB", 1000000000000000ull},
      {"3PiB", 3 * PiB},
      {"1024PiB", 1ull << 60}, /* the limit itself */
      {"1152921504606846976", 1ull << 60},
      {"1e3", 1000},
      {"1E3", 1000},
      {"1e9B", 1000000000},
      {"2.5e-3MB", 2500},
      {"0.5KiB", 512},
      {".5KiB", 512},
      {"1.KiB", 1024},
      {"0.001KB", 1},
      {"0.0009765625KiB", 1}, /* 2^-10 KiB */
      {"1.000000000000000000000000GiB", GiB},
      {"0GiB", 0},
      {"0.0", 0},
      {"1000000000000000000000000e-24KB", 1000},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got = 12345;
    char why[256] = "";
    bool ok = sfc_parse_size(cases[i].text, &got, why, sizeof why);
    if (!ok)
      fprintf(stderr, "  '%s': %s\n", cases[i].text, why);
    CHECK(ok);
    CHECK_EQ_U64(got, cases[i].bytes);
  }
}

static void test_size_bad(void) {
  static const bad_t cases[] = {
      {"", "empty size"},
      {"-1GiB", "negative size '-1GiB'"},
      {"-0", "negative size '-0'"},
      {"16GBs", "unknown unit 'GBs' in '16GBs' " SIZE_UNITS},
      {"16gib", "unknown unit 'gib' in '16gib' " SIZE_UNITS},
      {"16 GiB ", "unknown unit 'GiB ' in '16 GiB ' " SIZE_UNITS},
      {"16GB/s", "unknown unit 'GB/s' in '16GB/s' " SIZE_UNITS},
      {"0x10", "unknown unit 'x10' in '0x10' " SIZE_UNITS},
      {"1.2.3", "unknown unit '.3' in '1.2.3' " SIZE_UNITS},
      {"1e", "unknown unit 'e' in '1e' " SIZE_UNITS},
      {"1EiB", "unknown unit 'EiB' in '1EiB' " SIZE_UNITS},
      {"1.3B", "'1.3B' is not a whole number of bytes"},
      {"1.5", "'1.5' is not a whole number of bytes"},
      {"0.3KiB", "'0.3KiB' is not a whole number of bytes"},
      {"1e-1", "'1e-1' is not a whole number of bytes"},
      {"1025PiB", "size '1025PiB' is larger than 2^60 bytes"},
      {"1152921504606846977", "size '1152921504606846977' is larger than 2^60 bytes"},
      {"2000PB", "size '2000PB' is larger than 2^60 bytes"},
      {"1e400", "size '1e400' is larger than 2^60 bytes"},
      {"1e99999999999", "size '1e99999999999' is larger than 2^60 bytes"},
      {"12345678901234567891", "too many significant digits in '12345678901234567891'"},
      {"nan", "expected a number in 'nan'"},
      {"inf", "expected a number in 'inf'"},
      {"GiB", "expected a number in 'GiB'"},
      {"+5", "expected a number in '+5'"},
      {" 5", "expected a number in ' 5'"},
      {".", "expected a number in '.'"},
      {"abcdefghijabcdefghijabcdefghijabcdefghijXYZ",
       "expected a number in 'abcdefghijabcdefghijabcdefghijabcdefghij...'"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint64_t got = 777;
    char why[256] = "";
    CHECK(!sfc_parse_size(cases[i].text, &got, why, sizeof why));
    CHECK_STR_EQ(why, cases[i].why);
    CHECK_EQ_U64(got, 777); /* untouched on failure */
  }
  uint64_t v;
  CHECK(!sfc_parse_size("x", &v, NULL, 0)); /* no reason buffer is fine */
}

static void test_rate(void) {
  static const good_double_t good[] = {
      {"55GB/s", 55e9},
      {"25.6 GiB/s", 25.6 * (double)GiB},
      {"1e9B/s", 1e9},
      {"0B/s", 0},
      {"1.5kB/s", 1500},
      {"100KB/s", 1e5},
      {"12MiB/s", 12.0 * (double)MiB},
      {"6.5GB/s", 6.5e9},
      {"1TB/s", 1e12},
      {"2TiB/s", 2.0 * (double)TiB},
      {"1PB/s", 1e15},
      {"1PiB/s", (double)PiB},
      {"0.1GB/s", 1e8},
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    double got = -1;
    char why[256] = "";
    CHECK(sfc_parse_rate(good[i].text, &got, why, sizeof why));
    CHECK(got == good[i].value);
  }
  static const bad_t bad[] = {
      {"", "empty rate"},
      {"-1GB/s", "negative rate '-1GB/s'"},
      {"55GB", "missing '/s' in '55GB' " RATE_UNITS},
      {"55", "missing '/s' in '55' " RATE_UNITS},
      {"55 ", "missing '/s' in '55 ' " RATE_UNITS},
      {"55Gb/s", "unknown unit 'Gb/s' in '55Gb/s' " RATE_UNITS},
      {"55GB/sec", "unknown unit 'GB/sec' in '55GB/sec' " RATE_UNITS},
      {"55/s", "unknown unit '/s' in '55/s' " RATE_UNITS},
      {"55GBps", "unknown unit 'GBps' in '55GBps' " RATE_UNITS},
      {"1e999GB/s", "rate '1e999GB/s' is too large"},
      {"1e308PiB/s", "rate '1e308PiB/s' is too large"},
      {"/s", "expected a number in '/s'"},
      {"inf B/s", "expected a number in 'inf B/s'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double got = -7;
    char why[256] = "";
    CHECK(!sfc_parse_rate(bad[i].text, &got, why, sizeof why));
    CHECK_STR_EQ(why, bad[i].why);
    CHECK(got == -7);
  }
}

static void test_duration(void) {
  static const good_double_t good[] = {
      {"10us", 10e-6},
      {"10 us", 10e-6},
      {"10\xc2\xb5s", 10e-6},
      {"10\xce\xbcs", 10e-6},
      {"1.5ms", 1.5e-3},
      {"2s", 2},
      {"250ns", 250e-9},
      {"0", 0},
      {"0.0", 0},
      {"0s", 0},
      {"1e-3s", 1e-3},
      {"3600s", 3600},
      {"0.000001s", 1e-6},
      {"5", 5},
      {"60", 60},
      {"1.5", 1.5},
      {"2.5e-3", 2.5e-3}, /* a plain number is seconds */
  };
  for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
    double got = -1;
    char why[256] = "";
    CHECK(sfc_parse_duration(good[i].text, &got, why, sizeof why));
    CHECK(got == good[i].value);
  }
  static const bad_t bad[] = {
      {"", "empty duration"},
      {"0 ", "missing unit in '0 ' (durations take ns, us, ms, s)"},
      {"5 ", "missing unit in '5 ' (durations take ns, us, ms, s)"},
      {"1e999", "duration '1e999' is too large"},
      {"10usec", "unknown unit 'usec' in '10usec' (durations take ns, us, ms, s)"},
      {"1 min", "unknown unit 'min' in '1 min' (durations take ns, us, ms, s)"},
      {"1h", "unknown unit 'h' in '1h' (durations take ns, us, ms, s)"},
      {"10S", "unknown unit 'S' in '10S' (durations take ns, us, ms, s)"},
      {"-1s", "negative duration '-1s'"},
      {"1e999s", "duration '1e999s' is too large"},
      {"s", "expected a number in 's'"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    double got = -7;
    char why[256] = "";
    CHECK(!sfc_parse_duration(bad[i].text, &got, why, sizeof why));
    CHECK_STR_EQ(why, bad[i].why);
    CHECK(got == -7);
  }
}

static void test_format_forms(void) {
  char buf[64];
  CHECK_STR_EQ(sfc_format_size(0, buf, sizeof buf), "0 B");
  CHECK_STR_EQ(sfc_format_size(512, buf, sizeof buf), "512 B");
  CHECK_STR_EQ(sfc_format_size(1536, buf, sizeof buf), "1.50 KiB");
  CHECK_STR_EQ(sfc_format_size(16 * GiB, buf, sizeof buf), "16.00 GiB");
  CHECK_STR_EQ(sfc_format_size(1ull << 60, buf, sizeof buf), "1.00 EiB");
  CHECK_STR_EQ(sfc_format_size(UINT64_MAX, buf, sizeof buf), "16.00 EiB");

  CHECK_STR_EQ(sfc_format_size_exact(0, buf, sizeof buf), "0B");
  CHECK_STR_EQ(sfc_format_size_exact(256, buf, sizeof buf), "256B");
  CHECK_STR_EQ(sfc_format_size_exact(1000, buf, sizeof buf), "1KB");
  CHECK_STR_EQ(sfc_format_size_exact(1024, buf, sizeof buf), "1KiB");
  CHECK_STR_EQ(sfc_format_size_exact(1000000, buf, sizeof buf), "1MB");
  CHECK_STR_EQ(sfc_format_size_exact(16 * GiB, buf, sizeof buf), "16GiB");
  CHECK_STR_EQ(sfc_format_size_exact(3 * GiB / 2, buf, sizeof buf), "1536MiB");
  CHECK_STR_EQ(sfc_format_size_exact(141000000000ull, buf, sizeof buf), "141GB");
  CHECK_STR_EQ(sfc_format_size_exact(1ull << 60, buf, sizeof buf), "1024PiB");
  CHECK_STR_EQ(sfc_format_size_exact(4096000, buf, sizeof buf), "4000KiB");
  CHECK_STR_EQ(sfc_format_size_exact(1000001, buf, sizeof buf), "1000001B");

  CHECK_STR_EQ(sfc_format_rate(55e9, buf, sizeof buf), "55GB/s");
  CHECK_STR_EQ(sfc_format_rate(12e9, buf, sizeof buf), "12GB/s");
  CHECK_STR_EQ(sfc_format_rate(25.6 * (double)GiB, buf, sizeof buf), "25.6GiB/s");
  CHECK_STR_EQ(sfc_format_rate(6.5e9, buf, sizeof buf), "6.5GB/s");
  CHECK_STR_EQ(sfc_format_rate(0, buf, sizeof buf), "0B/s");
  CHECK_STR_EQ(sfc_format_rate(1, buf, sizeof buf), "1B/s");
  CHECK_STR_EQ(sfc_format_duration(10e-6, buf, sizeof buf), "10us");
  CHECK_STR_EQ(sfc_format_duration(10, buf, sizeof buf), "10s");
  CHECK_STR_EQ(sfc_format_duration(2.5e-3, buf, sizeof buf), "2.5ms");
  CHECK_STR_EQ(sfc_format_duration(250e-9, buf, sizeof buf), "250ns");
  CHECK_STR_EQ(sfc_format_duration(0, buf, sizeof buf), "0s");
  CHECK_STR_EQ(sfc_format_duration(1.0 / 3.0, buf, sizeof buf), "0.3333333333333333s");
}

/* xorshift64*: a fixed pseudo-random sequence, so failures reproduce. */
static uint64_t next_random(uint64_t *state) {
  uint64_t x = *state;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  *state = x;
  return x * 2685821657736338717ull;
}

static int size_round_trip_failures = 0;
static void size_round_trip(uint64_t x) {
  char buf[64];
  uint64_t back = ~x;
  sfc_format_size_exact(x, buf, sizeof buf);
  if (!sfc_parse_size(buf, &back, NULL, 0) || back != x) {
    if (size_round_trip_failures++ < 10)
      fprintf(stderr, "  size %llu -> '%s' -> %llu\n", (unsigned long long)x, buf,
              (unsigned long long)back);
  }
}

typedef const char *(*format_fn)(double, char *, size_t);
typedef bool (*parse_fn)(const char *, double *, char *, size_t);
static int double_round_trip_failures = 0;
static void double_round_trip(double x, format_fn format, parse_fn parse) {
  char buf[96];
  double back = -1;
  format(x, buf, sizeof buf);
  if (!parse(buf, &back, NULL, 0) || back != x) {
    if (double_round_trip_failures++ < 10)
      fprintf(stderr, "  %.17g -> '%s' -> %.17g\n", x, buf, back);
  }
}

static void test_round_trip(void) {
  /* Sizes: every power of two and small multiples, decimal round numbers, 2^60. */
  for (int k = 0; k <= 60; k++)
    for (uint64_t m = 1; m <= 7; m++)
      if ((m << k) >> k == m && (m << k) <= (1ull << 60))
        size_round_trip(m << k);
  uint64_t p10 = 1;
  for (int k = 0; k <= 18; k++, p10 *= 10)
    for (uint64_t m = 1; m <= 999; m += 7)
      if (m <= (1ull << 60) / p10)
        size_round_trip(m * p10);
  size_round_trip(0);
  size_round_trip(1ull << 60);
  size_round_trip((1ull << 60) - 1);
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (int i = 0; i < 50000; i++) {
    uint64_t r = next_random(&state);
    size_round_trip((r >> 4) >> (r & 63)); /* every magnitude up to 2^60 */
  }
  CHECK_EQ_I64(size_round_trip_failures, 0);

  /* Rates and durations: edge values, then random bit patterns of finite doubles. */
  static const double edges[] = {
      0,      1,     55e9, 25.6 * 1073741824.0, 1.0 / 3.0, 1e-300,       1e300, DBL_MAX, DBL_MIN,
      5e-324, 10e-6, 0.1,  123456789.0,         0.7,       6.02214076e23};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++) {
    double_round_trip(edges[i], sfc_format_rate, sfc_parse_rate);
    double_round_trip(edges[i], sfc_format_duration, sfc_parse_duration);
  }
  for (int i = 0; i < 5000; i++) {
    uint64_t bits = next_random(&state) & 0x7fffffffffffffffull; /* non-negative */
    double x;
    memcpy(&x, &bits, sizeof x);
    if (!isfinite(x))
      continue;
    double_round_trip(x, sfc_format_rate, sfc_parse_rate);
    double_round_trip(x, sfc_format_duration, sfc_parse_duration);
    /* and values with few digits, as people write them */
    double nice = (double)(next_random(&state) % 100000) * pow(10.0, (int)(bits % 40) - 20);
    double_round_trip(nice, sfc_format_rate, sfc_parse_rate);
    double_round_trip(nice, sfc_format_duration, sfc_parse_duration);
  }
  CHECK_EQ_I64(double_round_trip_failures, 0);
}

int main(void) {
  RUN(test_size_good);
  RUN(test_size_bad);
  RUN(test_rate);
  RUN(test_duration);
  RUN(test_format_forms);
  RUN(test_round_trip);
  return check_summary();
}
