/* corebench: the CPU cost of a scheduling policy alone, per request.
 *
 * What it measures: insert + dispatch + complete, through include/sched.h,
 * with no device, no threads and no I/O: the dispatcher's price for having
 * a policy at all.  Queues are spread over 8 groups (weights 100..800);
 * each queue keeps 4 requests queued (sequential offsets, so a sorting
 * policy has something to sort); the "device" is a FIFO of depth 32 that
 * completes its oldest request every virtual microsecond.  When the policy
 * idles (returns no request and a deadline) the virtual clock jumps there,
 * which costs no CPU: only the policy's own work is timed.
 *
 * Each configuration runs RUNS times; the median ns/request is reported,
 * next to the growth relative to one queue (a policy with O(log n)
 * service trees should grow slowly from 64 to 1024 queues).
 *
 * Usage: bench/corebench [-n REQUESTS] [-r RUNS] [POLICY...]
 * (default: every built-in policy: fifo, cfq with defaults and cfq with
 * slice_idle=0, i.e. IOPS mode).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"

#define DEPTH 32                /* requests at the fake device */
#define PER_QUEUE 4             /* requests each queue keeps queued */
#define NGROUPS 8
#define MAX_RUNS 31

struct bq {                     /* one benchmark queue */
  struct sched_queue *q;
  uint64_t next_off;            /* bytes: next sequential offset */
};

struct brq {
  struct rq rq;
  struct bq *bq;
};

static uint64_t
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

static void
fill (struct brq *b, uint64_t now, struct sched *s)
{
  b->rq.off = b->bq->next_off;
  b->rq.len = 4096;
  b->rq.op = RQ_READ;
  b->rq.flags = RQ_SYNC;
  b->rq.q = b->bq->q;
  b->rq.priv = b;
  b->bq->next_off += 4096;
  sched_insert (s, &b->rq, now);
}

/* One run: returns ns of CPU per request, or -1 on a policy error. */

/* The device stand-in: a ring of DEPTH slots completed in dispatch order.
 * Dispatch into it until it is full or the policy has nothing to give;
 * returns the new number in flight, *next the policy's deadline.
 */
static unsigned
dev_fill (struct brq **ring, unsigned head, unsigned inflight,
          struct sched *s, uint64_t now, uint64_t *next)
{
  while (inflight < DEPTH) {
    struct rq *rq = sched_dispatch (s, now, next);
    if (!rq)
      break;
    ring[(head + inflight++) % DEPTH] = rq->priv;
  }
  return inflight;
}

static double
run_once (const struct sched_ops *ops, const char *tunable, uint64_t tval,
          unsigned nq, unsigned long nreq)
{
  struct sched *s = sched_create (ops);
  struct sched_group *g[NGROUPS];
  struct bq *bqs = calloc (nq, sizeof *bqs);
  struct brq *brqs = calloc ((size_t) nq * PER_QUEUE, sizeof *brqs);
  struct brq *ring[DEPTH];
  unsigned head = 0, inflight = 0;
  unsigned long done = 0;
  uint64_t now = 0, t0, t1;
  unsigned ng = nq < NGROUPS ? nq : NGROUPS;

  if (!s || !bqs || !brqs) {
    fprintf (stderr, "corebench: out of memory\n");
    exit (1);
  }
  if (tunable && sched_set (s, tunable, tval) < 0) {
    fprintf (stderr, "corebench: %s: no tunable %s\n", ops->name, tunable);
    exit (1);
  }
  for (unsigned i = 0; i < ng; i++) {
    char name[16];
    snprintf (name, sizeof name, "g%u", i);
    g[i] = sched_group_new (s, name, 100 * (i + 1));
    if (!g[i]) {
      fprintf (stderr, "corebench: group_new failed\n");
      exit (1);
    }
  }
  for (unsigned i = 0; i < nq; i++) {
    bqs[i].q = sched_queue_new (s, g[i % ng], SCHED_CLASS_BE, 4);
    bqs[i].next_off = (uint64_t) i << 32;
    if (!bqs[i].q) {
      fprintf (stderr, "corebench: queue_new failed\n");
      exit (1);
    }
  }

  t0 = mono_ns ();
  for (unsigned i = 0; i < nq * PER_QUEUE; i++) {
    brqs[i].bq = &bqs[i / PER_QUEUE];
    fill (&brqs[i], now, s);
  }
  while (done < nreq) {
    uint64_t next = SCHED_NEVER;
    struct brq *b;

    inflight = dev_fill (ring, head, inflight, s, now, &next);
    if (inflight == 0) {
      if (next == SCHED_NEVER) {
        fprintf (stderr, "corebench: %s stalled with work queued\n",
                 ops->name);
        return -1;
      }
      now = next > now ? next : now + 1;
      continue;
    }
    b = ring[head];
    head = (head + 1) % DEPTH;
    inflight--;
    now += NSEC_PER_USEC;
    sched_completed (s, &b->rq, now);
    done++;
    fill (b, now, s);
  }
  t1 = mono_ns ();

  /* Drain, so destroy sees an idle scheduler. */
  while (inflight || sched_has_work (s)) {
    uint64_t next = SCHED_NEVER;
    inflight = dev_fill (ring, head, inflight, s, now, &next);
    if (inflight == 0) {
      if (next == SCHED_NEVER)
        break;
      now = next > now ? next : now + 1;
      continue;
    }
    now += NSEC_PER_USEC;
    sched_completed (s, &ring[head]->rq, now);
    head = (head + 1) % DEPTH;
    inflight--;
  }
  for (unsigned i = 0; i < nq; i++)
    sched_queue_free (s, bqs[i].q);
  sched_destroy (s);
  free (bqs);
  free (brqs);
  return (double) (t1 - t0) / (double) nreq;
}

