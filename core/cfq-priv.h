/* cfq-priv.h: what the core/cfq*.c files share, and nobody else.
 *
 * The policy is one object, struct cfqd, split over files along the
 * kernel's seams (BFQ's way: bfq-iosched.c, bfq-wf2q.c, bfq-cgroup.c
 * behind bfq-iosched.h).  This header holds its structures (cfqd, cfqg,
 * cfqq, the connection), the constants of cfq-iosched.c at HZ=1000, the
 * small functions every part uses (t_get, cfqq_prio, service_tree_for ...),
 * the trace macro, and the functions one file calls in another.  Outside
 * core/cfq*.c only include/cfq.h and include/sched.h are the interface.
 *
 * Rules: nothing here allocates or reads a clock; one thread owns a cfqd.
 * The tunables are read through t_get (cfqd, T_...), in the units of the
 * table in cfq-tunables.c.
 */
#ifndef CFQ_CFQ_PRIV_H
#define CFQ_CFQ_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "cfq.h"
#include "cost.h"
#include "latency.h"
#include "qos.h"
#include "sched.h"
#include "units.h"

#define MS NSEC_PER_MSEC

enum {
  T_QUANTUM,
  T_FIFO_EXPIRE_SYNC,
  T_FIFO_EXPIRE_ASYNC,
  T_BACK_SEEK_MAX,
  T_BACK_SEEK_PENALTY,
  T_SLICE_SYNC,
  T_SLICE_ASYNC,
  T_SLICE_ASYNC_RQ,
  T_SLICE_IDLE,
  T_GROUP_IDLE,
  T_LOW_LATENCY,
  T_TARGET_LATENCY,
  T_MODE,
  T_ROTATIONAL,
  T_GROUP_ISOLATION,
  T_MERGE,
  T_HW_TAG,
  T_WC_DEPTH,
  T_GROUP_LAG,
  T_COST,
  T_GROUP_ASYNC,
  T_PROFILE,
  T_NR,
};


/* Constants of cfq-iosched.c, HZ=1000. */
#define CFQ_IDLE_DELAY          (200 * MS)      /* HZ / 5 */
/* ns: a group that left the tree and is back within this keeps its place
 * (ours, deviation 18); HZ / 5 again, the kernel's idea of "idle".
 */
#define CFQ_GROUP_KEEP          CFQ_IDLE_DELAY
#define CFQ_MIN_TT              (2 * MS)        /* 2 jiffies */
#define CFQ_JIFFY               (1 * MS)
#define CFQ_FRONT_OFFSET        1               /* ns before the first queue's
                                                   key: add_front (the kernel's
                                                   HZ, deviation 25) */
#define CFQ_SLICE_SCALE         5
#define CFQ_HW_QUEUE_MIN        5
#define CFQ_HW_SAMPLES          50
#define CFQ_SERVICE_SHIFT       12
#define CFQ_WEIGHT_DEFAULT      500
#define CFQ_ROOT_WEIGHT         1000    /* 2 * BLKIO_WEIGHT_DEFAULT */
#define CFQ_IOPS_CHARGE         CFQ_JIFFY       /* one request, IOPS mode */
/* Deviation 28: sync I/O seen this recently keeps a lone async queue's
 * cap.  The kernel's dirty_expire (30 s) covers periodic fsyncs and
 * journal commits (5 s), which a shorter window would let the backlog
 * refill between.
 */
#define CFQ_SYNC_LATELY         (30ULL * 1000 * MS)
#define CFQ_HIST_DIVISOR        4
#define CFQQ_SEEK_THR           (8 * 100)       /* sectors */
#define CFQQ_CLOSE_THR          (8 * 1024)      /* sectors */
#define CFQQ_SECT_THR_NONROT    (2 * 32)        /* sectors */
#define CFQ_PAGE_SIZE           4096
#define CFQ_IDLE_GRACE          (100 * MS)      /* HZ / 10, CFQ <= 2.6.27 */
#define CFQ_PRIO_LISTS          SCHED_LEVELS
#define CFQ_PRIO_DEFAULT        4               /* IOPRIO_NORM */
#define CFQ_SAMPLE_VALID(s)     ((s) > 80)
/* Seek cost (ours): after this many seeky reads, a "rotational" device
 * whose mean service time for them is under CFQ_SEEK_FAST is taken as
 * non-rotational, and taken back as rotational when the mean is above
 * CFQ_SEEK_SLOW and so were this many of them in a row.
 */
