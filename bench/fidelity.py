#!/usr/bin/python3
"""bench/fidelity.py: the fidelity rows through the server (CFQ never slower
than FIFO for one tenant, and better where the seeds say), as bench/ab's
workloads.

    bench/fidelity.py [--rounds N] [--runtime S] ROW...
    bench/ab [OPTIONS] OLD NEW ROW...

The first is bench/ab with this tree's scheduler=fifo against its
scheduler=cfq; the second compares any two builds or settings on the
rows (bench/ab --help).  Each row: fio's nbd engine, each fio job its own
NBD connection, on bench/ab's image (2 GiB of written data, so reads hit
allocated blocks).  Rows: the SCEN table below, fsw and fsw_ssd (an fsync
tester beside a writer, two groups, the emulated disk or SSD) and
wgN_{disk,ssd}[_f] (N groups, weights 100..880, 4k random 70/30 at depth
8 each; _f: a flush after every 8 writes).  A row's numbers are the
metrics its m_* function names.
"""
import json, os, subprocess, sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
from cfqlab_lib.common import jain, run_fio  # noqa: E402

# What the rows read and write: two 1 GiB halves, or N regions.
IMAGE_SIZE = 2 << 30


def write_conf(path, image, dev, groups, exports):
    """A config at PATH on IMAGE: DEV's device keys in [device], its
    other keys but scheduler in [scheduler]; groups: [(name, weight)],
    exports: [(name, group, offset, size)]."""
    lines = ["[device]", f"file = {image}"]
    for a in dev:
        k, v = a.split("=", 1)
        if k in ("emulate", "queue_depth", "mode") or k.startswith("model."):
            lines.append(f"{k} = {v}")
    lines.append("[scheduler]")
    for a in dev:
        k, v = a.split("=", 1)
        if not (k in ("emulate", "queue_depth", "mode", "scheduler") or k.startswith("model.")):
            lines.append(f"{k} = {v}")
    for g, w in groups:
        lines += [f"[group {g}]", f"weight = {w}"]
    for e, g, off, size in exports:
        lines += [f"[export {e}]", f"group = {g}", f"offset = {off}", f"size = {size}"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def fio(jobs, sock, runtime, work):
    """jobs: list of (name, dict of fio options, export or None, numjobs)."""
    lines = ["[global]", "ioengine=nbd", "time_based=1", f"runtime={runtime}",
             "size=1G", "randrepeat=0"]
    for name, opts, export, n in jobs:
        lines.append(f"[{name}]")
        uri = f"nbd+unix:///{export or ''}?socket={sock}"
        lines.append(f"uri={uri}")
        for k, v in opts.items():
            lines.append(f"{k}={v}" if v is not None else k)
        if n > 1:
            lines.append(f"numjobs={n}")
    path = os.path.join(work, "job.fio")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return run_fio([path], timeout=runtime + 120, save=os.path.join(work, "fio.json"))


def fsync_tester(sock, export, runtime):
    return subprocess.Popen(["/usr/bin/python3", f"{HERE}/fsynctester.py",
                             f"nbd+unix:///{export}?socket={sock}", str(runtime)],
                            stdout=subprocess.PIPE, text=True)


def pct(d, p):
    return d.get("clat_ns", {}).get("percentile", {}).get(p, 0) / 1e6


def summarize(j):
    """Per job: name, r_iops, w_iops, r_mib, w_mib, r_max_ms, w_max_ms,
    r_p99, w_p99, sync_p90/p50/max (fsync) in ms."""
    res = []
    for x in j["jobs"]:
        rd, wr, sy = x["read"], x["write"], x.get("sync", {})
        e = dict(name=x["jobname"], r_iops=rd["iops"], w_iops=wr["iops"],
                 r_mib=rd["bw_bytes"] / 2**20, w_mib=wr["bw_bytes"] / 2**20,
                 r_max=rd["clat_ns"]["max"] / 1e6, w_max=wr["clat_ns"]["max"] / 1e6,
                 r_p99=pct(rd, "99.000000"), w_p99=pct(wr, "99.000000"),
                 r_mean=rd["clat_ns"]["mean"] / 1e6)
        sl = sy.get("lat_ns", {})
        if sl.get("N", 0):
            e["s_p90"] = sl.get("percentile", {}).get("90.000000", 0) / 1e6
            e["s_p50"] = sl.get("percentile", {}).get("50.000000", 0) / 1e6
            e["s_max"] = sl["max"] / 1e6
            e["s_n"] = sl["N"]
        res.append(e)
    return res


RR = dict(rw="randread", bs="4k", iodepth=1)

# Each scenario: device args, jobs, metric function(list of job dicts)->dict
def m_hdd32(js):
    return dict(max_ms=max(e["r_max"] for e in js), iops=sum(e["r_iops"] for e in js),
                p99_ms=max(e["r_p99"] for e in js))


def m_2r1s(js):
    r = [e for e in js if e["name"] == "rr"]
    s = [e for e in js if e["name"] == "sq"]
    return dict(rand_iops=sum(e["r_iops"] for e in r), seq_mib=sum(e["r_mib"] for e in s),
                rmax_ms=max([e["r_max"] for e in r] or [0]), smax_ms=max(e["r_max"] for e in s))


def m_4r1w(js):
    r = [e for e in js if e["name"] == "rr"]
    w = [e for e in js if e["name"] == "sw"]
    return dict(rd_iops=sum(e["r_iops"] for e in r), rmax_ms=max([e["r_max"] for e in r] or [0]),
                w_mib=sum(e["w_mib"] for e in w), wmax_ms=max(e["w_max"] for e in w))


def m_total(js):
    return dict(iops=sum(e["r_iops"] + e["w_iops"] for e in js),
                rmax=max(e["r_max"] for e in js), wmax=max(e["w_max"] for e in js),
                r_p99=max(e["r_p99"] for e in js), w_p99=max(e["w_p99"] for e in js))


def m_many(js):
    xs = [e["r_iops"] for e in js]
    return dict(iops=sum(xs), jain=jain(xs), worst_ms=max(e["r_max"] for e in js),
                min_iops=min(xs))


def many(n, depth=2):
    return ([("rr", dict(rw="randread", bs="4k", iodepth=depth), None, n)], m_many)


def m_fsw(js):
    w = [e for e in js if e["name"] == "w"]
    return dict(w_mib=sum(e["w_mib"] for e in w))


RW = dict(rw="randrw", rwmixread=70, bs="4k", iodepth=8)
RWF = dict(rw="randrw", rwmixread=70, bs="8k", iodepth=4, fsync=8)
WF = dict(rw="randwrite", bs="4k", iodepth=1, fsync=1)
SCEN = {
    "hdd32": (["emulate=hdd"], [("rr", RR, None, 32)], m_hdd32),
    "hdd2r1s": (["emulate=hdd"], [("rr", RR, None, 2),
                                  ("sq", dict(rw="read", bs="256k", iodepth=1, offset="1G"), None, 1)], m_2r1s),
    "ssd2r1s": (["emulate=ssd"], [("rr", RR, None, 2),
                                  ("sq", dict(rw="read", bs="256k", iodepth=1, offset="1G"), None, 1)], m_2r1s),
    "ssd4r1w": (["emulate=ssd"], [("rr", RR, None, 4),
                                  ("sw", dict(rw="write", bs="1M", iodepth=4, offset="1G"), None, 1)], m_4r1w),
    "hdd4r1w": (["emulate=hdd"], [("rr", RR, None, 4),
                                  ("sw", dict(rw="write", bs="1M", iodepth=4, offset="1G"), None, 1)], m_4r1w),
    "hddw": (["emulate=hdd"], [("sw", dict(rw="write", bs="1M", iodepth=4, offset="1G"), None, 1)], m_4r1w),
    "disk_rw": ([], [("x", dict(rw="randrw", rwmixread=70, bs="4k", iodepth=8), None, 1)], m_total),
    "disk_rwf": ([], [("x", dict(rw="randrw", rwmixread=70, bs="8k", iodepth=4, fsync=8), None, 1)], m_total),
    "disk_wf4": ([], [("x", dict(rw="randwrite", bs="4k", iodepth=1, fsync=1), None, 4)], m_total),
    "disk32": ([],) + many(32),
    "disk128": ([],) + many(128),
    "hdd_rw": (["emulate=hdd"], [("x", RW, None, 1)], m_total),
    "ssd_rw": (["emulate=ssd"], [("x", RW, None, 1)], m_total),
    "hdd_rwf": (["emulate=hdd"], [("x", RWF, None, 1)], m_total),
    "ssd_rwf": (["emulate=ssd"], [("x", RWF, None, 1)], m_total),
    "hdd_wf4": (["emulate=hdd"], [("x", WF, None, 4)], m_total),
    "ssd_wf4": (["emulate=ssd"], [("x", WF, None, 4)], m_total),
    "ssdw": (["emulate=ssd"], [("sw", dict(rw="write", bs="1M", iodepth=4, offset="1G"), None, 1)], m_4r1w),
    "ssd128": (["emulate=ssd"],) + many(128),
    "ssd8": (["emulate=ssd"],) + many(8, 4),
    "disk8": ([],) + many(8, 4),
    "disk256": ([],) + many(256, 1),
    "ssd256": (["emulate=ssd"],) + many(256, 1),
    "ssd32": (["emulate=ssd"],) + many(32),
}


def known(row):
    """Whether ROW is a fidelity row."""
    if row in SCEN or row in ("fsw", "fsw_ssd"):
        return True
    p = row.split("_")
    return (len(p) in (2, 3) and p[0][:2] == "wg" and p[0][2:].isdigit()
            and int(p[0][2:]) > 0 and p[1] in ("disk", "ssd") and p[2:] in ([], ["f"]))


def run_row(row, serve, args, runtime, work, image):
    """One run of ROW against one server, its numbers.  SERVE(ARGS,
    CONF=None) starts the server (ARGS on its command line; with CONF, a
    config file instead of the image) and returns its socket; ARGS here
    are the server's KEY=VALUE settings of the run."""
    if row.startswith("fsw"):
        # An fsync tenant beside a writer tenant, two groups of 500.
        dev = ["emulate=hdd"] if row == "fsw" else ["emulate=ssd"]
        conf = write_conf(os.path.join(work, "s.conf"), image, dev + args,
                          [("f", 500), ("w", 500)],
                          [("f", "f", "0", "1G"), ("w", "w", "1G", "1G")])
        sock = serve([x for x in args if x.startswith("scheduler=")], conf)
        ft = fsync_tester(sock, "f", runtime)
        try:
            j = fio([("w", dict(rw="write", bs="1M", iodepth=16), "w", 1)], sock, runtime, work)
            out, _ = ft.communicate(timeout=120)
        finally:
            if ft.poll() is None:
                ft.kill()
                ft.wait()
        ts = sorted(json.loads(out))
        m = m_fsw(summarize(j))
        m.update(fs_p50=ts[len(ts) // 2] * 1e3, fs_p90=ts[int(len(ts) * 0.9)] * 1e3,
                 fs_max=ts[-1] * 1e3, fs_n=len(ts))
        return m
    if row.startswith("wg"):
        # Weighted tenants: wgN_{disk,ssd}[_f]: N groups, 4k 70/30 depth 8.
        base, devn = row.split("_")[0], row.split("_")[1]
        n = int(base[2:])
        weights = [100, 400] if n == 2 else [100 + 52 * i for i in range(n)]
        dev = [] if devn == "disk" else ["emulate=ssd"]
        reg = (2048 // n) * 1024 * 1024
        job = dict(rw="randrw", rwmixread=70, bs="4k", iodepth=8)
        if row.endswith("_f"):
            job["fsync"] = 8
        conf = write_conf(os.path.join(work, "s.conf"), image, dev + args,
                          [(f"g{i}", w) for i, w in enumerate(weights)],
                          [(f"g{i}", f"g{i}", str(i * reg), str(reg)) for i in range(n)])
        sock = serve([x for x in args if x.startswith("scheduler=")], conf)
        jobs = [(f"g{i}", dict(job, size=str(reg)), f"g{i}", 1) for i in range(n)]
        js = summarize(fio(jobs, sock, runtime, work))
        io = {e["name"]: e["r_iops"] + e["w_iops"] for e in js}
        tot = sum(io.values())
        tw = sum(weights)
        dev_max = max(abs(io[f"g{i}"] / tot / (w / tw) - 1) for i, w in enumerate(weights))
        xs = [io[f"g{i}"] / w for i, w in enumerate(weights)]
        return dict(iops=tot, share_dev=dev_max, wjain=jain(xs),
                    last_share=io[f"g{n-1}"] / tot)
    dev, jobs, metric = SCEN[row]
    sock = serve(dev + args)
    return metric(summarize(fio(jobs, sock, runtime, work)))


def main():
    import argparse
    ap = argparse.ArgumentParser(
        description="The fidelity rows, this tree's scheduler=fifo against its "
        "scheduler=cfq, through bench/ab.")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("row", nargs="+")
    a = ap.parse_args()
    bad = [r for r in a.row if not known(r)]
    if bad:
        ap.error("no fidelity row %s (the SCEN table, fsw, fsw_ssd, wgN_{disk,ssd}[_f])"
                 % ", ".join(bad))
    top = os.path.dirname(HERE)
    ab = os.path.join(HERE, "ab")
    os.execv(sys.executable, [sys.executable, ab, "--rounds", str(a.rounds),
                              "--runtime", str(a.runtime), top + ":scheduler=fifo",
                              top + ":scheduler=cfq"] + a.row)


if __name__ == "__main__":
    main()
