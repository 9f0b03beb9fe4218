/* config-qos.c: caps, reservations and latency targets of a [group].
 *
 * [group] iops_max, bps_max, iops_min, bps_min ... (include/qos.h's key
 * table) are parsed by the unit the table gives: requests/s a count,
 * bytes/s a rate, burst seconds a time whose bare number is seconds
 * (cfg_parse_qos, cfg_format_qos).  The rules:
 * - Each value within its key's range; a cap in bytes below its floor
 *   (QOS_BPS_FLOOR) is refused with the hold it would mean.
 * - A group's set is checked by qos_conf_check at cfg_validate: a cap
 *   below a reservation is an error at the reservation's line.
 * - They need scheduler = cfq: under fifo each is an error (check_qos).
 * - With emulation, reservations adding up to more than the model can
 *   give is a warning (warn_reservations).
 * [group] latency_target, latency_percentile, latency_mode and boost
 * (include/latency.h's key table) are parsed by cfg_parse_latency: the
 * target a time with its unit, the others one of their names.  They need
 * scheduler = cfq (check_latency).
 */
#include "config-priv.h"

/* ---- caps and reservations --------------------------------------------- */

int
cfg_parse_qos (const char *key, const char *value, struct qos_conf *c,
               char *why, size_t len)
{
  const struct qos_key *k = qos_key_lookup (key);
  char b1[32], b2[32], e[96];
  uint64_t v = 0;
  int r = 0;

  if (!k)
    return -ENOENT;
  switch (k->unit) {
  case QOS_U_IOPS:
    if ((r = units_parse_count (value, &v)) == -EINVAL) {
      snprintf (why, len, "not a number (requests per second)");
      return -EINVAL;
    }
    break;
  case QOS_U_BPS:
    if ((r = units_parse_rate (value, &v)) == -EINVAL) {
      snprintf (why, len, "not a rate (%s)", UNITS_EXPECT_RATE);
      return -EINVAL;
    }
    break;
  case QOS_U_SECONDS:
    /* A time with its unit: a bare number is ms for the tunables, and
     * would be read as seconds by the key's name.  0 alone is fine.
     */
    if ((r = units_parse_time (value, 0, &v)) == -EINVAL) {
      if (value[0] && !value[strspn (value, "0123456789.")])
        snprintf (why, len, "needs its unit (%ss for seconds, %sms for"
                  " milliseconds)", value, value);
      else
        snprintf (why, len, "not a time (want %s)",
                  units_expect_time (0, e, sizeof e));
      return -EINVAL;
    }
    break;
  }
  /* r is -ERANGE for a value past 64 bits: out of range like any other. */
  if (r < 0 || qos_conf_set (c, k, v) < 0) {
    if (r == 0 && k->floor && v < k->min)
      snprintf (why, len, "below the floor of %s: at the floor one request"
                " of the largest size (%u MiB) waits up to %llu s for its"
                " tokens, under a lower cap longer (0: no cap)",
                cfg_format_qos (k, k->min, b1, sizeof b1),
                CFG_MAX_REQUEST >> 20, (unsigned long long)
                ((qos_hold_max (k->cap, k->min, CFG_MAX_REQUEST)
                  + NSEC_PER_SEC - 1) / NSEC_PER_SEC));
    else
      snprintf (why, len, "out of range %s..%s (0: none)",
                cfg_format_qos (k, k->min, b1, sizeof b1),
                cfg_format_qos (k, k->max, b2, sizeof b2));
    return -EINVAL;
  }
  return 0;
}

char *
cfg_format_qos (const struct qos_key *k, uint64_t v, char *buf, size_t len)
{
  switch (k->unit) {
  case QOS_U_BPS: return units_format_rate (v, buf, len);
  case QOS_U_SECONDS: return units_format_time (v, buf, len);
  default:
    snprintf (buf, len, "%llu", (unsigned long long) v);
    return buf;
  }
}

