/* cfq.c: Completely Fair Queueing (Linux 2.6.36 semantics) on a virtual clock.
 *
 * What CFQ decides, and why
 * -------------------------
 * A disk is a single server whose cost per request depends on what it did
 * just before: a request next to the previous one is nearly free, a seek on
 * a rotating disk costs milliseconds.  Serving requests in arrival order
 * (FIFO) or strictly by sector (deadline) is fair to requests, not to the
 * clients issuing them: a streaming writer with a deep queue takes the disk
 * from a reader that issues one request at a time and thinks in between.
 * CFQ is fair to clients instead.  It gives each client queue (cfqq) the disk
 * for a time slice, during which only that queue dispatches, in sector order.
 * When the queue runs dry before its slice ends, CFQ may leave the disk idle
 * for a few ms (slice_idle) because a synchronous client that just got its
 * data back usually sends the next nearby request at once: waiting costs
 * less than the seek to another client's area, and it stops the reader from
 * being starved by writers that always have something queued.
 *
 * Around that core:
 * - Classes are strict: RT queues are served before BE, BE before IDLE,
 *   and within a class the level (0..7) scales the slice length:
 *   slice = base + base/5 * (4 - level).
 * - Inside a group, queues sit on service trees by workload: SYNC (sync
 *   queues that idle), SYNC_NOIDLE (seeky or thinking sync queues: idling
 *   for each does not pay, so CFQ idles once for the whole tree) and ASYNC.
 *   A workload keeps the disk for a workload slice sized from target_latency
 *   and how many queues it has against the group's busy average.
 * - Groups (tenants here, cgroups in Linux) share the disk by weight: each
 *   has a virtual disk time that grows by the time it used, times 500/weight;
 *   the group with the smallest vdisktime goes next.  With slice_idle=0 on a
 *   queueing device the time a group "used" is meaningless, so CFQ charges
 *   requests instead (IOPS mode).  group_idle keeps a group's turn alive for
 *   a moment when its last queue runs dry, or a sparse tenant would lose its
 *   share to a greedy one every time it thinks.
 * - low_latency shortens slices so that all busy queues of a group get a
 *   turn within target_latency, and keeps async writers shallow while sync
 *   requests are being delayed.
 * - Preemption lets a more urgent queue (RT over BE, sync over async, a
 *   request right next to the head while the active queue idles) take the
 *   disk early; the preempted queue keeps its unused slice as a credit.
 * - Cooperating queues: two clients reading one area in turns (a thread
 *   pool) look seeky one by one but sequential together; CFQ notices the
 *   queue whose next request is close to the head, serves it instead of
 *   idling, and merges the two into one queue; it splits them again when
 *   the shared queue turns seeky.
 *
 * Data structures
 * ---------------
 *
 *   cfqd --grp_st (rb by vdisktime, leftmost cached)
 *          |
 *          +-- cfqg "a" weight 500 ----------------------------------+
 *          |     st[RT][ASYNC] st[RT][SYNC_NOIDLE] st[RT][SYNC]      |
 *          |     st[BE][ASYNC] st[BE][SYNC_NOIDLE] st[BE][SYNC]      |
 *          |     st_idle       (each: rb of cfqq by rb_key)          |
 *          |                    |                                     |
 *          |                    +-- cfqq (sync, one per connection)   |
 *          |                    |     sort_list: rb of rq by sector   |
 *          |                    |     fifo: list of rq by arrival     |
 *          |                    |     next_rq -> best rq after head   |
 *          |                    +-- cfqq ...                          |
 *          |     async[RT|BE][level], async_idle: embedded cfqq      |
 *          |     prio_trees[level]: rb of cfqq by next_rq sector     |
 *          +-- cfqg "b" ...                                           |
 *
 *   sched_queue (a connection = Linux's cfq_io_context) --cfqq--> the sync
 *   cfqq now serving it: its own embedded one, or another connection's
 *   after a merge.
 *
 * Kernel names kept: cfqd (struct cfqd, cfq_data), cfqg (struct
 * sched_group, cfq_group), cfqq (struct cfqq, cfq_queue), rq (struct rq),
 * service_tree/st (struct rb_root of cfqq), grp_st (grp_service_tree), cic
 * (struct sched_queue: what cfq_io_context was: the submitter's identity,
 * think time, and the pointer to its sync queue).  Functions are named after
 * the kernel ones they mirror (cfq_select_queue, cfq_may_dispatch,
 * cfq_arm_slice_timer, ...) so the two can be read side by side.
 *
 * Files
 * -----
 * This file: queues, slices, idling, the group choice, dispatch, expiry,
 * preemption, insertion and completion, a connection's queues (merge,
 * split, free), and the sched_ops table.  Beside it, cfq-stats.c reads
 * CFQ's state for the outside (cfq_get_stats, cfq_dump).  Below it, each
 * calling only the ones after it, through the private header
 * core/cfq-priv.h (structures, constants, small functions):
 *   cfq-history.c   think time, seek history, idle window, hw_tag, seek
 *                   cost: what CFQ learns from the requests it sees
 *   cfq-wc.c        the work-conserving dispatch's choice (31, 32)
 *   cfq-qos.c       caps and reservations (core/qos.c) inside CFQ
 *   cfq-rq.c        a queue's requests in sector order, its next_rq
 *   cfq-tree.c      the queue service trees and the workload choice
 *   cfq-coop.c      cooperating queues: prio trees, lookup, merge links
 *   cfq-group.c     groups: vdisktime, weights, charging, the group tree,
 *                   queue slices sized by the group's share
 *   cfq-tunables.c  the tunable table, its parser and formatter
 *   cfq-trace.c     the trace hook
 * Only this file dispatches or expires: the others return their choice
 * (cfq_wc_select, cfq_qos_select, cfq_qos_admit) and it acts on it.
 *
 * Deviations from the kernel
 * --------------------------
 * Each departure from 2.6.36/2.6.37 has a number, and the code says
 * "deviation N" where it departs.  doc/deviations.md has one entry per
 * number: what differs, why, and the test that shows it; and, at its end,
 * CFQ's own faults kept as the default with their better settings.
 *
 * Memory and threading: everything is allocated in create, group_new and
 * queue_new; insert/dispatch/completed never allocate.  A connection (and
 * the cfqq embedded in it) is freed when it is dead (queue_free), no
 * request of it is pending, and no other connection or merge link refers to
 * its cfqq (the counts nr_conn, nr_rq, nr_link are the kernel's cfqq->ref
 * split by kind).  One thread (the dispatcher) owns a struct cfqd and all
 * that hangs from it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

static void cfq_conn_maybe_free (struct cfqd *cfqd, struct sched_queue *cic);

/* ---- Slices ---------------------------------------------------------- */

static void
cfq_set_prio_slice (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  /* Queues of the same class in the group we expect to take turns. */
  unsigned iq = cfq_group_get_avg_queues (cfqq->cfqg, cfq_class_rt (cfqq));
  uint64_t slice = cfq_scaled_slice (cfqd, cfqq, iq);

  cfqq->slice_start = now;
  cfqq->slice_end = now + slice;
  cfqq->allocated_slice = slice;
}

