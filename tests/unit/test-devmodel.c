/* test-devmodel.c: the device models behave like the devices they stand for.
 *
 *  - interface: a queue; nothing is due before its time; the next
 *    completion moves as requests arrive; the queue has a fixed size.
 *  - hdd: seek time grows with distance; a sequential stream beats random
 *    4 KiB reads by a large factor; the mean random access matches the
 *    documented defaults (8.5 ms seek + half a revolution); requests are
 *    served one at a time; flush waits for the head.
 *  - hdd with NCQ: the head serves the queued request it reaches first
 *    (sequential before near before far), never across a flush, within the
 *    ncq window, and the oldest once it has waited ncq_age; random IOPS
 *    grow with depth (1.5-2.5x from 1 to 32), and not at all without NCQ.
 *  - ssd: throughput scales with depth up to the channel count and not
 *    beyond; reads and writes cost their latencies; flush waits for writes.
 *  - both: the same seed gives the same completions, another seed
 *    different ones (hdd, with and without NCQ); parameters parse with
 *    units and reject nonsense.
 *  - presets: each builds, and its headline numbers are within 20% of the
 *    published figures it carries (devmodel_presets).
 *  - stats: histogram percentiles are within 1%, Jain's index is right.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "devmodel.h"
#include "hist.h"
#include "stats.h"

static struct rq
mkrq (uint64_t off, uint32_t len, int op)
{
  struct rq rq;

  memset (&rq, 0, sizeof rq);
  rq.off = off;
  rq.len = len;
  rq.op = op;
  rq.flags = op == RQ_READ ? RQ_SYNC : 0;
  return rq;
}

static uint64_t xs = 88172645463325252ULL;
static uint64_t
rnd (void)
{
  xs ^= xs << 13;
  xs ^= xs >> 7;
  xs ^= xs << 17;
  return xs;
}

/* Run the device until it is empty; the completion time of each of
 * rqs[0..n) goes to t[i].  Returns how many requests completed.
 */
static unsigned
drain (struct devmodel *dm, struct rq *rqs, uint64_t *t, unsigned n)
{
  unsigned done = 0;
  uint64_t next;

  while ((next = devmodel_next (dm)) != SCHED_NEVER) {
    uint64_t when = 0;
    struct rq *rq = devmodel_complete (dm, next, &when);

    CHECK_NOTNULL (rq);
    CHECK_EQ (when, next);
    for (unsigned i = 0; i < n; i++)
      if (rq == &rqs[i])
        t[i] = when;
    done++;
  }
  CHECK_EQ (devmodel_queued (dm), 0u);
  return done;
}

/* Submit rq at now on an idle device and run it: its completion time. */
static uint64_t
run1 (struct devmodel *dm, struct rq *rq, uint64_t now)
{
  uint64_t t = 0;

  CHECK_EQ (devmodel_queued (dm), 0u);
  CHECK_EQ (devmodel_submit (dm, rq, now), 0);
  CHECK_EQ (drain (dm, rq, &t, 1), 1u);
  return t;
}

/* Mean service time of n back-to-back reads alternating between two
 * points d bytes apart (each a seek of exactly d).
 */
static double
hdd_alternating (uint64_t d, int n)
{
  struct devmodel *dm = devmodel_new ("hdd", NULL);
  uint64_t now = 0;

  CHECK_NOTNULL (dm);
  for (int i = 0; i < n; i++) {
    struct rq rq = mkrq (i % 2 ? d + (uint64_t) (1 << 30) : (1 << 30), 4096,
                         RQ_READ);
    now = run1 (dm, &rq, now);
  }
  devmodel_free (dm);
  return (double) now / n;
}

/* Closed loop: depth requests of bs bytes always at the device, each
 * replaced when it completes, until n have completed.  Random offsets
 * (4 KiB aligned) over span bytes, or one sequential stream.  Returns
 * IOPS; *bps (if not NULL) bytes per second.
 */
