/* cfq-harness.h: a virtual-clock driver for the CFQ unit tests.
 *
 * Clients are closed loops: each keeps up to `depth` requests outstanding,
 * waits `think` ns after a completion before issuing the next, and walks
 * its area sequentially or at random.  The device stand-in completes each
 * request `cost` ns after dispatch (the client's cost, so tests can make
 * one tenant's requests expensive), with up to `dev_depth` in flight.
 * Time jumps from event to event: an issue, a completion, or the deadline
 * dispatch() returned.  Nothing here reads a clock.
 */
#ifndef CFQ_HARNESS_H
#define CFQ_HARNESS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cfq.h"
#include "sched.h"

#define MS NSEC_PER_MSEC
#define US NSEC_PER_USEC
#define H_MAXC 16
#define H_MAXRQ 64

struct h_client {
  struct sched_queue *q;
  unsigned depth;               /* requests kept outstanding */
  uint64_t think;               /* ns after a completion */
  uint64_t cost;                /* ns of device time per request */
  uint32_t len;                 /* bytes */
  uint8_t flags;                /* RQ_SYNC ... */
  bool random;                  /* random offsets, else sequential */
  uint64_t random_from;         /* ns: turn random from then on */
  uint64_t stride;              /* bytes between sequential rqs; 0: len */
  uint64_t base;                /* byte offset of its area */
  uint64_t start, stop;         /* ns: issue window */
  /* State and results. */
  uint64_t pos, next_issue;
  unsigned outstanding;
  uint64_t dispatched, completed, busy_ns;
  uint64_t first_dispatch, last_dispatch;
  void *last_sq;                /* queue CFQ put its last request on */
  struct rq rqs[H_MAXRQ];
  bool used[H_MAXRQ];
  uint64_t done_at[H_MAXRQ];
  bool inflight[H_MAXRQ];
};

struct harness {
  struct sched *s;
  uint64_t now;
  unsigned dev_depth, in_flight;
  unsigned nclients;
  struct h_client c[H_MAXC];
  uint64_t seed;
  int log[4096];                /* client index per dispatch, in order */
  unsigned nlog;
};

static inline uint64_t
h_rnd (struct harness *h)
{
  h->seed ^= h->seed << 13;
  h->seed ^= h->seed >> 7;
  h->seed ^= h->seed << 17;
  return h->seed;
}

/* CFQ as 2.6.37 has it (the kernel profile): what these tests check.
 * The defaults' departures (cost, group_async, group_lag) have tests of
 * their own.
 */
static inline struct sched *
kernel_cfq (void)
{
  struct sched *s = sched_create (&cfq_ops);

  CHECK (s);
  CHECK_EQ (sched_set (s, "profile", CFQ_PROFILE_KERNEL), 0);
  return s;
}

static inline void
h_init (struct harness *h, unsigned dev_depth)
{
  memset (h, 0, sizeof *h);
  h->s = kernel_cfq ();
  CHECK (h->s);
  h->dev_depth = dev_depth;
  h->seed = 12345;
}

static inline struct h_client *
h_client (struct harness *h, struct sched_group *g, enum sched_class cls,
          unsigned level)
{
  struct h_client *c = &h->c[h->nclients++];

  CHECK_LE (h->nclients, H_MAXC);
  c->q = sched_queue_new (h->s, g, cls, level);
  CHECK (c->q);
  c->depth = 1;
  c->cost = 1 * MS;
  c->len = 4096;
  c->flags = RQ_SYNC;
  c->base = (uint64_t) (h->nclients) << 34;
  c->stop = UINT64_MAX;
  c->first_dispatch = UINT64_MAX;
  c->random_from = UINT64_MAX;
  return c;
}

static inline void
h_issue (struct harness *h, struct h_client *c)
{
  int i;

  for (i = 0; i < H_MAXRQ && c->used[i]; i++)
    ;
  CHECK_LT (i, H_MAXRQ);
  c->used[i] = true;
  memset (&c->rqs[i], 0, sizeof c->rqs[i]);
  c->rqs[i].q = c->q;
  c->rqs[i].len = c->len;
  c->rqs[i].flags = c->flags;
  c->rqs[i].op = (c->flags & RQ_SYNC) ? RQ_READ : RQ_WRITE;
  if (c->random || h->now >= c->random_from)
    c->rqs[i].off = c->base + (h_rnd (h) % (1u << 20)) * 4096ULL * 16;
  else {
    c->rqs[i].off = c->base + c->pos;
    c->pos += c->stride ? c->stride : c->len;
  }
  c->rqs[i].priv = c;
  c->outstanding++;
  sched_insert (h->s, &c->rqs[i], h->now);
  c->last_sq = c->rqs[i].sq;
}

/* Run until time `until`. */
static inline void
h_run (struct harness *h, uint64_t until)
{
  uint64_t deadline = 0;

  for (;;) {
    uint64_t t = UINT64_MAX;

    for (unsigned k = 0; k < h->nclients; k++) {
      struct h_client *c = &h->c[k];
      for (int i = 0; i < H_MAXRQ; i++)
        if (c->inflight[i] && c->done_at[i] < t)
          t = c->done_at[i];
      if (c->outstanding < c->depth && c->next_issue < c->stop) {
        uint64_t ni = c->next_issue > c->start ? c->next_issue : c->start;
        if (ni < t)
          t = ni;
      }
    }
    if (deadline != SCHED_NEVER && deadline < t)
      t = deadline;
    if (t < h->now)
      t = h->now;
    if (t > until)
      break;
    h->now = t;

    for (unsigned k = 0; k < h->nclients; k++) {
      struct h_client *c = &h->c[k];
      for (int i = 0; i < H_MAXRQ; i++)
        if (c->inflight[i] && c->done_at[i] <= h->now) {
          c->inflight[i] = false;
          c->used[i] = false;
          c->outstanding--;
          c->completed++;
          h->in_flight--;
          c->next_issue = h->now + c->think;
          sched_completed (h->s, &c->rqs[i], h->now);
        }
    }
    for (unsigned k = 0; k < h->nclients; k++) {
      struct h_client *c = &h->c[k];
      while (c->outstanding < c->depth && h->now >= c->start
             && h->now < c->stop && c->next_issue <= h->now)
        h_issue (h, c);
    }
    deadline = SCHED_NEVER;
    while (h->in_flight < h->dev_depth) {
      uint64_t next;
      struct rq *r = sched_dispatch (h->s, h->now, &next);
      if (!r) {
        if (sched_has_work (h->s))
          CHECK_GT (next, h->now);
        deadline = next;
        break;
      }
      struct h_client *c = r->priv;
      int i = (int) (r - c->rqs);
      c->inflight[i] = true;
      c->done_at[i] = h->now + c->cost;
      c->dispatched++;
      c->busy_ns += c->cost;
      if (c->first_dispatch == UINT64_MAX)
        c->first_dispatch = h->now;
      c->last_dispatch = h->now;
      h->in_flight++;
      if (h->nlog < sizeof h->log / sizeof h->log[0])
        h->log[h->nlog++] = (int) (c - h->c);
    }
  }
  h->now = until;
}

static inline void
h_fini (struct harness *h)
{
  for (unsigned k = 0; k < h->nclients; k++)
    sched_queue_free (h->s, h->c[k].q);
  sched_destroy (h->s);
}

#endif /* CFQ_HARNESS_H */
