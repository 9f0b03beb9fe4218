/* stats.h: latency histograms, percentiles and Jain's fairness index.
 *
 * A latency histogram with bounded memory and bounded error, so that the
 * simulator (and later the plugin's statistics) can record every request
 * without allocating on the request path.  Values are nanoseconds; buckets
 * are log-linear (HdrHistogram style): for each power of two, 2^STATS_SUB_BITS
 * equal sub-buckets, so any recorded value is reported within 1/128 (0.8%)
 * of itself.  Exact minimum, maximum, count and sum are kept alongside.
 *
 * Jain's index of x_1..x_n is (sum x)^2 / (n * sum x^2): 1 when all are
 * equal, 1/n when one takes everything.
 *
 * Pure functions and caller-owned structs: no threads, no allocation.
 */
#ifndef CFQ_STATS_H
#define CFQ_STATS_H

#include <stddef.h>
#include <stdint.h>

#define STATS_SUB_BITS 7
#define STATS_SUB (1u << STATS_SUB_BITS)
#define STATS_BUCKETS ((64 - STATS_SUB_BITS + 1) * STATS_SUB)

struct stats_hist {
  uint64_t count;               /* values recorded */
  uint64_t sum;                 /* ns: sum of values (saturating) */
  uint64_t min, max;            /* ns: exact extremes (min = UINT64_MAX if empty) */
  uint64_t bucket[STATS_BUCKETS]; /* counts per log-linear bucket */
};

extern void stats_hist_init (struct stats_hist *h);
extern void stats_hist_add (struct stats_hist *h, uint64_t v);
/* Add every value of src into dst. */
extern void stats_hist_merge (struct stats_hist *dst,
                              const struct stats_hist *src);
/* The p-th percentile (0 < p <= 100), nearest rank; 0 if empty.  The
 * result is the midpoint of the bucket holding that rank, clamped to
 * [min, max] (so p = 100 gives max exactly).
 */
extern uint64_t stats_hist_percentile (const struct stats_hist *h, double p);
extern uint64_t stats_hist_mean (const struct stats_hist *h);

/* Exact nearest-rank percentile of n values; sorts v in place. */
extern uint64_t stats_percentile (uint64_t *v, size_t n, double p);

/* Jain's fairness index of x[0..n-1]; 1.0 for n == 0 or all zero. */
extern double stats_jain (const double *x, size_t n);

#endif /* CFQ_STATS_H */
