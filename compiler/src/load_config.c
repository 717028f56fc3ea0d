/* load_config.c — reads a config v1 YAML document (docs/config-format.md) on top of a
 * caller's configuration.
 *
 * How: libyaml's event parser, driven by hand. The schema is two levels deep (a
 * mapping of sections, each a mapping of scalar fields), so the loader walks exactly
 * that shape and stops at the first event that does not fit it: a sequence, a
 * nested mapping, an alias, anchor or tag, an unknown or repeated key. Nothing is
 * built but a table of parsed values, so depth and size stay bounded by the shape
 * (and the input by MAX_CONFIG_BYTES), whatever the file holds.
 *
 * Each field's value is parsed as soon as it is read (errors come in file order) into
 * `staged`, a scratch config, and marked as set with its position. After the
 * document: start from the caller's config, apply the profile if the file named one
 * (wherever it appeared), copy every set field over it, default the budget to the
 * memory when the memory or profile changed and the budget was not given, and check
 * the cross-field rules (budget <= memory, va_chunk a multiple of alignment). Only
 * then is the caller's config overwritten, so on any error it is untouched.
 *
 * Errors read "<file>:<line>:<col>: <key.path>: <reason>" with libyaml's 0-based
 * marks made 1-based, pointing at the offending value (or key, for key errors).
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "config.h"
#include "pack.h"
#include "sfc/plan_format.h"
#include "units.h"

#define MAX_CONFIG_BYTES ((size_t)1 << 20)
#define SHOWN_CHARS      40 /* a key or value quoted in a message is cut after this many */

/* ---- the schema ---------------------------------------------------------------- */

typedef enum section {
  S_TOP, /* only `version` lives here */
  S_DEVICE,
  S_SCHEDULER,
  S_TILING,
  S_PACKER,
  S_HOST,
  S_COUNT
} section_t;

static const char *const section_names[S_COUNT] = {"",       "device", "scheduler",
                                                   "tiling", "packer", "host"};
static const char top_keys[] = "version, device, scheduler, tiling, packer, host";

typedef enum kind {
  K_VERSION,  /* the integer 1 */
  K_PROFILE,  /* a built-in profile name */
  K_SIZE,     /* uint64_t bytes, >= min */
  K_ALIGN,    /* uint64_t bytes, power of two, <= max */
  K_RATE,     /* double bytes/s in [lo, hi] */
  K_DURATION, /* double seconds in [lo, hi] (packer.time_limit: sfc_parse_time_limit) */
  K_FRACTION, /* double in [lo, hi], a factor */
  K_NUMBER,   /* double in [lo, hi] */
  K_POLICY,   /* sfc_sched_policy_t */
  K_MODE,     /* sfc_tiling_mode_t */
  K_HALO,     /* sfc_tiling_halo_t */
  K_GRID,     /* "auto" or ROWSxCOLUMNS, uint32_t[2] each in [min, max] ({0, 0} = auto) */
  K_SEGMENTS, /* sfc_tiling_segments_t */
  K_ARENA,    /* sfc_arena_kind_t */
  K_WINDOW,   /* "auto" or a size > 0 */
  K_COUNT,    /* uint32_t in [min, max] */
  K_NAME      /* char[SFC_NAME_BYTES] of [a-z0-9-] */
} kind_t;

static const char *const kind_names[] = {[K_VERSION] = "the version number",
                                         [K_PROFILE] = "a profile name",
                                         [K_SIZE] = "a size",
                                         [K_ALIGN] = "a size",
                                         [K_RATE] = "a rate",
                                         [K_DURATION] = "a duration",
                                         [K_FRACTION] = "a number",
                                         [K_NUMBER] = "a number",
                                         [K_POLICY] = "a policy",
                                         [K_MODE] = "a mode",
                                         [K_HALO] = "a halo mode",
                                         [K_GRID] = "auto or a grid",
                                         [K_SEGMENTS] = "a segments rule",
                                         [K_ARENA] = "an arena (contiguous or paged)",
                                         [K_WINDOW] = "auto or a size",
                                         [K_COUNT] = "a whole number",
                                         [K_NAME] = "a name"};
/* one name per kind: K_NAME is the last kind */
_Static_assert(sizeof kind_names / sizeof kind_names[0] == K_NAME + 1, "kind_names");

typedef enum field_id {
  F_VERSION,
  F_PROFILE,
  F_MEMORY,
  F_BUDGET,
  F_H2D,
  F_D2H,
  F_DUPLEX,
  F_LATENCY,
  F_ALIGNMENT,
  F_VA_CHUNK,
  F_PEAK_FLOPS,
  F_MEMORY_BANDWIDTH,
  F_LAUNCH_OVERHEAD,
  F_DENSE_FLOPS_EFF,
  F_DENSE_BYTES_EFF,
  F_ELEMENTWISE_FLOPS_EFF,
  F_ELEMENTWISE_BYTES_EFF,
  F_ARENA,
  F_PAGE,
  F_PAGE_MAP,
  F_POLICY,
  F_WINDOW,
  F_PREFETCH,
  F_TILING_MODE,
  F_MAX_TILES,
  F_MIN_TILE,
  F_HALO,
  F_GRID,
  F_SEGMENTS,
  F_ALGORITHM,
  F_MIP_MAX_BLOCKS,
  F_TIME_LIMIT,
  F_STAGING,
  F_COUNT
} field_id_t;

