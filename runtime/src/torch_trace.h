/* torch_trace.h — the allocation trace of one iteration as a DSA CSV, written by the
 * PyTorch allocator's record mode and read back (packed) by its replay mode.
 *
 *   id,lower,upper,size            <- record mode writes this (sfc pack's input)
 *   0,0,3,1048576
 *   1,1,2,512
 *
 *   id,lower,upper,size,offset     <- sfc pack -o writes this; replay mode reads it
 *   0,0,3,1048576,0
 *   1,1,2,512,1048576
 *
 * `id` is the request number k (0-based, in request order within the iteration);
 * lower/upper are request-counter times (seed profile-guided-dsa.txt §4.1: the clock
 * ticks once per allocation and once per free; a block lives in [lower, upper)); size
 * is the requested bytes; offset is the block's planned arena offset. This is the
 * minimalloc format of compiler/src/pack/pack_csv.h, reimplemented here because the runtime
 * must not depend on the compiler.
 *
 * Reader rules: a header naming id, lower, upper, size (and offset when
 * `need_offsets`), in any order, no other columns; one row per block; decimal fields
 * (spaces around them and a CR before the newline tolerated); ids are exactly
 * 0..count-1 in any row order; lower < upper; 0 < size <= 2^50; offset + size <= 2^62.
 * At most 2^24 rows and 1 GiB. Errors: SFC_ERR_BAD_INPUT "name:line: reason" (name
 * may be NULL), SFC_ERR_LIMIT, SFC_ERR_IO, SFC_ERR_OUT_OF_MEMORY. O(bytes).
 */
#ifndef SFCRT_TORCH_TRACE_H
#define SFCRT_TORCH_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfc/allocator.h"
#include "sfc/status.h"

#define SFCRT_TORCH_TRACE_MAX_ROWS  (UINT32_C(1) << 24)
#define SFCRT_TORCH_TRACE_MAX_BYTES (UINT64_C(1) << 30)
#define SFCRT_TORCH_TRACE_MAX_SIZE  (UINT64_C(1) << 50)
#define SFCRT_TORCH_TRACE_MAX_END   (UINT64_C(1) << 62)

typedef struct sfcrt_torch_block {
  uint64_t lower, upper; /* request-counter times, lower < upper */
  uint64_t size;         /* requested bytes */
  uint64_t offset;       /* planned arena offset (replay); 0 when recording */
} sfcrt_torch_block_t;

typedef struct sfcrt_torch_trace {
  sfcrt_torch_block_t *blocks; /* [count], index = id = request number */
  size_t count;
  bool has_offsets;
  size_t capacity_; /* rows allocated (>= count); private */
} sfcrt_torch_trace_t;

sfc_status_t sfcrt_torch_trace_parse(const char *data, size_t bytes, const char *name,
                                     bool need_offsets, const sfc_allocator_t *alloc,
                                     sfcrt_torch_trace_t *out, sfc_error_t *err);
sfc_status_t sfcrt_torch_trace_read_file(const char *path, bool need_offsets,
                                         const sfc_allocator_t *alloc, sfcrt_torch_trace_t *out,
                                         sfc_error_t *err);
void sfcrt_torch_trace_free(sfcrt_torch_trace_t *trace, const sfc_allocator_t *alloc);

/* Writes `id,lower,upper,size` (and `,offset` when with_offsets) for blocks[0..count).
 * Safely: a fresh temporary next to the file (O_EXCL|O_NOFOLLOW, never a predictable
 * name), fsync'ed and renamed over it, so a reader never sees half a file and a planted
 * symlink is never followed; /dev/null or a FIFO is written in place; a symlink to a
 * regular file replaces that file and keeps the link. Messages name path. */
sfc_status_t sfcrt_torch_trace_write_file(const char *path, const sfcrt_torch_block_t *blocks,
                                          size_t count, bool with_offsets, sfc_error_t *err);

/* For tests only: restart the generator of the writer's temporary names from seed, and
 * return the next name a write to `path` (no links) would try, malloc'ed; a write after
 * the same seed tries the same names in the same order. */
void sfcrt_torch_trace_test_seed_(uint64_t seed);
char *sfcrt_torch_trace_test_temp_name_(const char *path);

#endif /* SFCRT_TORCH_TRACE_H */
