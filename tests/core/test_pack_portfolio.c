/* test_pack_portfolio.c — "auto" on hand-made decompositions and on real traces,
 * best-fit at scale, and the SVG picture of a packing.
 *
 * Real traces come from $SFC_SHARED/data/idealloc (MindSpore SOMAS ResNet-50,
 * IREE MobileNet); the test skips (77) when they are missing. Bounds on
 * peak / lower bound are stated here, not produced by the code: auto must reach
 * the lower bound within 0.1% on ResNet-50 (MiniMalloc reaches it exactly) and
 * exactly on MobileNet; the seed's best-fit alone within 0.5% on ResNet-50.
 *
 * `test_pack_portfolio s1` (CTest test_pack_portfolio_s1, label slow) runs
 * auto on iopddl/S_1 (28,526 buffers) with a 20 s limit and asserts what holds
 * whatever the machine's speed: the lower bound 1,498,635,932 (max live bytes from an
 * independent Python sweep over the CSV), a verified packing, and a peak no worse
 * than best-fit's (auto's first run), and issue 4's target, <= 1.001 x the lower
 * bound: the limit is on the work clock (pack_clock.h), so what auto finds within it
 * depends on the instance alone, not on the machine or its load (it reaches the
 * bound itself after 7.4 s wall on a 2-core VM); only a run the wall-clock backstop
 * stopped (81 s) is excused, and says so. Skipped under sanitizers (20 s of
 * instrumented restarts buy no coverage the 20,000-block test below lacks). */
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "pack.h"
#include "pack_clock.h"
#include "pack_csv.h"
#include "svg.h"

#define B(size_, start_, end_)                                                                     \
  { .size = (size_), .start = (start_), .end = (end_) }

static int skipped = 0;

static bool load(const char *rel, sfc_pack_csv_t *csv) {
  const char *dir = getenv("SFC_SHARED");
  char path[4096];
  snprintf(path, sizeof path, "%s/data/idealloc/%s", dir ? dir : "../shared", rel);
  FILE *f = fopen(path, "rb");
  if (!f) {
    fprintf(stderr, "skip: %s not found\n", path);
    skipped = 1;
    return false;
  }
  fclose(f);
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_csv_read_file(path, csv, &err), err);
  return err.status == SFC_OK;
}

static double ratio(const sfc_pack_result_t *r) {
  return r->lower_bound ? (double)r->peak / (double)r->lower_bound : 1.0;
}

/* 40 copies of the leading-gap case (peak 180) one after the other in time, the
 * 7th scaled by 3 (peak 540): 40 independent parts; auto packs each from offset
 * 0, so the peak is 540 and proven optimal. */
static void test_auto_decomposes(void) {
  enum { K = 40 };
  sfc_pack_block_t b[3 * K];
  for (int k = 0; k < K; k++) {
    uint64_t m = k == 6 ? 3 : 1;
    b[3 * k] = (sfc_pack_block_t)B(100 * m, 10 * k, 10 * k + 2);
    b[3 * k + 1] = (sfc_pack_block_t)B(80 * m, 10 * k + 1, 10 * k + 3);
    b[3 * k + 2] = (sfc_pack_block_t)B(60 * m, 10 * k + 2, 10 * k + 4);
  }
  sfc_pack_problem_t p = {.blocks = b, .count = 3 * K, .alignment = 1};
  sfc_pack_parts_t parts;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_split(&p, &parts, &err), err);
  CHECK_EQ_U64(parts.count, K);
  sfc_pack_parts_free(&parts);
  sfc_pack_result_t r;
  CHECK_OK(sfc_pack_run("auto", &p, NULL, &r, &err), err);
  CHECK_EQ_U64(r.peak, 540);
  CHECK_EQ_U64(r.lower_bound, 540);
  CHECK(r.optimal);
  for (int k = 0; k < K; k++) /* every part starts at offset 0 */
    CHECK(b[3 * k].offset == 0 || b[3 * k + 2].offset == 0);
}

/* Empty problem and a single block. */
static void test_auto_trivial(void) {
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  sfc_pack_problem_t p = {.blocks = NULL, .count = 0, .alignment = 1};
  CHECK_OK(sfc_pack_run("auto", &p, NULL, &r, &err), err);
  CHECK_EQ_U64(r.peak, 0);
  sfc_pack_block_t one[] = {B(77, -5, 3)};
  p = (sfc_pack_problem_t){.blocks = one, .count = 1, .alignment = 64};
  CHECK_OK(sfc_pack_run("auto", &p, NULL, &r, &err), err);
  CHECK_EQ_U64(r.peak, 77);
  CHECK_EQ_U64(one[0].offset, 0);
}

