/* config.c: the configuration model for many tenants on one disk.
 *
 * What it decides.  A config file says which disk we serve ([device]), how
 * the scheduler is tuned ([scheduler]), which tenants share the disk and in
 * what proportion ([group NAME]: a CFQ blkio group, weight 100..1000), and
 * what each client may open ([export NAME]: a region of the disk or a file
 * of its own, its group, who may connect).  This file turns that text into
 * a model the plugin can act on without checking anything again: every
 * value parsed and in range, every name resolved to an index, every region
 * inside the device and disjoint from the others.
 *
 *     config=FILE  --cfg_parse()-->  file layer ----.
 *                                                     +--> cfg_validate(size)
 *     key=value    --cfg_set_override()--> cmd layer -'        |
 *                                                          struct cfg_model
 *
 * Two layers.  Device and scheduler keys may also come from nbdkit's command
 * line, which nbdkit hands over in command-line order: "slice_idle=0
 * config=x.conf" must still let the 0 win.  So the file and the command line
 * fill separate slots and the model is resolved only at validation: command
 * line, else file, else default.  Groups and exports exist only in the file.
 *
 * Two phases of checking.  Everything a single line can get wrong (syntax,
 * unknown or misplaced key, duplicate key or section, bad number, suffix,
 * range, CIDR, alignment) is reported while parsing, at that line.  What
 * needs the whole file, the overrides or the device size (which group an
 * export joins, whether regions overlap or run past the end, whether there
 * is any export at all) is checked by cfg_validate(), at the line of the
 * key responsible: the size= line for a region past the end, the offset=
 * line (else the section header) for an overlap.  Errors never stop the
 * parse: a user fixing a config sees all of them at once.
 *
 * Reading the text.  libinih splits "key = value", strips comments and
 * whitespace, but its handler is not told the line number (Debian builds it
 * with INI_HANDLER_LINENO=0, an ABI choice), nor about a section that has
 * no keys, and it would take an indented line for the continuation of the
 * previous value.  We therefore feed it through ini_parse_stream() with our
 * own reader, which hands it one physical line per call and so always knows
 * the current line; the reader also strips indentation (no multi-line
 * values), handles section headers itself (so "[export scratch]" with every
 * key defaulted exists, and "[export a]" twice is caught), and reports lines
 * inih could not parse or could not hold (longer than its buffer).
 *
 * Decisions (documented in the README):
 *  - A bare time is in ms and a bare back_seek_max in KiB, the units of
 *    CFQ's sysfs files; a suffix names the unit.  Sizes follow
 *    nbdkit_parse_size (b k m g t p e, powers of 1024).
 *  - Export offsets and explicit sizes are multiples of 4096 (O_DIRECT on any
 *    device with logical blocks up to 4K); a size left out is the rest of
 *    the device, to the byte.
 *  - Regions may overlap only if both exports are readonly.  An export with
 *    its own file= has no offset/size; two exports may name the same file
 *    only if both are readonly, and none may name the device (compared as
 *    text: symlinks and hard links are the plugin's to catch).
 *  - "[export]" with no name is the default export "" (what a client gets
 *    without asking for a name).  Exports without group= join "default",
 *    which exists implicitly (weight 500, be, prio 4) and may be declared to
 *    change it.  With no config file at all the model is one export "" in
 *    group "default" over the whole device.
 *  - allow = a list (commas or spaces) of IPv4/IPv6 addresses, CIDR
 *    networks (host bits must be zero), and "unix" for Unix-socket clients.
 *    No allow= means anyone.
 *  - Relative paths in the file are relative to the file's directory.
 *
 * Caps and reservations ([group] iops_max, bps_min, ... : include/qos.h's
 * key table) are parsed by cfg_parse_qos, by the unit the table gives
 * (requests/s a count, bytes/s a rate, burst seconds a time whose bare
 * number is seconds), and checked as a set by qos_conf_check at
 * cfg_validate (a cap below a reservation is an error at the
 * reservation's line).  They need scheduler = cfq: with fifo each is an
 * error.  With emulation, the reservations adding up to more than the
 * model gives is a warning.
 *
 * Defined once.  The scheduler keys, their units and ranges are CFQ's own
 * table (cfq_tunables in include/cfq.h), so a value accepted here is one
 * sched_set() accepts.  CFQ keeps "mode" as a tunable too; the config puts
 * it in [device] (auto|time|iops) and passes it on as that tunable.  The
 * model.* parameters are checked by the device model itself
 * (include/devmodel.h): cfg_validate() makes the model [device] emulate
 * names and sets each parameter on it.  The names emulate takes are the
 * device models' own table (devmodel_presets), "none" aside.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <ini.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>

#include "cfq.h"
#include "config.h"
#include "devmodel.h"
#include "utf8.h"
#include "qos.h"
#include "rng.h"
#include "units.h"

#define NAME_MAX_LEN 4096       /* NBD's limit on export names */

/* ---- the tunables --------------------------------------------------------
 * CFQ's table: entry i is a [scheduler] key unless it is "mode" (a [device]
 * key here); its values are parsed and written by cfq_tunable_parse and
 * cfq_tunable_format.
 */
static bool
tunable_is_key (size_t i)
{
  return strcmp (cfq_tunables[i].name, "mode") != 0;
}

/* ---- sections and keys ------------------------------------------------- */

enum sec {
  SEC_NONE = 0,                 /* before the first header */
  SEC_SKIP,                     /* in a bad section: its keys are ignored */
  SEC_DEVICE,
  SEC_SCHED,
  SEC_GROUP,
  SEC_EXPORT,
  SEC_TENANT,
  SEC_SIM,
  SEC_EVENT,
  SEC_OLDJOB,                   /* cfqsim's old [job NAME]: hints only */
};

/* Device and scheduler keys ("global" keys): the fixed ones, then one per
 * tunable at GK_TUNABLE + i.  These are the keys overrides may set.
 */
enum {
  GK_FILE = 0,
  GK_QUEUE_DEPTH,
  GK_MODE,
  GK_EMULATE,
  GK_MAX_CONNS,
  GK_CACHE,
  GK_BUFFER_POOL,
  GK_SCHEDULER,
  GK_TUNABLE,
};
#define NR_GKEYS (GK_TUNABLE + cfq_nr_tunables)

static const char *const gk_names[GK_TUNABLE] = {
  "file", "queue_depth", "mode", "emulate", "max_connections", "cache",
  "buffer_pool", "scheduler",
};
/* enum cfg_cache, in order. */
static const char *const cache_names[] = { "none", "page", NULL };
static const char *const sched_names[] = {
  CFG_DEFAULT_SCHEDULER, "fifo", NULL,
};
static const char *const class_names[] = { "rt", "be", "idle", NULL };
static const char *const writes_names[] = { "async", "sync", "auto", NULL };
static const char *const tls_names[] = { "optional", "require", NULL };

static const char *const group_keys[] = { "weight", "class", "prio", NULL };
static const char *const export_keys[] = {
  "group", "offset", "size", "file", "readonly", "writes", "allow", "tls",
  "max_connections", NULL,
};
static const char *const tenant_keys[] = {
  "export", "connections", "rw", "rwmixread", "bs", "iodepth", "thinktime",
  "rate_iops", "rate", "fsync", "offset", "size", "start", "stop", "class",
  "prio", "workload", NULL,
};
static const char *const sim_keys[] = { "duration", "seed", NULL };
static const char *const event_keys[] = { "at", "command", NULL };
const char *const cfg_workload_names[] = {
  "fio", "fs_mark", "fsync-tester", "dd", "mmap", NULL,
};

/* rw = NAME[:SKIP], fio's words: the pattern and the share of reads. */
static const struct {
  const char *name, *canon;
  bool rand;
  int reads;                    /* percent; -1: rwmixread (default 50) */
} rw_names[] = {
  { "read", "read", false, 100 }, { "write", "write", false, 0 },
  { "randread", "randread", true, 100 },
  { "randwrite", "randwrite", true, 0 },
  { "rw", "rw", false, -1 }, { "readwrite", "rw", false, -1 },
  { "randrw", "randrw", true, -1 },
};

static int
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

static enum sec
gkey_sec (int k)
{
  return k < GK_SCHEDULER ? SEC_DEVICE : SEC_SCHED;
}

static int
name_index (const char *const *names, const char *s)
{
  for (int i = 0; names[i]; i++)
    if (strcmp (names[i], s) == 0)
      return i;
  return -1;
}

/* ---- the state ----------------------------------------------------------- */

/* One global key's two layers. */
struct gval {
  unsigned line;                /* of the key in the file; 0 = not there */
  bool cmd_set;                 /* given on the command line */
  uint64_t file_v, cmd_v;       /* number, enum index or tunable value */
  char *file_s, *cmd_s;         /* string keys (file) */
};

/* A model.* parameter in one layer. */
struct xparam {
  char *key, *value;
  unsigned line;                /* 0 on the command line */
};

struct xgroup {
  char *name;
  unsigned weight, prio;
  enum sched_class cls;
  struct qos_conf qos;          /* caps and reservation */
  unsigned line;                /* of the header */
  unsigned l_weight, l_class, l_prio; /* of each key; 0 = defaulted */
  unsigned l_qos[QOS_NR_KEYS];  /* of each qos_keys[] key; 0 = not given */
};

struct xexport {
  char *name;
  char *group;                  /* group= as written, or NULL */
  char *file;                   /* resolved against the config's dir */
  uint64_t offset, size;        /* bytes, as written */
  bool readonly, writes_sync, writes_async;
  bool tls_required;            /* tls = require */
  unsigned max_conns;           /* max_connections, 0: not given */
  bool bad_region;              /* offset= or size= was refused */
  struct cfg_net *allow;
  size_t nr_allow;
  unsigned line;                /* of the header */
  unsigned l_group, l_file, l_offset, l_size, l_readonly, l_writes, l_allow;
  unsigned l_tls, l_max_conns;
};

/* A [tenant NAME]: a workload, fio's way (core/config.h). */
struct xtenant {
  char *name;
  char *export;                 /* export= as written, or NULL: "" */
  struct cfg_tenant t;          /* the values; export, cls, prio resolved
                                   by cfg_validate */
  unsigned rwmix;                /* rwmixread= as given */
  bool rwmix_given;
  bool bad;                     /* a value was refused: skip checks */
  unsigned line;                /* of the header */
  unsigned l_export, l_connections, l_rw, l_rwmixread, l_bs, l_iodepth,
    l_thinktime, l_rate_iops, l_rate, l_fsync, l_offset, l_size, l_start,
    l_stop, l_class, l_prio, l_workload;
};

/* An [event NAME]: a control command at a time (core/config.h). */
struct xevent {
  char *name;
  char *command;                /* as written, quotes removed */
  uint64_t at;
  unsigned line;                /* of the header */
  unsigned l_at, l_command;
};

struct cfg {
  cfg_report_fn report;
  void *opaque;
  bool oom;                     /* an allocation failed: -ENOMEM from now */

  char **errors;                /* "FILE:LINE: message" */
  size_t nr_errors;
  char **warnings;              /* "FILE:LINE: warning: message" */
  size_t nr_warnings;

  /* What the file and the command line said. */
  char *filename;               /* NULL until cfg_parse */
  char *dir;                    /* of filename, with '/', or "" */
  unsigned l_device, l_sched;   /* section header lines; 0 = absent */
  struct gval *gv;              /* [NR_GKEYS] */
  struct xparam *fparams, *cparams; /* model.* in the file / command line */
  size_t nr_fparams, nr_cparams;
  struct xgroup *groups;
  size_t nr_groups;
  struct xexport *exports;
  size_t nr_exports;
  struct xtenant *tenants;
  size_t nr_tenants;
  struct xevent *events;
  size_t nr_events;
  unsigned l_sim, l_duration, l_seed; /* [sim] and its keys */
  uint64_t duration, seed;
  bool simulated;               /* cfg_simulate(): the device is a model */

