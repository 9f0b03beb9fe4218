/* units.c: times, sizes and rates, parsed and written exactly.
 *
 * One grammar for every number with a unit (include/units.h), so that the
 * config file, "set KEY VALUE" on the control socket, cfqsim and the device
 * model parameters accept the same text and mean the same thing by it.
 * Everything is integer arithmetic with overflow checks: a fraction is
 * accepted only when the value it names is a whole number of the base unit
 * (ns, bytes, bytes/s), so "1.5s" is exactly 1500000000 ns and nothing is
 * ever rounded.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "sched.h"
#include "units.h"

/* DIGITS into *v; *end after them.  -EINVAL if none, -ERANGE on overflow. */
static int
digits (const char *s, uint64_t *v, const char **end)
{
  uint64_t x = 0;
  const char *p = s;

  for (; *p >= '0' && *p <= '9'; p++) {
    unsigned d = *p - '0';
    if (x > (UINT64_MAX - d) / 10)
      return -ERANGE;
    x = x * 10 + d;
  }
  if (p == s)
    return -EINVAL;
  *v = x;
  *end = p;
  return 0;
}

/* DIGITS[.DIGITS] as an exact fraction ip + num / den (den a power of 10,
 * trailing zeros dropped, at most 18 significant fraction digits).
 */
struct decimal {
  uint64_t ip, num, den;
};

static int
decimal (const char *s, struct decimal *d, const char **end)
{
  const char *p;
  int r = digits (s, &d->ip, &p);

  d->num = 0;
  d->den = 1;
  if (r < 0)
    return r;
  if (*p == '.') {
    const char *f = ++p, *last = NULL;
    for (; *p >= '0' && *p <= '9'; p++)
      if (*p != '0')
        last = p;
    if (p == f)
      return -EINVAL;           /* "1." */
    if (last) {
      if (last - f + 1 > 18)
        return -EINVAL;         /* finer than any unit we have */
      for (const char *q = f; q <= last; q++) {
        d->num = d->num * 10 + (*q - '0');
        d->den *= 10;
      }
    }
  }
  *end = p;
  return 0;
}

/* d * mult exactly: -EINVAL if not whole, -ERANGE if too large. */
static int
scale (const struct decimal *d, uint64_t mult, uint64_t *out)
{
  unsigned __int128 frac = (unsigned __int128) d->num * mult;

  if (frac % d->den)
    return -EINVAL;
  frac /= d->den;
  if (mult && d->ip > UINT64_MAX / mult)
    return -ERANGE;
  if (d->ip * mult > UINT64_MAX - frac)
    return -ERANGE;
  *out = d->ip * mult + (uint64_t) frac;
  return 0;
}

int
units_parse_time (const char *s, uint64_t bare, uint64_t *ns)
{
  struct decimal d;
  const char *p;
  uint64_t mult;
  int r = decimal (s, &d, &p);

  if (r < 0)
    return r;
  if (*p == '\0') {
    if (bare == 0 && (d.ip || d.num))
      return -EINVAL;           /* a unit is required */
    mult = bare ? bare : 1;
  }
  else if (strcmp (p, "ns") == 0) mult = 1;
  else if (strcmp (p, "us") == 0) mult = NSEC_PER_USEC;
  else if (strcmp (p, "ms") == 0) mult = NSEC_PER_MSEC;
  else if (strcmp (p, "s") == 0) mult = NSEC_PER_SEC;
  else return -EINVAL;
  return scale (&d, mult, ns);
}

int
units_parse_size (const char *s, uint64_t *bytes)
{
  const char *end;
  uint64_t v;
  unsigned shift;
  int r = digits (s, &v, &end);

  if (r < 0)
    return r;
  switch (*end) {
  case '\0': case 'b': case 'B': shift = 0; break;
  case 'k': case 'K': shift = 10; break;
  case 'm': case 'M': shift = 20; break;
  case 'g': case 'G': shift = 30; break;
  case 't': case 'T': shift = 40; break;
  case 'p': case 'P': shift = 50; break;
  case 'e': case 'E': shift = 60; break;
  default: return -EINVAL;
  }
  if (*end && end[1])
    return -EINVAL;
  if (shift && v > UINT64_MAX >> shift)
    return -ERANGE;
  *bytes = v << shift;
  return 0;
}

