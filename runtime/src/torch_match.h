/* torch_match.h — the device-independent core of the PyTorch allocator: record a trace,
 * or serve requests at planned offsets with a counted fallback. No CUDA, no globals, no
 * locking: torch_allocator.c wraps one of these in a mutex and gives it memory.
 *
 *   sfcrt_torch_match_t m;
 *   sfcrt_torch_match_init_replay(&m, &trace, arena, fallback_alloc, fallback_free, user, a);
 *   sfcrt_torch_match_iteration_begin(&m, NULL);
 *   void *p = sfcrt_torch_match_alloc(&m, 512);   // arena + offset[0] if it matches
 *   sfcrt_torch_match_free(&m, p, 512);
 *   sfcrt_torch_match_deinit(&m);
 *
 * Replay (seed profile-guided-dsa.txt §4.2–4.3): request k of the iteration goes to
 * arena + offset[k] iff k < count, size == size[k], and [offset, offset + size) meets no
 * arena block still live (a sorted array of live blocks, binary search: O(log n) to
 * check, O(live) to insert/remove). Otherwise the fallback serves it and a counter
 * says why. Frees inside the arena remove the live block; others go to the fallback.
 *
 * Streams (PyTorch's rule: memory freed on one stream is reused on that stream only,
 * and record_stream does nothing for a pluggable allocator): a freed planned block
 * becomes a retired range remembering its freeing stream (and whether the device
 * recorded an event there, sfcrt_torch_sync_t.freed). A request whose planned range
 * meets retired ranges freed on another stream makes its stream wait for each of them
 * (sfcrt_torch_sync_t.reuse) before it gets the memory; if that fails the request goes
 * to the fallback (fallback_stream). Retired ranges are disjoint, sorted by offset,
 * trimmed by every reuse: at most 2 * count + 1 of them (their ends are planned
 * offsets and ends), allocated at init. O(log n + retired met) per request.
 *
 * Record (§4.1): every request is served by the fallback; between the first and the
 * second iteration_begin each request k gets lower = clock, the free that returns it
 * upper = clock, the clock ticking after each; blocks live at the end get upper = the
 * final clock. Pointer -> k through an open-addressing hash table (linear probing,
 * backward-shift deletion) sized at init: no allocation per request.
 */
#ifndef SFCRT_TORCH_MATCH_H
#define SFCRT_TORCH_MATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sfcrt_torch.h"
#include "torch_trace.h"

typedef void *(*sfcrt_torch_fallback_alloc_fn)(void *user, size_t size);
typedef void (*sfcrt_torch_fallback_free_fn)(void *user, void *ptr, size_t size);

typedef struct sfcrt_torch_live {
  uint64_t offset, end;
  uint64_t k;   /* the request number that planned it (retired: its last occupant) */
  void *stream; /* live: the allocating stream; retired: the freeing stream */
  int recorded; /* retired: the device recorded an event at the free */
} sfcrt_torch_live_t;

/* Stream ordering of arena reuse, given by the device layer (NULL: nothing to order,
 * e.g. host memory). */
typedef struct sfcrt_torch_sync {
  /* Planned block k was freed on `stream`: may record an event there for a later
   * reuse to wait on; returns 1 when it did, 0 when not. */
  int (*freed)(void *user, uint64_t k, void *stream);
  /* Planned memory last used by block k, freed on old_stream, is handed to a request on
   * `stream` (!= old_stream): make `stream` wait for the free (for the event `freed`
   * recorded, or, when it recorded none, for an event recorded on old_stream now).
   * Anything but SFC_OK sends the request to the fallback (fallback_stream). */
  sfc_status_t (*reuse)(void *user, void *stream, uint64_t k, void *old_stream, int recorded);
  void *user;
} sfcrt_torch_sync_t;

typedef struct sfcrt_torch_match {
  sfcrt_torch_mode_t mode;
  const sfc_allocator_t *alloc;
  sfcrt_torch_fallback_alloc_fn fb_alloc;
  sfcrt_torch_fallback_free_fn fb_free;
  void *user;
  sfcrt_torch_stats_t stats;
  bool in_iteration;
  uint64_t next; /* request number k within the iteration */

  /* replay */
  sfcrt_torch_trace_t plan; /* owned */
  char *arena;              /* not owned; arena_bytes = stats.arena_bytes */
  sfcrt_torch_live_t *live; /* [plan.count] sorted by offset, live_count used */
  size_t live_count;
  sfcrt_torch_live_t *retired; /* [retired_cap] freed planned ranges, sorted, disjoint */
  size_t retired_count, retired_cap;
  sfcrt_torch_sync_t sync;

  /* record */
  sfcrt_torch_block_t *rec; /* [rec_cap] */
  size_t rec_count, rec_cap;
  uintptr_t *hkey; /* [hcap] 0 = empty */
  uint32_t *hval;  /* [hcap] */
  size_t hcap;     /* power of two >= 2 * rec_cap */
  uint64_t clock;
  int record_state; /* 0 waiting for the first begin, 1 recording, 2 complete */
  bool overflow;    /* more requests than rec_cap: the trace is unusable */
} sfcrt_torch_match_t;

