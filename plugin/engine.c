/* engine.c: one dispatcher thread, one libev loop, one scheduler.
 *
 * The scheduler (core/) is single-threaded by design, like a kernel
 * elevator under its queue lock, and here it has exactly that: the
 * engine lock.  The dispatcher thread holds it at all times except while
 * its loop sleeps in epoll (libev's loop release/acquire callbacks), so
 * everything that runs on the loop - the pass, the timers, completions,
 * control commands - runs under it.  nbdkit's worker threads normally
 * touch only the submission stack and their own request's futex word:
 *
 *   worker                         dispatcher (libev loop)
 *   ------                         -----------------------
 *   creq on its stack
 *   push on subs (lock-free) ----> ev_async wakes the loop
 *   ev_async_send                  prepare: pop subs, sched_insert each
 *   futex_wait(state)              while inflight < queue_depth:
 *                                      rq = sched_dispatch(now) -> backend
 *                                  one io_uring_submit for the batch
 *                                  ev_timer at the deadline dispatch gave
 *                                  eventfd readable: reap CQEs,
 *                                      sched_completed(now)
 *   wakes <----------------------      state = DONE, futex_wake
 *
 * All the work of an iteration is done in one ev_prepare callback, run
 * just before the loop blocks: by then every callback of the iteration
 * (new submissions, completions, the timer) has run, so the pass sees all
 * of them and submits one batch.  The submission stack is taken whole at
 * the start of the pass; anything a woken worker posts meanwhile waits for
 * the next pass (the ev_async is then pending, so the loop does not block).
 *
 * The submission list is a lock-free stack (one CAS to push, one exchange
 * to take everything) rather than a mutex-protected list: workers never
 * wait for the dispatcher, and ev_async_send only writes the eventfd when
 * the async is not already pending.  The dispatcher reverses what it
 * takes, so insertion keeps arrival order.
 *
 * Waking a worker costs a futex_wake only if it is already asleep: the
 * worker announces it is about to sleep by moving its state word from
 * PENDING to SLEEPING, and the dispatcher exchanges in DONE and calls
 * futex_wake only when it saw SLEEPING.
 *
 * The direct path.  At queue depth 1 that round trip is the request's
 * latency: three thread wake-ups (the loop for the submission, the loop
 * for the completion, the worker) where a synchronous pread has one, and
 * on a small machine each costs more than the NBD protocol itself.  So a
 * worker that finds the engine idle - it gets the lock with a trylock
 * (the loop is asleep), nothing is at the device and nobody is waiting
 * on the ring - runs the pass itself: it drains the stack (its own
 * request included), dispatches and submits.  If its request went to
 * the ring it then waits for completions itself, without the lock, in
 * io_uring_enter: with the ring quiet (its eventfd off) the loop is not
 * woken at all, and the completion, task work for the thread that
 * submitted, runs inside that wait.  It reaps whatever has completed
 * under the lock and leaves once its own request is done, making the ring
 * loud again.  One wake-up per request, as in a synchronous server.
 * What the completions free up (requests the policy held back, others'
 * arrivals) it leaves to the loop, woken with ev_async, because io_uring
 * runs a request's completion as task work of the thread that submitted
 * it, and that should be the loop's long-lived thread rather than a
 * worker that goes back to its socket.  Everything else keeps the loop's
 * path too: a busy engine (the loop batches), emulation (held
 * completions need the loop's timers), connection messages.  (The null
 * backend completes inside the pass: its workers never wait.)  The
 * scheduler cannot tell: it sees the same insert, dispatch and completed
 * calls, under the same lock, at the same clock.  A worker's pass that moves a deadline earlier, arms a
 * retry or sees the stop message wakes the loop with ev_async so that
 * epoll's timeout is computed again (libev allows watchers to change
 * from other threads while the loop's lock is held, then woken).
 *
 * The inline path.  A read or write on a buffered file (cache=page, a
 * filesystem that refuses O_DIRECT, the last partial block) is a memory
 * copy when its pages are cached, cheaper than either hand-off, and
 * io_uring would add a third thread to many of them (ext4 gives buffered
 * writes to io_uring's io-wq workers).  So for those (creq->sync_ok) the
 * worker runs the pass itself, under the lock, waiting for it if the loop
 * has it; if the policy dispatches its own request it does the I/O
 * itself with a plain preadv2/pwritev2 (the backend's sync), then takes
 * the lock again to report the completion and run the pass that
 * follows, as the loop would have.  A request the policy holds back
 * sleeps as usual; whoever's pass dispatches it later wakes its worker
 * with RUN, and the worker does it then.  An inline pass never submits
 * to the ring: ring requests it dispatches (others', unbuffered) stay
 * queued and the loop is woken to submit them, so that their completions
 * are the loop's task work.  So no thread but the worker runs for such a
 * request, as in nbdkit's file plugin, with the scheduler in front.  The
 * policy sees the same calls under the same lock and clock; only the
 * time between dispatch and completion is the copy's instead of the
 * ring's.  (-D cfq.inline=0 sends them through the ring, to compare.)
 *
 * Buffers.  A request O_DIRECT cannot take as it is (unaligned, or in a
 * client buffer that is not aligned) needs an aligned buffer from the
 * pool (bounce.c).  It asks for it with bounce_len, and the engine takes
 * it when the scheduler dispatches the request: a buffer taken before
 * would be held while the request waits for its turn or for its group's
 * cap, and a capped tenant would sit on the pool that every tenant needs
 * (a group capped at 4 MB/s with eight 32 MiB reads queued held it for a
 * minute).  Taking it at dispatch is two steps, so that the dispatcher
 * neither blocks nor touches memory:
 *
 *   dispatch(now) -> r   bounce_take: given a cached buffer -> ring, as
 *                        any request (a write: RUN, see below)
 *                        given room only -> RUN: the worker allocates
 *                        no room -> kept aside: deactivated for the
 *                        policy, not counted in inflight (it holds no
 *                        device slot), on its group's waiting list in
 *                        the pool
 *   a buffer comes back  (bounce_put, on a worker) the pool serves its
 *                        waiters by the groups' shares; each one given
 *                        room goes on the ready stack (lock-free, as the
 *                        submission stack) and the loop is woken
 *   pass                 ready requests are activated and take free
 *                        device slots before the policy is asked for more
 *   RUN (worker)         allocates the buffer if it has only room, lays
 *                        a write's data into it (fill_fn: the client's
 *                        data, or the edge blocks and the data of a
 *                        read-modify-write), then queues the request on
 *                        the ring under the lock and wakes the loop, as
 *                        a read that missed the cache on the inline path
 *
 * The policy is told: a request kept aside is deactivated (sched.h), so
 * that it counts as not at the device and nothing waits for it (CFQ
 * would otherwise keep its queue's turn, or idle for its group, while it
 * waits for memory, and every other tenant with it), and activated when
 * it starts.  Caps and turns are settled before any memory is held, and
 * a buffer in use always belongs to a request at the device or its
 * worker.  Which waiter gets room is the
 * pool's rule (core/poolshare.c), not the scheduler's: the groups' shares
 * of memory, not of the disk.  The loop does not stop while a request is
 * kept aside or ready.
 *
 * Emulation (cfg->dm set): at dispatch the request also goes to the device
 * model, which hands requests back in its own order at its own times (a
 * disk with NCQ reorders its queue).  The real I/O is still done, so data
 * is always right: a request finishes when both its real I/O and the
 * model are done with it, whichever comes last (plugin/hold.c), so the
 * scheduler, the accounting and the worker all see the emulated time.  A
 * held request still counts as in flight, so the device stays at most
 * queue_depth deep and a slow emulated disk becomes the bottleneck even on
 * fast hardware.  The model's next completion arms a timerfd the loop
 * watches (hold.h says why not an ev_timer).
 *
 * The scheduler instance is created before the thread starts and destroyed
 * after it has been joined; in between it is touched under the lock only.
 *
 * Blocking operations that io_uring cannot do on this kernel (BLKDISCARD
 * on a block device) are still scheduled like any request, but when the
 * scheduler dispatches one the dispatcher does not run it: it wakes the
 * waiting worker with state RUN, the worker does the ioctl synchronously
 * on its own thread (it was idle anyway), then reports it done under the
 * lock itself, as on the inline path.  The device slot is
 * held throughout, so the scheduler's accounting (in-flight count, slice
 * time) sees the op as it really was, and the loop never blocks.
 *
 * Held requests.  A request the policy holds back (a cap waiting for
 * tokens, a reservation, another group's turn) keeps its worker waiting,
 * and nbdkit keeps the connection, its buffers and its threads for as
 * long; it also waits for every worker before it exits.  Asleep on its
 * futex, a worker would never hear that its client went away, so it
 * sleeps ENGINE_PROBE_NS at a time, and each time that runs out with its
 * request still in the scheduler (creq->queued) it asks the plugin
 * (cfg->gone: nbdkit_nanosleep (0, 0), which polls nbdkit's quit pipe,
 * the connection's status pipe and the client's socket for a hang-up).
 * If the client is gone or the server stops, the worker takes the lock
 * and takes back its requests still in the scheduler (sched_cancel):
 * each fails with -ESHUTDOWN, the done hook counts it as an error, and
 * the loop is woken, since the policy's next deadline may have changed.
 * A request at the device, or not yet inserted, is left alone: it
 * completes as usual, or engine_stop fails it.  A request done within
 * ENGINE_PROBE_NS never asks.
 */
