/* statfmt.c: the writers of statistics (see statfmt.h): one walk over
 * tables of fields (include/statfield.h), three texts.
 *
 * JSON.  A record is an object, a named table a nested object, a list an
 * array; numbers as the field says (divided by div, dec decimal places),
 * booleans as true/false, strings escaped so that the answer is valid
 * JSON whatever a name holds.
 *
 * Flat records.  A record is one line, "KIND NAME key=value ...", tables
 * flattened into it under their fields' flat names, in a table's flat
 * order when it has one (forder); names are one word
 * (blanks and control characters become '_', bytes that are not UTF-8
 * '?', the empty name "").
 *
 * Prometheus's text exposition format.  Every field is a family, named
 * by the rules of statfield.h; a record's samples carry its labels
 * (group="g", export="e"); a labelled table is one family with a label
 * per field (op="read") or, as a summary, quantiles with _sum and _count;
 * string fields are labels of an info family whose sample is 1.  The
 * samples of one family from every record are written together, after
 * its "# HELP" and "# TYPE", in the order the families first appeared;
 * label values are escaped (\\, \", \n); no blank line anywhere (the
 * control socket ends an answer with one).
 *
 * Numbers without floating-point printf where they are fixed-point (the
 * cost of "stats" with many connections was mostly %f): a value is
 * scaled to an integer and its digits are written with the decimal point
 * put in, as printf's %.Nf writes them.
 *
 * Threads: the caller's; nothing here locks.
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "statfmt.h"
#include "utf8.h"

struct statfmt_fam {
  char *name;                   /* nbdkit_cfq_... */
  enum stat_type type;
  char *help;                   /* with the words of its tables */
  struct strbuf body;           /* its samples, a line each */
};

/* ---- text --------------------------------------------------------------- */

void
statfmt_json_str (struct strbuf *o, const char *s)
{
  size_t n = strlen (s), i = 0, start = 0;

  strbuf_add (o, "\"", 1);
  while (i < n) {
    uint32_t cp;
    size_t cl = utf8_decode (s + i, n - i, &cp);

    if (cl && cp >= 0x20 && cp != '"' && cp != '\\' && cp != 0x7f &&
        !(cp >= 0x80 && cp <= 0x9f)) {
      i += cl;
      continue;
    }
    strbuf_add (o, s + start, i - start);
    if (cl == 0)
      strbuf_printf (o, "\\ufffd");
    else if (cp == '"' || cp == '\\')
      strbuf_printf (o, "\\%c", (char) cp);
    else
      strbuf_printf (o, "\\u%04x", (unsigned) cp);
    i += cl ? cl : 1;
    start = i;
  }
  strbuf_add (o, s + start, i - start);
  strbuf_add (o, "\"", 1);
}

void
statfmt_flat_name (struct strbuf *o, const char *s)
{
  if (!*s) {
    strbuf_printf (o, "\"\"");
    return;
  }
  for (size_t i = 0, n = strlen (s); i < n;) {
    uint32_t cp;
    size_t cl = utf8_decode (s + i, n - i, &cp);

    if (cl == 0)
      strbuf_add (o, "?", 1);
    else if (cp == ' ' || utf8_is_control (cp))
      strbuf_add (o, "_", 1);
    else
      strbuf_add (o, s + i, cl);
    i += cl ? cl : 1;
  }
}

static void
prom_str (struct strbuf *o, const char *s)
{
  strbuf_add (o, "\"", 1);
  for (; *s; s++) {
    if (*s == '\\' || *s == '"')
      strbuf_printf (o, "\\%c", *s);
    else if (*s == '\n')
      strbuf_printf (o, "\\n");
    else
      strbuf_add (o, s, 1);
  }
  strbuf_add (o, "\"", 1);
}

/* scaled / 10^d, with d decimal places. */
static void
fixed (struct strbuf *o, uint64_t scaled, unsigned d)
{
  char tmp[32], buf[34];
  unsigned n = 0, k = 0;

  do {
    tmp[n++] = (char) ('0' + scaled % 10);
    scaled /= 10;
  } while (scaled || n <= d);
  while (n) {
    if (n == d)
      buf[k++] = '.';
    buf[k++] = tmp[--n];
  }
  strbuf_add (o, buf, k);
}

