/* cfq-stats.c: what CFQ reports, described field by field
 * (include/statfield.h) for sched_ops' stats: the device's counters and
 * state, with its cost model (cost.c) after them; a group's, with its
 * caps and reservation (qos.c) after them.
 *
 * The numbers are cfq_get_stats' and cfq_group_get_stats' (include/cfq.h,
 * where each field's meaning is), so tests, cfqsim and the server's
 * statistics read the same counters.  Which of them the flat records
 * carry ("stats flat": a line per group and one for the device) is the
 * STAT_F column; JSON and Prometheus carry them all.
 *
 * Also CFQ's state read from outside, for the tests and the policy's
 * cost op: counters and what CFQ found of the device (cfq_get_stats),
 * the cost model (cfq_get_cost), and a dump as text (cfq_dump).  They
 * only read; nothing else in core/ calls them.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cfq-priv.h"

void
cfq_get_stats (struct sched *s, struct cfq_stats *st)
{
  struct cfqd *cfqd = CFQD (s);

  *st = cfqd->stats;
  st->hw_tag = cfqd->hw_tag;
  st->hw_tag_est_depth = cfqd->hw_tag_est_depth;
  st->iops_mode = iops_mode (cfqd);
  st->seek_cost = cfqd->seek_cost;
  st->seek_fast = cfqd->seek_fast;
  st->busy_queues = cfqd->busy_queues;
  st->rq_queued = cfqd->rq_queued;
  st->rq_in_driver = cfqd->rq_in_driver;
}

struct dumpbuf {
  char *buf;
  size_t len, pos;
};

static void __attribute__ ((format (printf, 2, 3)))
dump_printf (struct dumpbuf *d, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (d->pos < d->len ? d->buf + d->pos : NULL,
                 d->pos < d->len ? d->len - d->pos : 0, fmt, ap);
  va_end (ap);
  if (n > 0)
    d->pos += n;
}

size_t
cfq_dump (struct sched *s, char *buf, size_t len)
{
  struct cfqd *cfqd = CFQD (s);
  struct dumpbuf d = { buf, len, 0 };
  struct list *p;

  if (len)
    buf[0] = '\0';
  for (size_t i = 0; i < T_NR; i++)
    dump_printf (&d, "%s=%llu %s\n", cfq_tunables[i].name,
                 (unsigned long long) cfqd->tun[i], cfq_tunables[i].unit);
  dump_printf (&d, "hw_tag=%d depth=%u iops_mode=%d seek_cost=%lluus "
               "seek_fast=%d busy_queues=%u "
               "rq_queued=%u rq_in_driver=%u idle_timer=%lld\n",
               cfqd->hw_tag, cfqd->hw_tag_est_depth, iops_mode (cfqd),
               (unsigned long long) (cfqd->seek_cost / 1000),
               cfqd->seek_fast,
               cfqd->busy_queues, cfqd->rq_queued, cfqd->rq_in_driver,
               cfqd->idle_timer == SCHED_NEVER ? -1LL
               : (long long) cfqd->idle_timer);
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    dump_printf (&d, "group %s weight=%u on_st=%d vdisktime=%llu "
                 "busy=%u dispatched=%u%s\n", g->name, g->weight, g->on_st,
                 (unsigned long long) g->vdisktime, g->nr_cfqq, g->dispatched,
                 cfqd->serving_group == g ? " serving" : "");
    if (g->qos.on)
      dump_printf (&d, "  qos held=%d throttled=%llu reserved=%llu "
                   "r_tag=%lld\n", qos_held (&g->qos, cfqd->now),
                   (unsigned long long) g->qos.done.held,
                   (unsigned long long) g->qos.done.res_ios,
                   (long long) (g->qos.r_tag - cfqd->now));
  }
  if (cfqd->active_queue) {
    struct cfqq *q = cfqd->active_queue;
    dump_printf (&d, "active: class=%u level=%u sync=%d queued=%u "
                 "dispatched=%u slice_new=%d slice_end=%llu idle_window=%d "
                 "wait_request=%d coop=%d\n", q->ioprio_class, q->ioprio,
                 q->sync, q->queued[0] + q->queued[1], q->dispatched,
                 q->slice_new, (unsigned long long) q->slice_end,
                 q->idle_window, q->wait_request, q->coop);
  }
  return d.pos;
}

void
cfq_get_cost (struct sched *s, struct cost_model *m)
{
  *m = CFQD (s)->cost;
}

/* The device: cfq_stats, and the rotational flag as CFQ takes it. */
struct dev_snap {
  struct cfq_stats st;
  uint64_t rotational;          /* 0 or 1 */
};

