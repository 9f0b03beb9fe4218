/* devmodel.c: a rotational disk and a queued SSD, as completion-time models.
 *
 * The simulator needs devices whose behaviour makes the scheduler's choices
 * matter the way they matter on real hardware, and nothing more:
 *
 *  - On a disk, the cost of a request depends on where the previous one
 *    left the head.  A sequential stream costs only its transfer; a random
 *    one pays a seek that grows with the distance (settle time plus a term
 *    in the square root of the distance: the arm accelerates then
 *    decelerates, so long seeks are cheaper per byte than short ones) and
 *    a rotational delay.  This is why CFQ idles: serving the next request
 *    of the same sequential reader costs 0.4 ms, while switching to a
 *    random reader costs 12 ms and then 12 ms again to come back.
 *
 *        |  seek_max ............................. ***
 *   seek |                             *************
 *        |                  ***********
 *        |         *********
 *        |   ******
 *        | **
 *        |* seek_min
 *        +------------------------------------------------ distance
 *        0                                          capacity
 *
 *    A short forward skip (up to "near" bytes, default 1 MiB, about a
 *    track) needs no seek: the head waits while the gap passes under it,
 *    gap / rate.  This is what makes interleaved readers of one region
 *    slow unless their requests are merged into one stream.
 *
 *  - On an SSD there is no position.  The device has N channels (dies,
 *    queues) that work in parallel; a request waits for the earliest free
 *    channel and holds it for a fixed latency plus its transfer at the
 *    channel's share of the bandwidth.  Depth therefore buys throughput up
 *    to N outstanding requests and only latency beyond, which is what makes
 *    idling expensive on such a device (the complaint behind IOPS mode).
 *
 * The disk serves requests one at a time.  Without command queueing it
 * takes them in submission order: the scheduler, not the device, decides
 * the order (a drive without NCQ, or with queue_depth 1).  With NCQ
 * ("ncq" = N) the drive itself picks, each time the head frees, the one of
 * the first N queued requests it can reach soonest: shortest positioning
 * time first, where positioning is the seek plus the wait for the sector
 * to come round.  For that each queued request's sector has an angle
 * (drawn at submission) and the platter turns with the clock, so the
 * drive can weigh a long seek that lands just before its sector against a
 * short one that just misses it.  This is what makes a SATA disk faster
 * at depth (about 2x from 1 to 32 on random reads), and what a scheduler
 * gives up by keeping the queue shallow.  Two things real drives do are
 * kept: a flush (and a trim, which SATA cannot queue either) is a
 * barrier, and a request that has waited "ncq_age" goes next, so a far
 * request cannot starve behind a stream of near ones.
 *
 * Because the order is decided when the head frees, a completion time is
 * not known at submission: the model is a queue (devmodel_submit, then
 * devmodel_next / devmodel_complete hand requests back in the device's
 * order).  It decides lazily: whenever it is called at time "now" it first
 * serves, in order, every choice the head faced before now, each among the
 * requests that had arrived by then.  The SSD's completion times are known
 * at submission; they wait in the same queue.
 *
 * Both models are deterministic; the only random draw, the disk's
 * rotational position, comes from a private xorshift64* generator seeded
 * with splitmix64 from the "seed" parameter.  Without NCQ the draws happen
 * exactly as they always did (one per seek, in service order), so such a
 * disk gives the same times as before the queue existed.
 *
 * Presets (devmodel_presets) name real devices: a kind and parameters
 * fitted to published figures, which the table carries with their
 * sources.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "devmodel.h"
#include "rng.h"
#include "units.h"

enum dm_kind { DM_HDD, DM_SSD };
const char *const devmodel_kinds[] = { [DM_HDD] = "hdd", [DM_SSD] = "ssd", NULL };
enum pt { PT_TIME, PT_SIZE, PT_RATE, PT_COUNT };

/* Parameters, all in integer units; see the table below. */
struct dm_params {
  uint64_t capacity;            /* bytes */
  uint64_t seed;                /* PRNG seed */
  uint64_t flush;               /* ns: cost of a flush once writes are done */
  uint64_t trim;                /* ns: cost of a trim */
  /* hdd */
  uint64_t rpm;                 /* revolutions per minute */
  uint64_t seek_min;            /* ns: settle / track-to-track seek */
  uint64_t seek_max;            /* ns: full-stroke seek */
  uint64_t rate;                /* bytes/s: media transfer rate */
  uint64_t near;                /* bytes: forward skip served by rotation */
  uint64_t ncq;                 /* requests the drive reorders; 0, 1: none */
  uint64_t ncq_age;             /* ns: a request waiting this long goes
                                   next; 0: never */
  /* ssd */
  uint64_t channels;            /* parallel channels, 1..DEVMODEL_MAX_CHANNELS */
  uint64_t read;                /* ns: read latency */
  uint64_t write;               /* ns: write latency */
  uint64_t bw;                  /* bytes/s: total bandwidth over channels */
};

