/* tenants.c: the model of tenants in the server, their accounting, and
 * the control socket's commands (see tenants.h).
 *
 * What it decides.  The configuration model (core/config.c) says which
 * groups share the disk and in what proportion, and which exports belong
 * to which group.  Here that model becomes live state: one scheduler group
 * per [group] with its weight, the tunables applied, one iostat per group,
 * export and connection, fed by the dispatcher on every completion.  The
 * same dispatcher serves the control socket, so "weight gold 800" or
 * "set slice_idle 0" changes the scheduler between two dispatch decisions
 * without a lock, and "stats" reads counters nobody else is writing.
 *
 * Rates are per second: a one-second ev_timer ticks every iostat.  A
 * group's or export's share is its bytes over the last second as a
 * percentage of all groups' (exports') bytes in that second, or of the
 * totals since start (or reset) when nothing moved in the last second.
 *
 * The rotational flag (which decides CFQ's seek logic and, with mode=auto,
 * whether groups are charged by time or by requests) comes from the device
 * model when emulating, else from sysfs for the block device that holds
 * the file (the parent disk for a partition).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "cfq.h"
#include "control.h"
#include "devmodel.h"
#include "iostat.h"
#include "list.h"
#include "qos.h"
#include "tenants.h"

/* -D cfq.trace=1: log every scheduling decision of the CFQ core. */
NBDKIT_DLL_PUBLIC int cfq_debug_trace;

struct tn_group {
  const struct cfg_group *cg;   /* the model's */
  struct sched_group *sg;       /* the scheduler's, made in setup */
  unsigned weight;              /* 100..1000, as last set */
  struct iostat io;             /* [disp] */
};

struct tn_export {
  const struct cfg_export *ce;  /* the model's */
  struct iostat io;             /* [disp] */
};

struct tn_conn {
  struct list link;             /* [disp] on tn.conns while open */
  uint64_t id;                  /* 1, 2, ... in order of opening */
  size_t exp;                   /* index into tn.exports */
  struct iostat io;             /* [disp] */
};

static struct {
  /* main thread, then read-only */
  struct cfg *cfg;
  bool have_config;
  const struct cfg_model *m;
  struct tn_group *groups;      /* m->nr_groups */
  struct tn_export *exports;    /* m->nr_exports */
  char *control_path;           /* control=PATH or NULL */
  char *stats_path;             /* stats=FILE or NULL */
  const char *sched_name;       /* the scheduler in use */
  struct devmodel *dm;          /* emulate=, or NULL */
  int rotational;               /* -1 unknown, 0, 1 */

  /* dispatcher thread */
  struct sched *s;
  struct ev_loop *loop;
  ev_timer tick;                /* every second: iostat_tick */
  struct control *ctl;
  struct list conns;            /* open connections */
  struct iostat total;          /* everything */
  uint64_t next_id;             /* atomic: connection ids */
} tn = { .rotational = -1, .conns = LIST_INIT (tn.conns) };

/* ---- configuration (main thread) ------------------------------------------ */

static int
ensure_cfg (void)
{
  if (!tn.cfg) {
    tn.cfg = cfg_new (NULL, NULL);
    if (!tn.cfg) {
      nbdkit_error ("cfq: cfg_new: %m");
      return -1;
    }
  }
  return 0;
}

static void
report_last (void)
{
  size_t n = cfg_nr_errors (tn.cfg);

  if (n)
    nbdkit_error ("%s", cfg_error (tn.cfg, n - 1));
}

int
tn_override (const char *key, const char *value)
{
  int err;

  if (ensure_cfg () == -1)
    return -1;
  err = cfg_set_override (tn.cfg, key, value);
  if (err == -ENOMEM) {
    nbdkit_error ("cfq: %s: out of memory", key);
    return -1;
  }
  if (err) {
    report_last ();
    return -1;
  }
  return 0;
}

static int
load_file (const char *path)
{
  FILE *f;
  char *text = NULL;
  size_t len = 0, cap = 0;
  int err;

  if (tn.have_config) {
    nbdkit_error ("cfq: config=%s: only one config file may be given", path);
    return -1;
  }
  f = fopen (path, "re");
  if (!f) {
    nbdkit_error ("cfq: config=%s: %m", path);
    return -1;
  }
  for (;;) {
    size_t n;

    if (cap - len < 4096) {
      char *t = realloc (text, cap = cap ? cap * 2 : 8192);
      if (!t) {
        nbdkit_error ("cfq: config=%s: %m", path);
        free (text);
        fclose (f);
        return -1;
      }
      text = t;
    }
    n = fread (text + len, 1, cap - len, f);
    len += n;
    if (n == 0)
      break;
  }
  if (ferror (f)) {
    nbdkit_error ("cfq: config=%s: read error", path);
    free (text);
    fclose (f);
    return -1;
  }
  fclose (f);
  err = cfg_parse (tn.cfg, path, text, len);
  free (text);
  if (err == -ENOMEM) {
    nbdkit_error ("cfq: config=%s: out of memory", path);
    return -1;
  }
  tn.have_config = true;
  return 0;           /* errors are reported in .config_complete, all of them */
}

