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

#endif /* CFQ_DEVICE_H */