struct param {
  const char *name;
  enum pt type;
  unsigned kinds;               /* bit (1 << DM_HDD) | (1 << DM_SSD) */
  size_t off;                   /* offsetof in struct dm_params */
  uint64_t min, max;            /* accepted range, inclusive */
};

#define H (1u << DM_HDD)
#define S (1u << DM_SSD)
#define P(f) offsetof (struct dm_params, f)
static const struct param params[] = {
  { "capacity", PT_SIZE,  H|S, P (capacity), 1 << 20, 1ULL << 60 },
  { "seed",     PT_COUNT, H|S, P (seed),     0, UINT64_MAX },
  { "flush",    PT_TIME,  H|S, P (flush),    0, 10 * NSEC_PER_SEC },
  { "trim",     PT_TIME,  H|S, P (trim),     0, 10 * NSEC_PER_SEC },
  { "rpm",      PT_COUNT, H,   P (rpm),      1000, 30000 },
  { "seek_min", PT_TIME,  H,   P (seek_min), 0, 10 * NSEC_PER_SEC },
  { "seek_max", PT_TIME,  H,   P (seek_max), 0, 10 * NSEC_PER_SEC },
  { "rate",     PT_RATE,  H,   P (rate),     1000, 1ULL << 40 },
  { "near",     PT_SIZE,  H,   P (near),     0, 1ULL << 40 },
  { "ncq",      PT_COUNT, H,   P (ncq),      0, DEVMODEL_MAX_NCQ },
  { "ncq_age",  PT_TIME,  H,   P (ncq_age),  0, 10 * NSEC_PER_SEC },
  { "channels", PT_COUNT, S,   P (channels), 1, DEVMODEL_MAX_CHANNELS },
  { "read",     PT_TIME,  S,   P (read),     0, 10 * NSEC_PER_SEC },
  { "write",    PT_TIME,  S,   P (write),    0, 10 * NSEC_PER_SEC },
  { "bw",       PT_RATE,  S,   P (bw),       1000, 1ULL << 40 },
};
#undef P
#define NPARAMS (sizeof params / sizeof params[0])

/* Named devices: a kind plus parameters on top of its defaults, and the
 * published figures they are fitted to.  test-devmodel checks the model
 * against the figures (within 20%); bench/presets.sh measures both the
 * model and the server emulating it.
 */
const struct devmodel_preset devmodel_presets[] = {
  { "hdd", "hdd", "",
    "rotational disk, 7200 rpm, served in order (no NCQ)",
    0, { { 0, 0 }, { 0, 0 } }, NULL },
  { "ssd", "ssd", "",
    "flash, 16 channels of 80 us reads",
    0, { { 0, 0 }, { 0, 0 } }, NULL },
  { "sata7200", "hdd",
    "capacity=2t,seek_max=17ms,rate=138M,ncq=32",
    "7200 rpm SATA disk with NCQ, 2009 (Seagate Barracuda XT 2 TB class)",
    138, { { 1, 71 }, { 32, 142 } },
    "Seagate Barracuda XT 2 TB (ST32000641AS) data sheet: 138 MB/s"
    " sustained (outer tracks), 7200 rpm, 4.16 ms average latency;"
    " Maximum PC review, Jan 2010: 14 ms average random read access,"
    " 71 IOPS at depth 1.  No depth-32 figure found: 142 is twice depth 1,"
    " the 1.5-2x SATA disks gain with NCQ" },
  { "vertex", "ssd",
    "capacity=30g,channels=2,read=230us,write=3400us,bw=316M",
    "2009 SATA SSD (OCZ Vertex, Indilinx Barefoot; seed 002's device)",
    250, { { 3, 7800 }, { 0, 0 } },
    "AnandTech, The SSD Anthology, Mar 2009: OCZ Vertex 250 MB/s"
    " sequential read (2 MB reads); 32 MB/s of 4 KiB random reads at"
    " queue depth 3 over the whole drive (7,800 IOPS); 2.41 MB/s of 4 KiB"
    " random writes at depth 3 (the write latency)" },
  { "nvme", "ssd",
    "capacity=1t,channels=32,read=15us,write=20us,bw=3500M",
    "PCIe 3.0 NVMe SSD, 2019 (Samsung 970 EVO Plus 1 TB class)",
    3500, { { 1, 19000 }, { 32, 600000 } },
    "Samsung 970 EVO Plus data sheet, 1 TB: 3,500 MB/s sequential read;"
    " 4 KiB random read 19,000 IOPS at QD1, 600,000 IOPS at QD32" },
  { NULL, NULL, NULL, NULL, 0, { { 0, 0 }, { 0, 0 } }, NULL }
};

