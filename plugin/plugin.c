/* plugin.c: the nbdkit plugin: serve one file or block device to many
 * clients, each connection a queue in the scheduler.
 *
 *   nbdkit ./plugin/nbdkit-cfq-plugin.so file=PATH [scheduler=fifo|cfq]
 *          [queue_depth=N] [config=FILE] ...
 *
 * This file is the nbdkit edge and nothing else: it parses parameters,
 * follows nbdkit's lifecycle (parse in .config, validate in
 * .config_complete, open the files and bind the control socket in
 * .get_ready, before nbdkit changes user and forks, start the
 * dispatcher thread in .after_fork), and turns each callback into a call to the data path
 * (io.c), reporting errors nbdkit's way.  The jobs live elsewhere:
 *
 *   backing.c          opening and probing the files
 *   io.c               request building and the data path
 *   bounce.c           aligned buffers for unaligned requests
 *   rangelock.c        the write range lock
 *   engine.c, hold.c   the dispatcher thread, held completions
 *   backend-uring.c    io_uring; backend-null.c: no device at all;
 *   backend-rbd.c      Ceph RBD images through librbd (rbd.h)
 *   tenants.c          the config model made live, its accounting
 *   hooks.c            the engine's hooks: setup, the tick, teardown
 *   statsout.c         the statistics as text (JSON, flat, Prometheus)
 *   ctlcmd.c           the control socket's commands
 *   control.c          the control socket itself
 *
 * Names.  The callbacks and this file's statics are cfqp_*: core/ owns
 * cfq_* (the policy keeps the kernel's cfq_ names, cfqd, cfqq, cfqg),
 * and a plugin named "cfq" would otherwise define cfq_open next to the
 * policy's cfq_* functions.  Only the -D flags keep cfq_debug_*, since
 * nbdkit finds "-D cfq.NAME" as the symbol cfq_debug_NAME.
 *
 * Threads: configuration runs on nbdkit's main thread and is read-only
 * once .get_ready has returned; the per-connection callbacks run on
 * nbdkit's workers (THREAD_MODEL_PARALLEL), each touching only its own
 * handle, and block in the engine until their requests are done.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#define THREAD_MODEL NBDKIT_THREAD_MODEL_PARALLEL

#include "backing.h"
#include "bigmem.h"
#include "bounce.h"
#include "devmodel.h"
#include "engine.h"
#include "gateway.h"
#include "hangup.h"
#include "hooks.h"
#include "io.h"
#include "rbd.h"
#include "reqbuf.h"
#include "sched.h"
#include "tenants.h"
#include "utf8.h"

#ifndef CFQ_LIBURING_VERSION
#define CFQ_LIBURING_VERSION "unknown"
#endif

#define CFQP_PREFERRED_BLOCK 4096       /* bytes */

/* ---- configuration (main thread, before get_ready) ------------------------- */

static char *cfqp_file;                 /* absolute path */
static const struct sched_ops *cfqp_sched_ops;
static unsigned cfqp_queue_depth = SCHED_DEPTH_DEFAULT;
static const struct backend_ops *cfqp_bops; /* backend=; NULL: the first */
static dev_t cfqp_st_dev;               /* device holding the file (sysfs) */
static uint64_t cfqp_size;              /* bytes: the file's, at config time */

/* The backends, by their names for backend=; the first is the default. */
static const struct backend_ops *const cfqp_backends[] = {
  &uring_backend_ops,
  &null_backend_ops,
  &rbd_backend_ops,
};
#define CFQP_NR_BACKENDS (sizeof cfqp_backends / sizeof cfqp_backends[0])

struct cfqp_handle {
  struct io_conn io;                    /* what the data path needs */
  int readonly;                         /* nbdkit -r, read-only open or
                                           a readonly export */
};

/* The plugin edge: report -err to nbdkit and the client.  A request
 * failed because its client went away or the server stops (-ESHUTDOWN)
 * is not an error of the server's: nbdkit has said why already.  A
 * failure the backend logged with what the device said (backend=rbd's)
 * is not logged again.
 */
static int
fail (const char *what, int err)
{
  if (err == -ESHUTDOWN)
    nbdkit_debug ("cfq: %s: not done: the client went away or the server "
                  "is stopping", what);
  else if (err != -ENOTSUP && err != engine_logged_error ())
    nbdkit_error ("cfq: %s: %s", what, strerror (-err));
  nbdkit_set_error (-err);
  errno = -err;
  return -1;
}

