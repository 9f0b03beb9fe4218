/* reqbuf.c: nbdkit's request buffers and replies: aligned, within the
 * memory budget, and never held by a client that reads nothing.
 *
 * nbdkit 1.32 receives each request into a buffer its worker thread keeps
 * (threadlocal_buffer), grown with realloc to the largest request the
 * thread has seen, up to nbdkit's own 64 MiB, and kept until the
 * connection ends.  It sends each reply from that buffer with blocking
 * send(2) calls.  Three consequences, and a plugin is given no say in any
 * of them:
 *
 *  - glibc's realloc is never 512-byte aligned, so with O_DIRECT every
 *    request, aligned on the device or not, would be copied through the
 *    bounce pool (bounce.c);
 *  - the buffers are allocated before the plugin sees the request, so
 *    nothing the plugin does bounds them: connections x threads x 64 MiB;
 *  - a client that sends requests and reads no reply keeps every worker of
 *    its connection blocked in send, each holding its buffer, forever.
 *
 * nbdkit calls realloc, free and send through its own procedure linkage
 * table.  At .load, before nbdkit has a connection, this file points the
 * executable's GOT entries for them at the wrappers below (hostexe.c);
 * only nbdkit's own calls change.
 *
 * reqbuf_realloc gives every block of a page or more page-aligned memory
 * (bigmem_alloc: mmap from 128 KiB on, so that a freed block goes back to
 * the system whatever glibc's thresholds; the contents copied, the old
 * block freed), and counts such blocks against the request budget: the [device] memory budget
 * less its fixed parts (cfg_memory_parts).  A growth that would pass the
 * budget fails, so nbdkit answers that request ENOMEM and the connection
 * goes on; nothing already acknowledged is touched.  Blocks above 1 MiB
 * may take only three quarters of the budget: the last quarter is kept
 * for ordinary requests, so that clients that pin large buffers (by
 * asking for large reads and not reading the replies, say) cannot stop
 * other clients' small requests.  Blocks are known by
 * address in a small open-addressing table (only page-aligned addresses
 * are looked up, so nbdkit's many small frees cost one test); reqbuf_free
 * takes them off the count.
 *
 * reqbuf_send first tries the send without blocking (MSG_DONTWAIT, the
 * same single system call when the socket has room).  If the client's
 * socket is full it waits for room with poll, up to reply_timeout at a
 * time: a client that takes no byte of a reply for that long is cut off
 * (shutdown(2) of its socket, ETIMEDOUT to nbdkit), so its workers and
 * their buffers are freed.  TLS connections send through GnuTLS, which
 * this does not see: their clients are not cut off.
 *
 * `-D cfq.aligned_buffers=0` leaves all three of nbdkit's functions alone,
 * to measure the difference; then neither the budget nor the timeout
 * holds for nbdkit's buffers.
 */
#include <errno.h>
#include <inttypes.h>
#include <malloc.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/types.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "bigmem.h"
#include "hostexe.h"
#include "reqbuf.h"

#define REQBUF_ALIGN 4096               /* bytes: a page, any device's */
#define REQBUF_SMALL (1u << 20)         /* bytes: a block up to this may use
                                           the whole request budget; larger
                                           ones only 3/4 of it */
#define REQBUF_SLOTS0 (1u << 12)        /* the table's first size: a power
                                           of 2, doubled when half full */

/* -D cfq.aligned_buffers=0: leave nbdkit's realloc, free and send alone. */
NBDKIT_DLL_PUBLIC int cfq_debug_aligned_buffers = 1;

struct slot {
  uintptr_t p;                          /* block address; 0: empty */
  size_t size;                          /* bytes counted for it */
};

/* Guarded by mu, except `on`, set at load before any other thread. */
static struct {
  pthread_mutex_t mu;
  bool on;                              /* the wrappers are in place */
  uint64_t limit;                       /* bytes: request budget; 0: none */
  uint64_t timeout_ms;                  /* reply timeout; 0: none */
  struct reqbuf_stats st;
  struct slot *slots;                   /* nslots of them */
  size_t nslots;                        /* a power of 2; 0 before load */
} rb = {
  .mu = PTHREAD_MUTEX_INITIALIZER,
};

static size_t
slot_hash (uintptr_t p)
{
  return (size_t) ((p >> 12) * 0x9e3779b97f4a7c15ull >> 32) &
    (rb.nslots - 1);
}

