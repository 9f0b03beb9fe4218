/* test-sched-stats.c: the policies describe their own statistics
 * (sched_ops' stats, include/statfield.h).
 *
 * After a run of two groups on a virtual clock, one with a cap:
 *  - CFQ's device tables carry exactly cfq_get_stats' counters and state,
 *    and its cost model's (cfq_get_cost: the six figures, depth, source,
 *    vrate, errors, windows, predicted time), read through the tables'
 *    offsets;
 *  - each group's carry cfq_group_get_stats' numbers, and its caps and
 *    reservation: the keys set (and no other), held, throttled, reserved;
 *    while a group has a latency target every group has a "latency"
 *    table (the target, windows judged, its set and effective weights:
 *    the other's effective weight is the one the target lowered), and
 *    none once the target is removed;
 *  - FIFO's device says hw_tag -1 and its groups nothing;
 *  - every field of every table has a sentence of help and a unit, a
 *    name unique in its table, counters are not named *_total (the
 *    writers add it), and STAT_F_SET sits only beside a STAT_KV.
 */
#include "cfq-harness.h"

#include <math.h>
#include <stdbool.h>

#include "cost.h"
#include "latency.h"
#include "qos.h"
#include "statfield.h"

#define MAXV 128

/* Every scalar a policy handed out, by its dotted path ("cost.vrate"). */
struct col {
  size_t n;
  char path[MAXV][64];
  double num[MAXV];
  const char *str[MAXV];
  unsigned tables;              /* emit calls */
};

static double
num_at (const struct stat_field *f, const char *p)
{
  switch (f->repr) {
  case STAT_U64: return (double) *(const uint64_t *) p;
  case STAT_UINT: return *(const unsigned *) p;
  case STAT_INT: return *(const int *) p;
  case STAT_SIZE: return (double) *(const size_t *) p;
  case STAT_BOOL: return *(const bool *) p;
  case STAT_DOUBLE: return *(const double *) p;
  default: return NAN;
  }
}

static void
put (struct col *c, const char *prefix, const char *name, double v,
     const char *s)
{
  CHECK_LT (c->n, MAXV);
  snprintf (c->path[c->n], sizeof c->path[c->n], "%s%s", prefix, name);
  c->num[c->n] = v;
  c->str[c->n] = s;
  c->n++;
}

/* A table's fields: the rules every table keeps, and their values. */
static void
walk (struct col *c, const char *prefix, const struct stat_field *t,
      const char *snap)
{
  bool has_kv = false, has_fset = false;

  CHECK_EQ (t->repr, STAT_TABLE);
  CHECK (t->nsub > 0);
  if (t->forder) {              /* every field once */
    bool seen[64] = { false };

    CHECK_LE (t->nsub, 64);
    for (size_t i = 0; i < t->nsub; i++) {
      CHECK_LT (t->forder[i], t->nsub);
      CHECK (!seen[t->forder[i]]);
      seen[t->forder[i]] = true;
    }
  }
  for (size_t i = 0; i < t->nsub; i++) {
    const struct stat_field *f = &t->sub[i];
    const char *p = snap + f->off;
    char sub[64];

    CHECK (f->help && *f->help);
    CHECK (f->show & STAT_ALL);
    if (f->name)
      for (size_t k = 0; k < i; k++)
        CHECK (!t->sub[k].name || strcmp (t->sub[k].name, f->name) != 0);
    if (f->type == STAT_COUNTER && f->name) {
      size_t l = strlen (f->name);
      CHECK (l < 6 || strcmp (f->name + l - 6, "_total") != 0);
    }
    has_fset |= (f->show & STAT_F_SET) != 0;
    switch (f->repr) {
    case STAT_TABLE:
      snprintf (sub, sizeof sub, "%s%s%s", prefix, f->name ? f->name : "",
                f->name ? "." : "");
      walk (c, sub, f, p);
      break;
    case STAT_KV: {
      const struct stat_kvs *kv = (const struct stat_kvs *) p;

      has_kv = true;
      CHECK (f->unit);
      snprintf (sub, sizeof sub, "%s%s%s", prefix, f->name ? f->name : "",
                f->name ? "." : "");
      for (size_t k = 0; k < kv->n; k++)
        put (c, sub, kv->kv[k].name, (double) kv->kv[k].val, NULL);
      break;
    }
    case STAT_STR:
      CHECK (f->name);
      put (c, prefix, f->name, NAN, *(const char *const *) p);
      break;
    default:
      CHECK (f->name && f->unit);
      CHECK_EQ (f->help[strlen (f->help) - 1], '.');
      put (c, prefix, f->name, num_at (f, p), NULL);
    }
  }
  CHECK (!has_fset || has_kv);
}

