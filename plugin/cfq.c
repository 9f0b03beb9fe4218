/* cfq.c: the nbdkit plugin: serve one file or block device to many
 * clients, each connection a queue in the scheduler.
 *
 *   nbdkit ./plugin/nbdkit-cfq-plugin.so file=PATH [scheduler=fifo|cfq]
 *          [queue_depth=N]
 *
 * This file is the edge: it parses parameters, opens the file, and turns
 * each NBD command into one or more requests for the engine (engine.c),
 * which schedules them and does the I/O on its own thread.  Callbacks run
 * on nbdkit's worker threads (THREAD_MODEL_PARALLEL); they block in
 * engine_run until their request is done.
 *
 * The file is opened with O_DIRECT, so every transfer must be aligned to
 * the logical block size (cfq_bs) in offset and length, and its buffer to
 * cfq_dev.mem_align.  Requests that are not get the treatment planned by
 * core/rmw.c: reads read the aligned span into a per-thread bounce buffer
 * and copy out; writes read the partial edge blocks, lay the data over
 * them and write the span (read-modify-write).
 *
 * A read-modify-write must not lose a concurrent write to the same edge
 * block, so every write-like command (write, trim, zero) takes a range
 * lock on its aligned span for as long as its I/O is outstanding: shared
 * for plain writes (which may overlap each other: NBD gives no ordering
 * between concurrent commands), exclusive for a read-modify-write (from
 * its edge reads until its write completes).  Reads take no lock.
 *
 * A regular file whose size is not a multiple of cfq_bs has a last block
 * that O_DIRECT cannot write without growing the file.  Commands whose
 * span reaches into that block go through a second, buffered descriptor
 * on the same file instead (still scheduled like any other request); the
 * kernel keeps the page cache and direct I/O coherent for us.  Where the
 * filesystem refuses O_DIRECT altogether both descriptors are buffered,
 * no alignment is needed and nothing is locked.
 */
#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#include "device.h"
#include "engine.h"
#include "list.h"
#include "rmw.h"
#include "sched.h"
#include "tenants.h"

#ifndef CFQ_LIBURING_VERSION
#define CFQ_LIBURING_VERSION "unknown"
#endif

#define CFQ_QUEUE_DEPTH_DEFAULT 32      /* requests at the device */
#define CFQ_QUEUE_DEPTH_MAX 4096
#define CFQ_MAX_REQUEST (32u << 20)     /* bytes: NBD's largest data request */
#define CFQ_PREFERRED_BLOCK 4096        /* bytes */
#define CFQ_ZERO_CHUNK (1u << 20)       /* bytes: write-zeroes fallback step */
#define CFQ_BOUNCE_STEP (64u << 10)     /* bytes: bounce sizes are multiples */
#define CFQ_BOUNCE_KEEP (8u << 20)      /* bytes: larger bounces are not kept */

/* ---- configuration (main thread, before get_ready) ------------------------- */

static char *cfq_file;                  /* absolute path */
static char *cfq_sched_name;            /* scheduler=, default "fifo" */
static const struct sched_ops *cfq_sched_ops;
static unsigned cfq_queue_depth = CFQ_QUEUE_DEPTH_DEFAULT;
static char *cfq_backend;               /* backend=, default io_uring */
static dev_t cfq_st_dev;                /* device holding the file (sysfs) */

/* ---- state fixed in get_ready, read by every thread ------------------------ */

/* A file we serve: the device, or an export's own file.  Its two
 * descriptors are engine file slots slot + FILE_DIRECT and
 * slot + FILE_BUFFERED.
 */
struct backing {
  const char *path;                     /* absolute */
  int fds[FILE_NR];                     /* -1 if not open */
  unsigned slot;                        /* engine slot of fds[0] */
  bool direct;                          /* fds[FILE_DIRECT] is O_DIRECT */
  bool writable;                        /* opened read-write */
  bool seek_data;                       /* lseek SEEK_DATA/SEEK_HOLE work */
  struct device_info dev;
  uint32_t bs;                          /* bytes: O_DIRECT offset alignment */
};

static struct backing cfq_main = { .fds = { -1, -1 } };
static struct backing *cfq_own;         /* per export; path NULL: region */
static size_t cfq_nr_own;               /* entries in cfq_own */
static size_t cfq_buf_align;            /* bytes: alignment of our buffers */
static void *cfq_zero_buf;              /* CFQ_ZERO_CHUNK bytes of zeroes */
static pthread_key_t cfq_bounce_key;    /* per-thread struct bounce */
static bool cfq_key_made;

/* Capabilities switched off (once, atomically) when the kernel says
 * EOPNOTSUPP, as nbdkit's file plugin does.
 */
static int cfq_can_punch = 1;           /* fallocate PUNCH_HOLE */
static int cfq_can_zero_range = 1;      /* fallocate ZERO_RANGE */
static int cfq_can_discard = 1;         /* BLKDISCARD */

struct cfq_handle {
  struct sched_queue *q;                /* this connection's queue */
  const struct backing *b;              /* the file its requests go to */
  int readonly;                         /* nbdkit -r, read-only open or
                                           a readonly export */
  size_t exp;                           /* index into the model's exports */
  uint64_t base;                        /* bytes: export's offset on device */
  uint64_t size;                        /* bytes: export's size */
  bool writes_sync;                     /* export has writes=sync */
  bool writes_async;                    /* export has writes=async */
  struct tn_conn *conn;                 /* accounting (creq->acct) */
};

static bool
cap_on (int *cap)
{
  return __atomic_load_n (cap, __ATOMIC_RELAXED);
}

