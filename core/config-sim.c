/* config-sim.c: the lab's and the simulator's sections: [tenant], [sim], [event].
 *
 * A [tenant NAME] is a workload in fio's terms (rw, bs, iodepth,
 * thinktime, rates, fsync, start/stop, its export), run by cfqsim against
 * the modelled device and by the lab (tools/cfqlab) through the server.
 * [sim] holds the run's duration and seed; an [event NAME] is a control
 * command at a time (a weight or a tunable changing live).  The rules:
 * - A tenant names an export; its region and class come from there, and
 *   its offset/size stay inside it (check_tenants).
 * - The workload presets (workload =) fill what the tenant leaves out
 *   (check_workloads).
 * - An event's command is checked as the control socket would check it,
 *   and its time lies inside the run (check_events).
 */
#include "config-priv.h"

/* rw = NAME[:SKIP], fio's words: the pattern and the share of reads. */
static const struct {
  const char *name, *canon;
  bool rand;
  int reads;                    /* percent; -1: rwmixread (default 50) */
} rw_names[] = {
  { "read", "read", false, 100 }, { "write", "write", false, 0 },
  { "randread", "randread", true, 100 },
  { "randwrite", "randwrite", true, 0 },
  { "rw", "rw", false, -1 }, { "readwrite", "rw", false, -1 },
  { "randrw", "randrw", true, -1 },
};

/* ---- [sim] and [tenant NAME] -------------------------------------------- */

/* A count KEY = VALUE in MIN..MAX into *OUT; false (and an error) if not. */
static bool
count_key (struct cfg *cfg, const char *key, const char *value,
           uint64_t min, uint64_t max, uint64_t *out)
{
  uint64_t v;
  int r = units_parse_count (value, &v);

  if (r == -EINVAL) {
    ferr (cfg, cfg->lineno, "%s = %s: not a number (want %llu..%llu)", key,
          value, (unsigned long long) min, (unsigned long long) max);
    return false;
  }
  if (r < 0 || v < min || v > max) {
    ferr (cfg, cfg->lineno, "%s = %s: out of range %llu..%llu", key, value,
          (unsigned long long) min, (unsigned long long) max);
    return false;
  }
  *out = v;
  return true;
}

/* A time KEY = VALUE, with its unit (a bare number is refused). */
static bool
time_key (struct cfg *cfg, const char *key, const char *value, uint64_t *out)
{
  char want[96];

  int r = units_parse_time (value, 0, out);

  if (r == 0)
    return true;
  if (r == -ERANGE)
    ferr (cfg, cfg->lineno, "%s = %s: out of range (a time is less than"
          " 2^64 ns, about 584 years)", key, value);
  else
    ferr (cfg, cfg->lineno, "%s = %s: not a time (want %s)", key, value,
          units_expect_time (0, want, sizeof want));
  return false;
}

/* A size KEY = VALUE, a multiple of ALIGN. */
static bool
size_key (struct cfg *cfg, const char *key, const char *value,
          uint64_t align, uint64_t *out)
{
  int r = units_parse_size (value, out);

  if (r == -ERANGE) {
    ferr (cfg, cfg->lineno, "%s = %s: out of range (a size is less than"
          " 16E)", key, value);
    return false;
  }
  if (r < 0) {
    ferr (cfg, cfg->lineno, "%s = %s: not a size (want %s)", key, value,
          UNITS_EXPECT_SIZE);
    return false;
  }
  if (*out % align) {
    ferr (cfg, cfg->lineno, "%s = %s: not a multiple of %llu", key, value,
          (unsigned long long) align);
    return false;
  }
  return true;
}

void
set_sim_key (struct cfg *cfg, const char *key, const char *value)
{
  uint64_t v;

  if (strcmp (key, "duration") == 0) {
    if (!first_time (cfg, &cfg->l_duration, key))
      return;
    if (!time_key (cfg, key, value, &v))
      return;
    if (v == 0)
      ferr (cfg, cfg->lineno, "duration = %s: must be more than 0", value);
    else
      cfg->duration = v;
  }
  else if (strcmp (key, "seed") == 0) {
    if (first_time (cfg, &cfg->l_seed, key)
        && count_key (cfg, key, value, 0, UINT64_MAX, &v))
      cfg->seed = v;
  }
  else
    bad_key (cfg, SEC_SIM, key, "[sim]");
}

