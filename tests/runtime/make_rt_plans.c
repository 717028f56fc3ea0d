/* make_rt_plans.c — writes the runtime's hand-built plans for the CLI golden tests:
 *   DIR/swap.plan       the swap plan of rt_plans.h (valid: passes the reader)
 *   DIR/lost_swap.plan  the same with a swap-out that copies 0 bytes: the reader
 *                       rejects it (invariant 43: a swap copies its whole block), so
 *                       `sfc run` fails before any replay (exit 1)
 *   DIR/full.plan       pb_example_full: a tiled segment and a swap round trip
 *   DIR/external.plan   rt_external_plan: pb_simple_chain(3) whose input x is external
 * Run by tests/runtime/regen-rt-plans.sh. */
#include <stdio.h>
#include <stdlib.h>

#include "rt_plans.h"

static void write_plan(const char *dir, const char *name, int variant) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  pb_t *b = pb_new();
  if (variant == -2)
    rt_external_plan(b);
  else if (variant < 0)
    pb_example_full(b);
  else
    rt_swap_plan(b, variant);
  pb_write_file(b, path);
  pb_free(b);
}

int main(int argc, char **argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: make_rt_plans DIR\n");
    return 2;
  }
  write_plan(argv[1], "swap.plan", RT_VALID);
  write_plan(argv[1], "lost_swap.plan", RT_LOST_SWAP_OUT);
  write_plan(argv[1], "full.plan", -1);
  write_plan(argv[1], "external.plan", -2);
  return 0;
}
