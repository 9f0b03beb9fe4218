/* cfq-latency.c: latency targets and the start-up boost, through the
 * length of the groups' turns and what a group is charged.
 *
 * Weights say how a busy device is split; a tenant often cares about
 * something else: "my p99 stays under 5 ms while the backup runs" (a
 * latency target), or "it starts as fast as on an idle device" (a boost).
 * The kernel's answers each have a fault: io.latency clamps every peer's
 * queue depth to 1 while the protected group suffers, whatever the miss
 * (binary protection); iocost's targets are for the whole device; BFQ's
 * weight raising can be farmed by a client that reconnects.  Here a
 * target first shortens everyone's turns on a disk, then acts, as the
 * boost does, on a group's effective weight and charge (its vdisktime),
 * graded:
 *
 * Latency target ([group] latency_target, latency_percentile).
 * - Measure: every completion of a group with a target counts its latency
 *   (insert to completion) in the group's window histogram (log buckets,
 *   16 per octave: a percentile is read as its bucket's upper edge, at
 *   most 6.25% high, never low).  Windows are the device's, LAT_WINDOW
 *   (1 s) long, closed by the first completion after their end; a window
 *   with fewer than LAT_MIN_SAMPLES completions of the group gives no
 *   verdict.  The miss is m = percentile / target (permille).  The
 *   first window opens with the first request of a group with a target,
 *   not when the target is set: a client's first second is then the
 *   first window, judged whole.  (Opened when the target is set, through
 *   the control socket before the clients start, latency-protect-hdd at
 *   300 ms: the windows would begin 0.35 s before the load, the first,
 *   judged on 0.65 s of it, passes at 226 ms, and the first cut comes
 *   1.65 s into the load, so the clients' second second misses in every
 *   run, 414-565 ms.)
 * - Control, two levers, the cheaper first.  The controller aims at
 *   LAT_AIM (85%) of each target, so that one window's noise stays under
 *   it.  At a window's end, with M the largest miss among the graded
 *   targets judged:
 *     M > LAT_AIM, on a disk, the turns above their floor: every group's
 *       turn is cut.  What a reader with a target waits for on a disk is
 *       the round of the others' turns, each about its share of
 *       target_latency plus the drain of what it keeps at the device
 *       (quantum).  cfqd's turn (permille) scales both, for every group:
 *       rounds shorten, shares stay, and the cost is seeks.  The cut is
 *       (LAT_AIM / M)^2, not LAT_AIM / M: half of a disk reader's wait
 *       (its own seeks, the drains) does not shorten with the turns, and
 *       with the plain ratio the second window still missed
 *       (latency-protect-hdd at 300 ms: 319-344 ms against 229-290).  A
 *       group that misses has its vdisktime lead over the tree's
 *       minimum cut by as much: its last whole turn is then charged as
 *       a short one, where it would otherwise wait while the others
 *       caught up on short turns (window 2: 444-483 ms); one in its
 *       turn when the window closes (the window's end is seen at a
 *       completion, often its own) has that turn charged as a short one
 *       at its end (charged whole, in the lab at 300 ms db waited
 *       377 ms for the others' short turns after the cut, and missed
 *       window 2 at 366-490 ms).  A cut that the floor stops short of
 *       leaves the rest of the miss to the weights in the same window:
 *       the cut is expected to move the miss by the square root of its
 *       factor, and the weights are lowered by what remains
 *       (latency-protect-hdd at 150 ms: window 2 at 158-210 ms, where it
 *       waited a window for the weights, 278-289).  The floor,
 *       LAT_TURN_FLOOR (3/8: target_latency 112 ms, quantum 3 at the
 *       defaults), is where shorter turns stop helping: a reader's own
 *       requests, served in sector order, then wait across several of
 *       its short turns (lat-hdd.job: 97-98% of windows met at 3/8,
 *       78-83% at 1/4).
 *     M > LAT_AIM otherwise (turns at their floor, or flash): each
 *       group has a scale (permille): its effective weight, the one CFQ
 *       uses for charges, group slices and the tree's total weight, is
 *       its set weight times the scale.  Every group is scaled by
 *       max(its own miss, LAT_AIM) / M, so groups without a target by
 *       LAT_AIM / M (a p99 twice the aim halves their weight: the least
 *       step that would meet it if latency follows the others' share),
 *       and targeted groups that miss less by how much less (several
 *       targets balance by how far each misses); then the scales are
 *       renormalized so the largest is LAT_SCALE_ONE.  This costs the
 *       others their time: a reader that is always busy takes it, and
 *       on a disk its small requests move few bytes with it.
 *     M <= LAT_MET_HEADROOM (70%), or no verdict: every scale is
 *       restored by 1/LAT_RESTORE_STEP (1/8) per window, up to
 *       LAT_SCALE_ONE; once all are whole, the turn is restored so;
 *     in between: held.
 *   On latency-protect-hdd's tenants at 300 ms (cfqsim, 60 s): the
 *   turns alone meet it, with 0.98-1.03 of the total MiB/s kept, where
 *   the weights alone kept 0.63-0.69; at 150 ms both levers are used,
 *   0.57 kept (0.38).
 *   On flash, where the work-conserving dispatch keeps several groups
 *   at the device at once, what a reader waits for is the device queue
 *   and there are no turns to cut: there a group's share of wc_depth is
 *   scaled as its weight is (at least one request;
 *   cfq_lat_depth_full).  Graded too: the same scale, so a small miss
 *   takes a little depth, and the floor leaves a tenth.
 * - Floor: no scale goes below LAT_SCALE_FLOOR (1/10 of the set weight),
 *   so a target the device cannot meet does not starve the others.  A
 *   group that misses LAT_UNMET_WINDOWS windows in a row while the turns
 *   and every other group are at their floors has a target the device
 *   does not meet:
 *   it is flagged (unmet, counted, traced) until it is met again or
 *   gives no verdict (idle); a window with no verdict, or one in which a
 *   busy other group is above the floor, starts the count again.
 * - latency_mode = binary is the kernel's io.latency rule, for
 *   comparison: while such a group missed in its last window, every other
 *   group has at most one request at the device; a window in which it
 *   gives no verdict (it went idle) releases them, as it restores the
 *   graded mode's scales.
 * Nothing here runs while no group has a target: the scales and the
 * turn stay 1 and CFQ is unchanged.
 *
 * Boost ([group] boost = on).  A connection whose first request comes, or
 * that is busy again after LAT_BOOST_IDLE (2 s) with nothing outstanding,
 * is boosted for LAT_BOOST_TIME (5 s): its queue's charges are divided by
 * LAT_BOOST_FACTOR (its slices' and its drains', deviation 19: a queue
 * two deep expires with a request out at every turn, and its drains
 * charged in full came to several times its boosted slices), and its
 * group, if off the tree, joins it at the front (min_vdisktime), not the
 * end.  The target: a start-up beside n busy groups finishes within 1.5x
 * its time alone.
 * - The factor, 30 (BFQ's raising): boosted, a group gets F/(F+n) of the
 *   device beside n groups of its weight; 1.5x needs 2/3, so F >= 2n:
 *   30 covers 15.  Beside 8 readers (cfqsim's disk, a start-up of 1.6 s
 *   alone) 8 took 3.9 s, 16 and 30 without the front 2.6 s.
 * - The front: at the end it first waits a round of everyone's slices
 *   (0.4 s there).  With both: 2.2 s (1.33x).
 * - Bursts: a new connection whose first request comes within
 *   LAT_BURST_GAP (180 ms, BFQ's burst interval) of the previous new one
 *   of its group joins that burst; from the LAT_BURST_MIN-th (4th) on, the
 *   burst's connections are not boosted (and those already are lose it):
 *   many connections at once are a batch job, not a start-up.
 * - The allowance: the charge a group's boosts forgive is taken from an
 *   allowance of at most LAT_ALLOW_MAX (2 s of charge), refilled at
 *   LAT_ALLOW_MAX per LAT_ALLOW_PERIOD (1 min) only while the group is off
 *   the tree: a start-up spends what idleness earned; a boost ends when
 *   it is spent.  A group forgiven A over a period P gets s + A(1-s)/P of
 *   the device (s: its weight share), so staying within 10% of s needs
 *   A <= 0.1 P s / (1-s).  A group that stays busy (reconnecting in a
 *   loop) is forgiven at most LAT_ALLOW_MAX, once: 2 s keeps it within
 *   10% over a minute for s >= 1/4 (0.523 at s = 1/2; 0.96 with no
 *   allowance).  A start-up of T alone that finishes within 1.5 T beside
 *   n groups is forgiven T - T/(2n): 2 s covers T up to about 2 s.  A
 *   longer one gets that much and then its weight; no allowance serves
 *   both targets beyond it.
 *
 * Policy only: time comes in as an argument.  One thread owns a cfqd.
 */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "cfq-priv.h"

