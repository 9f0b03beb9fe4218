/* test-cfq.c: CFQ's mechanisms, one by one, on a virtual clock.
 *
 * Tunable table; classes and levels; idling and the idle deadline; fifo
 * expiry; back-seek choice; preemption; hw_tag detection; IOPS vs time
 * charging; queue merge and split; freeing a queue mid-flight; per-group
 * counters and the drain charge; requests taken back before dispatch;
 * the bounded lag's credit on a device that works on requests together.
 */
#include "cfq-harness.h"

#include <errno.h>
#include <inttypes.h>

#include "cost.h"
#include "latency.h"
#include "qos.h"

static void
test_tunables (void)
{
  struct sched *s = sched_create (&cfq_ops);
  uint64_t v;
  static const struct { const char *k; const char *unit; uint64_t def; } want[] = {
    { "slice_sync", "ns", 100 * MS }, { "slice_async", "ns", 40 * MS },
    { "slice_async_rq", "requests", 2 }, { "slice_idle", "ns", 8 * MS },
    { "group_idle", "ns", 8 * MS }, { "quantum", "requests", 8 },
    { "fifo_expire_sync", "ns", 125 * MS },
    { "fifo_expire_async", "ns", 250 * MS },
    { "back_seek_max", "KiB", 16384 }, { "back_seek_penalty", "factor", 2 },
    { "low_latency", "bool", 1 }, { "target_latency", "ns", 300 * MS },
    { "mode", "mode", CFQ_MODE_AUTO }, { "rotational", "bool", 1 },
    { "group_isolation", "bool", 1 }, { "merge", "bool", 1 },
    { "hw_tag", "mode", 2 }, { "wc_depth", "requests", 16 },
    { "group_lag", "requests", 16 }, { "cost", "bool", 1 },
    { "group_async", "bool", 1 }, { "profile", "mode", CFQ_PROFILE_DEFAULT },
  };

  CHECK (s);
  CHECK_PTR_EQ (sched_lookup ("cfq"), &cfq_ops);
  CHECK_EQ (cfq_nr_tunables, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const struct cfq_tunable *t = cfq_tunable_lookup (want[i].k);
    CHECK (t);
    CHECK_STREQ (t->unit, want[i].unit);
    CHECK_EQ (t->def, want[i].def);
    CHECK_LE (t->min, t->def);
    CHECK_LE (t->def, t->max);
    CHECK (t->help);
    CHECK (*t->help);
    CHECK_EQ (sched_get (s, want[i].k, &v), 0);
    CHECK_EQ (v, want[i].def);
    /* Range errors at both ends, nothing clamped. */
    if (t->min > 0)
      CHECK_EQ (sched_set (s, want[i].k, t->min - 1), -ERANGE);
    CHECK_EQ (sched_set (s, want[i].k, t->max + 1), -ERANGE);
    CHECK_EQ (sched_get (s, want[i].k, &v), 0);
    CHECK_EQ (v, want[i].def);
    CHECK_EQ (sched_set (s, want[i].k, t->max), 0);
    CHECK_EQ (sched_get (s, want[i].k, &v), 0);
    CHECK_EQ (v, t->max);
    CHECK_EQ (cfq_tunable_check (want[i].k, t->min), 0);
  }
  CHECK_EQ (sched_set (s, "nonesuch", 1), -ENOENT);
  CHECK_EQ (sched_get (s, "nonesuch", &v), -ENOENT);
  CHECK_EQ (cfq_tunable_check ("nonesuch", 0), -ENOENT);
  CHECK_EQ (sched_set (s, "mode", 3), -ERANGE);
  CHECK_EQ (sched_set (s, "low_latency", 2), -ERANGE);
  CHECK_EQ (sched_set (s, "quantum", 0), -ERANGE);
  CHECK_EQ (sched_set (s, "group_isolation", 0), -ERANGE);
  CHECK_EQ (cfq_mode_parse ("iops", &v), 0);
  CHECK_EQ (v, CFQ_MODE_IOPS);
  CHECK_EQ (cfq_mode_parse ("time", &v), 0);
  CHECK_EQ (v, CFQ_MODE_TIME);
  CHECK_EQ (cfq_mode_parse ("auto", &v), 0);
  CHECK_EQ (v, CFQ_MODE_AUTO);
  CHECK_EQ (cfq_mode_parse ("fast", &v), -EINVAL);
  CHECK_STREQ (cfq_mode_name (CFQ_MODE_IOPS), "iops");
  /* Bad groups and queues are refused. */
  CHECK_NULL (sched_group_new (s, "x", 99));
  CHECK_NULL (sched_group_new (s, "x", 1001));
  CHECK_NULL (sched_queue_new (s, NULL, SCHED_CLASS_BE, 8));
  CHECK_NULL (sched_queue_new (s, NULL, 0, 0));
  sched_destroy (s);
  printf ("tunables: ok\n");
}

/* RT is served before BE while it has work; IDLE only when nothing else
 * waits; level 0 gets longer slices than level 7.
 */
static void
test_classes (void)
{
  struct harness h;
  struct h_client *be, *rt, *idle;

  h_init (&h, 1);
  be = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  rt = h_client (&h, NULL, SCHED_CLASS_RT, 4);
  idle = h_client (&h, NULL, SCHED_CLASS_IDLE, 0);
  be->depth = rt->depth = idle->depth = 8;
  rt->stop = 500 * MS;          /* RT busy for the first 500 ms */
  h_run (&h, 2000 * MS);
  /* RT had work all along: BE got nothing until RT stopped, except what
   * was in flight when RT started (none: all start at 0).
   */
  CHECK_GT (rt->dispatched, 300);
  CHECK_GE (be->first_dispatch, rt->last_dispatch);
  /* IDLE got the device only after BE had nothing... BE always has. */
  CHECK_EQ (idle->dispatched, 0);
  h_fini (&h);

  /* IDLE is served when the others stop. */
  h_init (&h, 1);
  be = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  idle = h_client (&h, NULL, SCHED_CLASS_IDLE, 0);
  be->depth = idle->depth = 4;
  be->stop = 300 * MS;
  h_run (&h, 1000 * MS);
  CHECK_GT (idle->dispatched, 0);
  /* ... and not before the idle-class grace after the last BE completion
   * (be->cost after its last dispatch).
   */
  CHECK_GE (idle->first_dispatch, be->last_dispatch + be->cost + 100 * MS);
  h_fini (&h);

  /* A BE reader thinking 30 ms between requests (too long to idle for):
   * the IDLE queue still does not get in between.
   */
  h_init (&h, 1);
  be = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  idle = h_client (&h, NULL, SCHED_CLASS_IDLE, 0);
  idle->depth = 4;
  be->think = 30 * MS;
  be->random = true;
  be->stop = 1000 * MS;
  h_run (&h, 1500 * MS);
  CHECK_GT (be->dispatched, 20);
  CHECK_GT (idle->first_dispatch, be->last_dispatch);
  h_fini (&h);

  /* Levels: without low_latency scaling the slices are 180 ms (level 0)
   * and 40 ms (level 7): time shares about 4.5 : 1.
   */
  h_init (&h, 1);
  CHECK_EQ (sched_set (h.s, "low_latency", 0), 0);
  struct h_client *l0 = h_client (&h, NULL, SCHED_CLASS_BE, 0);
  struct h_client *l7 = h_client (&h, NULL, SCHED_CLASS_BE, 7);
  l0->depth = l7->depth = 8;
  h_run (&h, 5000 * MS);
  CHECK_GT (l0->dispatched, 3 * l7->dispatched);
  CHECK_GT (l7->dispatched, 0);
  h_fini (&h);
  printf ("classes and levels: ok\n");
}

static void
mkrq (struct rq *rq, struct sched_queue *q, uint64_t sector, uint32_t len,
      uint8_t flags)
{
  memset (rq, 0, sizeof *rq);
  rq->q = q;
  rq->off = sector << 9;
  rq->len = len;
  rq->flags = flags;
  rq->op = (flags & RQ_SYNC) ? RQ_READ : RQ_WRITE;
}

/* A sync sequential queue that runs dry is idled for: the deadline is the
 * idle window, another queue's backlog waits, and the queue's next request
 * arriving in the window is dispatched at once.
 */