static double
closed_loop (struct devmodel *dm, unsigned depth, int n, bool seq,
             uint32_t bs, uint64_t span, double *bps)
{
  struct rq rqs[64];
  uint64_t now = 0, next_off = 0;

  CHECK (depth >= 1 && depth <= 64);
  for (unsigned i = 0; i < depth; i++) {
    uint64_t off = seq ? next_off : rnd () % (span / 4096) * 4096;
    next_off += bs;
    rqs[i] = mkrq (off, bs, RQ_READ);
    CHECK_EQ (devmodel_submit (dm, &rqs[i], 0), 0);
  }
  for (int k = 0; k < n; k++) {
    uint64_t t = devmodel_next (dm), when;
    struct rq *rq;

    CHECK_NE (t, SCHED_NEVER);
    rq = devmodel_complete (dm, t, &when);
    CHECK_NOTNULL (rq);
    now = when;
    *rq = mkrq (seq ? next_off : rnd () % (span / 4096) * 4096, bs, RQ_READ);
    next_off += bs;
    CHECK_EQ (devmodel_submit (dm, rq, now), 0);
  }
  if (bps)
    *bps = (double) n * bs / (now / 1e9);
  return n / (now / 1e9);
}

static void
test_interface (void)
{
  struct devmodel *dm = devmodel_new ("ssd", NULL);
  static struct rq many[DEVMODEL_MAX_QUEUE + 1];
  struct rq a = mkrq (0, 4096, RQ_READ), b = mkrq (8192, 4096, RQ_READ);
  uint64_t ta, when = 0;

  CHECK_NOTNULL (dm);
  CHECK_EQ (devmodel_next (dm), SCHED_NEVER);
  CHECK_NULL (devmodel_complete (dm, 0, NULL));
  CHECK_EQ (devmodel_submit (dm, &a, 1000), 0);
  ta = devmodel_next (dm);
  CHECK_GT (ta, 1000u);
  CHECK_NULL (devmodel_complete (dm, ta - 1, NULL));    /* not yet */
  CHECK_EQ (devmodel_queued (dm), 1u);
  CHECK_PTR_EQ (devmodel_complete (dm, ta + 5, &when), &a);
  CHECK_EQ (when, ta);                  /* its time, not the caller's */
  CHECK_EQ (devmodel_next (dm), SCHED_NEVER);
  /* "now" never goes back: a submission stamped earlier counts as now. */
  CHECK_EQ (devmodel_submit (dm, &b, 0), 0);
  CHECK_EQ (devmodel_next (dm), ta + 5 + (ta - 1000));
  CHECK_PTR_EQ (devmodel_complete (dm, SCHED_NEVER - 1, NULL), &b);

  /* The queue holds DEVMODEL_MAX_QUEUE requests, then says so. */
  devmodel_reset (dm);
  for (unsigned i = 0; i < DEVMODEL_MAX_QUEUE; i++) {
    many[i] = mkrq ((uint64_t) i * 4096, 4096, RQ_READ);
    CHECK_EQ (devmodel_submit (dm, &many[i], 0), 0);
  }
  many[DEVMODEL_MAX_QUEUE] = mkrq (0, 4096, RQ_READ);
  CHECK_EQ (devmodel_submit (dm, &many[DEVMODEL_MAX_QUEUE], 0), -ENOSPC);
  CHECK_EQ (devmodel_queued (dm), (unsigned) DEVMODEL_MAX_QUEUE);
  CHECK_EQ (drain (dm, many, NULL, 0), (unsigned) DEVMODEL_MAX_QUEUE);
  devmodel_free (dm);
}

