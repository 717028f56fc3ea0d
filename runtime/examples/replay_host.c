/* replay_host.c — a complete program driving a plan through the sfcrt pull loop on the
 * `host` device, the way a framework integration would (docs/runtime.md).
 *
 *   cmake --build build --target sfcrt_example_replay
 *   build/runtime/examples/sfcrt_example_replay tests/data/runtime/full.plan
 *
 * It loads and validates the plan, creates a session, binds every external tensor to
 * memory it owns (a framework binds its parameters and inputs here), then runs three
 * iterations: for each step it "launches" the op — here it reads every input byte and
 * writes every output and workspace byte, which is what a kernel would touch — and
 * reports the step done. At the end it prints the session's stats. Errors are printed
 * once, and every object is freed on every path.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sfcrt.h"

/* The "kernel": folds the inputs into one byte and writes it over the outputs. */
static void launch(const sfc_plan_view_t *v, const sfcrt_step_t *st) {
  const sfc_plan_op_t *op = &v->ops[st->op];
  const uint32_t *tensors = v->op_operands + op->operand_begin;
  uint8_t acc = (uint8_t)st->index;
  for (uint32_t i = 0; i < st->input_count; i++) {
    const uint8_t *p = st->inputs[i];
    for (uint64_t k = 0; k < v->tensors[tensors[i]].bytes; k++)
      acc = (uint8_t)(acc * 31u + p[k]);
  }
  for (uint32_t i = 0; i < st->output_count; i++)
    memset(st->outputs[i], acc, v->tensors[tensors[st->input_count + i]].bytes);
  for (uint32_t i = 0; i < st->temp_count; i++)
    memset(st->temps[i], 0, v->tensors[tensors[st->input_count + st->output_count + i]].bytes);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: %s PLAN\n", argv[0]);
    return 2;
  }
  sfc_error_t err;
  sfcrt_plan_t *plan = NULL;
  sfcrt_session_t *s = NULL;
  void **external = NULL;
  int rc = 1;
  if (sfcrt_plan_load_file(argv[1], NULL, &plan, &err) != SFC_OK)
    goto fail;
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);

  sfcrt_options_t opt;
  sfcrt_options_init(&opt);
  opt.device = "host";
  if (sfcrt_session_create(plan, &opt, &s, &err) != SFC_OK)
    goto fail;

  /* Bind every external tensor (the framework's parameters and inputs). */
  external = calloc(v->tensor_count ? v->tensor_count : 1, sizeof *external);
  if (!external) {
    sfc_error_set(&err, SFC_ERR_OUT_OF_MEMORY, "out of memory");
    goto fail;
  }
  for (uint32_t t = 0; t < v->tensor_count; t++) {
    if (!(v->tensors[t].flags & SFC_TENSOR_EXTERNAL))
      continue;
    uint64_t bytes = v->tensors[t].bytes ? v->tensors[t].bytes : 1;
    external[t] = calloc(1, (size_t)bytes);
    if (!external[t]) {
      sfc_error_set(&err, SFC_ERR_OUT_OF_MEMORY, "out of memory");
      goto fail;
    }
    if (sfcrt_session_bind(s, t, external[t], bytes, &err) != SFC_OK)
      goto fail;
  }

  for (int it = 0; it < 3; it++) {
    if (sfcrt_iteration_begin(s, &err) != SFC_OK)
      goto fail;
    const sfcrt_step_t *st;
    while (sfcrt_step_next(s, &st, &err) == SFC_OK && st) {
      launch(v, st); /* on st->stream for cuda; st->boxes says which tile */
      if (sfcrt_step_done(s, &err) != SFC_OK)
        goto fail;
    }
    if (err.status != SFC_OK || sfcrt_iteration_end(s, &err) != SFC_OK)
      goto fail;
  }

  sfcrt_stats_t stats;
  sfcrt_session_stats(s, &stats);
  printf("%s: %llu iterations, %llu steps, swapped in %llu B, out %llu B, arena %llu B, "
         "peak %llu B\n",
         argv[1], (unsigned long long)stats.iterations, (unsigned long long)stats.steps,
         (unsigned long long)stats.bytes_swapped_in, (unsigned long long)stats.bytes_swapped_out,
         (unsigned long long)stats.arena_bytes, (unsigned long long)stats.peak_device_bytes);
  rc = 0;
fail:
  if (rc)
    fprintf(stderr, "%s\n", err.message);
  sfcrt_session_destroy(s);
  if (external)
    for (uint32_t t = 0; t < sfcrt_plan_view(plan)->tensor_count; t++)
      free(external[t]);
  free(external);
  sfcrt_plan_destroy(plan);
  return rc;
}
