/* cfq-group.c: groups (tenants) and their share of the disk.
 *
 * Each group has a virtual disk time, vdisktime: the service it got,
 * scaled by 500/weight (cfq_scale_slice), so equal vdisktime means service
 * in proportion to weight.  Busy groups sit on cfqd->grp_st, an rbtree by
 * vdisktime, and the leftmost goes next (cfq_get_next_cfqg); min_vdisktime
 * only moves forward.  The rules:
 * - A group joins the tree at its end (last vdisktime + CFQ_IDLE_DELAY),
 *   so it cannot bank service while idle; one back within CFQ_GROUP_KEEP
 *   keeps its place instead (deviation 18).  The end counts the charge the
 *   group being served has run up in its slice so far, and that slice is
 *   cut to what it would be given now (deviation 30).
 * - When its queue's slice ends the group is charged (cfq_group_served):
 *   the time used in time mode, the requests dispatched in IOPS mode
 *   (iops_mode), the full slice for an async-only group, plus in time mode
 *   the drain of its requests still in the driver (deviation 19).
 * - The key never changes while the group is on the tree: a charge takes
 *   it off and puts it back (cfq_group_charge).
 * - A group's workload slice left over is saved and resumed at its next
 *   turn (saved_workload_slice).
 * The group's share of target_latency (cfq_group_slice) sizes workload
 * slices and, with low_latency, queue slices; the groups kept by deviation
 * 18 count in it as if still on the tree, so a group alone for a moment
 * gets no slice sized for being alone (deviation 30).
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
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

/* ---- Group service tree ---------------------------------------------- */

uint64_t
cfq_scale_slice (uint64_t delta, const struct sched_group *cfqg)
{
  return (delta << CFQ_SERVICE_SHIFT) * CFQ_WEIGHT_DEFAULT / cfqg->weight;
}

static void
update_min_vdisktime (struct cfq_grp_st *st)
{
  uint64_t vdisktime = st->min_vdisktime;

  if (st->active)
    vdisktime = st->active->vdisktime;
  if (rb_first (&st->rb)) {
    uint64_t v = cfqg_of (rb_first (&st->rb))->vdisktime;
    if (!st->active || (int64_t) (v - vdisktime) < 0)
      vdisktime = v;
  }
  if ((int64_t) (vdisktime - st->min_vdisktime) > 0)
    st->min_vdisktime = vdisktime;
}

/* Busy queues of a class, averaged so that it follows rises at once and
 * falls slowly (cfq_group_get_avg_queues).
 */
unsigned
cfq_group_get_avg_queues (struct sched_group *cfqg, bool rt)
{
  unsigned mult = CFQ_HIST_DIVISOR - 1, round = CFQ_HIST_DIVISOR / 2;
  unsigned busy = cfq_group_busy_queues_wl (rt, cfqg);
  unsigned avg = cfqg->busy_queues_avg[rt];
  unsigned min_q = avg < busy ? avg : busy, max_q = avg < busy ? busy : avg;

  cfqg->busy_queues_avg[rt] = (mult * max_q + min_q + round)
    / CFQ_HIST_DIVISOR;
  return cfqg->busy_queues_avg[rt];
}

/* Off the tree for less than CFQ_GROUP_KEEP: such a group keeps its place
 * when it comes back (deviation 18) and still counts in the group slices
 * (deviation 30).
 */
static bool
cfq_group_kept (const struct cfqd *cfqd, const struct sched_group *cfqg)
{
  return !cfqg->on_st && cfqg->has_left
    && cfqd->now - cfqg->left_at <= CFQ_GROUP_KEEP;
}

/* The group's share of target_latency.  CFQ divides by the weight of the
 * groups on the tree now; a group alone for a moment (the others' clients
 * descheduled) so got a slice sized for being alone, was charged for all of
 * it and then waited seconds for the others to catch up.  Groups kept by
 * deviation 18 still count (deviation 30, "Lone-group slice").
 */
