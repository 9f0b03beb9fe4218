/* cfq-history.c: what CFQ learns from the requests it sees: a
 * connection's think time, a queue's seek history and whether idling for
 * it pays (its idle window), whether the device queues (hw_tag), and what
 * a seek costs it (deviation 22).
 *
 * These only measure: cfq.c calls them as requests come in and complete,
 * and decides on what they found.  Below cfq.c; they ask cfq-wc.c whether
 * its dispatch keeps the driver full, and cfq-coop.c how far a request is
 * from the head.
 */
#include <stdbool.h>
#include <stdint.h>

#include "cfq-priv.h"

void
cfq_update_io_thinktime (struct cfqd *cfqd, struct sched_queue *cic,
                         uint64_t now)
{
  uint64_t elapsed = 0, ttime;

  if (cic->last_end_request != SCHED_NEVER && now > cic->last_end_request)
    elapsed = now - cic->last_end_request;
  ttime = umin64 (elapsed, 2 * t_get (cfqd, T_SLICE_IDLE));
  cic->ttime_samples = (7 * cic->ttime_samples + 256) / 8;
  cic->ttime_total = (7 * cic->ttime_total + 256 * ttime) / 8;
  cic->ttime_mean = (cic->ttime_total + 128) / cic->ttime_samples;
}

/* Would a queue's first request be a seek?  On a disk it has no distance
 * of its own, so it is judged by its distance from the head.
 */
bool
cfq_first_rq_seeky (const struct cfqd *cfqd, const struct rq *rq)
{
  if (cfq_nonrot (cfqd))
    return rq_sectors (rq) < CFQQ_SECT_THR_NONROT;
  return cfq_dist_from_last (cfqd, rq) > CFQQ_SEEK_THR;
}

void
cfq_update_io_seektime (struct cfqd *cfqd, struct cfqq *cfqq,
                        const struct rq *rq)
{
  uint64_t sdist, pos = rq_sector (rq);

  /* On a disk a queue's first request is judged by its distance from the
   * head, and that guess stands until the second request gives a real
   * sample.  The kernel counts it as no seek.
   */
  if (!cfqq->last_request_pos && !cfq_nonrot (cfqd)) {
    cfqq->seek_first = cfq_first_rq_seeky (cfqd, rq);
    return;
  }
  if (cfqq->last_request_pos)
    sdist = pos > cfqq->last_request_pos ? pos - cfqq->last_request_pos
                                         : cfqq->last_request_pos - pos;
  else
    sdist = 0;
  cfqq->seek_history <<= 1;
  if (cfqq->seek_samples < 32)
    cfqq->seek_samples++;
  if (cfq_nonrot (cfqd))
    cfqq->seek_history |= (rq_sectors (rq) < CFQQ_SECT_THR_NONROT);
  else
    cfqq->seek_history |= (sdist > CFQQ_SEEK_THR);
}

/* Idle for a queue unless it thinks too long or seeks so much that idling
 * does not pay.
 */
void
cfq_update_idle_window (struct cfqd *cfqd, struct cfqq *cfqq,
                        const struct sched_queue *cic)
{
  bool enable_idle;

  if (!cfqq->sync || cfq_class_idle (cfqq))
    return;
  enable_idle = cfqq->idle_window;
  if (cfqq->queued[0] + cfqq->queued[1] >= 4)
    cfqq->deep = true;
  if (cic->dead || !t_get (cfqd, T_SLICE_IDLE)
      || (!cfqq->deep && CFQQ_SEEKY (cfqq)))
    enable_idle = false;
  else if (CFQ_SAMPLE_VALID (cic->ttime_samples))
    enable_idle = cic->ttime_mean <= t_get (cfqd, T_SLICE_IDLE);
  cfqq->idle_window = enable_idle;
}

/* hw_tag: does the device queue?  Peak depth in the driver over 50
 * samples taken under enough load (cfq_update_hw_tag).
 */
