/* fuzz-control.c: libFuzzer target for the control protocol: the control
 * socket's framing (plugin/control.c) and its commands (plugin/ctlcmd.c,
 * with the statistics of plugin/statsout.c behind "stats" and "metrics").
 *
 * The server is the plugin's own, without nbdkit: once, a config with
 * three groups and exports whose names need escaping is loaded through
 * tenants.c (as the plugin does), the engine starts with the null backend
 * on an emulated SSD, the control socket listens in a private directory,
 * and two connections do a little I/O so the statistics hold rows.  Each
 * input is then written as it is to a new control client (a newline added
 * if it does not end in one), and the answers are read back.
 *
 * Checked, besides ASan and UBSan on the whole path:
 *  - one answer per command line, in order, each ended by an empty line
 *    (so no answer contains an empty line) and none empty; a line longer
 *    than CTL_LINE_MAX closes the client after the lines before it are
 *    answered; the server never stops answering (10 s);
 *  - every answer is valid UTF-8, an answer starting with "{" is one
 *    valid JSON value, an error starts with "error: ";
 *  - "help" and an empty line get their fixed answers; a line that is
 *    not UTF-8 text (a control character other than the tab) is refused,
 *    and what an answer quotes from a line is printable;
 *  - nothing an input does outlives it: afterwards every value "get"
 *    printed at start is set back with "set KEY VALUE" (so each value get
 *    prints, set accepts: the round trip), every group's weight and qos
 *    too, and then "get", "qos GROUP" and the weights are exactly what
 *    they were at start.  So inputs do not depend on each other.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#define CHECK_FAIL_ABORT        /* a failed check is a crash for libFuzzer */
#include "../unit/check.h"
#include "bounce.h"
#include "control.h"
#include "engine.h"
#include "hooks.h"
#include "qos.h"
#include "sched.h"
#include "tenants.h"
#include "utf8.h"
#include "fuzz.h"

#define ANSWER_WAIT_MS 10000    /* the server must answer within this */

/* ---- nbdkit's part, which this program stands in for ------------------- */

void nbdkit_error (const char *fs, ...);
void nbdkit_debug (const char *fs, ...);
struct nbdkit_extents;
int nbdkit_add_extent (struct nbdkit_extents *ex, uint64_t offset,
                       uint64_t length, uint32_t type);

static int verbose;             /* CFQ_FUZZ_VERBOSE=1: print the errors */

/* The control socket's duty cycle (control.c): half the time rather than
 * 5%, so that inputs full of "stats" run at a useful rate; the waits of
 * the duty cycle still happen.
 */
extern int cfq_debug_control_duty;

void
nbdkit_error (const char *fs, ...)
{
  va_list ap;

  if (!verbose)
    return;
  va_start (ap, fs);
  vfprintf (stderr, fs, ap);
  va_end (ap);
  fputc ('\n', stderr);
}

void
nbdkit_debug (const char *fs, ...)
{
}

int
nbdkit_add_extent (struct nbdkit_extents *ex, uint64_t offset,
                   uint64_t length, uint32_t type)
{
  return -1;
}

/* ---- the server --------------------------------------------------------------- */

static const char config[] =
  "[device]\n"
  "file = disk.img\n"
  "emulate = nvme\n"
  "max_connections = 8\n"
  "[scheduler]\n"
  "scheduler = cfq\n"
  "[group gold]\n"
  "weight = 600\n"
  "[group silver]\n"
  "weight = 300\n"
  "class = rt\n"
  "[group idle]\n"
  "class = idle\n"
  "[export db]\n"
  "group = gold\n"
  "offset = 0\n"
  "size = 64M\n"
  "[export we\"b\\x]\n"
  "group = silver\n"
  "offset = 64M\n"
  "size = 64M\n"
  "[export h\xc3\xa9]\n"
  "group = idle\n"
  "offset = 128M\n"
  "readonly = true\n";

static char dir[64];
static char sock_path[108];
static char **saved_get;        /* "KEY=VALUE" lines of "get" at start */
static size_t nr_saved_get;
static char *saved_state;       /* "get", the weights and qos, at start */

static void
write_file (const char *path, const char *s)
{
  FILE *f = fopen (path, "w");

  CHECK_NOTNULL (f);
  CHECK_EQ (fwrite (s, 1, strlen (s), f), strlen (s));
  CHECK_EQ (fclose (f), 0);
}

