/* ctlcmd.c: what the control socket's commands do (control.c carries
 * the lines, cfqctl sends them).
 *
 *   stats | stats flat         the statistics (stats.c)
 *   metrics                    the same in Prometheus's text format
 *   get [KEY]                  scheduler, queue_depth, CFQ's tunables
 *   set KEY VALUE              queue_depth, or a CFQ tunable, live
 *   weight GROUP N             a group's weight, live
 *   reset                      start every iostat again
 *
 * A command runs between two dispatch decisions, so a change takes
 * effect at the next one.  Answers end in a newline; an error starts
 * with "error: " and says what and why.
 *
 * Threads: the dispatcher's loop, under the engine lock.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq.h"
#include "ctlcmd.h"
#include "stats.h"
#include "units.h"

static void
reset_one (struct iostat *io, uint64_t now)
{
  iostat_init (io, now);
}

static void
get_one (struct tenants *tn, struct strbuf *o, const char *key)
{
  char buf[64];
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
    strbuf_printf (o, "error: %s: %s\n", key,
                   err == -ENOENT ? "unknown key" : strerror (-err));
    return;
  }
  strbuf_printf (o, "%s=%s\n", key,
                 cfq_tunable_format (cfq_tunable_lookup (key), v, buf,
                                     sizeof buf));
}

static void
cmd_set (struct tenants *tn, struct strbuf *o, const char *key,
         const char *val)
{
  const struct cfq_tunable *t;
  char why[160];
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
  if (!tn_is_cfq (tn) || !(t = cfq_tunable_lookup (key))) {
    strbuf_printf (o, "error: %s: unknown key\n", key);
    return;
  }
  /* The config file's parser and words. */
  err = cfq_tunable_parse (key, val, &v);
  if (err == 0)
    err = sched_set (tn->s, key, v);
  if (err == -EINVAL || err == -ERANGE)
    strbuf_printf (o, "error: %s=%s: %s\n", key, val,
                   cfq_tunable_explain (t, val, err, why, sizeof why));
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

void
ctlcmd_run (void *opaque, const char *line, struct strbuf *o)
{
  struct tenants *tn = opaque;
  char verb[32] = "", a[256] = "", b[256] = "", extra[8] = "";
  int n = sscanf (line, "%31s %255s %255s %7s", verb, a, b, extra);

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
    if (tn_is_cfq (tn))
      for (size_t i = 0; i < cfq_nr_tunables; i++)
        get_one (tn, o, cfq_tunables[i].name);
  }
  else if (strcmp (verb, "set") == 0 && n == 3)
    cmd_set (tn, o, a, b);
  else if (strcmp (verb, "weight") == 0 && n == 3)
    cmd_weight (tn, o, a, b);
  else if (strcmp (verb, "reset") == 0 && n == 1) {
    tn_each_iostat (tn, reset_one, engine_now ());
    strbuf_printf (o, "ok\n");
  }
  else if (strcmp (verb, "help") == 0)
    strbuf_printf (o, "stats | stats flat | metrics | get [KEY] | "
                   "set KEY VALUE | weight GROUP N | reset\n");
  else
    strbuf_printf (o, "error: unknown command '%s' (stats, stats flat, "
                   "metrics, get, set, weight, reset)\n", line);
}
