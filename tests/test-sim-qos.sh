#!/usr/bin/env bash
# test-sim-qos.sh: caps and reservations compose with CFQ's weights
# on the simulator, per 1 s window (cfqsim --window 1s):
#  - a cap below the share holds the tenant within 5% of it in every window
#    after the first, on the SSD; the others share the rest and the device
#    is as busy as without the cap (qos-cap-ssd.job);
#  - a cap above the share changes nothing: the weights decide
#    (qos-cap-share.job);
#  - a reservation gives >= 98% of it in >= 98% of the windows while the
#    others saturate the device, on the SSD and on the disk, plus the
#    reserved tenant's weighted share of the rest (qos-res-*.job);
#  - on the disk a 20 MiB/s cap holds a sequential reader to it on average
#    (within 1%), and most windows within 5% (qos-cap-hdd.job: batches
#    between other tenants' turns; the jitter is reported, not hidden);
#  - caps that never bind change nothing at all: weights-ssd.job and
#    weights-hdd.job give the same numbers with iops_max = 10M and
#    bps_max = 1T on every group;
#  - fifo refuses caps.
# Negative controls: each window check is also run on the same job without
# the cap or the reservation, and must fail there.
# timeout: 300
. "$(dirname "$0")/sim/functions.sh"
requires_cfq

# Without the settings: the same jobs, for the negative controls.
for j in qos-cap-ssd qos-res-ssd qos-res-hdd qos-cap-hdd; do
  sed '/^iops_max\|^bps_max\|^iops_min\|^bps_min/d' "$JOBS/$j.job" > "$tmp/$j-none.job"
done
# Caps that never bind, on the weights scenarios.
for j in weights-ssd weights-hdd; do
  sed 's/^\(\[group .*\]\)$/\1\niops_max = 10000000\nbps_max = 1T/' \
      "$JOBS/$j.job" > "$tmp/$j-inert.job"
  grep -c '^iops_max = 10000000' "$tmp/$j-inert.job" >/dev/null
done

sim "$tmp/cap.json" qos-cap-ssd.job --window 1s
simf "$tmp/cap-none.json" "$tmp/qos-cap-ssd-none.job" --window 1s
sim "$tmp/share.json" qos-cap-share.job --window 1s
sim "$tmp/res.json" qos-res-ssd.job --window 1s
simf "$tmp/res-none.json" "$tmp/qos-res-ssd-none.job" --window 1s
sim "$tmp/resh.json" qos-res-hdd.job --window 1s
simf "$tmp/resh-none.json" "$tmp/qos-res-hdd-none.job" --window 1s
sim "$tmp/caph.json" qos-cap-hdd.job --window 1s
simf "$tmp/caph-none.json" "$tmp/qos-cap-hdd-none.job" --window 1s
for j in weights-ssd weights-hdd; do
  sim "$tmp/$j.json" $j.job
  simf "$tmp/$j-inert.json" "$tmp/$j-inert.job"
done
sim "$tmp/cap2.json" qos-cap-ssd.job --window 1s
cmp "$tmp/cap.json" "$tmp/cap2.json" || { echo "FAIL: two identical runs differ"; exit 1; }
echo "ok:   two identical runs with caps give byte-identical output"

sed '/^slice_idle\|^group_idle\|^rotational/d; s/^scheduler = cfq/scheduler = fifo/' \
    "$JOBS/qos-cap-ssd.job" > "$tmp/fifo.job"
if "$SIM" "$tmp/fifo.job" > /dev/null 2> "$tmp/fifo.err"; then
  echo "FAIL: fifo accepted a cap"; exit 1
fi
grep -q "fifo.job:[0-9]*: iops_max: caps and reservations need scheduler = cfq" "$tmp/fifo.err" || {
  cat "$tmp/fifo.err"; echo "FAIL: fifo's refusal does not say why"; exit 1; }
echo "ok:   fifo refuses caps: $(cat "$tmp/fifo.err")"

check <<'PY'
def win(j, g, unit="ios"):
    w = group(j, g)["windows"][unit]
    return [x / 1048576 if unit == "bytes" else x for x in w]

def within(ws, target, tol):
    return [abs(x - target) <= tol * target for x in ws]

