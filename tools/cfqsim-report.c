/* cfqsim-report.c: what a run gave, as text or --json.
 *
 * Per tenant and per group: bytes and requests, rates, latency
 * percentiles, fsync latency; the policy's counters (core/cfq.c) and the
 * device model's; --list-models.
 *
 *
 * --window TIME adds, per tenant and per group, the requests and bytes
 * that completed in each window of that width: what a cap or a
 * reservation gives second by second, not just on average.  --trace
 * prints CFQ's decisions with the virtual time.
 */
#include "cfqsim.h"

/* ---- report ---------------------------------------------------------------- */

static double
mib_s (uint64_t bytes, uint64_t ns)
{
  return ns ? (double) bytes / 1048576.0 / ((double) ns / 1e9) : 0;
}

static double
per_s (uint64_t n, uint64_t ns)
{
  return ns ? (double) n / ((double) ns / 1e9) : 0;
}

static double
us (uint64_t ns)
{
  return (double) ns / 1000.0;
}

static void
json_str (const char *s)
{
  putchar ('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\')
      putchar ('\\');
    putchar (*s);
  }
  putchar ('"');
}

/* A tenant's results: the sums over its connections. */
struct tenant_res {
  const struct cfg_tenant *t;
  unsigned group;
  uint64_t bytes, ios, flushes, writes, win;
  struct hist lat;
  struct hist fsync_lat;        /* write batch -> its flush done */
  double jain_conn;             /* Jain of its connections' IOPS */
  uint64_t done;                /* ns: with number_ios, from its start to
                                   its last connection's last completion */
  unsigned conns_done;          /* connections that did number_ios */
  struct series_counts by_win;  /* per window (--window) */
  struct series_counts by_sec;  /* per second */
};

/* What the report prints, summed from the jobs (the groups' sums live in
 * cfg.groups).  Built by report_collect, freed by report_free.
 */
struct report {
  struct tenant_res *tr;        /* [m->nr_tenants] */
  uint64_t tbytes, tios;        /* bytes, requests: every tenant's */
  uint64_t gw;                  /* sum of the weights of the groups that ran */
  unsigned nt;                  /* tenants that ran (--only) */
  unsigned nx;                  /* groups that ran */
  double jain, jain_iops;       /* Jain's index of MiB/s and of IOPS per
                                   weight, over the groups that ran */
  char dev[512];                /* the device model, described */
};

/* , "windows": {"ios": [...], "bytes": [...]} */
static void
json_windows (const struct series_counts *c)
{
  printf (", \"windows\": {\"ios\": [");
  series_json (&cfg.win, c->ios);
  printf ("], \"bytes\": [");
  series_json (&cfg.win, c->bytes);
  if (c->lat) {
    static const double qs[] = { 0.90, 0.95, 0.99 };
    for (size_t q = 0; q < sizeof qs / sizeof qs[0]; q++) {
      printf ("], \"p%.0f_us\": [", qs[q] * 100);
      for (unsigned i = 0; i < cfg.win.n; i++)
        printf ("%s%.3f", i ? ", " : "", us (hist_quantile (&c->lat[i],
                                                             qs[q])));
    }
  }
  printf ("]}");
}

/* The group's QoS counters, if the policy keeps them (cfq). */
static bool
group_qos_stats (size_t i, struct cfq_group_stats *st)
{
  const struct cfg_group *cg = &cfg.m->groups[i];

  if (!cfg.groups[i].sg || qos_conf_empty (&cg->qos)
      || sim.s->ops != &cfq_ops)
    return false;
  cfq_group_get_stats (sim.s, cfg.groups[i].sg, st);
  return true;
}

