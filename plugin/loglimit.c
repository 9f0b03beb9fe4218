/* loglimit.c: a token bucket for log lines that clients can cause (see
 * loglimit.h).
 *
 * A client that asks for an export it may not have, or one that does
 * not exist, gets one log line: the operator wants to know.  But a
 * client may ask thousands of times a second, and each line costs the
 * server a write to its log and the operator their log.  So such lines
 * share one bucket: LOGLIMIT_BURST at once after a quiet time, then
 * LOGLIMIT_RATE a second.  What is left out is counted and said, by the
 * next line let through or, when the flood stops, by one line at the
 * next one-second tick: no refusal goes unmentioned, and a flood of any
 * length costs at most LOGLIMIT_BURST lines, then LOGLIMIT_RATE a
 * second, then one.
 */
#include <inttypes.h>
#include <stdio.h>

#include "loglimit.h"

#define LOGLIMIT_FULL (LOGLIMIT_BURST * LOGLIMIT_NS_PER_LINE)   /* ns */
#define LOGLIMIT_QUIET 1000000000ULL    /* ns without a line: flush */

/* Top the credit up for the time since the last call ([mu]). */
static void
refill (struct loglimit *l, uint64_t now)
{
  if (!l->at)
    l->credit = LOGLIMIT_FULL;
  else if (now > l->at) {
    uint64_t d = now - l->at;

    l->credit = d >= LOGLIMIT_FULL - l->credit ? LOGLIMIT_FULL
      : l->credit + d;
  }
  l->at = now;
}

bool
loglimit_take (struct loglimit *l, uint64_t now, uint64_t *before)
{
  bool ok;

  pthread_mutex_lock (&l->mu);
  refill (l, now);
  ok = l->credit >= LOGLIMIT_NS_PER_LINE;
  if (ok) {
    l->credit -= LOGLIMIT_NS_PER_LINE;
    *before = l->suppressed;
    l->suppressed = 0;
    l->last_logged = now;
  }
  else
    l->suppressed++;
  pthread_mutex_unlock (&l->mu);
  return ok;
}

uint64_t
loglimit_flush (struct loglimit *l, uint64_t now)
{
  uint64_t n = 0;

  pthread_mutex_lock (&l->mu);
  if (l->suppressed && now - l->last_logged >= LOGLIMIT_QUIET) {
    n = l->suppressed;
    l->suppressed = 0;
    l->last_logged = now;
  }
  pthread_mutex_unlock (&l->mu);
  return n;
}

/* The limiters loglimit_line has seen, newest first: pushed under
 * list_mu, never removed, so loglimit_flush_all walks it without a lock.
 */
static struct loglimit *list;
static pthread_mutex_t list_mu = PTHREAD_MUTEX_INITIALIZER;

bool
loglimit_line (struct loglimit *l, uint64_t now, char *note, size_t len)
{
  uint64_t before;

  if (!__atomic_load_n (&l->listed, __ATOMIC_ACQUIRE)) {
    pthread_mutex_lock (&list_mu);
    if (!l->listed) {
      l->next = list;
      __atomic_store_n (&list, l, __ATOMIC_RELEASE);
      __atomic_store_n (&l->listed, true, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock (&list_mu);
  }
  if (!loglimit_take (l, now, &before))
    return false;
  if (before)
    snprintf (note, len, " (and %" PRIu64 " more lines about %s suppressed "
              "before this one: at most %d a second)", before,
              l->what ? l->what : "this", LOGLIMIT_RATE);
  else if (len)
    *note = '\0';
  return true;
}

void
loglimit_flush_all (uint64_t now, void (*emit) (const char *))
{
  char line[LOGLIMIT_NOTE];

  for (struct loglimit *l = __atomic_load_n (&list, __ATOMIC_ACQUIRE); l;
       l = l->next) {
    uint64_t n = loglimit_flush (l, now);

    if (n) {
      snprintf (line, sizeof line, "cfq: %" PRIu64 " more lines about %s "
                "suppressed (at most %d a second)", n,
                l->what ? l->what : "this", LOGLIMIT_RATE);
      emit (line);
    }
  }
}
