/* config-diag.c: what the section parsers of the config reader share:
 * the names of keys and values, errors and warnings as "FILE:LINE:
 * message", the syntax of the [device] and [scheduler] values, and the
 * hints for a key in the wrong place.
 *
 * Below config.c (the reader: sections, layers, cfg_validate's order) and
 * the sections' files (config-server.c, config-sim.c, config-qos.c): they
 * all call it, it calls none of them.
 */
#include <inttypes.h>

#include "config-priv.h"
#include "cost.h"
#include "suggest.h"

/* ---- the tunables --------------------------------------------------------
 * CFQ's table: entry i is a [scheduler] key unless it is "mode" (a [device]
 * key here); its values are parsed and written by cfq_tunable_parse and
 * cfq_tunable_format.
 */
bool
tunable_is_key (size_t i)
{
  return strcmp (cfq_tunables[i].name, "mode") != 0;
}

const char *const gk_names[GK_TUNABLE] = {
  "file", "queue_depth", "mode", "emulate", "max_connections", "cache",
  "buffer_pool", "memory", "reply_timeout", "calibrate", "calibration",
  "cost_model", "scheduler",
};

/* enum cfg_cache, in order. */
static const char *const cache_names[] = { "none", "page", NULL };

const char *
cfg_cache_name (enum cfg_cache c)
{
  return c <= CFG_CACHE_PAGE ? cache_names[c] : "?";
}

/* enum cfg_calibrate, in order. */
static const char *const calibrate_names[] = { "off", "read", "write", NULL };

const char *
cfg_calibrate_name (enum cfg_calibrate c)
{
  return c <= CFG_CALIBRATE_WRITE ? calibrate_names[c] : "?";
}

/* A string-valued global key: kept as text in gval's file_s / cmd_s. */
bool
gkey_is_text (int k)
{
  return k == GK_FILE || k == GK_CALIBRATION || k == GK_COST_MODEL;
}

const char *const sched_names[] = {
  CFG_DEFAULT_SCHEDULER, "fifo", NULL,
};

const char *const writes_names[] = { "async", "sync", "auto", NULL };

const char *const tls_names[] = { "optional", "require", NULL };

static const char *const group_keys[] = { "weight", "class", "prio", "scope",
                                          NULL };

static const char *const export_keys[] = {
  "group", "offset", "size", "file", "readonly", "writes", "allow", "tls",
  "max_connections", NULL,
};

static const char *const tenant_keys[] = {
  "export", "connections", "rw", "rwmixread", "bs", "iodepth", "thinktime",
  "thinktime_blocks", "number_ios", "rate_iops", "rate", "fsync", "offset",
  "size", "start", "stop", "class", "prio", "workload", NULL,
};

static const char *const sim_keys[] = { "duration", "seed", NULL };

static const char *const event_keys[] = { "at", "command", NULL };

const char *const cfg_workload_names[] = {
  "fio", "fs_mark", "fsync-tester", "dd", "mmap", NULL,
};

int
gkey_lookup (const char *name)
{
  for (int i = 0; i < GK_TUNABLE; i++)
    if (strcmp (gk_names[i], name) == 0)
      return i;
  for (size_t i = 0; i < cfq_nr_tunables; i++)
    if (tunable_is_key (i) && strcmp (cfq_tunables[i].name, name) == 0)
      return GK_TUNABLE + (int) i;
  return -1;
}

enum sec
gkey_sec (int k)
{
  return k < GK_SCHEDULER ? SEC_DEVICE : SEC_SCHED;
}

int
name_index (const char *const *names, const char *s)
{
  for (int i = 0; names[i]; i++)
    if (strcmp (names[i], s) == 0)
      return i;
  return -1;
}

/* ---- errors -------------------------------------------------------------- */

