/* statsout.c: the server's statistics, as JSON ("stats", stats=FILE), as
 * one line per group, export, connection and the device ("stats flat"),
 * and in Prometheus's text format ("metrics", metrics=FILE).
 *
 * One walk makes all three (statfmt.c writes them): the device, then
 * each group, export and connection, each a record of tables of fields
 * (include/statfield.h) with the snapshot they read.  The tables below
 * are the plugin's own statistics, each defined once with its names,
 * unit, type and help: the engine, the buffer pool, the memory budget,
 * the control socket, the tenants' settings, and the accounting of
 * iostat.c that tenants.c feeds on every completion.  The scheduler's
 * come from the scheduler itself (sched_stats): this file does not know
 * which policy it runs.
 *
 * Shares follow one rule (share_pct) for groups among groups, exports
 * among exports, and each connection of the device.  In Prometheus,
 * groups and exports also carry the share their weight gives them, over
 * what moved in the last second like the measured one.
 *
 * Threads: the dispatcher's, under the engine lock (a control command,
 * the one-second tick, or the teardown hook for stats=FILE): nothing
 * else writes what these read, so they take no lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "backing.h"
#include "bounce.h"
#include "devmodel.h"
#include "gateway.h"
#include "hangup.h"
#include "outfile.h"
#include "reqbuf.h"
#include "statfmt.h"
#include "statsout.h"

/* ---- an iostat: rates, latency, counts ---------------------------------- */

struct lat_snap {
  uint64_t p50, p99, p999, max, mean;   /* ns */
  uint64_t sum;                 /* ns */
  uint64_t count;               /* requests */
};

struct io_snap {
  double iops;                  /* requests/s, last second */
  double bps;                   /* bytes/s, last second */
  double share;                 /* %: see share_pct */
  struct lat_snap lat;
  double avg_iops, avg_bps;     /* since start (or reset) */
  uint64_t q50, q99, d50, d99;  /* ns: in the scheduler, at the device */
  uint64_t reqs[IOSTAT_OPS];    /* requests by op */
  uint64_t bytes_all;           /* bytes of every op */
  uint64_t bytes[IOSTAT_OPS];   /* bytes by op */
  uint64_t errors;              /* requests */
};

#define L(f) offsetof (struct lat_snap, f)
#define LAT_MS(n, f, sh, q, h) \
  { .name = n, .prom = q, .unit = "ms", .repr = STAT_U64, .off = L (f), \
    .show = (sh), .div = 1e6, .dec = 3, .pdiv = 1e9, .help = h }

static const struct stat_field lat_fields[] = {
  LAT_MS ("p50_ms", p50, STAT_ALL, "0.5", "Median latency."),
  LAT_MS ("p99_ms", p99, STAT_ALL, "0.99", "99th percentile of latency."),
  LAT_MS ("p999_ms", p999, STAT_ALL, "0.999", "99.9th percentile of"
          " latency."),
  LAT_MS ("max_ms", max, STAT_JF, NULL, "Longest latency."),
  LAT_MS ("mean_ms", mean, STAT_J, NULL, "Mean latency."),
  { .name = "sum_ns", .prom = "_sum", .unit = "ns", .repr = STAT_U64,
    .off = L (sum), .show = STAT_P, .pdiv = 1e9, .help = "Latencies added"
    " up." },
  { .name = "count", .prom = "_count", .unit = "requests",
    .repr = STAT_U64, .off = L (count), .show = STAT_P,
    .help = "Requests whose latency was taken." },
};
#undef L

#define IO(f) offsetof (struct io_snap, f)
#define IO_MS(n, f, h) \
  { .name = n, .unit = "ms", .repr = STAT_U64, .off = IO (f), \
    .show = STAT_JF, .div = 1e6, .dec = 3, .help = h }
#define BY_OP(arr, u, n, fl, sh, i, h) \
  { .name = n, .flat = fl, .unit = u, .repr = STAT_U64, \
    .off = IO (arr[i]), .show = (sh), .help = h }

static const struct stat_field reqs_fields[] = {
  BY_OP (reqs, "requests", "read", "reads", STAT_ALL, RQ_READ,
         "Reads completed."),
  BY_OP (reqs, "requests", "write", "writes", STAT_ALL, RQ_WRITE,
         "Writes completed."),
  BY_OP (reqs, "requests", "flush", "flushes", STAT_ALL, RQ_FLUSH,
         "Flushes completed."),
  BY_OP (reqs, "requests", "trim", "trims", STAT_ALL, RQ_TRIM,
         "Trims completed."),
  BY_OP (reqs, "requests", "zero", "zeroes", STAT_ALL, RQ_ZERO,
         "Write-zeroes completed."),
};

static const struct stat_field bytes_fields[] = {
  BY_OP (bytes, "bytes", "read", NULL, STAT_JP, RQ_READ, "Bytes read."),
  BY_OP (bytes, "bytes", "write", NULL, STAT_JP, RQ_WRITE,
         "Bytes written."),
  BY_OP (bytes, "bytes", "flush", NULL, STAT_JP, RQ_FLUSH,
         "Bytes of flushes (0)."),
  BY_OP (bytes, "bytes", "trim", NULL, STAT_JP, RQ_TRIM, "Bytes trimmed."),
  BY_OP (bytes, "bytes", "zero", NULL, STAT_JP, RQ_ZERO, "Bytes zeroed."),
};

