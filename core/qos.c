/* qos.c: caps and reservations per group, and how they compose with CFQ.
 *
 * What operators ask for
 * ----------------------
 * A tenant of shared storage wants three things: a share when the disk is
 * contended (CFQ's weights), a ceiling it cannot burst past (QEMU's
 * throttle groups, the kernel's blk-throttle) and a floor that holds even
 * under contention (mClock's reservations).  This file keeps the state for
 * the last two and answers three questions for the scheduler: may this
 * request go now (and if not, when), which reserved group is due, and when
 * does the next of those answers change.  core/cfq.c asks them at a handful
 * of hooks; when no group has a cap or a reservation (qos_on() false) it
 * asks nothing and behaves exactly as without this file.
 *
 * Caps: token buckets, as QEMU's throttle groups
 * ----------------------------------------------
 * Each cap (iops_max, read_iops_max, write_iops_max, bps_max, read_bps_max,
 * write_bps_max) is a bucket that fills with what the group dispatches and
 * drains at the cap's rate.  A request may go if its cost still fits:
 *
 *      level + cost <= max(depth, cost)          (a request larger than the
 *                                                 bucket goes when it is
 *      depth = rate * slice                       empty, and the long-run
 *            = burst * burst_seconds  (burst)     rate is still exact)
 *
 *        dispatches --> [ level ] --> drains at rate
 *                       |  depth |
 *
 * Without a burst the bucket holds one slice of the rate (and at least two
 * requests for a cap in requests): 50 ms on flash, where it lets requests
 * go together, rides out a dispatcher woken late on a loaded machine and
 * no 1 s window carries more than 5% over the cap; 100 ms on a disk
 * (blk-throttle's throtl_slice), where each batch a capped group gets
 * between other groups' turns costs two seeks (doc/design.md).  With
 * "burst" (a rate) and "burst_seconds" the bucket is burst * burst_seconds
 * deep, as QEMU's iops-total-max and iops-total-max-length: after a quiet
 * spell the group may run at the burst rate until the bucket is full (a
 * little over burst_seconds, since it drains at the cap meanwhile), and a
 * second bucket, one slice of the burst rate deep and draining at it, keeps
 * the burst itself at its rate.  The bucket refills (drains) at the cap,
 * so the long-run rate is the cap.
 *
 * A refused request is held, not failed: qos_admit returns the time the
 * bucket will have drained enough, and the scheduler returns that as its
 * next deadline so the mechanism's timer wakes it.  The hold lasts until
 * the bucket has room for the request and half a slice more (keeping half
 * of what there is room for, a quarter on a disk, if that is less), so a
 * held group comes back for a batch rather than for one request at a
 * time, and a late wake-up loses nothing.  A group kept waiting longer
 * than that (the dispatcher woke late, the device was full) catches up:
 * while it has requests the cap counts waiting, its bucket drains below
 * zero, to minus its depth.  Costs: a read counts against the read and
 * total caps, a write, trim or zero against the write and total caps;
 * bytes are the request's length (a trim moves no data: one request, no
 * bytes).
 * Flushes are never held: holding one only delays durability.  Levels are
 * kept in units * 1e9 (units times ns per second) in 128 bits, so draining
 * rate * dt is exact and a hold ends exactly when the bucket has room.
 *
 * Reservations: mClock's tags
 * ---------------------------
 * A reservation (iops_min, bps_min) gives the group an R tag, the time its
 * next reserved request is due: tags are spaced 1/iops_min apart, or
 * len/bps_min for a request of len bytes (with both, the closer spacing,
 * so both floors hold).  As in mClock (Gulati, Merchant, Varman, OSDI
 * 2010):
 *   - a group that was idle gets R = max(R, now) at its next request: no
 *     credit is banked while it has nothing to do;
 *   - at each dispatch the reserved group with the smallest R <= now goes
 *     first ("constraint-based phase"), and R advances by one spacing;
 *     when none is due, the weights decide ("weight-based phase": CFQ);
 *   - a request the weights dispatch does not move R (mClock pulls the
 *     group's tags back by 1/r after each weight-phase dispatch, which is
 *     the same thing), so the reserved stream is steady: r per second in
 *     every second, whatever CFQ's turns do.
 * Once a group is due it is served in a batch, until its tag is half a
 * slice ahead of now (25 ms on flash, 50 ms on a disk): each excursion to
 * a reserved group's area costs a disk two seeks, so they are made for a
 * batch, not for every request.
 * Where we differ from mClock, and why:
 *   - mClock's weight phase counts the reserved requests too (its P tags
 *     advance with every request), so a reservation is a floor inside the
 *     weighted share: max(r, share).  Here the reserved requests are not
 *     charged to CFQ's vdisktime, so a reservation comes on top: r plus the
 *     group's weighted share of what the reservations leave.  Charging them
 *     would need each request's device time in time mode, which is not
 *     known when it is dispatched; and a floor counted inside CFQ's turns
 *     was tried and is not a floor per second: a CFQ turn of the group
 *     serves a burst, its tag runs ahead, the reserved stream pauses
 *     (doc/design.md).  For a floor close to pure give the reserved group
 *     the smallest weight.
 *   - R may fall behind now by at most QOS_RES_DEBT (1 s): when the
 *     reservations add up to more than the device gives, every group falls
 *     behind in proportion to its reservation (the smallest tag goes
 *     first), and when the overload ends nobody may take the device for
 *     longer than a second to catch up.  Tags that are behind are moved
 *     forward together, so their order and the proportions stay.
 *
 * The composition with CFQ (core/cfq.c), rule by rule
 * ---------------------------------------------------
 *  1. Reservations first.  Before CFQ chooses, the reserved group whose tag
 *     is due goes, smallest tag first, even in the middle of another
 *     queue's slice or idle window.  Its request is the oldest of the
 *     queue CFQ would serve first in that group (RT before BE before IDLE;
 *     the workload tree whose first queue has the lowest key; the active
 *     queue too).  It does not start a slice, is not charged to the
 *     group's vdisktime and does not count in slice_dispatch: CFQ's
 *     accounting sees only what CFQ chose.
 *  2. The weights share what is left.  Everything else is CFQ unchanged:
 *     groups by vdisktime, workload slices, queue slices, idling, the
 *     service trees, preemption, over the capacity the reserved stream
 *     leaves.  A reserved group takes part like any other, so it gets its
 *     reservation plus its weighted share of the rest.
 *  3. Caps hold a group back.  A group whose every waiting direction is
 *     held (qos_held) is skipped when CFQ chooses the next group, and a
 *     held group may not preempt.  A held group that is skipped keeps its
 *     lag behind the group chosen instead, but at most one round of virtual
 *     time (target_latency): enough to catch up on turns its bucket cut
 *     short while its cap is above its share, and bounded when the cap is
 *     below its share, or a capped tenant would drag min_vdisktime down and
 *     let returning groups bank service for as long as it had been capped.
 *  4. A cap ends a turn.  When the active queue's request is refused, its
 *     slice ends as if the queue had run dry (charged the time or the
 *     requests it used) and CFQ chooses again, so the device stays busy
 *     with the others (work conservation).
 *  5. A released group is served between turns.  After a hold ends, while
 *     the group is owed service (its vdisktime is not above the active
 *     group's with the service of the running slice counted; on a disk
 *     also below every other unheld group's), its requests go out of band
 *     as its bucket allows, like reserved ones, but charged as CFQ would
 *     charge them: a request each in IOPS mode, their device time as they
 *     complete in time mode (the time since the previous completion).
 *     When CFQ gives it a turn, it is back to CFQ's turns; on a disk also
 *     as soon as it is not owed (an excursion costs two seeks; on flash it
 *     waits, still released, for the active slice's service to grow).
 *     Without this a capped group would get its tokens only once per CFQ
 *     round.  Ending the active slice for it instead was tried: on a disk
 *     it starves a sequential reader, whose requests are all in flight at
 *     each cut, so its group leaves the tree and the next group takes its
 *     turn (doc/design.md).
 *  6. Caps over reservations.  A reserved dispatch must pass the caps too;
 *     the config refuses a reservation above a cap of the same unit, so a
 *     floor under its own ceiling is always reachable.
 *  7. Deadlines.  dispatch() returns the earliest of CFQ's own deadline, the
 *     end of any hold and the next tag coming due, so a held group or a
 *     reservation is never left waiting for an unrelated event.
 *  8. Nothing set, nothing changed.  With no group capped or reserved,
 *     core/cfq.c takes none of these paths: the same decisions, the same
 *     outputs, byte for byte (tests/test-sim-qos.sh checks that caps that
 *     never bind change nothing either).
 *
 * FIFO refuses caps and reservations: it is the baseline that serves in
 * arrival order with no per-group state, and a cap there would need the
 * per-group queues that make a scheduler (config.c reports the keys with
 * scheduler = fifo as errors).
 *
 * Known limits: a group held for reads whose writes could go waits until
 * CFQ's queue order in the group reaches the write queue; the caps count
 * requests, not a request's size in iops (QEMU's iops-size).  On a disk,
 * every visit to a capped or reserved group between other groups' turns
 * costs two seeks (the active queue's slice pays for one): a smooth cap on
 * a sequential stream beside others costs the disk a third of its
 * throughput, and per-second counts of a few dozen random requests jitter
 * by one or two with the device queue (doc: the measured windows).
 */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "qos.h"

