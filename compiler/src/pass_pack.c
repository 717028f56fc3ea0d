/* pass_pack.c — give every block its offset in its arena.
 *
 * Each arena is its own packing problem against its own budget: the device arena
 * against device.budget, the pinned host staging arena against
 * host.staging_budget. Converts the blocks' inclusive step ranges [first, last] to
 * half-open lifetimes [first, last + 1), passes pre-placed blocks as fixed, runs the
 * configured packer through the packer interface (pack.h; "auto" is the portfolio
 * of all packers; the packers know nothing of arenas), and writes the offsets back.
 * sfc_pack_run checks each packing independently before it returns.
 *
 * Reads: blocks, config packer section, alignment, budgets. Writes: blocks' offset,
 * arena_bytes, host_arena_bytes, packer_name, packing_optimal, pack_seconds,
 * pack_wall_stopped, page_peak_bytes (a paged arena), fits_budget. The packers' time limit
 * (packer.time_limit) is on their work clock (pack_clock.h), so the offsets depend on the inputs
 * alone.
 */
#include <stdlib.h>
#include <string.h>

#include "pack.h"
#include "pack_clock.h"
#include "passes.h"

/* Packs the blocks of one arena against its budget; pre-placed blocks keep their
 * offsets. A host arena with no blocks is 0 bytes and runs no packer. */
static sfc_status_t pack_arena(sfc_ir_t *ir, sfc_arena_t arena, sfc_error_t *err) {
  const sfc_config_t *cfg = ir->config;
  uint32_t n = 0;
  for (uint32_t i = 0; i < ir->n_blocks; i++)
    n += ir->blocks[i].arena == arena;
  bool device = arena == SFC_ARENA_DEVICE;
  if (n == 0 && !device)
    return SFC_OK;
  sfc_pack_block_t *pb = sfc_pool_calloc(&ir->pool, n ? n : 1, sizeof *pb);
  uint32_t *which = sfc_pool_calloc(&ir->pool, n ? n : 1, sizeof *which);
  if (!pb || !which)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory packing %u blocks", n);
  for (uint32_t i = 0, k = 0; i < ir->n_blocks; i++) {
    const sfc_block_t *b = &ir->blocks[i];
    if (b->arena != arena)
      continue;
    which[k] = i;
    pb[k++] = (sfc_pack_block_t){.size = b->bytes,
                                 .start = b->first_step,
                                 .end = (int64_t)b->last_step + 1,
                                 .offset = b->placed ? b->offset : 0,
                                 .fixed = b->placed};
  }
  sfc_pack_problem_t problem = {.blocks = pb,
                                .count = n,
                                .alignment = cfg->device.alignment,
                                .capacity =
                                    device ? cfg->budget_bytes : cfg->host.staging_budget_bytes};
  /* A plan the scheduler made for the budget only has to fit it (and its pinned staging
   * arena host.staging_budget), and when the device arena does not,
   * the fragmentation rounds schedule it again (pipeline.c): a tenth of the time limit
   * per pack (a fortieth for a margin round's trial: pack_brief). The whole limit spent searching
   * for a fit the heuristics missed cost ResNet-50 at batch 512 ten seconds for nothing.
   * The wall-clock backstop stays that of the whole limit: a tenth's (4 x 1 s + 1 s) was
   * within 2 x of a pack's real time (BERT-base in 60 % of its peak on rtx2080ti-pcie3:
   * 2.7 s), and three compiles sharing two cores stopped there, their plans no longer
   * reproducible. */
  bool scheduled = ir->n_swaps > 0; /* both arenas: the host one need only fit its budget */
  sfc_pack_options_t opt = {.time_limit_s = cfg->packer.time_limit_s /
                                            (scheduled ? (ir->pack_brief ? 20 : 10) : 1),
                            .backstop_s = SFC_PACK_WALL_FACTOR * cfg->packer.time_limit_s + 1.0,
                            .mip_max_blocks = cfg->packer.mip_max_blocks,
                            .fit_is_enough = scheduled};
  sfc_pack_result_t res;
  sfc_status_t st =
      sfc_pack_run(ir->pack_fast ? "best-fit" : cfg->packer.algorithm, &problem, &opt, &res, err);
  if (st != SFC_OK) {
    if (!device)
      sfc_error_prefix(err, "host staging arena");
    return st;
  }
  for (uint32_t k = 0; k < n; k++)
    ir->blocks[which[k]].offset = pb[k].offset;
  *(device ? &ir->arena_bytes : &ir->host_arena_bytes) = res.peak;
  if (device || !ir->packer_name)
    ir->packer_name = res.algorithm;
  ir->packing_optimal = ir->packing_optimal && res.optimal;
  ir->pack_wall_stopped = ir->pack_wall_stopped || res.wall_stopped; /* sticky: any round */
  ir->pack_seconds += res.seconds;
  return SFC_OK;
}

sfc_status_t sfc_ir_page_peak(sfc_ir_t *ir, sfc_error_t *err) {
  return sfc_ir_count_pages(ir, &ir->page_peak_bytes, err);
}

sfc_status_t sfc_ir_count_pages(const sfc_ir_t *ir, uint64_t *out, sfc_error_t *err) {
  *out = 0;
  if (!sfc_ir_paged(ir))
    return SFC_OK;
  sfc_pack_block_t *pb = malloc(((size_t)ir->n_blocks + 1) * sizeof *pb);
  uint32_t *at = malloc(((size_t)ir->n_blocks + 1) * sizeof *at); /* IR block -> pb, or NONE */
  if (!pb || !at) {
    free(pb);
    free(at);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory counting pages");
  }
  size_t n = 0;
  for (uint32_t i = 0; i < ir->n_blocks; i++) {
    const sfc_block_t *b = &ir->blocks[i];
    at[i] = SFC_PLAN_NONE;
    if (b->arena != SFC_ARENA_DEVICE || b->bytes == 0)
      continue;
    at[i] = (uint32_t)n;
    pb[n++] = (sfc_pack_block_t){.size = b->bytes,
                                 .start = b->first_step,
                                 .end = (int64_t)b->last_step + 1,
                                 .offset = b->offset};
  }
  for (uint32_t w = 0; w < ir->n_swaps; w++) {
    const sfc_swap_t *x = &ir->swaps[w];
    uint32_t k = at[x->device_block];
    int64_t step = x->issue_step < ir->n_steps ? x->issue_step : (int64_t)ir->n_steps - 1;
    if (x->direction == SFC_SWAP_OUT && k != SFC_PLAN_NONE && step + 1 > pb[k].end)
      pb[k].end = step + 1;
  }
  sfc_pack_problem_t p = {.blocks = pb, .count = n, .alignment = 1};
  sfc_status_t st = sfc_pack_page_peak(&p, ir->config->arena.page_bytes, out, err);
  free(pb);
  free(at);
  return st;
}

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
  ir->arena_bytes = ir->host_arena_bytes = 0;
  ir->packing_optimal = true;
  ir->pack_seconds = 0;
  ir->packer_name = NULL;
  for (int arena = 0; arena < SFC_ARENA_COUNT; arena++)
    SFC_TRY(pack_arena(ir, (sfc_arena_t)arena, err));
  SFC_TRY(sfc_ir_page_peak(ir, err));
  uint64_t host_budget = cfg->host.staging_budget_bytes;
  ir->fits_budget = sfc_ir_device_bytes(ir) <= cfg->budget_bytes &&
                    (host_budget == 0 || ir->host_arena_bytes <= host_budget);
  return SFC_OK;
}
