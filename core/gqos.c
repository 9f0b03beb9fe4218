/* gqos.c: caps and reservations that hold for a tenant across servers.
 *
 * The question
 * ------------
 * A tenant connects to several servers (gateways) in front of the same
 * storage, and its iops_max = L and iops_min = R are meant for the sum.
 * Each server's scheduler only sees its own requests: with a bucket of L
 * each, three servers give up to 3L.
 *
 * What was tried first: dmClock's delta for the caps
 * --------------------------------------------------
 * dmClock (Gulati, Merchant, Varman, OSDI 2010) runs mClock on every
 * server and lets each request carry, from its client, how many requests
 * other servers completed for the client since its previous request here
 * (delta), and how many of those in the reservation phase (rho); the
 * server advances the client's limit tag by delta / L and its reservation
 * tag by rho / R.  NBD has no room in a request for them and our clients
 * are not ours to change, so the servers tell each other instead, every
 * period (100 ms), through RADOS (plugin/gqos.c).  Charging the others'
 * service to each server's bucket (delta, as a lump at each exchange) is
 * exact in the long run but not per second: with a backlogged client on
 * every server, each one learns of the others' service a period late,
 * all of them are released together, and the sum swings by 10% and more
 * of L around L in a cycle of about a second (tests/unit/test-gqos.c
 * showed 900, 1066, 1034 for L = 1000 on two servers).  In dmClock the
 * delta comes with the request and is never late; here it always is.
 *
 * The caps: a share of each, max-min fair by demand
 * --------------------------------------------------
 * So each server caps the group at its share of L instead, with its own
 * bucket at that rate, the shares adding up to L: the sum holds at every
 * instant however late the news, and only the split between servers
 * lags (distributed rate limiting's flow-proportional share, Raghavan et
 * al., SIGCOMM 2007, here max-min fair).  Every server computes its share
 * from the same records: a peer that served less than an equal split
 * without its caps holding it back keeps what it served (its demand), and
 * the rest is split equally between this server and the peers their
 * caps held (gqos_shares: the water level).  A peer whose demand grows is
 * held by its share, counts as wanting more at the next exchange and gets
 * the level; a server with no demand still keeps a hundredth of L to
 * show one.  A peer's rate is its counts' difference over its own clock's
 * time between two of its records.
 *
 * The reservation: dmClock's rho
 * ------------------------------
 * A floor has no such swing to fear (a reserved request goes when its
 * tag is due, a few at a time), so there the counts do the work: each
 * server's reservation tag advances by the requests the others served
 * for the reservation as if served here (qos_charge), and the floor is
 * served wherever the tag comes due first, R in all.
 *
 * The counts are dispatches, not completions, as the local buckets count.
 *
 * Alive, gone and back
 * --------------------
 * Servers' clocks are never compared: a peer is alive while its sequence
 * number moved within the expiry (2 s) on this server's clock, and its
 * rate counts while its records keep coming (two and a half of its
 * intervals): a dead peer's share goes to the others within a few
 * periods.  A peer seen again after the expiry (restarted, or cut off
 * and serving on its own) is taken as it is, not charged for what it did
 * meanwhile; counts that go backwards (a restart) likewise.
 *
 * When the exchange fails
 * -----------------------
 * The cluster gone (or its pool, or this server's access), an exchange
 * fails or does not finish.  I/O never waits for it.  For the expiry the
 * group keeps the shares it had; then it falls back, logged once, to
 * 1 / N of each cap, N the servers alive at the last exchange that
 * worked (this one included), so the sum still holds to L as long as the
 * same servers serve; its reservation stays whole here (a floor given
 * more than once is safe where one not given is not).  A server that
 * never reached the cluster counts itself alone: L.
 *
 * What it costs: per group and server, one write and one read operation
 * on one object every period: 2 / period RADOS operations per second
 * (20 at 100 ms), each a few hundred bytes.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gqos.h"
#include "units.h"

/* ---- the settings --------------------------------------------------------- */

const struct setting gqos_keys[GQOS_NR_KEYS] = {
  [GQOS_K_CONF] = { "gqos_conf", SETTING_TEXT, NULL, 0, 0, 0,
    "ceph.conf of the cluster that holds the counts of [group]s with"
    " scope = global" },
  [GQOS_K_POOL] = { "gqos_pool", SETTING_TEXT, "cfq", 0, 0, 0,
    "RADOS pool of the counts' objects (cfq.gqos.GROUP)" },
  [GQOS_K_ID] = { "gqos_id", SETTING_TEXT, "admin", 0, 0, 0,
    "RADOS client id (its keyring as ceph.conf says)" },
  [GQOS_K_GATEWAY] = { "gateway", SETTING_TEXT, NULL, 0, 0, 0,
    "this server's name among the servers (default HOST:PID)" },
  [GQOS_K_PERIOD] = { "gqos_period", SETTING_TIME, "100ms", 0,
    10 * NSEC_PER_MSEC, 10 * NSEC_PER_SEC,
    "time between exchanges of the counts" },
  [GQOS_K_EXPIRY] = { "gqos_expiry", SETTING_TIME, "2s", 0,
    100 * NSEC_PER_MSEC, 600 * NSEC_PER_SEC,
    "a server silent this long is gone; the exchange failing this long:"
    " local limits" },
};

