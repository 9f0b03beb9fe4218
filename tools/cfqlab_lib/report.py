"""The report's text: a scenario's table (per system and tenant, and
cfq against each peer), and the fairness matrix's."""

from .util import MiB, fmt


def table(rep):
    s = rep["scenario"]
    L = []
    L.append("scenario %s (%s): %gs, device %s, image %d MiB, %d round(s), shares of %s"
             % (s["name"], s["path"], s["duration_s"],
                ("emulate=" + s["emulate"] if s["emulate"] != "none"
                 else s.get("image_rbd") or "real disk"),
                s["image_size"] // MiB, s["rounds"], s["share_unit"]))
    if s["overrides"]:
        L.append("overrides: " + " ".join(s["overrides"]))
    L.append("load average at the end: %s" % " ".join(s["loadavg"]))
    L.append("")
    # The system column as wide as its longest name (variants such as
    # cfq:group_idle=0,target_latency=60ms must stay apart).
    sw = max([16] + [len(e["name"]) for e in rep["systems"]])
    hdr = ("%-*s %-14s %6s %5s %7s %6s %9s %8s %8s %8s %8s %8s %7s"
           % (sw, "system", "tenant", "weight", "cls", "share", "want", "share/w",
              "IOPS", "MiB/s", "p50 ms", "p99 ms", "p99.9", "max ms"))
    solo = bool(rep.get("solo"))
    if solo:
        hdr += " %6s" % "slow"
    L.append(hdr)
    gw = {g["name"]: g for g in s["groups"]}
    for e in rep["systems"]:
        if e["status"] != "ok":
            L.append("%-*s %s: %s" % (sw, e["name"], e["status"].upper(), e.get("why", "")))
            continue
        for t in s["tenants"]:
            x = e["tenants"].get(t["name"])
            if not x:
                continue
            g = gw[t["group"]]
            lat = x["lat_ms"]
            row = ("%-*s %-14s %6d %5s %6s%% %5s%% %9s %8s %8s %8s %8s %8s %7s"
                   % (sw, e["name"], t["name"][:14], g["weight"], g["class"],
                      fmt(None if x["share"] is None else 100 * x["share"]),
                      fmt(None if x["expected"] is None else 100 * x["expected"]),
                      fmt(x["norm"], 3), fmt(x["iops"]), fmt(x["mibs"], 2),
                      fmt(lat["p50"], 2), fmt(lat["p99"], 2), fmt(lat["p999"], 2),
                      fmt(lat["max"], 1)))
            if solo:
                row += " %6s" % fmt(x.get("slowdown"), 2)
            L.append(row)
            if x.get("workload", "fio") != "fio":
                m = x.get("metric")
                L.append("%-*s   %s runs %s%s; latency: %s, p90 %s ms" % (
                    sw, "", t["name"], x["workload"],
                    (": %s %s" % (fmt(m["value"], 2), m["name"])) if m else "",
                    {"fsync-tester": "of write + fsync", "dd": "of each write",
                     "mmap": "of each fault's read", "fs_mark": "none"}.get(x["workload"], ""),
                    fmt(x["lat_ms"].get("p90"), 2)))
            if t.get("number_ios"):
                L.append("%-*s   %s" % (sw, "", done_line(t, x, rep.get("solo") or {})))
        wc = "; ".join("%s stops at %ss: %s" % (
            w["tenant"], fmt(w["stop_s"]),
            ("absorbed in %ss" % fmt(w["absorb_s"]) if w["absorb_s"] is not None
             else "not absorbed") + (" (others then at %s%% of the total before, %ss of capacity lost)"
                                     % (fmt(100 * w["after_ratio"]), fmt(w.get("lost_s"), 2))
                                     if w.get("after_ratio") is not None else ""))
            for w in e.get("work_conservation") or [])
        for q in e.get("qos") or []:
            div = 1.0 if q["unit"] == "ios" else MiB
            u = "/s" if q["unit"] == "ios" else " MiB/s"
            if q["kind"] == "cap":
                how = "%d/%d windows within 5%% (%s over)" % (q["ok"], q["windows"], q["over"])
            else:
                how = "%d/%d windows at >= 98%%" % (q["ok"], q["windows"])
            L.append("%-*s  qos %s %s %s%s: median %s, min %s, max %s; %s: %s"
                     % (sw, "", q["group"], q["key"], fmt(q["limit"] / div, 2), u,
                        fmt(None if q["median"] is None else q["median"] / div, 2),
                        fmt(None if q["min"] is None else q["min"] / div, 2),
                        fmt(None if q["max"] is None else q["max"] / div, 2), how,
                        "met" if q["met"] else "NOT MET"))
        for t in s["tenants"]:
            lw = (e["tenants"].get(t["name"]) or {}).get("lat_windows")
            if lw:
                L.append("%-*s  %s p%g per 1 s window <= %g ms: %d/%d windows (%s%%; rounds %s),"
                         " window median %s ms"
                         % (sw, "", t["name"], lw["pct"], lw["target_ms"], lw["met"],
                            lw["judged"], fmt(lw["met_pct"]),
                            " ".join(fmt(x) for x in lw["met_pct_rounds"]),
                            fmt(lw["median_ms"], 2)))
        L.append("%-*s  => Jain %s, min/max %s, total %s IOPS %s MiB/s%s"
                 % (sw, "", fmt(e["jain"], 4), fmt(e["minmax"], 3), fmt(e["total_iops"]),
                    fmt(e["total_mibs"], 2), (", " + wc) if wc else ""))
    cmp = peer_comparison(rep)
    if cmp:
        L.append("")
        L += cmp
    L.append("")
    for e in rep["systems"]:
        lim = ""
        if e.get("limits_bps"):
            lim = "; limits " + ", ".join("%s %s MiB/s" % (g, fmt(v / MiB, 2))
                                          for g, v in sorted(e["limits_bps"].items()))
        L.append("%-*s %s%s" % (sw, e["name"], e["label"], lim))
    return "\n".join(L) + "\n"


def done_line(t, x, solo):
    """A tenant with a fixed amount of work: when it was done, from its
    start to its last request's completion (median over rounds), and
    against its time alone."""
    s = "%s: %d requests a connection, " % (t["name"], t["number_ios"])
    if x.get("done_s") is None:
        s += "not done by the end"
    else:
        s += "done in %s s" % fmt(x["done_s"], 3)
        alone = (solo.get(t["name"]) or {}).get("done_s")
        if alone:
            s += ", %sx its %s s alone" % (fmt(x["done_s"] / alone, 2), fmt(alone, 3))
    rs = x.get("done_s_rounds") or []
    if len(rs) > 1:
        s += " (rounds: %s)" % ", ".join("-" if v is None else fmt(v, 3) for v in rs)
    return s


def peer_comparison(rep):
    """The fairness lab's test of ours against each peer that ran: Jain >= 0.99, the
    better worst-tenant p99, at least the same total work."""
    sy = {e["name"]: e for e in rep["systems"] if e["status"] == "ok"}
    ours = sy.get("cfq")
    out = []
    if not ours:
        return out
    for e in rep["systems"]:
        if e["status"] != "ok" or e["kind"] not in ("bfq", "qsd", "rate"):
            continue
        def worst(x):
            v = [t["lat_ms"]["p99"] for t in x["tenants"].values()
                 if t["lat_ms"].get("p99") is not None]
            return max(v) if v else None
        wo, wp = worst(ours), worst(e)
        j = ours.get("jain")
        checks = [
            ("Jain %s >= 0.99" % fmt(j, 4), j is not None and j >= 0.99),
            ("worst p99 %s ms vs %s" % (fmt(wo, 2), fmt(wp, 2)),
             wo is not None and wp is not None and wo < wp),
            ("total %s vs %s MiB/s" % (fmt(ours["total_mibs"], 2), fmt(e["total_mibs"], 2)),
             (ours["total_mibs"] or 0) >= (e["total_mibs"] or 0))]
        out.append("cfq against %s (peer Jain %s): %s" % (
            e["name"], fmt(e.get("jain"), 4),
            "; ".join("%s %s" % (t, "met" if ok else "NOT MET") for t, ok in checks)))
    return out


def _fr2(fr, names):
    if not fr or any(fr.get(n) is None for n in names):
        return "-"
    return "/".join("%.2f" % fr[n] for n in names)


def matrix_table(rep):
    m = rep["meta"]
    devs = m["devices"]
    by = {(c["pair"], c["weights"], c["device"]): c for c in rep["cells"]}
    L = ["Fairness matrix: each tenant's bytes/s with the other running, over its "
         "bytes/s alone (first/second tenant; medians of %d round(s) of %g s runs; "
         "solo runs alone on our server under fifo, iocost's on the machine)."
         % (m["rounds"], m["seconds"]),
         "Targets: equal weights, each >= %.2f, within %.1fx of each other, neither "
         "below fifo's smaller; A:B, the ratio within %d%% of A/B."
         % (m["targets"]["min_fraction"], m["targets"]["max_spread"],
            round(100 * m["targets"]["ratio_tolerance"])), "",
         "| pair | weights | " + " | ".join(devs) + " |",
         "|---|---|" + "---|" * len(devs)]
    for p in m["pairs"]:
        for w in m["weights"]:
            row = []
            for d in devs:
                c = by.get((p, w, d))
                if not c or not c["systems"]:
                    row.append("-")
                    continue
                parts = []
                for sn, x in c["systems"].items():
                    parts.append("%s %s" % ("ours" if sn == "cfq" else sn,
                                            _fr2(x["fraction"], c["tenants"])))
                flag = {True: "**pass**", False: "**FAIL**", None: "-"}[c["pass"]]
                row.append(", ".join(parts) + " " + flag +
                           ("" if c["pass"] is None or c["verdict"] == "pass"
                            else " (%s)" % c["verdict"]))
            t = by[(p, w, devs[0])]["tenants"] if (p, w, devs[0]) in by else ["?", "?"]
            row0 = "%s (%s/%s)" % (p, t[0], t[1])
            L.append("| %s | %s | %s |" % (row0, w, " | ".join(row)))
    sk = [(d, s, why) for d in devs for s, why in rep["skipped"].get(d, {}).items()]
    if sk:
        L.append("")
        L.append("Skipped:")
        done = {}
        for d, s, why in sk:
            done.setdefault((s, why), []).append(d)
        for (s, why), ds in done.items():
            L.append("- %s on %s: %s" % (s, ", ".join(ds), why))
    errs = [(c, sn, e) for c in rep["cells"] for sn, x in c["systems"].items()
            for e in x["errors"]]
    if errs:
        L.append("")
        L.append("Failed runs:")
        for c, sn, e in errs:
            L.append("- %s %s %s %s: %s" % (c["pair"], c["weights"], c["device"], sn, e))
    L.append("")
    L.append("%d s (estimate %d s), load average at the end %s, git %s, %s"
             % (m["elapsed_s"], m["estimate_s"], " ".join(m["loadavg_end"]), m["git"], m["date"]))
    return "\n".join(L) + "\n"
