/* test-rmw.c: the alignment planner.
 *
 * Hand-picked cases pin the offsets; then an exhaustive model over a small
 * "disk" checks the property the plugin relies on: doing only aligned
 * reads and writes as planned (read edge blocks into the bounce, lay the
 * data over, write the span) leaves the disk exactly as a byte-granular
 * write would, and an aligned read of the span returns the right bytes.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "rmw.h"

#define DISK 8192

static unsigned char disk[DISK], want[DISK], bounce[DISK + 8192];

static void
aligned_read (uint64_t off, uint64_t len, uint32_t bs, unsigned char *dst)
{
  CHECK (rmw_is_aligned (off, bs));
  CHECK (rmw_is_aligned (len, bs));
  CHECK_LE (off + len, DISK);
  memcpy (dst, disk + off, len);
}

static void
aligned_write (uint64_t off, uint64_t len, uint32_t bs,
               const unsigned char *src)
{
  CHECK (rmw_is_aligned (off, bs));
  CHECK (rmw_is_aligned (len, bs));
  CHECK_LE (off + len, DISK);
  memcpy (disk + off, src, len);
}

static void
model (uint32_t bs, uint64_t off, uint64_t len, unsigned seed)
{
  struct rmw_plan p;
  unsigned char data[DISK];

  for (size_t i = 0; i < DISK; i++)
    disk[i] = want[i] = (unsigned char) (i * 7 + seed);
  for (size_t i = 0; i < len; i++)
    data[i] = (unsigned char) (0xa5 ^ (i + seed));

  CHECK_EQ (rmw_plan (off, len, bs, &p), 0);
  CHECK_LE (p.span_off, off);
  CHECK_LE (off + len, p.span_off + p.span_len);
  CHECK_EQ (p.span_len - len, (uint64_t) p.head + p.tail);
  CHECK_LT (p.head, bs);
  CHECK_LT (p.tail, bs);
  CHECK_EQ (p.aligned, (p.head == 0 && p.tail == 0));

  /* Read path: span into bounce, copy out from head. */
  if (p.span_off + p.span_len <= DISK) {
    aligned_read (p.span_off, p.span_len, bs, bounce);
    CHECK_EQ (memcmp (bounce + p.head, disk + off, len), 0);
  }
  else
    return;

  /* Write path. */
  memset (bounce, 0xee, sizeof bounce);
  for (unsigned e = 0; e < p.nedges; e++) {
    CHECK_LE (p.edge_buf[e] + bs, p.span_len);
    CHECK_EQ (p.edge_off[e], p.span_off + p.edge_buf[e]);
    aligned_read (p.edge_off[e], bs, bs, bounce + p.edge_buf[e]);
  }
  memcpy (bounce + p.head, data, len);
  aligned_write (p.span_off, p.span_len, bs, bounce);
  memcpy (want + off, data, len);
  CHECK_EQ (memcmp (disk, want, DISK), 0);
}

