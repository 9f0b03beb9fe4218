/* cfqsim: a discrete-event simulator of tenants sharing one device.
 *
 * What it is for: to see what a scheduling policy (core/fifo.c,
 * core/cfq.c) does to throughput, fairness and latency without a disk, a
 * server or a clock.  It reads the server's own config format
 * (core/config.c): [device] (emulate= and model.* choose the device model,
 * queue_depth), [scheduler], [group NAME] and [export NAME] as the server
 * reads them, plus [tenant NAME] workloads in fio's terms and a [sim]
 * section (duration, seed).  core/apply.c turns the model into scheduler
 * groups and tunables exactly as the plugin does.  Each connection of a
 * tenant is one queue (one NBD connection, one fio job) inserting requests
 * into the policy through include/sched.h as the plugin's dispatcher
 * does; dispatched requests go to the device model (include/devmodel.h),
 * which says which completes when.  Time is virtual: an event heap ordered
 * by (time, sequence number) drives everything, so a run of minutes of
 * device time takes a fraction of a second, and the same scenario and seed
 * always give byte-identical output.
 *
 * The loop (per distinct event time, like one pass of the dispatcher):
 *
 *   pop the events due now (those that existed when the pass began):
 *                             arrival   -> sched_insert (a connection's slot)
 *                             device    -> every request the model has
 *                                          done by now: sched_completed,
 *                                          then the slot thinks,
 *                                          resubmits, fsyncs
 *                             timer     -> (nothing: the kick below runs)
 *   kick: while fewer than queue_depth requests are at the device,
 *         rq = sched_dispatch(now, &next); submit it to the device model.
 *         When dispatch returns NULL, "next" is the policy's timer (an idle
 *         window or slice end); it replaces any earlier one.
 *   then one device event at the model's next completion time replaces
 *   any earlier one (a disk with NCQ decides its order as it goes).
 *
 * Watchdog: if the policy has work, nothing is at the device, it dispatched
 * nothing and asked for no timer, nothing will ever happen again: that is a
 * scheduler bug (a stall) and cfqsim stops with an error instead of
 * reporting numbers from a hung device.
 *
 * What the simulator leaves out: the NBD round trip and the CPU (a
 * tenant's thinktime stands in for them), the page cache, and the server's
 * own file exports (a tenant needs an export that is a region of the
 * device).  The device is the model alone: its size is model.capacity and
 * [device] file is not opened.
 *
 * Scenario files: see the README section "The simulator and device models"
 * and tests/sim/NAME.job.  Errors are reported as FILE:LINE: message.
 * [group] caps and reservations (iops_max, bps_min ...: include/qos.h)
 * apply as in the server (core/apply.c).
 *
 * --window TIME adds, per tenant and per group, the requests and bytes
 * that completed in each window of that width: what a cap or a
 * reservation gives second by second, not just on average.  --trace
 * prints CFQ's decisions with the virtual time.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq.h"
#include "config.h"
#include "devmodel.h"
#include "hist.h"
#include "qos.h"
#include "rng.h"
#include "sched.h"
#include "stats.h"
#include "units.h"

/* ---- the run's shape, from the model ---------------------------------- */

struct sim_group {
  const char *name;
  unsigned weight;              /* 100..1000 */
  struct sched_group *sg;
  unsigned njobs;               /* connections in the run */
  uint64_t bytes, ios;          /* completed data requests within duration */
  struct hist lat;              /* ns: latency of its jobs' data requests */
  uint64_t *win_ios, *win_bytes; /* per window (--window), summed at report */
};

struct job;

struct simrq {                  /* one request slot of a connection */
  struct rq rq;
  struct job *j;
  uint64_t t_submit;            /* ns: inserted into the scheduler */
  struct simrq *next_free;      /* on the job's free list */
};

/* One connection of a tenant: a queue in the scheduler. */
struct job {
  const struct cfg_tenant *t;   /* the tenant it belongs to */
  unsigned tenant;              /* index of t in the model */
  unsigned conn;                /* its number among the tenant's */
  int group;                    /* index into groups[] */
  unsigned rwmixread;           /* percent of reads */
  bool rand;                    /* random offsets */
  bool writes_sync;             /* its export has writes=sync */
  bool writes_async;            /* its export has writes=async */
  uint32_t bs;                  /* bytes per request */
  uint64_t stride;              /* bytes between sequential requests */
  unsigned depth;               /* outstanding data requests */
  uint64_t think;               /* ns from a completion to the next submit */
  uint64_t rate_iops, rate;     /* per connection; 0: unlimited */
  unsigned fsync;               /* flush after every N writes; 0 never */
  uint64_t start, stop;         /* ns: active window */
  uint64_t offset, size;        /* bytes on the device: the region */

  /* run state */
  struct sched_queue *q;
  struct simrq *slots;          /* depth + 1 (the flush) */
  struct simrq *free;
  unsigned inflight;            /* data requests submitted, not completed */
  unsigned parked;              /* slots waiting for an fsync to finish */
  unsigned writes;              /* writes since the last flush */
  bool fsync_wait;              /* no new data until the flush is done */
  bool flush_out;               /* the flush is submitted */
  uint64_t next_off;            /* bytes: next sequential offset */
  uint64_t issued;              /* data requests submitted so far */
  uint64_t rng;                 /* xorshift64* state */

  uint64_t batch_start;         /* ns: first write since the last flush */
  bool batch_open;              /* writes submitted since the last flush */

  /* results, counted for completions at or before the end */
  uint64_t bytes, ios, flushes;
  uint64_t writes_done;         /* of ios, the writes */
  struct hist lat;              /* ns: data request latency, insert->done */
  struct hist fsync_lat;        /* ns: first write of a batch -> its flush
                                   done (what fsync-tester times) */
  uint64_t *win_ios, *win_bytes; /* per window of --window, by completion */
  uint64_t *sbytes, *sios;      /* per second of the run (--json series) */
};

static struct {
  const struct cfg_model *m;
  const char *file;             /* the scenario, for FILE:LINE messages */
  uint64_t duration;            /* ns */
  uint64_t seed;
  unsigned queue_depth;         /* max requests at the device */
  const char *policy;           /* the scheduler's name */
  const char *test_policy;      /* --sched test-stall|test-spin, or NULL */

  struct sim_group *groups;     /* m->nr_groups */
  unsigned ngroups;
  struct job **jobs;            /* every connection of every tenant */
  unsigned njobs;
  bool *tenant_on;              /* m->nr_tenants: selected by --only */

