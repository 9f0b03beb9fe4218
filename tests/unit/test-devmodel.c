/* test-devmodel.c: the device models behave like the devices they stand for.
 *
 *  - hdd: seek time grows with distance; a sequential stream beats random
 *    4 KiB reads by a large factor; the mean random access matches the
 *    documented defaults (8.5 ms seek + half a revolution); requests are
 *    served one at a time; flush waits for the head.
 *  - ssd: throughput scales with depth up to the channel count and not
 *    beyond; reads and writes cost their latencies; flush waits for writes.
 *  - both: the same seed gives the same completion times, another seed
 *    different ones (hdd); parameters parse with units and reject nonsense.
 *  - stats: histogram percentiles are within 1%, Jain's index is right.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

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

/* Mean service time of n back-to-back reads alternating between two
 * points d bytes apart (each a seek of exactly d).
 */
static double
hdd_alternating (uint64_t d, int n)
{
  struct devmodel *dm = devmodel_new ("hdd", NULL);
  uint64_t now = 0;

  assert (dm);
  for (int i = 0; i < n; i++) {
    struct rq rq = mkrq (i % 2 ? d + (uint64_t) (1 << 30) : (1 << 30), 4096,
                         RQ_READ);
    now = devmodel_submit (dm, &rq, now);
  }
  devmodel_free (dm);
  return (double) now / n;
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
  assert (t1 < t2 && t2 < t3);
  assert (t3 - t1 > 5e6);       /* full-ish stroke costs ms more */

  /* Sequential vs random: 64 MiB of 64 KiB reads vs random 4 KiB reads. */
  dm = devmodel_new ("hdd", &err);
  assert (dm && devmodel_rotational (dm));
  assert (strcmp (devmodel_kind (dm), "hdd") == 0);
  cap = devmodel_capacity (dm);
  now = 0;
  for (uint64_t off = 0; off < (64 << 20); off += 65536) {
    struct rq rq = mkrq (off, 65536, RQ_READ);
    now = devmodel_submit (dm, &rq, now);
  }
  t_seq = now;                  /* ns for 64 MiB */
  devmodel_reset (dm);
  now = 0;
  for (int i = 0; i < 2000; i++) {
    struct rq rq = mkrq (rnd () % (cap / 4096) * 4096, 4096, RQ_READ);
    now = devmodel_submit (dm, &rq, now);
  }
  t_rand = now;                 /* ns for 2000 random reads = 7.8 MiB */
  {
    double seq_mbs = 64.0 * 1048576 / (t_seq / 1e9) / 1e6;
    double rand_mbs = 2000.0 * 4096 / (t_rand / 1e9) / 1e6;
    double rand_ms = t_rand / 2000.0 / 1e6;
    printf ("hdd: seq %.1f MB/s, random 4k %.3f MB/s (%.2f ms/req, %.0f IOPS)\n",
            seq_mbs, rand_mbs, rand_ms, 1000 / rand_ms);
    assert (seq_mbs > 140 && seq_mbs < 160);
    assert (seq_mbs > 100 * rand_mbs);
    /* 8.5 ms mean seek + 4.17 ms mean rotation + transfer, +-10% */
    assert (rand_ms > 11.4 && rand_ms < 14.0);
  }

  /* One at a time, in submission order: two requests at the same instant
   * complete one after the other.
   */
  devmodel_reset (dm);
  {
    struct rq a = mkrq (0, 1 << 20, RQ_READ), b = mkrq (1 << 20, 1 << 20,
                                                        RQ_WRITE);
    struct rq f = mkrq (0, 0, RQ_FLUSH);
    uint64_t ta = devmodel_submit (dm, &a, 1000);
    uint64_t tb = devmodel_submit (dm, &b, 1000);
    uint64_t tf = devmodel_submit (dm, &f, 1000);
    assert (tb > ta && tb - ta >= 6900000);      /* 1 MiB at 150 MB/s */
    assert (tf == tb + 1000000);                 /* flush after the write */
    assert (devmodel_set (dm, "rpm", "5400") == -EBUSY);
  }

  /* Forward skips within "near" cost the passing gap, not a seek. */
  devmodel_reset (dm);
  {
    struct rq a = mkrq (0, 65536, RQ_READ), b = mkrq (65536 * 4, 65536,
                                                      RQ_READ);
    uint64_t ta = devmodel_submit (dm, &a, 0);
    uint64_t tb = devmodel_submit (dm, &b, ta);
    /* 3 x 64 KiB gap + 64 KiB transfer at 150 MB/s = 1.75 ms */
    assert (tb - ta > 1700000 && tb - ta < 1800000);
  }

  /* Parameters. */
  devmodel_free (dm);
  dm = devmodel_new ("hdd", NULL);
  assert (devmodel_set (dm, "rpm", "5400") == 0);
  assert (devmodel_set (dm, "seek_max", "20ms") == 0);
  assert (devmodel_set (dm, "rate", "100M") == 0);
  assert (devmodel_set (dm, "capacity", "2t") == 0);
  assert (devmodel_capacity (dm) == 2ULL << 40);
  assert (devmodel_set (dm, "channels", "4") == -ENOENT);
  assert (devmodel_set (dm, "nonesuch", "4") == -ENOENT);
  assert (devmodel_set (dm, "rpm", "fast") == -EINVAL);
  assert (devmodel_set (dm, "rpm", "10") == -ERANGE);
  assert (devmodel_set (dm, "seek_max", "-1ms") == -EINVAL);
  assert (devmodel_set (dm, "seek_max", "3 parsecs") == -EINVAL);
  {
    const char *bad = NULL;
    assert (devmodel_parse (dm, "rpm=15000, seek_min=0.5ms,near=2M", &bad)
            == 0);
    assert (devmodel_parse (dm, "rpm=15000,bogus=1", &bad) == -ENOENT);
    assert (bad && strncmp (bad, "bogus", 5) == 0);
    assert (devmodel_parse (dm, "rpm", &bad) == -EINVAL);
  }
  devmodel_describe (dm, buf, sizeof buf);
  printf ("%s\n", buf);
  assert (strstr (buf, "rpm=15000") && strstr (buf, "seek_max=20ms") &&
          strstr (buf, "rate=100M") && strstr (buf, "seek_min=500us"));
  devmodel_free (dm);
  assert (devmodel_new ("tape", &err) == NULL && err == -EINVAL);
}

