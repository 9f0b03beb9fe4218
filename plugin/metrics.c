/* metrics.c: the metrics file's writer.
 *
 * node_exporter's textfile collector reads every *.prom file in a
 * directory whenever Prometheus scrapes it; a file it reads must never be
 * half written.  So each version goes to PATH.tmp, is closed, and is
 * renamed over PATH: a reader sees the old file or the new one, whole
 * (rename replaces a symlink at PATH itself, never what it points to).
 * The dispatcher formats the text on its one-second tick (it owns the
 * numbers) and posts it here; this thread does the file system calls,
 * which may block on a busy disk, and skips versions it had no time for:
 * only the latest text is kept.  A write error is reported once, and
 * again only after a later write succeeded.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NBDKIT_API_VERSION 2
#include <nbdkit-plugin.h>

#include "metrics.h"
#include "outfile.h"

struct metrics {
  char *path, *tmp;
  pthread_t thread;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  char *pending;                /* [mu] text not written yet, or NULL */
  bool stop;                    /* [mu] write what is pending, then exit */
  bool failing;                 /* writer thread: the last write failed */
};

/* PATH.tmp is made afresh for each version and renamed over PATH
 * (outfile_replace), mode OUTFILE_MODE (0600) as stats=: the text names
 * every tenant.  What was at PATH is replaced by the rename, never
 * written into; at start-up it must pass outfile_check all the same, one
 * rule for the files the server writes.
 */
static int
write_file (struct metrics *m, const char *text)
{
  return outfile_replace (m->path, m->tmp, text, false);
}

static void *
writer (void *arg)
{
  struct metrics *m = arg;

  pthread_mutex_lock (&m->mu);
  for (;;) {
    char *text;
    int err;

    while (!m->pending && !m->stop)
      pthread_cond_wait (&m->cv, &m->mu);
    text = m->pending;
    m->pending = NULL;
    if (!text && m->stop)
      break;
    pthread_mutex_unlock (&m->mu);
    err = write_file (m, text);
    free (text);
    if (err && !m->failing)
      nbdkit_error ("cfq: metrics=%s: %s", m->path, strerror (-err));
    m->failing = err != 0;
    pthread_mutex_lock (&m->mu);
  }
  pthread_mutex_unlock (&m->mu);
  return NULL;
}

struct metrics *
metrics_start (const char *path, int *err)
{
  struct metrics *m = calloc (1, sizeof *m);
  int r;

  if (!m || !(m->path = strdup (path))
      || asprintf (&m->tmp, "%s.tmp", path) == -1) {
    if (m) {
      free (m->path);
      free (m);
    }
    *err = -ENOMEM;
    return NULL;
  }
  pthread_mutex_init (&m->mu, NULL);
  pthread_cond_init (&m->cv, NULL);
  r = pthread_create (&m->thread, NULL, writer, m);
  if (r) {
    pthread_mutex_destroy (&m->mu);
    pthread_cond_destroy (&m->cv);
    free (m->tmp);
    free (m->path);
    free (m);
    *err = -r;
    return NULL;
  }
  return m;
}

void
metrics_post (struct metrics *m, char *text)
{
  char *old;

  pthread_mutex_lock (&m->mu);
  old = m->pending;
  m->pending = text;
  pthread_cond_signal (&m->cv);
  pthread_mutex_unlock (&m->mu);
  free (old);
}

void
metrics_stop (struct metrics *m)
{
  if (!m)
    return;
  pthread_mutex_lock (&m->mu);
  m->stop = true;
  pthread_cond_signal (&m->cv);
  pthread_mutex_unlock (&m->mu);
  pthread_join (m->thread, NULL);
  free (m->pending);
  pthread_mutex_destroy (&m->mu);
  pthread_cond_destroy (&m->cv);
  free (m->tmp);
  free (m->path);
  free (m);
}
