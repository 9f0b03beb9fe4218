/* control.c: the control socket (see control.h).
 *
 * Everything here runs on the dispatcher thread, inside its libev loop, so
 * the command handler can read and change scheduler state without locks,
 * and a change takes effect on the next dispatch decision.  Clients are
 * few and slow (an operator, cfqctl -i 1, a test), so the design is plain:
 * a read buffer per client, complete lines are handled in order, the
 * answer is queued and written as the socket accepts it.  A client that
 * sends a line longer than CTL_LINE_MAX or stops reading its answers past
 * CTL_OUT_MAX is disconnected, so no client can make the server grow.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <ev.h>

#include "control.h"

#define CTL_LINE_MAX 4096
#define CTL_OUT_MAX (16 << 20)

struct ctl_client {
  ev_io r, w;                   /* readable / writable watchers */
  struct control *c;
  struct ctl_client *next;      /* on c->clients */
  char in[CTL_LINE_MAX];        /* partial line */
  size_t in_len;
  struct strbuf out;            /* answers not yet written */
  size_t out_off;               /* bytes of out already written */
};

struct control {
  struct ev_loop *loop;
  ev_io accept;
  int fd;
  char *path;
  control_fn fn;
  void *opaque;
  struct ctl_client *clients;
};

void
strbuf_vprintf (struct strbuf *b, const char *fmt, va_list ap)
{
  va_list ap2;
  int n;

  if (b->oom)
    return;
  va_copy (ap2, ap);
  n = vsnprintf (b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0,
                 fmt, ap2);
  va_end (ap2);
  if (n < 0)
    return;
  if (!b->s || b->len + n + 1 > b->cap) {
    size_t cap = b->cap ? b->cap : 256;
    char *s;

    while (cap < b->len + n + 1)
      cap *= 2;
    s = realloc (b->s, cap);
    if (!s) {
      b->oom = 1;
      return;
    }
    b->s = s;
    b->cap = cap;
    vsnprintf (b->s + b->len, b->cap - b->len, fmt, ap);
  }
  b->len += n;
}

void
strbuf_printf (struct strbuf *b, const char *fmt, ...)
{
  va_list ap;

  va_start (ap, fmt);
  strbuf_vprintf (b, fmt, ap);
  va_end (ap);
}

void
strbuf_free (struct strbuf *b)
{
  free (b->s);
  b->s = NULL;
  b->len = b->cap = 0;
  b->oom = 0;
}

static void
client_close (struct ctl_client *cl)
{
  struct control *c = cl->c;
  struct ctl_client **pp;

  for (pp = &c->clients; *pp; pp = &(*pp)->next)
    if (*pp == cl) {
      *pp = cl->next;
      break;
    }
  ev_io_stop (c->loop, &cl->r);
  ev_io_stop (c->loop, &cl->w);
  close (cl->r.fd);
  strbuf_free (&cl->out);
  free (cl);
}

/* Write what we can; keep the write watcher on while anything is left. */
static void
client_flush (struct ctl_client *cl)
{
  while (cl->out_off < cl->out.len) {
    ssize_t r = write (cl->w.fd, cl->out.s + cl->out_off,
                       cl->out.len - cl->out_off);
    if (r < 0) {
      if (errno == EINTR)
        continue;
      if (errno == EAGAIN)
        break;
      client_close (cl);
      return;
    }
    cl->out_off += r;
  }
  if (cl->out_off == cl->out.len) {
    cl->out.len = cl->out_off = 0;
    ev_io_stop (cl->c->loop, &cl->w);
  }
  else
    ev_io_start (cl->c->loop, &cl->w);
}

static void
client_writable (struct ev_loop *loop, ev_io *w, int revents)
{
  client_flush (w->data);
}

static void
client_line (struct ctl_client *cl, char *line)
{
  size_t len = strlen (line);
  struct strbuf *o = &cl->out;

  if (len && line[len - 1] == '\r')
    line[--len] = '\0';
  cl->c->fn (cl->c->opaque, line, o);
  if (o->oom) {
    /* Say so rather than send a cut answer. */
    o->oom = 0;
    o->len = cl->out_off;
    strbuf_printf (o, "error: out of memory\n");
  }
  if (o->len > 0 && o->s[o->len - 1] != '\n')
    strbuf_printf (o, "\n");
  strbuf_printf (o, "\n");
}

static void
client_readable (struct ev_loop *loop, ev_io *w, int revents)
{
  struct ctl_client *cl = w->data;
  ssize_t r;
  char *nl;

  r = read (w->fd, cl->in + cl->in_len, sizeof cl->in - cl->in_len);
  if (r < 0 && (errno == EINTR || errno == EAGAIN))
    return;
  if (r <= 0) {
    client_close (cl);
    return;
  }
  cl->in_len += r;
  while ((nl = memchr (cl->in, '\n', cl->in_len)) != NULL) {
    size_t used = nl - cl->in + 1;

    *nl = '\0';
    client_line (cl, cl->in);
    memmove (cl->in, cl->in + used, cl->in_len - used);
    cl->in_len -= used;
  }
  if (cl->in_len == sizeof cl->in || cl->out.len > CTL_OUT_MAX) {
    client_close (cl);          /* line too long, or not reading answers */
    return;
  }
  client_flush (cl);
}

static void
control_accept (struct ev_loop *loop, ev_io *w, int revents)
{
  struct control *c = w->data;
  struct ctl_client *cl;
  int fd;

  fd = accept4 (c->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd == -1)
    return;
  cl = calloc (1, sizeof *cl);
  if (!cl) {
    close (fd);
    return;
  }
  cl->c = c;
  ev_io_init (&cl->r, client_readable, fd, EV_READ);
  ev_io_init (&cl->w, client_writable, fd, EV_WRITE);
  cl->r.data = cl->w.data = cl;
  cl->next = c->clients;
  c->clients = cl;
  ev_io_start (loop, &cl->r);
}

struct control *
control_start (struct ev_loop *loop, const char *path, control_fn fn,
               void *opaque, int *err)
{
  struct sockaddr_un sun = { .sun_family = AF_UNIX };
  struct control *c;

  if (strlen (path) >= sizeof sun.sun_path) {
    *err = -ENAMETOOLONG;
    return NULL;
  }
  c = calloc (1, sizeof *c);
  if (!c) {
    *err = -ENOMEM;
    return NULL;
  }
  c->fd = -1;
  c->path = strdup (path);
  if (!c->path)
    goto err_nomem;
  strcpy (sun.sun_path, path);
  c->fd = socket (AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (c->fd == -1)
    goto err;
  unlink (path);
  if (bind (c->fd, (struct sockaddr *) &sun, sizeof sun) == -1
      || listen (c->fd, 16) == -1)
    goto err;
  c->loop = loop;
  c->fn = fn;
  c->opaque = opaque;
  ev_io_init (&c->accept, control_accept, c->fd, EV_READ);
  c->accept.data = c;
  ev_io_start (loop, &c->accept);
  return c;

 err:
  *err = -errno;
  if (c->fd >= 0)
    close (c->fd);
  free (c->path);
  free (c);
  return NULL;
 err_nomem:
  *err = -ENOMEM;
  free (c);
  return NULL;
}

void
control_stop (struct control *c)
{
  if (!c)
    return;
  while (c->clients)
    client_close (c->clients);
  ev_io_stop (c->loop, &c->accept);
  close (c->fd);
  unlink (c->path);
  free (c->path);
  free (c);
}
