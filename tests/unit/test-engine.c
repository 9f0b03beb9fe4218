/* test-engine.c: the engine (plugin/engine.c), without nbdkit or a disk.
 *
 *  1. many threads on the null backend, under fifo and under cfq: each
 *     thread is a connection (its own queue in a group made by the setup
 *     hook) and sends single requests (the direct path when the engine is
 *     idle) and batches (engine_run_many); every request is inserted,
 *     dispatched and completed exactly once (the done hook counts each by
 *     its id), reads come back as the backend wrote them (zeroes), the
 *     connection hooks see every open and close, and the device never
 *     holds more than queue_depth requests;
 *  2. a gate backend (below), which holds what it is given until the test
 *     opens it: the engine fills the device to exactly queue_depth and
 *     never beyond, with more requests waiting than that;
 *  3. stop drains: with queue_depth requests at the gate (and then, again,
 *     as many more in the scheduler), engine_stop does not return until
 *     every one of them has completed, and each completes with success;
 *  4. the inline path, on a backend with a sync op: many threads send
 *     reads and writes marked sync_ok; every one is done once, by its
 *     worker or (reads the backend says are not cached) by the ring, the
 *     device never holds more than queue_depth, and the counters say both
 *     ways were taken;
 *  5. a request a worker's pass queues for the backend is submitted: at
 *     depth 1 a read waits behind an op its worker runs (EOP_WORKER);
 *     when that op is done the worker's own pass dispatches the read,
 *     and the loop must be woken to submit it (the null backend has no
 *     pending op to say so);
 *  6. held requests of a client that went away: at depth 1, behind a
 *     request held at the gate, a batch of two waits in the scheduler;
 *     its worker asks whether its client is gone (engine_cfg.gone) while
 *     it waits, the worker at the device never does, and once the client
 *     is gone both of its requests fail with -ESHUTDOWN, marked
 *     cancelled, within a bound, while the request at the gate and
 *     another client's request in the scheduler complete as usual.
 *  7. buffers from the pool, taken at dispatch (engine.c, "Buffers"): on
 *     the gate, with room in the pool for one buffer, a second request
 *     that needs one is kept aside without a device slot (a request that
 *     needs none goes to the device past it), and reaches the device
 *     once the first gives its buffer back; then many threads in two
 *     groups on the null backend, a pool far smaller than what they ask
 *     for: every request is done once, with an aligned buffer of its
 *     own (reads zeroed by the backend, writes filled by their worker
 *     exactly once before the I/O), the pool ends with nothing in use,
 *     never past its cap, and no group given more than its share while
 *     the other waited.
 *
 * The gate backend is this test's own: the engine takes any struct
 * backend_ops (engine_cfg.backend), as the plugin hands it io_uring's or
 * the null one.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#include "bounce.h"
#include "check.h"
#include "engine.h"
#include "poolshare.h"
#include "rng.h"

#define LEN 4096

struct treq {
  struct creq r;
  unsigned id;                  /* index into done[] */
};

/* What the hooks see, under the engine lock. */
static struct {
  struct engine *e;
  struct sched_group *grp;
  unsigned opens, closes, setups, teardowns;
  unsigned *done;               /* per request id: completions */
  unsigned ndone;
  unsigned bad_res;             /* completions with res != 0 */
  unsigned over_depth;          /* done seen with inflight >= depth */
} hk;

static int
h_setup (struct engine *e, void *opaque, struct sched *s,
         struct ev_loop *loop)
{
  CHECK_PTR_EQ (opaque, &hk);
  hk.e = e;
  hk.setups++;
  hk.grp = sched_group_new (s, "test", SCHED_WEIGHT_DEFAULT);
  return hk.grp ? 0 : -ENOMEM;
}

static void
h_teardown (struct engine *e, void *opaque)
{
  CHECK_PTR_EQ (e, hk.e);
  hk.teardowns++;
}

static void
h_conn (struct engine *e, void *opaque, void *acct, bool open)
{
  CHECK_PTR_EQ (e, hk.e);
  CHECK_NOTNULL (acct);
  if (open)
    hk.opens++;
  else
    hk.closes++;
}

static void
h_done (struct engine *e, void *opaque, struct creq *r, int res, uint64_t now)
{
  struct treq *t = (struct treq *) r;

  CHECK_PTR_EQ (e, hk.e);
  hk.done[t->id]++;
  __atomic_add_fetch (&hk.ndone, 1, __ATOMIC_RELAXED);
  if (res)
    hk.bad_res++;
  if (engine_inflight (e) >= engine_depth (e))
    hk.over_depth++;
}

static const struct engine_hooks hooks = {
  .setup = h_setup,
  .teardown = h_teardown,
  .conn = h_conn,
  .done = h_done,
};

static void
hk_reset (unsigned nreq)
{
  free (hk.done);
  memset (&hk, 0, sizeof hk);
  hk.done = calloc (nreq, sizeof *hk.done);
  CHECK_NOTNULL (hk.done);
}

static struct engine_cfg
cfg_for (const char *sched, const struct backend_ops *b, unsigned depth)
{
  struct engine_cfg cfg = {
    .sched_ops = sched_lookup (sched),
    .queue_depth = depth,
    .backend = b,
    .hooks = &hooks,
    .opaque = &hk,
  };

  CHECK_NOTNULL (cfg.sched_ops);
  for (int i = 0; i < ENGINE_FILE_SLOTS; i++)
    cfg.fds[i] = -1;
  return cfg;
}

/* ---- 1. many threads, null backend ------------------------------------------ */

#define NTHREADS 8
#define PER_THREAD 1500         /* requests per thread */
#define BATCH 3

struct worker {
  pthread_t t;
  unsigned first_id;            /* ids first_id .. first_id + PER_THREAD */
  struct treq *rq;              /* PER_THREAD of them */
  unsigned char buf[LEN];
  int err;                      /* first failure, 0 if none */
  unsigned bad_data;            /* reads that did not come back zeroed */
};

