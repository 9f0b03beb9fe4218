/* devmodel.h: device models, for the simulator and the emulation mode.
 *
 * A device model answers one question: a request submitted at time "now",
 * when does it complete?  It is pure policy like the schedulers: no
 * syscalls, no clock reads, no allocation after devmodel_new().  Its only
 * randomness (the rotational delay of the disk) comes from its own PRNG
 * seeded by the "seed" parameter, so the same submissions in the same order
 * give the same completion times.
 *
 * Two models:
 *   hdd  one head, requests served one at a time in submission order.
 *        service = positioning + len / rate, where positioning is
 *          0                          if the request starts where the last
 *                                     one ended (sequential; the drive's
 *                                     track buffer hides the rotation),
 *          gap / rate                 for a short forward skip (<= near):
 *                                     the head waits for the platter,
 *          seek(d) + U[0, rev)        otherwise: seek(d) = seek_min +
 *                                     (seek_max - seek_min) * sqrt(d/capacity)
 *                                     plus a random rotational delay.
 *        Defaults: 7200 rpm, 1 ms settle, 15 ms full stroke (8.5 ms mean
 *        seek over uniform random offsets), 150 MB/s, 1 TiB.
 *   ssd  N channels working in parallel; a request takes the channel that
 *        is free earliest and holds it for latency + len / (bw / N).
 *        Defaults: 16 channels, 80 us read, 20 us write, 2000 MB/s total, 512 GiB.
 *
 * Flush waits for every write submitted before it and then costs "flush";
 * trim costs "trim" (no data moves); zero is a write of len on the disk,
 * and on the SSD a trim when RQ_MAYTRIM is set (the FTL unmaps) or a write
 * otherwise.
 *
 * Parameters are set by name with a string value in the grammar of
 * include/units.h ("rpm=5400", "seek_max=20ms", "rate=120M" (bytes/s,
 * powers of 1000), "capacity=2T", "channels=8"; a bare time is in ns);
 * they can be changed only before the first submission.
 *
 * Threading: a struct devmodel belongs to one thread (the simulator's loop
 * or the plugin's dispatcher).  Errors are returned as -errno.
 */
#ifndef CFQ_DEVMODEL_H
#define CFQ_DEVMODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

#define DEVMODEL_MAX_CHANNELS 256

struct devmodel;

/* Create a model of kind "hdd" or "ssd" with default parameters.
 * Returns NULL for an unknown kind (*err = -EINVAL) or ENOMEM (-ENOMEM).
 */
extern struct devmodel *devmodel_new (const char *kind, int *err);
extern void devmodel_free (struct devmodel *dm);

/* Set one parameter.  -ENOENT unknown key, -EINVAL unparsable value,
 * -ERANGE out of range, -EBUSY after the first submission.
 */
extern int devmodel_set (struct devmodel *dm, const char *key,
                         const char *val);

/* Set "key=value[,key=value...]" (also accepts spaces as separators).
 * On error *bad (if not NULL) points at the offending item in s.
 */
extern int devmodel_parse (struct devmodel *dm, const char *s,
                           const char **bad);

/* Write "kind key=value ..." with every parameter into buf (snprintf
 * semantics: returns the length it needed).
 */
extern size_t devmodel_describe (const struct devmodel *dm, char *buf,
                                 size_t size);

/* Names of the parameters of this model, NULL-terminated. */
extern const char *const *devmodel_params (const struct devmodel *dm);

extern const char *devmodel_kind (const struct devmodel *dm);
extern bool devmodel_rotational (const struct devmodel *dm);
extern uint64_t devmodel_capacity (const struct devmodel *dm);

/* Submit rq at time now (ns); returns its completion time (ns, >= now).
 * Only rq->off, len, op and flags are read.
 */
extern uint64_t devmodel_submit (struct devmodel *dm, const struct rq *rq,
                                 uint64_t now);

/* Forget all state (head position, busy channels, PRNG) as if new, keeping
 * the parameters.
 */
extern void devmodel_reset (struct devmodel *dm);

#endif /* CFQ_DEVMODEL_H */