static uint64_t
pow10u (unsigned d)
{
  uint64_t p = 1;

  while (d--)
    p *= 10;
  return p;
}

/* ---- values ------------------------------------------------------------- */

struct val {
  enum { V_UINT, V_INT, V_DBL, V_BOOL, V_STR, V_NONE } k;
  uint64_t u;
  int64_t i;
  double d;
  const char *s;
};

static struct val
read_val (const struct stat_field *f, const char *p)
{
  struct val v = { .k = V_NONE };

  switch (f->repr) {
  case STAT_U64: v.k = V_UINT; v.u = *(const uint64_t *) p; break;
  case STAT_UINT: v.k = V_UINT; v.u = *(const unsigned *) p; break;
  case STAT_SIZE: v.k = V_UINT; v.u = *(const size_t *) p; break;
  case STAT_INT: v.k = V_INT; v.i = *(const int *) p; break;
  case STAT_BOOL: v.k = V_BOOL; v.u = *(const bool *) p; break;
  case STAT_DOUBLE: v.k = V_DBL; v.d = *(const double *) p; break;
  case STAT_STR: v.k = V_STR; v.s = *(const char *const *) p; break;
  default: break;
  }
  return v;
}

static bool
is_zero (const struct val *v)
{
  return (v->k == V_UINT || v->k == V_BOOL) ? v->u == 0
    : v->k == V_INT ? v->i == 0 : v->k == V_DBL ? v->d == 0 : !v->s;
}

/* u / div: the whole quotient with dec 0, else rounded to dec places. */
static void
put_unsigned (struct strbuf *o, uint64_t u, double div, unsigned dec)
{
  uint64_t unit;

  if (div <= 1 && dec == 0) {
    strbuf_printf (o, "%" PRIu64, u);
    return;
  }
  if (dec == 0) {
    strbuf_printf (o, "%" PRIu64, u / (uint64_t) div);
    return;
  }
  unit = (uint64_t) (div > 1 ? div : 1) / pow10u (dec);
  if (unit <= 1)
    fixed (o, u * (unit ? 1 : pow10u (dec)), dec);
  else
    fixed (o, u / unit + (u % unit * 2 >= unit), dec);
}

/* JSON's and the flat records' text of a number or boolean. */
static void
put_num (struct strbuf *o, const struct stat_field *f, const struct val *v,
         double div, bool json)
{
  switch (v->k) {
  case V_BOOL:
    if (json)
      strbuf_printf (o, v->u ? "true" : "false");
    else
      strbuf_printf (o, "%d", v->u ? 1 : 0);
    break;
  case V_UINT:
    put_unsigned (o, v->u, div, f->dec);
    break;
  case V_INT:
    if (v->i < 0 && (div > 1 || f->dec))
      strbuf_add (o, "-", 1);
    if (div > 1 || f->dec)
      put_unsigned (o, v->i < 0 ? -(uint64_t) v->i : (uint64_t) v->i, div,
                    f->dec);
    else
      strbuf_printf (o, "%" PRId64, v->i);
    break;
  case V_DBL: {
    double x = v->d / (div > 0 ? div : 1), scale = (double) pow10u (f->dec);
    bool neg = x < 0;
    uint64_t q;

    if (neg)
      x = -x;
    if (!(x >= 0) || x * scale >= 1.8e19)
      x = 0;
    q = (uint64_t) (x * scale + .5);
    if (neg && q)
      strbuf_add (o, "-", 1);
    fixed (o, q, f->dec);
    break;
  }
  default:
    break;
  }
}

/* Prometheus's text of a number: exact for integers, %.9g otherwise. */
static void
put_prom (struct strbuf *o, const struct stat_field *f, const struct val *v)
{
  if (f->pdiv > 0) {
    double x = v->k == V_DBL ? v->d : v->k == V_INT ? (double) v->i
      : (double) v->u;
    strbuf_printf (o, "%.9g", x / f->pdiv);
    return;
  }
  switch (v->k) {
  case V_UINT: case V_BOOL: strbuf_printf (o, "%" PRIu64, v->u); break;
  case V_INT: strbuf_printf (o, "%" PRId64, v->i); break;
  case V_DBL: strbuf_printf (o, "%.9g", v->d); break;
  default: break;
  }
}

