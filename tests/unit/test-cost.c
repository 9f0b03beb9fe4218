/* test-cost.c: the cost model says what requests cost the device.
 *
 *  - parameters: parse and format read each other back; a missing key,
 *    an unknown or repeated one, a bad value is refused and the error
 *    points at it; values outside the sanity bounds are -ERANGE.
 *  - the linear model: a 1 MiB read costs what 256 pages and one request
 *    do; a sequential 4 KiB read on a disk is far cheaper than a random
 *    one; trims and flushes cost a request and no pages.
 *  - each device model (kinds and presets): the model's predicted 4 KiB
 *    random read and write IOPS and sequential read bytes/s are within
 *    15% of the device model itself, run in virtual time at depth 32
 *    over the span the parameters were worked out for.
 *  - calibration: figures inside the bounds are taken; one figure
 *    outside them refuses the whole measurement and keeps the fallback,
 *    saying which; writes not measured keep the fallback's ratio of
 *    write to read, figure by figure; bps
 *    measured with 1 MiB requests is solved with the 4 KiB sequential
 *    figure so that the model gives both back as measured.
 *  - online correction: on a device twice as slow as the model, vrate
 *    moves to 2 and the error to within 5%; on one 10 times slower it
 *    stops at COST_VRATE_MAX and the error says the model is wrong; idle
 *    time (the device not full) counts for nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "cost.h"
#include "devmodel.h"
#include "rng.h"
#include "sched.h"

static void
test_parse (void)
{
  struct cost_params p, q;
  const char *bad = NULL;
  char buf[256];
  const char *s = "rbps=150M rseqiops=36000 rrandiops=80 wbps=140M "
    "wseqiops=34000,wrandiops=75 depth=1";

  CHECK_EQ (cost_params_parse (s, &p, &bad), 0);
  CHECK_EQ (p.bps[COST_READ], 150000000ull);
  CHECK_EQ (p.randiops[COST_WRITE], 75ull);
  CHECK_EQ (p.depth, 1ull);
  cost_params_format (&p, buf, sizeof buf);
  CHECK_EQ (cost_params_parse (buf, &q, NULL), 0);
  CHECK (memcmp (&p, &q, sizeof p) == 0);

  /* A missing key. */
  CHECK_EQ (cost_params_parse ("rbps=150M", &p, &bad), -EINVAL);
  /* Unknown, repeated, unparsable: the error points at the item. */
  s = "rbps=150M rseqiop=36000";
  CHECK_EQ (cost_params_parse (s, &p, &bad), -EINVAL);
  CHECK_STREQ (bad, "rseqiop=36000");
  s = "rbps=150M rbps=150M";
  CHECK_EQ (cost_params_parse (s, &p, &bad), -EINVAL);
  CHECK_STREQ (bad, "rbps=150M");
  s = "rbps=fast";
  CHECK_EQ (cost_params_parse (s, &p, &bad), -EINVAL);
  CHECK_STREQ (bad, "rbps=fast");
  /* Out of bounds: 5 IOPS, 500 kB/s. */
  s = "rbps=150M rseqiops=36000 rrandiops=5 wbps=140M "
    "wseqiops=34000 wrandiops=75 depth=1";
  CHECK_EQ (cost_params_parse (s, &p, &bad), -ERANGE);
  CHECK (strncmp (bad, "rrandiops", 9) == 0);
  q.bps[COST_WRITE] = 500000;
  CHECK_EQ (cost_params_check (&q, &bad), -ERANGE);
  CHECK_STREQ (bad, "wbps");
}