static bool
cfq_slice_used (const struct cfqq *cfqq, uint64_t now)
{
  if (cfqq->slice_new)
    return false;
  return now >= cfqq->slice_end;
}

/* ---- Active queue ------------------------------------------------------ */

static void
cfq_del_timer (struct cfqd *cfqd)
{
  cfqd->idle_timer = SCHED_NEVER;
}

static void
__cfq_set_active_queue (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  if (cfqq) {
    /* Its group's drain charge ends here: from now on the time is the
     * new slice's.
     */
    cfq_group_drain_done (cfqd, cfqq->cfqg, now);
    cfqq->slice_start = 0;
    cfqq->dispatch_start = now;
    cfqq->allocated_slice = 0;
    cfqq->slice_end = 0;
    cfqq->slice_dispatch = 0;
    cfqq->slice_cost = 0;
    cfqq->wait_request = false;
    cfqq->must_dispatch = false;
    cfqq->fifo_expire = false;
    cfqq->slice_new = true;
    cfq_del_timer (cfqd);
    cfqd->stats.slices++;
    cfqq->cfqg->st_slices++;
    CFQ_TRACE (cfqd, cfqq, "active: %s queued=%u vdisktime=%llu",
               cfqq->sync ? "sync" : "async",
               cfqq->queued[0] + cfqq->queued[1],
               (unsigned long long) cfqq->cfqg->vdisktime);
  }
  cfqd->active_queue = cfqq;
}

static void
__cfq_slice_expired (struct cfqd *cfqd, struct cfqq *cfqq, bool timed_out,
                     uint64_t now)
{
  CFQ_TRACE (cfqd, cfqq, "slice expired: %s, dispatched %u, queued %u",
             timed_out ? "timed out (slice used, or preempted)"
             : cfqq->slice_new ? "no completion yet"
             : now >= cfqq->slice_end ? "slice used" : "queue empty",
             cfqq->slice_dispatch, cfqq->queued[0] + cfqq->queued[1]);
  if (cfqq->wait_request)
    cfq_del_timer (cfqd);
  cfqq->wait_request = false;
  cfqq->wait_busy = false;

  /* A shared queue that turned seeky is split at its next request. */
  if (cfqq->coop && CFQQ_SEEKY (cfqq))
    cfqq->split_coop = true;

  /* Keep what was left of the slice if it idled out or was preempted. */
  if (timed_out && !cfqq->slice_new)
    cfqq->slice_resid = (int64_t) (cfqq->slice_end - now);
  if (cfqq->slice_dispatch)
    cfqq->last_served = now;

  cfq_group_served (cfqd, cfqq->cfqg, cfqq, now);

  if (cfqq->on_rr && rb_empty (&cfqq->sort_list))
    cfq_del_cfqq_rr (cfqd, cfqq);
  cfq_resort_rr_list (cfqd, cfqq, now);

  if (cfqq == cfqd->active_queue)
    cfqd->active_queue = NULL;
  if (cfqq == cfqd->run_queue)
    cfqd->run_queue = NULL;
  if (cfqq == cfqd->preempt_pending)
    cfqd->preempt_pending = NULL;
  if (cfqd->grp_st.active == cfqq->cfqg)
    cfqd->grp_st.active = NULL;
  cfqd->active_cic = NULL;
}

static void
cfq_slice_expired (struct cfqd *cfqd, bool timed_out, uint64_t now)
{
  if (cfqd->active_queue)
    __cfq_slice_expired (cfqd, cfqd->active_queue, timed_out, now);
}

static bool
cfq_should_idle (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  const struct rb_root *st = cfqq->service_tree;

  if (cfqq_prio (cfqq) == IDLE_WORKLOAD)
    return false;
  if (!t_get (cfqd, T_SLICE_IDLE))
    return false;
  /* Queues marked with the idle window, unless the device is an SSD that
   * queues (idling there costs more than it saves).
   */
  if (cfqq->idle_window && !(cfq_nonrot (cfqd) && cfqd->hw_tag))
    return true;
  /* Otherwise only the last sync queue of its tree (SYNC_NOIDLE): idle
   * once for the whole tree so it keeps its share against others; not on
   * a flash device that queues (ours, deviation 24, "Flash that
   * queues"): there waiting only keeps the others off an idle device.
   */
  if (cfq_nonrot (cfqd) && cfqd->hw_tag)
    return false;
  if (st && st->count == 1 && cfqq->sync)
    return true;
  return false;
}

static void
cfq_arm_slice_timer (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;
  struct sched_queue *cic;
  uint64_t sl, group_idle = 0;

  /* SSD that queues: never idle for a queue (2.6.37).  Idle for the group
   * only when another group is busy (ours, deviation 17): a
   * group whose last request just completed would otherwise leave the
   * service tree and come back at its end, losing its weight.  With a
   * single busy group there is no share to protect, and the window cost
   * 8 ms per reader turn (tests/sim/ssd-group-idle.job).
   */
  if (cfq_nonrot (cfqd) && cfqd->hw_tag) {
    group_idle = t_get (cfqd, T_GROUP_IDLE);
    if (!group_idle || cfqd->grp_st.total_weight <= cfqq->cfqg->weight)
      return;
  }
  else if (!cfq_should_idle (cfqd, cfqq)) {
    group_idle = t_get (cfqd, T_GROUP_IDLE);
    if (!group_idle)
      return;
  }
  /* Still requests in flight from this queue: no idle. */
  if (cfqq->dispatched)
    return;
  /* The connection has gone: nobody will send the next request. */
  cic = cfqd->active_cic;
  if (!cic || cic->dead)
    return;
  /* Think time longer than what is left of the slice: don't overrun. */
  if (CFQ_SAMPLE_VALID (cic->ttime_samples)
      && (int64_t) (cfqq->slice_end - now) < (int64_t) cic->ttime_mean)
    return;
  /* Other queues in the group: no group idle. */
  if (group_idle && cfqq->cfqg->nr_cfqq > 1)
    return;

  cfqq->wait_request = true;
  sl = group_idle ? group_idle : t_get (cfqd, T_SLICE_IDLE);
  cfqd->idle_timer = now + sl;
  CFQ_TRACE (cfqd, cfqq, "idle armed: %s %llu us",
             group_idle ? "group_idle" : "slice_idle",
             (unsigned long long) (sl / 1000));
  if (group_idle) {
    cfqd->stats.group_idle_arms++;
    cfqq->cfqg->st_group_idle_arms++;
  }
  else {
    cfqd->stats.idle_arms++;
    cfqq->cfqg->st_idle_arms++;
  }
}