static const char *const hdd_names[] = {
  "capacity", "seed", "flush", "trim", "rpm", "seek_min", "seek_max",
  "rate", "near", "ncq", "ncq_age", NULL
};
static const char *const ssd_names[] = {
  "capacity", "seed", "flush", "trim", "channels", "read", "write", "bw",
  NULL
};

/* A request at the device: what the model read from it at submission. */
struct dm_ent {
  struct rq *rq;                /* handed back by devmodel_complete */
  uint64_t seq;                 /* submission order: FIFO and ties */
  uint64_t arrive;              /* ns: submitted */
  uint64_t done;                /* ns: completion, once started */
  uint64_t off;
  uint64_t phase;               /* hdd with NCQ: ns into a revolution at
                                   which its sector passes the head */
  uint32_t len;
  uint8_t op, flags;
};

struct devmodel {
  enum dm_kind kind;
  const char *name;             /* the kind or the preset */
  struct dm_params p;
  bool started;                 /* a request was submitted: params frozen */
  uint64_t rng;                 /* xorshift64* state, never 0 */
  uint64_t clock;               /* ns: the latest "now" seen */
  uint64_t seq;                 /* submissions so far */
  /* Requests at the device, in slots; a slot is in exactly one of: */
  struct dm_ent slot[DEVMODEL_MAX_QUEUE];
  uint16_t freel[DEVMODEL_MAX_QUEUE];   /* free slots */
  uint16_t pend[DEVMODEL_MAX_QUEUE];    /* hdd: not started, arrival order */
  uint16_t heap[DEVMODEL_MAX_QUEUE];    /* started: min-heap by (done, seq) */
  unsigned nfree, npend, nheap;
  /* hdd */
  uint64_t head;                /* bytes: where the last request ended */
  uint64_t busy_until;          /* ns: when the head is free */
  bool head_valid;              /* false until the first data request */
  /* both */
  uint64_t writes_done;         /* ns: completion of the latest write */
  uint64_t chan_free[DEVMODEL_MAX_CHANNELS]; /* ns: when channel i is free */
};

/* ---- PRNG ------------------------------------------------------------ */

static uint64_t
dm_rand (struct devmodel *dm)
{
  return xorshift64s (&dm->rng);
}

/* ---- construction and parameters ------------------------------------- */

static void
set_defaults (struct devmodel *dm)
{
  struct dm_params *p = &dm->p;

  memset (p, 0, sizeof *p);
  p->capacity = 1ULL << 40;                     /* 1 TiB */
  p->seed = 1;
  if (dm->kind == DM_HDD) {
    p->flush = 1 * NSEC_PER_MSEC;
    p->trim = 100 * NSEC_PER_USEC;
    p->rpm = 7200;
    p->seek_min = 1 * NSEC_PER_MSEC;
    p->seek_max = 15 * NSEC_PER_MSEC;
    p->rate = 150ULL * 1000 * 1000;
    p->near = 1 << 20;
    p->ncq = 0;
    p->ncq_age = 500 * NSEC_PER_MSEC;
  } else {
    p->capacity = 512ULL << 30;                 /* 512 GiB */
    p->flush = 50 * NSEC_PER_USEC;
    p->trim = 20 * NSEC_PER_USEC;
    p->channels = 16;
    p->read = 80 * NSEC_PER_USEC;
    p->write = 20 * NSEC_PER_USEC;
    p->bw = 2000ULL * 1000 * 1000;
  }
}

