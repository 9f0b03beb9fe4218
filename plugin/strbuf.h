/* strbuf.h: a growable string, for text built piece by piece (control
 * answers, statistics).
 *
 * Appending never fails loudly: when memory runs out the buffer keeps
 * what it had, sets oom and ignores every later append, so a writer
 * checks once, at the end.
 *
 * Threads: a strbuf belongs to whoever made it; nothing here locks.
 */
#ifndef CFQ_STRBUF_H
#define CFQ_STRBUF_H

#include <stdarg.h>
#include <stddef.h>

struct strbuf {
  char *s;                      /* NUL-terminated, malloc'd, may be NULL */
  size_t len;                   /* bytes used, not counting the NUL */
  size_t cap;                   /* bytes allocated */
  int oom;                      /* an append failed: the text is cut */
};

extern void strbuf_printf (struct strbuf *b, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
extern void strbuf_vprintf (struct strbuf *b, const char *fmt, va_list ap)
  __attribute__ ((format (printf, 2, 0)));
/* Append n bytes of s (no NUL among them). */
extern void strbuf_add (struct strbuf *b, const char *s, size_t n);
extern void strbuf_free (struct strbuf *b);

#endif /* CFQ_STRBUF_H */
