/* test_plan_rules.c — one set of plan rules, two implementations: every file of the
 * rule corpora (tests/data/bad_plans for the reference rules 4-13, invalid_plans for
 * the semantic rules 14-59 of docs/plan-format.md "Invariants") is rejected
 *
 *  - by the runtime's loader (sfcrt_plan_load_file): "sfc: " + its message is the
 *    first line of NAME.plan.err (@INPUT@ = the path), with SFC_ERR_VERIFY exactly for
 *    invalid_plans (the CLI's exit 1) and another error for bad_plans (exit 2);
 *  - by the compiler's verifier (sfc_verify_plan, budget not checked) on the same
 *    records, read without the loader (plan_raw_view.h), with the message below.
 *
 * Both must name the rule the file was made to break (make_bad_plans.c). The table
 * also proves coverage: every rule 4-59 has a file, and every file of invalid_plans
 * and every non-structural file of bad_plans has a row. `test_plan_rules --print`
 * lists what both say for every file, to write a new row.
 */
#include <dirent.h>

#include "check.h"
#include "plan_builder.h"
#include "plan_raw_view.h"
#include "test_rand.h"
#include "sfc/plan_reader.h"
#include "verify.h"

typedef struct rule_file {
  int rule;             /* docs/plan-format.md, "Invariants" */
  const char *file;     /* under tests/data, without .plan */
  const char *verifier; /* sfc_verify_plan's message */
} rule_file_t;

