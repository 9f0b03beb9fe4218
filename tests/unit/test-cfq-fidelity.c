/* test-cfq-fidelity.c: the deviations from the kernel that make CFQ never
 * worse than FIFO for one tenant (doc/deviations.md), each on the virtual
 * clock, each failing with the kernel's rule in its place.
 *
 * - A new queue is judged by its first request: a random reader is not
 *   idled for before its history says it is sequential.
 * - Service tree keys do not depend on how many queues were busy when a
 *   queue joined, so equal queues are served in the order they came.
 * - The owner of a shared (merged) queue that turns seeky does not keep
 *   the others merged forever.
 * - A device that says it rotates but serves seeky reads in well under a
 *   millisecond is treated as flash (seek cost).
 * - mode=auto charges by requests on flash, in the policy.
 * - A flush has no place on the disk: it neither moves the head nor
 *   counts as a seek.
 * - On flash that queues, the last queue of a tree does not keep others
 *   off the device while its requests are in flight.
 * - A preempting queue is keyed just before its tree's first queue, not a
 *   second before it.
 * - Plain writes are classified by the policy's rule: sync while the
 *   connection reads or flushes, async when it only streams writes.
 * - A new queue joins the tree its first request says it belongs to.
 * - A lone writeback queue on a disk keeps at most quantum requests at
 *   the device.
 * - A group alone on the tree for a moment gets no slice sized for being
 *   alone, so it does not wait seconds once the others are back.
 */
#include "cfq-harness.h"
#include "qos.h"
#include "check.h"

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

/* Two new readers, each with one request far from the head and from each
 * other.  The kernel marks a new sync queue as idling and only drops the
 * mark after five seeks, so it idles 8 ms after the first one while the
 * second waits; 32 such readers at depth 1 made every one wait a round
 * of idle windows (3.2 s against FIFO's 0.38 s through the server).  Here
 * the first request is judged by its distance from the head: no idle.
 * A reader whose first request is where the head is keeps the kernel's
 * behaviour (test-cfq's idling test), and a sequential reader that starts
 * far away idles from its third request on.
 */
static void
test_new_seeky_queue (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *c;
  struct rq ra, rb, rc[4];
  struct cfq_stats st;
  uint64_t next, t;
  struct rq *r;

  mkrq (&ra, a, 1ULL << 30, 4096, RQ_SYNC);
  mkrq (&rb, b, 1ULL << 31, 4096, RQ_SYNC);
  sched_insert (s, &ra, 0);
  sched_insert (s, &rb, 0);
  r = sched_dispatch (s, 0, &next);
  CHECK_PTR_EQ (r, &ra);
  sched_completed (s, r, 10 * MS);
  /* No idle window for a: b goes at once. */
  r = sched_dispatch (s, 10 * MS, &next);
  CHECK_PTR_EQ (r, &rb);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.idle_arms, 0);
  sched_completed (s, r, 20 * MS);
  CHECK_NULL (sched_dispatch (s, 20 * MS, &next));

  /* A sequential reader starting far from the head: its idle window (as
   * cfq_dump shows it while it is active) is off for its first request,
   * still off at its second (the kernel waits for three think-time
   * samples before it turns the window on), on from its third.
   */
  c = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  t = 1000 * MS;
  for (int i = 0; i < 4; i++) {
    char dump[4096];

    mkrq (&rc[i], c, (1ULL << 32) + 8 * i, 4096, RQ_SYNC);
    sched_insert (s, &rc[i], t);
    r = sched_dispatch (s, t, &next);
    CHECK_PTR_EQ (r, &rc[i]);
    cfq_dump (s, dump, sizeof dump);
    CHECK_NOTNULL (strstr (dump, i < 2 ? "idle_window=0" : "idle_window=1"));
    sched_completed (s, r, t += 1 * MS);
    t += 100 * US;
  }
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_queue_free (s, c);
  sched_destroy (s);
  printf ("new seeky queue: ok\n");
}

/* Service tree keys.  The kernel places a queue that becomes busy at
 * now + (nr_cfqq - 1) * (slice of level 0 - its slice): 80 ms per busy
 * queue for a level-4 reader.  Whoever joins while many queues are busy
 * goes behind everyone who joins later while few are: x joins at 0 with
 * eight others busy (key 560 ms), y at 30 ms with six (key 430 ms), and
 * y was served first.  With 128 connections in one group that made
 * per-connection Jain 0.79 and the worst latency 3.8 s.  Keys measured
 * from the level-4 slice: equal queues in the order they came.
 */
static void
test_service_tree_keys (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *q[8], *x, *y;
  struct rq rq[8], rx, ry = { 0 };
  uint64_t next, t = 0, tx = 0, ty = 0;
  struct rq *r;
  int served = 0;

  CHECK_EQ (sched_set (s, "slice_idle", 0), 0);
  CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  for (int i = 0; i < 8; i++) {
    q[i] = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    mkrq (&rq[i], q[i], (uint64_t) (i + 1) << 28, 4096, RQ_SYNC);
    sched_insert (s, &rq[i], 0);
  }
  x = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  y = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  mkrq (&rx, x, 20ULL << 28, 4096, RQ_SYNC);
  sched_insert (s, &rx, 0);
  /* One request at a time, 10 ms each; y comes at 30 ms. */
  while (served < 10) {
    if (t >= 30 * MS && !ry.q) {
      mkrq (&ry, y, 21ULL << 28, 4096, RQ_SYNC);
      sched_insert (s, &ry, t);
    }
    r = sched_dispatch (s, t, &next);
    if (!r) {
      CHECK_NE (next, SCHED_NEVER);
      t = next;
      continue;
    }
    if (r == &rx)
      tx = t;
    if (r == &ry)
      ty = t;
    t += 10 * MS;
    sched_completed (s, r, t);
    served++;
  }
  CHECK_GT (ty, 0);
  CHECK_LT (tx, ty);
  for (int i = 0; i < 8; i++)
    sched_queue_free (s, q[i]);
  sched_queue_free (s, x);
  sched_queue_free (s, y);
  sched_destroy (s);
  printf ("service tree keys: ok\n");
}

