/* test-poolshare.c: the rule by which groups share the buffer pool
 * (core/poolshare.c).
 *
 * Hand-picked cases pin each promise of the rule; then a model of the
 * pool (groups with waiters in order, buffers given and returned at
 * random) checks over many random runs that no group is given a buffer
 * past its share (beyond its only buffer) while another group waits,
 * that the pool never passes its cap, that a pool with nothing in use
 * always serves someone, and that a 33 MiB read in a 40 MiB pool is
 * served while a flood keeps asking; and that without the shares (the
 * comparison) the flood does take the pool.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "poolshare.h"
#include "rng.h"

#define MiB (1ull << 20)
#define KiB (1ull << 10)
#define NOW (10 * NSEC_PER_SEC)         /* ns: the hand-picked cases' time */
#define MS NSEC_PER_MSEC

static void
pinned (void)
{
  struct pool_grp g[3];
  const uint64_t cap = 40 * MiB;

  CHECK_EQ (pool_share (cap, 1), cap);
  CHECK_EQ (pool_share (cap, 4), 10 * MiB);
  CHECK_EQ (pool_share (cap, 0), cap);

  /* Nobody waits: nobody is served. */
  memset (g, 0, sizeof g);
  g[0].in_use = 8 * MiB;
  g[0].nbuf = 8;
  CHECK_EQ (pool_next (cap, 8 * MiB, g, 3, NOW, true), -1);

  /* A group alone may borrow the whole pool. */
  g[0].want = MiB;
  g[0].seq = 1;
  CHECK_EQ (pool_next (cap, 8 * MiB, g, 3, NOW, true), 0);
  g[0].in_use = 39 * MiB;
  g[0].nbuf = 39;
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 3, NOW, true), 0);
  /* ... up to its cap, not beyond. */
  g[0].in_use = 40 * MiB;
  g[0].nbuf = 40;
  CHECK_EQ (pool_next (cap, 40 * MiB, g, 3, NOW, true), -1);

  /* Another group comes: the borrower (older) waits, the newcomer, below
   * its share of 20 MiB, is served first as soon as there is room.
   */
  g[0].in_use = 39 * MiB;
  g[0].nbuf = 39;
  g[1].want = 64 * KiB;
  g[1].seq = 2;
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 3, NOW, true), 1);
  /* Without the shares, the older one. */
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 3, NOW, false), 0);
  /* No room for either: nobody, until a buffer comes back. */
  g[0].in_use = 40 * MiB;
  CHECK_EQ (pool_next (cap, 40 * MiB, g, 3, NOW, true), -1);
  /* Two borrowers wait: neither is served (each waits for the other's
   * buffers to come back).
   */
  g[0].in_use = 20 * MiB;
  g[0].nbuf = 20;
  g[1].in_use = 20 * MiB - 64 * KiB;
  g[1].nbuf = 2;
  g[1].want = MiB;
  CHECK_EQ (pool_next (cap, 40 * MiB - 64 * KiB, g, 3, NOW, true), -1);
  g[1].in_use -= 2 * MiB;       /* one came back: g1 is below its share */
  g[1].nbuf = 1;
  CHECK_EQ (pool_next (cap, 38 * MiB - 64 * KiB, g, 3, NOW, true), 1);

  /* Both within their shares: the group that holds less goes first,
   * though it came later; the older one next.
   */
  memset (g, 0, sizeof g);
  g[0] = (struct pool_grp) { .in_use = 5 * MiB, .nbuf = 5, .want = MiB,
                             .seq = 1 };
  g[1] = (struct pool_grp) { .in_use = 64 * KiB, .nbuf = 1,
                             .want = 64 * KiB, .seq = 2 };
  CHECK_EQ (pool_next (cap, 5 * MiB + 64 * KiB, g, 3, NOW, true), 1);
  g[1].want = 0;
  CHECK_EQ (pool_next (cap, 5 * MiB + 64 * KiB, g, 3, NOW, true), 0);

  /* A request larger than the share: its group holds nothing, so it is
   * entitled.  33 MiB in a 40 MiB pool, share 13.3 MiB with three groups.
   * It does not fit yet (the flood holds 12 MiB, gold 64 KiB).
   */
  memset (g, 0, sizeof g);
  g[0] = (struct pool_grp) { .in_use = 0, .nbuf = 0, .want = 33 * MiB,
                             .seq = 10 };
  g[1] = (struct pool_grp) { .in_use = 12 * MiB, .nbuf = 12, .want = MiB,
                             .seq = 11 };
  g[2] = (struct pool_grp) { .in_use = 0, .nbuf = 0, .want = 64 * KiB,
                             .seq = 12 };
  /* The flood, within its share and older than gold, is not served:
   * 13 MiB is more than its part of what the big read leaves, 7 / 2.
   * Gold's 64 KiB is within it.
   */
  CHECK_EQ (pool_next (cap, 12 * MiB, g, 3, NOW, true), 2);
  g[2] = (struct pool_grp) { .in_use = 64 * KiB, .nbuf = 1 };
  CHECK_EQ (pool_next (cap, 12 * MiB + 64 * KiB, g, 3, NOW, true), -1);
  /* The flood drains to where the big read fits: it goes first. */
  g[1].in_use = 6 * MiB;
  g[1].nbuf = 6;
  CHECK_EQ (pool_next (cap, 6 * MiB + 64 * KiB, g, 3, NOW, true), 0);
  /* Without the shares the flood, which fits, is served. */
  g[1].in_use = 12 * MiB;
  CHECK_EQ (pool_next (cap, 12 * MiB + 64 * KiB, g, 3, NOW, false), 1);
}