static void
test_idling (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq ra[3], rb[4];
  struct cfq_stats st;
  uint64_t next;
  struct rq *r;

  mkrq (&ra[0], a, 0, 4096, RQ_SYNC);
  sched_insert (s, &ra[0], 0);
  r = sched_dispatch (s, 0, &next);
  CHECK_PTR_EQ (r, &ra[0]);
  for (int i = 0; i < 4; i++) {
    mkrq (&rb[i], b, 1000000 + 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &rb[i], 100 * US);
  }
  /* a's slice runs; b waits while a's request is in flight. */
  CHECK_NULL (sched_dispatch (s, 100 * US, &next));
  sched_completed (s, &ra[0], 1 * MS);
  /* a is empty: the idle timer is armed, b still waits. */
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  CHECK_EQ (next, 1 * MS + 8 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.idle_arms, 1);
  /* a's next request arrives in the window: served right away. */
  mkrq (&ra[1], a, 8, 4096, RQ_SYNC);
  sched_insert (s, &ra[1], 3 * MS);
  r = sched_dispatch (s, 3 * MS, &next);
  CHECK_PTR_EQ (r, &ra[1]);
  sched_completed (s, &ra[1], 4 * MS);
  CHECK_NULL (sched_dispatch (s, 4 * MS, &next));
  CHECK_EQ (next, 12 * MS);
  /* Nothing comes: at the deadline the window closes and b is served. */
  r = sched_dispatch (s, next, &next);
  CHECK (r);
  CHECK_PTR_EQ (r->q, b);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.idle_timeouts, 1);
  CHECK_EQ (st.idle_hits, 1);

  /* slice_idle=0: no idling at all, b keeps the disk. */
  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  for (int i = 1; i < 4; i++) {
    r = sched_dispatch (s, 13 * MS, &next);
    CHECK_PTR_EQ (r, &rb[i]);
  }
  for (int i = 0; i < 4; i++)
    sched_completed (s, &rb[i], 14 * MS);
  CHECK (!sched_has_work (s));
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);
  printf ("idling: ok\n");
}

/* group_idle: with queue idling off (slice_idle=0), a group's last queue
 * that runs dry still holds the disk for group_idle, and only when it is
 * alone in its group.  IDLE class: never idles, one request in flight.
 */
static void
test_group_idle_and_idle_class (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_group *ga = sched_group_new (s, "a", 500);
  struct sched_group *gb = sched_group_new (s, "b", 500);
  struct sched_queue *a1 = sched_queue_new (s, ga, SCHED_CLASS_BE, 4);
  struct sched_queue *b1 = sched_queue_new (s, gb, SCHED_CLASS_BE, 4);
  struct sched_queue *a2, *id;
  struct rq ra[2], rb[2], rc, ri[3];
  struct cfq_stats st;
  uint64_t next;
  struct rq *r;

  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 5 * MS), 0);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  mkrq (&ra[0], a1, 0, 65536, RQ_SYNC);
  sched_insert (s, &ra[0], 0);
  r = sched_dispatch (s, 0, &next);
  CHECK_PTR_EQ (r, &ra[0]);
  for (int i = 0; i < 2; i++) {
    mkrq (&rb[i], b1, 90000000 + 128 * i, 65536, RQ_SYNC);
    sched_insert (s, &rb[i], 100);
  }
  sched_completed (s, &ra[0], 1 * MS);
  /* a1 is its group's only queue: the group idle timer holds the disk. */
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  CHECK_EQ (next, 6 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.group_idle_arms, 1);
  CHECK_EQ (st.idle_arms, 0);
  mkrq (&ra[1], a1, 128, 65536, RQ_SYNC);
  sched_insert (s, &ra[1], 3 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 3 * MS, &next), &ra[1]);
  sched_completed (s, &ra[1], 4 * MS);
  /* The window armed for a1 holds even though a2 (same group, a queue
   * that does not idle) and b have work; at its end the disk moves on.
   */
  a2 = sched_queue_new (s, ga, SCHED_CLASS_BE, 4);
  mkrq (&rc, a2, 50000000, 65536, RQ_SYNC);
  sched_insert (s, &rc, 4 * MS);
  CHECK_NULL (sched_dispatch (s, 4 * MS, &next));
  CHECK_EQ (next, 9 * MS);
  r = sched_dispatch (s, next, &next);
  CHECK (r);
  CHECK_PTR_NE (r, &ra[1]);
  while (r) {
    sched_completed (s, r, next = 10 * MS);
    r = sched_dispatch (s, 10 * MS, &next);
    if (!r && sched_has_work (s)) {
      CHECK_NE (next, SCHED_NEVER);
      r = sched_dispatch (s, next, &next);
    }
  }
  CHECK (!sched_has_work (s));

  /* IDLE class: one request in flight at a time, no idle window after. */
  CHECK_EQ (sched_set (s, "slice_idle", 8 * MS), 0);
  id = sched_queue_new (s, NULL, SCHED_CLASS_IDLE, 0);
  for (int i = 0; i < 3; i++) {
    mkrq (&ri[i], id, 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &ri[i], 1000 * MS);
  }
  r = sched_dispatch (s, 1000 * MS, &next);
  CHECK_PTR_EQ (r, &ri[0]);
  CHECK_NULL (sched_dispatch (s, 1000 * MS, &next));
  sched_completed (s, r, 1001 * MS);
  cfq_get_stats (s, &st);
  uint64_t arms = st.idle_arms + st.group_idle_arms;
  r = sched_dispatch (s, 1001 * MS, &next);
  CHECK_PTR_EQ (r, &ri[1]);
  sched_completed (s, r, 1002 * MS);
  r = sched_dispatch (s, 1002 * MS, &next);
  CHECK_PTR_EQ (r, &ri[2]);
  sched_completed (s, r, 1003 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.idle_arms + st.group_idle_arms, arms);
  CHECK_NULL (sched_dispatch (s, 1003 * MS, &next));
  CHECK_EQ (next, SCHED_NEVER);
  sched_queue_free (s, a1);
  sched_queue_free (s, a2);
  sched_queue_free (s, b1);
  sched_queue_free (s, id);
  sched_destroy (s);
  printf ("group_idle and idle class: ok\n");
}

/* low_latency: with 8 busy sequential readers, slices shrink so that all
 * get a turn within target_latency (100 ms * 300 / 800 = 37.5 ms), and
 * async depth ramps up one request per slice_sync after a delayed sync
 * completion.
 */
static double
mean_run (unsigned low_latency)
{
  struct harness h;
  unsigned runs = 1;

  h_init (&h, 1);
  CHECK_EQ (sched_set (h.s, "low_latency", low_latency), 0);
  for (int i = 0; i < 8; i++)
    h_client (&h, NULL, SCHED_CLASS_BE, 4)->depth = 2;
  h_run (&h, 5000 * MS);
  for (unsigned i = 1; i < h.nlog; i++)
    runs += h.log[i] != h.log[i - 1];
  h_fini (&h);
  return (double) h.nlog / runs;        /* requests (= ms) per turn */
}

static void
test_low_latency (void)
{
  double r1 = mean_run (1), r0 = mean_run (0);
  struct sched *s = kernel_cfq ();
  struct sched_queue *rd = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *wr = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq r, w[4];
  uint64_t next;

  printf ("turn length: low_latency=1 %.1f ms, 0 %.1f ms\n", r1, r0);
  CHECK_GT (r1, 30);
  CHECK_LT (r1, 50);
  CHECK_GT (r0, 90);
  CHECK_LT (r0, 115);

  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  mkrq (&r, rd, 0, 4096, RQ_SYNC);
  sched_insert (s, &r, 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &r);
  sched_completed (s, &r, 200 * MS);    /* 200 ms > fifo_expire_sync */
  for (int i = 0; i < 4; i++) {
    mkrq (&w[i], wr, 1000 + 8 * i, 4096, 0);
    sched_insert (s, &w[i], 200 * MS);
  }
  CHECK_PTR_EQ (sched_dispatch (s, 200 * MS, &next), &w[0]);
  CHECK_NULL (sched_dispatch (s, 200 * MS, &next));
  CHECK_EQ (next, 300 * MS);
  CHECK_NULL (sched_dispatch (s, 300 * MS, &next));
  CHECK_EQ (next, 400 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 400 * MS, &next), &w[1]);
  CHECK_NULL (sched_dispatch (s, 400 * MS, &next));
  /* Without low_latency no ramp: the rest goes at once. */
  CHECK_EQ (sched_set (s, "low_latency", 0), 0);
  CHECK_PTR_EQ (sched_dispatch (s, 400 * MS, &next), &w[2]);
  CHECK_PTR_EQ (sched_dispatch (s, 400 * MS, &next), &w[3]);
  for (int i = 0; i < 4; i++)
    sched_completed (s, &w[i], 500 * MS);
  sched_queue_free (s, rd);
  sched_queue_free (s, wr);
  sched_destroy (s);
  printf ("low_latency: ok\n");
}

