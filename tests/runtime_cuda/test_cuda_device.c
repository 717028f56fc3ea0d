/* test_cuda_device.c — the `cuda` device end to end through the pull loop, in arena and
 * virtual-addressing mode, on hand-built plans with swaps (tests/runtime/rt_plans.c,
 * tests/plan/plan_examples.c), 3 iterations each.
 *
 * Integrity style, on whatever driver the loader finds: every step writes each output
 * with cuMemsetD32Async(pattern(tensor, iteration)) on the step's stream, and every
 * input is first read back (cuMemcpyDtoHAsync on the step's stream, then a stream
 * synchronize) and compared word by word with the pattern of the iteration that last
 * wrote it. A lost swap, a missing wait, early reuse or (VA mode) a tensor unmapped or
 * remapped without its data shows up as a mismatch naming step, tensor and word.
 *
 * CTest runs this program as `test_cuda_device_fake` (label unit, both modes) with
 * SFCRT_CUDA_LIBRARY pointing at the fake driver (host memory, synchronous copies, VA
 * on real host mappings: an unmapped tensor faults), and as `test_cuda_smoke_gpu`
 * (`arena`) and `test_cuda_va_gpu` (`va`), label gpu, on the real driver; those exit 77
 * (skipped) where there is no driver or device.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rt_test_util.h"
#include "cuda_loader.h"
#include "fake_cuda.h"
#include "plan_builder.h"
#include "rt_plans.h"
#include "sfcrt.h"

static sfcrt_cuda_driver_t drv;

/* The valid swap plan of rt_plans.h, through the validating reader. */
static sfcrt_plan_t *load_swap_plan(void) {
  pb_t *b = pb_new();
  rt_swap_plan(b, RT_VALID);
  sfcrt_plan_t *plan = rt_load(b);
  pb_free(b);
  return plan;
}
static CUcontext ctx;
static CUdevice dev;

static void check_fake_released(const char *name);

static uint32_t pattern(uint32_t tensor, uint64_t iteration) {
  return 0xA5000000u ^ (tensor * 0x9E37u) ^ ((uint32_t)iteration << 16) ^ 0x11u;
}

static int cu(CUresult r, const char *what) {
  sfc_error_t err;
  if (sfcrt_cuda_check(&drv, r, what, &err) != SFC_OK) {
    fprintf(stderr, "%s\n", err.message);
    CHECK(0);
    return 0;
  }
  return 1;
}

