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
  struct series_counts by_win;  /* per window (--window) */
  struct series_counts by_sec;  /* per second */
};

/* , "windows": {"ios": [...], "bytes": [...]} */
static void
json_windows (const struct series_counts *c)
{
  printf (", \"windows\": {\"ios\": [");
  series_json (&cfg.win, c->ios);
  printf ("], \"bytes\": [");
  series_json (&cfg.win, c->bytes);
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

void
sim_report (void)
{
  const struct cfg_model *m = cfg.m;
  struct tenant_res *tr = xcalloc (m->nr_tenants, sizeof *tr);
  double *x = xcalloc (cfg.ngroups, sizeof *x);
  double *xi = xcalloc (cfg.ngroups, sizeof *xi);
  double *xc = xcalloc (cfg.njobs, sizeof *xc);
  uint64_t tbytes = 0, tios = 0, gw = 0;
  double jain, jain_iops;
  unsigned nx = 0, nt = 0;
  char dev[512], t[32], val[64];

  for (size_t i = 0; i < m->nr_tenants; i++) {
    hist_init (&tr[i].lat);
    hist_init (&tr[i].fsync_lat);
    series_counts_init (&cfg.win, &tr[i].by_win);
    series_counts_init (&cfg.sec, &tr[i].by_sec);
  }
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    struct sim_group *g = &cfg.groups[j->group];
    struct tenant_res *r = &tr[j->tenant];
    series_sum (&cfg.win, &r->by_win, &j->win);
    series_sum (&cfg.win, &g->win, &j->win);
    series_sum (&cfg.sec, &r->by_sec, &j->sec);
    r->t = j->t;
    r->group = j->group;
    r->bytes += j->bytes;
    r->ios += j->ios;
    r->flushes += j->flushes;
    r->writes += j->writes_done;
    r->win = j->stop - j->start;
    hist_merge (&r->lat, &j->lat);
    hist_merge (&r->fsync_lat, &j->fsync_lat);
    g->bytes += j->bytes;
    g->ios += j->ios;
    hist_merge (&g->lat, &j->lat);
    tbytes += j->bytes;
    tios += j->ios;
  }
  for (unsigned i = 0, k = 0; i < m->nr_tenants; i++) {
    unsigned nc = 0;
    if (!cfg.tenant_on[i])
      continue;
    for (; k < cfg.njobs && cfg.jobs[k]->tenant == i; k++)
      xc[nc++] = (double) cfg.jobs[k]->ios;
    tr[i].jain_conn = stats_jain (xc, nc);
    nt++;
  }
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    if (!g->njobs)
      continue;
    gw += g->weight;
    x[nx] = mib_s (g->bytes, cfg.duration) / g->weight;
    xi[nx++] = per_s (g->ios, cfg.duration) / g->weight;
  }
  jain = stats_jain (x, nx);
  jain_iops = stats_jain (xi, nx);
  devmodel_describe (sim.dm, dev, sizeof dev);

  if (cfg.json) {
    printf ("{\n  \"sched\": ");
    json_str (cfg.policy);
    printf (",\n  \"device\": ");
    json_str (dev);
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
    printf ("  \"tenants\": [\n");
    for (unsigned i = 0, k = 0; i < m->nr_tenants; i++) {
      const struct tenant_res *r = &tr[i];
      if (!cfg.tenant_on[i])
        continue;
      printf ("    {\"name\": ");
      json_str (r->t->name);
      printf (", \"group\": ");
      json_str (cfg.groups[r->group].name);
      printf (", \"connections\": %u, \"bytes\": %" PRIu64 ", \"ios\": %"
              PRIu64 ", \"writes\": %" PRIu64 ", \"flushes\": %" PRIu64
              ", \"mib_s\": %.6f"
              ", \"iops\": %.3f, \"lat_us\": {\"mean\": %.3f, \"p50\": %.3f"
              ", \"p99\": %.3f, \"p999\": %.3f, \"max\": %.3f}, \"fsync_us\": {\"p50\": %.3f"
              ", \"p90\": %.3f, \"max\": %.3f}, \"share\": %.6f"
              ", \"jain_connections\": %.6f",
              r->t->connections, r->bytes, r->ios, r->writes, r->flushes,
              mib_s (r->bytes, r->win), per_s (r->ios, r->win),
              us (hist_mean (&r->lat)), us (hist_quantile (&r->lat, 0.50)),
              us (hist_quantile (&r->lat, 0.99)),
              us (hist_quantile (&r->lat, 0.999)), us (r->lat.max),
              us (hist_quantile (&r->fsync_lat, 0.50)),
              us (hist_quantile (&r->fsync_lat, 0.90)), us (r->fsync_lat.max),
              tbytes ? (double) r->bytes / tbytes : 0, r->jain_conn);
      if (cfg.window)
        json_windows (&r->by_win);
      /* The latency distribution as quantiles, for CDF plots. */
      printf (", \"lat_cdf_us\": [");
      for (int q = 1; q <= 100; q++) {
        double f = q == 100 ? 0.999 : q / 100.0;
        printf ("%s[%.3f, %.3f]", q > 1 ? ", " : "", f,
                us (hist_quantile (&r->lat, f)));
        if (q == 100)
          printf (", [1.000, %.3f]", us (r->lat.max));
      }
      printf ("]");
      /* Completed bytes and requests in each second of the run. */
      printf (", \"series_bytes\": [");
      series_json (&cfg.sec, r->by_sec.bytes);
      printf ("], \"series_ios\": [");
      series_json (&cfg.sec, r->by_sec.ios);
      printf ("]}%s\n", ++k < nt ? "," : "");
    }
    printf ("  ],\n  \"groups\": [\n");
    for (unsigned i = 0, k = 0; i < cfg.ngroups; i++) {
      struct sim_group *g = &cfg.groups[i];
      if (!g->njobs)
        continue;
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
              tbytes ? (double) g->bytes / tbytes : 0,
              tios ? (double) g->ios / tios : 0,
              (double) g->weight / gw);
      if (!qos_conf_empty (&m->groups[i].qos)) {
        struct cfq_group_stats st;
        printf (", \"qos\": {");
        for (size_t q = 0, n = 0; q < qos_nr_keys; q++) {
          uint64_t v = qos_conf_get (&m->groups[i].qos, &qos_keys[q]);
          if (v)
            printf ("%s\"%s\": %" PRIu64, n++ ? ", " : "", qos_keys[q].name,
                    v);
        }
        if (group_qos_stats (i, &st))
          printf (", \"throttled\": %" PRIu64 ", \"reserved\": %" PRIu64,
                  st.qos_throttled, st.qos_reserved);
        printf ("}");
      }
      if (cfg.window)
        json_windows (&g->win);
      printf ("}%s\n", ++k < nx ? "," : "");
    }
    printf ("  ],\n  \"total\": {\"bytes\": %" PRIu64 ", \"ios\": %" PRIu64
            ", \"mib_s\": %.6f, \"iops\": %.3f},\n",
            tbytes, tios, mib_s (tbytes, cfg.duration),
            per_s (tios, cfg.duration));
    printf ("  \"jain\": %.6f,\n  \"jain_iops\": %.6f,\n"
            "  \"events_applied\": %u\n}\n", jain, jain_iops,
            cfg.events_applied);
    goto out;
  }

  fmt_time (t, sizeof t, cfg.duration);
  printf ("cfqsim: sched %s, device %s\n", cfg.policy, dev);
  printf ("duration %s, seed %" PRIu64 ", queue_depth %u", t, cfg.seed,
          cfg.queue_depth);
  for (size_t i = 0; !cfg.test_policy && i < m->nr_tunables; i++) {
    const struct cfq_tunable *d = cfq_tunable_lookup (m->tunables[i].name);
    printf ("%s%s=%s", i ? " " : ", tunables ", m->tunables[i].name,
            cfq_tunable_format (d, m->tunables[i].val, val, sizeof val));
  }
  printf ("\n\n%-16s %-12s %10s %10s %10s %10s %10s %7s\n", "tenant",
          "group", "MiB/s", "IOPS", "p50 ms", "p99 ms", "max ms", "share");
  for (unsigned i = 0; i < m->nr_tenants; i++) {
    const struct tenant_res *r = &tr[i];
    if (!cfg.tenant_on[i])
      continue;
    printf ("%-16s %-12s %10.3f %10.1f %10.3f %10.3f %10.3f %7.4f\n",
            r->t->name, cfg.groups[r->group].name, mib_s (r->bytes, r->win),
            per_s (r->ios, r->win), hist_quantile (&r->lat, 0.50) / 1e6,
            hist_quantile (&r->lat, 0.99) / 1e6, r->lat.max / 1e6,
            tbytes ? (double) r->bytes / tbytes : 0);
  }
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
            tbytes ? (double) g->bytes / tbytes : 0,
            (double) g->weight / gw);
  }
  printf ("\ntotal %.3f MiB/s, %.1f IOPS; Jain index of throughput/weight "
          "over %u groups: %.4f (IOPS: %.4f)\n",
          mib_s (tbytes, cfg.duration), per_s (tios, cfg.duration), nx, jain,
          jain_iops);
  for (unsigned i = 0, n = 0; i < cfg.ngroups; i++) {
    const struct qos_conf *q = &m->groups[i].qos;
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
  if (cfg.window)
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
out:
  for (size_t i = 0; i < m->nr_tenants; i++) {
    hist_free (&tr[i].lat);
    hist_free (&tr[i].fsync_lat);
    series_counts_free (&tr[i].by_win);
    series_counts_free (&tr[i].by_sec);
  }
  free (tr);
  free (x);
  free (xi);
  free (xc);
}
