/* test-qos.c: caps and reservations (core/qos.c) on a virtual clock.
 *
 * A "client" here is a loop that always has requests waiting: it asks
 * qos_admit whether the next may go, dispatches it if so (qos_account),
 * else jumps the clock to the time qos_admit returned.  Counting its
 * dispatches per 1 s window shows what a cap gives; driving qos_due at a
 * fixed device rate shows what the reservations give.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "qos.h"

#define MS NSEC_PER_MSEC
#define S NSEC_PER_SEC
#define WINDOWS 64

static struct rq
mkrq (enum rq_op op, uint32_t len)
{
  struct rq rq;

  memset (&rq, 0, sizeof rq);
  rq.op = op;
  rq.len = len;
  return rq;
}

static void
set (struct qos_conf *c, const char *key, uint64_t v)
{
  const struct qos_key *k = qos_key_lookup (key);

  CHECK_NOTNULL (k);
  CHECK_EQ (qos_conf_set (c, k, v), 0);
}

/* Run a backlogged client of RQ on qg from T0 for DUR ns; count its
 * dispatches per 1 s window into w[] and return the total.
 */
static uint64_t
run_capped (struct qos_group *qg, struct rq *rq, uint64_t t0, uint64_t dur,
            uint64_t *w)
{
  uint64_t now = t0, n = 0;

  qos_enqueue (qg, rq, now);
  while (now < t0 + dur) {
    uint64_t t = qos_admit (qg, rq, now);
    if (t) {
      CHECK_GT (t, now);
      CHECK (qos_held (qg, now));
      now = t;
      continue;
    }
    qos_account (qg, rq, now, false);
    if (w)
      w[(now - t0) / S]++;
    n++;
  }
  qos_dequeue (qg, rq);
  return n;
}

static void
test_keys (void)
{
  struct qos_conf c;
  const struct qos_key *k, *o;
  char why[256];

  memset (&c, 0, sizeof c);
  CHECK_EQ (qos_nr_keys, (size_t) 20);
  CHECK_NULL (qos_key_lookup ("iops"));
  k = qos_key_lookup ("write_bps_max_burst_seconds");
  CHECK_NOTNULL (k);
  CHECK_EQ (k->unit, QOS_U_SECONDS);
  CHECK_EQ (k->cap, (unsigned) QOS_WRITE_BPS_MAX);
  CHECK (qos_conf_empty (&c));
  CHECK_EQ (qos_conf_set (&c, qos_key_lookup ("iops_max"), 20000000),
            -ERANGE);
  CHECK_EQ (qos_conf_set (&c, k, 1000), -ERANGE);         /* 1 us */
  set (&c, "iops_max", 500);
  CHECK_EQ (qos_conf_get (&c, qos_key_lookup ("iops_max")), 500);
  CHECK_EQ (c.cap[QOS_IOPS_MAX].rate, 500);
  CHECK (!qos_conf_empty (&c));
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), 0);
  set (&c, "iops_max", 0);                                 /* 0 unsets */
  CHECK (qos_conf_empty (&c));

  /* A burst needs its cap and is at least the cap. */
  set (&c, "read_iops_max_burst", 100);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), -EINVAL);
  CHECK_STREQ (k->name, "read_iops_max_burst");
  printf ("  %s\n", why);
  set (&c, "read_iops_max", 200);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), -EINVAL);
  CHECK_STREQ (k->name, "read_iops_max_burst");
  CHECK_STREQ (o->name, "read_iops_max");
  printf ("  %s\n", why);
  set (&c, "read_iops_max_burst", 200);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), 0);
  set (&c, "bps_max_burst_seconds", 10 * S);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), -EINVAL);
  CHECK_STREQ (k->name, "bps_max_burst_seconds");
  set (&c, "bps_max_burst_seconds", 0);

  /* A reservation above a cap of its own unit is refused, any cap. */
  set (&c, "iops_min", 200);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), 0);
  set (&c, "iops_min", 201);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), -EINVAL);
  CHECK_STREQ (k->name, "iops_min");
  CHECK_STREQ (o->name, "read_iops_max");
  printf ("  %s\n", why);
  set (&c, "iops_min", 100);
  set (&c, "bps_min", 2 << 20);
  set (&c, "write_bps_max", 1 << 20);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), -EINVAL);
  CHECK_STREQ (k->name, "bps_min");
  CHECK_STREQ (o->name, "write_bps_max");
  /* Different units are not compared. */
  set (&c, "bps_min", 0);
  set (&c, "iops_min", 150);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), 0);
}

