/* costmodel.c: where the device's cost model comes from, where it is
 * kept, and how it is reported (see costmodel.h; the model itself is
 * include/cost.h).
 *
 * In order, the first that applies:
 *
 *   stated     [device] cost_model = ...: the operator knows best
 *   device     emulate=: the device model's parameters, exact
 *   file       calibration = FILE holds a model measured on this very
 *              device (same file system device, inode and size, or same
 *              block device and size), with writes if calibrate = write
 *   measured   calibrate = read|write: measured now (calibrate.c), the
 *              figures judged by core's cost_calibrate, and saved to
 *              FILE if given
 *   generic    the device model's generic disk or flash by rotational
 *              (the policy's own default, cost_params_default)
 *
 * A measurement is not made where it could only measure something else
 * than the device the scheduler sees: the page cache (cache = page, or
 * a file system that refuses O_DIRECT), no device at all (backend=null),
 * or a scheduler that charges no cost (fifo).  A measurement refused
 * falls back to the last valid model: the file's if it is this device's,
 * else the generic one.  Each of these is said once in the log, and the
 * control socket's "cost" says which one holds and why.
 *
 * CFQ_CALIBRATE in the environment is the default of calibrate when
 * neither the config nor the command line gives it (the test suite sets
 * it to off: its many short-lived servers on small images would each
 * spend seconds measuring).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "backing.h"
#include "calibrate.h"
#include "config.h"
#include "control.h"
#include "cost.h"
#include "costfile.h"
#include "costmodel.h"
#include "devmodel.h"
#include "outfile.h"
#include "sched.h"
#include "tenants.h"
#include "units.h"

#define CM_ENV "CFQ_CALIBRATE"
#define CM_FILE_MAX 65536               /* bytes: a saved model is ~400 */

enum cm_kind { CM_GENERIC = 0, CM_STATED, CM_DEVMODEL, CM_FILE, CM_MEASURED };

/* What cm_prepare decided: main thread, then read-only. */
static struct {
  enum cm_kind kind;
  struct cost_params p;         /* the model; not for CM_GENERIC */
  bool rot;                     /* CM_GENERIC: the generic disk (else
                                   flash), for a scheduler without one */
  const char *emulate;          /* CM_DEVMODEL: the preset's name */
  const char *path;             /* calibration = FILE, or NULL */
  int64_t date;                 /* CM_FILE, CM_MEASURED: s since the
                                   epoch, when measured */
  uint64_t took;                /* ns the measurement took */
  bool writes;                  /* writes were measured */
  const char *wfrom;            /* CM_MEASURED without writes: where the
                                   write figures come from */
  bool saved;                   /* CM_MEASURED: written to path */
  char why[384];                /* CM_GENERIC: why no measured model;
                                   else a note on it, or "" */
  char file_note[384];          /* why the saved model was not used, or
                                   "" */
} cm;

static const char *
generic_name (bool rot)
{
  return rot ? "the generic disk model" : "the generic flash model";
}

/* Whether the generic model is the disk's: rotational as cfg_apply will
 * set it (a configured value wins; unknown is CFQ's default, 1).
 */
static bool
generic_rot (const struct cfg_model *m, int detected)
{
  for (size_t i = 0; i < m->nr_tunables; i++)
    if (strcmp (m->tunables[i].name, "rotational") == 0)
      return m->tunables[i].val != 0;
  return cfg_rotational (m, detected) != 0;
}

/* calibrate, or CFQ_CALIBRATE's default for it.  0 or -1 (reported). */
static int
calibrate_mode (const struct cfg_device *d, enum cfg_calibrate *mode)
{
  const char *env = getenv (CM_ENV);

  *mode = d->calibrate;
  if (d->calibrate_given || !env)
    return 0;
  for (int c = CFG_CALIBRATE_OFF; c <= CFG_CALIBRATE_WRITE; c++)
    if (strcmp (env, cfg_calibrate_name (c)) == 0) {
      *mode = c;
      return 0;
    }
  nbdkit_error ("cfq: %s=%s in the environment: want off, read or write",
                CM_ENV, env);
  return -1;
}

