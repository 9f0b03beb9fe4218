/* statsout.c: the statistics, as JSON ("stats", stats=FILE), as one
 * line per group, export, connection and the device ("stats flat"), and
 * in Prometheus's text format ("metrics", metrics=FILE).
 *
 * Both read the same state: the iostats tenants.c feeds on every
 * completion, the scheduler's own counters when it is CFQ, and the
 * engine's depth.  Shares follow one rule (share_pct) for groups among
 * groups, exports among exports, and each connection of the device.
 *
 * Threads: the dispatcher's, under the engine lock (a control command,
 * or the teardown hook for stats=FILE): nothing else writes what these
 * read, so they take no lock.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "backing.h"
#include "bounce.h"
#include "cfq.h"
#include "devmodel.h"
#include "hangup.h"
#include "outfile.h"
#include "reqbuf.h"
#include "statsout.h"
#include "utf8.h"

static const char *const op_names[IOSTAT_OPS] = {
  "read", "write", "flush", "trim", "zero",
};

/* JSON string: valid UTF-8 is copied, '"' and '\\' and control
 * characters are escaped, and a byte that is not UTF-8 becomes U+FFFD.
 * The config refuses such names; this keeps the answer valid JSON
 * whatever a name holds (defence in depth).
 */
static void
json_str (struct strbuf *o, const char *s)
{
  size_t n = strlen (s), i = 0, start = 0;

  strbuf_printf (o, "\"");
  while (i < n) {
    uint32_t cp;
    size_t cl = utf8_decode (s + i, n - i, &cp);

    if (cl && cp >= 0x20 && cp != '"' && cp != '\\' && cp != 0x7f &&
        !(cp >= 0x80 && cp <= 0x9f)) {
      i += cl;
      continue;
    }
    strbuf_printf (o, "%.*s", (int) (i - start), s + start);
    if (cl == 0)
      strbuf_printf (o, "\\ufffd");
    else if (cp == '"' || cp == '\\')
      strbuf_printf (o, "\\%c", (char) cp);
    else
      strbuf_printf (o, "\\u%04x", (unsigned) cp);
    i += cl ? cl : 1;
    start = i;
  }
  strbuf_printf (o, "%.*s\"", (int) (i - start), s + start);
}

/* Fixed-point text without floating-point printf (the cost of "stats"
 * with many connections was mostly %f): v / 10^d with d decimals, as
 * printf's %.Nf writes it.
 */
static char *
fixed (char *buf, uint64_t scaled, unsigned d)
{
  char tmp[32];
  unsigned n = 0, o = 0;

  do {
    tmp[n++] = (char) ('0' + scaled % 10);
    scaled /= 10;
  } while (scaled || n <= d);
  while (n) {
    if (n == d)
      buf[o++] = '.';
    buf[o++] = tmp[--n];
  }
  buf[o] = '\0';
  return buf;
}

/* ns as ms with 3 decimals ("%.3f" of ns / 1e6). */
static char *
ms3 (char *buf, uint64_t ns)
{
  return fixed (buf, ns / 1000 + (ns % 1000 >= 500), 3);
}

/* A non-negative double with d decimals ("%.Nf"). */
static char *
dfix (char *buf, double v, unsigned d)
{
  double scale = d == 1 ? 10. : 1000.;

  if (!(v >= 0) || v * scale >= 1.8e19)
    v = 0;
  return fixed (buf, (uint64_t) (v * scale + .5), d);
}

/* The latency figures of an iostat, each histogram walked once. */
struct figs {
  char iops[32], mibs[32], avg_iops[32], avg_mibs[32], share[32];
  char p50[32], p99[32], p999[32], max[32], mean[32];
  char q50[32], q99[32], d50[32], d99[32];
};

static void
figures (const struct iostat *io, uint64_t now, double share, struct figs *f)
{
  static const double l3[] = { .5, .99, .999 }, l2[] = { .5, .99 };
  uint64_t l[3], q[2], d[2];

  hist_quantiles (&io->lat, l3, 3, l);
  hist_quantiles (&io->qlat, l2, 2, q);
  hist_quantiles (&io->dlat, l2, 2, d);
  dfix (f->iops, io->iops, 1);
  dfix (f->mibs, io->bps / 1048576., 3);
  dfix (f->avg_iops, iostat_avg_iops (io, now), 1);
  dfix (f->avg_mibs, iostat_avg_bps (io, now) / 1048576., 3);
  dfix (f->share, share, 1);
  ms3 (f->p50, l[0]);
  ms3 (f->p99, l[1]);
  ms3 (f->p999, l[2]);
  ms3 (f->max, io->lat.max);
  ms3 (f->mean, hist_mean (&io->lat));
  ms3 (f->q50, q[0]);
  ms3 (f->q99, q[1]);
  ms3 (f->d50, d[0]);
  ms3 (f->d99, d[1]);
}

