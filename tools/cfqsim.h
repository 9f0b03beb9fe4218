/* cfqsim.h: what the files of tools/cfqsim share.
 *
 * cfqsim-main.c reads the options and the scenario, cfqsim-scenario.c
 * builds the run from the model (groups, connections, the device),
 * cfqsim-loop.c runs the event loop, cfqsim-report.c prints the results.
 * The run's shape and options live in one struct sim_cfg (cfg), the loop's
 * state in struct sim_state (sim); one process runs one scenario.
 */
#ifndef CFQ_TOOLS_CFQSIM_H
#define CFQ_TOOLS_CFQSIM_H

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
#include "cost.h"
#include "devmodel.h"
#include "hist.h"
#include "qos.h"
#include "rng.h"
#include "sched.h"
#include "stats.h"
#include "units.h"

/* Requests and bytes completed per interval of the run: --window's
 * series and the per-second one (cfqsim-series.c).
 */
struct series {
  uint64_t width;               /* ns; 0: not kept */
  unsigned n;                   /* intervals: the duration rounded up */
  bool clamp_end;               /* a completion at the very end counts in
                                   the last interval, else in none */
  bool lat;                     /* keep each interval's latencies too */
};
struct series_counts {
  uint64_t *ios, *bytes;        /* [n] each */
  struct hist *lat;             /* [n] ns, when the series keeps them */
};

struct sim_group {
  const char *name;
  unsigned weight;              /* 100..1000 */
  struct sched_group *sg;
  unsigned njobs;               /* connections in the run */
  uint64_t bytes, ios;          /* completed data requests within duration */
  struct hist lat;              /* ns: latency of its jobs' data requests */
  struct series_counts win;     /* per window (--window), summed at report */
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
  unsigned think_blocks;        /* requests per burst; 0: think per slot */
  uint64_t number_ios;          /* requests: it stops after this many;
                                   0: no limit */
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
  unsigned burst;               /* of them, in this burst (think_blocks) */
  unsigned burst_parked;        /* slots waiting for the burst's think */
  uint64_t rng;                 /* xorshift64* state */

  uint64_t batch_start;         /* ns: first write since the last flush */
  bool batch_open;              /* writes submitted since the last flush */

  /* results, counted for completions at or before the end */
  uint64_t bytes, ios, flushes;
  uint64_t writes_done;         /* of ios, the writes */
  uint64_t done_at;             /* ns: its number_ios-th completion, once
                                   ios reached number_ios */
  struct hist lat;              /* ns: data request latency, insert->done */
  struct hist fsync_lat;        /* ns: first write of a batch -> its flush
                                   done (what fsync-tester times) */
  struct series_counts win;     /* per window of --window, by completion */
  struct series_counts sec;     /* per second of the run (--json series) */
};

/* The run: the scenario and the options (cfqsim-main.c). */
struct sim_cfg {
  const struct cfg_model *m;
  const char *file;             /* the scenario, for FILE:LINE messages */
  uint64_t duration;            /* ns */
  uint64_t seed;
  unsigned queue_depth;         /* max requests at the device */
  const char *policy;           /* the scheduler's name */
  const char *test_policy;      /* --sched NAME of sim_extra_scheds, or NULL */

  struct sim_group *groups;     /* m->nr_groups */
  unsigned ngroups;
  struct job **jobs;            /* every connection of every tenant */
  unsigned njobs;
  bool *tenant_on;              /* m->nr_tenants: selected by --only */

  bool json;
  bool trace;                   /* --trace: the policy's decisions */
  const char *only;             /* comma-separated tenant names, or NULL */
  uint64_t window;              /* ns: --window width; 0 = no windows */
  struct series win;            /* the --window series (cfqsim-series.c) */
  struct series sec;            /* the per-second series */
  unsigned events_applied;      /* [event]s that took effect */
};
extern struct sim_cfg cfg;

/* The simulation's state (cfqsim-loop.c). */
struct sim_state {
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
};
extern struct sim_state sim;

/* Policies beyond core's (sched_lookup), NULL-terminated: none in the
 * tool (cfqsim-scheds.c).  The test build (tests/sim/cfqsim-broken) links
 * tests/sim/broken-scheds.c instead, whose deliberately broken policies
 * check the watchdog.
 */
extern const struct sched_ops *const sim_extra_scheds[];

/* cfqsim-main.c */
extern const char *progname;
void die_at (const char *where, const char *fmt, ...)
  __attribute__ ((noreturn, format (printf, 2, 3)));
void die_tenant (const struct cfg_tenant *t, const char *fmt, ...)
  __attribute__ ((noreturn, format (printf, 2, 3)));
void *xcalloc (size_t n, size_t size);
const struct sched_ops *lookup_policy (const char *name);

/* cfqsim-scenario.c */
void sim_select_only (void);
void sim_setup (void);

/* cfqsim-loop.c */
void fmt_time (char *buf, size_t n, uint64_t ns);
void sim_run (void);

/* cfqsim-series.c */
void series_init (struct series *s, uint64_t width, uint64_t duration,
                  bool clamp_end);
void series_counts_init (const struct series *s, struct series_counts *c);
void series_counts_free (const struct series *s, struct series_counts *c);
void series_add (const struct series *s, struct series_counts *c,
                 uint64_t now, uint64_t len, uint64_t lat);
void series_sum (const struct series *s, struct series_counts *to,
                 const struct series_counts *from);
void series_json (const struct series *s, const uint64_t *v);

/* cfqsim-report.c */
void sim_print_models (void);
void sim_report (void);

#endif /* CFQ_TOOLS_CFQSIM_H */