/* ---- the key table --------------------------------------------------------
 * One row per key: its unit, where it lives in struct qos_conf, its range.
 * Parsing a value is cfg_parse_qos's (core/config-qos.c), by unit.
 */
#define K_IOPS_MAX   10000000ULL                /* 10M requests/s */
#define K_BPS_MAX    (1ULL << 40)               /* 1 TiB/s */
#define K_SEC_MIN    NSEC_PER_MSEC
#define K_SEC_MAX    (86400ULL * NSEC_PER_SEC)  /* a day */

/* A cap's floor (umin): the caps in requests start at 1/s, those in
 * bytes at QOS_BPS_FLOOR, so that one request never waits for its tokens
 * much longer than half a minute (qos_hold_max).  Bursts are at least
 * their cap (qos_conf_check); reservations hold nothing back.
 */
#define CAP_KEYS(cap, name, unit, umin, umax, what)                           \
  { name, unit, QOS_F_RATE, cap, umin, umax, umin > 1, "cap: " what },        \
  { name "_burst", unit, QOS_F_BURST, cap, 1, umax, false,                    \
    "rate allowed in a burst above " name },                                  \
  { name "_burst_seconds", QOS_U_SECONDS, QOS_F_BURST_NS, cap, K_SEC_MIN,     \
    K_SEC_MAX, false, "how long a burst of " name " may last (default 1s)" }

