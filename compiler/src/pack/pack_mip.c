/* pack_mip.c — exact DSA as a mixed integer program, solved by GLPK's branch and cut.
 *
 * The seed's formulation (profile-guided-dsa.txt §3.1, eqs. 1–6), in units of
 * g = gcd of the aligned sizes w_i (every offset of a pushed-down packing is a sum
 * of aligned sizes, so a multiple of g, and g is a multiple of the alignment):
 *
 *   min u                                                          (1)
 *   x_i + s_i / g <= u                     every block i            (2)
 *   x_i + w_i / g <= x_j + M z_ij          every pair overlapping   (3)
 *   x_j + w_j / g <= x_i + M (1 - z_ij)    in time, z_ij binary     (4)
 *   LB / g <= u <= H / g,  0 <= x_i                                  (5, 6)
 *
 * where s_i is the size, H the incumbent's peak (pack.h's incumbent convention:
 * the caller's offsets when they verify, else greedy-size), LB the lower bound and
 * M = floor(H / g) + 2 (> any x_i + w_i / g - x_j). u is integer when every size
 * is a multiple of g. Identical blocks (same size and lifetime) get z_ij = 0 fixed:
 * swapping them is a symmetry. The incumbent is handed to GLPK in its GLP_IHEUR
 * callback (glp_ios_heur_sol). Presolve is off (the callback must see the original
 * columns); GLPK's terminal output is off. Time: on the wall clock (opt->wall_clock)
 * GLPK's tm_lim is the limit; on the work clock (pack_clock.h) the callback charges
 * GLPK's simplex iterations and nodes at the modelled cost and terminates the search
 * past the limit (tm_lim is then the wall-clock backstop).
 *
 * Cuts: Gomory, cover and clique cuts are on; MIR cuts are off. On tests/pack's
 * quick set (12 trace windows + 12 random instances of 12..22 blocks, started cold
 * from greedy-size) MIR made one solve miss its 10 s limit and the set take 10.5 s;
 * without MIR all 24 are proven, in 0.6 s together. (On the full set, 62 instances
 * up to 30 blocks with 30 s each, MIR proves 59 and no MIR 57: a trade-off.)
 *
 * GLPK's answer is not trusted as is: its x values give an order, and the blocks
 * are re-placed in that order each at the lowest offset above the earlier ones
 * (which never raises a block), then checked; optimality is claimed only when GLPK
 * proved it and the re-placed peak equals GLPK's objective. The best bound of the
 * open nodes is tracked in the callback, so a timed-out solve still reports a gap.
 *
 * Numerics: GLPK works in doubles with relative tolerances, and big-M rows mix
 * coefficients 1 and M. With M in the millions of units (byte-sized blocks whose
 * gcd is 1), GLPK has wrongly pruned the optimum: a 29-buffer window of
 * iopddl/G_1 (sizes 513..7340033, gcd 1) was "proven" at 14053526 while its lower
 * bound 13960345 is reachable (tests/pack). So the problem is scaled
 * (glp_scale_prob), and above MIP_TRUST_UNITS the MIP runs only as a heuristic:
 * its packings are kept, its proofs and bounds are not (optimal only when the peak
 * meets the lower bound).
 *
 * Cost: n + 1 + P columns, n + 2P rows for P overlapping pairs; branch and cut is
 * exponential: meant for up to ~30 blocks (the seed, and the data README: no
 * feasible packing in 60 s for 40 blocks of challenging/A).
 */
#include <glpk.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack_clock.h"
#include "pack_exact.h"
#include "units.h"

#define MIP_MAX_PAIRS   200000u
#define MIP_MAX_UNITS   2147483648.0 /* M above this: not even tried */
#define MIP_TRUST_UNITS 1048576.0    /* M above this: GLPK's optimality is not trusted */

typedef struct mip_ctx {
  int ncols;
  double *inc; /* [ncols + 1] the incumbent, 1-based as GLPK wants it */
  bool inc_given;
  double bound;   /* best bound seen on u, in units */
  double stop_at; /* capacity mode: terminate once an incumbent <= this */
  double last_print, t0;
  int verbose;
  uint64_t work_limit; /* branch-and-bound nodes, 0: none */
  sfc_pack_clock_t *clk;
  double limit, rows; /* the time limit, on clk; the rows of the problem (the cost model) */
} mip_ctx_t;

/* The work clock's charge so far: GLPK's simplex iterations and nodes. */
static void mip_charge(mip_ctx_t *c, glp_prob *lp, int nodes) {
  if (!c->clk->wall)
    c->clk->work = sfc_pack_cost_mip((double)glp_get_it_cnt(lp), c->rows, (double)nodes);
}

