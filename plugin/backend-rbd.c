/* backend-rbd.c: the RBD backend (backend=rbd): the scheduler in front of
 * Ceph RBD images, through librbd's asynchronous calls (see rbd.h).
 *
 * One request, one librbd call: rbd_aio_read, rbd_aio_write,
 * rbd_aio_flush, rbd_aio_discard (a trim) or rbd_aio_write_zeroes (a
 * zero; the fallocate requests io.c makes for a file with no O_DIRECT).
 * librbd calls back on a thread of its own when a request is done; the
 * callback only pushes the request onto a lock-free stack and writes an
 * eventfd, which the dispatcher's loop watches (ev_io), as io_uring's
 * eventfd: the loop's callback takes the whole stack, under the engine
 * lock, and reports each request with engine_complete.  No thread is made
 * per request, and nothing but the stack is touched by librbd's threads.
 *
 * The direct path (engine.c): a worker that found the engine idle makes
 * the backend quiet, and librbd's callback then wakes that worker (a
 * futex) instead of the loop; the worker takes the stack itself.  So a
 * request at queue depth 1 costs one thread wake-up after librbd's, not
 * two (the loop, then the worker).  A callback that read quiet too early
 * still writes the eventfd; the loop, finding the backend quiet, leaves
 * the stack to the worker and wakes it.
 *
 * Results.  A read that comes back short (the end of the image) reads
 * the rest as zeroes.  A write acknowledged by librbd with its cache off
 * (cache=none, the default: we schedule, and a second cache would hide
 * the device's timing from the scheduler) is on the OSDs' disks; with
 * cache=page librbd's write-back cache is on, and a FUA write is
 * followed by a flush of the image before it is acknowledged.  Errors
 * become what an NBD client can be told: ENOSPC (and EDQUOT, EFBIG),
 * EROFS (and EPERM, EACCES), EINVAL, ENOMEM, EOPNOTSUPP (io.c then stops
 * asking for that way of trimming or zeroing); anything else is EIO,
 * with what the cluster said in the log.  A cluster that stops answering
 * fails each request after rbd_timeout (rados_osd_op_timeout), which
 * becomes EIO ("Connection timed out" in the log): never a hang.
 *
 * Threads: the table of images (rbdk_connect) is written on nbdkit's main
 * thread before the dispatcher starts and after it has stopped;
 * everything of struct rbd_backend but the done stack runs under the
 * engine lock (engine.h); rbdk_done runs on librbd's threads.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/futex.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>

#include <ev.h>

#include <nbdkit-plugin.h>

#include "engine.h"
#include "loglimit.h"
#include "rbd.h"
#include "setting.h"

#ifdef HAVE_RBD
#include <rados/librados.h>
#include <rbd/librbd.h>

#include "rados-conn.h"
#endif

/* ---- configuration (main thread) ---------------------------------------- */

/* The keys, one row each (setting.h). */
enum rbd_key_id {
  RBD_K_POOL,                   /* the device's and bare names' pool */
  RBD_K_IMAGE,                  /* the device, or NULL */
  RBD_K_CONF,                   /* ceph.conf, or NULL: librados' search */
  RBD_K_ID,                     /* the client's name */
  RBD_K_KEYRING,                /* a path, or NULL: the conf's */
  RBD_K_TIMEOUT,                /* ns: every wait for the cluster */
  RBD_NR_KEYS,
};