/* Two connections on different exports, each with a few reads and
 * writes done, so that stats has connection rows and histograms.
 */
static void
open_connections (void)
{
  static char buf[4096] __attribute__ ((aligned (4096)));

  for (size_t i = 0; i < 2; i++) {
    struct tn_conn *c;
    struct engine_qspec spec;
    struct sched_queue *q;

    CHECK_EQ (tn_conn_new (i, &c), 0);
    tn_qspec (i, &spec);
    CHECK_EQ (engine_queue_new (&q, &spec, c), 0);
    for (unsigned k = 0; k < 8; k++) {
      struct creq r;
      bool rd = k % 2 == 0;

      creq_init (&r, q, rd ? RQ_READ : RQ_WRITE, rd ? EOP_READ : EOP_WRITE,
                 FILE_DIRECT, buf, (uint64_t) k << 12, sizeof buf);
      r.acct = c;
      CHECK_EQ (engine_run (&r), 0);
    }
    /* Left open: the connections live as long as the server. */
  }
}

static int
ctl_connect (void)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  int fd = socket (AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

  CHECK (fd >= 0);
  memcpy (sun.sun_path, sock_path, strlen (sock_path) + 1);
  CHECK_EQ (connect (fd, (struct sockaddr *) &sun, sizeof sun), 0);
  return fd;
}

/* The whole conversation: send len bytes, read until nr answers (each
 * ended by an empty line) or, if eof, until the server closes.  Returns
 * what was read, NUL-terminated (*got_len without the NUL).
 */
static char *
converse (const char *data, size_t len, size_t nr, bool eof, size_t *got_len)
{
  int fd = ctl_connect ();
  size_t off = 0, got = 0, cap = 65536, answers = 0;
  char *in = malloc (cap);
  bool closed = false;

  CHECK_NOTNULL (in);
  CHECK_EQ (fcntl (fd, F_SETFL, O_NONBLOCK), 0);
  while (!closed && (eof || answers < nr)) {
    struct pollfd p = { .fd = fd, .events = POLLIN };
    int r;

    if (off < len)
      p.events |= POLLOUT;
    /* libFuzzer's SIGALRM (-timeout) interrupts poll: not a silence. */
    do
      r = poll (&p, 1, ANSWER_WAIT_MS);
    while (r == -1 && errno == EINTR);
    CHECK (r > 0);              /* no answer in 10 s: the server hangs */
    if (p.revents & POLLOUT) {
      ssize_t n = send (fd, data + off, len - off, MSG_NOSIGNAL);

      if (n < 0 && errno == EPIPE)
        break;                  /* it closed on us: told by the read */
      CHECK (n >= 0 || errno == EAGAIN);
      if (n > 0)
        off += n;
    }
    if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
      ssize_t n;

      if (cap - got < 4096) {
        cap *= 2;
        in = realloc (in, cap);
        CHECK_NOTNULL (in);
      }
      n = recv (fd, in + got, cap - got - 1, 0);
      if (n < 0 && errno == ECONNRESET)
        n = 0;
      CHECK (n >= 0 || errno == EAGAIN);
      if (n == 0)
        closed = true;
      for (ssize_t i = 0; i < n; i++) {
        /* An empty line: a '\n' right after a '\n'. */
        size_t at = got + i;
        if (in[at] == '\n' && at > 0 && in[at - 1] == '\n')
          answers++;
      }
      if (n > 0)
        got += n;
    }
  }
  close (fd);
  in[got] = '\0';
  *got_len = got;
  CHECK_EQ (answers, nr);
  CHECK (!eof || closed);
  return in;
}

/* ---- a small JSON checker (RFC 8259) ------------------------------------------- */

static const char *json_value (const char *p, const char *end, int depth);

static const char *
json_ws (const char *p, const char *end)
{
  while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r'))
    p++;
  return p;
}

static const char *
json_string (const char *p, const char *end)
{
  if (p >= end || *p != '"')
    return NULL;
  for (p++; p < end; ) {
    unsigned char ch = *p;

    if (ch == '"')
      return p + 1;
    if (ch < 0x20)
      return NULL;
    if (ch == '\\') {
      if (++p >= end)
        return NULL;
      if (*p == 'u') {
        for (int i = 1; i <= 4; i++)
          if (p + i >= end || !strchr ("0123456789abcdefABCDEF", p[i]) ||
              !p[i])
            return NULL;
        p += 5;
      }
      else if (*p && strchr ("\"\\/bfnrt", *p))
        p++;
      else
        return NULL;
    }
    else
      p++;
  }
  return NULL;
}

