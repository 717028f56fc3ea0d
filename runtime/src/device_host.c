/* device_host.c — the `host` device: real bytes in host memory, copy queues as
 * worker threads, events as completion flags, and integrity mode.
 *
 * Queues. H2D and D2H are worker threads (started when the plan has swaps of that
 * direction), each draining a fixed ring of commands (copy, record, wait) in order.
 * Compute runs in the caller's thread (the framework computes on the returned host
 * pointers) except in integrity mode, where it is a third worker: the "kernels" are
 * the check of a step's inputs (step_begin) and the fill of its outputs (step_end),
 * asynchronous like a GPU launch, so a missing dependency is a real race.
 *
 * Events. event_done[e] holds the tag (iteration + 1) of the last iteration in which
 * e completed; a wait spins on nothing: it returns at once when the tag matches and
 * otherwise sleeps on the device condition variable. iteration_end waits until all
 * rings are empty and no worker is busy — the only device-wide synchronisation.
 *
 * Integrity mode (docs/runtime.md "Integrity mode"). Each tensor has a version: the
 * tag of the iteration its last producer ran in (persistent tensors read before any
 * producer are initialised by their first reader with version 0). A producer fills
 * the tensor's bytes with pattern(tensor, version) (integrity.c); every reader checks
 * them, and iteration_end checks persistent and output tensors still resident. A
 * non-persistent tensor read before its producer ran in this iteration is an error
 * too. Overlap, early reuse, a missing wait and a lost swap all leave bytes that
 * differ from the expected pattern; the message names step, op, tensor, block and
 * byte offset, and says whether the bytes are an older version of the same tensor
 * (stale: a lost swap or a missing wait) or something else (overwritten). Test knob:
 * options.host.delay_us[q] sleeps before every copy/check/fill on queue q so the
 * racing side of a missing wait loses; options.host.lag makes that independent of
 * timing: the workers start an iteration only when it is fully queued, and copies
 * (or steps) run only while the other side has drained or sleeps on a wait.
 *
 * Memory: arena + staging arena + one ring per queue sized for a whole iteration
 * (sum over steps and swaps of deps + 3 commands) + event and version tables, all
 * allocated at create; nothing afterwards.
 */
#include <errno.h>
#include <stdio.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "device.h"
#include "integrity.h"

enum { CMD_COPY, CMD_RECORD, CMD_WAIT, CMD_CHECK, CMD_FILL };

typedef struct cmd {
  uint32_t kind;
  uint32_t arg; /* event or step index */
  const sfcrt_copy_t *copy;
  void *const *operands; /* CHECK/FILL: the step's resolved pointers */
} cmd_t;

typedef struct queue {
  cmd_t *ring; /* [cap] */
  uint32_t cap, head, count;
  int busy;         /* the worker is executing a command */
  uint32_t waiting; /* the event the worker sleeps on, or SFC_PLAN_NONE */
  int started;      /* a worker thread runs this queue */
  pthread_t thread;
  uint32_t delay_us;
  struct host *dev;
  int index;
} queue_t;

typedef struct host {
  const sfc_plan_view_t *plan;
  const sfc_allocator_t *alloc;
  int integrity;
  uint8_t *arena_raw, *arena;
  size_t arena_raw_bytes;
  uint8_t *harena;
  size_t harena_bytes;
  _Atomic uint64_t *event_done; /* [event_count] */
  uint32_t event_count;
  uint64_t tag; /* iteration + 1 */
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int sync_init;
  int waiters;  /* threads sleeping on cv for an event */
  int lag;      /* options.host.lag */
  int released; /* lag mode: the iteration's work may start (iteration_end) */
  int stop;
  queue_t q[SFCRT_QUEUE_COUNT];
  _Atomic int failed;
  sfc_error_t failure;
  /* integrity (owned by the compute executor) */
  sfcrt_integrity_t check; /* integrity mode: used by the compute worker only */
  /* stats: stalls of the compute queue */
  uint64_t stalls;
  double stall_us;
} host_t;

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static void sleep_us(uint32_t us) {
  struct timespec ts = {(time_t)(us / 1000000u), (long)(us % 1000000u) * 1000L};
  while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
  }
}

