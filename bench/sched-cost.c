/* sched-cost.c: CPU cost of a policy per request (insert + dispatch +
 * complete), FIFO and CFQ side by side, on a null device.
 *
 * N connections spread over G groups each keep D requests queued; the
 * null device takes up to 32 requests and completes them in order one
 * virtual microsecond later.  Only the policy calls are timed (the
 * benchmark reads the clock; the policy never does).  Prints the median of
 * 5 runs per configuration and the CFQ/FIFO ratio.
 *
 * Usage: bench/sched-cost [REQUESTS]   (default 1000000 per run)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sched.h"

#define DEV_DEPTH 32

static double
now_ns (void)
{
  struct timespec ts;
  clock_gettime (CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;
  return x < y ? -1 : x > y;
}

static double
run (const struct sched_ops *ops, unsigned nq, unsigned ng, unsigned total)
{
  struct sched *s = sched_create (ops);
  struct sched_group *g[64];
  struct sched_queue **q = calloc (nq, sizeof *q);
  unsigned per = 4, nrq = nq * per;
  struct rq *rqs = calloc (nrq, sizeof *rqs);
  struct rq *inflight[DEV_DEPTH];
  unsigned nin = 0, done = 0, issued = 0;
  uint64_t vt = 0, seed = 1, *pos = calloc (nq, sizeof *pos);
  double t0, t1;

  for (unsigned i = 0; i < ng; i++)
    g[i] = sched_group_new (s, "g", 100 + 100 * (i % 10));
  for (unsigned i = 0; i < nq; i++) {
    q[i] = sched_queue_new (s, g[i % ng], SCHED_CLASS_BE, i % 8);
    pos[i] = (uint64_t) i << 34;
  }
  /* Slice idling would make the null device wait on a virtual clock;
   * measure the dispatch machinery, not idle windows.
   */
  sched_set (s, "slice_idle", 0);
  sched_set (s, "group_idle", 0);

  t0 = now_ns ();
  for (unsigned i = 0; i < nrq; i++) {
    struct rq *r = &rqs[i];
    unsigned c = i % nq;
    r->q = q[c];
    r->len = 4096;
    r->flags = (i % 4) ? RQ_SYNC : 0;
    r->off = pos[c];
    pos[c] += 4096;
    sched_insert (s, r, vt);
    issued++;
  }
  while (done < total) {
    uint64_t next;
    struct rq *r;

    while (nin < DEV_DEPTH && (r = sched_dispatch (s, vt, &next)) != NULL)
      inflight[nin++] = r;
    vt += 1000;
    if (nin == 0) {
      if (next != SCHED_NEVER && next > vt)
        vt = next;
      continue;
    }
    /* Complete everything in flight, re-issue on the same connection. */
    for (unsigned k = 0; k < nin; k++) {
      struct rq *d = inflight[k];
      unsigned c = (unsigned) ((d - rqs) % nq);
      sched_completed (s, d, vt);
      done++;
      if (issued < total) {
        memset (d, 0, sizeof *d);
        d->q = q[c];
        d->len = 4096;
        d->flags = (seed = seed * 6364136223846793005ULL + 1) >> 63
          ? RQ_SYNC : 0;
        d->off = pos[c];
        pos[c] += 4096;
        sched_insert (s, d, vt);
        issued++;
      }
    }
    nin = 0;
    if (issued >= total && !sched_has_work (s))
      break;
  }
  t1 = now_ns ();
  for (unsigned i = 0; i < nq; i++)
    sched_queue_free (s, q[i]);
  sched_destroy (s);
  free (q);
  free (rqs);
  free (pos);
  return (t1 - t0) / done;
}

int
main (int argc, char **argv)
{
  unsigned total = argc > 1 ? (unsigned) atoi (argv[1]) : 1000000;
  static const unsigned cfg[][2] = { { 8, 1 }, { 64, 8 }, { 512, 32 } };

  printf ("%-12s %10s %10s %8s\n", "queues/groups", "fifo ns/rq", "cfq ns/rq",
          "ratio");
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
    double f[5], q[5];
    for (int i = 0; i < 5; i++) {
      f[i] = run (&fifo_ops, cfg[c][0], cfg[c][1], total);
      q[i] = run (&cfq_ops, cfg[c][0], cfg[c][1], total);
    }
    qsort (f, 5, sizeof f[0], cmp_double);
    qsort (q, 5, sizeof q[0], cmp_double);
    printf ("%5u/%-6u %10.1f %10.1f %8.2f\n", cfg[c][0], cfg[c][1], f[2],
            q[2], q[2] / f[2]);
  }
  return 0;
}
