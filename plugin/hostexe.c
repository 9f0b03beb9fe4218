/* hostexe.c: the nbdkit executable the plugin is loaded into.
 *
 * Two files change nbdkit's own behaviour at load, where nbdkit 1.32 gives
 * a plugin no other way: hangup.c (a send assertion made an error return)
 * and reqbuf.c (nbdkit's realloc, free and send through wrappers).  Both
 * need the executable's loaded segments, found the way the dynamic linker
 * lists them (dl_iterate_phdr), and reqbuf.c its GOT entries, found the
 * way the dynamic linker fills them: the executable's DT_JMPREL and
 * DT_RELA relocations of type R_X86_64_JUMP_SLOT or R_X86_64_GLOB_DAT
 * whose symbol has the name asked for.  Pointing such an entry elsewhere
 * changes the calls the executable makes, and nothing else: libraries,
 * glibc and the plugin keep their own.
 */
#include <errno.h>
#include <link.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "hostexe.h"

static int
find_cb (struct dl_phdr_info *info, size_t size, void *data)
{
  struct hostexe *e = data;
  uintptr_t fn = (uintptr_t) nbdkit_error;
  const ElfW(Dyn) *dynamic = NULL;
  bool ours = false;

  for (size_t i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t lo = info->dlpi_addr + ph->p_vaddr;

    if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X) &&
        fn >= lo && fn < lo + ph->p_memsz)
      ours = true;
    if (ph->p_type == PT_DYNAMIC)
      dynamic = (const ElfW(Dyn) *) lo;
  }
  if (!ours)
    return 0;
  e->base = info->dlpi_addr;
  e->phdr = info->dlpi_phdr;
  e->phnum = info->dlpi_phnum;
  e->dynamic = dynamic;
  return 1;
}

int
hostexe_find (struct hostexe *e)
{
  memset (e, 0, sizeof *e);
  return dl_iterate_phdr (find_cb, e) ? 0 : -ENOENT;
}

bool
hostexe_contains (const struct hostexe *e, uintptr_t p, size_t len,
                  ElfW(Word) pf)
{
  for (size_t i = 0; i < e->phnum; i++) {
    const ElfW(Phdr) *ph = &e->phdr[i];
    uintptr_t lo = e->base + ph->p_vaddr, hi = lo + ph->p_filesz;

    if (ph->p_type == PT_LOAD && (ph->p_flags & pf) && p >= lo &&
        p <= hi && len <= hi - p)
      return true;
  }
  return false;
}

/* A d_ptr of the dynamic section as an address: glibc relocates them in
 * place; a loader that does not leaves them relative to the load bias.
 */
static uintptr_t
dyn_addr (const struct hostexe *e, uintptr_t p)
{
  return p && p < e->base ? p + e->base : p;
}

/* Is p in the executable's RELRO range (made read-only after
 * relocation)?
 */
static bool
in_relro (const struct hostexe *e, uintptr_t p)
{
  for (size_t i = 0; i < e->phnum; i++) {
    const ElfW(Phdr) *ph = &e->phdr[i];
    uintptr_t lo = e->base + ph->p_vaddr;

    if (ph->p_type == PT_GNU_RELRO && p >= lo && p < lo + ph->p_memsz)
      return true;
  }
  return false;
}

/* The protection the page of p has after loading: read-only under RELRO,
 * else its segment's.
 */
static int
prot_at (const struct hostexe *e, uintptr_t p)
{
  if (in_relro (e, p))
    return PROT_READ;
  for (size_t i = 0; i < e->phnum; i++) {
    const ElfW(Phdr) *ph = &e->phdr[i];
    uintptr_t lo = e->base + ph->p_vaddr;

    if (ph->p_type == PT_LOAD && p >= lo && p < lo + ph->p_memsz)
      return (ph->p_flags & PF_R ? PROT_READ : 0) |
        (ph->p_flags & PF_W ? PROT_WRITE : 0) |
        (ph->p_flags & PF_X ? PROT_EXEC : 0);
  }
  return PROT_READ;
}

int
hostexe_poke (const struct hostexe *e, uintptr_t at, const void *bytes,
              size_t n)
{
  long pg = sysconf (_SC_PAGESIZE);
  uintptr_t lo = at & ~(uintptr_t) (pg - 1);
  size_t len = (at + n - lo + pg - 1) & ~(uintptr_t) (pg - 1);
  int prot = prot_at (e, at);

  if (mprotect ((void *) lo, len, prot | PROT_WRITE) == -1)
    return -errno;
  memcpy ((void *) at, bytes, n);
  if (mprotect ((void *) lo, len, prot) == -1)
    return -errno;
  return 0;
}

int
hostexe_hook (const struct hostexe *e, const char *sym, void *fn)
{
#if defined (__x86_64__)
  const ElfW(Rela) *rela[2] = { NULL, NULL };
  size_t relsz[2] = { 0, 0 };
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  int n = 0;

  if (!e->dynamic)
    return -ENOENT;
  for (const ElfW(Dyn) *d = e->dynamic; d->d_tag != DT_NULL; d++) {
    switch (d->d_tag) {
    case DT_JMPREL: rela[0] = (const void *) dyn_addr (e, d->d_un.d_ptr); break;
    case DT_PLTRELSZ: relsz[0] = d->d_un.d_val; break;
    case DT_RELA: rela[1] = (const void *) dyn_addr (e, d->d_un.d_ptr); break;
    case DT_RELASZ: relsz[1] = d->d_un.d_val; break;
    case DT_SYMTAB: symtab = (const void *) dyn_addr (e, d->d_un.d_ptr); break;
    case DT_STRTAB: strtab = (const void *) dyn_addr (e, d->d_un.d_ptr); break;
    }
  }
  if (!symtab || !strtab)
    return -ENOENT;
  for (int t = 0; t < 2; t++) {
    for (size_t i = 0; rela[t] && i < relsz[t] / sizeof (ElfW(Rela)); i++) {
      const ElfW(Rela) *r = &rela[t][i];
      unsigned long type = ELF64_R_TYPE (r->r_info);
      unsigned long s = ELF64_R_SYM (r->r_info);
      int err;

      if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
          s == 0 || strcmp (strtab + symtab[s].st_name, sym))
        continue;
      err = hostexe_poke (e, e->base + r->r_offset, &fn, sizeof fn);
      if (err)
        return err;
      n++;
    }
  }
  return n;
#else
  return -ENOTSUP;
#endif
}
