/* cost.c: the cost model (include/cost.h).
 *
 * Coefficients are kept in picoseconds so that a page of a fast device
 * (585 ns at 7 GB/s) keeps three more digits than ns would, and a 32 MiB
 * request of a slow one (8192 pages at 1 MB/s, 3.4e13 ps) still fits in
 * 64 bits many times over.
 *
 * The online correction compares, over windows of busy time, what the
 * model said the completed requests would take with the time that
 * passed.  "Busy" must mean the device had no spare capacity, or the
 * time that passed says nothing: with "depth" requests at it (the depth
 * its parameters were measured at) it had none.  Each window moves vrate
 * a quarter of the way to the ratio it saw, so one odd window (a stall
 * elsewhere in the system) does not swing the charges, and a device that
 * really changed is followed within a few seconds of load.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cost.h"
#include "devmodel.h"
#include "sched.h"
#include "units.h"

#define PS_PER_SEC 1000000000000ull

const char *const cost_param_names[] = {
  "rbps", "rseqiops", "rrandiops", "wbps", "wseqiops", "wrandiops",
  "depth", NULL
};

static uint64_t *
param_slot (struct cost_params *p, unsigned i)
{
  switch (i) {
  case 0: return &p->bps[COST_READ];
  case 1: return &p->seqiops[COST_READ];
  case 2: return &p->randiops[COST_READ];
  case 3: return &p->bps[COST_WRITE];
  case 4: return &p->seqiops[COST_WRITE];
  case 5: return &p->randiops[COST_WRITE];
  default: return &p->depth;
  }
}

static bool
param_is_rate (unsigned i)
{
  return i == 0 || i == 3;
}

int
cost_params_check (const struct cost_params *p, const char **bad)
{
  struct cost_params c = *p;

  for (unsigned i = 0; cost_param_names[i]; i++) {
    uint64_t v = *param_slot (&c, i), lo, hi;

    if (param_is_rate (i))
      lo = COST_BPS_MIN, hi = COST_BPS_MAX;
    else if (i == 6)
      lo = 1, hi = COST_DEPTH_MAX;
    else
      lo = COST_IOPS_MIN, hi = COST_IOPS_MAX;
    if (v < lo || v > hi) {
      if (bad)
        *bad = cost_param_names[i];
      return -ERANGE;
    }
  }
  return 0;
}

static uint64_t
sub0 (uint64_t a, uint64_t b)
{
  return a > b ? a - b : 0;
}

int
cost_model_init (struct cost_model *m, const struct cost_params *p,
                 const char *source)
{
  int r = cost_params_check (p, NULL);

  if (r < 0)
    return r;
  memset (m, 0, sizeof *m);
  m->p = *p;
  m->source = source;
  for (int d = 0; d < 2; d++) {
    m->page_ps[d] = (uint64_t) ((unsigned __int128) COST_PAGE * PS_PER_SEC
                                / p->bps[d]);
    m->seq_ps[d] = sub0 (PS_PER_SEC / p->seqiops[d], m->page_ps[d]);
    m->rand_ps[d] = sub0 (PS_PER_SEC / p->randiops[d], m->page_ps[d]);
  }
  m->vrate = COST_VRATE_ONE;
  m->ref_ns = cost_rq_raw (m, RQ_READ, COST_PAGE, false);
  if (m->ref_ns == 0)
    m->ref_ns = 1;
  return 0;
}

void
cost_params_default (struct cost_params *p, bool rotational)
{
  struct devmodel *dm;
  int err;

  /* The device model's kinds with their defaults are the generic devices:
   * one definition of "a disk" and "flash" for the whole program.  The
   * model is built and dropped here, at setup, never on the request path.
   */
  dm = devmodel_new (rotational ? "hdd" : "ssd", &err);
  if (dm && devmodel_cost_params (dm, 0, p) == 0) {
    devmodel_free (dm);
    return;
  }
  devmodel_free (dm);
  /* Out of memory: the same kinds' figures, worked out by hand. */
  for (int d = 0; d < 2; d++) {
    p->bps[d] = rotational ? 150000000 : 2000000000;
    p->seqiops[d] = rotational ? 36621 : (d ? 290000 : 141000);
    p->randiops[d] = rotational ? 79 : (d ? 290000 : 141000);
  }
  p->depth = rotational ? 1 : 16;
}

