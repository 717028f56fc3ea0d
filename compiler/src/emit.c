/* emit.c — the plan writer: serialise an sfc_plan_view_t into plan file format v1.
 *
 * Layout (sfc/plan_format.h, docs/plan-format.md): the 128-byte header, the section
 * table right after it (one 32-byte entry per section kind, all 13 kinds, in kind
 * order, empty ones with count 0), then each section's records at the next 64-byte
 * aligned offset. The file is padded with zeros to a multiple of 64 bytes, so every
 * section offset, even an empty one's, lies inside the file. The buffer starts
 * zeroed and every field is written explicitly, so the same view always gives the
 * same bytes.
 *
 * The writer checks only what it needs to lay the file out (pointers present for
 * non-empty arrays, counts within the reader's limits, a string table that starts
 * with the NUL of ""); everything else is the reader's job, so tests can write
 * deliberately broken plans. Records are copied as native structs: the format is
 * little-endian and the writer refuses to run on a big-endian host.
 */
#include "emit.h"

#include "outfile.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* One section as the writer sees it: where its records are and how many. */
typedef struct emit_section {
  const void *data;
  uint64_t count;
  uint32_t entry_bytes;
} emit_section_t;

static const char *const section_names[SFC_SECTION_KIND_MAX + 1] = {
    "?",           "STRINGS", "META",          "TENSORS", "OPS",  "OP_OPERANDS", "BLOCKS",
    "HOST_BLOCKS", "STEPS",   "STEP_OPERANDS", "SWAPS",   "DEPS", "SEGMENTS",    "BOXES"};

static uint64_t align_up(uint64_t x) {
  return (x + (SFC_PLAN_SECTION_ALIGN - 1)) & ~(uint64_t)(SFC_PLAN_SECTION_ALIGN - 1);
}

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  uint8_t first;
  memcpy(&first, &one, 1);
  return first == 1;
}

/* Fills sec[1..13] from the view; checks pointers and the reader's limits. */
static sfc_status_t collect_sections(const sfc_plan_view_t *v, emit_section_t *sec,
                                     sfc_error_t *err) {
  static const char empty_strings[1] = {0};
  if (v->strings_bytes == 0) {
    sec[SFC_SECTION_STRINGS] = (emit_section_t){empty_strings, 1, 1};
  } else {
    if (!v->strings)
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "plan writer: strings is NULL but strings_bytes is %llu",
                           (unsigned long long)v->strings_bytes);
    if (v->strings[0] != '\0')
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "plan writer: the string table must start with the NUL of \"\"");
    sec[SFC_SECTION_STRINGS] = (emit_section_t){v->strings, v->strings_bytes, 1};
  }
  sec[SFC_SECTION_META] = (emit_section_t){&v->meta, 1, sizeof v->meta};
  sec[SFC_SECTION_TENSORS] = (emit_section_t){v->tensors, v->tensor_count, sizeof *v->tensors};
  sec[SFC_SECTION_OPS] = (emit_section_t){v->ops, v->op_count, sizeof *v->ops};
  sec[SFC_SECTION_OP_OPERANDS] =
      (emit_section_t){v->op_operands, v->op_operand_count, sizeof *v->op_operands};
  sec[SFC_SECTION_BLOCKS] = (emit_section_t){v->blocks, v->block_count, sizeof *v->blocks};
  sec[SFC_SECTION_HOST_BLOCKS] =
      (emit_section_t){v->host_blocks, v->host_block_count, sizeof *v->host_blocks};
  sec[SFC_SECTION_STEPS] = (emit_section_t){v->steps, v->step_count, sizeof *v->steps};
  sec[SFC_SECTION_STEP_OPERANDS] =
      (emit_section_t){v->step_operands, v->step_operand_count, sizeof *v->step_operands};
  sec[SFC_SECTION_SWAPS] = (emit_section_t){v->swaps, v->swap_count, sizeof *v->swaps};
  sec[SFC_SECTION_DEPS] = (emit_section_t){v->deps, v->dep_count, sizeof *v->deps};
  sec[SFC_SECTION_SEGMENTS] = (emit_section_t){v->segments, v->segment_count, sizeof *v->segments};
  sec[SFC_SECTION_BOXES] = (emit_section_t){v->boxes, v->box_count, sizeof *v->boxes};

  for (int k = 1; k <= SFC_SECTION_KIND_MAX; k++) {
    if (sec[k].count > 0 && !sec[k].data)
      return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                           "plan writer: section %s has %llu records but no data", section_names[k],
                           (unsigned long long)sec[k].count);
    uint64_t limit = k == SFC_SECTION_STRINGS ? SFC_PLAN_MAX_STRINGS_BYTES : SFC_PLAN_MAX_RECORDS;
    if (sec[k].count > limit)
      return sfc_error_set(
          err, SFC_ERR_LIMIT, "plan writer: section %s has %llu records, the limit is %llu",
          section_names[k], (unsigned long long)sec[k].count, (unsigned long long)limit);
  }
  return SFC_OK;
}

