/* test_pack_vs_mip.c — the CI check "heuristics vs MIP" (issue 4, item 8).
 *
 *   test_pack_vs_mip [quick|full]
 *
 * Small instances (<= 30 buffers): windows of consecutive buffers (by start time)
 * cut from the real traces in $SFC_SHARED/data/idealloc (skipped when absent), and
 * seeded random ones. The heuristic portfolio — the best of every registered packer
 * except auto, mip and search (best-fit, the greedy orders x gap rules) — packs
 * each; GLPK's MIP ("mip") and the search ("search") prove the optimum, started
 * cold (from greedy-size, not from the heuristics' packing, so that the proof does
 * real work even where the heuristics reach the lower bound). The heuristics must never beat a
 * proven optimum (that would be a wrong proof), must equal it on most instances, and must stay
 * within MAX_GAP of it on all; where both exact packers prove, they must agree, and each one's
 * bound must not pass the other's packing. Every packing is checked by sfc_pack_run
 * (sfc_pack_check) and again here. Prints the gap distribution.
 *
 * MAX_GAP = 25%: a stated regression bound, not a theorem (greedy DSA heuristics
 * have no constant worst-case ratio). Justification: on the suite below the worst
 * measured gap is well under it (see the printed distribution), and the best of
 * several orders reaches within ~1% of the lower bound on real model traces
 * (ALGORITHMS.md §1); a heuristic change that loses a quarter of the arena on a
 * 30-buffer window is a regression to catch. MIN_EQUAL: at least 60% of the
 * instances at the optimum exactly.
 *
 * Budgets are node counts, never clocks (a time limit made the quick run fail once
 * under ASan on a loaded machine: an instance proven in 0.5 s took over 10 s), so the
 * outcome depends on the instances alone. quick (label unit): 4 traces x 3 windows of
 * 12..24 buffers + 12 random of 12..22, MIP budget 100,000 branch-and-bound nodes; the
 * MIP must prove all. full (label slow): 4 traces x 8 windows of 12..30 + 30 random of
 * 10..30, MIP budget 10,000 nodes (about 25 s on the slowest); a few 30-buffer
 * instances exceed it (the "stops scaling around 30–40"): those are reported,
 * and counted only where the search (5,000,000 nodes) proves them. VS_MIP_ALL=1 prints
 * every instance.
 */
#include "check.h"
#include "pack.h"
#include "pack_csv.h"
#include "pack_oracle.h"

#define MAX_GAP   0.25
#define MIN_EQUAL 0.60

typedef struct stats {
  int instances, known, mip_proven, search_proven, equal, buckets[5];
  double worst;
} stats_t;

/* The best peak of the heuristics (their best packing is left in b[]). */
static uint64_t heuristic_best(sfc_pack_block_t *b, size_t n, const char **out_name) {
  size_t np;
  const sfc_packer_t *all = sfc_packers(&np);
  uint64_t best = UINT64_MAX;
  sfc_pack_block_t *tmp = malloc(n * sizeof *tmp);
  for (size_t k = 0; k < np && tmp; k++) {
    const char *name = all[k].name;
    if (!strcmp(name, "auto") || !strcmp(name, "mip") || !strcmp(name, "search"))
      continue;
    memcpy(tmp, b, n * sizeof *tmp);
    sfc_pack_problem_t p = {.blocks = tmp, .count = n, .alignment = 1};
    sfc_pack_result_t r;
    sfc_error_t err;
    sfc_pack_options_t opt = {.time_limit_s = 1};
    CHECK_OK(sfc_pack_run(name, &p, &opt, &r, &err), err);
    CHECK(sfc_pack_check(&p, NULL, NULL, NULL) == SFC_OK);
    if (r.peak < best) {
      best = r.peak;
      *out_name = name;
      for (size_t i = 0; i < n; i++)
        b[i].offset = tmp[i].offset;
    }
  }
  free(tmp);
  return best;
}

/* Runs an exact packer cold: offsets all 0, so its incumbent is its own
 * greedy-size packing, not the heuristics' (b is not changed). */
static bool exact_run(const char *algo, const sfc_pack_block_t *b, size_t n, uint64_t nodes,
                      sfc_pack_result_t *r) {
  sfc_pack_block_t *tmp = malloc(n * sizeof *tmp);
  if (!tmp)
    return false;
  memcpy(tmp, b, n * sizeof *tmp);
  for (size_t i = 0; i < n; i++)
    tmp[i].offset = 0;
  sfc_pack_problem_t p = {.blocks = tmp, .count = n, .alignment = 1};
  /* a node budget, not a clock: whether it proves depends on the instance alone */
  sfc_pack_options_t opt = {.time_limit_s = 3600, .work_limit = nodes, .minimize = true};
  sfc_error_t err;
  sfc_status_t st = sfc_pack_run(algo, &p, &opt, r, &err);
  CHECK_OK(st, err);
  uint64_t peak = 0;
  CHECK(st != SFC_OK || sfc_pack_check(&p, &peak, NULL, NULL) == SFC_OK);
  CHECK(st != SFC_OK || peak == r->peak);
  free(tmp);
  return st == SFC_OK;
}