#include <assert.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/syscall.h>

#include <ev.h>

#include "devmodel.h"
#include "engine.h"
#include "hold.h"


/* creq->state values (the futex word). */
enum {
  CREQ_ST_PENDING = 0,          /* with the dispatcher, worker awake */
  CREQ_ST_SLEEPING = 1,         /* with the dispatcher, worker in futex_wait */
  CREQ_ST_DONE = 2,             /* finished: res is valid */
  CREQ_ST_RUN = 3,              /* dispatched EOP_WORKER: worker runs it */
};

struct engine {
  /* Set up before the thread starts; read-only afterwards. */
  struct ev_loop *loop;         /* owned by the dispatcher once it runs */
  pthread_t thread;             /* the dispatcher */
  bool thread_started;          /* pthread_create succeeded (main thread) */
  unsigned depth;               /* requests: max at the device at once */
  const struct backend_ops *bops;
  struct backend *be;

  /* Shared between workers and the dispatcher. */
  struct creq *subs;            /* submission stack, newest first (atomic) */
  struct creq *ready;           /* requests kept aside that the pool gave
                                   room, newest first (atomic) */
  ev_async wake;                /* ev_async_send is thread-safe */
  int running;                  /* atomic: 1 while accepting submissions */
  bool direct;                  /* the direct path may be taken (fixed) */
  bool (*gone) (void);          /* is a worker's client gone (fixed) */
  bool inl;                     /* the inline path may be taken (fixed) */
  unsigned read_miss;           /* atomic: inline reads that missed the
                                   cache, 1/1024ths, moving average */
  unsigned read_probe;          /* atomic: reads sent to the ring */
  pthread_mutex_t lock;         /* the engine lock: what follows */

  /* Under the lock (the dispatcher's loop, or a worker on the direct path). */
  pthread_t owner;              /* holder of the lock, for assertions */
  bool reaper;                  /* a worker waits on the ring, quiet */
  struct sched *sched;          /* the policy instance */
  unsigned inflight;            /* requests: dispatched, not completed;
                                   written under the lock, read without
                                   it (atomic, relaxed) as a hint by
                                   workers deciding on the direct path */
  bool stopping;                /* CREQ_STOP seen */
  unsigned parked;              /* requests: dispatched, kept aside for a
                                   buffer, not on the ready stack's way
                                   to granted yet */
  struct creq *granted;         /* given room, waiting for a device slot,
                                   oldest first */
  struct creq **granted_tail;
  ev_prepare pump;              /* the pass, once per iteration */
  ev_timer timer;               /* the scheduler's next deadline */
  uint64_t timer_at;            /* ns: when timer fires; SCHED_NEVER if idle */
  struct devmodel *dm;          /* emulated device or NULL */
  const struct engine_hooks *hooks;     /* never NULL (may be empty) */
  void *opaque;                 /* for hooks */
  struct hold held;             /* emulation: real I/O and model meet */
  ev_io hold_io;                /* held.fd readable: the model's next
                                   completion is due */
  struct engine_stats st;       /* counters, read after the thread is gone */
};