/* Presence and reserves (promises 1 and 4). */
static void
presence (void)
{
  struct pool_grp g[2];
  const uint64_t cap = 40 * MiB;

  /* Gold held 64 KiB until 1 ms ago: still present, so the flood's
   * share is 20 MiB, not 40; and its 64 KiB is kept for it.
   */
  memset (g, 0, sizeof g);
  g[1].recent = 64 * KiB;
  g[1].last = NOW - MS;
  CHECK (pool_present (&g[1], NOW));
  CHECK (!pool_present (&g[1], NOW + POOL_KEEP));
  CHECK_EQ (pool_reserve (&g[1], 20 * MiB, NOW), 64 * KiB);
  CHECK_EQ (pool_reserve (&g[1], 20 * MiB, NOW + POOL_KEEP), 0u);
  /* The flood, alone in waiting, borrows past its 20 MiB share ... */
  g[0] = (struct pool_grp) { .in_use = 30 * MiB, .nbuf = 30, .want = MiB,
                             .seq = 1, .last = NOW };
  CHECK_EQ (pool_next (cap, 30 * MiB, g, 2, NOW, true), 0);
  /* ... up to gold's reserve, not into it ... */
  g[0].in_use = 39 * MiB;
  g[0].nbuf = 39;
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 2, NOW, true), -1);
  g[0].want = 960 * KiB;
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 2, NOW, true), 0);
  g[0].want = MiB;
  /* ... which lapses once gold has been gone POOL_KEEP. */
  CHECK_EQ (pool_next (cap, 39 * MiB, g, 2, NOW + POOL_KEEP, true), 0);
  /* Gold's next read finds its room at once. */
  g[0].in_use = 40 * MiB - 64 * KiB;
  g[1].want = 64 * KiB;
  g[1].seq = 2;
  CHECK_EQ (pool_next (cap, g[0].in_use, g, 2, NOW, true), 1);

  /* pool_grp_change: recent grows while present, starts again after an
   * absence.
   */
  memset (g, 0, sizeof g);
  pool_grp_change (&g[0], NOW, true);
  g[0].in_use = 2 * MiB;
  pool_grp_change (&g[0], NOW, false);
  CHECK_EQ (g[0].recent, 2 * MiB);
  CHECK_EQ (g[0].last, NOW);
  pool_grp_change (&g[0], NOW + MS, true);
  g[0].in_use = 0;
  pool_grp_change (&g[0], NOW + MS, false);
  CHECK_EQ (g[0].recent, 2 * MiB);
  pool_grp_change (&g[0], NOW + 2 * MS, true);      /* back at once */
  g[0].in_use = MiB;
  pool_grp_change (&g[0], NOW + 2 * MS, false);
  CHECK_EQ (g[0].recent, 2 * MiB);
  pool_grp_change (&g[0], NOW + 3 * MS, true);
  g[0].in_use = 0;
  pool_grp_change (&g[0], NOW + 3 * MS, false);
  pool_grp_change (&g[0], NOW + 3 * MS + POOL_KEEP, true);  /* away */
  g[0].in_use = 64 * KiB;
  pool_grp_change (&g[0], NOW + 3 * MS + POOL_KEEP, false);
  CHECK_EQ (g[0].recent, 64 * KiB);
}

