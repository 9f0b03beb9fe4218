/* stats.h: the statistics of the tenants (see stats.c).
 *
 * Threads: the dispatcher, under the engine lock.
 */
#ifndef CFQ_STATS_H
#define CFQ_STATS_H

#include "control.h"
#include "tenants.h"

/* Append the statistics to o as one JSON object (and a newline), or as
 * the flat lines of "stats flat".  o->oom is set if memory ran out.
 */
extern void stats_json (const struct tenants *tn, struct strbuf *o);
extern void stats_flat (const struct tenants *tn, struct strbuf *o);
/* The same in Prometheus's text format ("metrics", metrics=FILE). */
extern void stats_prometheus (const struct tenants *tn, struct strbuf *o);
/* Write stats_json to tn->stats_path (errors: nbdkit_error): never
 * through a symlink, never into anything but a regular file.
 */
extern void stats_write_file (const struct tenants *tn);
/* At start-up (main thread): may stats= be written at path?  0, or -1
 * (reported): something other than a regular file is there.
 */
extern int stats_check_path (const char *path);

#endif /* CFQ_STATS_H */