static const struct setting rbd_keys[RBD_NR_KEYS] = {
  [RBD_K_POOL] = { "pool", SETTING_TEXT, "rbd", 0, 0, 0,
    "the device's pool, and that of an image named without one" },
  [RBD_K_IMAGE] = { "image", SETTING_TEXT, NULL, 0, 0, 0,
    "the device's image (or file=rbd:POOL/IMAGE)" },
  [RBD_K_CONF] = { "conf", SETTING_TEXT, NULL, 0, 0, 0,
    "the cluster's ceph.conf (default: librados' search)" },
  [RBD_K_ID] = { "id", SETTING_TEXT, "admin", 0, 0, 0,
    "the client's name, without client." },
  [RBD_K_KEYRING] = { "keyring", SETTING_TEXT, NULL, 0, 0, 0,
    "the client's keyring, where ceph.conf does not say" },
  [RBD_K_TIMEOUT] = { "rbd_timeout", SETTING_TIME, "30s", NSEC_PER_SEC,
    NSEC_PER_SEC, 3600 * NSEC_PER_SEC,
    "how long a request waits for the cluster before it fails" },
};

static char *rbd_text[RBD_NR_KEYS];     /* SETTING_TEXT values, or NULL */
static uint64_t rbd_ns[RBD_NR_KEYS];    /* SETTING_TIME values, ns */

bool
rbdk_is_image (const char *path)
{
  return path && strncmp (path, RBD_PREFIX, strlen (RBD_PREFIX)) == 0;
}

int
rbdk_config (const char *key, const char *value)
{
  char why[100];
  int k = setting_lookup (rbd_keys, RBD_NR_KEYS, key), err;

  if (k < 0)
    return 0;
  err = setting_set (rbd_keys, k, rbd_text, rbd_ns, value, why, sizeof why);
  if (err == -ENOMEM)
    snprintf (why, sizeof why, "%s", strerror (ENOMEM));
  if (err) {
    nbdkit_error ("cfq: %s=%s: %s", key, value, why);
    return -1;
  }
  return 1;
}

int
rbdk_config_complete (void)
{
  char why[100];

  if (setting_defaults (rbd_keys, RBD_NR_KEYS, rbd_text, rbd_ns, why,
                        sizeof why)) {
    nbdkit_error ("cfq: backend=rbd: %s", why);
    return -1;
  }
  return 0;
}

char *
rbdk_spec_norm (const char *spec)
{
  const char *name = spec + strlen (RBD_PREFIX), *slash = strchr (name, '/');
  const char *pool = rbd_text[RBD_K_POOL];
  char *out;

  if (!rbdk_is_image (spec) || !*name || (slash && (slash == name ||
                                                   !slash[1] ||
                                                   strchr (slash + 1, '/')))) {
    nbdkit_error ("cfq: %s: not an image name (want %sPOOL/IMAGE or %sIMAGE)",
                  spec, RBD_PREFIX, RBD_PREFIX);
    return NULL;
  }
  if ((slash ? asprintf (&out, "%s", spec)
       : asprintf (&out, "%s%s/%s", RBD_PREFIX, pool, name)) == -1) {
    nbdkit_error ("cfq: %s: asprintf: %m", spec);
    return NULL;
  }
  return out;
}

char *
rbdk_device_spec (void)
{
  char *s, *out;

  if (!rbd_text[RBD_K_IMAGE])
    return NULL;
  if (asprintf (&s, "%s%s", RBD_PREFIX, rbd_text[RBD_K_IMAGE]) == -1) {
    nbdkit_error ("cfq: image=%s: asprintf: %m", rbd_text[RBD_K_IMAGE]);
    return NULL;
  }
  out = rbdk_spec_norm (s);
  free (s);
  return out;
}

/* ---- the images ----------------------------------------------------------- */

#define RBD_MAX_IMAGES (ENGINE_FILE_SLOTS / FILE_NR)

struct rbd_img {
  char *spec;                   /* "rbd:POOL/IMAGE" */
  char *pool, *name;            /* its parts */
  unsigned slot;                /* engine slot of FILE_DIRECT */
  bool readonly;                /* opened read-only */
  bool cache;                   /* librbd's cache on (cache=page) */
  uint64_t size;                /* bytes, at probe time */
#ifdef HAVE_RBD
  rados_ioctx_t io;             /* NULL until rbdk_connect */
  rbd_image_t img;              /* NULL until rbdk_connect */
#endif
};

