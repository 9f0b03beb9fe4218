/* devmodel.h: device models, for the simulator and the emulation mode.
 *
 * A device model answers one question: requests submitted at given times,
 * which completes next, and when?  It is pure policy like the schedulers:
 * no syscalls, no clock reads, no allocation after devmodel_new().  Its
 * only randomness (the rotational position of the disk) comes from its own
 * PRNG seeded by the "seed" parameter, so the same submissions at the same
 * times give the same completions at the same times.
 *
 * The interface is a queue, because a disk with command queueing decides
 * the order itself, and when it decides depends on what arrives later:
 *
 *   devmodel_submit (dm, rq, now)       rq is at the device from now on
 *   t = devmodel_next (dm)              the next completion's time (or
 *                                       SCHED_NEVER); may move earlier
 *                                       after a submit, so ask again
 *   rq = devmodel_complete (dm, now, &t) the next request done by now, in
 *                                       the device's order, or NULL
 *
 * "now" never goes backwards (an earlier value counts as the latest one).
 * A user runs complete until NULL whenever its clock reaches next.
 *
 * Two models:
 *   hdd  one head, requests served one at a time: in submission order, or
 *        with NCQ ("ncq" = N > 1) the one among the first N with the
 *        shortest positioning time when the head frees (a flush or trim
 *        waits for everything before it, and holds back what follows).
 *        service = positioning + len / rate, where positioning is
 *          0                          if the request starts where the last
 *                                     one ended (sequential; the drive's
 *                                     track buffer hides the rotation),
 *          gap / rate                 for a short forward skip (<= near):
 *                                     the head waits for the platter,
 *          seek(d) + rotation         otherwise: seek(d) = seek_min +
 *                                     (seek_max - seek_min) * sqrt(d/capacity)
 *                                     plus a rotational delay, U[0, rev):
 *                                     drawn at service without NCQ; with it,
 *                                     each request's sector has a random
 *                                     angle and the platter turns with time.
 *        Defaults: 7200 rpm, 1 ms settle, 15 ms full stroke (8.5 ms mean
 *        seek over uniform random offsets), 150 MB/s, 1 TiB, no NCQ.
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
#define DEVMODEL_MAX_NCQ 256            /* SATA NCQ: 32; SAS TCQ: more */
#define DEVMODEL_MAX_QUEUE 4096         /* requests at the device at once */

struct devmodel;

/* The named devices: the two kinds with their defaults ("hdd", "ssd"),
 * then presets, each a kind with parameters on top (devmodel_parse
 * syntax).  Terminated by a NULL name.
 */
struct devmodel_preset {
  const char *name;             /* what emulate= and cfqsim's model= take */
  const char *kind;             /* "hdd" or "ssd" */
  const char *params;           /* on top of the kind's defaults */
  const char *about;            /* one line: the device it stands for */
  /* The published figures the parameters are fitted to (0: none), for
   * test-devmodel and bench/presets.sh: sequential read (MB/s, large
   * reads at depth 32) and 4 KiB random reads over the whole device
   * (IOPS at a queue depth), and where each figure comes from.
   */
  double seq_mbs;
  struct { unsigned depth; double iops; } rand[2];
  const char *source;
};
extern const struct devmodel_preset devmodel_presets[];

/* The entry for name, or NULL. */
extern const struct devmodel_preset *devmodel_preset (const char *name);

/* Every name, "hdd<sep>ssd<sep>...<last>nvme" (snprintf semantics). */
extern size_t devmodel_names (char *buf, size_t size, const char *sep,
                              const char *last);

/* Create the model of a kind or preset (devmodel_presets).  Returns NULL
 * for an unknown name (*err = -EINVAL) or ENOMEM (-ENOMEM).
 */
extern struct devmodel *devmodel_new (const char *name, int *err);
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

/* The two kinds, "hdd" and "ssd", NULL-terminated: the one list. */
extern const char *const devmodel_kinds[];
extern const char *devmodel_kind (const struct devmodel *dm); /* a kind */
extern const char *devmodel_name (const struct devmodel *dm); /* or preset */
extern bool devmodel_rotational (const struct devmodel *dm);
extern uint64_t devmodel_capacity (const struct devmodel *dm);

/* rq arrives at the device at time now (ns).  rq->off, len, op and flags
 * are read now; the pointer is handed back by devmodel_complete.  0, or
 * -ENOSPC with DEVMODEL_MAX_QUEUE requests at the device already.
 */
extern int devmodel_submit (struct devmodel *dm, struct rq *rq, uint64_t now);

/* When the next request completes (ns), SCHED_NEVER if none is at the
 * device.  Only a submit or complete call changes it.
 */
extern uint64_t devmodel_next (const struct devmodel *dm);

/* The next request to complete by now, removed from the device, with its
 * completion time in *when (if not NULL); NULL if none is done by now.
 * Requests completing at the same time come in submission order.
 */
extern struct rq *devmodel_complete (struct devmodel *dm, uint64_t now,
                                     uint64_t *when);

/* Requests at the device: submitted, not yet handed back. */
extern unsigned devmodel_queued (const struct devmodel *dm);

/* The cost model's parameters (include/cost.h) of this device, over
 * random offsets spread on its first span bytes (0: the whole capacity):
 * worked out from the parameters where the service time has a closed form,
 * measured on a copy of the model in virtual time where the device
 * reorders (a disk with NCQ).  Allocates (the copy): a setup call.  0 or
 * -ENOMEM.
 */
struct cost_params;
extern int devmodel_cost_params (const struct devmodel *dm, uint64_t span,
                                 struct cost_params *p);

/* Forget all state (head position, busy channels, queued requests, PRNG)
 * as if new, keeping the parameters.
 */
extern void devmodel_reset (struct devmodel *dm);

#endif /* CFQ_DEVMODEL_H */
