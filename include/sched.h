/* sched.h: the interface between a scheduling policy and the mechanism.
 *
 * The kernel's elevators never issue I/O: the block layer inserts requests,
 * asks for the next one to dispatch and reports completions.  We keep the
 * same split.  A policy (core/fifo.c, core/cfq.c) sees only struct rq and the
 * calls below; the mechanism (the plugin's dispatcher thread, the simulator,
 * the benchmarks) owns the clock, the device and all memory of requests.
 *
 * Time is always an absolute count of nanoseconds passed in by the caller
 * ("now").  dispatch() returns the next request, or NULL, and in *next the
 * absolute time at which the caller must call dispatch() again even if
 * nothing else happens (an idle window closing, a slice ending, a fifo
 * expiring); SCHED_NEVER means no timer is needed.
 *
 * Threading: a struct sched is used by one thread at a time (the plugin
 * calls it under its engine lock).  Nothing here locks, sleeps or reads a
 * clock.  Error returns are -errno.
 *
 * Lifetime of a request, owned by the caller throughout:
 *   fill in off/len/op/flags/q  ->  sched_insert()  ->  sched_dispatch()
 *   returns it  ->  caller does the I/O  ->  sched_completed().
 * Every inserted request is returned by dispatch exactly once, and must be
 * completed exactly once after that (deactivated and activated again in
 * between, at most once, if the mechanism must hold it back: see
 * deactivate); unless the caller takes it back before it was dispatched
 * (sched_cancel: its client went away), and then it is neither
 * dispatched nor completed.
 */
#ifndef CFQ_SCHED_H
#define CFQ_SCHED_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>

#include "list.h"
#include "rbtree.h"
#include "statfield.h"

#define SCHED_NEVER UINT64_MAX

#define NSEC_PER_USEC 1000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_SEC  1000000000ULL

enum rq_op {
  RQ_READ = 0,
  RQ_WRITE,
  RQ_FLUSH,
  RQ_TRIM,
  RQ_ZERO,
};

/* rq->flags */
#define RQ_SYNC  0x01           /* sync: someone waits for it (reads,
                                   flushes, FUA writes; see RQ_AUTO) */
#define RQ_FUA   0x02           /* write must be durable on completion */
#define RQ_META  0x04           /* metadata: CFQ serves it first */
#define RQ_MAYTRIM 0x08         /* zero may punch a hole */
#define RQ_AUTO  0x10           /* sync or not is the policy's rule
                                   (sched_classify): plain writes, trims
                                   and zeroes of a writes=auto export */

/* Priority classes, numbered as Linux IOPRIO_CLASS_*. */
enum sched_class {
  SCHED_CLASS_RT = 1,
  SCHED_CLASS_BE = 2,
  SCHED_CLASS_IDLE = 3,
};
/* The classes' names, indexed by enum sched_class ("" at 0): what the
 * config's class = takes and every report prints.  The one list.
 */
extern const char *const sched_class_names[SCHED_CLASS_IDLE + 1];
/* The name of class c, "" if c is none of them. */
extern const char *sched_class_name (unsigned c);
/* The class named name, or -1. */
extern int sched_class_parse (const char *name);
#define SCHED_LEVELS 8          /* levels 0 (highest) .. 7 */
#define SCHED_WEIGHT_MIN 100
#define SCHED_WEIGHT_MAX 1000
#define SCHED_WEIGHT_DEFAULT 500
#define SCHED_PRIO_DEFAULT 4    /* level of a group that names none */

/* queue_depth: requests the mechanism keeps at the device at once (the
 * plugin's dispatcher, cfqsim); CFQ learns from it whether the device
 * queues (hw_tag).
 */
#define SCHED_DEPTH_DEFAULT 32
#define SCHED_DEPTH_MAX 4096

struct sched_queue;             /* one per client connection (cfqq) */
struct sched_group;             /* one per tenant group (cfqg) */
struct qos_conf;                /* a group's caps and reservation (qos.h) */
struct qos_counts;              /* what they counted (qos.h) */
struct lat_conf;                /* its latency target and boost (latency.h) */
struct cost_params;             /* what requests cost the device (cost.h) */
struct cost_model;              /* those, corrected online (cost.h) */

