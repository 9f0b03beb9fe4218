/* device.h: what the plugin needs to know about the file it serves. */
#ifndef CFQ_DEVICE_H
#define CFQ_DEVICE_H

#include <stdbool.h>
#include <stdint.h>

struct device_info {
  bool is_blockdev;             /* S_ISBLK */
  uint64_t size;                /* bytes: st_size or BLKGETSIZE64 */
  uint32_t offset_align;        /* bytes: O_DIRECT offset/length alignment */
  uint32_t mem_align;           /* bytes: O_DIRECT buffer address alignment */
};

/* Probe fd (opened on path).  Returns 0 or -errno. */
extern int device_probe (int fd, struct device_info *di);

/* Whether the block device MAJOR:MINOR seeks, from sysfs's
 * queue/rotational (its parent's for a partition): 1, 0, or -1 if sysfs
 * has no answer (a file on tmpfs, overlay ...).  For a regular file pass
 * the device of its file system.  Also used by tools/cfqconf.
 */
extern int device_rotational (unsigned major, unsigned minor);

#endif /* CFQ_DEVICE_H */