/* Fifo: checked at the first dispatch of a slice; an expired request
 * goes first even if far away.
 */
static void
test_fifo (void)
{
  for (int expired = 0; expired < 2; expired++) {
    struct sched *s = kernel_cfq ();
    struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    struct rq far, near[4];
    uint64_t next, t = expired ? 200 * MS : 1 * MS;
    struct rq *r;

    mkrq (&far, a, 50000000, 4096, RQ_SYNC);
    sched_insert (s, &far, 0);
    for (int i = 0; i < 4; i++) {
      mkrq (&near[i], a, 8 * i, 4096, RQ_SYNC);
      sched_insert (s, &near[i], 0);
    }
    r = sched_dispatch (s, t, &next);
    if (expired)
      CHECK_PTR_EQ (r, &far);
    else
      CHECK_PTR_EQ (r, &near[0]);
    /* Only once per slice: the rest in sector order. */
    for (int i = expired ? 0 : 1; i < 4; i++) {
      r = sched_dispatch (s, t, &next);
      CHECK_PTR_EQ (r, &near[i]);
    }
    sched_queue_free (s, a);
    sched_destroy (s);
  }
  printf ("fifo expiry: ok\n");
}

/* Back seeks: a request behind the head costs back_seek_penalty times its
 * distance, and beyond back_seek_max it is a wrap (served last).
 */
static int
back_seek_pick (uint64_t penalty, uint64_t max_kib)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq first, back, fwd;
  uint64_t next;
  struct rq *r;
  int pick;

  CHECK_EQ (sched_set (s, "back_seek_penalty", penalty), 0);
  CHECK_EQ (sched_set (s, "back_seek_max", max_kib), 0);
  mkrq (&first, a, 1000, 4096, RQ_SYNC);        /* head ends at 1008 */
  sched_insert (s, &first, 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &first);
  mkrq (&back, a, 1000, 4096, RQ_SYNC);         /* 8 back */
  mkrq (&fwd, a, 1030, 4096, RQ_SYNC);          /* 22 forward */
  sched_insert (s, &back, 10);
  sched_insert (s, &fwd, 10);
  r = sched_dispatch (s, 20, &next);
  pick = r == &back ? -1 : r == &fwd ? 1 : 0;
  sched_queue_free (s, a);
  sched_destroy (s);
  return pick;
}

static void
test_back_seek (void)
{
  CHECK_EQ (back_seek_pick (2, 16384), -1);     /* 16 < 22 */
  CHECK_EQ (back_seek_pick (4, 16384), 1);      /* 32 > 22 */
  CHECK_EQ (back_seek_pick (1, 0), 1);          /* beyond max: wrap */
  CHECK_EQ (back_seek_pick (1, 4), -1);         /* 8 sectors = 4 KiB */
  printf ("back seek: ok\n");
}

/* Preemption, in CFQ's order. */
static void
test_preemption (void)
{
  struct sched *s;
  struct sched_queue *be, *rt, *idle, *async;
  struct rq r1[4], r2[2], r1x;
  struct cfq_stats st;
  uint64_t next;
  struct rq *r;

  /* RT request preempts a BE slice: it goes next.  (After a completion
   * the mechanism runs dispatch before new requests come in, as Linux
   * runs the queue from the completion path.)
   */
  s = kernel_cfq ();
  be = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  rt = sched_queue_new (s, NULL, SCHED_CLASS_RT, 4);
  for (int i = 0; i < 4; i++) {
    mkrq (&r1[i], be, 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &r1[i], 0);
  }
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &r1[0]);
  sched_completed (s, &r1[0], 1 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &r1[1]);
  mkrq (&r2[0], rt, 90000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[0], 2 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 1);
  CHECK_PTR_EQ (sched_dispatch (s, 2 * MS, &next), &r2[0]);
  /* A BE request does not preempt an RT slice: the RT queue waits for its
   * request in flight, then idles, and gets its next request in.
   */
  sched_completed (s, &r1[1], 2 * MS + 500);
  mkrq (&r1x, be, 64, 4096, RQ_SYNC);
  sched_insert (s, &r1x, 3 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 1);
  CHECK_NULL (sched_dispatch (s, 3 * MS, &next));
  sched_completed (s, &r2[0], 4 * MS);
  CHECK_NULL (sched_dispatch (s, 4 * MS, &next));
  CHECK_EQ (next, 12 * MS);
  mkrq (&r2[1], rt, 90000008, 4096, RQ_SYNC);
  sched_insert (s, &r2[1], 5 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 5 * MS, &next), &r2[1]);
  sched_completed (s, &r2[1], 6 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 1);
  /* RT idles; the BE queue still waits (RT slice not over). */
  CHECK_NULL (sched_dispatch (s, 6 * MS, &next));
  CHECK_EQ (next, 14 * MS);
  /* After the window, BE resumes where it was, in sector order. */
  r = sched_dispatch (s, next, &next);
  CHECK_PTR_EQ (r, &r1[2]);
  sched_completed (s, r, 15 * MS);
  for (int i = 0; i < 2; i++) {
    r = sched_dispatch (s, 15 * MS, &next);
    CHECK_PTR_EQ (r, (i == 0 ? &r1[3] : &r1x));
    sched_completed (s, r, 16 * MS);
  }
  sched_queue_free (s, be);
  sched_queue_free (s, rt);
  sched_destroy (s);

  /* A sync request preempts an async queue; an IDLE-class request
   * preempts nothing.
   */
  s = kernel_cfq ();
  async = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  be = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  idle = sched_queue_new (s, NULL, SCHED_CLASS_IDLE, 0);
  for (int i = 0; i < 4; i++) {
    mkrq (&r1[i], async, 8 * i, 4096, 0);
    sched_insert (s, &r1[i], 0);
  }
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &r1[0]);
  mkrq (&r2[0], idle, 5000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[0], 1 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 0);
  mkrq (&r2[1], be, 7000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[1], 1 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 1);
  /* 2.6.36: the group resumes its saved async workload slice, so the
   * async queue is chosen again and runs dry; then its requests drain
   * (an idling sync queue waits for async in flight) and the sync
   * request goes.
   */
  for (int i = 1; i < 4; i++)
    CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &r1[i]);
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  for (int i = 0; i < 4; i++)
    sched_completed (s, &r1[i], 2 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 2 * MS, &next), &r2[1]);
  sched_completed (s, &r2[1], 3 * MS);
  sched_queue_free (s, async);
  sched_queue_free (s, be);
  sched_queue_free (s, idle);
  /* Freed with requests queued: still dispatched and completed. */
  next = 4 * MS;
  for (int n = 0; n < 100 && sched_has_work (s); n++) {
    uint64_t t = next;
    r = sched_dispatch (s, t, &next);
    if (r) {
      sched_completed (s, r, t + 100);
      next = t + 100;
    }
    else
      CHECK_NE (next, SCHED_NEVER);
  }
  CHECK (!sched_has_work (s));
  sched_destroy (s);
  /* The queue run owed to a completion goes first: the queue chosen when
   * a's request completed gets one request out before an RT request that
   * arrives before our next dispatch call (as from a mechanism that
   * resubmits in its completion callback) preempts it.
   */
  s = kernel_cfq ();
  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  be = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  async = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);   /* a 2nd BE */
  rt = sched_queue_new (s, NULL, SCHED_CLASS_RT, 4);
  mkrq (&r2[0], be, 0, 4096, RQ_SYNC);
  sched_insert (s, &r2[0], 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &r2[0]);
  for (int i = 0; i < 2; i++) {
    mkrq (&r1[i], async, 1000000 + 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &r1[i], 100);
  }
  sched_completed (s, &r2[0], 1 * MS);
  mkrq (&r2[1], rt, 5000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[1], 1 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 0);
  CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &r1[0]);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.preemptions, 1);
  CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &r2[1]);
  sched_completed (s, &r1[0], 2 * MS);
  sched_completed (s, &r2[1], 2 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 2 * MS, &next), &r1[1]);
  sched_completed (s, &r1[1], 3 * MS);
  sched_queue_free (s, be);
  sched_queue_free (s, async);
  sched_queue_free (s, rt);
  sched_destroy (s);
  printf ("preemption: ok\n");
}