/* IOPS of 4 KiB random reads on the SSD with `depth` always outstanding. */
static double
ssd_iops (unsigned depth, unsigned channels)
{
  struct devmodel *dm = devmodel_new ("ssd", NULL);
  uint64_t done[1024], now = 0;
  char ch[16];
  const int n = 20000;

  snprintf (ch, sizeof ch, "%u", channels);
  assert (devmodel_set (dm, "channels", ch) == 0);
  for (unsigned i = 0; i < depth; i++) {
    struct rq rq = mkrq (rnd () % (1 << 20) * 4096, 4096, RQ_READ);
    done[i] = devmodel_submit (dm, &rq, 0);
  }
  for (int k = 0; k < n; k++) {
    unsigned m = 0;             /* resubmit the earliest completion */
    for (unsigned i = 1; i < depth; i++)
      if (done[i] < done[m])
        m = i;
    now = done[m];
    struct rq rq = mkrq (rnd () % (1 << 20) * 4096, 4096, RQ_READ);
    done[m] = devmodel_submit (dm, &rq, now);
  }
  devmodel_free (dm);
  return n / (now / 1e9);
}

static void
test_ssd (void)
{
  struct devmodel *dm = devmodel_new ("ssd", NULL);
  double i1, i8, i16, i64;

  assert (dm && !devmodel_rotational (dm));
  {
    struct rq r = mkrq (0, 4096, RQ_READ), w = mkrq (8192, 4096, RQ_WRITE);
    struct rq f = mkrq (0, 0, RQ_FLUSH), t = mkrq (0, 1 << 20, RQ_TRIM);
    struct rq z = mkrq (0, 1 << 20, RQ_ZERO);
    uint64_t tr = devmodel_submit (dm, &r, 0);
    uint64_t tw = devmodel_submit (dm, &w, 0);
    uint64_t tf = devmodel_submit (dm, &f, 0);
    uint64_t tt = devmodel_submit (dm, &t, 0);
    uint64_t tz;
    /* 4 KiB at 2000/16 MB/s per channel = 32.8 us */
    printf ("ssd: read %.1f us, write %.1f us, flush %.1f us, trim %.1f us\n",
            tr / 1e3, tw / 1e3, tf / 1e3, tt / 1e3);
    assert (tr > 110000 && tr < 115000);
    assert (tw > 50000 && tw < 55000);
    assert (tf == tw + 50000);
    assert (tt == 20000);
    z.flags = RQ_MAYTRIM;
    tz = devmodel_submit (dm, &z, 0);
    assert (tz == 20000);       /* a free channel, trim cost */
  }
  devmodel_free (dm);

  i1 = ssd_iops (1, 16);
  i8 = ssd_iops (8, 16);
  i16 = ssd_iops (16, 16);
  i64 = ssd_iops (64, 16);
  printf ("ssd 16 channels: QD1 %.0f, QD8 %.0f, QD16 %.0f, QD64 %.0f IOPS\n",
          i1, i8, i16, i64);
  assert (i8 > 7.5 * i1 && i8 < 8.5 * i1);
  assert (i16 > 15 * i1 && i16 < 17 * i1);
  assert (i64 < 1.05 * i16);    /* no more channels to use */
  assert (ssd_iops (32, 32) > 31 * ssd_iops (1, 32));
  assert (ssd_iops (8, 4) < 4.2 * ssd_iops (1, 4));
}