static void
cap_off (int *cap, const char *what)
{
  if (__atomic_exchange_n (cap, 0, __ATOMIC_RELAXED))
    nbdkit_debug ("cfq: %s not supported here: switched off", what);
}

static bool
unsupported (int err)
{
  return err == -EOPNOTSUPP || err == -ENOTTY || err == -ENODEV;
}

/* The plugin edge: report -err to nbdkit and the client. */
static int
fail (const char *what, int err)
{
  if (err != -ENOTSUP)
    nbdkit_error ("cfq: %s: %s", what, strerror (-err));
  nbdkit_set_error (-err);
  errno = -err;
  return -1;
}

/* ---- per-thread bounce buffers ----------------------------------------------- */

struct bounce {
  void *p;                              /* cfq_buf_align-aligned */
  size_t size;                          /* bytes */
};

static void
bounce_free (void *arg)
{
  struct bounce *b = arg;

  free (b->p);
  free (b);
}

/* A buffer of at least n bytes, kept for the thread's next request. */
static void *
bounce_get (size_t n)
{
  struct bounce *b = pthread_getspecific (cfq_bounce_key);
  size_t size;
  void *p;

  if (b && b->size >= n)
    return b->p;
  if (!b) {
    b = calloc (1, sizeof *b);
    if (!b)
      return NULL;
    if (pthread_setspecific (cfq_bounce_key, b)) {
      free (b);
      return NULL;
    }
  }
  size = (n + CFQ_BOUNCE_STEP - 1) / CFQ_BOUNCE_STEP * CFQ_BOUNCE_STEP;
  if (posix_memalign (&p, cfq_buf_align, size))
    return NULL;
  free (b->p);
  b->p = p;
  b->size = size;
  return p;
}

/* After a request: keep the common sizes for the next one, but do not let
 * each of nbdkit's threads hold on to 32 MiB after one huge request.
 */
static void
bounce_done (void)
{
  struct bounce *b = pthread_getspecific (cfq_bounce_key);

  if (b && b->size > CFQ_BOUNCE_KEEP) {
    free (b->p);
    b->p = NULL;
    b->size = 0;
  }
}

/* ---- the write range lock ------------------------------------------------------ */

struct rlock {
  struct list link;                     /* on rl_held */
  uint64_t start, end;                  /* bytes: [start, end), block aligned */
  bool excl;                            /* read-modify-write */
};

static pthread_mutex_t rl_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t rl_cv = PTHREAD_COND_INITIALIZER;
static struct list rl_held = LIST_INIT (rl_held);       /* under rl_mu */
static unsigned rl_waiters;                             /* under rl_mu */

static bool
rl_conflict (const struct rlock *l)
{
  struct list *p;

  list_for_each (p, &rl_held) {
    const struct rlock *h = list_entry (p, struct rlock, link);

    if (h->start < l->end && l->start < h->end && (h->excl || l->excl))
      return true;
  }
  return false;
}

static void
rl_lock (struct rlock *l, uint64_t start, uint64_t len, bool excl)
{
  l->start = start;
  l->end = start + len;
  l->excl = excl;
  pthread_mutex_lock (&rl_mu);
  while (rl_conflict (l)) {
    rl_waiters++;
    pthread_cond_wait (&rl_cv, &rl_mu);
    rl_waiters--;
  }
  list_add_tail (&l->link, &rl_held);
  pthread_mutex_unlock (&rl_mu);
}

static void
rl_unlock (struct rlock *l)
{
  pthread_mutex_lock (&rl_mu);
  list_del (&l->link);
  if (rl_waiters)
    pthread_cond_broadcast (&rl_cv);
  pthread_mutex_unlock (&rl_mu);
}

/* ---- requests to the engine ------------------------------------------------- */

/* Every request of a connection: charged to its queue and accounting,
 * sync by the export's rule, and never outside the export's region (the
 * callbacks translate offsets; nbdkit refuses anything past get_size).  A
 * span rounded up to the block may reach past a region that ends at the
 * device's unaligned end, never further.
 */
static void
hreq_init (struct cfq_handle *h, struct creq *r, enum rq_op op, enum eop eop,
           int file, void *buf, uint64_t off, uint32_t len)
{
  creq_init (r, h->q, op, eop, file + h->b->slot, buf, off, len);
  r->acct = h->conn;
  if (op == RQ_WRITE || op == RQ_TRIM || op == RQ_ZERO)
    r->rq.flags |= h->writes_sync ? RQ_SYNC
      : h->writes_async ? 0 : RQ_AUTO;
  if (op != RQ_FLUSH)
    assert (off >= h->base &&
            off + len <= h->base + h->size + (h->b->bs ? h->b->bs - 1 : 0));
}

static int
io_rw (struct cfq_handle *h, enum rq_op op, int file, void *buf,
       uint64_t len, uint64_t off, int rw_flags)
{
  struct creq r;

  hreq_init (h, &r, op, op == RQ_READ ? EOP_READ : EOP_WRITE, file, buf,
             off, (uint32_t) len);
  r.rw_flags = rw_flags;
  if (rw_flags & RWF_DSYNC)
    r.rq.flags |= RQ_FUA | RQ_SYNC;
  return engine_run (&r);
}

static int
io_fallocate (struct cfq_handle *h, enum rq_op op, int mode,
              uint64_t len, uint64_t off)
{
  struct creq r;

  hreq_init (h, &r, op, EOP_FALLOCATE, FILE_DIRECT, NULL, off,
             (uint32_t) len);
  r.mode = mode;
  return engine_run (&r);
}

static int
io_flush (struct cfq_handle *h)
{
  struct creq r;

  hreq_init (h, &r, RQ_FLUSH, EOP_FSYNC, FILE_DIRECT, NULL, 0, 0);
  return engine_run (&r);
}

