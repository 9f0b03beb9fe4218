/* broken-scheds.c: deliberately broken policies, to test cfqsim's watchdog.
 *
 * Linked into tests/sim/cfqsim-broken in place of tools/cfqsim-scheds.c.
 * "test-stall" takes requests and never dispatches nor asks for a timer;
 * "test-spin" never dispatches and always asks to be called again now.
 * Neither is a real policy: they exist so tests/test-sim-fifo.sh can check
 * that cfqsim reports a stalled scheduler instead of hanging or reporting.
 */
#include "cfqsim.h"

struct broken {
  struct sched s;
  uint64_t queued;              /* requests inserted */
  bool spin;                    /* test-spin */
};

struct sched_group { int unused; };

struct sched_queue { int unused; };

static struct sched_group broken_group;

static struct sched_queue broken_queue;

static const struct sched_ops broken_stall_ops, broken_spin_ops;

static struct sched *
broken_create_common (const struct sched_ops *ops)
{
  struct broken *b = xcalloc (1, sizeof *b);
  b->s.ops = ops;
  b->spin = ops == &broken_spin_ops;
  return &b->s;
}

static struct sched *broken_create_stall (void)
{ return broken_create_common (&broken_stall_ops); }

static struct sched *broken_create_spin (void)
{ return broken_create_common (&broken_spin_ops); }

static void broken_destroy (struct sched *s) { free (s); }

static int broken_set (struct sched *s, const char *k, uint64_t v)
{ return -ENOENT; }

static int broken_get (struct sched *s, const char *k, uint64_t *v)
{ return -ENOENT; }

static struct sched_group *
broken_group_new (struct sched *s, const char *n, unsigned w)
{ return &broken_group; }

static int broken_set_weight (struct sched *s, struct sched_group *g,
                              unsigned w)
{ return 0; }

static struct sched_queue *
broken_queue_new (struct sched *s, struct sched_group *g,
                  enum sched_class c, unsigned l)
{ return &broken_queue; }

static void broken_queue_free (struct sched *s, struct sched_queue *q) { }

static void broken_insert (struct sched *s, struct rq *rq, uint64_t now)
{ ((struct broken *) s)->queued++; }

static struct rq *
broken_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{
  *next = ((struct broken *) s)->spin ? now : SCHED_NEVER;
  return NULL;
}

static void broken_completed (struct sched *s, struct rq *rq, uint64_t now) { }

static bool broken_has_work (struct sched *s)
{ return ((struct broken *) s)->queued > 0; }

static void broken_cancel (struct sched *s, struct rq *rq, uint64_t now)
{ ((struct broken *) s)->queued--; }

#define BROKEN_OPS(nm, cr) { .name = nm, .create = cr, \
    .destroy = broken_destroy, .set = broken_set, .get = broken_get, \
    .group_new = broken_group_new, .group_set_weight = broken_set_weight, \
    .queue_new = broken_queue_new, .queue_free = broken_queue_free, \
    .insert = broken_insert, .dispatch = broken_dispatch, \
    .completed = broken_completed, .has_work = broken_has_work, \
    .cancel = broken_cancel }

static const struct sched_ops broken_stall_ops =
  BROKEN_OPS ("test-stall", broken_create_stall);

static const struct sched_ops broken_spin_ops =
  BROKEN_OPS ("test-spin", broken_create_spin);

const struct sched_ops *const sim_extra_scheds[] = {
  &broken_stall_ops, &broken_spin_ops, NULL,
};
