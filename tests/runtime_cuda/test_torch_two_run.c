/* test_torch_two_run.c — the two-run workflow of tools/torch-two-run on the host:
 * run 1 records an iteration through the exported entry points (host backend), the
 * real `sfc pack` CLI plans the trace ($SFC, set by CTest), run 2 replays it: every
 * request of the steady iterations is served from the plan, no fallback. Then a
 * changed workload (one size differs, one extra request) is counted, not crashed. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "sfc/status.h"
#include "sfcrt_torch.h"
#include "torch_trace.h"

/* A "training iteration": 8 requests with forward/backward lifetimes. */
static void iteration(int variant) {
  static const size_t sizes[8] = {4096, 8192, 1000, 8192, 300, 65536, 4096, 1000};
  void *p[9] = {0};
  size_t n[9] = {0}; /* PyTorch frees with the size it allocated */
  for (int i = 0; i < 8; i++)
    n[i] = sizes[i] + (variant == 1 && i == 2 ? 8 : 0);
  n[8] = 77;
  for (int i = 0; i < 4; i++)
    p[i] = sfcrt_torch_alloc(n[i], 0, NULL);
  sfcrt_torch_free(p[1], n[1], 0, NULL);
  for (int i = 4; i < 8; i++)
    p[i] = sfcrt_torch_alloc(n[i], 0, NULL);
  if (variant == 2)
    p[8] = sfcrt_torch_alloc(n[8], 0, NULL);
  for (int i = 0; i < 9; i++)
    if (i != 1 && p[i]) {
      memset(p[i], i, 8);
      sfcrt_torch_free(p[i], n[i], 0, NULL);
    }
}

int main(void) {
  const char *sfc = getenv("SFC");
  if (!sfc) {
    printf("skipped: $SFC (the sfc binary) is not set\n");
    return 77;
  }
  setenv("SFCRT_TORCH_BACKEND", "host", 1);
  char trace[512], packed[512], cmd[2048];
  const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
  snprintf(trace, sizeof(trace), "%s/sfc_two_run_%d_trace.csv", dir, (int)getpid());
  snprintf(packed, sizeof(packed), "%s/sfc_two_run_%d_packed.csv", dir, (int)getpid());

  /* run 1: warm-up outside any iteration, then one recorded iteration */
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_RECORD, trace), SFC_OK);
  iteration(0);
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  iteration(0);
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  CHECK_EQ_U64(sfcrt_torch_flush(), SFC_OK);
  sfcrt_torch_stats_t s;
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.recorded, 8);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);

  /* sfc pack, as the tool runs it */
  snprintf(cmd, sizeof(cmd), "'%s' pack '%s' --alignment 512 -o '%s' > /dev/null", sfc, trace,
           packed);
  int rc = system(cmd);
  CHECK_EQ_U64(rc, 0);
  sfcrt_torch_trace_t plan;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_torch_trace_read_file(packed, true, NULL, &plan, &err), SFC_OK);
  CHECK_EQ_U64(plan.count, 8);
  sfcrt_torch_trace_free(&plan, NULL);

  /* run 2: warm-up (outside), 3 steady iterations (all planned), then two changed ones */
  CHECK_EQ_U64(sfcrt_torch_configure(SFCRT_TORCH_MODE_REPLAY, packed), SFC_OK);
  iteration(0);
  for (int it = 0; it < 3; it++) {
    CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
    iteration(0);
  }
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.planned, 24);
  CHECK_EQ_U64(s.fallback, 8); /* the warm-up */
  CHECK_EQ_U64(s.fallback_outside, 8);
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  iteration(1); /* request 2 is 8 bytes bigger */
  CHECK_EQ_U64(sfcrt_torch_iteration_begin(), SFC_OK);
  iteration(2); /* a 9th request */
  sfcrt_torch_get_stats(&s);
  CHECK_EQ_U64(s.fallback_size, 1);
  CHECK_EQ_U64(s.fallback_extra, 1);
  CHECK_EQ_U64(s.planned, 24 + 7 + 8);
  CHECK_EQ_U64(s.fallback_conflict + s.unknown_frees + s.failed, 0);
  CHECK_EQ_U64(s.fallback_bytes_live, 0);
  printf("replay: %llu planned, %llu fallback (size %llu, extra %llu, outside %llu), arena %llu "
         "bytes\n",
         (unsigned long long)s.planned, (unsigned long long)s.fallback,
         (unsigned long long)s.fallback_size, (unsigned long long)s.fallback_extra,
         (unsigned long long)s.fallback_outside, (unsigned long long)s.arena_bytes);
  CHECK_EQ_U64(sfcrt_torch_shutdown(), SFC_OK);
  remove(trace);
  remove(packed);
  return check_summary();
}
