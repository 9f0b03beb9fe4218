/* test-config.c: the configuration model refuses every malformed config
 * with the exact "FILE:LINE: message" (all of them, in order), and builds
 * the model a good config and its overrides describe.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#include "cfq.h"
#include "check.h"
#include "config.h"
#include "units.h"

#define G (1ULL << 30)
#define M (1ULL << 20)

static int failures;

/* Collected by the report callback, to check it sees what cfg_error has. */
static char reported[8192];

static void
report (void *opaque, const char *msg)
{
  strncat (reported, msg, sizeof reported - strlen (reported) - 2);
  strcat (reported, "\n");
}

/* Parse TEXT as "t.conf" (if not NULL), apply the NULL-terminated KEY,
 * VALUE pairs in OVR, validate against SIZE.
 */
static struct cfg *
load (const char *text, const char *const *ovr, uint64_t size, int *rc)
{
  struct cfg *cfg = cfg_new (report, NULL);

  CHECK (cfg);
  reported[0] = '\0';
  for (; ovr && *ovr; ovr += 2)
    cfg_set_override (cfg, ovr[0], ovr[1]);
  if (text)
    cfg_parse (cfg, "t.conf", text, strlen (text));
  *rc = cfg_validate (cfg, size);
  return cfg;
}

/* All errors, one per line. */
static void
errors (const struct cfg *cfg, char *buf, size_t len)
{
  buf[0] = '\0';
  for (size_t i = 0; i < cfg_nr_errors (cfg); i++) {
    strncat (buf, cfg_error (cfg, i), len - strlen (buf) - 2);
    strcat (buf, "\n");
  }
}

/* TEXT (with overrides OVR) must fail with exactly the errors WANT. */
static void
bad (int lineno, const char *text, const char *const *ovr, uint64_t size,
     const char *want)
{
  char got[8192];
  int rc;
  struct cfg *cfg = load (text, ovr, size, &rc);

  errors (cfg, got, sizeof got);
  if (rc != -EINVAL || strcmp (got, want) != 0
      || strcmp (reported, got) != 0 || cfg_model (cfg) != NULL) {
    fprintf (stderr, "test-config.c:%d: rc %d\n--- want:\n%s--- got:\n%s"
             "--- reported:\n%s", lineno, rc, want, got, reported);
    failures++;
  }
  cfg_free (cfg);
}
#define BAD(text, want) bad (__LINE__, text, NULL, 4 * G, want)
#define BAD_OVR(text, ovr, want) bad (__LINE__, text, ovr, 4 * G, want)

/* TEXT must validate; returns the cfg for further checks. */
static struct cfg *
good (int lineno, const char *text, const char *const *ovr, uint64_t size)
{
  char got[8192];
  int rc;
  struct cfg *cfg = load (text, ovr, size, &rc);

  if (rc != 0 || !cfg_model (cfg)) {
    errors (cfg, got, sizeof got);
    fprintf (stderr, "test-config.c:%d: rc %d, errors:\n%s", lineno, rc, got);
    exit (1);
  }
  return cfg;
}
#define GOOD(text, ovr, size) good (__LINE__, text, ovr, size)

#define DEV "[device]\nfile = /dev/fake\n"
#define UNK "(want [device], [scheduler], [group NAME], [export NAME]," \
  " [tenant NAME], [event NAME] or [sim])"
#define OVL "; overlapping exports must both be readonly"

