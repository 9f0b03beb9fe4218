/* test-cfq.c: CFQ's mechanisms, one by one, on a virtual clock.
 *
 * Tunable table; classes and levels; idling and the idle deadline; fifo
 * expiry; back-seek choice; preemption; hw_tag detection; IOPS vs time
 * charging; queue merge and split; freeing a queue mid-flight.
 */
#include "cfq-harness.h"

#include <errno.h>

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
  };

  assert (s);
  assert (sched_lookup ("cfq") == &cfq_ops);
  assert (cfq_nr_tunables == sizeof want / sizeof want[0]);
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    const struct cfq_tunable *t = cfq_tunable_lookup (want[i].k);
    assert (t);
    assert (strcmp (t->unit, want[i].unit) == 0);
    assert (t->def == want[i].def);
    assert (t->min <= t->def && t->def <= t->max);
    assert (t->help && *t->help);
    assert (sched_get (s, want[i].k, &v) == 0 && v == want[i].def);
    /* Range errors at both ends, nothing clamped. */
    if (t->min > 0)
      assert (sched_set (s, want[i].k, t->min - 1) == -ERANGE);
    assert (sched_set (s, want[i].k, t->max + 1) == -ERANGE);
    assert (sched_get (s, want[i].k, &v) == 0 && v == want[i].def);
    assert (sched_set (s, want[i].k, t->max) == 0);
    assert (sched_get (s, want[i].k, &v) == 0 && v == t->max);
    assert (cfq_tunable_check (want[i].k, t->min) == 0);
  }
  assert (sched_set (s, "nonesuch", 1) == -ENOENT);
  assert (sched_get (s, "nonesuch", &v) == -ENOENT);
  assert (cfq_tunable_check ("nonesuch", 0) == -ENOENT);
  assert (sched_set (s, "mode", 3) == -ERANGE);
  assert (sched_set (s, "low_latency", 2) == -ERANGE);
  assert (sched_set (s, "quantum", 0) == -ERANGE);
  assert (cfq_mode_parse ("iops", &v) == 0 && v == CFQ_MODE_IOPS);
  assert (cfq_mode_parse ("time", &v) == 0 && v == CFQ_MODE_TIME);
  assert (cfq_mode_parse ("auto", &v) == 0 && v == CFQ_MODE_AUTO);
  assert (cfq_mode_parse ("fast", &v) == -EINVAL);
  assert (strcmp (cfq_mode_name (CFQ_MODE_IOPS), "iops") == 0);
  /* Bad groups and queues are refused. */
  assert (sched_group_new (s, "x", 99) == NULL);
  assert (sched_group_new (s, "x", 1001) == NULL);
  assert (sched_queue_new (s, NULL, SCHED_CLASS_BE, 8) == NULL);
  assert (sched_queue_new (s, NULL, 0, 0) == NULL);
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
  assert (rt->dispatched > 300);
  assert (be->first_dispatch >= rt->last_dispatch);
  /* IDLE got the device only after BE had nothing... BE always has. */
  assert (idle->dispatched == 0);
  h_fini (&h);

  /* IDLE is served when the others stop. */
  h_init (&h, 1);
  be = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  idle = h_client (&h, NULL, SCHED_CLASS_IDLE, 0);
  be->depth = idle->depth = 4;
  be->stop = 300 * MS;
  h_run (&h, 1000 * MS);
  assert (idle->dispatched > 0);
  /* ... and not before the idle-class grace after the last BE completion
   * (be->cost after its last dispatch).
   */
  assert (idle->first_dispatch >= be->last_dispatch + be->cost + 100 * MS);
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
  assert (be->dispatched > 20);
  assert (idle->first_dispatch > be->last_dispatch);
  h_fini (&h);

  /* Levels: without low_latency scaling the slices are 180 ms (level 0)
   * and 40 ms (level 7): time shares about 4.5 : 1.
   */
  h_init (&h, 1);
  assert (sched_set (h.s, "low_latency", 0) == 0);
  struct h_client *l0 = h_client (&h, NULL, SCHED_CLASS_BE, 0);
  struct h_client *l7 = h_client (&h, NULL, SCHED_CLASS_BE, 7);
  l0->depth = l7->depth = 8;
  h_run (&h, 5000 * MS);
  assert (l0->dispatched > 3 * l7->dispatched);
  assert (l7->dispatched > 0);
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
  struct sched *s = sched_create (&cfq_ops);
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq ra[3], rb[4];
  struct cfq_stats st;
  uint64_t next;
  struct rq *r;

  mkrq (&ra[0], a, 0, 4096, RQ_SYNC);
  sched_insert (s, &ra[0], 0);
  r = sched_dispatch (s, 0, &next);
  assert (r == &ra[0]);
  for (int i = 0; i < 4; i++) {
    mkrq (&rb[i], b, 1000000 + 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &rb[i], 100 * US);
  }
  /* a's slice runs; b waits while a's request is in flight. */
  assert (sched_dispatch (s, 100 * US, &next) == NULL);
  sched_completed (s, &ra[0], 1 * MS);
  /* a is empty: the idle timer is armed, b still waits. */
  assert (sched_dispatch (s, 1 * MS, &next) == NULL);
  assert (next == 1 * MS + 8 * MS);
  cfq_get_stats (s, &st);
  assert (st.idle_arms == 1);
  /* a's next request arrives in the window: served right away. */
  mkrq (&ra[1], a, 8, 4096, RQ_SYNC);
  sched_insert (s, &ra[1], 3 * MS);
  r = sched_dispatch (s, 3 * MS, &next);
  assert (r == &ra[1]);
  sched_completed (s, &ra[1], 4 * MS);
  assert (sched_dispatch (s, 4 * MS, &next) == NULL);
  assert (next == 12 * MS);
  /* Nothing comes: at the deadline the window closes and b is served. */
  r = sched_dispatch (s, next, &next);
  assert (r && r->q == b);
  cfq_get_stats (s, &st);
  assert (st.idle_timeouts == 1 && st.idle_hits == 1);

  /* slice_idle=0: no idling at all, b keeps the disk. */
  assert (sched_set (s, "slice_idle", 0) == 0);
  assert (sched_set (s, "group_idle", 0) == 0);
  for (int i = 1; i < 4; i++) {
    r = sched_dispatch (s, 13 * MS, &next);
    assert (r == &rb[i]);
  }
  for (int i = 0; i < 4; i++)
    sched_completed (s, &rb[i], 14 * MS);
  assert (!sched_has_work (s));
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);
  printf ("idling: ok\n");
}

