/* strbuf.c: a growable string (see strbuf.h).  It doubles as it grows,
 * from 256 bytes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"

/* Room for n more bytes and the NUL: 0, or -1 (oom set). */
static int
reserve (struct strbuf *b, size_t n)
{
  size_t cap = b->cap ? b->cap : 256;
  char *s;

  if (b->s && b->len + n + 1 <= b->cap)
    return 0;
  while (cap < b->len + n + 1)
    cap *= 2;
  s = realloc (b->s, cap);
  if (!s) {
    b->oom = 1;
    return -1;
  }
  b->s = s;
  b->cap = cap;
  return 0;
}

void
strbuf_vprintf (struct strbuf *b, const char *fmt, va_list ap)
{
  va_list ap2;
  int n;

  if (b->oom)
    return;
  va_copy (ap2, ap);
  n = vsnprintf (b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0,
                 fmt, ap2);
  va_end (ap2);
  if (n < 0)
    return;
  if (!b->s || b->len + n + 1 > b->cap) {
    if (reserve (b, (size_t) n) == -1)
      return;
    vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
  }
  b->len += n;
}

void
strbuf_printf (struct strbuf *b, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  strbuf_vprintf (b, fmt, ap);
  va_end (ap);
}

void
strbuf_add (struct strbuf *b, const char *s, size_t n)
{
  if (b->oom || reserve (b, n) == -1)
    return;
  memcpy (b->s + b->len, s, n);
  b->len += n;
  b->s[b->len] = '\0';
}

void
strbuf_free (struct strbuf *b)
{
  free (b->s);
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}
