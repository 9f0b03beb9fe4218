/* cfq-tunables.c: CFQ's tunables: the one table, and values as text.
 *
 * Every knob has one row: name (the sysfs name), unit, default, range and
 * a line of help.  The rules:
 * - The ranges are ours.  The kernel's sysfs takes any value, but here
 *   the knobs are set over a control socket while tenants are served, so
 *   a time for which other tenants wait is bounded by what CFQ's defaults
 *   mean: an idle window (slice_idle, group_idle: the device waits for
 *   one queue while the others' requests wait, once per queue in turn)
 *   at most 100 ms, 12 times the default and many times a disk's seek; a
 *   slice (slice_sync, slice_async) and the round of a group's queues
 *   (target_latency) at most 1 s, 10 and 3 times their defaults; a
 *   request deadline (fifo_expire_*) at most 10 s, 40 to 80 times the
 *   defaults.  The manual's [scheduler] says so to the user.
 * - The unit decides the grammar of a value (cfq_tunable_parse): "ns" a
 *   time, "KiB" a bare number of KiB or a size, "bool", "mode" a name or
 *   its number; every reader (config file, control socket, cfqsim) goes
 *   through it, and cfq_tunable_format writes what it reads back.
 * - A value out of range is refused (-ERANGE), never clamped: cfq_set is
 *   the one setter, and sched_set() reaches it.
 * - Setting rotational or hw_tag has effects beyond the value: the qos
 *   slice, and the queueing detection starting again.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq-priv.h"

const struct cfq_tunable cfq_tunables[T_NR] = {
  [T_QUANTUM] = { "quantum", "requests", 8, 1, 1024,
    "cap on the active queue's requests in the driver" },
  [T_FIFO_EXPIRE_SYNC] = { "fifo_expire_sync", "ns", 125 * MS, 1 * MS,
    10000 * MS, "sync request deadline, checked once per slice" },
  [T_FIFO_EXPIRE_ASYNC] = { "fifo_expire_async", "ns", 250 * MS, 1 * MS,
    10000 * MS, "async request deadline, checked once per slice" },
  [T_BACK_SEEK_MAX] = { "back_seek_max", "KiB", 16384, 0, 1 << 30,
    "backward requests within this distance are candidates" },
  [T_BACK_SEEK_PENALTY] = { "back_seek_penalty", "factor", 2, 1, 1000,
    "backward distance is multiplied by this" },
  [T_SLICE_SYNC] = { "slice_sync", "ns", 100 * MS, 1 * MS, 1000 * MS,
    "base time slice of a sync queue (level 4)" },
  [T_SLICE_ASYNC] = { "slice_async", "ns", 40 * MS, 1 * MS, 1000 * MS,
    "base time slice of an async queue (level 4)" },
  [T_SLICE_ASYNC_RQ] = { "slice_async_rq", "requests", 2, 1, 1024,
    "async queue expires after 2*(n + n*(7-level)) dispatches" },
  [T_SLICE_IDLE] = { "slice_idle", "ns", 8 * MS, 0, 100 * MS,
    "idle window for a sync queue; 0 disables (IOPS mode with NCQ)" },
  [T_GROUP_IDLE] = { "group_idle", "ns", 8 * MS, 0, 100 * MS,
    "idle window for a group's last queue when queue idling is off" },
  [T_LOW_LATENCY] = { "low_latency", "bool", 1, 0, 1,
    "scale slices to target_latency; ramp async depth after delays" },
  [T_TARGET_LATENCY] = { "target_latency", "ns", 300 * MS, 1 * MS,
    1000 * MS, "time in which every busy queue of a group gets a turn" },
  [T_MODE] = { "mode", "mode", CFQ_MODE_AUTO, 0, 2,
    "group charge: 0 time, 1 iops, 2 auto (iops on flash; or NCQ, no idle)" },
  [T_ROTATIONAL] = { "rotational", "bool", 1, 0, 1,
    "device seeks (1) or not (0): seek detection and idling rules" },
  [T_GROUP_ISOLATION] = { "group_isolation", "bool", 1, 1, 1,
    "always 1: seeky queues stay in their group (CFQ's 0 is not offered)" },
  [T_MERGE] = { "merge", "bool", 1, 0, 1,
    "cooperating queues: serve a close queue instead of idling, merge them" },
  [T_HW_TAG] = { "hw_tag", "mode", 2, 0, 2,
    "device queues: 0 no, 1 yes (forced), 2 detect (starts assuming yes)" },
  [T_WC_DEPTH] = { "wc_depth", "requests", 16, 0, 1024,
    "queueing flash, IOPS mode, group_idle=0, 2+ busy groups: fill the"
    " driver to this many requests, one at a time from the group of least"
    " vdisktime; 0 off (groups take turns)" },
  [T_GROUP_LAG] = { "group_lag", "requests", 16, 0, 1024,
    "work-conserving groups with group_idle on: no group runs more than"
    " this many requests (at weight 500) ahead of a group that is present"
    " but empty, for up to group_idle after its last completion; 0 off" },
  [T_COST] = { "cost", "bool", 1, 0, 1,
    "charge groups what their requests cost the device (the cost model)"
    " in every mode; 0: time used, or requests in IOPS mode, as CFQ" },
  [T_GROUP_ASYNC] = { "group_async", "bool", 1, 0, 1,
    "CFQ's async throttles (async waits for sync in flight, async depth"
    " after late sync, sync preempts async) within a group; 0: device-wide,"
    " as CFQ" },
  [T_PROFILE] = { "profile", "mode", CFQ_PROFILE_DEFAULT, 0, 1,
    "defaults: default (cost-fair groups), kernel (CFQ 2.6.37's); setting"
    " it sets the tunables the profiles differ in" },
};
const size_t cfq_nr_tunables = T_NR;

const struct cfq_tunable *
cfq_tunable_lookup (const char *name)
{
  for (size_t i = 0; i < T_NR; i++)
    if (strcmp (cfq_tunables[i].name, name) == 0)
      return &cfq_tunables[i];
  return NULL;
}

int
cfq_tunable_check (const char *name, uint64_t val)
{
  const struct cfq_tunable *t = cfq_tunable_lookup (name);

  if (!t)
    return -ENOENT;
  if (val < t->min || val > t->max)
    return -ERANGE;
  return 0;
}

/* Tunables as text.  The unit string of the table decides the grammar
 * (include/units.h for times, sizes and booleans); the tunables of unit
 * "mode" take one of their names (listed here in the order messages give
 * them) or its number.  Every reader of a value (the config file, the control
 * socket's set, cfqsim) goes through cfq_tunable_parse, so they accept
 * the same text.
 */
