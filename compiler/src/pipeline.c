/* pipeline.c — the whole compiler, one pass per line (QBE's func() is the model).
 *
 *   graph + config ─> steps ─> liveness ─> blocks ─> pack ─> plan ─> verify ─> (emit)
 *
 * Passes never call each other; each reads and writes documented fields of the IR
 * (ir.h). The verifier checks the finished plan view before anything is written,
 * and the runtime validates the file again when it loads it. --dump-after PASS
 * prints the IR after a pass (report.c).
 */
#include "pipeline.h"
#include "units.h"

#include <string.h>

#include "passes.h"
#include "report.h"

static const struct {
  const char *name;
  sfc_pass_fn fn;
} passes[] = {
    {"steps", sfc_pass_steps},       /* one step per op (tiles later) */
    {"liveness", sfc_pass_liveness}, /* live ranges, in-core peak */
    {"blocks", sfc_pass_blocks},     /* arena residencies, lower bound */
    {"pack", sfc_pass_pack},         /* offsets */
    {"plan", sfc_pass_plan},         /* the plan view */
    {"verify", sfc_pass_verify},     /* invariants */
};

const char *sfc_pass_name(size_t index) {
  return index < sizeof passes / sizeof passes[0] ? passes[index].name : NULL;
}

sfc_status_t sfc_compile_ir(sfc_ir_t *ir, const sfc_compile_options_t *opt, sfc_error_t *err) {
  FILE *dump = opt && opt->dump ? opt->dump : stderr;
  SFC_TRY(sfc_config_check_implemented(ir->config, err));
  for (size_t i = 0; i < sizeof passes / sizeof passes[0]; i++) {
    double t0 = sfc_clock_seconds();
    sfc_status_t st = passes[i].fn(ir, err);
    if (st == SFC_ERR_INTERNAL)
      sfc_error_prefix(err, passes[i].name);
    SFC_TRY(st);
    if (opt && opt->verbose > 0)
      fprintf(dump, "sfc: pass %-9s %9.3f ms\n", passes[i].name, (sfc_clock_seconds() - t0) * 1e3);
    if (opt && opt->dump_after &&
        (strcmp(opt->dump_after, "all") == 0 || strcmp(opt->dump_after, passes[i].name) == 0))
      sfc_report_dump_ir(ir, passes[i].name, dump);
  }
  return SFC_OK;
}
