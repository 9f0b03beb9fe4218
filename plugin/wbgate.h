/* wbgate.h: who heard of a write-back error, when syncs run at once.
 *
 * The kernel reports a write-back error once per open file, to whichever
 * sync (fsync, or a write with RWF_DSYNC) checks the file's mark first.
 * All connections share the plugin's descriptors, so io.c keeps its own
 * count of such errors per file and tells every connection that flushes
 * after one (see io.c).  A count alone leaves a race: two syncs at the
 * device at once, the kernel tells one, the other succeeds and reads the
 * count before the told one has raised it.  Its client is told its data
 * is durable when it may be lost.
 *
 * The gate closes that race.  A sync enters it when the scheduler hands
 * it out (from then on it is the device's, never the scheduler's) and
 * leaves it when it returns, raising the count first if it failed.  A
 * flush that succeeded settles before it reads the count: it waits until
 * every sync that was at the device when it returned has left.  The one
 * that took its error was among those (it checked the mark first, so it
 * was already at the device), so the count it reads includes that error.
 * Only device time is waited for: a sync still queued in the scheduler
 * has not entered, and one that enters after the settle began does not
 * hold it up for long (see wbgate.c).
 *
 *   struct wbg_ticket t = WBG_TICKET_INIT;
 *   wbg_enter (g, &t);        when dispatched (under the engine lock)
 *   ... the sync runs ...
 *   wbg_leave (g, &t, err != 0);
 *   if (!err) errors = wbg_settle (g);        a flush
 *
 * Threads: any; the gate's mutex protects it.  wbg_enter never waits for
 * anything but that mutex, whose holders never wait for the engine.
 */
#ifndef CFQ_WBGATE_H
#define CFQ_WBGATE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

struct wbgate {
  pthread_mutex_t mu;
  pthread_cond_t cv;            /* a sync left, or the epoch moved */
  uint64_t epoch;               /* under mu: the epoch a sync enters */
  unsigned active[2];           /* under mu: syncs inside, by epoch & 1 */
  unsigned waiters;             /* under mu: threads in cv */
  uint64_t errors;              /* atomic (written under mu): write-back
                                   errors on the file so far */
};

struct wbg_ticket {
  uint64_t epoch;               /* the epoch it entered in */
  uint64_t errors;              /* the count when it entered */
  bool in;                      /* entered and not yet left */
};

#define WBG_TICKET_INIT { 0, 0, false }

extern void wbg_init (struct wbgate *g);
/* Nothing may be inside. */
extern void wbg_fini (struct wbgate *g);

/* A sync goes to the device. */
extern void wbg_enter (struct wbgate *g, struct wbg_ticket *t);
/* It came back; failed: count it (before anyone settling can see it
 * gone).  A ticket that never entered only counts.
 */
extern void wbg_leave (struct wbgate *g, struct wbg_ticket *t, bool failed);
/* Count an error outside any sync (a failed buffered write). */
extern void wbg_error (struct wbgate *g);
/* Wait until every sync inside now has left; the count then. */
extern uint64_t wbg_settle (struct wbgate *g);
/* The count, as it is (for the statistics and a connection's start). */
extern uint64_t wbg_errors (const struct wbgate *g);
/* Syncs inside now (for the tests). */
extern unsigned wbg_inside (struct wbgate *g);

#endif /* CFQ_WBGATE_H */
