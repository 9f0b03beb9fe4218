/* backing.h: the files we serve: the device (file=), and the files of
 * exports that have one of their own (file= in [export NAME]).
 *
 * Each is opened twice: FILE_DIRECT with O_DIRECT (buffered if the
 * filesystem refuses it, or with cache=page) and FILE_BUFFERED without, as engine file slots
 * slot + FILE_DIRECT and slot + FILE_BUFFERED.  An RBD image (backend=rbd)
 * takes the two slots too, but has no descriptors: it is served like a
 * buffered file (no alignment, no extents), by the rbd backend (rbd.h).
 *
 * Threads: bk_probe, bk_open_all and bk_close_all run on nbdkit's main
 * thread (config_complete, get_ready, cleanup); in between every struct
 * backing is read-only and read by every thread.  Errors are reported
 * with nbdkit_error; functions return 0 or -1.
 */
#ifndef CFQ_BACKING_H
#define CFQ_BACKING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "config.h"
#include "device.h"
#include "engine.h"
#include "rangelock.h"

struct nbdkit_extents;

/* What the data path (io.c) changes of a file, one per file: two
 * exports' requests meet here only if they are on the same file.
 */
struct bk_shared {
  struct rangelock rl;                  /* the file's write range lock */
  uint64_t wb_errors;                   /* atomic: failed flushes and writes
                                           that may stand for lost
                                           write-back (io.c) */
  uint64_t wb_own;                      /* atomic: failed flushes of the
                                           connections' own descriptors */
  int reopen_warned;                    /* atomic: said why a connection
                                           cannot open the file again */
  /* Ways to trim and zero that the kernel may refuse for this file's
   * filesystem or device (EOPNOTSUPP ...): 1 until refused once, then 0
   * for good (atomic; io.c).  Per file: another file's filesystem may
   * have them.
   */
  int can_punch;                        /* fallocate PUNCH_HOLE */
  int can_zero_range;                   /* fallocate ZERO_RANGE */
  int can_discard;                      /* BLKDISCARD */
};

struct backing {
  const char *path;                     /* absolute, or an RBD image's
                                           "rbd:POOL/IMAGE"; NULL: not a
                                           file */
  bool rbd;                             /* an RBD image (rbd.h): no fds,
                                           the backend's slot */
  int fds[FILE_NR];                     /* -1 if not open */
  unsigned slot;                        /* engine slot of fds[0] */
  bool direct;                          /* fds[FILE_DIRECT] is O_DIRECT: false
                                           with cache=page or where refused */
  bool writable;                        /* opened read-write */
  bool seek_data;                       /* lseek SEEK_DATA/SEEK_HOLE work */
  struct device_info dev;
  uint32_t bs;                          /* bytes: O_DIRECT offset alignment */
  struct bk_shared *shared;             /* while open; NULL otherwise */
};

/* Before the model is built: make *path absolute (nbdkit changes to /
 * when it daemonizes), check it is a regular file or a block device, and
 * learn its size and the device it lives on (st_dev, or st_rdev for a
 * block device: where sysfs has its rotational flag).
 */
extern int bk_probe (char **path, uint64_t *size, dev_t *st_dev);

/* Open the device at path and every export's own file in m. */
extern int bk_open_all (const char *path, const struct cfg_model *m);
extern void bk_close_all (void);
/* Forget the per-export table (nbdkit's unload). */
extern void bk_unload (void);

/* The device, and the file export i reads and writes. */
extern const struct backing *bk_main (void);
extern const struct backing *bk_export (size_t i);
/* Bytes: the alignment every buffer given to FILE_DIRECT needs. */
extern size_t bk_buf_align (void);
/* What file b is, whatever its name (backing.c). */
extern int bk_identity (const struct backing *b, dev_t *dev, ino_t *ino);
/* Put every open file into the engine's slots (cfg->fds, cfg->nr_fds). */
extern void bk_engine_fds (struct engine_cfg *cfg);

/* Holes and data of [base + offset, base + offset + count) of b, where
 * an export is [base, base + size) of it; extents relative to base.
 */
extern int bk_extents (const struct backing *b, uint64_t base, uint64_t size,
                       uint32_t count, uint64_t offset,
                       struct nbdkit_extents *extents);

#endif /* CFQ_BACKING_H */
