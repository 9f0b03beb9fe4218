/* config.h: the configuration model (config=FILE plus key=value overrides).
 *
 * The plugin reads the file into memory and hands the text over; core/
 * parses it (with libinih), checks every value as it goes, applies the
 * command-line overrides on top, and once the device is open and its size
 * known, cfg_validate() checks what only the whole picture can show
 * (overlapping exports, regions past the end, missing groups) and builds the
 * model below.  Nothing here does I/O or reads a clock.
 *
 * A scenario for the simulator and the fairness lab is the same file with
 * [tenant NAME] sections (workloads, struct cfg_tenant), [event NAME]
 * sections (control commands at set times, struct cfg_event) and a [sim]
 * section; the server checks them and ignores them.
 *
 * Use:
 *
 *   struct cfg *cfg = cfg_new (report, opaque);   // report may be NULL
 *   cfg_parse (cfg, "tenants.conf", text, len);   // at most once, optional
 *   cfg_set_override (cfg, "slice_idle", "0");    // any number, any order
 *   path = cfg_device_file (cfg);                 // open it, get its size
 *   if (cfg_validate (cfg, size) == 0)
 *     model = cfg_model (cfg);                    // read-only until cfg_free
 *   cfg_free (cfg);
 *
 * Every error is a line "FILE:LINE: what is wrong" ("FILE: ..." when no one
 * line is at fault, "command line: ..." for overrides).  All errors are
 * collected, not just the first: each is passed to the report callback as
 * it is found and kept for cfg_error().  Functions return 0, -EINVAL when
 * the configuration has errors, -ENOMEM, and never set errno.
 *
 * Threading: a struct cfg belongs to whoever created it.  Once validated,
 * the model is immutable and may be read from any thread.
 */
#ifndef CFQ_CONFIG_H
#define CFQ_CONFIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "cfq.h"
#include "cost.h"
#include "latency.h"
#include "qos.h"
#include "sched.h"

#define CFG_ALIGN 4096                  /* bytes: export offset/size unit */
#define CFG_MAX_CONNECTIONS_DEFAULT 1024 /* client connections at once */
#define CFG_MAX_CONNECTIONS_MAX 1000000
/* Bytes: the largest read or write the server takes (advertised to
 * clients as NBD's maximum block size, and enforced).
 */
#define CFG_MAX_REQUEST (32u << 20)
/* [device] buffer_pool: bytes the server's aligned request buffers may
 * take at once.  The least is the largest request's span, rounded out to
 * blocks of up to 512 KiB on both sides.
 */
#define CFG_BUFFER_POOL_DEFAULT ((uint64_t) 256 << 20)
#define CFG_BUFFER_POOL_MIN ((uint64_t) CFG_MAX_REQUEST + (1u << 20))
#define CFG_BUFFER_POOL_MAX ((uint64_t) 64 << 30)
/* [device] memory: the most the server may take, whatever its clients do.
 * Its parts (cfg_memory_parts):
 *   buffer_pool
 *   + max_connections x CFG_MEMORY_CONN   (a connection: nbdkit's worker
 *                                          threads and structures, ours)
 *   + CFG_MEMORY_BASE                     (the process: code, libraries,
 *                                          the dispatcher, the ring)
 *   + request buffers: the rest, nbdkit's buffers for requests being
 *     received or answered; at least CFG_MEMORY_REQ_MIN.
 */
#define CFG_MEMORY_DEFAULT ((uint64_t) 2 << 30)
#define CFG_MEMORY_MAX ((uint64_t) 1 << 50)
#define CFG_MEMORY_CONN ((uint64_t) 256 << 10)
#define CFG_MEMORY_BASE ((uint64_t) 64 << 20)
#define CFG_MEMORY_REQ_MIN ((uint64_t) 2 * CFG_MAX_REQUEST)
/* [device] reply_timeout: a client that takes none of a reply for this
 * long is cut off; 0 turns it off.
 */
#define CFG_REPLY_TIMEOUT_DEFAULT ((uint64_t) 60 * 1000000000)
#define CFG_REPLY_TIMEOUT_MIN ((uint64_t) 1000000000)
#define CFG_REPLY_TIMEOUT_MAX ((uint64_t) 3600 * 1000000000)
#define CFG_DEFAULT_GROUP "default"     /* exports with no group= join it */
#define CFG_DEFAULT_SCHEDULER "cfq"