/* In JSON's order; the flat records' is io_forder. */
enum {
  IO_REQUESTS, IO_BYTES, IO_BYTES_ALL, IO_ERRORS, IO_IOPS, IO_MIBS,
  IO_AVG_IOPS, IO_AVG_MIBS, IO_SHARE, IO_LAT, IO_Q50, IO_Q99, IO_D50,
  IO_D99,
};

static const struct stat_field io_fields[] = {
  [IO_REQUESTS] = { .name = "requests", .type = STAT_COUNTER, .label = "op",
    .show = STAT_ALL, STAT_SUB (reqs_fields),
    .help = "Requests completed, by operation." },
  [IO_BYTES] = { .name = "bytes", .type = STAT_COUNTER, .label = "op",
    .show = STAT_JP, STAT_SUB (bytes_fields),
    .help = "Bytes moved, by operation." },
  [IO_BYTES_ALL] = { .name = "bytes_all", .flat = "bytes", .unit = "bytes",
    .type = STAT_COUNTER, .repr = STAT_U64, .off = IO (bytes_all),
    .show = STAT_F, .help = "Bytes moved, every operation." },
  [IO_ERRORS] = { .name = "errors", .unit = "requests",
    .type = STAT_COUNTER, .repr = STAT_U64, .off = IO (errors),
    .show = STAT_ALL, .help = "Requests that failed." },
  [IO_IOPS] = { .name = "iops", .unit = "requests/s", .repr = STAT_DOUBLE,
    .off = IO (iops), .show = STAT_ALL, .dec = 1,
    .help = "Requests completed per second, over the last second." },
  [IO_MIBS] = { .name = "mibs", .prom = "bytes_per_second",
    .unit = "MiB/s", .repr = STAT_DOUBLE, .off = IO (bps),
    .show = STAT_ALL, .div = 1048576, .dec = 3,
    .help = "Bytes moved per second, over the last second." },
  [IO_AVG_IOPS] = { .name = "avg_iops", .unit = "requests/s",
    .repr = STAT_DOUBLE, .off = IO (avg_iops), .show = STAT_JF, .dec = 1,
    .help = "Requests completed per second since start (or reset)." },
  [IO_AVG_MIBS] = { .name = "avg_mibs", .unit = "MiB/s",
    .repr = STAT_DOUBLE, .off = IO (avg_bps), .show = STAT_JF,
    .div = 1048576, .dec = 3,
    .help = "Bytes moved per second since start (or reset)." },
  [IO_SHARE] = { .name = "share", .unit = "%", .repr = STAT_DOUBLE,
    .off = IO (share), .show = STAT_ALL | STAT_P_PEERS, .dec = 1,
    .pdiv = 100, .help = "Its measured share of the bytes moved in the"
    " last second (of all bytes since start when none moved)." },
  [IO_LAT] = { .name = "lat", .prom = "latency_seconds",
    .type = STAT_SUMMARY, .label = "quantile", .off = IO (lat),
    .show = STAT_ALL, STAT_SUB (lat_fields), .help = "Latency in the"
    " server, from a request's arrival in the scheduler to its"
    " completion." },
  [IO_Q50] = IO_MS ("q_p50_ms", q50, "Median time in the scheduler, from"
                    " arrival to dispatch."),
  [IO_Q99] = IO_MS ("q_p99_ms", q99, "99th percentile of the time in the"
                    " scheduler."),
  [IO_D50] = IO_MS ("d_p50_ms", d50, "Median time at the device, from"
                    " dispatch to completion."),
  [IO_D99] = IO_MS ("d_p99_ms", d99, "99th percentile of the time at the"
                    " device."),
};

#define IO_FORDER \
  STAT_FORDER (IO_IOPS, IO_MIBS, IO_SHARE, IO_LAT, IO_AVG_IOPS, \
               IO_AVG_MIBS, IO_Q50, IO_Q99, IO_D50, IO_D99, IO_REQUESTS, \
               IO_BYTES_ALL, IO_BYTES, IO_ERRORS)
#undef IO

static const struct stat_field io_table = {
  .show = STAT_ALL, STAT_SUB (io_fields), .forder = IO_FORDER,
};
/* The device's: the same fields, of all tenants together. */
static const struct stat_field io_all_table = {
  .show = STAT_ALL, STAT_SUB (io_fields), .forder = IO_FORDER,
  .help = "all tenants",
};

static void
io_snap (const struct iostat *io, uint64_t now, double share,
         struct io_snap *s)
{
  static const double l3[] = { .5, .99, .999 }, l2[] = { .5, .99 };
  uint64_t l[3], q[2], d[2];

  memset (s, 0, sizeof *s);
  hist_quantiles (&io->lat, l3, 3, l);
  hist_quantiles (&io->qlat, l2, 2, q);
  hist_quantiles (&io->dlat, l2, 2, d);
  s->iops = io->iops;
  s->bps = io->bps;
  s->share = share;
  s->lat = (struct lat_snap) { l[0], l[1], l[2], io->lat.max,
                               hist_mean (&io->lat), io->lat.sum,
                               io->lat.count };
  s->avg_iops = iostat_avg_iops (io, now);
  s->avg_bps = iostat_avg_bps (io, now);
  s->q50 = q[0];
  s->q99 = q[1];
  s->d50 = d[0];
  s->d99 = d[1];
  memcpy (s->reqs, io->reqs, sizeof s->reqs);
  memcpy (s->bytes, io->bytes, sizeof s->bytes);
  s->bytes_all = iostat_total_bytes (io);
  s->errors = io->errors;
}

