/* hold.h: an emulated device's hold on completions.
 *
 * With emulate=, a dispatched request goes both to the real device and to
 * the device model, and it is done when both are done with it, whichever
 * comes last: the data is always the real device's, the time the model's.
 * The model hands requests back in its own order (a disk with NCQ
 * reorders its queue), so a request whose real I/O finished first waits
 * here (creq->emu) until the model releases it; one the model finished
 * first is done as soon as its real I/O is.
 *
 * The model's next completion time arms a timerfd (CLOCK_MONOTONIC,
 * absolute, nanoseconds) for the engine's loop to watch: libev's own
 * timers sleep in whole milliseconds on epoll, an eternity for an
 * emulated flash read.  Waking still takes time on a busy machine (tens
 * of microseconds), so the timer is armed early by the median lateness of
 * the wake-ups seen so far (hold_lead_step), and the loop spins the rest
 * of the way (hold_fired).
 *
 * Threads: a struct hold belongs to whoever holds the engine lock; it
 * takes no lock of its own.  Errors are -errno.
 */
#ifndef CFQ_HOLD_H
#define CFQ_HOLD_H

#include <stdbool.h>
#include <stdint.h>

#include "engine.h"

struct devmodel;

#define HOLD_LEAD_MAX (200 * NSEC_PER_USEC)   /* most a wake-up spins */
#define HOLD_LEAD_STEP (2 * NSEC_PER_USEC)    /* the median tracker's step */

struct hold {
  struct devmodel *dm;          /* the emulated device */
  unsigned n;                   /* requests held: real I/O done, model not */
  int fd;                       /* the timerfd, or -1 */
  uint64_t at;                  /* ns: the deadline fd is armed for;
                                   SCHED_NEVER: disarmed */
  uint64_t fire;                /* ns: when fd fires (at less lead) */
  uint64_t lead;                /* ns: median lateness of a wake-up */
};

/* Hold for model dm; makes the timerfd.  0 or -errno (hold_fini either
 * way).
 */
extern int hold_init (struct hold *h, struct devmodel *dm);
extern void hold_fini (struct hold *h);

/* Dispatch: r goes to the model too, at now. */
extern void hold_submit (struct hold *h, struct creq *r, uint64_t now);

/* r's real I/O finished with res.  True: r is held (its res kept) until
 * the model releases it; false: the model is done with it, finish it now.
 */
extern bool hold_io_done (struct hold *h, struct creq *r, int res);

/* The next request both ends are done with by now (its result in r->res),
 * in the model's order, or NULL.
 */
extern struct creq *hold_release (struct hold *h, uint64_t now);

/* Arm the timerfd for the model's next completion (after a submit or a
 * release).  Returns true if the deadline moved earlier.
 */
extern bool hold_arm (struct hold *h);

/* The timerfd is readable: learn how late it woke, spin to the deadline
 * if early.  False if it had not fired after all (re-armed meanwhile).
 */
extern bool hold_fired (struct hold *h);

/* One step of the median tracker: the lead after a wake-up `late' ns
 * after the time the timer was set for.
 */
static inline uint64_t
hold_lead_step (uint64_t lead, uint64_t late)
{
  if (late > lead)
    return lead + HOLD_LEAD_STEP < HOLD_LEAD_MAX ? lead + HOLD_LEAD_STEP
      : HOLD_LEAD_MAX;
  return lead > HOLD_LEAD_STEP ? lead - HOLD_LEAD_STEP : 0;
}

#endif /* CFQ_HOLD_H */