int
main (void)
{
  struct rmw_plan p;
  uint64_t io, il;

  CHECK_EQ (rmw_plan (0, 512, 0, &p), -EINVAL);
  CHECK_EQ (rmw_plan (0, 512, 768, &p), -EINVAL);
  CHECK_EQ (rmw_plan (0, 0, 512, &p), -EINVAL);
  CHECK_EQ (rmw_plan (UINT64_MAX - 10, 100, 512, &p), -EINVAL);
  CHECK_EQ (rmw_plan (UINT64_MAX - 1000, 100, 4096, &p), -EINVAL);

  /* Aligned: nothing to do. */
  CHECK_EQ (rmw_plan (4096, 8192, 4096, &p), 0);
  CHECK (p.aligned);
  CHECK_EQ (p.nedges, 0);
  CHECK_EQ (p.span_off, 4096);
  CHECK_EQ (p.span_len, 8192);

  /* Inside one block: one edge read, at the block. */
  CHECK_EQ (rmw_plan (4100, 10, 4096, &p), 0);
  CHECK (!p.aligned);
  CHECK_EQ (p.nedges, 1);
  CHECK_EQ (p.span_off, 4096);
  CHECK_EQ (p.span_len, 4096);
  CHECK_EQ (p.head, 4);
  CHECK_EQ (p.tail, 4096 - 14);
  CHECK_EQ (p.edge_off[0], 4096);
  CHECK_EQ (p.edge_buf[0], 0);

  /* Ends inside a block: the tail block only. */
  CHECK_EQ (rmw_plan (0, 5000, 4096, &p), 0);
  CHECK_EQ (p.nedges, 1);
  CHECK_EQ (p.head, 0);
  CHECK_EQ (p.tail, 8192 - 5000);
  CHECK_EQ (p.edge_off[0], 4096);
  CHECK_EQ (p.edge_buf[0], 4096);

  /* Straddles three blocks, both edges partial. */
  CHECK_EQ (rmw_plan (1000, 8000, 4096, &p), 0);
  CHECK_EQ (p.span_off, 0);
  CHECK_EQ (p.span_len, 12288);
  CHECK_EQ (p.nedges, 2);
  CHECK_EQ (p.edge_off[0], 0);
  CHECK_EQ (p.edge_buf[0], 0);
  CHECK_EQ (p.edge_off[1], 8192);
  CHECK_EQ (p.edge_buf[1], 8192);

  /* bs 1: everything is aligned. */
  CHECK_EQ (rmw_plan (12345, 678, 1, &p), 0);
  CHECK (p.aligned);
  CHECK_EQ (p.span_off, 12345);
  CHECK_EQ (p.span_len, 678);

  /* Interior. */
  CHECK_EQ (rmw_interior (1000, 8000, 4096, &io, &il), 0);
  CHECK_EQ (io, 4096);
  CHECK_EQ (il, 4096);
  CHECK_EQ (rmw_interior (1000, 100, 4096, &io, &il), 0);
  CHECK_EQ (il, 0);
  CHECK_EQ (rmw_interior (0, 4096, 4096, &io, &il), 0);
  CHECK_EQ (io, 0);
  CHECK_EQ (il, 4096);
  CHECK_EQ (rmw_interior (UINT64_MAX - 5, 5, 512, &io, &il), 0);
  CHECK_EQ (il, 0);
  CHECK_EQ (rmw_interior (0, 10, 3, &io, &il), -EINVAL);

  /* Page spans.  A device of 10M + 8K + 700 bytes with 512-byte blocks:
   * export a is [0, 10M + 8K), export b the rest, with the partial tail
   * block [10M + 8K + 512, 10M + 8K + 700).  Its page begins inside b
   * with 4 KiB pages, but inside a with 64 KiB pages: the lock around
   * the tail's buffered write must then cover a's last 8 KiB, which share
   * the page with it.
   */
  {
    const uint64_t a_end = (10u << 20) + 8192, size = a_end + 700;
    const uint64_t tail = size / 512 * 512;
    uint64_t lo, len;

    CHECK_EQ (rmw_page_span (tail, size, 4096, &lo, &len), 0);
    CHECK_EQ (lo, a_end);
    CHECK_EQ (len, 4096);
    CHECK_EQ (rmw_page_span (tail, size, 65536, &lo, &len), 0);
    CHECK_EQ (lo, 10u << 20);
    CHECK_EQ (len, 65536);
    CHECK_LT (lo, a_end);               /* a's blocks in the tail's page */
    CHECK_GE (lo + len, size);
    /* Spans over page boundaries; exact pages stay as they are. */
    CHECK_EQ (rmw_page_span (65535, 65537, 65536, &lo, &len), 0);
    CHECK_EQ (lo, 0);
    CHECK_EQ (len, 131072);
    CHECK_EQ (rmw_page_span (65536, 131072, 65536, &lo, &len), 0);
    CHECK_EQ (lo, 65536);
    CHECK_EQ (len, 65536);
    CHECK_EQ (rmw_page_span (UINT64_MAX - 10, UINT64_MAX, 4096, &lo, &len),
              0);
    CHECK_EQ (lo + len, UINT64_MAX);
    CHECK_EQ (rmw_page_span (0, 1, 3000, &lo, &len), -EINVAL);
    CHECK_EQ (rmw_page_span (0, 1, 0, &lo, &len), -EINVAL);
    CHECK_EQ (rmw_page_span (2, 1, 4096, &lo, &len), -EINVAL);
  }

  /* Exhaustive model over a small disk. */
  static const uint32_t sizes[] = { 1, 512, 1024, 4096 };
  unsigned n = 0;
  for (size_t b = 0; b < sizeof sizes / sizeof sizes[0]; b++) {
    uint32_t bs = sizes[b];
    for (uint64_t off = 0; off < 3 * 1024; off += 37)
      for (uint64_t len = 1; off + len <= DISK && len < 5000; len += 97)
        model (bs, off, len, n++);
    /* Exact block boundaries and one-byte edges. */
    for (uint64_t off = 0; off + bs <= DISK; off += bs)
      for (int d = -1; d <= 1; d++) {
        if (off == 0 && d < 0)
          continue;
        model (bs, off + d, bs, n++);
        model (bs, off + d, 1, n++);
      }
  }
  printf ("rmw: ok (%u modelled requests)\n", n);
  check_done ("test-rmw");
  return 0;
}
