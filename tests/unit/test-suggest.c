/* test-suggest.c: the edit distance behind "did you mean", which names
 * are near enough to suggest, and the hint's three forms.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "suggest.h"

static const char *const group[] = { "weight", "class", "prio", NULL };

int
main (void)
{
  struct suggest s;
  char b[128], longw[SUGGEST_WORD + 8];

  /* Distance: insert, delete, substitute, swap neighbours, nothing. */
  CHECK_EQ (suggest_distance ("weight", "weight"), 0);
  CHECK_EQ (suggest_distance ("wieght", "weight"), 1);
  CHECK_EQ (suggest_distance ("controll", "control"), 1);
  CHECK_EQ (suggest_distance ("slice_idel", "slice_idle"), 1);
  CHECK_EQ (suggest_distance ("iopsmax", "iops_max"), 1);
  CHECK_EQ (suggest_distance ("quantun", "quantum"), 1);
  CHECK_EQ (suggest_distance ("", "prio"), 4);
  CHECK_EQ (suggest_distance ("kitten", "sitting"), 3);
  CHECK_EQ (suggest_distance ("ca", "abc"), 3);   /* OSA, not Damerau */
  memset (longw, 'a', sizeof longw - 1);
  longw[sizeof longw - 1] = '\0';
  CHECK_EQ (suggest_distance (longw, "a"), sizeof longw);

  /* The nearest, the first of equals, nothing when far. */
  suggest_init (&s, "wieght");
  suggest_add_all (&s, group);
  CHECK_STREQ (suggest_best (&s), "weight");
  CHECK_STREQ (suggest_hint (&s, b, sizeof b), " (did you mean 'weight'?)");
  suggest_init (&s, "clas");
  suggest_add (&s, "class");
  suggest_add (&s, "clasp");
  CHECK_STREQ (suggest_best (&s), "class");
  suggest_init (&s, "rw");
  suggest_add (&s, "bs");
  CHECK_NULL (suggest_best (&s));          /* 1 edit in 2 letters: too far */
  suggest_init (&s, "colour");
  suggest_add_all (&s, group);
  CHECK_NULL (suggest_best (&s));
  CHECK_STREQ (suggest_hint (&s, b, sizeof b), " (want weight, class or prio)");
  suggest_init (&s, "weight");             /* a known word suggests nothing */
  suggest_add (&s, "weight");
  CHECK_NULL (suggest_best (&s));

  /* Too many names to list: nothing. */
  suggest_init (&s, "zzzzzz");
  for (int i = 0; i <= SUGGEST_LIST; i++)
    suggest_add (&s, "weight");
  CHECK_STREQ (suggest_hint (&s, b, sizeof b), "");
  /* A short buffer is cut, still a string. */
  suggest_init (&s, "colour");
  suggest_add_all (&s, group);
  CHECK_EQ (strlen (suggest_hint (&s, b, 10)), 9);
  CHECK_STREQ (suggest_hint (&s, b, 1), "");

  check_done ("test-suggest");
  return 0;
}
