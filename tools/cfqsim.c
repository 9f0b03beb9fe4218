/* cfqsim: a discrete-event simulator of tenants sharing one device.
 *
 * What it is for: to see what a scheduling policy (core/fifo.c,
 * core/cfq.c) does to throughput, fairness and latency without a disk, a
 * server or a clock.  Jobs (fio-like: a connection submitting reads or
 * writes with a depth, a think time, a pattern) insert requests into the
 * policy through include/sched.h exactly as the plugin's dispatcher does;
 * dispatched requests go to a device model (include/devmodel.h) that says
 * when they complete.  Time is virtual: an event heap ordered by (time,
 * sequence number) drives everything, so a run of minutes of device time
 * takes a fraction of a second, and the same job file and seed always give
 * byte-identical output.
 *
 * The loop (per distinct event time, like one pass of the dispatcher):
 *
 *   pop the events due now (those that existed when the pass began):
 *                             arrival   -> sched_insert (a job's slot)
 *                             completion-> sched_completed, then the job's
 *                                          slot thinks, resubmits, fsyncs
 *                             timer     -> (nothing: the kick below runs)
 *   kick: while fewer than queue_depth requests are at the device,
 *         rq = sched_dispatch(now, &next); submit it to the device model,
 *         which returns its completion time (a future event).
 *         When dispatch returns NULL, "next" is the policy's timer (an idle
 *         window or slice end); it replaces any earlier one.
 *
 * Watchdog: if the policy has work, nothing is at the device, it dispatched
 * nothing and asked for no timer, nothing will ever happen again: that is a
 * scheduler bug (a stall) and cfqsim stops with an error instead of
 * reporting numbers from a hung device.
 *
 * Job file: see the README section "The simulator and device models" and
 * the files tests/sim/NAME.job.  Errors are reported as FILE:LINE: message.
 * [group] takes the server's caps and reservations (iops_max, bps_min ...:
 * include/qos.h), parsed by the config's own cfg_parse_qos.
 *
 * --window TIME adds, per job and per group, the requests and bytes that
 * completed in each window of that width: what a cap or a reservation
 * gives second by second, not just on average.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq.h"
#include "config.h"
#include "devmodel.h"
#include "qos.h"
#include "rng.h"
#include "sched.h"
#include "hist.h"
#include "stats.h"

#define NAME_MAX_LEN 64
#define MAX_GROUPS 256
#define MAX_JOBS 4096
#define MAX_TUNABLES 64
/* Jobs without a group run in the policy's root group (queue_new with a
 * NULL group), which CFQ weighs as 1000 against the tenants' groups.
 */
#define ROOT_GROUP "root"
#define ROOT_WEIGHT 1000

/* ---- configuration --------------------------------------------------- */

struct kv {                     /* a deferred key=value with its origin */
  char key[NAME_MAX_LEN];
  char val[128];
  char where[300];              /* "FILE:LINE" or "--set" */
};

struct sim_group {
  char name[NAME_MAX_LEN];
  unsigned weight;              /* 100..1000 */
  struct qos_conf qos;          /* caps and reservation; all 0: none */
  char where[300];              /* where declared or first used */
  bool root;                    /* the policy's root group: sg NULL */
  struct sched_group *sg;
  unsigned njobs;               /* jobs in the run */
  uint64_t bytes, ios;          /* completed data requests within duration */
  struct hist lat;              /* ns: latency of its jobs' data requests */
  uint64_t *win_ios, *win_bytes; /* per window (--window), summed at report */
};

struct job;

struct simrq {                  /* one request slot of a job */
  struct rq rq;
  struct job *j;
  uint64_t t_submit;            /* ns: inserted into the scheduler */
  struct simrq *next_free;      /* on the job's free list */
};

struct job {
  char name[NAME_MAX_LEN];
  char where[300];              /* "FILE:LINE" of [job NAME] */
  int group;                    /* index into groups[] */
  enum sched_class cls;
  unsigned level;               /* 0..7 */
  bool write;                   /* rw=write */
  int sync;                     /* -1: default (reads sync, writes async) */
  bool rand;                    /* pattern=rand */
  uint32_t bs;                  /* bytes per request */
  uint64_t stride;              /* bytes between sequential requests; 0 = bs */
  unsigned depth;               /* outstanding data requests */
  uint64_t think;               /* ns from a completion to the next submit */
  unsigned fsync;               /* flush after every N writes; 0 never */
  uint64_t start, stop;         /* ns: active window (stop 0 = end) */
  uint64_t offset, size;        /* bytes: region (size 0 = to the end) */
  bool meta;                    /* RQ_META on every request */

  /* run state */
  struct sched_queue *q;
  struct simrq *slots;          /* depth + 1 (the flush) */
  struct simrq *free;
  unsigned inflight;            /* data requests submitted, not completed */
  unsigned parked;              /* slots waiting for an fsync to finish */
  unsigned writes;              /* writes since the last flush */
  bool fsync_wait;              /* no new data until the flush is done */
  bool flush_out;               /* the flush is submitted */
  uint64_t next_off;            /* bytes: next sequential offset */
  uint64_t rng;                 /* xorshift64* state */

  /* results, counted for completions at or before the end */
  uint64_t bytes, ios, flushes;
  struct hist lat;              /* ns: data request latency, insert->done */
  uint64_t *win_ios, *win_bytes; /* per window of --window, by completion */
};

static struct {
  /* [global] */
  uint64_t duration;            /* ns */
  uint64_t seed;
  unsigned queue_depth;         /* max requests at the device */
  /* [device] */
  char devkind[16];
  struct kv devparams[64];
  unsigned ndevparams;
  bool devseed;                 /* seed given explicitly for the device */
  /* [sched] */
  char policy[NAME_MAX_LEN];
  struct kv tunables[MAX_TUNABLES];
  unsigned ntunables;

  struct sim_group groups[MAX_GROUPS];
  unsigned ngroups;
  struct job *jobs[MAX_JOBS];
  unsigned njobs;

  bool json;
  const char *only;             /* comma-separated job names, or NULL */
  uint64_t window;              /* ns: --window width; 0 = no windows */
  bool trace;                   /* --trace: the policy's decisions */
  unsigned nwin;                /* windows in the run */
} cfg = {
  .duration = 10 * NSEC_PER_SEC,
  .seed = 1,
  .queue_depth = 32,
  .devkind = "hdd",
  .policy = "fifo",
};

static const char *progname = "cfqsim";