/* ---- the window histogram ------------------------------------------------ */

static unsigned
lat_bucket (uint64_t v)
{
  unsigned e, sub;

  if (v < (1ULL << LAT_OCT_MIN))
    return 0;
  e = 63 - (unsigned) __builtin_clzll (v);
  if (e >= LAT_OCT_MAX)
    return LAT_BUCKETS - 1;
  sub = (unsigned) (v >> (e - LAT_SUB_BITS)) & (LAT_SUB - 1);
  return 1 + (e - LAT_OCT_MIN) * LAT_SUB + sub;
}

/* ns: the upper edge of bucket i. */
static uint64_t
lat_bucket_top (unsigned i)
{
  unsigned e, sub;

  if (i == 0)
    return 1ULL << LAT_OCT_MIN;
  i--;
  e = LAT_OCT_MIN + i / LAT_SUB;
  sub = i % LAT_SUB;
  return (uint64_t) (LAT_SUB + sub + 1) << (e - LAT_SUB_BITS);
}

/* ns: the window's latency at pct percent (at least that many of its
 * completions took no longer).
 */
static uint64_t
lat_percentile (const struct cfq_lat *l, unsigned pct)
{
  uint64_t want = ((uint64_t) l->nr * pct + 99) / 100, seen = 0;

  for (unsigned i = 0; i < LAT_BUCKETS; i++) {
    seen += l->hist[i];
    if (seen >= want && seen)
      return lat_bucket_top (i);
  }
  return 0;
}

