/* shadow.c: a data-integrity client for an NBD server, checked against an
 * in-memory shadow of the export.
 *
 * What it proves.  Every byte the server returns is the byte the last
 * completed write (or zero) put there, across many connections with many
 * requests in flight, for every request type a disk client sends: read,
 * write, write+FUA, trim, write-zeroes (may punch a hole, NO_HOLE, FAST_ZERO),
 * block status (a range reported as zero must read as zero) and flush, at random offsets and lengths that are often not sector
 * aligned (the server's read-modify-write path) and that include the last
 * byte of the export.  After the run all connections are closed and a fresh
 * connection reads the whole region back: a write that the server
 * acknowledged but lost, kept only in one connection's cache or put at the
 * wrong offset shows up there even if no random read happened to look.
 *
 * How.  Each connection has its own deterministic stream of requests,
 * from the seed given on the command line (our own xoshiro256** generator,
 * so a stream is the same on every libc).  A connection issues its next
 * request as soon as (a) it has fewer than D requests in flight and (b) the
 * request's byte range is disjoint from every request in flight on any
 * connection.  (b) is the NBD rule: the result of overlapping requests in
 * flight at the same time is undefined (a read racing a write may see old,
 * new or mixed data), so a test that allowed it could neither pass nor fail
 * honestly.  Flushes have no range and go at any time.  Waiting for the
 * range rather than picking another request keeps each stream independent
 * of completion timing; only the interleaving of the connections varies
 * from run to run (with -c 1 a run is fully reproducible).
 *
 * The shadow is updated when a request completes successfully (no request
 * overlapping it can be in flight, so completion order does not matter):
 *   write            shadow = data
 *   write-zeroes     shadow = 0, with or without may-trim (NBD: reads back
 *                    zero either way)
 *   fast zero        shadow = 0 on success; if the server refuses it
 *                    (ENOTSUP, allowed by the spec) the range becomes
 *                    "unknown", because the spec only says the server should
 *                    *preferably* leave it unmodified
 *   trim             the range becomes "unknown": NBD says the content after
 *                    a trim is unspecified.  Our plugin punches holes, which
 *                    read back as zeroes on a regular file, but a block device
 *                    (BLKDISCARD) need not; -z asserts zeroes instead, for a
 *                    server that documents it.
 * A read compares every known byte; unknown bytes match anything until the
 * next write or zero makes them known again.  Any server error fails the
 * run (except the fast-zero refusal above).
 *
 * Proving it detects a lost write.  Two negative controls, both run by
 * tests/test-shadow.sh, which requires exit status 1 and "DATA INTEGRITY
 * ERROR" from each:
 *  - --lose-write N: the client "loses" the N-th write of connection 0: the
 *    shadow is updated but the request is never sent, which is what a server
 *    that acknowledges and drops one write looks like.  That connection's
 *    stream ends there (so, with -c 1, nothing can overwrite the lost range
 *    before the final read-back), e.g. "-s 11 -c 1 -n 3000 --lose-write 900".
 *    In a long run a lost write can be overwritten before anything reads it:
 *    the check sees the loss only if the data survives to be read.
 *  - a deliberately broken server (an nbdkit cc plugin in test-shadow.sh: a
 *    memory disk that acknowledges every write and drops every 50th) is
 *    caught by a random read within the first hundred requests.
 * (By hand, a byte flipped in the file behind the server's back with dd
 * during a 400000-request run was NOT reported: later writes had covered
 * it before any read looked, which is why the controls above lose writes
 * late or often.)
 *
 * Exit status: 0 all data matched, 1 data integrity error, 2 any other
 * failure (usage, connection, server error, stall).
 *
 * Other modes: --region OFF:LEN confines everything to part of the export
 * (so several clients can check disjoint regions of one export at once);
 * --abort-after K issues K requests and then _exit()s with requests in
 * flight, to test a server against clients that vanish (test-disconnect.sh).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

enum op {
  OP_READ, OP_WRITE, OP_WRITE_FUA, OP_TRIM, OP_ZERO, OP_ZERO_NOHOLE,
  OP_ZERO_FAST, OP_EXTENTS, OP_FLUSH, OP_NR    /* flush stays last */
};
static const char *const op_name[OP_NR] = {
  "read", "write", "write+fua", "trim", "zero", "zero+nohole", "zero+fast",
  "extents", "flush"
};
/* Relative frequency of each request type, in percent. */
static unsigned op_weight[OP_NR] = { 30, 22, 10, 8, 8, 8, 4, 4, 6 };