struct cfq_name {
  const char *name;
  uint64_t val;
};

static const struct cfq_name cfq_mode_names[] = {
  { "auto", CFQ_MODE_AUTO }, { "time", CFQ_MODE_TIME },
  { "iops", CFQ_MODE_IOPS }, { NULL, 0 },
};

static const struct cfq_name cfq_profile_names[] = {
  { "default", CFQ_PROFILE_DEFAULT }, { "kernel", CFQ_PROFILE_KERNEL },
  { NULL, 0 },
};

static const struct cfq_name cfq_hw_tag_names[] = {
  { "detect", 2 }, { "no", 0 }, { "yes", 1 }, { NULL, 0 },
};

enum tunit { TU_TIME, TU_KIB, TU_BOOL, TU_NAME, TU_COUNT };

static enum tunit
tunit (const struct cfq_tunable *t)
{
  if (strcmp (t->unit, "ns") == 0)
    return TU_TIME;
  if (strcmp (t->unit, "KiB") == 0)
    return TU_KIB;
  if (strcmp (t->unit, "bool") == 0)
    return TU_BOOL;
  if (strcmp (t->unit, "mode") == 0)
    return TU_NAME;
  return TU_COUNT;
}

static const struct cfq_name *
tunable_names (const struct cfq_tunable *t)
{
  if (t == &cfq_tunables[T_HW_TAG])
    return cfq_hw_tag_names;
  if (t == &cfq_tunables[T_PROFILE])
    return cfq_profile_names;
  return cfq_mode_names;
}