/* Records the first asynchronous failure; later ones are dropped. */
static void set_failure(host_t *d, const sfc_error_t *e) {
  pthread_mutex_lock(&d->mu);
  if (!atomic_load(&d->failed)) {
    d->failure = *e;
    atomic_store(&d->failed, 1);
  }
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

static sfc_status_t report_failure(host_t *d, sfc_error_t *err) {
  pthread_mutex_lock(&d->mu);
  *err = d->failure;
  pthread_mutex_unlock(&d->mu);
  return err->status;
}

/* ---- commands -------------------------------------------------------------------- */

static void run_wait(host_t *d, queue_t *q, uint32_t e) {
  if (atomic_load_explicit(&d->event_done[e], memory_order_acquire) == d->tag)
    return;
  double t0 = now_us();
  pthread_mutex_lock(&d->mu);
  d->waiters++;
  q->waiting = e;
  if (d->lag) /* a lagging queue may go on now */
    pthread_cond_broadcast(&d->cv);
  while (atomic_load(&d->event_done[e]) != d->tag && !atomic_load(&d->failed) && !d->stop)
    pthread_cond_wait(&d->cv, &d->mu);
  q->waiting = SFC_PLAN_NONE;
  d->waiters--;
  if (q->index == SFCRT_QUEUE_COMPUTE) {
    d->stalls++;
    d->stall_us += now_us() - t0;
  }
  pthread_mutex_unlock(&d->mu);
}

static void run_record(host_t *d, uint32_t e) {
  pthread_mutex_lock(&d->mu);
  atomic_store_explicit(&d->event_done[e], d->tag, memory_order_release);
  if (d->waiters || d->lag)
    pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

static void run_cmd(host_t *d, queue_t *q, const cmd_t *c) {
  sfc_error_t e;
  if (q->delay_us && (c->kind == CMD_COPY || c->kind == CMD_CHECK || c->kind == CMD_FILL))
    sleep_us(q->delay_us);
  switch (c->kind) {
    case CMD_COPY:
      if (c->copy->bytes) {
        if (c->copy->direction == SFC_SWAP_IN)
          memcpy(c->copy->device_ptr, c->copy->host_ptr, c->copy->bytes);
        else
          memcpy(c->copy->host_ptr, c->copy->device_ptr, c->copy->bytes);
      }
      break;
    case CMD_RECORD:
      run_record(d, c->arg);
      break;
    case CMD_WAIT:
      run_wait(d, q, c->arg);
      break;
    case CMD_CHECK:
      if (sfcrt_integrity_check_step(&d->check, d->tag, c->arg, c->operands, &e) != SFC_OK)
        set_failure(d, &e);
      break;
    case CMD_FILL:
      sfcrt_integrity_fill_step(&d->check, d->tag, c->arg, c->operands);
      break;
  }
}

/* Lag mode (mutex held): must command c on q wait? Copies wait while the compute
 * queue has work and is not asleep on a wait (LAG_COPIES); steps wait while a copy
 * queue has work and is not asleep on a wait (LAG_COMPUTE). */
/* Whether q has work it can do now: queued or running commands, unless it sleeps on
 * an event that has not completed (checked here, under the mutex run_record holds, so
 * a queue counts as runnable from the moment its event completes, not from when its
 * thread wakes up). */
static int runnable(const host_t *d, const queue_t *q) {
  if (q->waiting != SFC_PLAN_NONE && atomic_load(&d->event_done[q->waiting]) != d->tag)
    return 0;
  return q->count || q->busy;
}

static int event_queue(const host_t *d, uint32_t e) {
  const sfc_plan_view_t *v = d->plan;
  if (e < v->step_count)
    return SFCRT_QUEUE_COMPUTE;
  return v->swaps[e - v->step_count].direction == SFC_SWAP_IN ? SFCRT_QUEUE_H2D : SFCRT_QUEUE_D2H;
}

/* LAG_COPIES: a copy on queue qi may run when compute has drained, or when compute
 * sleeps on a wait that (through the chain of waits) needs queue qi. Only the queue
 * compute needs runs, so a copy nobody waits for stays behind every step. */
static int copy_lagging(const host_t *d, int qi) {
  const queue_t *k = &d->q[SFCRT_QUEUE_COMPUTE];
  if (!k->count && !k->busy)
    return 0;
  if (runnable(d, k))
    return 1;
  int need = event_queue(d, k->waiting);
  for (int hop = 0; hop < SFCRT_QUEUE_COUNT; hop++) {
    if (need == qi)
      return 0;
    const queue_t *n = &d->q[need];
    if (need == SFCRT_QUEUE_COMPUTE || n->waiting == SFC_PLAN_NONE ||
        atomic_load(&d->event_done[n->waiting]) == d->tag)
      break;
    need = event_queue(d, n->waiting);
  }
  return 1;
}

static int lagging(const host_t *d, const queue_t *q, const cmd_t *c) {
  if (d->lag == SFCRT_HOST_LAG_COPIES && c->kind == CMD_COPY)
    return copy_lagging(d, q->index);
  if (d->lag == SFCRT_HOST_LAG_COMPUTE && (c->kind == CMD_CHECK || c->kind == CMD_FILL))
    return runnable(d, &d->q[SFCRT_QUEUE_H2D]) || runnable(d, &d->q[SFCRT_QUEUE_D2H]);
  return 0;
}

static void *worker(void *arg) {
  queue_t *q = arg;
  host_t *d = q->dev;
  pthread_mutex_lock(&d->mu);
  for (;;) {
    while ((q->count == 0 || (d->lag && !d->released)) && !d->stop)
      pthread_cond_wait(&d->cv, &d->mu);
    if (q->count == 0 && d->stop)
      break;
    cmd_t c = q->ring[q->head];
    q->head = (q->head + 1) % q->cap;
    q->count--;
    q->busy = 1;
    while (d->lag && !d->stop && !atomic_load(&d->failed) && lagging(d, q, &c))
      pthread_cond_wait(&d->cv, &d->mu);
    pthread_mutex_unlock(&d->mu);
    if (!atomic_load(&d->failed))
      run_cmd(d, q, &c);
    pthread_mutex_lock(&d->mu);
    q->busy = 0;
    pthread_cond_broadcast(&d->cv);
  }
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

/* Runs c on queue qi: inline when the queue has no worker (compute outside
 * integrity mode), else appended to the worker's ring. */
static void submit(host_t *d, int qi, cmd_t c) {
  queue_t *q = &d->q[qi];
  if (!q->started) {
    run_cmd(d, q, &c);
    return;
  }
  pthread_mutex_lock(&d->mu);
  while (q->count == q->cap) /* cannot happen: the ring holds a whole iteration */
    pthread_cond_wait(&d->cv, &d->mu);
  q->ring[(q->head + q->count) % q->cap] = c;
  q->count++;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
}

/* ---- the table ------------------------------------------------------------------- */

static void host_destroy(void *self) {
  host_t *d = self;
  if (!d)
    return;
  if (d->sync_init) {
    pthread_mutex_lock(&d->mu);
    d->stop = 1;
    pthread_cond_broadcast(&d->cv);
    pthread_mutex_unlock(&d->mu);
    for (int i = 0; i < SFCRT_QUEUE_COUNT; i++)
      if (d->q[i].started)
        pthread_join(d->q[i].thread, NULL);
    pthread_cond_destroy(&d->cv);
    pthread_mutex_destroy(&d->mu);
  }
  for (int i = 0; i < SFCRT_QUEUE_COUNT; i++)
    sfc_free(d->alloc, d->q[i].ring, (size_t)d->q[i].cap * sizeof(cmd_t));
  sfcrt_integrity_deinit(&d->check);
  sfc_free(d->alloc, (void *)d->event_done,
           (d->event_count ? d->event_count : 1) * sizeof(_Atomic uint64_t));
  sfc_free(d->alloc, d->arena_raw, d->arena_raw_bytes);
  sfc_free(d->alloc, d->harena, d->harena_bytes);
  sfc_free(d->alloc, d, sizeof *d);
}

static sfc_status_t host_create_parts(host_t *d, const sfcrt_device_config_t *cfg,
                                      sfc_error_t *err) {
  const sfc_plan_view_t *v = cfg->plan;
  d->event_done =
      sfc_calloc(d->alloc, d->event_count ? d->event_count : 1, sizeof(_Atomic uint64_t));
  if (!d->event_done)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "host: out of memory (events)");
  for (uint32_t e = 0; e < d->event_count; e++)
    atomic_init(&d->event_done[e], 0);
  if (d->integrity)
    SFC_TRY(sfcrt_integrity_init(&d->check, v, d->alloc, err));
  /* Which queues get a worker, and a ring big enough for one whole iteration. */
  uint64_t cap = 8;
  int want[SFCRT_QUEUE_COUNT] = {d->integrity, 0, 0};
  for (uint32_t k = 0; k < v->step_count; k++)
    cap += (uint64_t)v->steps[k].dep_count + 3;
  for (uint32_t i = 0; i < v->swap_count; i++) {
    cap += (uint64_t)v->swaps[i].dep_count + 3;
    want[v->swaps[i].direction == SFC_SWAP_IN ? SFCRT_QUEUE_H2D : SFCRT_QUEUE_D2H] = 1;
  }
  if (cap > UINT32_MAX / 2)
    return sfc_error_set(err, SFC_ERR_LIMIT, "host: plan too large for the command rings");
  if (pthread_mutex_init(&d->mu, NULL) != 0)
    return sfc_error_set(err, SFC_ERR_DEVICE, "host: pthread_mutex_init failed");
  if (pthread_cond_init(&d->cv, NULL) != 0) {
    pthread_mutex_destroy(&d->mu);
    return sfc_error_set(err, SFC_ERR_DEVICE, "host: pthread_cond_init failed");
  }
  d->sync_init = 1;
  for (int i = 0; i < SFCRT_QUEUE_COUNT; i++) {
    queue_t *q = &d->q[i];
    q->dev = d;
    q->index = i;
    q->waiting = SFC_PLAN_NONE;
    q->delay_us = cfg->options->host.delay_us[i];
    if (!want[i])
      continue;
    q->ring = sfc_calloc(d->alloc, (size_t)cap, sizeof(cmd_t));
    if (!q->ring)
      return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "host: out of memory (command ring)");
    q->cap = (uint32_t)cap;
  }
  for (int i = 0; i < SFCRT_QUEUE_COUNT; i++) {
    if (!d->q[i].ring)
      continue;
    if (pthread_create(&d->q[i].thread, NULL, worker, &d->q[i]) != 0)
      return sfc_error_set(err, SFC_ERR_DEVICE, "host: cannot start a queue thread");
    d->q[i].started = 1;
  }
  return SFC_OK;
}

static sfc_status_t host_create(const sfcrt_device_config_t *cfg, void **out_self,
                                sfc_error_t *err) {
  *out_self = NULL;
  host_t *d = sfc_calloc(cfg->alloc, 1, sizeof *d);
  if (!d)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "host: out of memory");
  d->plan = cfg->plan;
  d->alloc = cfg->alloc;
  d->integrity = cfg->options->host.integrity != 0;
  d->lag = cfg->options->host.lag;
  if (d->lag && (!d->integrity || d->lag < 0 || d->lag > SFCRT_HOST_LAG_COMPUTE)) {
    sfc_free(cfg->alloc, d, sizeof *d);
    return sfc_error_set(err, SFC_ERR_INVALID_ARGUMENT,
                         "host: options.host.lag must be 1 or 2 and needs integrity mode");
  }
  d->event_count = cfg->event_count;
  atomic_init(&d->failed, 0);
  sfc_status_t st = host_create_parts(d, cfg, err);
  if (st != SFC_OK) {
    host_destroy(d);
    return st;
  }
  *out_self = d;
  return SFC_OK;
}

