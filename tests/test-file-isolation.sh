#!/usr/bin/env bash
# test-file-isolation.sh: tenants on different files share no lock, and
# no export's own file may be the device or another writer's file under
# another name.
#
#  1. two exports with files of their own, a and b: a's client sends
#     unaligned writes 16 deep to the first 64 KiB (read-modify-writes that
#     overlap each other, so they wait for each other), while b's client
#     writes at the same offsets of its file, one at a time.  Then
#     "stats": a's file counted range-lock waits, b's none (one lock for
#     all files, as before, made b wait for a: the writes of one tenant
#     slowed another's from 6,300 to 473 in 2 s);
#  2. an export's own file that is the device under another name - a
#     symlink, a hard link, a path with "..", a second device node - and
#     two writable exports on one file through a hard link: nbdkit refuses
#     to start, naming both; two readonly exports may share a file;
#  3. what one file's filesystem lacks is switched off for that file only:
#     with an export on ramfs (no fallocate), a trim there switches hole
#     punching off for the ramfs file, and the next trim of a region of
#     the device (ext4 here) still frees its blocks (one switch for all
#     files left the device's trims doing nothing).
# timeout: 180
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd

M=$((1 << 20))
make_image "$TESTDIR/dev.img" $((8 * M))
make_image "$TESTDIR/a.img" $((8 * M))
make_image "$TESTDIR/b.img" $((8 * M))

# ---- 1. one lock per file --------------------------------------------------------
cat >"$TESTDIR/f.conf" <<'EOC'
[device]
file = dev.img
[export a]
file = a.img
[export b]
file = b.img
EOC
tenant_start srv "$TESTDIR/f.conf"
"$PYTHON" - "$(export_uri srv a)" "$(export_uri srv b)" <<'EOP'
import nbd, sys, threading
def hammer_a():
    h = nbd.NBD(); h.set_strict_mode(0); h.connect_uri(sys.argv[1])
    buf = b"a" * 3000
    cookies = []
    for i in range(4000):
        while h.aio_in_flight() >= 16:
            h.poll(-1)
        cookies.append(h.aio_pwrite(buf, 100 + (i % 16) * 4000))
    while h.aio_in_flight() > 0:
        h.poll(-1)
    for c in cookies:
        h.aio_command_completed(c)
    h.shutdown()
t = threading.Thread(target=hammer_a)
t.start()
h = nbd.NBD(); h.set_strict_mode(0); h.connect_uri(sys.argv[2])
n = 0
while t.is_alive() or n < 100:
    h.pwrite(b"b" * 3000, 100 + (n % 16) * 4000)
    n += 1
t.join()
h.shutdown()
print("b wrote %d times while a hammered" % n)
EOP
stats_json srv >"$TESTDIR/s.json"
read -r wa wb < <("$PYTHON" -c '
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))["exports"]}
print(e["a"]["range_lock_waits"], e["b"]["range_lock_waits"])' "$TESTDIR/s.json") ||
  fail "no range_lock_waits in stats: $(cat "$TESTDIR/s.json")"
echo "range-lock waits: a's file $wa, b's file $wb"
[ "$wa" -gt 0 ] || fail "a's overlapping writes never waited: the counter does not count"
[ "$wb" = 0 ] || fail "b waited $wb times: for a's lock"
stop_nbdkit srv
echo "== 1. a tenant's writes do not wait for another file's"

# ---- 2. aliases ------------------------------------------------------------------
# refused NAME CONF REGEX...: nbdkit does not start with CONF, and says so.
refused ()
{
  local name=$1 conf=$2 rc=0 re; shift 2
  timeout 60 nbdkit -f -U "$TESTDIR/$name.sock" "$CFQ_PLUGIN" config="$conf" \
    >"$TESTDIR/$name.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] ||
    fail "$name: nbdkit started (or hung: $rc) with $(cat "$conf")"
  for re in "$@"; do
    grep -qE "$re" "$TESTDIR/$name.out" ||
      fail "$name: no error matching '$re': $(cat "$TESTDIR/$name.out")"
  done
}
ln -s dev.img "$TESTDIR/link.img"
ln "$TESTDIR/dev.img" "$TESTDIR/hard.img"
mkdir "$TESTDIR/sub"
for f in link.img hard.img sub/../dev.img; do
  printf '[device]\nfile = dev.img\n[export x]\nfile = %s\n' "$f" >"$TESTDIR/alias.conf"
  refused "alias-${f//\//_}" "$TESTDIR/alias.conf" \
    "export 'x': file .* is the device .*dev.img under another name"