/* The slot holding p, or the empty one where it would go. */
static struct slot *
slot_find (uintptr_t p)
{
  size_t i = slot_hash (p);

  while (rb.slots[i].p && rb.slots[i].p != p)
    i = (i + 1) & (rb.nslots - 1);
  return &rb.slots[i];
}

/* Under mu: room for one more entry, the table at most half full.  The
 * plugin's calloc and free are glibc's own, not the wrappers.  False if
 * the table cannot grow.
 */
static bool
slot_room (void)
{
  struct slot *old = rb.slots;
  size_t n = rb.nslots;

  if (rb.st.blocks + 1 <= n / 2)
    return true;
  rb.slots = calloc (n * 2, sizeof *rb.slots);
  if (!rb.slots) {
    rb.slots = old;
    return false;
  }
  rb.nslots = n * 2;
  for (size_t i = 0; i < n; i++)
    if (old[i].p)
      *slot_find (old[i].p) = old[i];
  free (old);
  return true;
}

/* Under mu: count block p of size bytes, which slot_room made room for. */
static void
track (void *p, size_t size)
{
  struct slot *s = slot_find ((uintptr_t) p);

  s->p = (uintptr_t) p;
  s->size = size;
  rb.st.in_use += size;
  rb.st.blocks++;
  if (rb.st.in_use > rb.st.peak)
    rb.st.peak = rb.st.in_use;
}

/* Remove the entry at s, shifting later entries of its run back so that
 * lookups never stop at a hole (linear probing deletion).
 */
static void
slot_remove (struct slot *s)
{
  size_t i = (size_t) (s - rb.slots), j = i, mask = rb.nslots - 1;

  rb.slots[i].p = 0;
  for (;;) {
    size_t k;

    j = (j + 1) & mask;
    if (!rb.slots[j].p)
      return;
    k = slot_hash (rb.slots[j].p);
    /* Leave it if its home lies cyclically in (i, j]. */
    if (i <= j ? (i < k && k <= j) : (i < k || k <= j))
      continue;
    rb.slots[i] = rb.slots[j];
    rb.slots[j].p = 0;
    i = j;
  }
}

/* Take p off the count if it is ours; its counted size, or 0. */
static size_t
untrack (void *p)
{
  struct slot *s;
  size_t size = 0;

  if (!p || ((uintptr_t) p & (REQBUF_ALIGN - 1)))
    return 0;
  pthread_mutex_lock (&rb.mu);
  if (!rb.nslots) {
    pthread_mutex_unlock (&rb.mu);
    return 0;
  }
  s = slot_find ((uintptr_t) p);
  if (s->p) {
    size = s->size;
    rb.st.in_use -= size;
    rb.st.blocks--;
    slot_remove (s);
  }
  pthread_mutex_unlock (&rb.mu);
  return size;
}

static void
reqbuf_free (void *p)
{
  size_t size = untrack (p);

  if (size)
    bigmem_free (p, size, REQBUF_ALIGN);
  else
    free (p);
}

/* p's counted size, or 0 if it is not ours; p stays counted. */
static size_t
counted (void *p)
{
  size_t size = 0;

  if (!p || ((uintptr_t) p & (REQBUF_ALIGN - 1)))
    return 0;
  pthread_mutex_lock (&rb.mu);
  if (rb.nslots) {
    struct slot *s = slot_find ((uintptr_t) p);

    if (s->p)
      size = s->size;
  }
  pthread_mutex_unlock (&rb.mu);
  return size;
}

/* A block of ours (old bytes, counted) stays counted until it is freed:
 * it is mmapped (bigmem), and its entry is how reqbuf_free knows to give
 * it back as such.  So a failed growth leaves p as it was, entry and all.
 */
static void *
reqbuf_realloc (void *p, size_t n)
{
  size_t old = counted (p);
  void *q;

  if (n < REQBUF_ALIGN) {
    if (!old)
      return realloc (p, n);
    q = malloc (n ? n : 1);
    if (!q)                             /* p stays: it still counts */
      return NULL;
    memcpy (q, p, n);
    reqbuf_free (p);
    return q;
  }
  pthread_mutex_lock (&rb.mu);
  if ((rb.limit && rb.st.in_use - old + n > (n <= REQBUF_SMALL ? rb.limit :
                                              rb.limit / 4 * 3)) ||
      !slot_room ()) {
    rb.st.refused++;
    pthread_mutex_unlock (&rb.mu);
    errno = ENOMEM;
    return NULL;
  }
  rb.st.in_use += n;                    /* reserved before allocating */
  pthread_mutex_unlock (&rb.mu);

  q = bigmem_alloc (n, REQBUF_ALIGN);
  pthread_mutex_lock (&rb.mu);
  rb.st.in_use -= n;
  if (!q || !slot_room ()) {
    pthread_mutex_unlock (&rb.mu);
    bigmem_free (q, n, REQBUF_ALIGN);
    errno = ENOMEM;
    return NULL;
  }
  track (q, n);                         /* the reservation becomes q's */
  pthread_mutex_unlock (&rb.mu);
  if (p) {
    size_t have = old ? old : malloc_usable_size (p);

    memcpy (q, p, have < n ? have : n);
    reqbuf_free (p);
  }
  return q;
}

