#!/usr/bin/python3
"""bench/fidelity.py: the fidelity rows through the server (CFQ never slower
than FIFO for one tenant, and better where the seeds say).

fio's nbd engine, each fio job its own NBD connection, against one or more
peers (a plugin .so and its parameters), alternating peers round by round,
page cache dropped before each server, medians printed at the end.  Run it
under the bench lock:

    flock "${BENCH_LOCK:-/var/tmp/nbdkit-cfq-bench.lock}" bench/fidelity.py --rounds 3 --runtime 10 \
        --peer fifo=plugin/nbdkit-cfq-plugin.so:scheduler=fifo \
        --peer cfq=plugin/nbdkit-cfq-plugin.so:scheduler=cfq \
        hdd32 disk32 fsw

A peer is LABEL=PLUGIN:ARG,ARG,...; ARG ENV:K=V sets an environment
variable of the server.  Scenarios: the SCEN table below, fsw (fsync
tester beside a writer, two groups, emulated disk) and wgN_{disk,ssd}[_f]
(N groups, weights 100..880, 4k random 70/30 at depth 8 each).  The image
(FIDELITY_IMG, default /var/tmp/fidelity/disk.img) must be 2 GiB of data
(written, not sparse, so reads hit allocated blocks: dd if=/dev/urandom
of=IMG bs=1M count=2048 oflag=direct); the fio job files and sockets go to
FIDELITY_WORK.
"""
import json, os, subprocess, sys, time, statistics, signal, tempfile, argparse

IMG = os.environ.get("FIDELITY_IMG", "/var/tmp/fidelity/disk.img")
WORK = os.environ.get("FIDELITY_WORK", "/var/tmp/fidelity/run")
HERE = os.path.dirname(os.path.abspath(__file__))
os.makedirs(WORK, exist_ok=True)


def drop_caches():
    subprocess.run("sync; echo 3 > /proc/sys/vm/drop_caches", shell=True)


def start_server(plugin, args, conf=None):
    sock = f"{WORK}/s.sock"
    if os.path.exists(sock):
        os.unlink(sock)
    drop_caches()
    cmd = ["nbdkit", "-U", sock, "--exit-with-parent", "-f", plugin]
    if conf:
        cmd.append(f"config={conf}")
    else:
        cmd.append(f"file={IMG}")
    env = dict(os.environ)
    for a in args:
        if a.startswith("ENV:"):
            k, v = a[4:].split("=", 1)
            env[k] = v
    cmd += [a for a in args if not a.startswith("ENV:")]
    log = open(f"{WORK}/server.log", "w")
    p = subprocess.Popen(cmd, stdout=log, stderr=log, env=env)
    for _ in range(200):
        if os.path.exists(sock):
            break
        time.sleep(0.05)
    else:
        p.kill()
        raise RuntimeError("server did not start: " + open(f"{WORK}/server.log").read())
    return p, sock


def stop_server(p):
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(10)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()


def write_conf(dev, groups, exports):
    """groups: [(name, weight)], exports: [(name, group, offset, size)]"""
    path = f"{WORK}/s.conf"
    lines = ["[device]", f"file = {IMG}"]
    dev = [a for a in dev if not a.startswith("ENV:")]
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
    open(path, "w").write("\n".join(lines) + "\n")
    return path


def fsync_tester(sock, export, runtime):
    return subprocess.Popen(["/usr/bin/python3", f"{HERE}/fsynctester.py",
                             f"nbd+unix:///{export}?socket={sock}", str(runtime)],
                            stdout=subprocess.PIPE, text=True)


def fio(jobs, sock, runtime, extra_global=()):
    """jobs: list of (name, dict of fio options, export or None, numjobs)."""
    lines = ["[global]", "ioengine=nbd", "time_based=1", f"runtime={runtime}",
             "size=1G" if True else "", "randrepeat=0"] + list(extra_global)
    for name, opts, export, n in jobs:
        lines.append(f"[{name}]")
        uri = f"nbd+unix:///{export or ''}?socket={sock}"
        lines.append(f"uri={uri}")
        for k, v in opts.items():
            lines.append(f"{k}={v}" if v is not None else k)
        if n > 1:
            lines.append(f"numjobs={n}")
    path = f"{WORK}/job.fio"
    open(path, "w").write("\n".join(lines) + "\n")
    r = subprocess.run(["fio", "--output-format=json", path],
                       capture_output=True, text=True, timeout=runtime + 120)
    if r.returncode != 0:
        raise RuntimeError("fio failed: " + r.stderr[-2000:])
    out = r.stdout
    out = out[out.index("{"):]
    return json.loads(out)


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


def jain(xs):
    xs = [x for x in xs]
    s = sum(xs)
    q = sum(x * x for x in xs)
    return s * s / (len(xs) * q) if q else 0


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