/* iops_max = 100: 100 per second, exactly, in every window after the
 * first; the first has at most the bucket (one slice, 50 ms: 5 requests)
 * more.  A disk's slice (100 ms) holds 10.
 */
static void
test_iops_cap (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  uint64_t w[WINDOWS] = { 0 }, n;

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 100);
  qos_group_set (&qs, &qg, &c, 5 * S);
  CHECK (qos_on (&qs));
  CHECK_EQ (qs.nr_on, 1u);
  n = run_capped (&qg, &rq, 5 * S, 20 * S, w);
  CHECK_LE (w[0], 106);
  CHECK_GE (w[0], 100);
  /* Batches of half a slice (2 or 3): a window boundary may split one. */
  for (int i = 1; i < 20; i++) {
    CHECK_GE (w[i], 98);
    CHECK_LE (w[i], 102);
  }
  {
    uint64_t sum = 0;                   /* and the next ones make up */
    for (int i = 1; i < 19; i++)
      sum += w[i];
    CHECK_GE (sum, 1800 - 3);
    CHECK_LE (sum, 1800 + 3);
  }
  CHECK_LE (n, 2006);
  CHECK_GE (n, 2000);
  CHECK_GT (qg.done.held, 0);
  /* On a disk: the first window carries 10 more. */
  qos_sched_set_slice (&qs, QOS_SLICE_ROT);
  qos_group_set (&qs, &qg, &c, 30 * S);
  memset (w, 0, sizeof w);
  run_capped (&qg, &rq, 30 * S, 3 * S, w);
  CHECK_GE (w[0], 105);            /* less the hold's half slice */
  CHECK_LE (w[0], 111);
  CHECK_GE (w[1], 95);             /* batches of half a slice */
  CHECK_LE (w[1], 105);
  qos_sched_set_slice (&qs, QOS_SLICE_NONROT);
  /* Writes and flushes are not counted by a read... by a total cap they
   * are: a write must wait too now.
   */
  {
    struct rq wr = mkrq (RQ_WRITE, 4096), fl = mkrq (RQ_FLUSH, 0);
    uint64_t now = 25 * S;
    qos_enqueue (&qg, &wr, now);
    qos_account (&qg, &wr, now, false);         /* fill it */
    qos_account (&qg, &wr, now, false);
    qos_account (&qg, &wr, now, false);
    CHECK_GT (qos_admit (&qg, &wr, now), now);
    CHECK_EQ (qos_admit (&qg, &fl, now), 0);    /* flushes never wait */
    qos_dequeue (&qg, &wr);
  }
  /* Off again: leaves the list, admits everything. */
  memset (&c, 0, sizeof c);
  qos_group_set (&qs, &qg, &c, 30 * S);
  CHECK (!qos_on (&qs));
  CHECK_EQ (qos_admit (&qg, &rq, 30 * S), 0);
}

/* The hold lasts for a small batch: after a refusal the group comes back
 * when half a bucket more than the request has drained.
 */
