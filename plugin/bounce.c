/* bounce.c: the pool of aligned request buffers (see bounce.h).
 *
 * One pool for the whole process with a cap on the bytes it allocates
 * (buffer_pool=, 256 MiB by default), instead of a buffer kept by each of
 * nbdkit's threads (up to 8 MiB each, so 128 MiB for one connection of 16
 * threads, and no bound over connections).  A request that finds no room
 * waits until buffers come back: it is slowed down, never failed.
 *
 * When a buffer is taken.  A request asks when the scheduler dispatches
 * it, not when it arrives: a request that takes its buffer first and then
 * waits for its turn, or for its group's cap, holds memory that others
 * need while it does nothing, and a tenant capped at 4 MB/s with eight
 * 32 MiB reads queued held the whole pool for a minute while every other
 * tenant's reads waited for it.  Taken at dispatch, every buffer in use
 * belongs to a request at the device (or its worker copying), and comes
 * back at the device's pace whatever the caps.  The dispatcher must not
 * block, so bounce_take never waits: a request with no room is kept
 * aside on its group's waiting list, without a device slot (engine.c),
 * and whoever gives back the buffer that makes room hands it on
 * (granted).  Nor does the dispatcher allocate or free: a request given
 * room but no cached buffer allocates it on its own worker
 * (bounce_alloc), and frees the cached buffers dropped to make that room.
 *
 * Who is given room, in what order: the groups share the pool by the
 * rule of core/poolshare.c (each active group cap / n, more only while
 * no other group waits or with its only buffer; waiters of the group
 * that holds least first).  The rule is asked each time room appears or
 * a request asks, until it names nobody.  Every grant that leaves a
 * group past its share, with more than one buffer, while another group
 * waits is counted per group (over_share): a check of the rule in use,
 * computed here from the pool's own state.
 *
 * Sizes are rounded up to 64 KiB up to 1 MiB and to 1 MiB above, and a
 * returned buffer is cached (a LIFO list, most recently used first, so
 * warm in cache) while the cached bytes stay under BOUNCE_KEEP; a
 * request takes a cached buffer of exactly its size (so each group's
 * bytes in use are what the rule counted), else room for a new one,
 * dropping the least recently used cached buffers until the pool's
 * bytes fit its cap.  Each buffer carries its size and group in a
 * header one alignment unit long in front of it.  One mutex guards
 * everything; the work under it is a walk over the groups and the
 * cached list.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "bigmem.h"
#include "bounce.h"
#include "poolshare.h"

#define BOUNCE_SMALL_STEP (64u << 10)   /* bytes: sizes up to 1 MiB */
#define BOUNCE_LARGE_STEP (1u << 20)    /* bytes: sizes above */
#define BOUNCE_KEEP (32u << 20)         /* bytes: most kept cached */

struct pbuf {
  struct pbuf *next;                    /* on the cached list, or dropped */
  size_t size;                          /* bytes, after the header */
  unsigned grp;                         /* the group it is given to */
};

/* A group's part of the pool (the rule's view of it: pool.rule[i]). */
struct pgrp {
  struct bounce_wait *head;             /* waiting, oldest first */
  struct bounce_wait **tail;
  struct bounce_grp_stats st;           /* counts; in_use, buffers and
                                           waiting filled in when read */
};

static struct {
  pthread_mutex_t mu;
  bool ready;
  bool shares;                          /* apply the rule's shares */
  size_t align;                         /* bytes; also the header's size */
  size_t keep;                          /* bytes: most kept cached */
  size_t cached;                        /* bytes on the list */
  struct pbuf *list;                    /* cached, most recent first */
  uint64_t seq;                         /* asks so far: order of arrival */
  unsigned ngrp;                        /* groups, >= 1 */
  struct pgrp *grp;                     /* [ngrp] */
  struct pool_grp *rule;                /* [ngrp]: each group as the rule
                                           sees it (in use, waiting ...) */
  struct bounce_stats st;
} pool = {
  .mu = PTHREAD_MUTEX_INITIALIZER,
};

static uint64_t
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static size_t
round_size (size_t n)
{
  size_t step = n <= BOUNCE_LARGE_STEP ? BOUNCE_SMALL_STEP : BOUNCE_LARGE_STEP;

  return n ? (n + step - 1) / step * step : step;
}

static void *
data_of (struct pbuf *b)
{
  return (char *) b + pool.align;
}

static struct pbuf *
pbuf_of (void *p)
{
  return (struct pbuf *) ((char *) p - pool.align);
}

/* Give b's memory back (bigmem: mmapped from 128 KiB on). */
static void
pbuf_free (struct pbuf *b)
{
  bigmem_free (b, pool.align + b->size, pool.align);
}

