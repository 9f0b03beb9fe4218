/* test-utf8.c: the one UTF-8 decoder accepts exactly RFC 3629, and the
 * log escaper leaves no control character, newline or stray byte, cuts
 * at character boundaries, and keeps valid text as it is.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "utf8.h"

static size_t
dec (const char *s, uint32_t *cp)
{
  return utf8_decode (s, strlen (s), cp);
}

int
main (void)
{
  uint32_t cp = 0;
  char b[64];

  /* Valid: ASCII, 2, 3 and 4 bytes, the limits. */
  CHECK_EQ (dec ("A", &cp), 1);
  CHECK_EQ (cp, 'A');
  CHECK_EQ (dec ("\xc3\xa9", &cp), 2);
  CHECK_EQ (cp, 0xe9);
  CHECK_EQ (dec ("\xe2\x82\xac", &cp), 3);
  CHECK_EQ (cp, 0x20ac);
  CHECK_EQ (dec ("\xf0\x9d\x84\x9e", &cp), 4);
  CHECK_EQ (cp, 0x1d11e);
  CHECK_EQ (dec ("\xf4\x8f\xbf\xbf", &cp), 4);
  CHECK_EQ (cp, 0x10ffff);
  CHECK_EQ (dec ("\xef\xbf\xbf", &cp), 3);
  /* Invalid: continuation first, overlongs, surrogates, past U+10FFFF,
   * cut short, a bad continuation, F5..FF, C0/C1.
   */
  CHECK_EQ (dec ("\x80", &cp), 0);
  CHECK_EQ (dec ("\xc0\xaf", &cp), 0);
  CHECK_EQ (dec ("\xc1\xbf", &cp), 0);
  CHECK_EQ (dec ("\xe0\x80\xaf", &cp), 0);
  CHECK_EQ (dec ("\xf0\x80\x80\xaf", &cp), 0);
  CHECK_EQ (dec ("\xed\xa0\x80", &cp), 0);
  CHECK_EQ (dec ("\xed\xbf\xbf", &cp), 0);
  CHECK_EQ (dec ("\xf4\x90\x80\x80", &cp), 0);
  CHECK_EQ (dec ("\xe2\x82", &cp), 0);
  CHECK_EQ (dec ("\xe2\x28\xa1", &cp), 0);
  CHECK_EQ (dec ("\xf5\x80\x80\x80", &cp), 0);
  CHECK_EQ (dec ("\xff", &cp), 0);
  CHECK_EQ (utf8_decode ("", 0, &cp), 0);

  CHECK_EQ (utf8_check ("caf\xc3\xa9", 5, true), 5);
  CHECK_EQ (utf8_check ("a\tb", 3, true), 1);
  CHECK_EQ (utf8_check ("a\tb", 3, false), 3);
  CHECK_EQ (utf8_check ("ab\xc2\x85", 4, true), 2);
  CHECK_EQ (utf8_check ("ab\xc2\x85", 4, false), 4);
  CHECK_EQ (utf8_check ("ab\xff", 3, false), 2);
  CHECK (utf8_is_control (0x7f) && utf8_is_control (0x9f));
  CHECK (!utf8_is_control (0xa0) && !utf8_is_control (' '));

  /* Escaping for logs. */
  CHECK_STREQ (utf8_escape ("plain name", b, sizeof b), "plain name");
  CHECK_STREQ (utf8_escape ("caf\xc3\xa9 \xe2\x82\xac", b, sizeof b),
               "caf\xc3\xa9 \xe2\x82\xac");
  CHECK_STREQ (utf8_escape ("x\nnbdkit: error: FORGED", b, sizeof b),
               "x\\x0anbdkit: error: FORGED");
  CHECK_STREQ (utf8_escape ("a\rb\x1b[31m", b, sizeof b), "a\\x0db\\x1b[31m");
  CHECK_STREQ (utf8_escape ("bad\xff\xc3", b, sizeof b), "bad\\xff\\xc3");
  CHECK_STREQ (utf8_escape ("c1\xc2\x85", b, sizeof b), "c1\\xc2\\x85");
  CHECK_STREQ (utf8_escape ("back\\slash", b, sizeof b), "back\\\\slash");
  CHECK_STREQ (utf8_escape ("", b, sizeof b), "");
  /* Cut: at most len - 1 bytes, "..." at the end, never half a
   * character or half an escape.
   */
  CHECK_STREQ (utf8_escape ("0123456789abcdef", b, 12), "01234567...");
  CHECK_STREQ (utf8_escape ("0123456\xc3\xa9xyz", b, 12), "0123456...");
  CHECK_STREQ (utf8_escape ("012345\n789", b, 12), "012345...");
  CHECK_STREQ (utf8_escape ("01234567", b, 9), "01234567");
  CHECK_STREQ (utf8_escape ("012345678", b, 9), "01234...");
  for (unsigned len = 8; len < 40; len++) {
    utf8_escape ("\n\n\n\n\n\n\n\n\n\n\n\xe2\x82\xac\xe2\x82\xac", b, len);
    CHECK_LT (strlen (b), len);
    CHECK_EQ (utf8_check (b, strlen (b), true), strlen (b));
  }
  check_done ("test-utf8");
  return 0;
}
