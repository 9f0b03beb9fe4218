/* cfqsim-scheds.c: the policies cfqsim has beyond core's: none.
 *
 * --sched NAME looks here first, then in core (sched_lookup).  The test
 * build of the simulator, tests/sim/cfqsim-broken, links
 * tests/sim/broken-scheds.c in place of this file: its deliberately broken
 * policies let tests/test-sim-fifo.sh check the watchdog, and stay out of
 * the tool.
 */
#include "cfqsim.h"

const struct sched_ops *const sim_extra_scheds[] = { NULL };