  bool json;
  bool trace;                   /* --trace: the policy's decisions */
  const char *only;             /* comma-separated tenant names, or NULL */
  uint64_t window;              /* ns: --window width; 0 = no windows */
  unsigned nwin;                /* windows in the run */
  size_t nsec;                  /* seconds in the run, rounded up */
  unsigned events_applied;      /* [event]s that took effect */
} cfg;

static const char *progname = "cfqsim";

static void __attribute__ ((noreturn, format (printf, 2, 3)))
die_at (const char *where, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: ", where ? where : progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

/* An error at the tenant's [tenant NAME] line. */
static void __attribute__ ((noreturn, format (printf, 2, 3)))
die_tenant (const struct cfg_tenant *t, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s:%u: tenant %s: ", cfg.file, t->line, t->name);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size);

  if (!p)
    die_at (NULL, "out of memory");
  return p;
}

/* ---- the event heap ------------------------------------------------------ */

enum ev_type { EV_ARRIVE, EV_DEVICE, EV_TIMER, EV_FLUSH, EV_CONTROL };

struct ev {
  uint64_t t;                   /* ns */
  uint64_t seq;                 /* tie-break: order of scheduling */
  enum ev_type type;
  void *p;                      /* job (ARRIVE, FLUSH) or cfg_event
                                   (CONTROL) */
  uint64_t gen;                 /* TIMER, DEVICE: generation it belongs to */
};

static struct {
  struct ev *v;
  size_t n, cap;
  uint64_t seq;
} heap;

static bool
ev_less (const struct ev *a, const struct ev *b)
{
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
ev_push (uint64_t t, enum ev_type type, void *p, uint64_t gen)
{
  size_t i;

  if (heap.n == heap.cap) {
    heap.cap = heap.cap ? heap.cap * 2 : 1024;
    heap.v = realloc (heap.v, heap.cap * sizeof *heap.v);
    if (!heap.v)
      die_at (NULL, "out of memory");
  }
  i = heap.n++;
  heap.v[i] = (struct ev) { t, heap.seq++, type, p, gen };
  while (i > 0 && ev_less (&heap.v[i], &heap.v[(i - 1) / 2])) {
    struct ev tmp = heap.v[i];
    heap.v[i] = heap.v[(i - 1) / 2];
    heap.v[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static struct ev
ev_pop (void)
{
  struct ev top = heap.v[0];
  size_t i = 0;

  heap.v[0] = heap.v[--heap.n];
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap.n && ev_less (&heap.v[l], &heap.v[m])) m = l;
    if (r < heap.n && ev_less (&heap.v[r], &heap.v[m])) m = r;
    if (m == i)
      break;
    struct ev tmp = heap.v[i];
    heap.v[i] = heap.v[m];
    heap.v[m] = tmp;
    i = m;
  }
  return top;
}

/* ---- the simulation -------------------------------------------------------- */

static struct {
  struct sched *s;
  struct devmodel *dm;
  uint64_t now;                 /* ns: the pass being run (for --trace) */
  unsigned at_dev;              /* requests dispatched, not completed */
  uint64_t timer_at;            /* ns: the policy's pending timer or NEVER */
  uint64_t timer_gen;           /* generation of the pending timer */
  uint64_t dev_at;              /* ns: the pending device event or NEVER */
  uint64_t dev_gen;             /* generation of the pending device event */
  uint64_t dispatched;          /* total dispatches */
  uint64_t end;                 /* ns: the run's duration */
} sim;

static uint64_t job_rate_time (const struct job *j);

static uint64_t
job_rand (struct job *j)
{
  return xorshift64s (&j->rng);
}

static void
submit_rq (struct job *j, struct simrq *sr, uint64_t now)
{
  sr->t_submit = now;
  if (cfg.trace)
    fprintf (stderr, "%12.6f %s.%u: insert %s %" PRIu64 "+%u\n", now / 1e9,
             j->t->name, j->conn, sr->rq.op == RQ_FLUSH
             ? "flush" : sr->rq.op == RQ_WRITE ? "write" : "read",
             sr->rq.off, sr->rq.len);
  sched_insert (sim.s, &sr->rq, now);
}

static void
job_flush (struct job *j, uint64_t now)
{
  struct simrq *sr = &j->slots[j->depth];

  memset (&sr->rq, 0, sizeof sr->rq);
  sr->rq.op = RQ_FLUSH;
  sr->rq.flags = RQ_SYNC;
  sr->rq.q = j->q;
  sr->rq.priv = sr;
  j->flush_out = true;
  submit_rq (j, sr, now);
}

/* A slot of job j is ready to submit at now. */
static void
job_arrive (struct job *j, uint64_t now)
{
  struct simrq *sr;
  uint64_t off, t_ok;
  bool write;

  if (now >= j->stop)
    return;                     /* the slot retires */
  if (j->fsync_wait) {
    j->parked++;
    return;
  }
  /* rate_iops / rate: request k no earlier than start + k intervals. */
  t_ok = job_rate_time (j);
  if (now < t_ok) {
    if (t_ok < j->stop)
      ev_push (t_ok, EV_ARRIVE, j, 0);
    return;
  }
  j->issued++;
  write = j->rwmixread == 0
    || (j->rwmixread < 100 && job_rand (j) % 100 >= j->rwmixread);
  sr = j->free;
  j->free = sr->next_free;
  if (j->rand)
    off = j->offset + job_rand (j) % (j->size / j->bs) * j->bs;
  else {
    off = j->next_off;
    j->next_off += j->stride;
    if (j->next_off + j->bs > j->offset + j->size)
      j->next_off = j->offset + (j->next_off - j->offset) % j->stride;
  }
  memset (&sr->rq, 0, sizeof sr->rq);
  sr->rq.off = off;
  sr->rq.len = j->bs;
  sr->rq.op = write ? RQ_WRITE : RQ_READ;
  /* As the server: reads are sync, writes too on a writes=sync export
   * (which makes them FUA); on writes=async they are async, and otherwise
   * (writes=auto) the policy's rule decides (RQ_AUTO, sched_classify).
   */
  if (!write)
    sr->rq.flags |= RQ_SYNC;
  else if (j->writes_sync)
    sr->rq.flags |= RQ_SYNC | RQ_FUA;
  else if (!j->writes_async)
    sr->rq.flags |= RQ_AUTO;
  sr->rq.q = j->q;
  sr->rq.priv = sr;
  j->inflight++;
  submit_rq (j, sr, now);
  if (write && j->fsync && !j->batch_open) {
    j->batch_open = true;
    j->batch_start = now;
  }
  if (write && j->fsync && ++j->writes >= j->fsync) {
    j->writes = 0;
    j->fsync_wait = true;
  }
}

/* A slot finished (its request completed): think, then arrive again. */
/* Even with think 0 the next request is a new event: it is processed in
 * the next pass at the same instant, after the policy has been asked to
 * dispatch.  That is the order of the real thing: the dispatcher sees the
 * completion (and may expire an empty queue or arm an idle timer) before
 * the client, which must first receive the reply, sends its next request.
 */
static void
job_slot_done (struct job *j, uint64_t now)
{
  if (now + j->think < j->stop && now + j->think <= sim.end)
    ev_push (now + j->think, EV_ARRIVE, j, 0);
}

/* The earliest time the job's next request may go, by its rate limits. */
static uint64_t
job_rate_time (const struct job *j)
{
  uint64_t t = 0;

  if (j->rate_iops)
    t = (uint64_t) ((unsigned __int128) j->issued * NSEC_PER_SEC
                    / j->rate_iops);
  if (j->rate) {
    uint64_t tb = (uint64_t) ((unsigned __int128) j->issued * j->bs
                              * NSEC_PER_SEC / j->rate);
    if (tb > t)
      t = tb;
  }
  return j->start + t;
}

static void
on_complete (struct simrq *sr, uint64_t now)
{
  struct job *j = sr->j;

  sim.at_dev--;
  sched_completed (sim.s, &sr->rq, now);
  if (sr->rq.op == RQ_FLUSH) {
    j->flushes++;
    if (j->batch_open)
      hist_add (&j->fsync_lat, now - j->batch_start);
    j->batch_open = false;
    j->flush_out = false;
    j->fsync_wait = false;
    while (j->parked) {         /* these slots already thought */
      j->parked--;
      ev_push (now, EV_ARRIVE, j, 0);
    }
    return;
  }
  j->ios++;
  j->writes_done += sr->rq.op == RQ_WRITE;
  j->bytes += sr->rq.len;
  if (now / NSEC_PER_SEC < cfg.nsec) {
    j->sbytes[now / NSEC_PER_SEC] += sr->rq.len;
    j->sios[now / NSEC_PER_SEC]++;
  }
  hist_add (&j->lat, now - sr->t_submit);
  if (cfg.window) {
    unsigned w = now / cfg.window;
    if (w >= cfg.nwin)
      w = cfg.nwin - 1;         /* a completion exactly at the end */
    j->win_ios[w]++;
    j->win_bytes[w] += sr->rq.len;
  }
  j->inflight--;
  sr->next_free = j->free;
  j->free = sr;
  job_slot_done (j, now);
  if (j->fsync_wait && j->inflight == 0 && !j->flush_out) {
    j->flush_out = true;        /* the client sends it in the next pass */
    ev_push (now, EV_FLUSH, j, 0);
  }
}

static void
on_arrive (struct job *j, uint64_t now)
{
  job_arrive (j, now);
}

/* An [event]: what the control socket's command does to the server. */
static void
on_control (const struct cfg_event *ev, uint64_t now)
{
  int err;

  if (cfg.test_policy)
    return;
  if (ev->kind == CFG_EVENT_WEIGHT) {
    err = sched_group_set_weight (sim.s, cfg.groups[ev->group].sg,
                                  ev->weight);
    if (!err)
      cfg.groups[ev->group].weight = ev->weight;
  }
  else if (strcmp (ev->key, "queue_depth") == 0) {
    cfg.queue_depth = (unsigned) ev->value;
    err = 0;
  }
  else
    err = sched_set (sim.s, ev->key, ev->value);
  if (err)
    die_at (cfg.file, "event %s (%s): the scheduler refused it: %s",
            ev->name, ev->command, strerror (-err));
  cfg.events_applied++;
  (void) now;
}

static void
fmt_time (char *buf, size_t n, uint64_t ns)
{
  snprintf (buf, n, "%" PRIu64 ".%09" PRIu64 "s", (uint64_t) (ns / NSEC_PER_SEC),
            (uint64_t) (ns % NSEC_PER_SEC));
}

/* Keep one device event, at the model's next completion. */
static void
dev_arm (uint64_t now)
{
  uint64_t t = devmodel_next (sim.dm);

  if (t == sim.dev_at)
    return;
  sim.dev_at = t;
  sim.dev_gen++;
  if (t != SCHED_NEVER)
    ev_push (t > now ? t : now, EV_DEVICE, NULL, sim.dev_gen);
}

/* Everything the device has done by now, in its order. */
static void
dev_complete (uint64_t now)
{
  struct rq *rq;

  while ((rq = devmodel_complete (sim.dm, now, NULL)) != NULL)
    on_complete (rq->priv, now);
}

/* Dispatch while the device has room.  Returns true if anything moved. */
static bool
kick (uint64_t now)
{
  uint64_t next = SCHED_NEVER;
  bool moved = false;

  while (sim.at_dev < cfg.queue_depth) {
    struct rq *rq = sched_dispatch (sim.s, now, &next);

    if (!rq)
      break;
    if (devmodel_submit (sim.dm, rq, now) < 0)
      die_at (NULL, "device model: more than %d requests at the device",
              DEVMODEL_MAX_QUEUE);
    sim.at_dev++;
    sim.dispatched++;
    moved = true;
    next = SCHED_NEVER;
  }
  if (sim.at_dev < cfg.queue_depth) {
    /* dispatch returned NULL: its "next" is the timer to keep. */
    if (next == SCHED_NEVER) {
      sim.timer_at = SCHED_NEVER;
      sim.timer_gen++;
    }
    else {
      if (next < now)
        next = now;
      if (next != sim.timer_at) {
        sim.timer_at = next;
        sim.timer_gen++;
        ev_push (next, EV_TIMER, NULL, sim.timer_gen);
      }
    }
    if (sim.at_dev == 0 && next == SCHED_NEVER && sched_has_work (sim.s)) {
      char t[32];
      fmt_time (t, sizeof t, now);
      fprintf (stderr, "%s: STALL at t=%s: scheduler '%s' has work, nothing "
               "is at the device, it dispatched nothing and asked for no "
               "timer (a scheduler bug)\n", progname, t, cfg.policy);
      exit (3);
    }
  }
  return moved;
}

static void
run (void)
{
  uint64_t now = 0, spins = 0, last_now = UINT64_MAX;

  sim.end = cfg.duration;
  sim.timer_at = SCHED_NEVER;
  sim.dev_at = SCHED_NEVER;
  for (size_t i = 0; i < cfg.m->nr_events; i++)
    if (cfg.m->events[i].at < sim.end)
      ev_push (cfg.m->events[i].at, EV_CONTROL,
               (void *) &cfg.m->events[i], 0);
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    if (j->start < sim.end)
      for (unsigned d = 0; d < j->depth; d++)
        ev_push (j->start, EV_ARRIVE, j, 0);
  }
  while (heap.n > 0 && heap.v[0].t <= sim.end) {
    bool progress = false;

    /* One pass: the events due now that existed when it began. */
    uint64_t pass_seq = heap.seq;

    now = sim.now = heap.v[0].t;
    while (heap.n > 0 && heap.v[0].t == now && heap.v[0].seq < pass_seq) {
      struct ev e = ev_pop ();

      switch (e.type) {
      case EV_ARRIVE:
        on_arrive (e.p, now);
        progress = true;
        break;
      case EV_DEVICE:
        if (e.gen == sim.dev_gen)
          sim.dev_at = SCHED_NEVER;
        dev_complete (now);
        progress = true;
        break;
      case EV_FLUSH:
        job_flush (e.p, now);
        progress = true;
        break;
      case EV_CONTROL:
        on_control (e.p, now);
        progress = true;
        break;
      case EV_TIMER:
        if (e.gen == sim.timer_gen) {
          sim.timer_at = SCHED_NEVER;
          sim.timer_gen++;
        }
        break;
      }
    }
    if (kick (now))
      progress = true;
    dev_arm (now);
    /* A policy that keeps asking to be called "now" without dispatching
     * anything would spin forever at one instant: that is a stall too.
     */
    if (now != last_now)
      spins = 0;
    last_now = now;
    if (!progress && ++spins > 1000) {
      char t[32];
      fmt_time (t, sizeof t, now);
      fprintf (stderr, "%s: STALL at t=%s: scheduler '%s' keeps asking for "
               "a timer at the current time and dispatches nothing (a "
               "scheduler bug)\n", progname, t, cfg.policy);
      exit (3);
    }
  }
}

/* ---- broken policies, to test the watchdog ---------------------------- */

/* "test-stall" takes requests and never dispatches nor asks for a timer;
 * "test-spin" never dispatches and always asks to be called again now.
 * Neither is a real policy: they exist so tests/test-sim-fifo.sh can check
 * that cfqsim reports a stalled scheduler instead of hanging or reporting.
 */
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

#define BROKEN_OPS(nm, cr) { .name = nm, .create = cr, \
    .destroy = broken_destroy, .set = broken_set, .get = broken_get, \
    .group_new = broken_group_new, .group_set_weight = broken_set_weight, \
    .queue_new = broken_queue_new, .queue_free = broken_queue_free, \
    .insert = broken_insert, .dispatch = broken_dispatch, \
    .completed = broken_completed, .has_work = broken_has_work }
static const struct sched_ops broken_stall_ops =
  BROKEN_OPS ("test-stall", broken_create_stall);
static const struct sched_ops broken_spin_ops =
  BROKEN_OPS ("test-spin", broken_create_spin);

static const struct sched_ops *
lookup_policy (const char *name)
{
  if (!strcmp (name, "test-stall"))
    return &broken_stall_ops;
  if (!strcmp (name, "test-spin"))
    return &broken_spin_ops;
  return sched_lookup (name);
}

/* ---- setup --------------------------------------------------------------- */

/* Build the device model the scenario names, as the plugin does for
 * emulate=, with --seed seeding it unless model.seed says otherwise.
 */
static struct devmodel *
make_device (void)
{
  const struct cfg_device *d = &cfg.m->dev;
  const char *kind = d->emulate;
  struct devmodel *dm;
  bool seeded = false;
  int err = 0;

  dm = devmodel_new (kind, &err);
  if (!dm)
    die_at (NULL, "device model %s: %s", kind, strerror (-err));
  for (size_t i = 0; i < d->nr_model; i++) {
    err = devmodel_set (dm, d->model[i].key, d->model[i].value);
    if (err)                    /* cfg_validate checked them */
      die_at (NULL, "model.%s=%s: %s", d->model[i].key, d->model[i].value,
              strerror (-err));
    if (strcmp (d->model[i].key, "seed") == 0)
      seeded = true;
  }
  if (!seeded) {
    char s[32];
    snprintf (s, sizeof s, "%" PRIu64, cfg.seed);
    devmodel_set (dm, "seed", s);
  }
  return dm;
}

/* --trace: each decision of a policy that reports them (cfq), on stderr
 * with the virtual time.
 */
static void
trace_line (void *opaque, const char *msg)
{
  fprintf (stderr, "%" PRIu64 ".%06" PRIu64 " %s\n",
           (uint64_t) (sim.now / NSEC_PER_SEC),
           (uint64_t) (sim.now % NSEC_PER_SEC / 1000), msg);
}

static void
setup (void)
{
  const struct cfg_model *m = cfg.m;
  const struct sched_ops *ops;
  struct sched_group **sg;
  char why[256];
  unsigned n = 0;
  int err;

  ops = cfg.test_policy ? lookup_policy (cfg.test_policy)
    : sched_lookup (m->scheduler);
  if (!ops)
    die_at (NULL, "scheduler %s is not built in", m->scheduler);
  cfg.policy = ops->name;
  sim.dm = make_device ();
  sim.s = sched_create (ops);
  if (!sim.s)
    die_at (NULL, "out of memory");

  /* Groups and tunables as the server makes them, and whether the device
   * seeks as the kernel would learn it from the queue flags.
   */
  if (cfg.trace && ops == &cfq_ops)
    cfq_set_trace (sim.s, trace_line, NULL);
  sg = xcalloc (m->nr_groups, sizeof *sg);
  err = cfg_apply (m, sim.s, devmodel_rotational (sim.dm), sg, why,
                   sizeof why);
  if (err)
    die_at (cfg.file, "%s", why);
  cfg.ngroups = m->nr_groups;
  cfg.groups = xcalloc (m->nr_groups, sizeof *cfg.groups);
  for (size_t i = 0; i < m->nr_groups; i++) {
    cfg.groups[i].name = m->groups[i].name;
    cfg.groups[i].weight = m->groups[i].weight;
    cfg.groups[i].sg = sg[i];
    hist_init (&cfg.groups[i].lat);
  }
  free (sg);
  if (cfg.window) {
    cfg.nwin = (cfg.duration + cfg.window - 1) / cfg.window;
    for (size_t i = 0; i < m->nr_groups; i++) {
      cfg.groups[i].win_ios = xcalloc (cfg.nwin, sizeof (uint64_t));
      cfg.groups[i].win_bytes = xcalloc (cfg.nwin, sizeof (uint64_t));
    }
  }

  cfg.nsec = (cfg.duration + NSEC_PER_SEC - 1) / NSEC_PER_SEC;

  /* One job per connection, tenants in file order. */
  for (size_t i = 0; i < m->nr_tenants; i++)
    if (cfg.tenant_on[i])
      cfg.njobs += m->tenants[i].connections;
  cfg.jobs = xcalloc (cfg.njobs, sizeof *cfg.jobs);
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const struct cfg_tenant *t = &m->tenants[i];
    const struct cfg_export *e = &m->exports[t->export];

    if (!cfg.tenant_on[i])
      continue;
    if (t->start >= cfg.duration)
      die_tenant (t, "starts at or after the end of the run");
    for (unsigned c = 0; c < t->connections; c++) {
      struct job *j = xcalloc (1, sizeof *j);
      uint64_t x = cfg.seed ^ (0x632be59bd9b4e019ULL * (n + 1));

      j->t = t;
      j->tenant = i;
      j->conn = c;
      j->group = (int) e->group;
      j->rwmixread = t->rwmixread;
      j->rand = t->rand;
      j->writes_sync = e->writes_sync;
      j->writes_async = e->writes_async;
      j->bs = t->bs;
      j->stride = t->bs + t->skip;
      j->depth = t->iodepth;
      j->think = t->thinktime;
      j->rate_iops = t->rate_iops;
      j->rate = t->rate;
      j->fsync = t->fsync;
      j->start = t->start;
      j->stop = t->stop && t->stop < cfg.duration ? t->stop : cfg.duration;
      j->offset = e->offset + t->offset;
      j->size = t->size;
      j->q = sched_queue_new (sim.s, cfg.groups[j->group].sg, t->cls,
                              t->prio);
      if (!j->q)
        die_tenant (t, "the scheduler refused a queue");
      j->slots = xcalloc (j->depth + 1, sizeof *j->slots);
      for (unsigned d = 0; d < j->depth + 1; d++)
        j->slots[d].j = j;
      for (unsigned d = 0; d < j->depth; d++) {
        j->slots[d].next_free = j->free;
        j->free = &j->slots[d];
      }
      j->next_off = j->offset;
      j->rng = splitmix64 (&x);
      if (!j->rng)
        j->rng = 1;
      hist_init (&j->lat);
      hist_init (&j->fsync_lat);
      if (cfg.window) {
        j->win_ios = xcalloc (cfg.nwin, sizeof (uint64_t));
        j->win_bytes = xcalloc (cfg.nwin, sizeof (uint64_t));
      }
      j->sbytes = xcalloc (cfg.nsec + 1, sizeof *j->sbytes);
      j->sios = xcalloc (cfg.nsec + 1, sizeof *j->sios);
      cfg.groups[j->group].njobs++;
      cfg.jobs[n++] = j;
    }
  }
}

