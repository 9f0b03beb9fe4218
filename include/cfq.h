/* cfq.h: what the CFQ policy (core/cfq.c) offers beyond struct sched_ops.
 *
 * The tunable table: every knob with its unit, default and range, so the
 * plugin can list them (--dump-plugin, cfqctl) and the config model can
 * validate names and values before they reach sched_set().  Times are in
 * nanoseconds, like every time in include/sched.h.
 *
 * Introspection for tests, the simulator and the control socket:
 * cfq_get_stats() and cfq_dump().  None of these allocate or lock; like the
 * rest of the policy they belong to the dispatcher thread.
 */
#ifndef CFQ_CFQ_H
#define CFQ_CFQ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

/* Values of the "mode" tunable and of [device] mode in the config: the one
 * enumeration of how groups are charged.
 */
enum cfq_mode {
  CFQ_MODE_TIME = 0,            /* charge groups the time used, always */
  CFQ_MODE_IOPS = 1,            /* charge groups the requests dispatched */
  CFQ_MODE_AUTO = 2,            /* IOPS on flash (rotational=0, or seeks
                                   measured cheap), or CFQ's rule: when
                                   slice_idle=0 and the device queues */
};

/* The profile tunable: whose defaults (core/cfq-tunables.c). */
enum {
  CFQ_PROFILE_DEFAULT = 0,      /* ours: cost-fair groups */
  CFQ_PROFILE_KERNEL = 1,       /* CFQ 2.6.37's behaviour */
};

struct cfq_tunable {
  const char *name;             /* sysfs name, e.g. "slice_idle" */
  const char *unit;             /* "ns", "requests", "KiB", "factor",
                                   "bool", "mode" */
  uint64_t def;                 /* default, in unit */
  uint64_t min, max;            /* accepted range, inclusive */
  const char *help;             /* one line */
};

extern const struct cfq_tunable cfq_tunables[];
extern const size_t cfq_nr_tunables;

/* NULL if name is not a CFQ tunable. */
extern const struct cfq_tunable *cfq_tunable_lookup (const char *name);

/* Check a value against the table without an instance: 0, -ENOENT or
 * -ERANGE, exactly what sched_set() would return.
 */
extern int cfq_tunable_check (const char *name, uint64_t val);

/* Values as text, in the tunable's unit, for every reader of a value (the
 * config file, the control socket's "set", cfqsim), so that all accept the
 * same text:
 *   "ns"     a time (include/units.h); a bare number is ms, as in sysfs
 *   "KiB"    a bare number of KiB, as in sysfs, or a size with a suffix
 *            that is a whole number of KiB ("16M" is 16384)
 *   "bool"   0/1, yes/no, on/off ...
 *   "mode"   a name or its number: mode auto|time|iops (enum cfq_mode:
 *            2, 0, 1), hw_tag detect|no|yes (2, 0, 1)
 *   others   a plain decimal count
 * parse returns 0, -ENOENT (no such tunable), -EINVAL (not of the unit's
 * grammar) or -ERANGE (outside the table's range): what sched_set() would
 * say of the value.  format writes the text parse reads back (times and
 * sizes with the largest exact unit, names for "mode") and returns BUF.
 * explain writes why TEXT was refused with ERR, in the words the config
 * file and the control socket use ("not a time (want ...)", "out of range
 * 0ns..1s", "want auto, time or iops") and returns BUF.
 */
extern int cfq_tunable_parse (const char *name, const char *text,
                              uint64_t *val);
extern char *cfq_tunable_format (const struct cfq_tunable *t, uint64_t val,
                                 char *buf, size_t len);
extern const char *cfq_tunable_explain (const struct cfq_tunable *t,
                                        const char *text, int err,
                                        char *buf, size_t len);

/* "time", "iops", "auto" <-> enum cfq_mode: cfq_tunable_parse ("mode")
 * and its names.
 */
/* A tunable's default under a profile (CFQ_PROFILE_*). */
extern uint64_t cfq_profile_value (const struct cfq_tunable *t,
                                   uint64_t profile);

extern int cfq_mode_parse (const char *s, uint64_t *val);
extern const char *cfq_mode_name (uint64_t val);

