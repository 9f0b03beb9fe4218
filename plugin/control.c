/* control.c: the control socket (see control.h).
 *
 * Everything here runs on the dispatcher thread, inside its libev loop and
 * under the engine lock, so the command handler can read and change
 * scheduler state directly, and a change takes effect on the next
 * dispatch decision.  The price: while a command runs, no tenant's
 * request is dispatched or completed.  So the socket is built to keep
 * its share of the loop small whatever its clients do.
 *
 * Bounded work.  Complete lines are handled in order, but at most
 * CTL_BATCH of one client's at a time, only while the iteration's
 * control slice (CTL_SLICE_NS of command time, shared by all clients)
 * lasts, and only while the duty cycle allows: commands may use
 * CTL_DUTY_PCT of the dispatcher's time, with CTL_BURST_NS saved up for
 * an operator's occasional command (a token bucket in ns; a command that
 * overdraws it makes the next wait longer).  What is left waits: the
 * client stops being read, a timer brings the loop back when a command
 * may run again (at once for the next iteration's slice), and meanwhile
 * the engine's pass dispatches and reaps as usual.  The clients take
 * turns: one that was served goes to the back of the line.  So a
 * 680-command write costs a tenant's request at most about one command
 * per trip through the loop, and the dispatcher's time at most
 * CTL_DUTY_PCT, not 0.5 s at once; the flood is answered, slowly.
 *
 * Bounded memory.  A client has a CTL_LINE_MAX line buffer (a longer line
 * closes it) and its unsent answers.  Before each command the unsent
 * bytes are checked: above CTL_OUT_HIGH the client's commands wait until
 * it reads (backpressure: it is not read either, so the kernel's socket
 * buffer holds what it sends meanwhile); one answer above CTL_OUT_MAX is
 * replaced by an error.  A drained answer buffer larger than CTL_KEEP is
 * given back.  At most control_clients clients are connected (the next
 * one is told so and closed), and one that neither completes a command
 * nor reads an answer for control_timeout is closed, so slow or silent
 * clients cannot hold their slots for ever.
 *
 * Failures of the socket itself.  When accept fails for lack of file
 * descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) the pending
 * connection stays queued and the socket stays readable: a level-
 * triggered watcher would fire again at once, for ever, at 100% CPU.  So
 * accepting pauses for CTL_RETRY_S and then tries again.
 *
 * Access.  The socket file is made with the mode control_mode (through
 * the umask, so it never exists with a wider one), and with control_uid
 * only root, the server's own user and the listed uids are served (the
 * peer's credentials from SO_PEERCRED).  An existing file at the path is
 * replaced only if it is a socket nobody listens on.
 *
 * When.  The socket is bound in nbdkit's .get_ready (control_bind),
 * where nbdkit binds its own: before it changes user (-u, -g) and before
 * it forks into the background.  So the path is checked and the socket
 * made by the same user, the one nbdkit starts as, who owns the file;
 * an error (a path taken, a directory the server may not write) stops
 * the start with a message on the terminal.  The dispatcher's loop
 * starts accepting on it later, once it runs (control_start).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <ev.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "control.h"
#include "list.h"
#include "units.h"

#define CTL_OUT_MAX (16u << 20)         /* bytes: largest single answer */
#define CTL_OUT_HIGH (1u << 20)         /* bytes unsent: commands wait */
#define CTL_KEEP (64u << 10)            /* bytes: answer buffer kept */
#define CTL_BATCH 16                    /* commands per client per turn */
#define CTL_SLICE_NS 200000             /* ns of commands per iteration */
#define CTL_DUTY_PCT 5                  /* % of the time for commands */
#define CTL_BURST_NS 2000000            /* ns of commands saved up */
#define CTL_RETRY_S 0.25                /* s: accept paused (EMFILE) */
#define CTL_BACKLOG 64                  /* listen(2) backlog */
#define CTL_LOG_NS 1000000000ULL        /* ns: at most one refusal logged */

/* -D cfq.control_duty=PCT: the duty cycle, for tests that send many
 * commands (tests/fuzz/fuzz-control.c); 1..100, else CTL_DUTY_PCT.
 */
NBDKIT_DLL_PUBLIC int cfq_debug_control_duty = CTL_DUTY_PCT;

struct ctl_client {
  ev_io r, w;                   /* readable / writable watchers */
  ev_timer idle;                /* no progress for control_timeout */
  struct control *c;
  struct list link;             /* on c->clients, in turn order */
  bool backlog;                 /* complete lines wait for a turn */
  char in[CTL_LINE_MAX];        /* unhandled input: lines, then a part */
  size_t in_len;
  struct strbuf out;            /* answers not yet written */
  size_t out_off;               /* bytes of out already written */
};

