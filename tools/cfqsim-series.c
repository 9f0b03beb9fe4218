/* cfqsim-series.c: requests and bytes completed per interval of the run.
 *
 * One mechanism for both of cfqsim's time series: --window TIME (the
 * "windows" fields of tenants and groups, and the text report's table)
 * and the per-second series of each tenant ("series_bytes",
 * "series_ios", which tools/cfqlab plots).  A struct series is the shape
 * (interval width and count, the run's duration rounded up); each job
 * counts its completions into its own struct series_counts, and the report
 * sums those by tenant or group.  The rules:
 * - A completion at time t counts in interval t / width.
 * - A completion at the run's very end (t == duration, a whole number of
 *   intervals) counts in the last interval for --window (clamp_end), and
 *   in none for the per-second series.
 * - --window's series also keeps each interval's latencies (insert to
 *   completion), for the percentile of each window (the latency targets'
 *   measure, taken by the simulator on its own).
 */
#include "cfqsim.h"

void
series_init (struct series *s, uint64_t width, uint64_t duration,
             bool clamp_end)
{
  s->width = width;
  s->n = width ? (duration + width - 1) / width : 0;
  s->clamp_end = clamp_end;
}

void
series_counts_init (const struct series *s, struct series_counts *c)
{
  c->ios = s->width ? xcalloc (s->n, sizeof *c->ios) : NULL;
  c->bytes = s->width ? xcalloc (s->n, sizeof *c->bytes) : NULL;
  c->lat = NULL;
  if (s->width && s->lat) {
    c->lat = xcalloc (s->n, sizeof *c->lat);
    for (unsigned i = 0; i < s->n; i++)
      hist_init (&c->lat[i]);
  }
}

void
series_counts_free (const struct series *s, struct series_counts *c)
{
  free (c->ios);
  free (c->bytes);
  c->ios = c->bytes = NULL;
  if (c->lat) {
    for (unsigned i = 0; i < s->n; i++)
      hist_free (&c->lat[i]);
    free (c->lat);
    c->lat = NULL;
  }
}

void
series_add (const struct series *s, struct series_counts *c, uint64_t now,
            uint64_t len, uint64_t lat)
{
  uint64_t i;

  if (!s->width)
    return;
  i = now / s->width;
  if (i >= s->n) {
    if (!s->clamp_end || !s->n)
      return;
    i = s->n - 1;
  }
  c->ios[i]++;
  c->bytes[i] += len;
  if (c->lat)
    hist_add (&c->lat[i], lat);
}

void
series_sum (const struct series *s, struct series_counts *to,
            const struct series_counts *from)
{
  if (!s->width)
    return;
  for (unsigned i = 0; i < s->n; i++) {
    to->ios[i] += from->ios[i];
    to->bytes[i] += from->bytes[i];
    if (to->lat && from->lat)
      hist_merge (&to->lat[i], &from->lat[i]);
  }
}

void
series_json (const struct series *s, const uint64_t *v)
{
  for (unsigned i = 0; i < s->n; i++)
    printf ("%s%" PRIu64, i ? ", " : "", v[i]);
}
