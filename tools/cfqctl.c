/* cfqctl: talk to a running nbdkit-cfq server's control socket.
 *
 *   cfqctl -s PATH stats [-i SECONDS] [-c COUNT] [--json]
 *   cfqctl -s PATH metrics
 *   cfqctl -s PATH get KEY
 *   cfqctl -s PATH set KEY VALUE           (or KEY=VALUE)
 *   cfqctl -s PATH weight GROUP WEIGHT
 *   cfqctl -s PATH qos GROUP [KEY VALUE]   (or KEY=VALUE)
 *   cfqctl -s PATH cost
 *   cfqctl -s PATH reset
 *   cfqctl -s PATH raw 'LINE'
 *
 * The protocol (served by the plugin's dispatcher loop, see
 * plugin/control.c) is one command per line; every answer is one or more
 * lines ended by an empty line.  Errors start with "error: ".  "stats"
 * answers one line of JSON; "stats flat" answers one record per line,
 * "KIND NAME key=value ...", which is what the table below is drawn from,
 * so this tool needs no JSON parser.
 *
 * A KEY VALUE pair may be written KEY=VALUE, and a number's unit may be a
 * word of its own ("set slice_idle 4 ms"): both are sent as the protocol's
 * "KEY VALUE".  A command line that is not one of the above is refused in
 * one line that says what is wrong, exit 2.
 */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "sched.h"
#include "suggest.h"
#include "units.h"

static const char *progname = "cfqctl";

static void
usage (FILE *f)
{
  fprintf (f,
           "usage: %s -s SOCKET COMMAND   (or CFQ_CONTROL=SOCKET)\n"
           "commands:\n"
           "  stats [-i SECONDS] [-c COUNT] [--json]  table per group and export\n"
           "  metrics                       the same in Prometheus's text format\n"
           "  get [KEY]                     print a tunable, or all of them\n"
           "  set KEY VALUE                 change a tunable (times take ns/us/ms/s;\n"
           "                                a bare number is ms): set slice_idle 4ms\n"
           "  weight GROUP WEIGHT           change a group's weight (100..1000)\n"
           "  qos GROUP [KEY VALUE]         show or change a group's caps and\n"
           "                                reservation: qos gold iops_max 2000,\n"
           "                                qos gold bps_min 20M (0 removes one);\n"
           "                                its latency target and boost:\n"
           "                                qos db latency_target 5ms, qos db boost on\n"
           "KEY VALUE may also be written KEY=VALUE, and a unit may follow the\n"
           "number as a word of its own (set slice_idle 4 ms).\n"
           "  cost                          the cost model: its figures, where they\n"
           "                                came from (calibrated, saved, stated ...),\n"
           "                                the online correction, what it predicts\n"
           "  reset                         zero the statistics\n"
           "  raw LINE                      send LINE, print the answer\n",
           progname);
}

static int
ctl_connect (const char *path)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd;

  if (strlen (path) >= sizeof sun.sun_path) {
    fprintf (stderr, "%s: %s: socket path too long\n", progname, path);
    return -1;
  }
  strcpy (sun.sun_path, path);
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1) {
    fprintf (stderr, "%s: socket: %s\n", progname, strerror (errno));
    return -1;
  }
  if (connect (fd, (struct sockaddr *) &sun, sizeof sun) == -1) {
    fprintf (stderr, "%s: %s: %s\n", progname, path, strerror (errno));
    close (fd);
    return -1;
  }
  return fd;
}

/* Send one command line; return the answer without its final empty line,
 * malloc'd, or NULL on error (said on stderr).
 */