/* ---- the writer --------------------------------------------------------- */

static unsigned
fmt_bit (const struct statfmt *w)
{
  return w->kind == STATFMT_JSON ? STAT_J
    : w->kind == STATFMT_FLAT ? STAT_F : STAT_P;
}

static bool
shown (const struct statfmt *w, const struct stat_field *f)
{
  if (!(f->show & fmt_bit (w)))
    return false;
  if (w->kind == STATFMT_PROM && (f->show & STAT_P_PEERS))
    return w->rec && w->rec->labels[0];
  return true;
}

void
statfmt_init (struct statfmt *w, enum statfmt_kind kind, struct strbuf *o)
{
  memset (w, 0, sizeof *w);
  w->kind = kind;
  w->o = o;
  if (kind == STATFMT_JSON) {
    strbuf_add (o, "{", 1);
    w->first[0] = true;
  }
}

/* JSON: a comma unless first in its object or list. */
static void
sep (struct statfmt *w)
{
  if (!w->first[w->depth])
    strbuf_add (w->o, ",", 1);
  w->first[w->depth] = false;
}

static void
json_push (struct statfmt *w, const char *key, const char *open)
{
  sep (w);
  if (key) {
    statfmt_json_str (w->o, key);
    strbuf_add (w->o, ":", 1);
  }
  strbuf_printf (w->o, "%s", open);
  if (w->depth < STATFMT_DEPTH)
    w->depth++;
  w->first[w->depth] = true;
}

static void
json_pop (struct statfmt *w, const char *close)
{
  strbuf_printf (w->o, "%s", close);
  if (w->depth)
    w->depth--;
}

/* Prometheus: the prefix and the help's words of a table inside the open
 * ones.
 */
static void
prom_push (struct statfmt *w, const struct stat_field *t)
{
  const char *up = w->prefix[w->pdepth];
  const char *qual = w->qual[w->pdepth];
  unsigned d = w->pdepth < STATFMT_DEPTH ? w->pdepth + 1 : w->pdepth;

  if (t->prom)
    snprintf (w->prefix[d], sizeof w->prefix[d], "%s", t->prom);
  else if (t->name)
    snprintf (w->prefix[d], sizeof w->prefix[d], "%s%s_", up, t->name);
  else
    snprintf (w->prefix[d], sizeof w->prefix[d], "%s", up);
  w->qual[d] = t->name ? qual : t->help ? t->help : qual;
  w->pdepth = d;
}

static void
prom_pop (struct statfmt *w)
{
  if (w->pdepth)
    w->pdepth--;
}

/* The family NAME, made on first use with its help (and the words of the
 * open tables when qualify); NULL when out of memory.
 */
static struct statfmt_fam *
family (struct statfmt *w, const char *name, enum stat_type type,
        const char *help, bool qualify)
{
  struct statfmt_fam *f;
  const char *qual = qualify ? w->qual[w->pdepth] : NULL;
  size_t hl = strlen (help);

  for (size_t i = 0; i < w->nfams; i++) {
    size_t j = (w->hint + i) % w->nfams;

    if (strcmp (w->fams[j].name, name) == 0) {
      w->hint = j + 1;
      return &w->fams[j];
    }
  }
  if (w->nfams == w->cap_fams) {
    size_t cap = w->cap_fams ? 2 * w->cap_fams : 64;
    struct statfmt_fam *n = realloc (w->fams, cap * sizeof *n);

    if (!n)
      return NULL;
    w->fams = n;
    w->cap_fams = cap;
  }
  f = &w->fams[w->nfams];
  memset (f, 0, sizeof *f);
  f->type = type;
  f->name = strdup (name);
  if (hl && help[hl - 1] == '.')
    hl--;
  if (qual && asprintf (&f->help, "%.*s, %s.", (int) hl, help, qual) == -1)
    f->help = NULL;
  else if (!qual)
    f->help = strdup (help);
  if (!f->name || !f->help) {
    free (f->name);
    free (f->help);
    return NULL;
  }
  w->hint = ++w->nfams;
  return f;
}

