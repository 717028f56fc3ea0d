/* test_config.c — config v1: defaults, built-in profiles, precedence, budget
 * defaulting, write/load round trips, the valid configs in tests/data/configs, and
 * every tests/data/bad_configs/NAME.yaml checked against its NAME.yaml.err line at
 * the library level ("sfc: " + message, @INPUT@ = the path), with the caller's
 * config unchanged on every error.
 *
 * `test_config --print-defaults` prints the default config; that output is the
 * golden file tests/data/configs/default.yaml (regenerate it with
 * `build/tests/config/test_config --print-defaults > tests/data/configs/default.yaml`).
 */
#include <dirent.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>

#include "check.h"
#include "config.h"

#define GiB (1ull << 30)
#define MiB (1ull << 20)

/* ---- helpers ------------------------------------------------------------------ */

static char *read_whole(const char *path, size_t *out_bytes) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  size_t cap = 4096, n = 0;
  char *buf = malloc(cap + 1);
  for (size_t got; buf && (got = fread(buf + n, 1, cap - n, f)) > 0;) {
    n += got;
    if (n == cap) {
      char *nb = realloc(buf, 2 * cap + 1);
      if (!nb)
        free(buf);
      buf = nb, cap *= 2;
    }
  }
  fclose(f);
  if (buf)
    buf[n] = '\0';
  if (out_bytes)
    *out_bytes = n;
  return buf;
}

