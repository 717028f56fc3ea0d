/* plan_reader.c — load a plan file: structure checks, then copy records into native arrays.
 *
 * The file is untrusted. Loading runs in four stages, each reporting the first
 * problem it finds as one line naming the field:
 *   1. header: size, magic (telling text-mode damage from a foreign file), major
 *      version, endianness and float checks, header_bytes, header CRC-32, file size;
 *   2. section table: entry size, bounds, CRC-32;
 *   3. sections: known kinds at most once, 64-byte aligned offset, bounds (all
 *      arithmetic in uint64_t after checking each term), bytes == count * entry_bytes,
 *      counts below SFC_PLAN_MAX_*, no overlap with the header, table or each
 *      other, CRC-32; required kinds present; META holds exactly one record;
 *   4. copy: one allocation (through the caller's allocator) holds the string blob
 *      and one native array per known section. A record shorter than the native
 *      struct (older minor) is zero-filled, a longer one (newer minor) truncated.
 * Then plan_validate.c checks references and semantics on the native view.
 * Nothing here prints, exits or aborts; every failure frees what was allocated.
 */
#include "sfc/plan_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

struct sfcrt_plan {
  sfc_allocator_t alloc;
  sfc_plan_view_t view;
  void *data; /* [data_bytes]: strings and every record array */
  size_t data_bytes;
};

#define KIND_MAX SFC_SECTION_KIND_MAX

static const char *const section_names[KIND_MAX + 1] = {
    NULL,          "STRINGS", "META",          "TENSORS", "OPS",  "OP_OPERANDS", "BLOCKS",
    "HOST_BLOCKS", "STEPS",   "STEP_OPERANDS", "SWAPS",   "DEPS", "SEGMENTS",    "BOXES"};

/* Native record size of each known kind. */
static const size_t native_bytes[KIND_MAX + 1] = {0,
                                                  1,
                                                  sizeof(sfc_plan_meta_t),
                                                  sizeof(sfc_plan_tensor_t),
                                                  sizeof(sfc_plan_op_t),
                                                  sizeof(uint32_t),
                                                  sizeof(sfc_plan_block_t),
                                                  sizeof(sfc_plan_block_t),
                                                  sizeof(sfc_plan_step_t),
                                                  sizeof(uint32_t),
                                                  sizeof(sfc_plan_swap_t),
                                                  sizeof(sfc_plan_dep_t),
                                                  sizeof(sfc_plan_segment_t),
                                                  sizeof(sfc_plan_box_t)};

static const int required[] = {SFC_SECTION_STRINGS, SFC_SECTION_META,         SFC_SECTION_TENSORS,
                               SFC_SECTION_OPS,     SFC_SECTION_OP_OPERANDS,  SFC_SECTION_BLOCKS,
                               SFC_SECTION_STEPS,   SFC_SECTION_STEP_OPERANDS};

typedef struct reader {
  const uint8_t *data;
  size_t size;
  sfc_plan_header_t h;
  uint64_t table_end;
  sfc_plan_section_t sec[KIND_MAX + 1]; /* the table entry of each known kind */
  int present[KIND_MAX + 1];            /* table index + 1, 0 when absent */
} reader_t;

/* Stage 1a: the magic, with a precise word for the usual ways a binary gets damaged. */
static sfc_status_t check_magic(const uint8_t *d, sfc_error_t *err) {
  const uint8_t *m = (const uint8_t *)SFC_PLAN_MAGIC;
  if (memcmp(d, m, SFC_PLAN_MAGIC_BYTES) == 0)
    return SFC_OK;
  if (memcmp(d, "\x89SFC\n\x1a\n", 7) == 0 || memcmp(d, "\x89SFC\r\r\n\x1a", 8) == 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "bad magic: the file was damaged by a text-mode (CRLF/LF) conversion");
  if (d[0] == 0x09 && memcmp(d + 1, m + 1, SFC_PLAN_MAGIC_BYTES - 1) == 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "bad magic: the file went through a 7-bit channel (high bit stripped)");
  return sfc_error_set(err, SFC_ERR_BAD_INPUT, "bad magic: not an sfc plan file");
}

