/* cfq-qos.c: caps and reservations inside CFQ (deviation 29).
 *
 * The rules themselves (token buckets for caps, mClock tags for
 * reservations) are core/qos.c's; this file applies them to CFQ's choices.
 * Nothing here runs unless a group is capped or reserved (qos_on).
 * - A reserved group whose tag is due dispatches before CFQ chooses, and
 *   that service is not charged to its vdisktime.
 * - A group its caps hold is skipped in the group choice, keeping its lag
 *   for at most a round (target_latency); a refused request ends its turn.
 * - A group released from a hold is served between turns while it is owed
 *   service, charged as CFQ would charge it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

/* ---- Caps and reservations (the rules: core/qos.c) ---------------------- */

/* Rule 3: the leftmost group on the tree that no cap holds.  Held groups
 * left of it keep their lag, but at most a round of virtual time
 * (target_latency): enough to catch up on the turns their caps cut short,
 * not enough to bank what a cap below their share refuses for ever.
 */
struct sched_group *
cfq_qos_next_cfqg (struct cfqd *cfqd)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg = NULL;
  struct rb_node *n;

  for (n = rb_first (&st->rb); n && !cfqg; n = rb_next (n))
    if (!qos_held (&cfqg_of (n)->qos, cfqd->now))
      cfqg = cfqg_of (n);
  if (!cfqg)
    return NULL;
  cfq_qos_bound_lag (cfqd, cfqg);
  qos_turn (&cfqg->qos);
  return cfqg;
}

/* Rule 3's bound: the cap-held groups left of cfqg (the group served
 * now) are brought up to at most target_latency of virtual time behind
 * it.  Used by CFQ's turns and by the work-conserving dispatch alike.
 */
void
cfq_qos_bound_lag (struct cfqd *cfqd, const struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct rb_node *n, *next;
  uint64_t floor = cfqg->vdisktime
    - (t_get (cfqd, T_TARGET_LATENCY) << CFQ_SERVICE_SHIFT);

  for (n = rb_first (&st->rb); n && n != &cfqg->rb_node; n = next) {
    struct sched_group *held = cfqg_of (n);
    next = rb_next (n);
    if (qos_held (&held->qos, cfqd->now)
        && (int64_t) (held->vdisktime - floor) < 0)
      cfqg_set_vdisktime (st, held, floor);
  }
}

/* Rule 4: may the active queue dispatch rq under its group's caps?  If
 * not, cfq.c ends its turn as if it had run dry (cfq_slice_expired), calls
 * cfq_qos_refused, and chooses again.
 */
bool
cfq_qos_admit (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
               uint64_t now)
{
  uint64_t until = qos_admit (&cfqq->cfqg->qos, rq, now);

  if (!until)
    return true;
  CFQ_TRACE (cfqd, cfqq, "held by a cap for %llu us: slice ends",
             (unsigned long long) ((until - now) / 1000));
  cfqd->qos_refused = true;
  return false;
}

/* The turn of cfqq a cap ended (cfq_qos_admit) has been expired.  Time
 * mode: a turn a cap ends is charged the time up to now, which is
 * nothing for the requests it leaves at the device; their device time is
 * charged as they complete (cfq_qos_completed), or a capped group would
 * use the disk for free whatever its weight.
 */
void
cfq_qos_refused (struct cfqd *cfqd, struct cfqq *cfqq)
{
  if (!iops_mode (cfqd))
    cfqq->cfqg->qos_orphans = cfqq->cfqg->dispatched;
}

/* A request completed: if its group's turn was ended by a cap with it at
 * the device, charge the group its device time, estimated as the time
 * since the previous completion or its dispatch, whichever is later (one
 * request at a time on a disk).
 */
void
cfq_qos_completed (struct cfqd *cfqd, struct rq *rq, uint64_t now)
{
  struct cfqq *cfqq = rq->sq;
  struct sched_group *cfqg = cfqq->cfqg;
  uint64_t start = umax64 (rq->t_dispatch, cfqd->qos_last_done);

  if (cfqg->qos_orphans) {
    cfqg->qos_orphans--;
    if (now > start && !iops_mode (cfqd)) {
      cfq_group_charge (cfqd, cfqg, now - start);
      cfqg->st_used_ns += now - start;
    }
  }
  cfqd->qos_last_done = now;
}

