/* backing.c: opening and probing the files we serve (see backing.h).
 *
 * O_DIRECT first; a filesystem that refuses it (EINVAL: tmpfs, some
 * FUSE) gets buffered I/O instead, and then no alignment is needed.
 * With cache=page every file is opened buffered to begin with: reads and
 * writes go through the page cache, still one scheduled request each.  A
 * file we may not write is opened read-only and served so.  The engine
 * has ENGINE_FILE_SLOTS slots: the device takes the first FILE_NR, each
 * export with a file of its own the next FILE_NR.
 *
 * Extents (sparseness) come from SEEK_DATA/SEEK_HOLE on the buffered
 * descriptor, on files whose filesystem supports them.
 *
 * Each open file has its own range lock and write-back error count
 * (struct bk_shared), so tenants on different files never wait for each
 * other.  That is only sound if different backings are different files:
 * the config compares paths as text, so here, once every file is open,
 * they are compared by what they are (st_dev and st_ino of a regular
 * file, st_rdev of a block device).  An export whose own file is the
 * device under another name (a symlink, a hard link, a relative path,
 * another device node) would be a second writable view of the device
 * with a lock of its own; two writable exports on one file likewise.
 * Both are refused.  (A partition of the device, or a loop device over
 * it, is not detected: the kernel does not say so by inode.)
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "backing.h"
#include "rbd.h"

static struct backing bk_dev = { .fds = { -1, -1 } };
static struct backing *bk_own;          /* per export; path NULL: region */
static size_t bk_nr_own;                /* entries in bk_own */
static size_t bk_align;                 /* bytes: alignment of our buffers */

int
bk_probe (char **path, uint64_t *size, dev_t *st_dev)
{
  struct device_info di;
  struct stat st;
  char *abs;
  int fd, err;

  abs = realpath (*path, NULL);
  if (!abs) {
    nbdkit_error ("cfq: file=%s: %m", *path);
    return -1;
  }
  free (*path);
  *path = abs;
  if (stat (*path, &st) == -1) {
    nbdkit_error ("cfq: file=%s: %m", *path);
    return -1;
  }
  if (!S_ISREG (st.st_mode) && !S_ISBLK (st.st_mode)) {
    nbdkit_error ("cfq: file=%s: not a regular file or a block device",
                  *path);
    return -1;
  }
  *st_dev = S_ISBLK (st.st_mode) ? st.st_rdev : st.st_dev;

  fd = open (*path, O_RDONLY | O_CLOEXEC);
  if (fd == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", *path);
    return -1;
  }
  err = device_probe (fd, &di);
  close (fd);
  if (err) {
    nbdkit_error ("cfq: file=%s: probing size: %s", *path, strerror (-err));
    return -1;
  }
  *size = di.size;
  return 0;
}

/* Open path with flags, trying O_DIRECT first when direct. */
static int
open_file (const char *path, int flags, bool *direct)
{
  int fd;

  if (*direct) {
    fd = open (path, flags | O_DIRECT | O_CLOEXEC);
    if (fd >= 0 || errno != EINVAL)
      return fd;
    nbdkit_debug ("cfq: file=%s: O_DIRECT refused (EINVAL): "
                  "using buffered I/O", path);
    *direct = false;
  }
  return open (path, flags | O_CLOEXEC);
}

/* Open b->path (read-write, else read-only; read-only if readonly) and
 * learn its size and alignment.  Buffered if !direct (cache=page).
 */
