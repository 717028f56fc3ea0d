/* profiles.c — the built-in device profiles: a GPU and its link to the host.
 *
 * A profile fills every device field of the config; a config file names one with
 * `device.profile` and may override any field after it (docs/config-format.md).
 * Each number says where it comes from. "Measured" bandwidths are what pinned
 * cudaMemcpyAsync reaches in one direction alone, below the link's theoretical rate
 * (PCIe loses ~12% to packet headers and flow control). The duplex factor is each
 * direction's share of that bandwidth while both directions copy at once: PCIe hosts
 * reach ~0.7x per direction in practice (root complex and IOMMU limits), NVLink is
 * full duplex. Copy latency is the ~10 us launch-to-first-byte cost of one async copy.
 * Alignment 256 B is cudaMalloc's guaranteed alignment; 2 MiB is the granularity
 * cuMemGetAllocationGranularity reports for device memory on these GPUs.
 * Memory sizes are the marketing figures the vendors and the seed papers use.
 *
 * The device time model (time_model.c, docs/algorithms.md#device-time-model) predicts an
 * op's time from its FLOPs and bytes: max(flops / (peak_flops * e_flops), bytes /
 * (memory bandwidth * e_bytes)) + launch overhead. peak_flops and the memory bandwidth
 * are each datasheet's figures. The rest is the same for every profile:
 *   - launch overhead 5 us: the order of one CUDA kernel launch (4-6 us launch to
 *     launch, measured in https://susun-blog.com/blog/pegainfer-3-cuda-graph); charged
 *     once per op, not per kernel, and negligible next to large-batch op times.
 *   - efficiencies (CALIBRATED, not datasheet numbers): dense ops (convolution, matmul)
 *     reach 0.9 of peak_flops, every op 0.85 of the memory bandwidth. They were set by
 *     hand against three public FP32 ResNet-50 training throughputs, the out-of-core
 *     seed's V100 in-core 492 images/s at batch 128 (Table 1) and Lambda's RTX 2080 Ti
 *     294 and V100 405 images/s; each prediction is within 20 % of its measurement
 *     (docs/workloads.md#device-time-model-calibration, ctest time_calibration).
 */
#include <string.h>

#include "config.h"

/* The time model's numbers every profile shares (see the top). */
#define LAUNCH_OVERHEAD_S 5e-6
#define DENSE_FLOPS_EFF   0.9
#define BYTES_EFF         0.85
#define TIME_MODEL_DEFAULTS                                                                        \
  .launch_overhead_s = LAUNCH_OVERHEAD_S, .dense_flops_efficiency = DENSE_FLOPS_EFF,               \
  .dense_bytes_efficiency = BYTES_EFF, .elementwise_flops_efficiency = DENSE_FLOPS_EFF,            \
  .elementwise_bytes_efficiency = BYTES_EFF