/* Stage 1: the header, up to the file size check. */
static sfc_status_t check_header(reader_t *r, sfc_error_t *err) {
  sfc_plan_header_t *h = &r->h;
  if (r->size < sizeof *h)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "truncated: %zu bytes, a plan header needs %zu",
                         r->size, sizeof *h);
  memcpy(h, r->data, sizeof *h);
  SFC_TRY(check_magic(r->data, err));
  if (h->version_major != SFC_PLAN_VERSION_MAJOR)
    return sfc_error_set(err, SFC_ERR_VERSION,
                         "unsupported plan version %u.%u (this reader reads major version %d)",
                         h->version_major, h->version_minor, SFC_PLAN_VERSION_MAJOR);
  if (h->endian_check != SFC_PLAN_ENDIAN_CHECK) {
    int swapped = h->endian_check == UINT64_C(0x0807060504030201);
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "header: endian_check 0x%016" PRIx64 ", expected 0x%016" PRIx64 "%s",
                         h->endian_check, SFC_PLAN_ENDIAN_CHECK,
                         swapped ? " (the file has the other byte order)" : "");
  }
  if (h->float_check != SFC_PLAN_FLOAT_CHECK)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "header: float_check %.17g, expected %.17g",
                         h->float_check, SFC_PLAN_FLOAT_CHECK);
  if (h->header_bytes < sizeof *h)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "header: header_bytes %u, expected at least %zu",
                         h->header_bytes, sizeof *h);
  if (h->header_bytes > SFC_PLAN_MAX_RECORD_BYTES)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "header: header_bytes %u exceeds the limit %u",
                         h->header_bytes, SFC_PLAN_MAX_RECORD_BYTES);
  if (h->header_bytes > r->size)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "truncated: %zu bytes, the header alone needs %u",
                         r->size, h->header_bytes);
  uint32_t crc = sfc_crc32(0, r->data, offsetof(sfc_plan_header_t, header_crc32));
  if (crc != h->header_crc32)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "header: CRC-32 mismatch (stored 0x%08" PRIx32 ", computed 0x%08" PRIx32
                         ")",
                         h->header_crc32, crc);
  if (h->file_bytes > r->size)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "truncated: %zu bytes, the header says %" PRIu64,
                         r->size, h->file_bytes);
  if (h->file_bytes < r->size)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "trailing bytes: %zu bytes, the header says %" PRIu64, r->size,
                         h->file_bytes);
  return SFC_OK;
}

/* Stage 2: the section table. file_bytes == size from here on. */
static sfc_status_t check_table(reader_t *r, sfc_error_t *err) {
  const sfc_plan_header_t *h = &r->h;
  if (h->section_count > SFC_PLAN_MAX_SECTIONS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "header: section_count %u exceeds the limit %u",
                         h->section_count, SFC_PLAN_MAX_SECTIONS);
  if (h->section_entry_bytes < sizeof(sfc_plan_section_t) ||
      h->section_entry_bytes > SFC_PLAN_MAX_RECORD_BYTES)
    return sfc_error_set(
        err, SFC_ERR_BAD_INPUT, "header: section_entry_bytes %u out of range [%zu, %u]",
        h->section_entry_bytes, sizeof(sfc_plan_section_t), SFC_PLAN_MAX_RECORD_BYTES);
  if (h->section_table_offset % 8 != 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "header: section_table_offset %" PRIu64 " is not a multiple of 8",
                         h->section_table_offset);
  if (h->section_table_offset < h->header_bytes)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "header: section_table_offset %" PRIu64 " is inside the header (%u bytes)",
                         h->section_table_offset, h->header_bytes);
  uint64_t table_bytes = (uint64_t)h->section_count * h->section_entry_bytes; /* <= 2^18 */
  if (h->section_table_offset > h->file_bytes)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "header: section_table_offset %" PRIu64
                         " is past the end of the file (%" PRIu64 " bytes)",
                         h->section_table_offset, h->file_bytes);
  if (table_bytes > h->file_bytes - h->section_table_offset)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section table: bytes [%" PRIu64 ", %" PRIu64
                         ") extend past the end of the file (%" PRIu64 " bytes)",
                         h->section_table_offset, h->section_table_offset + table_bytes,
                         h->file_bytes);
  r->table_end = h->section_table_offset + table_bytes;
  uint32_t crc = sfc_crc32(0, r->data + h->section_table_offset, (size_t)table_bytes);
  if (crc != h->section_table_crc32)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section table: CRC-32 mismatch (stored 0x%08" PRIx32
                         ", computed 0x%08" PRIx32 ")",
                         h->section_table_crc32, crc);
  return SFC_OK;
}

