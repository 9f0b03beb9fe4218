/* suggest.h: "did you mean": the valid name nearest to a mistyped one.
 *
 * Every place that refuses an unknown key (the config file, the plugin's
 * and cfqsim's KEY=VALUE, the control socket's set, get and qos) feeds the
 * names it accepts into one struct suggest and appends its hint:
 *
 *   struct suggest s;
 *   suggest_init (&s, key);
 *   suggest_add_all (&s, names);           // or suggest_add, any number
 *   ... "unknown key '%s'%s", key, suggest_hint (&s, buf, sizeof buf)
 *
 * The hint is " (did you mean 'weight'?)" for the nearest name by edit
 * distance (insertions, deletions, substitutions and swaps of two
 * neighbours each count 1) when it is near enough: at most 2 edits, and at
 * most one per three letters of the word.  Otherwise, when there were at
 * most SUGGEST_LIST names, it lists them all: " (want weight, class or
 * prio)"; else it is "".  Ties go to the name added first.
 *
 * Threading: a struct suggest belongs to its caller; no allocation.
 */
#ifndef CFQ_SUGGEST_H
#define CFQ_SUGGEST_H

#include <stddef.h>

#define SUGGEST_LIST 12         /* names: at most this many are listed */
#define SUGGEST_WORD 64         /* bytes: longer words get no suggestion */

struct suggest {
  const char *word;             /* what was typed */
  const char *best;             /* nearest name so far, or NULL */
  unsigned dist;                /* edits from word to best */
  const char *all[SUGGEST_LIST];  /* the first names added, for the list */
  size_t nr;                    /* names added, all of them */
};

extern void suggest_init (struct suggest *s, const char *word);
extern void suggest_add (struct suggest *s, const char *name);
/* NAMES: NULL-terminated. */
extern void suggest_add_all (struct suggest *s, const char *const *names);

/* The nearest name if near enough, else NULL. */
extern const char *suggest_best (const struct suggest *s);

/* " (did you mean 'NAME'?)", " (want A, B or C)" or "", in BUF. */
extern const char *suggest_hint (const struct suggest *s, char *buf,
                                 size_t len);

/* Edits from A to B (optimal string alignment distance); a word longer
 * than SUGGEST_WORD is as far as its length plus the other's.
 */
extern unsigned suggest_distance (const char *a, const char *b);

#endif
