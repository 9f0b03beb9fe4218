#!/usr/bin/python3
"""bench/seeds.py: `make bench-seeds`, the seeds' experiments replayed over NBD.

Each experiment is a scenario in bench/scenarios/ run by tools/cfqlab on
each device (the emulated disk, the emulated SSD, the real disk), through
our server with fifo, with cfq at its defaults, and with the knob the seed
compares (slice_idle 0/8, low_latency 0/1, group_idle, merge), plus cfqsim
with fifo and cfq on the same model.  One table then gives, per experiment,
device and metric: the seed's figures before and after the change it
discusses, ours with fifo, cfq and the knob, the simulator's, whether our
change goes the seed's way, and the fidelity target with met / NOT MET.

    make bench-seeds                        default: 1 round (~30 min)
    BENCH_SEEDS_ROUNDS=3 make bench-seeds   medians of 3, as the targets are stated
    BENCH_SEEDS_QUICK=1 make bench-seeds    smoke: the SSD model, 2 s runs
    BENCH_SEEDS_ONLY=moyer1,fsync-dd ...    some experiments only
    BENCH_SEEDS_REPORT=DIR ...              rebuild DIR's table, run nothing

Environment: BENCH_SEEDS_ROUNDS (1), BENCH_SEEDS_DURATION (6s; the
emulated disks get BENCH_SEEDS_DURATION_HDD, 10s), BENCH_SEEDS_DEVICES
("hdd ssd disk preset": "preset" is each seed's own device, sata7200 or
vertex; other model names run every experiment), BENCH_SEEDS_ONLY,
BENCH_SEEDS_PRESETS (1: append bench/presets.sh's table),
BENCH_SEEDS_OUT (bench/results/seeds/DATE), BENCH_DIR (/var/tmp: the
real-disk image), BENCH_LOCK (a lock file each timing run
holds).  Results: table.txt, summary.json, and per run its cfqlab
directory (report.txt, report.json, latency.png, shares.png).

What "the seed's direction" means: each seed compares two kernels or two
settings; we compare the two configurations of ours that differ the same
way (fifo and cfq for a scheduling change, cfq with and without the knob
for a tunable) and say "yes" when ours moves the same way by more than
5%, "flat" within 5%, "no" otherwise.  The seeds' machines (2009-2010
SATA disks and an OCZ Vertex SSD) are not ours: only directions compare.
"""

import json
import os
import subprocess
import sys
import time

HOME = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(HOME)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
from cfqlab_lib.common import LabError, Lock, fill_image  # noqa: E402
from cfqlab_lib.util import fmt  # noqa: E402

LAB = os.path.join(ROOT, "tools", "cfqlab")
SCN = os.path.join(HOME, "scenarios")
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else sys.executable


def env(name, default):
    v = os.environ.get(name)
    return default if v is None or v == "" else v


# ---- metrics: numbers out of a cfqlab report ---------------------------------

def sysd(rep, name):
    for s in rep["systems"]:
        if s["name"] == name and s["status"] == "ok":
            return s
    return None


def tval(rep, system, tenant, key):
    s = sysd(rep, system)
    if not s or tenant not in s["tenants"]:
        return None
    x = s["tenants"][tenant]
    if key.startswith("lat_"):
        return x["lat_ms"].get(key[4:])
    if key == "metric":
        return (x.get("metric") or {}).get("value")
    return x.get(key)


def total(rep, system, key):
    s = sysd(rep, system)
    return s.get(key) if s else None


def maxlat(rep, system, tenants=None):
    s = sysd(rep, system)
    if not s:
        return None
    v = [x["lat_ms"]["max"] for n, x in s["tenants"].items()
         if (tenants is None or n in tenants) and x["lat_ms"].get("max") is not None]
    return max(v) if v else None


def worst_share_err(rep, system):
    s = sysd(rep, system)
    if not s:
        return None
    v = [abs(x["norm"] - 1) for x in s["tenants"].values() if x.get("norm") is not None]
    return max(v) if v else None


def ratio(a, b):
    return a / b if a is not None and b not in (None, 0) else None


# ---- the experiments -----------------------------------------------------------
#
# Each: scenario, --only, devices, systems (ours), solo tenants, and rows.
# A row: (label, unit, getter(rep, system) -> number, seed, target)
#   seed:   None, or (before, after, what): the seed's figures and which
#           two of our systems play "before" and "after"
#   target: None, or (text, fn(rep, get) -> (measured text, met)) where
#           get(system) is the row's getter on that system

