/* pack_bestfit.c — best-fit with offset lines (Sekiyama et al., "Profile-guided
 * memory optimization for deep neural networks", 2018, §3.2; after Burke, Kendall
 * and Whitwell's best-fit for strip packing, 2004).
 *
 * The placed blocks form a skyline over time: a list of offset lines, each a time
 * span [l, r) at a height h, neighbours at different heights. Repeat until every
 * block is placed: take the lowest line (leftmost on ties); among the unplaced
 * blocks whose lifetime lies inside [l, r), place the one with the longest
 * lifetime (ties: larger, then lower index) at offset h, which splits the line
 * into up to three; when none fits, lift the line to the lower of its neighbours
 * and merge it with the neighbour(s) at that height. Every block sits on the
 * skyline under its whole lifetime, so nothing it meets in time lies above h.
 *
 * The paper's version is quadratic. Here the lines are a linked list with a
 * binary heap keyed (h, l) (stale entries skipped), and the query "longest-lived
 * unplaced block with start >= l and end <= r" is a range tree: the blocks sorted
 * by start, a merge-sort tree over that order whose every node keeps its blocks
 * sorted by end with a max-segment tree over their preference scores (0 once
 * placed). A query covers the start range with O(log n) nodes and in each takes
 * a prefix maximum over the blocks that end by r: O(log^2 n), skipped when a
 * min-tree of end times over the start order says nothing in the range ends by
 * r (O(log n): most lines that get lifted). A placement clears the block in its
 * O(log n) nodes, found through a per-level position index: O(log^2 n) at most,
 * usually less (an update stops where the maximum does not change). Every
 * placement adds at most two
 * lines and every lift removes at least one, so there are O(n) steps:
 * O(n log^2 n) time, O(n log n) memory.
 */
#include <stdlib.h>
#include <string.h>

#include "pack.h"

#define BF_MAX_BLOCKS (UINT32_C(1) << 21) /* ~700 MiB of index at most */

/* The range tree. Level d groups the start-ordered positions in runs of 2^d;
 * key[d][x + j] is the j-th block of the run at x by (end rank << 32 | rank),
 * and tree[d][2x .. 2x + 2m) the run's max tree over score = n - rank. */
typedef struct rtree {
  uint32_t n, levels;
  uint64_t **key;
  uint32_t **tree;
  uint32_t **at;     /* at[d][p]: index in level d of the block at start position p */
  uint32_t *start;   /* [n] start rank at each position */
  uint32_t *min_end; /* [2n] min-tree of end ranks over positions, UINT32_MAX once placed */
} rtree_t;

typedef struct seg {
  uint64_t h;
  uint32_t l, r; /* time ranks */
  uint32_t prev, next;
  bool alive;
} seg_t;

#define NIL UINT32_MAX

typedef struct hent {
  uint64_t h;
  uint32_t l, id;
} hent_t;

typedef struct heap {
  hent_t *a;
  size_t n, cap;
} heap_t;

static bool hent_less(const hent_t *x, const hent_t *y) {
  return x->h != y->h ? x->h < y->h : x->l < y->l;
}

static bool heap_push(heap_t *hp, hent_t e) {
  if (hp->n == hp->cap) {
    size_t cap = hp->cap ? hp->cap * 2 : 64;
    hent_t *a = realloc(hp->a, cap * sizeof *a);
    if (!a)
      return false;
    hp->a = a;
    hp->cap = cap;
  }
  size_t i = hp->n++;
  while (i > 0 && hent_less(&e, &hp->a[(i - 1) / 2])) {
    hp->a[i] = hp->a[(i - 1) / 2];
    i = (i - 1) / 2;
  }
  hp->a[i] = e;
  return true;
}

static hent_t heap_pop(heap_t *hp) {
  hent_t top = hp->a[0], last = hp->a[--hp->n];
  size_t i = 0;
  for (;;) {
    size_t c = 2 * i + 1;
    if (c >= hp->n)
      break;
    if (c + 1 < hp->n && hent_less(&hp->a[c + 1], &hp->a[c]))
      c++;
    if (!hent_less(&hp->a[c], &last))
      break;
    hp->a[i] = hp->a[c];
    i = c;
  }
  if (hp->n)
    hp->a[i] = last;
  return top;
}

