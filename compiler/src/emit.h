/* emit.h — serialise a plan view into the plan file format (sfc/plan_format.h).
 *
 * The writer lays sections out in kind order at 64-byte aligned offsets, fills the
 * magic, version, endianness/float checks, section table and every CRC-32, and
 * takes from view->header only: alignment, arena_bytes, host_arena_bytes,
 * budget_bytes, host_budget_bytes and flags.
 *
 *   void *data; size_t n;
 *   SFC_TRY(sfc_plan_write_buffer(&ir->plan, &data, &n, err));   // free(data) after
 *   SFC_TRY(sfc_plan_write_file(&ir->plan, "out.plan", err));    // outfile.h: safe, atomic
 */
#ifndef SFC_EMIT_H
#define SFC_EMIT_H

#include <stddef.h>

#include "sfc/plan_format.h"
#include "sfc/status.h"

/* *out_data is malloc'ed; the caller frees it. */
sfc_status_t sfc_plan_write_buffer(const sfc_plan_view_t *view, void **out_data, size_t *out_bytes,
                                   sfc_error_t *err);

/* Writes through sfc_outfile_write (outfile.h): a fresh temporary renamed over path, so a
 * failed write never leaves a partial plan; messages name path. */
sfc_status_t sfc_plan_write_file(const sfc_plan_view_t *view, const char *path, sfc_error_t *err);

#endif /* SFC_EMIT_H */
