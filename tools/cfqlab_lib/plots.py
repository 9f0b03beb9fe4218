"""Plots through gnuplot (pngcairo): shares over time and latency tails
per system, and the fairness matrix's heat maps.  Titles and keys are
names with underscores (group_lag): never gnuplot's enhanced text, which
would make them subscripts."""

import os
import shutil
import subprocess

from .util import note, safe_name


def terminal(width, height):
    """Every plot's first line: a PNG, and no enhanced text, so that a
    name's underscore stays an underscore in titles, keys and tics."""
    return "set terminal pngcairo noenhanced size %d,%d font 'sans,9'" % (width, height)


def _share_top(values):
    """The top of a shares panel's y axis: above every value with room to
    spare, so that no weight-share line sits on the frame and hides."""
    vals = [v for v in values if v is not None]
    top = max(vals) if vals else 1.0
    return min(1.05, top + max(0.05, 0.1 * top))


def _ccdf_points(x):
    """(ms, fraction of requests at least that slow) for a tenant's
    latency: from fio's histogram bins (ns -> count) or a list of
    (ms, cumulative fraction).  Points with nothing slower are left out
    (a log axis has no 0)."""
    pts = []
    if x.get("bins"):
        bins = x["bins"]
        tot = sum(bins.values())
        before = 0
        for k in sorted(bins):
            pts.append((k / 1e6, 1.0 - before / tot))
            before += bins[k]
    else:
        prev = 0.0
        for ms, q in x["cdf"]:
            if 1.0 - prev > 0:
                pts.append((max(ms, 1e-4), 1.0 - prev))
            prev = q
    return [(ms, f) for ms, f in pts if f > 0]


