/* hist.h: log-linear latency histograms, the one histogram of the tree
 * (the server's statistics, core/iostat.c, and the simulator, cfqsim).
 *
 * Values (ns) fall in buckets whose width doubles every HIST_SUB buckets,
 * so every bucket is within 1/HIST_SUB (1/128, 0.8%) of its value while the
 * whole range from 1 ns to 2^64 ns fits in a fixed array (58 KiB):
 * recording is a couple of shifts and an increment, with no allocation,
 * suitable for the dispatcher's completion path.  Percentiles are read
 * back as the upper edge of the bucket that holds them (never an
 * underestimate), and the exact maximum is kept aside.
 */
#ifndef CFQ_HIST_H
#define CFQ_HIST_H

#include <stdint.h>

#define HIST_SUB_BITS 7
#define HIST_SUB (1u << HIST_SUB_BITS)
#define HIST_BUCKETS ((64 - HIST_SUB_BITS + 1) * HIST_SUB)

struct hist {
  uint64_t count;               /* values recorded */
  uint64_t sum;                 /* ns, saturating */
  uint64_t max;                 /* ns, exact */
  uint64_t b[HIST_BUCKETS];     /* counts per bucket */
};

extern void hist_init (struct hist *h);
extern void hist_add (struct hist *h, uint64_t v);
/* Merge src into dst. */
extern void hist_merge (struct hist *dst, const struct hist *src);
/* The value at quantile q in [0,1] (upper bucket edge; max for q=1);
 * 0 for an empty histogram.
 */
extern uint64_t hist_quantile (const struct hist *h, double q);
extern uint64_t hist_mean (const struct hist *h);

/* Bucket of a value and the largest value in a bucket (for tests). */
extern unsigned hist_bucket (uint64_t v);
extern uint64_t hist_bucket_max (unsigned b);

#endif /* CFQ_HIST_H */
