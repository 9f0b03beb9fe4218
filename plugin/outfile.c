/* outfile.c: the files the server writes that name its tenants (see
 * outfile.h).
 *
 * stats= and metrics= are paths an operator gives, and the example that
 * comes to mind is in /tmp, where anyone may have made the file first.
 * Writing the tenants' names and numbers into a file another user owns
 * (a 0666 file in a sticky directory) gives them the contents; writing
 * into a file with a second hard link writes wherever that link is,
 * maybe a file of ours that someone else linked into their directory.
 * So a file the server writes is either made by it, exclusively and with
 * mode 0600, or is an existing regular file of the server's own user
 * with one link; anything else at the path makes nbdkit refuse to start
 * (outfile_check), and is checked again on the opened descriptor when
 * the file is written (outfile_open), since the path may have changed
 * meanwhile.  The last component is never followed (O_NOFOLLOW), and the
 * open does not block on a FIFO (O_NONBLOCK: then only a regular file is
 * written).
 *
 * "The server's user" is the effective uid of the process at the time of
 * the check: with nbdkit -u, the start-up check runs before nbdkit
 * changes user, the write after.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "outfile.h"

/* Tries of the two opens, when the file comes and goes between them. */
#define OUTFILE_TRIES 3

/* Is st a file we may write?  0, or -1 (reported; when is how the
 * message ends: at start-up, or at the write).
 */
static int
vet (const char *key, const char *path, const struct stat *st,
     const char *when)
{
  uid_t me = geteuid ();

  if (S_ISLNK (st->st_mode)) {
    nbdkit_error ("cfq: %s=%s: is a symbolic link: refusing to write "
                  "through it", key, path);
    return -1;
  }
  if (!S_ISREG (st->st_mode)) {
    nbdkit_error ("cfq: %s=%s: exists and is not a regular file%s", key,
                  path, when);
    return -1;
  }
  if (st->st_uid != me) {
    nbdkit_error ("cfq: %s=%s: owned by uid %u, not by the server's user "
                  "(uid %u): refusing to write into it (remove it, or give "
                  "a path in a directory only that user can write)%s", key,
                  path, (unsigned) st->st_uid, (unsigned) me, when);
    return -1;
  }
  if (st->st_nlink > 1) {
    nbdkit_error ("cfq: %s=%s: has %lu hard links: refusing to write into "
                  "it (remove it, or give another path)%s", key, path,
                  (unsigned long) st->st_nlink, when);
    return -1;
  }
  return 0;
}

int
outfile_check (const char *key, const char *path)
{
  struct stat st;

  if (lstat (path, &st) == -1) {
    if (errno == ENOENT)
      return 0;
    nbdkit_error ("cfq: %s=%s: %m", key, path);
    return -1;
  }
  return vet (key, path, &st, "");
}

int
outfile_open (const char *key, const char *path)
{
  struct stat st;
  int fd = -1;

  for (int i = 0; i < OUTFILE_TRIES && fd == -1; i++) {
    fd = open (path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_NONBLOCK |
               O_CLOEXEC, OUTFILE_MODE);
    if (fd >= 0)
      return fd;                /* ours, new, empty */
    if (errno != EEXIST)
      break;
    fd = open (path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1 && errno != ENOENT)
      break;                    /* gone again: try to make it */
  }
  if (fd == -1) {
    if (errno == ELOOP)
      nbdkit_error ("cfq: %s=%s: is a symbolic link: refusing to write "
                    "through it", key, path);
    else
      nbdkit_error ("cfq: %s=%s: %m", key, path);
    return -1;
  }
  if (fstat (fd, &st) == -1) {
    nbdkit_error ("cfq: %s=%s: fstat: %m", key, path);
    goto err;
  }
  if (vet (key, path, &st, ": not written") == -1)
    goto err;
  if ((st.st_mode & 07777) != OUTFILE_MODE &&
      fchmod (fd, OUTFILE_MODE) == -1) {
    nbdkit_error ("cfq: %s=%s: fchmod: %m", key, path);
    goto err;
  }
  if (ftruncate (fd, 0) == -1) {
    nbdkit_error ("cfq: %s=%s: ftruncate: %m", key, path);
    goto err;
  }
  return fd;

 err:
  close (fd);
  return -1;
}

/* TMP is made afresh: whatever is there (a stale copy, or a symlink
 * planted by someone who can write the directory) is removed, and the
 * new file is created exclusively without following a symlink, so the
 * server's writes never land anywhere but in a new regular file of its
 * own.  What was at PATH is replaced by the rename, never written into
 * (rename replaces a symlink at PATH itself, not what it points to).
 */
int
outfile_replace (const char *path, const char *tmp, const char *text,
                 bool sync)
{
  size_t len = strlen (text), done = 0;
  int fd, err = 0;

  if (unlink (tmp) == -1 && errno != ENOENT)
    return -errno;
  fd = open (tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
             OUTFILE_MODE);
  if (fd == -1)
    return -errno;
  while (!err && done < len) {
    ssize_t r = write (fd, text + done, len - done);

    if (r > 0)
      done += (size_t) r;
    else if (r == -1 && errno != EINTR)
      err = -errno;
  }
  if (!err && sync && fsync (fd) == -1)
    err = -errno;
  if (close (fd) == -1 && !err)
    err = -errno;
  if (!err && rename (tmp, path) == -1)
    err = -errno;
  if (err)
    unlink (tmp);
  return err;
}