static void
test_linear (void)
{
  struct cost_params p;
  struct cost_model m;
  uint64_t page, r4, r1m, s4;

  cost_params_default (&p, false);                /* flash */
  CHECK_EQ (cost_model_init (&m, &p, "test"), 0);
  page = m.page_ps[COST_READ];
  r4 = cost_rq (&m, RQ_READ, 4096, false);
  r1m = cost_rq (&m, RQ_READ, 1 << 20, false);
  CHECK_EQ (r1m, (m.rand_ps[COST_READ] + 256 * page) / 1000);
  CHECK_EQ (m.ref_ns, r4);
  /* 1 MiB of flash at 2 GB/s: ~524 us of 7 us 4 KiB reads, ~75 times. */
  CHECK_GT (r1m, 50 * r4);
  CHECK_LT (r1m, 100 * r4);
  /* A partial page counts as one. */
  CHECK_EQ (cost_rq (&m, RQ_READ, 512, false), r4);
  /* Trim and flush: a random write's base. */
  CHECK_EQ (cost_rq (&m, RQ_TRIM, 1 << 20, true),
            m.rand_ps[COST_WRITE] / 1000);
  CHECK_EQ (cost_rq (&m, RQ_FLUSH, 0, false), m.rand_ps[COST_WRITE] / 1000);
  /* A zero is a write of its length. */
  CHECK_EQ (cost_rq (&m, RQ_ZERO, 65536, true),
            cost_rq (&m, RQ_WRITE, 65536, true));

  cost_params_default (&p, true);                 /* disk */
  CHECK_EQ (cost_model_init (&m, &p, "test"), 0);
  s4 = cost_rq (&m, RQ_READ, 4096, true);
  r4 = cost_rq (&m, RQ_READ, 4096, false);
  CHECK_GT (r4, 100 * s4);
  CHECK_EQ (p.depth, 1ull);
  /* The predictions read back the parameters. */
  CHECK_NEAR (cost_model_iops (&m, COST_READ, false),
              (double) p.randiops[COST_READ], p.randiops[COST_READ] * 0.01);
  CHECK_NEAR (cost_model_bps (&m, COST_READ), (double) p.bps[COST_READ],
              p.bps[COST_READ] * 0.01);
}

/* Run n requests of len at depth over span on dm in virtual time: the
 * rate in requests per second.
 */
static double
run_dev (struct devmodel *dm, int op, uint32_t len, bool seq, uint64_t span,
         unsigned depth, unsigned n)
{
  static struct rq rqs[64];
  uint64_t x = 12345, pos = 0, t = 0, t0 = 0;
  unsigned done = 0;

  devmodel_reset (dm);
  for (unsigned i = 0; i < depth; i++) {
    memset (&rqs[i], 0, sizeof rqs[i]);
    rqs[i].len = len;
    rqs[i].op = op;
    rqs[i].off = seq ? pos : xorshift64s (&x) % (span / len) * len;
    pos += len;
    CHECK_EQ (devmodel_submit (dm, &rqs[i], 0), 0);
  }
  while (done < n + depth) {
    struct rq *rq;

    t = devmodel_next (dm);
    while ((rq = devmodel_complete (dm, t, NULL)) != NULL) {
      if (++done == depth)
        t0 = t;
      rq->off = seq ? pos : xorshift64s (&x) % (span / len) * len;
      pos += len;
      CHECK_EQ (devmodel_submit (dm, rq, t), 0);
    }
  }
  return (double) (done - depth) * 1e9 / (double) (t - t0);
}

static void
test_devices (void)
{
  for (const struct devmodel_preset *pr = devmodel_presets; pr->name; pr++) {
    int err;
    struct devmodel *dm = devmodel_new (pr->name, &err);
    uint64_t span = 16ull << 30;
    struct cost_params p;
    struct cost_model m;
    double got, want;

    CHECK_NOTNULL (dm);
    if (span > devmodel_capacity (dm))
      span = devmodel_capacity (dm);
    CHECK_EQ (devmodel_cost_params (dm, span, &p), 0);
    CHECK_EQ (cost_model_init (&m, &p, "device model"), 0);

    got = run_dev (dm, RQ_READ, 4096, false, span, 32, 3000);
    want = cost_model_iops (&m, COST_READ, false);
    printf ("%-9s randread  model %10.0f  device %10.0f IOPS\n", pr->name,
            want, got);
    CHECK_NEAR (want / got, 1.0, 0.15);

    got = run_dev (dm, RQ_WRITE, 4096, false, span, 32, 3000);
    want = cost_model_iops (&m, COST_WRITE, false);
    printf ("%-9s randwrite model %10.0f  device %10.0f IOPS\n", pr->name,
            want, got);
    CHECK_NEAR (want / got, 1.0, 0.15);

    got = run_dev (dm, RQ_READ, 1 << 20, true, span, 32, 400) * (1 << 20);
    want = cost_model_bps (&m, COST_READ);
    printf ("%-9s seqread   model %10.0f  device %10.0f B/s\n", pr->name,
            want, got);
    CHECK_NEAR (want / got, 1.0, 0.15);
    devmodel_free (dm);
  }
}

