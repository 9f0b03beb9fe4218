/* cfqconf: check a configuration and show what the plugin would make of it.
 *
 *   cfqconf [--check | --json] [--sim] [--size SIZE] [FILE] [KEY=VALUE...]
 *
 * Parses FILE with the same code as the plugin (core/config.c), applies
 * KEY=VALUE overrides as the plugin applies its command-line keys, and
 * validates against the device size: SIZE if given (nbdkit size syntax),
 * else the size of the device file, opened read-only.  Prints the resolved
 * model (groups, exports with their regions, scheduler tunables: CFQ's
 * whole table, marked "(set)" where the config gives a value) or every
 * error as FILE:LINE: message.  --check prints nothing on success.
 * --json prints the resolved model as one JSON object (device, scheduler
 * with every tunable, groups, exports, tenants with their workloads, sim):
 * what the fairness lab's runner turns into fio jobs.  --sim validates as
 * cfqsim does: the device is the emulate= model, its size model.capacity.
 * The rotational tunable is shown as the server would set it: the device
 * model's, else sysfs's for the device file (plugin/device.c, the
 * plugin's own code), unless the config sets it.
 * With no FILE the model is the plugin's default (needs file=PATH).
 *
 * Exit: 0 valid, 1 invalid (or the device cannot be opened), 2 usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "cfq.h"
#include "config.h"
#include "device.h"
#include "devmodel.h"
#include "latency.h"
#include "qos.h"
#include "units.h"

static void
usage (FILE *f)
{
  fprintf (f, "usage: cfqconf [--check | --json] [--sim] [--size SIZE]"
           " [FILE] [KEY=VALUE...]\n");
}

static void
report (void *opaque, const char *msg)
{
  fprintf (stderr, "%s\n", msg);
}

/* The whole of PATH into *text; -errno. */
static int
slurp (const char *path, char **text, size_t *len)
{
  FILE *f = fopen (path, "r");
  char *buf = NULL, *nb;
  size_t n = 0, cap = 0, r;

  if (!f)
    return -errno;
  for (;;) {
    if (n == cap) {
      cap = cap ? cap * 2 : 4096;
      nb = realloc (buf, cap);
      if (!nb) {
        free (buf);
        fclose (f);
        return -ENOMEM;
      }
      buf = nb;
    }
    r = fread (buf + n, 1, cap - n, f);
    n += r;
    if (r == 0)
      break;
  }
  if (ferror (f)) {
    int e = errno;
    free (buf);
    fclose (f);
    return -e;
  }
  fclose (f);
  *text = buf;
  *len = n;
  return 0;
}

static void
print_net (const struct cfg_net *n)
{
  char buf[64];

  if (n->family == AF_UNIX) {
    printf ("unix");
    return;
  }
  inet_ntop (n->family, n->addr, buf, sizeof buf);
  printf ("%s/%u", buf, n->prefix);
}

/* Whether the device seeks, as the server finds out (plugin/tenants.c):
 * the device model's answer, else sysfs's for the device file; then
 * cfg_rotational's rule (cache = page).  -1 if neither says.
 */
static int
detect_rotational (const struct cfg_model *m)
{
  int rot = -1;

  if (m->dev.emulate) {
    struct devmodel *dm = devmodel_new (m->dev.emulate, NULL);

    if (dm) {
      for (size_t i = 0; i < m->dev.nr_model; i++)
        devmodel_set (dm, m->dev.model[i].key, m->dev.model[i].value);
      rot = devmodel_rotational (dm);
      devmodel_free (dm);
    }
  }
  else if (m->dev.file) {
    struct stat st;

    if (stat (m->dev.file, &st) == 0) {
      dev_t d = S_ISBLK (st.st_mode) ? st.st_rdev : st.st_dev;
      rot = device_rotational (major (d), minor (d));
    }
  }
  return cfg_rotational (m, rot);
}

