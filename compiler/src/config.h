/* config.h — the effective compile configuration (config v1) and its loader.
 *
 * A config starts from built-in defaults (device profile "h200-pcie5"); a YAML file
 * (docs/config-format.md) overrides any subset of fields; CLI flags such as
 * --budget override last. Every field always has a value, so -c is optional.
 *
 *   sfc_config_t cfg;
 *   sfc_config_defaults(&cfg);
 *   if (sfc_config_load_file("sfc.yaml", &cfg, &err) != SFC_OK)   // "sfc.yaml:4:11: ..."
 *     ...
 *   sfc_config_write_yaml(&cfg, stdout);                          // `sfc config --print`
 */
#ifndef SFC_CONFIG_H
#define SFC_CONFIG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "sfc/status.h"

#define SFC_CONFIG_VERSION 1
#define SFC_NAME_BYTES     32

typedef enum sfc_sched_policy {
  SFC_SCHED_NONE = 0,   /* keep every tensor on the device (in-core) */
  SFC_SCHED_WINDOW = 1, /* the window scheduler (seed out-of-core-window-scheduling) */
  SFC_SCHED_VDNN = 2,   /* baseline: swap out every forward output, swap in one op ahead */
  SFC_SCHED_LMS = 3     /* baseline: swap by consumer distance threshold */
} sfc_sched_policy_t;

typedef enum sfc_tiling_mode {
  SFC_TILING_OFF = 0,
  SFC_TILING_ON = 1,     /* tile every FT segment that can be tiled */
  SFC_TILING_AUTO = 2,   /* tile only where a tensor does not fit the budget */
  SFC_TILING_FASTEST = 3 /* auto, and tile where that is predicted faster than swapping */
} sfc_tiling_mode_t;

/* How a tiled segment's backward finds its boxes (docs/algorithms.md "FT tiling"). */
typedef enum sfc_tiling_halo {
  SFC_HALO_MASKED = 0, /* each tile backpropagates its own output tile: forward halo only */
  SFC_HALO_SEED = 1    /* the SFT artifact's: a backward halo too, disjoint input gradients */
} sfc_tiling_halo_t;

/* Where the partitioner ends FT segments (docs/config-format.md "tiling"). */
typedef enum sfc_tiling_segments {
  SFC_SEGMENTS_AUTO = 0,   /* where a checkpoint fits the checkpoint budget (1/8 under on) */
  SFC_SEGMENTS_LONGEST = 1 /* the longest segment the tiler accepts: a whole tileable run */
} sfc_tiling_segments_t;

#define SFC_GRID_MAX (1u << 20) /* tiling.grid: rows and columns each 1..this */

/* How the device arena is held (device.arena). */
typedef enum sfc_arena_kind {
  SFC_ARENA_CONTIGUOUS = 0, /* one allocation of the packed arena */
  SFC_ARENA_PAGED = 1       /* virtual: pages mapped while live blocks touch them */
} sfc_arena_kind_t;

/* A device and its link to the host. Built-in profiles fill every field. */
typedef struct sfc_profile {
  char name[SFC_NAME_BYTES]; /* e.g. "h200-pcie5" */
  char description[96];
  uint64_t memory_bytes;   /* physical device memory */
  double h2d_bytes_per_s;  /* host -> device, pinned, one direction alone */
  double d2h_bytes_per_s;  /* device -> host */
  double duplex_factor;    /* each direction's share of its bandwidth when both run */
  double copy_latency_s;   /* fixed cost of one copy */
  uint64_t alignment;      /* offset alignment in the arena, power of two */
  uint64_t va_chunk_bytes; /* physical chunk size for virtual-addressing mode */
  double peak_flops;       /* dense fp32 FLOP/s, to estimate missing op times */
  /* The device time model (time_model.h): how long an op takes on this device. */
  double memory_bytes_per_s;           /* device memory (DRAM/HBM) bandwidth */
  double launch_overhead_s;            /* fixed cost of every op that runs a kernel */
  double dense_flops_efficiency;       /* convolution, matmul: share of peak_flops reached */
  double dense_bytes_efficiency;       /* ... and of memory_bytes_per_s */
  double elementwise_flops_efficiency; /* normalisation, elementwise, everything else */
  double elementwise_bytes_efficiency;
} sfc_profile_t;

typedef struct sfc_config {
  char source[256];      /* file it came from, or "(defaults)" */
  sfc_profile_t device;  /* effective device fields (profile + overrides) */
  uint64_t budget_bytes; /* device memory the plan may use; default memory_bytes */

  struct {
    sfc_sched_policy_t policy; /* default window */
    bool window_auto;          /* window: auto (default) */
    uint64_t window_bytes;     /* when !window_auto */
    uint32_t prefetch_limit;   /* max ops a swap-in may run ahead, 0 = unlimited */
  } scheduler;

  struct {
    sfc_tiling_mode_t mode; /* default auto */
    uint32_t max_tiles;     /* per segment, default 1024 */
    uint32_t min_tile;      /* smallest spatial tile extent, default 16 */
    sfc_tiling_halo_t halo; /* default masked */
    uint32_t grid[2];       /* rows, columns of every tiled segment; {0, 0} = auto (chosen) */
    sfc_tiling_segments_t segments; /* default auto */
  } tiling;

  struct {
    char algorithm[SFC_NAME_BYTES]; /* default "auto" */
    uint32_t mip_max_blocks;        /* the MIP runs only up to this many blocks, default 30 */
    double time_limit_s;            /* per packing, default 10; SFC_TIME_LIMIT_MIN_S .. MAX_S */
  } packer;

  struct {
    uint64_t staging_budget_bytes; /* pinned host staging limit, 0 = unlimited */
  } host;

  /* device.arena, device.page: a contiguous arena (default) or a paged one (plan format
   * 1.7): the budget then holds the pages of page_bytes the live blocks touch, not the
   * packed arena (docs/config-format.md "device") */
  struct {
    sfc_arena_kind_t kind; /* default contiguous */
    uint64_t page_bytes;   /* default 2 MiB, the CUDA driver's VMM granularity */
    double page_map_s;     /* device.page_map_cost: host time per page mapped, charged by the
                              evaluator (default 0: not modelled; tools/gpu-check measures it) */
  } arena;
} sfc_config_t;

