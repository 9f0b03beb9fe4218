/* test-loglimit.c: the token bucket for log lines clients can cause
 * (plugin/loglimit.c), on a virtual clock.
 *
 *  1. a burst: 2,000 lines in 0.2 s let LOGLIMIT_BURST through (the
 *     bucket; the next line is earned at 0.2 s), the rest counted;
 *  2. the count is handed to the next line let through, once, and every
 *     line is either logged or counted in some report;
 *  3. a flood of 10 s lets through at most LOGLIMIT_BURST +
 *     10 * LOGLIMIT_RATE;
 *  4. the flush: nothing while lines are let through, the remaining count
 *     once a second has passed without one, then nothing;
 *  5. after a quiet time the whole burst is back, no more;
 *  6. the lines a limiter writes: loglimit_line's note says the count
 *     left out before it, once; loglimit_flush_all says what is left of
 *     every limiter that wrote, once, after a quiet second.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "loglimit.h"

#define MS 1000000ULL
#define S 1000000000ULL

/* n lines evenly over [t, t + span): how many were let through; the
 * counts handed over are added to *reported.
 */
static unsigned
flood (struct loglimit *l, uint64_t t, uint64_t span, unsigned n,
       uint64_t *reported)
{
  unsigned through = 0;

  for (unsigned i = 0; i < n; i++) {
    uint64_t before = 0;

    if (loglimit_take (l, t + span * i / n, &before)) {
      through++;
      *reported += before;
    }
  }
  return through;
}

static char flushed[2][LOGLIMIT_NOTE];  /* what loglimit_flush_all said */
static unsigned nr_flushed;

static void
emit (const char *line)
{
  if (nr_flushed < 2)
    snprintf (flushed[nr_flushed], sizeof flushed[0], "%s", line);
  nr_flushed++;
}

int
main (void)
{
  struct loglimit l = LOGLIMIT_ABOUT ("test lines");
  uint64_t t0 = 5 * S, reported = 0, before = 0, n;
  unsigned through;

  /* 1. */
  through = flood (&l, t0, 200 * MS, 2000, &reported);
  printf ("2000 lines in 0.2 s: %u let through\n", through);
  CHECK_EQ (through, LOGLIMIT_BURST);
  CHECK_EQ (reported, 0);               /* the first lines had none before */

  /* 2. and 4.: the next line, a second later, says the count once. */
  CHECK_EQ (loglimit_flush (&l, t0 + 300 * MS), 0);  /* not quiet yet */
  CHECK (loglimit_take (&l, t0 + 1200 * MS, &before));
  CHECK_EQ (before, 2000 - LOGLIMIT_BURST);
  reported += before;
  CHECK_EQ (through + reported, 2000);
  CHECK (loglimit_take (&l, t0 + 1201 * MS, &before));
  CHECK_EQ (before, 0);

  /* 3. */
  reported = 0;
  l = (struct loglimit) LOGLIMIT_ABOUT ("test lines");
  through = flood (&l, t0, 10 * S, 100000, &reported);
  printf ("100000 lines in 10 s: %u let through\n", through);
  CHECK_LE (through, LOGLIMIT_BURST + 10 * LOGLIMIT_RATE);
  CHECK_GE (through, 10 * LOGLIMIT_RATE);
  /* 4.: the flood ends; what the last lines did not say comes out once,
   * a second after the last line let through.
   */
  n = loglimit_flush (&l, t0 + 10 * S + 2 * S);
  CHECK_GT (n, 0);
  CHECK_EQ (through + reported + n, 100000);
  CHECK_EQ (loglimit_flush (&l, t0 + 10 * S + 4 * S), 0);

  /* 5. */
  reported = 0;
  through = flood (&l, t0 + 60 * S, 1 * MS, 100, &reported);
  CHECK_EQ (through, LOGLIMIT_BURST);

  /* 6. */
  {
    static struct loglimit a = LOGLIMIT_ABOUT ("refused clients");
    static struct loglimit b = LOGLIMIT_ABOUT ("failed RBD requests");
    char note[LOGLIMIT_NOTE];
    unsigned i;

    for (i = 0; i < LOGLIMIT_BURST; i++) {
      CHECK (loglimit_line (&a, t0, note, sizeof note));
      CHECK_STREQ (note, "");
    }
    CHECK (!loglimit_line (&a, t0, note, sizeof note));
    CHECK (!loglimit_line (&a, t0, note, sizeof note));
    CHECK (loglimit_line (&a, t0 + 300 * MS, note, sizeof note));
    CHECK_STREQ (note, " (and 2 more lines about refused clients suppressed"
                 " before this one: at most 5 a second)");
    CHECK (loglimit_line (&b, t0, note, sizeof note));
    for (i = 0; i < 3 * LOGLIMIT_BURST; i++)
      loglimit_line (&a, t0 + 400 * MS, note, sizeof note);
    loglimit_flush_all (t0 + 900 * MS, emit);   /* a's line: not quiet */
    CHECK_EQ (nr_flushed, 0);
    loglimit_flush_all (t0 + 2 * S, emit);
    CHECK_EQ (nr_flushed, 1);
    printf ("flushed: %s\n", flushed[0]);
    CHECK (strstr (flushed[0], "more lines about refused clients suppressed"
                   " (at most 5 a second)") != NULL);
    loglimit_flush_all (t0 + 4 * S, emit);
    CHECK_EQ (nr_flushed, 1);
  }

  check_done ("test-loglimit");
  return 0;
}