void
cfq_update_hw_tag (struct cfqd *cfqd)
{
  struct cfqq *cfqq = cfqd->active_queue;

  if (cfqd->rq_in_driver > cfqd->hw_tag_est_depth)
    cfqd->hw_tag_est_depth = cfqd->rq_in_driver;
  if (cfqd->hw_tag == 1 || t_get (cfqd, T_HW_TAG) != 2)
    return;
  if (cfqd->rq_queued <= CFQ_HW_QUEUE_MIN
      && cfqd->rq_in_driver <= CFQ_HW_QUEUE_MIN)
    return;
  /* An idling queue without enough requests can't fill the device:
   * don't conclude there is no queueing from that.
   */
  if (cfqq && cfqq->idle_window
      && cfqq->dispatched + cfqq->queued[0] + cfqq->queued[1] < CFQ_HW_QUEUE_MIN
      && cfqd->rq_in_driver < CFQ_HW_QUEUE_MIN)
    return;
  /* Nor from a driver that wc_depth keeps full (deviation 31). */
  if (!cfqq && cfq_wc_on (cfqd)
      && cfqd->rq_in_driver >= t_get (cfqd, T_WC_DEPTH))
    return;
  if (cfqd->hw_tag_samples++ < CFQ_HW_SAMPLES)
    return;
  cfqd->hw_tag = cfqd->hw_tag_est_depth >= CFQ_HW_QUEUE_MIN;
}

/* Seek cost (ours, deviation 22): a read that was dispatched away from
 * the head took from its dispatch, or from the completion before it if
 * that came later (the device was busy with something else until then),
 * to now.  On a disk that is a seek and a rotation, 3 ms and more; on
 * flash that claims to rotate (a virtio disk, a RAID controller) it is a
 * fraction of a millisecond, and idling for such a device only wastes it.
 * Taken as flash, a device is taken back as a disk only when the mean
 * is slow and CFQ_SEEK_SAMPLES reads in a row were: a disk's seeks are
 * all slow, while a dispatcher that did not run for a few milliseconds
 * (a machine whose cores are busy elsewhere) sees one late completion
 * and then the rest of the batch at once.  Without that, a few stalls
 * turned the mean and the policy went from IOPS to time mode in the
 * middle of a run.
 */
void
cfq_update_seek_cost (struct cfqd *cfqd, const struct rq *rq, uint64_t now)
{
  uint64_t from = umax64 (rq->t_dispatch, cfqd->last_completion);
  uint64_t svc = now > from ? now - from : 0;

  if (svc > CFQ_SEEK_SLOW) {
    if (cfqd->seek_slow_run < CFQ_SEEK_SAMPLES)
      cfqd->seek_slow_run++;
  }
  else
    cfqd->seek_slow_run = 0;
  cfqd->seek_weight = (7 * cfqd->seek_weight + 256) / 8;
  cfqd->seek_total = (7 * cfqd->seek_total + 256 * svc) / 8;
  cfqd->seek_cost = (cfqd->seek_total + 128) / cfqd->seek_weight;
  if (cfqd->seek_seen < CFQ_SEEK_SAMPLES) {
    cfqd->seek_seen++;
    return;
  }
  if (!cfqd->seek_fast && cfqd->seek_cost < CFQ_SEEK_FAST) {
    cfqd->seek_fast = true;
    CFQ_TRACE (cfqd, NULL, "seeks cost %llu us: not rotational",
               (unsigned long long) (cfqd->seek_cost / 1000));
  }
  else if (cfqd->seek_fast && cfqd->seek_cost > CFQ_SEEK_SLOW
           && cfqd->seek_slow_run >= CFQ_SEEK_SAMPLES) {
    cfqd->seek_fast = false;
    CFQ_TRACE (cfqd, NULL, "seeks cost %llu us: rotational",
               (unsigned long long) (cfqd->seek_cost / 1000));
  }
}