FIFO, CFQ = "fifo", "cfq"
SI0, LL0, GI0, M0 = "cfq:slice_idle=0", "cfq:low_latency=0", "cfq:group_idle=0", "cfq:merge=0"


def tg(tenant, key):
    return lambda rep, s: tval(rep, s, tenant, key)


def one_tenant_target(get):
    """One tenant never loses: cfq >= 0.95x fifo."""
    def f(rep):
        r = ratio(get(rep, CFQ), get(rep, FIFO))
        return ("cfq/fifo %s" % fmt(r, 2), r is not None and r >= 0.95)
    return ("cfq >= 0.95x fifo", f)


EXPERIMENTS = []


# The device presets of the seeds' machines (bench/presets.sh has them
# against their datasheets): seed 000's and 001's 7200 rpm SATA disk, seed
# 002's OCZ Vertex.  Each seed experiment also runs on its seed's preset.
SEED_PRESET = {"000": "sata7200", "001": "sata7200", "002": "vertex"}


def exp(**kw):
    kw.setdefault("only", None)
    kw.setdefault("solo", {})
    kw.setdefault("devices", ("hdd", "ssd", "disk"))
    if kw["seed"] in SEED_PRESET:
        kw["devices"] = tuple(kw["devices"]) + ("preset",)
    EXPERIMENTS.append(kw)


# Seed 002: Moyer's three tests.
exp(id="moyer1", seed="002", title="2 random readers + 1 sequential reader",
    scenario="seed002-moyer1.conf", systems=[FIFO, CFQ, SI0],
    rows=[
        ("sequential reader", "MiB/s", tg("sq", "mibs"),
         (409 / 1024, 101, "fifo -> cfq"),
         ("cfq >= 2x fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "sq", "mibs"), tval(rep, FIFO, "sq", "mibs")), 2),
             (ratio(tval(rep, CFQ, "sq", "mibs"), tval(rep, FIFO, "sq", "mibs")) or 0) >= 2))),
        ("random readers", "IOPS", tg("rr", "iops"),
         (2 * 15418 / 4, 2 * 10065 / 4, "fifo -> cfq"),
         ("cfq >= 0.5x fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "rr", "iops"), tval(rep, FIFO, "rr", "iops")), 2),
             (ratio(tval(rep, CFQ, "rr", "iops"), tval(rep, FIFO, "rr", "iops")) or 0) >= 0.5))),
        ("max read latency", "ms", lambda rep, s: maxlat(rep, s), (11.589, 303, "fifo -> cfq"), None),
    ])

exp(id="moyer2", seed="002", title="4 random readers + 1 sequential writer",
    scenario="seed002-moyer2.conf", systems=[FIFO, CFQ, SI0], solo={"hdd": ["sw"]},
    rows=[
        ("readers", "IOPS", tg("rr", "iops"), (35242 / 4, 56400 / 4, "fifo -> cfq"),
         ("cfq >= fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "rr", "iops"), tval(rep, FIFO, "rr", "iops")), 2),
             (ratio(tval(rep, CFQ, "rr", "iops"), tval(rep, FIFO, "rr", "iops")) or 0) >= 1))),
        ("readers' max latency", "ms", tg("rr", "lat_max"), (535, 324, "fifo -> cfq"),
         ("cfq <= fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "rr", "lat_max"), tval(rep, FIFO, "rr", "lat_max")), 2),
             (ratio(tval(rep, CFQ, "rr", "lat_max"), tval(rep, FIFO, "rr", "lat_max")) or 9) <= 1))),
        ("writer", "MiB/s", tg("sw", "mibs"), (33269 / 1024, 55127 / 1024, "fifo -> cfq"),
         ("ssd: cfq >= 0.5x fifo; hdd: >= 0.25x solo", lambda rep: writer_target(rep))),
        ("writer's max latency", "ms", tg("sw", "lat_max"), (22243, 1153, "fifo -> cfq"), None),
    ])


def writer_target(rep):
    dev = rep["scenario"]["emulate"]
    w = tval(rep, CFQ, "sw", "mibs")
    if dev == "hdd":
        solo = (rep.get("solo") or {}).get("sw")
        r = ratio(w, solo["mibs"] if solo else None)
        return ("cfq/solo %s" % fmt(r, 2), r is not None and r >= 0.25)
    r = ratio(w, tval(rep, FIFO, "sw", "mibs"))
    return ("cfq/fifo %s" % fmt(r, 2), r is not None and r >= 0.5)