/* One request: generated, then issued into a slot, then retired. */
struct req {
  enum op op;
  uint64_t seq;                 /* index in its connection's stream */
  uint64_t off;                 /* byte offset in the export */
  uint64_t len;                 /* bytes; 0 for flush */
  uint32_t flags;               /* LIBNBD_CMD_FLAG_* sent */
};

/* A request in flight on one connection. */
struct slot {
  bool busy;                    /* issued and not yet retired */
  bool done;                    /* completion callback has run */
  int err;                      /* errno the server returned, 0 = success */
  struct req rq;                /* what was sent */
  unsigned char *buf;           /* read or write data, len bytes, or NULL */
  unsigned conn;                /* connection index */
};

/* The state of a xoshiro256** generator. */
struct rng {
  uint64_t s[4];
};

/* A connection and its own request stream. */
struct conn {
  struct nbd_handle *nbd;
  struct slot *slots;           /* depth slots */
  unsigned inflight;            /* busy slots */
  unsigned most;                /* most busy slots seen at once */
  struct rng rng;               /* generates this connection's stream */
  uint64_t quota;               /* requests this connection issues */
  uint64_t issued;              /* requests issued so far */
  uint64_t writes;              /* writes issued so far */
  struct req next;              /* the next request, if have_next */
  bool have_next;
};

/* Parameters. */
static uint64_t seed;
static bool seed_set;
static uint64_t nr_ops = 20000;
static unsigned nr_conns = 8;
static unsigned depth = 32;
static uint64_t max_len = 256 * 1024;   /* bytes, read/write */
static bool trim_zero;
static bool unaligned_anyway;           /* ignore the server's minimum */
static int64_t lose_write = -1;         /* index among writes, -1 = none */
static int64_t abort_after = -1;        /* requests, -1 = never */
static const char *init_file;
static const char *dump_file;
static uint64_t region_off, region_len; /* bytes; len 0 = whole export */
static unsigned stall_secs = 120;
static bool quiet;
static const char *server;

/* State. */
static struct conn *conns;
static unsigned char *shadow;           /* expected bytes of the region */
static unsigned char *known;            /* 1 = shadow byte is defined */
static uint64_t export_size;
static uint64_t min_block = 1;          /* server's minimum block size */
static uint64_t max_block;              /* server's maximum, 0 = unknown */
static uint64_t count[OP_NR], bytes[OP_NR];
static uint64_t unaligned, fast_zero_refused;
static uint64_t zero_extent_bytes;      /* reported zero by block status */
static time_t last_progress;
static uint64_t inflight_sum, polls;   /* for the mean number in flight */

/* ---- xoshiro256**: a fixed generator, so a seed means the same stream --- */

static uint64_t
rotl (uint64_t x, int k)
{
  return (x << k) | (x >> (64 - k));
}

static uint64_t
rnd (struct rng *g)
{
  uint64_t *rs = g->s, r = rotl (rs[1] * 5, 7) * 9, t = rs[1] << 17;

  rs[2] ^= rs[0];
  rs[3] ^= rs[1];
  rs[1] ^= rs[2];
  rs[0] ^= rs[3];
  rs[2] ^= t;
  rs[3] = rotl (rs[3], 45);
  return r;
}

static void
rnd_seed (struct rng *g, uint64_t s)
{
  for (int i = 0; i < 4; i++) {          /* splitmix64 to spread the seed */
    uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    g->s[i] = z ^ (z >> 31);
  }
}

static uint64_t
rnd_below (struct rng *g, uint64_t n)
{
  return n ? rnd (g) % n : 0;
}

/* ---- small functions ---------------------------------------------------- */

static void __attribute__ ((noreturn))
die (const char *what)
{
  fprintf (stderr, "shadow: %s: %s\n", what, nbd_get_error ());
  exit (2);
}

static void *
xmalloc (size_t n)
{
  void *p = malloc (n ? n : 1);

  if (!p) {
    perror ("shadow: malloc");
    exit (2);
  }
  return p;
}

static uint64_t
parse_u64 (const char *s, const char *what)
{
  char *end;
  unsigned long long v;

  errno = 0;
  v = strtoull (s, &end, 0);
  if (errno || end == s) {
    fprintf (stderr, "shadow: %s: not a number: %s\n", what, s);
    exit (2);
  }
  switch (*end) {
  case 'k': case 'K': v <<= 10; end++; break;
  case 'm': case 'M': v <<= 20; end++; break;
  case 'g': case 'G': v <<= 30; end++; break;
  }
  if (*end && *end != ':') {
    fprintf (stderr, "shadow: %s: not a number: %s\n", what, s);
    exit (2);
  }
  return v;
}

