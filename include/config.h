/* config.h: the configuration model (config=FILE plus key=value overrides).
 *
 * The plugin reads the file into memory and hands the text over; core/
 * parses it (with libinih), checks every value as it goes, applies the
 * command-line overrides on top, and once the device is open and its size
 * known, cfg_validate() checks what only the whole picture can show
 * (overlapping exports, regions past the end, missing groups) and builds the
 * model below.  Nothing here does I/O or reads a clock.
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

#include "qos.h"
#include "sched.h"

#define CFG_ALIGN 4096                  /* bytes: export offset/size unit */
#define CFG_QUEUE_DEPTH_DEFAULT 32      /* requests in flight on the device */
#define CFG_QUEUE_DEPTH_MAX 4096
#define CFG_PRIO_DEFAULT 4              /* CFQ's default BE level */
#define CFG_DEFAULT_GROUP "default"     /* exports with no group= join it */
#define CFG_DEFAULT_SCHEDULER "cfq"

enum cfg_mode {                 /* [device] mode: how CFQ charges a slice */
  CFG_MODE_AUTO = 0,            /* CFQ's rule: IOPS if !slice_idle && hw_tag */
  CFG_MODE_TIME,                /* always by time used */
  CFG_MODE_IOPS,                /* always by requests dispatched */
};

enum cfg_emulate {              /* [device] emulate: device model in front */
  CFG_EMULATE_NONE = 0,         /* the real device's own timing */
  CFG_EMULATE_HDD,              /* add rotational-disk service times */
  CFG_EMULATE_SSD,              /* add flash-like service times */
};

/* A device-model parameter, "model.KEY = VALUE" in [device], as text for
 * devmodel_set(); cfg_validate() has checked it on the model emulate names
 * (with emulate = none, on whichever model has it).
 */
struct cfg_param {
  char *key;                    /* without the "model." prefix */
  char *value;                  /* as written, trimmed */
};

struct cfg_device {
  const char *file;             /* path, or NULL if none given */
  unsigned queue_depth;         /* requests in flight, 1..4096 */
  enum cfg_mode mode;
  enum cfg_emulate emulate;
  const struct cfg_param *model; /* model.* parameters, file order */
  size_t nr_model;
};

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
  const struct cfg_net *allow;  /* clients allowed; nr_allow == 0: anyone */
  size_t nr_allow;
  unsigned line;                /* of the [export] header; 0 = implicit */
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

/* The device file after the file and the overrides, or NULL. */
extern const char *cfg_device_file (const struct cfg *cfg);

/* Check everything against DEVICE_SIZE (bytes; 0 if there is no device) and
 * build the model.  Returns -EINVAL if any error was found, now or in an
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

/* Value syntax, exposed for tools and tests.  0 or -EINVAL (or -ERANGE on
 * overflow).  Times: DIGITS[.DIGITS][ns|us|ms|s], a bare number is ms.
 * Sizes: as nbdkit_parse_size, DIGITS[b|k|m|g|t|p|e] in powers of 1024,
 * suffix case-insensitive.
 */
extern int cfg_parse_time (const char *s, uint64_t *ns);
extern int cfg_parse_size (const char *s, uint64_t *bytes);
extern int cfg_parse_bool (const char *s, bool *b);

/* A cap or reservation key (include/qos.h's table) of [group]: VALUE in
 * the key's unit into C.  Requests per second are a plain number, bytes
 * per second a size ("100M" = 100 MiB/s), burst seconds a number of
 * seconds or a time with its suffix ("500ms"); 0 removes the setting.
 * -ENOENT if KEY is not one, -EINVAL with the reason in WHY.  The one
 * parser of these values: the config file, cfqsim and the control socket
 * use it.  cfg_format_qos writes a value back the same way.
 */
extern int cfg_parse_qos (const char *key, const char *value,
                          struct qos_conf *c, char *why, size_t len);
extern char *cfg_format_qos (const struct qos_key *k, uint64_t v,
                             char *buf, size_t len);

/* Shortest exact text for a time ("8ms", "1500us") or a size ("4K", "1G",
 * "4097"), into BUF; returns BUF.
 */
extern char *cfg_format_time (uint64_t ns, char *buf, size_t len);
extern char *cfg_format_size (uint64_t bytes, char *buf, size_t len);

#endif /* CFQ_CONFIG_H */
