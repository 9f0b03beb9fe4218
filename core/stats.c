/* stats.c: exact nearest-rank percentiles and Jain's fairness index, for
 * the simulator's report and the tests.  Latency histograms, which
 * summarise a stream without keeping it, are core/hist.c.
 */
#include <stdlib.h>

#include "stats.h"

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return x < y ? -1 : x > y;
}

uint64_t
stats_percentile (uint64_t *v, size_t n, double p)
{
  size_t rank;

  if (!n)
    return 0;
  qsort (v, n, sizeof *v, cmp_u64);
  rank = (size_t) (p / 100.0 * (double) n + 0.999999999);
  if (rank < 1)
    rank = 1;
  if (rank > n)
    rank = n;
  return v[rank - 1];
}

double
stats_jain (const double *x, size_t n)
{
  double s = 0, s2 = 0;

  for (size_t i = 0; i < n; i++) {
    s += x[i];
    s2 += x[i] * x[i];
  }
  if (n == 0 || s2 == 0)
    return 1.0;
  return s * s / ((double) n * s2);
}
