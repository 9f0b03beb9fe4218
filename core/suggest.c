/* suggest.c: the valid name nearest to a mistyped one (include/suggest.h).
 *
 * The distance is the optimal string alignment distance: Levenshtein's
 * insertions, deletions and substitutions plus the swap of two neighbours
 * ("wieght" is 1 from "weight"), each costing 1, computed with three rows
 * of a dynamic programme on the stack.  Names are short (keys of the config
 * file and the control socket), so the quadratic cost does not matter.
 */
#include <stdio.h>
#include <string.h>

#include "suggest.h"

static unsigned
min3 (unsigned a, unsigned b, unsigned c)
{
  unsigned m = a < b ? a : b;

  return m < c ? m : c;
}

unsigned
suggest_distance (const char *a, const char *b)
{
  size_t la = strlen (a), lb = strlen (b);
  unsigned rows[3][SUGGEST_WORD + 1];
  unsigned *pp, *p, *c;

  if (la > SUGGEST_WORD || lb > SUGGEST_WORD)
    return (unsigned) (la + lb);
  pp = rows[0];
  p = rows[1];
  c = rows[2];
  for (size_t j = 0; j <= lb; j++)
    p[j] = (unsigned) j;
  for (size_t i = 1; i <= la; i++) {
    unsigned *t;

    c[0] = (unsigned) i;
    for (size_t j = 1; j <= lb; j++) {
      unsigned cost = a[i - 1] != b[j - 1];

      c[j] = min3 (p[j] + 1, c[j - 1] + 1, p[j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]
          && pp[j - 2] + 1 < c[j])
        c[j] = pp[j - 2] + 1;
    }
    t = pp;
    pp = p;
    p = c;
    c = t;
  }
  return p[lb];
}

void
suggest_init (struct suggest *s, const char *word)
{
  memset (s, 0, sizeof *s);
  s->word = word;
}

void
suggest_add (struct suggest *s, const char *name)
{
  unsigned d;

  if (s->nr < SUGGEST_LIST)
    s->all[s->nr] = name;
  s->nr++;
  if (strcmp (name, s->word) == 0)
    return;                     /* the word itself is no suggestion */
  d = suggest_distance (s->word, name);
  if (!s->best || d < s->dist) {
    s->best = name;
    s->dist = d;
  }
}

void
suggest_add_all (struct suggest *s, const char *const *names)
{
  for (; *names; names++)
    suggest_add (s, *names);
}

const char *
suggest_best (const struct suggest *s)
{
  size_t len = strlen (s->word);

  if (!s->best || len > SUGGEST_WORD || s->dist > 2
      || s->dist * 3 > len + 2)
    return NULL;
  return s->best;
}

const char *
suggest_hint (const struct suggest *s, char *buf, size_t len)
{
  const char *best = suggest_best (s);
  size_t n;

  if (len == 0)
    return buf;
  buf[0] = '\0';
  if (best) {
    snprintf (buf, len, " (did you mean '%s'?)", best);
    return buf;
  }
  if (s->nr == 0 || s->nr > SUGGEST_LIST)
    return buf;
  n = (size_t) snprintf (buf, len, " (want ");
  for (size_t i = 0; i < s->nr && n < len; i++)
    n += (size_t) snprintf (buf + n, len - n, "%s%s", i == 0 ? ""
                            : i + 1 < s->nr ? ", " : " or ", s->all[i]);
  if (n < len)
    snprintf (buf + n, len - n, ")");
  return buf;
}