void __attribute__ ((format (printf, 4, 0)))
add_error (struct cfg *cfg, const char *file, unsigned line,
           const char *fmt, va_list ap)
{
  char *msg = NULL, *full = NULL, **v;
  int r;

  if (vasprintf (&msg, fmt, ap) == -1) {
    cfg->oom = true;
    return;
  }
  if (!file)
    r = asprintf (&full, "command line: %s", msg);
  else if (line)
    r = asprintf (&full, "%s:%u: %s", file, line, msg);
  else
    r = asprintf (&full, "%s: %s", file, msg);
  free (msg);
  if (r == -1) {
    cfg->oom = true;
    return;
  }
  v = realloc (cfg->errors, (cfg->nr_errors + 1) * sizeof *v);
  if (!v) {
    free (full);
    cfg->oom = true;
    return;
  }
  cfg->errors = v;
  cfg->errors[cfg->nr_errors++] = full;
  if (cfg->report)
    cfg->report (cfg->opaque, full);
}

/* A warning at LINE of the config file: kept apart from the errors. */
void __attribute__ ((format (printf, 3, 4)))
fwarn (struct cfg *cfg, unsigned line, const char *fmt, ...)
{
  char *msg = NULL, *full = NULL, **v;
  va_list ap;

  va_start (ap, fmt);
  if (vasprintf (&msg, fmt, ap) == -1)
    msg = NULL;
  va_end (ap);
  if (!msg || asprintf (&full, "%s:%u: warning: %s", cfg->filename
                        ? cfg->filename : "config", line, msg) == -1) {
    free (msg);
    cfg->oom = true;
    return;
  }
  free (msg);
  v = realloc (cfg->warnings, (cfg->nr_warnings + 1) * sizeof *v);
  if (!v) {
    free (full);
    cfg->oom = true;
    return;
  }
  cfg->warnings = v;
  cfg->warnings[cfg->nr_warnings++] = full;
  if (cfg->report)
    cfg->report (cfg->opaque, full);
}

size_t
cfg_nr_warnings (const struct cfg *cfg)
{
  return cfg->nr_warnings;
}

const char *
cfg_warning (const struct cfg *cfg, size_t i)
{
  return i < cfg->nr_warnings ? cfg->warnings[i] : NULL;
}

/* An error at LINE of the config file (0: the file as a whole). */
void __attribute__ ((format (printf, 3, 4)))
ferr (struct cfg *cfg, unsigned line, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  add_error (cfg, cfg->filename ? cfg->filename : "config", line, fmt, ap);
  va_end (ap);
}

/* An error in a command-line override or with no file to point at. */
void __attribute__ ((format (printf, 2, 3)))
cerr (struct cfg *cfg, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  add_error (cfg, NULL, 0, fmt, ap);
  va_end (ap);
}

size_t
cfg_nr_errors (const struct cfg *cfg)
{
  return cfg->nr_errors;
}

const char *
cfg_error (const struct cfg *cfg, size_t i)
{
  return i < cfg->nr_errors ? cfg->errors[i] : NULL;
}

/* ---- value syntax -------------------------------------------------------- */

/* "a, b or c" for messages. */
const char *
one_of (const char *const *names, char *buf, size_t len)
{
  size_t n = 0, off = 0;

  while (names[n])
    n++;
  buf[0] = '\0';
  for (size_t i = 0; i < n && off < len; i++)
    off += snprintf (buf + off, len - off, "%s%s",
                     i == 0 ? "" : i + 1 == n ? " or " : ", ", names[i]);
  return buf;
}

/* A connection limit, [device] or [export NAME] max_connections. */
int
parse_max_conns (const char *value, uint64_t *v, char *why, size_t len)
{
  int r = units_parse_count (value, v);

  if (r == 0 && *v >= 1 && *v <= CFG_MAX_CONNECTIONS_MAX)
    return 0;
  snprintf (why, len, "%s (want 1..%d)",
            r == -EINVAL ? "not a number" : "out of range",
            CFG_MAX_CONNECTIONS_MAX);
  return -EINVAL;
}

/* cost_model = VALUE: the cost model's parameters, parsed and bounded by
 * cost_params_parse; 0, or -EINVAL with the reason in WHY.
 */
