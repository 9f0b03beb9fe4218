/* backend-uring.c: the io_uring backend.
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
 * io_uring_submit itself can fail.  -EAGAIN, -EBUSY, -EINTR and -ENOMEM
 * are the kernel being short of something for a moment: the SQEs stay in
 * the ring and a 1 ms timer tries again, up to URING_RETRIES times in a
 * row.  Anything else (or the retries used up) will not get better by
 * waiting, so the SQEs the kernel has not taken are withdrawn from the
 * ring and their requests fail with EIO, with the reason in the log:
 * the client learns at once, and no request is left hanging.
 *
 * -D cfq.fail_submit=N and -D cfq.busy_submit=N make the next N submits
 * fail as if the kernel had said EBADF (permanent) or EAGAIN (transient),
 * to test exactly that (tests/test-submit-errors.sh).
 *
 * Threads: everything here runs under the engine lock (engine.h), on the
 * dispatcher or on a worker taking the direct path; only wait and sync
 * run without it: wait touches nothing but the ring's completion queue,
 * sync nothing but its request and the files, which never change.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/uio.h>
#include <sys/syscall.h>

#include <ev.h>
#include <liburing.h>

#include <nbdkit-plugin.h>

#include "engine.h"

/* The kernel fills read buffers behind valgrind's back: tell it. */
#if defined __has_include && __has_include (<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void) (p), (void) (n))
#endif

/* Transient io_uring_submit failures in a row before the requests fail:
 * 1 ms apart, so about a second.
 */
#define URING_RETRIES 1000

/* Fault injection for tests (nbdkit -D cfq.fail_submit=N etc.): the
 * next N submits with work fail with EBADF, or with EAGAIN.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_fail_submit;
NBDKIT_DLL_PUBLIC int cfq_debug_busy_submit;

struct backend {
  struct engine *e;             /* for engine_complete */
  struct io_uring ring;         /* under the engine lock */
  struct ev_loop *loop;
  ev_io cqw;                    /* efd readable: CQEs to reap */
  ev_timer retry;               /* io_uring_submit failed transiently */
  int efd;                      /* eventfd registered with the ring, -1 if none */
  bool ring_ok;                 /* ring initialised */
  bool fixed;                   /* files registered: fd = slot index */
  bool quiet;                   /* eventfd off: a worker waits on the ring */
  unsigned queued;              /* SQEs prepared, not yet submitted */
  unsigned retries;             /* transient submit failures in a row */
  int fds[ENGINE_FILE_SLOTS];   /* the files by slot */
  int no_nowait[ENGINE_FILE_SLOTS];     /* atomic: the file refused
                                           RWF_NOWAIT (ramfs) */
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

static struct creq *
sqe_creq (const struct io_uring_sqe *sqe)
{
  return (struct creq *) (uintptr_t) sqe->user_data;
}

/* Take back every SQE the kernel has not consumed and fail its request
 * with EIO.  Without SQPOLL the kernel reads the SQ ring only inside
 * io_uring_enter, so between two calls the entries from its head to our
 * tail are ours: those published to the kernel ([khead, ktail), found
 * through the index array) and those liburing has handed out but not
 * published yet ([sqe_head, sqe_tail), by slot).  Rewinding both tails
 * to the kernel's head leaves the ring as if they had never been queued.
 */
static unsigned
uring_withdraw (struct backend *b)
{
  struct io_uring_sq *sq = &b->ring.sq;
  unsigned head = io_uring_smp_load_acquire (sq->khead);
  unsigned ktail = *sq->ktail, mask = sq->ring_mask, n = 0;
  unsigned i;

  /* engine_complete only wakes the request's worker: the ring is ours
   * until we return.
   */
  for (i = head; i != ktail; i++, n++) {
    unsigned slot = sq->array ? sq->array[i & mask] : i & mask;

    engine_complete (b->e, sqe_creq (&sq->sqes[slot]), -EIO);
  }
  for (i = sq->sqe_head; i != sq->sqe_tail; i++, n++)
    engine_complete (b->e, sqe_creq (&sq->sqes[i & mask]), -EIO);
  io_uring_smp_store_release (sq->ktail, head);
  sq->sqe_head = sq->sqe_tail = head;
  b->queued = 0;
  return n;
}

static int
uring_enter_submit (struct backend *b)
{
  if (cfq_debug_fail_submit > 0) {
    nbdkit_debug ("cfq: injected io_uring_submit failure: EBADF (%d more)",
                  --cfq_debug_fail_submit);
    return -EBADF;
  }
  if (cfq_debug_busy_submit > 0) {
    nbdkit_debug ("cfq: injected io_uring_submit failure: EAGAIN (%d more)",
                  --cfq_debug_busy_submit);
    return -EAGAIN;
  }
  return io_uring_submit (&b->ring);
}

