/* cfq-wc.c: work-conserving groups and bounded lag: which request goes
 * next when groups take no turns.
 *
 * Work-conserving groups (ours, deviation 31): where a turn saves no seek
 * and protects no idle window (flash that queues, IOPS mode), group_idle
 * is 0 and two or more groups are present, there are no turns: each
 * request comes from the busy group of least vdisktime and is charged at
 * once (cfq_wc_dispatch), up to wc_depth requests in the driver, so
 * several groups are at the device together and the weights still hold
 * while the device is the bottleneck.
 * Bounded lag (ours, deviation 32): with group_lag set the same dispatch
 * also runs with group_idle on, as weighted fair queueing with a timed
 * anticipation: a group stays present for group_idle after its last
 * request completed with nothing queued (its lag window, CFQ's group
 * idling at request granularity) if lately a request of its came while
 * another was out and it is not IDLE class, and no group sends while its
 * vdisktime is more than group_lag requests at weight 500 ahead of a
 * present group with nothing queued; the device waits for that group
 * until its window ends or its next request comes.  So the weights hold
 * where the server, not the device, is the bottleneck, and no group waits
 * a whole round of turns.  A group back inside its window keeps its
 * vdisktime (at most group_lag and a request behind the others), each
 * queue sends in arrival order, and a group's queues take turns by last
 * service.  A tenant that keeps several requests out and thinks between
 * them still paces the others (doc/deviations.md, 32): for full queues
 * only.
 *
 * This file chooses; cfq.c dispatches what it chose (cfq_wc_dispatch) and
 * ends the active queue's slice first.  Below it: the group tree and its
 * charge (cfq-group.c), the queue trees (cfq-tree.c), caps (cfq-qos.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include "cfq-priv.h"

/* Where it runs: flash (or a disk whose seeks cost under 1 ms) that
 * queues (hw_tag not ruled out), groups charged by requests.  There CFQ
 * never idles for a queue (deviation 24), so a group's turn saves no seek
 * and protects no idle window: it only caps the device at the active
 * queue's quantum.  On a disk that seeks the turn is the point (it keeps
 * each queue's run sequential and its idle window), and CFQ stays as is.
 * Two groups or more present (with one, CFQ's turns are the same thing
 * without a charge per request), and group_idle off: group_idle is how
 * CFQ holds a group's weight when its requests do not keep it busy (the
 * device waits for it), which per-request turns cannot do; where the
 * server and not the device is the bottleneck they let the weights slip
 * (doc/deviations.md, 31, has the numbers).  group_idle=0 already says
 * "do not hold the device for a group"; there turns only cost depth.
 * With group_lag (deviation 32) the mode also runs with group_idle on:
 * the bound and the lag windows wait for a group as group_idle does.
 */
bool
cfq_wc_on (const struct cfqd *cfqd)
{
  return t_get (cfqd, T_WC_DEPTH)
    && (!t_get (cfqd, T_GROUP_IDLE) || t_get (cfqd, T_GROUP_LAG))
    && cfq_nonrot (cfqd) && cfqd->hw_tag != 0 && iops_mode (cfqd)
    && cfqd->grp_st.nr_present >= 2;
}

/* The group's queue to serve: its highest busy class, as CFQ; inside it
 * the queue with requests and the fewest in the driver, then the one
 * served least recently, so a group's connections share its requests one
 * by one (by rb_key, a queue that never empties never moves, and the
 * first few would take every turn).  An
 * IDLE-class queue is not held to one request in the driver as in CFQ:
 * there it has the device to itself in its group's turn, here it would
 * wait behind up to wc_depth others with each one (sixteen-mixed: the
 * IDLE groups got half their share so).
 */
static struct cfqq *
cfq_wc_pick_queue (struct sched_group *cfqg)
{
  enum wl_prio prio;
  struct cfqq *best = NULL;

  if (cfq_group_busy_queues_wl (RT_WORKLOAD, cfqg))
    prio = RT_WORKLOAD;
  else if (cfq_group_busy_queues_wl (BE_WORKLOAD, cfqg))
    prio = BE_WORKLOAD;
  else
    prio = IDLE_WORKLOAD;
  for (int t = 0; t <= SYNC_WORKLOAD; t++) {
    struct rb_root *st = service_tree_for (cfqg, prio, t);
    for (struct rb_node *n = rb_first (st); n; n = rb_next (n)) {
      struct cfqq *cfqq = cfqq_of (n);
      if (rb_empty (&cfqq->sort_list))
        continue;
      if (!best || cfqq->dispatched < best->dispatched
          || (cfqq->dispatched == best->dispatched
              && cfqq->last_served < best->last_served))
        best = cfqq;
    }
    if (prio == IDLE_WORKLOAD)
      break;
  }
  return best;
}

/* The request cfqq sends: its fifo head if that expired, else next_rq.
 * With group_lag (deviation 32) always the fifo head: a group held by the
 * bound has its requests queued, and on flash the sector order saves
 * nothing while the requests behind the head's sweep wait for
 * fifo_expire_sync.
 */
static struct rq *
cfq_wc_pick_rq (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  struct list *p = list_first (&cfqq->fifo);

  if (p && (t_get (cfqd, T_GROUP_LAG)
            || now >= list_entry (p, struct rq, fifo)->t_fifo))
    return list_entry (p, struct rq, fifo);
  return cfqq->next_rq;
}