/* Runs on the worker, when the scheduler dispatches the discard: there is
 * no io_uring op for BLKDISCARD (see engine.c).
 */
static int
blkdiscard_fn (struct creq *r)
{
  const struct backing *b = r->arg;
  uint64_t range[2] = { r->rq.off, r->rq.len };

  if (ioctl (b->fds[FILE_DIRECT], BLKDISCARD, range) == -1)
    return -errno;
  return 0;
}

static int
io_discard (struct cfq_handle *h, uint64_t len, uint64_t off)
{
  struct creq r;

  hreq_init (h, &r, RQ_TRIM, EOP_WORKER, FILE_DIRECT, NULL, off,
             (uint32_t) len);
  r.worker_fn = blkdiscard_fn;
  r.arg = (void *) h->b;
  return engine_run (&r);
}

/* Does [off, off+len) reach the last, partial block of the file? */
static bool
in_tail (const struct cfq_handle *h, const struct rmw_plan *p)
{
  return p->span_off + p->span_len > h->b->dev.size;
}

static bool
buf_aligned (const struct cfq_handle *h, const void *buf)
{
  return rmw_is_aligned ((uintptr_t) buf, h->b->dev.mem_align);
}

/* ---- data path ---------------------------------------------------------------- */

static int
do_pread (struct cfq_handle *h, void *buf, uint32_t count, uint64_t off)
{
  struct rmw_plan p;
  void *b;
  int err;

  if (!h->b->direct)
    return io_rw (h, RQ_READ, FILE_DIRECT, buf, count, off, 0);
  err = rmw_plan (off, count, h->b->bs, &p);
  if (err)
    return err;
  if (in_tail (h, &p))
    return io_rw (h, RQ_READ, FILE_BUFFERED, buf, count, off, 0);
  if (p.aligned && buf_aligned (h, buf))
    return io_rw (h, RQ_READ, FILE_DIRECT, buf, count, off, 0);
  b = bounce_get (p.span_len);
  if (!b)
    return -ENOMEM;
  err = io_rw (h, RQ_READ, FILE_DIRECT, b, p.span_len, p.span_off, 0);
  if (!err)
    memcpy (buf, (char *) b + p.head, count);
  bounce_done ();
  return err;
}

/* Read the partial edge blocks into the bounce, lay the data over, write
 * the span.  The caller holds the span exclusively.
 */
static int
do_rmw (struct cfq_handle *h, const void *buf, uint32_t count,
        const struct rmw_plan *p, int rw_flags)
{
  struct creq edge[2], *rs[2];
  char *b = bounce_get (p->span_len);
  int err;

  if (!b)
    return -ENOMEM;
  for (unsigned i = 0; i < p->nedges; i++) {
    hreq_init (h, &edge[i], RQ_READ, EOP_READ, FILE_DIRECT,
               b + p->edge_buf[i], p->edge_off[i], h->b->bs);
    rs[i] = &edge[i];
  }
  err = engine_run_many (rs, p->nedges);
  if (err)
    return err;
  memcpy (b + p->head, buf, count);
  return io_rw (h, RQ_WRITE, FILE_DIRECT, b, p->span_len, p->span_off,
                rw_flags);
}

static int
do_pwrite (struct cfq_handle *h, const void *buf, uint32_t count,
           uint64_t off, int rw_flags)
{
  struct rmw_plan p;
  struct rlock l;
  int err;

  if (!h->b->direct)              /* no read-modify-write: nothing to lock */
    return io_rw (h, RQ_WRITE, FILE_DIRECT, (void *) buf, count, off,
                  rw_flags);
  err = rmw_plan (off, count, h->b->bs, &p);
  if (err)
    return err;
  if (in_tail (h, &p)) {
    rl_lock (&l, p.span_off, p.span_len, false);
    err = io_rw (h, RQ_WRITE, FILE_BUFFERED, (void *) buf, count, off,
                 rw_flags);
  }
  else if (p.aligned) {
    void *b = (void *) buf;

    if (!buf_aligned (h, buf)) {
      b = bounce_get (count);
      if (!b)
        return -ENOMEM;
      memcpy (b, buf, count);
    }
    rl_lock (&l, p.span_off, p.span_len, false);
    err = io_rw (h, RQ_WRITE, FILE_DIRECT, b, count, off, rw_flags);
  }
  else {
    rl_lock (&l, p.span_off, p.span_len, true);
    err = do_rmw (h, buf, count, &p, rw_flags);
  }
  rl_unlock (&l);
  bounce_done ();
  return err;
}

/* The slow zero: write zeroes through the normal write path. */
static int
write_zeroes (struct cfq_handle *h, uint32_t count, uint64_t off, int fua)
{
  while (count) {
    uint32_t n = count < CFQ_ZERO_CHUNK ? count : CFQ_ZERO_CHUNK;
    int err = do_pwrite (h, cfq_zero_buf, n, off, fua ? RWF_DSYNC : 0);

    if (err)
      return err;
    count -= n;
    off += n;
  }
  return 0;
}

