/* apply.c: from a validated configuration model to a live scheduler.
 *
 * The server (plugin/tenants.c, on its dispatcher thread) and the simulator
 * (tools/cfqsim.c) both turn a struct cfg_model into scheduler state; this
 * is the one place that does it, so that a scenario set up in cfqsim is the
 * scheduler the server would run:
 *
 *   1. the device's nature: whether it seeks (the kernel's
 *      blk_queue_nonrot), which the mechanism learns from sysfs or from the
 *      device model.  The model's own "rotational" tunable, if given, wins.
 *   2. the tunables the model carries (only those the config or command line
 *      gave; the policy keeps its defaults for the rest; none with fifo).
 *   3. one scheduler group per [group], with its weight, caps and
 *      reservation (include/qos.h).  Class and level are properties of the
 *      queues (connections, tenants) created later.
 *
 * The order matters only in that the tunables come after the device's
 * nature, so that a configured "rotational" overrides the detected one.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "qos.h"
#include "sched.h"

int
cfg_apply (const struct cfg_model *m, struct sched *s, int rotational,
           struct sched_group **groups, char *why, size_t len)
{
  char val[64];
  int err;

  if (rotational >= 0) {
    err = sched_set (s, "rotational", (uint64_t) rotational);
    if (err < 0 && err != -ENOENT) {    /* -ENOENT: the policy cannot use it */
      snprintf (why, len, "rotational=%d: %s", rotational, strerror (-err));
      return err;
    }
  }
  for (size_t i = 0; i < m->nr_tunables; i++) {
    const struct cfg_tunable *t = &m->tunables[i];
    err = sched_set (s, t->name, t->val);
    if (err < 0) {
      const struct cfq_tunable *d = cfq_tunable_lookup (t->name);
      if (d)
        cfq_tunable_format (d, t->val, val, sizeof val);
      else
        snprintf (val, sizeof val, "%llu", (unsigned long long) t->val);
      snprintf (why, len, "scheduler %s: %s=%s: %s", s->ops->name, t->name,
                val, err == -ENOENT ? "no such tunable" : strerror (-err));
      return err;
    }
  }
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    groups[i] = sched_group_new (s, g->name, g->weight);
    if (!groups[i]) {
      snprintf (why, len, "group %s: cannot create it (weight %u)", g->name,
                g->weight);
      return -ENOMEM;
    }
    if (!qos_conf_empty (&g->qos)) {
      err = sched_group_set_qos (s, groups[i], &g->qos);
      if (err < 0) {
        snprintf (why, len, "group %s: caps and reservation: %s", g->name,
                  err == -ENOTSUP ? "the scheduler has none"
                  : strerror (-err));
        return err;
      }
    }
  }
  return 0;
}