static char *
ctl_call (int fd, const char *cmd)
{
  size_t len = strlen (cmd), cap = 4096, n = 0;
  char *buf;

  bool sent;

  /* The server may have refused us already (too many clients, a uid it
   * does not serve) and closed: then read why rather than die of SIGPIPE.
   */
  sent = send (fd, cmd, len, MSG_NOSIGNAL) == (ssize_t) len
    && send (fd, "\n", 1, MSG_NOSIGNAL) == 1;
  if (!sent && errno != EPIPE && errno != ECONNRESET) {
    fprintf (stderr, "%s: write: %s\n", progname, strerror (errno));
    return NULL;
  }
  buf = malloc (cap);
  if (!buf)
    return NULL;
  for (;;) {
    ssize_t r;

    if ((n == 1 && buf[0] == '\n')
        || (n >= 2 && buf[n - 1] == '\n' && buf[n - 2] == '\n')) {
      buf[n - 1] = '\0';
      if (n >= 2)
        buf[n - 2] = '\0';
      return buf;
    }
    if (cap - n < 1024) {
      char *nb = realloc (buf, cap * 2);
      if (!nb) {
        free (buf);
        return NULL;
      }
      buf = nb;
      cap *= 2;
    }
    r = read (fd, buf + n, cap - n - 1);
    if (r == 0 || (r < 0 && errno == ECONNRESET)) {
      buf[n] = '\0';
      if (n && strncmp (buf, "error: ", 7) == 0) {
        buf[strcspn (buf, "\n")] = '\0';
        return buf;             /* why it closed: the caller prints it */
      }
      fprintf (stderr, "%s: the server closed the connection\n", progname);
      free (buf);
      return NULL;
    }
    if (r < 0) {
      if (errno == EINTR)
        continue;
      fprintf (stderr, "%s: read: %s\n", progname, strerror (errno));
      free (buf);
      return NULL;
    }
    n += r;
  }
}

/* Find " key=value" in a record line and copy the value to out. */
static void
field (const char *line, const char *key, char *out, size_t outlen)
{
  size_t kl = strlen (key);
  const char *p = line;

  while ((p = strstr (p, key)) != NULL) {
    if ((p == line || p[-1] == ' ') && p[kl] == '=') {
      size_t i = 0;
      p += kl + 1;
      while (p[i] && p[i] != ' ' && i + 1 < outlen) {
        out[i] = p[i];
        i++;
      }
      out[i] = '\0';
      return;
    }
    p += kl;
  }
  snprintf (out, outlen, "-");
}

/* The device record's fields, by what they are about: one line each. */
static const struct {
  const char *label;
  const char *keys[12];
} dev_lines[] = {
  { "device", { "scheduler", "mode", "hw_tag", "queue_depth", "emulate" } },
  { "rate", { "iops", "mibs", "share", "avg_iops", "avg_mibs" } },
  { "latency", { "p50_ms", "p99_ms", "p999_ms", "max_ms" } },
  { "sched/dev", { "q_p50_ms", "q_p99_ms", "d_p50_ms", "d_p99_ms" } },
  { "requests", { "reads", "writes", "flushes", "trims", "zeroes", "bytes",
                  "errors" } },
  { "cfq", { "slices", "idle_hits", "idle_timeouts", "preemptions" } },
  { "engine", { "inflight", "held", "cancelled" } },
  { "buffers", { "buffers_in_use", "buffers_total", "buffers_cap",
                 "buffer_waits" } },
  { "nbdkit", { "request_buffers", "request_limit", "requests_refused",
                "reply_timeouts" } },
};
#define NR_DEV_LINES (sizeof dev_lines / sizeof dev_lines[0])

/* Is KEY=... the token at P (up to a space)? */
static bool
is_key (const char *p, size_t len, const char *key)
{
  size_t kl = strlen (key);

  return kl < len && strncmp (p, key, kl) == 0 && p[kl] == '=';
}

/* The device record, "device - k=v k=v ...", one line per dev_lines[]
 * row, then any field no row names (a newer server's).
 */