static sfc_status_t host_arena_alloc(void *self, uint64_t bytes, uint32_t alignment,
                                     sfc_error_t *err) {
  host_t *d = self;
  if (bytes == 0)
    return SFC_OK;
  if (alignment == 0)
    alignment = 1;
  if (bytes > SIZE_MAX - alignment)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY,
                         "host: out of memory: an arena of %llu bytes does not fit",
                         (unsigned long long)bytes);
  d->arena_raw_bytes = (size_t)bytes + alignment;
  d->arena_raw = sfc_calloc(d->alloc, 1, d->arena_raw_bytes);
  if (!d->arena_raw) {
    d->arena_raw_bytes = 0;
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY,
                         "host: out of memory: cannot allocate an arena of %llu bytes",
                         (unsigned long long)bytes);
  }
  uintptr_t p = (uintptr_t)d->arena_raw;
  d->arena = d->arena_raw + ((alignment - p % alignment) % alignment);
  return SFC_OK;
}

static sfc_status_t host_host_alloc(void *self, uint64_t bytes, sfc_error_t *err) {
  host_t *d = self;
  if (bytes == 0)
    return SFC_OK;
  if (bytes > SIZE_MAX)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY,
                         "host: out of memory: the staging arena does not fit");
  d->harena = sfc_calloc(d->alloc, 1, (size_t)bytes);
  if (!d->harena)
    return sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY,
                         "host: out of memory: cannot allocate a staging arena of %llu bytes",
                         (unsigned long long)bytes);
  d->harena_bytes = (size_t)bytes;
  if (d->integrity) /* the framework's part: persistent tensors start in their homes */
    sfcrt_integrity_fill_homes(&d->check, d->harena);
  return SFC_OK;
}