static int
parse_cost_model (const char *value, char *why, size_t len)
{
  struct cost_params p;
  const char *bad = "";
  int r = cost_params_parse (value, &p, &bad);

  if (r == -ERANGE)
    snprintf (why, len, "%.*s: out of bounds (rbps and wbps 1MB/s..1TB/s,"
              " IOPS 10..100000000, depth 1..4096)",
              (int) strcspn (bad, " ,\t"), bad);
  else if (r < 0 && *bad)
    snprintf (why, len, "at '%.*s': want rbps=RATE rseqiops=N rrandiops=N"
              " wbps=RATE wseqiops=N wrandiops=N depth=N, each once",
              (int) strcspn (bad, " ,\t"), bad);
  else if (r < 0)
    snprintf (why, len, "a key is missing (want rbps, rseqiops, rrandiops,"
              " wbps, wseqiops, wrandiops and depth, each once)");
  return r < 0 ? -EINVAL : 0;
}

/* Parse VALUE for global key K.  On error writes the reason to WHY. */
int
parse_gvalue (int k, const char *value, uint64_t *v, char *why, size_t len)
{
  const char *const *names = NULL;
  const struct cfq_tunable *t;
  char lst[64];
  int r, i;

  switch (k) {
  case GK_FILE:
  case GK_CALIBRATION:
    return 0;
  case GK_COST_MODEL:
    return parse_cost_model (value, why, len);
  case GK_QUEUE_DEPTH:
    r = units_parse_count (value, v);
    if (r == 0 && *v >= 1 && *v <= SCHED_DEPTH_MAX)
      return 0;
    snprintf (why, len, "%s (want 1..%d)",
              r == -EINVAL ? "not a number" : "out of range",
              SCHED_DEPTH_MAX);
    return -EINVAL;
  case GK_MAX_CONNS:
    return parse_max_conns (value, v, why, len);
  case GK_BUFFER_POOL:
    r = units_parse_size (value, v);
    if (r == 0 && *v >= CFG_BUFFER_POOL_MIN && *v <= CFG_BUFFER_POOL_MAX)
      return 0;
    snprintf (why, len, "%s (want %" PRIu64 "M..%" PRIu64 "G: at least the"
              " largest request, %uM, and its edge blocks)",
              r == -EINVAL ? "not a size" : "out of range",
              CFG_BUFFER_POOL_MIN >> 20, CFG_BUFFER_POOL_MAX >> 30,
              CFG_MAX_REQUEST >> 20);
    return -EINVAL;
  case GK_MEMORY:
    r = units_parse_size (value, v);
    if (r == 0 && *v <= CFG_MEMORY_MAX)
      return 0;
    snprintf (why, len, "%s (want a size up to %" PRIu64 "T)",
              r == -EINVAL ? "not a size" : "out of range", CFG_MEMORY_MAX >> 40);
    return -EINVAL;
  case GK_REPLY_TIMEOUT:
    r = units_parse_time (value, 1000000, v);
    if (r == 0 && (*v == 0 || (*v >= CFG_REPLY_TIMEOUT_MIN &&
                               *v <= CFG_REPLY_TIMEOUT_MAX)))
      return 0;
    snprintf (why, len, "%s (want 0 for none, or %" PRIu64 "s..%" PRIu64
              "s)", r == -EINVAL ? "not a time" : "out of range",
              CFG_REPLY_TIMEOUT_MIN / 1000000000,
              CFG_REPLY_TIMEOUT_MAX / 1000000000);
    return -EINVAL;
  case GK_MODE:
    t = cfq_tunable_lookup ("mode");
    break;
  case GK_EMULATE: {
    char all[128];

    /* 0 = none, i + 1 = devmodel_presets[i] */
    if (strcmp (value, "none") == 0) {
      *v = 0;
      return 0;
    }
    for (i = 0; devmodel_presets[i].name; i++)
      if (strcmp (devmodel_presets[i].name, value) == 0) {
        *v = i + 1;
        return 0;
      }
    devmodel_names (all, sizeof all, ", ", " or ");
    snprintf (why, len, "want none, %s", all);
    return -EINVAL;
  }
  case GK_CACHE: names = cache_names; break;
  case GK_CALIBRATE: names = calibrate_names; break;
  case GK_SCHEDULER: names = sched_names; break;
  default:
    t = &cfq_tunables[k - GK_TUNABLE];
    break;
  }
  if (names) {
    struct suggest s;
    char hint[128];

    i = name_index (names, value);
    if (i >= 0) {
      *v = i;
      return 0;
    }
    /* The list, and the nearest name when one is near enough. */
    suggest_init (&s, value);
    suggest_add_all (&s, names);
    snprintf (why, len, "want %s%s", one_of (names, lst, sizeof lst),
              suggest_best (&s) ? suggest_hint (&s, hint, sizeof hint) : "");
    return -EINVAL;
  }
  r = cfq_tunable_parse (t->name, value, v);
  if (r < 0) {
    cfq_tunable_explain (t, value, r, why, len);
    return -EINVAL;
  }
  return 0;
}

