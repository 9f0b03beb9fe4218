/* cfq-rq.c: the requests of a queue: kept in sector order, and the one
 * to serve next (next_rq) chosen as CFQ chooses it, onwards from the head
 * with a penalty for going back (cfq_choose_req, from AS).
 *
 * Below cfq.c, which inserts and dispatches; above the queue trees (a
 * queue given its first request joins its service tree, cfq-tree.c) and
 * the prio trees (a queue is keyed there by its next_rq, cfq-coop.c).
 */
#include <stdbool.h>
#include <stdint.h>

#include "cfq-priv.h"

/* ---- Request choice inside a queue ---------------------------------- */

/* Which of rq1 and rq2 is better served after position last: sync before
 * async, META first, then the shortest head movement, where going back at
 * most back_seek_max costs back_seek_penalty times the distance and going
 * back further is a wrap (cfq_choose_req, from AS).
 */
static struct rq *
cfq_choose_req (const struct cfqd *cfqd, struct rq *rq1, struct rq *rq2,
                uint64_t last)
{
  uint64_t s1, s2, d1 = 0, d2 = 0, back_max;
  unsigned wrap = 0;

  if (rq1 == NULL || rq1 == rq2)
    return rq2;
  if (rq2 == NULL)
    return rq1;
  if (rq_is_sync (rq1) != rq_is_sync (rq2))
    return rq_is_sync (rq1) ? rq1 : rq2;
  if ((rq1->flags & RQ_META) != (rq2->flags & RQ_META))
    return (rq1->flags & RQ_META) ? rq1 : rq2;

  s1 = rq_sector (rq1);
  s2 = rq_sector (rq2);
  back_max = t_get (cfqd, T_BACK_SEEK_MAX) * 2;         /* KiB -> sectors */

  if (s1 >= last)
    d1 = s1 - last;
  else if (s1 + back_max >= last)
    d1 = (last - s1) * t_get (cfqd, T_BACK_SEEK_PENALTY);
  else
    wrap |= 1;
  if (s2 >= last)
    d2 = s2 - last;
  else if (s2 + back_max >= last)
    d2 = (last - s2) * t_get (cfqd, T_BACK_SEEK_PENALTY);
  else
    wrap |= 2;

  switch (wrap) {
  case 0:
    if (d1 < d2)
      return rq1;
    if (d2 < d1)
      return rq2;
    return s1 >= s2 ? rq1 : rq2;
  case 2:
    return rq1;
  case 1:
    return rq2;
  default:
    /* Both behind: start with the one further back (one back seek). */
    return s1 <= s2 ? rq1 : rq2;
  }
}

struct rq *
cfq_find_next_rq (const struct cfqd *cfqd, struct cfqq *cfqq, struct rq *last)
{
  struct rb_node *rbnext = rb_next (&last->rb);
  struct rb_node *rbprev = rb_prev (&last->rb);
  struct rq *next = NULL, *prev = NULL;

  if (rbprev)
    prev = rq_of (rbprev);
  if (rbnext)
    next = rq_of (rbnext);
  else {
    rbnext = rb_first (&cfqq->sort_list);
    if (rbnext && rbnext != &last->rb)
      next = rq_of (rbnext);
  }
  return cfq_choose_req (cfqd, next, prev, rq_sector (last));
}

/* ---- Requests in a queue --------------------------------------------- */

static bool
rq_sector_less (const struct rb_node *a, const struct rb_node *b)
{
  return rq_sector (rq_of (a)) < rq_sector (rq_of (b));
}

void
cfq_add_rq_rb (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
               uint64_t now)
{
  struct rq *prev;

  cfqq->queued[rq_is_sync (rq)]++;
  rb_insert (&cfqq->sort_list, &rq->rb, rq_sector_less);
  if (!cfqq->on_rr)
    cfq_add_cfqq_rr (cfqd, cfqq, now);
  prev = cfqq->next_rq;
  cfqq->next_rq = cfq_choose_req (cfqd, cfqq->next_rq, rq,
                                  cfqd->last_position);
  if (prev != cfqq->next_rq)
    cfq_prio_tree_add (cfqd, cfqq);
}

void
cfq_remove_request (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq)
{
  if (cfqq->next_rq == rq) {
    cfqq->next_rq = cfq_find_next_rq (cfqd, cfqq, rq);
    if (cfqq->next_rq == rq)
      cfqq->next_rq = NULL;
  }
  list_del (&rq->fifo);
  cfqq->queued[rq_is_sync (rq)]--;
  rb_erase (&cfqq->sort_list, &rq->rb);
  if (rb_empty (&cfqq->sort_list))
    cfqq->next_rq = NULL;
  /* The queue leaves the service tree when it expires; the prio tree
   * follows next_rq at once.
   */
  if (cfqq->next_rq)
    cfq_prio_tree_add (cfqd, cfqq);
  else
    cfq_prio_tree_del (cfqq);
  cfqd->rq_queued--;
  if (rq->flags & RQ_META)
    cfqq->meta_pending--;
}
