/* ctlcmd.c: what the control socket's commands do (control.c carries
 * the lines, cfqctl sends them).
 *
 *   stats | stats flat         the statistics (statsout.c)
 *   metrics                    the same in Prometheus's text format
 *   get [KEY]                  scheduler, queue_depth, the policy's tunables
 *   set KEY VALUE              queue_depth, or a tunable of the policy, live
 *   weight GROUP N             a group's weight, live
 *   qos GROUP [KEY VALUE]      a group's caps and reservation (qos.h's
 *                              keys, the config's units; 0 removes one)
 *                              and its latency target and boost
 *                              (latency.h's keys), live; without KEY
 *                              VALUE, what it has
 *   cost                       the cost model: figures, where they came
 *                              from, the online correction (costmodel.c)
 *   reset                      start every iostat again
 *
 * A command runs between two dispatch decisions, so a change takes
 * effect at the next one.  Answers end in a newline; an error starts
 * with "error: " and says what and why.  A command is UTF-8 text whose
 * only control character is the tab: anything else is refused before it
 * is parsed, so what an error answer quotes from it is always printable
 * text (the escaped form of the refused line is quoted).
 *
 * Threads: the dispatcher's loop, under the engine lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel.h"
#include "ctlcmd.h"
#include "latency.h"
#include "qos.h"
#include "statsout.h"
#include "suggest.h"
#include "units.h"
#include "utf8.h"

static void
reset_one (struct iostat *io, uint64_t now)
{
  iostat_reset (io, now);
}

/* " (did you mean 'slice_idle'?)" for KEY, a mistyped get or set key. */
static const char *
key_hint (const char *key, char *buf, size_t len)
{
  struct suggest s;

  suggest_init (&s, key);
  suggest_add (&s, "scheduler");
  cfg_value_suggest (&s);
  return suggest_hint (&s, buf, len);
}

static void
get_one (struct tenants *tn, struct strbuf *o, const char *key)
{
  char buf[64], hint[256];
  uint64_t v;
  int err;

  if (strcmp (key, "queue_depth") == 0) {
    strbuf_printf (o, "queue_depth=%u\n", engine_depth (tn->e));
    return;
  }
  if (strcmp (key, "scheduler") == 0) {
    strbuf_printf (o, "scheduler=%s\n", tn->sched_name);
    return;
  }
  err = sched_get (tn->s, key, &v);
  if (err) {
    if (err == -ENOENT)
      strbuf_printf (o, "error: %s: unknown key%s\n", key,
                     key_hint (key, hint, sizeof hint));
    else
      strbuf_printf (o, "error: %s: %s\n", key, strerror (-err));
    return;
  }
  strbuf_printf (o, "%s=%s\n", key,
                 sched_tunable_format (tn->s, key, v, buf, sizeof buf));
}

static void
cmd_set (struct tenants *tn, struct strbuf *o, const char *key,
         const char *val)
{
  char why[160], hint[256];
  uint64_t v;
  int err;

  if (strcmp (key, "queue_depth") == 0) {
    if (cfg_parse_value (key, val, &v, why, sizeof why) < 0)
      strbuf_printf (o, "error: queue_depth=%s: %s\n", val, why);
    else if ((err = engine_set_depth (tn->e, (unsigned) v)) != 0)
      strbuf_printf (o, "error: queue_depth=%s: %s\n", val, strerror (-err));
    else
      strbuf_printf (o, "ok\n");
    return;
  }
  if (strcmp (key, "scheduler") == 0) {
    strbuf_printf (o, "error: scheduler: cannot be changed while running\n");
    return;
  }
  /* The policy's tunables, in the config file's grammar and words. */
  err = sched_tunable_parse (tn->s, key, val, &v);
  if (err == -ENOENT) {
    strbuf_printf (o, "error: %s: unknown key%s\n", key,
                   sched_tunable_name (tn->s, 0)
                   ? key_hint (key, hint, sizeof hint) : "");
    return;
  }
  if (err == 0)
    err = sched_set (tn->s, key, v);
  if (err == -EINVAL || err == -ERANGE)
    strbuf_printf (o, "error: %s=%s: %s\n", key, val,
                   sched_tunable_explain (tn->s, key, val, err, why,
                                          sizeof why));
  else if (err)
    strbuf_printf (o, "error: %s=%s: %s\n", key, val, strerror (-err));
  else
    strbuf_printf (o, "ok\n");
}