int
cfq_tunable_parse (const char *name, const char *text, uint64_t *val)
{
  const struct cfq_tunable *t = cfq_tunable_lookup (name);
  const struct cfq_name *n;
  uint64_t v = 0;
  bool b;
  int r = -EINVAL;

  if (!t)
    return -ENOENT;
  switch (tunit (t)) {
  case TU_TIME:
    r = units_parse_time (text, NSEC_PER_MSEC, &v);
    break;
  case TU_KIB:
    /* A bare number is KiB, as in sysfs; with a suffix, a size. */
    if (text[0] && strchr ("0123456789", text[strlen (text) - 1]))
      r = units_parse_count (text, &v);
    else if ((r = units_parse_size (text, &v)) == 0) {
      if (v % 1024)
        return -EINVAL;
      v /= 1024;
    }
    break;
  case TU_BOOL:
    r = units_parse_bool (text, &b);
    if (r == 0)
      v = b;
    break;
  case TU_NAME:
    /* The name, or its number (as sched_set takes it). */
    r = units_parse_count (text, &v);
    for (n = tunable_names (t); n->name; n++)
      if (strcmp (text, n->name) == 0) {
        v = n->val;
        r = 0;
      }
    break;
  case TU_COUNT:
    r = units_parse_count (text, &v);
    break;
  }
  if (r < 0)
    return r == -ERANGE ? -ERANGE : -EINVAL;    /* past 64 bits: too big */
  if (v < t->min || v > t->max)
    return -ERANGE;
  *val = v;
  return 0;
}

char *
cfq_tunable_format (const struct cfq_tunable *t, uint64_t val, char *buf,
                    size_t len)
{
  switch (tunit (t)) {
  case TU_TIME:
    return units_format_time (val, buf, len);
  case TU_KIB:
    if (val <= UINT64_MAX / 1024)
      return units_format_size (val * 1024, buf, len);
    break;
  case TU_NAME:
    for (const struct cfq_name *n = tunable_names (t); n->name; n++)
      if (n->val == val) {
        snprintf (buf, len, "%s", n->name);
        return buf;
      }
    break;
  default:
    break;
  }
  snprintf (buf, len, "%llu", (unsigned long long) val);
  return buf;
}

const char *
cfq_tunable_explain (const struct cfq_tunable *t, const char *text, int err,
                     char *buf, size_t len)
{
  char b1[32], b2[32], want[96];
  uint64_t v;
  size_t off;

  if (err == -ERANGE) {
    snprintf (buf, len, "out of range %s..%s",
              cfq_tunable_format (t, t->min, b1, sizeof b1),
              cfq_tunable_format (t, t->max, b2, sizeof b2));
    return buf;
  }
  switch (tunit (t)) {
  case TU_TIME:
    snprintf (buf, len, "not a time (want %s)",
              units_expect_time (NSEC_PER_MSEC, want, sizeof want));
    break;
  case TU_KIB:
    if (units_parse_size (text, &v) == 0)
      snprintf (buf, len, "not a whole number of KiB");
    else
      snprintf (buf, len, "not a size (a bare number is KiB)");
    break;
  case TU_BOOL:
    snprintf (buf, len, "not a boolean (want %s)", UNITS_EXPECT_BOOL);
    break;
  case TU_NAME:
    off = snprintf (buf, len, "want");
    for (const struct cfq_name *n = tunable_names (t); n->name && off < len;
         n++)
      off += snprintf (buf + off, len - off, "%s %s", n == tunable_names (t)
                       ? "" : n[1].name ? "," : " or", n->name);
    break;
  case TU_COUNT:
    snprintf (buf, len, "not a number");
    break;
  }
  return buf;
}