/* What device b is.  0 or -1 (reported). */
static int
ident (const struct backing *b, struct cost_ident *id)
{
  dev_t dev;
  ino_t ino;

  memset (id, 0, sizeof *id);
  if (bk_identity (b, &dev, &ino) == -1)
    return -1;
  id->blockdev = b->dev.is_blockdev;
  id->major = major (dev);
  id->minor = minor (dev);
  id->ino = (uint64_t) ino;
  id->size = b->dev.size;
  return 0;
}

/* Read the saved model at path: 0, -ENOENT (none there), or another
 * -errno with WHY.
 */
static int
load (const char *path, struct cost_saved *s, char *why, size_t len)
{
  char *buf = NULL;
  struct stat st;
  size_t n = 0;
  int fd, err;

  fd = open (path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd == -1) {
    err = -errno;
    snprintf (why, len, "%s", strerror (errno));
    return err;
  }
  if (fstat (fd, &st) == -1) {
    err = -errno;
    snprintf (why, len, "fstat: %s", strerror (errno));
    goto out;
  }
  err = -EINVAL;
  if (!S_ISREG (st.st_mode)) {
    snprintf (why, len, "not a regular file");
    goto out;
  }
  if (st.st_size > CM_FILE_MAX) {
    snprintf (why, len, "%lld bytes: not a calibration file (at most %d)",
              (long long) st.st_size, CM_FILE_MAX);
    goto out;
  }
  buf = malloc ((size_t) st.st_size + 1);
  if (!buf) {
    err = -ENOMEM;
    snprintf (why, len, "%s", strerror (ENOMEM));
    goto out;
  }
  while (n < (size_t) st.st_size) {
    ssize_t r = read (fd, buf + n, (size_t) st.st_size - n);

    if (r == 0)
      break;
    if (r == -1 && errno == EINTR)
      continue;
    if (r == -1) {
      err = -errno;
      snprintf (why, len, "read: %s", strerror (errno));
      goto out;
    }
    n += (size_t) r;
  }
  err = cost_file_parse (buf, n, s, why, len);
 out:
  free (buf);
  close (fd);
  return err;
}

static void
save (const struct cost_ident *id)
{
  struct cost_saved s = {
    .p = cm.p, .id = *id, .date = cm.date, .took = cm.took,
    .writes = cm.writes,
  };
  char text[1024], *tmp = NULL;
  int err;

  cost_file_format (&s, text, sizeof text);
  if (asprintf (&tmp, "%s.tmp", cm.path) == -1) {
    nbdkit_error ("cfq: calibration=%s: %m: the model is not saved",
                  cm.path);
    return;
  }
  err = outfile_replace (cm.path, tmp, text, true);
  free (tmp);
  if (err) {
    nbdkit_error ("cfq: calibration=%s: %s: the model is not saved",
                  cm.path, strerror (-err));
    return;
  }
  cm.saved = true;
  nbdkit_debug ("cfq: calibration=%s: the model is saved", cm.path);
}

/* The model falls back to the saved one if it is this device's, else to
 * the generic one; why says why there is no measurement.
 */
static void
fall_back (const struct cost_saved *file, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));

static void
fall_back (const struct cost_saved *file, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  vsnprintf (cm.why, sizeof cm.why, fmt, ap);
  va_end (ap);
  if (file) {
    cm.kind = CM_FILE;
    cm.p = file->p;
    cm.date = file->date;
    cm.took = file->took;
    cm.writes = file->writes;
  }
  else
    cm.kind = CM_GENERIC;
}

/* "rbps=... depth=N (predicted: ...)" for the log. */
static const char *
describe (const struct cost_params *p, char *buf, size_t len)
{
  struct cost_model m;
  size_t n = cost_params_format (p, buf, len);

  if (n < len && cost_model_init (&m, p, "") == 0)
    snprintf (buf + n, len - n, " (predicted: 4k random reads %.0f/s,"
              " 4k random writes %.0f/s, sequential reads %.1f MiB/s)",
              cost_model_iops (&m, COST_READ, false),
              cost_model_iops (&m, COST_WRITE, false),
              cost_model_bps (&m, COST_READ) / (1 << 20));
  return buf;
}