/* The config file and the [device] section. */
static void
print_device (const char *file, const struct cfg_model *m, uint64_t size)
{
  char b1[32];

  printf ("config: %s\n", file ? file : "(none)");
  printf ("device: %s, size %s (%llu bytes)\n",
          m->dev.file ? m->dev.file : "(none)",
          units_format_size (size, b1, sizeof b1), (unsigned long long) size);
  printf ("  queue_depth = %u\n  mode = %s\n  emulate = %s\n",
          m->dev.queue_depth, cfq_mode_name (m->dev.mode),
          m->dev.emulate ? m->dev.emulate : "none");
  printf ("  cache = %s\n", cfg_cache_name (m->dev.cache));
  printf ("  max_connections = %u\n", m->dev.max_connections);
  printf ("  buffer_pool = %s\n",
          units_format_size (m->dev.buffer_pool, b1, sizeof b1));
  printf ("  memory = %s\n",
          units_format_size (m->dev.memory, b1, sizeof b1));
  printf ("  reply_timeout = %s\n", m->dev.reply_timeout ?
          units_format_time (m->dev.reply_timeout, b1, sizeof b1) : "0");
  printf ("  calibrate = %s\n", cfg_calibrate_name (m->dev.calibrate));
  if (m->dev.calibration)
    printf ("  calibration = %s\n", m->dev.calibration);
  if (m->dev.cost_given) {
    char cm[256];

    cost_params_format (&m->dev.cost, cm, sizeof cm);
    printf ("  cost_model = %s\n", cm);
  }
  for (size_t i = 0; i < m->dev.nr_model; i++)
    printf ("  model.%s = %s\n", m->dev.model[i].key, m->dev.model[i].value);
}

/* The rotational tunable D: as set (T, or NULL), else as the server
 * would find it, and why.
 */
static void
print_rotational (const struct cfg_model *m, const struct cfq_tunable *d,
                  const struct cfg_tunable *t)
{
  uint64_t v = t ? t->val : d->def;
  int rot = detect_rotational (m);
  char b1[32], why[64];

  if (rot >= 0 && t && (uint64_t) rot != v)
    snprintf (why, sizeof why, "(set; detected %d)", rot);
  else if (rot >= 0 && !t) {
    v = (uint64_t) rot;
    snprintf (why, sizeof why, "(%s; set %d to override)",
              m->dev.cache == CFG_CACHE_PAGE && !m->dev.emulate
              ? "cache = page" : m->dev.emulate ? "device model"
              : "detected", !rot);
  }
  else
    snprintf (why, sizeof why, "%s", t ? "(set)" : "(default)");
  cfq_tunable_format (d, v, b1, sizeof b1);
  printf ("  %-18s %-8s %s\n", d->name, b1, why);
}

/* The scheduler; for cfq, its whole table of tunables, each marked set
 * or default.
 */
static void
print_scheduler (const struct cfg_model *m)
{
  char b1[32];

  printf ("scheduler: %s\n", m->scheduler);
  if (strcmp (m->scheduler, "cfq") != 0)
    return;
  for (size_t i = 0; i < cfq_nr_tunables; i++) {
    const struct cfq_tunable *d = &cfq_tunables[i];
    const struct cfg_tunable *t = NULL;
    for (size_t j = 0; j < m->nr_tunables; j++)
      if (strcmp (m->tunables[j].name, d->name) == 0)
        t = &m->tunables[j];
    if (strcmp (d->name, "rotational") == 0) {
      print_rotational (m, d, t);
      continue;
    }
    cfq_tunable_format (d, t ? t->val : d->def, b1, sizeof b1);
    printf ("  %-18s %-8s %s\n", d->name, b1, t ? "(set)" : "(default)");
  }
}

static void
print_groups (const struct cfg_model *m)
{
  printf ("groups:\n");
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    printf ("  %-12s weight=%u class=%s prio=%u", g->name, g->weight,
            sched_class_name (g->cls), g->prio);
    if (g->global)
      printf (" scope=global");
    for (size_t k = 0; k < qos_nr_keys; k++) {
      uint64_t v = qos_conf_get (&g->qos, &qos_keys[k]);
      char b[32];
      if (v)
        printf (" %s=%s", qos_keys[k].name,
                cfg_format_qos (&qos_keys[k], v, b, sizeof b));
    }
    for (size_t k = 0; k < lat_nr_keys; k++) {
      uint64_t v = lat_conf_get (&g->lat, &lat_keys[k]);
      char b[32];
      if (g->lat.target || lat_keys[k].unit == LAT_U_BOOL)
        printf (" %s=%s", lat_keys[k].name,
                lat_format (&lat_keys[k], v, b, sizeof b));
    }
    if (g->line)
      printf ("  (line %u)\n", g->line);
    else
      printf ("  (implicit)\n");
  }
}

