/* bounce.h: the pool of aligned request buffers, for requests O_DIRECT
 * cannot take as they are (an unaligned client buffer, a span rounded out
 * to whole blocks).
 *
 *   p = bounce_get (n);        at least n bytes, aligned for O_DIRECT;
 *                              waits while the pool is at its cap
 *   ... I/O into or out of p ...
 *   bounce_put (p);
 *
 * Every bounce_get that returns a buffer is paired with one bounce_put of
 * it; a request holds at most one buffer at a time and takes it after any
 * range lock it needs (io.c), so a request waiting for a buffer never
 * holds up one that has one.
 *
 * Threads: bounce_init and bounce_fini on nbdkit's main thread (get_ready,
 * unload); get, put and stats on any thread.
 */
#ifndef CFQ_BOUNCE_H
#define CFQ_BOUNCE_H

#include <stddef.h>
#include <stdint.h>

/* What the pool holds and did (bytes and counts since bounce_init). */
struct bounce_stats {
  size_t cap;                   /* bytes: most it allocates at once */
  size_t total;                 /* bytes allocated: in use + cached */
  size_t in_use;                /* bytes handed out */
  size_t peak;                  /* bytes: most in use at once */
  uint64_t gets;                /* buffers handed out */
  uint64_t waits;               /* gets that waited for the cap */
  uint64_t wait_ns;             /* time they waited, in total */
  uint64_t allocs, frees;       /* buffers allocated and freed */
};

/* Every buffer will be aligned to align bytes, the pool holding at most
 * cap bytes (>= the largest buffer a request needs).  0 or -errno.
 */
extern int bounce_init (size_t align, size_t cap);
/* Free the cached buffers (none may be in use).  Harmless without
 * bounce_init.
 */
extern void bounce_fini (void);

/* NULL if out of memory, or if n is more than the cap. */
extern void *bounce_get (size_t n);
extern void bounce_put (void *p);
extern void bounce_stats (struct bounce_stats *st);

#endif /* CFQ_BOUNCE_H */