void
devmodel_reset (struct devmodel *dm)
{
  uint64_t x = dm->p.seed;

  dm->started = false;
  dm->rng = splitmix64 (&x);
  if (dm->rng == 0)
    dm->rng = 0x9e3779b97f4a7c15ULL;
  dm->clock = 0;
  dm->seq = 0;
  dm->npend = dm->nheap = 0;
  dm->nfree = DEVMODEL_MAX_QUEUE;
  for (unsigned i = 0; i < DEVMODEL_MAX_QUEUE; i++)
    dm->freel[i] = DEVMODEL_MAX_QUEUE - 1 - i;
  dm->head = 0;
  dm->head_valid = false;
  dm->busy_until = 0;
  dm->writes_done = 0;
  memset (dm->chan_free, 0, sizeof dm->chan_free);
}

const struct devmodel_preset *
devmodel_preset (const char *name)
{
  for (const struct devmodel_preset *pr = devmodel_presets; name && pr->name;
       pr++)
    if (strcmp (pr->name, name) == 0)
      return pr;
  return NULL;
}

size_t
devmodel_names (char *buf, size_t size, const char *sep, const char *last)
{
  size_t len = 0, n = 0;

  while (devmodel_presets[n].name)
    n++;
  if (size)
    buf[0] = '\0';
  for (size_t i = 0; i < n; i++)
    len += snprintf (len < size ? buf + len : NULL,
                     len < size ? size - len : 0, "%s%s",
                     i == 0 ? "" : i + 1 == n ? last : sep,
                     devmodel_presets[i].name);
  return len;
}

struct devmodel *
devmodel_new (const char *name, int *err)
{
  const struct devmodel_preset *pr = devmodel_preset (name);
  struct devmodel *dm;
  int r;

  if (!pr) {
    if (err)
      *err = -EINVAL;
    return NULL;
  }
  dm = calloc (1, sizeof *dm);
  if (!dm) {
    if (err)
      *err = -ENOMEM;
    return NULL;
  }
  dm->kind = strcmp (pr->kind, devmodel_kinds[DM_HDD]) == 0 ? DM_HDD : DM_SSD;
  dm->name = pr->name;
  set_defaults (dm);
  devmodel_reset (dm);
  r = devmodel_parse (dm, pr->params, NULL);
  if (r < 0) {                  /* a bad table: caught by test-devmodel */
    free (dm);
    if (err)
      *err = r;
    return NULL;
  }
  return dm;
}

void
devmodel_free (struct devmodel *dm)
{
  free (dm);
}

static const struct param *
find_param (const struct devmodel *dm, const char *key)
{
  for (size_t i = 0; i < NPARAMS; i++)
    if ((params[i].kinds & (1u << dm->kind)) &&
        strcmp (params[i].name, key) == 0)
      return &params[i];
  return NULL;
}

int
devmodel_set (struct devmodel *dm, const char *key, const char *val)
{
  const struct param *pp = find_param (dm, key);
  uint64_t v;
  int r;

  if (!pp)
    return -ENOENT;
  if (dm->started)
    return -EBUSY;
  switch (pp->type) {
  case PT_TIME: r = units_parse_time (val, 1, &v); break;
  case PT_SIZE: r = units_parse_size (val, &v); break;
  case PT_RATE: r = units_parse_rate (val, &v); break;
  default: r = units_parse_count (val, &v); break;
  }
  if (r < 0)
    return r;
  if (v < pp->min || v > pp->max)
    return -ERANGE;
  *(uint64_t *) ((char *) &dm->p + pp->off) = v;
  if (dm->p.seek_min > dm->p.seek_max && dm->kind == DM_HDD) {
    /* Keep the model sane whichever of the two is set first. */
    if (strcmp (key, "seek_min") == 0)
      dm->p.seek_max = dm->p.seek_min;
    else
      dm->p.seek_min = dm->p.seek_max;
  }
  devmodel_reset (dm);
  return 0;
}