static const rule_file_t files[] = {
    {4, "bad_plans/strings_unterminated", "strings: the table must start and end with a NUL byte"},
    {5, "bad_plans/alignment_not_pow2", "header: alignment 48 is not a power of two"},
    {6, "bad_plans/tensor_bad_kind", "tensor 2: kind 9 is not a tensor kind"},
    {58, "bad_plans/window_taps",
     "step 2: checking the tiles' boxes would walk more than 134217728 window taps (op 2 "
     "\"conv_c\" has a 3x1073741824 window)"},
    {7, "bad_plans/op_operand_out_of_range", "op operand 1: tensor 4 does not exist"},
    {8, "bad_plans/tensor_out_of_range", "BLOCKS[1]: tensor 99 does not exist"},
    {9, "bad_plans/step_op_out_of_range", "step 1: op 7 does not exist"},
    {10, "bad_plans/swap_direction", "swap 1: direction 3 is neither out (1) nor in (2)"},
    {11, "bad_plans/dep_index_out_of_range", "dependency 2: swap 2 does not exist (2 swaps)"},
    {12, "bad_plans/segment_steps_out_of_range",
     "segment 0: steps [1, 10) run past the last step (6 steps)"},
    {12, "bad_plans/segment_forward_later",
     "segment 0: forward segment 0 is not an earlier segment"},
    {13, "bad_plans/box_ndim", "box 0: rank 5 is not 1 to 4"},
    {14, "invalid_plans/budget_flag",
     "header: the over-budget flag is set but the arena of 768 bytes fits the budget (or there is "
     "none)"},
    {14, "invalid_plans/budget_flag_paged",
     "header: the over-budget flag is set but the paged arena's page peak of 1536 bytes fits the "
     "budget (or there is none)"},
    {59, "invalid_plans/page_peak_wrong",
     "meta: page peak 1024 bytes, but the live device blocks touch at most 1536 bytes of "
     "512-byte pages"},
    {59, "invalid_plans/page_peak_swap_out",
     "meta: page peak 1024 bytes, but the live device blocks touch at most 1280 bytes of "
     "256-byte pages"},
    {59, "invalid_plans/page_peak_unpaged",
     "meta: page peak 768 bytes, but the arena is not paged (must be 0)"},
    {59, "invalid_plans/paged_no_chunk",
     "meta: the arena is paged but its page size (va_chunk_bytes) is 0"},
    {15, "invalid_plans/block_steps_backwards",
     "BLOCKS[2] (tensor 2 \"t2\"): steps [2, 1] run backwards"},
    {16, "invalid_plans/misaligned",
     "BLOCKS[1] (tensor 1 \"t1\"): offset 260 is not a multiple of the alignment 64"},
    {17, "invalid_plans/past_arena",
     "BLOCKS[2] (tensor 2 \"t2\"): [576, +256) runs past the arena of 768 bytes"},
    {18, "invalid_plans/overlap",
     "BLOCKS[2] (tensor 2 \"t2\") and BLOCKS[3] (tensor 3 \"t3\") share bytes [512, 704) while "
     "both are live at step 2"},
    {19, "invalid_plans/host_overlap",
     "HOST_BLOCKS[0] (tensor 1 \"a\") and HOST_BLOCKS[1] (tensor 2 \"b\") share bytes [128, 256) "
     "while both are live at step 4"},
    {20, "invalid_plans/block_too_small",
     "BLOCKS[1] (tensor 1 \"t1\"): 128 bytes hold a 256-byte tensor"},
    {21, "invalid_plans/external_bytes",
     "BLOCKS[0] (tensor 0 \"x\"): external, so offset and bytes must be 0"},
    {22, "invalid_plans/external_tensor_mismatch",
     "BLOCKS[0] (tensor 0 \"x\"): the block is external but the tensor is not"},
    {23, "invalid_plans/persistent_short",
     "BLOCKS[0] (tensor 0 \"x\"): persistent, so it must live over every step, not [0, 1]"},
    {20, "invalid_plans/home_too_small",
     "HOST_BLOCKS[0] (tensor 1 \"w\"): a home of 128 bytes cannot hold the 256-byte tensor"},
    {23, "invalid_plans/home_short",
     "HOST_BLOCKS[0] (tensor 1 \"w\"): persistent, so it must live over every step, not [1, 1]"},
    {24, "invalid_plans/home_device_persistent",
     "BLOCKS[1] (tensor 1 \"w\"): persistent, but the tensor's home is HOST_BLOCKS[0]"},
    {25, "invalid_plans/two_homes",
     "tensor 1 \"w\" has two homes (HOST_BLOCKS[0] and HOST_BLOCKS[1])"},
    {24, "invalid_plans/persistent_flag_cleared",
     "BLOCKS[0] (tensor 0 \"x\"): the tensor is persistent but its block is not: its contents "
     "would not survive the iteration"},
    {25, "invalid_plans/persistent_two_blocks",
     "tensor 0 \"x\" is persistent but has two blocks (BLOCKS[0] and BLOCKS[4])"},
    {26, "invalid_plans/unused_with_block",
     "BLOCKS[4] (tensor 4 \"u\"): the tensor is marked unused but has a block"},
    {27, "invalid_plans/partial_box_tensor",
     "BLOCKS[2] (tensor 1 \"c\"): partial, but box 3 (of tensor 2, rank 4) is not a box of its "
     "tensor (rank 4)"},
    {28, "invalid_plans/partial_box_empty",
     "BLOCKS[2] (tensor 1 \"c\"): partial box 1 spans [0, 0) on axis 2: empty or outside the "
     "tensor's 8"},
    {29, "invalid_plans/partial_too_small",
     "BLOCKS[2] (tensor 1 \"c\"): 64 bytes hold only part of box 1 (128 bytes)"},
    {30, "invalid_plans/operand_wrong_tensor",
     "step 1 (op \"relu2\"): operand 0 is tensor 1 \"t1\" but BLOCKS[2] holds tensor 2 \"t2\""},
    {31, "invalid_plans/not_resident",
     "step 1 (op \"relu2\"): tensor 1 \"t1\" is not resident: BLOCKS[1] lives over steps [0, 0]"},
    {32, "invalid_plans/partial_operand_outside",
     "step 1 (op \"relu_d\"): operand 0 touches box 2, which partial BLOCKS[2] (box 1) does not "
     "hold"},
    {33, "invalid_plans/timed_negative",
     "step 1 (op \"relu_d\"): time -1 us is not allowed for a timed step"},
    {34, "invalid_plans/read_before_write",
     "step 1 (op \"relu2\") reads BLOCKS[4] (tensor 1 \"t1\") before any step wrote it"},
    {35, "invalid_plans/tile_count", "segment 0: 3 tiles, but its grid 1x1x2x1 has 2"},
    {36, "invalid_plans/segment_misses_step", "segment 0 spans step 2, which does not name it"},
    {36, "invalid_plans/recompute_forward",
     "step 1 (op \"relu_b\"): recomputes in segment 0, which is not backward"},
    {37, "invalid_plans/tile_without_boxes",
     "step 1 (op \"relu_b\"): tile 0 of segment 0 has no boxes"},
    {38, "invalid_plans/box_wrong_tensor",
     "step 1 (op \"relu_b\"): operand 0 (tensor 1) has box 0 of tensor 0"},
    {39, "invalid_plans/box_outside_tensor",
     "box 0: dimension 2 spans [0, 9), outside tensor 1 \"a\" (8)"},
    {40, "invalid_plans/tiles_overlap",
     "segment 0: its tiles compute 72 elements of tensor 3 \"c\", which has 64, not each exactly "
     "once"},
    {41, "invalid_plans/swaps_unsorted", "swap 1: swaps are not sorted by issue_step"},
    {42, "invalid_plans/swap_wrong_tensor",
     "swap 0 of tensor 3 \"c\": BLOCKS[1] holds tensor 1 and HOST_BLOCKS[0] tensor 1"},
    {43, "invalid_plans/swap_bytes",
     "swap-out 0 of tensor 1 \"a\": copies 128 bytes of BLOCKS[1], which holds 256"},
    {44, "invalid_plans/swap_host_part",
     "swap-out 0 of tensor 1 \"a\": BLOCKS[1] and HOST_BLOCKS[0] hold different parts of the "
     "tensor"},
    {45, "invalid_plans/swap_out_at_0",
     "swap-out 0 of tensor 1 \"a\" before step 0: its device block must be live at the step before "
     "and its host block at that step"},
    {46, "invalid_plans/swap_in_not_live",
     "swap-in 1 of tensor 1 \"a\" before step 4: its device and host blocks must both be live at "
     "that step"},
    {47, "invalid_plans/swapped_in_unfilled",
     "BLOCKS[5] (tensor 4 \"d\") is marked swapped-in but no swap-in fills it"},
    {48, "invalid_plans/swapped_in_unread",
     "BLOCKS[4] (tensor 1 \"t1\") is swapped in but no step reads it: nothing orders its end after "
     "the copy"},
    {49, "invalid_plans/dep_forward",
     "swap-out 0 of tensor 1 \"a\" depends on a step 4 issued after it"},
    {50, "invalid_plans/use_before_swap_in",
     "step 5 (op \"add_d\") does not wait for swap-in 1 of tensor 1 \"a\" (a use must wait for its "
     "swap-in)"},
    {51, "invalid_plans/swap_out_before_write",
     "swap-out 0 of tensor 1 \"a\" does not wait for step 0 (op \"conv_a\") (the tensor must be "
     "written before it is copied out)"},
    {52, "invalid_plans/swap_in_before_host_copy",
     "swap-in 1 of tensor 1 \"a\" does not wait for swap-out 0 of tensor 1 \"a\" (its host copy "
     "must be complete)"},
    {53, "invalid_plans/write_during_copy",
     "step 1 (op \"update\") does not wait for swap-out 0 of tensor 1 \"t\" (a swap-out may still "
     "be reading the block it writes)"},
    {54, "invalid_plans/reuse_after_swap_out",
     "BLOCKS[3] (tensor 3 \"t3\") reuses bytes of BLOCKS[1] (tensor 1 \"t1\"), but step 2 (op "
     "\"relu3\") does not wait for swap-out 0 of tensor 1 \"t1\""},
    {55, "invalid_plans/host_reuse_without_wait",
     "HOST_BLOCKS[1] (tensor 3 \"c\") reuses bytes of HOST_BLOCKS[0] (tensor 1 \"a\"), but "
     "swap-out 2 of tensor 3 \"c\" does not wait for swap-in 1 of tensor 1 \"a\""},
    {56, "invalid_plans/home_write_lost",
     "step 1 writes BLOCKS[1] (tensor 1 \"w\") and no swap-out after it takes the write to its "
     "home HOST_BLOCKS[0]: the update would be lost"},
    {56, "invalid_plans/home_bypassed",
     "swap 1 of tensor 1 \"w\" goes through HOST_BLOCKS[1], not its home HOST_BLOCKS[0]"},
    {57, "invalid_plans/op_map_window",
     "op 2 \"conv_c\": a window needs kernel, stride, dilation >= 1 and padding >= 0 (axis 0: "
     "kernel 3, stride 0, padding 1, dilation 1)"},
    {58, "invalid_plans/input_box_not_exact",
     "step 2 (op 2 \"conv_c\", tile 0 of segment 0): operand 0, tensor 2 \"b\", has the box "
     "N[0,1) C[0,1) H[0,4)+1/0 W[0,8)+0/0 where the op's map requires N[0,1) C[0,1) H[0,5)+1/0 "
     "W[0,8)+0/0"},
};
#define FILES (sizeof files / sizeof files[0])