static int
set_path (char **p, const char *key, const char *value)
{
  char *s = strdup (value);

  if (!s) {
    nbdkit_error ("cfq: %s: strdup: %m", key);
    return -1;
  }
  free (*p);
  *p = s;
  return 0;
}

int
tn_config (const char *key, const char *value)
{
  if (ensure_cfg () == -1)
    return -1;
  if (strcmp (key, "config") == 0)
    return load_file (value) == -1 ? -1 : 1;
  if (strcmp (key, "control") == 0)
    return set_path (&tn.control_path, key, value) == -1 ? -1 : 1;
  if (strcmp (key, "stats") == 0)
    return set_path (&tn.stats_path, key, value) == -1 ? -1 : 1;
  return tn_override (key, value) == -1 ? -1 : 1;
}

bool
tn_have_config (void)
{
  return tn.have_config;
}

const char *
tn_device_file (void)
{
  return tn.cfg ? cfg_device_file (tn.cfg) : NULL;
}

int
tn_validate (uint64_t size)
{
  int err;

  if (ensure_cfg () == -1)
    return -1;
  err = cfg_validate (tn.cfg, size);
  if (err == -ENOMEM) {
    nbdkit_error ("cfq: configuration: out of memory");
    return -1;
  }
  if (err) {
    for (size_t i = 0; i < cfg_nr_errors (tn.cfg); i++)
      nbdkit_error ("%s", cfg_error (tn.cfg, i));
    return -1;
  }
  /* Accepted, but not all of it can work (reservations beyond what the
   * emulated device gives): said once, at start.
   */
  for (size_t i = 0; i < cfg_nr_warnings (tn.cfg); i++)
    nbdkit_error ("%s", cfg_warning (tn.cfg, i));
  tn.m = cfg_model (tn.cfg);
  tn.groups = calloc (tn.m->nr_groups, sizeof *tn.groups);
  tn.exports = calloc (tn.m->nr_exports, sizeof *tn.exports);
  if (!tn.groups || !tn.exports) {
    nbdkit_error ("cfq: calloc: %m");
    return -1;
  }
  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    tn.groups[i].cg = &tn.m->groups[i];
    tn.groups[i].weight = tn.m->groups[i].weight;
  }
  for (size_t i = 0; i < tn.m->nr_exports; i++)
    tn.exports[i].ce = &tn.m->exports[i];
  return 0;
}

void
tn_report_errors (void)
{
  if (tn.cfg)
    for (size_t i = 0; i < cfg_nr_errors (tn.cfg); i++)
      nbdkit_error ("%s", cfg_error (tn.cfg, i));
}

const struct cfg_model *
tn_model (void)
{
  return tn.m;
}

const char *
tn_sched_name (const char *cmdline)
{
  if (cmdline)
    return cmdline;
  if (tn.have_config && tn.m)
    return tn.m->scheduler;
  return "fifo";
}

/* /sys/dev/block/MAJ:MIN/queue/rotational, or the parent's for a
 * partition; -1 if there is none (tmpfs, overlay ...).
 */
static int
sysfs_rotational (dev_t dev)
{
  char path[128];
  FILE *f;
  int v = -1;

  snprintf (path, sizeof path, "/sys/dev/block/%u:%u/queue/rotational",
            major (dev), minor (dev));
  f = fopen (path, "re");
  if (!f) {
    snprintf (path, sizeof path, "/sys/dev/block/%u:%u/../queue/rotational",
              major (dev), minor (dev));
    f = fopen (path, "re");
  }
  if (f) {
    if (fscanf (f, "%d", &v) != 1)
      v = -1;
    fclose (f);
  }
  return v;
}

static const char *const emulate_names[] = { "none", "hdd", "ssd" };
static const char *const mode_names[] = { "auto", "time", "iops" };
static const char *const class_names[] = { "", "rt", "be", "idle" };

int
tn_prepare (const char *sched_name, uint64_t size, dev_t dev)
{
  const struct cfg_device *d = &tn.m->dev;
  int err = 0;

  tn.sched_name = sched_name;
  if (d->emulate != CFG_EMULATE_NONE) {
    char cap[32];

    tn.dm = devmodel_new (emulate_names[d->emulate], &err);
    if (!tn.dm) {
      nbdkit_error ("cfq: emulate=%s: %s", emulate_names[d->emulate],
                    strerror (-err));
      return -1;
    }
    for (size_t i = 0; i < d->nr_model; i++) {
      err = devmodel_set (tn.dm, d->model[i].key, d->model[i].value);
      if (err) {
        nbdkit_error ("cfq: model.%s=%s: %s", d->model[i].key,
                      d->model[i].value, strerror (-err));
        return -1;
      }
    }
    snprintf (cap, sizeof cap, "%" PRIu64, size ? size : 1);
    err = devmodel_set (tn.dm, "capacity", cap);
    if (err && err != -ENOENT)
      nbdkit_debug ("cfq: device model: capacity=%s: %s", cap,
                    strerror (-err));
    tn.rotational = devmodel_rotational (tn.dm);
  }
  else
    tn.rotational = sysfs_rotational (dev);
  {
    char buf[256] = "";

    if (tn.dm)
      devmodel_describe (tn.dm, buf, sizeof buf);
    nbdkit_debug ("cfq: scheduler=%s mode=%s rotational=%d emulate=%s %s",
                  sched_name, mode_names[d->mode], tn.rotational,
                  emulate_names[d->emulate], buf);
  }
  return 0;
}

