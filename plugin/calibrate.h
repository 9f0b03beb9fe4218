/* calibrate.h: measuring the real device for its cost model (see
 * calibrate.c).  What the figures become is core's decision
 * (cost_calibrate, include/cost.h); where the model comes from and where
 * it is kept is costmodel.c's.
 *
 * Threads: nbdkit's main thread, in get_ready, before the dispatcher
 * starts and before any client is served.
 */
#ifndef CFQ_CALIBRATE_H
#define CFQ_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cost.h"

/* ns each figure is measured for (wall time, reads and writes alike):
 * six figures at most, so a calibration with writes ends within 10 s.
 */
#define CALIB_FIGURE_NS (1500 * 1000 * 1000ull)
/* ns at the start of each figure that are not counted (the queue filling,
 * the device waking). */
#define CALIB_WARMUP_NS (150 * 1000 * 1000ull)
/* bytes: the large sequential requests of the bps figures. */
#define CALIB_BIG (1u << 20)
/* bytes: the least allocated data that can be measured, in stretches of
 * at least CALIB_BIG. */
#define CALIB_MIN_DATA ((uint64_t) 64 << 20)

/* The device to measure. */
struct calib_dev {
  const char *path;             /* for messages */
  int fd;                       /* opened with O_DIRECT (read-write if
                                   writes are to be measured) */
  uint64_t size;                /* bytes */
  uint32_t align;               /* bytes: O_DIRECT offset alignment */
  size_t mem_align;             /* bytes: O_DIRECT buffer alignment */
  bool regular;                 /* a regular file: holes are looked for */
};

/* What a measurement found besides its figures. */
struct calib_note {
  uint64_t data;                /* bytes measured over: the allocated data
                                   in stretches of at least CALIB_BIG */
  uint64_t took;                /* ns the measurement took */
  bool writes;                  /* writes were measured */
};

/* Measure dev at depth requests in flight: 4 KiB random and sequential
 * reads and CALIB_BIG sequential reads, then with writes the same
 * writes, each block written back with what was just read from it.  0
 * with the figures in *ms, or -errno with WHY saying what went wrong.
 * Writes that fail leave the reads standing: 0, the write figures 0,
 * note->writes false and WHY saying why (what was written is what was
 * there).
 */
extern int calib_measure (const struct calib_dev *dev, unsigned depth,
                          bool writes, struct cost_measure *ms,
                          struct calib_note *note, char *why, size_t len);

#endif /* CFQ_CALIBRATE_H */
