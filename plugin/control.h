/* control.h: the control socket, served by the dispatcher's libev loop.
 *
 * One command per line in, one answer out, ended by an empty line.  The
 * socket knows nothing of what the commands mean: each line goes to the
 * handler, on the dispatcher thread, which appends its answer to a
 * strbuf.  An answer that is an error starts with "error: ".
 *
 * Who may connect: the socket file is made with control_mode (0600 by
 * default: its owner, the user nbdkit starts as, before any -u);
 * control_uid adds a check of the peer's uid (SO_PEERCRED).  What a
 * client may take: at most control_clients of them at once, a line of
 * CTL_LINE_MAX bytes, an answer of CTL_OUT_MAX bytes, and no client
 * stays connected control_timeout without finishing a command or
 * reading an answer.
 * What the loop gives them: a bounded slice of each iteration (see
 * control.c), so that no flood of commands stalls the I/O.
 */
#ifndef CFQ_CONTROL_H
#define CFQ_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "strbuf.h"

struct ev_loop;

typedef void (*control_fn) (void *opaque, const char *line,
                            struct strbuf *out);

/* Bytes: the longest command line, its newline included; a longer one
 * closes its client.
 */
#define CTL_LINE_MAX 4096

/* The control_* plugin parameters, with their limits. */
#define CTL_MODE_DEFAULT 0600
#define CTL_CLIENTS_DEFAULT 16
#define CTL_CLIENTS_MAX 1024
#define CTL_TIMEOUT_DEFAULT 60000000000ULL      /* ns */
#define CTL_UIDS_MAX 64

struct control_opts {
  mode_t mode;                  /* control_mode: of the socket file */
  unsigned max_clients;         /* control_clients: at once */
  uint64_t timeout;             /* control_timeout, ns: no progress */
  uid_t uids[CTL_UIDS_MAX];     /* control_uid: allowed besides root and
                                   the server's own user */
  size_t nr_uids;               /* 0: no uid check (the mode decides) */
  bool given;                   /* any control_* key was given */
};

#define CONTROL_OPTS_INIT \
  { .mode = CTL_MODE_DEFAULT, .max_clients = CTL_CLIENTS_DEFAULT, \
    .timeout = CTL_TIMEOUT_DEFAULT }

/* A control_* plugin parameter (control_mode, control_uid,
 * control_clients, control_timeout): 1 taken, 0 not one of them, -1 a bad
 * value (reported with nbdkit_error).
 */
extern int control_config (struct control_opts *o, const char *key,
                           const char *value);

struct control;

/* Bind and listen on a Unix socket at path, made with opts->mode.  A
 * stale socket there (nobody listening) is replaced; anything else
 * there, or a live server, is an error.  Returns NULL (reported with
 * nbdkit_error) on failure.  Called in nbdkit's .get_ready, on its main
 * thread, while the process has no other threads (the mode is set
 * through the umask), and before nbdkit changes user: the socket belongs
 * to the user nbdkit starts as.
 */
extern struct control *control_bind (const char *path,
                                     const struct control_opts *opts);
/* Serve the bound socket c on loop: must be called on the thread that
 * runs loop, or before that thread starts.
 */
extern void control_start (struct control *c, struct ev_loop *loop,
                           control_fn fn, void *opaque);
/* Close every client and the listener, unlink the socket (if it is still
 * the one we made and the server's user may).  Also for a socket bound
 * but never started.
 */
extern void control_stop (struct control *c);

/* The socket's budget and what it did, for the statistics. */
struct control_stats {
  unsigned clients;             /* connected now */
  unsigned max_clients;         /* control_clients */
  uint64_t timeout_ns;          /* control_timeout */
  uint64_t refused;             /* clients refused: the cap, control_uid */
  uint64_t timeouts;            /* clients closed by control_timeout */
  uint64_t commands;            /* commands run */
  uint64_t deferred;            /* turns that waited for the slice or the
                                   duty cycle */
  uint64_t pauses;              /* accept paused (EMFILE ...) */
  uint64_t busy_ns;             /* time spent running commands */
  unsigned duty_pct;            /* % of the dispatcher's time commands
                                   may take */
};
extern void control_get_stats (const struct control *c,
                               struct control_stats *st);

#endif /* CFQ_CONTROL_H */