static void __attribute__ ((noreturn, format (printf, 2, 3)))
die_at (const char *where, const char *fmt, ...)
{
  va_list ap;

  if (where)
    fprintf (stderr, "%s: ", where);
  else
    fprintf (stderr, "%s: ", progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

static void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n, size);

  if (!p)
    die_at (NULL, "out of memory");
  return p;
}

/* Tunables whose bare numbers are milliseconds, as in CFQ's sysfs. */
static bool
tunable_is_ms (const char *k)
{
  static const char *const ms[] = {
    "slice_idle", "group_idle", "slice_sync", "slice_async",
    "fifo_expire_sync", "fifo_expire_async", "target_latency", NULL
  };
  for (int i = 0; ms[i]; i++)
    if (strcmp (k, ms[i]) == 0)
      return true;
  return false;
}

static int
find_group (const char *name)
{
  for (unsigned i = 0; i < cfg.ngroups; i++)
    if (strcmp (cfg.groups[i].name, name) == 0)
      return (int) i;
  return -1;
}

static int
get_group (const char *name, const char *where)
{
  int g = find_group (name);

  if (g >= 0)
    return g;
  if (cfg.ngroups == MAX_GROUPS)
    die_at (where, "too many groups (max %d)", MAX_GROUPS);
  g = (int) cfg.ngroups++;
  snprintf (cfg.groups[g].name, NAME_MAX_LEN, "%s", name);
  snprintf (cfg.groups[g].where, sizeof cfg.groups[g].where, "%s", where);
  cfg.groups[g].weight = SCHED_WEIGHT_DEFAULT;
  if (strcmp (name, ROOT_GROUP) == 0) {
    cfg.groups[g].root = true;
    cfg.groups[g].weight = ROOT_WEIGHT;
  }
  return g;
}

static void
add_kv (struct kv *arr, unsigned *n, unsigned max, const char *k,
        const char *v, const char *where)
{
  if (*n == max)
    die_at (where, "too many settings");
  if (strlen (k) >= NAME_MAX_LEN || strlen (v) >= 128)
    die_at (where, "key or value too long");
  strcpy (arr[*n].key, k);
  strcpy (arr[*n].val, v);
  snprintf (arr[*n].where, sizeof arr[*n].where, "%s", where);
  (*n)++;
}

static uint64_t
need_time (const char *v, const char *where, const char *k)
{
  uint64_t ns;

  if (devmodel_parse_time (v, NSEC_PER_SEC, &ns) < 0)
    die_at (where, "%s: bad time '%s' (e.g. 500us, 8ms, 2s)", k, v);
  return ns;
}

static uint64_t
need_size (const char *v, const char *where, const char *k)
{
  uint64_t b;

  if (devmodel_parse_size (v, &b) < 0)
    die_at (where, "%s: bad size '%s' (e.g. 4k, 1M, 10G)", k, v);
  return b;
}

static uint64_t
need_uint (const char *v, const char *where, const char *k, uint64_t min,
           uint64_t max)
{
  char *e;
  uint64_t x;

  errno = 0;
  if (*v < '0' || *v > '9')
    die_at (where, "%s: bad number '%s'", k, v);
  x = strtoull (v, &e, 10);
  if (*e || errno)
    die_at (where, "%s: bad number '%s'", k, v);
  if (x < min || x > max)
    die_at (where, "%s: %" PRIu64 " out of range [%" PRIu64 ", %" PRIu64 "]",
            k, x, min, max);
  return x;
}

static bool
need_bool (const char *v, const char *where, const char *k)
{
  if (!strcmp (v, "1") || !strcmp (v, "yes") || !strcmp (v, "true") ||
      !strcmp (v, "on"))
    return true;
  if (!strcmp (v, "0") || !strcmp (v, "no") || !strcmp (v, "false") ||
      !strcmp (v, "off"))
    return false;
  die_at (where, "%s: expected 0 or 1, got '%s'", k, v);
}

static void
set_global (const char *k, const char *v, const char *where)
{
  if (!strcmp (k, "duration")) {
    cfg.duration = need_time (v, where, k);
    if (cfg.duration == 0)
      die_at (where, "duration must be > 0");
  }
  else if (!strcmp (k, "seed"))
    cfg.seed = need_uint (v, where, k, 0, UINT64_MAX);
  else if (!strcmp (k, "queue_depth"))
    cfg.queue_depth = need_uint (v, where, k, 1, 4096);
  else if (!strcmp (k, "device"))
    set_global ("model", v, where);
  else if (!strcmp (k, "model")) {
    if (strcmp (v, "hdd") && strcmp (v, "ssd"))
      die_at (where, "device model must be hdd or ssd, got '%s'", v);
    snprintf (cfg.devkind, sizeof cfg.devkind, "%s", v);
  }
  else if (!strcmp (k, "sched") || !strcmp (k, "policy")) {
    if (strlen (v) >= NAME_MAX_LEN)
      die_at (where, "scheduler name too long");
    strcpy (cfg.policy, v);
  }
  else
    die_at (where, "unknown global key '%s'", k);
}

static void
set_job (struct job *j, const char *k, const char *v, const char *where)
{
  if (!strcmp (k, "group"))
    j->group = get_group (v, where);
  else if (!strcmp (k, "class")) {
    if (!strcmp (v, "rt")) j->cls = SCHED_CLASS_RT;
    else if (!strcmp (v, "be")) j->cls = SCHED_CLASS_BE;
    else if (!strcmp (v, "idle")) j->cls = SCHED_CLASS_IDLE;
    else die_at (where, "class must be rt, be or idle, got '%s'", v);
  }
  else if (!strcmp (k, "level") || !strcmp (k, "prio"))
    j->level = need_uint (v, where, k, 0, SCHED_LEVELS - 1);
  else if (!strcmp (k, "rw")) {
    if (!strcmp (v, "read")) j->write = false;
    else if (!strcmp (v, "write")) j->write = true;
    else die_at (where, "rw must be read or write, got '%s'", v);
  }
  else if (!strcmp (k, "sync"))
    j->sync = need_bool (v, where, k);
  else if (!strcmp (k, "pattern")) {
    if (!strcmp (v, "seq")) j->rand = false;
    else if (!strcmp (v, "rand")) j->rand = true;
    else die_at (where, "pattern must be seq or rand, got '%s'", v);
  }
  else if (!strcmp (k, "bs")) {
    uint64_t b = need_size (v, where, k);
    if (b < 512 || b > (64 << 20) || b % 512)
      die_at (where, "bs must be a multiple of 512 in [512, 64M]");
    j->bs = (uint32_t) b;
  }
  else if (!strcmp (k, "stride"))
    j->stride = need_size (v, where, k);
  else if (!strcmp (k, "depth"))
    j->depth = need_uint (v, where, k, 1, 1024);
  else if (!strcmp (k, "think"))
    j->think = need_time (v, where, k);
  else if (!strcmp (k, "fsync"))
    j->fsync = need_uint (v, where, k, 0, 1u << 30);
  else if (!strcmp (k, "start"))
    j->start = need_time (v, where, k);
  else if (!strcmp (k, "stop"))
    j->stop = need_time (v, where, k);
  else if (!strcmp (k, "offset"))
    j->offset = need_size (v, where, k);
  else if (!strcmp (k, "size"))
    j->size = need_size (v, where, k);
  else if (!strcmp (k, "meta"))
    j->meta = need_bool (v, where, k);
  else
    die_at (where, "unknown job key '%s'", k);
}

