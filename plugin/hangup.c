/* hangup.c: keep nbdkit 1.32.4 - 1.33.9 from aborting when a client
 * hangs up with replies in flight.
 *
 * The bug.  Those versions of nbdkit (Debian 12 ships 1.32.5) serve each
 * connection with several worker threads.  When a client goes away with
 * two or more replies still to be sent, the first worker whose send fails
 * marks the connection dead and shuts its socket down, setting the
 * connection's output descriptor to -1.  A second worker that had already
 * checked the connection's status and was waiting for the write lock then
 * reaches
 *
 *     raw_send_socket:  assert (sock >= 0);      (server/connections.c)
 *
 * and the whole server aborts, every tenant with it.  Any client can do it
 * on purpose: 64 pipelined reads and a close are enough.  The plugin cannot
 * stop it by its own behaviour: the window is in nbdkit, after our callback
 * has returned.  nbdkit 1.33.10 replaced the assertion by an error return
 * (EBADF), which is all that is needed on a socket: the descriptor itself
 * stays open until the connection is freed (only shutdown(2) was called),
 * so the late sender gets EPIPE, or EBADF from -1, and the connection ends
 * as dead connections do.
 *
 * The guard.  At load, before nbdkit has any connection, this file finds
 * those assertions in the running nbdkit's own code and turns the
 * conditional jump that leads to each into a no-op, so the send goes ahead
 * with -1 and fails with EBADF: the behaviour of the fixed nbdkit.  It
 * touches nothing it has not proven to be exactly that jump:
 *
 *   - the executable must be the one that exports nbdkit_error (the
 *     server we are loaded into), on x86-64;
 *   - a candidate is a `js` (0f 88 rel32, or 78 rel8) right after a
 *     `test reg, reg` (85 with a register-to-itself ModRM), in an
 *     executable segment of it, whose target is the compiler's assertion
 *     call:
 *         lea rcx, [rip+function]     48 8d 0d disp32
 *         mov edx, LINE               ba imm32
 *         lea rsi, [rip+file]         48 8d 35 disp32
 *         lea rdi, [rip+expression]   48 8d 3d disp32
 *         call __assert_fail          e8 rel32
 *     with the strings resolved inside the executable's own segments:
 *     the expression is exactly "sock >= 0", the file ends in
 *     "connections.c", and the function is raw_send_socket or
 *     raw_send_other; and no two candidates may lead to one assertion;
 *   - only then is the jump replaced by a NOP of its length, with the page
 *     made writable for the copy and its protection restored after.
 *
 * So it is a no-op on a fixed nbdkit (the string is not there), and on a
 * build laid out differently it changes nothing and says so: the operator
 * can then run nbdkit with --threads=1 (one request of each connection in
 * the plugin at a time), which avoids the bug at a cost in throughput.
 * `-D cfq.hangup_guard=0` turns it off (to show the abort in tests); its
 * state is in --dump-plugin (cfq_hangup_guard=) and in stats.
 */
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "hangup.h"
#include "hostexe.h"

/* -D cfq.hangup_guard=0: leave nbdkit as it is. */
NBDKIT_DLL_PUBLIC int cfq_debug_hangup_guard = 1;

static enum hangup_state guard_state = HANGUP_NOT_RUN;
static unsigned guard_sites;            /* jumps made no-ops */

#define GUARD_SITES_MAX 4               /* the two send functions, spare */

static int32_t
rd32 (uintptr_t p)
{
  int32_t v;

  memcpy (&v, (const void *) p, sizeof v);
  return v;
}

/* The NUL-terminated string at p, if it lies in a readable segment and is
 * at most max bytes long; else NULL.
 */
static const char *
string_at (const struct hostexe *e, uintptr_t p, size_t max)
{
  for (size_t n = 0; n <= max; n++) {
    if (!hostexe_contains (e, p + n, 1, PF_R))
      return NULL;
    if (*(const char *) (p + n) == '\0')
      return (const char *) p;
  }
  return NULL;
}

static bool
ends_with (const char *s, const char *tail)
{
  size_t n = strlen (s), t = strlen (tail);

  return n >= t && strcmp (s + n - t, tail) == 0;
}

/* Is the code at t the assertion this file is about? */
static bool
is_send_assert (const struct hostexe *e, uintptr_t t)
{
  static const unsigned char lea_rcx[] = { 0x48, 0x8d, 0x0d };
  static const unsigned char lea_rsi[] = { 0x48, 0x8d, 0x35 };
  static const unsigned char lea_rdi[] = { 0x48, 0x8d, 0x3d };
  const unsigned char *c = (const unsigned char *) t;
  const char *fn, *file, *expr;

  if (!hostexe_contains (e, t, 27, PF_X) ||
      memcmp (c, lea_rcx, 3) || c[7] != 0xba ||
      memcmp (c + 12, lea_rsi, 3) || memcmp (c + 19, lea_rdi, 3) ||
      c[26] != 0xe8)
    return false;
  fn = string_at (e, t + 7 + rd32 (t + 3), 64);
  file = string_at (e, t + 19 + rd32 (t + 15), 256);
  expr = string_at (e, t + 26 + rd32 (t + 22), 64);
  return fn && file && expr && strcmp (expr, "sock >= 0") == 0 &&
    ends_with (file, "connections.c") &&
    (strcmp (fn, "raw_send_socket") == 0 ||
     strcmp (fn, "raw_send_other") == 0);
}

