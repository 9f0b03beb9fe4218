/* hist.c: log-linear latency histograms (see include/hist.h).
 *
 * Bucket layout: values below HIST_SUB land in buckets 0..HIST_SUB-1 one
 * per value.  Above that, a value whose highest set bit is m (m >=
 * HIST_SUB_BITS) is split by its next HIST_SUB_BITS bits into HIST_SUB
 * buckets: index = (m - HIST_SUB_BITS + 1) * HIST_SUB + those bits.  Each
 * power-of-two range gets HIST_SUB equal buckets, so the relative error is
 * at most 1/HIST_SUB.
 *
 * Bucket b lives in row b / HIST_SUB at column b % HIST_SUB: one row per
 * power of two (row 0 holds the exact small values).  A row is made on
 * its first value and carries its own total in element 0, so a quantile
 * walks the row totals (HIST_ROWS steps) and then one row (HIST_SUB
 * steps) instead of every bucket.
 */
#include <stdlib.h>
#include <string.h>

#include "hist.h"

#define ROW_LEN (HIST_SUB + 1)  /* the total, then the buckets */

void
hist_init (struct hist *h)
{
  memset (h, 0, sizeof *h);
}

void
hist_free (struct hist *h)
{
  for (unsigned r = 0; r < HIST_ROWS; r++)
    free (h->row[r]);
  hist_init (h);
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

static uint64_t
sat_add (uint64_t a, uint64_t b)
{
  return a + b < a ? UINT64_MAX : a + b;
}

/* Row r, made if missing; NULL if it cannot be. */
static uint64_t *
row_get (struct hist *h, unsigned r)
{
  if (!h->row[r])
    h->row[r] = calloc (ROW_LEN, sizeof *h->row[r]);
  return h->row[r];
}

void
hist_add (struct hist *h, uint64_t v)
{
  unsigned b = hist_bucket (v);
  uint64_t *row = row_get (h, b / HIST_SUB);

  h->count++;
  h->sum = sat_add (h->sum, v);
  if (v > h->max)
    h->max = v;
  if (!row) {
    h->lost++;
    return;
  }
  row[0]++;
  row[1 + b % HIST_SUB]++;
}

void
hist_merge (struct hist *dst, const struct hist *src)
{
  dst->count += src->count;
  dst->sum = sat_add (dst->sum, src->sum);
  dst->lost += src->lost;
  if (src->max > dst->max)
    dst->max = src->max;
  for (unsigned r = 0; r < HIST_ROWS; r++) {
    const uint64_t *s = src->row[r];
    uint64_t *d;

    if (!s || !s[0])
      continue;
    d = row_get (dst, r);
    if (!d) {
      dst->lost += s[0];
      continue;
    }
    for (unsigned i = 0; i < ROW_LEN; i++)
      d[i] += s[i];
  }
}

/* The smallest rank with at least ceil(q * n) values at or below it. */
static uint64_t
rank_of (double q, uint64_t n)
{
  uint64_t rank;

  if (q < 0)
    q = 0;
  rank = (uint64_t) (q * (double) n);
  if ((double) rank < q * (double) n)
    rank++;
  return rank ? rank : 1;
}

void
hist_quantiles (const struct hist *h, const double *qs, unsigned n,
                uint64_t *out)
{
  uint64_t inb = h->count - h->lost, seen = 0;
  unsigned r = 0;

  for (unsigned i = 0; i < n; i++) {
    uint64_t rank, s, v;
    const uint64_t *row = NULL;
    unsigned c;

    /* Percentiles are taken over the values that have a bucket. */
    if (h->count == 0) {
      out[i] = 0;
      continue;
    }
    if (qs[i] >= 1.0 || inb == 0) {
      out[i] = h->max;
      continue;
    }
    rank = rank_of (qs[i], inb);
    /* The row that holds the rank; rows are only walked forward, as qs
     * is ascending (seen counts the values in the rows before r).
     */
    for (; r < HIST_ROWS; r++) {
      row = h->row[r];
      if (row && seen + row[0] >= rank)
        break;
      seen += row ? row[0] : 0;
    }
    if (r == HIST_ROWS) {
      out[i] = h->max;
      continue;
    }
    s = seen;
    for (c = 0; c < HIST_SUB - 1; c++) {
      s += row[1 + c];
      if (s >= rank)
        break;
    }
    v = hist_bucket_max (r * HIST_SUB + c);
    out[i] = v < h->max ? v : h->max;
  }
}

uint64_t
hist_quantile (const struct hist *h, double q)
{
  uint64_t v;

  hist_quantiles (h, &q, 1, &v);
  return v;
}

uint64_t
hist_mean (const struct hist *h)
{
  return h->count ? h->sum / h->count : 0;
}

uint64_t
hist_mem (const struct hist *h)
{
  uint64_t n = 0;

  for (unsigned r = 0; r < HIST_ROWS; r++)
    if (h->row[r])
      n += ROW_LEN * sizeof *h->row[r];
  return n;
}