static void
print_device (const char *rec)
{
  const char *fields = strstr (rec, " - ");

  fields = fields ? fields + 3 : rec;
  for (size_t l = 0; l <= NR_DEV_LINES; l++) {
    char line[4096];
    size_t n = 0;

    for (const char *p = fields; *p; ) {
      size_t len = strcspn (p, " ");
      bool named = false, mine = false;

      for (size_t r = 0; r < NR_DEV_LINES; r++)
        for (size_t k = 0; k < 12 && dev_lines[r].keys[k]; k++)
          if (is_key (p, len, dev_lines[r].keys[k])) {
            named = true;
            mine = mine || r == l;
          }
      if (len && (l == NR_DEV_LINES ? !named : mine) && n < sizeof line)
        n += (size_t) snprintf (line + n, sizeof line - n, " %.*s",
                                (int) len, p);
      p += len;
      p += strspn (p, " ");
    }
    if (n)
      printf ("%-9s%s\n", l < NR_DEV_LINES ? dev_lines[l].label : "other",
              line);
  }
}

static void
print_table (const char *flat)
{
  const char *line = flat;
  char dev[4096] = "";

  printf ("%-7s %-16s %6s %9s %9s %7s %9s %9s %9s\n",
          "KIND", "NAME", "WEIGHT", "IOPS", "MiB/s", "SHARE%",
          "p50(ms)", "p99(ms)", "max(ms)");
  while (line && *line) {
    const char *eol = strchr (line, '\n');
    size_t len = eol ? (size_t) (eol - line) : strlen (line);
    char rec[4096], kind[32], name[256];
    char w[32], iops[32], mibs[32], share[32], p50[32], p99[32], mx[32];

    if (len >= sizeof rec)
      len = sizeof rec - 1;
    memcpy (rec, line, len);
    rec[len] = '\0';
    line = eol ? eol + 1 : NULL;
    if (sscanf (rec, "%31s %255s", kind, name) != 2)
      continue;
    if (strcmp (kind, "device") == 0) {
      snprintf (dev, sizeof dev, "%s", rec);
      continue;
    }
    if (strcmp (kind, "group") != 0 && strcmp (kind, "export") != 0)
      continue;
    field (rec, "weight", w, sizeof w);
    field (rec, "iops", iops, sizeof iops);
    field (rec, "mibs", mibs, sizeof mibs);
    field (rec, "share", share, sizeof share);
    field (rec, "p50_ms", p50, sizeof p50);
    field (rec, "p99_ms", p99, sizeof p99);
    field (rec, "max_ms", mx, sizeof mx);
    /* Nothing moved in the last second: the server's share is then of
     * the bytes since start, which the IOPS beside it would contradict.
     */
    if (atof (iops) == 0 && atof (mibs) == 0)
      snprintf (share, sizeof share, "-");
    printf ("%-7s %-16s %6s %9s %9s %7s %9s %9s %9s\n",
            kind, name, w, iops, mibs, share, p50, p99, mx);
  }
  printf ("latency: from arrival at the scheduler to the device's completion;"
          " the NBD round trip\n(client, network, nbdkit) is not in it."
          "  SHARE%%: of the last second's bytes\n");
  if (*dev)
    print_device (dev);
}

/* ARGV[0..ARGC) as one KEY VALUE pair for the protocol: "KEY VALUE",
 * "KEY=VALUE", either with the unit as a word of its own ("4 ms",
 * "KEY=4 ms").  Writes "KEY VALUE" to OUT, or why not to WHY; -1 then.
 */
