/* device_sim.c — the `sim` device: replays a plan on virtual clocks, no bytes.
 *
 * Model (docs/runtime.md "The sim device"; seed cpu-offloading §4): three clocks in
 * microseconds, one per queue (compute, H2D engine, D2H engine), all 0 at
 * iteration_begin.
 *  - step k: the compute clock first advances to every awaited event's time (the
 *    difference is that step's stall), then by the step's time (sfc/steps.h, the
 *    rule the compiler also uses): STEPS.time_us when the plan timed the step, else
 *    the step's share of its op's time, which is time_us when known (>= 0), else
 *    flops / options.sim.flops_per_s when both are > 0, else
 *    options.sim.default_op_us (default 0).
 *  - copy of b bytes on engine q: starts at the engine's clock (after its waits),
 *    takes the latency, then moves its bytes at bw(q), except while the other engine
 *    is moving data (its earlier copies' intervals), when the rate is bw(q) *
 *    duplex_factor (a shared link). The earlier copy is not re-timed (it was placed
 *    first), so the model charges the overlap to the copy issued later. Bandwidths,
 *    latency and duplex factor come from options.sim when > 0, else from the META.
 *  - event_record(q, e) stamps e with q's clock; queue_wait(q, e) advances q's clock
 *    to at least that stamp.
 *  - predicted iteration time = max of the three clocks at iteration_end.
 *  - a paged plan (format 1.7, SFC_PLAN_PAGED), or any plan with options.sim.paged,
 *    is replayed as the cuda device's paged mode runs it (docs/runtime.md "Paged
 *    mode"), with a host clock: blocks begin and end by the same rules (life.h); a page
 *    is mapped when the first live block touching it begins, from a pool of the plan's
 *    page peak (sfcrt_life_page_peak at META.va_chunk_bytes); a page no live block
 *    touches is pending and keeps its chunk until a map needs one; then the pending
 *    pages whose last users have finished by the host clock are unmapped, oldest
 *    first, and when none has, the host waits for the oldest: its clock advances to the
 *    end of that page's last user (the latest step, swap-in or swap-out of a block
 *    touching it since it was mapped). Each page mapped costs the host
 *    options.sim.page_map_s (default 0: not yet measured on a GPU). Every copy and step
 *    issued afterwards starts no earlier than the host clock (a step's wait for it
 *    counts as its stall). iteration_end synchronises, so the pages pending from the
 *    last iteration are free to unmap at the next one's start. Otherwise the host
 *    clock stays at 0 and the model above is unchanged.
 * Deterministic (no time source, no threads). The per-step times are precomputed at
 * create; a copy scans the other engine's intervals with a cursor,
 * so an iteration costs O(steps + deps + swaps). The last iteration's timeline (each
 * step's start, each copy's start and end) stays readable through sfcrt_stats_t.
 * Memory: event_count + 3 * step_count + 6 * swap_count doubles.
 */
#include <math.h>
#include <string.h>

#include "device.h"
#include "life.h"
#include "sfc/steps.h"

/* Paged mode (a paged plan): the page table and its pending FIFO, on the clocks. */
typedef struct sim_pages {
  sfcrt_life_t life;
  uint64_t page;          /* bytes (META.va_chunk_bytes) */
  uint32_t count;         /* pages of the arena */
  uint64_t pool;          /* chunks: the page peak */
  uint64_t used;          /* pages mapped */
  uint32_t *refs;         /* [count] live blocks touching the page */
  uint8_t *mapped;        /* [count] */
  double *release;        /* [count] end of its last user since mapped, us on this iteration */
  sfcrt_page_fifo_t fifo; /* the pending pages */
  double *done;           /* [block_count] end of the block's last user this residency, us */
  uint32_t step;          /* the step being issued (swap-outs after a block's last step end it) */
  double map_us;          /* host cost per page mapped */
  uint64_t maps, unmaps, waits;
} sim_pages_t;

