"""The fairness matrix (tools/cfqlab --matrix).

Pairs of unlike tenants (bench/scenarios/matrix/: one tenant per group,
one export each), each pair under each weights variant on each device,
through each system.  Shares of bytes or requests mean nothing between a
4k random reader and a 1 MiB streamer, so the matrix measures what each
tenant keeps of what it gets alone: its bytes/s with the other tenant
running, over its bytes/s alone (cfqlab(1), "FAIRNESS MATRIX").

The solo runs do not depend on the weights, and one solo run serves every
NBD system of the cell: each tenant alone on our server under fifo (what
the device gives it through an NBD server), once per round, pair and
device.  The iocost peer runs its clients on the machine without NBD, so
it measures its own solo runs.
"""

import argparse
import json
import os
import re
import sys
import time

from .analysis import (MATRIX_MAX_SPREAD, MATRIX_MIN_FRACTION, MATRIX_RATIO_TOL,
                       frac_rounds, matrix_bps, matrix_verdict)
from .clients import ClientRun
from .common import LabError, median, stop_proc
from .lab import Lab, make_system
from .peers import IOCost, Throttled
from .plots import matrix_plots
from .report import matrix_table
from .scenario import Scenario, Tools
from .systems import Ours
from .util import MiB, PROG, ROOT, Progress, catch_signals, die, git_head, lab_lock, note, safe_name


MATRIX_PAIRS = ("small-large", "read-write", "seq-rand", "mixed-pure",
                "deep-shallow", "flush-stream")
MATRIX_DEVICES = "hdd,ssd,nvme,disk"
MATRIX_SYSTEMS = "cfq fifo bfq qsd rate iocost"
MATRIX_SECONDS = 3.0
MATRIX_ROUNDS = 3
MATRIX_OVERHEAD_S = 1.5      # a run's server start, fio's connect, teardown (s)


def add_matrix_args(ap):
    g = ap.add_argument_group(
        "the fairness matrix",
        "--matrix runs pairs of unlike tenants (bench/scenarios/matrix/) on "
        "each device under each weights variant through each system, each "
        "tenant alone and both together, and reports what each keeps of "
        "its solo throughput (matrix.md, matrix.json, heat maps; --table DIR "
        "prints an earlier run's).  --rounds defaults to %d here.  Cost: "
        "about rounds x devices x pairs x (2 solo + weights x systems) runs "
        "of --seconds plus %gs each; the defaults (6 pairs, 2 weights, 4 "
        "devices, 3 rounds, 3 s) take about 40 minutes on a 2-core machine "
        "(man cfqlab)." % (MATRIX_ROUNDS, MATRIX_OVERHEAD_S))
    g.add_argument("--matrix", action="store_true",
                   help="run the fairness matrix instead of one scenario")
    g.add_argument("--pairs", metavar="NAME,...",
                   help="pairs: names in bench/scenarios/matrix/ or scenario files "
                   "(default: all six)")
    g.add_argument("--devices", default=MATRIX_DEVICES, metavar="DEV,...",
                   help="device models, or disk for the real disk (default %(default)s)")
    g.add_argument("--weights", default="1:1,4:1", metavar="A:B,...",
                   help="weights variants, the first tenant's group first "
                   "(default %(default)s)")
    g.add_argument("--seconds", type=float, default=MATRIX_SECONDS, metavar="S",
                   help="length of each run (default %(default)g)")
    g.add_argument("--matrix-systems", default=MATRIX_SYSTEMS, metavar="LIST",
                   help="systems (default: %(default)s); a peer the machine "
                   "cannot run is skipped with the reason")
    g.add_argument("--estimate", action="store_true",
                   help="print the matrix's runs and estimated time, and stop")
    # --rounds: 1 for a scenario, MATRIX_ROUNDS for the matrix.
    ap.set_defaults(rounds=None)


