/* plan_mutants.c — the mutant census: how many checksum-fixed random mutants of the
 * seed plans the runtime's loader accepts, and whether every accepted one replays.
 *
 *   plan_mutants [--count N] [--seed S] [--expect-clean] [--show K] [--keep DIR] SEED...
 *
 * SEED: plan files or folders of *.plan (tests/fuzz/corpus/plan). Mutant i starts from
 * seed i mod (number of seeds), gets 1 to 4 edits of plan_mutate.h (rng seeded from S
 * and i, so a census is the same on every run and machine) and plan_fix_crcs. Then:
 *
 *   reached   the loader got past structure and references (status OK or
 *             SFC_ERR_VERIFY): the mutant reached the semantic checks;
 *   accepted  the loader said OK;
 *   disagree  the runtime's validator (sfcrt_plan_validate) and the compiler's
 *             verifier (sfc_verify_plan, budget not checked) disagree on the mutant's
 *             records: both run on a view read straight from the mutated bytes (the
 *             mutator leaves the section table alone), so a mutant either accepts is
 *             compared, not just the ones the loader accepts;
 *   failed    accepted, and a replay failed: host device in integrity mode with each
 *             lag knob (copies held back, then steps held back: a missing wait loses
 *             its race whatever the scheduler does), 2 iterations each, external
 *             tensors bound to zeroed memory; and the sim device, 2 iterations;
 *             and, where the cuda device is built, the cuda device on the fake driver
 *             (tests/runtime_cuda/fake_cuda.h: lazy asynchronous streams, VA ranges
 *             on real host mappings) in arena, VA and paged mode, 2 iterations: every step
 *             writes a byte pattern of (tensor, iteration) over its outputs and reads
 *             back and compares its inputs; a mismatch, a session error or a fake
 *             driver violation (an unmapped range touched, a range unmapped while a
 *             queued copy still uses it) is a failure (the seeds' arenas are under
 *             1 KiB, one page of the fake's 64 KiB granularity: paged mode maps that
 *             page and never reclaims here — its reclaim is test_cuda_device_fake's
 *             paged tests' and cuda_replay_compiled's);
 *   skipped   accepted but not replayed: arenas or external tensors above 64 MiB, or (VA and
 *             paged mode only)
 *             META.va_chunk_bytes above 64 MiB (how much memory a replay may take is
 *             a resource, not a plan rule) — counted, never hidden.
 *
 * Prints one summary line (and the first K failures with their message). With
 * --expect-clean the exit status is 1 when any accepted mutant failed a replay or
 * the verifier disagreed (the CTest test test_plan_mutants); else 0. --keep DIR writes
 * every failing mutant to DIR/mutant-<i>.plan for a closer look. Nothing here depends
 * on timing: the lag knobs make a missing wait lose deterministically.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "interp.h"
#include "plan_mutate.h"
#include "plan_raw_view.h"
#include "sfc/plan_reader.h"
#include "sfcrt.h"
#include "verify.h"
#if defined(SFC_HAVE_CUDA) && SFC_HAVE_CUDA && defined(SFC_FAKE_LIBCUDA)
#define CENSUS_CUDA 1
#include <dlfcn.h>

#include "cuda_loader.h"
#include "fake_cuda.h"
#else
#define CENSUS_CUDA 0
#endif

#define MAX_SEEDS     64
#define REPLAY_ARENAS (UINT64_C(64) << 20)

typedef struct seed {
  uint8_t *data;
  size_t size;
  char name[256];
} seed_t;

static seed_t seeds[MAX_SEEDS];
static int seed_count;

static int add_file(const char *path) {
  if (seed_count == MAX_SEEDS)
    return 0;
  FILE *f = fopen(path, "rb");
  if (!f)
    return 0;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  seed_t *s = &seeds[seed_count];
  s->data = malloc(n > 0 ? (size_t)n : 1);
  if (!s->data || n < 0 || fread(s->data, 1, (size_t)n, f) != (size_t)n) {
    fclose(f);
    free(s->data);
    return 0;
  }
  fclose(f);
  s->size = (size_t)n;
  snprintf(s->name, sizeof s->name, "%s", path);
  seed_count++;
  return 1;
}

static int name_less(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int add_path(const char *path) {
  struct stat st;
  if (stat(path, &st) != 0)
    return 0;
  if (!S_ISDIR(st.st_mode))
    return add_file(path);
  DIR *d = opendir(path);
  if (!d)
    return 0;
  char *names[MAX_SEEDS];
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL && n < MAX_SEEDS) {
    size_t len = strlen(e->d_name);
    if (len > 5 && strcmp(e->d_name + len - 5, ".plan") == 0) {
      names[n] = malloc(strlen(path) + len + 2);
      sprintf(names[n], "%s/%s", path, e->d_name);
      n++;
    }
  }
  closedir(d);
  qsort(names, (size_t)n, sizeof *names, name_less); /* readdir order is not stable */
  int ok = 1;
  for (int i = 0; i < n; i++) {
    ok &= add_file(names[i]);
    free(names[i]);
  }
  return ok;
}

