/* test-fifo.c: the FIFO baseline serves in arrival order across queues,
 * never asks for a timer, and frees a queue only after its last request;
 * a request taken back before dispatch (sched_cancel) is never handed
 * out, and the others keep their order.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
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

  CHECK (ops);
  CHECK_STREQ (ops->name, "fifo");
  CHECK_NULL (sched_lookup ("nonesuch"));
  s = sched_create (ops);
  CHECK (s);
  CHECK_EQ (sched_set (s, "slice_idle", 0), -ENOENT);
  CHECK_EQ (sched_get (s, "slice_idle", &v), -ENOENT);
  CHECK_NULL (sched_group_new (s, "bad", 99));
  CHECK_NULL (sched_group_new (s, "bad", 1001));
  g = sched_group_new (s, "g", 500);
  CHECK (g);
  CHECK_EQ (sched_group_set_weight (s, g, 50), -ERANGE);
  CHECK_EQ (sched_group_set_weight (s, g, 800), 0);
  q1 = sched_queue_new (s, g, SCHED_CLASS_BE, 4);
  q2 = sched_queue_new (s, g, SCHED_CLASS_RT, 0);
  CHECK (q1);
  CHECK (q2);

  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, 0, &next));
  CHECK_EQ (next, SCHED_NEVER);

  /* Interleave two queues; RT class and sector order must not matter. */
  for (int i = 0; i < 8; i++) {
    memset (&rq[i], 0, sizeof rq[i]);
    rq[i].off = (uint64_t) (8 - i) * 4096;
    rq[i].len = 4096;
    rq[i].op = i % 2 ? RQ_WRITE : RQ_READ;
    rq[i].q = i % 2 ? q2 : q1;
    sched_insert (s, &rq[i], 100 + i);
  }
  CHECK (sched_has_work (s));
  for (int i = 0; i < 8; i++) {
    struct rq *r = sched_dispatch (s, 1000 + i, &next);
    CHECK_PTR_EQ (r, &rq[i]);
    CHECK_EQ (next, SCHED_NEVER);
    CHECK_EQ (r->t_insert, (uint64_t) 100 + i);
    CHECK_EQ (r->t_dispatch, (uint64_t) 1000 + i);
  }
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, 2000, &next));

  /* Free q2 while its requests are still in flight; completing them later
   * must be safe (valgrind checks the memory side).
   */
  sched_queue_free (s, q2);
  for (int i = 0; i < 8; i++)
    sched_completed (s, &rq[i], 3000 + i);

  /* Taken back: the first, one in the middle and the last of six; the
   * rest leave in arrival order, and nothing is left.
   */
  for (int i = 0; i < 6; i++) {
    memset (&rq[i], 0, sizeof rq[i]);
    rq[i].off = (uint64_t) i * 4096;
    rq[i].len = 4096;
    rq[i].q = q1;
    sched_insert (s, &rq[i], 4000 + i);
  }
  sched_cancel (s, &rq[0], 4100);
  sched_cancel (s, &rq[3], 4100);
  sched_cancel (s, &rq[5], 4100);
  CHECK (sched_has_work (s));
  CHECK_PTR_EQ (sched_dispatch (s, 4200, &next), &rq[1]);
  CHECK_EQ (next, SCHED_NEVER);
  CHECK_PTR_EQ (sched_dispatch (s, 4201, &next), &rq[2]);
  CHECK_PTR_EQ (sched_dispatch (s, 4202, &next), &rq[4]);
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, 4203, &next));
  sched_completed (s, &rq[1], 4300);
  sched_completed (s, &rq[2], 4300);
  /* Everything taken back: no work, nothing to dispatch. */
  sched_insert (s, &rq[0], 4400);
  sched_cancel (s, &rq[0], 4401);
  CHECK (!sched_has_work (s));
  CHECK_NULL (sched_dispatch (s, 4402, &next));
  /* A closed connection goes with its last request, taken back or
   * completed (valgrind and ASan check the memory): q1's with rq[4]
   * completing, a new one's with its request taken back.
   */
  sched_queue_free (s, q1);
  sched_completed (s, &rq[4], 4500);
  q1 = sched_queue_new (s, g, SCHED_CLASS_BE, 4);
  CHECK (q1);
  rq[0].q = q1;
  sched_insert (s, &rq[0], 4600);
  sched_queue_free (s, q1);
  sched_cancel (s, &rq[0], 4601);
  CHECK (!sched_has_work (s));
  sched_destroy (s);
  printf ("fifo: ok\n");
  check_done ("test-fifo");
  return 0;
}