/* Measure the real device b; the rest of cm_prepare's decision. */
static void
measure (const struct backing *b, const struct cost_ident *id,
         const struct cost_params *fallback, const struct cost_saved *file,
         bool writes)
{
  struct calib_dev cd = {
    .path = b->path, .fd = b->fds[FILE_DIRECT], .size = b->dev.size,
    .align = b->bs, .mem_align = bk_buf_align (),
    .regular = !b->dev.is_blockdev,
  };
  const char *keep = file ? "the saved model" : generic_name (cm.rot);
  struct cost_measure ms;
  struct calib_note note;
  struct cost_params out;
  char why[256], buf[512];
  int err;

  cm.wfrom = keep;
  if (writes && !b->writable) {
    writes = false;
    snprintf (cm.why, sizeof cm.why, "writes not measured: %s is open"
              " read-only", b->path);
    nbdkit_error ("cfq: calibration of %s: writes not measured: the file"
                  " is open read-only", b->path);
  }
  nbdkit_debug ("cfq: calibration of %s: measuring %s at depth %" PRIu64
                " (about %.1f s); no client is served meanwhile", b->path,
                writes ? "reads and writes" : "reads", fallback->depth,
                (writes ? 6 : 3) * CALIB_FIGURE_NS / 1e9);
  err = calib_measure (&cd, (unsigned) fallback->depth, writes, &ms, &note,
                       why, sizeof why);
  if (cd.regular && note.data && note.data < b->dev.size / 100 * 99)
    nbdkit_error ("cfq: calibration of %s: %" PRIu64 "%% of the file is"
                  " holes or stretches of data under 1 MiB: only its %"
                  PRIu64 " MiB of data are measured (a hole reads without"
                  " reaching the disk: fill the image to measure all of"
                  " it)", b->path,
                  100 - note.data * 100 / (b->dev.size ? b->dev.size : 1),
                  note.data >> 20);
  if (err) {
    nbdkit_error ("cfq: calibration of %s: not measured: %s: keeping %s",
                  b->path, why, keep);
    fall_back (file, "not measured: %s", why);
    return;
  }
  if (writes && !note.writes) {
    nbdkit_error ("cfq: calibration of %s: writes not measured: %s",
                  b->path, why);
    snprintf (cm.why, sizeof cm.why, "writes not measured: %s", why);
  }
  if (cost_calibrate (&ms, fallback, &out, why, sizeof why) != 0) {
    nbdkit_error ("cfq: calibration of %s: refused: %s (the measurement"
                  " saw something other than the device: a cache, a"
                  " stall): keeping %s", b->path, why, keep);
    fall_back (file, "the measurement was refused: %s", why);
    return;
  }
  cm.kind = CM_MEASURED;
  cm.p = out;
  cm.date = (int64_t) time (NULL);
  cm.took = note.took;
  cm.writes = note.writes;
  nbdkit_debug ("cfq: calibration of %s: measured in %.2f s over %" PRIu64
                " MiB: %s", b->path, note.took / 1e9, note.data >> 20,
                describe (&out, buf, sizeof buf));
  if (cm.path)
    save (id);
}