/* --only NAME[,NAME...]: the tenants to run. */
static void
select_only (void)
{
  const struct cfg_model *m = cfg.m;
  unsigned n = 0;

  cfg.tenant_on = xcalloc (m->nr_tenants, sizeof *cfg.tenant_on);
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const char *p = cfg.only;
    size_t len = strlen (m->tenants[i].name);

    cfg.tenant_on[i] = !p;
    while (p && *p) {
      size_t l = strcspn (p, ",");
      if (l == len && !strncmp (p, m->tenants[i].name, l))
        cfg.tenant_on[i] = true;
      p += l;
      if (*p)
        p++;
    }
    n += cfg.tenant_on[i];
  }
  if (n == 0 && cfg.only)
    die_at (NULL, "--only %s: no such tenant", cfg.only);
  if (n == 0)
    die_at (cfg.file, "no [tenant NAME] sections: nothing to simulate");
}

/* ---- report ---------------------------------------------------------------- */

static double
mib_s (uint64_t bytes, uint64_t ns)
{
  return ns ? (double) bytes / 1048576.0 / ((double) ns / 1e9) : 0;
}

static double
per_s (uint64_t n, uint64_t ns)
{
  return ns ? (double) n / ((double) ns / 1e9) : 0;
}

static double
us (uint64_t ns)
{
  return (double) ns / 1000.0;
}