int
cost_params_parse (const char *s, struct cost_params *p, const char **bad)
{
  struct cost_params c;
  bool seen[8] = { false };
  const char *item = s;

  memset (&c, 0, sizeof c);
  for (;;) {
    char key[16], val[64];
    size_t kn, vn;
    unsigned i;
    uint64_t v;
    int r;

    while (*item == ' ' || *item == ',' || *item == '\t')
      item++;
    if (!*item)
      break;
    kn = strcspn (item, "=, \t");
    if (item[kn] != '=' || kn == 0 || kn >= sizeof key)
      goto inval;
    memcpy (key, item, kn);
    key[kn] = '\0';
    vn = strcspn (item + kn + 1, ", \t");
    if (vn == 0 || vn >= sizeof val)
      goto inval;
    memcpy (val, item + kn + 1, vn);
    val[vn] = '\0';
    for (i = 0; cost_param_names[i]; i++)
      if (strcmp (cost_param_names[i], key) == 0)
        break;
    if (!cost_param_names[i] || seen[i])
      goto inval;
    r = param_is_rate (i) ? units_parse_rate (val, &v)
      : units_parse_count (val, &v);
    if (r < 0)
      goto inval;
    *param_slot (&c, i) = v;
    seen[i] = true;
    item += kn + 1 + vn;
  }
  for (unsigned i = 0; cost_param_names[i]; i++)
    if (!seen[i]) {
      if (bad)
        *bad = s + strlen (s);
      return -EINVAL;
    }
  {
    const char *name = NULL;
    int r = cost_params_check (&c, &name);

    if (r < 0) {
      if (bad)
        *bad = strstr (s, name) ? strstr (s, name) : s;
      return r;
    }
  }
  *p = c;
  return 0;

 inval:
  if (bad)
    *bad = item;
  return -EINVAL;
}

size_t
cost_params_format (const struct cost_params *p, char *buf, size_t size)
{
  struct cost_params c = *p;
  size_t len = 0;

  if (size)
    buf[0] = '\0';
  for (unsigned i = 0; cost_param_names[i]; i++) {
    uint64_t v = *param_slot (&c, i);
    char tmp[32];
    int n;

    if (param_is_rate (i))
      units_format_rate (v, tmp, sizeof tmp);
    else
      snprintf (tmp, sizeof tmp, "%" PRIu64, v);
    n = snprintf (len < size ? buf + len : NULL, len < size ? size - len : 0,
                  "%s%s=%s", i ? " " : "", cost_param_names[i], tmp);
    if (n > 0)
      len += (size_t) n;
  }
  return len;
}

uint64_t
cost_rq_raw (const struct cost_model *m, unsigned op, uint32_t len, bool seq)
{
  int d = op == RQ_READ ? COST_READ : COST_WRITE;
  uint64_t pages, ps;

  /* A flush or a trim moves no data: a request's base, no pages. */
  if (op == RQ_FLUSH || op == RQ_TRIM) {
    seq = false;
    len = 0;
  }
  pages = (len + COST_PAGE - 1) / COST_PAGE;
  ps = (seq ? m->seq_ps[d] : m->rand_ps[d]) + pages * m->page_ps[d];
  return ps / 1000;
}

uint64_t
cost_rq (const struct cost_model *m, unsigned op, uint32_t len, bool seq)
{
  return cost_rq_raw (m, op, len, seq) * m->vrate / COST_VRATE_ONE;
}

static void
close_window (struct cost_model *m)
{
  /* corrected prediction / what passed */
  uint64_t pred = m->pred_ns * m->vrate / COST_VRATE_ONE;
  int64_t err = (int64_t) ((double) pred / (double) m->busy_ns * 1e6) - 1000000;
  uint64_t target, v;
  uint32_t mx = 0;

  m->error_ppm = err > INT32_MAX ? INT32_MAX
    : err < INT32_MIN ? INT32_MIN : (int32_t) err;
  m->error_hist[m->windows % 16] = err < 0 ? (uint32_t) -err
    : err > UINT32_MAX ? UINT32_MAX : (uint32_t) err;
  m->windows++;
  for (unsigned i = 0; i < 16 && i < m->windows; i++)
    if (m->error_hist[i] > mx)
      mx = m->error_hist[i];
  m->error_max_ppm = mx;

  /* vrate that would have made this window exact, then a quarter of the
   * way there.
   */
  if (m->pred_ns) {
    target = (uint64_t) ((double) m->busy_ns / (double) m->pred_ns
                         * COST_VRATE_ONE);
    v = (3 * (uint64_t) m->vrate + target) / 4;
    if (v < COST_VRATE_MIN)
      v = COST_VRATE_MIN;
    if (v > COST_VRATE_MAX)
      v = COST_VRATE_MAX;
    m->vrate = (uint32_t) v;
  }
  m->busy_ns = m->pred_ns = 0;
}