done
ln "$TESTDIR/a.img" "$TESTDIR/a2.img"
printf '[device]\nfile = dev.img\n[export x]\nfile = a.img\n[export y]\nfile = a2.img\n' \
  >"$TESTDIR/share.conf"
refused share "$TESTDIR/share.conf" \
  "export 'y': file .*a2.img is also the file of export 'x'"
printf '[device]\nfile = dev.img\n[export x]\nfile = a.img\nreadonly = yes\n[export y]\nfile = a2.img\nreadonly = yes\n' \
  >"$TESTDIR/ro.conf"
tenant_start ro "$TESTDIR/ro.conf"
stop_nbdkit ro
if [ "$(id -u)" = 0 ] && command -v losetup >/dev/null && losetup -f >/dev/null 2>&1; then
  loop_attach "$TESTDIR/dev.img"
  node=$TESTDIR/node
  mknod "$node" b "$((0x$(stat -c %t "$LOOPDEV")))" "$((0x$(stat -c %T "$LOOPDEV")))"
  printf '[device]\nfile = %s\n[export x]\nfile = %s\n' "$LOOPDEV" "$node" \
    >"$TESTDIR/node.conf"
  refused node "$TESTDIR/node.conf" "is the device .* under another name \(same device number\)"
else
  echo "(a second device node: skipped, needs root and a loop device)"
fi
echo "== 2. aliases of the device and shared writable files are refused"

# ---- 3. capabilities per file ------------------------------------------------------
part3 ()
{
  local rdir=$TESTDIR/ramfs before after
  if [ "$(id -u)" != 0 ] || ! grep -qw ramfs /proc/filesystems; then
    echo "== 3. skipped: needs root and ramfs"
    return
  fi
  mkdir -p "$rdir"
  mount -t ramfs ramfs "$rdir" || { echo "== 3. skipped: cannot mount ramfs"; return; }
  cleanup_fn umount -l "$rdir"
  make_image "$rdir/r.img" $((4 * M))
  make_sparse "$TESTDIR/cap.img" $((8 * M))
  fallocate -p -o 0 -l 4096 "$TESTDIR/cap.img" 2>/dev/null ||
    { echo "== 3. skipped: the test directory cannot punch holes"; return; }
  printf '[device]\nfile = cap.img\n[export dev]\nsize = 4M\n[export ram]\nfile = %s\n' \
    "$rdir/r.img" >"$TESTDIR/cap.conf"
  start_nbdkit cap -v -- config="$TESTDIR/cap.conf"
  "$PYTHON" - "$(export_uri cap dev)" <<'EOP' || fail "writing the device export"
import sys, nbd
h = nbd.NBD(); h.connect_uri(sys.argv[1])
h.pwrite(b"\x5a" * (1 << 20), 0); h.flush(); h.shutdown()
EOP
  before=$(stat -c %b "$TESTDIR/cap.img")
  "$PYTHON" - "$(export_uri cap ram)" "$(export_uri cap dev)" <<'EOP' || fail "the trims"
import sys, nbd
for uri in sys.argv[1:]:
    h = nbd.NBD(); h.connect_uri(uri)
    h.trim(1 << 20, 0); h.flush(); h.shutdown()
EOP
  after=$(stat -c %b "$TESTDIR/cap.img")
  stop_nbdkit cap
  echo "device file: $before blocks of 512 bytes before its trim, $after after"
  [ "$after" -le $((before - 2048)) ] ||
    fail "the device's trim freed nothing ($before -> $after blocks): hole punching was off for it too"
  grep -q "r.img: fallocate PUNCH_HOLE not supported: switched off for this file" "$TESTDIR/cap.log" ||
    fail "the ramfs file's trim did not switch hole punching off for it: $(grep -i punch "$TESTDIR/cap.log")"
  echo "== 3. a capability one file lacks is off for that file only"
}
part3
echo ok
