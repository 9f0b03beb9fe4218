/* engine.h: the dispatcher thread between nbdkit's workers and the device.
 *
 * nbdkit runs each request on one of its worker threads.  The worker fills
 * in a struct creq on its own stack, hands it to the single dispatcher
 * thread (engine_run) and sleeps until the dispatcher says it is done.  The
 * dispatcher owns the scheduler (include/sched.h) and the backend (an
 * io_uring on the file): it inserts what arrived, dispatches while the
 * device has room, submits, reaps completions and wakes the workers.
 *
 * A request that needs an aligned buffer from the pool (bounce.h) says
 * so (bounce_len) instead of taking one: the engine takes it for it once
 * the scheduler has dispatched it, so that no buffer is held while its
 * request waits for its turn or a cap (engine.c, "Buffers").
 *
 * Threads: fields marked [worker] are written by the submitting worker
 * before engine_run and read back after it returns; fields marked [disp]
 * belong to the dispatcher from submission until completion.  The worker
 * must not touch a creq between engine_run's post and its wake-up.
 *
 * Errors: every engine_* function returns 0 or -errno; none sets errno.
 */
#ifndef CFQ_ENGINE_H
#define CFQ_ENGINE_H

#include <stdbool.h>
#include <stdint.h>

#include "bounce.h"
#include "sched.h"

/* What the backend is asked to do (creq->eop). */
enum eop {
  EOP_READ,                     /* read len bytes at off into buf */
  EOP_WRITE,                    /* write len bytes from buf at off */
  EOP_FSYNC,                    /* fdatasync the file */
  EOP_FALLOCATE,                /* fallocate(mode, off, len) */
  EOP_WORKER,                   /* blocking op run by the waiting worker */
};

/* Messages on the submission list (creq->kind). */
enum creq_kind {
  CREQ_IO,                      /* a request for the scheduler */
  CREQ_OPEN,                    /* new connection: create its queue */
  CREQ_CLOSE,                   /* connection gone: free its queue */
  CREQ_STOP,                    /* engine_stop: drain and leave the loop */
};

/* Registered file slots (creq->file). */
enum {
  FILE_DIRECT = 0,              /* opened O_DIRECT (or buffered if refused) */
  FILE_BUFFERED = 1,            /* opened without O_DIRECT */
  FILE_NR
};

/* Slots: the device at 0 and 1, each export's own file at 2k, 2k+1. */
#define ENGINE_FILE_SLOTS 64

/* The policy's request path, as hooks->policy reports it. */
enum engine_call {
  ENGINE_CALL_INSERT,           /* sched_insert */
  ENGINE_CALL_DISPATCH,         /* sched_dispatch */
  ENGINE_CALL_COMPLETED,        /* sched_completed */
  ENGINE_CALL_CANCEL,           /* sched_cancel */
  ENGINE_CALL_DEACTIVATE,       /* sched_deactivate: kept aside for a buffer */
  ENGINE_CALL_ACTIVATE,         /* sched_activate: given one, to the device */
};

/* How long a worker waits for its request before it asks whether its
 * client is still there (engine_cfg.gone), and again at every such
 * interval while the request stays in the scheduler: ns.
 */
#define ENGINE_PROBE_NS (100 * NSEC_PER_MSEC)

struct creq;
typedef int (*creq_worker_fn) (struct creq *r);