static void
test_hysteresis (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  uint64_t now = 0, t;
  unsigned batch = 0;

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 1000);           /* bucket 50 requests, hyst 25 */
  qos_group_set (&qs, &qg, &c, 0);
  qos_enqueue (&qg, &rq, 0);
  while (!qos_admit (&qg, &rq, now))
    qos_account (&qg, &rq, now, false);
  t = qos_admit (&qg, &rq, now);
  /* Full at 50: room for one more at 49, and half a slice (25) more: 24,
   * but half the slack (24.5) is kept: 25.5 ms away.
   */
  CHECK_EQ (t, now + 25500 * NSEC_PER_USEC);
  CHECK_EQ (qg.held_until[QOS_READ], t);
  CHECK (qos_held (&qg, now));
  CHECK_EQ (qos_next_event (&qs, now), t);
  CHECK (!qos_released (&qg, now));
  CHECK (qos_held (&qg, t - 1));
  CHECK (!qos_held (&qg, t));
  CHECK (qos_released (&qg, t));
  CHECK (qos_released (&qg, t + 1));           /* until its turn */
  qos_turn (&qg);
  CHECK (!qos_released (&qg, t));
  while (!qos_admit (&qg, &rq, t)) {
    qos_account (&qg, &rq, t, false);
    batch++;
  }
  CHECK_EQ (batch, 25u);
  /* A small bucket (40/s: 2 requests) keeps half its slack of one: the
   * hold ends at 0.5, so a wake-up up to 12.5 ms late loses nothing.  On
   * a disk a quarter (batches matter more there).
   */
  qos_dequeue (&qg, &rq);
  set (&c, "iops_max", 40);
  qos_group_set (&qs, &qg, &c, t);
  qos_enqueue (&qg, &rq, t);
  qos_account (&qg, &rq, t, false);
  qos_account (&qg, &rq, t, false);
  CHECK_EQ (qos_admit (&qg, &rq, t), t + 37500 * NSEC_PER_USEC);
  t += 50 * MS;                                 /* 12.5 ms late: empty */
  CHECK_EQ (qos_admit (&qg, &rq, t), 0);
  qos_account (&qg, &rq, t, false);
  CHECK_EQ (qos_admit (&qg, &rq, t), 0);
  qos_account (&qg, &rq, t, false);
  CHECK_GT (qos_admit (&qg, &rq, t), t);
  qos_sched_set_slice (&qs, QOS_SLICE_ROT);     /* 4 deep, keep 3/4 */
  CHECK_EQ (qs.keep_shift, 2u);
  qos_group_set (&qs, &qg, &c, t);
  for (int i = 0; i < 4; i++)
    qos_account (&qg, &rq, t, false);
  CHECK_EQ (qos_admit (&qg, &rq, t), t + 75 * MS);     /* drains to 1 */
  qos_sched_set_slice (&qs, QOS_SLICE_NONROT);
  CHECK_EQ (qs.keep_shift, 1u);
  /* A direction with nothing waiting does not count as held. */
  qos_dequeue (&qg, &rq);
  CHECK (!qos_held (&qg, t));
  CHECK_EQ (qos_next_event (&qs, t), SCHED_NEVER);
}

/* Credit: a group kept waiting past its hold (the dispatcher woke late)
 * catches up, up to one bucket more; a group with nothing waiting banks
 * nothing.
 */
static void
test_credit (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  unsigned n;

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 100);            /* bucket: 5 */
  for (int waiting = 1; waiting >= 0; waiting--) {
    qos_group_set (&qs, &qg, &c, 0);
    qos_enqueue (&qg, &rq, 0);
    for (n = 0; !qos_admit (&qg, &rq, 0); n++)
      qos_account (&qg, &rq, 0, false);
    CHECK_EQ (n, 5u);
    if (!waiting)
      qos_dequeue (&qg, &rq);
    CHECK_GT (qos_admit (&qg, &rq, 0), 0);      /* held */
    /* Back a second late: drained 100, floor -5 waiting, 0 not. */
    if (!waiting)
      qos_enqueue (&qg, &rq, S);
    for (n = 0; !qos_admit (&qg, &rq, S); n++)
      qos_account (&qg, &rq, S, false);
    CHECK_EQ (n, waiting ? 10u : 5u);
    qos_dequeue (&qg, &rq);
  }
}

/* read_iops_max holds reads only; write_bps_max counts bytes of writes
 * and zeroes; a trim counts as a request but moves no bytes.
 */