static void *host_block_address(void *self, uint32_t block) {
  host_t *d = self;
  return d->arena ? d->arena + d->plan->blocks[block].offset : NULL;
}

static void *host_host_block_address(void *self, uint32_t block) {
  host_t *d = self;
  return d->harena ? d->harena + d->plan->host_blocks[block].offset : NULL;
}

static sfc_status_t host_iteration_begin(void *self, uint64_t iteration, sfc_error_t *err) {
  host_t *d = self;
  if (atomic_load(&d->failed))
    return report_failure(d, err);
  /* Workers are idle (iteration_end drained them); they read tag after taking the
   * mutex to pop their next command, which this store happens before. */
  pthread_mutex_lock(&d->mu);
  d->tag = iteration + 1;
  d->released = 0;
  pthread_mutex_unlock(&d->mu);
  return SFC_OK;
}

static sfc_status_t host_copy(void *self, sfcrt_queue_t q, const sfcrt_copy_t *c,
                              sfc_error_t *err) {
  host_t *d = self;
  if (c->bytes && (!c->device_ptr || !c->host_ptr))
    return sfc_error_set(err, SFC_ERR_INTERNAL, "host: swap %u has no memory", c->swap);
  submit(d, q, (cmd_t){CMD_COPY, c->swap, c, NULL});
  return SFC_OK;
}