typedef struct field {
  section_t section;
  const char *key;
  kind_t kind;
  size_t offset; /* of the value in sfc_config_t (K_WINDOW: window_bytes) */
  uint64_t min, max;
  double lo, hi; /* bounds of a double-valued field (config.h) */
} field_t;

#define AT(member) offsetof(sfc_config_t, member)
static const field_t fields[F_COUNT] = {
    [F_VERSION] = {S_TOP, "version", K_VERSION, 0, 0, 0},
    [F_PROFILE] = {S_DEVICE, "profile", K_PROFILE, 0, 0, 0},
    [F_MEMORY] = {S_DEVICE, "memory", K_SIZE, AT(device.memory_bytes), 1, 0},
    [F_BUDGET] = {S_DEVICE, "budget", K_SIZE, AT(budget_bytes), 1, 0},
    [F_H2D] = {S_DEVICE, "h2d_bandwidth", K_RATE, AT(device.h2d_bytes_per_s), 0, 0, SFC_RATE_MIN,
               SFC_RATE_MAX},
    [F_D2H] = {S_DEVICE, "d2h_bandwidth", K_RATE, AT(device.d2h_bytes_per_s), 0, 0, SFC_RATE_MIN,
               SFC_RATE_MAX},
    [F_DUPLEX] = {S_DEVICE, "duplex_factor", K_FRACTION, AT(device.duplex_factor), 0, 0,
                  SFC_DUPLEX_MIN, 1},
    [F_LATENCY] = {S_DEVICE, "copy_latency", K_DURATION, AT(device.copy_latency_s), 0, 0, 0,
                   SFC_LATENCY_MAX_S},
    [F_ALIGNMENT] = {S_DEVICE, "alignment", K_ALIGN, AT(device.alignment), 1, 1u << 20},
    [F_VA_CHUNK] = {S_DEVICE, "va_chunk", K_SIZE, AT(device.va_chunk_bytes), 1,
                    SFC_PLAN_MAX_ARENA_BYTES}, /* a plan records it: 1 PiB at most */
    [F_PEAK_FLOPS] = {S_DEVICE, "peak_flops", K_NUMBER, AT(device.peak_flops), 0, 0,
                      SFC_PEAK_FLOPS_MIN, SFC_PEAK_FLOPS_MAX},
    [F_MEMORY_BANDWIDTH] = {S_DEVICE, "memory_bandwidth", K_RATE, AT(device.memory_bytes_per_s), 0,
                            0, SFC_RATE_MIN, SFC_RATE_MAX},
    [F_LAUNCH_OVERHEAD] = {S_DEVICE, "launch_overhead", K_DURATION, AT(device.launch_overhead_s), 0,
                           0, 0, SFC_LAUNCH_MAX_S},
    [F_DENSE_FLOPS_EFF] = {S_DEVICE, "dense_flops_efficiency", K_FRACTION,
                           AT(device.dense_flops_efficiency), 0, 0, SFC_EFFICIENCY_MIN, 1},
    [F_DENSE_BYTES_EFF] = {S_DEVICE, "dense_bytes_efficiency", K_FRACTION,
                           AT(device.dense_bytes_efficiency), 0, 0, SFC_EFFICIENCY_MIN, 1},
    [F_ELEMENTWISE_FLOPS_EFF] = {S_DEVICE, "elementwise_flops_efficiency", K_FRACTION,
                                 AT(device.elementwise_flops_efficiency), 0, 0, SFC_EFFICIENCY_MIN,
                                 1},
    [F_ELEMENTWISE_BYTES_EFF] = {S_DEVICE, "elementwise_bytes_efficiency", K_FRACTION,
                                 AT(device.elementwise_bytes_efficiency), 0, 0, SFC_EFFICIENCY_MIN,
                                 1},
    [F_ARENA] = {S_DEVICE, "arena", K_ARENA, AT(arena.kind), 0, 0},
    [F_PAGE] = {S_DEVICE, "page", K_SIZE, AT(arena.page_bytes), 1, SFC_PLAN_MAX_ARENA_BYTES},
    [F_PAGE_MAP] = {S_DEVICE, "page_map_cost", K_DURATION, AT(arena.page_map_s), 0, 0, 0,
                    SFC_PAGE_MAP_MAX_S},
    [F_POLICY] = {S_SCHEDULER, "policy", K_POLICY, AT(scheduler.policy), 0, 0},
    [F_WINDOW] = {S_SCHEDULER, "window", K_WINDOW, AT(scheduler.window_bytes), 0, 0},
    [F_PREFETCH] = {S_SCHEDULER, "prefetch_limit", K_COUNT, AT(scheduler.prefetch_limit), 0,
                    1000000},
    [F_TILING_MODE] = {S_TILING, "mode", K_MODE, AT(tiling.mode), 0, 0},
    [F_MAX_TILES] = {S_TILING, "max_tiles", K_COUNT, AT(tiling.max_tiles), 1, 1u << 20},
    [F_MIN_TILE] = {S_TILING, "min_tile", K_COUNT, AT(tiling.min_tile), 1, 1u << 16},
    [F_HALO] = {S_TILING, "halo", K_HALO, AT(tiling.halo), 0, 0},
    [F_GRID] = {S_TILING, "grid", K_GRID, AT(tiling.grid), 1, SFC_GRID_MAX},
    [F_SEGMENTS] = {S_TILING, "segments", K_SEGMENTS, AT(tiling.segments), 0, 0},
    [F_ALGORITHM] = {S_PACKER, "algorithm", K_NAME, AT(packer.algorithm), 0, 0},
    [F_MIP_MAX_BLOCKS] = {S_PACKER, "mip_max_blocks", K_COUNT, AT(packer.mip_max_blocks), 0,
                          SFC_MIP_MAX_BLOCKS_MAX},
    [F_TIME_LIMIT] = {S_PACKER, "time_limit", K_DURATION, AT(packer.time_limit_s), 0, 0,
                      SFC_TIME_LIMIT_MIN_S, SFC_TIME_LIMIT_MAX_S},
    [F_STAGING] = {S_HOST, "staging_budget", K_SIZE, AT(host.staging_budget_bytes), 0, 0},
};
#undef AT