static void
test_calibrate (void)
{
  struct cost_params fb, out;
  struct cost_measure ms = {
    .bps = { 500e6, 0 }, .seqiops = { 60000, 0 }, .randiops = { 20000, 0 },
    .depth = 32,
  };
  char why[128];

  cost_params_default (&fb, true);
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 0);
  CHECK_EQ (out.bps[COST_READ], 500000000ull);
  CHECK_EQ (out.randiops[COST_READ], 20000ull);
  CHECK_EQ (out.depth, 32ull);
  /* Writes were not measured: the fallback's ratio of write to read,
   * figure by figure, applied to the reads measured.
   */
  CHECK_NEAR ((double) out.bps[COST_WRITE] / out.bps[COST_READ],
              (double) fb.bps[COST_WRITE] / fb.bps[COST_READ], 0.001);
  CHECK_NEAR ((double) out.seqiops[COST_WRITE] / out.seqiops[COST_READ],
              (double) fb.seqiops[COST_WRITE] / fb.seqiops[COST_READ], 0.001);
  CHECK_NEAR ((double) out.randiops[COST_WRITE] / out.randiops[COST_READ],
              (double) fb.randiops[COST_WRITE] / fb.randiops[COST_READ], 0.001);
  CHECK (out.randiops[COST_WRITE] > 10 * fb.randiops[COST_WRITE]);
  /* A slow device: its write estimates stay within the bounds, and the
   * reads measured are taken.
   */
  {
    struct cost_measure slow = {
      .bps = { 1.05e6, 0 }, .seqiops = { 12, 0 }, .randiops = { 11, 0 },
      .depth = 1,
    };
    struct cost_params big = fb;

    big.bps[COST_WRITE] = big.bps[COST_READ] / 2;
    big.seqiops[COST_WRITE] = big.seqiops[COST_READ] / 2;
    big.randiops[COST_WRITE] = big.randiops[COST_READ] / 2;
    CHECK_EQ (cost_calibrate (&slow, &big, &out, why, sizeof why), 0);
    CHECK_EQ (out.bps[COST_WRITE], COST_BPS_MIN);
    CHECK_EQ (out.randiops[COST_WRITE], COST_IOPS_MIN);
    CHECK_EQ (out.randiops[COST_READ], 11ull);
  }
  CHECK_STREQ (why, "");

  /* The page cache answered: 50 GB/s is fine, 4 TB/s is not. */
  ms.bps[COST_READ] = 4e12;
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 1);
  CHECK (memcmp (&out, &fb, sizeof out) == 0);
  CHECK (strstr (why, "rbps=") != NULL);
  CHECK (strstr (why, "out of bounds") != NULL);
  /* A stalled device: 2 IOPS. */
  ms.bps[COST_READ] = 500e6;
  ms.randiops[COST_READ] = 2;
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 1);
  CHECK (strstr (why, "rrandiops=2 ") != NULL);
  /* Writes measured too. */
  ms.randiops[COST_READ] = 20000;
  ms.bps[COST_WRITE] = 400e6;
  ms.seqiops[COST_WRITE] = 50000;
  ms.randiops[COST_WRITE] = 30000;
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 0);
  CHECK_EQ (out.randiops[COST_WRITE], 30000ull);
}

/* bps measured with 1 MiB requests: the model is solved so that it gives
 * back the 1 MiB and the 4 KiB sequential requests as they were measured,
 * and rbps is the rate of the pages alone; a figure whose large request
 * was no slower than the small one keeps bps as measured.
 */
