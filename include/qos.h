/* qos.h: per-group caps (token buckets) and reservations (mClock tags).
 *
 * Policy only, like the rest of core/: time comes in as an argument, the
 * next time something changes goes out as a deadline, nothing here locks,
 * allocates or reads a clock.  core/qos.c has the essay: what a cap and a
 * reservation mean, and the rules by which core/cfq.c composes them with
 * CFQ's weights.
 *
 * Two layers:
 *  - struct qos_conf and the key table: the settings of one group, by name
 *    ("iops_max", "bps_min" ...), with units and ranges.  The config file,
 *    the simulator and the control socket parse values in one place
 *    (cfg_parse_qos in include/config.h) and check a whole set with
 *    qos_conf_check().
 *  - struct qos_group / struct qos_sched: the state a scheduler embeds,
 *    one qos_group per group and one qos_sched per instance.  The scheduler
 *    calls qos_enqueue/qos_dequeue as requests come and go, qos_admit before
 *    it dispatches one, qos_account after, and asks qos_due, qos_held and
 *    qos_next_event what to do next.
 *
 * Threading: like struct sched, one thread at a time (the dispatcher).
 */
#ifndef CFQ_QOS_H
#define CFQ_QOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "list.h"
#include "sched.h"

/* The caps, in the order of the key table. */
enum qos_cap {
  QOS_IOPS_MAX = 0,             /* requests/s, reads and writes */
  QOS_READ_IOPS_MAX,
  QOS_WRITE_IOPS_MAX,
  QOS_BPS_MAX,                  /* bytes/s, reads and writes */
  QOS_READ_BPS_MAX,
  QOS_WRITE_BPS_MAX,
  QOS_NR_CAPS,
};

/* Which way a request moves data: a cap counts reads, writes or both.
 * Trims and zeroes are writes; flushes are neither and never held.
 */
enum qos_dir {
  QOS_READ = 0,
  QOS_WRITE = 1,
  QOS_NR_DIRS,
  QOS_NODIR = QOS_NR_DIRS,      /* flush */
};

struct qos_cap_conf {
  uint64_t rate;                /* units/s (requests or bytes); 0 = no cap */
  uint64_t burst;               /* units/s allowed in a burst; 0 = none */
  uint64_t burst_ns;            /* ns: how long a burst may last */
};

/* One group's settings.  All zero: no caps, no reservation. */
struct qos_conf {
  struct qos_cap_conf cap[QOS_NR_CAPS];
  uint64_t iops_min;            /* requests/s reserved; 0 = none */
  uint64_t bps_min;             /* bytes/s reserved; 0 = none */
};

/* ---- the key table ------------------------------------------------------ */

enum qos_unit {
  QOS_U_IOPS,                   /* requests per second: a plain number */
  QOS_U_BPS,                    /* bytes per second: a size, "100M" */
  QOS_U_SECONDS,                /* a duration, kept in ns */
};

enum qos_field {
  QOS_F_RATE,                   /* cap[i].rate */
  QOS_F_BURST,                  /* cap[i].burst */
  QOS_F_BURST_NS,               /* cap[i].burst_ns */
  QOS_F_IOPS_MIN,
  QOS_F_BPS_MIN,
};

struct qos_key {
  const char *name;             /* "iops_max", "iops_max_burst", ... */
  enum qos_unit unit;
  enum qos_field field;
  unsigned cap;                 /* enum qos_cap, for the QOS_F_RATE.. ones */
  uint64_t min, max;            /* accepted range when not 0 (0 = unset) */
  bool floor;                   /* min is a cap's floor (QOS_BPS_FLOOR):
                                   a value below it is refused with the
                                   hold it would mean (cfg_parse_qos) */
  const char *help;             /* one line */
};

/* The floor of the caps in bytes (bps_max, read_bps_max, write_bps_max),
 * bytes/s.  A request its cap holds waits in the scheduler for tokens, as
 * long as qos_hold_max says: at 1 MB/s one request of the largest size
 * (CFG_MAX_REQUEST, 32 MiB) waits up to about 34 s, and a lower cap
 * would hold it longer (at 1 byte/s, for 388 days).  The caps in
 * requests start at 1 request/s, at which a request waits about a second.
 */
#define QOS_BPS_FLOOR 1000000ULL

#define QOS_NR_KEYS 20           /* rows of qos_keys[] */
extern const struct qos_key qos_keys[QOS_NR_KEYS];
extern const size_t qos_nr_keys;

