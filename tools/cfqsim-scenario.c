/* cfqsim-scenario.c: the run, built from the scenario's model.
 *
 * core/apply.c turns the model into scheduler groups and tunables exactly
 * as the plugin does; this file adds what only the simulator has: the
 * device model (emulate=, model.*, seeded by --seed unless model.seed says
 * otherwise), one struct job per connection of each [tenant], in fio's
 * terms, placed in its export's region of the device, and --only.
 *
 *
 * What the simulator leaves out: the NBD round trip and the CPU (a
 * tenant's thinktime stands in for them), the page cache, and the server's
 * own file exports (a tenant needs an export that is a region of the
 * device).  The device is the model alone: its size is model.capacity and
 * [device] file is not opened.
 *
 * Scenario files: see cfqsim(1) and the manual's CONFIGURATION FILE
 * and tests/sim/NAME.job.  Errors are reported as FILE:LINE: message.
 * [group] caps and reservations (iops_max, bps_min ...: include/qos.h)
 * apply as in the server (core/apply.c).
 */
#include "cfqsim.h"

/* ---- setup --------------------------------------------------------------- */

/* Build the device model the scenario names, as the plugin does for
 * emulate=, with --seed seeding it unless model.seed says otherwise.
 */
static struct devmodel *
make_device (void)
{
  const struct cfg_device *d = &cfg.m->dev;
  const char *kind = d->emulate;
  struct devmodel *dm;
  bool seeded = false;
  int err = 0;

  dm = devmodel_new (kind, &err);
  if (!dm)
    die_at (NULL, "device model %s: %s", kind, strerror (-err));
  for (size_t i = 0; i < d->nr_model; i++) {
    err = devmodel_set (dm, d->model[i].key, d->model[i].value);
    if (err)                    /* cfg_validate checked them */
      die_at (NULL, "model.%s=%s: %s", d->model[i].key, d->model[i].value,
              strerror (-err));
    if (strcmp (d->model[i].key, "seed") == 0)
      seeded = true;
  }
  if (!seeded) {
    char s[32];
    snprintf (s, sizeof s, "%" PRIu64, cfg.seed);
    devmodel_set (dm, "seed", s);
  }
  return dm;
}

/* --trace: each decision of a policy that reports them (cfq), on stderr
 * with the virtual time.
 */
static void
trace_line (void *opaque, const char *msg)
{
  fprintf (stderr, "%" PRIu64 ".%06" PRIu64 " %s\n",
           (uint64_t) (sim.now / NSEC_PER_SEC),
           (uint64_t) (sim.now % NSEC_PER_SEC / 1000), msg);
}