/* Serve everything queued, one request at a time, 1 ms each, following
 * the policy's deadlines; returns the time it ends.
 */
static uint64_t
drain (struct sched *s, uint64_t t)
{
  uint64_t next;
  struct rq *r;

  while (sched_has_work (s)) {
    r = sched_dispatch (s, t, &next);
    if (r)
      sched_completed (s, r, t += 1 * MS);
    else {
      CHECK_NE (next, SCHED_NEVER);
      t = next;
    }
  }
  /* Let a pending idle window run out. */
  sched_dispatch (s, t + 100 * MS, &next);
  return t + 100 * MS;
}

/* Merge and split when the owner of the shared queue asks first.  b's
 * queue becomes the shared one (a is merged into it); it turns seeky
 * while only b reads, so b's request is the first after the split mark.
 * Moving b back to "its own" queue, which is the shared queue itself, and
 * clearing the split mark would leave a merged for good: b must stay
 * where it is and a leave at its next request (deviation 14).
 */
static void
test_split_owner (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq ra, rb, rx[40];
  struct cfq_stats st;
  uint64_t next, t;
  void *shared;

  /* a reads sector 0, b sector 8: b is a close cooperator of a. */
  mkrq (&ra, a, 0, 4096, RQ_SYNC);
  sched_insert (s, &ra, 0);
  CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &ra);
  mkrq (&rb, b, 8, 4096, RQ_SYNC);
  sched_insert (s, &rb, 100 * US);
  sched_completed (s, &ra, 1 * MS);
  CHECK_PTR_EQ (sched_dispatch (s, 1 * MS, &next), &rb);
  /* a's next request goes to b's queue: merged. */
  mkrq (&ra, a, 16, 4096, RQ_SYNC);
  sched_insert (s, &ra, 1100 * US);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.merges, 1);
  shared = ra.sq;
  CHECK_PTR_EQ (shared, rb.sq);
  sched_completed (s, &rb, 2 * MS);
  t = drain (s, 2 * MS);
  /* b (the owner) reads at random through the shared queue, which turns
   * seeky and is marked for a split: b stays where it is.
   */
  for (int i = 0; i < 40; i++) {
    mkrq (&rx[i], b, (uint64_t) (i * 7919 % 97 + 1) << 24, 4096, RQ_SYNC);
    sched_insert (s, &rx[i], t);
    CHECK_PTR_EQ (rx[i].sq, shared);
    t = drain (s, t);
  }
  /* a's next request leaves the shared queue. */
  mkrq (&ra, a, 9ULL << 24, 4096, RQ_SYNC);
  sched_insert (s, &ra, t);
  t = drain (s, t);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.splits, 1);
  CHECK_PTR_NE (ra.sq, shared);
  /* And they stay apart. */
  mkrq (&rb, b, 6ULL << 24, 4096, RQ_SYNC);
  sched_insert (s, &rb, t);
  mkrq (&ra, a, 10ULL << 24, 4096, RQ_SYNC);
  sched_insert (s, &ra, t);
  CHECK_PTR_NE (ra.sq, rb.sq);
  drain (s, t);
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);
  printf ("split, owner first: ok\n");
}

/* Seek cost.  A device that says it rotates (vda here: a virtio disk on
 * flash) but serves reads far from the head in 100 us is taken as
 * non-rotational once 16 such reads have completed: groups are charged
 * by requests (mode=auto), and a sequential reader that runs dry is not
 * idled for, since a queueing device gains nothing from waiting.  On
 * one where those reads take 8 ms, CFQ stays in time mode and idles.
 */
static void
test_seek_cost (void)
{
  for (int v = 0; v < 2; v++) {
    const bool fast = v == 0;
    const uint64_t cost = fast ? 100 * US : 8 * MS;
    struct sched *s = kernel_cfq ();
    struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    struct sched_queue *c = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    struct rq ra[20], rc[4];
    struct cfq_stats st;
    uint64_t next, t = 0, pos = 0;
    struct rq *r;

    cfq_get_stats (s, &st);
    CHECK (!st.iops_mode);
    /* 20 random reads, one at a time. */
    for (int i = 0; i < 20; i++) {
      mkrq (&ra[i], a, (uint64_t) (i * 7919 % 97 + 1) << 24, 4096, RQ_SYNC);
      sched_insert (s, &ra[i], t);
      r = sched_dispatch (s, t, &next);
      if (!r) {
        t = next;
        r = sched_dispatch (s, t, &next);
      }
      CHECK_PTR_EQ (r, &ra[i]);
      pos = rq_sector (r) + 8;
      sched_completed (s, r, t += cost);
      t += 50 * US;
    }
    cfq_get_stats (s, &st);
    CHECK_EQ (st.seek_fast, fast);
    CHECK_EQ (st.iops_mode, fast);
    if (fast)
      CHECK_LT (st.seek_cost, 200 * US);
    else
      CHECK_GT (st.seek_cost, 7 * MS);
    /* Let a's idle window (if any) run out. */
    t += 100 * MS;
    CHECK_NULL (sched_dispatch (s, t, &next));
    /* A sequential reader of 64 KiB requests, starting at the head. */
    for (int i = 0; i < 4; i++) {
      uint64_t arms;

      mkrq (&rc[i], c, pos + 128 * i, 65536, RQ_SYNC);
      sched_insert (s, &rc[i], t);
      r = sched_dispatch (s, t, &next);
      CHECK_PTR_EQ (r, &rc[i]);
      cfq_get_stats (s, &st);
      arms = st.idle_arms;
      sched_completed (s, r, t += cost);
      CHECK_NULL (sched_dispatch (s, t, &next));
      cfq_get_stats (s, &st);
      if (fast) {
        char dump[4096];

        CHECK_EQ (st.idle_arms, arms);
        cfq_dump (s, dump, sizeof dump);
        CHECK_NOTNULL (strstr (dump, "idle_timer=-1"));
      }
      else if (i >= 2) {
        CHECK_EQ (st.idle_arms, arms + 1);
        CHECK_EQ (next, t + 8 * MS);
      }
      t += 100 * US;
    }
    t += 100 * MS;
    sched_dispatch (s, t, &next);
    sched_queue_free (s, a);
    sched_queue_free (s, c);
    sched_destroy (s);
  }
  printf ("seek cost: ok\n");
}

