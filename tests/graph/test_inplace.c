/* test_inplace.c — `sfc compile --inplace` (inplace.c): which elementwise results move
 * into a dying input, and which stay apart.
 *
 * One graph, built to exercise each rule: a gradient sum whose first input dies there
 * (moved, though its second input lives on), a threshold_backward fed by that sum
 * (moved again: a chain, each later reader following), a mul of a persistent input and
 * an activation (no input of its kind and shape dies), a non-elementwise op (mm), an add
 * whose dying input is broadcast (another shape), one whose tensors carry no shape, and
 * a result of kind output. Every operand list is checked against the hand-worked one. */
#include <string.h>

#include "check.h"
#include "inplace.h"
#include "load_graph.h"

static const char graph_json[] =
    "{\"format\": \"sfc-graph\", \"version\": 1, \"name\": \"inplace-rules\",\n"
    " \"tensors\": [\n"
    "  {\"id\": 0, \"name\": \"x\", \"bytes\": 128, \"kind\": \"input\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 1, \"name\": \"a\", \"bytes\": 128, \"kind\": \"activation\", \"shape\": [4, "
    "8], \"dtype\": \"f32\"},\n"
    "  {\"id\": 2, \"name\": \"g1\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 3, \"name\": \"g2\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 4, \"name\": \"s\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 5, \"name\": \"y\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 6, \"name\": \"w\", \"bytes\": 256, \"kind\": \"param\", \"shape\": [8, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 7, \"name\": \"m\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 8, \"name\": \"c\", \"bytes\": 32, \"kind\": \"grad\", \"shape\": [1, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 9, \"name\": \"v\", \"bytes\": 128, \"kind\": \"grad\", \"shape\": [4, 8], "
    "\"dtype\": \"f32\"},\n"
    "  {\"id\": 10, \"name\": \"p\", \"bytes\": 64, \"kind\": \"grad\"},\n"
    "  {\"id\": 11, \"name\": \"q\", \"bytes\": 64, \"kind\": \"grad\"},\n"
    "  {\"id\": 12, \"name\": \"pq\", \"bytes\": 64, \"kind\": \"grad\"},\n"
    "  {\"id\": 13, \"name\": \"loss\", \"bytes\": 128, \"kind\": \"output\", \"shape\": [4, "
    "8], \"dtype\": \"f32\"}\n"
    " ],\n"
    " \"ops\": [\n"
    "  {\"id\": 0, \"name\": \"fa\", \"type\": \"relu\", \"phase\": \"forward\", \"inputs\": "
    "[0], \"outputs\": [1]},\n"
    "  {\"id\": 1, \"name\": \"mk_g1\", \"type\": \"mul\", \"phase\": \"backward\", "
    "\"inputs\": [0, 1], \"outputs\": [2]},\n"
    "  {\"id\": 2, \"name\": \"mk_g2\", \"type\": \"neg\", \"phase\": \"backward\", "
    "\"inputs\": [1], \"outputs\": [3]},\n"
    "  {\"id\": 3, \"name\": \"acc\", \"type\": \"add\", \"phase\": \"backward\", \"inputs\": "
    "[2, 3], \"outputs\": [4]},\n"
    "  {\"id\": 4, \"name\": \"tb\", \"type\": \"threshold_backward\", \"phase\": "
    "\"backward\", \"inputs\": [4, 1], \"outputs\": [5]},\n"
    "  {\"id\": 5, \"name\": \"mm\", \"type\": \"mm\", \"phase\": \"backward\", \"inputs\": "
    "[3, 6], \"outputs\": [7]},\n"
    "  {\"id\": 6, \"name\": \"mk_c\", \"type\": \"sum\", \"phase\": \"backward\", "
    "\"inputs\": [7], \"outputs\": [8]},\n"
    "  {\"id\": 7, \"name\": \"bias\", \"type\": \"add\", \"phase\": \"backward\", "
    "\"inputs\": [7, 8], \"outputs\": [9]},\n"
    "  {\"id\": 8, \"name\": \"mk_p\", \"type\": \"neg\", \"phase\": \"backward\", "
    "\"inputs\": [1], \"outputs\": [10, 11]},\n"
    "  {\"id\": 9, \"name\": \"pq\", \"type\": \"add\", \"phase\": \"backward\", \"inputs\": "
    "[10, 11], \"outputs\": [12]},\n"
    "  {\"id\": 10, \"name\": \"out\", \"type\": \"add\", \"phase\": \"loss\", \"inputs\": "
    "[5, 7, 9, 12, 1], \"outputs\": [13]}\n"
    " ]}\n";

static void check_ops(const sfc_op_t *op, const uint32_t *in, uint32_t n_in, uint32_t out) {
  CHECK_EQ_U64(op->n_inputs, n_in);
  for (uint32_t k = 0; k < n_in && k < op->n_inputs; k++)
    CHECK_EQ_U64(op->inputs[k], in[k]);
  CHECK_EQ_U64(op->n_outputs, 1);
  if (op->n_outputs == 1)
    CHECK_EQ_U64(op->outputs[0], out);
}

static void rules(void) {
  sfc_graph_t *g = NULL;
  sfc_error_t err = {0};
  CHECK_OK(sfc_graph_load_buffer(graph_json, sizeof graph_json - 1, &g, &err), err);
  if (!g)
    return;
  sfc_inplace_t r;
  CHECK_OK(sfc_graph_inplace(g, &r, &err), err);
  CHECK_EQ_U64(r.ops, 2);                                            /* acc and tb */
  CHECK_EQ_U64(r.bytes, 256);                                        /* s and y */
  check_ops(&g->ops[1], (const uint32_t[]){0, 1}, 2, 2);             /* x persistent, a lives on */
  check_ops(&g->ops[3], (const uint32_t[]){2, 3}, 2, 2);             /* s into g1 (g2 lives on) */
  check_ops(&g->ops[4], (const uint32_t[]){2, 1}, 2, 2);             /* y into s, that is g1 */
  check_ops(&g->ops[5], (const uint32_t[]){3, 6}, 2, 7);             /* mm: not elementwise */
  check_ops(&g->ops[7], (const uint32_t[]){7, 8}, 2, 9);             /* m lives on, c is [1, 8] */
  check_ops(&g->ops[9], (const uint32_t[]){10, 11}, 2, 12);          /* no shapes: left apart */
  check_ops(&g->ops[10], (const uint32_t[]){2, 7, 9, 12, 1}, 5, 13); /* y read as g1 */
  sfc_graph_destroy(g);

  /* a second rewrite finds nothing more: every result left apart still has its reason */
  CHECK_OK(sfc_graph_load_buffer(graph_json, sizeof graph_json - 1, &g, &err), err);
  if (!g)
    return;
  CHECK_OK(sfc_graph_inplace(g, &r, &err), err);
  CHECK_OK(sfc_graph_inplace(g, &r, &err), err);
  CHECK_EQ_U64(r.ops, 0);
  sfc_graph_destroy(g);
}

static void types(void) {
  CHECK(sfc_inplace_type("add"));
  CHECK(sfc_inplace_type("threshold_backward"));
  CHECK(!sfc_inplace_type("mm"));
  CHECK(!sfc_inplace_type("add_")); /* already in place */
  CHECK(!sfc_inplace_type("convolution_backward"));
}

int main(void) {
  rules();
  types();
  return check_summary();
}