/* --list-models: the device models, with the figures presets carry. */
void
sim_print_models (void)
{
  const struct devmodel_preset *pr;

  if (!cfg.json) {
    for (pr = devmodel_presets; pr->name; pr++)
      printf ("%-10s %s%s%s\n", pr->name, pr->about,
              pr->params[0] ? ": " : "", pr->params);
    return;
  }
  printf ("[\n");
  for (pr = devmodel_presets; pr->name; pr++) {
    printf ("  {\"name\": ");
    json_str (pr->name);
    printf (", \"kind\": ");
    json_str (pr->kind);
    printf (", \"params\": ");
    json_str (pr->params);
    printf (", \"about\": ");
    json_str (pr->about);
    if (pr->seq_mbs > 0) {
      printf (", \"published\": {\"seq_mbs\": %g, \"rand\": [", pr->seq_mbs);
      for (int k = 0, n = 0; k < 2; k++)
        if (pr->rand[k].depth)
          printf ("%s{\"depth\": %u, \"iops\": %g}", n++ ? ", " : "",
                  pr->rand[k].depth, pr->rand[k].iops);
      printf ("], \"source\": ");
      json_str (pr->source);
      printf ("}");
    }
    printf ("}%s\n", pr[1].name ? "," : "");
  }
  printf ("]\n");
}

/* ---- the sums ------------------------------------------------------------ */

/* Each job's counts into its tenant's, its group's and the totals. */
static void
report_sum_jobs (struct report *r)
{
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    struct sim_group *g = &cfg.groups[j->group];
    struct tenant_res *tres = &r->tr[j->tenant];
    series_sum (&cfg.win, &tres->by_win, &j->win);
    series_sum (&cfg.win, &g->win, &j->win);
    series_sum (&cfg.sec, &tres->by_sec, &j->sec);
    tres->t = j->t;
    tres->group = j->group;
    tres->bytes += j->bytes;
    tres->ios += j->ios;
    tres->flushes += j->flushes;
    tres->writes += j->writes_done;
    tres->win = j->stop - j->start;
    if (j->number_ios && j->ios >= j->number_ios) {
      tres->conns_done++;
      if (j->done_at - j->start > tres->done)
        tres->done = j->done_at - j->start;
    }
    hist_merge (&tres->lat, &j->lat);
    hist_merge (&tres->fsync_lat, &j->fsync_lat);
    g->bytes += j->bytes;
    g->ios += j->ios;
    hist_merge (&g->lat, &j->lat);
    r->tbytes += j->bytes;
    r->tios += j->ios;
  }
  /* A tenant whose work was done ran until then, as fio's job_runtime. */
  for (unsigned i = 0; i < cfg.m->nr_tenants; i++) {
    struct tenant_res *tres = &r->tr[i];
    if (tres->t && tres->t->number_ios && tres->done
        && tres->conns_done == tres->t->connections)
      tres->win = tres->done;
  }
}

/* Jain's index over each tenant's connections (their IOPS), and over the
 * groups (MiB/s and IOPS per weight).
 */
static void
report_fairness (struct report *r)
{
  double *x = xcalloc (cfg.ngroups, sizeof *x);
  double *xi = xcalloc (cfg.ngroups, sizeof *xi);
  double *xc = xcalloc (cfg.njobs, sizeof *xc);

  for (unsigned i = 0, k = 0; i < cfg.m->nr_tenants; i++) {
    unsigned nc = 0;
    if (!cfg.tenant_on[i])
      continue;
    for (; k < cfg.njobs && cfg.jobs[k]->tenant == i; k++)
      xc[nc++] = (double) cfg.jobs[k]->ios;
    r->tr[i].jain_conn = stats_jain (xc, nc);
    r->nt++;
  }
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    if (!g->njobs)
      continue;
    r->gw += g->weight;
    x[r->nx] = mib_s (g->bytes, cfg.duration) / g->weight;
    xi[r->nx++] = per_s (g->ios, cfg.duration) / g->weight;
  }
  r->jain = stats_jain (x, r->nx);
  r->jain_iops = stats_jain (xi, r->nx);
  free (x);
  free (xi);
  free (xc);
}