static struct nbd_handle *
connect_server (void)
{
  struct nbd_handle *nbd = nbd_create ();

  if (!nbd)
    die ("nbd_create");
  if (nbd_add_meta_context (nbd, LIBNBD_CONTEXT_BASE_ALLOCATION) == -1)
    die ("nbd_add_meta_context");
  if (strncmp (server, "nbd", 3) == 0) {
    if (nbd_connect_uri (nbd, server) == -1)
      die ("connect");
  }
  else if (nbd_connect_unix (nbd, server) == -1)
    die ("connect");
  if (unaligned_anyway &&
      nbd_set_strict_mode (nbd, LIBNBD_STRICT_MASK & ~LIBNBD_STRICT_ALIGN) == -1)
    die ("nbd_set_strict_mode");
  return nbd;
}

/* Compare what the server returned for [off, off+len) of the export with
 * the shadow; report the first difference.  Returns the number of known
 * bytes that differ.
 */
static uint64_t
check (const unsigned char *got, uint64_t off, uint64_t len,
       const char *what)
{
  const unsigned char *exp = shadow + (off - region_off);
  const unsigned char *kn = known + (off - region_off);
  uint64_t bad = 0, first = 0, run = 0;

  if (memcmp (got, exp, len) == 0)
    return 0;
  for (uint64_t i = 0; i < len; i++) {
    if (kn[i] && got[i] != exp[i]) {
      if (bad == 0)
        first = i;
      if (bad == run && (run == 0 || first + run == i))
        run++;
      bad++;
    }
  }
  if (bad)
    fprintf (stderr,
             "shadow: DATA INTEGRITY ERROR in %s [%" PRIu64 ", +%" PRIu64 "): "
             "%" PRIu64 " bytes differ; first at offset %" PRIu64
             " (expected 0x%02x, got 0x%02x), first run %" PRIu64 " bytes\n",
             what, off, len, bad, off + first, exp[first], got[first], run);
  return bad;
}

/* ---- request generation ------------------------------------------------ */

static uint64_t
round_down (uint64_t v, uint64_t a)
{
  return v - v % a;
}

/* The next request of the stream.  Lengths: 40% small (1-4096 bytes, any
 * alignment), 40% 4 KiB multiples up to 64 KiB, 20% anything up to the
 * maximum (trim and zero: four times that).  Offsets: 45% 4 KiB aligned,
 * 54.5% any byte, 0.5% a short request ending on the last byte of the region
 * (rare because they all overlap one another: any more and they serialize
 * the whole run).
 */
static void
gen (struct rng *g, struct req *rq, uint64_t seq)
{
  uint64_t r = rnd_below (g, 100), acc = 0, len, off, lim;

  memset (rq, 0, sizeof *rq);
  rq->seq = seq;
  for (rq->op = 0; rq->op < OP_NR - 1; rq->op++) {
    acc += op_weight[rq->op];
    if (r < acc)
      break;
  }
  if (rq->op == OP_FLUSH)
    return;

  lim = max_len;
  if (rq->op == OP_TRIM || rq->op >= OP_ZERO)
    lim = 4 * max_len;
  else if (max_block && lim > max_block)
    lim = max_block;
  r = rnd_below (g, 100);
  if (r < 40)
    len = 1 + rnd_below (g, 4096);
  else if (r < 80)
    len = 4096 * (1 + rnd_below (g, 16));
  else
    len = 1 + rnd_below (g, lim);
  if (len > lim)
    len = lim;
  if (len > region_len)
    len = region_len;

  r = rnd_below (g, 1000);
  if (r < 450)
    off = round_down (rnd_below (g, region_len - len + 1), 4096);
  else if (r < 995)
    off = rnd_below (g, region_len - len + 1);
  else {
    len = 1 + rnd_below (g, len < 4096 ? len : 4096);
    off = region_len - len;
  }

  /* Honour a minimum block size if the server advertises one. */
  if (min_block > 1) {
    off = round_down (off, min_block);
    len = round_down (len, min_block);
    if (len == 0)
      len = min_block;
  }
  rq->off = region_off + off;
  rq->len = len;
  if (rq->op == OP_WRITE_FUA)
    rq->flags = LIBNBD_CMD_FLAG_FUA;
  else if (rq->op == OP_ZERO_NOHOLE)
    rq->flags = LIBNBD_CMD_FLAG_NO_HOLE;
  else if (rq->op == OP_ZERO_FAST)
    rq->flags = LIBNBD_CMD_FLAG_FAST_ZERO |
      (rnd_below (g, 2) ? LIBNBD_CMD_FLAG_NO_HOLE : 0);
  else if (rq->op == OP_ZERO && rnd_below (g, 4) == 0)
    rq->flags = LIBNBD_CMD_FLAG_FUA;
}