def make_plots(out, rep):
    if shutil.which("gnuplot") is None:
        note("gnuplot not installed: no plots (apt-get install gnuplot-nox)")
        return []
    ok = [e for e in rep["systems"] if e["status"] == "ok"]
    if not ok:
        return []
    names = [t["name"] for t in rep["scenario"]["tenants"]]
    datd = os.path.join(out, "plot-data")
    os.makedirs(datd, exist_ok=True)
    plots = []
    # Shares over time, one panel per system with a time series.
    ts_sys = [e for e in ok if e.get("series")]
    # Titles and keys are names with underscores (group_lag): no
    # gnuplot enhanced text, which would make them subscripts.
    if ts_sys:
        gp = [terminal(1100, 260 * len(ts_sys) + 40),
              "set output '%s/shares.png'" % out,
              "set multiplot layout %d,1 title 'share of the %s per tenant (solid) and its weight share (dashed), 1 s bins'"
              % (len(ts_sys), rep["scenario"]["share_unit"]),
              "set xrange [0:%g]" % rep["scenario"]["duration_s"],
              "set xlabel 'seconds'", "set ylabel 'share'",
              "set key outside right top", "set grid"]
        for e in ts_sys:
            se = e["series"]
            gp.append("set yrange [0:%.3f]" % _share_top(
                [v for n in names for v in se["measured"].get(n, [])
                 + se["expected"].get(n, [])]))
            fn = os.path.join(datd, "shares-%s.dat" % safe_name(e["name"]))
            with open(fn, "w") as f:
                f.write("# t " + " ".join("%s %s_want" % (n, n) for n in names) + "\n")
                for i in se["t"]:
                    row = [str(i + 0.5)]
                    for n in names:
                        m = se["measured"].get(n, [None] * len(se["t"]))[i]
                        x = se["expected"].get(n, [None] * len(se["t"]))[i]
                        row += ["NaN" if m is None else "%.4f" % m,
                                "NaN" if x is None else "%.4f" % x]
                    f.write(" ".join(row) + "\n")
            pl = []
            for j, n in enumerate(names):
                if n not in se["measured"]:
                    continue
                c = j + 1
                pl.append("'%s' using 1:%d with linespoints lt %d pt 7 ps 0.5 title '%s'"
                          % (fn, 2 + 2 * j, c, n))
                pl.append("'%s' using 1:%d with lines lt %d dt 2 notitle" % (fn, 3 + 2 * j, c))
            gp.append("set title '%s'" % e["label"].replace("'", ""))
            gp.append("plot " + ", ".join(pl))
        gp.append("unset multiplot")
        if _gnuplot(out, "shares.gp", gp):
            plots.append("shares.png")
    # Latency CDFs, one panel per system.
    cdf_sys = [e for e in ok if any((x or {}).get("bins") or (x or {}).get("cdf")
                                    for x in e["tenants"].values())]
    if cdf_sys:
        cols = 2 if len(cdf_sys) > 1 else 1
        rows = (len(cdf_sys) + cols - 1) // cols
        what = []
        if any(e.get("kind") != "sim" for e in cdf_sys):
            what.append("fio clat over all rounds")
        if any(e.get("kind") == "sim" for e in cdf_sys):
            what.append("cfqsim: insert to completion")
        # The tail on a log axis (1 - CDF): a linear CDF puts p99 and
        # p99.9 in the top pixel, where 60 and 300 ms look the same.
        gp = [terminal(560 * cols, 330 * rows + 40),
              "set output '%s/latency.png'" % out,
              "set multiplot layout %d,%d title 'completion latency per tenant: fraction of requests slower than x (%s)'"
              % (rows, cols, "; ".join(what)),
              "set logscale x", "set logscale y", "set xlabel 'ms'",
              "set ylabel 'fraction slower'",
              "set ytics ('1' 1, '0.1 (p90)' 0.1, '0.01 (p99)' 0.01,"
              " '0.001 (p99.9)' 0.001, '1e-4' 0.0001, '1e-5' 0.00001)",
              "set yrange [*:1]", "set key top right", "set grid"]
        for e in cdf_sys:
            pl = []
            for j, n in enumerate(names):
                x = e["tenants"].get(n)
                if not x or not (x.get("bins") or x.get("cdf")):
                    continue
                fn = os.path.join(datd, "ccdf-%s-%s.dat" % (safe_name(e["name"]), safe_name(n)))
                with open(fn, "w") as f:
                    for ms, frac in _ccdf_points(x):
                        f.write("%.5f %.8f\n" % (ms, frac))
                pl.append("'%s' using 1:2 with steps lt %d lw 1.5 title '%s'" % (fn, j + 1, n))
            gp.append("set title '%s'" % e["name"].replace("'", ""))
            gp.append("plot " + ", ".join(pl))
        gp.append("unset multiplot")
        if _gnuplot(out, "latency.gp", gp):
            plots.append("latency.png")
    lw_plot = lat_windows_plot(out, datd, ok, names)
    if lw_plot:
        plots.append(lw_plot)
    return plots


def _short(name, n):
    """NAME in at most N characters: a long system name keeps its end,
    where variants of one system differ (...,latency_mode=binary)."""
    return name if len(name) <= n else "..." + name[-(n - 3):]


def lat_windows_plot(out, datd, ok, names):
    """Per tenant with a --lat-target: its percentile in each 1 s window
    (the first round) per system, and the target."""
    who = [n for n in names if any((e["tenants"].get(n) or {}).get("lat_windows")
                                   for e in ok)]
    if not who:
        return None
    gp = [terminal(1100, 330 * len(who) + 40),
          "set output '%s/lat-windows.png'" % out,
          "set multiplot layout %d,1 title 'latency per 1 s window (first round) against the target (dashed)'"
          % len(who),
          "set logscale y", "set xlabel 'seconds'", "set ylabel 'ms'",
          "set xrange [0:%d]" % max(len((e["tenants"].get(n) or {}).get("lat_windows", {})
                                         .get("p_ms", [])) for e in ok for n in who),
          "set key below", "set grid"]
    for n in who:
        pl = []
        target = pct = None
        for j, e in enumerate(ok):
            lw = (e["tenants"].get(n) or {}).get("lat_windows")
            if not lw:
                continue
            target, pct = lw["target_ms"], lw["pct"]
            fn = os.path.join(datd, "latwin-%s-%s.dat" % (safe_name(e["name"]), safe_name(n)))
            with open(fn, "w") as f:
                for i, v in enumerate(lw["p_ms"]):
                    f.write("%g %s\n" % (i + 0.5, "NaN" if v is None else "%.4f" % v))
            pl.append("'%s' using 1:2 with linespoints lt %d pt 7 ps 0.5 title '%s'"
                      % (fn, j + 1, _short(e["name"].replace("'", ""), 90)))
        pl.append("%g with lines lt -1 dt 2 title 'target %g ms'" % (target, target))
        gp.append("set title '%s: p%g'" % (n, pct))
        gp.append("plot " + ", ".join(pl))
    gp.append("unset multiplot")
    return "lat-windows.png" if _gnuplot(out, "lat-windows.gp", gp) else None