static void
report_collect (struct report *r)
{
  memset (r, 0, sizeof *r);
  r->tr = xcalloc (cfg.m->nr_tenants, sizeof *r->tr);
  for (size_t i = 0; i < cfg.m->nr_tenants; i++) {
    hist_init (&r->tr[i].lat);
    hist_init (&r->tr[i].fsync_lat);
    series_counts_init (&cfg.win, &r->tr[i].by_win);
    series_counts_init (&cfg.sec, &r->tr[i].by_sec);
  }
  report_sum_jobs (r);
  report_fairness (r);
  devmodel_describe (sim.dm, r->dev, sizeof r->dev);
}

static void
report_free (struct report *r)
{
  for (size_t i = 0; i < cfg.m->nr_tenants; i++) {
    hist_free (&r->tr[i].lat);
    hist_free (&r->tr[i].fsync_lat);
    series_counts_free (&cfg.win, &r->tr[i].by_win);
    series_counts_free (&cfg.sec, &r->tr[i].by_sec);
  }
  free (r->tr);
}

/* ---- --json -------------------------------------------------------------- */

/* The run: policy, device, duration, seed, tunables. */
static void
report_json_run (const struct report *r)
{
  const struct cfg_model *m = cfg.m;
  char val[64];

  printf ("{\n  \"sched\": ");
  json_str (cfg.policy);
  printf (",\n  \"device\": ");
  json_str (r->dev);
  printf (",\n  \"rotational\": %s", devmodel_rotational (sim.dm) ?
          "true" : "false");
  printf (",\n  \"duration_s\": %.9f,\n  \"seed\": %" PRIu64
          ",\n  \"queue_depth\": %u,\n  \"tunables\": {",
          cfg.duration / 1e9, cfg.seed, cfg.queue_depth);
  for (size_t i = 0; !cfg.test_policy && i < m->nr_tunables; i++) {
    const struct cfq_tunable *d = cfq_tunable_lookup (m->tunables[i].name);
    printf ("%s", i ? ", " : "");
    json_str (m->tunables[i].name);
    printf (": ");
    json_str (cfq_tunable_format (d, m->tunables[i].val, val, sizeof val));
  }
  printf ("},\n  \"dispatched\": %" PRIu64 ",\n", sim.dispatched);
  if (cfg.window)
    printf ("  \"window_s\": %.9f,\n", cfg.window / 1e9);
}

/* , "lat_cdf_us": [[q, us], ...]: the latency distribution as
 * quantiles, for CDF plots.
 */
static void
json_lat_cdf (const struct hist *lat)
{
  printf (", \"lat_cdf_us\": [");
  for (int q = 1; q <= 100; q++) {
    double f = q == 100 ? 0.999 : q / 100.0;
    printf ("%s[%.3f, %.3f]", q > 1 ? ", " : "", f,
            us (hist_quantile (lat, f)));
    if (q == 100)
      printf (", [1.000, %.3f]", us (lat->max));
  }
  printf ("]");
}

/* One tenant's object, without its closing brace. */
static void
report_json_tenant (const struct report *r, const struct tenant_res *tres)
{
  printf ("    {\"name\": ");
  json_str (tres->t->name);
  printf (", \"group\": ");
  json_str (cfg.groups[tres->group].name);
  printf (", \"connections\": %u, \"bytes\": %" PRIu64 ", \"ios\": %"
          PRIu64 ", \"writes\": %" PRIu64 ", \"flushes\": %" PRIu64
          ", \"mib_s\": %.6f"
          ", \"iops\": %.3f, \"lat_us\": {\"mean\": %.3f, \"p50\": %.3f"
          ", \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}, \"fsync_us\": {\"p50\": %.3f"
          ", \"p90\": %.3f, \"max\": %.3f}, \"share\": %.6f"
          ", \"jain_connections\": %.6f",
          tres->t->connections, tres->bytes, tres->ios, tres->writes,
          tres->flushes, mib_s (tres->bytes, tres->win),
          per_s (tres->ios, tres->win), us (hist_mean (&tres->lat)),
          us (hist_quantile (&tres->lat, 0.50)),
          us (hist_quantile (&tres->lat, 0.99)),
          us (hist_quantile (&tres->lat, 0.999)), us (tres->lat.max),
          us (hist_quantile (&tres->fsync_lat, 0.50)),
          us (hist_quantile (&tres->fsync_lat, 0.90)),
          us (tres->fsync_lat.max),
          r->tbytes ? (double) tres->bytes / r->tbytes : 0, tres->jain_conn);
  /* With number_ios: from its start to its last request's completion
   * (its last connection's), or null when not every connection got
   * there by the end.
   */
  printf (", \"number_ios\": %" PRIu64 ", \"done_s\": ",
          tres->t->number_ios);
  if (tres->t->number_ios && tres->conns_done == tres->t->connections)
    printf ("%.9f", (double) tres->done / 1e9);
  else
    printf ("null");
  if (cfg.window)
    json_windows (&tres->by_win);
  json_lat_cdf (&tres->lat);
  /* Completed bytes and requests in each second of the run. */
  printf (", \"series_bytes\": [");
  series_json (&cfg.sec, tres->by_sec.bytes);
  printf ("], \"series_ios\": [");
  series_json (&cfg.sec, tres->by_sec.ios);
  printf ("]");
}