/* One line: the export's group, where its data is, who may connect. */
static void
print_export (const struct cfg_model *m, const struct cfg_export *e)
{
  char b1[32], b2[32], b3[32];

  printf ("  \"%s\" group=%s ", e->name, m->groups[e->group].name);
  if (e->file)
    printf ("file=%s", e->file);
  else
    printf ("region=[%s, %s) size=%s",
            units_format_size (e->offset, b1, sizeof b1),
            units_format_size (e->offset + e->size, b2, sizeof b2),
            units_format_size (e->size, b3, sizeof b3));
  printf (" %s writes=%s allow=", e->readonly ? "ro" : "rw",
          e->writes_sync ? "sync" : e->writes_async ? "async" : "auto");
  if (e->nr_allow == 0)
    printf ("anyone");
  for (size_t j = 0; j < e->nr_allow; j++) {
    if (j)
      printf (",");
    print_net (&e->allow[j]);
  }
  if (e->tls_required)
    printf (" tls=require");
  if (e->max_connections)
    printf (" max_connections=%u", e->max_connections);
  printf ("\n");
}

/* The workloads of the lab and the simulator, a line each. */
static void
print_tenants (const struct cfg_model *m)
{
  char b1[32], b2[32], b3[32];

  if (m->nr_tenants)
    printf ("tenants:\n");
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const struct cfg_tenant *t = &m->tenants[i];
    printf ("  %-12s export=\"%s\" connections=%u rw=%s", t->name,
            m->exports[t->export].name, t->connections, t->rw);
    if (t->skip)
      printf (":%s", units_format_size (t->skip, b1, sizeof b1));
    if (t->rwmixread != 0 && t->rwmixread != 100)
      printf (" rwmixread=%u", t->rwmixread);
    printf (" bs=%s iodepth=%u region=[%s, %s)",
            units_format_size (t->bs, b1, sizeof b1), t->iodepth,
            units_format_size (t->offset, b2, sizeof b2),
            units_format_size (t->offset + t->size, b3, sizeof b3));
    printf (" class=%s prio=%u", sched_class_name (t->cls), t->prio);
    if (t->workload != CFG_WORKLOAD_FIO)
      printf (" workload=%s", cfg_workload_names[t->workload]);
    printf ("\n");
  }
}

static void
print_events (const struct cfg_model *m)
{
  char b1[32];

  if (m->nr_events)
    printf ("events:\n");
  for (size_t i = 0; i < m->nr_events; i++)
    printf ("  %-12s at=%s command=\"%s\"\n", m->events[i].name,
            units_format_time (m->events[i].at, b1, sizeof b1),
            m->events[i].command);
}

static void
print_model (const char *file, const struct cfg_model *m, uint64_t size)
{
  print_device (file, m, size);
  print_scheduler (m);
  print_groups (m);
  printf ("exports:\n");
  for (size_t i = 0; i < m->nr_exports; i++)
    print_export (m, &m->exports[i]);
  print_tenants (m);
  print_events (m);
}

/* ---- --json ------------------------------------------------------------- */

static void
jstr (const char *s)
{
  putchar ('"');
  for (; s && *s; s++) {
    unsigned char c = *s;
    if (c == '"' || c == '\\')
      printf ("\\%c", c);
    else if (c < 0x20)
      printf ("\\u%04x", c);
    else
      putchar (c);
  }
  putchar ('"');
}

/* "key": "string", */
static void
jkv (const char *key, const char *val, const char *sep)
{
  jstr (key);
  printf (": ");
  if (val)
    jstr (val);
  else
    printf ("null");
  printf ("%s", sep);
}

/* "device": {...}: the [device] section, sizes in bytes, times in ns. */
static void
json_device (const struct cfg_model *m, bool sim)
{
  printf ("  \"device\": {");
  jkv ("file", m->dev.file, ", ");
  printf ("\"size\": %llu, \"queue_depth\": %u, ",
          (unsigned long long) m->dev.size, m->dev.queue_depth);
  jkv ("mode", cfq_mode_name (m->dev.mode), ", ");
  jkv ("emulate", m->dev.emulate ? m->dev.emulate : "none", ", ");
  jkv ("cache", cfg_cache_name (m->dev.cache), ", ");
  printf ("\"max_connections\": %u, \"buffer_pool\": %llu, "
          "\"memory\": %llu, \"reply_timeout_ns\": %llu, ",
          m->dev.max_connections, (unsigned long long) m->dev.buffer_pool,
          (unsigned long long) m->dev.memory,
          (unsigned long long) m->dev.reply_timeout);
  jkv ("calibrate", cfg_calibrate_name (m->dev.calibrate), ", ");
  jkv ("calibration", m->dev.calibration, ", ");
  {
    char cm[256];

    if (m->dev.cost_given)
      cost_params_format (&m->dev.cost, cm, sizeof cm);
    jkv ("cost_model", m->dev.cost_given ? cm : NULL, ", ");
  }
  printf ("\"model\": {");
  for (size_t i = 0; i < m->dev.nr_model; i++) {
    printf ("%s", i ? ", " : "");
    jkv (m->dev.model[i].key, m->dev.model[i].value, "");
  }
  printf ("}, \"simulated\": %s},\n", sim ? "true" : "false");
}

