#!/usr/bin/env bash
# test-tenant-hygiene.sh: what one tenant sends cannot reach another's
# view, the log, or the server's limits.
#
#  1. connection limits: with [device] max_connections = 3 and export a's
#     max_connections = 1, a second client of a is refused, then clients
#     of b up to 3 in all, then a fourth is refused; each refusal logged
#     with the limit it hit; stats shows connections, limits and
#     refusals; once clients leave, new ones are admitted;
#  2. names in the log (12): a client asking for the export
#     "x<newline>nbdkit: error: FORGED" gets one escaped line, never a
#     line of its own making;
#  3. list_exports (11): a client over the Unix socket sees only the
#     exports allow= lets it open (not "priv", allow = 10.9.9.9); each
#     description is the export's own size (a file export's is its
#     file's, not 0) and "read-only", never its group or where it lies
#     on the device; stats give a file export its file's size;
#  4. tls = require (14): with nbdkit --tls=on and a PSK, a plaintext
#     client is refused by "sec" (and told why in the log), served by
#     "pub", and does not see "sec" listed; a TLS client is served by
#     both and sees both listed;
#  5. names in the JSON (10): an export name that is not UTF-8 makes the
#     config fail at its line; names with quotes, backslashes and non-ASCII
#     letters come back intact through stats as valid JSON;
#  6. stats=FILE (15): a symlink at FILE is refused at start-up and its
#     target is left alone; a symlink put there while the server runs is
#     not followed at exit; a FIFO there does not hang the exit; a new
#     file is 0600, an existing one of ours is made 0600; another user's
#     file (0666 in a sticky directory) and a file with a second hard
#     link are refused at start-up, and not written at exit when they
#     appear while the server runs.
#  7. a flood of refused clients: 2,000 connections asking for unknown
#     exports or one allow= keeps them from, as fast as they can: the log
#     gets at most 10 lines at once and 5 a second (plugin/loglimit.h),
#     every refusal is either a line or counted in a "suppressed" line,
#     and no line lists the exports (their names are the tenants').
# CTL_PARTS="1 3" runs some parts (to show what an old build fails).
# timeout: 240
. "$(dirname "$0")/tenant-functions.sh"
tenant_requires
requires_python_nbd

want () { [[ " ${CTL_PARTS:-1 2 3 4 5 6 7} " == *" $1 "* ]]; }
make_sparse "$TESTDIR/disk.img" 64M

# connect SRV EXPORT: "ok" or "refused", holding nothing.
probe ()
{
  "$PYTHON" - "$(export_uri "$1" "$2")" <<'EOP'
import sys, nbd
h = nbd.NBD()
try:
    h.connect_uri(sys.argv[1])
except nbd.Error:
    print("refused"); sys.exit(0)
h.pread(512, 0); h.shutdown(); print("ok")
EOP
}

# listing SOCK [psk]: the export names a client sees, sorted, one line.
listing ()
{
  "$PYTHON" - "$1" "${2:-}" <<'EOP'
import sys, nbd
h = nbd.NBD()
if sys.argv[2]:
    h.set_tls(nbd.TLS_REQUIRE)
    h.set_tls_psk_file(sys.argv[2])
    h.set_tls_username("alice")
h.set_opt_mode(True)
h.connect_unix(sys.argv[1])
names = []
h.opt_list(lambda name, desc: names.append(name) or 0)
h.opt_abort()
print(" ".join(sorted(names)))
EOP
}

cat >"$TESTDIR/lim.conf" <<'EOC'
[device]
file = disk.img
max_connections = 3
[export a]
size = 32M
max_connections = 1
[export b]
offset = 32M
EOC

# A config with no key an old build lacks, for parts 2, 3 and 6.
cat >"$TESTDIR/plain.conf" <<'EOC'
[device]
file = disk.img
[export a]
size = 32M
[export b]
offset = 32M
EOC