/* The memory budget of a model, part by part (bytes). */
struct cfg_memory {
  uint64_t pool;                /* buffer_pool */
  uint64_t conns;               /* max_connections x CFG_MEMORY_CONN */
  uint64_t base;                /* CFG_MEMORY_BASE */
  uint64_t requests;            /* what is left for nbdkit's request buffers;
                                   0 if the others take it all */
};

/* A device-model parameter, "model.KEY = VALUE" in [device], as text for
 * devmodel_set(); cfg_validate() has checked it on the model emulate names
 * (with emulate = none, on whichever model has it).
 */
struct cfg_param {
  char *key;                    /* without the "model." prefix */
  char *value;                  /* as written, trimmed */
};

/* [device] cache: how the file is read and written. */
enum cfg_cache {
  CFG_CACHE_NONE = 0,           /* O_DIRECT: the disk's own timing */
  CFG_CACHE_PAGE,               /* buffered, through the page cache */
};
extern const char *cfg_cache_name (enum cfg_cache c); /* "none", "page" */

/* [device] calibrate: what the server measures of a real device at start
 * for its cost model (include/cost.h).
 */
enum cfg_calibrate {
  CFG_CALIBRATE_OFF = 0,        /* nothing: the saved, stated or generic
                                   model */
  CFG_CALIBRATE_READ,           /* reads (the default) */
  CFG_CALIBRATE_WRITE,          /* reads and writes, each block written
                                   back with what it holds */
};
/* "off", "read", "write" */
extern const char *cfg_calibrate_name (enum cfg_calibrate c);

/* A file name that is a Ceph RBD image, "rbd:POOL/IMAGE" (the plugin's
 * backend=rbd), not a path: never resolved against the config's directory.
 */
#define CFG_RBD_PREFIX "rbd:"

struct cfg_device {
  const char *file;             /* path, or NULL if none given */
  uint64_t size;                /* bytes the exports were checked against:
                                   the file's, or (cfg_simulate) the
                                   model's capacity */
  unsigned queue_depth;         /* requests in flight, 1..SCHED_DEPTH_MAX */
  enum cfq_mode mode;           /* auto unless [device] mode says */
  const char *emulate;          /* [device] emulate: the device model in
                                   front (a devmodel_presets name), or NULL
                                   for none: the real device's own timing */
  unsigned max_connections;     /* clients connected at once, all exports */
  enum cfg_cache cache;         /* [device] cache, default none */
  uint64_t buffer_pool;         /* bytes: request buffers at once */
  uint64_t memory;              /* bytes: the server's budget, in all */
  uint64_t reply_timeout;       /* ns a client may take no reply; 0: none */
  enum cfg_calibrate calibrate; /* [device] calibrate, default read */
  bool calibrate_given;         /* calibrate was in the file or on the
                                   command line (else the default) */
  const char *calibration;      /* [device] calibration: path of the saved
                                   model, or NULL */
  bool cost_given;              /* [device] cost_model was given: */
  struct cost_params cost;      /* the model it states */
  const struct cfg_param *model; /* model.* parameters, file order */
  size_t nr_model;
};

/* The parts of dev's memory budget (see CFG_MEMORY_DEFAULT). */
extern void cfg_memory_parts (const struct cfg_device *dev,
                              struct cfg_memory *m);


/* A scheduler tunable to pass to sched_set(): only those given in the file
 * or on the command line (the policy keeps its own defaults otherwise), and
 * none when the scheduler is fifo (it has no tunables).  Names, units and
 * ranges are CFQ's table (include/cfq.h); [device] mode is passed on as the
 * "mode" tunable (enum cfq_mode).
 */
struct cfg_tunable {
  const char *name;             /* CFQ's name, "slice_idle" */
  uint64_t val;                 /* in the tunable's unit: ns, KiB or count */
};

struct cfg_group {
  const char *name;             /* [group NAME] */
  unsigned weight;              /* SCHED_WEIGHT_MIN..MAX, default 500 */
  enum sched_class cls;         /* class of its queues, default BE */
  unsigned prio;                /* level 0 (highest) .. 7, default 4 */
  struct qos_conf qos;          /* caps and reservation; all 0: none */
  bool global;                  /* scope = global: they hold for the sum
                                   over the servers (include/gqos.h) */
  struct lat_conf lat;          /* latency target and boost (latency.h) */
  unsigned line;                /* of the [group] header; 0 = implicit */
};

