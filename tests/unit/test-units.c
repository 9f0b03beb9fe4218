/* test-units.c: the one grammar of times, sizes and rates (core/units.c):
 * exact integer parsing (no value is ever rounded), the bare-number unit
 * each caller names, overflow, and formatting that parses back to the same
 * value.  The device model and CFQ's tunables read their values through
 * it: checked here too, so that a grammar change shows up at both.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "cfq.h"
#include "check.h"
#include "devmodel.h"
#include "sched.h"
#include "units.h"

#define G (1ULL << 30)
#define M (1ULL << 20)

/* TEXT parses as a time (bare unit BARE) to WANT. */
#define TIME_OK(text, bare, want)                                       \
  do {                                                                  \
    uint64_t v_ = 12345;                                                \
    CHECK_EQ (units_parse_time (text, bare, &v_), 0);                   \
    CHECK_EQ (v_, (uint64_t) (want));                                   \
  } while (0)
#define TIME_BAD(text, bare, err)                                       \
  do {                                                                  \
    uint64_t v_ = 12345;                                                \
    CHECK_EQ (units_parse_time (text, bare, &v_), err);                 \
    CHECK_EQ (v_, 12345);                                               \
  } while (0)
#define SIZE_OK(text, want)                                             \
  do {                                                                  \
    uint64_t v_ = 12345;                                                \
    CHECK_EQ (units_parse_size (text, &v_), 0);                         \
    CHECK_EQ (v_, (uint64_t) (want));                                   \
  } while (0)
#define SIZE_BAD(text, err) \
  do { uint64_t v_; CHECK_EQ (units_parse_size (text, &v_), err); } while (0)
#define RATE_OK(text, want)                                             \
  do {                                                                  \
    uint64_t v_ = 12345;                                                \
    CHECK_EQ (units_parse_rate (text, &v_), 0);                         \
    CHECK_EQ (v_, (uint64_t) (want));                                   \
  } while (0)
#define RATE_BAD(text, err) \
  do { uint64_t v_; CHECK_EQ (units_parse_rate (text, &v_), err); } while (0)