/* ---- loading and configuration ------------------------------------------------ */

/* Before nbdkit has a connection: guard it against its own abort when a
 * client hangs up with replies in flight (hangup.c), and have it align
 * its request buffers so that aligned requests need no bounce (reqbuf.c).
 */
static void
cfqp_load (void)
{
  hangup_guard_install ();
  reqbuf_install ();
}

static void
cfqp_unload (void)
{
  free (cfqp_file);
  bk_unload ();
  rbdk_unload ();
  tn_unload ();
  gw_unload ();
  bounce_fini ();
}

static void
cfqp_dump_plugin (void)
{
  static const char *const names[] = { "fifo", "cfq" };
  const char *sep = "";

  unsigned sites;
  enum hangup_state hs = hangup_guard_state (&sites);

  printf ("cfq_hangup_guard=%s\n", hangup_state_name (hs));
  printf ("cfq_hangup_guard_sites=%u\n", sites);
  printf ("cfq_aligned_buffers=%s\n", reqbuf_aligned () ? "yes" : "no");
  printf ("cfq_io_uring=yes\n");
  printf ("cfq_liburing_version=%s\n", CFQ_LIBURING_VERSION);
  printf ("cfq_libev_version=%d.%d\n", ev_version_major (),
          ev_version_minor ());
  printf ("cfq_o_direct=yes\n");
  printf ("cfq_cache=none,page\n");
  printf ("cfq_fallocate=yes\n");
  printf ("cfq_discard=yes\n");
  printf ("cfq_extents=yes\n");
  printf ("cfq_schedulers=");
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (sched_lookup (names[i])) {
      printf ("%s%s", sep, names[i]);
      sep = ",";
    }
  printf ("\n");
  printf ("cfq_backends=");
  for (size_t i = 0; i < CFQP_NR_BACKENDS; i++)
    printf ("%s%s", i ? "," : "", cfqp_backends[i]->name);
  printf ("\n");
  printf ("cfq_queue_depth_default=%d\n", SCHED_DEPTH_DEFAULT);
  printf ("cfq_max_request=%u\n", CFG_MAX_REQUEST);
  printf ("cfq_config=yes\n");
  printf ("cfq_control=yes\n");
  {
    char all[256];

    devmodel_names (all, sizeof all, ",", ",");
    printf ("cfq_emulate=%s\n", all);
    for (const struct devmodel_preset *pr = devmodel_presets; pr->name; pr++)
      printf ("cfq_emulate_%s=%s\n", pr->name, pr->about);
  }
  printf ("cfq_export_file=yes\n");
  printf ("cfq_rbd=%s\n", rbdk_available () ? "yes" : "no");
#ifdef HAVE_RADOS
  printf ("cfq_gqos=yes\n");   /* gqos_conf=: limits across servers */
#else
  printf ("cfq_gqos=no\n");
#endif
}

static int
cfqp_config (const char *key, const char *value)
{
  if (strcmp (key, "file") == 0) {
    free (cfqp_file);
    cfqp_file = strdup (value); /* made absolute in config_complete */
    if (!cfqp_file) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
    return tn_override (key, value);
  }
  else if (strcmp (key, "scheduler") == 0) {
    if (!sched_lookup (value)) {
      nbdkit_error ("cfq: scheduler=%s: unknown (fifo or cfq)", value);
      return -1;
    }
    return tn_override (key, value);   /* the model decides (tn_sched_name) */
  }
  else if (strcmp (key, "queue_depth") == 0 ||
           strcmp (key, "buffer_pool") == 0 ||
           strcmp (key, "memory") == 0 ||
           strcmp (key, "reply_timeout") == 0)
    return tn_override (key, value);   /* parsed and checked by the model */
  else if (strcmp (key, "backend") == 0) {
    char names[128] = "";
    size_t n = 0;

    cfqp_bops = NULL;
    for (size_t i = 0; i < CFQP_NR_BACKENDS; i++) {
      if (strcmp (value, cfqp_backends[i]->name) == 0)
        cfqp_bops = cfqp_backends[i];
      n += snprintf (names + n, sizeof names - n, "%s%s",
                     i == 0 ? "" : i + 1 < CFQP_NR_BACKENDS ? ", " : " or ",
                     cfqp_backends[i]->name);
    }
    if (!cfqp_bops) {
      nbdkit_error ("cfq: backend=%s: unknown (%s)", value, names);
      return -1;
    }
  }
  else {
    int r = rbdk_config (key, value);

    if (r)
      return r == -1 ? -1 : 0;
    r = gw_config (key, value);
    if (r)
      return r < 0 ? -1 : 0;
    return tn_config (key, value) == -1 ? -1 : 0;
  }
  return 0;
}