/* rw = NAME[:SKIP] */
static void
set_rw (struct cfg *cfg, struct xtenant *x, const char *value)
{
  size_t n = strcspn (value, ":");
  uint64_t skip = 0;

  for (size_t i = 0; i < sizeof rw_names / sizeof rw_names[0]; i++) {
    if (strlen (rw_names[i].name) != n
        || strncmp (rw_names[i].name, value, n) != 0)
      continue;
    if (value[n]) {
      if (rw_names[i].rand) {
        ferr (cfg, cfg->lineno, "rw = %s: ':SKIP' applies to sequential"
              " patterns only (read, write, rw)", value);
        x->bad = true;
        return;
      }
      if (!size_key (cfg, "rw", value + n + 1, CFG_SECTOR, &skip)) {
        x->bad = true;
        return;
      }
    }
    x->t.rw = rw_names[i].canon;
    x->t.rand = rw_names[i].rand;
    x->t.skip = skip;
    x->t.rwmixread = rw_names[i].reads < 0 ? 50 : (unsigned) rw_names[i].reads;
    return;
  }
  ferr (cfg, cfg->lineno, "rw = %s: want read, write, randread, randwrite,"
        " rw or randrw (sequential ones may add :SKIP)", value);
  x->bad = true;
}

/* bs = SIZE: sectors, 512 bytes to CFG_BS_MAX. */
static bool
bs_key (struct cfg *cfg, const char *value, uint32_t *bs)
{
  uint64_t v;

  if (!size_key (cfg, "bs", value, CFG_SECTOR, &v))
    return false;
  if (v == 0 || v > CFG_BS_MAX) {
    ferr (cfg, cfg->lineno, "bs = %s: out of range 512..32M", value);
    return false;
  }
  *bs = v;
  return true;
}

/* rate = RATE: bytes/s, more than 0. */
static bool
rate_key (struct cfg *cfg, const char *value, uint64_t *rate)
{
  uint64_t v;
  int r = units_parse_rate (value, &v);

  if (r == -ERANGE) {
    ferr (cfg, cfg->lineno, "rate = %s: out of range (a rate is less"
          " than 2^64 bytes/s)", value);
    return false;
  }
  if (r < 0 || v == 0) {
    ferr (cfg, cfg->lineno, "rate = %s: not a rate (want %s)", value,
          UNITS_EXPECT_RATE);
    return false;
  }
  *rate = v;
  return true;
}

/* class = rt|be|idle, and prio = 0..7: the tenant's own, over its
 * group's.
 */
static bool
class_key (struct cfg *cfg, const char *value, struct cfg_tenant *t)
{
  int i = sched_class_parse (value);

  if (i < 0) {
    ferr (cfg, cfg->lineno, "class = %s: want rt, be or idle", value);
    return false;
  }
  t->cls = i;
  t->cls_given = true;
  return true;
}

static bool
prio_key (struct cfg *cfg, const char *value, struct cfg_tenant *t)
{
  uint64_t v;

  if (units_parse_count (value, &v) < 0 || v >= SCHED_LEVELS) {
    ferr (cfg, cfg->lineno, "prio = %s: want 0..%d (0 is highest)", value,
          SCHED_LEVELS - 1);
    return false;
  }
  t->prio = v;
  t->prio_given = true;
  return true;
}

/* workload = NAME, of cfg_workload_names. */
static bool
workload_key (struct cfg *cfg, const char *value, enum cfg_workload *w)
{
  int i = name_index (cfg_workload_names, value);
  char lst[96];

  if (i < 0) {
    ferr (cfg, cfg->lineno, "workload = %s: want %s", value,
          one_of (cfg_workload_names, lst, sizeof lst));
    return false;
  }
  *w = i;
  return true;
}

