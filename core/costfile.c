/* costfile.c: the saved cost model of calibration = FILE
 * (include/costfile.h).
 *
 * The file is read back at every start, possibly after an upgrade, an
 * edit by hand or a crash halfway through writing it elsewhere; so the
 * reader is strict: every key once, nothing unknown, each value of its
 * grammar, the model within cost_params_check's bounds.  Anything else is
 * refused with the line and the reason, and the server measures again.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "costfile.h"
#include "units.h"

#define DATE_FMT "%Y-%m-%dT%H:%M:%SZ"
#define MODEL_KEYS "rbps=RATE rseqiops=N rrandiops=N wbps=RATE wseqiops=N" \
  " wrandiops=N depth=N, each once"

enum { K_VERSION, K_DEVICE, K_DATE, K_TOOK, K_CALIBRATE, K_MODEL, K_NR };

static const char *const keys[K_NR] = {
  "version", "device", "date", "took", "calibrate", "model",
};

char *
cost_date_format (int64_t date, char *buf, size_t size)
{
  time_t t = (time_t) date;
  struct tm tm;

  if (!size)
    return buf;
  if (!gmtime_r (&t, &tm) || strftime (buf, size, DATE_FMT, &tm) == 0)
    snprintf (buf, size, "@%" PRId64, date);
  return buf;
}

size_t
cost_ident_format (const struct cost_ident *id, char *buf, size_t size)
{
  int n;

  if (id->blockdev)
    n = snprintf (buf, size, "block %u:%u size %" PRIu64, id->major,
                  id->minor, id->size);
  else
    n = snprintf (buf, size, "file %u:%u inode %" PRIu64 " size %" PRIu64,
                  id->major, id->minor, id->ino, id->size);
  return n < 0 ? 0 : (size_t) n;
}

bool
cost_ident_same (const struct cost_ident *a, const struct cost_ident *b)
{
  return a->blockdev == b->blockdev && a->major == b->major
    && a->minor == b->minor && a->ino == b->ino && a->size == b->size;
}

size_t
cost_file_format (const struct cost_saved *s, char *buf, size_t size)
{
  char dev[128], date[32], took[32], model[256];
  int n;

  cost_ident_format (&s->id, dev, sizeof dev);
  cost_date_format (s->date, date, sizeof date);
  /* Whole ms: the parser takes the unit, and ns would say nothing more. */
  units_format_time (s->took / 1000000 * 1000000, took, sizeof took);
  cost_params_format (&s->p, model, sizeof model);
  n = snprintf (buf, size,
                "# nbdkit-cfq calibration: the cost model measured on the"
                " device below.\n"
                "# Read back at start when the device is the same one;"
                " written by the server.\n"
                "version = %d\n"
                "device = %s\n"
                "date = %s\n"
                "took = %s\n"
                "calibrate = %s\n"
                "model = %s\n",
                COST_FILE_VERSION, dev, date, took,
                s->writes ? "write" : "read", model);
  return n < 0 ? 0 : (size_t) n;
}

/* "file MAJ:MIN inode N size N" or "block MAJ:MIN size N". */
static int
parse_ident (const char *v, struct cost_ident *id)
{
  char kind[8], rest[8];
  unsigned long long ino = 0, sz;
  unsigned maj, min;
  int n = -1;

  memset (id, 0, sizeof *id);
  if (sscanf (v, "%7s", kind) != 1)
    return -EINVAL;
  if (strcmp (kind, "block") == 0) {
    if (sscanf (v, "block %u:%u size %llu%n", &maj, &min, &sz, &n) != 3)
      return -EINVAL;
    id->blockdev = true;
  }
  else if (strcmp (kind, "file") == 0) {
    if (sscanf (v, "file %u:%u inode %llu size %llu%n", &maj, &min, &ino,
                &sz, &n) != 4)
      return -EINVAL;
  }
  else
    return -EINVAL;
  if (n < 0 || sscanf (v + n, "%7s", rest) == 1)
    return -EINVAL;
  /* sscanf's %u and %llu take a sign; a device number never has one. */
  if (strchr (v, '-') || strchr (v, '+'))
    return -EINVAL;
  id->major = maj;
  id->minor = min;
  id->ino = ino;
  id->size = sz;
  return 0;
}

static int
parse_date (const char *v, int64_t *date)
{
  struct tm tm;
  const char *end;
  time_t t;

  memset (&tm, 0, sizeof tm);
  end = strptime (v, DATE_FMT, &tm);
  if (!end || *end)
    return -EINVAL;
  t = timegm (&tm);
  if (t == (time_t) -1)
    return -EINVAL;
  *date = (int64_t) t;
  return 0;
}

/* One "key = value" line (no newline, not blank, not a comment) into *s;
 * seen[] marks the keys met.
 */