struct control {
  struct ev_loop *loop;
  ev_io accept;
  ev_timer retry;               /* accepting paused (EMFILE ...) */
  ev_timer resume;              /* zero delay: the next turn of commands */
  int fd;
  char *path;
  dev_t dev;                    /* of the socket file we made */
  ino_t ino;
  struct control_opts o;
  control_fn fn;
  void *opaque;
  struct list clients;          /* struct ctl_client */
  unsigned nr_clients;
  unsigned iter;                /* ev_iteration of the slice below */
  uint64_t spent;               /* ns of commands in that iteration */
  int64_t tokens;               /* ns of command time we may spend now */
  unsigned duty;                /* % of the time for commands */
  uint64_t refilled;            /* ns: when tokens were last topped up */
  bool pausing;                 /* accept failed for lack of resources */
  uint64_t pauses;              /* times accepting was paused, in a row */
  uint64_t refused;             /* clients refused since last logged */
  uint64_t logged_at;           /* ns: last refusal logged */
  struct control_stats st;      /* what it did, for the statistics */
};

static uint64_t
now_ns (void)
{
  struct timespec ts;

  clock_gettime (CLOCK_MONOTONIC, &ts);
  return (uint64_t) ts.tv_sec * 1000000000ULL + (uint64_t) ts.tv_nsec;
}

/* ---- parameters ------------------------------------------------------------- */

static int
parse_uids (struct control_opts *o, const char *value)
{
  const char *p = value;
  char tok[256];

  o->nr_uids = 0;
  while (*p) {
    size_t n = strcspn (p, ", \t");
    char *end;
    unsigned long v;

    if (n == 0) {
      p++;
      continue;
    }
    if (n >= sizeof tok) {
      nbdkit_error ("cfq: control_uid: '%.*s...' is not a user", 20, p);
      return -1;
    }
    memcpy (tok, p, n);
    tok[n] = '\0';
    p += n;
    if (o->nr_uids == CTL_UIDS_MAX) {
      nbdkit_error ("cfq: control_uid: more than %d users", CTL_UIDS_MAX);
      return -1;
    }
    errno = 0;
    v = strtoul (tok, &end, 10);
    if (tok[0] >= '0' && tok[0] <= '9' && !*end && !errno &&
        v < (uid_t) -1)
      o->uids[o->nr_uids++] = (uid_t) v;
    else {
      struct passwd pw, *res = NULL;
      char buf[4096];

      if (getpwnam_r (tok, &pw, buf, sizeof buf, &res) != 0 || !res) {
        nbdkit_error ("cfq: control_uid: '%s' is not a uid or a user name",
                      tok);
        return -1;
      }
      o->uids[o->nr_uids++] = res->pw_uid;
    }
  }
  if (o->nr_uids == 0) {
    nbdkit_error ("cfq: control_uid: empty list (want uids or user names)");
    return -1;
  }
  return 0;
}

int
control_config (struct control_opts *o, const char *key, const char *value)
{
  char *end;
  unsigned long v;
  uint64_t ns;

  if (strcmp (key, "control_mode") == 0) {
    errno = 0;
    v = strtoul (value, &end, 8);
    if (value[0] < '0' || value[0] > '7' || *end || errno || v > 0777) {
      nbdkit_error ("cfq: control_mode=%s: want an octal mode 0..0777 "
                    "(default 0600)", value);
      return -1;
    }
    o->mode = (mode_t) v;
  }
  else if (strcmp (key, "control_uid") == 0) {
    if (parse_uids (o, value) == -1)
      return -1;
  }
  else if (strcmp (key, "control_clients") == 0) {
    uint64_t n;

    if (units_parse_count (value, &n) < 0 || n < 1 || n > CTL_CLIENTS_MAX) {
      nbdkit_error ("cfq: control_clients=%s: want 1..%d (default %d)",
                    value, CTL_CLIENTS_MAX, CTL_CLIENTS_DEFAULT);
      return -1;
    }
    o->max_clients = (unsigned) n;
  }
  else if (strcmp (key, "control_timeout") == 0) {
    char want[96];

    if (units_parse_time (value, 0, &ns) < 0 || ns < 10000000ULL ||
        ns > 86400000000000ULL) {
      nbdkit_error ("cfq: control_timeout=%s: want a time from 10ms to 24h "
                    "(%s)", value, units_expect_time (0, want, sizeof want));
      return -1;
    }
    o->timeout = ns;
  }
  else
    return 0;
  o->given = true;
  return 1;
}