int
bounce_init (size_t align, size_t cap, unsigned groups, bool shares)
{
  struct pgrp *grp;
  struct pool_grp *rule;

  if (align < sizeof (struct pbuf) || (align & (align - 1)) ||
      cap < BOUNCE_LARGE_STEP)
    return -EINVAL;
  if (groups < 1)
    groups = 1;
  grp = calloc (groups, sizeof *grp);
  rule = calloc (groups, sizeof *rule);
  if (!grp || !rule) {
    free (grp);
    free (rule);
    return -ENOMEM;
  }
  for (unsigned i = 0; i < groups; i++)
    grp[i].tail = &grp[i].head;
  pthread_mutex_lock (&pool.mu);
  free (pool.grp);
  free (pool.rule);
  pool.grp = grp;
  pool.rule = rule;
  pool.ngrp = groups;
  pool.shares = shares;
  pool.align = align;
  pool.keep = cap / 4 < BOUNCE_KEEP ? cap / 4 : BOUNCE_KEEP;
  pool.cached = 0;
  pool.list = NULL;
  pool.seq = 0;
  pool.st = (struct bounce_stats) { .cap = cap, .groups = groups,
                                    .share = cap, .shares = shares };
  pool.ready = true;
  pthread_mutex_unlock (&pool.mu);
  return 0;
}

void
bounce_fini (void)
{
  struct pbuf *b;

  pthread_mutex_lock (&pool.mu);
  while ((b = pool.list) != NULL) {
    pool.list = b->next;
    pbuf_free (b);
  }
  pool.cached = 0;
  pool.ready = false;
  free (pool.grp);
  free (pool.rule);
  pool.grp = NULL;
  pool.rule = NULL;
  pool.ngrp = 0;
  pthread_mutex_unlock (&pool.mu);
}

/* Under the lock: take a cached buffer of exactly size bytes, or NULL. */
static struct pbuf *
take_cached (size_t size)
{
  for (struct pbuf **pp = &pool.list; *pp; pp = &(*pp)->next)
    if ((*pp)->size == size) {
      struct pbuf *b = *pp;

      *pp = b->next;
      pool.cached -= b->size;
      return b;
    }
  return NULL;
}

/* Under the lock: group gi's bytes or waiters are about to change
 * (before) or have changed; the rule keeps its memory of the group.
 */
static void
change (unsigned gi, uint64_t now, bool before)
{
  struct pool_grp *r = &pool.rule[gi];

  if (!before) {
    const struct bounce_wait *h = pool.grp[gi].head;

    r->want = h ? h->size : 0;
    r->seq = h ? h->seq : 0;
  }
  pool_grp_change (r, now, before);
}

/* Under the lock: the groups present now, and their share. */
static unsigned
present (uint64_t now)
{
  unsigned n = 0;

  for (unsigned i = 0; i < pool.ngrp; i++)
    n += pool_present (&pool.rule[i], now);
  pool.st.active = n;
  pool.st.share = (size_t) pool_share (pool.st.cap, n);
  return n;
}

/* Under the lock: count a grant past the share (see the top). */
static void
check_share (unsigned gi, uint64_t now)
{
  const struct pool_grp *r = &pool.rule[gi];
  uint64_t share = pool_share (pool.st.cap, present (now));
  bool other = false;

  for (unsigned i = 0; i < pool.ngrp; i++)
    other |= i != gi && pool.grp[i].head != NULL;
  if (other && r->nbuf > 1 && r->in_use > share)
    pool.grp[gi].st.over_share++;
}

/* Under the lock: give w, its group's first waiter, its buffer or room. */
static void
give (struct bounce_wait *w, uint64_t now)
{
  struct pgrp *g = &pool.grp[w->grp];
  struct pool_grp *r = &pool.rule[w->grp];
  struct pbuf *b;

  change (w->grp, now, true);
  g->head = w->next;
  if (!g->head)
    g->tail = &g->head;
  w->next = NULL;
  w->waiting = false;
  r->in_use += w->size;
  r->nbuf++;
  change (w->grp, now, false);
  g->st.gets++;
  if (r->in_use > g->st.peak)
    g->st.peak = r->in_use;
  pool.st.in_use += w->size;
  pool.st.gets++;
  if (pool.st.in_use > pool.st.peak)
    pool.st.peak = pool.st.in_use;
  if (w->t0) {
    uint64_t d = now > w->t0 ? now - w->t0 : 0;

    g->st.wait_ns += d;
    if (d > g->st.wait_max_ns)
      g->st.wait_max_ns = d;
    pool.st.wait_ns += d;
  }
  check_share (w->grp, now);

  w->drop = NULL;
  b = take_cached (w->size);
  if (b) {
    b->grp = w->grp;
    w->buf = data_of (b);
    return;
  }
  /* Room for a new one: drop the least recently used cached buffers
   * until it fits (bounce_alloc frees them, off the lock).
   */
  w->buf = NULL;
  while (pool.st.total + w->size > pool.st.cap && pool.list) {
    struct pbuf **pp = &pool.list;

    while ((*pp)->next)
      pp = &(*pp)->next;
    b = *pp;
    *pp = NULL;
    pool.cached -= b->size;
    pool.st.total -= b->size;
    pool.st.frees++;
    b->next = w->drop;
    w->drop = b;
  }
  pool.st.total += w->size;
  pool.st.allocs++;
}

/* Under the lock: serve waiters while the rule names one.  Those that
 * had to wait go on *done (through next), for their granted calls once
 * the lock is dropped.
 */