static void
json_str (const char *s)
{
  putchar ('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      putchar ('\\');
    putchar (*s);
  }
  putchar ('"');
}

/* A tenant's results: the sums over its connections. */
struct tenant_res {
  const struct cfg_tenant *t;
  unsigned group;
  uint64_t bytes, ios, flushes, writes, win;
  struct hist lat;
  struct hist fsync_lat;        /* write batch -> its flush done */
  double jain_conn;             /* Jain of its connections' IOPS */
  uint64_t *win_ios, *win_bytes; /* per window (--window) */
};

/* , "windows": {"ios": [...], "bytes": [...]} */
static void
json_windows (const uint64_t *ios, const uint64_t *bytes)
{
  printf (", \"windows\": {\"ios\": [");
  for (unsigned w = 0; w < cfg.nwin; w++)
    printf ("%s%" PRIu64, w ? ", " : "", ios[w]);
  printf ("], \"bytes\": [");
  for (unsigned w = 0; w < cfg.nwin; w++)
    printf ("%s%" PRIu64, w ? ", " : "", bytes[w]);
  printf ("]}");
}

/* The group's QoS counters, if the policy keeps them (cfq). */
static bool
group_qos_stats (size_t i, struct cfq_group_stats *st)
{
  const struct cfg_group *cg = &cfg.m->groups[i];

  if (!cfg.groups[i].sg || qos_conf_empty (&cg->qos)
      || sim.s->ops != &cfq_ops)
    return false;
  cfq_group_get_stats (sim.s, cfg.groups[i].sg, st);
  return true;
}