struct rq {
  /* Filled in by the caller before insert. */
  uint64_t off;                 /* byte offset on the device */
  uint32_t len;                 /* bytes; 0 for flush */
  uint8_t op;                   /* enum rq_op */
  uint8_t flags;                /* RQ_* */
  struct sched_queue *q;        /* the submitting connection's queue */
  void *priv;                   /* the caller's, never touched by policy */

  /* Owned by the policy from insert until completed. */
  struct list fifo;             /* on the queue's fifo, arrival order */
  struct rb_node rb;            /* in the queue's sector-sorted tree */
  uint64_t t_insert;            /* ns: when inserted */
  uint64_t t_fifo;              /* ns: fifo expiry deadline */
  uint64_t t_dispatch;          /* ns: when dispatched */
  void *sq;                     /* policy's: queue actually serving it */
  uint64_t cost;                /* policy's: ns of device time, the cost
                                   model's (include/cost.h) */
  uint8_t pflags;               /* policy's: its own marks */
};

static inline uint64_t
rq_sector (const struct rq *rq)
{
  return rq->off >> 9;
}

static inline bool
rq_is_sync (const struct rq *rq)
{
  return rq->flags & RQ_SYNC;
}

struct sched;

/* A policy's tunables, for whoever sets them by name from text (the
 * control socket): the i-th's name (NULL past the last); a value's text
 * parsed (0, -ENOENT: not one of them, -EINVAL: not of its grammar,
 * -ERANGE: out of range), written back as parse reads it, and a refusal
 * (-EINVAL, -ERANGE) explained in the config file's words.  cfq.h says
 * what CFQ's take.
 */
struct sched_tunables {
  const char *(*name) (size_t i);
  int (*parse) (const char *key, const char *text, uint64_t *val);
  char *(*format) (const char *key, uint64_t val, char *buf, size_t len);
  const char *(*explain) (const char *key, const char *text, int err,
                          char *buf, size_t len);
};

/* One line of text for each decision of the policy (debugging). */
typedef void (*sched_trace_fn) (void *opaque, const char *msg);

struct sched_ops {
  const char *name;

  /* Create and destroy an instance.  create returns NULL only on ENOMEM. */
  struct sched *(*create) (void);
  void (*destroy) (struct sched *s);

  /* Tunables, by their CFQ name ("slice_idle", "quantum" ...).  Values are
   * in the tunable's own unit (ns for times).  set clamps nothing silently:
   * it returns -ENOENT for an unknown key and -ERANGE for a bad value.
   */
  int (*set) (struct sched *s, const char *key, uint64_t val);
  int (*get) (struct sched *s, const char *key, uint64_t *val);

  /* Groups and queues.  Called from setup paths: these may allocate.
   * group_new returns NULL on ENOMEM or a bad weight.
   * queue_free may be called while the queue still has requests queued or
   * in flight: they are still dispatched and completed as usual, and the
   * memory goes when the last one completes.
   */
  struct sched_group *(*group_new) (struct sched *s, const char *name,
                                    unsigned weight);
  int (*group_set_weight) (struct sched *s, struct sched_group *g,
                           unsigned weight);
  /* Caps and reservation of a group (include/qos.h), replacing what it
   * had; all zero removes them.  -EINVAL if qos_conf_check() refuses it,
   * -ENOTSUP if the policy has none (fifo, unless all zero).  May be
   * called at any time, also with requests queued.
   */
  int (*group_set_qos) (struct sched *s, struct sched_group *g,
                        const struct qos_conf *c);
  /* Optional (NULL: no caps).  Limits held across servers (gqos.h):
   * the group's lifetime counts of what its caps and reservation counted
   * here; what other servers served it and this server's share of its
   * caps (qos_charge).
   */
  void (*group_qos_counts) (struct sched *s, struct sched_group *g,
                            struct qos_counts *c);
  void (*group_qos_charge) (struct sched *s, struct sched_group *g,
                            const struct qos_counts *delta,
                            const uint32_t *share_ppm, uint64_t now);
  /* Optional (NULL: none).  A group's latency target and boost
   * (include/latency.h), replacing what it had.  -ERANGE for a target out
   * of range.  May be called at any time.
   */
  int (*group_set_latency) (struct sched *s, struct sched_group *g,
                            const struct lat_conf *c);
  struct sched_queue *(*queue_new) (struct sched *s, struct sched_group *g,
                                    enum sched_class cls, unsigned level);
  void (*queue_free) (struct sched *s, struct sched_queue *q);