def matrix_pairs(spec):
    """[(name, path)] of the pairs SPEC names (default: MATRIX_PAIRS, then
    any other file in bench/scenarios/matrix/)."""
    d = os.path.join(ROOT, "bench", "scenarios", "matrix")
    if not spec:
        have = sorted(os.path.splitext(f)[0] for f in os.listdir(d) if f.endswith(".conf"))
        names = [n for n in MATRIX_PAIRS if n in have] + [n for n in have if n not in MATRIX_PAIRS]
        return [(n, os.path.join(d, n + ".conf")) for n in names]
    out = []
    for n in [x for x in spec.split(",") if x]:
        if os.path.exists(n):
            out.append((os.path.splitext(os.path.basename(n))[0], n))
        elif os.path.exists(os.path.join(d, n + ".conf")):
            out.append((n, os.path.join(d, n + ".conf")))
        else:
            raise LabError("--pairs: no pair %r (bench/scenarios/matrix/%s.conf)" % (n, n))
    return out


def matrix_weights(spec):
    """'1:1,4:1' -> [(label, a, b)]."""
    out = []
    for w in [x for x in spec.split(",") if x]:
        m = re.fullmatch(r"\s*(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)\s*", w)
        if not m or float(m.group(1)) <= 0 or float(m.group(2)) <= 0:
            raise LabError("--weights: %r is not A:B with A, B > 0" % w)
        out.append((w.strip(), float(m.group(1)), float(m.group(2))))
    if not out:
        raise LabError("--weights: no variant")
    return out


def matrix_group_weights(a, b):
    """Group weights for the ratio A:B, summing to 1000 (1:1 -> 500, 500;
    4:1 -> 800, 200); the server checks the range."""
    return round(1000 * a / (a + b)), round(1000 * b / (a + b))


def weighted_scenario(path, weights, out):
    """Write OUT: the scenario PATH with the weight of each [group NAME] in
    WEIGHTS ({name: weight}) replaced (or added after the header)."""
    lines = open(path).read().split("\n")
    res, group, done = [], None, set()
    for line in lines:
        m = re.match(r"\s*\[\s*(\S+)(?:\s+(\S+))?\s*\]", line)
        if m:
            if group in weights and group not in done:
                res.append("weight = %d" % weights[group])
                done.add(group)
            group = m.group(2) if m.group(1) == "group" else None
        elif group in weights and re.match(r"\s*weight\s*=", line):
            line = "weight = %d" % weights[group]
            done.add(group)
        res.append(line)
    if group in weights and group not in done:
        res.append("weight = %d" % weights[group])
        done.add(group)
    if set(weights) - done:
        raise LabError("%s: no [group %s]" % (path, ", ".join(sorted(set(weights) - done))))
    with open(out, "w") as f:
        f.write("# %s with the matrix's weights\n" % path + "\n".join(res))


class MatrixCell:
    """What a System's run needs of a Lab, for one pair, weights variant and
    device: the scenario, the image, the systems of the cell."""

    def __init__(self, args, tools, scn, image, image_dir, procs, lock):
        self.args = args
        self.tools = tools
        self.scn = scn
        self.image = image
        self.image_dir = image_dir
        self.procs = procs
        self.lock = lock
        self.restore_sched = None
        self.capacity_bps = None
        self.systems = []
        self.ceph = None        # the matrix runs on files only


class MatrixImage:
    """One image for the emulated devices (sparse: the model decides the
    timing) and one for the real disk (filled: a hole reads without
    touching the disk), made by Lab.prepare_image."""

    def __init__(self, args, size, emulate, lock):
        self.args = args
        self.scn = argparse.Namespace(image_size=size, emulate=emulate)
        self.image_dir = args.dir
        self.image = None
        self.own_image = False
        self.lock = lock
        self.procs = []
        self.restore_sched = None
        self.ceph = None        # the matrix runs on files only

    def make(self):
        Lab.prepare_image(self)
        return self.image

    def remove(self):
        Lab.cleanup(self)


def matrix_systems(spec):
    out = []
    for s in [x for x in re.split(r"[\s;,]+", spec) if x]:
        if s == "iocost":
            out.append(IOCost("iocost"))
            continue
        sy = make_system(s)
        if sy.kind == "sim":
            raise LabError("--matrix-systems: %s: the matrix measures servers, "
                           "not the simulator" % s)
        out.append(sy)
    if not out:
        raise LabError("--matrix-systems: no system")
    return out