static void
test_malformed (void)
{
  /* Sections. */
  BAD (DEV "[foo]\nbar = 1\n[export a]\n",
       "t.conf:3: unknown section [foo] " UNK "\n");
  BAD (DEV "[device]\n[export a]\n",
       "t.conf:3: duplicate section [device] (first at line 1)\n");
  BAD (DEV "[device x]\n[export a]\n", "t.conf:3: [device] takes no name\n");
  BAD (DEV "[export a]\n[export b]\noffset = 1G\n[export a]\nreadonly = 1\n",
       "t.conf:6: duplicate section [export a] (first at line 3)\n"
       "t.conf:5: export \"b\" [1G, 4G) overlaps export \"a\" [0, 4G)"
       " (line 3)" OVL "\n");
  BAD (DEV "[group g]\n[group g]\n[export a]\ngroup = g\n",
       "t.conf:4: duplicate section [group g] (first at line 3)\n");
  BAD (DEV "[group]\n[export a]\n",
       "t.conf:3: [group] needs a name: [group NAME]\n");
  BAD (DEV "[group a/b]\n[export a]\n",
       "t.conf:3: [group a/b]: a group name is letters, digits, '_', '.' and"
       " '-' (at most 64)\n");
  BAD (DEV "[export a\n[export b]\n",
       "t.conf:3: missing ']' in section header\n");
  BAD (DEV "[export a] x\n", "t.conf:3: unexpected text after ']'\n"
       "t.conf: no [export NAME] section: nothing to serve\n");
  BAD (DEV "[export \"a]\n", "t.conf:3: bad quoted name in section header\n"
       "t.conf: no [export NAME] section: nothing to serve\n");
  BAD (DEV, "t.conf: no [export NAME] section: nothing to serve\n");
  BAD ("", "t.conf: no [export NAME] section: nothing to serve\n");

  /* Syntax. */
  BAD ("queue_depth = 4\n" DEV "[export a]\n",
       "t.conf:1: 'queue_depth' is outside any section (start with [device],"
       " [scheduler], [group NAME] or [export NAME])\n");
  BAD (DEV "just words\n[export a]\n",
       "t.conf:3: expected 'key = value' or '[section]'\n");
  BAD (DEV "= 4\n[export a]\n", "t.conf:3: missing key before '='\n");
  BAD (DEV "queue_depth =\n[export a]\n", "t.conf:3: queue_depth: missing value\n");
  BAD (DEV "queue_depth = ; just a comment\n[export a]\n",
       "t.conf:3: queue_depth: missing value\n");
  {
    char text[512];
    snprintf (text, sizeof text, DEV "[export a]\nallow = %0300d\n", 1);
    BAD (text, "t.conf:4: line longer than 197 characters\n");
  }
  {
    static const char text[] = DEV "[export a]\nreadonly = 1\0\n";
    char got[512];
    int rc;
    struct cfg *cfg = cfg_new (NULL, NULL);
    cfg_parse (cfg, "t.conf", text, sizeof text - 1);
    rc = cfg_validate (cfg, G);
    errors (cfg, got, sizeof got);
    CHECK_EQ (rc, -EINVAL);
    CHECK_STREQ (got, "t.conf:4: NUL byte in line\n");
    cfg_free (cfg);
  }

  /* Keys. */
  BAD (DEV "[group g]\nwieght = 200\n[export a]\n",
       "t.conf:4: unknown key 'wieght' in [group NAME] (did you mean"
       " 'weight'?)\n");
  BAD (DEV "[export a]\ngroop = g\n",
       "t.conf:4: unknown key 'groop' in [export NAME] (did you mean"
       " 'group'?)\n");
  BAD (DEV "[export a]\ncolour = red\n",
       "t.conf:4: unknown key 'colour' in [export NAME] (want group, offset,"
       " size, file, readonly, writes, allow, tls or max_connections)\n");
  BAD ("[scheduler]\nslice_idel = 4ms\n" DEV "[export a]\n",
       "t.conf:2: unknown key 'slice_idel' in [scheduler] (did you mean"
       " 'slice_idle'?)\n");
  BAD (DEV "slice_idle = 0\n[export a]\n",
       "t.conf:3: 'slice_idle' belongs in [scheduler], not in [device]\n");
  BAD (DEV "[export a]\nweight = 200\n",
       "t.conf:4: 'weight' belongs in [group NAME], not in [export NAME]\n");
  BAD (DEV "[scheduler]\nfile = x\n[export a]\n",
       "t.conf:4: 'file' belongs in [device] or [export NAME], not in"
       " [scheduler]\n");
  BAD (DEV "[scheduler]\nmodel.rpm = 1\n[export a]\n",
       "t.conf:4: 'model.rpm' belongs in [device], not in [scheduler]\n");
  BAD (DEV "model.RPM = 1\n[export a]\n",
       "t.conf:3: 'model.RPM': a model parameter is model.NAME with NAME of"
       " a-z, 0-9 and _\n");
  BAD (DEV "model.rpm = 7200\nmodel.rpm = 5400\n[export a]\n",
       "t.conf:4: duplicate key 'model.rpm' (first at line 3)\n");
  BAD (DEV "queue_depth = 8\nqueue_depth = 8\n[export a]\n",
       "t.conf:4: duplicate key 'queue_depth' (first at line 3)\n");
  BAD (DEV "[export a]\nsize = 1G\nsize = 2G\n",
       "t.conf:5: duplicate key 'size' (first at line 4)\n");

  /* Device values. */
  BAD (DEV "queue_depth = 0\n[export a]\n",
       "t.conf:3: queue_depth = 0: out of range (want 1..4096)\n");
  BAD (DEV "queue_depth = 4097\n[export a]\n",
       "t.conf:3: queue_depth = 4097: out of range (want 1..4096)\n");
  BAD (DEV "queue_depth = -1\n[export a]\n",
       "t.conf:3: queue_depth = -1: not a number (want 1..4096)\n");
  BAD (DEV "mode = fast\n[export a]\n",
       "t.conf:3: mode = fast: want auto, time or iops\n");
  BAD (DEV "emulate = tape\n[export a]\n",
       "t.conf:3: emulate = tape: want none, hdd, ssd, sata7200, vertex or"
       " nvme\n");
  BAD (DEV "cache = ram\n[export a]\n",
       "t.conf:3: cache = ram: want none or page\n");
  BAD (DEV "[scheduler]\ncache = page\n[export a]\n",
       "t.conf:4: 'cache' belongs in [device], not in [scheduler]\n");
  {
    static const char *const o[] = { "cache", "none", NULL };
    static const char *const o_bad[] = { "cache", "Page", NULL };
    struct cfg *cfg = good (__LINE__, DEV "cache = page\n[export a]\n",
                            NULL, 4 * G);
    CHECK_EQ (cfg_model (cfg)->dev.cache, CFG_CACHE_PAGE);
    cfg_free (cfg);
    cfg = good (__LINE__, DEV "cache = page\n[export a]\n", o, 4 * G);
    CHECK_EQ (cfg_model (cfg)->dev.cache, CFG_CACHE_NONE);
    cfg_free (cfg);
    BAD_OVR (DEV "[export a]\n", o_bad,
             "command line: cache=Page: want none or page (did you mean"
             " 'page'?)\n");
  }
  /* Calibration: what is measured, where it is kept, a stated model. */
  BAD (DEV "calibrate = raed\n[export a]\n",
       "t.conf:3: calibrate = raed: want off, read or write (did you mean"
       " 'read'?)\n");
  BAD (DEV "calibrate = always\n[export a]\n",
       "t.conf:3: calibrate = always: want off, read or write\n");
  BAD (DEV "[scheduler]\ncalibration = x\n[export a]\n",
       "t.conf:4: 'calibration' belongs in [device], not in [scheduler]\n");
  BAD (DEV "cost_model = rbps=150M\n[export a]\n",
       "t.conf:3: cost_model = rbps=150M: a key is missing (want rbps,"
       " rseqiops, rrandiops, wbps, wseqiops, wrandiops and depth, each"
       " once)\n");
  BAD (DEV "cost_model = rbps=150M rseqiops=36000 rrandiops=80 wbps=140M"
       " wseqiops=34000 wrandiops=75 depht=1\n[export a]\n",
       "t.conf:3: cost_model = rbps=150M rseqiops=36000 rrandiops=80"
       " wbps=140M wseqiops=34000 wrandiops=75 depht=1: at 'depht=1': want"
       " rbps=RATE rseqiops=N rrandiops=N wbps=RATE wseqiops=N wrandiops=N"
       " depth=N, each once\n");
  BAD (DEV "cost_model = rbps=150M rseqiops=36000 rrandiops=2 wbps=140M"
       " wseqiops=34000 wrandiops=75 depth=1\n[export a]\n",
       "t.conf:3: cost_model = rbps=150M rseqiops=36000 rrandiops=2"
       " wbps=140M wseqiops=34000 wrandiops=75 depth=1: rrandiops=2: out of"
       " bounds (rbps and wbps 1MB/s..1TB/s, IOPS 10..100000000, depth"
       " 1..4096)\n");
  {
    static const char *const o[] = { "calibrate", "off", "calibration",
      "/var/lib/c.model", NULL };
    static const char *const o_bad[] = { "calibrate", "wirte", NULL };
    struct cfg *cfg = good (__LINE__, DEV "[export a]\n", NULL, 4 * G);
    const struct cfg_device *d = &cfg_model (cfg)->dev;

    /* Defaults: reads measured, nothing saved, no stated model. */
    CHECK_EQ (d->calibrate, CFG_CALIBRATE_READ);
    CHECK (!d->calibrate_given);
    CHECK_NULL (d->calibration);
    CHECK (!d->cost_given);
    CHECK_STREQ (cfg_calibrate_name (d->calibrate), "read");
    cfg_free (cfg);
    cfg = good (__LINE__, DEV "calibrate = write\ncalibration = c.model\n"
                "cost_model = rbps=150M,rseqiops=36000 rrandiops=80"
                " wbps=140M wseqiops=34000 wrandiops=75 depth=2\n"
                "[export a]\n", NULL, 4 * G);
    d = &cfg_model (cfg)->dev;
    CHECK_EQ (d->calibrate, CFG_CALIBRATE_WRITE);
    CHECK (d->calibrate_given);
    CHECK_STREQ (d->calibration, "c.model");
    CHECK (d->cost_given);
    CHECK_EQ (d->cost.bps[COST_READ], 150000000ull);
    CHECK_EQ (d->cost.randiops[COST_WRITE], 75ull);
    CHECK_EQ (d->cost.depth, 2ull);
    cfg_free (cfg);
    /* The command line wins. */
    cfg = good (__LINE__, DEV "calibrate = write\ncalibration = c.model\n"
                "[export a]\n", o, 4 * G);
    d = &cfg_model (cfg)->dev;
    CHECK_EQ (d->calibrate, CFG_CALIBRATE_OFF);
    CHECK_STREQ (d->calibration, "/var/lib/c.model");
    cfg_free (cfg);
    BAD_OVR (DEV "[export a]\n", o_bad,
             "command line: calibrate=wirte: want off, read or write (did"
             " you mean 'write'?)\n");
  }
  /* Presets: their own parameters, with model.* on top. */
  BAD (DEV "emulate = vertex\nmodel.rpm = 7200\n[export a]\n",
       "t.conf:4: model.rpm: not a parameter of the vertex model (want"
       " capacity, seed, flush, trim, channels, read, write, bw)\n");
  BAD (DEV "emulate = sata7200\nmodel.ncq = 300\n[export a]\n",
       "t.conf:4: model.ncq = 300: out of range for the sata7200 model\n");
  {
    static const char *const o[] = { "emulate", "nvme", NULL };
    struct cfg *cfg = good (__LINE__, DEV "emulate = sata7200\n"
                            "model.ncq = 8\n[export a]\n", NULL, 4 * G);
    CHECK_STREQ (cfg_model (cfg)->dev.emulate, "sata7200");
    CHECK_EQ (cfg_model (cfg)->dev.nr_model, 1);
    cfg_free (cfg);
    cfg = good (__LINE__, DEV "emulate = ssd\nmodel.channels = 8\n"
                "[export a]\n", o, 4 * G);
    CHECK_STREQ (cfg_model (cfg)->dev.emulate, "nvme");
    cfg_free (cfg);
  }

  /* Scheduler values. */
  BAD (DEV "[scheduler]\nscheduler = noop\n[export a]\n",
       "t.conf:4: scheduler = noop: want cfq or fifo\n");
  BAD (DEV "[scheduler]\nslice_idle = 8x\n[export a]\n",
       "t.conf:4: slice_idle = 8x: not a time (want a number with ns, us,"
       " ms or s; a bare number is ms)\n");
  BAD (DEV "[scheduler]\nslice_idle = 8 ms\n[export a]\n",
       "t.conf:4: slice_idle = 8 ms: not a time (want a number with ns, us,"
       " ms or s; a bare number is ms)\n");
  BAD (DEV "[scheduler]\nslice_idle = 0.5ns\n[export a]\n",
       "t.conf:4: slice_idle = 0.5ns: not a time (want a number with ns, us,"
       " ms or s; a bare number is ms)\n");
  BAD (DEV "[scheduler]\nslice_idle = 2s\n[export a]\n",
       "t.conf:4: slice_idle = 2s: out of range 0ns..100ms\n");
  BAD (DEV "[scheduler]\nslice_sync = 0\n[export a]\n",
       "t.conf:4: slice_sync = 0: out of range 1ms..1s\n");
  /* Times other tenants would wait for: bounded (cfq_tunables[]). */
  BAD (DEV "[scheduler]\nslice_idle = 1000ms\n[export a]\n",
       "t.conf:4: slice_idle = 1000ms: out of range 0ns..100ms\n");
  BAD (DEV "[scheduler]\ngroup_idle = 101ms\n[export a]\n",
       "t.conf:4: group_idle = 101ms: out of range 0ns..100ms\n");
  BAD (DEV "[scheduler]\nslice_async = 2s\n[export a]\n",
       "t.conf:4: slice_async = 2s: out of range 1ms..1s\n");
  BAD (DEV "[scheduler]\ntarget_latency = 10s\n[export a]\n",
       "t.conf:4: target_latency = 10s: out of range 1ms..1s\n");
  BAD (DEV "[scheduler]\nfifo_expire_sync = 60s\n[export a]\n",
       "t.conf:4: fifo_expire_sync = 60s: out of range 1ms..10s\n");
  BAD (DEV "[scheduler]\nfifo_expire_async = 10001ms\n[export a]\n",
       "t.conf:4: fifo_expire_async = 10001ms: out of range 1ms..10s\n");
  BAD (DEV "[scheduler]\nquantum = abc\n[export a]\n",
       "t.conf:4: quantum = abc: not a number\n");
  BAD (DEV "[scheduler]\nquantum = 0\n[export a]\n",
       "t.conf:4: quantum = 0: out of range 1..1024\n");
  BAD (DEV "[scheduler]\nlow_latency = maybe\n[export a]\n",
       "t.conf:4: low_latency = maybe: not a boolean (want 0/1, yes/no,"
       " on/off)\n");
  BAD (DEV "[scheduler]\nback_seek_max = 1000b\n[export a]\n",
       "t.conf:4: back_seek_max = 1000b: not a whole number of KiB\n");
  BAD (DEV "[scheduler]\nback_seek_max = 2T\n[export a]\n",
       "t.conf:4: back_seek_max = 2T: out of range 0..1T\n");
  BAD (DEV "[scheduler]\nrotational = 2\n[export a]\n",
       "t.conf:4: rotational = 2: not a boolean (want 0/1, yes/no, on/off)\n");
  BAD (DEV "[scheduler]\nmode = iops\n[export a]\n",
       "t.conf:4: 'mode' belongs in [device], not in [scheduler]\n");

  /* Device-model parameters, checked by the model emulate= names. */
  BAD (DEV "model.heads = 4\n[export a]\n",
       "t.conf:3: model.heads: not a parameter of any device model (hdd:"
       " capacity, seed, flush, trim, rpm, seek_min, seek_max, rate, near, ncq,"
       " ncq_age;"
       " ssd: capacity, seed, flush, trim, channels, read, write, bw)\n");
  BAD (DEV "emulate = ssd\nmodel.rpm = 7200\n[export a]\n",
       "t.conf:4: model.rpm: not a parameter of the ssd model (want capacity,"
       " seed, flush, trim, channels, read, write, bw)\n");
  BAD (DEV "emulate = hdd\nmodel.rpm = 10\n[export a]\n",
       "t.conf:4: model.rpm = 10: out of range for the hdd model\n");
  BAD (DEV "model.rpm = fast\n[export a]\n",
       "t.conf:3: model.rpm = fast: not a valid value for the hdd model\n");
  BAD (DEV "model.channels = 0\n[export a]\n",
       "t.conf:3: model.channels = 0: out of range for the ssd model\n");
  BAD (DEV "[scheduler]\nback_seek_max = 16Q\n[export a]\n",
       "t.conf:4: back_seek_max = 16Q: not a size (a bare number is KiB)\n");

  /* Group values. */
  BAD (DEV "[group g]\nweight = 99\n[export a]\n",
       "t.conf:4: weight = 99: out of range 100..1000\n");
  BAD (DEV "[group g]\nweight = 1001\n[export a]\n",
       "t.conf:4: weight = 1001: out of range 100..1000\n");
  BAD (DEV "[group g]\nweight = abc\n[export a]\n",
       "t.conf:4: weight = abc: not a number (want 100..1000)\n");
  BAD (DEV "[group g]\nweight = 5e2\n[export a]\n",
       "t.conf:4: weight = 5e2: not a number (want 100..1000)\n");
  BAD (DEV "[group g]\nclass = batch\n[export a]\n",
       "t.conf:4: class = batch: want rt, be or idle\n");
  BAD (DEV "[group g]\nprio = 8\n[export a]\n",
       "t.conf:4: prio = 8: want 0..7 (0 is highest)\n");
  BAD (DEV "[group g]\nscope = cluster\n[export a]\n",
       "t.conf:4: scope = cluster: want local (caps and reservation per"
       " server) or global (for the sum over the servers)\n");

  /* Export values. */
  BAD (DEV "[export a]\ngroup = nosuch\n",
       "t.conf:4: group = nosuch: no [group nosuch] section\n");
  BAD (DEV "[export a]\ngroup = a b\n",
       "t.conf:4: group = a b: not a group name (letters, digits, '_', '.',"
       " '-')\n");
  BAD (DEV "[export a]\noffset = 1000\n",
       "t.conf:4: offset = 1000: not a multiple of 4096\n");
  BAD (DEV "[export a]\nsize = 1M\nsize = 1x\n",
       "t.conf:5: duplicate key 'size' (first at line 4)\n");
  BAD (DEV "[export a]\nsize = 1x\n",
       "t.conf:4: size = 1x: not a size (want a number with an optional b,"
       " k, m, g, t, p or e suffix)\n");
  BAD (DEV "[export a]\nsize = 0\n", "t.conf:4: size = 0: must not be 0\n");
  /* Too big for 64 bits: out of range, not a matter of syntax. */
  BAD (DEV "[export a]\nsize = 16E\n",
       "t.conf:4: size = 16E: out of range (a size is less than 16E)\n");
  BAD (DEV "[export a]\noffset = 18446744073709551616\n",
       "t.conf:4: offset = 18446744073709551616: out of range (a size is"
       " less than 16E)\n");
  BAD (DEV "[export a]\nsize = 16X\n",
       "t.conf:4: size = 16X: not a size (want a number with an optional b,"
       " k, m, g, t, p or e suffix)\n");
  BAD (DEV "queue_depth = 99999999999999999999\n[export a]\n",
       "t.conf:3: queue_depth = 99999999999999999999: out of range (want"
       " 1..4096)\n");
  BAD (DEV "max_connections = 99999999999999999999\n[export a]\n",
       "t.conf:3: max_connections = 99999999999999999999: out of range (want"
       " 1..1000000)\n");
  BAD (DEV "[scheduler]\nslice_idle = 18446744073709551616ns\n[export a]\n",
       "t.conf:4: slice_idle = 18446744073709551616ns: out of range"
       " 0ns..100ms\n");
  BAD (DEV "[scheduler]\nback_seek_max = 16E\n[export a]\n",
       "t.conf:4: back_seek_max = 16E: out of range 0..1T\n");
  BAD (DEV "[export a]\nsize = 6000\n",
       "t.conf:4: size = 6000: not a multiple of 4096\n");
  BAD (DEV "[export a]\nreadonly = perhaps\n",
       "t.conf:4: readonly = perhaps: not a boolean (want 0/1, yes/no,"
       " on/off)\n");
  BAD (DEV "[export a]\nwrites = often\n",
       "t.conf:4: writes = often: want auto, async or sync\n");
  BAD (DEV "[export a]\nallow = 10.0.0.1/8\n",
       "t.conf:4: allow: '10.0.0.1/8': host bits set (the network is"
       " 10.0.0.0/8)\n");
  BAD (DEV "[export a]\nallow = 10.0.0.0/33\n",
       "t.conf:4: allow: '10.0.0.0/33': bad prefix length (want 0..32)\n");
  BAD (DEV "[export a]\nallow = fd00::/129\n",
       "t.conf:4: allow: 'fd00::/129': bad prefix length (want 0..128)\n");
  BAD (DEV "[export a]\nallow = 127.0.0.1, 300.0.0.1\n",
       "t.conf:4: allow: '300.0.0.1' is not an IPv4 or IPv6 address, a CIDR"
       " network or \"unix\"\n");
  BAD (DEV "[export a]\nallow = localhost\n",
       "t.conf:4: allow: 'localhost' is not an IPv4 or IPv6 address, a CIDR"
       " network or \"unix\"\n");
  BAD (DEV "[export a]\nallow = 10.0.0.0/\n",
       "t.conf:4: allow: '10.0.0.0/': bad prefix length (want 0..32)\n");
  BAD (DEV "[export a]\nallow = ,,\n", "t.conf:4: allow: empty list\n");

  /* Regions and the device. */
  BAD (DEV "[export a]\nsize = 2G\n[export b]\noffset = 1G\nsize = 2G\n",
       "t.conf:6: export \"b\" [1G, 3G) overlaps export \"a\" [0, 2G)"
       " (line 3)" OVL "\n");
  BAD (DEV "[export a]\nsize = 2G\n[export b]\nreadonly = yes\n",
       "t.conf:5: export \"b\" [0, 4G) overlaps export \"a\" [0, 2G)"
       " (line 3)" OVL "\n");
  BAD (DEV "[export a]\noffset = 3G\nsize = 2G\n",
       "t.conf:5: export \"a\" [3G, 5G) runs past the end of the device"
       " (size 4G)\n");
  /* Bounds past 2^64 as written, never wrapped around. */
  BAD (DEV "[export a]\noffset = 8E\nsize = 8E\n",
       "t.conf:5: export \"a\" [8E, 16E) runs past the end of the device"
       " (size 4G)\n");
  BAD (DEV "[export a]\noffset = 15E\nsize = 15E\n",
       "t.conf:5: export \"a\" [15E, 30E) runs past the end of the device"
       " (size 4G)\n");
  BAD (DEV "[export a]\noffset = 15E\nsize = 1048575T\n",
       "t.conf:5: export \"a\" [15E, 16777215T) runs past the end of the"
       " device (size 4G)\n");
  BAD (DEV "[export a]\noffset = 16383P\nsize = 1536K\n",
       "t.conf:5: export \"a\" [16383P, 18013298997855744K) runs past the"
       " end of the device (size 4G)\n");
  BAD (DEV "[export a]\noffset = 4G\n",
       "t.conf:4: export \"a\": offset 4G is at or beyond the end of the"
       " device (size 4G)\n");
  BAD ("[export a]\n[export b]\n",
       "t.conf:1: export \"a\" is a region of the device, but no device file"
       " is set ([device] file = PATH, or file=PATH)\n");
  BAD (DEV "[export a]\nfile = /x.img\noffset = 1M\n",
       "t.conf:5: export \"a\" has its own file: offset and size apply only"
       " to regions of the device\n");
  BAD (DEV "[export a]\nfile = /x.img\n[export b]\nfile = /x.img\n"
       "readonly = 1\n",
       "t.conf:6: export \"b\": file /x.img is also the file of export \"a\""
       " (line 4); only readonly exports may share one\n");
  BAD (DEV "[export a]\nfile = /dev/fake\nreadonly = 1\n",
       "t.conf:4: export \"a\": file is the device itself; use offset and"
       " size for a region of it\n");

  /* Everything at once, in order: parse errors, then the cross-checks. */
  BAD ("[device]\nfile = d\nqueue_depth = 0\n[group g]\nweight = 99\n"
       "class = x\n[export a]\ngroup = h\n[export b]\n",
       "t.conf:3: queue_depth = 0: out of range (want 1..4096)\n"
       "t.conf:5: weight = 99: out of range 100..1000\n"
       "t.conf:6: class = x: want rt, be or idle\n"
       "t.conf:8: group = h: no [group h] section\n"
       "t.conf:9: export \"b\" [0, 4G) overlaps export \"a\" [0, 4G)"
       " (line 7)" OVL "\n");

  /* Overrides. */
  {
    static const char *const o1[] = { "weight", "5", NULL };
    static const char *const o2[] = { "slice_idle", "fast", NULL };
    static const char *const o3[] = { "queue_depth", "", NULL };
    static const char *const o4[] = { "model.X", "1", NULL };
    static const char *const o5[] = { "emulate", "tape", NULL };
    static const char *const o6[] = { "model.rpm", "1", NULL };
    static const char *const o7[] = { "quantun", "4", NULL };
    BAD_OVR (DEV "model.rpm = 7200\n[export a]\n", o6,
             "command line: model.rpm=1: out of range for the hdd model\n");
    BAD_OVR (DEV "[export a]\n", o1,
             "command line: weight=5: not a [device] or [scheduler] key\n");
    BAD_OVR (DEV "[export a]\n", o7,
             "command line: quantun=4: unknown key (did you mean"
             " 'quantum'?)\n");
    BAD_OVR (DEV "[export a]\n", o2,
             "command line: slice_idle=fast: not a time (want a number with"
             " ns, us, ms or s; a bare number is ms)\n");
    BAD_OVR (DEV "[export a]\n", o3,
             "command line: queue_depth: missing value\n");
    BAD_OVR (DEV "[export a]\n", o4,
             "command line: 'model.X': a model parameter is model.NAME with"
             " NAME of a-z, 0-9 and _\n");
    BAD_OVR (DEV "[export a]\n", o5,
             "command line: emulate=tape: want none, hdd, ssd, sata7200,"
             " vertex or nvme\n");
    /* No file and no device: nothing to serve. */
    BAD_OVR (NULL, NULL,
             "command line: no device: give file=PATH or config=FILE\n");
  }
  {
    struct cfg *cfg = cfg_new (NULL, NULL);
    CHECK_EQ (cfg_set_override (cfg, "weight", "5"), -ENOENT);
    CHECK_EQ (cfg_set_override (cfg, "quantum", "0"), -EINVAL);
    CHECK_EQ (cfg_set_override (cfg, "quantum", "4"), 0);
    /* The file is fine, but the errors so far still count. */
    CHECK_EQ (cfg_parse (cfg, "a.conf", DEV "[export a]\n",
                         strlen (DEV "[export a]\n")), -EINVAL);
    CHECK_EQ (cfg_nr_errors (cfg), 2);
    cfg_free (cfg);
  }
  /* Only one config file. */
  {
    struct cfg *cfg = cfg_new (NULL, NULL);
    const char *t = DEV "[export a]\n";
    CHECK_EQ (cfg_parse (cfg, "a.conf", t, strlen (t)), 0);
    CHECK_EQ (cfg_parse (cfg, "b.conf", t, strlen (t)), -EINVAL);
    CHECK_STREQ (cfg_error (cfg, 0),
                 "command line: more than one config"
                 " file (a.conf, then b.conf)");
    CHECK_NULL (cfg_error (cfg, 1));
    cfg_free (cfg);
  }
}

