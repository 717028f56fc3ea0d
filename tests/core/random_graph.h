/* random_graph.h — a seeded random training iteration for the scheduler tests (core
 * test_schedule and runtime test_schedule_replay): params, a forward chain with
 * skips, workspaces and in-place ops, a loss, a backward pass reading the saved
 * activations in reverse and accumulating some gradients in place, updates; random op
 * times (some untimed) measured on `device`, so a profile of that name uses them.
 *
 *   uint64_t rng = 42;
 *   sfc_graph_t *g = rg_training_graph(&rng, 30, "test");
 *
 * Include after graph_build.h and test_rand.h; everything is static.
 */
#ifndef SFC_TEST_RANDOM_GRAPH_H
#define SFC_TEST_RANDOM_GRAPH_H

#include "graph_build.h"
#include "test_rand.h"

#define RG_MAX_LAYERS 256

static inline uint32_t rg_rnd(uint64_t *rng, uint32_t n) {
  return (uint32_t)(test_rand_next(rng) % n);
}

/* updates_last: every update after the whole backward pass, in layer order (an
 * optimizer's step, as PyTorch records it), and params up to 64 KiB: the state the updates
 * write goes home at the iteration's end. Otherwise each layer's update follows its
 * backward op. */
static inline sfc_graph_t *rg_training_graph_ex(uint64_t *rng, int layers, const char *device,
                                                bool updates_last) {
  if (layers < 1 || layers > RG_MAX_LAYERS)
    abort();
  uint32_t gws[RG_MAX_LAYERS];
  sfc_graph_t *g = tg_new("random");
  uint32_t x = tg_tensor(g, "x", 1 + rg_rnd(rng, 1 << 16), SFC_KIND_INPUT);
  uint32_t acts[RG_MAX_LAYERS], params[RG_MAX_LAYERS], grads[RG_MAX_LAYERS], prev = x;
  for (int i = 0; i < layers; i++) {
    params[i] =
        tg_tensor(g, "w", 1 + rg_rnd(rng, updates_last ? 1 << 16 : 1 << 12), SFC_KIND_PARAM);
    acts[i] = tg_tensor(g, "a", 1 + rg_rnd(rng, 1 << 18), SFC_KIND_ACTIVATION);
    uint32_t skip = i > 2 && rg_rnd(rng, 3) == 0 ? acts[rg_rnd(rng, (uint32_t)i)] : prev;
    uint32_t in[] = {prev, params[i], skip};
    uint32_t o = tg_op(g, "fwd", SFC_PHASE_FORWARD, 3, in, 1, &acts[i]);
    if (rg_rnd(rng, 4) == 0)
      tg_workspace(g, o, 1 + rg_rnd(rng, 1 << 15));
    if (rg_rnd(rng, 5) == 0) /* an in-place op (relu_) */
      tg_op(g, "inplace", SFC_PHASE_FORWARD, 1, &acts[i], 1, &acts[i]);
    prev = acts[i];
  }
  uint32_t loss = tg_tensor(g, "loss", 4, SFC_KIND_OUTPUT);
  tg_op(g, "loss", SFC_PHASE_LOSS, 1, &prev, 1, &loss);
  uint32_t grad = loss;
  for (int i = layers - 1; i >= 0; i--) {
    grads[i] = tg_tensor(g, "g", g->tensors[acts[i]].bytes, SFC_KIND_GRAD);
    uint32_t gw = tg_tensor(g, "gw", g->tensors[params[i]].bytes, SFC_KIND_GRAD);
    uint32_t in[] = {grad, acts[i], params[i]}, out[] = {grads[i], gw};
    tg_op(g, "bwd", SFC_PHASE_BACKWARD, 3, in, 2, out);
    if (i + 2 < layers && rg_rnd(rng, 4) == 0) { /* accumulate into a later layer's grad */
      uint32_t acc_in[] = {grads[i + 2], grads[i]};
      tg_op(g, "acc_", SFC_PHASE_BACKWARD, 2, acc_in, 1, &grads[i + 2]);
    }
    uint32_t uin[] = {params[i], gw};
    gws[i] = gw;
    if (!updates_last)
      tg_op(g, "sgd", SFC_PHASE_UPDATE, 2, uin, 1, &params[i]);
    grad = grads[i];
  }
  for (int i = 0; updates_last && i < layers; i++) {
    uint32_t uin[] = {params[i], gws[i]};
    tg_op(g, "sgd", SFC_PHASE_UPDATE, 2, uin, 1, &params[i]);
  }
  g->device = device;
  for (uint32_t o = 0; o < g->n_ops; o++)
    g->ops[o].time_us = rg_rnd(rng, 3) ? (double)rg_rnd(rng, 200) : -1;
  return g;
}

static inline sfc_graph_t *rg_training_graph(uint64_t *rng, int layers, const char *device) {
  return rg_training_graph_ex(rng, layers, device, false);
}

#endif /* SFC_TEST_RANDOM_GRAPH_H */