/* bad_plans files that break the file structure (rules 1-3): the loader's alone. */
static const char *const structural[] = {
    "big_endian",         "blocks_crc",     "crlf_damaged",   "empty",
    "float_check",        "header_crc",     "missing_steps",  "not_a_plan",
    "section_misaligned", "short_header",   "steps_crc",      "strings_crc",
    "table_crc",          "trailing_bytes", "truncated_half", "version_2"};

static int print_mode;

static uint8_t *read_all(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *d = malloc(size > 0 ? (size_t)size : 1);
  if (d && size >= 0 && fread(d, 1, (size_t)size, f) == (size_t)size) {
    *n = (size_t)size;
  } else {
    free(d);
    d = NULL;
  }
  fclose(f);
  return d;
}

/* The first line of path.err with @INPUT@ replaced by path. */
static void expected(const char *path, char *out, size_t cap) {
  char errpath[4300], line[1024] = "";
  snprintf(errpath, sizeof errpath, "%s.err", path);
  FILE *f = fopen(errpath, "r");
  if (f) {
    if (!fgets(line, sizeof line, f))
      line[0] = '\0';
    fclose(f);
  }
  line[strcspn(line, "\n")] = '\0';
  size_t o = 0;
  for (const char *p = line; *p && o + 1 < cap;) {
    if (strncmp(p, "@INPUT@", 7) == 0) {
      o += (size_t)snprintf(out + o, cap - o, "%s", path);
      p += 7;
    } else {
      out[o++] = *p++;
    }
  }
  out[o < cap ? o : cap - 1] = '\0';
}