  /* Parser position (cfg_parse only). */
  unsigned lineno;              /* current physical line */
  enum sec cur;                 /* current section */
  size_t cur_idx;               /* its group or export index */

  /* The model, built by cfg_validate. */
  bool valid;
  struct cfg_model m;
  struct cfg_tunable *m_tunables;
  struct cfg_group *m_groups;
  struct cfg_export *m_exports;
  struct cfg_param *m_params;
  struct cfg_tenant *m_tenants;
  struct cfg_event *m_events;
  struct xexport *implicit;     /* the export "" made without a file */
};

/* ---- errors -------------------------------------------------------------- */

static void __attribute__ ((format (printf, 4, 0)))
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
static void __attribute__ ((format (printf, 3, 4)))
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
static void __attribute__ ((format (printf, 3, 4)))
ferr (struct cfg *cfg, unsigned line, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  add_error (cfg, cfg->filename ? cfg->filename : "config", line, fmt, ap);
  va_end (ap);
}

/* An error in a command-line override or with no file to point at. */
static void __attribute__ ((format (printf, 2, 3)))
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

static int
status (const struct cfg *cfg)
{
  if (cfg->oom)
    return -ENOMEM;
  return cfg->nr_errors ? -EINVAL : 0;
}

/* ---- value syntax -------------------------------------------------------- */

/* "a, b or c" for messages. */
static const char *
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
static int
parse_max_conns (const char *value, uint64_t *v, char *why, size_t len)
{
  int r = units_parse_count (value, v);

  if (r == 0 && *v >= 1 && *v <= CFG_MAX_CONNECTIONS_MAX)
    return 0;
  snprintf (why, len, "%s (want 1..%d)",
            r < 0 ? "not a number" : "out of range", CFG_MAX_CONNECTIONS_MAX);
  return -EINVAL;
}

/* Parse VALUE for global key K.  On error writes the reason to WHY. */
static int
parse_gvalue (int k, const char *value, uint64_t *v, char *why, size_t len)
{
  const char *const *names = NULL;
  const struct cfq_tunable *t;
  char lst[64];
  int r, i;

  switch (k) {
  case GK_FILE:
    return 0;
  case GK_QUEUE_DEPTH:
    r = units_parse_count (value, v);
    if (r == 0 && *v >= 1 && *v <= SCHED_DEPTH_MAX)
      return 0;
    snprintf (why, len, "%s (want 1..%d)",
              r < 0 ? "not a number" : "out of range", SCHED_DEPTH_MAX);
    return -EINVAL;
  case GK_MAX_CONNS:
    return parse_max_conns (value, v, why, len);
  case GK_BUFFER_POOL:
    r = units_parse_size (value, v);
    if (r == 0 && *v >= CFG_BUFFER_POOL_MIN && *v <= CFG_BUFFER_POOL_MAX)
      return 0;
    snprintf (why, len, "%s (want %" PRIu64 "M..%" PRIu64 "G: at least the"
              " largest request, %uM, and its edge blocks)",
              r < 0 ? "not a size" : "out of range",
              CFG_BUFFER_POOL_MIN >> 20, CFG_BUFFER_POOL_MAX >> 30,
              CFG_MAX_REQUEST >> 20);
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
  case GK_SCHEDULER: names = sched_names; break;
  default:
    t = &cfq_tunables[k - GK_TUNABLE];
    break;
  }
  if (names) {
    i = name_index (names, value);
    if (i >= 0) {
      *v = i;
      return 0;
    }
    snprintf (why, len, "want %s", one_of (names, lst, sizeof lst));
    return -EINVAL;
  }
  r = cfq_tunable_parse (t->name, value, v);
  if (r < 0) {
    cfq_tunable_explain (t, value, r, why, len);
    return -EINVAL;
  }
  return 0;
}

/* ---- allow lists --------------------------------------------------------- */

static bool
net_match (const struct cfg_net *n, int family, const uint8_t *addr)
{
  unsigned bytes = n->prefix / 8, bits = n->prefix % 8;

  if (n->family != family)
    return false;
  if (family == AF_UNIX)
    return true;
  if (memcmp (n->addr, addr, bytes) != 0)
    return false;
  if (bits) {
    uint8_t mask = 0xff << (8 - bits);
    if ((n->addr[bytes] & mask) != (addr[bytes] & mask))
      return false;
  }
  return true;
}

/* One allow= entry into *n.  On error writes the reason to WHY. */
static int
parse_net (const char *tok, struct cfg_net *n, char *why, size_t len)
{
  char addr[INET6_ADDRSTRLEN + 1], net[INET6_ADDRSTRLEN];
  const char *slash = strchr (tok, '/');
  size_t alen = slash ? (size_t) (slash - tok) : strlen (tok);
  unsigned max;

  memset (n, 0, sizeof *n);
  if (strcmp (tok, "unix") == 0) {
    n->family = AF_UNIX;
    return 0;
  }
  if (alen == 0 || alen >= sizeof addr)
    goto bad;
  memcpy (addr, tok, alen);
  addr[alen] = '\0';
  if (inet_pton (AF_INET, addr, n->addr) == 1)
    n->family = AF_INET, max = 32;
  else if (inet_pton (AF_INET6, addr, n->addr) == 1)
    n->family = AF_INET6, max = 128;
  else
    goto bad;
  n->prefix = max;
  if (slash) {
    uint64_t p;
    if (units_parse_count (slash + 1, &p) < 0 || p > max) {
      snprintf (why, len, "'%s': bad prefix length (want 0..%u)", tok, max);
      return -EINVAL;
    }
    n->prefix = p;
  }
  /* Host bits must be zero: 10.0.0.1/8 is more likely a typo than a net. */
  for (unsigned b = n->prefix; b < max; b++)
    if (n->addr[b / 8] & (0x80 >> (b % 8))) {
      for (; b < max; b++)
        n->addr[b / 8] &= ~(0x80 >> (b % 8));
      inet_ntop (n->family, n->addr, net, sizeof net);
      snprintf (why, len, "'%s': host bits set (the network is %s/%u)",
                tok, net, n->prefix);
      return -EINVAL;
    }
  return 0;
bad:
  snprintf (why, len, "'%s' is not an IPv4 or IPv6 address, a CIDR network"
            " or \"unix\"", tok);
  return -EINVAL;
}

/* VALUE is a list separated by commas and/or blanks. */
static int
parse_allow (const char *value, struct cfg_net **out, size_t *nr,
             char *why, size_t len)
{
  struct cfg_net *v = NULL, n, *nv;
  size_t cnt = 0;
  char tok[128];
  const char *p = value;

  while (*p) {
    size_t tl = strcspn (p, ", \t");
    if (tl == 0) {
      p++;
      continue;
    }
    if (tl >= sizeof tok) {
      snprintf (why, len, "'%.*s...' is not an address", 20, p);
      goto err;
    }
    memcpy (tok, p, tl);
    tok[tl] = '\0';
    p += tl;
    if (parse_net (tok, &n, why, len) < 0)
      goto err;
    nv = realloc (v, (cnt + 1) * sizeof *v);
    if (!nv) {
      free (v);
      return -ENOMEM;
    }
    v = nv;
    v[cnt++] = n;
  }
  if (cnt == 0) {
    snprintf (why, len, "empty list");
    goto err;
  }
  *out = v;
  *nr = cnt;
  return 0;
err:
  free (v);
  return -EINVAL;
}

int
cfg_export_allows (const struct cfg_export *exp,
                   const struct sockaddr *sa, socklen_t len)
{
  uint8_t a[16];
  int family = sa->sa_family;

  if (exp->nr_allow == 0)
    return 1;
  switch (family) {
  case AF_INET: {
    const struct sockaddr_in *sin = (const struct sockaddr_in *) sa;
    if (len < sizeof *sin)
      return 0;
    memcpy (a, &sin->sin_addr, 4);
    break;
  }
  case AF_INET6: {
    const struct sockaddr_in6 *sin6 = (const struct sockaddr_in6 *) sa;
    if (len < sizeof *sin6)
      return 0;
    memcpy (a, &sin6->sin6_addr, 16);
    if (IN6_IS_ADDR_V4MAPPED (&sin6->sin6_addr)) {
      family = AF_INET;
      memmove (a, a + 12, 4);
    }
    break;
  }
  case AF_UNIX:
    break;
  default:
    return 0;
  }
  for (size_t i = 0; i < exp->nr_allow; i++)
    if (net_match (&exp->allow[i], family, a))
      return 1;
  return 0;
}

int
cfg_export_allows_str (const struct cfg_export *exp, const char *addr)
{
  struct sockaddr_in sin = { .sin_family = AF_INET };
  struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
  struct sockaddr_un sun = { .sun_family = AF_UNIX };

  if (strcmp (addr, "unix") == 0)
    return cfg_export_allows (exp, (struct sockaddr *) &sun, sizeof sun);
  if (inet_pton (AF_INET, addr, &sin.sin_addr) == 1)
    return cfg_export_allows (exp, (struct sockaddr *) &sin, sizeof sin);
  if (inet_pton (AF_INET6, addr, &sin6.sin6_addr) == 1)
    return cfg_export_allows (exp, (struct sockaddr *) &sin6, sizeof sin6);
  return -EINVAL;
}

/* ---- building up the layers ---------------------------------------------- */

static char *
xstrdup (struct cfg *cfg, const char *s)
{
  char *d = strdup (s);

  if (!d)
    cfg->oom = true;
  return d;
}

/* A path from the file, relative to the file's directory. */
static char *
file_path (struct cfg *cfg, const char *value)
{
  char *p;

  if (value[0] == '/' || cfg->dir[0] == '\0')
    return xstrdup (cfg, value);
  if (asprintf (&p, "%s%s", cfg->dir, value) == -1) {
    cfg->oom = true;
    return NULL;
  }
  return p;
}

/* model.KEY: KEY is lower-case letters, digits and '_'. */
static bool
param_key_ok (const char *key)
{
  if (!*key)
    return false;
  for (; *key; key++)
    if (!((*key >= 'a' && *key <= 'z') || (*key >= '0' && *key <= '9')
          || *key == '_'))
      return false;
  return true;
}

static struct xparam *
param_find (struct xparam *v, size_t n, const char *key)
{
  for (size_t i = 0; i < n; i++)
    if (strcmp (v[i].key, key) == 0)
      return &v[i];
  return NULL;
}

/* Append or (on the command line) replace model.KEY in a layer. */
static void
param_set (struct cfg *cfg, struct xparam **v, size_t *n,
           const char *key, const char *value, unsigned line)
{
  struct xparam *p = param_find (*v, *n, key), *nv;
  char *val = xstrdup (cfg, value);

  if (!val)
    return;
  if (p) {
    free (p->value);
    p->value = val;
    return;
  }
  nv = realloc (*v, (*n + 1) * sizeof **v);
  if (!nv) {
    free (val);
    cfg->oom = true;
    return;
  }
  *v = nv;
  p = &nv[*n];
  p->key = xstrdup (cfg, key);
  if (!p->key) {
    free (val);
    return;
  }
  p->value = val;
  p->line = line;
  (*n)++;
}