void
set_tenant_key (struct cfg *cfg, struct xtenant *x, const char *key,
                const char *value)
{
  struct cfg_tenant *t = &x->t;
  bool ok = true;
  uint64_t v;

  if (strcmp (key, "export") == 0) {
    if (first_time (cfg, &x->l_export, key))
      x->export = xstrdup (cfg, value);
  }
  else if (strcmp (key, "connections") == 0) {
    if (first_time (cfg, &x->l_connections, key)
        && (ok = count_key (cfg, key, value, 1, CFG_CONNECTIONS_MAX, &v)))
      t->connections = v;
  }
  else if (strcmp (key, "rw") == 0) {
    if (first_time (cfg, &x->l_rw, key))
      set_rw (cfg, x, value);
  }
  else if (strcmp (key, "rwmixread") == 0) {
    if (first_time (cfg, &x->l_rwmixread, key)
        && (ok = count_key (cfg, key, value, 0, 100, &v))) {
      x->rwmix = v;
      x->rwmix_given = true;
    }
  }
  else if (strcmp (key, "bs") == 0) {
    if (first_time (cfg, &x->l_bs, key))
      ok = bs_key (cfg, value, &t->bs);
  }
  else if (strcmp (key, "iodepth") == 0) {
    if (first_time (cfg, &x->l_iodepth, key)
        && (ok = count_key (cfg, key, value, 1, CFG_IODEPTH_MAX, &v)))
      t->iodepth = v;
  }
  else if (strcmp (key, "thinktime") == 0) {
    if (first_time (cfg, &x->l_thinktime, key))
      ok = time_key (cfg, key, value, &t->thinktime);
  }
  else if (strcmp (key, "thinktime_blocks") == 0) {
    if (first_time (cfg, &x->l_thinktime_blocks, key)
        && (ok = count_key (cfg, key, value, 1, 1u << 30, &v)))
      t->thinktime_blocks = v;
  }
  else if (strcmp (key, "number_ios") == 0) {
    if (first_time (cfg, &x->l_number_ios, key)
        && (ok = count_key (cfg, key, value, 1, CFG_NUMBER_IOS_MAX, &v)))
      t->number_ios = v;
  }
  else if (strcmp (key, "rate_iops") == 0) {
    if (first_time (cfg, &x->l_rate_iops, key)
        && (ok = count_key (cfg, key, value, 1, NSEC_PER_SEC, &v)))
      t->rate_iops = v;
  }
  else if (strcmp (key, "rate") == 0) {
    if (first_time (cfg, &x->l_rate, key))
      ok = rate_key (cfg, value, &t->rate);
  }
  else if (strcmp (key, "fsync") == 0) {
    if (first_time (cfg, &x->l_fsync, key)
        && (ok = count_key (cfg, key, value, 0, 1u << 30, &v)))
      t->fsync = v;
  }
  else if (strcmp (key, "offset") == 0) {
    if (first_time (cfg, &x->l_offset, key))
      ok = size_key (cfg, key, value, CFG_SECTOR, &t->offset);
  }
  else if (strcmp (key, "size") == 0) {
    if (!first_time (cfg, &x->l_size, key))
      return;
    ok = size_key (cfg, key, value, 1, &t->size);
    if (ok && t->size == 0) {
      ferr (cfg, cfg->lineno, "size = %s: must not be 0", value);
      ok = false;
    }
  }
  else if (strcmp (key, "start") == 0) {
    if (first_time (cfg, &x->l_start, key))
      ok = time_key (cfg, key, value, &t->start);
  }
  else if (strcmp (key, "stop") == 0) {
    if (first_time (cfg, &x->l_stop, key))
      ok = time_key (cfg, key, value, &t->stop);
  }
  else if (strcmp (key, "class") == 0) {
    if (first_time (cfg, &x->l_class, key))
      ok = class_key (cfg, value, t);
  }
  else if (strcmp (key, "prio") == 0) {
    if (first_time (cfg, &x->l_prio, key))
      ok = prio_key (cfg, value, t);
  }
  else if (strcmp (key, "workload") == 0) {
    if (first_time (cfg, &x->l_workload, key))
      ok = workload_key (cfg, value, &t->workload);
  }
  else
    bad_key (cfg, SEC_TENANT, key, "[tenant NAME]");
  if (!ok)
    x->bad = true;
}

/* [event NAME]: at = TIME, command = LINE (what the command means is
 * checked once the groups are known, in check_events).
 */
void
set_event_key (struct cfg *cfg, struct xevent *x, const char *key,
               const char *value)
{
  if (strcmp (key, "at") == 0) {
    if (first_time (cfg, &x->l_at, key))
      time_key (cfg, key, value, &x->at);
  }
  else if (strcmp (key, "command") == 0) {
    size_t n = strlen (value);

    if (!first_time (cfg, &x->l_command, key))
      return;
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
      x->command = strndup (value + 1, n - 2);
    else
      x->command = strdup (value);
    if (!x->command)
      cfg->oom = true;
  }
  else
    bad_key (cfg, SEC_EVENT, key, "[event NAME]");
}

/* Resolve each tenant's export, pattern, class and level, and check its
 * region against the export (OK[i]: export i's region is valid).
 */