static bool
uring_submit (struct backend *b)
{
  int n;

  if (b->queued == 0)
    return false;
  n = uring_enter_submit (b);
  if (n >= 0) {
    b->queued -= (unsigned) n < b->queued ? (unsigned) n : b->queued;
    b->retries = 0;
    return false;
  }
  if ((n == -EAGAIN || n == -EBUSY || n == -EINTR || n == -ENOMEM) &&
      ++b->retries <= URING_RETRIES) {
    /* The SQEs stay in the ring; try again shortly (a completion may
     * get there first and submit them with its pass).
     */
    if (ev_is_active (&b->retry))
      return false;
    ev_now_update (b->loop);    /* a worker's pass: the loop's clock is old */
    ev_timer_set (&b->retry, 0.001, 0.);
    ev_timer_start (b->loop, &b->retry);
    return true;
  }
  {
    unsigned tries = b->retries;
    unsigned failed;

    b->retries = 0;
    if (ev_is_active (&b->retry))
      ev_timer_stop (b->loop, &b->retry);
    failed = uring_withdraw (b);
    nbdkit_error ("cfq: io_uring_submit: %s (%u tries): "
                  "%u request(s) failed with EIO",
                  strerror (-n), tries ? tries : 1, failed);
  }
  return false;
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
    engine_complete (b->e, r, res);
    return;
  }
  switch (r->eop) {
  case EOP_READ:
    if (res == 0) {             /* end of file: the rest reads as zeroes */
      memset ((char *) r->buf + r->done_bytes, 0, r->rq.len - r->done_bytes);
      engine_complete (b->e, r, 0);
      return;
    }
    VALGRIND_MAKE_MEM_DEFINED ((char *) r->buf + r->done_bytes, res);
    /* fallthrough */
  case EOP_WRITE:
    if (res == 0) {
      engine_complete (b->e, r, -EIO);
      return;
    }
    r->done_bytes += (uint32_t) res;
    if (r->done_bytes < r->rq.len)
      goto again;
    engine_complete (b->e, r, 0);
    return;
  default:
    engine_complete (b->e, r, 0);
    return;
  }

 again:
  res = uring_prep (b, r);
  if (res)
    engine_complete (b->e, r, res);
}

/* Take every completion there is (under the engine lock). */
static void
uring_reap (struct backend *b)
{
  struct io_uring_cqe *cqe;
  unsigned head, n;

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
cq_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct backend *b = w->data;
  uint64_t v;

  if (read (b->efd, &v, sizeof v) < 0 && errno != EAGAIN)
    return;
  /* A worker is waiting on the ring (a wake-up from before it went
   * quiet): the completions are its to take, or it would sleep on.
   */
  if (!b->quiet)
    uring_reap (b);
}

/* The direct path.  While quiet, completions do not write the eventfd
 * (IORING_CQ_EVENTFD_DISABLED is a flag in the shared ring that the
 * kernel checks when it posts a CQE), so the loop sleeps on and the
 * worker in uring_wait is the only one woken.  Going loud again cannot
 * lose a wake-up: a CQE posted while quiet is still in the ring, and
 * the caller reaps it (we return 1) under the same lock; see also kick.
 */
static int
uring_quiet (struct backend *b, bool on, bool kick)
{
  int err = io_uring_cq_eventfd_toggle (&b->ring, !on);

  if (err)
    return err;                 /* -EOPNOTSUPP before Linux 5.8 */
  b->quiet = on;
  /* The flag store must be seen before we read the tail; and since the
   * kernel orders its tail store and flag load only by release, a CQE
   * may still slip by unsignalled while we go loud: with requests still
   * at the device, kick the loop once ourselves.
   */
  io_uring_smp_mb ();
  if (!on && kick) {
    uint64_t one = 1;

    if (write (b->efd, &one, sizeof one) < 0 && errno != EAGAIN)
      return -errno;
  }
  return io_uring_cq_ready (&b->ring) > 0;
}

static bool
uring_pending (struct backend *b)
{
  return b->queued > 0;
}

/* Without the engine lock: sleep in the kernel until a CQE is there.
 * Only looks at the ring's tail; the lock holder alone moves its head.
 * A completion for a request this thread submitted is task work for
 * this thread, which the kernel runs inside this very wait.
 */
