/* gateway.c: the exchange of counts between servers, through RADOS (see
 * gateway.h; the policy and its reasoning: core/gqos.c).
 *
 * Each group with scope = global has one object, cfq.gqos.GROUP, in the
 * pool gqos_pool, with one omap key per server (its gateway= name) whose
 * value is its record (gqos_encode).  Every gqos_period a timer on the
 * dispatcher's loop sends, for each such group whose last exchange has
 * finished, two operations at once: a write of its own key (omap set)
 * and a read of all the keys (omap get).  librados completes them on its
 * own threads; the callbacks only mark the slot done and write to an
 * eventfd.  The loop's watcher on it takes the answers under the engine
 * lock: each peer's record goes to gqos_peer_seen, the reservation others
 * served and this server's shares (gqos_shares) to the scheduler
 * (sched_group_qos_charge), and the pump's next pass acts on them.
 *
 * The cluster failing: connecting happens once, in the setup hook, with
 * the monitors' timeout (client_mount_timeout) of gqos_expiry, rounded up
 * to a second; a server that cannot connect logs it and serves with its
 * caps whole.  Once connected, every operation has an OSD timeout of the
 * expiry, so an exchange that cannot finish fails instead; meanwhile no
 * new one is sent for the group, and gqos_shares falls back once the
 * expiry has passed without one that worked (logged once, and again when
 * it works again).
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

#include <sys/eventfd.h>
#include <rados/librados.h>

#define GW_OID_PREFIX "cfq.gqos."

/* One global group's exchange.  [disp] but where marked. */
struct gw_group {
  size_t index;                 /* into tenants' groups */
  struct sched_group *sg;
  const struct qos_conf *conf;  /* its caps and reservation (tn_group) */
  char oid[GQOS_NAME_MAX + 16]; /* its object */
  struct gqos_group gg;         /* the policy's view of the peers */
  uint64_t seq;                 /* of the record last written */
  char rec[GQOS_RECORD_MAX];    /* that record (librados reads it until
                                   the write completes) */
  bool busy;                    /* an exchange is in flight */
  rados_write_op_t wop;         /* its operations, while busy */
  rados_read_op_t rop;
  rados_completion_t wc, rc;
  rados_omap_iter_t iter;       /* the read's answer */
  int prval;                    /* the omap read's own result */
  unsigned char more;           /* more keys than asked for */
  unsigned pending;             /* [atomic] operations not completed yet */
};

static struct {
  bool on;                      /* gqos_conf= given */
  bool connected;
  rados_t cluster;
  rados_ioctx_t io;
  struct sched *s;
  struct ev_loop *loop;
  ev_timer timer;               /* every gqos_period */
  ev_io done_w;                 /* on efd */
  int efd;                      /* eventfd the callbacks write; -1 */
  struct gw_group *groups;
  size_t nr_groups;
  char name[GQOS_NAME_MAX];     /* gateway= */
  uint64_t t0;                  /* ns: the clock's zero for our records */
} gw = { .efd = -1 };

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

/* librados' threads: one operation of g finished. */
static void
op_done (rados_completion_t c, void *arg)
{
  struct gw_group *g = arg;
  uint64_t one = 1;

  if (__atomic_sub_fetch (&g->pending, 1, __ATOMIC_ACQ_REL) == 0
      && write (gw.efd, &one, sizeof one) < 0) {
    /* The counter is full: the loop is woken anyway. */
  }
}

static void
release_ops (struct gw_group *g)
{
  if (g->iter)
    rados_omap_get_end (g->iter);
  if (g->rop)
    rados_release_read_op (g->rop);
  if (g->wop)
    rados_release_write_op (g->wop);
  if (g->rc)
    rados_aio_release (g->rc);
  if (g->wc)
    rados_aio_release (g->wc);
  g->iter = NULL;
  g->rop = NULL;
  g->wop = NULL;
  g->rc = g->wc = NULL;
  g->busy = false;
}

