/* io.c: request building and the data path (see io.h).
 *
 * Each NBD command becomes one or more requests for the engine
 * (engine.h), charged to the connection's queue, which schedules them and
 * does the I/O on its own thread; the worker sleeps in engine_run until
 * they are done.
 *
 * The file is opened with O_DIRECT, so every transfer must be aligned to
 * the logical block size (b->bs) in offset and length, and its buffer to
 * b->dev.mem_align.  Requests that are not get the treatment planned by
 * core/rmw.c: reads read the aligned span into a bounce buffer (bounce.h)
 * and copy out; writes read the partial edge blocks, lay the data over
 * them and write the span (read-modify-write).  The bounce buffer comes
 * from the pool, and the engine takes it only once the scheduler has
 * dispatched the request (creq.bounce_len; engine.c, "Buffers"): a
 * write's data is laid into it then, on this worker (fill_fn), and a
 * read-modify-write reads its edge blocks first into a small buffer of
 * the worker's own, so nothing of the pool is held while a request waits
 * for its turn or its group's cap.
 *
 * A read-modify-write must not lose a concurrent write to the same edge
 * block, so every write-like command (write, trim, zero) takes a range
 * lock (rangelock.h) on its aligned span for as long as its I/O is
 * outstanding: shared for plain writes (which may overlap each other: NBD
 * gives no ordering between concurrent commands), exclusive for a
 * read-modify-write (from its edge reads until its write completes).
 * Reads take no lock.  Each file has its own range lock (backing.h), so
 * tenants on different files never wait for each other.
 *
 * A regular file whose size is not a multiple of b->bs has a last block
 * that O_DIRECT cannot write without growing the file.  Commands whose
 * span reaches into that block go through the file's second, buffered
 * descriptor instead (still scheduled like any other request); the
 * kernel keeps the page cache and direct I/O coherent for us, except in
 * one case: a buffered write into a page that is not cached reads the
 * page first; if a direct write to another block of that same page lands
 * between that read and the write-back of the now dirty page, the kernel
 * cannot drop the page after the direct write ("Page cache invalidation
 * failure on direct I/O") and the write-back later puts the page's old
 * copy of that block back over the acknowledged direct write.  (Seen: 2
 * lost writes in 3000 tries of a 512-byte direct write beside a tail
 * write, tests/test-tail-page.sh.)  So a tail write holds its whole
 * page span exclusively: direct writes and read-modify-writes to any
 * block of those pages wait for it, and it for them.  Where the
 * filesystem refuses O_DIRECT altogether, or with cache=page, both
 * descriptors are buffered: each command is one request as the client
 * sent it, no alignment is needed, no bounce buffer and nothing is
 * locked; flush is fdatasync and FUA is RWF_DSYNC as in direct mode.
 *
 * Write-back errors.  The kernel reports a write-back error once per
 * open file (errseq): each struct file has its own mark, and the first
 * fsync on it after the error, or the first write with RWF_DSYNC, is
 * told and moves the mark past it.  All connections write through the
 * same two descriptors, so if flushes used them too, the first flush
 * after a lost write-back would be told and every other connection's
 * flush would succeed, although writes it had acknowledged may be lost.
 * So each connection that may write opens its file again for itself
 * (io_conn_init, through /proc/self/fd: the same file even if its name
 * has moved), and its flushes fdatasync that descriptor, on the
 * connection's worker when the scheduler dispatches them (EOP_WORKER, as
 * a discard: io_uring's registered files are the shared ones).  Every
 * connection is then an open file of its own, and the kernel tells each
 * of every write-back error recorded on the file since its last flush,
 * however the flushes of different connections overlap, without any
 * flush waiting for another tenant's.
 *
 * Not every error is recorded there.  A failed cache flush of the disk
 * (blkdev_issue_flush, from a block device's fsync or a filesystem's) is
 * returned to that one fsync only, and writes acknowledged on any
 * connection may have been in that cache.  So the plugin also counts,
 * per file (bk_shared.wb_errors), the errors that may stand for lost
 * write-back: a failed flush, a failed RWF_DSYNC write, a failed write
 * through the buffered descriptor.  A connection remembers the count at
 * its last flush (and at its start), and its next flush fails with EIO
 * if the count has moved meanwhile, even when its own fdatasync
 * succeeded.  One report must not be counted once per connection,
 * though: an error the kernel records reaches every connection's own
 * descriptor in turn, and counting each report would tell every other
 * connection again.  So a failure of a connection's own descriptor is
 * not counted when another's has failed (bk_shared.wb_own) since this
 * connection's last flush: it is most likely the same error.  Every
 * other failure is counted: those of the shared descriptors are reports
 * nobody else gets (the shared direct mark is drained after each
 * counted failure of an own descriptor, see drain_marks).  So each
 * connection hears of each error at least once (twice, rarely, when
 * the failures and drains of several connections interleave).  Two gaps
 * are left.  A flush that succeeds, its own cache flush with it, while
 * another's fails, and reads the count just before the other raises it:
 * that connection hears at its next flush.  And an error that only one fsync
 * hears of (a cache flush), reported to a connection's own descriptor
 * when another connection's own descriptor has failed since its last
 * flush, is taken for that error and not counted: the other connections
 * are not told of it.  (An earlier design had only the count, on the
 * shared descriptor, and then the first window held for errors the
 * kernel records too, whose report only one sync gets; closing that by
 * waiting for the syncs at the device cost 12% of the IOPS of four
 * writers that flush after every write: doc/design.md.)
 *
 * A connection hears of the errors after it opens, and of one that no
 * open file had been told of when it opened (the kernel's rule for a
 * new open file).  Two flushes of one connection run one after the
 * other (flush_mu), and one of them is told.  Where the file cannot be
 * opened again (nbdkit -u/-g dropped the rights to, no /proc, no
 * descriptor left), a connection flushes the shared direct descriptor
 * instead, with the count alone, as every connection did before, and
 * the reason is logged once per file; then the first gap holds for every
 * error.  A read-only connection does so too: it has no writes of its
 * own to hear about.
 *
 * FUA writes go through the shared descriptors, with RWF_DSYNC, and
 * their sync checks the shared mark: a FUA write may fail for another
 * connection's lost write-back, and a connection whose FUA write failed
 * hears of it again at its next flush.  So that a FUA write is not
 * failed for an error already reported, a failed flush also fsyncs the
 * shared descriptors, to move their marks past it (these are flushes of
 * that connection's queue); for the buffered one it holds the tail's
 * pages meanwhile, so that a FUA tail write's own write-back error
 * reaches that writer, not this fsync.  One case is left open: a FUA
 * write whose own write-back fails through the page cache (the tail,
 * cache=page, no O_DIRECT), or in a filesystem's metadata, while another
 * sync on the same shared descriptor takes the kernel's report, is
 * acknowledged, and its connection hears of the error at its next
 * flush.
 *
 * Threads: nbdkit's workers, one command each.  The capability flags are
 * per file, shared and atomic; the zero buffer is read-only after
 * io_init.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>
#include <linux/falloc.h>
#include <linux/fs.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "bounce.h"
#include "engine.h"
#include "io.h"
#include "rangelock.h"
#include "rmw.h"

#define IO_ZERO_CHUNK (1u << 20)        /* bytes: write-zeroes fallback step */