/* Bounds of the rates, times and factors a config (or a flag) may give, so that every
 * prediction made from them stays finite: bytes (<= 2^60) over a bandwidth, FLOPs
 * (<= 2^62) over peak_flops, copies over a shared link (docs/config-format.md#bounds).
 * Each is inclusive. */
#define SFC_RATE_MIN           1e3  /* bytes/s: 1KB/s */
#define SFC_RATE_MAX           1e15 /* bytes/s: 1PB/s */
#define SFC_LATENCY_MAX_S      1.0  /* copy_latency: 0 .. 1s */
#define SFC_PAGE_MAP_MAX_S     1.0  /* page_map_cost: 0 .. 1s */
#define SFC_DUPLEX_MIN         0.01 /* duplex_factor: 0.01 .. 1 */
#define SFC_PEAK_FLOPS_MIN     1e6  /* peak_flops: 1e6 .. 1e18 FLOP/s */
#define SFC_PEAK_FLOPS_MAX     1e18
#define SFC_LAUNCH_MAX_S       1.0   /* launch_overhead: 0 .. 1s */
#define SFC_EFFICIENCY_MIN     0.01  /* the time model's efficiencies: 0.01 .. 1 */
#define SFC_MIP_MAX_BLOCKS_MAX 10000 /* packer.mip_max_blocks, sfc pack --mip-max-blocks */
#define SFC_TIME_LIMIT_MIN_S   1e-3  /* packer time limit: 1ms .. 86400s (one day) */
#define SFC_TIME_LIMIT_MAX_S   86400.0

/* Parses a packer time limit, the config's packer.time_limit and `sfc pack
 * --time-limit` alike: a duration (a plain number is seconds) in SFC_TIME_LIMIT_MIN_S
 * .. SFC_TIME_LIMIT_MAX_S. On failure writes the reason, e.g. "'0' is not in
 * 1ms..86400s", and returns false. */
bool sfc_parse_time_limit(const char *text, double *out_seconds, char *why, size_t why_bytes);

/* Built-in device profiles. */
const sfc_profile_t *sfc_profiles(size_t *out_count);
const sfc_profile_t *sfc_profile_find(const char *name); /* NULL when unknown */

/* Fills cfg with the defaults (profile h200-pcie5, budget = its memory). */
void sfc_config_defaults(sfc_config_t *cfg);

/* Applies a YAML config on top of *cfg (which the caller initialised, normally with
 * sfc_config_defaults). On error *cfg is unchanged and err says "file:line:col: why"
 * with err->status SFC_ERR_BAD_INPUT (malformed), SFC_ERR_VERSION (version other than
 * 1), SFC_ERR_LIMIT (input over 1 MiB), SFC_ERR_IO or SFC_ERR_OUT_OF_MEMORY. When the
 * file sets device.profile or device.memory but not device.budget, the budget becomes
 * the new memory; otherwise it is left as it was. `filename` is only used in messages. */
sfc_status_t sfc_config_load_buffer(const char *data, size_t bytes, const char *filename,
                                    sfc_config_t *cfg, sfc_error_t *err);
sfc_status_t sfc_config_load_file(const char *path, sfc_config_t *cfg, sfc_error_t *err);

/* Writes cfg as a complete config v1 YAML document (loadable again, same values). */
void sfc_config_write_yaml(const sfc_config_t *cfg, FILE *out);

/* SFC_ERR_BAD_INPUT naming a setting that would do nothing with the others: a fixed
 * scheduler.window or a scheduler.prefetch_limit with policy vdnn or lms (they issue their
 * swap-ins as the systems they model did), so no setting is silently ignored; the
 * pipeline calls it before the first pass (after --policy). The loader still parses and
 * checks every value. */
sfc_status_t sfc_config_check_consistent(const sfc_config_t *cfg, sfc_error_t *err);

/* Each enum's names, indexed by its value: the config's spelling, which the loader reads
 * and sfc_config_write_yaml writes (one table each, for both). */
extern const char *const sfc_sched_policy_names[SFC_SCHED_LMS + 1];
extern const char *const sfc_tiling_mode_names[SFC_TILING_FASTEST + 1];
extern const char *const sfc_tiling_halo_names[SFC_HALO_SEED + 1];
extern const char *const sfc_tiling_segments_names[SFC_SEGMENTS_LONGEST + 1];
extern const char *const sfc_arena_kind_names[SFC_ARENA_PAGED + 1];

/* The name of a value, or "unknown" out of range. */
const char *sfc_sched_policy_name(sfc_sched_policy_t policy);
const char *sfc_tiling_mode_name(sfc_tiling_mode_t mode);
const char *sfc_tiling_halo_name(sfc_tiling_halo_t halo);
const char *sfc_tiling_segments_name(sfc_tiling_segments_t segments);
const char *sfc_arena_kind_name(sfc_arena_kind_t kind);

#endif /* SFC_CONFIG_H */