/* ---- effective weights --------------------------------------------------- */

/* The weight CFQ uses: the set one times the scale, at least 1. */
static void
lat_apply (struct cfqd *cfqd, struct sched_group *g)
{
  unsigned w = g->weight_set * g->lat.scale / LAT_SCALE_ONE;

  if (w < 1)
    w = 1;
  if (g->on_st)
    cfqd->grp_st.total_weight = cfqd->grp_st.total_weight - g->weight + w;
  g->weight = w;
}

void
cfq_lat_group_init (struct cfqd *cfqd, struct sched_group *g, unsigned w)
{
  lat_conf_init (&g->lat.conf);
  g->lat.scale = LAT_SCALE_ONE;
  g->lat.cut = LAT_SCALE_ONE;
  g->lat.allow = LAT_ALLOW_MAX;
  g->lat.allow_at = cfqd->now;
  g->lat.burst_last = SCHED_NEVER;
  g->weight_set = w;
  g->weight = w;
}

void
cfq_lat_set_weight (struct cfqd *cfqd, struct sched_group *g, unsigned w)
{
  g->weight_set = w;
  lat_apply (cfqd, g);
}

int
cfq_group_set_latency (struct sched *s, struct sched_group *g,
                       const struct lat_conf *c)
{
  struct cfqd *cfqd = CFQD (s);
  const bool had = g->lat.conf.target != 0, has = c->target != 0;

  if (!lat_conf_valid (c))
    return -ERANGE;
  g->lat.conf = *c;
  if (had != has) {
    cfqd->lat_targets += has ? 1 : -1;
    if (has && cfqd->lat_targets == 1)
      cfqd->lat_window_end = SCHED_NEVER;       /* cfq_lat_insert opens it */
  }
  memset (g->lat.hist, 0, sizeof g->lat.hist);
  g->lat.nr = 0;
  g->lat.unmet = false;
  g->lat.floor_windows = 0;
  if (!cfqd->lat_targets) {
    /* No target left: every group back to its set weight. */
    const struct list *p;
    cfqd->lat_clamp = false;
    cfqd->lat_turn = LAT_SCALE_ONE;
    list_for_each (p, &cfqd->groups) {
      struct sched_group *o = list_entry (p, struct sched_group, link);
      o->lat.scale = LAT_SCALE_ONE;
      o->lat.cut = LAT_SCALE_ONE;       /* no turn charged short after */
      lat_apply (cfqd, o);
    }
  }
  CFQ_TRACE (cfqd, NULL, "group %s: latency target %llu us at p%u (%s),"
             " boost %s", g->name, (unsigned long long) (c->target / 1000),
             c->percentile, c->mode == LAT_MODE_BINARY ? "binary" : "graded",
             c->boost ? "on" : "off");
  return 0;
}

