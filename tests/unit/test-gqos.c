/* test-gqos.c: limits held across servers (core/gqos.c, qos_charge) on a
 * virtual clock.
 *
 * Three simulated servers each run one group's caps and reservation
 * (struct qos_group) and a struct gqos_group, and share their records
 * through an array in memory (the RADOS object's omap: one record per
 * server), each exchanging every period at its own offset.  A server's
 * device takes one request every STEP; a backlogged client on every
 * server takes what the caps let through.  Counting the sum per 1 s
 * window shows what the tenant gets in all.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "gqos.h"

#define MS NSEC_PER_MSEC
#define S NSEC_PER_SEC
#define US NSEC_PER_USEC
#define NSRV 3
#define STEP (100 * US)         /* a device request: 10000/s per server */
#define PERIOD (100 * MS)
#define EXPIRY (2 * S)
#define WINDOWS 40

struct srv {
  char name[16];
  struct qos_sched qs;
  struct qos_group qg;          /* the tenant's group here */
  struct qos_group other;       /* a greedy tenant beside it (reservations) */
  struct gqos_group gg;
  uint64_t seq;
  uint64_t next_exchange;       /* ns */
  bool dead;                    /* killed: neither serves nor exchanges */
  bool cut;                     /* its exchanges fail (the cluster gone) */
  uint64_t demand;              /* requests/s its client sends; 0: always
                                   one waiting (backlogged) */
  uint64_t served;              /* of the tenant's, here */
};

struct world {
  struct srv srv[NSRV];
  char store[NSRV][GQOS_RECORD_MAX];    /* the object's omap values */
  bool exchange;                /* exchange the counts at all */
  uint64_t w[WINDOWS];          /* the tenant's requests, all servers */
  uint64_t wres[WINDOWS];       /* of them, for the reservation */
};

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

/* The servers' exchanges are not in step: each at its own offset. */
static const uint64_t offset[NSRV] = { 0, 10 * MS, 70 * MS };

static void
world_init (struct world *wd, const struct qos_conf *c, bool exchange,
            bool greedy, const struct rq *rq)
{
  struct qos_conf none;

  memset (wd, 0, sizeof *wd);
  memset (&none, 0, sizeof none);
  wd->exchange = exchange;
  for (int i = 0; i < NSRV; i++) {
    struct srv *v = &wd->srv[i];
    snprintf (v->name, sizeof v->name, "gw%d", i);
    qos_sched_init (&v->qs);
    qos_group_init (&v->qg);
    qos_group_init (&v->other);
    qos_group_set (&v->qs, &v->qg, c, 0);
    qos_enqueue (&v->qg, rq, 0);                /* backlogged */
    if (greedy)
      qos_enqueue (&v->other, rq, 0);
    gqos_group_init (&v->gg, EXPIRY);
    v->next_exchange = PERIOD + offset[i];
  }
}

/* Server i's exchange at NOW: its record out, the others' in, its
 * shares from them.
 */
static void
exchange (struct world *wd, int i, uint64_t now)
{
  struct srv *v = &wd->srv[i];
  struct qos_counts charge;
  struct gqos_record rec = { .seq = ++v->seq, .t_ns = now, .c = v->qg.done };
  uint32_t share[QOS_NR_CAPS];
  bool ok = wd->exchange && !v->cut;

  memset (&charge, 0, sizeof charge);
  if (ok) {
    CHECK_GT (gqos_encode (&rec, wd->store[i], sizeof wd->store[i]), 0);
    for (int j = 0; j < NSRV; j++) {
      struct gqos_record r;
      if (j == i || !wd->store[j][0])
        continue;
      CHECK_EQ (gqos_decode (wd->store[j], strlen (wd->store[j]), &r), 0);
      gqos_peer_seen (&v->gg, wd->srv[j].name, &r, now, &charge);
    }
  }
  gqos_exchange_done (&v->gg, ok, now);
  gqos_shares (&v->gg, &v->qg.conf, now, share);
  qos_charge (&v->qg, &charge, wd->exchange ? share : NULL, now);
}

/* One device slot of server i at NOW: the reservation if due, else the
 * tenant if its caps let it (and no greedy tenant is there), else the
 * greedy tenant.
 */
