/* reqbuf.h: nbdkit's request buffers, page aligned (reqbuf.c says how).
 *
 * Thread: reqbuf_install runs once, from .load, before nbdkit has any
 * other thread; reqbuf_aligned is read-only after it.
 */
#ifndef CFQ_PLUGIN_REQBUF_H
#define CFQ_PLUGIN_REQBUF_H

#include <stdbool.h>

extern void reqbuf_install (void);
/* Does nbdkit now give its request buffers page alignment? */
extern bool reqbuf_aligned (void);

#endif
