/* cfq-tree.c: the queue service trees of a group, and the workload choice.
 *
 * Inside a group a busy queue sits on one service tree by class (RT, BE,
 * IDLE) and workload (SYNC: sync queues that idle, SYNC_NOIDLE: seeky or
 * thinking sync queues, ASYNC), keyed by rb_key, the virtual time it should
 * start.  The rules:
 * - A queue joins at now + its slice's shortfall against a level-4 sync
 *   queue, times the group's busy queues (cfq_slice_offset, deviation 21),
 *   minus the slice it had left (slice_resid); a preempting queue goes to
 *   the front (add_front); an IDLE-class queue behind the last one.
 * - Classes are strict: RT before BE before IDLE (choose_service_tree).
 * - Within a class the workload keeps the disk for a workload slice: the
 *   group's share of target_latency, in proportion to its queues; async
 *   is capped by its share of all busy queues and scaled by
 *   slice_async/slice_sync; sync gets at least two idle windows.  When it
 *   ends, the workload whose first key is lowest goes next (cfq_choose_wl),
 *   unless the group's async queue is overdue (cfq_async_overdue,
 *   deviation 16).
 * - The first queue of the chosen tree is served next (cfq_get_next_queue).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

/* ---- Queue service trees --------------------------------------------- */

static int64_t
cfq_slice_offset (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  /* Just an approximation: lower levels start later.  Measured from a
   * level-4 sync queue, not from level 0 as in the kernel (deviation 21,
   * "Service tree keys"), so that queues of the same kind are
   * served in the order they became busy whatever nr_cfqq was then.
   */
  return ((int64_t) cfqq->cfqg->nr_cfqq - 1)
    * ((int64_t) cfq_prio_slice (cfqd, 1, CFQ_PRIO_DEFAULT)
       - (int64_t) cfq_prio_slice (cfqd, cfqq->sync, cfqq->ioprio));
}

static void
cfq_st_insert (struct rb_root *st, struct cfqq *cfqq)
{
  struct rb_node **p = &st->node, *parent = NULL;
  bool left = true;

  while (*p) {
    parent = *p;
    if (cfqq->rb_key < cfqq_of (parent)->rb_key)
      p = &parent->left;
    else {
      p = &parent->right;
      left = false;
    }
  }
  rb_insert_at (st, &cfqq->rb_node, parent, p, left);
}

void
cfq_service_tree_add (struct cfqd *cfqd, struct cfqq *cfqq, bool add_front,
                      uint64_t now)
{
  struct rb_root *st = service_tree_for (cfqq->cfqg, cfqq_prio (cfqq),
                                         cfqq_type (cfqq));
  int64_t rb_key;
  bool new_cfqq = true;

  if (cfq_class_idle (cfqq)) {
    struct rb_node *last = rb_last (st);
    rb_key = CFQ_IDLE_DELAY;
    if (last && last != &cfqq->rb_node)
      rb_key += cfqq_of (last)->rb_key;
    else
      rb_key += (int64_t) now;
  }
  else if (!add_front) {
    /* Subtract the residual slice carried from the last service: a
     * negative residual (overrun) puts the queue further back.
     */
    rb_key = cfq_slice_offset (cfqd, cfqq) + (int64_t) now;
    rb_key -= cfqq->slice_resid;
    cfqq->slice_resid = 0;
  }
  else {
    struct rb_node *first = rb_first (st);
    rb_key = -(int64_t) CFQ_FRONT_OFFSET;
    rb_key += first ? cfqq_of (first)->rb_key : (int64_t) now;
  }

  if (rb_linked (&cfqq->rb_node)) {
    new_cfqq = false;
    if (rb_key == cfqq->rb_key && cfqq->service_tree == st)
      return;
    rb_erase (cfqq->service_tree, &cfqq->rb_node);
    cfqq->service_tree = NULL;
  }
  cfqq->rb_key = rb_key;
  cfqq->service_tree = st;
  cfq_st_insert (st, cfqq);
  if (add_front || !new_cfqq)
    return;
  cfq_group_service_tree_add (cfqd, cfqq->cfqg);
}

void
cfq_resort_rr_list (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  if (cfqq->on_rr) {
    cfq_service_tree_add (cfqd, cfqq, false, now);
    cfq_prio_tree_add (cfqd, cfqq);
  }
}

void
cfq_add_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  cfqq->on_rr = true;
  cfqd->busy_queues++;
  cfqd->busy_idle_queues += cfq_class_idle (cfqq);
  cfq_resort_rr_list (cfqd, cfqq, now);
}

void
cfq_del_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq)
{
  cfqq->on_rr = false;
  if (rb_linked (&cfqq->rb_node)) {
    rb_erase (cfqq->service_tree, &cfqq->rb_node);
    cfqq->service_tree = NULL;
  }
  cfq_prio_tree_del (cfqq);
  cfq_group_service_tree_del (cfqd, cfqq->cfqg);
  cfqd->busy_queues--;
  cfqd->busy_idle_queues -= cfq_class_idle (cfqq);
}

