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
 * The disk serves requests one at a time in submission order: the
 * scheduler, not the device, decides the order (a drive without NCQ, or
 * with queue_depth 1).  Both models are deterministic; the only random
 * draw, the disk's rotational delay, comes from a private xorshift64*
 * generator seeded with splitmix64 from the "seed" parameter.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "devmodel.h"
#include "rng.h"
#include "units.h"

enum dm_kind { DM_HDD, DM_SSD };
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
  { "channels", PT_COUNT, S,   P (channels), 1, DEVMODEL_MAX_CHANNELS },
  { "read",     PT_TIME,  S,   P (read),     0, 10 * NSEC_PER_SEC },
  { "write",    PT_TIME,  S,   P (write),    0, 10 * NSEC_PER_SEC },
  { "bw",       PT_RATE,  S,   P (bw),       1000, 1ULL << 40 },
};
#undef P
#define NPARAMS (sizeof params / sizeof params[0])

static const char *const hdd_names[] = {
  "capacity", "seed", "flush", "trim", "rpm", "seek_min", "seek_max",
  "rate", "near", NULL
};
static const char *const ssd_names[] = {
  "capacity", "seed", "flush", "trim", "channels", "read", "write", "bw",
  NULL
};

struct devmodel {
  enum dm_kind kind;
  struct dm_params p;
  bool started;                 /* a request was submitted: params frozen */
  uint64_t rng;                 /* xorshift64* state, never 0 */
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
  dm->head = 0;
  dm->head_valid = false;
  dm->busy_until = 0;
  dm->writes_done = 0;
  memset (dm->chan_free, 0, sizeof dm->chan_free);
}

struct devmodel *
devmodel_new (const char *kind, int *err)
{
  struct devmodel *dm;
  enum dm_kind k;

  if (kind && strcmp (kind, "hdd") == 0)
    k = DM_HDD;
  else if (kind && strcmp (kind, "ssd") == 0)
    k = DM_SSD;
  else {
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
  dm->kind = k;
  set_defaults (dm);
  devmodel_reset (dm);
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
  return dm->kind == DM_HDD ? "hdd" : "ssd";
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

  len += snprintf (buf, size, "%s", devmodel_kind (dm));
  for (; *names; names++) {
    const struct param *pp = find_param (dm, *names);
    uint64_t v = *(const uint64_t *) ((const char *) &dm->p + pp->off);

    fmt_value (tmp, sizeof tmp, pp->type, v);
    len += snprintf (len < size ? buf + len : NULL,
                     len < size ? size - len : 0, " %s=%s", *names, tmp);
  }
  return len;
}

/* ---- the models --------------------------------------------------------- */

static uint64_t
xfer_ns (uint64_t len, uint64_t rate)
{
  /* len * 1e9 / rate without overflow for len < 2^34. */
  return (uint64_t) ((unsigned __int128) len * NSEC_PER_SEC / rate);
}

static uint64_t
hdd_positioning (struct devmodel *dm, uint64_t off)
{
  const struct dm_params *p = &dm->p;
  uint64_t d, rev, seek;
  double frac;

  if (dm->head_valid && off == dm->head)
    return 0;
  if (dm->head_valid && off > dm->head && off - dm->head <= p->near)
    return xfer_ns (off - dm->head, p->rate);
  d = off > dm->head ? off - dm->head : dm->head - off;
  frac = (double) d / (double) p->capacity;
  if (frac > 1)
    frac = 1;
  seek = p->seek_min + (uint64_t) ((double) (p->seek_max - p->seek_min)
                                   * sqrt (frac));
  rev = 60 * NSEC_PER_SEC / p->rpm;
  return seek + dm_rand (dm) % rev;
}

static uint64_t
hdd_submit (struct devmodel *dm, const struct rq *rq, uint64_t now)
{
  const struct dm_params *p = &dm->p;
  uint64_t start = now > dm->busy_until ? now : dm->busy_until;
  uint64_t cost;

  switch (rq->op) {
  case RQ_FLUSH:
    cost = p->flush;
    break;
  case RQ_TRIM:
    cost = p->trim;
    break;
  default:                      /* read, write, zero: move data */
    cost = hdd_positioning (dm, rq->off) + xfer_ns (rq->len, p->rate);
    dm->head = rq->off + rq->len;
    dm->head_valid = true;
    break;
  }
  dm->busy_until = start + cost;
  if (rq->op != RQ_READ && rq->op != RQ_FLUSH)
    dm->writes_done = dm->busy_until;
  return dm->busy_until;
}

static uint64_t
ssd_submit (struct devmodel *dm, const struct rq *rq, uint64_t now)
{
  const struct dm_params *p = &dm->p;
  unsigned n = p->channels, best = 0;
  uint64_t start, done, cost;

  if (rq->op == RQ_FLUSH) {
    start = now > dm->writes_done ? now : dm->writes_done;
    return start + p->flush;
  }
  for (unsigned i = 1; i < n; i++)
    if (dm->chan_free[i] < dm->chan_free[best])
      best = i;
  start = now > dm->chan_free[best] ? now : dm->chan_free[best];
  if (rq->op == RQ_TRIM || (rq->op == RQ_ZERO && (rq->flags & RQ_MAYTRIM)))
    cost = p->trim;
  else
    cost = (rq->op == RQ_READ ? p->read : p->write)
      + xfer_ns ((uint64_t) rq->len * n, p->bw);
  done = start + cost;
  dm->chan_free[best] = done;
  if (rq->op != RQ_READ && done > dm->writes_done)
    dm->writes_done = done;
  return done;
}

uint64_t
devmodel_submit (struct devmodel *dm, const struct rq *rq, uint64_t now)
{
  dm->started = true;
  return dm->kind == DM_HDD ? hdd_submit (dm, rq, now)
                            : ssd_submit (dm, rq, now);
}
