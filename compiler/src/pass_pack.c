/* pass_pack.c — give every device block its offset in the arena.
 *
 * Converts the blocks' inclusive step ranges [first, last] to half-open
 * lifetimes [first, last + 1), runs the configured packer through the packer
 * interface (pack.h; "auto" is the portfolio of all packers), and writes the offsets
 * back. sfc_pack_run checks the packing independently before it returns.
 *
 * Reads: blocks, config packer section, alignment, budget. Writes: blocks' offset,
 * arena_bytes, packer_name, packing_optimal, pack_seconds, fits_budget.
 */
#include <string.h>

#include "pack.h"
#include "passes.h"

sfc_status_t sfc_pass_pack(sfc_ir_t *ir, sfc_error_t *err) {
  const sfc_config_t *cfg = ir->config;
  const char *name = cfg->packer.algorithm; /* "auto" is the portfolio (pack_portfolio.c) */
  if (!sfc_packer_find(name)) {
    char list[512] = "";
    size_t n;
    const sfc_packer_t *all = sfc_packers(&n);
    for (size_t i = 0; i < n; i++) {
      if (i)
        strncat(list, ", ", sizeof list - strlen(list) - 1);
      strncat(list, all[i].name, sizeof list - strlen(list) - 1);
    }
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "packer.algorithm: unknown packer '%s'; expected one of: %s",
                         cfg->packer.algorithm, list);
  }
  sfc_pack_block_t *pb = sfc_pool_calloc(&ir->pool, ir->n_blocks ? ir->n_blocks : 1, sizeof *pb);
  if (!pb)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory packing %u blocks",
                         ir->n_blocks);
  for (uint32_t i = 0; i < ir->n_blocks; i++)
    pb[i] = (sfc_pack_block_t){.size = ir->blocks[i].bytes,
                               .start = ir->blocks[i].first_step,
                               .end = (int64_t)ir->blocks[i].last_step + 1};
  sfc_pack_problem_t problem = {.blocks = pb,
                                .count = ir->n_blocks,
                                .alignment = cfg->device.alignment,
                                .capacity = cfg->budget_bytes};
  sfc_pack_options_t opt = {.time_limit_s = cfg->packer.time_limit_s,
                            .mip_max_blocks = cfg->packer.mip_max_blocks};
  sfc_pack_result_t res;
  SFC_TRY(sfc_pack_run(name, &problem, &opt, &res, err));
  for (uint32_t i = 0; i < ir->n_blocks; i++)
    ir->blocks[i].offset = pb[i].offset;
  ir->arena_bytes = res.peak;
  ir->packer_name = res.algorithm;
  ir->packing_optimal = res.optimal;
  ir->pack_seconds = res.seconds;
  ir->fits_budget = ir->arena_bytes <= cfg->budget_bytes;
  return SFC_OK;
}