struct creq {
  struct rq rq;                 /* [worker] off/len/op/flags/q; policy's after */
  struct creq *next;            /* on the submission stack, newest first */
  uint8_t kind;                 /* [worker] enum creq_kind */
  uint8_t eop;                  /* [worker] enum eop */
  uint8_t file;                 /* [worker] slot: FILE_DIRECT or FILE_BUFFERED,
                                   plus the file's base slot */
  int mode;                     /* [worker] fallocate mode bits */
  int rw_flags;                 /* [worker] RWF_* on reads/writes (RWF_DSYNC = FUA) */
  void *buf;                    /* [worker] data, aligned for FILE_DIRECT;
                                   [disp] the pool's with bounce_len */
  uint32_t bounce_len;          /* [worker] bytes: take a pool buffer for
                                   buf when dispatched (bounce.h); 0: none */
  unsigned pool_grp;            /* [worker] the group whose share of the
                                   pool it comes from */
  creq_worker_fn fill_fn;       /* [worker] with bounce_len: run on the
                                   worker once buf is taken, before the
                                   I/O (a write's data into it); or NULL */
  struct bounce_wait bw;        /* [disp] its ask of the pool */
  creq_worker_fn worker_fn;     /* [worker] the EOP_WORKER operation */
  void *arg;                    /* [worker] for worker_fn; CREQ_OPEN: qspec */
  void *acct;                   /* [worker] the plugin's accounting for the
                                   connection (hooks->done, hooks->conn) */
  uint8_t emu;                  /* [disp] emulated device: which came first,
                                   the real I/O or the model (engine.c) */
  uint32_t done_bytes;          /* [disp] bytes transferred so far (short I/O) */
  bool sync_ok;                 /* [worker] a read or write on a buffered
                                   file: its worker may do it itself with
                                   the backend's sync (engine.c, inline) */
  bool at_ring;                 /* [disp] handed to the backend (not EOP_WORKER) */
  bool queued;                  /* [disp] in the scheduler: inserted, not
                                   dispatched; written under the lock, read
                                   by its worker without it as a hint
                                   (atomic, relaxed) */
  bool cancelled;               /* failed before it reached the device: its
                                   client went away or the engine stopped
                                   (res -ESHUTDOWN); valid once woken */
  int res;                      /* [disp] 0 or -errno, valid once woken */
  bool res_logged;              /* [disp] the backend logged why it failed
                                   (engine_logged_error) */
  uint32_t state;               /* futex word: CREQ_ST_* */
};

struct ev_loop;
struct devmodel;
struct engine;
struct backend_ops;

/* The plugin's hooks into the engine.  Every hook runs under the engine
 * lock: on the dispatcher, or on a worker taking the direct path (setup
 * and teardown: before the dispatcher starts and after it is joined), so
 * what they touch needs no lock of its own, and they may call the
 * engine_* functions that want the lock on the engine they are given.
 * Any hook may be NULL.
 */
struct engine_hooks {
  /* After the scheduler and the loop exist, before the thread starts:
   * create groups, apply tunables, add watchers to the loop.  0 or -errno.
   */
  int (*setup) (struct engine *e, void *opaque, struct sched *s,
                struct ev_loop *loop);
  /* After the thread is joined, before the loop and scheduler go. */
  void (*teardown) (struct engine *e, void *opaque);
  /* A connection's queue was made (open) or freed (!open): acct is the
   * creq->acct of engine_queue_new / engine_queue_free.
   */
  void (*conn) (struct engine *e, void *opaque, void *acct, bool open);
  /* A request finished (after sched_completed): res 0 or -errno; or
   * was taken back before it was dispatched (after sched_cancel, res
   * -ESHUTDOWN, r->cancelled set).
   */
  void (*done) (struct engine *e, void *opaque, struct creq *r, int res,
                uint64_t now);
  /* Debugging (-D cfq.policy=1): every call into the policy's request
   * path, right after it, in the order made, with the time it was given:
   * sched_insert, sched_deactivate, sched_activate, sched_completed and
   * sched_cancel of r, and every sched_dispatch (r is what it handed out,
   * or NULL).
   */
  void (*policy) (struct engine *e, void *opaque, enum engine_call call,
                  struct creq *r, uint64_t now);
};