/* One seeky read of queue a, served in svc. */
static uint64_t
seek_read (struct sched *s, struct sched_queue *a, struct rq *rq, int i,
           uint64_t t, uint64_t svc)
{
  uint64_t next;
  struct rq *r;

  mkrq (rq, a, (uint64_t) (i * 7919 % 97 + 1) << 24, 4096, RQ_SYNC);
  sched_insert (s, rq, t);
  r = sched_dispatch (s, t, &next);
  if (!r) {
    t = next;
    r = sched_dispatch (s, t, &next);
  }
  CHECK_PTR_EQ (r, rq);
  sched_completed (s, r, t += svc);
  return t + 50 * US;
}

/* A device taken as flash stays flash through stalls of the machine: a
 * read seen 20 ms late after every three seen in 100 us (a dispatcher
 * that did not run, then a batch) moves the mean past CFQ_SEEK_SLOW but
 * is not a disk; 16 slow reads in a row are.
 */
static void
test_seek_cost_stalls (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq rq;
  struct cfq_stats st;
  uint64_t t = 0;
  int i = 0;

  for (; i < 20; i++)
    t = seek_read (s, a, &rq, i, t, 100 * US);
  cfq_get_stats (s, &st);
  CHECK (st.seek_fast);
  for (; i < 220; i++)
    t = seek_read (s, a, &rq, i, t, i % 4 == 0 ? 20 * MS : 100 * US);
  cfq_get_stats (s, &st);
  CHECK_GT (st.seek_cost, 2 * MS);      /* the mean alone would flip */
  CHECK (st.seek_fast);
  CHECK (st.iops_mode);
  for (int k = 0; k < 15; k++, i++)
    t = seek_read (s, a, &rq, i, t, 8 * MS);
  cfq_get_stats (s, &st);
  CHECK (st.seek_fast);
  t = seek_read (s, a, &rq, i, t, 8 * MS);
  cfq_get_stats (s, &st);
  CHECK (!st.seek_fast);
  CHECK (!st.iops_mode);
  t += 100 * MS;
  sched_dispatch (s, t, &t);
  sched_queue_free (s, a);
  sched_destroy (s);
  printf ("seek cost with stalls: ok\n");
}

/* mode=auto is the policy's rule, so the server and cfqsim apply it alike:
 * on a device that says it does not rotate, groups are charged by
 * requests whatever slice_idle is (the plugin used to force this itself).
 */
static void
test_auto_mode (void)
{
  struct sched *s = kernel_cfq ();
  struct cfq_stats st;

  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  CHECK_EQ (sched_set (s, "rotational", 0), 0);
  cfq_get_stats (s, &st);
  CHECK (st.iops_mode);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_TIME), 0);
  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  CHECK_EQ (sched_set (s, "mode", CFQ_MODE_AUTO), 0);
  CHECK_EQ (sched_set (s, "rotational", 1), 0);
  cfq_get_stats (s, &st);
  CHECK (!st.iops_mode);
  sched_destroy (s);
  printf ("mode=auto: ok\n");
}

/* A flush has no place on the disk.  A client that writes sequentially
 * and flushes after every write (a journal, fs_mark) used to have each
 * flush count as a request at sector 0: the next write looked like a seek
 * from there, the queue turned seeky and lost its idle window, and the
 * head position CFQ sorts and looks for cooperators by jumped to 0.
 */
static void
test_flush_has_no_place (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *c = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq rw, rf;
  uint64_t next, t = 0;
  char dump[4096];
  struct rq *r;

  for (int i = 0; i < 12; i++) {
    mkrq (&rw, c, (1ULL << 24) + 8 * i, 4096, RQ_SYNC);
    rw.op = RQ_WRITE;
    sched_insert (s, &rw, t);
    r = sched_dispatch (s, t, &next);
    CHECK_PTR_EQ (r, &rw);
    sched_completed (s, r, t += 1 * MS);
    mkrq (&rf, c, 0, 0, RQ_SYNC);
    rf.op = RQ_FLUSH;
    sched_insert (s, &rf, t += 50 * US);
    r = sched_dispatch (s, t, &next);
    CHECK_PTR_EQ (r, &rf);
    sched_completed (s, r, t += 200 * US);
    t += 50 * US;
  }
  /* Still sequential: it idles. */
  cfq_dump (s, dump, sizeof dump);
  CHECK_NOTNULL (strstr (dump, "active:"));
  CHECK_NOTNULL (strstr (dump, "idle_window=1"));
  sched_dispatch (s, t + 100 * MS, &next);
  sched_queue_free (s, c);
  sched_destroy (s);
  printf ("flush has no place: ok\n");
}

/* Flash that queues.  2.6.37 stops idling there, but a sync queue that
 * is the last of its tree still kept the device while its requests were
 * in flight: a writer with four 1 MiB writes out made the readers wait
 * for all four, every round (4 readers + 1 writer on the SSD model: the
 * readers got 469 IOPS against FIFO's 35,471).  Now another queue's
 * request goes out at once.
 */
static void
test_flash_no_wait (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *w = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *rd = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq rw[4], rr;
  uint64_t next;
  struct rq *r;

  CHECK_EQ (sched_set (s, "rotational", 0), 0);
  CHECK_EQ (sched_set (s, "hw_tag", 1), 0);
  for (int i = 0; i < 4; i++) {
    mkrq (&rw[i], w, (1ULL << 30) + 2048 * i, 1 << 20, RQ_SYNC);
    rw[i].op = RQ_WRITE;
    sched_insert (s, &rw[i], 0);
  }
  for (int i = 0; i < 4; i++)
    CHECK_PTR_EQ (sched_dispatch (s, 0, &next), &rw[i]);
  CHECK_NULL (sched_dispatch (s, 0, &next));
  mkrq (&rr, rd, 1ULL << 20, 4096, RQ_SYNC);
  sched_insert (s, &rr, 100 * US);
  r = sched_dispatch (s, 100 * US, &next);
  CHECK_PTR_EQ (r, &rr);
  sched_completed (s, &rr, 200 * US);
  for (int i = 0; i < 4; i++)
    sched_completed (s, &rw[i], 8 * MS);
  CHECK (!sched_has_work (s));
  sched_queue_free (s, w);
  sched_queue_free (s, rd);
  sched_destroy (s);
  printf ("flash that queues, no wait: ok\n");
}