/* Stage 3, one table entry: e is table entry i; earlier entries are in ents[0..i). */
static sfc_status_t check_section(reader_t *r, const sfc_plan_section_t *ents, uint32_t i,
                                  sfc_error_t *err) {
  const sfc_plan_section_t *e = &ents[i];
  char unknown[24];
  const char *name = e->kind >= 1 && e->kind <= KIND_MAX ? section_names[e->kind] : NULL;
  if (!name) {
    snprintf(unknown, sizeof unknown, "%" PRIu32, e->kind);
    name = unknown;
  } else if (r->present[e->kind]) {
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: appears twice (table entries %d and %" PRIu32 ")", name,
                         r->present[e->kind] - 1, i);
  }
  int strings = e->kind == SFC_SECTION_STRINGS;
  if (strings && e->entry_bytes != 1)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "section %s: entry_bytes %" PRIu32 ", expected 1",
                         name, e->entry_bytes);
  if (e->entry_bytes < 1 || e->entry_bytes > SFC_PLAN_MAX_RECORD_BYTES)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: entry_bytes %" PRIu32 " out of range [1, %u]", name,
                         e->entry_bytes, SFC_PLAN_MAX_RECORD_BYTES);
  uint64_t limit = strings ? SFC_PLAN_MAX_STRINGS_BYTES : SFC_PLAN_MAX_RECORDS;
  if (e->count > limit)
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "section %s: count %" PRIu32 " exceeds the limit %" PRIu64, name, e->count,
                         limit);
  if (e->bytes != (uint64_t)e->count * e->entry_bytes)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: bytes %" PRIu64 " != count %" PRIu32
                         " * entry_bytes %" PRIu32,
                         name, e->bytes, e->count, e->entry_bytes);
  if (e->offset % SFC_PLAN_SECTION_ALIGN != 0)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: offset %" PRIu64 " is not a multiple of %d", name, e->offset,
                         SFC_PLAN_SECTION_ALIGN);
  uint64_t size = r->h.file_bytes;
  if (e->offset > size)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: offset %" PRIu64 " is past the end of the file (%" PRIu64
                         " bytes)",
                         name, e->offset, size);
  if (e->bytes > size - e->offset)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: bytes [%" PRIu64 ", %" PRIu64
                         ") extend past the end of the file (%" PRIu64 " bytes)",
                         name, e->offset, e->offset + e->bytes, size);
  uint64_t lo = e->offset, hi = e->offset + e->bytes;
  if (lo < hi && (lo < r->h.header_bytes || (lo < r->table_end && hi > r->h.section_table_offset)))
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: bytes [%" PRIu64 ", %" PRIu64
                         ") overlap the header or the section table",
                         name, lo, hi);
  for (uint32_t j = 0; j < i && lo < hi; j++) {
    uint64_t jlo = ents[j].offset, jhi = ents[j].offset + ents[j].bytes;
    if (lo < jhi && jlo < hi)
      return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                           "section %s: bytes [%" PRIu64 ", %" PRIu64
                           ") overlap table entry %" PRIu32 " [%" PRIu64 ", %" PRIu64 ")",
                           name, lo, hi, j, jlo, jhi);
  }
  uint32_t crc = sfc_crc32(0, r->data + e->offset, (size_t)e->bytes);
  if (crc != e->crc32)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "section %s: CRC-32 mismatch (stored 0x%08" PRIx32
                         ", computed 0x%08" PRIx32 ")",
                         name, e->crc32, crc);
  if (e->kind >= 1 && e->kind <= KIND_MAX) {
    r->sec[e->kind] = *e;
    r->present[e->kind] = (int)i + 1;
  }
  return SFC_OK;
}