/* Does the executable hold the expression at all (a build with the bug)? */
static bool
has_expression (const struct hostexe *e)
{
  static const char needle[] = "sock >= 0";

  for (size_t i = 0; i < e->phnum; i++) {
    const ElfW(Phdr) *ph = &e->phdr[i];

    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_R) &&
        memmem ((const void *) (e->base + ph->p_vaddr), ph->p_filesz,
                needle, sizeof needle))
      return true;
  }
  return false;
}

/* Is the instruction ending at p a `test reg, reg` (the sign test of
 * `sock`)?
 */
static bool
after_sign_test (const struct hostexe *e, uintptr_t p)
{
  const unsigned char *c = (const unsigned char *) p;

  return hostexe_contains (e, p - 2, 2, PF_X) && c[-2] == 0x85 && c[-1] >= 0xc0 &&
    ((c[-1] >> 3) & 7) == (c[-1] & 7);
}

void
hangup_guard_install (void)
{
  struct hostexe e;
  uintptr_t sites[GUARD_SITES_MAX];
  uintptr_t target[GUARD_SITES_MAX];    /* the assertion each leads to */
  size_t len[GUARD_SITES_MAX];          /* bytes of each jump */
  unsigned nsites = 0;

  if (!cfq_debug_hangup_guard) {
    guard_state = HANGUP_OFF;
    return;
  }
  if (hostexe_find (&e)) {
    guard_state = HANGUP_UNKNOWN;
    nbdkit_debug ("cfq: hang-up guard: nbdkit's executable not found");
    return;
  }
  if (!has_expression (&e)) {
    guard_state = HANGUP_NOT_NEEDED;
    return;
  }
#if !defined (__x86_64__)
  guard_state = HANGUP_UNKNOWN;
  nbdkit_debug ("cfq: hang-up guard: not available on this architecture");
  return;
#endif
  /* Collect every candidate first: change nothing unless all is as
   * expected.
   */
  for (size_t i = 0; i < e.phnum; i++) {
    const ElfW(Phdr) *ph = &e.phdr[i];
    uintptr_t lo, hi;

    if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
      continue;
    lo = e.base + ph->p_vaddr;
    hi = lo + ph->p_filesz;
    for (uintptr_t p = lo; p + 2 <= hi; p++) {
      const unsigned char *c = (const unsigned char *) p;
      uintptr_t t;
      size_t n;

      if (c[0] == 0x78)
        n = 2, t = p + 2 + (int8_t) c[1];
      else if (p + 6 <= hi && c[0] == 0x0f && c[1] == 0x88)
        n = 6, t = p + 6 + rd32 (p + 2);
      else
        continue;
      if (!after_sign_test (&e, p) || !is_send_assert (&e, t))
        continue;
      for (unsigned j = 0; j < nsites; j++)
        if (target[j] == t) {
          guard_state = HANGUP_UNKNOWN;
          nbdkit_debug ("cfq: hang-up guard: two jumps lead to one "
                        "place; nbdkit left as it is");
          return;
        }
      if (nsites == GUARD_SITES_MAX) {
        guard_state = HANGUP_UNKNOWN;
        nbdkit_debug ("cfq: hang-up guard: more sites than expected; "
                      "nbdkit left as it is");
        return;
      }
      len[nsites] = n;
      target[nsites] = t;
      sites[nsites++] = p;
    }
  }
  if (nsites == 0) {
    guard_state = HANGUP_UNKNOWN;
    nbdkit_debug ("cfq: hang-up guard: this nbdkit's send path is not of a "
                  "form the guard knows; it is left as it is (run it "
                  "with --threads=1 if clients may hang up with requests "
                  "in flight)");
    return;
  }
  for (unsigned i = 0; i < nsites; i++) {
    static const unsigned char nop6[] = { 0x66, 0x0f, 0x1f, 0x44, 0, 0 };
    static const unsigned char nop2[] = { 0x66, 0x90 };
    int err = hostexe_poke (&e, sites[i], len[i] == 6 ? nop6 : nop2, len[i]);

    if (err) {
      guard_state = i ? HANGUP_PARTIAL : HANGUP_UNKNOWN;
      nbdkit_debug ("cfq: hang-up guard: mprotect: %s", strerror (-err));
      return;
    }
    guard_sites++;
  }
  guard_state = HANGUP_ON;
  nbdkit_debug ("cfq: hang-up guard: on, nbdkit's send fails with EBADF "
                "on a closed connection (%u place%s)", nsites,
                nsites == 1 ? "" : "s");
}

enum hangup_state
hangup_guard_state (unsigned *sites)
{
  if (sites)
    *sites = guard_sites;
  return guard_state;
}

const char *
hangup_state_name (enum hangup_state s)
{
  switch (s) {
  case HANGUP_NOT_RUN: return "not-run";
  case HANGUP_ON: return "on";
  case HANGUP_NOT_NEEDED: return "not-needed";
  case HANGUP_OFF: return "off";
  case HANGUP_PARTIAL: return "partial";
  case HANGUP_UNKNOWN: return "unknown-build";
  }
  return "?";
}