/* Cut the client off: nbdkit sees ETIMEDOUT and ends the connection. */
static ssize_t
cut_off (int fd)
{
  pthread_mutex_lock (&rb.mu);
  rb.st.timeouts++;
  pthread_mutex_unlock (&rb.mu);
  nbdkit_error ("cfq: a client took no reply for %" PRIu64 " ms: its "
                "connection is closed", rb.timeout_ms);
  shutdown (fd, SHUT_RDWR);
  errno = ETIMEDOUT;
  return -1;
}

static ssize_t
reqbuf_send (int fd, const void *buf, size_t len, int flags)
{
  size_t done = 0;
  ssize_t r;

  r = send (fd, buf, len, flags | MSG_DONTWAIT);
  if (r >= 0 && (size_t) r == len)
    return r;
  if (r == -1 && errno != EAGAIN && errno != EWOULDBLOCK)
    return -1;
  if (rb.timeout_ms == 0)               /* no timeout: as nbdkit would */
    return r == -1 ? send (fd, buf, len, flags) : r;
  if (r > 0)
    done = (size_t) r;
  while (done < len) {
    struct pollfd pfd = { .fd = fd, .events = POLLOUT };
    int pr = poll (&pfd, 1, (int) rb.timeout_ms);

    if (pr == 0)
      return cut_off (fd);
    if (pr == -1) {
      if (errno == EINTR)
        continue;
      return -1;
    }
    r = send (fd, (const char *) buf + done, len - done,
              flags | MSG_DONTWAIT);
    if (r == -1) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
        continue;
      return -1;
    }
    done += (size_t) r;
  }
  return (ssize_t) done;
}

void
reqbuf_install (void)
{
  struct hostexe e;
  int n[3];

  if (!cfq_debug_aligned_buffers)
    return;
  if (hostexe_find (&e)) {
    nbdkit_debug ("cfq: request buffers: nbdkit's executable not found");
    return;
  }
  rb.slots = calloc (REQBUF_SLOTS0, sizeof *rb.slots);
  if (!rb.slots)
    return;
  rb.nslots = REQBUF_SLOTS0;
  /* free first: a block realloc hands out must be seen when freed. */
  n[1] = hostexe_hook (&e, "free", (void *) reqbuf_free);
  if (n[1] <= 0) {
    /* n[1] < 0: some entries may be set: keep the table they use. */
    nbdkit_debug ("cfq: request buffers: nbdkit does not call free "
                  "through its GOT: its buffers stay as glibc makes them");
    return;
  }
  n[0] = hostexe_hook (&e, "realloc", (void *) reqbuf_realloc);
  n[2] = hostexe_hook (&e, "send", (void *) reqbuf_send);
  rb.on = n[0] > 0;
  nbdkit_debug ("cfq: request buffers: %s; replies %s",
                rb.on ? "page aligned, counted against the budget" :
                "as glibc makes them (no realloc in nbdkit's GOT)",
                n[2] > 0 ? "time out" : "cannot time out (no send in "
                "nbdkit's GOT)");
}

void
reqbuf_configure (uint64_t limit, uint64_t timeout_ns)
{
  pthread_mutex_lock (&rb.mu);
  rb.limit = limit;
  rb.st.limit = limit;
  pthread_mutex_unlock (&rb.mu);
  /* Read without the lock by senders: set before any connection. */
  rb.timeout_ms = (timeout_ns + 999999) / 1000000;
}

bool
reqbuf_aligned (void)
{
  return rb.on;
}

void
reqbuf_stats (struct reqbuf_stats *st)
{
  pthread_mutex_lock (&rb.mu);
  *st = rb.st;
  pthread_mutex_unlock (&rb.mu);
}