/* Later CFQ (3.x/4.x): an async queue whose fifo holds an expired request
 * must dispatch it (must_dispatch); a sync request arriving before it did
 * does not preempt the queue.  Without an expired request the sync
 * arrival still preempts it (after the one request of the queue run owed
 * to the completion).  slice_idle=0 so the reader does not idle and the
 * async queue is chosen at the reader's completion.
 */
static void
test_async_must_dispatch (void)
{
  for (int expired = 0; expired <= 1; expired++) {
    const uint64_t t = expired ? 300 * MS : 100 * MS;   /* fifo: 250 ms */
    struct sched *s = kernel_cfq ();
    struct sched_queue *w, *rd;
    struct rq wr[2], r0, r1;
    struct cfq_stats st;
    uint64_t next;
    struct rq *r;

    CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
    CHECK_EQ (sched_set (s, "group_idle", 0), 0);
    w = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    rd = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    mkrq (&r0, rd, 0, 4096, RQ_SYNC);
    sched_insert (s, &r0, 0);
    CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &r0);
    for (int i = 0; i < 2; i++) {
      mkrq (&wr[i], w, 1000000 + 128 * i, 65536, 0);
      sched_insert (s, &wr[i], 0);
    }
    /* The reader's request completes; the async queue is chosen; the
     * reader's next request arrives before our next dispatch.
     */
    sched_completed (s, &r0, t);
    mkrq (&r1, rd, 8, 4096, RQ_SYNC);
    sched_insert (s, &r1, t);
    r = sched_dispatch (s, t, &next);
    CHECK_PTR_EQ (r, &wr[0]);
    cfq_get_stats (s, &st);
    if (expired) {
      CHECK_EQ (st.fifo_expired, 1);
      CHECK_EQ (st.preemptions, 0);
    }
    else {
      CHECK_EQ (st.fifo_expired, 0);
      CHECK_EQ (st.preemptions, 1);
    }
    /* Drain. */
    sched_completed (s, r, t + 1 * MS);
    next = t + 1 * MS;
    for (int n = 0; n < 100 && sched_has_work (s); n++) {
      uint64_t now = next;
      r = sched_dispatch (s, now, &next);
      if (r) {
        sched_completed (s, r, now + 1 * MS);
        next = now + 1 * MS;
      }
      else
        CHECK_NE (next, SCHED_NEVER);
    }
    CHECK (!sched_has_work (s));
    sched_queue_free (s, w);
    sched_queue_free (s, rd);
    sched_destroy (s);
  }
  printf ("async must_dispatch: ok\n");
}

/* Async deadline (ours): four sequential readers that idle (1 ms per
 * request, one at a time) and a writer of 32 requests that thinks 100 ms.
 * By rb_key alone the writer's turn comes back only every ~560 ms; once a
 * request of it is past fifo_expire_async (250 ms) and it had no turn for
 * as long, it goes at the next queue choice.  Measured as the longest run
 * of reader dispatches (1 ms each) between two writer dispatches.
 */
static unsigned
longest_reader_run (uint64_t fifo_expire_async)
{
  struct harness h;
  unsigned run = 0, longest = 0;
  struct h_client *w;

  h_init (&h, 1);
  CHECK_EQ (sched_set (h.s, "fifo_expire_async", fifo_expire_async), 0);
  w = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  w->flags = 0;
  w->depth = 32;
  w->think = 100 * MS;
  w->cost = 200 * 1000;
  w->len = 65536;
  for (int i = 0; i < 4; i++)
    h_client (&h, NULL, SCHED_CLASS_BE, 4);
  h_run (&h, 3000 * MS);
  for (unsigned i = 0; i < h.nlog; i++) {
    if (h.log[i] == 0) {
      longest = run > longest ? run : longest;
      run = 0;
    }
    else
      run++;
  }
  h_fini (&h);
  return longest;
}

static void
test_async_deadline (void)
{
  unsigned on = longest_reader_run (250 * MS);
  unsigned off = longest_reader_run (10000 * MS);      /* the most */

  printf ("longest reader run between writer turns: %u ms (deadline), "
          "%u ms (fifo_expire_async=10s)\n", on, off);
  /* 250 ms deadline + 100 ms think + at most one reader slice. */
  CHECK_LE (on, 250 + 100 + 100);
  CHECK_GT (off, on + 50);
  printf ("async deadline: ok\n");
}

/* hw_tag: a device that takes 32 requests at a time is seen as queueing,
 * one that takes 1 is not.
 */
static void
test_hw_tag (void)
{
  for (unsigned depth = 1; depth <= 32; depth += 31) {
    struct harness h;
    struct cfq_stats st;

    h_init (&h, depth);
    cfq_get_stats (h.s, &st);
    CHECK_EQ (st.hw_tag, -1);
    for (int i = 0; i < 4; i++) {
      struct h_client *c = h_client (&h, NULL, SCHED_CLASS_BE, 4);
      c->depth = 16;
      c->random = true;
      c->cost = 200 * US;
    }
    h_run (&h, 2000 * MS);
    cfq_get_stats (h.s, &st);
    CHECK_EQ (st.hw_tag, (depth >= 5));
    CHECK_EQ (st.hw_tag_est_depth, (depth == 1 ? 1 : st.hw_tag_est_depth));
    h_fini (&h);
  }
  printf ("hw_tag: ok\n");
}

/* Charging: two equal groups, one whose requests cost 10x.  In time mode
 * they share time (the cheap one does far more requests); in IOPS mode
 * they share requests.
 */
static void
iops_vs_time (uint64_t mode, double *ratio)
{
  struct harness h;
  struct sched_group *g1, *g2;
  struct h_client *c1, *c2;

  h_init (&h, 1);
  CHECK_EQ (sched_set (h.s, "mode", mode), 0);
  CHECK_EQ (sched_set (h.s, "slice_idle", 0), 0);
  g1 = sched_group_new (h.s, "cheap", 500);
  g2 = sched_group_new (h.s, "dear", 500);
  c1 = h_client (&h, g1, SCHED_CLASS_BE, 4);
  c2 = h_client (&h, g2, SCHED_CLASS_BE, 4);
  c1->depth = c2->depth = 8;
  c1->cost = 1 * MS;
  c2->cost = 10 * MS;
  h_run (&h, 20000 * MS);
  *ratio = (double) c1->dispatched / (double) c2->dispatched;
  h_fini (&h);
}

/* A latency target set at time 0 (as the server's configuration is) whose
 * first completion comes at a large uptime: its windows are judged from
 * there on, each 1 s, without a step per second since 0.
 */
static void
test_latency_late_start (void)
{
  struct harness h;
  struct sched_group *g;
  struct h_client *c;
  struct lat_conf lc;
  struct cfq_group_stats st;
  const uint64_t start = 1ULL << 62;    /* ns: about 146 years */

  h_init (&h, 1);
  g = sched_group_new (h.s, "db", 500);
  CHECK (g);
  lat_conf_init (&lc);
  lc.target = 5 * MS;
  lc.percentile = 50;                   /* not one of 90, 95, 99 */
  CHECK_EQ (sched_group_set_latency (h.s, g, &lc), -ERANGE);
  lc.percentile = 95;
  lc.mode = 7;
  CHECK_EQ (sched_group_set_latency (h.s, g, &lc), -ERANGE);
  lc.mode = LAT_MODE_GRADED;
  CHECK_EQ (sched_group_set_latency (h.s, g, &lc), 0);
  c = h_client (&h, g, SCHED_CLASS_BE, 4);
  c->depth = 2;
  h.now = start;
  h_run (&h, start + 3500 * MS);
  cfq_group_get_stats (h.s, g, &st);
  CHECK_EQ (st.lat_target, 5 * MS);
  CHECK (st.lat_window > 0);
  CHECK (st.lat_window <= 5 * MS);
  CHECK (!st.lat_unmet);
  h_fini (&h);
  printf ("latency late start: ok\n");
}

static void
test_iops_mode (void)
{
  double time_ratio, iops_ratio;
  struct sched *s = kernel_cfq ();
  struct cfq_stats st;

  /* auto: IOPS iff slice_idle=0 and hw_tag (unknown counts as yes). */
  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  cfq_get_stats (s, &st);
  CHECK (st.iops_mode);
  CHECK_EQ (sched_set (s, "hw_tag", 0), 0);
  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  CHECK_EQ (st.hw_tag, 0);
  CHECK_EQ (sched_set (s, "hw_tag", 2), 0);
  cfq_get_stats (s, &st);
  CHECK (st.iops_mode);
  CHECK_EQ (st.hw_tag, -1);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  sched_destroy (s);

  iops_vs_time (CFQ_MODE_TIME, &time_ratio);
  iops_vs_time (CFQ_MODE_IOPS, &iops_ratio);
  printf ("time mode: cheap/dear requests %.2f; iops mode %.2f\n",
          time_ratio, iops_ratio);
  CHECK_GT (time_ratio, 7);
  CHECK_LT (time_ratio, 13);
  CHECK_GT (iops_ratio, 0.8);
  CHECK_LT (iops_ratio, 1.25);
  printf ("iops vs time charge: ok\n");
}

