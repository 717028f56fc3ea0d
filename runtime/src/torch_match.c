/* torch_match.c — record and replay of a PyTorch iteration's requests (see
 * torch_match.h for the algorithm, its seed and its costs). */
#include "torch_match.h"

#include <string.h>

uint64_t sfcrt_torch_trace_arena_bytes(const sfcrt_torch_trace_t *plan) {
  uint64_t end = 0;
  for (size_t i = 0; i < plan->count; i++)
    if (plan->blocks[i].offset + plan->blocks[i].size > end) /* <= 2^62: checked on read */
      end = plan->blocks[i].offset + plan->blocks[i].size;
  return end;
}

static void base_init(sfcrt_torch_match_t *m, sfcrt_torch_mode_t mode,
                      sfcrt_torch_fallback_alloc_fn fb_alloc, sfcrt_torch_fallback_free_fn fb_free,
                      void *user, const sfc_allocator_t *alloc) {
  memset(m, 0, sizeof(*m));
  m->mode = mode;
  m->fb_alloc = fb_alloc;
  m->fb_free = fb_free;
  m->user = user;
  m->alloc = alloc;
}

void sfcrt_torch_match_init_off(sfcrt_torch_match_t *m, sfcrt_torch_fallback_alloc_fn fb_alloc,
                                sfcrt_torch_fallback_free_fn fb_free, void *user) {
  base_init(m, SFCRT_TORCH_MODE_OFF, fb_alloc, fb_free, user, NULL);
}

sfc_status_t sfcrt_torch_match_init_replay(sfcrt_torch_match_t *m, sfcrt_torch_trace_t *plan,
                                           sfcrt_torch_fallback_alloc_fn fb_alloc,
                                           sfcrt_torch_fallback_free_fn fb_free, void *user,
                                           const sfc_allocator_t *alloc, sfc_error_t *err) {
  base_init(m, SFCRT_TORCH_MODE_REPLAY, fb_alloc, fb_free, user, alloc);
  if (!plan->has_offsets)
    return sfc_error_set(err, SFC_ERR_BAD_INPUT,
                         "replay needs a packed trace with an offset column (sfc pack -o)");
  m->live = sfc_calloc(alloc, plan->count ? plan->count : 1, sizeof(*m->live));
  m->retired_cap = 2 * plan->count + 2;
  m->retired = sfc_calloc(alloc, m->retired_cap, sizeof(*m->retired));
  if (!m->live || !m->retired) {
    if (m->live)
      sfc_free(alloc, m->live, (plan->count ? plan->count : 1) * sizeof(*m->live));
    if (m->retired)
      sfc_free(alloc, m->retired, m->retired_cap * sizeof(*m->retired));
    m->live = m->retired = NULL;
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "no memory for %zu live blocks", plan->count);
  }
  m->plan = *plan;
  memset(plan, 0, sizeof(*plan));
  m->stats.arena_bytes = sfcrt_torch_trace_arena_bytes(&m->plan);
  return SFC_OK;
}

void sfcrt_torch_match_set_arena(sfcrt_torch_match_t *m, void *arena) {
  m->arena = arena;
}

void sfcrt_torch_match_set_sync(sfcrt_torch_match_t *m, const sfcrt_torch_sync_t *sync) {
  if (sync)
    m->sync = *sync;
  else
    memset(&m->sync, 0, sizeof(m->sync));
}

sfc_status_t sfcrt_torch_match_init_record(sfcrt_torch_match_t *m, size_t max_requests,
                                           sfcrt_torch_fallback_alloc_fn fb_alloc,
                                           sfcrt_torch_fallback_free_fn fb_free, void *user,
                                           const sfc_allocator_t *alloc, sfc_error_t *err) {
  base_init(m, SFCRT_TORCH_MODE_RECORD, fb_alloc, fb_free, user, alloc);
  if (max_requests == 0 || max_requests > SFCRT_TORCH_TRACE_MAX_ROWS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "record capacity %zu is not in 1..%u", max_requests,
                         (unsigned)SFCRT_TORCH_TRACE_MAX_ROWS);
  size_t hcap = 16;
  while (hcap < 2 * max_requests)
    hcap *= 2;
  m->rec = sfc_calloc(alloc, max_requests, sizeof(*m->rec));
  m->hkey = sfc_calloc(alloc, hcap, sizeof(*m->hkey));
  m->hval = sfc_calloc(alloc, hcap, sizeof(*m->hval));
  m->rec_cap = max_requests;
  m->hcap = hcap;
  if (!m->rec || !m->hkey || !m->hval) {
    sfcrt_torch_match_deinit(m);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "no memory to record %zu requests",
                         max_requests);
  }
  return SFC_OK;
}