int
cm_prepare (const struct cfg_model *m, struct devmodel *dm, int rotational,
            const char *sched_name, const char *backend)
{
  const struct cfg_device *d = &m->dev;
  const struct sched_ops *ops = sched_lookup (sched_name);
  const struct backing *b = bk_main ();
  struct cost_params fallback;
  struct cost_saved saved, *file = NULL;
  struct cost_ident id;
  enum cfg_calibrate mode;
  char why[256], buf[512];
  int err;

  memset (&cm, 0, sizeof cm);
  cm.path = d->calibration;
  if (d->cost_given) {
    cm.kind = CM_STATED;
    cm.p = d->cost;
    nbdkit_debug ("cfq: cost model: stated (cost_model): %s",
                  describe (&cm.p, buf, sizeof buf));
    return 0;
  }
  if (dm) {
    err = devmodel_cost_params (dm, 0, &cm.p);
    if (err) {
      nbdkit_error ("cfq: cost model of emulate=%s: %s", d->emulate,
                    strerror (-err));
      return -1;
    }
    cm.kind = CM_DEVMODEL;
    cm.emulate = d->emulate;
    return 0;
  }
  if (calibrate_mode (d, &mode) == -1)
    return -1;
  if (b->rbd) {
    /* The calibration measures a local file with O_DIRECT and io_uring. */
    cm.rot = generic_rot (m, rotational);
    fall_back (NULL, "not measured: backend=rbd: the calibration reads a"
               " local file; state the cluster's cost_model, or use"
               " mode=iops");
    if (d->calibrate_given && mode != CFG_CALIBRATE_OFF)
      nbdkit_error ("cfq: calibrate=%s: %s", cfg_calibrate_name (mode),
                    cm.why);
    nbdkit_debug ("cfq: cost model: %s: %s", generic_name (cm.rot), cm.why);
    return 0;
  }
  if (ident (b, &id) == -1)
    return -1;
  cm.rot = generic_rot (m, rotational);
  cost_params_default (&fallback, cm.rot);

  if (cm.path) {
    char here[128], there[128];

    err = load (cm.path, &saved, why, sizeof why);
    if (err == 0 && !cost_ident_same (&saved.id, &id)) {
      cost_ident_format (&saved.id, there, sizeof there);
      cost_ident_format (&id, here, sizeof here);
      snprintf (cm.file_note, sizeof cm.file_note, "measured on another"
                " device (%s), this one is %s: not used", there, here);
      nbdkit_debug ("cfq: calibration=%s: %s", cm.path, cm.file_note);
    }
    else if (err == 0) {
      file = &saved;
      fallback = saved.p;
      if (mode != CFG_CALIBRATE_WRITE || saved.writes) {
        fall_back (file, "%s", "");
        cost_date_format (saved.date, here, sizeof here);
        nbdkit_debug ("cfq: calibration=%s: loaded, measured on this device"
                      " at %s in %.2f s; not measuring: %s", cm.path, here,
                      saved.took / 1e9, describe (&cm.p, buf, sizeof buf));
        return 0;
      }
      nbdkit_debug ("cfq: calibration=%s: writes were not measured, and"
                    " calibrate=write: measuring again", cm.path);
    }
    else if (err == -ENOENT)
      nbdkit_debug ("cfq: calibration=%s: no saved model yet", cm.path);
    else {
      snprintf (cm.file_note, sizeof cm.file_note, "refused: %s: not used",
                why);
      nbdkit_error ("cfq: calibration=%s: %s (it is replaced if the device"
                    " is measured)", cm.path, cm.file_note);
    }
  }

  if (mode == CFG_CALIBRATE_OFF)
    fall_back (file, "calibrate=off");
  else if (!ops || !ops->set_cost)
    fall_back (file, "not measured: scheduler %s charges no cost",
               sched_name);
  else if (d->cache == CFG_CACHE_PAGE)
    fall_back (file, "not measured: with cache=page the scheduler's device"
               " is the page cache");
  else if (backend && strcmp (backend, "null") == 0)
    fall_back (file, "not measured: backend=null reaches no device");
  else if (!b->direct)
    fall_back (file, "not measured: the file system refused O_DIRECT, so"
               " only the page cache could be measured");
  else {
    measure (b, &id, &fallback, file, mode == CFG_CALIBRATE_WRITE);
    return 0;
  }
  nbdkit_debug ("cfq: cost model: %s: %s", cm.kind == CM_FILE
                ? "the saved model" : generic_name (cm.rot), cm.why);
  return 0;
}

