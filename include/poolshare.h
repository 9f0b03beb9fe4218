/* poolshare.h: how tenant groups share the request buffer pool.
 *
 * The plugin's pool (plugin/bounce.c) holds at most cap bytes of aligned
 * buffers.  A request takes one when the scheduler dispatches it and
 * gives it back when it is done; one that finds no room waits.  This is
 * the rule that says which waiter is given a buffer next, so that no
 * group can take the pool from the others: core/poolshare.c says why it
 * is this rule.  Pure: no locks, no clock (time comes in as now, in ns),
 * no allocation; the caller keeps the state (pool_grp_change around
 * every change of a group's bytes or waiters), does what pool_next says,
 * and calls it again until the answer is -1.
 */
#ifndef CFQ_POOLSHARE_H
#define CFQ_POOLSHARE_H

#include <stdbool.h>
#include <stdint.h>

#include "sched.h"

/* ns: a group that held or waited for a buffer less than this ago still
 * has its share (a client with one request at a time holds nothing
 * between two of them).
 */
#define POOL_KEEP (200 * NSEC_PER_MSEC)

/* One group's use of the pool, as the rule sees it. */
struct pool_grp {
  uint64_t in_use;              /* bytes: buffers its requests hold */
  unsigned nbuf;                /* buffers its requests hold */
  uint64_t want;                /* bytes: its oldest waiter's buffer;
                                   0 when none of its requests waits */
  uint64_t seq;                 /* that waiter's place in the order of
                                   arrival (smaller: earlier) */
  uint64_t last;                /* ns: when it last held or waited for a
                                   buffer; 0: never */
  uint64_t recent;              /* bytes: the most it held at once since
                                   it last came back (pool_grp_change) */
};

/* A group is active while it holds or waits for a buffer. */
static inline bool
pool_grp_active (const struct pool_grp *g)
{
  return g->in_use > 0 || g->want > 0;
}

/* Present: active, or active less than POOL_KEEP before now.  The
 * groups present share the pool.
 */
extern bool pool_present (const struct pool_grp *g, uint64_t now);

/* Call with before true just before a group's in_use, nbuf or want
 * change, and with false just after: keeps last and recent.
 */
extern void pool_grp_change (struct pool_grp *g, uint64_t now, bool before);

/* bytes: each group's share of cap when n groups (n >= 1) are present. */
extern uint64_t pool_share (uint64_t cap, unsigned n);

/* bytes: what a present group g, holding less than it did lately, may
 * soon ask for again: min(recent, share) - in_use, or 0.  Others may not
 * borrow it (core/poolshare.c, promise 4).
 */
extern uint64_t pool_reserve (const struct pool_grp *g, uint64_t share,
                              uint64_t now);

/* Of n groups (in_use: the bytes all of them hold, at most cap), the
 * one whose oldest waiter is given its buffer now, or -1 when none may
 * be.  share false: the oldest waiter that fits, whatever its group
 * holds (no shares: for comparison).
 */
extern int pool_next (uint64_t cap, uint64_t in_use,
                      const struct pool_grp *g, unsigned n, uint64_t now,
                      bool share);

#endif /* CFQ_POOLSHARE_H */