/* Send g's write and read.  0 or -errno (nothing in flight then). */
static int
exchange_send (struct gw_group *g, uint64_t now)
{
  struct gqos_record r = { .seq = ++g->seq, .t_ns = now - gw.t0 };
  const char *key = gw.name, *val = g->rec;
  size_t len;
  int err;

  sched_group_qos_counts (gw.s, g->sg, &r.c);
  err = gqos_encode (&r, g->rec, sizeof g->rec);
  if (err < 0)
    return err;
  len = (size_t) err;
  g->wop = rados_create_write_op ();
  g->rop = rados_create_read_op ();
  if (!g->wop || !g->rop)
    goto nomem;
  rados_write_op_omap_set (g->wop, &key, &val, &len, 1);
  rados_read_op_omap_get_vals2 (g->rop, "", "", GQOS_PEERS_MAX + 1,
                                &g->iter, &g->more, &g->prval);
  if ((err = rados_aio_create_completion2 (g, op_done, &g->wc)) < 0
      || (err = rados_aio_create_completion2 (g, op_done, &g->rc)) < 0)
    goto fail;
  g->busy = true;
  __atomic_store_n (&g->pending, 2, __ATOMIC_RELEASE);
  err = rados_aio_write_op_operate (g->wop, gw.io, g->wc, g->oid, NULL, 0);
  if (err < 0) {
    __atomic_store_n (&g->pending, 0, __ATOMIC_RELEASE);
    goto fail;
  }
  err = rados_aio_read_op_operate (g->rop, gw.io, g->rc, g->oid, 0);
  if (err < 0) {
    /* The write is in flight: its completion ends the exchange, failed. */
    g->prval = err;
    op_done (NULL, g);
  }
  return 0;
nomem:
  err = -ENOMEM;
fail:
  release_ops (g);
  return err;
}

/* The fallback and its end, once each way. */
static void
log_change (const struct gw_group *g, bool fell)
{
  if (fell)
    nbdkit_error ("cfq: group %s: no exchange of counts through RADOS"
                  " for %llu ms: its caps are 1/%u here until one works",
                  tn_live ()->groups[g->index].cg->name, (unsigned long long)
                  (gw_conf.ns[GQOS_K_EXPIRY] / NSEC_PER_MSEC),
                  g->gg.servers);
  else
    nbdkit_error ("cfq: group %s: counts exchanged through RADOS again",
                  tn_live ()->groups[g->index].cg->name);
}

/* g's exchange finished: its answers to the policy. */
static void
exchange_finish (struct gw_group *g, uint64_t now)
{
  int wr = rados_aio_get_return_value (g->wc);
  int rd = rados_aio_get_return_value (g->rc);
  struct qos_counts charge;
  bool ok = wr >= 0 && (rd >= 0 || rd == -ENOENT);

  memset (&charge, 0, sizeof charge);
  if (ok && rd >= 0 && g->prval >= 0) {
    char *key, *val;
    size_t klen, vlen;

    while (rados_omap_get_next2 (g->iter, &key, &val, &klen, &vlen) == 0
           && key) {
      struct gqos_record r;
      char name[GQOS_NAME_MAX];

      if (klen == 0 || klen >= sizeof name)
        continue;
      memcpy (name, key, klen);
      name[klen] = '\0';
      if (strcmp (name, gw.name) == 0
          || gqos_decode (val, vlen, &r) < 0)
        continue;
      gqos_peer_seen (&g->gg, name, &r, now, &charge);
    }
  }
  release_ops (g);
  if (!ok)
    nbdkit_debug ("cfq: group %s: exchanging counts: %s",
                  tn_live ()->groups[g->index].cg->name,
                  strerror (wr < 0 ? -wr : -rd));
  if (gqos_exchange_done (&g->gg, ok, now))
    log_change (g, false);
  if (ok)
    sched_group_qos_charge (gw.s, g->sg, &charge, NULL, now);
}

/* Every period: the shares, and a new exchange for each group whose last
 * one finished.
 */