/* The kinds whose value is one of a list of names, stored as its index (an enum). */
typedef struct named_kind {
  const char *what; /* "unknown <what> 'x'; expected one of: ..." */
  const char *const *names;
  size_t count;
} named_kind_t;

#define NAMED(what, names)                                                                         \
  { what, names, sizeof names / sizeof names[0] }
static const named_kind_t named_kinds[] = {
    [K_POLICY] = NAMED("policy", sfc_sched_policy_names),
    [K_MODE] = NAMED("mode", sfc_tiling_mode_names),
    [K_HALO] = NAMED("halo mode", sfc_tiling_halo_names),
    [K_SEGMENTS] = NAMED("segments rule", sfc_tiling_segments_names),
    [K_ARENA] = NAMED("arena", sfc_arena_kind_names),
};
#undef NAMED
_Static_assert(sizeof(sfc_sched_policy_t) == sizeof(int) &&
                   sizeof(sfc_tiling_mode_t) == sizeof(int) &&
                   sizeof(sfc_tiling_halo_t) == sizeof(int) &&
                   sizeof(sfc_tiling_segments_t) == sizeof(int),
               "named kinds are stored as an int");

/* ---- loader state and messages ------------------------------------------------- */

typedef struct loader {
  yaml_parser_t parser;
  yaml_event_t event; /* the current event, valid when have_event */
  bool have_event;
  const char *file;
  const unsigned char *data;
  size_t bytes;
  sfc_error_t *err;

  sfc_config_t staged; /* parsed values of the fields in set[] */
  bool set[F_COUNT];
  yaml_mark_t key_mark[F_COUNT], value_mark[F_COUNT];
  bool section_seen[S_COUNT];
  yaml_mark_t section_mark[S_COUNT];
  const sfc_profile_t *profile;
} loader_t;

/* A key or value as shown in a message: cut to SHOWN_CHARS, control bytes as '?'. */
static const char *shown(const char *s, size_t len, char *buf, size_t buf_bytes) {
  size_t n = len < SHOWN_CHARS ? len : SHOWN_CHARS, i = 0;
  for (; i < n && i + 4 < buf_bytes; i++)
    buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  if (len > n && i + 4 <= buf_bytes)
    memcpy(buf + i, "...", 3), i += 3;
  buf[i] = '\0';
  return buf;
}

#if defined(__GNUC__)
__attribute__((format(printf, 6, 7)))
#endif
static sfc_status_t
fail_at(loader_t *L, size_t line, size_t col, sfc_status_t status, const char *path,
        const char *fmt, ...) {
  char reason[SFC_ERROR_MESSAGE_BYTES];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(reason, sizeof reason, fmt, ap);
  va_end(ap);
  return sfc_error_set(L->err, status, "%s:%zu:%zu: %s: %s", L->file, line, col, path, reason);
}

/* An error at a libyaml mark (0-based) with the usual status, bad input. */
#define FAIL(L, mark, path, ...)                                                                   \
  fail_at((L), (mark).line + 1, (mark).column + 1, SFC_ERR_BAD_INPUT, (path), __VA_ARGS__)

/* Line and column (1-based, in characters) of a byte offset into the input. */
static void offset_position(const loader_t *L, size_t offset, size_t *line, size_t *col) {
  *line = 1, *col = 1;
  for (size_t i = 0; i < offset && i < L->bytes; i++) {
    if (L->data[i] == '\n')
      *line += 1, *col = 1;
    else if ((L->data[i] & 0xc0) != 0x80) /* not a UTF-8 continuation byte */
      *col += 1;
  }
}

/* The byte at a libyaml mark, found from its line and column; 0 when out of range. */
static unsigned char byte_at(const loader_t *L, yaml_mark_t mark) {
  size_t i = 0, line = 0;
  while (i < L->bytes && line < mark.line)
    if (L->data[i++] == '\n')
      line++;
  for (size_t col = 0; i < L->bytes && col < mark.column; col++)
    for (i++; i < L->bytes && (L->data[i] & 0xc0) == 0x80; i++)
      ; /* skip the continuation bytes of a UTF-8 character */
  return i < L->bytes ? L->data[i] : 0;
}

