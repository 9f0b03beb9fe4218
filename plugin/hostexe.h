/* hostexe.h: the nbdkit executable the plugin is loaded into: its loaded
 * segments, and its GOT entries (hostexe.c).
 *
 * Thread: for .load only, before nbdkit has any other thread.
 */
#ifndef CFQ_PLUGIN_HOSTEXE_H
#define CFQ_PLUGIN_HOSTEXE_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct hostexe {
  uintptr_t base;                       /* load bias */
  const ElfW(Phdr) *phdr;               /* program headers, phnum of them */
  size_t phnum;
  const ElfW(Dyn) *dynamic;             /* NULL if none */
};

/* The executable whose code holds nbdkit_error.  0 or -ENOENT. */
extern int hostexe_find (struct hostexe *e);
/* Is [p, p+len) inside one loaded segment with permission flag pf? */
extern bool hostexe_contains (const struct hostexe *e, uintptr_t p,
                              size_t len, ElfW(Word) pf);
/* Write n bytes at `at`, inside the executable: its page made writable
 * for the copy, then given back the protection it had after loading.
 * 0 or -errno.
 */
extern int hostexe_poke (const struct hostexe *e, uintptr_t at,
                         const void *bytes, size_t n);
/* Point the executable's GOT entries for the function sym at fn (its
 * calls through the PLT, and its address-taken uses).  The number of
 * entries changed, or -errno.  Calls made by other objects are not
 * affected.
 */
extern int hostexe_hook (const struct hostexe *e, const char *sym, void *fn);

#endif