/* Stage 3: every table entry, then the required kinds. */
static sfc_status_t check_sections(reader_t *r, sfc_error_t *err) {
  sfc_plan_section_t ents[SFC_PLAN_MAX_SECTIONS];
  for (uint32_t i = 0; i < r->h.section_count; i++) {
    memcpy(&ents[i], r->data + r->h.section_table_offset + (uint64_t)i * r->h.section_entry_bytes,
           sizeof ents[i]);
    SFC_TRY(check_section(r, ents, i, err));
  }
  for (size_t i = 0; i < sizeof required / sizeof required[0]; i++)
    if (!r->present[required[i]])
      return sfc_error_set(err, SFC_ERR_BAD_INPUT, "missing section %s",
                           section_names[required[i]]);
  if (r->sec[SFC_SECTION_META].count != 1)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT, "section META: count %" PRIu32 ", expected 1",
                         r->sec[SFC_SECTION_META].count);
  return SFC_OK;
}

static size_t align8(size_t x) {
  return (x + 7) & ~(size_t)7;
}

/* Stage 4: one allocation for every array, records copied with zero-fill/truncation. */
static sfc_status_t copy_sections(const reader_t *r, sfcrt_plan_t *p, sfc_error_t *err) {
  size_t at[KIND_MAX + 1] = {0}, total = 0;
  for (int k = 1; k <= KIND_MAX; k++) {
    if (k == SFC_SECTION_META)
      continue;
    uint64_t bytes = (uint64_t)r->sec[k].count * native_bytes[k]; /* <= 2^30 * 112 */
    if (bytes > SIZE_MAX - 8 - total)
      return sfc_error_set(err, SFC_ERR_LIMIT, "plan too large for this machine's address space");
    at[k] = total;
    total = align8(total + (size_t)bytes);
  }
  uint8_t *mem = total ? sfc_calloc(&p->alloc, 1, total) : NULL;
  if (total && !mem)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes for the plan)",
                         total);
  p->data = mem;
  p->data_bytes = total;
  for (int k = 1; k <= KIND_MAX; k++) {
    const sfc_plan_section_t *e = &r->sec[k];
    uint8_t *dst = k == SFC_SECTION_META ? (uint8_t *)&p->view.meta : mem + at[k];
    const uint8_t *src = r->data + e->offset;
    size_t n = e->entry_bytes < native_bytes[k] ? e->entry_bytes : native_bytes[k];
    if (e->entry_bytes == native_bytes[k] && e->count)
      memcpy(dst, src, (size_t)e->bytes);
    else
      for (uint32_t i = 0; i < e->count; i++)
        memcpy(dst + (size_t)i * native_bytes[k], src + (size_t)i * e->entry_bytes, n);
  }
  sfc_plan_view_t *v = &p->view;
  v->header = r->h;
  /* An empty section gets a pointer too (one past the previous array: never read), so
   * replay may compute `array + begin` for an empty range without touching NULL. */
#define SET(field, kind, type) (v->field = mem ? (const type *)(mem + at[kind]) : NULL)
  const sfc_plan_section_t *e = r->sec;
  SET(strings, SFC_SECTION_STRINGS, char);
  v->strings_bytes = e[SFC_SECTION_STRINGS].count;
  SET(tensors, SFC_SECTION_TENSORS, sfc_plan_tensor_t);
  SET(ops, SFC_SECTION_OPS, sfc_plan_op_t);
  SET(op_operands, SFC_SECTION_OP_OPERANDS, uint32_t);
  SET(blocks, SFC_SECTION_BLOCKS, sfc_plan_block_t);
  SET(host_blocks, SFC_SECTION_HOST_BLOCKS, sfc_plan_block_t);
  SET(steps, SFC_SECTION_STEPS, sfc_plan_step_t);
  SET(step_operands, SFC_SECTION_STEP_OPERANDS, uint32_t);
  SET(swaps, SFC_SECTION_SWAPS, sfc_plan_swap_t);
  SET(deps, SFC_SECTION_DEPS, sfc_plan_dep_t);
  SET(segments, SFC_SECTION_SEGMENTS, sfc_plan_segment_t);
  SET(boxes, SFC_SECTION_BOXES, sfc_plan_box_t);
#undef SET
  v->tensor_count = e[SFC_SECTION_TENSORS].count;
  v->op_count = e[SFC_SECTION_OPS].count;
  v->op_operand_count = e[SFC_SECTION_OP_OPERANDS].count;
  v->block_count = e[SFC_SECTION_BLOCKS].count;
  v->host_block_count = e[SFC_SECTION_HOST_BLOCKS].count;
  v->step_count = e[SFC_SECTION_STEPS].count;
  v->step_operand_count = e[SFC_SECTION_STEP_OPERANDS].count;
  v->swap_count = e[SFC_SECTION_SWAPS].count;
  v->dep_count = e[SFC_SECTION_DEPS].count;
  v->segment_count = e[SFC_SECTION_SEGMENTS].count;
  v->box_count = e[SFC_SECTION_BOXES].count;
  return SFC_OK;
}