static void
slot (struct world *wd, int i, const struct rq *rq, bool greedy,
      uint64_t t0, uint64_t now)
{
  struct srv *v = &wd->srv[i];
  struct qos_group *due = qos_due (&v->qs, now);
  size_t win = (now - t0) / S;

  if (due == &v->qg) {
    qos_account (&v->qg, rq, now, true);
    v->served++;
    if (win < WINDOWS) {
      wd->w[win]++;
      wd->wres[win]++;
    }
    return;
  }
  if (greedy)
    return;                     /* the other tenant takes the slot */
  if (v->demand && v->served >= (now - t0) * v->demand / S)
    return;                     /* its client has nothing waiting */
  if (qos_admit (&v->qg, rq, now))
    return;
  qos_account (&v->qg, rq, now, false);
  v->served++;
  if (win < WINDOWS)
    wd->w[win]++;
}

/* Run from T0 for DUR; at KILL_AT (if nonzero) server 2 dies; at CUT_AT
 * (if nonzero) every exchange fails.
 */
static void
run (struct world *wd, const struct rq *rq, bool greedy, uint64_t t0,
     uint64_t dur, uint64_t kill_at, uint64_t cut_at)
{
  for (uint64_t now = t0; now < t0 + dur; now += STEP) {
    if (kill_at && now >= kill_at)
      wd->srv[2].dead = true;
    for (int i = 0; i < NSRV; i++) {
      struct srv *v = &wd->srv[i];
      if (v->dead)
        continue;
      if (cut_at && now >= cut_at)
        v->cut = true;
      if (now >= v->next_exchange) {
        exchange (wd, i, now);
        v->next_exchange += PERIOD;
      }
      slot (wd, i, rq, greedy, t0, now);
    }
  }
}

static void
print_windows (const char *what, const uint64_t *w, int n)
{
  printf ("  %s:", what);
  for (int i = 0; i < n; i++)
    printf (" %llu", (unsigned long long) w[i]);
  printf ("\n");
}

/* iops_max = 1000 over three servers: each alone gives 1000, 3000 in all;
 * exchanging, the sum stays within 5% of 1000 in every window after the
 * first.
 */
static void
test_limit (void)
{
  static struct world wd;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);

  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 1000);
  world_init (&wd, &c, false, false, &rq);
  run (&wd, &rq, false, 0, 5 * S, 0, 0);
  print_windows ("local buckets", wd.w, 5);
  for (int i = 1; i < 5; i++)
    CHECK_GE (wd.w[i], 2900);

  world_init (&wd, &c, true, false, &rq);
  run (&wd, &rq, false, 0, 20 * S, 0, 0);
  print_windows ("exchanged", wd.w, 20);
  for (int i = 1; i < 20; i++) {
    CHECK_GE (wd.w[i], 950);
    CHECK_LE (wd.w[i], 1050);
  }
  for (int i = 0; i < NSRV; i++) {
    CHECK_EQ (gqos_alive (&wd.srv[i].gg), (unsigned) NSRV - 1);
    CHECK_EQ (wd.srv[i].gg.servers, (unsigned) NSRV);
    CHECK (!wd.srv[i].gg.fallback);
    CHECK_GT (wd.srv[i].gg.remote.ios[QOS_READ], 0);
  }
}

/* Server 1's client wants 100/s, the two others all they can get: server
 * 1 gets its 100, the others split the rest, the sum is the limit.
 */
static void
test_demand (void)
{
  static struct world wd;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);

  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 1000);
  world_init (&wd, &c, true, false, &rq);
  wd.srv[1].demand = 100;
  run (&wd, &rq, false, 0, 20 * S, 0, 0);
  print_windows ("one server's client at 100/s", wd.w, 20);
  printf ("  served: %llu %llu %llu\n",
          (unsigned long long) wd.srv[0].served,
          (unsigned long long) wd.srv[1].served,
          (unsigned long long) wd.srv[2].served);
  for (int i = 1; i < 20; i++) {
    CHECK_GE (wd.w[i], 950);
    CHECK_LE (wd.w[i], 1050);
  }
  CHECK_GE (wd.srv[1].served, 1990);             /* its demand, met */
  CHECK_NEAR ((double) wd.srv[0].served, (double) wd.srv[2].served, 200);
}

