/* bigmem.c: the server's own large buffers (nbdkit's request buffers,
 * reqbuf.c; the bounce pool's, bounce.c) straight from mmap, so that
 * each goes back to the system when freed, whatever glibc's thresholds
 * are.  The plugin raises those (fix_malloc_thresholds, plugin.c) so
 * that the buffers librados allocates for each reply are reused from an
 * arena; a buffer that lives as long as a connection or the pool's
 * cache would, in an arena, pin memory there after it is freed (RSS 77
 * against 222 MiB after tests/stress/test-churn.sh).  Blocks under
 * BIGMEM_MIN, or aligned past a page, come from posix_memalign as before.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#include "bigmem.h"

static bool
mapped (size_t size, size_t align)
{
  return size >= BIGMEM_MIN && align <= (size_t) sysconf (_SC_PAGESIZE);
}

void *
bigmem_alloc (size_t size, size_t align)
{
  void *p;
  int err;

  if (mapped (size, align)) {
    p = mmap (NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
              -1, 0);
    return p == MAP_FAILED ? NULL : p;
  }
  err = posix_memalign (&p, align, size);
  if (err) {
    errno = err;
    return NULL;
  }
  return p;
}

void
bigmem_free (void *p, size_t size, size_t align)
{
  if (!p)
    return;
  if (mapped (size, align))
    munmap (p, size);
  else
    free (p);
}
