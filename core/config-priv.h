/* config-priv.h: what the core/config*.c files share, and nobody else.
 *
 * The config reader is one object, struct cfg, filled in two layers (the
 * file, the command line) and checked into a struct cfg_model
 * (include/config.h).  Its files, by job:
 *   config.c         the reader: sections, keys, values, the two layers,
 *                    cfg_validate's order, life
 *   config-diag.c    what the others share: key and value names, errors
 *                    and warnings, value syntax, misplaced-key hints
 *   config-server.c  the server's model: [group], [export], allow lists,
 *                    regions on the device, the device model's parameters
 *   config-sim.c     the lab and the simulator: [tenant], [sim], [event]
 *   config-qos.c     caps and reservations of [group]
 * This header has the state (struct cfg and the x* records of sections
 * as read), the sections' and global keys' enums, and the functions and
 * tables one file uses from another.
 */
#ifndef CFQ_CONFIG_PRIV_H
#define CFQ_CONFIG_PRIV_H

#include <arpa/inet.h>
#include <errno.h>
#include <ini.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "cfq.h"
#include "config.h"
#include "devmodel.h"
#include "utf8.h"
#include "latency.h"
#include "qos.h"
#include "rng.h"
#include "units.h"

/* ---- sections and keys ------------------------------------------------- */

enum sec {
  SEC_NONE = 0,                 /* before the first header */
  SEC_SKIP,                     /* in a bad section: its keys are ignored */
  SEC_DEVICE,
  SEC_SCHED,
  SEC_GROUP,
  SEC_EXPORT,
  SEC_TENANT,
  SEC_SIM,
  SEC_EVENT,
  SEC_OLDJOB,                   /* cfqsim's old [job NAME]: hints only */
};

/* Device and scheduler keys ("global" keys): the fixed ones, then one per
 * tunable at GK_TUNABLE + i.  These are the keys overrides may set.
 */
enum {
  GK_FILE = 0,
  GK_QUEUE_DEPTH,
  GK_MODE,
  GK_EMULATE,
  GK_MAX_CONNS,
  GK_CACHE,
  GK_BUFFER_POOL,
  GK_MEMORY,
  GK_REPLY_TIMEOUT,
  GK_CALIBRATE,
  GK_CALIBRATION,               /* a path, as GK_FILE */
  GK_COST_MODEL,                /* text, checked by cost_params_parse */
  GK_SCHEDULER,                 /* the first [scheduler] key */
  GK_TUNABLE,
};

#define NR_GKEYS (GK_TUNABLE + cfq_nr_tunables)

/* ---- the state ----------------------------------------------------------- */

/* One global key's two layers. */
struct gval {
  unsigned line;                /* of the key in the file; 0 = not there */
  bool cmd_set;                 /* given on the command line */
  uint64_t file_v, cmd_v;       /* number, enum index or tunable value */
  char *file_s, *cmd_s;         /* string keys (file, calibration,
                                   cost_model) */
};

/* A model.* parameter in one layer. */
struct xparam {
  char *key, *value;
  unsigned line;                /* 0 on the command line */
};

struct xgroup {
  char *name;
  unsigned weight, prio;
  enum sched_class cls;
  struct qos_conf qos;          /* caps and reservation */
  struct lat_conf lat;          /* latency target and boost */
  unsigned line;                /* of the header */
  bool global;                  /* scope = global */
  unsigned l_weight, l_class, l_prio, l_scope; /* of each key; 0 = defaulted */
  unsigned l_qos[QOS_NR_KEYS];  /* of each qos_keys[] key; 0 = not given */
  unsigned l_lat[LAT_NR_KEYS];  /* of each lat_keys[] key; 0 = not given */
};

struct xexport {
  char *name;
  char *group;                  /* group= as written, or NULL */
  char *file;                   /* resolved against the config's dir */
  uint64_t offset, size;        /* bytes, as written */
  bool readonly, writes_sync, writes_async;
  bool tls_required;            /* tls = require */
  unsigned max_conns;           /* max_connections, 0: not given */
  bool bad_region;              /* offset= or size= was refused */
  struct cfg_net *allow;
  size_t nr_allow;
  unsigned line;                /* of the header */
  unsigned l_group, l_file, l_offset, l_size, l_readonly, l_writes, l_allow;
  unsigned l_tls, l_max_conns;
};

/* A [tenant NAME]: a workload, fio's way (core/config.h). */
struct xtenant {
  char *name;
  char *export;                 /* export= as written, or NULL: "" */
  struct cfg_tenant t;          /* the values; export, cls, prio resolved
                                   by cfg_validate */
  unsigned rwmix;                /* rwmixread= as given */
  bool rwmix_given;
  bool bad;                     /* a value was refused: skip checks */
  unsigned line;                /* of the header */
  unsigned l_export, l_connections, l_rw, l_rwmixread, l_bs, l_iodepth,
    l_thinktime, l_thinktime_blocks, l_number_ios, l_rate_iops, l_rate,
    l_fsync, l_offset, l_size, l_start, l_stop, l_class, l_prio, l_workload;
};

/* An [event NAME]: a control command at a time (core/config.h). */
struct xevent {
  char *name;
  char *command;                /* as written, quotes removed */
  uint64_t at;
  unsigned line;                /* of the header */
  unsigned l_at, l_command;
};

