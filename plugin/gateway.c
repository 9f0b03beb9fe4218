/* gateway.c: the exchange of counts between servers, through RADOS (see
 * gateway.h; the policy and its reasoning: core/gqos.c).
 *
 * Each group with scope = global has one object, cfq.gqos.GROUP, in the
 * pool gqos_pool, with one omap key per server (its gateway= name) whose
 * value is its record (gqos_encode).  Every gqos_period a timer on the
 * dispatcher's loop computes the group's shares (gqos_shares) and posts
 * its record to the exchange thread, which writes it (omap set) and reads
 * every key (omap get) of the object, then hands the peers' records back
 * and writes to an eventfd; the loop's watcher on it gives them to the
 * policy under the engine lock (gqos_peer_seen; the reservation others
 * served goes to the scheduler, sched_group_qos_charge), and the pump's
 * next pass acts on them.
 *
 * Why a thread and not librados' asynchronous calls on the loop: those
 * were tried, and submitting one is not free of waits: over 24 s of two
 * servers exchanging every 100 ms, 8% of the timer's calls took more than
 * a millisecond and the longest 47 ms (librados takes its own locks, and
 * the messenger's threads compete for them), all of it time the
 * dispatcher would not dispatch.  On a thread of its own an operation
 * may take as long as it takes; the dispatcher only copies records under
 * a mutex.  The thread also connects (blocking, up to the timeouts), so a
 * cluster that is not there delays nothing, and it tries again every
 * gqos_expiry until it is.
 *
 * The cluster failing: every operation has the OSD and monitor timeouts
 * of gqos_expiry (rounded up to a second), so an exchange that cannot
 * finish fails; records posted meanwhile replace each other; gqos_shares
 * falls back once the expiry passed without an exchange that worked
 * (logged once, and again when one works).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "engine.h"
#include "gateway.h"
#include "gqos.h"
#include "tenants.h"

static struct gqos_conf gw_conf;        /* main thread, then read-only */

int
gw_config (const char *key, const char *value)
{
  char why[200];
  int k = gqos_key_lookup (key), err;

  if (k < 0)
    return 0;
  err = gqos_conf_set (&gw_conf, k, value, why, sizeof why);
  if (err == -ENOMEM) {
    nbdkit_error ("cfq: %s: %s", key, strerror (ENOMEM));
    return -1;
  }
  if (err) {
    nbdkit_error ("cfq: %s=%s: %s", key, value, why);
    return -1;
  }
  return 1;
}

void
gw_unload (void)
{
  gqos_conf_free (&gw_conf);
}

#ifndef HAVE_RADOS

int
gw_config_complete (void)
{
  if (gw_conf.text[GQOS_K_CONF]) {
    nbdkit_error ("cfq: gqos_conf=%s: this plugin was built without"
                  " librados: limits across servers are not available",
                  gw_conf.text[GQOS_K_CONF]);
    return -1;
  }
  return 0;
}

int
gw_start (struct sched *s, struct ev_loop *loop)
{
  return 0;
}

void
gw_stop (void)
{
}

void
gw_group_stats (size_t i, uint64_t now, stat_emit_fn *emit, void *opaque)
{
}

#else /* HAVE_RADOS */

#include <pthread.h>
#include <sys/eventfd.h>
#include <rados/librados.h>

#include "rados-conn.h"

#define GW_OID_PREFIX "cfq.gqos."

/* A peer's record as read. */
struct gw_rec {
  char name[GQOS_NAME_MAX];
  struct gqos_record r;
};

/* One global group.  [disp] the dispatcher's; [lock] under gw.lock. */
struct gw_group {
  size_t index;                 /* [disp] into tenants' groups */
  struct sched_group *sg;       /* [disp] */
  const struct qos_conf *conf;  /* [disp] its caps and reservation */
  struct gqos_group gg;         /* [disp] the policy's view of the peers */
  uint64_t seq;                 /* [disp] of the record last posted */
  char oid[GQOS_NAME_MAX + 16]; /* its object (read-only once made) */
  struct gqos_record out;       /* [lock] the record to write next */
  bool out_new;                 /* [lock] not yet taken by the thread */
  struct gw_rec in[GQOS_PEERS_MAX]; /* [lock] the peers' records read */
  unsigned nr_in;               /* [lock] of in[] */
  int in_err;                   /* [lock] 0 or -errno of that exchange */
  bool in_new;                  /* [lock] not yet taken by the dispatcher */
};