static void
test_hdd (void)
{
  struct devmodel *dm;
  uint64_t now, t_seq, t_rand, cap;
  char buf[512];
  int err = 0;

  /* Seek grows with distance. */
  double t1 = hdd_alternating (16 << 20, 2000);
  double t2 = hdd_alternating (10ULL << 30, 2000);
  double t3 = hdd_alternating (500ULL << 30, 2000);
  printf ("hdd alternating: 16M %.3f ms, 10G %.3f ms, 500G %.3f ms\n",
          t1 / 1e6, t2 / 1e6, t3 / 1e6);
  CHECK (t1 < t2 && t2 < t3);
  CHECK_GT (t3 - t1, 5e6);      /* full-ish stroke costs ms more */

  /* Sequential vs random: 64 MiB of 64 KiB reads vs random 4 KiB reads. */
  dm = devmodel_new ("hdd", &err);
  CHECK (dm && devmodel_rotational (dm));
  CHECK_STREQ (devmodel_kind (dm), "hdd");
  cap = devmodel_capacity (dm);
  now = 0;
  for (uint64_t off = 0; off < (64 << 20); off += 65536) {
    struct rq rq = mkrq (off, 65536, RQ_READ);
    now = run1 (dm, &rq, now);
  }
  t_seq = now;                  /* ns for 64 MiB */
  devmodel_reset (dm);
  now = 0;
  for (int i = 0; i < 2000; i++) {
    struct rq rq = mkrq (rnd () % (cap / 4096) * 4096, 4096, RQ_READ);
    now = run1 (dm, &rq, now);
  }
  t_rand = now;                 /* ns for 2000 random reads = 7.8 MiB */
  {
    double seq_mbs = 64.0 * 1048576 / (t_seq / 1e9) / 1e6;
    double rand_mbs = 2000.0 * 4096 / (t_rand / 1e9) / 1e6;
    double rand_ms = t_rand / 2000.0 / 1e6;
    printf ("hdd: seq %.1f MB/s, random 4k %.3f MB/s (%.2f ms/req, %.0f IOPS)\n",
            seq_mbs, rand_mbs, rand_ms, 1000 / rand_ms);
    CHECK (seq_mbs > 140 && seq_mbs < 160);
    CHECK_GT (seq_mbs, 100 * rand_mbs);
    /* 8.5 ms mean seek + 4.17 ms mean rotation + transfer, +-10% */
    CHECK (rand_ms > 11.4 && rand_ms < 14.0);
  }

  /* One at a time, in submission order: two requests at the same instant
   * complete one after the other.
   */
  devmodel_reset (dm);
  {
    struct rq rqs[3] = {
      mkrq (0, 1 << 20, RQ_READ), mkrq (1 << 20, 1 << 20, RQ_WRITE),
      mkrq (0, 0, RQ_FLUSH),
    };
    uint64_t t[3];

    for (int i = 0; i < 3; i++)
      CHECK_EQ (devmodel_submit (dm, &rqs[i], 1000), 0);
    CHECK_EQ (drain (dm, rqs, t, 3), 3u);
    CHECK (t[1] > t[0] && t[1] - t[0] >= 6900000); /* 1 MiB at 150 MB/s */
    CHECK_EQ (t[2], t[1] + 1000000);             /* flush after the write */
    CHECK_EQ (devmodel_set (dm, "rpm", "5400"), -EBUSY);
  }

  /* Forward skips within "near" cost the passing gap, not a seek. */
  devmodel_reset (dm);
  {
    struct rq a = mkrq (0, 65536, RQ_READ), b = mkrq (65536 * 4, 65536,
                                                      RQ_READ);
    uint64_t ta = run1 (dm, &a, 0);
    uint64_t tb = run1 (dm, &b, ta);
    /* 3 x 64 KiB gap + 64 KiB transfer at 150 MB/s = 1.75 ms */
    CHECK (tb - ta > 1700000 && tb - ta < 1800000);
  }

  /* Parameters. */
  devmodel_free (dm);
  dm = devmodel_new ("hdd", NULL);
  CHECK_EQ (devmodel_set (dm, "rpm", "5400"), 0);
  CHECK_EQ (devmodel_set (dm, "seek_max", "20ms"), 0);
  CHECK_EQ (devmodel_set (dm, "rate", "100M"), 0);
  CHECK_EQ (devmodel_set (dm, "capacity", "2t"), 0);
  CHECK_EQ (devmodel_capacity (dm), 2ULL << 40);
  CHECK_EQ (devmodel_set (dm, "channels", "4"), -ENOENT);
  CHECK_EQ (devmodel_set (dm, "nonesuch", "4"), -ENOENT);
  CHECK_EQ (devmodel_set (dm, "rpm", "fast"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "rpm", "10"), -ERANGE);
  CHECK_EQ (devmodel_set (dm, "seek_max", "-1ms"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "seek_max", "3 parsecs"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "ncq", "32"), 0);
  CHECK_EQ (devmodel_set (dm, "ncq", "257"), -ERANGE);
  CHECK_EQ (devmodel_set (dm, "ncq_age", "2s"), 0);
  {
    const char *bad = NULL;
    CHECK_EQ (devmodel_parse (dm, "rpm=15000, seek_min=0.5ms,near=2M", &bad),
              0);
    CHECK_EQ (devmodel_parse (dm, "rpm=15000,bogus=1", &bad), -ENOENT);
    CHECK (bad && strncmp (bad, "bogus", 5) == 0);
    CHECK_EQ (devmodel_parse (dm, "rpm", &bad), -EINVAL);
  }
  devmodel_describe (dm, buf, sizeof buf);
  printf ("%s\n", buf);
  CHECK (strstr (buf, "rpm=15000") && strstr (buf, "seek_max=20ms") &&
         strstr (buf, "rate=100M") && strstr (buf, "seek_min=500us") &&
         strstr (buf, "ncq=32") && strstr (buf, "ncq_age=2s"));
  devmodel_free (dm);
  CHECK_NULL (devmodel_new ("tape", &err));
  CHECK_EQ (err, -EINVAL);
}

