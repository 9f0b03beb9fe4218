/* sched.c: the rule that says which requests are sync, the names of the
 * classes, and a policy's tunables by name (sched_tunable_*, plain
 * numbers for a policy without them).  The table of policies by name is
 * sched-lookup.c's: it sits above the policies, which call this file.
 *
 * Sync or async.  CFQ serves sync requests (someone is waiting for them)
 * from the submitter's own queue, with idling and preemption rights, and
 * async ones (page cache writeback) from a shared queue that waits while
 * sync requests are in flight, so that a streaming writer cannot take the
 * disk from readers.  Linux learns which is which from the submitter:
 * reads and O_DIRECT or O_SYNC writes are sync, writeback is not.  NBD
 * carries no such flag, so the rule is ours:
 *
 * - reads, flushes and FUA writes are sync;
 * - a plain write, trim or zero the mechanism leaves to the rule (RQ_AUTO:
 *   an export with writes=auto, the default) is sync if its connection
 *   read, flushed or wrote FUA within the last second, and async
 *   otherwise.  A client that waits for its disk (a database, a
 *   filesystem with a journal, fs_mark, a VM's mixed I/O) keeps all its
 *   requests in its one queue, as the O_DIRECT writes the server makes of
 *   them would be in Linux; a client that only streams writes and never
 *   waits for them (a copy, a backup, writeback through the client's page
 *   cache) is CFQ's writeback and yields to readers.
 *
 * writes=async and writes=sync on the export override the rule.  The
 * candidates, measured (doc/design.md): "always async" left four
 * clients each writing with a flush after every write at 0.14x FIFO's
 * IOPS on the real disk (each flush idled for a write in the async queue)
 * and one client mixing reads and writes at 0.58x on the SSD model (its
 * writes waited while its own reads were in flight); "always sync" lost
 * CFQ's protection of a reader beside a streaming writer (the reader's
 * p99 at 1.07x FIFO's instead of below it); "sync while the client
 * flushes" still had the mixed client at 0.58x.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sched.h"

void
sched_classify (struct sched_wstate *w, struct rq *rq, uint64_t now)
{
  if (rq->op == RQ_READ || rq->op == RQ_FLUSH || (rq->flags & RQ_FUA)) {
    w->waits = true;
    w->last_wait = now;
  }
  if (!(rq->flags & RQ_AUTO))
    return;
  if (w->waits && now - w->last_wait <= SCHED_WAIT_WINDOW)
    rq->flags |= RQ_SYNC;
  else
    rq->flags &= ~RQ_SYNC;
}

const char *const sched_class_names[SCHED_CLASS_IDLE + 1] = {
  [SCHED_CLASS_RT] = "rt", [SCHED_CLASS_BE] = "be",
  [SCHED_CLASS_IDLE] = "idle", [0] = "",
};

const char *
sched_class_name (unsigned c)
{
  return c <= SCHED_CLASS_IDLE ? sched_class_names[c] : "";
}

int
sched_class_parse (const char *name)
{
  for (int c = SCHED_CLASS_RT; c <= SCHED_CLASS_IDLE; c++)
    if (strcmp (name, sched_class_names[c]) == 0)
      return c;
  return -1;
}

const char *
sched_tunable_name (struct sched *s, size_t i)
{
  return s->ops->tunables ? s->ops->tunables->name (i) : NULL;
}

int
sched_tunable_parse (struct sched *s, const char *key, const char *text,
                     uint64_t *val)
{
  return s->ops->tunables ? s->ops->tunables->parse (key, text, val)
                          : -ENOENT;
}

char *
sched_tunable_format (struct sched *s, const char *key, uint64_t val,
                      char *buf, size_t len)
{
  if (s->ops->tunables)
    return s->ops->tunables->format (key, val, buf, len);
  snprintf (buf, len, "%" PRIu64, val);
  return buf;
}

const char *
sched_tunable_explain (struct sched *s, const char *key, const char *text,
                       int err, char *buf, size_t len)
{
  if (s->ops->tunables)
    return s->ops->tunables->explain (key, text, err, buf, len);
  snprintf (buf, len, "%s", strerror (-err));
  return buf;
}
