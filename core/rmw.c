/* rmw.c: the arithmetic of unaligned requests over an O_DIRECT file.
 *
 * A request that is not block aligned is served on the aligned span that
 * covers it.  A read reads the span into a bounce buffer and copies the
 * caller's part out.  A write must not change the bytes of the edge blocks
 * outside the request, so it first reads those edge blocks (at most two:
 * the first block if the request starts inside it, the last if it ends
 * inside it; one if both are the same block), lays the caller's bytes over
 * them in the bounce and writes the whole span.  The plugin serialises such
 * a read-modify-write against every overlapping write (plugin/io.c, with
 * the range lock of plugin/rangelock.c);
 * this file only decides the offsets.
 */
#include <errno.h>

#include "rmw.h"

static bool
bs_ok (uint32_t bs)
{
  return bs != 0 && (bs & (bs - 1)) == 0;
}

int
rmw_plan (uint64_t off, uint64_t len, uint32_t bs, struct rmw_plan *p)
{
  uint64_t end, aend, mask;

  if (!bs_ok (bs) || len == 0 || off + len < off)
    return -EINVAL;
  mask = (uint64_t) bs - 1;
  end = off + len;
  if (end + mask < end)         /* rounding up would overflow */
    return -EINVAL;
  aend = (end + mask) & ~mask;

  p->span_off = off & ~mask;
  p->span_len = aend - p->span_off;
  p->head = (uint32_t) (off - p->span_off);
  p->tail = (uint32_t) (aend - end);
  p->aligned = p->head == 0 && p->tail == 0;
  p->nedges = 0;
  if (p->head) {
    p->edge_off[p->nedges] = p->span_off;
    p->edge_buf[p->nedges] = 0;
    p->nedges++;
  }
  /* The tail block, unless it is the head block already read. */
  if (p->tail && !(p->head && p->span_len == bs)) {
    p->edge_off[p->nedges] = aend - bs;
    p->edge_buf[p->nedges] = p->span_len - bs;
    p->nedges++;
  }
  return 0;
}

int
rmw_page_span (uint64_t off, uint64_t end, uint64_t page, uint64_t *lo,
               uint64_t *len)
{
  uint64_t mask = page - 1, hi;

  if (page == 0 || (page & mask) || end < off)
    return -EINVAL;
  *lo = off & ~mask;
  hi = end + mask < end ? UINT64_MAX : (end + mask) & ~mask;
  *len = hi - *lo;
  return 0;
}

int
rmw_interior (uint64_t off, uint64_t len, uint32_t bs,
              uint64_t *ioff, uint64_t *ilen)
{
  uint64_t mask, start, end;

  if (!bs_ok (bs) || off + len < off)
    return -EINVAL;
  mask = (uint64_t) bs - 1;
  if (off + mask < off) {      /* no whole block fits before 2^64 */
    *ioff = off;
    *ilen = 0;
    return 0;
  }
  start = (off + mask) & ~mask;
  end = (off + len) & ~mask;
  *ioff = start;
  *ilen = end > start ? end - start : 0;
  return 0;
}
