/* bounce.c: one bounce buffer per thread (see bounce.h).
 *
 * nbdkit runs each request on one worker thread from start to finish, so
 * a buffer kept in thread-specific data needs no lock and is reused by
 * that thread's next request.  It grows in BOUNCE_STEP multiples as
 * requests need, and bounce_put lets go of one larger than BOUNCE_KEEP so
 * that each of nbdkit's threads does not hold on to 32 MiB after one huge
 * request.  A thread's buffer is freed when the thread exits.
 */
#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>

#include "bounce.h"

#define BOUNCE_STEP (64u << 10)         /* bytes: sizes are multiples */
#define BOUNCE_KEEP (8u << 20)          /* bytes: larger ones are not kept */

struct bounce {
  void *p;                              /* bounce_align-aligned */
  size_t size;                          /* bytes */
};

static size_t bounce_align;             /* bytes; fixed by bounce_init */
static pthread_key_t bounce_key;        /* per-thread struct bounce */
static bool bounce_key_made;

static void
bounce_free (void *arg)
{
  struct bounce *b = arg;

  free (b->p);
  free (b);
}

int
bounce_init (size_t align)
{
  int err;

  bounce_align = align;
  err = pthread_key_create (&bounce_key, bounce_free);
  if (err)
    return -err;
  bounce_key_made = true;
  return 0;
}

void
bounce_fini (void)
{
  struct bounce *b;

  if (!bounce_key_made)
    return;
  /* The calling thread's own, if it ever had one. */
  b = pthread_getspecific (bounce_key);
  if (b) {
    pthread_setspecific (bounce_key, NULL);
    bounce_free (b);
  }
  pthread_key_delete (bounce_key);
  bounce_key_made = false;
}

void *
bounce_get (size_t n)
{
  struct bounce *b = pthread_getspecific (bounce_key);
  size_t size;
  void *p;

  if (b && b->size >= n)
    return b->p;
  if (!b) {
    b = calloc (1, sizeof *b);
    if (!b)
      return NULL;
    if (pthread_setspecific (bounce_key, b)) {
      free (b);
      return NULL;
    }
  }
  size = (n + BOUNCE_STEP - 1) / BOUNCE_STEP * BOUNCE_STEP;
  if (posix_memalign (&p, bounce_align, size))
    return NULL;
  free (b->p);
  b->p = p;
  b->size = size;
  return p;
}

void
bounce_put (void *p)
{
  struct bounce *b = pthread_getspecific (bounce_key);

  assert (b && b->p == p);
  if (b->size > BOUNCE_KEEP) {
    free (b->p);
    b->p = NULL;
    b->size = 0;
  }
}
