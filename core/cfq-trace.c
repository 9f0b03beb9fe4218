/* cfq-trace.c: CFQ's decisions as text, for cfqsim --trace and the
 * plugin's debug flag.
 *
 * Every cfq*.c file traces through CFQ_TRACE (cfq-priv.h), which costs a
 * test of cfq_trace_hook when nobody listens; so this file sits below all
 * of them and calls none.
 */
#include <stdarg.h>
#include <stdio.h>

#include "cfq-priv.h"

cfq_trace_fn cfq_trace_hook;
void *cfq_trace_opaque;

void
cfq_trace (const struct cfqd *cfqd, const struct cfqq *cfqq,
           const char *fmt, ...)
{
  char msg[256];
  int n = 0;
  va_list ap;

  if (cfqq)
    n = snprintf (msg, sizeof msg, "group %s q%p: ", cfqq->cfqg->name,
                  (const void *) cfqq);
  if (n < 0 || (size_t) n >= sizeof msg)
    n = 0;
  va_start (ap, fmt);
  vsnprintf (msg + n, sizeof msg - n, fmt, ap);
  va_end (ap);
  (void) cfqd;
  cfq_trace_hook (cfq_trace_opaque, msg);
}

void
cfq_set_trace (struct sched *s, cfq_trace_fn fn, void *opaque)
{
  (void) s;
  cfq_trace_opaque = opaque;
  cfq_trace_hook = fn;
}