/* ---- clients ---------------------------------------------------------------- */

static void
client_close (struct ctl_client *cl)
{
  struct control *c = cl->c;

  list_del (&cl->link);
  c->nr_clients--;
  ev_io_stop (c->loop, &cl->r);
  ev_io_stop (c->loop, &cl->w);
  ev_timer_stop (c->loop, &cl->idle);
  close (cl->r.fd);
  strbuf_free (&cl->out);
  free (cl);
}

static size_t
unsent (const struct ctl_client *cl)
{
  return cl->out.len - cl->out_off;
}

static bool
has_line (const struct ctl_client *cl)
{
  return memchr (cl->in, '\n', cl->in_len) != NULL;
}

/* The client made progress: a command done or answer bytes taken. */
static void
client_progress (struct ctl_client *cl)
{
  ev_timer_again (cl->c->loop, &cl->idle);
}

/* Top up the command time: c->duty % of the time since, at most
 * CTL_BURST_NS saved up.
 */
static void
refill (struct control *c, uint64_t now)
{
  c->tokens += (int64_t) ((now - c->refilled) * c->duty / 100);
  if (c->tokens > CTL_BURST_NS)
    c->tokens = CTL_BURST_NS;
  c->refilled = now;
}

/* May a command run now?  Not when this iteration's slice is used up
 * (come back on the next one) nor when the duty cycle's time is (come
 * back when it has been earned again).
 */
static bool
may_run (struct control *c)
{
  unsigned it = ev_iteration (c->loop);

  if (it != c->iter) {
    c->iter = it;
    c->spent = 0;
  }
  refill (c, now_ns ());
  return c->spent < CTL_SLICE_NS && c->tokens > 0;
}

/* Arm the resume timer for the earliest moment a command may run. */
static void
schedule_turn (struct control *c)
{
  double after = 0.;

  refill (c, now_ns ());
  if (c->tokens <= 0)
    after = (double) (-c->tokens) * 100 / c->duty / 1e9 + 1e-6;
  if (ev_is_active (&c->resume) &&
      ev_timer_remaining (c->loop, &c->resume) <= after)
    return;
  ev_timer_stop (c->loop, &c->resume);
  ev_timer_set (&c->resume, after, 0.);
  ev_timer_start (c->loop, &c->resume);
}

/* Wait for a turn. */
static void
client_defer (struct ctl_client *cl)
{
  cl->c->st.deferred++;
  cl->backlog = true;
  schedule_turn (cl->c);
}

/* Read only while there is no complete line to handle. */
static void
client_set_reading (struct ctl_client *cl)
{
  if (has_line (cl))
    ev_io_stop (cl->c->loop, &cl->r);
  else
    ev_io_start (cl->c->loop, &cl->r);
}

/* Write what we can; keep the write watcher on while anything is left.
 * false if the client was closed.
 */
static bool
client_flush (struct ctl_client *cl)
{
  struct control *c = cl->c;
  size_t before = unsent (cl);

  while (cl->out_off < cl->out.len) {
    ssize_t r = send (cl->w.fd, cl->out.s + cl->out_off,
                      cl->out.len - cl->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        break;
      client_close (cl);
      return false;
    }
    cl->out_off += r;
  }
  if (unsent (cl) < before)
    client_progress (cl);
  if (cl->out_off == cl->out.len) {
    cl->out.len = cl->out_off = 0;
    if (cl->out.cap > CTL_KEEP)
      strbuf_free (&cl->out);
    ev_io_stop (c->loop, &cl->w);
  }
  else {
    /* Keep what is unsent at the front, so the buffer does not grow. */
    if (cl->out_off > CTL_KEEP) {
      memmove (cl->out.s, cl->out.s + cl->out_off, unsent (cl) + 1);
      cl->out.len -= cl->out_off;
      cl->out_off = 0;
    }
    ev_io_start (c->loop, &cl->w);
  }
  /* Commands that waited for this client to read may go on now. */
  if (!cl->backlog && unsent (cl) <= CTL_OUT_HIGH && has_line (cl))
    client_defer (cl);
  return true;
}