static int
parse_line (char *line, struct cost_saved *s, bool seen[K_NR], char *why,
            size_t wlen)
{
  char *eq = strchr (line, '='), *k, *v, *e;
  const char *bad = NULL;
  uint64_t x;
  int i, r;

  if (!eq) {
    snprintf (why, wlen, "expected 'key = value'");
    return -EINVAL;
  }
  *eq = '\0';
  k = line;
  v = eq + 1;
  while (*k == ' ' || *k == '\t')
    k++;
  for (e = eq; e > k && (e[-1] == ' ' || e[-1] == '\t'); e--)
    e[-1] = '\0';
  while (*v == ' ' || *v == '\t')
    v++;
  for (e = v + strlen (v); e > v && (e[-1] == ' ' || e[-1] == '\t'); e--)
    e[-1] = '\0';
  for (i = 0; i < K_NR; i++)
    if (strcmp (keys[i], k) == 0)
      break;
  if (i == K_NR) {
    snprintf (why, wlen, "unknown key '%.40s'", k);
    return -EINVAL;
  }
  if (seen[i]) {
    snprintf (why, wlen, "%s given twice", keys[i]);
    return -EINVAL;
  }
  seen[i] = true;
  switch (i) {
  case K_VERSION:
    if (units_parse_count (v, &x) < 0 || x != COST_FILE_VERSION) {
      snprintf (why, wlen, "version = %.40s: this server reads version %d",
                v, COST_FILE_VERSION);
      return -EINVAL;
    }
    return 0;
  case K_DEVICE:
    if (parse_ident (v, &s->id) < 0) {
      snprintf (why, wlen, "device = %.80s: want 'file MAJ:MIN inode N size"
                " N' or 'block MAJ:MIN size N'", v);
      return -EINVAL;
    }
    return 0;
  case K_DATE:
    if (parse_date (v, &s->date) < 0) {
      snprintf (why, wlen, "date = %.40s: want YYYY-MM-DDTHH:MM:SSZ", v);
      return -EINVAL;
    }
    return 0;
  case K_TOOK:
    if (units_parse_time (v, 0, &s->took) < 0) {
      snprintf (why, wlen, "took = %.40s: want a time with its unit", v);
      return -EINVAL;
    }
    return 0;
  case K_CALIBRATE:
    if (strcmp (v, "read") == 0 || strcmp (v, "write") == 0) {
      s->writes = v[0] == 'w';
      return 0;
    }
    snprintf (why, wlen, "calibrate = %.40s: want read or write", v);
    return -EINVAL;
  default:
    r = cost_params_parse (v, &s->p, &bad);
    if (r == -ERANGE)
      snprintf (why, wlen, "model: %.*s: out of bounds (rates 1MB/s..1TB/s,"
                " IOPS 10..100000000, depth 1..4096)",
                (int) strcspn (bad, " ,\t"), bad);
    else if (r < 0 && *bad)
      snprintf (why, wlen, "model: at '%.*s': want " MODEL_KEYS,
                (int) strcspn (bad, " ,\t"), bad);
    else if (r < 0)
      snprintf (why, wlen, "model: a key is missing (want " MODEL_KEYS ")");
    return r;
  }
}

int
cost_file_parse (const char *text, size_t len, struct cost_saved *s,
                 char *why, size_t wlen)
{
  struct cost_saved c;
  bool seen[K_NR] = { false };
  const char *p = text, *end = text + len;
  char msg[200];
  unsigned lineno = 0;

  memset (&c, 0, sizeof c);
  if (wlen)
    why[0] = '\0';
  while (p < end) {
    const char *nl = memchr (p, '\n', end - p);
    size_t n = nl ? (size_t) (nl - p) : (size_t) (end - p);
    char line[512];
    const char *q;
    int r;

    lineno++;
    if (memchr (p, '\0', n)) {
      snprintf (why, wlen, "line %u: a NUL byte: not a calibration file",
                lineno);
      return -EINVAL;
    }
    if (n >= sizeof line) {
      snprintf (why, wlen, "line %u: longer than %zu characters", lineno,
                sizeof line - 1);
      return -EINVAL;
    }
    memcpy (line, p, n);
    line[n] = '\0';
    p += n + (nl != NULL);
    for (q = line; *q == ' ' || *q == '\t' || *q == '\r'; q++)
      ;
    if (!*q || *q == '#')
      continue;
    r = parse_line (line, &c, seen, msg, sizeof msg);
    if (r < 0) {
      snprintf (why, wlen, "line %u: %s", lineno, msg);
      return r;
    }
  }
  for (int i = 0; i < K_NR; i++)
    if (!seen[i]) {
      snprintf (why, wlen, "no '%s = ...' line%s", keys[i],
                lineno ? "" : " (the file is empty)");
      return -EINVAL;
    }
  *s = c;
  return 0;
}
