/* statfmt.h: the writers of statistics: tables of fields
 * (include/statfield.h) as JSON, as flat records, or as Prometheus's text
 * (see statfmt.c).
 *
 * A writer is walked through records (the device, each group, export,
 * connection), each given as tables with their snapshots, in the order
 * the JSON has them; the same walk makes all three texts:
 *
 *   statfmt_init (&w, STATFMT_JSON, &out);
 *   statfmt_rec_begin (&w, &device_rec);
 *   statfmt_table (&w, &device_table, &snap);    (or sched_stats (...,
 *   statfmt_rec_end (&w);                          statfmt_emit, &w))
 *   statfmt_list_begin (&w, "groups", STAT_ALL);
 *   ... a record per group ...
 *   statfmt_list_end (&w);
 *   statfmt_finish (&w);
 *
 * Threads: a writer belongs to its caller; nothing here locks.  Memory:
 * Prometheus's families are kept until statfmt_finish; running out sets
 * out->oom.
 */
#ifndef CFQ_STATFMT_H
#define CFQ_STATFMT_H

#include <stdbool.h>
#include <stddef.h>

#include "statfield.h"
#include "strbuf.h"

enum statfmt_kind {
  STATFMT_JSON,                 /* one object, one line ("stats") */
  STATFMT_FLAT,                 /* "KIND NAME key=value ..." a record a
                                   line ("stats flat") */
  STATFMT_PROM,                 /* Prometheus's text ("metrics") */
};

/* A record: one JSON object, one flat line, one set of Prometheus
 * labels.
 */
struct stat_rec {
  const char *key;              /* JSON: its key, outside a list
                                   ("device"); NULL inside one */
  const char *kind;             /* flat: the line's first word ("group");
                                   NULL: no line */
  const char *name;             /* flat: the second word, written as flat
                                   names are ("-" for the device) */
  const char *prom;             /* Prometheus: its families' prefix
                                   ("group_"); NULL: not shown there */
  const char *labels[4];        /* Prometheus: name, value, name, value;
                                   NULL ends them */
};

#define STATFMT_DEPTH 8         /* records, lists and tables nested */
#define STATFMT_INFO 4          /* string families of one record */

struct statfmt_fam;

struct statfmt {
  enum statfmt_kind kind;
  struct strbuf *o;
  unsigned mute;                /* inside lists this format leaves out */
  const struct stat_rec *rec;   /* being written, or NULL */
  const struct stat_rec *outer[STATFMT_DEPTH];  /* records it is in */
  unsigned nouter;
  bool flat_line;               /* flat: the record has a line */
  /* JSON: nothing written yet in each open object or list. */
  unsigned depth;
  bool first[STATFMT_DEPTH + 1];
  /* Prometheus: names' prefixes and help's words of the open tables, the
   * families in order of appearance, the record's string labels.
   */
  unsigned pdepth;
  char prefix[STATFMT_DEPTH + 1][64];
  const char *qual[STATFMT_DEPTH + 1];
  struct statfmt_fam *fams;
  size_t nfams, cap_fams, hint;
  size_t ninfo;
  size_t info_fam[STATFMT_INFO];
  struct strbuf info[STATFMT_INFO];
};

extern void statfmt_init (struct statfmt *w, enum statfmt_kind kind,
                          struct strbuf *o);
/* The end: JSON's closing brace and newline; Prometheus's families, each
 * with its HELP and TYPE.  Frees what the writer kept.
 */
extern void statfmt_finish (struct statfmt *w);

/* A list of records (JSON: "key":[...]), shown only in the formats of
 * show (STAT_J, STAT_F, STAT_P): in the others, everything inside is
 * left out.
 */
extern void statfmt_list_begin (struct statfmt *w, const char *key,
                                unsigned show);
extern void statfmt_list_end (struct statfmt *w);

extern void statfmt_rec_begin (struct statfmt *w, const struct stat_rec *r);
extern void statfmt_rec_end (struct statfmt *w);

/* A table (a STAT_TABLE field) of the record, reading snap. */
extern void statfmt_table (struct statfmt *w, const struct stat_field *t,
                           const void *snap);
/* The same as a stat_emit_fn (opaque: the writer), for sched_stats. */
extern void statfmt_emit (void *w, const struct stat_field *t,
                          const void *snap);
/* A named table left open, for a list inside it: its fields, then
 * statfmt_list_begin ... statfmt_list_end, then statfmt_close.
 */
extern void statfmt_open (struct statfmt *w, const struct stat_field *t,
                          const void *snap);
extern void statfmt_close (struct statfmt *w);

/* Text for JSON and flat records: a string as a JSON string (valid UTF-8
 * kept, the rest escaped or U+FFFD), a name as one flat word.
 */
extern void statfmt_json_str (struct strbuf *o, const char *s);
extern void statfmt_flat_name (struct strbuf *o, const char *s);

#endif /* CFQ_STATFMT_H */