exp(id="moyer3", seed="002", title="32 random readers (latency_test_2)",
    scenario="seed002-moyer3.conf", systems=[FIFO, CFQ, SI0, LL0],
    rows=[
        ("max read latency", "ms", tg("rr", "lat_max"), (3305, 268, "fifo -> cfq"),
         ("cfq <= 1.1x fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "rr", "lat_max"), tval(rep, FIFO, "rr", "lat_max")), 2),
             (ratio(tval(rep, CFQ, "rr", "lat_max"), tval(rep, FIFO, "rr", "lat_max")) or 9) <= 1.1))),
        ("aggregate", "MiB/s", tg("rr", "mibs"), (32894 / 1024, 164571 / 1024, "fifo -> cfq"), None),
    ])

# Seed 000: fs_mark, fsync beside a writer.
exp(id="fsmark", seed="000", title="fs_mark 64 KiB + fsync, one tenant",
    scenario="seed000-fsmark.conf", systems=[FIFO, CFQ, SI0],
    rows=[
        ("fs_mark", "files/s", tg("fsmark", "metric"), (231, 408, "slice_idle=0 -> 8"),
         one_tenant_target(tg("fsmark", "metric"))),
    ])

exp(id="fsmark-groups", seed="000", title="fs_mark, three tenants in three groups",
    scenario="seed000-fsmark-groups.conf", systems=[FIFO, CFQ, GI0],
    rows=[
        ("total", "files/s", lambda rep, s: sum_metric(rep, s), None,
         ("shares within 10%, total >= 0.9x fifo", lambda rep: weighted_target(
             rep, lambda r, s: sum_metric(r, s)))),
    ])


def sum_metric(rep, s):
    v = [tval(rep, s, t, "metric") for t in ("fsmark-a", "fsmark-b", "fsmark-c")]
    return sum(v) if None not in v else None


exp(id="fsync-dd", seed="000", title="fsync-tester beside a dd writer",
    scenario="seed000-fsync-dd.conf", systems=[FIFO, CFQ],
    rows=[
        ("fsync p90", "ms", tg("fsync", "lat_p90"), (2753, 1147, "fifo -> cfq"),
         ("cfq <= 0.5x fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "fsync", "lat_p90"), tval(rep, FIFO, "fsync", "lat_p90")), 2),
             (ratio(tval(rep, CFQ, "fsync", "lat_p90"), tval(rep, FIFO, "fsync", "lat_p90")) or 9) <= 0.5))),
        ("fsync median", "ms", tg("fsync", "lat_p50"), (1471, 181, "fifo -> cfq"), None),
        ("writer", "MiB/s", tg("writer", "mibs"), None,
         ("cfq >= 0.8x fifo", lambda rep: (
             "cfq/fifo %s" % fmt(ratio(tval(rep, CFQ, "writer", "mibs"), tval(rep, FIFO, "writer", "mibs")), 2),
             (ratio(tval(rep, CFQ, "writer", "mibs"), tval(rep, FIFO, "writer", "mibs")) or 0) >= 0.8))),
    ])

# Seed 001: fio's mmap random reads, cooperating readers.
exp(id="mmap", seed="001", title="fio mmap random 64 KiB reads",
    scenario="seed001-mmap.conf", systems=[FIFO, CFQ, LL0],
    rows=[
        ("mmap readers", "MiB/s", tg("mmap", "mibs"), (100, 104, "low_latency=0 -> 1, relative"),
         one_tenant_target(tg("mmap", "mibs"))),
    ])

exp(id="coop", seed="001", title="4 cooperating readers, interleaved 64 KiB stripes",
    scenario="seed001-coop.conf", systems=[FIFO, CFQ, M0],
    rows=[
        ("aggregate", "MiB/s", lambda rep, s: total(rep, s, "total_mibs"), (100, 133, "merge=0 -> 1, relative"),
         one_tenant_target(lambda rep, s: total(rep, s, "total_mibs"))),
    ])