sfc_status_t sfcrt_plan_load_buffer(const void *data, size_t bytes, const sfc_allocator_t *alloc,
                                    sfcrt_plan_t **out_plan, sfc_error_t *err) {
  if (!out_plan)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: out_plan is NULL");
  *out_plan = NULL;
  if (!data && bytes)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: data is NULL");
  if (bytes > SFC_PLAN_MAX_FILE_BYTES)
    return sfc_error_set(err, SFC_ERR_LIMIT, "%zu bytes exceeds the plan size limit %" PRIu64,
                         bytes, SFC_PLAN_MAX_FILE_BYTES);
  if (!alloc)
    alloc = sfc_allocator_default();
  reader_t r;
  memset(&r, 0, sizeof r);
  r.data = data;
  r.size = bytes;
  SFC_TRY(check_header(&r, err));
  SFC_TRY(check_table(&r, err));
  SFC_TRY(check_sections(&r, err));

  sfcrt_plan_t *p = sfc_alloc(alloc, sizeof *p);
  if (!p)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory (plan object)");
  memset(p, 0, sizeof *p);
  p->alloc = *alloc;
  sfc_status_t s = copy_sections(&r, p, err);
  if (s == SFC_OK)
    s = sfcrt_plan_validate(&p->view, alloc, err);
  if (s != SFC_OK) {
    sfcrt_plan_destroy(p);
    return s;
  }
  *out_plan = p;
  return SFC_OK;
}

/* Reads the whole file into an allocator block, at most SFC_PLAN_MAX_FILE_BYTES. */
static sfc_status_t read_file(const char *path, const sfc_allocator_t *a, uint8_t **out_buf,
                              size_t *out_cap, size_t *out_len, sfc_error_t *err) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return sfc_error_set(err, SFC_ERR_IO, "cannot open: %s", strerror(errno));
  struct stat st;
  size_t cap = 1 << 16;
  if (fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= 0) {
    if ((uint64_t)st.st_size > SFC_PLAN_MAX_FILE_BYTES) {
      fclose(f);
      return sfc_error_set(err, SFC_ERR_LIMIT,
                           "%" PRIu64 " bytes exceeds the plan size limit %" PRIu64,
                           (uint64_t)st.st_size, SFC_PLAN_MAX_FILE_BYTES);
    }
    cap = (size_t)st.st_size + 1; /* +1 sees EOF without growing */
  }
  uint8_t *buf = NULL;
  size_t len = 0;
  sfc_status_t s = SFC_OK;
  for (;;) {
    if (!buf || len == cap) {
      size_t ncap = buf ? cap * 2 : cap;
      if (buf && (cap > SFC_PLAN_MAX_FILE_BYTES || ncap < cap)) {
        s = sfc_error_set(err, SFC_ERR_LIMIT, "file exceeds the plan size limit %" PRIu64,
                          SFC_PLAN_MAX_FILE_BYTES);
        break;
      }
      uint8_t *nb = a->fn(a->user, buf, buf ? cap : 0, ncap);
      if (!nb) {
        s = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory (%zu bytes to read the file)",
                          ncap);
        break;
      }
      buf = nb;
      cap = ncap;
    }
    size_t got = fread(buf + len, 1, cap - len, f);
    len += got;
    if (got == 0) {
      if (ferror(f))
        s = sfc_error_set(err, SFC_ERR_IO, "read failed: %s", strerror(errno));
      break;
    }
  }
  fclose(f);
  if (s != SFC_OK) {
    if (buf)
      a->fn(a->user, buf, cap, 0);
    return s;
  }
  *out_buf = buf;
  *out_cap = cap;
  *out_len = len;
  return SFC_OK;
}