static void
cfq_dispatch_insert (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                     uint64_t now)
{
  cfqq->next_rq = cfq_find_next_rq (cfqd, cfqq, rq);
  cfq_remove_request (cfqd, cfqq, rq);
  qos_dequeue (&cfqq->cfqg->qos, rq);
  cfqq->dispatched++;
  cfqq->cfqg->dispatched++;
  cfq_group_present (cfqd, cfqq->cfqg);
  cfqd->rq_in_flight[cfqq->sync]++;
  cfqq->cfqg->rq_in_flight[cfqq->sync]++;
  /* cfq_activate_request */
  cfqd->rq_in_driver++;
  rq->pflags = 0;
  /* What it costs the device (deviation 34): sequential if it starts
   * close to where its queue's last request ended.
   */
  {
    uint64_t d = rq->off > cfqq->cost_pos ? rq->off - cfqq->cost_pos
      : cfqq->cost_pos - rq->off;

    rq->cost = cost_rq_raw (&cfqd->cost, rq->op, rq->len,
                            d <= COST_SEQ_WINDOW);
    if (rq->op != RQ_FLUSH)
      cfqq->cost_pos = rq->off + rq->len;
    cfqq->slice_cost += rq->cost;
    cfqq->cfqg->inflight_cost += rq->cost;
    cfqd->inflight_cost += rq->cost;
    cost_observe (&cfqd->cost, now, +1, 0);
  }
  if (rq->op == RQ_READ && cfq_dist_from_last (cfqd, rq) > CFQQ_SEEK_THR)
    rq->pflags |= CFQ_RQ_SEEK;
  if (rq->op != RQ_FLUSH)
    cfqd->last_position = rq_sector (rq) + rq_sectors (rq);
  rq->t_dispatch = now;
  cfqd->stats.dispatched++;
  cfqq->cfqg->st_dispatched++;
}

/* The oldest request if its deadline passed; checked once per slice. */
static struct rq *
cfq_check_fifo (struct cfqq *cfqq, uint64_t now)
{
  struct list *p;
  struct rq *rq;

  if (cfqq->fifo_expire)
    return NULL;
  cfqq->fifo_expire = true;
  p = list_first (&cfqq->fifo);
  if (!p)
    return NULL;
  rq = list_entry (p, struct rq, fifo);
  if (now < rq->t_fifo)
    return NULL;
  return rq;
}

/* Would cfq_check_fifo find an expired request now?  (Does not use up
 * the once-per-slice look.)
 */
static bool
cfq_fifo_expired (const struct cfqq *cfqq, uint64_t now)
{
  struct list *p;

  if (cfqq->fifo_expire)
    return false;
  p = list_first (&cfqq->fifo);
  return p && now >= list_entry (p, struct rq, fifo)->t_fifo;
}

static unsigned
cfq_prio_to_maxrq (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  unsigned base_rq = t_get (cfqd, T_SLICE_ASYNC_RQ);
  return 2 * (base_rq + base_rq * (CFQ_PRIO_LISTS - 1 - cfqq->ioprio));
}

/* The group to serve next: the leftmost on the group tree (rule 3 of
 * cfq-qos.c with caps), in the workload it was in when its last turn
 * ended.
 */
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

static void
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

/* Keep serving the active queue, or expire it and choose the next one.
 * NULL: nothing to dispatch now (idling, or waiting for completions).
 */
static struct cfqq *
cfq_select_queue (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue, *new_cfqq = NULL;

  if (!cfqq)
    goto new_queue;
  if (!cfqd->rq_queued)
    return NULL;

  /* We were waiting for the group to get backlogged: it did. */
  if (cfqq->wait_busy && !rb_empty (&cfqq->sort_list))
    goto expire;

  /* Async deadline: the group's writer is overdue, end the sync slice. */
  if (cfqq->sync && !cfqq->must_dispatch
      && cfq_async_overdue (cfqd, cfqq->cfqg, cfqq_prio (cfqq), now))
    goto expire;

  if (cfq_slice_used (cfqq, now) && !cfqq->must_dispatch) {
    /* The slice ran out while the group's only queue waited for its
     * last request: let it complete so the group keeps its place.
     */
    if (cfqq->cfqg->nr_cfqq == 1 && rb_empty (&cfqq->sort_list)
        && cfqq->dispatched && cfq_should_idle (cfqd, cfqq))
      return NULL;
    goto check_group_idle;
  }

  if (!rb_empty (&cfqq->sort_list))
    return cfqq;

  /* A queue with a request near the head: serve it rather than idle,
   * and set the two up to merge.
   */
  new_cfqq = cfq_close_cooperator (cfqd, cfqq);
  if (new_cfqq) {
    if (!cfqq->new_cfqq)
      cfq_setup_merge (cfqq, new_cfqq);
    goto expire;
  }

  /* Idling, or requests in flight and idling allowed: wait. */
  if (cfqd->idle_timer != SCHED_NEVER)
    return NULL;
  if (cfqq->dispatched && cfq_should_idle (cfqd, cfqq))
    return NULL;

check_group_idle:
  /* group_idle: the group's last queue has requests in flight. */
  if (t_get (cfqd, T_GROUP_IDLE) && cfqq->cfqg->nr_cfqq == 1
      && cfqq->cfqg->dispatched)
    return NULL;

expire:
  cfq_slice_expired (cfqd, false, now);
new_queue:
  if (!new_cfqq && cfq_idle_grace_wait (cfqd, now))
    return NULL;
  if (!new_cfqq)
    cfq_choose_cfqg (cfqd, now);
  else
    /* The cooperator's group is still the serving group. */
    cfqd->grp_st.active = new_cfqq->cfqg;
  cfqq = new_cfqq ? new_cfqq : cfq_get_next_queue (cfqd);
  __cfq_set_active_queue (cfqd, cfqq, now);
  return cfqq;
}

static bool
cfq_slice_used_soon (const struct cfqd *cfqd, const struct cfqq *cfqq,
                     uint64_t now)
{
  /* No request completed yet: can't estimate. */
  if (cfqq->slice_new)
    return true;
  return now + t_get (cfqd, T_SLICE_IDLE) * cfqq->dispatched
    > cfqq->slice_end;
}

/* Async depth allowed by low_latency: one more per slice_sync since the
 * last delayed sync completion.
 */
static unsigned
cfq_async_depth (const struct cfqd *cfqd, const struct cfqq *cfqq,
                 uint64_t now)
{
  uint64_t last_sync = now - (t_get (cfqd, T_GROUP_ASYNC)
                              ? cfqq->cfqg->last_delayed_sync
                              : cfqd->last_delayed_sync);
  uint64_t depth = last_sync / t_get (cfqd, T_SLICE_SYNC);

  return depth > 1u << 30 ? 1u << 30 : (unsigned) depth;
}

/* A sync request was inserted or completed within CFQ_SYNC_LATELY:
 * sync I/O is about, and more of it may come while an async backlog is
 * at the device (deviation 28).
 */
static bool
cfq_sync_lately (const struct cfqd *cfqd, const struct cfqq *cfqq,
                 uint64_t now)
{
  uint64_t last = t_get (cfqd, T_GROUP_ASYNC) ? cfqq->cfqg->last_sync
    : cfqd->last_sync;

  return last != SCHED_NEVER && now - last <= CFQ_SYNC_LATELY;
}