static void
write_io (struct statfmt *w, const struct stat_field *t,
          const struct iostat *io, uint64_t now, double share)
{
  struct io_snap s;

  io_snap (io, now, share, &s);
  statfmt_table (w, t, &s);
}

/* ---- shares ------------------------------------------------------------- */

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

/* Shares of n iostats among themselves, into out[i]. */
static void
shares (size_t n, const struct iostat *(*get) (const struct tenants *,
                                               size_t),
        const struct tenants *tn, double *out)
{
  double sum_bps = 0, sum_bytes = 0;

  for (size_t i = 0; i < n; i++) {
    sum_bps += get (tn, i)->bps;
    sum_bytes += (double) iostat_total_bytes (get (tn, i));
  }
  for (size_t i = 0; i < n; i++)
    out[i] = share_pct (get (tn, i), sum_bps, sum_bytes);
}

static const struct iostat *
group_io (const struct tenants *tn, size_t i)
{
  return &tn->groups[i].io;
}

static const struct iostat *
export_io (const struct tenants *tn, size_t i)
{
  return &tn->exports[i].io;
}

/* What one walk computes first: the shares measured, and the shares
 * the weights give, of groups and exports.
 */
struct snapshot {
  uint64_t now;                 /* ns: engine_now () at the start */
  double *gshare, *eshare;      /* % */
  double *gws, *ews;            /* fractions of 1 */
};

static void
weight_shares (const struct tenants *tn, struct snapshot *sn,
               unsigned *active)
{
  size_t ng = tn->m->nr_groups, ne = tn->m->nr_exports;
  double wsum = 0;
  bool any = false;

  for (size_t i = 0; i < ng; i++)
    any |= tn->groups[i].io.bps > 0;
  /* Among the groups that moved data (all when none did), a group's
   * split evenly between its exports that moved data.
   */
  for (size_t i = 0; i < ng; i++)
    if (!any || tn->groups[i].io.bps > 0)
      wsum += tn->groups[i].weight;
  for (size_t i = 0; i < ng; i++)
    if (wsum > 0 && (!any || tn->groups[i].io.bps > 0))
      sn->gws[i] = tn->groups[i].weight / wsum;
  for (size_t i = 0; i < ne; i++)
    if (!any || tn->exports[i].io.bps > 0)
      active[tn->exports[i].ce->group]++;
  for (size_t i = 0; i < ne; i++) {
    size_t g = tn->exports[i].ce->group;

    if (active[g] && (!any || tn->exports[i].io.bps > 0))
      sn->ews[i] = sn->gws[g] / active[g];
  }
}

static int
take_snapshot (const struct tenants *tn, struct snapshot *sn)
{
  size_t ng = tn->m->nr_groups, ne = tn->m->nr_exports;
  unsigned *active = calloc (ng + 1, sizeof *active);

  sn->now = engine_now ();
  sn->gshare = calloc (ng + 1, sizeof *sn->gshare);
  sn->eshare = calloc (ne + 1, sizeof *sn->eshare);
  sn->gws = calloc (ng + 1, sizeof *sn->gws);
  sn->ews = calloc (ne + 1, sizeof *sn->ews);
  if (!active || !sn->gshare || !sn->eshare || !sn->gws || !sn->ews) {
    free (active);
    free (sn->gshare);
    free (sn->eshare);
    free (sn->gws);
    free (sn->ews);
    return -ENOMEM;
  }
  shares (ng, group_io, tn, sn->gshare);
  shares (ne, export_io, tn, sn->eshare);
  weight_shares (tn, sn, active);
  free (active);
  return 0;
}

static void
free_snapshot (struct snapshot *sn)
{
  free (sn->gshare);
  free (sn->eshare);
  free (sn->gws);
  free (sn->ews);
}

/* ---- the device ---------------------------------------------------------- */

struct dev_snap {
  const char *scheduler;        /* the policy's name */
  const char *mode;             /* how groups are charged: auto, time, iops */
  const char *emulate;          /* the device model's name, or "none" */
  const char *model;            /* its description, or NULL */
  unsigned inflight, held;      /* requests at the device, of them held */
  unsigned queue_depth;         /* requests */
  uint64_t cancelled;           /* requests taken back */
  unsigned max_request;         /* bytes */
  unsigned connections, max_connections;        /* clients */
  uint64_t refused;             /* clients */
};

#define DV(f) offsetof (struct dev_snap, f)
#define DV_INFO "The scheduler, how it charges, and the device model;" \
  " always 1."

static const struct stat_field dev_head_fields[] = {
  { .name = "scheduler", .prom = "info", .repr = STAT_STR,
    .off = DV (scheduler), .show = STAT_ALL, .help = DV_INFO },
  { .name = "mode", .prom = "info", .repr = STAT_STR, .off = DV (mode),
    .show = STAT_ALL, .help = DV_INFO },
};

static const struct stat_field dev_engine_fields[] = {
  { .name = "inflight", .unit = "requests", .repr = STAT_UINT,
    .off = DV (inflight), .show = STAT_ALL,
    .help = "Requests at the device now." },
  { .name = "held", .unit = "requests", .repr = STAT_UINT,
    .off = DV (held), .show = STAT_JF, .help = "Of the requests at the"
    " device, those whose completion an emulated device holds." },
  { .name = "cancelled", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = DV (cancelled), .show = STAT_ALL,
    .help = "Requests taken back from the scheduler: their client went away"
    " or the server was stopping." },
  { .name = "queue_depth", .unit = "requests", .repr = STAT_UINT,
    .off = DV (queue_depth), .show = STAT_ALL,
    .help = "Most requests at the device at once (queue_depth)." },
  { .name = "emulate", .prom = "info", .repr = STAT_STR,
    .off = DV (emulate), .show = STAT_ALL, .help = DV_INFO },
};