static void mip_callback(glp_tree *tree, void *info) {
  mip_ctx_t *c = info;
  int reason = glp_ios_reason(tree);
  int best = glp_ios_best_node(tree);
  if (best != 0) {
    double b = glp_ios_node_bound(tree, best);
    if (b > c->bound)
      c->bound = b;
  }
  if (reason == GLP_ISELECT) {
    int total = 0;
    glp_ios_tree_size(tree, NULL, NULL, &total);
    if (c->work_limit && (uint64_t)total > c->work_limit)
      glp_ios_terminate(tree);
    mip_charge(c, glp_ios_get_prob(tree), total);
    if (!c->clk->wall && sfc_pack_clock_now(c->clk) > c->limit)
      glp_ios_terminate(tree);
  }
  if (reason == GLP_IHEUR && !c->inc_given) {
    c->inc_given = true;
    glp_ios_heur_sol(tree, c->inc);
  }
  if (reason == GLP_IBINGO) {
    double obj = glp_mip_obj_val(glp_ios_get_prob(tree));
    if (c->verbose > 0)
      fprintf(stderr, "mip: incumbent %.0f units after %.2f s\n", obj, sfc_clock_seconds() - c->t0);
    if (obj <= c->stop_at + 1e-6)
      glp_ios_terminate(tree);
  }
  if (c->verbose > 0 && reason == GLP_ISELECT) {
    double now = sfc_clock_seconds();
    if (now - c->last_print >= 1.0) {
      c->last_print = now;
      fprintf(stderr, "mip: %.1f s, bound %.2f units, gap %.2f%%\n", now - c->t0, c->bound,
              100.0 * glp_ios_mip_gap(tree));
    }
  }
}