static struct {
  bool on;                      /* gqos_conf= given (main thread) */
  struct sched *s;              /* [disp] */
  struct ev_loop *loop;         /* [disp] */
  ev_timer timer;               /* [disp] every gqos_period */
  ev_io done_w;                 /* [disp] on efd */
  int efd;                      /* eventfd the thread writes; -1 */
  struct gw_group *groups;      /* made in gw_start, freed in gw_stop */
  size_t nr_groups;
  char name[GQOS_NAME_MAX];     /* gateway= (read-only once started) */
  uint64_t t0;                  /* ns: the zero of our records' clock */
  pthread_t thread;             /* the exchange thread */
  bool thread_on;               /* [disp] it was started */
  pthread_mutex_t lock;         /* the [lock] fields, stop */
  pthread_cond_t cond;          /* a record posted, or stop */
  bool stop;                    /* [lock] the thread must end */
} gw = { .efd = -1, .lock = PTHREAD_MUTEX_INITIALIZER,
         .cond = PTHREAD_COND_INITIALIZER };

int
gw_config_complete (void)
{
  char why[200], host[GQOS_NAME_MAX - 12];

  if (!gw_conf.text[GQOS_K_CONF])
    return 0;
  if (!gw_conf.text[GQOS_K_GATEWAY]) {
    if (gethostname (host, sizeof host) < 0)
      snprintf (host, sizeof host, "gateway");
    host[sizeof host - 1] = '\0';
    snprintf (gw.name, sizeof gw.name, "%s:%ld", host, (long) getpid ());
  }
  if (gqos_conf_finish (&gw_conf, why, sizeof why) < 0) {
    nbdkit_error ("cfq: %s", why);
    return -1;
  }
  gw.on = true;
  return 0;
}

/* ---- the exchange thread: every librados call is made here ------------- */

/* Connect: 0 or -errno.  Blocks up to the timeouts (the expiry). */
static int
rados_open (rados_t *cl, rados_ioctx_t *io)
{
  const struct rados_conn_cfg cfg = {
    .conf = gw_conf.text[GQOS_K_CONF], .id = gw_conf.text[GQOS_K_ID],
    .timeout = (gw_conf.ns[GQOS_K_EXPIRY] + NSEC_PER_SEC - 1) / NSEC_PER_SEC,
  };
  const char *step;
  int err = rados_conn_open (cl, &cfg, &step);

  if (err < 0)
    return err;
  err = rados_ioctx_create (*cl, gw_conf.text[GQOS_K_POOL], io);
  if (err < 0)
    rados_shutdown (*cl);
  return err < 0 ? err : 0;
}

/* Write REC as our key of OID and read every key into IN: the number of
 * records read, or -errno.
 */
static int
rados_exchange (rados_ioctx_t io, const char *oid,
                const struct gqos_record *rec, struct gw_rec *in)
{
  char buf[GQOS_RECORD_MAX], *key, *val;
  const char *k = gw.name, *v = buf;
  rados_write_op_t w;
  rados_read_op_t r;
  rados_omap_iter_t it = NULL;
  unsigned char more = 0;
  size_t len, klen, vlen;
  int err, prval = 0, n = 0;

  err = gqos_encode (rec, buf, sizeof buf);
  if (err < 0)
    return err;
  len = (size_t) err;
  if (!(w = rados_create_write_op ()))
    return -ENOMEM;
  rados_write_op_omap_set (w, &k, &v, &len, 1);
  err = rados_write_op_operate (w, io, oid, NULL, 0);
  rados_release_write_op (w);
  if (err < 0)
    return err;
  if (!(r = rados_create_read_op ()))
    return -ENOMEM;
  rados_read_op_omap_get_vals2 (r, "", "", GQOS_PEERS_MAX + 1, &it, &more,
                                &prval);
  err = rados_read_op_operate (r, io, oid, 0);
  if (err >= 0 && prval < 0)
    err = prval;
  while (err >= 0 && n < GQOS_PEERS_MAX
         && rados_omap_get_next2 (it, &key, &val, &klen, &vlen) == 0 && key) {
    if (klen == 0 || klen >= GQOS_NAME_MAX || (klen == strlen (gw.name)
                                               && !memcmp (key, gw.name, klen))
        || gqos_decode (val, vlen, &in[n].r) < 0)
      continue;
    memcpy (in[n].name, key, klen);
    in[n].name[klen] = '\0';
    n++;
  }
  if (it)
    rados_omap_get_end (it);
  rados_release_read_op (r);
  return err < 0 ? err : n;
}

/* Wait for a record to write (or stop): the group's index, -1 to stop.
 * The groups take turns (the search starts after the last one served),
 * so that when the exchanges take longer than a period each group still
 * gets its share of them.
 */
