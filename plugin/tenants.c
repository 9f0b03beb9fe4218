/* tenants.c: the model of tenants in the server and their accounting
 * (see tenants.h).
 *
 * What it decides.  The configuration model (core/config.c) says which
 * groups share the disk and in what proportion, and which exports belong
 * to which group.  Here that model becomes live state: one scheduler group
 * per [group] with its weight, the tunables applied, one iostat per group,
 * export and connection, fed by the dispatcher on every completion.  The
 * same dispatcher serves the control socket (ctlcmd.c), so "weight gold
 * 800" or "set slice_idle 0" changes the scheduler between two dispatch
 * decisions without a lock, and "stats" (statsout.c) reads counters nobody
 * else is writing.
 *
 * Rates are per second: the one-second timer of hooks.c ticks every
 * iostat (tn_tick).  A group's or export's share (statsout.c) is its
 * bytes over the last second as a percentage of all groups' (exports')
 * bytes in that second, or of the totals since start (or reset) when
 * nothing moved in the last second.
 *
 * The rotational flag (which decides CFQ's seek logic and, with mode=auto,
 * whether groups are charged by time or by requests) comes from the device
 * model when emulating, else from sysfs for the block device that holds
 * the file (the parent disk for a partition); with cache=page (and no
 * model) the scheduler's device is the page cache, which does not seek
 * (cfg_rotational, core/apply.c).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
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
#include "cost.h"
#include "costmodel.h"
#include "device.h"
#include "devmodel.h"
#include "loglimit.h"
#include "outfile.h"
#include "tenants.h"
#include "units.h"
#include "utf8.h"

/* -D cfq.trace=1: log every scheduling decision of the policy. */
NBDKIT_DLL_PUBLIC int cfq_debug_trace;

static struct tenants tn = {
  .rotational = -1, .conns = LIST_INIT (tn.conns),
  .ctl_opts = CONTROL_OPTS_INIT,
};

/* ---- configuration (main thread) ------------------------------------------ */

/* The parameters the plugin takes itself (plugin.c, here, control.c),
 * beside the model's keys, for "did you mean" on a mistyped one.
 */
static const char *const plugin_keys[] = {
  "file", "config", "control", "control_mode", "control_uid",
  "control_clients", "control_timeout", "stats", "metrics", "backend", NULL,
};