/* "scheduler": {...}: every tunable with its value as text and as a
 * number in its unit.
 */
static void
json_scheduler (const struct cfg_model *m)
{
  char b[64];

  printf ("  \"scheduler\": {");
  jkv ("name", m->scheduler, ", ");
  printf ("\"tunables\": {");
  for (size_t i = 0; strcmp (m->scheduler, "cfq") == 0
         && i < cfq_nr_tunables; i++) {
    const struct cfq_tunable *d = &cfq_tunables[i];
    uint64_t v = d->def;
    bool set = false;
    for (size_t j = 0; j < m->nr_tunables; j++)
      if (strcmp (m->tunables[j].name, d->name) == 0) {
        v = m->tunables[j].val;
        set = true;
      }
    printf ("%s\n    ", i ? "," : "");
    jstr (d->name);
    printf (": {");
    jkv ("value", cfq_tunable_format (d, v, b, sizeof b), ", ");
    printf ("\"raw\": %llu, ", (unsigned long long) v);
    jkv ("unit", d->unit, ", ");
    printf ("\"set\": %s}", set ? "true" : "false");
  }
  printf ("}},\n");
}

static void
json_groups (const struct cfg_model *m)
{
  printf ("  \"groups\": [");
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    printf ("%s\n    {", i ? "," : "");
    jkv ("name", g->name, ", ");
    printf ("\"weight\": %u, ", g->weight);
    jkv ("class", sched_class_name (g->cls), ", ");
    printf ("\"prio\": %u, ", g->prio);
    if (g->global)
      printf ("\"scope\": \"global\", ");
    for (size_t k = 0; k < qos_nr_keys; k++) {
      uint64_t v = qos_conf_get (&g->qos, &qos_keys[k]);
      if (v)
        printf ("\"%s\": %llu, ", qos_keys[k].name, (unsigned long long) v);
    }
    for (size_t k = 0; k < lat_nr_keys; k++)
      printf ("\"%s\": %llu, ", lat_keys[k].name,
              (unsigned long long) lat_conf_get (&g->lat, &lat_keys[k]));
    printf ("\"line\": %u}", g->line);
  }
  printf ("],\n");
}

/* "allow": [...]: who may connect to E, "unix" or ADDRESS/PREFIX. */
static void
json_allow (const struct cfg_export *e)
{
  char b[64];

  printf ("\"allow\": [");
  for (size_t j = 0; j < e->nr_allow; j++) {
    char net[96];
    if (e->allow[j].family == AF_UNIX)
      snprintf (net, sizeof net, "unix");
    else {
      inet_ntop (e->allow[j].family, e->allow[j].addr, b, sizeof b);
      snprintf (net, sizeof net, "%s/%u", b, e->allow[j].prefix);
    }
    printf ("%s", j ? ", " : "");
    jstr (net);
  }
  printf ("], ");
}

static void
json_exports (const struct cfg_model *m)
{
  printf ("  \"exports\": [");
  for (size_t i = 0; i < m->nr_exports; i++) {
    const struct cfg_export *e = &m->exports[i];
    printf ("%s\n    {", i ? "," : "");
    jkv ("name", e->name, ", ");
    jkv ("group", m->groups[e->group].name, ", ");
    jkv ("file", e->file, ", ");
    printf ("\"offset\": %llu, \"size\": %llu, \"readonly\": %s, ",
            (unsigned long long) e->offset, (unsigned long long) e->size,
            e->readonly ? "true" : "false");
    jkv ("writes", e->writes_sync ? "sync"
         : e->writes_async ? "async" : "auto", ", ");
    json_allow (e);
    jkv ("tls", e->tls_required ? "require" : "optional", ", ");
    printf ("\"max_connections\": %u, \"line\": %u}", e->max_connections,
            e->line);
  }
  printf ("],\n");
}

