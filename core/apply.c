/* apply.c: from a validated configuration model to a live scheduler.
 *
 * The server (plugin/tenants.c, on its dispatcher thread) and the simulator
 * (tools/cfqsim-scenario.c) both turn a struct cfg_model into scheduler state; this
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
 *
 * cache = page.  Then the device the scheduler dispatches to is the page
 * cache in front of the disk: a hit completes in microseconds, inside the
 * submission, and a miss reaches the disk through readahead, which turns a
 * stream into large reads the scheduler never sees.  What CFQ learns on a
 * disk goes wrong there:
 *  - idling: an NBD client's next request comes a network round trip
 *    (50-100 us) after the reply, tens of times a hit's service time, so
 *    an idle window holds the "device" idle for a round trip per request
 *    while other tenants wait: one tenant at a time, every turn spent
 *    mostly waiting.  CFQ does not idle for a queue on a device that does
 *    not seek and queues (2.6.37's SSD rule), and that is what a page
 *    cache is;
 *  - charging by time: a slice's time is then mostly the clients' think
 *    time, not service, so groups are charged by requests (mode=auto on a
 *    non-rotational device: iops_mode in core/cfq.c);
 *  - hw_tag: CFQ learns whether the device queues from how many requests
 *    it holds at once under load; hits complete as fast as they are
 *    submitted, so a lightly loaded page cache would look like a device
 *    that does not queue (hw_tag 0), which turns queue idling back on.
 *    It queues without limit: hw_tag is pinned to 1.
 * So without a device model (which, when given, is what the scheduler
 * sees) cache = page tells the policy rotational 0 and hw_tag 1.  Both
 * are tunables: a configured value still wins.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "config.h"
#include "latency.h"
#include "qos.h"
#include "sched.h"

int
cfg_rotational (const struct cfg_model *m, int detected)
{
  if (m->dev.cache == CFG_CACHE_PAGE && !m->dev.emulate)
    return 0;
  return detected;
}

int
cfg_apply (const struct cfg_model *m, struct sched *s, int rotational,
           struct sched_group **groups, char *why, size_t len)
{
  char val[64];
  int err;

  rotational = cfg_rotational (m, rotational);
  if (m->dev.cache == CFG_CACHE_PAGE && !m->dev.emulate) {
    err = sched_set (s, "hw_tag", 1);
    if (err < 0 && err != -ENOENT) {
      snprintf (why, len, "hw_tag=1: %s", strerror (-err));
      return err;
    }
  }
  if (rotational >= 0) {
    err = sched_set (s, "rotational", (uint64_t) rotational);
    if (err < 0 && err != -ENOENT) {    /* -ENOENT: the policy cannot use it */
      snprintf (why, len, "rotational=%d: %s", rotational, strerror (-err));
      return err;
    }
  }
  /* A profile first: it sets the tunables it decides, and those the
   * config names after it still win, wherever they stand in the file.
   */
  for (size_t pass = 0; pass < 2; pass++)
  for (size_t i = 0; i < m->nr_tunables; i++) {
    const struct cfg_tunable *t = &m->tunables[i];
    if ((strcmp (t->name, "profile") == 0) != (pass == 0))
      continue;
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
    if (!lat_conf_default (&g->lat)) {
      err = sched_group_set_latency (s, groups[i], &g->lat);
      if (err < 0) {
        snprintf (why, len, "group %s: latency target and boost: %s",
                  g->name, err == -ENOTSUP ? "the scheduler has none"
                  : strerror (-err));
        return err;
      }
    }
  }
  return 0;
}
