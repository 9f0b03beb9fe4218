/* fuzz-config.c: libFuzzer target for the configuration model
 * (core/config.c: cfg_parse, cfg_set_override, cfg_validate).
 *
 * The input is split at NUL bytes: the first piece is the config file
 * (as "fuzz.conf"; none if it is empty), each further piece an override
 * KEY=VALUE (at most 16).  The first byte of the input also picks the
 * device size from a short list (an empty device, one block, 10 GiB + 512
 * bytes, 2^62 bytes) so cfg_validate() sees regions that fit and regions
 * that do not, and whether the config is validated for the simulator
 * (cfg_simulate: the device is the model, [tenant] and [sim] count).
 *
 * Checked, besides ASan and UBSan on the parser itself:
 *  - every error is "fuzz.conf:LINE: ...", "fuzz.conf: ..." or
 *    "command line: ...", and a refused config has at least one;
 *  - a model is there exactly when cfg_validate() returned 0;
 *  - a valid model keeps its promises: queue depth and group weights,
 *    classes and levels in range, the buffer pool and connection limit in
 *    range, exports with distinct names found by
 *    cfg_find_export(), each in a group that exists, regions aligned and
 *    inside the device, overlapping regions only between readonly
 *    exports, own-file exports without a region, tenants in range and on
 *    an export that exists;
 *  - what the config accepted, the scheduler accepts: cfg_apply() (the
 *    server's and cfqsim's step from model to scheduler) succeeds, and
 *    each group takes a queue of its class and level.
 * An override's value also goes through the unit grammar (units.h): a
 * time, size or rate that parses formats back to the same value.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_FAIL_ABORT        /* a failed check is a crash for libFuzzer */
#include "../unit/check.h"
#include "cfq.h"
#include "config.h"
#include "sched.h"
#include "units.h"
#include "fuzz.h"

#define MAX_OVERRIDES 16

static void
check_error_format (const struct cfg *cfg)
{
  for (size_t i = 0; i < cfg_nr_errors (cfg); i++) {
    const char *e = cfg_error (cfg, i);
    CHECK_NOTNULL (e);
    CHECK (strncmp (e, "fuzz.conf:", 10) == 0
           || strncmp (e, "command line: ", 14) == 0);
  }
}

/* The value syntax on its own: parse, format, parse again. */
static void
check_value_syntax (const char *v)
{
  uint64_t x, y;
  char buf[64];

  if (units_parse_time (v, NSEC_PER_MSEC, &x) == 0) {
    CHECK_EQ (units_parse_time (units_format_time (x, buf, sizeof buf), 0,
                                &y), 0);
    CHECK_EQ (x, y);
  }
  if (units_parse_size (v, &x) == 0) {
    CHECK_EQ (units_parse_size (units_format_size (x, buf, sizeof buf), &y),
              0);
    CHECK_EQ (x, y);
  }
  if (units_parse_rate (v, &x) == 0) {
    CHECK_EQ (units_parse_rate (units_format_rate (x, buf, sizeof buf), &y),
              0);
    CHECK_EQ (x, y);
  }
}

