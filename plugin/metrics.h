/* metrics.h: metrics=FILE, the Prometheus text rewritten every second for
 * node_exporter's textfile collector (see metrics.c).
 *
 * Threads: metrics_post and metrics_stop are called by the dispatcher (its
 * one-second tick and its teardown); the file is written by a thread of
 * its own, so a slow disk never holds up the dispatcher.
 */
#ifndef CFQ_METRICS_H
#define CFQ_METRICS_H

struct metrics;

/* Start the writer for PATH.  NULL and *err = -errno on failure. */
extern struct metrics *metrics_start (const char *path, int *err);
/* Hand over TEXT (malloc'd, NUL-terminated; ownership passes): it replaces
 * any text not written yet.
 */
extern void metrics_post (struct metrics *m, char *text);
/* Write what is pending, stop the thread, free everything. */
extern void metrics_stop (struct metrics *m);

#endif /* CFQ_METRICS_H */