/* --list-models: the device models, with the figures presets carry. */
static void
print_models (void)
{
  const struct devmodel_preset *pr;

  if (!cfg.json) {
    for (pr = devmodel_presets; pr->name; pr++)
      printf ("%-10s %s%s%s\n", pr->name, pr->about,
              pr->params[0] ? ": " : "", pr->params);
    return;
  }
  printf ("[\n");
  for (pr = devmodel_presets; pr->name; pr++) {
    printf ("  {\"name\": ");
    json_str (pr->name);
    printf (", \"kind\": ");
    json_str (pr->kind);
    printf (", \"params\": ");
    json_str (pr->params);
    printf (", \"about\": ");
    json_str (pr->about);
    if (pr->seq_mbs > 0) {
      printf (", \"published\": {\"seq_mbs\": %g, \"rand\": [", pr->seq_mbs);
      for (int k = 0, n = 0; k < 2; k++)
        if (pr->rand[k].depth)
          printf ("%s{\"depth\": %u, \"iops\": %g}", n++ ? ", " : "",
                  pr->rand[k].depth, pr->rand[k].iops);
      printf ("], \"source\": ");
      json_str (pr->source);
      printf ("}");
    }
    printf ("}%s\n", pr[1].name ? "," : "");
  }
  printf ("]\n");
}