static const char *
json_number (const char *p, const char *end)
{
  const char *s;

  if (p < end && *p == '-')
    p++;
  if (p < end && *p == '0')
    p++;
  else if (p < end && *p >= '1' && *p <= '9')
    while (p < end && *p >= '0' && *p <= '9')
      p++;
  else
    return NULL;
  if (p < end && *p == '.') {
    s = ++p;
    while (p < end && *p >= '0' && *p <= '9')
      p++;
    if (p == s)
      return NULL;
  }
  if (p < end && (*p == 'e' || *p == 'E')) {
    p++;
    if (p < end && (*p == '+' || *p == '-'))
      p++;
    s = p;
    while (p < end && *p >= '0' && *p <= '9')
      p++;
    if (p == s)
      return NULL;
  }
  return p;
}

static const char *
json_word (const char *p, const char *end, const char *w)
{
  size_t n = strlen (w);

  return (size_t) (end - p) >= n && memcmp (p, w, n) == 0 ? p + n : NULL;
}

static const char *
json_value (const char *p, const char *end, int depth)
{
  if (depth > 64 || (p = json_ws (p, end)) >= end)
    return NULL;
  switch (*p) {
  case '{': case '[': {
    char close = *p == '{' ? '}' : ']';
    bool obj = *p == '{';

    p = json_ws (p + 1, end);
    if (p < end && *p == close)
      return p + 1;
    for (;;) {
      if (obj) {
        p = json_string (json_ws (p, end), end);
        if (!p || (p = json_ws (p, end)) >= end || *p != ':')
          return NULL;
        p++;
      }
      p = json_value (p, end, depth + 1);
      if (!p || (p = json_ws (p, end)) >= end)
        return NULL;
      if (*p == close)
        return p + 1;
      if (*p != ',')
        return NULL;
      p++;
    }
  }
  case '"': return json_string (p, end);
  case 't': return json_word (p, end, "true");
  case 'f': return json_word (p, end, "false");
  case 'n': return json_word (p, end, "null");
  default: return json_number (p, end);
  }
}

static bool
json_valid (const char *s, size_t n)
{
  const char *p = json_value (s, s + n, 0);

  return p && json_ws (p, s + n) == s + n;
}

/* ---- checking answers ----------------------------------------------------------- */

/* The answer to command line `line` is a[0..n) (without its empty line). */
static void
check_answer (const char *line, size_t line_len, const char *a, size_t n)
{
  CHECK (n > 0);                /* never empty */
  CHECK_EQ (a[n - 1], '\n');
  CHECK_EQ (utf8_check (a, n, false), n);
  if (a[0] == '{')
    CHECK (json_valid (a, n));
  if (strncmp (a, "error", 5) == 0)
    CHECK (strncmp (a, "error: ", 7) == 0);
  /* Printable text: no control character but the newlines and tabs. */
  for (size_t i = 0; i < n; i++)
    CHECK (a[i] == '\n' || a[i] == '\t' || (unsigned char) a[i] >= 0x20);
  /* The command, as the server sees it: up to a NUL, without one "\r". */
  line_len = strnlen (line, line_len);
  if (line_len && line[line_len - 1] == '\r')
    line_len--;
  if (line_len == 4 && memcmp (line, "help", 4) == 0)
    CHECK (n > 6 && strncmp (a, "stats ", 6) == 0);
  {
    size_t ws = 0;

    while (ws < line_len && (line[ws] == ' ' || line[ws] == '\t'))
      ws++;
    if (ws == line_len) {
      CHECK_EQ (n, strlen ("error: empty command\n"));
      CHECK (memcmp (a, "error: empty command\n", n) == 0);
    }
  }
}

