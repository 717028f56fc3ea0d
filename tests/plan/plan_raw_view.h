/* plan_raw_view.h — a plan view read straight from a file's bytes, without the
 * loader's checks: for tests that hand the same records to both implementations of
 * the plan rules (the runtime's sfcrt_plan_validate and the compiler's
 * sfc_verify_plan), including records the loader would refuse.
 *
 *   sfc_plan_view_t v;
 *   if (plan_raw_view(data, size, &v))       // v points into data
 *     sfc_verify_plan(&v, false, NULL, &err);
 *
 * Only the section table is trusted, and only as far as it is checked here: every
 * known section inside the file, 8-byte aligned, with the native record size (what
 * the writer emits and plan_mutate.h leaves alone). The records themselves are not
 * checked at all: that is the point. data must be 8-byte aligned (malloc is).
 */
#ifndef SFC_TEST_PLAN_RAW_VIEW_H
#define SFC_TEST_PLAN_RAW_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "plan_mutate.h"
#include "sfc/plan_format.h"

/* 1: *v describes data (arrays point into it); 0: the table does not look as above. */
static inline int plan_raw_view(const uint8_t *d, size_t n, sfc_plan_view_t *v) {
  static const size_t native[SFC_SECTION_KIND_MAX + 1] = {0,
                                                          1,
                                                          sizeof(sfc_plan_meta_t),
                                                          sizeof(sfc_plan_tensor_t),
                                                          sizeof(sfc_plan_op_t),
                                                          4,
                                                          sizeof(sfc_plan_block_t),
                                                          sizeof(sfc_plan_block_t),
                                                          sizeof(sfc_plan_step_t),
                                                          4,
                                                          sizeof(sfc_plan_swap_t),
                                                          sizeof(sfc_plan_dep_t),
                                                          sizeof(sfc_plan_segment_t),
                                                          sizeof(sfc_plan_box_t)};
  memset(v, 0, sizeof *v);
  if (!plan_mutate_table(d, n, &v->header))
    return 0;
  for (uint32_t i = 0; i < v->header.section_count; i++) {
    sfc_plan_section_t e;
    memcpy(&e, d + v->header.section_table_offset + (uint64_t)i * v->header.section_entry_bytes,
           sizeof e);
    if (e.kind == 0 || e.kind > SFC_SECTION_KIND_MAX)
      continue;
    if (e.entry_bytes != native[e.kind] || e.offset % 8 || e.offset > n ||
        (uint64_t)e.count * e.entry_bytes > n - e.offset)
      return 0;
    const void *at = d + e.offset;
    switch (e.kind) {
      case SFC_SECTION_STRINGS:
        v->strings = at, v->strings_bytes = e.count;
        break;
      case SFC_SECTION_META:
        if (e.count != 1)
          return 0;
        memcpy(&v->meta, at, sizeof v->meta);
        break;
#define SEC(K, arr, cnt)                                                                           \
  case K:                                                                                          \
    v->arr = at, v->cnt = e.count;                                                                 \
    break
        SEC(SFC_SECTION_TENSORS, tensors, tensor_count);
        SEC(SFC_SECTION_OPS, ops, op_count);
        SEC(SFC_SECTION_OP_OPERANDS, op_operands, op_operand_count);
        SEC(SFC_SECTION_BLOCKS, blocks, block_count);
        SEC(SFC_SECTION_HOST_BLOCKS, host_blocks, host_block_count);
        SEC(SFC_SECTION_STEPS, steps, step_count);
        SEC(SFC_SECTION_STEP_OPERANDS, step_operands, step_operand_count);
        SEC(SFC_SECTION_SWAPS, swaps, swap_count);
        SEC(SFC_SECTION_DEPS, deps, dep_count);
        SEC(SFC_SECTION_SEGMENTS, segments, segment_count);
        SEC(SFC_SECTION_BOXES, boxes, box_count);
#undef SEC
    }
  }
  return v->strings && v->tensors && v->ops && v->blocks && v->steps;
}

#endif /* SFC_TEST_PLAN_RAW_VIEW_H */