const struct qos_key qos_keys[QOS_NR_KEYS] = {
  CAP_KEYS (QOS_IOPS_MAX, "iops_max", QOS_U_IOPS, 1, K_IOPS_MAX,
            "requests/s, reads and writes"),
  CAP_KEYS (QOS_READ_IOPS_MAX, "read_iops_max", QOS_U_IOPS, 1, K_IOPS_MAX,
            "reads/s"),
  CAP_KEYS (QOS_WRITE_IOPS_MAX, "write_iops_max", QOS_U_IOPS, 1, K_IOPS_MAX,
            "writes/s (trims and zeroes included)"),
  CAP_KEYS (QOS_BPS_MAX, "bps_max", QOS_U_BPS, QOS_BPS_FLOOR, K_BPS_MAX,
            "bytes/s, reads and writes"),
  CAP_KEYS (QOS_READ_BPS_MAX, "read_bps_max", QOS_U_BPS, QOS_BPS_FLOOR,
            K_BPS_MAX, "bytes/s read"),
  CAP_KEYS (QOS_WRITE_BPS_MAX, "write_bps_max", QOS_U_BPS, QOS_BPS_FLOOR,
            K_BPS_MAX, "bytes/s written"),
  { "iops_min", QOS_U_IOPS, QOS_F_IOPS_MIN, 0, 1, K_IOPS_MAX, false,
    "reservation: requests/s served even under contention" },
  { "bps_min", QOS_U_BPS, QOS_F_BPS_MIN, 0, 1, K_BPS_MAX, false,
    "reservation: bytes/s served even under contention" },
};
const size_t qos_nr_keys = QOS_NR_KEYS;
_Static_assert (QOS_NR_CAPS * 3 + 2 == QOS_NR_KEYS,
                "qos_keys: three keys per cap and two reservations");

const struct qos_key *
qos_key_lookup (const char *name)
{
  for (size_t i = 0; i < qos_nr_keys; i++)
    if (strcmp (qos_keys[i].name, name) == 0)
      return &qos_keys[i];
  return NULL;
}

static const uint64_t *
field (const struct qos_conf *c, const struct qos_key *k)
{
  switch (k->field) {
  case QOS_F_RATE: return &c->cap[k->cap].rate;
  case QOS_F_BURST: return &c->cap[k->cap].burst;
  case QOS_F_BURST_NS: return &c->cap[k->cap].burst_ns;
  case QOS_F_IOPS_MIN: return &c->iops_min;
  case QOS_F_BPS_MIN: return &c->bps_min;
  }
  return NULL;
}

