/* sfc/plan_reader.h — load and validate a plan file (format v1).
 *
 *   sfc_error_t err;
 *   sfcrt_plan_t *plan;
 *   if (sfcrt_plan_load_file("resnet.plan", NULL, &plan, &err) != SFC_OK) {
 *     fprintf(stderr, "%s\n", err.message);   // e.g. "section BLOCKS: CRC-32 mismatch ..."
 *     return 1;
 *   }
 *   const sfc_plan_view_t *v = sfcrt_plan_view(plan);
 *   printf("arena %llu bytes, %u steps\n", (unsigned long long)v->header.arena_bytes,
 *          v->step_count);
 *   sfcrt_plan_destroy(plan);
 *
 * Loading validates everything once so replay can trust the plan blindly:
 *  - structure: magic, version, endianness and float checks, header and section
 *    table CRC-32, every section's bounds, 64-byte alignment and CRC-32, record
 *    sizes, counts below the SFC_PLAN_MAX_* limits, all overflow-checked;
 *  - references: every string, tensor, op, block, step, swap, segment and box index
 *    in range;
 *  - semantics: every device block's offset + bytes <= arena_bytes and offset a
 *    multiple of the alignment; no two device blocks whose step ranges intersect
 *    share a byte (likewise host blocks); each step's operands name blocks of the
 *    right tensor that are live at that step; dependencies point backwards in issue
 *    order; swaps move between blocks of their tensor; and the rest of the 55
 *    invariants of docs/plan-format.md ("Invariants": each with its rule number, why it
 *    exists, who checks it and the corpus file that breaks it), the same ones the
 *    compiler's verifier proves (plan_validate.c and pass_verify.c).
 * The first violation found is reported, one line, naming the section, record and
 * field. The plan object owns a private copy of the data; the caller's buffer may
 * be freed after a load from memory.
 */
#ifndef SFC_PLAN_READER_H
#define SFC_PLAN_READER_H

#include "sfc/allocator.h"
#include "sfc/plan_format.h"
#include "sfc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct sfcrt_plan sfcrt_plan_t;

/* Load from memory. alloc may be NULL (libc). On failure *out_plan is NULL. */
sfc_status_t sfcrt_plan_load_buffer(const void *data, size_t bytes, const sfc_allocator_t *alloc,
                                    sfcrt_plan_t **out_plan, sfc_error_t *err);

/* Load from a file (read whole, then as above). */
sfc_status_t sfcrt_plan_load_file(const char *path, const sfc_allocator_t *alloc,
                                  sfcrt_plan_t **out_plan, sfc_error_t *err);

/* The validated contents. Valid until sfcrt_plan_destroy. */
const sfc_plan_view_t *sfcrt_plan_view(const sfcrt_plan_t *plan);

/* The reference and semantic checks alone, on a view in memory: what a load runs
 * after its structural checks (the view must be structurally sound: every array as
 * long as its count says). Used by tests that build views directly. */
sfc_status_t sfcrt_plan_validate(const sfc_plan_view_t *view, const sfc_allocator_t *alloc,
                                 sfc_error_t *err);

/* A plan over a view in memory, validated as a load validates (sfcrt_plan_validate)
 * but neither serialized nor copied: the view's arrays stay the caller's and must
 * outlive the plan. For a program that built the view itself: the compiler predicts
 * each candidate plan on the sim device this way, without writing, checksumming and
 * reading back every candidate (a tiled U-Net's plans are 72 MiB). The view must be
 * structurally sound, as for sfcrt_plan_validate; empty arrays may be NULL (one NULL
 * with records is SFC_ERR_INVALID_ARGUMENT). alloc may
 * be NULL (libc). On failure *out_plan is NULL. */
sfc_status_t sfcrt_plan_wrap_view(const sfc_plan_view_t *view, const sfc_allocator_t *alloc,
                                  sfcrt_plan_t **out_plan, sfc_error_t *err);

/* Frees the plan; NULL is a no-op. */
void sfcrt_plan_destroy(sfcrt_plan_t *plan);

#ifdef __cplusplus
}
#endif

#endif /* SFC_PLAN_READER_H */
