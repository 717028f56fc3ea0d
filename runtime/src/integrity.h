/* integrity.h — the host device's integrity mode (integrity.c): patterns, and the
 * tracker that fills a step's outputs and checks its inputs.
 *
 * Word w (8 bytes, little-endian) of tensor t at version v is
 * splitmix64(seed(t, v) + w): every tensor, every version and every position gets
 * different bytes, so a value that landed in the wrong place, a stale copy of an
 * older iteration and another tensor's bytes all differ from what is expected.
 */
#ifndef SFCRT_INTEGRITY_H
#define SFCRT_INTEGRITY_H

#include <stdint.h>

#include "sfc/allocator.h"
#include "sfc/plan_format.h"
#include "sfc/status.h"

#define SFCRT_PATTERN_OK UINT64_MAX

/* Fills bytes [0, bytes) at p with the pattern of (tensor, version). */
void sfcrt_pattern_fill(void *p, uint64_t bytes, uint32_t tensor, uint64_t version);

/* The first byte offset where p differs from the pattern, or SFCRT_PATTERN_OK.
 * *found / *expected get the 8-byte words around that offset (may be NULL). */
uint64_t sfcrt_pattern_check(const void *p, uint64_t bytes, uint32_t tensor, uint64_t version,
                             uint64_t *found, uint64_t *expected);

/* The word at byte offset `offset` (rounded down to 8) of (tensor, version). */
uint64_t sfcrt_pattern_word(uint32_t tensor, uint64_t version, uint64_t offset);

/* What integrity mode knows about each tensor: the version its bytes must hold (the
 * tag, iteration + 1, of its last producer; 0 for a persistent tensor initialised by
 * its first reader; SFCRT_VERSION_NONE never produced) and where it was last seen.
 * One thread at a time (the host device's compute worker). */
#define SFCRT_VERSION_NONE UINT64_MAX
typedef struct sfcrt_integrity {
  const sfc_plan_view_t *plan;
  const sfc_allocator_t *alloc;
  uint64_t *version;    /* [tensor_count] */
  void **last_ptr;      /* [tensor_count] where the tensor was last produced or read */
  uint32_t *last_block; /* [tensor_count] the device block of last_ptr */
  void *harena;         /* the host arena holding the homes (fill_homes), or NULL */
} sfcrt_integrity_t;

/* Allocates the tables (every version SFCRT_VERSION_NONE). On failure frees them. */
sfc_status_t sfcrt_integrity_init(sfcrt_integrity_t *g, const sfc_plan_view_t *plan,
                                  const sfc_allocator_t *alloc, sfc_error_t *err);
void sfcrt_integrity_deinit(sfcrt_integrity_t *g); /* zeroed or initialised struct */

/* Plays the framework that initialises the persistent tensors homed on the host
 * (plan 1.3: a PERSISTENT host block): fills each home at harena + its offset with the
 * tensor's version 0, which its first swap-in brings to the device. */
void sfcrt_integrity_fill_homes(sfcrt_integrity_t *g, void *harena);

/* Step `step` of the iteration with tag `tag` is about to run with operand pointers
 * ptrs (inputs, outputs, temps): checks every input. SFC_ERR_INTEGRITY with the
 * precise message (iteration, step, op, operand, tensor, block, byte offset, found
 * and expected words, stale or overwritten) on the first mismatch. */
sfc_status_t sfcrt_integrity_check_step(sfcrt_integrity_t *g, uint64_t tag, uint32_t step,
                                        void *const *ptrs, sfc_error_t *err);

/* Step `step` has run: fills its outputs and temps with version `tag`. */
void sfcrt_integrity_fill_step(sfcrt_integrity_t *g, uint64_t tag, uint32_t step,
                               void *const *ptrs);

/* At iteration end: every persistent or output tensor still resident (its last block
 * persistent, external or live at the last step) holds its last version, and so does
 * every home (the queues have drained). */
sfc_status_t sfcrt_integrity_check_end(sfcrt_integrity_t *g, uint64_t tag, sfc_error_t *err);

#endif /* SFCRT_INTEGRITY_H */