/* One allow= entry: an address range, or every Unix-socket client. */
struct cfg_net {
  int family;                   /* AF_INET, AF_INET6 or AF_UNIX */
  uint8_t addr[16];             /* network address, network byte order */
  unsigned prefix;              /* bits of addr that must match */
};

struct cfg_export {
  const char *name;             /* NBD export name; "" is the default one */
  size_t group;                 /* index into cfg_model.groups */
  const char *file;             /* own backing file, or NULL: device region */
  uint64_t offset;              /* bytes into the device (0 with own file) */
  uint64_t size;                /* bytes; 0 with own file (the file's size) */
  bool readonly;                /* refuse writes, trims and zeroes */
  bool writes_sync;             /* writes=sync: every write is FUA */
  bool tls_required;            /* tls=require: refuse plaintext clients */
  unsigned max_connections;     /* clients at once; 0: only the total */
  bool writes_async;            /* writes=async: plain writes are async;
                                   neither: auto, the policy's rule */
  const struct cfg_net *allow;  /* clients allowed; nr_allow == 0: anyone */
  size_t nr_allow;
  unsigned line;                /* of the [export] header; 0 = implicit */
};

/* A [tenant NAME]: the unit of the simulator and the fairness lab, one
 * client's workload in fio's terms.  Each of its connections is one NBD
 * connection (one queue in the scheduler, one fio job) running the same
 * workload; the server itself ignores tenants.  Sizes in bytes, times in
 * ns.
 */
#define CFG_CONNECTIONS_MAX 4096        /* connections of one tenant */
#define CFG_IODEPTH_MAX 1024            /* requests one connection keeps */
#define CFG_NUMBER_IOS_MAX (1ull << 40) /* requests: number_ios */
#define CFG_BS_MAX (32u << 20)          /* bytes: NBD's largest request */
#define CFG_SECTOR 512                  /* bytes: bs and offset unit */

/* What the fairness lab (tools/cfqlab) runs for a tenant.  fio is the
 * keys of struct cfg_tenant through fio's nbd engine.  The others run on a
 * file system the lab makes on the tenant's export (ext4 over nbdfuse and
 * a direct-I/O loop device): fs_mark (bs-sized files, fsync each), an
 * fsync tester (write bs, fsync, sleep thinktime), dd (bs-sized O_DIRECT
 * writes, over and over one file) and fio's mmap engine (random reads of
 * bs from a file, iodepth readers).  The simulator runs the fio keys of
 * the same tenant, which should say what the program does to the disk.
 */
enum cfg_workload {
  CFG_WORKLOAD_FIO = 0,
  CFG_WORKLOAD_FS_MARK,
  CFG_WORKLOAD_FSYNC_TESTER,
  CFG_WORKLOAD_DD,
  CFG_WORKLOAD_MMAP,
};
extern const char *const cfg_workload_names[]; /* by value, NULL-ended */

struct cfg_tenant {
  const char *name;             /* [tenant NAME] */
  size_t export;                /* index into cfg_model.exports */
  unsigned connections;         /* default 1 */
  const char *rw;               /* fio's rw: read, write, randread,
                                   randwrite, rw or randrw (default read) */
  bool rand;                    /* random offsets (else sequential) */
  unsigned rwmixread;           /* percent of requests that read: 100 for
                                   read/randread, 0 for write/randwrite,
                                   rwmixread= (default 50) for rw/randrw */
  uint64_t skip;                /* rw=read:SKIP: bytes skipped after each
                                   sequential request (fio's); 0 */
  uint32_t bs;                  /* bytes per request, default 4096 */
  unsigned iodepth;             /* requests in flight per connection, 1 */
  uint64_t thinktime;           /* ns from a completion to the next
                                   submission of that slot; 0 */
  unsigned thinktime_blocks;    /* requests: with thinktime, think only
                                   after this many were sent and all of
                                   them came back (fio's); 0: per slot */
  uint64_t number_ios;          /* requests per connection: it stops
                                   after this many (fio's); 0: no limit */
  uint64_t rate_iops;           /* per connection; 0: unlimited */
  uint64_t rate;                /* bytes/s per connection; 0: unlimited */
  unsigned fsync;               /* flush after every N writes; 0: never */
  uint64_t offset, size;        /* region within the export; size resolved
                                   (default: the rest of the export) */
  uint64_t start, stop;         /* ns into the run; stop 0: to the end */
  enum cfg_workload workload;   /* what the fairness lab runs (the
                                   simulator always runs the keys above) */
  enum sched_class cls;         /* its connections' class and level: the */
  unsigned prio;                /* export's group's, unless class= prio=
                                   say otherwise (the simulator only: the
                                   server takes them from the group) */
  bool cls_given, prio_given;
  unsigned line;                /* of the [tenant] header */
};