static void test_resnet50(void) {
  sfc_pack_csv_t csv;
  if (!load("somas/resnet50.csv", &csv))
    return;
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  sfc_pack_options_t opt = {.time_limit_s = 20, .mip_max_blocks = 30};
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("best-fit", &p, &opt, &r, &err), err);
  CHECK_EQ_U64(r.lower_bound, 1515472556); /* data/README.md */
  CHECK(ratio(&r) <= 1.005);
  CHECK_OK(sfc_pack_run("auto", &p, &opt, &r, &err), err);
  fprintf(stderr, "resnet50: auto %.6f x lower bound (%s)\n", ratio(&r), r.algorithm);
  CHECK(ratio(&r) <= 1.001);
  sfc_pack_csv_free(&csv);
}

static void test_mobilenet(void) {
  sfc_pack_csv_t csv;
  if (!load("iree/iree_mobilenet.csv", &csv))
    return;
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("auto", &p, NULL, &r, &err), err);
  CHECK_EQ_U64(r.peak, r.lower_bound);
  CHECK(r.optimal);
  sfc_pack_csv_free(&csv);
}

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return rng;
}

/* Best-fit on 20,000 blocks (a model-like mix of short activations and a few
 * long-lived ones): the packing passes the checker inside sfc_pack_run and the
 * peak is within 2x the lower bound (a loose sanity bound; the benchmark,
 * tools/bench-pack, measures quality and speed). */
static void test_bestfit_large(void) {
  enum { N = 20000 };
  static sfc_pack_block_t b[N];
  for (int i = 0; i < N; i++) {
    int64_t s = (int64_t)(next_rand() % 20000);
    int64_t len = next_rand() % 50 == 0 ? 1 + (int64_t)(next_rand() % 20000)
                                        : 1 + (int64_t)(next_rand() % 40);
    b[i] = (sfc_pack_block_t){.size = 256 * (1 + next_rand() % 64), .start = s, .end = s + len};
  }
  sfc_pack_problem_t p = {.blocks = b, .count = N, .alignment = 256};
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("best-fit", &p, NULL, &r, &err), err);
  CHECK(r.peak >= r.lower_bound);
  CHECK(r.peak <= 2 * r.lower_bound);
}

/* auto on iopddl/S_1: verified, bounded by best-fit; the ratio is printed, not asserted. */
static void test_s1(void) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_UNDEFINED__)
  fprintf(stderr, "skip: S_1 needs an unsanitised build (time-limited restarts)\n");
  skipped = 1;
#else
  sfc_pack_csv_t csv;
  if (!load("iopddl/S_1.csv", &csv))
    return;
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  sfc_pack_options_t opt = {.time_limit_s = 20, .mip_max_blocks = 30};
  sfc_pack_result_t r;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("best-fit", &p, &opt, &r, &err), err);
  uint64_t best_fit = r.peak;
  CHECK_OK(sfc_pack_run("auto", &p, &opt, &r, &err), err); /* verified inside */
  CHECK_EQ_U64(r.lower_bound, 1498635932);
  CHECK(r.peak >= r.lower_bound && r.peak <= best_fit);
  if (r.wall_stopped)
    fprintf(stderr, "S_1: the wall-clock backstop stopped auto: the target is not checked\n");
  else
    CHECK(ratio(&r) <= 1.001);
  fprintf(stderr, "S_1: auto %.6f x lower bound (%s) in %.1f s (%.1f s of work); best-fit %.6f\n",
          ratio(&r), r.algorithm, r.seconds, r.work_s, (double)best_fit / (double)r.lower_bound);
  sfc_pack_csv_free(&csv);
#endif
}

/* n blocks over 20,000 steps, mostly short-lived, one in 50 up to the whole span:
 * one part too large for the exact search (always the same blocks). */
static void large_mix(sfc_pack_block_t *b, int n) {
  rng = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < n; i++) {
    int64_t s = (int64_t)(next_rand() % 20000);
    int64_t len = next_rand() % 50 == 0 ? 1 + (int64_t)(next_rand() % 20000)
                                        : 1 + (int64_t)(next_rand() % 40);
    b[i] = (sfc_pack_block_t){.size = 1 + next_rand() % 100000, .start = s, .end = s + len};
  }
}