static void
report (void)
{
  const struct cfg_model *m = cfg.m;
  struct tenant_res *tr = xcalloc (m->nr_tenants, sizeof *tr);
  double *x = xcalloc (cfg.ngroups, sizeof *x);
  double *xi = xcalloc (cfg.ngroups, sizeof *xi);
  double *xc = xcalloc (cfg.njobs, sizeof *xc);
  uint64_t tbytes = 0, tios = 0, gw = 0;
  double jain, jain_iops;
  unsigned nx = 0, nt = 0;
  char dev[512], t[32], val[64];

  for (size_t i = 0; i < m->nr_tenants; i++) {
    hist_init (&tr[i].lat);
    hist_init (&tr[i].fsync_lat);
    if (cfg.window) {
      tr[i].win_ios = xcalloc (cfg.nwin, sizeof (uint64_t));
      tr[i].win_bytes = xcalloc (cfg.nwin, sizeof (uint64_t));
    }
  }
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    struct sim_group *g = &cfg.groups[j->group];
    struct tenant_res *r = &tr[j->tenant];
    for (unsigned w = 0; w < cfg.nwin; w++) {
      r->win_ios[w] += j->win_ios[w];
      r->win_bytes[w] += j->win_bytes[w];
      g->win_ios[w] += j->win_ios[w];
      g->win_bytes[w] += j->win_bytes[w];
    }
    r->t = j->t;
    r->group = j->group;
    r->bytes += j->bytes;
    r->ios += j->ios;
    r->flushes += j->flushes;
    r->writes += j->writes_done;
    r->win = j->stop - j->start;
    hist_merge (&r->lat, &j->lat);
    hist_merge (&r->fsync_lat, &j->fsync_lat);
    g->bytes += j->bytes;
    g->ios += j->ios;
    hist_merge (&g->lat, &j->lat);
    tbytes += j->bytes;
    tios += j->ios;
  }
  for (unsigned i = 0, k = 0; i < m->nr_tenants; i++) {
    unsigned nc = 0;
    if (!cfg.tenant_on[i])
      continue;
    for (; k < cfg.njobs && cfg.jobs[k]->tenant == i; k++)
      xc[nc++] = (double) cfg.jobs[k]->ios;
    tr[i].jain_conn = stats_jain (xc, nc);
    nt++;
  }
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    if (!g->njobs)
      continue;
    gw += g->weight;
    x[nx] = mib_s (g->bytes, cfg.duration) / g->weight;
    xi[nx++] = per_s (g->ios, cfg.duration) / g->weight;
  }
  jain = stats_jain (x, nx);
  jain_iops = stats_jain (xi, nx);
  devmodel_describe (sim.dm, dev, sizeof dev);

  if (cfg.json) {
    printf ("{\n  \"sched\": ");
    json_str (cfg.policy);
    printf (",\n  \"device\": ");
    json_str (dev);
    printf (",\n  \"rotational\": %s", devmodel_rotational (sim.dm) ?
            "true" : "false");
    printf (",\n  \"duration_s\": %.9f,\n  \"seed\": %" PRIu64
            ",\n  \"queue_depth\": %u,\n  \"tunables\": {",
            cfg.duration / 1e9, cfg.seed, cfg.queue_depth);
    for (size_t i = 0; !cfg.test_policy && i < m->nr_tunables; i++) {
      const struct cfq_tunable *d = cfq_tunable_lookup (m->tunables[i].name);
      printf ("%s", i ? ", " : "");
      json_str (m->tunables[i].name);
      printf (": ");
      json_str (cfq_tunable_format (d, m->tunables[i].val, val, sizeof val));
    }
    printf ("},\n  \"dispatched\": %" PRIu64 ",\n", sim.dispatched);
    if (cfg.window)
      printf ("  \"window_s\": %.9f,\n", cfg.window / 1e9);
    printf ("  \"tenants\": [\n");
    for (unsigned i = 0, k = 0; i < m->nr_tenants; i++) {
      const struct tenant_res *r = &tr[i];
      if (!cfg.tenant_on[i])
        continue;
      printf ("    {\"name\": ");
      json_str (r->t->name);
      printf (", \"group\": ");
      json_str (cfg.groups[r->group].name);
      printf (", \"connections\": %u, \"bytes\": %" PRIu64 ", \"ios\": %"
              PRIu64 ", \"writes\": %" PRIu64 ", \"flushes\": %" PRIu64
              ", \"mib_s\": %.6f"
              ", \"iops\": %.3f, \"lat_us\": {\"mean\": %.3f, \"p50\": %.3f"
              ", \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}, \"fsync_us\": {\"p50\": %.3f"
              ", \"p90\": %.3f, \"max\": %.3f}, \"share\": %.6f"
              ", \"jain_connections\": %.6f",
              r->t->connections, r->bytes, r->ios, r->writes, r->flushes,
              mib_s (r->bytes, r->win), per_s (r->ios, r->win),
              us (hist_mean (&r->lat)), us (hist_quantile (&r->lat, 0.50)),
              us (hist_quantile (&r->lat, 0.99)),
              us (hist_quantile (&r->lat, 0.999)), us (r->lat.max),
              us (hist_quantile (&r->fsync_lat, 0.50)),
              us (hist_quantile (&r->fsync_lat, 0.90)), us (r->fsync_lat.max),
              tbytes ? (double) r->bytes / tbytes : 0, r->jain_conn);
      if (cfg.window)
        json_windows (r->win_ios, r->win_bytes);
      /* The latency distribution as quantiles, for CDF plots. */
      printf (", \"lat_cdf_us\": [");
      for (int q = 1; q <= 100; q++) {
        double f = q == 100 ? 0.999 : q / 100.0;
        printf ("%s[%.3f, %.3f]", q > 1 ? ", " : "", f,
                us (hist_quantile (&r->lat, f)));
        if (q == 100)
          printf (", [1.000, %.3f]", us (r->lat.max));
      }
      printf ("]");
      /* Completed bytes and requests in each second of the run. */
      for (int w = 0; w < 2; w++) {
        printf (w ? "], \"series_ios\": [" : ", \"series_bytes\": [");
        for (size_t b = 0; b < cfg.nsec; b++) {
          uint64_t v = 0;
          for (unsigned c = 0; c < cfg.njobs; c++)
            if (cfg.jobs[c]->tenant == i)
              v += w ? cfg.jobs[c]->sios[b] : cfg.jobs[c]->sbytes[b];
          printf ("%s%" PRIu64, b ? ", " : "", v);
        }
      }
      printf ("]}%s\n", ++k < nt ? "," : "");
    }
    printf ("  ],\n  \"groups\": [\n");
    for (unsigned i = 0, k = 0; i < cfg.ngroups; i++) {
      struct sim_group *g = &cfg.groups[i];
      if (!g->njobs)
        continue;
      printf ("    {\"name\": ");
      json_str (g->name);
      printf (", \"weight\": %u, \"connections\": %u, \"bytes\": %" PRIu64
              ", \"ios\": %" PRIu64 ", \"mib_s\": %.6f, \"iops\": %.3f"
              ", \"lat_us\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}"
              ", \"share\": %.6f, \"iops_share\": %.6f"
              ", \"weight_share\": %.6f",
              g->weight, g->njobs, g->bytes, g->ios,
              mib_s (g->bytes, cfg.duration), per_s (g->ios, cfg.duration),
              us (hist_quantile (&g->lat, 0.50)),
              us (hist_quantile (&g->lat, 0.99)), us (g->lat.max),
              tbytes ? (double) g->bytes / tbytes : 0,
              tios ? (double) g->ios / tios : 0,
              (double) g->weight / gw);
      if (!qos_conf_empty (&m->groups[i].qos)) {
        struct cfq_group_stats st;
        printf (", \"qos\": {");
        for (size_t q = 0, n = 0; q < qos_nr_keys; q++) {
          uint64_t v = qos_conf_get (&m->groups[i].qos, &qos_keys[q]);
          if (v)
            printf ("%s\"%s\": %" PRIu64, n++ ? ", " : "", qos_keys[q].name,
                    v);
        }
        if (group_qos_stats (i, &st))
          printf (", \"throttled\": %" PRIu64 ", \"reserved\": %" PRIu64,
                  st.qos_throttled, st.qos_reserved);
        printf ("}");
      }
      if (cfg.window)
        json_windows (g->win_ios, g->win_bytes);
      printf ("}%s\n", ++k < nx ? "," : "");
    }
    printf ("  ],\n  \"total\": {\"bytes\": %" PRIu64 ", \"ios\": %" PRIu64
            ", \"mib_s\": %.6f, \"iops\": %.3f},\n",
            tbytes, tios, mib_s (tbytes, cfg.duration),
            per_s (tios, cfg.duration));
    printf ("  \"jain\": %.6f,\n  \"jain_iops\": %.6f,\n"
            "  \"events_applied\": %u\n}\n", jain, jain_iops,
            cfg.events_applied);
    goto out;
  }

  fmt_time (t, sizeof t, cfg.duration);
  printf ("cfqsim: sched %s, device %s\n", cfg.policy, dev);
  printf ("duration %s, seed %" PRIu64 ", queue_depth %u", t, cfg.seed,
          cfg.queue_depth);
  for (size_t i = 0; !cfg.test_policy && i < m->nr_tunables; i++) {
    const struct cfq_tunable *d = cfq_tunable_lookup (m->tunables[i].name);
    printf ("%s%s=%s", i ? " " : ", tunables ", m->tunables[i].name,
            cfq_tunable_format (d, m->tunables[i].val, val, sizeof val));
  }
  printf ("\n\n%-16s %-12s %10s %10s %10s %10s %10s %7s\n", "tenant",
          "group", "MiB/s", "IOPS", "p50 ms", "p99 ms", "max ms", "share");
  for (unsigned i = 0; i < m->nr_tenants; i++) {
    const struct tenant_res *r = &tr[i];
    if (!cfg.tenant_on[i])
      continue;
    printf ("%-16s %-12s %10.3f %10.1f %10.3f %10.3f %10.3f %7.4f\n",
            r->t->name, cfg.groups[r->group].name, mib_s (r->bytes, r->win),
            per_s (r->ios, r->win), hist_quantile (&r->lat, 0.50) / 1e6,
            hist_quantile (&r->lat, 0.99) / 1e6, r->lat.max / 1e6,
            tbytes ? (double) r->bytes / tbytes : 0);
  }
  printf ("\n%-16s %6s %10s %10s %10s %10s %7s %7s\n", "group", "weight",
          "MiB/s", "IOPS", "p99 ms", "max ms", "share", "ideal");
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    if (!g->njobs)
      continue;
    printf ("%-16s %6u %10.3f %10.1f %10.3f %10.3f %7.4f %7.4f\n", g->name,
            g->weight, mib_s (g->bytes, cfg.duration),
            per_s (g->ios, cfg.duration),
            hist_quantile (&g->lat, 0.99) / 1e6, g->lat.max / 1e6,
            tbytes ? (double) g->bytes / tbytes : 0,
            (double) g->weight / gw);
  }
  printf ("\ntotal %.3f MiB/s, %.1f IOPS; Jain index of throughput/weight "
          "over %u groups: %.4f (IOPS: %.4f)\n",
          mib_s (tbytes, cfg.duration), per_s (tios, cfg.duration), nx, jain,
          jain_iops);
  for (unsigned i = 0, n = 0; i < cfg.ngroups; i++) {
    const struct qos_conf *q = &m->groups[i].qos;
    struct cfq_group_stats st;
    if (!cfg.groups[i].njobs || qos_conf_empty (q))
      continue;
    printf ("%sgroup %s:", n++ ? "" : "\n", cfg.groups[i].name);
    for (size_t k = 0; k < qos_nr_keys; k++) {
      uint64_t v = qos_conf_get (q, &qos_keys[k]);
      if (v)
        printf (" %s=%s", qos_keys[k].name,
                cfg_format_qos (&qos_keys[k], v, val, sizeof val));
    }
    if (group_qos_stats (i, &st))
      printf ("; throttled %" PRIu64 ", reserved %" PRIu64, st.qos_throttled,
              st.qos_reserved);
    printf ("\n");
  }
  if (cfg.window)
    for (int bytes = 0; bytes < 2; bytes++) {
      printf ("\n%s per %.3fs window, by group\n%-12s",
              bytes ? "MiB/s" : "IOPS", cfg.window / 1e9, "from (s)");
      for (unsigned i = 0; i < cfg.ngroups; i++)
        if (cfg.groups[i].njobs)
          printf (" %12s", cfg.groups[i].name);
      printf ("\n");
      for (unsigned w = 0; w < cfg.nwin; w++) {
        printf ("%-12.3f", (double) w * cfg.window / 1e9);
        for (unsigned i = 0; i < cfg.ngroups; i++)
          if (cfg.groups[i].njobs)
            printf (" %12.1f", bytes
                    ? mib_s (cfg.groups[i].win_bytes[w], cfg.window)
                    : per_s (cfg.groups[i].win_ios[w], cfg.window));
        printf ("\n");
      }
    }