int
gqos_key_lookup (const char *name)
{
  return setting_lookup (gqos_keys, GQOS_NR_KEYS, name);
}

/* A name of a server or a group: one printable word without '/'. */
static bool
word_ok (const char *s, size_t max)
{
  size_t n = strlen (s);

  if (n == 0 || n >= max)
    return false;
  for (; *s; s++)
    if (*s <= ' ' || *s > '~' || *s == '/')
      return false;
  return true;
}

int
gqos_conf_set (struct gqos_conf *c, int k, const char *value, char *why,
               size_t len)
{
  if (k == GQOS_K_GATEWAY && !word_ok (value, GQOS_NAME_MAX)) {
    snprintf (why, len, "want one word of printable characters, no '/',"
              " up to %d bytes", GQOS_NAME_MAX - 1);
    return -EINVAL;
  }
  return setting_set (gqos_keys, k, c->text, c->ns, value, why, len);
}

int
gqos_conf_finish (struct gqos_conf *c, char *why, size_t len)
{
  int err = setting_defaults (gqos_keys, GQOS_NR_KEYS, c->text, c->ns, why,
                              len);

  if (err)
    return err;
  if (c->ns[GQOS_K_EXPIRY] < 3 * c->ns[GQOS_K_PERIOD]) {
    snprintf (why, len, "%s is at least three times %s",
              gqos_keys[GQOS_K_EXPIRY].name, gqos_keys[GQOS_K_PERIOD].name);
    return -EINVAL;
  }
  return 0;
}

void
gqos_conf_free (struct gqos_conf *c)
{
  setting_free (c->text, GQOS_NR_KEYS);
}

/* ---- records ------------------------------------------------------------ */

#define REC_FIELDS 10           /* the numbers of a record, "1" first */

/* The record's numbers in their order. */
static void
rec_fields (const struct gqos_record *r, uint64_t *v)
{
  v[0] = 1;
  v[1] = r->seq;
  v[2] = r->t_ns;
  v[3] = r->c.ios[QOS_READ];
  v[4] = r->c.ios[QOS_WRITE];
  v[5] = r->c.bytes[QOS_READ];
  v[6] = r->c.bytes[QOS_WRITE];
  v[7] = r->c.res_ios;
  v[8] = r->c.res_bytes;
  v[9] = r->c.held;
}

int
gqos_encode (const struct gqos_record *r, char *buf, size_t len)
{
  uint64_t v[REC_FIELDS];
  size_t n = 0;

  rec_fields (r, v);
  for (int i = 0; i < REC_FIELDS; i++) {
    int k = snprintf (buf + n, len - n, "%s%" PRIu64, i ? " " : "", v[i]);
    if (k < 0 || (size_t) k >= len - n)
      return -ENOSPC;
    n += k;
  }
  return (int) n;
}

int
gqos_decode (const char *buf, size_t len, struct gqos_record *r)
{
  uint64_t v[REC_FIELDS];
  size_t pos = 0;

  for (int i = 0; i < REC_FIELDS; i++) {
    uint64_t x = 0;
    size_t start;

    if (i && (pos >= len || buf[pos++] != ' '))
      return -EINVAL;
    start = pos;
    while (pos < len && buf[pos] >= '0' && buf[pos] <= '9') {
      if (x > (UINT64_MAX - 9) / 10)
        return -EINVAL;
      x = x * 10 + (uint64_t) (buf[pos++] - '0');
    }
    if (pos == start)
      return -EINVAL;
    v[i] = x;
  }
  if (pos != len || v[0] != 1)
    return -EINVAL;
  r->seq = v[1];
  r->t_ns = v[2];
  r->c.ios[QOS_READ] = v[3];
  r->c.ios[QOS_WRITE] = v[4];
  r->c.bytes[QOS_READ] = v[5];
  r->c.bytes[QOS_WRITE] = v[6];
  r->c.res_ios = v[7];
  r->c.res_bytes = v[8];
  r->c.held = v[9];
  return 0;
}

/* ---- peers -------------------------------------------------------------- */

