/* utf8.h: the one UTF-8 decoder of the tree, for checking names and for
 * escaping text that came from outside (export names in the config, in
 * JSON answers, in log lines).
 *
 * Valid means RFC 3629: the shortest form, no UTF-16 surrogates, nothing
 * above U+10FFFF.  Pure functions, no allocation.
 */
#ifndef CFQ_UTF8_H
#define CFQ_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The length (1..4) of the valid UTF-8 sequence at s[0..n), and its code
 * point in *cp; 0 if s does not start with one (or n is 0).
 */
extern size_t utf8_decode (const char *s, size_t n, uint32_t *cp);

/* Is cp a control character: C0 (below U+0020), DEL or C1 (U+0080 to
 * U+009F)?  None of them belongs in a name.
 */
static inline bool
utf8_is_control (uint32_t cp)
{
  return cp < 0x20 || (cp >= 0x7f && cp <= 0x9f);
}

/* Where the first byte of s[0..n) that is not part of valid UTF-8 (or
 * that starts a control character, if no_controls) is: its offset, or n
 * if there is none.
 */
extern size_t utf8_check (const char *s, size_t n, bool no_controls);

/* s (NUL-terminated, from anyone) as printable text on one line, for a
 * log message: valid UTF-8 other than control characters is kept, a
 * backslash is doubled, and every other byte (controls, newlines, bytes
 * that are not UTF-8) is written \xHH, so no name can forge a log line.
 * At most len - 1 bytes (len >= 8) and a NUL go to out; a longer result
 * is cut at a character boundary and ends "...".  Returns out.
 */
extern char *utf8_escape (const char *s, char *out, size_t len);

#endif /* CFQ_UTF8_H */