static const struct cfg_group *
group_of (const struct cfg_model *m, const struct cfg_export *e)
{
  CHECK_LT (e->group, m->nr_groups);
  return &m->groups[e->group];
}

static uint64_t
tunable (const struct cfg_model *m, const char *name)
{
  for (size_t i = 0; i < m->nr_tunables; i++)
    if (strcmp (m->tunables[i].name, name) == 0)
      return m->tunables[i].val;
  return UINT64_MAX;            /* not given */
}

static void
test_defaults (void)
{
  static const char *const ovr[] = { "file", "disk.img", NULL };
  struct cfg *cfg = GOOD (NULL, ovr, 10 * G + 512);
  const struct cfg_model *m = cfg_model (cfg);
  const struct cfg_export *e;

  CHECK_STREQ (cfg_device_file (cfg), "disk.img");
  CHECK_STREQ (m->dev.file, "disk.img");
  CHECK_EQ (m->dev.queue_depth, 32);
  CHECK_EQ (m->dev.mode, CFQ_MODE_AUTO);
  CHECK_NULL (m->dev.emulate);
  CHECK_EQ (m->dev.cache, CFG_CACHE_NONE);
  CHECK_EQ (m->dev.nr_model, 0);
  CHECK_STREQ (m->scheduler, "cfq");
  CHECK_EQ (m->nr_tunables, 0);
  CHECK_EQ (m->nr_groups, 1);
  CHECK_EQ (m->nr_exports, 1);
  CHECK_STREQ (m->groups[0].name, "default");
  CHECK_EQ (m->groups[0].weight, 500);
  CHECK_EQ (m->groups[0].cls, SCHED_CLASS_BE);
  CHECK_EQ (m->groups[0].prio, 4);
  CHECK (!m->groups[0].global);
  CHECK_EQ (m->groups[0].line, 0);
  e = &m->exports[0];
  CHECK_STREQ (e->name, "");
  CHECK_PTR_EQ (cfg_find_export (m, ""), e);
  CHECK_NULL (cfg_find_export (m, "default"));
  CHECK_EQ (e->group, 0);
  CHECK_NULL (e->file);
  CHECK_EQ (e->offset, 0);
  CHECK_EQ (e->size, 10 * G + 512);  /* to the byte */
  CHECK (!e->readonly);
  CHECK (!e->writes_sync);
  CHECK_EQ (e->nr_allow, 0);
  CHECK_EQ (e->line, 0);
  CHECK_EQ (cfg_export_allows_str (e, "192.0.2.1"), 1);
  CHECK_EQ (cfg_export_allows_str (e, "unix"), 1);
  cfg_free (cfg);

}

/* Every CFQ tunable (but mode, a [device] key) is a [scheduler] key with
 * CFQ's range: its min and max pass through unchanged, max + 1 is refused,
 * and what passes is what sched_set() takes.
 */
static void
test_cfq_table (void)
{
  const struct sched_ops *ops = sched_lookup ("cfq");
  struct sched *s = sched_create (ops);
  size_t keys = 0;

  CHECK (s);
  for (size_t i = 0; i < cfq_nr_tunables; i++) {
    const struct cfq_tunable *t = &cfq_tunables[i];
    bool ns = strcmp (t->unit, "ns") == 0;
    uint64_t ends[2] = { t->min, t->max };
    char text[256];
    int rc;

    if (strcmp (t->name, "mode") == 0)
      continue;
    keys++;
    for (int e = 0; e < 3; e++) {
      uint64_t v = e < 2 ? ends[e] : t->max + 1;
      struct cfg *cfg;
      /* Times in ns so that every value can be written exactly. */
      snprintf (text, sizeof text, DEV "[scheduler]\n%s = %llu%s\n"
                "[export a]\n", t->name, (unsigned long long) v,
                ns ? "ns" : "");
      cfg = load (text, NULL, G, &rc);
      if (e == 2) {
        CHECK_EQ (rc, -EINVAL);
        CHECK_EQ (cfg_nr_errors (cfg), 1);
        CHECK_PTR_EQ (strstr (cfg_error (cfg, 0), "t.conf:4: "),
                      cfg_error (cfg, 0));
        cfg_free (cfg);
        continue;
      }
      CHECK_EQ (rc, 0);
      CHECK_EQ (cfg_model (cfg)->nr_tunables, 1);
      CHECK_STREQ (cfg_model (cfg)->tunables[0].name, t->name);
      CHECK_EQ (cfg_model (cfg)->tunables[0].val, v);
      CHECK_EQ (sched_set (s, t->name, v), 0);
      cfg_free (cfg);
    }
  }
  CHECK_EQ (keys, cfq_nr_tunables - 1);
  sched_destroy (s);
}