/* One replay; externals bound to zeroed memory on the host device. */
static sfc_status_t replay(const sfc_plan_view_t *v, const char *device, int lag,
                           sfc_error_t *err) {
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = device;
  opt.host.integrity = strcmp(device, "host") == 0;
  opt.host.lag = lag;
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create_view(v, &opt, &s, err);
  void **ext = calloc(v->tensor_count ? v->tensor_count : 1, sizeof *ext);
  for (uint32_t t = 0; st == SFC_OK && t < v->tensor_count && strcmp(device, "host") == 0; t++) {
    if (!(v->tensors[t].flags & SFC_TENSOR_EXTERNAL))
      continue;
    uint64_t bytes = v->tensors[t].bytes ? v->tensors[t].bytes : 1;
    ext[t] = bytes <= REPLAY_ARENAS ? calloc(1, (size_t)bytes) : NULL;
    st = ext[t] ? sfcrt_session_bind(s, t, ext[t], bytes, err)
                : sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "external tensor %u too large", t);
  }
  if (st == SFC_OK)
    st = sfcrt_session_run(s, 2, err);
  sfcrt_session_destroy(s);
  for (uint32_t t = 0; t < v->tensor_count; t++)
    free(ext[t]);
  free(ext);
  return st;
}

#if CENSUS_CUDA
static sfcrt_cuda_driver_t drv;
static fake_cuda_state_t *fake;
static CUcontext ctx;
static CUdevice cu_dev;

static void (*fake_reset)(void);

static int cuda_init(void) {
  setenv("SFCRT_CUDA_LIBRARY", SFC_FAKE_LIBCUDA, 1);
  sfc_error_t err;
  if (sfcrt_cuda_driver_load(&drv, &err) != SFC_OK)
    return 0;
  void *sym = dlsym(drv.library, "fake_cuda_state"), *reset = dlsym(drv.library, "fake_cuda_reset");
  if (!sym || !reset)
    return 0;
  fake_cuda_state_t *(*state)(void);
  memcpy(&state, &sym, sizeof sym);
  memcpy(&fake_reset, &reset, sizeof reset);
  fake = state();
  return 1;
}

/* A fresh fake driver for each replay (it never reuses a stream slot, so a long census
 * would run out of them), with its primary context current. */
static int cuda_fresh(void) {
  fake_reset();
  return drv.fn.cuDeviceGet(&cu_dev, 0) == CUDA_SUCCESS &&
         drv.fn.cuDevicePrimaryCtxRetain(&ctx, cu_dev) == CUDA_SUCCESS &&
         drv.fn.cuCtxPushCurrent(ctx) == CUDA_SUCCESS;
}

static void cuda_done(void) {
  CUcontext popped;
  drv.fn.cuCtxPopCurrent(&popped);
  drv.fn.cuDevicePrimaryCtxRelease(cu_dev);
}

static uint8_t pattern(uint32_t t, uint64_t version) {
  return (uint8_t)(1 + (t * 131u + (uint32_t)version * 29u) % 255u);
}

/* Bytes the framework touches through operand j of step k: its tensor's, or for a
 * PARTIAL block its box's (elements times the dtype's size, else the tensor's bytes
 * over its element count, rounded up: what a swap of the block copies). */