struct cfg {
  cfg_report_fn report;
  void *opaque;
  bool oom;                     /* an allocation failed: -ENOMEM from now */

  char **errors;                /* "FILE:LINE: message" */
  size_t nr_errors;
  char **warnings;              /* "FILE:LINE: warning: message" */
  size_t nr_warnings;
  const char *const *extra_keys;  /* the caller's own KEY=VALUE names, for
                                     "did you mean"; NULL-terminated */

  /* What the file and the command line said. */
  char *filename;               /* NULL until cfg_parse */
  char *dir;                    /* of filename, with '/', or "" */
  unsigned l_device, l_sched;   /* section header lines; 0 = absent */
  struct gval *gv;              /* [NR_GKEYS] */
  struct xparam *fparams, *cparams; /* model.* in the file / command line */
  size_t nr_fparams, nr_cparams;
  struct xgroup *groups;
  size_t nr_groups;
  struct xexport *exports;
  size_t nr_exports;
  struct xtenant *tenants;
  size_t nr_tenants;
  struct xevent *events;
  size_t nr_events;
  unsigned l_sim, l_duration, l_seed; /* [sim] and its keys */
  uint64_t duration, seed;
  bool simulated;               /* cfg_simulate(): the device is a model */

  /* Parser position (cfg_parse only). */
  unsigned lineno;              /* current physical line */
  enum sec cur;                 /* current section */
  size_t cur_idx;               /* its group or export index */

  /* The model, built by cfg_validate. */
  bool valid;
  struct cfg_model m;
  struct cfg_tunable *m_tunables;
  struct cfg_group *m_groups;
  struct cfg_export *m_exports;
  struct cfg_param *m_params;
  struct cfg_tenant *m_tenants;
  struct cfg_event *m_events;
  struct xexport *implicit;     /* the export "" made without a file */
};

/* ---- shared between the config*.c files ---------------------------------- */

/* Each file calls only those listed below its own (make lint checks it):
 * config.c (the reader, nothing shared), then config-sim.c,
 * config-server.c, config-qos.c, config-diag.c.
 */

/* config-diag.c: names, errors, value syntax, misplaced keys.  Called by
 * every other config*.c file; calls none of them.
 */
extern const char *const tls_names[];
extern const char *const writes_names[];
extern const char *const sched_names[];
extern const char *const gk_names[GK_TUNABLE];
/* A string-valued global key (file, calibration, cost_model): kept as
 * text; gtext gives its value, the command line's else the file's.
 */
extern bool gkey_is_text (int k);
extern const char *gtext (const struct cfg *cfg, int k);
bool tunable_is_key (size_t i);
int gkey_lookup (const char *name);
enum sec gkey_sec (int k);
int name_index (const char *const *names, const char *s);
void add_error (struct cfg *cfg, const char *file, unsigned line,
                const char *fmt, va_list ap)
  __attribute__ ((format (printf, 4, 0)));
void fwarn (struct cfg *cfg, unsigned line, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
void ferr (struct cfg *cfg, unsigned line, const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
void cerr (struct cfg *cfg, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
const char *one_of (const char *const *names, char *buf, size_t len);
int parse_max_conns (const char *value, uint64_t *v, char *why, size_t len);
int parse_gvalue (int k, const char *value, uint64_t *v, char *why,
                  size_t len);
char *xstrdup (struct cfg *cfg, const char *s);
char *file_path (struct cfg *cfg, const char *value);
struct suggest;
void sec_suggest (struct suggest *s, enum sec sec);
void unknown_key (struct cfg *cfg, enum sec sec, const char *key,
                  const char *secname);
void bad_key (struct cfg *cfg, enum sec sec, const char *key,
              const char *secname);
bool first_time (struct cfg *cfg, unsigned *l, const char *key);

/* config-server.c */
void set_group_key (struct cfg *cfg, struct xgroup *g, const char *key,
                    const char *value);
bool group_name_ok (const char *s);
void set_export_key (struct cfg *cfg, struct xexport *e, const char *key,
                     const char *value);
unsigned blame_t (const struct xtenant *x, unsigned l);
char *format_region (uint64_t off, uint64_t size, char *buf, size_t len);
void resolve_groups (struct cfg *cfg, struct xexport *xs, size_t nr);
void check_regions (struct cfg *cfg, const struct xexport *xs, size_t nr,
                    uint64_t devsize, bool *ok);
int check_model_params (struct cfg *cfg, const struct xparam *const *src,
                        size_t np, uint64_t *capacity);

/* config-sim.c */
void set_sim_key (struct cfg *cfg, const char *key, const char *value);
void set_tenant_key (struct cfg *cfg, struct xtenant *x, const char *key,
                     const char *value);
void set_event_key (struct cfg *cfg, struct xevent *x, const char *key,
                    const char *value);
void check_tenants (struct cfg *cfg, const bool *ok);
void check_workloads (struct cfg *cfg);
void check_events (struct cfg *cfg);

/* config-qos.c */
void check_qos (struct cfg *cfg);
void check_latency (struct cfg *cfg);

#endif /* CFQ_CONFIG_PRIV_H */