/* Field-by-field equality, everything but `source`; reports the first difference. */
static bool config_equal(const sfc_config_t *a, const sfc_config_t *b) {
#define SAME(f)                                                                                    \
  if (!(a->f == b->f)) {                                                                           \
    fprintf(stderr, "  config field %s differs\n", #f);                                            \
    return false;                                                                                  \
  }
#define SAME_STR(f)                                                                                \
  if (strcmp(a->f, b->f) != 0) {                                                                   \
    fprintf(stderr, "  config field %s differs: '%s' vs '%s'\n", #f, a->f, b->f);                  \
    return false;                                                                                  \
  }
  SAME_STR(device.name);
  SAME_STR(device.description);
  SAME(device.memory_bytes);
  SAME(device.h2d_bytes_per_s);
  SAME(device.d2h_bytes_per_s);
  SAME(device.duplex_factor);
  SAME(device.copy_latency_s);
  SAME(device.alignment);
  SAME(device.va_chunk_bytes);
  SAME(device.peak_flops);
  SAME(device.memory_bytes_per_s);
  SAME(device.launch_overhead_s);
  SAME(device.dense_flops_efficiency);
  SAME(device.dense_bytes_efficiency);
  SAME(device.elementwise_flops_efficiency);
  SAME(device.elementwise_bytes_efficiency);
  SAME(budget_bytes);
  SAME(scheduler.policy);
  SAME(scheduler.window_auto);
  SAME(scheduler.window_bytes);
  SAME(scheduler.prefetch_limit);
  SAME(tiling.mode);
  SAME(tiling.max_tiles);
  SAME(tiling.min_tile);
  SAME(tiling.halo);
  SAME(tiling.grid[0]);
  SAME(tiling.grid[1]);
  SAME(tiling.segments);
  SAME_STR(packer.algorithm);
  SAME(packer.mip_max_blocks);
  SAME(packer.time_limit_s);
  SAME(host.staging_budget_bytes);
  SAME(arena.kind);
  SAME(arena.page_bytes);
  SAME(arena.page_map_s);
  return true;
#undef SAME
#undef SAME_STR
}

/* Loads text on top of the defaults; returns the status, cfg and err filled. */
static sfc_status_t load_text(const char *text, sfc_config_t *cfg, sfc_error_t *err) {
  sfc_config_defaults(cfg);
  return sfc_config_load_buffer(text, strlen(text), "t.yaml", cfg, err);
}

/* write_yaml(cfg) into a string (caller frees). */
static char *write_to_string(const sfc_config_t *cfg, size_t *out_bytes) {
  char *text = NULL;
  size_t bytes = 0;
  FILE *f = open_memstream(&text, &bytes);
  if (!f)
    return NULL;
  sfc_config_write_yaml(cfg, f);
  fclose(f);
  *out_bytes = bytes;
  return text;
}

/* load(write(cfg)) on top of the defaults must give cfg back. */
static void check_round_trip(const sfc_config_t *cfg, const char *what) {
  size_t bytes = 0;
  char *text = write_to_string(cfg, &bytes);
  CHECK(text != NULL);
  if (!text)
    return;
  sfc_config_t back;
  sfc_error_t err = {0};
  sfc_config_defaults(&back);
  CHECK_OK(sfc_config_load_buffer(text, bytes, what, &back, &err), err);
  bool same = config_equal(cfg, &back);
  if (!same)
    fprintf(stderr, "  round trip of %s failed; written:\n%s", what, text);
  CHECK(same);
  CHECK_STR_EQ(back.source, what);
  free(text);
}

/* ---- tests -------------------------------------------------------------------- */

static void test_defaults(void) {
  sfc_config_t c;
  sfc_config_defaults(&c);
  CHECK_STR_EQ(c.source, "(defaults)");
  CHECK_STR_EQ(c.device.name, "h200-pcie5");
  CHECK_EQ_U64(c.device.memory_bytes, 141000000000ull);
  CHECK_EQ_U64(c.budget_bytes, c.device.memory_bytes);
  CHECK(c.device.h2d_bytes_per_s == 55e9);
  CHECK(c.device.d2h_bytes_per_s == 55e9);
  CHECK(c.device.duplex_factor == 0.7);
  CHECK(c.device.copy_latency_s == 10e-6);
  CHECK_EQ_U64(c.device.alignment, 256);
  CHECK_EQ_U64(c.device.va_chunk_bytes, 2 * MiB);
  CHECK(c.device.peak_flops == 67e12);
  CHECK_EQ_I64(c.scheduler.policy, SFC_SCHED_WINDOW);
  CHECK(c.scheduler.window_auto);
  CHECK_EQ_U64(c.scheduler.prefetch_limit, 0);
  CHECK_EQ_I64(c.tiling.mode, SFC_TILING_AUTO);
  CHECK_EQ_U64(c.tiling.max_tiles, 1024);
  CHECK_EQ_U64(c.tiling.min_tile, 16);
  CHECK_EQ_I64(c.tiling.halo, SFC_HALO_MASKED);
  CHECK_EQ_U64(c.tiling.grid[0], 0); /* auto */
  CHECK_EQ_U64(c.tiling.grid[1], 0);
  CHECK_EQ_I64(c.tiling.segments, SFC_SEGMENTS_AUTO);
  CHECK_STR_EQ(c.packer.algorithm, "auto");
  CHECK_EQ_U64(c.packer.mip_max_blocks, 30);
  CHECK(c.packer.time_limit_s == 10.0);
  CHECK_EQ_U64(c.host.staging_budget_bytes, 0);
}

static void test_names(void) {
  CHECK_STR_EQ(sfc_sched_policy_name(SFC_SCHED_NONE), "none");
  CHECK_STR_EQ(sfc_sched_policy_name(SFC_SCHED_WINDOW), "window");
  CHECK_STR_EQ(sfc_sched_policy_name(SFC_SCHED_VDNN), "vdnn");
  CHECK_STR_EQ(sfc_sched_policy_name(SFC_SCHED_LMS), "lms");
  CHECK_STR_EQ(sfc_tiling_mode_name(SFC_TILING_OFF), "off");
  CHECK_STR_EQ(sfc_tiling_mode_name(SFC_TILING_ON), "on");
  CHECK_STR_EQ(sfc_tiling_mode_name(SFC_TILING_AUTO), "auto");
  CHECK_STR_EQ(sfc_tiling_mode_name(SFC_TILING_FASTEST), "fastest");
  CHECK_STR_EQ(sfc_tiling_halo_name(SFC_HALO_MASKED), "masked");
  CHECK_STR_EQ(sfc_tiling_halo_name(SFC_HALO_SEED), "seed");
  CHECK_STR_EQ(sfc_tiling_segments_name(SFC_SEGMENTS_AUTO), "auto");
  CHECK_STR_EQ(sfc_tiling_segments_name(SFC_SEGMENTS_LONGEST), "longest");
  CHECK_STR_EQ(sfc_sched_policy_name((sfc_sched_policy_t)99), "unknown");
}

static void test_profiles(void) {
  /* memory bandwidth: the datasheets' figures (profiles.c cites each one) */
  static const struct {
    const char *name;
    uint64_t memory;
    double h2d, duplex, flops;
    uint64_t va_chunk;
    double memory_bw;
  } want[] = {
      {"h200-pcie5", 141000000000ull, 55e9, 0.7, 67e12, 2 * MiB, 4.8e12},
      {"a100-pcie4", 40 * GiB, 26e9, 0.7, 19.5e12, 2 * MiB, 1555e9},
      {"v100-nvlink2", 16 * GiB, 50e9, 1.0, 15.7e12, 40 * MiB, 900e9},
      {"rtx2080ti-pcie3", 11 * GiB, 12e9, 0.7, 13.4e12, 2 * MiB, 616e9},
  };
  size_t n = 0;
  const sfc_profile_t *all = sfc_profiles(&n);
  CHECK_EQ_U64(n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const sfc_profile_t *p = sfc_profile_find(want[i].name);
    CHECK(p != NULL);
    if (!p)
      continue;
    CHECK_STR_EQ(p->name, want[i].name);
    CHECK_EQ_U64(p->memory_bytes, want[i].memory);
    CHECK(p->h2d_bytes_per_s == want[i].h2d);
    CHECK(p->d2h_bytes_per_s == want[i].h2d);
    CHECK(p->duplex_factor == want[i].duplex);
    CHECK(p->peak_flops == want[i].flops);
    CHECK(p->copy_latency_s == 10e-6);
    CHECK_EQ_U64(p->alignment, 256);
    CHECK_EQ_U64(p->va_chunk_bytes, want[i].va_chunk);
    CHECK(p->memory_bytes_per_s == want[i].memory_bw);
    CHECK(p->launch_overhead_s == 5e-6);
    CHECK(p->dense_flops_efficiency == 0.9 && p->elementwise_flops_efficiency == 0.9);
    CHECK(p->dense_bytes_efficiency == 0.85 && p->elementwise_bytes_efficiency == 0.85);
  }
  for (size_t i = 0; i < n; i++) { /* every profile obeys the loader's rules */
    const sfc_profile_t *p = &all[i];
    CHECK(p->description[0] != '\0');
    CHECK(p->alignment && (p->alignment & (p->alignment - 1)) == 0);
    CHECK(p->va_chunk_bytes % p->alignment == 0);
    CHECK(p->duplex_factor > 0 && p->duplex_factor <= 1);
    CHECK(p->h2d_bytes_per_s > 0 && p->d2h_bytes_per_s > 0 && p->peak_flops > 0);
    CHECK(p->memory_bytes_per_s >= SFC_RATE_MIN && p->memory_bytes_per_s <= SFC_RATE_MAX);
    CHECK(p->launch_overhead_s >= 0 && p->launch_overhead_s <= SFC_LAUNCH_MAX_S);
    const double eff[] = {p->dense_flops_efficiency, p->dense_bytes_efficiency,
                          p->elementwise_flops_efficiency, p->elementwise_bytes_efficiency};
    for (size_t k = 0; k < 4; k++)
      CHECK(eff[k] >= SFC_EFFICIENCY_MIN && eff[k] <= 1);
    CHECK(sfc_profile_find(p->name) == p);
  }
  CHECK(sfc_profile_find("h100") == NULL);
  CHECK(sfc_profile_find("") == NULL);
  CHECK(sfc_profile_find(NULL) == NULL);
}

static void test_precedence(void) {
  sfc_config_t a, b;
  sfc_error_t err = {0};
  /* The profile applies first, wherever it is written. */
  CHECK_OK(load_text("device:\n  profile: v100-nvlink2\n  h2d_bandwidth: 40GB/s\n", &a, &err), err);
  CHECK_OK(load_text("device:\n  h2d_bandwidth: 40GB/s\n  profile: v100-nvlink2\n", &b, &err), err);
  CHECK(a.device.h2d_bytes_per_s == 40e9);
  CHECK(a.device.d2h_bytes_per_s == 50e9);
  CHECK_STR_EQ(a.device.name, "v100-nvlink2");
  CHECK(config_equal(&a, &b));

  /* budget defaults to the memory: of the profile, or of an explicit memory. */
  CHECK_OK(load_text("device:\n  profile: a100-pcie4\n", &a, &err), err);
  CHECK_EQ_U64(a.budget_bytes, 40 * GiB);
  CHECK_OK(load_text("device:\n  memory: 24GiB\n", &a, &err), err);
  CHECK_EQ_U64(a.device.memory_bytes, 24 * GiB);
  CHECK_EQ_U64(a.budget_bytes, 24 * GiB);
  CHECK_STR_EQ(a.device.name, "h200-pcie5"); /* overrides keep the profile's name */
  CHECK_OK(load_text("device:\n  budget: 8GiB\n  profile: a100-pcie4\n  memory: 24GiB\n", &a, &err),
           err);
  CHECK_EQ_U64(a.budget_bytes, 8 * GiB);
  CHECK_EQ_U64(a.device.memory_bytes, 24 * GiB);

  /* A file that leaves the device alone leaves the caller's budget alone. */
  sfc_config_defaults(&a);
  a.budget_bytes = 5 * GiB;
  const char *text = "scheduler:\n  policy: vdnn\n";
  CHECK_OK(sfc_config_load_buffer(text, strlen(text), "t.yaml", &a, &err), err);
  CHECK_EQ_U64(a.budget_bytes, 5 * GiB);
  CHECK_EQ_I64(a.scheduler.policy, SFC_SCHED_VDNN);
  /* ... but a profile resets it to the new memory. */
  text = "device:\n  profile: rtx2080ti-pcie3\n";
  CHECK_OK(sfc_config_load_buffer(text, strlen(text), "t.yaml", &a, &err), err);
  CHECK_EQ_U64(a.budget_bytes, 11 * GiB);

  /* budget > memory is judged after the profile, whatever the order. */
  CHECK_EQ_I64(load_text("device:\n  budget: 20GiB\n  profile: v100-nvlink2\n", &a, &err),
               SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "t.yaml:2:11: device.budget: 20GiB is larger than the device memory "
                            "(16GiB)");
  CHECK_OK(
      load_text("device:\n  budget: 20GiB\n  profile: v100-nvlink2\n  memory: 32GiB\n", &a, &err),
      err);

  /* window: auto or a size; auto again clears the size. */
  CHECK_OK(load_text("scheduler:\n  window: 512MiB\n", &a, &err), err);
  CHECK(!a.scheduler.window_auto);
  CHECK_EQ_U64(a.scheduler.window_bytes, 512 * MiB);
  text = "scheduler:\n  window: auto\n";
  CHECK_OK(sfc_config_load_buffer(text, strlen(text), "t.yaml", &a, &err), err);
  CHECK(a.scheduler.window_auto);
  CHECK_EQ_U64(a.scheduler.window_bytes, 0);
}

static void test_valid_files(void) {
  static const char *const names[] = {"default.yaml", "v100.yaml",          "a100-budget.yaml",
                                      "empty.yaml",   "comments-only.yaml", "override-all.yaml",
                                      "styles.yaml"};
  sfc_config_t defaults, c[sizeof names / sizeof names[0]];
  sfc_config_defaults(&defaults);
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    char rel[64], path[4096];
    snprintf(rel, sizeof rel, "configs/%s", names[i]);
    snprintf(path, sizeof path, "%s", test_data(rel));
    sfc_error_t err = {0};
    sfc_config_defaults(&c[i]);
    CHECK_OK(sfc_config_load_file(path, &c[i], &err), err);
    CHECK_STR_EQ(c[i].source, path);
  }
  CHECK(config_equal(&c[0], &defaults)); /* default.yaml */
  CHECK(config_equal(&c[3], &defaults)); /* empty */
  CHECK(config_equal(&c[4], &defaults)); /* comments only */

  const sfc_config_t *v = &c[1];
  CHECK_STR_EQ(v->device.name, "v100-nvlink2");
  CHECK_EQ_U64(v->device.memory_bytes, 16 * GiB);
  CHECK_EQ_U64(v->budget_bytes, 16 * GiB);
  CHECK(v->device.h2d_bytes_per_s == 50e9 && v->device.duplex_factor == 1.0);

  const sfc_config_t *a = &c[2];
  CHECK_STR_EQ(a->device.name, "a100-pcie4");
  CHECK_EQ_U64(a->budget_bytes, 30 * GiB);
  CHECK_EQ_U64(a->device.memory_bytes, 40 * GiB);

  const sfc_config_t *o = &c[5];
  CHECK_STR_EQ(o->device.name, "rtx2080ti-pcie3");
  CHECK_EQ_U64(o->device.memory_bytes, 24 * GiB);
  CHECK_EQ_U64(o->budget_bytes, 20 * GiB);
  CHECK(o->device.h2d_bytes_per_s == 25.6 * (double)GiB);
  CHECK(o->device.d2h_bytes_per_s == 24e9);
  CHECK(o->device.duplex_factor == 0.85);
  CHECK(o->device.copy_latency_s == 8.5e-6);
  CHECK_EQ_U64(o->device.alignment, 512);
  CHECK_EQ_U64(o->device.va_chunk_bytes, 4 * MiB);
  CHECK(o->device.peak_flops == 35.6e12);
  CHECK(o->device.memory_bytes_per_s == 936e9);
  CHECK(o->device.launch_overhead_s == 3e-6);
  CHECK(o->device.dense_flops_efficiency == 0.8);
  CHECK(o->device.dense_bytes_efficiency == 0.7);
  CHECK(o->device.elementwise_flops_efficiency == 0.6);
  CHECK(o->device.elementwise_bytes_efficiency == 0.75);
  CHECK_EQ_I64(o->scheduler.policy, SFC_SCHED_LMS);
  CHECK(!o->scheduler.window_auto);
  CHECK_EQ_U64(o->scheduler.window_bytes, 6 * GiB);
  CHECK_EQ_U64(o->scheduler.prefetch_limit, 4);
  CHECK_EQ_I64(o->tiling.mode, SFC_TILING_ON);
  CHECK_EQ_U64(o->tiling.max_tiles, 256);
  CHECK_EQ_U64(o->tiling.min_tile, 32);
  CHECK_EQ_I64(o->tiling.halo, SFC_HALO_SEED);
  CHECK_EQ_U64(o->tiling.grid[0], 8);
  CHECK_EQ_U64(o->tiling.grid[1], 16);
  CHECK_EQ_I64(o->tiling.segments, SFC_SEGMENTS_LONGEST);
  CHECK_STR_EQ(o->packer.algorithm, "greedy-size");
  CHECK_EQ_U64(o->packer.mip_max_blocks, 12);
  CHECK(o->packer.time_limit_s == 1.5);
  CHECK_EQ_U64(o->host.staging_budget_bytes, 64 * GiB);

  const sfc_config_t *s = &c[6];
  CHECK_STR_EQ(s->device.name, "v100-nvlink2");
  CHECK_EQ_U64(s->budget_bytes, 12 * GiB);
  CHECK(s->device.copy_latency_s == 15e-6);
  CHECK_EQ_U64(s->host.staging_budget_bytes, 32000000000ull);
  CHECK_EQ_U64(s->tiling.max_tiles, 1024);
}

static void test_write_round_trip(void) {
  sfc_config_t c;
  sfc_config_defaults(&c);
  check_round_trip(&c, "defaults");

  size_t n = 0;
  const sfc_profile_t *all = sfc_profiles(&n);
  for (size_t i = 0; i < n; i++) {
    sfc_config_defaults(&c);
    c.device = all[i];
    c.budget_bytes = all[i].memory_bytes;
    check_round_trip(&c, all[i].name);
  }

  sfc_error_t err = {0};
  sfc_config_defaults(&c);
  CHECK_OK(sfc_config_load_file(test_data("configs/override-all.yaml"), &c, &err), err);
  check_round_trip(&c, "override-all");

  /* Edited by hand, with values that need care to print exactly. */
  sfc_config_defaults(&c);
  c.device.memory_bytes = 80 * GiB + 4096;
  c.budget_bytes = 77777777777ull;
  c.device.h2d_bytes_per_s = 1.0 / 3.0 * 1e10;
  c.device.d2h_bytes_per_s = 123456789.125;
  c.device.duplex_factor = 0.123456789;
  c.device.copy_latency_s = 1.0 / 7.0 * 1e-5;
  c.device.alignment = 1u << 20;
  c.device.va_chunk_bytes = 3u << 20;
  c.device.peak_flops = 1e18; /* the largest allowed (config.h) */
  c.device.memory_bytes_per_s = 1.0 / 3.0 * 1e12;
  c.device.launch_overhead_s = 1.0 / 3.0 * 1e-5;
  c.device.dense_flops_efficiency = 0.01; /* the smallest allowed */
  c.device.dense_bytes_efficiency = 1;
  c.device.elementwise_flops_efficiency = 1.0 / 3.0;
  c.device.elementwise_bytes_efficiency = 0.123456789;
  c.scheduler.policy = SFC_SCHED_NONE;
  c.scheduler.window_auto = false;
  c.scheduler.window_bytes = 1;
  c.scheduler.prefetch_limit = 1000000;
  c.tiling.mode = SFC_TILING_OFF;
  c.tiling.max_tiles = 1;
  c.tiling.min_tile = 65536;
  c.tiling.grid[0] = c.tiling.grid[1] = 1; /* within max_tiles 1 */
  c.tiling.segments = SFC_SEGMENTS_LONGEST;
  snprintf(c.packer.algorithm, sizeof c.packer.algorithm, "%s", "greedy-lifetime-bestgap");
  c.packer.mip_max_blocks = 0;
  c.packer.time_limit_s = 1e-3; /* the smallest allowed */
  c.host.staging_budget_bytes = 1ull << 60;
  c.arena.kind = SFC_ARENA_PAGED;
  c.arena.page_bytes = 3u << 20; /* a multiple of the alignment, not a power of two */
  c.arena.page_map_s = 12.5e-6;
  check_round_trip(&c, "edited");
}

static void test_default_golden(void) {
  sfc_config_t c;
  sfc_config_defaults(&c);
  size_t bytes = 0, golden_bytes = 0;
  char *text = write_to_string(&c, &bytes);
  char *golden = read_whole(test_data("configs/default.yaml"), &golden_bytes);
  CHECK(golden != NULL);
  if (text && golden) {
    CHECK_EQ_U64(bytes, golden_bytes);
    CHECK_STR_EQ(text, golden);
  }
  free(text);
  free(golden);
}

/* The bad-config corpus: every NAME.yaml has NAME.yaml.err with the CLI's line. */
static void test_bad_corpus(void) {
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", test_data("bad_configs"));
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  if (!d)
    return;
  int files = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len < 6 || strcmp(e->d_name + len - 5, ".yaml") != 0)
      continue;
    files++;
    char path[4600], err_path[4700];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(err_path, sizeof err_path, "%s.err", path);
    char *want_raw = read_whole(err_path, NULL);
    CHECK(want_raw != NULL);
    if (!want_raw) {
      fprintf(stderr, "  missing %s\n", err_path);
      continue;
    }
    /* One line; @INPUT@ stands for the path. */
    char *nl = strchr(want_raw, '\n');
    if (nl)
      *nl = '\0';
    char *want = malloc(strlen(want_raw) + strlen(path) + 1);
    char *at = strstr(want_raw, "@INPUT@");
    if (want && at) {
      *at = '\0';
      strcat(strcat(strcpy(want, want_raw), path), at + 7);
    } else if (want) {
      strcpy(want, want_raw);
    }
    free(want_raw);

    sfc_config_t cfg, before;
    sfc_config_defaults(&cfg);
    cfg.budget_bytes = 3 * GiB; /* not a default, so a stray write would show */
    snprintf(cfg.source, sizeof cfg.source, "caller");
    memcpy(&before, &cfg, sizeof cfg);
    sfc_error_t err = {0};
    sfc_status_t st = sfc_config_load_file(path, &cfg, &err);
    char got[SFC_ERROR_MESSAGE_BYTES + 8];
    snprintf(got, sizeof got, "sfc: %s", err.message);
    CHECK(st != SFC_OK);
    CHECK_EQ_I64(err.status, st);
    CHECK_EQ_I64(st, strstr(e->d_name, "version") ? SFC_ERR_VERSION : SFC_ERR_BAD_INPUT);
    CHECK_STR_EQ(got, want);
    CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);
    free(want);
  }
  closedir(d);
  CHECK(files >= 14);
  fprintf(stderr, "  %d bad configs\n", files);
}