uint64_t
qos_conf_get (const struct qos_conf *c, const struct qos_key *k)
{
  return *field (c, k);
}

int
qos_conf_set (struct qos_conf *c, const struct qos_key *k, uint64_t val)
{
  if (val && (val < k->min || val > k->max))
    return -ERANGE;
  *(uint64_t *) field (c, k) = val;
  return 0;
}

bool
qos_conf_empty (const struct qos_conf *c)
{
  for (size_t i = 0; i < qos_nr_keys; i++)
    if (qos_conf_get (c, &qos_keys[i]))
      return false;
  return true;
}

/* The key of cap c's field f. */
static const struct qos_key *
cap_key (unsigned c, enum qos_field f)
{
  for (size_t i = 0; i < qos_nr_keys; i++)
    if (qos_keys[i].field == f && qos_keys[i].cap == c)
      return &qos_keys[i];
  return NULL;
}

static bool
cap_bytes (unsigned c)
{
  return c >= QOS_BPS_MAX;
}

uint64_t
qos_hold_max (unsigned c, uint64_t rate, uint64_t len)
{
  uint64_t units = cap_bytes (c) ? len : 1;

  if (!rate)
    return 0;
  /* The bucket holds at most max(depth, cost) (a request goes when its
   * cost fits), so a request alone waits at most for its own cost to
   * drain, and the hold ends with up to half a slice of hysteresis.
   */
  return (uint64_t) (((qos_level) units * NSEC_PER_SEC + rate - 1) / rate)
    + QOS_SLICE_ROT;
}

bool
qos_cap_applies (unsigned c, enum qos_dir d)
{
  switch (c) {
  case QOS_READ_IOPS_MAX: case QOS_READ_BPS_MAX: return d == QOS_READ;
  case QOS_WRITE_IOPS_MAX: case QOS_WRITE_BPS_MAX: return d == QOS_WRITE;
  default: return d != QOS_NODIR;
  }
}

int
qos_conf_check (const struct qos_conf *c, char *why, size_t len,
                const struct qos_key **key, const struct qos_key **other)
{
  *key = *other = NULL;
  for (unsigned i = 0; i < QOS_NR_CAPS; i++) {
    const struct qos_cap_conf *cc = &c->cap[i];
    const struct qos_key *kr = cap_key (i, QOS_F_RATE);
    const struct qos_key *kb = cap_key (i, QOS_F_BURST);
    const struct qos_key *ks = cap_key (i, QOS_F_BURST_NS);

    if (cc->burst && !cc->rate) {
      snprintf (why, len, "needs %s (the cap the burst is above)",
                kr->name);
      *key = kb;
      return -EINVAL;
    }
    if (cc->burst && cc->burst < cc->rate) {
      snprintf (why, len, "a burst rate is at least its cap");
      *key = kb;
      *other = kr;
      return -EINVAL;
    }
    if (cc->burst_ns && !cc->burst) {
      snprintf (why, len, "needs %s", kb->name);
      *key = ks;
      return -EINVAL;
    }
  }
  /* A reservation above a cap of its unit can never be given. */
  for (int bytes = 0; bytes < 2; bytes++) {
    uint64_t r = bytes ? c->bps_min : c->iops_min;
    const struct qos_key *kr = qos_key_lookup (bytes ? "bps_min"
                                               : "iops_min");
    if (!r)
      continue;
    for (unsigned i = 0; i < QOS_NR_CAPS; i++)
      if (cap_bytes (i) == (bool) bytes && c->cap[i].rate
          && c->cap[i].rate < r) {
        const struct qos_key *kc = cap_key (i, QOS_F_RATE);
        snprintf (why, len, "a cap below a reservation can never give it");
        *key = kr;
        *other = kc;
        return -EINVAL;
      }
  }
  return 0;
}

/* ---- state ------------------------------------------------------------- */

#define UNIT ((qos_level) NSEC_PER_SEC)         /* one unit, scaled */
#define WAIT_MAX (1000000000ULL * NSEC_PER_SEC) /* ns: ~31 years */

static inline bool
after (uint64_t a, uint64_t b)          /* a later than b */
{
  return (int64_t) (a - b) > 0;
}

