/* test-rangelock.c: the write range lock (plugin/rangelock.c).
 *
 *  1. which pairs conflict: overlapping shared ranges do not; shared and
 *     exclusive, and exclusive and exclusive, do, in either order;
 *     touching ranges ([0,4096) and [4096,8192)) do not;
 *  2. waking: a blocked locker gets the range when the conflicting one is
 *     unlocked, not before (an unlock elsewhere wakes it, and it goes back
 *     to waiting), and of two exclusive waiters on one range exactly one
 *     gets it at a time;
 *  3. many threads locking random ranges, shared and exclusive: a shadow
 *     count per block, kept while each range is held, never sees an
 *     exclusive holder next to any other holder of the same block.
 *
 * "Blocked" is observed, not guessed: a locker is blocked once the lock's
 * own waiter count (read under its mutex) says so.
 */
#include <pthread.h>
#include <stdint.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "rangelock.h"
#include "rng.h"

static struct rangelock lk = RANGELOCK_INIT (lk);

struct locker {
  pthread_t t;
  uint64_t start, len;
  bool excl;
  struct rl_range r;
  int acquired;                 /* atomic: holds the range */
  int release;                  /* atomic: told to unlock */
};

static void *
locker_main (void *arg)
{
  struct locker *l = arg;

  rl_lock (&lk, &l->r, l->start, l->len, l->excl);
  __atomic_store_n (&l->acquired, 1, __ATOMIC_RELEASE);
  while (!__atomic_load_n (&l->release, __ATOMIC_ACQUIRE))
    usleep (200);
  rl_unlock (&lk, &l->r);
  return NULL;
}

static void
start (struct locker *l, uint64_t s, uint64_t len, bool excl)
{
  l->start = s;
  l->len = len;
  l->excl = excl;
  l->acquired = l->release = 0;
  CHECK_EQ (pthread_create (&l->t, NULL, locker_main, l), 0);
}

static void
finish (struct locker *l)
{
  __atomic_store_n (&l->release, 1, __ATOMIC_RELEASE);
  CHECK_EQ (pthread_join (l->t, NULL), 0);
}

static unsigned
waiters (void)
{
  unsigned n;

  pthread_mutex_lock (&lk.mu);
  n = lk.waiters;
  pthread_mutex_unlock (&lk.mu);
  return n;
}

static int
acquired (const struct locker *l)
{
  return __atomic_load_n (&l->acquired, __ATOMIC_ACQUIRE);
}

/* Poll (10 s at most) until l holds its range; false if it never did. */
static bool
wait_acquired (const struct locker *l)
{
  for (int i = 0; i < 50000; i++) {
    if (acquired (l))
      return true;
    usleep (200);
  }
  return false;
}

/* Poll (10 s at most) until n lockers wait. */
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

/* a held, then b: does b block? */
static void
pair (uint64_t as, uint64_t al, bool ax, uint64_t bs, uint64_t bl, bool bx,
      bool conflict)
{
  struct locker a, b;

  start (&a, as, al, ax);
  CHECK (wait_acquired (&a));
  start (&b, bs, bl, bx);
  if (conflict) {
    CHECK (wait_waiters (1));
    CHECK_EQ (acquired (&b), 0);
    finish (&a);                        /* a's unlock wakes b */
    CHECK (wait_acquired (&b));
    CHECK_EQ (waiters (), 0u);
  }
  else {
    CHECK (wait_acquired (&b));         /* while a still holds */
    CHECK_EQ (acquired (&a), 1);
    CHECK_EQ (waiters (), 0u);
    finish (&a);
  }
  finish (&b);
  CHECK (list_empty (&lk.held));
}

static void
test_pairs (void)
{
  /* Overlapping: only shared with shared goes together. */
  pair (0, 8192, false, 4096, 8192, false, false);
  pair (0, 8192, false, 4096, 8192, true, true);
  pair (0, 8192, true, 4096, 8192, false, true);
  pair (0, 8192, true, 4096, 8192, true, true);
  pair (4096, 512, true, 0, 65536, true, true);   /* inside */
  /* Touching, not overlapping: the ranges are [start, start+len). */
  pair (0, 4096, true, 4096, 4096, true, false);
  pair (4096, 4096, true, 0, 4096, true, false);
  pair (0, 4096, true, 1 << 20, 4096, true, false);
}