/* backend=rbd: the device is an image (image= and pool=, or file= or
 * [device] file = rbd:...), and the model is told its name, normalized,
 * as its device file; its size comes from the cluster.  1 if the device
 * is an image, 0 if not (another backend), -1 on error (reported).
 */
static int
config_rbd (void)
{
  const char *file = cfqp_file ? cfqp_file : tn_device_file ();
  char *spec;

  if (cfqp_bops != &rbd_backend_ops) {
    if (rbdk_is_image (file)) {
      nbdkit_error ("cfq: file=%s: an RBD image needs backend=rbd", file);
      return -1;
    }
    return 0;
  }
  if (!rbdk_available ()) {
    nbdkit_error ("cfq: backend=rbd: not built with librbd (install "
                  "librbd-dev and librados-dev, and build again)");
    return -1;
  }
  if (rbdk_config_complete () == -1)
    return -1;
  spec = rbdk_device_spec ();
  if (spec && cfqp_file) {
    nbdkit_error ("cfq: backend=rbd: both image= and file=%s name the "
                  "device: give one", cfqp_file);
    free (spec);
    return -1;
  }
  if (!spec && !rbdk_is_image (file)) {
    nbdkit_error ("cfq: backend=rbd: the device is an image: give pool= and "
                  "image=, or file=%sPOOL/IMAGE%s%s", RBD_PREFIX,
                  file ? ", not file=" : "", file ? file : "");
    return -1;
  }
  if (!spec && !(spec = rbdk_spec_norm (file)))
    return -1;
  free (cfqp_file);
  cfqp_file = spec;
  cfqp_st_dev = 0;
  if (tn_override ("file", spec) == -1 || rbdk_probe (spec, &cfqp_size) == -1)
    return -1;
  return 1;
}

static int
cfqp_config_complete (void)
{
  const char *name;
  int rbd = config_rbd ();

  if (rbd == -1) {
    tn_report_errors ();
    return -1;
  }
  if (!cfqp_file && tn_device_file ()) {
    cfqp_file = strdup (tn_device_file ());
    if (!cfqp_file) {
      nbdkit_error ("cfq: strdup: %m");
      return -1;
    }
  }
  if (!cfqp_file) {
    nbdkit_error ("cfq: the file parameter is required "
                  "(file=PATH: a regular file or a block device)");
    tn_report_errors ();
    return -1;
  }
  /* The model needs the device's size to check the exports' regions. */
  if (!rbd && bk_probe (&cfqp_file, &cfqp_size, &cfqp_st_dev) == -1) {
    tn_report_errors ();
    return -1;
  }
  if (tn_validate (cfqp_size) == -1 || gw_config_complete () == -1)
    return -1;
  cfqp_queue_depth = tn_model ()->dev.queue_depth;
  name = tn_sched_name ();
  cfqp_sched_ops = sched_lookup (name);
  if (!cfqp_sched_ops) {
    nbdkit_error ("cfq: scheduler=%s: unknown (fifo or cfq)", name);
    return -1;
  }
  return 0;
}