static void
prep (struct worker *w, struct sched_queue *q, unsigned i, bool read)
{
  struct treq *t = &w->rq[i];

  creq_init (&t->r, q, read ? RQ_READ : RQ_WRITE, read ? EOP_READ : EOP_WRITE,
             FILE_DIRECT, w->buf, (uint64_t) i * LEN, LEN);
  t->r.acct = w;
  t->id = w->first_id + i;
}

/* A connection's queue, in the group the setup hook made; acct w. */
static int
open_queue (struct worker *w, struct sched_queue **qp)
{
  struct engine_qspec spec = {
    .grp = hk.grp, .cls = SCHED_CLASS_BE, .level = 4,
  };

  return engine_queue_new (qp, &spec, w);
}

static void *
worker_main (void *arg)
{
  struct worker *w = arg;
  struct sched_queue *q;
  unsigned i = 0;
  int err;

  err = open_queue (w, &q);
  if (err) {
    w->err = err;
    return NULL;
  }
  while (i < PER_THREAD && !w->err) {
    if (i % 4 == 3 && i + BATCH <= PER_THREAD) {   /* a batch of writes */
      struct creq *rs[BATCH];

      for (unsigned k = 0; k < BATCH; k++) {
        prep (w, q, i + k, false);
        rs[k] = &w->rq[i + k].r;
      }
      err = engine_run_many (rs, BATCH);
      i += BATCH;
    }
    else {                                      /* one read */
      memset (w->buf, 0xa5, LEN);
      prep (w, q, i, true);
      err = engine_run (&w->rq[i].r);
      if (!err && (w->buf[0] != 0 || w->buf[LEN - 1] != 0 ||
                   memcmp (w->buf, w->buf + 1, LEN - 1) != 0))
        w->bad_data++;
      i++;
    }
    if (err)
      w->err = err;
  }
  engine_queue_free (q, w);
  return NULL;
}

static void
test_many (const char *sched, unsigned depth)
{
  const unsigned total = NTHREADS * PER_THREAD;
  struct engine_cfg cfg = cfg_for (sched, &null_backend_ops, depth);
  struct worker *w = calloc (NTHREADS, sizeof *w);
  struct engine_stats st;

  CHECK_NOTNULL (w);
  hk_reset (total);
  CHECK_EQ (engine_start (&cfg), 0);
  CHECK_EQ (hk.setups, 1u);
  CHECK_NOTNULL (hk.grp);
  CHECK_EQ (engine_start (&cfg), -EBUSY);         /* one per process */
  for (unsigned i = 0; i < NTHREADS; i++) {
    w[i].first_id = i * PER_THREAD;
    w[i].rq = calloc (PER_THREAD, sizeof *w[i].rq);
    CHECK_NOTNULL (w[i].rq);
    CHECK_EQ (pthread_create (&w[i].t, NULL, worker_main, &w[i]), 0);
  }
  for (unsigned i = 0; i < NTHREADS; i++) {
    CHECK_EQ (pthread_join (w[i].t, NULL), 0);
    CHECK_EQ (w[i].err, 0);
    CHECK_EQ (w[i].bad_data, 0u);
    for (unsigned k = 0; k < PER_THREAD; k++)
      CHECK_EQ (w[i].rq[k].r.res, 0);
  }
  CHECK (engine_stop (&st));
  CHECK (!engine_stop (NULL));                    /* idempotent */
  CHECK_EQ (hk.teardowns, 1u);
  CHECK_EQ (hk.opens, (unsigned) NTHREADS);
  CHECK_EQ (hk.closes, (unsigned) NTHREADS);
  CHECK_EQ (hk.ndone, total);
  for (unsigned id = 0; id < total; id++)
    CHECK_EQ (hk.done[id], 1u);
  CHECK_EQ (hk.bad_res, 0u);
  CHECK_EQ (hk.over_depth, 0u);
  CHECK_EQ (st.dispatched, (uint64_t) total);
  CHECK_LE (st.max_inflight, depth);
  CHECK_GE (st.max_inflight, 1u);
  printf ("many (%s, depth %u): %u requests, %llu passes (%llu direct), "
          "at most %u at the device\n", sched, depth, total,
          (unsigned long long) st.passes, (unsigned long long) st.direct,
          st.max_inflight);
  for (unsigned i = 0; i < NTHREADS; i++)
    free (w[i].rq);
  free (w);
  /* Stopped: nothing is accepted any more. */
  {
    struct treq t;

    creq_init (&t.r, NULL, RQ_READ, EOP_READ, FILE_DIRECT, NULL, 0, LEN);
    CHECK_EQ (engine_run (&t.r), -ESHUTDOWN);
  }
}

/* ---- the gate backend ---------------------------------------------------------- */

struct gate {
  struct engine *e;
  struct ev_loop *loop;
  ev_async open;                /* the test opens the gate (any thread) */
  struct creq *head, **tail;    /* held; under the engine lock */
  unsigned at_dev;              /* atomic: held now */
  unsigned max_at_dev;          /* atomic: most held at once */
  int flood;                    /* atomic: complete everything at once */
};

static struct gate *gate;       /* the one engine's */

static void
gate_release (struct gate *g)
{
  struct creq *r = g->head, *next;

  g->head = NULL;
  g->tail = &g->head;
  for (; r; r = next) {
    next = r->next;
    __atomic_sub_fetch (&g->at_dev, 1, __ATOMIC_RELAXED);
    engine_complete (g->e, r, 0);
  }
}

static void
gate_open_cb (struct ev_loop *loop, ev_async *w, int revents)
{
  gate_release (w->data);
}