static int
open_backing (struct backing *b, bool readonly, bool direct)
{
  bool nodirect = false;
  int flags = readonly ? O_RDONLY : O_RDWR;
  size_t align;
  int err;

  b->shared = calloc (1, sizeof *b->shared);
  if (!b->shared) {
    nbdkit_error ("cfq: file=%s: calloc: %m", b->path);
    return -1;
  }
  rl_init (&b->shared->rl);
  b->shared->can_punch = b->shared->can_zero_range = 1;
  b->shared->can_discard = 1;
  b->writable = !readonly;
  b->fds[FILE_DIRECT] = open_file (b->path, flags, &direct);
  if (b->fds[FILE_DIRECT] == -1 && !readonly &&
      (errno == EACCES || errno == EROFS || errno == EPERM)) {
    flags = O_RDONLY;
    b->writable = false;
    nbdkit_debug ("cfq: file=%s: read-only", b->path);
    b->fds[FILE_DIRECT] = open_file (b->path, flags, &direct);
  }
  if (b->fds[FILE_DIRECT] == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", b->path);
    return -1;
  }
  b->direct = direct;
  b->fds[FILE_BUFFERED] = open_file (b->path, flags, &nodirect);
  if (b->fds[FILE_BUFFERED] == -1) {
    nbdkit_error ("cfq: file=%s: open: %m", b->path);
    return -1;
  }
  err = device_probe (b->fds[FILE_DIRECT], &b->dev);
  if (err) {
    nbdkit_error ("cfq: file=%s: probing size and block size: %s",
                  b->path, strerror (-err));
    return -1;
  }
  b->bs = b->dev.offset_align;
  align = b->dev.mem_align > 4096 ? b->dev.mem_align : 4096;
  if (b->bs > align)
    align = b->bs;
  if (align > bk_align)
    bk_align = align;
  nbdkit_debug ("cfq: file=%s: %s, %" PRIu64 " bytes, block %" PRIu32
                ", buffer alignment %" PRIu32 ", %s, slot %u", b->path,
                b->dev.is_blockdev ? "block device" : "regular file",
                b->dev.size, b->bs, b->dev.mem_align,
                b->direct ? "O_DIRECT" : "buffered", b->slot);

  /* ENXIO just means no data at all. */
  if (!b->dev.is_blockdev &&
      (lseek (b->fds[FILE_BUFFERED], 0, SEEK_DATA) >= 0 || errno == ENXIO))
    b->seek_data = true;
  return 0;
}

/* An RBD image (rbd.h): read and written by the rbd backend, so
 * unaligned like a buffered file, with the file's range lock and counts.
 * Its size comes from the cluster.
 */
static int
open_rbd (struct backing *b, bool readonly, bool cache)
{
  b->rbd = true;
  b->shared = calloc (1, sizeof *b->shared);
  if (!b->shared) {
    nbdkit_error ("cfq: %s: calloc: %m", b->path);
    return -1;
  }
  rl_init (&b->shared->rl);
  b->shared->can_punch = b->shared->can_zero_range = 1;
  b->writable = !readonly;
  b->direct = false;
  b->bs = 512;
  b->dev.offset_align = b->dev.mem_align = 512;
  if (rbdk_attach (b->path, b->slot, readonly, cache, &b->dev.size) == -1)
    return -1;
  nbdkit_debug ("cfq: %s: RBD image, %" PRIu64 " bytes, slot %u", b->path,
                b->dev.size, b->slot);
  return 0;
}

/* What file b is, whatever its name: the device (st_rdev of a block
 * device, else st_dev) and the inode (0 for a block device); 0 or -1
 * (reported).
 */
int
bk_identity (const struct backing *b, dev_t *dev, ino_t *ino)
{
  struct stat st;

  if (fstat (b->fds[FILE_DIRECT], &st) == -1) {
    nbdkit_error ("cfq: file=%s: fstat: %m", b->path);
    return -1;
  }
  if (S_ISBLK (st.st_mode)) {
    *dev = st.st_rdev;          /* the device node names the device */
    *ino = 0;
  }
  else {
    *dev = st.st_dev;
    *ino = st.st_ino;
  }
  return 0;
}

/* What a backing is, whatever its name: a file's device and inode
 * (bk_identity), or an image's normalized name ("rbd:POOL/IMAGE"): an
 * image is what its pool and name say.
 */
struct bk_id {
  const char *image;            /* the image's name; NULL: a file */
  dev_t dev;                    /* a file's (bk_identity) */
  ino_t ino;                    /* a file's; 0 for a block device */
};

static int
backing_id (const struct backing *b, struct bk_id *id)
{
  *id = (struct bk_id) { .image = b->rbd ? b->path : NULL };
  return b->rbd ? 0 : bk_identity (b, &id->dev, &id->ino);
}

static bool
same_backing (const struct bk_id *a, const struct bk_id *b)
{
  if (a->image || b->image)
    return a->image && b->image && strcmp (a->image, b->image) == 0;
  return a->dev == b->dev && a->ino == b->ino;
}

/* No export's own file is the device, and no two writable exports share
 * one (see the top of the file).
 */