static char *
trim (char *s)
{
  char *e;

  while (*s == ' ' || *s == '\t')
    s++;
  e = s + strlen (s);
  while (e > s && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' ||
                   e[-1] == '\r'))
    *--e = 0;
  return s;
}

static bool
valid_name (const char *s)
{
  if (!*s || strlen (s) >= NAME_MAX_LEN)
    return false;
  for (; *s; s++)
    if (!(*s == '_' || *s == '-' || *s == '.' || (*s >= '0' && *s <= '9') ||
          (*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')))
      return false;
  return true;
}

enum section { SEC_NONE, SEC_GLOBAL, SEC_DEVICE, SEC_SCHED, SEC_GROUP,
               SEC_JOB };

static void
parse_file (const char *path)
{
  FILE *f = fopen (path, "r");
  char line[1024], where[300];
  enum section sec = SEC_NONE;
  struct job *j = NULL;
  int g = -1;
  unsigned lineno = 0;

  if (!f)
    die_at (NULL, "%s: %s", path, strerror (errno));
  while (fgets (line, sizeof line, f)) {
    char *s, *eq, *k, *v;

    lineno++;
    snprintf (where, sizeof where, "%s:%u", path, lineno);
    if (!strchr (line, '\n') && !feof (f))
      die_at (where, "line too long");
    s = trim (line);
    if (*s == 0 || *s == '#' || *s == ';')
      continue;
    if (*s == '[') {
      char *end = strchr (s, ']'), *arg;
      if (!end || *trim (end + 1))
        die_at (where, "malformed section header");
      *end = 0;
      s = trim (s + 1);
      arg = strchr (s, ' ');
      if (arg) {
        *arg++ = 0;
        arg = trim (arg);
      }
      j = NULL;
      g = -1;
      if (!strcmp (s, "global") && !arg) sec = SEC_GLOBAL;
      else if (!strcmp (s, "device") && !arg) sec = SEC_DEVICE;
      else if (!strcmp (s, "sched") && !arg) sec = SEC_SCHED;
      else if (!strcmp (s, "group") || !strcmp (s, "job")) {
        if (!arg || !valid_name (arg))
          die_at (where, "[%s NAME]: missing or invalid name", s);
        if (!strcmp (s, "group")) {
          if (!strcmp (arg, ROOT_GROUP))
            die_at (where, "[group root]: the root group is implicit (jobs "
                    "without group=); its weight is the policy's");
          sec = SEC_GROUP;
          g = get_group (arg, where);
          snprintf (cfg.groups[g].where, sizeof cfg.groups[g].where, "%s",
                    where);
        }
        else {
          sec = SEC_JOB;
          for (unsigned i = 0; i < cfg.njobs; i++)
            if (!strcmp (cfg.jobs[i]->name, arg))
              die_at (where, "duplicate job '%s'", arg);
          if (cfg.njobs == MAX_JOBS)
            die_at (where, "too many jobs (max %d)", MAX_JOBS);
          j = xcalloc (1, sizeof *j);
          strcpy (j->name, arg);
          snprintf (j->where, sizeof j->where, "%s", where);
          j->group = -1;
          j->cls = SCHED_CLASS_BE;
          j->level = 4;
          j->sync = -1;
          j->bs = 4096;
          j->depth = 1;
          cfg.jobs[cfg.njobs++] = j;
        }
      }
      else
        die_at (where, "unknown section [%s%s%s]", s, arg ? " " : "",
                arg ? arg : "");
      continue;
    }
    eq = strchr (s, '=');
    if (!eq)
      die_at (where, "expected key = value");
    *eq = 0;
    k = trim (s);
    v = trim (eq + 1);
    if (!*k)
      die_at (where, "missing key before '='");
    if (!*v)
      die_at (where, "%s: missing value", k);
    switch (sec) {
    case SEC_NONE:
      die_at (where, "'%s' outside any section", k);
    case SEC_GLOBAL:
      set_global (k, v, where);
      break;
    case SEC_DEVICE:
      if (!strcmp (k, "model") || !strcmp (k, "kind"))
        set_global ("model", v, where);
      else
        add_kv (cfg.devparams, &cfg.ndevparams, 64, k, v, where);
      break;
    case SEC_SCHED:
      if (!strcmp (k, "policy") || !strcmp (k, "sched"))
        set_global ("sched", v, where);
      else
        add_kv (cfg.tunables, &cfg.ntunables, MAX_TUNABLES, k, v, where);
      break;
    case SEC_GROUP: {
      char why[200];
      int r;
      if (!strcmp (k, "weight")) {
        cfg.groups[g].weight = need_uint (v, where, k, SCHED_WEIGHT_MIN,
                                          SCHED_WEIGHT_MAX);
        break;
      }
      r = cfg_parse_qos (k, v, &cfg.groups[g].qos, why, sizeof why);
      if (r == -ENOENT)
        die_at (where, "unknown group key '%s'", k);
      if (r < 0)
        die_at (where, "%s = %s: %s", k, v, why);
      break;
    }
    case SEC_JOB:
      set_job (j, k, v, where);
      break;
    }
  }
  if (ferror (f))
    die_at (NULL, "%s: read error", path);
  fclose (f);
}

/* Check every job against the device, after all overrides. */
static void
finish_jobs (uint64_t capacity)
{
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];

    if (j->group < 0)
      j->group = get_group (ROOT_GROUP, j->where);
    if (j->offset % 512)
      die_at (j->where, "job %s: offset must be a multiple of 512", j->name);
    if (j->offset >= capacity)
      die_at (j->where, "job %s: offset beyond the device (%" PRIu64 " bytes)",
              j->name, capacity);
    if (j->size == 0)
      j->size = capacity - j->offset;
    if (j->size > capacity - j->offset)
      die_at (j->where, "job %s: region ends beyond the device (%" PRIu64
              " bytes)", j->name, capacity);
    if (j->size < j->bs)
      die_at (j->where, "job %s: region smaller than bs", j->name);
    if (j->stride == 0)
      j->stride = j->bs;
    if (j->stride % 512)
      die_at (j->where, "job %s: stride must be a multiple of 512", j->name);
    if (j->stop && j->stop <= j->start)
      die_at (j->where, "job %s: stop must be after start", j->name);
    if (j->fsync && !j->write)
      die_at (j->where, "job %s: fsync needs rw=write", j->name);
  }
}

/* ---- the event heap ------------------------------------------------------ */

enum ev_type { EV_ARRIVE, EV_COMPLETE, EV_TIMER, EV_FLUSH };

struct ev {
  uint64_t t;                   /* ns */
  uint64_t seq;                 /* tie-break: order of scheduling */
  enum ev_type type;
  void *p;                      /* job (ARRIVE, FLUSH) or simrq (COMPLETE) */
  uint64_t gen;                 /* TIMER: generation it belongs to */
};

static struct {
  struct ev *v;
  size_t n, cap;
  uint64_t seq;
} heap;

static bool
ev_less (const struct ev *a, const struct ev *b)
{
  return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void
ev_push (uint64_t t, enum ev_type type, void *p, uint64_t gen)
{
  size_t i;

  if (heap.n == heap.cap) {
    heap.cap = heap.cap ? heap.cap * 2 : 1024;
    heap.v = realloc (heap.v, heap.cap * sizeof *heap.v);
    if (!heap.v)
      die_at (NULL, "out of memory");
  }
  i = heap.n++;
  heap.v[i] = (struct ev) { t, heap.seq++, type, p, gen };
  while (i > 0 && ev_less (&heap.v[i], &heap.v[(i - 1) / 2])) {
    struct ev tmp = heap.v[i];
    heap.v[i] = heap.v[(i - 1) / 2];
    heap.v[(i - 1) / 2] = tmp;
    i = (i - 1) / 2;
  }
}

static struct ev
ev_pop (void)
{
  struct ev top = heap.v[0];
  size_t i = 0;

  heap.v[0] = heap.v[--heap.n];
  for (;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap.n && ev_less (&heap.v[l], &heap.v[m])) m = l;
    if (r < heap.n && ev_less (&heap.v[r], &heap.v[m])) m = r;
    if (m == i)
      break;
    struct ev tmp = heap.v[i];
    heap.v[i] = heap.v[m];
    heap.v[m] = tmp;
    i = m;
  }
  return top;
}

/* ---- the simulation -------------------------------------------------------- */

static struct {
  struct sched *s;
  struct devmodel *dm;
  uint64_t now;                 /* ns: the pass being run (for --trace) */
  unsigned at_dev;              /* requests dispatched, not completed */
  uint64_t timer_at;            /* ns: the policy's pending timer or NEVER */
  uint64_t timer_gen;           /* generation of the pending timer */
  uint64_t dispatched;          /* total dispatches */
  uint64_t end;                 /* ns: cfg.duration */
} sim;

static uint64_t
job_rand (struct job *j)
{
  return xorshift64s (&j->rng);
}

static void
submit_rq (struct job *j, struct simrq *sr, uint64_t now)
{
  sr->t_submit = now;
  sched_insert (sim.s, &sr->rq, now);
}

static void
job_flush (struct job *j, uint64_t now)
{
  struct simrq *sr = &j->slots[j->depth];

  memset (&sr->rq, 0, sizeof sr->rq);
  sr->rq.op = RQ_FLUSH;
  sr->rq.flags = RQ_SYNC;
  sr->rq.q = j->q;
  sr->rq.priv = sr;
  j->flush_out = true;
  submit_rq (j, sr, now);
}

/* A slot of job j is ready to submit at now. */
static void
job_arrive (struct job *j, uint64_t now)
{
  struct simrq *sr;
  uint64_t off;

  if (now >= j->stop)
    return;                     /* the slot retires */
  if (j->fsync_wait) {
    j->parked++;
    return;
  }
  sr = j->free;
  j->free = sr->next_free;
  if (j->rand)
    off = j->offset + job_rand (j) % (j->size / j->bs) * j->bs;
  else {
    off = j->next_off;
    j->next_off += j->stride;
    if (j->next_off + j->bs > j->offset + j->size)
      j->next_off = j->offset + (j->next_off - j->offset) % j->stride;
  }
  memset (&sr->rq, 0, sizeof sr->rq);
  sr->rq.off = off;
  sr->rq.len = j->bs;
  sr->rq.op = j->write ? RQ_WRITE : RQ_READ;
  if (j->sync > 0 || (j->sync < 0 && !j->write))
    sr->rq.flags |= RQ_SYNC;
  if (j->meta)
    sr->rq.flags |= RQ_META;
  sr->rq.q = j->q;
  sr->rq.priv = sr;
  j->inflight++;
  submit_rq (j, sr, now);
  if (j->write && j->fsync && ++j->writes >= j->fsync) {
    j->writes = 0;
    j->fsync_wait = true;
  }
}

/* A slot finished (its request completed): think, then arrive again. */
/* Even with think 0 the next request is a new event: it is processed in
 * the next pass at the same instant, after the policy has been asked to
 * dispatch.  That is the order of the real thing: the dispatcher sees the
 * completion (and may expire an empty queue or arm an idle timer) before
 * the client, which must first receive the reply, sends its next request.
 */
static void
job_slot_done (struct job *j, uint64_t now)
{
  if (now + j->think < j->stop && now + j->think <= sim.end)
    ev_push (now + j->think, EV_ARRIVE, j, 0);
}

static void
on_complete (struct simrq *sr, uint64_t now)
{
  struct job *j = sr->j;

  sim.at_dev--;
  sched_completed (sim.s, &sr->rq, now);
  if (sr->rq.op == RQ_FLUSH) {
    j->flushes++;
    j->flush_out = false;
    j->fsync_wait = false;
    while (j->parked) {         /* these slots already thought */
      j->parked--;
      ev_push (now, EV_ARRIVE, j, 0);
    }
    return;
  }
  j->ios++;
  j->bytes += sr->rq.len;
  hist_add (&j->lat, now - sr->t_submit);
  if (cfg.window) {
    unsigned w = now / cfg.window;
    if (w >= cfg.nwin)
      w = cfg.nwin - 1;         /* a completion exactly at the end */
    j->win_ios[w]++;
    j->win_bytes[w] += sr->rq.len;
  }
  j->inflight--;
  sr->next_free = j->free;
  j->free = sr;
  job_slot_done (j, now);
  if (j->fsync_wait && j->inflight == 0 && !j->flush_out) {
    j->flush_out = true;        /* the client sends it in the next pass */
    ev_push (now, EV_FLUSH, j, 0);
  }
}

static void
on_arrive (struct job *j, uint64_t now)
{
  job_arrive (j, now);
}

static void
fmt_time (char *buf, size_t n, uint64_t ns)
{
  snprintf (buf, n, "%" PRIu64 ".%09" PRIu64 "s", (uint64_t) (ns / NSEC_PER_SEC),
            (uint64_t) (ns % NSEC_PER_SEC));
}

/* Dispatch while the device has room.  Returns true if anything moved. */
static bool
kick (uint64_t now)
{
  uint64_t next = SCHED_NEVER;
  bool moved = false;

  while (sim.at_dev < cfg.queue_depth) {
    struct rq *rq = sched_dispatch (sim.s, now, &next);
    struct simrq *sr;
    uint64_t done;

    if (!rq)
      break;
    sr = rq->priv;
    done = devmodel_submit (sim.dm, rq, now);
    if (done < now)
      done = now;
    sim.at_dev++;
    sim.dispatched++;
    moved = true;
    ev_push (done, EV_COMPLETE, sr, 0);
    next = SCHED_NEVER;
  }
  if (sim.at_dev < cfg.queue_depth) {
    /* dispatch returned NULL: its "next" is the timer to keep. */
    if (next == SCHED_NEVER) {
      sim.timer_at = SCHED_NEVER;
      sim.timer_gen++;
    }
    else {
      if (next < now)
        next = now;
      if (next != sim.timer_at) {
        sim.timer_at = next;
        sim.timer_gen++;
        ev_push (next, EV_TIMER, NULL, sim.timer_gen);
      }
    }
    if (sim.at_dev == 0 && next == SCHED_NEVER && sched_has_work (sim.s)) {
      char t[32];
      fmt_time (t, sizeof t, now);
      fprintf (stderr, "%s: STALL at t=%s: scheduler '%s' has work, nothing "
               "is at the device, it dispatched nothing and asked for no "
               "timer (a scheduler bug)\n", progname, t, cfg.policy);
      exit (3);
    }
  }
  return moved;
}

static void
run (void)
{
  uint64_t now = 0, spins = 0, last_now = UINT64_MAX;

  sim.end = cfg.duration;
  sim.timer_at = SCHED_NEVER;
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    if (j->start < sim.end)
      for (unsigned d = 0; d < j->depth; d++)
        ev_push (j->start, EV_ARRIVE, j, 0);
  }
  while (heap.n > 0 && heap.v[0].t <= sim.end) {
    bool progress = false;

    /* One pass: the events due now that existed when it began. */
    uint64_t pass_seq = heap.seq;

    now = sim.now = heap.v[0].t;
    while (heap.n > 0 && heap.v[0].t == now && heap.v[0].seq < pass_seq) {
      struct ev e = ev_pop ();

      switch (e.type) {
      case EV_ARRIVE:
        on_arrive (e.p, now);
        progress = true;
        break;
      case EV_COMPLETE:
        on_complete (e.p, now);
        progress = true;
        break;
      case EV_FLUSH:
        job_flush (e.p, now);
        progress = true;
        break;
      case EV_TIMER:
        if (e.gen == sim.timer_gen) {
          sim.timer_at = SCHED_NEVER;
          sim.timer_gen++;
        }
        break;
      }
    }
    if (kick (now))
      progress = true;
    /* A policy that keeps asking to be called "now" without dispatching
     * anything would spin forever at one instant: that is a stall too.
     */
    if (now != last_now)
      spins = 0;
    last_now = now;
    if (!progress && ++spins > 1000) {
      char t[32];
      fmt_time (t, sizeof t, now);
      fprintf (stderr, "%s: STALL at t=%s: scheduler '%s' keeps asking for "
               "a timer at the current time and dispatches nothing (a "
               "scheduler bug)\n", progname, t, cfg.policy);
      exit (3);
    }
  }
}