typedef struct pref {
  uint64_t life, size;
  uint32_t id;
} pref_t;

static int pref_cmp(const void *pa, const void *pb) {
  const pref_t *x = pa, *y = pb;
  if (x->life != y->life)
    return x->life > y->life ? -1 : 1;
  if (x->size != y->size)
    return x->size > y->size ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

typedef struct startkey {
  int64_t start;
  uint32_t id;
} startkey_t;

static int startkey_cmp(const void *pa, const void *pb) {
  const startkey_t *x = pa, *y = pb;
  if (x->start != y->start)
    return x->start < y->start ? -1 : 1;
  return x->id < y->id ? -1 : (x->id > y->id);
}

static void rtree_free(rtree_t *t) {
  for (uint32_t d = 0; t->key && d < t->levels; d++)
    free(t->key[d]);
  for (uint32_t d = 0; t->tree && d < t->levels; d++)
    free(t->tree[d]);
  for (uint32_t d = 0; t->at && d < t->levels; d++)
    free(t->at[d]);
  free(t->key);
  free(t->tree);
  free(t->at);
  free(t->min_end);
  free(t->start);
}

static void build_tree(uint32_t *tr, const uint64_t *key, uint32_t m, uint32_t n) {
  for (uint32_t j = 0; j < m; j++)
    tr[m + j] = n - (uint32_t)key[j];
  for (uint32_t i = m - 1; i >= 1; i--)
    tr[i] = tr[2 * i] > tr[2 * i + 1] ? tr[2 * i] : tr[2 * i + 1];
}

/* pos_key[p] = (end rank << 32 | rank) of the block at start position p. */
static bool rtree_build(rtree_t *t, const uint64_t *pos_key, uint32_t n) {
  t->n = n;
  t->levels = 1;
  while (((uint64_t)1 << t->levels) <= n)
    t->levels++;
  t->key = calloc(t->levels, sizeof *t->key);
  t->tree = calloc(t->levels, sizeof *t->tree);
  t->at = calloc(t->levels, sizeof *t->at);
  uint32_t *orig = malloc(2 * (size_t)n * sizeof *orig); /* start position per index */
  if (!t->key || !t->tree || !t->at || !orig) {
    free(orig);
    return false;
  }
  for (uint32_t d = 0; d < t->levels; d++) {
    t->key[d] = malloc(n * sizeof(uint64_t));
    t->tree[d] = malloc(2 * (size_t)n * sizeof(uint32_t));
    t->at[d] = malloc(n * sizeof(uint32_t));
    if (!t->key[d] || !t->tree[d] || !t->at[d]) {
      free(orig);
      return false;
    }
    uint64_t *k = t->key[d];
    uint32_t run = UINT32_C(1) << d, *og = orig + (d & 1) * (size_t)n;
    if (d == 0) {
      memcpy(k, pos_key, n * sizeof *k);
      for (uint32_t p = 0; p < n; p++)
        og[p] = p;
    } else {
      const uint64_t *src = t->key[d - 1];
      const uint32_t *so = orig + ((d - 1) & 1) * (size_t)n;
      uint32_t half = run / 2;
      for (uint32_t x = 0; x < n; x += run) {
        uint32_t a = x, am = x + half < n ? x + half : n, b = am, bm = x + run < n ? x + run : n;
        uint32_t o = x;
        while (a < am && b < bm) {
          uint32_t from = src[a] < src[b] ? a++ : b++;
          og[o] = so[from];
          k[o++] = src[from];
        }
        for (; a < am; a++, o++) {
          og[o] = so[a];
          k[o] = src[a];
        }
        for (; b < bm; b++, o++) {
          og[o] = so[b];
          k[o] = src[b];
        }
      }
    }
    for (uint32_t i = 0; i < n; i++)
      t->at[d][og[i]] = i;
    for (uint32_t x = 0; x < n; x += run) {
      uint32_t m = x + run < n ? run : n - x;
      build_tree(t->tree[d] + 2 * (size_t)x, k + x, m, n);
    }
  }
  free(orig);
  return true;
}

/* The smallest end rank of an unplaced block at start positions [lo, hi): when it
 * is past the line's end nothing fits and the O(log^2 n) query is skipped (most
 * lines that get lifted). O(log n). */
static uint32_t rtree_min_end(const rtree_t *t, uint32_t lo, uint32_t hi) {
  uint32_t best = UINT32_MAX;
  for (lo += t->n, hi += t->n; lo < hi; lo >>= 1, hi >>= 1) {
    if (lo & 1) {
      if (t->min_end[lo] < best)
        best = t->min_end[lo];
      lo++;
    }
    if (hi & 1) {
      hi--;
      if (t->min_end[hi] < best)
        best = t->min_end[hi];
    }
  }
  return best;
}

/* Max score over the blocks at start positions [lo, hi) whose end rank <= r. */
static uint32_t rtree_query(const rtree_t *t, uint32_t lo, uint32_t hi, uint32_t r) {
  uint32_t best = 0;
  uint64_t limit = ((uint64_t)r << 32) | UINT32_MAX;
  while (lo < hi) {
    uint32_t d = 0;
    while (d + 1 < t->levels && (lo & ((UINT32_C(1) << (d + 1)) - 1)) == 0 &&
           (uint64_t)lo + (UINT64_C(1) << (d + 1)) <= hi)
      d++;
    uint32_t m = UINT32_C(1) << d;
    const uint64_t *k = t->key[d] + lo;
    uint32_t a = 0, b = m; /* count of keys <= limit */
    while (a < b) {
      uint32_t mid = a + (b - a) / 2;
      if (k[mid] <= limit)
        a = mid + 1;
      else
        b = mid;
    }
    const uint32_t *tr = t->tree[d] + 2 * (size_t)lo;
    uint32_t ql = m, qh = m + a;
    while (ql < qh) {
      if (ql & 1) {
        if (tr[ql] > best)
          best = tr[ql];
        ql++;
      }
      if (qh & 1) {
        qh--;
        if (tr[qh] > best)
          best = tr[qh];
      }
      ql >>= 1;
      qh >>= 1;
    }
    lo += m;
  }
  return best;
}

static void rtree_erase(rtree_t *t, uint32_t pos) {
  uint32_t *me = t->min_end;
  me[t->n + pos] = UINT32_MAX;
  for (uint32_t i = (t->n + pos) >> 1; i >= 1; i >>= 1) {
    uint32_t v = me[2 * i] < me[2 * i + 1] ? me[2 * i] : me[2 * i + 1];
    if (me[i] == v)
      break;
    me[i] = v;
  }
  for (uint32_t d = 0; d < t->levels; d++) {
    uint32_t run = UINT32_C(1) << d, x = pos & ~(run - 1);
    uint32_t m = x + run < t->n ? run : t->n - x;
    uint32_t *tr = t->tree[d] + 2 * (size_t)x;
    uint32_t i = m + (t->at[d][pos] - x);
    tr[i] = 0;
    for (i >>= 1; i >= 1; i >>= 1) {
      uint32_t v = tr[2 * i] > tr[2 * i + 1] ? tr[2 * i] : tr[2 * i + 1];
      if (tr[i] == v)
        break; /* the maxima above are unchanged too */
      tr[i] = v;
    }
  }
}

typedef struct bf {
  seg_t *seg;
  uint32_t n_seg;
  heap_t heap;
} bf_t;

static bool push_seg(bf_t *s, uint32_t id) {
  return heap_push(&s->heap, (hent_t){s->seg[id].h, s->seg[id].l, id});
}

static uint32_t new_seg(bf_t *s, uint64_t h, uint32_t l, uint32_t r) {
  uint32_t id = s->n_seg++;
  s->seg[id] = (seg_t){h, l, r, NIL, NIL, true};
  return id;
}

/* Merges line id with its neighbours at the same height; returns false on OOM.
 * A merge into the left neighbour keeps that line's heap key; otherwise id's key
 * (h, l) is new and pushed when `push` is set. */
static bool merge_seg(bf_t *s, uint32_t id, bool push) {
  seg_t *g = s->seg;
  uint32_t p = g[id].prev, q = g[id].next;
  if (p != NIL && g[p].h == g[id].h) {
    g[p].r = g[id].r;
    g[p].next = q;
    if (q != NIL)
      g[q].prev = p;
    g[id].alive = false;
    id = p;
    push = false;
  }
  q = g[id].next;
  if (q != NIL && g[q].h == g[id].h) {
    g[id].r = g[q].r;
    g[id].next = g[q].next;
    if (g[q].next != NIL)
      g[g[q].next].prev = id;
    g[q].alive = false;
  }
  return !push || push_seg(s, id);
}

sfc_status_t sfc_pack_best_fit(sfc_pack_problem_t *p, const sfc_pack_options_t *opt,
                               sfc_pack_result_t *out, sfc_error_t *err) {
  (void)opt;
  return sfc_pack_best_fit_ordered(p, NULL, out, err);
}

sfc_status_t sfc_pack_best_fit_ordered(sfc_pack_problem_t *p, const uint32_t *given,
                                       sfc_pack_result_t *out, sfc_error_t *err) {
  size_t n = p->count;
  uint64_t a = p->alignment;
  out->algorithm = "best-fit";
  out->peak = 0;
  if (n == 0)
    return SFC_OK;
  if (n > BF_MAX_BLOCKS)
    return sfc_error_set(err, SFC_ERR_LIMIT, "best-fit: too many blocks (%zu, at most %u)", n,
                         BF_MAX_BLOCKS);
  uint32_t un = (uint32_t)n;
  int64_t *times = malloc(2 * n * sizeof *times);
  pref_t *pref = malloc(n * sizeof *pref);
  startkey_t *sk = malloc(n * sizeof *sk);
  uint32_t *rank = malloc(n * sizeof *rank), *byrank = malloc(n * sizeof *byrank);
  uint32_t *pos = malloc(n * sizeof *pos);
  uint64_t *pos_key = malloc(n * sizeof *pos_key);
  uint32_t *s_rank = malloc(n * sizeof *s_rank), *e_rank = malloc(n * sizeof *e_rank);
  rtree_t t = {0};
  /* one line at first, at most three new per placement, none per lift */
  bf_t s = {.seg = malloc((3 * n + 2) * sizeof(seg_t))};
  sfc_status_t st = SFC_OK;
  if (!times || !pref || !sk || !rank || !byrank || !pos || !pos_key || !s_rank || !e_rank ||
      !s.seg)
    goto oom;

  size_t nt = sfc_pack_times_distinct(p, times);
  for (size_t i = 0; i < n; i++) {
    const sfc_pack_block_t *b = &p->blocks[i];
    s_rank[i] = sfc_pack_time_rank(times, nt, b->start);
    e_rank[i] = sfc_pack_time_rank(times, nt, b->end);
    pref[i] = (pref_t){(uint64_t)b->end - (uint64_t)b->start, b->size, (uint32_t)i};
    sk[i] = (startkey_t){b->start, (uint32_t)i};
  }
  if (!given)
    qsort(pref, n, sizeof *pref, pref_cmp);
  for (uint32_t k = 0; k < un; k++) {
    uint32_t i = given ? given[k] : pref[k].id;
    rank[i] = k;
    byrank[k] = i;
  }
  qsort(sk, n, sizeof *sk, startkey_cmp);
  for (uint32_t k = 0; k < un; k++) {
    uint32_t i = sk[k].id;
    pos[i] = k;
    pos_key[k] = ((uint64_t)e_rank[i] << 32) | rank[i];
  }
  if (!rtree_build(&t, pos_key, un))
    goto oom;
  t.start = malloc(n * sizeof *t.start);
  t.min_end = malloc(2 * n * sizeof *t.min_end);
  if (!t.start || !t.min_end)
    goto oom;
  for (uint32_t k = 0; k < un; k++) {
    t.start[k] = s_rank[sk[k].id];
    t.min_end[un + k] = e_rank[sk[k].id];
  }
  t.min_end[0] = UINT32_MAX;
  for (uint32_t i = un - 1; i >= 1; i--)
    t.min_end[i] =
        t.min_end[2 * i] < t.min_end[2 * i + 1] ? t.min_end[2 * i] : t.min_end[2 * i + 1];

  if (!push_seg(&s, new_seg(&s, 0, 0, (uint32_t)(nt - 1))))
    goto oom;
  for (size_t left = n; left > 0;) {
    if (s.heap.n == 0) {
      st = sfc_error_set(err, SFC_ERR_INTERNAL, "best-fit: no line left with %zu blocks", left);
      goto done;
    }
    hent_t e = heap_pop(&s.heap);
    seg_t *g = &s.seg[e.id];
    if (!g->alive || g->h != e.h || g->l != e.l)
      continue; /* stale */
    uint32_t id = e.id;
    /* start positions [lo, hi): start rank in [l, r) */
    uint32_t lo = 0, hi = un;
    {
      uint32_t x = 0, y = un;
      while (x < y) {
        uint32_t mid = x + (y - x) / 2;
        if (t.start[mid] < g->l)
          x = mid + 1;
        else
          y = mid;
      }
      lo = x;
      y = un;
      while (x < y) {
        uint32_t mid = x + (y - x) / 2;
        if (t.start[mid] < g->r)
          x = mid + 1;
        else
          y = mid;
      }
      hi = x;
    }
    uint32_t score =
        lo < hi && rtree_min_end(&t, lo, hi) <= g->r ? rtree_query(&t, lo, hi, g->r) : 0;
    if (score == 0) { /* nothing fits: lift the line to its lower neighbour */
      uint32_t pv = g->prev, nx = g->next;
      if (pv == NIL && nx == NIL) {
        st = sfc_error_set(err, SFC_ERR_INTERNAL, "best-fit: %zu blocks fit nowhere", left);
        goto done;
      }
      uint64_t h = pv == NIL                   ? s.seg[nx].h
                   : nx == NIL                 ? s.seg[pv].h
                   : s.seg[pv].h < s.seg[nx].h ? s.seg[pv].h
                                               : s.seg[nx].h;
      g->h = h;
      if (!merge_seg(&s, id, true))
        goto oom;
      continue;
    }
    uint32_t bi = byrank[un - score];
    sfc_pack_block_t *b = &p->blocks[bi];
    rtree_erase(&t, pos[bi]);
    left--;
    b->offset = g->h;
    if (b->offset + b->size > out->peak)
      out->peak = b->offset + b->size;
    uint64_t top = g->h + ((b->size + a - 1) & ~(a - 1));
    uint32_t l = g->l, r = g->r, sb = s_rank[bi], eb = e_rank[bi];
    /* Replace the line by [l, sb) h, [sb, eb) top, [eb, r) h. */
    uint32_t prev = g->prev, next = g->next;
    uint64_t h = g->h;
    g->alive = false;
    uint32_t ids[3], k = 0;
    if (sb > l)
      ids[k++] = new_seg(&s, h, l, sb);
    uint32_t mid = new_seg(&s, top, sb, eb);
    ids[k++] = mid;
    if (eb < r)
      ids[k++] = new_seg(&s, h, eb, r);
    for (uint32_t j = 0; j < k; j++) {
      s.seg[ids[j]].prev = j == 0 ? prev : ids[j - 1];
      s.seg[ids[j]].next = j + 1 == k ? next : ids[j + 1];
    }
    if (prev != NIL)
      s.seg[prev].next = ids[0];
    if (next != NIL)
      s.seg[next].prev = ids[k - 1];
    for (uint32_t j = 0; j < k; j++)
      if (ids[j] != mid && !push_seg(&s, ids[j]))
        goto oom;
    if (!merge_seg(&s, mid, true))
      goto oom;
  }
  goto done;

oom:
  st = sfc_error_set(err, SFC_ERR_OUT_OF_MEMORY, "best-fit: out of memory for %zu blocks", n);
done:
  rtree_free(&t);
  free(s.seg);
  free(s.heap.a);
  free(times);
  free(pref);
  free(sk);
  free(rank);
  free(byrank);
  free(pos);
  free(pos_key);
  free(s_rank);
  free(e_rank);
  return st;
}