out:
  for (size_t i = 0; i < m->nr_tenants; i++) {
    free (tr[i].win_ios);
    free (tr[i].win_bytes);
  }
  free (tr);
  free (x);
  free (xi);
  free (xc);
}

/* ---- main -------------------------------------------------------------------- */

static void
usage (FILE *f)
{
  fprintf (f,
"usage: %s [OPTIONS] SCENARIO\n"
"Simulate the tenants of SCENARIO (the server's config format plus\n"
"[tenant NAME] and [sim] sections) sharing its modelled device.\n"
"  --sched NAME         scheduler (fifo, cfq); as scheduler=NAME\n"
"  --set KEY=VALUE      a [device] or [scheduler] key, as on the server's\n"
"                       command line (slice_idle=0, mode=iops ...); repeatable\n"
"  --device NAME        device model: hdd, ssd or a preset (--list-models);\n"
"                       as emulate=NAME\n"
"  --dev KEY=VALUE      device model parameter; as model.KEY=VALUE\n"
"  --seed N             PRNG seed (tenants and device); overrides [sim] seed\n"
"  --duration TIME      virtual time to simulate (e.g. 20s); overrides\n"
"                       [sim] duration\n"
"  --queue-depth N      most requests at the device at once; as queue_depth=N\n"
"  --only NAME[,NAME..] run only these tenants\n"
"  --json               machine-readable output\n"
"  --window TIME        also requests and bytes per window (e.g. 1s)\n"
"  --trace              print CFQ's decisions and each request on stderr,\n"
"                       stamped with the virtual time\n"
"  --list-scheds        print the policies built in and exit\n"
"  --list-models        print the device models and presets and exit (with\n"
"                       --json: and the published figures presets carry)\n"
"Exit: 0 ok, 1 bad input, 3 the scheduler stalled.\n", progname);
}