int
devmodel_parse (struct devmodel *dm, const char *s, const char **bad)
{
  char item[256];

  while (s && *s) {
    const char *start, *eq;
    size_t n;
    int r;

    while (*s == ',' || *s == ' ')
      s++;
    if (!*s)
      break;
    start = s;
    n = strcspn (s, ", ");
    s += n;
    if (n >= sizeof item)
      r = -EINVAL;
    else {
      memcpy (item, start, n);
      item[n] = 0;
      eq = strchr (item, '=');
      if (!eq)
        r = -EINVAL;
      else {
        item[eq - item] = 0;
        r = devmodel_set (dm, item, eq + 1);
      }
    }
    if (r < 0) {
      if (bad)
        *bad = start;
      return r;
    }
  }
  return 0;
}

const char *const *
devmodel_params (const struct devmodel *dm)
{
  return dm->kind == DM_HDD ? hdd_names : ssd_names;
}

const char *
devmodel_kind (const struct devmodel *dm)
{
  return devmodel_kinds[dm->kind];
}

const char *
devmodel_name (const struct devmodel *dm)
{
  return dm->name;
}

bool
devmodel_rotational (const struct devmodel *dm)
{
  return dm->kind == DM_HDD;
}

uint64_t
devmodel_capacity (const struct devmodel *dm)
{
  return dm->p.capacity;
}

static char *
fmt_value (char *buf, size_t size, enum pt type, uint64_t v)
{
  switch (type) {
  case PT_TIME: return units_format_time (v, buf, size);
  case PT_RATE: return units_format_rate (v, buf, size);
  case PT_SIZE: return units_format_size (v, buf, size);
  default:
    snprintf (buf, size, "%" PRIu64, v);
    return buf;
  }
}

size_t
devmodel_describe (const struct devmodel *dm, char *buf, size_t size)
{
  const char *const *names = devmodel_params (dm);
  size_t len = 0;
  char tmp[64];

  if (strcmp (dm->name, devmodel_kind (dm)) == 0)
    len += snprintf (buf, size, "%s", dm->name);
  else
    len += snprintf (buf, size, "%s (%s)", dm->name, devmodel_kind (dm));
  for (; *names; names++) {
    const struct param *pp = find_param (dm, *names);
    uint64_t v = *(const uint64_t *) ((const char *) &dm->p + pp->off);

    fmt_value (tmp, sizeof tmp, pp->type, v);
    len += snprintf (len < size ? buf + len : NULL,
                     len < size ? size - len : 0, " %s=%s", *names, tmp);
  }
  return len;
}

/* ---- the queue of requests at the device --------------------------------- */

static uint64_t
xfer_ns (uint64_t len, uint64_t rate)
{
  /* len * 1e9 / rate without overflow for len < 2^34. */
  return (uint64_t) ((unsigned __int128) len * NSEC_PER_SEC / rate);
}

static bool
ent_before (const struct dm_ent *a, const struct dm_ent *b)
{
  return a->done < b->done || (a->done == b->done && a->seq < b->seq);
}

/* Started requests, a min-heap by (done, seq) of slot numbers. */
static void
heap_push (struct devmodel *dm, unsigned s)
{
  unsigned i = dm->nheap++;

  while (i > 0) {
    unsigned p = (i - 1) / 2;

    if (!ent_before (&dm->slot[s], &dm->slot[dm->heap[p]]))
      break;
    dm->heap[i] = dm->heap[p];
    i = p;
  }
  dm->heap[i] = s;
}

static unsigned
heap_pop (struct devmodel *dm)
{
  unsigned top = dm->heap[0], last = dm->heap[--dm->nheap];
  unsigned i = 0, n = dm->nheap;

  for (;;) {
    unsigned c = 2 * i + 1;

    if (c >= n)
      break;
    if (c + 1 < n && ent_before (&dm->slot[dm->heap[c + 1]],
                                 &dm->slot[dm->heap[c]]))
      c++;
    if (!ent_before (&dm->slot[dm->heap[c]], &dm->slot[last]))
      break;
    dm->heap[i] = dm->heap[c];
    i = c;
  }
  if (n)
    dm->heap[i] = last;
  return top;
}