/* ---- the controller ------------------------------------------------------ */

/* Close G's window: its miss in permille (0: no verdict). */
static unsigned
lat_judge (struct cfqd *cfqd, struct sched_group *g)
{
  struct cfq_lat *l = &g->lat;
  unsigned miss = 0;

  if (l->conf.target && l->nr >= LAT_MIN_SAMPLES) {
    uint64_t p = lat_percentile (l, l->conf.percentile);
    uint64_t m = p * LAT_SCALE_ONE / l->conf.target;

    miss = m > 100 * LAT_SCALE_ONE ? 100 * LAT_SCALE_ONE : (unsigned) m;
    if (!miss)
      miss = 1;
    l->last = p;
    l->windows++;
    bool missing = p > l->conf.target;

    if (missing)
      l->misses++;
    else {
      l->floor_windows = 0;
      l->unmet = false;
    }
    CFQ_TRACE (cfqd, NULL, "group %s: p%u %llu us, target %llu us: %s",
               g->name, l->conf.percentile,
               (unsigned long long) (p / 1000),
               (unsigned long long) (l->conf.target / 1000),
               missing ? "missed" : "met");
  }
  else if (l->conf.target) {
    /* No verdict (it was idle): nothing is known to miss, and a run of
     * missed windows at the floor is broken.
     */
    l->unmet = false;
    l->floor_windows = 0;
  }
  memset (l->hist, 0, sizeof l->hist);
  l->nr = 0;
  return miss;
}

/* Turns are cut where they are what a target waits for: a device that
 * seeks.
 */
static bool
lat_turns_apply (const struct cfqd *cfqd)
{
  return !cfq_nonrot (cfqd);
}

uint64_t
cfq_lat_target_latency (const struct cfqd *cfqd)
{
  return t_get (cfqd, T_TARGET_LATENCY) * cfqd->lat_turn / LAT_SCALE_ONE;
}

unsigned
cfq_lat_quantum (const struct cfqd *cfqd)
{
  uint64_t q = t_get (cfqd, T_QUANTUM);

  if (cfqd->lat_turn >= LAT_SCALE_ONE)
    return (unsigned) q;
  q = (q * cfqd->lat_turn + LAT_SCALE_ONE / 2) / LAT_SCALE_ONE;
  return q ? (unsigned) q : 1;
}

static unsigned
lat_isqrt (uint64_t x)
{
  uint64_t r = 0, b = 1ULL << 62;

  while (b > x)
    b >>= 2;
  while (b) {
    if (x >= r + b) {
      x -= r + b;
      r = (r >> 1) + b;
    }
    else
      r >>= 1;
    b >>= 2;
  }
  return (unsigned) r;
}

/* M > LAT_AIM, the turns above their floor: cut every group's turn by
 * (LAT_AIM / M)^2, and the lead of each group that misses by as much.
 * Returns the miss left for the weights (permille): what the cut, at the
 * floor, is not expected to take off; LAT_AIM if the cut was whole.
 */
static unsigned
lat_shorten (struct cfqd *cfqd, struct sched_group *worst, unsigned m)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  const unsigned was = cfqd->lat_turn;
  unsigned r, t = (unsigned) ((uint64_t) was * LAT_AIM * LAT_AIM
                           / ((uint64_t) m * m));
  struct list *p;

  if (t < LAT_TURN_FLOOR)
    t = LAT_TURN_FLOOR;
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    int64_t lead = (int64_t) (g->vdisktime - st->min_vdisktime);

    if (g->lat.miss <= LAT_AIM)
      continue;
    if (cfqd->active_queue && cfqd->active_queue->cfqg == g)
      /* A turn that spans two cuts is charged at both. */
      g->lat.cut = (unsigned) ((uint64_t) g->lat.cut * t / was);
    if (g->on_st && lead > 0)
      cfqg_set_vdisktime (st, g, st->min_vdisktime
                          + (uint64_t) lead * t / was);
  }
  cfqd->lat_turn = t;
  worst->lat.floor_windows = 0;       /* not at the floor: no run */
  CFQ_TRACE (cfqd, NULL, "latency: turns cut to %u permille", t);
  /* The cut moves a miss by the square root of its factor. */
  r = lat_isqrt ((uint64_t) t * LAT_SCALE_ONE * LAT_SCALE_ONE / was);
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    g->lat.miss = (unsigned) ((uint64_t) g->lat.miss * r / LAT_SCALE_ONE);
  }
  return (unsigned) ((uint64_t) m * r / LAT_SCALE_ONE);
}