static const struct stat_field dev_conns_fields[] = {
  { .name = "max_request", .unit = "bytes", .repr = STAT_UINT,
    .off = DV (max_request), .show = STAT_J,
    .help = "The largest request the server takes." },
};

static const struct stat_field dev_clients_fields[] = {
  { .name = "connections", .unit = "clients", .repr = STAT_UINT,
    .off = DV (connections), .show = STAT_J,
    .help = "Client connections open now, all exports." },
  { .name = "max_connections", .unit = "clients", .repr = STAT_UINT,
    .off = DV (max_connections), .show = STAT_J,
    .help = "Most client connections at once ([device] max_connections)." },
  { .name = "refused_connections", .unit = "clients",
    .type = STAT_COUNTER, .repr = STAT_U64, .off = DV (refused),
    .show = STAT_J, .help = "Clients refused for a max_connections." },
};

static const struct stat_field dev_model_fields[] = {
  { .name = "model", .repr = STAT_STR, .off = DV (model), .show = STAT_J,
    .help = "The emulated device's model and its parameters." },
};
#undef DV

static const struct stat_field dev_head = { .show = STAT_ALL,
                                            STAT_SUB (dev_head_fields) };
static const struct stat_field dev_engine = { .show = STAT_ALL,
                                              STAT_SUB (dev_engine_fields) };
static const struct stat_field dev_conns = { .show = STAT_ALL,
                                             STAT_SUB (dev_conns_fields) };
static const struct stat_field dev_clients = {
  .show = STAT_ALL, STAT_SUB (dev_clients_fields),
};
static const struct stat_field dev_model = { .show = STAT_ALL,
                                             STAT_SUB (dev_model_fields) };

/* The buffer pool (bounce.c) and each group's part of it. */
#define BS(f) offsetof (struct bounce_stats, f)
#define BYTES(n, fl, sh, f, h) \
  { .name = n, .flat = fl, .unit = "bytes", .repr = STAT_SIZE, .off = f, \
    .show = sh, .help = h }
#define COUNT(n, fl, sh, f, h) \
  { .name = n, .flat = fl, .unit = "buffers", .type = STAT_COUNTER, \
    .repr = STAT_U64, .off = f, .show = sh, .help = h }

/* In JSON's order; the flat records have four, in_use first. */
enum {
  PL_CAP, PL_TOTAL, PL_IN_USE, PL_PEAK, PL_GETS, PL_WAITS, PL_WAIT_MS,
  PL_ALLOCS, PL_FREES, PL_SHARES, PL_ACTIVE, PL_SHARE,
};

static const struct stat_field pool_fields[] = {
  [PL_CAP] = BYTES ("cap", "buffers_cap", STAT_JF, BS (cap),
                    "Most buffer bytes allocated at once (buffer_pool)."),
  [PL_TOTAL] = BYTES ("total", "buffers_total", STAT_JF, BS (total),
                      "Buffer bytes allocated: in use and cached."),
  [PL_IN_USE] = BYTES ("in_use", "buffers_in_use", STAT_JF, BS (in_use),
                       "Buffer bytes handed out now."),
  [PL_PEAK] = BYTES ("peak", NULL, STAT_J, BS (peak),
                     "Most buffer bytes in use at once."),
  [PL_GETS] = COUNT ("gets", NULL, STAT_J, BS (gets),
                     "Buffers handed out."),
  [PL_WAITS] = COUNT ("waits", "buffer_waits", STAT_JF, BS (waits),
                      "Buffers handed out after a wait for room."),
  [PL_WAIT_MS] = { .name = "wait_ms", .unit = "ms", .repr = STAT_U64,
    .off = BS (wait_ns), .show = STAT_J, .div = 1e6, .dec = 3,
    .help = "Time requests waited for buffers, in total." },
  [PL_ALLOCS] = COUNT ("allocs", NULL, STAT_J, BS (allocs),
                       "Buffers allocated."),
  [PL_FREES] = COUNT ("frees", NULL, STAT_J, BS (frees), "Buffers freed."),
  [PL_SHARES] = { .name = "shares", .unit = "bool", .repr = STAT_BOOL,
    .off = BS (shares), .show = STAT_J,
    .help = "The groups' shares of the pool are applied (1)." },
  [PL_ACTIVE] = { .name = "active_groups", .unit = "groups",
    .repr = STAT_UINT, .off = BS (active), .show = STAT_J,
    .help = "Groups holding or waiting for buffers, or either lately." },
  [PL_SHARE] = BYTES ("share", NULL, STAT_J, BS (share), "A group's share"
                      " of the pool: its cap over the active groups."),
};
#undef BS

static const struct stat_field pool_table = {
  .name = "buffers", .show = STAT_JF, STAT_SUB (pool_fields),
  .forder = STAT_FORDER (PL_IN_USE, PL_TOTAL, PL_CAP, PL_PEAK, PL_GETS,
                         PL_WAITS, PL_WAIT_MS, PL_ALLOCS, PL_FREES,
                         PL_SHARES, PL_ACTIVE, PL_SHARE),
};

struct pool_grp_snap {
  const char *group;            /* its name */
  struct bounce_grp_stats st;   /* bytes, buffers, ns (bounce.h) */
};

