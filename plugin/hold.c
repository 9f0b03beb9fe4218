/* hold.c: an emulated device's hold on completions (see hold.h).
 *
 * Each request is in one of three states (creq->emu): neither end done;
 * real I/O done, held until the model releases it; model done, finished
 * as soon as its real I/O is.  The model keeps its own queue and order, so
 * no heap is needed here: releasing is asking the model what it has done
 * by now.
 *
 * The timer.  A timerfd fires at its nanosecond deadline, but the thread
 * epoll wakes runs some time later: tens of microseconds on a loaded VM,
 * as long as the read being emulated.  So the timerfd is armed `lead'
 * early, where lead tracks the median of the observed lateness (one
 * HOLD_LEAD_STEP up when a wake-up was later than lead, one down when
 * not), and a wake-up before the deadline spins the rest of the way.
 * Half the wake-ups then release on time; the others are late by their
 * excess over the median only.  The spin is at most HOLD_LEAD_MAX.
 */
#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/timerfd.h>

#include "devmodel.h"
#include "hold.h"

/* creq->emu */
enum {
  EMU_NONE = 0,                 /* neither the real I/O nor the model done */
  EMU_IO_DONE,                  /* real I/O done (res kept): held */
  EMU_DEV_DONE,                 /* the model is done: finish on real I/O */
};

/* Every request at the model is in flight: its queue never fills. */
_Static_assert (SCHED_DEPTH_MAX <= DEVMODEL_MAX_QUEUE,
                "the device model must hold queue_depth requests");

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * NSEC_PER_SEC + (uint64_t) ts.tv_nsec;
}

int
hold_init (struct hold *h, struct devmodel *dm)
{
  memset (h, 0, sizeof *h);
  h->dm = dm;
  h->at = SCHED_NEVER;
  h->fd = timerfd_create (CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
  return h->fd < 0 ? -errno : 0;
}

void
hold_fini (struct hold *h)
{
  if (h->fd >= 0)
    close (h->fd);
  h->fd = -1;
}

void
hold_submit (struct hold *h, struct creq *r, uint64_t now)
{
  r->emu = EMU_NONE;
  devmodel_submit (h->dm, &r->rq, now);   /* cannot fail: see above */
}

bool
hold_io_done (struct hold *h, struct creq *r, int res)
{
  if (r->emu == EMU_DEV_DONE)
    return false;
  r->res = res;
  r->emu = EMU_IO_DONE;
  h->n++;
  return true;
}

struct creq *
hold_release (struct hold *h, uint64_t now)
{
  struct rq *rq;

  while ((rq = devmodel_complete (h->dm, now, NULL)) != NULL) {
    struct creq *r = rq->priv;

    if (r->emu == EMU_IO_DONE) {
      h->n--;
      return r;
    }
    r->emu = EMU_DEV_DONE;
  }
  return NULL;
}

bool
hold_arm (struct hold *h)
{
  uint64_t at = devmodel_next (h->dm), was = h->at;
  struct itimerspec its;

  if (at == h->at)
    return false;
  h->at = at;
  memset (&its, 0, sizeof its);
  if (at != SCHED_NEVER) {
    h->fire = at > h->lead ? at - h->lead : 1;  /* 0 would disarm */
    its.it_value.tv_sec = h->fire / NSEC_PER_SEC;
    its.it_value.tv_nsec = h->fire % NSEC_PER_SEC;
  }
  timerfd_settime (h->fd, TFD_TIMER_ABSTIME, &its, NULL);
  return at < was;
}

bool
hold_fired (struct hold *h)
{
  uint64_t expirations, now;

  if (read (h->fd, &expirations, sizeof expirations) < 0)
    return false;               /* EAGAIN: re-armed before we got here */
  now = now_ns ();
  h->lead = hold_lead_step (h->lead, now > h->fire ? now - h->fire : 0);
  while (now < h->at && h->at - now <= HOLD_LEAD_MAX)
    now = now_ns ();
  h->at = SCHED_NEVER;          /* the caller releases what is due */
  return true;
}
