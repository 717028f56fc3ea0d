/* report.c — the human-readable output of the compiler: the compile summary and
 * the --dump-after IR dump. Machine-readable output is `sfc inspect --json`. */
#include "report.h"

#include <inttypes.h>

#include "units.h"

static void line_bytes(FILE *out, const char *label, uint64_t bytes) {
  char h[32];
  fprintf(out, "  %-18s %12s  (%" PRIu64 " B)\n", label, sfc_format_size(bytes, h, sizeof h),
          bytes);
}

void sfc_report_compile(const sfc_ir_t *ir, double seconds, const char *plan_path,
                        uint64_t plan_bytes, FILE *out) {
  const sfc_graph_t *g = ir->graph;
  const sfc_config_t *cfg = ir->config;
  char h[32];
  fprintf(out, "sfc compile: %s (%u ops, %u tensors) for %s\n", *g->name ? g->name : "(unnamed)",
          g->n_ops, g->n_file_tensors, cfg->device.name);
  fprintf(out, "  %-18s %12u\n", "steps", ir->n_steps);
  fprintf(out, "  %-18s %12u\n", "device blocks", ir->n_blocks);
  line_bytes(out, "in-core peak", ir->in_core_peak);
  line_bytes(out, "lower bound", ir->lower_bound);
  line_bytes(out, "packed arena", ir->arena_bytes);
  fprintf(out, "  %-18s %12.4f  (%s%s)\n", "arena/lower bound",
          ir->lower_bound ? (double)ir->arena_bytes / (double)ir->lower_bound : 1.0,
          ir->packer_name ? ir->packer_name : "?", ir->packing_optimal ? ", optimal" : "");
  if (ir->fits_budget) {
    fprintf(out, "  %-18s %12s  fits\n", "budget", sfc_format_size(cfg->budget_bytes, h, sizeof h));
  } else {
    char more[32];
    fprintf(out, "  %-18s %12s  does NOT fit (%s over)\n", "budget",
            sfc_format_size(cfg->budget_bytes, h, sizeof h),
            sfc_format_size(ir->arena_bytes - cfg->budget_bytes, more, sizeof more));
  }
  fprintf(out, "  %-18s %12.3f ms\n", "compile time", seconds * 1e3);
  if (plan_path)
    fprintf(out, "  %-18s %12s  %s\n", "plan", sfc_format_size(plan_bytes, h, sizeof h), plan_path);
  else
    fprintf(out, "  %-18s %12s\n", "plan", "not written (no -o)");
}

void sfc_report_dump_ir(const sfc_ir_t *ir, const char *after_pass, FILE *out) {
  const sfc_graph_t *g = ir->graph;
  fprintf(out, "## IR after %s\n", after_pass);
  if (ir->steps) {
    fprintf(out, "steps %u\n", ir->n_steps);
    for (uint32_t s = 0; s < ir->n_steps; s++) {
      const sfc_op_t *op = &g->ops[ir->steps[s].op];
      fprintf(out, "  step %u: op %u %s \"%s\" (%s)", s, ir->steps[s].op, op->type, op->name,
              sfc_phase_name(op->phase));
      if (ir->live_bytes)
        fprintf(out, " live %" PRIu64, ir->live_bytes[s]);
      fputc('\n', out);
    }
  }
  fprintf(out, "tensors %u\n", g->n_tensors);
  for (uint32_t t = 0; t < g->n_tensors; t++) {
    const sfc_tensor_t *x = &g->tensors[t];
    fprintf(out, "  tensor %u id %" PRId64 " \"%s\" %s %" PRIu64 " B", t, x->id, x->name,
            sfc_tensor_kind_name(x->kind), x->bytes);
    if (x->flags & SFC_TENSOR_UNUSED)
      fputs(" unused", out);
    else if (x->first_step != SFC_PLAN_NONE)
      fprintf(out, " live [%u, %u]", x->first_step, x->last_step);
    fputc('\n', out);
  }
  if (ir->blocks) {
    fprintf(out, "blocks %u (lower bound %" PRIu64 ", arena %" PRIu64 ")\n", ir->n_blocks,
            ir->lower_bound, ir->arena_bytes);
    for (uint32_t b = 0; b < ir->n_blocks; b++) {
      const sfc_block_t *x = &ir->blocks[b];
      fprintf(out, "  block %u tensor %u [%u, %u] %" PRIu64 " B at %" PRIu64 "\n", b, x->tensor,
              x->first_step, x->last_step, x->bytes, x->offset);
    }
  }
}