/* NULL if NAME is not a QoS key. */
extern const struct qos_key *qos_key_lookup (const char *name);

/* Read or write one key's value in a conf (the unit of the table: ns for
 * QOS_U_SECONDS).  set returns -ERANGE outside [min, max] unless 0.
 */
extern uint64_t qos_conf_get (const struct qos_conf *c,
                              const struct qos_key *k);
extern int qos_conf_set (struct qos_conf *c, const struct qos_key *k,
                         uint64_t val);

extern bool qos_conf_empty (const struct qos_conf *c);

/* The longest cap C (enum qos_cap) at RATE (units/s) holds one request
 * of LEN bytes that is the only one of its group waiting: its cost at the
 * rate, and the hold's hysteresis (at most a slice).  ns.
 */
extern uint64_t qos_hold_max (unsigned c, uint64_t rate, uint64_t len);

/* Does cap C (enum qos_cap) count requests going direction D? */
extern bool qos_cap_applies (unsigned c, enum qos_dir d);

/* Check a whole conf: a burst below its cap or without one, burst seconds
 * without a burst, a reservation above a cap of the same unit.  0, or
 * -EINVAL for the first fault found, with the key at fault (and the other
 * key involved, or NULL) in *KEY and *OTHER and the reason in WHY (names,
 * no values: the caller shows them in its own syntax).
 */
extern int qos_conf_check (const struct qos_conf *c, char *why, size_t len,
                           const struct qos_key **key,
                           const struct qos_key **other);

/* ---- the state a scheduler embeds -------------------------------------- */

/* The depth of a plain cap's bucket, in time at its rate: on a disk
 * blk-throttle's slice (throtl_slice, HZ/10), on flash half that: enough
 * to ride out a dispatcher woken 20 ms late on a loaded machine, and no
 * 1 s window carries more than 5% over the cap.
 */
#define QOS_SLICE_NONROT (50 * NSEC_PER_MSEC)
#define QOS_SLICE_ROT    (100 * NSEC_PER_MSEC)
#define QOS_RES_DEBT    (1 * NSEC_PER_SEC)      /* tag behind now, at most */

/* A token bucket's contents, in units times 1e9 (units * ns / s) so that
 * draining at rate units/s for dt ns removes exactly rate * dt: integers,
 * no rounding, the same on every machine.  Below zero is credit: a group
 * kept waiting with requests it may send (a late wake-up) catches up on
 * them, up to one bucket.
 */
typedef __int128 qos_level;

/* What a group dispatched, as its caps and reservation count it: the
 * lifetime totals one server publishes to the others for limits that
 * hold across servers (include/gqos.h), and what it is charged for theirs.
 */
struct qos_counts {
  uint64_t ios[QOS_NR_DIRS];    /* requests, reads and writes */
  uint64_t bytes[QOS_NR_DIRS];  /* bytes, reads and writes (a trim: 0) */
  uint64_t res_ios;             /* of the requests, the reservation's */
  uint64_t res_bytes;           /* bytes of those */
  uint64_t held;                /* times a cap held a request back */
};

/* A share of a cap: parts per million of its setting. */
#define QOS_SHARE_WHOLE 1000000u

struct qos_group {
  struct qos_conf conf;
  struct qos_cap_conf eff[QOS_NR_CAPS]; /* the caps in effect: conf's, or
                                   this server's share of them (qos_charge) */
  uint32_t share_ppm[QOS_NR_CAPS]; /* eff / conf, parts per million */
  bool on;                      /* any cap or reservation */
  bool reserved;                /* iops_min or bps_min */
  struct list link;             /* on qos_sched.groups while on */
  const struct qos_sched *qs;   /* whose slice it uses */

  qos_level level[QOS_NR_CAPS];       /* main bucket: drains at rate */
  qos_level burst_level[QOS_NR_CAPS]; /* burst bucket: drains at burst */
  uint64_t drained_at;          /* ns: buckets drained up to here */
  uint64_t r_tag;               /* ns: reservation tag of the next request */
  bool r_batch;                 /* a batch of reserved requests is going */
  unsigned queued[QOS_NR_DIRS]; /* data requests waiting, by direction */
  uint64_t held_until[QOS_NR_DIRS]; /* ns: a cap holds this direction */
  bool was_held;                /* held since its last turn */

  struct qos_counts done;       /* lifetime: what it dispatched while on
                                   (qos_account), and the caps' holds */
};