typedef struct sim {
  const sfc_plan_view_t *plan;
  const sfc_allocator_t *alloc;
  double *step_us;    /* [step_count] */
  double *event_us;   /* [event_count] */
  double *step_stall; /* [step_count] last iteration */
  double *step_start; /* [step_count] last iteration: compute clock at each step's start */
  double *copy_lo;    /* [swap_count] last iteration: each copy's start on its engine */
  double *copy_hi;    /* [swap_count] and end (-1 when not issued) */
  uint32_t event_count;
  double clock[SFCRT_QUEUE_COUNT];
  double busy[SFCRT_QUEUE_COUNT]; /* this iteration */
  double compute_us;              /* this iteration */
  double pending_stall;           /* waits before the next step_begin */
  double bw[SFCRT_QUEUE_COUNT];   /* bytes per microsecond, [H2D] and [D2H] */
  /* data-transfer intervals of this iteration per copy engine, in issue order (so
   * sorted): [lo, hi) us. scan[q]: first interval of the other engine that may still
   * overlap a copy on q (copies on one engine start in nondecreasing time). */
  double *lo[SFCRT_QUEUE_COUNT], *hi[SFCRT_QUEUE_COUNT]; /* [swap_count] for H2D, D2H */
  uint32_t n[SFCRT_QUEUE_COUNT], scan[SFCRT_QUEUE_COUNT];
  double duplex, latency_us;
  /* last completed iteration */
  double last_iter_us, last_compute_us, last_busy[SFCRT_QUEUE_COUNT];
  uint64_t stalls;
  double stall_us;
  double host;        /* host clock: no copy or step issued later starts before it */
  sim_pages_t *pages; /* NULL unless the plan is paged */
} sim_t;

static double positive_or(double v, double fallback) {
  return (v > 0 && isfinite(v)) ? v : fallback;
}

static void pages_destroy(sim_pages_t *g, const sfc_allocator_t *a, uint32_t block_count) {
  if (!g)
    return;
  size_t n = g->count ? g->count : 1, nb = block_count ? block_count : 1;
  sfcrt_life_free(&g->life, a);
  if (g->refs)
    sfc_free(a, g->refs, n * sizeof(uint32_t));
  if (g->mapped)
    sfc_free(a, g->mapped, n);
  if (g->release)
    sfc_free(a, g->release, n * sizeof(double));
  sfcrt_page_fifo_free(&g->fifo, a);
  if (g->done)
    sfc_free(a, g->done, nb * sizeof(double));
  sfc_free(a, g, sizeof *g);
}

/* Unmaps pending page p; the host first waits for its last user when `wait`. */
static void pages_reclaim(sim_t *d, uint32_t p, bool wait) {
  sim_pages_t *g = d->pages;
  if (wait && g->release[p] > d->host) {
    d->host = g->release[p];
    g->waits++;
  }
  sfcrt_page_fifo_cancel(&g->fifo, p);
  g->mapped[p] = 0;
  g->release[p] = 0;
  g->used--;
  g->unmaps++;
}

/* Makes `need` chunks free, as the cuda device does: the pending pages whose last users
 * have finished by the host clock, oldest first; then the oldest, after waiting. */
static sfc_status_t pages_make_room(sim_t *d, uint64_t need, sfc_error_t *err) {
  sim_pages_t *g = d->pages;
  if (g->pool - g->used >= need)
    return SFC_OK;
  sfcrt_page_fifo_t *f = &g->fifo;
  for (size_t i = f->head; i < f->tail && g->pool - g->used < need; i++)
    if (sfcrt_page_fifo_current(f, i) && g->release[f->page[i]] <= d->host)
      pages_reclaim(d, f->page[i], false);
  for (; f->head < f->tail && g->pool - g->used < need; f->head++)
    if (sfcrt_page_fifo_current(f, f->head))
      pages_reclaim(d, f->page[f->head], true);
  if (g->pool - g->used < need)
    return sfc_error_set(err, SFC_ERR_INTERNAL,
                         "sim paged mode: %llu pages to map, %llu of the pool's %llu free and "
                         "none pending",
                         (unsigned long long)need, (unsigned long long)(g->pool - g->used),
                         (unsigned long long)g->pool);
  return SFC_OK;
}

/* Block b begins: its pages are mapped (a pending one keeps its chunk). */
static sfc_status_t pages_begin(sim_t *d, uint32_t b, sfc_error_t *err) {
  sim_pages_t *g = d->pages;
  uint32_t first, last;
  g->done[b] = 0;
  if (!sfcrt_block_pages(&d->plan->blocks[b], g->page, &first, &last))
    return SFC_OK;
  uint64_t need = 0;
  for (uint32_t p = first; p <= last; p++) {
    if (g->refs[p]++ == 0)
      sfcrt_page_fifo_cancel(&g->fifo, p);
    need += !g->mapped[p];
  }
  SFC_TRY(pages_make_room(d, need, err));
  for (uint32_t p = first; p <= last; p++)
    if (!g->mapped[p]) {
      g->mapped[p] = 1;
      g->used++;
      g->maps++;
      d->host += g->map_us;
    }
  return SFC_OK;
}

