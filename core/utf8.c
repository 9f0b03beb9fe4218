/* utf8.c: UTF-8 validation (see include/utf8.h). */
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