/* The order an hdd serves what was queued behind a request in service:
 * rqs[0] is submitted at 0 on an idle head, rqs[1..n) at 1 us while it is
 * served.  order[k] = index of the k-th completion.
 */
static void
hdd_order (const char *params, struct rq *rqs, unsigned n, unsigned *order)
{
  struct devmodel *dm = devmodel_new ("hdd", NULL);
  uint64_t next;
  unsigned k = 0;

  CHECK_EQ (devmodel_parse (dm, params, NULL), 0);
  for (unsigned i = 0; i < n; i++)
    CHECK_EQ (devmodel_submit (dm, &rqs[i], i ? 1000 : 0), 0);
  while ((next = devmodel_next (dm)) != SCHED_NEVER) {
    struct rq *rq = devmodel_complete (dm, next, NULL);
    CHECK_NOTNULL (rq);
    CHECK_LT (k, n);
    order[k++] = rq - rqs;
  }
  CHECK_EQ (k, n);
  devmodel_free (dm);
}

static void
test_ncq (void)
{
  const uint64_t G = 1ULL << 30;
  /* In service: 4 KiB at 1 GiB.  Then far (900 GiB away: a 14 ms seek
   * at least), near (100 MiB away: 1.1 ms seek + under a revolution),
   * sequential (right after the first: nothing to position).
   */
  struct rq rqs[5];
  unsigned order[5];

  rqs[0] = mkrq (G, 4096, RQ_READ);
  rqs[1] = mkrq (901 * G, 4096, RQ_READ);
  rqs[2] = mkrq (G + (100 << 20), 4096, RQ_READ);
  rqs[3] = mkrq (G + 4096, 4096, RQ_READ);

  hdd_order ("ncq=0", rqs, 4, order);           /* in submission order */
  CHECK (order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
  hdd_order ("ncq=1", rqs, 4, order);
  CHECK (order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
  hdd_order ("ncq=32", rqs, 4, order);          /* closest first */
  CHECK (order[0] == 0 && order[1] == 3 && order[2] == 2 && order[3] == 1);
  hdd_order ("ncq=2", rqs, 4, order);           /* a window of two */
  CHECK (order[0] == 0 && order[1] == 2 && order[2] == 3 && order[3] == 1);
  /* The oldest goes once it has waited ncq_age (here: at once). */
  hdd_order ("ncq=32,ncq_age=1ns", rqs, 4, order);
  CHECK (order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);

  /* A flush is not queued: what came before goes before it, what came
   * after waits for it, however close.
   */
  rqs[2] = mkrq (0, 0, RQ_FLUSH);
  hdd_order ("ncq=32", rqs, 4, order);
  CHECK (order[0] == 0 && order[1] == 1 && order[2] == 2 && order[3] == 3);
  rqs[4] = mkrq (G + (100 << 20), 4096, RQ_READ);
  rqs[2] = mkrq (G + 8192, 4096, RQ_READ);      /* 4 KiB gap: near */
  rqs[3] = mkrq (0, 0, RQ_FLUSH);
  hdd_order ("ncq=32", rqs, 5, order);
  CHECK (order[0] == 0 && order[1] == 2 && order[2] == 1 && order[3] == 3 &&
         order[4] == 4);

  /* Random 4 KiB reads over the whole disk gain with depth, as SATA
   * disks with NCQ do (roughly 1.5-2x from 1 to 32); without NCQ depth
   * buys nothing.
   */
  {
    struct devmodel *dm = devmodel_new ("hdd", NULL);
    uint64_t cap = devmodel_capacity (dm);
    double q1, q8, q32, f1, f32;

    f1 = closed_loop (dm, 1, 3000, false, 4096, cap, NULL);
    devmodel_reset (dm);
    f32 = closed_loop (dm, 32, 3000, false, 4096, cap, NULL);
    CHECK_EQ (devmodel_set (dm, "ncq", "32"), -EBUSY);
    devmodel_reset (dm);
    CHECK_EQ (devmodel_set (dm, "ncq", "32"), 0);
    q1 = closed_loop (dm, 1, 3000, false, 4096, cap, NULL);
    devmodel_reset (dm);
    q8 = closed_loop (dm, 8, 3000, false, 4096, cap, NULL);
    devmodel_reset (dm);
    q32 = closed_loop (dm, 32, 3000, false, 4096, cap, NULL);
    printf ("hdd random 4k: no NCQ QD1 %.0f QD32 %.0f; ncq=32 QD1 %.0f QD8 %.0f"
            " QD32 %.0f IOPS\n", f1, f32, q1, q8, q32);
    CHECK_NEAR (f32 / f1, 1.0, 0.05);
    CHECK_NEAR (q1 / f1, 1.0, 0.1);     /* one at a time: NCQ changes nothing */
    CHECK (q1 < q8 && q8 < q32);
    CHECK (q32 / q1 > 1.5 && q32 / q1 < 2.5);
    devmodel_free (dm);
  }
}

/* IOPS of 4 KiB random reads on the SSD with `depth` always outstanding. */
static double
ssd_iops (unsigned depth, unsigned channels)
{
  struct devmodel *dm = devmodel_new ("ssd", NULL);
  char ch[16];
  double iops;

  snprintf (ch, sizeof ch, "%u", channels);
  CHECK_EQ (devmodel_set (dm, "channels", ch), 0);
  iops = closed_loop (dm, depth, 20000, false, 4096, 4ULL << 30, NULL);
  devmodel_free (dm);
  return iops;
}

static void
test_ssd (void)
{
  struct devmodel *dm = devmodel_new ("ssd", NULL);
  double i1, i8, i16, i64;

  CHECK (dm && !devmodel_rotational (dm));
  {
    struct rq rqs[5] = {
      mkrq (0, 4096, RQ_READ), mkrq (8192, 4096, RQ_WRITE),
      mkrq (0, 0, RQ_FLUSH), mkrq (0, 1 << 20, RQ_TRIM),
      mkrq (0, 1 << 20, RQ_ZERO),
    };
    uint64_t t[5];

    rqs[4].flags = RQ_MAYTRIM;
    for (int i = 0; i < 5; i++)
      CHECK_EQ (devmodel_submit (dm, &rqs[i], 0), 0);
    CHECK_EQ (drain (dm, rqs, t, 5), 5u);
    /* 4 KiB at 2000/16 MB/s per channel = 32.8 us */
    printf ("ssd: read %.1f us, write %.1f us, flush %.1f us, trim %.1f us\n",
            t[0] / 1e3, t[1] / 1e3, t[2] / 1e3, t[3] / 1e3);
    CHECK (t[0] > 110000 && t[0] < 115000);
    CHECK (t[1] > 50000 && t[1] < 55000);
    CHECK_EQ (t[2], t[1] + 50000);
    CHECK_EQ (t[3], 20000u);
    CHECK_EQ (t[4], 20000u);    /* a free channel, trim cost */
  }
  devmodel_free (dm);

  i1 = ssd_iops (1, 16);
  i8 = ssd_iops (8, 16);
  i16 = ssd_iops (16, 16);
  i64 = ssd_iops (64, 16);
  printf ("ssd 16 channels: QD1 %.0f, QD8 %.0f, QD16 %.0f, QD64 %.0f IOPS\n",
          i1, i8, i16, i64);
  CHECK (i8 > 7.5 * i1 && i8 < 8.5 * i1);
  CHECK (i16 > 15 * i1 && i16 < 17 * i1);
  CHECK_LT (i64, 1.05 * i16);   /* no more channels to use */
  CHECK_GT (ssd_iops (32, 32), 31 * ssd_iops (1, 32));
  CHECK_LT (ssd_iops (8, 4), 4.2 * ssd_iops (1, 4));
}

/* 500 random reads at depth 8: completion times and order. */
static void
hdd_trace (const char *params, uint64_t *t, unsigned *who)
{
  struct devmodel *dm = devmodel_new ("hdd", NULL);
  struct rq rqs[8];
  uint64_t x = 12345, now = 0;

  CHECK_EQ (devmodel_parse (dm, params, NULL), 0);
  for (int i = 0; i < 500 + 8; i++) {
    struct rq *rq;

    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    if (i < 8)
      rq = &rqs[i];
    else {
      uint64_t when = 0;
      now = devmodel_next (dm);
      rq = devmodel_complete (dm, now, &when);
      CHECK_NOTNULL (rq);
      t[i - 8] = when;
      who[i - 8] = rq - rqs;
    }
    *rq = mkrq ((x >> 20) % (1ULL << 38) / 4096 * 4096, 4096, RQ_READ);
    CHECK_EQ (devmodel_submit (dm, rq, now), 0);
  }
  devmodel_free (dm);
}

static void
test_determinism (void)
{
  uint64_t a[500], b[500], c[500];
  unsigned wa[500], wb[500], wc[500];

  for (int run = 0; run < 3; run++) {
    struct devmodel *dm = devmodel_new ("hdd", NULL);
    uint64_t *out = run == 0 ? a : run == 1 ? b : c;
    uint64_t now = 0, x = 12345;

    CHECK_EQ (devmodel_set (dm, "seed", run == 2 ? "8" : "7"), 0);
    for (int i = 0; i < 500; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      struct rq rq = mkrq ((x >> 20) % (1ULL << 38) / 4096 * 4096, 4096,
                           RQ_READ);
      now = out[i] = run1 (dm, &rq, now);
    }
    devmodel_free (dm);
  }
  CHECK (memcmp (a, b, sizeof a) == 0);
  CHECK (memcmp (a, c, sizeof a) != 0);

  /* With NCQ the order too is a function of the seed. */
  hdd_trace ("ncq=32,seed=7", a, wa);
  hdd_trace ("ncq=32,seed=7", b, wb);
  hdd_trace ("ncq=32,seed=8", c, wc);
  CHECK (memcmp (a, b, sizeof a) == 0 && memcmp (wa, wb, sizeof wa) == 0);
  CHECK (memcmp (a, c, sizeof a) != 0 && memcmp (wa, wc, sizeof wa) != 0);
  {
    unsigned backwards = 0;
    for (int i = 1; i < 500; i++)
      backwards += a[i] < a[i - 1];
    CHECK_EQ (backwards, 0u);   /* completion times never go back */
  }
}

static void
test_presets (void)
{
  char names[256], buf[512];
  size_t npresets = 0, nfitted = 0;

  devmodel_names (names, sizeof names, ", ", " or ");
  printf ("models: %s\n", names);
  CHECK_STREQ (names, "hdd, ssd, sata7200, vertex or nvme");
  for (const struct devmodel_preset *pr = devmodel_presets; pr->name; pr++) {
    int err = 0;
    struct devmodel *dm = devmodel_new (pr->name, &err);

    CHECK_NOTNULL (dm);                 /* its parameters parse */
    CHECK_EQ (err, 0);
    CHECK_STREQ (devmodel_name (dm), pr->name);
    CHECK_STREQ (devmodel_kind (dm), pr->kind);
    CHECK_PTR_EQ (devmodel_preset (pr->name), pr);
    CHECK (pr->about && pr->about[0]);
    devmodel_describe (dm, buf, sizeof buf);
    printf ("%s\n", buf);
    CHECK (strncmp (buf, pr->name, strlen (pr->name)) == 0);
    devmodel_free (dm);
    npresets++;
  }
  CHECK_EQ (npresets, 5u);
  CHECK_NULL (devmodel_preset ("sata"));

  /* Each preset against the published figures it carries. */
  for (const struct devmodel_preset *pr = devmodel_presets; pr->name; pr++) {
    struct devmodel *dm;
    uint64_t cap;
    double bps;

    if (pr->seq_mbs == 0)
      continue;
    CHECK_NOTNULL (pr->source);
    dm = devmodel_new (pr->name, NULL);
    cap = devmodel_capacity (dm);
    closed_loop (dm, 32, 2000, true, 128 << 10, cap, &bps);
    printf ("%s: seq %.0f MB/s (published %.0f)", pr->name, bps / 1e6,
            pr->seq_mbs);
    CHECK_NEAR (bps / 1e6 / pr->seq_mbs, 1.0, 0.2);
    for (int k = 0; k < 2; k++) {
      double iops;

      if (pr->rand[k].depth == 0)
        continue;
      devmodel_reset (dm);
      iops = closed_loop (dm, pr->rand[k].depth, 4000, false, 4096, cap,
                          NULL);
      printf (", random QD%u %.0f IOPS (%.0f)", pr->rand[k].depth, iops,
              pr->rand[k].iops);
      CHECK_NEAR (iops / pr->rand[k].iops, 1.0, 0.2);
    }
    printf ("\n");
    devmodel_free (dm);
    nfitted++;
  }
  CHECK_EQ (nfitted, 3u);
}

static void
test_parsers_and_stats (void)
{
  struct hist h;
  uint64_t vals[10000];
  double eq[4] = { 2, 2, 2, 2 }, one[4] = { 1, 0, 0, 0 };

  hist_init (&h);
  CHECK_EQ (hist_quantile (&h, 0.50), 0u);
  for (int i = 0; i < 10000; i++) {
    vals[i] = (uint64_t) (rnd () % 100000000) + 1;
    hist_add (&h, vals[i]);
  }
  for (double p = 1; p <= 100; p += 7.5) {
    uint64_t e = stats_percentile (vals, 10000, p);
    uint64_t a = hist_quantile (&h, p / 100);
    CHECK ((double) a > 0.99 * e && (double) a < 1.01 * e);
  }
  CHECK_EQ (hist_quantile (&h, 1.0), h.max);
  CHECK_EQ (h.max, stats_percentile (vals, 10000, 100));
  CHECK_GT (stats_jain (eq, 4), 0.999999);
  CHECK (stats_jain (one, 4) > 0.249999 && stats_jain (one, 4) < 0.250001);
  hist_free (&h);
}

int
main (void)
{
  setvbuf (stdout, NULL, _IONBF, 0);
  test_interface ();
  test_hdd ();
  test_ncq ();
  test_ssd ();
  test_determinism ();
  test_presets ();
  test_parsers_and_stats ();
  check_done ("test-devmodel");
  return 0;
}
