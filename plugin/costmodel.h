/* costmodel.h: where the device's cost model comes from, where it is
 * kept, and how it is reported (see costmodel.c).
 *
 * Threads: cm_prepare on nbdkit's main thread in get_ready, before the
 * dispatcher starts; what it decided is read-only afterwards.  cm_apply
 * and cm_report run on the dispatcher (the setup hook, the control
 * socket).
 */
#ifndef CFQ_COSTMODEL_H
#define CFQ_COSTMODEL_H

#include <stddef.h>

struct cfg_model;
struct devmodel;
struct sched;
struct strbuf;
struct tenants;

/* Decide the model: cost_model = if the config states one, else the
 * device model's (emulate=), else for the real device the saved one
 * (calibration = FILE) or a measurement (calibrate =, calibrate.c) or the
 * generic disk or flash by rotational (ROTATIONAL as detected: -1, 0, 1).
 * Measures before returning, and saves what it measured.  BACKEND: the
 * I/O backend's name ("null" touches no device: nothing is measured).
 * 0, or -1 (reported) for what must stop the server.
 */
extern int cm_prepare (const struct cfg_model *m, struct devmodel *dm,
                       int rotational, const char *sched_name,
                       const char *backend);

/* Give the scheduler the model decided (nothing for the generic one,
 * which the policy keeps by its rotational tunable).  0, or -errno with
 * WHY.
 */
extern int cm_apply (struct sched *s, char *why, size_t len);

/* The control socket's "cost": the model, where it came from, the
 * online correction and what it predicts.
 */
extern void cm_report (struct tenants *tn, struct strbuf *o);

#endif /* CFQ_COSTMODEL_H */