static void check_file(const rule_file_t *r) {
  char path[4096], want[2048], got[2048];
  snprintf(path, sizeof path, "%.3800s/%.200s.plan", test_data(""), r->file);
  int before = check_failures_;
  /* the loader, on the file */
  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  sfc_status_t s = sfcrt_plan_load_file(path, NULL, &plan, &err);
  int invalid = strncmp(r->file, "invalid_plans/", 14) == 0;
  expected(path, want, sizeof want);
  snprintf(got, sizeof got, "sfc: %s", s == SFC_OK ? "(loaded)" : err.message);
  CHECK(invalid ? s == SFC_ERR_VERIFY : (s != SFC_OK && s != SFC_ERR_VERIFY));
  CHECK_STR_EQ(got, want);
  sfcrt_plan_destroy(plan);
  /* both implementations, on the records read without the loader */
  size_t n = 0;
  uint8_t *d = read_all(path, &n);
  sfc_plan_view_t v;
  CHECK(d != NULL && plan_raw_view(d, n, &v));
  if (d && plan_raw_view(d, n, &v)) {
    sfc_error_t a, b;
    sfc_status_t sa = sfcrt_plan_validate(&v, NULL, &a);
    sfc_status_t sb = sfc_verify_plan(&v, false, NULL, &b);
    CHECK_EQ_I64(sa, s); /* the loader's semantic stage is the validator */
    CHECK_STR_EQ(a.message, strchr(err.message, ':') ? strchr(err.message, ':') + 2 : "");
    CHECK_EQ_I64(sb, SFC_ERR_VERIFY);
    if (print_mode)
      printf("    {%d, \"%s\",\n     \"%s\"},\n", r->rule, r->file, sb ? b.message : "(ok)");
    else
      CHECK_STR_EQ(b.message, r->verifier);
  }
  free(d);
  if (check_failures_ != before)
    fprintf(stderr, "  in %s (rule %d)\n", r->file, r->rule);
}

