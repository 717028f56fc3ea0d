/* cmd_inspect.c — `sfc inspect` (what is in a plan) and `sfc verify` (is it valid).
 *
 * Both load the plan through the runtime's reader, which validates the file on its
 * own (structure, CRCs, references, overlaps); verify then runs the compiler's
 * independent verifier (pass_verify.c) and the budget check on top. inspect --svg draws
 * the device arena with svg.c; --csv writes it as a packing instance (pack_csv.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli.h"
#include "outfile.h"
#include "pack.h"
#include "pack_csv.h"
#include "sfc/plan_reader.h"
#include "svg.h"
#include "timeline.h"
#include "units.h"
#include "verify.h"

/* ---- inspect ------------------------------------------------------------------ */

static const char inspect_help[] =
    "usage: sfc inspect PLAN [--json] [--blocks] [--steps] [--svg OUT.svg]\n"
    "                        [--timeline OUT.svg] [--csv OUT.csv]\n"
    "\n"
    "Shows what a plan holds: header, source graph, arena sizes, section counts;\n"
    "--blocks lists every device block (tensor, offset, bytes, live steps), --steps\n"
    "every step with its op. --json prints one JSON object instead: format,\n"
    "version_major, version_minor, graph, profile, arena_bytes, host_arena_bytes,\n"
    "budget_bytes, over_budget, alignment, in_core_peak_bytes, lower_bound_bytes,\n"
    "step_count, and the arrays tensors, blocks, steps and swaps (always complete;\n"
    "docs/cli.md lists their fields). --svg OUT.svg also writes a\n"
    "picture of the device arena: steps on x, offset on y, one rectangle per block,\n"
    "the lower bound and the arena size as lines. --timeline OUT.svg writes the plan\n"
    "over its steps: device bytes per step stacked by tensor kind with the budget\n"
    "line, the steps where compute waits for copies (one iteration replayed on the\n"
    "sim device) and the bytes swapped out and in before each step. --csv OUT.csv\n"
    "writes the device arena as a packing instance for 'sfc pack' (minimalloc CSV:\n"
    "id = block index, lower = first step, upper = last step + 1, size, and the\n"
    "plan's offset; blocks of 0 bytes left out), to try packers on a real plan.\n"
    "\n"
    "example:\n"
    "  sfc inspect cnn.plan --blocks\n"
    "  sfc inspect cnn.plan --json | python3 -m json.tool\n"
    "  sfc inspect cnn.plan --svg cnn.svg\n"
    "  sfc inspect cnn.plan --timeline cnn-time.svg\n"
    "  sfc inspect cnn.plan --csv cnn.csv && sfc pack cnn.csv\n";

static const char *block_flags(uint32_t f, char *buf, size_t cap) {
  snprintf(buf, cap, "%s%s%s", f & SFC_BLOCK_PERSISTENT ? "persistent " : "",
           f & SFC_BLOCK_SWAPPED_IN ? "swapped-in " : "",
           f & SFC_BLOCK_EXTERNAL ? "external " : "");
  size_t n = strlen(buf);
  if (n)
    buf[n - 1] = '\0';
  return buf;
}