/* Block b ends: its pages remember when its last user ends; those no block touches
 * any more become pending. */
static void pages_end(sim_t *d, uint32_t b) {
  sim_pages_t *g = d->pages;
  uint32_t first, last;
  if (!sfcrt_block_pages(&d->plan->blocks[b], g->page, &first, &last))
    return;
  for (uint32_t p = first; p <= last; p++) {
    if (g->done[b] > g->release[p])
      g->release[p] = g->done[b];
    if (g->refs[p] > 0 && --g->refs[p] == 0)
      sfcrt_page_fifo_push(&g->fifo, p);
  }
}

/* The page table of a paged plan, its pool the page peak; persistent blocks mapped. */
static sfc_status_t pages_create(sim_t *d, double map_us, sfc_error_t *err) {
  const sfc_plan_view_t *v = d->plan;
  const sfc_allocator_t *a = d->alloc;
  uint64_t page = v->meta.va_chunk_bytes,
           pages = page ? (v->header.arena_bytes + page - 1) / page : 0;
  if (page == 0 || pages > UINT32_MAX / 2)
    return sfc_error_set(err, SFC_ERR_LIMIT,
                         "sim paged mode: an arena of %llu bytes in pages of %llu",
                         (unsigned long long)v->header.arena_bytes, (unsigned long long)page);
  sim_pages_t *g = d->pages = sfc_calloc(a, 1, sizeof *g);
  if (!g)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "sim paged mode: out of memory");
  g->page = page;
  g->count = (uint32_t)(pages ? pages : 1);
  g->map_us = map_us;
  size_t n = g->count, nb = v->block_count ? v->block_count : 1;
  SFC_TRY(sfcrt_life_init(&g->life, v, a, err));
  g->refs = sfc_calloc(a, n, sizeof(uint32_t));
  g->mapped = sfc_calloc(a, n, 1);
  g->release = sfc_calloc(a, n, sizeof(double));
  g->done = sfc_calloc(a, nb, sizeof(double));
  uint8_t *live = sfc_calloc(a, nb, 1);
  bool ok = g->refs && g->mapped && g->release && g->done && live &&
            sfcrt_page_fifo_init(&g->fifo, g->count, a);
  if (ok)
    g->pool = sfcrt_life_page_peak(&g->life, v, page, g->refs, live);
  if (live)
    sfc_free(a, live, nb);
  if (!ok)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "sim paged mode: out of memory (page tables)");
  memset(g->refs, 0, n * sizeof(uint32_t));
  for (uint32_t b = 0; b < v->block_count; b++) /* persistent pages stay mapped, at no cost */
    if ((v->blocks[b].flags & SFC_BLOCK_PERSISTENT) && !(v->blocks[b].flags & SFC_BLOCK_EXTERNAL))
      SFC_TRY(pages_begin(d, b, err));
  d->host = 0;
  return SFC_OK;
}

static void sim_destroy(void *self) {
  sim_t *d = self;
  if (!d)
    return;
  const sfc_plan_view_t *v = d->plan;
  pages_destroy(d->pages, d->alloc, v->block_count);
  sfc_free(d->alloc, d->step_us, (v->step_count ? v->step_count : 1) * sizeof(double));
  sfc_free(d->alloc, d->event_us, (d->event_count ? d->event_count : 1) * sizeof(double));
  sfc_free(d->alloc, d->step_stall, (v->step_count ? v->step_count : 1) * sizeof(double));
  sfc_free(d->alloc, d->step_start, (v->step_count ? v->step_count : 1) * sizeof(double));
  sfc_free(d->alloc, d->copy_lo, (v->swap_count ? v->swap_count : 1) * sizeof(double));
  sfc_free(d->alloc, d->copy_hi, (v->swap_count ? v->swap_count : 1) * sizeof(double));
  for (int q = SFCRT_QUEUE_H2D; q < SFCRT_QUEUE_COUNT; q++) {
    sfc_free(d->alloc, d->lo[q], (v->swap_count ? v->swap_count : 1) * sizeof(double));
    sfc_free(d->alloc, d->hi[q], (v->swap_count ? v->swap_count : 1) * sizeof(double));
  }
  sfc_free(d->alloc, d, sizeof *d);
}