#define CFQ_SEEK_SAMPLES        16
#define CFQ_SEEK_FAST           (1 * MS)
#define CFQ_SEEK_SLOW           (2 * MS)
#define CFQ_RQ_SEEK             0x01    /* rq->pflags: a read dispatched
                                           away from the head */

/* ---- Structures --------------------------------------------------------- */

enum wl_prio { BE_WORKLOAD = 0, RT_WORKLOAD = 1, IDLE_WORKLOAD = 2 };
enum wl_type { ASYNC_WORKLOAD = 0, SYNC_NOIDLE_WORKLOAD = 1, SYNC_WORKLOAD = 2 };

struct cfqd;

/* A queue: the unit that gets time slices. */
struct cfqq {
  struct cfqd *cfqd;
  struct sched_group *cfqg;     /* group charged for its service */
  struct sched_queue *owner;    /* connection embedding it; NULL: async */

  /* Position on a service tree while busy (on_rr). */
  struct rb_node rb_node;
  int64_t rb_key;               /* ns: virtual service start */
  struct rb_root *service_tree; /* tree it is on, NULL if none */

  /* Position on the group's prio tree (cooperator lookup). */
  struct rb_node p_node;
  struct rb_root *p_root;       /* NULL if not on one */

  struct rb_root sort_list;     /* queued rqs by sector */
  struct rq *next_rq;           /* best next rq after the head */
  unsigned queued[2];           /* queued rqs: [async, sync] */
  struct list fifo;             /* queued rqs by arrival */

  uint64_t dispatch_start;      /* ns: made active */
  uint64_t allocated_slice;     /* ns: slice length given */
  uint64_t slice_start;         /* ns: first completion in slice */
  uint64_t slice_end;           /* ns: slice ends (valid if !slice_new) */
  int64_t slice_resid;          /* ns: unused slice carried (<0: overrun) */
  unsigned slice_dispatch;      /* requests dispatched in this slice */
  uint64_t slice_cost;          /* ns: device time of those (the cost
                                   model's, uncorrected) */
  uint64_t cost_pos;            /* byte after its last dispatched rq:
                                   the next is sequential if close */
  uint64_t last_served;         /* ns: end of its last slice that
                                   dispatched (async deadline rule) */

  unsigned meta_pending;        /* queued RQ_META rqs */
  unsigned dispatched;          /* rqs in the driver */

  unsigned short ioprio;        /* level 0..7 */
  unsigned short ioprio_class;  /* enum sched_class */

  uint32_t seek_history;        /* 1 bit per request: was it a seek */
  unsigned seek_samples;        /* requests judged in seek_history, <= 32 */
  bool seek_first;              /* no sample yet: its first request was far
                                   from the head */
  uint64_t last_request_pos;    /* sector after the last queued rq */

  struct cfqq *new_cfqq;        /* merge target (cfq_setup_merge) */

  /* The kernel's cfqq->ref, by kind.  Async cfqqs are never freed. */
  unsigned nr_conn;             /* connections whose ->cfqq is this */
  unsigned nr_rq;               /* rqs inserted here, not completed */
  unsigned nr_link;             /* cfqqs whose new_cfqq is this */

  /* State flags (cfq_cfqq_*). */
  bool on_rr;                   /* on a service tree */
  bool wait_request;            /* idle timer armed for it */
  bool must_dispatch;           /* rq arrived while idling: let it out */
  bool fifo_expire;             /* fifo checked in this slice */
  bool idle_window;             /* idling enabled by history */
  bool slice_new;               /* no completion yet in this slice */
  bool sync;                    /* sync queue */
  bool coop;                    /* shared by merged connections */
  bool split_coop;              /* shared queue turned seeky: split */
  bool deep;                    /* saw >= 4 queued rqs */
  bool wait_busy;               /* slice extended to keep group busy */
};