int
units_parse_rate (const char *s, uint64_t *bytes_per_sec)
{
  static const char prefixes[] = "kmgtp";
  struct decimal d;
  const char *p, *u;
  uint64_t mult = 1;
  int r = decimal (s, &d, &p);

  if (r < 0)
    return r;
  if (*p && (u = strchr (prefixes, *p | 0x20)) != NULL) {
    bool bin = p[1] == 'i';
    for (int i = 0; i <= u - prefixes; i++)
      mult *= bin ? 1024 : 1000;
    p += bin ? 2 : 1;
  }
  if (*p == 'B')
    p++;
  if (strcmp (p, "/s") == 0)
    p += 2;
  if (*p)
    return -EINVAL;
  return scale (&d, mult, bytes_per_sec);
}

int
units_parse_count (const char *s, uint64_t *v)
{
  const char *end;
  int r = digits (s, v, &end);

  if (r < 0)
    return r;
  return *end ? -EINVAL : 0;
}

int
units_parse_bool (const char *s, bool *b)
{
  static const char *const yes[] = { "1", "true", "t", "yes", "y", "on" };
  static const char *const no[] = { "0", "false", "f", "no", "n", "off" };

  for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
    if (strcasecmp (s, yes[i]) == 0) {
      *b = true;
      return 0;
    }
    if (strcasecmp (s, no[i]) == 0) {
      *b = false;
      return 0;
    }
  }
  return -EINVAL;
}

const char *
units_expect_time (uint64_t bare, char *buf, size_t len)
{
  const char *u = bare == NSEC_PER_SEC ? "s" : bare == NSEC_PER_MSEC ? "ms"
    : bare == NSEC_PER_USEC ? "us" : "ns";

  if (bare)
    snprintf (buf, len, "a number with ns, us, ms or s; a bare number is %s",
              u);
  else
    snprintf (buf, len, "a number with ns, us, ms or s");
  return buf;
}

char *
units_format_time (uint64_t ns, char *buf, size_t len)
{
  if (ns && ns % NSEC_PER_SEC == 0)
    snprintf (buf, len, "%llus", (unsigned long long) (ns / NSEC_PER_SEC));
  else if (ns && ns % NSEC_PER_MSEC == 0)
    snprintf (buf, len, "%llums", (unsigned long long) (ns / NSEC_PER_MSEC));
  else if (ns && ns % NSEC_PER_USEC == 0)
    snprintf (buf, len, "%lluus", (unsigned long long) (ns / NSEC_PER_USEC));
  else
    snprintf (buf, len, "%lluns", (unsigned long long) ns);
  return buf;
}

char *
units_format_size (uint64_t bytes, char *buf, size_t len)
{
  static const char suffix[] = "KMGTPE";
  int i = -1;

  while (bytes && i < 5 && bytes % 1024 == 0) {
    bytes /= 1024;
    i++;
  }
  if (i < 0)
    snprintf (buf, len, "%llu", (unsigned long long) bytes);
  else
    snprintf (buf, len, "%llu%c", (unsigned long long) bytes, suffix[i]);
  return buf;
}

char *
units_format_rate (uint64_t v, char *buf, size_t len)
{
  static const char prefix[] = "kMGTP";
  uint64_t d = v, b = v;
  int di = -1, bi = -1;
  char dt[32], bt[32];

  while (d && di < 4 && d % 1000 == 0) {
    d /= 1000;
    di++;
  }
  while (b && bi < 4 && b % 1024 == 0) {
    b /= 1024;
    bi++;
  }
  snprintf (dt, sizeof dt, "%llu%.*s", (unsigned long long) d, di >= 0,
            di >= 0 ? &prefix[di] : "");
  snprintf (bt, sizeof bt, "%llu%.*si", (unsigned long long) b, bi >= 0,
            bi >= 0 ? &prefix[bi] : "");
  /* "k" is written "Ki" in the binary form, as the parser wants. */
  if (bi == 0)
    bt[strlen (bt) - 2] = 'K';
  snprintf (buf, len, "%s", bi >= 0 && strlen (bt) < strlen (dt) ? bt : dt);
  return buf;
}