/* The line of a group's first QoS key in file order, and that key. */
static unsigned
first_qos_line (const struct xgroup *g, const struct qos_key **key)
{
  unsigned line = 0;

  for (size_t i = 0; i < qos_nr_keys; i++)
    if (g->l_qos[i] && (!line || g->l_qos[i] < line)) {
      line = g->l_qos[i];
      *key = &qos_keys[i];
    }
  return line;
}

/* What the device model gives at queue depth QD, from its own service
 * times: random 4 KiB reads per second (SEQ false) or sequential 1 MiB
 * read bytes per second (SEQ true), over 2000 requests kept QD deep.
 */
static double
model_rate (struct devmodel *dm, unsigned qd, bool seq)
{
  const unsigned n = 2000;
  const uint32_t bs = seq ? 1u << 20 : 4096;
  uint64_t blocks = devmodel_capacity (dm) / bs, now = 0, rs = 1;
  unsigned issued = 0, done = 0;
  struct rq *rqs, *r;

  if (qd > DEVMODEL_MAX_QUEUE)
    qd = DEVMODEL_MAX_QUEUE;
  rqs = calloc (qd, sizeof *rqs);
  if (!rqs || !blocks) {
    free (rqs);
    return 0;
  }
  devmodel_reset (dm);
  for (unsigned i = 0; i < qd && issued < n; i++, issued++) {
    rqs[i] = (struct rq) { .op = RQ_READ, .len = bs, .flags = RQ_SYNC };
    rqs[i].off = (seq ? issued % blocks : splitmix64 (&rs) % blocks) * bs;
    devmodel_submit (dm, &rqs[i], 0);
  }
  while (done < n && (now = devmodel_next (dm)) != SCHED_NEVER)
    while ((r = devmodel_complete (dm, now, NULL)) != NULL) {
      done++;
      if (issued < n) {
        r->off = (seq ? issued % blocks : splitmix64 (&rs) % blocks) * bs;
        devmodel_submit (dm, r, now);
        issued++;
      }
    }
  free (rqs);
  return now && now != SCHED_NEVER
    ? (double) done * (seq ? bs : 1) * 1e9 / (double) now : 0;
}

/* With emulation: warn if the reservations add up to more than the
 * model gives.  The IOPS are compared with random 4 KiB reads (what a
 * reservation in requests is usually for), the bytes with sequential
 * 1 MiB reads (the most the device gives at all).
 */
static void
warn_reservations (struct cfg *cfg)
{
  const char *emu = cfg->m.dev.emulate;
  uint64_t sum[2] = { 0, 0 };
  unsigned line[2] = { 0, 0 };
  struct devmodel *dm;
  int err;

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *g = &cfg->groups[i];
    for (int b = 0; b < 2; b++) {
      const struct qos_key *k = qos_key_lookup (b ? "bps_min" : "iops_min");
      uint64_t v = qos_conf_get (&g->qos, k);
      if (v) {
        sum[b] += v;
        line[b] = g->l_qos[k - qos_keys];
      }
    }
  }
  if (!emu || (!sum[0] && !sum[1]))
    return;
  dm = devmodel_new (emu, &err);
  if (!dm) {
    if (err == -ENOMEM)
      cfg->oom = true;
    return;
  }
  for (size_t i = 0; i < cfg->m.dev.nr_model; i++)
    devmodel_set (dm, cfg->m.dev.model[i].key, cfg->m.dev.model[i].value);
  for (int b = 0; b < 2; b++) {
    double give;
    char b1[32], b2[32];

    if (!sum[b])
      continue;
    give = model_rate (dm, cfg->m.dev.queue_depth, b);
    if ((double) sum[b] <= give)
      continue;
    if (b)
      fwarn (cfg, line[b], "the reservations add up to %s (bps_min), more"
             " than the emulated %s gives (about %s of sequential 1M reads"
             " at queue_depth %u): under contention not all of them can be"
             " met", units_format_rate (sum[b], b1, sizeof b1), emu,
             units_format_rate ((uint64_t) give / 1000000 * 1000000, b2,
                                sizeof b2), cfg->m.dev.queue_depth);
    else
      fwarn (cfg, line[b], "the reservations add up to %llu requests/s"
             " (iops_min), more than the emulated %s gives (about %.0f"
             " random 4K reads/s at queue_depth %u): under contention not"
             " all of them can be met", (unsigned long long) sum[b], emu,
             give, cfg->m.dev.queue_depth);
  }
  devmodel_free (dm);
}