def matrix_device(dev):
    """The [device] emulate value of a matrix column: disk is the real disk."""
    return "none" if dev in ("disk", "none") else dev


def matrix_estimate(plan, seconds):
    """Runs and seconds of a plan: [(device, pair, [systems per weights])]."""
    runs = 0
    for dev, pair, per_w, local_solo in plan:
        runs += 2 + (2 if local_solo else 0) + sum(len(s) for s in per_w)
    return runs, runs * (seconds + MATRIX_OVERHEAD_S)


def matrix_main(args):
    t_start = time.time()
    rounds = args.rounds or MATRIX_ROUNDS
    if rounds < 1:
        raise LabError("--rounds must be >= 1")
    if args.seconds <= 0:
        raise LabError("--seconds must be > 0")
    tools = Tools(args.build)
    pairs = matrix_pairs(args.pairs)
    weights = matrix_weights(args.weights)
    devices = [d for d in args.devices.split(",") if d]
    if not devices:
        raise LabError("--devices: no device")
    systems = matrix_systems(args.matrix_systems)
    out = args.out or os.path.join("/var/tmp", "cfqlab-matrix-%s" % time.strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    os.makedirs(os.path.join(out, "scenarios"), exist_ok=True)
    lock = lab_lock(args.lock)
    procs = []
    scns, need = matrix_scenarios(args, tools, pairs, weights, devices, out)
    images = {}
    cells = {}
    skipped = {}
    try:
        for dev in devices:
            emu = matrix_device(dev)
            kind = "disk" if emu == "none" else "model"
            if kind not in images:
                images[kind] = MatrixImage(args, need, emu, lock)
        plan = matrix_plan(args, tools, pairs, weights, devices, systems, scns, images,
                           procs, lock, cells, skipped)
        nruns, est = matrix_estimate(plan, args.seconds)
        nruns *= rounds
        est *= rounds
        note("matrix: %d pair(s) x %d weights x %d device(s), %d round(s) of %g s runs: "
             "%d runs, about %.0f min" % (len(pairs), len(weights), len(devices), rounds,
                                          args.seconds, nruns, est / 60))
        for dev in devices:
            for s, why in skipped[dev].items():
                note("matrix: %s on %s: skipped: %s" % (s, dev, why))
        if args.estimate:
            return 0
        for k, img in images.items():
            Progress.show("(image for %s)" % k)
            img.make()
        for (pname, wl, dev), (c, run) in cells.items():
            c.image = images["disk" if c.scn.emulate == "none" else "model"].image
            c.image_dir = os.path.dirname(c.image)
        Progress.start(nruns)
        raw, solo = matrix_rounds(args, out, rounds, plan, cells, weights)
        Progress.clear()
        rep = matrix_report(args, out, pairs, weights, devices, systems, cells, raw,
                            solo, skipped, rounds, t_start, est)
    finally:
        for p in procs:
            stop_proc(p, 2)
        for c, _ in cells.values():
            if c.restore_sched:           # a peer interrupted in its run
                c.own_image = False
                Lab.cleanup(c)
        for img in images.values():
            img.remove()
    sys.stdout.write(rep["text"])
    print("\nresults: %s (matrix.md, matrix.json%s)" % (out, "".join(", " + p for p in rep["plots"])))
    return 0


def matrix_scenarios(args, tools, pairs, weights, devices, out):
    """The cells' scenarios: each pair with each weights variant (written
    into OUT/scenarios/), checked by cfqconf for each device.  Returns
    ({(pair, weights, device): Scenario}, the image size the largest needs)."""
    scns, need = {}, MiB
    for pname, path in pairs:
        base = Scenario(path, tools, args.set, None, args.seconds, None)
        if len(base.tenants) != 2 or len({t.group for t in base.tenants}) != 2:
            raise LabError("%s: a pair is two tenants in two groups" % path)
        for wl, a, b in weights:
            ga, gb = matrix_group_weights(a, b)
            wpath = os.path.join(out, "scenarios", "%s-%s.conf" % (pname, wl.replace(":", "to")))
            weighted_scenario(path, {base.tenants[0].group: ga, base.tenants[1].group: gb}, wpath)
            for dev in devices:
                s = Scenario(wpath, tools, args.set, None, args.seconds, matrix_device(dev))
                need = max(need, s.image_size)
                scns[(pname, wl, dev)] = s
    return scns, need


def matrix_plan(args, tools, pairs, weights, devices, systems, scns, images, procs, lock,
                cells, skipped):
    """Which systems each cell runs (a peer's check needs the image's
    directory only, not the image): fills CELLS[(pair, weights, device)]
    with (MatrixCell, [systems]) and SKIPPED[device][system] with why;
    returns the plan, [(device, pair, [systems per weights], local solo?)]."""
    plan = []
    for dev in devices:
        skipped[dev] = {}
        for pname, _ in pairs:
            per_w = []
            local = False
            for wl, a, b in weights:
                scn = scns[(pname, wl, dev)]
                img = images["disk" if scn.emulate == "none" else "model"]
                c = MatrixCell(args, tools, scn, None, img.image_dir, procs, lock)
                c.systems = systems
                run = []
                for s in systems:
                    why = s.check(c)
                    if why:
                        skipped[dev].setdefault(s.name, why)
                    else:
                        run.append(s)
                        local = local or getattr(s, "solo_family", "nbd") == "local"
                cells[(pname, wl, dev)] = (c, run)
                per_w.append(run)
            plan.append((dev, pname, per_w, local))
    return plan


def matrix_rounds(args, out, rounds, plan, cells, weights):
    """Every run of the plan, ROUNDS times: each tenant alone (per solo
    family), then the pair through each system under each weights
    variant.  Returns (raw, solo): {(pair, weights, device): {system:
    [per round bytes/s or error]}}, {(pair, device): {family: [per round
    bytes/s]}}."""
    raw = {}
    solo = {}
    for r in range(rounds):
        for dev, pname, per_w, local in plan:
            seed = 1 + r
            c0 = cells[(pname, weights[0][0], dev)][0]
            fams = [("nbd", Ours("fifo", "fifo"))]
            if local:
                fams.append(("local", next(s for s in sum(per_w, [])
                                            if getattr(s, "solo_family", "") == "local")))
            for fam, sy in fams:
                got = {}
                for t in c0.scn.tenants:
                    Progress.next("r%d %s %s solo %s (%s)" % (r + 1, dev, pname, t.name, fam))
                    d = os.path.join(out, "runs", dev, pname, "r%d-solo-%s-%s" % (r + 1, fam, t.name))
                    os.makedirs(d, exist_ok=True)
                    cr = _matrix_run(c0, sy, d, [t], args.seconds, seed)
                    got[t.name] = (matrix_bps(cr, [t])[t.name] if not cr.error
                                   else {"error": cr.error})
                solo.setdefault((pname, dev), {}).setdefault(fam, []).append(got)
            for (wl, a, b), run in zip(weights, per_w):
                c, _ = cells[(pname, wl, dev)]
                c.capacity_bps = None
                for s in run:
                    Progress.next("r%d %s %s %s %s" % (r + 1, dev, pname, wl, s.name))
                    d = os.path.join(out, "runs", dev, pname, "r%d-%s-%s" % (
                        r + 1, wl.replace(":", "to"), safe_name(s.name)))
                    os.makedirs(d, exist_ok=True)
                    if isinstance(s, Throttled) and c.capacity_bps is None:
                        cr = ClientRun()
                        cr.error = "no fifo result in this round to set the limits"
                    else:
                        cr = _matrix_run(c, s, d, c.scn.tenants, args.seconds, seed)
                    x = matrix_bps(cr, c.scn.tenants) if not cr.error else {"error": cr.error}
                    if cr.error:
                        note("r%d %s %s %s %s: %s" % (r + 1, dev, pname, wl, s.name, cr.error))
                    elif s.kind == "ours" and s.sched == "fifo" and not s.overrides:
                        c.capacity_bps = sum(v for v in x.values() if v)
                    raw.setdefault((pname, wl, dev), {}).setdefault(s.name, []).append(x)
    return raw, solo


def matrix_cli(args):
    """--matrix: run it; errors and signals as the lab's."""
    Progress.quiet = args.quiet
    catch_signals()
    try:
        if args.table:
            # An earlier run's table, and its heat maps drawn again.
            if not args.scenario:
                raise LabError("--matrix --table DIR: which results directory?")
            try:
                with open(os.path.join(args.scenario, "matrix.json")) as f:
                    rep = json.load(f)
            except (OSError, ValueError) as e:
                raise LabError("%s: %s" % (args.scenario, e))
            sys.stdout.write(matrix_table(rep))
            if not args.no_plots:
                matrix_plots(args.scenario, rep)
            return 0
        return matrix_main(args)
    except LabError as e:
        Progress.clear()
        die(str(e))
    except KeyboardInterrupt:
        Progress.clear()
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130


def _matrix_run(cell, s, rundir, tenants, seconds, seed):
    try:
        with cell.lock:
            return s.run(cell, rundir, tenants, seconds, seed)
    except (LabError, OSError) as e:
        cr = ClientRun()
        cr.error = str(e)
        return cr


def matrix_report(args, out, pairs, weights, devices, systems, cells, raw, solo,
                  skipped, rounds, t_start, est):
    rep = {"meta": {
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "git": git_head(args.build or ROOT),
        "loadavg_end": open("/proc/loadavg").read().split()[:3],
        "rounds": rounds, "seconds": args.seconds, "devices": devices,
        "pairs": [p for p, _ in pairs], "weights": [w for w, _, _ in weights],
        "systems": [s.name for s in systems], "elapsed_s": round(time.time() - t_start, 1),
        "estimate_s": round(est), "targets": {
            "min_fraction": MATRIX_MIN_FRACTION, "max_spread": MATRIX_MAX_SPREAD,
            "ratio_tolerance": MATRIX_RATIO_TOL}},
        "skipped": skipped, "labels": {s.name: s.label() for s in systems},
        "cells": []}
    for pname, _ in pairs:
        for wl, a, b in weights:
            for dev in devices:
                c, run = cells[(pname, wl, dev)]
                names = [t.name for t in c.scn.tenants]
                cell = {"pair": pname, "weights": wl, "device": dev, "tenants": names,
                        "group_weights": [c.scn.groups[t.group]["weight"] for t in c.scn.tenants],
                        "solo_bps": solo.get((pname, dev), {}), "systems": {}}
                for s in run:
                    tog = raw.get((pname, wl, dev), {}).get(s.name, [])
                    fam = getattr(s, "solo_family", "nbd")
                    fr = frac_rounds(tog, solo.get((pname, dev), {}).get(fam, []), names)
                    med = {n: median([f[n] for f in fr if f]) for n in names}
                    cell["systems"][s.name] = {
                        "together_bps": tog, "fraction_rounds": fr, "fraction": med,
                        "solo": fam,
                        "errors": [x["error"] for x in tog if "error" in x]}
                f_ours = cell["systems"].get("cfq", {}).get("fraction")
                f_fifo = cell["systems"].get("fifo", {}).get("fraction")
                ok, why = matrix_verdict(a, b, f_ours and [f_ours[n] for n in names],
                                         f_fifo and [f_fifo[n] for n in names])
                cell["pass"] = ok
                cell["verdict"] = why
                rep["cells"].append(cell)
    rep["text"] = matrix_table(rep)
    with open(os.path.join(out, "matrix.md"), "w") as f:
        f.write(rep["text"])
    rep["plots"] = [] if args.no_plots else matrix_plots(out, rep)
    with open(os.path.join(out, "matrix.json"), "w") as f:
        json.dump(rep, f, indent=1)
    return rep
