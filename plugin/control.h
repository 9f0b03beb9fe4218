/* control.h: the control socket, served by the dispatcher's libev loop.
 *
 * One command per line in, one answer out, ended by an empty line.  The
 * socket knows nothing of what the commands mean: each line goes to the
 * handler, on the dispatcher thread, which appends its answer to a
 * strbuf.  An answer that is an error starts with "error: ".
 */
#ifndef CFQ_CONTROL_H
#define CFQ_CONTROL_H

#include <stdarg.h>
#include <stddef.h>

struct ev_loop;

/* A growable string for answers. */
struct strbuf {
  char *s;                      /* NUL-terminated, malloc'd, may be NULL */
  size_t len;                   /* bytes used, not counting the NUL */
  size_t cap;                   /* bytes allocated */
  int oom;                      /* an append failed: the text is cut */
};

extern void strbuf_printf (struct strbuf *b, const char *fmt, ...)
  __attribute__ ((format (printf, 2, 3)));
extern void strbuf_vprintf (struct strbuf *b, const char *fmt, va_list ap);
extern void strbuf_free (struct strbuf *b);

typedef void (*control_fn) (void *opaque, const char *line,
                            struct strbuf *out);

struct control;

/* Listen on a Unix socket at path (an existing socket file is replaced).
 * Returns NULL and sets *err to -errno on failure.  Must be called on the
 * thread that runs loop, or before that thread starts.
 */
extern struct control *control_start (struct ev_loop *loop, const char *path,
                                      control_fn fn, void *opaque, int *err);
/* Close every client and the listener, unlink the socket. */
extern void control_stop (struct control *c);

#endif /* CFQ_CONTROL_H */
