/* rangelock.h: a lock on byte ranges of one file, shared or exclusive.
 *
 *   struct rl_range r;
 *   rl_lock (&lk, &r, start, len, excl);       blocks while it conflicts
 *   ... I/O on [start, start+len) ...
 *   rl_unlock (&lk, &r);
 *
 * Two ranges conflict when they overlap and at least one is exclusive.
 * Shared ranges may overlap each other.  A waiter is woken when any
 * range is unlocked and waits again if it still conflicts; there is no
 * fairness between waiters.
 *
 * Threads: any; the lock's own mutex protects its list.  The caller owns
 * r (usually on its stack) from rl_lock to rl_unlock.
 */
#ifndef CFQ_RANGELOCK_H
#define CFQ_RANGELOCK_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "list.h"

struct rl_range {
  struct list link;             /* on rangelock.held while locked */
  uint64_t start, end;          /* bytes: [start, end) */
  bool excl;                    /* exclusive (else shared) */
};

struct rangelock {
  pthread_mutex_t mu;
  pthread_cond_t cv;            /* a range was unlocked */
  struct list held;             /* struct rl_range, under mu */
  unsigned waiters;             /* threads in cv, under mu */
};

#define RANGELOCK_INIT(name) \
  { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, \
    LIST_INIT ((name).held), 0 }

extern void rl_init (struct rangelock *lk);
/* Nothing may be locked. */
extern void rl_fini (struct rangelock *lk);

extern void rl_lock (struct rangelock *lk, struct rl_range *r,
                     uint64_t start, uint64_t len, bool excl);
extern void rl_unlock (struct rangelock *lk, struct rl_range *r);

#endif /* CFQ_RANGELOCK_H */