/* The iostat fields shared by groups, exports and connections. */
static void
json_iostat (struct strbuf *o, const struct iostat *io, uint64_t now,
             double share)
{
  struct figs f;

  figures (io, now, share, &f);
  strbuf_printf (o, "\"requests\":{");
  for (unsigned i = 0; i < IOSTAT_OPS; i++)
    strbuf_printf (o, "%s\"%s\":%" PRIu64, i ? "," : "", op_names[i],
                   io->reqs[i]);
  strbuf_printf (o, "},\"bytes\":{");
  for (unsigned i = 0; i < IOSTAT_OPS; i++)
    strbuf_printf (o, "%s\"%s\":%" PRIu64, i ? "," : "", op_names[i],
                   io->bytes[i]);
  strbuf_printf (o, "},\"errors\":%" PRIu64, io->errors);
  strbuf_printf (o, ",\"iops\":%s,\"mibs\":%s,\"avg_iops\":%s,"
                 "\"avg_mibs\":%s,\"share\":%s", f.iops, f.mibs, f.avg_iops,
                 f.avg_mibs, f.share);
  strbuf_printf (o, ",\"lat\":{\"p50_ms\":%s,\"p99_ms\":%s,"
                 "\"p999_ms\":%s,\"max_ms\":%s,\"mean_ms\":%s}",
                 f.p50, f.p99, f.p999, f.max, f.mean);
  strbuf_printf (o, ",\"q_p50_ms\":%s,\"q_p99_ms\":%s,"
                 "\"d_p50_ms\":%s,\"d_p99_ms\":%s", f.q50, f.q99, f.d50,
                 f.d99);
}