/* Replays `b` for 3 iterations in `mode`; returns 77 when the device is unavailable. */
static int replay(pb_t *b, const char *name, sfcrt_cuda_mode_t mode) {
  sfcrt_plan_t *plan = rt_load(b);
  sfc_error_t err;
  if (!plan)
    return 1;
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = mode;
  test_alloc_t count = {0}; /* proves: no heap allocation during the iterations */
  sfc_allocator_t counting = {test_alloc_fn, &count};
  opt.alloc = &counting;
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create(plan, &opt, &s, &err);
  if (st == SFC_ERR_UNAVAILABLE) {
    printf("%s (%s): skipped: %s\n", name, mode == SFCRT_CUDA_VA ? "va" : "arena", err.message);
    sfcrt_plan_destroy(plan);
    return 77;
  }
  CHECK_EQ_U64(st, SFC_OK);
  if (st != SFC_OK) {
    fprintf(stderr, "%s: %s\n", name, err.message);
    sfcrt_plan_destroy(plan);
    return 1;
  }
  uint32_t nt = v->tensor_count;
  uint8_t *written = calloc(nt, 1);
  uint64_t *written_it = calloc(nt, sizeof(uint64_t));
  CUdeviceptr *ext = calloc(nt, sizeof(CUdeviceptr));
  uint64_t maxb = 4;
  for (uint32_t t = 0; t < nt; t++)
    if (v->tensors[t].bytes > maxb)
      maxb = v->tensors[t].bytes;
  uint32_t *buf = malloc(maxb);
  /* external tensors: framework memory, written once */
  for (uint32_t t = 0; t < nt; t++)
    if ((v->tensors[t].flags & SFC_TENSOR_EXTERNAL) && !(v->tensors[t].flags & SFC_TENSOR_UNUSED)) {
      cu(drv.fn.cuMemAlloc(&ext[t], v->tensors[t].bytes), "cuMemAlloc");
      cu(drv.fn.cuMemsetD32Async(ext[t], pattern(t, 0), v->tensors[t].bytes / 4, NULL),
         "cuMemsetD32Async");
      cu(drv.fn.cuStreamSynchronize(NULL), "cuStreamSynchronize");
      CHECK_EQ_U64(sfcrt_session_bind(s, t, (void *)(uintptr_t)ext[t], v->tensors[t].bytes, &err),
                   SFC_OK);
      written[t] = 1;
    }
  long mismatches = 0, checked = 0, calls_before = count.calls;
  for (uint64_t it = 0; it < 3 && !mismatches; it++) {
    CHECK_EQ_U64(sfcrt_iteration_begin(s, &err), SFC_OK);
    const sfcrt_step_t *step;
    while ((st = sfcrt_step_next(s, &step, &err)) == SFC_OK && step) {
      const sfc_plan_op_t *op = &v->ops[step->op];
      const uint32_t *tens = &v->op_operands[op->operand_begin];
      CUstream q = (CUstream)step->stream;
      for (uint32_t i = 0; i < step->input_count; i++) {
        uint32_t t = tens[i];
        uint64_t bytes = v->tensors[t].bytes;
        if (!written[t] || bytes % 4)
          continue;
        cu(drv.fn.cuMemcpyDtoHAsync(buf, (CUdeviceptr)(uintptr_t)step->inputs[i], bytes, q),
           "cuMemcpyDtoHAsync");
        cu(drv.fn.cuStreamSynchronize(q), "cuStreamSynchronize");
        uint32_t want = pattern(t, written_it[t]);
        for (uint64_t w = 0; w < bytes / 4; w++)
          if (buf[w] != want) {
            if (mismatches++ < 5)
              fprintf(stderr,
                      "%s: iteration %llu step %u: input %u (tensor %u) word %llu is 0x%08x, "
                      "expected 0x%08x\n",
                      name, (unsigned long long)it, step->index, i, t, (unsigned long long)w,
                      buf[w], want);
            break;
          }
        checked++;
      }
      for (uint32_t o = 0; o < step->output_count + step->temp_count; o++) {
        uint32_t t = tens[step->input_count + o];
        void *p = o < step->output_count ? step->outputs[o] : step->temps[o - step->output_count];
        uint64_t bytes = v->tensors[t].bytes;
        if (bytes % 4)
          continue;
        cu(drv.fn.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p, pattern(t, it), bytes / 4, q),
           "cuMemsetD32Async");
        written[t] = 1;
        written_it[t] = it;
      }
      CHECK_EQ_U64(sfcrt_step_done(s, &err), SFC_OK);
    }
    CHECK_EQ_U64(st, SFC_OK);
    if (st != SFC_OK)
      fprintf(stderr, "%s: %s\n", name, err.message);
    st = sfcrt_iteration_end(s, &err);
    CHECK_EQ_U64(st, SFC_OK);
    if (st != SFC_OK)
      fprintf(stderr, "%s: %s\n", name, err.message);
  }
  CHECK_EQ_U64(mismatches, 0);
  CHECK(checked > 0);
  CHECK(calls_before > 0);                     /* the session allocated through it */
  CHECK_EQ_U64(count.calls - calls_before, 0); /* 0 allocations in 3 iterations */
  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  CHECK_EQ_U64(stats.iterations, 3);
  uint64_t ins = 0;
  for (uint32_t i = 0; i < v->swap_count; i++)
    ins += v->swaps[i].direction == SFC_SWAP_IN;
  CHECK_EQ_U64(stats.swaps_in, 3 * ins);
  CHECK_EQ_U64(stats.swaps_out, 3 * (v->swap_count - ins));
  printf("%s (%s): %u steps, %u swaps, %ld inputs checked, %llu bytes swapped out, device "
         "memory %llu bytes\n",
         name, mode == SFCRT_CUDA_VA ? "va" : "arena", v->step_count, v->swap_count, checked,
         (unsigned long long)stats.bytes_swapped_out, (unsigned long long)stats.arena_bytes);
  sfcrt_session_destroy(s);
  CHECK_EQ_U64(count.live_blocks, 0); /* the session and the device freed everything */
  for (uint32_t t = 0; t < nt; t++)
    if (ext[t])
      drv.fn.cuMemFree(ext[t]);
  free(buf);
  free(ext);
  free(written);
  free(written_it);
  sfcrt_plan_destroy(plan);
  check_fake_released(name);
  return 0;
}