static struct rbd_img rbd_imgs[RBD_MAX_IMAGES];
static unsigned rbd_nr_imgs;

/* "POOL/IMAGE" of spec: the part after the prefix. */
static const char *
what (const char *spec)
{
  return spec + strlen (RBD_PREFIX);
}

static int
split (struct rbd_img *im, const char *spec)
{
  const char *slash;

  im->spec = strdup (spec);
  if (!im->spec)
    return -1;
  slash = strchr (what (im->spec), '/');
  im->pool = strndup (what (im->spec), (size_t) (slash - what (im->spec)));
  im->name = strdup (slash + 1);
  return im->pool && im->name ? 0 : -1;
}

int
rbdk_attach (const char *spec, unsigned slot, bool readonly, bool cache,
            uint64_t *size)
{
  struct rbd_img *im;

  if (rbd_nr_imgs >= RBD_MAX_IMAGES) {
    nbdkit_error ("cfq: rbd %s: too many images (at most %d)", what (spec),
                  RBD_MAX_IMAGES);
    return -1;
  }
  im = &rbd_imgs[rbd_nr_imgs++];
  if (split (im, spec) == -1) {
    nbdkit_error ("cfq: rbd %s: strdup: %m", what (spec));
    return -1;
  }
  im->slot = slot;
  im->readonly = readonly;
  im->cache = cache;
  if (rbdk_probe (spec, &im->size) == -1)
    return -1;
  *size = im->size;
  return 0;
}

void
rbdk_unload (void)
{
  rbdk_probe_end ();
  for (unsigned i = 0; i < rbd_nr_imgs; i++) {
    free (rbd_imgs[i].spec);
    free (rbd_imgs[i].pool);
    free (rbd_imgs[i].name);
  }
  memset (rbd_imgs, 0, sizeof rbd_imgs);
  rbd_nr_imgs = 0;
  setting_free (rbd_text, RBD_NR_KEYS);
  memset (rbd_ns, 0, sizeof rbd_ns);
}

#ifndef HAVE_RBD

bool
rbdk_available (void)
{
  return false;
}

int
rbdk_probe (const char *spec, uint64_t *size)
{
  nbdkit_error ("cfq: rbd %s: backend=rbd: this plugin was not built with "
                "librbd (install librbd-dev and librados-dev, and build "
                "again)", what (spec));
  return -1;
}

void
rbdk_probe_end (void)
{
}

int
rbdk_connect (void)
{
  return rbd_nr_imgs ? -1 : 0;
}

void
rbdk_disconnect (void)
{
}

static int
rbdk_create (struct engine *e, struct ev_loop *loop,
            const struct engine_cfg *cfg, struct backend **bp)
{
  return -ENOTSUP;
}

const struct backend_ops rbd_backend_ops = {
  .name = "rbd",
  .create = rbdk_create,
};

#else /* HAVE_RBD */

bool
rbdk_available (void)
{
  return true;
}

/* The server's connection to the cluster, after the fork. */
static rados_t rbd_cluster;
/* Before the fork: the probes' connection, opened by the first probe,
 * shut down by rbdk_probe_end.
 */
static rados_t rbd_probe_cluster;
static struct loglimit rbd_errlog = LOGLIMIT_ABOUT ("failed RBD requests");

/* What an NBD client can be told of a librbd error (see the top). */
static int
rbdk_errno (int err)
{
  switch (-err) {
  case ENOSPC: case EDQUOT: case EFBIG:
    return -ENOSPC;
  case EROFS: case EPERM: case EACCES:
    return -EROFS;
  case EINVAL: case ENOMEM: case EOPNOTSUPP:
    return err;
  default:
    return -EIO;
  }
}

/* A connection, with our settings: librbd's cache as cache= says, and
 * every wait for the cluster bounded by rbd_timeout.  0 or -1 (reported,
 * about spec; *c is then NULL, so nothing shuts it down again).
 */
