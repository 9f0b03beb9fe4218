/* backend-null.c: the null backend.
 *
 * Completes everything at submit time, reads returning zeroes: it
 * measures the engine and the scheduler without a disk (nbdkit's
 * BENCHMARKING starts from its null plugin for the same reason), and it
 * lets tests/unit/test-engine.c run the engine without a file.
 *
 * Threads: under the engine lock, like every backend (engine.h).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"

struct null_backend {
  struct engine *e;             /* for engine_complete */
  struct creq *head, **tail;    /* queued since the last submit */
};

static int
null_create (struct engine *e, struct ev_loop *loop,
             const struct engine_cfg *cfg, struct backend **bp)
{
  struct null_backend *nb = calloc (1, sizeof *nb);

  if (!nb)
    return -ENOMEM;
  nb->e = e;
  nb->tail = &nb->head;
  *bp = (struct backend *) nb;
  return 0;
}

static void
null_destroy (struct backend *b)
{
  free (b);
}

static int
null_queue (struct backend *b, struct creq *r)
{
  struct null_backend *nb = (struct null_backend *) b;

  r->next = NULL;
  *nb->tail = r;
  nb->tail = &r->next;
  return 0;
}

static bool
null_submit (struct backend *b)
{
  struct null_backend *nb = (struct null_backend *) b;
  struct creq *r = nb->head, *next;

  nb->head = NULL;
  nb->tail = &nb->head;
  for (; r; r = next) {
    next = r->next;
    if (r->eop == EOP_READ)
      memset (r->buf, 0, r->rq.len);
    engine_complete (nb->e, r, 0);
  }
  return false;
}

const struct backend_ops null_backend_ops = {
  .name = "null",
  .create = null_create,
  .destroy = null_destroy,
  .queue = null_queue,
  .submit = null_submit,
};