static sfc_status_t syntax_error(loader_t *L) {
  yaml_parser_t *p = &L->parser;
  const char *problem = p->problem ? p->problem : "malformed YAML";
  if (p->error == YAML_MEMORY_ERROR)
    return sfc_error_set(L->err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory while parsing", L->file);
  if (p->error == YAML_READER_ERROR) {
    size_t line, col;
    offset_position(L, p->problem_offset, &line, &col);
    if (p->problem_value >= 0)
      return fail_at(L, line, col, SFC_ERR_BAD_INPUT, "yaml", "%s (0x%x)", problem,
                     (unsigned)p->problem_value);
    return fail_at(L, line, col, SFC_ERR_BAD_INPUT, "yaml", "%s", problem);
  }
  yaml_mark_t m = p->problem_mark;
  if (strcmp(problem, "found character that cannot start any token") == 0 && byte_at(L, m) == '\t')
    return FAIL(L, m, "yaml",
                "tab character where indentation or a token belongs (YAML indents with "
                "spaces only)");
  if (p->context)
    return FAIL(L, m, "yaml", "%s (%s at %zu:%zu)", problem, p->context,
                (size_t)p->context_mark.line + 1, (size_t)p->context_mark.column + 1);
  return FAIL(L, m, "yaml", "%s", problem);
}

static sfc_status_t next_event(loader_t *L) {
  if (L->have_event) {
    yaml_event_delete(&L->event);
    L->have_event = false;
  }
  if (!yaml_parser_parse(&L->parser, &L->event))
    return syntax_error(L);
  L->have_event = true;
  return SFC_OK;
}

static const char *event_noun(yaml_event_type_t type) {
  switch (type) {
    case YAML_MAPPING_START_EVENT:
      return "a mapping";
    case YAML_SEQUENCE_START_EVENT:
      return "a sequence";
    case YAML_SCALAR_EVENT:
      return "a scalar";
    case YAML_ALIAS_EVENT:
      return "an alias";
    default:
      return "the end of a collection";
  }
}

/* Rejects what the config format leaves out of YAML: aliases, anchors, tags. */
static sfc_status_t check_node(loader_t *L, const char *path) {
  const yaml_event_t *e = &L->event;
  const yaml_char_t *anchor = NULL, *tag = NULL;
  char buf[SHOWN_CHARS + 8];
  if (e->type == YAML_ALIAS_EVENT)
    return FAIL(L, e->start_mark, path, "aliases (*%s) are not supported",
                shown((const char *)e->data.alias.anchor,
                      strlen((const char *)e->data.alias.anchor), buf, sizeof buf));
  if (e->type == YAML_SCALAR_EVENT)
    anchor = e->data.scalar.anchor, tag = e->data.scalar.tag;
  else if (e->type == YAML_MAPPING_START_EVENT)
    anchor = e->data.mapping_start.anchor, tag = e->data.mapping_start.tag;
  else if (e->type == YAML_SEQUENCE_START_EVENT)
    anchor = e->data.sequence_start.anchor, tag = e->data.sequence_start.tag;
  if (anchor)
    return FAIL(L, e->start_mark, path, "anchors (&%s) are not supported",
                shown((const char *)anchor, strlen((const char *)anchor), buf, sizeof buf));
  if (tag) { /* shown as written: "tag:yaml.org,2002:str" was "!!str" */
    const char *t = (const char *)tag, *std = "tag:yaml.org,2002:";
    bool short_form = strncmp(t, std, strlen(std)) == 0;
    if (short_form)
      t += strlen(std);
    return FAIL(L, e->start_mark, path, "tags (%s%s) are not supported", short_form ? "!!" : "",
                shown(t, strlen(t), buf, sizeof buf));
  }
  return SFC_OK;
}

static bool is_null_scalar(const yaml_event_t *e) {
  const char *v = (const char *)e->data.scalar.value;
  return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE &&
         (e->data.scalar.length == 0 || strcmp(v, "~") == 0 || strcmp(v, "null") == 0 ||
          strcmp(v, "Null") == 0 || strcmp(v, "NULL") == 0);
}

/* ---- values -------------------------------------------------------------------- */

/* A plain decimal integer ("0", "1024"); no sign, no fraction, no unit. */
static bool parse_whole(const char *s, uint64_t *out) {
  uint64_t v = 0;
  if (!*s)
    return false;
  for (; *s; s++) {
    if (*s < '0' || *s > '9' || v > (UINT64_MAX - 9) / 10)
      return false;
    v = v * 10 + (uint64_t)(*s - '0');
  }
  *out = v;
  return true;
}

/* A plain decimal number without unit ("0.7", "67e12", "6.7e+13"); finite, >= 0. */
static bool parse_number(const char *s, double *out) {
  const char *p = s;
  size_t digits = 0;
  while (*p >= '0' && *p <= '9')
    p++, digits++;
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9'; p++)
      digits++;
  if (digits == 0)
    return false;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-')
      p++;
    if (!(*p >= '0' && *p <= '9'))
      return false;
    while (*p >= '0' && *p <= '9')
      p++;
  }
  if (*p)
    return false;
  double v = strtod(s, NULL);
  if (!isfinite(v))
    return false;
  *out = v;
  return true;
}

/* A bound of a double-valued field as its messages show it: "1KB/s", "1s", "0.01", "1e6". */
static const char *bound_text(kind_t kind, double v, char *buf, size_t buf_bytes) {
  if (kind == K_RATE)
    return sfc_format_rate(v, buf, buf_bytes);
  if (kind == K_DURATION && v > 0)
    return sfc_format_duration(v, buf, buf_bytes);
  char sci[40];
  snprintf(buf, buf_bytes, "%.15g", v); /* "0.01", "1000000" */
  for (int p = 0; p <= 17; p++) {       /* the shortest exact "1e+06" */
    snprintf(sci, sizeof sci, "%.*e", p, v);
    if (strtod(sci, NULL) == v)
      break;
  }
  char *e = strstr(sci, "e+");
  if (e) { /* "1e+06" -> "1e6" */
    const char *digits = e + 2;
    while (*digits == '0' && digits[1])
      digits++;
    memmove(e + 1, digits, strlen(digits) + 1);
  }
  if (strlen(sci) < strlen(buf))
    snprintf(buf, buf_bytes, "%s", sci);
  return buf;
}