static void
test_time (void)
{
  char buf[96];

  /* The config's tunables: a bare number is ms. */
  TIME_OK ("0", NSEC_PER_MSEC, 0);
  TIME_OK ("8", NSEC_PER_MSEC, 8 * NSEC_PER_MSEC);
  TIME_OK ("8ms", NSEC_PER_MSEC, 8 * NSEC_PER_MSEC);
  TIME_OK ("250us", NSEC_PER_MSEC, 250 * NSEC_PER_USEC);
  TIME_OK ("17ns", NSEC_PER_MSEC, 17);
  TIME_OK ("2s", NSEC_PER_MSEC, 2 * NSEC_PER_SEC);
  TIME_OK ("1.5", NSEC_PER_MSEC, 1500 * NSEC_PER_USEC);
  TIME_OK ("0.25s", NSEC_PER_MSEC, 250 * NSEC_PER_MSEC);
  /* Exact: 1.5s is 1500000000 ns, not a double's neighbour of it. */
  TIME_OK ("1.5s", NSEC_PER_MSEC, 1500000000);
  TIME_OK ("0.1s", 0, 100000000);
  TIME_OK ("1.000000001s", NSEC_PER_MSEC, NSEC_PER_SEC + 1);
  TIME_OK ("1.0000000010s", NSEC_PER_MSEC, NSEC_PER_SEC + 1);
  TIME_BAD ("1.0000000001s", NSEC_PER_MSEC, -EINVAL);
  TIME_OK ("1.5us", NSEC_PER_MSEC, 1500);
  TIME_BAD ("1.5ns", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("1.", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD (".5", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("-1", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("+1", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("8MS", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("8m", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("8 ms", NSEC_PER_MSEC, -EINVAL);
  TIME_BAD ("1e3ms", NSEC_PER_MSEC, -EINVAL);
  TIME_OK ("18446744073709551615ns", NSEC_PER_MSEC, UINT64_MAX);
  TIME_BAD ("18446744073709551616ns", NSEC_PER_MSEC, -ERANGE);
  TIME_BAD ("18446744074s", NSEC_PER_MSEC, -ERANGE);
  TIME_BAD ("18446744073.709551616s", 0, -ERANGE);
  TIME_OK ("18446744073.709551615s", 0, UINT64_MAX);

  /* The device model's parameters: a bare number is ns. */
  TIME_OK ("80000", 1, 80000);
  TIME_OK ("80us", 1, 80000);
  TIME_BAD ("0.5", 1, -EINVAL);
  /* Seconds. */
  TIME_OK ("2", NSEC_PER_SEC, 2 * NSEC_PER_SEC);
  /* No bare unit: a unit is required, but 0 is 0 in any unit. */
  TIME_BAD ("5", 0, -EINVAL);
  TIME_BAD ("0.5", 0, -EINVAL);
  TIME_OK ("0", 0, 0);
  TIME_OK ("5ms", 0, 5 * NSEC_PER_MSEC);

  CHECK_STREQ (units_expect_time (NSEC_PER_MSEC, buf, sizeof buf),
               "a number with ns, us, ms or s; a bare number is ms");
  CHECK_STREQ (units_expect_time (1, buf, sizeof buf),
               "a number with ns, us, ms or s; a bare number is ns");
  CHECK_STREQ (units_expect_time (0, buf, sizeof buf),
               "a number with ns, us, ms or s");

  CHECK_STREQ (units_format_time (0, buf, sizeof buf), "0ns");
  CHECK_STREQ (units_format_time (8 * NSEC_PER_MSEC, buf, sizeof buf), "8ms");
  CHECK_STREQ (units_format_time (1500 * NSEC_PER_USEC, buf, sizeof buf),
               "1500us");
  CHECK_STREQ (units_format_time (3 * NSEC_PER_SEC, buf, sizeof buf), "3s");
  CHECK_STREQ (units_format_time (7, buf, sizeof buf), "7ns");
}

static void
test_size (void)
{
  char buf[32];

  SIZE_OK ("0", 0);
  SIZE_OK ("4096", 4096);
  SIZE_OK ("1b", 1);
  SIZE_OK ("1B", 1);
  SIZE_OK ("4k", 4096);
  SIZE_OK ("4K", 4096);
  SIZE_OK ("64k", 65536);
  SIZE_OK ("3m", 3 * M);
  SIZE_OK ("2G", 2 * G);
  SIZE_OK ("1t", 1ULL << 40);
  SIZE_OK ("1P", 1ULL << 50);
  SIZE_OK ("15e", 15ULL << 60);
  SIZE_BAD ("16E", -ERANGE);
  SIZE_BAD ("18446744073709551616", -ERANGE);
  /* nbdkit_parse_size's grammar (nbdkit 1.32): no "KiB", no fraction. */
  SIZE_BAD ("1KiB", -EINVAL);
  SIZE_BAD ("1GiB", -EINVAL);
  SIZE_BAD ("1.5M", -EINVAL);
  SIZE_BAD ("0x10", -EINVAL);
  SIZE_BAD ("M", -EINVAL);
  SIZE_BAD ("4x", -EINVAL);
  SIZE_BAD ("", -EINVAL);
  SIZE_BAD ("-4k", -EINVAL);

  CHECK_STREQ (units_format_size (0, buf, sizeof buf), "0");
  CHECK_STREQ (units_format_size (4097, buf, sizeof buf), "4097");
  CHECK_STREQ (units_format_size (4096, buf, sizeof buf), "4K");
  CHECK_STREQ (units_format_size (1536 * M, buf, sizeof buf), "1536M");
  CHECK_STREQ (units_format_size (1ULL << 62, buf, sizeof buf), "4E");
}

static void
test_rate (void)
{
  char buf[32];

  /* Powers of 1000, as the device models took them before, with or
   * without "B/s".
   */
  RATE_OK ("150M", 150000000);
  RATE_OK ("150MB/s", 150000000);
  RATE_OK ("150m", 150000000);
  RATE_OK ("150M/s", 150000000);
  RATE_OK ("2000000", 2000000);
  RATE_OK ("2000000B/s", 2000000);
  RATE_OK ("1.5G", 1500000000);
  RATE_OK ("1.5GB/s", 1500000000);
  RATE_OK ("2k", 2000);
  RATE_OK ("1p", 1000000000000000ULL);
  /* Powers of 1024 when written so. */
  RATE_OK ("4MiB/s", 4 * M);
  RATE_OK ("4Mi", 4 * M);
  RATE_OK ("1.5Ki", 1536);
  /* Exact or refused. */
  RATE_BAD ("0.5", -EINVAL);
  RATE_BAD ("1.0001k", -EINVAL);
  RATE_BAD ("150X", -EINVAL);
  RATE_BAD ("150 M", -EINVAL);
  RATE_BAD ("M", -EINVAL);
  RATE_BAD ("", -EINVAL);
  RATE_BAD ("150MB/h", -EINVAL);
  RATE_BAD ("20000P", -ERANGE);

  CHECK_STREQ (units_format_rate (150000000, buf, sizeof buf), "150M");
  CHECK_STREQ (units_format_rate (2000000000, buf, sizeof buf), "2G");
  CHECK_STREQ (units_format_rate (4 * M, buf, sizeof buf), "4Mi");
  CHECK_STREQ (units_format_rate (2048, buf, sizeof buf), "2Ki");
  CHECK_STREQ (units_format_rate (1234, buf, sizeof buf), "1234");
  CHECK_STREQ (units_format_rate (0, buf, sizeof buf), "0");
}

static void
test_count_bool (void)
{
  uint64_t v;
  bool b;

  CHECK_EQ (units_parse_count ("0", &v), 0);
  CHECK_EQ (v, 0);
  CHECK_EQ (units_parse_count ("4096", &v), 0);
  CHECK_EQ (v, 4096);
  CHECK_EQ (units_parse_count ("18446744073709551615", &v), 0);
  CHECK_EQ (v, UINT64_MAX);
  CHECK_EQ (units_parse_count ("18446744073709551616", &v), -ERANGE);
  CHECK_EQ (units_parse_count ("4k", &v), -EINVAL);
  CHECK_EQ (units_parse_count ("5e2", &v), -EINVAL);
  CHECK_EQ (units_parse_count ("", &v), -EINVAL);
  CHECK_EQ (units_parse_count ("-1", &v), -EINVAL);

  CHECK_EQ (units_parse_bool ("1", &b), 0);
  CHECK (b);
  CHECK_EQ (units_parse_bool ("Yes", &b), 0);
  CHECK (b);
  CHECK_EQ (units_parse_bool ("on", &b), 0);
  CHECK (b);
  CHECK_EQ (units_parse_bool ("TRUE", &b), 0);
  CHECK (b);
  CHECK_EQ (units_parse_bool ("0", &b), 0);
  CHECK (!b);
  CHECK_EQ (units_parse_bool ("off", &b), 0);
  CHECK (!b);
  CHECK_EQ (units_parse_bool ("No", &b), 0);
  CHECK (!b);
  CHECK_EQ (units_parse_bool ("2", &b), -EINVAL);
  CHECK_EQ (units_parse_bool ("", &b), -EINVAL);
}

/* Formatting then parsing gives the value back, for every kind. */
static void
test_round_trip (void)
{
  char buf[64];
  uint64_t v;

  for (uint64_t x = 1; x < (1ULL << 63); x = x * 3 + 1) {
    CHECK_EQ (units_parse_time (units_format_time (x, buf, sizeof buf), 0,
                                &v), 0);
    CHECK_EQ (v, x);
    CHECK_EQ (units_parse_size (units_format_size (x, buf, sizeof buf), &v),
              0);
    CHECK_EQ (v, x);
    CHECK_EQ (units_parse_rate (units_format_rate (x, buf, sizeof buf), &v),
              0);
    CHECK_EQ (v, x);
  }
  for (unsigned sh = 0; sh < 63; sh++) {
    uint64_t x = 1ULL << sh;
    CHECK_EQ (units_parse_rate (units_format_rate (x, buf, sizeof buf), &v),
              0);
    CHECK_EQ (v, x);
    CHECK_EQ (units_parse_size (units_format_size (x, buf, sizeof buf), &v),
              0);
    CHECK_EQ (v, x);
  }
}

/* The device model takes its parameters in this grammar. */
static void
test_devmodel_values (void)
{
  struct devmodel *dm = devmodel_new ("hdd", NULL);
  char buf[512];

  CHECK_NOTNULL (dm);
  CHECK_EQ (devmodel_set (dm, "seek_max", "1.5ms"), 0);
  CHECK_EQ (devmodel_set (dm, "seek_min", "500000"), 0);   /* bare: ns */
  CHECK_EQ (devmodel_set (dm, "rate", "1.5GB/s"), 0);
  CHECK_EQ (devmodel_set (dm, "capacity", "2T"), 0);
  CHECK_EQ (devmodel_capacity (dm), 2ULL << 40);
  CHECK_EQ (devmodel_set (dm, "capacity", "1GiB"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "seek_max", "0.5ns"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "rate", "0.5"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "seed", "0x10"), -EINVAL);
  CHECK_EQ (devmodel_set (dm, "seed", "18446744073709551616"), -ERANGE);
  devmodel_describe (dm, buf, sizeof buf);
  CHECK (strstr (buf, " seek_max=1500us") != NULL);
  CHECK (strstr (buf, " seek_min=500us") != NULL);
  CHECK (strstr (buf, " rate=1500M") != NULL);
  CHECK (strstr (buf, " capacity=2T") != NULL);
  devmodel_free (dm);
}

int
main (void)
{
  test_time ();
  test_size ();
  test_rate ();
  test_count_bool ();
  test_round_trip ();
  test_devmodel_values ();
  check_done ("test-units");
  return 0;
}
