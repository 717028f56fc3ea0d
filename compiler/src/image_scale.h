/* image_scale.h — rescale a loaded graph to another image size (`sfc compile
 * --image-size N`), so a small export stands for a huge one (issue 12 item 5).
 *
 *   if (sfc_graph_image_scale(graph, 20480, &err) != SFC_OK) ...  // after load
 *
 * The image is the graph's first 4-D input tensor; it must be square. Every 4-D tensor's
 * height and width are derived again, op by op in graph order, by the op catalog's shape
 * rules: a window op (convolution, transposed too, pooling) by its kernel, stride,
 * padding, dilation, output padding and ceil mode; upsampling by its integer factor;
 * adaptive pooling and 1 x 1 global reductions (mean, sum, amax) keep their output; any
 * other output takes the new size of the input it had the same shape as (pointwise
 * ops, batch norm, concatenation, views, and backward ops whose gradient is shaped like
 * one of their inputs), or of the input of the forward op it differentiates. An output
 * the rules cannot size is an error, never a guess. Bytes follow the element count;
 * FLOPs, workspace and the batch-dependent part of op times follow the element count of
 * the op's fastest-growing 4-D operand. Checked against real exports at a second size in
 * tests/graph/test_image_scale.c. */
#ifndef SFC_IMAGE_SCALE_H
#define SFC_IMAGE_SCALE_H

#include <stdint.h>

#include "ir.h"

/* Largest --image-size. */
#define SFC_MAX_IMAGE_SIZE (INT64_C(1) << 20)

/* SFC_ERR_BAD_INPUT when the graph has no square 4-D input or an op cannot be sized;
 * SFC_ERR_LIMIT when a size passes the loader's limits; the graph is unchanged on error.
 * O(tensors + operands). */
sfc_status_t sfc_graph_image_scale(sfc_graph_t *graph, int64_t size, sfc_error_t *err);

#endif /* SFC_IMAGE_SCALE_H */