/* [event NAME]: a control command at a time into the run, as the
 * control socket takes it ("weight GROUP N" or "set KEY VALUE"); the
 * simulator and the fairness lab apply it, the server ignores it.
 */
enum cfg_event_kind { CFG_EVENT_WEIGHT, CFG_EVENT_SET };

struct cfg_event {
  const char *name;             /* [event NAME] */
  uint64_t at;                  /* ns into the run */
  const char *command;          /* the line, as the control socket takes it */
  enum cfg_event_kind kind;
  size_t group;                 /* WEIGHT: index into cfg_model.groups */
  unsigned weight;              /* WEIGHT: SCHED_WEIGHT_MIN..MAX */
  const char *key;              /* SET: a CFQ tunable's name, or queue_depth */
  uint64_t value;               /* SET: in the tunable's unit */
  unsigned line;                /* of the [event] header */
};

/* [sim]: the simulator's run. */
struct cfg_sim {
  uint64_t duration;            /* ns of virtual time, default 10s */
  uint64_t seed;                /* PRNG seed, default 1 */
  unsigned line;                /* of [sim]; 0 = absent */
};

struct cfg_model {
  struct cfg_device dev;
  const char *scheduler;        /* "cfq" or "fifo" */
  const struct cfg_tunable *tunables;
  size_t nr_tunables;
  const struct cfg_group *groups;
  size_t nr_groups;
  const struct cfg_export *exports;
  size_t nr_exports;
  const struct cfg_tenant *tenants;
  size_t nr_tenants;
  const struct cfg_event *events; /* in order of time (file order on ties) */
  size_t nr_events;
  struct cfg_sim sim;
};

/* Called with each error message as it is found. */
typedef void (*cfg_report_fn) (void *opaque, const char *msg);

/* NULL only on ENOMEM. */
extern struct cfg *cfg_new (cfg_report_fn report, void *opaque);
extern void cfg_free (struct cfg *cfg);

/* Parse LEN bytes of TEXT, the contents of FILENAME (used in messages and to
 * resolve relative paths in the file against the file's directory).  Keeps
 * going after an error.  At most once per cfg.
 */
extern int cfg_parse (struct cfg *cfg, const char *filename,
                      const char *text, size_t len);

/* KEY=VALUE for any [device] or [scheduler] key, or "model.NAME".  Overrides
 * win over the file whatever the order of calls; a later override of the
 * same key wins over an earlier one.  -ENOENT for a key that cannot be
 * overridden (also reported), -EINVAL for a bad value.
 */
extern int cfg_set_override (struct cfg *cfg, const char *key,
                             const char *value);

/* Validate for the simulator: the device is the model [device] emulate
 * names (emulate = none is an error), its size is that model's capacity
 * (model.capacity), and [device] file is optional and never opened.  Call
 * before cfg_validate().
 */
extern void cfg_simulate (struct cfg *cfg);

/* VALUE of a numeric [device] or [scheduler] key (queue_depth, mode, a
 * tunable) read exactly as the config file reads it, for the control
 * socket's "set KEY VALUE": 0, -ENOENT (not such a key) or -EINVAL, with
 * WHY in the config's words ("out of range (want 1..4096)").
 */
extern int cfg_parse_value (const char *key, const char *value, uint64_t *v,
                            char *why, size_t len);

/* NAMES (NULL-terminated, kept, not copied): the keys the caller takes
 * itself beside cfg_set_override()'s (the plugin's config=, control= ...),
 * so that a mistyped one is answered with the nearest of all of them.
 */
extern void cfg_set_override_names (struct cfg *cfg,
                                    const char *const *names);

struct suggest;
/* The keys cfg_parse_value() takes, into S (include/suggest.h). */
extern void cfg_value_suggest (struct suggest *s);

/* The device file after the file and the overrides, or NULL. */
extern const char *cfg_device_file (const struct cfg *cfg);

/* DEVICE_SIZE for cfg_validate() when the device could not be measured
 * because the config already has errors (its file= is wrong, or the file
 * cannot be opened): regions are then not checked against the end of the
 * device, so the errors reported are the real ones and not their echo.
 * Validation with it always fails ("the device size is unknown" if nothing
 * else did).
 */