/* A preempting queue goes to the front of its tree.  The kernel keys it
 * a second (HZ) before the tree's first queue; seeky readers preempting
 * one another on the SYNC_NOIDLE tree so drove that tree's keys ever
 * further into the past, and it won every workload choice against the
 * SYNC tree: a sequential writer beside four random readers on a disk
 * got 8% of its solo rate, and a new queue waiting on the SYNC tree
 * waited 1.4 s.  Now it is keyed just before the first queue.
 */
static void
test_front_key (void)
{
  struct harness h;
  struct h_client *rd[4], *w;
  double wshare;

  h_init (&h, 32);
  CHECK_EQ (sched_set (h.s, "mode", CFQ_MODE_TIME), 0);
  for (int i = 0; i < 4; i++) {
    rd[i] = h_client (&h, NULL, SCHED_CLASS_BE, 4);
    rd[i]->random = true;
    rd[i]->cost = 12 * MS;
    rd[i]->think = 100 * US;
  }
  w = h_client (&h, NULL, SCHED_CLASS_BE, 4);
  w->len = 1 << 20;
  w->depth = 4;
  w->cost = 7 * MS;
  w->flags = RQ_SYNC;
  h_run (&h, 10000 * MS);
  wshare = (double) w->busy_ns
    / (double) (w->busy_ns + rd[0]->busy_ns + rd[1]->busy_ns
                + rd[2]->busy_ns + rd[3]->busy_ns);
  printf ("writer's share of the disk: %.1f%%\n", 100 * wshare);
  /* Its workload's share by count is 1/5. */
  CHECK_GT (wshare, 0.15);
  for (int i = 0; i < 4; i++)
    CHECK_GT (rd[i]->completed, 100);
  h_fini (&h);
  printf ("front key: ok\n");
}

/* Plain writes: NBD has no sync flag, so the policy's rule decides for a
 * write the mechanism leaves to it (RQ_AUTO): sync while its connection
 * reads, flushes or writes FUA (within the last second), so that such a
 * client's writes share its queue with its reads (in the group's async
 * queue they would wait while the client's own reads were in flight); async for a connection that only streams
 * writes, which is writeback and yields to readers.  A write the
 * mechanism does not leave to the rule keeps what it was given.
 */
static void
test_classify (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_wstate w = { 0 };
  struct rq rr, rw, rx, rt, rf, rb;
  uint64_t next;

  /* The rule itself. */
  mkrq (&rw, a, 0, 4096, RQ_AUTO);
  rw.op = RQ_WRITE;
  sched_classify (&w, &rw, 0);
  CHECK (!(rw.flags & RQ_SYNC));              /* only writes so far */
  mkrq (&rf, a, 0, 0, RQ_SYNC);
  rf.op = RQ_FLUSH;
  sched_classify (&w, &rf, 10 * MS);
  mkrq (&rt, a, 0, 4096, RQ_AUTO);
  rt.op = RQ_TRIM;
  sched_classify (&w, &rt, 20 * MS);
  CHECK (rt.flags & RQ_SYNC);                 /* it flushed lately */
  mkrq (&rw, a, 0, 4096, RQ_AUTO);
  rw.op = RQ_WRITE;
  sched_classify (&w, &rw, 10 * MS + NSEC_PER_SEC + 1);
  CHECK (!(rw.flags & RQ_SYNC));              /* not within a second */
  mkrq (&rx, a, 0, 4096, RQ_SYNC);
  rx.op = RQ_WRITE;
  sched_classify (&w, &rx, 2 * NSEC_PER_SEC);
  CHECK (rx.flags & RQ_SYNC);                 /* the mechanism's word */

  /* In CFQ: a's write after its read shares a's queue; b, which only
   * writes, writes to the group's async queue.
   */
  mkrq (&rr, a, 1 << 20, 4096, RQ_SYNC);
  sched_insert (s, &rr, 0);
  mkrq (&rw, a, 1 << 21, 4096, RQ_AUTO);
  rw.op = RQ_WRITE;
  sched_insert (s, &rw, 0);
  mkrq (&rb, b, 1 << 22, 4096, RQ_AUTO);
  rb.op = RQ_WRITE;
  sched_insert (s, &rb, 0);
  CHECK (rw.flags & RQ_SYNC);
  CHECK_PTR_EQ (rw.sq, rr.sq);
  CHECK (!(rb.flags & RQ_SYNC));
  CHECK_PTR_NE (rb.sq, rr.sq);
  for (uint64_t t = 0; sched_has_work (s); t += 1 * MS) {
    struct rq *r = sched_dispatch (s, t, &next);
    if (r)
      sched_completed (s, r, t + 500 * US);
  }
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);
  printf ("plain writes classified: ok\n");
}

/* A new queue joins the tree its first request says it belongs to: a
 * random reader's first request far from the head goes to SYNC_NOIDLE,
 * where it preempts a reader of that tree whose request is in flight
 * (CFQ would otherwise wait for that request, then idle for the tree),
 * instead of waiting on the SYNC tree, where the kernel puts every new
 * queue.
 */