static void
check_model (const struct cfg_model *m, uint64_t devsize, bool sim)
{
  const struct sched_ops *ops;
  struct sched *s;
  struct sched_group **groups;
  char why[256];

  CHECK_GE (m->dev.queue_depth, 1);
  CHECK_LE (m->dev.queue_depth, SCHED_DEPTH_MAX);
  CHECK_GE (m->dev.buffer_pool, CFG_BUFFER_POOL_MIN);
  CHECK_LE (m->dev.buffer_pool, CFG_BUFFER_POOL_MAX);
  CHECK_GE (m->dev.max_connections, 1);
  CHECK_LE (m->dev.max_connections, CFG_MAX_CONNECTIONS_MAX);
  CHECK_GE (m->nr_groups, 1);
  CHECK_GE (m->nr_exports, 1);
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    CHECK_NOTNULL (g->name);
    CHECK_GE (g->weight, SCHED_WEIGHT_MIN);
    CHECK_LE (g->weight, SCHED_WEIGHT_MAX);
    CHECK (g->cls == SCHED_CLASS_RT || g->cls == SCHED_CLASS_BE
           || g->cls == SCHED_CLASS_IDLE);
    CHECK_LT (g->prio, SCHED_LEVELS);
  }
  for (size_t i = 0; i < m->nr_exports; i++) {
    const struct cfg_export *e = &m->exports[i];
    CHECK_NOTNULL (e->name);
    CHECK_PTR_EQ (cfg_find_export (m, e->name), e);
    CHECK_LT (e->group, m->nr_groups);
    (void) cfg_export_allows_str (e, "unix");
    (void) cfg_export_allows_str (e, "192.0.2.1");
    (void) cfg_export_allows_str (e, "::ffff:10.1.2.3");
    if (e->file) {
      CHECK_EQ (e->offset, 0);
      CHECK_EQ (e->size, 0);
      continue;
    }
    CHECK_EQ (e->offset % CFG_ALIGN, 0);
    CHECK_GT (e->size, 0);
    if (!sim) {                 /* else the device is the model's */
      CHECK_LE (e->offset, devsize);
      CHECK_LE (e->size, devsize - e->offset);
    }
    for (size_t j = 0; j < i; j++) {
      const struct cfg_export *o = &m->exports[j];
      if (o->file || (e->readonly && o->readonly))
        continue;
      CHECK (e->offset >= o->offset + o->size
             || o->offset >= e->offset + e->size);
    }
  }

  for (size_t i = 0; i < m->nr_tenants; i++) {
    const struct cfg_tenant *t = &m->tenants[i];
    CHECK_LT (t->export, m->nr_exports);
    CHECK_GE (t->connections, 1);
    CHECK_LE (t->connections, CFG_CONNECTIONS_MAX);
    CHECK_GE (t->iodepth, 1);
    CHECK_LE (t->iodepth, CFG_IODEPTH_MAX);
    CHECK_GT (t->bs, 0);
    CHECK_LE (t->bs, CFG_BS_MAX);
    CHECK_LE (t->rwmixread, 100);
  }

  /* What the config accepted, the scheduler must take. */
  ops = sched_lookup (m->scheduler);
  CHECK_NOTNULL (ops);
  s = sched_create (ops);
  CHECK (s);
  groups = calloc (m->nr_groups + 1, sizeof *groups);
  if (!groups)
    abort ();
  why[0] = '\0';
  if (cfg_apply (m, s, -1, groups, why, sizeof why) != 0) {
    fprintf (stderr, "cfg_apply: %s\n", why);
    CHECK (!"cfg_apply refused a validated model");
  }
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    struct sched_queue *q;
    CHECK (groups[i]);
    q = sched_queue_new (s, groups[i], g->cls, g->prio);
    CHECK (q);
    sched_queue_free (s, q);
  }
  free (groups);
  sched_destroy (s);
}

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static const uint64_t sizes[] = {
    0, 4096, 10ULL * 1024 * 1024 * 1024 + 512, 1ULL << 62,
  };
  uint64_t devsize = sizes[size ? data[0] % 4 : 0];
  bool sim = size && data[0] & 4;
  char *buf, *p, *end;
  struct cfg *cfg;
  int r;

  /* A NUL-terminated copy to cut into pieces. */
  buf = malloc (size + 1);
  if (!buf)
    abort ();
  memcpy (buf, data, size);
  buf[size] = '\0';
  end = buf + size;

  cfg = cfg_new (NULL, NULL);
  CHECK (cfg);
  p = buf + strlen (buf);
  if (p > buf)                  /* else: no file, overrides alone */
    cfg_parse (cfg, "fuzz.conf", buf, (size_t) (p - buf));
  for (int n = 0; p < end && n < MAX_OVERRIDES; n++) {
    char *kv = p + 1, *eq;
    p = kv + strlen (kv);
    eq = strchr (kv, '=');
    if (!eq)
      continue;
    *eq = '\0';
    r = cfg_set_override (cfg, kv, eq + 1);
    CHECK (r == 0 || r == -EINVAL || r == -ENOENT);
    check_value_syntax (eq + 1);
  }
  (void) cfg_device_file (cfg);
  if (sim)
    cfg_simulate (cfg);
  r = cfg_validate (cfg, devsize);
  CHECK (r == 0 || r == -EINVAL);
  check_error_format (cfg);
  if (r == 0) {
    CHECK_NOTNULL (cfg_model (cfg));
    CHECK_EQ (cfg_nr_errors (cfg), 0);
    check_model (cfg_model (cfg), devsize, sim);
  }
  else {
    CHECK_NULL (cfg_model (cfg));
    CHECK_GT (cfg_nr_errors (cfg), 0);
  }
  cfg_free (cfg);
  free (buf);
  return 0;
}