/* Which sections a known key belongs in, for "belongs in" hints. */
static const char *
key_home (const char *key)
{
  int k = gkey_lookup (key);
  bool in_group = name_index (group_keys, key) >= 0
    || qos_key_lookup (key) != NULL;
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

static void
unknown_key (struct cfg *cfg, const char *key, const char *sec)
{
  const char *home = key_home (key);

  if (home)
    ferr (cfg, cfg->lineno, "'%s' belongs in %s, not in %s", key, home, sec);
  else
    ferr (cfg, cfg->lineno, "unknown key '%s' in %s", key, sec);
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
    for (const char *kind = "hdd"; kind; kind = *kind == 'h' ? "ssd" : NULL) {
      struct devmodel *dm = devmodel_new (kind, NULL);
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
static void
bad_key (struct cfg *cfg, enum sec sec, const char *key, const char *secname)
{
  char hint[160];

  if (old_key_hint (sec, key, hint, sizeof hint))
    ferr (cfg, cfg->lineno, "'%s': %s", key, hint);
  else if (sec != SEC_OLDJOB)
    unknown_key (cfg, key, secname);
}

static void
set_global (struct cfg *cfg, enum sec sec, const char *key, const char *value)
{
  unsigned line = cfg->lineno;
  int k = gkey_lookup (key);
  struct gval *g;
  char why[160];
  uint64_t v = 0;

  if (sec == SEC_DEVICE && strncmp (key, "model.", 6) == 0) {
    struct xparam *p = param_find (cfg->fparams, cfg->nr_fparams, key + 6);
    if (!param_key_ok (key + 6))
      ferr (cfg, line, "'%s': a model parameter is model.NAME with NAME"
            " of a-z, 0-9 and _", key);
    else if (p)
      ferr (cfg, line, "duplicate key '%s' (first at line %u)", key, p->line);
    else
      param_set (cfg, &cfg->fparams, &cfg->nr_fparams, key + 6, value, line);
    return;
  }
  if (k < 0 || gkey_sec (k) != sec) {
    bad_key (cfg, sec, key, sec == SEC_DEVICE ? "[device]" : "[scheduler]");
    return;
  }
  g = &cfg->gv[k];
  if (g->line) {
    ferr (cfg, line, "duplicate key '%s' (first at line %u)", key, g->line);
    return;
  }
  if (parse_gvalue (k, value, &v, why, sizeof why) < 0) {
    ferr (cfg, line, "%s = %s: %s", key, value, why);
    return;
  }
  g->line = line;
  g->file_v = v;
  if (k == GK_FILE)
    g->file_s = file_path (cfg, value);
}

/* Note KEY at this line in *L; false (and an error) if it was there before. */
static bool
first_time (struct cfg *cfg, unsigned *l, const char *key)
{
  if (*l) {
    ferr (cfg, cfg->lineno, "duplicate key '%s' (first at line %u)", key, *l);
    return false;
  }
  *l = cfg->lineno;
  return true;
}

static void
set_group_key (struct cfg *cfg, struct xgroup *g, const char *key,
               const char *value)
{
  unsigned line = cfg->lineno;
  const struct qos_key *qk;
  char why[200];
  uint64_t v;
  int i;

  if (strcmp (key, "weight") == 0) {
    if (!first_time (cfg, &g->l_weight, key))
      return;
    if (units_parse_count (value, &v) < 0)
      ferr (cfg, line, "weight = %s: not a number (want %d..%d)", value,
            SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
    else if (v < SCHED_WEIGHT_MIN || v > SCHED_WEIGHT_MAX)
      ferr (cfg, line, "weight = %s: out of range %d..%d", value,
            SCHED_WEIGHT_MIN, SCHED_WEIGHT_MAX);
    else
      g->weight = v;
  }
  else if (strcmp (key, "class") == 0) {
    if (!first_time (cfg, &g->l_class, key))
      return;
    i = name_index (class_names, value);
    if (i < 0)
      ferr (cfg, line, "class = %s: want rt, be or idle", value);
    else
      g->cls = SCHED_CLASS_RT + i;
  }
  else if (strcmp (key, "prio") == 0) {
    if (!first_time (cfg, &g->l_prio, key))
      return;
    if (units_parse_count (value, &v) < 0 || v >= SCHED_LEVELS)
      ferr (cfg, line, "prio = %s: want 0..%d (0 is highest)", value,
            SCHED_LEVELS - 1);
    else
      g->prio = v;
  }
  else if ((qk = qos_key_lookup (key)) != NULL) {
    if (first_time (cfg, &g->l_qos[qk - qos_keys], key)
        && cfg_parse_qos (key, value, &g->qos, why, sizeof why) < 0)
      ferr (cfg, line, "%s = %s: %s", key, value, why);
  }
  else
    unknown_key (cfg, key, "[group NAME]");
}

/* Group names appear in messages, stats and control commands: keep them
 * to one plain word.
 */
static bool
group_name_ok (const char *s)
{
  if (!*s || strlen (s) > 64)
    return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')
          || (*s >= '0' && *s <= '9') || strchr ("_.-", *s)))
      return false;
  return true;
}

static void
set_export_key (struct cfg *cfg, struct xexport *e, const char *key,
                const char *value)
{
  unsigned line = cfg->lineno;
  char why[160];
  int i, r;

  if (strcmp (key, "group") == 0) {
    if (!first_time (cfg, &e->l_group, key))
      return;
    if (!group_name_ok (value))
      ferr (cfg, line, "group = %s: not a group name (letters, digits,"
            " '_', '.', '-')", value);
    else
      e->group = xstrdup (cfg, value);
  }
  else if (strcmp (key, "offset") == 0 || strcmp (key, "size") == 0) {
    bool is_off = key[0] == 'o';
    uint64_t v;
    if (!first_time (cfg, is_off ? &e->l_offset : &e->l_size, key))
      return;
    r = units_parse_size (value, &v);
    if (r < 0)
      ferr (cfg, line, "%s = %s: not a size (want a number with an optional"
            " b, k, m, g, t, p or e suffix)", key, value);
    else if (!is_off && v == 0)
      ferr (cfg, line, "size = %s: must not be 0", value);
    else if (v % CFG_ALIGN)
      ferr (cfg, line, "%s = %s: not a multiple of %d", key, value,
            CFG_ALIGN);
    else if (is_off)
      e->offset = v;
    else
      e->size = v;
    if (r < 0 || (!is_off && v == 0) || v % CFG_ALIGN)
      e->bad_region = true;
  }
  else if (strcmp (key, "file") == 0) {
    if (first_time (cfg, &e->l_file, key))
      e->file = file_path (cfg, value);
  }
  else if (strcmp (key, "readonly") == 0) {
    if (first_time (cfg, &e->l_readonly, key)
        && units_parse_bool (value, &e->readonly) < 0)
      ferr (cfg, line, "readonly = %s: not a boolean (want 0/1, yes/no,"
            " on/off)", value);
  }
  else if (strcmp (key, "writes") == 0) {
    if (!first_time (cfg, &e->l_writes, key))
      return;
    i = name_index (writes_names, value);
    if (i < 0)
      ferr (cfg, line, "writes = %s: want auto, async or sync", value);
    else {
      e->writes_sync = i == 1;
      e->writes_async = i == 0;
    }
  }
  else if (strcmp (key, "tls") == 0) {
    if (!first_time (cfg, &e->l_tls, key))
      return;
    i = name_index (tls_names, value);
    if (i < 0)
      ferr (cfg, line, "tls = %s: want optional or require", value);
    else
      e->tls_required = i == 1;
  }
  else if (strcmp (key, "max_connections") == 0) {
    uint64_t v;
    if (!first_time (cfg, &e->l_max_conns, key))
      return;
    if (parse_max_conns (value, &v, why, sizeof why) < 0)
      ferr (cfg, line, "max_connections = %s: %s", value, why);
    else
      e->max_conns = (unsigned) v;
  }
  else if (strcmp (key, "allow") == 0) {
    if (!first_time (cfg, &e->l_allow, key))
      return;
    r = parse_allow (value, &e->allow, &e->nr_allow, why, sizeof why);
    if (r == -ENOMEM)
      cfg->oom = true;
    else if (r < 0)
      ferr (cfg, line, "allow: %s", why);
  }
  else
    unknown_key (cfg, key, "[export NAME]");
}

/* ---- [sim] and [tenant NAME] -------------------------------------------- */

/* A count KEY = VALUE in MIN..MAX into *OUT; false (and an error) if not. */
static bool
count_key (struct cfg *cfg, const char *key, const char *value,
           uint64_t min, uint64_t max, uint64_t *out)
{
  uint64_t v;
  int r = units_parse_count (value, &v);

  if (r == -EINVAL) {
    ferr (cfg, cfg->lineno, "%s = %s: not a number (want %llu..%llu)", key,
          value, (unsigned long long) min, (unsigned long long) max);
    return false;
  }
  if (r < 0 || v < min || v > max) {
    ferr (cfg, cfg->lineno, "%s = %s: out of range %llu..%llu", key, value,
          (unsigned long long) min, (unsigned long long) max);
    return false;
  }
  *out = v;
  return true;
}

/* A time KEY = VALUE, with its unit (a bare number is refused). */
static bool
time_key (struct cfg *cfg, const char *key, const char *value, uint64_t *out)
{
  char want[96];

  if (units_parse_time (value, 0, out) == 0)
    return true;
  ferr (cfg, cfg->lineno, "%s = %s: not a time (want %s)", key, value,
        units_expect_time (0, want, sizeof want));
  return false;
}

/* A size KEY = VALUE, a multiple of ALIGN. */
static bool
size_key (struct cfg *cfg, const char *key, const char *value,
          uint64_t align, uint64_t *out)
{
  if (units_parse_size (value, out) < 0) {
    ferr (cfg, cfg->lineno, "%s = %s: not a size (want %s)", key, value,
          UNITS_EXPECT_SIZE);
    return false;
  }
  if (*out % align) {
    ferr (cfg, cfg->lineno, "%s = %s: not a multiple of %llu", key, value,
          (unsigned long long) align);
    return false;
  }
  return true;
}

static void
set_sim_key (struct cfg *cfg, const char *key, const char *value)
{
  uint64_t v;

  if (strcmp (key, "duration") == 0) {
    if (!first_time (cfg, &cfg->l_duration, key))
      return;
    if (!time_key (cfg, key, value, &v))
      return;
    if (v == 0)
      ferr (cfg, cfg->lineno, "duration = %s: must be more than 0", value);
    else
      cfg->duration = v;
  }
  else if (strcmp (key, "seed") == 0) {
    if (first_time (cfg, &cfg->l_seed, key)
        && count_key (cfg, key, value, 0, UINT64_MAX, &v))
      cfg->seed = v;
  }
  else
    bad_key (cfg, SEC_SIM, key, "[sim]");
}

/* rw = NAME[:SKIP] */
static void
set_rw (struct cfg *cfg, struct xtenant *x, const char *value)
{
  size_t n = strcspn (value, ":");
  uint64_t skip = 0;

  for (size_t i = 0; i < sizeof rw_names / sizeof rw_names[0]; i++) {
    if (strlen (rw_names[i].name) != n
        || strncmp (rw_names[i].name, value, n) != 0)
      continue;
    if (value[n]) {
      if (rw_names[i].rand) {
        ferr (cfg, cfg->lineno, "rw = %s: ':SKIP' applies to sequential"
              " patterns only (read, write, rw)", value);
        x->bad = true;
        return;
      }
      if (!size_key (cfg, "rw", value + n + 1, CFG_SECTOR, &skip)) {
        x->bad = true;
        return;
      }
    }
    x->t.rw = rw_names[i].canon;
    x->t.rand = rw_names[i].rand;
    x->t.skip = skip;
    x->t.rwmixread = rw_names[i].reads < 0 ? 50 : (unsigned) rw_names[i].reads;
    return;
  }
  ferr (cfg, cfg->lineno, "rw = %s: want read, write, randread, randwrite,"
        " rw or randrw (sequential ones may add :SKIP)", value);
  x->bad = true;
}

static void
set_tenant_key (struct cfg *cfg, struct xtenant *x, const char *key,
                const char *value)
{
  struct cfg_tenant *t = &x->t;
  bool ok = true;
  uint64_t v;
  int i;

  if (strcmp (key, "export") == 0) {
    if (first_time (cfg, &x->l_export, key))
      x->export = xstrdup (cfg, value);
  }
  else if (strcmp (key, "connections") == 0) {
    if (first_time (cfg, &x->l_connections, key)
        && (ok = count_key (cfg, key, value, 1, CFG_CONNECTIONS_MAX, &v)))
      t->connections = v;
  }
  else if (strcmp (key, "rw") == 0) {
    if (first_time (cfg, &x->l_rw, key))
      set_rw (cfg, x, value);
  }
  else if (strcmp (key, "rwmixread") == 0) {
    if (first_time (cfg, &x->l_rwmixread, key)
        && (ok = count_key (cfg, key, value, 0, 100, &v))) {
      x->rwmix = v;
      x->rwmix_given = true;
    }
  }
  else if (strcmp (key, "bs") == 0) {
    if (!first_time (cfg, &x->l_bs, key))
      return;
    ok = size_key (cfg, key, value, CFG_SECTOR, &v);
    if (ok && (v == 0 || v > CFG_BS_MAX)) {
      ferr (cfg, cfg->lineno, "bs = %s: out of range 512..32M", value);
      ok = false;
    }
    if (ok)
      t->bs = v;
  }
  else if (strcmp (key, "iodepth") == 0) {
    if (first_time (cfg, &x->l_iodepth, key)
        && (ok = count_key (cfg, key, value, 1, CFG_IODEPTH_MAX, &v)))
      t->iodepth = v;
  }
  else if (strcmp (key, "thinktime") == 0) {
    if (first_time (cfg, &x->l_thinktime, key))
      ok = time_key (cfg, key, value, &t->thinktime);
  }
  else if (strcmp (key, "rate_iops") == 0) {
    if (first_time (cfg, &x->l_rate_iops, key)
        && (ok = count_key (cfg, key, value, 1, NSEC_PER_SEC, &v)))
      t->rate_iops = v;
  }
  else if (strcmp (key, "rate") == 0) {
    if (!first_time (cfg, &x->l_rate, key))
      return;
    if (units_parse_rate (value, &v) < 0 || v == 0) {
      ferr (cfg, cfg->lineno, "rate = %s: not a rate (want %s)", value,
            UNITS_EXPECT_RATE);
      ok = false;
    }
    else
      t->rate = v;
  }
  else if (strcmp (key, "fsync") == 0) {
    if (first_time (cfg, &x->l_fsync, key)
        && (ok = count_key (cfg, key, value, 0, 1u << 30, &v)))
      t->fsync = v;
  }
  else if (strcmp (key, "offset") == 0) {
    if (first_time (cfg, &x->l_offset, key))
      ok = size_key (cfg, key, value, CFG_SECTOR, &t->offset);
  }
  else if (strcmp (key, "size") == 0) {
    if (!first_time (cfg, &x->l_size, key))
      return;
    ok = size_key (cfg, key, value, 1, &t->size);
    if (ok && t->size == 0) {
      ferr (cfg, cfg->lineno, "size = %s: must not be 0", value);
      ok = false;
    }
  }
  else if (strcmp (key, "start") == 0) {
    if (first_time (cfg, &x->l_start, key))
      ok = time_key (cfg, key, value, &t->start);
  }
  else if (strcmp (key, "stop") == 0) {
    if (first_time (cfg, &x->l_stop, key))
      ok = time_key (cfg, key, value, &t->stop);
  }
  else if (strcmp (key, "class") == 0) {
    if (!first_time (cfg, &x->l_class, key))
      return;
    i = name_index (class_names, value);
    if (i < 0) {
      ferr (cfg, cfg->lineno, "class = %s: want rt, be or idle", value);
      ok = false;
    }
    else {
      t->cls = SCHED_CLASS_RT + i;
      t->cls_given = true;
    }
  }
  else if (strcmp (key, "prio") == 0) {
    if (!first_time (cfg, &x->l_prio, key))
      return;
    if (units_parse_count (value, &v) < 0 || v >= SCHED_LEVELS) {
      ferr (cfg, cfg->lineno, "prio = %s: want 0..%d (0 is highest)", value,
            SCHED_LEVELS - 1);
      ok = false;
    }
    else {
      t->prio = v;
      t->prio_given = true;
    }
  }
  else if (strcmp (key, "workload") == 0) {
    if (!first_time (cfg, &x->l_workload, key))
      return;
    i = name_index (cfg_workload_names, value);
    if (i < 0) {
      char lst[96];
      ferr (cfg, cfg->lineno, "workload = %s: want %s", value,
            one_of (cfg_workload_names, lst, sizeof lst));
      ok = false;
    }
    else
      t->workload = i;
  }
  else
    bad_key (cfg, SEC_TENANT, key, "[tenant NAME]");
  if (!ok)
    x->bad = true;
}

/* [event NAME]: at = TIME, command = LINE (what the command means is
 * checked once the groups are known, in check_events).
 */
static void
set_event_key (struct cfg *cfg, struct xevent *x, const char *key,
               const char *value)
{
  if (strcmp (key, "at") == 0) {
    if (first_time (cfg, &x->l_at, key))
      time_key (cfg, key, value, &x->at);
  }
  else if (strcmp (key, "command") == 0) {
    size_t n = strlen (value);

    if (!first_time (cfg, &x->l_command, key))
      return;
    if (n >= 2 && value[0] == '"' && value[n - 1] == '"')
      x->command = strndup (value + 1, n - 2);
    else
      x->command = strdup (value);
    if (!x->command)
      cfg->oom = true;
  }
  else
    bad_key (cfg, SEC_EVENT, key, "[event NAME]");
}

/* ---- reading the file ------------------------------------------------------ */

struct reader {
  struct cfg *cfg;
  const char *p, *end;          /* the rest of the text */
};

static const char *
skip_blank (const char *s, const char *e)
{
  while (s < e && (*s == ' ' || *s == '\t'))
    s++;
  return s;
}

static const char *
rskip_blank (const char *s, const char *e)
{
  while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
    e--;
  return e;
}

static void
open_section (struct cfg *cfg, const char *s, const char *e)
{
  unsigned line = cfg->lineno;
  const char *close = memchr (s, ']', e - s), *t, *te, *n, *ne, *rest;
  char type[16], *name = NULL;
  size_t tl;

  cfg->cur = SEC_SKIP;
  if (!close) {
    ferr (cfg, line, "missing ']' in section header");
    return;
  }
  rest = skip_blank (close + 1, e);
  if (rest < e && *rest != ';' && *rest != '#') {
    ferr (cfg, line, "unexpected text after ']'");
    return;
  }
  t = skip_blank (s + 1, close);
  for (te = t; te < close && *te != ' ' && *te != '\t'; te++)
    ;
  n = skip_blank (te, close);
  ne = rskip_blank (n, close);
  tl = te - t;
  if (tl == 0 || tl >= sizeof type) {
    ferr (cfg, line, "unknown section [%.*s]", (int) (close - s - 1), s + 1);
    return;
  }
  memcpy (type, t, tl);
  type[tl] = '\0';

  /* The name: bare (trimmed) or in double quotes. */
  if (n < ne && *n == '"') {
    if (ne - n < 2 || ne[-1] != '"' || memchr (n + 1, '"', ne - n - 2)) {
      ferr (cfg, line, "bad quoted name in section header");
      return;
    }
    n++, ne--;
  }
  else if (n == ne)
    n = ne = NULL;              /* no name */
  /* Names go to clients (list_exports), stats (JSON), logs and control
   * commands: valid UTF-8 without control characters, as NBD wants.
   */
  if (n) {
    size_t bad = utf8_check (n, ne - n, true);
    uint32_t cp;

    if (bad < (size_t) (ne - n)) {
      if (utf8_decode (n + bad, ne - n - bad, &cp))
        ferr (cfg, line, "control character U+%04X in section name (at"
              " byte %zu)", (unsigned) cp, bad);
      else
        ferr (cfg, line, "section name is not valid UTF-8 (byte 0x%02x at"
              " byte %zu)", (unsigned char) n[bad], bad);
      return;
    }
  }

  if (strcmp (type, "device") == 0 || strcmp (type, "scheduler") == 0) {
    bool dev = type[0] == 'd';
    unsigned *l = dev ? &cfg->l_device : &cfg->l_sched;
    if (n) {
      ferr (cfg, line, "[%s] takes no name", type);
      return;
    }
    if (*l) {
      ferr (cfg, line, "duplicate section [%s] (first at line %u)", type, *l);
      return;
    }
    *l = line;
    cfg->cur = dev ? SEC_DEVICE : SEC_SCHED;
    return;
  }
  /* cfqsim's old sections: say what they are now, then read on. */
  if (strcmp (type, "global") == 0) {
    ferr (cfg, line, "[global] is now [sim] (duration, seed) and [device]"
          " (queue_depth)");
    cfg->cur = SEC_SIM;
    return;
  }
  if (strcmp (type, "sched") == 0) {
    ferr (cfg, line, "[sched] is now [scheduler] (and policy= is now"
          " scheduler=)");
    cfg->cur = SEC_SCHED;
    return;
  }
  if (strcmp (type, "job") == 0) {
    ferr (cfg, line, "[job NAME] is now [tenant NAME], in fio's terms"
          " (export=, rw=, bs=, iodepth=, thinktime=, fsync=)");
    cfg->cur = SEC_OLDJOB;
    return;
  }
  if (strcmp (type, "sim") == 0) {
    if (n) {
      ferr (cfg, line, "[sim] takes no name");
      return;
    }
    if (cfg->l_sim) {
      ferr (cfg, line, "duplicate section [sim] (first at line %u)",
            cfg->l_sim);
      return;
    }
    cfg->l_sim = line;
    cfg->cur = SEC_SIM;
    return;
  }
  if (strcmp (type, "group") != 0 && strcmp (type, "export") != 0
      && strcmp (type, "tenant") != 0 && strcmp (type, "event") != 0) {
    ferr (cfg, line, "unknown section [%s] (want [device], [scheduler],"
          " [group NAME], [export NAME], [tenant NAME], [event NAME] or"
          " [sim])", type);
    return;
  }
  if (ne - n > NAME_MAX_LEN) {
    ferr (cfg, line, "section name longer than %d bytes", NAME_MAX_LEN);
    return;
  }
  name = strndup (n ? n : "", n ? (size_t) (ne - n) : 0);
  if (!name) {
    cfg->oom = true;
    return;
  }

  if (strcmp (type, "event") == 0) {
    struct xevent *x;
    if (!n) {
      ferr (cfg, line, "[event] needs a name: [event NAME]");
      goto out;
    }
    if (!group_name_ok (name)) {
      ferr (cfg, line, "[event %s]: an event name is letters, digits, '_',"
            " '.' and '-' (at most 64)", name);
      goto out;
    }
    for (size_t i = 0; i < cfg->nr_events; i++)
      if (strcmp (cfg->events[i].name, name) == 0) {
        ferr (cfg, line, "duplicate section [event %s] (first at line %u)",
              name, cfg->events[i].line);
        goto out;
      }
    x = realloc (cfg->events, (cfg->nr_events + 1) * sizeof *x);
    if (!x) {
      cfg->oom = true;
      goto out;
    }
    cfg->events = x;
    x = &x[cfg->nr_events];
    memset (x, 0, sizeof *x);
    x->name = name;
    x->line = line;
    cfg->cur = SEC_EVENT;
    cfg->cur_idx = cfg->nr_events++;
    return;
  }
  if (type[0] == 't') {
    struct xtenant *x;
    if (!n) {
      ferr (cfg, line, "[tenant] needs a name: [tenant NAME]");
      goto out;
    }
    if (!group_name_ok (name)) {
      ferr (cfg, line, "[tenant %s]: a tenant name is letters, digits, '_',"
            " '.' and '-' (at most 64)", name);
      goto out;
    }
    for (size_t i = 0; i < cfg->nr_tenants; i++)
      if (strcmp (cfg->tenants[i].name, name) == 0) {
        ferr (cfg, line, "duplicate section [tenant %s] (first at line %u)",
              name, cfg->tenants[i].line);
        goto out;
      }
    x = realloc (cfg->tenants, (cfg->nr_tenants + 1) * sizeof *x);
    if (!x) {
      cfg->oom = true;
      goto out;
    }
    cfg->tenants = x;
    x = &x[cfg->nr_tenants];
    memset (x, 0, sizeof *x);
    x->name = name;
    x->line = line;
    x->t.connections = 1;
    x->t.rw = "read";
    x->t.rwmixread = 100;
    x->t.bs = 4096;
    x->t.iodepth = 1;
    cfg->cur = SEC_TENANT;
    cfg->cur_idx = cfg->nr_tenants++;
    return;
  }
  if (type[0] == 'g') {
    struct xgroup *g;
    if (!n) {
      ferr (cfg, line, "[group] needs a name: [group NAME]");
      goto out;
    }
    if (!group_name_ok (name)) {
      ferr (cfg, line, "[group %s]: a group name is letters, digits, '_',"
            " '.' and '-' (at most 64)", name);
      goto out;
    }
    for (size_t i = 0; i < cfg->nr_groups; i++)
      if (strcmp (cfg->groups[i].name, name) == 0) {
        ferr (cfg, line, "duplicate section [group %s] (first at line %u)",
              name, cfg->groups[i].line);
        goto out;
      }
    g = realloc (cfg->groups, (cfg->nr_groups + 1) * sizeof *g);
    if (!g) {
      cfg->oom = true;
      goto out;
    }
    cfg->groups = g;
    g = &g[cfg->nr_groups];
    memset (g, 0, sizeof *g);
    g->name = name;
    g->weight = SCHED_WEIGHT_DEFAULT;
    g->cls = SCHED_CLASS_BE;
    g->prio = SCHED_PRIO_DEFAULT;
    g->line = line;
    cfg->cur = SEC_GROUP;
    cfg->cur_idx = cfg->nr_groups++;
    return;
  }
  else {
    struct xexport *x;
    for (size_t i = 0; i < cfg->nr_exports; i++)
      if (strcmp (cfg->exports[i].name, name) == 0) {
        ferr (cfg, line, "duplicate section [export %s] (first at line %u)",
              name, cfg->exports[i].line);
        goto out;
      }
    x = realloc (cfg->exports, (cfg->nr_exports + 1) * sizeof *x);
    if (!x) {
      cfg->oom = true;
      goto out;
    }
    cfg->exports = x;
    x = &x[cfg->nr_exports];
    memset (x, 0, sizeof *x);
    x->name = name;
    x->line = line;
    cfg->cur = SEC_EXPORT;
    cfg->cur_idx = cfg->nr_exports++;
    return;
  }
out:
  free (name);
}

/* inih's reader: one physical line per call, always, so inih's count and
 * ours agree.  Lines inih need not see (blank, comments, section headers,
 * lines with errors) are handed over as empty lines.
 */
static char *
cfg_reader (char *str, int num, void *stream)
{
  struct reader *rd = stream;
  struct cfg *cfg = rd->cfg;
  const char *s = rd->p, *e, *nl;

  if (rd->p >= rd->end)
    return NULL;
  nl = memchr (s, '\n', rd->end - s);
  e = nl ? nl : rd->end;
  rd->p = nl ? nl + 1 : rd->end;
  cfg->lineno++;
  strcpy (str, "\n");

  if (e > s && e[-1] == '\r')
    e--;
  if (cfg->lineno == 1 && e - s >= 3 && memcmp (s, "\xef\xbb\xbf", 3) == 0)
    s += 3;
  s = skip_blank (s, e);
  if (memchr (s, '\0', e - s)) {
    ferr (cfg, cfg->lineno, "NUL byte in line");
    return str;
  }
  if (s == e || *s == ';' || *s == '#')
    return str;
  if (*s == '[') {
    open_section (cfg, s, e);
    return str;
  }
  if (!memchr (s, '=', e - s) && !memchr (s, ':', e - s)) {
    ferr (cfg, cfg->lineno, "expected 'key = value' or '[section]'");
    return str;
  }
  if (e - s > num - 3) {
    ferr (cfg, cfg->lineno, "line longer than %d characters", num - 3);
    return str;
  }
  memcpy (str, s, e - s);
  str[e - s] = '\n';
  str[e - s + 1] = '\0';
  return str;
}

static int
cfg_handler (void *user, const char *section, const char *key,
             const char *value)
{
  struct reader *rd = user;
  struct cfg *cfg = rd->cfg;

  /* SECTION is inih's (always "" here): we track sections ourselves. */
  if (!*key) {
    ferr (cfg, cfg->lineno, "missing key before '='");
    return 1;
  }
  if (cfg->cur == SEC_SKIP)
    return 1;
  if (cfg->cur == SEC_NONE) {
    ferr (cfg, cfg->lineno, "'%s' is outside any section (start with"
          " [device], [scheduler], [group NAME] or [export NAME])", key);
    return 1;
  }
  if (!*value) {
    ferr (cfg, cfg->lineno, "%s: missing value", key);
    return 1;
  }
  switch (cfg->cur) {
  case SEC_DEVICE:
  case SEC_SCHED:
    set_global (cfg, cfg->cur, key, value);
    break;
  case SEC_GROUP:
    set_group_key (cfg, &cfg->groups[cfg->cur_idx], key, value);
    break;
  case SEC_EXPORT:
    set_export_key (cfg, &cfg->exports[cfg->cur_idx], key, value);
    break;
  case SEC_TENANT:
    set_tenant_key (cfg, &cfg->tenants[cfg->cur_idx], key, value);
    break;
  case SEC_SIM:
    set_sim_key (cfg, key, value);
    break;
  case SEC_EVENT:
    set_event_key (cfg, &cfg->events[cfg->cur_idx], key, value);
    break;
  case SEC_OLDJOB:
    bad_key (cfg, SEC_OLDJOB, key, "[job]");
    break;
  default:
    break;
  }
  return 1;
}

int
cfg_parse (struct cfg *cfg, const char *filename, const char *text,
           size_t len)
{
  struct reader rd = { .cfg = cfg, .p = text, .end = text + len };
  const char *slash;
  int r;

  if (cfg->filename) {
    cerr (cfg, "more than one config file (%s, then %s)", cfg->filename,
          filename);
    return -EINVAL;
  }
  cfg->filename = xstrdup (cfg, filename);
  slash = strrchr (filename, '/');
  cfg->dir = strndup (filename, slash ? (size_t) (slash - filename + 1) : 0);
  if (!cfg->filename || !cfg->dir) {
    cfg->oom = true;
    return -ENOMEM;
  }
  cfg->lineno = 0;
  cfg->cur = SEC_NONE;
  r = ini_parse_stream (cfg_reader, &rd, cfg_handler, &rd);
  if (r == -2)
    cfg->oom = true;
  else if (r > 0)                 /* a line inih refused that we let by */
    ferr (cfg, r, "expected 'key = value' or '[section]'");
  return status (cfg);
}

int
cfg_set_override (struct cfg *cfg, const char *key, const char *value)
{
  int k = gkey_lookup (key);
  struct gval *g;
  char why[160];
  uint64_t v = 0;

  if (!*value) {
    cerr (cfg, "%s: missing value", key);
    return -EINVAL;
  }
  if (strncmp (key, "model.", 6) == 0) {
    if (!param_key_ok (key + 6)) {
      cerr (cfg, "'%s': a model parameter is model.NAME with NAME of a-z,"
            " 0-9 and _", key);
      return -EINVAL;
    }
    param_set (cfg, &cfg->cparams, &cfg->nr_cparams, key + 6, value, 0);
    return cfg->oom ? -ENOMEM : 0;
  }
  if (k < 0) {
    cerr (cfg, "%s=%s: not a [device] or [scheduler] key", key, value);
    return -ENOENT;
  }
  if (parse_gvalue (k, value, &v, why, sizeof why) < 0) {
    cerr (cfg, "%s=%s: %s", key, value, why);
    return -EINVAL;
  }
  g = &cfg->gv[k];
  if (k == GK_FILE) {
    char *s = xstrdup (cfg, value);
    if (!s)
      return -ENOMEM;
    free (g->cmd_s);
    g->cmd_s = s;
  }
  g->cmd_set = true;
  g->cmd_v = v;
  return 0;
}

/* ---- the model ------------------------------------------------------------- */

static bool
gset (const struct cfg *cfg, int k)
{
  return cfg->gv[k].cmd_set || cfg->gv[k].line;
}

static uint64_t
gget (const struct cfg *cfg, int k, uint64_t def)
{
  const struct gval *g = &cfg->gv[k];

  return g->cmd_set ? g->cmd_v : g->line ? g->file_v : def;
}

int
cfg_parse_value (const char *key, const char *value, uint64_t *v,
                 char *why, size_t len)
{
  int k = gkey_lookup (key);

  if (k != GK_QUEUE_DEPTH && k != GK_MODE && k < GK_TUNABLE) {
    snprintf (why, len, "not a number-valued [device] or [scheduler] key");
    return -ENOENT;
  }
  if (k < 0) {
    snprintf (why, len, "unknown key");
    return -ENOENT;
  }
  return parse_gvalue (k, value, v, why, len);
}

void
cfg_simulate (struct cfg *cfg)
{
  cfg->simulated = true;
}

const char *
cfg_device_file (const struct cfg *cfg)
{
  const struct gval *g = &cfg->gv[GK_FILE];

  return g->cmd_set ? g->cmd_s : g->line ? g->file_s : NULL;
}

static void
free_model (struct cfg *cfg)
{
  free (cfg->m_tunables);
  free (cfg->m_groups);
  free (cfg->m_exports);
  free (cfg->m_params);
  free (cfg->m_tenants);
  cfg->m_tenants = NULL;
  free (cfg->m_events);
  cfg->m_events = NULL;
  cfg->m_tunables = NULL;
  cfg->m_groups = NULL;
  cfg->m_exports = NULL;
  cfg->m_params = NULL;
  cfg->valid = false;
  memset (&cfg->m, 0, sizeof cfg->m);
}

static void
xexport_free (struct xexport *x)
{
  free (x->name);
  free (x->group);
  free (x->file);
  free (x->allow);
}

/* The line to blame for a region: the key if given, else the header. */
static unsigned
blame (const struct xexport *x, unsigned l)
{
  return l ? l : x->line;
}

static unsigned
blame_t (const struct xtenant *x, unsigned l)
{
  return l ? l : x->line;
}

/* "[4K, 1G)" */
static char *
format_region (uint64_t off, uint64_t size, char *buf, size_t len)
{
  char a[32], b[32];

  snprintf (buf, len, "[%s, %s)", units_format_size (off, a, sizeof a),
            units_format_size (off + size, b, sizeof b));
  return buf;
}

/* Resolve each export's group to an index into m_groups, adding the
 * implicit "default" group the first time it is needed.
 */
static void
resolve_groups (struct cfg *cfg, struct xexport *xs, size_t nr)
{
  size_t ng = cfg->nr_groups;

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *x = &cfg->groups[i];
    cfg->m_groups[i] = (struct cfg_group) {
      .name = x->name, .weight = x->weight, .cls = x->cls, .prio = x->prio,
      .qos = x->qos, .line = x->line,
    };
  }
  for (size_t i = 0; i < nr; i++) {
    const char *want = xs[i].group ? xs[i].group : CFG_DEFAULT_GROUP;
    size_t j;
    for (j = 0; j < ng; j++)
      if (strcmp (cfg->m_groups[j].name, want) == 0)
        break;
    if (j == ng && strcmp (want, CFG_DEFAULT_GROUP) == 0)
      cfg->m_groups[ng++] = (struct cfg_group) {
        .name = CFG_DEFAULT_GROUP, .weight = SCHED_WEIGHT_DEFAULT,
        .cls = SCHED_CLASS_BE, .prio = SCHED_PRIO_DEFAULT, .line = 0,
      };
    else if (j == ng)
      ferr (cfg, xs[i].l_group, "group = %s: no [group %s] section", want,
            want);
    cfg->m_exports[i].group = j;
  }
  cfg->m.nr_groups = ng;
}

/* Regions inside the device, and overlaps only between readonly exports;
 * own files not shared between writers.
 */
static void
check_regions (struct cfg *cfg, const struct xexport *xs, size_t nr,
               uint64_t devsize, bool *ok)
{
  const char *dev = cfg_device_file (cfg);
  char r1[80], r2[80], b1[32], b2[32];
  bool told_nodev = false;

  for (size_t i = 0; i < nr; i++) {
    const struct xexport *x = &xs[i];
    struct cfg_export *e = &cfg->m_exports[i];

    ok[i] = false;
    if (x->bad_region)
      continue;                 /* reported at its line already */
    if (x->file) {
      if (x->l_offset || x->l_size)
        ferr (cfg, x->l_offset ? x->l_offset : x->l_size,
              "export \"%s\" has its own file: offset and size apply only"
              " to regions of the device", x->name);
      if (dev && strcmp (x->file, dev) == 0)
        ferr (cfg, x->l_file, "export \"%s\": file is the device itself;"
              " use offset and size for a region of it", x->name);
      for (size_t j = 0; j < i; j++)
        if (xs[j].file && strcmp (xs[j].file, x->file) == 0
            && !(x->readonly && xs[j].readonly))
          ferr (cfg, x->l_file, "export \"%s\": file %s is also the file of"
                " export \"%s\" (line %u); only readonly exports may share"
                " one", x->name, x->file, xs[j].name, xs[j].l_file);
      continue;
    }
    if (cfg->simulated && !cfg->m.dev.emulate)
      continue;                 /* no device model: said once already */
    if (!dev && !cfg->simulated) {
      if (!told_nodev) {
        if (x->line)
          ferr (cfg, x->line, "export \"%s\" is a region of the device, but"
                " no device file is set ([device] file = PATH, or file=PATH)",
                x->name);
        else
          cerr (cfg, "no device: give file=PATH or config=FILE");
      }
      told_nodev = true;
      continue;
    }
    e->offset = x->offset;
    if (x->l_size) {
      e->size = x->size;
      if (x->offset > devsize || x->size > devsize - x->offset) {
        ferr (cfg, x->l_size, "export \"%s\" %s runs past the end of the"
              " device (size %s)", x->name,
              format_region (x->offset, x->size, r1, sizeof r1),
              units_format_size (devsize, b1, sizeof b1));
        continue;
      }
    }
    else {
      if (x->offset >= devsize) {
        if (x->line)
          ferr (cfg, blame (x, x->l_offset), "export \"%s\": offset %s is at"
                " or beyond the end of the device (size %s)", x->name,
                units_format_size (x->offset, b1, sizeof b1),
                units_format_size (devsize, b2, sizeof b2));
        else
          cerr (cfg, "the device is empty");
        continue;
      }
      e->size = devsize - x->offset;
    }
    ok[i] = true;
    for (size_t j = 0; j < i; j++) {
      const struct cfg_export *o = &cfg->m_exports[j];
      if (!ok[j] || xs[j].file)
        continue;
      if (e->offset < o->offset + o->size && o->offset < e->offset + e->size
          && !(x->readonly && xs[j].readonly))
        ferr (cfg, blame (x, x->l_offset), "export \"%s\" %s overlaps export"
              " \"%s\" %s (line %u); overlapping exports must both be"
              " readonly", x->name,
              format_region (e->offset, e->size, r1, sizeof r1), xs[j].name,
              format_region (o->offset, o->size, r2, sizeof r2), xs[j].line);
    }
  }
}

/* An error about model.KEY from the file (at its line) or the command
 * line (line 0).
 */
static void __attribute__ ((format (printf, 3, 4)))
param_err (struct cfg *cfg, const struct xparam *p, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  if (p->line)
    add_error (cfg, cfg->filename, p->line, fmt, ap);
  else
    add_error (cfg, NULL, 0, fmt, ap);
  va_end (ap);
}

/* "a, b, c" */
static const char *
join (const char *const *names, char *buf, size_t len)
{
  size_t off = 0;

  buf[0] = '\0';
  for (size_t i = 0; names[i] && off < len; i++)
    off += snprintf (buf + off, len - off, "%s%s", i ? ", " : "", names[i]);
  return buf;
}

/* Set every model.* parameter on the device model [device] emulate names,
 * exactly as the plugin will.  With emulate = none a parameter is checked
 * on whichever model has it, so a typo is caught even while emulation is
 * off for a comparison run.  -ENOMEM or 0.
 */
static int
check_model_params (struct cfg *cfg, const struct xparam *const *src,
                    size_t np, uint64_t *capacity)
{
  const char *emu = cfg->m.dev.emulate;
  const char *kinds[2] = { emu ? emu : "hdd", emu ? NULL : "ssd" };
  struct devmodel *dm[2] = { NULL, NULL };
  char l0[256], l1[256];
  int err = 0;

  for (int k = 0; k < 2 && kinds[k] && (np || emu); k++) {
    dm[k] = devmodel_new (kinds[k], &err);
    if (!dm[k])
      goto out;
  }
  for (size_t i = 0; i < np; i++) {
    const struct xparam *p = src[i];
    const char *eq = p->line ? " = " : "=", *kind = NULL;
    int r = -ENOENT;

    for (int k = 0; k < 2 && r != 0; k++) {
      int rk;
      if (!dm[k] || (rk = devmodel_set (dm[k], p->key, p->value)) == -ENOENT)
        continue;
      if (r == -ENOENT || rk == 0) {
        r = rk;
        kind = kinds[k];
      }
    }
    if (r == -ENOENT && !emu)
      param_err (cfg, p, "model.%s: not a parameter of any device model"
                 " (hdd: %s; ssd: %s)", p->key,
                 join (devmodel_params (dm[0]), l0, sizeof l0),
                 join (devmodel_params (dm[1]), l1, sizeof l1));
    else if (r == -ENOENT)
      param_err (cfg, p, "model.%s: not a parameter of the %s model (want"
                 " %s)", p->key, emu,
                 join (devmodel_params (dm[0]), l0, sizeof l0));
    else if (r == -ERANGE)
      param_err (cfg, p, "model.%s%s%s: out of range for the %s model",
                 p->key, eq, p->value, kind);
    else if (r < 0)
      param_err (cfg, p, "model.%s%s%s: not a valid value for the %s model",
                 p->key, eq, p->value, kind);
  }
  if (emu)
    *capacity = devmodel_capacity (dm[0]);
out:
  devmodel_free (dm[0]);
  devmodel_free (dm[1]);
  return err == -ENOMEM ? -ENOMEM : 0;
}

/* Resolve each tenant's export, pattern, class and level, and check its
 * region against the export (OK[i]: export i's region is valid).
 */
static void
check_tenants (struct cfg *cfg, const bool *ok)
{
  char b1[32], b2[32], b3[80];

  for (size_t i = 0; i < cfg->nr_tenants; i++) {
    const struct xtenant *x = &cfg->tenants[i];
    struct cfg_tenant *t = &cfg->m_tenants[i];
    const char *want = x->export ? x->export : "";
    const struct cfg_export *e;
    const struct cfg_group *g;
    size_t j;

    *t = x->t;
    t->name = x->name;
    t->line = x->line;
    if (x->bad)
      continue;                 /* reported at its line already */
    bool mixed = strcmp (t->rw, "rw") == 0 || strcmp (t->rw, "randrw") == 0;
    if (x->rwmix_given && mixed)
      t->rwmixread = x->rwmix;
    else if (x->rwmix_given)
      ferr (cfg, x->l_rwmixread, "tenant %s: rwmixread applies to rw = rw"
            " or randrw (rw is %s)", x->name, t->rw);
    for (j = 0; j < cfg->m.nr_exports; j++)
      if (strcmp (cfg->m.exports[j].name, want) == 0)
        break;
    if (j == cfg->m.nr_exports) {
      if (x->export)
        ferr (cfg, x->l_export, "tenant %s: export = %s: no [export %s]"
              " section", x->name, want, want);
      else
        ferr (cfg, x->line, "tenant %s: no export = NAME, and no default"
              " export ([export] with no name)", x->name);
      continue;
    }
    t->export = j;
    e = &cfg->m.exports[j];
    if (e->group >= cfg->m.nr_groups)
      continue;                 /* no such group: reported already */
    g = &cfg->m_groups[e->group];
    if (!t->cls_given)
      t->cls = g->cls;
    if (!t->prio_given)
      t->prio = g->prio;
    if (e->file) {
      ferr (cfg, blame_t (x, x->l_export), "tenant %s: export \"%s\" has"
            " its own file; a tenant needs an export that is a region of"
            " the device", x->name, e->name);
      continue;
    }
    if (!ok[j])
      continue;                 /* the export's region is wrong already */
    if (t->rwmixread < 100 && e->readonly)
      ferr (cfg, blame_t (x, x->l_rw), "tenant %s writes (rw = %s) but"
            " export \"%s\" is readonly", x->name, t->rw, e->name);
    if (t->fsync && t->rwmixread == 100)
      ferr (cfg, x->l_fsync, "tenant %s: fsync = %u needs writes (rw ="
            " write, randwrite, rw or randrw)", x->name, t->fsync);
    if (t->stop && t->stop <= t->start)
      ferr (cfg, x->l_stop, "tenant %s: stop = %s is not after start = %s",
            x->name, units_format_time (t->stop, b1, sizeof b1),
            units_format_time (t->start, b2, sizeof b2));
    if (t->offset >= e->size) {
      ferr (cfg, blame_t (x, x->l_offset), "tenant %s: offset %s is at or"
            " beyond the end of export \"%s\" (size %s)", x->name,
            units_format_size (t->offset, b1, sizeof b1), e->name,
            units_format_size (e->size, b2, sizeof b2));
      continue;
    }
    if (!x->l_size)
      t->size = e->size - t->offset;
    else if (t->size > e->size - t->offset) {
      ferr (cfg, x->l_size, "tenant %s: region %s runs past the end of"
            " export \"%s\" (size %s)", x->name,
            format_region (t->offset, t->size, b3, sizeof b3), e->name,
            units_format_size (e->size, b2, sizeof b2));
      continue;
    }
    if (t->size < t->bs)
      ferr (cfg, blame_t (x, x->l_size ? x->l_size : x->l_bs), "tenant %s:"
            " region of %s is smaller than bs = %s", x->name,
            units_format_size (t->size, b1, sizeof b1),
            units_format_size (t->bs, b2, sizeof b2));
  }
}

/* ---- caps and reservations --------------------------------------------- */

int
cfg_parse_qos (const char *key, const char *value, struct qos_conf *c,
               char *why, size_t len)
{
  const struct qos_key *k = qos_key_lookup (key);
  char b1[32], b2[32], e[96];
  uint64_t v = 0;

  if (!k)
    return -ENOENT;
  switch (k->unit) {
  case QOS_U_IOPS:
    if (units_parse_count (value, &v) < 0) {
      snprintf (why, len, "not a number (requests per second)");
      return -EINVAL;
    }
    break;
  case QOS_U_BPS:
    if (units_parse_rate (value, &v) < 0) {
      snprintf (why, len, "not a rate (%s)", UNITS_EXPECT_RATE);
      return -EINVAL;
    }
    break;
  case QOS_U_SECONDS:
    /* A bare number is seconds here, not CFQ's milliseconds. */
    if (units_parse_time (value, NSEC_PER_SEC, &v) < 0) {
      snprintf (why, len, "not a time (want %s)",
                units_expect_time (NSEC_PER_SEC, e, sizeof e));
      return -EINVAL;
    }
    break;
  }
  if (qos_conf_set (c, k, v) < 0) {
    snprintf (why, len, "out of range %s..%s (0: none)",
              cfg_format_qos (k, k->min, b1, sizeof b1),
              cfg_format_qos (k, k->max, b2, sizeof b2));
    return -EINVAL;
  }
  return 0;
}

char *
cfg_format_qos (const struct qos_key *k, uint64_t v, char *buf, size_t len)
{
  switch (k->unit) {
  case QOS_U_BPS: return units_format_rate (v, buf, len);
  case QOS_U_SECONDS: return units_format_time (v, buf, len);
  default:
    snprintf (buf, len, "%llu", (unsigned long long) v);
    return buf;
  }
}

/* The line of a group's first QoS key in file order, and that key. */
static unsigned
first_qos_line (const struct xgroup *g, const struct qos_key **key)
{
  unsigned line = 0;

  for (size_t i = 0; i < qos_nr_keys; i++)
    if (g->l_qos[i] && (!line || g->l_qos[i] < line)) {
      line = g->l_qos[i];
      *key = &qos_keys[i];
    }
  return line;
}

/* What the device model gives at queue depth QD, from its own service
 * times: random 4 KiB reads per second (SEQ false) or sequential 1 MiB
 * read bytes per second (SEQ true), over 2000 requests kept QD deep.
 */
static double
model_rate (struct devmodel *dm, unsigned qd, bool seq)
{
  const unsigned n = 2000;
  const uint32_t bs = seq ? 1u << 20 : 4096;
  uint64_t blocks = devmodel_capacity (dm) / bs, now = 0, rs = 1;
  unsigned issued = 0, done = 0;
  struct rq *rqs, *r;

  if (qd > DEVMODEL_MAX_QUEUE)
    qd = DEVMODEL_MAX_QUEUE;
  rqs = calloc (qd, sizeof *rqs);
  if (!rqs || !blocks) {
    free (rqs);
    return 0;
  }
  devmodel_reset (dm);
  for (unsigned i = 0; i < qd && issued < n; i++, issued++) {
    rqs[i] = (struct rq) { .op = RQ_READ, .len = bs, .flags = RQ_SYNC };
    rqs[i].off = (seq ? issued % blocks : splitmix64 (&rs) % blocks) * bs;
    devmodel_submit (dm, &rqs[i], 0);
  }
  while (done < n && (now = devmodel_next (dm)) != SCHED_NEVER)
    while ((r = devmodel_complete (dm, now, NULL)) != NULL) {
      done++;
      if (issued < n) {
        r->off = (seq ? issued % blocks : splitmix64 (&rs) % blocks) * bs;
        devmodel_submit (dm, r, now);
        issued++;
      }
    }
  free (rqs);
  return now && now != SCHED_NEVER
    ? (double) done * (seq ? bs : 1) * 1e9 / (double) now : 0;
}

/* With emulation: warn if the reservations add up to more than the
 * model gives.  The IOPS are compared with random 4 KiB reads (what a
 * reservation in requests is usually for), the bytes with sequential
 * 1 MiB reads (the most the device gives at all).
 */
static void
warn_reservations (struct cfg *cfg)
{
  const char *emu = cfg->m.dev.emulate;
  uint64_t sum[2] = { 0, 0 };
  unsigned line[2] = { 0, 0 };
  struct devmodel *dm;
  int err;

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *g = &cfg->groups[i];
    for (int b = 0; b < 2; b++) {
      const struct qos_key *k = qos_key_lookup (b ? "bps_min" : "iops_min");
      uint64_t v = qos_conf_get (&g->qos, k);
      if (v) {
        sum[b] += v;
        line[b] = g->l_qos[k - qos_keys];
      }
    }
  }
  if (!emu || (!sum[0] && !sum[1]))
    return;
  dm = devmodel_new (emu, &err);
  if (!dm) {
    if (err == -ENOMEM)
      cfg->oom = true;
    return;
  }
  for (size_t i = 0; i < cfg->m.dev.nr_model; i++)
    devmodel_set (dm, cfg->m.dev.model[i].key, cfg->m.dev.model[i].value);
  for (int b = 0; b < 2; b++) {
    double give;
    char b1[32], b2[32];

    if (!sum[b])
      continue;
    give = model_rate (dm, cfg->m.dev.queue_depth, b);
    if ((double) sum[b] <= give)
      continue;
    if (b)
      fwarn (cfg, line[b], "the reservations add up to %s (bps_min), more"
             " than the emulated %s gives (about %s of sequential 1M reads"
             " at queue_depth %u): under contention not all of them can be"
             " met", units_format_rate (sum[b], b1, sizeof b1), emu,
             units_format_rate ((uint64_t) give / 1000000 * 1000000, b2,
                                sizeof b2), cfg->m.dev.queue_depth);
    else
      fwarn (cfg, line[b], "the reservations add up to %llu requests/s"
             " (iops_min), more than the emulated %s gives (about %.0f"
             " random 4K reads/s at queue_depth %u): under contention not"
             " all of them can be met", (unsigned long long) sum[b], emu,
             give, cfg->m.dev.queue_depth);
  }
  devmodel_free (dm);
}