struct cfq_stats {
  int hw_tag;                   /* -1 not yet known (assume NCQ), 0, 1 */
  unsigned hw_tag_est_depth;    /* requests: peak in-driver depth seen */
  bool iops_mode;               /* groups charged in requests right now */
  uint64_t seek_cost;           /* ns: mean service time of reads
                                   dispatched away from the head */
  bool seek_fast;               /* rotational=1, but seek_cost says no */
  unsigned busy_queues;         /* queues with work (on a service tree) */
  unsigned rq_queued;           /* requests inserted, not dispatched */
  unsigned rq_in_driver;        /* requests dispatched, not completed,
                                   not held back (deactivate) */
  uint64_t inserted, dispatched, completed;     /* requests, lifetime */
  uint64_t slices;              /* queues made active */
  uint64_t idle_arms;           /* idle timer armed (slice_idle) */
  uint64_t group_idle_arms;     /* idle timer armed (group_idle) */
  uint64_t idle_hits;           /* requests arriving while idling */
  uint64_t idle_timeouts;       /* idle windows that ran out */
  uint64_t preemptions;         /* active queue preempted */
  uint64_t fifo_expired;        /* requests served from fifo order */
  uint64_t merges;              /* connections moved into a shared queue */
  uint64_t splits;              /* connections split back out */
  uint64_t wait_busy;           /* slices extended to keep a group busy */
};

/* The cost model as it stands (include/cost.h): parameters, source,
 * vrate and its errors.
 */
struct cost_model;
extern void cfq_get_cost (struct sched *s, struct cost_model *m);

extern void cfq_get_stats (struct sched *s, struct cfq_stats *st);

/* The group's virtual disk time (ns << 12, weight-scaled); for tests. */
extern uint64_t cfq_group_vdisktime (struct sched *s, struct sched_group *g);

/* Human-readable state (tunables, groups, busy queues) into buf, always
 * NUL-terminated; returns the length it wanted (like snprintf).
 */
extern size_t cfq_dump (struct sched *s, char *buf, size_t len);

/* Tracing: when set, fn is called with one line of text for each
 * scheduling decision (queue made active, slice ended and why, idle timer
 * armed or fired).  NULL turns it off.  One hook per process (the
 * plugin has one scheduler); fn runs on the caller's thread, inside the
 * policy call, and must not call back into the policy.
 */
typedef sched_trace_fn cfq_trace_fn;  /* sched_ops' set_trace */
extern void cfq_set_trace (struct sched *s, cfq_trace_fn fn, void *opaque);

/* A group's state, for the control socket. */
struct cfq_group_stats {
  unsigned weight;              /* 100..1000, as the policy has it now */
  uint64_t vdisktime;           /* as cfq_group_vdisktime */
  unsigned busy_queues;         /* of its queues with work */
  unsigned in_driver;           /* its requests dispatched, not completed */
  bool on_service_tree;         /* waiting for or getting service */
  bool serving;                 /* the group being served now */
  /* Lifetime counters, the device-wide ones of struct cfq_stats split by
   * the group whose queue the event concerned (they sum to those):
   */
  uint64_t slices;              /* its queues made active */
  uint64_t idle_arms;           /* idle timer armed (slice_idle) */
  uint64_t group_idle_arms;     /* idle timer armed (group_idle) */
  uint64_t idle_hits;           /* requests arriving while it idled */
  uint64_t idle_timeouts;       /* its idle windows that ran out */
  uint64_t preemptions;         /* its active queue preempted */
  uint64_t dispatched;          /* requests dispatched */
  uint64_t used_ns;             /* ns of disk time its slices used (as
                                   charged in time mode, before weight
                                   scaling; counted in IOPS mode too) */
  bool qos_held;                /* its caps hold it back right now */
  uint64_t qos_throttled;       /* requests its caps held back (each time) */
  uint64_t qos_reserved;        /* requests dispatched for its reservation */
  uint64_t lat_target;          /* ns: its latency target; 0: none */
  uint64_t lat_window;          /* ns: its percentile in the last window
                                   judged; 0: none yet */
  bool lat_unmet;               /* the target is missed with every other
                                   group at the floor */
};
extern void cfq_group_get_stats (struct sched *s, struct sched_group *g,
                                 struct cfq_group_stats *st);

#endif /* CFQ_CFQ_H */