void
tn_qspec (size_t i, struct engine_qspec *spec)
{
  const struct tn_group *g = &tn.groups[tn.m->exports[i].group];

  spec->grp = g->sg;
  spec->cls = g->cg->cls;
  spec->level = g->cg->prio;
}

struct tn_conn *
tn_conn_new (size_t export_index)
{
  struct tn_conn *c = calloc (1, sizeof *c);

  if (!c)
    return NULL;
  c->id = __atomic_add_fetch (&tn.next_id, 1, __ATOMIC_RELAXED);
  c->exp = export_index;
  iostat_init (&c->io, engine_now ());
  return c;
}

void
tn_conn_free (struct tn_conn *c)
{
  free (c);
}

void
tn_unload (void)
{
  if (tn.dm)
    devmodel_free (tn.dm);
  tn.dm = NULL;
  free (tn.groups);
  free (tn.exports);
  tn.groups = NULL;
  tn.exports = NULL;
  if (tn.cfg)
    cfg_free (tn.cfg);
  tn.cfg = NULL;
  tn.m = NULL;
  free (tn.control_path);
  free (tn.stats_path);
}

/* ---- the dispatcher's side --------------------------------------------------- */

static bool
is_cfq (void)
{
  return tn.s && tn.s->ops == &cfq_ops;
}

static void
each_iostat (void (*fn) (struct iostat *, uint64_t), uint64_t now)
{
  struct list *p;

  for (size_t i = 0; i < tn.m->nr_groups; i++)
    fn (&tn.groups[i].io, now);
  for (size_t i = 0; i < tn.m->nr_exports; i++)
    fn (&tn.exports[i].io, now);
  list_for_each (p, &tn.conns)
    fn (&list_entry (p, struct tn_conn, link)->io, now);
  fn (&tn.total, now);
}

static void
tick_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  each_iostat (iostat_tick, engine_now ());
}

static void
trace_fn (void *opaque, const char *msg)
{
  if (cfq_debug_trace)
    nbdkit_debug ("cfq.trace: %s", msg);
}

static void control_cmd (void *opaque, const char *line, struct strbuf *out);

static int
hook_setup (void *opaque, struct sched *s, struct ev_loop *loop)
{
  const struct cfg_model *m = tn.m;
  uint64_t now = engine_now ();
  int err;

  tn.s = s;
  tn.loop = loop;
  for (size_t i = 0; i < m->nr_groups; i++) {
    tn.groups[i].sg = sched_group_new (s, m->groups[i].name,
                                       m->groups[i].weight);
    if (!tn.groups[i].sg) {
      nbdkit_error ("cfq: group %s: cannot create it (weight %u)",
                    m->groups[i].name, m->groups[i].weight);
      return -ENOMEM;
    }
    if (!qos_conf_empty (&m->groups[i].qos)) {
      err = sched_group_set_qos (s, tn.groups[i].sg, &m->groups[i].qos);
      if (err) {
        nbdkit_error ("cfq: group %s: caps and reservation: %s",
                      m->groups[i].name, strerror (-err));
        return err;
      }
    }
  }
  if (is_cfq ()) {
    bool rot_given = false, mode_given = false;

    for (size_t i = 0; i < m->nr_tunables; i++) {
      err = sched_set (s, m->tunables[i].name, m->tunables[i].val);
      if (err) {
        nbdkit_error ("cfq: %s=%" PRIu64 ": %s", m->tunables[i].name,
                      m->tunables[i].val, strerror (-err));
        return err;
      }
      if (strcmp (m->tunables[i].name, "rotational") == 0)
        rot_given = true;
      if (strcmp (m->tunables[i].name, "mode") == 0)
        mode_given = true;
    }
    /* The device's nature, unless the config says otherwise. */
    if (!rot_given && tn.rotational >= 0)
      sched_set (s, "rotational", (uint64_t) tn.rotational);
    /* mode=auto on flash: charge by requests. */
    if (m->dev.mode == CFG_MODE_AUTO && tn.rotational == 0)
      sched_set (s, "mode", CFQ_MODE_IOPS);
    (void) mode_given;
    /* nbdkit sets -D flags when it loads the plugin, before this. */
    if (cfq_debug_trace)
      cfq_set_trace (s, trace_fn, NULL);
  }
  each_iostat (iostat_init, now);
  ev_timer_init (&tn.tick, tick_cb, 1., 1.);
  ev_timer_start (loop, &tn.tick);
  ev_unref (loop);              /* the tick alone does not keep it running */
  if (tn.control_path) {
    tn.ctl = control_start (loop, tn.control_path, control_cmd, NULL, &err);
    if (!tn.ctl) {
      nbdkit_error ("cfq: control=%s: %s", tn.control_path, strerror (-err));
      return err;
    }
  }
  return 0;
}

