/* poolshare.c: the rule by which groups share the buffer pool (see
 * poolshare.h).
 *
 * A buffer cannot be taken back once given: a request holds it until
 * its I/O is done.  So the rule decides only who is given one next, and
 * must keep four promises with that alone:
 *
 * 1. One group cannot take the pool from the others.  Each present group
 *    (one that holds or waits for buffers, or did less than POOL_KEEP
 *    ago) has an equal share, cap / n.  A group may go past its share
 *    only while no other group waits ("borrowing"), so a pool left idle
 *    by the others is used, and a group that borrowed gets nothing more
 *    once another group waits: as its buffers come back they go to the
 *    waiters.  Presence outlasts the last buffer by POOL_KEEP because a
 *    client with one request at a time holds nothing between two of
 *    them: counted only while it holds one, such a tenant would see the
 *    others' shares grow to the whole pool in every gap and find it full
 *    at its next request.
 * 2. A waiter of a group below its share is served first.  A waiter is
 *    "entitled" when its buffer keeps its group within its share, or
 *    when its group holds no buffer at all (else a request larger than
 *    the share, a 32 MiB read in a small pool among many groups, would
 *    never be served: a group may always hold one buffer, whatever its
 *    size).  Entitled waiters are served the group that holds least
 *    first (ties: in order of arrival): a light tenant's read does not
 *    queue behind the backlog of a heavier tenant that is also within
 *    its share, it waits at most for the next buffer to come back.
 * 3. Nobody waits for ever.  The first entitled waiter, E, may not fit
 *    in the room left.  If the others went on taking what comes back, a
 *    large E might never see enough room at once; if nobody else were
 *    served, a 4 KiB read would wait behind a 32 MiB one until the whole
 *    pool had drained.  So E keeps the room it needs, and the others
 *    share the rest: another entitled waiter is served if it fits now
 *    and its group then holds no more than an equal part of what E does
 *    not need, (cap - E's group's bytes - E's buffer) / (n - 1) (and no
 *    more than its share).  Every other group then drains down to that
 *    part, and E fits once they have: its wait is bounded by the I/O of
 *    the buffers in use (the pool gives buffers at dispatch, so every
 *    buffer in use belongs to a request at the device, which the
 *    scheduler has already let go).  Borrowers never hold up an
 *    entitled waiter: nothing is borrowed while another group waits.
 *    A later waiter comes before E only if its group holds less than
 *    E's (or as much, and it is older), and E's group holds at most its
 *    share minus E's buffer: so those too leave room for E in the end.
 * 4. A light tenant does not wait for room it used a moment ago.  What
 *    a present group held lately and does not hold now, up to its share
 *    (its reserve, pool_reserve), is not lent: a borrower may take only
 *    what is left after every other present group's reserve.  So a
 *    depth-1 reader finds its buffer's room free at its next request
 *    instead of waiting for a flood's buffer to come back from the
 *    device.  Entitled waiters are not held back by reserves (the shares
 *    already keep room for everyone present), so a reserve can never be
 *    the only thing that keeps a waiter waiting with nothing in use.
 *
 * Within a group waiters are served in order of arrival, so only each
 * group's oldest waiter is considered.  A group's share changes as
 * groups come and go; the rule is evaluated afresh on every call, with
 * the groups as they are then (and now).
 *
 * What a group may hold, then: its share, or one buffer of any size when
 * it held none; more only while no other group waits.  The plugin counts
 * every buffer given otherwise (stats "over_share"): with this rule, 0.
 */
#include "poolshare.h"

uint64_t
pool_share (uint64_t cap, unsigned n)
{
  return n ? cap / n : cap;
}

bool
pool_present (const struct pool_grp *g, uint64_t now)
{
  return pool_grp_active (g) ||
    (g->last && now >= g->last && now - g->last < POOL_KEEP);
}

void
pool_grp_change (struct pool_grp *g, uint64_t now, bool before)
{
  if (before) {
    /* Back after an absence: what it held before is history. */
    if (!pool_present (g, now))
      g->recent = 0;
    return;
  }
  if (g->in_use > g->recent)
    g->recent = g->in_use;
  g->last = now;
}

uint64_t
pool_reserve (const struct pool_grp *g, uint64_t share, uint64_t now)
{
  uint64_t r = g->recent < share ? g->recent : share;

  if (!pool_present (g, now) || g->in_use >= r)
    return 0;
  return r - g->in_use;
}

static bool
entitled (const struct pool_grp *g, uint64_t share)
{
  return g->want > 0 && (g->in_use + g->want <= share || g->nbuf == 0);
}

/* Is x's waiter before y's: by the bytes their groups hold (least:
 * first) if by_use, then by arrival.
 */
static bool
before (const struct pool_grp *x, const struct pool_grp *y, bool by_use)
{
  if (by_use && x->in_use != y->in_use)
    return x->in_use < y->in_use;
  return x->seq < y->seq;
}

/* The first waiter, in before's order, among the groups other than skip
 * that pass ok (or -1).
 */
static int
first (const struct pool_grp *g, unsigned n, int skip, bool by_use,
       bool (*ok) (const struct pool_grp *, uint64_t, uint64_t),
       uint64_t a, uint64_t b)
{
  int best = -1;

  for (unsigned i = 0; i < n; i++)
    if ((int) i != skip && g[i].want > 0 && ok (&g[i], a, b) &&
        (best < 0 || before (&g[i], &g[best], by_use)))
      best = (int) i;
  return best;
}

/* ok: fits in the room left (a: cap - in_use). */
static bool
fits (const struct pool_grp *g, uint64_t room, uint64_t unused)
{
  return g->want <= room;
}

/* ok: entitled within share a. */
static bool
is_entitled (const struct pool_grp *g, uint64_t share, uint64_t unused)
{
  return entitled (g, share);
}

/* ok: entitled within share, fits in room, and its group stays within
 * part (a: room, b: the part, already no more than the share).
 */
static bool
within_part (const struct pool_grp *g, uint64_t room, uint64_t part)
{
  return g->want <= room && g->in_use + g->want <= part;
}

int
pool_next (uint64_t cap, uint64_t in_use, const struct pool_grp *g,
           unsigned n, uint64_t now, bool share)
{
  unsigned present = 0, waiting = 0;
  uint64_t room = in_use < cap ? cap - in_use : 0;
  uint64_t sh, need, part;
  int e;

  for (unsigned i = 0; i < n; i++) {
    present += pool_present (&g[i], now);
    waiting += g[i].want > 0;
  }
  if (waiting == 0)
    return -1;
  if (!share)
    return first (g, n, -1, false, fits, room, 0);

  sh = pool_share (cap, present);
  e = first (g, n, -1, true, is_entitled, sh, 0);
  if (e < 0) {
    uint64_t kept = 0;

    /* Only borrowers wait: one may borrow if it is alone in waiting,
     * from what the others' reserves leave (promise 4).
     */
    if (waiting != 1)
      return -1;
    e = first (g, n, -1, false, fits, room, 0);
    if (e < 0)
      return -1;
    for (unsigned i = 0; i < n; i++)
      if ((int) i != e)
        kept += pool_reserve (&g[i], sh, now);
    return g[e].want + kept <= room ? e : -1;
  }
  if (g[e].want <= room)
    return e;
  /* E keeps what it needs; the others share the rest (promise 3). */
  need = g[e].in_use + g[e].want;
  if (present < 2 || need >= cap)
    return -1;
  part = (cap - need) / (present - 1);
  if (part > sh)
    part = sh;
  return first (g, n, e, true, within_part, room, part);
}
