/* utf8.c: UTF-8 validation and escaping (see include/utf8.h). */
#include <stdio.h>
#include <string.h>

#include "utf8.h"

size_t
utf8_decode (const char *s, size_t n, uint32_t *cp)
{
  const unsigned char *u = (const unsigned char *) s;
  uint32_t c, min;
  size_t len;

  if (n == 0)
    return 0;
  c = u[0];
  if (c < 0x80) {
    *cp = c;
    return 1;
  }
  if (c >= 0xc2 && c <= 0xdf)
    len = 2, min = 0x80, c &= 0x1f;
  else if (c >= 0xe0 && c <= 0xef)
    len = 3, min = 0x800, c &= 0x0f;
  else if (c >= 0xf0 && c <= 0xf4)
    len = 4, min = 0x10000, c &= 0x07;
  else
    return 0;                   /* continuation byte, C0/C1 overlong, F5+ */
  if (n < len)
    return 0;
  for (size_t i = 1; i < len; i++) {
    if ((u[i] & 0xc0) != 0x80)
      return 0;
    c = c << 6 | (u[i] & 0x3f);
  }
  if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
    return 0;
  *cp = c;
  return len;
}

size_t
utf8_check (const char *s, size_t n, bool no_controls)
{
  size_t i = 0;

  while (i < n) {
    uint32_t cp;
    size_t len = utf8_decode (s + i, n - i, &cp);

    if (len == 0 || (no_controls && utf8_is_control (cp)))
      return i;
    i += len;
  }
  return n;
}

/* The escaped form of the character at s[i] (n bytes in all): into
 * piece, its length returned; *cl: the bytes of s it stands for.
 */
static size_t
escape_one (const char *s, size_t i, size_t n, char *piece, size_t *cl)
{
  uint32_t cp;

  *cl = utf8_decode (s + i, n - i, &cp);
  if (*cl && !utf8_is_control (cp) && cp != '\\') {
    memcpy (piece, s + i, *cl);
    return *cl;
  }
  if (*cl == 1 && cp == '\\') {
    memcpy (piece, "\\\\", 2);
    return 2;
  }
  snprintf (piece, 8, "\\x%02x", (unsigned char) s[i]);
  *cl = 1;                      /* one byte at a time */
  return 4;
}

char *
utf8_escape (const char *s, char *out, size_t len)
{
  size_t o = 0, n = strlen (s), total = 0, cl;
  char piece[8];

  for (size_t i = 0; i < n; i += cl)
    total += escape_one (s, i, n, piece, &cl);
  for (size_t i = 0; i < n; i += cl) {
    size_t pl = escape_one (s, i, n, piece, &cl);

    /* If it does not all fit, keep room for "..." after this piece. */
    if (o + pl + (total < len ? 0 : 3) > len - 1) {
      memcpy (out + o, "...", 3);
      o += 3;
      break;
    }
    memcpy (out + o, piece, pl);
    o += pl;
  }
  out[o] = '\0';
  return out;
}
