/* hist.h: log-linear latency histograms, the one histogram of the tree
 * (the server's statistics, core/iostat.c, and the simulator, cfqsim).
 *
 * Values (ns) fall in buckets whose width doubles every HIST_SUB buckets,
 * so every bucket is within 1/HIST_SUB (1/128, 0.8%) of its value while the
 * whole range from 1 ns to 2^64 ns is covered.  Percentiles are read back
 * as the upper edge of the bucket that holds them (never an
 * underestimate), and the exact maximum is kept aside.
 *
 * Memory.  The buckets come in HIST_ROWS rows of HIST_SUB, one row per
 * power of two, and a row is allocated the first time a value lands in it.
 * An empty histogram is this struct alone (about 500 bytes, no
 * allocation); one that saw latencies between 10 us and 100 ms holds 14
 * rows of 1 KiB.  The dense array this replaced was 58 KiB whatever it
 * held, three per connection.  Recording stays a couple of shifts and an
 * increment; an allocation happens at most once per row.  If it fails the
 * value still counts in count, sum and max, and in lost, and the
 * percentiles are taken over the values that have a bucket.
 *
 * Ownership: a histogram belongs to whoever holds the struct; hist_free
 * gives its rows back (hist_init on a histogram with rows would leak them).
 */
#ifndef CFQ_HIST_H
#define CFQ_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_ROWS (64 - HIST_SUB_BITS + 1)
#define HIST_BUCKETS (HIST_ROWS * HIST_SUB)

struct hist {
  uint64_t count;               /* values recorded */
  uint64_t sum;                 /* ns, saturating */
  uint64_t max;                 /* ns, exact */
  uint64_t lost;                /* values in no bucket (a row's allocation
                                   failed): not in the percentiles */
  uint64_t *row[HIST_ROWS];     /* NULL, or [0] the row's total and
                                   [1..HIST_SUB] its buckets' counts */
};

/* An empty histogram (no allocation). */
extern void hist_init (struct hist *h);
/* Give back the rows; the histogram is empty again. */
extern void hist_free (struct hist *h);
extern void hist_add (struct hist *h, uint64_t v);
/* Merge src into dst (dst->lost counts what could not be merged). */
extern void hist_merge (struct hist *dst, const struct hist *src);
/* The value at quantile q in [0,1] (upper bucket edge; max for q=1);
 * 0 for an empty histogram.
 */
extern uint64_t hist_quantile (const struct hist *h, double q);
/* n quantiles qs[] (ascending) into out[], in one pass over the rows. */
extern void hist_quantiles (const struct hist *h, const double *qs,
                            unsigned n, uint64_t *out);
extern uint64_t hist_mean (const struct hist *h);
/* Bytes the rows take (for the memory budget's figures and tests). */
extern uint64_t hist_mem (const struct hist *h);

/* Bucket of a value and the largest value in a bucket (for tests). */
extern unsigned hist_bucket (uint64_t v);
extern uint64_t hist_bucket_max (unsigned b);

#endif /* CFQ_HIST_H */
