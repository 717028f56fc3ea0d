/* test_cuda_device.c — the `cuda` device end to end through the pull loop, in arena,
 * virtual-addressing and paged mode, on hand-built plans with swaps (tests/runtime/rt_plans.c,
 * tests/plan/plan_examples.c), 3 iterations each.
 *
 * Integrity style, on whatever driver the loader finds: every step writes each output
 * with cuMemsetD32Async(pattern(tensor, iteration)) on the step's stream, and every
 * input is first read back (cuMemcpyDtoHAsync on the step's stream, then a stream
 * synchronize) and compared word by word with the pattern of the iteration that last
 * wrote it. A lost swap, a missing wait, early reuse or (VA and paged mode) memory
 * unmapped or remapped without its data shows up as a mismatch naming step, tensor and word.
 *
 * CTest runs this program as `test_cuda_device_fake` (label unit, every mode) with
 * SFCRT_CUDA_LIBRARY pointing at the fake driver (host memory; operations queued per
 * stream and run lazily, so a missing wait is a real race the reader loses; the legacy
 * default stream's implicit ordering; VA on real host mappings), and as
 * `test_cuda_smoke_gpu` (`arena`), `test_cuda_va_gpu` (`va`), `test_cuda_paged_gpu`
 * (`paged`) and `test_cuda_legacy_gpu` (`legacy`: PyTorch's default stream), label gpu, on the real
 * driver; those exit 77 (skipped) where there is no driver or device. Tests that need
 * the fake's knobs or counters (driver failures, capture, several devices, memory
 * limits) run only on the fake.
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

static const sfcrt_cuda_mode_t modes[3] = {SFCRT_CUDA_ARENA, SFCRT_CUDA_VA, SFCRT_CUDA_PAGED};

static const char *mode_name(sfcrt_cuda_mode_t m) {
  return m == SFCRT_CUDA_VA ? "va" : m == SFCRT_CUDA_PAGED ? "paged" : "arena";
}
static sfcrt_cuda_driver_t drv;

/* The fake driver's state when SFCRT_CUDA_LIBRARY loaded the fake, else NULL. */
static fake_cuda_state_t *fake(void) {
  void *sym = drv.library ? dlsym(drv.library, "fake_cuda_state") : NULL;
  if (!sym)
    return NULL;
  fake_cuda_state_t *(*state)(void);
  memcpy(&state, &sym, sizeof(sym));
  return state();
}

/* fake_cuda_begin_capture / fake_cuda_end_capture of the loaded fake. */
static CUresult fake_capture(const char *name, CUstream q) {
  void *sym = drv.library ? dlsym(drv.library, name) : NULL;
  CUresult (*fn)(CUstream);
  if (!sym)
    return CUDA_ERROR_NOT_FOUND;
  memcpy(&fn, &sym, sizeof(sym));
  return fn(q);
}

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
static int extra_ctx_; /* contexts a test holds retained and pushed besides main's */

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

/* replay() flags */
enum {
  RP_DEFAULT_STREAM = 1, /* as PyTorch on its default stream: the session gets stream 0
                            (has_stream) and every kernel is launched on stream 0 */
  RP_UNVALIDATED = 2,    /* the builder's view straight into sfcrt_session_create_view,
                            for plans the validator refuses but the device must survive */
  RP_ASYNC_READS = 4,    /* inputs read back without a synchronize: samples of each input
                            copied on the step's stream, compared after the iteration, so
                            a read runs as late as the stream lets it (as a kernel's) */
  RP_EAGER_COPIES = 8,   /* fake driver: copies run when issued, compute stays lazy */
  RP_EXPECT_RACE = 16,   /* a broken plan: returns 2 when a read saw wrong bytes, 0 when
                            none did (no CHECK either way) */
};

/* An input read back without waiting (RP_ASYNC_READS): three samples of SAMPLE words
 * (its start, middle and end), compared after the iteration. */
#define SAMPLE 16
typedef struct {
  uint32_t step, input, tensor, want, words;
  uint64_t at[3];
  uint32_t got[3][SAMPLE];
} async_read_t;

static long check_async(const char *name, uint64_t it, const async_read_t *r, size_t n, int quiet) {
  long bad = 0;
  for (size_t i = 0; i < n; i++)
    for (int k = 0; k < 3; k++)
      for (uint32_t w = 0; w < r[i].words; w++)
        if (r[i].got[k][w] != r[i].want) {
          if (bad++ < 5 && !quiet)
            fprintf(stderr,
                    "%s: iteration %llu step %u: input %u (tensor %u) word %llu is 0x%08x, "
                    "expected 0x%08x (read without a synchronize)\n",
                    name, (unsigned long long)it, r[i].step, r[i].input, r[i].tensor,
                    (unsigned long long)(r[i].at[k] + w), r[i].got[k][w], r[i].want);
          k = 3;
          break;
        }
  return bad;
}

/* Replays plan (destroyed at the end; NULL: the unvalidated view v) for 3 iterations in
 * `mode` with `base` options (NULL: defaults); returns 77 when the device is
 * unavailable. */