/* auto on a part too large for the exact search (the same 20,000-block mix, 1 s):
 * the re-pack chains, mirror-compaction and randomised restarts run (verbose
 * output shows them); every packing is verified inside sfc_pack_run, and auto
 * never ends above best-fit's peak (its first run). */
static void test_auto_large(void) {
  enum { N = 20000 };
  static sfc_pack_block_t b[N];
  large_mix(b, N);
  sfc_pack_problem_t p = {.blocks = b, .count = N, .alignment = 1};
  sfc_pack_result_t bf, r;
  sfc_error_t err = {0};
  CHECK_OK(sfc_pack_run("best-fit", &p, NULL, &bf, &err), err);
  sfc_pack_options_t opt = {.time_limit_s = 1, .mip_max_blocks = 30};
  CHECK_OK(sfc_pack_run("auto", &p, &opt, &r, &err), err);
  fprintf(stderr, "20,000 blocks: best-fit %.6f, auto %.6f x lower bound (%s)\n", ratio(&bf),
          ratio(&r), r.algorithm);
  CHECK(r.peak >= r.lower_bound);
  CHECK(r.peak <= bf.peak);
}

/* Two processes that spin until killed: load for the machine the test runs on. */
static void spinners(pid_t pid[2]) {
  for (int k = 0; k < 2; k++)
    if ((pid[k] = fork()) == 0)
      for (;;) {
      }
}

static void stop(const pid_t pid[2]) {
  for (int k = 0; k < 2; k++)
    if (pid[k] > 0) {
      kill(pid[k], SIGKILL);
      waitpid(pid[k], NULL, 0);
    }
}

/* Runs `algorithm` on p twice, the second time with two spinning processes beside it,
 * and checks the packing is the same: on the work clock (pack_clock.h) the time limit
 * counts modelled work, not seconds, so the load changes how long a run takes, never
 * what it finds. Unless the wall-clock backstop stopped either run (reported as
 * wall_stopped; possible in a sanitizer build on a loaded machine): then the
 * comparison is skipped, and said. Also: a run never charges more than its limit plus
 * one run of best-fit (a run starts only when its modelled cost fits). */
static void check_reproducible(const char *algorithm, sfc_pack_problem_t *p, double limit_s,
                               bool minimize) {
  size_t n = p->count;
  uint64_t *first = malloc(n * sizeof *first);
  CHECK(first != NULL);
  if (!first)
    return;
  sfc_pack_options_t opt = {.time_limit_s = limit_s, .mip_max_blocks = 30, .minimize = minimize};
  sfc_pack_result_t r1, r2;
  sfc_error_t err = {0};
  for (size_t i = 0; i < n; i++) /* no incumbent (pack.h: the exact packers start from */
    p->blocks[i].offset = 0;     /* the caller's offsets when they verify) */
  CHECK_OK(sfc_pack_run(algorithm, p, &opt, &r1, &err), err);
  for (size_t i = 0; i < n; i++) {
    first[i] = p->blocks[i].offset;
    p->blocks[i].offset = 0;
  }
  pid_t pid[2];
  spinners(pid);
  CHECK_OK(sfc_pack_run(algorithm, p, &opt, &r2, &err), err);
  stop(pid);
  CHECK(r1.work_s > 0 && r1.work_s <= limit_s + sfc_pack_cost_best_fit(n));
  if (r1.wall_stopped || r2.wall_stopped) {
    fprintf(stderr,
            "%s: the wall-clock backstop stopped a run (%.2f s, %.2f s wall): not "
            "compared\n",
            algorithm, r1.seconds, r2.seconds);
  } else {
    size_t same = 0;
    for (size_t i = 0; i < n; i++)
      same += p->blocks[i].offset == first[i];
    CHECK_EQ_U64(same, n);
    CHECK_EQ_U64(r1.peak, r2.peak);
    CHECK(r1.work_s == r2.work_s);
    fprintf(stderr,
            "%s: %zu blocks, the same packing (peak %.6f x lower bound, %.3f s of "
            "work) in %.2f s and, loaded, %.2f s wall\n",
            algorithm, n, ratio(&r1), r1.work_s, r1.seconds, r2.seconds);
  }
  free(first);
}

/* auto on the 20,000-block mix of test_auto_large, 0.5 s of work: the re-pack chains,
 * mirror-compaction and the randomised restarts all stop by the work clock. */