static int
cluster_open (rados_t *c, const char *spec, bool cache)
{
  const char *conf = rbd_text[RBD_K_CONF];
  const struct rados_conn_cfg cfg = {
    .conf = conf, .id = rbd_text[RBD_K_ID],
    .keyring = rbd_text[RBD_K_KEYRING],
    .rbd_cache = cache ? "true" : "false",
    .timeout = rbd_ns[RBD_K_TIMEOUT] / NSEC_PER_SEC,
  };
  const char *step;
  int err = rados_conn_open (c, &cfg, &step);

  if (err < 0)
    nbdkit_error ("cfq: rbd %s: %s (conf %s, id %s, waited at most %llu s):"
                  " %s", what (spec), step, conf ? conf : "default", cfg.id,
                  cfg.timeout, strerror (-err));
  return err < 0 ? -1 : 0;
}

/* Open im on cluster c: its pool's context and the image.  0 or -1. */
static int
image_open (rados_t c, struct rbd_img *im, bool readonly, uint64_t *size)
{
  rbd_image_info_t info;
  int err;

  err = rados_ioctx_create (c, im->pool, &im->io);
  if (err < 0) {
    im->io = NULL;
    nbdkit_error ("cfq: rbd %s: pool %s: %s", what (im->spec), im->pool,
                  strerror (-err));
    return -1;
  }
  err = readonly ? rbd_open_read_only (im->io, im->name, &im->img, NULL)
    : rbd_open (im->io, im->name, &im->img, NULL);
  if (err < 0) {
    im->img = NULL;
    nbdkit_error ("cfq: rbd %s: opening the image: %s", what (im->spec),
                  strerror (-err));
    return -1;
  }
  err = rbd_stat (im->img, &info, sizeof info);
  if (err < 0) {
    nbdkit_error ("cfq: rbd %s: rbd_stat: %s", what (im->spec),
                  strerror (-err));
    return -1;
  }
  *size = info.size;
  return 0;
}

static void
image_close (struct rbd_img *im)
{
  int err;

  if (im->img && (err = rbd_close (im->img)) < 0)
    nbdkit_error ("cfq: rbd %s: closing the image: %s", what (im->spec),
                  strerror (-err));
  if (im->io)
    rados_ioctx_destroy (im->io);
  im->img = NULL;
  im->io = NULL;
}

int
rbdk_probe (const char *spec, uint64_t *size)
{
  struct rbd_img im = { 0 };
  int err = 0;

  if (split (&im, spec) == -1) {
    nbdkit_error ("cfq: rbd %s: strdup: %m", what (spec));
    err = -1;
  }
  else if (rbd_probe_cluster ||
           (err = cluster_open (&rbd_probe_cluster, spec, false)) == 0) {
    err = image_open (rbd_probe_cluster, &im, true, size);
    image_close (&im);
  }
  free (im.spec);
  free (im.pool);
  free (im.name);
  return err;
}

void
rbdk_probe_end (void)
{
  if (rbd_probe_cluster)
    rados_shutdown (rbd_probe_cluster);
  rbd_probe_cluster = NULL;
}

int
rbdk_connect (void)
{
  uint64_t size;

  if (rbd_nr_imgs == 0)
    return 0;
  if (cluster_open (&rbd_cluster, rbd_imgs[0].spec, rbd_imgs[0].cache) == -1)
    return -1;
  for (unsigned i = 0; i < rbd_nr_imgs; i++) {
    struct rbd_img *im = &rbd_imgs[i];

    if (image_open (rbd_cluster, im, im->readonly, &size) == -1)
      return -1;
    if (size != im->size) {
      nbdkit_error ("cfq: rbd %s: its size changed from %" PRIu64 " to %"
                    PRIu64 " bytes while the server started", what (im->spec),
                    im->size, size);
      return -1;
    }
    nbdkit_debug ("cfq: rbd %s: open%s, %" PRIu64 " bytes, librbd cache %s,"
                  " slot %u", what (im->spec), im->readonly ? " read-only" : "",
                  size, im->cache ? "on" : "off", im->slot);
  }
  return 0;
}