/* Try the fast ways to zero; -EOPNOTSUPP when there is none. */
static int
try_fast_zero (struct cfq_handle *h, uint32_t count, uint64_t off,
               bool may_trim, bool fast)
{
  int err = -EOPNOTSUPP;

  if (h->b->dev.is_blockdev) {
    /* The kernel wants logical-block alignment here. */
    if (!rmw_is_aligned (off, h->b->bs) || !rmw_is_aligned (count, h->b->bs))
      return -EOPNOTSUPP;
    /* PUNCH_HOLE on a block device is a write-zeroes that may unmap and
     * never falls back to writing: fast when it works.
     */
    if (may_trim && cap_on (&cfq_can_punch)) {
      err = io_fallocate (h, RQ_ZERO, FALLOC_FL_PUNCH_HOLE |
                          FALLOC_FL_KEEP_SIZE, count, off);
      if (unsupported (err))
        cap_off (&cfq_can_punch, "fallocate PUNCH_HOLE");
    }
    /* ZERO_RANGE may be the kernel writing zeroes itself: not fast. */
    if (unsupported (err) && !fast && cap_on (&cfq_can_zero_range)) {
      err = io_fallocate (h, RQ_ZERO, FALLOC_FL_ZERO_RANGE |
                          FALLOC_FL_KEEP_SIZE, count, off);
      if (unsupported (err))
        cap_off (&cfq_can_zero_range, "fallocate ZERO_RANGE");
    }
    return unsupported (err) ? -EOPNOTSUPP : err;
  }

  if (may_trim && cap_on (&cfq_can_punch)) {
    err = io_fallocate (h, RQ_ZERO, FALLOC_FL_PUNCH_HOLE |
                        FALLOC_FL_KEEP_SIZE, count, off);
    if (unsupported (err))
      cap_off (&cfq_can_punch, "fallocate PUNCH_HOLE");
  }
  if (unsupported (err) && cap_on (&cfq_can_zero_range)) {
    err = io_fallocate (h, RQ_ZERO, FALLOC_FL_ZERO_RANGE |
                        FALLOC_FL_KEEP_SIZE, count, off);
    if (unsupported (err))
      cap_off (&cfq_can_zero_range, "fallocate ZERO_RANGE");
  }
  return unsupported (err) ? -EOPNOTSUPP : err;
}

/* ---- nbdkit callbacks ---------------------------------------------------------- */

static void
cfq_unload (void)
{
  free (cfq_file);
  free (cfq_sched_name);
  free (cfq_backend);
  free (cfq_own);
  cfq_own = NULL;
  cfq_nr_own = 0;
  tn_unload ();
  if (cfq_key_made)
    pthread_key_delete (cfq_bounce_key);
}

static void
cfq_dump_plugin (void)
{
  static const char *const names[] = { "fifo", "cfq" };
  const char *sep = "";

  printf ("cfq_io_uring=yes\n");
  printf ("cfq_liburing_version=%s\n", CFQ_LIBURING_VERSION);
  printf ("cfq_libev_version=%d.%d\n", ev_version_major (),
          ev_version_minor ());
  printf ("cfq_o_direct=yes\n");
  printf ("cfq_fallocate=yes\n");
  printf ("cfq_discard=yes\n");
  printf ("cfq_extents=yes\n");
  printf ("cfq_schedulers=");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (sched_lookup (names[i])) {
      printf ("%s%s", sep, names[i]);
      sep = ",";
    }
  printf ("\n");
  printf ("cfq_backends=%s\n", engine_backends ());
  printf ("cfq_queue_depth_default=%d\n", CFQ_QUEUE_DEPTH_DEFAULT);
  printf ("cfq_max_request=%u\n", CFQ_MAX_REQUEST);
  printf ("cfq_config=yes\n");
  printf ("cfq_control=yes\n");
  printf ("cfq_emulate=hdd,ssd\n");
  printf ("cfq_export_file=yes\n");
}

static int
cfq_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0) {
    free (cfq_file);
    cfq_file = strdup (value);  /* made absolute in config_complete */
    if (!cfq_file) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
    return tn_override (key, value);
  }
  else if (strcmp (key, "scheduler") == 0) {
    if (!sched_lookup (value)) {
      if (strcmp (value, "cfq") == 0)
        nbdkit_error ("cfq: scheduler=cfq: not built yet "
                      "(this build has scheduler=fifo only)");
      else
        nbdkit_error ("cfq: scheduler=%s: unknown (fifo or cfq)", value);
      return -1;
    }
    free (cfq_sched_name);
    cfq_sched_name = strdup (value);
    if (!cfq_sched_name) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
    return tn_override (key, value);
  }
  else if (strcmp (key, "queue_depth") == 0) {
    /* Our own parse, so every refusal names the value it refuses. */
    char *end;
    unsigned long v;

    if (value[0] == '\0') {
      nbdkit_error ("cfq: queue_depth: empty value "
                    "(must be a number between 1 and %d)", CFQ_QUEUE_DEPTH_MAX);
      return -1;
    }
    errno = 0;
    v = strtoul (value, &end, 10);
    if (value[0] < '0' || value[0] > '9' || *end != '\0' || errno ||
        v < 1 || v > CFQ_QUEUE_DEPTH_MAX) {
      nbdkit_error ("cfq: queue_depth=%s: must be a number between 1 and %d",
                    value, CFQ_QUEUE_DEPTH_MAX);
      return -1;
    }
    cfq_queue_depth = (unsigned) v;
    return tn_override (key, value);
  }
  else if (strcmp (key, "backend") == 0) {
    if (strcmp (value, "io_uring") != 0 && strcmp (value, "null") != 0) {
      nbdkit_error ("cfq: backend=%s: unknown (io_uring or null)", value);
      return -1;
    }
    free (cfq_backend);
    cfq_backend = strdup (value);
    if (!cfq_backend) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
  }
  else
    return tn_config (key, value) == -1 ? -1 : 0;
  return 0;
}

