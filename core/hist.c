/* hist.c: log-linear latency histograms (see include/hist.h).
 *
 * Bucket layout: values below HIST_SUB land in buckets 0..HIST_SUB-1 one
 * per value.  Above that, a value whose highest set bit is m (m >=
 * HIST_SUB_BITS) is split by its next HIST_SUB_BITS bits into HIST_SUB
 * buckets: index = (m - HIST_SUB_BITS + 1) * HIST_SUB + those bits.  Each
 * power-of-two range gets HIST_SUB equal buckets, so the relative error is
 * at most 1/HIST_SUB.
 */
#include <string.h>

#include "hist.h"

void
hist_init (struct hist *h)
{
  memset (h, 0, sizeof *h);
}

unsigned
hist_bucket (uint64_t v)
{
  unsigned m;

  if (v < HIST_SUB)
    return (unsigned) v;
  m = 63 - (unsigned) __builtin_clzll (v);
  return (m - HIST_SUB_BITS + 1) * HIST_SUB
    + (unsigned) ((v >> (m - HIST_SUB_BITS)) & (HIST_SUB - 1));
}

uint64_t
hist_bucket_max (unsigned b)
{
  unsigned m, sub;
  uint64_t lo, width;

  if (b < HIST_SUB)
    return b;
  m = b / HIST_SUB + HIST_SUB_BITS - 1;
  sub = b % HIST_SUB;
  width = 1ULL << (m - HIST_SUB_BITS);
  lo = (1ULL << m) + sub * width;
  return lo + (width - 1);
}

void
hist_add (struct hist *h, uint64_t v)
{
  h->count++;
  h->sum = h->sum + v < h->sum ? UINT64_MAX : h->sum + v;
  if (v > h->max)
    h->max = v;
  h->b[hist_bucket (v)]++;
}

void
hist_merge (struct hist *dst, const struct hist *src)
{
  dst->count += src->count;
  dst->sum = dst->sum + src->sum < dst->sum ? UINT64_MAX : dst->sum + src->sum;
  if (src->max > dst->max)
    dst->max = src->max;
  for (unsigned i = 0; i < HIST_BUCKETS; i++)
    dst->b[i] += src->b[i];
}

uint64_t
hist_quantile (const struct hist *h, double q)
{
  uint64_t rank, seen = 0;

  if (h->count == 0)
    return 0;
  if (q >= 1.0)
    return h->max;
  if (q < 0)
    q = 0;
  /* The smallest value with at least ceil(q*count) values at or below it. */
  rank = (uint64_t) (q * (double) h->count);
  if ((double) rank < q * (double) h->count)
    rank++;
  if (rank == 0)
    rank = 1;
  for (unsigned i = 0; i < HIST_BUCKETS; i++) {
    seen += h->b[i];
    if (seen >= rank) {
      uint64_t v = hist_bucket_max (i);
      return v < h->max ? v : h->max;
    }
  }
  return h->max;
}

uint64_t
hist_mean (const struct hist *h)
{
  return h->count ? h->sum / h->count : 0;
}