sfc_status_t sfc_plan_write_buffer(const sfc_plan_view_t *view, void **out_data, size_t *out_bytes,
                                   sfc_error_t *err) {
  if (!view || !out_data || !out_bytes)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan writer: NULL argument");
  if (!host_is_little_endian())
    return sfc_error_set(err, SFC_ERR_INTERNAL,
                         "plan writer: big-endian hosts are not supported (the format is "
                         "little-endian)");
  emit_section_t sec[SFC_SECTION_KIND_MAX + 1];
  SFC_TRY(collect_sections(view, sec, err));

  /* Lay out: header, table, then sections. Counts are below 2^30 and records below
   * 2^7 bytes, so no sum below can wrap a uint64_t; the total is checked against the
   * reader's file limit and SIZE_MAX before it sizes the buffer. */
  sfc_plan_section_t table[SFC_SECTION_KIND_MAX];
  uint64_t cursor = sizeof(sfc_plan_header_t) + sizeof table;
  for (int k = 1; k <= SFC_SECTION_KIND_MAX; k++) {
    cursor = align_up(cursor);
    sfc_plan_section_t *e = &table[k - 1];
    *e = (sfc_plan_section_t){0};
    e->kind = (uint32_t)k;
    e->entry_bytes = sec[k].entry_bytes;
    e->offset = cursor;
    e->bytes = sec[k].count * sec[k].entry_bytes;
    e->count = (uint32_t)sec[k].count;
    cursor += e->bytes;
  }
  uint64_t file_bytes = align_up(cursor);
  if (file_bytes > SFC_PLAN_MAX_FILE_BYTES || file_bytes > SIZE_MAX)
    return sfc_error_set(
        err, SFC_ERR_LIMIT, "plan writer: the plan needs %llu bytes, the limit is %llu",
        (unsigned long long)file_bytes, (unsigned long long)SFC_PLAN_MAX_FILE_BYTES);

  uint8_t *buf = calloc(1, (size_t)file_bytes);
  if (!buf)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "plan writer: out of memory (%llu bytes)",
                         (unsigned long long)file_bytes);
  for (int k = 1; k <= SFC_SECTION_KIND_MAX; k++) {
    sfc_plan_section_t *e = &table[k - 1];
    if (e->bytes)
      memcpy(buf + e->offset, sec[k].data, (size_t)e->bytes);
    e->crc32 = sfc_crc32(0, buf + e->offset, (size_t)e->bytes);
  }
  memcpy(buf + sizeof(sfc_plan_header_t), table, sizeof table);

  sfc_plan_header_t h;
  memset(&h, 0, sizeof h);
  memcpy(h.magic, SFC_PLAN_MAGIC, SFC_PLAN_MAGIC_BYTES);
  h.version_major = SFC_PLAN_VERSION_MAJOR;
  h.version_minor = SFC_PLAN_VERSION_MINOR;
  h.header_bytes = sizeof h;
  h.endian_check = SFC_PLAN_ENDIAN_CHECK;
  h.float_check = SFC_PLAN_FLOAT_CHECK;
  h.file_bytes = file_bytes;
  h.section_table_offset = sizeof h;
  h.section_count = SFC_SECTION_KIND_MAX;
  h.section_entry_bytes = sizeof(sfc_plan_section_t);
  h.section_table_crc32 = sfc_crc32(0, table, sizeof table);
  h.alignment = view->header.alignment;
  h.arena_bytes = view->header.arena_bytes;
  h.host_arena_bytes = view->header.host_arena_bytes;
  h.budget_bytes = view->header.budget_bytes;
  h.host_budget_bytes = view->header.host_budget_bytes;
  h.flags = view->header.flags;
  h.header_crc32 = sfc_crc32(0, &h, offsetof(sfc_plan_header_t, header_crc32));
  memcpy(buf, &h, sizeof h);

  *out_data = buf;
  *out_bytes = (size_t)file_bytes;
  return SFC_OK;
}

sfc_status_t sfc_plan_write_file(const sfc_plan_view_t *view, const char *path, sfc_error_t *err) {
  if (!path || !*path)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan writer: empty output path");
  void *data = NULL;
  size_t bytes = 0;
  SFC_TRY(sfc_plan_write_buffer(view, &data, &bytes, err));
  sfc_status_t s = sfc_outfile_write(path, data, bytes, err); /* never a partial plan */
  free(data);
  return s;
}