static int
cfq_config_complete (void)
{
  const char *name;
  struct device_info di;
  struct stat st;
  char *abs;
  int fd, err;

  if (!cfq_file && tn_device_file ()) {
    cfq_file = strdup (tn_device_file ());
    if (!cfq_file) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
  }
  if (!cfq_file) {
    nbdkit_error ("cfq: the file parameter is required "
                  "(file=PATH: a regular file or a block device)");
    tn_report_errors ();
    return -1;
  }
  /* nbdkit changes to / when it daemonizes. */
  abs = realpath (cfq_file, NULL);
  if (!abs) {
    nbdkit_error ("cfq: file=%s: %m", cfq_file);
    tn_report_errors ();
    return -1;
  }
  free (cfq_file);
  cfq_file = abs;
  if (stat (cfq_file, &st) == -1) {
    nbdkit_error ("cfq: file=%s: %m", cfq_file);
    tn_report_errors ();
    return -1;
  }
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode)) {
    nbdkit_error ("cfq: file=%s: not a regular file or a block device",
                  cfq_file);
    tn_report_errors ();
    return -1;
  }
  cfq_st_dev = S_ISBLK (st.st_mode) ? st.st_rdev : st.st_dev;

  /* The model needs the device's size to check the exports' regions. */
  fd = open (cfq_file, O_RDONLY | O_CLOEXEC);
  if (fd == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", cfq_file);
    tn_report_errors ();
    return -1;
  }
  err = device_probe (fd, &di);
  close (fd);
  if (err) {
    nbdkit_error ("cfq: file=%s: probing size: %s", cfq_file,
                  strerror (-err));
    tn_report_errors ();
    return -1;
  }
  if (tn_validate (di.size) == -1)
    return -1;
  cfq_queue_depth = tn_model ()->dev.queue_depth;
  name = tn_sched_name (cfq_sched_name);
  cfq_sched_ops = sched_lookup (name);
  if (!cfq_sched_ops) {
    if (strcmp (name, "cfq") == 0)
      nbdkit_error ("cfq: scheduler=cfq: not built yet "
                    "(this build has scheduler=fifo only)");
    else
      nbdkit_error ("cfq: scheduler=%s: unknown (fifo or cfq)", name);
    return -1;
  }
  return 0;
}

#define cfq_config_help \
  "file=<PATH>          (required) The regular file or block device to serve.\n" \
  "scheduler=fifo|cfq   Scheduling policy (default fifo).\n" \
  "queue_depth=<N>      Requests at the device at once (default 32).\n" \
  "backend=io_uring|null  I/O backend; null is for benchmarks (default io_uring).\n" \
  "config=<FILE>        Tenants: [device] [scheduler] [group N] [export N].\n" \
  "control=<PATH>       Serve the control socket (cfqctl) at PATH.\n" \
  "stats=<FILE>         Write the statistics as JSON to FILE at exit.\n" \
  "KEY=VALUE            Override a [device]/[scheduler] key or model.NAME\n" \
  "                     (mode, emulate, slice_idle, quantum, model.rpm ...)."

/* Open path with flags, trying O_DIRECT first when direct. */
static int
open_file (const char *path, int flags, bool *direct)
{
  int fd;

  if (*direct) {
    fd = open (path, flags | O_DIRECT | O_CLOEXEC);
    if (fd >= 0 || errno != EINVAL)
      return fd;
    nbdkit_debug ("cfq: file=%s: O_DIRECT refused (EINVAL): "
                  "using buffered I/O", path);
    *direct = false;
  }
  return open (path, flags | O_CLOEXEC);
}

/* Open b->path (read-write, else read-only; read-only if readonly) and
 * learn its size and alignment.  0 or -1 (reported).
 */
static int
open_backing (struct backing *b, bool readonly)
{
  bool direct = true, nodirect = false;
  int flags = readonly ? O_RDONLY : O_RDWR;
  size_t align;
  int err;

  b->writable = !readonly;
  b->fds[FILE_DIRECT] = open_file (b->path, flags, &direct);
  if (b->fds[FILE_DIRECT] == -1 && !readonly &&
      (errno == EACCES || errno == EROFS || errno == EPERM)) {
    flags = O_RDONLY;
    b->writable = false;
    nbdkit_debug ("cfq: file=%s: read-only", b->path);
    b->fds[FILE_DIRECT] = open_file (b->path, flags, &direct);
  }
  if (b->fds[FILE_DIRECT] == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", b->path);
    return -1;
  }
  b->direct = direct;
  b->fds[FILE_BUFFERED] = open_file (b->path, flags, &nodirect);
  if (b->fds[FILE_BUFFERED] == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", b->path);
    return -1;
  }
  err = device_probe (b->fds[FILE_DIRECT], &b->dev);
  if (err) {
    nbdkit_error ("cfq: file=%s: probing size and block size: %s",
                  b->path, strerror (-err));
    return -1;
  }
  b->bs = b->dev.offset_align;
  align = b->dev.mem_align > 4096 ? b->dev.mem_align : 4096;
  if (b->bs > align)
    align = b->bs;
  if (align > cfq_buf_align)
    cfq_buf_align = align;
  nbdkit_debug ("cfq: file=%s: %s, %" PRIu64 " bytes, block %" PRIu32
                ", buffer alignment %" PRIu32 ", %s, slot %u", b->path,
                b->dev.is_blockdev ? "block device" : "regular file",
                b->dev.size, b->bs, b->dev.mem_align,
                b->direct ? "O_DIRECT" : "buffered", b->slot);

  /* Extents (sparseness) come from SEEK_DATA/SEEK_HOLE on files whose
   * filesystem supports them; ENXIO just means no data at all.
   */
  if (!b->dev.is_blockdev &&
      (lseek (b->fds[FILE_BUFFERED], 0, SEEK_DATA) >= 0 || errno == ENXIO))
    b->seek_data = true;
  return 0;
}

