/* test-config-qos.c: the [group] caps and reservations in the config
 * (core/config.c with include/qos.h's table): values in their units, every
 * bad one refused as "FILE:LINE: message", a cap below a reservation and
 * QoS under fifo refused, and reservations beyond what the emulated device
 * gives warned about.  The latency target and boost keys
 * (include/latency.h's table) the same way.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config.h"
#include "qos.h"

#define G (1ULL << 30)
#define DEV "[device]\nfile = /dev/fake\n"
#define EXP "[export a]\ngroup = g\nsize = 1G\n"

static struct cfg *
load (const char *text, const char *ovr_key, const char *ovr_val, int *rc)
{
  struct cfg *cfg = cfg_new (NULL, NULL);

  CHECK_NOTNULL (cfg);
  if (ovr_key)
    cfg_set_override (cfg, ovr_key, ovr_val);
  cfg_parse (cfg, "t.conf", text, strlen (text));
  *rc = cfg_validate (cfg, 4 * G);
  return cfg;
}

/* TEXT fails with exactly the errors WANT (one per line). */
static void
bad (const char *text, const char *ovr_key, const char *ovr_val,
     const char *want)
{
  char got[4096] = "";
  int rc;
  struct cfg *cfg = load (text, ovr_key, ovr_val, &rc);

  for (size_t i = 0; i < cfg_nr_errors (cfg); i++) {
    strncat (got, cfg_error (cfg, i), sizeof got - strlen (got) - 2);
    strcat (got, "\n");
  }
  CHECK_EQ (rc, -EINVAL);
  CHECK_STREQ (got, want);
  CHECK_NULL (cfg_model (cfg));
  cfg_free (cfg);
}

static struct cfg *
good (const char *text)
{
  int rc;
  struct cfg *cfg = load (text, NULL, NULL, &rc);

  if (rc != 0)
    for (size_t i = 0; i < cfg_nr_errors (cfg); i++)
      fprintf (stderr, "%s\n", cfg_error (cfg, i));
  CHECK_EQ (rc, 0);
  CHECK_NOTNULL (cfg_model (cfg));
  return cfg;
}

static uint64_t
val (const struct qos_conf *c, const char *key)
{
  return qos_conf_get (c, qos_key_lookup (key));
}

static void
test_values (void)
{
  struct cfg *cfg = good (DEV "[group g]\n"
                          "weight = 200\n"
                          "iops_max = 1000\n"
                          "iops_max_burst = 5000\n"
                          "iops_max_burst_seconds = 1.5s\n"
                          "read_bps_max = 100M\n"
                          "read_bps_max_burst = 1G\n"
                          "read_bps_max_burst_seconds = 250ms\n"
                          "write_iops_max = 0\n"
                          "iops_min = 100\n"
                          "bps_min = 4096\n"
                          "scope = global\n"
                          "[group plain]\n" EXP
                          "[export b]\ngroup = plain\noffset = 1G\n");
  const struct cfg_model *m = cfg_model (cfg);
  const struct qos_conf *c = &m->groups[0].qos;

  CHECK_EQ (m->nr_groups, (size_t) 2);
  CHECK_EQ (m->groups[0].weight, 200u);
  CHECK_EQ (c->cap[QOS_IOPS_MAX].rate, 1000);
  CHECK_EQ (c->cap[QOS_IOPS_MAX].burst, 5000);
  CHECK_EQ (c->cap[QOS_IOPS_MAX].burst_ns, 1500 * NSEC_PER_MSEC);
  CHECK_EQ (c->cap[QOS_READ_BPS_MAX].rate, 100000000);   /* a rate: MB/s */
  CHECK_EQ (c->cap[QOS_READ_BPS_MAX].burst, 1000000000);
  CHECK_EQ (c->cap[QOS_READ_BPS_MAX].burst_ns, 250 * NSEC_PER_MSEC);
  CHECK_EQ (c->cap[QOS_WRITE_IOPS_MAX].rate, 0);
  CHECK_EQ (c->iops_min, 100);
  CHECK_EQ (c->bps_min, 4096);
  CHECK (qos_conf_empty (&m->groups[1].qos));
  CHECK (m->groups[0].global);
  CHECK (!m->groups[1].global);
  CHECK_EQ (cfg_nr_warnings (cfg), (size_t) 0);   /* no emulation */
  cfg_free (cfg);
}

