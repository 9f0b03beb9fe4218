/* hooks.c: the engine's hooks: what the dispatcher does besides
 * dispatching, and in which order.
 *
 *   setup      the tenants' scheduler state (tenants.c), a one-second
 *              tick, the control socket served (ctlcmd.c's commands),
 *              the metrics=FILE writer started (metrics.c)
 *   tick       the iostats' rates, then the Prometheus text (statsout.c)
 *              handed to the metrics writer
 *   conn, done the accounting of connections and requests (tenants.c)
 *   teardown   stats=FILE written, the socket and the writer stopped,
 *              the tenants' state freed
 *
 * This file sits on top: it calls tenants.c, statsout.c, ctlcmd.c,
 * control.c and metrics.c, and none of them calls back into it or into
 * one another upwards (tenants.c knows nothing of the statistics' text
 * nor of the commands).
 *
 * Threads: everything but hooks_engine_cfg runs on the dispatcher, under
 * the engine lock; the statics below are the dispatcher's.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "control.h"
#include "ctlcmd.h"
#include "gateway.h"
#include "hooks.h"
#include "metrics.h"
#include "statsout.h"
#include "tenants.h"

/* -D cfq.policy=1: log every call of the policy's request path
 * (tests/test-policy-trace.sh compares them between data paths).
 */
NBDKIT_DLL_PUBLIC int cfq_debug_policy;

static struct ev_loop *hloop;   /* the dispatcher's, from setup */
static ev_timer tick;           /* every second: iostat_tick, metrics */
static struct metrics *metrics; /* metrics=FILE's writer, or NULL */

static void
tick_cb (struct ev_loop *loop, ev_timer *w, int revents)
{
  tn_tick (engine_now ());
  if (metrics) {
    struct strbuf b = { 0 };

    stats_prometheus (tn_live (), &b);
    if (b.oom || !b.s)
      strbuf_free (&b);         /* no new version this second */
    else
      metrics_post (metrics, b.s);
  }
}

static int
hook_setup (struct engine *e, void *opaque, struct sched *s,
            struct ev_loop *loop)
{
  struct tenants *tn = tn_live ();
  int err = tn_start (e, s);

  if (err)
    return err;
  hloop = loop;
  err = gw_start (s, loop);
  if (err) {
    tn_stop ();
    return err;
  }
  ev_timer_init (&tick, tick_cb, 1., 1.);
  ev_timer_start (loop, &tick);
  ev_unref (loop);              /* the tick alone does not keep it running */
  if (tn->ctl)
    control_start (tn->ctl, loop, ctlcmd_run, tn);
  if (tn->metrics_path) {
    metrics = metrics_start (tn->metrics_path, &err);
    if (!metrics) {
      nbdkit_error ("cfq: metrics=%s: %s", tn->metrics_path,
                    strerror (-err));
      if (tn->ctl)
        control_stop (tn->ctl);
      tn->ctl = NULL;
      return err;
    }
  }
  return 0;
}

static void
hook_teardown (struct engine *e, void *opaque)
{
  struct tenants *tn = tn_live ();

  if (tn->stats_path)
    stats_write_file (tn);
  if (tn->ctl)
    control_stop (tn->ctl);
  tn->ctl = NULL;
  metrics_stop (metrics);
  metrics = NULL;
  gw_stop ();
  ev_ref (hloop);
  ev_timer_stop (hloop, &tick);
  tn_stop ();
}

static void
hook_conn (struct engine *e, void *opaque, void *acct, bool open)
{
  tn_conn_hook (acct, open);
}

static void
hook_done (struct engine *e, void *opaque, struct creq *r, int res,
           uint64_t now)
{
  tn_done (r, res, now);
}

static void
hook_policy (struct engine *e, void *opaque, enum engine_call call,
             struct creq *r, uint64_t now)
{
  tn_policy_log (call, r, now);
}

static const struct engine_hooks hooks = {
  .setup = hook_setup,
  .teardown = hook_teardown,
  .conn = hook_conn,
  .done = hook_done,
};

static const struct engine_hooks hooks_policy = {
  .setup = hook_setup,
  .teardown = hook_teardown,
  .conn = hook_conn,
  .done = hook_done,
  .policy = hook_policy,
};

void
hooks_engine_cfg (struct engine_cfg *cfg)
{
  cfg->dm = tn_live ()->dm;
  cfg->hooks = cfq_debug_policy ? &hooks_policy : &hooks;
  cfg->opaque = NULL;
}
