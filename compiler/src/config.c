/* config.c — the default configuration, enum names, and the YAML writer.
 *
 * sfc_config_defaults() is the h200-pcie5 profile with budget = its memory and the
 * pass defaults below. sfc_config_write_yaml() prints a complete config v1 document
 * (what `sfc config --print` shows): every field, each value in the exact unit form
 * that the loader (load_config.c) reads back to the same number, and a comment per
 * field, so the output is both documentation and a starting point for a config file.
 */
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "units.h"

#define DEFAULT_PROFILE "h200-pcie5"

void sfc_config_defaults(sfc_config_t *cfg) {
  memset(cfg, 0, sizeof *cfg);
  snprintf(cfg->source, sizeof cfg->source, "(defaults)");
  const sfc_profile_t *p = sfc_profile_find(DEFAULT_PROFILE);
  if (p) /* always: the default profile is built in */
    cfg->device = *p;
  cfg->budget_bytes = cfg->device.memory_bytes;
  cfg->scheduler.policy = SFC_SCHED_WINDOW;
  cfg->scheduler.window_auto = true;
  cfg->scheduler.window_bytes = 0;
  cfg->scheduler.prefetch_limit = 0;
  cfg->tiling.mode = SFC_TILING_AUTO;
  cfg->tiling.max_tiles = 1024;
  cfg->tiling.min_tile = 16;
  cfg->tiling.halo = SFC_HALO_MASKED;
  cfg->tiling.grid[0] = cfg->tiling.grid[1] = 0; /* auto */
  cfg->tiling.segments = SFC_SEGMENTS_AUTO;
  snprintf(cfg->packer.algorithm, sizeof cfg->packer.algorithm, "auto");
  cfg->packer.mip_max_blocks = 30;
  cfg->packer.time_limit_s = 10.0;
  cfg->host.staging_budget_bytes = 0;
  cfg->arena.kind = SFC_ARENA_CONTIGUOUS;
  cfg->arena.page_bytes = 2u << 20;
  cfg->arena.page_map_s = 0; /* not modelled until measured */
}

bool sfc_parse_time_limit(const char *text, double *out_seconds, char *why, size_t why_bytes) {
  double s;
  if (!sfc_parse_duration(text, &s, why, why_bytes))
    return false;
  if (!(s >= SFC_TIME_LIMIT_MIN_S && s <= SFC_TIME_LIMIT_MAX_S)) {
    char lo[32], hi[32];
    size_t n = strlen(text);
    bool unitless =
        s > 0 && n > 0 && ((text[n - 1] >= '0' && text[n - 1] <= '9') || text[n - 1] == '.');
    if (why && why_bytes)
      snprintf(why, why_bytes, "'%.40s%s' is not in %s..%s%s", text, n > 40 ? "..." : "",
               sfc_format_duration(SFC_TIME_LIMIT_MIN_S, lo, sizeof lo),
               sfc_format_duration(SFC_TIME_LIMIT_MAX_S, hi, sizeof hi),
               unitless ? " (a number without a unit is seconds)" : "");
    return false;
  }
  *out_seconds = s;
  return true;
}

const char *const sfc_sched_policy_names[SFC_SCHED_LMS + 1] = {[SFC_SCHED_NONE] = "none",
                                                               [SFC_SCHED_WINDOW] = "window",
                                                               [SFC_SCHED_VDNN] = "vdnn",
                                                               [SFC_SCHED_LMS] = "lms"};
const char *const sfc_tiling_mode_names[SFC_TILING_FASTEST + 1] = {[SFC_TILING_OFF] = "off",
                                                                   [SFC_TILING_ON] = "on",
                                                                   [SFC_TILING_AUTO] = "auto",
                                                                   [SFC_TILING_FASTEST] =
                                                                       "fastest"};
const char *const sfc_tiling_halo_names[SFC_HALO_SEED + 1] = {
    [SFC_HALO_MASKED] = "masked", [SFC_HALO_SEED] = "seed"};
const char *const sfc_tiling_segments_names[SFC_SEGMENTS_LONGEST + 1] = {
    [SFC_SEGMENTS_AUTO] = "auto", [SFC_SEGMENTS_LONGEST] = "longest"};
const char *const sfc_arena_kind_names[SFC_ARENA_PAGED + 1] = {
    [SFC_ARENA_CONTIGUOUS] = "contiguous", [SFC_ARENA_PAGED] = "paged"};

#define NAME_OF(table, v)                                                                          \
  ((unsigned)(v) < sizeof table / sizeof table[0] ? table[(unsigned)(v)] : "unknown")