/* A group's latency target and boost state (cfq-latency.c). */
#define LAT_SUB_BITS 4                  /* 16 buckets per octave */
#define LAT_SUB (1u << LAT_SUB_BITS)
#define LAT_OCT_MIN 10                  /* below 2^10 ns: bucket 0 */
#define LAT_OCT_MAX 40                  /* 2^40 ns and up: the last */
#define LAT_BUCKETS (1 + (LAT_OCT_MAX - LAT_OCT_MIN) * LAT_SUB)
struct cfq_lat {
  struct lat_conf conf;         /* its settings */
  unsigned scale;               /* permille of weight_set it is charged by */
  uint32_t hist[LAT_BUCKETS];   /* completions of this window, by latency
                                   (log buckets, ns) */
  unsigned nr;                  /* completions counted in hist */
  unsigned miss;                /* permille of target in the last window
                                   judged (graded mode); 0: no verdict */
  uint64_t last;                /* ns: its percentile in the last window
                                   judged; 0: none yet */
  bool unmet;                   /* missed with the others at the floor */
  unsigned floor_windows;       /* windows in a row missed so */
  uint64_t windows, misses;     /* windows judged, and missed */
  unsigned cut;                 /* permille: the slice it was in when the
                                   turns were cut is charged at this
                                   (LAT_SCALE_ONE: no cut pending) */
  uint64_t st_unmet;            /* times found unmet */
  uint64_t allow;               /* charge units its boosts may forgive */
  uint64_t allow_at;            /* ns: allow was refilled up to here */
  bool front;                   /* a boost just started while it was off
                                   the tree: it joins at the front */
  uint64_t burst_last;          /* ns: first request of its latest new
                                   connection; NEVER: none */
  uint64_t burst_start;         /* ns: the same, of the burst's first */
  unsigned burst_n;             /* new connections in that burst */
  uint64_t st_boosts;           /* boosts given */
  uint64_t st_burst;            /* connections refused as a burst */
  uint64_t st_spent;            /* boosts refused: allowance spent */
  uint64_t st_forgiven;         /* charge units its boosts forgave */
};

/* A group (tenant): its queues' service trees and its share. */
struct sched_group {
  struct cfqd *cfqd;
  struct list link;             /* on cfqd->groups */
  char name[32];
  unsigned weight;              /* the weight CFQ uses: weight_set scaled
                                   by lat.scale (1..1000) */
  unsigned weight_set;          /* 100..1000: the weight set for it */

  struct rb_node rb_node;       /* on cfqd->grp_st while busy */
  bool on_st;
  bool present;                 /* on_st or rqs in the driver (dev. 31),
                                   or in its lag window (dev. 32) */
  bool in_window;               /* present only by its lag window */
  uint64_t window_end;          /* ns: when that window ends */
  uint64_t last_overlap;        /* ns: a rq of its arrived with another
                                   still out; NEVER: not yet (dev. 32) */
  bool wc_idle;                 /* its last request sent was IDLE class */
  uint64_t vdisktime;           /* (ns << 12) * 500 / weight, cumulative */
  bool has_left;                /* left the tree at least once */
  uint64_t left_at;             /* ns: when it last left the tree */

  unsigned nr_cfqq;             /* busy queues of the group */
  /* The async throttles' state of the group's own I/O (group_async). */
  unsigned rq_in_flight[2];     /* rqs in the driver, [async, sync] */
  uint64_t inflight_cost;       /* ns: cost of its rqs in the driver */
  uint64_t last_delayed_sync;   /* ns: a sync rq of its completed late */
  uint64_t last_sync;           /* ns: a sync rq of its inserted or
                                   completed; NEVER: none yet */
  unsigned dispatched;          /* rqs of the group in the driver */
  uint64_t drain_since;         /* ns: its slice expired with requests in
                                   the driver, whose time is not charged
                                   yet (drain charge); 0: none pending */
  struct sched_queue *drain_cic; /* the connection whose queue began the
                                   drain, whose boost forgives the drain
                                   charge as the rest of its charge; NULL:
                                   none, shared queue, or gone */
  unsigned busy_queues_avg[2];  /* [BE, RT]: decaying average of busy */

  /* Lifetime counters of what happened to the group's queues, the same
   * events as cfqd->stats counts device-wide (cfq_group_get_stats).
   */
  uint64_t st_slices;           /* its queues made active */
  uint64_t st_idle_arms;        /* idle timer armed for it (slice_idle) */
  uint64_t st_group_idle_arms;  /* idle timer armed for it (group_idle) */
  uint64_t st_idle_hits;        /* requests arriving while it idled */
  uint64_t st_idle_timeouts;    /* its idle windows that ran out */
  uint64_t st_preemptions;      /* its active queue preempted */
  uint64_t st_dispatched;       /* requests dispatched, lifetime */
  uint64_t st_used_ns;          /* ns: slice usage at each expiry plus
                                   the drain charge */

  struct rb_root st[2][3];      /* [BE, RT][ASYNC, SYNC_NOIDLE, SYNC] */
  struct rb_root st_idle;       /* IDLE class: one tree */