static void *io_zero_buf;               /* IO_ZERO_CHUNK bytes of zeroes */
static uint64_t io_page;                /* bytes: the page cache's page */
static size_t io_align;                 /* bytes: our buffers' alignment,
                                           at least every file's block */
static pthread_key_t io_edge_key;       /* each worker's edge buffer */
static bool io_edge_key_made;

/* Capabilities of a file (struct bk_shared: can_punch, can_zero_range,
 * can_discard), switched off (once, atomically) when the kernel says
 * EOPNOTSUPP for that file, as nbdkit's file plugin does; the other
 * files keep theirs.
 */
static bool
cap_on (int *cap)
{
  return __atomic_load_n (cap, __ATOMIC_RELAXED);
}

static void
cap_off (const struct io_conn *c, int *cap, const char *what)
{
  if (__atomic_exchange_n (cap, 0, __ATOMIC_RELAXED))
    nbdkit_debug ("cfq: %s: %s not supported: switched off for this file",
                  c->b->path, what);
}

static bool
unsupported (int err)
{
  return err == -EOPNOTSUPP || err == -ENOTTY || err == -ENODEV;
}

int
io_init (size_t align)
{
  if (posix_memalign (&io_zero_buf, align, IO_ZERO_CHUNK)) {
    io_zero_buf = NULL;
    return -ENOMEM;
  }
  memset (io_zero_buf, 0, IO_ZERO_CHUNK);
  io_page = (uint64_t) sysconf (_SC_PAGESIZE);
  io_align = align;
  if (!io_edge_key_made) {
    int err = pthread_key_create (&io_edge_key, free);

    if (err)
      return -err;
    io_edge_key_made = true;
  }
  return 0;
}