/* ---- building up the layers ---------------------------------------------- */

char *
xstrdup (struct cfg *cfg, const char *s)
{
  char *d = strdup (s);

  if (!d)
    cfg->oom = true;
  return d;
}

/* A path from the file, relative to the file's directory.  An RBD
 * image's name (CFG_RBD_PREFIX) is no path: it is kept as written.
 */
char *
file_path (struct cfg *cfg, const char *value)
{
  char *p;

  if (value[0] == '/' || cfg->dir[0] == '\0' ||
      strncmp (value, CFG_RBD_PREFIX, strlen (CFG_RBD_PREFIX)) == 0)
    return xstrdup (cfg, value);
  if (asprintf (&p, "%s%s", cfg->dir, value) == -1) {
    cfg->oom = true;
    return NULL;
  }
  return p;
}

/* ---- keys in the wrong place ------------------------------------------------ */

/* Which sections a known key belongs in, for "belongs in" hints. */
static const char *
key_home (const char *key)
{
  int k = gkey_lookup (key);
  bool in_group = name_index (group_keys, key) >= 0
    || qos_key_lookup (key) != NULL || lat_key_lookup (key) != NULL;
  bool in_export = name_index (export_keys, key) >= 0;

  if (k == GK_FILE || k == GK_MAX_CONNS)
    return "[device] or [export NAME]";
  if (k >= 0)
    return gkey_sec (k) == SEC_DEVICE ? "[device]" : "[scheduler]";
  if (strncmp (key, "model.", 6) == 0)
    return "[device]";
  if (in_group)
    return "[group NAME]";
  if (in_export)
    return "[export NAME]";
  if (name_index (tenant_keys, key) >= 0)
    return "[tenant NAME]";
  if (name_index (sim_keys, key) >= 0)
    return "[sim]";
  if (name_index (event_keys, key) >= 0)
    return "[event NAME]";
  return NULL;
}

/* The keys of section SEC into S, for "did you mean". */
void
sec_suggest (struct suggest *s, enum sec sec)
{
  switch (sec) {
  case SEC_DEVICE:
    for (int k = 0; k < GK_SCHEDULER; k++)
      suggest_add (s, gk_names[k]);
    break;
  case SEC_SCHED:
    for (int k = GK_SCHEDULER; k < GK_TUNABLE; k++)
      suggest_add (s, gk_names[k]);
    for (size_t i = 0; i < cfq_nr_tunables; i++)
      if (tunable_is_key (i))
        suggest_add (s, cfq_tunables[i].name);
    break;
  case SEC_GROUP:
    suggest_add_all (s, group_keys);
    for (size_t i = 0; i < qos_nr_keys; i++)
      suggest_add (s, qos_keys[i].name);
    for (size_t i = 0; i < lat_nr_keys; i++)
      suggest_add (s, lat_keys[i].name);
    break;
  case SEC_EXPORT: suggest_add_all (s, export_keys); break;
  case SEC_TENANT: suggest_add_all (s, tenant_keys); break;
  case SEC_SIM: suggest_add_all (s, sim_keys); break;
  case SEC_EVENT: suggest_add_all (s, event_keys); break;
  default: break;
  }
}

void
unknown_key (struct cfg *cfg, enum sec sec, const char *key,
             const char *secname)
{
  const char *home = key_home (key);
  struct suggest s;
  char hint[256];

  if (home) {
    ferr (cfg, cfg->lineno, "'%s' belongs in %s, not in %s", key, home,
          secname);
    return;
  }
  suggest_init (&s, key);
  sec_suggest (&s, sec);
  ferr (cfg, cfg->lineno, "unknown key '%s' in %s%s", key, secname,
        suggest_hint (&s, hint, sizeof hint));
}

