/* device.c: size and direct-I/O alignment of the served file.
 *
 * The logical block size bounds what O_DIRECT accepts.  A block device
 * says it with BLKSSZGET.  A regular file inherits its filesystem's rule,
 * which statx(STATX_DIOALIGN) reports on Linux >= 6.1; where that is not
 * available we assume 512, the smallest logical block there is.
 *
 * This file includes <linux/stat.h> for the statx fields glibc 2.36's
 * struct statx lacks, so it must not include <sys/stat.h> as well; the
 * file type comes from statx too.
 *
 * Threads: called by backing.c on nbdkit's main thread; it keeps no state.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <linux/fs.h>
#include <linux/stat.h>

#include "device.h"

#ifndef STATX_DIOALIGN
#define STATX_DIOALIGN 0x00002000U
#endif

int
device_probe (int fd, struct device_info *di)
{
  struct statx stx;

  memset (di, 0, sizeof *di);
  memset (&stx, 0, sizeof stx);
  if (syscall (SYS_statx, fd, "", AT_EMPTY_PATH,
               STATX_TYPE | STATX_SIZE | STATX_DIOALIGN, &stx) == -1)
    return -errno;
  di->is_blockdev = (stx.stx_mode & S_IFMT) == S_IFBLK;
  if (!di->is_blockdev && (stx.stx_mode & S_IFMT) != S_IFREG)
    return -EINVAL;
  di->offset_align = 512;
  di->mem_align = 512;
  if (di->is_blockdev) {
    int lbs;

    if (ioctl (fd, BLKGETSIZE64, &di->size) == -1)
      return -errno;
    if (ioctl (fd, BLKSSZGET, &lbs) == -1)
      return -errno;
    di->offset_align = (uint32_t) lbs;
  }
  else
    di->size = stx.stx_size;
  if ((stx.stx_mask & STATX_DIOALIGN) && stx.stx_dio_offset_align) {
    di->offset_align = stx.stx_dio_offset_align;
    di->mem_align = stx.stx_dio_mem_align;
  }
  if (di->mem_align < 1)
    di->mem_align = 1;
  if (di->offset_align < 512)
    di->offset_align = 512;
  /* Must be powers of two. */
  if (di->offset_align & (di->offset_align - 1) ||
      di->mem_align & (di->mem_align - 1))
    return -EINVAL;
  return 0;
}

int
device_rotational (unsigned major, unsigned minor)
{
  char path[128];
  FILE *f;
  int v = -1;

  snprintf (path, sizeof path, "/sys/dev/block/%u:%u/queue/rotational",
            major, minor);
  f = fopen (path, "re");
  if (!f) {
    snprintf (path, sizeof path, "/sys/dev/block/%u:%u/../queue/rotational",
              major, minor);
    f = fopen (path, "re");
  }
  if (f) {
    if (fscanf (f, "%d", &v) != 1)
      v = -1;
    fclose (f);
  }
  return v;
}