# Fidelity: one tenant never loses.
SWEEP = [("randread-qd1", "IOPS"), ("randread-qd32", "IOPS"), ("randrw70-qd8", "IOPS"),
         ("randrw70-flush8", "IOPS"), ("write-flush-x4", "IOPS"), ("seqread-256k", "MiB/s"),
         ("seqwrite-1m", "MiB/s"), ("randwrite-qd32", "IOPS"), ("randrw50-64k", "MiB/s")]
for name, unit in SWEEP:
    key = "iops" if unit == "IOPS" else "mibs"
    exp(id="sweep-" + name, seed="8", title="one tenant: " + name,
        scenario="single-tenant-sweep.conf", only=name, systems=[FIFO, CFQ],
        rows=[(name, unit, tg(name, key), None, one_tenant_target(tg(name, key)))])

# Fidelity: many connections in one group.
for n in (8, 32, 128, 256):
    t = "conns%d" % n

    def many_target(rep, t=t):
        j = tval(rep, CFQ, t, "jain_connections")
        w = ratio(tval(rep, CFQ, t, "lat_max"), tval(rep, FIFO, t, "lat_max"))
        a = ratio(tval(rep, CFQ, t, "iops"), tval(rep, FIFO, t, "iops"))
        ok = j is not None and j >= 0.98 and w is not None and w <= 2 and a is not None and a >= 0.95
        return ("Jain %s, worst %sx, aggregate %sx" % (fmt(j, 3), fmt(w, 2), fmt(a, 2)), ok)
    exp(id="many-%d" % n, seed="8", title="%d connections in one group" % n,
        scenario="many-connections.conf", only=t, systems=[FIFO, CFQ], devices=("ssd", "disk"),
        rows=[("aggregate", "IOPS", tg(t, "iops"), None,
               ("Jain >= 0.98, worst <= 2x fifo, agg >= 0.95x", many_target)),
              ("per-connection Jain", "", tg(t, "jain_connections"), None, None),
              ("worst latency", "ms", tg(t, "lat_max"), None, None)])


def weighted_target(rep, get=None):
    e = worst_share_err(rep, CFQ)
    a = ratio(get(rep, CFQ), get(rep, FIFO)) if get else \
        ratio(total(rep, CFQ, "total_iops"), total(rep, FIFO, "total_iops"))
    ok = e is not None and e <= 0.10 and a is not None and a >= 0.9
    return ("worst share off %s%%, total %sx" % (fmt(None if e is None else 100 * e), fmt(a, 2)), ok)


for f, n in (("weighted-2.conf", 2), ("weighted-4-flush.conf", 4), ("weighted-16.conf", 16)):
    exp(id="weighted-%d" % n, seed="8", title="%d weighted groups, 4k 70/30%s" % (
        n, ", flushes" if "flush" in f else ""),
        scenario=f, systems=[FIFO, CFQ],
        rows=[("total", "IOPS", lambda rep, s: total(rep, s, "total_iops"), None,
               ("shares within 10%, total >= 0.9x fifo", weighted_target)),
              ("Jain (weighted)", "", lambda rep, s: total(rep, s, "jain"), None, None)])


# ---- running --------------------------------------------------------------------

def device_args(dev):
    return ["--device", "none" if dev == "disk" else dev]


def run_lab(e, dev, out, image, rounds, duration, lock):
    if dev == "preset":
        dev = SEED_PRESET[e["seed"]]
    systems = e["systems"] + (["sim-fifo", "sim"] if dev != "disk" else [])
    cmd = [PY, LAB, "--quiet", "--systems", " ".join(systems), "--rounds", str(rounds),
           "--duration", duration, "--out", out] + device_args(dev)
    if e["only"]:
        cmd += ["--only", e["only"]]
    if e["solo"].get(dev):
        cmd += ["--solo", ",".join(e["solo"][dev])]
    if dev == "disk" and image:
        cmd += ["--image", image]
    if lock:
        cmd += ["--lock", lock]
    cmd.append(os.path.join(SCN, e["scenario"]))
    with open(os.path.join(os.path.dirname(out), os.path.basename(out) + ".log"), "w") as log:
        p = subprocess.run(cmd, stdout=log, stderr=subprocess.STDOUT)
    rep = None
    try:
        with open(os.path.join(out, "report.json")) as f:
            rep = json.load(f)
    except (OSError, ValueError):
        pass
    return p.returncode, rep


def direction(before, after, ours_b, ours_a):
    if None in (before, after, ours_b, ours_a) or ours_b == 0:
        return "-"
    want = 1 if after > before else -1
    d = (ours_a - ours_b) / abs(ours_b)
    if abs(d) < 0.05:
        return "flat"
    return "yes" if (d > 0) == (want > 0) else "no"