static void write_stats_file (void);

static void
hook_teardown (void *opaque)
{
  if (tn.stats_path)
    write_stats_file ();
  if (tn.ctl)
    control_stop (tn.ctl);
  tn.ctl = NULL;
  ev_ref (tn.loop);
  ev_timer_stop (tn.loop, &tn.tick);
  tn.s = NULL;
}

static void
hook_conn (void *opaque, void *acct, bool open)
{
  struct tn_conn *c = acct;

  if (open) {
    iostat_init (&c->io, engine_now ());
    list_add_tail (&c->link, &tn.conns);
  }
  else
    list_del (&c->link);
}

static void
hook_done (void *opaque, struct creq *r, int res, uint64_t now)
{
  struct tn_conn *c = r->acct;

  if (!c)
    return;
  iostat_done (&c->io, &r->rq, now, res);
  iostat_done (&tn.exports[c->exp].io, &r->rq, now, res);
  iostat_done (&tn.groups[tn.m->exports[c->exp].group].io, &r->rq, now, res);
  iostat_done (&tn.total, &r->rq, now, res);
}

static const struct engine_hooks hooks = {
  .setup = hook_setup,
  .teardown = hook_teardown,
  .conn = hook_conn,
  .done = hook_done,
};

void
tn_engine_cfg (struct engine_cfg *cfg)
{
  cfg->dm = tn.dm;
  cfg->hooks = &hooks;
  cfg->opaque = NULL;
}

/* ---- statistics ------------------------------------------------------------------ */

static const char *const op_names[IOSTAT_OPS] = {
  "read", "write", "flush", "trim", "zero",
};

static double
ms (uint64_t ns)
{
  return (double) ns / 1e6;
}

static void
json_str (struct strbuf *o, const char *s)
{
  strbuf_printf (o, "\"");
  for (; *s; s++) {
    unsigned char c = (unsigned char) *s;

    if (c == '"' || c == '\\')
      strbuf_printf (o, "\\%c", c);
    else if (c < 0x20)
      strbuf_printf (o, "\\u%04x", c);
    else
      strbuf_printf (o, "%c", c);
  }
  strbuf_printf (o, "\"");
}

/* The iostat fields shared by groups, exports and connections. */
static void
json_iostat (struct strbuf *o, const struct iostat *io, uint64_t now,
             double share)
{
  strbuf_printf (o, "\"requests\":{");
  for (unsigned i = 0; i < IOSTAT_OPS; i++)
    strbuf_printf (o, "%s\"%s\":%" PRIu64, i ? "," : "", op_names[i],
                   io->reqs[i]);
  strbuf_printf (o, "},\"bytes\":{");
  for (unsigned i = 0; i < IOSTAT_OPS; i++)
    strbuf_printf (o, "%s\"%s\":%" PRIu64, i ? "," : "", op_names[i],
                   io->bytes[i]);
  strbuf_printf (o, "},\"errors\":%" PRIu64, io->errors);
  strbuf_printf (o, ",\"iops\":%.1f,\"mibs\":%.3f,\"avg_iops\":%.1f,"
                 "\"avg_mibs\":%.3f,\"share\":%.1f",
                 io->iops, io->bps / 1048576., iostat_avg_iops (io, now),
                 iostat_avg_bps (io, now) / 1048576., share);
  strbuf_printf (o, ",\"lat\":{\"p50_ms\":%.3f,\"p99_ms\":%.3f,"
                 "\"p999_ms\":%.3f,\"max_ms\":%.3f,\"mean_ms\":%.3f}",
                 ms (hist_quantile (&io->lat, .5)),
                 ms (hist_quantile (&io->lat, .99)),
                 ms (hist_quantile (&io->lat, .999)),
                 ms (io->lat.max), ms (hist_mean (&io->lat)));
  strbuf_printf (o, ",\"q_p50_ms\":%.3f,\"q_p99_ms\":%.3f,"
                 "\"d_p50_ms\":%.3f,\"d_p99_ms\":%.3f",
                 ms (hist_quantile (&io->qlat, .5)),
                 ms (hist_quantile (&io->qlat, .99)),
                 ms (hist_quantile (&io->dlat, .5)),
                 ms (hist_quantile (&io->dlat, .99)));
}