void
check_tenants (struct cfg *cfg, const bool *ok)
{
  char b1[32], b2[32], b3[80];

  for (size_t i = 0; i < cfg->nr_tenants; i++) {
    const struct xtenant *x = &cfg->tenants[i];
    struct cfg_tenant *t = &cfg->m_tenants[i];
    const char *want = x->export ? x->export : "";
    const struct cfg_export *e;
    const struct cfg_group *g;
    size_t j;

    *t = x->t;
    t->name = x->name;
    t->line = x->line;
    if (x->bad)
      continue;                 /* reported at its line already */
    bool mixed = strcmp (t->rw, "rw") == 0 || strcmp (t->rw, "randrw") == 0;
    if (x->rwmix_given && mixed)
      t->rwmixread = x->rwmix;
    else if (x->rwmix_given)
      ferr (cfg, x->l_rwmixread, "tenant %s: rwmixread applies to rw = rw"
            " or randrw (rw is %s)", x->name, t->rw);
    for (j = 0; j < cfg->m.nr_exports; j++)
      if (strcmp (cfg->m.exports[j].name, want) == 0)
        break;
    if (j == cfg->m.nr_exports) {
      if (x->export)
        ferr (cfg, x->l_export, "tenant %s: export = %s: no [export %s]"
              " section", x->name, want, want);
      else
        ferr (cfg, x->line, "tenant %s: no export = NAME, and no default"
              " export ([export] with no name)", x->name);
      continue;
    }
    t->export = j;
    e = &cfg->m.exports[j];
    if (e->group >= cfg->m.nr_groups)
      continue;                 /* no such group: reported already */
    g = &cfg->m_groups[e->group];
    if (!t->cls_given)
      t->cls = g->cls;
    if (!t->prio_given)
      t->prio = g->prio;
    if (e->file) {
      ferr (cfg, blame_t (x, x->l_export), "tenant %s: export \"%s\" has"
            " its own file; a tenant needs an export that is a region of"
            " the device", x->name, e->name);
      continue;
    }
    if (!ok[j])
      continue;                 /* the export's region is wrong already */
    if (t->rwmixread < 100 && e->readonly)
      ferr (cfg, blame_t (x, x->l_rw), "tenant %s writes (rw = %s) but"
            " export \"%s\" is readonly", x->name, t->rw, e->name);
    if (t->fsync && t->rwmixread == 100)
      ferr (cfg, x->l_fsync, "tenant %s: fsync = %u needs writes (rw ="
            " write, randwrite, rw or randrw)", x->name, t->fsync);
    if (t->stop && t->stop <= t->start)
      ferr (cfg, x->l_stop, "tenant %s: stop = %s is not after start = %s",
            x->name, units_format_time (t->stop, b1, sizeof b1),
            units_format_time (t->start, b2, sizeof b2));
    if (t->offset >= e->size) {
      ferr (cfg, blame_t (x, x->l_offset), "tenant %s: offset %s is at or"
            " beyond the end of export \"%s\" (size %s)", x->name,
            units_format_size (t->offset, b1, sizeof b1), e->name,
            units_format_size (e->size, b2, sizeof b2));
      continue;
    }
    if (!x->l_size)
      t->size = e->size - t->offset;
    else if (t->size > e->size - t->offset) {
      ferr (cfg, x->l_size, "tenant %s: region %s runs past the end of"
            " export \"%s\" (size %s)", x->name,
            format_region (t->offset, t->size, b3, sizeof b3), e->name,
            units_format_size (e->size, b2, sizeof b2));
      continue;
    }
    if (t->size < t->bs)
      ferr (cfg, blame_t (x, x->l_size ? x->l_size : x->l_bs), "tenant %s:"
            " region of %s is smaller than bs = %s", x->name,
            units_format_size (t->size, b1, sizeof b1),
            units_format_size (t->bs, b2, sizeof b2));
  }
}

/* A tenant whose workload runs on a file system (every one but fio) owns
 * its export: the lab makes and mounts a file system there.
 */
