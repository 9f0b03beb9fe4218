/* cfqconf: check a configuration and show what the plugin would make of it.
 *
 *   cfqconf [--check] [--size SIZE] [FILE] [KEY=VALUE...]
 *
 * Parses FILE with the same code as the plugin (core/config.c), applies
 * KEY=VALUE overrides as the plugin applies its command-line keys, and
 * validates against the device size: SIZE if given (nbdkit size syntax),
 * else the size of the device file, opened read-only.  Prints the resolved
 * model (groups, exports with their regions, scheduler tunables: CFQ's
 * whole table, marked "(set)" where the config gives a value) or every
 * error as FILE:LINE: message.  --check prints nothing on success.
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

#include "cfq.h"
#include "config.h"
#include "qos.h"

static void
usage (FILE *f)
{
  fprintf (f, "usage: cfqconf [--check] [--size SIZE] [FILE] [KEY=VALUE...]\n");
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

static const char *
class_name (enum sched_class c)
{
  return c == SCHED_CLASS_RT ? "rt" : c == SCHED_CLASS_IDLE ? "idle" : "be";
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

static void
print_model (const char *file, const struct cfg_model *m, uint64_t size)
{
  static const char *const modes[] = { "auto", "time", "iops" };
  static const char *const emus[] = { "none", "hdd", "ssd" };
  char b1[32], b2[32], b3[32];

  printf ("config: %s\n", file ? file : "(none)");
  printf ("device: %s, size %s (%llu bytes)\n",
          m->dev.file ? m->dev.file : "(none)",
          cfg_format_size (size, b1, sizeof b1), (unsigned long long) size);
  printf ("  queue_depth = %u\n  mode = %s\n  emulate = %s\n",
          m->dev.queue_depth, modes[m->dev.mode], emus[m->dev.emulate]);
  for (size_t i = 0; i < m->dev.nr_model; i++)
    printf ("  model.%s = %s\n", m->dev.model[i].key, m->dev.model[i].value);

  printf ("scheduler: %s\n", m->scheduler);
  if (strcmp (m->scheduler, "cfq") == 0)
    for (size_t i = 0; i < cfq_nr_tunables; i++) {
      const struct cfq_tunable *d = &cfq_tunables[i];
      const struct cfg_tunable *t = NULL;
      uint64_t v = d->def;
      for (size_t j = 0; j < m->nr_tunables; j++)
        if (strcmp (m->tunables[j].name, d->name) == 0)
          t = &m->tunables[j];
      if (t)
        v = t->val;
      if (strcmp (d->unit, "ns") == 0)
        cfg_format_time (v, b1, sizeof b1);
      else if (strcmp (d->unit, "KiB") == 0)
        cfg_format_size (v * 1024, b1, sizeof b1);
      else if (strcmp (d->name, "mode") == 0)
        snprintf (b1, sizeof b1, "%s", cfq_mode_name (v));
      else
        snprintf (b1, sizeof b1, "%llu", (unsigned long long) v);
      printf ("  %-18s %-8s %s\n", d->name, b1, t ? "(set)" : "(default)");
    }

  printf ("groups:\n");
  for (size_t i = 0; i < m->nr_groups; i++) {
    const struct cfg_group *g = &m->groups[i];
    printf ("  %-12s weight=%u class=%s prio=%u", g->name, g->weight,
            class_name (g->cls), g->prio);
    for (size_t k = 0; k < qos_nr_keys; k++) {
      uint64_t v = qos_conf_get (&g->qos, &qos_keys[k]);
      char b[32];
      if (v)
        printf (" %s=%s", qos_keys[k].name,
                cfg_format_qos (&qos_keys[k], v, b, sizeof b));
    }
    if (g->line)
      printf ("  (line %u)\n", g->line);
    else
      printf ("  (implicit)\n");
  }

  printf ("exports:\n");
  for (size_t i = 0; i < m->nr_exports; i++) {
    const struct cfg_export *e = &m->exports[i];
    printf ("  \"%s\" group=%s ", e->name, m->groups[e->group].name);
    if (e->file)
      printf ("file=%s", e->file);
    else
      printf ("region=[%s, %s) size=%s",
              cfg_format_size (e->offset, b1, sizeof b1),
              cfg_format_size (e->offset + e->size, b2, sizeof b2),
              cfg_format_size (e->size, b3, sizeof b3));
    printf (" %s writes=%s allow=", e->readonly ? "ro" : "rw",
            e->writes_sync ? "sync" : "async");
    if (e->nr_allow == 0)
      printf ("anyone");
    for (size_t j = 0; j < e->nr_allow; j++) {
      if (j)
        printf (",");
      print_net (&e->allow[j]);
    }
    printf ("\n");
  }
}

int
main (int argc, char *argv[])
{
  static const struct option opts[] = {
    { "check", no_argument, NULL, 'c' },
    { "size", required_argument, NULL, 's' },
    { "help", no_argument, NULL, 'h' },
    { NULL, 0, NULL, 0 },
  };
  const char *file = NULL, *dev;
  bool check = false, have_size = false;
  uint64_t size = 0;
  struct cfg *cfg;
  int c, r, ret = 1;

  while ((c = getopt_long (argc, argv, "cs:h", opts, NULL)) != -1) {
    switch (c) {
    case 'c': check = true; break;
    case 's':
      if (cfg_parse_size (optarg, &size) < 0) {
        fprintf (stderr, "cfqconf: --size %s: not a size\n", optarg);
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

  dev = cfg_device_file (cfg);
  if (!have_size && dev && cfg_nr_errors (cfg) == 0) {
    int fd = open (dev, O_RDONLY | O_CLOEXEC);
    off_t end;
    if (fd == -1 || (end = lseek (fd, 0, SEEK_END)) == -1) {
      fprintf (stderr, "cfqconf: %s: %m (use --size to check without the"
               " device)\n", dev);
      if (fd != -1)
        close (fd);
      goto out;
    }
    size = end;
    close (fd);
  }

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
  if (!check)
    print_model (file, cfg_model (cfg), size);
  ret = 0;
out:
  cfg_free (cfg);
  return ret;
}