static void print_text(const char *path, const sfc_plan_view_t *v, bool blocks, bool steps) {
  const sfc_plan_header_t *h = &v->header;
  char a[32], b[32], n1[SFC_NAME_SHOWN_BYTES], n2[SFC_NAME_SHOWN_BYTES]; /* names, escaped */
  char shown[SFC_PATH_SHOWN_BYTES];
  printf("%s: sfc plan %u.%u, %s\n", sfc_cli_path_shown(path, shown), h->version_major,
         h->version_minor, sfc_name_shown(sfc_plan_string(v, v->meta.generator), n1));
  printf("  graph             %s (%u ops, %u tensors)\n",
         sfc_name_shown(sfc_plan_string(v, v->meta.graph_name), n1), v->meta.graph_op_count,
         v->meta.graph_tensor_count);
  printf("  profile           %s\n", sfc_name_shown(sfc_plan_string(v, v->meta.profile_name), n1));
  printf("  arena             %s (%" PRIu64 " B), alignment %u\n",
         sfc_format_size(h->arena_bytes, a, sizeof a), h->arena_bytes, h->alignment);
  if (sfc_plan_paged(v)) /* 1.7 */
    printf("  paged             pages of %s, at most %s touched at once (%" PRIu64 " B)\n",
           sfc_format_size(v->meta.va_chunk_bytes, a, sizeof a),
           sfc_format_size(v->meta.page_peak_bytes, b, sizeof b), v->meta.page_peak_bytes);
  printf("  budget            %s%s\n", sfc_format_size(h->budget_bytes, a, sizeof a),
         h->flags & SFC_PLAN_OVER_BUDGET ? " (over budget)" : "");
  printf("  host arena        %s\n", sfc_format_size(h->host_arena_bytes, a, sizeof a));
  printf("  in-core peak      %s\n", sfc_format_size(v->meta.in_core_peak_bytes, a, sizeof a));
  printf("  lower bound       %s (arena/lower bound %.4f)\n",
         sfc_format_size(v->meta.lower_bound_bytes, b, sizeof b),
         v->meta.lower_bound_bytes ? (double)h->arena_bytes / (double)v->meta.lower_bound_bytes
                                   : 1.0);
  printf("  sections          %u tensors, %u ops, %u blocks, %u host blocks, %u steps,\n"
         "                    %u swaps, %u deps, %u segments, %u boxes\n",
         v->tensor_count, v->op_count, v->block_count, v->host_block_count, v->step_count,
         v->swap_count, v->dep_count, v->segment_count, v->box_count);
  if (v->swap_count) {
    uint64_t in = 0, out = 0;
    uint32_t n_in = 0;
    for (uint32_t i = 0; i < v->swap_count; i++) {
      bool is_in = v->swaps[i].direction == SFC_SWAP_IN;
      n_in += is_in;
      (is_in ? &in : &out)[0] += v->swaps[i].bytes;
    }
    printf("  swaps             %u out (%s), %u in (%s) per iteration\n", v->swap_count - n_in,
           sfc_format_size(out, a, sizeof a), n_in, sfc_format_size(in, b, sizeof b));
  }
  if (blocks) {
    printf("\n  %6s %8s %-28s %14s %14s %13s  %s\n", "block", "tensor", "name", "offset", "bytes",
           "steps", "flags");
    for (uint32_t i = 0; i < v->block_count; i++) {
      const sfc_plan_block_t *x = &v->blocks[i];
      char steps_s[32], fl[64];
      snprintf(steps_s, sizeof steps_s, "[%u, %u]", x->first_step, x->last_step);
      printf("  %6u %8" PRId64 " %-28.28s %14" PRIu64 " %14" PRIu64 " %13s  %s\n", i,
             v->tensors[x->tensor].graph_id,
             sfc_name_shown(sfc_plan_string(v, v->tensors[x->tensor].name), n1), x->offset,
             x->bytes, steps_s, block_flags(x->flags, fl, sizeof fl));
    }
  }
  if (steps) {
    printf("\n  %6s %6s %-20s %-28s %s\n", "step", "op", "type", "name", "phase");
    for (uint32_t s = 0; s < v->step_count; s++) {
      const sfc_plan_op_t *op = &v->ops[v->steps[s].op];
      printf("  %6u %6" PRId64 " %-20.20s %-28.28s %s\n", s, op->graph_id,
             sfc_name_shown(sfc_plan_string(v, op->type), n1),
             sfc_name_shown(sfc_plan_string(v, op->name), n2), sfc_phase_name(op->phase));
    }
  }
}

static bool add_num(cJSON *o, const char *k, double x) {
  return cJSON_AddNumberToObject(o, k, x) != NULL;
}