static int
cmp_d (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

struct config {
  const char *policy;
  const char *label;
  const char *tunable;          /* NULL: defaults */
  uint64_t val;
};

int
main (int argc, char **argv)
{
  static const unsigned nqs[] = { 1, 64, 1024 };
  struct config cfgs[16];
  unsigned ncfg = 0, runs = 5;
  unsigned long nreq = 200000;
  int c;

  while ((c = getopt (argc, argv, "n:r:h")) != -1) {
    switch (c) {
    case 'n': nreq = strtoul (optarg, NULL, 10); break;
    case 'r': runs = (unsigned) strtoul (optarg, NULL, 10); break;
    default:
      fprintf (stderr, "usage: %s [-n REQUESTS] [-r RUNS] [POLICY...]\n",
               argv[0]);
      return c == 'h' ? 0 : 1;
    }
  }
  if (runs < 1 || runs > MAX_RUNS || nreq < 1) {
    fprintf (stderr, "corebench: -r 1..%d, -n >= 1\n", MAX_RUNS);
    return 1;
  }
  if (optind < argc) {
    for (int i = optind; i < argc && ncfg < 16; i++) {
      if (!sched_lookup (argv[i])) {
        fprintf (stderr, "corebench: unknown policy '%s'\n", argv[i]);
        return 1;
      }
      cfgs[ncfg++] = (struct config) { argv[i], argv[i], NULL, 0 };
    }
  }
  else {
    cfgs[ncfg++] = (struct config) { "fifo", "fifo", NULL, 0 };
    if (sched_lookup ("cfq")) {
      cfgs[ncfg++] = (struct config) { "cfq", "cfq", NULL, 0 };
      cfgs[ncfg++] = (struct config) { "cfq", "cfq slice_idle=0",
                                       "slice_idle", 0 };
    }
    else
      printf ("(cfq not built: fifo only)\n");
  }

  printf ("corebench: policy CPU cost per request (insert + dispatch + "
          "complete),\n  median of %u runs of %lu requests; %u queued per "
          "queue, %d groups, device depth %d\n\n",
          runs, nreq, PER_QUEUE, NGROUPS, DEPTH);
  printf ("%-20s %8s %12s %10s\n", "policy", "queues", "ns/request",
          "vs 1 queue");
  for (unsigned k = 0; k < ncfg; k++) {
    const struct sched_ops *ops = sched_lookup (cfgs[k].policy);
    double base = 0;

    for (unsigned i = 0; i < sizeof nqs / sizeof nqs[0]; i++) {
      double v[MAX_RUNS], med;

      for (unsigned r = 0; r < runs; r++) {
        v[r] = run_once (ops, cfgs[k].tunable, cfgs[k].val, nqs[i], nreq);
        if (v[r] < 0)
          return 2;
      }
      qsort (v, runs, sizeof v[0], cmp_d);
      med = v[runs / 2];
      if (i == 0)
        base = med;
      printf ("%-20s %8u %12.1f %9.2fx\n", cfgs[k].label, nqs[i], med,
              base > 0 ? med / base : 0);
      fflush (stdout);
    }
  }
  return 0;
}