static void
flat_iostat (struct strbuf *o, const struct iostat *io, uint64_t now,
             double share)
{
  strbuf_printf (o, " iops=%.1f mibs=%.3f share=%.1f p50_ms=%.3f "
                 "p99_ms=%.3f p999_ms=%.3f max_ms=%.3f avg_iops=%.1f "
                 "avg_mibs=%.3f q_p50_ms=%.3f q_p99_ms=%.3f d_p50_ms=%.3f "
                 "d_p99_ms=%.3f reads=%" PRIu64 " writes=%" PRIu64
                 " flushes=%" PRIu64 " trims=%" PRIu64 " zeroes=%" PRIu64
                 " bytes=%" PRIu64 " errors=%" PRIu64,
                 io->iops, io->bps / 1048576., share,
                 ms (hist_quantile (&io->lat, .5)),
                 ms (hist_quantile (&io->lat, .99)),
                 ms (hist_quantile (&io->lat, .999)), ms (io->lat.max),
                 iostat_avg_iops (io, now), iostat_avg_bps (io, now) / 1048576.,
                 ms (hist_quantile (&io->qlat, .5)),
                 ms (hist_quantile (&io->qlat, .99)),
                 ms (hist_quantile (&io->dlat, .5)),
                 ms (hist_quantile (&io->dlat, .99)),
                 io->reqs[RQ_READ], io->reqs[RQ_WRITE], io->reqs[RQ_FLUSH],
                 io->reqs[RQ_TRIM], io->reqs[RQ_ZERO],
                 iostat_total_bytes (io), io->errors);
}

/* The one rule for a share, in percent: of last second's bytes, or when
 * nothing moved in the last second, of the bytes since start.
 */
static double
share_pct (const struct iostat *io, double sum_bps, double sum_bytes)
{
  if (sum_bps > 0)
    return 100. * io->bps / sum_bps;
  return sum_bytes > 0 ? 100. * (double) iostat_total_bytes (io) / sum_bytes
                       : 0;
}

/* Shares of n iostats among themselves. */
static void
shares (const struct iostat *const *ios, size_t n, double *out)
{
  double sum_bps = 0, sum_bytes = 0;

  for (size_t i = 0; i < n; i++) {
    sum_bps += ios[i]->bps;
    sum_bytes += (double) iostat_total_bytes (ios[i]);
  }
  for (size_t i = 0; i < n; i++)
    out[i] = share_pct (ios[i], sum_bps, sum_bytes);
}

/* A connection's share of everything the device did (connections that
 * closed still count in the device's total, as they did in its time).
 */
static double
conn_share (const struct iostat *io)
{
  return share_pct (io, tn.total.bps,
                    (double) iostat_total_bytes (&tn.total));
}

struct snapshot {
  double *gshare, *eshare;
  const struct iostat **tmp;
};

static int
take_shares (struct snapshot *sn)
{
  size_t ng = tn.m->nr_groups, ne = tn.m->nr_exports;

  sn->gshare = calloc (ng + 1, sizeof *sn->gshare);
  sn->eshare = calloc (ne + 1, sizeof *sn->eshare);
  sn->tmp = calloc (ng + ne + 1, sizeof *sn->tmp);
  if (!sn->gshare || !sn->eshare || !sn->tmp) {
    free (sn->gshare);
    free (sn->eshare);
    free (sn->tmp);
    return -ENOMEM;
  }
  for (size_t i = 0; i < ng; i++)
    sn->tmp[i] = &tn.groups[i].io;
  shares (sn->tmp, ng, sn->gshare);
  for (size_t i = 0; i < ne; i++)
    sn->tmp[i] = &tn.exports[i].io;
  shares (sn->tmp, ne, sn->eshare);
  return 0;
}

static void
free_shares (struct snapshot *sn)
{
  free (sn->gshare);
  free (sn->eshare);
  free (sn->tmp);
}

static const char *
mode_now (void)
{
  uint64_t v;

  if (is_cfq () && sched_get (tn.s, "mode", &v) == 0)
    return cfq_mode_name (v);
  return mode_names[tn.m->dev.mode];
}