static bool
cfq_may_dispatch (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  unsigned max_dispatch;
  /* CFQ's async throttles look at the whole device; with group_async
   * (ours, deviation 35) at the queue's own group: one group's reads
   * never hold back another group's writes.
   */
  const unsigned *in_flight = t_get (cfqd, T_GROUP_ASYNC)
    ? cfqq->cfqg->rq_in_flight : cfqd->rq_in_flight;

  /* A request that must go (expired fifo, or the one we idled for) goes
   * past every limit below: later CFQ, see cfq_dispatch_request.
   */
  if (cfqq->must_dispatch)
    return true;
  /* A binary latency target misses: one request at the device at most. */
  if (cfq_lat_clamped (cfqd, cfqq->cfqg) && cfqq->cfqg->dispatched)
    return false;
  /* Drain async requests before starting sync I/O that idles. */
  if (cfq_should_idle (cfqd, cfqq) && in_flight[0])
    return false;
  /* Async queue while sync I/O is in flight: wait. */
  if (in_flight[1] && !cfqq->sync)
    return false;

  max_dispatch = cfq_lat_quantum (cfqd) / 2;
  if (max_dispatch < 1)
    max_dispatch = 1;
  if (cfq_class_idle (cfqq))
    max_dispatch = 1;

  if (cfqq->dispatched >= max_dispatch) {
    /* An idle-class queue has at most one request in flight. */
    if (cfq_class_idle (cfqq))
      return false;
    /* Others wait: no more from this one if its slice ends soon. */
    if (cfqd->busy_queues > 1 && cfq_slice_used_soon (cfqd, cfqq, now))
      return false;
    /* Sole busy queue: no limit, except for writeback on a disk while
     * sync I/O is about, which would wait behind its backlog (ours,
     * deviation 28, "Writeback backlog"); else deeper early in the
     * slice.
     */
    if (cfqd->busy_queues == 1
        && (cfqq->sync || cfq_nonrot (cfqd)
            || !cfq_sync_lately (cfqd, cfqq, now)))
      max_dispatch = ~0u;
    else
      max_dispatch = cfq_lat_quantum (cfqd);
  }

  /* Async: ramp up the depth after sync requests were delayed. */
  if (!cfqq->sync && t_get (cfqd, T_LOW_LATENCY)) {
    unsigned depth = cfq_async_depth (cfqd, cfqq, now);
    if (!depth && !cfqq->dispatched)
      depth = 1;
    if (depth < max_dispatch)
      max_dispatch = depth;
  }
  return cfqq->dispatched < max_dispatch;
}

static struct rq *
cfq_dispatch_request (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  struct rq *rq;

  /* An expired request must go out now, even past the sync-in-flight
   * and depth limits, and no sync arrival may preempt the queue before it
   * did (must_dispatch; Linux 3.x/4.x, not 2.6.36, which looked at the
   * fifo only once the queue could dispatch anyway).  Without this an
   * async writer whose requests all expired still waits for every sync
   * reader's slice, round after round.
   */
  rq = cfq_check_fifo (cfqq, now);
  if (rq)
    cfqq->must_dispatch = true;
  if (!cfq_may_dispatch (cfqd, cfqq, now))
    return NULL;
  if (qos_on (&cfqd->qos)
      && !cfq_qos_admit (cfqd, cfqq, rq ? rq : cfqq->next_rq, now)) {
    /* A cap holds it: the turn ends as if the queue had run dry. */
    cfq_slice_expired (cfqd, false, now);
    cfq_qos_refused (cfqd, cfqq);
    return NULL;
  }
  if (rq)
    cfqd->stats.fifo_expired++;
  else
    rq = cfqq->next_rq;
  cfq_dispatch_insert (cfqd, cfqq, rq, now);
  if (qos_on (&cfqd->qos))
    qos_account (&cfqq->cfqg->qos, rq, now, false);
  if (!cfqd->active_cic) {
    struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
    if (!cic->dead)
      cfqd->active_cic = cic;
  }
  return rq;
}

/* ---- Insertion ---------------------------------------------------------- */

/* Should new_cfqq, which just got rq, preempt the active queue?  The
 * rules in CFQ's order (cfq_should_preempt).
 */
static bool
cfq_should_preempt (struct cfqd *cfqd, struct cfqq *new_cfqq,
                    const struct rq *rq, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;

  if (!cfqq)
    return false;
  if (cfq_class_idle (new_cfqq))
    return false;
  /* A group its caps hold cannot use the disk it would take. */
  if (qos_on (&cfqd->qos) && qos_held (&new_cfqq->cfqg->qos, now))
    return false;
  if (cfq_class_idle (cfqq))
    return true;
  /* A non-RT request does not preempt an RT slice. */
  if (cfq_class_rt (cfqq) && !cfq_class_rt (new_cfqq))
    return false;
  /* Sync request, async active queue: unless the queue has a request
   * that must go first (expired fifo; later CFQ, deviation 15).
   */
  if (t_get (cfqd, T_GROUP_ASYNC) && new_cfqq->cfqg != cfqq->cfqg)
    return false;               /* within its group only (deviation 35) */
  if (rq_is_sync (rq) && !cfqq->sync && !cfqq->must_dispatch)
    return true;
  if (new_cfqq->cfqg != cfqq->cfqg)
    return false;
  if (cfq_slice_used (cfqq, now))
    return true;
  /* Idling on the sync-noidle tree for a queue that has nothing. */
  if (cfqd->serving_type == SYNC_NOIDLE_WORKLOAD
      && cfqq_type (new_cfqq) == SYNC_NOIDLE_WORKLOAD
      && new_cfqq->service_tree && new_cfqq->service_tree->count == 2
      && rb_empty (&cfqq->sort_list))
    return true;
  /* Metadata before regular I/O. */
  if ((rq->flags & RQ_META) && !cfqq->meta_pending)
    return true;
  /* RT preempts a non-RT slice. */
  if (cfq_class_rt (new_cfqq) && !cfq_class_rt (cfqq))
    return true;
  if (!cfqd->active_cic || !cfqq->wait_request)
    return false;
  /* As good as what we are idling for: close to the head. */
  return cfq_rq_close (cfqd, rq);
}

static void
cfq_preempt_queue (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  cfqd->stats.preemptions++;
  if (cfqd->active_queue)
    cfqd->active_queue->cfqg->st_preemptions++;
  cfq_slice_expired (cfqd, true, now);
  /* The new queue goes to the front of its tree: served next within its
   * workload.  As in 2.6.36 the group resumes its saved workload: a sync
   * request preempting an async queue inside the async workload slice
   * waits for that slice to end, which is what keeps a writer alive
   * under sync readers.  (2.6.39 clears the saved slice when the types
   * differ, so the sync queue runs at once and the writer starves.)
   */
  cfq_service_tree_add (cfqd, cfqq, true, now);
  cfqq->slice_end = 0;
  cfqq->slice_new = true;
}

