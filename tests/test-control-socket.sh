#!/usr/bin/env bash
# test-control-socket.sh: the control socket cannot be used to hurt the
# server or its tenants.
#
#  1. mode: the socket is 0600 whatever the umask (000 here), and
#     control_mode=0660 gives 0660;
#  2. control=PATH never deletes what is there: a regular file, a symlink
#     or a directory at PATH makes nbdkit refuse to start and is left
#     as it was; a socket a live server listens on is refused too; a
#     stale socket (nobody listening) is replaced;
#  3. control_uid: as root, with control_mode=0666, the user nobody is
#     refused when not listed (told why), served when listed; without
#     control_uid the mode decides (0600: nobody cannot connect at all);
#  4. control_clients=2: a third client is told "too many control
#     clients" and closed; once one leaves, the next is served;
#  5. slowloris: two clients that trickle a partial line byte by byte
#     (the cap) are closed after control_timeout=1s, and meanwhile a
#     tenant's reads are served; then cfqctl works again; a line longer
#     than 4096 bytes closes its client at once;
#  6. EMFILE: with the server's descriptor limit lowered to what it has
#     open, a control client cannot be accepted; the dispatcher thread
#     must not spin (under 0.2 s of CPU in 2 s, not all of
#     it), a tenant already connected is served meanwhile, and once the
#     limit is back the waiting client is answered;
#  7. a flood: one write of 680 "stats" commands gets 680 answers, in
#     order, each ended by an empty line, and a tenant is served during
#     it;
#  8. nbdkit -u nobody: the socket is made before nbdkit changes user, as
#     nbdkit's own: it belongs to root with mode 0600 (in a sticky
#     directory nobody could have made it, in a root-only one it could
#     not), root's cfqctl is served while the server runs as nobody, and
#     a later start replaces the socket the server as nobody could not
#     remove.
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd
requires_cmd prlimit setpriv

make_sparse "$TESTDIR/disk.img" 64M
cat >"$TESTDIR/c.conf" <<'EOF'
[device]
file = disk.img
[export a]
size = 32M
[export b]
offset = 32M
EOF

# ctl_raw SOCKET LINE: one command, its answer (without the empty line).
ctl_raw () { "$CFQCTL" -s "$1" raw "$2"; }

# mode_of PATH: the octal permission bits.
mode_of () { stat -c %a "$1"; }

# tenant_reads SERVER EXPORT N: N 4 KiB reads over one connection.
tenant_reads ()
{
  "$PYTHON" - "$(export_uri "$1" "$2")" "$3" <<'EOF'
import sys, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
for i in range(int(sys.argv[2])):
    h.pread(4096, (i * 4096) % (16 << 20))
h.shutdown()
EOF
}

# Parts to run: all by default; CTL_PARTS="2 6" runs some (to show, on an
# old build, which finding each part catches).
want () { [[ " ${CTL_PARTS:-1 2 3 4 6 7 8} " == *" $1 "* ]]; }

# ---- 1. mode ------------------------------------------------------------------
part1 ()
{
# (not in a subshell: its exit would run the cleanup that stops nbdkit)
umask 000
tenant_start m1 "$TESTDIR/c.conf"
umask 022
m1_ctl=$TESTDIR/m1.ctl
[ "$(mode_of "$m1_ctl")" = 600 ] ||
  fail "control socket made with umask 000 has mode $(mode_of "$m1_ctl"), want 600"
ctl_raw "$m1_ctl" "get queue_depth" | grep -qx 'queue_depth=32' ||
  fail "the owner cannot use the 0600 socket"
tenant_start m2 "$TESTDIR/c.conf" control_mode=0660
[ "$(mode_of "$TESTDIR/m2.ctl")" = 660 ] ||
  fail "control_mode=0660 gave mode $(mode_of "$TESTDIR/m2.ctl")"
stop_nbdkit m2
stop_nbdkit m1
echo "== 1. modes ok"
}