static void
stats_json (struct strbuf *o)
{
  uint64_t now = engine_now ();
  struct snapshot sn;
  struct list *p;
  const char *sep = "";

  if (take_shares (&sn)) {
    o->oom = 1;
    return;
  }
  strbuf_printf (o, "{\"device\":{\"scheduler\":\"%s\",\"mode\":\"%s\"",
                 tn.sched_name, mode_now ());
  if (is_cfq ()) {
    struct cfq_stats cs;
    uint64_t rot = 0;

    cfq_get_stats (tn.s, &cs);
    sched_get (tn.s, "rotational", &rot);
    strbuf_printf (o, ",\"hw_tag\":%d,\"hw_tag_depth\":%u,\"iops_mode\":%s,"
                   "\"rotational\":%" PRIu64 ",\"busy_queues\":%u,"
                   "\"rq_queued\":%u,\"slices\":%" PRIu64
                   ",\"idle_arms\":%" PRIu64 ",\"group_idle_arms\":%" PRIu64
                   ",\"idle_hits\":%" PRIu64 ",\"idle_timeouts\":%" PRIu64
                   ",\"preemptions\":%" PRIu64 ",\"fifo_expired\":%" PRIu64
                   ",\"merges\":%" PRIu64 ",\"splits\":%" PRIu64
                   ",\"wait_busy\":%" PRIu64,
                   cs.hw_tag, cs.hw_tag_est_depth,
                   cs.iops_mode ? "true" : "false", rot, cs.busy_queues,
                   cs.rq_queued, cs.slices, cs.idle_arms, cs.group_idle_arms,
                   cs.idle_hits, cs.idle_timeouts, cs.preemptions,
                   cs.fifo_expired, cs.merges, cs.splits, cs.wait_busy);
  }
  else
    strbuf_printf (o, ",\"hw_tag\":-1");
  strbuf_printf (o, ",\"inflight\":%u,\"held\":%u,\"queue_depth\":%u,"
                 "\"emulate\":\"%s\"", engine_inflight (), engine_held (),
                 engine_depth (), emulate_names[tn.m->dev.emulate]);
  if (tn.dm) {
    char buf[512];

    devmodel_describe (tn.dm, buf, sizeof buf);
    strbuf_printf (o, ",\"model\":");
    json_str (o, buf);
  }
  strbuf_printf (o, ",");
  json_iostat (o, &tn.total, now, 100.);
  strbuf_printf (o, "},\"groups\":[");
  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    const struct tn_group *g = &tn.groups[i];

    strbuf_printf (o, "%s{\"name\":", i ? "," : "");
    json_str (o, g->cg->name);
    strbuf_printf (o, ",\"weight\":%u,\"class\":\"%s\",\"prio\":%u",
                   g->weight, class_names[g->cg->cls], g->cg->prio);
    if (is_cfq ()) {
      struct cfq_group_stats gs;

      cfq_group_get_stats (tn.s, g->sg, &gs);
      strbuf_printf (o, ",\"vdisktime\":%" PRIu64 ",\"cfq_weight\":%u,"
                     "\"busy_queues\":%u,\"in_driver\":%u,"
                     "\"on_service_tree\":%s,\"serving\":%s",
                     gs.vdisktime, gs.weight, gs.busy_queues, gs.in_driver,
                     gs.on_service_tree ? "true" : "false",
                     gs.serving ? "true" : "false");
      strbuf_printf (o, ",\"slices\":%" PRIu64 ",\"idle_arms\":%" PRIu64
                     ",\"group_idle_arms\":%" PRIu64 ",\"idle_hits\":%"
                     PRIu64 ",\"idle_timeouts\":%" PRIu64
                     ",\"preemptions\":%" PRIu64 ",\"dispatched\":%" PRIu64
                     ",\"used_ns\":%" PRIu64,
                     gs.slices, gs.idle_arms, gs.group_idle_arms,
                     gs.idle_hits, gs.idle_timeouts, gs.preemptions,
                     gs.dispatched, gs.used_ns);
    }
    strbuf_printf (o, ",");
    json_iostat (o, &g->io, now, sn.gshare[i]);
    strbuf_printf (o, "}");
  }
  strbuf_printf (o, "],\"exports\":[");
  for (size_t i = 0; i < tn.m->nr_exports; i++) {
    const struct tn_export *e = &tn.exports[i];

    strbuf_printf (o, "%s{\"name\":", i ? "," : "");
    json_str (o, e->ce->name);
    strbuf_printf (o, ",\"group\":");
    json_str (o, tn.m->groups[e->ce->group].name);
    strbuf_printf (o, ",\"offset\":%" PRIu64 ",\"size\":%" PRIu64
                   ",\"readonly\":%s,\"writes\":\"%s\",",
                   e->ce->offset, e->ce->size,
                   e->ce->readonly ? "true" : "false",
                   e->ce->writes_sync ? "sync" : "async");
    json_iostat (o, &e->io, now, sn.eshare[i]);
    strbuf_printf (o, "}");
  }
  strbuf_printf (o, "],\"connections\":[");
  list_for_each (p, &tn.conns) {
    const struct tn_conn *c = list_entry (p, struct tn_conn, link);

    strbuf_printf (o, "%s{\"id\":%" PRIu64 ",\"export\":", sep, c->id);
    json_str (o, tn.m->exports[c->exp].name);
    strbuf_printf (o, ",\"group\":");
    json_str (o, tn.m->groups[tn.m->exports[c->exp].group].name);
    strbuf_printf (o, ",");
    json_iostat (o, &c->io, now, conn_share (&c->io));
    strbuf_printf (o, "}");
    sep = ",";
  }
  strbuf_printf (o, "]}\n");
  free_shares (&sn);
}

/* Export names may be "" (shown as "-") or contain spaces (shown as _). */
static void
flat_name (struct strbuf *o, const char *s)
{
  if (!*s) {
    strbuf_printf (o, "\"\"");
    return;
  }
  for (; *s; s++)
    strbuf_printf (o, "%c", *s == ' ' || *s == '\n' ? '_' : *s);
}

