/* uring.c: the io_uring backend, and the null backend.
 *
 * One ring per process, used only by the dispatcher thread.  The engine
 * queues SQEs during its pass and calls submit once at the end, so a pass
 * costs one io_uring_enter whatever its size.  Completions are signalled
 * on an eventfd registered with the ring, which the loop watches with an
 * ev_io; the callback drains every CQE there is.
 *
 * The files are registered (IOSQE_FIXED_FILE) so the kernel skips the fd
 * table lookup on each request.  A read or write that comes back short is
 * advanced and resubmitted, -EAGAIN and -EINTR are resubmitted as they
 * were (the model is liburing's examples/io_uring-cp.c); a read that hits
 * end of file fills the rest with zeroes (the last partial block of a
 * file is read past EOF when the span is rounded up).  Anything else is
 * the request's result.
 *
 * The null backend completes everything at submit time (reads return
 * zeroes): it measures the engine and scheduler without a disk.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>

#include <ev.h>
#include <liburing.h>

#include "engine.h"

/* The kernel fills read buffers behind valgrind's back: tell it. */
#if defined __has_include && __has_include (<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void) (p), (void) (n))
#endif

struct backend {
  struct io_uring ring;         /* dispatcher thread only */
  struct ev_loop *loop;
  ev_io cqw;                    /* efd readable: CQEs to reap */
  ev_timer retry;               /* io_uring_submit failed transiently */
  int efd;                      /* eventfd registered with the ring, -1 if none */
  bool ring_ok;                 /* ring initialised */
  bool fixed;                   /* files registered: fd = slot index */
  unsigned queued;              /* SQEs prepared, not yet submitted */
  int fds[ENGINE_FILE_SLOTS];   /* the files by slot */
  unsigned nr_fds;              /* slots in use */
};

static int
uring_prep (struct backend *b, struct creq *r)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&b->ring);
  int fd = b->fixed ? r->file : b->fds[r->file];
  uint32_t done = r->done_bytes;

  if (!sqe) {
    /* Cannot happen while the ring has >= queue_depth entries, but be
     * safe: push what is queued to make room.
     */
    int n = io_uring_submit (&b->ring);

    if (n > 0)
      b->queued -= (unsigned) n < b->queued ? (unsigned) n : b->queued;
    sqe = io_uring_get_sqe (&b->ring);
    if (!sqe)
      return -EBUSY;
  }
  switch (r->eop) {
  case EOP_READ:
    io_uring_prep_read (sqe, fd, (char *) r->buf + done, r->rq.len - done,
                        r->rq.off + done);
    sqe->rw_flags = r->rw_flags;
    break;
  case EOP_WRITE:
    io_uring_prep_write (sqe, fd, (char *) r->buf + done, r->rq.len - done,
                         r->rq.off + done);
    sqe->rw_flags = r->rw_flags;
    break;
  case EOP_FSYNC:
    io_uring_prep_fsync (sqe, fd, IORING_FSYNC_DATASYNC);
    break;
  case EOP_FALLOCATE:
    io_uring_prep_fallocate (sqe, fd, r->mode, r->rq.off, r->rq.len);
    break;
  default:
    return -EINVAL;
  }
  if (b->fixed)
    sqe->flags |= IOSQE_FIXED_FILE;
  io_uring_sqe_set_data (sqe, r);
  b->queued++;
  return 0;
}

static int
uring_queue (struct backend *b, struct creq *r)
{
  return uring_prep (b, r);
}

static void
uring_submit (struct backend *b)
{
  int n;

  if (b->queued == 0)
    return;
  n = io_uring_submit (&b->ring);
  if (n >= 0) {
    b->queued -= (unsigned) n < b->queued ? (unsigned) n : b->queued;
    return;
  }
  /* -EAGAIN, -EBUSY (completion queue full), -EINTR: the SQEs stay in the
   * ring; try again shortly (a completion may get there first).
   */
  if (!ev_is_active (&b->retry)) {
    ev_timer_set (&b->retry, 0.001, 0.);
    ev_timer_start (b->loop, &b->retry);
  }
}

static void
retry_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  uring_submit (w->data);
}