/* ---- broken policies, to test the watchdog ---------------------------- */

/* "test-stall" takes requests and never dispatches nor asks for a timer;
 * "test-spin" never dispatches and always asks to be called again now.
 * Neither is a real policy: they exist so tests/test-sim-fifo.sh can check
 * that cfqsim reports a stalled scheduler instead of hanging or reporting.
 */
struct broken {
  struct sched s;
  uint64_t queued;              /* requests inserted */
  bool spin;                    /* test-spin */
};
struct sched_group { int unused; };
struct sched_queue { int unused; };
static struct sched_group broken_group;
static struct sched_queue broken_queue;
static const struct sched_ops broken_stall_ops, broken_spin_ops;

static struct sched *
broken_create_common (const struct sched_ops *ops)
{
  struct broken *b = xcalloc (1, sizeof *b);
  b->s.ops = ops;
  b->spin = ops == &broken_spin_ops;
  return &b->s;
}
static struct sched *broken_create_stall (void)
{ return broken_create_common (&broken_stall_ops); }
static struct sched *broken_create_spin (void)
{ return broken_create_common (&broken_spin_ops); }
static void broken_destroy (struct sched *s) { free (s); }
static int broken_set (struct sched *s, const char *k, uint64_t v)
{ return -ENOENT; }
static int broken_get (struct sched *s, const char *k, uint64_t *v)
{ return -ENOENT; }
static struct sched_group *
broken_group_new (struct sched *s, const char *n, unsigned w)
{ return &broken_group; }
static int broken_set_weight (struct sched *s, struct sched_group *g,
                              unsigned w)
{ return 0; }
static struct sched_queue *
broken_queue_new (struct sched *s, struct sched_group *g,
                  enum sched_class c, unsigned l)
{ return &broken_queue; }
static void broken_queue_free (struct sched *s, struct sched_queue *q) { }
static void broken_insert (struct sched *s, struct rq *rq, uint64_t now)
{ ((struct broken *) s)->queued++; }
static struct rq *
broken_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{
  *next = ((struct broken *) s)->spin ? now : SCHED_NEVER;
  return NULL;
}
static void broken_completed (struct sched *s, struct rq *rq, uint64_t now) { }
static bool broken_has_work (struct sched *s)
{ return ((struct broken *) s)->queued > 0; }