/* ---- issue and retire -------------------------------------------------- */

static int
completed (void *opaque, int *error)
{
  struct slot *s = opaque;

  s->done = true;
  s->err = *error;
  return 1;                     /* retire the command in libnbd */
}

static bool
overlaps_inflight (const struct req *rq)
{
  if (rq->len == 0)
    return false;
  for (unsigned c = 0; c < nr_conns; c++) {
    for (unsigned i = 0; i < depth; i++) {
      const struct slot *s = &conns[c].slots[i];
      if (s->busy && s->rq.len &&
          rq->off < s->rq.off + s->rq.len && s->rq.off < rq->off + rq->len)
        return true;
    }
  }
  return false;
}

/* Block status: a range the server calls zero must read as zero.  (A hole
 * without the zero flag promises nothing.)  Runs while the request is in
 * flight, when no request overlapping it can be, so the shadow is current.
 */
static int
extent_seen (void *opaque, const char *ctx, uint64_t off, uint32_t *ent,
             size_t nr, int *error)
{
  const struct slot *s = opaque;
  const struct req *rq = &s->rq;
  uint64_t pos = off, end = rq->off + rq->len;

  if (strcmp (ctx, LIBNBD_CONTEXT_BASE_ALLOCATION) != 0)
    return 0;
  if (off != rq->off) {
    fprintf (stderr, "shadow: block status #%" PRIu64 " for %" PRIu64
             " answered from %" PRIu64 "\n", rq->seq, rq->off, off);
    exit (2);
  }
  for (size_t i = 0; i + 1 < nr && pos < end; i += 2) {
    uint64_t stop = pos + ent[i] < end ? pos + ent[i] : end;
    if (ent[i + 1] & LIBNBD_STATE_ZERO) {
      zero_extent_bytes += stop - pos;
      for (uint64_t b = pos; b < stop; b++)
        if (known[b - region_off] && shadow[b - region_off] != 0) {
          fprintf (stderr, "shadow: DATA INTEGRITY ERROR in block status #%"
                   PRIu64 " (connection %u): [%" PRIu64 ", +%" PRIu64
                   ") is reported as reading zero, but byte %" PRIu64
                   " is 0x%02x\n", rq->seq, s->conn, pos, stop - pos, b,
                   shadow[b - region_off]);
          exit (1);
        }
    }
    pos += ent[i];
  }
  return 0;
}

/* Issue rq if its connection has room and its range is free. */
static bool
try_issue (unsigned c, const struct req *rq)
{
  struct conn *cn = &conns[c];
  nbd_completion_callback cb = { .callback = completed };
  struct slot *s = NULL;
  int64_t r = 0;

  if (cn->inflight >= depth || overlaps_inflight (rq))
    return false;
  for (unsigned i = 0; i < depth; i++)
    if (!cn->slots[i].busy) {
      s = &cn->slots[i];
      break;
    }
  s->busy = true;
  s->done = false;
  s->err = 0;
  s->rq = *rq;
  s->conn = c;
  s->buf = NULL;
  cb.user_data = s;
  if (rq->len % 512 || rq->off % 512)
    unaligned++;

  switch (rq->op) {
  case OP_READ:
    s->buf = xmalloc (rq->len);
    r = nbd_aio_pread (cn->nbd, s->buf, rq->len, rq->off, cb, 0);
    break;
  case OP_WRITE: case OP_WRITE_FUA:
    s->buf = xmalloc (rq->len);
    for (uint64_t i = 0; i < rq->len; i += 8) {
      uint64_t v = rnd (&cn->rng);
      memcpy (s->buf + i, &v, rq->len - i < 8 ? rq->len - i : 8);
    }
    if (c == 0 && (int64_t) cn->writes++ == lose_write) {
      /* The negative control: acknowledge without sending. */
      fprintf (stderr, "shadow: losing write #%" PRIu64 " of connection 0,"
               " [%" PRIu64 ", +%" PRIu64 "), on purpose\n", cn->writes - 1,
               rq->off, rq->len);
      s->done = true;
      /* End this connection's stream here, so that nothing can overwrite
       * the lost range before the final read-back looks at it.
       */
      cn->quota = cn->issued + 1;
      break;
    }
    r = nbd_aio_pwrite (cn->nbd, s->buf, rq->len, rq->off, cb, rq->flags);
    break;
  case OP_TRIM:
    r = nbd_aio_trim (cn->nbd, rq->len, rq->off, cb, 0);
    break;
  case OP_ZERO: case OP_ZERO_NOHOLE: case OP_ZERO_FAST:
    r = nbd_aio_zero (cn->nbd, rq->len, rq->off, cb, rq->flags);
    break;
  case OP_EXTENTS: {
    nbd_extent_callback ecb = { .callback = extent_seen, .user_data = s };
    r = nbd_aio_block_status (cn->nbd, rq->len, rq->off, ecb, cb, 0);
    break;
  }
  case OP_FLUSH:
    r = nbd_aio_flush (cn->nbd, cb, 0);
    break;
  case OP_NR:
    abort ();
  }
  if (r == -1) {
    fprintf (stderr, "shadow: issuing %s [%" PRIu64 ", +%" PRIu64 "): %s\n",
             op_name[rq->op], rq->off, rq->len, nbd_get_error ());
    exit (2);
  }
  cn->inflight++;
  if (cn->inflight > cn->most)
    cn->most = cn->inflight;
  count[rq->op]++;
  bytes[rq->op] += rq->len;
  return true;
}