def seed_pair(what):
    """The two of our systems that play the seed's before and after."""
    return {"fifo -> cfq": (FIFO, CFQ), "slice_idle=0 -> 8": (SI0, CFQ),
            "low_latency=0 -> 1": (LL0, CFQ), "merge=0 -> 1": (M0, CFQ),
            "group_idle=0 -> 8": (GI0, CFQ)}[what.split(",")[0]]


def main():
    quick = env("BENCH_SEEDS_QUICK", "0") == "1"
    rounds = int(env("BENCH_SEEDS_ROUNDS", "1"))
    dur = env("BENCH_SEEDS_DURATION", "2s" if quick else "6s")
    dur_hdd = env("BENCH_SEEDS_DURATION_HDD", "3s" if quick else "10s")
    devices = env("BENCH_SEEDS_DEVICES", "ssd" if quick else "hdd ssd disk preset").split()
    only = env("BENCH_SEEDS_ONLY", "moyer1,fsync-dd,sweep-randrw70-qd8,many-8,weighted-2"
               if quick else "")
    only = set(x for x in only.split(",") if x)
    lock = env("BENCH_LOCK", "")
    bdir = env("BENCH_DIR", "/var/tmp")
    stamp = time.strftime("%Y%m%d-%H%M%S")
    out = env("BENCH_SEEDS_REPORT", "") or env(
        "BENCH_SEEDS_OUT", os.path.join(ROOT, "bench", "results", "seeds", stamp))
    os.makedirs(out, exist_ok=True)
    exps = [e for e in EXPERIMENTS if not only or e["id"] in only]
    bad = only - {e["id"] for e in EXPERIMENTS}
    if bad:
        sys.exit("bench-seeds: unknown experiment(s) %s (known: %s)" % (
            ", ".join(sorted(bad)), ", ".join(e["id"] for e in EXPERIMENTS)))
    jobs = [(e, d) for d in devices for e in exps if d in e["devices"]
            or (d not in ("hdd", "ssd", "disk", "preset") and "ssd" in e["devices"])]
    nruns = sum(len(e["systems"]) for e, d in jobs) * rounds
    print("bench-seeds: %d experiment runs (%d server runs of %s, hdd %s, %d round(s)) into %s"
          % (len(jobs), nruns, dur, dur_hdd, rounds, out), flush=True)
    image = None
    if "disk" in devices and not env("BENCH_SEEDS_REPORT", ""):
        image = os.path.join(bdir, "cfq-seeds-%d.img" % os.getpid())
        print("bench-seeds: filling a 4 GiB image on %s for the real-disk runs" % bdir, flush=True)
        try:
            fill_image(image, 4 << 30, Lock(lock or None))
        except LabError as e:
            sys.exit("bench-seeds: filling %s failed: %s" % (image, e))
    results = []
    t0 = time.time()
    report_only = env("BENCH_SEEDS_REPORT", "")
    if report_only:
        # Rebuild the table from an earlier run's directories.
        image = None
        for e, dev in jobs:
            name = "%s-%s" % (e["id"], SEED_PRESET[e["seed"]] if dev == "preset" else dev)
            try:
                with open(os.path.join(out, name, "report.json")) as f:
                    results.append((e, dev, 0, json.load(f)))
            except (OSError, ValueError):
                pass
        jobs = []
    try:
        for i, (e, dev) in enumerate(jobs):
            d = dur_hdd if dev in ("hdd", "preset") else dur
            name = "%s-%s" % (e["id"], SEED_PRESET[e["seed"]] if dev == "preset" else dev)
            print("bench-seeds: [%d/%d] %s on %s (%.0f min so far)" % (
                i + 1, len(jobs), e["id"], dev, (time.time() - t0) / 60), flush=True)
            rc, rep = run_lab(e, dev, os.path.join(out, name), image, rounds, d, lock)
            results.append((e, dev, rc, rep))
    finally:
        if image:
            try:
                os.unlink(image)
            except OSError:
                pass
    text, summary = table(results, rounds, dur, dur_hdd)
    presets = os.path.join(HOME, "presets.sh")
    if os.path.exists(presets) and env("BENCH_SEEDS_PRESETS", "1") == "1":
        penv = dict(os.environ, PRESETS_ROUNDS=str(rounds), PRESETS_OUT=out)
        if lock:
            penv["BENCH_LOCK"] = lock
        if quick:
            penv["PRESETS_SERVER"] = "0"
        print("bench-seeds: device presets against their datasheets (bench/presets.sh)",
              flush=True)
        p = subprocess.run(["bash", presets], capture_output=True, text=True, env=penv)
        text += "\n## Device presets against their datasheets (bench/presets.sh)\n\n"
        text += p.stdout if p.returncode == 0 else "presets.sh failed: %s\n" % p.stderr[-500:]
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    latest = os.path.join(os.path.dirname(out), "latest")
    try:
        if os.path.islink(latest):
            os.unlink(latest)
        os.symlink(os.path.basename(out), latest)
    except OSError:
        pass
    print(text)
    print("bench-seeds: %s (table.txt, summary.json, one cfqlab directory per run)" % out)


