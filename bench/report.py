#!/usr/bin/env python3
"""bench/report.py OUTDIR: turn one `make bench` run into its table.

Reads OUTDIR/targets.tsv (rows and why some were skipped), OUTDIR/runs.tsv
(one line per measured run) and the fio JSON files it names; writes
OUTDIR/table.txt and OUTDIR/summary.json and prints the table.

Per (workload, transport, target) it reports medians over rounds of: IOPS,
MiB/s, p50 and p99 completion latency (fio clat), server CPU per request
(utime+stime of the server process over the measured run / requests fio
completed), server context switches per request (voluntary + involuntary,
summed over the server's threads), client CPU per request (fio's usr+sys
over its runtime / requests), plus the IOPS spread (max-min)/median so noise
is visible.  Then the ratios of our fifo row to each peer, on median IOPS
(for a fixed block size that is also the bandwidth ratio), each against its
target, and at the end all ratios side by side.

Plain standard library: runs under /usr/bin/python3 or any python3.
"""

import json
import os
import statistics
import sys

OURS = "fifo"

# The servers a user would run instead: ours must reach 1.0x the best of
# them on every workload and transport.
PEERS = [("fcache", "file plugin, default cache"),
         ("file", "file plugin, cache=none"),
         ("qsd", "qemu-storage-daemon")]
BEST_PEER = 1.0

# Information only: ours against the two ceilings, and the long goal.
CEILINGS = [("null", "null plugin"), ("raw", "raw file")]
GOAL_MIN = 0.85               # ours >= 0.85x min(null, raw): reported, a goal

# scheduler=cfq's median IOPS against scheduler=fifo's, one client, on every
# workload: the scheduler may cost at most 5%.
CFQ_VS_FIFO = 0.95

# Server CPU per request of ours against the null plugin's (the protocol's
# own cost) on this workload: at most CPU_VS_NULL times.
CPU_WORKLOAD = "randread-4k-qd32"
CPU_VS_NULL = 2.0

# Informational ratios between two rows when both ran: (row, base, meaning).
EXTRA = [
    ("onull", "null", "our request path vs nbdkit's, neither touching a disk"),
    ("fifo", "floop", "what the direct path buys: fifo vs fifo -D cfq.direct=0"),
    ("cfq", "cloop", "the direct path under cfq: cfq vs cfq -D cfq.direct=0"),
    ("null", "qnull", "nbdkit's NBD path vs QEMU's, neither touching a disk"),
    ("page", "fcache", "cache=page vs the file plugin's default cache, both cold"),
    ("pwarm", "fwarm", "cache=page vs the file plugin's default cache, both warm"),
    ("fifo", "bfifo", "this build vs BENCH_BASE_PLUGIN's, fifo"),
    ("cfq", "bcfq", "this build vs BENCH_BASE_PLUGIN's, cfq"),
    ("page", "bpage", "this build vs BENCH_BASE_PLUGIN's, cache=page"),
]


def read_tsv(path):
    with open(path) as f:
        lines = [l.rstrip("\n").split("\t") for l in f if l.strip()]
    return lines


def fio_numbers(path):
    """Numbers of one measured run from fio's JSON (one job)."""
    with open(path) as f:
        j = json.load(f)
    job = j["jobs"][0]
    if job.get("error"):
        raise ValueError("fio job error %s in %s" % (job["error"], path))
    rw = job["job options"].get("rw", "")
    d = job["write"] if "write" in rw else job["read"]
    ios = job["read"]["total_ios"] + job["write"]["total_ios"]
    pct = d["clat_ns"].get("percentile", {})
    runtime_s = d["runtime"] / 1000.0
    return {
        "rw": rw,
        "iops": d["iops"],
        "mibs": d["bw_bytes"] / 1048576.0,
        "p50_us": pct.get("50.000000", 0) / 1000.0,
        "p99_us": pct.get("99.000000", 0) / 1000.0,
        "ios": ios,
        "cli_cpu_us": ((job["usr_cpu"] + job["sys_cpu"]) / 100.0 * runtime_s * 1e6 / ios
                       if ios else None),
        "cli_sys_us": (job["sys_cpu"] / 100.0 * runtime_s * 1e6 / ios if ios else None),
    }


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def ratio(a, b):
    """Median IOPS of row a over row b, or None."""
    if a is None or b is None or not b["iops"]:
        return None
    return a["iops"] / b["iops"]


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def jain(xs):
    """Jain's fairness index of xs: 1.0 when all equal, 1/n when one has all."""
    xs = [float(x) for x in xs]
    sq = sum(x * x for x in xs)
    return (sum(xs) ** 2) / (len(xs) * sq) if sq else None