static void
client_line (struct ctl_client *cl, char *line)
{
  size_t len = strlen (line), start = cl->out.len;
  struct strbuf *o = &cl->out;

  if (len && line[len - 1] == '\r')
    line[--len] = '\0';
  cl->c->fn (cl->c->opaque, line, o);
  if (o->oom || o->len - start > CTL_OUT_MAX) {
    /* Say so rather than send a cut or a giant answer. */
    bool big = !o->oom;

    o->oom = 0;
    o->len = start;
    if (o->s)
      o->s[start] = '\0';
    if (big)
      strbuf_printf (o, "error: answer larger than %u bytes\n", CTL_OUT_MAX);
    else
      strbuf_printf (o, "error: out of memory\n");
  }
  if (o->len > start && o->s[o->len - 1] != '\n')
    strbuf_printf (o, "\n");
  strbuf_printf (o, "\n");
}

/* Handle this client's complete lines, within its batch and the slice.
 * false if the client was closed.
 */
static bool
client_work (struct ctl_client *cl)
{
  struct control *c = cl->c;
  unsigned n = 0;
  char *nl;

  cl->backlog = false;
  while ((nl = memchr (cl->in, '\n', cl->in_len)) != NULL) {
    size_t used = nl - cl->in + 1;
    uint64_t t0;

    if (unsent (cl) > CTL_OUT_HIGH)
      break;                    /* client_flush defers us when it reads */
    if (n == CTL_BATCH || !may_run (c)) {
      client_defer (cl);
      break;
    }
    *nl = '\0';
    t0 = now_ns ();
    client_line (cl, cl->in);
    t0 = now_ns () - t0;
    c->st.commands++;
    c->st.busy_ns += t0;
    c->spent += t0;
    c->tokens -= (int64_t) t0;
    memmove (cl->in, cl->in + used, cl->in_len - used);
    cl->in_len -= used;
    n++;
  }
  if (n)
    client_progress (cl);
  if (cl->in_len == sizeof cl->in && !has_line (cl)) {
    client_close (cl);          /* a line too long */
    return false;
  }
  if (n && !client_flush (cl))
    return false;
  client_set_reading (cl);
  return true;
}

static void
client_readable (struct ev_loop *loop, ev_io *w, int revents)
{
  struct ctl_client *cl = w->data;
  ssize_t r;

  r = read (w->fd, cl->in + cl->in_len, sizeof cl->in - cl->in_len);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (r <= 0) {
    client_close (cl);
    return;
  }
  cl->in_len += r;
  if (!cl->backlog)
    client_work (cl);
  else
    client_set_reading (cl);
}

static void
client_writable (struct ev_loop *loop, ev_io *w, int revents)
{
  client_flush (w->data);
}

static void
client_idle (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct ctl_client *cl = w->data;

  nbdkit_debug ("cfq: control: closing a client that made no progress for "
                "%.3f s (control_timeout)", w->repeat);
  cl->c->st.timeouts++;
  client_close (cl);
}

/* The next turn for every client with complete lines waiting. */
static void
control_resume (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;
  unsigned n = c->nr_clients;

  for (unsigned i = 0; i < n && !list_empty (&c->clients); i++) {
    struct ctl_client *cl = list_entry (c->clients.next, struct ctl_client,
                                        link);

    /* Each client examined goes to the back of the line ... */
    list_del (&cl->link);
    list_add_tail (&cl->link, &c->clients);
    if (!cl->backlog)
      continue;
    if (!may_run (c)) {
      /* ... except the first that must wait: it is next. */
      list_del (&cl->link);
      list_add (&cl->link, &c->clients);
      schedule_turn (c);
      return;
    }
    client_work (cl);
  }
}

/* ---- accepting ------------------------------------------------------------------ */

