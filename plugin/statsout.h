/* statsout.h: the statistics of the tenants, written out (see statsout.c).
 *
 * Threads: the dispatcher, under the engine lock.
 */
#ifndef CFQ_STATSOUT_H
#define CFQ_STATSOUT_H

#include "control.h"
#include "tenants.h"

/* Append the statistics to o as one JSON object (and a newline), or as
 * the flat lines of "stats flat".  o->oom is set if memory ran out.
 */
extern void stats_json (const struct tenants *tn, struct strbuf *o);
extern void stats_flat (const struct tenants *tn, struct strbuf *o);
/* The same in Prometheus's text format ("metrics", metrics=FILE). */
extern void stats_prometheus (const struct tenants *tn, struct strbuf *o);
/* Write stats_json to tn->stats_path (errors: nbdkit_error) by the rules
 * of outfile.h: a new file of mode 0600, or the server user's own regular
 * file with one link; never through a symlink.
 */
extern void stats_write_file (const struct tenants *tn);

#endif /* CFQ_STATSOUT_H */