static uint64_t gcd_u64(uint64_t a, uint64_t b) {
  while (b) {
    uint64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static bool overlap(const sfc_pack_block_t *a, const sfc_pack_block_t *b) {
  return a->start < b->end && b->start < a->end;
}

typedef struct keyed {
  double key;
  uint32_t id;
} keyed_t;

static int keyed_cmp(const void *pa, const void *pb) {
  const keyed_t *a = pa, *b = pb;
  if (a->key != b->key)
    return a->key < b->key ? -1 : 1;
  return a->id < b->id ? -1 : (a->id > b->id);
}

/* Re-places the blocks in the order of key[] (ascending), each at the lowest
 * offset above every earlier block it overlaps (aligned tops: w[]). Writes off[]
 * and returns the peak. Never raises a block of a valid packing ordered by offset. */
static uint64_t replace_in_order(const sfc_pack_problem_t *p, const uint64_t *w, keyed_t *order,
                                 uint64_t *off) {
  size_t n = p->count;
  qsort(order, n, sizeof *order, keyed_cmp);
  uint64_t peak = 0;
  for (size_t k = 0; k < n; k++) {
    uint32_t i = order[k].id;
    uint64_t x = 0;
    for (size_t l = 0; l < k; l++) {
      uint32_t j = order[l].id;
      if (overlap(&p->blocks[i], &p->blocks[j]) && off[j] + w[j] > x)
        x = off[j] + w[j];
    }
    off[i] = x;
    if (x + p->blocks[i].size > peak)
      peak = x + p->blocks[i].size;
  }
  return peak;
}

sfc_status_t sfc_pack_mip(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                          sfc_pack_result_t *out, sfc_error_t *err) {
  double t0 = sfc_clock_seconds();
  double limit = opt && opt->time_limit_s > 0 ? opt->time_limit_s : SFC_PACK_EXACT_DEFAULT_S;
  sfc_pack_clock_t clk;
  sfc_pack_clock_start(&clk, opt && opt->wall_clock, limit, opt ? opt->backstop_s : 0);
  int verbose = opt ? opt->verbose : 0;
  bool minimize = p->capacity == 0 || (opt && opt->minimize);
  size_t n = p->count;
  uint64_t a = p->alignment ? p->alignment : 1;
  out->algorithm = "mip";
  out->peak = 0;
  if (n == 0)
    return SFC_OK;
  uint64_t best;
  SFC_TRY(sfc_pack_exact_incumbent(p, &best, err));
  out->peak = best;
  if (!minimize && best <= p->capacity)
    return SFC_OK;
  uint64_t lb = sfc_pack_lower_bound(p);
  /* The aligned lower bound counts the top block's padding; the peak does not. */
  bool padded = false;
  for (size_t i = 0; i < n; i++)
    if (p->blocks[i].size % a != 0)
      padded = true;
  if (padded)
    lb = lb > a - 1 ? lb - (a - 1) : 0;
  if (best <= lb) {
    out->optimal = true;
    out->best_bound = best;
    return SFC_OK;
  }

  uint64_t *w = malloc(n * sizeof *w), *off = malloc(n * sizeof *off);
  keyed_t *order = malloc(n * sizeof *order);
  uint32_t *pi = NULL, *pj = NULL;
  double *inc = NULL;
  int *ind = NULL;
  double *val = NULL;
  glp_prob *lp = NULL;
  sfc_status_t st = SFC_OK;
  if (!w || !off || !order)
    goto oom;
  uint64_t g = 0;
  bool integral = true;
  for (size_t i = 0; i < n; i++) {
    w[i] = (p->blocks[i].size + a - 1) & ~(a - 1);
    g = gcd_u64(g, w[i]);
  }
  for (size_t i = 0; i < n; i++)
    if (p->blocks[i].size % g != 0)
      integral = false;
  /* The incumbent on the unit grid: re-placed in offset order (never higher). */
  for (size_t i = 0; i < n; i++)
    order[i] = (keyed_t){(double)p->blocks[i].offset, (uint32_t)i};
  uint64_t inc_peak = replace_in_order(p, w, order, off);
  if (inc_peak <= best) {
    best = inc_peak;
    for (size_t i = 0; i < n; i++)
      p->blocks[i].offset = off[i];
  }
  out->peak = best;

  size_t npairs = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (overlap(&p->blocks[i], &p->blocks[j]))
        npairs++;
  double units = floor((double)best / (double)g) + 2.0;
  if (npairs > MIP_MAX_PAIRS || units > MIP_MAX_UNITS) {
    if (verbose > 0)
      fprintf(stderr, "mip: %zu pairs, big-M %.0f units: too large, keeping the incumbent\n",
              npairs, units);
    goto done;
  }
  pi = malloc((npairs ? npairs : 1) * sizeof *pi);
  pj = malloc((npairs ? npairs : 1) * sizeof *pj);
  int ncols = (int)(n + 1 + npairs);
  inc = calloc((size_t)ncols + 1, sizeof *inc);
  ind = malloc(4 * sizeof *ind);
  val = malloc(4 * sizeof *val);
  if (!pi || !pj || !inc || !ind || !val)
    goto oom;
  npairs = 0;
  for (size_t i = 0; i < n; i++)
    for (size_t j = i + 1; j < n; j++)
      if (overlap(&p->blocks[i], &p->blocks[j])) {
        pi[npairs] = (uint32_t)i;
        pj[npairs++] = (uint32_t)j;
      }

  double dg = (double)g, M = units;
  int prev_term = glp_term_out(GLP_OFF);
  lp = glp_create_prob();
  glp_set_obj_dir(lp, GLP_MIN);
  glp_add_cols(lp, ncols);
  int ucol = (int)n + 1;
  for (size_t i = 0; i < n; i++) {
    double ub = floor(((double)best - (double)p->blocks[i].size) / dg);
    glp_set_col_bnds(lp, (int)i + 1, ub > 0 ? GLP_DB : GLP_FX, 0.0, ub > 0 ? ub : 0.0);
    inc[i + 1] = (double)(p->blocks[i].offset / g);
  }
  double ulo = integral ? ceil((double)lb / dg) : (double)lb / dg;
  double uhi = (double)best / dg;
  if (!minimize && p->capacity > 0 && (double)p->capacity / dg < uhi)
    uhi = (double)p->capacity / dg;
  if (ulo > uhi)
    ulo = uhi;
  glp_set_col_bnds(lp, ucol, ulo < uhi ? GLP_DB : GLP_FX, ulo, uhi);
  glp_set_col_kind(lp, ucol, integral ? GLP_IV : GLP_CV);
  glp_set_obj_coef(lp, ucol, 1.0);
  inc[ucol] = (double)best / dg;
  for (size_t k = 0; k < npairs; k++) {
    int col = ucol + 1 + (int)k;
    uint32_t i = pi[k], j = pj[k];
    const sfc_pack_block_t *bi = &p->blocks[i], *bj = &p->blocks[j];
    glp_set_col_kind(lp, col, GLP_BV);
    if (bi->size == bj->size && bi->start == bj->start && bi->end == bj->end)
      glp_set_col_bnds(lp, col, GLP_FX, 0.0, 0.0); /* symmetry: i below j */
    inc[col] = bi->offset + w[i] <= bj->offset ? 0.0 : 1.0;
  }
  /* Rows (2): x_i - u <= -s_i / g. */
  glp_add_rows(lp, (int)(n + 2 * npairs));
  int row = 0;
  for (size_t i = 0; i < n; i++) {
    ind[1] = (int)i + 1;
    val[1] = 1.0;
    ind[2] = ucol;
    val[2] = -1.0;
    glp_set_mat_row(lp, ++row, 2, ind, val);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0, -(double)p->blocks[i].size / dg);
  }
  /* Rows (3), (4). */
  for (size_t k = 0; k < npairs; k++) {
    int col = ucol + 1 + (int)k, xi = (int)pi[k] + 1, xj = (int)pj[k] + 1;
    double wi = (double)(w[pi[k]] / g), wj = (double)(w[pj[k]] / g);
    ind[1] = xi, val[1] = 1.0, ind[2] = xj, val[2] = -1.0, ind[3] = col, val[3] = -M;
    glp_set_mat_row(lp, ++row, 3, ind, val);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0, -wi);
    ind[1] = xj, val[1] = 1.0, ind[2] = xi, val[2] = -1.0, ind[3] = col, val[3] = M;
    glp_set_mat_row(lp, ++row, 3, ind, val);
    glp_set_row_bnds(lp, row, GLP_UP, 0.0, M - wj);
  }

  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_smcp sp;
  glp_init_smcp(&sp);
  sp.msg_lev = GLP_MSG_OFF;
  int ret = glp_simplex(lp, &sp);
  mip_ctx_t ctx = {.ncols = ncols,
                   .inc = inc,
                   .bound = ulo,
                   .stop_at = minimize ? -1.0 : (double)p->capacity / dg,
                   .t0 = t0,
                   .last_print = t0,
                   .verbose = verbose,
                   .work_limit = opt ? opt->work_limit : 0,
                   .clk = &clk,
                   .limit = limit,
                   .rows = (double)glp_get_num_rows(lp)};
  if (inc[ucol] > uhi + 1e-9)
    ctx.inc_given = true; /* capacity mode below the incumbent: nothing to hand over */
  bool proven = false, nofeas = false;
  if (ret == 0 && glp_get_status(lp) == GLP_OPT) {
    glp_iocp ip;
    glp_init_iocp(&ip);
    ip.msg_lev = GLP_MSG_OFF;
    ip.presolve = GLP_OFF;
    ip.gmi_cuts = GLP_ON;
    ip.mir_cuts = GLP_OFF; /* see the header */
    ip.cov_cuts = GLP_ON;
    ip.clq_cuts = GLP_ON;
    ip.tol_int = 1e-9;
    mip_charge(&ctx, lp, 0); /* the root relaxation */
    double left =
        clk.wall ? limit - (sfc_clock_seconds() - t0) : clk.backstop - (sfc_clock_seconds() - t0);
    ip.tm_lim = left > 0.001 ? (int)(left * 1000.0) : 1;
    ip.cb_func = mip_callback;
    ip.cb_info = &ctx;
    ret = glp_intopt(lp, &ip);
    if (ret == GLP_ETMLIM && !clk.wall)
      clk.wall_stopped = true;
    int ms = glp_mip_status(lp);
    if (ms == GLP_OPT || ms == GLP_FEAS) {
      for (size_t i = 0; i < n; i++)
        order[i] = (keyed_t){glp_mip_col_val(lp, (int)i + 1), (uint32_t)i};
      uint64_t peak = replace_in_order(p, w, order, off);
      double obj = glp_mip_obj_val(lp) * dg;
      if (peak < best) {
        best = peak;
        for (size_t i = 0; i < n; i++)
          p->blocks[i].offset = off[i];
      }
      proven = ret == 0 && ms == GLP_OPT && (double)peak <= obj + 0.5 && M <= MIP_TRUST_UNITS;
    } else if (ret == 0 && ms == GLP_NOFEAS && M <= MIP_TRUST_UNITS) {
      nofeas = true; /* no packing with u within its bounds */
    }
    if (verbose > 0)
      fprintf(stderr, "mip: %s after %.2f s, peak %" PRIu64 "\n",
              proven ? "proven optimal" : "stopped", sfc_clock_seconds() - t0, best);
  }
  out->work_s = clk.wall ? 0 : clk.work;
  out->wall_stopped = clk.wall_stopped;
  glp_delete_prob(lp);
  glp_term_out(prev_term);
  out->peak = best;
  if (M > MIP_TRUST_UNITS)
    ctx.bound = ulo; /* nor its bound */
  if ((proven || nofeas) && minimize) {
    out->optimal = true;
    out->best_bound = best;
  } else if (nofeas) {
    out->best_bound = p->capacity + 1 > lb ? p->capacity + 1 : lb;
    if (out->best_bound > best)
      out->best_bound = best;
    out->optimal = out->best_bound >= best;
  } else {
    double bb = ceil((ctx.bound - 1e-6) * dg);
    out->best_bound = bb > (double)lb ? (uint64_t)bb : lb;
    if (out->best_bound > best)
      out->best_bound = best;
    out->optimal = out->best_bound >= best;
  }
  goto done;
oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "mip: out of memory for %zu blocks", n);
done:
  free(w);
  free(off);
  free(order);
  free(pi);
  free(pj);
  free(inc);
  free(ind);
  free(val);
  return st;
}
