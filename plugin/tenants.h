/* tenants.h: many tenants on one device: the configuration model in the
 * plugin, and the engine's hooks that keep per-tenant accounting.
 *
 * plugin.c (the nbdkit edge) hands every key=value it does not handle
 * itself to tn_config(); .config_complete calls tn_validate() once the
 * device's size is known; .after_fork passes the engine's hooks
 * (hooks.c) to the engine, whose dispatcher thread then runs every hook
 * (groups, tunables, accounting, stats, control commands), so nothing
 * here takes a lock.  hooks.c calls the tn_start..tn_stop below;
 * statsout.c and ctlcmd.c read and change the live state (tn_live).
 * Nothing here calls them: the calls go one way, from the hooks down.
 *
 * Threads: tn_config..tn_prepare run on nbdkit's main thread before the
 * dispatcher starts; the model is read-only afterwards and read by every
 * thread; tn_conn_new/tn_conn_free run on nbdkit's workers and touch only
 * the new connection and the atomic connection counts ([atomic]);
 * everything else belongs to the dispatcher ([disp]).
 */
#ifndef CFQ_TENANTS_H
#define CFQ_TENANTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "control.h"
#include "engine.h"
#include "iostat.h"
#include "list.h"

struct control;
struct devmodel;

/* ---- for plugin.c ----------------------------------------------------------- */

struct tn_conn;

/* Plugin parameters: 1 handled, 0 not ours, -1 error (already reported). */
extern int tn_config (const char *key, const char *value);
/* Pass a plugin key (file, scheduler, queue_depth) on to the model too. */
extern int tn_override (const char *key, const char *value);
/* The device file from config= or file=, or NULL. */
extern const char *tn_device_file (void);

/* Build the model for a device of size bytes (errors: nbdkit_error each).
 * 0 or -1.
 */
extern int tn_validate (uint64_t size);
extern const struct cfg_model *tn_model (void);
/* Report the errors found so far (when the device cannot be opened and
 * tn_validate will not run).
 */
extern void tn_report_errors (void);

/* After tn_validate: the scheduler to use: scheduler= if given, else the
 * config file's, else cfq (the model's default, with or without config=).
 */
extern const char *tn_sched_name (void);

/* In get_ready, once the files are open: the device model (emulate=)
 * with its capacity, the rotational flag (from the model, or sysfs for
 * st_dev/st_rdev of the served file), the cost model (costmodel.c: the
 * device measured if so, BACKEND the I/O backend's name), and last the
 * control socket bound (control=), before nbdkit changes user or forks.
 * 0 or -1.
 */
extern int tn_prepare (const char *sched_name, const char *backend,
                       uint64_t size, dev_t dev);

/* The group, class and level of a connection to export i. */
extern void tn_qspec (size_t i, struct engine_qspec *spec);

/* Admit a connection to export i and make its accounting (creq->acct):
 * 0, -EUSERS when [device] or the export's max_connections is reached
 * (logged here, through tn_refusal), or -ENOMEM.
 */
extern int tn_conn_new (size_t export_index, struct tn_conn **cp);
/* Forget it (it leaves the counts). */
extern void tn_conn_free (struct tn_conn *c);

/* Log why a client was refused (nbdkit_error), unless too many such
 * lines were logged of late (loglimit.h): then it is counted, and the
 * count said by the next line or at the next one-second tick.  Any
 * thread.
 */
extern void tn_refusal (const char *fmt, ...)
  __attribute__ ((format (printf, 1, 2)));

extern void tn_unload (void);

/* ---- for hooks.c: the engine's hooks, on the dispatcher --------------------- */

/* The scheduler s of engine e is made: its groups, tunables and cost
 * model from the config, the iostats started.  0 or -errno (reported).
 */
extern int tn_start (struct engine *e, struct sched *s);
/* Every second: the iostats' rates, the refusals not yet logged. */
extern void tn_tick (uint64_t now);
/* A connection's queue was made (open) or freed; acct is its tn_conn. */
extern void tn_conn_hook (void *acct, bool open);
/* Request r finished with res (0 or -errno): its iostats. */
extern void tn_done (struct creq *r, int res, uint64_t now);
/* -D cfq.policy=1: one debug line for a call into the policy. */
extern void tn_policy_log (enum engine_call call, struct creq *r,
                           uint64_t now);
/* The engine stops: the iostats go. */
extern void tn_stop (void);

/* ---- the live state, for statsout.c and ctlcmd.c ---------------------------- */

struct tn_group {
  const struct cfg_group *cg;   /* the model's */
  struct sched_group *sg;       /* the scheduler's, made in setup */
  unsigned weight;              /* 100..1000, as last set */
  struct qos_conf qos;          /* caps and reservation, as last set */
  struct lat_conf lat;          /* latency target and boost, as last set */
  bool lat_unmet;               /* the target was unmet at the last tick */
  struct iostat io;             /* [disp] */
};

struct tn_export {
  const struct cfg_export *ce;  /* the model's */
  struct iostat io;             /* [disp] */
  unsigned nconns;              /* [atomic] clients connected */
  uint64_t refused;             /* [atomic] clients refused: its limit */
};

struct tn_conn {
  struct list link;             /* [disp] on tenants.conns while open */
  uint64_t id;                  /* 1, 2, ... in order of opening */
  size_t exp;                   /* index into tenants.exports */
  struct iostat io;             /* [disp] */
};

struct tenants {
  /* main thread, then read-only */
  struct cfg *cfg;
  bool have_config;
  const struct cfg_model *m;
  struct tn_group *groups;      /* m->nr_groups */
  struct tn_export *exports;    /* m->nr_exports */
  char *control_path;           /* control=PATH or NULL */
  struct control_opts ctl_opts; /* control_mode= ... */
  char *stats_path;             /* stats=FILE or NULL */
  char *metrics_path;           /* metrics=FILE or NULL */
  const char *sched_name;       /* the scheduler in use */
  struct devmodel *dm;          /* emulate=, or NULL */
  int rotational;               /* -1 unknown, 0, 1 */

  /* dispatcher thread */
  struct engine *e;             /* from the setup hook to teardown */
  struct sched *s;
  struct control *ctl;
  struct list conns;            /* open connections */
  struct iostat total;          /* everything */
  uint64_t next_id;             /* atomic: connection ids */
  unsigned nconns;              /* [atomic] clients connected */
  uint64_t refused;             /* [atomic] clients refused: the total */
};

/* The live state (one per process). */
extern struct tenants *tn_live (void);
/* How groups are charged now, by name ("auto", "time", "iops"): the
 * policy's mode if it has one, else the config's [device] mode.  Written
 * into buf (or a static string) and returned.
 */
extern const char *tn_mode_name (const struct tenants *tn, char *buf,
                                 size_t len);
/* Call fn on every iostat: groups, exports, connections, the total. */
extern void tn_each_iostat (struct tenants *tn,
                            void (*fn) (struct iostat *, uint64_t),
                            uint64_t now);

#endif /* CFQ_TENANTS_H */
