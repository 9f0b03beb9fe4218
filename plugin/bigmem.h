/* bigmem.h: the server's own large buffers, from mmap (see bigmem.c).
 *
 * Any thread.  A block is given back with the size and alignment it was
 * asked for with: the same pair decides where it came from.
 */
#ifndef CFQ_BIGMEM_H
#define CFQ_BIGMEM_H

#include <stddef.h>

/* Bytes: a block this large or more is mmapped (glibc's own default mmap
 * threshold, which fix_malloc_thresholds raises for everything else).
 */
#define BIGMEM_MIN (128u << 10)

/* size bytes aligned to align (a power of 2): NULL with errno set. */
extern void *bigmem_alloc (size_t size, size_t align);
/* Give back p of bigmem_alloc (size, align); NULL is nothing. */
extern void bigmem_free (void *p, size_t size, size_t align);

#endif
