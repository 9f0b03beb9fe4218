/* rangelock.c: byte-range locks (see rangelock.h).
 *
 * The held ranges are a plain list: the plugin holds at most one range
 * per request in flight, a few dozen, so a scan costs less than keeping
 * a tree.  Unlock broadcasts only when someone waits.
 */
#include <assert.h>

#include "rangelock.h"

void
rl_init (struct rangelock *lk)
{
  pthread_mutex_init (&lk->mu, NULL);
  pthread_cond_init (&lk->cv, NULL);
  list_init (&lk->held);
  lk->waiters = 0;
}

void
rl_fini (struct rangelock *lk)
{
  assert (list_empty (&lk->held));
  pthread_cond_destroy (&lk->cv);
  pthread_mutex_destroy (&lk->mu);
}

static bool
rl_conflict (const struct rangelock *lk, const struct rl_range *r)
{
  struct list *p;

  list_for_each (p, &lk->held) {
    const struct rl_range *h = list_entry (p, struct rl_range, link);

    if (h->start < r->end && r->start < h->end && (h->excl || r->excl))
      return true;
  }
  return false;
}

void
rl_lock (struct rangelock *lk, struct rl_range *r, uint64_t start,
         uint64_t len, bool excl)
{
  r->start = start;
  r->end = start + len;
  r->excl = excl;
  pthread_mutex_lock (&lk->mu);
  while (rl_conflict (lk, r)) {
    lk->waiters++;
    pthread_cond_wait (&lk->cv, &lk->mu);
    lk->waiters--;
  }
  list_add_tail (&r->link, &lk->held);
  pthread_mutex_unlock (&lk->mu);
}

void
rl_unlock (struct rangelock *lk, struct rl_range *r)
{
  pthread_mutex_lock (&lk->mu);
  list_del (&r->link);
  if (lk->waiters)
    pthread_cond_broadcast (&lk->cv);
  pthread_mutex_unlock (&lk->mu);
}