static void
set_known (uint64_t off, uint64_t len, int v)
{
  memset (known + (off - region_off), v, len);
}

/* A request completed: check a read, or apply the change to the shadow. */
static void
retire (struct slot *s)
{
  const struct req *rq = &s->rq;
  unsigned char *sh = shadow + (rq->off - region_off);
  char what[64];

  if (s->err) {
    if (rq->op == OP_ZERO_FAST &&
        (s->err == ENOTSUP || s->err == EOPNOTSUPP)) {
      fast_zero_refused++;
      set_known (rq->off, rq->len, 0);
    }
    else {
      fprintf (stderr, "shadow: server failed %s #%" PRIu64 " [%" PRIu64
               ", +%" PRIu64 ") on connection %u: %s\n",
               op_name[rq->op], rq->seq, rq->off, rq->len, s->conn,
               strerror (s->err));
      exit (2);
    }
  }
  else {
    switch (rq->op) {
    case OP_READ:
      snprintf (what, sizeof what, "read #%" PRIu64 " (connection %u)",
                rq->seq, s->conn);
      if (check (s->buf, rq->off, rq->len, what))
        exit (1);
      break;
    case OP_WRITE: case OP_WRITE_FUA:
      memcpy (sh, s->buf, rq->len);
      set_known (rq->off, rq->len, 1);
      break;
    case OP_TRIM:
      if (trim_zero)
        memset (sh, 0, rq->len);
      set_known (rq->off, rq->len, trim_zero);
      break;
    case OP_ZERO: case OP_ZERO_NOHOLE: case OP_ZERO_FAST:
      memset (sh, 0, rq->len);
      set_known (rq->off, rq->len, 1);
      break;
    case OP_EXTENTS: case OP_FLUSH: case OP_NR:
      break;
    }
  }
  free (s->buf);
  s->buf = NULL;
  s->busy = s->done = false;
  conns[s->conn].inflight--;
  last_progress = time (NULL);
}

/* ---- the run ----------------------------------------------------------- */

static void
read_region (struct nbd_handle *nbd, unsigned char *buf)
{
  uint64_t chunk = 4 << 20;

  if (max_block && chunk > max_block)
    chunk = max_block;
  for (uint64_t o = 0; o < region_len; o += chunk) {
    uint64_t n = region_len - o < chunk ? region_len - o : chunk;
    if (nbd_pread (nbd, buf + o, n, region_off + o, 0) == -1)
      die ("read-back");
  }
}

