/* test_rt_pattern.c — the integrity module alone (runtime/src/integrity.c): patterns
 * differ per tensor, version and position; check finds the first differing byte
 * (tails of sizes that are not multiples of 8 included); the tracker initialises
 * persistent tensors, rejects reads before a producer, and diagnoses stale and
 * overwritten bytes. Operand memory is the test's own. */
#include "integrity.h"
#include "rt_test_util.h"

static void test_patterns(void) {
  uint8_t a[37], b[37];
  sfcrt_pattern_fill(a, sizeof a, 3, 1);
  CHECK_EQ_U64(sfcrt_pattern_check(a, sizeof a, 3, 1, NULL, NULL), SFCRT_PATTERN_OK);
  CHECK(sfcrt_pattern_check(a, sizeof a, 4, 1, NULL, NULL) != SFCRT_PATTERN_OK); /* tensor */
  CHECK(sfcrt_pattern_check(a, sizeof a, 3, 2, NULL, NULL) != SFCRT_PATTERN_OK); /* version */
  sfcrt_pattern_fill(b, sizeof b, 3, 1);
  CHECK(memcmp(a, b, sizeof a) == 0); /* deterministic */
  CHECK(memcmp(a, a + 8, 8) != 0);    /* position */
  for (size_t off = 0; off < sizeof a; off++) {
    memcpy(b, a, sizeof a);
    b[off] ^= 0x10;
    uint64_t found = 0, expected = 0;
    CHECK_EQ_U64(sfcrt_pattern_check(b, sizeof b, 3, 1, &found, &expected), off);
    CHECK(found != expected);
  }
  CHECK_EQ_U64(sfcrt_pattern_check(a, 0, 3, 1, NULL, NULL), SFCRT_PATTERN_OK);
  /* the word the diagnosis compares with is the one check reports */
  memcpy(b, a, sizeof b);
  b[33] ^= 1;
  uint64_t found, expected;
  CHECK_EQ_U64(sfcrt_pattern_check(b, sizeof b, 3, 1, &found, &expected), 33);
  CHECK_EQ_U64(expected, sfcrt_pattern_word(3, 1, 33) & 0xFFFFFFFFFFu); /* 5-byte tail */
}

/* chain(2): step 0 x -> t1, step 1 t1 -> t2 (t2 is the output). */
static void test_tracker(void) {
  pb_t *pb = pb_new();
  pb_simple_chain(pb, 2);
  sfcrt_plan_t *plan = rt_load(pb);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  static uint8_t x[256], t1[256], t2[256], old[256];
  void *s0[] = {x, t1}, *s1[] = {t1, t2};
  sfcrt_integrity_t g;
  sfc_error_t err;
  CHECK_OK(sfcrt_integrity_init(&g, v, NULL, &err), err);
  /* iteration 0 (tag 1): x is persistent, initialised by its first reader */
  CHECK_OK(sfcrt_integrity_check_step(&g, 1, 0, s0, &err), err);
  CHECK_EQ_U64(sfcrt_pattern_check(x, 256, 0, 0, NULL, NULL), SFCRT_PATTERN_OK);
  sfcrt_integrity_fill_step(&g, 1, 0, s0);
  memcpy(old, t1, sizeof old);
  CHECK_OK(sfcrt_integrity_check_step(&g, 1, 1, s1, &err), err);
  sfcrt_integrity_fill_step(&g, 1, 1, s1);
  CHECK_OK(sfcrt_integrity_check_end(&g, 1, &err), err);
  /* iteration 1 (tag 2): t1 read before step 0 produced it */
  CHECK_EQ_I64(sfcrt_integrity_check_step(&g, 2, 1, s1, &err), SFC_ERR_INTEGRITY);
  CHECK_STR_EQ(err.message, "integrity: iteration 1 step 1 (op 'relu2'): input 0 tensor 1 't1' "
                            "(block 1) is read before any step produced it in this iteration");
  sfcrt_integrity_fill_step(&g, 2, 0, s0);
  memcpy(t1, old, sizeof old); /* iteration 0's t1 comes back: stale */
  CHECK_EQ_I64(sfcrt_integrity_check_step(&g, 2, 1, s1, &err), SFC_ERR_INTEGRITY);
  CHECK_CONTAINS(err.message, "input 0 tensor 1 't1' (block 1) byte 0 of 256");
  CHECK_CONTAINS(err.message, "stale: it holds this tensor's contents of iteration 0");
  sfcrt_integrity_fill_step(&g, 2, 0, s0);
  memset(t1 + 100, 0xEE, 4); /* a neighbour wrote into it: overwritten */
  CHECK_EQ_I64(sfcrt_integrity_check_step(&g, 2, 1, s1, &err), SFC_ERR_INTEGRITY);
  CHECK_CONTAINS(err.message, "byte 100 of 256");
  CHECK_CONTAINS(err.message, "overwritten");
  /* the end check sees a clobbered output and a clobbered persistent input */
  sfcrt_integrity_fill_step(&g, 2, 0, s0);
  CHECK_OK(sfcrt_integrity_check_step(&g, 2, 1, s1, &err), err);
  sfcrt_integrity_fill_step(&g, 2, 1, s1);
  CHECK_OK(sfcrt_integrity_check_end(&g, 2, &err), err);
  t2[255] ^= 1;
  CHECK_EQ_I64(sfcrt_integrity_check_end(&g, 2, &err), SFC_ERR_INTEGRITY);
  CHECK_CONTAINS(err.message, "iteration 1 end: tensor 2 't2' (block 2) byte 255 of 256");
  t2[255] ^= 1;
  x[7] ^= 1;
  CHECK_EQ_I64(sfcrt_integrity_check_end(&g, 2, &err), SFC_ERR_INTEGRITY);
  CHECK_CONTAINS(err.message, "tensor 0 'x' (block 0) byte 7 of 256");
  sfcrt_integrity_deinit(&g);
  sfcrt_integrity_deinit(&g); /* idempotent */
  sfcrt_plan_destroy(plan);
  pb_free(pb);
}

int main(void) {
  RUN(test_patterns);
  RUN(test_tracker);
  return check_summary();
}