static const char full[] =
  "\xef\xbb\xbf# A full config, with every trick the syntax allows.\r\n"
  "; comment\n"
  "[device]\n"
  "  file = disks/disk.img        ; relative to the config's dir\n"
  "\tqueue_depth = 64\n"
  "mode = iops\n"
  "emulate = hdd\n"
  "model.rpm = 7200\n"
  "model.seek_max = 20ms\n"
  "\n"
  "[scheduler]\n"
  "scheduler = cfq\n"
  "slice_idle = 0\n"                                   /* line 13 */
  "slice_sync = 50ms\n"
  "back_seek_max = 32M\n"
  "quantum: 16\n"
  "low_latency = off\n"
  "[group gold] ; premium\n"                           /* line 18 */
  "weight = 800\n"
  "class = rt\n"
  "prio = 0\n"
  "[group bronze]\n"                                   /* line 22 */
  "weight = 100\n"
  "class = idle\n"
  "[ export ]\n"                                       /* line 25: "" */
  "group = gold\n"
  "size = 1G\n"
  "allow = 127.0.0.1, 10.1.0.0/16 ::1  fd00::/8,unix\n"
  "[export \"my disk\"]\n"                             /* line 29 */
  "group = bronze\n"
  "offset = 1G\n"
  "size = 512M\n"
  "writes = sync\n"
  "[export scratch]\n"                                 /* line 34 */
  "offset = 1536m\n"
  "[export ro1]\n"                                     /* line 36 */
  "offset = 1G\n"
  "size = 4K\n"
  "readonly = yes\n"
  "file = /srv/base.img\n"
  "[export own]\n"
  "file = own.img\n"
  "[export ro2]\n"
  "file = /srv/base.img\n"
  "readonly = 1\n";

static void
test_full (void)
{
  struct cfg *cfg;
  const struct cfg_model *m;
  const struct cfg_export *e;
  int rc;

  /* ro1 has both a file and a region: refused; drop the region. */
  cfg = load (full, NULL, 4 * G, &rc);
  CHECK_EQ (rc, -EINVAL);
  CHECK_EQ (cfg_nr_errors (cfg), 1);
  CHECK_STREQ (cfg_error (cfg, 0),
               "t.conf:37: export \"ro1\" has its own"
               " file: offset and size apply only to regions of the"
               " device");
  cfg_free (cfg);

  char *text = strdup (full);
  char *p = strstr (text, "offset = 1G\nsize = 4K\n");
  CHECK (p);
  memcpy (p, "#ffset = 1G\n#ize = 4K\n", 22);
  cfg = cfg_new (NULL, NULL);
  CHECK_EQ (cfg_parse (cfg, "conf.d/t.conf", text, strlen (text)), 0);
  free (text);
  CHECK_STREQ (cfg_device_file (cfg), "conf.d/disks/disk.img");
  CHECK_EQ (cfg_validate (cfg, 4 * G), 0);
  m = cfg_model (cfg);
  CHECK (m);

  CHECK_STREQ (m->dev.file, "conf.d/disks/disk.img");
  CHECK_EQ (m->dev.queue_depth, 64);
  CHECK_EQ (m->dev.mode, CFQ_MODE_IOPS);
  CHECK (m->dev.emulate);
  CHECK_STREQ (m->dev.emulate, "hdd");
  CHECK_EQ (m->dev.nr_model, 2);
  CHECK_STREQ (m->dev.model[0].key, "rpm");
  CHECK_STREQ (m->dev.model[0].value, "7200");
  CHECK_STREQ (m->dev.model[1].key, "seek_max");
  CHECK_STREQ (m->dev.model[1].value, "20ms");

  CHECK_STREQ (m->scheduler, "cfq");
  CHECK_EQ (m->nr_tunables, 6);
  /* In CFQ's table order, not file order. */
  CHECK_STREQ (m->tunables[0].name, "quantum");
  CHECK_EQ (tunable (m, "mode"), CFQ_MODE_IOPS);       /* from [device] */
  CHECK_EQ (tunable (m, "slice_idle"), 0);
  CHECK_EQ (tunable (m, "slice_sync"), 50 * NSEC_PER_MSEC);
  CHECK_EQ (tunable (m, "back_seek_max"), 32768);
  CHECK_EQ (tunable (m, "quantum"), 16);
  CHECK_EQ (tunable (m, "low_latency"), 0);
  CHECK_EQ (tunable (m, "group_idle"), UINT64_MAX);

  CHECK_EQ (m->nr_groups, 3);
  CHECK_STREQ (m->groups[0].name, "gold");
  CHECK_EQ (m->groups[0].weight, 800);
  CHECK_EQ (m->groups[0].cls, SCHED_CLASS_RT);
  CHECK_EQ (m->groups[0].prio, 0);
  CHECK_EQ (m->groups[0].line, 18);
  CHECK_STREQ (m->groups[1].name, "bronze");
  CHECK_EQ (m->groups[1].weight, 100);
  CHECK_EQ (m->groups[1].cls, SCHED_CLASS_IDLE);
  CHECK_EQ (m->groups[1].prio, 4);
  CHECK_EQ (m->groups[1].line, 22);
  CHECK_STREQ (m->groups[2].name, "default");   /* implicit */
  CHECK_EQ (m->groups[2].weight, 500);
  CHECK_EQ (m->groups[2].line, 0);

  CHECK_EQ (m->nr_exports, 6);
  e = cfg_find_export (m, "");
  CHECK_PTR_EQ (e, &m->exports[0]);
  CHECK_EQ (e->line, 25);
  CHECK_STREQ (group_of (m, e)->name, "gold");
  CHECK_EQ (e->offset, 0);
  CHECK_EQ (e->size, G);
  CHECK (!e->file);
  CHECK (!e->readonly);
  CHECK (!e->writes_sync);
  CHECK_EQ (e->nr_allow, 5);

  e = cfg_find_export (m, "my disk");
  CHECK (e);
  CHECK_EQ (e->line, 29);
  CHECK_STREQ (group_of (m, e)->name, "bronze");
  CHECK_EQ (e->offset, G);
  CHECK_EQ (e->size, 512 * M);
  CHECK (e->writes_sync);

  e = cfg_find_export (m, "scratch");
  CHECK (e);
  CHECK_STREQ (group_of (m, e)->name, "default");
  CHECK_EQ (e->offset, 1536 * M);
  CHECK_EQ (e->size, 4 * G - 1536 * M);

  e = cfg_find_export (m, "ro1");
  CHECK (e);
  CHECK_STREQ (e->file, "/srv/base.img");
  CHECK (e->readonly);
  CHECK_EQ (e->offset, 0);
  CHECK_EQ (e->size, 0);
  e = cfg_find_export (m, "own");
  CHECK (e);
  CHECK_STREQ (e->file, "conf.d/own.img");
  CHECK (!e->readonly);
  e = cfg_find_export (m, "ro2");
  CHECK (e);
  CHECK_STREQ (e->file, "/srv/base.img");
  CHECK (e->readonly);
  CHECK_NULL (cfg_find_export (m, "nosuch"));
  cfg_free (cfg);
}

static void
test_overrides (void)
{
  static const char text[] =
    DEV
    "queue_depth = 16\n"
    "model.rpm = 5400\n"
    "model.seek_min = 2ms\n"
    "[scheduler]\n"
    "slice_idle = 4ms\n"
    "quantum = 4\n"
    "[export a]\n";
  /* Given before the file is parsed, as nbdkit may do: still wins. */
  static const char *const ovr[] = {
    "slice_idle", "0",
    "queue_depth", "128",
    "file", "/dev/other",
    "model.rpm", "15000",
    "model.seed", "64",
    "target_latency", "1s",
    "target_latency", "150ms",              /* a later override wins */
    "mode", "time",
    NULL,
  };
  struct cfg *cfg = GOOD (text, ovr, G);
  const struct cfg_model *m = cfg_model (cfg);

  CHECK_STREQ (m->dev.file, "/dev/other");
  CHECK_EQ (m->dev.queue_depth, 128);
  CHECK_EQ (m->dev.mode, CFQ_MODE_TIME);
  CHECK_EQ (tunable (m, "slice_idle"), 0);
  CHECK_EQ (tunable (m, "quantum"), 4);
  CHECK_EQ (tunable (m, "target_latency"), 150 * NSEC_PER_MSEC);
  CHECK_EQ (tunable (m, "mode"), CFQ_MODE_TIME);
  CHECK_EQ (m->nr_tunables, 4);
  CHECK_EQ (m->dev.nr_model, 3);
  CHECK_STREQ (m->dev.model[0].key, "rpm");
  CHECK_STREQ (m->dev.model[0].value, "15000");
  CHECK_STREQ (m->dev.model[1].key, "seek_min");
  CHECK_STREQ (m->dev.model[1].value, "2ms");
  CHECK_STREQ (m->dev.model[2].key, "seed");
  CHECK_STREQ (m->dev.model[2].value, "64");
  cfg_free (cfg);

  /* Given after the file: the same. */
  cfg = cfg_new (NULL, NULL);
  CHECK_EQ (cfg_parse (cfg, "t.conf", text, strlen (text)), 0);
  CHECK_EQ (cfg_set_override (cfg, "slice_idle", "2ms"), 0);
  CHECK_EQ (cfg_set_override (cfg, "scheduler", "cfq"), 0);
  CHECK_EQ (cfg_validate (cfg, G), 0);
  CHECK_EQ (tunable (cfg_model (cfg), "slice_idle"), 2 * NSEC_PER_MSEC);
  CHECK_EQ (cfg_model (cfg)->dev.queue_depth, 16);
  cfg_free (cfg);

  /* fifo has no tunables: none are passed on. */
  {
    static const char *const fifo[] = { "scheduler", "fifo", NULL };
    cfg = GOOD (text, fifo, G);
    m = cfg_model (cfg);
    CHECK_STREQ (m->scheduler, "fifo");
    CHECK_EQ (m->nr_tunables, 0);
    cfg_free (cfg);
  }
}

static void
test_regions (void)
{
  struct cfg *cfg;
  const struct cfg_model *m;

  /* Overlap is fine when both are readonly; touching is fine always. */
  cfg = GOOD (DEV "[export a]\nsize = 2G\nreadonly = 1\n"
              "[export b]\noffset = 1G\nsize = 1G\nreadonly = true\n"
              "[export c]\noffset = 4G\nsize = 1G\n"
              "[export d]\noffset = 5G\n", NULL, 6 * G);
  m = cfg_model (cfg);
  CHECK_EQ (m->nr_exports, 4);
  CHECK_EQ (m->exports[1].offset, G);
  CHECK_EQ (m->exports[1].size, G);
  CHECK_EQ (m->exports[3].offset, 5 * G);
  CHECK_EQ (m->exports[3].size, G);
  cfg_free (cfg);

  /* Device exactly filled; last byte beyond by 4K refused. */
  cfg = GOOD (DEV "[export a]\noffset = 1G\nsize = 3G\n", NULL, 4 * G);
  cfg_free (cfg);
  BAD (DEV "[export a]\noffset = 1G\nsize = 3076M\n",
       "t.conf:5: export \"a\" [1G, 4100M) runs past the end of the device"
       " (size 4G)\n");

  /* No region exports: no device needed. */
  cfg = GOOD ("[export a]\nfile = /a.img\n[export b]\nfile = /b.img\n",
              NULL, 0);
  m = cfg_model (cfg);
  CHECK_NULL (m->dev.file);
  CHECK_EQ (m->nr_exports, 2);
  CHECK_STREQ (m->exports[0].file, "/a.img");
  cfg_free (cfg);

  /* A declared "default" group replaces the implicit one. */
  cfg = GOOD (DEV "[group default]\nweight = 200\n[export a]\n", NULL, G);
  m = cfg_model (cfg);
  CHECK_EQ (m->nr_groups, 1);
  CHECK_EQ (m->groups[0].weight, 200);
  CHECK_EQ (m->exports[0].group, 0);
  cfg_free (cfg);

  /* An unused group is kept (the plugin may move clients into it). */
  cfg = GOOD (DEV "[group spare]\n[export a]\n", NULL, G);
  m = cfg_model (cfg);
  CHECK_EQ (m->nr_groups, 2);
  CHECK_STREQ (m->groups[0].name, "spare");
  CHECK_STREQ (m->groups[1].name, "default");
  CHECK_EQ (m->exports[0].group, 1);
  cfg_free (cfg);
}

