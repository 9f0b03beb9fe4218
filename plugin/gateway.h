/* gateway.h: caps and reservations held across servers, through RADOS.
 *
 * Groups with scope = global share their counts with the other servers
 * (gateways) serving the same tenant: every gqos_period each writes its
 * record into the group's object in a RADOS pool and reads the others',
 * with librados' asynchronous calls, and the policy (include/gqos.h)
 * turns them into this server's share of the caps and a charge to the
 * reservation.  Nothing here blocks the dispatcher: the librados calls
 * are made on a thread of their own, which signals an eventfd the loop
 * watches.
 *
 * Built without librados (no HAVE_RADOS), gqos_conf= is refused with the
 * reason, and scope = global does nothing.
 *
 * Threads: gw_config and gw_config_complete on nbdkit's main thread;
 * gw_start, gw_stop and gw_group_stats on the dispatcher, under the
 * engine lock (setup and teardown hooks, the loop's callbacks, stats);
 * the exchange thread (gateway.c) touches only what its mutex guards.
 */
#ifndef CFQ_GATEWAY_H
#define CFQ_GATEWAY_H

#include <stddef.h>
#include <stdint.h>

#include "statfield.h"

struct engine;
struct ev_loop;
struct sched;

/* A plugin parameter: 1 handled, 0 not ours, -1 error (reported). */
extern int gw_config (const char *key, const char *value);
/* After the model is validated: the settings complete (defaults, checks).
 * 0 or -1 (reported).
 */
extern int gw_config_complete (void);
/* On the dispatcher's loop (the setup hook): start the exchange thread
 * (it connects to the cluster) and the exchanges of the global groups.
 * A cluster that cannot be reached is logged, and until it can the groups
 * keep their caps whole (this server alone).  0 or -errno.
 */
extern int gw_start (struct sched *s, struct ev_loop *loop);
/* The teardown hook: stop the thread (it finishes the operation in
 * flight, bounded by the cluster's timeouts) and disconnect.
 */
extern void gw_stop (void);
/* Group I's table "gqos" if its limits are global and the exchange runs. */
extern void gw_group_stats (size_t i, uint64_t now, stat_emit_fn *emit,
                            void *opaque);
extern void gw_unload (void);

#endif /* CFQ_GATEWAY_H */
