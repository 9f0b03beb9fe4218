#!/usr/bin/python3
"""Compare two builds' fairness matrices (tools/cfqlab --matrix) cell by cell.

    bench/ab-matrix.py --a A1/matrix.json A2/matrix.json --b B1/matrix.json ...

Each file may hold several rounds; every round of every file is one sample
of its side.  For each cell (pair x weights x device) of SYSTEM (default
cfq) it prints what each tenant keeps of its solo throughput and the
first tenant's share of the pair's bytes, medians of side A and side B,
and their difference.  The summary sets the differences between the sides
against the noise: |a - b| over every round of A against every round of B,
next to |a - a'| and |b - b'| over the pairs of rounds within one side.
--md prints the per-cell table as Markdown (shares: median and range).
"""

import argparse
import itertools
import json
import statistics
import sys


def load(paths, system):
    """{(pair, weights, device): {"tenants": [a, b], "samples": [(fa, fb, share)]}}"""
    cells = {}
    for path in paths:
        with open(path) as f:
            rep = json.load(f)
        for c in rep["cells"]:
            x = c["systems"].get(system)
            if not x:
                continue
            key = (c["pair"], c["weights"], c["device"])
            ent = cells.setdefault(key, {"tenants": c["tenants"], "samples": []})
            a, b = c["tenants"]
            for tog, fr in zip(x["together_bps"], x["fraction_rounds"]):
                if not fr or "error" in tog or None in (fr.get(a), fr.get(b)):
                    continue
                ta, tb = tog.get(a), tog.get(b)
                share = ta / (ta + tb) if ta is not None and tb is not None and ta + tb > 0 else None
                ent["samples"].append((fr[a], fr[b], share))
    return cells


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def dist(xs):
    xs = [x for x in xs if x is not None]
    if not xs:
        return "-"
    return "median %.3f, max %.3f (n=%d)" % (statistics.median(xs), max(xs), len(xs))


def fmt(x):
    return "-" if x is None else "%.2f" % x


def fmt_r(m, side, i):
    """The median M and, with more than one round, the range of SIDE's I."""
    vals = [s[i] for s in side if s[i] is not None]
    if len(vals) < 2:
        return fmt(m)
    return "%s (%.2f-%.2f)" % (fmt(m), min(vals), max(vals))


def fmt_d(x):
    return "-" if x is None else "%+.2f" % x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--a", nargs="+", required=True, metavar="JSON", help="side A's matrix.json files")
    ap.add_argument("--b", nargs="+", required=True, metavar="JSON", help="side B's matrix.json files")
    ap.add_argument("--system", default="cfq", help="the system to compare (default cfq)")
    ap.add_argument("--md", action="store_true", help="per-cell table in Markdown")
    args = ap.parse_args()
    A, B = load(args.a, args.system), load(args.b, args.system)
    keys = [k for k in A if k in B]
    if not keys:
        print("ab-matrix: no cell in both sides", file=sys.stderr)
        return 1
    names = ("first keeps", "second keeps", "first's share")
    cross = [[] for _ in names]
    within = [[] for _ in names]
    dmed = [[] for _ in names]
    rng = [[] for _ in names]
    if args.md:
        print("| pair | weights | device | keeps A | keeps B | share A | share B | d share |")
        print("|---|---|---|---|---|---|---|---|")
    else:
        print("%-14s %-4s %-5s %-11s %-11s %-13s %-7s %-7s %-7s"
              % ("pair", "w", "dev", "keeps A", "keeps B", "d keeps", "shareA", "shareB", "d"))
    for k in keys:
        sa, sb = A[k]["samples"], B[k]["samples"]
        ma = [med(s[i] for s in sa) for i in range(3)]
        mb = [med(s[i] for s in sb) for i in range(3)]
        d = [None if x is None or y is None else y - x for x, y in zip(ma, mb)]
        for i in range(3):
            dmed[i].append(None if d[i] is None else abs(d[i]))
            cross[i] += [abs(x[i] - y[i]) for x in sa for y in sb
                         if x[i] is not None and y[i] is not None]
            for side in (sa, sb):
                vals = [s[i] for s in side if s[i] is not None]
                within[i] += [abs(x - y) for x, y in itertools.combinations(vals, 2)]
                if len(vals) > 1:
                    rng[i].append(max(vals) - min(vals))
        if args.md:
            print("| %s | %s | %s | %s/%s | %s/%s | %s | %s | %s |"
                  % (k[0], k[1], k[2], fmt(ma[0]), fmt(ma[1]), fmt(mb[0]), fmt(mb[1]),
                     fmt_r(ma[2], sa, 2), fmt_r(mb[2], sb, 2), fmt_d(d[2])))
        else:
            print("%-14s %-4s %-5s %-11s %-11s %-13s %-7s %-7s %-7s"
                  % (k[0], k[1], k[2], fmt(ma[0]) + "/" + fmt(ma[1]),
                     fmt(mb[0]) + "/" + fmt(mb[1]), fmt_d(d[0]) + "/" + fmt_d(d[1]),
                     fmt(ma[2]), fmt(mb[2]), fmt_d(d[2])))
    print("\ncells: %d; rounds per cell: A %s, B %s"
          % (len(keys), sorted({len(A[k]["samples"]) for k in keys}),
             sorted({len(B[k]["samples"]) for k in keys})))
    for i, n in enumerate(names):
        print("%s:" % n)
        print("  |median B - median A| per cell:     %s" % dist(dmed[i]))
        print("  |a - b|, every round A x B:          %s" % dist(cross[i]))
        print("  |x - x'|, rounds of one side (noise): %s" % dist(within[i]))
        print("  one side's range per cell (noise):    %s" % dist(rng[i]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