static void
serve (struct bounce_wait **done, uint64_t now)
{
  for (;;) {
    struct bounce_wait *w;
    int i;

    i = pool_next (pool.st.cap, pool.st.in_use, pool.rule, pool.ngrp, now,
                   pool.shares);
    if (i < 0)
      break;
    w = pool.grp[i].head;
    give (w, now);
    if (w->t0) {
      w->next = *done;
      *done = w;
    }
  }
  present (now);
}

/* Off the lock: tell the waiters served that they have their buffers,
 * in the order they were served (done has the last first).
 */
static void
tell (struct bounce_wait *done)
{
  struct bounce_wait *fifo = NULL;

  while (done) {
    struct bounce_wait *next = done->next;

    done->next = fifo;
    fifo = done;
    done = next;
  }
  done = fifo;
  while (done) {
    struct bounce_wait *next = done->next;

    done->next = NULL;
    done->granted (done);       /* done may be gone after this */
    done = next;
  }
}

int
bounce_take (struct bounce_wait *w, unsigned grp, size_t n)
{
  size_t size = round_size (n);
  struct bounce_wait *done = NULL;
  struct pgrp *g;
  uint64_t now;
  bool waits;

  pthread_mutex_lock (&pool.mu);
  if (!pool.ready || size > pool.st.cap) {
    pthread_mutex_unlock (&pool.mu);
    return -ENOMEM;
  }
  now = mono_ns ();
  if (grp >= pool.ngrp)
    grp = pool.ngrp - 1;
  g = &pool.grp[grp];
  w->next = NULL;
  w->size = size;
  w->grp = grp;
  w->seq = ++pool.seq;
  w->t0 = 0;
  w->buf = NULL;
  w->drop = NULL;
  w->waiting = true;
  change (grp, now, true);
  *g->tail = w;
  g->tail = &w->next;
  change (grp, now, false);
  serve (&done, now);
  waits = w->waiting;
  if (waits) {
    w->t0 = now;
    g->st.waits++;
    pool.st.waits++;
  }
  pthread_mutex_unlock (&pool.mu);
  tell (done);
  return waits ? -EAGAIN : 0;
}

int
bounce_alloc (struct bounce_wait *w)
{
  struct bounce_wait *done = NULL;
  struct pgrp *g;
  uint64_t now;
  void *p;

  while (w->drop) {
    struct pbuf *b = w->drop;

    w->drop = b->next;
    pbuf_free (b);
  }
  if (w->buf)
    return 0;
  if ((p = bigmem_alloc (pool.align + w->size, pool.align)) != NULL) {
    struct pbuf *b = p;

    b->size = w->size;
    b->grp = w->grp;
    w->buf = data_of (b);
    return 0;
  }
  /* Give the room back. */
  pthread_mutex_lock (&pool.mu);
  now = mono_ns ();
  g = &pool.grp[w->grp];
  change (w->grp, now, true);
  pool.rule[w->grp].in_use -= w->size;
  pool.rule[w->grp].nbuf--;
  change (w->grp, now, false);
  g->st.gets--;
  pool.st.in_use -= w->size;
  pool.st.gets--;
  pool.st.total -= w->size;
  pool.st.allocs--;
  serve (&done, now);
  pthread_mutex_unlock (&pool.mu);
  tell (done);
  return -ENOMEM;
}

void
bounce_put (void *p)
{
  struct pbuf *b = pbuf_of (p);
  struct bounce_wait *done = NULL;
  struct pbuf *drop = NULL;
  unsigned gi;
  uint64_t now;

  pthread_mutex_lock (&pool.mu);
  now = mono_ns ();
  gi = b->grp < pool.ngrp ? b->grp : pool.ngrp - 1;
  change (gi, now, true);
  pool.rule[gi].in_use -= b->size;
  pool.rule[gi].nbuf--;
  change (gi, now, false);
  pool.st.in_use -= b->size;
  if (pool.ready && pool.cached + b->size <= pool.keep) {
    b->next = pool.list;
    pool.list = b;
    pool.cached += b->size;
  }
  else {
    pool.st.total -= b->size;
    pool.st.frees++;
    drop = b;
  }
  serve (&done, now);
  pthread_mutex_unlock (&pool.mu);
  if (drop)
    pbuf_free (drop);
  tell (done);
}

void
bounce_stats (struct bounce_stats *st)
{
  pthread_mutex_lock (&pool.mu);
  if (pool.ready)
    present (mono_ns ());
  *st = pool.st;
  pthread_mutex_unlock (&pool.mu);
}

int
bounce_grp_stats (unsigned grp, struct bounce_grp_stats *st)
{
  int err = -ENOENT;

  pthread_mutex_lock (&pool.mu);
  if (grp < pool.ngrp) {
    *st = pool.grp[grp].st;
    st->in_use = pool.rule[grp].in_use;
    st->buffers = pool.rule[grp].nbuf;
    st->waiting = 0;
    for (const struct bounce_wait *w = pool.grp[grp].head; w; w = w->next)
      st->waiting++;
    err = 0;
  }
  pthread_mutex_unlock (&pool.mu);
  return err;
}