#define D(f) offsetof (struct dev_snap, st.f)
#define DCOUNT(n, f, sh, h) \
  { .name = n, .unit = "requests", .type = STAT_COUNTER, .repr = STAT_U64, \
    .off = D (f), .show = (sh), .help = h }

static const struct stat_field dev_fields[] = {
  { .name = "hw_tag", .unit = "bool", .repr = STAT_INT, .off = D (hw_tag),
    .show = STAT_ALL, .help = "Whether the device queues requests (NCQ):"
    " 1 yes, 0 no, -1 not known yet." },
  { .name = "hw_tag_depth", .unit = "requests", .repr = STAT_UINT,
    .off = D (hw_tag_est_depth), .show = STAT_JP, .help = "Most requests"
    " seen at the device at once, by which hw_tag is judged." },
  { .name = "iops_mode", .unit = "bool", .repr = STAT_BOOL,
    .off = D (iops_mode), .show = STAT_JP, .help = "Groups are charged"
    " by requests (IOPS mode) now, not by time." },
  { .name = "rotational", .unit = "bool", .repr = STAT_U64,
    .off = offsetof (struct dev_snap, rotational), .show = STAT_JP,
    .help = "The device seeks (1) or not (0), as the scheduler takes it." },
  { .name = "busy_queues", .unit = "queues", .repr = STAT_UINT,
    .off = D (busy_queues), .show = STAT_JP, .help = "Queues with"
    " requests waiting (on a service tree)." },
  { .name = "rq_queued", .unit = "requests", .repr = STAT_UINT,
    .off = D (rq_queued), .show = STAT_JP, .help = "Requests inserted and"
    " not yet dispatched." },
  DCOUNT ("slices", slices, STAT_ALL, "Queues made active: time slices"
          " begun."),
  DCOUNT ("idle_arms", idle_arms, STAT_JP, "Times the idle timer was"
          " armed for a queue (slice_idle)."),
  DCOUNT ("group_idle_arms", group_idle_arms, STAT_JP, "Times the idle"
          " timer was armed for a group (group_idle)."),
  DCOUNT ("idle_hits", idle_hits, STAT_ALL, "Requests that arrived while"
          " their queue or group was idled for."),
  DCOUNT ("idle_timeouts", idle_timeouts, STAT_ALL, "Idle windows that"
          " ran out without a request."),
  DCOUNT ("preemptions", preemptions, STAT_ALL, "Times the active queue"
          " was preempted."),
  DCOUNT ("fifo_expired", fifo_expired, STAT_JP, "Requests served in fifo"
          " order because they had waited too long."),
  DCOUNT ("merges", merges, STAT_JP, "Connections moved into a shared"
          " queue (cooperating queues)."),
  DCOUNT ("splits", splits, STAT_JP, "Connections split back out of a"
          " shared queue."),
  DCOUNT ("wait_busy", wait_busy, STAT_JP, "Slices extended to keep a"
          " group busy (wait-busy)."),
  { .name = "seek_cost_us", .prom = "seek_cost_seconds", .unit = "us",
    .repr = STAT_U64, .off = D (seek_cost), .show = STAT_JP, .div = 1000,
    .pdiv = 1e9, .help = "Mean service time of reads dispatched away from"
    " the head." },
  { .name = "seek_fast", .unit = "bool", .repr = STAT_BOOL,
    .off = D (seek_fast), .show = STAT_JP, .help = "The device is taken"
    " to seek, but seek_cost_us says it does not (1)." },
};
#undef D