/* M > LAT_AIM: lower the others by how much less they miss, floor,
 * renormalize.  WORST is the group that misses most.
 */
static void
lat_lower (struct cfqd *cfqd, struct sched_group *worst, unsigned m)
{
  struct list *p;
  unsigned top = 0;
  bool others_floored = true;

  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    unsigned own = g->lat.miss > LAT_AIM ? g->lat.miss : LAT_AIM;
    unsigned s = (unsigned) ((uint64_t) g->lat.scale * own / m);

    g->lat.scale = s < LAT_SCALE_FLOOR ? LAT_SCALE_FLOOR : s;
    if (g->lat.scale > top)
      top = g->lat.scale;
  }
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    unsigned s = g->lat.scale * LAT_SCALE_ONE / top;

    g->lat.scale = s < LAT_SCALE_FLOOR ? LAT_SCALE_FLOOR : s;
    if (g != worst && g->nr_cfqq && g->lat.scale > LAT_SCALE_FLOOR)
      others_floored = false;
    lat_apply (cfqd, g);
  }
  if (!others_floored)
    worst->lat.floor_windows = 0;       /* the run "in a row" is broken */
  else if (++worst->lat.floor_windows >= LAT_UNMET_WINDOWS
           && !worst->lat.unmet) {
    worst->lat.unmet = true;
    worst->lat.st_unmet++;
    CFQ_TRACE (cfqd, NULL, "group %s: latency target not met with every"
               " other group at the floor", worst->name);
  }
}

/* A scale or the turn, restored a step: by 1/LAT_RESTORE_STEP of itself
 * (rounded up), at most LAT_SCALE_ONE.
 */
static unsigned
lat_grow (unsigned v)
{
  v += (v + LAT_RESTORE_STEP - 1) / LAT_RESTORE_STEP;
  return v > LAT_SCALE_ONE ? LAT_SCALE_ONE : v;
}

/* Met with room: the weights first, then the turns. */
static void
lat_restore (struct cfqd *cfqd)
{
  struct list *p;
  bool whole = true;

  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);

    if (g->lat.scale < LAT_SCALE_ONE)
      whole = false;
    g->lat.scale = lat_grow (g->lat.scale);
    lat_apply (cfqd, g);
  }
  if (whole)
    cfqd->lat_turn = lat_grow (cfqd->lat_turn);
}

/* The window ended: judge every targeted group, then act. */
static void
lat_window_end (struct cfqd *cfqd, uint64_t now)
{
  struct sched_group *worst = NULL;
  unsigned m = 0;
  bool clamp = false, judged = false;
  struct list *p;

  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    unsigned miss = lat_judge (cfqd, g);

    if (g->lat.conf.mode == LAT_MODE_BINARY) {
      g->lat.miss = 0;
      clamp = clamp || miss > LAT_SCALE_ONE;
      continue;
    }
    g->lat.miss = miss;
    judged = judged || miss;
    if (miss > m) {
      m = miss;
      worst = g;
    }
  }
  if (clamp != cfqd->lat_clamp)
    CFQ_TRACE (cfqd, NULL, "latency: others' depth %s", clamp
               ? "clamped to 1" : "released");
  cfqd->lat_clamp = clamp;
  if (worst && m > LAT_AIM) {
    if (lat_turns_apply (cfqd) && cfqd->lat_turn > LAT_TURN_FLOOR)
      m = lat_shorten (cfqd, worst, m);
    if (m > LAT_AIM)
      lat_lower (cfqd, worst, m);
  }
  else if (!judged || m <= LAT_MET_HEADROOM)
    lat_restore (cfqd);
  if (!lat_turns_apply (cfqd))
    cfqd->lat_turn = LAT_SCALE_ONE;
  /* The next window is the one NOW is in: a jump, not a loop, for the
   * device may have been idle for hours.
   */
  cfqd->lat_window_end += ((now - cfqd->lat_window_end) / LAT_WINDOW + 1)
    * LAT_WINDOW;
}