#define cfqp_config_help \
  "file=<PATH>          The regular file or block device to serve\n" \
  "                     (required unless config= names it: [device] file).\n" \
  "scheduler=cfq|fifo   Scheduling policy (default cfq; fifo: the baseline).\n" \
  "queue_depth=<N>      Requests at the device at once (default 32).\n" \
  "backend=io_uring|null|rbd  I/O backend (default io_uring); null is for\n" \
  "                     benchmarks; rbd serves Ceph RBD images.\n" \
  "pool=, image=       backend=rbd: the device's image (or file=rbd:POOL/IMAGE).\n" \
  "conf=, id=, keyring=  backend=rbd: reaching the cluster (ceph.conf, client).\n" \
  "rbd_timeout=<TIME>   backend=rbd: a request fails after this long (30s).\n" \
  "cache=none|page      none: O_DIRECT (default); page: the page cache.\n" \
  "buffer_pool=<SIZE>   Most memory for aligned request buffers (default 256M).\n" \
  "memory=<SIZE>        The server's memory budget, in all (default 2G).\n" \
  "reply_timeout=<TIME> Cut off a client that takes no reply this long (60s).\n" \
  "config=<FILE>        Tenants: [device] [scheduler] [group N] [export N].\n" \
  "control=<PATH>       Serve the control socket (cfqctl) at PATH.\n" \
  "stats=<FILE>         Write the statistics as JSON to FILE at exit.\n" \
  "metrics=<FILE>       Rewrite FILE every second with Prometheus metrics.\n" \
  "calibrate=off|read|write  Measure the device's cost model at start (read).\n" \
  "calibration=<FILE>   Keep the measured model in FILE, reuse it next start.\n" \
  "gqos_conf=<FILE>     ceph.conf: [group]s with scope = global hold their\n" \
  "                     caps and reservation for the sum over the servers\n" \
  "                     (gqos_pool, gqos_id, gateway, gqos_period, gqos_expiry).\n" \
  "KEY=VALUE            Override a [device]/[scheduler] key or model.NAME\n" \
  "                     (mode, emulate, cache, slice_idle, model.rpm ...)."

/* ---- starting and stopping ---------------------------------------------------- */

/* glibc serves an allocation above the mmap threshold (128 KiB at
 * start) with its own mmap, given back to the system when freed; below
 * it, from the thread's arena, where freed memory stays as long as any
 * chunk above it lives, and the top of an arena is given back when more
 * than the trim threshold (128 KiB at start) is free there.  Left alone,
 * glibc raises both as mmapped chunks are freed, and once nbdkit's
 * request buffers and the pool's came from arenas, 64 connections
 * dropped mid-request for 20 s (tests/stress/test-churn.sh) left RSS at
 * 105 MiB instead of 63, held in a dozen arenas that malloc_trim could
 * not shrink.  So those buffers (from 128 KiB) are mmapped by the plugin
 * itself (bigmem.c), whatever the thresholds say.
 *
 * At 128 KiB, though, every other buffer of a larger request is fresh
 * memory: librados allocates one for each read's reply and frees it once
 * the data is copied out, and its messenger thread reads the reply from
 * the socket into pages it faults in one by one: 256 KiB sequential
 * reads from RBD ran at 0.35x qemu-storage-daemon's rate, 30% of the
 * server's CPU in page faults.  So both thresholds are fixed at the
 * largest request (CFG_MAX_REQUEST, 32 MiB, also glibc's most): such a
 * buffer, freed, stays in its arena for the next request, and an arena's
 * top is given back past one largest request's worth (and by
 * give_back_memory when connections close).  Measured, RSS at 128 KiB
 * against 32 MiB: test-churn.sh for 20 + 20 s, 77 against 76 MiB at the
 * end (the thresholds raised with nbdkit's buffers still in the arenas:
 * 222 MiB, and growing); 16 connections reading 256 KiB 8 deep from RBD
 * (nbdkit --threads 64), 302 against 319 MiB at the peak and 33 against
 * 41 MiB 3 s after they closed.
 *
 * Only where nbdkit's buffers are the plugin's (reqbuf_aligned): else
 * they would be in the arenas, and the mmap threshold stays 128 KiB.
 * Fixed, glibc stops adjusting them, for the whole nbdkit process, unless
 * the environment already chose them (MALLOC_MMAP_THRESHOLD_,
 * MALLOC_TRIM_THRESHOLD_, GLIBC_TUNABLES=glibc.malloc.mmap_threshold,
 * glibc.malloc.trim_threshold).
 */
#define CFQP_MMAP_THRESHOLD CFG_MAX_REQUEST     /* bytes */
#define CFQP_TRIM_THRESHOLD CFG_MAX_REQUEST     /* bytes */

/* mallopt (OPT, BYTES) unless the environment chose it (ENV, or TUNABLE
 * in GLIBC_TUNABLES).
 */
static void
fix_threshold (int opt, const char *name, const char *env,
               const char *tunable, int bytes)
{
  const char *t = getenv ("GLIBC_TUNABLES");

  if (getenv (env) || (t && strstr (t, tunable)))
    return;
  if (mallopt (opt, bytes) != 1)
    nbdkit_debug ("cfq: mallopt %s failed: glibc's dynamic threshold stays",
                  name);
}