static void
report_json_tenants (const struct report *r)
{
  printf ("  \"tenants\": [\n");
  for (unsigned i = 0, k = 0; i < cfg.m->nr_tenants; i++) {
    if (!cfg.tenant_on[i])
      continue;
    report_json_tenant (r, &r->tr[i]);
    printf ("}%s\n", ++k < r->nt ? "," : "");
  }
  printf ("  ],\n");
}

/* , "qos": {...}: group I's caps and reservations as set, and what the
 * policy counted of them.
 */
static void
json_group_qos (size_t i)
{
  const struct qos_conf *qc = &cfg.m->groups[i].qos;
  struct cfq_group_stats st;

  printf (", \"qos\": {");
  for (size_t q = 0, n = 0; q < qos_nr_keys; q++) {
    uint64_t v = qos_conf_get (qc, &qos_keys[q]);
    if (v)
      printf ("%s\"%s\": %" PRIu64, n++ ? ", " : "", qos_keys[q].name, v);
  }
  if (group_qos_stats (i, &st))
    printf (", \"throttled\": %" PRIu64 ", \"reserved\": %" PRIu64,
            st.qos_throttled, st.qos_reserved);
  printf ("}");
}

/* , "latency": {...}: the policy's "latency" table of the group (its
 * target, the last window, misses, effective weight, boost), as the
 * server's stats show it, in the table's own units.
 */
static void
emit_latency (void *opaque, const struct stat_field *t, const void *snap)
{
  const char *p = snap;

  (void) opaque;
  if (!t->name || strcmp (t->name, "latency") != 0)
    return;
  printf (", \"latency\": {");
  for (size_t i = 0; i < t->nsub; i++) {
    const struct stat_field *f = &t->sub[i];
    double v;

    switch (f->repr) {
    case STAT_U64: v = (double) *(const uint64_t *) (p + f->off); break;
    case STAT_UINT: v = *(const unsigned *) (p + f->off); break;
    case STAT_BOOL: v = *(const bool *) (p + f->off); break;
    default: continue;
    }
    printf ("%s\"%s\": %.3f", i ? ", " : "", f->name, f->div ? v / f->div : v);
  }
  printf ("}");
}

/* One group's object, without its closing brace. */
static void
report_json_group (const struct report *r, size_t i)
{
  const struct sim_group *g = &cfg.groups[i];

  printf ("    {\"name\": ");
  json_str (g->name);
  printf (", \"weight\": %u, \"connections\": %u, \"bytes\": %" PRIu64
          ", \"ios\": %" PRIu64 ", \"mib_s\": %.6f, \"iops\": %.3f"
          ", \"lat_us\": {\"p50\": %.3f, \"p99\": %.3f, \"max\": %.3f}"
          ", \"share\": %.6f, \"iops_share\": %.6f"
          ", \"weight_share\": %.6f",
          g->weight, g->njobs, g->bytes, g->ios,
          mib_s (g->bytes, cfg.duration), per_s (g->ios, cfg.duration),
          us (hist_quantile (&g->lat, 0.50)),
          us (hist_quantile (&g->lat, 0.99)), us (g->lat.max),
          r->tbytes ? (double) g->bytes / r->tbytes : 0,
          r->tios ? (double) g->ios / r->tios : 0,
          (double) g->weight / r->gw);
  if (!qos_conf_empty (&cfg.m->groups[i].qos))
    json_group_qos (i);
  if (g->sg && !lat_conf_default (&cfg.m->groups[i].lat))
    sched_stats (sim.s, g->sg, emit_latency, NULL);
  if (cfg.window)
    json_windows (&g->win);
}