void sfcrt_torch_match_deinit(sfcrt_torch_match_t *m) {
  const sfc_allocator_t *a = m->alloc;
  if (m->live)
    sfc_free(a, m->live, (m->plan.count ? m->plan.count : 1) * sizeof(*m->live));
  if (m->retired)
    sfc_free(a, m->retired, m->retired_cap * sizeof(*m->retired));
  sfcrt_torch_trace_free(&m->plan, a);
  if (m->rec)
    sfc_free(a, m->rec, m->rec_cap * sizeof(*m->rec));
  if (m->hkey)
    sfc_free(a, m->hkey, m->hcap * sizeof(*m->hkey));
  if (m->hval)
    sfc_free(a, m->hval, m->hcap * sizeof(*m->hval));
  memset(m, 0, sizeof(*m));
}

/* ---- record: pointer -> request number ------------------------------------------- */

static size_t hslot(const sfcrt_torch_match_t *m, uintptr_t key) {
  uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
  return (size_t)(h >> 17) & (m->hcap - 1);
}

static void hput(sfcrt_torch_match_t *m, uintptr_t key, uint32_t val) {
  size_t i = hslot(m, key);
  while (m->hkey[i] != 0 && m->hkey[i] != key)
    i = (i + 1) & (m->hcap - 1);
  m->hkey[i] = key;
  m->hval[i] = val;
}

/* Removes key; returns its value or UINT32_MAX when absent. */
static uint32_t htake(sfcrt_torch_match_t *m, uintptr_t key) {
  size_t i = hslot(m, key);
  while (m->hkey[i] != key) {
    if (m->hkey[i] == 0)
      return UINT32_MAX;
    i = (i + 1) & (m->hcap - 1);
  }
  uint32_t val = m->hval[i];
  /* backward-shift deletion keeps every probe chain unbroken */
  size_t hole = i;
  for (size_t j = (i + 1) & (m->hcap - 1); m->hkey[j] != 0; j = (j + 1) & (m->hcap - 1)) {
    size_t home = hslot(m, m->hkey[j]);
    /* move j into the hole when its home is not in (hole, j] cyclically */
    bool between = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
    if (!between) {
      m->hkey[hole] = m->hkey[j];
      m->hval[hole] = m->hval[j];
      hole = j;
    }
  }
  m->hkey[hole] = 0;
  return val;
}

static void record_close(sfcrt_torch_match_t *m) {
  for (size_t k = 0; k < m->rec_count; k++)
    if (m->rec[k].upper == 0)
      m->rec[k].upper = m->clock; /* > lower: the clock ticked after the allocation */
  memset(m->hkey, 0, m->hcap * sizeof(*m->hkey));
  m->record_state = 2;
  if (!m->overflow)
    m->stats.recorded = m->rec_count;
}

sfc_status_t sfcrt_torch_match_record_finish(sfcrt_torch_match_t *m, sfc_error_t *err) {
  if (m->mode != SFCRT_TORCH_MODE_RECORD)
    return SFC_OK;
  if (m->record_state == 0)
    return sfc_error_set(err, SFC_ERR_STATE,
                         "no iteration was recorded: call sfcrt_torch_iteration_begin before the "
                         "iteration");
  if (m->record_state == 1)
    record_close(m);
  if (m->overflow)
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "the iteration made more than %zu requests; raise "
                         "SFCRT_TORCH_MAX_REQUESTS",
                         m->rec_cap);
  return SFC_OK;
}