static void
emit (void *opaque, const struct stat_field *t, const void *snap)
{
  struct col *c = opaque;
  char prefix[64];

  c->tables++;
  CHECK (t->show & STAT_ALL);
  snprintf (prefix, sizeof prefix, "%s%s", t->name ? t->name : "",
            t->name ? "." : "");
  walk (c, prefix, t, snap);
}

static size_t
find (const struct col *c, const char *path)
{
  for (size_t i = 0; i < c->n; i++)
    if (strcmp (c->path[i], path) == 0)
      return i;
  fprintf (stderr, "no statistic %s\n", path);
  CHECK (false);
  return 0;
}

static double
get (const struct col *c, const char *path)
{
  return c->num[find (c, path)];
}

static bool
has (const struct col *c, const char *path)
{
  for (size_t i = 0; i < c->n; i++)
    if (strcmp (c->path[i], path) == 0)
      return true;
  return false;
}

static void
test_cfq (void)
{
  struct harness h;
  struct sched_group *g[2];
  struct qos_conf qc = { .iops_min = 0 };
  struct cfq_stats st;
  struct cfq_group_stats gs;
  struct cost_model cm;
  struct col dev = { 0 }, grp[2];
  struct lat_conf lc;
  uint64_t rot;

  h_init (&h, 4);
  g[0] = sched_group_new (h.s, "capped", 500);
  g[1] = sched_group_new (h.s, "free", 300);
  qc.cap[QOS_IOPS_MAX].rate = 200;
  CHECK_EQ (sched_group_set_qos (h.s, g[0], &qc), 0);
  lat_conf_init (&lc);
  lc.target = 50 * NSEC_PER_USEC;       /* below the range */
  CHECK_EQ (sched_group_set_latency (h.s, g[1], &lc), -ERANGE);
  lc.target = 100 * NSEC_PER_USEC;
  lc.percentile = 99;
  CHECK_EQ (sched_group_set_latency (h.s, g[1], &lc), 0);
  for (int i = 0; i < 2; i++) {
    struct h_client *c = h_client (&h, g[i], SCHED_CLASS_BE, 4);
    c->depth = 4;
    c->random = i == 0;
    c->cost = 500 * US;
  }
  h_run (&h, 2000 * MS);

  sched_stats (h.s, NULL, emit, &dev);
  CHECK_EQ (dev.tables, 2);             /* CFQ's, then the cost model's */
  cfq_get_stats (h.s, &st);
  CHECK_GT (st.slices, 0);
  CHECK_EQ (get (&dev, "hw_tag"), st.hw_tag);
  CHECK_EQ (get (&dev, "hw_tag_depth"), st.hw_tag_est_depth);
  CHECK_EQ (get (&dev, "iops_mode"), st.iops_mode);
  CHECK_EQ (sched_get (h.s, "rotational", &rot), 0);
  CHECK_EQ (get (&dev, "rotational"), rot);
  CHECK_EQ (get (&dev, "busy_queues"), st.busy_queues);
  CHECK_EQ (get (&dev, "rq_queued"), st.rq_queued);
  CHECK_EQ (get (&dev, "slices"), st.slices);
  CHECK_EQ (get (&dev, "idle_arms"), st.idle_arms);
  CHECK_EQ (get (&dev, "group_idle_arms"), st.group_idle_arms);
  CHECK_EQ (get (&dev, "idle_hits"), st.idle_hits);
  CHECK_EQ (get (&dev, "idle_timeouts"), st.idle_timeouts);
  CHECK_EQ (get (&dev, "preemptions"), st.preemptions);
  CHECK_EQ (get (&dev, "fifo_expired"), st.fifo_expired);
  CHECK_EQ (get (&dev, "merges"), st.merges);
  CHECK_EQ (get (&dev, "splits"), st.splits);
  CHECK_EQ (get (&dev, "wait_busy"), st.wait_busy);
  CHECK_EQ (get (&dev, "seek_cost_us"), st.seek_cost);    /* raw ns */
  CHECK_EQ (get (&dev, "seek_fast"), st.seek_fast);

  cfq_get_cost (h.s, &cm);
  CHECK_GT (cm.pred_total_ns, 0);
  CHECK_STREQ (dev.str[find (&dev, "cost.source")], cm.source);
  CHECK_EQ (get (&dev, "cost.vrate"), (double) cm.vrate / COST_VRATE_ONE);
  CHECK_EQ (get (&dev, "cost.error_ratio"), cm.error_ppm / 1e6);
  CHECK_EQ (get (&dev, "cost.error_max_ratio"), cm.error_max_ppm / 1e6);
  CHECK_EQ (get (&dev, "cost.windows"), cm.windows);
  CHECK_EQ (get (&dev, "cost.predicted_ns"), cm.pred_total_ns);
  CHECK_EQ (get (&dev, "cost.model.rbps"), cm.p.bps[COST_READ]);
  CHECK_EQ (get (&dev, "cost.model.rseqiops"), cm.p.seqiops[COST_READ]);
  CHECK_EQ (get (&dev, "cost.model.rrandiops"), cm.p.randiops[COST_READ]);
  CHECK_EQ (get (&dev, "cost.model.wbps"), cm.p.bps[COST_WRITE]);
  CHECK_EQ (get (&dev, "cost.model.wseqiops"), cm.p.seqiops[COST_WRITE]);
  CHECK_EQ (get (&dev, "cost.model.wrandiops"), cm.p.randiops[COST_WRITE]);
  CHECK_EQ (get (&dev, "cost.depth"), cm.p.depth);

  for (int i = 0; i < 2; i++) {
    memset (&grp[i], 0, sizeof grp[i]);
    sched_stats (h.s, g[i], emit, &grp[i]);
    /* CFQ's, then the caps', then the latency target's. */
    CHECK_EQ (grp[i].tables, 3);
    cfq_group_get_stats (h.s, g[i], &gs);
    CHECK_GT (gs.dispatched, 0);
    CHECK_EQ (get (&grp[i], "vdisktime"), gs.vdisktime);
    CHECK_EQ (get (&grp[i], "cfq_weight"), gs.weight);
    CHECK_EQ (get (&grp[i], "busy_queues"), gs.busy_queues);
    CHECK_EQ (get (&grp[i], "in_driver"), gs.in_driver);
    CHECK_EQ (get (&grp[i], "on_service_tree"), gs.on_service_tree);
    CHECK_EQ (get (&grp[i], "serving"), gs.serving);
    CHECK_EQ (get (&grp[i], "slices"), gs.slices);
    CHECK_EQ (get (&grp[i], "idle_arms"), gs.idle_arms);
    CHECK_EQ (get (&grp[i], "group_idle_arms"), gs.group_idle_arms);
    CHECK_EQ (get (&grp[i], "idle_hits"), gs.idle_hits);
    CHECK_EQ (get (&grp[i], "idle_timeouts"), gs.idle_timeouts);
    CHECK_EQ (get (&grp[i], "preemptions"), gs.preemptions);
    CHECK_EQ (get (&grp[i], "dispatched"), gs.dispatched);
    CHECK_EQ (get (&grp[i], "used_ns"), gs.used_ns);
    CHECK_EQ (get (&grp[i], "qos.held"), gs.qos_held);
    CHECK_EQ (get (&grp[i], "qos.throttled"), gs.qos_throttled);
    CHECK_EQ (get (&grp[i], "qos.reserved"), gs.qos_reserved);
  }
  /* The cap: its key and no other; it held requests back. */
  CHECK_EQ (get (&grp[0], "qos.iops_max"), 200);
  CHECK_GT (get (&grp[0], "qos.throttled"), 0);
  CHECK (!has (&grp[0], "qos.bps_max"));
  CHECK (!has (&grp[1], "qos.iops_max"));
  CHECK_EQ (get (&grp[1], "qos.throttled"), 0);
  /* The target: judged at 1 s and 2 s, missed (a read costs 500 us). */
  CHECK_EQ (get (&grp[0], "latency.target_us"), 0);
  CHECK_EQ (get (&grp[1], "latency.target_us"), 100 * NSEC_PER_USEC);
  CHECK_EQ (get (&grp[1], "latency.percentile"), 99);
  CHECK_EQ (get (&grp[1], "latency.windows"), 2);
  CHECK_EQ (get (&grp[1], "latency.misses"), 2);
  CHECK_EQ (get (&grp[1], "latency.weight_set"), 300);
  CHECK_EQ (get (&grp[1], "latency.weight_effective"), 300);
  CHECK_EQ (get (&grp[0], "cfq_weight"), 50);   /* the floor: 500 / 10 */
  CHECK_EQ (get (&grp[0], "latency.weight_set"), 500);
  CHECK_EQ (get (&grp[0], "latency.weight_effective"), 50);
  CHECK_EQ (get (&grp[0], "latency.clamped"), 0);
  /* No target left: no latency table, every weight its set one. */
  lc.target = 0;
  CHECK_EQ (sched_group_set_latency (h.s, g[1], &lc), 0);
  lat_conf_init (&lc);
  CHECK_EQ (sched_group_set_latency (h.s, g[1], &lc), 0);
  for (int i = 0; i < 2; i++) {
    memset (&grp[i], 0, sizeof grp[i]);
    sched_stats (h.s, g[i], emit, &grp[i]);
    CHECK_EQ (grp[i].tables, 2);
    CHECK (!has (&grp[i], "latency.target_us"));
  }
  CHECK_EQ (get (&grp[0], "cfq_weight"), 500);
  CHECK_EQ (get (&grp[1], "cfq_weight"), 300);
  sched_destroy (h.s);
}