/* Errors that are easier to state inline than as files. */
static void test_errors_inline(void) {
  static const struct {
    const char *text;
    sfc_status_t status;
    const char *message;
  } cases[] = {
      {"? [a, b]\n: 1\n", SFC_ERR_BAD_INPUT, "t.yaml:1:3: config: expected a key, got a sequence"},
      {"device:\n  ? {a: 1}\n  : 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:5: device: expected a key, got a mapping"},
      {"device:\n  memory: \"8\\0GB\"\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:11: device.memory: '8?GB' contains a NUL character"},
      {"device:\n  memory: !big 80GB\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:11: device.memory: tags (!big) are not supported"},
      {"device: &d\n  memory: 80GB\n", SFC_ERR_BAD_INPUT,
       "t.yaml:1:9: device: anchors (&d) are not supported"},
      {"42\n", SFC_ERR_BAD_INPUT,
       "t.yaml:1:1: config: expected a mapping of sections (version, device, scheduler, tiling, "
       "packer, host), got a scalar"},
      {"version: one\n", SFC_ERR_BAD_INPUT,
       "t.yaml:1:10: version: expected the version number 1, got 'one'"},
      {"version: 1\nversion: 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:1: version: duplicate key (first at 1:1)"},
      {"version: 99999999999999999999999\n", SFC_ERR_BAD_INPUT,
       "t.yaml:1:10: version: expected the version number 1, got '99999999999999999999999'"},
      {"version: 0\n", SFC_ERR_VERSION,
       "t.yaml:1:10: version: unsupported config version 0 (this sfc reads 1)"},
      {"device:\n  peak_flops: lots\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: device.peak_flops: expected a number, got 'lots'"},
      {"device:\n  peak_flops: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: device.peak_flops: '0' is not in 1e6..1e18"},
      {"device:\n  peak_flops: 1e-300\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: device.peak_flops: '1e-300' is not in 1e6..1e18"},
      {"device:\n  peak_flops: 1.5e18\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: device.peak_flops: '1.5e18' is not in 1e6..1e18"},
      {"device:\n  peak_flops: 1e999\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: device.peak_flops: expected a number, got '1e999'"},
      {"device:\n  duplex_factor: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.duplex_factor: '0' is not in 0.01..1"},
      {"device:\n  duplex_factor: 0.009\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.duplex_factor: '0.009' is not in 0.01..1"},
      {"device:\n  h2d_bandwidth: 0GB/s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.h2d_bandwidth: '0GB/s' is not in 1KB/s..1PB/s"},
      {"device:\n  h2d_bandwidth: 999B/s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.h2d_bandwidth: '999B/s' is not in 1KB/s..1PB/s"},
      {"device:\n  d2h_bandwidth: 1.01PB/s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.d2h_bandwidth: '1.01PB/s' is not in 1KB/s..1PB/s"},
      {"device:\n  d2h_bandwidth: 1PiB/s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:18: device.d2h_bandwidth: '1PiB/s' is not in 1KB/s..1PB/s"},
      {"device:\n  copy_latency: 1.5s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:17: device.copy_latency: '1.5s' is not in 0..1s"},
      {"device:\n  copy_latency: 10\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:17: device.copy_latency: '10' is not in 0..1s (a number without a unit is "
       "seconds)"},
      {"device:\n  alignment: 2MiB\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:14: device.alignment: '2MiB' is larger than 1MiB"},
      {"device:\n  alignment: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:14: device.alignment: '0' must be greater than 0"},
      {"device:\n  alignment: 1MiB\n  va_chunk: 2MiB\n  alignment: 1KiB\n", SFC_ERR_BAD_INPUT,
       "t.yaml:4:3: device.alignment: duplicate key (first at 2:3)"},
      {"device:\n  va_chunk: 1000\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:13: device.va_chunk: 1KB is not a multiple of the alignment (256B)"},
      {"device:\n  policy: lms\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: device.policy: unknown key; expected one of: profile, memory, budget, "
       "h2d_bandwidth, d2h_bandwidth, duplex_factor, copy_latency, alignment, va_chunk, "
       "peak_flops, memory_bandwidth, launch_overhead, dense_flops_efficiency, "
       "dense_bytes_efficiency, elementwise_flops_efficiency, elementwise_bytes_efficiency, "
       "arena, page, page_map_cost"},
      /* the device time model's keys: bounds and units like every other field */
      {"device:\n  dense_flops_efficiency: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:27: device.dense_flops_efficiency: '0' is not in 0.01..1"},
      {"device:\n  elementwise_bytes_efficiency: 1.01\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:33: device.elementwise_bytes_efficiency: '1.01' is not in 0.01..1"},
      {"device:\n  dense_bytes_efficiency: 85%\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:27: device.dense_bytes_efficiency: expected a number, got '85%'"},
      {"device:\n  elementwise_flops_efficiency: -0.5\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:33: device.elementwise_flops_efficiency: expected a number, got '-0.5'"},
      {"device:\n  memory_bandwidth: 900GB\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:21: device.memory_bandwidth: missing '/s' in '900GB' (rates take B/s, kB/s, "
       "KB/s, MB/s, GB/s, TB/s, PB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s)"},
      {"device:\n  memory_bandwidth: 2PB/s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:21: device.memory_bandwidth: '2PB/s' is not in 1KB/s..1PB/s"},
      {"device:\n  launch_overhead: 5\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:20: device.launch_overhead: '5' is not in 0..1s (a number without a unit is "
       "seconds)"},
      {"scheduler:\n  bogus: 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: scheduler.bogus: unknown key; expected one of: policy, window, prefetch_limit"},
      {"tiling:\n  bogus: 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: tiling.bogus: unknown key; expected one of: mode, max_tiles, min_tile, halo, "
       "grid, segments"},
      /* tiling.grid: auto or ROWSxCOLUMNS, each 1..2^20, at most max_tiles tiles */
      {"tiling:\n  grid: 0x4\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: '0x4': rows and columns must each be in 1..1048576"},
      {"tiling:\n  grid: 4x1048577\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: '4x1048577': rows and columns must each be in 1..1048576"},
      {"tiling:\n  grid: 99999999999999999999x2\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got "
       "'99999999999999999999x2'"},
      {"tiling:\n  grid: abc\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got 'abc'"},
      {"tiling:\n  grid: 8 x 8\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '8 x 8'"},
      {"tiling:\n  grid: 8X8\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '8X8'"},
      {"tiling:\n  grid: 32\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '32'"},
      {"tiling:\n  grid: -2x2\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '-2x2'"},
      {"tiling:\n  grid: 2x2x2\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '2x2x2'"},
      {"tiling:\n  grid:\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: tiling.grid: missing value (expected auto or a grid)"},
      /* the tile count against max_tiles, wherever either is given */
      {"tiling:\n  grid: 33x32\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: 33x32 is 1056 tiles, more than tiling.max_tiles (1024)"},
      {"tiling:\n  grid: 8x8\n  max_tiles: 63\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.grid: 8x8 is 64 tiles, more than tiling.max_tiles (63)"},
      {"tiling:\n  segments: one\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:13: tiling.segments: unknown segments rule 'one'; expected one of: auto, "
       "longest"},
      {"tiling:\n  halo: artifact\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:9: tiling.halo: unknown halo mode 'artifact'; expected one of: masked, seed"},
      {"packer:\n  bogus: 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: packer.bogus: unknown key; expected one of: algorithm, mip_max_blocks, "
       "time_limit"},
      {"host:\n  bogus: 1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: host.bogus: unknown key; expected one of: staging_budget"},
      {"scheduler:\n  prefetch_limit: 1000001\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:19: scheduler.prefetch_limit: '1000001' is not in 0..1000000"},
      {"scheduler:\n  window: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:11: scheduler.window: '0' must be greater than 0"},
      {"tiling:\n  min_tile: -1\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:13: tiling.min_tile: expected a whole number, got '-1'"},
      {"packer:\n  time_limit: 0s\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: packer.time_limit: '0s' is not in 1ms..86400s"},
      {"packer:\n  time_limit: 0\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: packer.time_limit: '0' is not in 1ms..86400s"},
      {"packer:\n  time_limit: 999us\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: packer.time_limit: '999us' is not in 1ms..86400s"},
      {"packer:\n  time_limit: 86401\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: packer.time_limit: '86401' is not in 1ms..86400s (a number without a unit "
       "is seconds)"},
      {"packer:\n  time_limit: 5 min\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:15: packer.time_limit: unknown unit 'min' in '5 min' (durations take ns, us, "
       "ms, s)"},
      {"packer:\n  mip_max_blocks: 3\n  algorithm: nope\n", SFC_ERR_BAD_INPUT,
       "t.yaml:3:14: packer.algorithm: unknown packer 'nope'; expected one of: auto, best-fit, "
       "greedy-size, greedy-lifetime, greedy-area, greedy-start, greedy-size-bestgap, "
       "greedy-lifetime-bestgap, greedy-area-bestgap, greedy-start-bestgap, mip, search"},
      {"packer:\n  algorithm: \"-\"\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:14: packer.algorithm: '-' is not a name (1 to 31 characters of a-z, 0-9 and -, "
       "not "
       "starting with -)"},
      {"packer:\n  algorithm: \"\"\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:14: packer.algorithm: '' is not a name (1 to 31 characters of a-z, 0-9 and -, not "
       "starting with -)"},
      {"packer:\n  algorithm: abcdefghijabcdefghijabcdefghijab\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:14: packer.algorithm: 'abcdefghijabcdefghijabcdefghijab' is not a name (1 to 31 "
       "characters of a-z, 0-9 and -, not starting with -)"},
      {"device:\n  memory: 80GB\n  bugdet_with_a_very_long_name_that_goes_on_and_on: 1\n",
       SFC_ERR_BAD_INPUT,
       "t.yaml:3:3: device.bugdet_with_a_very_long_name_that_goes_o...: unknown key; expected "
       "one of: profile, memory, budget, h2d_bandwidth, d2h_bandwidth, duplex_factor, "
       "copy_latency, alignment, va_chunk, peak_flops, memory_bandwidth, launch_overhead, "
       "dense_flops_efficiency, dense_bytes_efficiency, elementwise_flops_efficiency, "
       "elementwise_bytes_efficiency, arena, page, page_map_cost"},
      {"device:\n  memory: {a: 1}\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:11: device.memory: expected a size, got a mapping"},
      {"scheduler: [window]\n", SFC_ERR_BAD_INPUT,
       "t.yaml:1:12: scheduler: expected a mapping of scheduler fields, got a sequence"},
      {"device: *x\n", SFC_ERR_BAD_INPUT, "t.yaml:1:9: device: aliases (*x) are not supported"},
      {"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[\n",
       SFC_ERR_BAD_INPUT,
       "t.yaml:1:1: config: expected a mapping of sections (version, device, scheduler, tiling, "
       "packer, host), got a sequence"},
      {"device:\n  memory: 1GB\n  # budget 2GB, over the memory:\n  budget: 2GB\n",
       SFC_ERR_BAD_INPUT, "t.yaml:4:11: device.budget: 2GB is larger than the device memory (1GB)"},
      {"device:\r\n  bugdet: 1GB\r\n", SFC_ERR_BAD_INPUT,
       "t.yaml:2:3: device.bugdet: unknown key; expected one of: profile, memory, budget, "
       "h2d_bandwidth, d2h_bandwidth, duplex_factor, copy_latency, alignment, va_chunk, "
       "peak_flops, memory_bandwidth, launch_overhead, dense_flops_efficiency, "
       "dense_bytes_efficiency, elementwise_flops_efficiency, elementwise_bytes_efficiency, "
       "arena, page, page_map_cost"},
      {"device:\n  memory: 80GB\n\x01\n", SFC_ERR_BAD_INPUT,
       "t.yaml:3:1: yaml: control characters are not allowed (0x1)"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    sfc_config_t cfg, before;
    sfc_config_defaults(&cfg);
    memcpy(&before, &cfg, sizeof cfg);
    sfc_error_t err = {0};
    /* the NUL case needs its true length; the others are C strings */
    size_t len = strlen(cases[i].text);
    sfc_status_t st = sfc_config_load_buffer(cases[i].text, len, "t.yaml", &cfg, &err);
    CHECK_EQ_I64(st, cases[i].status);
    CHECK_STR_EQ(err.message, cases[i].message);
    CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);
  }
}