void
check_workloads (struct cfg *cfg)
{
  for (size_t i = 0; i < cfg->nr_tenants; i++) {
    const struct xtenant *x = &cfg->tenants[i];
    const struct cfg_tenant *t = &cfg->m_tenants[i];
    const struct cfg_export *e;

    if (x->bad || t->workload == CFG_WORKLOAD_FIO
        || t->export >= cfg->m.nr_exports)
      continue;
    e = &cfg->m.exports[t->export];
    if (e->readonly)
      ferr (cfg, x->l_workload, "tenant %s: workload = %s makes a file"
            " system on export \"%s\", which is readonly", x->name,
            cfg_workload_names[t->workload], e->name);
    for (size_t j = 0; j < cfg->nr_tenants; j++)
      if (j != i && cfg->m_tenants[j].export == t->export
          && !cfg->tenants[j].bad) {
        ferr (cfg, x->l_workload, "tenant %s: workload = %s needs export"
              " \"%s\" for itself, but tenant %s uses it too", x->name,
              cfg_workload_names[t->workload], e->name, cfg->tenants[j].name);
        break;
      }
  }
}

/* Each event's command, as the control socket would take it: "weight
 * GROUP N" or "set KEY VALUE" (KEY a CFQ tunable or queue_depth, VALUE in
 * the tunable's grammar).  The model's events are sorted by time.
 */
void
check_events (struct cfg *cfg)
{
  char why[160], b1[32], b2[32];

  for (size_t i = 0; i < cfg->nr_events; i++) {
    const struct xevent *x = &cfg->events[i];
    struct cfg_event *ev = &cfg->m_events[i];
    char verb[16], a[80], b[80], extra[2];
    int n;

    ev->name = x->name;
    ev->at = x->at;
    ev->command = x->command;
    ev->line = x->line;
    if (!x->l_at)
      ferr (cfg, x->line, "[event %s] needs at = TIME", x->name);
    else if (cfg->l_duration && x->at >= cfg->duration)
      ferr (cfg, x->l_at, "event %s: at = %s is not before the end of the"
            " run ([sim] duration = %s)", x->name,
            units_format_time (x->at, b1, sizeof b1),
            units_format_time (cfg->duration, b2, sizeof b2));
    if (!x->command) {
      if (x->l_at)
        ferr (cfg, x->line, "[event %s] needs command = \"weight GROUP N\""
              " or \"set KEY VALUE\"", x->name);
      continue;
    }
    n = sscanf (x->command, "%15s %79s %79s %1s", verb, a, b, extra);
    if (n == 3 && strcmp (verb, "weight") == 0) {
      uint64_t w;
      size_t g;

      for (g = 0; g < cfg->m.nr_groups; g++)
        if (strcmp (cfg->m_groups[g].name, a) == 0)
          break;
      if (g == cfg->m.nr_groups)
        ferr (cfg, x->l_command, "event %s: command = %s: no [group %s]",
              x->name, x->command, a);
      else if (units_parse_count (b, &w) < 0 || w < SCHED_WEIGHT_MIN
               || w > SCHED_WEIGHT_MAX)
        ferr (cfg, x->l_command, "event %s: command = %s: weight %s is out"
              " of range %d..%d", x->name, x->command, b, SCHED_WEIGHT_MIN,
              SCHED_WEIGHT_MAX);
      else {
        ev->kind = CFG_EVENT_WEIGHT;
        ev->group = g;
        ev->weight = w;
      }
    }
    else if (n == 3 && strcmp (verb, "set") == 0) {
      int k = gkey_lookup (a);

      if (k == GK_QUEUE_DEPTH || (k >= GK_TUNABLE && cfq_tunable_lookup (a))) {
        uint64_t v;
        if (parse_gvalue (k, b, &v, why, sizeof why) < 0)
          ferr (cfg, x->l_command, "event %s: command = %s: %s", x->name,
                x->command, why);
        else {
          ev->kind = CFG_EVENT_SET;
          ev->key = k == GK_QUEUE_DEPTH ? gk_names[GK_QUEUE_DEPTH]
            : cfq_tunable_lookup (a)->name;
          ev->value = v;
        }
      }
      else
        ferr (cfg, x->l_command, "event %s: command = %s: '%s' cannot be"
              " set while running (a CFQ tunable or queue_depth)", x->name,
              x->command, a);
    }
    else
      ferr (cfg, x->l_command, "event %s: command = %s: want \"weight GROUP"
            " N\" or \"set KEY VALUE\"", x->name, x->command);
  }
  /* By time; file order among equal times (insertion sort: stable). */
  for (size_t i = 1; i < cfg->nr_events; i++) {
    struct cfg_event e = cfg->m_events[i];
    size_t j = i;
    while (j > 0 && cfg->m_events[j - 1].at > e.at) {
      cfg->m_events[j] = cfg->m_events[j - 1];
      j--;
    }
    cfg->m_events[j] = e;
  }
}