uint64_t
cfq_group_slice (const struct cfqd *cfqd, const struct sched_group *cfqg)
{
  unsigned tw = cfqd->grp_st.total_weight;
  const struct list *p;

  list_for_each (p, &cfqd->groups) {
    const struct sched_group *g = list_entry (p, struct sched_group, link);
    if (cfq_group_kept (cfqd, g))
      tw += g->weight;
  }
  if (!tw)
    tw = cfqg->weight;
  return t_get (cfqd, T_TARGET_LATENCY) * cfqg->weight / tw;
}

/* group_lag in vdisktime: that many requests at the default weight
 * (deviation 32); 0 when off.
 */
static uint64_t
cfq_lag_vdisktime (const struct cfqd *cfqd)
{
  return (t_get (cfqd, T_GROUP_LAG) * CFQ_IOPS_CHARGE) << CFQ_SERVICE_SHIFT;
}

bool
cfqg_less (const struct rb_node *a, const struct rb_node *b)
{
  return (int64_t) (cfqg_of (a)->vdisktime - cfqg_of (b)->vdisktime) < 0;
}

void
cfq_group_service_tree_add (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct rb_node *n;

  cfqg->nr_cfqq++;
  if (cfqg->on_st)
    return;
  /* A group that becomes busy goes to the end of the tree, so it cannot
   * bank service while idle.  As in 2.6.36 the CFQ_IDLE_DELAY offset is
   * added unscaled to the shifted vdisktime: a few us of service.
   * Deviation: a group back within CFQ_GROUP_KEEP of leaving keeps its
   * own vdisktime, raised to min_vdisktime so it still banks nothing.
   */
  n = rb_last (&st->rb);
  if (cfqg->present && cfqg->has_left && t_get (cfqd, T_GROUP_LAG)) {
    /* Back inside its lag window (deviation 32): it keeps the lag the
     * bound let the others run ahead of it (group_lag, plus the one
     * request that crossed it, at most a request at the lowest weight),
     * and banks no more where the bound was not in force (a disk, time
     * mode, wc off).
     */
    uint64_t lag = cfq_lag_vdisktime (cfqd)
      + ((CFQ_IOPS_CHARGE << CFQ_SERVICE_SHIFT) * CFQ_WEIGHT_DEFAULT
         / SCHED_WEIGHT_MIN);
    if ((int64_t) (st->min_vdisktime - cfqg->vdisktime) > (int64_t) lag)
      cfqg->vdisktime = st->min_vdisktime - lag;
    CFQ_TRACE (cfqd, NULL, "group %s back in its lag window", cfqg->name);
  }
  else if (cfq_group_kept (cfqd, cfqg)) {
    if ((int64_t) (cfqg->vdisktime - st->min_vdisktime) < 0)
      cfqg->vdisktime = st->min_vdisktime;
    CFQ_TRACE (cfqd, NULL, "group %s back after %llu us: keeps its place",
               cfqg->name,
               (unsigned long long) ((cfqd->now - cfqg->left_at) / 1000));
  }
  else if (n) {
    uint64_t v = cfqg_of (n)->vdisktime;
    const struct cfqq *aq = cfqd->active_queue;

    /* The end of the tree is where the group being served will be once
     * charged for its slice so far (deviation 30).
     */
    if (aq && aq->cfqg != cfqg && aq->cfqg->on_st) {
      uint64_t used = !cfq_charge_by_cost (cfqd) && !iops_mode (cfqd)
        && aq->slice_new ? 0 : cfq_cfqq_charge (cfqd, aq, cfqd->now);
      uint64_t a = aq->cfqg->vdisktime + cfq_scale_slice (used, aq->cfqg);
      if ((int64_t) (a - v) > 0)
        v = a;
    }
    cfqg->vdisktime = v + CFQ_IDLE_DELAY;
  }
  else
    cfqg->vdisktime = st->min_vdisktime;
  rb_insert (&st->rb, &cfqg->rb_node, cfqg_less);
  cfqg->on_st = true;
  cfq_group_present (cfqd, cfqg);
  st->total_weight += cfqg->weight;
  cfq_trim_slice (cfqd, cfqg, cfqd->now);
}

