/* statfield.h: a statistic described once: its name in each output, its
 * unit, whether it counts or measures, a sentence of help, and where its
 * value is.
 *
 * Whoever keeps statistics (a policy in core/ through sched_ops' stats,
 * the plugin's accounting) describes them in tables of struct stat_field
 * and hands a table out with a snapshot: a struct of its own, filled in
 * for the occasion, that the table's offsets read.  The plugin's writers
 * (plugin/statfmt.c) turn the same tables into JSON ("stats"), flat
 * records ("stats flat") and Prometheus's text ("metrics"), so each
 * statistic is named, scaled and explained in one row, and a policy
 * exports what it keeps without the plugin knowing which policy it is.
 *
 * A table is itself a field (repr STAT_TABLE): inline (no name) its fields
 * sit among their neighbours; named, they are a JSON object of that name.
 * A table with a label is one Prometheus family whose samples differ by
 * that label (op="read", quantile="0.99", figure="rbps").
 *
 * Names in Prometheus: "nbdkit_cfq_", then the record's prefix (device_,
 * group_, export_), a named table's (its name and "_", or prom when
 * given), then the field's prom or name; a counter's name ends in
 * "_total".  A string field (repr STAT_STR) is a label instead: of the
 * family prom names in full (after "nbdkit_cfq_"), whose one sample is 1.
 *
 * Pure data: nothing here allocates or does I/O.  A snapshot lives as
 * long as the call that hands it out; tables are static.
 */
#ifndef CFQ_STATFIELD_H
#define CFQ_STATFIELD_H

#include <stddef.h>
#include <stdint.h>

enum stat_type {
  STAT_GAUGE = 0,               /* a level: goes up and down */
  STAT_COUNTER,                 /* a count since start (or reset) */
  STAT_SUMMARY,                 /* a labelled table: quantiles, _sum,
                                   _count */
};

/* How a value is held in the snapshot, at off. */
enum stat_repr {
  STAT_U64 = 0,                 /* uint64_t */
  STAT_UINT,                    /* unsigned */
  STAT_INT,                     /* int */
  STAT_SIZE,                    /* size_t */
  STAT_BOOL,                    /* bool: JSON true/false, elsewhere 1/0 */
  STAT_DOUBLE,                  /* double */
  STAT_STR,                     /* const char *; NULL: left out */
  STAT_TABLE,                   /* the fields sub[0..nsub), reading the
                                   snapshot at off */
  STAT_KV,                      /* struct stat_kvs: values named when the
                                   snapshot is made */
};

/* show: where a field appears, and when. */
#define STAT_J 0x01u            /* JSON */
#define STAT_F 0x02u            /* flat records */
#define STAT_P 0x04u            /* Prometheus */
#define STAT_JF (STAT_J | STAT_F)
#define STAT_JP (STAT_J | STAT_P)
#define STAT_ALL (STAT_J | STAT_F | STAT_P)
#define STAT_NONZERO 0x10u      /* JSON and flat leave it out while 0 */
#define STAT_F_SET 0x20u        /* flat shows it only beside a setting: a
                                   non-empty STAT_KV in its table */
#define STAT_P_PEERS 0x40u      /* Prometheus shows it for groups and
                                   exports only, not for the device (a
                                   share among peers) */

struct stat_field {
  const char *name;             /* JSON's key; NULL: an inline table */
  const char *flat;             /* flat's key, when not name */
  const char *prom;             /* Prometheus's, when not name (see above;
                                   in a labelled table the label's value,
                                   or a suffix such as "_sum" when it
                                   starts with '_') */
  const char *unit;             /* of the value JSON and flat show: "ns",
                                   "ms", "requests", "bytes/s", "ratio" */
  enum stat_type type;
  enum stat_repr repr;
  size_t off;                   /* bytes: where in the snapshot */
  unsigned show;                /* STAT_J | STAT_F | STAT_P, and when */
  double div;                   /* JSON and flat show value / div (0: 1);
                                   of an integer, the whole quotient when
                                   dec is 0, else rounded to dec places */
  unsigned dec;                 /* decimal places JSON and flat show */
  double fdiv;                  /* flat's div, when not div (0: div) */
  double pdiv;                  /* Prometheus shows value / pdiv (0: 1):
                                   seconds, bytes, fractions */
  const struct stat_field *sub; /* STAT_TABLE: its fields */
  size_t nsub;
  const unsigned char *forder;  /* STAT_TABLE: flat's order of its
                                   fields (nsub indices of sub), when not
                                   sub's; NULL: sub's */
  const char *label;            /* a table or STAT_KV that is one
                                   Prometheus family: its label's name */
  const char *help;             /* a sentence: Prometheus's HELP (of the
                                   family, for a labelled table or a
                                   string); for an inline table, words
                                   added to each of its fields' help */
};

/* STAT_KV: up to STAT_KV_MAX values, named as the snapshot is made (the
 * keys of a table kept elsewhere: qos.h's, cost.h's).
 */
#define STAT_KV_MAX 32
struct stat_kv {
  const char *name;             /* static */
  uint64_t val;                 /* in the unit the name implies */
};
struct stat_kvs {
  size_t n;                     /* used of kv[] */
  struct stat_kv kv[STAT_KV_MAX];
};

/* The fields of a table: a STAT_TABLE field's .sub and .nsub. */
#define STAT_SUB(fields) \
  .repr = STAT_TABLE, .sub = (fields), \
  .nsub = sizeof (fields) / sizeof (fields)[0]

/* The flat records' order of a table's fields, when not the table's:
 * .forder = STAT_FORDER (IDX_A, IDX_B, ...), every index once.
 */
#define STAT_FORDER(...) ((const unsigned char[]) { __VA_ARGS__ })

/* Hand out one table (a STAT_TABLE field) and the snapshot it reads. */
typedef void stat_emit_fn (void *opaque, const struct stat_field *table,
                           const void *snap);

#endif /* CFQ_STATFIELD_H */