/* One per process: the worker side (engine_run_many, the connection
 * messages) finds it here; the dispatcher side is handed it.
 *
 * eng_users counts the workers inside those calls.  nbdkit stops the
 * engine (.cleanup) only after the last connection closed, but that is
 * not enough to free it: a worker may still be between its push and its
 * ev_async_send, or just woken and leaving (nbdkit 1.32 even counts a
 * connection thread out before it has finished).  So engine_stop clears
 * eng, fails whatever was pushed after the loop left, and frees the
 * engine only once no worker is inside (eng_enter / eng_leave).
 */
static struct engine *eng;
static unsigned eng_users;      /* atomic */

static struct engine *
eng_enter (void)
{
  struct engine *e;

  __atomic_add_fetch (&eng_users, 1, __ATOMIC_SEQ_CST);
  e = __atomic_load_n (&eng, __ATOMIC_SEQ_CST);
  if (!e)
    __atomic_sub_fetch (&eng_users, 1, __ATOMIC_RELEASE);
  return e;
}

static void
eng_leave (void)
{
  __atomic_sub_fetch (&eng_users, 1, __ATOMIC_RELEASE);
}

/* The lock discipline, checked where it matters: it depends on no
 * request's content, only on this file's own structure.
 */
#define ASSERT_LOCKED(e) assert (pthread_equal (pthread_self (), (e)->owner))

static void
eng_lock (struct engine *e)
{
  pthread_mutex_lock (&e->lock);
  e->owner = pthread_self ();
}

static bool
eng_trylock (struct engine *e)
{
  if (pthread_mutex_trylock (&e->lock))
    return false;
  e->owner = pthread_self ();
  return true;
}

static void
eng_unlock (struct engine *e)
{
  memset (&e->owner, 0, sizeof e->owner);
  pthread_mutex_unlock (&e->lock);
}

/* libev: the loop gives up the lock only to sleep. */
static void
loop_release (struct ev_loop *loop)
{
  eng_unlock (ev_userdata (loop));
}