#define BROKEN_OPS(nm, cr) { .name = nm, .create = cr, \
    .destroy = broken_destroy, .set = broken_set, .get = broken_get, \
    .group_new = broken_group_new, .group_set_weight = broken_set_weight, \
    .queue_new = broken_queue_new, .queue_free = broken_queue_free, \
    .insert = broken_insert, .dispatch = broken_dispatch, \
    .completed = broken_completed, .has_work = broken_has_work }
static const struct sched_ops broken_stall_ops =
  BROKEN_OPS ("test-stall", broken_create_stall);
static const struct sched_ops broken_spin_ops =
  BROKEN_OPS ("test-spin", broken_create_spin);

static const struct sched_ops *
lookup_policy (const char *name)
{
  if (!strcmp (name, "test-stall"))
    return &broken_stall_ops;
  if (!strcmp (name, "test-spin"))
    return &broken_spin_ops;
  return sched_lookup (name);
}

/* ---- setup --------------------------------------------------------------- */

static void
apply_tunable (const struct kv *t)
{
  uint64_t v;
  int r;

  if (devmodel_parse_time (t->val, tunable_is_ms (t->key) ? NSEC_PER_MSEC : 1,
                           &v) < 0)
    die_at (t->where, "tunable %s: bad value '%s'", t->key, t->val);
  r = sched_set (sim.s, t->key, v);
  if (r == -ENOENT)
    die_at (t->where, "scheduler '%s' has no tunable '%s'", cfg.policy,
            t->key);
  if (r < 0)
    die_at (t->where, "tunable %s=%s: %s", t->key, t->val, strerror (-r));
}