static void
test_directions (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rd = mkrq (RQ_READ, 4096), wr = mkrq (RQ_WRITE, 65536);
  struct rq tr = mkrq (RQ_TRIM, 1 << 30), zr = mkrq (RQ_ZERO, 65536);
  uint64_t w[WINDOWS] = { 0 };

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "read_iops_max", 50);
  set (&c, "write_bps_max", 1 << 20);           /* 16 x 64K per second */
  qos_group_set (&qs, &qg, &c, 0);
  CHECK_EQ (qos_rq_dir (&rd), QOS_READ);
  CHECK_EQ (qos_rq_dir (&tr), QOS_WRITE);
  CHECK_EQ (qos_rq_dir (&zr), QOS_WRITE);
  CHECK_EQ (qos_rq_dir (&(struct rq) { .op = RQ_FLUSH }), QOS_NODIR);

  qos_enqueue (&qg, &rd, 0);
  qos_enqueue (&qg, &wr, 0);
  for (int i = 0; i < 10; i++)
    qos_account (&qg, &rd, 0, false);
  CHECK_GT (qos_admit (&qg, &rd, 0), 0);
  CHECK (!qos_held (&qg, 0));           /* writes may still go */
  CHECK_EQ (qos_admit (&qg, &wr, 0), 0);
  CHECK_EQ (qos_admit (&qg, &tr, 0), 0);        /* 1 GiB trim: no bytes */
  qos_dequeue (&qg, &rd);
  qos_dequeue (&qg, &wr);

  /* Bytes: 64K writes at 1 MiB/s, 16 per second. */
  memset (&c, 0, sizeof c);
  set (&c, "write_bps_max", 1 << 20);
  qos_group_set (&qs, &qg, &c, 0);
  run_capped (&qg, &zr, 0, 10 * S, w);
  for (int i = 1; i < 10; i++)
    CHECK_EQ (w[i], 16);

  /* A request larger than the bucket goes when it is empty: 1 MiB at
   * 4 MiB/s (bucket 80K), 4 per second.
   */
  memset (&c, 0, sizeof c);
  set (&c, "bps_max", 4 << 20);
  qos_group_set (&qs, &qg, &c, 0);
  memset (w, 0, sizeof w);
  wr.len = 1 << 20;
  run_capped (&qg, &wr, 0, 10 * S, w);
  CHECK_EQ (w[0], 4);
  for (int i = 1; i < 10; i++)
    CHECK_EQ (w[i], 4);
}

/* A burst: iops_max 100, burst 1000 for 2 s.  From idle the group runs at
 * the burst rate (within its 25 ms bucket) until the main bucket, 2000
 * deep, is full: 2000 / (1000 - 100) = 2.22 s; then at the cap.  After a
 * quiet spell it may burst again, as far as the bucket drained.
 */
static void
test_burst (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  uint64_t w[WINDOWS] = { 0 }, n;
  const struct qos_key *k, *o;
  char why[200];

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 100);
  set (&c, "iops_max_burst", 1000);
  set (&c, "iops_max_burst_seconds", 2 * S);
  CHECK_EQ (qos_conf_check (&c, why, sizeof why, &k, &o), 0);
  qos_group_set (&qs, &qg, &c, 0);
  n = run_capped (&qg, &rq, 0, 10 * S, w);
  for (int i = 0; i < 10; i++)
    printf ("  burst window %d: %llu\n", i, (unsigned long long) w[i]);
  CHECK_GE (w[0], 1000);
  CHECK_LE (w[0], 1051);
  CHECK_GE (w[1], 999);
  CHECK_LE (w[1], 1001);
  CHECK_GT (w[2], 100);                 /* burst ends inside window 2 */
  CHECK_LT (w[2], 1000);
  for (int i = 3; i < 10; i++) {
    CHECK_GE (w[i], 98);
    CHECK_LE (w[i], 102);
  }
  /* Total: the bucket (2000) plus 10 s of the cap (1000), give or take
   * the burst bucket's slack and the hysteresis (2.5) of a hold that
   * straddles the end.
   */
  CHECK_GE (n, 2997);
  CHECK_LE (n, 3052);

  /* 10 s quiet: the bucket drained by 1000 of its 2000. */
  memset (w, 0, sizeof w);
  n = run_capped (&qg, &rq, 20 * S, 1 * S, w);
  CHECK_GE (n, 1000);
  CHECK_LE (n, 1100);
  /* Without burst_seconds a burst lasts about one second. */
  set (&c, "iops_max_burst_seconds", 0);
  qos_group_set (&qs, &qg, &c, 0);
  n = run_capped (&qg, &rq, 0, 5 * S, NULL);
  CHECK_GE (n, 1000 + 5 * 100 - 3);
  CHECK_LE (n, 1000 + 5 * 100 + 52);
}