void
cfq_lat_completed (struct cfqd *cfqd, struct sched_queue *cic,
                   const struct rq *rq, uint64_t now)
{
  struct sched_group *g = ((const struct cfqq *) rq->sq)->cfqg;

  cic->lat_last = now;
  if (!cfqd->lat_targets)
    return;
  if (g->lat.conf.target && now >= rq->t_insert) {
    g->lat.hist[lat_bucket (now - rq->t_insert)]++;
    g->lat.nr++;
  }
  if (now >= cfqd->lat_window_end)
    lat_window_end (cfqd, now);
}

bool
cfq_lat_clamped (const struct cfqd *cfqd, const struct sched_group *g)
{
  return cfqd->lat_clamp
    && !(g->lat.conf.target && g->lat.conf.mode == LAT_MODE_BINARY);
}

/* The work-conserving dispatch's share of the device queue for G: a
 * binary target's clamp, or wc_depth scaled as G's weight is.
 */
bool
cfq_lat_depth_full (const struct cfqd *cfqd, const struct sched_group *g)
{
  unsigned d;

  if (cfq_lat_clamped (cfqd, g))
    return g->dispatched > 0;
  if (!cfqd->lat_targets || g->lat.scale >= LAT_SCALE_ONE)
    return false;
  d = (unsigned) (t_get (cfqd, T_WC_DEPTH) * g->lat.scale / LAT_SCALE_ONE);
  return g->dispatched >= (d ? d : 1);
}

/* ---- the boost ----------------------------------------------------------- */

/* Charge units: G's allowance at NOW.  It refills only while G is off
 * the service tree (asks nothing of the device): the tree's joins and
 * leaves take it up to then (cfq_lat_allow_refill).
 */
static uint64_t
lat_allow_now (const struct sched_group *g, uint64_t now)
{
  const struct cfq_lat *l = &g->lat;
  unsigned __int128 add;

  if (g->on_st || now <= l->allow_at)
    return l->allow;
  add = (unsigned __int128) (now - l->allow_at) * LAT_ALLOW_MAX
    / LAT_ALLOW_PERIOD;
  return add >= LAT_ALLOW_MAX - l->allow ? LAT_ALLOW_MAX
    : l->allow + (uint64_t) add;
}

void
cfq_lat_allow_refill (struct sched_group *g, uint64_t now)
{
  g->lat.allow = lat_allow_now (g, now);
  g->lat.allow_at = now;
}

/* A new connection of G: the burst it joins, if any.  True if the burst
 * is large enough that its connections are not boosted.
 */
static bool
lat_burst (struct cfqd *cfqd, struct sched_group *g, uint64_t now)
{
  struct cfq_lat *l = &g->lat;
  struct list *p;

  if (l->burst_last != SCHED_NEVER && now - l->burst_last <= LAT_BURST_GAP)
    l->burst_n++;
  else {
    l->burst_n = 1;
    l->burst_start = now;
  }
  l->burst_last = now;
  if (l->burst_n < LAT_BURST_MIN)
    return false;
  l->st_burst++;
  if (l->burst_n == LAT_BURST_MIN) {
    list_for_each (p, &cfqd->conns) {
      struct sched_queue *c = list_entry (p, struct sched_queue, link);
      if (c->cfqg == g && c->born != SCHED_NEVER && c->born >= l->burst_start
          && c->boost_until) {
        c->boost_until = 0;
        l->st_burst++;
      }
    }
    CFQ_TRACE (cfqd, NULL, "group %s: %u new connections in a burst: not"
               " boosted", g->name, l->burst_n);
  }
  return true;
}