static void
test_calibrate_big (void)
{
  /* A device with 100 us per sequential request and 1 GB/s of pages. */
  const double base = 100e-6, page = COST_PAGE / 1e9, mib = 1 << 20;
  const double t_4k = base + page, t_mib = base + mib / COST_PAGE * page;
  struct cost_measure ms = {
    .bps = { mib / t_mib, 0 }, .seqiops = { 1 / t_4k, 0 },
    .randiops = { 5000, 0 }, .depth = 1, .bps_len = 1 << 20,
  };
  struct cost_params fb, out;
  struct cost_model m;
  char why[128];

  cost_params_default (&fb, false);
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 0);
  CHECK_NEAR ((double) out.bps[COST_READ], 1e9, 1e9 * 0.001);
  CHECK_EQ (cost_model_init (&m, &out, "test"), 0);
  /* 1 MiB and 4 KiB sequential reads cost what was measured. */
  CHECK_NEAR ((double) cost_rq_raw (&m, RQ_READ, 1 << 20, true),
              t_mib * 1e9, t_mib * 1e9 * 0.001);
  CHECK_NEAR ((double) cost_rq_raw (&m, RQ_READ, COST_PAGE, true),
              t_4k * 1e9, t_4k * 1e9 * 0.001);
  /* Without bps_len, bps is taken as measured (and undercounts pages). */
  ms.bps_len = 0;
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 0);
  CHECK_NEAR ((double) out.bps[COST_READ], mib / t_mib, 1);
  /* Noise: 1 MiB requests no slower than 4 KiB ones. */
  ms.bps_len = 1 << 20;
  ms.seqiops[COST_READ] = ms.bps[COST_READ] / mib / 2;
  CHECK_EQ (cost_calibrate (&ms, &fb, &out, why, sizeof why), 0);
  CHECK_NEAR ((double) out.bps[COST_READ], mib / t_mib, 1);
}

/* A device that really takes factor x the model's time per request, kept
 * full (depth requests), for secs seconds.
 */
static void
feed (struct cost_model *m, double factor, double secs, uint64_t *now)
{
  unsigned depth = (unsigned) m->p.depth;
  uint64_t raw = cost_rq_raw (m, RQ_READ, 4096, false);
  uint64_t step = (uint64_t) ((double) raw * factor);
  uint64_t end = *now + (uint64_t) (secs * 1e9);

  while (m->in_dev < depth)
    cost_observe (m, *now, +1, 0);
  while (*now < end) {
    *now += step;
    cost_observe (m, *now, -1, raw);
    cost_observe (m, *now, +1, 0);
  }
}

static void
test_online (void)
{
  struct cost_params p;
  struct cost_model m;
  uint64_t now = 1000;
  uint64_t windows;

  cost_params_default (&p, false);
  CHECK_EQ (cost_model_init (&m, &p, "test"), 0);
  CHECK_EQ (m.vrate, COST_VRATE_ONE);

  /* Exact model: vrate stays, error ~0. */
  feed (&m, 1.0, 2, &now);
  CHECK_GE (m.windows, 6ull);
  CHECK_NEAR ((double) m.vrate / COST_VRATE_ONE, 1.0, 0.01);
  CHECK_LE (m.error_max_ppm, 10000u);

  /* Twice as slow: vrate moves to 2. */
  feed (&m, 2.0, 10, &now);
  CHECK_NEAR ((double) m.vrate / COST_VRATE_ONE, 2.0, 0.05);
  CHECK_LE (m.error_ppm < 0 ? -m.error_ppm : m.error_ppm, 50000);
  CHECK_NEAR ((double) cost_rq (&m, RQ_READ, 4096, false)
              / (double) cost_rq_raw (&m, RQ_READ, 4096, false), 2.0, 0.05);
  /* IOPS mode's unit is the raw model's: charges keep their ratios. */
  CHECK_EQ (m.ref_ns, cost_rq_raw (&m, RQ_READ, 4096, false));

  /* Ten times slower: bounded, and the error shows it. */
  feed (&m, 10.0, 30, &now);
  CHECK_EQ (m.vrate, COST_VRATE_MAX);
  CHECK_LT (m.error_ppm, -500000);

  /* Not full: nothing is learnt. */
  windows = m.windows;
  while (m.in_dev)
    cost_observe (&m, now, -1, 1000);
  cost_observe (&m, now, +1, 0);
  for (int i = 0; i < 10000; i++) {
    now += 1000000;
    cost_observe (&m, now, -1, 1000);
    cost_observe (&m, now, +1, 0);
  }
  CHECK_EQ (m.windows, windows);
}

int
main (void)
{
  test_parse ();
  test_linear ();
  test_devices ();
  test_calibrate ();
  test_calibrate_big ();
  test_online ();
  check_done ("test-cost");
  return 0;
}