void
io_fini (void)
{
  free (io_zero_buf);
  io_zero_buf = NULL;
}

/* The calling worker's buffer for the two edge blocks of a
 * read-modify-write: 2 * io_align bytes (io_align is at least every
 * file's block), aligned, made on first use and freed when the thread
 * ends.  A worker does one command at a time, so one is enough; and it
 * is not the pool's, so the edge reads hold nothing of the pool while
 * they wait for their turn.  NULL if out of memory.
 */
static char *
edge_buf (void)
{
  void *p = pthread_getspecific (io_edge_key);

  if (!p) {
    if (posix_memalign (&p, io_align, 2 * io_align))
      return NULL;
    if (pthread_setspecific (io_edge_key, p)) {
      free (p);
      return NULL;
    }
  }
  return p;
}

/* ---- requests to the engine ------------------------------------------------- */

static const char *
op_name (enum rq_op op)
{
  static const char *const names[] = { "read", "write", "flush", "trim",
                                       "zero" };

  return (unsigned) op < sizeof names / sizeof names[0] ? names[op] : "?";
}

/* -D cfq.bad_request=N: the N-th request built is put outside its
 * export, as a bug in the offset arithmetic would, to show that the
 * check below fails it with EIO and the server goes on.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_bad_request;

/* Every request of a connection: charged to its queue and accounting,
 * sync by the export's rule, and never outside the export's region (the
 * callbacks translate offsets; nbdkit refuses anything past get_size).  A
 * span rounded up to the block may reach past a region that ends at the
 * device's unaligned end, never further.  A request that would (a bug of
 * ours, or a device whose block is larger than the regions' alignment)
 * is failed with EIO and logged: never an assert, which a client could
 * reach and which would kill every tenant.  0 or -EIO.
 */
static int
creq_build (struct io_conn *c, struct creq *r, enum rq_op op, enum eop eop,
            int file, void *buf, uint64_t off, uint32_t len)
{
  uint64_t end = c->base + c->size + (c->b->bs ? c->b->bs - 1 : 0);

  if (cfq_debug_bad_request > 0 &&
      __atomic_sub_fetch (&cfq_debug_bad_request, 1, __ATOMIC_RELAXED) == 0)
    off += c->size + c->b->bs;
  creq_init (r, c->q, op, eop, file + c->b->slot, buf, off, len);
  r->acct = c->acct;
  if (op == RQ_WRITE || op == RQ_TRIM || op == RQ_ZERO)
    r->rq.flags |= c->writes_sync ? RQ_SYNC
      : c->writes_async ? 0 : RQ_AUTO;
  if (op != RQ_FLUSH && (off < c->base || off + len < off || off + len > end)) {
    nbdkit_error ("cfq: internal error: a %s request for [%" PRIu64 ", %"
                  PRIu64 ") outside its export [%" PRIu64 ", %" PRIu64
                  ") of %s: failed with EIO", op_name (op), off,
                  off + len, c->base, c->base + c->size, c->b->path);
    return -EIO;
  }
  return 0;
}

/* An error that may stand for lost write-back (see the top).  A request
 * that never reached the device (creq.cancelled: its client went away,
 * the server stops) is none.
 */
static void
wb_error (const struct io_conn *c)
{
  __atomic_add_fetch (&c->b->shared->wb_errors, 1, __ATOMIC_SEQ_CST);
}

/* A failure of a flush on the connection's own descriptor: counted
 * unless another connection's own descriptor has failed (counted or
 * not) since this connection's last flush.  Then it is most likely the
 * same error, which each connection's descriptor reports in turn, and
 * counting every report would tell every other connection again.  True
 * if counted.
 */
static bool
wb_error_own (const struct io_conn *c)
{
  uint64_t was = __atomic_fetch_add (&c->b->shared->wb_own, 1,
                                     __ATOMIC_SEQ_CST);

  if (was != __atomic_load_n (&c->own_seen, __ATOMIC_SEQ_CST))
    return false;
  wb_error (c);
  return true;
}