static uint64_t touched(const sfc_plan_view_t *v, uint32_t k, uint32_t j) {
  const sfc_plan_step_t *s = &v->steps[k];
  const sfc_plan_block_t *b = &v->blocks[v->step_operands[s->operand_begin + j]];
  const sfc_plan_tensor_t *t = &v->tensors[b->tensor];
  if (!(b->flags & SFC_BLOCK_PARTIAL) || (b->flags & SFC_BLOCK_EXTERNAL) ||
      b->box >= v->box_count || v->boxes[b->box].ndim > SFC_PLAN_BOX_DIMS)
    return t->bytes; /* (a loader that let a bad box through: the census of an old one) */
  uint64_t n = 1, elem = sfc_dtype_bytes(t->dtype);
  for (uint32_t d = 0; !elem && d < t->ndim; d++)
    n = t->shape[d] <= 0                         ? n
        : n > UINT64_MAX / (uint64_t)t->shape[d] ? UINT64_MAX
                                                 : n * (uint64_t)t->shape[d];
  if (!elem)
    elem = t->bytes / n + (t->bytes % n != 0);
  const sfc_plan_box_t *x = &v->boxes[b->box];
  for (uint32_t d = 0; d < x->ndim; d++)
    elem *= (uint64_t)(x->hi[d] - x->lo[d]); /* <= the block's bytes (the loader checked) */
  return elem;
}

/* The framework's side of a cuda replay on the fake driver: outputs get pattern(t,
 * iteration + 1) (cuMemsetD32Async on the step's stream, whole words), inputs are read back
 * (cuMemcpyDtoHAsync + synchronize) and compared with the version last written;
 * persistent and external tensors start at version 0, written at their first read. */
static sfc_status_t replay_cuda(const sfc_plan_view_t *v, sfcrt_cuda_mode_t mode,
                                sfc_error_t *err) {
  if (!cuda_fresh()) {
    cuda_done();
    return sfc_error_set(err, SFC_ERR_DEVICE, "fake driver: no primary context");
  }
  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "cuda";
  opt.cuda.mode = mode;
  sfcrt_session_t *s = NULL;
  sfc_status_t st = sfcrt_session_create_view(v, &opt, &s, err);
  if (st == SFC_ERR_UNAVAILABLE) { /* VA mode needs one block per tensor at a time; VA
                                     and paged mode an arena aligned as reserved */
    sfcrt_session_destroy(s);
    cuda_done();
    return st;
  }
  uint32_t nt = v->tensor_count ? v->tensor_count : 1;
  CUdeviceptr *ext = calloc(nt, sizeof *ext);
  uint64_t *version = malloc(nt * sizeof *version), maxb = 1;
  for (uint32_t t = 0; t < v->tensor_count; t++)
    version[t] = UINT64_MAX;
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_op_t *o = &v->ops[v->steps[k].op];
    for (uint32_t j = 0; j < (uint32_t)o->input_count + o->output_count + o->temp_count; j++)
      maxb = touched(v, k, j) > maxb ? touched(v, k, j) : maxb;
  }
  uint8_t *buf = malloc(maxb);
  for (uint32_t t = 0; st == SFC_OK && t < v->tensor_count; t++)
    if (v->tensors[t].flags & SFC_TENSOR_EXTERNAL) {
      uint64_t n = v->tensors[t].bytes ? v->tensors[t].bytes : 1;
      if (drv.fn.cuMemAlloc(&ext[t], n) != CUDA_SUCCESS)
        st = sfc_error_set(err, SFC_ERR_DEVICE, "cuMemAlloc of an external tensor failed");
      else
        st = sfcrt_session_bind(s, t, (void *)(uintptr_t)ext[t], n, err);
    }
  for (uint64_t it = 0; st == SFC_OK && it < 2; it++) {
    st = sfcrt_iteration_begin(s, err);
    const sfcrt_step_t *step;
    while (st == SFC_OK && (st = sfcrt_step_next(s, &step, err)) == SFC_OK && step) {
      const uint32_t *tens = &v->op_operands[v->ops[step->op].operand_begin];
      CUstream q = (CUstream)step->stream;
      for (uint32_t i = 0; st == SFC_OK && i < step->input_count; i++) {
        uint32_t t = tens[i];
        uint64_t n = touched(v, step->index, i) / 4 * 4; /* cuMemsetD32: whole words */
        CUdeviceptr p = (CUdeviceptr)(uintptr_t)step->inputs[i];
        if (version[t] == UINT64_MAX) {
          if (!(v->tensors[t].flags & (SFC_TENSOR_PERSISTENT | SFC_TENSOR_EXTERNAL))) {
            st = sfc_error_set(err, SFC_ERR_INTEGRITY,
                               "cuda: step %u reads tensor %u before any step wrote it",
                               step->index, t);
            break;
          }
          drv.fn.cuMemsetD32Async(p, pattern(t, 0) * 0x01010101u, n / 4, q);
          version[t] = 0;
        }
        drv.fn.cuMemcpyDtoHAsync(buf, p, n, q);
        drv.fn.cuStreamSynchronize(q);
        for (uint64_t b = 0; b < n; b++)
          if (buf[b] != pattern(t, version[t])) {
            st = sfc_error_set(err, SFC_ERR_INTEGRITY,
                               "cuda: iteration %llu step %u: input %u (tensor %u) byte %llu is "
                               "0x%02x, expected 0x%02x",
                               (unsigned long long)it, step->index, i, t, (unsigned long long)b,
                               buf[b], pattern(t, version[t]));
            break;
          }
      }
      uint32_t n_out = (uint32_t)step->output_count + step->temp_count;
      for (uint32_t o = 0; st == SFC_OK && o < n_out; o++) {
        uint32_t j = step->input_count + o, t = tens[j];
        void *p = o < step->output_count ? step->outputs[o] : step->temps[o - step->output_count];
        drv.fn.cuMemsetD32Async((CUdeviceptr)(uintptr_t)p, pattern(t, it + 1) * 0x01010101u,
                                touched(v, step->index, j) / 4, q);
        version[t] = it + 1;
      }
      if (st == SFC_OK)
        st = sfcrt_step_done(s, err);
    }
    if (st == SFC_OK)
      st = sfcrt_iteration_end(s, err);
  }
  sfcrt_session_destroy(s);
  for (uint32_t t = 0; t < v->tensor_count; t++)
    if (ext[t])
      drv.fn.cuMemFree(ext[t]);
  drv.fn.cuCtxSynchronize();
  free(ext);
  free(version);
  free(buf);
  if (st == SFC_OK && fake->violations)
    st = sfc_error_set(err, SFC_ERR_DEVICE, "fake driver: %s", fake->violation);
  cuda_done();
  return st;
}
#endif