static void
start (struct devmodel *dm, unsigned s, uint64_t done)
{
  struct dm_ent *e = &dm->slot[s];

  e->done = done;
  if (e->op != RQ_READ && e->op != RQ_FLUSH && done > dm->writes_done)
    dm->writes_done = done;
  heap_push (dm, s);
}

/* ---- the disk -------------------------------------------------------------- */

static uint64_t
hdd_rev (const struct dm_params *p)
{
  return 60 * NSEC_PER_SEC / p->rpm;
}

static uint64_t
hdd_seek (const struct devmodel *dm, uint64_t off)
{
  const struct dm_params *p = &dm->p;
  uint64_t d = off > dm->head ? off - dm->head : dm->head - off;
  double frac = (double) d / (double) p->capacity;

  if (frac > 1)
    frac = 1;
  return p->seek_min + (uint64_t) ((double) (p->seek_max - p->seek_min)
                                   * sqrt (frac));
}

/* Positioning without a seek: 0 on the spot, the passing gap for a short
 * forward skip; false if the head must seek.
 */
static bool
hdd_no_seek (const struct devmodel *dm, uint64_t off, uint64_t *t)
{
  if (!dm->head_valid)
    return false;
  if (off == dm->head) {
    *t = 0;
    return true;
  }
  if (off > dm->head && off - dm->head <= dm->p.near) {
    *t = xfer_ns (off - dm->head, dm->p.rate);
    return true;
  }
  return false;
}

/* Positioning of e if the head starts moving at time t.  Without NCQ the
 * rotational delay is drawn now, as the drive reaches the track; with it,
 * each request's sector has an angle (drawn at submission) and the platter
 * turns with the clock, so the drive can compare candidates.
 */
static uint64_t
hdd_positioning (struct devmodel *dm, const struct dm_ent *e, uint64_t t,
                 bool draw)
{
  uint64_t rev = hdd_rev (&dm->p), seek, pos;

  if (hdd_no_seek (dm, e->off, &pos))
    return pos;
  seek = hdd_seek (dm, e->off);
  if (draw)
    return seek + dm_rand (dm) % rev;
  return seek + (e->phase + rev - (t + seek) % rev) % rev;
}

static bool
is_barrier (const struct dm_ent *e)
{
  return e->op == RQ_FLUSH || e->op == RQ_TRIM;
}

/* Which pending request the head serves at time t: the oldest without
 * NCQ; with it, the one with the shortest positioning among the first
 * "ncq" (up to a flush or trim, which SATA cannot queue: they wait for
 * what came before and hold back what comes after), unless the oldest has
 * waited ncq_age already.
 */
static unsigned
hdd_pick (struct devmodel *dm, uint64_t t)
{
  const struct dm_params *p = &dm->p;
  unsigned n = dm->npend < p->ncq ? dm->npend : (unsigned) p->ncq;
  unsigned best = 0;
  uint64_t best_pos = UINT64_MAX;
  const struct dm_ent *oldest = &dm->slot[dm->pend[0]];

  if (n <= 1 || is_barrier (oldest) ||
      (p->ncq_age && t - oldest->arrive >= p->ncq_age))
    return 0;
  for (unsigned i = 0; i < n; i++) {
    const struct dm_ent *e = &dm->slot[dm->pend[i]];
    uint64_t pos;

    if (is_barrier (e))
      break;
    pos = hdd_positioning (dm, e, t, false);
    if (pos < best_pos) {
      best_pos = pos;
      best = i;
    }
  }
  return best;
}

/* Serve pending requests while the head is free at or before now.  After
 * it, either nothing is pending or the head is busy past now: a request
 * is chosen when the head frees, among those that had arrived by then.
 */
static void
hdd_advance (struct devmodel *dm, uint64_t now)
{
  const struct dm_params *p = &dm->p;

  while (dm->npend && dm->busy_until <= now) {
    unsigned i, s;
    struct dm_ent *e;
    uint64_t t, cost;

    t = dm->busy_until;
    if (dm->slot[dm->pend[0]].arrive > t)
      t = dm->slot[dm->pend[0]].arrive;
    i = hdd_pick (dm, t);
    s = dm->pend[i];
    memmove (&dm->pend[i], &dm->pend[i + 1],
             (dm->npend - i - 1) * sizeof dm->pend[0]);
    dm->npend--;
    e = &dm->slot[s];
    switch (e->op) {
    case RQ_FLUSH:
      cost = p->flush;
      break;
    case RQ_TRIM:
      cost = p->trim;
      break;
    default:                    /* read, write, zero: move data */
      cost = hdd_positioning (dm, e, t, p->ncq <= 1) + xfer_ns (e->len,
                                                                p->rate);
      dm->head = e->off + e->len;
      dm->head_valid = true;
      break;
    }
    dm->busy_until = t + cost;
    start (dm, s, dm->busy_until);
  }
}

