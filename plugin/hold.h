/* hold.h: the held completions of an emulated device, a min-heap by
 * creq->t_hold (the time the device model says the request completes).
 *
 * Threads: a struct hold belongs to whoever holds the engine lock; it
 * takes no lock of its own.
 */
#ifndef CFQ_HOLD_H
#define CFQ_HOLD_H

#include <stddef.h>

#include "engine.h"

struct hold {
  struct creq **v;              /* the heap: v[0] has the smallest t_hold */
  unsigned n;                   /* entries in v */
  unsigned cap;                 /* entries v has room for */
};

/* Room for cap requests.  0 or -ENOMEM; hold_fini frees either way. */
extern int hold_init (struct hold *h, unsigned cap);
extern void hold_fini (struct hold *h);

/* Add r (h->n < h->cap).  Requests with equal t_hold leave in no
 * particular order.
 */
extern void hold_push (struct hold *h, struct creq *r);
/* Remove and return the request with the smallest t_hold (h->n > 0). */
extern struct creq *hold_pop (struct hold *h);

/* The request hold_pop would return, or NULL if empty. */
static inline struct creq *
hold_top (const struct hold *h)
{
  return h->n ? h->v[0] : NULL;
}

#endif /* CFQ_HOLD_H */