/* Split an input into its lines and check each answer in got. */
static void
check_answers (const char *data, size_t len, const char *got, size_t got_len,
               size_t nr)
{
  const char *p = data, *g = got, *gend = got + got_len;

  for (size_t i = 0; i < nr; i++) {
    const char *nl = memchr (p, '\n', data + len - p);
    const char *a_end = NULL;

    CHECK_NOTNULL (nl);
    for (const char *q = g; q + 1 < gend; q++)
      if (q[0] == '\n' && q[1] == '\n') {
        a_end = q + 1;          /* the answer's own last newline */
        break;
      }
    CHECK_NOTNULL (a_end);
    check_answer (p, nl - p, g, a_end - g);
    g = a_end + 1;
    p = nl + 1;
  }
}

/* ---- the state an input must not leave behind ---------------------------------- */

static char *
ask (const char *cmd)
{
  size_t len;
  char *a = converse (cmd, strlen (cmd), 1, false, &len);

  CHECK (len >= 2);
  a[len - 1] = '\0';            /* without the empty line */
  return a;
}

/* "get", every group's weight (from stats flat) and qos, as one text. */
static char *
state_now (void)
{
  const struct cfg_model *m = tn_model ();
  char *get = ask ("get\n"), *flat = ask ("stats flat\n"), *s;
  size_t len = strlen (get) + 1;

  s = malloc (len);
  CHECK_NOTNULL (s);
  memcpy (s, get, len);
  for (size_t i = 0; i < m->nr_groups; i++) {
    char cmd[128], key[160], *q, *w;

    snprintf (cmd, sizeof cmd, "qos %s\n", m->groups[i].name);
    q = ask (cmd);
    /* stats flat: "group NAME ... weight=N ..." */
    snprintf (key, sizeof key, "group %s ", m->groups[i].name);
    w = strstr (flat, key);
    CHECK_NOTNULL (w);
    w = strstr (w, " weight=");
    CHECK_NOTNULL (w);
    len += strlen (m->groups[i].name) + strlen (q) + 32;
    s = realloc (s, len);
    CHECK_NOTNULL (s);
    snprintf (s + strlen (s), len - strlen (s), "%s %u %s", m->groups[i].name,
              (unsigned) strtoul (w + 8, NULL, 10), q);
    free (q);
  }
  free (get);
  free (flat);
  return s;
}

static void
expect_ok (const char *cmd)
{
  char *a = ask (cmd);

  if (strcmp (a, "ok\n") != 0) {
    fprintf (stderr, "fuzz-control: %s-> %s", cmd, a);
    CHECK_STREQ (a, "ok\n");
  }
  free (a);
}

static void
restore (void)
{
  const struct cfg_model *m = tn_model ();
  char cmd[512];

  for (size_t i = 0; i < nr_saved_get; i++) {
    char *eq = strchr (saved_get[i], '=');

    if (strncmp (saved_get[i], "scheduler=", 10) == 0)
      continue;                 /* cannot be set, and is never changed */
    snprintf (cmd, sizeof cmd, "set %.*s %s\n", (int) (eq - saved_get[i]),
              saved_get[i], eq + 1);
    expect_ok (cmd);
  }
  for (size_t i = 0; i < m->nr_groups; i++) {
    snprintf (cmd, sizeof cmd, "weight %s %u\n", m->groups[i].name,
              m->groups[i].weight);
    expect_ok (cmd);
    /* The config gives no group qos: take every key back to 0.  A key
     * may be refused while another still needs it (a burst without its
     * cap): passes until all are gone.
     */
    for (int pass = 0; pass < 4; pass++) {
      char *a;

      snprintf (cmd, sizeof cmd, "qos %s\n", m->groups[i].name);
      a = ask (cmd);
      if (strcmp (a, "none\n") == 0) {
        free (a);
        break;
      }
      free (a);
      for (size_t k = 0; k < qos_nr_keys; k++) {
        snprintf (cmd, sizeof cmd, "qos %s %s 0\n", m->groups[i].name,
                  qos_keys[k].name);
        free (ask (cmd));
      }
    }
  }
}