int
cfq_mode_parse (const char *str, uint64_t *val)
{
  return cfq_tunable_parse ("mode", str, val);
}

const char *
cfq_mode_name (uint64_t val)
{
  for (const struct cfq_name *n = cfq_mode_names; n->name; n++)
    if (n->val == val)
      return n->name;
  return "?";
}

/* Profiles: the tunables in which our defaults differ from CFQ 2.6.37's.
 * The table's default column is the default profile; the kernel profile
 * puts back CFQ's behaviour where ours departs from it by default, for
 * the seeds' experiments and for comparing.  Setting the profile sets
 * these (and only these) to its values; the config applies it before any
 * other tunable, so an explicit value still wins.
 */
static const struct { int t; uint64_t kernel; } cfq_profile_diff[] = {
  { T_COST, 0 },
  { T_GROUP_ASYNC, 0 },
  { T_GROUP_LAG, 0 },
};

void
cfq_profile_apply (struct cfqd *cfqd, uint64_t profile)
{
  for (size_t i = 0; i < sizeof cfq_profile_diff / sizeof cfq_profile_diff[0];
       i++) {
    int t = cfq_profile_diff[i].t;

    cfqd->tun[t] = profile == CFQ_PROFILE_KERNEL ? cfq_profile_diff[i].kernel
      : cfq_tunables[t].def;
  }
}

uint64_t
cfq_profile_value (const struct cfq_tunable *t, uint64_t profile)
{
  if (profile == CFQ_PROFILE_KERNEL)
    for (size_t i = 0;
         i < sizeof cfq_profile_diff / sizeof cfq_profile_diff[0]; i++)
      if (&cfq_tunables[cfq_profile_diff[i].t] == t)
        return cfq_profile_diff[i].kernel;
  return t->def;
}

/* Until the mechanism says what the device's requests cost (set_cost),
 * the generic disk or flash of the device model, by rotational.
 */
void
cfq_cost_default (struct cfqd *cfqd)
{
  struct cost_params p;
  bool rot = t_get (cfqd, T_ROTATIONAL);

  if (cfqd->cost_given)
    return;
  cost_params_default (&p, rot);
  cost_model_init (&cfqd->cost, &p, rot ? "default hdd" : "default ssd");
}

/* The one setter: validates against the table, never clamps silently. */
int
cfq_set (struct sched *s, const char *key, uint64_t val)
{
  struct cfqd *cfqd = CFQD (s);
  const struct cfq_tunable *t = cfq_tunable_lookup (key);
  int r = cfq_tunable_check (key, val);

  if (r < 0)
    return r;
  cfqd->tun[t - cfq_tunables] = val;
  if (t == &cfq_tunables[T_PROFILE])
    cfq_profile_apply (cfqd, val);
  if (t == &cfq_tunables[T_ROTATIONAL]) {
    qos_sched_set_slice (&cfqd->qos, val ? QOS_SLICE_ROT : QOS_SLICE_NONROT);
    cfq_cost_default (cfqd);
  }
  if (t == &cfq_tunables[T_HW_TAG]) {
    /* Forced, or detection from scratch (CFQ's initial -1). */
    cfqd->hw_tag = val == 2 ? -1 : (int) val;
    cfqd->hw_tag_samples = 0;
  }
  return 0;
}

int
cfq_get (struct sched *s, const char *key, uint64_t *val)
{
  struct cfqd *cfqd = CFQD (s);
  const struct cfq_tunable *t = cfq_tunable_lookup (key);

  if (!t)
    return -ENOENT;
  *val = cfqd->tun[t - cfq_tunables];
  return 0;
}