/* Two connections reading one stream in turns (a thread pool: a reads
 * the even blocks, b the odd ones, each with one request outstanding) are
 * merged into one queue; when the shared queue turns seeky it is split.
 */
static void
test_merge_split (void)
{
  struct harness h;
  struct h_client *a, *b;
  struct cfq_stats st;

  h_init (&h, 1);
  a = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  b = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  a->base = b->base = 1ULL << 36;
  b->base += 4096;
  a->stride = b->stride = 8192;
  a->think = b->think = 50 * US;
  a->cost = b->cost = 200 * US;
  h_run (&h, 1000 * MS);
  cfq_get_stats (h.s, &st);
  CHECK_GE (st.merges, 1);
  CHECK_PTR_EQ (a->last_sq, b->last_sq);
  a->random_from = b->random_from = 1000 * MS;
  h_run (&h, 3000 * MS);
  cfq_get_stats (h.s, &st);
  printf ("merges %llu splits %llu\n", (unsigned long long) st.merges,
          (unsigned long long) st.splits);
  CHECK_GE (st.splits, 1);
  CHECK_PTR_NE (a->last_sq, b->last_sq);
  h_fini (&h);
  printf ("merge and split: ok\n");
}

/* Weighted groups share time by weight (sanity; the simulator measures). */
static void
test_group_weights (void)
{
  struct harness h;
  struct sched_group *g1, *g2;
  struct h_client *c1, *c2;
  double r;

  h_init (&h, 1);
  g1 = sched_group_new (h.s, "heavy", 800);
  g2 = sched_group_new (h.s, "light", 200);
  c1 = h_client (&h, g1, SCHED_CLASS_BE, 4);
  c2 = h_client (&h, g2, SCHED_CLASS_BE, 4);
  c1->depth = c2->depth = 4;
  h_run (&h, 30000 * MS);
  r = (double) c1->busy_ns / (double) c2->busy_ns;
  printf ("weights 800:200 -> time %.2f\n", r);
  CHECK_GT (r, 3.5);
  CHECK_LT (r, 4.5);
  h_fini (&h);
  printf ("group weights: ok\n");
}

/* Bounded lag on a device that works on its requests together (the
 * harness's: 16 at once, 1 ms each), the default profile, work-conserving
 * groups, group_idle 2 ms (heavy's requests complete together, and its
 * window keeps it present until they are back).  "heavy" (weight 400)
 * keeps 4 requests out, so they are all at the device, never queued;
 * "light" (weight 100) keeps 16.  What light may take depends on what
 * the server knows of the device:
 *  - its own cost model (set_cost, depth 16): 4 at a device that takes 16
 *    leave it spare, heavy forfeits its credit past group_lag and light
 *    has the rest, 12 at a time (deviation 34);
 *  - the generic model, whose depth is no measurement (an RBD image is
 *    served so): heavy holds light within group_lag of its pace, a
 *    quarter of heavy's requests, as the weights say.
 */
static void
wc_forfeit_run (bool given, uint64_t *heavy, uint64_t *light)
{
  struct harness h;
  struct sched_group *gh, *gl;
  struct h_client *ch, *cl;
  struct cost_params p;

  h_init (&h, 16);
  CHECK_EQ (sched_set (h.s, "profile", CFQ_PROFILE_DEFAULT), 0);
  CHECK_EQ (sched_set (h.s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (h.s, "group_idle", 2 * MS), 0);
  CHECK_EQ (sched_set (h.s, "rotational", 0), 0);
  CHECK_EQ (sched_set (h.s, "hw_tag", 1), 0);
  CHECK_EQ (sched_set (h.s, "mode", CFQ_MODE_IOPS), 0);
  if (given) {
    cost_params_default (&p, false);
    CHECK_EQ (p.depth, 16);
    CHECK_EQ (sched_set_cost (h.s, &p, "config"), 0);
  }
  gh = sched_group_new (h.s, "heavy", 400);
  gl = sched_group_new (h.s, "light", 100);
  ch = h_client (&h, gh, SCHED_CLASS_BE, 4);
  cl = h_client (&h, gl, SCHED_CLASS_BE, 4);
  ch->random = cl->random = true;
  ch->depth = 4;
  cl->depth = 16;
  h_run (&h, 2000 * MS);
  *heavy = ch->completed;
  *light = cl->completed;
  h_fini (&h);
}

static void
test_wc_forfeit (void)
{
  uint64_t h1, l1, h0, l0;

  wc_forfeit_run (true, &h1, &l1);
  wc_forfeit_run (false, &h0, &l0);
  printf ("wc forfeit: model given heavy %" PRIu64 " light %" PRIu64
          ", generic heavy %" PRIu64 " light %" PRIu64 "\n", h1, l1, h0, l0);
  /* heavy is served at its own depth either way: 4 per ms. */
  CHECK_GE (h1, 7900);
  CHECK_GE (h0, 7900);
  /* Given: light has the 12 slots heavy leaves. */
  CHECK_GE (l1, 23000);
  /* Generic: light at a quarter of heavy, within 10%. */
  CHECK_GE (4 * l0, h0 * 9 / 10);
  CHECK_LE (4 * l0, h0 * 11 / 10);
  printf ("wc forfeit: ok\n");
}

/* Queueing SSD, IOPS mode.  (1) group_idle arms for a group's last queue
 * only when another group is busy (a share to protect), never with one
 * group alone.  (2) With no idling, a group that empties and is back
 * within CFQ_IDLE_DELAY (200 ms) keeps its vdisktime instead of going to
 * the end of the tree (our deviation); later than that it goes to the end.
 */
static void
test_ssd_group_place (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_group *ga = sched_group_new (s, "a", 500);
  struct sched_group *gc = sched_group_new (s, "c", 100);
  struct sched_queue *a = sched_queue_new (s, ga, SCHED_CLASS_BE, 4);
  struct sched_queue *c = sched_queue_new (s, gc, SCHED_CLASS_BE, 4);
  struct rq ra[4], rc[2];
  struct cfq_stats st;
  uint64_t next, va, vc;

  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 8 * MS), 0);
  CHECK_EQ (sched_set (s, "rotational", 0), 0);
  CHECK_EQ (sched_set (s, "hw_tag", 1), 0);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_IOPS), 0);

  /* (1) a alone: its queue empties, no group idle window. */
  mkrq (&ra[0], a, 0, 4096, RQ_SYNC);
  sched_insert (s, &ra[0], 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &ra[0]);
  sched_completed (s, &ra[0], 1 * MS);
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  cfq_get_stats (s, &st);
  CHECK_EQ (st.group_idle_arms, 0);
  /* a and c busy: a's last request completes, the window holds the disk
   * for a although c has work.
   */
  mkrq (&ra[1], a, 8, 4096, RQ_SYNC);
  mkrq (&rc[0], c, 90000000, 4096, RQ_SYNC);
  sched_insert (s, &ra[1], 2 * MS);
  sched_insert (s, &rc[0], 2 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 2 * MS, &next), &ra[1]);
  sched_completed (s, &ra[1], 3 * MS);
  CHECK_NULL (sched_dispatch (s, 3 * MS, &next));
  CHECK_EQ (next, 11 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.group_idle_arms, 1);
  /* The window runs out: c gets the disk. */
  CHECK_PTR_EQ (sched_dispatch (s, 11 * MS, &next), &rc[0]);
  sched_completed (s, &rc[0], 12 * MS);
  CHECK_NULL (sched_dispatch (s, 12 * MS, &next));

  /* (2) No idling now.  c is still the active group (nothing queued,
   * nothing to expire it for); a left the tree when its window ran out.
   */
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  va = cfq_group_vdisktime (s, ga);
  vc = cfq_group_vdisktime (s, gc);
  /* a back 9 ms after it left: it keeps its vdisktime.  2.6.36 would put
   * it behind c, at vc + CFQ_IDLE_DELAY.
   */
  mkrq (&ra[2], a, 16, 4096, RQ_SYNC);
  sched_insert (s, &ra[2], 20 * MS);
  CHECK_EQ (cfq_group_vdisktime (s, ga), va);
  CHECK_NE (va, vc + 200 * MS);
  /* c expires empty (charged 1 request at weight 100) and leaves. */
  CHECK_PTR_EQ (sched_dispatch (s, 20 * MS, &next), &ra[2]);
  CHECK_GT (cfq_group_vdisktime (s, gc), vc);
  vc = cfq_group_vdisktime (s, gc);
  sched_completed (s, &ra[2], 21 * MS);
  /* c back 1 ms after it left: it keeps its place, although it is now
   * far ahead of a (2.6.36: a's vdisktime + CFQ_IDLE_DELAY, before it).
   */
  mkrq (&rc[1], c, 90000008, 4096, RQ_SYNC);
  sched_insert (s, &rc[1], 21 * MS);
  CHECK_EQ (cfq_group_vdisktime (s, gc), vc);
  CHECK_GT (vc, cfq_group_vdisktime (s, ga) + 200 * MS);
  /* a expires and leaves; c is served. */
  CHECK_PTR_EQ (sched_dispatch (s, 21 * MS, &next), &rc[1]);
  sched_completed (s, &rc[1], 22 * MS);
  vc = cfq_group_vdisktime (s, gc);
  CHECK_LT (cfq_group_vdisktime (s, ga), vc);
  /* a back 379 ms after it left: too long, it goes to the end of the
   * tree, behind c, as in 2.6.36; but behind where c will be once charged
   * for the request its slice has dispatched so far (deviation 30): one
   * request, 1 ms << 12 scaled by 500/100.
   */
  mkrq (&ra[3], a, 24, 4096, RQ_SYNC);
  sched_insert (s, &ra[3], 400 * MS);
  CHECK_EQ (cfq_group_vdisktime (s, ga),
            vc + (1 * MS << 12) * 500 / 100 + 200 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 400 * MS, &next), &ra[3]);
  sched_completed (s, &ra[3], 401 * MS);
  CHECK_NULL (sched_dispatch (s, 401 * MS, &next));
  CHECK (!sched_has_work (s));

  sched_queue_free (s, a);
  sched_queue_free (s, c);
  sched_destroy (s);
  printf ("ssd group idle and group place: ok\n");
}

