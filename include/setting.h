/* setting.h: server-wide settings given as plugin parameters, each
 * described once by its row in a table (gqos_keys[] in gqos.c,
 * rbd_keys[] in plugin/backend-rbd.c): name, unit, default, range, help.
 * The table is looked up, its values parsed, checked and defaulted here.
 *
 * A table's values are two arrays indexed like it: text[k] (malloc'd, or
 * NULL if not given) for SETTING_TEXT, ns[k] for SETTING_TIME (0 if not
 * given).
 *
 * Threading: none of its own; the caller's values, the caller's thread.
 */
#ifndef CFQ_SETTING_H
#define CFQ_SETTING_H

#include <stddef.h>
#include <stdint.h>

enum setting_unit {
  SETTING_TEXT,                 /* a string, not empty */
  SETTING_TIME,                 /* a duration, ns ("100ms", "2s") */
};

struct setting {
  const char *name;             /* the plugin parameter, "gqos_period" */
  enum setting_unit unit;
  const char *def;              /* default as text, or NULL: none */
  uint64_t bare;                /* SETTING_TIME: ns of a number written
                                   without a unit, 0: a unit is required */
  uint64_t min, max;            /* SETTING_TIME: accepted range, ns */
  const char *help;             /* one line */
};

/* The row of tab (nr rows) named name, or -1. */
extern int setting_lookup (const struct setting *tab, int nr,
                           const char *name);

/* Set row k of tab from value into text[k] or ns[k]: 0, -EINVAL (the
 * reason in why: "want a time from 1s to 3600s", "empty") or -ENOMEM.
 */
extern int setting_set (const struct setting *tab, int k, char **text,
                        uint64_t *ns, const char *value, char *why,
                        size_t len);

/* Every row with a default and no value given: set to its default. */
extern int setting_defaults (const struct setting *tab, int nr, char **text,
                             uint64_t *ns, char *why, size_t len);

/* Free text[0 .. nr - 1], made NULL. */
extern void setting_free (char **text, int nr);

#endif /* CFQ_SETTING_H */
