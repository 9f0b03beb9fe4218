/* poolshare.h: how tenant groups share the request buffer pool.
 *
 * The plugin's pool (plugin/bounce.c) holds at most cap bytes of aligned
 * buffers.  A request takes one when the scheduler dispatches it and
 * gives it back when it is done; one that finds no room waits.  This is
 * the rule that says which waiter is given a buffer next, so that no
 * group can take the pool from the others: core/poolshare.c says why it
 * is this rule.  Pure: no locks, no clock, no allocation; the caller
 * keeps the state and does what the answer says, and calls again until
 * the answer is -1.
 */
#ifndef CFQ_POOLSHARE_H
#define CFQ_POOLSHARE_H

#include <stdbool.h>
#include <stdint.h>

/* One group's use of the pool, as the rule sees it. */
struct pool_grp {
  uint64_t in_use;              /* bytes: buffers its requests hold */
  unsigned nbuf;                /* buffers its requests hold */
  uint64_t want;                /* bytes: its oldest waiter's buffer;
                                   0 when none of its requests waits */
  uint64_t seq;                 /* that waiter's place in the order of
                                   arrival (smaller: earlier) */
};

/* bytes: each group's share of cap when n groups (n >= 1) hold or wait
 * for buffers.
 */
extern uint64_t pool_share (uint64_t cap, unsigned n);

/* A group is active while it holds or waits for a buffer. */
static inline bool
pool_grp_active (const struct pool_grp *g)
{
  return g->in_use > 0 || g->want > 0;
}

/* Of n groups (in_use: the bytes all of them hold, at most cap), the
 * one whose oldest waiter is given its buffer now, or -1 when none may
 * be.  share false: the oldest waiter that fits, whatever its group
 * holds (no shares: for comparison).
 */
extern int pool_next (uint64_t cap, uint64_t in_use,
                      const struct pool_grp *g, unsigned n, bool share);

#endif /* CFQ_POOLSHARE_H */
