/* readload.c: random reads at a fixed size and depth, and their latency.
 *
 *   readload [-c CONNS] [-d DEPTH] [-b BYTES] [-A ALIGN] [-u SHIFT]
 *            [-t SECONDS] [-s SEED] [-V FILE:BASE] URI
 *
 * CONNS threads (default 1), one connection each, keep DEPTH reads
 * (default 1) of BYTES each (default 4096; K, M suffixes) in flight for
 * SECONDS (default 10).  Each read starts at a random multiple of ALIGN
 * (default BYTES if that is a power of two, else 4096) plus SHIFT bytes
 * (default 0; -u 1 makes every read unaligned), inside the export.  Unaligned requests are sent anyway
 * (libnbd's alignment check is off): the server under test serves them
 * by bouncing.  With -V FILE:BASE each read is compared with the bytes
 * of FILE at BASE + its offset (the export's backing region).
 *
 * At the end one line:
 *   readload: reads N errors E mismatches M mean X ms p99 Y ms max Z ms MiB/s W
 * with the latency of every read that completed, from its issue to its
 * completion.  Exit: 0, 1 a read returned wrong data, 2 any other failure
 * (a read error included).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <libnbd.h>

#define DEPTH_MAX 64
#define CONNS_MAX 64

static const char *uri;
static unsigned conns = 1, depth = 1;
static uint64_t bytes = 4096, align_to, shift;
static double seconds = 10;
static uint64_t seed = 1;
static int vfd = -1;                    /* -V: the backing file */
static uint64_t vbase;                  /* -V: the export's offset in it */
static uint64_t size;                   /* bytes: the export */

struct slot {
  struct conn *cn;
  void *buf;
  uint64_t off;                         /* bytes: the read's offset */
  uint64_t t0;                          /* ns: when issued */
  bool busy;
};

struct conn {
  pthread_t th;
  struct nbd_handle *nbd;
  uint64_t rng;
  struct slot slots[DEPTH_MAX];
  uint64_t *lat;                        /* ns, one per completed read */
  size_t nlat, cap;
  uint64_t errors, mismatches;
  void *check;                          /* -V: the expected bytes */
};

static struct conn cs[CONNS_MAX];

static void
die (const char *what)
{
  fprintf (stderr, "readload: %s: %s\n", what, nbd_get_error ());
  exit (2);
}

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000 + (uint64_t) ts.tv_nsec;
}

static uint64_t
rnd (uint64_t *s)
{
  uint64_t x = (*s += 0x9e3779b97f4a7c15);

  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9;
  x = (x ^ (x >> 27)) * 0x94d049bb133111eb;
  return x ^ (x >> 31);
}

static uint64_t
num (const char *s, const char *what)
{
  char *end;
  uint64_t v = strtoull (s, &end, 0);

  switch (*end) {
  case 'k': case 'K': v <<= 10; end++; break;
  case 'm': case 'M': v <<= 20; end++; break;
  case 'g': case 'G': v <<= 30; end++; break;
  }
  if (*end && *end != ':') {
    fprintf (stderr, "readload: %s: not a number: %s\n", what, s);
    exit (2);
  }
  return v;
}

static int issue (struct conn *cn, struct slot *s);

static int
done_cb (void *user_data, int *error)
{
  struct slot *s = user_data;
  struct conn *cn = s->cn;

  s->busy = false;
  if (*error) {
    fprintf (stderr, "readload: read of %" PRIu64 " bytes at %" PRIu64
             ": %s\n", bytes, s->off, strerror (*error));
    cn->errors++;
    return 1;
  }
  if (cn->nlat == cn->cap) {
    cn->cap = cn->cap ? 2 * cn->cap : 4096;
    cn->lat = realloc (cn->lat, cn->cap * sizeof *cn->lat);
    if (!cn->lat) {
      perror ("readload: realloc");
      exit (2);
    }
  }
  cn->lat[cn->nlat++] = now_ns () - s->t0;
  if (vfd >= 0) {
    ssize_t r = pread (vfd, cn->check, bytes, (off_t) (vbase + s->off));

    if (r != (ssize_t) bytes || memcmp (cn->check, s->buf, bytes)) {
      fprintf (stderr, "readload: read of %" PRIu64 " bytes at %" PRIu64
               ": wrong data\n", bytes, s->off);
      cn->mismatches++;
    }
  }
  return 1;
}

static int
issue (struct conn *cn, struct slot *s)
{
  uint64_t slots = (size - bytes - shift) / align_to + 1;

  s->off = rnd (&cn->rng) % slots * align_to + shift;
  s->t0 = now_ns ();
  s->busy = true;
  if (nbd_aio_pread (cn->nbd, s->buf, bytes, s->off,
                     (nbd_completion_callback) { .callback = done_cb,
                                                 .user_data = s }, 0) == -1)
    die ("nbd_aio_pread");
  return 0;
}

static void *
run (void *arg)
{
  struct conn *cn = arg;
  uint64_t end = now_ns () + (uint64_t) (seconds * 1e9);

  for (;;) {
    bool more = now_ns () < end, any = false;

    for (unsigned i = 0; i < depth; i++) {
      struct slot *s = &cn->slots[i];

      if (!s->busy && more && !cn->errors)
        issue (cn, s);
      any |= s->busy;
    }
    if (!any)
      break;
    if (nbd_poll (cn->nbd, 100) == -1)
      die ("nbd_poll");
  }
  return NULL;
}