/* The first queue with requests of a group's tree (the active queue may
 * have none left).
 */
static struct cfqq *
cfq_qos_tree_first (struct rb_root *st)
{
  for (struct rb_node *n = rb_first (st); n; n = rb_next (n))
    if (!rb_empty (&cfqq_of (n)->sort_list))
      return cfqq_of (n);
  return NULL;
}

/* The queue a reserved dispatch of cfqg takes its request from: the one
 * CFQ would serve first in the group (RT, then BE, then IDLE; the workload
 * whose first queue has the lowest key).
 */
static struct cfqq *
cfq_qos_pick_queue (struct cfqd *cfqd, struct sched_group *cfqg)
{
  static const enum wl_prio prios[2] = { RT_WORKLOAD, BE_WORKLOAD };
  struct cfqq *best = NULL;

  for (int p = 0; p < 2 && !best; p++)
    for (int t = 0; t <= SYNC_WORKLOAD; t++) {
      struct cfqq *c = cfq_qos_tree_first (&cfqg->st[prios[p]][t]);
      if (c && (!best || c->rb_key < best->rb_key))
        best = c;
    }
  if (!best)
    best = cfq_qos_tree_first (&cfqg->st_idle);
  return best;
}

/* The request of cfqg to dispatch outside CFQ's turns (rules 1 and 5),
 * if its caps let it go, and its queue in *cfqqp: for the reservation the
 * oldest request of the queue CFQ would serve first (mClock serves each
 * client in arrival order), else the request CFQ would take next from it.
 */
static struct rq *
cfq_qos_pick_from (struct cfqd *cfqd, struct sched_group *cfqg,
                   bool reserved, struct cfqq **cfqqp, uint64_t now)
{
  struct cfqq *cfqq = cfq_qos_pick_queue (cfqd, cfqg);
  struct rq *rq;

  if (!cfqq)
    return NULL;
  /* The oldest: always for the reservation, and for a released group
   * once its fifo deadline passed (CFQ looks at the fifo once per slice;
   * between turns there is no slice, and a random reader's far request
   * would wait for ever behind the near ones).
   */
  rq = list_entry (list_first (&cfqq->fifo), struct rq, fifo);
  if (!reserved && now < rq->t_fifo)
    rq = cfqq->next_rq;
  if (qos_admit (&cfqg->qos, rq, now))
    return NULL;                /* rule 6: its caps hold it */
  *cfqqp = cfqq;
  return rq;
}

/* rq of cfqq, chosen by cfq_qos_select, was dispatched.  Only a released
 * group's request is charged, as CFQ would charge it: one request in IOPS
 * mode, its device time at completion in time mode.
 */
void
cfq_qos_served (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                bool reserved, uint64_t now)
{
  struct sched_group *cfqg = cfqq->cfqg;
  struct sched_group *active;

  qos_account (&cfqg->qos, rq, now, reserved);
  if (!reserved) {
    if (iops_mode (cfqd))
      cfq_group_charge_queue (cfqd, cfqq, cfq_rq_charge (cfqd, rq), now);
    else
      cfqg->qos_orphans++;
  }
  CFQ_TRACE (cfqd, cfqq, "%s dispatch, tag %lld us from now",
             reserved ? "reserved" : "released",
             (long long) ((int64_t) (cfqg->qos.r_tag - now) / 1000));
  /* Emptied: off the tree now, as an expiry would have done (the active
   * queue stays until it expires).  The group keeps being the served one
   * if it was.
   */
  active = cfqd->grp_st.active;
  if (rb_empty (&cfqq->sort_list) && cfqq != cfqd->active_queue)
    cfq_del_cfqq_rr (cfqd, cfqq);
  if (active == cfqg && cfqg->on_st)
    cfqd->grp_st.active = active;
}