static void
test_waking (void)
{
  struct locker a, b, c, d;

  /* b waits for a; c, unrelated, comes and goes: b is woken by c's
   * unlock, finds a still there and waits again.
   */
  start (&a, 0, 4096, true);
  CHECK (wait_acquired (&a));
  start (&b, 0, 512, false);
  CHECK (wait_waiters (1));
  start (&c, 1 << 20, 4096, true);
  CHECK (wait_acquired (&c));
  finish (&c);
  CHECK (wait_waiters (1));
  usleep (20000);
  CHECK_EQ (acquired (&b), 0);
  finish (&a);
  CHECK (wait_acquired (&b));
  finish (&b);

  /* Two exclusive waiters behind a shared holder: one at a time. */
  start (&a, 0, 8192, false);
  CHECK (wait_acquired (&a));
  start (&c, 0, 8192, true);
  start (&d, 4096, 8192, true);
  CHECK (wait_waiters (2));
  finish (&a);
  for (int i = 0; i < 50000 && !acquired (&c) && !acquired (&d); i++)
    usleep (200);
  CHECK_EQ (acquired (&c) + acquired (&d), 1);
  CHECK (wait_waiters (1));
  usleep (20000);
  CHECK_EQ (acquired (&c) + acquired (&d), 1);
  if (acquired (&c)) {
    finish (&c);
    CHECK (wait_acquired (&d));
    finish (&d);
  }
  else {
    finish (&d);
    CHECK (wait_acquired (&c));
    finish (&c);
  }
  CHECK_EQ (waiters (), 0u);
  CHECK (list_empty (&lk.held));
}

/* ---- many threads ----------------------------------------------------------- */

#define NTHREADS 8
#define NBLOCKS 64                      /* 512-byte blocks in the region */
#define ROUNDS 3000

static struct rangelock lk2;            /* made with rl_init */
static pthread_mutex_t shadow_mu = PTHREAD_MUTEX_INITIALIZER;
static int sh_shared[NBLOCKS], sh_excl[NBLOCKS];       /* under shadow_mu */
static unsigned violations, max_shared;                /* under shadow_mu */

static void
shadow (uint64_t b0, uint64_t b1, bool excl, int d)
{
  pthread_mutex_lock (&shadow_mu);
  for (uint64_t b = b0; b < b1; b++) {
    if (excl)
      sh_excl[b] += d;
    else
      sh_shared[b] += d;
    if (sh_excl[b] > 1 || (sh_excl[b] && sh_shared[b]))
      violations++;
    if ((unsigned) sh_shared[b] > max_shared)
      max_shared = (unsigned) sh_shared[b];
  }
  pthread_mutex_unlock (&shadow_mu);
}

static void *
stress_main (void *arg)
{
  uint64_t seed = (uint64_t) (uintptr_t) arg;

  for (int i = 0; i < ROUNDS; i++) {
    uint64_t b0 = splitmix64 (&seed) % NBLOCKS;
    uint64_t n = 1 + splitmix64 (&seed) % 8;
    bool excl = splitmix64 (&seed) % 3 == 0;
    struct rl_range r;

    if (b0 + n > NBLOCKS)
      n = NBLOCKS - b0;
    rl_lock (&lk2, &r, b0 * 512, n * 512, excl);
    shadow (b0, b0 + n, excl, 1);
    if (splitmix64 (&seed) % 4 == 0)
      sched_yield ();
    shadow (b0, b0 + n, excl, -1);
    rl_unlock (&lk2, &r);
  }
  return NULL;
}

static void
test_stress (void)
{
  pthread_t t[NTHREADS];

  rl_init (&lk2);
  for (uintptr_t i = 0; i < NTHREADS; i++)
    CHECK_EQ (pthread_create (&t[i], NULL, stress_main, (void *) (i + 1)), 0);
  for (int i = 0; i < NTHREADS; i++)
    CHECK_EQ (pthread_join (t[i], NULL), 0);
  CHECK_EQ (violations, 0u);
  /* Shared ranges did overlap: the test exercised sharing too. */
  CHECK_GE (max_shared, 2u);
  for (int b = 0; b < NBLOCKS; b++) {
    CHECK_EQ (sh_shared[b], 0);
    CHECK_EQ (sh_excl[b], 0);
  }
  CHECK_EQ (lk2.waiters, 0u);
  rl_fini (&lk2);
}

int
main (void)
{
  test_pairs ();
  test_waking ();
  test_stress ();
  check_done ("test-rangelock");
  return 0;
}