/* The family nbdkit_cfq_PREFIX NAME [_total], or NULL (out of memory). */
static struct statfmt_fam *
family_of (struct statfmt *w, const struct stat_field *f, enum stat_type type)
{
  char name[160];
  struct statfmt_fam *fam;

  snprintf (name, sizeof name, "nbdkit_cfq_%s%s%s", w->prefix[w->pdepth],
            f->prom ? f->prom : f->name,
            type == STAT_COUNTER ? "_total" : "");
  fam = family (w, name, type, f->help, true);
  if (!fam)
    w->o->oom = 1;
  return fam;
}

/* NAME{the record's labels[,k="v"]} and a space. */
static void
sample_head (struct statfmt *w, struct strbuf *b, const char *name,
             const char *suffix, const char *k, const char *v)
{
  const char *const *l = w->rec->labels;
  bool any = false;

  strbuf_printf (b, "%s%s", name, suffix);
  for (unsigned i = 0; i + 1 < 4 && l[i]; i += 2) {
    strbuf_printf (b, "%s%s=", any ? "," : "{", l[i]);
    prom_str (b, l[i + 1]);
    any = true;
  }
  if (k) {
    strbuf_printf (b, "%s%s=", any ? "," : "{", k);
    prom_str (b, v);
    any = true;
  }
  strbuf_printf (b, "%s ", any ? "}" : "");
}

/* A string field: one label of its info family's sample, written at the
 * record's end.
 */
static void
prom_info (struct statfmt *w, const struct stat_field *f, const char *s)
{
  struct statfmt_fam *fam;
  char name[160];
  size_t i, k;

  snprintf (name, sizeof name, "nbdkit_cfq_%s", f->prom);
  fam = family (w, name, STAT_GAUGE, f->help, false);
  if (!fam) {
    w->o->oom = 1;
    return;
  }
  k = (size_t) (fam - w->fams);
  for (i = 0; i < w->ninfo && w->info_fam[i] != k; i++)
    ;
  if (i == STATFMT_INFO)
    return;
  if (i == w->ninfo) {
    w->info_fam[w->ninfo++] = k;
    memset (&w->info[i], 0, sizeof w->info[i]);
  }
  strbuf_printf (&w->info[i], "%s%s=", w->info[i].len ? "," : "", f->name);
  prom_str (&w->info[i], s);
}

static void
info_flush (struct statfmt *w)
{
  for (size_t i = 0; i < w->ninfo; i++) {
    struct strbuf *b = &w->fams[w->info_fam[i]].body;
    const char *const *l = w->rec->labels;

    strbuf_printf (b, "%s{", w->fams[w->info_fam[i]].name);
    for (unsigned j = 0; j + 1 < 4 && l[j]; j += 2) {
      strbuf_printf (b, "%s=", l[j]);
      prom_str (b, l[j + 1]);
      strbuf_add (b, ",", 1);
    }
    strbuf_printf (b, "%s} 1\n", w->info[i].s ? w->info[i].s : "");
    if (w->info[i].oom)
      w->o->oom = 1;
    strbuf_free (&w->info[i]);
  }
  w->ninfo = 0;
}

static void fields (struct statfmt *w, const struct stat_field *t,
                    const char *snap);

/* A labelled table: one family, a sample per field shown. */
static void
prom_labelled (struct statfmt *w, const struct stat_field *t,
               const char *snap)
{
  struct statfmt_fam *fam = family_of (w, t, t->type);

  for (size_t i = 0; fam && i < t->nsub; i++) {
    const struct stat_field *f = &t->sub[i];
    const char *lv = f->prom ? f->prom : f->name;
    struct val v = read_val (f, snap + f->off);

    if (!shown (w, f) || v.k == V_NONE || v.k == V_STR)
      continue;
    if (lv[0] == '_')
      sample_head (w, &fam->body, fam->name, lv, NULL, NULL);
    else
      sample_head (w, &fam->body, fam->name, "", t->label, lv);
    put_prom (&fam->body, f, &v);
    strbuf_add (&fam->body, "\n", 1);
  }
}

