/* fuzz-sched.c: libFuzzer target for the scheduler API (core/cfq.c and
 * core/fifo.c through include/sched.h).
 *
 * The input is a program.  Its first byte picks the policy (cfq or fifo)
 * and the device's service time; every following byte is an operation
 * with its arguments taken from the bytes after it: make or free a
 * connection (queue), make a group or change its weight, insert a
 * request, dispatch, complete one of the requests in flight (in any
 * order), let time pass, set a tunable (in range, or out of it, which must
 * be refused and change nothing).  When the input ends, the device drains:
 * in-flight requests complete after the service time and dispatch() is
 * called at each completion and at each deadline it asked for.
 *
 * Checked, as tests/unit/test-cfq-fuzz.c does on its random worlds:
 *  - every inserted request is dispatched exactly once and completed
 *    exactly once, with t_insert and t_dispatch the time of the call;
 *  - when dispatch() returns nothing, has_work() says whether requests are
 *    queued, the deadline is never in the past while they are, and there
 *    is one whenever work waits with nothing in flight (else the engine
 *    would hang);
 *  - CFQ's counters agree with ours (queued, in the driver, lifetime);
 *  - the drain ends: everything is dispatched within a bound of virtual
 *    time and of calls, and the policy then has no work;
 *  - set() takes exactly the values in the tunable's range and get()
 *    returns what was set.
 * AddressSanitizer checks every queue_free() with requests still queued or
 * in flight, and that destroy() frees everything.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FAIL_ABORT        /* a failed check is a crash for libFuzzer */
#include "../unit/check.h"
#include "cfq.h"
#include "sched.h"
#include "fuzz.h"

#define MAXQ 16
#define MAXG 8
#define MAXRQ 256
#define MS NSEC_PER_MSEC

enum { RQ_FREE, RQ_QUEUED, RQ_IN_FLIGHT, RQ_DONE };

struct req {
  struct rq rq;
  int state;
  uint64_t done_at;             /* in the drain: when the device is done */
};

struct world {
  struct sched *s;
  bool cfq;
  struct sched_group *g[MAXG];
  unsigned ng;
  struct sched_queue *q[MAXQ];  /* NULL: free slot */
  struct req r[MAXRQ];
  unsigned nr;                  /* requests made */
  unsigned queued, in_flight, done;
  uint64_t now, svc;
};

/* A value for tunable T: mostly inside its range, sometimes just outside
 * or anywhere.
 */
static uint64_t
tunable_value (struct fuzz_in *in, const struct cfq_tunable *t)
{
  uint64_t raw = fuzz_u64 (in);

  switch (fuzz_u8 (in) % 8) {
  case 0: return t->min;
  case 1: return t->max;
  case 2: return t->min - 1;    /* wraps for min 0: also out of range */
  case 3: return t->max + 1;
  case 4: return raw;
  default:
    return t->min + raw % (t->max - t->min + 1);
  }
}

static void
op_set (struct world *w, struct fuzz_in *in)
{
  const struct cfq_tunable *t = &cfq_tunables[fuzz_u8 (in) % cfq_nr_tunables];
  uint64_t v = tunable_value (in, t), before, after;
  int r;

  if (!w->cfq) {
    CHECK_EQ (sched_set (w->s, t->name, v), -ENOENT);
    return;
  }
  CHECK_EQ (sched_get (w->s, t->name, &before), 0);
  r = sched_set (w->s, t->name, v);
  CHECK_EQ (sched_get (w->s, t->name, &after), 0);
  if (v >= t->min && v <= t->max) {
    CHECK_EQ (r, 0);
    CHECK_EQ (after, v);
  }
  else {
    CHECK_EQ (r, -ERANGE);
    CHECK_EQ (after, before);
  }
}

/* A connection of class CLS at LEVEL, in a group or none; CFQ refuses a
 * class or level that does not exist (FIFO ignores both).
 */