static int
key_value (int argc, char **argv, char *out, size_t len, char *why,
           size_t wlen)
{
  const char *eq = argc > 0 ? strchr (argv[0], '=') : NULL;
  const char *words[2];
  size_t kl, nw = 0;

  if (argc == 0) {
    snprintf (why, wlen, "missing KEY VALUE");
    return -1;
  }
  kl = eq ? (size_t) (eq - argv[0]) : strlen (argv[0]);
  if (kl == 0) {
    snprintf (why, wlen, "'%s': missing KEY before '='", argv[0]);
    return -1;
  }
  if (eq && eq[1])
    words[nw++] = eq + 1;
  for (int i = 1; i < argc; i++) {
    if (nw == 2) {
      snprintf (why, wlen, "'%s' after the value (want KEY VALUE or"
                " KEY=VALUE)", argv[i]);
      return -1;
    }
    words[nw++] = argv[i];
  }
  if (nw == 0) {
    snprintf (why, wlen, "%.*s: missing value", (int) kl, argv[0]);
    return -1;
  }
  /* A second word is the first one's unit: "4 ms", "20 MiB/s". */
  if (nw == 2 && (!strchr ("0123456789", words[0][0])
                  || words[0][strspn (words[0], "0123456789.")] != '\0'
                  || !strchr ("abcdefghijklmnopqrstuvwxyz"
                              "ABCDEFGHIJKLMNOPQRSTUVWXYZ", words[1][0]))) {
    snprintf (why, wlen, "'%s' after the value '%s' (want KEY VALUE or"
              " KEY=VALUE, a unit written as in 4ms)", words[1], words[0]);
    return -1;
  }
  if ((size_t) snprintf (out, len, "%.*s %s%s", (int) kl, argv[0], words[0],
                         nw == 2 ? words[1] : "") >= len) {
    snprintf (why, wlen, "too long");
    return -1;
  }
  return 0;
}

/* The commands and what follows each, for messages. */
static const char *const verbs[] = {
  "stats", "metrics", "get", "set", "weight", "qos", "cost", "reset", "raw",
  NULL,
};
static const char *const verb_args[] = {
  "[-i SECONDS] [-c COUNT] [--json]", "", "[KEY]", "KEY VALUE",
  "GROUP WEIGHT", "GROUP [KEY VALUE]", "", "", "LINE",
};

/* A command line that is not one: say what is wrong, in one line. */
static int
bad_command (const char *verb, const char *what)
{
  struct suggest s;
  char hint[256];
  int i;

  suggest_init (&s, verb);
  suggest_add_all (&s, verbs);
  for (i = 0; verbs[i] && strcmp (verbs[i], verb) != 0; i++)
    ;
  if (!verbs[i])
    fprintf (stderr, "%s: unknown command '%s'%s\n", progname, verb,
             suggest_hint (&s, hint, sizeof hint));
  else if (what)
    fprintf (stderr, "%s: %s: %s\n", progname, verb, what);
  else
    fprintf (stderr, "%s: %s: want %s%s%s\n", progname, verb, verb,
             *verb_args[i] ? " " : "", verb_args[i]);
  return 2;
}

/* The options, before the command or after it ("stats -i 1"). */
struct ctl_opts {
  const char *path;             /* the control socket */
  double interval;              /* seconds between stats; 0: once */
  long count;                   /* stats to print; -1: not given */
  bool json;                    /* stats as the server's JSON */
};

