/* hooks.h: the engine's hooks, which run the tenants' side of the server
 * on the dispatcher (see hooks.c).
 *
 * Threads: hooks_engine_cfg on nbdkit's main thread (.after_fork); the
 * hooks themselves on the dispatcher, under the engine lock.
 */
#ifndef CFQ_HOOKS_H
#define CFQ_HOOKS_H

#include "engine.h"

/* Fill in the engine's dm, hooks and opaque. */
extern void hooks_engine_cfg (struct engine_cfg *cfg);

#endif /* CFQ_HOOKS_H */