static void
fix_malloc_thresholds (void)
{
  bool ours = reqbuf_aligned ();

  fix_threshold (M_MMAP_THRESHOLD, "M_MMAP_THRESHOLD", "MALLOC_MMAP_THRESHOLD_",
                 "mmap_threshold", ours ? CFQP_MMAP_THRESHOLD : BIGMEM_MIN);
  fix_threshold (M_TRIM_THRESHOLD, "M_TRIM_THRESHOLD", "MALLOC_TRIM_THRESHOLD_",
                 "trim_threshold", ours ? CFQP_TRIM_THRESHOLD : BIGMEM_MIN);
}

/* -D cfq.pool_share=0: the buffer pool serves the oldest waiter that
 * fits, whatever its group holds (no shares): for comparison in
 * tests/test-pool-share.sh.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_pool_share = 1;

static int
cfqp_get_ready (void)
{
  int err;

  fix_malloc_thresholds ();

  err = bk_open_all (cfqp_file, tn_model ());
  rbdk_probe_end ();            /* before nbdkit's fork (rbd.h) */
  if (err == -1)
    return -1;
  err = io_init (bk_buf_align ());
  if (err) {
    nbdkit_error ("cfq: posix_memalign: %s", strerror (-err));
    return -1;
  }
  err = bounce_init (bk_buf_align (), tn_model ()->dev.buffer_pool,
                     (unsigned) tn_model ()->nr_groups, cfq_debug_pool_share);
  if (err) {
    nbdkit_error ("cfq: the buffer pool: %s", strerror (-err));
    return -1;
  }
  {
    struct cfg_memory mp;

    cfg_memory_parts (&tn_model ()->dev, &mp);
    reqbuf_configure (mp.requests, tn_model ()->dev.reply_timeout);
  }
  return tn_prepare (cfqp_sched_ops->name,
                     (cfqp_bops ? cfqp_bops : cfqp_backends[0])->name,
                     bk_main ()->dev.size, cfqp_st_dev);
}

/* -D cfq.direct=0: every request goes through the dispatcher's loop, so
 * the direct path (engine.c) can be measured against it.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_direct = 1;

/* -D cfq.inline=0: buffered reads and writes go through the ring like
 * the rest, instead of being done by their worker (engine.c).
 */
NBDKIT_DLL_PUBLIC int cfq_debug_inline = 1;

/* Asked by a worker whose request has waited in the scheduler for a
 * while (engine.c, "held requests"): has its client gone, or is the
 * server stopping?  nbdkit_nanosleep with no time to sleep polls exactly
 * that (nbdkit's quit pipe, the connection's status pipe, a hang-up on
 * the client's socket) and says ESHUTDOWN at once if so; it logs why.
 * It cannot tell a dead client from one that sent NBD_CMD_DISC or
 * closed its half of the socket: all three end the connection.
 */
static bool
cfqp_client_gone (void)
{
  return nbdkit_nanosleep (0, 0) == -1 && errno == ESHUTDOWN;
}

static int
cfqp_after_fork (void)
{
  struct engine_cfg cfg = {
    .sched_ops = cfqp_sched_ops,
    .queue_depth = cfqp_queue_depth,
    .backend = cfqp_bops ? cfqp_bops : cfqp_backends[0],
    .no_direct = !cfq_debug_direct,
    .no_inline = !cfq_debug_inline,
    .gone = cfqp_client_gone,
  };
  int err;

  bk_engine_fds (&cfg);
  hooks_engine_cfg (&cfg);
  /* librados' threads, after nbdkit's fork (rbd.h). */
  if (rbdk_connect () == -1)
    return -1;
  err = engine_start (&cfg);

  if (err) {
    nbdkit_error ("cfq: starting the dispatcher (%s backend): %s",
                  cfg.backend->name, strerror (-err));
    return -1;
  }
  nbdkit_debug ("cfq: dispatcher started: scheduler=%s queue_depth=%u "
                "backend=%s", cfqp_sched_ops->name, cfqp_queue_depth,
                cfg.backend->name);
  return 0;
}

