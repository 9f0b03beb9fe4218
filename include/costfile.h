/* costfile.h: the cost model saved by a calibration ([device]
 * calibration = FILE), read back at the next start.
 *
 * A calibration measures one device (include/cost.h); what it measured
 * is worth keeping only for that device.  So the file names the device
 * the figures belong to (a regular file by its file system's device, its
 * inode and size; a block device by its number and size), when it was
 * measured, how long that took and whether writes were measured.  The
 * text is small, line by line, "key = value", and every key is required:
 *
 *   # nbdkit-cfq calibration: ...
 *   version = 1
 *   device = file 254:0 inode 1234567 size 4294967296
 *   date = 2025-01-02T03:04:05Z
 *   took = 4612ms
 *   calibrate = read
 *   model = rbps=... rseqiops=... rrandiops=... wbps=... wseqiops=...
 *           wrandiops=... depth=1                       (one line)
 *
 * "calibrate = read": the write figures are not measured ones (they are
 * the fallback's); "write": both were measured.  The model is
 * cost_params_parse's text, so its bounds are cost_params_check's.
 *
 * Pure: no I/O, no clock; the mechanism reads and writes the file.
 */
#ifndef CFQ_COSTFILE_H
#define CFQ_COSTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"

#define COST_FILE_VERSION 1

/* What a device is, for "was this measured on the same one". */
struct cost_ident {
  bool blockdev;                /* a block device (else a regular file) */
  unsigned major, minor;        /* the block device's number, or the
                                   device of the file's file system */
  uint64_t ino;                 /* the file's inode; 0 for a block device */
  uint64_t size;                /* bytes */
};

struct cost_saved {
  struct cost_params p;         /* the model */
  struct cost_ident id;         /* the device it was measured on */
  int64_t date;                 /* s since the epoch (UTC): when measured */
  uint64_t took;                /* ns the measurement took */
  bool writes;                  /* writes were measured too */
};

/* Parse LEN bytes of TEXT.  0, or -EINVAL (malformed: WHY says at which
 * line and what) or -ERANGE (a model figure outside cost_params_check's
 * bounds: WHY names it).  *s is written only on success.
 */
extern int cost_file_parse (const char *text, size_t len,
                            struct cost_saved *s, char *why, size_t wlen);

/* The text cost_file_parse reads back (snprintf semantics). */
extern size_t cost_file_format (const struct cost_saved *s, char *buf,
                                size_t size);

/* Is a the device b is? */
extern bool cost_ident_same (const struct cost_ident *a,
                             const struct cost_ident *b);

/* "file 254:0 inode 1234567 size 4294967296": the device= value. */
extern size_t cost_ident_format (const struct cost_ident *id, char *buf,
                                 size_t size);

/* "2025-01-02T03:04:05Z" for DATE (s since the epoch, UTC). */
extern char *cost_date_format (int64_t date, char *buf, size_t size);

#endif /* CFQ_COSTFILE_H */