  uint64_t saved_workload_slice;        /* ns left of the workload slice */
  enum wl_type saved_workload;
  enum wl_prio saved_serving_prio;

  struct rb_root prio_trees[CFQ_PRIO_LISTS];    /* cfqq by next_rq sector */

  struct cfqq async_cfqq[2][SCHED_LEVELS];      /* [RT, BE][level] */
  struct cfqq async_idle_cfqq;

  struct qos_group qos;         /* caps and reservation (core/qos.c) */
  struct cfq_lat lat;           /* latency target and boost */
  unsigned qos_orphans;         /* its rqs in the driver when a cap ended
                                   its turn, not charged yet (time mode) */
};

/* A connection (the kernel's cfq_io_context). */
struct sched_queue {
  struct cfqd *cfqd;
  struct list link;             /* on cfqd->conns */
  struct sched_group *cfqg;
  unsigned short cls;           /* enum sched_class */
  unsigned short level;         /* 0..7 */
  struct cfqq *cfqq;            /* sync queue serving it now */
  struct cfqq own;              /* storage of its own sync queue */

  uint64_t last_end_request;    /* ns: last sync completion; NEVER: none */
  struct sched_wstate wstate;   /* what sched_classify remembers */
  uint64_t ttime_total;         /* think time EWMA numerator (ns * 256) */
  uint64_t ttime_samples;       /* EWMA weight, 256 = one full sample */
  uint64_t ttime_mean;          /* ns */
  unsigned nr_rq;               /* its rqs inserted, not completed */
  bool dead;                    /* queue_free called */
  uint64_t born;                /* ns: its first request; NEVER: none */
  uint64_t lat_last;            /* ns: its last insert or completion;
                                   NEVER: none */
  uint64_t boost_until;         /* ns: boosted until then; 0: not */
};

struct cfq_grp_st {
  struct rb_root rb;            /* groups by vdisktime */
  struct sched_group *active;   /* group being served */
  uint64_t min_vdisktime;
  unsigned total_weight;        /* of groups on the tree */
  unsigned nr_present;          /* groups busy or with rqs in the driver,
                                   or in their lag window */
  unsigned nr_window;           /* groups present only by their window */
};

struct cfqd {
  struct sched s;               /* must be first */
  uint64_t tun[T_NR];           /* tunable values, units of the table */

  struct cfq_grp_st grp_st;
  struct list groups;           /* all groups */
  struct list conns;            /* all connections, dead ones too */
  struct sched_group *root_group;       /* for queues with no group */
  struct sched_queue *root_conn;        /* for rqs with no queue */

  enum wl_prio serving_prio;
  enum wl_type serving_type;
  uint64_t workload_expires;    /* ns */
  struct sched_group *serving_group;

  unsigned busy_queues;         /* queues on rr */
  unsigned busy_idle_queues;    /* of which IDLE class */
  uint64_t last_end_nonidle;    /* ns: last completion of a non-IDLE rq */
  unsigned rq_queued;           /* rqs inserted, not dispatched */
  unsigned rq_in_driver;        /* rqs dispatched, not completed */
  unsigned rq_in_flight[2];     /* same, by queue sync-ness */

  int hw_tag;                   /* -1 unknown, 0, 1 */
  unsigned hw_tag_est_depth;    /* peak rq_in_driver */
  unsigned hw_tag_samples;

  uint64_t idle_timer;          /* ns: idle window end; NEVER: none */
  uint64_t wc_lag_wake;         /* ns: a lag window that holds dispatch
                                   ends (dev. 32); NEVER: none */
  struct cfqq *active_queue;
  struct sched_queue *active_cic;       /* connection of 1st rq of slice */
  uint64_t last_position;       /* sector after the last dispatched rq */
  /* Seek cost (ours, deviation 22): service time of reads dispatched
   * away from the head, as a think-time style EWMA.
   */
  uint64_t last_completion;     /* ns: latest completion of any rq */
  uint64_t seek_total;          /* EWMA numerator (ns * 256) */
  uint64_t seek_weight;         /* EWMA weight, 256 = one full sample */
  uint64_t seek_cost;           /* ns: mean service time of those reads */
  unsigned seek_seen;           /* such reads completed (saturates) */
  unsigned seek_slow_run;       /* of them, the last ones in a row that
                                   took over CFQ_SEEK_SLOW (saturates) */
  bool seek_fast;               /* rotational=1, but seeks cost < 1 ms */
  uint64_t last_delayed_sync;   /* ns: a sync rq completed late */
  uint64_t last_sync;           /* ns: a sync rq inserted or completed;
                                   NEVER: none yet (deviation 28) */
  uint64_t now;                 /* ns: latest time passed in */
  struct cfqq *run_queue;       /* queue the post-completion run serves */
  struct cfqq *preempt_pending; /* preemption deferred until that run */