/* With the fake driver (SFCRT_CUDA_LIBRARY), its counters prove that a destroyed
 * session gave back every stream, event, allocation, chunk and reservation. */
static void check_fake_released(const char *name) {
  void *sym = drv.library ? dlsym(drv.library, "fake_cuda_state") : NULL;
  if (!sym)
    return;
  fake_cuda_state_t *(*state)(void);
  memcpy(&state, &sym, sizeof(sym));
  const fake_cuda_state_t *f = state();
  if (f->streams_live || f->events_live || f->allocs_live || f->host_allocs_live ||
      f->handles_live || f->reservations_live || f->ctx_retained != 1 || f->ctx_pushed != 1 ||
      f->violations)
    fprintf(stderr,
            "%s: fake driver after destroy: streams %ld events %ld allocs %ld host %ld chunks %ld "
            "reservations %ld retained %ld pushed %ld violations %ld (%s)\n",
            name, f->streams_live, f->events_live, f->allocs_live, f->host_allocs_live,
            f->handles_live, f->reservations_live, f->ctx_retained, f->ctx_pushed, f->violations,
            f->violation);
  CHECK_EQ_U64(f->streams_live + f->events_live + f->allocs_live + f->host_allocs_live, 0);
  CHECK_EQ_U64(f->handles_live + f->reservations_live + f->violations, 0);
  CHECK_EQ_U64(f->ctx_retained, 1); /* the test's own */
  CHECK_EQ_U64(f->ctx_pushed, 1);   /* the test's own: every device push was popped */
}

/* Fake driver only: a driver call failing anywhere in session creation, or in the
 * middle of an iteration, gives an error naming the call, and destroy still returns
 * every stream, event, allocation, chunk and reservation. */
static void test_driver_failures(void) {
  void *sym = drv.library ? dlsym(drv.library, "fake_cuda_state") : NULL;
  if (!sym)
    return;
  fake_cuda_state_t *(*state)(void);
  memcpy(&state, &sym, sizeof(sym));
  static const struct {
    const char *call;
    int nth;
    int va;
  } rows[] = {
      {"cuDevicePrimaryCtxRetain", 1, 0},
      {"cuStreamCreate", 2, 0},
      {"cuStreamCreate", 3, 0},
      {"cuEventCreate", 2, 0},
      {"cuMemAlloc", 1, 0},
      {"cuMemHostAlloc", 1, 0},
      {"cuDeviceGetAttribute", 1, 1},
      {"cuMemGetAllocationGranularity", 1, 1},
      {"cuMemCreate", 1, 1},
      {"cuMemAddressReserve", 3, 1},
      {"cuEventCreate", 9, 1},
      {"cuMemMap", 1, 1},
      {"cuMemSetAccess", 1, 1},
      {"cuMemHostAlloc", 1, 1},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    sfcrt_plan_t *plan = load_swap_plan();
    sfc_error_t err;
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = "cuda";
    opt.cuda.mode = rows[i].va ? SFCRT_CUDA_VA : SFCRT_CUDA_ARENA;
    fake_cuda_state_t *f = state();
    f->fail_name = rows[i].call;
    f->fail_nth = rows[i].nth;
    f->fail_seen_ = 0;
    f->fail_result = CUDA_ERROR_OUT_OF_MEMORY;
    sfcrt_session_t *s = NULL;
    sfc_status_t st = sfcrt_session_create(plan, &opt, &s, &err);
    f->fail_name = NULL;
    if (st == SFC_OK || strstr(err.message, rows[i].call) == NULL) {
      fprintf(stderr, "row %zu (%s #%d): status %d, '%s'\n", i, rows[i].call, rows[i].nth, (int)st,
              err.message);
      CHECK(0);
    }
    CHECK(s == NULL);
    check_fake_released(rows[i].call);
    sfcrt_session_destroy(s);
    sfcrt_plan_destroy(plan);
  }
  /* a copy failing mid-iteration fails the session with the call's name */
  sfcrt_plan_t *plan = load_swap_plan();
  sfc_error_t err;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  sfcrt_session_t *s = NULL;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  fake_cuda_state_t *f = state();
  f->fail_name = "cuMemcpyDtoHAsync";
  f->fail_nth = 1;
  f->fail_seen_ = 0;
  f->fail_result = CUDA_ERROR_LAUNCH_FAILED;
  CHECK_EQ_U64(sfcrt_iteration_begin(s, &err), SFC_OK);
  const sfcrt_step_t *step;
  sfc_status_t st;
  while ((st = sfcrt_step_next(s, &step, &err)) == SFC_OK && step)
    sfcrt_step_done(s, &err);
  f->fail_name = NULL;
  CHECK_EQ_U64(st, SFC_ERR_DEVICE);
  CHECK(strstr(err.message, "cuMemcpyDtoHAsync: CUDA_ERROR_LAUNCH_FAILED") != NULL);
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  check_fake_released("mid-iteration failure");
}