static sfc_status_t host_event_record(void *self, sfcrt_queue_t q, uint32_t event,
                                      sfc_error_t *err) {
  (void)err;
  submit(self, q, (cmd_t){CMD_RECORD, event, NULL, NULL});
  return SFC_OK;
}

static sfc_status_t host_queue_wait(void *self, sfcrt_queue_t q, uint32_t event, sfc_error_t *err) {
  host_t *d = self;
  submit(d, q, (cmd_t){CMD_WAIT, event, NULL, NULL});
  if (atomic_load_explicit(&d->failed, memory_order_relaxed))
    return report_failure(d, err);
  return SFC_OK;
}

static sfc_status_t host_step_begin(void *self, const sfcrt_device_step_t *s, void **out_stream,
                                    sfc_error_t *err) {
  host_t *d = self;
  *out_stream = NULL;
  if (d->integrity)
    submit(d, SFCRT_QUEUE_COMPUTE, (cmd_t){CMD_CHECK, s->index, NULL, s->operands});
  if (atomic_load_explicit(&d->failed, memory_order_relaxed))
    return report_failure(d, err);
  return SFC_OK;
}

static sfc_status_t host_step_end(void *self, const sfcrt_device_step_t *s, sfc_error_t *err) {
  host_t *d = self;
  if (d->integrity)
    submit(d, SFCRT_QUEUE_COMPUTE, (cmd_t){CMD_FILL, s->index, NULL, s->operands});
  if (atomic_load_explicit(&d->failed, memory_order_relaxed))
    return report_failure(d, err);
  return SFC_OK;
}

static sfc_status_t host_iteration_end(void *self, sfc_error_t *err) {
  host_t *d = self;
  pthread_mutex_lock(&d->mu);
  d->released = 1; /* lag mode: the whole iteration is queued, start it */
  pthread_cond_broadcast(&d->cv);
  for (;;) {
    int idle = 1;
    for (int i = 0; i < SFCRT_QUEUE_COUNT; i++)
      if (d->q[i].count || d->q[i].busy)
        idle = 0;
    if (idle)
      break;
    pthread_cond_wait(&d->cv, &d->mu);
  }
  pthread_mutex_unlock(&d->mu);
  sfc_error_t e;
  if (d->integrity && !atomic_load(&d->failed) &&
      sfcrt_integrity_check_end(&d->check, d->tag, &e) != SFC_OK)
    set_failure(d, &e);
  if (atomic_load(&d->failed))
    return report_failure(d, err);
  return SFC_OK;
}

static void host_stats(void *self, sfcrt_stats_t *st) {
  host_t *d = self;
  pthread_mutex_lock(&d->mu);
  st->stalls = d->stalls;
  st->stall_us = d->stall_us;
  pthread_mutex_unlock(&d->mu);
}

const sfcrt_device_ops_t sfcrt_device_host = {
    .name = "host",
    .create = host_create,
    .arena_alloc = host_arena_alloc,
    .host_alloc = host_host_alloc,
    .block_address = host_block_address,
    .host_block_address = host_host_block_address,
    .iteration_begin = host_iteration_begin,
    .copy = host_copy,
    .event_record = host_event_record,
    .queue_wait = host_queue_wait,
    .step_begin = host_step_begin,
    .step_end = host_step_end,
    .iteration_end = host_iteration_end,
    .stats = host_stats,
    .destroy = host_destroy,
};
