/* cfqsim-loop.c: the event loop of cfqsim, on a virtual clock.
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
 * The connections (struct job) live here too: each slot submits, thinks,
 * resubmits and fsyncs as its tenant says, and counts what completed
 * within the run (and, with --window, in which window).
 */
#include "cfqsim.h"

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

struct sim_state sim;

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

  if (now >= j->stop || (j->number_ios && j->issued >= j->number_ios))
    return;                     /* the slot retires */
  if (j->fsync_wait) {
    j->parked++;
    return;
  }
  if (j->think_blocks && j->burst >= j->think_blocks) {
    j->burst_parked++;          /* the burst is sent: wait for its end */
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
  j->burst++;
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
/* With think_blocks the job thinks between bursts instead: a slot
 * goes again at once while the burst has requests left to send; once
 * all are sent the slots wait, and the last completion of the burst
 * starts the think time for all of them (fio's thinktime_blocks: it
 * quiesces before it thinks).
 */
static void
job_slot_done (struct job *j, uint64_t now)
{
  uint64_t t = now + j->think;
  unsigned n = 1;

  if (j->think_blocks) {
    if (j->burst < j->think_blocks)
      t = now;
    else if (j->inflight > 0) {
      j->burst_parked++;
      return;
    }
    else {
      n += j->burst_parked;
      j->burst_parked = 0;
      j->burst = 0;
    }
  }
  if (t < j->stop && t <= sim.end)
    while (n--)
      ev_push (t, EV_ARRIVE, j, 0);
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
  if (j->ios == j->number_ios)
    j->done_at = now;           /* its work is done */
  j->writes_done += sr->rq.op == RQ_WRITE;
  j->bytes += sr->rq.len;
  series_add (&cfg.sec, &j->sec, now, sr->rq.len, 0);
  hist_add (&j->lat, now - sr->t_submit);
  series_add (&cfg.win, &j->win, now, sr->rq.len, now - sr->t_submit);
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

void
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

void
sim_run (void)
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