static void test_both_reject(void) {
  for (size_t i = 0; i < FILES; i++)
    check_file(&files[i]);
}

static int listed(const char *dir, const char *stem) {
  char name[512];
  snprintf(name, sizeof name, "%s/%s", dir, stem);
  for (size_t i = 0; i < FILES; i++)
    if (strcmp(files[i].file, name) == 0)
      return 1;
  if (strcmp(dir, "bad_plans") == 0)
    for (size_t i = 0; i < sizeof structural / sizeof structural[0]; i++)
      if (strcmp(structural[i], stem) == 0)
        return 1;
  return 0;
}

/* Every rule 4-59 has a file; every corpus file has a row (or is structural). */
static void test_coverage(void) {
  for (int rule = 4; rule <= 59; rule++) {
    int found = 0;
    for (size_t i = 0; i < FILES; i++)
      found += files[i].rule == rule;
    if (!found)
      fprintf(stderr, "  rule %d has no file\n", rule);
    CHECK(found > 0);
  }
  static const char *const dirs[] = {"bad_plans", "invalid_plans"};
  for (int k = 0; k < 2; k++) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", test_data(dirs[k]));
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
      continue;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      size_t len = strlen(e->d_name);
      if (len < 6 || strcmp(e->d_name + len - 5, ".plan") != 0)
        continue;
      char stem[256];
      snprintf(stem, sizeof stem, "%.*s", (int)(len - 5), e->d_name);
      if (!listed(dirs[k], stem))
        fprintf(stderr, "  %s/%s.plan has no row\n", dirs[k], stem);
      CHECK(listed(dirs[k], stem));
    }
    closedir(d);
  }
}

/* Rule 59 on random paged plans, against a brute-force count: a chain of n steps, op
 * i writing t_i from x at step i - 1; t_i lives a random number of steps more, at a
 * random offset where it shares no byte with any block live with it (so pages are
 * shared at blocks' ends, often). The pages touched at each step are counted in a
 * bitmap, one page at a time. Both checkers accept the plan with that peak, and reject
 * it with one page more or less. */
