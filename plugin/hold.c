/* hold.c: a binary min-heap of requests by t_hold (see hold.h).
 *
 * The engine holds a completion that came back from the real device
 * before the emulated one would have finished it, and releases it when
 * its time comes: the heap gives the next release time in O(1) and each
 * push and pop costs O(log n).  n is at most the queue depth, since a
 * held request still counts as in flight.
 */
#include <assert.h>
#include <errno.h>
#include <stdlib.h>

#include "hold.h"

int
hold_init (struct hold *h, unsigned cap)
{
  h->n = 0;
  h->cap = cap;
  h->v = calloc (cap, sizeof *h->v);
  return h->v ? 0 : -ENOMEM;
}

void
hold_fini (struct hold *h)
{
  free (h->v);
  h->v = NULL;
  h->n = h->cap = 0;
}

void
hold_push (struct hold *h, struct creq *r)
{
  unsigned i;

  assert (h->n < h->cap);
  i = h->n++;
  while (i > 0) {
    unsigned p = (i - 1) / 2;

    if (h->v[p]->t_hold <= r->t_hold)
      break;
    h->v[i] = h->v[p];
    i = p;
  }
  h->v[i] = r;
}

struct creq *
hold_pop (struct hold *h)
{
  struct creq *top, *last;
  unsigned i = 0, n;

  assert (h->n > 0);
  top = h->v[0];
  last = h->v[--h->n];
  n = h->n;
  for (;;) {
    unsigned c = 2 * i + 1;

    if (c >= n)
      break;
    if (c + 1 < n && h->v[c + 1]->t_hold < h->v[c]->t_hold)
      c++;
    if (last->t_hold <= h->v[c]->t_hold)
      break;
    h->v[i] = h->v[c];
    i = c;
  }
  if (n)
    h->v[i] = last;
  return top;
}
