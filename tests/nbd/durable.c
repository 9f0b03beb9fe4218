/* durable.c: does every acknowledged write survive the server being
 * killed?  One round of the kill -9 test (tests/stress/test-kill9.sh).
 *
 *   durable [-s SEED] [-c CONNS] [-B BLOCK] URI
 *
 * 1. Reads the whole export: the baseline (what a previous round left).
 * 2. Prints "writing" and starts CONNS threads, one connection each.
 *    The export is cut into blocks of BLOCK bytes (default 1000: not a
 *    multiple of any sector, so neighbouring blocks share sectors and
 *    pages, and their writes meet in the server's read-modify-write and
 *    its range lock); block k belongs to thread k % CONNS, so no two
 *    requests in flight overlap.  Each thread writes a random part of
 *    one of its blocks at a time, 30% of them with FUA, and flushes
 *    every 16 writes, with content that says which block, which write
 *    and which byte (so a byte from the wrong write or place is seen).
 *    The last block is cut short by the export's end, which should not
 *    be a multiple of 4096: the server's buffered tail path is written
 *    too.  It goes on until the server goes away (the test kills it with
 *    SIGKILL at a random moment) and remembers every write: issued,
 *    acknowledged, made durable (FUA, or acknowledged before a flush that
 *    was acknowledged).
 * 3. Reconnects (waiting up to 60 s for the restarted server), reads the
 *    export back and checks every byte: it must hold the last
 *    acknowledged write's value there, or the value of a write issued
 *    after it (one in flight at the kill may or may not have landed),
 *    or, where no write was acknowledged, the baseline or such a write.
 *    A process kill leaves the kernel with every write it completed, so
 *    this is stricter than "every FUA or flushed byte": durable bytes are
 *    counted and reported apart, and a failure says which kind it broke.
 *
 * -L N (the negative control) pretends that connection 0's N-th write was
 * acknowledged with FUA but never sends it: the check must fail.
 *
 * Exit: 0 all bytes as they must be, 1 a data integrity error, 2 any
 * other failure.  Output: "writing", then a summary line.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

#define CONNS_MAX 64
#define FLUSH_EVERY 16

/* One write to a block. */
struct wr {
  uint32_t ver;                 /* 1, 2, ... within its block */
  uint32_t off, len;            /* bytes, within the block */
  bool acked;                   /* the server said it was done */
  bool durable;                 /* FUA, or acked before an acked flush */
};

struct block {
  struct wr *w;                 /* in issue order */
  size_t n, cap;
};

static uint64_t seed = 1;
static unsigned conns = 8;
static uint32_t bsize = 1000;
static const char *uri;
static uint64_t size;           /* bytes: the export */
static uint64_t nblocks;
static struct block *blocks;
static unsigned char *baseline;
static uint64_t lose;           /* -L N: thread 0's N-th write is lost */