/* A huge request under the smallest cap waits a bounded, huge time. */
static void
test_extremes (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_WRITE, 64 << 20);
  uint64_t t;

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "bps_max", QOS_BPS_FLOOR);
  set (&c, "bps_max_burst", 1ULL << 40);
  set (&c, "bps_max_burst_seconds", 86400 * S);
  qos_group_set (&qs, &qg, &c, 0);
  qos_enqueue (&qg, &rq, 0);
  /* The burst bucket is 25 ms of 1 TiB/s: a 64M write fits, twice... */
  CHECK_EQ (qos_admit (&qg, &rq, 0), 0);
  for (int i = 0; i < 1000000; i++)
    qos_account (&qg, &rq, 0, false);           /* 64 TiB at once */
  t = qos_admit (&qg, &rq, 0);
  CHECK_GT (t, 0);
  CHECK_LT (t, SCHED_NEVER / 2);
  qos_dequeue (&qg, &rq);
}

/* The longest hold of a backlogged client of RQ under C from T0 for DUR
 * ns: the time from one dispatch to the next.
 */
static uint64_t
longest_hold (const struct qos_conf *c, uint64_t slice, struct rq *rq,
              uint64_t dur)
{
  struct qos_sched qs;
  struct qos_group qg;
  uint64_t now = S, last = S, longest = 0;

  qos_sched_init (&qs);
  qos_sched_set_slice (&qs, slice);
  qos_group_init (&qg);
  qos_group_set (&qs, &qg, c, now);
  qos_enqueue (&qg, rq, now);
  while (now < S + dur) {
    uint64_t t = qos_admit (&qg, rq, now);
    if (t) {
      now = t;
      continue;
    }
    qos_account (&qg, rq, now, false);
    if (now - last > longest)
      longest = now - last;
    last = now;
  }
  qos_dequeue (&qg, rq);
  return longest;
}

/* The floor of the caps in bytes: refused below it, everywhere the
 * table is used; at it one request of the largest size (32 MiB) waits
 * at most qos_hold_max, about 34 s, plain or after a burst, on flash and
 * on a disk; a cap of 1 request/s holds a request about a second.
 */
static void
test_floor (void)
{
  static const char *const bytes[] = { "bps_max", "read_bps_max",
                                       "write_bps_max" };
  const uint64_t big = 32u << 20, slices[2] = { QOS_SLICE_NONROT,
                                                QOS_SLICE_ROT };
  struct rq wr = mkrq (RQ_WRITE, big), rd = mkrq (RQ_READ, 4096);
  uint64_t bound, longest;
  struct qos_conf c;

  for (int i = 0; i < 3; i++) {
    const struct qos_key *k = qos_key_lookup (bytes[i]);
    CHECK_NOTNULL (k);
    CHECK (k->floor);
    CHECK_EQ (k->min, QOS_BPS_FLOOR);
    memset (&c, 0, sizeof c);
    CHECK_EQ (qos_conf_set (&c, k, 1), -ERANGE);
    CHECK_EQ (qos_conf_set (&c, k, QOS_BPS_FLOOR - 1), -ERANGE);
    CHECK_EQ (qos_conf_set (&c, k, QOS_BPS_FLOOR), 0);
    CHECK_EQ (qos_conf_set (&c, k, 0), 0);
  }
  CHECK (!qos_key_lookup ("iops_max")->floor);
  CHECK (!qos_key_lookup ("bps_min")->floor);     /* holds nothing back */
  CHECK (!qos_key_lookup ("bps_max_burst")->floor);
  memset (&c, 0, sizeof c);
  CHECK_EQ (qos_conf_set (&c, qos_key_lookup ("iops_max"), 0), 0);
  CHECK_EQ (qos_conf_set (&c, qos_key_lookup ("bps_min"), 1), 0);

  bound = qos_hold_max (QOS_BPS_MAX, QOS_BPS_FLOOR, big);
  printf ("  floor %llu B/s: a 32 MiB request waits at most %.3f s\n",
          (unsigned long long) QOS_BPS_FLOOR, bound / 1e9);
  CHECK_LE (bound, 34 * S);
  for (int sl = 0; sl < 2; sl++) {
    memset (&c, 0, sizeof c);
    set (&c, "write_bps_max", QOS_BPS_FLOOR);
    longest = longest_hold (&c, slices[sl], &wr, 600 * S);
    printf ("  write_bps_max at the floor, slice %llu ms: longest hold "
            "%.3f s\n", (unsigned long long) (slices[sl] / MS),
            longest / 1e9);
    CHECK_LE (longest, bound);
    CHECK_GE (longest, big * S / QOS_BPS_FLOOR);        /* the bound is
                                                           no looser */
    /* After a burst (a deep bucket, filled). */
    set (&c, "write_bps_max_burst", 1ULL << 30);
    set (&c, "write_bps_max_burst_seconds", 10 * S);
    longest = longest_hold (&c, slices[sl], &wr, 600 * S);
    printf ("  ... with a 1 GiB/s burst for 10 s: longest hold %.3f s\n",
            longest / 1e9);
    CHECK_LE (longest, bound);

    memset (&c, 0, sizeof c);
    set (&c, "iops_max", 1);
    longest = longest_hold (&c, slices[sl], &rd, 100 * S);
    printf ("  iops_max 1: longest hold %.3f s\n", longest / 1e9);
    CHECK_LE (longest, qos_hold_max (QOS_IOPS_MAX, 1, 4096));
    CHECK_LE (qos_hold_max (QOS_IOPS_MAX, 1, 4096), 1200 * MS);
    set (&c, "iops_max_burst", 100);
    set (&c, "iops_max_burst_seconds", 10 * S);
    longest = longest_hold (&c, slices[sl], &rd, 100 * S);
    CHECK_LE (longest, qos_hold_max (QOS_IOPS_MAX, 1, 4096));
  }
}