static void
report_json_groups (const struct report *r)
{
  printf ("  \"groups\": [\n");
  for (unsigned i = 0, k = 0; i < cfg.ngroups; i++) {
    if (!cfg.groups[i].njobs)
      continue;
    report_json_group (r, i);
    printf ("}%s\n", ++k < r->nx ? "," : "");
  }
  printf ("  ],\n");
}

/* The totals and the fairness over groups; the closing brace. */
static void
report_json_total (const struct report *r)
{
  printf ("  \"total\": {\"bytes\": %" PRIu64 ", \"ios\": %" PRIu64
          ", \"mib_s\": %.6f, \"iops\": %.3f},\n",
          r->tbytes, r->tios, mib_s (r->tbytes, cfg.duration),
          per_s (r->tios, cfg.duration));
  printf ("  \"jain\": %.6f,\n  \"jain_iops\": %.6f,\n"
          "  \"events_applied\": %u\n}\n", r->jain, r->jain_iops,
          cfg.events_applied);
}

static void
report_json (const struct report *r)
{
  report_json_run (r);
  report_json_tenants (r);
  report_json_groups (r);
  report_json_total (r);
}

/* ---- text ---------------------------------------------------------------- */

/* The run: policy, device, duration, seed, tunables. */
static void
report_text_run (const struct report *r)
{
  const struct cfg_model *m = cfg.m;
  char t[32], val[64];

  fmt_time (t, sizeof t, cfg.duration);
  printf ("cfqsim: sched %s, device %s\n", cfg.policy, r->dev);
  printf ("duration %s, seed %" PRIu64 ", queue_depth %u", t, cfg.seed,
          cfg.queue_depth);
  for (size_t i = 0; !cfg.test_policy && i < m->nr_tunables; i++) {
    const struct cfq_tunable *d = cfq_tunable_lookup (m->tunables[i].name);
    printf ("%s%s=%s", i ? " " : ", tunables ", m->tunables[i].name,
            cfq_tunable_format (d, m->tunables[i].val, val, sizeof val));
  }
  printf ("\n");
}

/* A line per tenant: throughput, latency, share of the bytes. */
static void
report_text_tenants (const struct report *r)
{
  printf ("\n%-16s %-12s %10s %10s %10s %10s %10s %7s\n", "tenant",
          "group", "MiB/s", "IOPS", "p50 ms", "p99 ms", "max ms", "share");
  for (unsigned i = 0; i < cfg.m->nr_tenants; i++) {
    const struct tenant_res *tres = &r->tr[i];
    if (!cfg.tenant_on[i])
      continue;
    printf ("%-16s %-12s %10.3f %10.1f %10.3f %10.3f %10.3f %7.4f\n",
            tres->t->name, cfg.groups[tres->group].name,
            mib_s (tres->bytes, tres->win), per_s (tres->ios, tres->win),
            hist_quantile (&tres->lat, 0.50) / 1e6,
            hist_quantile (&tres->lat, 0.99) / 1e6, tres->lat.max / 1e6,
            r->tbytes ? (double) tres->bytes / r->tbytes : 0);
  }
  /* A tenant with a fixed amount of work: when it was done. */
  for (unsigned i = 0; i < cfg.m->nr_tenants; i++) {
    const struct tenant_res *tres = &r->tr[i];
    if (!cfg.tenant_on[i] || !tres->t->number_ios)
      continue;
    printf ("%s: %" PRIu64 " requests a connection, ", tres->t->name,
            tres->t->number_ios);
    if (tres->conns_done == tres->t->connections)
      printf ("done in %.3f s\n", (double) tres->done / 1e9);
    else
      printf ("not done by the end (%" PRIu64 " requests)\n", tres->ios);
  }
}