part1 ()
{
  tenant_start lim "$TESTDIR/lim.conf"
  cat >"$TESTDIR/holder.py" <<'EOP'
import os, sys, time, nbd
uri_a, uri_b, cmds, outp = sys.argv[1:5]
held = {"a": [], "b": []}
out = open(outp, "w", buffering=1)
def conn(name):
    h = nbd.NBD()
    try:
        h.connect_uri(uri_a if name == "a" else uri_b)
    except nbd.Error:
        return "refused"
    h.pread(512, 0)
    held[name].append(h)
    return "ok"
for line in open(cmds):             # a fifo: one command a line
    cmd = line.split()
    if cmd[0] == "open":
        out.write("%s %s\n" % (cmd[1], conn(cmd[1])))
    elif cmd[0] == "close":
        held[cmd[1]].pop().shutdown()
        out.write("closed %s\n" % cmd[1])
EOP
  mkfifo "$TESTDIR/cmds"
  : >"$TESTDIR/answers"
  "$PYTHON" "$TESTDIR/holder.py" "$(export_uri lim a)" "$(export_uri lim b)" \
    "$TESTDIR/cmds" "$TESTDIR/answers" &
  holder=$!
  cleanup_fn kill "$holder"
  exec 7>"$TESTDIR/cmds"
  # have_answers N: the holder has written N answer lines (counted afresh
  # on each call: wait_for repeats the command, not its arguments).
  have_answers ()
  {
    [ "$(wc -l <"$TESTDIR/answers")" -ge "$1" ]
  }
  # ask "open a" EXPECT: send a command, wait for its answer line.
  n=0
  ask ()
  {
    echo "$1" >&7
    n=$((n + 1))
    wait_for "answer $n to '$1'" 30 have_answers "$n"
    got=$(sed -n "${n}p" "$TESTDIR/answers")
    [ "$got" = "$2" ] || fail "'$1': got '$got', want '$2'"
  }
  ask "open a" "a ok"
  ask "open a" "a refused"
  grep -q "export 'a': connection refused: 1 clients on this export already (max_connections=1 in its \[export\])" \
    "$TESTDIR/lim.log" || fail "the per-export refusal was not logged: $(cat "$TESTDIR/lim.log")"
  ask "open b" "b ok"
  ask "open b" "b ok"
  sleep 1.1                     # the log says at most one line a second
  ask "open b" "b refused"
  grep -q "export 'b': connection refused: 3 clients connected to the server already (max_connections=3 in \[device\])" \
    "$TESTDIR/lim.log" || fail "the total's refusal was not logged: $(cat "$TESTDIR/lim.log")"
  stats_json lim >"$TESTDIR/lim.json"
  "$PYTHON" - "$TESTDIR/lim.json" <<'EOP' || fail "stats: $(cat "$TESTDIR/lim.json")"
import json, sys
d = json.load(open(sys.argv[1]))
dev = d["device"]
e = {x["name"]: x for x in d["exports"]}
assert (dev["connections"], dev["max_connections"], dev["refused_connections"]) == (3, 3, 2), dev
assert (e["a"]["connections"], e["a"]["max_connections"], e["a"]["refused_connections"]) == (1, 1, 1), e["a"]
assert (e["b"]["connections"], e["b"]["max_connections"]) == (2, 0), e["b"]
EOP
  ask "close a" "closed a"
  ask "open b" "b ok"
  ask "close b" "closed b"
  ask "open a" "a ok"
  exec 7>&-
  wait "$holder" || true
  stop_nbdkit lim
  echo "== 1. connection limits per export and in total, logged, in stats"
}

part2 ()
{
  tenant_start lg "$TESTDIR/plain.conf"
  "$PYTHON" - "${NBDKIT_SOCK[lg]}" <<'EOP'
import sys, nbd
h = nbd.NBD()
h.set_export_name("x\nnbdkit: error: FORGED\x1b[31m\xe9")
try:
    h.connect_unix(sys.argv[1])
    sys.exit("an unknown export was accepted")
except nbd.Error:
    pass
EOP
  stop_nbdkit lg
  ! grep -q "^nbdkit: error: FORGED" "$TESTDIR/lg.log" ||
    fail "the client forged a log line: $(cat "$TESTDIR/lg.log")"
  grep -qF "unknown export 'x\\x0anbdkit: error: FORGED\\x1b[31m\\xc3\\xa9'" "$TESTDIR/lg.log" ||
    grep -qF "unknown export 'x\\x0anbdkit: error: FORGED\\x1b[31mé'" "$TESTDIR/lg.log" ||
    fail "the export name was not logged escaped on one line: $(cat "$TESTDIR/lg.log")"
  echo "== 2. a client's export name is escaped in the log"
}

cat >"$TESTDIR/vis.conf" <<'EOC'
[device]
file = disk.img
[export pub]
size = 16M
[export priv]
offset = 16M
size = 16M
allow = 10.9.9.9
[export mine]
offset = 32M
size = 16M
allow = unix
[export sec]
offset = 48M
tls = require
EOC