static void
test_allow (void)
{
  struct cfg *cfg = GOOD (DEV "[export a]\n"
                          "allow = 127.0.0.1 10.1.0.0/16, fd00::/8 ::1 unix\n"
                          "[export b]\nfile = /b\nallow = 0.0.0.0/0\n"
                          "[export c]\nfile = /c\nallow = 192.0.2.128/25\n",
                          NULL, G);
  const struct cfg_model *m = cfg_model (cfg);
  const struct cfg_export *a = &m->exports[0], *b = &m->exports[1],
    *c = &m->exports[2];
  struct sockaddr_in sin = { .sin_family = AF_INET };
  struct sockaddr_in6 sin6 = { .sin6_family = AF_INET6 };
  struct sockaddr_un sun = { .sun_family = AF_UNIX };

  CHECK_EQ (a->nr_allow, 5);
  CHECK_EQ (cfg_export_allows_str (a, "127.0.0.1"), 1);
  CHECK_EQ (cfg_export_allows_str (a, "127.0.0.2"), 0);
  CHECK_EQ (cfg_export_allows_str (a, "10.1.255.7"), 1);
  CHECK_EQ (cfg_export_allows_str (a, "10.2.0.1"), 0);
  CHECK_EQ (cfg_export_allows_str (a, "::1"), 1);
  CHECK_EQ (cfg_export_allows_str (a, "::2"), 0);
  CHECK_EQ (cfg_export_allows_str (a, "fd12:3456::1"), 1);
  CHECK_EQ (cfg_export_allows_str (a, "fe80::1"), 0);
  CHECK_EQ (cfg_export_allows_str (a, "::ffff:127.0.0.1"), 1);  /* mapped */
  CHECK_EQ (cfg_export_allows_str (a, "::ffff:127.0.0.9"), 0);
  CHECK_EQ (cfg_export_allows_str (a, "unix"), 1);
  CHECK_EQ (cfg_export_allows_str (a, "not-an-address"), -EINVAL);

  CHECK_EQ (cfg_export_allows_str (b, "203.0.113.9"), 1);
  CHECK_EQ (cfg_export_allows_str (b, "::1"), 0);
  CHECK_EQ (cfg_export_allows_str (b, "unix"), 0);
  CHECK_EQ (cfg_export_allows_str (c, "192.0.2.128"), 1);
  CHECK_EQ (cfg_export_allows_str (c, "192.0.2.255"), 1);
  CHECK_EQ (cfg_export_allows_str (c, "192.0.2.127"), 0);

  /* The sockaddr form, as nbdkit_peer_name gives it. */
  inet_pton (AF_INET, "10.1.2.3", &sin.sin_addr);
  CHECK_EQ (cfg_export_allows (a, (struct sockaddr *) &sin, sizeof sin), 1);
  CHECK_EQ (cfg_export_allows (a, (struct sockaddr *) &sin, 4), 0);  /* short */
  inet_pton (AF_INET6, "::ffff:10.1.2.3", &sin6.sin6_addr);
  CHECK_EQ (cfg_export_allows (a, (struct sockaddr *) &sin6, sizeof sin6), 1);
  inet_pton (AF_INET6, "2001:db8::1", &sin6.sin6_addr);
  CHECK_EQ (cfg_export_allows (a, (struct sockaddr *) &sin6, sizeof sin6), 0);
  CHECK_EQ (cfg_export_allows (a, (struct sockaddr *) &sun, sizeof sun), 1);
  CHECK_EQ (cfg_export_allows (c, (struct sockaddr *) &sun, sizeof sun), 0);
  cfg_free (cfg);
}

/* ---- values as text: one parser for the config, the control socket and
 * cfqsim (cfq_tunable_parse), in the config's words ---------------------- */

/* The value the config file gives NAME = TEXT, or UINT64_MAX if refused. */
static uint64_t
config_value (const char *name, const char *text)
{
  char conf[256];
  int rc;
  struct cfg *cfg;
  uint64_t v = UINT64_MAX;

  snprintf (conf, sizeof conf, DEV "[scheduler]\n%s = %s\n[export a]\n",
            name, text);
  cfg = load (conf, NULL, G, &rc);
  if (rc == 0)
    v = tunable (cfg_model (cfg), name);
  cfg_free (cfg);
  return v;
}

static void
test_tunable_text (void)
{
  static const struct { const char *name, *text; int rc; uint64_t v; } c[] = {
    { "slice_idle", "8", 0, 8 * NSEC_PER_MSEC },
    { "slice_idle", "1.5ms", 0, 1500 * NSEC_PER_USEC },
    { "slice_idle", "250us", 0, 250 * NSEC_PER_USEC },
    { "slice_idle", "0", 0, 0 },
    { "slice_idle", "8x", -EINVAL, 0 },
    { "slice_idle", "2s", -ERANGE, 0 },
    { "slice_idle", "100ms", 0, 100 * NSEC_PER_MSEC },
    { "slice_idle", "100.001ms", -ERANGE, 0 },
    { "group_idle", "1s", -ERANGE, 0 },
    { "slice_sync", "1s", 0, 1000 * NSEC_PER_MSEC },
    { "slice_sync", "1.5s", -ERANGE, 0 },
    { "fifo_expire_async", "10s", 0, 10000 * NSEC_PER_MSEC },
    { "fifo_expire_async", "60s", -ERANGE, 0 },
    { "target_latency", "1001ms", -ERANGE, 0 },
    /* The case the three parsers disagreed on: accepted everywhere now. */
    { "back_seek_max", "16M", 0, 16384 },
    { "back_seek_max", "16384", 0, 16384 },
    { "back_seek_max", "1000b", -EINVAL, 0 },
    { "back_seek_max", "2T", -ERANGE, 0 },
    { "quantum", "16", 0, 16 },
    { "quantum", "0", -ERANGE, 0 },
    { "quantum", "4k", -EINVAL, 0 },
    { "low_latency", "off", 0, 0 },
    { "low_latency", "yes", 0, 1 },
    { "low_latency", "2", -EINVAL, 0 },
    { "hw_tag", "detect", 0, 2 },
    { "hw_tag", "no", 0, 0 },
    { "hw_tag", "1", 0, 1 },
    { "hw_tag", "3", -ERANGE, 0 },
    { "hw_tag", "maybe", -EINVAL, 0 },
    { "mode", "iops", 0, CFQ_MODE_IOPS },
    { "mode", "time", 0, CFQ_MODE_TIME },
    { "mode", "auto", 0, CFQ_MODE_AUTO },
    { "mode", "fast", -EINVAL, 0 },
    { "nonesuch", "1", -ENOENT, 0 },
  };
  char buf[160];
  uint64_t v;

  for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
    v = 12345;
    CHECK_EQ (cfq_tunable_parse (c[i].name, c[i].text, &v), c[i].rc);
    if (c[i].rc == 0)
      CHECK_EQ (v, c[i].v);
    else
      CHECK_EQ (v, 12345);
    /* The config file takes exactly what the parser takes ("mode" is a
     * [device] key there).
     */
    if (c[i].rc != -ENOENT && strcmp (c[i].name, "mode") != 0)
      CHECK_EQ (config_value (c[i].name, c[i].text),
                c[i].rc == 0 ? c[i].v : UINT64_MAX);
  }

  /* What a refusal says: the config file's words. */
  CHECK_STREQ (cfq_tunable_explain (cfq_tunable_lookup ("slice_idle"), "8x",
                                    -EINVAL, buf, sizeof buf),
               "not a time (want a number with ns, us, ms or s; a bare"
               " number is ms)");
  CHECK_STREQ (cfq_tunable_explain (cfq_tunable_lookup ("slice_idle"), "2s",
                                    -ERANGE, buf, sizeof buf),
               "out of range 0ns..100ms");
  CHECK_STREQ (cfq_tunable_explain (cfq_tunable_lookup ("mode"), "fast",
                                    -EINVAL, buf, sizeof buf),
               "want auto, time or iops");
  CHECK_STREQ (cfq_tunable_explain (cfq_tunable_lookup ("hw_tag"), "x",
                                    -EINVAL, buf, sizeof buf),
               "want detect, no or yes");
  CHECK_STREQ (cfq_tunable_explain (cfq_tunable_lookup ("back_seek_max"),
                                    "1000b", -EINVAL, buf, sizeof buf),
               "not a whole number of KiB");

  /* Format, then parse: every tunable, at both ends of its range. */
  for (size_t i = 0; i < cfq_nr_tunables; i++) {
    const struct cfq_tunable *t = &cfq_tunables[i];
    uint64_t ends[2] = { t->min, t->max };
    for (int e = 0; e < 2; e++) {
      cfq_tunable_format (t, ends[e], buf, sizeof buf);
      CHECK_EQ (cfq_tunable_parse (t->name, buf, &v), 0);
      CHECK_EQ (v, ends[e]);
    }
  }
  CHECK_STREQ (cfq_tunable_format (cfq_tunable_lookup ("back_seek_max"),
                                   16384, buf, sizeof buf), "16M");
  CHECK_STREQ (cfq_tunable_format (cfq_tunable_lookup ("mode"),
                                   CFQ_MODE_IOPS, buf, sizeof buf), "iops");
  CHECK_STREQ (cfq_mode_name (CFQ_MODE_AUTO), "auto");

  /* The control socket's set reads as the config file does. */
  CHECK_EQ (cfg_parse_value ("queue_depth", "64", &v, buf, sizeof buf), 0);
  CHECK_EQ (v, 64);
  CHECK_EQ (cfg_parse_value ("queue_depth", "4097", &v, buf, sizeof buf),
            -EINVAL);
  CHECK_STREQ (buf, "out of range (want 1..4096)");
  CHECK_EQ (cfg_parse_value ("back_seek_max", "16M", &v, buf, sizeof buf),
            0);
  CHECK_EQ (v, 16384);
  CHECK_EQ (cfg_parse_value ("mode", "iops", &v, buf, sizeof buf), 0);
  CHECK_EQ (v, CFQ_MODE_IOPS);
  CHECK_EQ (cfg_parse_value ("slice_idle", "8x", &v, buf, sizeof buf),
            -EINVAL);
  CHECK_STREQ (buf, "not a time (want a number with ns, us, ms or s; a bare"
               " number is ms)");
  CHECK_EQ (cfg_parse_value ("emulate", "hdd", &v, buf, sizeof buf),
            -ENOENT);
  CHECK_EQ (cfg_parse_value ("nonesuch", "1", &v, buf, sizeof buf), -ENOENT);
  CHECK_EQ (cfg_parse_value ("slice_idel", "1", &v, buf, sizeof buf),
            -ENOENT);
  CHECK_STREQ (buf, "unknown key (did you mean 'slice_idle'?)");

  /* [device] mode and the command line take the same text. */
  {
    static const char *const ovr[] = { "mode", "time", NULL };
    static const char *const ovr_bad[] = { "back_seek_max", "16M", NULL };
    struct cfg *cfg = GOOD (DEV "mode = 0\n[export a]\n", NULL, G);
    CHECK_EQ (cfg_model (cfg)->dev.mode, CFQ_MODE_TIME);
    cfg_free (cfg);
    cfg = GOOD (DEV "mode = iops\n[export a]\n", ovr, G);
    CHECK_EQ (cfg_model (cfg)->dev.mode, CFQ_MODE_TIME);
    CHECK_EQ (tunable (cfg_model (cfg), "mode"), CFQ_MODE_TIME);
    cfg_free (cfg);
    cfg = GOOD (DEV "[export a]\n", ovr_bad, G);
    CHECK_EQ (tunable (cfg_model (cfg), "back_seek_max"), 16384);
    cfg_free (cfg);
  }
}

/* ---- [tenant NAME] and [sim] --------------------------------------------- */

