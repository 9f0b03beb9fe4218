/* iostat.c: per export / group / connection accounting (see iostat.h).
 *
 * Latency is split where the two halves of the system meet: time in the
 * scheduler (insert -> dispatch: what the policy made a request wait) and
 * time at the device (dispatch -> completion: what the disk, or the
 * emulated disk, took).  A fair scheduler moves latency between tenants
 * through the first half only, so the split shows who pays for fairness.
 */
#include <string.h>

#include "iostat.h"

void
iostat_init (struct iostat *st, uint64_t now)
{
  memset (st, 0, sizeof *st);
  hist_init (&st->lat);
  hist_init (&st->qlat);
  hist_init (&st->dlat);
  st->t_start = st->t_tick = now;
}

void
iostat_free (struct iostat *st)
{
  hist_free (&st->lat);
  hist_free (&st->qlat);
  hist_free (&st->dlat);
}

void
iostat_reset (struct iostat *st, uint64_t now)
{
  iostat_free (st);
  iostat_init (st, now);
}

uint64_t
iostat_mem (const struct iostat *st)
{
  return hist_mem (&st->lat) + hist_mem (&st->qlat) + hist_mem (&st->dlat);
}

void
iostat_done (struct iostat *st, const struct rq *rq, uint64_t now, int err)
{
  unsigned op = rq->op < IOSTAT_OPS ? rq->op : RQ_READ;
  uint64_t ins = rq->t_insert, dis = rq->t_dispatch;

  if (err) {
    st->errors++;
    return;
  }
  st->reqs[op]++;
  st->bytes[op] += rq->len;
  if (dis < ins)
    dis = ins;
  if (now < dis)
    now = dis;
  hist_add (&st->lat, now - ins);
  hist_add (&st->qlat, dis - ins);
  hist_add (&st->dlat, now - dis);
}

uint64_t
iostat_total_reqs (const struct iostat *st)
{
  uint64_t n = 0;

  for (unsigned i = 0; i < IOSTAT_OPS; i++)
    n += st->reqs[i];
  return n;
}

uint64_t
iostat_total_bytes (const struct iostat *st)
{
  /* Data moved: reads and writes.  Trim and zero lengths are not
   * transfers and would swamp the figure.
   */
  return st->bytes[RQ_READ] + st->bytes[RQ_WRITE];
}

void
iostat_tick (struct iostat *st, uint64_t now)
{
  uint64_t reqs = iostat_total_reqs (st), bytes = iostat_total_bytes (st);
  double secs;

  if (now <= st->t_tick)
    return;
  secs = (double) (now - st->t_tick) / 1e9;
  st->iops = (double) (reqs - st->tick_reqs) / secs;
  st->bps = (double) (bytes - st->tick_bytes) / secs;
  st->tick_reqs = reqs;
  st->tick_bytes = bytes;
  st->t_tick = now;
}

double
iostat_avg_iops (const struct iostat *st, uint64_t now)
{
  return now > st->t_start
    ? (double) iostat_total_reqs (st) * 1e9 / (double) (now - st->t_start) : 0;
}

double
iostat_avg_bps (const struct iostat *st, uint64_t now)
{
  return now > st->t_start
    ? (double) iostat_total_bytes (st) * 1e9 / (double) (now - st->t_start) : 0;
}
