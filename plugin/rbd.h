/* rbd.h: Ceph RBD images as the backing of the device and of exports
 * (backend=rbd; backend-rbd.c).
 *
 * An image is named "rbd:POOL/IMAGE" or "rbd:IMAGE" (in pool=, default
 * "rbd") wherever a file may be: file=, [device] file, [export] file.
 * The device may also be given as pool= and image=.  conf=, id=,
 * keyring= and rbd_timeout= say how to reach the cluster; they are
 * server-wide.
 *
 * The cluster is reached twice.  Before nbdkit forks (config_complete,
 * get_ready) rbdk_probe learns an image's size; the first probe connects,
 * the others use that connection, and rbdk_probe_end shuts it down before
 * the fork: librados runs threads, which a fork would not carry over.
 * After the fork (after_fork) rbdk_connect connects again and opens every
 * image once for the server; the backend does all its I/O on those
 * handles.
 *
 * Threads: rbdk_config, rbdk_probe, rbdk_probe_end, rbdk_attach,
 * rbdk_connect and rbdk_disconnect on nbdkit's main thread; the image
 * table is read-only
 * between rbdk_connect and rbdk_disconnect.  Errors are reported with
 * nbdkit_error, "cfq: rbd POOL/IMAGE: ...".
 */
#ifndef CFQ_RBD_H
#define CFQ_RBD_H

#include <stdbool.h>
#include <stdint.h>

#include "config.h"

#define RBD_PREFIX CFG_RBD_PREFIX       /* an image, where a file may be */

/* Is this file name an image (RBD_PREFIX)? */
extern bool rbdk_is_image (const char *path);

/* pool=, image=, conf=, id=, keyring=, rbd_timeout= (their table,
 * rbd_keys[], is in backend-rbd.c): 1 if key is one of them (taken, or
 * -1 with the error reported), 0 if not.
 */
extern int rbdk_config (const char *key, const char *value);

/* The keys not given take their defaults: 0 or -1 (reported). */
extern int rbdk_config_complete (void);

/* The device named by pool= and image=, as "rbd:POOL/IMAGE" (malloc'd),
 * or NULL if image= was not given.
 */
extern char *rbdk_device_spec (void);

/* "rbd:POOL/IMAGE" for spec, the pool filled in (malloc'd); NULL if the
 * name is malformed (reported).
 */
extern char *rbdk_spec_norm (const char *spec);

/* Was the plugin built with librbd? */
extern bool rbdk_available (void);

/* The image's size, on the probes' connection (connected by the first
 * probe).  0 or -1.
 */
extern int rbdk_probe (const char *spec, uint64_t *size);

/* The probes are done: their connection is shut down (before the fork;
 * rbdk_unload does it too).
 */
extern void rbdk_probe_end (void);

/* Take spec (normalized) as engine slot slot's image, and learn its size
 * (rbdk_probe); rbdk_connect opens it.  cache: librbd's cache on.  0 or -1.
 */
extern int rbdk_attach (const char *spec, unsigned slot, bool readonly,
                       bool cache, uint64_t *size);

/* After the fork: connect and open every image taken, checking that its
 * size is still what rbdk_attach saw.  0 or -1.
 */
extern int rbdk_connect (void);
extern void rbdk_disconnect (void);
extern void rbdk_unload (void);

#endif /* CFQ_RBD_H */