static void
loop_acquire (struct ev_loop *loop)
{
  eng_lock (ev_userdata (loop));
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

static void
futex_wait (uint32_t *addr, uint32_t val)
{
  syscall (SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, NULL, NULL, 0);
}

/* Sleep as futex_wait, NS at most.  True if the time ran out. */
static bool
futex_wait_for (uint32_t *addr, uint32_t val, uint64_t ns)
{
  struct timespec ts = { (time_t) (ns / NSEC_PER_SEC),
                         (long) (ns % NSEC_PER_SEC) };

  return syscall (SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0)
    == -1 && errno == ETIMEDOUT;
}

static void
futex_wake (uint32_t *addr)
{
  syscall (SYS_futex, addr, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* Dispatcher: hand r back to its worker in state st.  r may be gone
 * (the worker's stack reused) as soon as the exchange is done.
 */
static void
creq_wake (struct creq *r, uint32_t st)
{
  uint32_t old = __atomic_exchange_n (&r->state, st, __ATOMIC_RELEASE);

  if (old == CREQ_ST_SLEEPING)
    futex_wake (&r->state);
}

/* Worker: r's state if DONE or RUN; else 0, with r marked SLEEPING, so
 * that the dispatcher wakes the futex when it moves r on.
 */
static uint32_t
creq_settled (struct creq *r)
{
  for (;;) {
    uint32_t s = __atomic_load_n (&r->state, __ATOMIC_ACQUIRE);

    if (s == CREQ_ST_DONE || s == CREQ_ST_RUN)
      return s;
    if (s == CREQ_ST_SLEEPING ||
        __atomic_compare_exchange_n (&r->state, &s, CREQ_ST_SLEEPING, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE))
      return 0;
  }
}

/* Worker: sleep until the dispatcher moves r to DONE or RUN. */
static uint32_t
creq_wait (struct creq *r)
{
  uint32_t s;

  while ((s = creq_settled (r)) == 0)
    futex_wait (&r->state, CREQ_ST_SLEEPING);
  return s;
}

/* Worker: push rs[0..n) (in that order). */
static int
push (struct engine *e, struct creq **rs, unsigned n)
{
  struct creq *old;

  if (!__atomic_load_n (&e->running, __ATOMIC_ACQUIRE))
    return -ESHUTDOWN;
  for (unsigned i = 1; i < n; i++)
    rs[i]->next = rs[i - 1];
  old = __atomic_load_n (&e->subs, __ATOMIC_RELAXED);
  do
    rs[0]->next = old;
  while (!__atomic_compare_exchange_n (&e->subs, &old, rs[n - 1], true,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  return 0;
}

/* Worker: push rs[0..n) and wake the loop. */
static int
post (struct engine *e, struct creq **rs, unsigned n)
{
  int err = push (e, rs, n);

  if (!err)
    ev_async_send (e->loop, &e->wake);
  return err;
}

static const struct engine_hooks no_hooks;

/* Dispatcher: the request is done, as far as anyone will know. */
static void
finish_now (struct engine *e, struct creq *r, int res, uint64_t now)
{
  ASSERT_LOCKED (e);
  sched_completed (e->sched, &r->rq, now);
  if (e->hooks->policy)
    e->hooks->policy (e, e->opaque, ENGINE_CALL_COMPLETED, r, now);
  /* Never below 0, whatever a completion does: no assert on a path a
   * request takes (an abort would stop every tenant), but counted, and
   * reported at unload, so that an accounting bug is seen, not hidden.
   */
  if (e->inflight > 0)
    __atomic_store_n (&e->inflight, e->inflight - 1, __ATOMIC_RELAXED);
  else
    e->st.underflows++;
  if (e->hooks->done)
    e->hooks->done (e, e->opaque, r, res, now);
  r->res = res;
  creq_wake (r, CREQ_ST_DONE);
}

/* Dispatcher: the request left the device (or its worker).  With an
 * emulated device, hold it until the model is done with it too.
 */
static void
finish (struct engine *e, struct creq *r, int res, uint64_t now)
{
  ASSERT_LOCKED (e);
  if (e->dm && hold_io_done (&e->held, r, res))
    return;
  finish_now (e, r, res, now);
}

/* Finish what the emulated device has released by now. */
static void
held_release (struct engine *e, uint64_t now)
{
  struct creq *r;

  while (e->dm && (r = hold_release (&e->held, now)) != NULL)
    finish_now (e, r, r->res, now);
}

void
engine_complete (struct engine *e, struct creq *r, int res)
{
  finish (e, r, res, now_ns ());
}

/* Dispatcher: take everything posted so far, in arrival order. */
static void
drain (struct engine *e, uint64_t now)
{
  struct creq *r = __atomic_exchange_n (&e->subs, NULL, __ATOMIC_ACQUIRE);
  struct creq *fifo = NULL, *next;

  while (r) {                   /* reverse: oldest first */
    next = r->next;
    r->next = fifo;
    fifo = r;
    r = next;
  }
  for (r = fifo; r; r = next) {
    next = r->next;             /* r may be gone once woken */
    switch (r->kind) {
    case CREQ_IO:
      r->rq.t_insert = now;
      r->rq.t_dispatch = now;
      sched_insert (e->sched, &r->rq, now);
      __atomic_store_n (&r->queued, true, __ATOMIC_RELAXED);
      if (e->hooks->policy)
        e->hooks->policy (e, e->opaque, ENGINE_CALL_INSERT, r, now);
      break;
    case CREQ_OPEN: {
      const struct engine_qspec *sp = r->arg;

      r->rq.q = sched_queue_new (e->sched, sp->grp, sp->cls, sp->level);
      r->res = r->rq.q ? 0 : -ENOMEM;
      if (r->rq.q && r->acct && e->hooks->conn)
        e->hooks->conn (e, e->opaque, r->acct, true);
      creq_wake (r, CREQ_ST_DONE);
      break;
    }
    case CREQ_CLOSE:
      if (r->acct && e->hooks->conn)
        e->hooks->conn (e, e->opaque, r->acct, false);
      sched_queue_free (e->sched, r->rq.q);
      r->res = 0;
      creq_wake (r, CREQ_ST_DONE);
      break;
    case CREQ_STOP:
      e->stopping = true;       /* engine_stop joins; no wake-up */
      break;
    }
  }
}

/* sched_dispatch, reported to the policy hook. */
static struct rq *
dispatch (struct engine *e, uint64_t now, uint64_t *next)
{
  struct rq *rq = sched_dispatch (e->sched, now, next);

  if (e->hooks->policy)
    e->hooks->policy (e, e->opaque, ENGINE_CALL_DISPATCH,
                      rq ? rq->priv : NULL, now);
  return rq;
}

/* Under the lock: hand dispatched r to the backend (not yet submitted).
 * Returns true if it was queued; a refusal finishes r with the error.
 */
static bool
ring_queue (struct engine *e, struct creq *r, uint64_t now)
{
  int err;

  r->at_ring = true;
  err = e->bops->queue (e->be, r);
  if (err)
    finish (e, r, err, now);
  return !err;
}

/* Any thread, without the lock: the pool gave w's request (kept aside)
 * its room (see Buffers at the top).  It goes on the ready stack for the
 * next pass.  The engine is still there: the loop does not stop while a
 * request is kept aside, and engine_stop frees nothing while a thread is
 * inside (eng_enter).
 */
static void
pool_granted (struct bounce_wait *w)
{
  struct creq *r = container_of (w, struct creq, bw);
  struct engine *e = eng_enter ();
  struct creq *old;

  if (!e)                       /* cannot be: the loop waits for r */
    return;
  r->buf = w->buf;
  old = __atomic_load_n (&e->ready, __ATOMIC_RELAXED);
  do
    r->next = old;
  while (!__atomic_compare_exchange_n (&e->ready, &old, r, true,
                                       __ATOMIC_RELEASE, __ATOMIC_RELAXED));
  ev_async_send (e->loop, &e->wake);
  eng_leave ();
}

/* Under the lock: the ready stack onto the granted list, in the order
 * the pool gave them room.
 */
static void
take_ready (struct engine *e)
{
  struct creq *r = __atomic_exchange_n (&e->ready, NULL, __ATOMIC_ACQUIRE);
  struct creq *fifo = NULL, *next;

  while (r) {
    next = r->next;
    r->next = fifo;
    fifo = r;
    r = next;
  }
  for (r = fifo; r; r = next) {
    next = r->next;
    r->next = NULL;
    *e->granted_tail = r;
    e->granted_tail = &r->next;
    if (e->parked > 0)
      e->parked--;
  }
}

/* Under the lock: dispatched r asks the pool for its buffer.  True if
 * it goes on now (with its buffer, with room only, or failed with
 * r->res), false if it is kept aside until the pool gives it room.
 */
static bool
take_buffer (struct engine *e, struct creq *r, uint64_t now)
{
  int err;

  r->bw.granted = pool_granted;
  r->bw.ctx = e;
  err = bounce_take (&r->bw, r->pool_grp, r->bounce_len);
  if (err == -EAGAIN) {
    e->parked++;
    e->st.pool_waits++;
    sched_deactivate (e->sched, &r->rq, now);
    if (e->hooks->policy)
      e->hooks->policy (e, e->opaque, ENGINE_CALL_DEACTIVATE, r, now);
    return false;
  }
  if (err)
    r->res = err;
  else
    r->buf = r->bw.buf;         /* NULL: room only, the worker allocates */
  return true;
}

/* Under the lock: r, dispatched (and with its buffer or room if it
 * needs one), takes a device slot and goes to the backend, or to its
 * worker.  True if it was queued on the ring.
 */
static bool
start (struct engine *e, struct creq *r, uint64_t now)
{
  if (e->dm)
    hold_submit (&e->held, r, now);
  __atomic_store_n (&e->inflight, e->inflight + 1, __ATOMIC_RELAXED);
  if (e->inflight > e->st.max_inflight)
    e->st.max_inflight = e->inflight;
  if (r->res) {                 /* the pool refused it */
    finish (e, r, r->res, now);
    return false;
  }
  if (r->eop == EOP_WORKER) {
    e->st.worker_ops++;
    creq_wake (r, CREQ_ST_RUN);
    return false;
  }
  if (r->sync_ok) {
    e->st.inline_ops++;
    creq_wake (r, CREQ_ST_RUN);
    return false;
  }
  if (r->bounce_len && (!r->buf || r->fill_fn)) {
    e->st.pool_worker++;        /* allocate or fill it first */
    creq_wake (r, CREQ_ST_RUN);
    return false;
  }
  return ring_queue (e, r, now);
}

/* Arm t to fire at `at' (ns; SCHED_NEVER: stop it). */
static void
timer_arm (struct engine *e, ev_timer *t, uint64_t at, uint64_t now)
{
  ev_timer_stop (e->loop, t);
  if (at != SCHED_NEVER) {
    ev_tstamp after = at > now ? (double) (at - now) / 1e9 : 0.;

    ev_now_update (e->loop);    /* the timer counts from the loop's clock */
    ev_timer_set (t, after, 0.);
    ev_timer_start (e->loop, t);
  }
}

/* Under the lock: take what was posted, dispatch while the device has
 * room, submit, set the timers.  Returns true if the loop must look
 * again before it sleeps on: a deadline moved earlier, a retry was
 * armed, requests wait in the ring unsubmitted, or the stop message was
 * taken (a worker's pass sends the ev_async; the loop's own pass runs
 * before it computes its timeout).  ring: this pass may submit to the
 * ring (not an inline pass: see the top).
 */
static bool
pass (struct engine *e, uint64_t now, bool ring)
{
  uint64_t next = SCHED_NEVER;
  uint64_t timer0 = e->timer_at;
  bool hold_earlier = false;
  struct rq *rq = NULL;
  unsigned inflight0, queued = 0;
  bool look = false;

  ASSERT_LOCKED (e);
  e->st.passes++;
  held_release (e, now);
  drain (e, now);

  for (;;) {
    /* Those the pool gave room first: the policy let them go already. */
    take_ready (e);
    while (e->inflight < e->depth) {
      struct creq *r = e->granted;

      if (r) {
        e->granted = r->next;
        if (!e->granted)
          e->granted_tail = &e->granted;
        r->next = NULL;
        sched_activate (e->sched, &r->rq, now);
        if (e->hooks->policy)
          e->hooks->policy (e, e->opaque, ENGINE_CALL_ACTIVATE, r, now);
      }
      else {
        if ((rq = dispatch (e, now, &next)) == NULL)
          break;
        r = rq->priv;
        __atomic_store_n (&r->queued, false, __ATOMIC_RELAXED);
        rq->t_dispatch = now;
        e->st.dispatched++;
        if (r->bounce_len && !take_buffer (e, r, now))
          continue;             /* kept aside: no device slot yet */
      }
      if (start (e, r, now))
        queued++;
    }
    inflight0 = e->inflight;
    if (!ring) {
      /* Queued for the ring: the loop submits (every backend). */
      look |= queued > 0 || (e->bops->pending && e->bops->pending (e->be));
      break;
    }
    if (queued)
      e->st.submits++;
    queued = 0;
    look |= e->bops->submit (e->be);
    /* A request completed inside submit (the null backend; a submission
     * that failed for good) freed a slot and may change the policy's
     * mind (CFQ holds requests back while others are at the device): go
     * round again, or its next deadline is stale and nothing would wake
     * us.  Otherwise stop when the device is full or the policy had
     * nothing more to give.
     */
    if (e->inflight >= e->depth)
      break;
    if (rq == NULL && e->inflight >= inflight0)
      break;
    /* Round again: the completions were reported at a later time than
     * now, and the policy must never be told of an earlier one after.
     */
    if (e->inflight < inflight0)
      now = now_ns ();
  }

  /* The device is full: the next completion brings us back, and the
   * deadline from a stale dispatch call would be meaningless.
   */
  if (e->inflight >= e->depth)
    next = SCHED_NEVER;
  if (next != e->timer_at) {
    e->timer_at = next;
    timer_arm (e, &e->timer, next, now);
  }

  /* The emulated device's next completion. */
  if (e->dm)
    hold_earlier = hold_arm (&e->held);

  return look || e->timer_at < timer0 || hold_earlier || e->stopping;
}

static void
pump_cb (struct ev_loop *loop, ev_prepare *w, int revents)
{
  struct engine *e = w->data;

  pass (e, now_ns (), true);
  if (e->stopping && e->inflight == 0 && !sched_has_work (e->sched) &&
      e->parked == 0 && e->granted == NULL &&
      __atomic_load_n (&e->ready, __ATOMIC_ACQUIRE) == NULL &&
      __atomic_load_n (&e->subs, __ATOMIC_ACQUIRE) == NULL)
    ev_break (loop, EVBREAK_ALL);
}

static void
timer_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct engine *e = w->data;

  ASSERT_LOCKED (e);
  e->timer_at = SCHED_NEVER;    /* the pump runs before the loop blocks */
}

static void
hold_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct engine *e = w->data;

  ASSERT_LOCKED (e);
  hold_fired (&e->held);        /* the pump releases what is due */
}

static void
wake_cb (struct ev_loop *loop, ev_async *w, int revents)
{
  /* Nothing: the pump drains the submission stack. */
}

static void *
dispatcher_main (void *arg)
{
  struct engine *e = arg;

  eng_lock (e);                 /* given up only inside ev_run's sleeps */
  ev_run (e->loop, 0);
  eng_unlock (e);
  return NULL;
}

/* Free whatever engine_start made; the thread must not be running. */
static void
engine_free (struct engine *e)
{
  if (e->be)
    e->bops->destroy (e->be);
  if (e->loop) {
    ev_async_stop (e->loop, &e->wake);
    ev_prepare_stop (e->loop, &e->pump);
    ev_timer_stop (e->loop, &e->timer);
    if (e->held.fd >= 0)
      ev_io_stop (e->loop, &e->hold_io);
    ev_loop_destroy (e->loop);
  }
  pthread_mutex_destroy (&e->lock);
  if (e->sched)
    sched_destroy (e->sched);   /* frees its groups and queues */
  hold_fini (&e->held);
  free (e);
}

int
engine_start (const struct engine_cfg *cfg)
{
  struct engine *e;
  sigset_t all, old;
  int err;

  if (eng)
    return -EBUSY;
  e = calloc (1, sizeof *e);
  if (!e)
    return -ENOMEM;
  e->depth = cfg->queue_depth;
  e->timer_at = SCHED_NEVER;
  e->granted_tail = &e->granted;
  e->held.fd = -1;
  e->dm = cfg->dm;
  e->hooks = cfg->hooks ? cfg->hooks : &no_hooks;
  e->opaque = cfg->opaque;
  pthread_mutex_init (&e->lock, NULL);
  e->bops = cfg->backend;
  if (!e->bops) {
    err = -EINVAL;
    goto err;
  }
  e->sched = sched_create (cfg->sched_ops);
  if (!e->sched) {
    err = -ENOMEM;
    goto err;
  }
  e->loop = ev_loop_new (EVFLAG_AUTO | EVFLAG_NOSIGMASK);
  if (!e->loop) {
    err = -ENOMEM;
    goto err;
  }
  ev_set_userdata (e->loop, e);
  ev_set_loop_release_cb (e->loop, loop_release, loop_acquire);
  ev_async_init (&e->wake, wake_cb);
  e->wake.data = e;
  ev_async_start (e->loop, &e->wake);
  ev_prepare_init (&e->pump, pump_cb);
  e->pump.data = e;
  ev_prepare_start (e->loop, &e->pump);
  ev_timer_init (&e->timer, timer_cb, 0., 0.);
  e->timer.data = e;
  if (e->dm) {
    err = hold_init (&e->held, e->dm);
    if (err)
      goto err;
    ev_io_init (&e->hold_io, hold_cb, e->held.fd, EV_READ);
    e->hold_io.data = e;
    ev_io_start (e->loop, &e->hold_io);
  }

  err = e->bops->create (e, e->loop, cfg, &e->be);
  if (err)
    goto err;
  e->direct = !cfg->no_direct && !e->dm;
  e->gone = cfg->gone;
  e->inl = !cfg->no_inline && e->bops->sync != NULL;
  if (e->hooks->setup) {
    eng_lock (e);
    err = e->hooks->setup (e, e->opaque, e->sched, e->loop);
    eng_unlock (e);
    if (err)
      goto err;
  }

  eng = e;
  e->running = 1;
  /* nbdkit's main thread takes the signals; the dispatcher takes none. */
  sigfillset (&all);
  pthread_sigmask (SIG_SETMASK, &all, &old);
  err = -pthread_create (&e->thread, NULL, dispatcher_main, e);
  pthread_sigmask (SIG_SETMASK, &old, NULL);
  if (err) {
    eng = NULL;
    goto err;
  }
  e->thread_started = true;
  pthread_setname_np (e->thread, "cfq-dispatch");      /* for top -H, gdb */
  return 0;

 err:
  engine_free (e);
  return err;
}

bool
engine_stop (struct engine_stats *stats)
{
  struct engine *e = eng;
  struct creq stop, *r = &stop;
  bool ran;

  if (!e)
    return false;
  if (e->thread_started) {
    memset (&stop, 0, sizeof stop);
    stop.kind = CREQ_STOP;
    post (e, &r, 1);
    __atomic_store_n (&e->running, 0, __ATOMIC_RELEASE);
    pthread_join (e->thread, NULL);
    if (e->hooks->teardown) {
      eng_lock (e);
      e->hooks->teardown (e, e->opaque);
      eng_unlock (e);
    }
  }
  ran = e->thread_started;
  if (stats)
    *stats = e->st;
  __atomic_store_n (&eng, NULL, __ATOMIC_SEQ_CST);
  /* Wait for the workers still inside (see eng_users).  One that pushed
   * after the loop had left is told the engine is gone.
   */
  for (;;) {
    struct creq *late = __atomic_exchange_n (&e->subs, NULL,
                                             __ATOMIC_ACQUIRE);

    while (late) {
      struct creq *next = late->next;

      late->cancelled = true;
      late->res = -ESHUTDOWN;
      creq_wake (late, CREQ_ST_DONE);
      late = next;
    }
    if (__atomic_load_n (&eng_users, __ATOMIC_ACQUIRE) == 0 &&
        __atomic_load_n (&e->subs, __ATOMIC_ACQUIRE) == NULL)
      break;
    sched_yield ();
  }
  engine_free (e);
  return ran;
}

/* Worker, holding the lock, its request r pushed: the direct path (see
 * the essay at the top).  Returns with the lock released.
 */
static void
direct (struct engine *e, struct creq *r)
{
  bool quiet, look;

  e->st.direct++;
  /* Quiet before the pass, so that a request completing inside the
   * submit call itself does not wake the loop for nothing.
   */
  quiet = e->bops->wait && !e->reaper &&
    e->bops->quiet (e->be, true, false) >= 0;
  look = pass (e, now_ns (), true);
  if (quiet && r->at_ring &&
      __atomic_load_n (&r->state, __ATOMIC_ACQUIRE) == CREQ_ST_PENDING) {
    int err;

    e->reaper = true;
    do {
      eng_unlock (e);
      if (look)
        ev_async_send (e->loop, &e->wake);
      err = e->bops->wait (e->be);
      eng_lock (e);
      e->st.reaps++;
      e->bops->reap (e->be);
      /* Send again what reaping requeued (short transfers).  New
       * dispatches are the loop's: io_uring makes a request's completion
       * task work for the thread that submitted it, and that should be
       * the loop, not a worker that may go back to its socket (or away).
       */
      look = false;
      if (e->bops->pending && e->bops->pending (e->be))
        look |= e->bops->submit (e->be);
      look |= sched_has_work (e->sched) ||
        __atomic_load_n (&e->subs, __ATOMIC_ACQUIRE) != NULL;
    } while (!err &&
             __atomic_load_n (&r->state, __ATOMIC_ACQUIRE) == CREQ_ST_PENDING);
    /* On an error from the wait r is still at the ring: with the ring
     * loud again the loop reaps it and wakes us as on the normal path.
     */
    e->reaper = false;
  }
  /* Loud again.  Any request still at the device (others', or ours after
   * an error) is the loop's to reap: kick it once so that nothing that
   * completed while we were quiet waits for a wake-up that never comes.
   */
  if (quiet)
    e->bops->quiet (e->be, false, e->inflight > 0);
  eng_unlock (e);
  if (look)
    ev_async_send (e->loop, &e->wake);
}

/* Inline reads that found none of their data cached, as a moving
 * average of misses in 1/1024ths (weight 1/8); a read found partly
 * cached (a sequential reader behind readahead) counts as a hit.
 * Workers update it without a lock: a lost update only makes it a little
 * slower to move.
 */
#define READ_MISS_ONE 1024u
#define READ_PROBE 16u

static void
read_seen (struct engine *e, bool hit)
{
  unsigned m = __atomic_load_n (&e->read_miss, __ATOMIC_RELAXED);

  m = hit ? m - m / 8 : m + (READ_MISS_ONE - m) / 8;
  __atomic_store_n (&e->read_miss, m, __ATOMIC_RELAXED);
}

/* Worker: should this read take the inline path?  Not while most reads
 * miss the cache: each would take the lock, try, take it again and go
 * to the ring anyway, where a plain hand-off would have gone at once
 * (cold random reads: 12.6k against 20.7k IOPS).  Every READ_PROBE-th
 * read still tries, to see the cache warm up.
 */
static bool
read_inline (struct engine *e)
{
  if (__atomic_load_n (&e->read_miss, __ATOMIC_RELAXED) < READ_MISS_ONE / 2)
    return true;
  return __atomic_add_fetch (&e->read_probe, 1, __ATOMIC_RELAXED)
    % READ_PROBE == 0;
}

/* Worker, without the lock: r was dispatched with room in the pool, or
 * with a buffer to fill: allocate it, lay the data in.  0 or -errno.
 */
static int
buffer_ready (struct creq *r)
{
  if (!r->buf) {
    int err = bounce_alloc (&r->bw);

    if (err)
      return err;
    r->buf = r->bw.buf;
  }
  return r->fill_fn ? r->fill_fn (r) : 0;
}

/* Worker: r was dispatched to us (state RUN).  Do it here, then report
 * it done and run a pass for what that frees, under the lock, as the
 * loop would; or, for a request with a pool buffer to allocate or fill,
 * do that and hand it to the ring.  Returns once r is DONE (an emulated device may hold it
 * beyond its real I/O).
 */
static void
run_own (struct engine *e, struct creq *r)
{
  uint64_t now;
  bool look;
  int res;

  __atomic_store_n (&r->state, CREQ_ST_PENDING, __ATOMIC_RELAXED);
  if (r->eop == EOP_WORKER)
    res = r->worker_fn (r);
  else if (!r->sync_ok) {
    /* Its pool buffer to allocate or fill (start), then the ring's. */
    res = buffer_ready (r);
    if (!res) {
      eng_lock (e);
      ring_queue (e, r, now_ns ());
      eng_unlock (e);
      ev_async_send (e->loop, &e->wake);        /* the loop submits */
      creq_wait (r);
      return;
    }
  }
  else if ((res = e->bops->sync (e->be, r, true)) == -EAGAIN) {
    /* A read of what is not cached.  Alone at the device, wait for it
     * here (one wake-up, as on the direct path); with others there, the
     * ring batches it with theirs and reads it asynchronously.
     */
    read_seen (e, r->done_bytes > 0);  /* partly cached: readahead */
    eng_lock (e);
    if (e->inflight > 1) {
      e->st.inline_ring++;
      ring_queue (e, r, now_ns ());
      eng_unlock (e);
      ev_async_send (e->loop, &e->wake);        /* the loop submits */
      creq_wait (r);
      return;
    }
    eng_unlock (e);
    res = e->bops->sync (e->be, r, false);
  }
  else if (r->eop == EOP_READ)
    read_seen (e, true);
  eng_lock (e);
  now = now_ns ();
  finish (e, r, res, now);
  e->st.inline_passes++;
  look = pass (e, now, false);
  eng_unlock (e);
  if (look)
    ev_async_send (e->loop, &e->wake);
  creq_wait (r);
}

/* Worker, r pushed: the inline path (see the top).  A pass under the
 * lock, which dispatches r to us if the policy lets it go now.
 */
static void
inline_pass (struct engine *e)
{
  bool look = true;

  eng_lock (e);
  /* The loop may have left already (engine_stop): r stays posted, and
   * engine_stop fails it.
   */
  if (!e->stopping) {
    e->st.inline_passes++;
    look = pass (e, now_ns (), false);
  }
  eng_unlock (e);
  if (look)
    ev_async_send (e->loop, &e->wake);
}

/* Worker, its client gone or the server stopping: take back those of
 * rs[0..n) still in the scheduler, and fail them (see "held requests" at
 * the top).
 */
static void
cancel (struct engine *e, struct creq **rs, unsigned n)
{
  unsigned taken = 0;
  uint64_t now;

  eng_lock (e);
  now = now_ns ();
  for (unsigned i = 0; i < n; i++) {
    struct creq *r = rs[i];

    if (!__atomic_load_n (&r->queued, __ATOMIC_RELAXED))
      continue;                 /* at the device, or not inserted yet */
    __atomic_store_n (&r->queued, false, __ATOMIC_RELAXED);
    sched_cancel (e->sched, &r->rq, now);
    if (e->hooks->policy)
      e->hooks->policy (e, e->opaque, ENGINE_CALL_CANCEL, r, now);
    e->st.cancelled++;
    r->cancelled = true;
    if (e->hooks->done)
      e->hooks->done (e, e->opaque, r, -ESHUTDOWN, now);
    r->res = -ESHUTDOWN;
    creq_wake (r, CREQ_ST_DONE);
    taken++;
  }
  eng_unlock (e);
  if (taken)
    ev_async_send (e->loop, &e->wake);  /* the deadline may have moved */
}

/* Worker: creq_wait for rs[i], of the n of engine_run_many, asking
 * e->gone whenever it has waited ENGINE_PROBE_NS with its request still
 * in the scheduler.
 */
static uint32_t
creq_wait_held (struct engine *e, struct creq **rs, unsigned n, unsigned i)
{
  struct creq *r = rs[i];

  uint32_t s;

  if (!e->gone)
    return creq_wait (r);
  while ((s = creq_settled (r)) == 0)
    if (futex_wait_for (&r->state, CREQ_ST_SLEEPING, ENGINE_PROBE_NS) &&
        __atomic_load_n (&r->queued, __ATOMIC_RELAXED) && e->gone ())
      cancel (e, rs + i, n - i);
  return s;
}

/* Worker: engine_logged_error's answer. */
static __thread int run_logged;

int
engine_logged_error (void)
{
  int e = run_logged;

  run_logged = 0;               /* one answer per failed call */
  return e;
}

int
engine_run_many (struct creq **rs, unsigned n)
{
  struct engine *e = eng_enter ();
  int err, first = 0;

  run_logged = 0;
  if (!e)
    return -ESHUTDOWN;
  for (unsigned i = 0; i < n; i++)
    if (rs[i]->sync_ok &&
        (!e->inl || n > 1 || (rs[i]->eop == EOP_READ && !read_inline (e))))
      rs[i]->sync_ok = false;   /* the ring's */
  err = push (e, rs, n);
  if (err) {
    for (unsigned i = 0; i < n; i++)
      rs[i]->cancelled = true;
    eng_leave ();
    return err;
  }
  /* The direct path, for one request on an idle engine.  The unlocked
   * look at inflight first keeps a busy engine's workers off the lock:
   * a worker holding it, even briefly, when the loop wakes would put the
   * loop to sleep on the mutex, a wake-up more per request.
   */
  if (n == 1 && rs[0]->sync_ok)
    inline_pass (e);
  else if (n == 1 && e->direct &&
           __atomic_load_n (&e->inflight, __ATOMIC_RELAXED) == 0 &&
           eng_trylock (e)) {
    if (e->inflight == 0 && !e->reaper && !e->stopping)
      direct (e, rs[0]);
    else {
      eng_unlock (e);
      ev_async_send (e->loop, &e->wake);
    }
  }
  else
    ev_async_send (e->loop, &e->wake);

  for (unsigned i = 0; i < n; i++) {
    struct creq *r = rs[i];

    if (creq_wait_held (e, rs, n, i) == CREQ_ST_RUN)
      run_own (e, r);           /* dispatched to us: do it here */
    if (r->res && !first) {
      first = r->res;
      run_logged = r->res_logged ? first : 0;
    }
  }
  eng_leave ();
  return first;
}

static int
queue_msg (enum creq_kind kind, struct sched_queue **qp,
           const struct engine_qspec *spec, void *acct)
{
  struct creq m, *r = &m;
  struct engine *e;
  int err;

  memset (&m, 0, sizeof m);
  m.kind = kind;
  m.rq.q = *qp;
  m.arg = (void *) spec;
  m.acct = acct;
  e = eng_enter ();
  if (!e)
    return -ESHUTDOWN;
  err = post (e, &r, 1);
  if (!err)
    creq_wait (&m);
  eng_leave ();
  if (err)
    return err;
  *qp = m.rq.q;
  return m.res;
}

int
engine_queue_new (struct sched_queue **qp, const struct engine_qspec *spec,
                  void *acct)
{
  *qp = NULL;
  if (!spec || !spec->grp)
    return -EINVAL;             /* no assert on a client's path */
  return queue_msg (CREQ_OPEN, qp, spec, acct);
}

void
engine_queue_free (struct sched_queue *q, void *acct)
{
  if (q)
    queue_msg (CREQ_CLOSE, &q, NULL, acct);
}

unsigned
engine_inflight (const struct engine *e)
{
  ASSERT_LOCKED (e);
  return e->inflight;
}

unsigned
engine_held (const struct engine *e)
{
  ASSERT_LOCKED (e);
  return e->held.n;
}

uint64_t
engine_cancelled (const struct engine *e)
{
  ASSERT_LOCKED (e);
  return e->st.cancelled;
}

unsigned
engine_depth (const struct engine *e)
{
  ASSERT_LOCKED (e);
  return e->depth;
}

int
engine_set_depth (struct engine *e, unsigned depth)
{
  ASSERT_LOCKED (e);
  if (depth < 1 || depth > SCHED_DEPTH_MAX)
    return -ERANGE;
  e->depth = depth;
  return 0;
}

uint64_t
engine_now (void)
{
  return now_ns ();
}