static void
cmd_weight (struct tenants *tn, struct strbuf *o, const char *name,
            const char *val)
{
  uint64_t w;
  int err;

  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    struct tn_group *g = &tn->groups[i];

    if (strcmp (g->cg->name, name) != 0)
      continue;
    err = units_parse_count (val, &w);
    if (err == -EINVAL) {
      strbuf_printf (o, "error: weight %s: not a number (want %d..%d)\n",
                     val, SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
      return;
    }
    if (err || w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX) {
      strbuf_printf (o, "error: weight %s: out of range (%d..%d)\n", val,
                     SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
      return;
    }
    err = sched_group_set_weight (tn->s, g->sg, (unsigned) w);
    if (err) {
      strbuf_printf (o, "error: weight %s %s: %s\n", name, val,
                     strerror (-err));
      return;
    }
    g->weight = (unsigned) w;
    strbuf_printf (o, "ok\n");
    return;
  }
  strbuf_printf (o, "error: unknown group '%s'\n", name);
}

static struct tn_group *
find_group (struct tenants *tn, const char *name)
{
  for (size_t i = 0; i < tn->m->nr_groups; i++)
    if (strcmp (tn->groups[i].cg->name, name) == 0)
      return &tn->groups[i];
  return NULL;
}

/* "qos GROUP": its settings as KEY=VALUE in the config's syntax. */
static void
show_qos (struct strbuf *o, const struct tn_group *g)
{
  char b[32];
  bool any = false;

  for (size_t i = 0; i < qos_nr_keys; i++) {
    uint64_t v = qos_conf_get (&g->qos, &qos_keys[i]);
    if (v) {
      strbuf_printf (o, "%s%s=%s", any ? " " : "", qos_keys[i].name,
                     cfg_format_qos (&qos_keys[i], v, b, sizeof b));
      any = true;
    }
  }
  for (size_t i = 0; i < lat_nr_keys; i++) {
    const struct lat_key *k = &lat_keys[i];
    uint64_t v = lat_conf_get (&g->lat, k);
    /* The target's keys beside a target; boost when not its default. */
    bool show = k->unit == LAT_U_BOOL ? v != LAT_BOOST_DEFAULT
      : g->lat.target != 0;
    if (show) {
      strbuf_printf (o, "%s%s=%s", any ? " " : "", k->name,
                     lat_format (k, v, b, sizeof b));
      any = true;
    }
  }
  strbuf_printf (o, "%s\n", any ? "" : "none");
}

/* "qos GROUP KEY VALUE" with a latency key: parsed as the config file
 * does, then the group's latency settings replaced.
 */
static void
cmd_latency (struct tenants *tn, struct strbuf *o, struct tn_group *g,
             const char *key, const char *val)
{
  struct lat_conf c = g->lat;
  char why[200];
  int err;

  if (cfg_parse_latency (key, val, &c, why, sizeof why) < 0) {
    strbuf_printf (o, "error: qos %s %s %s: %s\n", g->cg->name, key, val,
                   why);
    return;
  }
  err = sched_group_set_latency (tn->s, g->sg, &c);
  if (err == -ENOTSUP) {
    strbuf_printf (o, "error: qos: scheduler %s has no latency targets or"
                   " boost\n", tn->sched_name);
    return;
  }
  if (err) {
    strbuf_printf (o, "error: qos %s %s %s: %s\n", g->cg->name, key, val,
                   strerror (-err));
    return;
  }
  g->lat = c;
  strbuf_printf (o, "ok\n");
}

/* "qos GROUP KEY VALUE": parsed and checked as the config file does, then
 * the whole set replaces the group's.
 */
static void
cmd_qos (struct tenants *tn, struct strbuf *o, const char *name,
         const char *key, const char *val)
{
  struct tn_group *g = find_group (tn, name);
  const struct qos_key *k, *other;
  struct qos_conf c;
  char why[200];
  int err;

  if (!g) {
    strbuf_printf (o, "error: unknown group '%s'\n", name);
    return;
  }
  if (!key) {
    show_qos (o, g);
    return;
  }
  if (lat_key_lookup (key)) {
    cmd_latency (tn, o, g, key, val);
    return;
  }
  c = g->qos;
  err = cfg_parse_qos (key, val, &c, why, sizeof why);
  if (err == -ENOENT) {
    struct suggest s;

    suggest_init (&s, key);
    for (size_t i = 0; i < qos_nr_keys; i++)
      suggest_add (&s, qos_keys[i].name);
    for (size_t i = 0; i < lat_nr_keys; i++)
      suggest_add (&s, lat_keys[i].name);
    if (suggest_best (&s))
      strbuf_printf (o, "error: qos %s: unknown key%s\n", key,
                     suggest_hint (&s, why, sizeof why));
    else
      strbuf_printf (o, "error: qos %s: unknown key (iops_max,"
                     " read_iops_max, write_iops_max, bps_max, read_bps_max,"
                     " write_bps_max, each with _burst and _burst_seconds;"
                     " iops_min, bps_min; latency_target,"
                     " latency_percentile, latency_mode, boost)\n", key);
    return;
  }
  if (err) {
    strbuf_printf (o, "error: qos %s %s %s: %s\n", name, key, val, why);
    return;
  }
  if (qos_conf_check (&c, why, sizeof why, &k, &other) < 0) {
    strbuf_printf (o, "error: qos %s: %s%s%s: %s\n", name, k->name,
                   other ? ", " : "", other ? other->name : "", why);
    return;
  }
  err = sched_group_set_qos (tn->s, g->sg, &c);
  if (err == -ENOTSUP) {
    strbuf_printf (o, "error: qos: scheduler %s has no caps or"
                   " reservations\n", tn->sched_name);
    return;
  }
  if (err) {
    strbuf_printf (o, "error: qos %s %s %s: %s\n", name, key, val,
                   strerror (-err));
    return;
  }
  g->qos = c;
  strbuf_printf (o, "ok\n");
}

/* Is line text an answer may quote: valid UTF-8, no control character
 * but the tab?
 */
static bool
is_text (const char *line)
{
  size_t len = strlen (line), i = 0;

  while (i < len) {
    i += utf8_check (line + i, len - i, true);
    if (i < len && line[i] != '\t')
      return false;
    if (i < len)
      i++;
  }
  return true;
}

void
ctlcmd_run (void *opaque, const char *line, struct strbuf *o)
{
  struct tenants *tn = opaque;
  char verb[32] = "", a[256] = "", b[256] = "", extra[8] = "";
  int n;

  if (!is_text (line)) {
    char esc[128];

    strbuf_printf (o, "error: a command is UTF-8 text without control "
                   "characters (but tabs): %s\n",
                   utf8_escape (line, esc, sizeof esc));
    return;
  }
  n = sscanf (line, "%31s %255s %255s %7s", verb, a, b, extra);

  if (n <= 0) {
    strbuf_printf (o, "error: empty command\n");
    return;
  }
  if (strcmp (verb, "stats") == 0 && n == 1)
    stats_json (tn, o);
  else if (strcmp (verb, "stats") == 0 && n == 2 && strcmp (a, "flat") == 0)
    stats_flat (tn, o);
  else if (strcmp (verb, "metrics") == 0 && n == 1)
    stats_prometheus (tn, o);
  else if (strcmp (verb, "get") == 0 && n == 2)
    get_one (tn, o, a);
  else if (strcmp (verb, "get") == 0 && n == 1) {
    get_one (tn, o, "scheduler");
    get_one (tn, o, "queue_depth");
    for (size_t i = 0; sched_tunable_name (tn->s, i); i++)
      get_one (tn, o, sched_tunable_name (tn->s, i));
  }
  else if (strcmp (verb, "set") == 0 && n == 3)
    cmd_set (tn, o, a, b);
  else if (strcmp (verb, "weight") == 0 && n == 3)
    cmd_weight (tn, o, a, b);
  else if (strcmp (verb, "qos") == 0 && n == 2)
    cmd_qos (tn, o, a, NULL, NULL);
  else if (strcmp (verb, "qos") == 0 && n == 4) {
    /* The value again, whole (extra[] is short), and nothing after it. */
    char v[64] = "", more[8];
    if (sscanf (line, "%*s %*s %*s %63s %7s", v, more) == 1
        && strlen (v) < 63)
      cmd_qos (tn, o, a, b, v);
    else
      strbuf_printf (o, "error: qos GROUP KEY VALUE: one value, at most 62"
                     " characters\n");
  }
  else if (strcmp (verb, "cost") == 0 && n == 1)
    cm_report (tn, o);
  else if (strcmp (verb, "reset") == 0 && n == 1) {
    tn_each_iostat (tn, reset_one, engine_now ());
    strbuf_printf (o, "ok\n");
  }
  else if (strcmp (verb, "help") == 0)
    strbuf_printf (o, "stats | stats flat | metrics | get [KEY] | "
                   "set KEY VALUE | weight GROUP N | qos GROUP [KEY VALUE] | "
                   "cost | reset\n");
  else
    strbuf_printf (o, "error: unknown command '%s' (stats, stats flat, "
                   "metrics, get, set, weight, qos, cost, reset)\n", line);
}