/* --trace: each decision of a policy that reports them (cfq), on stderr
 * with the virtual time.
 */
static void
trace_line (void *opaque, const char *msg)
{
  fprintf (stderr, "%" PRIu64 ".%06" PRIu64 " %s\n",
           (uint64_t) (sim.now / NSEC_PER_SEC),
           (uint64_t) (sim.now % NSEC_PER_SEC / 1000), msg);
}

static void
setup (void)
{
  const struct sched_ops *ops = lookup_policy (cfg.policy);
  int err = 0;

  if (!ops)
    die_at (NULL, "unknown scheduler '%s' (see --list-scheds)", cfg.policy);
  sim.dm = devmodel_new (cfg.devkind, &err);
  if (!sim.dm)
    die_at (NULL, "device model %s: %s", cfg.devkind, strerror (-err));
  for (unsigned i = 0; i < cfg.ndevparams; i++) {
    struct kv *p = &cfg.devparams[i];
    int r = devmodel_set (sim.dm, p->key, p->val);

    if (r == -ENOENT)
      die_at (p->where, "device model %s has no parameter '%s'", cfg.devkind,
              p->key);
    if (r < 0)
      die_at (p->where, "device parameter %s=%s: %s", p->key, p->val,
              r == -ERANGE ? "out of range" : "invalid value");
    if (!strcmp (p->key, "seed"))
      cfg.devseed = true;
  }
  if (!cfg.devseed) {
    char s[32];
    snprintf (s, sizeof s, "%" PRIu64, cfg.seed);
    devmodel_set (sim.dm, "seed", s);
  }
  finish_jobs (devmodel_capacity (sim.dm));

  sim.s = sched_create (ops);
  if (!sim.s)
    die_at (NULL, "out of memory");
  /* Tell the policy what the kernel would learn from the queue flags
   * (blk_queue_nonrot): whether the device seeks.  A policy without the
   * tunable simply does not care; the job file may still override it.
   */
  {
    int r = sched_set (sim.s, "rotational", devmodel_rotational (sim.dm));
    if (r < 0 && r != -ENOENT)
      die_at (NULL, "setting rotational: %s", strerror (-r));
  }
  for (unsigned i = 0; i < cfg.ntunables; i++)
    apply_tunable (&cfg.tunables[i]);
  if (cfg.trace && ops == &cfq_ops)
    cfq_set_trace (sim.s, trace_line, NULL);

  for (unsigned i = 0; i < cfg.njobs; i++)
    cfg.groups[cfg.jobs[i]->group].njobs++;
  for (unsigned i = 0; i < cfg.ngroups; i++) {
    struct sim_group *g = &cfg.groups[i];
    hist_init (&g->lat);
    if (!g->njobs || g->root)
      continue;
    g->sg = sched_group_new (sim.s, g->name, g->weight);
    if (!g->sg)
      die_at (g->where, "group %s: scheduler refused weight %u", g->name,
              g->weight);
    if (!qos_conf_empty (&g->qos)) {
      const struct qos_key *k, *o;
      char why[200];
      int r;
      if (qos_conf_check (&g->qos, why, sizeof why, &k, &o) < 0)
        die_at (g->where, "group %s: %s%s%s: %s", g->name, k->name,
                o ? ", " : "", o ? o->name : "", why);
      r = sched_group_set_qos (sim.s, g->sg, &g->qos);
      if (r == -ENOTSUP)
        die_at (g->where, "group %s: scheduler '%s' has no caps or"
                " reservations", g->name, cfg.policy);
      if (r < 0)
        die_at (g->where, "group %s: caps and reservation: %s", g->name,
                strerror (-r));
    }
  }
  if (cfg.window) {
    cfg.nwin = (cfg.duration + cfg.window - 1) / cfg.window;
    for (unsigned i = 0; i < cfg.njobs; i++) {
      cfg.jobs[i]->win_ios = xcalloc (cfg.nwin, sizeof (uint64_t));
      cfg.jobs[i]->win_bytes = xcalloc (cfg.nwin, sizeof (uint64_t));
    }
    for (unsigned i = 0; i < cfg.ngroups; i++) {
      cfg.groups[i].win_ios = xcalloc (cfg.nwin, sizeof (uint64_t));
      cfg.groups[i].win_bytes = xcalloc (cfg.nwin, sizeof (uint64_t));
    }
  }
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    uint64_t x = cfg.seed ^ (0x632be59bd9b4e019ULL * (i + 1));

    j->q = sched_queue_new (sim.s, cfg.groups[j->group].sg, j->cls,
                            j->level);
    if (!j->q)
      die_at (j->where, "job %s: scheduler refused the queue", j->name);
    j->slots = xcalloc (j->depth + 1, sizeof *j->slots);
    for (unsigned d = 0; d < j->depth + 1; d++)
      j->slots[d].j = j;
    for (unsigned d = 0; d < j->depth; d++) {
      j->slots[d].next_free = j->free;
      j->free = &j->slots[d];
    }
    j->next_off = j->offset;
    j->rng = splitmix64 (&x);
    if (!j->rng)
      j->rng = 1;
    if (j->start >= cfg.duration)
      die_at (j->where, "job %s: starts at or after the end of the run",
              j->name);
    if (!j->stop || j->stop > cfg.duration)
      j->stop = cfg.duration;
    hist_init (&j->lat);
  }
}