static void one(stats_t *s, const char *label, sfc_pack_block_t *b, size_t n, uint64_t mip_nodes) {
  sfc_pack_problem_t p = {.blocks = b, .count = n, .alignment = 1};
  uint64_t lb = sfc_pack_lower_bound(&p);
  const char *hname = "?";
  uint64_t heur = heuristic_best(b, n, &hname);
  sfc_pack_result_t m, q;
  if (!exact_run("mip", b, n, mip_nodes, &m) || !exact_run("search", b, n, 5000000, &q))
    return;
  s->instances++;
  s->mip_proven += m.optimal;
  s->search_proven += q.optimal;
  if (m.optimal && q.optimal)
    CHECK_EQ_U64(q.peak, m.peak); /* two independent proofs agree */
  if (m.optimal)
    CHECK(q.peak >= m.peak && q.best_bound <= m.peak);
  if (q.optimal)
    CHECK(m.peak >= q.peak && m.best_bound <= q.peak);
  if (!m.optimal && !q.optimal) {
    printf("%-34s %2zu buffers: not proven (mip %" PRIu64 " >= %" PRIu64 ", search %" PRIu64
           " >= %" PRIu64 ")\n",
           label, n, m.peak, m.best_bound, q.peak, q.best_bound);
    return;
  }
  s->known++;
  uint64_t opt = m.optimal ? m.peak : q.peak;
  CHECK(heur >= opt);
  CHECK(opt >= lb);
  double gap = (double)heur / (double)opt - 1.0;
  if (gap > s->worst)
    s->worst = gap;
  s->equal += heur == opt;
  s->buckets[gap == 0 ? 0 : gap <= 0.01 ? 1 : gap <= 0.05 ? 2 : gap <= 0.10 ? 3 : 4]++;
  CHECK(gap <= MAX_GAP);
  if (getenv("VS_MIP_ALL") || gap > 0 || opt > lb || !m.optimal)
    printf("%-34s %2zu buffers: lower %" PRIu64 ", optimum %" PRIu64 " (mip %s %.2f s, search %s"
           " %.2f s), heuristics %" PRIu64 " (%s, +%.2f%%)\n",
           label, n, lb, opt, m.optimal ? "proved" : "unproven", m.seconds,
           q.optimal ? "proved" : "unproven", q.seconds, heur, hname, 100 * gap);
}

static int by_start(const void *pa, const void *pb) {
  const sfc_pack_block_t *a = pa, *b = pb;
  if (a->start != b->start)
    return a->start < b->start ? -1 : 1;
  return a->end < b->end ? -1 : (a->end > b->end);
}

static void traces(stats_t *s, int windows, size_t max_len, uint64_t mip_nodes) {
  static const char *const files[] = {"somas/resnet50.csv", "somas/tiny_bert.csv",
                                      "iree/iree_mobilenet.csv", "iopddl/G_1.csv"};
  const char *shared = getenv("SFC_SHARED");
  if (!shared) {
    printf("SFC_SHARED not set: no trace windows\n");
    return;
  }
  for (size_t f = 0; f < sizeof files / sizeof files[0]; f++) {
    char path[4096];
    snprintf(path, sizeof path, "%s/data/idealloc/%s", shared, files[f]);
    sfc_pack_csv_t csv;
    sfc_error_t err;
    if (sfc_pack_csv_read_file(path, &csv, &err) != SFC_OK) {
      printf("%s: %s (skipped)\n", files[f], err.message);
      continue;
    }
    qsort(csv.blocks, csv.count, sizeof *csv.blocks, by_start);
    for (int w = 0; w < windows; w++) {
      size_t len = 12 + (size_t)w * 6 % (max_len - 11);
      if (len > csv.count)
        len = csv.count;
      size_t at = (csv.count - len) * (size_t)(2 * w + 1) / (size_t)(2 * windows);
      char label[128];
      snprintf(label, sizeof label, "%s@%zu", files[f], at);
      one(s, label, csv.blocks + at, len, mip_nodes);
    }
    sfc_pack_csv_free(&csv);
  }
}

static void randoms(stats_t *s, int count, size_t min_n, size_t max_n, uint64_t mip_nodes) {
  uint64_t state = 0xd5a0c0deULL;
  sfc_pack_block_t b[30];
  for (int t = 0; t < count; t++) {
    size_t n = min_n + (size_t)(oracle_rand(&state) % (max_n - min_n + 1));
    oracle_random(b, n, &state, 256, 16, (int64_t)n);
    char label[64];
    snprintf(label, sizeof label, "random#%d", t);
    one(s, label, b, n, mip_nodes);
  }
}

int main(int argc, char **argv) {
  bool full = argc > 1 && strcmp(argv[1], "full") == 0;
  if (!sfc_packer_find("mip"))
    return 77;
  stats_t s = {0};
  traces(&s, full ? 8 : 3, full ? 30 : 24, full ? 10000 : 100000);
  randoms(&s, full ? 30 : 12, full ? 10 : 12, full ? 30 : 22, full ? 10000 : 100000);
  printf("(VS_MIP_ALL=1 prints every instance)\n");
  printf("%d instances: optimum proven on %d (mip %d, search %d)\n", s.instances, s.known,
         s.mip_proven, s.search_proven);
  printf("heuristics vs optimum: = %d, <=1%% %d, <=5%% %d, <=10%% %d, >10%% %d; worst +%.2f%%\n",
         s.buckets[0], s.buckets[1], s.buckets[2], s.buckets[3], s.buckets[4], 100 * s.worst);
  CHECK(s.instances > 0);
  if (!full) /* the MIP proves every quick instance (<= 24 buffers) within its node budget */
    CHECK(s.mip_proven == s.instances);
  CHECK(s.equal >= MIN_EQUAL * s.known);
  return check_summary();
}