/* Engine configuration, fixed at engine_start. */
struct engine_cfg {
  const struct sched_ops *sched_ops; /* the policy */
  unsigned queue_depth;         /* requests at the device at once */
  int fds[ENGINE_FILE_SLOTS];   /* the files, by slot; -1 if absent */
  unsigned nr_fds;              /* slots used (0: FILE_NR) */
  const struct backend_ops *backend;    /* uring_backend_ops ... */
  struct devmodel *dm;          /* emulated device, or NULL; the engine
                                   submits to it and takes completions */
  const struct engine_hooks *hooks;     /* or NULL */
  void *opaque;                 /* for the hooks */
  bool no_direct;               /* never take the direct path (engine.c) */
  bool no_inline;               /* never let a worker do its own buffered
                                   I/O: the ring does it (engine.c) */
  /* Asked by a worker, without the lock, whose request has waited in the
   * scheduler for ENGINE_PROBE_NS, and again at every such interval:
   * true if its client is gone or the server is stopping.  Its requests
   * still in the scheduler are then taken back and fail with
   * -ESHUTDOWN (engine.c, "held requests").  NULL: never asked.
   */
  bool (*gone) (void);
};

/* Where a new connection's queue goes (engine_queue_new). */
struct engine_qspec {
  struct sched_group *grp;      /* the group (made by the setup hook) */
  enum sched_class cls;
  unsigned level;               /* 0..7 */
};

/* What the dispatcher did, for the debug log at exit. */
struct engine_stats {
  uint64_t passes;              /* passes: loop iterations and worker passes */
  uint64_t direct;              /* passes run by a worker on an idle engine */
  uint64_t reaps;               /* completion batches reaped by a worker */
  uint64_t submits;             /* backend submit calls that had work */
  uint64_t dispatched;          /* requests the scheduler handed out */
  uint64_t worker_ops;          /* of which run by their worker (EOP_WORKER) */
  uint64_t inline_ops;          /* of which done by their worker (sync_ok) */
  uint64_t inline_ring;         /* of which the ring finished (not cached) */
  uint64_t inline_passes;       /* passes run by a worker for a sync_ok request
                                   or after doing its request itself */
  uint64_t pool_waits;          /* dispatched requests kept aside until
                                   the pool had room for their buffers */
  uint64_t pool_worker;         /* of the dispatched, those whose worker
                                   allocated or filled the buffer first */
  unsigned max_inflight;        /* requests: most at the device at once */
  uint64_t cancelled;           /* requests taken back from the scheduler
                                   (their client gone, the server stopping) */
  uint64_t underflows;          /* completions with none in flight: a bug */
};

/* Start the dispatcher thread (call from nbdkit's .after_fork). */
extern int engine_start (const struct engine_cfg *cfg);
/* Finish in-flight work, stop the thread, free everything.  Idempotent.
 * If stats is not NULL and the engine ran, fill it in and return true.
 */
extern bool engine_stop (struct engine_stats *stats);

/* Connection lifetime: a scheduler queue per connection, in the group
 * and class spec names; acct goes to hooks->conn.  Worker threads.
 */
extern int engine_queue_new (struct sched_queue **qp,
                             const struct engine_qspec *spec, void *acct);
extern void engine_queue_free (struct sched_queue *q, void *acct);

/* Under the engine lock only: hooks and the loop's callbacks (control
 * commands) hold it.
 */
extern unsigned engine_inflight (const struct engine *e); /* at the device */
extern unsigned engine_held (const struct engine *e); /* of which held */
extern unsigned engine_depth (const struct engine *e);
extern uint64_t engine_cancelled (const struct engine *e); /* taken back */
extern int engine_set_depth (struct engine *e, unsigned depth); /* 1..max */
/* Any thread. */
extern uint64_t engine_now (void);              /* ns, CLOCK_MONOTONIC */