static void
flat_iostat (struct strbuf *o, const struct iostat *io, uint64_t now,
             double share)
{
  struct figs f;

  figures (io, now, share, &f);
  strbuf_printf (o, " iops=%s mibs=%s share=%s p50_ms=%s p99_ms=%s "
                 "p999_ms=%s max_ms=%s avg_iops=%s avg_mibs=%s q_p50_ms=%s "
                 "q_p99_ms=%s d_p50_ms=%s d_p99_ms=%s reads=%" PRIu64
                 " writes=%" PRIu64 " flushes=%" PRIu64 " trims=%" PRIu64
                 " zeroes=%" PRIu64 " bytes=%" PRIu64 " errors=%" PRIu64,
                 f.iops, f.mibs, f.share, f.p50, f.p99, f.p999, f.max,
                 f.avg_iops, f.avg_mibs, f.q50, f.q99, f.d50, f.d99,
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
conn_share (const struct tenants *tn, const struct iostat *io)
{
  return share_pct (io, tn->total.bps,
                    (double) iostat_total_bytes (&tn->total));
}

struct snapshot {
  double *gshare, *eshare;
  const struct iostat **tmp;
};

static int
take_shares (const struct tenants *tn, struct snapshot *sn)
{
  size_t ng = tn->m->nr_groups, ne = tn->m->nr_exports;

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
    sn->tmp[i] = &tn->groups[i].io;
  shares (sn->tmp, ng, sn->gshare);
  for (size_t i = 0; i < ne; i++)
    sn->tmp[i] = &tn->exports[i].io;
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
mode_now (const struct tenants *tn)
{
  uint64_t v;

  if (tn_is_cfq (tn) && sched_get (tn->s, "mode", &v) == 0)
    return cfq_mode_name (v);
  return cfq_mode_name (tn->m->dev.mode);
}

void
stats_json (const struct tenants *tn, struct strbuf *o)
{
  uint64_t now = engine_now ();
  struct snapshot sn;
  struct list *p;
  const char *sep = "";

  if (take_shares (tn, &sn)) {
    o->oom = 1;
    return;
  }
  strbuf_printf (o, "{\"device\":{\"scheduler\":\"%s\",\"mode\":\"%s\"",
                 tn->sched_name, mode_now (tn));
  if (tn_is_cfq (tn)) {
    struct cfq_stats cs;
    uint64_t rot = 0;

    cfq_get_stats (tn->s, &cs);
    sched_get (tn->s, "rotational", &rot);
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
    strbuf_printf (o, ",\"seek_cost_us\":%" PRIu64 ",\"seek_fast\":%s",
                   cs.seek_cost / 1000, cs.seek_fast ? "true" : "false");
  }
  else
    strbuf_printf (o, ",\"hw_tag\":-1");
  strbuf_printf (o, ",\"inflight\":%u,\"held\":%u,\"cancelled\":%" PRIu64
                 ",\"queue_depth\":%u,\"emulate\":\"%s\"",
                 engine_inflight (tn->e), engine_held (tn->e),
                 engine_cancelled (tn->e), engine_depth (tn->e),
                 tn->m->dev.emulate ? tn->m->dev.emulate : "none");
  {
    struct bounce_stats bs;

    bounce_stats (&bs);
    strbuf_printf (o, ",\"buffers\":{\"cap\":%zu,\"total\":%zu,"
                   "\"in_use\":%zu,\"peak\":%zu,\"gets\":%" PRIu64
                   ",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f,\"allocs\":%"
                   PRIu64 ",\"frees\":%" PRIu64, bs.cap, bs.total,
                   bs.in_use, bs.peak, bs.gets, bs.waits, bs.wait_ns / 1e6,
                   bs.allocs, bs.frees);
    /* How the groups share it (core/poolshare.c): each group's part. */
    strbuf_printf (o, ",\"shares\":%s,\"active_groups\":%u,\"share\":%zu,"
                   "\"groups\":[", bs.shares ? "true" : "false", bs.active,
                   bs.share);
    for (size_t i = 0; i < tn->m->nr_groups; i++) {
      struct bounce_grp_stats gs;

      if (bounce_grp_stats ((unsigned) i, &gs))
        memset (&gs, 0, sizeof gs);
      strbuf_printf (o, "%s{\"group\":", i ? "," : "");
      json_str (o, tn->m->groups[i].name);
      strbuf_printf (o, ",\"in_use\":%zu,\"peak\":%zu,\"buffers\":%u,"
                     "\"waiting\":%u,\"gets\":%" PRIu64 ",\"waits\":%"
                     PRIu64 ",\"wait_ms\":%.3f,\"wait_max_ms\":%.3f,"
                     "\"over_share\":%" PRIu64 "}", gs.in_use, gs.peak,
                     gs.buffers, gs.waiting, gs.gets, gs.waits,
                     gs.wait_ns / 1e6, gs.wait_max_ns / 1e6, gs.over_share);
    }
    strbuf_printf (o, "]}");
  }
  strbuf_printf (o, ",\"max_request\":%u", CFG_MAX_REQUEST);
  {
    struct reqbuf_stats rs;
    struct cfg_memory mp;

    reqbuf_stats (&rs);
    cfg_memory_parts (&tn->m->dev, &mp);
    strbuf_printf (o, ",\"memory\":{\"budget\":%" PRIu64 ",\"pool\":%"
                   PRIu64 ",\"connections\":%" PRIu64 ",\"base\":%" PRIu64
                   ",\"requests\":{\"limit\":%" PRIu64 ",\"in_use\":%"
                   PRIu64 ",\"peak\":%" PRIu64 ",\"blocks\":%" PRIu64
                   ",\"refused\":%" PRIu64 "},\"reply_timeout_ms\":%" PRIu64
                   ",\"reply_timeouts\":%" PRIu64 ",\"aligned_buffers\":%s,"
                   "\"hangup_guard\":\"%s\"}",
                   tn->m->dev.memory, mp.pool, mp.conns, mp.base, rs.limit,
                   rs.in_use, rs.peak, rs.blocks, rs.refused,
                   tn->m->dev.reply_timeout / 1000000, rs.timeouts,
                   reqbuf_aligned () ? "true" : "false",
                   hangup_state_name (hangup_guard_state (NULL)));
  }
  strbuf_printf (o, ",\"connections\":%u,\"max_connections\":%u,"
                 "\"refused_connections\":%" PRIu64,
                 __atomic_load_n (&tn->nconns, __ATOMIC_RELAXED),
                 tn->m->dev.max_connections,
                 __atomic_load_n (&tn->refused, __ATOMIC_RELAXED));
  if (tn->ctl) {
    struct control_stats cs;

    control_get_stats (tn->ctl, &cs);
    strbuf_printf (o, ",\"control\":{\"clients\":%u,\"max_clients\":%u,"
                   "\"timeout_ms\":%" PRIu64 ",\"refused\":%" PRIu64
                   ",\"timeouts\":%" PRIu64 ",\"commands\":%" PRIu64
                   ",\"deferred\":%" PRIu64 ",\"accept_pauses\":%" PRIu64
                   ",\"busy_ms\":%" PRIu64 ",\"duty_pct\":%u,"
                   "\"line_max\":%u}", cs.clients, cs.max_clients,
                   cs.timeout_ns / 1000000, cs.refused, cs.timeouts,
                   cs.commands, cs.deferred, cs.pauses,
                   cs.busy_ns / 1000000, cs.duty_pct, CTL_LINE_MAX);
  }
  if (tn->dm) {
    char buf[512];

    devmodel_describe (tn->dm, buf, sizeof buf);
    strbuf_printf (o, ",\"model\":");
    json_str (o, buf);
  }
  strbuf_printf (o, ",");
  json_iostat (o, &tn->total, now, 100.);
  strbuf_printf (o, "},\"groups\":[");
  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    const struct tn_group *g = &tn->groups[i];

    strbuf_printf (o, "%s{\"name\":", i ? "," : "");
    json_str (o, g->cg->name);
    strbuf_printf (o, ",\"weight\":%u,\"class\":\"%s\",\"prio\":%u",
                   g->weight, sched_class_name (g->cg->cls), g->cg->prio);
    if (tn_is_cfq (tn)) {
      struct cfq_group_stats gs;

      cfq_group_get_stats (tn->s, g->sg, &gs);
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
      /* Caps and reservation: the settings given, and what they did. */
      strbuf_printf (o, ",\"qos\":{");
      for (size_t k = 0; k < qos_nr_keys; k++) {
        uint64_t v = qos_conf_get (&g->qos, &qos_keys[k]);
        if (v)
          strbuf_printf (o, "\"%s\":%" PRIu64 ",", qos_keys[k].name, v);
      }
      strbuf_printf (o, "\"held\":%s,\"throttled\":%" PRIu64
                     ",\"reserved\":%" PRIu64 "}",
                     gs.qos_held ? "true" : "false", gs.qos_throttled,
                     gs.qos_reserved);
    }
    strbuf_printf (o, ",");
    json_iostat (o, &g->io, now, sn.gshare[i]);
    strbuf_printf (o, "}");
  }
  strbuf_printf (o, "],\"exports\":[");
  for (size_t i = 0; i < tn->m->nr_exports; i++) {
    const struct tn_export *e = &tn->exports[i];

    strbuf_printf (o, "%s{\"name\":", i ? "," : "");
    json_str (o, e->ce->name);
    strbuf_printf (o, ",\"group\":");
    json_str (o, tn->m->groups[e->ce->group].name);
    if (e->ce->file) {
      strbuf_printf (o, ",\"file\":");
      json_str (o, e->ce->file);
    }
    /* An export with a file of its own: all of it (the model says 0). */
    strbuf_printf (o, ",\"offset\":%" PRIu64 ",\"size\":%" PRIu64
                   ",\"readonly\":%s,\"writes\":\"%s\",",
                   e->ce->offset,
                   e->ce->file ? bk_export (i)->dev.size : e->ce->size,
                   e->ce->readonly ? "true" : "false",
                   e->ce->writes_sync ? "sync"
                   : e->ce->writes_async ? "async" : "auto");
    strbuf_printf (o, "\"tls\":\"%s\",\"connections\":%u,"
                   "\"max_connections\":%u,\"refused_connections\":%"
                   PRIu64 ",", e->ce->tls_required ? "require" : "optional",
                   __atomic_load_n (&e->nconns, __ATOMIC_RELAXED),
                   e->ce->max_connections,
                   __atomic_load_n (&e->refused, __ATOMIC_RELAXED));
    {
      /* The file's, shared by every export on the same file. */
      const struct backing *b = bk_export (i);

      if (b->shared)
        strbuf_printf (o, "\"range_lock_waits\":%" PRIu64 ","
                       "\"writeback_errors\":%" PRIu64 ",",
                       rl_waits (&b->shared->rl),
                       __atomic_load_n (&b->shared->wb_errors,
                                        __ATOMIC_RELAXED));
    }
    json_iostat (o, &e->io, now, sn.eshare[i]);
    strbuf_printf (o, "}");
  }
  strbuf_printf (o, "],\"connections\":[");
  list_for_each (p, &tn->conns) {
    const struct tn_conn *c = list_entry (p, struct tn_conn, link);

    strbuf_printf (o, "%s{\"id\":%" PRIu64 ",\"export\":", sep, c->id);
    json_str (o, tn->m->exports[c->exp].name);
    strbuf_printf (o, ",\"group\":");
    json_str (o, tn->m->groups[tn->m->exports[c->exp].group].name);
    strbuf_printf (o, ",");
    json_iostat (o, &c->io, now, conn_share (tn, &c->io));
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
  /* One word: blanks and control characters become '_', bytes that
   * are not UTF-8 '?' (the config refuses both in names).
   */
  for (size_t i = 0, n = strlen (s); i < n;) {
    uint32_t cp;
    size_t cl = utf8_decode (s + i, n - i, &cp);

    if (cl == 0)
      strbuf_printf (o, "?");
    else if (cp == ' ' || utf8_is_control (cp))
      strbuf_printf (o, "_");
    else
      strbuf_printf (o, "%.*s", (int) cl, s + i);
    i += cl ? cl : 1;
  }
}

void
stats_flat (const struct tenants *tn, struct strbuf *o)
{
  uint64_t now = engine_now ();
  struct snapshot sn;
  struct list *p;

  if (take_shares (tn, &sn)) {
    o->oom = 1;
    return;
  }
  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    const struct tn_group *g = &tn->groups[i];

    strbuf_printf (o, "group ");
    flat_name (o, g->cg->name);
    strbuf_printf (o, " weight=%u class=%s prio=%u", g->weight,
                   sched_class_name (g->cg->cls), g->cg->prio);
    if (tn_is_cfq (tn)) {
      struct cfq_group_stats gs;

      cfq_group_get_stats (tn->s, g->sg, &gs);
      strbuf_printf (o, " vdisktime=%" PRIu64 " slices=%" PRIu64
                     " idle_hits=%" PRIu64 " idle_timeouts=%" PRIu64
                     " used_ms=%" PRIu64, cfq_group_vdisktime (tn->s, g->sg),
                     gs.slices, gs.idle_hits, gs.idle_timeouts,
                     gs.used_ns / 1000000);
      for (size_t k = 0; k < qos_nr_keys; k++) {
        uint64_t v = qos_conf_get (&g->qos, &qos_keys[k]);
        if (v)
          strbuf_printf (o, " %s=%" PRIu64, qos_keys[k].name, v);
      }
      if (!qos_conf_empty (&g->qos))
        strbuf_printf (o, " held=%d throttled=%" PRIu64 " reserved=%" PRIu64,
                       gs.qos_held, gs.qos_throttled, gs.qos_reserved);
    }
    flat_iostat (o, &g->io, now, sn.gshare[i]);
    strbuf_printf (o, "\n");
  }
  for (size_t i = 0; i < tn->m->nr_exports; i++) {
    const struct tn_export *e = &tn->exports[i];

    strbuf_printf (o, "export ");
    flat_name (o, e->ce->name);
    strbuf_printf (o, " group=");
    flat_name (o, tn->m->groups[e->ce->group].name);
    flat_iostat (o, &e->io, now, sn.eshare[i]);
    strbuf_printf (o, "\n");
  }
  list_for_each (p, &tn->conns) {
    const struct tn_conn *c = list_entry (p, struct tn_conn, link);

    strbuf_printf (o, "conn %" PRIu64 " export=", c->id);
    flat_name (o, tn->m->exports[c->exp].name);
    strbuf_printf (o, " group=");
    flat_name (o, tn->m->groups[tn->m->exports[c->exp].group].name);
    flat_iostat (o, &c->io, now, conn_share (tn, &c->io));
    strbuf_printf (o, "\n");
  }
  strbuf_printf (o, "device - scheduler=%s mode=%s", tn->sched_name,
                 mode_now (tn));
  if (tn_is_cfq (tn)) {
    struct cfq_stats cs;

    cfq_get_stats (tn->s, &cs);
    strbuf_printf (o, " hw_tag=%d slices=%" PRIu64 " idle_hits=%" PRIu64
                   " idle_timeouts=%" PRIu64 " preemptions=%" PRIu64,
                   cs.hw_tag, cs.slices, cs.idle_hits, cs.idle_timeouts,
                   cs.preemptions);
  }
  else
    strbuf_printf (o, " hw_tag=-1");
  strbuf_printf (o, " inflight=%u held=%u cancelled=%" PRIu64
                 " queue_depth=%u emulate=%s",
                 engine_inflight (tn->e), engine_held (tn->e),
                 engine_cancelled (tn->e), engine_depth (tn->e),
                 tn->m->dev.emulate ? tn->m->dev.emulate : "none");
  {
    struct bounce_stats bs;

    bounce_stats (&bs);
    strbuf_printf (o, " buffers_in_use=%zu buffers_total=%zu buffers_cap=%zu"
                   " buffer_waits=%" PRIu64, bs.in_use, bs.total, bs.cap,
                   bs.waits);
  }
  {
    struct reqbuf_stats rs;

    reqbuf_stats (&rs);
    strbuf_printf (o, " request_buffers=%" PRIu64 " request_limit=%" PRIu64
                   " requests_refused=%" PRIu64 " reply_timeouts=%" PRIu64,
                   rs.in_use, rs.limit, rs.refused, rs.timeouts);
  }
  flat_iostat (o, &tn->total, now, 100.);
  strbuf_printf (o, "\n");
  free_shares (&sn);
}

/* ---- Prometheus's text exposition format --------------------------------
 *
 * One family per line group, "# HELP" and "# TYPE" first; label values
 * escaped (\\, \", \n); no blank line anywhere (the control socket ends an
 * answer with one).  Tenants are exports (clients pick one by name) and
 * groups (their weights); each gets its weight's share next to the share
 * it measured, both over what moved in the last second, as the "share"
 * of "stats".
 */

static void
prom_str (struct strbuf *o, const char *s)
{
  strbuf_printf (o, "\"");
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      strbuf_printf (o, "\\%c", *s);
    else if (*s == '\n')
      strbuf_printf (o, "\\n");
    else
      strbuf_printf (o, "%c", *s);
  }
  strbuf_printf (o, "\"");
}

static void
prom_family (struct strbuf *o, const char *name, const char *type,
             const char *help)
{
  strbuf_printf (o, "# HELP nbdkit_cfq_%s %s\n# TYPE nbdkit_cfq_%s %s\n",
                 name, help, name, type);
}

/* The labels of one entry: group="g" or export="e",group="g". */
struct prom_who {
  const char *kind;             /* "group" or "export" */
  const char *name;
  const char *group;            /* exports: their group */
};

static void
prom_labels (struct strbuf *o, const struct prom_who *w, const char *extra_k,
             const char *extra_v)
{
  strbuf_printf (o, "{%s=", w->kind);
  prom_str (o, w->name);
  if (w->group) {
    strbuf_printf (o, ",group=");
    prom_str (o, w->group);
  }
  if (extra_k) {
    strbuf_printf (o, ",%s=", extra_k);
    prom_str (o, extra_v);
  }
  strbuf_printf (o, "}");
}

static void
prom_value (struct strbuf *o, const char *kind, const char *name,
            const struct prom_who *w, const char *ek, const char *ev,
            double v)
{
  strbuf_printf (o, "nbdkit_cfq_%s_%s", kind, name);
  prom_labels (o, w, ek, ev);
  strbuf_printf (o, " %.9g\n", v);
}

/* Every family of one kind (groups or exports), for the N entries. */
static void
prom_kind (struct strbuf *o, const char *kind, size_t n,
           const struct prom_who *who, const struct iostat *const *io,
           const double *share, const double *wshare, const unsigned *weight,
           const unsigned *conns)
{
  static const char *const q[] = { "0.5", "0.99", "0.999" };
  static const double qv[] = { .5, .99, .999 };
  char f[64];

  if (weight) {
    snprintf (f, sizeof f, "%s_weight", kind);
    prom_family (o, f, "gauge", "The group's weight (100..1000), as last"
                 " set.");
    for (size_t i = 0; i < n; i++)
      prom_value (o, kind, "weight", &who[i], NULL, NULL, weight[i]);
  }
  snprintf (f, sizeof f, "%s_weight_share", kind);
  prom_family (o, f, "gauge", "The share its group's weight gives it:"
               " weight over the weights of the groups that moved data in"
               " the last second (all groups when none did), split evenly"
               " between the group's exports that moved data.");
  for (size_t i = 0; i < n; i++)
    prom_value (o, kind, "weight_share", &who[i], NULL, NULL, wshare[i]);
  snprintf (f, sizeof f, "%s_share", kind);
  prom_family (o, f, "gauge", "Its measured share of the bytes moved in the"
               " last second (of all bytes since start when none moved).");
  for (size_t i = 0; i < n; i++)
    prom_value (o, kind, "share", &who[i], NULL, NULL, share[i] / 100.);
  snprintf (f, sizeof f, "%s_iops", kind);
  prom_family (o, f, "gauge", "Requests completed per second, over the last"
               " second.");
  for (size_t i = 0; i < n; i++)
    prom_value (o, kind, "iops", &who[i], NULL, NULL, io[i]->iops);
  snprintf (f, sizeof f, "%s_bytes_per_second", kind);
  prom_family (o, f, "gauge", "Bytes moved per second, over the last"
               " second.");
  for (size_t i = 0; i < n; i++)
    prom_value (o, kind, "bytes_per_second", &who[i], NULL, NULL,
                io[i]->bps);
  snprintf (f, sizeof f, "%s_requests_total", kind);
  prom_family (o, f, "counter", "Requests completed, by operation.");
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < IOSTAT_OPS; k++)
      prom_value (o, kind, "requests_total", &who[i], "op", op_names[k],
                  (double) io[i]->reqs[k]);
  snprintf (f, sizeof f, "%s_bytes_total", kind);
  prom_family (o, f, "counter", "Bytes moved, by operation.");
  for (size_t i = 0; i < n; i++)
    for (unsigned k = 0; k < IOSTAT_OPS; k++)
      prom_value (o, kind, "bytes_total", &who[i], "op", op_names[k],
                  (double) io[i]->bytes[k]);
  snprintf (f, sizeof f, "%s_errors_total", kind);
  prom_family (o, f, "counter", "Requests that failed.");
  for (size_t i = 0; i < n; i++)
    prom_value (o, kind, "errors_total", &who[i], NULL, NULL,
                (double) io[i]->errors);
  snprintf (f, sizeof f, "%s_latency_seconds", kind);
  prom_family (o, f, "summary", "Latency in the server, from a request's"
               " arrival in the scheduler to its completion.");
  for (size_t i = 0; i < n; i++) {
    for (unsigned k = 0; k < 3; k++)
      prom_value (o, kind, "latency_seconds", &who[i], "quantile", q[k],
                  (double) hist_quantile (&io[i]->lat, qv[k]) / 1e9);
    strbuf_printf (o, "nbdkit_cfq_%s_latency_seconds_sum", kind);
    prom_labels (o, &who[i], NULL, NULL);
    strbuf_printf (o, " %.9g\n", (double) io[i]->lat.sum / 1e9);
    strbuf_printf (o, "nbdkit_cfq_%s_latency_seconds_count", kind);
    prom_labels (o, &who[i], NULL, NULL);
    strbuf_printf (o, " %" PRIu64 "\n", io[i]->lat.count);
  }
  if (conns) {
    snprintf (f, sizeof f, "%s_connections", kind);
    prom_family (o, f, "gauge", "Client connections open now.");
    for (size_t i = 0; i < n; i++)
      prom_value (o, kind, "connections", &who[i], NULL, NULL, conns[i]);
  }
}