static sfc_status_t sim_create(const sfcrt_device_config_t *cfg, void **out_self,
                               sfc_error_t *err) {
  *out_self = NULL;
  const sfc_plan_view_t *v = cfg->plan;
  sim_t *d = sfc_calloc(cfg->alloc, 1, sizeof *d);
  if (!d)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "sim: out of memory");
  d->plan = v;
  d->alloc = cfg->alloc;
  d->event_count = cfg->event_count;
  d->step_us = sfc_calloc(cfg->alloc, v->step_count ? v->step_count : 1, sizeof(double));
  d->event_us = sfc_calloc(cfg->alloc, d->event_count ? d->event_count : 1, sizeof(double));
  d->step_stall = sfc_calloc(cfg->alloc, v->step_count ? v->step_count : 1, sizeof(double));
  d->step_start = sfc_calloc(cfg->alloc, v->step_count ? v->step_count : 1, sizeof(double));
  d->copy_lo = sfc_calloc(cfg->alloc, v->swap_count ? v->swap_count : 1, sizeof(double));
  d->copy_hi = sfc_calloc(cfg->alloc, v->swap_count ? v->swap_count : 1, sizeof(double));
  for (int q = SFCRT_QUEUE_H2D; q < SFCRT_QUEUE_COUNT; q++) {
    d->lo[q] = sfc_calloc(cfg->alloc, v->swap_count ? v->swap_count : 1, sizeof(double));
    d->hi[q] = sfc_calloc(cfg->alloc, v->swap_count ? v->swap_count : 1, sizeof(double));
  }
  if (!d->step_us || !d->event_us || !d->step_stall || !d->step_start || !d->copy_lo ||
      !d->copy_hi || !d->lo[SFCRT_QUEUE_H2D] || !d->hi[SFCRT_QUEUE_H2D] ||
      !d->lo[SFCRT_QUEUE_D2H] || !d->hi[SFCRT_QUEUE_D2H]) {
    sim_destroy(d);
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "sim: out of memory (clock tables)");
  }
  const sfcrt_options_t *o = cfg->options;
  sfc_time_rule_t rule = {.flops_per_s = o->sim.flops_per_s,
                          .default_op_us = positive_or(o->sim.default_op_us, 0.0)};
  for (uint32_t k = 0; k < v->step_count; k++) {
    const sfc_plan_step_t *s = &v->steps[k];
    if ((s->flags & SFC_STEP_TIMED) && s->time_us >= 0 && isfinite(s->time_us)) {
      d->step_us[k] = s->time_us;
      continue;
    }
    const sfc_plan_op_t *op = &v->ops[s->op];
    double t =
        sfc_step_time_us(sfc_op_time_us(op->time_us, op->flops, &rule), sfc_plan_step_share(v, k));
    d->step_us[k] = t > 0 ? t : 0;
  }
  /* bytes/s -> bytes/us; a missing bandwidth means copies take only the latency. */
  d->bw[SFCRT_QUEUE_H2D] = positive_or(o->sim.h2d_bytes_per_s, v->meta.h2d_bytes_per_s) / 1e6;
  d->bw[SFCRT_QUEUE_D2H] = positive_or(o->sim.d2h_bytes_per_s, v->meta.d2h_bytes_per_s) / 1e6;
  d->duplex = positive_or(o->sim.duplex_factor, positive_or(v->meta.duplex_factor, 1.0));
  d->latency_us = (o->sim.copy_latency_s >= 0 ? o->sim.copy_latency_s /* 0: none */
                                              : positive_or(v->meta.copy_latency_s, 0)) *
                  1e6;
  if (sfc_plan_paged(v) || o->sim.paged) {
    sfc_status_t st = pages_create(d, positive_or(o->sim.page_map_s, 0) * 1e6, err);
    if (st != SFC_OK) {
      sim_destroy(d);
      return st;
    }
  }
  *out_self = d;
  return SFC_OK;
}