def stats_bytes(path):
    """{export: bytes of every type} from one control-socket "stats" answer."""
    with open(path) as f:
        doc = json.load(f)
    ex = doc["exports"]
    if isinstance(ex, dict):
        ex = [dict(v, name=k) for k, v in ex.items()]
    out = {}
    for e in ex:
        b = e.get("bytes", 0)
        out[e["name"]] = float(sum(b.values()) if isinstance(b, dict) else b)
    return out


def tenants_round(out, jpath, s1, s2, names, weights):
    """Per-tenant numbers of one run of the tenants section."""
    with open(os.path.join(out, jpath)) as f:
        j = json.load(f)
    jobs = {job["jobname"]: job for job in j["jobs"]}
    ten = {}
    for n in names:
        job = jobs[n]
        if job.get("error"):
            raise ValueError("fio job %s error %s in %s" % (n, job["error"], jpath))
        d = job["read"]
        pct = d["clat_ns"].get("percentile", {})
        ten[n] = {"iops": d["iops"], "mibs": d["bw_bytes"] / 1048576.0,
                  "bytes": float(d["io_bytes"]),
                  "p50_us": pct.get("50.000000", 0) / 1000.0,
                  "p99_us": pct.get("99.000000", 0) / 1000.0}
    total = sum(t["bytes"] for t in ten.values())
    wsum = float(sum(weights.values()))
    for n in names:
        ten[n]["share"] = ten[n]["bytes"] / total if total else None
        ten[n]["want"] = weights[n] / wsum
    srv = None
    if s1 and s2:
        b1, b2 = stats_bytes(os.path.join(out, s1)), stats_bytes(os.path.join(out, s2))
        srv = {n: b2.get(n, 0.0) - b1.get(n, 0.0) for n in names}
        st = sum(srv.values())
        for n in names:
            ten[n]["srv_share"] = srv[n] / st if st else None
    agg = {"iops": sum(t["iops"] for t in ten.values()),
           "mibs": sum(t["mibs"] for t in ten.values())}
    return {"tenants": ten, "aggregate": agg,
            "jain": jain([ten[n]["bytes"] / weights[n] for n in names]),
            "srv_jain": (jain([srv[n] / weights[n] for n in names]) if srv else None)}