/* Log a refused client, at most once a second. */
static void log_refusal (struct control *c, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
static void
log_refusal (struct control *c, const char *fmt, ...)
{
  uint64_t now = now_ns ();
  char msg[256];
  va_list ap;

  c->refused++;
  c->st.refused++;
  if (c->logged_at && now - c->logged_at < CTL_LOG_NS)
    return;
  va_start (ap, fmt);
  vsnprintf (msg, sizeof msg, fmt, ap);
  va_end (ap);
  if (c->refused > 1)
    nbdkit_error ("cfq: control=%s: %s (%" PRIu64 " clients refused since "
                  "the last such message)", c->path, msg, c->refused);
  else
    nbdkit_error ("cfq: control=%s: %s", c->path, msg);
  c->refused = 0;
  c->logged_at = now;
}

static void
refuse (int fd, const char *msg)
{
  ssize_t r = send (fd, msg, strlen (msg), MSG_NOSIGNAL | MSG_DONTWAIT);

  (void) r;
  close (fd);
}

static bool
uid_allowed (const struct control *c, uid_t uid)
{
  if (c->o.nr_uids == 0 || uid == 0 || uid == geteuid ())
    return true;
  for (size_t i = 0; i < c->o.nr_uids; i++)
    if (c->o.uids[i] == uid)
      return true;
  return false;
}

static void
control_accept (struct ev_loop *loop, ev_io *w, int revents)
{
  struct control *c = w->data;
  struct ctl_client *cl;
  struct ucred uc;
  socklen_t ulen = sizeof uc;
  char msg[128];
  int fd;

  fd = accept4 (c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd == -1) {
    if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
        errno == ENOMEM) {
      /* The connection stays queued: do not spin on it. */
      if (!c->pausing)
        nbdkit_error ("cfq: control=%s: accept: %m: not accepting control "
                      "clients for %.2f s at a time until it works again",
                      c->path, CTL_RETRY_S);
      c->pausing = true;
      c->pauses++;
      c->st.pauses++;
      ev_io_stop (loop, &c->accept);
      ev_timer_set (&c->retry, CTL_RETRY_S, 0.);
      ev_timer_start (loop, &c->retry);
    }
    return;                     /* EAGAIN, ECONNABORTED, EINTR ... */
  }
  if (c->pausing) {
    nbdkit_error ("cfq: control=%s: accepting control clients again (after "
                  "%" PRIu64 " pauses)", c->path, c->pauses);
    c->pausing = false;
    c->pauses = 0;
  }
  if (getsockopt (fd, SOL_SOCKET, SO_PEERCRED, &uc, &ulen) == -1) {
    log_refusal (c, "refused a client: SO_PEERCRED: %s", strerror (errno));
    close (fd);
    return;
  }
  if (!uid_allowed (c, uc.uid)) {
    log_refusal (c, "refused a client with uid %u (pid %d): not in "
                 "control_uid", (unsigned) uc.uid, (int) uc.pid);
    snprintf (msg, sizeof msg, "error: uid %u may not use this control "
              "socket\n\n", (unsigned) uc.uid);
    refuse (fd, msg);
    return;
  }
  if (c->nr_clients >= c->o.max_clients) {
    log_refusal (c, "refused a client (uid %u, pid %d): already %u clients "
                 "(control_clients)", (unsigned) uc.uid, (int) uc.pid,
                 c->nr_clients);
    snprintf (msg, sizeof msg, "error: too many control clients (at most "
              "%u)\n\n", c->o.max_clients);
    refuse (fd, msg);
    return;
  }
  cl = calloc (1, sizeof *cl);
  if (!cl) {
    refuse (fd, "error: out of memory\n\n");
    return;
  }
  cl->c = c;
  ev_io_init (&cl->r, client_readable, fd, EV_READ);
  ev_io_init (&cl->w, client_writable, fd, EV_WRITE);
  ev_init (&cl->idle, client_idle);
  cl->idle.repeat = (double) c->o.timeout / 1e9;
  cl->r.data = cl->w.data = cl->idle.data = cl;
  list_add_tail (&cl->link, &c->clients);
  c->nr_clients++;
  ev_io_start (loop, &cl->r);
  ev_timer_again (loop, &cl->idle);
}

static void
control_retry (struct ev_loop *loop, ev_timer *w, int revents)
{
  struct control *c = w->data;

  ev_io_start (loop, &c->accept);
}

/* ---- the socket -------------------------------------------------------------------- */

/* What is at path may be replaced only if it is a socket nobody listens
 * on (a server that died): such a socket is removed.  0 or -1 (reported).
 */
static int
clear_path (const char *path, const struct sockaddr_un *sun)
{
  struct stat st;
  int fd, r;

  if (lstat (path, &st) == -1) {
    if (errno == ENOENT)
      return 0;
    nbdkit_error ("cfq: control=%s: %m", path);
    return -1;
  }
  if (!S_ISSOCK (st.st_mode)) {
    nbdkit_error ("cfq: control=%s: exists and is not a socket: refusing to "
                  "replace it (remove it, or choose another path)", path);
    return -1;
  }
  fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd == -1) {
    nbdkit_error ("cfq: control=%s: socket: %m", path);
    return -1;
  }
  r = connect (fd, (const struct sockaddr *) sun, sizeof *sun);
  close (fd);
  if (r == 0) {
    nbdkit_error ("cfq: control=%s: another server is listening on it",
                  path);
    return -1;
  }
  if (errno != ECONNREFUSED) {
    nbdkit_error ("cfq: control=%s: probing the existing socket: %m", path);
    return -1;
  }
  if (unlink (path) == -1 && errno != ENOENT) {
    nbdkit_error ("cfq: control=%s: removing the stale socket: %m", path);
    return -1;
  }
  nbdkit_debug ("cfq: control=%s: replaced a stale socket", path);
  return 0;
}