void
cfq_lat_insert (struct cfqd *cfqd, struct sched_queue *cic, uint64_t now)
{
  struct sched_group *g = cic->cfqg;
  const bool fresh = cic->born == SCHED_NEVER;
  const bool woke = !fresh && !cic->nr_rq && cic->lat_last != SCHED_NEVER
    && now - cic->lat_last >= LAT_BOOST_IDLE;

  if (fresh)
    cic->born = now;
  cic->lat_last = now;
  if (g->lat.conf.target && cfqd->lat_window_end == SCHED_NEVER)
    cfqd->lat_window_end = now + LAT_WINDOW;
  if (!g->lat.conf.boost || cic == cfqd->root_conn || (!fresh && !woke))
    return;
  if (fresh && lat_burst (cfqd, g, now))
    return;
  cfq_lat_allow_refill (g, now);
  if (!g->lat.allow) {
    g->lat.st_spent++;
    return;
  }
  cic->boost_until = now + LAT_BOOST_TIME;
  g->lat.front = !g->on_st;
  g->lat.st_boosts++;
  CFQ_TRACE (cfqd, NULL, "group %s: a connection %s: boosted", g->name,
             fresh ? "starts" : "wakes");
}

/* The charge of G's slice that ended: scaled by the turn cut made
 * while G was in it (cfq_lat.cut), once.
 */
uint64_t
cfq_lat_cut_charge (struct sched_group *g, uint64_t charge)
{
  charge = charge * g->lat.cut / LAT_SCALE_ONE;
  g->lat.cut = LAT_SCALE_ONE;
  return charge;
}

/* Charge units: what G is charged for CHARGE of service to connection
 * CIC's queue (NULL: a shared queue), less what CIC's boost forgives.
 */
uint64_t
cfq_lat_charge (struct sched_queue *cic, struct sched_group *g,
                uint64_t charge, uint64_t now)
{
  uint64_t forgive;

  if (!cic || !cic->boost_until || now >= cic->boost_until)
    return charge;
  cfq_lat_allow_refill (g, now);
  forgive = charge - charge / LAT_BOOST_FACTOR;
  if (forgive >= g->lat.allow) {
    forgive = g->lat.allow;
    cic->boost_until = 0;       /* the allowance is spent */
  }
  g->lat.allow -= forgive;
  g->lat.st_forgiven += forgive;
  return charge - forgive;
}

/* Connections of G boosted now. */
static unsigned
lat_boosted (const struct cfqd *cfqd, const struct sched_group *g)
{
  const struct list *p;
  unsigned n = 0;

  list_for_each (p, &cfqd->conns) {
    const struct sched_queue *c = list_entry (p, struct sched_queue, link);
    if (c->cfqg == g && !c->dead && c->boost_until > cfqd->now)
      n++;
  }
  return n;
}

/* ---- statistics ---------------------------------------------------------- */

struct lat_snap {
  uint64_t target;              /* ns; 0: none */
  unsigned percentile;          /* 90, 95, 99 */
  uint64_t last;                /* ns: the percentile of the last window
                                   judged; 0: none yet */
  uint64_t windows;             /* windows judged */
  uint64_t misses;              /* of them, missed */
  bool unmet;                   /* not met with the others at the floor */
  uint64_t unmet_count;         /* times it was found so */
  unsigned weight_set;          /* the weight set */
  unsigned weight;              /* the effective weight now */
  unsigned turn;                /* permille: its turns' length now */
  bool clamped;                 /* binary mode holds it to depth 1 now */
  bool boost;                   /* boost = on */
  unsigned boosted;             /* its connections boosted now */
  uint64_t boosts;              /* boosts given */
  uint64_t burst;               /* connections refused as a burst */
  uint64_t spent;               /* boosts refused: allowance spent */
  uint64_t forgiven;            /* charge units forgiven by boosts */
  uint64_t allow;               /* charge units of allowance left */
};

#define L(f) offsetof (struct lat_snap, f)
/* Flat records name the target's fields latency_*, beside the group's
 * others; the boost's are boost* already.
 */
#define LCOUNT(n, f, u, h) \
  { .name = n, .flat = "latency_" n, .unit = u, .type = STAT_COUNTER, \
    .repr = STAT_U64, .off = L (f), .show = STAT_ALL, .help = h }
#define BCOUNT(n, f, u, h) \
  { .name = n, .unit = u, .type = STAT_COUNTER, .repr = STAT_U64, \
    .off = L (f), .show = STAT_ALL, .help = h }