/* ---- the SSD --------------------------------------------------------------- */

static void
ssd_submit (struct devmodel *dm, unsigned s, uint64_t now)
{
  const struct dm_params *p = &dm->p;
  const struct dm_ent *e = &dm->slot[s];
  unsigned n = p->channels, best = 0;
  uint64_t t, cost;

  if (e->op == RQ_FLUSH) {
    t = now > dm->writes_done ? now : dm->writes_done;
    start (dm, s, t + p->flush);
    return;
  }
  for (unsigned i = 1; i < n; i++)
    if (dm->chan_free[i] < dm->chan_free[best])
      best = i;
  t = now > dm->chan_free[best] ? now : dm->chan_free[best];
  if (e->op == RQ_TRIM || (e->op == RQ_ZERO && (e->flags & RQ_MAYTRIM)))
    cost = p->trim;
  else
    cost = (e->op == RQ_READ ? p->read : p->write)
      + xfer_ns ((uint64_t) e->len * n, p->bw);
  dm->chan_free[best] = t + cost;
  start (dm, s, t + cost);
}

/* ---- the interface --------------------------------------------------------- */

static uint64_t
clock_to (struct devmodel *dm, uint64_t now)
{
  if (now < dm->clock)
    return dm->clock;
  return dm->clock = now;
}

int
devmodel_submit (struct devmodel *dm, struct rq *rq, uint64_t now)
{
  const struct dm_params *p = &dm->p;
  struct dm_ent *e;
  unsigned s;

  if (dm->nfree == 0)
    return -ENOSPC;
  dm->started = true;
  now = clock_to (dm, now);
  s = dm->freel[--dm->nfree];
  e = &dm->slot[s];
  e->rq = rq;
  e->seq = dm->seq++;
  e->arrive = now;
  e->done = SCHED_NEVER;
  e->off = rq->off;
  e->len = rq->len;
  e->op = rq->op;
  e->flags = rq->flags;
  e->phase = 0;
  if (dm->kind == DM_SSD) {
    ssd_submit (dm, s, now);
    return 0;
  }
  /* The head's choices up to now were made without this request. */
  hdd_advance (dm, now);
  if (p->ncq > 1 && !is_barrier (e))
    e->phase = dm_rand (dm) % hdd_rev (p);
  dm->pend[dm->npend++] = s;
  hdd_advance (dm, now);
  return 0;
}

uint64_t
devmodel_next (const struct devmodel *dm)
{
  return dm->nheap ? dm->slot[dm->heap[0]].done : SCHED_NEVER;
}

struct rq *
devmodel_complete (struct devmodel *dm, uint64_t now, uint64_t *when)
{
  unsigned s;

  now = clock_to (dm, now);
  if (dm->kind == DM_HDD)
    hdd_advance (dm, now);
  if (dm->nheap == 0 || dm->slot[dm->heap[0]].done > now)
    return NULL;
  s = heap_pop (dm);
  dm->freel[dm->nfree++] = s;
  if (when)
    *when = dm->slot[s].done;
  return dm->slot[s].rq;
}

unsigned
devmodel_queued (const struct devmodel *dm)
{
  return DEVMODEL_MAX_QUEUE - dm->nfree;
}

/* ---- the cost model's parameters ------------------------------------------ */

/* 4 KiB random reads at depth ncq over span on a copy of dm, in virtual
 * time: requests per second.
 */