/* Server 2 dies at 10 s: the two others keep serving, and the sum is back
 * within 5% of the limit in the first window after it, and after the
 * expiry they count one peer each.
 */
static void
test_kill (void)
{
  static struct world wd;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);

  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 1000);
  world_init (&wd, &c, true, false, &rq);
  run (&wd, &rq, false, 0, 20 * S, 10 * S + 500 * MS, 0);
  print_windows ("server 2 killed at 10.5 s", wd.w, 20);
  for (int i = 1; i < 20; i++) {
    if (i == 10)
      continue;                 /* the window it died in */
    CHECK_GE (wd.w[i], 950);
    CHECK_LE (wd.w[i], 1050);
  }
  for (int i = 0; i < 2; i++) {
    CHECK_EQ (gqos_alive (&wd.srv[i].gg), 1u);
    CHECK_EQ (wd.srv[i].gg.servers, 2u);
  }
}

/* The exchange fails everywhere at 10 s: for the expiry each server keeps
 * the share it had, then falls back to a third of the cap (the servers
 * alive at the last exchange that worked): the sum stays the limit.
 */
static void
test_fallback (void)
{
  static struct world wd;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);

  memset (&c, 0, sizeof c);
  set (&c, "iops_max", 1000);
  world_init (&wd, &c, true, false, &rq);
  run (&wd, &rq, false, 0, 20 * S, 0, 10 * S);
  print_windows ("exchange cut at 10 s", wd.w, 20);
  for (int i = 0; i < NSRV; i++) {
    CHECK (wd.srv[i].gg.fallback);
    CHECK_EQ (wd.srv[i].gg.fallbacks, 1u);
    CHECK_EQ (wd.srv[i].qg.share_ppm[QOS_IOPS_MAX], QOS_SHARE_WHOLE / 3);
  }
  for (int i = 1; i < 20; i++) {
    CHECK_GE (wd.w[i], 950);
    CHECK_LE (wd.w[i], 1050);
  }
}

/* iops_min = 300 with a greedy tenant on every server, which takes every
 * slot the reservation does not: alone each server gives 300 (900 in
 * all); exchanging, the sum is 300 in every window after the first.
 */
static void
test_reservation (void)
{
  static struct world wd;
  struct qos_conf c;
  struct rq rq = mkrq (RQ_READ, 4096);

  memset (&c, 0, sizeof c);
  set (&c, "iops_min", 300);
  world_init (&wd, &c, false, true, &rq);
  run (&wd, &rq, true, 0, 5 * S, 0, 0);
  print_windows ("reservation, local tags", wd.wres, 5);
  for (int i = 1; i < 5; i++)
    CHECK_GE (wd.wres[i], 880);

  world_init (&wd, &c, true, true, &rq);
  run (&wd, &rq, true, 0, 20 * S, 0, 0);
  print_windows ("reservation, exchanged", wd.wres, 20);
  for (int i = 1; i < 20; i++) {
    CHECK_GE (wd.wres[i], 285);        /* >= 95% of it */
    CHECK_LE (wd.wres[i], 330);
  }
  for (int i = 0; i < NSRV; i++)
    CHECK_GT (wd.srv[i].gg.remote.res_ios, 0);
}