/* Caps and reservations: consistent within each group, and only with a
 * scheduler that has them.
 */
void
check_qos (struct cfg *cfg)
{
  bool fifo = strcmp (cfg->m.scheduler, "fifo") == 0;
  const struct qos_key *k = NULL, *o;
  char why[200], b1[32], b2[32];

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *g = &cfg->groups[i];
    unsigned line = first_qos_line (g, &k);
    struct qos_conf left = g->qos;

    if (qos_conf_empty (&g->qos))
      continue;
    if (fifo) {
      ferr (cfg, line, "%s: caps and reservations need scheduler = cfq"
            " (fifo serves in arrival order, with no per-group queues to"
            " hold back or to serve first)", k->name);
      continue;
    }
    /* Every fault, not just the first: drop each key found at fault. */
    while (qos_conf_check (&left, why, sizeof why, &k, &o) < 0) {
      cfg_format_qos (k, qos_conf_get (&g->qos, k), b1, sizeof b1);
      if (o)
        ferr (cfg, g->l_qos[k - qos_keys], "%s = %s, %s = %s (line %u): %s",
              k->name, b1, o->name,
              cfg_format_qos (o, qos_conf_get (&g->qos, o), b2, sizeof b2),
              g->l_qos[o - qos_keys], why);
      else
        ferr (cfg, g->l_qos[k - qos_keys], "%s = %s: %s", k->name, b1, why);
      qos_conf_set (&left, k, 0);
    }
  }
  if (!fifo)
    warn_reservations (cfg);
}

/* ---- latency targets and the boost --------------------------------------- */

int
cfg_parse_latency (const char *key, const char *value, struct lat_conf *c,
                   char *why, size_t len)
{
  const struct lat_key *k = lat_key_lookup (key);
  char b1[32], b2[32], e[96];
  uint64_t v = 0;
  bool b;
  int i;

  if (!k)
    return -ENOENT;
  switch (k->unit) {
  case LAT_U_TIME:
    if (units_parse_time (value, 0, &v) < 0) {
      if (value[0] && !value[strspn (value, "0123456789.")])
        snprintf (why, len, "needs its unit (%sms for milliseconds, %sus"
                  " for microseconds)", value, value);
      else
        snprintf (why, len, "not a time (want %s)",
                  units_expect_time (0, e, sizeof e));
      return -EINVAL;
    }
    if (lat_conf_set (c, k, v) < 0) {
      snprintf (why, len, "out of range %s..%s (0: none)",
                units_format_time (k->min, b1, sizeof b1),
                units_format_time (k->max, b2, sizeof b2));
      return -EINVAL;
    }
    return 0;
  case LAT_U_CHOICE:
    if ((i = name_index (k->names, value)) >= 0)
      return lat_conf_set (c, k, k->values[i]) < 0 ? -EINVAL : 0;
    snprintf (why, len, "want %s", one_of (k->names, e, sizeof e));
    return -EINVAL;
  case LAT_U_BOOL:
    if (units_parse_bool (value, &b) < 0) {
      snprintf (why, len, "want %s", UNITS_EXPECT_BOOL);
      return -EINVAL;
    }
    return lat_conf_set (c, k, b) < 0 ? -EINVAL : 0;
  }
  return -EINVAL;
}

/* Latency targets and the boost need a scheduler with per-group
 * charges: under fifo each is an error.
 */
void
check_latency (struct cfg *cfg)
{
  if (strcmp (cfg->m.scheduler, "fifo") != 0)
    return;
  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *g = &cfg->groups[i];

    for (size_t k = 0; k < lat_nr_keys; k++)
      if (g->l_lat[k])
        ferr (cfg, g->l_lat[k], "%s: latency targets and the boost need"
              " scheduler = cfq (fifo serves in arrival order, with no"
              " per-group charge to lower or raise)", lat_keys[k].name);
  }
}