  struct qos_sched qos;         /* groups with caps or a reservation */
  struct cost_model cost;       /* what a request costs (include/cost.h) */
  bool cost_given;              /* set_cost called: not a default model */
  uint64_t inflight_cost;       /* ns: cost of the rqs in the driver */
  bool qos_refused;             /* a cap refused the last request chosen */
  uint64_t qos_last_done;       /* ns: last completion, while qos_on() */

  unsigned lat_targets;         /* groups with a latency target */
  uint64_t lat_window_end;      /* ns: the latency window ends */
  bool lat_clamp;               /* a binary target missed: the others'
                                   depth is 1 */
  unsigned lat_turn;            /* permille: every group's turn (its share
                                   of target_latency, and quantum) is cut
                                   to this while a graded target misses on
                                   a disk; LAT_SCALE_ONE: whole */

  struct cfq_stats stats;
};

#define CFQD(sp) container_of (sp, struct cfqd, s)

static inline uint64_t t_get (const struct cfqd *cfqd, int t)
{ return cfqd->tun[t]; }
static inline uint64_t umin64 (uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t umax64 (uint64_t a, uint64_t b) { return a > b ? a : b; }

static inline bool cfq_class_idle (const struct cfqq *cfqq)
{ return cfqq->ioprio_class == SCHED_CLASS_IDLE; }
static inline bool cfq_class_rt (const struct cfqq *cfqq)
{ return cfqq->ioprio_class == SCHED_CLASS_RT; }
/* Non-rotational as CFQ sees it: the device says so, or it says it seeks
 * and the measured cost of seeky reads says it does not (seek cost).
 */
static inline bool cfq_nonrot (const struct cfqd *cfqd)
{ return !t_get (cfqd, T_ROTATIONAL) || cfqd->seek_fast; }
static inline uint32_t rq_sectors (const struct rq *rq)
{ return (rq->len + 511) >> 9; }

/* Seeky: more than one in eight of the requests judged were seeks, which
 * with a full history is the kernel's "more than 4 of the last 32"; with
 * none judged yet, its first request was far from the head (deviation
 * 20, "Seek history of a new queue").
 */
#define CFQQ_SEEKY(cfqq) \
  ((cfqq)->seek_samples \
   ? (unsigned) __builtin_popcount ((cfqq)->seek_history) * 8 \
     > (cfqq)->seek_samples \
   : (cfqq)->seek_first)

static inline bool
iops_mode (const struct cfqd *cfqd)
{
  switch (t_get (cfqd, T_MODE)) {
  case CFQ_MODE_TIME: return false;
  case CFQ_MODE_IOPS: return true;
  default:
    /* Charge by requests on flash (ours: a device that does not seek has
     * no time to share out), or by CFQ's test "!slice_idle && hw_tag",
     * where hw_tag -1 counts as NCQ.
     */
    return cfq_nonrot (cfqd)
      || (!t_get (cfqd, T_SLICE_IDLE) && cfqd->hw_tag != 0);
  }
}

static inline enum wl_prio
cfqq_prio (const struct cfqq *cfqq)
{
  if (cfq_class_idle (cfqq))
    return IDLE_WORKLOAD;
  if (cfq_class_rt (cfqq))
    return RT_WORKLOAD;
  return BE_WORKLOAD;
}

static inline enum wl_type
cfqq_type (const struct cfqq *cfqq)
{
  if (!cfqq->sync)
    return ASYNC_WORKLOAD;
  if (!cfqq->idle_window)
    return SYNC_NOIDLE_WORKLOAD;
  return SYNC_WORKLOAD;
}

static inline struct rb_root *
service_tree_for (struct sched_group *cfqg, enum wl_prio prio,
                  enum wl_type type)
{
  if (!cfqg)
    return NULL;
  if (prio == IDLE_WORKLOAD)
    return &cfqg->st_idle;
  return &cfqg->st[prio][type];
}

static inline unsigned
cfq_group_busy_queues_wl (enum wl_prio wl, struct sched_group *cfqg)
{
  if (wl == IDLE_WORKLOAD)
    return cfqg->st_idle.count;
  return cfqg->st[wl][ASYNC_WORKLOAD].count
    + cfqg->st[wl][SYNC_NOIDLE_WORKLOAD].count
    + cfqg->st[wl][SYNC_WORKLOAD].count;
}

static inline unsigned
cfqg_busy_async_queues (struct sched_group *cfqg)
{
  return cfqg->st[RT_WORKLOAD][ASYNC_WORKLOAD].count
    + cfqg->st[BE_WORKLOAD][ASYNC_WORKLOAD].count;
}

/* Idle-class grace (CFQ_IDLE_GRACE of CFQ up to 2.6.27, kept because
 * "IDLE only when nothing else waits" should survive a sync reader's think
 * time): when only IDLE-class queues have work, none starts until 100 ms
 * after the last completion of a non-IDLE request.  2.6.36 relies on the
 * class order inside a group only.  Across groups an IDLE queue still gets
 * its group's turn while other groups are busy, as in 2.6.36.
 */
static inline bool
cfq_idle_grace_wait (const struct cfqd *cfqd, uint64_t now)
{
  return cfqd->busy_queues && cfqd->busy_queues == cfqd->busy_idle_queues
    && now - cfqd->last_end_nonidle < CFQ_IDLE_GRACE;
}

/* A queue, empty and new, of cfqg (a group's async queues and a
 * connection's own queue alike).
 */
static inline void
cfq_init_cfqq (struct cfqd *cfqd, struct cfqq *cfqq, struct sched_group *cfqg,
               struct sched_queue *owner, bool sync, unsigned cls,
               unsigned level)
{
  memset (cfqq, 0, sizeof *cfqq);
  cfqq->cfqd = cfqd;
  cfqq->cfqg = cfqg;
  cfqq->owner = owner;
  rb_clear (&cfqq->rb_node);
  rb_clear (&cfqq->p_node);
  rb_root_init (&cfqq->sort_list);
  list_init (&cfqq->fifo);
  cfqq->ioprio_class = cls;
  cfqq->ioprio = cls == SCHED_CLASS_IDLE ? SCHED_LEVELS - 1 : level;
  cfqq->sync = sync;
  if (sync && cls != SCHED_CLASS_IDLE)
    cfqq->idle_window = true;
  cfqq->slice_new = true;
}

#define cfqq_of(n) container_of (n, struct cfqq, rb_node)
#define cfqq_of_p(n) container_of (n, struct cfqq, p_node)
#define cfqg_of(n) container_of (n, struct sched_group, rb_node)
#define rq_of(n) container_of (n, struct rq, rb)

/* The group service tree's order: by vdisktime, wrapping. */
static inline bool
cfqg_less (const struct rb_node *a, const struct rb_node *b)
{
  return (int64_t) (cfqg_of (a)->vdisktime - cfqg_of (b)->vdisktime) < 0;
}

/* Set CFQG's vdisktime, its key on the group service tree ST: taken off
 * and put back if it is on it, for the key may not change there.
 */
static inline void
cfqg_set_vdisktime (struct cfq_grp_st *st, struct sched_group *cfqg,
                    uint64_t vdisktime)
{
  if (cfqg->on_st)
    rb_erase (&st->rb, &cfqg->rb_node);
  cfqg->vdisktime = vdisktime;
  if (cfqg->on_st)
    rb_insert (&st->rb, &cfqg->rb_node, cfqg_less);
}

/* Tracing (cfq_set_trace): a message per decision while a hook is set. */
extern cfq_trace_fn cfq_trace_hook;
extern void *cfq_trace_opaque;
void cfq_trace (const struct cfqd *cfqd, const struct cfqq *cfqq,
                const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
#define CFQ_TRACE(cfqd, cfqq, ...) \
  do { if (cfq_trace_hook) cfq_trace (cfqd, cfqq, __VA_ARGS__); } while (0)

/* ---- Functions shared between the cfq*.c files ------------------------- */

/* Each file calls only the files listed below its own (make lint checks
 * it): cfq.c selects, dispatches and expires; the layers below it keep
 * their trees and charges and return their choices to it.  Listed top
 * down, each under the file that defines it.
 */

/* cfq.c: the ops, queue selection, slices and their expiry, dispatch,
 * connections (merging, splitting, freeing).  Only its ops leave it.
 */

/* cfq-stats.c: CFQ's state read from outside (cfq_get_stats, cfq_get_cost,
 * cfq_dump in include/cfq.h).  Nothing here calls it.
 */

/* cfq-history.c: what CFQ learns from requests: think time, seek history,
 * idle window, hw_tag, seek cost (deviation 22).
 */
void cfq_update_io_thinktime (struct cfqd *cfqd, struct sched_queue *cic,
                              uint64_t now);
bool cfq_first_rq_seeky (const struct cfqd *cfqd, const struct rq *rq);
void cfq_update_io_seektime (struct cfqd *cfqd, struct cfqq *cfqq,
                             const struct rq *rq);
void cfq_update_idle_window (struct cfqd *cfqd, struct cfqq *cfqq,
                             const struct sched_queue *cic);
void cfq_update_hw_tag (struct cfqd *cfqd);
void cfq_update_seek_cost (struct cfqd *cfqd, const struct rq *rq,
                           uint64_t now);

/* cfq-wc.c: the work-conserving dispatch's choice (deviations 31, 32). */
bool cfq_wc_on (const struct cfqd *cfqd);
struct rq *cfq_wc_select (struct cfqd *cfqd, struct cfqq **cfqqp,
                          uint64_t now);
void cfq_wc_served (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                    uint64_t now);

/* cfq-qos.c: caps and reservations inside CFQ (deviation 29). */
struct sched_group *cfq_qos_next_cfqg (struct cfqd *cfqd);
void cfq_qos_bound_lag (struct cfqd *cfqd, const struct sched_group *cfqg);
bool cfq_qos_admit (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                    uint64_t now);
void cfq_qos_refused (struct cfqd *cfqd, struct cfqq *cfqq);
void cfq_qos_completed (struct cfqd *cfqd, struct rq *rq, uint64_t now);
struct rq *cfq_qos_select (struct cfqd *cfqd, struct cfqq **cfqqp,
                           bool *reserved, uint64_t now);
void cfq_qos_served (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                     bool reserved, uint64_t now);

/* cfq-rq.c: a queue's requests in sector order, and its next_rq. */
struct rq *cfq_find_next_rq (const struct cfqd *cfqd, struct cfqq *cfqq,
                             struct rq *last);
void cfq_add_rq_rb (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                    uint64_t now);
void cfq_remove_request (struct cfqd *cfqd, struct cfqq *cfqq,
                         struct rq *rq);

/* cfq-tree.c: the queue service trees of a group, the workload choice. */
void cfq_service_tree_add (struct cfqd *cfqd, struct cfqq *cfqq,
                           bool add_front, uint64_t now);
void cfq_resort_rr_list (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now);
void cfq_add_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now);
void cfq_del_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq);
struct cfqq *cfq_get_next_queue (struct cfqd *cfqd);
bool cfq_async_overdue (const struct cfqd *cfqd, struct sched_group *cfqg,
                        enum wl_prio prio, uint64_t now);
