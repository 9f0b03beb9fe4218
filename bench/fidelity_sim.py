#!/usr/bin/python3
"""bench/fidelity_sim.py: the fidelity rows in cfqsim (CFQ never slower than
FIFO for one tenant, and better where the seeds say).

Prints one markdown row per metric: FIFO, CFQ before, CFQ after and
after / FIFO, from tools/cfqsim on the scenarios of tests/sim/ and
bench/scenarios/.  cfqsim is deterministic (virtual clock, fixed seed), so
one run each.

    bench/fidelity_sim.py [--before CFQSIM]

--before is another build of tools/cfqsim (an earlier commit's tools/ and
core/, say) to compare against.  The before column also sets `writes =
async` on every export that does not choose, for a build whose plain
writes are always async.
Without --before, the before column is left out.
"""
import argparse, json, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIM = os.path.join(ROOT, "tools", "cfqsim")
TMP = tempfile.mkdtemp(prefix="fidelity-sim-")


def old_writes(path):
    """A copy of PATH with writes = async in every export without writes."""
    out, sec, has = [], None, False
    lines = open(path).read().splitlines()
    for ln in lines + ["[end]"]:
        s = ln.strip()
        if s.startswith("["):
            if sec is not None and not has:
                out.append("writes = async")
            sec = s if s.startswith("[export") else None
            has = False
        elif sec is not None and s.replace(" ", "").startswith("writes="):
            has = True
        if ln != "[end]":
            out.append(ln)
    p = os.path.join(TMP, os.path.basename(path))
    open(p, "w").write("\n".join(out) + "\n")
    return p


def run(sim, path, args):
    r = subprocess.run([sim, "--json"] + args + [path], capture_output=True, text=True)
    if r.returncode:
        sys.exit("%s %s %s: %s" % (sim, " ".join(args), path, r.stderr.strip()))
    return json.loads(r.stdout)


def t(j, n):
    return next(x for x in j["tenants"] if x["name"] == n)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default=None)
    a = ap.parse_args()
    hdr = "| scenario (file) | metric | fifo | cfq before | cfq after | after/fifo |"
    if not a.before:
        hdr = "| scenario (file) | metric | fifo | cfq after | after/fifo |"
    print(hdr)
    print("|---" * (hdr.count("|") - 1) + "|")

    def row(name, f, metric, get, args=(), fmt="{:.1f}"):
        path = os.path.join(ROOT, f)
        fi = get(run(SIM, path, ["--sched", "fifo"] + list(args)))
        af = get(run(SIM, path, ["--sched", "cfq"] + list(args)))
        cells = [fmt.format(fi)]
        if a.before:
            cells.append(fmt.format(get(run(a.before, old_writes(path), ["--sched", "cfq"] + list(args)))))
        cells.append(fmt.format(af))
        r = af / fi if fi else float("nan")
        print("| %s (%s) | %s | %s | %.2f |" % (name, os.path.basename(f), metric, " | ".join(cells), r),
              flush=True)

    lat_max = lambda n: (lambda j: t(j, n)["lat_us"]["max"] / 1000)
    iops = lambda n: (lambda j: t(j, n)["iops"])
    mibs = lambda n: (lambda j: t(j, n)["mib_s"])
    tot = lambda j: sum(x["iops"] for x in j["tenants"])

    row("32 random readers, disk", "tests/sim/hdd-32-readers.job", "max latency ms", lat_max("rr"))
    for dev in ("hdd", "ssd"):
        f = "bench/scenarios/seed002-moyer1.conf"
        row("2 random + 1 seq reader, %s" % dev, f, "seq MiB/s", mibs("sq"), ["--device", dev])
        row("2 random + 1 seq reader, %s" % dev, f, "random IOPS", iops("rr"), ["--device", dev])
    for dev in ("hdd", "ssd"):
        args = ["--device", dev, "--only", "rr,sw"]
        f = "tests/sim/readers-writer.job"
        row("4 random readers + seq writer, %s" % dev, f, "readers IOPS", iops("rr"), args, "{:.0f}")
        row("4 random readers + seq writer, %s" % dev, f, "readers max ms", lat_max("rr"), args)
        row("4 random readers + seq writer, %s" % dev, f, "writer MiB/s", mibs("sw"), args)
    f = "tests/sim/fsync-writer.job"
    row("fsync tenant beside writer, disk", f, "fsync p90 ms", lambda j: t(j, "f")["fsync_us"]["p90"] / 1000)
    row("fsync tenant beside writer, disk", f, "writer MiB/s", mibs("w"))
    for dev in ("hdd", "ssd"):
        for n, what in (("mix", "4k 70/30 qd8"), ("mixf", "8k 70/30 qd4 flush/8"),
                        ("wf", "4x write+flush"), ("seqw", "seq write 1M qd4"), ("rr", "randread qd8")):
            row("one tenant %s, %s" % (what, dev), "tests/sim/one-tenant.job", "IOPS", tot,
                ["--device", dev, "--only", n])
    for rot, lab in (([], "SSD"), (["--set", "rotational=1"], "SSD saying rotational=1")):
        f = "tests/sim/many-conns.job"
        row("128 connections, %s" % lab, f, "per-conn Jain", lambda j: t(j, "rr")["jain_connections"],
            rot, "{:.3f}")
        row("128 connections, %s" % lab, f, "worst ms", lat_max("rr"), rot)
        row("128 connections, %s" % lab, f, "IOPS", iops("rr"), rot, "{:.0f}")
    for f, n in (("bench/scenarios/weighted-2.conf", 2), ("bench/scenarios/weighted-16.conf", 16)):
        for dev in ("hdd", "ssd"):
            row("%d weighted groups 4k 70/30, %s" % (n, dev), f, "Jain (weighted)",
                lambda j: j["jain_iops"], ["--device", dev], "{:.3f}")
            row("%d weighted groups 4k 70/30, %s" % (n, dev), f, "total IOPS",
                lambda j: j["total"]["iops"], ["--device", dev], "{:.0f}")


if __name__ == "__main__":
    main()
