/* pool.h — a bump allocator that frees everything at once.
 *
 * The compiler is a batch program: a graph, an IR and their strings live exactly as
 * long as one compile. Allocating them from a pool makes "no leak on any input"
 * true by construction: every error path just frees the pool.
 *
 *   sfc_pool_t pool = {0};
 *   sfc_tensor_t *t = sfc_pool_calloc(&pool, n, sizeof *t);   // zeroed, NULL on OOM
 *   ...
 *   sfc_pool_free_all(&pool);
 *
 * Allocations are 16-byte aligned. Large requests get a chunk of their own.
 */
#ifndef SFC_POOL_H
#define SFC_POOL_H

#include <stddef.h>

typedef struct sfc_pool_chunk sfc_pool_chunk_t;

typedef struct sfc_pool {
  sfc_pool_chunk_t *head; /* newest chunk first */
  size_t used;            /* bytes used in head */
  size_t total_bytes;     /* bytes handed out so far (statistics) */
} sfc_pool_t;

/* count * size zeroed bytes, or NULL on overflow or out of memory. */
void *sfc_pool_calloc(sfc_pool_t *pool, size_t count, size_t size);

/* A copy of s (n bytes, NUL added), or NULL on out of memory. */
char *sfc_pool_strndup(sfc_pool_t *pool, const char *s, size_t n);
char *sfc_pool_strdup(sfc_pool_t *pool, const char *s);

/* Frees every chunk; the pool is empty and reusable afterwards. */
void sfc_pool_free_all(sfc_pool_t *pool);

#endif /* SFC_POOL_H */
