#!/usr/bin/env bash
# test-disconnect-mt.sh: test-disconnect.sh with nbdkit's default worker
# threads, i.e. many requests of one connection in the plugin at once, the
# product configuration.
#
# nbdkit 1.32.4 - 1.33.9 abort the whole server when a client hangs up
# with two or more requests in flight in worker threads, whatever the
# plugin (RHBZ#2173054, fixed in nbdkit 1.33.10; see test-disconnect.sh).
# On those versions this configuration cannot pass, so it skips and says
# why; test-disconnect.sh still checks --threads=1 there.
# timeout: 1800
set -u
v=$(nbdkit --version | awk '{print $2}')
if printf '%s\n' 1.32.4 "$v" | sort -V -C &&
   ! printf '%s\n' 1.33.10 "$v" | sort -V -C; then
  echo "nbdkit $v aborts on a client hang-up with requests in flight (RHBZ#2173054, fixed in 1.33.10)"
  exit 77
fi
CFQ_DISCONNECT_THREADS=default exec bash "$(dirname "$0")/test-disconnect.sh"