static void
test_determinism (void)
{
  uint64_t a[500], b[500], c[500];

  for (int run = 0; run < 3; run++) {
    struct devmodel *dm = devmodel_new ("hdd", NULL);
    uint64_t *out = run == 0 ? a : run == 1 ? b : c;
    uint64_t now = 0, x = 12345;

    assert (devmodel_set (dm, "seed", run == 2 ? "8" : "7") == 0);
    for (int i = 0; i < 500; i++) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      struct rq rq = mkrq ((x >> 20) % (1ULL << 38) / 4096 * 4096, 4096,
                           RQ_READ);
      now = out[i] = devmodel_submit (dm, &rq, now);
    }
    devmodel_free (dm);
  }
  assert (memcmp (a, b, sizeof a) == 0);
  assert (memcmp (a, c, sizeof a) != 0);
}

static void
test_parsers_and_stats (void)
{
  struct hist h;
  uint64_t vals[10000];
  double eq[4] = { 2, 2, 2, 2 }, one[4] = { 1, 0, 0, 0 };

  hist_init (&h);
  assert (hist_quantile (&h, 0.50) == 0);
  for (int i = 0; i < 10000; i++) {
    vals[i] = (uint64_t) (rnd () % 100000000) + 1;
    hist_add (&h, vals[i]);
  }
  for (double p = 1; p <= 100; p += 7.5) {
    uint64_t e = stats_percentile (vals, 10000, p);
    uint64_t a = hist_quantile (&h, p / 100);
    assert ((double) a > 0.99 * e && (double) a < 1.01 * e);
  }
  assert (hist_quantile (&h, 1.0) == h.max);
  assert (h.max == stats_percentile (vals, 10000, 100));
  assert (stats_jain (eq, 4) > 0.999999);
  assert (stats_jain (one, 4) > 0.249999 && stats_jain (one, 4) < 0.250001);
}

int
main (void)
{
  setvbuf (stdout, NULL, _IONBF, 0);
  test_hdd ();
  test_ssd ();
  test_determinism ();
  test_parsers_and_stats ();
  printf ("ok\n");
  return 0;
}