static void
select_only (void)
{
  unsigned n = 0;

  if (!cfg.only)
    return;
  for (unsigned i = 0; i < cfg.njobs; i++) {
    const char *p = cfg.only;
    size_t len = strlen (cfg.jobs[i]->name);
    bool keep = false;

    while (*p) {
      size_t l = strcspn (p, ",");
      if (l == len && !strncmp (p, cfg.jobs[i]->name, l))
        keep = true;
      p += l;
      if (*p)
        p++;
    }
    if (keep)
      cfg.jobs[n++] = cfg.jobs[i];
    else
      free (cfg.jobs[i]);
  }
  if (n == 0)
    die_at (NULL, "--only %s: no such job", cfg.only);
  cfg.njobs = n;
}

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

/* , "windows": {"ios": [...], "bytes": [...]} */
static void
json_windows (const uint64_t *ios, const uint64_t *bytes)
{
  printf (", \"windows\": {\"ios\": [");
  for (unsigned w = 0; w < cfg.nwin; w++)
    printf ("%s%" PRIu64, w ? ", " : "", ios[w]);
  printf ("], \"bytes\": [");
  for (unsigned w = 0; w < cfg.nwin; w++)
    printf ("%s%" PRIu64, w ? ", " : "", bytes[w]);
  printf ("]}");
}

/* The group's QoS counters, if the policy keeps them (cfq). */
static bool
group_qos_stats (const struct sim_group *g, struct cfq_group_stats *st)
{
  if (!g->sg || qos_conf_empty (&g->qos) || sim.s->ops != &cfq_ops)
    return false;
  cfq_group_get_stats (sim.s, g->sg, st);
  return true;
}

static void
report (void)
{
  uint64_t tbytes = 0, tios = 0, gw = 0;
  double x[MAX_GROUPS], xi[MAX_GROUPS], jain, jain_iops;
  unsigned nx = 0;
  char dev[512], t[32];

  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    struct sim_group *g = &cfg.groups[j->group];
    g->bytes += j->bytes;
    g->ios += j->ios;
    hist_merge (&g->lat, &j->lat);
    tbytes += j->bytes;
    tios += j->ios;
    for (unsigned w = 0; w < cfg.nwin; w++) {
      g->win_ios[w] += j->win_ios[w];
      g->win_bytes[w] += j->win_bytes[w];
    }
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
    for (unsigned i = 0; i < cfg.ntunables; i++) {
      printf ("%s", i ? ", " : "");
      json_str (cfg.tunables[i].key);
      printf (": ");
      json_str (cfg.tunables[i].val);
    }
    printf ("},\n  \"dispatched\": %" PRIu64 ",\n", sim.dispatched);
    if (cfg.window)
      printf ("  \"window_s\": %.9f,\n", cfg.window / 1e9);
    printf ("  \"jobs\": [\n");
    for (unsigned i = 0; i < cfg.njobs; i++) {
      struct job *j = cfg.jobs[i];
      uint64_t win = j->stop - j->start;
      printf ("    {\"name\": ");
      json_str (j->name);
      printf (", \"group\": ");
      json_str (cfg.groups[j->group].name);
      printf (", \"bytes\": %" PRIu64 ", \"ios\": %" PRIu64
              ", \"flushes\": %" PRIu64 ", \"mib_s\": %.6f, \"iops\": %.3f"
              ", \"lat_us\": {\"mean\": %.3f, \"p50\": %.3f, \"p99\": %.3f"
              ", \"max\": %.3f}, \"share\": %.6f",
              j->bytes, j->ios, j->flushes, mib_s (j->bytes, win),
              per_s (j->ios, win), us (hist_mean (&j->lat)),
              us (hist_quantile (&j->lat, 0.50)),
              us (hist_quantile (&j->lat, 0.99)), us (j->lat.max),
              tbytes ? (double) j->bytes / tbytes : 0);
      if (cfg.window)
        json_windows (j->win_ios, j->win_bytes);
      printf ("}%s\n", i + 1 < cfg.njobs ? "," : "");
    }
    printf ("  ],\n  \"groups\": [\n");
    for (unsigned i = 0, k = 0; i < cfg.ngroups; i++) {
      struct sim_group *g = &cfg.groups[i];
      if (!g->njobs)
        continue;
      printf ("    {\"name\": ");
      json_str (g->name);
      printf (", \"weight\": %u, \"jobs\": %u, \"bytes\": %" PRIu64
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
      if (!qos_conf_empty (&g->qos)) {
        struct cfq_group_stats st;
        printf (", \"qos\": {");
        for (size_t q = 0, n = 0; q < qos_nr_keys; q++) {
          uint64_t v = qos_conf_get (&g->qos, &qos_keys[q]);
          if (v)
            printf ("%s\"%s\": %" PRIu64, n++ ? ", " : "", qos_keys[q].name,
                    v);
        }
        if (group_qos_stats (g, &st))
          printf (", \"throttled\": %" PRIu64 ", \"reserved\": %" PRIu64,
                  st.qos_throttled, st.qos_reserved);
        printf ("}");
      }
      if (cfg.window)
        json_windows (g->win_ios, g->win_bytes);
      printf ("}%s\n", ++k < nx ? "," : "");
    }
    printf ("  ],\n  \"total\": {\"bytes\": %" PRIu64 ", \"ios\": %" PRIu64
            ", \"mib_s\": %.6f, \"iops\": %.3f},\n",
            tbytes, tios, mib_s (tbytes, cfg.duration),
            per_s (tios, cfg.duration));
    printf ("  \"jain\": %.6f,\n  \"jain_iops\": %.6f\n}\n", jain, jain_iops);
    return;
  }

  fmt_time (t, sizeof t, cfg.duration);
  printf ("cfqsim: sched %s, device %s\n", cfg.policy, dev);
  printf ("duration %s, seed %" PRIu64 ", queue_depth %u", t, cfg.seed,
          cfg.queue_depth);
  for (unsigned i = 0; i < cfg.ntunables; i++)
    printf ("%s%s=%s", i ? " " : ", tunables ", cfg.tunables[i].key,
            cfg.tunables[i].val);
  printf ("\n\n%-16s %-12s %10s %10s %10s %10s %10s %7s\n", "job", "group",
          "MiB/s", "IOPS", "p50 ms", "p99 ms", "max ms", "share");
  for (unsigned i = 0; i < cfg.njobs; i++) {
    struct job *j = cfg.jobs[i];
    uint64_t win = j->stop - j->start;
    printf ("%-16s %-12s %10.3f %10.1f %10.3f %10.3f %10.3f %7.4f\n",
            j->name, cfg.groups[j->group].name, mib_s (j->bytes, win),
            per_s (j->ios, win),
            hist_quantile (&j->lat, 0.50) / 1e6,
            hist_quantile (&j->lat, 0.99) / 1e6, j->lat.max / 1e6,
            tbytes ? (double) j->bytes / tbytes : 0);
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
    struct sim_group *g = &cfg.groups[i];
    struct cfq_group_stats st;
    char b[32];
    if (!g->njobs || qos_conf_empty (&g->qos))
      continue;
    printf ("%sgroup %s:", n++ ? "" : "\n", g->name);
    for (size_t q = 0; q < qos_nr_keys; q++) {
      uint64_t v = qos_conf_get (&g->qos, &qos_keys[q]);
      if (v)
        printf (" %s=%s", qos_keys[q].name,
                cfg_format_qos (&qos_keys[q], v, b, sizeof b));
    }
    if (group_qos_stats (g, &st))
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
      for (unsigned w = 0; w < cfg.nwin; w++) {
        printf ("%-12.3f", (double) w * cfg.window / 1e9);
        for (unsigned i = 0; i < cfg.ngroups; i++)
          if (cfg.groups[i].njobs)
            printf (" %12.1f", bytes
                    ? mib_s (cfg.groups[i].win_bytes[w], cfg.window)
                    : per_s (cfg.groups[i].win_ios[w], cfg.window));
        printf ("\n");
      }
    }
}

