/* cfq-group.c: groups (tenants) and their share of the disk.
 *
 * Each group has a virtual disk time, vdisktime: the service it got,
 * scaled by 500/weight (cfq_scale_slice), so equal vdisktime means service
 * in proportion to weight.  Busy groups sit on cfqd->grp_st, an rbtree by
 * vdisktime, and the leftmost goes next (cfq_get_next_cfqg); min_vdisktime
 * only moves forward.  The rules:
 * - A group joins the tree at its end (last vdisktime + CFQ_IDLE_DELAY),
 *   so it cannot bank service while idle; one back within CFQ_GROUP_KEEP
 *   keeps its place instead (deviation 18), and one whose connection a
 *   boost just started goes first (cfq-latency.c).  The end counts the
 *   charge the group being served has run up in its slice so far, and
 *   that slice is cut to what it would be given now (deviation 30).
 * - When its queue's slice ends the group is charged (cfq_group_served):
 *   the time used in time mode, the requests dispatched in IOPS mode
 *   (iops_mode), the full slice for an async-only group, plus in time mode
 *   the drain of its requests still in the driver (deviation 19).
 * - The key never changes while the group is on the tree: a charge takes
 *   it off and puts it back (cfq_group_charge).
 * - A group's workload slice left over is saved and resumed at its next
 *   turn (saved_workload_slice).
 * The group's share of target_latency (cfq_group_slice; cut with every
 * turn while a latency target misses on a disk, cfq-latency.c) sizes
 * workload slices and, with low_latency, queue slices; the groups kept by deviation
 * 18 count in it as if still on the tree, so a group alone for a moment
 * gets no slice sized for being alone (deviation 30).
 * The work-conserving dispatch (deviations 31 and 32) is cfq-wc.c's; here
 * are the group state it reads: which groups are present, and their lag
 * windows (cfq_group_present).
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

void
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
  return cfq_lat_target_latency (cfqd) * cfqg->weight / tw;
}

/* group_lag in vdisktime: that many requests at the default weight
 * (deviation 32); 0 when off.
 */
uint64_t
cfq_lag_vdisktime (const struct cfqd *cfqd)
{
  return (t_get (cfqd, T_GROUP_LAG) * CFQ_IOPS_CHARGE) << CFQ_SERVICE_SHIFT;
}