static int
gate_create (struct engine *e, struct ev_loop *loop,
             const struct engine_cfg *cfg, struct backend **bp)
{
  struct gate *g = calloc (1, sizeof *g);

  if (!g)
    return -ENOMEM;
  g->e = e;
  g->loop = loop;
  g->tail = &g->head;
  ev_async_init (&g->open, gate_open_cb);
  g->open.data = g;
  ev_async_start (loop, &g->open);
  gate = g;
  *bp = (struct backend *) g;
  return 0;
}

static void
gate_destroy (struct backend *b)
{
  struct gate *g = (struct gate *) b;

  CHECK_NULL (g->head);
  ev_async_stop (g->loop, &g->open);
  gate = NULL;
  free (g);
}

static int
gate_queue (struct backend *b, struct creq *r)
{
  struct gate *g = (struct gate *) b;
  unsigned n = __atomic_add_fetch (&g->at_dev, 1, __ATOMIC_RELAXED);

  if (n > __atomic_load_n (&g->max_at_dev, __ATOMIC_RELAXED))
    __atomic_store_n (&g->max_at_dev, n, __ATOMIC_RELAXED);
  r->next = NULL;
  *g->tail = r;
  g->tail = &r->next;
  return 0;
}

static bool
gate_submit (struct backend *b)
{
  struct gate *g = (struct gate *) b;

  if (__atomic_load_n (&g->flood, __ATOMIC_ACQUIRE))
    gate_release (g);
  return false;
}

static const struct backend_ops gate_ops = {
  .name = "gate",
  .create = gate_create,
  .destroy = gate_destroy,
  .queue = gate_queue,
  .submit = gate_submit,
};

static unsigned
at_dev (void)
{
  return __atomic_load_n (&gate->at_dev, __ATOMIC_RELAXED);
}

/* Poll (10 s at most) until the gate holds n requests. */
static bool
wait_at_dev (unsigned n)
{
  for (int i = 0; i < 50000; i++) {
    if (at_dev () == n)
      return true;
    usleep (200);
  }
  return false;
}

/* ---- 2. the device filled to queue_depth, never beyond -------------------------- */

#define GATE_DEPTH 4
#define GATE_THREADS 8
#define GATE_PER 40

static int gate_workers_left;   /* atomic */

