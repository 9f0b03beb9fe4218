/* stats.h: exact percentiles of a sample and Jain's fairness index.
 * (Latency histograms are include/hist.h.)
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

/* Exact nearest-rank percentile of n values; sorts v in place. */
extern uint64_t stats_percentile (uint64_t *v, size_t n, double p);

/* Jain's fairness index of x[0..n-1]; 1.0 for n == 0 or all zero. */
extern double stats_jain (const double *x, size_t n);

#endif /* CFQ_STATS_H */