static int name_index(const char *const *names, size_t count, const char *s) {
  for (size_t i = 0; i < count; i++)
    if (strcmp(names[i], s) == 0)
      return (int)i;
  return -1;
}

/* A grid "ROWSxCOLUMNS" of plain decimal whole numbers ("32x32", "8x16"). */
static bool parse_grid(const char *s, uint64_t *rows, uint64_t *cols) {
  char part[24];
  const char *x = strchr(s, 'x');
  size_t n = x ? (size_t)(x - s) : 0;
  if (!x || n == 0 || n >= sizeof part)
    return false;
  memcpy(part, s, n);
  part[n] = '\0';
  return parse_whole(part, rows) && parse_whole(x + 1, cols);
}

/* Parses the current scalar event as field f into L->staged. */
static sfc_status_t parse_value(loader_t *L, field_id_t id, const char *path) {
  const field_t *f = &fields[id];
  const yaml_event_t *e = &L->event;
  const char *s = (const char *)e->data.scalar.value;
  size_t len = e->data.scalar.length;
  char *slot = (char *)&L->staged + f->offset;
  char why[256], v[SHOWN_CHARS + 8], a[40];
  uint64_t u = 0;
  double d = 0;
  shown(s, len, v, sizeof v);
  if (memchr(s, '\0', len))
    return FAIL(L, e->start_mark, path, "'%s' contains a NUL character", v);

  switch (f->kind) {
    case K_VERSION:
      if (!parse_whole(s, &u))
        return FAIL(L, e->start_mark, path, "expected the version number %d, got '%s'",
                    SFC_CONFIG_VERSION, v);
      if (u != SFC_CONFIG_VERSION)
        return fail_at(L, e->start_mark.line + 1, e->start_mark.column + 1, SFC_ERR_VERSION, path,
                       "unsupported config version %" PRIu64 " (this sfc reads %d)", u,
                       SFC_CONFIG_VERSION);
      return SFC_OK;

    case K_PROFILE: {
      L->profile = sfc_profile_find(s);
      if (L->profile)
        return SFC_OK;
      size_t n;
      const sfc_profile_t *all = sfc_profiles(&n);
      char list[256] = "";
      for (size_t i = 0; i < n; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 all[i].name);
      return FAIL(L, e->start_mark, path, "unknown profile '%s'; built-in profiles: %s", v, list);
    }

    case K_SIZE:
    case K_ALIGN:
      if (!sfc_parse_size(s, &u, why, sizeof why))
        return FAIL(L, e->start_mark, path, "%s", why);
      if (u < f->min)
        return FAIL(L, e->start_mark, path, "'%s' must be greater than 0", v);
      if (f->kind == K_ALIGN && (u & (u - 1)) != 0)
        return FAIL(L, e->start_mark, path, "'%s' is not a power of two", v);
      if (u > f->max && (f->kind == K_ALIGN || f->max > 0))
        return FAIL(L, e->start_mark, path, "'%s' is larger than %s", v,
                    sfc_format_size_exact(f->max, a, sizeof a));
      memcpy(slot, &u, sizeof u);
      return SFC_OK;

    case K_RATE:
    case K_DURATION:
    case K_FRACTION:
    case K_NUMBER: {
      bool parsed = f->kind == K_RATE       ? sfc_parse_rate(s, &d, why, sizeof why)
                    : id == F_TIME_LIMIT    ? sfc_parse_time_limit(s, &d, why, sizeof why)
                    : f->kind == K_DURATION ? sfc_parse_duration(s, &d, why, sizeof why)
                                            : parse_number(s, &d);
      if (!parsed && (f->kind == K_FRACTION || f->kind == K_NUMBER))
        return FAIL(L, e->start_mark, path, "expected a number, got '%s'", v);
      if (!parsed)
        return FAIL(L, e->start_mark, path, "%s", why);
      if (!(d >= f->lo && d <= f->hi)) {
        char lo[40], hi[40];
        bool unitless = f->kind == K_DURATION && d > 0 && len > 0 &&
                        ((s[len - 1] >= '0' && s[len - 1] <= '9') || s[len - 1] == '.');
        return FAIL(L, e->start_mark, path, "'%s' is not in %s..%s%s", v,
                    bound_text(f->kind, f->lo, lo, sizeof lo),
                    bound_text(f->kind, f->hi, hi, sizeof hi),
                    unitless ? " (a number without a unit is seconds)" : "");
      }
      memcpy(slot, &d, sizeof d);
      return SFC_OK;
    }

    case K_POLICY:
    case K_MODE:
    case K_HALO:
    case K_SEGMENTS:
    case K_ARENA: {
      const named_kind_t *nk = &named_kinds[f->kind];
      int i = name_index(nk->names, nk->count, s);
      if (i < 0) {
        char list[128] = "";
        for (size_t k = 0; k < nk->count; k++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", k ? ", " : "",
                   nk->names[k]);
        return FAIL(L, e->start_mark, path, "unknown %s '%s'; expected one of: %s", nk->what, v,
                    list);
      }
      memcpy(slot, &i, sizeof i);
      return SFC_OK;
    }

    case K_GRID: {
      uint32_t grid[2] = {0, 0};
      uint64_t rows = 0, cols = 0;
      if (strcmp(s, "auto") != 0) {
        if (!parse_grid(s, &rows, &cols))
          return FAIL(L, e->start_mark, path,
                      "expected auto or a grid ROWSxCOLUMNS (e.g. 32x32), got '%s'", v);
        if (rows < f->min || rows > f->max || cols < f->min || cols > f->max)
          return FAIL(L, e->start_mark, path,
                      "'%s': rows and columns must each be in %" PRIu64 "..%" PRIu64, v, f->min,
                      f->max);
        grid[0] = (uint32_t)rows;
        grid[1] = (uint32_t)cols;
      }
      memcpy(slot, grid, sizeof grid);
      return SFC_OK;
    }

    case K_WINDOW:
      L->staged.scheduler.window_auto = strcmp(s, "auto") == 0;
      if (L->staged.scheduler.window_auto)
        return SFC_OK;
      if (!sfc_parse_size(s, &u, why, sizeof why)) {
        if ((s[0] >= '0' && s[0] <= '9') || s[0] == '.' || s[0] == '-')
          return FAIL(L, e->start_mark, path, "%s", why); /* a size with a problem */
        return FAIL(L, e->start_mark, path, "expected auto or a size, got '%s'", v);
      }
      if (u == 0)
        return FAIL(L, e->start_mark, path, "'%s' must be greater than 0", v);
      L->staged.scheduler.window_bytes = u;
      return SFC_OK;

    case K_COUNT: {
      if (!parse_whole(s, &u))
        return FAIL(L, e->start_mark, path, "expected a whole number, got '%s'", v);
      if (u < f->min || u > f->max)
        return FAIL(L, e->start_mark, path, "'%s' is not in %" PRIu64 "..%" PRIu64, v, f->min,
                    f->max);
      uint32_t n = (uint32_t)u;
      memcpy(slot, &n, sizeof n);
      return SFC_OK;
    }

    case K_NAME: {
      /* A leading '-' is refused: "-" alone would print as a YAML sequence entry. */
      bool ok = len > 0 && len < SFC_NAME_BYTES && s[0] != '-';
      for (size_t i = 0; ok && i < len; i++)
        ok = (s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-';
      if (!ok)
        return FAIL(L, e->start_mark, path,
                    "'%s' is not a name (1 to %d characters of a-z, 0-9 and -, not starting "
                    "with -)",
                    v, SFC_NAME_BYTES - 1);
      if (id == F_ALGORITHM && !sfc_packer_find(s)) {
        char list[512] = "";
        size_t n;
        const sfc_packer_t *all = sfc_packers(&n); /* "auto" is the first */
        for (size_t i = 0; i < n; i++)
          snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                   all[i].name);
        return FAIL(L, e->start_mark, path, "unknown packer '%s'; expected one of: %s", v, list);
      }
      memcpy(slot, s, len + 1);
      return SFC_OK;
    }
  }
  return sfc_error_set(L->err, SFC_ERR_INTERNAL, "%s: unhandled field kind", L->file);
}

