/* io.h: the data path: NBD commands as requests for the engine.
 *
 * Offsets are the export's (0 is the start of the export); every function
 * returns 0 or -errno and blocks its worker until the I/O is done.
 *
 * Threads: io_init and io_fini on nbdkit's main thread (get_ready,
 * cleanup); the rest on nbdkit's workers, each with its own connection's
 * struct io_conn, which the data path only reads.
 */
#ifndef CFQ_IO_H
#define CFQ_IO_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backing.h"
#include "sched.h"

/* What the data path needs to know of a connection. */
struct io_conn {
  struct sched_queue *q;                /* the connection's queue */
  const struct backing *b;              /* the file its requests go to */
  uint64_t base;                        /* bytes: export's offset in b */
  uint64_t size;                        /* bytes: export's size */
  bool writes_sync;                     /* export has writes=sync */
  bool writes_async;                    /* export has writes=async */
  void *acct;                           /* accounting (creq->acct) */
  unsigned pool_grp;                    /* its group: its requests' buffers
                                           come from its share of the pool */
  uint64_t wb_seen;                     /* atomic: b->shared->wb_errors at
                                           this connection's last flush */
  uint64_t own_seen;                    /* atomic: b->shared->wb_own then */
  int flush_fd;                         /* its own descriptor of b's file,
                                           for its flushes, or -1 (io.c) */
  pthread_mutex_t flush_mu;             /* one flush of it at a time */
};

/* A new connection: its own descriptor of its file, which its flushes
 * sync, unless readonly (io.c says why; if the file cannot be opened
 * again, it flushes the shared one, and that is logged once), and the
 * file's write-back errors so far, which are not its to hear of.
 */
extern void io_conn_init (struct io_conn *c, bool readonly);
extern void io_conn_fini (struct io_conn *c);

/* Buffers aligned to align bytes (bk_buf_align).  0 or -errno. */
extern int io_init (size_t align);
extern void io_fini (void);

extern int io_pread (struct io_conn *c, void *buf, uint32_t count,
                     uint64_t off);
extern int io_pwrite (struct io_conn *c, const void *buf, uint32_t count,
                      uint64_t off, bool fua);
extern int io_flush (struct io_conn *c);
extern int io_trim (struct io_conn *c, uint32_t count, uint64_t off,
                    bool fua);
/* -ENOTSUP if fast and there is no fast way to zero here. */
extern int io_zero (struct io_conn *c, uint32_t count, uint64_t off,
                    bool may_trim, bool fast, bool fua);

#endif /* CFQ_IO_H */
