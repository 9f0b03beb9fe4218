/* latency.c: the keys of a group's latency target and start-up boost
 * (include/latency.h): names, units, ranges, defaults, and how a value is
 * written back.  Parsing text is cfg_parse_latency's (core/config-qos.c),
 * by the unit the table gives; what the settings do is
 * core/cfq-latency.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "latency.h"
#include "units.h"

static const char *const pct_names[] = { "90", "95", "99", NULL };
static const unsigned pct_values[] = { 90, 95, 99 };
static const char *const mode_names[] = { "graded", "binary", NULL };
static const unsigned mode_values[] = { LAT_MODE_GRADED, LAT_MODE_BINARY };

const struct lat_key lat_keys[LAT_NR_KEYS] = {
  { "latency_target", LAT_U_TIME, LAT_TARGET_MIN, LAT_TARGET_MAX, NULL, NULL,
    "the group's completion latency at latency_percentile, judged per"
    " window (0: none; see the manual)" },
  { "latency_percentile", LAT_U_CHOICE, 0, 0, pct_names, pct_values,
    "the percentile latency_target is for: 90, 95 or 99 (default 95)" },
  { "latency_mode", LAT_U_CHOICE, 0, 0, mode_names, mode_values,
    "graded: lower the others' weights by the miss (default); binary: clamp"
    " the others' depth to 1 while it misses" },
  { "boost", LAT_U_BOOL, 0, 1, NULL, NULL,
    "a new connection, or one busy again after idling, is charged a"
    " fraction of its service for a while (see the manual)" },
};
const size_t lat_nr_keys = LAT_NR_KEYS;

void
lat_conf_init (struct lat_conf *c)
{
  memset (c, 0, sizeof *c);
  c->percentile = LAT_PERCENTILE_DEFAULT;
  c->mode = LAT_MODE_GRADED;
  c->boost = LAT_BOOST_DEFAULT;
}

bool
lat_conf_default (const struct lat_conf *c)
{
  struct lat_conf d;

  lat_conf_init (&d);
  return c->target == d.target && c->percentile == d.percentile
    && c->mode == d.mode && c->boost == d.boost;
}

const struct lat_key *
lat_key_lookup (const char *name)
{
  for (size_t i = 0; i < lat_nr_keys; i++)
    if (strcmp (lat_keys[i].name, name) == 0)
      return &lat_keys[i];
  return NULL;
}

static size_t
key_index (const struct lat_key *k)
{
  return (size_t) (k - lat_keys);
}

uint64_t
lat_conf_get (const struct lat_conf *c, const struct lat_key *k)
{
  switch (key_index (k)) {
  case 0: return c->target;
  case 1: return c->percentile;
  case 2: return c->mode;
  default: return c->boost;
  }
}

/* Does key K take VAL? */
static bool
lat_key_takes (const struct lat_key *k, uint64_t val)
{
  switch (k->unit) {
  case LAT_U_TIME:
    return !val || (val >= k->min && val <= k->max);
  case LAT_U_CHOICE:
    for (size_t i = 0; k->names[i]; i++)
      if (k->values[i] == val)
        return true;
    return false;
  case LAT_U_BOOL:
    return val <= 1;
  }
  return false;
}

bool
lat_conf_valid (const struct lat_conf *c)
{
  for (size_t i = 0; i < lat_nr_keys; i++)
    if (!lat_key_takes (&lat_keys[i], lat_conf_get (c, &lat_keys[i])))
      return false;
  return true;
}

int
lat_conf_set (struct lat_conf *c, const struct lat_key *k, uint64_t val)
{
  if (!lat_key_takes (k, val))
    return -ERANGE;
  switch (key_index (k)) {
  case 0: c->target = val; break;
  case 1: c->percentile = (unsigned) val; break;
  case 2: c->mode = (unsigned) val; break;
  default: c->boost = (unsigned) val; break;
  }
  return 0;
}

char *
lat_format (const struct lat_key *k, uint64_t val, char *buf, size_t len)
{
  switch (k->unit) {
  case LAT_U_TIME:
    return units_format_time (val, buf, len);
  case LAT_U_CHOICE:
    for (size_t i = 0; k->names[i]; i++)
      if (k->values[i] == val) {
        snprintf (buf, len, "%s", k->names[i]);
        return buf;
      }
    break;
  case LAT_U_BOOL:
    snprintf (buf, len, "%s", val ? "on" : "off");
    return buf;
  }
  snprintf (buf, len, "%llu", (unsigned long long) val);
  return buf;
}