static const struct stat_field lat_fields[] = {
  { .name = "target_us", .flat = "latency_target_us",
    .prom = "target_seconds", .unit = "us",
    .repr = STAT_U64, .off = L (target), .show = STAT_ALL, .div = 1000,
    .pdiv = 1e9, .help = "Its latency target (0: none)." },
  { .name = "percentile", .flat = "latency_percentile", .unit = "percent",
    .repr = STAT_UINT,
    .off = L (percentile), .show = STAT_ALL, .help = "The percentile the"
    " target is for." },
  { .name = "window_us", .flat = "latency_window_us",
    .prom = "window_seconds", .unit = "us",
    .repr = STAT_U64, .off = L (last), .show = STAT_ALL, .div = 1000,
    .pdiv = 1e9, .help = "Its latency at that percentile in the last"
    " window judged (0: none yet)." },
  LCOUNT ("windows", windows, "windows", "Windows judged against its"
          " target."),
  LCOUNT ("misses", misses, "windows", "Windows in which it missed its"
          " target."),
  { .name = "unmet", .flat = "latency_unmet", .unit = "bool",
    .repr = STAT_BOOL, .off = L (unmet),
    .show = STAT_ALL, .help = "Its target is missed with every other"
    " group at the floor: the device does not meet it (1)." },
  LCOUNT ("unmet_found", unmet_count, "times", "Times its target was"
          " found not met with every other group at the floor."),
  { .name = "weight_set", .unit = "weight", .repr = STAT_UINT,
    .off = L (weight_set), .show = STAT_ALL, .help = "The weight set for"
    " it." },
  { .name = "weight_effective", .unit = "weight", .repr = STAT_UINT,
    .off = L (weight), .show = STAT_ALL, .help = "The weight it is"
    " charged by now: lowered while another group misses its target." },
  { .name = "turn_permille", .flat = "latency_turn_permille",
    .prom = "turn_ratio", .unit = "permille", .repr = STAT_UINT,
    .off = L (turn), .show = STAT_ALL, .pdiv = 1000,
    .help = "Its turns' length (share of target_latency, and quantum) now,"
    " in permille of whole: cut on a disk while a group misses its"
    " target." },
  { .name = "clamped", .flat = "latency_clamped", .unit = "bool",
    .repr = STAT_BOOL,
    .off = L (clamped), .show = STAT_ALL, .help = "A binary latency target"
    " of another group holds it to one request at the device (1)." },
  { .name = "boost", .unit = "bool", .repr = STAT_BOOL, .off = L (boost),
    .show = STAT_ALL, .help = "Its new and waking connections are"
    " boosted (1)." },
  { .name = "boosted", .unit = "connections", .repr = STAT_UINT,
    .off = L (boosted), .show = STAT_ALL, .help = "Its connections"
    " boosted now." },
  BCOUNT ("boosts", boosts, "connections", "Boosts given to its"
          " connections."),
  BCOUNT ("boost_burst", burst, "connections", "Connections not boosted"
          " because they came in a burst."),
  BCOUNT ("boost_spent", spent, "connections", "Connections not boosted"
          " because its allowance was spent."),
  { .name = "boost_forgiven", .unit = "charge", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = L (forgiven), .show = STAT_ALL, .help = "Charge"
    " its boosts forgave (ns of device time; IOPS units in IOPS mode)." },
  { .name = "boost_allowance", .unit = "charge", .repr = STAT_U64,
    .off = L (allow), .show = STAT_ALL, .help = "Charge its boosts may"
    " still forgive." },
};
#undef L

static const struct stat_field lat_table = {
  .name = "latency", .show = STAT_ALL, STAT_SUB (lat_fields),
};

void
cfq_lat_stats (struct cfqd *cfqd, struct sched_group *g, stat_emit_fn *emit,
               void *opaque)
{
  const struct cfq_lat *l = &g->lat;
  struct lat_snap s = {
    .target = l->conf.target, .percentile = l->conf.percentile,
    .last = l->last, .windows = l->windows, .misses = l->misses,
    .unmet = l->unmet, .unmet_count = l->st_unmet,
    .weight_set = g->weight_set, .weight = g->weight,
    .turn = cfqd->lat_turn, .clamped = cfq_lat_clamped (cfqd, g),
    .boost = l->conf.boost,
    .boosted = lat_boosted (cfqd, g), .boosts = l->st_boosts,
    .burst = l->st_burst, .spent = l->st_spent, .forgiven = l->st_forgiven,
  };
  s.allow = lat_allow_now (g, cfqd->now);
  emit (opaque, &lat_table, &s);
}
