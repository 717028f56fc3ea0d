/* pool.c — bump allocator for the compiler (see pool.h). Chunks of 64 KiB (or the
 * request's size when larger) are chained newest first; freeing walks the chain. */
#include "pool.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define POOL_CHUNK_BYTES (64u * 1024u)
#define POOL_ALIGN       16u

struct sfc_pool_chunk {
  sfc_pool_chunk_t *next;
  size_t capacity;
  _Alignas(16) unsigned char data[];
};

void *sfc_pool_calloc(sfc_pool_t *pool, size_t count, size_t size) {
  if (size != 0 && count > SIZE_MAX / size)
    return NULL;
  size_t bytes = count * size;
  if (bytes == 0)
    bytes = 1;
  if (bytes > SIZE_MAX - POOL_ALIGN - sizeof(sfc_pool_chunk_t))
    return NULL;
  bytes = (bytes + POOL_ALIGN - 1) & ~(size_t)(POOL_ALIGN - 1);
  if (!pool->head || pool->head->capacity - pool->used < bytes) {
    size_t cap = bytes > POOL_CHUNK_BYTES ? bytes : POOL_CHUNK_BYTES;
    sfc_pool_chunk_t *c = malloc(sizeof *c + cap);
    if (!c)
      return NULL;
    c->capacity = cap;
    if (bytes > POOL_CHUNK_BYTES && pool->head) {
      /* A big request gets its own chunk behind the head, so the head keeps its space. */
      c->next = pool->head->next;
      pool->head->next = c;
      pool->total_bytes += bytes;
      memset(c->data, 0, bytes);
      return c->data;
    }
    c->next = pool->head;
    pool->head = c;
    pool->used = 0;
  }
  void *p = pool->head->data + pool->used;
  pool->used += bytes;
  pool->total_bytes += bytes;
  memset(p, 0, bytes);
  return p;
}

char *sfc_pool_strndup(sfc_pool_t *pool, const char *s, size_t n) {
  if (n == SIZE_MAX)
    return NULL;
  char *p = sfc_pool_calloc(pool, n + 1, 1);
  if (p && n)
    memcpy(p, s, n);
  return p;
}

char *sfc_pool_strdup(sfc_pool_t *pool, const char *s) {
  return sfc_pool_strndup(pool, s, strlen(s));
}

void sfc_pool_free_all(sfc_pool_t *pool) {
  sfc_pool_chunk_t *c = pool->head;
  while (c) {
    sfc_pool_chunk_t *next = c->next;
    free(c);
    c = next;
  }
  pool->head = NULL;
  pool->used = 0;
  pool->total_bytes = 0;
}