sfc_status_t sfcrt_plan_load_file(const char *path, const sfc_allocator_t *alloc,
                                  sfcrt_plan_t **out_plan, sfc_error_t *err) {
  if (out_plan)
    *out_plan = NULL;
  if (!path || !out_plan)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: NULL path or out_plan");
  if (!alloc)
    alloc = sfc_allocator_default();
  uint8_t *buf = NULL;
  size_t cap = 0, len = 0;
  sfc_status_t s = read_file(path, alloc, &buf, &cap, &len, err);
  if (s == SFC_OK) {
    s = sfcrt_plan_load_buffer(buf, len, alloc, out_plan, err);
    alloc->fn(alloc->user, buf, cap, 0);
  }
  if (s != SFC_OK)
    sfc_error_prefix(err, path);
  return s;
}

sfc_status_t sfcrt_plan_wrap_view(const sfc_plan_view_t *view, const sfc_allocator_t *alloc,
                                  sfcrt_plan_t **out_plan, sfc_error_t *err) {
  if (!out_plan)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: out_plan is NULL");
  *out_plan = NULL;
  if (!view)
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: view is NULL");
  if (!alloc)
    alloc = sfc_allocator_default();
  sfcrt_plan_t *p = sfc_alloc(alloc, sizeof *p);
  if (!p)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "out of memory (plan object)");
  memset(p, 0, sizeof *p);
  p->alloc = *alloc;
  p->view = *view;
  /* as a load gives: a pointer for every empty array (replay may compute array + 0) */
  static const uint64_t empty[4];
  sfc_plan_view_t *v = &p->view;
  const char *missing = NULL; /* an array NULL with records: refused, never read */
#define EMPTY(field, count, type)                                                                  \
  if (!v->field && v->count)                                                                       \
    missing = missing ? missing : #field;                                                          \
  else if (!v->field)                                                                              \
    v->field = (const type *)(const void *)empty;
  EMPTY(tensors, tensor_count, sfc_plan_tensor_t)
  EMPTY(ops, op_count, sfc_plan_op_t)
  EMPTY(op_operands, op_operand_count, uint32_t)
  EMPTY(blocks, block_count, sfc_plan_block_t)
  EMPTY(host_blocks, host_block_count, sfc_plan_block_t)
  EMPTY(steps, step_count, sfc_plan_step_t)
  EMPTY(step_operands, step_operand_count, uint32_t)
  EMPTY(swaps, swap_count, sfc_plan_swap_t)
  EMPTY(deps, dep_count, sfc_plan_dep_t)
  EMPTY(segments, segment_count, sfc_plan_segment_t)
  EMPTY(boxes, box_count, sfc_plan_box_t)
#undef EMPTY
  if (missing) {
    sfcrt_plan_destroy(p);
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT, "plan reader: view.%s is NULL with records",
                         missing);
  }
  if (v->strings_bytes == 0) { /* a written plan's string table holds "" at least */
    v->strings = "";
    v->strings_bytes = 1;
  }
  const uint32_t counts[] = {v->tensor_count,       v->op_count,         v->op_operand_count,
                             v->block_count,        v->host_block_count, v->step_count,
                             v->step_operand_count, v->swap_count,       v->dep_count,
                             v->segment_count,      v->box_count};
  sfc_status_t s = SFC_OK;
  for (size_t i = 0; i < sizeof counts / sizeof counts[0] && s == SFC_OK; i++)
    if (counts[i] > SFC_PLAN_MAX_RECORDS)
      s = sfc_error_set(err, SFC_ERR_LIMIT, "plan reader: %u records exceed the limit %llu",
                        counts[i], (unsigned long long)SFC_PLAN_MAX_RECORDS);
  if (s == SFC_OK && (v->strings_bytes > SFC_PLAN_MAX_STRINGS_BYTES || !v->strings))
    s = sfc_error_set(err, SFC_ERR_LIMIT, "plan reader: string table missing or over its limit");
  if (s == SFC_OK)
    s = sfcrt_plan_validate(v, alloc, err);
  if (s != SFC_OK) {
    sfcrt_plan_destroy(p);
    return s;
  }
  *out_plan = p;
  return SFC_OK;
}

const sfc_plan_view_t *sfcrt_plan_view(const sfcrt_plan_t *plan) {
  return plan ? &plan->view : NULL;
}

void sfcrt_plan_destroy(sfcrt_plan_t *plan) {
  if (!plan)
    return;
  sfc_allocator_t a = plan->alloc;
  sfc_free(&a, plan->data, plan->data_bytes);
  sfc_free(&a, plan, sizeof *plan);
}