static void
cfqp_cleanup (void)
{
  struct engine_stats st;

  if (engine_stop (&st)) {
    if (st.underflows)
      nbdkit_error ("cfq: dispatcher: %" PRIu64 " completions arrived with "
                    "no request in flight (an accounting bug: please "
                    "report it)", st.underflows);
    nbdkit_debug ("cfq: dispatcher: %" PRIu64 " requests in %" PRIu64
                  " submits over %" PRIu64 " passes (%" PRIu64
                  " direct, %" PRIu64 " inline, %" PRIu64 " worker reaps); %"
                  PRIu64 " run by workers, %" PRIu64 " done inline (%" PRIu64
                  " of them finished by the ring); at most %u at the device;"
                  " %" PRIu64 " taken back (client gone, server stopping),"
                  " %" PRIu64 " kept aside for a buffer, %" PRIu64
                  " whose worker allocated or filled it",
                  st.dispatched, st.submits, st.passes, st.direct,
                  st.inline_passes, st.reaps, st.worker_ops, st.inline_ops,
                  st.inline_ring, st.max_inflight, st.cancelled,
                  st.pool_waits, st.pool_worker);
  }
  rbdk_disconnect ();
  bk_close_all ();
  io_fini ();
}

/* ---- connections ---------------------------------------------------------------- */

/* May this client see and open export e?  1 yes, 0 no (why in *why),
 * as allow= and tls= say.  is_tls: the connection negotiated TLS.
 */
static int
client_allowed (const struct cfg_export *e, bool is_tls, const char **why)
{
  struct sockaddr_storage ss;
  socklen_t len = sizeof ss;

  if (e->tls_required && !is_tls) {
    *why = "it requires TLS (tls=require), the client did not negotiate "
      "it";
    return 0;
  }
  if (e->nr_allow) {
    memset (&ss, 0, sizeof ss);
    if (nbdkit_peer_name ((struct sockaddr *) &ss, &len) == -1) {
      *why = "cannot tell the client's address (the export has allow=)";
      return 0;
    }
    if (cfg_export_allows (e, (struct sockaddr *) &ss, len) != 1) {
      *why = "client not in its allow= list";
      return 0;
    }
  }
  return 1;
}

/* The export a client asked for, and whether it may have it.  The name
 * comes from the client: it is escaped wherever it is logged, and a
 * client can ask any number of times: the lines are rate-limited
 * (tn_refusal).
 */
static int
pick_export (size_t *ip)
{
  const struct cfg_model *m = tn_model ();
  const char *name = nbdkit_export_name ();
  const struct cfg_export *e;
  const char *why;
  char esc[256];

  if (!name)
    name = "";
  e = cfg_find_export (m, name);
  if (!e) {
    /* Not the list of exports: their names are the tenants'. */
    tn_refusal ("unknown export '%s': refused",
                utf8_escape (name, esc, sizeof esc));
    return -1;
  }
  if (!client_allowed (e, nbdkit_is_tls () == 1, &why)) {
    tn_refusal ("export '%s': %s: refused", e->name, why);
    return -1;
  }
  *ip = (size_t) (e - m->exports);
  return 0;
}

static void *
cfqp_open (int readonly)
{
  const struct cfg_export *e;
  struct engine_qspec spec;
  struct cfqp_handle *h;
  struct tn_conn *conn;
  size_t i;
  int err;

  if (pick_export (&i) == -1)
    return NULL;
  e = &tn_model ()->exports[i];
  h = calloc (1, sizeof *h);
  if (!h) {
    nbdkit_error ("cfq: calloc: %m");
    return NULL;
  }
  h->io.b = bk_export (i);
  h->readonly = readonly || !h->io.b->writable || e->readonly;
  h->io.base = e->file ? 0 : e->offset;
  h->io.size = e->file ? h->io.b->dev.size : e->size;
  h->io.writes_sync = e->writes_sync;
  h->io.writes_async = e->writes_async;
  h->io.pool_grp = (unsigned) e->group;
  err = tn_conn_new (i, &conn);
  if (err) {
    if (err != -EUSERS)         /* a refusal is logged by tenants.c */
      nbdkit_error ("cfq: a connection's accounting: %s", strerror (-err));
    free (h);
    return NULL;
  }
  io_conn_init (&h->io, h->readonly);
  h->io.acct = conn;
  tn_qspec (i, &spec);
  err = engine_queue_new (&h->io.q, &spec, conn);
  if (err) {
    nbdkit_error ("cfq: creating the connection's queue: %s",
                  strerror (-err));
    tn_conn_free (conn);
    io_conn_fini (&h->io);
    free (h);
    return NULL;
  }
  return h;
}