static void *
gate_worker (void *arg)
{
  struct worker *w = arg;
  struct sched_queue *q;

  w->err = open_queue (w, &q);
  for (unsigned i = 0; i < GATE_PER && !w->err; i++) {
    prep (w, q, i, false);
    w->err = engine_run (&w->rq[i].r);
  }
  if (!w->err)
    engine_queue_free (q, w);
  __atomic_sub_fetch (&gate_workers_left, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void
test_depth (void)
{
  const unsigned total = GATE_THREADS * GATE_PER;
  struct engine_cfg cfg = cfg_for ("fifo", &gate_ops, GATE_DEPTH);
  struct worker *w = calloc (GATE_THREADS, sizeof *w);
  struct engine_stats st;

  CHECK_NOTNULL (w);
  hk_reset (total);
  CHECK_EQ (engine_start (&cfg), 0);
  CHECK_NOTNULL (gate);
  gate_workers_left = GATE_THREADS;
  for (unsigned i = 0; i < GATE_THREADS; i++) {
    w[i].first_id = i * GATE_PER;
    w[i].rq = calloc (GATE_PER, sizeof *w[i].rq);
    CHECK_NOTNULL (w[i].rq);
    CHECK_EQ (pthread_create (&w[i].t, NULL, gate_worker, &w[i]), 0);
  }
  /* Eight writers, a device four deep: it fills to four and stays
   * there while nothing completes.
   */
  CHECK (wait_at_dev (GATE_DEPTH));
  usleep (20000);
  CHECK_EQ (at_dev (), (unsigned) GATE_DEPTH);
  CHECK_EQ (__atomic_load_n (&hk.ndone, __ATOMIC_RELAXED), 0u);
  /* Open the gate a batch at a time until everyone is done. */
  while (__atomic_load_n (&gate_workers_left, __ATOMIC_ACQUIRE)) {
    ev_async_send (gate->loop, &gate->open);
    usleep (500);
  }
  for (unsigned i = 0; i < GATE_THREADS; i++) {
    CHECK_EQ (pthread_join (w[i].t, NULL), 0);
    CHECK_EQ (w[i].err, 0);
    free (w[i].rq);
  }
  CHECK_EQ (__atomic_load_n (&gate->max_at_dev, __ATOMIC_RELAXED),
            (unsigned) GATE_DEPTH);
  CHECK (engine_stop (&st));
  CHECK_EQ (hk.ndone, total);
  for (unsigned id = 0; id < total; id++)
    CHECK_EQ (hk.done[id], 1u);
  CHECK_EQ (hk.over_depth, 0u);
  CHECK_EQ (st.max_inflight, (unsigned) GATE_DEPTH);
  CHECK_EQ (hk.opens, (unsigned) GATE_THREADS);
  CHECK_EQ (hk.closes, (unsigned) GATE_THREADS);
  free (w);
}

/* ---- 3. engine_stop drains -------------------------------------------------------- */

#define DRAIN_MAX (2 * GATE_DEPTH)

static unsigned drain_n;        /* requests in the batch */
static struct worker drain_w;
static int drain_rc = -1;       /* engine_run_many's result */
static int drain_returned;      /* atomic */

static void *
drain_worker (void *arg)
{
  struct worker *w = &drain_w;
  struct sched_queue *q;
  struct creq *rs[DRAIN_MAX];

  w->err = open_queue (w, &q);
  if (w->err)
    return NULL;
  for (unsigned i = 0; i < drain_n; i++) {
    prep (w, q, i, false);
    rs[i] = &w->rq[i].r;
  }
  /* One batch is one push: once any of it is at the gate, all of it
   * is in the engine.  The queue is left to engine_stop, which frees
   * the scheduler with every queue in it (a connection closing after
   * the stop has nobody to tell).
   */
  drain_rc = engine_run_many (rs, drain_n);
  __atomic_store_n (&drain_returned, 1, __ATOMIC_RELEASE);
  return NULL;
}

static struct engine_stats stop_st;
static bool stop_ran;
static unsigned done_at_stop;
static int stop_returned;       /* atomic */

static void *
stopper (void *arg)
{
  stop_ran = engine_stop (&stop_st);
  done_at_stop = hk.ndone;
  __atomic_store_n (&stop_returned, 1, __ATOMIC_RELEASE);
  return NULL;
}

/* n requests, queue_depth of them at the device, the rest in the
 * scheduler.
 */
static void
test_drain (unsigned n)
{
  struct engine_cfg cfg = cfg_for ("fifo", &gate_ops, GATE_DEPTH);
  pthread_t wt, stt;

  CHECK_LE (n, (unsigned) DRAIN_MAX);
  CHECK_GE (n, (unsigned) GATE_DEPTH);
  drain_n = n;
  drain_rc = -1;
  drain_returned = stop_returned = 0;
  stop_ran = false;
  hk_reset (n);
  memset (&drain_w, 0, sizeof drain_w);
  drain_w.rq = calloc (n, sizeof *drain_w.rq);
  CHECK_NOTNULL (drain_w.rq);
  CHECK_EQ (engine_start (&cfg), 0);
  CHECK_EQ (pthread_create (&wt, NULL, drain_worker, NULL), 0);
  CHECK (wait_at_dev (GATE_DEPTH));     /* the rest wait in the scheduler */
  CHECK_EQ (pthread_create (&stt, NULL, stopper, NULL), 0);
  usleep (50000);
  /* Nothing has completed, so nothing may have returned. */
  CHECK_EQ (__atomic_load_n (&stop_returned, __ATOMIC_ACQUIRE), 0);
  CHECK_EQ (__atomic_load_n (&drain_returned, __ATOMIC_ACQUIRE), 0);
  CHECK_EQ (at_dev (), (unsigned) GATE_DEPTH);
  /* Open the gate for good: the loop cannot have left while requests
   * were at the device, so it is there to take this.
   */
  __atomic_store_n (&gate->flood, 1, __ATOMIC_RELEASE);
  ev_async_send (gate->loop, &gate->open);
  CHECK_EQ (pthread_join (stt, NULL), 0);
  CHECK_EQ (pthread_join (wt, NULL), 0);
  CHECK (stop_ran);
  CHECK_EQ (done_at_stop, n);
  CHECK_EQ (drain_w.err, 0);
  CHECK_EQ (drain_rc, 0);
  for (unsigned id = 0; id < n; id++) {
    CHECK_EQ (hk.done[id], 1u);
    CHECK_EQ (drain_w.rq[id].r.res, 0);
  }
  CHECK_EQ (stop_st.dispatched, (uint64_t) n);
  CHECK_EQ (hk.teardowns, 1u);
  CHECK_NULL (gate);                    /* destroyed by engine_stop */
  free (drain_w.rq);
}

/* ---- 4. the inline path ------------------------------------------------------- */

#define INL_THREADS 6
#define INL_PER 600
#define INL_DEPTH 4
#define INL_PATTERN 0x5a

static unsigned inl_sync_calls;         /* atomic */
static unsigned inl_eagain;             /* atomic: -EAGAIN given */
static unsigned inl_at_dev;             /* atomic: in sync now */
static unsigned inl_over_depth;         /* atomic: sync with more at once */

/* Reads at every third block are "not cached": with nowait, -EAGAIN. */
static bool
inl_uncached (const struct creq *r)
{
  return r->eop == EOP_READ && (r->rq.off / LEN) % 3 == 0;
}

static int
inl_sync (struct backend *b, struct creq *r, bool nowait)
{
  unsigned n = __atomic_add_fetch (&inl_at_dev, 1, __ATOMIC_RELAXED);
  int res = 0;

  __atomic_add_fetch (&inl_sync_calls, 1, __ATOMIC_RELAXED);
  if (n > INL_DEPTH)
    __atomic_add_fetch (&inl_over_depth, 1, __ATOMIC_RELAXED);
  if (nowait && inl_uncached (r)) {
    __atomic_add_fetch (&inl_eagain, 1, __ATOMIC_RELAXED);
    res = -EAGAIN;
  }
  else {
    if (r->eop == EOP_READ)
      memset (r->buf, INL_PATTERN, r->rq.len);
    usleep (20);                /* others get to the device meanwhile */
  }
  __atomic_sub_fetch (&inl_at_dev, 1, __ATOMIC_RELAXED);
  return res;
}

/* The null backend's queue and submit (the ring: reads give zeroes),
 * with pending, and sync.
 */
static struct backend_ops inl_ops;

static void *
inl_worker (void *arg)
{
  struct worker *w = arg;
  unsigned char buf[LEN];
  struct sched_queue *q;

  w->err = open_queue (w, &q);
  for (unsigned i = 0; i < INL_PER && !w->err; i++) {
    bool read = i % 2 == 0;
    struct treq *t = &w->rq[i];

    creq_init (&t->r, q, read ? RQ_READ : RQ_WRITE,
               read ? EOP_READ : EOP_WRITE, FILE_BUFFERED, buf,
               (uint64_t) (w->first_id + i) * LEN, LEN);
    t->r.acct = w;
    t->r.sync_ok = true;
    t->id = w->first_id + i;
    memset (buf, 0xa5, LEN);
    w->err = engine_run (&t->r);
    /* Done by the worker (the pattern) or by the ring (zeroes), whole;
     * by the ring only if the engine sent it there at once (sync_ok
     * cleared: most reads missed lately) or the backend said uncached.
     */
    if (read && !w->err &&
        ((buf[0] != INL_PATTERN && buf[0] != 0) ||
         memcmp (buf, buf + 1, LEN - 1) != 0 ||
         (buf[0] == 0 && t->r.sync_ok && !inl_uncached (&t->r))))
      w->bad_data++;
  }
  if (!w->err)
    engine_queue_free (q, w);
  return NULL;
}

static void
test_inline (const char *sched)
{
  const unsigned total = INL_THREADS * INL_PER;
  struct engine_cfg cfg;
  struct worker *w = calloc (INL_THREADS, sizeof *w);
  struct engine_stats st;

  inl_ops = null_backend_ops;
  inl_ops.name = "inline";
  inl_ops.sync = inl_sync;
  cfg = cfg_for (sched, &inl_ops, INL_DEPTH);
  inl_sync_calls = inl_eagain = inl_over_depth = 0;
  CHECK_NOTNULL (w);
  hk_reset (total);
  CHECK_EQ (engine_start (&cfg), 0);
  for (unsigned i = 0; i < INL_THREADS; i++) {
    w[i].first_id = i * INL_PER;
    w[i].rq = calloc (INL_PER, sizeof *w[i].rq);
    CHECK_NOTNULL (w[i].rq);
    CHECK_EQ (pthread_create (&w[i].t, NULL, inl_worker, &w[i]), 0);
  }
  for (unsigned i = 0; i < INL_THREADS; i++) {
    CHECK_EQ (pthread_join (w[i].t, NULL), 0);
    CHECK_EQ (w[i].err, 0);
    CHECK_EQ (w[i].bad_data, 0u);
    free (w[i].rq);
  }
  CHECK (engine_stop (&st));
  CHECK_EQ (hk.ndone, total);
  for (unsigned id = 0; id < total; id++)
    CHECK_EQ (hk.done[id], 1u);
  CHECK_EQ (hk.bad_res, 0u);
  CHECK_EQ (hk.over_depth, 0u);
  CHECK_EQ (inl_over_depth, 0u);
  CHECK_LE (st.max_inflight, (unsigned) INL_DEPTH);
  CHECK_EQ (st.dispatched, (uint64_t) total);
  /* Every write, and the reads of cached blocks while most reads hit,
   * done by their worker; some uncached reads finished by the ring.
   */
  CHECK_GE (st.inline_ops, (uint64_t) total / 2);
  CHECK_GT (st.inline_ring, 0u);
  CHECK_GT (inl_eagain, 0u);
  CHECK_GE (inl_sync_calls, (unsigned) st.inline_ops);
  printf ("inline (%s): %u requests, %llu done inline (%llu finished by "
          "the ring), %u sync calls, at most %u at the device\n", sched,
          total, (unsigned long long) st.inline_ops,
          (unsigned long long) st.inline_ring, inl_sync_calls,
          st.max_inflight);
  free (w);
}

/* ---- 5. a worker's pass wakes the loop to submit ---------------------------------- */

static int wk_entered, wk_release;      /* atomic */
static int wk_read_done;                /* atomic */
static int wk_give_up;                  /* atomic: the test failed */

static int
wk_fn (struct creq *r)
{
  __atomic_store_n (&wk_entered, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n (&wk_release, __ATOMIC_ACQUIRE))
    usleep (100);
  return 0;
}

static void *
wk_op_thread (void *arg)
{
  struct worker *w = arg;
  struct sched_queue *q;
  struct treq *t = &w->rq[0];

  w->err = open_queue (w, &q);
  if (w->err)
    return NULL;
  creq_init (&t->r, q, RQ_TRIM, EOP_WORKER, FILE_DIRECT, NULL, 0, LEN);
  t->r.worker_fn = wk_fn;
  t->r.acct = w;
  t->id = w->first_id;
  w->err = engine_run (&t->r);
  /* Nothing more from this thread until the read is done: a message
   * of ours (the queue's close) would wake the loop and hide the bug.
   */
  while (!__atomic_load_n (&wk_read_done, __ATOMIC_ACQUIRE) &&
         !__atomic_load_n (&wk_give_up, __ATOMIC_ACQUIRE))
    usleep (100);
  engine_queue_free (q, w);
  return NULL;
}

static void *
wk_read_thread (void *arg)
{
  struct worker *w = arg;
  struct sched_queue *q;

  w->err = open_queue (w, &q);
  if (w->err)
    return NULL;
  prep (w, q, 0, true);
  w->err = engine_run (&w->rq[0].r);
  __atomic_store_n (&wk_read_done, 1, __ATOMIC_RELEASE);
  engine_queue_free (q, w);
  return NULL;
}

static void
test_worker_pass_submits (void)
{
  struct engine_cfg cfg = cfg_for ("fifo", &null_backend_ops, 1);
  struct worker *w = calloc (2, sizeof *w);
  int i;

  CHECK_NOTNULL (w);
  hk_reset (2);
  wk_entered = wk_release = wk_read_done = wk_give_up = 0;
  CHECK_EQ (engine_start (&cfg), 0);
  for (unsigned k = 0; k < 2; k++) {
    w[k].first_id = k;
    w[k].rq = calloc (1, sizeof *w[k].rq);
    CHECK_NOTNULL (w[k].rq);
  }
  CHECK_EQ (pthread_create (&w[0].t, NULL, wk_op_thread, &w[0]), 0);
  for (i = 0; i < 50000 && !__atomic_load_n (&wk_entered, __ATOMIC_ACQUIRE);
       i++)
    usleep (200);
  CHECK (wk_entered);
  /* The read waits in the scheduler: the one slot is the op's. */
  CHECK_EQ (pthread_create (&w[1].t, NULL, wk_read_thread, &w[1]), 0);
  usleep (50000);
  CHECK_EQ (__atomic_load_n (&wk_read_done, __ATOMIC_ACQUIRE), 0);
  __atomic_store_n (&wk_release, 1, __ATOMIC_RELEASE);
  /* A hang, not a speed: nothing else would ever wake the loop. */
  for (i = 0; i < 100000 && !__atomic_load_n (&wk_read_done,
                                                __ATOMIC_ACQUIRE); i++)
    usleep (100);
  if (!__atomic_load_n (&wk_read_done, __ATOMIC_ACQUIRE)) {
    __atomic_store_n (&wk_give_up, 1, __ATOMIC_RELEASE);
    fprintf (stderr, "FAIL: test-engine: the read dispatched by a worker's "
             "pass was not submitted in 10 s\n");
    exit (1);
  }
  for (unsigned k = 0; k < 2; k++) {
    CHECK_EQ (pthread_join (w[k].t, NULL), 0);
    CHECK_EQ (w[k].err, 0);
    free (w[k].rq);
  }
  CHECK (engine_stop (NULL));
  CHECK_EQ (hk.ndone, 2u);
  free (w);
}

/* ---- 6. held requests of a client that went away ---------------------------------- */

enum { GONE_AT_DEV = 1, GONE_HELD, GONE_KEPT };
static __thread int gone_role;          /* which worker asks */
static unsigned gone_asked[4];          /* atomic: questions, by role */
static int gone_now;                    /* atomic: GONE_HELD's client went */
static int gone_returned[4];            /* atomic: engine_run* returned */

static bool
gone_probe (void)
{
  __atomic_add_fetch (&gone_asked[gone_role], 1, __ATOMIC_RELAXED);
  return gone_role == GONE_HELD && __atomic_load_n (&gone_now,
                                                    __ATOMIC_ACQUIRE);
}

static struct worker gone_w[4];
static uint64_t gone_ret_ns;            /* when GONE_HELD returned */

static uint64_t
mono_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

static void *
gone_worker (void *arg)
{
  int role = (int) (intptr_t) arg;
  struct worker *w = &gone_w[role];
  struct sched_queue *q;

  gone_role = role;
  w->err = open_queue (w, &q);
  if (w->err)
    return NULL;
  if (role == GONE_HELD) {
    struct creq *rs[2];

    prep (w, q, 0, false);
    prep (w, q, 1, false);
    rs[0] = &w->rq[0].r;
    rs[1] = &w->rq[1].r;
    w->err = engine_run_many (rs, 2);
    gone_ret_ns = mono_ns ();
  }
  else {
    prep (w, q, 0, false);
    w->err = engine_run (&w->rq[0].r);
  }
  __atomic_store_n (&gone_returned[role], 1, __ATOMIC_RELEASE);
  engine_queue_free (q, w);
  return NULL;
}

static int
returned (int role)
{
  return __atomic_load_n (&gone_returned[role], __ATOMIC_ACQUIRE);
}

static void
test_gone (void)
{
  struct engine_cfg cfg = cfg_for ("fifo", &gate_ops, 1);
  struct engine_stats st;
  uint64_t t_gone;
  int i;

  cfg.gone = gone_probe;
  hk_reset (16);
  memset (gone_asked, 0, sizeof gone_asked);
  memset (gone_returned, 0, sizeof gone_returned);
  gone_now = 0;
  memset (gone_w, 0, sizeof gone_w);
  for (int r = 1; r < 4; r++) {
    gone_w[r].first_id = (unsigned) r * 4;
    gone_w[r].rq = calloc (2, sizeof *gone_w[r].rq);
    CHECK_NOTNULL (gone_w[r].rq);
  }
  CHECK_EQ (engine_start (&cfg), 0);
  /* One request at the gate (depth 1), then the others wait. */
  CHECK_EQ (pthread_create (&gone_w[GONE_AT_DEV].t, NULL, gone_worker,
                            (void *) (intptr_t) GONE_AT_DEV), 0);
  CHECK (wait_at_dev (1));
  CHECK_EQ (pthread_create (&gone_w[GONE_HELD].t, NULL, gone_worker,
                            (void *) (intptr_t) GONE_HELD), 0);
  CHECK_EQ (pthread_create (&gone_w[GONE_KEPT].t, NULL, gone_worker,
                            (void *) (intptr_t) GONE_KEPT), 0);
  usleep (4 * ENGINE_PROBE_NS / 1000);
  /* Nothing done; the held ones asked, the one at the device never. */
  CHECK_EQ (at_dev (), 1u);
  CHECK (!returned (GONE_AT_DEV) && !returned (GONE_HELD) &&
         !returned (GONE_KEPT));
  CHECK_GE (__atomic_load_n (&gone_asked[GONE_HELD], __ATOMIC_RELAXED), 1u);
  CHECK_GE (__atomic_load_n (&gone_asked[GONE_KEPT], __ATOMIC_RELAXED), 1u);
  CHECK_EQ (__atomic_load_n (&gone_asked[GONE_AT_DEV], __ATOMIC_RELAXED), 0u);
  /* The client goes: both of its requests fail, nothing else moves. */
  t_gone = mono_ns ();
  __atomic_store_n (&gone_now, 1, __ATOMIC_RELEASE);
  for (i = 0; i < 50000 && !returned (GONE_HELD); i++)
    usleep (200);
  CHECK (returned (GONE_HELD));
  CHECK_LT (gone_ret_ns - t_gone, 5 * NSEC_PER_SEC);    /* a hang, not a
                                                           speed */
  printf ("gone: the held requests failed %.0f ms after the client went\n",
          (gone_ret_ns - t_gone) / 1e6);
  CHECK_EQ (gone_w[GONE_HELD].err, -ESHUTDOWN);
  for (int k = 0; k < 2; k++) {
    CHECK_EQ (gone_w[GONE_HELD].rq[k].r.res, -ESHUTDOWN);
    CHECK (gone_w[GONE_HELD].rq[k].r.cancelled);
    CHECK_EQ (hk.done[gone_w[GONE_HELD].first_id + k], 1u);
  }
  CHECK_EQ (hk.bad_res, 2u);
  usleep (2 * ENGINE_PROBE_NS / 1000);
  CHECK_EQ (at_dev (), 1u);
  CHECK (!returned (GONE_AT_DEV) && !returned (GONE_KEPT));
  /* Open the gate: the others complete as usual. */
  __atomic_store_n (&gate->flood, 1, __ATOMIC_RELEASE);
  ev_async_send (gate->loop, &gate->open);
  for (int r = 1; r < 4; r++)
    CHECK_EQ (pthread_join (gone_w[r].t, NULL), 0);
  CHECK_EQ (gone_w[GONE_AT_DEV].err, 0);
  CHECK_EQ (gone_w[GONE_KEPT].err, 0);
  CHECK (!gone_w[GONE_KEPT].rq[0].r.cancelled);
  CHECK_EQ (__atomic_load_n (&gone_asked[GONE_AT_DEV], __ATOMIC_RELAXED), 0u);
  CHECK (engine_stop (&st));
  CHECK_EQ (st.cancelled, 2u);
  CHECK_EQ (st.dispatched, 2u);
  CHECK_EQ (hk.ndone, 4u);
  CHECK_EQ (hk.bad_res, 2u);
  CHECK_EQ (hk.closes, 3u);
  for (int r = 1; r < 4; r++)
    free (gone_w[r].rq);
}

/* ---- 7. buffers taken at dispatch --------------------------------------------- */

#define POOL_CAP (2u << 20)     /* bytes: bounce_init's least is 1 MiB */
#define POOL_ALIGN 4096

struct pool_req {
  struct treq t;
  unsigned fills;               /* fill_fn calls */
  bool fill_buf_ok;             /* fill saw an aligned buffer */
};

static int
pool_fill (struct creq *r)
{
  struct pool_req *p = r->arg;

  p->fills++;
  p->fill_buf_ok = r->buf && (uintptr_t) r->buf % POOL_ALIGN == 0;
  memset (r->buf, 0x5a, r->rq.len);
  return 0;
}

/* A request of w's for len bytes through a pool buffer of group grp. */
static void
pool_prep (struct pool_req *p, struct sched_queue *q, unsigned id,
           bool read, uint32_t len, unsigned grp)
{
  memset (p, 0, sizeof *p);
  creq_init (&p->t.r, q, read ? RQ_READ : RQ_WRITE,
             read ? EOP_READ : EOP_WRITE, FILE_DIRECT, NULL,
             (uint64_t) id * LEN, len);
  p->t.id = id;
  p->t.r.bounce_len = len;
  p->t.r.pool_grp = grp;
  if (!read) {
    p->t.r.fill_fn = pool_fill;
    p->t.r.arg = p;
  }
}

struct pool_one {
  pthread_t t;
  struct pool_req p;
  bool bounce;                  /* ask for a pool buffer */
  int err;
  int done;                     /* atomic: engine_run returned */
};

static struct worker pool_w;    /* the acct of every queue here */

static void *
pool_one_main (void *arg)
{
  struct pool_one *o = arg;
  struct sched_queue *q;

  o->err = open_queue (&pool_w, &q);
  if (!o->err) {
    pool_prep (&o->p, q, o->p.t.id, true, POOL_CAP, 0);
    if (!o->bounce) {
      o->p.t.r.bounce_len = 0;
      o->p.t.r.buf = pool_w.buf;
      o->p.t.r.rq.len = LEN;
    }
    o->err = engine_run (&o->p.t.r);
    if (o->p.t.r.bounce_len && o->p.t.r.buf)
      bounce_put (o->p.t.r.buf);
    engine_queue_free (q, &pool_w);
  }
  __atomic_store_n (&o->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void
open_gate_until (int *flag)
{
  for (int i = 0; i < 50000 && !__atomic_load_n (flag, __ATOMIC_ACQUIRE);
       i++) {
    ev_async_send (gate->loop, &gate->open);
    usleep (200);
  }
  CHECK (__atomic_load_n (flag, __ATOMIC_ACQUIRE));
}

static void
test_pool_gate (void)
{
  struct engine_cfg cfg = cfg_for ("fifo", &gate_ops, 2);
  struct pool_one o[3];
  struct engine_stats st;
  struct bounce_stats bs;

  hk_reset (3);
  CHECK_EQ (bounce_init (POOL_ALIGN, POOL_CAP, 1, true), 0);
  CHECK_EQ (engine_start (&cfg), 0);
  memset (o, 0, sizeof o);
  for (unsigned i = 0; i < 3; i++) {
    o[i].p.t.id = i;
    o[i].bounce = i < 2;
  }
  /* A takes the whole pool and waits at the gate. */
  CHECK_EQ (pthread_create (&o[0].t, NULL, pool_one_main, &o[0]), 0);
  CHECK (wait_at_dev (1));
  /* B needs a buffer too: kept aside, no device slot. */
  CHECK_EQ (pthread_create (&o[1].t, NULL, pool_one_main, &o[1]), 0);
  for (int i = 0; i < 50000; i++) {
    bounce_stats (&bs);
    if (bs.waits == 1)
      break;
    usleep (200);
  }
  CHECK_EQ (bs.waits, 1u);
  usleep (20000);
  CHECK_EQ (at_dev (), 1u);
  /* C needs none: it reaches the device past B (depth 2). */
  CHECK_EQ (pthread_create (&o[2].t, NULL, pool_one_main, &o[2]), 0);
  CHECK (wait_at_dev (2));
  CHECK_EQ (__atomic_load_n (&o[1].done, __ATOMIC_ACQUIRE), 0);
  /* A and C done: A's buffer back, B goes to the device and is done. */
  open_gate_until (&o[1].done);
  for (unsigned i = 0; i < 3; i++) {
    CHECK_EQ (pthread_join (o[i].t, NULL), 0);
    CHECK_EQ (o[i].err, 0);
    CHECK_EQ (hk.done[i], 1u);
  }
  CHECK (o[1].p.t.r.buf != NULL);
  CHECK_EQ ((uintptr_t) o[1].p.t.r.buf % POOL_ALIGN, 0u);
  CHECK (engine_stop (&st));
  CHECK_EQ (st.pool_waits, 1u);
  CHECK_LE (st.max_inflight, 2u);
  bounce_stats (&bs);
  CHECK_EQ (bs.in_use, 0u);
  CHECK_EQ (bs.gets, 2u);
  CHECK_LE (bs.peak, (size_t) POOL_CAP);
  bounce_fini ();
  printf ("pool on the gate: a request kept aside for a buffer held no "
          "device slot\n");
}

#define POOL_THREADS 8
#define POOL_PER 400

static void *
pool_worker (void *arg)
{
  struct worker *w = arg;
  struct pool_req *rq = (struct pool_req *) w->rq;
  unsigned grp = w->first_id / POOL_PER % 2;
  uint64_t x = w->first_id + 1;
  struct sched_queue *q;

  w->err = open_queue (w, &q);
  for (unsigned i = 0; i < POOL_PER && !w->err; i++) {
    struct pool_req *p = &rq[i];
    bool read = i % 3 != 2;
    /* 4 KiB .. 1 MiB: 1 to 16 of the pool's 64 KiB steps */
    uint32_t len = (uint32_t) ((splitmix64 (&x) % 256) + 1) * LEN;
    unsigned char *b;

    pool_prep (p, q, w->first_id + i, read, len, grp);
    w->err = engine_run (&p->t.r);
    b = p->t.r.buf;
    if (w->err || !b)
      break;
    if ((uintptr_t) b % POOL_ALIGN ||
        (read ? (b[0] | b[len - 1]) != 0
              : p->fills != 1 || !p->fill_buf_ok || b[len - 1] != 0x5a))
      w->bad_data++;
    if (read && p->fills)
      w->bad_data++;
    bounce_put (b);
  }
  if (!w->err)
    engine_queue_free (q, w);
  return NULL;
}

static void
test_pool_many (const char *sched)
{
  const unsigned total = POOL_THREADS * POOL_PER;
  struct engine_cfg cfg = cfg_for (sched, &null_backend_ops, 8);
  struct worker *w = calloc (POOL_THREADS, sizeof *w);
  struct engine_stats st;
  struct bounce_stats bs;
  struct bounce_grp_stats gs[2];

  CHECK_NOTNULL (w);
  hk_reset (total);
  CHECK_EQ (bounce_init (POOL_ALIGN, POOL_CAP, 2, true), 0);
  CHECK_EQ (engine_start (&cfg), 0);
  for (unsigned i = 0; i < POOL_THREADS; i++) {
    w[i].first_id = i * POOL_PER;
    w[i].rq = calloc (POOL_PER, sizeof (struct pool_req));
    CHECK_NOTNULL (w[i].rq);
    CHECK_EQ (pthread_create (&w[i].t, NULL, pool_worker, &w[i]), 0);
  }
  for (unsigned i = 0; i < POOL_THREADS; i++) {
    CHECK_EQ (pthread_join (w[i].t, NULL), 0);
    CHECK_EQ (w[i].err, 0);
    CHECK_EQ (w[i].bad_data, 0u);
    free (w[i].rq);
  }
  CHECK (engine_stop (&st));
  CHECK_EQ (hk.ndone, total);
  for (unsigned id = 0; id < total; id++)
    CHECK_EQ (hk.done[id], 1u);
  CHECK_EQ (hk.bad_res, 0u);
  bounce_stats (&bs);
  CHECK_EQ (bs.in_use, 0u);
  CHECK_EQ (bs.gets, (uint64_t) total);
  CHECK_LE (bs.peak, (size_t) POOL_CAP);
  CHECK_LE (bs.total, (size_t) POOL_CAP);
  CHECK_GT (bs.waits, 0u);
  CHECK_LE (bs.active, 2u);
  /* Groups stay present for POOL_KEEP after their last buffer. */
  usleep (POOL_KEEP / 1000 + 20000);
  bounce_stats (&bs);
  CHECK_EQ (bs.active, 0u);
  CHECK_EQ (bs.share, (size_t) POOL_CAP);
  for (unsigned g = 0; g < 2; g++) {
    CHECK_EQ (bounce_grp_stats (g, &gs[g]), 0);
    CHECK_EQ (gs[g].in_use, 0u);
    CHECK_EQ (gs[g].waiting, 0u);
    CHECK_EQ (gs[g].over_share, 0u);
    CHECK_GT (gs[g].gets, 0u);
  }
  CHECK_EQ (bounce_grp_stats (2, &gs[0]), -ENOENT);
  printf ("pool (%s): %u requests, %llu kept aside, %llu allocated or "
          "filled by their worker\n", sched, total,
          (unsigned long long) st.pool_waits,
          (unsigned long long) st.pool_worker);
  bounce_fini ();
  free (w);
}

int
main (void)
{
  struct treq t;

  /* No engine yet. */
  creq_init (&t.r, NULL, RQ_READ, EOP_READ, FILE_DIRECT, NULL, 0, LEN);
  CHECK_EQ (engine_run (&t.r), -ESHUTDOWN);
  CHECK (!engine_stop (NULL));

  test_many ("fifo", 4);
  test_many ("cfq", 4);
  test_many ("fifo", 1);
  test_depth ();
  test_drain (GATE_DEPTH);              /* all at the device */
  test_drain (DRAIN_MAX);               /* and as many in the scheduler */
  test_inline ("fifo");
  test_inline ("cfq");
  test_worker_pass_submits ();
  test_gone ();
  test_pool_gate ();
  test_pool_many ("fifo");
  test_pool_many ("cfq");
  free (hk.done);
  check_done ("test-engine");
  return 0;
}