/* Caps and reservations: consistent within each group, and only with a
 * scheduler that has them.
 */
static void
check_qos (struct cfg *cfg)
{
  bool fifo = strcmp (cfg->m.scheduler, "fifo") == 0;
  const struct qos_key *k = NULL, *o;
  char why[200], b1[32], b2[32];

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *g = &cfg->groups[i];
    unsigned line = first_qos_line (g, &k);
    struct qos_conf left = g->qos;

    if (qos_conf_empty (&g->qos))
      continue;
    if (fifo) {
      ferr (cfg, line, "%s: caps and reservations need scheduler = cfq"
            " (fifo serves in arrival order, with no per-group queues to"
            " hold back or to serve first)", k->name);
      continue;
    }
    /* Every fault, not just the first: drop each key found at fault. */
    while (qos_conf_check (&left, why, sizeof why, &k, &o) < 0) {
      cfg_format_qos (k, qos_conf_get (&g->qos, k), b1, sizeof b1);
      if (o)
        ferr (cfg, g->l_qos[k - qos_keys], "%s = %s, %s = %s (line %u): %s",
              k->name, b1, o->name,
              cfg_format_qos (o, qos_conf_get (&g->qos, o), b2, sizeof b2),
              g->l_qos[o - qos_keys], why);
      else
        ferr (cfg, g->l_qos[k - qos_keys], "%s = %s: %s", k->name, b1, why);
      qos_conf_set (&left, k, 0);
    }
  }
  if (!fifo)
    warn_reservations (cfg);
}

