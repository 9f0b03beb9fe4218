/* test-hold.c: an emulated device's hold on completions (plugin/hold.c).
 *
 *  1. real I/O first: the request is held, keeps its result, and comes
 *     out exactly when the model completes it, not before;
 *  2. model first: nothing comes out, and the real I/O's end finishes it
 *     at once;
 *  3. order: with a disk that reorders (NCQ), requests come out in the
 *     model's order and at its times, each exactly once;
 *  4. the timer: armed for the model's next completion (and disarmed when
 *     nothing is at the device), says when the deadline moved earlier,
 *     fires for a deadline that has passed (and learns it woke late) and
 *     not for one 10 s away;
 *  5. the lead: the median tracker climbs to the median of the lateness it
 *     sees, never past HOLD_LEAD_MAX, and back to 0 when wake-ups are on
 *     time.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "devmodel.h"
#include "hold.h"
#include "rng.h"

#define N 64

static struct creq rqs[N];

static void
mkreq (struct creq *r, uint64_t off)
{
  memset (r, 0, sizeof *r);
  r->rq.off = off;
  r->rq.len = 4096;
  r->rq.op = RQ_READ;
  r->rq.flags = RQ_SYNC;
  r->rq.priv = r;
}

static struct devmodel *
model (const char *name, const char *params)
{
  struct devmodel *dm = devmodel_new (name, NULL);

  CHECK_NOTNULL (dm);
  CHECK_EQ (devmodel_parse (dm, params, NULL), 0);
  return dm;
}

static void
test_io_first (void)
{
  struct devmodel *dm = model ("ssd", "channels=1,read=1ms,bw=1000G");
  struct hold h;
  uint64_t t;

  CHECK_EQ (hold_init (&h, dm), 0);
  mkreq (&rqs[0], 0);
  hold_submit (&h, &rqs[0], 1000);
  t = devmodel_next (dm);
  CHECK_GE (t, 1000 + 1000000u);
  CHECK (hold_io_done (&h, &rqs[0], -EIO));     /* held */
  CHECK_EQ (h.n, 1u);
  CHECK_NULL (hold_release (&h, t - 1));
  CHECK_PTR_EQ (hold_release (&h, t), &rqs[0]);
  CHECK_EQ (rqs[0].res, -EIO);                  /* its result, kept */
  CHECK_EQ (h.n, 0u);
  CHECK_NULL (hold_release (&h, t + 1000000000));
  hold_fini (&h);
  devmodel_free (dm);
}

static void
test_model_first (void)
{
  struct devmodel *dm = model ("ssd", "channels=1,read=1ms,bw=1000G");
  struct hold h;
  uint64_t t;

  CHECK_EQ (hold_init (&h, dm), 0);
  mkreq (&rqs[0], 0);
  hold_submit (&h, &rqs[0], 0);
  t = devmodel_next (dm);
  CHECK_NULL (hold_release (&h, t));            /* its I/O is not done */
  CHECK_EQ (h.n, 0u);
  CHECK_EQ (devmodel_queued (dm), 0u);
  CHECK (!hold_io_done (&h, &rqs[0], 0));       /* finish it now */
  CHECK_EQ (h.n, 0u);
  hold_fini (&h);
  devmodel_free (dm);
}

static void
test_order (void)
{
  struct devmodel *dm = model ("hdd", "ncq=32,seed=3");
  struct devmodel *twin = model ("hdd", "ncq=32,seed=3");
  struct rq twins[N];
  unsigned seen[N] = { 0 };
  uint64_t seed = 7, last = 0;
  struct hold h;
  unsigned out = 0;

  CHECK_EQ (hold_init (&h, dm), 0);
  for (unsigned i = 0; i < N; i++) {
    uint64_t off = splitmix64 (&seed) % (1ULL << 28) * 4096;

    mkreq (&rqs[i], off);
    twins[i] = rqs[i].rq;
    hold_submit (&h, &rqs[i], 0);
    CHECK_EQ (devmodel_submit (twin, &twins[i], 0), 0);
    CHECK (hold_io_done (&h, &rqs[i], 0));      /* the real disk is fast */
  }
  CHECK_EQ (h.n, (unsigned) N);
  while (out < N) {
    uint64_t t = devmodel_next (twin), when;
    struct rq *want = devmodel_complete (twin, t, &when);
    struct creq *r = hold_release (&h, t);

    CHECK_NOTNULL (r);
    CHECK_PTR_EQ (&twins[r - rqs], want);     /* the model's order */
    CHECK_GE (when, last);
    last = when;
    seen[r - rqs]++;
    out++;
  }
  for (unsigned i = 0; i < N; i++)
    CHECK_EQ (seen[i], 1u);
  CHECK_EQ (h.n, 0u);
  CHECK_EQ (devmodel_next (dm), SCHED_NEVER);
  hold_fini (&h);
  devmodel_free (dm);
  devmodel_free (twin);
}