struct qos_sched {
  struct list groups;           /* qos_groups that are on */
  unsigned nr_on;               /* of them */
  uint64_t slice_ns;            /* ns: a plain cap's bucket holds this much
                                   of its rate; QOS_SLICE_NONROT at first */
  unsigned keep_shift;          /* a hold keeps slack >> this in the bucket:
                                   1 (half) on flash, 2 on a disk */
};

extern void qos_sched_init (struct qos_sched *qs);
/* QOS_SLICE_ROT or _NONROT, as the device seeks or not (or any ns > 0). */
extern void qos_sched_set_slice (struct qos_sched *qs, uint64_t ns);
extern void qos_group_init (struct qos_group *qg);

/* Install C (copied) at time NOW; state starts afresh (full buckets, tag
 * at now).  Joins or leaves qs's list.
 */
extern void qos_group_set (struct qos_sched *qs, struct qos_group *qg,
                           const struct qos_conf *c, uint64_t now);
/* Leave qs's list (the group is going away). */
extern void qos_group_remove (struct qos_sched *qs, struct qos_group *qg);

/* Is any group capped or reserved?  When not, a scheduler must behave
 * exactly as without this module.
 */
static inline bool
qos_on (const struct qos_sched *qs)
{
  return qs->nr_on > 0;
}

/* The direction of a request, and what it costs in bytes. */
extern enum qos_dir qos_rq_dir (const struct rq *rq);

/* A request joins / leaves the group's queues.  Counted for every group,
 * on or not, so that switching QoS on later finds the counts right.
 */
extern void qos_enqueue (struct qos_group *qg, const struct rq *rq,
                         uint64_t now);
extern void qos_dequeue (struct qos_group *qg, const struct rq *rq);

/* May RQ be dispatched now under the group's caps?  0 if yes; else the
 * time (> now) at which it may, and the group's direction is held until
 * then.  Flushes always may.
 */
extern uint64_t qos_admit (struct qos_group *qg, const struct rq *rq,
                           uint64_t now);

/* RQ was dispatched (by any rule): take its cost from the buckets.
 * RESERVED: it was the reservation's, which advances the group's tag.
 */
extern void qos_account (struct qos_group *qg, const struct rq *rq,
                         uint64_t now, bool reserved);

/* Limits held across servers (include/gqos.h).  DELTA: what other
 * servers dispatched for the same tenant since the last call; its
 * reserved requests advance the reservation tag as if served here
 * (dmClock's rho), to at most QOS_RES_DEBT ahead of NOW.  SHARE_PPM (or
 * NULL: unchanged): each cap's share for this server from now on, parts
 * per million of its setting (QOS_SHARE_WHOLE: all of it); the buckets
 * drain at the old rates up to now.  DELTA is also added to charged.
 */
extern void qos_charge (struct qos_group *qg, const struct qos_counts *delta,
                        const uint32_t *share_ppm, uint64_t now);

/* Units of cap C (enum qos_cap) in N: requests or bytes of the
 * directions it counts.
 */
extern uint64_t qos_cap_units (unsigned c, const struct qos_counts *n);

/* Held: it has data requests waiting and a cap holds every direction
 * they go.
 */
extern bool qos_held (const struct qos_group *qg, uint64_t now);
/* Data requests of the group waiting in the scheduler (counted with or
 * without caps and reservations set).
 */
extern bool qos_waiting (const struct qos_group *qg);

/* Released: held since its last turn, no longer held, data waiting.  It
 * stays so until qos_turn() says it got its turn.
 */
extern bool qos_released (const struct qos_group *qg, uint64_t now);
extern void qos_turn (struct qos_group *qg);

/* The reserved group whose tag is due (<= now), smallest tag first, among
 * those with data waiting and not held.  NULL if none.
 */
extern struct qos_group *qos_due (struct qos_sched *qs, uint64_t now);

/* The next time (> now) a hold ends or a tag comes due; SCHED_NEVER if
 * nothing is waiting on either.
 */
extern uint64_t qos_next_event (const struct qos_sched *qs, uint64_t now);

/* The group's caps and reservation as statistics (include/statfield.h):
 * one table named "qos", its settings (the nonzero keys, in the key
 * table's units) and what they did (held now, requests held back,
 * requests dispatched for the reservation).  A policy with caps calls it
 * from its sched_ops stats.
 */
extern void qos_group_stats (const struct qos_group *qg, uint64_t now,
                             stat_emit_fn *emit, void *opaque);

#endif /* CFQ_QOS_H */
