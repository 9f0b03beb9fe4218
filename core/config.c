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
 * Decisions (documented in the manual's CONFIGURATION FILE):
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
 *
 * Files.  This one reads: sections, keys and values into the two layers,
 * cfg_validate's order of checks, life.  The checks of one job each live
 * with their sections: config-server.c ([group], [export], allow lists,
 * regions, the device model), config-sim.c ([tenant], [sim], [event]: the
 * lab and the simulator), config-qos.c (caps and reservations), through
 * core/config-priv.h.  What they all use, errors and warnings, the names
 * of keys and values and the syntax of global values, is config-diag.c's,
 * below them: this file calls the sections, they never call it.
 */
#include <inttypes.h>
#include <stddef.h>

#include "config-priv.h"
#include "cost.h"
#include "suggest.h"

#define NAME_MAX_LEN 4096       /* NBD's limit on export names */

static int
status (const struct cfg *cfg)
{
  if (cfg->oom)
    return -ENOMEM;
  return cfg->nr_errors ? -EINVAL : 0;
}

/* ---- building up the layers ---------------------------------------------- */

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
  if (k == GK_FILE || k == GK_CALIBRATION)
    g->file_s = file_path (cfg, value);
  else if (gkey_is_text (k))
    g->file_s = xstrdup (cfg, value);
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

/* ---- the sections --------------------------------------------------------
 * What a header [TYPE] or [TYPE NAME] opens.  One of a kind ([device],
 * [scheduler], [sim]): its header line in struct cfg, a second one is an
 * error.  Named: a record each in an array of struct cfg (its name and
 * header line in the record), a second of the same name is an error.
 */
struct section_kind {
  const char *type;             /* the word in the header; NULL ends */
  enum sec sec;                 /* how its keys are read */
  const char *moved;            /* cfqsim's old sections: the error, after
                                   which the keys are read as sec */
  size_t line_off;              /* one of a kind: offset of its header
                                   line (unsigned) in struct cfg */
  const char *a_name;           /* named: "a group", for the rule on names
                                   (group_name_ok); NULL: any name, or
                                   none (the export "") */
  size_t list_off, nr_off;      /* named: offsets of the array and its
                                   count (size_t) in struct cfg */
  size_t size;                  /* named: bytes of a record; 0: one of a
                                   kind */
  size_t name_off, rec_line_off; /* named: offsets of the name (char *) and
                                    the header line (unsigned) in a record */
  void (*init) (void *rec);     /* named: the defaults, or NULL */
};

static void
init_tenant (void *rec)
{
  struct xtenant *x = rec;

  x->t.connections = 1;
  x->t.rw = "read";
  x->t.rwmixread = 100;
  x->t.bs = 4096;
  x->t.iodepth = 1;
}

static void
init_group (void *rec)
{
  struct xgroup *g = rec;

  g->weight = SCHED_WEIGHT_DEFAULT;
  g->cls = SCHED_CLASS_BE;
  g->prio = SCHED_PRIO_DEFAULT;
  lat_conf_init (&g->lat);
}

#define ONE_OF_A_KIND(t, s, l) \
  { .type = t, .sec = s, .line_off = offsetof (struct cfg, l) }
#define MOVED(t, s, msg) { .type = t, .sec = s, .moved = msg }
#define NAMED(t, s, a, list, nr, rtype, i) \
  { .type = t, .sec = s, .a_name = a, \
    .list_off = offsetof (struct cfg, list), \
    .nr_off = offsetof (struct cfg, nr), .size = sizeof (rtype), \
    .name_off = offsetof (rtype, name), .rec_line_off = offsetof (rtype, line), \
    .init = i }

static const struct section_kind section_kinds[] = {
  ONE_OF_A_KIND ("device", SEC_DEVICE, l_device),
  ONE_OF_A_KIND ("scheduler", SEC_SCHED, l_sched),
  ONE_OF_A_KIND ("sim", SEC_SIM, l_sim),
  NAMED ("group", SEC_GROUP, "a group", groups, nr_groups, struct xgroup,
         init_group),
  NAMED ("export", SEC_EXPORT, NULL, exports, nr_exports, struct xexport,
         NULL),
  NAMED ("tenant", SEC_TENANT, "a tenant", tenants, nr_tenants,
         struct xtenant, init_tenant),
  NAMED ("event", SEC_EVENT, "an event", events, nr_events, struct xevent,
         NULL),
  MOVED ("global", SEC_SIM, "[global] is now [sim] (duration, seed) and"
         " [device] (queue_depth)"),
  MOVED ("sched", SEC_SCHED, "[sched] is now [scheduler] (and policy= is now"
         " scheduler=)"),
  MOVED ("job", SEC_OLDJOB, "[job NAME] is now [tenant NAME], in fio's terms"
         " (export=, rw=, bs=, iodepth=, thinktime=, fsync=)"),
  { .type = NULL },
};

/* The header line s..e, "[TYPE NAME]": TYPE into type (of len bytes),
 * NAME (bare and trimmed, or in double quotes) as *np..*nep, both NULL
 * without one.  False, with the error said, if the header is bad.
 */
static bool
parse_header (struct cfg *cfg, const char *s, const char *e, char *type,
              size_t len, const char **np, const char **nep)
{
  unsigned line = cfg->lineno;
  const char *close = memchr (s, ']', e - s), *t, *te, *n, *ne, *rest;
  size_t tl;

  if (!close) {
    ferr (cfg, line, "missing ']' in section header");
    return false;
  }
  rest = skip_blank (close + 1, e);
  if (rest < e && *rest != ';' && *rest != '#') {
    ferr (cfg, line, "unexpected text after ']'");
    return false;
  }
  t = skip_blank (s + 1, close);
  for (te = t; te < close && *te != ' ' && *te != '\t'; te++)
    ;
  n = skip_blank (te, close);
  ne = rskip_blank (n, close);
  tl = te - t;
  if (tl == 0 || tl >= len) {
    ferr (cfg, line, "unknown section [%.*s]", (int) (close - s - 1), s + 1);
    return false;
  }
  memcpy (type, t, tl);
  type[tl] = '\0';

  /* The name: bare (trimmed) or in double quotes. */
  if (n < ne && *n == '"') {
    if (ne - n < 2 || ne[-1] != '"' || memchr (n + 1, '"', ne - n - 2)) {
      ferr (cfg, line, "bad quoted name in section header");
      return false;
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
      return false;
    }
  }
  *np = n;
  *nep = ne;
  return true;
}

/* [device], [scheduler], [sim]: no name, and once only. */
static void
open_one_of_a_kind (struct cfg *cfg, const struct section_kind *k,
                    const char *type, bool named)
{
  unsigned line = cfg->lineno;
  unsigned *l = (unsigned *) ((char *) cfg + k->line_off);

  if (named) {
    ferr (cfg, line, "[%s] takes no name", type);
    return;
  }
  if (*l) {
    ferr (cfg, line, "duplicate section [%s] (first at line %u)", type, *l);
    return;
  }
  *l = line;
  cfg->cur = k->sec;
}

/* A named section (n..ne, NULL for none): a new record at the end of its
 * kind's array, with its defaults, unless the name is wrong or taken.
 */
static void
open_named (struct cfg *cfg, const struct section_kind *k, const char *type,
            const char *n, const char *ne)
{
  unsigned line = cfg->lineno;
  char *name, *rec;
  void *recs;
  size_t *nr;

  if (ne - n > NAME_MAX_LEN) {
    ferr (cfg, line, "section name longer than %d bytes", NAME_MAX_LEN);
    return;
  }
  name = strndup (n ? n : "", n ? (size_t) (ne - n) : 0);
  if (!name) {
    cfg->oom = true;
    return;
  }
  if (k->a_name && !n) {
    ferr (cfg, line, "[%s] needs a name: [%s NAME]", type, type);
    goto out;
  }
  if (k->a_name && !group_name_ok (name)) {
    ferr (cfg, line, "[%s %s]: %s name is letters, digits, '_', '.' and '-'"
          " (at most 64)", type, name, k->a_name);
    goto out;
  }
  memcpy (&recs, (char *) cfg + k->list_off, sizeof recs);
  nr = (size_t *) ((char *) cfg + k->nr_off);
  for (size_t i = 0; i < *nr; i++) {
    char *r = (char *) recs + i * k->size, *rname;
    memcpy (&rname, r + k->name_off, sizeof rname);
    if (strcmp (rname, name) == 0) {
      ferr (cfg, line, "duplicate section [%s %s] (first at line %u)",
            type, name, *(unsigned *) (r + k->rec_line_off));
      goto out;
    }
  }
  recs = realloc (recs, (*nr + 1) * k->size);
  if (!recs) {
    cfg->oom = true;
    goto out;
  }
  memcpy ((char *) cfg + k->list_off, &recs, sizeof recs);
  rec = (char *) recs + *nr * k->size;
  memset (rec, 0, k->size);
  memcpy (rec + k->name_off, &name, sizeof name);
  *(unsigned *) (rec + k->rec_line_off) = line;
  if (k->init)
    k->init (rec);
  cfg->cur = k->sec;
  cfg->cur_idx = (*nr)++;
  return;
out:
  free (name);
}

/* A section header s..e: its kind from section_kinds; the keys that
 * follow go to it (cfg->cur), or are skipped after an error.
 */
static void
open_section (struct cfg *cfg, const char *s, const char *e)
{
  const struct section_kind *k;
  const char *n, *ne;
  char type[16];

  cfg->cur = SEC_SKIP;
  if (!parse_header (cfg, s, e, type, sizeof type, &n, &ne))
    return;
  for (k = section_kinds; k->type && strcmp (k->type, type) != 0; k++)
    ;
  if (!k->type) {
    ferr (cfg, cfg->lineno, "unknown section [%s] (want [device],"
          " [scheduler], [group NAME], [export NAME], [tenant NAME],"
          " [event NAME] or [sim])", type);
    return;
  }
  if (k->moved) {
    /* cfqsim's old sections: say what they are now, then read on. */
    ferr (cfg, cfg->lineno, "%s", k->moved);
    cfg->cur = k->sec;
    return;
  }
  if (!k->size)
    open_one_of_a_kind (cfg, k, type, n != NULL);
  else
    open_named (cfg, k, type, n, ne);
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
    struct suggest s;
    char hint[256];

    suggest_init (&s, key);
    sec_suggest (&s, SEC_DEVICE);
    sec_suggest (&s, SEC_SCHED);
    if (cfg->extra_keys)
      suggest_add_all (&s, cfg->extra_keys);
    if (suggest_best (&s))
      cerr (cfg, "%s=%s: unknown key%s", key, value,
            suggest_hint (&s, hint, sizeof hint));
    else
      cerr (cfg, "%s=%s: not a [device] or [scheduler] key", key, value);
    return -ENOENT;
  }
  if (parse_gvalue (k, value, &v, why, sizeof why) < 0) {
    cerr (cfg, "%s=%s: %s", key, value, why);
    return -EINVAL;
  }
  g = &cfg->gv[k];
  if (gkey_is_text (k)) {
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

void
cfg_value_suggest (struct suggest *s)
{
  suggest_add (s, gk_names[GK_QUEUE_DEPTH]);
  for (size_t i = 0; i < cfq_nr_tunables; i++)
    suggest_add (s, cfq_tunables[i].name);
}

void
cfg_set_override_names (struct cfg *cfg, const char *const *names)
{
  cfg->extra_keys = names;
}

int
cfg_parse_value (const char *key, const char *value, uint64_t *v,
                 char *why, size_t len)
{
  int k = gkey_lookup (key);

  if (k < 0) {
    struct suggest s;
    char hint[256];

    suggest_init (&s, key);
    cfg_value_suggest (&s);
    snprintf (why, len, "unknown key%s", suggest_hint (&s, hint, sizeof hint));
    return -ENOENT;
  }
  if (k != GK_QUEUE_DEPTH && k != GK_MODE && k < GK_TUNABLE) {
    snprintf (why, len, "not a number-valued [device] or [scheduler] key");
    return -ENOENT;
  }
  return parse_gvalue (k, value, v, why, len);
}

void
cfg_simulate (struct cfg *cfg)
{
  cfg->simulated = true;
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

void
cfg_memory_parts (const struct cfg_device *dev, struct cfg_memory *m)
{
  uint64_t used;

  m->pool = dev->buffer_pool;
  m->conns = (uint64_t) dev->max_connections * CFG_MEMORY_CONN;
  m->base = CFG_MEMORY_BASE;
  used = m->pool + m->conns + m->base;
  m->requests = dev->memory > used ? dev->memory - used : 0;
}

/* The budget must hold its fixed parts and room for requests.  The error
 * goes to the line of memory, or else of whichever part was set.
 */
static void
check_memory (struct cfg *cfg)
{
  static const int parts[] = { GK_MEMORY, GK_BUFFER_POOL, GK_MAX_CONNS };
  struct cfg_memory m;
  char a[32], b[32], c[32], d[32], e[32];
  unsigned line = 0;
  bool cmd = false;

  cfg_memory_parts (&cfg->m.dev, &m);
  if (m.requests >= CFG_MEMORY_REQ_MIN)
    return;
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
    if (cfg->gv[parts[i]].cmd_set) {
      cmd = true;
      break;
    }
    if (cfg->gv[parts[i]].line) {
      line = cfg->gv[parts[i]].line;
      break;
    }
  }
  units_format_size (cfg->m.dev.memory, a, sizeof a);
  units_format_size (m.pool, b, sizeof b);
  units_format_size (CFG_MEMORY_CONN, c, sizeof c);
  units_format_size (m.base, d, sizeof d);
  units_format_size (CFG_MEMORY_REQ_MIN, e, sizeof e);
#define MEMORY_MSG "memory = %s is less than its parts: buffer_pool %s + " \
    "max_connections %u x %s + %s for the process + at least %s for " \
    "requests in flight; raise memory, or lower buffer_pool or " \
    "max_connections"
  if (cmd || (!line && !cfg->filename))
    cerr (cfg, MEMORY_MSG, a, b, cfg->m.dev.max_connections, c, d, e);
  else
    ferr (cfg, line, MEMORY_MSG, a, b, cfg->m.dev.max_connections, c, d, e);
#undef MEMORY_MSG
}

/* [device] and [scheduler] into the model: each value given, else its
 * default; the memory budget against its parts; the scheduler by name.
 */
static void
validate_device (struct cfg *cfg)
{
  const struct sched_ops *ops;
  uint64_t e;

  cfg->m.dev.file = cfg_device_file (cfg);
  cfg->m.dev.queue_depth = gget (cfg, GK_QUEUE_DEPTH, SCHED_DEPTH_DEFAULT);
  cfg->m.dev.mode = gget (cfg, GK_MODE, CFQ_MODE_AUTO);
  e = gget (cfg, GK_EMULATE, 0);
  cfg->m.dev.emulate = e ? devmodel_presets[e - 1].name : NULL;
  cfg->m.dev.max_connections = gget (cfg, GK_MAX_CONNS,
                                     CFG_MAX_CONNECTIONS_DEFAULT);
  cfg->m.dev.cache = gget (cfg, GK_CACHE, CFG_CACHE_NONE);
  cfg->m.dev.buffer_pool = gget (cfg, GK_BUFFER_POOL,
                                 CFG_BUFFER_POOL_DEFAULT);
  cfg->m.dev.memory = gget (cfg, GK_MEMORY, CFG_MEMORY_DEFAULT);
  cfg->m.dev.reply_timeout = gget (cfg, GK_REPLY_TIMEOUT,
                                   CFG_REPLY_TIMEOUT_DEFAULT);
  cfg->m.dev.calibrate = gget (cfg, GK_CALIBRATE, CFG_CALIBRATE_READ);
  cfg->m.dev.calibrate_given = gset (cfg, GK_CALIBRATE);
  cfg->m.dev.calibration = gtext (cfg, GK_CALIBRATION);
  {
    const char *cm = gtext (cfg, GK_COST_MODEL);

    /* Checked when it was read: it parses. */
    cfg->m.dev.cost_given = cm && cost_params_parse (cm, &cfg->m.dev.cost,
                                                     NULL) == 0;
  }
  check_memory (cfg);
  ops = sched_lookup (sched_names[gget (cfg, GK_SCHEDULER, 0)]);
  if (!ops)                     /* only if core/ was built without it */
    cerr (cfg, "scheduler %s is not built in",
          sched_names[gget (cfg, GK_SCHEDULER, 0)]);
  cfg->m.scheduler = ops ? ops->name : sched_names[0];
}

/* model.*: the file's, with the command line's replacing or added, into
 * the model, checked against the device model; *capacity is the model's
 * device size.  -ENOMEM, else 0.
 */
static int
validate_model_params (struct cfg *cfg, uint64_t *capacity)
{
  const struct xparam **src;
  size_t np = 0;
  int r;

  cfg->m_params = calloc (cfg->nr_fparams + cfg->nr_cparams + 1,
                          sizeof *cfg->m_params);
  src = calloc (cfg->nr_fparams + cfg->nr_cparams + 1, sizeof *src);
  if (!cfg->m_params || !src) {
    free (src);
    return -ENOMEM;
  }
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
  r = check_model_params (cfg, src, np, capacity);
  free (src);
  return r < 0 ? -ENOMEM : 0;
}

/* cfqsim and the lab run on a device model: without one, say so. */
static void
check_sim_device (struct cfg *cfg)
{
  char msg[192], all[128];

  if (!cfg->simulated || cfg->m.dev.emulate)
    return;
  devmodel_names (all, sizeof all, ", ", " or ");
  snprintf (msg, sizeof msg, "the simulator needs a device model: [device]"
            " emulate = %s", all);
  if (cfg->filename)
    ferr (cfg, cfg->gv[GK_EMULATE].line ? cfg->gv[GK_EMULATE].line
          : cfg->l_device, "%s", msg);
  else
    cerr (cfg, "%s", msg);
}

/* The tunables given, in CFQ's table order; "mode" from [device]. */
static void
validate_tunables (struct cfg *cfg)
{
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
}

/* Exports into the model (with no file, one over the whole device), then
 * their groups, the groups' caps and the exports' regions on a device of
 * device_size bytes.  *okp: which exports' regions are good, for the
 * tenants (the caller frees it).  -ENOMEM, else 0.
 */
static int
validate_exports (struct cfg *cfg, uint64_t device_size, bool **okp)
{
  struct xexport *xs = cfg->exports;
  size_t nr = cfg->nr_exports;
  bool *ok;

  if (nr == 0 && !cfg->filename) {
    if (!cfg->implicit) {
      cfg->implicit = calloc (1, sizeof *cfg->implicit);
      if (!cfg->implicit || !(cfg->implicit->name = strdup ("")))
        return -ENOMEM;
    }
    xs = cfg->implicit;
    nr = 1;
  }
  else if (nr == 0)
    ferr (cfg, 0, "no [export NAME] section: nothing to serve");

  cfg->m_groups = calloc (cfg->nr_groups + 1, sizeof *cfg->m_groups);
  cfg->m_exports = calloc (nr + 1, sizeof *cfg->m_exports);
  *okp = ok = calloc (nr + 1, sizeof *ok);
  if (!cfg->m_groups || !cfg->m_exports || !ok)
    return -ENOMEM;
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
  check_latency (cfg);
  check_regions (cfg, xs, nr, device_size, ok);
  cfg->m.groups = cfg->m_groups;
  cfg->m.exports = cfg->m_exports;
  cfg->m.nr_exports = nr;
  return 0;
}

/* The tenants (on the exports ok says are good), their workloads and the
 * events, into the model.  -ENOMEM, else 0.
 */
static int
validate_sim (struct cfg *cfg, const bool *ok)
{
  cfg->m_tenants = calloc (cfg->nr_tenants + 1, sizeof *cfg->m_tenants);
  if (!cfg->m_tenants)
    return -ENOMEM;
  check_tenants (cfg, ok);
  cfg->m.tenants = cfg->m_tenants;
  cfg->m.nr_tenants = cfg->nr_tenants;
  check_workloads (cfg);
  cfg->m_events = calloc (cfg->nr_events + 1, sizeof *cfg->m_events);
  if (!cfg->m_events)
    return -ENOMEM;
  check_events (cfg);
  cfg->m.events = cfg->m_events;
  cfg->m.nr_events = cfg->nr_events;
  return 0;
}

int
cfg_validate (struct cfg *cfg, uint64_t device_size)
{
  uint64_t capacity = 0;
  bool *ok = NULL;

  free_model (cfg);
  if (cfg->oom)
    return -ENOMEM;

  validate_device (cfg);
  cfg->m_tunables = calloc (cfq_nr_tunables, sizeof *cfg->m_tunables);
  if (!cfg->m_tunables || validate_model_params (cfg, &capacity) < 0)
    goto oom;
  check_sim_device (cfg);
  if (cfg->simulated)
    device_size = capacity;
  cfg->m.dev.size = device_size;
  cfg->m.sim.duration = cfg->duration;
  cfg->m.sim.seed = cfg->seed;
  cfg->m.sim.line = cfg->l_sim;
  validate_tunables (cfg);
  if (validate_exports (cfg, device_size, &ok) < 0
      || validate_sim (cfg, ok) < 0)
    goto oom;
  free (ok);
  ok = NULL;

  if (cfg->oom)
    goto oom;
  if (device_size == CFG_SIZE_UNKNOWN && !cfg->nr_errors)
    cerr (cfg, "the device size is unknown");
  if (cfg->nr_errors) {
    free_model (cfg);
    return -EINVAL;
  }
  cfg->valid = true;
  return 0;

oom:
  free (ok);
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
