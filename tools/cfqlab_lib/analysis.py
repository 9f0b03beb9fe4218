"""Analysis: a run's numbers per tenant (fio's or cfqsim's), the
one-second series, shares against the weights on steady bins, work
conservation, the caps' and reservations' windows and verdicts, medians
over rounds; the fairness matrix's fractions of solo and its verdict."""

import math
import statistics

from .common import jain, median
from .scenario import FIO_WORKLOADS
from .util import FIO_DDIR, MiB, NS


def merge_bins(jobs, ddirs=("read", "write")):
    """fio json+ clat histograms of JOBS merged: {ns: count}."""
    out = {}
    for job in jobs:
        for dd in ddirs:
            b = job.get(dd, {}).get("clat_ns", {}).get("bins") or {}
            for k, v in b.items():
                k = int(k)
                out[k] = out.get(k, 0) + v
    return out


def pct_from_bins(bins, ps):
    if not bins:
        return [None] * len(ps)
    ks = sorted(bins)
    total = sum(bins.values())
    out = []
    for p in ps:
        want = p / 100.0 * total
        c = 0
        for k in ks:
            c += bins[k]
            if c >= want - 1e-9:
                out.append(k / 1e6)
                break
        else:
            out.append(ks[-1] / 1e6)
    return out


def waterfill(cap, wts, demands):
    """Split CAP among keys of WTS by weight, nobody above its demand."""
    alloc = {}
    left = dict(wts)
    rem = cap
    while left:
        tw = sum(left.values())
        if tw <= 0:
            for k in left:
                alloc[k] = 0.0
            break
        capped = [k for k in left
                  if demands.get(k) is not None and demands[k] < rem * left[k] / tw]
        if not capped:
            for k in left:
                alloc[k] = rem * left[k] / tw
            break
        for k in capped:
            alloc[k] = demands[k]
            rem -= demands[k]
            del left[k]
    return alloc


READ_RW = ("read", "randread")
WRITE_RW = ("write", "randwrite", "trim", "randtrim")


def qos_limits(scn, g, t, unit):
    """(floor, ceiling) per second, in UNIT (bytes or ios), that group G's
    reservations and caps give tenant T if it were the group's only one
    (None: none).  A cap on one direction bounds a tenant doing only that
    direction, and one doing both by its mix (rwmixread)."""
    def conv(q, v):
        if q["unit"] == "ios":
            return v * t.bs if unit == "bytes" else v
        return v if unit == "bytes" else v / t.bs
    if t.rw in READ_RW:
        rfrac = 1.0
    elif t.rw in WRITE_RW:
        rfrac = 0.0
    else:
        rfrac = t.d.get("rwmixread", 50) / 100.0
    hi = None
    for q in scn.qos_keys:
        v = g.get(q["name"])
        if not v or q["kind"] != "cap":
            continue
        frac = {"read": rfrac, "write": 1 - rfrac}.get(q["dir"], 1.0)
        if frac <= 0:
            continue
        c = conv(q, v) / frac
        hi = c if hi is None else min(hi, c)
    lo = None
    for q in scn.qos_keys:
        if q["kind"] == "reservation" and g.get(q["name"]):
            lo = max(lo or 0.0, conv(q, g[q["name"]]))
    return lo, hi