void
qos_sched_init (struct qos_sched *qs)
{
  list_init (&qs->groups);
  qs->nr_on = 0;
  qs->slice_ns = QOS_SLICE_NONROT;
  qs->keep_shift = 1;
}

void
qos_sched_set_slice (struct qos_sched *qs, uint64_t ns)
{
  qs->slice_ns = ns ? ns : QOS_SLICE_NONROT;
  qs->keep_shift = qs->slice_ns >= QOS_SLICE_ROT ? 2 : 1;
}

void
qos_group_init (struct qos_group *qg)
{
  memset (qg, 0, sizeof *qg);
  list_init (&qg->link);
}

void
qos_group_set (struct qos_sched *qs, struct qos_group *qg,
               const struct qos_conf *c, uint64_t now)
{
  bool linked = !list_empty (&qg->link);

  qg->conf = *c;
  for (unsigned i = 0; i < QOS_NR_CAPS; i++) {
    qg->eff[i] = c->cap[i];
    qg->share_ppm[i] = QOS_SHARE_WHOLE;
  }
  qg->qs = qs;
  qg->on = !qos_conf_empty (c);
  qg->reserved = c->iops_min || c->bps_min;
  memset (qg->level, 0, sizeof qg->level);
  memset (qg->burst_level, 0, sizeof qg->burst_level);
  memset (qg->held_until, 0, sizeof qg->held_until);
  qg->drained_at = now;
  qg->r_tag = now;
  qg->r_batch = false;
  qg->was_held = false;
  if (qg->on && !linked) {
    list_add_tail (&qg->link, &qs->groups);
    qs->nr_on++;
  }
  else if (!qg->on && linked) {
    list_del (&qg->link);
    qs->nr_on--;
  }
}

void
qos_group_remove (struct qos_sched *qs, struct qos_group *qg)
{
  if (!list_empty (&qg->link)) {
    list_del (&qg->link);
    qs->nr_on--;
  }
  qg->on = false;
}

enum qos_dir
qos_rq_dir (const struct rq *rq)
{
  switch (rq->op) {
  case RQ_READ: return QOS_READ;
  case RQ_FLUSH: return QOS_NODIR;
  default: return QOS_WRITE;
  }
}

static uint64_t
rq_bytes (const struct rq *rq)
{
  return rq->op == RQ_TRIM || rq->op == RQ_FLUSH ? 0 : rq->len;
}

static void drain (struct qos_group *qg, uint64_t now);

void
qos_enqueue (struct qos_group *qg, const struct rq *rq, uint64_t now)
{
  enum qos_dir d = qos_rq_dir (rq);

  if (d == QOS_NODIR)
    return;
  /* The buckets up to now drain as for a group with nothing waiting in
   * this direction, if it had nothing: no credit for time it did not want.
   */
  if (qg->on && !qg->queued[d])
    drain (qg, now);
  /* Idle until now: no credit banked (mClock's max(R, arrival)). */
  if (qg->reserved && !qg->queued[QOS_READ] && !qg->queued[QOS_WRITE]
      && after (now, qg->r_tag))
    qg->r_tag = now;
  qg->queued[d]++;
}

void
qos_dequeue (struct qos_group *qg, const struct rq *rq)
{
  enum qos_dir d = qos_rq_dir (rq);

  if (d != QOS_NODIR)
    qg->queued[d]--;
}

/* The depth of cap c's main bucket: burst * burst_seconds with a burst,
 * else one slice of the rate (at least two requests for a cap in
 * requests: with one, each waits for an empty bucket).
 */
static qos_level
cap_depth (const struct qos_group *qg, unsigned c)
{
  const struct qos_cap_conf *cc = &qg->eff[c];
  qos_level depth;

  if (cc->burst)
    return (qos_level) cc->burst
      * (cc->burst_ns ? cc->burst_ns : NSEC_PER_SEC);
  depth = (qos_level) cc->rate * qg->qs->slice_ns;
  if (!cap_bytes (c) && depth < 2 * UNIT)
    depth = 2 * UNIT;
  return depth;
}

/* Does cap c count something the group has waiting? */
static bool
cap_waiting (const struct qos_group *qg, unsigned c)
{
  for (int d = 0; d < QOS_NR_DIRS; d++)
    if (qg->queued[d] && qos_cap_applies (c, d))
      return true;
  return false;
}

