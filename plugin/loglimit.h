/* loglimit.h: a token bucket for log lines that clients can cause (see
 * loglimit.c).
 *
 *   static struct loglimit refusals = LOGLIMIT_INIT;
 *   uint64_t before;
 *   if (loglimit_take (&refusals, now, &before))
 *     ... log the line, with "(BEFORE more suppressed)" if before > 0
 *   ... and once a second, from a timer:
 *   if ((before = loglimit_flush (&refusals, now)))  ... log it
 *
 * Threads: any; each call takes the limiter's mutex.  Time (now) is
 * CLOCK_MONOTONIC in ns, passed in, so the arithmetic is tested on a
 * virtual clock (tests/unit/test-loglimit.c).
 */
#ifndef CFQ_LOGLIMIT_H
#define CFQ_LOGLIMIT_H

#include <pthread.h>
#include <stdbool.h>
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
};

#define LOGLIMIT_INIT { .mu = PTHREAD_MUTEX_INITIALIZER }

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

#endif /* CFQ_LOGLIMIT_H */