/* A tenant whose workload runs on a file system (every one but fio) owns
 * its export: the lab makes and mounts a file system there.
 */
static void
check_workloads (struct cfg *cfg)
{
  for (size_t i = 0; i < cfg->nr_tenants; i++) {
    const struct xtenant *x = &cfg->tenants[i];
    const struct cfg_tenant *t = &cfg->m_tenants[i];
    const struct cfg_export *e;

    if (x->bad || t->workload == CFG_WORKLOAD_FIO
        || t->export >= cfg->m.nr_exports)
      continue;
    e = &cfg->m.exports[t->export];
    if (e->readonly)
      ferr (cfg, x->l_workload, "tenant %s: workload = %s makes a file"
            " system on export \"%s\", which is readonly", x->name,
            cfg_workload_names[t->workload], e->name);
    for (size_t j = 0; j < cfg->nr_tenants; j++)
      if (j != i && cfg->m_tenants[j].export == t->export
          && !cfg->tenants[j].bad) {
        ferr (cfg, x->l_workload, "tenant %s: workload = %s needs export"
              " \"%s\" for itself, but tenant %s uses it too", x->name,
              cfg_workload_names[t->workload], e->name, cfg->tenants[j].name);
        break;
      }
  }
}

/* Each event's command, as the control socket would take it: "weight
 * GROUP N" or "set KEY VALUE" (KEY a CFQ tunable or queue_depth, VALUE in
 * the tunable's grammar).  The model's events are sorted by time.
 */
