/* inplace.h — write elementwise ops' results into a dying input (`sfc compile --inplace`).
 *
 *   sfc_inplace_t r;
 *   if (sfc_graph_inplace(graph, &r, &err) != SFC_OK) ...  // after load and --batch
 *
 * A framework's autograd records `add` (a gradient accumulated from two branches),
 * `threshold_backward` and their kind out of place: a fresh result beside two inputs,
 * one of which dies at that op. Writing the result into that input's memory is exact
 * for an elementwise op whose result has the input's shape (each element is read before
 * it is written, by the same thread), and the op no longer holds three large tensors at
 * once. At batch 1700, ResNet-50's backward adds hold 3 x 5.5 GB; in place, 2 x 5.5 GB.
 *
 * The rewrite, for each op in graph order whose type is one of SFC_INPLACE_TYPES and
 * which writes exactly one tensor o: o is not persistent, first touched here, and not
 * also read here; an input i of the same kind, dtype, shape (both known) and batch axis
 * (so the two stay alike at any --batch), not
 * persistent, whose last touch in the graph is this op. The op then writes i (listed
 * in its inputs and outputs, as the graph format's in-place ops are), every later
 * reference to o refers to i, and o is left declared but untouched (no memory). The
 * graph keeps its ops, ids and tensor table; only operand lists change.
 *
 * An executor must then run these ops in place: the out= overload given the input's
 * memory, or the result copied over it (docs/cli.md "--inplace"). O(tensors + operands).
 */
#ifndef SFC_INPLACE_H
#define SFC_INPLACE_H

#include <stdint.h>

#include "ir.h"

/* What a rewrite did (struct sfc_inplace: ir.h, graph->inplace). */
typedef struct sfc_inplace sfc_inplace_t;

/* The op types the rewrite considers: ATen elementwise ops with out= overloads. */
bool sfc_inplace_type(const char *type);

/* SFC_ERR_OUT_OF_MEMORY when the scratch arrays cannot be had; the graph is unchanged on error. */
sfc_status_t sfc_graph_inplace(sfc_graph_t *graph, sfc_inplace_t *out, sfc_error_t *err);

#endif /* SFC_INPLACE_H */