/* Tenants: sizes in bytes, times in ns, rates in bytes/s, as fio takes
 * them (fio's own k/m suffixes are powers of 1024 by default).
 */
static void
json_tenants (const struct cfg_model *m)
{
  printf ("  \"tenants\": [");
  for (size_t i = 0; i < m->nr_tenants; i++) {
    const struct cfg_tenant *t = &m->tenants[i];
    printf ("%s\n    {", i ? "," : "");
    jkv ("name", t->name, ", ");
    jkv ("export", m->exports[t->export].name, ", ");
    jkv ("group", m->groups[m->exports[t->export].group].name, ", ");
    printf ("\"connections\": %u, ", t->connections);
    jkv ("rw", t->rw, ", ");
    printf ("\"rwmixread\": %u, \"skip\": %llu, \"bs\": %u, "
            "\"iodepth\": %u, \"thinktime_ns\": %llu, "
            "\"thinktime_blocks\": %u, \"number_ios\": %llu, "
            "\"rate_iops\": %llu, "
            "\"rate\": %llu, \"fsync\": %u, \"offset\": %llu, "
            "\"size\": %llu, \"start_ns\": %llu, \"stop_ns\": %llu, ",
            t->rwmixread, (unsigned long long) t->skip, t->bs, t->iodepth,
            (unsigned long long) t->thinktime, t->thinktime_blocks,
            (unsigned long long) t->number_ios,
            (unsigned long long) t->rate_iops, (unsigned long long) t->rate,
            t->fsync, (unsigned long long) t->offset,
            (unsigned long long) t->size, (unsigned long long) t->start,
            (unsigned long long) t->stop);
    jkv ("class", sched_class_name (t->cls), ", ");
    jkv ("workload", cfg_workload_names[t->workload], ", ");
    printf ("\"prio\": %u, \"line\": %u}", t->prio, t->line);
  }
  printf ("],\n");
}

/* Events: in order of time; "weight" and "set" as the control socket
 * takes them, the value in the tunable's unit.
 */
static void
json_events (const struct cfg_model *m)
{
  printf ("  \"events\": [");
  for (size_t i = 0; i < m->nr_events; i++) {
    const struct cfg_event *ev = &m->events[i];
    printf ("%s\n    {", i ? "," : "");
    jkv ("name", ev->name, ", ");
    printf ("\"at_ns\": %llu, ", (unsigned long long) ev->at);
    jkv ("command", ev->command, ", ");
    if (ev->kind == CFG_EVENT_WEIGHT) {
      jkv ("kind", "weight", ", ");
      jkv ("group", m->groups[ev->group].name, ", ");
      printf ("\"weight\": %u, ", ev->weight);
    }
    else {
      jkv ("kind", "set", ", ");
      jkv ("key", ev->key, ", ");
      printf ("\"value\": %llu, ", (unsigned long long) ev->value);
    }
    printf ("\"line\": %u}", ev->line);
  }
  printf ("],\n");
}

/* The limits a group can set (core/qos.c's key table), so that a reader
 * such as cfqlab knows which group keys are caps and which are
 * reservations without a list of its own.  Bursts are left out: they
 * shape a cap, they are not a limit of their own.
 */
static void
json_qos_keys (void)
{
  printf ("  \"qos_keys\": [");
  for (size_t k = 0, n = 0; k < qos_nr_keys; k++) {
    const struct qos_key *q = &qos_keys[k];
    const char *kind, *dir = NULL;
    if (q->field == QOS_F_RATE) {
      bool r = qos_cap_applies (q->cap, QOS_READ);
      bool w = qos_cap_applies (q->cap, QOS_WRITE);
      kind = "cap";
      dir = r && !w ? "read" : w && !r ? "write" : NULL;
    }
    else if (q->field == QOS_F_IOPS_MIN || q->field == QOS_F_BPS_MIN)
      kind = "reservation";
    else
      continue;
    printf ("%s\n    {", n++ ? "," : "");
    jkv ("name", q->name, ", ");
    jkv ("kind", kind, ", ");
    jkv ("unit", q->unit == QOS_U_BPS ? "bytes" : "ios", ", ");
    jkv ("dir", dir, "}");
  }
  printf ("],\n");
}