static const sfc_profile_t profiles[] = {
    /* NVIDIA H200 datasheet: 141 GB HBM3e; FP32 67 TFLOP/s (SXM; the NVL/PCIe card is
     * rated 60). GPU memory bandwidth 4.8 TB/s (both the SXM and the NVL card). PCIe
     * Gen5 x16: 64 GB/s raw, ~63 GB/s after encoding, ~55 GB/s measured with pinned
     * memory per direction. */
    {.name = "h200-pcie5",
     .description = "NVIDIA H200 141 GB HBM3e, PCIe Gen5 x16",
     .memory_bytes = 141000000000ull,
     .h2d_bytes_per_s = 55e9,
     .d2h_bytes_per_s = 55e9,
     .duplex_factor = 0.7,
     .copy_latency_s = 10e-6,
     .alignment = 256,
     .va_chunk_bytes = 2u << 20,
     .peak_flops = 67e12,
     .memory_bytes_per_s = 4.8e12,
     TIME_MODEL_DEFAULTS},
    /* NVIDIA A100 40 GB (the SFT seed's second platform, segmented-fused-tiled.txt §6:
     * "40GiB"); A100 datasheet, PCIe 40GB column: FP32 19.5 TFLOP/s, GPU memory
     * bandwidth 1,555 GB/s. PCIe Gen4 x16: 31.5 GB/s theoretical, ~26 GB/s measured
     * pinned per direction. */
    {.name = "a100-pcie4",
     .description = "NVIDIA A100 40 GB HBM2, PCIe Gen4 x16",
     .memory_bytes = 40ull << 30,
     .h2d_bytes_per_s = 26e9,
     .d2h_bytes_per_s = 26e9,
     .duplex_factor = 0.7,
     .copy_latency_s = 10e-6,
     .alignment = 256,
     .va_chunk_bytes = 2u << 20,
     .peak_flops = 19.5e12,
     .memory_bytes_per_s = 1555e9,
     TIME_MODEL_DEFAULTS},
    /* NVIDIA Tesla V100 16 GB on IBM POWER9, as in the out-of-core seed's experiments
     * (out-of-core-window-scheduling.txt §5: "two NVLinks (each can transfer memory at
     * 50GB/s)" — NVLink 2.0 moves 25 GB/s per direction per link, 50 GB/s both ways).
     * Two links: 50 GB/s per direction, full duplex, so duplex 1.0. The VA chunk is the
     * seed's choice (§4: "minimum ... 2MB", "we experimentally decide ... 40MB"),
     * taken as 40 MiB so it is a whole number of 2 MiB granules. V100 SXM2 datasheet:
     * FP32 15.7 TFLOP/s, HBM2 bandwidth 900 GB/s. */
    {.name = "v100-nvlink2",
     .description = "NVIDIA V100 16 GB HBM2, 2x NVLink 2.0 to POWER9",
     .memory_bytes = 16ull << 30,
     .h2d_bytes_per_s = 50e9,
     .d2h_bytes_per_s = 50e9,
     .duplex_factor = 1.0,
     .copy_latency_s = 10e-6,
     .alignment = 256,
     .va_chunk_bytes = 40u << 20,
     .peak_flops = 15.7e12,
     .memory_bytes_per_s = 900e9,
     TIME_MODEL_DEFAULTS},
    /* NVIDIA GeForce RTX 2080 Ti 11 GB GDDR6, the SFT seed's first platform
     * (segmented-fused-tiled.txt §6: "11GiB"). PCIe Gen3 x16: 15.75 GB/s theoretical,
     * ~12 GB/s measured pinned per direction. FP32 13.4 TFLOP/s (boost clock);
     * memory bandwidth 616 GB/s (14 Gbit/s GDDR6 on a 352-bit bus; GeForce RTX 2080 Ti
     * specifications, Turing architecture whitepaper). */
    {.name = "rtx2080ti-pcie3",
     .description = "NVIDIA RTX 2080 Ti 11 GB GDDR6, PCIe Gen3 x16",
     .memory_bytes = 11ull << 30,
     .h2d_bytes_per_s = 12e9,
     .d2h_bytes_per_s = 12e9,
     .duplex_factor = 0.7,
     .copy_latency_s = 10e-6,
     .alignment = 256,
     .va_chunk_bytes = 2u << 20,
     .peak_flops = 13.4e12,
     .memory_bytes_per_s = 616e9,
     TIME_MODEL_DEFAULTS},
};

const sfc_profile_t *sfc_profiles(size_t *out_count) {
  if (out_count)
    *out_count = sizeof profiles / sizeof profiles[0];
  return profiles;
}

const sfc_profile_t *sfc_profile_find(const char *name) {
  if (!name)
    return NULL;
  for (size_t i = 0; i < sizeof profiles / sizeof profiles[0]; i++)
    if (strcmp(profiles[i].name, name) == 0)
      return &profiles[i];
  return NULL;
}