/* cfqsim's job files had a language of their own; other keys of it are
 * refused with their new spelling.  Writes the hint for KEY in section SEC
 * to BUF, or returns NULL.
 */
static const char *
old_key_hint (enum sec sec, const char *key, char *buf, size_t len)
{
  static const struct { enum sec sec; const char *key, *hint; } old[] = {
    { SEC_DEVICE, "model", "[device] model= is now [device] emulate=" },
    { SEC_DEVICE, "kind", "[device] kind= is now [device] emulate=" },
    { SEC_SCHED, "policy", "[sched] policy= is now [scheduler] scheduler=" },
    { SEC_SCHED, "sched", "[sched] sched= is now [scheduler] scheduler=" },
    { SEC_SIM, "model", "[global] model= is now [device] emulate=" },
    { SEC_SIM, "device", "[global] device= is now [device] emulate=" },
    { SEC_SIM, "sched", "[global] sched= is now [scheduler] scheduler=" },
    { SEC_SIM, "policy", "[global] policy= is now [scheduler] scheduler=" },
    { SEC_TENANT, "depth", "[job] depth= is now [tenant] iodepth=" },
    { SEC_TENANT, "think", "[job] think= is now [tenant] thinktime=" },
    { SEC_TENANT, "level", "[job] level= is now [tenant] prio=" },
    { SEC_TENANT, "pattern", "[job] pattern= is now part of [tenant] rw="
      " (read, write, randread, randwrite, rw or randrw)" },
    { SEC_TENANT, "stride", "[job] stride= is now [tenant] rw=read:SKIP"
      " (fio's: SKIP = stride - bs)" },
    { SEC_TENANT, "sync", "[job] sync=1 is now [export NAME] writes=sync"
      " on the tenant's export" },
    { SEC_TENANT, "meta", "[job] meta= is gone (NBD has no metadata flag)" },
    { SEC_TENANT, "group", "[job] group= is now [tenant] export=NAME, and"
      " that [export NAME] names the group" },
  };
  enum sec s = sec == SEC_OLDJOB ? SEC_TENANT : sec;

  for (size_t i = 0; i < sizeof old / sizeof old[0]; i++)
    if (old[i].sec == s && strcmp (old[i].key, key) == 0) {
      snprintf (buf, len, "%s", old[i].hint);
      return buf;
    }
  /* [device] rpm= and the like: the device model's parameters. */
  if (sec == SEC_DEVICE)
    for (const char *const *kind = devmodel_kinds; *kind; kind++) {
      struct devmodel *dm = devmodel_new (*kind, NULL);
      int found = dm ? name_index (devmodel_params (dm), key) : -1;
      devmodel_free (dm);
      if (found >= 0) {
        snprintf (buf, len, "[device] %s= is now [device] model.%s=", key,
                  key);
        return buf;
      }
    }
  return NULL;
}

/* An unknown or misplaced KEY in section SEC (named SECNAME). */
void
bad_key (struct cfg *cfg, enum sec sec, const char *key, const char *secname)
{
  char hint[160];

  if (old_key_hint (sec, key, hint, sizeof hint))
    ferr (cfg, cfg->lineno, "'%s': %s", key, hint);
  else if (sec != SEC_OLDJOB)
    unknown_key (cfg, sec, key, secname);
}

/* Note KEY at this line in *L; false (and an error) if it was there before. */
bool
first_time (struct cfg *cfg, unsigned *l, const char *key)
{
  if (*l) {
    ferr (cfg, cfg->lineno, "duplicate key '%s' (first at line %u)", key, *l);
    return false;
  }
  *l = cfg->lineno;
  return true;
}

/* A text key's value: the command line's, else the file's, else NULL. */
const char *
gtext (const struct cfg *cfg, int k)
{
  const struct gval *g = &cfg->gv[k];

  return g->cmd_set ? g->cmd_s : g->line ? g->file_s : NULL;
}

const char *
cfg_device_file (const struct cfg *cfg)
{
  return gtext (cfg, GK_FILE);
}
