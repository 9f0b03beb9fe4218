/* cost.h: what a request costs the device, in device time.
 *
 * Weights share a device between groups.  For the shares to hold between
 * tenants that do not look alike, a group must be charged for what its
 * requests cost the device, not for how many it sent (a 1 MiB read is
 * not a 4 KiB one) nor, on a device that works on many requests at once,
 * for the wall time its queue was served (which cannot tell its requests
 * from the others').  This is the one place that says what a request
 * costs.
 *
 * The model is blk-iocost's linear one, in its terms: six parameters
 * that anyone can measure with fio, for reads and for writes,
 *
 *   bps        bytes/s of large sequential transfers
 *   seqiops    4 KiB sequential requests per second
 *   randiops   4 KiB random requests per second
 *
 * all at a queue depth that keeps the device busy ("depth").  From them,
 * in device time per request,
 *
 *   page  = 4096 / bps                      per 4 KiB page moved
 *   seq   = 1 / seqiops  - page             per sequential request
 *   rand  = 1 / randiops - page             per random request
 *   cost  = (seq or rand) + pages * page
 *
 * (a negative base is 0).  Device time here is occupancy: the share of
 * the device's capacity a request uses, so that on a device kept busy the
 * costs of the requests completed in a second add up to a second.  On a
 * disk serving one request at a time that is its service time; on flash
 * with 16 channels, a sixteenth of it.
 *
 * A zero is a write of its length; a trim or a flush costs one random
 * write of no pages.  A request is sequential when it starts within
 * COST_SEQ_WINDOW of where its queue's previous request ended.
 *
 * Where the parameters come from is the mechanism's business: the device
 * model of emulate= gives them exactly (devmodel_cost_params), a real
 * device is measured at startup (the plugin's calibration), and the
 * config can name them (cost_model =).  cost_params_check is the one
 * sanity bound on all of them.
 *
 * Online correction.  A model measured once drifts as a device ages or
 * fills.  While the device is busy (at least "depth" requests at it, or
 * one on a device that serves one at a time), the predicted costs of the
 * requests that complete should add up to the time that passed.
 * cost_observe sums both over windows of COST_WINDOW of busy time and
 * moves a rate, vrate, toward their ratio, as blk-iocost's vrate; every
 * prediction is scaled by it.  The error of the last window (after
 * correction) is kept for the reports.  vrate stays within
 * [COST_VRATE_MIN, COST_VRATE_MAX] of the model: a model that far off is
 * the wrong model, and the reports say so.
 *
 * Pure policy: no clock, no syscalls, no allocation.  A struct
 * cost_model belongs to its scheduler and is touched by whoever holds it.
 */
#ifndef CFQ_COST_H
#define CFQ_COST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define COST_PAGE 4096u
#define COST_SEQ_WINDOW (64u * 1024)    /* bytes from the last end */

enum cost_dir { COST_READ = 0, COST_WRITE = 1 };

/* The model's parameters, as blk-iocost's io.cost.model names them. */
struct cost_params {
  uint64_t bps[2];              /* bytes/s: large sequential, [enum cost_dir] */
  uint64_t seqiops[2];          /* 4 KiB sequential requests/s */
  uint64_t randiops[2];         /* 4 KiB random requests/s */
  uint64_t depth;               /* requests at the device that keep it busy */
};

/* Sanity bounds of every parameter, whoever sets it: a calibration that
 * measures outside them measured something else (the page cache, a
 * stalled device), and a config naming such a value has a typo.
 */
#define COST_BPS_MIN (1000ull * 1000)                   /* 1 MB/s */
#define COST_BPS_MAX (1000ull * 1000 * 1000 * 1000)     /* 1 TB/s */
#define COST_IOPS_MIN 10ull
#define COST_IOPS_MAX 100000000ull
#define COST_DEPTH_MAX 4096ull

#define COST_WINDOW (250 * 1000 * 1000ull)     /* ns of busy time */
#define COST_VRATE_ONE 65536u                  /* vrate 1.0 */
#define COST_VRATE_MIN (COST_VRATE_ONE / 4)
#define COST_VRATE_MAX (COST_VRATE_ONE * 4)

