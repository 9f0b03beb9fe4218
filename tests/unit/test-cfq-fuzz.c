/* test-cfq-fuzz.c: CFQ's invariants over thousands of random runs.
 *
 * Each seed builds a random world: 1-8 groups, up to 64 connections of
 * random class and level, sequential, random and interleaved (cooperating)
 * streams, sync and async requests, a device stand-in that completes each
 * request a fixed time after dispatch with a random queue depth, tunables
 * changed mid-run, connections freed while their requests are queued or in
 * flight, and one dispatched request in eight held back for up to 20 ms
 * before it goes to the device (deactivate, then activate: the plugin's
 * request waiting for a buffer).  Virtual time only moves to the next
 * event: an arrival, a completion, the end of a hold or the deadline
 * dispatch() returned.  In a quarter of the seeds, queued requests are
 * also taken back (sched_cancel, as when a client goes away) and groups
 * get caps in requests; those draws come from a sequence of their own.
 * In half of them groups have the start-up boost and latency targets of
 * 1-20 ms, set and changed mid-run (another sequence of their own): the
 * windows close, the turns are cut, and boosted connections are freed
 * with their group's drain pending.
 *
 * Checked: every request is dispatched exactly once and completed exactly
 * once, or taken back and never dispatched; dispatch() never returns a deadline in the past while work is
 * pending, and never leaves work pending with nothing in flight and no
 * deadline (that would hang the engine); once arrivals stop, everything is
 * dispatched within a bound of virtual time; the counters CFQ keeps agree
 * with ours.  Memory: run it under valgrind by hand
 *   valgrind --leak-check=full tests/unit/test-cfq-fuzz 200
 *
 * Usage: test-cfq-fuzz [SEEDS [FIRST]]   (default 2000 seeds)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "cfq.h"
#include "latency.h"
#include "qos.h"
#include "sched.h"

#define MAXQ 64
#define MAXRQ 600
#define MS NSEC_PER_MSEC

/* The next value of the xorshift sequence in *X. */
static uint64_t
xstep (uint64_t *x)
{
  *x ^= *x << 13;
  *x ^= *x >> 7;
  *x ^= *x << 17;
  return *x;
}

/* A draw below N from the sequence in *X. */
static unsigned
xrnd (uint64_t *x, unsigned n)
{
  return (unsigned) (xstep (x) % n);
}

static uint64_t rng;
static unsigned rnd (unsigned n) { return xrnd (&rng, n); }

/* Cancels and caps: their own sequence; latency targets and boosts:
 * another.
 */
static uint64_t crng, lrng;
static unsigned crnd (unsigned n) { return xrnd (&crng, n); }
static unsigned lrnd (unsigned n) { return xrnd (&lrng, n); }

/* A random latency target (none in half) with the boost on or off. */
static void
set_random_latency (struct sched *s, struct sched_group *g)
{
  struct lat_conf lc;

  lat_conf_init (&lc);
  lc.boost = lrnd (4) != 0;
  if (lrnd (2)) {
    lc.target = (1 + lrnd (20)) * MS;
    lc.percentile = 99;
  }
  CHECK_EQ (sched_group_set_latency (s, g, &lc), 0);
}

struct conn {
  struct sched_queue *q;
  bool alive;
  int pattern;                  /* 0 seq, 1 random, 2 shared stream */
  uint64_t pos;                 /* next byte offset (seq) */
  bool sync_only;
};

struct req {
  struct rq rq;
  int state;                    /* 0 free, 1 queued, 2 in flight, 3 done,
                                   4 taken back, 5 held back */
  uint64_t done_at;             /* ns: in flight: its completion; held:
                                   when it goes to the device */
  int conn;
};

static struct req reqs[MAXRQ];
static struct conn conns[MAXQ];
static uint64_t shared_pos[4];