/* Parse TEXT as "s.job" for the simulator; *RC from cfg_validate. */
static struct cfg *
load_sim (const char *text, int *rc)
{
  struct cfg *cfg = cfg_new (NULL, NULL);

  CHECK_NOTNULL (cfg);
  cfg_simulate (cfg);
  cfg_parse (cfg, "s.job", text, strlen (text));
  *rc = cfg_validate (cfg, 0);
  return cfg;
}

/* TEXT, for the simulator, fails with exactly the errors WANT. */
static void
sim_bad (int lineno, const char *text, const char *want)
{
  char got[8192];
  int rc;
  struct cfg *cfg = load_sim (text, &rc);

  errors (cfg, got, sizeof got);
  if (rc != -EINVAL || strcmp (got, want) != 0)
    fprintf (stderr, "test-config.c:%d: rc %d\n--- want:\n%s--- got:\n%s",
             lineno, rc, want, got);
  CHECK_EQ (rc, -EINVAL);
  CHECK (strcmp (got, want) == 0);
  cfg_free (cfg);
}
#define SIM_BAD(text, want) sim_bad (__LINE__, text, want)

#define SIM "[device]\nemulate = hdd\n[export e]\nsize = 1G\n"  /* 4 lines */

static void
test_tenants (void)
{
  const struct cfg_model *m;
  const struct cfg_tenant *t;
  struct cfg *cfg;
  int rc;

  /* Defaults: one connection reading sequentially, 4K at depth 1, over
   * the whole export, with its group's class and level; [sim] 10s, seed 1.
   */
  cfg = load_sim ("[device]\nemulate = ssd\n[group g]\nclass = rt\nprio = 2\n"
                  "[export e]\ngroup = g\noffset = 1G\nsize = 2G\n"
                  "[tenant t]\nexport = e\n", &rc);
  CHECK_EQ (rc, 0);
  m = cfg_model (cfg);
  CHECK_EQ (m->dev.size, 512ULL << 30);        /* the ssd model's capacity */
  CHECK_NULL (m->dev.file);
  CHECK_EQ (m->nr_tenants, 1);
  t = &m->tenants[0];
  CHECK_STREQ (t->name, "t");
  CHECK_STREQ (m->exports[t->export].name, "e");
  CHECK_EQ (t->connections, 1);
  CHECK_STREQ (t->rw, "read");
  CHECK (!t->rand);
  CHECK_EQ (t->rwmixread, 100);
  CHECK_EQ (t->skip, 0);
  CHECK_EQ (t->bs, 4096);
  CHECK_EQ (t->iodepth, 1);
  CHECK_EQ (t->thinktime, 0);
  CHECK_EQ (t->rate_iops, 0);
  CHECK_EQ (t->rate, 0);
  CHECK_EQ (t->fsync, 0);
  CHECK_EQ (t->offset, 0);
  CHECK_EQ (t->size, 2 * G);
  CHECK_EQ (t->start, 0);
  CHECK_EQ (t->stop, 0);
  CHECK_EQ (t->cls, SCHED_CLASS_RT);
  CHECK_EQ (t->prio, 2);
  CHECK_EQ (t->line, 10);
  CHECK_EQ (m->sim.duration, 10 * NSEC_PER_SEC);
  CHECK_EQ (m->sim.seed, 1);
  CHECK_EQ (m->sim.line, 0);
  cfg_free (cfg);

  /* Every key, and the export "" by default. */
  cfg = load_sim ("[sim]\nduration = 1.5s\nseed = 42\n"
                  "[device]\nemulate = hdd\nmodel.capacity = 100G\n"
                  "[export]\noffset = 1G\nwrites = sync\n"
                  "[tenant w]\nconnections = 4\nrw = randrw\nrwmixread = 70\n"
                  "bs = 64k\niodepth = 8\nthinktime = 250us\nthinktime_blocks = 32\n"
                  "number_ios = 300\nrate_iops = 100\nrate = 1.5MB/s\nfsync = 8\n"
                  "offset = 1M\nsize = 10G\n"
                  "start = 1s\nstop = 1500ms\nclass = idle\nprio = 7\n"
                  "[tenant s]\nrw = read:192k\nbs = 64k\n", &rc);
  CHECK_EQ (rc, 0);
  m = cfg_model (cfg);
  CHECK_EQ (m->dev.size, 100 * G);
  CHECK_EQ (m->sim.duration, 1500 * NSEC_PER_MSEC);
  CHECK_EQ (m->sim.seed, 42);
  CHECK_EQ (m->sim.line, 1);
  CHECK_EQ (m->nr_tenants, 2);
  t = &m->tenants[0];
  CHECK_STREQ (m->exports[t->export].name, "");
  CHECK_EQ (t->connections, 4);
  CHECK_STREQ (t->rw, "randrw");
  CHECK (t->rand);
  CHECK_EQ (t->rwmixread, 70);
  CHECK_EQ (t->bs, 65536);
  CHECK_EQ (t->iodepth, 8);
  CHECK_EQ (t->thinktime, 250 * NSEC_PER_USEC);
  CHECK_EQ (t->thinktime_blocks, 32);
  CHECK_EQ (t->number_ios, 300);
  CHECK_EQ (t->rate_iops, 100);
  CHECK_EQ (t->rate, 1500000);
  CHECK_EQ (t->fsync, 8);
  CHECK_EQ (t->offset, M);
  CHECK_EQ (t->size, 10 * G);
  CHECK_EQ (t->start, NSEC_PER_SEC);
  CHECK_EQ (t->stop, 1500 * NSEC_PER_MSEC);
  CHECK_EQ (t->cls, SCHED_CLASS_IDLE);
  CHECK_EQ (t->prio, 7);
  t = &m->tenants[1];
  CHECK_STREQ (t->rw, "read");
  CHECK_EQ (t->skip, 192 * 1024);
  CHECK_EQ (t->rwmixread, 100);
  CHECK_EQ (t->size, 99 * G);                  /* the rest of the export */
  CHECK_EQ (t->cls, SCHED_CLASS_BE);
  CHECK_EQ (t->prio, 4);
  cfg_free (cfg);

  /* rw=readwrite is fio's other name of rw; mixed defaults to 50%. */
  cfg = load_sim (SIM "[tenant t]\nexport = e\nrw = readwrite\n", &rc);
  CHECK_EQ (rc, 0);
  CHECK_STREQ (cfg_model (cfg)->tenants[0].rw, "rw");
  CHECK_EQ (cfg_model (cfg)->tenants[0].rwmixread, 50);
  cfg_free (cfg);

  /* Values refused at their line. */
  SIM_BAD (SIM "[tenant t]\nexport = e\nrw = sideways\n",
           "s.job:7: rw = sideways: want read, write, randread, randwrite,"
           " rw or randrw (sequential ones may add :SKIP)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nrw = randread:4k\n",
           "s.job:7: rw = randread:4k: ':SKIP' applies to sequential"
           " patterns only (read, write, rw)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nconnections = 0\n",
           "s.job:7: connections = 0: out of range 1..4096\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\niodepth = lots\n",
           "s.job:7: iodepth = lots: not a number (want 1..1024)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nbs = 1000\n",
           "s.job:7: bs = 1000: not a multiple of 512\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nbs = 64M\n",
           "s.job:7: bs = 64M: out of range 512..32M\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\noffset = 16E\n",
           "s.job:7: offset = 16E: out of range (a size is less than"
           " 16E)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nthinktime = 18446744074s\n",
           "s.job:7: thinktime = 18446744074s: out of range (a time is less"
           " than 2^64 ns, about 584 years)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nrate = 18446744073709551616\n",
           "s.job:7: rate = 18446744073709551616: out of range (a rate is"
           " less than 2^64 bytes/s)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nthinktime_blocks = 0\n",
           "s.job:7: thinktime_blocks = 0: out of range 1..1073741824\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nnumber_ios = 0\n",
           "s.job:7: number_ios = 0: out of range 1..1099511627776\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nthinktime = 5\n",
           "s.job:7: thinktime = 5: not a time (want a number with ns, us,"
           " ms or s)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nrate = 1.5\n",
           "s.job:7: rate = 1.5: not a rate (want " UNITS_EXPECT_RATE ")\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nrwmixread = 101\n",
           "s.job:7: rwmixread = 101: out of range 0..100\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nclass = gold\n",
           "s.job:7: class = gold: want rt, be or idle\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nweight = 100\n",
           "s.job:7: 'weight' belongs in [group NAME], not in [tenant NAME]\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nexport = e\n",
           "s.job:7: duplicate key 'export' (first at line 6)\n");
  SIM_BAD (SIM "[tenant t]\n[tenant t]\n",
           "s.job:6: duplicate section [tenant t] (first at line 5)\n"
           "s.job:5: tenant t: no export = NAME, and no default export"
           " ([export] with no name)\n");
  SIM_BAD (SIM "[tenant]\n", "s.job:5: [tenant] needs a name: [tenant NAME]\n");
  SIM_BAD (SIM "[sim]\nduration = 0s\n[sim]\n",
           "s.job:6: duration = 0s: must be more than 0\n"
           "s.job:7: duplicate section [sim] (first at line 5)\n");
  SIM_BAD (SIM "[sim]\nseed = -1\n",
           "s.job:6: seed = -1: not a number (want 0..18446744073709551615)\n");

  /* What only the whole file shows, at the key responsible. */
  SIM_BAD (SIM "[tenant t]\nexport = f\n",
           "s.job:6: tenant t: export = f: no [export f] section\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\noffset = 1G\n",
           "s.job:7: tenant t: offset 1G is at or beyond the end of export"
           " \"e\" (size 1G)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\noffset = 512M\nsize = 1G\n",
           "s.job:8: tenant t: region [512M, 1536M) runs past the end of"
           " export \"e\" (size 1G)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nsize = 4k\nbs = 8k\n",
           "s.job:7: tenant t: region of 4K is smaller than bs = 8K\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nfsync = 1\n",
           "s.job:7: tenant t: fsync = 1 needs writes (rw = write, randwrite,"
           " rw or randrw)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nrwmixread = 50\n",
           "s.job:7: tenant t: rwmixread applies to rw = rw or randrw (rw is"
           " read)\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nstart = 2s\nstop = 1s\n",
           "s.job:8: tenant t: stop = 1s is not after start = 2s\n");
  SIM_BAD ("[device]\nemulate = hdd\n[export e]\nreadonly = yes\n"
           "[tenant t]\nexport = e\nrw = randwrite\n",
           "s.job:7: tenant t writes (rw = randwrite) but export \"e\" is"
           " readonly\n");
  SIM_BAD ("[device]\nemulate = hdd\n[export e]\nfile = own.img\n"
           "[tenant t]\nexport = e\n",
           "s.job:6: tenant t: export \"e\" has its own file; a tenant needs"
           " an export that is a region of the device\n");
  SIM_BAD ("[device]\nfile = /dev/fake\n[export e]\n[tenant t]\nexport = e\n",
           "s.job:1: the simulator needs a device model: [device] emulate ="
           " hdd, ssd, sata7200, vertex or nvme\n");

  /* cfqsim's old format: each old spelling names the new one. */
  SIM_BAD ("[global]\nduration = 1s\nqueue_depth = 4\n"
           "[device]\nmodel = hdd\nrpm = 5400\nchannels = 2\n"
           "[sched]\npolicy = cfq\nslice_idle = 0\n"
           "[job a]\ndepth = 4\nthink = 1ms\npattern = rand\nlevel = 0\n"
           "stride = 1M\nsync = 1\nmeta = 1\ngroup = g\nrw = read\n",
           "s.job:1: [global] is now [sim] (duration, seed) and [device]"
           " (queue_depth)\n"
           "s.job:3: 'queue_depth' belongs in [device], not in [sim]\n"
           "s.job:5: 'model': [device] model= is now [device] emulate=\n"
           "s.job:6: 'rpm': [device] rpm= is now [device] model.rpm=\n"
           "s.job:7: 'channels': [device] channels= is now [device]"
           " model.channels=\n"
           "s.job:8: [sched] is now [scheduler] (and policy= is now"
           " scheduler=)\n"
           "s.job:9: 'policy': [sched] policy= is now [scheduler]"
           " scheduler=\n"
           "s.job:11: [job NAME] is now [tenant NAME], in fio's terms"
           " (export=, rw=, bs=, iodepth=, thinktime=, fsync=)\n"
           "s.job:12: 'depth': [job] depth= is now [tenant] iodepth=\n"
           "s.job:13: 'think': [job] think= is now [tenant] thinktime=\n"
           "s.job:14: 'pattern': [job] pattern= is now part of [tenant] rw="
           " (read, write, randread, randwrite, rw or randrw)\n"
           "s.job:15: 'level': [job] level= is now [tenant] prio=\n"
           "s.job:16: 'stride': [job] stride= is now [tenant] rw=read:SKIP"
           " (fio's: SKIP = stride - bs)\n"
           "s.job:17: 'sync': [job] sync=1 is now [export NAME] writes=sync"
           " on the tenant's export\n"
           "s.job:18: 'meta': [job] meta= is gone (NBD has no metadata"
           " flag)\n"
           "s.job:19: 'group': [job] group= is now [tenant] export=NAME, and"
           " that [export NAME] names the group\n"
           "s.job:4: the simulator needs a device model: [device] emulate ="
           " hdd, ssd, sata7200, vertex or nvme\n"
           "s.job: no [export NAME] section: nothing to serve\n");

  /* The server reads the same file: it checks the tenants against the
   * real device and otherwise ignores them.
   */
  cfg = GOOD (DEV "[export e]\nsize = 1G\n[tenant t]\nexport = e\n"
              "rw = randread\n[sim]\nduration = 5s\n", NULL, 4 * G);
  CHECK_EQ (cfg_model (cfg)->nr_tenants, 1);
  CHECK_EQ (cfg_model (cfg)->tenants[0].size, G);
  CHECK_EQ (cfg_model (cfg)->dev.size, 4 * G);
  CHECK_EQ (cfg_model (cfg)->sim.duration, 5 * NSEC_PER_SEC);
  cfg_free (cfg);
  BAD (DEV "[export e]\nsize = 1G\n[tenant t]\nexport = e\noffset = 2G\n",
       "t.conf:7: tenant t: offset 2G is at or beyond the end of export"
       " \"e\" (size 1G)\n");
}