static int
ensure_cfg (void)
{
  if (!tn.cfg) {
    tn.cfg = cfg_new (NULL, NULL);
    if (!tn.cfg) {
      nbdkit_error ("cfq: cfg_new: %m");
      return -1;
    }
    cfg_set_override_names (tn.cfg, plugin_keys);
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
  if (strncmp (key, "control_", 8) == 0) {
    int r = control_config (&tn.ctl_opts, key, value);

    if (r != 0)
      return r;
  }
  if (strcmp (key, "stats") == 0)
    return set_path (&tn.stats_path, key, value) == -1 ? -1 : 1;
  if (strcmp (key, "metrics") == 0)
    return set_path (&tn.metrics_path, key, value) == -1 ? -1 : 1;
  return tn_override (key, value) == -1 ? -1 : 1;
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
  if (tn.ctl_opts.given && !tn.control_path) {
    nbdkit_error ("cfq: control_mode, control_uid, control_clients and "
                  "control_timeout need control=PATH");
    return -1;
  }
  if (tn.stats_path && outfile_check ("stats", tn.stats_path) == -1)
    return -1;
  if (tn.metrics_path && outfile_check ("metrics", tn.metrics_path) == -1)
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
  /* Rewritten by rename, but read back too: the stats= rules. */
  if (tn.m->dev.calibration
      && outfile_check ("calibration", tn.m->dev.calibration) == -1)
    return -1;
  tn.groups = calloc (tn.m->nr_groups, sizeof *tn.groups);
  tn.exports = calloc (tn.m->nr_exports, sizeof *tn.exports);
  if (!tn.groups || !tn.exports) {
    nbdkit_error ("cfq: calloc: %m");
    return -1;
  }
  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    tn.groups[i].cg = &tn.m->groups[i];
    tn.groups[i].weight = tn.m->groups[i].weight;
    tn.groups[i].qos = tn.m->groups[i].qos;
    tn.groups[i].lat = tn.m->groups[i].lat;
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
tn_sched_name (void)
{
  return tn.m->scheduler;
}

int
tn_prepare (const char *sched_name, const char *backend, uint64_t size,
            dev_t dev)
{
  const struct cfg_device *d = &tn.m->dev;
  int err = 0;

  tn.sched_name = sched_name;
  if (d->emulate) {
    char cap[32];

    tn.dm = devmodel_new (d->emulate, &err);
    if (!tn.dm) {
      nbdkit_error ("cfq: emulate=%s: %s", d->emulate, strerror (-err));
      return -1;
    }
    /* The capacity defaults to the device's size; a model.capacity given
     * (the model's parameters come after) replaces it: the seek between
     * two offsets grows with their distance over the capacity, so it
     * says whether the device is a disk of that size or a region of a
     * larger one.
     */
    snprintf (cap, sizeof cap, "%" PRIu64, size ? size : 1);
    err = devmodel_set (tn.dm, "capacity", cap);
    if (err && err != -ENOENT)
      nbdkit_debug ("cfq: device model: capacity=%s: %s", cap,
                    strerror (-err));
    for (size_t i = 0; i < d->nr_model; i++) {
      err = devmodel_set (tn.dm, d->model[i].key, d->model[i].value);
      if (err) {
        nbdkit_error ("cfq: model.%s=%s: %s", d->model[i].key,
                      d->model[i].value, strerror (-err));
        return -1;
      }
    }
    tn.rotational = devmodel_rotational (tn.dm);
  }
  else if (backend && strcmp (backend, "rbd") == 0)
    tn.rotational = 0;  /* a cluster, as the kernel's rbd driver says */
  else
    tn.rotational = device_rotational (major (dev), minor (dev));
  {
    char buf[256] = "";

    if (tn.dm)
      devmodel_describe (tn.dm, buf, sizeof buf);
    nbdkit_debug ("cfq: scheduler=%s mode=%s rotational=%d emulate=%s "
                  "cache=%s %s", sched_name, cfq_mode_name (d->mode),
                  cfg_rotational (tn.m, tn.rotational),
                  d->emulate ? d->emulate : "none",
                  cfg_cache_name (d->cache), buf);
  }
  /* Before the first client: a calibration reads the device alone. */
  if (cm_prepare (tn.m, tn.dm, tn.rotational, sched_name, backend) == -1)
    return -1;
  /* Last: nothing after it may fail and leave the socket behind.  Here,
   * before nbdkit changes user (-u) and forks, as nbdkit binds its own.
   */
  if (tn.control_path) {
    tn.ctl = control_bind (tn.control_path, &tn.ctl_opts);
    if (!tn.ctl)
      return -1;
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

/* Take a place under limit in *count: false if it is full. */
static bool
take_place (unsigned *count, unsigned limit)
{
  unsigned n = __atomic_load_n (count, __ATOMIC_RELAXED);

  do
    if (n >= limit)
      return false;
  while (!__atomic_compare_exchange_n (count, &n, n + 1, true,
                                       __ATOMIC_RELAXED, __ATOMIC_RELAXED));
  return true;
}

/* Lines about refused clients (unknown exports, allow=, tls=,
 * max_connections): a client can cause any number of them, so they share
 * one bucket (loglimit.c).
 */
static struct loglimit refusal_log = LOGLIMIT_ABOUT ("refused clients");

void
tn_refusal (const char *fmt, ...)
{
  char msg[512], note[LOGLIMIT_NOTE];
  va_list ap;

  if (!loglimit_line (&refusal_log, engine_now (), note, sizeof note))
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  nbdkit_error ("%s%s", msg, note);
}

static void
log_refusal (const char *name, const char *why, unsigned n, unsigned max,
             const char *where)
{
  char esc[256];

  tn_refusal ("cfq: export '%s': connection refused: %u clients %s "
              "already (max_connections=%u in %s)",
              utf8_escape (name, esc, sizeof esc), n, why, max, where);
}

int
tn_conn_new (size_t export_index, struct tn_conn **cp)
{
  struct tn_export *e = &tn.exports[export_index];
  unsigned max = tn.m->dev.max_connections;
  unsigned emax = e->ce->max_connections;
  struct tn_conn *c;

  if (!take_place (&tn.nconns, max)) {
    __atomic_add_fetch (&tn.refused, 1, __ATOMIC_RELAXED);
    log_refusal (e->ce->name, "connected to the server", max, max,
                 "[device]");
    return -EUSERS;
  }
  if (emax && !take_place (&e->nconns, emax)) {
    __atomic_sub_fetch (&tn.nconns, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch (&tn.refused, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch (&e->refused, 1, __ATOMIC_RELAXED);
    log_refusal (e->ce->name, "on this export", emax, emax, "its [export]");
    return -EUSERS;
  }
  if (!emax)
    __atomic_add_fetch (&e->nconns, 1, __ATOMIC_RELAXED);
  c = calloc (1, sizeof *c);
  if (!c) {
    __atomic_sub_fetch (&e->nconns, 1, __ATOMIC_RELAXED);
    __atomic_sub_fetch (&tn.nconns, 1, __ATOMIC_RELAXED);
    return -ENOMEM;
  }
  c->id = __atomic_add_fetch (&tn.next_id, 1, __ATOMIC_RELAXED);
  c->exp = export_index;
  iostat_init (&c->io, engine_now ());
  *cp = c;
  return 0;
}

void
tn_conn_free (struct tn_conn *c)
{
  if (!c)
    return;
  __atomic_sub_fetch (&tn.exports[c->exp].nconns, 1, __ATOMIC_RELAXED);
  __atomic_sub_fetch (&tn.nconns, 1, __ATOMIC_RELAXED);
  iostat_free (&c->io);
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
  control_stop (tn.ctl);        /* bound, but the dispatcher never ran */
  tn.ctl = NULL;
  free (tn.control_path);
  free (tn.stats_path);
  free (tn.metrics_path);
}

/* ---- the dispatcher's side --------------------------------------------------- */

struct tenants *
tn_live (void)
{
  return &tn;
}

const char *
tn_mode_name (const struct tenants *t, char *buf, size_t len)
{
  uint64_t v;

  if (t->s && sched_get (t->s, "mode", &v) == 0)
    return sched_tunable_format (t->s, "mode", v, buf, len);
  return cfq_mode_name (t->m->dev.mode);
}

void
tn_each_iostat (struct tenants *t, void (*fn) (struct iostat *, uint64_t),
                uint64_t now)
{
  struct list *p;

  for (size_t i = 0; i < t->m->nr_groups; i++)
    fn (&t->groups[i].io, now);
  for (size_t i = 0; i < t->m->nr_exports; i++)
    fn (&t->exports[i].io, now);
  list_for_each (p, &t->conns)
    fn (&list_entry (p, struct tn_conn, link)->io, now);
  fn (&t->total, now);
}

/* Lines about unmet latency targets: the clients' load decides how often
 * a target flips between unmet and met, so they share one bucket
 * (loglimit.c), as the refusals do.
 */
static struct loglimit latency_loglimit =
  LOGLIMIT_ABOUT ("unmet latency targets");

/* A latency target the device does not meet (core/cfq-latency.c's
 * unmet), logged when it becomes so and when it is met again.  A group
 * whose target was removed is not unmet.
 */
static void
latency_log (uint64_t now)
{
  struct cfq_group_stats st;
  char b[32], note[LOGLIMIT_NOTE];

  if (!tn.s || tn.s->ops != &cfq_ops)
    return;
  for (size_t i = 0; i < tn.m->nr_groups; i++) {
    struct tn_group *g = &tn.groups[i];

    if (!g->sg || !g->lat.target) {
      g->lat_unmet = false;
      continue;
    }
    cfq_group_get_stats (tn.s, g->sg, &st);
    if (st.lat_unmet == g->lat_unmet)
      continue;
    g->lat_unmet = st.lat_unmet;
    if (st.lat_unmet) {
      if (!loglimit_line (&latency_loglimit, now, note, sizeof note))
        continue;
      nbdkit_error ("cfq: group %s: latency target %s at p%u is not met"
                    " with every other group at its floor (last window:"
                    " %.1f ms)%s", g->cg->name,
                    units_format_time (st.lat_target, b, sizeof b),
                    g->lat.percentile, st.lat_window / 1e6, note);
    }
    else
      nbdkit_debug ("cfq: group %s: latency target %s met again",
                    g->cg->name,
                    units_format_time (st.lat_target, b, sizeof b));
  }
}

/* What loglimit_flush_all says was left out. */
static void
log_line (const char *line)
{
  nbdkit_error ("%s", line);
}

void
tn_tick (uint64_t now)
{
  tn_each_iostat (&tn, iostat_tick, now);
  loglimit_flush_all (now, log_line);
  latency_log (now);
}

static void
trace_fn (void *opaque, const char *msg)
{
  if (cfq_debug_trace)
    nbdkit_debug ("cfq.trace: %.6f %s", engine_now () / 1e9, msg);
}

int
tn_start (struct engine *e, struct sched *s)
{
  const struct cfg_model *m = tn.m;
  uint64_t now = engine_now ();
  struct sched_group **sg;
  char why[256];
  int err;

  tn.e = e;
  tn.s = s;
  sg = calloc (m->nr_groups, sizeof *sg);
  if (!sg) {
    nbdkit_error ("cfq: calloc: %m");
    return -ENOMEM;
  }
  err = cfg_apply (m, s, tn.rotational, sg, why, sizeof why);
  if (err == 0)
    err = cm_apply (s, why, sizeof why);
  for (size_t i = 0; err == 0 && i < m->nr_groups; i++)
    tn.groups[i].sg = sg[i];
  free (sg);
  if (err) {
    nbdkit_error ("cfq: %s", why);
    return err;
  }
  /* nbdkit sets -D flags when it loads the plugin, before this. */
  if (cfq_debug_trace)
    sched_set_trace (s, trace_fn, NULL);
  tn_each_iostat (&tn, iostat_init, now);
  return 0;
}

void
tn_stop (void)
{
  for (size_t i = 0; i < tn.m->nr_groups; i++)
    iostat_free (&tn.groups[i].io);
  for (size_t i = 0; i < tn.m->nr_exports; i++)
    iostat_free (&tn.exports[i].io);
  iostat_free (&tn.total);
  tn.s = NULL;
  tn.e = NULL;
}

void
tn_conn_hook (void *acct, bool open)
{
  struct tn_conn *c = acct;

  if (open) {
    iostat_reset (&c->io, engine_now ());
    list_add_tail (&c->link, &tn.conns);
  }
  else
    list_del (&c->link);
}

void
tn_done (struct creq *r, int res, uint64_t now)
{
  struct tn_conn *c = r->acct;

  if (!c)
    return;
  iostat_done (&c->io, &r->rq, now, res);
  iostat_done (&tn.exports[c->exp].io, &r->rq, now, res);
  iostat_done (&tn.groups[tn.m->exports[c->exp].group].io, &r->rq, now, res);
  iostat_done (&tn.total, &r->rq, now, res);
}

/* One line per policy call: "cfq.policy: CALL conn=ID op=OP off=BYTES
 * len=BYTES flags=RQ_* now=NS", or "cfq.policy: dispatch - now=NS" when
 * dispatch handed out nothing.  ID is the connection's number (1, 2, ...
 * in order of opening), 0 for a request of no connection.
 */
void
tn_policy_log (enum engine_call call, struct creq *r, uint64_t now)
{
  static const char *const calls[] = { "insert", "dispatch", "completed",
                                       "cancel", "deactivate",
                                       "activate" };
  static const char *const ops[] = { "read", "write", "flush", "trim",
                                     "zero" };
  const struct tn_conn *c;

  if (!r) {
    nbdkit_debug ("cfq.policy: %s - now=%" PRIu64, calls[call], now);
    return;
  }
  c = r->acct;
  nbdkit_debug ("cfq.policy: %s conn=%" PRIu64 " op=%s off=%" PRIu64
                " len=%" PRIu32 " flags=%#x now=%" PRIu64, calls[call],
                c ? c->id : 0, r->rq.op < 5 ? ops[r->rq.op] : "?",
                r->rq.off, r->rq.len, r->rq.flags, now);
}