static int
cfq_get_ready (void)
{
  const struct cfg_model *m = tn_model ();
  unsigned slot = FILE_NR;

  cfq_buf_align = 4096;
  cfq_main.path = cfq_file;
  cfq_main.slot = 0;
  if (open_backing (&cfq_main, false) == -1)
    return -1;
  /* Exports with a file of their own: two more engine slots each. */
  cfq_own = calloc (m->nr_exports, sizeof *cfq_own);
  if (!cfq_own) {
    nbdkit_error ("cfq: calloc: %m");
    return -1;
  }
  cfq_nr_own = m->nr_exports;
  for (size_t i = 0; i < m->nr_exports; i++) {
    struct backing *b = &cfq_own[i];

    b->fds[0] = b->fds[1] = -1;
    if (!m->exports[i].file)
      continue;
    if (slot + FILE_NR > ENGINE_FILE_SLOTS) {
      nbdkit_error ("cfq: export '%s': too many exports with their own "
                    "file (at most %d)", m->exports[i].name,
                    ENGINE_FILE_SLOTS / FILE_NR - 1);
      return -1;
    }
    b->path = m->exports[i].file;
    b->slot = slot;
    slot += FILE_NR;
    if (open_backing (b, m->exports[i].readonly) == -1)
      return -1;
  }

  if (posix_memalign (&cfq_zero_buf, cfq_buf_align, CFQ_ZERO_CHUNK)) {
    cfq_zero_buf = NULL;
    nbdkit_error ("cfq: posix_memalign: %m");
    return -1;
  }
  memset (cfq_zero_buf, 0, CFQ_ZERO_CHUNK);
  if (pthread_key_create (&cfq_bounce_key, bounce_free)) {
    nbdkit_error ("cfq: pthread_key_create: %m");
    return -1;
  }
  cfq_key_made = true;
  return tn_prepare (cfq_sched_ops->name, cfq_main.dev.size, cfq_st_dev);
}

/* -D cfq.direct=0: every request goes through the dispatcher's loop, so
 * the direct path (engine.c) can be measured against it.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_direct = 1;

static int
cfq_after_fork (void)
{
  struct engine_cfg cfg = {
    .sched_ops = cfq_sched_ops,
    .queue_depth = cfq_queue_depth,
    .backend = cfq_backend,
    .no_direct = !cfq_debug_direct,
  };
  int err;

  for (int i = 0; i < ENGINE_FILE_SLOTS; i++)
    cfg.fds[i] = -1;
  cfg.fds[FILE_DIRECT] = cfq_main.fds[FILE_DIRECT];
  cfg.fds[FILE_BUFFERED] = cfq_main.fds[FILE_BUFFERED];
  cfg.nr_fds = FILE_NR;
  for (size_t i = 0; i < cfq_nr_own; i++)
    if (cfq_own[i].path) {
      for (int j = 0; j < FILE_NR; j++)
        cfg.fds[cfq_own[i].slot + j] = cfq_own[i].fds[j];
      if (cfq_own[i].slot + FILE_NR > cfg.nr_fds)
        cfg.nr_fds = cfq_own[i].slot + FILE_NR;
    }

  tn_engine_cfg (&cfg);
  err = engine_start (&cfg);

  if (err) {
    nbdkit_error ("cfq: starting the dispatcher (%s backend): %s",
                  cfq_backend ? cfq_backend : "io_uring", strerror (-err));
    return -1;
  }
  nbdkit_debug ("cfq: dispatcher started: scheduler=%s queue_depth=%u "
                "backend=%s", cfq_sched_ops->name, cfq_queue_depth,
                cfq_backend ? cfq_backend : "io_uring");
  return 0;
}

static void
cfq_cleanup (void)
{
  struct bounce *b;
  struct engine_stats st;

  if (engine_stop (&st))
    nbdkit_debug ("cfq: dispatcher: %" PRIu64 " requests in %" PRIu64
                  " submits over %" PRIu64 " passes (%" PRIu64
                  " direct, %" PRIu64 " worker reaps); %" PRIu64
                  " run by workers; at most %u at the device",
                  st.dispatched, st.submits, st.passes, st.direct, st.reaps,
                  st.worker_ops, st.max_inflight);
  for (int i = 0; i < FILE_NR; i++) {
    if (cfq_main.fds[i] >= 0)
      close (cfq_main.fds[i]);
    cfq_main.fds[i] = -1;
    for (size_t j = 0; j < cfq_nr_own; j++) {
      if (cfq_own[j].fds[i] >= 0)
        close (cfq_own[j].fds[i]);
      cfq_own[j].fds[i] = -1;
    }
  }
  free (cfq_zero_buf);
  cfq_zero_buf = NULL;
  /* The main thread's own bounce, if it ever had one. */
  if (cfq_key_made && (b = pthread_getspecific (cfq_bounce_key)) != NULL) {
    pthread_setspecific (cfq_bounce_key, NULL);
    bounce_free (b);
  }
}