# ---- 2. what is at PATH -------------------------------------------------------
part2 ()
{
# must_refuse NAME PATH WHY-REGEX: nbdkit with control=PATH exits at once
# with an error that matches.
must_refuse ()
{
  local name=$1 path=$2 re=$3 rc=0
  timeout 30 nbdkit -f -U "$TESTDIR/$name.sock" "$CFQ_PLUGIN" \
    config="$TESTDIR/c.conf" control="$path" >"$TESTDIR/$name.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "$name: nbdkit started with control=$path"
  [ "$rc" != 124 ] || fail "$name: nbdkit did not exit"
  grep -qE "$re" "$TESTDIR/$name.out" ||
    fail "$name: no error matching '$re': $(cat "$TESTDIR/$name.out")"
}
echo "precious data" >"$TESTDIR/precious"
must_refuse reg "$TESTDIR/precious" "control=.*precious: exists and is not a socket"
[ "$(cat "$TESTDIR/precious")" = "precious data" ] || fail "the regular file was changed"
ln -s "$TESTDIR/precious" "$TESTDIR/link"
must_refuse lnk "$TESTDIR/link" "exists and is not a socket"
[ -L "$TESTDIR/link" ] && [ "$(cat "$TESTDIR/precious")" = "precious data" ] ||
  fail "the symlink or its target was changed"
mkdir "$TESTDIR/adir"
must_refuse dir "$TESTDIR/adir" "exists and is not a socket"
[ -d "$TESTDIR/adir" ] || fail "the directory went"
tenant_start live "$TESTDIR/c.conf"
must_refuse live2 "$TESTDIR/live.ctl" "another server is listening on it"
ctl_raw "$TESTDIR/live.ctl" "get queue_depth" >/dev/null ||
  fail "the live server's socket stopped working"
stop_nbdkit live
# A stale socket: a listener that is gone.
"$PYTHON" -c 'import socket,sys; s=socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' \
  "$TESTDIR/stale.ctl"
[ -S "$TESTDIR/stale.ctl" ] || fail "could not make a stale socket"
start_nbdkit st config="$TESTDIR/c.conf" control="$TESTDIR/stale.ctl"
wait_for "the stale socket replaced" 30 ctl_raw "$TESTDIR/stale.ctl" "get queue_depth"
stop_nbdkit st
[ ! -e "$TESTDIR/stale.ctl" ] || fail "the socket was left behind at exit"
echo "== 2. control=PATH never deletes what is not a stale socket"
}

# ---- 3. uids ------------------------------------------------------------------
part3 ()
{
tenant_start m3 "$TESTDIR/c.conf"
if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
  nob=$(id -u nobody)
  as_nobody () { setpriv --reuid="$nob" --regid="$(id -g nobody)" --clear-groups "$@"; }
  chmod 0711 "$TESTDIR"           # nobody may reach the sockets, not list
  tenant_start u1 "$TESTDIR/c.conf" control_mode=0666 control_uid=12345
  out=$(as_nobody "$CFQCTL" -s "$TESTDIR/u1.ctl" raw "get queue_depth" 2>&1) &&
    fail "uid $nob was served though not in control_uid: $out"
  grep -q "uid $nob may not use this control socket" <<<"$out" ||
    fail "the refused client was not told why: $out"
  ctl_raw "$TESTDIR/u1.ctl" "get queue_depth" >/dev/null || fail "root refused"
  grep -q "refused a client with uid $nob" "$TESTDIR/u1.log" ||
    fail "the refusal was not logged"
  stop_nbdkit u1
  tenant_start u2 "$TESTDIR/c.conf" control_mode=0666 control_uid=12345,nobody
  as_nobody "$CFQCTL" -s "$TESTDIR/u2.ctl" raw "get queue_depth" | grep -qx 'queue_depth=32' ||
    fail "listed user nobody was not served"
  stop_nbdkit u2
  out=$(as_nobody "$CFQCTL" -s "$TESTDIR/m3.ctl" raw "get queue_depth" 2>&1) &&
    fail "nobody used a 0600 socket: $out"
  grep -q "Permission denied" <<<"$out" || fail "0600 socket: $out"
  echo "== 3. control_uid and the mode keep other users out"
else
  echo "== 3. skipped: needs root and the user nobody"
fi
stop_nbdkit m3
}