part3 ()
{
  grep -v "^tls" "$TESTDIR/vis.conf" >"$TESTDIR/vis3.conf"
  tenant_start vis "$TESTDIR/vis3.conf"
  got=$(listing "${NBDKIT_SOCK[vis]}")
  [ "$got" = "mine pub sec" ] || fail "a Unix-socket client lists '$got', want 'mine pub sec' (not priv: allow = 10.9.9.9)"
  stop_nbdkit vis
  # Descriptions: the export's own size, nothing of the layout.
  truncate -s 3M "$TESTDIR/own.img"
  cat >"$TESTDIR/desc.conf" <<'EOC'
[device]
file = disk.img
[group hiddengroup]
weight = 200
[export reg]
group = hiddengroup
offset = 48M
size = 8M
[export ro]
offset = 56M
readonly = 1
[export own]
group = hiddengroup
file = own.img
EOC
  tenant_start desc "$TESTDIR/desc.conf"
  "$PYTHON" - "${NBDKIT_SOCK[desc]}" <<'EOP' || fail "list_exports descriptions"
import sys, nbd
h = nbd.NBD()
h.set_opt_mode(True)
h.connect_unix(sys.argv[1])
got = {}
h.opt_list(lambda name, desc: got.__setitem__(name, desc) or 0)
h.opt_abort()
print(got)
want = {"reg": "8388608 bytes", "ro": "8388608 bytes, read-only",
        "own": "3145728 bytes"}
assert got == want, "descriptions %r, want %r" % (got, want)
EOP
  stats_json desc >"$TESTDIR/desc.json"
  "$PYTHON" - "$TESTDIR/desc.json" <<'EOP' || fail "stats of a file export: $(cat "$TESTDIR/desc.json")"
import json, sys
e = {x["name"]: x for x in json.load(open(sys.argv[1]))["exports"]}
assert e["own"]["size"] == 3 << 20 and e["own"]["file"].endswith("/own.img"), e["own"]
assert e["reg"]["size"] == 8 << 20 and e["reg"]["offset"] == 48 << 20, e["reg"]
EOP
  stop_nbdkit desc
  echo "== 3. list_exports shows only what the client may open, and only its size"
}

part4 ()
{
  command -v openssl >/dev/null || { echo "== 4. skipped: no openssl for a PSK"; return; }
  echo "alice:$(openssl rand -hex 32)" >"$TESTDIR/keys.psk"
  chmod 600 "$TESTDIR/keys.psk"
  start_nbdkit tls --tls=on --tls-psk="$TESTDIR/keys.psk" -- \
    config="$TESTDIR/vis.conf" control="$TESTDIR/tls.ctl"
  [ "$(probe tls pub)" = ok ] || fail "a plaintext client was refused by pub"
  [ "$(probe tls sec)" = refused ] || fail "a plaintext client was served by sec (tls = require)"
  grep -q "export 'sec': it requires TLS (tls=require), the client did not negotiate it: refused" \
    "$TESTDIR/tls.log" || fail "the TLS refusal was not logged: $(cat "$TESTDIR/tls.log")"
  "$PYTHON" - "${NBDKIT_SOCK[tls]}" "$TESTDIR/keys.psk" <<'EOP' || fail "a TLS client was refused"
import sys, nbd
for name in ("sec", "pub"):
    h = nbd.NBD()
    h.set_tls(nbd.TLS_REQUIRE)
    h.set_tls_psk_file(sys.argv[2])
    h.set_tls_username("alice")
    h.set_export_name(name)
    h.connect_unix(sys.argv[1])
    h.pread(512, 0)
    h.shutdown()
EOP
  got=$(listing "${NBDKIT_SOCK[tls]}")
  [ "$got" = "mine pub" ] || fail "a plaintext client lists '$got', want 'mine pub' (not sec: tls = require)"
  got=$(listing "${NBDKIT_SOCK[tls]}" "$TESTDIR/keys.psk")
  [ "$got" = "mine pub sec" ] || fail "a TLS client lists '$got', want 'mine pub sec'"
  stop_nbdkit tls
  echo "== 4. tls = require refuses plaintext clients, serves TLS ones"
}

