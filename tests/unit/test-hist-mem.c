/* test-hist-mem.c: the statistics of an idle connection are small, and
 * the histograms keep their accuracy promise while they grow by rows.
 *
 *  - an empty histogram allocates nothing; an idle connection's iostat
 *    (three histograms) is under 2 KiB, far below the 16 KiB budget for
 *    all of an idle connection's memory (the dense histograms were 58 KiB
 *    each);
 *  - latencies between 10 us and 100 ms take at most 15 rows (one per
 *    power of two), each 1 KiB: under 16 KiB per histogram;
 *  - every quantile is the upper edge of the exact value's bucket: never
 *    below it, never more than 1/128 above it, checked against a sorted
 *    copy of the values for several distributions;
 *  - hist_quantiles gives what hist_quantile gives, one by one;
 *  - merging, freeing and resetting keep the counts and give rows back.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hist.h"
#include "iostat.h"

#define N 200000

static int
cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

static uint64_t seed = 42;

static uint64_t
rnd (void)
{
  seed ^= seed << 13;
  seed ^= seed >> 7;
  seed ^= seed << 17;
  return seed;
}

/* Quantile q of the sorted v[0..n): the smallest value with at least
 * ceil(q * n) values at or below it.
 */
static uint64_t
exact (const uint64_t *v, size_t n, double q)
{
  size_t r = (size_t) (q * (double) n);

  if ((double) r < q * (double) n)
    r++;
  return v[r ? r - 1 : 0];
}

static void
check_accuracy (uint64_t *v, size_t n)
{
  static const double qs[] = { 0.0, 0.001, 0.1, 0.5, 0.9, 0.99, 0.999,
                               0.9999, 1.0 };
  const unsigned nq = sizeof qs / sizeof qs[0];
  uint64_t got[sizeof qs / sizeof qs[0]];
  struct hist h, a, b;

  hist_init (&h);
  hist_init (&a);
  hist_init (&b);
  for (size_t i = 0; i < n; i++) {
    hist_add (&h, v[i]);
    hist_add (i % 3 ? &a : &b, v[i]);
  }
  hist_merge (&a, &b);
  qsort (v, n, sizeof v[0], cmp);
  CHECK_EQ (h.count, (uint64_t) n);
  CHECK_EQ (h.lost, 0);
  CHECK_EQ (h.max, v[n - 1]);
  CHECK_EQ (a.count, h.count);
  CHECK_EQ (a.sum, h.sum);
  CHECK_EQ (a.max, h.max);
  hist_quantiles (&h, qs, nq, got);
  for (unsigned i = 0; i < nq; i++) {
    uint64_t x = exact (v, n, qs[i]);

    CHECK_EQ (got[i], hist_quantile (&h, qs[i]));
    CHECK_EQ (got[i], hist_quantile (&a, qs[i]));
    CHECK_GE (got[i], x);
    CHECK_LE (got[i] - x, x / HIST_SUB);
  }
  hist_free (&h);
  hist_free (&a);
  hist_free (&b);
  CHECK_EQ (hist_mem (&h), 0);
  CHECK_EQ (h.count, 0);
  CHECK_EQ (hist_quantile (&h, 0.5), 0);
}

int
main (void)
{
  static uint64_t v[N];
  struct hist h;
  struct iostat st;
  struct rq rq = { .op = RQ_READ, .len = 4096 };

  /* Empty: nothing allocated, and small. */
  hist_init (&h);
  CHECK_EQ (hist_mem (&h), 0);
  CHECK_LE (sizeof h, 512);
  CHECK_EQ (hist_quantile (&h, 0.99), 0);
  CHECK_EQ (hist_quantile (&h, 1.0), 0);
  iostat_init (&st, 0);
  CHECK_EQ (iostat_mem (&st), 0);
  CHECK_LE (sizeof st, 2048);
  printf ("idle: struct hist %zu bytes, struct iostat %zu bytes\n",
          sizeof h, sizeof st);

  /* Latencies of 10 us .. 100 ms: one row per power of two. */
  for (size_t i = 0; i < N; i++) {
    v[i] = 10000 + rnd () % 100000000;
    hist_add (&h, v[i]);
  }
  CHECK_LE (hist_mem (&h), 15 * (HIST_SUB + 1) * sizeof (uint64_t));
  printf ("10 us .. 100 ms: %llu bytes of rows\n",
          (unsigned long long) hist_mem (&h));
  hist_free (&h);
  CHECK_EQ (hist_mem (&h), 0);

  /* Accuracy: uniform, log-uniform (every row), small exact values,
   * one value, and the extremes of the range.
   */
  for (size_t i = 0; i < N; i++)
    v[i] = 1000 + rnd () % 10000000;
  check_accuracy (v, N);
  for (size_t i = 0; i < N; i++)
    v[i] = rnd () >> (rnd () % 64);
  check_accuracy (v, N);
  for (size_t i = 0; i < N; i++)
    v[i] = rnd () % 300;
  check_accuracy (v, N);
  v[0] = 123456789;
  check_accuracy (v, 1);
  v[0] = 0;
  v[1] = UINT64_MAX;
  v[2] = UINT64_MAX - 1;
  check_accuracy (v, 3);

  /* An iostat: rows grow with completions and go on reset and free. */
  for (int i = 0; i < 1000; i++) {
    rq.t_insert = 1000000 * (uint64_t) i;
    rq.t_dispatch = rq.t_insert + 1000 * (uint64_t) (i % 50);
    iostat_done (&st, &rq, rq.t_dispatch + 100000 + 1000 * (uint64_t) i, 0);
  }
  CHECK_GT (iostat_mem (&st), 0);
  CHECK_LE (iostat_mem (&st), 3 * 16 * (HIST_SUB + 1) * sizeof (uint64_t));
  CHECK_EQ (iostat_total_reqs (&st), 1000);
  iostat_reset (&st, 5);
  CHECK_EQ (iostat_mem (&st), 0);
  CHECK_EQ (iostat_total_reqs (&st), 0);
  CHECK_EQ (st.t_start, 5);
  iostat_done (&st, &rq, rq.t_dispatch + 100, 0);
  CHECK_GT (iostat_mem (&st), 0);
  iostat_free (&st);
  CHECK_EQ (iostat_mem (&st), 0);

  check_done ("test-hist-mem");
  return 0;
}