void
cfq_group_service_tree_del (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;

  if (st->active == cfqg)
    st->active = NULL;
  cfqg->nr_cfqq--;
  if (cfqg->nr_cfqq)
    return;
  cfqg->on_st = false;
  cfq_group_present (cfqd, cfqg);
  cfqg->has_left = true;
  cfqg->left_at = cfqd->now;
  st->total_weight -= cfqg->weight;
  if (rb_linked (&cfqg->rb_node))
    rb_erase (&st->rb, &cfqg->rb_node);
  cfqg->saved_workload_slice = 0;
}

uint64_t
cfq_cfqq_slice_usage (const struct cfqq *cfqq, uint64_t now)
{
  uint64_t used;

  /* Expired before a request completed, or right at the first one:
   * charge the time since it was made active (the seek), at least 1.
   */
  if (cfqq->slice_new || cfqq->slice_start == now)
    used = umax64 (now - cfqq->dispatch_start, 1);
  else {
    used = now - cfqq->slice_start;
    if (used > cfqq->allocated_slice)
      used = cfqq->allocated_slice;
  }
  return used;
}

/* Charging by cost (ours, deviation 34).  CFQ charges a group the time
 * its queue held the device, or in IOPS mode one unit per request.  Both
 * are wrong between groups that do not look alike: a 1 MiB read is one
 * request, and on a device that queues, the time a queue was served
 * cannot be told from the time the device worked on the others' requests.
 * With cost on, a group is charged what its requests cost the device
 * (include/cost.h): in IOPS mode in units of a 4 KiB random read, so that
 * such a read is still one request's charge; in time mode, on flash that
 * queues, in ns of device time.  A disk is still charged the time its
 * queue held the head: CFQ serves one queue at a time there, so the time
 * is the queue's and exact, where the model's seek is an average over
 * the whole disk.
 */
bool
cfq_charge_by_cost (const struct cfqd *cfqd)
{
  return t_get (cfqd, T_COST)
    && (iops_mode (cfqd) || (cfqd->hw_tag == 1 && cfq_nonrot (cfqd)));
}

/* What rq costs its group in IOPS mode's units. */
uint64_t
cfq_rq_charge (const struct cfqd *cfqd, const struct rq *rq)
{
  if (!t_get (cfqd, T_COST))
    return CFQ_IOPS_CHARGE;
  return umax64 ((uint64_t) ((unsigned __int128) rq->cost * CFQ_IOPS_CHARGE
                             / cfqd->cost.ref_ns), 1);
}

/* The charge for cfqq's slice so far. */
uint64_t
cfq_cfqq_charge (const struct cfqd *cfqd, const struct cfqq *cfqq,
                 uint64_t now)
{
  if (cfq_charge_by_cost (cfqd)) {
    if (iops_mode (cfqd))
      return (uint64_t) ((unsigned __int128) cfqq->slice_cost
                         * CFQ_IOPS_CHARGE / cfqd->cost.ref_ns);
    return cfqq->slice_cost * cfqd->cost.vrate / COST_VRATE_ONE;
  }
  if (iops_mode (cfqd))
    return (uint64_t) cfqq->slice_dispatch * CFQ_IOPS_CHARGE;
  return cfq_cfqq_slice_usage (cfqq, now);
}

/* Add charge (ns of disk time) to the group's vdisktime, scaled by its
 * weight.  The key may not change while the group is on the tree.
 */
void
cfq_group_charge (struct cfqd *cfqd, struct sched_group *cfqg,
                  uint64_t charge)
{
  struct cfq_grp_st *st = &cfqd->grp_st;

  if (cfqg->on_st)
    rb_erase (&st->rb, &cfqg->rb_node);
  cfqg->vdisktime += cfq_scale_slice (charge, cfqg);
  if (cfqg->on_st)
    rb_insert (&st->rb, &cfqg->rb_node, cfqg_less);
}