#define PG(f) offsetof (struct pool_grp_snap, st.f)

static const struct stat_field pool_grp_fields[] = {
  { .name = "group", .repr = STAT_STR,
    .off = offsetof (struct pool_grp_snap, group), .show = STAT_J,
    .help = "The group." },
  BYTES ("in_use", NULL, STAT_J, PG (in_use),
         "Buffer bytes its requests hold."),
  BYTES ("peak", NULL, STAT_J, PG (peak),
         "Most buffer bytes it held at once."),
  { .name = "buffers", .unit = "buffers", .repr = STAT_UINT,
    .off = PG (buffers), .show = STAT_J, .help = "Buffers it holds." },
  { .name = "waiting", .unit = "requests", .repr = STAT_UINT,
    .off = PG (waiting), .show = STAT_J,
    .help = "Its requests waiting for a buffer." },
  COUNT ("gets", NULL, STAT_J, PG (gets), "Buffers it was given."),
  COUNT ("waits", NULL, STAT_J, PG (waits),
         "Buffers it was given after a wait."),
  { .name = "wait_ms", .unit = "ms", .repr = STAT_U64, .off = PG (wait_ns),
    .show = STAT_J, .div = 1e6, .dec = 3,
    .help = "Time its requests waited for buffers, in total." },
  { .name = "wait_max_ms", .unit = "ms", .repr = STAT_U64,
    .off = PG (wait_max_ns), .show = STAT_J, .div = 1e6, .dec = 3,
    .help = "Its longest wait for a buffer." },
  COUNT ("over_share", NULL, STAT_J, PG (over_share), "Buffers it was given"
         " past its share (beyond its only one) while another group"
         " waited."),
};
#undef PG
#undef BYTES
#undef COUNT

static const struct stat_field pool_grp_table = {
  .show = STAT_J, STAT_SUB (pool_grp_fields),
};

/* The memory budget and nbdkit's request buffers (reqbuf.c). */
struct mem_snap {
  uint64_t budget;              /* bytes */
  struct cfg_memory parts;      /* bytes */
  struct reqbuf_stats rs;       /* bytes, blocks, requests (reqbuf.h) */
  uint64_t reply_timeout;       /* ns */
  bool aligned;                 /* nbdkit's request buffers page aligned */
  const char *guard;            /* the hang-up guard's state, by name */
};

#define MS_(f) offsetof (struct mem_snap, f)
#define MEM(n, fl, sh, f, u, t, h) \
  { .name = n, .flat = fl, .unit = u, .type = t, .repr = STAT_U64, \
    .off = MS_ (f), .show = sh, .help = h }

/* In JSON's order; the flat records have in_use first. */
enum { RB_LIMIT, RB_IN_USE, RB_PEAK, RB_BLOCKS, RB_REFUSED };

static const struct stat_field req_fields[] = {
  [RB_LIMIT] = MEM ("limit", "request_limit", STAT_JF, rs.limit, "bytes",
                    STAT_GAUGE, "The budget of nbdkit's request buffers;"
                    " 0: none."),
  [RB_IN_USE] = MEM ("in_use", "request_buffers", STAT_JF, rs.in_use,
                     "bytes", STAT_GAUGE, "Bytes of nbdkit's request"
                     " buffers counted now."),
  [RB_PEAK] = MEM ("peak", NULL, STAT_J, rs.peak, "bytes", STAT_GAUGE,
                   "Most bytes of request buffers at once."),
  [RB_BLOCKS] = MEM ("blocks", NULL, STAT_J, rs.blocks, "blocks",
                     STAT_GAUGE, "Request buffer blocks counted now."),
  [RB_REFUSED] = MEM ("refused", "requests_refused", STAT_JF, rs.refused,
                      "requests", STAT_COUNTER, "Requests refused (ENOMEM):"
                      " their buffer would pass the budget."),
};

static const struct stat_field mem_fields[] = {
  MEM ("budget", NULL, STAT_J, budget, "bytes", STAT_GAUGE,
       "The server's memory budget, in all ([device] memory)."),
  MEM ("pool", NULL, STAT_J, parts.pool, "bytes", STAT_GAUGE,
       "Of it, the buffer pool."),
  MEM ("connections", NULL, STAT_J, parts.conns, "bytes", STAT_GAUGE,
       "Of it, the connections'."),
  MEM ("base", NULL, STAT_J, parts.base, "bytes", STAT_GAUGE,
       "Of it, the server's own."),
  { .name = "requests", .off = 0, .show = STAT_JF, STAT_SUB (req_fields),
    .forder = STAT_FORDER (RB_IN_USE, RB_LIMIT, RB_PEAK, RB_BLOCKS,
                           RB_REFUSED),
    .help = "nbdkit's request buffers." },
  { .name = "reply_timeout_ms", .unit = "ms", .repr = STAT_U64,
    .off = MS_ (reply_timeout), .show = STAT_J, .div = 1e6,
    .help = "How long a client may take no reply; 0: for ever." },
  MEM ("reply_timeouts", NULL, STAT_JF, rs.timeouts, "clients",
       STAT_COUNTER, "Clients cut off for taking no reply."),
  { .name = "aligned_buffers", .unit = "bool", .repr = STAT_BOOL,
    .off = MS_ (aligned), .show = STAT_J,
    .help = "nbdkit's request buffers are page aligned (1)." },
  { .name = "hangup_guard", .repr = STAT_STR, .off = MS_ (guard),
    .show = STAT_J, .help = "The guard against nbdkit's abort when a"
    " client hangs up: on, off, or why not." },
};
#undef MEM
#undef MS_