static void usage(void) {
  fprintf(stderr, "usage: plan_mutants [--count N] [--seed S] [--expect-clean] [--show K] "
                  "[--keep DIR] SEED...\n");
  exit(2);
}

int main(int argc, char **argv) {
  long count = 3000, show = 5;
  uint64_t base = 1;
  int expect_clean = 0;
  const char *keep = NULL;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--count") == 0 && i + 1 < argc)
      count = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc)
      base = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--show") == 0 && i + 1 < argc)
      show = strtol(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--keep") == 0 && i + 1 < argc)
      keep = argv[++i];
    else if (strcmp(argv[i], "--expect-clean") == 0)
      expect_clean = 1;
    else if (argv[i][0] == '-')
      usage();
    else if (!add_path(argv[i])) {
      fprintf(stderr, "plan_mutants: cannot read %s\n", argv[i]);
      return 2;
    }
  }
  if (seed_count == 0)
    usage();
  enum { MODES = 6, VERIFIER = MODES };
  static const char *const mode_name[MODES + 1] = {"host+integrity lag=copies",
                                                   "host+integrity lag=compute",
                                                   "sim",
                                                   "cuda (fake driver) arena",
                                                   "cuda (fake driver) VA",
                                                   "cuda (fake driver) paged",
                                                   "verifier"};
  static const sfcrt_cuda_mode_t cuda_mode[MODES] = {
      0, 0, 0, SFCRT_CUDA_ARENA, SFCRT_CUDA_VA, SFCRT_CUDA_PAGED};
  int modes = 3;
#if CENSUS_CUDA
  if (cuda_init())
    modes = MODES;