static void
cfq_rq_enqueued (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                 struct sched_queue *cic, uint64_t now)
{
  cfqd->rq_queued++;
  if (rq->flags & RQ_META)
    cfqq->meta_pending++;

  cfq_update_io_thinktime (cfqd, cic, now);
  /* A flush has no place on the disk (the kernel's flushes bypass the
   * elevator): it moves neither the seek history nor the position.
   */
  if (rq->op != RQ_FLUSH)
    cfq_update_io_seektime (cfqd, cfqq, rq);
  cfq_update_idle_window (cfqd, cfqq, cic);
  if (rq->op != RQ_FLUSH)
    cfqq->last_request_pos = rq_sector (rq) + rq_sectors (rq);

  if (cfqq == cfqd->active_queue) {
    /* The request we idled for.  Larger than a page, or others waiting:
     * dispatch it now; else let it out when the timer fires, so tiny
     * requests get a chance to merge first (must_dispatch).
     */
    if (cfqq->wait_request) {
      cfqd->stats.idle_hits++;
      cfqq->cfqg->st_idle_hits++;
      if (rq->len > CFQ_PAGE_SIZE || cfqd->busy_queues > 1) {
        cfq_del_timer (cfqd);
        cfqq->wait_request = false;
      }
      else
        cfqq->must_dispatch = true;
    }
  }
  else if (cfq_should_preempt (cfqd, cfqq, rq, now)) {
    if (cfqd->run_queue && cfqd->run_queue == cfqd->active_queue) {
      if (!cfqd->preempt_pending)
        cfqd->preempt_pending = cfqq;
    }
    else
      cfq_preempt_queue (cfqd, cfqq, now);
  }
}

/* ---- The idle timer ------------------------------------------------------ */

static void
cfq_idle_slice_timer (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;
  bool timed_out = true;

  cfq_del_timer (cfqd);
  CFQ_TRACE (cfqd, cfqq, "idle fired%s",
             cfqq && cfqq->must_dispatch ? ": request arrived" : "");
  if (cfqq) {
    timed_out = false;
    /* A request came in during the window: let it through. */
    if (cfqq->must_dispatch)
      return;
    if (cfq_slice_used (cfqq, now))
      goto expire;
    /* Nobody else waits: keep the queue (and its slice). */
    if (!cfqd->busy_queues)
      return;
    if (!rb_empty (&cfqq->sort_list))
      return;
    /* The idle did not pay: forget the queue was deep. */
    cfqq->deep = false;
    cfqd->stats.idle_timeouts++;
    cfqq->cfqg->st_idle_timeouts++;
  }
expire:
  cfq_slice_expired (cfqd, timed_out, now);
}

static void
cfq_run_timer (struct cfqd *cfqd, uint64_t now)
{
  cfq_group_windows_expire (cfqd, now);
  if (cfqd->idle_timer != SCHED_NEVER && now >= cfqd->idle_timer)
    cfq_idle_slice_timer (cfqd, now);
}

/* ---- Ops ----------------------------------------------------------------- */

/* ---- Connections: merging, splitting, freeing --------------------------- */

static void
cfq_drop_link (struct cfqd *cfqd, struct cfqq *cfqq)
{
  struct cfqq *target = cfqq->new_cfqq;

  if (!target)
    return;
  cfqq->new_cfqq = NULL;
  target->nr_link--;
  if (target->owner)
    cfq_conn_maybe_free (cfqd, target->owner);
}

/* A connection stops pointing at cfqq. */
static void
cfq_put_conn_ref (struct cfqd *cfqd, struct cfqq *cfqq)
{
  cfqq->nr_conn--;
  if (!cfqq->nr_conn)
    cfq_drop_link (cfqd, cfqq);
  if (cfqq->nr_conn < 2)
    cfqq->coop = cfqq->split_coop = false;
  if (cfqq->owner)
    cfq_conn_maybe_free (cfqd, cfqq->owner);
}

static void
cfq_conn_maybe_free (struct cfqd *cfqd, struct sched_queue *cic)
{
  /* Freeing one connection drops its merge link, which may free the
   * target's connection in turn: walk the chain (links never cycle).
   */
  while (cic) {
    struct cfqq *own = &cic->own;
    struct sched_queue *next = NULL;

    if (!cic->dead || cic->nr_rq || own->nr_conn || own->nr_rq
        || own->nr_link)
      return;
    if (cfqd->active_queue == own)
      __cfq_slice_expired (cfqd, own, false, cfqd->now);
    /* Nothing may point at the queue once it is gone. */
    if (cfqd->run_queue == own)
      cfqd->run_queue = NULL;
    if (cfqd->preempt_pending == own)
      cfqd->preempt_pending = NULL;
    if (own->on_rr)
      cfq_del_cfqq_rr (cfqd, own);
    cfq_prio_tree_del (own);
    if (own->new_cfqq) {
      own->new_cfqq->nr_link--;
      next = own->new_cfqq->owner;
      own->new_cfqq = NULL;
    }
    if (cic->cfqg->drain_cic == cic)
      cic->cfqg->drain_cic = NULL;
    list_del (&cic->link);
    free (cic);
    cic = next;
  }
}

/* The sync queue a new request of cic goes to: split a shared queue that
 * turned seeky, follow a pending merge (cfq_set_request).
 */
static struct cfqq *
cfq_sync_queue (struct cfqd *cfqd, struct sched_queue *cic)
{
  struct cfqq *cfqq = cic->cfqq;

  if (cfqq->coop && cfqq->split_coop) {
    if (cfqq->nr_conn == 1) {
      cfqq->coop = cfqq->split_coop = false;
    }
    else if (cfqq != &cic->own) {
      /* The owner of the shared queue stays in it; the others leave, each
       * at its next request (the kernel gives the splitting connection a
       * fresh queue instead, whichever it is).
       */
      struct cfqq *own = &cic->own;
      cic->cfqq = own;
      own->nr_conn++;
      cfq_drop_link (cfqd, own);
      own->coop = own->split_coop = false;
      cfq_put_conn_ref (cfqd, cfqq);
      cfqd->stats.splits++;
      cfqq = own;
    }
  }
  if (cfqq->new_cfqq) {
    struct cfqq *target = cfqq->new_cfqq;
    cic->cfqq = target;
    target->nr_conn++;
    target->coop = true;
    cfq_put_conn_ref (cfqd, cfqq);
    cfqd->stats.merges++;
    cfqq = target;
  }
  return cfqq;
}

static struct sched_queue *
cfq_conn_alloc (struct cfqd *cfqd, struct sched_group *cfqg,
                enum sched_class cls, unsigned level)
{
  struct sched_queue *cic;

  if (cls < SCHED_CLASS_RT || cls > SCHED_CLASS_IDLE || level >= SCHED_LEVELS)
    return NULL;
  cic = calloc (1, sizeof *cic);
  if (!cic)
    return NULL;
  cic->cfqd = cfqd;
  cic->cfqg = cfqg;
  cic->cls = cls;
  cic->level = level;
  cic->last_end_request = SCHED_NEVER;
  cic->born = cic->lat_last = SCHED_NEVER;
  cfq_init_cfqq (cfqd, &cic->own, cfqg, cic, true, cls, level);
  cic->cfqq = &cic->own;
  cic->own.nr_conn = 1;
  list_add_tail (&cic->link, &cfqd->conns);
  return cic;
}