def tenants_report(out, settings, p, summary):
    """The "tenants" section: three weighted tenants, cfq against fifo."""
    path = os.path.join(out, "tenants.tsv")
    if os.path.exists(os.path.join(out, "tenants.skipped")):
        with open(os.path.join(out, "tenants.skipped")) as f:
            why = f.read().strip()
        p("== tenants  skipped: %s" % why)
        summary["tenants"] = {"skipped": why}
        return
    if not os.path.exists(path):
        p("== tenants  not run (BENCH_TENANTS=0)")
        summary["tenants"] = {"skipped": "BENCH_TENANTS=0"}
        return
    names = settings.get("tenant_names", "w100,w200,w400").split(",")
    wl = [int(x) for x in settings.get("tenant_weights", "100,200,400").split(",")]
    weights = dict(zip(names, wl))
    depth = settings.get("tenant_depth", "?")
    runs = {}               # (mode, sched) -> [round numbers]
    fails = {}
    modes, scheds = [], []
    for row in read_tsv(path)[1:]:
        row += [""] * (8 - len(row))
        rnd, mode, sched, status, jpath, s1, s2, note = row[:8]
        if mode not in modes:
            modes.append(mode)
        if sched not in scheds:
            scheds.append(sched)
        if status != "ok":
            fails.setdefault((mode, sched), []).append("round %s: %s" % (rnd, note))
            continue
        try:
            runs.setdefault((mode, sched), []).append(
                tenants_round(out, jpath, s1, s2, names, weights))
        except (OSError, ValueError, KeyError) as e:
            fails.setdefault((mode, sched), []).append("round %s: %s" % (rnd, e))
    p("== tenants: 3 exports of the image, weights %s; each tenant one fio job, one "
      "connection, 4k randread iodepth=%s" % ("/".join(str(w) for w in wl), depth))
    p("   disk = the real disk, no emulation; emu = emulate=ssd %s" %
      settings.get("tenant_emulate", "").replace(",", " "))
    p("   cfq tuned: %s; fifo: the baseline (arrival order)" %
      settings.get("tenant_cfq", "").replace(",", " "))
    p("   medians over rounds; share = tenant's bytes / all bytes (fio, after the ramp);")
    p("   srv = the same from the control socket's per-export bytes (incl. the ramp);")
    p("   Jain = Jain's index of bytes/weight over tenants (1.0 = exactly by weight;")
    p("   equal throughput with weights 1:2:4 gives 0.78)")
    tsum = {"weights": weights, "depth": depth,
            "emulate": settings.get("tenant_emulate", "").replace(",", " "),
            "cfq_tunables": settings.get("tenant_cfq", "").replace(",", " "),
            "modes": {}}
    for mode in modes:
        msum = tsum["modes"].setdefault(mode, {"scheds": {}, "ratios": {}})
        p("")
        p("-- %s" % ("disk (real disk, no emulation)" if mode == "disk"
                     else "emu (emulated SSD: the model is the bottleneck)" if mode == "emu"
                     else mode))
        p("  %-5s %-6s %6s %8s %8s %9s %9s %7s %7s %7s %3s" %
          ("sched", "tenant", "weight", "IOPS", "MiB/s", "p50 us", "p99 us",
           "share", "want", "srv", "n"))
        aggs = {}
        for sched in scheds:
            rs = runs.get((mode, sched), [])
            fl = fails.get((mode, sched), [])
            if not rs:
                p("  %-5s FAILED: %s" % (sched, "; ".join(fl) or "no runs"))
                msum["scheds"][sched] = {"failed": fl}
                continue
            ssum = {"tenants": {}, "failed": fl, "n": len(rs)}
            for n in names:
                m = {k: med([r["tenants"][n].get(k) for r in rs]) for k in
                     ("iops", "mibs", "p50_us", "p99_us", "share", "srv_share")}
                m["weight"] = weights[n]
                m["want"] = rs[0]["tenants"][n]["want"]
                ssum["tenants"][n] = m
                p("  %-5s %-6s %6d %8s %8s %9s %9s %6s%% %6.1f%% %6s%% %3d" %
                  (sched, n, weights[n], fmt(m["iops"], ".0f"), fmt(m["mibs"], ".2f"),
                   fmt(m["p50_us"], ".0f"), fmt(m["p99_us"], ".0f"),
                   fmt(m["share"] * 100 if m["share"] is not None else None, ".1f"),
                   m["want"] * 100,
                   fmt(m["srv_share"] * 100 if m["srv_share"] is not None else None, ".1f"),
                   len(rs)))
            agg = {k: med([r["aggregate"][k] for r in rs]) for k in ("iops", "mibs")}
            iops = [r["aggregate"]["iops"] for r in rs]
            agg["spread"] = (max(iops) - min(iops)) / agg["iops"] if agg["iops"] else None
            ssum["aggregate"] = agg
            ssum["jain"] = med([r["jain"] for r in rs])
            ssum["srv_jain"] = med([r["srv_jain"] for r in rs])
            ssum["max_share_dev"] = med([max(abs(r["tenants"][n]["share"] -
                                                 r["tenants"][n]["want"]) /
                                             r["tenants"][n]["want"] for n in names)
                                         for r in rs])
            aggs[sched] = agg
            p("  %-5s %-6s %6s %8s %8s   Jain %s (srv %s)  worst share off by %s%% rel"
              "  spread %s%s" %
              (sched, "all", "", fmt(agg["iops"], ".0f"), fmt(agg["mibs"], ".2f"),
               fmt(ssum["jain"], ".3f"), fmt(ssum["srv_jain"], ".3f"),
               fmt(ssum["max_share_dev"] * 100, ".0f"),
               fmt(agg["spread"] * 100 if agg["spread"] is not None else None, ".0f"),
               ("%" if agg["spread"] is not None else "") +
               ("  (%d failed)" % len(fl) if fl else "")))
            msum["scheds"][sched] = ssum
        if "cfq" in aggs and "fifo" in aggs and aggs["fifo"]["iops"]:
            r = aggs["cfq"]["iops"] / aggs["fifo"]["iops"]
            msum["ratios"]["cfq/fifo_aggregate"] = r
            p("  cfq/fifo aggregate IOPS %.2fx  (information: the cost of weighted fairness)" % r)
    summary["tenants"] = tsum