void
cost_observe (struct cost_model *m, uint64_t now, int delta, uint64_t raw_ns)
{
  unsigned busy_at = m->p.depth ? (unsigned) m->p.depth : 1;

  if (now > m->last && m->in_dev >= busy_at)
    m->busy_ns += now - m->last;
  if (now > m->last)
    m->last = now;
  if (delta < 0) {
    /* A request that completes while the device was full counts. */
    if (m->in_dev >= busy_at)
      m->pred_ns += raw_ns;
    if (m->in_dev)
      m->in_dev--;
    m->completed++;
    m->pred_total_ns += raw_ns * m->vrate / COST_VRATE_ONE;
  }
  else
    m->in_dev++;
  if (m->busy_ns >= COST_WINDOW)
    close_window (m);
}

double
cost_model_iops (const struct cost_model *m, enum cost_dir d, bool seq)
{
  uint64_t ns = cost_rq (m, d == COST_READ ? RQ_READ : RQ_WRITE, COST_PAGE,
                         seq);

  return ns ? 1e9 / (double) ns : 0;
}

double
cost_model_bps (const struct cost_model *m, enum cost_dir d)
{
  /* A 4 MiB sequential request: the page cost dominates. */
  uint64_t len = 4u << 20;
  uint64_t ns = cost_rq (m, d == COST_READ ? RQ_READ : RQ_WRITE,
                         (uint32_t) len, true);

  return ns ? (double) len * 1e9 / (double) ns : 0;
}

int
cost_calibrate (const struct cost_measure *ms,
                const struct cost_params *fallback, struct cost_params *out,
                char *why, size_t len)
{
  struct cost_params c = *fallback;
  const char *bad = NULL;
  int dirs = ms->bps[COST_WRITE] > 0 ? 2 : 1;

  if (len)
    why[0] = '\0';
  for (int d = 0; d < dirs; d++) {
    const double v[3] = { ms->bps[d], ms->seqiops[d], ms->randiops[d] };
    uint64_t *slot[3] = { &c.bps[d], &c.seqiops[d], &c.randiops[d] };

    for (int i = 0; i < 3; i++)
      *slot[i] = v[i] >= 1 && v[i] < 1e18 ? (uint64_t) (v[i] + 0.5) : 0;
    /* A request of bps_len bytes took t_len, a 4 KiB sequential one t_4k:
     * in the model t_len = base + n pages, t_4k = base + 1 page, so a
     * page is (t_len - t_4k) / (n - 1).  Noise that makes the large
     * request no slower than the small one leaves bps as measured.
     */
    if (ms->bps_len > COST_PAGE && v[0] >= 1 && v[1] >= 1) {
      double n = (double) ms->bps_len / COST_PAGE;
      double t_len = ms->bps_len / v[0], t_4k = 1 / v[1];

      if (t_len > t_4k) {
        double bps = COST_PAGE * (n - 1) / (t_len - t_4k);
        *slot[0] = bps < 1e18 ? (uint64_t) (bps + 0.5) : 0;
      }
    }
  }
  /* Writes not measured keep the fallback's ratio of write to read for
   * each figure: a device that reads 100 times faster than the generic
   * model is not taken to write at the generic model's pace.
   */
  if (dirs == 1) {
    uint64_t *const rd[3] = { &c.bps[COST_READ], &c.seqiops[COST_READ],
                              &c.randiops[COST_READ] };
    uint64_t *const wr[3] = { &c.bps[COST_WRITE], &c.seqiops[COST_WRITE],
                              &c.randiops[COST_WRITE] };
    const uint64_t fb_rd[3] = { fallback->bps[COST_READ],
                                fallback->seqiops[COST_READ],
                                fallback->randiops[COST_READ] };

    /* An estimate is kept within the bounds: only what was measured
     * may refuse the measurement.
     */
    for (int i = 0; i < 3; i++)
      if (fb_rd[i] && *rd[i]) {
        const double lo = i == 0 ? COST_BPS_MIN : COST_IOPS_MIN;
        const double hi = i == 0 ? COST_BPS_MAX : COST_IOPS_MAX;
        double w = (double) *wr[i] * ((double) *rd[i] / fb_rd[i]);

        *wr[i] = (uint64_t) (w < lo ? lo : w > hi ? hi : w + 0.5);
      }
  }
  c.depth = ms->depth;
  if (cost_params_check (&c, &bad) < 0) {
    struct cost_params tmp = c;
    uint64_t val = 0;

    for (unsigned i = 0; cost_param_names[i]; i++)
      if (cost_param_names[i] == bad)
        val = *param_slot (&tmp, i);
    snprintf (why, len, "%s=%" PRIu64 " is out of bounds", bad, val);
    *out = *fallback;
    return 1;
  }
  *out = c;
  return 0;
}

