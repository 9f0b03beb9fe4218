/* calibrate.c: measuring the real device for its cost model (see
 * calibrate.h).
 *
 * The cost model (include/cost.h) is six figures at a queue depth, as
 * blk-iocost's: bytes/s of large sequential transfers, 4 KiB sequential
 * and 4 KiB random requests per second, for reads and for writes.  Each
 * is measured here the way fio would (O_DIRECT, io_uring, "depth"
 * requests kept in flight), for CALIB_FIGURE_NS each, before the server
 * takes its first client: about 4.5 s with reads only, 9 s with writes.
 *
 * What is measured must be the device, not a cache:
 *  - O_DIRECT, so never the page cache (the caller does not measure a
 *    file the file system refuses O_DIRECT for);
 *  - random requests spread over the whole device, and each sequential
 *    stream started at a random place and moved every CALIB_STREAM
 *    bytes, so the device's own cache holds little of what is read;
 *  - only allocated data: a hole of a sparse file reads as zeroes
 *    without reaching the disk and measures nothing, so the file's data
 *    is mapped first (SEEK_DATA/SEEK_HOLE) and requests go only there,
 *    in stretches of at least CALIB_BIG; with less than CALIB_MIN_DATA of
 *    it there is nothing to measure;
 *  - the first CALIB_WARMUP_NS of each figure are not counted.
 * A read figure is the median over CALIB_WINDOWS equal windows of the
 * completions in each, a write figure the median over its batches, so
 * that a stall of a few hundred ms (of the device, or of a busy machine
 * it shares) does not become the model; the requests still in flight at
 * the end change nothing.  What a nonsensical result becomes (the
 * bounds, the fallback) is core's cost_calibrate.
 *
 * Writes change no data: blocks are read (untimed) in batches and the
 * same bytes written back to the same blocks (timed), a batch at a time
 * at "depth", so a write torn by a crash still leaves what was there.
 * A read that fails stops the measurement before its batch is written.
 * Nothing else may write the device meanwhile: the server does this
 * before it serves, and the manual says so.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <liburing.h>

#include "calibrate.h"
#include "rng.h"

/* The kernel fills read buffers behind valgrind's back: tell it. */
#if defined __has_include && __has_include (<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#else
#define VALGRIND_MAKE_MEM_DEFINED(p, n) ((void) (p), (void) (n))
#endif

#define PAGE COST_PAGE                          /* bytes */
#define CALIB_STREAM ((uint64_t) 256 << 20)     /* bytes of a sequential
                                                   stream in one place */
#define CALIB_EXTENTS_MAX 65536                 /* data extents mapped */
#define CALIB_READ_BUFS 64                      /* distinct read buffers */
#define CALIB_BATCH_BYTES ((size_t) 64 << 20)   /* a write batch, at most */
#define CALIB_WINDOWS 9                         /* a read figure's windows */
#define CALIB_BATCHES_MAX 4096                  /* a write figure's batches
                                                   counted, at most */

/* A stretch of allocated data. */
struct extent {
  uint64_t off, len;            /* bytes, PAGE aligned */
  uint64_t cum;                 /* bytes of data in the extents before */
};

struct cal {
  const struct calib_dev *dev;
  struct io_uring ring;
  unsigned depth;               /* requests in flight */
  struct extent *ext;
  size_t n_ext;
  uint64_t data;                /* bytes in ext */
  uint64_t rng;                 /* xorshift64* state */
  /* The sequential stream. */
  size_t s_ext;                 /* its extent */
  uint64_t s_pos;               /* bytes: next offset */
  uint64_t s_left;              /* bytes before it moves elsewhere */
  char *why;
  size_t wlen;
};

/* The median of v[0..n), n >= 1 (v is sorted in place). */
static int
cmp_double (const void *a, const void *b)
{
  double x = *(const double *) a, y = *(const double *) b;

  return x < y ? -1 : x > y;
}