static uint64_t
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

static bool
readable (int fd, int ms)
{
  struct pollfd p = { .fd = fd, .events = POLLIN };

  return poll (&p, 1, ms) == 1;
}

static void
test_timer (void)
{
  struct devmodel *dm = model ("ssd", "channels=2,read=10s,bw=1000G");
  struct hold h;
  uint64_t now = mono_ns (), t;

  CHECK_EQ (hold_init (&h, dm), 0);
  CHECK_GE (h.fd, 0);
  CHECK (!hold_arm (&h));                       /* nothing at the device */
  CHECK_EQ (h.at, SCHED_NEVER);

  /* Due in 10 s: armed, not fired. */
  mkreq (&rqs[0], 0);
  hold_submit (&h, &rqs[0], now);
  t = devmodel_next (dm);
  CHECK (hold_arm (&h));                        /* from never: earlier */
  CHECK_EQ (h.at, t);
  CHECK (!hold_arm (&h));                       /* unchanged */
  CHECK (!readable (h.fd, 0));
  CHECK (!hold_fired (&h));                     /* not yet: EAGAIN */

  /* Released before its time (the model's clock is ours to give): the
   * timer goes off; a deadline already past fires at once.
   */
  CHECK (hold_io_done (&h, &rqs[0], 0));
  CHECK_PTR_EQ (hold_release (&h, t), &rqs[0]);
  CHECK (!hold_arm (&h));                       /* to never: not earlier */
  CHECK_EQ (h.at, SCHED_NEVER);
  CHECK (!readable (h.fd, 0));
  devmodel_reset (dm);
  CHECK_EQ (devmodel_set (dm, "read", "1us"), 0);
  mkreq (&rqs[1], 0);
  hold_submit (&h, &rqs[1], 0);                 /* due long ago */
  CHECK (hold_arm (&h));
  CHECK (readable (h.fd, 10000));
  CHECK_EQ (h.lead, 0u);
  CHECK (hold_fired (&h));
  CHECK_EQ (h.lead, HOLD_LEAD_STEP);            /* it woke late: learnt */
  CHECK_EQ (h.at, SCHED_NEVER);
  CHECK (!hold_fired (&h));                     /* read once */
  hold_fini (&h);
  CHECK_EQ (h.fd, -1);
  devmodel_free (dm);
}

static void
test_lead (void)
{
  uint64_t lead = 0, seed = 11;

  /* Lateness uniform in [0, 100 us): the median is 50 us. */
  for (int i = 0; i < 20000; i++)
    lead = hold_lead_step (lead, splitmix64 (&seed) % (100 * NSEC_PER_USEC));
  CHECK_NEAR ((double) lead, 50e3, 10e3);
  /* Always very late: capped. */
  for (int i = 0; i < 1000; i++)
    lead = hold_lead_step (lead, NSEC_PER_SEC);
  CHECK_EQ (lead, HOLD_LEAD_MAX);
  /* Always on time: back to nothing. */
  for (int i = 0; i < 1000; i++)
    lead = hold_lead_step (lead, 0);
  CHECK_EQ (lead, 0u);
}

int
main (void)
{
  test_io_first ();
  test_model_first ();
  test_order ();
  test_timer ();
  test_lead ();
  check_done ("test-hold");
  return 0;
}
