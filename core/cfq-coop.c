/* cfq-coop.c: cooperating queues: who is close, and the links to merge.
 *
 * Two clients reading one area in turns (a thread pool) look seeky one by
 * one and sequential together.  Every queue with a next request is on its
 * group's prio tree for its level, keyed by that request's sector
 * (cfq_prio_tree_add; deviation 11).  When the active queue runs dry, the
 * queue whose next request is within CFQQ_CLOSE_THR of the head is served
 * instead of idling (cfq_close_cooperator), and the two are linked to
 * merge (cfq_setup_merge, towards the queue with more connections).  The
 * rules:
 * - Only sync, non-seeky queues of the same group and the same RT-ness
 *   cooperate, and only with merge=1.
 * - The merge happens at the connection's next request (cfq_sync_queue):
 *   it moves to the target queue, which is then shared (coop).
 * - A shared queue that turns seeky is marked at its expiry and split at
 *   each connection's next request: back to its own embedded queue, the
 *   owner staying (deviation 14).
 * - A connection and its embedded queue are freed when it is dead, has no
 *   request pending, and no connection or merge link refers to its queue
 *   (nr_conn, nr_rq, nr_link: the kernel's cfqq->ref by kind).
 * The merge and the split at a connection's next request, and the freeing
 * (which may expire the queue), are cfq.c's (cfq_sync_queue,
 * cfq_put_conn_ref, cfq_conn_maybe_free): this file only finds and links.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

/* Cooperator lookup tree: queues by the sector of their next request. */
void
cfq_prio_tree_del (struct cfqq *cfqq)
{
  if (cfqq->p_root) {
    rb_erase (cfqq->p_root, &cfqq->p_node);
    cfqq->p_root = NULL;
  }
}

void
cfq_prio_tree_add (struct cfqd *cfqd, struct cfqq *cfqq)
{
  struct rb_node **p, *parent = NULL;
  uint64_t sector;
  bool left = true;

  (void) cfqd;
  cfq_prio_tree_del (cfqq);
  if (cfq_class_idle (cfqq) || !cfqq->next_rq)
    return;
  cfqq->p_root = &cfqq->cfqg->prio_trees[cfqq->ioprio];
  sector = rq_sector (cfqq->next_rq);
  p = &cfqq->p_root->node;
  while (*p) {
    parent = *p;
    if (sector < rq_sector (cfqq_of_p (parent)->next_rq))
      p = &parent->left;
    else {
      p = &parent->right;
      left = false;
    }
  }
  rb_insert_at (cfqq->p_root, &cfqq->p_node, parent, p, left);
}

uint64_t
cfq_dist_from_last (const struct cfqd *cfqd, const struct rq *rq)
{
  uint64_t s = rq_sector (rq);
  return s >= cfqd->last_position ? s - cfqd->last_position
                                  : cfqd->last_position - s;
}

bool
cfq_rq_close (const struct cfqd *cfqd, const struct rq *rq)
{
  return cfq_dist_from_last (cfqd, rq) <= CFQQ_CLOSE_THR;
}

/* The queue in cur's prio tree whose next request is closest to the head,
 * if close enough (cfqq_close).
 */
static struct cfqq *
cfqq_close (struct cfqd *cfqd, struct cfqq *cur)
{
  struct rb_root *root = &cur->cfqg->prio_trees[cur->ioprio];
  struct rb_node *n = root->node, *floor = NULL, *ceil = NULL;
  uint64_t sector = cfqd->last_position;
  struct cfqq *best = NULL;

  while (n) {
    uint64_t s = rq_sector (cfqq_of_p (n)->next_rq);
    if (s == sector && cfqq_of_p (n) != cur)
      return cfqq_of_p (n);
    if (s < sector) {
      floor = n;
      n = n->right;
    }
    else {
      ceil = n;
      n = n->left;
    }
  }
  if (floor && cfqq_of_p (floor) == cur)
    floor = rb_prev (floor);
  if (ceil && cfqq_of_p (ceil) == cur)
    ceil = rb_next (ceil);
  if (floor && cfq_rq_close (cfqd, cfqq_of_p (floor)->next_rq))
    best = cfqq_of_p (floor);
  if (ceil && cfq_rq_close (cfqd, cfqq_of_p (ceil)->next_rq)
      && (!best || cfq_dist_from_last (cfqd, cfqq_of_p (ceil)->next_rq)
          < cfq_dist_from_last (cfqd, best->next_rq)))
    best = cfqq_of_p (ceil);
  return best;
}

struct cfqq *
cfq_close_cooperator (struct cfqd *cfqd, struct cfqq *cur)
{
  struct cfqq *cfqq;

  if (!t_get (cfqd, T_MERGE))
    return NULL;
  if (cfq_class_idle (cur) || !cur->sync || CFQQ_SEEKY (cur))
    return NULL;
  /* Don't search if it's the only queue of the group. */
  if (cur->cfqg->nr_cfqq == 1)
    return NULL;
  cfqq = cfqq_close (cfqd, cur);
  if (!cfqq)
    return NULL;
  if (cur->cfqg != cfqq->cfqg)
    return NULL;
  if (!cfqq->sync || CFQQ_SEEKY (cfqq))
    return NULL;
  if (cfq_class_rt (cfqq) != cfq_class_rt (cur))
    return NULL;
  return cfqq;
}

/* Link cfqq to merge with new_cfqq at its connections' next request, in
 * the direction of the lesser amount of work (cfq_setup_merge).
 */
void
cfq_setup_merge (struct cfqq *cfqq, struct cfqq *new_cfqq)
{
  struct cfqq *c;
  int guard = 0;

  if (!new_cfqq->nr_conn)
    return;
  /* Avoid a circular list and skip interim queue merges. */
  while ((c = new_cfqq->new_cfqq)) {
    if (c == cfqq || ++guard > 64)
      return;
    new_cfqq = c;
  }
  if (!cfqq->nr_conn || !new_cfqq->nr_conn || cfqq == new_cfqq)
    return;
  if (new_cfqq->nr_conn >= cfqq->nr_conn) {
    cfqq->new_cfqq = new_cfqq;
    new_cfqq->nr_link++;
  }
  else {
    new_cfqq->new_cfqq = cfqq;
    cfqq->nr_link++;
  }
}