static void
test_first_tree (void)
{
  struct sched *s = kernel_cfq ();
  struct sched_queue *a = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct sched_queue *b = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
  struct rq ra[9], rb;
  uint64_t next, t = 0;
  struct rq *r;

  /* a: a random reader, seeky by now. */
  for (int i = 0; i < 9; i++) {
    mkrq (&ra[i], a, (uint64_t) (i * 37 % 11 + 1) << 26, 8192, RQ_SYNC);
    sched_insert (s, &ra[i], t);
    r = sched_dispatch (s, t, &next);
    CHECK_PTR_EQ (r, &ra[i]);
    if (i == 8)
      break;
    sched_completed (s, r, t += 10 * MS);
    t += 20 * MS;
    CHECK_NULL (sched_dispatch (s, t, &next));
  }
  /* a's last request is in flight; b's first request, far away, goes
   * out at once.
   */
  mkrq (&rb, b, 3ULL << 30, 4096, RQ_SYNC);
  sched_insert (s, &rb, t + 1 * MS);
  r = sched_dispatch (s, t + 1 * MS, &next);
  CHECK_PTR_EQ (r, &rb);
  sched_completed (s, &ra[8], t + 10 * MS);
  sched_completed (s, &rb, t + 20 * MS);
  sched_dispatch (s, t + 200 * MS, &next);
  sched_queue_free (s, a);
  sched_queue_free (s, b);
  sched_destroy (s);
  printf ("first request picks the tree: ok\n");
}

/* Writeback backlog: a lone async queue on a disk gets at most quantum
 * requests at the device (the kernel: no limit for the only busy queue)
 * while sync I/O was seen within CFQ_SYNC_LATELY (30 s), so a sync request
 * arriving later waits behind no more than that.  With no sync I/O about
 * (never, or a reader whose last read ended 31 s ago) there is nobody to
 * wait behind the backlog and the kernel's rule holds: one client that
 * only writes is as deep at the device under cfq as under fifo.  On
 * flash, and for a sync queue, no limit.
 */
enum { WB_CAPPED, WB_FLASH, WB_SYNC, WB_ALONE, WB_OLD_READ, WB_READ_2S, WB_NR };
#define WB_LATELY (30 * NSEC_PER_SEC)    /* core's CFQ_SYNC_LATELY */

static void
test_writeback_backlog (void)
{
  for (int v = 0; v < WB_NR; v++) {
    const bool sync = v == WB_SYNC;
    /* A read 2 s before still caps: fsyncs 1.2-2 s apart waited behind a
     * refilled backlog with a window of 1 s.
     */
    const bool capped = v == WB_CAPPED || v == WB_READ_2S;
    struct sched *s = kernel_cfq ();
    struct sched_queue *w = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    struct sched_queue *r = sched_queue_new (s, NULL, SCHED_CLASS_BE, 4);
    struct rq rw[16], rr;
    unsigned n = 0;
    uint64_t next, t = 0;

    /* Without low_latency's ramp of the async depth, which would cap
     * both at 10 here.
     */
    CHECK_EQ (sched_set (s, "low_latency", 0), 0);
    if (v == WB_FLASH)
      CHECK_EQ (sched_set (s, "rotational", 0), 0);
    /* A reader beside the writer: one read, done before the writes come
     * (20 ms before them, past any idling, or 31 s before them), so the writer is the only
     * busy queue either way.
     */
    if (v != WB_ALONE) {
      mkrq (&rr, r, 1 << 20, 4096, RQ_SYNC);
      sched_insert (s, &rr, t);
      CHECK (sched_dispatch (s, t, &next) == &rr);
      t += 1 * MS;
      sched_completed (s, &rr, t);
      CHECK (!sched_dispatch (s, t, &next));
      t += v == WB_OLD_READ ? WB_LATELY + 1 * NSEC_PER_SEC
        : v == WB_READ_2S ? 2 * NSEC_PER_SEC : 20 * MS;
    }
    for (int i = 0; i < 16; i++) {
      mkrq (&rw[i], w, (1ULL << 30) + 2048 * i, 1 << 20, sync ? RQ_SYNC : 0);
      rw[i].op = RQ_WRITE;
      sched_insert (s, &rw[i], t);
    }
    while (sched_dispatch (s, t, &next))
      n++;
    CHECK_EQ (n, capped ? 8u : 16u);
    /* Complete them in order; the rest follows, nothing is lost.  Past
     * the window (the reader read nothing more) the cap is lifted: the
     * rest all go at the first completion after it.
     */
    {
      unsigned out = n, peak = n;

      for (int i = 0; i < 16; i++) {
        t += capped && i == 0 ? WB_LATELY : 1 * MS;
        sched_completed (s, &rw[i], t);
        out--;
        while (sched_dispatch (s, t, &next))
          out++;
        if (out > peak)
          peak = out;
      }
      CHECK_EQ (out, 0);
      CHECK_EQ (peak, capped ? 15u : 16u);
      CHECK (!sched_has_work (s));
    }
    sched_queue_free (s, w);
    sched_queue_free (s, r);
    sched_destroy (s);
  }
  printf ("writeback backlog: ok\n");
}

/* The lone-group slice (doc/deviations.md, deviation 30).  On flash in
 * IOPS mode a weight-100 group reads next to four weight-1000 groups
 * whose clients come late or go away for a moment (a loaded machine
 * descheduled them).  CFQ sized the lone group's slice for a group alone
 * (target_latency * 100/100: its whole 100 ms sync slice, ~200 requests),
 * charged all of it at 5x, and the others, placed at its vdisktime before
 * that charge, took ~4 s to catch up while it waited.  Three ways in:
 * - the others stop at 2 s and come back at 2.1 s, inside CFQ_GROUP_KEEP:
 *   they still count in the slice, 7 ms here;
 * - back at 2.5 s, too late to be kept: the lone slice is cut when they
 *   join and they go behind the lone group's charge so far;
 * - the others start 20 ms after the lone group, during its first slice.
 * Each time the lone group waits no longer than between its ordinary
 * turns (~0.6 s) and gets about its weight's share (100/4100 of ~7800
 * requests in 3.9 s, ~190), no more.
 */