def main():
    out = sys.argv[1]
    settings = {}
    with open(os.path.join(out, "settings.txt")) as f:
        for line in f:
            for kv in line.split():
                if "=" in kv:
                    k, v = kv.split("=", 1)
                    settings[k] = v
    clk_tck = float(settings.get("clk_tck", "100"))

    targets = []            # [(name, status, label, note)]
    for row in read_tsv(os.path.join(out, "targets.tsv")):
        row += [""] * (4 - len(row))
        targets.append(tuple(row[:4]))

    runs = read_tsv(os.path.join(out, "runs.tsv"))[1:]
    workloads, transports = [], []
    samples = {}            # (workload, transport, target) -> [numbers]
    failures = {}           # (workload, transport, target) -> [notes]
    rws = {}                # workload -> fio rw
    for row in runs:
        row += [""] * (10 - len(row))
        rnd, w, tr, t, status, jpath, ticks, vcsw, ivcsw, note = row[:10]
        if w not in workloads:
            workloads.append(w)
        if tr != "none" and tr not in transports:
            transports.append(tr)
        if status != "ok":
            failures.setdefault((w, tr, t), []).append("round %s: %s" % (rnd, note))
            continue
        n = fio_numbers(os.path.join(out, jpath))
        rws[w] = n["rw"]
        n["srv_cpu_us"] = (int(ticks) / clk_tck * 1e6 / n["ios"]
                           if ticks != "" and n["ios"] else None)
        n["srv_cs"] = ((int(vcsw) + int(ivcsw)) / n["ios"]
                       if vcsw != "" and ivcsw != "" and n["ios"] else None)
        n["srv_ics"] = (int(ivcsw) / n["ios"] if ivcsw != "" and n["ios"] else None)
        samples.setdefault((w, tr, t), []).append(n)
    if not transports:
        transports = ["unix"]

    def rows_of(w, tr, t):
        """Samples of a row; raw has no transport (run once, shown in each)."""
        return samples.get((w, tr, t)) or samples.get((w, "none", t), [])

    def fails_of(w, tr, t):
        return failures.get((w, tr, t)) or failures.get((w, "none", t), [])

    lines = []
    summary = {"settings": settings, "workloads": {}}
    p = lines.append
    p("nbdkit-cfq benchmark  %s  (%s)" % (settings.get("date_utc", "?"), out))
    p("rounds=%s  runtime=%ss (+%ss warm-up)  image=%s  nbdkit --threads=%s  "
      "drop_caches=%s  transports=%s" %
      (settings.get("rounds"), settings.get("runtime_s"), settings.get("ramp_s"),
       settings.get("image"), settings.get("nbdkit_threads"),
       settings.get("drop_caches"), settings.get("transports", "unix")))
    if "disk" in settings:
        p("disk %s: scheduler %s, read_ahead_kb %s (the page-cache rows' readahead)" %
          (settings["disk"], settings.get("disk_sched", "?"),
           settings.get("read_ahead_kb", "?")))
    if settings.get("page_reporting") == "on":
        try:
            mib = "%d MiB" % ((int(settings["reported_kib_end"]) -
                               int(settings["reported_kib_start"])) // 1024)
        except (KeyError, ValueError):
            mib = "an amount this kernel does not count"
        p("guest memory: free page reporting on (order %s), %s handed to the host "
          "during the bench; pages it reclaimed cost a host fault when used again, "
          "which slows servers that allocate page-cache pages (bench/README.md)" %
          (settings.get("page_reporting_order", "?"), mib))
    elif settings.get("page_reporting") == "off":
        p("guest memory: no free page reporting")
    p("load average at start %s, at end %s  (%s cpus; shared machines are noisy: "
      "read ratios with the spread column)" % (settings.get("loadavg_start", "?"),
                                               settings.get("loadavg_end", "?"),
                                               settings.get("cpus", "?")))
    p("")
    p("rows:")
    for name, status, label, note in targets:
        p("  %-6s %s%s" % (name, label, "" if status == "ok" else "  [SKIPPED: %s]" % note))
    p("")
    p("fairness: same fio job file, image and random seed for every row; one fio job, one")
    p("  connection; every nbdkit row gets the same --threads; each run starts a fresh server,")
    p("  warms it (unmeasured), then %s the page cache before the measured run" %
      ("syncs and drops" if settings.get("drop_caches") == "1" else "does NOT drop"))
    p("  (so fcache starts cold); targets rotate order every round; raw has no transport and")
    p("  is run once per round, shown under each transport.")
    p("")
    p("medians over rounds; lat = fio completion latency; srv cpu = server utime+stime per")
    p("  request; srv cs = server context switches (voluntary + involuntary, all threads) per")
    p("  request; cli cpu = fio's usr+sys per request")

    verdicts = []           # (workload, transport, what, threshold, met or None)
    goals = []              # (workload, transport, ratio or None)
    side = {}               # (workload, transport) -> {column: value}
    allmeds = {}            # (workload, transport) -> {row: medians}
    for w in workloads:
        rw = rws.get(w, "")
        for tr in transports:
            p("")
            p("== %s over %s  (fio rw=%s)" % (w, tr, rw or "?"))
            p("  %-6s %9s %8s %9s %9s %8s %7s %8s %7s %3s" %
              ("", "IOPS", "MiB/s", "p50 us", "p99 us", "srv cpu", "srv cs", "cli cpu",
               "spread", "n"))
            p("  %-6s %9s %8s %9s %9s %8s %7s %8s %7s %3s" %
              ("", "", "", "", "", "us/req", "/req", "us/req", "IOPS", ""))
            meds = {}
            wsum = summary["workloads"].setdefault(w, {"rw": rw, "transports": {}})
            tsum = wsum["transports"].setdefault(tr, {"targets": {}, "ratios": {}})
            for name, status, label, note in targets:
                if status != "ok":
                    p("  %-6s skipped: %s" % (name, note))
                    tsum["targets"][name] = {"skipped": note}
                    continue
                ss = rows_of(w, tr, name)
                fl = fails_of(w, tr, name)
                if not ss:
                    p("  %-6s FAILED: %s" % (name, "; ".join(fl) or "no runs"))
                    tsum["targets"][name] = {"failed": fl}
                    continue
                m = {k: med([s[k] for s in ss]) for k in
                     ("iops", "mibs", "p50_us", "p99_us", "srv_cpu_us", "srv_cs",
                      "srv_ics", "cli_cpu_us", "cli_sys_us")}
                iops = [s["iops"] for s in ss]
                m["spread"] = (max(iops) - min(iops)) / m["iops"] if m["iops"] else None
                m["n"] = len(ss)
                meds[name] = m
                tsum["targets"][name] = dict(m, failed=fl)
                p("  %-6s %9s %8s %9s %9s %8s %7s %8s %7s %3d%s" %
                  (name, fmt(m["iops"], ".0f"), fmt(m["mibs"], ".1f"),
                   fmt(m["p50_us"], ".1f"), fmt(m["p99_us"], ".1f"),
                   fmt(m["srv_cpu_us"], ".1f"), fmt(m["srv_cs"], ".2f"),
                   fmt(m["cli_cpu_us"], ".1f"),
                   fmt(m["spread"] * 100 if m["spread"] is not None else None, ".0f") +
                   ("%" if m["spread"] is not None else ""), m["n"],
                   ("  (%d failed)" % len(fl)) if fl else ""))
            ours = meds.get(OURS)
            allmeds[(w, tr)] = meds
            sd = side.setdefault((w, tr), {})
            if ours:
                sd["ours"] = ours["iops"]
                sd["mibs"] = ours["mibs"]
                sd["cpu"] = ours["srv_cpu_us"]
                sd["cs"] = ours["srv_cs"]

            # ours against each peer (information) and the best of them (target)
            for peer, plabel in PEERS + CEILINGS:
                r = ratio(ours, meds.get(peer))
                sd[peer] = r
                if r is not None:
                    tsum["ratios"][peer] = r
                    p("  ours/%-14s %6.2fx  (information: %s)" % (peer, r, plabel))
            present = [pe for pe, _ in PEERS if pe in meds and meds[pe]["iops"]]
            if ours is not None and present:
                best = max(present, key=lambda k: meds[k]["iops"])
                r = ours["iops"] / meds[best]["iops"]
                ok = r >= BEST_PEER
                sd["best"] = r
                tsum["ratios"]["best_peer"] = r
                what = "best peer" + (" (depth 1 stays ahead)" if w.endswith("qd1") else "")
                verdicts.append((w, tr, what, BEST_PEER, ok))
                p("  %-19s %6.2fx  target >= %.2fx  %s  [best is %s]" %
                  ("ours/best peer", r, BEST_PEER, "met" if ok else "NOT MET", best))
            else:
                p("  %-19s     n/a  (%s)" % ("ours/best peer", "ours has no result"
                                               if ours is None else "no peer result"))
                verdicts.append((w, tr, "best peer", BEST_PEER, None))

            # the long goal: 0.85x the slower of the disk and the NBD path
            if "null" in meds and "raw" in meds and ours is not None:
                which = min(("null", "raw"), key=lambda k: meds[k]["iops"])
                r = ours["iops"] / meds[which]["iops"]
                sd["min"] = r
                tsum["ratios"]["min(null,raw)"] = r
                goals.append((w, tr, r))
                p("  %-19s %6.2fx  goal >= %.2fx  %s  [min is %s]" %
                  ("ours/min(null,raw)", r, GOAL_MIN,
                   "reached" if r >= GOAL_MIN else "not yet", which))
            else:
                goals.append((w, tr, None))

            # CPU per request against the null plugin's
            if w == CPU_WORKLOAD:
                oc = ours["srv_cpu_us"] if ours else None
                nc = meds["null"]["srv_cpu_us"] if "null" in meds else None
                if oc is not None and nc:
                    r = oc / nc
                    ok = r <= CPU_VS_NULL
                    sd["cpu_x"] = r
                    tsum["ratios"]["cpu/null"] = r
                    verdicts.append((w, tr, "server CPU/request vs null", CPU_VS_NULL, ok))
                    p("  %-19s %6.2fx  target <= %.2fx  %s  (%.1f vs %.1f us/request)" %
                      ("cpu ours/null", r, CPU_VS_NULL, "met" if ok else "NOT MET", oc, nc))
                else:
                    verdicts.append((w, tr, "server CPU/request vs null", CPU_VS_NULL, None))
                    p("  %-19s     n/a" % "cpu ours/null")
                # The same ratio for every other row that serves data: the
                # servers that read the disk (the floor ours is measured
                # against) and the page-cache rows (no disk in the path).
                if nc:
                    xs = ["%s %.2fx" % (k, meds[k]["srv_cpu_us"] / nc)
                          for k in ("fcache", "file", "qsd", "cfq", "page", "pwarm", "fwarm")
                          if k in meds and meds[k].get("srv_cpu_us") is not None]
                    if xs:
                        tsum["cpu_x_rows"] = {x.split()[0]: float(x.split()[1][:-1]) for x in xs}
                        p("  %-19s %s" % ("cpu rows/null", ", ".join(xs)))
                # The kernel's disk path alone: fio's own CPU per request on
                # the raw row (io_uring on the image, no server), its sys
                # part the kernel's (submission, the doorbell, completion).
                # A server that reads the disk pays at least that on top of
                # what the null plugin pays: null + disk against 2 x null.
                rc = meds["raw"]["cli_cpu_us"] if "raw" in meds else None
                rs = meds["raw"]["cli_sys_us"] if "raw" in meds else None
                if rc is not None and rs is not None and nc:
                    tsum["disk_path"] = {"raw_fio_cpu_us": rc, "raw_fio_sys_us": rs,
                                         "null_plus_sys_x": (nc + rs) / nc}
                    p("  %-19s %6.1f us/request fio usr+sys on raw, %.1f of it sys (the kernel's);"
                      % ("disk path alone", rc, rs))
                    p("  %-19s %6.1f us = %.2fx null's %.1f (null + raw's sys; the target is %.1fx)"
                      % ("  null + disk", nc + rs, (nc + rs) / nc, nc, CPU_VS_NULL))

            # cfq against fifo, one client: the scheduler's cost, with a target.
            cfq_listed = any(name == "cfq" for name, _, _, _ in targets)
            r = ratio(meds.get("cfq"), meds.get("fifo"))
            if r is not None:
                sd["cfq"] = r
                tsum["ratios"]["cfq/fifo"] = r
                ok = r >= CFQ_VS_FIFO
                verdicts.append((w, tr, "cfq/fifo", CFQ_VS_FIFO, ok))
                p("  %-19s %6.2fx  target >= %.2fx  %s  (cfq at most %d%% below fifo, one client)" %
                  ("cfq/fifo", r, CFQ_VS_FIFO, "met" if ok else "NOT MET",
                   round((1 - CFQ_VS_FIFO) * 100)))
            elif cfq_listed:
                p("  %-19s     n/a  (no %s result)" %
                  ("cfq/fifo", "cfq" if "cfq" not in meds else "fifo"))
                verdicts.append((w, tr, "cfq/fifo", CFQ_VS_FIFO, None))
            for a, b, what in EXTRA:
                r = ratio(meds.get(a), meds.get(b))
                if r is not None:
                    tsum["ratios"]["%s/%s" % (a, b)] = r
                    p("  %-19s %6.2fx  (information: %s)" % ("%s/%s" % (a, b), r, what))

    p("")
    tenants_report(out, settings, p, summary)

    # Everything side by side: one line per workload and transport.
    def rx(v):
        return "-" if v is None else "%.2fx" % v
    p("")
    p("side by side: ours (fifo) median IOPS, then ours / each row (x = ratio of median IOPS);")
    p("  cpu, cs = ours' server CPU us and context switches per request; cpu/null on %s" %
      CPU_WORKLOAD)
    hdr = ("  %-18s %-4s %8s %7s %7s %7s %7s %7s %7s %7s %7s %6s %5s %8s" %
           ("workload", "tr", "IOPS", "fcache", "file", "qsd", "best", "null", "raw",
            "min", "cfq", "cpu", "cs", "cpu/null"))
    p(hdr)
    for w in workloads:
        for tr in transports:
            sd = side.get((w, tr), {})
            p("  %-18s %-4s %8s %7s %7s %7s %7s %7s %7s %7s %7s %6s %5s %8s" %
              (w, tr, fmt(sd.get("ours"), ".0f"), rx(sd.get("fcache")), rx(sd.get("file")),
               rx(sd.get("qsd")), rx(sd.get("best")), rx(sd.get("null")), rx(sd.get("raw")),
               rx(sd.get("min")), rx(sd.get("cfq")), fmt(sd.get("cpu"), ".1f"),
               fmt(sd.get("cs"), ".2f"), rx(sd.get("cpu_x"))))

    # cache=page against the file plugin's page cache, cold and warm.
    pairs = [("page", "fcache"), ("pwarm", "fwarm")]
    if any(a in m or b in m for m in allmeds.values() for a, b in pairs):
        p("")
        p("cache=page side by side: median IOPS, ratio, and server CPU us per request;")
        p("  page/fcache start cold (page cache dropped), pwarm/fwarm warm (image cached)")
        p("  %-18s %-4s %8s %8s %7s %8s %8s %7s %6s %6s %6s %6s" %
          ("workload", "tr", "page", "fcache", "ratio", "pwarm", "fwarm", "ratio",
           "cpu p", "cpu fc", "cpu pw", "cpu fw"))
        for w in workloads:
            for tr in transports:
                m = allmeds.get((w, tr), {})

                def g(row, k):
                    return m[row][k] if row in m else None
                vals = []
                for a, b in pairs:
                    ra = ratio(m.get(a), m.get(b))
                    vals += [fmt(g(a, "iops"), ".0f"), fmt(g(b, "iops"), ".0f"), rx(ra)]
                p("  %-18s %-4s %8s %8s %7s %8s %8s %7s %6s %6s %6s %6s" %
                  tuple([w, tr] + vals +
                        [fmt(g(k, "srv_cpu_us"), ".1f")
                         for k in ("page", "fcache", "pwarm", "fwarm")]))

    p("")
    p("targets (ours = fifo row; ratios of median IOPS):")
    p("  ours >= %.2fx the best of fcache, file and qsd on every workload and transport"
      " (at depth 1 too: it stays ahead);" % BEST_PEER)
    p("  server CPU per request on %s <= %.1fx the null plugin's;" % (CPU_WORKLOAD, CPU_VS_NULL))
    p("  cfq/fifo >= %.2fx on every workload (cfq at most %d%% below fifo's throughput, one client)"
      % (CFQ_VS_FIFO, round((1 - CFQ_VS_FIFO) * 100)))
    met = sum(1 for v in verdicts if v[4] is True)
    miss = [v for v in verdicts if v[4] is False]
    na = [v for v in verdicts if v[4] is None]
    p("  %d met, %d not met, %d not measured" % (met, len(miss), len(na)))
    for w, tr, what, thr, _ in miss:
        p("  NOT MET: %s over %s: %s (%s %.2fx)" %
          (w, tr, what, "<=" if what.startswith("server CPU") else ">=", thr))
    for w, tr, what, thr, _ in na:
        p("  not measured: %s over %s: %s" % (w, tr, what))
    reached = [g for g in goals if g[2] is not None and g[2] >= GOAL_MIN]
    known = [g for g in goals if g[2] is not None]
    p("goal: ours >= %.2fx min(null, raw): reached on %d of %d (workload, transport)%s" %
      (GOAL_MIN, len(reached), len(known),
       "; lowest %.2fx (%s over %s)" % (min(g[2] for g in known),
                                        *min(known, key=lambda g: g[2])[:2]) if known else ""))
    summary["verdicts"] = [{"workload": w, "transport": tr, "target": what,
                            "threshold": thr, "met": ok}
                           for w, tr, what, thr, ok in verdicts]
    summary["goal_min_null_raw"] = [{"workload": w, "transport": tr, "ratio": r}
                                    for w, tr, r in goals]

    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "table.txt"), "w") as f:
        f.write(text)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