def expected_shares(scn, active, weights, cap, demands, unit="bytes"):
    """Expected shares of the ACTIVE tenants: group by weight, a group's
    part split over its active tenants by connections, water-filled.  With
    caps and reservations (core/qos.c's rules): the reservations first,
    then the weights share what is left, nobody above its cap; a group's
    limits are split over its active tenants by connections."""
    by_group = {}
    for t in active:
        by_group.setdefault(t.group, []).append(t)
    gw = sum(weights[g] for g in by_group)
    wts = {}
    floors = {}
    dem = dict(demands)
    for g, ts in by_group.items():
        c = sum(t.conns for t in ts)
        for t in ts:
            f = t.conns / c
            wts[t.name] = weights[g] / gw * f
            lo, hi = qos_limits(scn, scn.groups[g], t, unit)
            if hi is not None:
                hi *= f
                dem[t.name] = hi if dem.get(t.name) is None else min(dem[t.name], hi)
            if lo:
                lo *= f
                floors[t.name] = lo if dem.get(t.name) is None else min(lo, dem[t.name])
    if cap <= 0:
        alloc = waterfill(1.0, wts, {})
    else:
        fl = sum(floors.values())
        if fl >= cap:
            # More reserved than the device gave: every reservation falls
            # behind in proportion (QOS_RES_DEBT).
            alloc = {k: cap * floors.get(k, 0.0) / fl for k in wts}
        else:
            rest = waterfill(cap - fl, wts,
                             {k: v - floors.get(k, 0.0) for k, v in dem.items()
                              if v is not None and k in wts})
            alloc = {k: floors.get(k, 0.0) + rest.get(k, 0.0) for k in wts}
    tot = sum(alloc.values()) or 1.0
    return {k: v / tot for k, v in alloc.items()}


def qos_windows(scn, series, tenants, applied):
    """Each cap and reservation of a group with tenants in SERIES, held
    against the group's rate in each one-second window where its tenants
    are all running (or all stopped, but one running), after the first such
    window of a run of them and before a "qos GROUP ..." control command
    (the caps' and reservations' measure): [{group, key, kind, limit, unit, rates}]."""
    out = []
    for g in scn.groups.values():
        keys = [q for q in scn.qos_keys if g.get(q["name"])]
        ts = [t for t in tenants if t.group == g["name"] and t.name in series]
        if not keys or not ts:
            continue
        nb = max(len(series[t.name]["bytes"]) for t in ts)
        stop_at = min([at for at, c in applied
                       if c.split()[:2] == ["qos", g["name"]]] or [nb])
        bins = []
        prev = False
        for i in range(nb):
            full = [t for t in ts if series[t.name]["start"] <= i + 1e-6
                    and series[t.name]["end"] >= i + 1 - 1e-6
                    and series[t.name]["cov"][i] > 0.98]
            out_ = [t for t in ts if series[t.name]["end"] <= i + 0.02
                    or series[t.name]["start"] >= i + 1 - 0.02]
            ok = full and len(full) + len(out_) == len(ts) and i + 1 <= stop_at
            if ok and prev:
                bins.append(i)
            prev = bool(ok)
        for q in keys:
            k, unit, dd = q["name"], q["unit"], q["dir"]
            rates = []
            for i in bins:
                v = 0.0
                for t in ts:
                    se = series[t.name]
                    if dd is None:
                        v += se[unit][i]
                    elif se.get("dir"):
                        v += se["dir"][dd][0 if unit == "bytes" else 1][i]
                    elif (dd == "read" and t.rw in READ_RW) or (dd == "write" and t.rw in WRITE_RW):
                        v += se[unit][i]
                    elif (dd == "read" and t.rw in WRITE_RW) or (dd == "write" and t.rw in READ_RW):
                        pass
                    else:
                        v = None        # a mixed tenant, no direction: unknown
                        break
                if v is None:
                    rates = None
                    break
                rates.append(v)
            if rates is None:
                continue
            out.append({"group": g["name"], "key": k,
                        "kind": q["kind"],
                        "limit": g[k], "unit": unit, "rates": rates})
    return out