/* A reservation: due every 1/iops_min; no credit while idle; service by
 * the weights does not move the tag (mClock).
 */
static void
test_tags (void)
{
  struct qos_sched qs;
  struct qos_group qg;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  uint64_t now = 1 * S;

  qos_sched_init (&qs);
  qos_group_init (&qg);
  memset (&c, 0, sizeof c);
  set (&c, "iops_min", 20);             /* 50 ms apart */
  qos_group_set (&qs, &qg, &c, now);
  CHECK_NULL (qos_due (&qs, now));              /* nothing waiting */
  qos_enqueue (&qg, &rq, now);
  CHECK_PTR_EQ (qos_due (&qs, now), &qg);
  qos_dequeue (&qg, &rq);
  qos_account (&qg, &rq, now, true);
  CHECK_EQ (qg.done.res_ios, 1);
  CHECK_EQ (qg.r_tag, now + 50 * MS);
  qos_enqueue (&qg, &rq, now);
  CHECK_NULL (qos_due (&qs, now));      /* beyond this batch (25 ms) */
  CHECK_EQ (qos_next_event (&qs, now), now + 50 * MS);
  CHECK_PTR_EQ (qos_due (&qs, now + 50 * MS), &qg);
  qos_dequeue (&qg, &rq);

  /* Idle for 5 s: the next request is due at once, and only it. */
  now += 5 * S;
  qos_enqueue (&qg, &rq, now);
  CHECK_EQ (qg.r_tag, now);
  qos_enqueue (&qg, &rq, now);
  qos_dequeue (&qg, &rq);
  qos_account (&qg, &rq, now, true);
  CHECK_NULL (qos_due (&qs, now));
  CHECK_EQ (qos_next_event (&qs, now), now + 50 * MS);

  /* Weight-phase service does not count: the stream stays steady. */
  for (int i = 0; i < 1000; i++)
    qos_account (&qg, &rq, now, false);
  CHECK_EQ (qg.r_tag, now + 50 * MS);
  CHECK_EQ (qg.done.res_ios, 2);
  qos_dequeue (&qg, &rq);

  /* On a disk a due group is served in batches of half a slice (50 ms):
   * 100/s is 6 at once (tags now .. now + 50 ms), then again 60 ms later.
   */
  qos_sched_set_slice (&qs, QOS_SLICE_ROT);
  set (&c, "iops_min", 100);
  now += 5 * S;
  qos_group_set (&qs, &qg, &c, now);
  for (int i = 0; i < 20; i++)
    qos_enqueue (&qg, &rq, now);
  for (int round = 0; round < 3; round++) {
    unsigned n = 0;
    while (qos_due (&qs, now)) {
      qos_dequeue (&qg, &rq);
      qos_account (&qg, &rq, now, true);
      n++;
    }
    CHECK_EQ (n, 6u);
    CHECK_EQ (qos_next_event (&qs, now), now + 60 * MS);
    now += 60 * MS;
  }
  qos_sched_set_slice (&qs, QOS_SLICE_NONROT);
  while (qg.queued[QOS_READ])
    qos_dequeue (&qg, &rq);

  /* bps_min: spacing by bytes; with both, the closer spacing. */
  memset (&c, 0, sizeof c);
  set (&c, "bps_min", 1 << 20);
  qos_group_set (&qs, &qg, &c, now);
  rq.len = 256 << 10;
  qos_enqueue (&qg, &rq, now);
  qos_account (&qg, &rq, now, true);
  CHECK_EQ (qg.r_tag, now + 250 * MS);
  set (&c, "iops_min", 10);
  qos_group_set (&qs, &qg, &c, now);
  qos_account (&qg, &rq, now, true);
  CHECK_EQ (qg.r_tag, now + 100 * MS);
  qos_dequeue (&qg, &rq);
}