static void test_accepted_forms(void) {
  static const char *const ok[] = {
      "",
      "\n\n",
      "# only a comment",
      "---\n",
      "---\n...\n",
      "~\n",
      "null\n",
      "version: 1\n",
      "version: \"1\"\n",
      "version: 01\n",
      "device:\nscheduler: ~\ntiling: null\npacker: {}\nhost:\n",
      "device: {profile: a100-pcie4, budget: 20GiB}\n",
      "\xef\xbb\xbfversion: 1\n", /* a UTF-8 byte order mark */
      "device:\n  copy_latency: 0\n",
      "tiling:\n  mode: off\n",
      "tiling:\n  mode: 'on'\n",
      "tiling:\n  grid: auto\n  segments: auto\n",
      "tiling:\n  grid: 1x1\n",
      "tiling:\n  grid: 32x32\n",                           /* 1024 tiles: max_tiles' default */
      "tiling:\n  grid: 1x1048576\n  max_tiles: 1048576\n", /* the largest */
      "tiling:\n  max_tiles: 4096\n  grid: '064x064'\n  segments: longest\n",
      "packer:\n  mip_max_blocks: 0\n  algorithm: best-fit\n",
      "packer:\n  time_limit: 60\n",    /* a plain number is seconds */
      "packer:\n  time_limit: 1ms\n",   /* the smallest limit */
      "packer:\n  time_limit: 86400\n", /* the largest */
      "device:\n  copy_latency: 0.00001\n  h2d_bandwidth: 1KB/s\n  d2h_bandwidth: 1PB/s\n"
      "  duplex_factor: 0.01\n  peak_flops: 1e6\n",
      /* the time model's bounds, both ends */
      "device:\n  memory_bandwidth: 1KB/s\n  launch_overhead: 0\n  dense_flops_efficiency: 0.01\n"
      "  dense_bytes_efficiency: 1\n  elementwise_flops_efficiency: 1e-2\n"
      "  elementwise_bytes_efficiency: 1.0\n",
      "device:\n  memory_bandwidth: 1PB/s\n  launch_overhead: 1s\n",
  };
  for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
    sfc_config_t cfg;
    sfc_error_t err = {0};
    sfc_config_defaults(&cfg);
    sfc_status_t st = sfc_config_load_buffer(ok[i], strlen(ok[i]), "ok.yaml", &cfg, &err);
    if (st != SFC_OK)
      fprintf(stderr, "  case %zu: %s\n", i, err.message);
    CHECK_EQ_I64(st, SFC_OK);
    CHECK_EQ_I64(err.status, SFC_OK);
  }
  /* NULL data with 0 bytes is an empty config; NULL filename gets a stand-in. */
  sfc_config_t cfg;
  sfc_error_t err = {0};
  sfc_config_defaults(&cfg);
  CHECK_OK(sfc_config_load_buffer(NULL, 0, NULL, &cfg, &err), err);
  CHECK_STR_EQ(cfg.source, "(config)");
  CHECK_EQ_I64(sfc_config_load_buffer("x: 1", 4, NULL, &cfg, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "(config):1:1: x: unknown key; expected one of: version, device, "
                            "scheduler, tiling, packer, host");
  CHECK_EQ_I64(sfc_config_load_buffer("", 0, "x", NULL, NULL), SFC_ERR_INVALID_ARGUMENT);
  CHECK_EQ_I64(sfc_config_load_buffer(NULL, 3, "x", &cfg, NULL), SFC_ERR_INVALID_ARGUMENT);
}

