/* test-wbgate.c: the write-back error gate (plugin/wbgate.c).
 *
 *  1. with nothing inside, settle returns at once, with the count;
 *  2. a settler waits for a sync inside until it leaves, and then sees
 *     the error it counted (the race of io.c: the kernel told the other
 *     sync, which has not counted yet);
 *  3. a sync that enters after a settle began does not hold it: the
 *     settle ends when the syncs that were inside have left, while the
 *     newcomer is still inside;
 *  4. two settlers at once, and a ticket that never entered;
 *  5. many threads entering, leaving (every leave counts an error) and
 *     settling: a settle that began with n syncs inside and the count at
 *     c returns at least c + n, since each of those left before it
 *     returned; at the end nothing is inside and the count is the number
 *     of leaves.
 *
 * "Blocked" is observed, not guessed: from the gate's own waiter count,
 * read under its mutex.
 */
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#include "check.h"
#include "rng.h"
#include "wbgate.h"

static struct wbgate g;

static unsigned
waiters (void)
{
  unsigned n;

  pthread_mutex_lock (&g.mu);
  n = g.waiters;
  pthread_mutex_unlock (&g.mu);
  return n;
}

/* Poll (10 s at most) until n threads wait in the gate. */
static bool
wait_waiters (unsigned n)
{
  for (int i = 0; i < 50000; i++) {
    if (waiters () == n)
      return true;
    usleep (200);
  }
  return false;
}

struct settler {
  pthread_t t;
  uint64_t result;
  int done;                     /* atomic */
};

static void *
settler_main (void *arg)
{
  struct settler *s = arg;

  s->result = wbg_settle (&g);
  __atomic_store_n (&s->done, 1, __ATOMIC_RELEASE);
  return NULL;
}

static void
settle_start (struct settler *s)
{
  s->done = 0;
  CHECK_EQ (pthread_create (&s->t, NULL, settler_main, s), 0);
}

static bool
settle_done (struct settler *s)
{
  return __atomic_load_n (&s->done, __ATOMIC_ACQUIRE);
}

static uint64_t
settle_join (struct settler *s)
{
  CHECK_EQ (pthread_join (s->t, NULL), 0);
  CHECK (settle_done (s));
  return s->result;
}

static void
test_empty (void)
{
  CHECK_EQ (wbg_settle (&g), 0u);
  wbg_error (&g);
  CHECK_EQ (wbg_settle (&g), 1u);
  CHECK_EQ (wbg_errors (&g), 1u);
}

static void
test_waits (void)
{
  struct wbg_ticket a = WBG_TICKET_INIT;
  struct settler s;
  uint64_t c0 = wbg_errors (&g);

  wbg_enter (&g, &a);
  CHECK_EQ (a.errors, c0);
  CHECK_EQ (wbg_inside (&g), 1u);
  settle_start (&s);
  CHECK (wait_waiters (1));
  usleep (20000);
  CHECK (!settle_done (&s));            /* still waiting for a */
  wbg_leave (&g, &a, true);
  CHECK_EQ (settle_join (&s), c0 + 1);  /* and sees a's error */
  CHECK_EQ (wbg_inside (&g), 0u);
  CHECK_EQ (waiters (), 0u);
}

static void
test_newcomer (void)
{
  struct wbg_ticket a = WBG_TICKET_INIT, b = WBG_TICKET_INIT;
  struct settler s;
  uint64_t c0 = wbg_errors (&g);

  wbg_enter (&g, &a);
  settle_start (&s);
  CHECK (wait_waiters (1));             /* past the epoch move, on a */
  wbg_enter (&g, &b);                   /* after the settle began */
  CHECK_EQ (wbg_inside (&g), 2u);
  wbg_leave (&g, &a, false);
  CHECK_EQ (settle_join (&s), c0);      /* b still inside */
  CHECK_EQ (wbg_inside (&g), 1u);
  CHECK (b.in);
  /* A settle now waits for b. */
  settle_start (&s);
  CHECK (wait_waiters (1));
  wbg_leave (&g, &b, true);
  CHECK_EQ (settle_join (&s), c0 + 1);
}

static void
test_two_settlers (void)
{
  struct wbg_ticket a = WBG_TICKET_INIT, never = WBG_TICKET_INIT;
  struct settler s1, s2;
  uint64_t c0 = wbg_errors (&g);

  wbg_enter (&g, &a);
  settle_start (&s1);
  settle_start (&s2);
  CHECK (wait_waiters (2));
  wbg_leave (&g, &never, true);         /* never entered: only counts */
  CHECK_EQ (wbg_inside (&g), 1u);
  usleep (20000);
  CHECK (!settle_done (&s1));
  CHECK (!settle_done (&s2));
  wbg_leave (&g, &a, false);
  CHECK_EQ (settle_join (&s1), c0 + 1);
  CHECK_EQ (settle_join (&s2), c0 + 1);
  CHECK_EQ (waiters (), 0u);
}

#define NTHREADS 8
#define ROUNDS 2000

static uint64_t leaves;                 /* atomic */
static unsigned violations;             /* atomic */
static unsigned settles_with_inside;    /* atomic */

static void *
stress_main (void *arg)
{
  uint64_t seed = (uintptr_t) arg;
  uint64_t r = splitmix64 (&seed);
  for (int i = 0; i < ROUNDS; i++) {
    if (xorshift64s (&r) % 3 == 0) {
      uint64_t c0, c1;
      unsigned n0;

      pthread_mutex_lock (&g.mu);      /* n0 and c0 at one moment */
      n0 = g.active[0] + g.active[1];
      c0 = g.errors;
      pthread_mutex_unlock (&g.mu);
      c1 = wbg_settle (&g);
      if (n0)
        __atomic_add_fetch (&settles_with_inside, 1, __ATOMIC_RELAXED);
      if (c1 < c0 + n0)
        __atomic_add_fetch (&violations, 1, __ATOMIC_RELAXED);
    }
    else {
      struct wbg_ticket t = WBG_TICKET_INIT;

      wbg_enter (&g, &t);
      usleep ((useconds_t) (xorshift64s (&r) % 300));
      wbg_leave (&g, &t, true);
      __atomic_add_fetch (&leaves, 1, __ATOMIC_RELAXED);
    }
  }
  return NULL;
}

static void
test_stress (void)
{
  pthread_t t[NTHREADS];
  uint64_t c0 = wbg_errors (&g);

  for (uintptr_t i = 0; i < NTHREADS; i++)
    CHECK_EQ (pthread_create (&t[i], NULL, stress_main, (void *) (i + 1)), 0);
  for (int i = 0; i < NTHREADS; i++)
    CHECK_EQ (pthread_join (t[i], NULL), 0);
  CHECK_EQ (violations, 0u);
  CHECK_GT (settles_with_inside, 0u);   /* the property was put to work */
  CHECK_EQ (wbg_inside (&g), 0u);
  CHECK_EQ (wbg_errors (&g), c0 + leaves);
  CHECK_EQ (waiters (), 0u);
}

int
main (void)
{
  wbg_init (&g);
  test_empty ();
  test_waits ();
  test_newcomer ();
  test_two_settlers ();
  test_stress ();
  wbg_fini (&g);
  check_done ("test-wbgate");
  return 0;
}