static void
lone_group_run (uint64_t start, uint64_t stop, uint64_t back)
{
  struct harness h;
  struct sched_group *ga, *go[4];
  struct h_client *a;
  uint64_t max_gap = 0, t, before;

  h_init (&h, 2);
  CHECK_EQ (sched_set (h.s, "rotational", 0), 0);
  CHECK_EQ (sched_set (h.s, "slice_idle", 0), 0);
  ga = sched_group_new (h.s, "lone", 100);
  CHECK (ga);
  a = h_client (&h, ga, SCHED_CLASS_BE, 4);
  a->depth = 4;
  a->random = true;
  for (int i = 0; i < 4; i++) {
    char name[8];
    struct h_client *c;

    snprintf (name, sizeof name, "o%d", i);
    go[i] = sched_group_new (h.s, name, 1000);
    CHECK (go[i]);
    c = h_client (&h, go[i], SCHED_CLASS_BE, 4);
    c->depth = 4;
    c->random = true;
    c->start = start;
    c->stop = stop;
    if (back) {
      c = h_client (&h, go[i], SCHED_CLASS_BE, 4);
      c->depth = 4;
      c->random = true;
      c->start = back;
    }
  }
  if (!back)
    back = start;
  h_run (&h, back);
  before = a->dispatched;
  /* From the others' (re)start on: the longest the lone group goes
   * without a dispatch, sampled every 10 ms.
   */
  for (t = back + 10 * MS; t <= back + 3900 * MS; t += 10 * MS) {
    h_run (&h, t);
    if (t - a->last_dispatch > max_gap)
      max_gap = t - a->last_dispatch;
  }
  printf ("lone group slice, others at %llu ms: %llu requests in 3.9 s, "
          "longest wait %llu ms\n", (unsigned long long) (back / MS),
          (unsigned long long) (a->dispatched - before),
          (unsigned long long) (max_gap / MS));
  CHECK_LT (max_gap, 1000 * MS);
  CHECK_LT (a->dispatched - before, 300);
  h_fini (&h);
}

static void
test_lone_group_slice (void)
{
  lone_group_run (0, 2000 * MS, 2100 * MS);
  lone_group_run (0, 2000 * MS, 2500 * MS);
  lone_group_run (20 * MS, UINT64_MAX, 0);
  printf ("lone group slice: ok\n");
}

/* Work-conserving groups (deviation 31): on flash that queues, groups
 * with mixed weights each fill their share of the device at once instead
 * of taking turns at the active queue's quantum.  Two groups (100, 400,
 * depth 32 each) and sixteen (100..880, depth 8 each) on a device that
 * serves 16 requests in parallel, 100 us each: cfq's total is at least
 * 0.9x fifo's and each group's share of the completions is within 10%
 * (relative) of weight / total, with group_idle=0 (the mode's
 * condition).  With wc_depth=0 (CFQ's turns) the total is below half of
 * fifo's: the test sees the mode.  With group_idle at its default the
 * mode is off: CFQ's turns, request for request what wc_depth=0 gives.
 */
static uint64_t
wc_groups_run (const char *sched, unsigned n, unsigned depth, int wc_depth,
               bool group_idle, double *share, double *ideal)
{
  struct harness h;
  struct h_client *c[H_MAXC];
  unsigned tw = 0;
  uint64_t total = 0;

  h_init (&h, 16);
  if (strcmp (sched, "cfq") != 0) {
    sched_destroy (h.s);
    h.s = sched_create (sched_lookup (sched));
    CHECK (h.s);
  }
  else {
    CHECK_EQ (sched_set (h.s, "rotational", 0), 0);
    if (wc_depth >= 0)
      CHECK_EQ (sched_set (h.s, "wc_depth", (uint64_t) wc_depth), 0);
    if (!group_idle)
      CHECK_EQ (sched_set (h.s, "group_idle", 0), 0);
  }
  for (unsigned i = 0; i < n; i++) {
    char name[16];
    unsigned w = n == 2 ? (i ? 400 : 100) : 100 + 52 * i;
    struct sched_group *g;

    snprintf (name, sizeof name, "g%02u", i);
    g = sched_group_new (h.s, name, w);
    CHECK (g);
    c[i] = h_client (&h, g, SCHED_CLASS_BE, 4);
    c[i]->depth = depth;
    c[i]->random = true;
    c[i]->cost = 100 * US;
    ideal[i] = w;
    tw += w;
  }
  h_run (&h, 2000 * MS);
  for (unsigned i = 0; i < n; i++)
    total += c[i]->completed;
  for (unsigned i = 0; i < n; i++) {
    share[i] = (double) c[i]->completed / (double) total;
    ideal[i] /= tw;
  }
  h_fini (&h);
  return total;
}

static void
test_wc_groups (void)
{
  static const unsigned ns[2] = { 2, 16 }, depths[2] = { 32, 8 };

  for (int k = 0; k < 2; k++) {
    double share[H_MAXC], ideal[H_MAXC], s_turns[H_MAXC], s_dflt[H_MAXC];
    unsigned n = ns[k];
    uint64_t fifo = wc_groups_run ("fifo", n, depths[k], -1, false, share,
                                   ideal);
    uint64_t off = wc_groups_run ("cfq", n, depths[k], 0, false, share,
                                  ideal);
    uint64_t turns = wc_groups_run ("cfq", n, depths[k], 0, true, s_turns,
                                    ideal);
    uint64_t dflt = wc_groups_run ("cfq", n, depths[k], -1, true, s_dflt,
                                   ideal);
    uint64_t cfq = wc_groups_run ("cfq", n, depths[k], -1, false, share,
                                  ideal);

    printf ("%u groups: fifo %llu, cfq %llu (%.3fx), wc_depth=0 %llu (%.3fx)\n",
            n, (unsigned long long) fifo, (unsigned long long) cfq,
            (double) cfq / (double) fifo, (unsigned long long) off,
            (double) off / (double) fifo);
    printf ("  group_idle at its default: %llu, %llu with wc_depth=0\n",
            (unsigned long long) dflt, (unsigned long long) turns);
    CHECK_GE (cfq * 10, fifo * 9);
    CHECK_LT (off * 2, fifo);
    CHECK_EQ (dflt, turns);
    for (unsigned i = 0; i < n; i++)
      CHECK (s_dflt[i] == s_turns[i]);  /* group by group, exactly */
    for (unsigned i = 0; i < n; i++) {
      printf ("  g%02u: share %.4f, weight share %.4f\n", i, share[i],
              ideal[i]);
      CHECK_LE (share[i], ideal[i] * 1.1);
      CHECK_GE (share[i], ideal[i] * 0.9);
    }
  }
  printf ("work-conserving groups: ok\n");
}