static void test_auto_reproducible(void) {
  enum { N = 20000 };
  static sfc_pack_block_t b[N];
  large_mix(b, N);
  sfc_pack_problem_t p = {.blocks = b, .count = N, .alignment = 1};
  check_reproducible("auto", &p, 0.5, false);
}

/* The exact search on minimalloc's challenging instance A (154 buffers), minimising
 * for 0.3 s of work: it stops in its bisection (the lower bound 1,048,576 is found
 * after about 0.6 s), whose slices are on the work clock too. */
static void test_search_reproducible(void) {
  if (!sfc_packer_find("search"))
    return;
  sfc_pack_csv_t csv;
  if (!load("../minimalloc/challenging/A.1048576.csv", &csv))
    return;
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  check_reproducible("search", &p, 0.3, true);
  sfc_pack_csv_free(&csv);
}

/* sfc_pack_options_t.backstop_s: a run past its backstop stops there (wall_stopped)
 * with a packing sfc_pack_run verified, whatever its work-clock limit; the compiler gives
 * each of a scheduled plan's packs, limited to a tenth of packer.time_limit, the
 * backstop of the whole limit (pass_pack.c). A backstop of 1 ns has passed by the
 * first clock reading after a run (never on the same nanosecond as the start). */
static void test_backstop(void) {
  sfc_pack_csv_t csv;
  if (!load("../minimalloc/challenging/A.1048576.csv", &csv))
    return;
  sfc_pack_problem_t p = {.blocks = csv.blocks, .count = csv.count, .alignment = 1};
  const char *algorithms[] = {"search", "auto"};
  for (size_t a = 0; a < sizeof algorithms / sizeof *algorithms; a++) {
    if (!sfc_packer_find(algorithms[a]))
      continue;
    for (size_t i = 0; i < p.count; i++)
      p.blocks[i].offset = 0;
    sfc_pack_options_t opt = {
        .time_limit_s = 60, .mip_max_blocks = 30, .minimize = true, .backstop_s = 1e-9};
    sfc_pack_result_t r = {0};
    sfc_error_t err = {0};
    CHECK_OK(sfc_pack_run(algorithms[a], &p, &opt, &r, &err), err);
    CHECK(r.wall_stopped);
    CHECK(r.peak >= r.lower_bound && r.peak > 0);
    CHECK(r.work_s < 60);
  }
  sfc_pack_csv_free(&csv);
}

/* The SVG has one rect of class "b" per block, the two lines, an escaped title,
 * and ends with </svg>. */
static void test_svg(void) {
  sfc_pack_block_t b[] = {B(100, 0, 2), B(80, 1, 3), B(60, 2, 4)};
  b[1].offset = 100;
  const char *names[] = {"a<1>", "b&2", "c\"3"};
  sfc_svg_packing_t pic = {
      .blocks = b, .names = names, .count = 3, .lower_bound = 180, .title = "t <&> t"};
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  CHECK(f != NULL);
  if (!f)
    return;
  sfc_error_t err = {0};
  CHECK_OK(sfc_svg_write(f, &pic, &err), err);
  fclose(f);
  int rects = 0;
  for (const char *s = text; (s = strstr(s, "<rect class=\"b\"")) != NULL; s++)
    rects++;
  CHECK_EQ_U64(rects, 3);
  CHECK(strstr(text, "<?xml version=\"1.0\"") == text);
  CHECK(strstr(text, "t &lt;&amp;&gt; t") != NULL);
  CHECK(strstr(text, "a&lt;1&gt;: offset 0, size 100, [0, 2)") != NULL);
  CHECK(strstr(text, "b&amp;2: offset 100") != NULL);
  CHECK(strstr(text, "c&quot;3") != NULL);
  CHECK(strstr(text, ">lower bound 180</text>") != NULL);
  CHECK(strstr(text, ">peak 180</text>") != NULL);
  CHECK(len > 7 && strcmp(text + len - 7, "</svg>\n") == 0);
  free(text);
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "s1") == 0) { /* the slow S_1 target test */
    RUN(test_s1);
    int rc = check_summary();
    return rc ? rc : skipped ? 77 : 0;
  }
  RUN(test_auto_decomposes);
  RUN(test_auto_trivial);
  RUN(test_resnet50);
  RUN(test_mobilenet);
  RUN(test_bestfit_large);
  RUN(test_auto_large);
  RUN(test_auto_reproducible);
  RUN(test_search_reproducible);
  RUN(test_backstop);
  RUN(test_svg);
  int rc = check_summary();
  return rc ? rc : skipped ? 77 : 0;
}
