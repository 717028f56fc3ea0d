/* fuzz_plan.c — fuzz target for the plan reader/validator (sfcrt_plan_load_buffer),
 * and for the promise behind it: a plan the loader accepts replays.
 *
 * Mutation (LLVMFuzzerCustomMutator). Random bytes almost never get past the CRC-32
 * checks, and bytes inserted or erased anywhere shift the sections out of place. So a
 * mutant is made by libFuzzer's own mutator anywhere (1 in 32: the structure checks),
 * by libFuzzer's mutator inside one section's payload, size kept (11 in 32), or by 1-3
 * edits of the structure-aware mutator of tests/plan/plan_mutate.h (one 32-bit word of
 * a record, a header word, or a whole record copied over another; 20 in 32), and then
 * every checksum is recomputed (plan_fix_crcs: each section's CRC, the table's,
 * file_bytes and the header's), so most executions reach the reference and semantic
 * checks.
 * LLVMFuzzerCustomCrossOver is left to libFuzzer (its output goes through the next
 * mutation's CRC fix).
 *
 * Execution (LLVMFuzzerTestOneInput). Load the input as is; inputs that still carry
 * stale CRCs (seeds, the bad-plan corpus, libFuzzer's cross-overs) are also loaded
 * with their CRCs recomputed. A plan the loader accepts is replayed, 2 iterations
 * each: on the host device in integrity mode with copies held back, then steps held
 * back (options.host.lag: a missing wait loses its race whatever the scheduler
 * does), and on the sim device. A replay failure aborts: the loader accepted a plan
 * its replay breaks on. Plans with arenas above 16 MiB are not replayed (how much
 * memory a plan takes is a resource, not a rule). Must never crash, leak or trip a
 * sanitizer.
 *
 * Counters. In a libFuzzer build, exit prints how many executions reached the
 * semantic checks (the loader got past structure and references: status OK or
 * SFC_ERR_VERIFY), how many plans it accepted and how many of those it replayed.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../plan/plan_mutate.h"
#include "sfc/plan_reader.h"
#include "sfcrt.h"

#define REPLAY_ARENAS (UINT64_C(16) << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);
/* libFuzzer's own mutator; absent (NULL) in the corpus-replay build. */
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));

static unsigned long executions, reached, accepted, replayed;

static void print_counters(void) {
  fprintf(stderr,
          "fuzz_plan: %lu loads, %lu reached the semantic checks (%.1f%%), %lu accepted, %lu of "
          "them replayed on host+integrity and sim without a failure\n",
          executions, reached, executions ? 100.0 * (double)reached / (double)executions : 0.0,
          accepted, replayed);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  atexit(print_counters);
  return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  uint64_t rng = (uint64_t)seed * 0x9E3779B97F4A7C15ull + 1;
  uint64_t r = plan_mutate_rand(&rng) % 32;
  size_t at, bytes;
  if (LLVMFuzzerMutate && r == 0) /* anywhere: the structure checks */
    size = LLVMFuzzerMutate(data, size, max_size);
  else if (LLVMFuzzerMutate && r < 12 && plan_pick_section(data, size, &rng, &at, &bytes))
    LLVMFuzzerMutate(data + at, bytes, bytes); /* inside one section: layout kept */
  else
    for (uint64_t n = 1 + plan_mutate_rand(&rng) % 3; n > 0; n--)
      size = plan_mutate(data, size, &rng);
  plan_fix_crcs(data, size);
  return size;
}

static sfc_status_t replay(const sfcrt_plan_t *plan, const char *device, int lag,
                           sfc_error_t *err) {
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = device;
  opt.host.integrity = lag != 0;
  opt.host.lag = lag;
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create(plan, &opt, &s, err);
  void **ext = calloc(v->tensor_count ? v->tensor_count : 1, sizeof *ext);
  if (!ext && st == SFC_OK)
    st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "fuzz_plan: out of memory");
  for (uint32_t t = 0; st == SFC_OK && lag && t < v->tensor_count; t++) {
    if (!(v->tensors[t].flags & SFC_TENSOR_EXTERNAL))
      continue;
    uint64_t bytes = v->tensors[t].bytes ? v->tensors[t].bytes : 1;
    ext[t] = bytes <= REPLAY_ARENAS ? calloc(1, (size_t)bytes) : NULL;
    st = ext[t] ? sfcrt_session_bind(s, t, ext[t], bytes, err)
                : sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "fuzz_plan: external tensor");
  }
  if (st == SFC_OK)
    st = sfcrt_session_run(s, 2, err);
  sfcrt_session_destroy(s);
  for (uint32_t t = 0; ext && t < v->tensor_count; t++)
    free(ext[t]);
  free(ext);
  return st;
}

static void load(const uint8_t *data, size_t size) {
  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  sfc_status_t st = sfcrt_plan_load_buffer(data, size, NULL, &plan, &err);
  executions++;
  reached += st == SFC_OK || st == SFC_ERR_VERIFY;
  if (st != SFC_OK)
    return;
  accepted++;
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  if (v->header.arena_bytes <= REPLAY_ARENAS && v->header.host_arena_bytes <= REPLAY_ARENAS) {
    static const struct {
      const char *device;
      int lag;
    } runs[] = {{"host", SFCRT_HOST_LAG_COPIES}, {"host", SFCRT_HOST_LAG_COMPUTE}, {"sim", 0}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
      sfc_status_t r = replay(plan, runs[i].device, runs[i].lag, &err);
      if (r != SFC_OK && r != SFC_ERR_OUT_OF_MEMORY) {
        fprintf(stderr, "fuzz_plan: the loader accepted a plan that fails on %s%s: %s\n",
                runs[i].device, runs[i].lag ? " (integrity)" : "", err.message);
        abort();
      }
    }
    replayed++;
  }
  sfcrt_plan_destroy(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load(data, size);
  if (size < sizeof(sfc_plan_header_t))
    return 0;
  uint8_t *copy = malloc(size);
  if (!copy)
    return 0;
  memcpy(copy, data, size);
  plan_fix_crcs(copy, size);
  if (memcmp(copy, data, size) != 0)
    load(copy, size);
  free(copy);
  return 0;
}