struct cfqq *
cfq_get_next_queue (struct cfqd *cfqd)
{
  struct rb_root *st = service_tree_for (cfqd->serving_group,
                                         cfqd->serving_prio,
                                         cfqd->serving_type);

  if (!cfqd->rq_queued || !st || rb_empty (st))
    return NULL;
  return cfqq_of (rb_first (st));
}

/* The async deadline (ours, deviation 16): the group's async queue of
 * class prio holds a request past fifo_expire_async and had no turn for
 * fifo_expire_async.  It then gets the next turn: its workload is chosen
 * at the next queue switch, and a sync slice of the group ends early.
 * The second condition bounds it to one turn per fifo_expire_async, so
 * a writer with a deep backlog cannot take the disk from the readers.
 */
bool
cfq_async_overdue (const struct cfqd *cfqd, struct sched_group *cfqg,
                   enum wl_prio prio, uint64_t now)
{
  const uint64_t expire = t_get (cfqd, T_FIFO_EXPIRE_ASYNC);
  struct rb_node *n;
  struct cfqq *cfqq;
  struct list *p;

  if (!cfqg || prio == IDLE_WORKLOAD)
    return false;
  n = rb_first (&cfqg->st[prio][ASYNC_WORKLOAD]);
  if (!n)
    return false;
  cfqq = cfqq_of (n);
  p = list_first (&cfqq->fifo);
  if (!p || now < list_entry (p, struct rq, fifo)->t_fifo)
    return false;
  return now - cfqq->last_served >= expire;
}

static enum wl_type
cfq_choose_wl (struct sched_group *cfqg, enum wl_prio prio)
{
  enum wl_type cur_best = SYNC_NOIDLE_WORKLOAD;
  bool key_valid = false;
  int64_t lowest_key = 0;

  for (int i = 0; i <= SYNC_WORKLOAD; i++) {
    struct rb_node *n = rb_first (service_tree_for (cfqg, prio, i));
    if (n && (!key_valid || cfqq_of (n)->rb_key < lowest_key)) {
      lowest_key = cfqq_of (n)->rb_key;
      cur_best = i;
      key_valid = true;
    }
  }
  return cur_best;
}

void
choose_service_tree (struct cfqd *cfqd, struct sched_group *cfqg,
                     uint64_t now)
{
  uint64_t slice, group_slice;
  unsigned count, busy;
  struct rb_root *st;

  if (!cfqg) {
    cfqd->serving_prio = IDLE_WORKLOAD;
    cfqd->workload_expires = now + CFQ_JIFFY;
    return;
  }
  /* Classes are strict: RT > BE > IDLE. */
  if (cfq_group_busy_queues_wl (RT_WORKLOAD, cfqg))
    cfqd->serving_prio = RT_WORKLOAD;
  else if (cfq_group_busy_queues_wl (BE_WORKLOAD, cfqg))
    cfqd->serving_prio = BE_WORKLOAD;
  else {
    cfqd->serving_prio = IDLE_WORKLOAD;
    cfqd->workload_expires = now + CFQ_JIFFY;
    return;
  }

  /* Keep the workload type while its slice lasts and it has queues. */
  st = service_tree_for (cfqg, cfqd->serving_prio, cfqd->serving_type);
  count = st->count;
  if (cfq_async_overdue (cfqd, cfqg, cfqd->serving_prio, now))
    cfqd->serving_type = ASYNC_WORKLOAD;        /* async deadline */
  else if (count && now < cfqd->workload_expires)
    return;
  else
    cfqd->serving_type = cfq_choose_wl (cfqg, cfqd->serving_prio);
  st = service_tree_for (cfqg, cfqd->serving_prio, cfqd->serving_type);
  count = st->count;

  /* The workload slice: the group's share of target_latency, in
   * proportion to this workload's queues against the class's.
   */
  group_slice = cfq_group_slice (cfqd, cfqg);
  busy = cfq_group_busy_queues_wl (cfqd->serving_prio, cfqg);
  if (cfqg->busy_queues_avg[cfqd->serving_prio] > busy)
    busy = cfqg->busy_queues_avg[cfqd->serving_prio];
  slice = group_slice * count / (busy ? busy : 1);

  if (cfqd->serving_type == ASYNC_WORKLOAD) {
    /* Async is capped by its share of all busy queues, and scaled by
     * the async/sync slice ratio.
     */
    uint64_t tmp = cfq_lat_target_latency (cfqd)
      * cfqg_busy_async_queues (cfqg);
    tmp /= cfqd->busy_queues ? cfqd->busy_queues : 1;
    slice = umin64 (slice, tmp);
    slice = slice * t_get (cfqd, T_SLICE_ASYNC) / t_get (cfqd, T_SLICE_SYNC);
  }
  else
    /* A sync workload gets at least two idle windows. */
    slice = umax64 (slice, 2 * t_get (cfqd, T_SLICE_IDLE));

  slice = umax64 (slice, CFQ_MIN_TT);
  cfqd->workload_expires = now + slice;
}