static void
op_queue_new (struct world *w, struct fuzz_in *in)
{
  unsigned slot = fuzz_u8 (in) % MAXQ, gi = fuzz_u8 (in);
  unsigned cls = fuzz_u8 (in) % 5, level = fuzz_u8 (in) % (SCHED_LEVELS + 2);
  struct sched_group *g = w->ng && gi % 4 ? w->g[gi % w->ng] : NULL;
  bool ok = cls >= SCHED_CLASS_RT && cls <= SCHED_CLASS_IDLE
    && level < SCHED_LEVELS;
  struct sched_queue *q;

  if (w->q[slot] || (!ok && !w->cfq))
    return;
  q = sched_queue_new (w->s, g, cls, level);
  if (!ok) {
    CHECK_NULL (q);
    return;
  }
  CHECK (q);
  w->q[slot] = q;
}

static void
op_queue_free (struct world *w, struct fuzz_in *in)
{
  unsigned slot = fuzz_u8 (in) % MAXQ;

  if (w->q[slot]) {
    sched_queue_free (w->s, w->q[slot]);
    w->q[slot] = NULL;
  }
}

static void
op_group (struct world *w, struct fuzz_in *in)
{
  unsigned weight = fuzz_u16 (in) % 1200;
  bool ok = weight >= SCHED_WEIGHT_MIN && weight <= SCHED_WEIGHT_MAX;

  if (w->ng < MAXG && fuzz_u8 (in) % 2) {
    struct sched_group *g = sched_group_new (w->s, "g", weight);
    if (ok) {
      CHECK (g);
      w->g[w->ng++] = g;
    }
    else
      CHECK_NULL (g);
  }
  else if (w->ng) {
    int r = sched_group_set_weight (w->s, w->g[fuzz_u8 (in) % w->ng],
                                    weight);
    if (ok)
      CHECK_EQ (r, 0);
    else
      CHECK_NE (r, 0);
  }
}

static void
op_insert (struct world *w, struct fuzz_in *in)
{
  unsigned slot = fuzz_u8 (in) % (MAXQ + 1);     /* MAXQ: no queue */
  struct req *q;
  uint8_t op = fuzz_u8 (in) % 5;

  if (w->nr == MAXRQ)
    return;
  if (slot < MAXQ && !w->q[slot])
    return;
  q = &w->r[w->nr++];
  q->rq.q = slot < MAXQ ? w->q[slot] : NULL;
  q->rq.op = op;
  q->rq.flags = fuzz_u8 (in) & (RQ_SYNC | RQ_FUA | RQ_META | RQ_MAYTRIM);
  /* Offsets below 2^62 (a device); lengths as the plugin sends them:
   * none for a flush, up to 64 MiB for data, up to 4 GiB for trim/zero.
   */
  q->rq.off = fuzz_u64 (in) & ((1ULL << 62) - 1);
  if (fuzz_u8 (in) % 2)
    q->rq.off &= ~4095ULL;
  switch (op) {
  case RQ_FLUSH: q->rq.off = 0; q->rq.len = 0; break;
  case RQ_TRIM: case RQ_ZERO: q->rq.len = 1 + fuzz_u32 (in) % UINT32_MAX; break;
  default: q->rq.len = 1 + fuzz_u32 (in) % (64 << 20); break;
  }
  q->state = RQ_QUEUED;
  w->queued++;
  sched_insert (w->s, &q->rq, w->now);
  CHECK_EQ (q->rq.t_insert, w->now);
  if (q->rq.q)
    CHECK_NOTNULL (q->rq.sq);
}

/* After a dispatch() that returned nothing, with deadline NEXT. */
static void
check_idle_answer (struct world *w, uint64_t next)
{
  CHECK_EQ (sched_has_work (w->s), w->queued > 0);
  if (w->queued > 0) {
    CHECK (next == SCHED_NEVER || next > w->now);
    if (w->in_flight == 0)
      CHECK_NE (next, SCHED_NEVER);
  }
}

/* Dispatch until the policy says no (or the device is full); the deadline
 * it asked for last.
 */
static uint64_t
dispatch_all (struct world *w, unsigned depth)
{
  for (;;) {
    uint64_t next = 0;
    struct rq *r;
    struct req *q;

    if (w->in_flight >= depth)
      return SCHED_NEVER;       /* asked again at the next completion */
    r = sched_dispatch (w->s, w->now, &next);
    if (!r) {
      check_idle_answer (w, next);
      return next;
    }
    q = container_of (r, struct req, rq);
    CHECK_LT ((uintptr_t) q - (uintptr_t) w->r, sizeof *q * w->nr);
    CHECK_EQ (q->state, RQ_QUEUED);
    CHECK_EQ (r->t_dispatch, w->now);
    q->state = RQ_IN_FLIGHT;
    q->done_at = w->now + w->svc;
    w->queued--;
    w->in_flight++;
  }
}