/* ---- statistics ---------------------------------------------------------- */

struct cost_snap {
  const char *source;           /* where the figures come from */
  double vrate;                 /* ratio: predictions are scaled by it */
  double error;                 /* ratio: last window, predicted/busy - 1 */
  double error_max;             /* ratio: largest |error| of 16 windows */
  uint64_t windows;             /* windows closed */
  uint64_t predicted_ns;        /* ns: their predicted device time */
  struct stat_kvs model;        /* the six figures, by their names */
  uint64_t depth;               /* requests */
};

#define C(f) offsetof (struct cost_snap, f)

static const struct stat_field cost_fields[] = {
  { .name = "source", .prom = "cost_info", .repr = STAT_STR,
    .off = C (source), .show = STAT_JP, .help = "The cost model: where its"
    " figures come from (device model, calibration, config, default hdd or"
    " ssd); always 1." },
  { .name = "vrate", .unit = "ratio", .repr = STAT_DOUBLE, .off = C (vrate),
    .show = STAT_JP, .dec = 3, .help = "The cost model's online"
    " correction: every predicted cost is scaled by it (1: the figures as"
    " given; kept within 0.25..4)." },
  { .name = "error_ratio", .unit = "ratio", .repr = STAT_DOUBLE,
    .off = C (error), .show = STAT_JP, .dec = 4, .help = "The cost model's"
    " error over the last window of busy time, after correction: predicted"
    " over measured device time, minus 1." },
  { .name = "error_max_ratio", .unit = "ratio", .repr = STAT_DOUBLE,
    .off = C (error_max), .show = STAT_JP, .dec = 4, .help = "The largest"
    " error of the cost model's last 16 windows, either way (its absolute"
    " value)." },
  { .name = "windows", .unit = "windows", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = C (windows), .show = STAT_JP, .help = "Windows"
    " of busy device time (250 ms each) the cost model's correction"
    " measured." },
  { .name = "predicted_ns", .prom = "predicted_seconds", .unit = "ns",
    .type = STAT_COUNTER, .repr = STAT_U64, .off = C (predicted_ns),
    .show = STAT_JP, .pdiv = 1e9, .help = "Device time the cost model"
    " predicted for the requests completed, corrected." },
  { .name = "model", .label = "figure", .unit = "the figure's",
    .repr = STAT_KV, .off = C (model), .show = STAT_JP, .help = "The cost"
    " model's figures, as blk-iocost's io.cost.model: rbps and wbps in"
    " bytes/s of large sequential transfers, rseqiops, rrandiops, wseqiops"
    " and wrandiops in 4 KiB requests/s, reads and writes." },
  { .name = "depth", .unit = "requests", .repr = STAT_U64, .off = C (depth),
    .show = STAT_JP, .help = "Requests at the device at which the cost"
    " model's figures hold: the depth that keeps it busy." },
};
#undef C

static const struct stat_field cost_table = {
  .name = "cost", .prom = "cost_", .show = STAT_JP, STAT_SUB (cost_fields),
};

void
cost_model_stats (const struct cost_model *m, stat_emit_fn *emit,
                  void *opaque)
{
  struct cost_params p = m->p;
  struct cost_snap c = {
    .source = m->source, .vrate = (double) m->vrate / COST_VRATE_ONE,
    .error = m->error_ppm / 1e6, .error_max = m->error_max_ppm / 1e6,
    .windows = m->windows,
    .predicted_ns = m->pred_total_ns, .depth = p.depth,
  };

  for (unsigned i = 0; i < 6; i++)
    c.model.kv[c.model.n++] = (struct stat_kv) { cost_param_names[i],
                                                 *param_slot (&p, i) };
  emit (opaque, &cost_table, &c);
}
