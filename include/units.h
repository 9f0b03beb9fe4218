/* units.h: the one grammar for numbers with units (times, sizes, rates),
 * shared by the config file, the control socket, the simulator and the
 * device model parameters.
 *
 * Every value is parsed exactly, in integers: "1.5s" is 1500000000 ns, and a
 * value that is not a whole number of the base unit ("1.5ns", "0.5K" as a
 * rate of bytes) is refused, never rounded.
 *
 *   time   DIGITS[.DIGITS]UNIT, UNIT one of ns us ms s (lower case).  A bare
 *          number is in the unit the caller names (CFQ's tunables: ms, as
 *          in sysfs; the device model's parameters: ns), or refused when
 *          the caller names none (0 alone is always accepted).
 *   size   DIGITS[b|k|m|g|t|p|e], suffix case-insensitive, powers of 1024,
 *          exactly nbdkit_parse_size's grammar (no fraction, no "KiB").
 *   rate   bytes per second: DIGITS[.DIGITS][PREFIX][B][/s], PREFIX one of
 *          k m g t p (case-insensitive, powers of 1000, as disk datasheets
 *          write MB/s) or Ki Mi Gi Ti Pi (powers of 1024): "150M" and
 *          "150MB/s" are 150000000, "1.5G" is 1500000000, "4MiB/s" is
 *          4194304.
 *   count  DIGITS: a plain decimal number.
 *   bool   1 0 true false t f yes no y n on off, case-insensitive.
 *
 * Parsers return 0, -EINVAL (not of the grammar) or -ERANGE (does not fit
 * in 64 bits); they never set errno.  units_expect_* write what a value
 * should look like, for messages ("not a time (want ...)").  Formatters
 * write the shortest exact text that the parser reads back to the same
 * value, and return BUF.
 */
#ifndef CFQ_UNITS_H
#define CFQ_UNITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* BARE: ns per unit of a number written without a unit (NSEC_PER_MSEC,
 * 1 ...), or 0 if a unit is required.
 */
extern int units_parse_time (const char *s, uint64_t bare, uint64_t *ns);
extern int units_parse_size (const char *s, uint64_t *bytes);
extern int units_parse_rate (const char *s, uint64_t *bytes_per_sec);
extern int units_parse_count (const char *s, uint64_t *v);
extern int units_parse_bool (const char *s, bool *b);

/* "a number with ns, us, ms or s; a bare number is ms" and the like. */
extern const char *units_expect_time (uint64_t bare, char *buf, size_t len);
#define UNITS_EXPECT_SIZE \
  "a number with an optional b, k, m, g, t, p or e suffix (powers of 1024)"
#define UNITS_EXPECT_RATE \
  "bytes/s: a number with an optional k, m, g, t or p (powers of 1000)" \
  " or Ki, Mi, Gi, Ti, Pi (powers of 1024), then B/s"
#define UNITS_EXPECT_COUNT "a whole number"
#define UNITS_EXPECT_BOOL "0/1, yes/no, on/off"

/* "8ms", "1500us", "0ns"; "4K", "1536M", "4097"; "150M", "4194304". */
extern char *units_format_time (uint64_t ns, char *buf, size_t len);
extern char *units_format_size (uint64_t bytes, char *buf, size_t len);
extern char *units_format_rate (uint64_t bytes_per_sec, char *buf,
                                size_t len);

#endif /* CFQ_UNITS_H */
