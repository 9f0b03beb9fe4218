/* ctlcmd.h: the control socket's commands (see ctlcmd.c).
 *
 * Threads: the dispatcher, under the engine lock.
 */
#ifndef CFQ_CTLCMD_H
#define CFQ_CTLCMD_H

#include "control.h"

/* A control_fn: run one command line; opaque is the struct tenants. */
extern void ctlcmd_run (void *opaque, const char *line, struct strbuf *out);

#endif /* CFQ_CTLCMD_H */