static struct sched *
cfq_create (void)
{
  struct cfqd *cfqd = calloc (1, sizeof *cfqd);

  if (!cfqd)
    return NULL;
  cfqd->s.ops = &cfq_ops;
  for (int i = 0; i < T_NR; i++)
    cfqd->tun[i] = cfq_tunables[i].def;
  rb_root_init (&cfqd->grp_st.rb);
  qos_sched_init (&cfqd->qos);
  qos_sched_set_slice (&cfqd->qos, t_get (cfqd, T_ROTATIONAL)
                       ? QOS_SLICE_ROT : QOS_SLICE_NONROT);
  list_init (&cfqd->groups);
  list_init (&cfqd->conns);
  cfqd->hw_tag = -1;
  cfqd->lat_turn = LAT_SCALE_ONE;
  cfqd->idle_timer = SCHED_NEVER;
  cfqd->wc_lag_wake = SCHED_NEVER;
  cfqd->serving_type = SYNC_NOIDLE_WORKLOAD;
  /* Start as if no sync request was delayed in the last second, so async
   * gets some depth at once (CFQ: jiffies - HZ).  now is 0 here; the
   * subtraction in cfq_async_depth is modular so this works from any
   * starting clock.
   */
  cfqd->last_delayed_sync = (uint64_t) 0 - NSEC_PER_SEC;
  cfqd->last_end_nonidle = (uint64_t) 0 - NSEC_PER_SEC;
  cfqd->last_sync = SCHED_NEVER;
  cfq_cost_default (cfqd);
  cfqd->root_group = cfq_group_alloc (cfqd, "root", CFQ_ROOT_WEIGHT);
  if (!cfqd->root_group)
    goto err;
  cfqd->root_conn = cfq_conn_alloc (cfqd, cfqd->root_group, SCHED_CLASS_BE, 4);
  if (!cfqd->root_conn)
    goto err;
  return &cfqd->s;

 err:
  if (cfqd->root_group)
    free (cfqd->root_group);
  free (cfqd);
  return NULL;
}

static void
cfq_destroy (struct sched *s)
{
  struct cfqd *cfqd = CFQD (s);
  struct list *p, *n;

  list_for_each_safe (p, n, &cfqd->conns)
    free (list_entry (p, struct sched_queue, link));
  list_for_each_safe (p, n, &cfqd->groups)
    free (list_entry (p, struct sched_group, link));
  free (cfqd);
}

static struct sched_queue *
cfq_queue_new (struct sched *s, struct sched_group *cfqg,
               enum sched_class cls, unsigned level)
{
  struct cfqd *cfqd = CFQD (s);

  return cfq_conn_alloc (cfqd, cfqg ? cfqg : cfqd->root_group, cls, level);
}

static void
cfq_queue_free (struct sched *s, struct sched_queue *cic)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = cic->cfqq;

  if (cic->dead)
    return;
  cic->dead = true;
  if (cfqd->active_cic == cic)
    cfqd->active_cic = NULL;
  /* The task exited (cfq_exit_cfqq): stop serving its queue. */
  if (cfqd->active_queue == cfqq && cfqq->nr_conn == 1)
    cfq_slice_expired (cfqd, false, cfqd->now);
  /* Pin cic while dropping its reference: the merge chain may lead back
   * to its own queue.
   */
  cic->nr_rq++;
  cfq_put_conn_ref (cfqd, cfqq);
  cic->nr_rq--;
  cfq_conn_maybe_free (cfqd, cic);
}

static void
cfq_insert (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
  struct cfqq *cfqq;

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cfq_lat_insert (cfqd, cic, now);
  cic->nr_rq++;
  sched_classify (&cic->wstate, rq, now);
  if (rq_is_sync (rq))
    cfqq = cfq_sync_queue (cfqd, cic);
  else if (cic->cls == SCHED_CLASS_IDLE)
    cfqq = &cic->cfqg->async_idle_cfqq;
  else
    cfqq = &cic->cfqg->async_cfqq[cic->cls == SCHED_CLASS_RT ? 0 : 1]
                                 [cic->level];
  cfqq->nr_rq++;
  /* Another of its requests still out, queued or in the driver: the
   * group overlaps requests (deviation 32's windows are for those).  Not
   * on_st: an active queue idling with nothing queued keeps its group on
   * the tree.  The group's queued count is qos's (kept with nothing set).
   */
  if (cfqq->cfqg->dispatched || qos_waiting (&cfqq->cfqg->qos))
    cfqq->cfqg->last_overlap = now;
  rq->sq = cfqq;
  rq->t_insert = now;
  if (rq_is_sync (rq)) {
    cfqd->last_sync = now;
    cfqq->cfqg->last_sync = now;
  }
  rq->t_fifo = now + t_get (cfqd, rq_is_sync (rq) ? T_FIFO_EXPIRE_SYNC
                                                  : T_FIFO_EXPIRE_ASYNC);
  rq->t_dispatch = 0;
  rb_clear (&rq->rb);
  list_add_tail (&rq->fifo, &cfqq->fifo);
  /* A new sync queue joins the tree its first request says it belongs
   * to (deviation 20, "Seek history of a new queue").  With slice_idle=0
   * nothing idles, and the kernel's placement (SYNC) is kept.
   */
  if (cfqq->sync && !cfqq->last_request_pos && !cfqq->on_rr
      && rq->op != RQ_FLUSH && cfqq->idle_window
      && t_get (cfqd, T_SLICE_IDLE) && cfq_first_rq_seeky (cfqd, rq))
    cfqq->idle_window = false;
  if (!cfqq->last_request_pos && rq->op != RQ_FLUSH)
    CFQ_TRACE (cfqd, cfqq, "first request: sector %llu, head %llu, %s",
               (unsigned long long) rq_sector (rq),
               (unsigned long long) cfqd->last_position,
               cfqq->idle_window ? "idles" : "does not idle");
  qos_enqueue (&cfqq->cfqg->qos, rq, now);
  cfq_add_rq_rb (cfqd, cfqq, rq, now);
  cfq_rq_enqueued (cfqd, cfqq, rq, cic, now);
  cfqd->stats.inserted++;
}

/* The next time something changes without an insert or a completion:
 * the idle timer, the end of the active slice, the async depth growing.
 * Fifo deadlines wake nothing in CFQ: they are only looked at when a
 * slice starts, which one of the other events causes.
 */
static uint64_t
cfq_next_deadline (struct cfqd *cfqd, uint64_t now)
{
  uint64_t next = cfqd->idle_timer;
  struct cfqq *cfqq = cfqd->active_queue;

  if (qos_on (&cfqd->qos))      /* a hold ends, a reservation comes due */
    next = umin64 (next, qos_next_event (&cfqd->qos, now));
  if (!cfqd->busy_queues)
    return next;
  if (!cfqq && cfq_idle_grace_wait (cfqd, now))
    next = umin64 (next, cfqd->last_end_nonidle + CFQ_IDLE_GRACE);
  if (cfqd->wc_lag_wake > now)  /* a lag window holding dispatch ends */
    next = umin64 (next, cfqd->wc_lag_wake);
  if (cfqq && !cfqq->slice_new && cfqq->slice_end > now)
    next = umin64 (next, cfqq->slice_end);
  if (cfqq && !cfqq->sync && !rb_empty (&cfqq->sort_list)
      && t_get (cfqd, T_LOW_LATENCY)) {
    uint64_t ss = t_get (cfqd, T_SLICE_SYNC);
    uint64_t d = cfq_async_depth (cfqd, cfqq, now);
    uint64_t late = t_get (cfqd, T_GROUP_ASYNC)
      ? cfqq->cfqg->last_delayed_sync : cfqd->last_delayed_sync;
    if (d < 1u << 30)
      next = umin64 (next, late + (d + 1) * ss);
  }
  return next;
}

