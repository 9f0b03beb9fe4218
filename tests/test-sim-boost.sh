#!/usr/bin/env bash
# test-sim-boost.sh: the start-up boost ([group] boost = on) on the
# simulator's emulated disk, per 1 s window:
#  - a new connection is raised: one connection of "batch" starting at
#    10 s beside a greedy group of the same weight gets >= 0.15 more of
#    the requests in its first 2 s than without the boost;
#  - a start-up finishes within 1.5x its time alone: "boot" (300 reads of
#    16 KiB at random, 2 deep, over 200 MiB) beside 8 sequential readers
#    in groups of the same weight takes 2.2 s, 1.6 s alone, 18 s without
#    the boost; 2.6 s with the boosted group joining the tree at its end,
#    3.9 s with a factor of 8;
#  - and so it does when the readers pause now and then (12 ms, longer
#    than slice_idle, every 9 to 23 requests, as clients over a network
#    do): their turns no longer come in one round but spread out, so boot
#    meets one every few of its turns and expires with a request out each
#    time; that request's drain is forgiven as its slices are: 2.3 s
#    (1.46x), 3.1 s (1.9x) with its drains charged in full;
#  - connections in a burst are not: 8 connections of "batch" starting
#    at once get the same share with the boost as without (within 0.02);
#    with every one of them raised they would get about 0.09 more;
#  - it cannot be farmed: a group whose client reconnects every 2 s (30
#    connections over a minute, each greedy) gets within 10% of its
#    weight's share of the requests beside a greedy group of the same
#    weight (its allowance: 2 s of charge forgiven, refilled only while
#    the group is idle); raised without that limit it would get about
#    0.96.  Over a second minute it is forgiven nothing more (refilled by
#    time, busy or not, it would be forgiven 2 s more).
# The boost's rules are core/cfq-latency.c's.
# timeout: 120
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

dev_job () {    # dev_job DURATION: the run and the device of every job here
  cat <<EOF
[sim]
duration = $1
seed = 1
[device]
emulate = hdd
queue_depth = 32
[scheduler]
scheduler = cfq
EOF
}

head_job () {   # head_job DURATION BOOST: the device and the two groups
  dev_job "$1"
  cat <<EOF
[group batch]
boost = $2
[group bg]
[export batch]
group = batch
offset = 0
size = 100G
[export bg]
group = bg
offset = 200G
size = 100G
[tenant bg]
export = bg
rw = randread
bs = 64k
iodepth = 4
EOF
}

burst_job () { # burst_job CONNECTIONS BOOST
  head_job 20s "$2"
  printf '[tenant batch]\nexport = batch\nconnections = %d\nrw = randread\n' "$1"
  printf 'bs = 64k\niodepth = %d\nstart = 10s\n' $((8 / $1))
}

farm_job () {  # farm_job BOOST [SECONDS]: a new connection every 2 s
  local t=${2:-60}
  head_job "${t}s" "$1"
  for i in $(seq 0 $((t / 2 - 1))); do
    printf '[tenant batch%d]\nexport = batch\nrw = randread\nbs = 64k\n' "$i"
    printf 'iodepth = 4\nstart = %ds\nstop = %ds\n' $((2 * i)) $((2 * i + 2))
  done
}

# boot_job BOOST READERS SECONDS [PAUSE]: "boot" starts at 5 s, with
# READERS sequential readers (1 MiB, one deep) from 0 s, each in its own
# group; with PAUSE, reader i pauses 12 ms after every 7 + 2i requests.
boot_job () {
  dev_job "${3}s"
  cat <<EOF
[group boot]
boost = $1
[export boot]
group = boot
offset = 0
size = 200M
[tenant boot]
export = boot
rw = randread
bs = 16k
iodepth = 2
start = 5s
EOF
  for i in $(seq 1 "$2"); do
    printf '[group r%d]\n[export r%d]\ngroup = r%d\n' "$i" "$i" "$i"
    printf 'offset = %dG\nsize = 50G\n' $((100 + 60 * i))
    printf '[tenant r%d]\nexport = r%d\nrw = read\nbs = 1M\niodepth = 1\n' \
      "$i" "$i"
    if [ -n "${4:-}" ]; then
      printf 'thinktime = 12ms\nthinktime_blocks = %d\n' $((7 + 2 * i))
    fi
  done
}