struct cost_model {
  struct cost_params p;         /* what the model was built from */
  const char *source;           /* "device model", "calibration", "config",
                                   "default hdd", ...: a static string */
  uint64_t page_ps[2];          /* ps per 4 KiB page */
  uint64_t seq_ps[2];           /* ps per sequential request, beyond pages */
  uint64_t rand_ps[2];          /* ps per random request, beyond pages */
  uint64_t ref_ns;              /* ns: a 4 KiB random read, uncorrected:
                                   the unit of a request in IOPS mode */

  /* Online correction (cost_observe). */
  uint32_t vrate;               /* predictions x vrate / COST_VRATE_ONE */
  unsigned in_dev;              /* requests at the device */
  uint64_t last;                /* ns: last event seen */
  uint64_t busy_ns;             /* ns of busy time in this window */
  uint64_t pred_ns;             /* predicted ns completed while busy */
  uint64_t windows;             /* windows closed */
  int32_t error_ppm;            /* last window: predicted / busy - 1, ppm */
  uint32_t error_max_ppm;       /* largest |error| of the last 16 windows */
  uint32_t error_hist[16];      /* |error| ppm of the last 16 windows */
  uint64_t pred_total_ns;       /* predicted device time of every request
                                   completed (corrected) */
  uint64_t completed;           /* requests completed */
};

/* 0 if every parameter is within the bounds above, else -ERANGE and the
 * name of the first bad one in *bad (if bad is not NULL).
 */
extern int cost_params_check (const struct cost_params *p, const char **bad);

/* Build m from p (cost_params_check first: -ERANGE).  Resets the online
 * correction.  source is kept as a pointer.
 */
extern int cost_model_init (struct cost_model *m, const struct cost_params *p,
                            const char *source);

/* A generic model when nothing better is known: our device model's hdd
 * or ssd kind with its defaults.
 */
extern void cost_params_default (struct cost_params *p, bool rotational);

/* Parse "rbps=150M rseqiops=36000 ..." (spaces or commas between items;
 * rates in units.h's rate grammar, the others counts).  Every key must be
 * given.  0, or -EINVAL (*bad at the item) or -ERANGE (bounds; *bad at
 * the key).
 */
extern int cost_params_parse (const char *s, struct cost_params *p,
                              const char **bad);
/* The text cost_params_parse reads back (snprintf semantics). */
extern size_t cost_params_format (const struct cost_params *p, char *buf,
                                  size_t size);
/* Names of the keys, in the order the formatter writes them. */
extern const char *const cost_param_names[];

/* Device time of one request, in ns, corrected by vrate.  op is an enum
 * rq_op; seq: it starts within COST_SEQ_WINDOW of its queue's last end.
 */
extern uint64_t cost_rq (const struct cost_model *m, unsigned op,
                         uint32_t len, bool seq);
/* The same, uncorrected. */
extern uint64_t cost_rq_raw (const struct cost_model *m, unsigned op,
                             uint32_t len, bool seq);

/* Online correction: call at every dispatch (delta +1) and completion
 * (delta -1, with the request's cost_rq_raw as raw_ns) at time now.
 */
extern void cost_observe (struct cost_model *m, uint64_t now, int delta,
                          uint64_t raw_ns);

/* Startup calibration.  The mechanism measures the device (4 KiB random
 * and sequential requests and large sequential transfers at "depth"
 * requests in flight, reads, and writes where it may write) and hands the
 * figures here; this decides what the model becomes.  A figure outside
 * the bounds (cost_params_check) means the measurement saw something
 * other than the device, and the whole measurement is refused: out is the
 * fallback (the last valid calibration, or a default) and why says which
 * figure.  Writes not measured are taken from the fallback.  Returns 0
 * (measured), 1 (fell back).
 */
struct cost_measure {
  double bps[2];                /* bytes/s; [COST_WRITE] 0: not measured */
  double seqiops[2];            /* requests/s */
  double randiops[2];           /* requests/s */
  unsigned depth;               /* requests in flight while measured */
};
extern int cost_calibrate (const struct cost_measure *ms,
                           const struct cost_params *fallback,
                           struct cost_params *out, char *why, size_t len);

/* Predicted 4 KiB random read and write IOPS and sequential read bytes/s
 * of the corrected model, for reports and the calibration's check.
 */
extern double cost_model_iops (const struct cost_model *m, enum cost_dir d,
                               bool seq);
extern double cost_model_bps (const struct cost_model *m, enum cost_dir d);

#endif /* CFQ_COST_H */
