/* test-hist.c: bucket edges are contiguous and within 12.5%, quantiles
 * never underestimate and match a sorted reference within a bucket.
 */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hist.h"

static int
cmp (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
  return x < y ? -1 : x > y;
}

int
main (void)
{
  static struct hist h, h2;
  static uint64_t v[100000];
  uint64_t seed = 42;

  /* Buckets tile the value space with no gap or overlap. */
  for (unsigned b = 1; b < HIST_BUCKETS; b++) {
    uint64_t lo = hist_bucket_max (b - 1) + 1, hi = hist_bucket_max (b);
    CHECK_GE (hi, lo);
    CHECK_EQ (hist_bucket (lo), b);
    CHECK_EQ (hist_bucket (hi), b);
    /* width within 1/HIST_SUB of the values in it */
    CHECK (b < HIST_SUB || (hi - lo) <= lo / HIST_SUB);
  }
  for (uint64_t x = 0; x < 100000; x += 7) {
    unsigned b = hist_bucket (x);
    CHECK_LE (x, hist_bucket_max (b));
    CHECK (b == 0 || x > hist_bucket_max (b - 1));
  }
  CHECK_EQ (hist_bucket (UINT64_MAX), HIST_BUCKETS - 1);
  CHECK_EQ (hist_bucket_max (HIST_BUCKETS - 1), UINT64_MAX);

  hist_init (&h);
  CHECK_EQ (hist_quantile (&h, 0.5), 0);
  for (int i = 0; i < 100000; i++) {
    seed ^= seed << 13; seed ^= seed >> 7; seed ^= seed << 17;
    v[i] = 1000 + seed % 10000000;       /* 1 us .. 10 ms */
    hist_add (i % 2 ? &h : &h2, v[i]);
  }
  hist_merge (&h, &h2);
  CHECK_EQ (h.count, 100000);
  qsort (v, 100000, sizeof v[0], cmp);
  CHECK_EQ (h.max, v[99999]);
  CHECK_EQ (hist_quantile (&h, 1.0), v[99999]);
  const double qs[] = { 0.0, 0.5, 0.9, 0.99, 0.999 };
  for (unsigned i = 0; i < sizeof qs / sizeof qs[0]; i++) {
    size_t r = (size_t) (qs[i] * 100000);
    uint64_t exact = v[r ? r - 1 : 0], got = hist_quantile (&h, qs[i]);
    CHECK_GE (got, exact);
    CHECK_LE (got - exact, exact / 8 + 1);
    printf ("q%.3f exact %lu hist %lu\n", qs[i], (unsigned long) exact,
            (unsigned long) got);
  }
  check_done ("test-hist");
  return 0;
}
