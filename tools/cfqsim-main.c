/* cfqsim-main.c: cfqsim, a discrete-event simulator of tenants sharing one device.
 *
 * What it is for: to see what a scheduling policy (core/fifo.c,
 * core/cfq.c) does to throughput, fairness and latency without a disk, a
 * server or a clock.  It reads the server's own config format
 * (core/config.c): [device] (emulate= and model.* choose the device model,
 * queue_depth), [scheduler], [group NAME] and [export NAME] as the server
 * reads them, plus [tenant NAME] workloads in fio's terms and a [sim]
 * section (duration, seed).  core/apply.c turns the model into scheduler
 * groups and tunables exactly as the plugin does.  Each connection of a
 * tenant is one queue (one NBD connection, one fio job) inserting requests
 * into the policy through include/sched.h as the plugin's dispatcher
 * does; dispatched requests go to the device model (include/devmodel.h),
 * which says which completes when.  Time is virtual: an event heap ordered
 * by (time, sequence number) drives everything, so a run of minutes of
 * device time takes a fraction of a second, and the same scenario and seed
 * always give byte-identical output.
 *
 * This file: the options, reading the scenario through core/config.c
 * (the options are the server's keys: --sched is scheduler=, --set a
 * [device] or [scheduler] key ...), and the order of the run: select the
 * tenants, build the run (cfqsim-scenario.c), run the event loop
 * (cfqsim-loop.c), print the report (cfqsim-report.c).  Errors exit 1
 * with FILE:LINE: message; a stalled scheduler exits 3.
 */
#include "cfqsim.h"

const char *progname = "cfqsim";
struct sim_cfg cfg;