  /* The request path: no allocation, no syscalls. */
  void (*insert) (struct sched *s, struct rq *rq, uint64_t now);
  struct rq *(*dispatch) (struct sched *s, uint64_t now, uint64_t *next);
  void (*completed) (struct sched *s, struct rq *rq, uint64_t now);
  bool (*has_work) (struct sched *s);
  /* Take back rq, inserted and not yet dispatched (the caller's to know:
   * the policy does not check): its client went away, or the server
   * stops.  The policy drops it as if it had never been queued (no
   * service is charged, caps and reservations do not count it), keeps
   * what its insert taught it (think time, seek history), and frees a
   * queue whose last request it was if queue_free was called.  The
   * deadline of the next dispatch() may change: call it again.
   */
  void (*cancel) (struct sched *s, struct rq *rq, uint64_t now);

  /* Optional (NULL: nothing to do).  A dispatched request the mechanism
   * cannot start yet (the plugin's: it waits for a buffer) is
   * deactivated: until it is activated, just before it goes to the
   * device, the policy counts it as not at the device and waits for it
   * in nothing (its queue's idling, group_idle), as the kernel's
   * elevator_deactivate_req_fn for a request the driver gave back.  Each
   * at most once per request, between dispatch and completed.
   */
  void (*deactivate) (struct sched *s, struct rq *rq, uint64_t now);
  void (*activate) (struct sched *s, struct rq *rq, uint64_t now);

  /* Optional (NULL: the policy charges no cost).  The cost model's
   * parameters (include/cost.h) for this device, from the device model,
   * a calibration or the config; source says which (a static string).
   * -ERANGE if cost_params_check refuses them.  A setup call.
   */
  int (*set_cost) (struct sched *s, const struct cost_params *p,
                   const char *source);
  /* Optional (NULL: the policy charges no cost).  The model in effect,
   * with its online correction and error (struct cost_model, cost.h).
   */
  void (*get_cost) (struct sched *s, struct cost_model *m);

  /* Optional (NULL: none of its own).  The policy's statistics, each
   * described once (include/statfield.h): the device's when g is NULL,
   * else group g's.  emit is called once per table, with a snapshot made
   * now that the table reads; both live only during the call.  Reads
   * only: no allocation, no change to the scheduler.
   */
  void (*stats) (struct sched *s, struct sched_group *g,
                 stat_emit_fn *emit, void *opaque);

  /* Optional (NULL: no tunables); their values are set and got with set
   * and get above.
   */
  const struct sched_tunables *tunables;

  /* Optional (NULL: it says nothing).  Call fn with one line for each
   * scheduling decision, on the caller's thread inside the policy's call
   * (fn must not call back into it); NULL turns it off.
   */
  void (*set_trace) (struct sched *s, sched_trace_fn fn, void *opaque);
};

/* Every policy's instance starts with this. */
struct sched {
  const struct sched_ops *ops;
};

extern const struct sched_ops fifo_ops;
extern const struct sched_ops cfq_ops;

/* Sync or async, for a request marked RQ_AUTO: NBD carries no sync flag,
 * so this is the policy's rule (core/sched.c), applied at insert by the
 * policies that care (cfq), in the server and in cfqsim alike.  It sets
 * RQ_SYNC from the request's op and flags and what the connection did
 * lately, which it keeps in W (one per connection, zeroed at start; call
 * it for every request of the connection, in order).  Without RQ_AUTO,
 * RQ_SYNC is the mechanism's word.
 */
struct sched_wstate {
  bool waits;                   /* it read, flushed or wrote FUA ... */
  uint64_t last_wait;           /* ns: ... last at this time */
};
#define SCHED_WAIT_WINDOW NSEC_PER_SEC  /* ns: "lately" */
extern void sched_classify (struct sched_wstate *w, struct rq *rq,
                            uint64_t now);

/* Look a policy up by name ("fifo", "cfq"); NULL if unknown. */
extern const struct sched_ops *sched_lookup (const char *name);

