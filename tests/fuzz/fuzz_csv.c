/* fuzz_csv.c — the minimalloc CSV reader must never crash or leak, and what it
 * accepts must satisfy its promises (lower < upper, sizes in range). */
#include <stdint.h>
#include <stdlib.h>

#include "pack_csv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  sfc_pack_csv_t csv;
  sfc_error_t err;
  if (sfc_pack_csv_read_buffer((const char *)data, size, "fuzz", &csv, &err) != SFC_OK)
    return 0;
  for (size_t i = 0; i < csv.count; i++)
    if (csv.blocks[i].end <= csv.blocks[i].start || csv.blocks[i].size == 0 ||
        csv.blocks[i].size > SFC_PACK_CSV_MAX_SIZE)
      abort();
  sfc_pack_csv_free(&csv);
  return 0;
}