/* ---- structure ----------------------------------------------------------------- */

static void key_list(section_t s, char *buf, size_t buf_bytes) {
  buf[0] = '\0';
  for (int i = 0; i < F_COUNT; i++)
    if (fields[i].section == s)
      snprintf(buf + strlen(buf), buf_bytes - strlen(buf), "%s%s", buf[0] ? ", " : "",
               fields[i].key);
}

/* The current event is a key's scalar; returns the field it names in section s. */
static sfc_status_t lookup_key(loader_t *L, section_t s, field_id_t *out_id, char *path,
                               size_t path_bytes) {
  const yaml_event_t *e = &L->event;
  const char *key = (const char *)e->data.scalar.value;
  char k[SHOWN_CHARS + 8], list[400];
  shown(key, e->data.scalar.length, k, sizeof k);
  snprintf(path, path_bytes, "%s%s%s", section_names[s], s == S_TOP ? "" : ".", k);
  for (int i = 0; i < F_COUNT; i++) {
    if (fields[i].section != s || strlen(fields[i].key) != e->data.scalar.length ||
        strcmp(fields[i].key, key) != 0)
      continue;
    if (L->set[i])
      return FAIL(L, e->start_mark, path, "duplicate key (first at %zu:%zu)",
                  (size_t)L->key_mark[i].line + 1, (size_t)L->key_mark[i].column + 1);
    *out_id = (field_id_t)i;
    return SFC_OK;
  }
  key_list(s, list, sizeof list);
  return FAIL(L, e->start_mark, path, "unknown key; expected one of: %s", list);
}

/* The current event is the key of field id; reads and parses its value. */
static sfc_status_t read_field(loader_t *L, field_id_t id, const char *path) {
  yaml_mark_t key_mark = L->event.start_mark;
  SFC_TRY(next_event(L));
  const yaml_event_t *e = &L->event;
  SFC_TRY(check_node(L, path));
  if (e->type != YAML_SCALAR_EVENT)
    return FAIL(L, e->start_mark, path, "expected %s, got %s", kind_names[fields[id].kind],
                event_noun(e->type));
  if (e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && e->data.scalar.length == 0)
    return FAIL(L, key_mark, path, "missing value (expected %s)", kind_names[fields[id].kind]);
  SFC_TRY(parse_value(L, id, path));
  L->set[id] = true;
  L->key_mark[id] = key_mark;
  L->value_mark[id] = e->start_mark;
  return SFC_OK;
}