/* ---- main -------------------------------------------------------------------- */

static void
usage (FILE *f)
{
  fprintf (f,
"usage: %s [OPTIONS] JOBFILE\n"
"Simulate jobs sharing a modelled device under a scheduling policy.\n"
"  --sched NAME         policy (fifo, cfq); overrides [sched] policy\n"
"  --set KEY=VALUE      scheduler tunable by CFQ name (slice_idle=0,\n"
"                       group_idle=8ms, low_latency=1 ...); repeatable\n"
"  --device hdd|ssd     device model; overrides [device] model\n"
"  --dev KEY=VALUE      device model parameter (rpm=5400, channels=8 ...)\n"
"  --seed N             PRNG seed (jobs and device)\n"
"  --duration TIME      virtual time to simulate (e.g. 20s)\n"
"  --queue-depth N      most requests at the device at once\n"
"  --only JOB[,JOB..]   run only these jobs\n"
"  --json               machine-readable output\n"
"  --window TIME        also requests and bytes per window (e.g. 1s)\n"
"  --trace              the policy's decisions on stderr (cfq)\n"
"  --list-scheds        print the policies built in and exit\n"
"Exit: 0 ok, 1 bad input, 3 the scheduler stalled.\n", progname);
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "sched", required_argument, NULL, 's' },
    { "set", required_argument, NULL, 'S' },
    { "device", required_argument, NULL, 'D' },
    { "dev", required_argument, NULL, 'd' },
    { "seed", required_argument, NULL, 'r' },
    { "duration", required_argument, NULL, 't' },
    { "queue-depth", required_argument, NULL, 'q' },
    { "only", required_argument, NULL, 'o' },
    { "json", no_argument, NULL, 'j' },
    { "window", required_argument, NULL, 'w' },
    { "trace", no_argument, NULL, 'T' },
    { "list-scheds", no_argument, NULL, 'l' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  /* Command-line settings apply after the file: keep them until then. */
  struct { int opt; const char *arg; } cl[256];
  unsigned ncl = 0;
  int c;

  while ((c = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
    switch (c) {
    case 'l': {
      static const char *const names[] = { "fifo", "cfq", NULL };
      for (int i = 0; names[i]; i++)
        if (sched_lookup (names[i]))
          printf ("%s\n", names[i]);
      return 0;
    }
    case 'h':
      usage (stdout);
      return 0;
    case 'j':
      cfg.json = true;
      break;
    case 'o':
      cfg.only = optarg;
      break;
    case 'T':
      cfg.trace = true;
      break;
    case 'w':
      cfg.window = need_time (optarg, "--window", "window");
      if (!cfg.window)
        die_at ("--window", "window must be > 0");
      break;
    case '?':
      usage (stderr);
      return 1;
    default:
      if (ncl == 256)
        die_at (NULL, "too many options");
      cl[ncl].opt = c;
      cl[ncl++].arg = optarg;
    }
  }
  if (optind != argc - 1) {
    usage (stderr);
    return 1;
  }
  parse_file (argv[optind]);
  for (unsigned i = 0; i < ncl; i++) {
    const char *a = cl[i].arg, *eq;
    char k[NAME_MAX_LEN], where[64];

    switch (cl[i].opt) {
    case 's': set_global ("sched", a, "--sched"); break;
    case 'D': set_global ("model", a, "--device"); break;
    case 'r': set_global ("seed", a, "--seed"); break;
    case 't': set_global ("duration", a, "--duration"); break;
    case 'q': set_global ("queue_depth", a, "--queue-depth"); break;
    case 'S': case 'd':
      eq = strchr (a, '=');
      snprintf (where, sizeof where, "--%s %s", cl[i].opt == 'S' ? "set"
                : "dev", a);
      if (!eq || eq == a || (size_t) (eq - a) >= NAME_MAX_LEN)
        die_at (where, "expected KEY=VALUE");
      memcpy (k, a, eq - a);
      k[eq - a] = 0;
      if (cl[i].opt == 'S') {
        /* A later setting of the same tunable replaces the earlier one. */
        bool found = false;
        for (unsigned t = 0; t < cfg.ntunables; t++)
          if (!strcmp (cfg.tunables[t].key, k)) {
            snprintf (cfg.tunables[t].val, 128, "%s", eq + 1);
            snprintf (cfg.tunables[t].where, 300, "%s", where);
            found = true;
          }
        if (!found)
          add_kv (cfg.tunables, &cfg.ntunables, MAX_TUNABLES, k, eq + 1,
                  where);
      }
      else
        add_kv (cfg.devparams, &cfg.ndevparams, 64, k, eq + 1, where);
      break;
    }
  }
  if (cfg.njobs == 0)
    die_at (argv[optind], "no [job NAME] sections");
  select_only ();
  setup ();
  run ();
  report ();
  return 0;
}