static void
stats_flat (struct strbuf *o)
{
  uint64_t now = engine_now ();
  struct snapshot sn;
  struct list *p;

  if (take_shares (&sn)) {
    o->oom = 1;
    return;
  }
  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    const struct tn_group *g = &tn.groups[i];

    strbuf_printf (o, "group ");
    flat_name (o, g->cg->name);
    strbuf_printf (o, " weight=%u class=%s prio=%u", g->weight,
                   class_names[g->cg->cls], g->cg->prio);
    if (is_cfq ()) {
      struct cfq_group_stats gs;

      cfq_group_get_stats (tn.s, g->sg, &gs);
      strbuf_printf (o, " vdisktime=%" PRIu64 " slices=%" PRIu64
                     " idle_hits=%" PRIu64 " idle_timeouts=%" PRIu64
                     " used_ms=%" PRIu64, cfq_group_vdisktime (tn.s, g->sg),
                     gs.slices, gs.idle_hits, gs.idle_timeouts,
                     gs.used_ns / 1000000);
    }
    flat_iostat (o, &g->io, now, sn.gshare[i]);
    strbuf_printf (o, "\n");
  }
  for (size_t i = 0; i < tn.m->nr_exports; i++) {
    const struct tn_export *e = &tn.exports[i];

    strbuf_printf (o, "export ");
    flat_name (o, e->ce->name);
    strbuf_printf (o, " group=");
    flat_name (o, tn.m->groups[e->ce->group].name);
    flat_iostat (o, &e->io, now, sn.eshare[i]);
    strbuf_printf (o, "\n");
  }
  list_for_each (p, &tn.conns) {
    const struct tn_conn *c = list_entry (p, struct tn_conn, link);

    strbuf_printf (o, "conn %" PRIu64 " export=", c->id);
    flat_name (o, tn.m->exports[c->exp].name);
    strbuf_printf (o, " group=");
    flat_name (o, tn.m->groups[tn.m->exports[c->exp].group].name);
    flat_iostat (o, &c->io, now, conn_share (&c->io));
    strbuf_printf (o, "\n");
  }
  strbuf_printf (o, "device - scheduler=%s mode=%s", tn.sched_name,
                 mode_now ());
  if (is_cfq ()) {
    struct cfq_stats cs;

    cfq_get_stats (tn.s, &cs);
    strbuf_printf (o, " hw_tag=%d slices=%" PRIu64 " idle_hits=%" PRIu64
                   " idle_timeouts=%" PRIu64 " preemptions=%" PRIu64,
                   cs.hw_tag, cs.slices, cs.idle_hits, cs.idle_timeouts,
                   cs.preemptions);
  }
  else
    strbuf_printf (o, " hw_tag=-1");
  strbuf_printf (o, " inflight=%u held=%u queue_depth=%u emulate=%s",
                 engine_inflight (), engine_held (), engine_depth (),
                 emulate_names[tn.m->dev.emulate]);
  flat_iostat (o, &tn.total, now, 100.);
  strbuf_printf (o, "\n");
  free_shares (&sn);
}

static void
write_stats_file (void)
{
  struct strbuf b = { 0 };
  FILE *f;

  stats_json (&b);
  if (b.oom || !b.s) {
    nbdkit_error ("cfq: stats=%s: out of memory", tn.stats_path);
    strbuf_free (&b);
    return;
  }
  f = fopen (tn.stats_path, "we");
  if (!f || fputs (b.s, f) == EOF || fclose (f) == EOF)
    nbdkit_error ("cfq: stats=%s: %m", tn.stats_path);
  strbuf_free (&b);
}

/* ---- control commands --------------------------------------------------------- */

static void
reset_one (struct iostat *io, uint64_t now)
{
  iostat_init (io, now);
}

static void
get_one (struct strbuf *o, const char *key)
{
  uint64_t v;
  int err;

  if (strcmp (key, "queue_depth") == 0) {
    strbuf_printf (o, "queue_depth=%u\n", engine_depth ());
    return;
  }
  if (strcmp (key, "scheduler") == 0) {
    strbuf_printf (o, "scheduler=%s\n", tn.sched_name);
    return;
  }
  err = sched_get (tn.s, key, &v);
  if (err) {
    strbuf_printf (o, "error: %s: %s\n", key,
                   err == -ENOENT ? "unknown key" : strerror (-err));
    return;
  }
  if (strcmp (key, "mode") == 0)
    strbuf_printf (o, "mode=%s\n", cfq_mode_name (v));
  else
    strbuf_printf (o, "%s=%" PRIu64 "\n", key, v);
}