def qos_summary(entries):
    """The caps' and reservations' targets on the windows of one or more rounds' qos_windows
    (the same group and key): a cap within 5% of its limit in every window
    (at most 5% over it, and at most 5% under it unless the group asks for
    less), a reservation at 98% or more of it in at least 98% of windows."""
    e = entries[0]
    rates = [r for x in entries for r in x["rates"]]
    lim = e["limit"]
    if e["kind"] == "cap":
        ok = sum(1 for r in rates if abs(r - lim) <= 0.05 * lim)
        over = sum(1 for r in rates if r > 1.05 * lim)
        met = bool(rates) and ok == len(rates)
    else:
        ok = sum(1 for r in rates if r >= 0.98 * lim)
        over = None
        met = bool(rates) and ok >= 0.98 * len(rates)
    return {"group": e["group"], "key": e["key"], "kind": e["kind"], "limit": lim,
            "unit": e["unit"], "windows": len(rates), "ok": ok, "over": over,
            "median": median(rates) if rates else None,
            "min": min(rates) if rates else None, "max": max(rates) if rates else None,
            "met": met}


def resample(samples, t0_ms, nbins, ddir_sum=True):
    """A special workload's per-second samples (t_ms, value per s, ddir)
    onto 1 s bins from T0_MS: the amount per bin, and how much of each bin
    the samples cover.  A sample covers the time since the previous one of
    its direction (1 s for the first), so a late sample leaves no gap."""
    out = [0.0] * nbins
    cov = {}
    prev = {}
    for t, v, dd in samples:
        a = (prev.get(dd, t - 1000) - t0_ms) / 1000.0
        b = (t - t0_ms) / 1000.0
        prev[dd] = t
        c = cov.setdefault(dd, [0.0] * nbins)
        i = max(0, int(math.floor(a)))
        while i < nbins and i < b:
            lo, hi = max(a, i), min(b, i + 1)
            if hi > lo:
                out[i] += v * (hi - lo)
                c[i] += hi - lo
            i += 1
    if not cov:
        return out, [0.0] * nbins
    return out, [max(c[i] for c in cov.values()) for i in range(nbins)]