/* Prepare a data request.  op: RQ_READ ... ; eop: what the backend does. */
static inline void
creq_init (struct creq *r, struct sched_queue *q, enum rq_op op,
           enum eop eop, int file, void *buf, uint64_t off, uint32_t len)
{
  r->rq.off = off;
  r->rq.len = len;
  r->rq.op = op;
  r->rq.flags = op == RQ_READ || op == RQ_FLUSH ? RQ_SYNC : 0;
  r->rq.q = q;
  r->rq.priv = r;
  r->kind = CREQ_IO;
  r->eop = eop;
  r->file = file;
  r->mode = 0;
  r->rw_flags = 0;
  r->buf = buf;
  r->bounce_len = 0;
  r->pool_grp = 0;
  r->fill_fn = NULL;
  r->worker_fn = NULL;
  r->arg = NULL;
  r->acct = NULL;
  r->res_logged = false;
  r->emu = 0;
  r->done_bytes = 0;
  r->sync_ok = false;
  r->at_ring = false;
  r->queued = false;
  r->cancelled = false;
  r->res = 0;
  r->state = 0;
}

/* Run n requests through the scheduler and wait for all of them.
 * Returns 0 or the first request's -errno (each creq has its own res;
 * r->cancelled says it never reached the device).
 */
extern int engine_run_many (struct creq **rs, unsigned n);

/* Worker: the -errno engine_run_many last returned on this thread, if
 * the backend has logged why (creq's res_logged); else 0.  The answer is
 * given once: a second call says 0.  So a failure is logged once, by
 * whoever knows most of it.
 */
extern int engine_logged_error (void);

static inline int
engine_run (struct creq *r)
{
  return engine_run_many (&r, 1);
}

/* ---- backends: the device side, under the engine lock -------------------- */

struct ev_loop;
struct backend;

struct backend_ops {
  const char *name;             /* backend=NAME */
  /* Create on the dispatcher's loop; register watchers on it.  Frees
   * everything it made on failure.  e is for engine_complete.
   */
  int (*create) (struct engine *e, struct ev_loop *loop,
                 const struct engine_cfg *cfg, struct backend **bp);
  void (*destroy) (struct backend *b);
  /* Queue one request (not yet submitted).  0 or -errno. */
  int (*queue) (struct backend *b, struct creq *r);
  /* Submit everything queued: once per pass.  Returns true if it armed
   * a watcher on the loop (a retry timer) that the loop must see.
   */
  bool (*submit) (struct backend *b);

  /* Optional (NULL in the null backend): a worker waits for its own
   * completion instead of the loop (engine.c, "the direct path").
   * quiet (true) stops completions from waking the loop, or (false) lets
   * them again, and then with kick wakes the loop once in any case (for
   * requests still at the device); it returns 1 if completions are
   * already waiting, 0 if not, -errno if the ring cannot be quiet (then
   * nothing changed).
   * wait blocks, WITHOUT the engine lock, until at least one completion
   * is ready to reap: 0 or -errno.  reap takes every ready completion
   * and reports each through engine_complete.
   */
  int (*quiet) (struct backend *b, bool on, bool kick);
  int (*wait) (struct backend *b);
  void (*reap) (struct backend *b);
  /* Optional: true if the backend has queued work (resubmissions made
   * while reaping) that the next submit would send.
   */
  bool (*pending) (struct backend *b);
  /* Optional: do r, a read or write with sync_ok set, to the end on the
   * calling worker, WITHOUT the engine lock (engine.c, inline): 0 or
   * -errno, with the same short-transfer and end-of-file rules as the
   * queued path.  nowait: a read that would wait for the device returns
   * -EAGAIN instead, with done_bytes as far as it got; queue goes on from
   * there.
   */
  int (*sync) (struct backend *b, struct creq *r, bool nowait);
};

/* Backends report each finished request here (res: 0 or -errno). */
extern void engine_complete (struct engine *e, struct creq *r, int res);

extern const struct backend_ops uring_backend_ops;
extern const struct backend_ops null_backend_ops;
extern const struct backend_ops rbd_backend_ops;   /* backend-rbd.c */

#endif /* CFQ_ENGINE_H */
