#!/usr/bin/env bash
# test-held-disconnect-serial.sh: test-held-disconnect.sh with --threads=1:
# one request of a connection in the plugin at a time.  nbdkit then has no
# status pipe, and the plugin hears of a hang-up from the client's socket
# alone (POLLRDHUP), and of SIGTERM from the quit pipe.
# timeout: 300
CFQ_HELD_THREADS=1 exec bash "$(dirname "$0")/test-held-disconnect.sh"
