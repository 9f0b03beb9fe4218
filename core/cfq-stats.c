/* cfq-stats.c: CFQ's state read from outside, for the server's
 * statistics and the tests: counters and what CFQ found of the device
 * (cfq_get_stats), the cost model (cfq_get_cost), and a dump as text
 * (cfq_dump).  They only read; nothing in core/ calls them.
 */
#include <stdarg.h>
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
                   (unsigned long long) g->qos.st_held,
                   (unsigned long long) g->qos.st_reserved,
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