run () {       # run NAME [WINDOW]: cfqsim on $tmp/NAME.job
  simf "$tmp/$1.json" "$tmp/$1.job" --window "${2:-1s}"
}

for c in 1 8; do
  for b in on off; do
    burst_job $c $b > "$tmp/burst-$c-$b.job"
    run burst-$c-$b
  done
done
for b in on off; do
  farm_job $b > "$tmp/farm-$b.job"
  run farm-$b
done
farm_job on 120 > "$tmp/farm-120.job"
run farm-120
boot_job on 0 10 > "$tmp/boot-idle.job"
boot_job on 8 10 > "$tmp/boot-on.job"
boot_job off 8 30 > "$tmp/boot-off.job"
boot_job on 8 10 pause > "$tmp/boot-pause.job"
for b in idle on off pause; do
  run boot-$b 10ms
done

check <<'PY'
def share(j, a=None, b=None):
    x = group(j, "batch")["windows"]["ios"][a:b]
    y = group(j, "bg")["windows"]["ios"][a:b]
    return sum(x) / (sum(x) + sum(y))

s1, s0 = share(J("burst-1-on"), 10, 12), share(J("burst-1-off"), 10, 12)
ok(s1 >= s0 + 0.15, f"a new connection is raised: {s1:.3f} of the requests"
   f" in its first 2 s, {s0:.3f} without the boost")
b8 = J("burst-8-on")
s8, s8n = share(b8, 10, 15), share(J("burst-8-off"), 10, 15)
ok(abs(s8 - s8n) <= 0.02, f"8 connections at once are not: {s8:.3f},"
   f" {s8n:.3f} without the boost")
L = group(b8, "batch")["latency"]
ok(L["boost_burst"] == 8 and L["boosted"] == 0,
   f"all 8 counted as a burst ({L['boost_burst']:.0f}), none boosted now")

f, f0 = J("farm-on"), J("farm-off")
sf, sf0 = share(f), share(f0)
ok(abs(sf - 0.5) <= 0.05, f"reconnecting every 2 s: {sf:.3f} of the"
   f" requests over 60 s, weight share 0.5 (without the boost {sf0:.3f})")
L = group(f, "batch")["latency"]
ok(L["boosts"] >= 1 and L["boost_spent"] >= 1
   and L["boosts"] + L["boost_spent"] >= 25 and L["boost_forgiven"] <= 2.0e9,
   f"{L['boosts']:.0f} boosts ({L['boost_spent']:.0f} refused: allowance"
   f" spent) forgave {L['boost_forgiven'] / 1e9:.2f} s of charge (<= 2 s)")
L2 = group(J("farm-120"), "batch")["latency"]
ok(L2["boost_forgiven"] == L["boost_forgiven"],
   f"over a second busy minute no more: {L2['boost_forgiven'] / 1e9:.2f} s"
   " forgiven in 120 s")

def finish(j, n=300):
    # s from its start (5 s) to its n-th request, by the run's windows
    w, c = j["window_s"], 0
    for i, x in enumerate(group(j, "boot")["windows"]["ios"]):
        c += x
        if c >= n:
            return (i + 1) * w - 5
    return float("inf")

t0, t1, tn = finish(J("boot-idle")), finish(J("boot-on")), finish(J("boot-off"))
ok(t0 < 10 and t1 <= 1.5 * t0, f"a start-up beside 8 readers: {t1:.2f} s, {t1 / t0:.2f}x"
   f" its {t0:.2f} s alone (<= 1.5x; without the boost {tn:.2f} s)")
tp = finish(J("boot-pause"))
ok(tp <= 1.5 * t0, f"beside 8 readers that pause now and then: {tp:.2f} s,"
   f" {tp / t0:.2f}x its {t0:.2f} s alone (<= 1.5x)")
PY