/* The framework's stream and context (as PyTorch passes them): every step runs on that
 * stream; the session neither destroys it nor retains a context of its own. */
static void test_framework_stream(void) {
  CUstream fw = NULL;
  if (!cu(drv.fn.cuStreamCreate(&fw, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
    return;
  sfcrt_plan_t *plan = load_swap_plan();
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.stream = fw;
  opt.cuda.context = ctx;
  sfcrt_session_t *s = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  long on_fw = 0, steps = 0;
  for (int it = 0; it < 2 && s; it++) {
    CHECK_EQ_U64(sfcrt_iteration_begin(s, &err), SFC_OK);
    const sfcrt_step_t *step;
    while (sfcrt_step_next(s, &step, &err) == SFC_OK && step) {
      steps++;
      on_fw += step->stream == (void *)fw;
      sfcrt_step_done(s, &err);
    }
    CHECK_EQ_U64(sfcrt_iteration_end(s, &err), SFC_OK);
  }
  CHECK(steps > 0);
  CHECK_EQ_U64(on_fw, steps);
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  /* the stream is still ours: destroying it succeeds exactly once */
  CHECK(cu(drv.fn.cuStreamDestroy(fw), "cuStreamDestroy"));
  check_fake_released("framework stream");
}

int main(int argc, char **argv) {
  /* argv[1]: "arena" or "va" to run one mode (the gpu tests), nothing for both */
  int first_mode = 0, last_mode = 1;
  if (argc > 1 && strcmp(argv[1], "arena") == 0)
    last_mode = 0;
  else if (argc > 1 && strcmp(argv[1], "va") == 0)
    first_mode = 1;
  else if (argc > 1) {
    fprintf(stderr, "usage: %s [arena|va]\n", argv[0]);
    return 2;
  }
  sfc_error_t err;
  if (sfcrt_cuda_driver_load(&drv, &err) != SFC_OK) {
    printf("skipped: %s\n", err.message);
    return 77;
  }
  int count = 0;
  if (drv.fn.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    printf("skipped: no CUDA device\n");
    sfcrt_cuda_driver_unload(&drv);
    return 77;
  }
  cu(drv.fn.cuDeviceGet(&dev, 0), "cuDeviceGet");
  cu(drv.fn.cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain");
  cu(drv.fn.cuCtxPushCurrent(ctx), "cuCtxPushCurrent");

  int skipped = 0, ran = 0;
  for (int m = first_mode; m <= last_mode; m++) {
    sfcrt_cuda_mode_t mode = m ? SFCRT_CUDA_VA : SFCRT_CUDA_ARENA;
    pb_t *b = pb_new();
    rt_swap_plan(b, RT_VALID);
    int r = replay(b, "swap plan", mode);
    pb_free(b);
    b = pb_new();
    pb_simple_chain(b, 8);
    int r2 = replay(b, "chain of 8", mode);
    pb_free(b);
    b = pb_new();
    pb_example_full(b);
    int r3 = replay(b, "example_full", mode);
    pb_free(b);
    skipped += (r == 77) + (r2 == 77) + (r3 == 77);
    ran += (r == 0) + (r2 == 0) + (r3 == 0);
  }
  RUN(test_driver_failures);
  RUN(test_framework_stream);
  CUcontext popped;
  drv.fn.cuCtxPopCurrent(&popped);
  drv.fn.cuDevicePrimaryCtxRelease(dev);
  sfcrt_cuda_driver_unload(&drv);
  if (ran == 0 && skipped > 0)
    return 77;
  return check_summary();
}
