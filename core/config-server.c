/* config-server.c: the server's model: [group], [export], who may connect.
 *
 * What a server needs to act on without checking again: each group's
 * weight, class and level; each export's place (a region of the device,
 * 4096-aligned, or a file of its own), its group, its writes= and tls=,
 * and the clients it allows.  The rules (the essay of config.c has the
 * decisions behind them):
 * - Groups and exports exist only in the file; an export without group=
 *   joins "default" (resolve_groups).
 * - Regions lie inside the device and overlap only if both exports are
 *   readonly; a region past the end is an error at its size= line, an
 *   overlap at its offset= line (check_regions).
 * - allow = addresses, CIDR networks (no host bits) and "unix"; none means
 *   anyone (parse_allow, cfg_export_allows).
 * - model.* parameters are set on the model [device] emulate names, as the
 *   plugin will (check_model_params).
 */
#include "config-priv.h"

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

void
set_group_key (struct cfg *cfg, struct xgroup *g, const char *key,
               const char *value)
{
  unsigned line = cfg->lineno;
  const struct qos_key *qk;
  const struct lat_key *lk;
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
    i = sched_class_parse (value);
    if (i < 0)
      ferr (cfg, line, "class = %s: want rt, be or idle", value);
    else
      g->cls = i;
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
  else if (strcmp (key, "scope") == 0) {
    if (!first_time (cfg, &g->l_scope, key))
      return;
    if (strcmp (value, "local") == 0 || strcmp (value, "global") == 0)
      g->global = value[0] == 'g';
    else
      ferr (cfg, line, "scope = %s: want local (caps and reservation per"
            " server) or global (for the sum over the servers)", value);
  }
  else if ((qk = qos_key_lookup (key)) != NULL) {
    if (first_time (cfg, &g->l_qos[qk - qos_keys], key)
        && cfg_parse_qos (key, value, &g->qos, why, sizeof why) < 0)
      ferr (cfg, line, "%s = %s: %s", key, value, why);
  }
  else if ((lk = lat_key_lookup (key)) != NULL) {
    if (first_time (cfg, &g->l_lat[lk - lat_keys], key)
        && cfg_parse_latency (key, value, &g->lat, why, sizeof why) < 0)
      ferr (cfg, line, "%s = %s: %s", key, value, why);
  }
  else
    unknown_key (cfg, SEC_GROUP, key, "[group NAME]");
}

/* Group names appear in messages, stats and control commands: keep them
 * to one plain word.
 */
bool
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

void
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
    if (r == -ERANGE)
      ferr (cfg, line, "%s = %s: out of range (a size is less than 16E)",
            key, value);
    else if (r < 0)
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
    unknown_key (cfg, SEC_EXPORT, key, "[export NAME]");
}

/* The line to blame for a region: the key if given, else the header. */
static unsigned
blame (const struct xexport *x, unsigned l)
{
  return l ? l : x->line;
}

unsigned
blame_t (const struct xtenant *x, unsigned l)
{
  return l ? l : x->line;
}

/* An end past 2^64 - 1 (offset + size as written, in 65 bits), in
 * units_format_size's form: "30E", "17179869184G", or bytes.
 */
static char *
format_end (unsigned __int128 v, char *buf, size_t len)
{
  static const char suffix[] = "KMGTPE";
  char digits[48], *p = digits + sizeof digits;
  int i = -1;

  while (i < 5 && v % 1024 == 0) {
    v /= 1024;
    i++;
  }
  *--p = '\0';
  do {
    *--p = (char) ('0' + (int) (v % 10));
    v /= 10;
  } while (v);
  snprintf (buf, len, "%s%.*s", p, i >= 0, i >= 0 ? &suffix[i] : "");
  return buf;
}

/* "[4K, 1G)"; the end as written even where it does not fit in 64 bits
 * ("[15E, 30E)"), never wrapped around.
 */
char *
format_region (uint64_t off, uint64_t size, char *buf, size_t len)
{
  char a[32], b[48];

  snprintf (buf, len, "[%s, %s)", units_format_size (off, a, sizeof a),
            size > UINT64_MAX - off
            ? format_end ((unsigned __int128) off + size, b, sizeof b)
            : units_format_size (off + size, b, sizeof b));
  return buf;
}

/* Resolve each export's group to an index into m_groups, adding the
 * implicit "default" group the first time it is needed.
 */
void
resolve_groups (struct cfg *cfg, struct xexport *xs, size_t nr)
{
  size_t ng = cfg->nr_groups;

  for (size_t i = 0; i < cfg->nr_groups; i++) {
    const struct xgroup *x = &cfg->groups[i];
    cfg->m_groups[i] = (struct cfg_group) {
      .name = x->name, .weight = x->weight, .cls = x->cls, .prio = x->prio,
      .qos = x->qos, .global = x->global, .lat = x->lat, .line = x->line,
    };
  }
  for (size_t i = 0; i < nr; i++) {
    const char *want = xs[i].group ? xs[i].group : CFG_DEFAULT_GROUP;
    size_t j;
    for (j = 0; j < ng; j++)
      if (strcmp (cfg->m_groups[j].name, want) == 0)
        break;
    if (j == ng && strcmp (want, CFG_DEFAULT_GROUP) == 0) {
      cfg->m_groups[ng++] = (struct cfg_group) {
        .name = CFG_DEFAULT_GROUP, .weight = SCHED_WEIGHT_DEFAULT,
        .cls = SCHED_CLASS_BE, .prio = SCHED_PRIO_DEFAULT, .line = 0,
      };
      lat_conf_init (&cfg->m_groups[ng - 1].lat);
    }
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
void
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
    if (devsize == CFG_SIZE_UNKNOWN)
      continue;                 /* not measured: the config has errors */
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
int
check_model_params (struct cfg *cfg, const struct xparam *const *src,
                    size_t np, uint64_t *capacity)
{
  const char *emu = cfg->m.dev.emulate;
  const char *kinds[2] = { emu ? emu : devmodel_kinds[0],
                           emu ? NULL : devmodel_kinds[1] };
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