static void
check_events (struct cfg *cfg)
{
  char why[160], b1[32], b2[32];

  for (size_t i = 0; i < cfg->nr_events; i++) {
    const struct xevent *x = &cfg->events[i];
    struct cfg_event *ev = &cfg->m_events[i];
    char verb[16], a[80], b[80], extra[2];
    int n;

    ev->name = x->name;
    ev->at = x->at;
    ev->command = x->command;
    ev->line = x->line;
    if (!x->l_at)
      ferr (cfg, x->line, "[event %s] needs at = TIME", x->name);
    else if (cfg->l_duration && x->at >= cfg->duration)
      ferr (cfg, x->l_at, "event %s: at = %s is not before the end of the"
            " run ([sim] duration = %s)", x->name,
            units_format_time (x->at, b1, sizeof b1),
            units_format_time (cfg->duration, b2, sizeof b2));
    if (!x->command) {
      if (x->l_at)
        ferr (cfg, x->line, "[event %s] needs command = \"weight GROUP N\""
              " or \"set KEY VALUE\"", x->name);
      continue;
    }
    n = sscanf (x->command, "%15s %79s %79s %1s", verb, a, b, extra);
    if (n == 3 && strcmp (verb, "weight") == 0) {
      uint64_t w;
      size_t g;

      for (g = 0; g < cfg->m.nr_groups; g++)
        if (strcmp (cfg->m_groups[g].name, a) == 0)
          break;
      if (g == cfg->m.nr_groups)
        ferr (cfg, x->l_command, "event %s: command = %s: no [group %s]",
              x->name, x->command, a);
      else if (units_parse_count (b, &w) < 0 || w < SCHED_WEIGHT_MIN
               || w > SCHED_WEIGHT_MAX)
        ferr (cfg, x->l_command, "event %s: command = %s: weight %s is out"
              " of range %d..%d", x->name, x->command, b, SCHED_WEIGHT_MIN,
              SCHED_WEIGHT_MAX);
      else {
        ev->kind = CFG_EVENT_WEIGHT;
        ev->group = g;
        ev->weight = w;
      }
    }
    else if (n == 3 && strcmp (verb, "set") == 0) {
      int k = gkey_lookup (a);

      if (k == GK_QUEUE_DEPTH || (k >= GK_TUNABLE && cfq_tunable_lookup (a))) {
        uint64_t v;
        if (parse_gvalue (k, b, &v, why, sizeof why) < 0)
          ferr (cfg, x->l_command, "event %s: command = %s: %s", x->name,
                x->command, why);
        else {
          ev->kind = CFG_EVENT_SET;
          ev->key = k == GK_QUEUE_DEPTH ? gk_names[GK_QUEUE_DEPTH]
            : cfq_tunable_lookup (a)->name;
          ev->value = v;
        }
      }
      else
        ferr (cfg, x->l_command, "event %s: command = %s: '%s' cannot be"
              " set while running (a CFQ tunable or queue_depth)", x->name,
              x->command, a);
    }
    else
      ferr (cfg, x->l_command, "event %s: command = %s: want \"weight GROUP"
            " N\" or \"set KEY VALUE\"", x->name, x->command);
  }
  /* By time; file order among equal times (insertion sort: stable). */
  for (size_t i = 1; i < cfg->nr_events; i++) {
    struct cfg_event e = cfg->m_events[i];
    size_t j = i;
    while (j > 0 && cfg->m_events[j - 1].at > e.at) {
      cfg->m_events[j] = cfg->m_events[j - 1];
      j--;
    }
    cfg->m_events[j] = e;
  }
}

