# shellcheck shell=bash
# tests/ceph/ceph-functions.sh: what every tests/ceph/test-*.sh sources, on top of
# tests/tenant-functions.sh (and so tests/functions.sh).
#
#   . "$(dirname "$0")/ceph-functions.sh"
#   requires_ceph                 # backend=rbd and a cluster, or skip (77)
#   requires_ceph_cluster         # a cluster to use, or skip (77) with why
#   img=$(rbd_image NAME SIZE)    # a fresh image, removed at exit
#   rbd_image_from NAME FILE      # the same, holding FILE's bytes
#
# The cluster: the one CFQ_CEPH_CONF names (make check-ceph starts one for
# the whole suite), or else one of the test's own in $TESTDIR/ceph on mon
# port CFQ_CEPH_PORT (default 3301), started with tests/ceph/cluster.sh and
# stopped at exit.  (Not named functions.sh: tests/tenant-functions.sh
# sources the functions.sh beside the test, as shellcheck reads it.)  Images are made with the layering feature alone: no
# exclusive lock, so a server restarted after kill -9 (or a second server)
# opens the image at once instead of waiting for the dead one's lock.

. "$(dirname "${BASH_SOURCE[0]}")/../tenant-functions.sh"

CEPH_CLUSTER=$top/tests/ceph/cluster.sh
# Images of this test: their names start with it, so tests sharing one
# cluster never meet.
RBD_PREFIX_NAME=cfqt-$(basename "$TESTDIR" | tr -c 'A-Za-z0-9\n' -)

# requires_ceph_cluster: a cluster to use, CEPH_CONF (exported) its
# ceph.conf, CEPH_OWN=yes if it is this test's own (its daemons the test's
# to stop), no if CFQ_CEPH_CONF named it; or skip (77) with why.
# shellcheck disable=SC2034 # CEPH_OWN is the test's
requires_ceph_cluster ()
{
  local why rc=0
  if [ -n "${CFQ_CEPH_CONF:-}" ]; then
    [ -f "$CFQ_CEPH_CONF" ] || fail "CFQ_CEPH_CONF=$CFQ_CEPH_CONF: no such file"
    export CEPH_CONF=$CFQ_CEPH_CONF
    CEPH_OWN=no
    timeout 30 ceph -s --connect-timeout 10 >/dev/null 2>&1 ||
      fail "the cluster of $CEPH_CONF does not answer"
  else
    why=$("$CEPH_CLUSTER" check) || rc=$?
    [ "$rc" = 0 ] || skip "$why"
    cleanup_fn "$CEPH_CLUSTER" stop "$TESTDIR/ceph"
    CEPH_CONF=$("$CEPH_CLUSTER" start "$TESTDIR/ceph" "${CFQ_CEPH_PORT:-3301}") ||
      fail "could not start a cluster (logs in $TESTDIR/ceph/log)"
    export CEPH_CONF
    CEPH_OWN=yes
  fi
  echo "cluster: $CEPH_CONF"
}

# requires_ceph: our plugin with backend=rbd, and a cluster.
requires_ceph ()
{
  tenant_requires
  nbdkit "$CFQ_PLUGIN" --dump-plugin | grep -qx 'cfq_rbd=yes' ||
    skip "the plugin was built without librbd (no backend=rbd)"
  requires_ceph_cluster
}

# rbd_image NAME SIZE: create image $RBD_PREFIX_NAME-NAME of SIZE in pool
# rbd, removed at exit; prints its name.
rbd_image ()
{
  local img=$RBD_PREFIX_NAME-$1
  rbd create --size "$2" --image-feature layering "rbd/$img" >&2 ||
    fail "rbd create rbd/$img failed"
  cleanup_fn rbd rm --no-progress "rbd/$img"
  echo "$img"
}

# rbd_image_from NAME FILE: the same, with FILE's bytes; prints its name.
rbd_image_from ()
{
  local img=$RBD_PREFIX_NAME-$1
  rbd import --no-progress --image-feature layering "$2" "rbd/$img" >&2 ||
    fail "rbd import $2 rbd/$img failed"
  cleanup_fn rbd rm --no-progress "rbd/$img"
  echo "$img"
}
