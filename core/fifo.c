/* fifo.c: the first-come first-served baseline.
 *
 * FIFO decides nothing: requests leave in the order they arrived, whatever
 * connection or group they came from.  It exists to measure the engine
 * without a policy in the way (the mechanism's own cost), and as the
 * baseline the CFQ results are compared against: under FIFO every tenant
 * gets the device in proportion to how much it asks, so a greedy
 * sequential writer starves a latency-sensitive reader.
 *
 * Groups and queues are accepted, so the engine never special-cases the
 * policy, but they only carry their parameters; nothing is idled, no timer
 * is ever asked for, and dispatch() never returns a deadline.  Caps and
 * reservations (include/qos.h) are refused: holding one tenant back, or
 * serving one first, needs the per-group queues FIFO does not have, and
 * the baseline should stay the plain arrival order (the config reports
 * the keys with scheduler = fifo as errors).
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "qos.h"
#include "sched.h"

struct sched_group {
  struct list link;             /* on fifod->groups */
  unsigned weight;
};

struct sched_queue {
  struct list link;             /* on fifod->queues */
  struct sched_group *g;
  unsigned pending;             /* inserted, not completed */
  bool dead;                    /* queue_free called; free at pending==0 */
};

struct fifod {
  struct sched s;               /* must be first */
  struct list rqs;              /* queued requests, arrival order */
  struct list groups;
  struct list queues;
  unsigned queued;              /* requests on rqs */
};

#define FIFOD(sp) container_of (sp, struct fifod, s)

static struct sched *
fifo_create (void)
{
  struct fifod *fd = calloc (1, sizeof *fd);

  if (!fd)
    return NULL;
  fd->s.ops = &fifo_ops;
  list_init (&fd->rqs);
  list_init (&fd->groups);
  list_init (&fd->queues);
  return &fd->s;
}

static void
fifo_destroy (struct sched *s)
{
  struct fifod *fd = FIFOD (s);
  struct list *p, *n;

  list_for_each_safe (p, n, &fd->queues)
    free (list_entry (p, struct sched_queue, link));
  list_for_each_safe (p, n, &fd->groups)
    free (list_entry (p, struct sched_group, link));
  free (fd);
}

static int
fifo_set (struct sched *s, const char *key, uint64_t val)
{
  (void) s; (void) key; (void) val;
  return -ENOENT;               /* FIFO has no tunables */
}

static int
fifo_get (struct sched *s, const char *key, uint64_t *val)
{
  (void) s; (void) key; (void) val;
  return -ENOENT;
}

static struct sched_group *
fifo_group_new (struct sched *s, const char *name, unsigned weight)
{
  struct fifod *fd = FIFOD (s);
  struct sched_group *g;

  (void) name;
  if (weight < SCHED_WEIGHT_MIN || weight > SCHED_WEIGHT_MAX)
    return NULL;
  g = calloc (1, sizeof *g);
  if (!g)
    return NULL;
  g->weight = weight;
  list_add_tail (&g->link, &fd->groups);
  return g;
}

static int
fifo_group_set_weight (struct sched *s, struct sched_group *g, unsigned w)
{
  (void) s;
  if (w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX)
    return -ERANGE;
  g->weight = w;
  return 0;
}

static int
fifo_group_set_qos (struct sched *s, struct sched_group *g,
                    const struct qos_conf *c)
{
  (void) s; (void) g;
  return qos_conf_empty (c) ? 0 : -ENOTSUP;
}

static struct sched_queue *
fifo_queue_new (struct sched *s, struct sched_group *g,
                enum sched_class cls, unsigned level)
{
  struct fifod *fd = FIFOD (s);
  struct sched_queue *q;

  (void) cls; (void) level;
  q = calloc (1, sizeof *q);
  if (!q)
    return NULL;
  q->g = g;
  list_add_tail (&q->link, &fd->queues);
  return q;
}

static void
fifo_queue_put (struct sched_queue *q)
{
  if (q->dead && q->pending == 0) {
    list_del (&q->link);
    free (q);
  }
}

static void
fifo_queue_free (struct sched *s, struct sched_queue *q)
{
  (void) s;
  q->dead = true;
  fifo_queue_put (q);
}

static void
fifo_insert (struct sched *s, struct rq *rq, uint64_t now)
{
  struct fifod *fd = FIFOD (s);

  rq->t_insert = now;
  rq->sq = rq->q;
  if (rq->q)
    rq->q->pending++;
  list_add_tail (&rq->fifo, &fd->rqs);
  fd->queued++;
}

static struct rq *
fifo_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{
  struct fifod *fd = FIFOD (s);
  struct list *p = list_first (&fd->rqs);
  struct rq *rq;

  *next = SCHED_NEVER;
  if (!p)
    return NULL;
  rq = list_entry (p, struct rq, fifo);
  list_del (&rq->fifo);
  fd->queued--;
  rq->t_dispatch = now;
  return rq;
}

static void
fifo_completed (struct sched *s, struct rq *rq, uint64_t now)
{
  struct sched_queue *q = rq->sq;

  (void) s; (void) now;
  if (q) {
    q->pending--;
    fifo_queue_put (q);
  }
}

static bool
fifo_has_work (struct sched *s)
{
  return FIFOD (s)->queued > 0;
}

/* Off the arrival list; the queue goes if it was freed and this was its
 * last request.
 */
static void
fifo_cancel (struct sched *s, struct rq *rq, uint64_t now)
{
  struct fifod *fd = FIFOD (s);
  struct sched_queue *q = rq->sq;

  (void) now;
  list_del (&rq->fifo);
  fd->queued--;
  if (q) {
    q->pending--;
    fifo_queue_put (q);
  }
}

/* Its statistics: FIFO does not learn whether the device queues, so
 * hw_tag is -1 (not known), as CFQ's before it has seen enough.  A group
 * has none of its own.
 */
struct fifo_snap {
  int hw_tag;                   /* -1 */
};

static const struct stat_field fifo_fields[] = {
  { .name = "hw_tag", .unit = "bool", .repr = STAT_INT,
    .off = offsetof (struct fifo_snap, hw_tag), .show = STAT_ALL,
    .help = "Whether the device queues requests (NCQ): 1 yes, 0 no, -1 not"
    " known (FIFO does not look)." },
};

static const struct stat_field fifo_table = {
  .show = STAT_ALL, STAT_SUB (fifo_fields),
};

static void
fifo_stats (struct sched *s, struct sched_group *g, stat_emit_fn *emit,
            void *opaque)
{
  struct fifo_snap f = { .hw_tag = -1 };

  if (!g)
    emit (opaque, &fifo_table, &f);
}

const struct sched_ops fifo_ops = {
  .name = "fifo",
  .create = fifo_create,
  .destroy = fifo_destroy,
  .set = fifo_set,
  .get = fifo_get,
  .group_new = fifo_group_new,
  .group_set_weight = fifo_group_set_weight,
  .group_set_qos = fifo_group_set_qos,
  .queue_new = fifo_queue_new,
  .queue_free = fifo_queue_free,
  .insert = fifo_insert,
  .dispatch = fifo_dispatch,
  .completed = fifo_completed,
  .has_work = fifo_has_work,
  .cancel = fifo_cancel,
  .stats = fifo_stats,
};