/* Per-group counters (cfq_group_get_stats): exact on a scripted run, the
 * idling sequence of test_idling with the two queues in two groups; then
 * on a busy run of three groups on a queueing device, each sums to its
 * device-wide counter, and a deep group that expires with requests in the
 * driver is charged their drain (used_ns past its slices' usage).
 */
static void
group_counters_sum (struct sched *s, struct sched_group **g, unsigned n)
{
  struct cfq_group_stats gs;
  struct cfq_stats st;
  uint64_t slices = 0, arms = 0, garms = 0, hits = 0, touts = 0;
  uint64_t pre = 0, disp = 0;

  cfq_get_stats (s, &st);
  for (unsigned i = 0; i < n; i++) {
    cfq_group_get_stats (s, g[i], &gs);
    slices += gs.slices;
    arms += gs.idle_arms;
    garms += gs.group_idle_arms;
    hits += gs.idle_hits;
    touts += gs.idle_timeouts;
    pre += gs.preemptions;
    disp += gs.dispatched;
  }
  CHECK_EQ (slices, st.slices);
  CHECK_EQ (arms, st.idle_arms);
  CHECK_EQ (garms, st.group_idle_arms);
  CHECK_EQ (hits, st.idle_hits);
  CHECK_EQ (touts, st.idle_timeouts);
  CHECK_EQ (pre, st.preemptions);
  CHECK_EQ (disp, st.dispatched);
}

static void
test_group_counters (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_group *g[2] = { sched_group_new (s, "a", 500),
                               sched_group_new (s, "b", 500) };
  struct sched_queue *a = sched_queue_new (s, g[0], SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, g[1], SCHED_CLASS_BE, 4);
  struct cfq_group_stats ga, gb;
  struct rq ra[2], rb[2];
  uint64_t next;

  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  mkrq (&ra[0], a, 0, 4096, RQ_SYNC);
  sched_insert (s, &ra[0], 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &ra[0]);
  for (int i = 0; i < 2; i++) {
    mkrq (&rb[i], b, 1000000 + 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &rb[i], 100 * US);
  }
  sched_completed (s, &ra[0], 1 * MS);          /* slice starts, idles */
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  mkrq (&ra[1], a, 8, 4096, RQ_SYNC);
  sched_insert (s, &ra[1], 3 * MS);             /* idle hit */
  CHECK_PTR_EQ (sched_dispatch (s, 3 * MS, &next), &ra[1]);
  sched_completed (s, &ra[1], 4 * MS);          /* idles again */
  CHECK_NULL (sched_dispatch (s, 4 * MS, &next));
  CHECK_EQ (next, 12 * MS);
  /* The window runs out at 12 ms: a's slice (1..12 ms) ends, b's starts. */
  CHECK_PTR_EQ (sched_dispatch (s, 12 * MS, &next), &rb[0]);
  cfq_group_get_stats (s, g[0], &ga);
  cfq_group_get_stats (s, g[1], &gb);
  CHECK_EQ (ga.slices, 1);
  CHECK_EQ (ga.idle_arms, 2);
  CHECK_EQ (ga.group_idle_arms, 0);
  CHECK_EQ (ga.idle_hits, 1);
  CHECK_EQ (ga.idle_timeouts, 1);
  CHECK_EQ (ga.dispatched, 2);
  CHECK_EQ (ga.used_ns, 11 * MS);
  CHECK_EQ (ga.preemptions, 0);
  CHECK_EQ (gb.slices, 1);
  CHECK_EQ (gb.dispatched, 1);
  CHECK_EQ (gb.idle_arms, 0);
  CHECK_EQ (gb.idle_hits, 0);
  CHECK_EQ (gb.idle_timeouts, 0);
  CHECK_EQ (gb.used_ns, 0);
  group_counters_sum (s, g, 2);
  CHECK_PTR_EQ (sched_dispatch (s, 12 * MS, &next), &rb[1]);
  sched_completed (s, &rb[0], 13 * MS);
  sched_completed (s, &rb[1], 14 * MS);
  while (sched_dispatch (s, next, &next))
    ;
  CHECK (!sched_has_work (s));
  group_counters_sum (s, g, 2);
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);

  /* Drain charge: a deep queue on a device that queues expires at the
   * first completion after its slice with requests still in the driver;
   * its group is charged until the last of them completed.
   */
  struct rq da[8], db[8], *out[16];
  unsigned nout = 0;
  struct rq *r;

  s = kernel_cfq ();
  g[0] = sched_group_new (s, "a", 500);
  g[1] = sched_group_new (s, "b", 500);
  a = sched_queue_new (s, g[0], SCHED_CLASS_BE, 4);
  b = sched_queue_new (s, g[1], SCHED_CLASS_BE, 4);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  CHECK_EQ (sched_set (s, "hw_tag", 1), 0);
  CHECK_EQ (sched_set (s, "slice_sync", 10 * MS), 0);
  for (int i = 0; i < 8; i++) {
    mkrq (&da[i], a, (uint64_t) i * 40000000, 4096, RQ_SYNC);
    mkrq (&db[i], b, 900000000 + (uint64_t) i * 40000000, 4096, RQ_SYNC);
    sched_insert (s, &da[i], 0);
    sched_insert (s, &db[i], 0);
  }
  while ((r = sched_dispatch (s, 0, &next)))
    out[nout++] = r;
  CHECK_GE (nout, 2);
  CHECK_PTR_EQ (out[0]->q, out[nout - 1]->q);
  struct sched_queue *first = out[0]->q;
  struct sched_group *gf = first == a ? g[0] : g[1];
  /* First completion at 1 ms: the slice is 1..11 ms. */
  sched_completed (s, out[0], 1 * MS);
  while (nout < 16 && (r = sched_dispatch (s, 1 * MS, &next)))
    out[nout++] = r;
  for (unsigned i = 1; i < nout; i++)
    CHECK_PTR_EQ (out[i]->q, first);
  /* At 12 ms one more completes: the slice is used, the queue expires
   * with the rest in the driver.  Charged: its 10 ms slice.
   */
  sched_completed (s, out[1], 12 * MS);
  cfq_group_get_stats (s, gf, &ga);
  CHECK_EQ (ga.used_ns, 10 * MS);
  CHECK_EQ (ga.in_driver, nout - 2);
  uint64_t vd = cfq_group_vdisktime (s, gf);
  r = sched_dispatch (s, 12 * MS, &next);
  CHECK (r);
  CHECK_PTR_NE (r->q, first);
  /* The rest complete at 20 ms: 8 ms of drain charged. */
  for (unsigned i = 2; i < nout; i++)
    sched_completed (s, out[i], 20 * MS);
  cfq_group_get_stats (s, gf, &ga);
  CHECK_EQ (ga.used_ns, 18 * MS);
  CHECK_EQ (ga.in_driver, 0);
  CHECK_GT (cfq_group_vdisktime (s, gf), vd);
  group_counters_sum (s, g, 2);
  sched_completed (s, r, 21 * MS);
  for (uint64_t t = 21 * MS; sched_has_work (s); t += 1 * MS)
    while ((r = sched_dispatch (s, t, &next)))
      sched_completed (s, r, t);
  group_counters_sum (s, g, 2);
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);

  /* A busy run of three groups with deep random readers: every counter
   * sums to its device-wide one, and the device was busy all along, so
   * the groups' time used covers about the whole run.
   */
  struct harness h;
  struct sched_group *hg[3];
  struct cfq_group_stats gs;
  uint64_t used = 0;

  h_init (&h, 32);
  CHECK_EQ (sched_set (h.s, "mode", CFQ_MODE_TIME), 0);
  for (int i = 0; i < 3; i++) {
    static const char *names[] = { "small", "medium", "large" };
    struct h_client *c;

    hg[i] = sched_group_new (h.s, names[i], 100u << i);
    c = h_client (&h, hg[i], SCHED_CLASS_BE, 4);
    c->depth = 16;
    c->random = true;
    c->cost = 5 * MS;
    c->base = (uint64_t) i << 40;
  }
  h_run (&h, 5000 * MS);
  group_counters_sum (h.s, hg, 3);
  for (int i = 0; i < 3; i++) {
    cfq_group_get_stats (h.s, hg[i], &gs);
    CHECK_GT (gs.slices, 3);
    CHECK_GT (gs.dispatched, 0);
    CHECK_GT (gs.used_ns, 0);
    used += gs.used_ns;
  }
  CHECK_GT (used, 4500 * MS);
  CHECK_LE (used, 5000 * MS + 100 * MS);
  h_fini (&h);
  printf ("group counters: ok\n");
}

