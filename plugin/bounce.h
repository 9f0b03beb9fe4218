/* bounce.h: aligned buffers for requests O_DIRECT cannot take as they are
 * (an unaligned client buffer, a span rounded out to whole blocks).
 *
 *   p = bounce_get (n);        at least n bytes, aligned for O_DIRECT
 *   ... I/O into or out of p ...
 *   bounce_put (p);
 *
 * Every bounce_get that returns a buffer is paired with one bounce_put of
 * it on the same thread; a thread holds at most one buffer at a time.
 *
 * Threads: bounce_init and bounce_fini on nbdkit's main thread (get_ready,
 * unload); get and put on any worker.
 */
#ifndef CFQ_BOUNCE_H
#define CFQ_BOUNCE_H

#include <stddef.h>

/* Every buffer will be aligned to align bytes.  0 or -errno. */
extern int bounce_init (size_t align);
/* Free the calling thread's buffer and forget the rest (each worker's
 * goes with its thread).  Harmless without bounce_init.
 */
extern void bounce_fini (void);

/* NULL if out of memory. */
extern void *bounce_get (size_t n);
extern void bounce_put (void *p);

#endif /* CFQ_BOUNCE_H */