# ---- 4, 5. client cap, slowloris, long lines ------------------------------------
part4 ()
{
tenant_start cap "$TESTDIR/c.conf" control_clients=2 control_timeout=1s
cap_ctl=$TESTDIR/cap.ctl
# Two slowloris clients: a byte of a line every 0.2 s, never a newline.
# Prints, for each, the seconds until the server closed it (or "open").
"$PYTHON" - "$cap_ctl" >"$TESTDIR/loris.out" 2>&1 <<'EOF' &
import socket, sys, time
path = sys.argv[1]
socks = []
for i in range(2):
    s = socket.socket(socket.AF_UNIX)
    s.connect(path)
    s.setblocking(False)
    socks.append(s)
t0 = time.time()
closed = [None, None]
while time.time() - t0 < 6 and None in closed:
    for i, s in enumerate(socks):
        if closed[i] is not None:
            continue
        try:
            s.send(b"s")
        except OSError:
            closed[i] = time.time() - t0
            continue
        try:
            if s.recv(4096) == b"":
                closed[i] = time.time() - t0
        except BlockingIOError:
            pass
        except OSError:
            closed[i] = time.time() - t0
    time.sleep(0.2)
print(" ".join("open" if c is None else "%.1f" % c for c in closed))
EOF
loris=$!
cleanup_fn kill "$loris"
sleep 0.5
out=$("$CFQCTL" -s "$cap_ctl" raw "get queue_depth" 2>&1) &&
  fail "a third client was served past control_clients=2: $out"
grep -q "too many control clients (at most 2)" <<<"$out" ||
  fail "the third client was not told why: $out"
tenant_reads cap a 200 || fail "a tenant was not served while the control slots were held"
wait "$loris" || fail "the slowloris client failed: $(cat "$TESTDIR/loris.out")"
read -r c1 c2 <"$TESTDIR/loris.out"
echo "slowloris clients closed after: $c1 s, $c2 s"
for c in "$c1" "$c2"; do
  [ "$c" != open ] || fail "a slowloris client was still connected after 6 s (control_timeout=1s)"
done
ctl_raw "$cap_ctl" "get queue_depth" | grep -qx 'queue_depth=32' ||
  fail "cfqctl not served after the slowloris clients were closed"
grep -q "refused a client .*already 2 clients" "$TESTDIR/cap.log" ||
  fail "the refusal for the cap was not logged"
# A line longer than the line buffer closes the client.
"$PYTHON" - "$cap_ctl" <<'EOF' || fail "a 5000-byte line did not close its client"
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.settimeout(5)
try:
    s.sendall(b"x" * 5000)
    sys.exit(0 if s.recv(100) == b"" else 1)
except ConnectionResetError:
    sys.exit(0)                 # closed with our bytes unread
EOF
stop_nbdkit cap
echo "== 4, 5. the client cap, the timeout and the line limit hold"
}

