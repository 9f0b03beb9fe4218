/* reqbuf.h: nbdkit's request buffers and replies (reqbuf.c says how):
 * page aligned, counted against the memory budget, and a reply timeout.
 *
 * Thread: reqbuf_install runs once, from .load, and reqbuf_configure from
 * .get_ready, before nbdkit has a connection; the wrappers then run on any
 * of nbdkit's threads, and reqbuf_stats on any thread.
 */
#ifndef CFQ_PLUGIN_REQBUF_H
#define CFQ_PLUGIN_REQBUF_H

#include <stdbool.h>
#include <stdint.h>

struct reqbuf_stats {
  uint64_t limit;               /* bytes: the request budget; 0: none */
  uint64_t in_use;              /* bytes of nbdkit's blocks counted now */
  uint64_t peak;                /* bytes: most at once */
  uint64_t blocks;              /* blocks counted now */
  uint64_t refused;             /* growths refused (the request: ENOMEM) */
  uint64_t timeouts;            /* clients cut off for taking no reply */
};

extern void reqbuf_install (void);
/* The budget for nbdkit's request buffers (bytes, 0: none) and the reply
 * timeout (ns, 0: none).
 */
extern void reqbuf_configure (uint64_t limit, uint64_t timeout_ns);
/* Does nbdkit now give its request buffers page alignment? */
extern bool reqbuf_aligned (void);
extern void reqbuf_stats (struct reqbuf_stats *st);

#endif
