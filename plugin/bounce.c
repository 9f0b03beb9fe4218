/* bounce.c: the pool of aligned request buffers (see bounce.h).
 *
 * One pool for the whole process with a cap on the bytes it allocates
 * (buffer_pool=, 256 MiB by default), instead of a buffer kept by each of
 * nbdkit's threads (up to 8 MiB each, so 128 MiB for one connection of 16
 * threads, and no bound over connections).  A request that would take the
 * pool past its cap first makes it drop cached buffers, then waits until
 * another request gives one back: it is slowed down, never failed.
 *
 * Sizes are rounded up to 64 KiB up to 1 MiB and to 1 MiB above, and a
 * returned buffer is cached (a LIFO list, most recently used first, so
 * warm in cache) while the cached bytes stay under BOUNCE_KEEP; a get
 * takes the smallest cached buffer that fits and is at most twice the
 * size asked for.  Each buffer carries its size in a header one alignment
 * unit long in front of it.  One mutex guards everything; the work under
 * it is a short list walk.
 */
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>

#include "bounce.h"

#define BOUNCE_SMALL_STEP (64u << 10)   /* bytes: sizes up to 1 MiB */
#define BOUNCE_LARGE_STEP (1u << 20)    /* bytes: sizes above */
#define BOUNCE_KEEP (32u << 20)         /* bytes: most kept cached */

struct pbuf {
  struct pbuf *next;                    /* on the cached list */
  size_t size;                          /* bytes, after the header */
};

static struct {
  pthread_mutex_t mu;
  pthread_cond_t cv;                    /* a buffer came back */
  bool ready;
  size_t align;                         /* bytes; also the header's size */
  size_t keep;                          /* bytes: most kept cached */
  size_t cached;                        /* bytes on the list */
  struct pbuf *list;                    /* cached, most recent first */
  struct bounce_stats st;
} pool = {
  .mu = PTHREAD_MUTEX_INITIALIZER,
  .cv = PTHREAD_COND_INITIALIZER,
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

int
bounce_init (size_t align, size_t cap)
{
  if (align < sizeof (struct pbuf) || (align & (align - 1)) ||
      cap < BOUNCE_LARGE_STEP)
    return -EINVAL;
  pthread_mutex_lock (&pool.mu);
  pool.align = align;
  pool.keep = cap / 4 < BOUNCE_KEEP ? cap / 4 : BOUNCE_KEEP;
  pool.cached = 0;
  pool.list = NULL;
  pool.st = (struct bounce_stats) { .cap = cap };
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
    free (b);
  }
  pool.cached = 0;
  pool.ready = false;
  pthread_mutex_unlock (&pool.mu);
}

/* Under the lock: take the best cached buffer for size, or NULL. */
static struct pbuf *
take_cached (size_t size)
{
  struct pbuf **pp, **best = NULL;

  for (pp = &pool.list; *pp; pp = &(*pp)->next)
    if ((*pp)->size >= size && (*pp)->size / 2 <= size &&
        (!best || (*pp)->size < (*best)->size))
      best = pp;
  if (!best)
    return NULL;
  {
    struct pbuf *b = *best;

    *best = b->next;
    pool.cached -= b->size;
    return b;
  }
}

static void
account_get (size_t size)
{
  pool.st.gets++;
  pool.st.in_use += size;
  if (pool.st.in_use > pool.st.peak)
    pool.st.peak = pool.st.in_use;
}

void *
bounce_get (size_t n)
{
  size_t size = round_size (n);
  struct pbuf *b;
  bool waited = false;
  uint64_t t0 = 0;

  pthread_mutex_lock (&pool.mu);
  if (!pool.ready || size > pool.st.cap) {
    pthread_mutex_unlock (&pool.mu);
    return NULL;
  }
  for (;;) {
    b = take_cached (size);
    if (b)
      break;
    if (pool.st.total + size <= pool.st.cap) {
      /* Allocate outside the lock, the bytes reserved meanwhile. */
      void *p;

      pool.st.total += size;
      pool.st.allocs++;
      account_get (size);
      if (waited)
        pool.st.wait_ns += mono_ns () - t0;
      pthread_mutex_unlock (&pool.mu);
      if (posix_memalign (&p, pool.align, pool.align + size)) {
        pthread_mutex_lock (&pool.mu);
        pool.st.total -= size;
        pool.st.in_use -= size;
        pool.st.allocs--;
        pool.st.gets--;
        pthread_cond_broadcast (&pool.cv);
        pthread_mutex_unlock (&pool.mu);
        return NULL;
      }
      b = p;
      b->size = size;
      return data_of (b);
    }
    if (pool.list) {            /* make room: drop the least recent */
      struct pbuf **pp = &pool.list;

      while ((*pp)->next)
        pp = &(*pp)->next;
      b = *pp;
      *pp = NULL;
      pool.cached -= b->size;
      pool.st.total -= b->size;
      pool.st.frees++;
      free (b);
      continue;
    }
    if (!waited) {
      waited = true;
      pool.st.waits++;
      t0 = mono_ns ();
    }
    pthread_cond_wait (&pool.cv, &pool.mu);
  }
  account_get (b->size);
  if (waited)
    pool.st.wait_ns += mono_ns () - t0;
  pthread_mutex_unlock (&pool.mu);
  return data_of (b);
}

void
bounce_put (void *p)
{
  struct pbuf *b = (struct pbuf *) ((char *) p - pool.align);
  struct pbuf *drop = NULL;

  pthread_mutex_lock (&pool.mu);
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
  /* Sizes differ: every waiter looks again. */
  pthread_cond_broadcast (&pool.cv);
  pthread_mutex_unlock (&pool.mu);
  free (drop);
}

void
bounce_stats (struct bounce_stats *st)
{
  pthread_mutex_lock (&pool.mu);
  *st = pool.st;
  pthread_mutex_unlock (&pool.mu);
}
