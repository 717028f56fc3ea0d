/* fuzz_torch_trace.c — the runtime's trace CSV reader must never crash or leak, and
 * what it accepts must keep its promises (ids 0..count-1 filled, lower < upper, sizes
 * in range, offset + size without overflow). Run both with and without offsets. */
#include <stdint.h>
#include <stdlib.h>

#include "torch_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  for (int need = 0; need < 2; need++) {
    sfcrt_torch_trace_t t;
    sfc_error_t err;
    if (sfcrt_torch_trace_parse((const char *)data, size, "fuzz", need, NULL, &t, &err) != SFC_OK)
      continue;
    if (need && !t.has_offsets)
      abort();
    for (size_t i = 0; i < t.count; i++) {
      const sfcrt_torch_block_t *b = &t.blocks[i];
      if (b->lower >= b->upper || b->size == 0 || b->size > SFCRT_TORCH_TRACE_MAX_SIZE ||
          b->offset + b->size > SFCRT_TORCH_TRACE_MAX_END)
        abort();
    }
    sfcrt_torch_trace_free(&t, NULL);
  }
  return 0;
}