static void test_page_peak_random(void) {
  static uint64_t rng = 0x51AB1E5EEDull;
  enum { STEPS = 40, REGION = 16384 };
  static const uint64_t pages[] = {64, 128, 192, 256, 320, 512, 1024, 4096};
  int rejected = 0, shared = 0;
  for (int round = 0; round < 300; round++) {
    uint32_t n = 1 + (uint32_t)(test_rand_next(&rng) % STEPS);
    uint64_t page = pages[test_rand_next(&rng) % (sizeof pages / sizeof pages[0])];
    uint64_t off[STEPS + 1], size[STEPS + 1];
    uint32_t first[STEPS + 1], last[STEPS + 1];
    pb_t *b = pb_new();
    uint32_t relu = pb_str(b, "relu");
    size[0] = 64 * (1 + test_rand_next(&rng) % 16);
    off[0] = 0;
    first[0] = 0;
    last[0] = n - 1;
    uint32_t x = pb_tensor(b, "x", size[0], SFC_KIND_INPUT);
    uint32_t bx = pb_block(b, x, 0, size[0], 0, n - 1, SFC_BLOCK_PERSISTENT);
    for (uint32_t i = 1; i <= n; i++) {
      size[i] = 64 * (1 + test_rand_next(&rng) % 24);
      first[i] = i - 1;
      last[i] = i - 1 + (uint32_t)(test_rand_next(&rng) % 6);
      if (last[i] > n - 1)
        last[i] = n - 1;
      for (int tries = 0;; tries++) { /* a free place among the blocks live with it */
        off[i] = 64 * (test_rand_next(&rng) % ((REGION << (tries / 64)) / 64));
        int clash = 0;
        for (uint32_t k = 0; k < i && !clash; k++)
          clash = first[k] <= last[i] && first[i] <= last[k] && off[k] < off[i] + size[i] &&
                  off[i] < off[k] + size[k];
        if (!clash)
          break;
      }
      char name[16];
      snprintf(name, sizeof name, "t%u", i);
      uint32_t t = pb_tensor(b, name, size[i], SFC_KIND_OUTPUT);
      snprintf(name, sizeof name, "op%u", i);
      uint32_t op = pb_op(b, name, PB_LIST(x), PB_LIST(t));
      pb_op_at(b, op)->type = relu;
      pb_step(b, op, PB_LIST(bx, pb_block(b, t, off[i], size[i], first[i], last[i], 0)));
    }
    pb_fit_arenas(b);
    /* the oracle: per step, each page of each live block marked once */
    uint64_t npages = (pb_header(b)->arena_bytes + page - 1) / page, peak = 0;
    uint8_t *mark = calloc(npages ? npages : 1, 1);
    for (uint32_t st = 0; st < n; st++) {
      memset(mark, 0, npages ? npages : 1);
      uint64_t count = 0, touched = 0;
      for (uint32_t i = 0; i <= n; i++)
        if (first[i] <= st && st <= last[i])
          for (uint64_t p = off[i] / page; p <= (off[i] + size[i] - 1) / page; p++) {
            touched++;
            count += !mark[p];
            mark[p] = 1;
          }
      shared += touched > count;
      peak = count > peak ? count : peak;
    }
    free(mark);
    pb_header(b)->flags = SFC_PLAN_PAGED;
    pb_header(b)->budget_bytes = 0;
    pb_meta(b)->va_chunk_bytes = page;
    pb_meta(b)->graph_op_count = n;
    pb_meta(b)->graph_tensor_count = n + 1;
    for (int d = -1; d <= 1; d++) {
      pb_meta(b)->page_peak_bytes = (peak + (uint64_t)d) * page;
      void *data;
      size_t len;
      pb_write(b, &data, &len);
      sfc_plan_view_t v;
      CHECK(plan_raw_view(data, len, &v));
      sfc_error_t e1, e2;
      sfc_status_t s1 = sfcrt_plan_validate(&v, NULL, &e1),
                   s2 = sfc_verify_plan(&v, false, NULL, &e2);
      sfc_status_t want = d == 0 ? SFC_OK : SFC_ERR_VERIFY;
      CHECK_EQ_I64(s1, want);
      CHECK_EQ_I64(s2, want);
      if (s1 != want || s2 != want)
        fprintf(stderr,
                "  round %d, %u steps, pages of %" PRIu64 ", peak %" PRIu64
                " pages%+d: \"%s\" / \"%s\"\n",
                round, n, page, peak, d, s1 ? e1.message : "ok", s2 ? e2.message : "ok");
      rejected += s1 != SFC_OK;
      free(data);
    }
    pb_free(b);
  }
  CHECK_EQ_I64(rejected, 600);
  CHECK(shared > 100); /* pages shared by live blocks: the case the count must not double */
}

int main(int argc, char **argv) {
  print_mode = argc > 1 && strcmp(argv[1], "--print") == 0;
  RUN(test_both_reject);
  if (print_mode)
    return 0;
  RUN(test_coverage);
  RUN(test_page_peak_random);
  return check_summary();
}
