/* gqos.h: a group's caps and reservation held across servers.
 *
 * Several servers (gateways) in front of the same storage serve one
 * tenant; its iops_max and iops_min are meant for the sum.  Each server
 * publishes its group's lifetime counts (struct qos_counts: what its
 * scheduler dispatched, and how much of it for the reservation) with a
 * sequence number, and reads the others'.  This file is the policy of
 * that exchange, with no I/O: what the others served since the last
 * exchange is the charge (qos_charge: dmClock's delta for the caps, rho
 * for the reservation), which peers are alive, and what a server does
 * when the exchange fails.  The mechanism (plugin/gqos.c) moves the
 * records through RADOS; core/gqos.c has the reasoning.
 *
 * Threading: like struct sched, one thread at a time (the dispatcher).
 */
#ifndef CFQ_GQOS_H
#define CFQ_GQOS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "qos.h"
#include "setting.h"
#include "statfield.h"

#define GQOS_NAME_MAX 64        /* bytes of a server's name, with the NUL */
#define GQOS_PEERS_MAX 32       /* servers one group's record may list */
#define GQOS_RECORD_MAX 160     /* bytes of one encoded record, with NUL */

/* ---- the server-wide settings: one table (setting.h) ------------------- */

enum gqos_key_id {
  GQOS_K_CONF,                  /* ceph.conf: turns the exchange on */
  GQOS_K_POOL,                  /* RADOS pool of the records */
  GQOS_K_ID,                    /* RADOS client id */
  GQOS_K_GATEWAY,               /* this server's name in the records */
  GQOS_K_PERIOD,                /* ns between exchanges */
  GQOS_K_EXPIRY,                /* ns: a silent peer counts as gone */
  GQOS_NR_KEYS,
};

extern const struct setting gqos_keys[GQOS_NR_KEYS];

/* The settings, parsed. */
struct gqos_conf {
  char *text[GQOS_NR_KEYS];     /* SETTING_TEXT values (malloc'd) or NULL */
  uint64_t ns[GQOS_NR_KEYS];    /* SETTING_TIME values, ns */
};

/* The key named NAME, or -1. */
extern int gqos_key_lookup (const char *name);
/* Set key K from VALUE: 0, -EINVAL (reason in WHY) or -ENOMEM. */
extern int gqos_conf_set (struct gqos_conf *c, int k, const char *value,
                          char *why, size_t len);
/* Fill in the defaults not given and check the whole: 0 or -EINVAL with
 * the reason in WHY.
 */
extern int gqos_conf_finish (struct gqos_conf *c, char *why, size_t len);
extern void gqos_conf_free (struct gqos_conf *c);

/* ---- records ------------------------------------------------------------ */

/* A server's record of one group: a sequence number it bumps at every
 * exchange, the time on its own clock (ns since it started: only
 * differences of one server's times are used, never compared across
 * servers) and its counts.  Text, so that rados listomapvals shows it:
 * "1 SEQ T IOS_R IOS_W BYTES_R BYTES_W RES_IOS RES_BYTES HELD".
 */
struct gqos_record {
  uint64_t seq;                 /* bumped at every exchange */
  uint64_t t_ns;                /* ns on the writer's clock */
  struct qos_counts c;          /* its lifetime counts */
};

extern int gqos_encode (const struct gqos_record *r, char *buf, size_t len);
/* 0, or -EINVAL for a record not of this form. */
extern int gqos_decode (const char *buf, size_t len, struct gqos_record *r);

/* ---- one group's view of the others ------------------------------------- */

struct gqos_peer {
  char name[GQOS_NAME_MAX];     /* the server's name (its key) */
  struct gqos_record seen;      /* its record, last seen */
  struct qos_counts last;       /* what it served between its last two
                                   records seen */
  uint64_t interval;            /* ns (its clock) between those records */
  uint64_t changed_at;          /* ns (local clock): its seq last moved */
  bool alive;                   /* seq moved within the expiry */
};

struct gqos_group {
  uint64_t expiry_ns;           /* ns: a peer silent this long is gone */
  struct gqos_peer peer[GQOS_PEERS_MAX];
  unsigned nr_peers;            /* of peer[] in use */
  uint64_t last_ok;             /* ns: the last exchange that worked;
                                   0: none yet */
  unsigned servers;             /* servers alive at the last exchange that
                                   worked, this one included (>= 1) */
  bool fallback;                /* the exchange failed for the expiry:
                                   shares are 1 / servers */
  uint64_t fallbacks;           /* times it fell back */
  uint64_t exchanges;           /* exchanges that worked */
  uint64_t failures;            /* exchanges that failed */
  struct qos_counts remote;     /* the peers' service seen, in all */
  uint32_t share_ppm[QOS_NR_CAPS]; /* the shares last computed */
};

extern void gqos_group_init (struct gqos_group *g, uint64_t expiry_ns);

/* One peer's record NAME = R read at NOW: add what it served since it was
 * last seen to *CHARGE, and keep its rate.  A peer seen for the first
 * time, back after the expiry, or with counts that went backwards (it
 * restarted) is taken as it is, with nothing charged.
 */
extern void gqos_peer_seen (struct gqos_group *g, const char *name,
                            const struct gqos_record *r, uint64_t now,
                            struct qos_counts *charge);

/* An exchange ended at NOW: OK if the records were read (the peers given
 * to gqos_peer_seen first).  Updates who is alive.  Returns true when
 * the group just came back from a fallback.
 */
extern bool gqos_exchange_done (struct gqos_group *g, bool ok, uint64_t now);

/* Every period, with the group's settings C, at NOW:
 * this server's share of each cap into SHARE_PPM (QOS_SHARE_WHOLE when it
 * has no cap).  Max-min fair by demand: peers that served less than an
 * equal split without being held keep what they served, the rest is
 * split equally between this server and the peers its caps held.  After
 * the expiry without an exchange that worked, falls back to 1 / servers
 * alive at the last one (returns true the first time, to be logged).
 */
extern bool gqos_shares (struct gqos_group *g, const struct qos_conf *c,
                         uint64_t now, uint32_t *share_ppm);

/* Peers alive now (this server not counted). */
extern unsigned gqos_alive (const struct gqos_group *g);

/* The statistics of a group whose limits are global: one table "gqos"
 * (the peers' service seen, peers alive, the last exchange's age, the
 * share of iops_max, the fallback).
 */
extern void gqos_group_stats (const struct gqos_group *g, uint64_t now,
                              stat_emit_fn *emit, void *opaque);

#endif /* CFQ_GQOS_H */