/* Drain charge (ours, deviation 19): the time from the group's expiry
 * until its last request in the driver completed, or until it is made
 * active again, whichever comes first.
 */
void
cfq_group_drain_done (struct cfqd *cfqd, struct sched_group *cfqg,
                      uint64_t now)
{
  if (!cfqg->drain_since)
    return;
  if (now > cfqg->drain_since) {
    cfq_group_charge (cfqd, cfqg, now - cfqg->drain_since);
    cfqg->st_used_ns += now - cfqg->drain_since;
  }
  cfqg->drain_since = 0;
}

void
cfq_group_served (struct cfqd *cfqd, struct sched_group *cfqg,
                  struct cfqq *cfqq, uint64_t now)
{
  unsigned nr_sync = cfqg->nr_cfqq - cfqg_busy_async_queues (cfqg)
    - cfqg->st_idle.count;
  uint64_t charge;

  charge = cfq_cfqq_slice_usage (cfqq, now);
  cfqg->st_used_ns += charge;
  if (cfq_charge_by_cost (cfqd))
    /* Its requests still in the driver were charged when sent. */
    charge = cfq_cfqq_charge (cfqd, cfqq, now);
  else if (iops_mode (cfqd))
    charge = (uint64_t) cfqq->slice_dispatch * CFQ_IOPS_CHARGE;
  else if (!cfqq->sync && !nr_sync)
    charge = cfqq->allocated_slice;     /* async-only group: full slice */
  else if (cfqq->dispatched && !cfqq->slice_new)
    /* Its requests still in the driver hold the disk after the expiry
     * and delay the next queue's first completion, where that queue's
     * slice starts: charge that time to this group as it drains.
     */
    cfqg->drain_since = now;

  cfq_group_charge (cfqd, cfqg, charge);

  /* Save the workload context: the group resumes it on its next turn. */
  if (cfqd->workload_expires > now) {
    cfqg->saved_workload_slice = cfqd->workload_expires - now;
    cfqg->saved_workload = cfqd->serving_type;
    cfqg->saved_serving_prio = cfqd->serving_prio;
  }
  else
    cfqg->saved_workload_slice = 0;
}

static struct sched_group *
cfq_get_next_cfqg (struct cfqd *cfqd)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg;

  if (rb_empty (&st->rb))
    return NULL;
  cfqg = cfqg_of (rb_first (&st->rb));
  if (qos_on (&cfqd->qos) && !(cfqg = cfq_qos_next_cfqg (cfqd)))
    return NULL;                /* every busy group held by a cap */
  st->active = cfqg;
  update_min_vdisktime (st);
  return cfqg;
}

void
cfq_choose_cfqg (struct cfqd *cfqd, uint64_t now)
{
  struct sched_group *cfqg = cfq_get_next_cfqg (cfqd);

  cfqd->serving_group = cfqg;
  if (cfqg && cfqg->saved_workload_slice) {
    /* Resume the workload the group was in. */
    cfqd->workload_expires = now + cfqg->saved_workload_slice;
    cfqd->serving_type = cfqg->saved_workload;
    cfqd->serving_prio = cfqg->saved_serving_prio;
  }
  else
    cfqd->workload_expires = 0;      /* expired: choose again */
  choose_service_tree (cfqd, cfqg, now);
}

/* ---- Work-conserving groups (ours, deviation 31) ----------------------- */

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

/* Present: busy, or with requests in the driver.  A group whose
 * requests are all at the device is still competing: were the other one
 * made active it would fill the driver alone.  With group_lag (deviation
 * 32) a group also stays present for group_idle after it last had either,
 * the window CFQ's group idling would give it: its lag window.
 */
