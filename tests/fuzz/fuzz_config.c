/* fuzz_config.c — fuzz target for the config loader (load_config.c, units.c).
 *
 * Feeds the input to sfc_config_load_buffer on top of the defaults and checks what
 * the loader promises, aborting (so libFuzzer and the replay test report it) when:
 *  - a failure changed the caller's config or left no one-line message;
 *  - a success does not survive a round trip: load(write(cfg)) must give cfg again.
 * ASan/LSan catch memory errors and leaks on every path, libyaml's included.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_config(const sfc_config_t *a, const sfc_config_t *b) {
  return strcmp(a->device.name, b->device.name) == 0 &&
         strcmp(a->device.description, b->device.description) == 0 &&
         a->device.memory_bytes == b->device.memory_bytes &&
         a->device.h2d_bytes_per_s == b->device.h2d_bytes_per_s &&
         a->device.d2h_bytes_per_s == b->device.d2h_bytes_per_s &&
         a->device.duplex_factor == b->device.duplex_factor &&
         a->device.copy_latency_s == b->device.copy_latency_s &&
         a->device.alignment == b->device.alignment &&
         a->device.va_chunk_bytes == b->device.va_chunk_bytes &&
         a->device.peak_flops == b->device.peak_flops && a->budget_bytes == b->budget_bytes &&
         a->scheduler.policy == b->scheduler.policy &&
         a->scheduler.window_auto == b->scheduler.window_auto &&
         a->scheduler.window_bytes == b->scheduler.window_bytes &&
         a->scheduler.prefetch_limit == b->scheduler.prefetch_limit &&
         a->tiling.mode == b->tiling.mode && a->tiling.max_tiles == b->tiling.max_tiles &&
         a->tiling.min_tile == b->tiling.min_tile && a->tiling.halo == b->tiling.halo &&
         a->tiling.grid[0] == b->tiling.grid[0] && a->tiling.grid[1] == b->tiling.grid[1] &&
         a->tiling.segments == b->tiling.segments &&
         strcmp(a->packer.algorithm, b->packer.algorithm) == 0 &&
         a->packer.mip_max_blocks == b->packer.mip_max_blocks &&
         a->packer.time_limit_s == b->packer.time_limit_s &&
         a->host.staging_budget_bytes == b->host.staging_budget_bytes;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sfc_config_t cfg, before;
  sfc_error_t err;
  sfc_config_defaults(&cfg);
  memcpy(&before, &cfg, sizeof cfg);
  sfc_status_t st = sfc_config_load_buffer((const char *)data, size, "fuzz.yaml", &cfg, &err);
  if (st != SFC_OK) {
    if (memcmp(&cfg, &before, sizeof cfg) != 0 || err.status != st || !err.message[0] ||
        strchr(err.message, '\n'))
      abort();
    return 0;
  }
  /* Round trip: what `sfc config --print` shows must load back to the same config. */
  char *text = NULL;
  size_t bytes = 0;
  FILE *f = open_memstream(&text, &bytes);
  if (!f)
    return 0;
  sfc_config_write_yaml(&cfg, f);
  fclose(f);
  sfc_config_t back;
  sfc_config_defaults(&back);
  if (sfc_config_load_buffer(text, bytes, "printed.yaml", &back, &err) != SFC_OK ||
      !same_config(&cfg, &back)) {
    fprintf(stderr, "round trip failed: %s\n%s", err.message, text);
    abort();
  }
  free(text);
  return 0;
}