void choose_service_tree (struct cfqd *cfqd, struct sched_group *cfqg,
                          uint64_t now);

/* cfq-coop.c: the prio trees, cooperator lookup, merge links. */
void cfq_prio_tree_del (struct cfqq *cfqq);
void cfq_prio_tree_add (struct cfqd *cfqd, struct cfqq *cfqq);
uint64_t cfq_dist_from_last (const struct cfqd *cfqd, const struct rq *rq);
bool cfq_rq_close (const struct cfqd *cfqd, const struct rq *rq);
struct cfqq *cfq_close_cooperator (struct cfqd *cfqd, struct cfqq *cur);
void cfq_setup_merge (struct cfqq *cfqq, struct cfqq *new_cfqq);

/* cfq-group.c: groups, the group service tree, charges, present groups
 * and lag windows, queue slices sized by the group's share.
 */
uint64_t cfq_scale_slice (uint64_t delta, const struct sched_group *cfqg);
void update_min_vdisktime (struct cfq_grp_st *st);
unsigned cfq_group_get_avg_queues (struct sched_group *cfqg, bool rt);
uint64_t cfq_group_slice (const struct cfqd *cfqd,
                          const struct sched_group *cfqg);
uint64_t cfq_lag_vdisktime (const struct cfqd *cfqd);
void cfq_group_service_tree_add (struct cfqd *cfqd, struct sched_group *cfqg);
void cfq_group_service_tree_del (struct cfqd *cfqd, struct sched_group *cfqg);
uint64_t cfq_cfqq_slice_usage (const struct cfqq *cfqq, uint64_t now);
bool cfq_charge_by_cost (const struct cfqd *cfqd);
uint64_t cfq_rq_charge (const struct cfqd *cfqd, const struct rq *rq);
uint64_t cfq_cfqq_charge (const struct cfqd *cfqd, const struct cfqq *cfqq,
                          uint64_t now);
