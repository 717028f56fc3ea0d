/* check.h — the unit-test helpers: table-friendly CHECK macros and a summary.
 *
 *   #include "check.h"
 *   static void test_leading_gap(void) {
 *     CHECK_EQ_U64(peak, 180);
 *   }
 *   int main(void) {
 *     RUN(test_leading_gap);
 *     return check_summary();   // 0 when every CHECK held, 1 otherwise
 *   }
 *
 * A failed CHECK prints file:line, the expression and both values, and the test
 * continues, so one run shows every failure. SFC_TEST_DATA (set by CTest) points at
 * tests/data; SFC_SHARED at ../shared.
 */
#ifndef SFC_TEST_CHECK_H
#define SFC_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int check_failures_ = 0;
static int check_count_ = 0;

#define CHECK(cond)                                                                                \
  do {                                                                                             \
    check_count_++;                                                                                \
    if (!(cond)) {                                                                                 \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond);                     \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_U64(a, b)                                                                         \
  do {                                                                                             \
    uint64_t check_a_ = (uint64_t)(a), check_b_ = (uint64_t)(b);                                   \
    check_count_++;                                                                                \
    if (check_a_ != check_b_) {                                                                    \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%" PRIu64 " vs %" PRIu64 ")\n", __FILE__, \
              __LINE__, #a, #b, check_a_, check_b_);                                               \
    }                                                                                              \
  } while (0)

#define CHECK_EQ_I64(a, b)                                                                         \
  do {                                                                                             \
    int64_t check_a_ = (int64_t)(a), check_b_ = (int64_t)(b);                                      \
    check_count_++;                                                                                \
    if (check_a_ != check_b_) {                                                                    \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_EQ failed: %s == %s (%" PRId64 " vs %" PRId64 ")\n", __FILE__, \
              __LINE__, #a, #b, check_a_, check_b_);                                               \
    }                                                                                              \
  } while (0)

#define CHECK_NEAR(a, b, tol)                                                                      \
  do {                                                                                             \
    double check_a_ = (double)(a), check_b_ = (double)(b);                                         \
    check_count_++;                                                                                \
    if (!(check_a_ - check_b_ <= (tol) && check_b_ - check_a_ <= (tol))) {                         \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_NEAR failed: %s ~ %s (%.17g vs %.17g)\n", __FILE__, __LINE__,  \
              #a, #b, check_a_, check_b_);                                                         \
    }                                                                                              \
  } while (0)

#define CHECK_STR_EQ(a, b)                                                                         \
  do {                                                                                             \
    const char *check_a_ = (a), *check_b_ = (b);                                                   \
    check_count_++;                                                                                \
    if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {                               \
      check_failures_++;                                                                           \
      fprintf(stderr,                                                                              \
              "%s:%d: CHECK_STR_EQ failed: %s == %s\n  got:      \"%s\"\n  expected: \"%s\"\n",    \
              __FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)",                          \
              check_b_ ? check_b_ : "(null)");                                                     \
    }                                                                                              \
  } while (0)

/* Substring match, for error messages checked by their meaningful part. */
#define CHECK_CONTAINS(hay, needle)                                                                \
  do {                                                                                             \
    const char *check_h_ = (hay), *check_n_ = (needle);                                            \
    check_count_++;                                                                                \
    if (!check_h_ || !strstr(check_h_, check_n_)) {                                                \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_CONTAINS failed: \"%s\" does not contain \"%s\"\n", __FILE__,  \
              __LINE__, check_h_ ? check_h_ : "(null)", check_n_);                                 \
    }                                                                                              \
  } while (0)

/* expr returns sfc_status_t; err is an sfc_error_t whose message is shown. */
#define CHECK_OK(expr, err)                                                                        \
  do {                                                                                             \
    int check_s_ = (int)(expr);                                                                    \
    check_count_++;                                                                                \
    if (check_s_ != 0) {                                                                           \
      check_failures_++;                                                                           \
      fprintf(stderr, "%s:%d: CHECK_OK failed: %s -> %d: %s\n", __FILE__, __LINE__, #expr,         \
              check_s_, (err).message);                                                            \
    }                                                                                              \
  } while (0)

#define RUN(test)                                                                                  \
  do {                                                                                             \
    int check_before_ = check_failures_;                                                           \
    test();                                                                                        \
    fprintf(stderr, "%s %s\n", check_failures_ == check_before_ ? "ok  " : "FAIL", #test);         \
  } while (0)

static inline int check_summary(void) {
  fprintf(stderr, "%d checks, %d failed\n", check_count_, check_failures_);
  return check_failures_ ? 1 : 0;
}

/* Path of a file under tests/data (SFC_TEST_DATA), in a static buffer. */
static inline const char *test_data(const char *rel) {
  static char buf[4096];
  const char *dir = getenv("SFC_TEST_DATA");
  snprintf(buf, sizeof buf, "%s/%s", dir ? dir : "tests/data", rel);
  return buf;
}

#endif /* SFC_TEST_CHECK_H */
