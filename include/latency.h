/* latency.h: a group's latency target and its start-up boost: the
 * settings, their key table, and the rules' constants.
 *
 * Two ideas, acting through what a group is charged (its vdisktime) and
 * how long its turns are, never by clamping the others to one request at
 * the device (save the binary mode, kept for comparison):
 *  - latency_target: the group's completion latency at a percentile,
 *    measured per window; while it misses, every group's turn is cut on a
 *    disk (its share of target_latency, and quantum), then, with the
 *    turns at their floor or on flash, the other groups' effective
 *    weights are lowered in proportion to the miss; the weights are
 *    restored first when it is met (core/cfq-latency.c has the essay);
 *  - boost: a connection that is new, or busy again after idling, is
 *    charged a fraction of its service for a while, unless it came in a
 *    burst of new connections or its group spent its allowance.
 *
 * The settings are parsed in one place (cfg_parse_latency in
 * include/config.h), by the unit the key table gives, for the config
 * file, the control socket and cfqsim alike.
 *
 * Threading: the table is constant; a struct lat_conf belongs to whoever
 * holds it.
 */
#ifndef CFQ_LATENCY_H
#define CFQ_LATENCY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sched.h"

enum lat_mode {
  LAT_MODE_GRADED = 0,          /* the others' effective weights, graded */
  LAT_MODE_BINARY = 1,          /* the others' depth clamped to 1 while it
                                   misses (the kernel's io.latency) */
};

/* One group's settings.  target 0: no target; the rest still hold. */
struct lat_conf {
  uint64_t target;              /* ns: latency_target; 0 = none */
  unsigned percentile;          /* 90, 95 or 99: latency_percentile */
  unsigned mode;                /* enum lat_mode: latency_mode */
  unsigned boost;               /* 1: boost = on, 0: off */
};

#define LAT_PERCENTILE_DEFAULT 95
/* The boost is off unless asked for: on for every group, it moves the
 * groups' shares the fairness scenarios measure on cfqsim's disk (by up
 * to 0.41 in the 3 s matrix runs, 0.09 in join-leave; doc/design.md,
 * "Latency targets and the start-up boost").
 */
#define LAT_BOOST_DEFAULT 0

/* ---- the key table ------------------------------------------------------ */

enum lat_unit {
  LAT_U_TIME,                   /* a time with its unit, kept in ns */
  LAT_U_CHOICE,                 /* one of the key's names */
  LAT_U_BOOL,                   /* units.h's booleans */
};

struct lat_key {
  const char *name;             /* "latency_target", ... */
  enum lat_unit unit;           /* how a value is written and kept: ns,
                                   a choice's value, or 0/1 */
  uint64_t min, max;            /* LAT_U_TIME: accepted range unless 0 */
  const char *const *names;     /* LAT_U_CHOICE: the names, NULL-ended */
  const unsigned *values;       /* LAT_U_CHOICE: the value of each name */
  const char *help;             /* one line */
};

#define LAT_NR_KEYS 4
extern const struct lat_key lat_keys[LAT_NR_KEYS];
extern const size_t lat_nr_keys;

/* A conf with the defaults: no target, percentile 95, graded, boost as
 * LAT_BOOST_DEFAULT.
 */
extern void lat_conf_init (struct lat_conf *c);
/* NULL if NAME is not a latency key. */
extern const struct lat_key *lat_key_lookup (const char *name);
/* A key's value in a conf (ns for LAT_U_TIME, else the value). */
extern uint64_t lat_conf_get (const struct lat_conf *c,
                              const struct lat_key *k);
/* -ERANGE if VAL is not one the key takes. */
extern int lat_conf_set (struct lat_conf *c, const struct lat_key *k,
                         uint64_t val);
/* The value written as the config takes it ("5ms", "99", "binary"). */
extern char *lat_format (const struct lat_key *k, uint64_t val, char *buf,
                         size_t len);
/* Does every key take C's value (the check lat_conf_set makes, for a
 * whole conf)?
 */
extern bool lat_conf_valid (const struct lat_conf *c);
/* Is C the defaults (nothing to tell a scheduler)? */
extern bool lat_conf_default (const struct lat_conf *c);

/* ---- the rules' constants (core/cfq-latency.c says why) ------------------ */

#define LAT_TARGET_MIN (100 * NSEC_PER_USEC)    /* ns */
#define LAT_TARGET_MAX (10 * NSEC_PER_SEC)      /* ns */
#define LAT_WINDOW NSEC_PER_SEC /* ns: a window of measurement */
#define LAT_MIN_SAMPLES 10      /* completions a window needs for a verdict */
#define LAT_SCALE_ONE 1000      /* effective weight: permille of the set one */
#define LAT_SCALE_FLOOR 100     /* never below 1/10 of the set weight */
#define LAT_AIM 850             /* permille of the target the controller
                                   aims at, so that a window's noise stays
                                   under the target */
#define LAT_MET_HEADROOM 700    /* permille of the target: below it, met
                                   with room, the others are restored */
#define LAT_RESTORE_STEP 8      /* restored by 1/8 of their scale a window */
#define LAT_TURN_FLOOR 375      /* permille: turns are cut to 3/8 at most
                                   (target_latency 112 ms, quantum 3 at
                                   the defaults) */
#define LAT_UNMET_WINDOWS 3     /* missed windows with the others at the
                                   floor before a target is called unmet */

#define LAT_BOOST_IDLE (2 * NSEC_PER_SEC)       /* ns idle: boosted again */
#define LAT_BOOST_TIME (5 * NSEC_PER_SEC)       /* ns a boost lasts */
#define LAT_BOOST_FACTOR 30     /* a boosted queue's charge is divided so */
#define LAT_BURST_GAP (180 * NSEC_PER_MSEC)     /* ns between new queues
                                                   of one burst */
#define LAT_BURST_MIN 4         /* new queues that make a burst */
/* The allowance: service forgiven by boosts (charge units: ns of device
 * time in time mode, IOPS units otherwise), at most LAT_ALLOW_MAX held,
 * refilled at LAT_ALLOW_MAX per LAT_ALLOW_PERIOD while the group is off the
 * service tree (asks for nothing).
 */
#define LAT_ALLOW_MAX (2 * NSEC_PER_SEC)
#define LAT_ALLOW_PERIOD (60 * NSEC_PER_SEC)

#endif /* CFQ_LATENCY_H */