#endif
  long reached = 0, accepted = 0, disagree = 0, failed = 0, skipped = 0, shown = 0, va_skipped = 0;
  long compared = 0;
  long fail_mode[MODES] = {0}, unavailable[MODES] = {0};
  for (long i = 0; i < count; i++) {
    const seed_t *s = &seeds[i % seed_count];
    uint8_t *d = malloc(s->size ? s->size : 1);
    memcpy(d, s->data, s->size);
    uint64_t rng = (base * 0x9E3779B97F4A7C15ull) ^ ((uint64_t)i * 0xD1B54A32D192ED03ull) ^ 1;
    int edits = 1 + (int)(plan_mutate_rand(&rng) % 4);
    size_t n = s->size;
    for (int e = 0; e < edits; e++)
      n = plan_mutate(d, n, &rng);
    plan_fix_crcs(d, n);
    /* the two implementations of the rules on the same records */
    sfc_plan_view_t tv;
    if (plan_raw_view(d, n, &tv)) {
      sfc_error_t e1, e2;
      sfc_status_t s1 = sfcrt_plan_validate(&tv, NULL, &e1),
                   s2 = sfc_verify_plan(&tv, false, NULL, &e2);
      if ((s1 == SFC_OK) != (s2 == SFC_OK)) {
        disagree++;
        if (shown++ < show)
          printf("  mutant %ld (of %s): the runtime's validator says \"%s\", the verifier \"%s\"\n",
                 i, s->name, s1 == SFC_OK ? "ok" : e1.message, s2 == SFC_OK ? "ok" : e2.message);
      }
      compared++;
    }
    sfcrt_plan_t *plan = NULL;
    sfc_error_t err;
    sfc_status_t st = sfcrt_plan_load_buffer(d, n, NULL, &plan, &err);
    reached += st == SFC_OK || st == SFC_ERR_VERIFY;
    if (st != SFC_OK) {
      free(d);
      continue;
    }
    accepted++;
    const sfc_plan_view_t *v = sfcrt_plan_view(plan);
    int bad = -1;
    sfc_error_t why;
    if (sfc_verify_plan(v, false, NULL, &why) != SFC_OK)
      bad = VERIFIER; /* counted above (the loader's view holds the same records) */
    int big = v->header.arena_bytes > REPLAY_ARENAS || v->header.host_arena_bytes > REPLAY_ARENAS;
    for (uint32_t t = 0; t < v->tensor_count; t++)
      big |= (v->tensors[t].flags & SFC_TENSOR_EXTERNAL) && v->tensors[t].bytes > REPLAY_ARENAS;
    if (big) {
      skipped++;
    } else {
      int modes_failed = 0;
      for (int m = 0; m < modes; m++) {
        sfc_error_t e;
        sfc_status_t r;
        if (m < 2)
          r = replay(v, "host", m == 0 ? SFCRT_HOST_LAG_COPIES : SFCRT_HOST_LAG_COMPUTE, &e);
        else if (m == 2)
          r = replay(v, "sim", 0, &e);
#if CENSUS_CUDA
        else if (m == 3 || v->meta.va_chunk_bytes <= REPLAY_ARENAS)
          r = replay_cuda(v, cuda_mode[m], &e);
        else {
          r = SFC_OK; /* a chunk above 64 MiB: a resource, not a rule (counted below) */
          va_skipped += m == 4;
        }
#else
        else
          r = SFC_OK;
#endif
        if (r == SFC_OK)
          continue;
        if (r == SFC_ERR_UNAVAILABLE) { /* the mode refused the plan at session creation */
          unavailable[m]++;
          continue;
        }
        fail_mode[m]++;
        if (!modes_failed++) {
          failed++;
          if (bad < 0) {
            bad = m;
            why = e;
          }
        }
      }
    }
    if (bad >= 0 && shown < show) {
      shown++;
      printf("  mutant %ld (of %s): %s: %s\n", i, s->name, mode_name[bad], why.message);
    }
    if (bad >= 0 && keep) {
      char path[4096];
      snprintf(path, sizeof path, "%s/mutant-%ld.plan", keep, i);
      FILE *f = fopen(path, "wb");
      if (f) {
        fwrite(d, 1, n, f);
        fclose(f);
      }
    }
    sfcrt_plan_destroy(plan);
    free(d);
  }
  printf("plan_mutants: %ld mutants of %d seeds: %ld reached the semantic checks, %ld accepted "
         "by the loader; runtime validator and compiler verifier disagree on %ld of %ld; %ld "
         "accepted mutants failed a replay",
         count, seed_count, reached, accepted, disagree, compared, failed);
  for (int m = 0; m < modes; m++)
    printf("%s %ld %s", m ? "," : " (", fail_mode[m], mode_name[m]);
  printf("), %ld not replayed (arena or external tensor > 64 MiB)", skipped);
  if (modes == MODES)
    printf(", %ld not replayed in VA and paged mode (META.va_chunk_bytes > 64 MiB), %ld refused "
           "by VA mode and %ld by paged mode (SFC_ERR_UNAVAILABLE: a tensor with two blocks, an "
           "arena aligned beyond the reservation's)",
           va_skipped, unavailable[4], unavailable[5]);
  printf("\n");
#if CENSUS_CUDA
  if (modes == MODES)
    sfcrt_cuda_driver_unload(&drv);
#endif
  for (int i = 0; i < seed_count; i++)
    free(seeds[i].data);
  return expect_clean && (failed || disagree) ? 1 : 0;
}