/* Sizes above 2^53 lose precision as JSON numbers; plans are bounded far below. */
static cJSON *to_json(const sfc_plan_view_t *v) {
  cJSON *root = cJSON_CreateObject(), *arr, *o;
  bool ok = root != NULL;
  ok = ok && cJSON_AddStringToObject(root, "format", "sfc-plan-inspect");
  ok = ok && add_num(root, "version_major", v->header.version_major);
  ok = ok && add_num(root, "version_minor", v->header.version_minor);
  ok = ok && cJSON_AddStringToObject(root, "graph", sfc_plan_string(v, v->meta.graph_name));
  ok = ok && cJSON_AddStringToObject(root, "profile", sfc_plan_string(v, v->meta.profile_name));
  ok = ok && add_num(root, "arena_bytes", (double)v->header.arena_bytes);
  ok = ok && add_num(root, "host_arena_bytes", (double)v->header.host_arena_bytes);
  ok = ok && add_num(root, "budget_bytes", (double)v->header.budget_bytes);
  ok = ok &&
       cJSON_AddBoolToObject(root, "over_budget", (v->header.flags & SFC_PLAN_OVER_BUDGET) != 0);
  ok = ok && cJSON_AddBoolToObject(root, "paged", sfc_plan_paged(v) != 0);
  ok = ok && add_num(root, "page_peak_bytes", (double)v->meta.page_peak_bytes);
  ok = ok && add_num(root, "alignment", v->header.alignment);
  ok = ok && add_num(root, "in_core_peak_bytes", (double)v->meta.in_core_peak_bytes);
  ok = ok && add_num(root, "lower_bound_bytes", (double)v->meta.lower_bound_bytes);
  ok = ok && add_num(root, "step_count", v->step_count);
  ok = ok && (arr = cJSON_AddArrayToObject(root, "tensors")) != NULL;
  for (uint32_t t = 0; ok && t < v->tensor_count; t++) {
    const sfc_plan_tensor_t *x = &v->tensors[t];
    ok = (o = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(arr, o);
    ok = ok && add_num(o, "index", t) && add_num(o, "id", (double)x->graph_id);
    ok = ok && cJSON_AddStringToObject(o, "name", sfc_plan_string(v, x->name));
    ok = ok && cJSON_AddStringToObject(o, "kind", sfc_tensor_kind_name(x->kind));
    ok = ok && add_num(o, "bytes", (double)x->bytes);
  }
  ok = ok && (arr = cJSON_AddArrayToObject(root, "blocks")) != NULL;
  for (uint32_t i = 0; ok && i < v->block_count; i++) {
    const sfc_plan_block_t *x = &v->blocks[i];
    ok = (o = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(arr, o);
    ok = ok && add_num(o, "index", i) && add_num(o, "tensor", x->tensor);
    ok = ok && add_num(o, "tensor_id", (double)v->tensors[x->tensor].graph_id);
    ok = ok && cJSON_AddStringToObject(o, "name", sfc_plan_string(v, v->tensors[x->tensor].name));
    ok = ok && add_num(o, "offset", (double)x->offset) && add_num(o, "bytes", (double)x->bytes);
    ok = ok && add_num(o, "first_step", x->first_step) && add_num(o, "last_step", x->last_step);
    ok = ok && cJSON_AddBoolToObject(o, "persistent", (x->flags & SFC_BLOCK_PERSISTENT) != 0);
    ok = ok && cJSON_AddBoolToObject(o, "swapped_in", (x->flags & SFC_BLOCK_SWAPPED_IN) != 0);
  }
  ok = ok && (arr = cJSON_AddArrayToObject(root, "steps")) != NULL;
  for (uint32_t s = 0; ok && s < v->step_count; s++) {
    const sfc_plan_op_t *op = &v->ops[v->steps[s].op];
    ok = (o = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(arr, o);
    ok = ok && add_num(o, "step", s) && add_num(o, "op_id", (double)op->graph_id);
    ok = ok && cJSON_AddStringToObject(o, "op", sfc_plan_string(v, op->name));
    ok = ok && cJSON_AddStringToObject(o, "type", sfc_plan_string(v, op->type));
    ok = ok && cJSON_AddStringToObject(o, "phase", sfc_phase_name(op->phase));
    cJSON *blocks = ok ? cJSON_AddArrayToObject(o, "blocks") : NULL;
    ok = ok && blocks;
    uint32_t m = (uint32_t)op->input_count + op->output_count + op->temp_count;
    for (uint32_t k = 0; ok && k < m; k++) {
      cJSON *n = cJSON_CreateNumber(v->step_operands[v->steps[s].operand_begin + k]);
      ok = n && cJSON_AddItemToArray(blocks, n);
    }
  }
  ok = ok && (arr = cJSON_AddArrayToObject(root, "swaps")) != NULL;
  for (uint32_t i = 0; ok && i < v->swap_count; i++) {
    const sfc_plan_swap_t *w = &v->swaps[i];
    ok = (o = cJSON_CreateObject()) != NULL && cJSON_AddItemToArray(arr, o);
    ok = ok && add_num(o, "index", i) && add_num(o, "tensor", w->tensor);
    ok = ok && cJSON_AddStringToObject(o, "direction", w->direction == SFC_SWAP_OUT ? "out" : "in");
    ok = ok && add_num(o, "bytes", (double)w->bytes) && add_num(o, "issue_step", w->issue_step);
    ok = ok && add_num(o, "device_block", w->device_block) &&
         add_num(o, "host_block", w->host_block);
  }
  if (!ok) {
    cJSON_Delete(root);
    return NULL;
  }
  return root;
}

/* A device block as a packed buffer: steps [first, last + 1), its offset. */
static sfc_pack_block_t packed(const sfc_plan_block_t *x) {
  return (sfc_pack_block_t){.size = x->bytes,
                            .start = x->first_step,
                            .end = (int64_t)x->last_step + 1,
                            .offset = x->offset};
}

/* The device blocks as a packing, drawn by svg.c. */
static sfc_status_t write_svg(const char *out, const char *path, const sfc_plan_view_t *v,
                              sfc_error_t *err) {
  uint32_t n = v->block_count;
  sfc_pack_block_t *b = calloc(n ? n : 1, sizeof *b);
  const char **names = calloc(n ? n : 1, sizeof *names);
  if (!b || !names) {
    free(b);
    free(names);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory drawing %s", path);
  }
  for (uint32_t i = 0; i < n; i++) {
    b[i] = packed(&v->blocks[i]);
    names[i] = sfc_plan_string(v, v->tensors[v->blocks[i].tensor].name);
  }
  char title[512];
  snprintf(title, sizeof title, "%s: %s, arena %" PRIu64 " B", path,
           sfc_plan_string(v, v->meta.graph_name), v->header.arena_bytes);
  sfc_svg_packing_t pic = {.blocks = b,
                           .names = names,
                           .count = n,
                           .lower_bound = v->meta.lower_bound_bytes,
                           .title = title};
  sfc_status_t st = sfc_svg_write_file(out, &pic, err);
  free(b);
  free(names);
  return st;
}

/* The device blocks with bytes as a minimalloc CSV instance, the plan's offsets its
 * solution (sfc pack reads it; an id is the block's index in the plan). */
static sfc_status_t write_csv(const char *out, const char *path, const sfc_plan_view_t *v,
                              sfc_error_t *err) {
  uint32_t n = v->block_count;
  sfc_pack_csv_t csv = {.blocks = calloc(n ? n : 1, sizeof *csv.blocks),
                        .ids = calloc(n ? n : 1, sizeof *csv.ids),
                        .id_text = malloc((size_t)(n ? n : 1) * 11)};
  if (!csv.blocks || !csv.ids || !csv.id_text) {
    sfc_pack_csv_free(&csv);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory writing %s as CSV", path);
  }
  char *id = csv.id_text;
  for (uint32_t i = 0; i < n; i++) {
    if (v->blocks[i].bytes == 0)
      continue;
    csv.ids[csv.count] = id;
    id += snprintf(id, 11, "%" PRIu32, i) + 1;
    csv.blocks[csv.count++] = packed(&v->blocks[i]);
  }
  sfc_status_t st = sfc_pack_csv_write_file(out, &csv, err);
  sfc_pack_csv_free(&csv);
  return st;
}

static int run_inspect(int argc, char **argv) {
  const char *path = NULL, *svg = NULL, *timeline = NULL, *csv = NULL, *value;
  bool json = false, blocks = false, steps = false;
  for (int i = 1; i < argc; i++) {
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_inspect);
    if (sfc_cli_option(argc, argv, &i, "--svg", NULL, &value)) {
      if (!value)
        return sfc_cli_usage("inspect", "option '--svg' needs a value");
      svg = value;
    } else if (sfc_cli_option(argc, argv, &i, "--timeline", NULL, &value)) {
      if (!value)
        return sfc_cli_usage("inspect", "option '--timeline' needs a value");
      timeline = value;
    } else if (sfc_cli_option(argc, argv, &i, "--csv", NULL, &value)) {
      if (!value)
        return sfc_cli_usage("inspect", "option '--csv' needs a value");
      csv = value;
    } else if (strcmp(argv[i], "--json") == 0)
      json = true;
    else if (strcmp(argv[i], "--blocks") == 0)
      blocks = true;
    else if (strcmp(argv[i], "--steps") == 0)
      steps = true;
    else if (argv[i][0] == '-' && argv[i][1])
      return sfc_cli_usage("inspect", "unknown option '%s'", argv[i]);
    else if (path)
      return sfc_cli_usage("inspect", "more than one plan given");
    else
      path = argv[i];
  }
  if (!path)
    return sfc_cli_usage("inspect", "no plan given");
  sfc_error_t err = {0};
  /* the files written: never the plan, not each other, and writable, before anything
   * is printed */
  const char *outs[] = {svg, timeline, csv};
  for (int a = 0; a < 3; a++) {
    if (outs[a] && sfc_outfile_check(outs[a], &path, 1, &err) != SFC_OK)
      return sfc_cli_fail(&err);
    for (int b = 0; b < a; b++)
      if (outs[a] && outs[b] && sfc_outfile_check_distinct(outs[b], outs[a], &err) != SFC_OK)
        return sfc_cli_fail(&err);
  }
  sfcrt_plan_t *plan;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  int rc = SFC_EXIT_OK;
  if (json) {
    cJSON *root = to_json(v);
    char *text = root ? cJSON_Print(root) : NULL;
    if (text) {
      puts(text);
    } else {
      char shown[SFC_PATH_SHOWN_BYTES];
      fprintf(stderr, "sfc: out of memory printing %s as JSON\n", sfc_cli_path_shown(path, shown));
      rc = SFC_EXIT_INTERNAL;
    }
    free(text);
    cJSON_Delete(root);
  } else {
    print_text(path, v, blocks, steps);
  }
  if (svg && rc == SFC_EXIT_OK && write_svg(svg, path, v, &err) != SFC_OK)
    rc = sfc_cli_fail(&err);
  if (timeline && rc == SFC_EXIT_OK) {
    char title[512];
    snprintf(title, sizeof title, "%s: %s on %s, budget %" PRIu64 " B, %u swaps", path,
             sfc_plan_string(v, v->meta.graph_name), sfc_plan_string(v, v->meta.profile_name),
             v->header.budget_bytes, v->swap_count);
    if (sfc_timeline_write_file(timeline, plan, title, &err) != SFC_OK)
      rc = sfc_cli_fail(&err);
  }
  if (csv && rc == SFC_EXIT_OK && write_csv(csv, path, v, &err) != SFC_OK)
    rc = sfc_cli_fail(&err);
  sfcrt_plan_destroy(plan);
  return rc;
}

const sfc_command_t sfc_cmd_inspect = {"inspect", "inspect PLAN [--json]: what a plan holds",
                                       inspect_help, run_inspect};

/* ---- verify ------------------------------------------------------------------- */

static const char verify_help[] =
    "usage: sfc verify PLAN\n"
    "\n"
    "Checks a plan twice, independently: the runtime's loader validates the file\n"
    "(magic, version, CRC-32s, bounds, references, no two live blocks sharing\n"
    "bytes), then the compiler's verifier re-checks the invariants (every use\n"
    "resident, swaps and dependencies ordered, block reuse waits for earlier\n"
    "occupants) and the budget (arena <= budget).\n"
    "\n"
    "example:\n"
    "  sfc verify cnn.plan\n"
    "\n"
    "exit status: 0 valid; 1 well-formed but violates an invariant or the budget;\n"
    "             2 not a readable plan (corrupt, truncated, wrong version)\n";

static int run_verify(int argc, char **argv) {
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (sfc_cli_is_help(argv[i]))
      return sfc_cli_print_help(&sfc_cmd_verify);
    if (argv[i][0] == '-' && argv[i][1])
      return sfc_cli_usage("verify", "unknown option '%s'", argv[i]);
    if (path)
      return sfc_cli_usage("verify", "more than one plan given");
    path = argv[i];
  }
  if (!path)
    return sfc_cli_usage("verify", "no plan given");
  sfc_error_t err = {0};
  sfcrt_plan_t *plan;
  if (sfcrt_plan_load_file(path, NULL, &plan, &err) != SFC_OK)
    return sfc_cli_fail(&err);
  const sfc_plan_view_t *v = sfcrt_plan_view(plan);
  sfc_verify_stats_t stats;
  sfc_status_t st = sfc_verify_plan(v, true, &stats, &err);
  if (st != SFC_OK) {
    sfc_error_prefix(&err, path);
    sfcrt_plan_destroy(plan);
    return sfc_cli_fail(&err);
  }
  char a[32], b[32], c[32], shown[SFC_PATH_SHOWN_BYTES];
  char need[96];
  if (sfc_plan_paged(v)) /* 1.7: the pages touched at once are what must fit */
    snprintf(need, sizeof need, "paged arena %s, its pages %s at most,",
             sfc_format_size(v->header.arena_bytes, a, sizeof a),
             sfc_format_size(v->meta.page_peak_bytes, c, sizeof c));
  else
    snprintf(need, sizeof need, "arena %s", sfc_format_size(v->header.arena_bytes, a, sizeof a));
  printf("%s: ok: %u steps, %u blocks, %u swaps; %s within budget %s; "
         "%" PRIu64 " block reuses ordered\n",
         sfc_cli_path_shown(path, shown), stats.steps, stats.blocks, stats.swaps, need,
         v->header.budget_bytes ? sfc_format_size(v->header.budget_bytes, b, sizeof b) : "(none)",
         stats.reuse_checks);
  sfcrt_plan_destroy(plan);
  return SFC_EXIT_OK;
}

const sfc_command_t sfc_cmd_verify = {"verify", "verify PLAN: check a plan independently",
                                      verify_help, run_verify};