/* Two reserved groups and a device that gives 150 requests/s: r=100 and
 * r=200 cannot both be met.  They fall behind in proportion (1:2), and no
 * tag falls more than QOS_RES_DEBT behind.  Then a third, capped group
 * holds: a held group is never due.
 */
static void
test_overload (void)
{
  struct qos_sched qs;
  struct qos_group a, b;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);
  uint64_t na = 0, nb = 0, now = 0;
  const uint64_t tick = S / 150;

  qos_sched_init (&qs);
  qos_group_init (&a);
  qos_group_init (&b);
  memset (&c, 0, sizeof c);
  set (&c, "iops_min", 100);
  qos_group_set (&qs, &a, &c, 0);
  set (&c, "iops_min", 200);
  qos_group_set (&qs, &b, &c, 0);
  CHECK_EQ (qs.nr_on, 2u);
  qos_enqueue (&a, &rq, 0);
  qos_enqueue (&b, &rq, 0);
  for (int i = 0; i < 150 * 20; i++, now += tick) {
    struct qos_group *g = qos_due (&qs, now);
    CHECK_NOTNULL (g);
    qos_account (g, &rq, now, true);
    if (g == &a)
      na++;
    else
      nb++;
    {
      const int64_t floor = -(int64_t) (QOS_RES_DEBT + 20 * MS);
      int64_t da = (int64_t) (a.r_tag - now), db = (int64_t) (b.r_tag - now);
      CHECK_GE (da, floor);
      CHECK_GE (db, floor);
    }
  }
  printf ("  overload: a %llu, b %llu\n", (unsigned long long) na,
          (unsigned long long) nb);
  CHECK_NEAR ((double) nb / (double) na, 2.0, 0.05);

  /* b held by a cap: only a is due, then nobody until the hold ends. */
  set (&c, "iops_max", 200);
  qos_group_set (&qs, &b, &c, now);
  while (!qos_admit (&b, &rq, now))
    qos_account (&b, &rq, now, false);
  CHECK (qos_held (&b, now));
  for (int i = 0; i < 5; i++) {
    struct qos_group *g = qos_due (&qs, now);
    CHECK_PTR_EQ (g, &a);
    qos_account (g, &rq, now, true);
  }
  CHECK_EQ (qos_next_event (&qs, now), b.held_until[QOS_READ]);
  qos_group_remove (&qs, &b);
  CHECK_EQ (qs.nr_on, 1u);
}

int
main (void)
{
  test_keys ();
  test_iops_cap ();
  test_hysteresis ();
  test_credit ();
  test_directions ();
  test_burst ();
  test_extremes ();
  test_floor ();
  test_tags ();
  test_overload ();
  check_done ("test-qos");
  return 0;
}