static const struct stat_field dev_table = {
  .show = STAT_ALL, STAT_SUB (dev_fields),
};

#define G(f) offsetof (struct cfq_group_stats, f)
#define GCOUNT(n, f, sh, h) \
  { .name = n, .unit = "requests", .type = STAT_COUNTER, .repr = STAT_U64, \
    .off = G (f), .show = (sh), .help = h }

static const struct stat_field grp_fields[] = {
  { .name = "vdisktime", .unit = "ns<<12", .repr = STAT_U64,
    .off = G (vdisktime), .show = STAT_ALL, .help = "The group's virtual"
    " disk time (ns << 12, scaled by weight): the group with the least is"
    " served next." },
  { .name = "cfq_weight", .unit = "weight", .repr = STAT_UINT,
    .off = G (weight), .show = STAT_JP, .help = "The weight as the"
    " scheduler has it now (100..1000)." },
  { .name = "busy_queues", .unit = "queues", .repr = STAT_UINT,
    .off = G (busy_queues), .show = STAT_JP, .help = "Its queues with"
    " requests waiting." },
  { .name = "in_driver", .unit = "requests", .repr = STAT_UINT,
    .off = G (in_driver), .show = STAT_JP, .help = "Its requests"
    " dispatched and not completed." },
  { .name = "on_service_tree", .unit = "bool", .repr = STAT_BOOL,
    .off = G (on_service_tree), .show = STAT_JP, .help = "It waits for or"
    " gets service (1)." },
  { .name = "serving", .unit = "bool", .repr = STAT_BOOL,
    .off = G (serving), .show = STAT_JP, .help = "It is the group being"
    " served now (1)." },
  GCOUNT ("slices", slices, STAT_ALL, "Its queues made active."),
  GCOUNT ("idle_arms", idle_arms, STAT_JP, "Times the idle timer was"
          " armed for one of its queues (slice_idle)."),
  GCOUNT ("group_idle_arms", group_idle_arms, STAT_JP, "Times the idle"
          " timer was armed for it (group_idle)."),
  GCOUNT ("idle_hits", idle_hits, STAT_ALL, "Its requests that arrived"
          " while it was idled for."),
  GCOUNT ("idle_timeouts", idle_timeouts, STAT_ALL, "Its idle windows"
          " that ran out."),
  GCOUNT ("preemptions", preemptions, STAT_JP, "Times its active queue was"
          " preempted."),
  GCOUNT ("dispatched", dispatched, STAT_JP, "Its requests dispatched."),
  { .name = "used_ns", .flat = "used_ms", .prom = "used_seconds",
    .unit = "ns", .type = STAT_COUNTER, .repr = STAT_U64,
    .off = G (used_ns), .show = STAT_ALL, .fdiv = 1e6, .pdiv = 1e9,
    .help = "Disk time its slices used (as charged in time mode, before"
    " scaling by weight; counted in IOPS mode too)." },
};
#undef G

static const struct stat_field grp_table = {
  .show = STAT_ALL, STAT_SUB (grp_fields),
};

void
cfq_stats (struct sched *s, struct sched_group *g, stat_emit_fn *emit,
           void *opaque)
{
  struct cfqd *cfqd = CFQD (s);

  if (g) {
    struct cfq_group_stats gs;

    cfq_group_get_stats (s, g, &gs);
    emit (opaque, &grp_table, &gs);
    qos_group_stats (&g->qos, cfqd->now, emit, opaque);
    /* Every group while any has a target: the others' effective weight
     * and clamp are what the target acts on.
     */
    if (cfqd->lat_targets || !lat_conf_default (&g->lat.conf))
      cfq_lat_stats (cfqd, g, emit, opaque);
  }
  else {
    struct dev_snap d = { .rotational = t_get (cfqd, T_ROTATIONAL) };

    cfq_get_stats (s, &d.st);
    emit (opaque, &dev_table, &d);
    cost_model_stats (&cfqd->cost, emit, opaque);
  }
}