/* A line per group: throughput, latency, its share against its weight's;
 * then the totals and Jain's index.
 */
static void
report_text_groups (const struct report *r)
{
  printf ("\n%-16s %6s %10s %10s %10s %10s %7s %7s\n", "group", "weight",
          "MiB/s", "IOPS", "p99 ms", "max ms", "share", "ideal");
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    if (!g->njobs)
      continue;
    printf ("%-16s %6u %10.3f %10.1f %10.3f %10.3f %7.4f %7.4f\n", g->name,
            g->weight, mib_s (g->bytes, cfg.duration),
            per_s (g->ios, cfg.duration),
            hist_quantile (&g->lat, 0.99) / 1e6, g->lat.max / 1e6,
            r->tbytes ? (double) g->bytes / r->tbytes : 0,
            (double) g->weight / r->gw);
  }
  printf ("\ntotal %.3f MiB/s, %.1f IOPS; Jain index of throughput/weight "
          "over %u groups: %.4f (IOPS: %.4f)\n",
          mib_s (r->tbytes, cfg.duration), per_s (r->tios, cfg.duration),
          r->nx, r->jain, r->jain_iops);
}

/* A line per group with caps or reservations: as set, and what the
 * policy counted of them.
 */
static void
report_text_qos (void)
{
  char val[64];

  for (unsigned i = 0, n = 0; i < cfg.ngroups; i++) {
    const struct qos_conf *q = &cfg.m->groups[i].qos;
    struct cfq_group_stats st;
    if (!cfg.groups[i].njobs || qos_conf_empty (q))
      continue;
    printf ("%sgroup %s:", n++ ? "" : "\n", cfg.groups[i].name);
    for (size_t k = 0; k < qos_nr_keys; k++) {
      uint64_t v = qos_conf_get (q, &qos_keys[k]);
      if (v)
        printf (" %s=%s", qos_keys[k].name,
                cfg_format_qos (&qos_keys[k], v, val, sizeof val));
    }
    if (group_qos_stats (i, &st))
      printf ("; throttled %" PRIu64 ", reserved %" PRIu64, st.qos_throttled,
              st.qos_reserved);
    printf ("\n");
  }
}

/* --window: a table per measure (IOPS, then MiB/s), a row per window, a
 * column per group.
 */
static void
report_text_windows (void)
{
  for (int bytes = 0; bytes < 2; bytes++) {
    printf ("\n%s per %.3fs window, by group\n%-12s",
            bytes ? "MiB/s" : "IOPS", cfg.window / 1e9, "from (s)");
    for (unsigned i = 0; i < cfg.ngroups; i++)
      if (cfg.groups[i].njobs)
        printf (" %12s", cfg.groups[i].name);
    printf ("\n");
    for (unsigned w = 0; w < cfg.win.n; w++) {
      printf ("%-12.3f", (double) w * cfg.window / 1e9);
      for (unsigned i = 0; i < cfg.ngroups; i++)
        if (cfg.groups[i].njobs)
          printf (" %12.1f", bytes
                  ? mib_s (cfg.groups[i].win.bytes[w], cfg.window)
                  : per_s (cfg.groups[i].win.ios[w], cfg.window));
      printf ("\n");
    }
  }
}

static void
report_text (const struct report *r)
{
  report_text_run (r);
  report_text_tenants (r);
  report_text_groups (r);
  report_text_qos ();
  if (cfg.window)
    report_text_windows ();
}

/* ---- the report ---------------------------------------------------------- */

void
sim_report (void)
{
  struct report r;

  report_collect (&r);
  if (cfg.json)
    report_json (&r);
  else
    report_text (&r);
  report_free (&r);
}
