/* time_model.h — how long an op takes on the plan's device: the one rule.
 *
 * The bundled graphs carry op times measured where they were exported (a CPU); plans
 * are for GPUs. Every step time the compiler writes into a plan comes from
 * sfc_time_op_us (the steps pass calls it; the schedulers read the step times and the
 * sim device charges them), so there is exactly one rule:
 *
 *   - the graph was recorded on the profile's device (sfc_time_device_matches) and the
 *     op has a measured time_us: that time;
 *   - otherwise the roofline of the op on the profile (sfc_time_roofline_us):
 *       max(flops / (peak_flops * e_flops), bytes / (memory bandwidth * e_bytes))
 *       + launch overhead
 *     with the efficiencies of the op's class (sfc_op_class), bytes the sum of the
 *     bytes of the tensors the op reads and writes (its inputs and outputs, each
 *     operand counted once; a workspace is scratch and does not count), and 0 for an
 *     op of the free class (views, detach, empty, ...).
 *   - a profile without the model's numbers (peak_flops, memory bandwidth,
 *     efficiencies: a hand-made config in code, never a built-in profile or a config
 *     file) keeps the measured time, or unknown (-1) without one.
 *
 * docs/algorithms.md#device-time-model describes the rule and the matching of device
 * names; profiles.c says where each number comes from.
 */
#ifndef SFC_TIME_MODEL_H
#define SFC_TIME_MODEL_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"
#include "ir.h"
#include "sfc/plan_format.h"

#define SFC_TIME_MODEL_NAME "roofline" /* as "modelled: roofline" in times_from */

typedef enum sfc_op_class {
  SFC_OP_DENSE = 0,       /* convolution and matmul: FLOP-bound */
  SFC_OP_ELEMENTWISE = 1, /* normalisation, elementwise, pooling, losses; unknown types */
  SFC_OP_FREE = 2         /* views, detach, empty, as_strided, ...: no kernel, cost 0 */
} sfc_op_class_t;

/* The class of an op by its type (the ATen name, e.g. "convolution", "relu_"): one
 * table; an in-place name ("add_") not in it is looked up without its trailing '_'.
 * A type the table does not know is elementwise, and *known (when not NULL) is false. */
sfc_op_class_t sfc_op_class(const char *type, bool *known);
const char *sfc_op_class_name(sfc_op_class_t c); /* "dense", "elementwise", "free" */

/* Whether a graph's `device` names the profile's device, so its measured times are the
 * profile's: the device is the profile's name (case aside), or names its GPU model —
 * the profile name up to its first '-' ("v100" of "v100-nvlink2") — inside it once
 * letters and digits alone are kept, lower-cased, not followed by a digit ("cuda:NVIDIA
 * H200" and "Tesla V100-SXM2-16GB" match h200-pcie5 and v100-nvlink2). "" (no device),
 * any "cpu..." and "cuda:0" (no model) never match. */
bool sfc_time_device_matches(const char *device, const char *profile_name);

/* Whether the profile carries the model's numbers: peak_flops and the memory bandwidth
 * > 0, the four efficiencies in (0, 1], the launch overhead >= 0, all finite. */
bool sfc_time_model_ready(const sfc_profile_t *p);

/* The roofline time of an op of class c, in µs (see the top); p must be ready. */
double sfc_time_roofline_us(sfc_op_class_t c, uint64_t flops, double bytes, const sfc_profile_t *p);

/* The bytes op reads and writes: the sum of its inputs' and outputs' bytes. */
double sfc_time_op_bytes(const sfc_graph_t *g, const sfc_op_t *op);

/* The op's whole duration on profile p, in µs, by the rule at the top; -1 when unknown.
 * p may be NULL (measured times only). */
double sfc_time_op_us(const sfc_graph_t *g, const sfc_op_t *op, const sfc_profile_t *p);

/* Whether any step time of a compiled plan differs from its op's measured time (times
 * the step's share): the compiler modelled it. False for plans whose step times are
 * all measured, or untimed. */
bool sfc_plan_times_modelled(const sfc_plan_view_t *v);

#endif /* SFC_TIME_MODEL_H */