/* ---- a model of the pool --------------------------------------------------- */

/* A draw below n, from state r. */
static uint64_t
below (uint64_t *r, uint64_t n)
{
  return xorshift64s (r) % n;
}

#define G 4
#define QMAX 64
#define HMAX 2048

struct waiter {
  uint64_t size;                /* bytes */
  uint64_t seq;
  unsigned since;               /* step it came */
};

struct model {
  uint64_t cap, in_use;
  struct pool_grp g[G];
  struct waiter q[G][QMAX];     /* per group, oldest first */
  unsigned nq[G];
  struct { unsigned grp; uint64_t size; } held[HMAX];
  unsigned nheld;
  uint64_t seq;
  unsigned step;                /* a step is 1 ms */
  unsigned over;                /* grants past the share while another waited */
  unsigned longest[G];          /* steps: each group's longest wait */
};

static uint64_t
m_now (const struct model *m)
{
  return NOW + (uint64_t) m->step * MS;
}

static void
m_sync (struct model *m, unsigned i)
{
  m->g[i].want = m->nq[i] ? m->q[i][0].size : 0;
  m->g[i].seq = m->nq[i] ? m->q[i][0].seq : 0;
  pool_grp_change (&m->g[i], m_now (m), false);
}

static bool
m_ask (struct model *m, unsigned i, uint64_t size)
{
  if (m->nq[i] == QMAX)
    return false;
  pool_grp_change (&m->g[i], m_now (m), true);
  m->q[i][m->nq[i]++] = (struct waiter) { size, ++m->seq, m->step };
  m_sync (m, i);
  return true;
}

/* Serve as the rule says; count what the rule promises never happens. */
static void
m_serve (struct model *m, bool share)
{
  int i;

  while ((i = pool_next (m->cap, m->in_use, m->g, G, m_now (m),
                         share)) >= 0) {
    struct waiter w = m->q[i][0];
    unsigned active = 0;
    bool other_waits = false;

    CHECK_LE (m->in_use + w.size, m->cap);
    CHECK_LT (m->nheld, HMAX);
    pool_grp_change (&m->g[i], m_now (m), true);
    memmove (&m->q[i][0], &m->q[i][1], (m->nq[i] - 1) * sizeof w);
    m->nq[i]--;
    m->g[i].in_use += w.size;
    m->g[i].nbuf++;
    m_sync (m, (unsigned) i);
    m->in_use += w.size;
    m->held[m->nheld].grp = (unsigned) i;
    m->held[m->nheld++].size = w.size;
    if (m->step - w.since > m->longest[i])
      m->longest[i] = m->step - w.since;
    for (unsigned j = 0; j < G; j++) {
      active += pool_present (&m->g[j], m_now (m));
      other_waits |= j != (unsigned) i && m->nq[j] > 0;
    }
    if (m->g[i].in_use > pool_share (m->cap, active) && m->g[i].nbuf > 1 &&
        other_waits)
      m->over++;
  }
}

/* The k-th buffer given out of those still held comes back. */
static void
m_return (struct model *m, unsigned k)
{
  unsigned i = m->held[k].grp;

  pool_grp_change (&m->g[i], m_now (m), true);
  m->g[i].in_use -= m->held[k].size;
  m->g[i].nbuf--;
  pool_grp_change (&m->g[i], m_now (m), false);
  m->in_use -= m->held[k].size;
  m->nheld--;
  memmove (&m->held[k], &m->held[k + 1],
           (m->nheld - k) * sizeof m->held[0]);
}

/* Random arrivals and returns; then no more arrivals until all waiters
 * are served.  Every state must serve someone if nothing is in use.
 */