static void
test_fifo (void)
{
  struct sched *s = sched_create (&fifo_ops);
  struct sched_group *g = sched_group_new (s, "g", 500);
  struct col dev = { 0 }, grp = { 0 };

  sched_stats (s, NULL, emit, &dev);
  CHECK_EQ (dev.tables, 1);
  CHECK_EQ (dev.n, 1);
  CHECK_EQ (get (&dev, "hw_tag"), -1);
  sched_stats (s, g, emit, &grp);
  CHECK_EQ (grp.tables, 0);
  /* No tunables: nothing to list, no key to set. */
  CHECK_NULL (sched_tunable_name (s, 0));
  {
    uint64_t v;
    CHECK_EQ (sched_tunable_parse (s, "slice_idle", "4ms", &v), -ENOENT);
  }
  sched_destroy (s);
}

/* CFQ's tunables through sched_ops: every one listed, in the table's
 * order, and their text read and written as cfq.h's functions do.
 */
static void
test_tunables (void)
{
  struct sched *s = sched_create (&cfq_ops);
  char buf[64];
  uint64_t v;
  size_t i;

  for (i = 0; sched_tunable_name (s, i); i++)
    CHECK_STREQ (sched_tunable_name (s, i), cfq_tunables[i].name);
  CHECK_EQ (i, cfq_nr_tunables);
  CHECK_EQ (sched_tunable_parse (s, "slice_idle", "4ms", &v), 0);
  CHECK_EQ (v, 4 * MS);
  CHECK_STREQ (sched_tunable_format (s, "slice_idle", v, buf, sizeof buf),
               "4ms");
  CHECK_STREQ (sched_tunable_format (s, "mode", CFQ_MODE_IOPS, buf,
                                     sizeof buf), "iops");
  CHECK_EQ (sched_tunable_parse (s, "slice_idel", "4ms", &v), -ENOENT);
  CHECK_EQ (sched_tunable_parse (s, "quantum", "0", &v), -ERANGE);
  CHECK_STREQ (sched_tunable_explain (s, "quantum", "0", -ERANGE, buf,
                                      sizeof buf), "out of range 1..1024");
  sched_destroy (s);
}

int
main (void)
{
  setvbuf (stdout, NULL, _IOLBF, 0);
  test_cfq ();
  test_fifo ();
  test_tunables ();
  printf ("sched-stats: ok\n");
  check_done ("test-sched-stats");
  return 0;
}