static void
cmd_set (struct strbuf *o, const char *key, const char *val)
{
  const struct cfq_tunable *t;
  uint64_t v;
  int err;

  if (strcmp (key, "queue_depth") == 0) {
    char *end;
    unsigned long n = strtoul (val, &end, 10);

    if (*val < '0' || *val > '9' || *end || n < 1 ||
        n > CFG_QUEUE_DEPTH_MAX)
      strbuf_printf (o, "error: queue_depth=%s: must be a number between "
                     "1 and %d\n", val, CFG_QUEUE_DEPTH_MAX);
    else if ((err = engine_set_depth ((unsigned) n)) != 0)
      strbuf_printf (o, "error: queue_depth=%s: %s\n", val, strerror (-err));
    else
      strbuf_printf (o, "ok\n");
    return;
  }
  if (strcmp (key, "scheduler") == 0) {
    strbuf_printf (o, "error: scheduler: cannot be changed while running\n");
    return;
  }
  if (!is_cfq () || !(t = cfq_tunable_lookup (key))) {
    strbuf_printf (o, "error: %s: unknown key\n", key);
    return;
  }
  if (strcmp (t->unit, "ns") == 0)
    err = cfg_parse_time (val, &v);
  else if (strcmp (key, "mode") == 0)
    err = cfq_mode_parse (val, &v);
  else if (strcmp (t->unit, "bool") == 0) {
    bool b;

    err = cfg_parse_bool (val, &b);
    v = b;
  }
  else {
    char *end;

    errno = 0;
    v = strtoull (val, &end, 10);
    err = *val < '0' || *val > '9' || *end || errno ? -EINVAL : 0;
  }
  if (err) {
    /* The same words as a bad value in the config file. */
    if (strcmp (t->unit, "ns") == 0)
      strbuf_printf (o, "error: %s=%s: not a time (want a number with ns, "
                     "us, ms or s; a bare number is ms)\n", key, val);
    else
      strbuf_printf (o, "error: %s=%s: not a valid %s value\n", key, val,
                     t->unit);
    return;
  }
  err = sched_set (tn.s, key, v);
  if (err == -ERANGE)
    strbuf_printf (o, "error: %s=%s: out of range (%" PRIu64 "..%" PRIu64
                   " %s)\n", key, val, t->min, t->max, t->unit);
  else if (err)
    strbuf_printf (o, "error: %s=%s: %s\n", key, val, strerror (-err));
  else
    strbuf_printf (o, "ok\n");
}

static void
cmd_weight (struct strbuf *o, const char *name, const char *val)
{
  char *end;
  unsigned long w;
  int err;

  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    struct tn_group *g = &tn.groups[i];

    if (strcmp (g->cg->name, name) != 0)
      continue;
    errno = 0;
    w = strtoul (val, &end, 10);
    if (*val < '0' || *val > '9' || *end) {
      strbuf_printf (o, "error: weight %s: not a number (want %d..%d)\n",
                     val, SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
      return;
    }
    if (errno || w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX) {
      strbuf_printf (o, "error: weight %s: out of range (%d..%d)\n", val,
                     SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
      return;
    }
    err = sched_group_set_weight (tn.s, g->sg, (unsigned) w);
    if (err) {
      strbuf_printf (o, "error: weight %s %s: %s\n", name, val,
                     strerror (-err));
      return;
    }
    g->weight = (unsigned) w;
    strbuf_printf (o, "ok\n");
    return;
  }
  strbuf_printf (o, "error: unknown group '%s'\n", name);
}

static void
control_cmd (void *opaque, const char *line, struct strbuf *o)
{
  char verb[32] = "", a[256] = "", b[256] = "", extra[8] = "";
  int n = sscanf (line, "%31s %255s %255s %7s", verb, a, b, extra);

  if (n <= 0) {
    strbuf_printf (o, "error: empty command\n");
    return;
  }
  if (strcmp (verb, "stats") == 0 && n == 1)
    stats_json (o);
  else if (strcmp (verb, "stats") == 0 && n == 2 && strcmp (a, "flat") == 0)
    stats_flat (o);
  else if (strcmp (verb, "get") == 0 && n == 2)
    get_one (o, a);
  else if (strcmp (verb, "get") == 0 && n == 1) {
    get_one (o, "scheduler");
    get_one (o, "queue_depth");
    if (is_cfq ())
      for (size_t i = 0; i < cfq_nr_tunables; i++)
        get_one (o, cfq_tunables[i].name);
  }
  else if (strcmp (verb, "set") == 0 && n == 3)
    cmd_set (o, a, b);
  else if (strcmp (verb, "weight") == 0 && n == 3)
    cmd_weight (o, a, b);
  else if (strcmp (verb, "reset") == 0 && n == 1) {
    each_iostat (reset_one, engine_now ());
    strbuf_printf (o, "ok\n");
  }
  else if (strcmp (verb, "help") == 0)
    strbuf_printf (o, "stats | stats flat | get [KEY] | set KEY VALUE | "
                   "weight GROUP N | reset\n");
  else
    strbuf_printf (o, "error: unknown command '%s' (stats, stats flat, get, "
                   "set, weight, reset)\n", line);
}
