/* test-fifo.c: the FIFO baseline serves in arrival order across queues,
 * never asks for a timer, and frees a queue only after its last request.
 */
#include <assert.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sched.h"

int
main (void)
{
  const struct sched_ops *ops = sched_lookup ("fifo");
  struct sched *s;
  struct sched_group *g;
  struct sched_queue *q1, *q2;
  struct rq rq[8];
  uint64_t next, v;

  assert (ops && strcmp (ops->name, "fifo") == 0);
  assert (sched_lookup ("nonesuch") == NULL);
  s = sched_create (ops);
  assert (s);
  assert (sched_set (s, "slice_idle", 0) == -ENOENT);
  assert (sched_get (s, "slice_idle", &v) == -ENOENT);
  assert (sched_group_new (s, "bad", 99) == NULL);
  assert (sched_group_new (s, "bad", 1001) == NULL);
  g = sched_group_new (s, "g", 500);
  assert (g);
  assert (sched_group_set_weight (s, g, 50) == -ERANGE);
  assert (sched_group_set_weight (s, g, 800) == 0);
  q1 = sched_queue_new (s, g, SCHED_CLASS_BE, 4);
  q2 = sched_queue_new (s, g, SCHED_CLASS_RT, 0);
  assert (q1 && q2);

  assert (!sched_has_work (s));
  assert (sched_dispatch (s, 0, &next) == NULL);
  assert (next == SCHED_NEVER);

  /* Interleave two queues; RT class and sector order must not matter. */
  for (int i = 0; i < 8; i++) {
    memset (&rq[i], 0, sizeof rq[i]);
    rq[i].off = (uint64_t) (8 - i) * 4096;
    rq[i].len = 4096;
    rq[i].op = i % 2 ? RQ_WRITE : RQ_READ;
    rq[i].q = i % 2 ? q2 : q1;
    sched_insert (s, &rq[i], 100 + i);
  }
  assert (sched_has_work (s));
  for (int i = 0; i < 8; i++) {
    struct rq *r = sched_dispatch (s, 1000 + i, &next);
    assert (r == &rq[i]);
    assert (next == SCHED_NEVER);
    assert (r->t_insert == (uint64_t) 100 + i);
    assert (r->t_dispatch == (uint64_t) 1000 + i);
  }
  assert (!sched_has_work (s));
  assert (sched_dispatch (s, 2000, &next) == NULL);

  /* Free q2 while its requests are still in flight; completing them later
   * must be safe (valgrind checks the memory side).
   */
  sched_queue_free (s, q2);
  for (int i = 0; i < 8; i++)
    sched_completed (s, &rq[i], 3000 + i);
  sched_queue_free (s, q1);
  sched_destroy (s);
  printf ("fifo: ok\n");
  return 0;
}