/* One request while cfq_wc_on (deviation 31, cfq-wc.c): no active
 * queue, no slice; the chosen request's group is charged at once.
 */
static struct rq *
cfq_wc_dispatch (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = NULL;
  struct rq *rq;

  if (cfqd->active_queue)
    cfq_slice_expired (cfqd, false, now);
  cfqd->serving_group = NULL;
  rq = cfq_wc_select (cfqd, &cfqq, now);
  if (!rq)
    return NULL;
  cfq_dispatch_insert (cfqd, cfqq, rq, now);
  cfq_wc_served (cfqd, cfqq, rq, now);
  return rq;
}

/* One request from the queue to serve, if any. */
static struct rq *
cfq_dispatch_one (struct cfqd *cfqd, uint64_t now)
{
  struct rq *rq = NULL;
  struct cfqq *cfqq;

  if (cfq_wc_on (cfqd))
    return cfq_wc_dispatch (cfqd, now);
  if (cfqd->busy_queues && (cfqq = cfq_select_queue (cfqd, now)) != NULL
      && !rb_empty (&cfqq->sort_list)
      && (rq = cfq_dispatch_request (cfqd, cfqq, now)) != NULL) {
    cfqq->slice_dispatch++;
    cfqq->must_dispatch = false;
    /* An async queue expires once it used its request budget, an idle
     * class queue after every dispatch, if others wait.
     */
    if (cfqd->busy_queues > 1
        && ((!cfqq->sync && cfqq->slice_dispatch >= cfq_prio_to_maxrq (cfqd, cfqq))
            || cfq_class_idle (cfqq))) {
      cfqq->slice_end = now + 1;
      cfq_slice_expired (cfqd, false, now);
    }
  }
  return rq;
}

/* With caps or reservations (cfq-qos.c): a reserved or released group's
 * request first, else CFQ's; a refusal ends a turn (rule 4): choose again,
 * a few times.
 */
static struct rq *
cfq_qos_dispatch (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = NULL;
  bool reserved;
  struct rq *rq;

  rq = cfq_qos_select (cfqd, &cfqq, &reserved, now);
  if (rq) {
    cfq_dispatch_insert (cfqd, cfqq, rq, now);
    cfq_qos_served (cfqd, cfqq, rq, reserved, now);
  }
  for (int tries = 0; !rq && tries < 4; tries++) {
    cfqd->qos_refused = false;
    rq = cfq_dispatch_one (cfqd, now);
    if (!cfqd->qos_refused)
      break;
  }
  return rq;
}

/* cfq_dispatch_requests: one request, if any. */
static struct rq *
cfq_dispatch_requests (struct cfqd *cfqd, uint64_t now)
{
  if (qos_on (&cfqd->qos))
    return cfq_qos_dispatch (cfqd, now);
  return cfq_dispatch_one (cfqd, now);
}

/* The queue run owed to the last completion is done: a preemption that
 * arrived after the completion takes effect now.
 */
static void
cfq_finish_queue_run (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *p = cfqd->preempt_pending;

  cfqd->preempt_pending = NULL;
  cfqd->run_queue = NULL;
  if (p && p->on_rr && cfqd->active_queue && cfqd->active_queue != p)
    cfq_preempt_queue (cfqd, p, now);
}

static struct rq *
cfq_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{
  struct cfqd *cfqd = CFQD (s);
  struct rq *rq;

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cfqd->wc_lag_wake = SCHED_NEVER;
  rq = cfq_dispatch_requests (cfqd, now);
  if (cfqd->run_queue || cfqd->preempt_pending) {
    bool pending = cfqd->preempt_pending != NULL;
    cfq_finish_queue_run (cfqd, now);
    if (!rq && pending)
      rq = cfq_dispatch_requests (cfqd, now);
  }
  *next = cfq_next_deadline (cfqd, now);
  return rq;
}

static bool
cfq_should_wait_busy (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  struct sched_queue *cic = cfqd->active_cic;

  if (!rb_empty (&cfqq->sort_list))
    return false;
  if (cfqq->cfqg->nr_cfqq > 1)
    return false;
  if (cfq_slice_used (cfqq, now))
    return true;
  if (cic && CFQ_SAMPLE_VALID (cic->ttime_samples)
      && (int64_t) (cfqq->slice_end - now) < (int64_t) cic->ttime_mean)
    return true;
  /* "Only one jiffy left". */
  if (cfqq->slice_end - now <= CFQ_JIFFY)
    return true;
  return false;
}

static void
cfq_completed (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = rq->sq;
  struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
  const bool sync = rq_is_sync (rq);

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cfq_update_hw_tag (cfqd);
  if (qos_on (&cfqd->qos))
    cfq_qos_completed (cfqd, rq, now);
  cfqd->rq_in_driver--;
  cfqq->dispatched--;
  cfqq->cfqg->dispatched--;
  cfq_group_present (cfqd, cfqq->cfqg);
  if (!cfqq->cfqg->dispatched)
    cfq_group_drain_done (cfqd, cfqq->cfqg, now);
  cfqd->rq_in_flight[cfqq->sync]--;
  cfqq->cfqg->rq_in_flight[cfqq->sync]--;
  cfqq->cfqg->inflight_cost -= rq->cost;
  cfqd->inflight_cost -= rq->cost;
  cost_observe (&cfqd->cost, now, -1, rq->cost);
  if (rq->pflags & CFQ_RQ_SEEK)
    cfq_update_seek_cost (cfqd, rq, now);
  cfqd->last_completion = now;
  cfqd->stats.completed++;
  cfq_lat_completed (cfqd, cic, rq, now);
  if (!cfq_class_idle (cfqq))
    cfqd->last_end_nonidle = now;

  if (sync) {
    cic->last_end_request = now;
    cfqd->last_sync = now;
    cfqq->cfqg->last_sync = now;
    if (rq->t_insert + t_get (cfqd, T_FIFO_EXPIRE_SYNC) <= now) {
      cfqd->last_delayed_sync = now;
      cfqq->cfqg->last_delayed_sync = now;
    }
  }

  if (cfqd->active_queue == cfqq) {
    const bool cfqq_empty = rb_empty (&cfqq->sort_list);

    /* The slice starts at the first completion. */
    if (cfqq->slice_new) {
      cfq_set_prio_slice (cfqd, cfqq, now);
      cfqq->slice_new = false;
    }
    /* Group's only queue about to run out: extend the slice by an idle
     * window so the group keeps its place on the tree.
     */
    if (cfq_should_wait_busy (cfqd, cfqq, now)) {
      uint64_t extend = t_get (cfqd, T_SLICE_IDLE);
      if (!extend)
        extend = t_get (cfqd, T_GROUP_IDLE);
      cfqq->slice_end = now + extend;
      cfqq->wait_busy = true;
      cfqd->stats.wait_busy++;
    }
    /* No idling for expired, idle-class or async queues, queues with
     * requests left, or when a close cooperator is ready.
     */
    if (cfq_slice_used (cfqq, now) || cfq_class_idle (cfqq))
      cfq_slice_expired (cfqd, true, now);
    else if (sync && cfqq_empty && !cfq_close_cooperator (cfqd, cfqq))
      cfq_arm_slice_timer (cfqd, now);
  }

  /* The queue run that follows a completion in Linux: choose the queue
   * now, before the completed request's owner can resubmit; if that run
   * would dispatch from it, a preemption arriving before our next
   * dispatch() waits until that request went (cfq_finish_queue_run).
   */
  if (cfqd->busy_queues && !cfq_wc_on (cfqd)) {
    struct cfqq *run = cfq_select_queue (cfqd, now);
    if (run && !rb_empty (&run->sort_list)) {
      /* That run looks at the fifo first (cfq_dispatch_request): an
       * expired request must go, and no sync arrival preempts it.
       */
      if (cfq_fifo_expired (run, now))
        run->must_dispatch = true;
      if (cfq_may_dispatch (cfqd, run, now))
        cfqd->run_queue = run;
    }
  }

  /* cfq_put_request: drop the request's references.  cic stays pinned
   * while the queue's owner goes, so a merge chain can't free it first.
   */
  cfqq->nr_rq--;
  if (cfqq->owner && cfqq->owner != cic)
    cfq_conn_maybe_free (cfqd, cfqq->owner);
  cic->nr_rq--;
  cfq_conn_maybe_free (cfqd, cic);
}