static void
test_errors (void)
{
  /* Bad values, at their lines, all of them. */
  bad (DEV "[group g]\n"
       "iops_max = abc\n"
       "bps_max = 10Q\n"
       "iops_min = 20000000\n"
       "read_iops_max_burst_seconds = soon\n"
       "bps_min = 2T\n"
       "iops_max = 5\n" EXP, NULL, NULL,
       "t.conf:4: iops_max = abc: not a number (requests per second)\n"
       "t.conf:5: bps_max = 10Q: not a rate (bytes/s: a number with an"
       " optional k, m, g, t or p (powers of 1000) or Ki, Mi, Gi, Ti, Pi"
       " (powers of 1024), then B/s)\n"
       "t.conf:6: iops_min = 20000000: out of range 1..10000000 (0: none)\n"
       "t.conf:7: read_iops_max_burst_seconds = soon: not a time (want a"
       " number with ns, us, ms or s)\n"
       "t.conf:8: bps_min = 2T: out of range 1..1Ti (0: none)\n"
       "t.conf:9: duplicate key 'iops_max' (first at line 4)\n");
  /* A bare number of seconds needs its unit; 0 alone does not. */
  bad (DEV "[group g]\n"
       "iops_max = 100\n"
       "iops_max_burst = 200\n"
       "iops_max_burst_seconds = 10\n" EXP, NULL, NULL,
       "t.conf:6: iops_max_burst_seconds = 10: needs its unit (10s for"
       " seconds, 10ms for milliseconds)\n");
  /* Past 64 bits: out of range, not a matter of syntax. */
  bad (DEV "[group g]\n"
       "iops_max = 99999999999999999999\n"
       "bps_max = 18446744073709551616\n" EXP, NULL, NULL,
       "t.conf:4: iops_max = 99999999999999999999: out of range"
       " 1..10000000 (0: none)\n"
       "t.conf:5: bps_max = 18446744073709551616: out of range 1M..1Ti"
       " (0: none)\n");
  /* In the wrong section. */
  bad (DEV "[group g]\n" EXP "iops_max = 5\n", NULL, NULL,
       "t.conf:7: 'iops_max' belongs in [group NAME], not in [export NAME]\n");
  /* A cap below a reservation, at the reservation's line; bursts. */
  bad (DEV "[group g]\n"
       "read_iops_max = 100\n"
       "iops_min = 150\n"
       "write_bps_max = 1M\n"
       "bps_min = 2M\n"
       "bps_max_burst = 1G\n"
       "iops_max = 500\n"
       "iops_max_burst = 400\n"
       "write_iops_max_burst_seconds = 2s\n" EXP, NULL, NULL,
       "t.conf:10: iops_max_burst = 400, iops_max = 500 (line 9): a burst"
       " rate is at least its cap\n"
       "t.conf:11: write_iops_max_burst_seconds = 2s: needs"
       " write_iops_max_burst\n"
       "t.conf:8: bps_max_burst = 1G: needs bps_max (the cap the burst is"
       " above)\n"
       "t.conf:5: iops_min = 150, read_iops_max = 100 (line 4): a cap below"
       " a reservation can never give it\n"
       "t.conf:7: bps_min = 2M, write_bps_max = 1M (line 6): a cap below a"
       " reservation can never give it\n");
  /* A cap in bytes below its floor (1M), with the hold it would mean;
   * the floor itself is fine, and a reservation has none.
   */
  bad (DEV "[group g]\n"
       "bps_max = 1\n"
       "read_bps_max = 999999\n"
       "write_bps_max = 512KiB/s\n" EXP, NULL, NULL,
       "t.conf:4: bps_max = 1: below the floor of 1M: at the floor one"
       " request of the largest size (32 MiB) waits up to 34 s for its"
       " tokens, under a lower cap longer (0: no cap)\n"
       "t.conf:5: read_bps_max = 999999: below the floor of 1M: at the floor"
       " one request of the largest size (32 MiB) waits up to 34 s for its"
       " tokens, under a lower cap longer (0: no cap)\n"
       "t.conf:6: write_bps_max = 512KiB/s: below the floor of 1M: at the"
       " floor one request of the largest size (32 MiB) waits up to 34 s for"
       " its tokens, under a lower cap longer (0: no cap)\n");
  cfg_free (good (DEV "[group g]\nbps_max = 1M\nbps_min = 1\n" EXP));
  /* Equal is fine. */
  cfg_free (good (DEV "[group g]\niops_max = 100\niops_min = 100\n" EXP));
  /* fifo has none, from the file or the command line. */
  bad (DEV "[scheduler]\nscheduler = fifo\n[group g]\nweight = 300\n"
       "bps_max = 1M\niops_min = 5\n" EXP, NULL, NULL,
       "t.conf:7: bps_max: caps and reservations need scheduler = cfq (fifo"
       " serves in arrival order, with no per-group queues to hold back or"
       " to serve first)\n");
  bad (DEV "[group g]\niops_min = 5\n" EXP, "scheduler", "fifo",
       "t.conf:4: iops_min: caps and reservations need scheduler = cfq (fifo"
       " serves in arrival order, with no per-group queues to hold back or"
       " to serve first)\n");
}