void
stats_prometheus (const struct tenants *tn, struct strbuf *o)
{
  size_t ng = tn->m->nr_groups, ne = tn->m->nr_exports;
  struct snapshot sn;
  struct prom_who *gw = calloc (ng + 1, sizeof *gw);
  struct prom_who *ew = calloc (ne + 1, sizeof *ew);
  const struct iostat **gio = calloc (ng + 1, sizeof *gio);
  const struct iostat **eio = calloc (ne + 1, sizeof *eio);
  double *gws = calloc (ng + 1, sizeof *gws);
  double *ews = calloc (ne + 1, sizeof *ews);
  unsigned *weight = calloc (ng + 1, sizeof *weight);
  unsigned *conns = calloc (ne + 1, sizeof *conns);
  unsigned *gactive = calloc (ng + 1, sizeof *gactive);
  double wsum = 0;
  bool any = false;
  struct list *p;

  if (!gw || !ew || !gio || !eio || !gws || !ews || !weight || !conns
      || !gactive || take_shares (tn, &sn)) {
    o->oom = 1;
    goto out;
  }
  list_for_each (p, &tn->conns)
    conns[list_entry (p, struct tn_conn, link)->exp]++;
  for (size_t i = 0; i < ng; i++)
    any |= tn->groups[i].io.bps > 0;
  /* Weight shares among the groups that moved data (all when none did),
   * a group's split evenly between its exports that moved data.
   */
  for (size_t i = 0; i < ng; i++) {
    const struct tn_group *g = &tn->groups[i];
    gw[i] = (struct prom_who) { "group", g->cg->name, NULL };
    gio[i] = &g->io;
    weight[i] = g->weight;
    if (!any || g->io.bps > 0)
      wsum += g->weight;
  }
  for (size_t i = 0; i < ng; i++)
    if (wsum > 0 && (!any || tn->groups[i].io.bps > 0))
      gws[i] = tn->groups[i].weight / wsum;
  for (size_t i = 0; i < ne; i++) {
    const struct tn_export *e = &tn->exports[i];
    size_t g = e->ce->group;
    ew[i] = (struct prom_who) { "export", e->ce->name,
                                tn->m->groups[g].name };
    eio[i] = &e->io;
    if (!any || e->io.bps > 0)
      gactive[g]++;
  }
  for (size_t i = 0; i < ne; i++) {
    size_t g = tn->exports[i].ce->group;
    if (gactive[g] && (!any || tn->exports[i].io.bps > 0))
      ews[i] = gws[g] / gactive[g];
  }

  prom_family (o, "info", "gauge", "The scheduler, how it charges, and the"
               " device model; always 1.");
  strbuf_printf (o, "nbdkit_cfq_info{scheduler=");
  prom_str (o, tn->sched_name);
  strbuf_printf (o, ",mode=");
  prom_str (o, mode_now (tn));
  strbuf_printf (o, ",emulate=");
  prom_str (o, tn->m->dev.emulate ? tn->m->dev.emulate : "none");
  strbuf_printf (o, "} 1\n");
  prom_family (o, "device_inflight", "gauge", "Requests at the device now.");
  strbuf_printf (o, "nbdkit_cfq_device_inflight %u\n", engine_inflight (tn->e));
  prom_family (o, "device_cancelled_total", "counter", "Requests taken back"
               " from the scheduler: their client went away or the server"
               " was stopping.");
  strbuf_printf (o, "nbdkit_cfq_device_cancelled_total %" PRIu64 "\n",
                 engine_cancelled (tn->e));
  prom_family (o, "device_queue_depth", "gauge", "Most requests at the"
               " device at once (queue_depth).");
  strbuf_printf (o, "nbdkit_cfq_device_queue_depth %u\n", engine_depth (tn->e));
  prom_family (o, "device_iops", "gauge", "Requests completed per second,"
               " over the last second, all tenants.");
  strbuf_printf (o, "nbdkit_cfq_device_iops %.9g\n", tn->total.iops);
  prom_family (o, "device_bytes_per_second", "gauge", "Bytes moved per"
               " second, over the last second, all tenants.");
  strbuf_printf (o, "nbdkit_cfq_device_bytes_per_second %.9g\n",
                 tn->total.bps);
  prom_kind (o, "group", ng, gw, gio, sn.gshare, gws, weight, NULL);
  prom_kind (o, "export", ne, ew, eio, sn.eshare, ews, NULL, conns);
  free_shares (&sn);
out:
  free (gw);
  free (ew);
  free (gio);
  free (eio);
  free (gws);
  free (ews);
  free (weight);
  free (conns);
  free (gactive);
}


/* Written at exit, so the path may have changed since the start: the
 * rules of outfile.c are checked again on the opened file.
 */
void
stats_write_file (const struct tenants *tn)
{
  const char *path = tn->stats_path;
  struct strbuf b = { 0 };
  size_t off = 0;
  int fd;

  stats_json (tn, &b);
  if (b.oom || !b.s) {
    nbdkit_error ("cfq: stats=%s: out of memory", path);
    strbuf_free (&b);
    return;
  }
  fd = outfile_open ("stats", path);
  if (fd == -1) {
    strbuf_free (&b);
    return;
  }
  while (off < b.len) {
    ssize_t r = write (fd, b.s + off, b.len - off);

    if (r == -1 && errno == EINTR)
      continue;
    if (r <= 0) {
      nbdkit_error ("cfq: stats=%s: write: %m", path);
      goto out;
    }
    off += r;
  }
 out:
  if (close (fd) == -1)
    nbdkit_error ("cfq: stats=%s: close: %m", path);
  strbuf_free (&b);
}