static int
hdd_ncq_randiops (const struct devmodel *dm, uint64_t span, double *iops)
{
  enum { N = 4000 };
  struct devmodel *c = malloc (sizeof *c);
  struct rq *rqs;
  unsigned depth = (unsigned) dm->p.ncq, done = 0, sent = 0;
  uint64_t x = 0x5eed, t = 0, t0 = 0;

  rqs = calloc (depth, sizeof *rqs);
  if (!c || !rqs) {
    free (c);
    free (rqs);
    return -ENOMEM;
  }
  *c = *dm;
  devmodel_reset (c);
  for (unsigned i = 0; i < depth; i++) {
    rqs[i].off = (xorshift64s (&x) % (span / COST_PAGE)) * COST_PAGE;
    rqs[i].len = COST_PAGE;
    rqs[i].op = RQ_READ;
    devmodel_submit (c, &rqs[i], 0);
    sent++;
  }
  while (done < N) {
    struct rq *rq;

    t = devmodel_next (c);
    while ((rq = devmodel_complete (c, t, NULL)) != NULL) {
      /* The first requests see an idle head: count from the depth-th. */
      if (++done == depth)
        t0 = t;
      rq->off = (xorshift64s (&x) % (span / COST_PAGE)) * COST_PAGE;
      devmodel_submit (c, rq, t);
      sent++;
    }
  }
  *iops = (double) (done - depth) * 1e9 / (double) (t - t0);
  free (rqs);
  free (c);
  return 0;
}

int
devmodel_cost_params (const struct devmodel *dm, uint64_t span,
                      struct cost_params *p)
{
  const struct dm_params *dp = &dm->p;

  if (span == 0 || span > dp->capacity)
    span = dp->capacity;
  if (span < 2 * COST_PAGE)
    span = 2 * COST_PAGE;
  memset (p, 0, sizeof *p);
  if (dm->kind == DM_SSD) {
    /* A channel holds a request for latency + len / (bw / channels): of
     * the whole device that is latency / channels + len / bw, for
     * sequential and random alike.
     */
    for (int d = 0; d < 2; d++) {
      uint64_t lat = d == COST_READ ? dp->read : dp->write;
      double ns = (double) lat / (double) dp->channels
        + (double) COST_PAGE * 1e9 / (double) dp->bw;

      p->bps[d] = dp->bw;
      p->seqiops[d] = p->randiops[d] = (uint64_t) (1e9 / ns + 0.5);
    }
    p->depth = dp->channels;
  }
  else {
    /* One head.  Sequential: the transfer alone.  Random over span: the
     * mean seek of two uniform offsets, seek_min + (seek_max - seek_min)
     * * E[sqrt |X - Y|] with E = 8/15 of sqrt (span / capacity), plus
     * half a revolution, plus the transfer; with NCQ the drive's own
     * choice among ncq, measured.
     */
    double xfer = (double) COST_PAGE * 1e9 / (double) dp->rate;
    double seek = (double) dp->seek_min
      + (double) (dp->seek_max - dp->seek_min) * 8.0 / 15.0
        * sqrt ((double) span / (double) dp->capacity);
    double rnd = seek + (double) hdd_rev (dp) / 2 + xfer;

    for (int d = 0; d < 2; d++) {
      p->bps[d] = dp->rate;
      p->seqiops[d] = (uint64_t) (1e9 / xfer + 0.5);
      p->randiops[d] = (uint64_t) (1e9 / rnd + 0.5);
    }
    if (dp->ncq > 1) {
      double iops;
      int r = hdd_ncq_randiops (dm, span, &iops);

      if (r < 0)
        return r;
      p->randiops[COST_READ] = p->randiops[COST_WRITE]
        = (uint64_t) (iops + 0.5);
    }
    p->depth = 1;
  }
  /* Within the bounds whatever the parameters (a 1000 rpm disk). */
  for (int d = 0; d < 2; d++) {
    if (p->bps[d] < COST_BPS_MIN) p->bps[d] = COST_BPS_MIN;
    if (p->bps[d] > COST_BPS_MAX) p->bps[d] = COST_BPS_MAX;
    if (p->seqiops[d] < COST_IOPS_MIN) p->seqiops[d] = COST_IOPS_MIN;
    if (p->seqiops[d] > COST_IOPS_MAX) p->seqiops[d] = COST_IOPS_MAX;
    if (p->randiops[d] < COST_IOPS_MIN) p->randiops[d] = COST_IOPS_MIN;
    if (p->randiops[d] > COST_IOPS_MAX) p->randiops[d] = COST_IOPS_MAX;
  }
  return 0;
}