def table(results, rounds, dur, dur_hdd):
    L = ["# bench-seeds: %s, %d round(s) (medians), runs of %s (emulated disk %s)"
         % (time.strftime("%Y-%m-%d %H:%M"), rounds, dur, dur_hdd),
         "# load average %s, git %s" % (" ".join(open("/proc/loadavg").read().split()[:3]),
                                        subprocess.run(["git", "-C", ROOT, "rev-parse", "--short",
                                                        "HEAD"], capture_output=True,
                                                       text=True).stdout.strip()),
         "",
         "| experiment | dev | metric | seed before -> after (what) | fifo | cfq | knob | "
         "sim fifo | sim cfq | seed's direction | target | measured | met |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    summary = []
    for e, dev, rc, rep in results:
        if rep is None:
            L.append("| %s | %s | - | lab failed (exit %d), see %s-%s.log | | | | | | | | | |"
                     % (e["id"], dev, rc, e["id"], dev))
            summary.append({"id": e["id"], "device": dev, "error": rc})
            continue
        knob = [s for s in e["systems"] if s not in (FIFO, CFQ)]
        for label, unit, get, seed, target in e["rows"]:
            vals = {s: get(rep, s) for s in e["systems"] + ["sim-fifo", "sim"]}
            kn = "; ".join("%s %s" % (k.split(":", 1)[1], fmt(vals[k], 3 if not unit else 1))
                           for k in knob)
            if seed:
                b, a, what = seed
                pb, pa = seed_pair(what)
                sd = "%s -> %s (%s)" % (fmt(b), fmt(a), what)
                dirn = direction(b, a, vals.get(pb), vals.get(pa))
            else:
                sd, dirn = "-", "-"
            if target:
                ttext, fn = target
                try:
                    meas, ok = fn(rep)
                except (TypeError, KeyError, ZeroDivisionError):
                    meas, ok = "-", False
                met = "met" if ok else "NOT MET"
            else:
                ttext, meas, met = "-", "-", "-"
            why = [s["name"] + ": " + s.get("why", "") for s in rep["systems"]
                   if s["status"] == "failed" and s["name"] in (FIFO, CFQ)]
            if why:
                meas = "; ".join(why)[:120]
            nd = 3 if not unit else 1
            L.append("| %s | %s | %s%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                e["id"], SEED_PRESET[e["seed"]] if dev == "preset" else dev, label,
                (" (%s)" % unit) if unit else "", sd,
                fmt(vals[FIFO], nd), fmt(vals[CFQ], nd), kn or "-",
                fmt(vals["sim-fifo"], nd), fmt(vals["sim"], nd), dirn, ttext, meas, met))
            summary.append({"id": e["id"], "device": dev, "metric": label, "unit": unit,
                            "seed": seed and {"before": seed[0], "after": seed[1], "what": seed[2]},
                            "values": vals, "direction": dirn, "target": ttext,
                            "measured": meas, "met": met})
    n_t = sum(1 for x in summary if x.get("met") in ("met", "NOT MET"))
    n_m = sum(1 for x in summary if x.get("met") == "met")
    n_d = sum(1 for x in summary if x.get("direction") in ("yes", "no", "flat"))
    n_y = sum(1 for x in summary if x.get("direction") == "yes")
    L += ["", "targets met: %d of %d; seed's direction reproduced: %d of %d" % (n_m, n_t, n_y, n_d)]
    return "\n".join(L) + "\n", summary


if __name__ == "__main__":
    main()