/* Checks the current event is a scalar key of a mapping at `path`. */
static sfc_status_t expect_key(loader_t *L, const char *path) {
  SFC_TRY(check_node(L, path));
  if (L->event.type != YAML_SCALAR_EVENT)
    return FAIL(L, L->event.start_mark, path, "expected a key, got %s", event_noun(L->event.type));
  if (memchr(L->event.data.scalar.value, '\0', L->event.data.scalar.length))
    return FAIL(L, L->event.start_mark, path, "a key contains a NUL character");
  return SFC_OK;
}

/* The current event opened section s's value; reads its fields. */
static sfc_status_t read_section(loader_t *L, section_t s) {
  const char *name = section_names[s];
  char path[SHOWN_CHARS + 32];
  SFC_TRY(check_node(L, name));
  if (L->event.type == YAML_SCALAR_EVENT && is_null_scalar(&L->event))
    return SFC_OK; /* "device:" with nothing under it */
  if (L->event.type != YAML_MAPPING_START_EVENT)
    return FAIL(L, L->event.start_mark, name, "expected a mapping of %s fields, got %s", name,
                event_noun(L->event.type));
  for (;;) {
    SFC_TRY(next_event(L));
    if (L->event.type == YAML_MAPPING_END_EVENT)
      return SFC_OK;
    SFC_TRY(expect_key(L, name));
    field_id_t id;
    SFC_TRY(lookup_key(L, s, &id, path, sizeof path));
    SFC_TRY(read_field(L, id, path));
  }
}

/* The current event opened the document's root mapping. */
static sfc_status_t read_top(loader_t *L) {
  for (;;) {
    SFC_TRY(next_event(L));
    if (L->event.type == YAML_MAPPING_END_EVENT)
      return SFC_OK;
    SFC_TRY(expect_key(L, "config"));
    const char *key = (const char *)L->event.data.scalar.value;
    char k[SHOWN_CHARS + 8];
    shown(key, L->event.data.scalar.length, k, sizeof k);
    if (strcmp(key, "version") == 0) {
      field_id_t id;
      char path[SHOWN_CHARS + 32];
      SFC_TRY(lookup_key(L, S_TOP, &id, path, sizeof path));
      SFC_TRY(read_field(L, id, path));
      continue;
    }
    section_t s = S_COUNT;
    for (int i = 1; i < S_COUNT; i++)
      if (strcmp(key, section_names[i]) == 0 && strlen(key) == L->event.data.scalar.length)
        s = (section_t)i;
    if (s == S_COUNT)
      return FAIL(L, L->event.start_mark, k, "unknown key; expected one of: %s", top_keys);
    if (L->section_seen[s])
      return FAIL(L, L->event.start_mark, k, "duplicate key (first at %zu:%zu)",
                  (size_t)L->section_mark[s].line + 1, (size_t)L->section_mark[s].column + 1);
    L->section_seen[s] = true;
    L->section_mark[s] = L->event.start_mark;
    SFC_TRY(next_event(L));
    SFC_TRY(read_section(L, s));
  }
}

static sfc_status_t read_stream(loader_t *L) {
  SFC_TRY(next_event(L)); /* stream start */
  SFC_TRY(next_event(L));
  if (L->event.type == YAML_STREAM_END_EVENT)
    return SFC_OK;        /* empty, or only comments */
  SFC_TRY(next_event(L)); /* the root node, after the document start */
  SFC_TRY(check_node(L, "config"));
  if (L->event.type == YAML_MAPPING_START_EVENT)
    SFC_TRY(read_top(L));
  else if (!(L->event.type == YAML_SCALAR_EVENT && is_null_scalar(&L->event)))
    return FAIL(L, L->event.start_mark, "config", "expected a mapping of sections (%s), got %s",
                top_keys, event_noun(L->event.type));
  SFC_TRY(next_event(L)); /* document end */
  SFC_TRY(next_event(L));
  if (L->event.type != YAML_STREAM_END_EVENT)
    return FAIL(L, L->event.start_mark, "config",
                "a second YAML document; a config file holds exactly one");
  return SFC_OK;
}

/* ---- merge ----------------------------------------------------------------------- */

static size_t value_bytes(kind_t kind) {
  switch (kind) {
    case K_SIZE:
    case K_ALIGN:
      return sizeof(uint64_t);
    case K_RATE:
    case K_DURATION:
    case K_FRACTION:
    case K_NUMBER:
      return sizeof(double);
    case K_POLICY:
    case K_MODE:
    case K_HALO:
    case K_SEGMENTS:
    case K_ARENA:
      return sizeof(int); /* named_kinds */
    case K_GRID:
      return 2 * sizeof(uint32_t);
    case K_COUNT:
      return sizeof(uint32_t);
    case K_NAME:
      return SFC_NAME_BYTES;
    case K_VERSION:
    case K_PROFILE:
    case K_WINDOW:
      return 0; /* handled by hand */
  }
  return 0;
}