/* Memory that connections leave behind.  Small allocations come from
 * glibc's per-thread arenas (request buffers too: see
 * fix_malloc_thresholds), and a freed chunk that is not at the top of its
 * arena stays in the process: with clients coming and going, RSS crept
 * up by 70 MiB a minute (tests/stress/test-churn.sh).  So when a connection closes,
 * at most once a second, the free memory of every arena is given back
 * (malloc_trim).  It runs on the closing connection's worker, which has
 * nothing else to do, never on the dispatcher.
 */
static void
give_back_memory (void)
{
  static uint64_t last;         /* ns: the last trim (atomic) */
  uint64_t now = engine_now (), was = __atomic_load_n (&last, __ATOMIC_RELAXED);

  if (was && now - was < 1000000000ULL)
    return;
  if (!__atomic_compare_exchange_n (&last, &was, now, false,
                                    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
    return;
  malloc_trim (0);
}

static void
cfqp_close (void *handle)
{
  struct cfqp_handle *h = handle;

  engine_queue_free (h->io.q, h->io.acct);
  tn_conn_free (h->io.acct);
  io_conn_fini (&h->io);
  free (h);
  give_back_memory ();
}

/* Only the exports this client may open (allow=, tls=): a listing must
 * not tell a client about exports that are not its own.  nbdkit 1.32
 * runs .list_exports on the connection's thread during the handshake,
 * so nbdkit_peer_name works here as in .open.  The description says
 * what the client gets, the export's own size and whether it may write,
 * and nothing of how the server is laid out (its group, where on the
 * device it lies): that is the other tenants' business.
 */
static int
cfqp_list_exports (int readonly, int is_tls, struct nbdkit_exports *exports)
{
  const struct cfg_model *m = tn_model ();

  for (size_t i = 0; i < m->nr_exports; i++) {
    const struct cfg_export *e = &m->exports[i];
    const char *why;
    char desc[64];

    if (!client_allowed (e, is_tls, &why))
      continue;
    snprintf (desc, sizeof desc, "%" PRIu64 " bytes%s",
              e->file ? bk_export (i)->dev.size : e->size,
              readonly || e->readonly || !bk_export (i)->writable
              ? ", read-only" : "");
    if (nbdkit_add_export (exports, e->name, desc) == -1)
      return -1;
  }
  return 0;
}

static const char *
cfqp_default_export (int readonly, int is_tls)
{
  const struct cfg_model *m = tn_model ();

  if (cfg_find_export (m, ""))
    return "";
  return m->nr_exports ? m->exports[0].name : "";
}

/* ---- what a connection may do --------------------------------------------------- */

static int64_t
cfqp_get_size (void *handle)
{
  struct cfqp_handle *h = handle;

  return (int64_t) h->io.size;
}

static int
cfqp_block_size (void *handle, uint32_t *minimum, uint32_t *preferred,
                 uint32_t *maximum)
{
  /* A file whose size is not a multiple of the block could not have its
   * last bytes read by a client that honours the minimum: promise nothing
   * then (unaligned requests are served correctly either way).
   */
  struct cfqp_handle *h = handle;
  uint32_t bs = h->io.b->bs;

  /* Buffered (cache=page, or O_DIRECT refused): any alignment is native. */
  *minimum = h->io.b->direct && h->io.size % bs == 0 ? bs : 1;
  *preferred = bs > CFQP_PREFERRED_BLOCK ? bs : CFQP_PREFERRED_BLOCK;
  *maximum = CFG_MAX_REQUEST;
  return 0;
}

static int
cfqp_can_write (void *handle)
{
  struct cfqp_handle *h = handle;

  return !h->readonly;
}

static int
cfqp_can_flush (void *handle)
{
  return 1;
}

static int
cfqp_can_fua (void *handle)
{
  return NBDKIT_FUA_NATIVE;
}

static int
cfqp_can_trim (void *handle)
{
  return 1;
}

static int
cfqp_can_zero (void *handle)
{
  return 1;
}

static int
cfqp_can_fast_zero (void *handle)
{
  return 1;
}

static int
cfqp_can_multi_conn (void *handle)
{
  return 1;             /* one fd for all connections: a flush covers all */
}

static int
cfqp_can_extents (void *handle)
{
  struct cfqp_handle *h = handle;

  return h->io.b->seek_data;
}

/* ---- data ------------------------------------------------------------------------ */

static int
cfqp_extents (void *handle, uint32_t count, uint64_t offset, uint32_t flags,
              struct nbdkit_extents *extents)
{
  struct cfqp_handle *h = handle;

  return bk_extents (h->io.b, h->io.base, h->io.size, count, offset,
                     extents);
}

/* A data request larger than the maximum we advertise: EINVAL before
 * anything of ours is allocated for it.
 */
static int
too_large (const char *what, uint32_t count)
{
  nbdkit_error ("cfq: %s of %" PRIu32 " bytes: more than the maximum "
                "request (%u bytes): refused", what, count, CFG_MAX_REQUEST);
  nbdkit_set_error (EINVAL);
  errno = EINVAL;
  return -1;
}

static int
cfqp_pread (void *handle, void *buf, uint32_t count, uint64_t offset,
            uint32_t flags)
{
  struct cfqp_handle *h = handle;
  int err;

  if (count > CFG_MAX_REQUEST)   /* nbdkit 1.32 does not enforce it */
    return too_large ("pread", count);
  err = io_pread (&h->io, buf, count, offset);
  return err ? fail ("pread", err) : 0;
}

static int
cfqp_pwrite (void *handle, const void *buf, uint32_t count, uint64_t offset,
             uint32_t flags)
{
  struct cfqp_handle *h = handle;
  int err;

  if (count > CFG_MAX_REQUEST)
    return too_large ("pwrite", count);
  err = io_pwrite (&h->io, buf, count, offset, flags & NBDKIT_FLAG_FUA);
  return err ? fail ("pwrite", err) : 0;
}

static int
cfqp_flush (void *handle, uint32_t flags)
{
  struct cfqp_handle *h = handle;
  int err = io_flush (&h->io);

  return err ? fail ("flush", err) : 0;
}

static int
cfqp_trim (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct cfqp_handle *h = handle;
  int err = io_trim (&h->io, count, offset, flags & NBDKIT_FLAG_FUA);

  return err ? fail ("trim", err) : 0;
}

static int
cfqp_zero (void *handle, uint32_t count, uint64_t offset, uint32_t flags)
{
  struct cfqp_handle *h = handle;
  int err = io_zero (&h->io, count, offset, flags & NBDKIT_FLAG_MAY_TRIM,
                     flags & NBDKIT_FLAG_FAST_ZERO, flags & NBDKIT_FLAG_FUA);

  return err ? fail ("zero", err) : 0;
}

static struct nbdkit_plugin plugin = {
  .name = "cfq",
  .longname = "nbdkit CFQ-scheduled io_uring plugin",
  .version = "0.1",
  .description = "Serve a file or block device, one CFQ queue per client",
  .load = cfqp_load,
  .unload = cfqp_unload,
  .dump_plugin = cfqp_dump_plugin,
  .config = cfqp_config,
  .config_complete = cfqp_config_complete,
  .config_help = cfqp_config_help,
  .magic_config_key = "file",
  .get_ready = cfqp_get_ready,
  .after_fork = cfqp_after_fork,
  .cleanup = cfqp_cleanup,
  .open = cfqp_open,
  .close = cfqp_close,
  .list_exports = cfqp_list_exports,
  .default_export = cfqp_default_export,
  .get_size = cfqp_get_size,
  .block_size = cfqp_block_size,
  .can_write = cfqp_can_write,
  .can_flush = cfqp_can_flush,
  .can_fua = cfqp_can_fua,
  .can_trim = cfqp_can_trim,
  .can_zero = cfqp_can_zero,
  .can_fast_zero = cfqp_can_fast_zero,
  .can_multi_conn = cfqp_can_multi_conn,
  .can_extents = cfqp_can_extents,
  .extents = cfqp_extents,
  .pread = cfqp_pread,
  .pwrite = cfqp_pwrite,
  .flush = cfqp_flush,
  .trim = cfqp_trim,
  .zero = cfqp_zero,
  .errno_is_preserved = 1,
};

/* Defined by NBDKIT_REGISTER_PLUGIN, declared by nobody: nbdkit finds it
 * with dlsym.
 */
struct nbdkit_plugin *plugin_init (void);
NBDKIT_REGISTER_PLUGIN (plugin)