void __attribute__ ((noreturn, format (printf, 2, 3)))
die_at (const char *where, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s: ", where ? where : progname);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

/* An error at the tenant's [tenant NAME] line. */
void __attribute__ ((noreturn, format (printf, 2, 3)))
die_tenant (const struct cfg_tenant *t, const char *fmt, ...)
{
  va_list ap;

  fprintf (stderr, "%s:%u: tenant %s: ", cfg.file, t->line, t->name);
  va_start (ap, fmt);
  vfprintf (stderr, fmt, ap);
  va_end (ap);
  fputc ('\n', stderr);
  exit (1);
}

void *
xcalloc (size_t n, size_t size)
{
  void *p = calloc (n ? n : 1, size);

  if (!p)
    die_at (NULL, "out of memory");
  return p;
}

/* A policy by name: the extra ones of this build first, then core's. */
const struct sched_ops *
lookup_policy (const char *name)
{
  for (size_t i = 0; sim_extra_scheds[i]; i++)
    if (!strcmp (name, sim_extra_scheds[i]->name))
      return sim_extra_scheds[i];
  return sched_lookup (name);
}

/* ---- main -------------------------------------------------------------------- */

static void
usage (FILE *f)
{
  fprintf (f,
"usage: %s [OPTIONS] SCENARIO\n"
"Simulate the tenants of SCENARIO (the server's config format plus\n"
"[tenant NAME] and [sim] sections) sharing its modelled device.\n"
"  --sched NAME         scheduler (fifo, cfq); as scheduler=NAME\n"
"  --set KEY=VALUE      a [device] or [scheduler] key, as on the server's\n"
"                       command line (slice_idle=0, mode=iops ...); repeatable\n"
"  --device NAME        device model: hdd, ssd or a preset (--list-models);\n"
"                       as emulate=NAME\n"
"  --dev KEY=VALUE      device model parameter; as model.KEY=VALUE\n"
"  --seed N             PRNG seed (tenants and device); overrides [sim] seed\n"
"  --duration TIME      virtual time to simulate (e.g. 20s); overrides\n"
"                       [sim] duration\n"
"  --queue-depth N      most requests at the device at once; as queue_depth=N\n"
"  --only NAME[,NAME..] run only these tenants\n"
"  --json               machine-readable output\n"
"  --window TIME        also requests and bytes per window (e.g. 1s)\n"
"  --trace              print CFQ's decisions and each request on stderr,\n"
"                       stamped with the virtual time\n"
"  --list-scheds        print the policies built in and exit\n"
"  --list-models        print the device models and presets and exit (with\n"
"                       --json: and the published figures presets carry)\n"
"Exit: 0 ok, 1 bad input, 3 the scheduler stalled.\n", progname);
}

static void
report_error (void *opaque, const char *msg)
{
  fprintf (stderr, "%s\n", msg);
}

/* The whole of PATH, NUL-terminated, into *TEXT. */
static void
slurp (const char *path, char **text, size_t *len)
{
  FILE *f = fopen (path, "r");
  size_t n = 0, cap = 4096, r;
  char *buf;

  if (!f)
    die_at (NULL, "%s: %s", path, strerror (errno));
  buf = xcalloc (cap, 1);
  while ((r = fread (buf + n, 1, cap - n, f)) > 0) {
    n += r;
    if (n == cap) {
      buf = realloc (buf, cap *= 2);
      if (!buf)
        die_at (NULL, "out of memory");
    }
  }
  if (ferror (f))
    die_at (NULL, "%s: read error", path);
  fclose (f);
  *text = buf;
  *len = n;
}

/* KEY=VALUE on the command line, as an override of the model. */
static void
override (struct cfg *c, const char *opt, const char *prefix, const char *a)
{
  const char *eq = strchr (a, '=');
  char key[128];

  if (!eq || eq == a || (size_t) (eq - a) + strlen (prefix) >= sizeof key)
    die_at (NULL, "--%s %s: expected KEY=VALUE", opt, a);
  snprintf (key, sizeof key, "%s%.*s", prefix, (int) (eq - a), a);
  cfg_set_override (c, key, eq + 1);
}

int
main (int argc, char **argv)
{
  static const struct option opts[] = {
    { "sched", required_argument, NULL, 's' },
    { "set", required_argument, NULL, 'S' },
    { "device", required_argument, NULL, 'D' },
    { "dev", required_argument, NULL, 'd' },
    { "seed", required_argument, NULL, 'r' },
    { "duration", required_argument, NULL, 't' },
    { "queue-depth", required_argument, NULL, 'q' },
    { "only", required_argument, NULL, 'o' },
    { "json", no_argument, NULL, 'j' },
    { "window", required_argument, NULL, 'w' },
    { "trace", no_argument, NULL, 'T' },
    { "list-scheds", no_argument, NULL, 'l' },
    { "list-models", no_argument, NULL, 'm' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *duration = NULL, *seed = NULL;
  bool list_models = false;
  static struct cfg *c;         /* static: die_at() exits from anywhere */
  char *text, want[96];
  size_t len;
  int ch;

  c = cfg_new (report_error, NULL);
  if (!c)
    die_at (NULL, "out of memory");
  cfg_simulate (c);
  while ((ch = getopt_long (argc, argv, "h", opts, NULL)) != -1) {
    switch (ch) {
    case 'l': {
      static const char *const names[] = { "fifo", "cfq", NULL };
      for (int i = 0; names[i]; i++)
        if (sched_lookup (names[i]))
          printf ("%s\n", names[i]);
      return 0;
    }
    case 'h':
      usage (stdout);
      return 0;
    case 'm': list_models = true; break;
    case 'j': cfg.json = true; break;
    case 'T': cfg.trace = true; break;
    case 'w':
      if (units_parse_time (optarg, 0, &cfg.window) < 0 || !cfg.window)
        die_at (NULL, "--window %s: not a time (want %s, more than 0)",
                optarg, units_expect_time (0, want, sizeof want));
      break;
    case 'o': cfg.only = optarg; break;
    case 'r': seed = optarg; break;
    case 't': duration = optarg; break;
    case 's':
      /* An extra policy (the test build's) is no scheduler of the model. */
      if (lookup_policy (optarg) && !sched_lookup (optarg)) {
        cfg.test_policy = optarg;
        cfg_set_override (c, "scheduler", "fifo");
      }
      else
        cfg_set_override (c, "scheduler", optarg);
      break;
    case 'S': override (c, "set", "", optarg); break;
    case 'D': cfg_set_override (c, "emulate", optarg); break;
    case 'd': override (c, "dev", "model.", optarg); break;
    case 'q': cfg_set_override (c, "queue_depth", optarg); break;
    default:
      usage (stderr);
      return 1;
    }
  }
  if (list_models) {
    sim_print_models ();
    return 0;
  }
  if (optind != argc - 1) {
    usage (stderr);
    return 1;
  }
  cfg.file = argv[optind];
  slurp (cfg.file, &text, &len);
  cfg_parse (c, cfg.file, text, len);
  free (text);
  if (cfg_validate (c, 0) < 0)
    return 1;                   /* every error is on stderr already */
  cfg.m = cfg_model (c);
  cfg.duration = cfg.m->sim.duration;
  cfg.seed = cfg.m->sim.seed;
  cfg.queue_depth = cfg.m->dev.queue_depth;
  if (duration && (units_parse_time (duration, 0, &cfg.duration) < 0
                   || cfg.duration == 0))
    die_at (NULL, "--duration %s: not a time (want %s, more than 0)",
            duration, units_expect_time (0, want, sizeof want));
  if (seed && units_parse_count (seed, &cfg.seed) < 0)
    die_at (NULL, "--seed %s: not a number", seed);
  sim_select_only ();
  sim_setup ();
  sim_run ();
  sim_report ();
  cfg_free (c);
  return 0;
}