def io_bins(logs, windows, t0, nbins):
    """Per-request logs of a tenant's connections (with their windows, wall
    seconds) onto 1 s bins from T0: bytes and requests completed in each
    bin, the same per direction ({"read": (bytes, ios), "write": ...}),
    and how much of each bin the connections' windows cover (their
    mean)."""
    byts = [0.0] * nbins
    ios = [0.0] * nbins
    cov = [0.0] * nbins
    per = {dd: ([0.0] * nbins, [0.0] * nbins) for dd in ("read", "write")}
    t0_ms = t0 * 1000.0
    for log in logs:
        for t, dd, n in log:
            i = min(nbins - 1, max(0, int((t - t0_ms) // 1000)))
            byts[i] += n
            ios[i] += 1
            d = per.get(FIO_DDIR.get(dd))
            if d is not None:
                d[0][i] += n
                d[1][i] += 1
    for st, en in windows:
        a, b = st - t0, en - t0
        for i in range(nbins):
            lo, hi = max(a, i), min(b, i + 1)
            if hi > lo:
                cov[i] += (hi - lo) / len(windows)
    return byts, ios, cov, per


def analyse(lab, cr, tenants, duration, solo=None):
    """Numbers of one run of one system: per tenant totals and latency, the
    one-second series, shares on steady bins, work conservation."""
    if getattr(cr, "sim", None) is not None:
        res, series, applied = sim_numbers(lab, cr, tenants, duration)
    else:
        res, series, applied = fio_numbers(lab, cr, tenants)
    if series:
        shares_and_conservation(lab, res, series, applied, tenants, solo)
    finish_system(res, tenants)
    return res


def fio_numbers(lab, cr, tenants):
    """From fio: totals and latency per tenant (its connections' jobs),
    and its bytes and requests per second on a grid common to all."""
    res = {"tenants": {}, "series": None, "work_conservation": []}
    for t in tenants:
        if t.workload not in FIO_WORKLOADS:
            continue
        jobs = cr.jobs.get(t.name, [])
        rt = max((j["job_runtime"] for j in jobs), default=0) / 1000.0
        ios = sum(j["read"]["total_ios"] + j["write"]["total_ios"] for j in jobs)
        byts = sum(j["read"]["io_bytes"] + j["write"]["io_bytes"] for j in jobs)
        bins = merge_bins(jobs)
        mx = max((j[d]["clat_ns"]["max"] for j in jobs for d in ("read", "write")
                  if j[d]["total_ios"]), default=0) / 1e6
        # fio's bins hold a bucket's middle value: never above the max.
        p50, p90, p99, p999 = [None if v is None else min(v, mx)
                               for v in pct_from_bins(bins, (50, 90, 99, 99.9))]
        n = sum(bins.values())
        mean = (sum(k * v for k, v in bins.items()) / n / 1e6) if n else None
        flushes = sum(j.get("sync", {}).get("total_ios", 0) for j in jobs)
        conn_iops = [(j["read"]["total_ios"] + j["write"]["total_ios"]) /
                     max(1e-9, j["job_runtime"] / 1000.0) for j in jobs]
        # A fixed amount of work: fio's job ran from its start to its
        # number_ios-th completion; done when every connection got there.
        n = t.d.get("number_ios") or 0
        done = None
        if n and jobs and t.workload == "fio" and all(
                j["read"]["total_ios"] + j["write"]["total_ios"] >= n for j in jobs):
            done = max(j["job_runtime"] for j in jobs) / 1000.0
        res["tenants"][t.name] = {
            "jain_connections": jain(conn_iops) if len(conn_iops) > 1 else None,
            "bytes": byts, "ios": ios, "runtime_s": rt,
            "iops": ios / rt if rt else 0.0, "mibs": byts / rt / MiB if rt else 0.0,
            "lat_ms": {"p50": p50, "p90": p90, "p99": p99, "p999": p999, "max": mx,
                       "mean": mean},
            "flushes": flushes, "bins": bins, "workload": t.workload,
            "done_s": done,
        }
    for t in tenants:
        x = getattr(cr, "special", {}).get(t.name)
        if x is not None:
            res["tenants"][t.name] = x
    starts = [w[0] for ws in cr.windows.values() for w in ws]
    ends = [w[1] for ws in cr.windows.values() for w in ws]
    if not starts:
        return res, None, []
    t0 = min(starts)
    nb = int(math.ceil(max(ends) - t0))
    t0_ms = t0 * 1000.0
    series = {}
    for t in tenants:
        if t.name in cr.ios:
            tot, tot_io, cov, per = io_bins(cr.ios[t.name], cr.windows[t.name], t0, nb)
            ws = cr.windows[t.name]
            st, en = min(w[0] for w in ws), max(w[1] for w in ws)
            series[t.name] = {"bytes": tot, "ios": tot_io, "cov": cov, "dir": per,
                              "start": st - t0, "end": en - t0}
            continue
        if t.name not in cr.bw:
            continue
        tot = [0.0] * nb
        cov = [0.0] * nb
        tot_io = [0.0] * nb
        for samples in cr.bw[t.name]:
            o, c = resample(samples, t0_ms, nb)
            for i in range(nb):
                tot[i] += o[i] * 1024.0
                cov[i] += c[i] / len(cr.bw[t.name])
        for samples in cr.iops.get(t.name, []):
            o, _ = resample(samples, t0_ms, nb)
            for i in range(nb):
                tot_io[i] += o[i]
        ws = cr.windows[t.name]
        st, en = min(w[0] for w in ws), max(w[1] for w in ws)
        series[t.name] = {"bytes": tot, "ios": tot_io, "cov": cov,
                          "start": st - t0, "end": en - t0}
    for t in tenants:
        lt = (getattr(lab, "lat_targets", None) or {}).get(t.name)
        if lt and t.name in res["tenants"] and t.name in series:
            res["tenants"][t.name]["lat_windows"] = lat_windows(
                getattr(cr, "clat", {}).get(t.name, []), series[t.name]["cov"],
                t0, nb, lt[0], lt[1])
    applied = sorted((w - t0, c) for w, c, a in cr.events if a.strip() == "ok")
    return res, series, applied


# A window with fewer of the tenant's completions gives no verdict (the
# server's rule for a group's latency target).
LAT_WINDOW_MIN = 10


def lat_windows(logs, cov, t0, nbins, target_ms, pct):
    """A latency target judged per 1 s bin from T0 (the series' grid):
    the PCT percentile of the completion latency of the requests completed
    in each bin that the tenant's connections cover whole (COV), from fio's
    per-request clat logs (LOGS: [(t_ms, ns)] per connection).  A bin with
    fewer than LAT_WINDOW_MIN completions is not judged."""
    per = [[] for _ in range(nbins)]
    t0_ms = t0 * 1000.0
    for log in logs:
        for t, ns in log:
            i = int((t - t0_ms) // 1000)
            if 0 <= i < nbins:
                per[i].append(ns)
    p_ms = []
    for i, v in enumerate(per):
        if cov[i] < 0.98 or len(v) < LAT_WINDOW_MIN:
            p_ms.append(None)
            continue
        v.sort()
        k = min(len(v) - 1, max(0, int(math.ceil(pct / 100.0 * len(v))) - 1))
        p_ms.append(v[k] / 1e6)
    judged = [x for x in p_ms if x is not None]
    met = sum(1 for x in judged if x <= target_ms)
    return {"target_ms": target_ms, "pct": pct, "p_ms": p_ms, "judged": len(judged),
            "met": met, "met_pct": 100.0 * met / len(judged) if judged else None,
            "median_ms": median(judged) if judged else None}


def sim_numbers(lab, cr, tenants, duration):
    """From cfqsim's JSON: totals, latency and the per-second series; the
    windows and event times are exact on the virtual clock."""
    scn = lab.scn
    res = {"tenants": {}, "series": None, "work_conservation": []}
    by = {x["name"]: x for x in cr.sim["tenants"]}
    series = {}
    for t in tenants:
        x = by.get(t.name)
        if x is None:
            continue
        st, en = t.window(duration)
        if x.get("done_s") is not None:
            en = st + x["done_s"]      # its work was done: it stopped
        lat = x.get("lat_us", {})
        res["tenants"][t.name] = {
            "bytes": x["bytes"], "ios": x["ios"], "iops": x["iops"], "mibs": x["mib_s"],
            "runtime_s": en - st,
            "lat_ms": {k: _ms(lat.get(k)) for k in LAT_KEYS},
            "flushes": x.get("flushes", 0), "bins": None,
            "done_s": x.get("done_s"),
            "jain_connections": x.get("jain_connections") if t.conns > 1 else None,
            "cdf": [[v / 1000.0, q] for q, v in x.get("lat_cdf_us", [])] or None}
        if "series_bytes" in x:
            nb = len(x["series_bytes"])
            cov = [max(0.0, min(en, i + 1) - max(st, i)) for i in range(nb)]
            series[t.name] = {"bytes": [float(v) for v in x["series_bytes"]],
                              "ios": [float(v) for v in x["series_ios"]],
                              "cov": cov, "start": st, "end": en}
    applied = [(e["at_ns"] / NS, e["command"]) for e in scn.events
               if e["at_ns"] / NS < duration]
    return res, series or None, applied


def shares_and_conservation(lab, res, series, applied, tenants, solo):
    """Shares against the weights on steady one-second bins, and how long
    the others take to absorb a stopping tenant's share."""
    scn = lab.scn
    nb = max(len(s["bytes"]) for s in series.values())
    unit = "ios" if lab.args.share_unit == "ios" else "bytes"
    demands = {}
    for t in tenants:
        d = t.demand()
        if unit == "ios" and d is not None:
            d = d / t.bs
        if solo and t.name in solo:
            s = solo[t.name]["iops"] if unit == "ios" else solo[t.name]["mibs"] * MiB
            d = s if d is None else min(d, s)
        if d is not None:
            demands[t.name] = d
    steady = []
    exp_series = {k: [None] * nb for k in series}
    meas_series = {k: [None] * nb for k in series}
    total = [sum(series[k][unit][i] for k in series if i < len(series[k][unit]))
             for i in range(nb)]
    for i in range(nb):
        lo, hi = i, i + 1
        active, ok = [], True
        for t in tenants:
            s = series.get(t.name)
            if s is None:
                continue
            if s["start"] <= lo + 1e-6 and s["end"] >= hi - 1e-6 and s["cov"][i] > 0.98:
                active.append(t)
            elif s["end"] <= lo + 0.02 or s["start"] >= hi - 0.02:
                pass
            else:
                ok = False
        if any(lo - 0.05 < at < hi for at, _ in applied):
            ok = False
        if not ok or not active or total[i] <= 0:
            continue
        w = scn.weights_at(lo, applied)
        e = expected_shares(scn, active, w, total[i], demands, unit)
        steady.append((i, e))
        for t in active:
            exp_series[t.name][i] = e[t.name]
            meas_series[t.name][i] = series[t.name][unit][i] / total[i]
    for t in tenants:
        r = res["tenants"].get(t.name)
        if r is None:
            continue
        num = den = ex = 0.0
        for i, e in steady:
            if t.name in e:
                num += series[t.name][unit][i]
                den += total[i]
                ex += e[t.name] * total[i]
        r["share"] = num / den if den else None
        r["expected"] = ex / den if den else None
        r["norm"] = (num / ex) if ex else None
        r["steady_s"] = sum(1 for i, e in steady if t.name in e)
    # Work conservation: a tenant stops before the end while others go on.
    # Before: the total in up to 3 full bins before the stop.  Absorbed:
    # the end of the first bin, from the one holding the stop, whose total
    # is back to 90% of that.  Lost: capacity not used over the bins after
    # the stop, in seconds of the before level.
    wc = []
    run_end = max(s["end"] for s in series.values())
    for t in tenants:
        s = series.get(t.name)
        if s is None or s["end"] > run_end - 1.5:
            continue
        ts = s["end"]
        others = [k for k, o in series.items()
                  if k != t.name and o["start"] < ts - 1 and o["end"] > ts + 2]
        if not others:
            continue
        i_stop = int(math.floor(ts))
        before = [total[i] for i in range(max(0, i_stop - 3), i_stop)
                  if all(series[k]["cov"][i] > 0.98 for k in others + [t.name])]
        if not before:
            continue
        lvl = statistics.mean(before)
        absorb, after, lost = None, [], 0.0
        for i in range(i_stop, nb):
            if not all(series[k]["start"] <= i + 1e-6 and series[k]["end"] >= i + 1 - 1e-6
                       for k in others):
                break
            v = total[i]
            if i > i_stop:
                after.append(sum(series[k][unit][i] for k in others) / lvl if lvl else 0)
                lost += max(0.0, lvl - v) / lvl if lvl else 0
            if absorb is None and lvl and v >= 0.9 * lvl:
                absorb = i + 1 - ts
        wc.append({"tenant": t.name, "stop_s": round(ts, 2),
                   "absorb_s": round(absorb, 2) if absorb is not None else None,
                   "after_ratio": round(statistics.mean(after), 3) if after else None,
                   "lost_s": round(lost, 2)})
    res["work_conservation"] = wc
    res["qos"] = qos_windows(scn, series, tenants, applied)
    res["series"] = {"t": list(range(nb)), "unit": unit,
                     "measured": meas_series, "expected": exp_series,
                     "total": total, "events": applied}


def _ms(us):
    return None if us is None else us / 1000.0


def finish_system(res, tenants):
    ts = res["tenants"]
    norms = [ts[t.name]["norm"] for t in tenants if t.name in ts and ts[t.name].get("norm")]
    res["jain"] = jain(norms)
    res["minmax"] = (min(norms) / max(norms)) if norms and max(norms) > 0 else None
    res["total_iops"] = sum(ts[k]["ios"] for k in ts) / max(
        (ts[k]["runtime_s"] for k in ts), default=1) if ts else None
    res["total_mibs"] = sum(ts[k]["bytes"] for k in ts) / MiB / max(
        (ts[k]["runtime_s"] for k in ts), default=1) if ts else None
    res["total_bytes"] = sum(ts[k]["bytes"] for k in ts)
    res["total_ios"] = sum(ts[k]["ios"] for k in ts)


TENANT_KEYS = ["share", "expected", "norm", "iops", "mibs"]
LAT_KEYS = ["p50", "p90", "p99", "p999", "max", "mean"]


def combine_rounds(rounds, tenants):
    """Medians over rounds of every number."""
    if not rounds:
        return None
    out = {"tenants": {}, "rounds": len(rounds)}
    for t in tenants:
        rs = [r["tenants"][t.name] for r in rounds if t.name in r["tenants"]]
        if not rs:
            continue
        o = {k: median([r.get(k) for r in rs]) for k in TENANT_KEYS + ["bytes", "ios"]}
        o["lat_ms"] = {k: median([r["lat_ms"].get(k) for r in rs]) for k in LAT_KEYS}
        o["flushes"] = median([r.get("flushes") for r in rs])
        if t.d.get("number_ios"):
            # Not done in a round (None) counts as the slowest.
            done = [r.get("done_s") for r in rs]
            o["done_s_rounds"] = done
            o["done_s"] = (statistics.median([math.inf if v is None else v for v in done])
                           if done else None)
            if o["done_s"] == math.inf:
                o["done_s"] = None
        o["jain_connections"] = median([r.get("jain_connections") for r in rs])
        o["workload"] = rs[0].get("workload", "fio")
        if rs[0].get("metric"):
            o["metric"] = {"name": rs[0]["metric"]["name"],
                           "value": median([(r.get("metric") or {}).get("value") for r in rs])}
        bins = {}
        for r in rs:
            for k, v in (r.get("bins") or {}).items():
                bins[k] = bins.get(k, 0) + v
        o["bins"] = bins or None
        o["cdf"] = rs[0].get("cdf")
        lw = [r["lat_windows"] for r in rs if r.get("lat_windows")]
        if lw:
            # The windows of every round pooled; each round's fraction and
            # median as well.
            judged = sum(x["judged"] for x in lw)
            met = sum(x["met"] for x in lw)
            o["lat_windows"] = {
                "target_ms": lw[0]["target_ms"], "pct": lw[0]["pct"],
                "judged": judged, "met": met,
                "met_pct": 100.0 * met / judged if judged else None,
                "met_pct_rounds": [x["met_pct"] for x in lw],
                "median_ms": median([x["median_ms"] for x in lw]),
                "p_ms": lw[0]["p_ms"]}
        out["tenants"][t.name] = o
    for k in ("jain", "minmax", "total_iops", "total_mibs"):
        out[k] = median([r.get(k) for r in rounds])
    out["work_conservation"] = []
    wcs = [r.get("work_conservation") or [] for r in rounds]
    for i, w in enumerate(wcs[0] if wcs else []):
        same = [x[i] for x in wcs if len(x) > i and x[i]["tenant"] == w["tenant"]]
        absorbed = [x["absorb_s"] for x in same]
        out["work_conservation"].append({
            "tenant": w["tenant"], "stop_s": w["stop_s"],
            "absorb_s": median(absorbed) if None not in absorbed else None,
            "absorb_s_rounds": absorbed,
            "lost_s": median([x.get("lost_s") for x in same]),
            "after_ratio": median([x["after_ratio"] for x in same])})
    out["series"] = rounds[0].get("series")
    qs = {}
    for r in rounds:
        for q in r.get("qos") or []:
            qs.setdefault((q["group"], q["key"]), []).append(q)
    out["qos"] = [qos_summary(v) for v in qs.values()]
    return out


def strip_round(a):
    b = dict(a)
    b.pop("series", None)
    b["tenants"] = {k: {kk: vv for kk, vv in v.items() if kk != "bins"}
                    for k, v in a["tenants"].items()}
    return b


def server_summary(st):
    """Per export and group: bytes, requests and latency from `stats`."""
    def one(e):
        b = e.get("bytes", {})
        q = e.get("requests", {})
        return {"bytes": sum(b.values()), "requests": sum(q.values()),
                "reads": q.get("read", 0), "writes": q.get("write", 0),
                "flushes": q.get("flush", 0),
                "lat_ms": e.get("lat", {}), "share": e.get("share")}
    return {"exports": {e["name"]: one(e) for e in st.get("exports", [])},
            "groups": {g["name"]: dict(one(g), weight=g.get("weight"))
                       for g in st.get("groups", [])},
            "device": {k: v for k, v in st.get("device", {}).items()
                       if isinstance(v, (int, float, str, bool))}}


def cdf_points(bins, n=60):
    ks = sorted(bins)
    tot = sum(bins.values())
    out, c = [], 0
    step = max(1, len(ks) // n)
    for i, k in enumerate(ks):
        c += bins[k]
        if i % step == 0 or i == len(ks) - 1:
            out.append([round(k / 1e6, 4), round(c / tot, 5)])
    return out


# The targets: equal weights, each tenant keeps at least 0.40 of its solo
# throughput, the two within 1.3x of each other and neither below fifo's
# smaller fraction; unequal weights, the two fractions' ratio within 25%
# of the weights' ratio.
MATRIX_MIN_FRACTION = 0.40
MATRIX_MAX_SPREAD = 1.3
MATRIX_RATIO_TOL = 0.25


def matrix_bps(cr, tenants):
    """Bytes/s per tenant of a client run: fio's bytes (reads and writes)
    over its connections' longest runtime."""
    out = {}
    for t in tenants:
        jobs = cr.jobs.get(t.name, [])
        byts = sum(j["read"]["io_bytes"] + j["write"]["io_bytes"] for j in jobs)
        rt = max((j["job_runtime"] for j in jobs), default=0) / 1000.0
        out[t.name] = byts / rt if rt > 0 else None
    return out


def frac_rounds(together, solos, names):
    """Per round: each tenant's bytes/s together over its bytes/s alone."""
    out = []
    for i, x in enumerate(together):
        s = solos[i] if i < len(solos) else None
        if "error" in x or s is None:
            out.append(None)
            continue
        f = {}
        for n in names:
            so = s.get(n)
            f[n] = (x[n] / so if isinstance(so, (int, float)) and so > 0
                    and x.get(n) is not None else None)
        out.append(f)
    return out


def matrix_verdict(wa, wb, fr, fifo_fr):
    """Pass/fail of one cell against the targets: FR and FIFO_FR are
    (first, second) fractions of ours and fifo (or None)."""
    if fr is None or None in fr:
        return None, "no result"
    a, b = fr
    lo, hi = min(a, b), max(a, b)
    if wa == wb:
        why = []
        if lo < MATRIX_MIN_FRACTION:
            why.append("%.2f < %.2f" % (lo, MATRIX_MIN_FRACTION))
        if lo <= 0 or hi / lo > MATRIX_MAX_SPREAD:
            why.append("spread %s > %.1fx" % ("inf" if lo <= 0 else "%.2fx" % (hi / lo),
                                                MATRIX_MAX_SPREAD))
        if fifo_fr and None not in fifo_fr and lo < min(fifo_fr):
            why.append("%.2f < fifo's %.2f" % (lo, min(fifo_fr)))
        if not why and not (fifo_fr and None not in fifo_fr):
            return True, "pass (no fifo to compare)"
        return not why, "; ".join(why) or "pass"
    want = wa / wb
    if b <= 0:
        return False, "second tenant got nothing"
    r = a / b
    ok = abs(r / want - 1) <= MATRIX_RATIO_TOL
    return ok, "ratio %.2f (target %g +-%d%%)" % (r, want, round(100 * MATRIX_RATIO_TOL))