/* A boosted connection's drain is forgiven as its slices are: the deep
 * queue of the drain-charge case above, each group with the start-up
 * boost (its first request starts it), expires at 12 ms after a 10 ms
 * slice with 6 requests in the driver, which complete at 20 ms.  Its
 * group's vdisktime rises by as much for the 8 ms of drain as for 8 ms
 * of its slice, both divided by the boost: a drain charged in full would
 * rise 24x what the slice's 10 ms does, and such a queue, which expires
 * with a request out at every turn, would fall behind the groups it is
 * to pass.
 */
static void
test_boost_drain (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_group *g[2];
  struct sched_queue *q[2];
  struct rq ra[8], rb[8], *out[16], *r;
  struct lat_conf lc;
  unsigned nout = 0;
  uint64_t next, vd0, vd1, vd2;

  lat_conf_init (&lc);
  lc.boost = 1;
  for (int i = 0; i < 2; i++) {
    g[i] = sched_group_new (s, i ? "b" : "a", 500);
    CHECK_EQ (sched_group_set_latency (s, g[i], &lc), 0);
    q[i] = sched_queue_new (s, g[i], SCHED_CLASS_BE, 4);
  }
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  CHECK_EQ (sched_set (s, "hw_tag", 1), 0);
  CHECK_EQ (sched_set (s, "slice_sync", 10 * MS), 0);
  for (int i = 0; i < 8; i++) {
    mkrq (&ra[i], q[0], (uint64_t) i * 40000000, 4096, RQ_SYNC);
    mkrq (&rb[i], q[1], 900000000 + (uint64_t) i * 40000000, 4096, RQ_SYNC);
    sched_insert (s, &ra[i], 1 * US);
    sched_insert (s, &rb[i], 1 * US);
  }
  while ((r = sched_dispatch (s, 1 * US, &next)))
    out[nout++] = r;
  CHECK_GE (nout, 2);
  struct sched_group *gf = out[0]->q == q[0] ? g[0] : g[1];
  vd0 = cfq_group_vdisktime (s, gf);
  sched_completed (s, out[0], 1 * MS);
  while (nout < 16 && (r = sched_dispatch (s, 1 * MS, &next)))
    out[nout++] = r;
  CHECK_GE (nout, 3);
  sched_completed (s, out[1], 12 * MS);
  vd1 = cfq_group_vdisktime (s, gf);
  r = sched_dispatch (s, 12 * MS, &next);
  CHECK (r);
  CHECK_PTR_NE (r->q, out[0]->q);
  for (unsigned i = 2; i < nout; i++)
    sched_completed (s, out[i], 20 * MS);
  vd2 = cfq_group_vdisktime (s, gf);
  CHECK_GT (vd1, vd0);
  CHECK_GT (vd2, vd1);
  /* 10 ms of slice against 8 ms of drain: 8/10 of the rise, +-10%. */
  CHECK_LE ((vd2 - vd1) * 100, (vd1 - vd0) * 88);
  CHECK_GE ((vd2 - vd1) * 100, (vd1 - vd0) * 72);
  sched_completed (s, r, 21 * MS);
  for (uint64_t t = 21 * MS; sched_has_work (s); t += 1 * MS)
    while ((r = sched_dispatch (s, t, &next)))
      sched_completed (s, r, t);
  for (int i = 0; i < 2; i++)
    sched_queue_free (s, q[i]);
  sched_destroy (s);
  printf ("boost drain: ok\n");
}

static void
mk_read (struct rq *rq, struct sched_queue *q, uint64_t off, uint32_t len)
{
  memset (rq, 0, sizeof *rq);
  rq->q = q;
  rq->off = off;
  rq->len = len;
  rq->op = RQ_READ;
  rq->flags = RQ_SYNC;
}

/* sched_cancel: a request taken back before dispatch (its client went
 * away) leaves CFQ as if it had never been queued: the counts, the
 * service trees, a cap's hold and its deadline, the queue's next request;
 * a connection already closed goes with it.  Without it a request a cap
 * holds for a second, or any request behind another group's turn, would
 * keep its connection for as long.
 */
