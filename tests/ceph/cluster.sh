#!/usr/bin/env bash
# tests/ceph/cluster.sh: a single-node Ceph cluster for tests, in a directory.
#
#   tests/ceph/cluster.sh start DIR [PORT]   # one mon, one mgr, one OSD; prints
#                                            # DIR/ceph.conf's path when ready
#   tests/ceph/cluster.sh stop DIR           # stop the daemons, remove DIR's data
#   tests/ceph/cluster.sh check              # exit 77 with the reason if this
#                                            # machine cannot run one
#
# Everything lives under DIR: the configuration, the mon's store, the OSD's
# bluestore (a sparse file), sockets, logs and PID files.  No systemd, no
# cephx (auth none: loopback tests only), a pool of size 1.  The mon listens
# on 127.0.0.1:PORT (msgr v2; default 3300), so two clusters can run side by
# side with different ports.  The OSD's memory target is 1 GiB, the
# bluestore file CFQ_CEPH_OSD_SIZE (default 8G, sparse).
#
# Clients use the cluster with CEPH_CONF=DIR/ceph.conf (rbd, rados, librbd,
# qemu-storage-daemon's rbd driver, rbd-nbd).  The pool "rbd" exists and is
# initialised for RBD when start returns.
set -eu

need=(ceph-mon ceph-mgr ceph-osd ceph monmaptool rbd uuidgen)

check ()
{
  local c
  for c in "${need[@]}"; do
    if ! command -v "$c" >/dev/null 2>&1; then
      echo "no $c: install ceph-mon ceph-mgr ceph-osd ceph-common (make deps)"
      return 77
    fi
  done
  if [ "$(id -u)" != 0 ]; then
    echo "not root: the OSD wants to lock its memory and own its block file"
    return 77
  fi
  return 0
}

# wait_for SECONDS CMD...: retry CMD every 0.5 s until it succeeds.
wait_for ()
{
  local t=$(($1 * 2)); shift
  while ! "$@" >/dev/null 2>&1; do
    t=$((t - 1))
    if [ "$t" -le 0 ]; then
      return 1
    fi
    sleep 0.5
  done
}

osd_up ()
{
  ceph osd stat -f json | grep -q '"num_up_osds":1'
}

start ()
{
  local dir=$1 port=${2:-3300} fsid conf uuid
  mkdir -p "$dir"
  dir=$(cd "$dir" && pwd)
  if [ -e "$dir/ceph.conf" ]; then
    echo "cluster.sh: $dir already holds a cluster (stop it first)" >&2
    return 1
  fi
  fsid=$(uuidgen)
  conf=$dir/ceph.conf
  mkdir -p "$dir/mon" "$dir/osd" "$dir/mgr" "$dir/run" "$dir/log"
  cat > "$conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$port
public addr = 127.0.0.1
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
mon allow pool size one = true
mon allow pool delete = true
osd crush chooseleaf type = 0
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
pid file = $dir/run/\$name.pid
mon data = $dir/mon/\$cluster-\$id
osd data = $dir/osd/\$cluster-\$id
mgr data = $dir/mgr/\$cluster-\$id
keyring = $dir/keyring
mon warn on pool no redundancy = false
mon warn on insecure global id reclaim allowed = false
mon data avail warn = 2
mon data avail crit = 1
[osd]
osd memory target = 1073741824
osd objectstore = bluestore
bluestore block path = $dir/osd-block
bluestore block create = true
bluestore block size = ${CFQ_CEPH_OSD_SIZE:-8G}
bluestore fsck on mkfs = false
osd op num threads per shard = 1
[mgr]
mgr disabled modules = dashboard restful prometheus
EOF
  export CEPH_CONF=$conf
  monmaptool --create --addv a "[v2:127.0.0.1:$port]" --fsid "$fsid" \
    "$dir/monmap" >/dev/null
  ceph-mon --mkfs -i a --monmap "$dir/monmap" >/dev/null
  ceph-mon -i a 2>>"$dir/log/daemons.err"
  if ! wait_for 30 ceph -s --connect-timeout 2; then
    echo "cluster.sh: the mon did not answer (log: $dir/log/mon.a.log)" >&2
    return 1
  fi
  uuid=$(uuidgen)
  ceph osd create "$uuid" >/dev/null
  mkdir -p "$dir/osd/ceph-0"
  ceph-osd -i 0 --mkfs --osd-uuid "$uuid" >/dev/null 2>&1 || {
    echo "cluster.sh: ceph-osd --mkfs failed (log: $dir/log/osd.0.log)" >&2
    return 1
  }
  ceph-osd -i 0 2>>"$dir/log/daemons.err"
  mkdir -p "$dir/mgr/ceph-x"
  ceph-mgr -i x 2>>"$dir/log/daemons.err"
  if ! wait_for 60 osd_up; then
    echo "cluster.sh: the OSD did not come up (log: $dir/log/osd.0.log)" >&2
    return 1
  fi
  ceph osd pool create rbd 8 >/dev/null 2>&1
  ceph osd pool set rbd size 1 --yes-i-really-mean-it >/dev/null 2>&1 || true
  rbd pool init rbd
  echo "$conf"
}

stop ()
{
  local dir=$1 p pid
  [ -d "$dir" ] || return 0
  for p in "$dir"/run/*.pid; do
    [ -e "$p" ] || continue
    pid=$(cat "$p")
    kill "$pid" 2>/dev/null || true
  done
  for p in "$dir"/run/*.pid; do
    [ -e "$p" ] || continue
    pid=$(cat "$p")
    for _ in $(seq 1 40); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.25
    done
    kill -9 "$pid" 2>/dev/null || true
  done
  rm -rf "$dir/mon" "$dir/osd" "$dir/mgr" "$dir/osd-block" "$dir/run" \
    "$dir/monmap" "$dir/ceph.conf" "$dir/keyring"
}

case ${1:-} in
  start) shift; check >&2 || exit $?; start "$@" ;;
  stop) shift; stop "$@" ;;
  check) check ;;
  *) sed -n '2,9s/^# \{0,1\}//p' "$0" >&2; exit 2 ;;
esac
