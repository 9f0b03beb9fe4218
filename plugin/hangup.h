/* hangup.h: the guard against nbdkit 1.32.4 - 1.33.9's abort when a
 * client hangs up with replies in flight (hangup.c says how).
 *
 * Thread: hangup_guard_install runs once, from .load, before nbdkit has
 * any other thread; the state is read-only after it.
 */
#ifndef CFQ_PLUGIN_HANGUP_H
#define CFQ_PLUGIN_HANGUP_H

enum hangup_state {
  HANGUP_NOT_RUN,               /* .load has not run */
  HANGUP_ON,                    /* every assertion found is an error return */
  HANGUP_NOT_NEEDED,            /* this nbdkit has no such assertion */
  HANGUP_OFF,                   /* -D cfq.hangup_guard=0 */
  HANGUP_PARTIAL,               /* some sites changed, then mprotect failed */
  HANGUP_UNKNOWN,               /* the assertion is there, in no known form */
};

extern void hangup_guard_install (void);
/* The state; *sites (if not NULL) gets how many jumps were changed. */
extern enum hangup_state hangup_guard_state (unsigned *sites);
extern const char *hangup_state_name (enum hangup_state s);

#endif