static void
run (void)
{
  struct pollfd *pfd = xmalloc (nr_conns * sizeof *pfd);
  uint64_t issued = 0, inflight = 0;

  last_progress = time (NULL);
  for (;;) {
    bool more = inflight > 0;
    for (unsigned c = 0; c < nr_conns && !more; c++)
      more = conns[c].issued < conns[c].quota;
    if (!more)
      break;

    /* Retire what completed (before issuing: the shadow must be current). */
    for (unsigned c = 0; c < nr_conns; c++)
      for (unsigned i = 0; i < depth; i++)
        if (conns[c].slots[i].busy && conns[c].slots[i].done) {
          retire (&conns[c].slots[i]);
          inflight--;
        }

    /* Each connection issues its stream in order while the next request
     * can go.
     */
    for (unsigned c = 0; c < nr_conns; c++) {
      struct conn *cn = &conns[c];
      while (cn->issued < cn->quota) {
        if (abort_after >= 0 && issued >= (uint64_t) abort_after) {
          /* Vanish with requests in flight: no NBD_CMD_DISC, no flush. */
          fprintf (stderr, "shadow: exiting abruptly with %" PRIu64
                   " requests in flight\n", inflight);
          _exit (0);
        }
        if (!cn->have_next) {
          gen (&cn->rng, &cn->next, cn->issued);
          cn->have_next = true;
        }
        if (!try_issue (c, &cn->next))
          break;
        cn->have_next = false;
        cn->issued++;
        issued++;
        inflight++;
      }
    }
    inflight_sum += inflight;
    polls++;
    if (inflight == 0)
      continue;

    for (unsigned c = 0; c < nr_conns; c++) {
      unsigned dir = nbd_aio_get_direction (conns[c].nbd);
      pfd[c].fd = nbd_aio_get_fd (conns[c].nbd);
      pfd[c].events = 0;
      pfd[c].revents = 0;
      if (dir & LIBNBD_AIO_DIRECTION_READ)
        pfd[c].events |= POLLIN;
      if (dir & LIBNBD_AIO_DIRECTION_WRITE)
        pfd[c].events |= POLLOUT;
    }
    if (poll (pfd, nr_conns, 1000) == -1) {
      perror ("shadow: poll");
      exit (2);
    }
    for (unsigned c = 0; c < nr_conns; c++) {
      struct nbd_handle *nbd = conns[c].nbd;
      if (pfd[c].revents & (POLLIN | POLLHUP | POLLERR)) {
        if (nbd_aio_notify_read (nbd) == -1)
          die ("connection failed");
      }
      else if (pfd[c].revents & POLLOUT) {
        if (nbd_aio_notify_write (nbd) == -1)
          die ("connection failed");
      }
      if (nbd_aio_is_dead (nbd) || nbd_aio_is_closed (nbd)) {
        fprintf (stderr, "shadow: connection %u died: %s\n", c,
                 nbd_get_error ());
        exit (2);
      }
    }
    if (time (NULL) - last_progress > stall_secs) {
      fprintf (stderr, "shadow: STALL: no request completed for %u s, "
               "%" PRIu64 " in flight:\n", stall_secs, inflight);
      for (unsigned c = 0; c < nr_conns; c++)
        for (unsigned i = 0; i < depth; i++) {
          struct slot *s = &conns[c].slots[i];
          if (s->busy && !s->done)
            fprintf (stderr, "  connection %u: %s #%" PRIu64 " [%" PRIu64
                     ", +%" PRIu64 ")\n", c, op_name[s->rq.op], s->rq.seq,
                     s->rq.off, s->rq.len);
        }
      exit (2);
    }
  }
  free (pfd);
}

static void
usage (void)
{
  fprintf (stderr,
"usage: shadow -s SEED [options] SOCKET|URI\n"
"  -s, --seed N           seed of the request stream (required)\n"
"  -n, --ops N            requests to issue (default 20000)\n"
"  -c, --conns N          connections (default 8)\n"
"  -d, --depth N          requests in flight per connection (default 32)\n"
"  -l, --max-len N        longest read/write in bytes (default 256K)\n"
"  -r, --region OFF:LEN   use only this part of the export\n"
"  -i, --init FILE        the export's expected initial content\n"
"  -o, --dump FILE        write the final read-back here\n"
"  -z, --trim-zero        trimmed bytes must read back as zero\n"
"  -u, --unaligned        send unaligned requests even if the server\n"
"                         advertises a minimum block size\n"
"      --lose-write N     negative control: do not send the N-th write\n"
"      --abort-after N    _exit() after issuing N requests\n"
"      --stall N          fail if nothing completes for N s (default 120)\n"
"  -q, --quiet\n");
  exit (2);
}

