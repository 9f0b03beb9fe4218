/* reqbuf.c: nbdkit's request buffers, aligned for O_DIRECT.
 *
 * nbdkit reads a request's data into, and sends a read's reply from, a
 * buffer each worker thread keeps (threadlocal_buffer in nbdkit 1.32),
 * grown with realloc.  glibc's realloc gives 16-byte alignment, and for
 * large sizes an mmap'd chunk whose data starts 16 bytes into a page, so
 * no request buffer is ever 512-byte aligned.  Every read and write, even
 * one aligned on the device, then went through the bounce pool
 * (bounce.c): a copy on the hot path, and a share of the pool taken by
 * requests that never needed it.
 *
 * nbdkit has no way for a plugin to choose that allocation, but it calls
 * realloc through its own procedure linkage table.  At .load, before
 * nbdkit has a connection, this file points the executable's GOT entry
 * for realloc at reqbuf_realloc, which gives every block of a page or
 * more page-aligned memory (posix_memalign, the contents copied, the old
 * block freed; smaller ones go to realloc as before).  Only calls made by
 * nbdkit's executable change: libraries, the plugin and glibc itself keep
 * glibc's realloc.  The entry is found the way the dynamic linker finds
 * it: the executable's DT_JMPREL relocations, the R_X86_64_JUMP_SLOT (or
 * R_X86_64_GLOB_DAT) whose symbol is "realloc".  If there is none, nothing
 * changes and requests bounce as before; `-D cfq.aligned_buffers=0` turns
 * it off, to measure the difference.  nbdkit frees these blocks with
 * free(), which is right for posix_memalign's memory.
 *
 * The cost: growing nbdkit's buffers and vectors of a page or more copies
 * them (glibc's realloc often does too); a worker's buffer grows only
 * when a request larger than any before it arrives.
 */
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "reqbuf.h"

#define REQBUF_ALIGN 4096               /* bytes: a page, any device's */

/* -D cfq.aligned_buffers=0: leave nbdkit's realloc alone. */
NBDKIT_DLL_PUBLIC int cfq_debug_aligned_buffers = 1;

static bool reqbuf_on;

static void *
reqbuf_realloc (void *p, size_t n)
{
  void *q;
  size_t old;

  if (n < REQBUF_ALIGN)
    return realloc (p, n);
  if (p && ((uintptr_t) p & (REQBUF_ALIGN - 1)) == 0 &&
      malloc_usable_size (p) >= n)
    return p;
  if (posix_memalign (&q, REQBUF_ALIGN, n)) {
    errno = ENOMEM;
    return NULL;
  }
  if (p) {
    old = malloc_usable_size (p);
    memcpy (q, p, old < n ? old : n);
    free (p);
  }
  return q;
}

struct dyn {
  uintptr_t base;                       /* load bias of the executable */
  const ElfW(Dyn) *dynamic;
  bool found;
};

static int
find_exe (struct dl_phdr_info *info, size_t size, void *data)
{
  struct dyn *d = data;
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
  if (!ours || !dynamic)
    return 0;
  d->base = info->dlpi_addr;
  d->dynamic = dynamic;
  d->found = true;
  return 1;
}

/* Point the GOT slot at `slot` to fn, making its page writable if RELRO
 * made it read-only.
 */
static int
set_slot (uintptr_t slot, void *fn)
{
  long pg = sysconf (_SC_PAGESIZE);
  uintptr_t lo = slot & ~(uintptr_t) (pg - 1);

  if (mprotect ((void *) lo, (size_t) pg, PROT_READ | PROT_WRITE) == -1)
    return -errno;
  memcpy ((void *) slot, &fn, sizeof fn);
  return 0;
}

void
reqbuf_install (void)
{
  struct dyn d = { .found = false };
  const ElfW(Rela) *rela[2] = { NULL, NULL };
  size_t relsz[2] = { 0, 0 };
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  unsigned slots = 0;

  if (!cfq_debug_aligned_buffers)
    return;
#if defined (__x86_64__)
  dl_iterate_phdr (find_exe, &d);
  if (!d.found) {
    nbdkit_debug ("cfq: aligned buffers: nbdkit's executable not found");
    return;
  }
  /* The dynamic linker has already relocated these d_ptr values. */
  for (const ElfW(Dyn) *e = d.dynamic; e->d_tag != DT_NULL; e++) {
    switch (e->d_tag) {
    case DT_JMPREL: rela[0] = (const ElfW(Rela) *) e->d_un.d_ptr; break;
    case DT_PLTRELSZ: relsz[0] = e->d_un.d_val; break;
    case DT_RELA: rela[1] = (const ElfW(Rela) *) e->d_un.d_ptr; break;
    case DT_RELASZ: relsz[1] = e->d_un.d_val; break;
    case DT_SYMTAB: symtab = (const ElfW(Sym) *) e->d_un.d_ptr; break;
    case DT_STRTAB: strtab = (const char *) e->d_un.d_ptr; break;
    }
  }
  if (!symtab || !strtab)
    return;
  /* glibc relocates these in place; a loader that does not leaves them
   * relative to the load bias.
   */
#define REQBUF_ABS(p) \
  ((p) && (uintptr_t) (p) < d.base ? \
   (__typeof__ (p)) ((uintptr_t) (p) + d.base) : (p))
  symtab = REQBUF_ABS (symtab);
  strtab = REQBUF_ABS (strtab);
  rela[0] = REQBUF_ABS (rela[0]);
  rela[1] = REQBUF_ABS (rela[1]);
  for (int t = 0; t < 2; t++) {
    for (size_t i = 0; rela[t] && i < relsz[t] / sizeof (ElfW(Rela)); i++) {
      const ElfW(Rela) *r = &rela[t][i];
      unsigned long type = ELF64_R_TYPE (r->r_info);
      unsigned long sym = ELF64_R_SYM (r->r_info);
      int err;

      if ((type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT) ||
          sym == 0 || strcmp (strtab + symtab[sym].st_name, "realloc"))
        continue;
      err = set_slot (d.base + r->r_offset, (void *) reqbuf_realloc);
      if (err) {
        nbdkit_debug ("cfq: aligned buffers: mprotect: %s",
                      strerror (-err));
        return;
      }
      slots++;
    }
  }
#endif
  reqbuf_on = slots > 0;
  nbdkit_debug ("cfq: aligned buffers: %s", reqbuf_on ?
                "nbdkit's request buffers are page aligned" :
                "nbdkit does not call realloc through a GOT entry: its "
                "buffers stay as glibc aligns them");
}

bool
reqbuf_aligned (void)
{
  return reqbuf_on;
}