int
cfg_validate (struct cfg *cfg, uint64_t device_size)
{
  struct xexport *xs = cfg->exports;
  size_t nr = cfg->nr_exports, np = 0;
  uint64_t capacity = 0;
  const struct sched_ops *ops;
  const struct xparam **src = NULL;
  bool *ok = NULL;

  free_model (cfg);
  if (cfg->oom)
    return -ENOMEM;

  /* Device and scheduler. */
  cfg->m.dev.file = cfg_device_file (cfg);
  cfg->m.dev.queue_depth = gget (cfg, GK_QUEUE_DEPTH, SCHED_DEPTH_DEFAULT);
  cfg->m.dev.mode = gget (cfg, GK_MODE, CFQ_MODE_AUTO);
  {
    uint64_t e = gget (cfg, GK_EMULATE, 0);

    cfg->m.dev.emulate = e ? devmodel_presets[e - 1].name : NULL;
  }
  cfg->m.dev.max_connections = gget (cfg, GK_MAX_CONNS,
                                     CFG_MAX_CONNECTIONS_DEFAULT);
  cfg->m.dev.cache = gget (cfg, GK_CACHE, CFG_CACHE_NONE);
  cfg->m.dev.buffer_pool = gget (cfg, GK_BUFFER_POOL,
                                 CFG_BUFFER_POOL_DEFAULT);
  ops = sched_lookup (sched_names[gget (cfg, GK_SCHEDULER, 0)]);
  if (!ops)                     /* only if core/ was built without it */
    cerr (cfg, "scheduler %s is not built in",
          sched_names[gget (cfg, GK_SCHEDULER, 0)]);
  cfg->m.scheduler = ops ? ops->name : sched_names[0];

  /* model.*: the file's, with the command line's replacing or added. */
  cfg->m_params = calloc (cfg->nr_fparams + cfg->nr_cparams + 1,
                          sizeof *cfg->m_params);
  src = calloc (cfg->nr_fparams + cfg->nr_cparams + 1, sizeof *src);
  cfg->m_tunables = calloc (cfq_nr_tunables, sizeof *cfg->m_tunables);
  if (!cfg->m_params || !src || !cfg->m_tunables)
    goto oom;
  for (size_t i = 0; i < cfg->nr_fparams; i++) {
    const struct xparam *c = param_find (cfg->cparams, cfg->nr_cparams,
                                         cfg->fparams[i].key);
    src[np] = c ? c : &cfg->fparams[i];
    cfg->m_params[np].key = cfg->fparams[i].key;
    cfg->m_params[np].value = src[np]->value;
    np++;
  }
  for (size_t i = 0; i < cfg->nr_cparams; i++)
    if (!param_find (cfg->fparams, cfg->nr_fparams, cfg->cparams[i].key)) {
      src[np] = &cfg->cparams[i];
      cfg->m_params[np].key = cfg->cparams[i].key;
      cfg->m_params[np++].value = cfg->cparams[i].value;
    }
  cfg->m.dev.model = cfg->m_params;
  cfg->m.dev.nr_model = np;
  if (check_model_params (cfg, src, np, &capacity) < 0)
    goto oom;
  free (src);
  src = NULL;
  if (cfg->simulated && !cfg->m.dev.emulate) {
    char msg[192], all[128];

    devmodel_names (all, sizeof all, ", ", " or ");
    snprintf (msg, sizeof msg, "the simulator needs a device model: [device]"
              " emulate = %s", all);
    if (cfg->filename)
      ferr (cfg, cfg->gv[GK_EMULATE].line ? cfg->gv[GK_EMULATE].line
            : cfg->l_device, "%s", msg);
    else
      cerr (cfg, "%s", msg);
  }
  if (cfg->simulated)
    device_size = capacity;
  cfg->m.dev.size = device_size;
  cfg->m.sim.duration = cfg->duration;
  cfg->m.sim.seed = cfg->seed;
  cfg->m.sim.line = cfg->l_sim;

  /* The tunables given, in CFQ's table order; "mode" from [device]. */
  if (strcmp (cfg->m.scheduler, "cfq") == 0)
    for (size_t i = 0; i < cfq_nr_tunables; i++) {
      struct cfg_tunable *t = &cfg->m_tunables[cfg->m.nr_tunables];
      if (!tunable_is_key (i)) {
        if (!gset (cfg, GK_MODE))
          continue;
        t->val = cfg->m.dev.mode;
      }
      else if (gset (cfg, GK_TUNABLE + i))
        t->val = gget (cfg, GK_TUNABLE + i, 0);
      else
        continue;
      t->name = cfq_tunables[i].name;
      cfg->m.nr_tunables++;
    }
  cfg->m.tunables = cfg->m_tunables;

  /* Exports: with no file, one over the whole device. */
  if (nr == 0 && !cfg->filename) {
    if (!cfg->implicit) {
      cfg->implicit = calloc (1, sizeof *cfg->implicit);
      if (!cfg->implicit || !(cfg->implicit->name = strdup ("")))
        goto oom;
    }
    xs = cfg->implicit;
    nr = 1;
  }
  else if (nr == 0)
    ferr (cfg, 0, "no [export NAME] section: nothing to serve");

  cfg->m_groups = calloc (cfg->nr_groups + 1, sizeof *cfg->m_groups);
  cfg->m_exports = calloc (nr + 1, sizeof *cfg->m_exports);
  ok = calloc (nr + 1, sizeof *ok);
  if (!cfg->m_groups || !cfg->m_exports || !ok)
    goto oom;
  for (size_t i = 0; i < nr; i++) {
    struct cfg_export *e = &cfg->m_exports[i];
    e->name = xs[i].name;
    e->file = xs[i].file;
    e->readonly = xs[i].readonly;
    e->writes_sync = xs[i].writes_sync;
    e->tls_required = xs[i].tls_required;
    e->max_connections = xs[i].max_conns;
    e->writes_async = xs[i].writes_async;
    e->allow = xs[i].allow;
    e->nr_allow = xs[i].nr_allow;
    e->line = xs[i].line;
  }
  resolve_groups (cfg, xs, nr);
  check_qos (cfg);
  check_regions (cfg, xs, nr, device_size, ok);
  cfg->m.groups = cfg->m_groups;
  cfg->m.exports = cfg->m_exports;
  cfg->m.nr_exports = nr;
  cfg->m_tenants = calloc (cfg->nr_tenants + 1, sizeof *cfg->m_tenants);
  if (!cfg->m_tenants)
    goto oom;
  check_tenants (cfg, ok);
  free (ok);
  ok = NULL;
  cfg->m.tenants = cfg->m_tenants;
  cfg->m.nr_tenants = cfg->nr_tenants;
  check_workloads (cfg);
  cfg->m_events = calloc (cfg->nr_events + 1, sizeof *cfg->m_events);
  if (!cfg->m_events)
    goto oom;
  check_events (cfg);
  cfg->m.events = cfg->m_events;
  cfg->m.nr_events = cfg->nr_events;

  if (cfg->oom)
    goto oom;
  if (cfg->nr_errors) {
    free_model (cfg);
    return -EINVAL;
  }
  cfg->valid = true;
  return 0;

oom:
  free (ok);
  free (src);
  free_model (cfg);
  cfg->oom = true;
  return -ENOMEM;
}