def _gnuplot(out, name, lines):
    path = os.path.join(out, "plot-data", name)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    p = subprocess.run(["gnuplot", path], capture_output=True, text=True)
    if p.returncode != 0:
        note("gnuplot %s failed: %s" % (name, p.stderr.strip()[-300:]))
        return False
    return True


def matrix_plots(out, rep):
    """A heat map per weights variant, pairs x devices: for equal weights
    the colour is ours' smaller fraction; for A:B it is how close the
    fractions' ratio is to A/B (min(r, t)/max(r, t)).  Each cell prints
    both fractions."""
    if shutil.which("gnuplot") is None:
        note("gnuplot not installed: no heat map (apt-get install gnuplot-nox)")
        return []
    m = rep["meta"]
    devs, pairs = m["devices"], m["pairs"]
    by = {(c["pair"], c["weights"], c["device"]): c for c in rep["cells"]}
    datd = os.path.join(out, "plot-data")
    os.makedirs(datd, exist_ok=True)
    plots = []
    for w in m["weights"]:
        a, b = [float(x) for x in w.split(":")]
        fn = os.path.join(datd, "heat-%s.dat" % w.replace(":", "to"))
        with open(fn, "w") as f:
            for j, p in enumerate(pairs):
                for i, d in enumerate(devs):
                    c = by.get((p, w, d))
                    fr = (c or {}).get("systems", {}).get("cfq", {}).get("fraction")
                    if not fr or None in fr.values():
                        f.write('%d %d NaN "-"\n' % (i, j))
                        continue
                    x, y = [fr[n] for n in c["tenants"]]
                    if a == b:
                        v = min(x, y)
                    else:
                        r = x / y if y > 0 else 0.0
                        v = min(r, a / b) / max(r, a / b) if r > 0 else 0.0
                    f.write('%d %d %.4f "%.2f / %.2f"\n' % (i, j, v, x, y))
                f.write("\n")
        name = "heatmap-%s.png" % w.replace(":", "to")
        title = ("weights %s, ours: fraction of solo, first / second tenant\\n"
                 "colour: the smaller fraction" % w if a == b else
                 "weights %s, ours: fraction of solo, first / second tenant\\n"
                 "colour: min(r, %g) / max(r, %g), r the ratio of the fractions"
                 % (w, a / b, a / b))
        gp = [terminal(max(560, 200 + 150 * len(devs)), 140 + 60 * len(pairs)),
              "set output '%s/%s'" % (out, name),
              'set title "%s"' % title.replace('"', ""),
              "set xrange [-0.5:%g]" % (len(devs) - 0.5),
              "set yrange [%g:-0.5]" % (len(pairs) - 0.5),
              "set xtics (%s)" % ", ".join('"%s" %d' % (d, i) for i, d in enumerate(devs)),
              "set ytics (%s)" % ", ".join('"%s" %d' % (p, j) for j, p in enumerate(pairs)),
              "set cbrange [0:%g]" % (0.6 if a == b else 1.0),
              "set palette defined (0 '#c0392b', 0.5 '#f1c40f', 1 '#27ae60')",
              "set tics scale 0", "unset key",
              "set style fill solid 1.0 noborder",
              "plot '%s' using 1:2:(0.5):(0.5):3 with boxxyerror fc palette, "
              "'' using 1:2:4 with labels font 'sans,10'" % fn]
        if _gnuplot(out, name.replace(".png", ".gp"), gp):
            plots.append(name)
    return plots
