/* test-hold.c: the held-completion heap (plugin/hold.c).
 *
 *  1. empty: no top;
 *  2. order: a shuffled set with many equal times comes out sorted, each
 *     request exactly once;
 *  3. many entries: the heap filled to capacity, then a long random mix of
 *     pushes and pops checked step by step against a plain list (the
 *     reference's minimum must be what hold_top and hold_pop give).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hold.h"
#include "rng.h"

#define CAP 4096

static struct creq rqs[2 * CAP];
static unsigned popped[2 * CAP];

static unsigned
idx (const struct creq *r)
{
  return (unsigned) (r - rqs);
}

static void
test_empty (void)
{
  struct hold h;

  CHECK_EQ (hold_init (&h, 4), 0);
  CHECK_EQ (h.n, 0u);
  CHECK_EQ (h.cap, 4u);
  CHECK_NULL (hold_top (&h));
  rqs[0].t_hold = 7;
  hold_push (&h, &rqs[0]);
  CHECK_PTR_EQ (hold_top (&h), &rqs[0]);
  CHECK_PTR_EQ (hold_pop (&h), &rqs[0]);
  CHECK_NULL (hold_top (&h));
  hold_fini (&h);
  CHECK_NULL (h.v);
}

static void
test_order (uint64_t *seed)
{
  struct hold h;
  unsigned n = 1000, order[1000];
  uint64_t last = 0;

  CHECK_EQ (hold_init (&h, n), 0);
  for (unsigned i = 0; i < n; i++) {
    rqs[i].t_hold = 1000 + splitmix64 (seed) % 50;  /* many duplicates */
    order[i] = i;
    popped[i] = 0;
  }
  for (unsigned i = n - 1; i > 0; i--) {          /* Fisher-Yates */
    unsigned j = (unsigned) (splitmix64 (seed) % (i + 1)), t = order[i];

    order[i] = order[j];
    order[j] = t;
  }
  for (unsigned i = 0; i < n; i++)
    hold_push (&h, &rqs[order[i]]);
  CHECK_EQ (h.n, n);
  for (unsigned i = 0; i < n; i++) {
    struct creq *top = hold_top (&h), *r = hold_pop (&h);

    CHECK_PTR_EQ (r, top);
    CHECK_GE (r->t_hold, last);
    last = r->t_hold;
    popped[idx (r)]++;
  }
  CHECK_EQ (h.n, 0u);
  for (unsigned i = 0; i < n; i++)
    CHECK_EQ (popped[i], 1u);
  hold_fini (&h);
}

/* The reference: the requests in the heap, in no order. */
static struct creq *ref[CAP];
static unsigned nref;

static unsigned
ref_min (void)
{
  unsigned m = 0;

  for (unsigned i = 1; i < nref; i++)
    if (ref[i]->t_hold < ref[m]->t_hold)
      m = i;
  return m;
}

static void
test_many (uint64_t *seed)
{
  struct hold h;
  unsigned next = 0, pushes = 0, pops = 0;

  CHECK_EQ (hold_init (&h, CAP), 0);
  memset (popped, 0, sizeof popped);
  nref = 0;
  /* Fill to capacity, times spread wide. */
  while (h.n < CAP) {
    struct creq *r = &rqs[next++];

    r->t_hold = splitmix64 (seed) % 1000000;
    hold_push (&h, r);
    ref[nref++] = r;
    pushes++;
  }
  CHECK_EQ (h.n, (unsigned) CAP);
  /* A random mix, as completions and releases interleave; the requests
   * popped are pushed again later with a later time, as the engine's
   * requests come back.
   */
  for (unsigned step = 0; step < 200000; step++) {
    bool push = h.n == 0 || (h.n < CAP && splitmix64 (seed) % 2);

    if (push) {
      struct creq *r = &rqs[splitmix64 (seed) % (2 * CAP)];
      bool held = false;

      for (unsigned i = 0; i < nref && !held; i++)
        held = ref[i] == r;
      if (held)
        continue;
      r->t_hold = 500000 + splitmix64 (seed) % 1000000;
      hold_push (&h, r);
      ref[nref++] = r;
      pushes++;
    }
    else {
      unsigned m = ref_min ();
      struct creq *r;

      CHECK_EQ (hold_top (&h)->t_hold, ref[m]->t_hold);
      r = hold_pop (&h);
      CHECK_EQ (r->t_hold, ref[m]->t_hold);
      /* Equal times may leave in any order: remove the one popped. */
      for (m = 0; m < nref && ref[m] != r; m++)
        ;
      CHECK_LT (m, nref);
      ref[m] = ref[--nref];
      pops++;
    }
    CHECK_EQ (h.n, nref);
  }
  while (h.n) {
    unsigned m = ref_min ();
    struct creq *r = hold_pop (&h);

    CHECK_EQ (r->t_hold, ref[m]->t_hold);
    for (m = 0; m < nref && ref[m] != r; m++)
      ;
    CHECK_LT (m, nref);
    ref[m] = ref[--nref];
    pops++;
  }
  CHECK_EQ (pushes, pops);
  CHECK_EQ (nref, 0u);
  hold_fini (&h);
}

int
main (void)
{
  uint64_t seed = 12345;

  test_empty ();
  test_order (&seed);
  test_many (&seed);
  check_done ("test-hold");
  return 0;
}