static int
check_aliases (const struct cfg_model *m)
{
  struct bk_id did, id[ENGINE_FILE_SLOTS];
  size_t idx[ENGINE_FILE_SLOTS], n = 0;
  int bad = 0;

  if (backing_id (&bk_dev, &did) == -1)
    return -1;
  for (size_t i = 0; i < bk_nr_own; i++) {
    const struct backing *b = &bk_own[i];
    const char *same;           /* what makes a file the same */

    if (!b->path)
      continue;
    if (backing_id (b, &id[n]) == -1)
      return -1;
    same = id[n].ino ? "inode" : "device number";
    if (same_backing (&id[n], &did)) {
      if (b->rbd)
        nbdkit_error ("cfq: export '%s': image %s is the device: use offset "
                      "and size for a region of the device",
                      m->exports[i].name, b->path);
      else
        nbdkit_error ("cfq: export '%s': file %s is the device %s under "
                      "another name (same %s): use offset and size for a "
                      "region of the device", m->exports[i].name, b->path,
                      bk_dev.path, same);
      bad = -1;
    }
    for (size_t j = 0; j < n; j++)
      if (same_backing (&id[j], &id[n]) &&
          !(m->exports[i].readonly && m->exports[idx[j]].readonly)) {
        if (b->rbd)
          nbdkit_error ("cfq: export '%s': image %s is also the image of "
                        "export '%s'; only readonly exports may share one",
                        m->exports[i].name, b->path, m->exports[idx[j]].name);
        else
          nbdkit_error ("cfq: export '%s': file %s is also the file of "
                        "export '%s' (%s, same %s); only readonly exports may "
                        "share one", m->exports[i].name, b->path,
                        m->exports[idx[j]].name, bk_own[idx[j]].path, same);
        bad = -1;
      }
    idx[n++] = i;
  }
  return bad;
}

int
bk_open_all (const char *path, const struct cfg_model *m)
{
  unsigned slot = FILE_NR;

  bk_align = 4096;
  bk_dev.path = path;
  bk_dev.slot = 0;
  if (rbdk_is_image (path)
      ? open_rbd (&bk_dev, false, m->dev.cache == CFG_CACHE_PAGE) == -1
      : open_backing (&bk_dev, false, m->dev.cache == CFG_CACHE_NONE) == -1)
    return -1;
  /* Exports with a file of their own: two more engine slots each. */
  bk_own = calloc (m->nr_exports, sizeof *bk_own);
  if (!bk_own) {
    nbdkit_error ("cfq: calloc: %m");
    return -1;
  }
  bk_nr_own = m->nr_exports;
  for (size_t i = 0; i < m->nr_exports; i++) {
    struct backing *b = &bk_own[i];

    b->fds[0] = b->fds[1] = -1;
    if (!m->exports[i].file)
      continue;
    if (slot + FILE_NR > ENGINE_FILE_SLOTS) {
      nbdkit_error ("cfq: export '%s': too many exports with their own "
                    "file (at most %d)", m->exports[i].name,
                    ENGINE_FILE_SLOTS / FILE_NR - 1);
      return -1;
    }
    b->path = m->exports[i].file;
    b->slot = slot;
    slot += FILE_NR;
    if (rbdk_is_image (b->path) != bk_dev.rbd) {
      nbdkit_error ("cfq: export '%s': file %s: %s", m->exports[i].name,
                    b->path, bk_dev.rbd ? "with backend=rbd every export's "
                    "own file is an image (rbd:POOL/IMAGE)"
                    : "an RBD image needs backend=rbd");
      return -1;
    }
    if (bk_dev.rbd) {
      if (!(b->path = rbdk_spec_norm (b->path)) ||
          open_rbd (b, m->exports[i].readonly,
                    m->dev.cache == CFG_CACHE_PAGE) == -1)
        return -1;
    }
    else if (open_backing (b, m->exports[i].readonly,
                           m->dev.cache == CFG_CACHE_NONE) == -1)
      return -1;
  }
  return check_aliases (m);
}

static void
free_shared (struct backing *b)
{
  if (b->shared) {
    rl_fini (&b->shared->rl);
    free (b->shared);
    b->shared = NULL;
  }
}