static void
prom_field (struct statfmt *w, const struct stat_field *f, const char *p)
{
  struct statfmt_fam *fam;
  struct val v;

  if (f->repr == STAT_TABLE) {
    if (f->label) {
      prom_labelled (w, f, p);
      return;
    }
    prom_push (w, f);
    fields (w, f, p);
    prom_pop (w);
    return;
  }
  if (f->repr == STAT_KV) {
    const struct stat_kvs *kv = (const struct stat_kvs *) p;

    if (!f->label || !(fam = family_of (w, f, f->type)))
      return;
    for (size_t i = 0; i < kv->n; i++) {
      sample_head (w, &fam->body, fam->name, "", f->label, kv->kv[i].name);
      strbuf_printf (&fam->body, "%" PRIu64 "\n", kv->kv[i].val);
    }
    return;
  }
  v = read_val (f, p);
  if (v.k == V_STR) {
    if (v.s)
      prom_info (w, f, v.s);
    return;
  }
  if (v.k == V_NONE || !(fam = family_of (w, f, f->type)))
    return;
  sample_head (w, &fam->body, fam->name, "", NULL, NULL);
  put_prom (&fam->body, f, &v);
  strbuf_add (&fam->body, "\n", 1);
}

static void
json_field (struct statfmt *w, const struct stat_field *f, const char *p)
{
  struct val v;

  if (f->repr == STAT_TABLE) {
    if (f->name)
      json_push (w, f->name, "{");
    fields (w, f, p);
    if (f->name)
      json_pop (w, "}");
    return;
  }
  if (f->repr == STAT_KV) {
    const struct stat_kvs *kv = (const struct stat_kvs *) p;

    if (f->name)
      json_push (w, f->name, "{");
    for (size_t i = 0; i < kv->n; i++) {
      sep (w);
      strbuf_printf (w->o, "\"%s\":%" PRIu64, kv->kv[i].name,
                     kv->kv[i].val);
    }
    if (f->name)
      json_pop (w, "}");
    return;
  }
  v = read_val (f, p);
  if (v.k == V_NONE || (v.k == V_STR && !v.s)
      || ((f->show & STAT_NONZERO) && is_zero (&v)))
    return;
  sep (w);
  statfmt_json_str (w->o, f->name);
  strbuf_add (w->o, ":", 1);
  if (v.k == V_STR)
    statfmt_json_str (w->o, v.s);
  else
    put_num (w->o, f, &v, f->div, true);
}

static void
flat_field (struct statfmt *w, const struct stat_field *f, const char *p)
{
  struct val v;

  if (f->repr == STAT_TABLE) {
    fields (w, f, p);
    return;
  }
  if (f->repr == STAT_KV) {
    const struct stat_kvs *kv = (const struct stat_kvs *) p;

    for (size_t i = 0; i < kv->n; i++)
      strbuf_printf (w->o, " %s=%" PRIu64, kv->kv[i].name, kv->kv[i].val);
    return;
  }
  v = read_val (f, p);
  if (v.k == V_NONE || (v.k == V_STR && !v.s)
      || ((f->show & STAT_NONZERO) && is_zero (&v)))
    return;
  strbuf_printf (w->o, " %s=", f->flat ? f->flat : f->name);
  if (v.k == V_STR)
    statfmt_flat_name (w->o, v.s);
  else
    put_num (w->o, f, &v, f->fdiv > 0 ? f->fdiv : f->div, false);
}

/* Does table t hold a setting (a STAT_KV with values)? */
static bool
table_set (const struct stat_field *t, const char *snap)
{
  for (size_t i = 0; i < t->nsub; i++)
    if (t->sub[i].repr == STAT_KV
        && ((const struct stat_kvs *) (snap + t->sub[i].off))->n)
      return true;
  return false;
}

static void
fields (struct statfmt *w, const struct stat_field *t, const char *snap)
{
  bool set = w->kind == STATFMT_FLAT && table_set (t, snap);

  for (size_t i = 0; i < t->nsub; i++) {
    const struct stat_field *f =
      &t->sub[w->kind == STATFMT_FLAT && t->forder ? t->forder[i] : i];
    const char *p = snap + f->off;

    if (!shown (w, f))
      continue;
    if (w->kind == STATFMT_JSON)
      json_field (w, f, p);
    else if (w->kind == STATFMT_FLAT) {
      if (!(f->show & STAT_F_SET) || set)
        flat_field (w, f, p);
    }
    else
      prom_field (w, f, p);
  }
}