static void
set_random_tunable (struct sched *s)
{
  static const struct { const char *k; uint64_t v[4]; } opts[] = {
    { "slice_idle", { 0, 8 * MS, 2 * MS, 8 * MS } },
    { "group_idle", { 0, 8 * MS, 1 * MS, 8 * MS } },
    { "low_latency", { 0, 1, 1, 1 } },
    { "mode", { 0, 1, 2, 2 } },
    { "rotational", { 0, 1, 1, 1 } },
    { "quantum", { 1, 4, 8, 32 } },
    { "slice_sync", { 10 * MS, 100 * MS, 100 * MS, 200 * MS } },
    { "slice_async", { 10 * MS, 40 * MS, 40 * MS, 80 * MS } },
    { "slice_async_rq", { 1, 2, 2, 8 } },
    { "fifo_expire_sync", { 1 * MS, 125 * MS, 125 * MS, 500 * MS } },
    { "fifo_expire_async", { 1 * MS, 250 * MS, 250 * MS, 1000 * MS } },
    { "back_seek_max", { 0, 16384, 16384, 1 << 20 } },
    { "back_seek_penalty", { 1, 2, 2, 10 } },
    { "target_latency", { 50 * MS, 300 * MS, 300 * MS, 600 * MS } },
    { "hw_tag", { 0, 1, 2, 2 } },
    { "merge", { 0, 1, 1, 1 } },
    { "group_lag", { 0, 1, 4, 64 } },
  };
  unsigned i = rnd (sizeof opts / sizeof opts[0]);
  uint64_t v = opts[i].v[rnd (4)], back;

  CHECK_EQ (sched_set (s, opts[i].k, v), 0);
  CHECK_EQ (sched_get (s, opts[i].k, &back), 0);
  CHECK_EQ (back, v);
}