/* Emulation: reservations beyond the model's rate are a warning, at the
 * line of the last reservation counted; the config still loads.
 */
static void
test_warnings (void)
{
  const char *ssd = "[device]\nfile = /dev/fake\nemulate = ssd\n"
    "model.channels = 1\nmodel.read = 2ms\n";   /* ~500 random reads/s */
  char text[1024];
  struct cfg *cfg;

  snprintf (text, sizeof text, "%s[group g]\niops_min = 300\n[group h]\n"
            "iops_min = 300\n" EXP "[export b]\ngroup = h\noffset = 1G\n",
            ssd);
  cfg = good (text);
  CHECK_EQ (cfg_nr_warnings (cfg), (size_t) 1);
  printf ("  %s\n", cfg_warning (cfg, 0));
  {
    const char *want = "t.conf:9: warning: the reservations add up to 600"
      " requests/s (iops_min), more than the emulated ssd gives (about 499"
      " random 4K reads/s at queue_depth 32)";
    CHECK (strncmp (cfg_warning (cfg, 0), want, strlen (want)) == 0);
  }
  cfg_free (cfg);

  snprintf (text, sizeof text, "%s[group g]\niops_min = 400\n" EXP, ssd);
  cfg = good (text);
  CHECK_EQ (cfg_nr_warnings (cfg), (size_t) 0);
  cfg_free (cfg);

  /* Bytes: the disk's 150 MB/s of sequential reads. */
  cfg = good ("[device]\nfile = /dev/fake\nemulate = hdd\n"
              "[group g]\nbps_min = 200M\n" EXP);
  CHECK_EQ (cfg_nr_warnings (cfg), (size_t) 1);
  printf ("  %s\n", cfg_warning (cfg, 0));
  CHECK (strstr (cfg_warning (cfg, 0), "t.conf:5: warning: the reservations"
                 " add up to 200M (bps_min)") != NULL);
  cfg_free (cfg);
  cfg = good ("[device]\nfile = /dev/fake\nemulate = hdd\n"
              "[group g]\nbps_min = 100M\n" EXP);
  CHECK_EQ (cfg_nr_warnings (cfg), (size_t) 0);
  cfg_free (cfg);
}

/* The one parser, as cfqsim and the control socket use it. */
static void
test_parse (void)
{
  struct qos_conf c;
  char why[200], b[32];

  memset (&c, 0, sizeof c);
  CHECK_EQ (cfg_parse_qos ("weight", "5", &c, why, sizeof why), -ENOENT);
  CHECK_EQ (cfg_parse_qos ("bps_max", "1g", &c, why, sizeof why), 0);
  CHECK_EQ (val (&c, "bps_max"), 1000000000);
  CHECK_EQ (cfg_parse_qos ("bps_max", "0", &c, why, sizeof why), 0);
  CHECK (qos_conf_empty (&c));
  CHECK_EQ (cfg_parse_qos ("iops_max_burst_seconds", "90", &c, why,
                           sizeof why), -EINVAL);     /* needs its unit */
  CHECK_EQ (cfg_parse_qos ("iops_max_burst_seconds", "90s", &c, why,
                           sizeof why), 0);
  CHECK_EQ (val (&c, "iops_max_burst_seconds"), 90 * NSEC_PER_SEC);
  CHECK_EQ (cfg_parse_qos ("iops_max_burst_seconds", "0.5ms", &c, why,
                           sizeof why), -EINVAL);        /* below 1 ms */
  CHECK_STREQ (why, "out of range 1ms..86400s (0: none)");
  CHECK_STREQ (cfg_format_qos (qos_key_lookup ("bps_min"), 3 << 20, b,
                               sizeof b), "3Mi");
  CHECK_STREQ (cfg_format_qos (qos_key_lookup ("iops_max_burst_seconds"),
                               1500 * NSEC_PER_MSEC, b, sizeof b), "1500ms");
  CHECK_STREQ (cfg_format_qos (qos_key_lookup ("iops_min"), 7, b, sizeof b),
               "7");
}