static void
print_json (const char *file, const struct cfg_model *m, bool sim)
{
  printf ("{\n  ");
  jkv ("config", file, ",\n");
  json_device (m, sim);
  json_scheduler (m);
  json_groups (m);
  json_exports (m);
  json_tenants (m);
  json_events (m);
  json_qos_keys ();
  printf ("  \"sim\": {\"duration_ns\": %llu, \"seed\": %llu,"
          " \"line\": %u}\n}\n", (unsigned long long) m->sim.duration,
          (unsigned long long) m->sim.seed, m->sim.line);
}

int
main (int argc, char *argv[])
{
  static const struct option opts[] = {
    { "check", no_argument, NULL, 'c' },
    { "json", no_argument, NULL, 'j' },
    { "sim", no_argument, NULL, 'S' },
    { "size", required_argument, NULL, 's' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *file = NULL, *dev;
  bool check = false, have_size = false, json = false, sim = false;
  uint64_t size = 0;
  struct cfg *cfg;
  int c, r, ret = 1;

  while ((c = getopt_long (argc, argv, "cs:h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': check = true; break;
    case 'j': json = true; break;
    case 'S': sim = true; break;
    case 's':
      r = units_parse_size (optarg, &size);
      if (r < 0) {
        fprintf (stderr, "cfqconf: --size %s: %s\n", optarg, r == -ERANGE
                 ? "out of range (a size is less than 16E)" : "not a size");
        return 2;
      }
      have_size = true;
      break;
    case 'h': usage (stdout); return 0;
    default: usage (stderr); return 2;
    }
  }

  cfg = cfg_new (report, NULL);
  if (!cfg) {
    perror ("cfqconf");
    return 1;
  }
  if (sim)
    cfg_simulate (cfg);
  for (int i = optind; i < argc; i++) {
    char *eq = strchr (argv[i], '=');
    if (!eq) {
      if (file) {
        usage (stderr);
        ret = 2;
        goto out;
      }
      file = argv[i];
      continue;
    }
    *eq = '\0';
    cfg_set_override (cfg, argv[i], eq + 1);
    *eq = '=';
  }
  if (file) {
    char *text = NULL;
    size_t len = 0;
    r = slurp (file, &text, &len);
    if (r < 0) {
      fprintf (stderr, "cfqconf: %s: %s\n", file, strerror (-r));
      goto out;
    }
    cfg_parse (cfg, file, text, len);
    free (text);
  }

  /* The device's size, also when the file has errors already, so that the
   * regions are checked against it; one that cannot be measured then is
   * left unknown instead of taken for 0, which would report every region
   * as past the end.
   */
  dev = cfg_device_file (cfg);
  if (!have_size && !sim && dev &&
      strncmp (dev, CFG_RBD_PREFIX, strlen (CFG_RBD_PREFIX)) == 0) {
    fprintf (stderr, "cfqconf: %s: an RBD image, which cfqconf does not"
             " reach: give its size with --size (rbd info)\n", dev);
    goto out;
  }
  if (!have_size && !sim && dev) {
    int fd = open (dev, O_RDONLY | O_CLOEXEC);
    off_t end;
    if (fd == -1 || (end = lseek (fd, 0, SEEK_END)) == -1) {
      if (cfg_nr_errors (cfg) == 0) {
        fprintf (stderr, "cfqconf: %s: %m (use --size to check without the"
                 " device)\n", dev);
        if (fd != -1)
          close (fd);
        goto out;
      }
      size = CFG_SIZE_UNKNOWN;
    }
    else
      size = end;
    if (fd != -1)
      close (fd);
  }
  else if (!have_size && !sim && cfg_nr_errors (cfg))
    size = CFG_SIZE_UNKNOWN;

  r = cfg_validate (cfg, size);
  if (r == -ENOMEM) {
    fprintf (stderr, "cfqconf: out of memory\n");
    goto out;
  }
  if (r < 0) {
    fprintf (stderr, "cfqconf: %zu error%s\n", cfg_nr_errors (cfg),
             cfg_nr_errors (cfg) == 1 ? "" : "s");
    goto out;
  }
  if (json)
    print_json (file, cfg_model (cfg), sim);
  else if (!check)
    print_model (file, cfg_model (cfg), size);
  ret = 0;
out:
  cfg_free (cfg);
  return ret;
}