# A cap below the share, on the SSD.
j, n = J("cap"), J("cap-none")
w = win(j, "capped")
print("capped IOPS per window:", w)
ok(all(within(w[1:], 100, 0.05)), "ssd: capped within 5% of 100 IOPS in every"
   f" window after the first (min {min(w[1:])}, max {max(w[1:])})")
ok(not all(within(win(n, "capped")[1:], 100, 0.05)),
   "negative control: without the cap the same check fails"
   f" ({group(n, 'capped')['iops']:.0f} IOPS)")
ok(j["total"]["iops"] >= 0.98 * n["total"]["iops"],
   f"ssd: device as busy with the cap ({j['total']['iops']:.0f} IOPS)"
   f" as without ({n['total']['iops']:.0f})")
a, b = group(j, "a")["iops"], group(j, "b")["iops"]
ok(abs(a - b) <= 0.05 * max(a, b), f"ssd: a and b share the rest equally ({a:.0f}, {b:.0f})")

# A cap above the share: the weights decide.
j = J("share")
for g in j["groups"]:
    ok(abs(g["iops_share"] - 1 / 3) <= 0.05 / 3,
       f"cap above share: {g['name']} gets {g['iops_share']:.4f} of the IOPS (1/3)")
ok(j["jain_iops"] >= 0.99, f"cap above share: Jain {j['jain_iops']:.4f} >= 0.99")

# Reservations: >= 98% of it in >= 98% of the windows.
for name, r, dev in (("res", 200, "ssd"), ("resh", 40, "hdd")):
    j, n = J(name), J(name + "-none")
    w = win(j, "gold")
    good = sum(x >= 0.98 * r for x in w) / len(w)
    print(f"{dev}: gold IOPS per window:", w)
    ok(good >= 0.98, f"{dev}: gold gets >= 98% of iops_min = {r} in {good:.1%}"
       f" of {len(w)} windows (min {min(w)})")
    wn = win(n, "gold")
    ok(sum(x >= 0.98 * r for x in wn) / len(wn) < 0.98,
       f"negative control ({dev}): without the reservation gold gets"
       f" {group(n, 'gold')['iops']:.0f} IOPS and the check fails")
    others = [g["iops"] for g in j["groups"] if g["name"] != "gold"]
    print(f"{dev}: others", others)
# On the SSD the rest is shared by weight: gold 1/11 of it on top.
j = J("res")
g = group(j, "gold")["iops"]
want = 200 + (j["total"]["iops"] - 200) * 100 / 1100
ok(abs(g - want) <= 0.03 * want, f"ssd: gold {g:.1f} IOPS = 200 + 1/11 of the rest"
   f" ({want:.1f}) within 3%")
a, b = group(j, "a")["iops"], group(j, "b")["iops"]
ok(abs(a - b) <= 0.05 * max(a, b), f"ssd: a and b share the rest equally ({a:.0f}, {b:.0f})")

# A bandwidth cap on the disk.
j, n = J("caph"), J("caph-none")
w = win(j, "capped", "bytes")[1:]
mean = sum(w) / len(w)
in5 = sum(within(w, 20, 0.05)) / len(w)
print("hdd: capped MiB/s per window:", [round(x, 1) for x in w])
ok(abs(mean - 20) <= 0.01 * 20, f"hdd: capped averages {mean:.2f} MiB/s, within 1% of 20")
ok(in5 >= 0.90, f"hdd: {in5:.0%} of the windows after the first within 5% of"
   f" 20 MiB/s (worst {min(w):.1f}, {max(w):.1f})")
ok(group(n, "capped")["mib_s"] > 40, "negative control (hdd): without the cap it"
   f" reads {group(n, 'capped')['mib_s']:.0f} MiB/s")

# Caps that never bind change nothing.
fields = ("bytes", "ios", "flushes", "lat_us")
for name in ("weights-ssd", "weights-hdd"):
    a, b = J(name), J(name + "-inert")
    same = all(x[f] == y[f] for x, y in zip(a["tenants"], b["tenants"]) for f in fields)
    ok(same and a["total"] == b["total"],
       f"{name}: caps that never bind give the same numbers"
       f" ({a['total']['iops']:.1f} vs {b['total']['iops']:.1f} IOPS)")
PY