def m_fsync(js):
    f = [e for e in js if e["name"] == "f"]
    w = [e for e in js if e["name"] == "w"]
    return dict(fsync_p90=f[0].get("s_p90", 0), fsync_p50=f[0].get("s_p50", 0),
                fsync_max=f[0].get("s_max", 0), w_mib=w[0]["w_mib"], f_n=f[0].get("s_n", 0))


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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--peer", action="append", default=[],
                    help="LABEL=PLUGIN:arg,arg")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runtime", type=int, default=10)
    ap.add_argument("--set", action="append", default=[], help="extra server arg for all")
    ap.add_argument("--out", default=None)
    ap.add_argument("scen", nargs="+")
    a = ap.parse_args()
    peers = []
    for p in a.peer:
        label, rest = p.split("=", 1)
        plugin, _, args = rest.partition(":")
        peers.append((label, plugin, [x for x in args.split(",") if x]))
    results = {}
    for sname in a.scen:
        if sname.startswith("fsw"):
            # fsync tenant beside a writer tenant, two groups of 500
            dev = ["emulate=hdd"] if sname == "fsw" else ["emulate=ssd"]
            for rnd in range(a.rounds):
                for label, plugin, args in peers:
                    conf = write_conf(dev + args + a.set, [("f", 500), ("w", 500)],
                                      [("f", "f", "0", "1G"), ("w", "w", "1G", "1G")])
                    sargs = [x for x in args + a.set if x.startswith("scheduler=") or x.startswith("ENV:")]
                    p, sock = start_server(plugin, sargs, conf)
                    try:
                        ft = fsync_tester(sock, "f", a.runtime)
                        j = fio([("w", dict(rw="write", bs="1M", iodepth=16), "w", 1)], sock, a.runtime)
                        out, _ = ft.communicate(timeout=120)
                    finally:
                        stop_server(p)
                    ts = sorted(json.loads(out))
                    m = m_fsw(summarize(j))
                    m.update(fs_p50=ts[len(ts) // 2] * 1e3, fs_p90=ts[int(len(ts) * 0.9)] * 1e3,
                             fs_max=ts[-1] * 1e3, fs_n=len(ts))
                    results.setdefault(sname, {}).setdefault(label, []).append(m)
                    print(sname, rnd, label, " ".join(f"{k}={v:.4g}" for k, v in m.items()), flush=True)
            for label, _, _ in peers:
                ms = results[sname][label]
                med = {k: statistics.median(m[k] for m in ms) for k in ms[0]}
                print("MEDIAN", sname, label, " ".join(f"{k}={v:.4g}" for k, v in med.items()), flush=True)
            continue
        if sname.startswith("wg"):
            # weighted tenants: wgN_{disk,ssd}[_f]: N groups, 4k 70/30 depth 8
            base, devn = sname.split("_")[0], sname.split("_")[1]
            n = int(base[2:])
            weights = [100, 400] if n == 2 else [100 + 52 * i for i in range(n)]
            dev = [] if devn == "disk" else ["emulate=ssd"]
            reg = (2048 // n) * 1024 * 1024
            job = dict(rw="randrw", rwmixread=70, bs="4k", iodepth=8)
            if sname.endswith("_f"):
                job["fsync"] = 8
            for rnd in range(a.rounds):
                for label, plugin, args in peers:
                    conf = write_conf(dev + args + a.set, [(f"g{i}", w) for i, w in enumerate(weights)],
                                      [(f"g{i}", f"g{i}", str(i * reg), str(reg)) for i in range(n)])
                    sargs = [x for x in args + a.set if x.startswith("scheduler=") or x.startswith("ENV:")]
                    p, sock = start_server(plugin, sargs, conf)
                    try:
                        jobs = [(f"g{i}", dict(job, size=str(reg)), f"g{i}", 1) for i in range(n)]
                        j = fio(jobs, sock, a.runtime)
                    finally:
                        stop_server(p)
                    js = summarize(j)
                    io = {e["name"]: e["r_iops"] + e["w_iops"] for e in js}
                    tot = sum(io.values())
                    tw = sum(weights)
                    dev_max = max(abs(io[f"g{i}"] / tot / (w / tw) - 1) for i, w in enumerate(weights))
                    xs = [io[f"g{i}"] / w for i, w in enumerate(weights)]
                    m = dict(iops=tot, share_dev=dev_max, wjain=jain(xs),
                             last_share=io[f"g{n-1}"] / tot)
                    results.setdefault(sname, {}).setdefault(label, []).append(m)
                    print(sname, rnd, label, " ".join(f"{k}={v:.4g}" for k, v in m.items()), flush=True)
            for label, _, _ in peers:
                ms = results[sname][label]
                med = {k: statistics.median(m[k] for m in ms) for k in ms[0]}
                print("MEDIAN", sname, label, " ".join(f"{k}={v:.4g}" for k, v in med.items()), flush=True)
            continue
        dev, jobs, metric = SCEN[sname]
        for rnd in range(a.rounds):
            for label, plugin, args in peers:
                p, sock = start_server(plugin, dev + args + a.set)
                try:
                    j = fio(jobs, sock, a.runtime)
                finally:
                    stop_server(p)
                m = metric(summarize(j))
                results.setdefault(sname, {}).setdefault(label, []).append(m)
                print(sname, rnd, label, " ".join(f"{k}={v:.4g}" for k, v in m.items()), flush=True)
        # medians
        for label, _, _ in peers:
            ms = results[sname][label]
            med = {k: statistics.median(m[k] for m in ms) for k in ms[0]}
            print("MEDIAN", sname, label, " ".join(f"{k}={v:.4g}" for k, v in med.items()), flush=True)
    if a.out:
        json.dump(results, open(a.out, "w"), indent=1)


if __name__ == "__main__":
    main()