/* -D cfq.shared_flush=1: every connection flushes the shared descriptor,
 * as where the file cannot be opened again (tests/test-flush-race.sh).
 */
NBDKIT_DLL_PUBLIC int cfq_debug_shared_flush;

void
io_conn_init (struct io_conn *c, bool readonly)
{
  char proc[64];

  c->wb_seen = __atomic_load_n (&c->b->shared->wb_errors, __ATOMIC_SEQ_CST);
  c->own_seen = __atomic_load_n (&c->b->shared->wb_own, __ATOMIC_SEQ_CST);
  pthread_mutex_init (&c->flush_mu, NULL);
  c->flush_fd = -1;
  /* An RBD image has no descriptor: every flush is the image's (librbd
   * tells each flush of the writes that failed since, and the count).
   */
  if (readonly || cfq_debug_shared_flush || c->b->rbd)
    return;
  snprintf (proc, sizeof proc, "/proc/self/fd/%d", c->b->fds[FILE_DIRECT]);
  c->flush_fd = open (proc, O_RDONLY | O_CLOEXEC);
  if (c->flush_fd == -1 &&
      !__atomic_exchange_n (&c->b->shared->reopen_warned, 1, __ATOMIC_RELAXED))
    nbdkit_error ("cfq: file=%s: cannot open it again for a connection's "
                  "flushes (%s): %m; such connections flush the shared "
                  "descriptor, where a flush that runs while another is "
                  "told of a write-back error may hear of it only at its "
                  "next flush (said once)", c->b->path, proc);
}

void
io_conn_fini (struct io_conn *c)
{
  if (c->flush_fd >= 0)
    close (c->flush_fd);
  c->flush_fd = -1;
  pthread_mutex_destroy (&c->flush_mu);
}

static int
run_rw (struct io_conn *c, enum rq_op op, int file, void *buf,
        uint64_t len, uint64_t off, int rw_flags)
{
  struct creq r;
  int err;

  if (creq_build (c, &r, op, op == RQ_READ ? EOP_READ : EOP_WRITE, file,
                  buf, off, (uint32_t) len))
    return -EIO;
  r.rw_flags = rw_flags;
  r.sync_ok = file == FILE_BUFFERED || !c->b->direct;
  if (rw_flags & RWF_DSYNC)
    r.rq.flags |= RQ_FUA | RQ_SYNC;
  err = engine_run (&r);
  if (err && !r.cancelled && op == RQ_WRITE &&
      ((rw_flags & RWF_DSYNC) || file == FILE_BUFFERED || !c->b->direct))
    wb_error (c);
  return err;
}

/* What a write lays into its pool buffer once it has one: the edge
 * blocks read for a read-modify-write (if p), then the client's bytes.
 */
struct fill {
  const void *data;                     /* the client's bytes */
  uint32_t count;                       /* bytes */
  uint32_t head;                        /* bytes: where they go */
  const struct rmw_plan *p;             /* read-modify-write, or NULL */
  const char *edges;                    /* p's edge blocks, bs apart */
  uint32_t bs;                          /* bytes: a block */
};

/* Runs on the worker when the engine has taken the write's buffer. */
static int
fill_fn (struct creq *r)
{
  const struct fill *f = r->arg;
  char *b = r->buf;

  if (f->p)
    for (unsigned i = 0; i < f->p->nedges; i++)
      memcpy (b + f->p->edge_buf[i], f->edges + (size_t) i * f->bs, f->bs);
  memcpy (b + f->head, f->data, f->count);
  return 0;
}

/* A read (fill NULL) or write of [off, off+len) of the direct file
 * through a pool buffer of len bytes, which the engine takes when the
 * scheduler dispatches the request (engine.c, "Buffers"): so nothing of
 * the pool is held while the request waits for its turn or a cap.  On
 * return *bufp is the buffer (a read's data is in it; the caller puts
 * it back), or NULL if the request never had one.
 */