static sfc_status_t sim_arena_alloc(void *self, uint64_t bytes, uint32_t alignment,
                                    sfc_error_t *err) {
  (void)self, (void)bytes, (void)alignment, (void)err;
  return SFC_OK;
}

static sfc_status_t sim_host_alloc(void *self, uint64_t bytes, sfc_error_t *err) {
  (void)self, (void)bytes, (void)err;
  return SFC_OK;
}

static void *sim_address(void *self, uint32_t block) {
  (void)self, (void)block;
  return NULL;
}

static sfc_status_t sim_iteration_begin(void *self, uint64_t iteration, sfc_error_t *err) {
  (void)iteration, (void)err;
  sim_t *d = self;
  memset(d->clock, 0, sizeof d->clock);
  memset(d->busy, 0, sizeof d->busy);
  memset(d->n, 0, sizeof d->n);
  memset(d->scan, 0, sizeof d->scan);
  d->compute_us = 0;
  d->pending_stall = 0;
  d->host = 0;
  if (d->pages) { /* the last iteration_end synchronised: every last user has finished */
    memset(d->pages->release, 0, (size_t)d->pages->count * sizeof(double));
    d->pages->step = 0;
  }
  for (uint32_t i = 0; i < d->plan->swap_count; i++)
    d->copy_lo[i] = d->copy_hi[i] = -1;
  return SFC_OK;
}

/* A copy of c->bytes on engine q: latency, then the data at the full bandwidth except
 * while the other engine is transferring, when it runs at bandwidth * duplex. */
static sfc_status_t sim_copy(void *self, sfcrt_queue_t q, const sfcrt_copy_t *c, sfc_error_t *err) {
  sim_t *d = self;
  bool paged = d->pages && sfcrt_life_managed(&d->plan->blocks[c->device_block]);
  if (paged && c->direction == SFC_SWAP_IN)
    SFC_TRY(pages_begin(d, c->device_block, err));
  if (d->host > d->clock[q])
    d->clock[q] = d->host;
  sfcrt_queue_t o = q == SFCRT_QUEUE_H2D ? SFCRT_QUEUE_D2H : SFCRT_QUEUE_H2D;
  double start = d->clock[q], t = start + d->latency_us, left = (double)c->bytes;
  double full = d->bw[q], shared = d->bw[q] * d->duplex;
  uint32_t i = d->scan[q];
  while (i < d->n[o] && d->hi[o][i] <= t)
    i++;
  d->scan[q] = i;
  double data_start = t;
  while (left > 0 && full > 0) {
    if (i == d->n[o]) { /* the other engine is idle from t on */
      t += left / full;
      break;
    }
    double a = d->lo[o][i], b = d->hi[o][i];
    if (a > t) { /* full rate until the other engine starts */
      if (full * (a - t) >= left) {
        t += left / full;
        break;
      }
      left -= full * (a - t);
      t = a;
    }
    if (shared * (b - t) >= left) {
      t += left / shared;
      break;
    }
    left -= shared * (b - t);
    t = b;
    i++;
  }
  if (t > data_start && d->n[q] < d->plan->swap_count) {
    d->lo[q][d->n[q]] = data_start;
    d->hi[q][d->n[q]] = t;
    d->n[q]++;
  }
  if (c->swap < d->plan->swap_count) {
    d->copy_lo[c->swap] = start;
    d->copy_hi[c->swap] = t;
  }
  d->clock[q] = t;
  d->busy[q] += t - start;
  if (paged) {
    uint32_t b = c->device_block;
    if (t > d->pages->done[b])
      d->pages->done[b] = t;
    /* a swap-out issued after the block's last step ends it */
    if (c->direction == SFC_SWAP_OUT && d->plan->blocks[b].last_step < d->pages->step)
      pages_end(d, b);
  }
  return SFC_OK;
}

static sfc_status_t sim_event_record(void *self, sfcrt_queue_t q, uint32_t event,
                                     sfc_error_t *err) {
  (void)err;
  sim_t *d = self;
  d->event_us[event] = d->clock[q];
  return SFC_OK;
}

static sfc_status_t sim_queue_wait(void *self, sfcrt_queue_t q, uint32_t event, sfc_error_t *err) {
  (void)err;
  sim_t *d = self;
  double t = d->event_us[event];
  if (t > d->clock[q]) {
    if (q == SFCRT_QUEUE_COMPUTE) {
      d->pending_stall += t - d->clock[q];
      d->stall_us += t - d->clock[q];
      d->stalls++;
    }
    d->clock[q] = t;
  }
  return SFC_OK;
}