int
main (int argc, char *argv[])
{
  static const struct option lopts[] = {
    { "seed", 1, 0, 's' }, { "ops", 1, 0, 'n' }, { "conns", 1, 0, 'c' },
    { "depth", 1, 0, 'd' }, { "max-len", 1, 0, 'l' },
    { "region", 1, 0, 'r' }, { "init", 1, 0, 'i' }, { "dump", 1, 0, 'o' },
    { "trim-zero", 0, 0, 'z' }, { "unaligned", 0, 0, 'u' }, { "lose-write", 1, 0, 'L' },
    { "abort-after", 1, 0, 'A' }, { "stall", 1, 0, 'S' },
    { "quiet", 0, 0, 'q' }, { 0, 0, 0, 0 }
  };
  unsigned char *back;
  uint64_t bad, unknown = 0;
  int ch;
  const char *colon;

  while ((ch = getopt_long (argc, argv, "s:n:c:d:l:r:i:o:zuq", lopts,
                            NULL)) != -1) {
    switch (ch) {
    case 's': seed = parse_u64 (optarg, "seed"); seed_set = true; break;
    case 'n': nr_ops = parse_u64 (optarg, "ops"); break;
    case 'c': nr_conns = parse_u64 (optarg, "conns"); break;
    case 'd': depth = parse_u64 (optarg, "depth"); break;
    case 'l': max_len = parse_u64 (optarg, "max-len"); break;
    case 'r':
      colon = strchr (optarg, ':');
      if (!colon)
        usage ();
      region_off = parse_u64 (optarg, "region offset");
      region_len = parse_u64 (colon + 1, "region length");
      if (region_len == 0)
        usage ();
      break;
    case 'i': init_file = optarg; break;
    case 'o': dump_file = optarg; break;
    case 'z': trim_zero = true; break;
    case 'u': unaligned_anyway = true; break;
    case 'L': lose_write = parse_u64 (optarg, "lose-write"); break;
    case 'A': abort_after = parse_u64 (optarg, "abort-after"); break;
    case 'S': stall_secs = parse_u64 (optarg, "stall"); break;
    case 'q': quiet = true; break;
    default: usage ();
    }
  }
  if (optind != argc - 1 || !seed_set || nr_conns < 1 || depth < 1 ||
      max_len < 1)
    usage ();
  server = argv[optind];

  /* Connect everything first. */
  conns = xmalloc (nr_conns * sizeof *conns);
  for (unsigned c = 0; c < nr_conns; c++) {
    conns[c].nbd = connect_server ();
    conns[c].slots = xmalloc (depth * sizeof *conns[c].slots);
    memset (conns[c].slots, 0, depth * sizeof *conns[c].slots);
    conns[c].inflight = conns[c].most = 0;
    /* Connection c's stream: seed, c.  Requests split evenly. */
    rnd_seed (&conns[c].rng, seed * 1000003 + c);
    conns[c].quota = nr_ops / nr_conns + (c < nr_ops % nr_conns);
    conns[c].issued = conns[c].writes = 0;
    conns[c].have_next = false;
  }
  struct nbd_handle *nbd0 = conns[0].nbd;
  if (nbd_get_size (nbd0) < 0)
    die ("nbd_get_size");
  export_size = nbd_get_size (nbd0);
  if (nbd_is_read_only (nbd0) == 1) {
    fprintf (stderr, "shadow: the export is read-only\n");
    exit (2);
  }
  if (nr_conns > 1 && nbd_can_multi_conn (nbd0) != 1) {
    fprintf (stderr, "shadow: the server does not advertise multi-conn: "
             "writes on one connection need not be seen on another\n");
    exit (2);
  }
  if (nbd_get_block_size (nbd0, LIBNBD_SIZE_MINIMUM) > 1) {
    if (unaligned_anyway) {
      /* The server advertises a minimum but documents that it serves
       * smaller requests (read-modify-write): send them anyway, past
       * libnbd's own check.
       */
      printf ("shadow: the server prefers %" PRId64 "-byte blocks; sending "
              "unaligned requests anyway (-u)\n",
              nbd_get_block_size (nbd0, LIBNBD_SIZE_MINIMUM));
    }
    else
      min_block = nbd_get_block_size (nbd0, LIBNBD_SIZE_MINIMUM);
  }
  if (nbd_get_block_size (nbd0, LIBNBD_SIZE_MAXIMUM) > 0)
    max_block = nbd_get_block_size (nbd0, LIBNBD_SIZE_MAXIMUM);
  if (region_len == 0)
    region_len = export_size - region_off;
  if (region_off + region_len > export_size || region_len < min_block) {
    fprintf (stderr, "shadow: region %" PRIu64 ":%" PRIu64
             " is not inside the %" PRIu64 "-byte export\n",
             region_off, region_len, export_size);
    exit (2);
  }
  /* Switch off what the server does not offer (and say so). */
  if (nbd_can_fua (nbd0) != 1) op_weight[OP_WRITE_FUA] = 0;
  if (nbd_can_trim (nbd0) != 1) op_weight[OP_TRIM] = 0;
  if (nbd_can_zero (nbd0) != 1)
    op_weight[OP_ZERO] = op_weight[OP_ZERO_NOHOLE] = 0;
  if (nbd_can_zero (nbd0) != 1 || nbd_can_fast_zero (nbd0) != 1)
    op_weight[OP_ZERO_FAST] = 0;
  if (nbd_can_flush (nbd0) != 1) op_weight[OP_FLUSH] = 0;
  if (nbd_can_meta_context (nbd0, LIBNBD_CONTEXT_BASE_ALLOCATION) != 1)
    op_weight[OP_EXTENTS] = 0;
  for (int o = 0; o < OP_NR; o++)
    if (op_weight[o] == 0)
      printf ("shadow: the server does not offer %s: not tested\n",
              op_name[o]);
  {
    unsigned sum = 0;
    for (int o = 0; o < OP_NR; o++) sum += op_weight[o];
    op_weight[OP_READ] += 100 - sum;   /* keep the total at 100 */
  }
  if (min_block > 1)
    printf ("shadow: the server wants %" PRIu64 "-byte blocks: "
            "no unaligned requests\n", min_block);
  if (!quiet)
    printf ("shadow: seed %" PRIu64 ", %" PRIu64 " requests, %u connections"
            " x %u in flight, region [%" PRIu64 ", +%" PRIu64 ") of %"
            PRIu64 " bytes, trimmed bytes %s\n", seed, nr_ops, nr_conns, depth,
            region_off, region_len, export_size,
            trim_zero ? "must read zero" : "are unspecified");
  fflush (stdout);

  /* The initial content: the server's, checked against a file if given. */
  shadow = xmalloc (region_len);
  known = xmalloc (region_len);
  memset (known, 1, region_len);
  read_region (nbd0, shadow);
  if (init_file) {
    int fd = open (init_file, O_RDONLY);
    unsigned char *want = xmalloc (region_len);
    if (fd == -1 || pread (fd, want, region_len, region_off) !=
        (ssize_t) region_len) {
      fprintf (stderr, "shadow: %s: %s\n", init_file,
               fd == -1 ? strerror (errno) : "short read");
      exit (2);
    }
    close (fd);
    /* check() compares against the shadow: make the file the shadow. */
    unsigned char *got = shadow;
    shadow = want;
    if (check (got, region_off, region_len, "initial read"))
      exit (1);
    free (got);
  }

  run ();

  /* All done: flush, hang up, and read everything back on a new
   * connection, so nothing can come from a per-connection cache.
   */
  for (unsigned c = 0; c < nr_conns; c++) {
    if (op_weight[OP_FLUSH] && nbd_flush (conns[c].nbd, 0) == -1)
      die ("final flush");
    if (nbd_shutdown (conns[c].nbd, 0) == -1)
      die ("shutdown");
    nbd_close (conns[c].nbd);
  }
  nbd0 = connect_server ();
  back = xmalloc (region_len);
  read_region (nbd0, back);
  if (nbd_shutdown (nbd0, 0) == -1)
    die ("shutdown");
  nbd_close (nbd0);
  bad = check (back, region_off, region_len, "final read-back");
  if (dump_file) {
    FILE *fp = fopen (dump_file, "w");
    if (!fp || fwrite (back, 1, region_len, fp) != region_len ||
        fclose (fp) != 0) {
      perror (dump_file);
      exit (2);
    }
  }
  free (back);
  for (uint64_t i = 0; i < region_len; i++)
    unknown += !known[i];

  if (!quiet) {
    for (int o = 0; o < OP_NR; o++)
      printf ("shadow: %-12s %8" PRIu64 " requests %12" PRIu64 " bytes\n",
              op_name[o], count[o], bytes[o]);
    unsigned most = 0;
    for (unsigned c = 0; c < nr_conns; c++)
      if (conns[c].most > most) most = conns[c].most;
    printf ("shadow: %" PRIu64 " requests not 512-byte aligned; in flight:"
            " mean %.1f, most on one connection %u; fast zeroes refused %"
            PRIu64 "; bytes reported zero by block status %" PRIu64
            "; bytes unspecified at the end %" PRIu64 "\n",
            unaligned, polls ? (double) inflight_sum / polls : 0.0, most,
            fast_zero_refused, zero_extent_bytes, unknown);
  }
  if (bad)
    return 1;
  printf ("shadow: OK\n");
  return 0;
}