void
rbdk_disconnect (void)
{
  for (unsigned i = 0; i < rbd_nr_imgs; i++)
    image_close (&rbd_imgs[i]);
  if (rbd_cluster)
    rados_shutdown (rbd_cluster);
  rbd_cluster = NULL;
}

/* The image of engine slot slot (either of its two). */
static struct rbd_img *
slot_image (unsigned slot)
{
  for (unsigned i = 0; i < rbd_nr_imgs; i++)
    if (slot - rbd_imgs[i].slot < FILE_NR)
      return &rbd_imgs[i];
  return NULL;
}

/* ---- the backend ------------------------------------------------------------ */

/* A request at librbd. */
struct rbd_io {
  struct rbd_backend *b;
  struct creq *r;               /* its request */
  struct rbd_img *im;           /* its image */
  ssize_t ret;                  /* librbd's result: -errno, or a read's
                                   bytes (0 for the others) */
  bool flushing;                /* a FUA write's flush (cache on) */
  struct rbd_io *next;          /* on the done stack or the free list */
};

struct rbd_backend {
  struct engine *e;             /* for engine_complete */
  struct ev_loop *loop;
  ev_io dw;                     /* efd readable: requests done */
  int efd;                      /* eventfd written by rbdk_done, -1 if none */
  struct rbd_io *done;          /* atomic: done, newest first (librbd's
                                   threads push, the loop or the quiet
                                   worker takes all) */
  int quiet;                    /* atomic, written under the lock: 1 while
                                   a worker waits for completions itself */
  uint32_t woken;               /* atomic: futex word of that worker, a
                                   count bumped at each wake-up */
  struct rbd_io *free;          /* [lock] rbd_io to reuse */
};