/* Parse the options into O; -1 to go on, else the exit code. */
static int
ctl_options (int argc, char *argv[], struct ctl_opts *o)
{
  static const struct option longopts[] = {
    { "socket", required_argument, NULL, 's' },
    { "interval", required_argument, NULL, 'i' },
    { "count", required_argument, NULL, 'c' },
    { "json", no_argument, NULL, 'j' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  uint64_t ns;
  int c;

  while ((c = getopt_long (argc, argv, "s:i:c:jh", longopts, NULL)) != -1) {
    switch (c) {
    case 's': o->path = optarg; break;
    case 'i':
      if (units_parse_time (optarg, NSEC_PER_SEC, &ns) < 0 || ns == 0) {
        fprintf (stderr, "%s: -i %s: need a positive time (a number with"
                 " ns, us, ms or s; a bare number is s)\n", progname, optarg);
        return 2;
      }
      o->interval = (double) ns / NSEC_PER_SEC;
      break;
    case 'c':
      o->count = strtol (optarg, NULL, 10);
      if (o->count <= 0) {
        fprintf (stderr, "%s: -c %s: need a positive count\n", progname,
                 optarg);
        return 2;
      }
      break;
    case 'j': o->json = true; break;
    case 'h': usage (stdout); return 0;
    default: usage (stderr); return 2;
    }
  }
  return -1;
}

/* The protocol's line for VERB and its NARGS words ARGS, into CMD; 0, or
 * 2 when the command line is not a command (said on stderr).
 */
static int
ctl_command (const char *verb, int nargs, char **args, bool json,
             char *cmd, size_t len)
{
  char kv[1024], why[512];

  if (strcmp (verb, "stats") == 0 && nargs == 0)
    snprintf (cmd, len, json ? "stats" : "stats flat");
  else if (strcmp (verb, "get") == 0 && nargs <= 1)
    snprintf (cmd, len, "get%s%s", nargs ? " " : "", nargs ? args[0] : "");
  else if (strcmp (verb, "set") == 0) {
    if (key_value (nargs, args, kv, sizeof kv, why, sizeof why) < 0)
      return bad_command (verb, why);
    snprintf (cmd, len, "set %s", kv);
  }
  else if (strcmp (verb, "weight") == 0 && nargs == 2)
    snprintf (cmd, len, "weight %s %s", args[0], args[1]);
  else if (strcmp (verb, "qos") == 0 && nargs == 1)
    snprintf (cmd, len, "qos %s", args[0]);
  else if (strcmp (verb, "qos") == 0 && nargs > 1) {
    if (key_value (nargs - 1, args + 1, kv, sizeof kv, why, sizeof why) < 0)
      return bad_command (verb, why);
    snprintf (cmd, len, "qos %s %s", args[0], kv);
  }
  else if (strcmp (verb, "cost") == 0 && nargs == 0)
    snprintf (cmd, len, "cost");
  else if (strcmp (verb, "reset") == 0 && nargs == 0)
    snprintf (cmd, len, "reset");
  else if (strcmp (verb, "metrics") == 0 && nargs == 0)
    snprintf (cmd, len, "metrics");
  else if (strcmp (verb, "raw") == 0 && nargs == 1)
    snprintf (cmd, len, "%s", args[0]);
  else
    return bad_command (verb, NULL);
  return 0;
}

/* Send CMD COUNT times (0: until interrupted), INTERVAL seconds apart,
 * and print each answer, as a table if TABLE; the exit code.
 */
static int
ctl_repeat (int fd, const char *cmd, long count, double interval, bool table)
{
  for (long i = 0; count == 0 || i < count; i++) {
    char *ans;

    if (i > 0) {
      struct timespec ts = { (time_t) interval,
                             (long) ((interval - (time_t) interval) * 1e9) };
      nanosleep (&ts, NULL);
    }
    ans = ctl_call (fd, cmd);
    if (!ans)
      return 1;
    if (strncmp (ans, "error: ", 7) == 0) {
      fprintf (stderr, "%s: %s\n", progname, ans + 7);
      free (ans);
      return 1;
    }
    if (table) {
      if (i > 0)
        printf ("\n");
      print_table (ans);
    }
    else if (*ans)
      printf ("%s\n", ans);
    fflush (stdout);
    free (ans);
  }
  return 0;
}

int
main (int argc, char *argv[])
{
  struct ctl_opts o = { .path = getenv ("CFQ_CONTROL"), .count = -1 };
  const char *verb;
  bool stats;
  char cmd[4096];
  int fd, rc;

  rc = ctl_options (argc, argv, &o);
  if (rc >= 0)
    return rc;
  if (optind >= argc) {
    usage (stderr);
    return 2;
  }
  if (!o.path) {
    fprintf (stderr, "%s: no control socket: use -s PATH or CFQ_CONTROL\n",
             progname);
    return 2;
  }
  verb = argv[optind++];
  rc = ctl_command (verb, argc - optind, argv + optind, o.json, cmd,
                    sizeof cmd);
  if (rc)
    return rc;
  stats = strcmp (verb, "stats") == 0;
  if (!stats)
    o.count = 1;
  else if (o.count < 0)
    o.count = o.interval > 0 ? 0 : 1;   /* 0: until interrupted */

  fd = ctl_connect (o.path);
  if (fd == -1)
    return 1;
  rc = ctl_repeat (fd, cmd, o.count, o.interval, stats && !o.json);
  close (fd);
  return rc;
}