void
cfq_group_present (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  bool present = cfqg->on_st || cfqg->dispatched;
  bool in_window = false;

  if (!present && cfqg->present && !cfqg->in_window
      && t_get (cfqd, T_GROUP_LAG)) {
    /* A window only for a group that overlapped requests lately (one
     * came while another was out, within SCHED_WAIT_WINDOW): a group
     * whose client sends one request at a time with a pause between would
     * hold every other group to its own pace, the device idle meanwhile.
     */
    if (cfqg->last_overlap != SCHED_NEVER
        && cfqd->now - cfqg->last_overlap <= SCHED_WAIT_WINDOW) {
      cfqg->window_end = cfqd->now + t_get (cfqd, T_GROUP_IDLE);
      in_window = cfqd->now < cfqg->window_end;
    }
  }
  else if (!present && cfqg->in_window)
    in_window = cfqd->now < cfqg->window_end;
  if (in_window != cfqg->in_window) {
    cfqg->in_window = in_window;
    if (in_window)
      st->nr_window++;
    else
      st->nr_window--;
  }
  present = present || in_window;
  if (present == cfqg->present)
    return;
  cfqg->present = present;
  if (present)
    st->nr_present++;
  else
    st->nr_present--;
}

/* Lag windows that ended by now stop counting (deviation 32); every
 * entry point calls this first, as it fires the idle timer.
 */