static void test_limits(void) {
  sfc_config_t cfg, before;
  sfc_error_t err = {0};
  sfc_config_defaults(&cfg);
  memcpy(&before, &cfg, sizeof cfg);

  /* Just under 1 MiB of comments is fine; one byte over the limit is refused. */
  size_t limit = (size_t)1 << 20;
  char *big = malloc(limit + 2);
  CHECK(big != NULL);
  if (!big)
    return;
  memset(big, '#', limit + 1);
  for (size_t i = 80; i < limit + 1; i += 81)
    big[i] = '\n';
  big[limit + 1] = '\0';
  CHECK_OK(sfc_config_load_buffer(big, limit, "big.yaml", &cfg, &err), err);
  CHECK_STR_EQ(cfg.source, "big.yaml");
  memcpy(&before, &cfg, sizeof cfg); /* from here on, every load fails */
  CHECK_EQ_I64(sfc_config_load_buffer(big, limit + 1, "big.yaml", &cfg, &err), SFC_ERR_LIMIT);
  CHECK_STR_EQ(err.message, "big.yaml:1:1: config: 1048577 bytes; a config file is at most "
                            "1048576");

  /* Deep nesting stops at the first level that does not fit the schema. */
  memset(big, '[', limit);
  CHECK_EQ_I64(sfc_config_load_buffer(big, limit, "deep.yaml", &cfg, &err), SFC_ERR_BAD_INPUT);
  for (size_t i = 0; i + 8 <= limit; i += 8)
    memcpy(big + i, "device: ", 8);
  CHECK_EQ_I64(sfc_config_load_buffer(big, limit, "deep.yaml", &cfg, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message,
               "deep.yaml:1:9: device: expected a mapping of device fields, got a scalar");
  /* A long value is cut short in the message. */
  memset(big, 'x', limit);
  memcpy(big, "device:\n  memory: ", 18);
  CHECK_EQ_I64(sfc_config_load_buffer(big, limit, "long.yaml", &cfg, &err), SFC_ERR_BAD_INPUT);
  CHECK_STR_EQ(err.message, "long.yaml:2:11: device.memory: expected a number in "
                            "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...'");
  free(big);
  CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);

  CHECK_EQ_I64(sfc_config_load_file("/nonexistent/sfc.yaml", &cfg, &err), SFC_ERR_IO);
  CHECK_STR_EQ(err.message, "/nonexistent/sfc.yaml: cannot open: No such file or directory");
  CHECK_EQ_I64(sfc_config_load_file(test_data("configs"), &cfg, &err), SFC_ERR_IO);
  CHECK_CONTAINS(err.message, ": cannot read: ");
  CHECK(memcmp(&cfg, &before, sizeof cfg) == 0);
}

