/* stats.c: the statistics, as JSON ("stats", stats=FILE) and as one
 * line per group, export, connection and the device ("stats flat").
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
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "bounce.h"
#include "cfq.h"
#include "devmodel.h"
#include "stats.h"

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
  }
  else
    strbuf_printf (o, ",\"hw_tag\":-1");
  strbuf_printf (o, ",\"inflight\":%u,\"held\":%u,\"queue_depth\":%u,"
                 "\"emulate\":\"%s\"", engine_inflight (tn->e),
                 engine_held (tn->e), engine_depth (tn->e),
                 tn->m->dev.emulate ? tn->m->dev.emulate : "none");
  {
    struct bounce_stats bs;

    bounce_stats (&bs);
    strbuf_printf (o, ",\"buffers\":{\"cap\":%zu,\"total\":%zu,"
                   "\"in_use\":%zu,\"peak\":%zu,\"gets\":%" PRIu64
                   ",\"waits\":%" PRIu64 ",\"wait_ms\":%.3f,\"allocs\":%"
                   PRIu64 ",\"frees\":%" PRIu64 "}", bs.cap, bs.total,
                   bs.in_use, bs.peak, bs.gets, bs.waits, bs.wait_ns / 1e6,
                   bs.allocs, bs.frees);
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
                   g->weight, tn_class_names[g->cg->cls], g->cg->prio);
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
    strbuf_printf (o, ",\"offset\":%" PRIu64 ",\"size\":%" PRIu64
                   ",\"readonly\":%s,\"writes\":\"%s\",",
                   e->ce->offset, e->ce->size,
                   e->ce->readonly ? "true" : "false",
                   e->ce->writes_sync ? "sync" : "async");
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
  for (; *s; s++)
    strbuf_printf (o, "%c", *s == ' ' || *s == '\n' ? '_' : *s);
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
                   tn_class_names[g->cg->cls], g->cg->prio);
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
  strbuf_printf (o, " inflight=%u held=%u queue_depth=%u emulate=%s",
                 engine_inflight (tn->e), engine_held (tn->e),
                 engine_depth (tn->e),
                 tn->m->dev.emulate ? tn->m->dev.emulate : "none");
  {
    struct bounce_stats bs;

    bounce_stats (&bs);
    strbuf_printf (o, " buffers_in_use=%zu buffers_total=%zu buffers_cap=%zu"
                   " buffer_waits=%" PRIu64, bs.in_use, bs.total, bs.cap,
                   bs.waits);
  }
  flat_iostat (o, &tn->total, now, 100.);
  strbuf_printf (o, "\n");
  free_shares (&sn);
}

void
stats_write_file (const struct tenants *tn)
{
  struct strbuf b = { 0 };
  FILE *f;

  stats_json (tn, &b);
  if (b.oom || !b.s) {
    nbdkit_error ("cfq: stats=%s: out of memory", tn->stats_path);
    strbuf_free (&b);
    return;
  }
  f = fopen (tn->stats_path, "we");
  if (!f || fputs (b.s, f) == EOF || fclose (f) == EOF)
    nbdkit_error ("cfq: stats=%s: %m", tn->stats_path);
  strbuf_free (&b);
}