void
cfq_group_service_tree_add (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct rb_node *n;

  cfqg->nr_cfqq++;
  if (cfqg->on_st)
    return;
  cfq_lat_allow_refill (cfqg, cfqd->now);       /* its idle time counts */
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
  else if (cfqg->lat.front) {
    /* A boost starts: its group goes first, not last (cfq-latency.c). */
    cfqg->vdisktime = st->min_vdisktime;
    CFQ_TRACE (cfqd, NULL, "group %s boosted: joins at the front",
               cfqg->name);
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
  cfqg->lat.front = false;
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
  cfq_lat_allow_refill (cfqg, cfqd->now);       /* its busy time does not */
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
 * weight.
 */
void
cfq_group_charge (struct cfqd *cfqd, struct sched_group *cfqg,
                  uint64_t charge)
{
  cfqg_set_vdisktime (&cfqd->grp_st, cfqg,
                      cfqg->vdisktime + cfq_scale_slice (charge, cfqg));
}

/* Charge a queue's service to its group: CHARGE less what its
 * connection's boost forgives (cfq_lat_charge).
 */
void
cfq_group_charge_queue (struct cfqd *cfqd, const struct cfqq *cfqq,
                        uint64_t charge, uint64_t now)
{
  cfq_group_charge (cfqd, cfqq->cfqg,
                    cfq_lat_charge (cfqq->owner, cfqq->cfqg, charge, now));
}

/* Drain charge (ours, deviation 19): the time from the group's expiry
 * until its last request in the driver completed, or until it is made
 * active again, whichever comes first.  It is the service of the queue
 * whose requests drain, so that connection's boost forgives it as it
 * forgives the queue's slices: otherwise a boosted queue that expires
 * with a request out, as one two deep does at every turn, pays each
 * drain in full, several times what its boosted turns cost.
 */
void
cfq_group_drain_start (struct sched_group *cfqg, const struct cfqq *cfqq,
                       uint64_t now)
{
  cfqg->drain_since = now;
  cfqg->drain_cic = cfqq->owner;
}

void
cfq_group_drain_done (struct cfqd *cfqd, struct sched_group *cfqg,
                      uint64_t now)
{
  if (!cfqg->drain_since)
    return;
  if (now > cfqg->drain_since) {
    cfq_group_charge (cfqd, cfqg,
                      cfq_lat_charge (cfqg->drain_cic, cfqg,
                                      now - cfqg->drain_since, now));
    cfqg->st_used_ns += now - cfqg->drain_since;
  }
  cfqg->drain_since = 0;
  cfqg->drain_cic = NULL;
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
    cfq_group_drain_start (cfqg, cfqq, now);

  charge = cfq_lat_cut_charge (cfqg, charge);
  cfq_group_charge_queue (cfqd, cfqq, charge, now);

  /* Save the workload context: the group resumes it on its next turn. */
  if (cfqd->workload_expires > now) {
    cfqg->saved_workload_slice = cfqd->workload_expires - now;
    cfqg->saved_workload = cfqd->serving_type;
    cfqg->saved_serving_prio = cfqd->serving_prio;
  }
  else
    cfqg->saved_workload_slice = 0;
}

/* ---- Present groups and lag windows (deviations 31, 32) ----------------- */

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
  cfq_lat_group_init (cfqd, cfqg, weight);
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
  cfq_lat_set_weight (cfqd, cfqg, w);
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

void
cfq_group_qos_counts (struct sched *s, struct sched_group *cfqg,
                      struct qos_counts *c)
{
  (void) s;
  *c = cfqg->qos.done;
}

/* Service given elsewhere and this server's share (gqos.h): a group
 * held longer is found so at its next admit; nothing else in CFQ's state
 * changes.
 */
void
cfq_group_qos_charge (struct sched *s, struct sched_group *cfqg,
                      const struct qos_counts *delta,
                      const uint32_t *share_ppm, uint64_t now)
{
  qos_charge (&cfqg->qos, delta, share_ppm, now);
  CFQ_TRACE (CFQD (s), NULL, "group %s: %llu requests served elsewhere,"
             " %u ppm of iops_max here", cfqg->name, (unsigned long long)
             (delta->ios[QOS_READ] + delta->ios[QOS_WRITE]),
             cfqg->qos.share_ppm[QOS_IOPS_MAX]);
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
  st->qos_throttled = cfqg->qos.done.held;
  st->qos_reserved = cfqg->qos.done.res_ios;
  st->lat_target = cfqg->lat.conf.target;
  st->lat_window = cfqg->lat.last;
  st->lat_unmet = cfqg->lat.unmet;
}

/* ---- Queue slices, sized by the group's share ----------------------------- */

uint64_t
cfq_prio_slice (const struct cfqd *cfqd, bool sync, unsigned prio)
{
  const int64_t base = t_get (cfqd, sync ? T_SLICE_SYNC : T_SLICE_ASYNC);
  int64_t s = base + base / CFQ_SLICE_SCALE * (4 - (int64_t) prio);

  return s > 0 ? (uint64_t) s : 1;
}

static uint64_t
cfq_prio_to_slice (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  return cfq_prio_slice (cfqd, cfqq->sync, cfqq->ioprio);
}

/* The queue's slice, with low_latency scaled to its group's share of
 * target_latency; iq: the queues of its class in the group expected to
 * take turns.
 */
uint64_t
cfq_scaled_slice (const struct cfqd *cfqd, const struct cfqq *cfqq,
                  unsigned iq)
{
  uint64_t slice = cfq_prio_to_slice (cfqd, cfqq);

  if (t_get (cfqd, T_LOW_LATENCY)) {
    uint64_t sync_slice = t_get (cfqd, T_SLICE_SYNC);
    uint64_t expect_latency = sync_slice * iq;
    uint64_t group_slice = cfq_group_slice (cfqd, cfqq->cfqg);

    if (expect_latency > group_slice) {
      uint64_t base_low_slice = 2 * t_get (cfqd, T_SLICE_IDLE);
      uint64_t low_slice = umin64 (slice, base_low_slice * slice / sync_slice);
      slice = umax64 (slice * group_slice / expect_latency, low_slice);
    }
  }
  return slice;
}

/* A group joined the tree (deviation 30): the active queue of another
 * group keeps no more of its slice than it would be given now, so a slice
 * sized for a group alone ends when the others come.
 */
void
cfq_trim_slice (struct cfqd *cfqd, const struct sched_group *joined,
                uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;
  uint64_t slice, end;

  if (!cfqq || cfqq->slice_new || cfqq->wait_busy || cfqq->cfqg == joined)
    return;
  slice = cfq_scaled_slice (cfqd, cfqq,
                            cfqq->cfqg->busy_queues_avg[cfq_class_rt (cfqq)]);
  if (slice >= cfqq->allocated_slice)
    return;
  end = umax64 (cfqq->slice_start + slice, now);
  if (end >= cfqq->slice_end)
    return;
  CFQ_TRACE (cfqd, cfqq, "group %s joined: slice cut by %llu us",
             joined->name,
             (unsigned long long) ((cfqq->slice_end - end) / 1000));
  cfqq->slice_end = end;
  cfqq->allocated_slice = end - cfqq->slice_start;
}
