#!/usr/bin/env bash
# test-disconnect-mt.sh: test-disconnect.sh with nbdkit's default worker
# threads, i.e. many requests of one connection in the plugin at once, the
# product configuration.
#
# nbdkit 1.32.4 - 1.33.9 abort the whole server when a client hangs up
# with two or more requests in flight in worker threads, whatever the
# plugin; our plugin guards nbdkit against it at load (plugin/hangup.c).
# This test runs wherever that holds (nbdkit_hangup_safe): on an nbdkit
# with the bug under a plugin that cannot guard it, it skips and says why.
# timeout: 1800
. "$(dirname "$0")/functions.sh"
if ! why=$(nbdkit_hangup_safe); then
  echo "$why"
  exit 77
fi
CFQ_DISCONNECT_THREADS=default exec bash "$(dirname "$0")/test-disconnect.sh"