static sfc_status_t sim_step_begin(void *self, const sfcrt_device_step_t *s, void **out_stream,
                                   sfc_error_t *err) {
  sim_t *d = self;
  if (d->pages) {
    const sfcrt_life_t *l = &d->pages->life;
    d->pages->step = s->index;
    for (uint32_t i = l->begin_at[s->index]; i < l->begin_at[s->index + 1]; i++)
      SFC_TRY(pages_begin(d, l->begin_idx[i], err));
  }
  if (d->host > d->clock[SFCRT_QUEUE_COMPUTE]) { /* the host issued this step late */
    d->pending_stall += d->host - d->clock[SFCRT_QUEUE_COMPUTE];
    d->stall_us += d->host - d->clock[SFCRT_QUEUE_COMPUTE];
    d->stalls++;
    d->clock[SFCRT_QUEUE_COMPUTE] = d->host;
  }
  double t = d->step_us[s->index];
  d->step_start[s->index] = d->clock[SFCRT_QUEUE_COMPUTE];
  d->clock[SFCRT_QUEUE_COMPUTE] += t;
  d->compute_us += t;
  d->step_stall[s->index] = d->pending_stall;
  d->pending_stall = 0;
  *out_stream = NULL;
  return SFC_OK;
}

/* Paged mode: the blocks whose last step this was end with it (their last user ends
 * with the step), unless a later swap-out ends them. */
static sfc_status_t sim_step_end(void *self, const sfcrt_device_step_t *s, sfc_error_t *err) {
  (void)err;
  sim_t *d = self;
  if (!d->pages)
    return SFC_OK;
  const sfcrt_life_t *l = &d->pages->life;
  d->pages->step = s->index + 1;
  for (uint32_t i = l->end_at[s->index]; i < l->end_at[s->index + 1]; i++) {
    uint32_t b = l->end_idx[i];
    if (d->clock[SFCRT_QUEUE_COMPUTE] > d->pages->done[b])
      d->pages->done[b] = d->clock[SFCRT_QUEUE_COMPUTE];
    if (sfcrt_life_ends_at_step(l, b, s->index))
      pages_end(d, b);
  }
  return SFC_OK;
}

static sfc_status_t sim_iteration_end(void *self, sfc_error_t *err) {
  (void)err;
  sim_t *d = self;
  double end = d->clock[0];
  for (int q = 1; q < SFCRT_QUEUE_COUNT; q++)
    if (d->clock[q] > end)
      end = d->clock[q];
  d->last_iter_us = end;
  d->last_compute_us = d->compute_us;
  memcpy(d->last_busy, d->busy, sizeof d->busy);
  return SFC_OK;
}

static void sim_stats(void *self, sfcrt_stats_t *st) {
  sim_t *d = self;
  st->stalls = d->stalls;
  st->stall_us = d->stall_us;
  st->predicted_iteration_us = d->last_iter_us;
  st->compute_us = d->last_compute_us;
  st->h2d_busy_us = d->last_busy[SFCRT_QUEUE_H2D];
  st->d2h_busy_us = d->last_busy[SFCRT_QUEUE_D2H];
  st->step_stall_us = d->step_stall;
  st->step_start_us = d->step_start;
  st->step_us = d->step_us;
  st->copy_start_us = d->copy_lo;
  st->copy_end_us = d->copy_hi;
  if (d->pages) {
    st->chunks_mapped = d->pages->maps;
    st->chunks_unmapped = d->pages->unmaps;
    st->unmap_waits = d->pages->waits;
  }
}

const sfcrt_device_ops_t sfcrt_device_sim = {
    .name = "sim",
    .create = sim_create,
    .arena_alloc = sim_arena_alloc,
    .host_alloc = sim_host_alloc,
    .block_address = sim_address,
    .host_block_address = sim_address,
    .iteration_begin = sim_iteration_begin,
    .copy = sim_copy,
    .event_record = sim_event_record,
    .queue_wait = sim_queue_wait,
    .step_begin = sim_step_begin,
    .step_end = sim_step_end,
    .iteration_end = sim_iteration_end,
    .stats = sim_stats,
    .destroy = sim_destroy,
};