/* Drain every bucket to now.  A main bucket drains below zero, to at most
 * minus its depth, while the group has requests waiting that the cap
 * counts: it was kept from sending what it was allowed (the dispatcher
 * woke late, the device was full), and catches up on it; nothing waiting,
 * nothing owed.  (blk-throttle's slice accounting lets a throttled group
 * catch up within its slice the same way.)
 */
static void
drain (struct qos_group *qg, uint64_t now)
{
  uint64_t dt;

  if (!after (now, qg->drained_at))
    return;
  dt = now - qg->drained_at;
  qg->drained_at = now;
  for (unsigned c = 0; c < QOS_NR_CAPS; c++) {
    const struct qos_cap_conf *cc = &qg->eff[c];
    qos_level floor = cap_waiting (qg, c) ? -cap_depth (qg, c) : 0;

    if (!cc->rate)
      continue;
    qg->level[c] -= (qos_level) cc->rate * dt;
    if (qg->level[c] < floor)
      qg->level[c] = floor;
    qg->burst_level[c] -= (qos_level) cc->burst * dt;
    if (qg->burst_level[c] < 0)
      qg->burst_level[c] = 0;
  }
}

/* ns until a bucket at LEVEL (draining at RATE units/s) has room for X,
 * and HYST more: 0 if X fits now.  The hold ends with at least half the
 * slack (room - x) still in the bucket (KEEP_SHIFT 1): a wake-up that
 * comes late (the mechanism's timer, a busy loop) then costs nothing,
 * where a bucket drained to empty would lose what it could not drain
 * below zero (and the credit of drain() covers longer delays).  On a disk
 * a quarter (2): each batch costs two seeks, and keeping half made batches
 * of 2 where 3 fit (doc/design.md).
 */
static uint64_t
bucket_wait (qos_level level, qos_level x, qos_level depth, qos_level hyst,
             uint64_t rate, unsigned keep_shift)
{
  qos_level room = depth > x ? depth : x, slack, target, w;

  if (level + x <= room)
    return 0;
  slack = room - x;
  target = slack > hyst && slack - hyst > slack >> keep_shift
    ? slack - hyst : slack >> keep_shift;
  w = (level - target + rate - 1) / rate;
  return w > WAIT_MAX ? WAIT_MAX : (uint64_t) w;
}

static qos_level
cost (unsigned c, const struct rq *rq)
{
  return cap_bytes (c) ? (qos_level) rq_bytes (rq) * UNIT : UNIT;
}

uint64_t
qos_admit (struct qos_group *qg, const struct rq *rq, uint64_t now)
{
  enum qos_dir d = qos_rq_dir (rq);
  uint64_t wait = 0, slice;

  if (!qg->on || d == QOS_NODIR)
    return 0;
  slice = qg->qs->slice_ns;
  drain (qg, now);
  for (unsigned c = 0; c < QOS_NR_CAPS; c++) {
    const struct qos_cap_conf *cc = &qg->eff[c];
    qos_level x = cost (c, rq), depth;
    uint64_t w;

    if (!cc->rate || !qos_cap_applies (c, d) || !x)
      continue;
    depth = cap_depth (qg, c);
    w = bucket_wait (qg->level[c], x, depth,
                     (qos_level) cc->rate * slice / 2, cc->rate,
                     qg->qs->keep_shift);
    if (w > wait)
      wait = w;
    if (cc->burst) {
      w = bucket_wait (qg->burst_level[c], x,
                       (qos_level) cc->burst * slice,
                       (qos_level) cc->burst * slice / 2, cc->burst,
                       qg->qs->keep_shift);
      if (w > wait)
        wait = w;
    }
  }
  if (!wait)
    return 0;
  qg->held_until[d] = now + wait;
  qg->done.held++;
  if (qos_held (qg, now))
    qg->was_held = true;
  return now + wait;
}

/* ns of reservation one request uses: the closer of the two spacings. */
static uint64_t
spacing (const struct qos_group *qg, const struct rq *rq)
{
  uint64_t s = UINT64_MAX;

  if (qg->conf.iops_min)
    s = NSEC_PER_SEC / qg->conf.iops_min;
  if (qg->conf.bps_min) {
    qos_level b = (qos_level) rq_bytes (rq) * NSEC_PER_SEC
      / qg->conf.bps_min;
    if (b < s)
      s = (uint64_t) b;
  }
  return s;
}