/* The export a client asked for, and whether it may have it. */
static int
pick_export (size_t *ip)
{
  const struct cfg_model *m = tn_model ();
  const char *name = nbdkit_export_name ();
  const struct cfg_export *e;
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;

  if (!name)
    name = "";
  e = cfg_find_export (m, name);
  if (!e) {
    char list[1024] = "";
    size_t n = 0;

    for (size_t i = 0; i < m->nr_exports && n < sizeof list; i++)
      n += snprintf (list + n, sizeof list - n, "%s%s", i ? ", " : "",
                     *m->exports[i].name ? m->exports[i].name : "\"\"");
    nbdkit_error ("unknown export '%s' (exports: %s)", name, list);
    return -1;
  }
  if (e->nr_allow) {
    memset (&ss, 0, sizeof ss);
    if (nbdkit_peer_name ((struct sockaddr *) &ss, &len) == -1) {
      nbdkit_error ("export '%s': cannot tell the client's address, "
                    "refused (the export has allow=)", name);
      return -1;
    }
    if (cfg_export_allows (e, (struct sockaddr *) &ss, len) != 1) {
      nbdkit_error ("export '%s': client not in its allow= list: refused",
                    name);
      return -1;
    }
  }
  *ip = (size_t) (e - m->exports);
  return 0;
}

static void *
cfq_open (int readonly)
{
  const struct cfg_export *e;
  struct engine_qspec spec;
  struct cfq_handle *h;
  size_t i;
  int err;

  if (pick_export (&i) == -1)
    return NULL;
  e = &tn_model ()->exports[i];
  h = calloc (1, sizeof *h);
  if (!h) {
    nbdkit_error ("cfq: calloc: %m");
    return NULL;
  }
  h->b = e->file ? &cfq_own[i] : &cfq_main;
  h->readonly = readonly || !h->b->writable || e->readonly;
  h->exp = i;
  h->base = e->file ? 0 : e->offset;
  h->size = e->file ? h->b->dev.size : e->size;
  h->writes_sync = e->writes_sync;
  h->writes_async = e->writes_async;
  h->conn = tn_conn_new (i);
  if (!h->conn) {
    nbdkit_error ("cfq: calloc: %m");
    free (h);
    return NULL;
  }
  tn_qspec (i, &spec);
  err = engine_queue_new_in (&h->q, &spec, h->conn);
  if (err) {
    nbdkit_error ("cfq: creating the connection's queue: %s",
                  strerror (-err));
    tn_conn_free (h->conn);
    free (h);
    return NULL;
  }
  return h;
}

static void
cfq_close (void *handle)
{
  struct cfq_handle *h = handle;

  engine_queue_free_acct (h->q, h->conn);
  tn_conn_free (h->conn);
  free (h);
}

static int
cfq_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  const struct cfg_model *m = tn_model ();

  for (size_t i = 0; i < m->nr_exports; i++) {
    const struct cfg_export *e = &m->exports[i];
    char desc[256];

    snprintf (desc, sizeof desc, "group %s, %" PRIu64 " bytes at offset %"
              PRIu64 "%s", m->groups[e->group].name, e->size, e->offset,
              e->readonly ? ", read-only" : "");
    if (nbdkit_add_export (exports, e->name, desc) == -1)
      return -1;
  }
  return 0;
}

static const char *
cfq_default_export (int readonly, int is_tls)
{
  const struct cfg_model *m = tn_model ();

  if (cfg_find_export (m, ""))
    return "";
  return m->nr_exports ? m->exports[0].name : "";
}

static int64_t
cfq_get_size (void *handle)
{
  struct cfq_handle *h = handle;

  return (int64_t) h->size;
}

static int
cfq_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                uint32_t *maximum)
{
  /* A file whose size is not a multiple of the block could not have its
   * last bytes read by a client that honours the minimum: promise nothing
   * then (unaligned requests are served correctly either way).
   */
  struct cfq_handle *h = handle;

  *minimum = h->size % h->b->bs == 0 ? h->b->bs : 1;
  *preferred = h->b->bs > CFQ_PREFERRED_BLOCK ? h->b->bs : CFQ_PREFERRED_BLOCK;
  *maximum = CFQ_MAX_REQUEST;
  return 0;
}

static int
cfq_can_write (void *handle)
{
  struct cfq_handle *h = handle;

  return !h->readonly;
}

static int
cfq_can_flush (void *handle)
{
  return 1;
}

static int
cfq_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

static int
cfq_can_trim (void *handle)
{
  return 1;
}

static int
cfq_can_zero (void *handle)
{
  return 1;
}

static int
cfq_can_fast_zero (void *handle)
{
  return 1;
}

static int
cfq_can_multi_conn (void *handle)
{
  return 1;             /* one fd for all connections: a flush covers all */
}

static int
cfq_can_extents (void *handle)
{
  struct cfq_handle *h = handle;

  return h->b->seek_data;
}

/* Holes and data from the filesystem, like nbdkit's file plugin: metadata,
 * not device I/O, so it does not go through the scheduler.  Every lseek
 * here names its offset, so sharing the descriptor's position between
 * threads does not matter (no I/O uses that position).
 *
 * One extent per reply, always (as if the client had asked REQ_ONE; the
 * protocol lets a server answer less than asked and the client asks again
 * for the rest).  nbdkit 1.32.x keeps sending a block-status reply's
 * descriptors after the first failed send and then aborts on the closed
 * socket (server/protocol.c, send_structured_reply_block_status), so a
 * client that hangs up during a multi-descriptor reply would kill the
 * whole server even with --threads=1.  With one descriptor there is no
 * send after the failing one.
 */
static int
cfq_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
             struct nbdkit_extents *extents)
{
  struct cfq_handle *h = handle;
  const bool req_one = true;       /* see above */
  const int fd = h->b->fds[FILE_BUFFERED];
  const uint64_t base = h->base, rend = h->base + h->size;
  const uint64_t end = base + offset + count;
  off_t pos;