static const struct stat_field mem_table = {
  .name = "memory", .show = STAT_JF, STAT_SUB (mem_fields),
};

/* The control socket (control.c). */
struct ctl_snap {
  struct control_stats cs;      /* clients, commands, ns (control.h) */
  unsigned line_max;            /* bytes */
};

#define CS(f) offsetof (struct ctl_snap, cs.f)
#define CTLN(n, f, r, t, h) \
  { .name = n, .unit = "commands", .type = t, .repr = r, .off = CS (f), \
    .show = STAT_J, .help = h }

static const struct stat_field ctl_fields[] = {
  CTLN ("clients", clients, STAT_UINT, STAT_GAUGE, "Clients connected"
        " now."),
  CTLN ("max_clients", max_clients, STAT_UINT, STAT_GAUGE, "Most clients"
        " at once (control_clients)."),
  { .name = "timeout_ms", .unit = "ms", .repr = STAT_U64,
    .off = CS (timeout_ns), .show = STAT_J, .div = 1e6,
    .help = "How long a client may make no progress (control_timeout)." },
  CTLN ("refused", refused, STAT_U64, STAT_COUNTER, "Clients refused: the"
        " cap, control_uid."),
  CTLN ("timeouts", timeouts, STAT_U64, STAT_COUNTER, "Clients closed by"
        " control_timeout."),
  CTLN ("commands", commands, STAT_U64, STAT_COUNTER, "Commands run."),
  CTLN ("deferred", deferred, STAT_U64, STAT_COUNTER, "Turns that waited"
        " for the slice or the duty cycle."),
  CTLN ("accept_pauses", pauses, STAT_U64, STAT_COUNTER, "Times accepting"
        " paused (EMFILE ...)."),
  { .name = "busy_ms", .unit = "ms", .repr = STAT_U64, .off = CS (busy_ns),
    .show = STAT_J, .div = 1e6, .help = "Time spent running commands." },
  CTLN ("duty_pct", duty_pct, STAT_UINT, STAT_GAUGE, "Percent of the"
        " dispatcher's time commands may take."),
  { .name = "line_max", .unit = "bytes", .repr = STAT_UINT,
    .off = offsetof (struct ctl_snap, line_max), .show = STAT_J,
    .help = "The longest command line." },
};
#undef CS
#undef CTLN

static const struct stat_field ctl_table = {
  .name = "control", .show = STAT_J, STAT_SUB (ctl_fields),
};

static void
write_pool (struct statfmt *w, const struct tenants *tn)
{
  struct bounce_stats bs;

  bounce_stats (&bs);
  statfmt_open (w, &pool_table, &bs);
  statfmt_list_begin (w, "groups", STAT_J);
  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    static const struct stat_rec r = { 0 };
    struct pool_grp_snap g = { .group = tn->m->groups[i].name };

    if (bounce_grp_stats ((unsigned) i, &g.st))
      memset (&g.st, 0, sizeof g.st);
    statfmt_rec_begin (w, &r);
    statfmt_table (w, &pool_grp_table, &g);
    statfmt_rec_end (w);
  }
  statfmt_list_end (w);
  statfmt_close (w);
}

static void
write_memory (struct statfmt *w, const struct tenants *tn)
{
  struct mem_snap m = {
    .budget = tn->m->dev.memory, .reply_timeout = tn->m->dev.reply_timeout,
    .aligned = reqbuf_aligned (),
    .guard = hangup_state_name (hangup_guard_state (NULL)),
  };

  reqbuf_stats (&m.rs);
  cfg_memory_parts (&tn->m->dev, &m.parts);
  statfmt_table (w, &mem_table, &m);
}

static void
write_device (struct statfmt *w, const struct tenants *tn,
              const struct snapshot *sn)
{
  static const struct stat_rec rec = {
    .key = "device", .kind = "device", .name = "-", .prom = "device_",
  };
  char mode[32];
  struct dev_snap d = {
    .scheduler = tn->sched_name, .mode = tn_mode_name (tn, mode, sizeof mode),
    .emulate = tn->m->dev.emulate ? tn->m->dev.emulate : "none",
    .inflight = engine_inflight (tn->e), .held = engine_held (tn->e),
    .cancelled = engine_cancelled (tn->e),
    .queue_depth = engine_depth (tn->e), .max_request = CFG_MAX_REQUEST,
    .connections = __atomic_load_n (&tn->nconns, __ATOMIC_RELAXED),
    .max_connections = tn->m->dev.max_connections,
    .refused = __atomic_load_n (&tn->refused, __ATOMIC_RELAXED),
  };
  char model[512];

  statfmt_rec_begin (w, &rec);
  statfmt_table (w, &dev_head, &d);
  sched_stats (tn->s, NULL, statfmt_emit, w);
  statfmt_table (w, &dev_engine, &d);
  write_pool (w, tn);
  statfmt_table (w, &dev_conns, &d);
  write_memory (w, tn);
  statfmt_table (w, &dev_clients, &d);
  if (tn->ctl) {
    struct ctl_snap c = { .line_max = CTL_LINE_MAX };

    control_get_stats (tn->ctl, &c.cs);
    statfmt_table (w, &ctl_table, &c);
  }
  if (tn->dm) {
    devmodel_describe (tn->dm, model, sizeof model);
    d.model = model;
    statfmt_table (w, &dev_model, &d);
  }
  write_io (w, &io_all_table, &tn->total, sn->now, 100.);
  statfmt_rec_end (w);
}