int
cm_apply (struct sched *s, char *why, size_t len)
{
  static const char *const source[] = {
    [CM_STATED] = "config", [CM_DEVMODEL] = "device model",
    [CM_FILE] = "calibration file", [CM_MEASURED] = "calibration",
  };
  int err;

  if (cm.kind == CM_GENERIC)
    return 0;                   /* the policy's own, by rotational */
  err = sched_set_cost (s, &cm.p, source[cm.kind]);
  if (err && cm.kind == CM_DEVMODEL)
    snprintf (why, len, "cost model of emulate=%s: %s", cm.emulate,
              strerror (-err));
  else if (err)
    snprintf (why, len, "cost model (%s): %s", source[cm.kind],
              strerror (-err));
  return err;
}

void
cm_report (struct tenants *tn, struct strbuf *o)
{
  struct cost_model m;
  char pb[256], date[32];
  uint64_t on = 0;
  bool charges = sched_get_cost (tn->s, &m);

  if (!charges) {
    struct cost_params p = cm.p;

    if (cm.kind == CM_GENERIC)
      cost_params_default (&p, cm.rot);
    cost_model_init (&m, &p, cm.kind == CM_GENERIC
                     ? (cm.rot ? "default hdd" : "default ssd") : "");
  }
  cost_params_format (&m.p, pb, sizeof pb);
  strbuf_printf (o, "model: %s\n", pb);
  cost_date_format (cm.date, date, sizeof date);
  switch (cm.kind) {
  case CM_STATED:
    strbuf_printf (o, "source: stated (cost_model)\n");
    break;
  case CM_DEVMODEL:
    strbuf_printf (o, "source: device model (emulate=%s)\n", cm.emulate);
    break;
  case CM_FILE:
    strbuf_printf (o, "source: file %s (calibrated at %s in %.1f s on this"
                   " device, %s)\n", cm.path, date, cm.took / 1e9,
                   cm.writes ? "reads and writes"
                   : "reads; writes from the generic model");
    break;
  case CM_MEASURED:
    strbuf_printf (o, "source: calibrated at %s in %.1f s (%s%s)%s%s\n",
                   date, cm.took / 1e9, cm.writes ? "reads and writes"
                   : "reads; writes from ", cm.writes ? "" : cm.wfrom,
                   cm.saved ? "; saved to " : "", cm.saved ? cm.path : "");
    break;
  default:
    /* The policy's own: its rotational tunable may have changed since. */
    strbuf_printf (o, "source: generic (%s)\n", m.source);
    break;
  }
  if (cm.file_note[0])
    strbuf_printf (o, "file: %s: %s\n", cm.path, cm.file_note);
  if (cm.why[0])
    strbuf_printf (o, "%s: %s\n", cm.kind == CM_GENERIC
                   || cm.kind == CM_FILE ? "why" : "note", cm.why);
  if (!charges)
    strbuf_printf (o, "charged: no (scheduler %s charges no cost)\n"
                   "vrate: -\nerror: -\n", tn->sched_name);
  else {
    sched_get (tn->s, "cost", &on);
    strbuf_printf (o, "charged: %s\n", on ? "yes"
                   : "no (cost=0: CFQ's own charge)");
    strbuf_printf (o, "vrate: %.3f\n", (double) m.vrate / COST_VRATE_ONE);
    strbuf_printf (o, "error: last %+.1f%%, max %.1f%% of the last 16"
                   " windows (%" PRIu64 " windows of %s busy)\n",
                   m.error_ppm / 1e4, m.error_max_ppm / 1e4, m.windows,
                   units_format_time (COST_WINDOW, date, sizeof date));
  }
  strbuf_printf (o, "predicted: randread_4k_iops=%.0f randwrite_4k_iops=%.0f"
                 " seqread_mibs=%.1f\n", cost_model_iops (&m, COST_READ, false),
                 cost_model_iops (&m, COST_WRITE, false),
                 cost_model_bps (&m, COST_READ) / (1 << 20));
}
