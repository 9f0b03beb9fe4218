#!/usr/bin/env bash
# test-rbd-config.sh: backend=rbd's configuration, without a cluster.  Every
# mistake is refused at start with a line that says what is wrong: an image
# without backend=rbd, backend=rbd without an image, both image= and file=,
# a malformed image name, an export's own file that is no image (and the
# other way round), a bad rbd_timeout; and a cluster that does not answer
# (a mon address where nothing listens) is reported within rbd_timeout and
# then some, not waited for.  A build without librbd says so instead.
# (Serving images: tests/ceph/, make check-ceph.)
# timeout: 120
. "$(dirname "$0")/functions.sh"
requires_plugin
plugin_is_ours || skip "backend=rbd is our plugin's"

# refused WANT ARGS...: nbdkit with ARGS must fail at start, saying WANT.
refused ()
{
  local want=$1 rc=0; shift
  timeout 60 nbdkit -f -U "$TESTDIR/x.sock" "$CFQ_PLUGIN" "$@" \
    >"$TESTDIR/out" 2>&1 </dev/null || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || {
    cat "$TESTDIR/out"; fail "$*: not refused at start (exit $rc)"; }
  grep -qF -- "$want" "$TESTDIR/out" || {
    cat "$TESTDIR/out"; fail "$*: the error does not say '$want'"; }
  echo "refused as it must be: $* -> $(grep -F -- "$want" "$TESTDIR/out" | head -1)"
}

if ! nbdkit "$CFQ_PLUGIN" --dump-plugin | grep -qx 'cfq_rbd=yes'; then
  refused "not built with librbd" backend=rbd image=x
  skip "the plugin was built without librbd: only its refusal tested"
fi

make_image "$TESTDIR/disk.img" $((1 << 20))
refused "an RBD image needs backend=rbd" file=rbd:pool/img
refused "the device is an image: give pool= and image=" backend=rbd
refused "not file=$TESTDIR/disk.img" backend=rbd file="$TESTDIR/disk.img"
refused "both image= and file=" backend=rbd image=a file=rbd:b
refused "not an image name" backend=rbd file=rbd:a/b/c
refused "not an image name" backend=rbd image=/x
refused "want a time from 1s to 3600s (a bare number is seconds)" backend=rbd image=a rbd_timeout=0
refused "want a time from 1s to 3600s (a bare number is seconds)" backend=rbd image=a rbd_timeout=soon

cat >"$TESTDIR/mixed.conf" <<EOF
[device]
file = disk.img
[export a]
file = rbd:pool/img
EOF
refused "an RBD image needs backend=rbd" config="$TESTDIR/mixed.conf"

# A mon where nothing listens: refused within rbd_timeout (2 s), well
# within the 30 s bound here, with the image and the cluster named.
port=$((40000 + RANDOM % 20000))
cat >"$TESTDIR/ceph.conf" <<EOF
[global]
mon host = v2:127.0.0.1:$port
auth client required = none
EOF
t0=$(date +%s)
refused "cfq: rbd rbd/img: connecting to the cluster" backend=rbd image=img \
  conf="$TESTDIR/ceph.conf" rbd_timeout=2
took=$(( $(date +%s) - t0 ))
[ "$took" -le 30 ] || fail "an unreachable cluster took $took s to be reported"
echo "an unreachable cluster is reported in $took s"