/* ---- groups, exports, connections ---------------------------------------- */

struct grp_snap {
  const char *name;             /* [group NAME] */
  const char *cls;              /* rt, be, idle */
  unsigned weight;              /* 100..1000, as last set */
  unsigned prio;                /* level 0..7 */
  double weight_share;          /* fraction of 1 */
};

#define GS(f) offsetof (struct grp_snap, f)
#define WEIGHT_SHARE(off_) \
  { .name = "weight_share", .unit = "ratio", .repr = STAT_DOUBLE, \
    .off = off_, .show = STAT_P, .help = "The share its group's weight" \
    " gives it: weight over the weights of the groups that moved data in" \
    " the last second (all groups when none did), split evenly between" \
    " the group's exports that moved data." }

static const struct stat_field grp_fields[] = {
  { .name = "name", .repr = STAT_STR, .off = GS (name), .show = STAT_J,
    .help = "The group's name ([group NAME])." },
  { .name = "weight", .unit = "weight", .repr = STAT_UINT,
    .off = GS (weight), .show = STAT_ALL,
    .help = "The group's weight (100..1000), as last set." },
  WEIGHT_SHARE (GS (weight_share)),
  { .name = "class", .repr = STAT_STR, .off = GS (cls), .show = STAT_JF,
    .help = "Its class: rt, be or idle." },
  { .name = "prio", .unit = "level", .repr = STAT_UINT, .off = GS (prio),
    .show = STAT_JF, .help = "Its level within the class (0..7)." },
};
#undef GS

static const struct stat_field grp_table = { .show = STAT_ALL,
                                             STAT_SUB (grp_fields) };

static void
write_groups (struct statfmt *w, const struct tenants *tn,
              const struct snapshot *sn)
{
  statfmt_list_begin (w, "groups", STAT_ALL);
  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    const struct tn_group *g = &tn->groups[i];
    struct stat_rec rec = {
      .kind = "group", .name = g->cg->name, .prom = "group_",
      .labels = { "group", g->cg->name },
    };
    struct grp_snap s = {
      .name = g->cg->name, .cls = sched_class_name (g->cg->cls),
      .weight = g->weight, .prio = g->cg->prio,
      .weight_share = sn->gws[i],
    };

    statfmt_rec_begin (w, &rec);
    statfmt_table (w, &grp_table, &s);
    sched_stats (tn->s, g->sg, statfmt_emit, w);
    gw_group_stats (i, sn->now, statfmt_emit, w);
    write_io (w, &io_table, &g->io, sn->now, sn->gshare[i]);
    statfmt_rec_end (w);
  }
  statfmt_list_end (w);
}

struct exp_snap {
  const char *name, *group;     /* its name, its group's */
  const char *file;             /* a file of its own, or NULL */
  const char *writes;           /* sync, async, auto */
  const char *tls;              /* require, optional */
  double weight_share;          /* fraction of 1 */
  uint64_t offset, size;        /* bytes */
  bool readonly;
  unsigned conns, max_conns;    /* clients */
  uint64_t refused;             /* clients */
  uint64_t lock_waits;          /* requests: its file's range lock */
  uint64_t wb_errors;           /* its file's failed flushes and writes */
};

#define ES(f) offsetof (struct exp_snap, f)

static const struct stat_field exp_fields[] = {
  { .name = "name", .repr = STAT_STR, .off = ES (name), .show = STAT_J,
    .help = "The export's name, as clients ask for it." },
  { .name = "group", .repr = STAT_STR, .off = ES (group), .show = STAT_JF,
    .help = "Its group." },
  WEIGHT_SHARE (ES (weight_share)),
  { .name = "file", .repr = STAT_STR, .off = ES (file), .show = STAT_J,
    .help = "A file of its own, if it has one." },
  { .name = "offset", .unit = "bytes", .repr = STAT_U64, .off = ES (offset),
    .show = STAT_J, .help = "Where it starts on the device." },
  { .name = "size", .unit = "bytes", .repr = STAT_U64, .off = ES (size),
    .show = STAT_J, .help = "Its size (a file of its own: all of it)." },
  { .name = "readonly", .unit = "bool", .repr = STAT_BOOL,
    .off = ES (readonly), .show = STAT_J, .help = "Clients may not write"
    " (1)." },
  { .name = "writes", .repr = STAT_STR, .off = ES (writes), .show = STAT_J,
    .help = "Plain writes sync, async, or by the rule (auto)." },
  { .name = "tls", .repr = STAT_STR, .off = ES (tls), .show = STAT_J,
    .help = "TLS: require or optional." },
  { .name = "connections", .unit = "clients", .repr = STAT_UINT,
    .off = ES (conns), .show = STAT_JP,
    .help = "Client connections open now." },
  { .name = "max_connections", .unit = "clients", .repr = STAT_UINT,
    .off = ES (max_conns), .show = STAT_J, .help = "Most client"
    " connections at once; 0: only the device's limit." },
  { .name = "refused_connections", .unit = "clients",
    .type = STAT_COUNTER, .repr = STAT_U64, .off = ES (refused),
    .show = STAT_J, .help = "Clients refused for its max_connections." },
};