static void
test_cancel (void)
{
  const uint64_t t0 = 10 * NSEC_PER_SEC;
  struct sched *s;
  struct sched_group *gcap, *gother, *gres;
  struct sched_queue *qa, *qb, *qc;
  struct qos_conf c;
  struct cfq_stats st;
  struct rq r[10], *d, *held;
  uint64_t next, hold_end;

  /* 1. A cap's hold: bps_max at its floor, two 1 MiB reads. */
  s = kernel_cfq ();
  CHECK (s);
  CHECK_EQ (sched_set (s, "rotational", 0), 0);
  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  gcap = sched_group_new (s, "capped", 500);
  gother = sched_group_new (s, "other", 500);
  CHECK (gcap && gother);
  memset (&c, 0, sizeof c);
  c.cap[QOS_BPS_MAX].rate = QOS_BPS_FLOOR;
  CHECK_EQ (sched_group_set_qos (s, gcap, &c), 0);
  qa = sched_queue_new (s, gcap, SCHED_CLASS_BE, 4);
  qb = sched_queue_new (s, gother, SCHED_CLASS_BE, 4);
  CHECK (qa && qb);
  mk_read (&r[0], qa, 0, 1 << 20);
  mk_read (&r[1], qa, 1 << 20, 1 << 20);
  sched_insert (s, &r[0], t0);
  sched_insert (s, &r[1], t0);
  CHECK_PTR_EQ (sched_dispatch (s, t0, &next), &r[0]);
  CHECK_NULL (sched_dispatch (s, t0, &next));
  hold_end = next;
  CHECK_GT (hold_end, t0 + 1000 * MS);   /* 1 MiB at 1 MB/s */
  CHECK_LT (hold_end, t0 + 1200 * MS);
  sched_completed (s, &r[0], t0 + 1 * MS);
  CHECK_NULL (sched_dispatch (s, t0 + 2 * MS, &next));
  CHECK_EQ (next, hold_end);
  sched_cancel (s, &r[1], t0 + 3 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_queued, 0u);
  CHECK_EQ (st.busy_queues, 0u);
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, t0 + 4 * MS, &next));
  CHECK_EQ (next, SCHED_NEVER);         /* no hold left to wake for */
  /* The other group is served at once; the capped one again after its
   * hold, whose bucket the taken-back request did not touch.
   */
  mk_read (&r[2], qb, 0, 4096);
  sched_insert (s, &r[2], t0 + 5 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, t0 + 5 * MS, &next), &r[2]);
  sched_completed (s, &r[2], t0 + 6 * MS);
  mk_read (&r[1], qa, 1 << 20, 1 << 20);
  sched_insert (s, &r[1], t0 + 7 * MS);
  CHECK_NULL (sched_dispatch (s, t0 + 7 * MS, &next));
  CHECK_EQ (next, hold_end);
  CHECK_PTR_EQ (sched_dispatch (s, hold_end, &next), &r[1]);
  sched_completed (s, &r[1], hold_end + 1 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.inserted, 4u);
  CHECK_EQ (st.dispatched, 3u);
  CHECK_EQ (st.completed, 3u);

  /* A closed connection goes with its last request, taken back after
   * the other completed, or before (valgrind and ASan check the memory).
   */
  for (int order = 0; order < 2; order++) {
    uint64_t t = t0 + (uint64_t) (10 + 10 * order) * NSEC_PER_SEC;

    qc = sched_queue_new (s, gcap, SCHED_CLASS_BE, 4);
    CHECK (qc);
    mk_read (&r[3], qc, 0, 1 << 20);
    mk_read (&r[4], qc, 1 << 20, 1 << 20);
    sched_insert (s, &r[3], t);
    sched_insert (s, &r[4], t);
    d = sched_dispatch (s, t, &next);   /* either: sector order */
    CHECK (d == &r[3] || d == &r[4]);
    held = d == &r[3] ? &r[4] : &r[3];
    CHECK_NULL (sched_dispatch (s, t, &next));
    sched_queue_free (s, qc);
    if (order == 0) {
      sched_completed (s, d, t + 1 * MS);
      sched_cancel (s, held, t + 2 * MS);
    }
    else {
      sched_cancel (s, held, t + 1 * MS);
      sched_completed (s, d, t + 2 * MS);
    }
    CHECK (!sched_has_work (s));
    CHECK_NULL (sched_dispatch (s, t + 3 * MS, &next));
    CHECK_EQ (next, SCHED_NEVER);
  }
  sched_destroy (s);

  /* 2. Ordinary scheduling: another group's request waits while CFQ
   * idles for the active queue; taken back, it leaves the tree and the
   * idle window goes on as before.
   */
  s = kernel_cfq ();
  CHECK (s);
  gcap = sched_group_new (s, "a", 500);
  gother = sched_group_new (s, "b", 500);
  qa = sched_queue_new (s, gcap, SCHED_CLASS_BE, 4);
  qb = sched_queue_new (s, gother, SCHED_CLASS_BE, 4);
  CHECK (qa && qb);
  mk_read (&r[0], qa, 0, 4096);
  sched_insert (s, &r[0], t0);
  CHECK_PTR_EQ (sched_dispatch (s, t0, &next), &r[0]);
  sched_completed (s, &r[0], t0 + 1 * MS);
  mk_read (&r[1], qb, 1 << 30, 4096);
  sched_insert (s, &r[1], t0 + 2 * MS);
  CHECK_NULL (sched_dispatch (s, t0 + 2 * MS, &next));    /* idling */
  CHECK_GT (next, t0 + 2 * MS);
  CHECK_LT (next, t0 + 20 * MS);
  hold_end = next;
  sched_cancel (s, &r[1], t0 + 3 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_queued, 0u);
  CHECK_EQ (st.busy_queues, 1u);        /* the active queue, idling */
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, t0 + 3 * MS, &next));
  CHECK_EQ (next, hold_end);
  CHECK_NULL (sched_dispatch (s, hold_end, &next));
  CHECK_EQ (next, SCHED_NEVER);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.busy_queues, 0u);

  /* 3. The active queue's next request taken back: the one after it
   * goes next.
   */
  for (int i = 0; i < 3; i++) {
    mk_read (&r[i], qa, (uint64_t) (100 + i) << 20, 4096);
    sched_insert (s, &r[i], t0 + 100 * MS);
  }
  CHECK_PTR_EQ (sched_dispatch (s, t0 + 100 * MS, &next), &r[0]);
  sched_cancel (s, &r[1], t0 + 101 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, t0 + 101 * MS, &next), &r[2]);
  sched_completed (s, &r[0], t0 + 102 * MS);
  sched_completed (s, &r[2], t0 + 103 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_queued, 0u);
  CHECK_EQ (st.rq_in_driver, 0u);
  sched_queue_free (s, qa);
  sched_queue_free (s, qb);

  /* 4. A reserved group's only request taken back: nothing is due. */
  gres = sched_group_new (s, "gold", 100);
  CHECK (gres);
  memset (&c, 0, sizeof c);
  c.iops_min = 10;
  CHECK_EQ (sched_group_set_qos (s, gres, &c), 0);
  qc = sched_queue_new (s, gres, SCHED_CLASS_BE, 4);
  CHECK (qc);
  mk_read (&r[5], qc, 0, 4096);
  sched_insert (s, &r[5], t0 + 200 * MS);
  sched_cancel (s, &r[5], t0 + 200 * MS);
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, t0 + 201 * MS, &next));
  CHECK_EQ (next, SCHED_NEVER);
  sched_queue_free (s, qc);
  sched_destroy (s);
  printf ("cancel: ok\n");
}

/* A dispatched request the mechanism holds back (deactivate: it waits
 * for a buffer) is not waited for: its queue, its group's only one,
 * would keep the disk while it is in flight; deactivated, the other
 * group is served at once.  Activated again while the other group is
 * served, its device time is charged to its group as it drains
 * (time mode), and every count is back to zero at the end.
 */
static void
test_deactivate (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_group *ga = sched_group_new (s, "a", 500);
  struct sched_group *gb = sched_group_new (s, "b", 500);
  struct sched_queue *a1 = sched_queue_new (s, ga, SCHED_CLASS_BE, 4);
  struct sched_queue *b1 = sched_queue_new (s, gb, SCHED_CLASS_BE, 4);
  struct cfq_group_stats gs0, gs1;
  struct cfq_stats st;
  struct rq ra, rb;
  uint64_t next;

  CHECK_EQ (sched_set (s, "group_idle", 5 * MS), 0);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  mkrq (&ra, a1, 0, 65536, RQ_SYNC);
  sched_insert (s, &ra, 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &ra);
  mkrq (&rb, b1, 90000000, 65536, RQ_SYNC);
  sched_insert (s, &rb, 100);
  /* ra in flight: a1 keeps the disk. */
  CHECK_NULL (sched_dispatch (s, 1 * MS, &next));
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_in_driver, 1u);
  /* Held back by the mechanism: b goes now. */
  sched_deactivate (s, &ra, 1 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_in_driver, 0u);
  cfq_group_get_stats (s, ga, &gs0);
  CHECK_EQ (gs0.in_driver, 0u);
  CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &rb);
  /* ra goes to the device after all, while b is served. */
  sched_activate (s, &ra, 2 * MS);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_in_driver, 2u);
  cfq_group_get_stats (s, ga, &gs0);
  CHECK_EQ (gs0.in_driver, 1u);
  sched_completed (s, &ra, 4 * MS);
  cfq_group_get_stats (s, ga, &gs1);
  CHECK_EQ (gs1.used_ns - gs0.used_ns, 2 * MS);
  sched_completed (s, &rb, 5 * MS);
  while (sched_dispatch (s, 5 * MS, &next))
    ;
  cfq_get_stats (s, &st);
  CHECK_EQ (st.rq_in_driver, 0u);
  CHECK (!sched_has_work (s));
  sched_queue_free (s, a1);
  sched_queue_free (s, b1);
  sched_destroy (s);
  printf ("deactivate and activate: ok\n");
}

int
main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  test_tunables ();
  test_classes ();
  test_idling ();
  test_group_idle_and_idle_class ();
  test_ssd_group_place ();
  test_wc_forfeit ();
  test_low_latency ();
  test_fifo ();
  test_back_seek ();
  test_preemption ();
  test_async_must_dispatch ();
  test_async_deadline ();
  test_hw_tag ();
  test_iops_mode ();
  test_latency_late_start ();
  test_merge_split ();
  test_group_weights ();
  test_group_counters ();
  test_boost_drain ();
  test_cancel ();
  test_deactivate ();
  printf ("cfq: ok\n");
  check_done ("test-cfq");
  return 0;
}