static void
server_start (void)
{
  char path[128];
  struct engine_cfg cfg = {
    .queue_depth = 32,
    .backend = &null_backend_ops,
  };
  char *get, *line, *save;

  verbose = getenv ("CFQ_FUZZ_VERBOSE") != NULL;
  cfq_debug_control_duty = 50;
  snprintf (dir, sizeof dir, "/tmp/cfq-fuzz-control.XXXXXX");
  CHECK_NOTNULL (mkdtemp (dir));
  snprintf (path, sizeof path, "%s/c.conf", dir);
  write_file (path, config);
  snprintf (sock_path, sizeof sock_path, "%s/ctl", dir);
  CHECK_EQ (tn_config ("config", path), 1);
  CHECK_EQ (tn_config ("control", sock_path), 1);
  CHECK_EQ (tn_validate (1 << 30), 0);
  CHECK_EQ (bounce_init (4096, CFG_BUFFER_POOL_DEFAULT,
                         (unsigned) tn_model ()->nr_groups, true), 0);
  CHECK_EQ (tn_prepare (tn_sched_name (), "null", 1 << 30, 0), 0);
  cfg.sched_ops = sched_lookup (tn_sched_name ());
  CHECK_NOTNULL (cfg.sched_ops);
  for (size_t i = 0; i < ENGINE_FILE_SLOTS; i++)
    cfg.fds[i] = -1;
  hooks_engine_cfg (&cfg);
  CHECK_EQ (engine_start (&cfg), 0);
  open_connections ();

  /* What an input must leave as it found it. */
  get = ask ("get\n");
  for (line = strtok_r (get, "\n", &save); line;
       line = strtok_r (NULL, "\n", &save)) {
    CHECK_NOTNULL (strchr (line, '='));
    saved_get = realloc (saved_get, (nr_saved_get + 1) * sizeof *saved_get);
    CHECK_NOTNULL (saved_get);
    saved_get[nr_saved_get] = strdup (line);
    CHECK_NOTNULL (saved_get[nr_saved_get]);
    nr_saved_get++;
  }
  free (get);
  CHECK (nr_saved_get > 10);    /* the scheduler, the depth, the tunables */
  /* The budgets are in stats: the socket's duty cycle (as set above)
   * and line limit, the request limit, the buffer pool's cap.
   */
  {
    char *st = ask ("stats\n"), want[64];

    CHECK_NOTNULL (strstr (st, "\"duty_pct\":50,"));
    snprintf (want, sizeof want, "\"line_max\":%u}", CTL_LINE_MAX);
    CHECK_NOTNULL (strstr (st, want));
    snprintf (want, sizeof want, "\"max_request\":%u,", CFG_MAX_REQUEST);
    CHECK_NOTNULL (strstr (st, want));
    snprintf (want, sizeof want, "\"buffers\":{\"cap\":%" PRIu64 ",",
              CFG_BUFFER_POOL_DEFAULT);
    CHECK_NOTNULL (strstr (st, want));
    free (st);
  }
  saved_state = state_now ();
}

/* The server lives until the process exits: then the engine and the socket
 * go, so LeakSanitizer and the next run see nothing left.
 */
static void
server_stop (void)
{
  engine_stop (NULL);
  for (size_t i = 0; i < nr_saved_get; i++)
    free (saved_get[i]);
  free (saved_get);
  free (saved_state);
  unlink (sock_path);
  {
    char path[128];
    snprintf (path, sizeof path, "%s/c.conf", dir);
    unlink (path);
  }
  rmdir (dir);
}

/* ---- the target ---------------------------------------------------------------- */

int
LLVMFuzzerTestOneInput (const uint8_t *data, size_t size)
{
  static bool started;
  char *in, *got, *now;
  size_t len = size, nr = 0, got_len, line_start = 0;
  bool too_long = false;

  if (!started) {
    server_start ();
    atexit (server_stop);
    started = true;
  }
  /* Every line complete: a newline at the end if there is none. */
  in = malloc (size + 1);
  CHECK_NOTNULL (in);
  if (size)
    memcpy (in, data, size);
  if (!size || in[size - 1] != '\n')
    in[len++] = '\n';
  /* The lines answered: those before the first longer than the server's
   * line buffer takes (with its newline), which closes the client.
   */
  for (size_t i = 0; i < len; i++)
    if (in[i] == '\n') {
      if (i - line_start + 1 > CTL_LINE_MAX) {
        too_long = true;
        break;
      }
      nr++;
      line_start = i + 1;
    }
  got = converse (in, len, nr, too_long, &got_len);
  check_answers (in, len, got, got_len, nr);
  free (got);
  free (in);

  restore ();
  now = state_now ();
  if (strcmp (now, saved_state) != 0) {
    fprintf (stderr, "fuzz-control: the state at start:\n%s\nand now:\n%s\n",
             saved_state, now);
    CHECK_STREQ (now, saved_state);
  }
  free (now);
  return 0;
}
