/* rmw.h: alignment planning for O_DIRECT reads and read-modify-write.
 *
 * O_DIRECT transfers must start and end on the device's logical block (or
 * the filesystem's direct-I/O offset alignment).  NBD clients may send any
 * byte range.  Given a byte range and the block size this works out the
 * aligned span that covers it, which edge blocks are only partly inside
 * the request (and so must be read before an aligned write of the span
 * can replace them), and where the caller's bytes sit inside a bounce
 * buffer holding the span:
 *
 *   span_off                                           span_off+span_len
 *   |<- head ->|<------------ len ------------>|<- tail ->|
 *   | block    |                               |    block |
 *   '- head_blk (read first if head > 0)   tail_blk -'
 *
 * Pure arithmetic: no I/O, no allocation.  Used by the plugin's worker
 * threads; tested in tests/unit/test-rmw.c.
 */
#ifndef CFQ_RMW_H
#define CFQ_RMW_H

#include <stdbool.h>
#include <stdint.h>

struct rmw_plan {
  uint64_t span_off;            /* bytes: request start rounded down to bs */
  uint64_t span_len;            /* bytes: aligned length covering the request */
  uint32_t head;                /* bytes: request start - span_off; copy offset in the bounce */
  uint32_t tail;                /* bytes: span end - request end */
  bool aligned;                 /* head == 0 && tail == 0: no bounce needed */
  unsigned nedges;              /* 0, 1 or 2 partial edge blocks to read for RMW */
  uint64_t edge_off[2];         /* bytes: device offsets of the edge blocks */
  uint64_t edge_buf[2];         /* bytes: where each edge block goes in the bounce */
};

/* Plan [off, off+len) against block size bs (a power of two, >= 1).
 * Returns 0, or -EINVAL for a bad bs, len == 0 or a range that overflows.
 */
extern int rmw_plan (uint64_t off, uint64_t len, uint32_t bs,
                     struct rmw_plan *p);

/* The largest bs-aligned sub-range inside [off, off+len): *ioff, *ilen.
 * *ilen is 0 when no whole block fits.  Used where the edges may simply be
 * left alone (discard is advisory).  Returns -EINVAL for a bad bs.
 */
extern int rmw_interior (uint64_t off, uint64_t len, uint32_t bs,
                         uint64_t *ioff, uint64_t *ilen);

/* The page-cache pages that [off, end) touches, for pages of page bytes
 * (a power of two; the plugin passes sysconf's, 4 KiB or 64 KiB): *lo,
 * *len.  Every byte of those pages, whoever's it is, shares the pages'
 * fate in the page cache: the plugin locks them all around a buffered
 * write (plugin/io.c lock_pages).  A span whose last page would end past
 * 2^64 ends at 2^64 - 1.  Returns -EINVAL for a bad page or end < off.
 */
extern int rmw_page_span (uint64_t off, uint64_t end, uint64_t page,
                          uint64_t *lo, uint64_t *len);

static inline bool
rmw_is_aligned (uint64_t v, uint64_t a)
{
  return (v & (a - 1)) == 0;
}

#endif /* CFQ_RMW_H */