void
gqos_group_init (struct gqos_group *g, uint64_t expiry_ns)
{
  memset (g, 0, sizeof *g);
  g->expiry_ns = expiry_ns;
  g->servers = 1;
  for (unsigned c = 0; c < QOS_NR_CAPS; c++)
    g->share_ppm[c] = QOS_SHARE_WHOLE;
}

static struct gqos_peer *
peer_find (struct gqos_group *g, const char *name)
{
  struct gqos_peer *p;
  unsigned i;

  for (i = 0; i < g->nr_peers; i++)
    if (strcmp (g->peer[i].name, name) == 0)
      return &g->peer[i];
  /* A new one: a free slot, else the one silent longest if gone. */
  if (g->nr_peers < GQOS_PEERS_MAX)
    p = &g->peer[g->nr_peers++];
  else {
    p = NULL;
    for (i = 0; i < g->nr_peers; i++)
      if (!g->peer[i].alive
          && (!p || g->peer[i].changed_at < p->changed_at))
        p = &g->peer[i];
    if (!p)
      return NULL;
  }
  memset (p, 0, sizeof *p);
  snprintf (p->name, sizeof p->name, "%s", name);
  return p;
}

/* B - A, or false if any count of B is below A's. */
static bool
counts_sub (const struct qos_counts *b, const struct qos_counts *a,
            struct qos_counts *d)
{
  const uint64_t *pb = (const uint64_t *) b, *pa = (const uint64_t *) a;
  uint64_t *pd = (uint64_t *) d;

  for (size_t i = 0; i < sizeof *b / sizeof (uint64_t); i++) {
    if (pb[i] < pa[i])
      return false;
    pd[i] = pb[i] - pa[i];
  }
  return true;
}

static void
counts_add (struct qos_counts *to, const struct qos_counts *d)
{
  uint64_t *pt = (uint64_t *) to;
  const uint64_t *pd = (const uint64_t *) d;

  for (size_t i = 0; i < sizeof *to / sizeof (uint64_t); i++)
    pt[i] += pd[i];
}

void
gqos_peer_seen (struct gqos_group *g, const char *name,
                const struct gqos_record *r, uint64_t now,
                struct qos_counts *charge)
{
  struct gqos_peer *p = peer_find (g, name);
  struct qos_counts d;
  bool known;

  if (!p)
    return;                     /* more live servers than we keep */
  if (r->seq == p->seen.seq && p->changed_at)
    return;                     /* nothing new (alive or not) */
  known = p->alive && now - p->changed_at <= g->expiry_ns;
  if (known && r->seq > p->seen.seq && r->t_ns > p->seen.t_ns
      && counts_sub (&r->c, &p->seen.c, &d)) {
    counts_add (charge, &d);
    counts_add (&g->remote, &d);
    p->last = d;
    p->interval = r->t_ns - p->seen.t_ns;
  }
  else {
    memset (&p->last, 0, sizeof p->last);
    p->interval = 0;            /* no rate known yet */
  }
  p->seen = *r;
  p->changed_at = now;
  p->alive = true;
}

unsigned
gqos_alive (const struct gqos_group *g)
{
  unsigned n = 0;

  for (unsigned i = 0; i < g->nr_peers; i++)
    n += g->peer[i].alive;
  return n;
}

bool
gqos_exchange_done (struct gqos_group *g, bool ok, uint64_t now)
{
  bool was = g->fallback;

  if (!ok) {
    g->failures++;
    return false;
  }
  for (unsigned i = 0; i < g->nr_peers; i++)
    if (now - g->peer[i].changed_at > g->expiry_ns)
      g->peer[i].alive = false;
  g->last_ok = now;
  g->exchanges++;
  g->servers = 1 + gqos_alive (g);
  g->fallback = false;
  return was;
}

/* Is peer p's rate current: alive, a rate known, and its records still
 * coming at the last exchange that worked, AT (a peer that stopped within
 * the expiry counts for nothing after two and a half of its intervals, or
 * the others would keep its share for it until the expiry; while the
 * exchange fails, what was known stays).
 */
static bool
peer_current (const struct gqos_peer *p, uint64_t at)
{
  return p->alive && p->interval && at - p->changed_at <= 2 * p->interval
    + p->interval / 2;
}

/* The water level of cap c: what this server and each saturated peer
 * may have, after the peers that want less (not held, below the level)
 * keep what they used.  units/s.
 */