static long
wait_work (struct gqos_record *rec)
{
  static size_t next;           /* this thread's */
  long found = -1;

  pthread_mutex_lock (&gw.lock);
  while (!gw.stop && found < 0) {
    for (size_t k = 0; k < gw.nr_groups && found < 0; k++) {
      size_t i = (next + k) % gw.nr_groups;
      if (gw.groups[i].out_new) {
        gw.groups[i].out_new = false;
        *rec = gw.groups[i].out;
        found = (long) i;
        next = i + 1;
      }
    }
    if (found < 0 && !gw.stop)
      pthread_cond_wait (&gw.cond, &gw.lock);
  }
  if (gw.stop)
    found = -1;
  pthread_mutex_unlock (&gw.lock);
  return found;
}

/* Hand group I's answer to the dispatcher. */
static void
post_answer (size_t i, int err, const struct gw_rec *in)
{
  struct gw_group *g = &gw.groups[i];
  uint64_t one = 1;

  pthread_mutex_lock (&gw.lock);
  g->in_err = err < 0 ? err : 0;
  g->nr_in = err < 0 ? 0 : (unsigned) err;
  if (err > 0)
    memcpy (g->in, in, (size_t) err * sizeof *in);
  g->in_new = true;
  pthread_mutex_unlock (&gw.lock);
  if (write (gw.efd, &one, sizeof one) < 0) {
    /* The counter is full: the loop is woken anyway. */
  }
}

static void *
exchange_main (void *arg)
{
  static struct gw_rec in[GQOS_PEERS_MAX];       /* this thread's */
  struct gqos_record rec;
  rados_t cl = NULL;
  rados_ioctx_t io = NULL;
  uint64_t failed_at = 0;       /* ns: the last connection that failed */
  bool told = false;
  long i;
  int err = -ENOTCONN;

  while ((i = wait_work (&rec)) >= 0) {
    /* Connect, at most once per expiry (each try costs the monitors). */
    if (!io && (!failed_at
                || engine_now () - failed_at >= gw_conf.ns[GQOS_K_EXPIRY])
        && (err = rados_open (&cl, &io)) < 0) {
      io = NULL;
      failed_at = engine_now ();
      if (!told)
        nbdkit_error ("cfq: gqos_conf=%s, gqos_pool=%s: %s: trying again"
                      " every %llu ms; meanwhile scope = global limits hold"
                      " for this server alone", gw_conf.text[GQOS_K_CONF],
                      gw_conf.text[GQOS_K_POOL], strerror (-err),
                      (unsigned long long) (gw_conf.ns[GQOS_K_EXPIRY]
                                            / NSEC_PER_MSEC));
      told = true;
    }
    if (!io) {
      post_answer ((size_t) i, err, NULL);
      continue;
    }
    if (told)
      nbdkit_error ("cfq: connected to the cluster of %s",
                    gw_conf.text[GQOS_K_CONF]);
    told = false;
    err = rados_exchange (io, gw.groups[i].oid, &rec, in);
    post_answer ((size_t) i, err, in);
  }
  if (io) {
    rados_ioctx_destroy (io);
    rados_shutdown (cl);
  }
  return NULL;
}

/* ---- the dispatcher's side --------------------------------------------- */

/* The fallback and its end, once each way. */
static void
log_change (const struct gw_group *g, bool fell)
{
  const char *name = tn_live ()->groups[g->index].cg->name;

  if (fell)
    nbdkit_error ("cfq: group %s: no exchange of counts through RADOS for"
                  " %llu ms: its caps are 1/%u here until one works", name,
                  (unsigned long long) (gw_conf.ns[GQOS_K_EXPIRY]
                                        / NSEC_PER_MSEC), g->gg.servers);
  else
    nbdkit_error ("cfq: group %s: counts exchanged through RADOS again",
                  name);
}

/* Every period: each group's shares, and its record posted to the thread
 * (replacing one it has not taken yet).
 */
static void
timer_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  uint64_t now = engine_now ();
  struct qos_counts none;

  memset (&none, 0, sizeof none);
  for (size_t i = 0; i < gw.nr_groups; i++) {
    struct gw_group *g = &gw.groups[i];
    uint32_t share[QOS_NR_CAPS];
    struct gqos_record r = { .seq = ++g->seq, .t_ns = now - gw.t0 };

    if (gqos_shares (&g->gg, g->conf, now, share))
      log_change (g, true);
    sched_group_qos_charge (gw.s, g->sg, &none, share, now);
    sched_group_qos_counts (gw.s, g->sg, &r.c);
    pthread_mutex_lock (&gw.lock);
    g->out = r;
    g->out_new = true;
    pthread_mutex_unlock (&gw.lock);
  }
  pthread_cond_signal (&gw.cond);
}