static void
timer_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  uint64_t now = engine_now ();

  for (size_t i = 0; i < gw.nr_groups; i++) {
    struct gw_group *g = &gw.groups[i];
    uint32_t share[QOS_NR_CAPS];
    struct qos_counts none;
    int err;

    memset (&none, 0, sizeof none);
    if (gqos_shares (&g->gg, g->conf, now, share))
      log_change (g, true);
    sched_group_qos_charge (gw.s, g->sg, &none, share, now);
    if (g->busy)
      continue;
    err = exchange_send (g, now);
    if (err) {
      gqos_exchange_done (&g->gg, false, now);
      nbdkit_debug ("cfq: group %s: sending its counts: %s",
                    tn_live ()->groups[g->index].cg->name, strerror (-err));
    }
  }
}

static void
done_cb (struct ev_loop *loop, ev_io *w, int revents)
{
  uint64_t n, now = engine_now ();

  if (read (gw.efd, &n, sizeof n) < 0)
    return;
  for (size_t i = 0; i < gw.nr_groups; i++) {
    struct gw_group *g = &gw.groups[i];
    if (g->busy && __atomic_load_n (&g->pending, __ATOMIC_ACQUIRE) == 0)
      exchange_finish (g, now);
  }
}

/* Connect to the cluster: blocking, once, before the dispatcher runs.
 * 0 or -errno (logged).
 */
static int
connect_cluster (void)
{
  char secs[32];
  int err;

  snprintf (secs, sizeof secs, "%llu", (unsigned long long)
            ((gw_conf.ns[GQOS_K_EXPIRY] + NSEC_PER_SEC - 1) / NSEC_PER_SEC));
  err = rados_create (&gw.cluster, gw_conf.text[GQOS_K_ID]);
  if (err < 0)
    goto out;
  if ((err = rados_conf_read_file (gw.cluster, gw_conf.text[GQOS_K_CONF]))
      < 0
      || (err = rados_conf_set (gw.cluster, "client_mount_timeout", secs)) < 0
      || (err = rados_conf_set (gw.cluster, "rados_osd_op_timeout", secs)) < 0
      || (err = rados_conf_set (gw.cluster, "rados_mon_op_timeout", secs)) < 0
      || (err = rados_connect (gw.cluster)) < 0) {
    rados_shutdown (gw.cluster);
    goto out;
  }
  err = rados_ioctx_create (gw.cluster, gw_conf.text[GQOS_K_POOL], &gw.io);
  if (err < 0) {
    rados_shutdown (gw.cluster);
    goto out;
  }
  gw.connected = true;
  return 0;
out:
  nbdkit_error ("cfq: gqos_conf=%s, gqos_pool=%s: %s: caps and reservations"
                " of scope = global hold for this server alone",
                gw_conf.text[GQOS_K_CONF], gw_conf.text[GQOS_K_POOL],
                strerror (-err));
  return err;
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
  struct tenants *tn = tn_live ();
  double period;
  int err;

  if (!gw.on)
    return 0;
  if (gw_conf.text[GQOS_K_GATEWAY])
    snprintf (gw.name, sizeof gw.name, "%s", gw_conf.text[GQOS_K_GATEWAY]);
  gw.s = s;
  gw.loop = loop;
  gw.t0 = engine_now ();
  err = make_groups (tn);
  if (err)
    return err;
  if (gw.nr_groups == 0 || connect_cluster () < 0)
    return 0;
  gw.efd = eventfd (0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (gw.efd < 0) {
    err = -errno;
    nbdkit_error ("cfq: eventfd: %m");
    gw_stop ();
    return err;
  }
  nbdkit_debug ("cfq: gateway %s: %zu group(s) with global limits, in"
                " pool %s", gw.name, gw.nr_groups,
                gw_conf.text[GQOS_K_POOL]);
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
  if (gw.efd >= 0) {
    ev_ref (gw.loop);
    ev_timer_stop (gw.loop, &gw.timer);
    ev_ref (gw.loop);
    ev_io_stop (gw.loop, &gw.done_w);
  }
  for (size_t i = 0; i < gw.nr_groups; i++) {
    struct gw_group *g = &gw.groups[i];
    if (!g->busy)
      continue;
    rados_aio_wait_for_complete (g->wc);
    rados_aio_wait_for_complete (g->rc);
    release_ops (g);
  }
  if (gw.connected) {
    rados_ioctx_destroy (gw.io);
    rados_shutdown (gw.cluster);
    gw.connected = false;
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