static void
random_runs (void)
{
  static const uint64_t sizes[] = { 64 * KiB, 128 * KiB, MiB, 4 * MiB,
                                    33 * MiB };
  unsigned longest = 0;

  for (unsigned run = 0; run < 300; run++) {
    struct model m;
    uint64_t seed = run, r = splitmix64 (&seed);

    memset (&m, 0, sizeof m);
    m.cap = (40 + below (&r, 60)) * MiB;
    for (m.step = 0; m.step < 3000; m.step++) {
      if (below (&r, 100) < 50 || m.nheld == 0) {
        unsigned i = (unsigned) below (&r, G);
        uint64_t size = sizes[below (&r, 5)];

        /* Group 0 asks for anything, the others for small buffers. */
        if (i > 0 && size > MiB)
          size = MiB;
        m_ask (&m, i, size);
      }
      else
        m_return (&m, (unsigned) below (&r, m.nheld));
      m_serve (&m, true);
      if (m.in_use == 0) {
        unsigned waiting = 0;

        for (unsigned i = 0; i < G; i++)
          waiting += m.nq[i];
        CHECK_EQ (waiting, 0);  /* an empty pool serves someone */
      }
    }
    /* Drain: everyone is served in the end. */
    while (m.nheld) {
      m_return (&m, (unsigned) below (&r, m.nheld));
      m_serve (&m, true);
      m.step++;
    }
    for (unsigned i = 0; i < G; i++)
      CHECK_EQ (m.nq[i], 0);
    CHECK_EQ (m.over, 0);
    for (unsigned i = 0; i < G; i++)
      if (m.longest[i] > longest)
        longest = m.longest[i];
  }
  printf ("random runs: the longest wait %u steps\n", longest);
}

/* A 33 MiB read (group 0) and gold's 64 KiB reads one at a time (group
 * 2) beside a flood (group 1) that keeps 64 reads of 1 MiB waiting or
 * holding a buffer, in a 40 MiB pool; one buffer comes back a step, the
 * oldest first.  With the shares the big read is served once the flood
 * has drained to its part (within about 40 steps), gold at once, and the
 * flood is never given a buffer past its share while they wait; without
 * them the big read never is.
 */
static unsigned
flood (bool share, unsigned *gold_longest, unsigned *over)
{
  struct model m;
  unsigned served_at = 0;
  uint64_t big_seq;

  memset (&m, 0, sizeof m);
  m.cap = 40 * MiB;
  for (unsigned k = 0; k < 64; k++)
    m_ask (&m, 1, MiB);
  m_serve (&m, share);          /* the flood alone: it borrows the pool */
  CHECK_EQ (m.in_use, 40 * MiB);
  m_ask (&m, 0, 33 * MiB);
  big_seq = m.seq;
  for (m.step = 1; m.step < 2000; m.step++) {
    if (m.nq[2] == 0 && m.g[2].nbuf == 0)
      m_ask (&m, 2, 64 * KiB);
    while (m.nq[1] + m.g[1].nbuf < 64)
      m_ask (&m, 1, MiB);
    /* The oldest buffer comes back (gold's and the big read's too). */
    if (m.nheld)
      m_return (&m, 0);
    m_serve (&m, share);
    if (!served_at && (m.nq[0] == 0 || m.q[0][0].seq != big_seq))
      served_at = m.step;
  }
  *over = m.over;
  *gold_longest = m.longest[2];
  return served_at;
}

int
main (void)
{
  unsigned at, gold, over;

  pinned ();
  presence ();
  random_runs ();

  at = flood (true, &gold, &over);
  printf ("shares: the 33 MiB read served at step %u, gold waits at most "
          "%u steps, %u buffers past a share\n", at, gold, over);
  CHECK_GT (at, 0);
  CHECK_LE (at, 45);
  CHECK_LE (gold, 1);
  CHECK_EQ (over, 0);
  at = flood (false, &gold, &over);
  printf ("no shares: the 33 MiB read served at step %u (0: never), %u "
          "buffers past a share\n", at, over);
  CHECK_EQ (at, 0);
  CHECK_GT (over, 0);
  check_done ("test-poolshare");
  return 0;
}