/* One group's answer: the peers' records to the policy. */
static void
take_answer (struct gw_group *g, uint64_t now)
{
  static struct gw_rec in[GQOS_PEERS_MAX];       /* the dispatcher's */
  struct qos_counts charge;
  unsigned n;
  int err;

  pthread_mutex_lock (&gw.lock);
  g->in_new = false;
  err = g->in_err;
  n = g->nr_in;
  memcpy (in, g->in, n * sizeof *in);
  pthread_mutex_unlock (&gw.lock);
  memset (&charge, 0, sizeof charge);
  for (unsigned k = 0; k < n; k++)
    gqos_peer_seen (&g->gg, in[k].name, &in[k].r, now, &charge);
  /* No object yet (the first exchange of all): no peers, not a failure. */
  if (err == -ENOENT)
    err = 0;
  if (err)
    nbdkit_debug ("cfq: group %s: exchanging counts: %s",
                  tn_live ()->groups[g->index].cg->name, strerror (-err));
  if (gqos_exchange_done (&g->gg, err == 0, now))
    log_change (g, false);
  if (!err)
    sched_group_qos_charge (gw.s, g->sg, &charge, NULL, now);
}

static void
done_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  uint64_t n, now = engine_now ();

  if (read (gw.efd, &n, sizeof n) < 0)
    return;
  for (size_t i = 0; i < gw.nr_groups; i++) {
    bool ready;

    pthread_mutex_lock (&gw.lock);
    ready = gw.groups[i].in_new;
    pthread_mutex_unlock (&gw.lock);
    if (ready)
      take_answer (&gw.groups[i], now);
  }
}

/* The global groups with a cap or a reservation. */
static int
make_groups (struct tenants *tn)
{
  gw.groups = calloc (tn->m->nr_groups, sizeof *gw.groups);
  if (!gw.groups)
    return -ENOMEM;
  for (size_t i = 0; i < tn->m->nr_groups; i++) {
    struct tn_group *t = &tn->groups[i];
    struct gw_group *g = &gw.groups[gw.nr_groups];

    if (!t->cg->global || qos_conf_empty (&t->qos))
      continue;
    g->index = i;
    g->sg = t->sg;
    g->conf = &t->qos;
    snprintf (g->oid, sizeof g->oid, GW_OID_PREFIX "%s", t->cg->name);
    gqos_group_init (&g->gg, gw_conf.ns[GQOS_K_EXPIRY]);
    gw.nr_groups++;
  }
  return 0;
}

int
gw_start (struct sched *s, struct ev_loop *loop)
{
  double period;
  int err;

  if (!gw.on)
    return 0;
  if (gw_conf.text[GQOS_K_GATEWAY])
    snprintf (gw.name, sizeof gw.name, "%s", gw_conf.text[GQOS_K_GATEWAY]);
  gw.s = s;
  gw.loop = loop;
  gw.t0 = engine_now ();
  gw.stop = false;
  err = make_groups (tn_live ());
  if (err || gw.nr_groups == 0)
    return err;
  gw.efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (gw.efd < 0) {
    err = -errno;
    nbdkit_error ("cfq: eventfd: %m");
    gw_stop ();
    return err;
  }
  err = -pthread_create (&gw.thread, NULL, exchange_main, NULL);
  if (err) {
    nbdkit_error ("cfq: starting the exchange thread: %s", strerror (-err));
    gw_stop ();
    return err;
  }
  gw.thread_on = true;
  nbdkit_debug ("cfq: gateway %s: %zu group(s) with global limits, in"
                " pool %s", gw.name, gw.nr_groups, gw_conf.text[GQOS_K_POOL]);
  ev_io_init (&gw.done_w, done_cb, gw.efd, EV_READ);
  ev_io_start (loop, &gw.done_w);
  ev_unref (loop);
  period = (double) gw_conf.ns[GQOS_K_PERIOD] / NSEC_PER_SEC;
  ev_timer_init (&gw.timer, timer_cb, period, period);
  ev_timer_start (loop, &gw.timer);
  ev_unref (loop);
  return 0;
}

void
gw_stop (void)
{
  if (gw.thread_on) {
    ev_ref (gw.loop);
    ev_timer_stop (gw.loop, &gw.timer);
    ev_ref (gw.loop);
    ev_io_stop (gw.loop, &gw.done_w);
    pthread_mutex_lock (&gw.lock);
    gw.stop = true;
    pthread_cond_signal (&gw.cond);
    pthread_mutex_unlock (&gw.lock);
    pthread_join (gw.thread, NULL);     /* within the cluster's timeouts */
    gw.thread_on = false;
  }
  if (gw.efd >= 0)
    close (gw.efd);
  gw.efd = -1;
  free (gw.groups);
  gw.groups = NULL;
  gw.nr_groups = 0;
}

void
gw_group_stats (size_t i, uint64_t now, stat_emit_fn *emit, void *opaque)
{
  for (size_t k = 0; k < gw.nr_groups; k++)
    if (gw.groups[k].index == i)
      gqos_group_stats (&gw.groups[k].gg, now, emit, opaque);
}

#endif /* HAVE_RADOS */