/* Builds the effective config in *out from the caller's *base and the file. */
static sfc_status_t merge(loader_t *L, const sfc_config_t *base, sfc_config_t *out) {
  char a[40], b[40];
  *out = *base;
  if (L->profile)
    out->device = *L->profile; /* first, wherever the file named it */
  for (int i = 0; i < F_COUNT; i++) {
    size_t n = value_bytes(fields[i].kind);
    if (L->set[i] && n)
      memcpy((char *)out + fields[i].offset, (const char *)&L->staged + fields[i].offset, n);
  }
  if (L->set[F_WINDOW]) {
    out->scheduler.window_auto = L->staged.scheduler.window_auto;
    out->scheduler.window_bytes =
        L->staged.scheduler.window_auto ? 0 : L->staged.scheduler.window_bytes;
  }
  if (!L->set[F_BUDGET] && (L->profile || L->set[F_MEMORY]))
    out->budget_bytes = out->device.memory_bytes;

  if (out->budget_bytes > out->device.memory_bytes) {
    field_id_t at = L->set[F_BUDGET] ? F_BUDGET : L->set[F_MEMORY] ? F_MEMORY : F_PROFILE;
    return FAIL(L, L->value_mark[at], "device.budget", "%s is larger than the device memory (%s)",
                sfc_format_size_exact(out->budget_bytes, a, sizeof a),
                sfc_format_size_exact(out->device.memory_bytes, b, sizeof b));
  }
  if (out->device.alignment == 0 || out->device.va_chunk_bytes % out->device.alignment != 0) {
    field_id_t at = L->set[F_VA_CHUNK] ? F_VA_CHUNK : F_ALIGNMENT;
    return FAIL(L, L->value_mark[at], at == F_VA_CHUNK ? "device.va_chunk" : "device.alignment",
                "%s is not a multiple of the alignment (%s)",
                sfc_format_size_exact(out->device.va_chunk_bytes, a, sizeof a),
                sfc_format_size_exact(out->device.alignment, b, sizeof b));
  }
  if (out->arena.page_bytes % out->device.alignment != 0) {
    field_id_t at = L->set[F_PAGE] ? F_PAGE : F_ALIGNMENT;
    return FAIL(L, L->value_mark[at], at == F_PAGE ? "device.page" : "device.alignment",
                "the page %s is not a multiple of the alignment (%s)",
                sfc_format_size_exact(out->arena.page_bytes, a, sizeof a),
                sfc_format_size_exact(out->device.alignment, b, sizeof b));
  }
  uint64_t tiles = (uint64_t)out->tiling.grid[0] * out->tiling.grid[1];
  if (tiles > out->tiling.max_tiles) {
    field_id_t at = L->set[F_GRID] ? F_GRID : F_MAX_TILES;
    return FAIL(L, L->value_mark[at], at == F_GRID ? "tiling.grid" : "tiling.max_tiles",
                "%ux%u is %" PRIu64 " tiles, more than tiling.max_tiles (%u)",
                (unsigned)out->tiling.grid[0], (unsigned)out->tiling.grid[1], tiles,
                (unsigned)out->tiling.max_tiles);
  }
  snprintf(out->source, sizeof out->source, "%s", L->file);
  return SFC_OK;
}

/* ---- entry points ---------------------------------------------------------------- */

sfc_status_t sfc_config_load_buffer(const char *data, size_t bytes, const char *filename,
                                    sfc_config_t *cfg, sfc_error_t *err) {
  if (!cfg || (!data && bytes))
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "sfc_config_load_buffer: no config");
  const char *file = filename && *filename ? filename : "(config)";
  if (bytes > MAX_CONFIG_BYTES)
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "%s:1:1: config: %zu bytes; a config file is at most %zu", file, bytes,
                         MAX_CONFIG_BYTES);
  loader_t *L = calloc(1, sizeof *L);
  if (!L)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", file);
  L->file = file;
  L->data = (const unsigned char *)(data ? data : "");
  L->bytes = bytes;
  L->err = err;
  L->staged = *cfg;
  sfc_status_t status = SFC_ERR_OUT_OF_MEMORY;
  if (!yaml_parser_initialize(&L->parser)) {
    sfc_error_set(err, status, "%s: out of memory", file);
    free(L);
    return status;
  }
  yaml_parser_set_input_string(&L->parser, L->data, bytes);
  status = read_stream(L);
  sfc_config_t out;
  if (status == SFC_OK)
    status = merge(L, cfg, &out);
  if (status == SFC_OK) {
    *cfg = out;
    sfc_error_clear(err);
  }
  if (L->have_event)
    yaml_event_delete(&L->event);
  yaml_parser_delete(&L->parser);
  free(L);
  return status;
}

sfc_status_t sfc_config_load_file(const char *path, sfc_config_t *cfg, sfc_error_t *err) {
  if (!path || !cfg)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "sfc_config_load_file: no path");
  FILE *f = fopen(path, "rb");
  if (!f)
    return sfc_error_set(err, SFC_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
  char *buf = malloc(MAX_CONFIG_BYTES + 1);
  if (!buf) {
    fclose(f);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "%s: out of memory", path);
  }
  size_t n = fread(buf, 1, MAX_CONFIG_BYTES + 1, f);
  bool failed = ferror(f) != 0;
  int saved = errno;
  fclose(f);
  sfc_status_t status;
  if (failed)
    status = sfc_error_set(err, SFC_ERR_IO, "%s: cannot read: %s", path, strerror(saved));
  else
    status = sfc_config_load_buffer(buf, n, path, cfg, err);
  free(buf);
  return status;
}