struct control *
control_bind (const char *path, const struct control_opts *opts)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  struct control *c;
  struct stat st;
  mode_t old;
  int r;

  if (strlen (path) >= sizeof sun.sun_path) {
    nbdkit_error ("cfq: control=%s: path too long (at most %zu bytes)",
                  path, sizeof sun.sun_path - 1);
    return NULL;
  }
  strcpy (sun.sun_path, path);
  c = calloc (1, sizeof *c);
  if (!c || !(c->path = strdup (path))) {
    nbdkit_error ("cfq: control=%s: %m", path);
    free (c);
    return NULL;
  }
  c->fd = -1;
  c->o = *opts;
  list_init (&c->clients);
  if (clear_path (path, &sun) == -1)
    goto err;
  c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd == -1) {
    nbdkit_error ("cfq: control=%s: socket: %m", path);
    goto err;
  }
  /* The file is born with the mode (the process has no other thread). */
  old = umask (~opts->mode & 0777);
  r = bind (c->fd, (struct sockaddr *) &sun, sizeof sun);
  umask (old);
  if (r == -1) {
    nbdkit_error ("cfq: control=%s: bind: %m", path);
    goto err;
  }
  if (lstat (path, &st) == 0) {
    c->dev = st.st_dev;
    c->ino = st.st_ino;
  }
  if (listen (c->fd, CTL_BACKLOG) == -1) {
    nbdkit_error ("cfq: control=%s: listen: %m", path);
    unlink (path);
    goto err;
  }
  nbdkit_debug ("cfq: control=%s: bound by uid %u, mode %04o", path,
                (unsigned) geteuid (), (unsigned) opts->mode);
  return c;

 err:
  if (c->fd >= 0)
    close (c->fd);
  free (c->path);
  free (c);
  return NULL;
}

void
control_start (struct control *c, struct ev_loop *loop, control_fn fn,
               void *opaque)
{
  c->tokens = CTL_BURST_NS;
  c->refilled = now_ns ();
  c->duty = cfq_debug_control_duty >= 1 && cfq_debug_control_duty <= 100 ?
    (unsigned) cfq_debug_control_duty : CTL_DUTY_PCT;
  c->loop = loop;
  c->fn = fn;
  c->opaque = opaque;
  ev_io_init (&c->accept, control_accept, c->fd, EV_READ);
  c->accept.data = c;
  ev_timer_init (&c->retry, control_retry, 0., 0.);
  c->retry.data = c;
  ev_timer_init (&c->resume, control_resume, 0., 0.);
  c->resume.data = c;
  ev_io_start (loop, &c->accept);
  nbdkit_debug ("cfq: control=%s: mode %04o, %zu uids allowed besides root "
                "and the server's own%s, at most %u clients, timeout %.3f s",
                c->path, (unsigned) c->o.mode, c->o.nr_uids,
                c->o.nr_uids ? "" : " (no uid check)", c->o.max_clients,
                (double) c->o.timeout / 1e9);
}

void
control_get_stats (const struct control *c, struct control_stats *st)
{
  *st = c->st;
  st->clients = c->nr_clients;
  st->max_clients = c->o.max_clients;
  st->timeout_ns = c->o.timeout;
  st->duty_pct = c->duty;
}

void
control_stop (struct control *c)
{
  struct stat st;

  if (!c)
    return;
  while (!list_empty (&c->clients))
    client_close (list_entry (c->clients.next, struct ctl_client, link));
  if (c->loop) {
    ev_io_stop (c->loop, &c->accept);
    ev_timer_stop (c->loop, &c->retry);
    ev_timer_stop (c->loop, &c->resume);
  }
  close (c->fd);
  /* Only our own socket: someone may have put another file there.  (After
   * nbdkit -u the new user may not be allowed to remove it: then a stale
   * socket stays, which the next start replaces.)
   */
  if (lstat (c->path, &st) == 0 && S_ISSOCK (st.st_mode) &&
      st.st_dev == c->dev && st.st_ino == c->ino)
    unlink (c->path);
  free (c->path);
  free (c);
}