void
bk_close_all (void)
{
  free_shared (&bk_dev);
  for (size_t j = 0; j < bk_nr_own; j++)
    free_shared (&bk_own[j]);
  for (int i = 0; i < FILE_NR; i++) {
    if (bk_dev.fds[i] >= 0)
      close (bk_dev.fds[i]);
    bk_dev.fds[i] = -1;
    for (size_t j = 0; j < bk_nr_own; j++) {
      if (bk_own[j].fds[i] >= 0)
        close (bk_own[j].fds[i]);
      bk_own[j].fds[i] = -1;
    }
  }
}

void
bk_unload (void)
{
  for (size_t i = 0; i < bk_nr_own; i++)
    if (bk_own[i].rbd)
      free ((char *) bk_own[i].path);   /* rbdk_spec_norm's */
  free (bk_own);
  bk_own = NULL;
  bk_nr_own = 0;
}

const struct backing *
bk_main (void)
{
  return &bk_dev;
}

const struct backing *
bk_export (size_t i)
{
  return i < bk_nr_own && bk_own[i].path ? &bk_own[i] : &bk_dev;
}

size_t
bk_buf_align (void)
{
  return bk_align;
}

void
bk_engine_fds (struct engine_cfg *cfg)
{
  for (int i = 0; i < ENGINE_FILE_SLOTS; i++)
    cfg->fds[i] = -1;
  cfg->fds[FILE_DIRECT] = bk_dev.fds[FILE_DIRECT];
  cfg->fds[FILE_BUFFERED] = bk_dev.fds[FILE_BUFFERED];
  cfg->nr_fds = FILE_NR;
  for (size_t i = 0; i < bk_nr_own; i++)
    if (bk_own[i].path) {
      for (int j = 0; j < FILE_NR; j++)
        cfg->fds[bk_own[i].slot + j] = bk_own[i].fds[j];
      if (bk_own[i].slot + FILE_NR > cfg->nr_fds)
        cfg->nr_fds = bk_own[i].slot + FILE_NR;
    }
}

/* Like nbdkit's file plugin: metadata, not device I/O, so it does not go
 * through the scheduler.  Every lseek here names its offset, so sharing
 * the descriptor's position between threads does not matter (no I/O uses
 * that position).
 *
 * One extent per reply, always (as if the client had asked REQ_ONE; the
 * protocol lets a server answer less than asked and the client asks again
 * for the rest).  nbdkit 1.32.x keeps sending a block-status reply's
 * descriptors after the first failed send and then aborts on the closed
 * socket (server/protocol.c, send_structured_reply_block_status), so a
 * client that hangs up during a multi-descriptor reply would kill the
 * whole server even with --threads=1.  With one descriptor there is no
 * send after the failing one.
 */
int
bk_extents (const struct backing *b, uint64_t base, uint64_t size,
            uint32_t count, uint64_t offset, struct nbdkit_extents *extents)
{
  const bool req_one = true;       /* see above */
  const int fd = b->fds[FILE_BUFFERED];
  const uint64_t rend = base + size;
  const uint64_t end = base + offset + count;
  off_t pos;

  /* Device offsets here; extents are reported relative to the export. */
  offset += base;
  while (offset < end) {
    pos = lseek (fd, (off_t) offset, SEEK_DATA);
    if (pos == -1) {
      if (errno != ENXIO) {
        nbdkit_error ("cfq: extents: lseek SEEK_DATA: %m");
        return -1;
      }
      pos = (off_t) b->dev.size;          /* a hole to the end */
    }
    if ((uint64_t) pos > rend)
      pos = (off_t) rend;
    if ((uint64_t) pos > offset) {
      if (nbdkit_add_extent (extents, offset - base, (uint64_t) pos - offset,
                             NBDKIT_EXTENT_HOLE | NBDKIT_EXTENT_ZERO) == -1)
        return -1;
      if (req_one)
        break;
      offset = (uint64_t) pos;
      continue;
    }
    pos = lseek (fd, (off_t) offset, SEEK_HOLE);
    if (pos == -1) {
      nbdkit_error ("cfq: extents: lseek SEEK_HOLE: %m");
      return -1;
    }
    if ((uint64_t) pos <= offset)       /* cannot happen: be safe */
      pos = (off_t) end;
    if ((uint64_t) pos > rend)
      pos = (off_t) rend;
    if (nbdkit_add_extent (extents, offset - base, (uint64_t) pos - offset,
                           0) == -1)
      return -1;
    if (req_one)
      break;
    offset = (uint64_t) pos;
  }
  return 0;
}
