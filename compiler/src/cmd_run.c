/* cmd_run.c — `sfc run PLAN`: replay a plan for N iterations on a runtime device
 * (host by default), without a framework: the pull loop hands out every step and the
 * command marks it done at once. External tensors are bound to zeroed host memory the
 * command owns (host device). With --integrity on the host device every tensor is
 * filled with a pattern when produced and checked at every use, so a plan that
 * overlaps, reuses a block early, misses a wait or loses a swap fails with exit 1 and
 * one line naming iteration, step, op, tensor, block and byte offset.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sfcrt.h"
#include "units.h"

static const char run_help[] =
    "usage: sfc run PLAN [-d|--device host|sim|cuda] [--integrity] [-n|--iterations N] [--va]\n"
    "                    [--paged] [-v|--verbose]\n"
    "\n"
    "Replays PLAN for N iterations (default 2, at most 1000000) through the runtime's\n"
    "pull loop on a device: host (default: real bytes in a host arena, copy queues as\n"
    "threads), sim (virtual clocks) or cuda (when built with CUDA; --va selects\n"
    "virtual-addressing mode, --paged the paged arena: the arena's addresses, with\n"
    "physical memory mapped page by page while live blocks touch it; 'arena' then\n"
    "reports the physical chunks). --integrity (host only) fills every tensor with a\n"
    "pattern derived from (tensor, iteration) when it is produced and checks it at\n"
    "every use, including after swap round trips: an overlap, early reuse, missing\n"
    "wait or lost swap exits 1 with the step, tensor and byte offset. -v adds the wall\n"
    "time per step.\n"
    "\n"
    "examples:\n"
    "  sfc run cnn.plan --device host --integrity --iterations 3\n"
    "  sfc run cnn.plan --device sim\n";

/* Binds every external tensor (the framework's inputs and parameters) to zeroed host
 * memory owned by *owned (host device; sim needs none). */
static sfc_status_t bind_externals(sfcrt_session_t *s, const sfc_plan_view_t *v, const char *device,
                                   void ***owned, sfc_error_t *err) {
  if (strcmp(device, "host") != 0)
    return SFC_OK;
  *owned = calloc(v->tensor_count ? v->tensor_count : 1, sizeof **owned);
  if (!*owned)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory");
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    if (!(v->tensors[t].flags & SFC_TENSOR_EXTERNAL))
      continue;
    uint64_t bytes = v->tensors[t].bytes ? v->tensors[t].bytes : 1;
    if (bytes > SIZE_MAX || !((*owned)[t] = calloc(1, (size_t)bytes)))
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY,
                           "out of memory for external tensor %u (%llu bytes)", t,
                           (unsigned long long)bytes);
    SFC_TRY(sfcrt_session_bind(s, t, (*owned)[t], bytes, err));
  }
  return SFC_OK;
}

static sfc_status_t replay(const sfcrt_plan_t *plan, const sfcrt_options_t *opt, long iterations,
                           sfcrt_stats_t *stats, double *wall_s, sfc_error_t *err) {
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfcrt_session_t *s = NULL;
  void **owned = NULL;
  SFC_TRY(sfcrt_session_create(plan, opt, &s, err));
  sfc_status_t st = bind_externals(s, v, opt->device, &owned, err);
  double t0 = sfc_clock_seconds();
  if (st == SFC_OK)
    st = sfcrt_session_run(s, (uint64_t)iterations, err);
  *wall_s = sfc_clock_seconds() - t0;
  sfcrt_session_stats(s, stats);
  stats->step_stall_us = stats->step_start_us = stats->step_us = NULL; /* they die with */
  stats->copy_start_us = stats->copy_end_us = NULL;                    /* the session */
  sfcrt_session_destroy(s);
  for (uint32_t t = 0; owned && t < v->tensor_count; t++)
    free(owned[t]);
  free(owned);
  return st;
}