static double
water_level (const struct gqos_group *g, unsigned c, double limit)
{
  uint64_t now = g->last_ok;
  bool fixed[GQOS_PEERS_MAX] = { false };
  double level, left = limit;
  unsigned share = 1;           /* this server */
  bool moved = true;

  for (unsigned i = 0; i < g->nr_peers; i++)
    share += peer_current (&g->peer[i], now);
  level = left / share;
  while (moved) {
    moved = false;
    for (unsigned i = 0; i < g->nr_peers; i++) {
      const struct gqos_peer *p = &g->peer[i];
      double rate;

      if (fixed[i] || !peer_current (p, now) || p->last.held)
        continue;
      rate = (double) qos_cap_units (c, &p->last) * NSEC_PER_SEC
        / p->interval;
      if (rate < level) {
        fixed[i] = moved = true;
        left -= rate;
        share--;
        level = left / share;
      }
    }
  }
  return level;
}

bool
gqos_shares (struct gqos_group *g, const struct qos_conf *c, uint64_t now,
             uint32_t *share_ppm)
{
  bool fell = false;

  if (!g->fallback && g->last_ok && now - g->last_ok > g->expiry_ns) {
    g->fallback = fell = true;
    g->fallbacks++;
  }
  for (unsigned k = 0; k < QOS_NR_CAPS; k++) {
    double limit = (double) c->cap[k].rate, level;

    if (!c->cap[k].rate)
      g->share_ppm[k] = QOS_SHARE_WHOLE;
    else if (g->fallback)
      g->share_ppm[k] = QOS_SHARE_WHOLE / g->servers;
    else {
      level = water_level (g, k, limit);
      if (level < limit / 100)
        level = limit / 100;    /* room to show a demand */
      g->share_ppm[k] = level >= limit ? QOS_SHARE_WHOLE
        : (uint32_t) (level * QOS_SHARE_WHOLE / limit);
    }
    share_ppm[k] = g->share_ppm[k];
  }
  return fell;
}

/* ---- statistics ---------------------------------------------------------- */

struct gqos_snap {
  uint64_t remote_ios;          /* requests served elsewhere, charged */
  uint64_t remote_reserved;     /* of them, the reservation's */
  unsigned peers;               /* peers alive */
  double age_ms;                /* ms since the last exchange that worked;
                                   -1: none yet */
  double share;                 /* of iops_max (or the first cap) here */
  bool fallback;                /* local limits now */
  uint64_t exchanges;           /* exchanges that worked */
  uint64_t failures;            /* exchanges that failed */
};

static const struct stat_field gqos_fields[] = {
  { .name = "remote_ios", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct gqos_snap, remote_ios),
    .show = STAT_ALL, .help = "Requests other servers served for the"
    " group, as their counts said." },
  { .name = "remote_reserved", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct gqos_snap, remote_reserved),
    .show = STAT_ALL, .help = "Of those, the ones served for its"
    " reservation, counted toward it here." },
  { .name = "peers", .unit = "servers", .repr = STAT_UINT,
    .off = offsetof (struct gqos_snap, peers), .show = STAT_ALL,
    .help = "Other servers whose counts moved within the expiry." },
  { .name = "exchange_age", .unit = "ms", .repr = STAT_DOUBLE,
    .off = offsetof (struct gqos_snap, age_ms), .show = STAT_ALL, .dec = 1,
    .pdiv = 1000, .help = "Time since the last exchange of counts that"
    " worked (-1: none yet)." },
  { .name = "share", .unit = "ratio", .repr = STAT_DOUBLE,
    .off = offsetof (struct gqos_snap, share), .show = STAT_ALL, .dec = 3,
    .help = "This server's share of the group's caps now." },
  { .name = "fallback", .unit = "bool", .repr = STAT_BOOL,
    .off = offsetof (struct gqos_snap, fallback), .show = STAT_ALL,
    .help = "The exchange failed for the expiry: its limits are this"
    " server's share (1)." },
  { .name = "exchanges", .unit = "exchanges", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct gqos_snap, exchanges),
    .show = STAT_ALL, .help = "Exchanges of counts that worked." },
  { .name = "exchange_failures", .unit = "exchanges", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = offsetof (struct gqos_snap, failures),
    .show = STAT_ALL, .help = "Exchanges of counts that failed." },
};

static const struct stat_field gqos_table = {
  .name = "gqos", .show = STAT_ALL, STAT_SUB (gqos_fields),
};

void
gqos_group_stats (const struct gqos_group *g, uint64_t now,
                  stat_emit_fn *emit, void *opaque)
{
  struct gqos_snap s = {
    .remote_ios = g->remote.ios[QOS_READ] + g->remote.ios[QOS_WRITE],
    .remote_reserved = g->remote.res_ios,
    .peers = gqos_alive (g),
    .age_ms = g->last_ok ? (double) (now - g->last_ok) / NSEC_PER_MSEC : -1,
    .share = (double) g->share_ppm[QOS_IOPS_MAX] / QOS_SHARE_WHOLE,
    .fallback = g->fallback, .exchanges = g->exchanges,
    .failures = g->failures,
  };

  emit (opaque, &gqos_table, &s);
}