void sfcrt_torch_match_iteration_begin(sfcrt_torch_match_t *m, bool *out_trace_complete) {
  bool complete = false;
  if (m->mode == SFCRT_TORCH_MODE_RECORD) {
    if (m->record_state == 0) {
      m->record_state = 1;
      m->clock = 0;
      m->rec_count = 0;
    } else if (m->record_state == 1) {
      record_close(m);
      complete = true;
    }
  }
  if (m->mode == SFCRT_TORCH_MODE_REPLAY && m->in_iteration && m->next < m->plan.count)
    m->stats.short_iterations++;
  m->in_iteration = true;
  m->next = 0;
  m->stats.iterations++;
  if (out_trace_complete)
    *out_trace_complete = complete;
}

/* ---- replay: live arena blocks sorted by offset ------------------------------------ */

/* First index whose offset >= off. */
static size_t live_lower_bound(const sfcrt_torch_match_t *m, uint64_t off) {
  size_t lo = 0, hi = m->live_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->live[mid].offset < off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* First retired range whose end is past off (retired ranges are disjoint and sorted,
 * so their ends are sorted too). */
static size_t retired_first(const sfcrt_torch_match_t *m, uint64_t off) {
  size_t lo = 0, hi = m->retired_count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    if (m->retired[mid].end <= off)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Replaces retired[r0, r1), the ranges that meet [o, e), by what is left of them
 * outside [o, e): at most a left and a right piece. */
static void retired_cut(sfcrt_torch_match_t *m, size_t r0, size_t r1, uint64_t o, uint64_t e) {
  if (r0 == r1)
    return;
  sfcrt_torch_live_t piece[2];
  size_t keep = 0;
  if (m->retired[r0].offset < o) {
    piece[keep] = m->retired[r0];
    piece[keep++].end = o;
  }
  if (m->retired[r1 - 1].end > e) {
    piece[keep] = m->retired[r1 - 1];
    piece[keep++].offset = e;
  }
  /* The count stays below retired_cap: every range ends at planned offsets and ends, so
   * there are at most 2 * count - 1 of them; the guard only keeps memory safe. */
  if (m->retired_count - (r1 - r0) + keep > m->retired_cap)
    keep = m->retired_cap - (m->retired_count - (r1 - r0));
  memmove(&m->retired[r0 + keep], &m->retired[r1], (m->retired_count - r1) * sizeof(*m->retired));
  memcpy(&m->retired[r0], piece, keep * sizeof(*m->retired));
  m->retired_count = m->retired_count - (r1 - r0) + keep;
}

static void *fallback(sfcrt_torch_match_t *m, size_t size, uint64_t *reason) {
  if (reason)
    (*reason)++;
  m->stats.fallback++;
  void *p = m->fb_alloc ? m->fb_alloc(m->user, size) : NULL;
  if (!p) {
    m->stats.failed++;
    return NULL;
  }
  m->stats.fallback_bytes_live += size;
  if (m->stats.fallback_bytes_live > m->stats.fallback_bytes_peak)
    m->stats.fallback_bytes_peak = m->stats.fallback_bytes_live;
  return p;
}

void *sfcrt_torch_match_alloc(sfcrt_torch_match_t *m, size_t size) {
  return sfcrt_torch_match_alloc_on(m, size, NULL);
}

void *sfcrt_torch_match_alloc_on(sfcrt_torch_match_t *m, size_t size, void *stream) {
  if (size == 0)
    return NULL;
  m->stats.requests++;
  if (m->mode == SFCRT_TORCH_MODE_RECORD) {
    void *p = fallback(m, size, NULL);
    if (p && m->record_state == 1) {
      if (m->rec_count == m->rec_cap) {
        m->overflow = true;
      } else {
        m->rec[m->rec_count] = (sfcrt_torch_block_t){m->clock, 0, size, 0};
        hput(m, (uintptr_t)p, (uint32_t)m->rec_count);
        m->rec_count++;
        m->clock++;
      }
    }
    return p;
  }
  if (m->mode != SFCRT_TORCH_MODE_REPLAY)
    return fallback(m, size, NULL);
  if (!m->in_iteration || !m->arena)
    return fallback(m, size, &m->stats.fallback_outside);
  uint64_t k = m->next++;
  if (k >= m->plan.count)
    return fallback(m, size, &m->stats.fallback_extra);
  const sfcrt_torch_block_t *b = &m->plan.blocks[k];
  if ((uint64_t)size != b->size)
    return fallback(m, size, &m->stats.fallback_size);
  uint64_t end = b->offset + b->size;
  size_t at = live_lower_bound(m, b->offset);
  if ((at > 0 && m->live[at - 1].end > b->offset) ||
      (at < m->live_count && m->live[at].offset < end))
    return fallback(m, size, &m->stats.fallback_conflict);
  /* memory last freed on another stream: this stream waits for those frees first */
  size_t r0 = retired_first(m, b->offset), r1 = r0;
  while (r1 < m->retired_count && m->retired[r1].offset < end)
    r1++;
  for (size_t i = r0; i < r1; i++) {
    const sfcrt_torch_live_t *r = &m->retired[i];
    if (r->stream == stream)
      continue;
    if (m->sync.reuse &&
        m->sync.reuse(m->sync.user, stream, r->k, r->stream, r->recorded) != SFC_OK)
      return fallback(m, size, &m->stats.fallback_stream);
    m->stats.stream_waits++;
  }
  retired_cut(m, r0, r1, b->offset, end);
  memmove(&m->live[at + 1], &m->live[at], (m->live_count - at) * sizeof(*m->live));
  m->live[at] = (sfcrt_torch_live_t){b->offset, end, k, stream, 0};
  m->live_count++;
  m->stats.planned++;
  return m->arena + b->offset;
}

void *sfcrt_torch_match_alloc_unprofiled(sfcrt_torch_match_t *m, size_t size) {
  if (size == 0)
    return NULL;
  m->stats.requests++;
  return fallback(m, size, &m->stats.fallback_outside);
}

void sfcrt_torch_match_alloc_refused(sfcrt_torch_match_t *m, size_t size, bool capture) {
  if (size == 0)
    return;
  m->stats.requests++;
  m->stats.failed++;
  m->stats.capture_refused += capture;
  if (m->mode == SFCRT_TORCH_MODE_REPLAY && m->in_iteration && m->arena)
    m->next++;
}

void sfcrt_torch_match_free_held(sfcrt_torch_match_t *m, void *ptr, size_t size) {
  if (!ptr)
    return;
  m->stats.frees++;
  m->stats.capture_frees++;
}

void sfcrt_torch_match_free(sfcrt_torch_match_t *m, void *ptr, size_t size) {
  sfcrt_torch_match_free_on(m, ptr, size, NULL);
}

void sfcrt_torch_match_free_on(sfcrt_torch_match_t *m, void *ptr, size_t size, void *stream) {
  if (!ptr)
    return;
  m->stats.frees++;
  char *p = ptr;
  if (m->mode == SFCRT_TORCH_MODE_REPLAY && m->arena && p >= m->arena &&
      (uint64_t)(p - m->arena) < m->stats.arena_bytes) {
    uint64_t off = (uint64_t)(p - m->arena);
    size_t at = live_lower_bound(m, off);
    if (at < m->live_count && m->live[at].offset == off) {
      sfcrt_torch_live_t r = m->live[at];
      memmove(&m->live[at], &m->live[at + 1], (m->live_count - at - 1) * sizeof(*m->live));
      m->live_count--;
      /* retired: remember the freeing stream (disjoint from every other range) */
      r.stream = stream;
      r.recorded = m->sync.freed ? m->sync.freed(m->sync.user, r.k, stream) : 0;
      size_t i = retired_first(m, r.offset);
      if (m->retired_count < m->retired_cap) { /* always: see retired_cut */
        memmove(&m->retired[i + 1], &m->retired[i], (m->retired_count - i) * sizeof(*m->retired));
        m->retired[i] = r;
        m->retired_count++;
      }
    } else {
      m->stats.unknown_frees++;
    }
    return;
  }
  if (m->mode == SFCRT_TORCH_MODE_RECORD && m->record_state == 1) {
    uint32_t k = htake(m, (uintptr_t)ptr);
    if (k != UINT32_MAX) {
      m->rec[k].upper = m->clock;
      m->clock++;
    }
  }
  m->stats.fallback_frees++;
  m->stats.fallback_bytes_live -=
      size <= m->stats.fallback_bytes_live ? size : m->stats.fallback_bytes_live;
  if (m->fb_free)
    m->fb_free(m->user, ptr, size);
}