void
statfmt_table (struct statfmt *w, const struct stat_field *t,
               const void *snap)
{
  if (w->mute || !shown (w, t))
    return;
  if (w->kind == STATFMT_JSON)
    json_field (w, t, (const char *) snap);
  else if (w->kind == STATFMT_FLAT)
    flat_field (w, t, (const char *) snap);
  else
    prom_field (w, t, (const char *) snap);
}

void
statfmt_emit (void *w, const struct stat_field *t, const void *snap)
{
  statfmt_table (w, t, snap);
}

void
statfmt_open (struct statfmt *w, const struct stat_field *t,
              const void *snap)
{
  if (w->mute || !shown (w, t)) {
    w->mute++;
    return;
  }
  if (w->kind == STATFMT_JSON)
    json_push (w, t->name, "{");
  else if (w->kind == STATFMT_PROM)
    prom_push (w, t);
  fields (w, t, snap);
}

void
statfmt_close (struct statfmt *w)
{
  if (w->mute) {
    w->mute--;
    return;
  }
  if (w->kind == STATFMT_JSON)
    json_pop (w, "}");
  else if (w->kind == STATFMT_PROM)
    prom_pop (w);
}

void
statfmt_list_begin (struct statfmt *w, const char *key, unsigned show)
{
  if (w->mute || !(show & fmt_bit (w))) {
    w->mute++;
    return;
  }
  if (w->kind == STATFMT_JSON)
    json_push (w, key, "[");
}

void
statfmt_list_end (struct statfmt *w)
{
  if (w->mute) {
    w->mute--;
    return;
  }
  if (w->kind == STATFMT_JSON)
    json_pop (w, "]");
}

void
statfmt_rec_begin (struct statfmt *w, const struct stat_rec *r)
{
  if (w->mute || (w->kind == STATFMT_FLAT && !r->kind)
      || (w->kind == STATFMT_PROM && !r->prom)) {
    w->mute++;
    return;
  }
  if (w->nouter < STATFMT_DEPTH)
    w->outer[w->nouter++] = w->rec;
  w->rec = r;
  if (w->kind == STATFMT_JSON)
    json_push (w, r->key, "{");
  else if (w->kind == STATFMT_FLAT) {
    strbuf_printf (w->o, "%s ", r->kind);
    statfmt_flat_name (w->o, r->name);
  }
  else {
    w->pdepth = 0;
    snprintf (w->prefix[0], sizeof w->prefix[0], "%s", r->prom);
    w->qual[0] = NULL;
    w->ninfo = 0;
  }
}

void
statfmt_rec_end (struct statfmt *w)
{
  if (w->mute) {
    w->mute--;
    return;
  }
  if (w->kind == STATFMT_JSON)
    json_pop (w, "}");
  else if (w->kind == STATFMT_FLAT)
    strbuf_add (w->o, "\n", 1);
  else
    info_flush (w);
  w->rec = w->nouter ? w->outer[--w->nouter] : NULL;
}

static const char *
type_name (enum stat_type t)
{
  return t == STAT_COUNTER ? "counter" : t == STAT_SUMMARY ? "summary"
    : "gauge";
}

void
statfmt_finish (struct statfmt *w)
{
  if (w->kind == STATFMT_JSON)
    strbuf_add (w->o, "}\n", 2);
  for (size_t i = 0; i < w->nfams; i++) {
    struct statfmt_fam *f = &w->fams[i];

    strbuf_printf (w->o, "# HELP %s ", f->name);
    for (const char *h = f->help; *h; h++)
      if (*h == '\\' || *h == '\n')
        strbuf_printf (w->o, "\\%c", *h == '\n' ? 'n' : '\\');
      else
        strbuf_add (w->o, h, 1);
    strbuf_printf (w->o, "\n# TYPE %s %s\n", f->name, type_name (f->type));
    if (f->body.len)
      strbuf_add (w->o, f->body.s, f->body.len);
    if (f->body.oom)
      w->o->oom = 1;
    free (f->name);
    free (f->help);
    strbuf_free (&f->body);
  }
  free (w->fams);
  w->fams = NULL;
  w->nfams = w->cap_fams = 0;
}
