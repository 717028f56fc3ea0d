/* pack_clock.c — the work clock and the packers' cost models (pack_clock.h). */
#include "pack_clock.h"

#include <math.h>

#include "units.h"

#define SEARCH_NS_PER_UNIT 0.6 /* measured 0.37-0.6 ns (154-1042 blocks) */

void sfc_pack_clock_start(sfc_pack_clock_t *c, bool wall, double limit_s, double backstop_s) {
  *c = (sfc_pack_clock_t){.wall = wall,
                          .t0 = sfc_clock_seconds(),
                          .backstop =
                              backstop_s > 0 ? backstop_s : SFC_PACK_WALL_FACTOR * limit_s + 1.0};
}

double sfc_pack_clock_backstop_left(const sfc_pack_clock_t *c) {
  double left = c->backstop - (sfc_clock_seconds() - c->t0);
  return left > 1e-3 ? left : 1e-3;
}

double sfc_pack_clock_now(sfc_pack_clock_t *c) {
  double w = sfc_clock_seconds() - c->t0;
  if (c->wall)
    return w;
  if (c->wall_stopped || w > c->backstop) {
    c->wall_stopped = true;
    return INFINITY;
  }
  return c->work;
}

double sfc_pack_clock_spent(sfc_pack_clock_t *c, double t_wall, double model_s) {
  if (c->wall)
    return sfc_clock_seconds() - t_wall;
  c->work += model_s;
  return model_s;
}

double sfc_pack_cost_best_fit(size_t n) {
  double l = n > 1 ? log2((double)n) : 1.0;
  return (6.0 * (double)n * l * l + 200.0 * (double)n) * 1e-9;
}

double sfc_pack_cost_greedy(size_t n, double pairs) {
  return (15.0 * pairs + 100.0 * (double)n) * 1e-9;
}

double sfc_pack_cost_search(uint64_t units) {
  return (double)units * SEARCH_NS_PER_UNIT * 1e-9;
}

double sfc_pack_cost_mip(double iterations, double rows, double nodes) {
  return (iterations * (5000.0 + 60.0 * rows) + nodes * 20000.0) * 1e-9;
}