static int
run_bounced (struct io_conn *c, enum rq_op op, uint64_t len, uint64_t off,
             int rw_flags, struct fill *fill, void **bufp)
{
  struct creq r;
  int err;

  *bufp = NULL;
  if (creq_build (c, &r, op, op == RQ_READ ? EOP_READ : EOP_WRITE,
                  FILE_DIRECT, NULL, off, (uint32_t) len))
    return -EIO;
  r.rw_flags = rw_flags;
  if (rw_flags & RWF_DSYNC)
    r.rq.flags |= RQ_FUA | RQ_SYNC;
  r.bounce_len = (uint32_t) len;
  r.pool_grp = c->pool_grp;
  if (fill) {
    r.fill_fn = fill_fn;
    r.arg = fill;
  }
  err = engine_run (&r);
  *bufp = r.buf;
  /* Only a write the device failed is a write-back error: not one taken
   * back before dispatch (its client went away), nor one the pool
   * refused before it reached the device.
   */
  if (err && !r.cancelled && r.at_ring && op == RQ_WRITE &&
      (rw_flags & RWF_DSYNC))
    wb_error (c);
  return err;
}

static int
run_fallocate (struct io_conn *c, enum rq_op op, int mode,
               uint64_t len, uint64_t off)
{
  struct creq r;

  if (creq_build (c, &r, op, EOP_FALLOCATE, FILE_DIRECT, NULL, off,
                  (uint32_t) len))
    return -EIO;
  r.mode = mode;
  return engine_run (&r);
}

/* Hold the whole pages of [off, end) exclusively: a write through the
 * page cache, or a sync of it, against direct writes into those pages
 * (see the top).  With pages larger than the exports' alignment
 * (CFG_ALIGN, 4 KiB: 64 KiB pages on arm64 or ppc64le), the tail's page
 * may begin inside the export before the last one, and so it is locked
 * too: its writes into that page wait for the tail write.  They must:
 * a direct write of theirs into the page is undone by the page's
 * write-back as surely as one of the tail's own export, so the lock
 * cannot stop at the export's region.
 */
static void
lock_pages (struct io_conn *c, struct rl_range *l, uint64_t off,
            uint64_t end)
{
  uint64_t lo, len;

  rmw_page_span (off, end, io_page, &lo, &len);
  rl_lock (&c->b->shared->rl, l, lo, len, true);
}

/* After a failed flush: move the shared descriptors' marks past the
 * error (see the top): the direct one if this connection flushed its
 * own, and the buffered one, holding the tail's pages, if the tail is
 * written through it.  The shared direct mark is drained after every
 * failure counted from a connection's own descriptor, so if that mark
 * reports an error after one that was not counted (counted: false), it
 * is a report nobody else has had: it is counted, for the connections
 * that flush the shared descriptor.  The buffered one reports the error
 * just reported or a tail write's, which its writer counts.
 */
static void
drain_marks (struct io_conn *c, bool counted)
{
  const uint64_t size = c->b->dev.size;
  struct rl_range l;
  struct creq r;

  if (c->flush_fd >= 0 &&
      !creq_build (c, &r, RQ_FLUSH, EOP_FSYNC, FILE_DIRECT, NULL, 0, 0) &&
      engine_run (&r) && !r.cancelled && !counted)
    wb_error (c);
  if (!c->b->direct || c->b->bs == 0 || size % c->b->bs == 0)
    return;                     /* nothing is written through it */
  lock_pages (c, &l, size / c->b->bs * c->b->bs, size);
  if (!creq_build (c, &r, RQ_FLUSH, EOP_FSYNC, FILE_BUFFERED, NULL, 0, 0))
    (void) engine_run (&r);
  rl_unlock (&c->b->shared->rl, &l);
}

/* -D cfq.flush_error_delay_ms=N: the first flush the kernel fails waits
 * N ms before it is counted and goes on (on either descriptor), so that
 * tests/test-flush-race.sh can flush other connections while this one
 * has been told and nobody has counted it.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_flush_error_delay_ms;

static void
debug_error_delay (void)
{
  int ms = __atomic_exchange_n (&cfq_debug_flush_error_delay_ms, 0,
                                __ATOMIC_RELAXED);

  if (ms > 0) {
    struct timespec ts = { ms / 1000, (long) (ms % 1000) * 1000000 };

    nbdkit_debug ("cfq: debug: a failed flush goes on in %d ms", ms);
    while (nanosleep (&ts, &ts) == -1 && errno == EINTR)
      ;
  }
}

struct own_flush {
  const struct io_conn *c;
  bool counted;                 /* its failure was counted */
};