/* Records, and peers that restart or come back. */
static void
test_records (void)
{
  struct gqos_group g;
  struct gqos_record r = { .seq = 7, .t_ns = 5 }, d;
  struct qos_counts charge;
  char buf[GQOS_RECORD_MAX];
  int n;

  r.c.ios[QOS_READ] = 10;
  r.c.ios[QOS_WRITE] = 20;
  r.c.bytes[QOS_READ] = 40960;
  r.c.bytes[QOS_WRITE] = 81920;
  r.c.res_ios = 3;
  r.c.res_bytes = 12288;
  r.c.held = 4;
  n = gqos_encode (&r, buf, sizeof buf);
  CHECK_GT (n, 0);
  CHECK_STREQ (buf, "1 7 5 10 20 40960 81920 3 12288 4");
  CHECK_EQ (gqos_decode (buf, n, &d), 0);
  CHECK_EQ (memcmp (&r, &d, sizeof r), 0);
  CHECK_EQ (gqos_decode ("1 7 10", 6, &d), -EINVAL);
  CHECK_EQ (gqos_decode ("2 7 5 10 20 40960 81920 3 12288 4", 33, &d),
            -EINVAL);
  CHECK_EQ (gqos_decode ("1 7 5 10 20 40960 81920 3 12288 4 9", 35, &d),
            -EINVAL);
  CHECK_EQ (gqos_decode ("1 7 5 10 20 40960 81920 3 12288 x", 33, &d),
            -EINVAL);
  CHECK_EQ (gqos_decode ("1 7 5 10 20 40960 81920 3 12288 99999999999999"
                         "999999", 52, &d), -EINVAL);
  CHECK_EQ (gqos_encode (&r, buf, 8), -ENOSPC);

  gqos_group_init (&g, EXPIRY);
  memset (&charge, 0, sizeof charge);
  r.t_ns = 0;
  gqos_peer_seen (&g, "a", &r, 1 * S, &charge);           /* first: taken */
  CHECK_EQ (charge.ios[QOS_READ], 0);
  r.seq++, r.t_ns += PERIOD, r.c.ios[QOS_READ] += 5;
  gqos_peer_seen (&g, "a", &r, 1 * S + PERIOD, &charge);
  CHECK_EQ (charge.ios[QOS_READ], 5);
  CHECK_EQ (g.peer[0].interval, PERIOD);
  gqos_peer_seen (&g, "a", &r, 1 * S + 2 * PERIOD, &charge);
  CHECK_EQ (charge.ios[QOS_READ], 5);                     /* same seq */
  r.seq = 1, r.t_ns = 0, r.c.ios[QOS_READ] = 2;           /* restarted */
  gqos_peer_seen (&g, "a", &r, 1 * S + 3 * PERIOD, &charge);
  CHECK_EQ (charge.ios[QOS_READ], 5);
  r.seq = 9, r.t_ns = 9 * S, r.c.ios[QOS_READ] = 100000;  /* back late */
  gqos_peer_seen (&g, "a", &r, 10 * S, &charge);
  CHECK_EQ (charge.ios[QOS_READ], 5);
  CHECK_EQ (gqos_alive (&g), 1u);
  CHECK (!gqos_exchange_done (&g, true, 10 * S));
  CHECK (!gqos_exchange_done (&g, true, 13 * S));         /* a gone */
  CHECK_EQ (gqos_alive (&g), 0u);
  CHECK_EQ (g.servers, 1u);
}

static void
test_settings (void)
{
  struct gqos_conf c;
  char why[160];
  int k;

  memset (&c, 0, sizeof c);
  CHECK_EQ (gqos_key_lookup ("gqos_periods"), -1);
  k = gqos_key_lookup ("gqos_period");
  CHECK_EQ (k, GQOS_K_PERIOD);
  CHECK_EQ (gqos_conf_set (&c, k, "1ms", why, sizeof why), -EINVAL);
  printf ("  gqos_period=1ms: %s\n", why);
  CHECK_EQ (gqos_conf_set (&c, k, "1s", why, sizeof why), 0);
  CHECK_EQ (gqos_conf_finish (&c, why, sizeof why), -EINVAL);
  printf ("  %s\n", why);
  CHECK_EQ (gqos_conf_set (&c, k, "100ms", why, sizeof why), 0);
  k = gqos_key_lookup ("gateway");
  CHECK_EQ (gqos_conf_set (&c, k, "a/b", why, sizeof why), -EINVAL);
  CHECK_EQ (gqos_conf_set (&c, k, "gw-1", why, sizeof why), 0);
  CHECK_EQ (gqos_conf_finish (&c, why, sizeof why), 0);
  CHECK_STREQ (c.text[GQOS_K_POOL], "cfq");
  CHECK_EQ (c.ns[GQOS_K_EXPIRY], 2 * S);
  CHECK_NULL (c.text[GQOS_K_CONF]);
  gqos_conf_free (&c);
}

int
main (void)
{
  test_records ();
  test_settings ();
  test_limit ();
  test_demand ();
  test_kill ();
  test_fallback ();
  test_reservation ();
  check_done ("test-gqos");
  return 0;
}
