/* test-costfile.c: the saved calibration (include/costfile.h) reads back
 * what was written, and refuses what it cannot trust.
 *
 *  - format then parse gives the same model, device, date, time taken
 *    and calibrate mode, for a file and a block device;
 *  - the device identity: a different inode, size, device number or kind
 *    is another device;
 *  - refused with the line and the reason: a missing key, an unknown or
 *    repeated one, another version, a malformed device, date or time, a
 *    model with a key missing or a figure outside cost_params_check's
 *    bounds (-ERANGE), a NUL byte, an empty file; comments and blank
 *    lines are fine.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "costfile.h"

static struct cost_saved
sample (void)
{
  struct cost_saved s;

  memset (&s, 0, sizeof s);
  cost_params_default (&s.p, true);
  s.id.major = 254;
  s.id.minor = 1;
  s.id.ino = 1234567;
  s.id.size = 4ull << 30;
  s.date = 1735787045;          /* 2025-01-02T03:04:05Z */
  s.took = 4612000000ull;
  s.writes = false;
  return s;
}

static void
test_round_trip (void)
{
  struct cost_saved s = sample (), r;
  char buf[2048], why[256];

  cost_file_format (&s, buf, sizeof buf);
  CHECK (strstr (buf, "device = file 254:1 inode 1234567 size 4294967296\n"));
  CHECK (strstr (buf, "date = 2025-01-02T03:04:05Z\n"));
  CHECK (strstr (buf, "took = 4612ms\n"));
  CHECK (strstr (buf, "calibrate = read\n"));
  CHECK_EQ (cost_file_parse (buf, strlen (buf), &r, why, sizeof why), 0);
  CHECK_STREQ (why, "");
  CHECK (memcmp (&r.p, &s.p, sizeof s.p) == 0);
  CHECK (cost_ident_same (&r.id, &s.id));
  CHECK_EQ (r.date, s.date);
  CHECK_EQ (r.took, s.took);
  CHECK (!r.writes);

  /* A block device, writes measured, odd figures. */
  s.id.blockdev = true;
  s.id.ino = 0;
  s.id.major = 8;
  s.id.minor = 16;
  s.writes = true;
  s.p.randiops[COST_WRITE] = 12345;
  s.p.bps[COST_READ] = 987654321;
  s.p.depth = 32;
  cost_file_format (&s, buf, sizeof buf);
  CHECK (strstr (buf, "device = block 8:16 size 4294967296\n"));
  CHECK_EQ (cost_file_parse (buf, strlen (buf), &r, why, sizeof why), 0);
  CHECK (memcmp (&r.p, &s.p, sizeof s.p) == 0);
  CHECK (cost_ident_same (&r.id, &s.id));
  CHECK (r.writes);

  /* The text ends without a newline, has comments and indentation. */
  {
    const char *t = "# hand-written\n\n  version = 1\ndevice=block 8:0 size 1\n"
      "date = 2024-02-29T23:59:59Z\ntook = 1s\ncalibrate = write\n"
      "model = rbps=150M rseqiops=36000 rrandiops=80 wbps=140M"
      " wseqiops=34000 wrandiops=75 depth=1";
    CHECK_EQ (cost_file_parse (t, strlen (t), &r, why, sizeof why), 0);
    CHECK_EQ (r.p.randiops[COST_READ], 80ull);
    CHECK_EQ (r.date, 1709251199);
    CHECK_EQ (r.took, 1000000000ull);
  }
}

static void
test_ident (void)
{
  struct cost_saved s = sample ();
  struct cost_ident a = s.id, b = s.id;

  CHECK (cost_ident_same (&a, &b));
  b.ino++;
  CHECK (!cost_ident_same (&a, &b));
  b = a;
  b.size += 4096;
  CHECK (!cost_ident_same (&a, &b));
  b = a;
  b.minor = 2;
  CHECK (!cost_ident_same (&a, &b));
  b = a;
  b.blockdev = true;
  CHECK (!cost_ident_same (&a, &b));
}