static int
uring_wait (struct backend *b)
{
  struct __kernel_timespec ts = { .tv_sec = 0, .tv_nsec = 100000000 };
  struct io_uring_getevents_arg arg = {
    .ts = (uint64_t) (uintptr_t) &ts,
  };

  if (io_uring_cq_ready (&b->ring) > 0)
    return 0;
  /* At most 100 ms: the caller looks at its request again even if what
   * finished it was no CQE (a withdrawn submission).
   */
  if (syscall (__NR_io_uring_enter, b->ring.ring_fd, 0, 1,
               IORING_ENTER_GETEVENTS | IORING_ENTER_EXT_ARG,
               &arg, sizeof arg) < 0 &&
      errno != EINTR && errno != ETIME)
    return -errno;
  return 0;
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

/* A buffered read or write on the worker (engine.c, the inline path),
 * without the engine lock: b->fds is read-only after create.  The same
 * rules as uring_cqe: short transfers go on, EINTR tries again, end of
 * file reads as zeroes.  nowait: a read that would wait for the disk
 * stops with -EAGAIN instead (RWF_NOWAIT), done_bytes saying how far it
 * got, for the ring to finish.  A file that refuses RWF_NOWAIT (ramfs
 * says EOPNOTSUPP or EINVAL) and then reads without it is read without
 * it from then on.
 */
static int
uring_sync (struct backend *b, struct creq *r, bool nowait)
{
  const int fd = b->fds[r->file];
  int flags = r->rw_flags;
  bool refused = false;

  if (nowait && r->eop == EOP_READ &&
      !__atomic_load_n (&b->no_nowait[r->file], __ATOMIC_RELAXED))
    flags |= RWF_NOWAIT;

  if (r->eop != EOP_READ && r->eop != EOP_WRITE)
    return -EINVAL;
  while (r->done_bytes < r->rq.len) {
    struct iovec iov = {
      .iov_base = (char *) r->buf + r->done_bytes,
      .iov_len = r->rq.len - r->done_bytes,
    };
    off_t off = (off_t) (r->rq.off + r->done_bytes);
    ssize_t n = r->eop == EOP_READ
      ? preadv2 (fd, &iov, 1, off, flags)
      : pwritev2 (fd, &iov, 1, off, flags);

    if (n == -1 && (flags & RWF_NOWAIT) &&
        (errno == EOPNOTSUPP || errno == EINVAL)) {
      flags &= ~RWF_NOWAIT;
      refused = true;
      continue;
    }
    if (refused && n >= 0)      /* it was RWF_NOWAIT that it refused */
      __atomic_store_n (&b->no_nowait[r->file], 1, __ATOMIC_RELAXED);
    refused = false;
    if (n == -1) {
      if (errno == EAGAIN && (flags & RWF_NOWAIT))
        return -EAGAIN;
      if (errno == EINTR || errno == EAGAIN)
        continue;
      return -errno;
    }
    if (n == 0) {
      if (r->eop == EOP_WRITE)
        return -EIO;
      memset (iov.iov_base, 0, iov.iov_len);
      return 0;
    }
    r->done_bytes += (uint32_t) n;
  }
  return 0;
}

static int
uring_create (struct engine *e, struct ev_loop *loop,
              const struct engine_cfg *cfg, struct backend **bp)
{
  struct backend *b = calloc (1, sizeof *b);
  struct io_uring_params p;
  unsigned entries = 8;
  int err;

  if (!b)
    return -ENOMEM;
  b->e = e;
  b->loop = loop;
  b->efd = -1;
  memcpy (b->fds, cfg->fds, sizeof b->fds);
  b->nr_fds = cfg->nr_fds ? cfg->nr_fds : FILE_NR;
  while (entries < cfg->queue_depth)
    entries <<= 1;

  /* COOP_TASKRUN: no IPI to interrupt us for completion work; it runs
   * when we next enter the kernel (we always do: epoll_wait or submit).
   */
  /* The completion queue is sized for the deepest queue_depth a control
   * command may set later (the SQ only for the one we start with: a pass
   * that runs out of SQEs submits and goes on), so it never overflows.
   */
  memset (&p, 0, sizeof p);
  p.flags = IORING_SETUP_COOP_TASKRUN | IORING_SETUP_CQSIZE;
  p.cq_entries = 2 * SCHED_DEPTH_MAX;
  err = io_uring_queue_init_params (entries, &b->ring, &p);
  if (err == -EINVAL) {
    memset (&p, 0, sizeof p);
    p.flags = IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * SCHED_DEPTH_MAX;
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
  .quiet = uring_quiet,
  .wait = uring_wait,
  .reap = uring_reap,
  .pending = uring_pending,
  .sync = uring_sync,
};