void
sim_setup (void)
{
  const struct cfg_model *m = cfg.m;
  const struct sched_ops *ops;
  struct sched_group **sg;
  char why[256];
  unsigned n = 0;
  int err;

  ops = cfg.test_policy ? lookup_policy (cfg.test_policy)
    : sched_lookup (m->scheduler);
  if (!ops)
    die_at (NULL, "scheduler %s is not built in", m->scheduler);
  cfg.policy = ops->name;
  sim.dm = make_device ();
  sim.s = sched_create (ops);
  if (!sim.s)
    die_at (NULL, "out of memory");

  /* Groups and tunables as the server makes them, and whether the device
   * seeks as the kernel would learn it from the queue flags.
   */
  if (cfg.trace && ops == &cfq_ops)
    cfq_set_trace (sim.s, trace_line, NULL);
  sg = xcalloc (m->nr_groups, sizeof *sg);
  err = cfg_apply (m, sim.s, devmodel_rotational (sim.dm), sg, why,
                   sizeof why);
  if (err)
    die_at (cfg.file, "%s", why);
  {
    /* The device's requests cost what its model says, as in the server. */
    struct cost_params cp;

    err = devmodel_cost_params (sim.dm, 0, &cp);
    if (err == 0)
      err = sched_set_cost (sim.s, &cp, "device model");
    if (err)
      die_at (NULL, "cost model: %s", strerror (-err));
  }
  cfg.ngroups = m->nr_groups;
  cfg.groups = xcalloc (m->nr_groups, sizeof *cfg.groups);
  for (size_t i = 0; i < m->nr_groups; i++) {
    cfg.groups[i].name = m->groups[i].name;
    cfg.groups[i].weight = m->groups[i].weight;
    cfg.groups[i].sg = sg[i];
    hist_init (&cfg.groups[i].lat);
  }
  free (sg);
  series_init (&cfg.win, cfg.window, cfg.duration, true);
  cfg.win.lat = true;
  series_init (&cfg.sec, NSEC_PER_SEC, cfg.duration, false);
  for (size_t i = 0; i < m->nr_groups; i++)
    series_counts_init (&cfg.win, &cfg.groups[i].win);

  /* One job per connection, tenants in file order. */
  for (size_t i = 0; i < m->nr_tenants; i++)
    if (cfg.tenant_on[i])
      cfg.njobs += m->tenants[i].connections;
  cfg.jobs = xcalloc (cfg.njobs, sizeof *cfg.jobs);
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const struct cfg_tenant *t = &m->tenants[i];
    const struct cfg_export *e = &m->exports[t->export];

    if (!cfg.tenant_on[i])
      continue;
    if (t->start >= cfg.duration)
      die_tenant (t, "starts at or after the end of the run");
    for (unsigned c = 0; c < t->connections; c++) {
      struct job *j = xcalloc (1, sizeof *j);
      uint64_t x = cfg.seed ^ (0x632be59bd9b4e019ULL * (n + 1));

      j->t = t;
      j->tenant = i;
      j->conn = c;
      j->group = (int) e->group;
      j->rwmixread = t->rwmixread;
      j->rand = t->rand;
      j->writes_sync = e->writes_sync;
      j->writes_async = e->writes_async;
      j->bs = t->bs;
      j->stride = t->bs + t->skip;
      j->depth = t->iodepth;
      j->think = t->thinktime;
      j->think_blocks = t->thinktime ? t->thinktime_blocks : 0;
      j->number_ios = t->number_ios;
      j->rate_iops = t->rate_iops;
      j->rate = t->rate;
      j->fsync = t->fsync;
      j->start = t->start;
      j->stop = t->stop && t->stop < cfg.duration ? t->stop : cfg.duration;
      j->offset = e->offset + t->offset;
      j->size = t->size;
      j->q = sched_queue_new (sim.s, cfg.groups[j->group].sg, t->cls,
                              t->prio);
      if (!j->q)
        die_tenant (t, "the scheduler refused a queue");
      j->slots = xcalloc (j->depth + 1, sizeof *j->slots);
      for (unsigned d = 0; d < j->depth + 1; d++)
        j->slots[d].j = j;
      for (unsigned d = 0; d < j->depth; d++) {
        j->slots[d].next_free = j->free;
        j->free = &j->slots[d];
      }
      j->next_off = j->offset;
      j->rng = splitmix64 (&x);
      if (!j->rng)
        j->rng = 1;
      hist_init (&j->lat);
      hist_init (&j->fsync_lat);
      series_counts_init (&cfg.win, &j->win);
      series_counts_init (&cfg.sec, &j->sec);
      cfg.groups[j->group].njobs++;
      cfg.jobs[n++] = j;
    }
  }
}

/* --only NAME[,NAME...]: the tenants to run. */
void
sim_select_only (void)
{
  const struct cfg_model *m = cfg.m;
  unsigned n = 0;

  cfg.tenant_on = xcalloc (m->nr_tenants, sizeof *cfg.tenant_on);
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const char *p = cfg.only;
    size_t len = strlen (m->tenants[i].name);

    cfg.tenant_on[i] = !p;
    while (p && *p) {
      size_t l = strcspn (p, ",");
      if (l == len && !strncmp (p, m->tenants[i].name, l))
        cfg.tenant_on[i] = true;
      p += l;
      if (*p)
        p++;
    }
    n += cfg.tenant_on[i];
  }
  if (n == 0 && cfg.only)
    die_at (NULL, "--only %s: no such tenant", cfg.only);
  if (n == 0)
    die_at (cfg.file, "no [tenant NAME] sections: nothing to simulate");
}