/* [event NAME] and a tenant's workload: what the fairness lab applies and
 * runs, checked once like everything else.
 */
static void
test_events (void)
{
  const struct cfg_model *m;
  struct cfg *cfg;
  int rc;

  cfg = load_sim ("[sim]\nduration = 20s\n[device]\nemulate = ssd\n"
                  "[group a]\n[group b]\n"
                  "[export x]\ngroup = a\nsize = 1G\n"
                  "[export y]\ngroup = b\noffset = 1G\nsize = 1G\n"
                  "[tenant t]\nexport = x\nrw = randwrite\nworkload = fs_mark\n"
                  "[tenant u]\nexport = y\n"
                  "[event late]\nat = 10s\ncommand = \"weight b 800\"\n"
                  "[event early]\nat = 2.5s\ncommand = set slice_idle 2ms\n"
                  "[event depth]\nat = 10s\ncommand = set queue_depth 4\n",
                  &rc);
  CHECK_EQ (rc, 0);
  m = cfg_model (cfg);
  CHECK_EQ (m->tenants[0].workload, CFG_WORKLOAD_FS_MARK);
  CHECK_EQ (m->tenants[1].workload, CFG_WORKLOAD_FIO);
  CHECK_STREQ (cfg_workload_names[CFG_WORKLOAD_FSYNC_TESTER], "fsync-tester");
  CHECK_EQ (m->nr_events, 3);
  /* In order of time, file order on a tie. */
  CHECK_STREQ (m->events[0].name, "early");
  CHECK_EQ (m->events[0].at, 2500 * 1000000ULL);
  CHECK_EQ (m->events[0].kind, CFG_EVENT_SET);
  CHECK_STREQ (m->events[0].key, "slice_idle");
  CHECK_EQ (m->events[0].value, 2000000);
  CHECK_STREQ (m->events[0].command, "set slice_idle 2ms");
  CHECK_STREQ (m->events[1].name, "late");
  CHECK_EQ (m->events[1].kind, CFG_EVENT_WEIGHT);
  CHECK_EQ (m->events[1].group, 1);
  CHECK_EQ (m->events[1].weight, 800);
  CHECK_STREQ (m->events[1].command, "weight b 800");
  CHECK_STREQ (m->events[2].name, "depth");
  CHECK_STREQ (m->events[2].key, "queue_depth");
  CHECK_EQ (m->events[2].value, 4);
  cfg_free (cfg);

  SIM_BAD (SIM "[sim]\nduration = 5s\n[event e]\nat = 5s\ncommand = weight"
           " default 200\n",
           "s.job:8: event e: at = 5s is not before the end of the run ([sim]"
           " duration = 5s)\n");
  SIM_BAD (SIM "[event e]\ncommand = weight default 200\n",
           "s.job:5: [event e] needs at = TIME\n");
  SIM_BAD (SIM "[event e]\nat = 1s\n",
           "s.job:5: [event e] needs command = \"weight GROUP N\" or \"set"
           " KEY VALUE\"\n");
  SIM_BAD (SIM "[event e]\nat = 1s\ncommand = weight gold 200\n",
           "s.job:7: event e: command = weight gold 200: no [group gold]\n");
  SIM_BAD (SIM "[event e]\nat = 1s\ncommand = weight default 2000\n",
           "s.job:7: event e: command = weight default 2000: weight 2000 is"
           " out of range 100..1000\n");
  SIM_BAD (SIM "[event e]\nat = 1s\ncommand = set slice_idle 2 s\n",
           "s.job:7: event e: command = set slice_idle 2 s: want \"weight"
           " GROUP N\" or \"set KEY VALUE\"\n");
  SIM_BAD (SIM "[event e]\nat = 1s\ncommand = set slice_idle 2h\n",
           "s.job:7: event e: command = set slice_idle 2h: not a time (want a"
           " number with ns, us, ms or s; a bare number is ms)\n");
  SIM_BAD (SIM "[event e]\nat = 1s\ncommand = set emulate hdd\n",
           "s.job:7: event e: command = set emulate hdd: 'emulate' cannot be"
           " set while running (a CFQ tunable or queue_depth)\n");
  SIM_BAD (SIM "[event e]\nat = 1s\nwhen = 2s\n",
           "s.job:7: unknown key 'when' in [event NAME] (want at or"
           " command)\n"
           "s.job:5: [event e] needs command = \"weight GROUP N\" or \"set"
           " KEY VALUE\"\n");
  SIM_BAD (SIM "[event]\n[event e]\nat = 1s\n[event e]\n",
           "s.job:5: [event] needs a name: [event NAME]\n"
           "s.job:8: duplicate section [event e] (first at line 6)\n"
           "s.job:6: [event e] needs command = \"weight GROUP N\" or \"set"
           " KEY VALUE\"\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nat = 1s\n",
           "s.job:7: 'at' belongs in [event NAME], not in [tenant NAME]\n");

  SIM_BAD (SIM "[tenant t]\nexport = e\nworkload = bonnie\n",
           "s.job:7: workload = bonnie: want fio, fs_mark, fsync-tester, dd"
           " or mmap\n");
  SIM_BAD (SIM "[tenant t]\nexport = e\nworkload = dd\nrw = write\n"
           "[tenant u]\nexport = e\n",
           "s.job:7: tenant t: workload = dd needs export \"e\" for itself,"
           " but tenant u uses it too\n");
  SIM_BAD ("[device]\nemulate = hdd\n[export e]\nreadonly = yes\n"
           "[tenant t]\nexport = e\nworkload = mmap\nrw = randread\n",
           "s.job:7: tenant t: workload = mmap makes a file system on export"
           " \"e\", which is readonly\n");
}

/* cfg_apply: groups and tunables on a live scheduler, as the model says. */
static void
test_apply (void)
{
  struct cfg *cfg = GOOD (DEV "[scheduler]\nslice_idle = 0\nquantum = 4\n"
                          "[group a]\nweight = 200\n[group b]\nweight = 800\n"
                          "[export x]\ngroup = a\nsize = 1G\n"
                          "[export y]\ngroup = b\noffset = 1G\n", NULL, 4 * G);
  const struct cfg_model *m = cfg_model (cfg);
  struct sched *s = sched_create (sched_lookup ("cfq"));
  struct sched_group *g[2] = { NULL, NULL };
  struct cfq_group_stats st;
  char why[256] = "";
  uint64_t v;

  CHECK_NOTNULL (s);
  CHECK_EQ (m->nr_groups, 2);
  CHECK_EQ (cfg_apply (m, s, 0, g, why, sizeof why), 0);
  CHECK_STREQ (why, "");
  CHECK_EQ (sched_get (s, "slice_idle", &v), 0);
  CHECK_EQ (v, 0);
  CHECK_EQ (sched_get (s, "quantum", &v), 0);
  CHECK_EQ (v, 4);
  CHECK_EQ (sched_get (s, "rotational", &v), 0);
  CHECK_EQ (v, 0);                             /* the device's nature */
  CHECK_NOTNULL (g[0]);
  CHECK_NOTNULL (g[1]);
  cfq_group_get_stats (s, g[0], &st);
  CHECK_EQ (st.weight, 200);
  cfq_group_get_stats (s, g[1], &st);
  CHECK_EQ (st.weight, 800);
  sched_destroy (s);
  cfg_free (cfg);

  /* A configured rotational wins over the device's. */
  {
    static const char *const ovr[] = { "rotational", "1", NULL };
    cfg = GOOD (DEV "[export x]\n", ovr, G);
    s = sched_create (sched_lookup ("cfq"));
    g[0] = NULL;
    CHECK_EQ (cfg_apply (cfg_model (cfg), s, 0, g, why, sizeof why), 0);
    CHECK_EQ (sched_get (s, "rotational", &v), 0);
    CHECK_EQ (v, 1);
    sched_destroy (s);
    cfg_free (cfg);
  }

  /* cache = page: the scheduler's device is the page cache, which does
   * not seek and queues, whatever the disk under it is; a device model in
   * front is what the scheduler sees instead; configured values win.
   */
  {
    static const char *const page[] = { "cache", "page", NULL };
    static const char *const page_emu[] = { "cache", "page", "emulate", "hdd",
                                            NULL };
    static const char *const page_cfg[] = { "cache", "page", "hw_tag",
                                            "detect", "rotational", "1",
                                            NULL };

    cfg = GOOD (DEV "[export x]\n", page, G);
    CHECK_EQ (cfg_rotational (cfg_model (cfg), 1), 0);
    CHECK_EQ (cfg_rotational (cfg_model (cfg), -1), 0);
    s = sched_create (sched_lookup ("cfq"));
    CHECK_EQ (cfg_apply (cfg_model (cfg), s, 1, g, why, sizeof why), 0);
    CHECK_EQ (sched_get (s, "rotational", &v), 0);
    CHECK_EQ (v, 0);
    CHECK_EQ (sched_get (s, "hw_tag", &v), 0);
    CHECK_EQ (v, 1);
    sched_destroy (s);
    cfg_free (cfg);

    cfg = GOOD (DEV "[export x]\n", page_emu, G);
    CHECK_EQ (cfg_rotational (cfg_model (cfg), 1), 1);
    s = sched_create (sched_lookup ("cfq"));
    CHECK_EQ (cfg_apply (cfg_model (cfg), s, 1, g, why, sizeof why), 0);
    CHECK_EQ (sched_get (s, "rotational", &v), 0);
    CHECK_EQ (v, 1);
    CHECK_EQ (sched_get (s, "hw_tag", &v), 0);
    CHECK_EQ (v, 2);                           /* detect, as ever */
    sched_destroy (s);
    cfg_free (cfg);

    cfg = GOOD (DEV "[export x]\n", page_cfg, G);
    s = sched_create (sched_lookup ("cfq"));
    CHECK_EQ (cfg_apply (cfg_model (cfg), s, 1, g, why, sizeof why), 0);
    CHECK_EQ (sched_get (s, "rotational", &v), 0);
    CHECK_EQ (v, 1);
    CHECK_EQ (sched_get (s, "hw_tag", &v), 0);
    CHECK_EQ (v, 2);
    sched_destroy (s);
    cfg_free (cfg);

    /* Without cache = page the detected value stands. */
    cfg = GOOD (DEV "[export x]\n", NULL, G);
    CHECK_EQ (cfg_rotational (cfg_model (cfg), 1), 1);
    CHECK_EQ (cfg_rotational (cfg_model (cfg), -1), -1);
    cfg_free (cfg);
  }

  /* fifo: no tunables, the groups all the same. */
  {
    static const char *const ovr[] = { "scheduler", "fifo", NULL };
    cfg = GOOD (DEV "[scheduler]\nslice_idle = 0\n[export x]\n", ovr, G);
    CHECK_EQ (cfg_model (cfg)->nr_tunables, 0);
    s = sched_create (sched_lookup ("fifo"));
    CHECK_EQ (cfg_apply (cfg_model (cfg), s, 1, g, why, sizeof why), 0);
    CHECK_NOTNULL (g[0]);
    sched_destroy (s);
    cfg_free (cfg);
  }
}