static bool
cfq_has_work (struct sched *s)
{
  return CFQD (s)->rq_queued > 0;
}

/* A request taken back before dispatch: its client went away, or the
 * server stops (the kernel never takes a request back from the elevator;
 * the nearest is a request merged into another, which leaves its queue
 * the same way, cfq_remove_request).  It leaves its queue and its
 * group's caps as cfq_dispatch_insert would take it, but goes nowhere:
 * nothing is charged, the queue keeps its history.  An emptied queue
 * leaves the service tree (the active one expires, unless it has
 * requests at the device to idle for), and the references the request
 * held go as at completion, which frees a connection already closed.
 */
static void
cfq_cancel (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = rq->sq;
  struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cfq_remove_request (cfqd, cfqq, rq);
  qos_dequeue (&cfqq->cfqg->qos, rq);
  CFQ_TRACE (cfqd, cfqq, "request taken back: sector %llu, %u left",
             (unsigned long long) rq_sector (rq),
             cfqq->queued[0] + cfqq->queued[1]);
  if (rb_empty (&cfqq->sort_list)) {
    if (cfqd->preempt_pending == cfqq)
      cfqd->preempt_pending = NULL;
    if (cfqq == cfqd->active_queue) {
      if (!cfqq->dispatched)
        cfq_slice_expired (cfqd, false, now);
    }
    else if (cfqq->on_rr)
      cfq_del_cfqq_rr (cfqd, cfqq);
  }
  cfqq->nr_rq--;
  if (cfqq->owner && cfqq->owner != cic)
    cfq_conn_maybe_free (cfqd, cfqq->owner);
  cic->nr_rq--;
  cfq_conn_maybe_free (cfqd, cic);
}

/* The mechanism holds a dispatched request back (it waits for a buffer):
 * it is no longer at the device, so nothing waits for it.  As the
 * kernel's cfq_deactivate_request, and also out of the queue's and the
 * group's dispatched counts, which decide those waits here (idling with
 * requests in flight, group_idle, wait-busy, the group's drain): a
 * request that may wait seconds for memory must not hold the disk for
 * its queue meanwhile (deviation 33).  Its dispatch was counted and, in
 * IOPS mode, charged already.
 */
static void
cfq_deactivate (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = rq->sq;

  cfqd->now = now;
  cfqd->rq_in_driver--;
  cfqd->rq_in_flight[cfqq->sync]--;
  cfqq->cfqg->rq_in_flight[cfqq->sync]--;
  cfqq->cfqg->inflight_cost -= rq->cost;
  cfqd->inflight_cost -= rq->cost;
  cost_observe (&cfqd->cost, now, -1, 0);
  cfqq->dispatched--;
  cfqq->cfqg->dispatched--;
  cfq_group_present (cfqd, cfqq->cfqg);
  if (!cfqq->cfqg->dispatched)
    cfq_group_drain_done (cfqd, cfqq->cfqg, now);
}

/* It goes to the device after all: counted again.  If its group is not
 * the one being served, its device time is charged to the group as it
 * drains (deviations 19 and 33), in time mode, as for a request left at
 * the device by an expired slice.
 */
static void
cfq_activate (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = rq->sq;

  cfqd->now = now;
  cfqd->rq_in_driver++;
  cfqd->rq_in_flight[cfqq->sync]++;
  cfqq->cfqg->rq_in_flight[cfqq->sync]++;
  cfqq->cfqg->inflight_cost += rq->cost;
  cfqd->inflight_cost += rq->cost;
  cost_observe (&cfqd->cost, now, +1, 0);
  cfqq->dispatched++;
  cfqq->cfqg->dispatched++;
  cfq_group_present (cfqd, cfqq->cfqg);
  if (cfqd->grp_st.active != cfqq->cfqg && !iops_mode (cfqd) &&
      !cfqq->cfqg->drain_since)
    cfq_group_drain_start (cfqq->cfqg, cfqq, now);
}

/* The cost model's parameters: from now on they are the device's. */
static int
cfq_set_cost (struct sched *s, const struct cost_params *p, const char *source)
{
  struct cfqd *cfqd = CFQD (s);
  int r = cost_model_init (&cfqd->cost, p, source);

  if (r == 0)
    cfqd->cost_given = true;
  return r;
}

const struct sched_ops cfq_ops = {
  .name = "cfq",
  .create = cfq_create,
  .destroy = cfq_destroy,
  .set = cfq_set,
  .get = cfq_get,
  .group_new = cfq_group_new,
  .group_set_weight = cfq_group_set_weight,
  .group_set_qos = cfq_group_set_qos,
  .group_qos_counts = cfq_group_qos_counts,
  .group_qos_charge = cfq_group_qos_charge,
  .group_set_latency = cfq_group_set_latency,
  .queue_new = cfq_queue_new,
  .queue_free = cfq_queue_free,
  .insert = cfq_insert,
  .dispatch = cfq_dispatch,
  .completed = cfq_completed,
  .has_work = cfq_has_work,
  .cancel = cfq_cancel,
  .deactivate = cfq_deactivate,
  .activate = cfq_activate,
  .set_cost = cfq_set_cost,
  .get_cost = cfq_get_cost,
  .stats = cfq_stats,
  .tunables = &cfq_sched_tunables,
  .set_trace = cfq_set_trace,
};