static int run_run(int argc, char **argv) {
  const char *path = NULL, *value = NULL;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  long iterations = 2;
  bool verbose = false;
  for (int i = 1; i < argc; i++) {
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_run);
    if (sfc_cli_option(argc, argv, &i, "--device", "-d", &value)) {
      if (!value)
        return sfc_cli_usage("run", "--device needs host, sim or cuda");
      if (strcmp(value, "host") && strcmp(value, "sim") && strcmp(value, "cuda"))
        return sfc_cli_usage("run", "unknown device '%s' (expected host, sim or cuda)", value);
      opt.device = value;
    } else if (sfc_cli_option(argc, argv, &i, "--iterations", "-n", &value)) {
      int64_t n = 0;
      if (!sfc_cli_count(value, 1, 1000000, &n))
        return sfc_cli_usage("run", "--iterations needs a number from 1 to 1000000");
      iterations = n;
    } else if (strcmp(argv[i], "--integrity") == 0) {
      opt.host.integrity = 1;
    } else if (strcmp(argv[i], "--va") == 0 || strcmp(argv[i], "--paged") == 0) {
      sfcrt_cuda_mode_t m = argv[i][2] == 'v' ? SFCRT_CUDA_VA : SFCRT_CUDA_PAGED;
      if (opt.cuda.mode != SFCRT_CUDA_ARENA && opt.cuda.mode != m)
        return sfc_cli_usage("run", "--va and --paged are two memory modes: give one");
      opt.cuda.mode = m;
    } else if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "--verbose") == 0) {
      verbose = true;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      return sfc_cli_usage("run", "unknown option '%s'", argv[i]);
    } else if (path) {
      return sfc_cli_usage("run", "one plan at a time ('%s' and '%s')", path, argv[i]);
    } else {
      path = argv[i];
    }
  }
  if (!path)
    return sfc_cli_usage("run", "missing PLAN");
  if (opt.host.integrity && strcmp(opt.device, "host") != 0)
    return sfc_cli_usage("run", "--integrity needs --device host");
  if (opt.cuda.mode != SFCRT_CUDA_ARENA && strcmp(opt.device, "cuda") != 0)
    return sfc_cli_usage("run", "%s needs --device cuda",
                         opt.cuda.mode == SFCRT_CUDA_VA ? "--va" : "--paged");

  sfc_error_t err;
  sfcrt_plan_t *plan = NULL;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return sfc_cli_fail(&err); /* the reader's message names the file */
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfcrt_stats_t st;
  double wall = 0;
  sfc_status_t status = replay(plan, &opt, iterations, &st, &wall, &err);
  bool sim = strcmp(opt.device, "sim") == 0;
  if (status == SFC_OK && sim &&
      !(isfinite(st.predicted_iteration_us) && isfinite(st.compute_us) && isfinite(st.stall_us)))
    status = sfc_error_set(&err, SFC_ERR_BAD_INPUT,
                           "the predicted times overflow (an op time or the link in the plan is "
                           "out of range)");
  if (status != SFC_OK) {
    sfc_error_prefix(&err, path);
    sfcrt_plan_destroy(plan);
    return sfc_cli_fail(&err);
  }
  char a[32], b[32], shown[SFC_PATH_SHOWN_BYTES];
  printf("sfc run: %s on %s%s, %ld iteration%s\n", sfc_cli_path_shown(path, shown), opt.device,
         opt.host.integrity ? " with integrity checks" : "", iterations,
         iterations == 1 ? "" : "s");
  printf("  steps                 %" PRIu64 " (%u per iteration)\n", st.steps, v->step_count);
  printf("  swaps                 %" PRIu64 " in (%s), %" PRIu64 " out (%s)\n", st.swaps_in,
         sfc_format_size(st.bytes_swapped_in, a, sizeof a), st.swaps_out,
         sfc_format_size(st.bytes_swapped_out, b, sizeof b));
  printf("  arena                 %s device, %s pinned staging\n",
         sfc_format_size(st.arena_bytes, a, sizeof a),
         sfc_format_size(st.host_arena_bytes, b, sizeof b));
  if (strcmp(opt.device, "cuda") == 0 && opt.cuda.mode != SFCRT_CUDA_ARENA)
    printf("  chunks                %" PRIu64 " mapped, %" PRIu64 " unmapped, %" PRIu64
           " unmaps waited for their last users\n",
           st.chunks_mapped, st.chunks_unmapped, st.unmap_waits);
  if (sim)
    printf("  predicted iteration   %.3f us (compute %.3f us, stall %.3f us)\n",
           st.predicted_iteration_us, st.compute_us, st.stall_us / (double)iterations);
  if (opt.host.integrity)
    printf("  integrity             ok: every use of every tensor matched its producer\n");
  if (verbose)
    printf("  wall time             %.3f ms (%.1f ns per step)\n", wall * 1e3,
           st.steps ? wall * 1e9 / (double)st.steps : 0.0);
  sfcrt_plan_destroy(plan);
  return SFC_EXIT_OK;
}

const sfc_command_t sfc_cmd_run = {"run", "run PLAN --integrity: replay a plan, check every tensor",
                                   run_help, run_run};