static void
report_error (void *opaque, const char *msg)
{
  fprintf (stderr, "%s\n", msg);
}

/* The whole of PATH, NUL-terminated, into *TEXT. */
static void
slurp (const char *path, char **text, size_t *len)
{
  FILE *f = fopen (path, "r");
  size_t n = 0, cap = 4096, r;
  char *buf;

  if (!f)
    die_at (NULL, "%s: %s", path, strerror (errno));
  buf = xcalloc (cap, 1);
  while ((r = fread (buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      buf = realloc (buf, cap *= 2);
      if (!buf)
        die_at (NULL, "out of memory");
    }
  }
  if (ferror (f))
    die_at (NULL, "%s: read error", path);
  fclose (f);
  *text = buf;
  *len = n;
}

/* KEY=VALUE on the command line, as an override of the model. */
static void
override (struct cfg *c, const char *opt, const char *prefix, const char *a)
{
  const char *eq = strchr (a, '=');
  char key[128];

  if (!eq || eq == a || (size_t) (eq - a) + strlen (prefix) >= sizeof key)
    die_at (NULL, "--%s %s: expected KEY=VALUE", opt, a);
  snprintf (key, sizeof key, "%s%.*s", prefix, (int) (eq - a), a);
  cfg_set_override (c, key, eq + 1);
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "sched", required_argument, NULL, 's' },
    { "set", required_argument, NULL, 'S' },
    { "device", required_argument, NULL, 'D' },
    { "dev", required_argument, NULL, 'd' },
    { "seed", required_argument, NULL, 'r' },
    { "duration", required_argument, NULL, 't' },
    { "queue-depth", required_argument, NULL, 'q' },
    { "only", required_argument, NULL, 'o' },
    { "json", no_argument, NULL, 'j' },
    { "window", required_argument, NULL, 'w' },
    { "trace", no_argument, NULL, 'T' },
    { "list-scheds", no_argument, NULL, 'l' },
    { "list-models", no_argument, NULL, 'm' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *duration = NULL, *seed = NULL;
  bool list_models = false;
  static struct cfg *c;         /* static: die_at() exits from anywhere */
  char *text, want[96];
  size_t len;
  int ch;

  c = cfg_new (report_error, NULL);
  if (!c)
    die_at (NULL, "out of memory");
  cfg_simulate (c);
  while ((ch = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'l': {
      static const char *const names[] = { "fifo", "cfq", NULL };
      for (int i = 0; names[i]; i++)
        if (sched_lookup (names[i]))
          printf ("%s\n", names[i]);
      return 0;
    }
    case 'h':
      usage (stdout);
      return 0;
    case 'm': list_models = true; break;
    case 'j': cfg.json = true; break;
    case 'T': cfg.trace = true; break;
    case 'w':
      if (units_parse_time (optarg, 0, &cfg.window) < 0 || !cfg.window)
        die_at (NULL, "--window %s: not a time (want %s, more than 0)",
                optarg, units_expect_time (0, want, sizeof want));
      break;
    case 'o': cfg.only = optarg; break;
    case 'r': seed = optarg; break;
    case 't': duration = optarg; break;
    case 's':
      /* The watchdog's test policies are no scheduler of the model. */
      if (lookup_policy (optarg) && !sched_lookup (optarg)) {
        cfg.test_policy = optarg;
        cfg_set_override (c, "scheduler", "fifo");
      }
      else
        cfg_set_override (c, "scheduler", optarg);
      break;
    case 'S': override (c, "set", "", optarg); break;
    case 'D': cfg_set_override (c, "emulate", optarg); break;
    case 'd': override (c, "dev", "model.", optarg); break;
    case 'q': cfg_set_override (c, "queue_depth", optarg); break;
    default:
      usage (stderr);
      return 1;
    }
  }
  if (list_models) {
    print_models ();
    return 0;
  }
  if (optind != argc - 1) {
    usage (stderr);
    return 1;
  }
  cfg.file = argv[optind];
  slurp (cfg.file, &text, &len);
  cfg_parse (c, cfg.file, text, len);
  free (text);
  if (cfg_validate (c, 0) < 0)
    return 1;                   /* every error is on stderr already */
  cfg.m = cfg_model (c);
  cfg.duration = cfg.m->sim.duration;
  cfg.seed = cfg.m->sim.seed;
  cfg.queue_depth = cfg.m->dev.queue_depth;
  if (duration && (units_parse_time (duration, 0, &cfg.duration) < 0
                   || cfg.duration == 0))
    die_at (NULL, "--duration %s: not a time (want %s, more than 0)",
            duration, units_expect_time (0, want, sizeof want));
  if (seed && units_parse_count (seed, &cfg.seed) < 0)
    die_at (NULL, "--seed %s: not a number", seed);
  select_only ();
  setup ();
  run ();
  report ();
  cfg_free (c);
  return 0;
}