static inline struct sched *sched_create (const struct sched_ops *ops)
{ return ops->create (); }
static inline void sched_destroy (struct sched *s)
{ s->ops->destroy (s); }
static inline int sched_set (struct sched *s, const char *k, uint64_t v)
{ return s->ops->set (s, k, v); }
static inline int sched_get (struct sched *s, const char *k, uint64_t *v)
{ return s->ops->get (s, k, v); }
static inline struct sched_group *
sched_group_new (struct sched *s, const char *name, unsigned weight)
{ return s->ops->group_new (s, name, weight); }
static inline int
sched_group_set_weight (struct sched *s, struct sched_group *g, unsigned w)
{ return s->ops->group_set_weight (s, g, w); }
static inline int
sched_group_set_qos (struct sched *s, struct sched_group *g,
                     const struct qos_conf *c)
{ return s->ops->group_set_qos ? s->ops->group_set_qos (s, g, c) : -ENOTSUP; }
/* -ENOTSUP if the policy has no caps (fifo). */
static inline int
sched_group_qos_counts (struct sched *s, struct sched_group *g,
                        struct qos_counts *c)
{
  if (!s->ops->group_qos_counts)
    return -ENOTSUP;
  s->ops->group_qos_counts (s, g, c);
  return 0;
}
static inline void
sched_group_qos_charge (struct sched *s, struct sched_group *g,
                        const struct qos_counts *delta,
                        const uint32_t *share_ppm, uint64_t now)
{
  if (s->ops->group_qos_charge)
    s->ops->group_qos_charge (s, g, delta, share_ppm, now);
}
static inline int
sched_group_set_latency (struct sched *s, struct sched_group *g,
                         const struct lat_conf *c)
{
  return s->ops->group_set_latency ? s->ops->group_set_latency (s, g, c)
    : -ENOTSUP;
}
static inline struct sched_queue *
sched_queue_new (struct sched *s, struct sched_group *g,
                 enum sched_class cls, unsigned level)
{ return s->ops->queue_new (s, g, cls, level); }
static inline void sched_queue_free (struct sched *s, struct sched_queue *q)
{ s->ops->queue_free (s, q); }
static inline void sched_insert (struct sched *s, struct rq *rq, uint64_t now)
{ s->ops->insert (s, rq, now); }
static inline struct rq *
sched_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{ return s->ops->dispatch (s, now, next); }
static inline void sched_completed (struct sched *s, struct rq *rq, uint64_t now)
{ s->ops->completed (s, rq, now); }
static inline bool sched_has_work (struct sched *s)
{ return s->ops->has_work (s); }
static inline void sched_cancel (struct sched *s, struct rq *rq, uint64_t now)
{ s->ops->cancel (s, rq, now); }
static inline void
sched_deactivate (struct sched *s, struct rq *rq, uint64_t now)
{ if (s->ops->deactivate) s->ops->deactivate (s, rq, now); }
static inline void
sched_activate (struct sched *s, struct rq *rq, uint64_t now)
{ if (s->ops->activate) s->ops->activate (s, rq, now); }
static inline int
sched_set_cost (struct sched *s, const struct cost_params *p,
                const char *source)
{ return s->ops->set_cost ? s->ops->set_cost (s, p, source) : 0; }

/* The policy's cost model in *m: true, or false if it charges none. */
static inline bool
sched_get_cost (struct sched *s, struct cost_model *m)
{
  if (!s->ops->get_cost)
    return false;
  s->ops->get_cost (s, m);
  return true;
}

static inline void
sched_stats (struct sched *s, struct sched_group *g, stat_emit_fn *emit,
             void *opaque)
{ if (s->ops->stats) s->ops->stats (s, g, emit, opaque); }
static inline void
sched_set_trace (struct sched *s, sched_trace_fn fn, void *opaque)
{ if (s->ops->set_trace) s->ops->set_trace (s, fn, opaque); }

/* The policy's tunables (sched_tunables): the i-th's name, NULL past the
 * last or when it has none; parse -ENOENT when it has none; format and
 * explain write into buf (a plain number, the error's text when it has
 * none) and return it.
 */
extern const char *sched_tunable_name (struct sched *s, size_t i);
extern int sched_tunable_parse (struct sched *s, const char *key,
                                const char *text, uint64_t *val);
extern char *sched_tunable_format (struct sched *s, const char *key,
                                   uint64_t val, char *buf, size_t len);
extern const char *sched_tunable_explain (struct sched *s, const char *key,
                                          const char *text, int err,
                                          char *buf, size_t len);

#endif /* CFQ_SCHED_H */