const struct cfg_model *
cfg_model (const struct cfg *cfg)
{
  return cfg->valid ? &cfg->m : NULL;
}

const struct cfg_export *
cfg_find_export (const struct cfg_model *m, const char *name)
{
  for (size_t i = 0; i < m->nr_exports; i++)
    if (strcmp (m->exports[i].name, name) == 0)
      return &m->exports[i];
  return NULL;
}

/* ---- life ------------------------------------------------------------------- */

struct cfg *
cfg_new (cfg_report_fn report, void *opaque)
{
  struct cfg *cfg = calloc (1, sizeof *cfg);

  if (!cfg)
    return NULL;
  cfg->gv = calloc (NR_GKEYS, sizeof *cfg->gv);
  if (!cfg->gv) {
    free (cfg);
    return NULL;
  }
  cfg->report = report;
  cfg->opaque = opaque;
  cfg->duration = 10 * NSEC_PER_SEC;
  cfg->seed = 1;
  return cfg;
}

void
cfg_free (struct cfg *cfg)
{
  if (!cfg)
    return;
  free_model (cfg);
  for (size_t i = 0; i < cfg->nr_errors; i++)
    free (cfg->errors[i]);
  free (cfg->errors);
  for (size_t i = 0; i < cfg->nr_warnings; i++)
    free (cfg->warnings[i]);
  free (cfg->warnings);
  free (cfg->filename);
  free (cfg->dir);
  for (size_t i = 0; i < NR_GKEYS; i++) {
    free (cfg->gv[i].file_s);
    free (cfg->gv[i].cmd_s);
  }
  free (cfg->gv);
  for (size_t i = 0; i < cfg->nr_fparams; i++) {
    free (cfg->fparams[i].key);
    free (cfg->fparams[i].value);
  }
  for (size_t i = 0; i < cfg->nr_cparams; i++) {
    free (cfg->cparams[i].key);
    free (cfg->cparams[i].value);
  }
  free (cfg->fparams);
  free (cfg->cparams);
  for (size_t i = 0; i < cfg->nr_groups; i++)
    free (cfg->groups[i].name);
  free (cfg->groups);
  for (size_t i = 0; i < cfg->nr_exports; i++)
    xexport_free (&cfg->exports[i]);
  free (cfg->exports);
  for (size_t i = 0; i < cfg->nr_tenants; i++) {
    free (cfg->tenants[i].name);
    free (cfg->tenants[i].export);
  }
  free (cfg->tenants);
  for (size_t i = 0; i < cfg->nr_events; i++) {
    free (cfg->events[i].name);
    free (cfg->events[i].command);
  }
  free (cfg->events);
  if (cfg->implicit) {
    xexport_free (cfg->implicit);
    free (cfg->implicit);
  }
  free (cfg);
}