static uint64_t
mix (uint64_t x)
{
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

/* The byte write ver of block k puts at offset i of the block. */
static unsigned char
pattern (uint64_t k, uint32_t ver, uint32_t i)
{
  return (unsigned char) mix (seed ^ mix (k * 0x10001ULL + ver) ^ i);
}

static uint32_t
block_len (uint64_t k)
{
  uint64_t end = (k + 1) * bsize;

  return (uint32_t) ((end > size ? size : end) - k * bsize);
}

static struct nbd_handle *
connect_uri (void)
{
  struct nbd_handle *h = nbd_create ();

  if (!h)
    return NULL;
  if (nbd_connect_uri (h, uri) == -1) {
    nbd_close (h);
    return NULL;
  }
  return h;
}

static int
read_all (struct nbd_handle *h, unsigned char *buf)
{
  for (uint64_t off = 0; off < size;) {
    uint64_t n = size - off > (16u << 20) ? (16u << 20) : size - off;

    if (nbd_pread (h, buf + off, n, off, 0) == -1)
      return -1;
    off += n;
  }
  return 0;
}

struct thr {
  unsigned id;
  uint64_t rng;
  pthread_t t;
  uint64_t writes, fua, flushes;
};

static uint64_t
next (uint64_t *s)
{
  *s += 0x9e3779b97f4a7c15ULL;
  return mix (*s);
}

static void *
writer (void *arg)
{
  struct thr *t = arg;
  struct nbd_handle *h = connect_uri ();
  uint64_t mine = (nblocks + conns - 1 - t->id) / conns;
  unsigned char *buf = malloc (bsize);
  size_t *pending = calloc (FLUSH_EVERY + 1, sizeof *pending);
  uint64_t *pblock = calloc (FLUSH_EVERY + 1, sizeof *pblock);
  unsigned np = 0;

  if (!h || !buf || !pending || !pblock || mine == 0)
    goto out;
  for (;;) {
    uint64_t k = t->id + conns * (next (&t->rng) % mine);
    struct block *b = &blocks[k];
    uint32_t bl = block_len (k), off, len;
    bool fua = next (&t->rng) % 10 < 3;
    struct wr *w;

    off = (uint32_t) (next (&t->rng) % bl);
    len = 1 + (uint32_t) (next (&t->rng) % (bl - off));
    if (b->n == b->cap) {
      size_t cap = b->cap ? 2 * b->cap : 8;
      struct wr *nw = realloc (b->w, cap * sizeof *nw);

      if (!nw)
        goto out;
      b->w = nw;
      b->cap = cap;
    }
    w = &b->w[b->n];
    *w = (struct wr) { .ver = (uint32_t) b->n + 1, .off = off, .len = len };
    b->n++;                     /* issued: it may land from now on */
    for (uint32_t i = 0; i < len; i++)
      buf[i] = pattern (k, w->ver, off + i);
    if (lose && t->id == 0 && t->writes + 1 == lose) {
      /* The negative control: acknowledged and durable, never sent.
       * This thread stops, so nothing covers it up.
       */
      w->acked = w->durable = true;
      break;
    }
    if (nbd_pwrite (h, buf, len, k * bsize + off,
                    fua ? LIBNBD_CMD_FLAG_FUA : 0) == -1)
      break;
    w->acked = true;
    w->durable = fua;
    t->writes++;
    t->fua += fua;
    if (!fua) {
      pending[np] = b->n - 1;
      pblock[np++] = k;
    }
    if (np == FLUSH_EVERY) {
      if (nbd_flush (h, 0) == -1)
        break;
      t->flushes++;
      for (unsigned i = 0; i < np; i++)
        blocks[pblock[i]].w[pending[i]].durable = true;
      np = 0;
    }
  }
 out:
  free (buf);
  free (pending);
  free (pblock);
  if (h)
    nbd_close (h);
  return NULL;
}

int
main (int argc, char *argv[])
{
  struct thr thr[CONNS_MAX];
  struct nbd_handle *h;
  unsigned char *now;
  uint64_t writes = 0, fua = 0, flushes = 0, acked_bytes = 0, durable_bytes = 0;
  uint64_t bad = 0, bad_durable = 0;
  int c;

  while ((c = getopt (argc, argv, "s:c:B:L:")) != -1) {
    switch (c) {
    case 'L': lose = strtoull (optarg, NULL, 0); break;
    case 's': seed = strtoull (optarg, NULL, 0); break;
    case 'c': conns = (unsigned) strtoul (optarg, NULL, 0); break;
    case 'B': bsize = (uint32_t) strtoul (optarg, NULL, 0); break;
    default:
      fprintf (stderr, "usage: durable [-s SEED] [-c CONNS] [-B BLOCK] URI\n");
      return 2;
    }
  }
  if (optind + 1 != argc || conns < 1 || conns > CONNS_MAX || bsize < 2) {
    fprintf (stderr, "usage: durable [-s SEED] [-c CONNS] [-B BLOCK] URI\n");
    return 2;
  }
  uri = argv[optind];

  /* 1. The baseline. */
  h = connect_uri ();
  if (!h) {
    fprintf (stderr, "durable: %s\n", nbd_get_error ());
    return 2;
  }
  size = (uint64_t) nbd_get_size (h);
  nblocks = (size + bsize - 1) / bsize;
  blocks = calloc (nblocks, sizeof *blocks);
  baseline = malloc (size);
  now = malloc (size);
  if (!blocks || !baseline || !now || read_all (h, baseline) == -1) {
    fprintf (stderr, "durable: reading the baseline: %s\n", nbd_get_error ());
    return 2;
  }
  nbd_close (h);

  /* 2. Write until the server is gone. */
  printf ("writing\n");
  fflush (stdout);
  for (unsigned i = 0; i < conns; i++) {
    thr[i] = (struct thr) { .id = i, .rng = seed * 1000003 + i };
    if (pthread_create (&thr[i].t, NULL, writer, &thr[i])) {
      fprintf (stderr, "durable: pthread_create failed\n");
      return 2;
    }
  }
  for (unsigned i = 0; i < conns; i++) {
    pthread_join (thr[i].t, NULL);
    writes += thr[i].writes;
    fua += thr[i].fua;
    flushes += thr[i].flushes;
  }

  /* 3. The restarted server's view. */
  h = NULL;
  for (int i = 0; i < 600 && !h; i++) {
    h = connect_uri ();
    if (!h)
      usleep (100000);
  }
  if (!h || read_all (h, now) == -1) {
    fprintf (stderr, "durable: reading back: %s\n", nbd_get_error ());
    return 2;
  }
  nbd_close (h);
  for (uint64_t k = 0; k < nblocks; k++) {
    const struct block *b = &blocks[k];
    uint32_t bl = block_len (k);

    for (uint32_t i = 0; i < bl; i++) {
      uint64_t pos = k * bsize + i;
      size_t last = SIZE_MAX;     /* last acked write covering i */
      bool ok, durable = false;

      for (size_t j = 0; j < b->n; j++)
        if (b->w[j].acked && i >= b->w[j].off && i < b->w[j].off + b->w[j].len)
          last = j;
      for (size_t j = 0; j < b->n; j++)
        if (b->w[j].durable && i >= b->w[j].off &&
            i < b->w[j].off + b->w[j].len)
          durable = true;
      durable_bytes += durable;
      if (last != SIZE_MAX) {
        acked_bytes++;
        ok = now[pos] == pattern (k, b->w[last].ver, i);
      }
      else
        ok = now[pos] == baseline[pos];
      /* Or a write issued after that one, that may have landed. */
      for (size_t j = last == SIZE_MAX ? 0 : last + 1; j < b->n && !ok; j++)
        if (i >= b->w[j].off && i < b->w[j].off + b->w[j].len &&
            now[pos] == pattern (k, b->w[j].ver, i))
          ok = true;
      if (!ok) {
        bad_durable += durable;
        if (bad++ < 10)
          fprintf (stderr, "DATA INTEGRITY ERROR at byte %" PRIu64
                   " (block %" PRIu64 " +%" PRIu32 "): 0x%02x, %s\n", pos, k,
                   i, now[pos], last == SIZE_MAX
                   ? "not the baseline nor any write issued there"
                   : durable ? "lost a durable (FUA or flushed) write"
                   : "lost an acknowledged write");
      }
    }
  }
  printf ("%" PRIu64 " writes (%" PRIu64 " FUA), %" PRIu64 " flushes; %"
          PRIu64 " bytes acknowledged, %" PRIu64 " of them durable; %"
          PRIu64 " bad bytes (%" PRIu64 " durable)\n", writes, fua, flushes,
          acked_bytes, durable_bytes, bad, bad_durable);
  free (now);
  free (baseline);
  return bad ? 1 : 0;
}