static int replay_view(sfcrt_plan_t *plan, const sfc_plan_view_t *v, const char *name,
                       sfcrt_cuda_mode_t mode, const sfcrt_options_t *base, int flags) {
  sfc_error_t err;
  sfcrt_options_t opt;
  if (base)
    opt = *base;
  else
    sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = mode;
  if (flags & RP_DEFAULT_STREAM) {
    opt.cuda.stream = NULL; /* torch.cuda.current_stream().cuda_stream == 0 */
    opt.cuda.has_stream = 1;
  }
  test_alloc_t count = {0}; /* proves: no heap allocation during the iterations */
  sfc_allocator_t counting = {test_alloc_fn, &count};
  opt.alloc = &counting;
  sfcrt_session_t *s = NULL;
  sfc_status_t st = plan ? sfcrt_session_create(plan, &opt, &s, &err)
                         : sfcrt_session_create_view(v, &opt, &s, &err);
  if (st == SFC_ERR_UNAVAILABLE) {
    printf("%s (%s): skipped: %s\n", name, mode_name(mode), err.message);
    sfcrt_plan_destroy(plan);
    return 77;
  }
  CHECK_EQ_U64(st, SFC_OK);
  if (st != SFC_OK) {
    fprintf(stderr, "%s: %s\n", name, err.message);
    sfcrt_plan_destroy(plan);
    return 1;
  }
  /* VA mode preallocates every chunk: no cuMemCreate inside an iteration */
  long creates_before = fake() ? fake()->mem_creates : 0;
  uint32_t nt = v->tensor_count;
  uint8_t *written = calloc(nt, 1);
  uint64_t *written_it = calloc(nt, sizeof(uint64_t));
  CUdeviceptr *ext = calloc(nt, sizeof(CUdeviceptr));
  uint64_t maxb = 4;
  for (uint32_t t = 0; t < nt; t++)
    if (v->tensors[t].bytes > maxb)
      maxb = v->tensors[t].bytes;
  uint32_t *buf = malloc(maxb);
  size_t reads_cap = 0, nreads = 0;
  for (uint32_t k = 0; k < v->step_count; k++)
    reads_cap += v->ops[v->steps[k].op].input_count;
  async_read_t *reads = flags & RP_ASYNC_READS ? calloc(reads_cap + 1, sizeof *reads) : NULL;
  int eager_before = fake() ? fake()->eager : 0;
  if (fake() && (flags & RP_EAGER_COPIES))
    fake()->eager = 2;
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
  for (uint64_t it = 0; it < 3 && (!mismatches || (flags & RP_EXPECT_RACE)); it++) {
    nreads = 0;
    CHECK_EQ_U64(sfcrt_iteration_begin(s, &err), SFC_OK);
    const sfcrt_step_t *step;
    while ((st = sfcrt_step_next(s, &step, &err)) == SFC_OK && step) {
      const sfc_plan_op_t *op = &v->ops[step->op];
      const uint32_t *tens = &v->op_operands[op->operand_begin];
      CUstream q = (CUstream)step->stream;
      if (flags & RP_DEFAULT_STREAM) {
        CHECK(step->stream == (void *)CU_STREAM_LEGACY);
        q = NULL; /* the framework launches on its default stream, handle 0 */
      }
      if (fake())
        fake()->lazy_stream = q; /* its copies are the kernels' reads: lazy */
      for (uint32_t i = 0; i < step->input_count; i++) {
        uint32_t t = tens[i];
        uint64_t bytes = v->tensors[t].bytes;
        if (!written[t] || bytes % 4)
          continue;
        if (reads && nreads < reads_cap) {
          async_read_t *r = &reads[nreads++];
          uint64_t words = bytes / 4;
          *r = (async_read_t){.step = step->index,
                              .input = i,
                              .tensor = t,
                              .want = pattern(t, written_it[t]),
                              .words = (uint32_t)(words < SAMPLE ? words : SAMPLE)};
          r->at[1] = (words - r->words) / 2;
          r->at[2] = words - r->words;
          for (int k = 0; k < 3; k++)
            cu(drv.fn.cuMemcpyDtoHAsync(r->got[k],
                                        (CUdeviceptr)(uintptr_t)step->inputs[i] + 4 * r->at[k],
                                        4 * (size_t)r->words, q),
               "cuMemcpyDtoHAsync");
          checked++;
          continue;
        }
        cu(drv.fn.cuMemcpyDtoHAsync(buf, (CUdeviceptr)(uintptr_t)step->inputs[i], bytes, q),
           "cuMemcpyDtoHAsync");
        cu(drv.fn.cuStreamSynchronize(q), "cuStreamSynchronize");
        uint32_t want = pattern(t, written_it[t]);
        for (uint64_t w = 0; w < bytes / 4; w++)
          if (buf[w] != want) {
            if (mismatches++ < 5 && !(flags & RP_EXPECT_RACE))
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
    if (reads) {
      cu(drv.fn.cuCtxSynchronize(), "cuCtxSynchronize");
      mismatches += check_async(name, it, reads, nreads, flags & RP_EXPECT_RACE);
    }
  }
  if (!(flags & RP_EXPECT_RACE))
    CHECK_EQ_U64(mismatches, 0);
  CHECK(checked > 0);
  if (fake() && mode != SFCRT_CUDA_ARENA) {
    CHECK_EQ_U64(fake()->mem_creates - creates_before, 0);
    if (fake()->mem_creates != creates_before)
      fprintf(stderr, "%s: %ld cuMemCreate calls inside the iterations\n", name,
              fake()->mem_creates - creates_before);
  }
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
         name, mode_name(mode), v->step_count, v->swap_count, checked,
         (unsigned long long)stats.bytes_swapped_out, (unsigned long long)stats.arena_bytes);
  sfcrt_session_destroy(s);
  CHECK_EQ_U64(count.live_blocks, 0); /* the session and the device freed everything */
  for (uint32_t t = 0; t < nt; t++)
    if (ext[t])
      drv.fn.cuMemFree(ext[t]);
  free(buf);
  free(reads);
  if (fake()) {
    fake()->eager = eager_before;
    fake()->lazy_stream = NULL;
  }
  free(ext);
  free(written);
  free(written_it);
  sfcrt_plan_destroy(plan);
  check_fake_released(name);
  return flags & RP_EXPECT_RACE && mismatches ? 2 : 0;
}

/* Replays builder b's plan (validated unless RP_UNVALIDATED) as replay_view does. */
static int replay_opt(pb_t *b, const char *name, sfcrt_cuda_mode_t mode,
                      const sfcrt_options_t *base, int flags) {
  sfcrt_plan_t *plan = flags & RP_UNVALIDATED ? NULL : rt_load(b);
  if (!plan && !(flags & RP_UNVALIDATED))
    return 1;
  return replay_view(plan, plan ? sfcrt_plan_view(plan) : pb_view(b), name, mode, base, flags);
}

/* The fake's read modes are adversarial as claimed: each broken swap plan (a missing
 * wait) replayed unvalidated loses its race in the modes that can expose it, and
 * together they expose every one. Lazy copies with synchronised reads expose a reader
 * or writer that does not wait for a copy; copies run when issued with reads left lazy
 * expose a copy that does not wait for the step writing its source or reading its
 * destination — the order of a GPU whose copy engines run ahead of compute. */
static void test_race_modes(void) {
  static const struct {
    int variant;
    const char *what;
    int lazy, eager; /* expected: 1 exposed in that mode */
  } cases[] = {
      {RT_NO_WAIT_STEP3_ON_IN, "step 3 reads b' before the swap-in landed", 1, 0},
      {RT_NO_WAIT_STEP1_ON_OUT, "step 1 overwrites b under its swap-out", 1, 0},
      {RT_NO_WAIT_IN_ON_STEP2, "the swap-in overwrites a before step 2 read it", 0, 1},
      {RT_NO_WAIT_OUT_ON_STEP0, "the swap-out copies b before step 0 wrote it", 0, 1},
      {RT_NO_WAIT_IN_ON_OUT, "redundant wait left out (valid)", 0, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    for (int eager = 0; eager < 2; eager++) {
      pb_t *b = pb_new();
      rt_swap_plan(b, cases[i].variant);
      int flags = RP_UNVALIDATED | RP_EXPECT_RACE | (eager ? RP_ASYNC_READS | RP_EAGER_COPIES : 0);
      int r = replay_opt(b, cases[i].what, SFCRT_CUDA_ARENA, NULL, flags);
      pb_free(b);
      int want = eager ? cases[i].eager : cases[i].lazy;
      CHECK_EQ_U64(r, want ? 2 : 0);
      if (r != (want ? 2 : 0))
        fprintf(stderr, "race modes: %s: %s with %s\n", cases[i].what,
                r == 2 ? "exposed" : "not exposed",
                eager ? "copies run when issued, reads lazy" : "lazy copies, reads synchronised");
    }
}

/* The framework writes a host-homed parameter's initial value with an asynchronous
 * copy on its own (default) stream, then begins the iteration, whose first swap-in reads
 * the home: iteration_begin orders the copy queues after the framework's stream, so the
 * swap-in copies the new value. On the fake with copies run when issued, a missing
 * order is a stale read.
 *
 *   step 0  use_w  reads x, w  writes y     w: home H (pinned), swapped in at step 0 */
static void test_begin_orders_copies(void) {
  const uint64_t T = 256;
  pb_t *b = pb_new();
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t w = pb_tensor(b, "w", T, SFC_KIND_PARAM);
  uint32_t y = pb_tensor(b, "y", T, SFC_KIND_OUTPUT);
  uint32_t op = pb_op(b, "use_w", PB_LIST(x, w), PB_LIST(y));
  uint32_t X = pb_block(b, x, 0, T, 0, 0, SFC_BLOCK_PERSISTENT);
  uint32_t W = pb_block(b, w, 256, T, 0, 0, SFC_BLOCK_SWAPPED_IN);
  uint32_t Y = pb_block(b, y, 512, T, 0, 0, 0);
  uint32_t H = pb_host_block(b, w, 0, T, 0, 0);
  pb_host_block_at(b, H)->flags |= SFC_BLOCK_PERSISTENT;
  uint32_t s0 = pb_step(b, op, PB_LIST(X, W, Y));
  uint32_t in = pb_swap(b, SFC_SWAP_IN, W, H, 0);
  pb_dep(b, SFC_NODE_STEP, s0, SFC_NODE_SWAP, in);
  pb_fit_arenas(b);
  sfcrt_plan_t *plan = rt_load(b);
  pb_free(b);
  CHECK(plan != NULL);
  if (!plan)
    return;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.stream = NULL; /* the framework's default stream */
  opt.cuda.has_stream = 1;
  sfcrt_session_t *s = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  void *home = NULL;
  int where = -1;
  CHECK_EQ_U64(sfcrt_session_home(s, w, &home, &where, &err), SFC_OK);
  CHECK_EQ_U64(where, SFCRT_HOME_HOST);
  int eager_before = fake() ? fake()->eager : 0;
  if (fake())
    fake()->eager = 2; /* the runtime's copies run when issued, the framework's lazily */
  CUdeviceptr src = 0;
  uint32_t got[64] = {0};
  if (s && home && cu(drv.fn.cuMemAlloc(&src, T), "cuMemAlloc")) {
    /* the framework: the initial value into the home, on its stream, no synchronize */
    cu(drv.fn.cuMemsetD32Async(src, 0x600DF00Du, T / 4, NULL), "cuMemsetD32Async");
    cu(drv.fn.cuMemcpyDtoHAsync(home, src, T, NULL), "cuMemcpyDtoHAsync");
    CHECK_EQ_U64(sfcrt_iteration_begin(s, &err), SFC_OK);
    const sfcrt_step_t *step = NULL;
    CHECK_EQ_U64(sfcrt_step_next(s, &step, &err), SFC_OK);
    if (step) {
      cu(drv.fn.cuMemcpyDtoHAsync(got, (CUdeviceptr)(uintptr_t)step->inputs[1], T, NULL),
         "cuMemcpyDtoHAsync");
      cu(drv.fn.cuStreamSynchronize(NULL), "cuStreamSynchronize");
      CHECK_EQ_U64(sfcrt_step_done(s, &err), SFC_OK);
      CHECK_EQ_U64(sfcrt_step_next(s, &step, &err), SFC_OK);
    }
    CHECK_EQ_U64(sfcrt_iteration_end(s, &err), SFC_OK);
    CHECK_EQ_U64(got[0], 0x600DF00Du);
    CHECK_EQ_U64(got[63], 0x600DF00Du);
    drv.fn.cuMemFree(src);
  }
  if (fake())
    fake()->eager = eager_before;
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  check_fake_released("begin orders copies");
}

/* `plans FILE...`: compiled plans (out-of-core ones: sfc compile --budget), each in
 * arena, VA and paged mode with reads synchronised, then read without a synchronize; on the
 * fake driver also with copies run when issued (a copy that does not wait for the step
 * writing its source, or a swap-in into bytes a step still reads, then loses). */
static int replay_files(int n, char **paths) {
  int ran = 0, skipped = 0;
  for (int i = 0; i < n; i++) {
    for (int m = 0; m < (fake() ? 9 : 6); m++) {
      sfcrt_cuda_mode_t mode = modes[m % 3];
      int flags = m < 3 ? 0 : m < 6 ? RP_ASYNC_READS : RP_ASYNC_READS | RP_EAGER_COPIES;
      sfcrt_plan_t *plan = NULL;
      sfc_error_t err;
      if (sfcrt_plan_load_file(paths[i], NULL, &plan, &err) != SFC_OK) {
        fprintf(stderr, "%s: %s\n", paths[i], err.message);
        CHECK(0);
        break;
      }
      char name[512];
      snprintf(name, sizeof name, "%s%s%s", paths[i], flags & RP_ASYNC_READS ? ", async reads" : "",
               flags & RP_EAGER_COPIES ? ", eager copies" : "");
      int r = replay_view(plan, sfcrt_plan_view(plan), name, mode, NULL, flags);
      skipped += r == 77;
      ran += r == 0;
    }
  }
  return ran == 0 && skipped > 0 ? 77 : check_summary();
}

/* A swapped-in block nobody reads (a prefetch the schedule then dropped). The reader's
 * validator refuses such a plan (nothing would wait for the swap-in); the device must
 * still never unmap the block's chunks under its H2D copy, so the test replays the
 * builder's view unvalidated (RP_UNVALIDATED):
 *
 *   step  op      reads  writes  blocks
 *   0     make_b  x      b       x persistent, B1 [0,0]
 *         -- swap-out b (waits step 0)
 *   1     make_a  x      a       A [1,2]
 *         -- swap-in b into B2 [2,2] (waits the swap-out); no step ever reads B2
 *   2     use_a   a      c       C [2,3]
 *   3     make_e  c      e       E [3,3]: e is 2 MiB + 256 bytes, two 2 MiB chunks
 *
 * In VA mode the pool is exactly the peak (4 chunks), so mapping e at step 3 reclaims
 * a and then b' by waiting for their events; only an H2D event orders b''s unmap after
 * its copy — compute never waited for it. */
static void prefetch_plan(pb_t *b) {
  const uint64_t T = 256, E = (2u << 20) + 256;
  uint32_t x = pb_tensor(b, "x", T, SFC_KIND_INPUT);
  uint32_t bt = pb_tensor(b, "b", T, SFC_KIND_ACTIVATION);
  uint32_t a = pb_tensor(b, "a", T, SFC_KIND_ACTIVATION);
  uint32_t c = pb_tensor(b, "c", T, SFC_KIND_ACTIVATION);
  uint32_t e = pb_tensor(b, "e", E, SFC_KIND_OUTPUT);
  uint32_t op0 = pb_op(b, "make_b", PB_LIST(x), PB_LIST(bt));
  uint32_t op1 = pb_op(b, "make_a", PB_LIST(x), PB_LIST(a));
  uint32_t op2 = pb_op(b, "use_a", PB_LIST(a), PB_LIST(c));
  uint32_t op3 = pb_op(b, "make_e", PB_LIST(c), PB_LIST(e));
  uint32_t X = pb_block(b, x, 0, T, 0, 3, SFC_BLOCK_PERSISTENT);
  uint32_t B1 = pb_block(b, bt, 256, T, 0, 0, 0);
  uint32_t A = pb_block(b, a, 512, T, 1, 2, 0);
  uint32_t B2 = pb_block(b, bt, 256, T, 2, 2, SFC_BLOCK_SWAPPED_IN);
  uint32_t C = pb_block(b, c, 768, T, 2, 3, 0);
  uint32_t EB = pb_block(b, e, 1024, E, 3, 3, 0);
  uint32_t HB = pb_host_block(b, bt, 0, T, 1, 2);
  uint32_t s0 = pb_step(b, op0, PB_LIST(X, B1));
  pb_step(b, op1, PB_LIST(X, A));
  pb_step(b, op2, PB_LIST(A, C));
  pb_step(b, op3, PB_LIST(C, EB));
  uint32_t out = pb_swap(b, SFC_SWAP_OUT, B1, HB, 1);
  uint32_t in = pb_swap(b, SFC_SWAP_IN, B2, HB, 2);
  pb_dep(b, SFC_NODE_SWAP, out, SFC_NODE_STEP, s0);
  pb_dep(b, SFC_NODE_SWAP, in, SFC_NODE_SWAP, out);
  pb_fit_arenas(b);
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
      f->handles_live || f->reservations_live || f->ctx_retained != 1 + extra_ctx_ ||
      f->ctx_pushed != 1 + extra_ctx_ || f->violations)
    fprintf(stderr,
            "%s: fake driver after destroy: streams %ld events %ld allocs %ld host %ld chunks %ld "
            "reservations %ld retained %ld pushed %ld violations %ld (%s)\n",
            name, f->streams_live, f->events_live, f->allocs_live, f->host_allocs_live,
            f->handles_live, f->reservations_live, f->ctx_retained, f->ctx_pushed, f->violations,
            f->violation);
  CHECK_EQ_U64(f->streams_live + f->events_live + f->allocs_live + f->host_allocs_live, 0);
  CHECK_EQ_U64(f->handles_live + f->reservations_live + f->violations, 0);
  CHECK_EQ_U64(f->ctx_retained, 1 + extra_ctx_); /* the test's own */
  CHECK_EQ_U64(f->ctx_pushed, 1 + extra_ctx_);   /* the test's own: every push was popped */
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

/* Creates a session on the swap plan with `opt` (device and mode set by the caller);
 * returns the status and destroys the session. */
static sfc_status_t create_status(const sfcrt_options_t *opt, sfc_error_t *err) {
  sfcrt_plan_t *plan = load_swap_plan();
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create(plan, opt, &s, err);
  sfcrt_session_destroy(s);
  sfcrt_plan_destroy(plan);
  return st;
}

/* Issue 13, item 1: v100-nvlink2's 40 MiB chunk is not a power of two; the range
 * reservation must still work (fake: 2 MiB granularity, the driver's alignment rule). */
static void test_va_non_power_of_two_chunk(void) {
  fake_cuda_state_t *f = fake();
  size_t gran = f ? f->granularity : 0;
  if (f)
    f->granularity = 2u << 20;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.cuda.va_chunk_bytes = 40u << 20;
  pb_t *b = pb_new();
  rt_swap_plan(b, RT_VALID);
  CHECK_EQ_U64(replay_opt(b, "swap plan, 40 MiB chunks", SFCRT_CUDA_VA, &opt, 0), 0);
  pb_free(b);
  if (f)
    f->granularity = gran;
}

/* Issue 13, item 5: the device comes from the caller's context, and the compute stream
 * must belong to that context. Fake only (it has two devices on request). */
static void test_context_device(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  f->device_count = 2;
  CUcontext ctx1 = NULL, popped = NULL;
  cu(drv.fn.cuDevicePrimaryCtxRetain(&ctx1, 1), "cuDevicePrimaryCtxRetain");
  /* a framework working on device 1 passes its context; ordinal left at 0: the session
   * must map its VA chunks for device 1, where its streams run */
  cu(drv.fn.cuCtxPushCurrent(ctx1), "cuCtxPushCurrent");
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.cuda.context = ctx1;
  pb_t *b = pb_new();
  rt_swap_plan(b, RT_VALID);
  extra_ctx_ = 1;
  CHECK_EQ_U64(replay_opt(b, "swap plan, context of device 1", SFCRT_CUDA_VA, &opt, 0), 0);
  extra_ctx_ = 0;
  pb_free(b);
  /* a stream of device 1's context with device 0's context */
  CUstream s1 = NULL;
  cu(drv.fn.cuStreamCreate(&s1, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  cu(drv.fn.cuCtxPopCurrent(&popped), "cuCtxPopCurrent");
  sfc_error_t err;
  opt.device = "cuda";
  opt.cuda.context = ctx;
  opt.cuda.stream = s1;
  CHECK_EQ_U64(create_status(&opt, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "belongs to another context") != NULL);
  /* and with the primary context of device 0 (no context given) */
  opt.cuda.context = NULL;
  CHECK_EQ_U64(create_status(&opt, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "device 1") != NULL);
  /* an ordinal that contradicts the context */
  opt.cuda.stream = NULL;
  opt.cuda.context = ctx;
  opt.cuda.device_ordinal = 1;
  CHECK_EQ_U64(create_status(&opt, &err), SFC_ERR_INVALID_ARGUMENT);
  CHECK(strstr(err.message, "device_ordinal 1") != NULL);
  cu(drv.fn.cuStreamDestroy(s1), "cuStreamDestroy");
  cu(drv.fn.cuDevicePrimaryCtxRelease(1), "cuDevicePrimaryCtxRelease");
  f->device_count = 1;
  check_fake_released("context of device 1");
}

/* Issue 13, item 6: a session used while its compute stream is captured into a CUDA
 * graph fails with a clear status, before any call capture forbids. Fake only. */
static void test_capture(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  for (int legacy = 0; legacy < 2; legacy++) {
    CUstream fw = NULL;
    cu(drv.fn.cuStreamCreate(&fw, legacy ? 0 : CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    sfcrt_plan_t *plan = load_swap_plan();
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = "cuda";
    opt.cuda.stream = legacy ? NULL : fw; /* legacy: the default stream, while a blocking
                                             stream captures (CAPTURE_IMPLICIT) */
    opt.cuda.has_stream = 1;
    sfcrt_session_t *s = NULL;
    sfc_error_t err;
    CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
    long violations = f->violations;
    CHECK_EQ_U64(fake_capture("fake_cuda_begin_capture", fw), CUDA_SUCCESS);
    sfc_status_t st = sfcrt_iteration_begin(s, &err);
    const sfcrt_step_t *step;
    while (st == SFC_OK && (st = sfcrt_step_next(s, &step, &err)) == SFC_OK && step)
      st = sfcrt_step_done(s, &err);
    if (st == SFC_OK)
      st = sfcrt_iteration_end(s, &err);
    CHECK_EQ_U64(st, SFC_ERR_STATE);
    CHECK(strstr(err.message, "captured into a CUDA graph") != NULL);
    if (f->violations != violations)
      fprintf(stderr, "capture: %s\n", f->violation);
    CHECK_EQ_U64(f->violations, violations); /* nothing capture forbids was called */
    CHECK_EQ_U64(fake_capture("fake_cuda_end_capture", fw), CUDA_SUCCESS); /* not invalidated */
    sfcrt_session_destroy(s);
    sfcrt_plan_destroy(plan);
    cu(drv.fn.cuStreamDestroy(fw), "cuStreamDestroy");
    check_fake_released("capture");
  }
}

/* Issue 13, item 8: a failing cuCtxPopCurrent is an error, not ignored. Fake only. */
static void test_pop_checked(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  f->fail_name = "cuCtxPopCurrent";
  f->fail_nth = 1;
  f->fail_seen_ = 0;
  f->fail_result = CUDA_ERROR_INVALID_CONTEXT;
  sfc_error_t err;
  sfc_status_t st = create_status(&opt, &err);
  f->fail_name = NULL;
  CHECK_EQ_U64(st, SFC_ERR_DEVICE);
  CHECK(strstr(err.message, "cuCtxPopCurrent") != NULL);
  /* the failed pop left the session's context on the stack: take it off */
  CUcontext popped = NULL;
  if (f->ctx_pushed > 1)
    drv.fn.cuCtxPopCurrent(&popped);
  check_fake_released("failing cuCtxPopCurrent");
}

/* Issue 13, item 8: destroy frees everything even when it cannot push the context. */
static void test_destroy_push_fails(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  for (int va = 0; va < 2; va++) {
    sfcrt_plan_t *plan = load_swap_plan();
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = "cuda";
    opt.cuda.mode = va ? SFCRT_CUDA_VA : SFCRT_CUDA_ARENA;
    sfcrt_session_t *s = NULL;
    sfc_error_t err;
    CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
    CHECK_EQ_U64(sfcrt_session_run(s, 1, &err), SFC_OK);
    f->fail_name = "cuCtxPushCurrent";
    f->fail_nth = 1;
    f->fail_seen_ = 0;
    f->fail_result = CUDA_ERROR_INVALID_CONTEXT;
    sfcrt_session_destroy(s);
    f->fail_name = NULL;
    sfcrt_plan_destroy(plan);
    check_fake_released(va ? "destroy without a context (va)" : "destroy without a context");
  }
}

/* Issue 13, item 8: opt.cuda.blocking_sync makes every host wait block on an event
 * instead of spinning in cuStreamSynchronize. Fake only (it counts the waits). */
static void test_blocking_sync(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  for (int va = 0; va < 2; va++) {
    sfcrt_plan_t *plan = load_swap_plan(); /* VA mode: blocking reclaims inside too */
    sfcrt_options_t opt;
    sfcrt_options_init(&opt);
    opt.device = "cuda";
    opt.cuda.mode = va ? SFCRT_CUDA_VA : SFCRT_CUDA_ARENA;
    opt.cuda.blocking_sync = 1;
    sfcrt_session_t *s = NULL;
    sfc_error_t err;
    CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
    long spins = f->spin_waits, blocks = f->blocking_waits;
    CHECK_EQ_U64(sfcrt_session_run(s, 2, &err), SFC_OK);
    CHECK_EQ_U64(f->spin_waits - spins, 0);
    CHECK(f->blocking_waits - blocks >= 2 * 3); /* three queues per iteration_end */
    sfcrt_session_destroy(s);
    sfcrt_plan_destroy(plan);
    check_fake_released("blocking sync");
  }
}

/* Issue 13, item 7: VA mode creates every chunk it will map at session creation, so a
 * device without room fails there, not in the middle of an iteration. Fake only. */
static void test_va_oom_at_create(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  sfcrt_plan_t *plan = load_swap_plan();
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = SFCRT_CUDA_VA;
  sfcrt_session_t *s = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  /* the peak: x, c, b' and d are mapped at step 3, 4 chunks of 2 MiB */
  CHECK_EQ_U64(stats.arena_bytes, 4 * (2u << 20));
  sfcrt_session_destroy(s);
  s = NULL;
  f->mem_limit = stats.arena_bytes - 1; /* one chunk short */
  sfc_status_t st = sfcrt_session_create(plan, &opt, &s, &err);
  if (st == SFC_OK) {
    st = sfcrt_session_run(s, 1, &err);
    fprintf(stderr, "VA session created with %llu bytes of device memory; the iteration: %s\n",
            (unsigned long long)f->mem_limit, err.message);
    CHECK(0);
  }
  CHECK_EQ_U64(st, SFC_ERR_OUT_OF_MEMORY);
  CHECK(strstr(err.message, "cuMemCreate") != NULL);
  sfcrt_session_destroy(s);
  s = NULL;
  f->mem_limit = stats.arena_bytes; /* exactly enough */
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_session_run(s, 3, &err), SFC_OK);
  sfcrt_session_destroy(s);
  f->mem_limit = 0;
  sfcrt_plan_destroy(plan);
  check_fake_released("VA out of memory");
}

/* Paged mode maps only the pages live blocks touch: pb_example_paged at the fake's
 * 64 KiB granularity (tests/plan/plan_examples.c: x has page 0, t1 .. t6 two to a
 * page after it, at most 3 of the 4 pages touched at once), a PAGED plan (1.7) whose
 * page peak is its budget. So the pool is 3 chunks (192 KiB) where the arena is 4 pages
 * (256 KiB): the plan's own page peak. Step 4 needs page 1's chunk, whose last users are
 * t1's reader (step 1) and t2's (step 2): the device must wait for the later one before
 * it unmaps (the fake checks: an unmap under a queued operation is a violation). With
 * one chunk less of device memory the session fails at creation; with exactly the
 * pool it runs. */
static void test_paged_pages(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  const uint64_t page = 64 * 1024;
  pb_t *b = pb_new();
  pb_example_paged(b, page);
  CHECK_EQ_U64(pb_header(b)->arena_bytes, 4 * page);
  CHECK_EQ_U64(pb_meta(b)->page_peak_bytes, 3 * page);
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = SFCRT_CUDA_PAGED; /* pages of the plan's va_chunk_bytes */
  sfcrt_plan_t *plan = rt_load(b);
  sfcrt_session_t *s = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  sfcrt_stats_t stats = {0};
  if (s)
    sfcrt_session_stats(s, &stats);
  CHECK_EQ_U64(stats.arena_bytes, 3 * page); /* the plan's page peak */
  sfcrt_session_destroy(s);
  s = NULL;
  f->mem_limit = 3 * page - 1; /* one chunk short */
  sfc_status_t st = sfcrt_session_create(plan, &opt, &s, &err);
  CHECK_EQ_U64(st, SFC_ERR_OUT_OF_MEMORY);
  if (st == SFC_ERR_OUT_OF_MEMORY)
    CHECK(strstr(err.message, "cuda paged mode: chunk pool") != NULL);
  sfcrt_session_destroy(s);
  s = NULL;
  /* the driver calls, counted by hand from the table: x's page is mapped at creation;
   * iteration 1 maps pages 1 and 2, then page 3 at step 4 in page 1's chunk (pages
   * 2 and 3 stay mapped, pending, at its end); iterations 2 and 3 each map page 1 at
   * step 0 (in page 2's chunk), page 2 at step 2 (page 3's) and page 3 at step 4 (page
   * 1's): 1 + 3 + 3 + 3 = 10 maps, 1 + 3 + 3 = 7 unmaps. Nothing runs before an iteration's end
   * on the lazy fake, so the one reclaim whose last users are of the same iteration —
   * page 1's, at step 4 — waits, once per iteration; the others' were drained by the
   * end of the iteration before. */
  f->mem_limit = 0;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s, &err), SFC_OK);
  if (s) {
    CHECK_EQ_U64(sfcrt_session_run(s, 3, &err), SFC_OK);
    sfcrt_session_stats(s, &stats);
    CHECK_EQ_U64(stats.chunks_mapped, 10);
    CHECK_EQ_U64(stats.chunks_unmapped, 7);
    CHECK_EQ_U64(stats.unmap_waits, 3);
  }
  sfcrt_session_destroy(s);
  s = NULL;
  f->mem_limit = 3 * page; /* exactly the page peak: every iteration reuses the chunks */
  CHECK_EQ_U64(replay_opt(b, "paged chain", SFCRT_CUDA_PAGED, &opt, 0), 0);
  /* reads left to the stream: nothing has run when a chunk is needed, so at step 4 of
   * every iteration the device waits for page 1's last reader — 3 waits more than the
   * same replay in arena mode (the other maps find pages whose users are done: the last
   * iteration's, drained at its end) */
  f->mem_limit = 0;
  long waits = f->spin_waits;
  CHECK_EQ_U64(replay_opt(b, "paged chain, async reads", SFCRT_CUDA_ARENA, NULL, RP_ASYNC_READS),
               0);
  long arena_waits = f->spin_waits - waits;
  f->mem_limit = 3 * page;
  waits = f->spin_waits;
  CHECK_EQ_U64(replay_opt(b, "paged chain, async reads", SFCRT_CUDA_PAGED, &opt, RP_ASYNC_READS),
               0);
  CHECK_EQ_U64(f->spin_waits - waits, arena_waits + 3);
  f->mem_limit = 0;
  sfcrt_plan_destroy(plan);
  pb_free(b);
  check_fake_released("paged chain");
}

/* A reclaim scan queries few events however many pages are pending. x (persistent,
 * page 0); steps 0 .. P-1 each write t_i (page 1 + i), all read by step P, which writes
 * u; then a chain c_1 .. c_M on fresh pages. The page peak is at step P (P + 2 pages),
 * so after it the P pages of t are pending with the pool full, and every c_j's map
 * must find a chunk among them. With reads left to the stream nothing has run: each
 * scan finds the oldest pending page's last user incomplete and waits for it. A stream
 * completes its records in order, so the scan asks the driver about that one record
 * and none of the later ones on its queue. */
static void test_paged_scan(void) {
  fake_cuda_state_t *f = fake();
  if (!f)
    return;
  enum { P = 24, M = 16 };
  const uint64_t page = 64 * 1024;
  const uint32_t last = P + M;
  pb_t *b = pb_new();
  uint32_t relu = pb_str(b, "relu");
  uint32_t x = pb_tensor(b, "x", page, SFC_KIND_INPUT);
  uint32_t bx = pb_block(b, x, 0, page, 0, last, SFC_BLOCK_PERSISTENT);
  uint32_t t[P + 1], bt[P + 1];
  char name[16];
  for (uint32_t i = 0; i < P; i++) {
    snprintf(name, sizeof name, "t%u", i);
    t[i] = pb_tensor(b, name, page, SFC_KIND_ACTIVATION);
    snprintf(name, sizeof name, "a%u", i);
    uint32_t op = pb_op(b, name, PB_LIST(x), PB_LIST(t[i]));
    pb_op_at(b, op)->type = relu;
    bt[i] = pb_block(b, t[i], (1 + i) * page, page, i, P, 0);
    pb_step(b, op, PB_LIST(bx, bt[i]));
  }
  uint32_t u = pb_tensor(b, "u", page, SFC_KIND_ACTIVATION);
  uint32_t bu = pb_block(b, u, (1 + P) * page, page, P, P + 1, 0);
  t[P] = u;
  bt[P] = bu;
  uint32_t op = pb_op(b, "sum", t, P, &u, 1);
  pb_op_at(b, op)->type = relu;
  pb_step(b, op, bt, P + 1);
  uint32_t prev = u, prev_block = bu;
  for (uint32_t j = 1; j <= M; j++) {
    snprintf(name, sizeof name, "c%u", j);
    uint32_t c = pb_tensor(b, name, page, j == M ? SFC_KIND_OUTPUT : SFC_KIND_ACTIVATION);
    snprintf(name, sizeof name, "relu%u", j);
    op = pb_op(b, name, PB_LIST(prev), PB_LIST(c));
    pb_op_at(b, op)->type = relu;
    uint32_t bc = pb_block(b, c, (1 + P + j) * page, page, P + j, j == M ? last : P + j + 1, 0);
    pb_step(b, op, PB_LIST(prev_block, bc));
    prev = c;
    prev_block = bc;
  }
  pb_fit_arenas(b);
  pb_header(b)->budget_bytes = pb_header(b)->arena_bytes;
  pb_meta(b)->graph_op_count = P + 1 + M;
  pb_meta(b)->graph_tensor_count = P + 2 + M;
  pb_meta(b)->in_core_peak_bytes = pb_meta(b)->lower_bound_bytes = (P + 2) * page;
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = SFCRT_CUDA_PAGED;
  opt.cuda.va_chunk_bytes = page;
  f->mem_limit = (P + 2) * page; /* the page peak: every c_j's map must reclaim */
  long queries = f->event_queries, waits = f->spin_waits;
  CHECK_EQ_U64(replay_opt(b, "paged scan", SFCRT_CUDA_PAGED, &opt, RP_ASYNC_READS), 0);
  /* at most two queries per map and iteration: the scan's, which finds the oldest
   * pending page's last user incomplete, and the wait's (a scan asking about every
   * pending page made 1200 in the 3 iterations) */
  CHECK(f->event_queries - queries <= 3 * 2 * M);
  CHECK(f->spin_waits - waits >= 3 * M);
  f->mem_limit = 0;
  pb_free(b);
  check_fake_released("paged scan");
}

/* Two sessions alive in one process, destroyed in turn, then a third: each keeps its
 * own streams and memory and the driver stays usable (runs on a GPU too). */
static void test_two_sessions(void) {
  sfcrt_plan_t *plan = load_swap_plan();
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  sfcrt_session_t *s1 = NULL, *s2 = NULL, *s3 = NULL;
  sfc_error_t err;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s1, &err), SFC_OK);
  opt.cuda.mode = SFCRT_CUDA_VA;
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s2, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_session_run(s1, 2, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_session_run(s2, 2, &err), SFC_OK);
  sfcrt_session_destroy(s1);
  CHECK_EQ_U64(sfcrt_session_run(s2, 1, &err), SFC_OK);
  sfcrt_session_destroy(s2);
  CHECK_EQ_U64(sfcrt_session_create(plan, &opt, &s3, &err), SFC_OK);
  CHECK_EQ_U64(sfcrt_session_run(s3, 1, &err), SFC_OK);
  sfcrt_session_destroy(s3);
  sfcrt_plan_destroy(plan);
  check_fake_released("two sessions");
}

/* main's context popped and released, the driver unloaded. */
static void release_driver(void) {
  CUcontext popped;
  drv.fn.cuCtxPopCurrent(&popped);
  drv.fn.cuDevicePrimaryCtxRelease(dev);
  sfcrt_cuda_driver_unload(&drv);
}

int main(int argc, char **argv) {
  /* argv[1]: "arena", "va", "paged" or "legacy" (the three modes on PyTorch's default
   * stream) to run one of them (the gpu tests), nothing for all */
  int want[4] = {1, 1, 1, 1};
  int files = argc > 1 && strcmp(argv[1], "plans") == 0;
  if (argc > 1 && !files) {
    const char *names[4] = {"arena", "va", "paged", "legacy"};
    int found = 0;
    for (int i = 0; i < 4; i++) {
      want[i] = strcmp(argv[1], names[i]) == 0;
      found |= want[i];
    }
    if (!found) {
      fprintf(stderr, "usage: %s [arena|va|paged|legacy | plans FILE...]\n", argv[0]);
      return 2;
    }
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
  if (files) {
    /* a line per replay as it ends: a run killed for time (tools/gpu-check) shows how far
     * it got, not a buffer that died with it */
    setvbuf(stdout, NULL, _IOLBF, 0);
    int rc = replay_files(argc - 2, argv + 2);
    release_driver();
    return rc;
  }

  int skipped = 0, ran = 0;
  for (int m = 0; m < 6; m++) {
    /* 0 arena, 1 va, 2 paged, 3 .. 5: the three on the default stream */
    if (!want[m < 3 ? m : 3])
      continue;
    sfcrt_cuda_mode_t mode = modes[m % 3];
    int flags = m >= 3 ? RP_DEFAULT_STREAM : 0;
    static const char *const names[] = {"swap plan", "chain of 8", "example_full", "prefetch"};
    for (int p = 0; p < 4; p++) {
      pb_t *b = pb_new();
      if (p == 0)
        rt_swap_plan(b, RT_VALID);
      else if (p == 1)
        pb_simple_chain(b, 8);
      else if (p == 2)
        pb_example_full(b);
      else
        prefetch_plan(b);
      char name[64];
      snprintf(name, sizeof(name), "%s%s", names[p], flags ? ", default stream" : "");
      int r = replay_opt(b, name, mode, NULL, flags | (p == 3 ? RP_UNVALIDATED : 0));
      pb_free(b);
      skipped += r == 77;
      ran += r == 0;
    }
  }
  if (ran > 0 && argc == 1) {
    RUN(test_race_modes);
    RUN(test_begin_orders_copies);
    RUN(test_driver_failures);
    RUN(test_framework_stream);
    RUN(test_va_non_power_of_two_chunk);
    RUN(test_context_device);
    RUN(test_capture);
    RUN(test_pop_checked);
    RUN(test_destroy_push_fails);
    RUN(test_blocking_sync);
    RUN(test_va_oom_at_create);
    RUN(test_paged_pages);
    RUN(test_paged_scan);
    RUN(test_two_sessions);
  } else if (ran > 0 && want[1]) {
    RUN(test_va_non_power_of_two_chunk); /* the real driver's alignment rule */
    RUN(test_two_sessions);
  }
  release_driver();
  if (ran == 0 && skipped > 0)
    return 77;
  return check_summary();
}