/* Replay: takes ownership of *plan (which must have offsets; zeroed on return). The
 * arena (plan arena bytes = sfcrt_torch_trace_arena_bytes) is given later with
 * sfcrt_torch_match_set_arena, so the device can allocate it lazily. */
sfc_status_t sfcrt_torch_match_init_replay(sfcrt_torch_match_t *m, sfcrt_torch_trace_t *plan,
                                           sfcrt_torch_fallback_alloc_fn fb_alloc,
                                           sfcrt_torch_fallback_free_fn fb_free, void *user,
                                           const sfc_allocator_t *alloc, sfc_error_t *err);
void sfcrt_torch_match_set_arena(sfcrt_torch_match_t *m, void *arena);
/* Replay: how reuse across streams is ordered (copied; NULL = nothing to order). */
void sfcrt_torch_match_set_sync(sfcrt_torch_match_t *m, const sfcrt_torch_sync_t *sync);

/* Record up to max_requests requests of one iteration. */
sfc_status_t sfcrt_torch_match_init_record(sfcrt_torch_match_t *m, size_t max_requests,
                                           sfcrt_torch_fallback_alloc_fn fb_alloc,
                                           sfcrt_torch_fallback_free_fn fb_free, void *user,
                                           const sfc_allocator_t *alloc, sfc_error_t *err);

/* Off: fallback only. */
void sfcrt_torch_match_init_off(sfcrt_torch_match_t *m, sfcrt_torch_fallback_alloc_fn fb_alloc,
                                sfcrt_torch_fallback_free_fn fb_free, void *user);

void sfcrt_torch_match_deinit(sfcrt_torch_match_t *m);

/* Starts an iteration. In record mode, *out_trace_complete (may be NULL) becomes true
 * when this call ended the recorded iteration: the trace is then ready in
 * m->rec[0..rec_count). */
void sfcrt_torch_match_iteration_begin(sfcrt_torch_match_t *m, bool *out_trace_complete);

/* Record mode: ends the recording now (as the second begin would). SFC_ERR_STATE when
 * it never started, SFC_ERR_LIMIT when requests overflowed the capacity. */
sfc_status_t sfcrt_torch_match_record_finish(sfcrt_torch_match_t *m, sfc_error_t *err);

/* A request on `stream` (NULL: the one stream of a device without streams). */
void *sfcrt_torch_match_alloc_on(sfcrt_torch_match_t *m, size_t size, void *stream);
void *sfcrt_torch_match_alloc(sfcrt_torch_match_t *m, size_t size); /* stream NULL */

/* A request outside the profile (e.g. on another GPU): always the fallback, never
 * recorded, never advancing the request counter; counted in fallback_outside. */
void *sfcrt_torch_match_alloc_unprofiled(sfcrt_torch_match_t *m, size_t size);

/* A request the device refused before the matcher saw it (capture: its stream is
 * capturing a CUDA graph; else a driver failure): counted in failed (and
 * capture_refused); in replay it takes its request number, so the rest of the
 * iteration keeps its plan. */
void sfcrt_torch_match_alloc_refused(sfcrt_torch_match_t *m, size_t size, bool capture);

/* A free on `stream` (the stream the block was allocated on, as PyTorch passes it). */
void sfcrt_torch_match_free_on(sfcrt_torch_match_t *m, void *ptr, size_t size, void *stream);
void sfcrt_torch_match_free(sfcrt_torch_match_t *m, void *ptr, size_t size); /* stream NULL */

/* A free the device must not carry out now (capture): the block stays allocated — a
 * planned block stays live, fallback memory is kept — and capture_frees counts it. */
void sfcrt_torch_match_free_held(sfcrt_torch_match_t *m, void *ptr, size_t size);

/* max(offset + size) over the plan: the arena replay needs. */
uint64_t sfcrt_torch_trace_arena_bytes(const sfcrt_torch_trace_t *plan);

#endif /* SFCRT_TORCH_MATCH_H */