/* No setting silently does nothing: a fixed window or a prefetch limit parse with any
 * policy, and the pipeline's check names one the policy would ignore (vdnn, lms). */
static void test_consistent(void) {
  sfc_config_t c;
  sfc_error_t err = {0};
  sfc_config_defaults(&c);
  CHECK_OK(sfc_config_check_consistent(&c, &err), err);
  c.scheduler.policy = SFC_SCHED_NONE;
  c.tiling.mode = SFC_TILING_OFF;
  CHECK_OK(sfc_config_check_consistent(&c, &err), err);
  CHECK_OK(sfc_config_load_file(test_data("configs/override-all.yaml"), &c, &err), err);
  CHECK_EQ_I64(sfc_config_check_consistent(&c, &err), SFC_ERR_BAD_INPUT);
  CHECK_CONTAINS(err.message, "override-all.yaml: scheduler.window limits the window policy's "
                              "swap-ins only; policy lms issues its own");
  const char *tiling_ok[] = {"tiling:\n  mode: on\n",     "tiling:\n  max_tiles: 64\n",
                             "tiling:\n  min_tile: 8\n",  "tiling:\n  halo: seed\n",
                             "tiling:\n  grid: 16x16\n",  "tiling:\n  segments: longest\n",
                             "tiling:\n  mode: fastest\n"};
  for (size_t i = 0; i < sizeof tiling_ok / sizeof tiling_ok[0]; i++) { /* the tiler landed */
    sfc_config_defaults(&c);
    CHECK_OK(sfc_config_load_buffer(tiling_ok[i], strlen(tiling_ok[i]), "t.yaml", &c, &err), err);
    CHECK_OK(sfc_config_check_consistent(&c, &err), err);
  }
  for (int p = SFC_SCHED_NONE; p <= SFC_SCHED_LMS; p++) { /* every policy is implemented */
    sfc_config_defaults(&c);
    c.scheduler.policy = (sfc_sched_policy_t)p;
    CHECK_OK(sfc_config_check_consistent(&c, &err), err);
  }
  const char *limits[] = {"scheduler:\n  window: 512MiB\n", "scheduler:\n  prefetch_limit: 3\n"};
  const char *key[] = {"scheduler.window", "scheduler.prefetch_limit"};
  for (size_t i = 0; i < 2; i++)
    for (int p = SFC_SCHED_NONE; p <= SFC_SCHED_LMS; p++) {
      sfc_config_defaults(&c); /* a load layers the file over what c holds */
      CHECK_OK(sfc_config_load_buffer(limits[i], strlen(limits[i]), "t.yaml", &c, &err), err);
      c.scheduler.policy = (sfc_sched_policy_t)p;
      if (p == SFC_SCHED_NONE || p == SFC_SCHED_WINDOW) { /* none: nothing to limit */
        CHECK_OK(sfc_config_check_consistent(&c, &err), err);
        continue;
      }
      CHECK_EQ_I64(sfc_config_check_consistent(&c, &err), SFC_ERR_BAD_INPUT);
      char want[160];
      snprintf(want, sizeof want, "t.yaml: %s limits the window policy's swap-ins only; policy %s",
               key[i], sfc_sched_policy_name((sfc_sched_policy_t)p));
      CHECK_CONTAINS(err.message, want);
    }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--print-defaults") == 0) {
    sfc_config_t cfg;
    sfc_config_defaults(&cfg);
    sfc_config_write_yaml(&cfg, stdout);
    return 0;
  }
  RUN(test_defaults);
  RUN(test_names);
  RUN(test_profiles);
  RUN(test_precedence);
  RUN(test_valid_files);
  RUN(test_write_round_trip);
  RUN(test_default_golden);
  RUN(test_bad_corpus);
  RUN(test_errors_inline);
  RUN(test_accepted_forms);
  RUN(test_limits);
  RUN(test_consistent);
  return check_summary();
}