void
cfq_group_windows_expire (struct cfqd *cfqd, uint64_t now)
{
  const struct list *p;

  if (!cfqd->grp_st.nr_window)
    return;
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    /* group_idle lowered live: no window outlasts the new one. */
    if (g->in_window && g->window_end > now + t_get (cfqd, T_GROUP_IDLE))
      g->window_end = now + t_get (cfqd, T_GROUP_IDLE);
    if (g->in_window && now >= g->window_end)
      cfq_group_present (cfqd, g);
  }
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
     */
    if (t_get (cfqd, T_COST) && g->dispatched
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

/* One request while cfq_wc_on: no active queue, no slice.  Below
 * wc_depth requests in the driver, the busy group of least vdisktime
 * (that no cap holds, and not behind a group holding the device) sends
 * one request and is charged one request in IOPS units at once, so
 * several groups are at the device together and weights still hold.
 */
struct rq *
cfq_wc_dispatch (struct cfqd *cfqd, uint64_t now)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg = NULL;
  struct cfqq *cfqq = NULL;
  struct rq *rq = NULL;
  const bool qos = qos_on (&cfqd->qos);

  if (cfqd->active_queue)
    cfq_slice_expired (cfqd, false, now);
  cfqd->serving_group = NULL;
  if (cfqd->rq_in_driver >= t_get (cfqd, T_WC_DEPTH))
    return NULL;
  for (struct rb_node *n = rb_first (&st->rb); n && !rq; n = rb_next (n)) {
    cfqg = cfqg_of (n);
    if (qos && qos_held (&cfqg->qos, now))
      continue;
    /* The tree is in vdisktime order: the rest are further ahead. */
    if (cfq_wc_lag_held (cfqd, cfqg))
      break;
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
  cfq_dispatch_insert (cfqd, cfqq, rq, now);
  if (qos) {
    qos_account (&cfqg->qos, rq, now, false);
    qos_turn (&cfqg->qos);
  }
  cfqq->last_served = now;
  cfq_group_charge (cfqd, cfqg, cfq_rq_charge (cfqd, rq));
  if (rb_empty (&cfqq->sort_list))
    cfq_del_cfqq_rr (cfqd, cfqq);
  update_min_vdisktime (st);
  return rq;
}

struct sched_group *
cfq_group_alloc (struct cfqd *cfqd, const char *name, unsigned weight)
{
  struct sched_group *cfqg;

  if (weight < SCHED_WEIGHT_MIN || weight > SCHED_WEIGHT_MAX)
    return NULL;
  cfqg = calloc (1, sizeof *cfqg);
  if (!cfqg)
    return NULL;
  cfqg->cfqd = cfqd;
  snprintf (cfqg->name, sizeof cfqg->name, "%s", name ? name : "");
  cfqg->weight = weight;
  cfqg->last_overlap = SCHED_NEVER;
  /* As the device's (cfq_create): no late sync, no sync at all yet. */
  cfqg->last_delayed_sync = cfqd->now - NSEC_PER_SEC;
  cfqg->last_sync = SCHED_NEVER;
  rb_clear (&cfqg->rb_node);
  qos_group_init (&cfqg->qos);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      rb_root_init (&cfqg->st[i][j]);
  rb_root_init (&cfqg->st_idle);
  for (int i = 0; i < CFQ_PRIO_LISTS; i++)
    rb_root_init (&cfqg->prio_trees[i]);
  for (int l = 0; l < SCHED_LEVELS; l++) {
    cfq_init_cfqq (cfqd, &cfqg->async_cfqq[0][l], cfqg, NULL, false,
                   SCHED_CLASS_RT, l);
    cfq_init_cfqq (cfqd, &cfqg->async_cfqq[1][l], cfqg, NULL, false,
                   SCHED_CLASS_BE, l);
  }
  cfq_init_cfqq (cfqd, &cfqg->async_idle_cfqq, cfqg, NULL, false,
                 SCHED_CLASS_IDLE, SCHED_LEVELS - 1);
  list_add_tail (&cfqg->link, &cfqd->groups);
  return cfqg;
}

struct sched_group *
cfq_group_new (struct sched *s, const char *name, unsigned weight)
{
  return cfq_group_alloc (CFQD (s), name, weight);
}

int
cfq_group_set_weight (struct sched *s, struct sched_group *cfqg, unsigned w)
{
  struct cfqd *cfqd = CFQD (s);

  if (w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX)
    return -ERANGE;
  if (cfqg->on_st)
    cfqd->grp_st.total_weight = cfqd->grp_st.total_weight - cfqg->weight + w;
  cfqg->weight = w;
  return 0;
}

int
cfq_group_set_qos (struct sched *s, struct sched_group *cfqg,
                   const struct qos_conf *c)
{
  struct cfqd *cfqd = CFQD (s);
  const struct qos_key *k, *o;
  char why[160];

  if (qos_conf_check (c, why, sizeof why, &k, &o) < 0)
    return -EINVAL;
  qos_group_set (&cfqd->qos, &cfqg->qos, c, cfqd->now);
  CFQ_TRACE (cfqd, NULL, "group %s: caps and reservation %s", cfqg->name,
             cfqg->qos.on ? "set" : "removed");
  return 0;
}

uint64_t
cfq_group_vdisktime (struct sched *s, struct sched_group *cfqg)
{
  (void) s;
  return cfqg->vdisktime;
}

void
cfq_group_get_stats (struct sched *s, struct sched_group *cfqg,
                     struct cfq_group_stats *st)
{
  st->weight = cfqg->weight;
  st->vdisktime = cfqg->vdisktime;
  st->busy_queues = cfqg->nr_cfqq;
  st->in_driver = cfqg->dispatched;
  st->on_service_tree = cfqg->on_st;
  st->serving = CFQD (s)->serving_group == cfqg;
  st->slices = cfqg->st_slices;
  st->idle_arms = cfqg->st_idle_arms;
  st->group_idle_arms = cfqg->st_group_idle_arms;
  st->idle_hits = cfqg->st_idle_hits;
  st->idle_timeouts = cfqg->st_idle_timeouts;
  st->preemptions = cfqg->st_preemptions;
  st->dispatched = cfqg->st_dispatched;
  st->used_ns = cfqg->st_used_ns;
  st->qos_held = qos_held (&cfqg->qos, CFQD (s)->now);
  st->qos_throttled = cfqg->qos.st_held;
  st->qos_reserved = cfqg->qos.st_reserved;
}