/* Rule 1: the reserved group whose tag is due goes first. */
static struct rq *
cfq_qos_pick_reserved (struct cfqd *cfqd, struct cfqq **cfqqp, uint64_t now)
{
  for (int tries = 0; tries < 4; tries++) {
    struct qos_group *qg = qos_due (&cfqd->qos, now);
    struct rq *rq;

    if (!qg)
      return NULL;
    rq = cfq_qos_pick_from (cfqd, container_of (qg, struct sched_group, qos),
                            true, cfqqp, now);
    if (rq)
      return rq;
  }
  return NULL;
}

/* Is cfqg owed service next to the group being served?  Its vdisktime is
 * not above the active group's with the service of this slice so far
 * (what the expiry would charge).  On flash that is all: groups waiting
 * for their turn are served a slice at a time, and counted against the
 * one waiting longest a released group would lose its tokens whenever a
 * turn is long (doc/design.md).  On a disk, where each excursion costs two
 * seeks, it must also be behind every other group no cap holds, so that
 * it would be the next one chosen.
 */
static bool
cfq_qos_owed (struct cfqd *cfqd, struct sched_group *cfqg, uint64_t now)
{
  struct cfqq *active = cfqd->active_queue;
  uint64_t charge, v;

  charge = cfq_cfqq_charge (cfqd, active, now);
  v = active->cfqg->vdisktime + cfq_scale_slice (charge, active->cfqg);
  if ((int64_t) (cfqg->vdisktime - v) > 0)
    return false;
  if (cfq_nonrot (cfqd))
    return true;
  for (struct rb_node *n = rb_first (&cfqd->grp_st.rb); n; n = rb_next (n)) {
    struct sched_group *g = cfqg_of (n);
    if (g == cfqg || g == active->cfqg || qos_held (&g->qos, now))
      continue;
    return (int64_t) (cfqg->vdisktime - g->vdisktime) < 0;
  }
  return true;
}

/* Rule 5: a group whose hold ended dispatches out of band while it is
 * owed service: CFQ's turns are far longer than a cap's bucket, and ending
 * the active slice for it instead was tried and starves a sequential
 * reader on a disk (each cut finds its requests in flight, its group off
 * the tree, and hands its turn to the next group; doc/design.md).
 */
static struct rq *
cfq_qos_pick_released (struct cfqd *cfqd, struct cfqq **cfqqp, uint64_t now)
{
  struct cfqq *active = cfqd->active_queue;
  struct list *p;

  if (!active)
    return NULL;                /* CFQ chooses a group now anyway */
  list_for_each (p, &cfqd->qos.groups) {
    struct qos_group *qg = list_entry (p, struct qos_group, link);
    struct sched_group *cfqg = container_of (qg, struct sched_group, qos);
    struct rq *rq;

    if (!qos_released (qg, now) || !cfqg->on_st)
      continue;
    /* Served by CFQ now: back to CFQ's turns.  Not owed now: on flash
     * maybe at the next call, as the active slice's service grows, so it
     * stays released until CFQ gives it a turn (else its bucket overflows
     * while it waits); on a disk, where every excursion to it costs two
     * seeks, it goes back to CFQ's turns (doc/design.md).
     */
    if (cfqg == active->cfqg)
      qos_turn (qg);
    else if (!cfq_qos_owed (cfqd, cfqg, now)) {
      if (!cfq_nonrot (cfqd))
        qos_turn (qg);
    }
    else if ((rq = cfq_qos_pick_from (cfqd, cfqg, false, cfqqp, now)))
      return rq;
  }
  return NULL;
}

/* The request to dispatch before CFQ chooses, if any (rules 1 and 5),
 * its queue in *cfqqp and whether it is the reservation's in *reserved:
 * cfq.c dispatches it, then calls cfq_qos_served.
 */
struct rq *
cfq_qos_select (struct cfqd *cfqd, struct cfqq **cfqqp, bool *reserved,
                uint64_t now)
{
  struct rq *rq;

  *reserved = true;
  rq = cfq_qos_pick_reserved (cfqd, cfqqp, now);
  if (rq)
    return rq;
  *reserved = false;
  return cfq_qos_pick_released (cfqd, cfqqp, now);
}