/* Work-conserving groups and a cap (deviation 31 with rule 3 of the
 * caps): A and B, weight 500 each, always backlogged, A capped at 100
 * IOPS for 5 s while B takes the rest of a device serving 16 at once.
 * A held by its cap falls behind in virtual time; the bound of rule 3
 * keeps that to target_latency, so when the cap is lifted B is not shut
 * out while A "catches up" for seconds: B's longest wait after the lift
 * stays under 1 s, and over the next 2 s each gets 40-60%.
 */
static void
test_wc_cap_lag (void)
{
  struct harness h;
  struct sched_group *ga, *gb;
  struct h_client *a, *b;
  struct qos_conf qc = { 0 };
  uint64_t max_gap = 0, t, a0, b0, da, db;

  h_init (&h, 16);
  CHECK_EQ (sched_set (h.s, "rotational", 0), 0);
  CHECK_EQ (sched_set (h.s, "group_idle", 0), 0);
  ga = sched_group_new (h.s, "a", 500);
  gb = sched_group_new (h.s, "b", 500);
  CHECK (ga && gb);
  a = h_client (&h, ga, SCHED_CLASS_BE, 4);
  b = h_client (&h, gb, SCHED_CLASS_BE, 4);
  a->depth = b->depth = 32;
  a->random = b->random = true;
  a->cost = b->cost = 100 * US;
  CHECK_EQ (qos_conf_set (&qc, qos_key_lookup ("iops_max"), 100), 0);
  CHECK_EQ (sched_group_set_qos (h.s, ga, &qc), 0);
  h_run (&h, 5000 * MS);
  CHECK_LT (a->completed, 600);                 /* the cap held: ~500 */
  memset (&qc, 0, sizeof qc);
  CHECK_EQ (sched_group_set_qos (h.s, ga, &qc), 0);
  a0 = a->dispatched;
  b0 = b->dispatched;
  for (t = 5010 * MS; t <= 7000 * MS; t += 10 * MS) {
    h_run (&h, t);
    if (t - b->last_dispatch > max_gap)
      max_gap = t - b->last_dispatch;
  }
  da = a->dispatched - a0;
  db = b->dispatched - b0;
  printf ("wc and a cap lifted after 5 s: b's longest wait %llu ms, "
          "a %llu, b %llu requests in 2 s\n",
          (unsigned long long) (max_gap / MS), (unsigned long long) da,
          (unsigned long long) db);
  CHECK_LT (max_gap, 1000 * MS);
  CHECK_GE (db * 10, (da + db) * 4);
  CHECK_GE (da * 10, (da + db) * 4);
  h_fini (&h);
  printf ("wc cap lag: ok\n");
}

/* Bounded lag through a CPU-bound server (deviation 32, group_lag).  Three
 * groups, weights 100/200/400, each one connection keeping 16 requests
 * outstanding on a fast device (100 us each, 16 at once: 160k IOPS).  What
 * limits them is the server: every completed request goes through one
 * CPU, FIFO, 20 us each (50k IOPS), before its client's next request
 * reaches the scheduler.  So each group is often empty for a moment, with
 * its requests on the CPU and not in the scheduler, as through our NBD
 * path on a 2-core machine (doc/deviations.md, 31 and 32).
 * - group_lag=4 (group_idle at its default): shares within 5% of the
 *   weights, the total within 10% of plain work-conserving groups, and the
 *   worst group's p99 wait in the scheduler under 20 ms.
 * - Negative controls: work-conserving groups without the bound
 *   (group_idle=0) let w400's share slip below 80% of its weight share;
 *   CFQ's turns (the default) keep the weights but w100's p99 wait is
 *   over 150 ms (most of target_latency).
 */
#define LAG_G 3
#define LAG_DEPTH 16
#define LAG_CPU (20 * US)
#define LAG_DEV (100 * US)
#define LAG_WAITS 1000                  /* ms buckets of wait */

static uint64_t
lag_min (uint64_t a, uint64_t b)
{
  return a < b ? a : b;
}

struct lag_rq {
  struct rq rq;
  int g;
  int state;                            /* 0 sched, 1 device, 2 cpu */
  uint64_t t;                           /* ns: inserted, or done at */
};

