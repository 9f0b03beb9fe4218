/* outfile.h: the files the server writes that name its tenants (stats=,
 * metrics=) or describe its device (calibration=), one rule for all (see
 * outfile.c; metrics= and calibration= write a new file and rename it
 * over the path, outfile_replace, so only outfile_check applies to the
 * path itself).
 *
 * Threads: outfile_check on nbdkit's main thread at start-up;
 * outfile_open on whichever thread writes (the dispatcher's teardown for
 * stats=).  Errors are reported with nbdkit_error as "cfq: KEY=PATH: ...".
 */
#ifndef CFQ_OUTFILE_H
#define CFQ_OUTFILE_H

#include <stdbool.h>

/* Mode of every file made: the contents name every tenant. */
#define OUTFILE_MODE 0600

/* At start-up: may KEY=PATH be written?  Nothing there, or a regular file
 * (not a symlink) that the server's user owns and that has no other hard
 * link.  0, or -1 (reported).
 */
extern int outfile_check (const char *key, const char *path);

/* Open PATH to be rewritten: a new file is created exclusively with
 * OUTFILE_MODE; an existing one must pass outfile_check's rules, checked
 * on the opened descriptor, and is made OUTFILE_MODE and truncated.  The
 * last component is never followed, and a FIFO or device there cannot
 * block the call.  A descriptor, or -1 (reported).
 */
extern int outfile_open (const char *key, const char *path);

/* Replace PATH with a new file holding TEXT, whole or not at all: TMP
 * (any stale file or symlink there removed first) is created exclusively
 * with OUTFILE_MODE, written, fsync'd if sync, and renamed over PATH.  0
 * or -errno (not reported: the caller says what failed); TMP is gone
 * either way.
 */
extern int outfile_replace (const char *path, const char *tmp,
                            const char *text, bool sync);

#endif /* CFQ_OUTFILE_H */