# ---- 6. EMFILE ------------------------------------------------------------------
part6 ()
{
tenant_start fd "$TESTDIR/c.conf"
fd_ctl=$TESTDIR/fd.ctl
disp=
for t in /proc/"${NBDKIT_PID[fd]}"/task/*; do
  [ "$(cat "$t/comm")" = cfq-dispatch ] && disp=$t
done
[ -n "$disp" ] || fail "no cfq-dispatch thread in nbdkit ${NBDKIT_PID[fd]}"
cpu_ticks () { awk '{print $14 + $15}' "$disp/stat"; }
# A tenant connected before the limit drops: it reads on a signal.
mkfifo "$TESTDIR/go"
"$PYTHON" - "$(export_uri fd a)" "$TESTDIR/go" >"$TESTDIR/tenant.out" 2>&1 <<'EOF' &
import sys, nbd
h = nbd.NBD()
h.connect_uri(sys.argv[1])
h.pread(4096, 0)
print("connected", flush=True)
open(sys.argv[2]).read()
for i in range(500):
    h.pread(4096, i * 4096)
print("served 500 reads", flush=True)
h.shutdown()
EOF
tenant=$!
cleanup_fn kill "$tenant"
wait_for "the tenant to connect" 30 grep -q connected "$TESTDIR/tenant.out"
hard=$(prlimit --pid "${NBDKIT_PID[fd]}" --nofile --noheadings --output HARD)
# The lowest free descriptor number: with the limit there, none is left.
# (The server may still close a descriptor of its own just then: if the
# waiting client is served after all, try again.)
for (( try = 0; try < 10; try++ )); do
  nfree=$(ls /proc/"${NBDKIT_PID[fd]}"/fd | sort -n |
          awk 'BEGIN { n = 0 } $1 == n { n++ } END { print n }')
  prlimit --pid "${NBDKIT_PID[fd]}" --nofile="$nfree:$hard"
  "$CFQCTL" -s "$fd_ctl" raw "get queue_depth" >"$TESTDIR/late.out" 2>&1 &
  late=$!
  sleep 0.5
  kill -0 "$late" 2>/dev/null && break
  wait "$late" || true
  prlimit --pid "${NBDKIT_PID[fd]}" --nofile="$hard:$hard"
done
cleanup_fn kill "$late"
kill -0 "$late" 2>/dev/null ||
  fail "could not make accept fail with EMFILE: $(cat "$TESTDIR/late.out")"
t0=$(cpu_ticks)
sleep 2
t1=$(cpu_ticks)
echo "dispatcher CPU while accept fails with EMFILE: $((t1 - t0)) ticks in 2 s"
echo go >"$TESTDIR/go"
wait "$tenant" || fail "the tenant failed during EMFILE: $(cat "$TESTDIR/tenant.out")"
grep -q "served 500 reads" "$TESTDIR/tenant.out" || fail "tenant: $(cat "$TESTDIR/tenant.out")"
[ $((t1 - t0)) -lt 20 ] ||
  fail "the dispatcher spun on EMFILE: $((t1 - t0)) ticks of CPU in 2 s"
kill -0 "$late" 2>/dev/null || fail "the control client was served or failed during EMFILE: $(cat "$TESTDIR/late.out")"
grep -q "accept: Too many open files: not accepting" "$TESTDIR/fd.log" ||
  fail "the pause was not logged"
prlimit --pid "${NBDKIT_PID[fd]}" --nofile="$hard:$hard"
wait "$late" || fail "the waiting control client failed: $(cat "$TESTDIR/late.out")"
grep -qx 'queue_depth=32' "$TESTDIR/late.out" || fail "late client: $(cat "$TESTDIR/late.out")"
echo "== 6. EMFILE pauses accepting instead of spinning"
stop_nbdkit fd
}

# ---- 7. a flood of commands in one write ------------------------------------------
part7 ()
{
tenant_start fl "$TESTDIR/c.conf"
fd_ctl=$TESTDIR/fl.ctl
"$PYTHON" - "$fd_ctl" <<'EOF' &
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"stats\n" * 680)
buf = b""
while buf.count(b"\n\n") < 680:
    d = s.recv(1 << 16)
    if not d:
        sys.exit("closed after %d answers" % buf.count(b"\n\n"))
    buf += d
answers = buf.split(b"\n\n")[:680]
bad = [a for a in answers if not a.startswith(b'{"device":')]
sys.exit("%d answers are not stats" % len(bad) if bad else 0)
EOF
flood=$!
tenant_reads fl b 300 || fail "a tenant was not served during the command flood"
wait "$flood" || fail "the flood of 680 stats did not get 680 answers"
echo "== 7. 680 commands in one write: 680 answers, tenant served"
stop_nbdkit fl
}

# ---- 8. nbdkit -u nobody ---------------------------------------------------------
part8 ()
{
if [ "$(id -u)" != 0 ] || ! id nobody >/dev/null 2>&1; then
  echo "== 8. skipped: needs root and the user nobody"
  return
fi
local nob ctl
nob=$(id -u nobody)
chmod 1777 "$TESTDIR"           # nbdkit writes its pid file as nobody
mkdir -m 0700 "$TESTDIR/rootonly"
for ctl in "$TESTDIR/un.ctl" "$TESTDIR/rootonly/un.ctl"; do
  start_nbdkit un -u nobody -- config="$TESTDIR/c.conf" control="$ctl"
  wait_for "control socket $ctl" 30 test -S "$ctl"
  [ "$(awk '/^Uid:/ { print $3 }' "/proc/${NBDKIT_PID[un]}/status")" = "$nob" ] ||
    fail "nbdkit -u nobody does not run as nobody"
  [ "$(stat -c %u "$ctl")" = 0 ] ||
    fail "$ctl belongs to uid $(stat -c %u "$ctl"), want root (made before nbdkit changes user)"
  [ "$(mode_of "$ctl")" = 600 ] || fail "$ctl has mode $(mode_of "$ctl"), want 600"
  ctl_raw "$ctl" "get queue_depth" | grep -qx 'queue_depth=32' ||
    fail "root's cfqctl was not served on $ctl"
  tenant_reads un a 10 || fail "a tenant was not served by nbdkit -u nobody"
  stop_nbdkit un
  [ "${NBDKIT_STATUS[un]}" = 0 ] || fail "nbdkit -u nobody exited with ${NBDKIT_STATUS[un]}"
  # As nobody it may not remove root's socket: the next start replaces it.
  start_nbdkit un -u nobody -- config="$TESTDIR/c.conf" control="$ctl"
  wait_for "control socket $ctl again" 30 ctl_raw "$ctl" "get queue_depth"
  stop_nbdkit un
done
chmod 0700 "$TESTDIR"
echo "== 8. nbdkit -u nobody: the socket is root's, made before the change of user"
}

for p in 1 2 3 4 6 7 8; do
  if want $p; then part$p; fi
done
echo "ok"
