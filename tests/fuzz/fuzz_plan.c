/* fuzz_plan.c — fuzz target for the plan reader/validator (sfcrt_plan_load_buffer).
 *
 * Pass 1 loads the input as is. Random bytes almost never get past the CRC-32
 * checks, so pass 2 (inputs at least a header long) recomputes, on a copy, every
 * section CRC the table can reach, the table CRC and the header CRC, then loads
 * again: the mutations land in the section table and the records, and reach the
 * reference and semantic checks behind the checksums. Must never crash, leak or
 * trip a sanitizer; the status is irrelevant.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sfc/plan_reader.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void load(const uint8_t *data, size_t size) {
  sfcrt_plan_t *plan = NULL;
  sfc_error_t err;
  if (sfcrt_plan_load_buffer(data, size, NULL, &plan, &err) == SFC_OK)
    sfcrt_plan_destroy(plan);
}

/* Same rules as the reader's bounds checks, so only reachable ranges are summed. */
static void fix_crcs(uint8_t *d, size_t size) {
  sfc_plan_header_t h;
  memcpy(&h, d, sizeof h);
  uint64_t table = (uint64_t)h.section_count * h.section_entry_bytes;
  if (h.section_count <= SFC_PLAN_MAX_SECTIONS &&
      h.section_entry_bytes >= sizeof(sfc_plan_section_t) &&
      h.section_entry_bytes <= SFC_PLAN_MAX_RECORD_BYTES && h.section_table_offset <= size &&
      table <= size - h.section_table_offset) {
    for (uint32_t i = 0; i < h.section_count; i++) {
      uint8_t *at = d + h.section_table_offset + (uint64_t)i * h.section_entry_bytes;
      sfc_plan_section_t e;
      memcpy(&e, at, sizeof e);
      if (e.offset <= size && e.bytes <= size - e.offset) {
        e.crc32 = sfc_crc32(0, d + e.offset, (size_t)e.bytes);
        memcpy(at, &e, sizeof e);
      }
    }
    h.section_table_crc32 = sfc_crc32(0, d + h.section_table_offset, (size_t)table);
  }
  h.file_bytes = size; /* a mutated size field would only stop the load here */
  h.header_crc32 = sfc_crc32(0, &h, offsetof(sfc_plan_header_t, header_crc32));
  memcpy(d, &h, sizeof h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  load(data, size);
  if (size < sizeof(sfc_plan_header_t))
    return 0;
  uint8_t *copy = malloc(size);
  if (!copy)
    return 0;
  memcpy(copy, data, size);
  fix_crcs(copy, size);
  load(copy, size);
  free(copy);
  return 0;
}
