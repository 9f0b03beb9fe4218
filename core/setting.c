/* setting.c: server-wide settings from their table (see setting.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched.h"
#include "setting.h"
#include "units.h"

int
setting_lookup (const struct setting *tab, int nr, const char *name)
{
  for (int k = 0; k < nr; k++)
    if (strcmp (tab[k].name, name) == 0)
      return k;
  return -1;
}

int
setting_set (const struct setting *tab, int k, char **text, uint64_t *ns,
             const char *value, char *why, size_t len)
{
  const struct setting *s = &tab[k];
  char a[32], b[32];
  uint64_t v;

  if (s->unit == SETTING_TIME) {
    if (units_parse_time (value, s->bare, &v) < 0 || v < s->min
        || v > s->max) {
      snprintf (why, len, "want a time from %s to %s%s",
                units_format_time (s->min, a, sizeof a),
                units_format_time (s->max, b, sizeof b),
                s->bare == NSEC_PER_SEC ? " (a bare number is seconds)" : "");
      return -EINVAL;
    }
    ns[k] = v;
    return 0;
  }
  if (!*value) {
    snprintf (why, len, "empty");
    return -EINVAL;
  }
  free (text[k]);
  text[k] = strdup (value);
  return text[k] ? 0 : -ENOMEM;
}

int
setting_defaults (const struct setting *tab, int nr, char **text,
                  uint64_t *ns, char *why, size_t len)
{
  for (int k = 0; k < nr; k++) {
    int err;

    if (!tab[k].def || (tab[k].unit == SETTING_TEXT ? text[k] != NULL
                        : ns[k] != 0))
      continue;
    err = setting_set (tab, k, text, ns, tab[k].def, why, len);
    if (err)
      return err;
  }
  return 0;
}

void
setting_free (char **text, int nr)
{
  for (int k = 0; k < nr; k++) {
    free (text[k]);
    text[k] = NULL;
  }
}
