/* sched-lookup.c: the table of policies the mechanism can choose by name.
 *
 * Apart from sched.c because it names every policy while the policies
 * call sched.c (sched_classify): so core/'s files call one way.
 */
#include <stddef.h>
#include <string.h>

#include "sched.h"

static const struct sched_ops *const policies[] = {
  &fifo_ops,
  &cfq_ops,
};

const struct sched_ops *
sched_lookup (const char *name)
{
  for (size_t i = 0; i < sizeof policies / sizeof policies[0]; i++)
    if (strcmp (policies[i]->name, name) == 0)
      return policies[i];
  return NULL;
}