/* One CQE: finish the request or send the rest of it again. */
static void
uring_cqe (struct backend *b, struct creq *r, int res)
{
  if (res == -EAGAIN || res == -EINTR)
    goto again;
  if (res < 0) {
    engine_complete (r, res);
    return;
  }
  switch (r->eop) {
  case EOP_READ:
    if (res == 0) {             /* end of file: the rest reads as zeroes */
      memset ((char *) r->buf + r->done_bytes, 0, r->rq.len - r->done_bytes);
      engine_complete (r, 0);
      return;
    }
    VALGRIND_MAKE_MEM_DEFINED ((char *) r->buf + r->done_bytes, res);
    /* fallthrough */
  case EOP_WRITE:
    if (res == 0) {
      engine_complete (r, -EIO);
      return;
    }
    r->done_bytes += (uint32_t) res;
    if (r->done_bytes < r->rq.len)
      goto again;
    engine_complete (r, 0);
    return;
  default:
    engine_complete (r, 0);
    return;
  }

 again:
  res = uring_prep (b, r);
  if (res)
    engine_complete (r, res);
}

static void
cq_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct backend *b = w->data;
  struct io_uring_cqe *cqe;
  uint64_t v;
  unsigned head, n;

  if (read (b->efd, &v, sizeof v) < 0 && errno != EAGAIN)
    return;
  do {
    n = 0;
    io_uring_for_each_cqe (&b->ring, head, cqe) {
      uring_cqe (b, io_uring_cqe_get_data (cqe), cqe->res);
      n++;
    }
    io_uring_cq_advance (&b->ring, n);
  } while (n);
  /* Resubmissions made here go out with the pass's batch. */
}

static void
uring_destroy (struct backend *b)
{
  if (ev_is_active (&b->cqw))
    ev_io_stop (b->loop, &b->cqw);
  if (ev_is_active (&b->retry))
    ev_timer_stop (b->loop, &b->retry);
  if (b->ring_ok)
    io_uring_queue_exit (&b->ring);
  if (b->efd >= 0)
    close (b->efd);
  free (b);
}

static int
uring_create (struct ev_loop *loop, const struct engine_cfg *cfg,
              struct backend **bp)
{
  struct backend *b = calloc (1, sizeof *b);
  struct io_uring_params p;
  unsigned entries = 8;
  int err;

  if (!b)
    return -ENOMEM;
  b->loop = loop;
  b->efd = -1;
  memcpy (b->fds, cfg->fds, sizeof b->fds);
  b->nr_fds = cfg->nr_fds ? cfg->nr_fds : FILE_NR;
  while (entries < cfg->queue_depth)
    entries <<= 1;

  /* COOP_TASKRUN: no IPI to interrupt us for completion work; it runs
   * when we next enter the kernel (we always do: epoll_wait or submit).
   */
  memset (&p, 0, sizeof p);
  p.flags = IORING_SETUP_COOP_TASKRUN;
  err = io_uring_queue_init_params (entries, &b->ring, &p);
  if (err == -EINVAL) {
    memset (&p, 0, sizeof p);
    err = io_uring_queue_init_params (entries, &b->ring, &p);
  }
  if (err)
    goto err;
  b->ring_ok = true;

  b->fixed = io_uring_register_files (&b->ring, b->fds, b->nr_fds) == 0;

  b->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (b->efd < 0) {
    err = -errno;
    goto err;
  }
  err = io_uring_register_eventfd (&b->ring, b->efd);
  if (err)
    goto err;
  ev_io_init (&b->cqw, cq_cb, b->efd, EV_READ);
  b->cqw.data = b;
  ev_io_start (loop, &b->cqw);
  ev_timer_init (&b->retry, retry_cb, 0., 0.);
  b->retry.data = b;
  *bp = b;
  return 0;

 err:
  uring_destroy (b);
  return err;
}

const struct backend_ops uring_backend_ops = {
  .name = "io_uring",
  .create = uring_create,
  .destroy = uring_destroy,
  .queue = uring_queue,
  .submit = uring_submit,
};

/* ---- null ------------------------------------------------------------------ */

struct null_backend {
  struct creq *head, **tail;    /* queued since the last submit */
};

static int
null_create (struct ev_loop *loop, const struct engine_cfg *cfg,
             struct backend **bp)
{
  struct null_backend *nb = calloc (1, sizeof *nb);

  if (!nb)
    return -ENOMEM;
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

static void
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
    engine_complete (r, 0);
  }
}

const struct backend_ops null_backend_ops = {
  .name = "null",
  .create = null_create,
  .destroy = null_destroy,
  .queue = null_queue,
  .submit = null_submit,
};