/* Bounded lag (ours, deviation 32): with group_lag set, cfqg may not
 * send while its vdisktime is more than group_lag requests at weight 500
 * ahead of a group that is present but has nothing queued: one whose
 * requests are all in the driver, or inside its lag window.  That is
 * group_idle at request granularity: the device waits for the lagging
 * group at most until its window ends (wc_lag_wake, returned as the next
 * deadline), or until its next request comes in, and meanwhile the
 * others stay within the bound of it.  Where the server and not the
 * device is the bottleneck, each group is often empty for a moment;
 * without the bound whoever is back first takes the device, and the
 * shares follow the server's path, not the weights.
 */
static bool
cfq_wc_lag_held (struct cfqd *cfqd, const struct sched_group *cfqg)
{
  uint64_t lag = cfq_lag_vdisktime (cfqd);
  uint64_t wake = SCHED_NEVER;
  bool held = false;
  const struct list *p;

  if (!lag)
    return false;
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    /* CFQ never idles for the IDLE class: no more does the bound. */
    if (!g->present || g->on_st || g->wc_idle
        || (int64_t) (cfqg->vdisktime - g->vdisktime) <= (int64_t) lag)
      continue;
    /* With cost on, a group whose requests are all at the device, on a
     * device that works on all of the requests it holds at once (no more
     * of them than the parallelism its cost model was measured at), is
     * served as fast as its own queue depth lets it: the others'
     * requests do not slow its own, it waits for no turn, and holding
     * the others to its pace would only leave the device idle.  It keeps
     * group_lag of credit (its next request still goes first) and
     * forfeits the rest, as a group that rejoins the tree does
     * (deviation 34).  Where requests queue inside the device, the
     * others' slow its own; and a group in its window, with nothing at
     * the device, is between requests: those are what the hold is for.
     * Only the depth of a model given for this device (its figures
     * measured or stated at that depth, or the device model's) stands
     * for that: the generic model stands in for a device not measured,
     * its depth is a guess, and such a device (an RBD image, whose
     * cluster queues what it is sent) may be busy with far fewer.
     */
    if (t_get (cfqd, T_COST) && cfqd->cost_given && g->dispatched
        && cfqd->rq_in_driver <= cfqd->cost.p.depth) {
      g->vdisktime = cfqg->vdisktime - lag;
      continue;
    }
    held = true;
    if (g->in_window && g->window_end < wake)
      wake = g->window_end;
  }
  if (wake < cfqd->wc_lag_wake)
    cfqd->wc_lag_wake = wake;
  return held;
}

/* The request to send while cfq_wc_on, if any: no active queue, no
 * slice (cfq.c ends the active one first).  Below wc_depth requests in
 * the driver, the busy group of least vdisktime (that no cap holds, and
 * not behind a group holding the device) sends one request; *cfqqp is its
 * queue.  cfq.c dispatches it, then calls cfq_wc_served.
 */
struct rq *
cfq_wc_select (struct cfqd *cfqd, struct cfqq **cfqqp, uint64_t now)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg = NULL;
  struct cfqq *cfqq = NULL;
  struct rq *rq = NULL;
  const bool qos = qos_on (&cfqd->qos);

  if (cfqd->rq_in_driver >= t_get (cfqd, T_WC_DEPTH))
    return NULL;
  for (struct rb_node *n = rb_first (&st->rb); n && !rq; n = rb_next (n)) {
    cfqg = cfqg_of (n);
    if (qos && qos_held (&cfqg->qos, now))
      continue;
    /* The tree is in vdisktime order: the rest are further ahead. */
    if (cfq_wc_lag_held (cfqd, cfqg))
      break;
    if (cfq_lat_depth_full (cfqd, cfqg))
      continue;
    if (!(cfqq = cfq_wc_pick_queue (cfqg)))
      continue;
    /* IDLE class waits out its grace as on CFQ's path (deviation 10). */
    if (cfq_class_idle (cfqq) && cfq_idle_grace_wait (cfqd, now))
      continue;
    rq = cfq_wc_pick_rq (cfqd, cfqq, now);
    if (qos && qos_admit (&cfqg->qos, rq, now))
      rq = NULL;                /* a cap holds it from now */
  }
  if (!rq)
    return NULL;
  if (qos)
    cfq_qos_bound_lag (cfqd, cfqg);     /* rule 3, as on CFQ's path */
  if (rq != cfqq->next_rq && now >= rq->t_fifo)
    cfqd->stats.fifo_expired++;
  cfqg->wc_idle = cfq_class_idle (cfqq);
  *cfqqp = cfqq;
  return rq;
}

/* rq of cfqq was dispatched (cfq_wc_select chose it): its group is
 * charged the request in IOPS units at once (cfq_rq_charge: one request,
 * or with cost on what it costs the device), so several groups are at
 * the device together and the weights still hold.
 */
void
cfq_wc_served (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
               uint64_t now)
{
  struct sched_group *cfqg = cfqq->cfqg;

  if (qos_on (&cfqd->qos)) {
    qos_account (&cfqg->qos, rq, now, false);
    qos_turn (&cfqg->qos);
  }
  cfqq->last_served = now;
  cfq_group_charge_queue (cfqd, cfqq, cfq_rq_charge (cfqd, rq), now);
  if (rb_empty (&cfqq->sort_list))
    cfq_del_cfqq_rr (cfqd, cfqq);
  update_min_vdisktime (&cfqd->grp_st);
}