static int
run_seed (uint64_t seed)
{
  struct sched *s;
  struct sched_group *groups[8];
  unsigned ngroups, nconns, nreqs, depth, in_flight = 0, queued = 0;
  uint64_t now = 0, svc, next_arrival, deadline = SCHED_NEVER;
  uint64_t arrivals_end, last_dispatch_ok;
  unsigned made = 0, done = 0, cancelled = 0;
  struct cfq_stats st;
  bool cancels, lat;

  rng = seed * 2654435761ULL + 0x9E3779B97F4A7C15ULL;
  if (!rng)
    rng = 1;
  crng = seed * 0x2545F4914F6CDD1DULL + 1;
  cancels = crnd (4) == 0;
  lrng = seed * 0xD1B54A32D192ED03ULL + 1;
  lat = lrnd (2) == 0;
  memset (reqs, 0, sizeof reqs);
  memset (conns, 0, sizeof conns);
  memset (shared_pos, 0, sizeof shared_pos);

  s = sched_create (&cfq_ops);
  CHECK (s);
  for (int i = 0; i < 3; i++)
    if (rnd (2))
      set_random_tunable (s);
  ngroups = 1 + rnd (8);
  for (unsigned i = 0; i < ngroups; i++) {
    groups[i] = sched_group_new (s, "g", 100 + rnd (901));
    CHECK (groups[i]);
    if (lat)
      set_random_latency (s, groups[i]);
  }
  nconns = 1 + rnd (rnd (2) ? 8 : MAXQ);
  for (unsigned i = 0; i < nconns; i++) {
    unsigned cls = rnd (10) < 1 ? SCHED_CLASS_RT
      : rnd (10) < 1 ? SCHED_CLASS_IDLE : SCHED_CLASS_BE;
    conns[i].q = sched_queue_new (s, rnd (5) ? groups[rnd (ngroups)] : NULL,
                                  cls, rnd (SCHED_LEVELS));
    CHECK (conns[i].q);
    conns[i].alive = true;
    conns[i].pattern = rnd (3);
    conns[i].pos = (uint64_t) rnd (1 << 20) * 4096;
    conns[i].sync_only = rnd (2);
  }
  nreqs = 50 + rnd (MAXRQ - 50);
  depth = 1 + rnd (rnd (2) ? 4 : 32);
  svc = (50 + rnd (5000)) * NSEC_PER_USEC;
  next_arrival = rnd (1000) * NSEC_PER_USEC;
  arrivals_end = SCHED_NEVER;
  last_dispatch_ok = 0;

  for (unsigned iter = 0;; iter++) {
    uint64_t t = SCHED_NEVER;
    bool progressed;
    struct rq *r;

    CHECK_LT (iter, 5000000);
    /* Next event. */
    if (made < nreqs)
      t = next_arrival;
    for (unsigned i = 0; i < made; i++)
      if ((reqs[i].state == 2 || reqs[i].state == 5) && reqs[i].done_at < t)
        t = reqs[i].done_at;
    if (deadline < t)
      t = deadline;
    if (t == SCHED_NEVER) {
      /* Nothing will ever happen again: must be finished. */
      CHECK_EQ (done + cancelled, made);
      CHECK_EQ (made, nreqs);
      break;
    }
    CHECK_GE (t, now);
    now = t;

    /* Completions due. */
    for (unsigned i = 0; i < made; i++)
      if (reqs[i].state == 2 && reqs[i].done_at <= now) {
        reqs[i].state = 3;
        in_flight--;
        done++;
        sched_completed (s, &reqs[i].rq, now);
      }

    /* Holds that end: to the device. */
    for (unsigned i = 0; i < made; i++)
      if (reqs[i].state == 5 && reqs[i].done_at <= now) {
        reqs[i].state = 2;
        reqs[i].done_at = now + svc;
        in_flight++;
        sched_activate (s, &reqs[i].rq, now);
      }

    /* Arrivals due. */
    while (made < nreqs && next_arrival <= now) {
      struct req *q = &reqs[made];
      int c = rnd (nconns), tries = 0;
      while (!conns[c].alive && tries++ < 64)
        c = rnd (nconns);
      if (!conns[c].alive) {
        /* Everyone left: open a new connection. */
        conns[c].q = sched_queue_new (s, groups[rnd (ngroups)],
                                      SCHED_CLASS_BE, rnd (8));
        CHECK (conns[c].q);
        conns[c].alive = true;
      }
      q->conn = c;
      q->rq.len = 4096 << rnd (6);
      q->rq.op = rnd (3) ? RQ_READ : RQ_WRITE;
      q->rq.flags = (q->rq.op == RQ_READ || conns[c].sync_only || rnd (3) == 0)
        ? RQ_SYNC : 0;
      if (rnd (20) == 0)
        q->rq.flags |= RQ_META;
      switch (conns[c].pattern) {
      case 0:
        q->rq.off = conns[c].pos;
        conns[c].pos += q->rq.len;
        break;
      case 1:
        q->rq.off = (uint64_t) rnd (1 << 24) * 4096;
        break;
      default:
        q->rq.off = (1ULL << 36) * (c % 4) + shared_pos[c % 4];
        shared_pos[c % 4] += q->rq.len;
        break;
      }
      q->rq.q = rnd (50) ? conns[c].q : NULL;
      q->state = 1;
      queued++;
      made++;
      sched_insert (s, &q->rq, now);
      CHECK_EQ (q->rq.t_insert, now);
      CHECK_NOTNULL (q->rq.sq);
      /* Bursty arrivals: sometimes several at once. */
      next_arrival = now + (rnd (3) ? rnd (2000) : rnd (30000)) * NSEC_PER_USEC;
      if (made == nreqs)
        arrivals_end = now;

      /* Random world changes. */
      if (rnd (40) == 0)
        set_random_tunable (s);
      if (rnd (60) == 0) {
        int k = rnd (nconns);
        if (conns[k].alive) {
          sched_queue_free (s, conns[k].q);
          conns[k].alive = false;
        }
      }
      if (lat && lrnd (30) == 0)
        set_random_latency (s, groups[lrnd (ngroups)]);
      if (rnd (80) == 0)
        CHECK_EQ (sched_group_set_weight (s, groups[rnd (ngroups)],
                                          100 + rnd (901)), 0);

      /* Taken back: a queued request, any (its client went away). */
      if (cancels && queued && crnd (6) == 0) {
        unsigned k = crnd (queued);
        for (unsigned i = 0; i < made; i++)
          if (reqs[i].state == 1 && k-- == 0) {
            reqs[i].state = 4;
            queued--;
            cancelled++;
            sched_cancel (s, &reqs[i].rq, now);
            break;
          }
      }
      /* A cap in requests on a group, or none. */
      if (cancels && crnd (50) == 0) {
        struct qos_conf qc;
        memset (&qc, 0, sizeof qc);
        if (crnd (3))
          qc.cap[crnd (3)].rate = 20 + crnd (2000);
        CHECK_EQ (sched_group_set_qos (s, groups[crnd (ngroups)], &qc), 0);
      }
    }

    /* Dispatch while the device has room. */
    progressed = false;
    for (;;) {
      uint64_t next = 0;
      if (in_flight >= depth) {
        /* Device full: CFQ is asked again at the next completion. */
        deadline = SCHED_NEVER;
        break;
      }
      r = sched_dispatch (s, now, &next);
      if (r) {
        struct req *q = container_of (r, struct req, rq);
        CHECK_EQ (q->state, 1);
        CHECK_EQ (r->t_dispatch, now);
        queued--;
        progressed = true;
        if (rnd (8) == 0) {
          /* Held back: not at the device, nothing may wait for it. */
          q->state = 5;
          q->done_at = now + rnd (20) * MS;
          sched_deactivate (s, r, now);
          continue;
        }
        q->state = 2;
        q->done_at = now + svc;
        in_flight++;
        last_dispatch_ok = now;
        continue;
      }
      /* No request: the deadline must be in the future, and if work is
       * waiting with nothing in flight there must be one.
       */
      CHECK_EQ (sched_has_work (s), (queued > 0));
      if (queued > 0) {
        CHECK (next == SCHED_NEVER || next > now);
        if (in_flight == 0)
          CHECK_NE (next, SCHED_NEVER);
      }
      deadline = next;
      break;
    }
    (void) progressed;

    /* Liveness once arrivals stopped: bounded virtual time. */
    if (arrivals_end != SCHED_NEVER && queued > 0)
      CHECK_LT (now - arrivals_end, 120 * NSEC_PER_SEC);
    (void) last_dispatch_ok;

    cfq_get_stats (s, &st);
    CHECK_EQ (st.rq_queued, queued);
    CHECK_EQ (st.rq_in_driver, in_flight);
  }

  for (unsigned i = 0; i < nreqs; i++)
    CHECK (reqs[i].state == 3 || reqs[i].state == 4);
  cfq_get_stats (s, &st);
  CHECK_EQ (st.inserted, nreqs);
  CHECK_EQ (st.dispatched, nreqs - cancelled);
  CHECK_EQ (st.completed, nreqs - cancelled);
  CHECK (!sched_has_work (s));
  /* Free what is left in a random order; destroy frees the rest. */
  for (unsigned i = 0; i < nconns; i++)
    if (conns[i].alive && rnd (2)) {
      sched_queue_free (s, conns[i].q);
      conns[i].alive = false;
    }
  if (getenv ("CFQ_FUZZ_VERBOSE"))
    printf ("seed %llu: groups %u conns %u rqs %u (%u taken back) depth %u "
            "svc %lluus end %.3fs slices %llu idle %llu/%llu preempt %llu merges %llu splits %llu "
            "fifo %llu hw_tag %d\n", (unsigned long long) seed, ngroups,
            nconns, nreqs, cancelled, depth, (unsigned long long) (svc / 1000),
            now / 1e9, (unsigned long long) st.slices,
            (unsigned long long) st.idle_arms,
            (unsigned long long) st.group_idle_arms,
            (unsigned long long) st.preemptions,
            (unsigned long long) st.merges, (unsigned long long) st.splits,
            (unsigned long long) st.fifo_expired, st.hw_tag);
  sched_destroy (s);
  return 0;
}

int
main (int argc, char **argv)
{
  unsigned seeds = argc > 1 ? (unsigned) atoi (argv[1]) : 2000;
  unsigned first = argc > 2 ? (unsigned) atoi (argv[2]) : 1;

  for (unsigned i = 0; i < seeds; i++) {
    uint64_t seed = first + i;
    run_seed (seed);
  }
  printf ("cfq fuzz: %u seeds ok\n", seeds);
  check_done ("test-cfq-fuzz");
  return 0;
}