/* The sample with line KEY replaced by REPLACEMENT (or dropped if NULL)
 * must be refused with -ERR and WANT in the reason.
 */
static void
refused (int line, const char *key, const char *replacement, int err,
         const char *want)
{
  struct cost_saved s = sample (), r;
  char buf[2048], out[2048], why[256];
  const char *p, *nl;
  size_t n = 0;

  cost_file_format (&s, buf, sizeof buf);
  for (p = buf; *p; p = nl + 1) {
    nl = strchr (p, '\n');
    if (strncmp (p, key, strlen (key)) == 0 && p[strlen (key)] == ' ') {
      if (replacement)
        n += snprintf (out + n, sizeof out - n, "%s\n", replacement);
    }
    else
      n += snprintf (out + n, sizeof out - n, "%.*s\n", (int) (nl - p), p);
  }
  if (cost_file_parse (out, n, &r, why, sizeof why) != err
      || !strstr (why, want)) {
    fprintf (stderr, "test-costfile.c:%d: got '%s', want -%d and '%s'\n",
             line, why, err, want);
    CHECK (0);
  }
  CHECK (1);
}

static void
test_refused (void)
{
  struct cost_saved r;
  char why[256];

  refused (__LINE__, "version", NULL, -EINVAL, "no 'version = ...' line");
  refused (__LINE__, "model", NULL, -EINVAL, "no 'model = ...' line");
  refused (__LINE__, "version", "version = 2", -EINVAL,
           "line 3: version = 2: this server reads version 1");
  refused (__LINE__, "took", "tooks = 1s", -EINVAL,
           "line 6: unknown key 'tooks'");
  refused (__LINE__, "took", "took = 1s\ntook = 2s", -EINVAL,
           "line 7: took given twice");
  refused (__LINE__, "took", "took = 1000", -EINVAL,
           "line 6: took = 1000: want a time with its unit");
  refused (__LINE__, "device", "device = file 254:1 size 10", -EINVAL,
           "line 4: device = file 254:1 size 10: want");
  refused (__LINE__, "device", "device = block 8:0 size 10 extra", -EINVAL,
           "line 4: device = block 8:0 size 10 extra: want");
  refused (__LINE__, "device", "device = block -8:0 size 10", -EINVAL,
           "line 4: device");
  refused (__LINE__, "date", "date = yesterday", -EINVAL,
           "line 5: date = yesterday: want YYYY-MM-DDTHH:MM:SSZ");
  refused (__LINE__, "calibrate", "calibrate = off", -EINVAL,
           "line 7: calibrate = off: want read or write");
  refused (__LINE__, "model", "model = rbps=150M", -EINVAL,
           "line 8: model: a key is missing");
  refused (__LINE__, "model", "model = rbps=150M rbps=1G", -EINVAL,
           "line 8: model: at 'rbps=1G'");
  refused (__LINE__, "model", "model = rbps=150M rseqiops=36000 rrandiops=3"
           " wbps=140M wseqiops=34000 wrandiops=75 depth=1", -ERANGE,
           "line 8: model: rrandiops=3: out of bounds");
  refused (__LINE__, "model", "model = rbps=150M rseqiops=36000 rrandiops=80"
           " wbps=140M wseqiops=34000 wrandiops=75 depth=0", -ERANGE,
           "line 8: model: depth=0: out of bounds");
  refused (__LINE__, "took", "garbage", -EINVAL,
           "line 6: expected 'key = value'");

  CHECK_EQ (cost_file_parse ("", 0, &r, why, sizeof why), -EINVAL);
  CHECK_STREQ (why, "no 'version = ...' line (the file is empty)");
  CHECK_EQ (cost_file_parse ("version = 1\0\n", 13, &r, why, sizeof why),
            -EINVAL);
  CHECK_STREQ (why, "line 1: a NUL byte: not a calibration file");
}

int
main (void)
{
  test_round_trip ();
  test_ident ();
  test_refused ();
  check_done ("test-costfile");
  return 0;
}
