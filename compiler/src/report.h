/* report.h — what the compiler prints for people: the compile summary and IR dumps. */
#ifndef SFC_REPORT_H
#define SFC_REPORT_H

#include <stdio.h>

#include "ir.h"

/* The summary `sfc compile` prints (see docs/cli.md). plan_path/plan_bytes may be
 * NULL/0 when no plan was written. */
void sfc_report_compile(const sfc_ir_t *ir, double seconds, const char *plan_path,
                        uint64_t plan_bytes, FILE *out);

/* The IR after a pass, for --dump-after: steps, tensors with live ranges, blocks. */
void sfc_report_dump_ir(const sfc_ir_t *ir, const char *after_pass, FILE *out);

#endif /* SFC_REPORT_H */