static uint64_t
lag_run (int mode, double *share, double *ideal, uint64_t *p99_ms,
         uint64_t *max_ms)
{
  static const unsigned w[LAG_G] = { 100, 200, 400 };
  static struct lag_rq rqs[LAG_G][LAG_DEPTH];
  static unsigned waits[LAG_G][LAG_WAITS];
  struct lag_rq *cpu[LAG_G * LAG_DEPTH];
  unsigned cpu_head = 0, cpu_len = 0;
  uint64_t cpu_done = UINT64_MAX, deadline = 0, now = 0;
  uint64_t done[LAG_G] = { 0 }, total = 0;
  const uint64_t warm = 500 * MS, end = 3000 * MS;
  struct sched_queue *q[LAG_G];
  unsigned in_dev = 0;
  uint64_t seed = 12345;
  struct sched *s = kernel_cfq ();

  CHECK (s);
  CHECK_EQ (sched_set (s, "rotational", 0), 0);
  if (mode == 1)                        /* work-conserving, no bound */
    CHECK_EQ (sched_set (s, "group_idle", 0), 0);
  if (mode == 2)
    CHECK_EQ (sched_set (s, "group_lag", 4), 0);
  memset (waits, 0, sizeof waits);
  for (int g = 0; g < LAG_G; g++) {
    char name[8];
    snprintf (name, sizeof name, "w%u", w[g]);
    q[g] = sched_queue_new (s, sched_group_new (s, name, w[g]),
                            SCHED_CLASS_BE, 4);
    CHECK (q[g]);
    ideal[g] = w[g] / 700.0;
    for (int i = 0; i < LAG_DEPTH; i++) {
      struct lag_rq *r = &rqs[g][i];
      memset (r, 0, sizeof *r);
      r->g = g;
      r->rq.q = q[g];
      r->rq.len = 4096;
      r->rq.flags = RQ_SYNC;
      r->rq.op = RQ_READ;
      r->rq.off = ((uint64_t) (g + 1) << 34) + (uint64_t) i * (1 << 24);
      r->rq.priv = r;
      r->state = 0;
      r->t = 0;
      sched_insert (s, &r->rq, 0);
    }
  }
  for (;;) {
    uint64_t t = lag_min (cpu_done, deadline);
    for (int g = 0; g < LAG_G; g++)
      for (int i = 0; i < LAG_DEPTH; i++)
        if (rqs[g][i].state == 1)
          t = lag_min (t, rqs[g][i].t);
    if (t > end)
      break;
    if (t > now)
      now = t;
    /* Device completions go to the CPU's queue. */
    for (int g = 0; g < LAG_G; g++)
      for (int i = 0; i < LAG_DEPTH; i++) {
        struct lag_rq *r = &rqs[g][i];
        if (r->state != 1 || r->t > now)
          continue;
        r->state = 2;
        in_dev--;
        sched_completed (s, &r->rq, now);
        if (now >= warm) {
          done[g]++;
          total++;
        }
        cpu[(cpu_head + cpu_len++) % (LAG_G * LAG_DEPTH)] = r;
        if (cpu_done == UINT64_MAX)
          cpu_done = now + LAG_CPU;
      }
    /* The CPU hands the client's next request to the scheduler. */
    if (cpu_done <= now) {
      struct lag_rq *r = cpu[cpu_head];
      cpu_head = (cpu_head + 1) % (LAG_G * LAG_DEPTH);
      cpu_len--;
      r->state = 0;
      r->t = now;
      seed ^= seed << 13;
      seed ^= seed >> 7;
      seed ^= seed << 17;
      r->rq.off = ((uint64_t) (r->g + 1) << 34) + (seed % (1u << 17)) * 4096;
      sched_insert (s, &r->rq, now);
      cpu_done = cpu_len ? now + LAG_CPU : UINT64_MAX;
    }
    deadline = SCHED_NEVER;
    for (;;) {
      uint64_t next;
      struct rq *rq = sched_dispatch (s, now, &next);
      struct lag_rq *r;
      if (!rq) {
        if (sched_has_work (s))
          CHECK_GT (next, now);
        deadline = next;
        break;
      }
      r = rq->priv;
      if (now >= warm)
        waits[r->g][lag_min ((now - r->t) / MS, LAG_WAITS - 1)]++;
      r->state = 1;
      r->t = now + LAG_DEV;
      in_dev++;
    }
  }
  for (int g = 0; g < LAG_G; g++) {
    unsigned n = 0, sum = 0, k;
    share[g] = (double) done[g] / (double) total;
    for (k = 0; k < LAG_WAITS; k++)
      n += waits[g][k];
    for (k = 0; k < LAG_WAITS && (sum += waits[g][k]) * 100ULL < n * 99ULL;
         k++)
      ;
    p99_ms[g] = k + 1;
    for (k = LAG_WAITS; k > 0 && !waits[g][k - 1]; k--)
      ;
    max_ms[g] = k;
  }
  CHECK_LE (in_dev, 16);
  for (int g = 0; g < LAG_G; g++)
    sched_queue_free (s, q[g]);
  sched_destroy (s);
  return total;
}

static void
test_wc_lag (void)
{
  static const char *names[3] = { "turns (default)", "wc, group_idle=0",
                                  "wc, group_lag=4" };
  double share[3][LAG_G], ideal[LAG_G];
  uint64_t p99[3][LAG_G], max[3][LAG_G], total[3], worst[3];

  for (int m = 0; m < 3; m++) {
    total[m] = lag_run (m, share[m], ideal, p99[m], max[m]);
    worst[m] = 0;
    printf ("%-17s %6llu requests;", names[m],
            (unsigned long long) total[m]);
    for (int g = 0; g < LAG_G; g++) {
      printf (" w%u %.3f (%.3f) p99 %llu max %llu ms;", 100u << g,
              share[m][g], ideal[g], (unsigned long long) p99[m][g],
              (unsigned long long) max[m][g]);
      if (max[m][g] > worst[m])
        worst[m] = max[m][g];
    }
    printf ("\n");
  }
  for (int g = 0; g < LAG_G; g++) {
    CHECK_GE (share[2][g], ideal[g] * 0.95);
    CHECK_LE (share[2][g], ideal[g] * 1.05);
  }
  CHECK_GE (total[2] * 10, total[1] * 9);
  CHECK_LT (worst[2], 20);
  /* The controls: what the bound fixes. */
  CHECK_LT (share[1][2], ideal[2] * 0.8);
  CHECK_GT (worst[0], 150);
  printf ("wc lag: ok\n");
}

static const struct {
  const char *name;
  void (*fn) (void);
} tests[] = {
  { "new_seeky_queue", test_new_seeky_queue },
  { "service_tree_keys", test_service_tree_keys },
  { "split_owner", test_split_owner },
  { "seek_cost", test_seek_cost },
  { "seek_cost_stalls", test_seek_cost_stalls },
  { "auto_mode", test_auto_mode },
  { "flush_has_no_place", test_flush_has_no_place },
  { "flash_no_wait", test_flash_no_wait },
  { "front_key", test_front_key },
  { "classify", test_classify },
  { "first_tree", test_first_tree },
  { "writeback_backlog", test_writeback_backlog },
  { "lone_group_slice", test_lone_group_slice },
  { "wc_groups", test_wc_groups },
  { "wc_cap_lag", test_wc_cap_lag },
  { "wc_lag", test_wc_lag },
};

/* test-cfq-fidelity [NAME...]: all tests, or the ones named. */
int
main (int argc, char **argv)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  for (size_t i = 0; i < sizeof tests / sizeof tests[0]; i++) {
    bool run = argc < 2;
    for (int a = 1; a < argc; a++)
      run |= strcmp (argv[a], tests[i].name) == 0;
    if (run)
      tests[i].fn ();
  }
  printf ("cfq fidelity: ok (%lu checks)\n", check_count);
  return 0;
}