static double
median (double *v, unsigned n)
{
  qsort (v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ull + (uint64_t) ts.tv_nsec;
}

static int
add_extent (struct cal *c, uint64_t start, uint64_t end)
{
  struct extent *e;

  start = (start + PAGE - 1) / PAGE * PAGE;
  end = end / PAGE * PAGE;
  if (end <= start || end - start < CALIB_BIG)
    return 0;
  e = realloc (c->ext, (c->n_ext + 1) * sizeof *e);
  if (!e)
    return -ENOMEM;
  c->ext = e;
  e[c->n_ext].off = start;
  e[c->n_ext].len = end - start;
  e[c->n_ext].cum = c->data;
  c->data += end - start;
  c->n_ext++;
  return 0;
}

/* The allocated data of the device, into c->ext. */
static int
map_data (struct cal *c)
{
  const struct calib_dev *d = c->dev;
  uint64_t pos = 0;

  if (!d->regular)
    return add_extent (c, 0, d->size);
  while (pos < d->size) {
    off_t data, hole;
    int err;

    if (c->n_ext == CALIB_EXTENTS_MAX)  /* the rest as one: approximate */
      return add_extent (c, pos, d->size);
    data = lseek (d->fd, (off_t) pos, SEEK_DATA);
    if (data == -1 && errno == ENXIO)
      break;                    /* a hole to the end */
    if (data == -1)             /* no SEEK_DATA here: all of it is data */
      return add_extent (c, pos, d->size);
    hole = lseek (d->fd, data, SEEK_HOLE);
    if (hole == -1 || (uint64_t) hole > d->size)
      hole = (off_t) d->size;
    err = add_extent (c, (uint64_t) data, (uint64_t) hole);
    if (err)
      return err;
    pos = (uint64_t) hole;
  }
  return 0;
}

/* The extent holding data byte b (0 <= b < c->data). */
static size_t
find_extent (const struct cal *c, uint64_t b)
{
  size_t lo = 0, hi = c->n_ext;

  while (hi - lo > 1) {
    size_t mid = (lo + hi) / 2;
    if (c->ext[mid].cum <= b)
      lo = mid;
    else
      hi = mid;
  }
  return lo;
}

/* A random LEN-aligned offset of LEN bytes, all inside one extent. */
static uint64_t
random_off (struct cal *c, uint32_t len, size_t *ei)
{
  uint64_t b = xorshift64s (&c->rng) % (c->data / PAGE) * PAGE;
  size_t i = find_extent (c, b);
  const struct extent *e = &c->ext[i];
  uint64_t off = e->off + (b - e->cum) / len * len;

  if (off + len > e->off + e->len)
    off = e->off + e->len - len;
  if (ei)
    *ei = i;
  return off;
}

/* The sequential stream's next LEN bytes. */
static uint64_t
stream_next (struct cal *c, uint32_t len)
{
  uint64_t off;

  if (c->s_left < len) {
    c->s_pos = random_off (c, len, &c->s_ext);
    c->s_left = CALIB_STREAM;
  }
  if (c->s_pos + len > c->ext[c->s_ext].off + c->ext[c->s_ext].len) {
    c->s_ext = (c->s_ext + 1) % c->n_ext;
    c->s_pos = c->ext[c->s_ext].off;
  }
  off = c->s_pos;
  c->s_pos += len;
  c->s_left -= len;
  return off;
}

static void
prep (struct cal *c, bool write, void *buf, uint32_t len, uint64_t off,
      uint64_t data)
{
  struct io_uring_sqe *sqe = io_uring_get_sqe (&c->ring);

  /* The ring has room for "depth" and no more are ever in flight. */
  if (write)
    io_uring_prep_write (sqe, c->dev->fd, buf, len, off);
  else
    io_uring_prep_read (sqe, c->dev->fd, buf, len, off);
  io_uring_sqe_set_data64 (sqe, data);
}

/* Wait for the requests still in flight, whatever they return (after an
 * error: their buffers are freed next).
 */
static void
drain (struct cal *c, unsigned inflight)
{
  struct io_uring_cqe *cqe;

  io_uring_submit (&c->ring);
  while (inflight) {
    int r = io_uring_wait_cqe (&c->ring, &cqe);
    if (r == -EINTR)
      continue;
    if (r < 0)
      return;                   /* nothing more will come */
    io_uring_cqe_seen (&c->ring, cqe);
    inflight--;
  }
}

/* Submit what is queued and wait for one completion: 0, or the error
 * (said in c->why) after the INFLIGHT requests have come back.  EINTR,
 * EAGAIN and EBUSY are not errors: the caller reaps and submits again.
 */
static int
submit_wait (struct cal *c, unsigned inflight)
{
  int r = io_uring_submit_and_wait (&c->ring, 1);

  if (r < 0 && r != -EINTR && r != -EAGAIN && r != -EBUSY) {
    snprintf (c->why, c->wlen, "io_uring_submit: %s", strerror (-r));
    drain (c, inflight);
    return r;
  }
  return 0;
}

static int
failed (struct cal *c, const char *what, uint64_t off, int res, uint32_t len)
{
  if (res < 0)
    snprintf (c->why, c->wlen, "%s of %u bytes at offset %llu: %s", what,
              len, (unsigned long long) off, strerror (-res));
  else
    snprintf (c->why, c->wlen, "%s of %u bytes at offset %llu: %d bytes",
              what, len, (unsigned long long) off, res);
  return res < 0 ? res : -EIO;
}

/* Read for CALIB_FIGURE_NS, LEN bytes a request, sequential or random,
 * "depth" in flight: requests per second into *rate.
 */
static int
read_figure (struct cal *c, bool seq, uint32_t len, char *bufs,
             unsigned nbufs, double *rate)
{
  uint64_t t0 = now_ns (), warm = t0 + CALIB_WARMUP_NS;
  uint64_t end = t0 + CALIB_FIGURE_NS, k = 0;
  uint64_t win = (end - warm) / CALIB_WINDOWS;
  double count[CALIB_WINDOWS] = { 0 };
  unsigned inflight = 0;

  c->s_left = 0;                /* a new stream, elsewhere */
  for (;;) {
    struct io_uring_cqe *cqe;
    uint64_t t = now_ns ();
    int r;

    while (inflight < c->depth && t < end) {
      uint64_t off = seq ? stream_next (c, len) : random_off (c, len, NULL);
      prep (c, false, bufs + (k++ % nbufs) * (size_t) len, len, off, off);
      inflight++;
    }
    if (!inflight)
      break;
    if ((r = submit_wait (c, inflight)) < 0)
      return r;
    while (io_uring_peek_cqe (&c->ring, &cqe) == 0) {
      uint64_t off = io_uring_cqe_get_data64 (cqe);
      int res = cqe->res;

      io_uring_cqe_seen (&c->ring, cqe);
      if (res == -EAGAIN || res == -EINTR) {
        prep (c, false, bufs, len, off, off);
        continue;
      }
      inflight--;
      if (res != (int) len) {
        drain (c, inflight);
        return failed (c, "a read", off, res, len);
      }
      t = now_ns ();
      if (t >= warm && t < warm + win * CALIB_WINDOWS)
        count[(t - warm) / win]++;
    }
  }
  *rate = median (count, CALIB_WINDOWS) * 1e9 / (double) win;
  return 0;
}

/* N requests of LEN bytes at offs[i] into or from bufs + i * LEN, at most
 * "depth" in flight, all done when it returns.
 */
static int
batch (struct cal *c, bool write, const uint64_t *offs, char *bufs,
       unsigned n, uint32_t len)
{
  unsigned next = 0, inflight = 0, done = 0;

  while (done < n) {
    struct io_uring_cqe *cqe;
    int r;

    while (inflight < c->depth && next < n) {
      prep (c, write, bufs + (size_t) next * len, len, offs[next], next);
      next++;
      inflight++;
    }
    if ((r = submit_wait (c, inflight)) < 0)
      return r;
    while (io_uring_peek_cqe (&c->ring, &cqe) == 0) {
      unsigned i = (unsigned) io_uring_cqe_get_data64 (cqe);
      int res = cqe->res;

      io_uring_cqe_seen (&c->ring, cqe);
      if (res == -EAGAIN || res == -EINTR) {
        prep (c, write, bufs + (size_t) i * len, len, offs[i], i);
        continue;
      }
      inflight--;
      if (res != (int) len) {
        drain (c, inflight);
        return failed (c, write ? "a write" : "a read", offs[i], res, len);
      }
      done++;
    }
  }
  if (!write)
    VALGRIND_MAKE_MEM_DEFINED (bufs, (size_t) n * len);
  return 0;
}

/* Write for CALIB_FIGURE_NS: batches read untimed, then written back
 * timed.  The median of the batches' write rates (requests per second),
 * the first batch not counted, into *rate.
 */
static int
write_figure (struct cal *c, bool seq, uint32_t len, char *bufs,
              unsigned n, uint64_t *offs, double *rate)
{
  uint64_t t = now_ns (), end = t + CALIB_FIGURE_NS, last = 0;
  double rates[CALIB_BATCHES_MAX];
  unsigned nr = 0;
  bool first = true;

  c->s_left = 0;
  /* A batch is not started that would end past the figure's time, as
   * the last one took: the figures' sum stays the bound.
   */
  while (t + last < end) {
    uint64_t ta, tb;
    int err;

    for (unsigned i = 0; i < n; i++)
      offs[i] = seq ? stream_next (c, len) : random_off (c, len, NULL);
    err = batch (c, false, offs, bufs, n, len);
    if (err)
      return err;
    ta = now_ns ();
    err = batch (c, true, offs, bufs, n, len);
    tb = now_ns ();
    if (err)
      return err;
    if (!first && nr < CALIB_BATCHES_MAX && tb > ta)
      rates[nr++] = (double) n * 1e9 / (double) (tb - ta);
    first = false;
    last = now_ns () - t;
    t += last;
  }
  *rate = nr ? median (rates, nr) : 0;
  return 0;
}

static void *
alloc (const struct calib_dev *d, size_t n)
{
  void *p = NULL;
  size_t a = d->mem_align > PAGE ? d->mem_align : PAGE;

  return posix_memalign (&p, a, n) == 0 ? p : NULL;
}

int
calib_measure (const struct calib_dev *dev, unsigned depth, bool writes,
               struct cost_measure *ms, struct calib_note *note, char *why,
               size_t len)
{
  struct cal c = { .dev = dev, .depth = depth ? depth : 1, .why = why,
                   .wlen = len };
  uint64_t t0 = now_ns (), seed = t0 ^ ((uint64_t) getpid () << 32);
  unsigned nread = c.depth < CALIB_READ_BUFS ? c.depth : CALIB_READ_BUFS;
  char *bufs = NULL;
  uint64_t *offs = NULL;
  unsigned entries = 8;
  int err;

  memset (ms, 0, sizeof *ms);
  memset (note, 0, sizeof *note);
  if (len)
    why[0] = '\0';
  if (dev->align > PAGE || PAGE % (dev->align ? dev->align : 1)) {
    snprintf (why, len, "the device's blocks are %u bytes: 4 KiB requests"
              " cannot be measured", dev->align);
    return -EINVAL;
  }
  c.rng = splitmix64 (&seed) | 1;
  err = map_data (&c);
  if (err) {
    snprintf (why, len, "mapping the data: %s", strerror (-err));
    goto out;
  }
  note->data = c.data;
  if (c.data < CALIB_MIN_DATA) {
    snprintf (why, len, "only %llu MiB of allocated data in stretches of at"
              " least 1 MiB (%llu MiB needed): a hole reads without reaching"
              " the disk and measures nothing",
              (unsigned long long) (c.data >> 20),
              (unsigned long long) (CALIB_MIN_DATA >> 20));
    err = -ENODATA;
    goto out;
  }
  while (entries < c.depth)
    entries *= 2;
  err = io_uring_queue_init (entries, &c.ring, 0);
  if (err) {
    snprintf (why, len, "io_uring_queue_init: %s", strerror (-err));
    goto out;
  }

  /* Reads: CALIB_READ_BUFS buffers at most, shared by the requests in
   * flight (what they read is not looked at).
   */
  bufs = alloc (dev, (size_t) nread * CALIB_BIG);
  if (!bufs) {
    err = -ENOMEM;
    snprintf (why, len, "%s", strerror (ENOMEM));
    goto ring;
  }
  ms->depth = c.depth;
  ms->bps_len = CALIB_BIG;
  err = read_figure (&c, false, PAGE, bufs, nread, &ms->randiops[COST_READ]);
  if (!err)
    err = read_figure (&c, true, PAGE, bufs, nread,
                       &ms->seqiops[COST_READ]);
  if (!err)
    err = read_figure (&c, true, CALIB_BIG, bufs, nread, &ms->bps[COST_READ]);
  ms->bps[COST_READ] *= CALIB_BIG;
  free (bufs);
  bufs = NULL;

  if (!err && writes) {
    /* Writes: a batch of distinct buffers, several rounds of "depth". */
    unsigned n4 = 8 * c.depth, nb = 4 * c.depth;

    if (n4 > CALIB_BATCH_BYTES / PAGE / 4)
      n4 = CALIB_BATCH_BYTES / PAGE / 4;
    if (n4 < 16)
      n4 = 16;
    if (nb > CALIB_BATCH_BYTES / CALIB_BIG)
      nb = CALIB_BATCH_BYTES / CALIB_BIG;
    if (nb < 8)
      nb = 8;
    bufs = alloc (dev, CALIB_BATCH_BYTES);
    offs = calloc (n4 > nb ? n4 : nb, sizeof *offs);
    if (!bufs || !offs) {
      err = -ENOMEM;
      snprintf (why, len, "%s", strerror (ENOMEM));
      goto ring;
    }
    err = write_figure (&c, false, PAGE, bufs, n4, offs,
                        &ms->randiops[COST_WRITE]);
    if (!err)
      err = write_figure (&c, true, PAGE, bufs, n4, offs,
                          &ms->seqiops[COST_WRITE]);
    if (!err)
      err = write_figure (&c, true, CALIB_BIG, bufs, nb, offs,
                          &ms->bps[COST_WRITE]);
    ms->bps[COST_WRITE] *= CALIB_BIG;
    note->writes = err == 0;
    /* The reads stand without the writes; WHY says why they are not
     * there.
     */
    if (err) {
      ms->bps[COST_WRITE] = ms->seqiops[COST_WRITE] = 0;
      ms->randiops[COST_WRITE] = 0;
      err = 0;
    }
  }

 ring:
  io_uring_queue_exit (&c.ring);
 out:
  free (bufs);
  free (offs);
  free (c.ext);
  note->took = now_ns () - t0;
  return err;
}