void
qos_account (struct qos_group *qg, const struct rq *rq, uint64_t now,
             bool reserved)
{
  enum qos_dir d = qos_rq_dir (rq);

  if (!qg->on || d == QOS_NODIR)
    return;
  drain (qg, now);
  for (unsigned c = 0; c < QOS_NR_CAPS; c++) {
    const struct qos_cap_conf *cc = &qg->eff[c];

    if (!cc->rate || !qos_cap_applies (c, d))
      continue;
    qg->level[c] += cost (c, rq);
    if (cc->burst)
      qg->burst_level[c] += cost (c, rq);
  }
  qg->done.ios[d]++;
  qg->done.bytes[d] += rq_bytes (rq);
  if (reserved) {
    qg->r_tag += spacing (qg, rq);
    qg->r_batch = true;
    qg->done.res_ios++;
    qg->done.res_bytes += rq_bytes (rq);
  }
}

uint64_t
qos_cap_units (unsigned c, const struct qos_counts *n)
{
  uint64_t u = 0;

  for (int d = 0; d < QOS_NR_DIRS; d++)
    if (qos_cap_applies (c, d))
      u += cap_bytes (c) ? n->bytes[d] : n->ios[d];
  return u;
}

/* The reservation time DELTA's reserved requests used: the closer of the
 * two spacings, as for each request (spacing).  ns.
 */
static uint64_t
res_spacing (const struct qos_group *qg, const struct qos_counts *delta)
{
  qos_level s = -1, b;

  if (qg->conf.iops_min)
    s = (qos_level) delta->res_ios * NSEC_PER_SEC / qg->conf.iops_min;
  if (qg->conf.bps_min) {
    b = (qos_level) delta->res_bytes * NSEC_PER_SEC / qg->conf.bps_min;
    if (s < 0 || b < s)
      s = b;
  }
  if (s < 0)
    return 0;
  return s > QOS_RES_DEBT ? QOS_RES_DEBT : (uint64_t) s;
}

/* Cap c at SHARE of its setting from NOW on (its bucket drained to now
 * at the rate it had): at least 1 unit/s, and a burst scaled alike.
 */
static void
set_share (struct qos_group *qg, unsigned c, uint32_t ppm)
{
  const struct qos_cap_conf *cc = &qg->conf.cap[c];
  struct qos_cap_conf *e = &qg->eff[c];

  if (ppm > QOS_SHARE_WHOLE)
    ppm = QOS_SHARE_WHOLE;
  qg->share_ppm[c] = ppm;
  if (!cc->rate)
    return;
  e->rate = (uint64_t) ((qos_level) cc->rate * ppm / QOS_SHARE_WHOLE);
  if (e->rate < 1)
    e->rate = 1;
  if (cc->burst) {
    e->burst = (uint64_t) ((qos_level) cc->burst * ppm / QOS_SHARE_WHOLE);
    if (e->burst < e->rate)
      e->burst = e->rate;
  }
}

void
qos_charge (struct qos_group *qg, const struct qos_counts *delta,
            const uint32_t *share_ppm, uint64_t now)
{
  uint64_t r;

  if (!qg->on)
    return;
  drain (qg, now);
  if (share_ppm)
    for (unsigned c = 0; c < QOS_NR_CAPS; c++)
      set_share (qg, c, share_ppm[c]);
  /* rho: the reservation others served moves the tag as if served here
   * (a tag behind now owes less), to at most QOS_RES_DEBT ahead.
   */
  if (qg->reserved && (r = res_spacing (qg, delta))) {
    qg->r_tag += r;
    if (after (qg->r_tag, now + QOS_RES_DEBT))
      qg->r_tag = now + QOS_RES_DEBT;
  }
}

bool
qos_held (const struct qos_group *qg, uint64_t now)
{
  bool any = false;

  if (!qg->on)
    return false;
  for (int d = 0; d < QOS_NR_DIRS; d++)
    if (qg->queued[d]) {
      if (!after (qg->held_until[d], now))
        return false;
      any = true;
    }
  return any;
}

bool
qos_waiting (const struct qos_group *qg)
{
  return qg->queued[QOS_READ] || qg->queued[QOS_WRITE];
}

bool
qos_released (const struct qos_group *qg, uint64_t now)
{
  return qg->was_held && qos_waiting (qg) && !qos_held (qg, now);
}

void
qos_turn (struct qos_group *qg)
{
  qg->was_held = false;
}