const char *sfc_sched_policy_name(sfc_sched_policy_t policy) {
  return NAME_OF(sfc_sched_policy_names, policy);
}

const char *sfc_tiling_mode_name(sfc_tiling_mode_t mode) {
  return NAME_OF(sfc_tiling_mode_names, mode);
}

const char *sfc_tiling_halo_name(sfc_tiling_halo_t halo) {
  return NAME_OF(sfc_tiling_halo_names, halo);
}

const char *sfc_tiling_segments_name(sfc_tiling_segments_t segments) {
  return NAME_OF(sfc_tiling_segments_names, segments);
}

const char *sfc_arena_kind_name(sfc_arena_kind_t kind) {
  return NAME_OF(sfc_arena_kind_names, kind);
}
#undef NAME_OF

/* The shortest %g text that reads back as v (plain numbers: duplex, FLOP/s), with a
 * bare exponent: "0.7", "6.7e13". */
static const char *number_text(double v, char *buf, size_t buf_bytes) {
  for (int p = 1; p <= 17; p++) {
    snprintf(buf, buf_bytes, "%.*g", p, v);
    if (strtod(buf, NULL) == v)
      break;
  }
  char *e = strchr(buf, 'e');
  if (e) { /* "e+13" -> "e13", "e-05" -> "e-5" */
    char *w = e + 1, *r = e + 1;
    if (*r == '+')
      r++;
    else if (*r == '-')
      *w++ = *r++;
    while (*r == '0' && r[1])
      r++;
    memmove(w, r, strlen(r) + 1);
  }
  return buf;
}

/* One "  key: value   # comment" line, comments aligned in one column. */
static void field(FILE *out, const char *key, const char *value, const char *comment) {
  int width = (int)(strlen(key) + 4 + strlen(value));
  fprintf(out, "  %s: %s%*s# %s\n", key, value, width < 28 ? 28 - width : 1, "", comment);
}

/* A comment-safe copy of s: control characters become '?'. */
static const char *comment_text(const char *s, char *buf, size_t buf_bytes) {
  size_t i = 0;
  for (; s[i] && i + 1 < buf_bytes; i++)
    buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  buf[i] = '\0';
  return buf;
}