void cfq_group_charge (struct cfqd *cfqd, struct sched_group *cfqg,
                       uint64_t charge);
void cfq_group_charge_queue (struct cfqd *cfqd, const struct cfqq *cfqq,
                             uint64_t charge, uint64_t now);
void cfq_group_drain_start (struct sched_group *cfqg,
                            const struct cfqq *cfqq, uint64_t now);
void cfq_group_drain_done (struct cfqd *cfqd, struct sched_group *cfqg,
                           uint64_t now);
void cfq_group_served (struct cfqd *cfqd, struct sched_group *cfqg,
                       struct cfqq *cfqq, uint64_t now);
void cfq_group_present (struct cfqd *cfqd, struct sched_group *cfqg);
void cfq_group_windows_expire (struct cfqd *cfqd, uint64_t now);
struct sched_group *cfq_group_alloc (struct cfqd *cfqd, const char *name,
                                     unsigned weight);
struct sched_group *cfq_group_new (struct sched *s, const char *name,
                                   unsigned weight);
int cfq_group_set_weight (struct sched *s, struct sched_group *cfqg,
                          unsigned w);
int cfq_group_set_qos (struct sched *s, struct sched_group *cfqg,
                       const struct qos_conf *c);
void cfq_group_qos_counts (struct sched *s, struct sched_group *cfqg,
                           struct qos_counts *c);