#define CFG_SIZE_UNKNOWN UINT64_MAX

/* Check everything against DEVICE_SIZE (bytes; 0 if there is no device;
 * CFG_SIZE_UNKNOWN) and build the model.  Returns -EINVAL if any error was found, now or in an
 * earlier call.  With no config file parsed, the model is one export "" in
 * group "default" covering the whole device.  Call it once, after the last
 * override (nbdkit's .config_complete, or later once the device is open).
 */
extern int cfg_validate (struct cfg *cfg, uint64_t device_size);

/* The model, or NULL unless cfg_validate() succeeded. */
extern const struct cfg_model *cfg_model (const struct cfg *cfg);

/* The errors found so far, in the order found: the file's in line order,
 * then overrides', then cfg_validate()'s.
 */
extern size_t cfg_nr_errors (const struct cfg *cfg);
extern const char *cfg_error (const struct cfg *cfg, size_t i);

/* Warnings from cfg_validate(): what is accepted but cannot all work, as
 * "FILE:LINE: warning: ..." (reservations that add up to more than the
 * emulated device gives).  Also passed to the report callback.
 */
extern size_t cfg_nr_warnings (const struct cfg *cfg);
extern const char *cfg_warning (const struct cfg *cfg, size_t i);

/* A cap or reservation key (include/qos.h's table) of [group]: VALUE in
 * the key's unit into C.  Requests per second are a count, bytes per
 * second a rate ("100MB/s", "20MiB/s": units.h), burst seconds a time
 * with its unit ("10s", "500ms": a bare number other than 0 is refused);
 * 0 removes the setting.
 * -ENOENT if KEY is not one, -EINVAL with the reason in WHY.  The one
 * parser of these values: the config file and the control socket use it.
 * cfg_format_qos writes a value back the same way.
 */
extern int cfg_parse_qos (const char *key, const char *value,
                          struct qos_conf *c, char *why, size_t len);
extern char *cfg_format_qos (const struct qos_key *k, uint64_t v,
                             char *buf, size_t len);

/* A latency key (include/latency.h's table) of [group]: VALUE in the
 * key's unit into C: latency_target a time with its unit ("5ms"; 0: none),
 * latency_percentile 90, 95 or 99, latency_mode graded or binary, boost a
 * boolean.  -ENOENT if KEY is not one, -EINVAL with the reason in WHY.
 * The one parser of these values: the config file, the control socket
 * and cfqsim use it; lat_format writes a value back.
 */
extern int cfg_parse_latency (const char *key, const char *value,
                              struct lat_conf *c, char *why, size_t len);

/* The step from a validated model to a live scheduler (core/apply.c), the
 * same for the server and cfqsim: tell S whether the device seeks
 * (ROTATIONAL 0 or 1; -1 unknown: leave the policy's default), apply the
 * model's tunables (a configured "rotational" wins), and create one
 * scheduler group per model group, GROUPS[i] for m->groups[i], with its
 * caps and reservation.  Returns 0, or -errno with WHY saying what failed.
 * Belongs to the thread that owns S; allocates (groups).
 */
extern int cfg_apply (const struct cfg_model *m, struct sched *s,
                      int rotational, struct sched_group **groups,
                      char *why, size_t len);

/* Whether the device the scheduler sees seeks (1), does not (0) or is
 * unknown (-1), given what the mechanism detected (sysfs, or the device
 * model): with cache = page and no model in front it is the page cache,
 * which does not (core/apply.c says why).  cfg_apply uses it; so does the
 * plugin's mode=auto.
 */
extern int cfg_rotational (const struct cfg_model *m, int detected);

/* The export called NAME, or NULL. */
extern const struct cfg_export *cfg_find_export (const struct cfg_model *m,
                                                 const char *name);

/* May this client use the export?  1 yes, 0 no.  An IPv4-mapped IPv6
 * address is matched as IPv4; AF_UNIX matches the "unix" entry.
 */
extern int cfg_export_allows (const struct cfg_export *exp,
                              const struct sockaddr *sa, socklen_t len);
/* The same for an address as text ("192.0.2.1", "::1", "unix"); -EINVAL if
 * ADDR is not an address.
 */
extern int cfg_export_allows_str (const struct cfg_export *exp,
                                  const char *addr);

#endif /* CFQ_CONFIG_H */