static int
cmp_u64 (const void *a, const void *b)
{
  uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;

  return x < y ? -1 : x > y;
}

int
main (int argc, char **argv)
{
  uint64_t t0, total = 0, errors = 0, mism = 0, *all, sum = 0;
  size_t n = 0;
  int opt;

  while ((opt = getopt (argc, argv, "c:d:b:A:u:t:s:V:")) != -1)
    switch (opt) {
    case 'c': conns = (unsigned) num (optarg, "-c"); break;
    case 'd': depth = (unsigned) num (optarg, "-d"); break;
    case 'b': bytes = num (optarg, "-b"); break;
    case 'A': align_to = num (optarg, "-A"); break;
    case 'u': shift = num (optarg, "-u"); break;
    case 't': seconds = strtod (optarg, NULL); break;
    case 's': seed = num (optarg, "-s"); break;
    case 'V': {
      const char *colon = strchr (optarg, ':');
      char *path;

      if (!colon) {
        fprintf (stderr, "readload: -V FILE:BASE\n");
        exit (2);
      }
      path = strndup (optarg, (size_t) (colon - optarg));
      vfd = open (path, O_RDONLY | O_CLOEXEC);
      if (vfd == -1) {
        perror (path);
        exit (2);
      }
      free (path);
      vbase = num (colon + 1, "-V BASE");
      break;
    }
    default:
      fprintf (stderr, "usage: readload [-c CONNS] [-d DEPTH] [-b BYTES] "
               "[-A ALIGN] [-u SHIFT] [-t SECONDS] [-s SEED] [-V FILE:BASE] "
               "URI\n");
      exit (2);
    }
  if (optind != argc - 1 || conns < 1 || conns > CONNS_MAX || depth < 1 ||
      depth > DEPTH_MAX || bytes < 1) {
    fprintf (stderr, "readload: one URI; 1 <= CONNS <= %d, 1 <= DEPTH <= "
             "%d, BYTES >= 1\n", CONNS_MAX, DEPTH_MAX);
    exit (2);
  }
  uri = argv[optind];
  if (!align_to)
    align_to = (bytes & (bytes - 1)) == 0 ? bytes : 4096;

  for (unsigned c = 0; c < conns; c++) {
    struct conn *cn = &cs[c];

    cn->nbd = nbd_create ();
    if (!cn->nbd)
      die ("nbd_create");
    if (nbd_connect_uri (cn->nbd, uri) == -1)
      die ("connect");
    if (nbd_set_strict_mode (cn->nbd,
                             LIBNBD_STRICT_MASK & ~LIBNBD_STRICT_ALIGN) == -1)
      die ("nbd_set_strict_mode");
    cn->rng = seed * 1000003 + c;
    for (unsigned i = 0; i < depth; i++) {
      cn->slots[i].cn = cn;
      cn->slots[i].buf = malloc (bytes);
      if (!cn->slots[i].buf) {
        perror ("readload: malloc");
        exit (2);
      }
    }
    if (vfd >= 0 && !(cn->check = malloc (bytes))) {
      perror ("readload: malloc");
      exit (2);
    }
  }
  {
    int64_t s = nbd_get_size (cs[0].nbd);

    if (s == -1)
      die ("nbd_get_size");
    size = (uint64_t) s;
    if (size < bytes + shift) {
      fprintf (stderr, "readload: the export (%" PRIu64 " bytes) is smaller "
               "than a read\n", size);
      exit (2);
    }
  }

  t0 = now_ns ();
  for (unsigned c = 0; c < conns; c++)
    if (pthread_create (&cs[c].th, NULL, run, &cs[c])) {
      perror ("readload: pthread_create");
      exit (2);
    }
  for (unsigned c = 0; c < conns; c++) {
    pthread_join (cs[c].th, NULL);
    n += cs[c].nlat;
    errors += cs[c].errors;
    mism += cs[c].mismatches;
  }
  t0 = now_ns () - t0;

  all = malloc ((n ? n : 1) * sizeof *all);
  if (!all) {
    perror ("readload: malloc");
    exit (2);
  }
  n = 0;
  for (unsigned c = 0; c < conns; c++) {
    memcpy (all + n, cs[c].lat, cs[c].nlat * sizeof *all);
    n += cs[c].nlat;
    nbd_shutdown (cs[c].nbd, 0);
    nbd_close (cs[c].nbd);
  }
  qsort (all, n, sizeof *all, cmp_u64);
  for (size_t i = 0; i < n; i++)
    sum += all[i];
  total = n * bytes;
  printf ("readload: reads %zu errors %" PRIu64 " mismatches %" PRIu64
          " mean %.3f ms p99 %.3f ms max %.3f ms MiB/s %.1f\n", n, errors,
          mism, n ? sum / 1e6 / (double) n : 0.,
          n ? all[(n * 99 + 99) / 100 - 1] / 1e6 : 0.,
          n ? all[n - 1] / 1e6 : 0., total / 1048576. / (t0 / 1e9));
  free (all);
  return mism ? 1 : errors ? 2 : 0;
}
