/* wbgate.c: the write-back error gate (see wbgate.h).
 *
 * Settling waits for the syncs inside at one moment, and only for them,
 * or a stream of new syncs could hold it forever.  Rather than a list of
 * tickets, syncs are counted by the parity of the epoch they entered in,
 * as a grace period is: a settler at epoch E first waits for the syncs
 * of epoch E - 1 to drain (nobody joins them any more), then moves the
 * epoch to E + 1, so new syncs count apart, and waits for those of E.
 * Both sets only shrink, so the wait ends when the syncs that were at
 * the device end.  Settlers share the work: if another has already moved
 * the epoch past E, it waited for E - 1 first; if past E + 1, it waited
 * for E.  A sync that enters while a settle runs may be waited for (it
 * joined E before the move): that costs one more sync's device time,
 * never an unbounded wait.
 */
#include <assert.h>

#include "wbgate.h"

void
wbg_init (struct wbgate *g)
{
  pthread_mutex_init (&g->mu, NULL);
  pthread_cond_init (&g->cv, NULL);
  g->epoch = 0;
  g->active[0] = g->active[1] = 0;
  g->waiters = 0;
  g->errors = 0;
}

void
wbg_fini (struct wbgate *g)
{
  assert (g->active[0] == 0 && g->active[1] == 0);
  pthread_cond_destroy (&g->cv);
  pthread_mutex_destroy (&g->mu);
}

void
wbg_enter (struct wbgate *g, struct wbg_ticket *t)
{
  pthread_mutex_lock (&g->mu);
  t->epoch = g->epoch;
  t->errors = g->errors;
  t->in = true;
  g->active[t->epoch & 1]++;
  pthread_mutex_unlock (&g->mu);
}

static void
wake (struct wbgate *g)
{
  if (g->waiters)
    pthread_cond_broadcast (&g->cv);
}

void
wbg_leave (struct wbgate *g, struct wbg_ticket *t, bool failed)
{
  pthread_mutex_lock (&g->mu);
  if (failed)
    __atomic_store_n (&g->errors, g->errors + 1, __ATOMIC_RELAXED);
  if (t->in) {
    assert (g->active[t->epoch & 1] > 0);
    t->in = false;
    if (--g->active[t->epoch & 1] == 0)
      wake (g);                 /* settlers wait for a set to drain */
  }
  pthread_mutex_unlock (&g->mu);
}

void
wbg_error (struct wbgate *g)
{
  pthread_mutex_lock (&g->mu);
  __atomic_store_n (&g->errors, g->errors + 1, __ATOMIC_RELAXED);
  pthread_mutex_unlock (&g->mu);
}

static void
wait_cv (struct wbgate *g)
{
  g->waiters++;
  pthread_cond_wait (&g->cv, &g->mu);
  g->waiters--;
}

uint64_t
wbg_settle (struct wbgate *g)
{
  uint64_t e, errors;

  pthread_mutex_lock (&g->mu);
  e = g->epoch;
  while (g->epoch == e && g->active[(e + 1) & 1] > 0)
    wait_cv (g);
  if (g->epoch == e) {
    g->epoch = e + 1;
    wake (g);                   /* settlers waiting for e - 1 are done */
  }
  while (g->epoch <= e + 1 && g->active[e & 1] > 0)
    wait_cv (g);
  errors = g->errors;
  pthread_mutex_unlock (&g->mu);
  return errors;
}

uint64_t
wbg_errors (const struct wbgate *g)
{
  return __atomic_load_n (&g->errors, __ATOMIC_RELAXED);
}

unsigned
wbg_inside (struct wbgate *g)
{
  unsigned n;

  pthread_mutex_lock (&g->mu);
  n = g->active[0] + g->active[1];
  pthread_mutex_unlock (&g->mu);
  return n;
}