  /* Device offsets here; extents are reported relative to the export. */
  offset += base;
  while (offset < end) {
    pos = lseek (fd, (off_t) offset, SEEK_DATA);
    if (pos == -1) {
      if (errno != ENXIO) {
        nbdkit_error ("cfq: extents: lseek SEEK_DATA: %m");
        return -1;
      }
      pos = (off_t) h->b->dev.size;       /* a hole to the end */
    }
    if ((uint64_t) pos > rend)
      pos = (off_t) rend;
    if ((uint64_t) pos > offset) {
      if (nbdkit_add_extent (extents, offset - base, (uint64_t) pos - offset,
                             NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO) == -1)
        return -1;
      if (req_one)
        break;
      offset = (uint64_t) pos;
      continue;
    }
    pos = lseek (fd, (off_t) offset, SEEK_HOLE);
    if (pos == -1) {
      nbdkit_error ("cfq: extents: lseek SEEK_HOLE: %m");
      return -1;
    }
    if ((uint64_t) pos <= offset)       /* cannot happen: be safe */
      pos = (off_t) end;
    if ((uint64_t) pos > rend)
      pos = (off_t) rend;
    if (nbdkit_add_extent (extents, offset - base, (uint64_t) pos - offset,
                           0) == -1)
      return -1;
    if (req_one)
      break;
    offset = (uint64_t) pos;
  }
  return 0;
}

static int
cfq_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
           uint32_t flags)
{
  struct cfq_handle *h = handle;
  int err = count ? do_pread (h, buf, count, h->base + offset) : 0;

  return err ? fail ("pread", err) : 0;
}

static int
cfq_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct cfq_handle *h = handle;
  bool fua = (flags & NBDKIT_FLAG_FUA) || h->writes_sync;
  int err = count ? do_pwrite (h, buf, count, h->base + offset,
                               fua ? RWF_DSYNC : 0) : 0;

  return err ? fail ("pwrite", err) : 0;
}

static int
cfq_flush (void *handle, uint32_t flags)
{
  int err = io_flush (handle);

  return err ? fail ("flush", err) : 0;
}

static int
cfq_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct cfq_handle *h = handle;
  struct rlock l;
  uint64_t ioff = offset, ilen = count;
  int err = 0;

  if (count == 0)
    return 0;
  offset += h->base;
  ioff = offset;
  if (h->b->dev.is_blockdev) {
    /* Discard is advisory: the partial edge blocks are left as they are. */
    rmw_interior (offset, count, h->b->bs, &ioff, &ilen);
    if (ilen && cap_on (&cfq_can_discard)) {
      rl_lock (&l, ioff, ilen, false);
      err = io_discard (h, ilen, ioff);
      rl_unlock (&l);
      if (unsupported (err)) {
        cap_off (&cfq_can_discard, "BLKDISCARD");
        err = 0;
      }
    }
  }
  else if (cap_on (&cfq_can_punch)) {
    struct rmw_plan p;

    rmw_plan (offset, count, h->b->bs, &p);
    rl_lock (&l, p.span_off, p.span_len, false);
    err = io_fallocate (h, RQ_TRIM, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                        count, offset);
    rl_unlock (&l);
    if (unsupported (err)) {
      cap_off (&cfq_can_punch, "fallocate PUNCH_HOLE");
      err = 0;
    }
  }
  if (!err && (flags & NBDKIT_FLAG_FUA))
    err = io_flush (h);
  return err ? fail ("trim", err) : 0;
}

static int
cfq_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct cfq_handle *h = handle;
  bool may_trim = flags & NBDKIT_FLAG_MAY_TRIM;
  bool fast = flags & NBDKIT_FLAG_FAST_ZERO;
  bool fua = flags & NBDKIT_FLAG_FUA;
  struct rmw_plan p;
  struct rlock l;
  int err;

  if (count == 0)
    return 0;
  offset += h->base;
  /* The fast ways hold the span like a plain write would. */
  rmw_plan (offset, count, h->b->bs, &p);
  rl_lock (&l, p.span_off, p.span_len, false);
  err = try_fast_zero (h, count, offset, may_trim, fast);
  rl_unlock (&l);
  if (err == -EOPNOTSUPP) {
    if (fast)
      return fail ("zero", -ENOTSUP);
    err = write_zeroes (h, count, offset, fua);
    return err ? fail ("zero", err) : 0;
  }
  if (!err && fua)
    err = io_flush (h);
  return err ? fail ("zero", err) : 0;
}

static struct nbdkit_plugin plugin = {
  .name = "cfq",
  .longname = "nbdkit CFQ-scheduled io_uring plugin",
  .version = "0.1",
  .description = "Serve a file or block device, one CFQ queue per client",
  .unload = cfq_unload,
  .dump_plugin = cfq_dump_plugin,
  .config = cfq_config,
  .config_complete = cfq_config_complete,
  .config_help = cfq_config_help,
  .magic_config_key = "file",
  .get_ready = cfq_get_ready,
  .after_fork = cfq_after_fork,
  .cleanup = cfq_cleanup,
  .open = cfq_open,
  .close = cfq_close,
  .list_exports = cfq_list_exports,
  .default_export = cfq_default_export,
  .get_size = cfq_get_size,
  .block_size = cfq_block_size,
  .can_write = cfq_can_write,
  .can_flush = cfq_can_flush,
  .can_fua = cfq_can_fua,
  .can_trim = cfq_can_trim,
  .can_zero = cfq_can_zero,
  .can_fast_zero = cfq_can_fast_zero,
  .can_multi_conn = cfq_can_multi_conn,
  .can_extents = cfq_can_extents,
  .extents = cfq_extents,
  .pread = cfq_pread,
  .pwrite = cfq_pwrite,
  .flush = cfq_flush,
  .trim = cfq_trim,
  .zero = cfq_zero,
  .errno_is_preserved = 1,
};

NBDKIT_REGISTER_PLUGIN (plugin)
