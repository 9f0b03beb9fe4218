/* nofreelocale.c: preloaded into nbdkit after the ASan runtime in
 * sanitizer builds (see tests/sanitizer/nbdkit): freelocale does nothing.
 *
 * With libasan (gcc's or clang's) preloaded, nbdkit 1.32 on Debian 12
 * deadlocks in exit once it has logged an error with %m: libp11-kit's
 * destructor calls freelocale, which waits forever for glibc's
 * __libc_setlocale_lock, whose reader count is at -1.  nbdkit's own file
 * plugin does it too (nbdkit -U - file /nonexistent --run true never
 * exits), so it is not ours; the lock is only needed here at exit, and a
 * locale not freed at exit costs nothing.
 */
#include <locale.h>

void
freelocale (locale_t l)
{
  (void) l;
}