/* The file's, shared by every export on the same file. */
static const struct stat_field file_fields[] = {
  { .name = "range_lock_waits", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = ES (lock_waits), .show = STAT_J,
    .help = "Writes that waited for a range lock on its file." },
  { .name = "writeback_errors", .unit = "errors", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = ES (wb_errors), .show = STAT_J,
    .help = "Failed flushes and writes of its file." },
};
#undef ES
#undef WEIGHT_SHARE

static const struct stat_field exp_table = { .show = STAT_ALL,
                                             STAT_SUB (exp_fields) };
static const struct stat_field file_table = { .show = STAT_J,
                                              STAT_SUB (file_fields) };

static void
write_export (struct statfmt *w, const struct tenants *tn, size_t i,
              const struct snapshot *sn)
{
  const struct tn_export *e = &tn->exports[i];
  const struct backing *b = bk_export (i);
  const char *gname = tn->m->groups[e->ce->group].name;
  struct stat_rec rec = {
    .kind = "export", .name = e->ce->name, .prom = "export_",
    .labels = { "export", e->ce->name, "group", gname },
  };
  struct exp_snap s = {
    .name = e->ce->name, .group = gname, .file = e->ce->file,
    .writes = e->ce->writes_sync ? "sync"
              : e->ce->writes_async ? "async" : "auto",
    .tls = e->ce->tls_required ? "require" : "optional",
    .weight_share = sn->ews[i], .offset = e->ce->offset,
    /* An export with a file of its own: all of it (the model says 0). */
    .size = e->ce->file ? b->dev.size : e->ce->size,
    .readonly = e->ce->readonly,
    .conns = __atomic_load_n (&e->nconns, __ATOMIC_RELAXED),
    .max_conns = e->ce->max_connections,
    .refused = __atomic_load_n (&e->refused, __ATOMIC_RELAXED),
  };

  statfmt_rec_begin (w, &rec);
  statfmt_table (w, &exp_table, &s);
  if (b->shared) {
    s.lock_waits = rl_waits (&b->shared->rl);
    s.wb_errors = __atomic_load_n (&b->shared->wb_errors, __ATOMIC_RELAXED);
    statfmt_table (w, &file_table, &s);
  }
  write_io (w, &io_table, &e->io, sn->now, sn->eshare[i]);
  statfmt_rec_end (w);
}

struct conn_snap {
  uint64_t id;                  /* 1, 2, ... in order of opening */
  const char *export, *group;   /* names */
};

static const struct stat_field conn_fields[] = {
  { .name = "id", .unit = "number", .repr = STAT_U64,
    .off = offsetof (struct conn_snap, id), .show = STAT_J,
    .help = "The connection's number: 1, 2, ... in order of opening." },
  { .name = "export", .repr = STAT_STR,
    .off = offsetof (struct conn_snap, export), .show = STAT_JF,
    .help = "The export it is connected to." },
  { .name = "group", .repr = STAT_STR,
    .off = offsetof (struct conn_snap, group), .show = STAT_JF,
    .help = "The export's group." },
};

static const struct stat_field conn_table = { .show = STAT_JF,
                                              STAT_SUB (conn_fields) };

/* A connection's share of everything the device did (connections that
 * closed still count in the device's total, as they did in its time).
 */
static void
write_conns (struct statfmt *w, const struct tenants *tn,
             const struct snapshot *sn)
{
  double sum_bytes = (double) iostat_total_bytes (&tn->total);
  struct list *p;

  statfmt_list_begin (w, "connections", STAT_JF);
  list_for_each (p, &tn->conns) {
    const struct tn_conn *c = list_entry (p, struct tn_conn, link);
    const struct cfg_export *ce = &tn->m->exports[c->exp];
    char id[24];
    struct stat_rec rec = { .kind = "conn", .name = id };
    struct conn_snap s = { c->id, ce->name, tn->m->groups[ce->group].name };

    snprintf (id, sizeof id, "%" PRIu64, c->id);
    statfmt_rec_begin (w, &rec);
    statfmt_table (w, &conn_table, &s);
    write_io (w, &io_table, &c->io, sn->now,
              share_pct (&c->io, tn->total.bps, sum_bytes));
    statfmt_rec_end (w);
  }
  statfmt_list_end (w);
}

/* ---- the walk ------------------------------------------------------------ */

/* The device first (JSON, Prometheus), or last (the flat records, where
 * it has always been the last line).
 */
static void
walk (const struct tenants *tn, enum statfmt_kind kind, struct strbuf *o)
{
  struct statfmt w;
  struct snapshot sn;

  if (take_snapshot (tn, &sn)) {
    o->oom = 1;
    return;
  }
  statfmt_init (&w, kind, o);
  if (kind != STATFMT_FLAT)
    write_device (&w, tn, &sn);
  write_groups (&w, tn, &sn);
  statfmt_list_begin (&w, "exports", STAT_ALL);
  for (size_t i = 0; i < tn->m->nr_exports; i++)
    write_export (&w, tn, i, &sn);
  statfmt_list_end (&w);
  write_conns (&w, tn, &sn);
  if (kind == STATFMT_FLAT)
    write_device (&w, tn, &sn);
  statfmt_finish (&w);
  free_snapshot (&sn);
}

void
stats_json (const struct tenants *tn, struct strbuf *o)
{
  walk (tn, STATFMT_JSON, o);
}

void
stats_flat (const struct tenants *tn, struct strbuf *o)
{
  walk (tn, STATFMT_FLAT, o);
}

void
stats_prometheus (const struct tenants *tn, struct strbuf *o)
{
  walk (tn, STATFMT_PROM, o);
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