/* Wake the quiet worker (if it sleeps in rbdk_wait). */
static void
wake_reaper (struct rbd_backend *b)
{
  __atomic_add_fetch (&b->woken, 1, __ATOMIC_SEQ_CST);
  syscall (SYS_futex, &b->woken, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* On a thread of librbd's: r is done.  Push, then wake the loop (or
 * the quiet worker) if the stack was empty: otherwise the push that made
 * it non-empty woke it, and it has not taken the stack yet (done_cb
 * reads the eventfd before it takes the stack, rbdk_wait reads the
 * futex word before it looks at the stack, so nothing pushed after that
 * read waits).  One wake-up per batch, not per completion.
 */
static void
rbdk_done (rbd_completion_t c, void *arg)
{
  struct rbd_io *io = arg;
  struct rbd_backend *b = io->b;
  struct rbd_io *head = __atomic_load_n (&b->done, __ATOMIC_RELAXED);
  uint64_t one = 1;

  io->ret = rbd_aio_get_return_value (c);
  rbd_aio_release (c);
  do
    io->next = head;
  while (!__atomic_compare_exchange_n (&b->done, &head, io, true,
                                       __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  if (head)
    return;
  if (__atomic_load_n (&b->quiet, __ATOMIC_SEQ_CST))
    wake_reaper (b);
  else                  /* EAGAIN only: the counter is full, so the loop */
    (void) !write (b->efd, &one, sizeof one);       /* is woken anyway */
}

/* Hand io to librbd: 0 or -errno (then librbd has nothing of it). */
static int
issue (struct rbd_io *io)
{
  const struct creq *r = io->r;
  rbd_image_t img = io->im->img;
  rbd_completion_t c;
  int err = rbd_aio_create_completion (io, rbdk_done, &c);

  if (err < 0)
    return err;
  if (io->flushing || r->eop == EOP_FSYNC)
    err = rbd_aio_flush (img, c);
  else if (r->eop == EOP_READ)
    err = rbd_aio_read (img, r->rq.off, r->rq.len, r->buf, c);
  else if (r->eop == EOP_WRITE)
    err = rbd_aio_write (img, r->rq.off, r->rq.len, r->buf, c);
  else if (r->eop == EOP_FALLOCATE && r->rq.op == RQ_TRIM)
    err = rbd_aio_discard (img, r->rq.off, r->rq.len, c);
  else if (r->eop == EOP_FALLOCATE)
    err = rbd_aio_write_zeroes (img, r->rq.off, r->rq.len, c, 0, 0);
  else
    err = -EINVAL;
  if (err < 0)
    rbd_aio_release (c);
  return err < 0 ? err : 0;
}

static const char *
eop_name (const struct creq *r)
{
  switch (r->eop) {
  case EOP_READ: return "read";
  case EOP_WRITE: return "write";
  case EOP_FSYNC: return "flush";
  default: return r->rq.op == RQ_TRIM ? "discard" : "write zeroes";
  }
}

/* A request failed with librbd's err: logged (at most a few lines a
 * second, loglimit.h), and what the client is told; the plugin's edge
 * does not log it again (res_logged).
 */
static int
failed (const struct rbd_io *io, int err)
{
  char note[LOGLIMIT_NOTE];

  if (loglimit_line (&rbd_errlog, engine_now (), note, sizeof note))
    nbdkit_error ("cfq: rbd %s: %s%s of %" PRIu32 " bytes at %" PRIu64 ": %s"
                  "%s", what (io->im->spec), eop_name (io->r),
                  io->flushing ? " (its flush: FUA)" : "", io->r->rq.len,
                  io->r->rq.off, strerror (-err), note);
  io->r->res_logged = true;
  return rbdk_errno (err);
}

static void
io_put (struct rbd_backend *b, struct rbd_io *io)
{
  io->next = b->free;
  b->free = io;
}

/* Under the lock: io is done at librbd; finish its request, or send the
 * flush of a FUA write with the cache on.
 */
static void
finish_io (struct rbd_backend *b, struct rbd_io *io)
{
  struct creq *r = io->r;
  int res = 0;

  if (io->ret < 0)
    res = failed (io, (int) io->ret);
  else if (r->eop == EOP_READ && (uint64_t) io->ret < r->rq.len)
    /* The end of the image: the rest reads as zeroes. */
    memset ((char *) r->buf + io->ret, 0, r->rq.len - (size_t) io->ret);
  else if (r->eop == EOP_WRITE && !io->flushing && io->im->cache &&
           (r->rw_flags & RWF_DSYNC)) {
    io->flushing = true;
    res = issue (io);
    if (!res)
      return;
    res = failed (io, res);
  }
  io_put (b, io);
  engine_complete (b->e, r, res);
}

/* Under the lock: finish every request on the done stack. */
static void
take_done (struct rbd_backend *b)
{
  struct rbd_io *io, *fifo = NULL, *next;

  io = __atomic_exchange_n (&b->done, NULL, __ATOMIC_ACQUIRE);
  for (; io; io = next) {       /* oldest first */
    next = io->next;
    io->next = fifo;
    fifo = io;
  }
  for (io = fifo; io; io = next) {
    next = io->next;
    finish_io (b, io);
  }
}

static void
done_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  struct rbd_backend *b = w->data;
  uint64_t v;

  if (read (b->efd, &v, sizeof v) < 0 && errno != EAGAIN)
    return;
  /* A worker waits for completions (a wake-up from a callback that read
   * quiet before it was set): they are its to take, or it would sleep on.
   */
  if (__atomic_load_n (&b->quiet, __ATOMIC_RELAXED)) {
    wake_reaper (b);
    return;
  }
  take_done (b);
}

static int
rbdk_queue (struct backend *be, struct creq *r)
{
  struct rbd_backend *b = (struct rbd_backend *) be;
  struct rbd_img *im = slot_image (r->file);
  struct rbd_io *io = b->free;
  int err;

  if (!im || !im->img)
    return -EIO;                /* cannot happen: every slot is an image */
  if (io)
    b->free = io->next;
  else if (!(io = malloc (sizeof *io)))
    return -ENOMEM;
  *io = (struct rbd_io) { .b = b, .r = r, .im = im };
  err = issue (io);
  if (err) {
    err = failed (io, err);
    io_put (b, io);
  }
  return err;
}

/* The direct path (see the top; engine.h says what each one does). */
static int
rbdk_quiet (struct backend *be, bool on, bool kick)
{
  struct rbd_backend *b = (struct rbd_backend *) be;

  __atomic_store_n (&b->quiet, on, __ATOMIC_SEQ_CST);
  /* Loud again: what completed while quiet and is still on the stack
   * (the worker left with other requests at librbd) is the loop's.
   */
  if (!on && (kick || __atomic_load_n (&b->done, __ATOMIC_SEQ_CST))) {
    uint64_t one = 1;

    if (write (b->efd, &one, sizeof one) < 0 && errno != EAGAIN)
      return -errno;
  }
  return __atomic_load_n (&b->done, __ATOMIC_SEQ_CST) != NULL;
}

/* Without the lock: sleep until the stack is not empty, 100 ms at most
 * (then the caller looks again).
 */
static int
rbdk_wait (struct backend *be)
{
  struct rbd_backend *b = (struct rbd_backend *) be;
  struct timespec ts = { .tv_sec = 0, .tv_nsec = 100000000 };
  uint32_t seen = __atomic_load_n (&b->woken, __ATOMIC_SEQ_CST);

  if (__atomic_load_n (&b->done, __ATOMIC_SEQ_CST))
    return 0;
  if (syscall (SYS_futex, &b->woken, FUTEX_WAIT_PRIVATE, seen, &ts, NULL, 0)
      == -1 && errno != EAGAIN && errno != EINTR && errno != ETIMEDOUT)
    return -errno;
  return 0;
}

static void
rbdk_reap (struct backend *be)
{
  take_done ((struct rbd_backend *) be);
}

/* Everything went to librbd in rbdk_queue. */
static bool
rbdk_submit (struct backend *be)
{
  return false;
}

static void
rbdk_destroy (struct backend *be)
{
  struct rbd_backend *b = (struct rbd_backend *) be;
  struct rbd_io *io, *next;

  if (ev_is_active (&b->dw))
    ev_io_stop (b->loop, &b->dw);
  if (b->efd >= 0)
    close (b->efd);
  for (io = b->free; io; io = next) {
    next = io->next;
    free (io);
  }
  free (b);
}

static int
rbdk_create (struct engine *e, struct ev_loop *loop,
            const struct engine_cfg *cfg, struct backend **bp)
{
  struct rbd_backend *b;

  if (rbd_nr_imgs == 0 || !rbd_imgs[0].img)
    return -ENOTCONN;           /* rbdk_connect first */
  b = calloc (1, sizeof *b);
  if (!b)
    return -ENOMEM;
  b->e = e;
  b->loop = loop;
  b->efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (b->efd < 0) {
    int err = -errno;

    free (b);
    return err;
  }
  ev_io_init (&b->dw, done_cb, b->efd, EV_READ);
  b->dw.data = b;
  ev_io_start (loop, &b->dw);
  *bp = (struct backend *) b;
  return 0;
}

const struct backend_ops rbd_backend_ops = {
  .name = "rbd",
  .create = rbdk_create,
  .destroy = rbdk_destroy,
  .queue = rbdk_queue,
  .submit = rbdk_submit,
  .quiet = rbdk_quiet,
  .wait = rbdk_wait,
  .reap = rbdk_reap,
};

#endif /* HAVE_RBD */