/* Names that reach clients, JSON and logs are valid UTF-8
 * without control characters (refused at their line, without echoing the
 * bytes); tls= and the connection limits.
 */
static void
test_hardening (void)
{
  const struct cfg_model *m;
  struct cfg *cfg;

  /* Not UTF-8: a lone continuation byte, a Latin-1 byte, an overlong '/',
   * a UTF-16 surrogate, a code point past U+10FFFF, a cut sequence.
   */
  BAD (DEV "[export a\x80" "b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0x80 at byte 1)\n"
       "t.conf: no [export NAME] section: nothing to serve\n");
  BAD (DEV "[export caf\xe9]\n[export b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0xe9 at byte 3)\n");
  BAD (DEV "[export \xc0\xaf" "etc]\n[export b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0xc0 at byte 0)\n");
  BAD (DEV "[export x\xed\xa0\x80]\n[export b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0xed at byte 1)\n");
  BAD (DEV "[export \xf4\x90\x80\x80]\n[export b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0xf4 at byte 0)\n");
  BAD (DEV "[export \"ab\xe2\x82\"]\n[export b]\n",
       "t.conf:3: section name is not valid UTF-8 (byte 0xe2 at byte 2)\n");
  /* Control characters: C0 (a tab in quotes, ESC), DEL, C1 (U+0085). */
  BAD (DEV "[export \"a\tb\"]\n[export b]\n",
       "t.conf:3: control character U+0009 in section name (at byte 1)\n");
  BAD (DEV "[export a\x1b[31m]\n[export b]\n",
       "t.conf:3: control character U+001B in section name (at byte 1)\n");
  BAD (DEV "[export a\x7f]\n[export b]\n",
       "t.conf:3: control character U+007F in section name (at byte 1)\n");
  BAD (DEV "[export a\xc2\x85]\n[export b]\n",
       "t.conf:3: control character U+0085 in section name (at byte 1)\n");
  /* Real UTF-8 is welcome: é, €, 𝄞, and a space. */
  cfg = GOOD (DEV "[export caf\xc3\xa9 \xe2\x82\xac\xf0\x9d\x84\x9e]\n",
              NULL, G);
  m = cfg_model (cfg);
  CHECK_EQ (m->nr_exports, 1);
  CHECK_STREQ (m->exports[0].name, "caf\xc3\xa9 \xe2\x82\xac\xf0\x9d\x84\x9e");
  /* Defaults: TLS optional, no per-export limit, 1024 in total. */
  CHECK (!m->exports[0].tls_required);
  CHECK_EQ (m->exports[0].max_connections, 0);
  CHECK_EQ (m->dev.max_connections, CFG_MAX_CONNECTIONS_DEFAULT);
  CHECK_EQ (CFG_MAX_CONNECTIONS_DEFAULT, 1024);
  cfg_free (cfg);

  /* tls = optional | require; connection limits in [device] and
   * [export], the [device] one also from the command line.
   */
  {
    static const char *const ovr[] = { "max_connections", "300", NULL };

    cfg = GOOD (DEV "max_connections = 200\n[export a]\ntls = require\n"
                "max_connections = 5\nsize = 1G\n[export b]\noffset = 1G\n"
                "tls = optional\n", NULL, 4 * G);
    m = cfg_model (cfg);
    CHECK_EQ (m->dev.max_connections, 200);
    CHECK (m->exports[0].tls_required);
    CHECK_EQ (m->exports[0].max_connections, 5);
    CHECK (!m->exports[1].tls_required);
    CHECK_EQ (m->exports[1].max_connections, 0);
    cfg_free (cfg);
    cfg = GOOD (DEV "max_connections = 200\n[export a]\n", ovr, G);
    CHECK_EQ (cfg_model (cfg)->dev.max_connections, 300);
    cfg_free (cfg);
  }
  BAD (DEV "[export a]\ntls = yes\n",
       "t.conf:4: tls = yes: want optional or require\n");
  BAD (DEV "[export a]\ntls = require\ntls = require\n",
       "t.conf:5: duplicate key 'tls' (first at line 4)\n");
  BAD (DEV "[export a]\nmax_connections = 0\n",
       "t.conf:4: max_connections = 0: out of range (want 1..1000000)\n");
  BAD (DEV "[export a]\nmax_connections = lots\n",
       "t.conf:4: max_connections = lots: not a number (want 1..1000000)\n");
  BAD (DEV "max_connections = 1000001\n[export a]\n",
       "t.conf:3: max_connections = 1000001: out of range (want"
       " 1..1000000)\n");
  BAD (DEV "[group g]\nmax_connections = 3\n[export a]\n",
       "t.conf:4: 'max_connections' belongs in [device] or [export NAME],"
       " not in [group NAME]\n");
  BAD (DEV "[scheduler]\ntls = require\n[export a]\n",
       "t.conf:4: 'tls' belongs in [export NAME], not in [scheduler]\n");

  /* [device] buffer_pool: 256M unless given, in the file or on the
   * command line (the plugin's buffer_pool=, an override), from the
   * largest request and its edge blocks (33M) to 64G.
   */
  {
    static const char *const ovr[] = { "buffer_pool", "1G", NULL };
    static const struct {
      const char *text;
      const char *const *ovr;
      uint64_t want;
    } pools[] = {
      { DEV "[export a]\n", NULL, (uint64_t) 256 << 20 },
      { DEV "buffer_pool = 33M\n[export a]\n", NULL, (uint64_t) 33 << 20 },
      { DEV "buffer_pool = 64G\nmemory = 65G\n[export a]\n", NULL,
        (uint64_t) 64 << 30 },
      { DEV "buffer_pool = 64M\n[export a]\n", ovr, (uint64_t) 1 << 30 },
    };

    for (size_t i = 0; i < sizeof pools / sizeof pools[0]; i++) {
      cfg = GOOD (pools[i].text, pools[i].ovr, G);
      CHECK_EQ (cfg_model (cfg)->dev.buffer_pool, pools[i].want);
      cfg_free (cfg);
    }
  }
  BAD (DEV "buffer_pool = 32M\n[export a]\n",
       "t.conf:3: buffer_pool = 32M: out of range (want 33M..64G: at least"
       " the largest request, 32M, and its edge blocks)\n");
  BAD (DEV "buffer_pool = 65G\n[export a]\n",
       "t.conf:3: buffer_pool = 65G: out of range (want 33M..64G: at least"
       " the largest request, 32M, and its edge blocks)\n");
  BAD (DEV "buffer_pool = 16E\n[export a]\n",
       "t.conf:3: buffer_pool = 16E: out of range (want 33M..64G: at least"
       " the largest request, 32M, and its edge blocks)\n");
  BAD (DEV "buffer_pool = lots\n[export a]\n",
       "t.conf:3: buffer_pool = lots: not a size (want 33M..64G: at least"
       " the largest request, 32M, and its edge blocks)\n");
  BAD (DEV "[export a]\nbuffer_pool = 64M\n",
       "t.conf:4: 'buffer_pool' belongs in [device], not in [export NAME]\n");

  /* [device] memory: 2G unless given; it must hold buffer_pool, the
   * connections at 256K each, 64M for the process and 64M of requests.
   */
  {
    static const char *const ovr[] = { "memory", "1G", NULL };
    struct cfg_memory mp;

    cfg = GOOD (DEV "[export a]\n", NULL, G);
    CHECK_EQ (cfg_model (cfg)->dev.memory, (uint64_t) 2 << 30);
    CHECK_EQ (cfg_model (cfg)->dev.reply_timeout, (uint64_t) 60000000000);
    cfg_memory_parts (&cfg_model (cfg)->dev, &mp);
    CHECK_EQ (mp.pool, (uint64_t) 256 << 20);
    CHECK_EQ (mp.conns, (uint64_t) 1024 * (256 << 10));
    CHECK_EQ (mp.base, (uint64_t) 64 << 20);
    CHECK_EQ (mp.requests, ((uint64_t) 2 << 30) - (576u << 20));
    cfg_free (cfg);
    /* Exactly the parts and 64M of requests: accepted. */
    cfg = GOOD (DEV "buffer_pool = 64M\nmax_connections = 4\n"
                "memory = 193M\n[export a]\n", NULL, G);
    cfg_memory_parts (&cfg_model (cfg)->dev, &mp);
    CHECK_EQ (mp.requests, (uint64_t) 64 << 20);
    cfg_free (cfg);
    cfg = GOOD (DEV "memory = 4G\n[export a]\n", ovr, G);
    CHECK_EQ (cfg_model (cfg)->dev.memory, (uint64_t) 1 << 30);
    cfg_free (cfg);
  }
  BAD (DEV "buffer_pool = 64M\nmax_connections = 4\nmemory = 192M\n"
       "[export a]\n",
       "t.conf:5: memory = 192M is less than its parts: buffer_pool 64M + "
       "max_connections 4 x 256K + 64M for the process + at least 64M for "
       "requests in flight; raise memory, or lower buffer_pool or "
       "max_connections\n");
  /* No memory line: the error goes to the part that was set. */
  BAD (DEV "buffer_pool = 2G\n[export a]\n",
       "t.conf:3: memory = 2G is less than its parts: buffer_pool 2G + "
       "max_connections 1024 x 256K + 64M for the process + at least 64M "
       "for requests in flight; raise memory, or lower buffer_pool or "
       "max_connections\n");
  BAD (DEV "memory = lots\n[export a]\n",
       "t.conf:3: memory = lots: not a size (want a size up to 1024T)\n");

  /* [device] reply_timeout: 60s unless given; 0 (none) or 1s..3600s. */
  cfg = GOOD (DEV "reply_timeout = 0\n[export a]\n", NULL, G);
  CHECK_EQ (cfg_model (cfg)->dev.reply_timeout, 0);
  cfg_free (cfg);
  cfg = GOOD (DEV "reply_timeout = 2s\n[export a]\n", NULL, G);
  CHECK_EQ (cfg_model (cfg)->dev.reply_timeout, (uint64_t) 2000000000);
  cfg_free (cfg);
  BAD (DEV "reply_timeout = 500ms\n[export a]\n",
       "t.conf:3: reply_timeout = 500ms: out of range (want 0 for none, or "
       "1s..3600s)\n");
  BAD (DEV "[scheduler]\nreply_timeout = 5s\n[export a]\n",
       "t.conf:4: 'reply_timeout' belongs in [device], not in [scheduler]\n");
}

int
main (void)
{
  test_malformed ();
  test_defaults ();
  test_cfq_table ();
  test_full ();
  test_overrides ();
  test_regions ();
  test_allow ();
  test_tunable_text ();
  test_tenants ();
  test_events ();
  test_apply ();
  test_hardening ();
  if (failures) {
    fprintf (stderr, "%d failures\n", failures);
    return 1;
  }
  printf ("ok\n");
  check_done ("test-config");
  return 0;
}