void sfc_config_write_yaml(const sfc_config_t *cfg, FILE *out) {
  char a[64], b[64], src[sizeof cfg->source];
  const sfc_profile_t *dev = &cfg->device;
  const sfc_profile_t *prof = sfc_profile_find(dev->name);

  fprintf(out, "# sfc config v1: the effective configuration.\n");
  fprintf(out, "# source: %s\n", comment_text(cfg->source, src, sizeof src));
  fprintf(out, "# Every field is optional; docs/config-format.md describes each one.\n");
  fprintf(out, "version: %d\n\n", SFC_CONFIG_VERSION);

  fprintf(out, "device:\n");
  if (prof) {
    comment_text(prof->description, b, sizeof b);
    field(out, "profile", dev->name, b);
    fprintf(out,
            "  # the fields below override the profile; delete one to use the profile's value\n");
  } else {
    fprintf(out, "  # profile: none (not a built-in profile: every field below is explicit)\n");
  }
  field(out, "memory", sfc_format_size_exact(dev->memory_bytes, a, sizeof a),
        "physical device memory");
  field(out, "budget", sfc_format_size_exact(cfg->budget_bytes, a, sizeof a),
        "memory the plan may use (default: = memory)");
  field(out, "h2d_bandwidth", sfc_format_rate(dev->h2d_bytes_per_s, a, sizeof a),
        "host->device, pinned, one direction alone");
  field(out, "d2h_bandwidth", sfc_format_rate(dev->d2h_bytes_per_s, a, sizeof a),
        "device->host, pinned, one direction alone");
  field(out, "duplex_factor", number_text(dev->duplex_factor, a, sizeof a),
        "each direction's share when both copy at once, [0.01, 1]");
  field(out, "copy_latency", sfc_format_duration(dev->copy_latency_s, a, sizeof a),
        "fixed cost of one copy");
  field(out, "alignment", sfc_format_size_exact(dev->alignment, a, sizeof a),
        "arena offset alignment, power of two, 1B..1MiB");
  field(out, "va_chunk", sfc_format_size_exact(dev->va_chunk_bytes, a, sizeof a),
        "physical chunk for virtual addressing, multiple of alignment");
  field(out, "arena", sfc_arena_kind_name(cfg->arena.kind),
        "contiguous | paged (the budget holds the pages live blocks touch)");
  field(out, "page", sfc_format_size_exact(cfg->arena.page_bytes, a, sizeof a),
        "page of a paged arena, multiple of alignment");
  field(out, "page_map_cost", sfc_format_duration(cfg->arena.page_map_s, a, sizeof a),
        "host time per page mapped (paged; 0: not modelled)");
  field(out, "peak_flops", number_text(dev->peak_flops, a, sizeof a),
        "dense fp32 FLOP/s, for the device time model");
  field(out, "memory_bandwidth", sfc_format_rate(dev->memory_bytes_per_s, a, sizeof a),
        "device memory bandwidth, for the device time model");
  field(out, "launch_overhead", sfc_format_duration(dev->launch_overhead_s, a, sizeof a),
        "fixed cost of every op that runs a kernel");
  field(out, "dense_flops_efficiency", number_text(dev->dense_flops_efficiency, a, sizeof a),
        "convolution, matmul: share of peak_flops, [0.01, 1]");
  field(out, "dense_bytes_efficiency", number_text(dev->dense_bytes_efficiency, a, sizeof a),
        "convolution, matmul: share of memory_bandwidth");
  field(out, "elementwise_flops_efficiency",
        number_text(dev->elementwise_flops_efficiency, a, sizeof a),
        "every other op: share of peak_flops");
  field(out, "elementwise_bytes_efficiency",
        number_text(dev->elementwise_bytes_efficiency, a, sizeof a),
        "every other op: share of memory_bandwidth");

  fprintf(out, "\nscheduler:\n");
  field(out, "policy", sfc_sched_policy_name(cfg->scheduler.policy), "none | window | vdnn | lms");
  field(out, "window",
        cfg->scheduler.window_auto
            ? "auto"
            : sfc_format_size_exact(cfg->scheduler.window_bytes, a, sizeof a),
        "auto or a size");
  snprintf(a, sizeof a, "%u", (unsigned)cfg->scheduler.prefetch_limit);
  field(out, "prefetch_limit", a, "max ops a swap-in may run ahead; 0 = unlimited");

  fprintf(out, "\ntiling:\n");
  field(out, "mode", sfc_tiling_mode_name(cfg->tiling.mode), "off | on | auto | fastest");
  snprintf(a, sizeof a, "%u", (unsigned)cfg->tiling.max_tiles);
  field(out, "max_tiles", a, "tiles per segment at most, 1..1048576");
  snprintf(a, sizeof a, "%u", (unsigned)cfg->tiling.min_tile);
  field(out, "min_tile", a, "smallest spatial tile extent, 1..65536");
  field(out, "halo", sfc_tiling_halo_name(cfg->tiling.halo), "masked | seed");
  if (cfg->tiling.grid[0] && cfg->tiling.grid[1])
    snprintf(a, sizeof a, "%ux%u", (unsigned)cfg->tiling.grid[0], (unsigned)cfg->tiling.grid[1]);
  else
    snprintf(a, sizeof a, "auto");
  field(out, "grid", a, "auto, or rows x columns of every tiled segment");
  field(out, "segments", sfc_tiling_segments_name(cfg->tiling.segments), "auto | longest");

  fprintf(out, "\npacker:\n");
  field(out, "algorithm", cfg->packer.algorithm, "a packer name, or auto");
  snprintf(a, sizeof a, "%u", (unsigned)cfg->packer.mip_max_blocks);
  field(out, "mip_max_blocks", a, "the exact MIP runs only up to this many blocks");
  field(out, "time_limit", sfc_format_duration(cfg->packer.time_limit_s, a, sizeof a),
        "per packing");

  fprintf(out, "\nhost:\n");
  if (cfg->host.staging_budget_bytes == 0)
    snprintf(a, sizeof a, "0");
  else
    sfc_format_size_exact(cfg->host.staging_budget_bytes, a, sizeof a);
  field(out, "staging_budget", a, "pinned host staging limit; 0 = unlimited");
}

sfc_status_t sfc_config_check_consistent(const sfc_config_t *cfg, sfc_error_t *err) {
  const char *src = cfg->source;
  sfc_sched_policy_t policy = cfg->scheduler.policy;
  if (policy == SFC_SCHED_VDNN || policy == SFC_SCHED_LMS) { /* they issue their own leads */
    const char *key = !cfg->scheduler.window_auto          ? "window"
                      : cfg->scheduler.prefetch_limit != 0 ? "prefetch_limit"
                                                           : NULL;
    if (key)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "%s: scheduler.%s limits the window policy's swap-ins only; policy %s "
                           "issues its own (%s): leave it at its default",
                           src, key, sfc_sched_policy_name(policy),
                           policy == SFC_SCHED_VDNN ? "one op ahead"
                                                    : "l ops ahead, l from its auto-tuner");
  }
  return SFC_OK;
}
