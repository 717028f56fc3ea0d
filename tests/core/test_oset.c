/* test_oset.c — the ordered set against a brute-force model, seeded random ops. */
#include "check.h"
#include "test_rand.h"
#include "oset.h"

static uint64_t rng = 88172645463325252ull;

#define N 2000

static void test_random_against_model(void) {
  sfc_oset_t s;
  CHECK(sfc_oset_init(&s, N));
  static uint64_t key[N];
  static int in[N];
  int mismatches = 0;
  for (int round = 0; round < 200000; round++) {
    uint32_t id = (uint32_t)(test_rand_next(&rng) % N);
    if (in[id]) {
      sfc_oset_erase(&s, key[id], id);
      in[id] = 0;
    } else {
      key[id] = test_rand_next(&rng) % 500; /* many equal keys: ties broken by id */
      sfc_oset_insert(&s, key[id], id);
      in[id] = 1;
    }
    if (round % 97 != 0)
      continue;
    uint64_t qk = test_rand_next(&rng) % 520;
    uint32_t qid = (uint32_t)(test_rand_next(&rng) % (N + 1));
    uint32_t want_prev = SFC_OSET_NONE, want_next = SFC_OSET_NONE;
    for (uint32_t j = 0; j < N; j++) {
      if (!in[j])
        continue;
      int lt = key[j] < qk || (key[j] == qk && j < qid);
      int gt = key[j] > qk || (key[j] == qk && j > qid);
      if (lt && (want_prev == SFC_OSET_NONE || key[j] > key[want_prev] ||
                 (key[j] == key[want_prev] && j > want_prev)))
        want_prev = j;
      if (gt && (want_next == SFC_OSET_NONE || key[j] < key[want_next] ||
                 (key[j] == key[want_next] && j < want_next)))
        want_next = j;
    }
    mismatches += sfc_oset_prev(&s, qk, qid) != want_prev;
    mismatches += sfc_oset_next(&s, qk, qid) != want_next;
  }
  CHECK_EQ_U64(mismatches, 0);
  sfc_oset_deinit(&s);
}

static void test_empty(void) {
  sfc_oset_t s;
  CHECK(sfc_oset_init(&s, 0));
  CHECK_EQ_U64(sfc_oset_prev(&s, 5, 0), SFC_OSET_NONE);
  CHECK_EQ_U64(sfc_oset_next(&s, 5, 0), SFC_OSET_NONE);
  sfc_oset_deinit(&s);
}

int main(void) {
  RUN(test_empty);
  RUN(test_random_against_model);
  return check_summary();
}
