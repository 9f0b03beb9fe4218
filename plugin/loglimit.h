/* loglimit.h: a token bucket for log lines that clients can cause (see
 * loglimit.c).
 *
 *   static struct loglimit refusals = LOGLIMIT_ABOUT ("refused clients");
 *   char note[LOGLIMIT_NOTE];
 *   if (loglimit_line (&refusals, now, note, sizeof note))
 *     nbdkit_error ("cfq: ... refused%s", ..., note);
 *   ... and once a second, from the tick, for every limiter at once:
 *   loglimit_flush_all (now, emit);   emit ("cfq: N more lines about
 *                                      refused clients suppressed ...")
 *
 * loglimit_take and loglimit_flush are the bucket alone, for the tests.
 *
 * Threads: any; each call takes the limiter's mutex.  Time (now) is
 * CLOCK_MONOTONIC in ns, passed in, so the arithmetic is tested on a
 * virtual clock (tests/unit/test-loglimit.c).
 */
#ifndef CFQ_LOGLIMIT_H
#define CFQ_LOGLIMIT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOGLIMIT_RATE 5                 /* lines a second, on average */
#define LOGLIMIT_BURST 10               /* lines at once, after a quiet time */
#define LOGLIMIT_NS_PER_LINE (1000000000ULL / LOGLIMIT_RATE)

struct loglimit {
  pthread_mutex_t mu;
  uint64_t credit;              /* [mu] ns of lines saved up, at most
                                   LOGLIMIT_BURST lines' worth */
  uint64_t at;                  /* [mu] ns: when credit was topped up; 0
                                   before the first call */
  uint64_t suppressed;          /* [mu] lines not logged since the last
                                   report of them */
  uint64_t last_logged;         /* [mu] ns: the last line let through */
  const char *what;             /* what its lines are about, for the
                                   counts ("refused clients"); read-only */
  struct loglimit *next;        /* on loglimit_flush_all's list, once
                                   listed (then read-only) */
  bool listed;                  /* atomic: on that list */
};

#define LOGLIMIT_ABOUT(about) { .mu = PTHREAD_MUTEX_INITIALIZER, \
                                .what = (about) }
#define LOGLIMIT_NOTE 160       /* bytes of loglimit_line's note */

/* May a line be logged at now?  true: yes, and *before is how many were
 * suppressed since the last report (for the line to say), now reset;
 * false: it is counted as suppressed.
 */
extern bool loglimit_take (struct loglimit *l, uint64_t now,
                           uint64_t *before);

/* The lines suppressed and not yet reported, if no line has been let
 * through for a second (the flood is over or still on); 0 if none.  The
 * count is reset: the caller logs it.
 */
extern uint64_t loglimit_flush (struct loglimit *l, uint64_t now);

/* loglimit_take, and the end of the line to log in note (len bytes,
 * LOGLIMIT_NOTE is enough): "" or " (and N more lines about WHAT
 * suppressed before this one: at most LOGLIMIT_RATE a second)".  The
 * limiter is listed for loglimit_flush_all.
 */
extern bool loglimit_line (struct loglimit *l, uint64_t now, char *note,
                           size_t len);

/* Every limiter loglimit_line has seen: loglimit_flush, and if lines were
 * left out, emit ("cfq: N more lines about WHAT suppressed (at most
 * LOGLIMIT_RATE a second)").  Once a second, on one thread.
 */
extern void loglimit_flush_all (uint64_t now, void (*emit) (const char *));

#endif /* CFQ_LOGLIMIT_H */