/* Runs on the worker, when the scheduler dispatches the flush: the
 * connection's own descriptor; a failure is counted at once.
 */
static int
flush_fn (struct creq *r)
{
  struct own_flush *f = r->arg;
  int err;

  if (fdatasync (f->c->flush_fd) == 0)
    return 0;
  err = errno;
  debug_error_delay ();
  f->counted = wb_error_own (f->c);
  return -err;
}

/* The flush, and the errors counted since this connection's last one
 * (see the top).
 */
static int
run_flush (struct io_conn *c)
{
  struct own_flush f = { c, false };
  uint64_t now, before;
  struct creq r;
  int err;

  pthread_mutex_lock (&c->flush_mu);
  if (c->flush_fd >= 0) {
    err = creq_build (c, &r, RQ_FLUSH, EOP_WORKER, FILE_DIRECT, NULL, 0, 0);
    r.worker_fn = flush_fn;
    r.arg = &f;
  }
  else
    err = creq_build (c, &r, RQ_FLUSH, EOP_FSYNC, FILE_DIRECT, NULL, 0, 0);
  if (!err && (err = engine_run (&r)) != 0) {
    if (r.cancelled) {
      /* Never at the device (its client went away, the server stops):
       * no error to count, no mark to drain, and nothing told.
       */
      pthread_mutex_unlock (&c->flush_mu);
      return err;
    }
    if (c->flush_fd < 0) {
      debug_error_delay ();
      wb_error (c);
    }
    drain_marks (c, f.counted);
  }
  now = __atomic_load_n (&c->b->shared->wb_errors, __ATOMIC_SEQ_CST);
  before = __atomic_exchange_n (&c->wb_seen, now, __ATOMIC_SEQ_CST);
  __atomic_store_n (&c->own_seen,
                    __atomic_load_n (&c->b->shared->wb_own, __ATOMIC_SEQ_CST),
                    __ATOMIC_SEQ_CST);
  pthread_mutex_unlock (&c->flush_mu);
  if (!err && before != now) {
    nbdkit_debug ("cfq: flush: a write-back error on %s since this "
                  "connection's last flush: EIO", c->b->path);
    err = -EIO;
  }
  return err;
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
run_discard (struct io_conn *c, uint64_t len, uint64_t off)
{
  struct creq r;

  if (creq_build (c, &r, RQ_TRIM, EOP_WORKER, FILE_DIRECT, NULL, off,
                  (uint32_t) len))
    return -EIO;
  r.worker_fn = blkdiscard_fn;
  r.arg = (void *) c->b;
  return engine_run (&r);
}

/* Does [off, off+len) reach the last, partial block of the file? */
static bool
in_tail (const struct io_conn *c, const struct rmw_plan *p)
{
  return p->span_off + p->span_len > c->b->dev.size;
}

/* -D cfq.bounce=1: no client buffer is taken as aligned, so every read
 * and write of an O_DIRECT file goes through a pool buffer, as where
 * nbdkit's request buffers are not aligned for O_DIRECT (its own
 * alignment is luck of the allocator): for tests of the pool.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_bounce;

static bool
buf_aligned (const struct io_conn *c, const void *buf)
{
  return !cfq_debug_bounce &&
    rmw_is_aligned ((uintptr_t) buf, c->b->dev.mem_align);
}

/* ---- data path ---------------------------------------------------------------- */

static int
do_pread (struct io_conn *c, void *buf, uint32_t count, uint64_t off)
{
  struct rmw_plan p;
  void *b;
  int err;

  if (!c->b->direct)
    return run_rw (c, RQ_READ, FILE_DIRECT, buf, count, off, 0);
  err = rmw_plan (off, count, c->b->bs, &p);
  if (err)
    return err;
  if (in_tail (c, &p))
    return run_rw (c, RQ_READ, FILE_BUFFERED, buf, count, off, 0);
  if (p.aligned && buf_aligned (c, buf))
    return run_rw (c, RQ_READ, FILE_DIRECT, buf, count, off, 0);
  err = run_bounced (c, RQ_READ, p.span_len, p.span_off, 0, NULL, &b);
  if (!err)
    memcpy (buf, (char *) b + p.head, count);
  if (b)
    bounce_put (b);
  return err;
}

/* Read the partial edge blocks (into the worker's edge buffer: nothing
 * of the pool is held while they wait for their turn), then write the
 * span through a pool buffer into which the edges and the data are laid
 * once the write is dispatched.  The caller holds the span exclusively.
 */
static int
do_rmw (struct io_conn *c, const void *buf, uint32_t count,
        const struct rmw_plan *p, int rw_flags)
{
  struct creq edge[2], *rs[2];
  char *edges = edge_buf ();
  struct fill f = {
    .data = buf, .count = count, .head = p->head, .p = p, .edges = edges,
    .bs = c->b->bs,
  };
  void *b;
  int err;

  if (!edges)
    return -ENOMEM;
  err = 0;
  for (unsigned i = 0; i < p->nedges && !err; i++) {
    err = creq_build (c, &edge[i], RQ_READ, EOP_READ, FILE_DIRECT,
                      edges + (size_t) i * c->b->bs, p->edge_off[i],
                      c->b->bs);
    rs[i] = &edge[i];
  }
  if (!err && p->nedges)
    err = engine_run_many (rs, p->nedges);
  if (!err)
    err = run_bounced (c, RQ_WRITE, p->span_len, p->span_off, rw_flags, &f,
                       &b);
  else
    b = NULL;
  if (b)
    bounce_put (b);
  return err;
}

static int
do_pwrite (struct io_conn *c, const void *buf, uint32_t count,
           uint64_t off, int rw_flags)
{
  struct rmw_plan p;
  struct rl_range l;
  int err;

  if (!c->b->direct)              /* no read-modify-write: nothing to lock */
    return run_rw (c, RQ_WRITE, FILE_DIRECT, (void *) buf, count, off,
                   rw_flags);
  err = rmw_plan (off, count, c->b->bs, &p);
  if (err)
    return err;
  if (in_tail (c, &p)) {
    lock_pages (c, &l, p.span_off, p.span_off + p.span_len);
    err = run_rw (c, RQ_WRITE, FILE_BUFFERED, (void *) buf, count, off,
                  rw_flags);
  }
  else if (p.aligned) {
    /* The range lock first, then the buffer, as in do_rmw (bounce.h). */
    rl_lock (&c->b->shared->rl, &l, p.span_off, p.span_len, false);
    if (buf_aligned (c, buf))
      err = run_rw (c, RQ_WRITE, FILE_DIRECT, (void *) buf, count, off,
                    rw_flags);
    else {
      struct fill f = { .data = buf, .count = count };
      void *b;

      err = run_bounced (c, RQ_WRITE, count, off, rw_flags, &f, &b);
      if (b)
        bounce_put (b);
    }
  }
  else {
    rl_lock (&c->b->shared->rl, &l, p.span_off, p.span_len, true);
    err = do_rmw (c, buf, count, &p, rw_flags);
  }
  rl_unlock (&c->b->shared->rl, &l);
  return err;
}

/* The slow zero: write zeroes through the normal write path. */
static int
write_zeroes (struct io_conn *c, uint32_t count, uint64_t off, int fua)
{
  while (count) {
    uint32_t n = count < IO_ZERO_CHUNK ? count : IO_ZERO_CHUNK;
    int err = do_pwrite (c, io_zero_buf, n, off, fua ? RWF_DSYNC : 0);

    if (err)
      return err;
    count -= n;
    off += n;
  }
  return 0;
}

/* Try the fast ways to zero; -EOPNOTSUPP when there is none. */
static int
try_fast_zero (struct io_conn *c, uint32_t count, uint64_t off,
               bool may_trim, bool fast)
{
  struct bk_shared *sh = c->b->shared;
  int err = -EOPNOTSUPP;

  if (c->b->dev.is_blockdev) {
    /* The kernel wants logical-block alignment here. */
    if (!rmw_is_aligned (off, c->b->bs) || !rmw_is_aligned (count, c->b->bs))
      return -EOPNOTSUPP;
    /* PUNCH_HOLE on a block device is a write-zeroes that may unmap and
     * never falls back to writing: fast when it works.
     */
    if (may_trim && cap_on (&sh->can_punch)) {
      err = run_fallocate (c, RQ_ZERO, FALLOC_FL_PUNCH_HOLE |
                           FALLOC_FL_KEEP_SIZE, count, off);
      if (unsupported (err))
        cap_off (c, &sh->can_punch, "fallocate PUNCH_HOLE");
    }
    /* ZERO_RANGE may be the kernel writing zeroes itself: not fast. */
    if (unsupported (err) && !fast && cap_on (&sh->can_zero_range)) {
      err = run_fallocate (c, RQ_ZERO, FALLOC_FL_ZERO_RANGE |
                           FALLOC_FL_KEEP_SIZE, count, off);
      if (unsupported (err))
        cap_off (c, &sh->can_zero_range, "fallocate ZERO_RANGE");
    }
    return unsupported (err) ? -EOPNOTSUPP : err;
  }

  if (may_trim && cap_on (&sh->can_punch)) {
    err = run_fallocate (c, RQ_ZERO, FALLOC_FL_PUNCH_HOLE |
                         FALLOC_FL_KEEP_SIZE, count, off);
    if (unsupported (err))
      cap_off (c, &sh->can_punch, "fallocate PUNCH_HOLE");
  }
  if (unsupported (err) && cap_on (&sh->can_zero_range)) {
    err = run_fallocate (c, RQ_ZERO, FALLOC_FL_ZERO_RANGE |
                         FALLOC_FL_KEEP_SIZE, count, off);
    if (unsupported (err))
      cap_off (c, &sh->can_zero_range, "fallocate ZERO_RANGE");
  }
  return unsupported (err) ? -EOPNOTSUPP : err;
}

/* ---- the commands ------------------------------------------------------------- */

int
io_pread (struct io_conn *c, void *buf, uint32_t count, uint64_t off)
{
  return count ? do_pread (c, buf, count, c->base + off) : 0;
}

int
io_pwrite (struct io_conn *c, const void *buf, uint32_t count, uint64_t off,
           bool fua)
{
  fua = fua || c->writes_sync;
  return count ? do_pwrite (c, buf, count, c->base + off,
                            fua ? RWF_DSYNC : 0) : 0;
}

int
io_flush (struct io_conn *c)
{
  return run_flush (c);
}

int
io_trim (struct io_conn *c, uint32_t count, uint64_t off, bool fua)
{
  struct bk_shared *sh = c->b->shared;
  struct rl_range l;
  uint64_t ioff, ilen = count;
  int err = 0;

  if (count == 0)
    return 0;
  off += c->base;
  ioff = off;
  if (c->b->dev.is_blockdev) {
    /* Discard is advisory: the partial edge blocks are left as they are. */
    rmw_interior (off, count, c->b->bs, &ioff, &ilen);
    if (ilen && cap_on (&sh->can_discard)) {
      rl_lock (&c->b->shared->rl, &l, ioff, ilen, false);
      err = run_discard (c, ilen, ioff);
      rl_unlock (&c->b->shared->rl, &l);
      if (unsupported (err)) {
        cap_off (c, &sh->can_discard, "BLKDISCARD");
        err = 0;
      }
    }
  }
  else if (cap_on (&sh->can_punch)) {
    struct rmw_plan p;

    rmw_plan (off, count, c->b->bs, &p);
    rl_lock (&c->b->shared->rl, &l, p.span_off, p.span_len, false);
    err = run_fallocate (c, RQ_TRIM, FALLOC_FL_PUNCH_HOLE |
                         FALLOC_FL_KEEP_SIZE, count, off);
    rl_unlock (&c->b->shared->rl, &l);
    if (unsupported (err)) {
      cap_off (c, &sh->can_punch, "fallocate PUNCH_HOLE");
      err = 0;
    }
  }
  if (!err && fua)
    err = run_flush (c);
  return err;
}

int
io_zero (struct io_conn *c, uint32_t count, uint64_t off, bool may_trim,
         bool fast, bool fua)
{
  struct rmw_plan p;
  struct rl_range l;
  int err;

  if (count == 0)
    return 0;
  off += c->base;
  /* The fast ways hold the span like a plain write would. */
  rmw_plan (off, count, c->b->bs, &p);
  rl_lock (&c->b->shared->rl, &l, p.span_off, p.span_len, false);
  err = try_fast_zero (c, count, off, may_trim, fast);
  rl_unlock (&c->b->shared->rl, &l);
  if (err == -EOPNOTSUPP) {
    if (fast)
      return -ENOTSUP;
    return write_zeroes (c, count, off, fua);
  }
  if (!err && fua)
    err = run_flush (c);
  return err;
}