struct qos_group *
qos_due (struct qos_sched *qs, uint64_t now)
{
  struct qos_group *best = NULL;
  uint64_t floor = now - QOS_RES_DEBT, oldest = now;
  bool behind = false;
  struct list *p;

  /* The debt bound: move the tags that are behind forward together. */
  list_for_each (p, &qs->groups) {
    struct qos_group *qg = list_entry (p, struct qos_group, link);
    if (qg->reserved && qos_waiting (qg) && after (floor, qg->r_tag)
        && (!behind || after (oldest, qg->r_tag))) {
      oldest = qg->r_tag;
      behind = true;
    }
  }
  if (behind) {
    uint64_t shift = floor - oldest;
    list_for_each (p, &qs->groups) {
      struct qos_group *qg = list_entry (p, struct qos_group, link);
      if (qg->reserved && qos_waiting (qg) && after (now, qg->r_tag))
        qg->r_tag = after (qg->r_tag + shift, now) ? now
                                                   : qg->r_tag + shift;
    }
  }

  list_for_each (p, &qs->groups) {
    struct qos_group *qg = list_entry (p, struct qos_group, link);
    if (qg->r_batch && after (qg->r_tag, now + qs->slice_ns / 2))
      qg->r_batch = false;      /* this batch is done */
    if (!qg->reserved || !qos_waiting (qg) || qos_held (qg, now)
        || (after (qg->r_tag, now) && !qg->r_batch))
      continue;
    if (!best || after (best->r_tag, qg->r_tag))
      best = qg;
  }
  return best;
}

uint64_t
qos_next_event (const struct qos_sched *qs, uint64_t now)
{
  uint64_t next = SCHED_NEVER;
  struct list *p;

  list_for_each (p, &qs->groups) {
    const struct qos_group *qg = list_entry (p, struct qos_group, link);

    if (!qos_waiting (qg))
      continue;
    for (int d = 0; d < QOS_NR_DIRS; d++)
      if (qg->queued[d] && after (qg->held_until[d], now)
          && qg->held_until[d] < next)
        next = qg->held_until[d];
    if (qg->reserved && !qos_held (qg, now) && after (qg->r_tag, now)
        && qg->r_tag < next)
      next = qg->r_tag;
  }
  return next;
}

/* ---- statistics ---------------------------------------------------------- */

struct qos_snap {
  struct stat_kvs set;          /* the settings, nonzero keys only */
  bool held;                    /* qos_held now */
  uint64_t throttled;           /* requests a cap held back (each time) */
  uint64_t reserved;            /* requests dispatched for the reservation */
};

static const struct stat_field qos_fields[] = {
  { .repr = STAT_KV, .unit = "the key's", .off = offsetof (struct qos_snap,
    set), .show = STAT_JF, .help = "The caps and reservation set, each in"
    " its key's unit (requests/s, bytes/s, ns); keys not set are left"
    " out." },
  { .name = "held", .unit = "bool", .repr = STAT_BOOL,
    .off = offsetof (struct qos_snap, held),
    .show = STAT_J | STAT_F | STAT_F_SET | STAT_P,
    .help = "Its caps hold it back now (1)." },
  { .name = "throttled", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct qos_snap, throttled),
    .show = STAT_J | STAT_F | STAT_F_SET | STAT_P,
    .help = "Requests its caps held back (each time)." },
  { .name = "reserved", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct qos_snap, reserved),
    .show = STAT_J | STAT_F | STAT_F_SET | STAT_P,
    .help = "Requests dispatched for its reservation." },
};

_Static_assert (QOS_NR_KEYS <= STAT_KV_MAX, "qos_keys: room in a stat_kvs");

static const struct stat_field qos_table = {
  .name = "qos", .show = STAT_ALL, STAT_SUB (qos_fields),
};

void
qos_group_stats (const struct qos_group *qg, uint64_t now,
                 stat_emit_fn *emit, void *opaque)
{
  struct qos_snap q = {
    .held = qos_held (qg, now), .throttled = qg->done.held,
    .reserved = qg->done.res_ios,
  };

  for (size_t i = 0; i < qos_nr_keys && q.set.n < STAT_KV_MAX; i++) {
    uint64_t v = qos_conf_get (&qg->conf, &qos_keys[i]);

    if (v)
      q.set.kv[q.set.n++] = (struct stat_kv) { qos_keys[i].name, v };
  }
  emit (opaque, &qos_table, &q);
}