static void
complete (struct world *w, struct req *q)
{
  CHECK_EQ (q->state, RQ_IN_FLIGHT);
  q->state = RQ_DONE;
  w->in_flight--;
  w->done++;
  sched_completed (w->s, &q->rq, w->now);
}

static void
op_complete (struct world *w, struct fuzz_in *in)
{
  unsigned k;

  if (!w->in_flight)
    return;
  k = fuzz_u8 (in) % w->in_flight;
  for (unsigned i = 0; i < w->nr; i++)
    if (w->r[i].state == RQ_IN_FLIGHT && k-- == 0) {
      complete (w, &w->r[i]);
      return;
    }
}

static void
check_counters (struct world *w)
{
  struct cfq_stats st;

  if (!w->cfq)
    return;
  cfq_get_stats (w->s, &st);
  CHECK_EQ (st.rq_queued, w->queued);
  CHECK_EQ (st.rq_in_driver, w->in_flight);
  CHECK_EQ (st.inserted, w->nr);
  CHECK_EQ (st.dispatched, w->nr - w->queued);
  CHECK_EQ (st.completed, w->done);
}

/* The device finishes: complete in-flight requests after the service time,
 * dispatch at every completion and deadline, until nothing is left.
 */
static void
drain (struct world *w)
{
  uint64_t start = w->now, deadline = dispatch_all (w, MAXRQ);
  /* Generous: per request a slice idle and a group idle at their maximum
   * (1 s each), an idle-class grace, plus the longest fifo expiry.
   */
  uint64_t bound = 60000 * MS + (uint64_t) (w->queued + w->in_flight) * 3000 * MS;
  unsigned steps = 0;

  while (w->queued || w->in_flight) {
    uint64_t t = deadline;

    for (unsigned i = 0; i < w->nr; i++)
      if (w->r[i].state == RQ_IN_FLIGHT && w->r[i].done_at < t)
        t = w->r[i].done_at;
    CHECK_NE (t, SCHED_NEVER);          /* else it would hang */
    if (t > w->now)
      w->now = t;
    for (unsigned i = 0; i < w->nr; i++)
      if (w->r[i].state == RQ_IN_FLIGHT && w->r[i].done_at <= w->now)
        complete (w, &w->r[i]);
    deadline = dispatch_all (w, MAXRQ);
    check_counters (w);
    CHECK_LE (w->now - start, bound);
    CHECK_LT (++steps, 100000u);
  }
  CHECK (!sched_has_work (w->s));
  CHECK_EQ (w->done, w->nr);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const uint64_t svcs[] = { 0, 100000, 1 * MS, 8 * MS };
  struct fuzz_in in = { data, size };
  struct world *w = calloc (1, sizeof *w);
  uint8_t first = fuzz_u8 (&in);

  if (!w)
    abort ();
  w->cfq = !(first & 1);
  w->svc = svcs[(first >> 1) % 4];
  w->s = sched_create (w->cfq ? &cfq_ops : &fifo_ops);
  CHECK (w->s);

  while (in.len) {
    switch (fuzz_u8 (&in) % 10) {
    case 0: op_queue_new (w, &in); break;
    case 1: op_queue_free (w, &in); break;
    case 2: op_group (w, &in); break;
    case 3: case 4: op_insert (w, &in); break;
    case 5: dispatch_all (w, 1 + fuzz_u8 (&in) % 64); break;
    case 6: op_complete (w, &in); break;
    case 7: w->now += fuzz_u32 (&in) * (uint64_t) 1000; break;  /* <= 71 min */
    case 8: op_set (w, &in); break;
    case 9: w->now += fuzz_u8 (&in) * (uint64_t) 100000; break; /* <= 25 ms */
    }
    check_counters (w);
  }
  drain (w);
  check_counters (w);

  for (unsigned i = 0; i < MAXQ; i++)
    if (w->q[i] && i % 2)
      sched_queue_free (w->s, w->q[i]);
  sched_destroy (w->s);
  free (w);
  return 0;
}