static void
test_latency (void)
{
  struct lat_conf c;
  struct cfg *cfg;
  char why[200], b[32];

  lat_conf_init (&c);
  CHECK (lat_conf_default (&c));
  CHECK_EQ (c.percentile, 95);
  CHECK_EQ (c.boost, LAT_BOOST_DEFAULT);
  CHECK_EQ (cfg_parse_latency ("weight", "5", &c, why, sizeof why), -ENOENT);
  CHECK_EQ (cfg_parse_latency ("latency_target", "5ms", &c, why, sizeof why),
            0);
  CHECK_EQ (c.target, 5 * NSEC_PER_MSEC);
  CHECK_EQ (cfg_parse_latency ("latency_target", "5", &c, why, sizeof why),
            -EINVAL);
  CHECK_STREQ (why, "needs its unit (5ms for milliseconds, 5us for"
               " microseconds)");
  CHECK_EQ (cfg_parse_latency ("latency_target", "50us", &c, why,
                               sizeof why), -EINVAL);
  CHECK_STREQ (why, "out of range 100us..10s (0: none)");
  CHECK_EQ (cfg_parse_latency ("latency_percentile", "99", &c, why,
                               sizeof why), 0);
  CHECK_EQ (c.percentile, 99);
  CHECK_EQ (cfg_parse_latency ("latency_percentile", "98", &c, why,
                               sizeof why), -EINVAL);
  CHECK_STREQ (why, "want 90, 95 or 99");
  CHECK_EQ (cfg_parse_latency ("latency_mode", "binary", &c, why,
                               sizeof why), 0);
  CHECK_EQ (c.mode, LAT_MODE_BINARY);
  CHECK_EQ (cfg_parse_latency ("boost", "on", &c, why, sizeof why), 0);
  CHECK_EQ (c.boost, 1);
  CHECK_EQ (cfg_parse_latency ("boost", "maybe", &c, why, sizeof why),
            -EINVAL);
  CHECK (lat_conf_valid (&c));
  {
    struct lat_conf v = c;
    v.percentile = 98;
    CHECK (!lat_conf_valid (&v));
    v = c;
    v.mode = 2;
    CHECK (!lat_conf_valid (&v));
    v = c;
    v.target = 50 * NSEC_PER_USEC;
    CHECK (!lat_conf_valid (&v));
    v.target = 0;
    CHECK (lat_conf_valid (&v));
  }
  CHECK_STREQ (lat_format (lat_key_lookup ("latency_target"),
                           5 * NSEC_PER_MSEC, b, sizeof b), "5ms");
  CHECK_STREQ (lat_format (lat_key_lookup ("latency_mode"), LAT_MODE_BINARY,
                           b, sizeof b), "binary");

  cfg = good (DEV "[group g]\nlatency_target = 2ms\nlatency_percentile = 90\n"
              "boost = on\n" EXP);
  CHECK_EQ (cfg_model (cfg)->groups[0].lat.target, 2 * NSEC_PER_MSEC);
  CHECK_EQ (cfg_model (cfg)->groups[0].lat.percentile, 90);
  CHECK_EQ (cfg_model (cfg)->groups[0].lat.boost, 1);
  cfg_free (cfg);
  bad (DEV "[group g]\nlatency_target = 2\nlatency_percentile = 50\n"
       "latencytarget = 1ms\n" EXP, NULL, NULL,
       "t.conf:4: latency_target = 2: needs its unit (2ms for milliseconds,"
       " 2us for microseconds)\n"
       "t.conf:5: latency_percentile = 50: want 90, 95 or 99\n"
       "t.conf:6: unknown key 'latencytarget' in [group NAME]"
       " (did you mean 'latency_target'?)\n");
  bad (DEV "[scheduler]\nscheduler = fifo\n[group g]\nboost = on\n" EXP,
       NULL, NULL, "t.conf:6: boost: latency targets and the boost need"
       " scheduler = cfq (fifo serves in arrival order, with no per-group"
       " charge to lower or raise)\n");
}

int
main (void)
{
  test_values ();
  test_errors ();
  test_warnings ();
  test_parse ();
  test_latency ();
  check_done ("test-config-qos");
  return 0;
}