void cfq_group_qos_charge (struct sched *s, struct sched_group *cfqg,
                           const struct qos_counts *delta,
                           const uint32_t *share_ppm, uint64_t now);
uint64_t cfq_prio_slice (const struct cfqd *cfqd, bool sync, unsigned prio);
uint64_t cfq_scaled_slice (const struct cfqd *cfqd, const struct cfqq *cfqq,
                           unsigned iq);
void cfq_trim_slice (struct cfqd *cfqd, const struct sched_group *joined,
                     uint64_t now);


/* cfq-latency.c: latency targets and the boost, through the groups'
 * effective weights and charges.
 */
void cfq_lat_group_init (struct cfqd *cfqd, struct sched_group *g,
                         unsigned w);
void cfq_lat_set_weight (struct cfqd *cfqd, struct sched_group *g,
                         unsigned w);
int cfq_group_set_latency (struct sched *s, struct sched_group *g,
                           const struct lat_conf *c);
void cfq_lat_completed (struct cfqd *cfqd, struct sched_queue *cic,
                        const struct rq *rq, uint64_t now);
bool cfq_lat_clamped (const struct cfqd *cfqd, const struct sched_group *g);
bool cfq_lat_depth_full (const struct cfqd *cfqd, const struct sched_group *g);
uint64_t cfq_lat_target_latency (const struct cfqd *cfqd);
unsigned cfq_lat_quantum (const struct cfqd *cfqd);
void cfq_lat_insert (struct cfqd *cfqd, struct sched_queue *cic,
                     uint64_t now);
void cfq_lat_allow_refill (struct sched_group *g, uint64_t now);
uint64_t cfq_lat_cut_charge (struct sched_group *g, uint64_t charge);
uint64_t cfq_lat_charge (struct sched_queue *cic, struct sched_group *g,
                         uint64_t charge, uint64_t now);
void cfq_lat_stats (struct cfqd *cfqd, struct sched_group *g,
                    stat_emit_fn *emit, void *opaque);
/* cfq-tunables.c: the tunable table, the setter. */
int cfq_set (struct sched *s, const char *key, uint64_t val);
int cfq_get (struct sched *s, const char *key, uint64_t *val);
void cfq_profile_apply (struct cfqd *cfqd, uint64_t profile);
void cfq_cost_default (struct cfqd *cfqd);
extern const struct sched_tunables cfq_sched_tunables;

/* cfq-stats.c */
void cfq_stats (struct sched *s, struct sched_group *g, stat_emit_fn *emit,
                void *opaque);

/* cfq-trace.c: cfq_trace and its hook, above. */

#endif /* CFQ_CFQ_PRIV_H */
