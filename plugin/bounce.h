/* bounce.h: the pool of aligned request buffers, for requests O_DIRECT
 * cannot take as they are (an unaligned client buffer, a span rounded out
 * to whole blocks).
 *
 * A request asks for its buffer when the scheduler dispatches it (the
 * engine does, engine.h), never before: so nothing holds a buffer while
 * it waits for its turn or for a cap, and every buffer in use belongs to
 * a request the scheduler has let go.  The groups share the pool by the
 * rule of core/poolshare.c.
 *
 *   err = bounce_take (&w, grp, n);   on the dispatcher, never blocks:
 *     0        w.buf is the buffer, or NULL: only its room was given,
 *              and the requester's thread calls bounce_alloc (&w)
 *              (no allocation or free on the dispatcher)
 *     -EAGAIN  w waits; w.granted (&w) is called once it is given (as
 *              for 0), on the thread that gave back what made room
 *     -ENOMEM  never (n over the cap, or no pool)
 *   ... I/O into or out of w.buf ...
 *   bounce_put (w.buf);                once done with it, any thread
 *
 * Every buffer given is paired with one bounce_put of it; a request
 * holds at most one buffer, and takes it after any range lock it needs
 * (io.c).
 *
 * Threads: bounce_init and bounce_fini on nbdkit's main thread (get_ready,
 * unload); the rest on any thread.  One mutex guards the pool; granted is
 * called without it.
 */
#ifndef CFQ_BOUNCE_H
#define CFQ_BOUNCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the pool holds and did (bytes and counts since bounce_init). */
struct bounce_stats {
  size_t cap;                   /* bytes: most it allocates at once */
  size_t total;                 /* bytes allocated: in use + cached */
  size_t in_use;                /* bytes handed out */
  size_t peak;                  /* bytes: most in use at once */
  uint64_t gets;                /* buffers handed out */
  uint64_t waits;               /* gets that waited for room */
  uint64_t wait_ns;             /* time they waited, in total */
  uint64_t allocs, frees;       /* buffers allocated and freed */
  unsigned groups;              /* groups the pool knows */
  unsigned active;              /* groups holding or waiting for buffers */
  size_t share;                 /* bytes: cap / active (cap if none) */
  bool shares;                  /* the groups' shares are applied */
};

/* One group's part (bytes and counts since bounce_init). */
struct bounce_grp_stats {
  size_t in_use;                /* bytes its requests hold */
  size_t peak;                  /* bytes: most it held at once */
  unsigned buffers;             /* buffers it holds */
  unsigned waiting;             /* its requests waiting for a buffer */
  uint64_t gets;                /* buffers it was given */
  uint64_t waits;               /* of which after a wait */
  uint64_t wait_ns;             /* time they waited, in total */
  uint64_t wait_max_ns;         /* the longest wait */
  uint64_t over_share;          /* buffers given past its share (beyond
                                   its only one) while another group
                                   waited: 0 with the shares applied */
};

struct bounce_wait;
typedef void (*bounce_granted_fn) (struct bounce_wait *w);

/* A request's ask for a buffer: the requester's memory, the pool's from
 * bounce_take until it is given.
 */
struct bounce_wait {
  struct bounce_wait *next;     /* on its group's waiting list */
  size_t size;                  /* bytes: the buffer's (rounded up) */
  unsigned grp;                 /* the group whose share it is of */
  uint64_t seq;                 /* its place in the order of arrival */
  uint64_t t0;                  /* ns: when it began to wait; 0: it did not */
  bool waiting;                 /* on the list, not given yet */
  void *buf;                    /* given: the buffer, or NULL (room only) */
  void *drop;                   /* room only: cached buffers to free */
  bounce_granted_fn granted;    /* [requester] called once given after
                                   a wait */
  void *ctx;                    /* [requester] for granted */
};

/* Every buffer will be aligned to align bytes, the pool holding at most
 * cap bytes (>= the largest buffer a request needs), shared by groups
 * 0..groups-1 (shares false: the oldest waiter that fits is served,
 * whatever its group holds; for comparison).  0 or -errno.
 */
extern int bounce_init (size_t align, size_t cap, unsigned groups,
                        bool shares);
/* Free the cached buffers (none may be in use, nobody waiting).
 * Harmless without bounce_init.
 */
extern void bounce_fini (void);

/* See the top.  n bytes from group grp's share (a group the pool does
 * not know is taken as the last one).
 */
extern int bounce_take (struct bounce_wait *w, unsigned grp, size_t n);
/* Room only: allocate w->buf, freeing what was dropped to make room.
 * 0, or -ENOMEM and the room is given back (nothing to put).
 */
extern int bounce_alloc (struct bounce_wait *w);
extern void bounce_put (void *p);
extern void bounce_stats (struct bounce_stats *st);
/* 0, or -ENOENT for a group the pool does not know. */
extern int bounce_grp_stats (unsigned grp, struct bounce_grp_stats *st);

#endif /* CFQ_BOUNCE_H */