/* Fifo: checked at the first dispatch of a slice; an expired request
 * goes first even if far away.
 */
static void
test_fifo (void)
{
  for (int expired = 0; expired < 2; expired++) {
    struct sched *s = sched_create (&cfq_ops);
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
      assert (r == &far);
    else
      assert (r == &near[0]);
    /* Only once per slice: the rest in sector order. */
    for (int i = expired ? 0 : 1; i < 4; i++) {
      r = sched_dispatch (s, t, &next);
      assert (r == &near[i]);
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
  struct sched *s = sched_create (&cfq_ops);
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq first, back, fwd;
  uint64_t next;
  struct rq *r;
  int pick;

  assert (sched_set (s, "back_seek_penalty", penalty) == 0);
  assert (sched_set (s, "back_seek_max", max_kib) == 0);
  mkrq (&first, a, 1000, 4096, RQ_SYNC);        /* head ends at 1008 */
  sched_insert (s, &first, 0);
  assert (sched_dispatch (s, 0, &next) == &first);
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
  assert (back_seek_pick (2, 16384) == -1);     /* 16 < 22 */
  assert (back_seek_pick (4, 16384) == 1);      /* 32 > 22 */
  assert (back_seek_pick (1, 0) == 1);          /* beyond max: wrap */
  assert (back_seek_pick (1, 4) == -1);         /* 8 sectors = 4 KiB */
  printf ("back seek: ok\n");
}

/* Preemption, in CFQ's order. */
static void
test_preemption (void)
{
  struct sched *s;
  struct sched_queue *be, *rt, *idle, *async;
  struct rq r1[4], r2[2];
  struct cfq_stats st;
  uint64_t next;
  struct rq *r;

  /* RT request preempts a BE slice: it goes next. */
  s = sched_create (&cfq_ops);
  be = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  rt = sched_queue_new (s, NULL, SCHED_CLASS_RT, 4);
  for (int i = 0; i < 4; i++) {
    mkrq (&r1[i], be, 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &r1[i], 0);
  }
  assert (sched_dispatch (s, 0, &next) == &r1[0]);
  sched_completed (s, &r1[0], 1 * MS);
  mkrq (&r2[0], rt, 90000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[0], 2 * MS);
  cfq_get_stats (s, &st);
  assert (st.preemptions == 1);
  assert (sched_dispatch (s, 2 * MS, &next) == &r2[0]);
  /* A BE request does not preempt an RT slice. */
  sched_completed (s, &r2[0], 3 * MS);
  mkrq (&r2[1], rt, 90000008, 4096, RQ_SYNC);
  sched_insert (s, &r2[1], 3 * MS);
  assert (sched_dispatch (s, 3 * MS, &next) == &r2[1]);
  sched_completed (s, &r2[1], 4 * MS);
  cfq_get_stats (s, &st);
  assert (st.preemptions == 1);
  /* RT idles; the BE queue still waits (RT slice not over). */
  assert (sched_dispatch (s, 4 * MS, &next) == NULL);
  /* After the window, BE resumes where it was. */
  r = sched_dispatch (s, next, &next);
  assert (r == &r1[1]);
  sched_queue_free (s, be);
  sched_queue_free (s, rt);
  sched_destroy (s);

  /* A sync request preempts an async slice; an IDLE-class request
   * preempts nothing.
   */
  s = sched_create (&cfq_ops);
  async = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  be = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  idle = sched_queue_new (s, NULL, SCHED_CLASS_IDLE, 0);
  for (int i = 0; i < 4; i++) {
    mkrq (&r1[i], async, 8 * i, 4096, 0);
    sched_insert (s, &r1[i], 0);
  }
  assert (sched_dispatch (s, 0, &next) == &r1[0]);
  mkrq (&r2[0], idle, 5000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[0], 1 * MS);
  cfq_get_stats (s, &st);
  assert (st.preemptions == 0);
  mkrq (&r2[1], be, 7000000, 4096, RQ_SYNC);
  sched_insert (s, &r2[1], 1 * MS);
  cfq_get_stats (s, &st);
  assert (st.preemptions == 1);
  /* The async request in flight drains first (sync idling queue waits for
   * async in flight), then the sync request goes.
   */
  assert (sched_dispatch (s, 1 * MS, &next) == NULL);
  sched_completed (s, &r1[0], 2 * MS);
  assert (sched_dispatch (s, 2 * MS, &next) == &r2[1]);
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
      assert (next != SCHED_NEVER);
  }
  assert (!sched_has_work (s));
  sched_destroy (s);
  printf ("preemption: ok\n");
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
    assert (st.hw_tag == -1);
    for (int i = 0; i < 4; i++) {
      struct h_client *c = h_client (&h, NULL, SCHED_CLASS_BE, 4);
      c->depth = 16;
      c->random = true;
      c->cost = 200 * US;
    }
    h_run (&h, 2000 * MS);
    cfq_get_stats (h.s, &st);
    assert (st.hw_tag == (depth >= 5));
    assert (st.hw_tag_est_depth == (depth == 1 ? 1 : st.hw_tag_est_depth));
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
  assert (sched_set (h.s, "mode", mode) == 0);
  assert (sched_set (h.s, "slice_idle", 0) == 0);
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

static void
test_iops_mode (void)
{
  double time_ratio, iops_ratio;
  struct sched *s = sched_create (&cfq_ops);
  struct cfq_stats st;

  /* auto: IOPS iff slice_idle=0 and hw_tag (unknown counts as yes). */
  cfq_get_stats (s, &st);
  assert (!st.iops_mode);
  assert (sched_set (s, "slice_idle", 0) == 0);
  cfq_get_stats (s, &st);
  assert (st.iops_mode);
  assert (sched_set (s, "mode", CFQ_MODE_TIME) == 0);
  cfq_get_stats (s, &st);
  assert (!st.iops_mode);
  sched_destroy (s);

  iops_vs_time (CFQ_MODE_TIME, &time_ratio);
  iops_vs_time (CFQ_MODE_IOPS, &iops_ratio);
  printf ("time mode: cheap/dear requests %.2f; iops mode %.2f\n",
          time_ratio, iops_ratio);
  assert (time_ratio > 7 && time_ratio < 13);
  assert (iops_ratio > 0.8 && iops_ratio < 1.25);
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
  assert (st.merges >= 1);
  assert (a->last_sq == b->last_sq);
  a->random_from = b->random_from = 1000 * MS;
  h_run (&h, 3000 * MS);
  cfq_get_stats (h.s, &st);
  printf ("merges %llu splits %llu\n", (unsigned long long) st.merges,
          (unsigned long long) st.splits);
  assert (st.splits >= 1);
  assert (a->last_sq != b->last_sq);
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
  assert (r > 3.5 && r < 4.5);
  h_fini (&h);
  printf ("group weights: ok\n");
}

int
main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  test_tunables ();
  test_classes ();
  test_idling ();
  test_fifo ();
  test_back_seek ();
  test_preemption ();
  test_hw_tag ();
  test_iops_mode ();
  test_merge_split ();
  test_group_weights ();
  printf ("cfq: ok\n");
  return 0;
}
