/* iostat.h: per export / group / connection I/O accounting.
 *
 * Owned by the dispatcher thread (no locks): it calls iostat_done() for
 * every completed request with the three times the scheduler and device
 * saw, and iostat_tick() about once a second to turn counters into rates.
 * Pure bookkeeping, no clock reads: times come in as arguments.
 *
 * Memory: the struct is about 1.6 KiB; its histograms grow by a 1 KiB row
 * per power of two of latency they see (include/hist.h), so an idle
 * connection costs the struct alone.  iostat_free gives the rows back;
 * iostat_reset starts counting afresh (iostat_init is for a struct that
 * holds no rows: new, or freed).
 */
#ifndef CFQ_IOSTAT_H
#define CFQ_IOSTAT_H

#include <stdint.h>

#include "hist.h"
#include "sched.h"

#define IOSTAT_OPS 5            /* enum rq_op: read write flush trim zero */

struct iostat {
  uint64_t reqs[IOSTAT_OPS];    /* completed requests by op */
  uint64_t bytes[IOSTAT_OPS];   /* bytes by op */
  uint64_t errors;              /* requests that failed */
  struct hist lat;              /* ns, insert -> completion */
  struct hist qlat;             /* ns, insert -> dispatch (in scheduler) */
  struct hist dlat;             /* ns, dispatch -> completion (at device) */
  uint64_t t_start;             /* ns, when counting started (or reset) */

  /* Rates over the last tick interval. */
  uint64_t t_tick;              /* ns, last tick */
  uint64_t tick_reqs, tick_bytes;   /* totals at the last tick */
  double iops;                  /* requests/s over the last interval */
  double bps;                   /* bytes/s over the last interval */
};

extern void iostat_init (struct iostat *st, uint64_t now);
extern void iostat_reset (struct iostat *st, uint64_t now);
extern void iostat_free (struct iostat *st);
/* Bytes held by the histograms' rows. */
extern uint64_t iostat_mem (const struct iostat *st);
extern void iostat_done (struct iostat *st, const struct rq *rq,
                         uint64_t now, int err);
extern void iostat_tick (struct iostat *st, uint64_t now);
extern uint64_t iostat_total_reqs (const struct iostat *st);
extern uint64_t iostat_total_bytes (const struct iostat *st);
/* Average rates since start (or reset). */
extern double iostat_avg_iops (const struct iostat *st, uint64_t now);
extern double iostat_avg_bps (const struct iostat *st, uint64_t now);

#endif /* CFQ_IOSTAT_H */