part5 ()
{
  local rc=0
  printf '[device]\nfile = disk.img\n[export caf\xe9]\n' >"$TESTDIR/bad.conf"
  timeout 60 nbdkit -f -U "$TESTDIR/bad.sock" "$CFQ_PLUGIN" config="$TESTDIR/bad.conf" \
    >"$TESTDIR/bad.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "a config with a non-UTF-8 export name was served"
  grep -q "bad.conf:3: section name is not valid UTF-8 (byte 0xe9 at byte 3)" "$TESTDIR/bad.out" ||
    fail "no FILE:LINE error for the name: $(cat "$TESTDIR/bad.out")"
  printf '[device]\nfile = disk.img\n[export q"x\\y caf\xc3\xa9]\n' >"$TESTDIR/odd.conf"
  tenant_start odd "$TESTDIR/odd.conf"
  ctl odd raw stats >"$TESTDIR/odd.json"
  "$PYTHON" - "$TESTDIR/odd.json" <<'EOP' || fail "stats with an odd name: $(cat "$TESTDIR/odd.json")"
import json, sys
raw = open(sys.argv[1], "rb").read()
d = json.loads(raw.decode("utf-8"))
names = [e["name"] for e in d["exports"]]
assert names == ['q"x\\y caf\u00e9'], names
EOP
  stop_nbdkit odd
  echo "== 5. names are UTF-8 at the config, and come back intact in JSON"
}

# must_refuse_stats PATH WHY-REGEX: nbdkit with stats=PATH exits at once
# with an error that matches.
must_refuse_stats ()
{
  local rc=0
  timeout 60 nbdkit -f -U "$TESTDIR/mr.sock" "$CFQ_PLUGIN" config="$TESTDIR/plain.conf" \
    stats="$1" >"$TESTDIR/mr.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "stats=$1 was accepted"
  grep -qE "$2" "$TESTDIR/mr.out" || fail "no error matching '$2': $(cat "$TESTDIR/mr.out")"
}

part6 ()
{
  local rc=0
  echo "precious" >"$TESTDIR/victim"
  ln -s "$TESTDIR/victim" "$TESTDIR/st.link"
  timeout 60 nbdkit -f -U "$TESTDIR/sl.sock" "$CFQ_PLUGIN" config="$TESTDIR/plain.conf" \
    stats="$TESTDIR/st.link" >"$TESTDIR/sl.out" 2>&1 || rc=$?
  [ "$rc" != 0 ] && [ "$rc" != 124 ] || fail "stats= through a symlink was accepted"
  grep -q "stats=.*st.link: is a symbolic link: refusing to write through it" "$TESTDIR/sl.out" ||
    fail "no error for the symlink: $(cat "$TESTDIR/sl.out")"
  [ "$(cat "$TESTDIR/victim")" = precious ] || fail "the symlink's target was written"
  # A symlink put there while the server runs.
  tenant_start sr "$TESTDIR/plain.conf" stats="$TESTDIR/late.json"
  ln -s "$TESTDIR/victim" "$TESTDIR/late.json"
  stop_nbdkit sr
  [ "$(cat "$TESTDIR/victim")" = precious ] || fail "the stats file was written through a symlink made later"
  grep -q "late.json: is a symbolic link: refusing to write through it" "$TESTDIR/sr.log" ||
    fail "no error at exit for the later symlink: $(cat "$TESTDIR/sr.log")"
  # A FIFO nobody reads: the exit must not hang on it.
  tenant_start sf "$TESTDIR/plain.conf" stats="$TESTDIR/fifo.json"
  mkfifo "$TESTDIR/fifo.json"
  stop_nbdkit sf
  grep -q "fifo.json: .*\(not a regular file\|No such device\)" "$TESTDIR/sf.log" ||
    fail "no error at exit for the FIFO: $(cat "$TESTDIR/sf.log")"
  # And a plain file is written, mode 0600.
  tenant_start sp "$TESTDIR/plain.conf" stats="$TESTDIR/plain.json"
  stop_nbdkit sp
  "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TESTDIR/plain.json" ||
    fail "stats= did not write JSON"
  [ "$(stat -c %a "$TESTDIR/plain.json")" = 600 ] || fail "stats= file mode $(stat -c %a "$TESTDIR/plain.json")"
  # An existing file of our own, mode 0644: rewritten, and made 0600.
  chmod 0644 "$TESTDIR/plain.json"
  tenant_start sp2 "$TESTDIR/plain.conf" stats="$TESTDIR/plain.json"
  stop_nbdkit sp2
  "$PYTHON" -c 'import json,sys; json.load(open(sys.argv[1]))' "$TESTDIR/plain.json" ||
    fail "stats= did not rewrite our own file"
  [ "$(stat -c %a "$TESTDIR/plain.json")" = 600 ] ||
    fail "stats= left our own file mode $(stat -c %a "$TESTDIR/plain.json")"
  # Someone else's file, mode 0666 in a sticky directory (as in /tmp),
  # and a second hard link to a file: refused at start-up, left alone.
  mkdir -m 1777 "$TESTDIR/sticky"
  echo "mine" >"$TESTDIR/linked"
  ln "$TESTDIR/linked" "$TESTDIR/sticky/hl.json"
  must_refuse_stats "$TESTDIR/sticky/hl.json" "stats=.*hl.json: has 2 hard links: refusing to write into it"
  [ "$(cat "$TESTDIR/linked")" = mine ] || fail "a file was written through a hard link"
  # The same put there while the server runs: not written at exit.
  tenant_start sh "$TESTDIR/plain.conf" stats="$TESTDIR/sticky/late-link.json"
  ln "$TESTDIR/linked" "$TESTDIR/sticky/late-link.json"
  stop_nbdkit sh
  [ "$(cat "$TESTDIR/linked")" = mine ] || fail "a hard link made while the server ran was written through"
  grep -q "late-link.json: has [0-9]* hard links: .*: not written" "$TESTDIR/sh.log" ||
    fail "no error at exit for the hard link: $(cat "$TESTDIR/sh.log")"
  if [ "$(id -u)" = 0 ] && id nobody >/dev/null 2>&1; then
    echo "theirs" >"$TESTDIR/sticky/st.json"
    chmod 0666 "$TESTDIR/sticky/st.json"
    chown nobody "$TESTDIR/sticky/st.json"
    must_refuse_stats "$TESTDIR/sticky/st.json" \
      "stats=.*st.json: owned by uid $(id -u nobody), not by the server's user \(uid $(id -u)\): refusing to write into it"
    [ "$(cat "$TESTDIR/sticky/st.json")" = theirs ] || fail "another user's stats file was written"
    tenant_start so "$TESTDIR/plain.conf" stats="$TESTDIR/sticky/late-other.json"
    cp -p "$TESTDIR/sticky/st.json" "$TESTDIR/sticky/late-other.json"
    stop_nbdkit so
    [ "$(cat "$TESTDIR/sticky/late-other.json")" = theirs ] ||
      fail "another user's file made while the server ran was written at exit"
    grep -q "late-other.json: owned by uid $(id -u nobody), .*: not written" "$TESTDIR/so.log" ||
      fail "no error at exit for another user's file: $(cat "$TESTDIR/so.log")"
  else
    echo "another user's file: skipped (needs root and the user nobody)"
  fi
  echo "== 6. stats= never writes through a symlink or a hard link, into a FIFO or another user's file"
}

