/* tenants.h: many tenants on one device: the configuration model in the
 * plugin, per-tenant accounting, the control socket's commands.
 *
 * cfq.c (the nbdkit edge) hands every key=value it does not handle itself
 * to tn_config(); .config_complete calls tn_validate() once the device's
 * size is known; .after_fork passes tn_engine_hooks() to the engine, whose
 * dispatcher thread then runs every hook (groups, tunables, stats, control
 * commands), so nothing here takes a lock.
 *
 * Threads: tn_config..tn_prepare run on nbdkit's main thread before the
 * dispatcher starts; the model is read-only afterwards and read by every
 * thread; tn_conn_new/tn_conn_free run on nbdkit's workers and touch only
 * the new connection; everything else belongs to the dispatcher.
 */
#ifndef CFQ_TENANTS_H
#define CFQ_TENANTS_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "engine.h"

struct tn_conn;

/* Plugin parameters: 1 handled, 0 not ours, -1 error (already reported). */
extern int tn_config (const char *key, const char *value);
/* Pass a plugin key (file, scheduler, queue_depth) on to the model too. */
extern int tn_override (const char *key, const char *value);
/* config= was given. */
extern bool tn_have_config (void);
/* The device file from config= or file=, or NULL. */
extern const char *tn_device_file (void);

/* Build the model for a device of size bytes (errors: nbdkit_error each).
 * 0 or -1.
 */
extern int tn_validate (uint64_t size);
extern const struct cfg_model *tn_model (void);
/* Report the errors found so far (when the device cannot be opened and
 * tn_validate will not run).
 */
extern void tn_report_errors (void);

/* The scheduler to use: scheduler= if given, else the config's, else fifo. */
extern const char *tn_sched_name (const char *cmdline);

/* After get_ready: the device model (emulate=) with its capacity, and the
 * rotational flag (from the model, or sysfs for st_dev/st_rdev of the
 * served file).  0 or -1.
 */
extern int tn_prepare (const char *sched_name, uint64_t size, dev_t dev);

/* Fill in the engine's dm, hooks and opaque. */
extern void tn_engine_cfg (struct engine_cfg *cfg);
/* The group, class and level of a connection to export i. */
extern void tn_qspec (size_t i, struct engine_qspec *spec);

/* A connection's accounting (creq->acct); NULL on ENOMEM. */
extern struct tn_conn *tn_conn_new (size_t export_index);
extern void tn_conn_free (struct tn_conn *c);

extern void tn_unload (void);

#endif /* CFQ_TENANTS_H */