part7 ()
{
  local n=2000 secs lines
  grep -v "^tls" "$TESTDIR/vis.conf" >"$TESTDIR/fl.conf"
  tenant_start fl "$TESTDIR/fl.conf"
  secs=$("$PYTHON" - "${NBDKIT_SOCK[fl]}" "$n" <<'EOP'
import sys, time, nbd
t0 = time.monotonic()
for i in range(int(sys.argv[2])):
    h = nbd.NBD()
    h.set_export_name("nosuch%d" % i if i % 2 else "priv")
    try:
        h.connect_unix(sys.argv[1])
        sys.exit("connection %d was served" % i)
    except nbd.Error:
        pass
    del h
print("%.3f" % (time.monotonic() - t0))
EOP
  ) || fail "the flood client failed"
  sleep 2                       # the one-second tick says what is left
  stop_nbdkit fl
  grep -E "unknown export|: refused|refused clients" "$TESTDIR/fl.log" >"$TESTDIR/fl.lines" || true
  lines=$(wc -l <"$TESTDIR/fl.lines")
  echo "$n refused clients in $secs s: $lines log lines"
  "$PYTHON" - "$TESTDIR/fl.lines" "$n" "$secs" <<'EOP' || fail "the refusals' log lines: $(cat "$TESTDIR/fl.lines")"
import math, re, sys
lines = open(sys.argv[1]).read().splitlines()
n, secs = int(sys.argv[2]), float(sys.argv[3])
# 10 at once, 5 a second after, and the lines the tick adds (one a second
# at most, while the flood lasts and after it).
bound = 10 + 5 * math.ceil(secs) + math.ceil(secs) + 3
assert len(lines) <= bound, "%d lines for %d refusals in %.1f s (at most %d)" % (len(lines), n, secs, bound)
said = 0
for l in lines:
    m = re.search(r"(\d+) more lines about refused clients suppressed", l)
    said += int(m.group(1)) if m else 0
    if "unknown export" in l or ": refused" in l:
        said += 1
assert said == n, "%d refusals accounted for, want %d" % (said, n)
assert not any("exports:" in l or "mine" in l or "pub" in l for l in lines), "a line lists the exports"
EOP
  echo "== 7. a flood of refused clients: a bounded log, every refusal counted"
}

for p in 1 2 3 4 5 6 7; do
  if want $p; then part$p; fi
done
echo ok
