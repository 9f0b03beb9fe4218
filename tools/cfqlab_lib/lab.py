"""The lab: one scenario through each system, round after round, each
timing run under the bench lock; the image, the solo runs, the medians
and the report (report.txt, report.json, the plots)."""

import json
import os
import re
import subprocess
import tempfile
import time

from .analysis import analyse, cdf_points, combine_rounds, server_summary, strip_round
from .clients import ClientRun
from .ceph import Cluster, is_rbd
from .common import LabError, fill_image, remove_sock_dirs, stop_proc
from .peers import BFQ, QSD, Rate
from .plots import make_plots
from .report import table
from .scenario import FIO_WORKLOADS, FS_WORKLOADS, Scenario, Tools
from .systems import Ours, Sim
from .util import ROOT, MiB, Progress, git_head, lab_lock, note, parse_size, parse_time, safe_name


def make_system(spec):
    """cfq, fifo, cfq:slice_idle=0,low_latency=0, sim, sim:fifo, bfq, qsd, rate;
    cfq:group.db.latency_target=5ms sets a group's key, qsd:group.seq.bps_max=20M
    caps a group's throttle group."""
    name, _, rest = spec.partition(":")
    ov = [o for o in rest.split(",") if o] if rest else []
    for o in ov:
        if "=" not in o:
            raise LabError("system %r: %r is not KEY=VALUE" % (spec, o))
    if name in ("cfq", "fifo"):
        return Ours(spec, name, ov)
    if name == "sim":
        sched = "cfq"
        rest_ov = []
        for o in ov:
            if o.startswith("scheduler="):
                sched = o.split("=", 1)[1]
            else:
                rest_ov.append(o)
        return Sim(spec, sched, rest_ov)
    if name.startswith("sim-"):          # sim-fifo, sim-cfq
        return Sim(spec, name[4:], ov)
    if name == "qsd":
        return QSD(spec, ov)
    if ov:
        raise LabError("system %r takes no overrides" % spec)
    if name == "bfq":
        return BFQ(spec)
    if name == "rate":
        return Rate(spec)
    raise LabError("unknown system %r (cfq, fifo, sim, sim-fifo, bfq, qsd, rate)" % spec)


def parse_lat_targets(specs, scn):
    """--lat-target TENANT=TIME[@PCT] (PCT 99 by default): {tenant:
    (target ms, percentile)}, judged per 1 s window in the report."""
    out = {}
    for spec in specs:
        name, _, rest = spec.partition("=")
        time_s, _, pct = rest.partition("@")
        if name not in [t.name for t in scn.tenants]:
            raise LabError("--lat-target %s: no tenant %r" % (spec, name))
        try:
            p = float(pct) if pct else 99.0
        except ValueError:
            p = -1
        if not 0 < p < 100:
            raise LabError("--lat-target %s: the percentile is above 0 and below 100" % spec)
        out[name] = (parse_time(time_s) * 1000.0, p)
    return out


class Lab:
    def __init__(self, args):
        self.args = args
        self.tools = Tools(args.build)
        self.procs = []
        self.restore_sched = None
        self.capacity_bps = None
        ov = list(args.set)
        self.scn = Scenario(args.scenario, self.tools, ov,
                            parse_size(args.image_size) if args.image_size else None,
                            parse_time(args.duration) if args.duration else None,
                            args.device, args.only)
        self.lat_targets = parse_lat_targets(getattr(args, "lat_target", None) or [],
                                             self.scn)
        specs = [s for s in re.split(r"[\s;]+", args.systems) if s]
        self.systems = [make_system(s) for s in specs]
        if not self.systems:
            raise LabError("no system to run (--systems)")
        # --out; tools/cfqlab gives it its default, under --dir.
        self.out = args.out
        os.makedirs(self.out, exist_ok=True)
        self.image_dir = args.dir
        self.image = None
        self.own_image = False
        self.lock = lab_lock(args.lock)
        # An RBD image (--ceph, --ceph-conf, --image rbd:POOL/IMAGE).
        self.ceph = None
        if args.ceph or args.ceph_conf or is_rbd(args.image):
            if not (args.ceph or args.ceph_conf):
                raise LabError("--image %s: say which cluster (--ceph-conf FILE, "
                               "or --ceph to start one)" % args.image)
            if args.image and not is_rbd(args.image):
                raise LabError("--image %s: with --ceph or --ceph-conf the image is "
                               "rbd:POOL/IMAGE" % args.image)
            if self.scn.emulate not in ("none", None):
                raise LabError("--ceph/--ceph-conf: the scenario emulates %s; an RBD "
                               "image is a real device (emulate = none)" % self.scn.emulate)
            self.ceph = Cluster(ROOT, args.dir, args.ceph_port,
                                None if args.ceph else args.ceph_conf)

    def prepare_image(self):
        if self.ceph:
            self.prepare_rbd()
            return
        if self.args.image:
            self.image = os.path.abspath(self.args.image)
            st = os.stat(self.image)
            if st.st_size < self.scn.image_size:
                raise LabError("--image %s has %d bytes, the scenario needs %d"
                               % (self.image, st.st_size, self.scn.image_size))
            self.image_dir = os.path.dirname(self.image)
            return
        os.makedirs(self.image_dir, exist_ok=True)
        fs = subprocess.run(["stat", "-f", "-c", "%T", self.image_dir],
                            capture_output=True, text=True).stdout.strip()
        if fs in ("tmpfs", "ramfs") and self.scn.emulate == "none":
            raise LabError("%s is %s: a real-disk scenario needs its image on a disk"
                           % (self.image_dir, fs))
        fd, self.image = tempfile.mkstemp(prefix="cfqlab-", suffix=".img",
                                          dir=self.image_dir)
        os.close(fd)
        self.own_image = True
        size = self.scn.image_size
        if self.scn.emulate == "none" and not self.args.sparse:
            # Real blocks: a hole reads without touching the disk.
            Progress.show("(filling a %d MiB image)" % (size // MiB))
            fill_image(self.image, size, self.lock)
        else:
            os.truncate(self.image, size)

    def prepare_rbd(self):
        Progress.show("(starting the Ceph cluster)" if self.args.ceph else "(the image)")
        self.ceph.start()
        if self.args.image:
            self.image = self.args.image
            have = self.ceph.size(self.image)
            if have < self.scn.image_size:
                raise LabError("--image %s has %d bytes, the scenario needs %d"
                               % (self.image, have, self.scn.image_size))
            return
        Progress.show("(filling a %d MiB image)" % (self.scn.image_size // MiB))
        self.image = self.ceph.create("cfqlab-%d" % os.getpid(), self.scn.image_size,
                                      not self.args.sparse, self.lock)

    def cleanup(self):
        for p in self.procs:
            stop_proc(p, 2)
        if self.ceph:
            if self.args.keep_image:
                self.ceph.images = []
            self.ceph.stop()
        remove_sock_dirs()
        if self.restore_sched:
            f, old = self.restore_sched
            try:
                with open(f, "w") as fh:
                    fh.write(old + "\n")
            except OSError:
                pass
        if self.own_image and self.image and not self.args.keep_image:
            try:
                os.unlink(self.image)
            except OSError:
                pass

    def run(self):
        scn = self.scn
        args = self.args
        runnable = []
        skipped = {}
        for s in self.systems:
            why = s.check(self)
            if why:
                skipped[s.name] = why
                note("%s: skipped: %s" % (s.name, why))
            else:
                runnable.append(s)
        # Throttled peers need fifo's capacity: fifo runs first in round 1.
        fifo = [s for s in runnable if s.kind == "ours" and s.sched == "fifo" and not s.overrides]
        fifo = fifo[0] if fifo else next((s for s in runnable
                                          if s.kind == "ours" and s.sched == "fifo"), None)
        steps = args.rounds * len(runnable)
        solo_tenants = []
        if args.solo:
            want = None if args.solo == "*" else set(args.solo.split(","))
            solo_tenants = [t for t in scn.tenants if t.workload in FIO_WORKLOADS + FS_WORKLOADS
                            and (want is None or t.name in want)]
            if want and want - {t.name for t in solo_tenants}:
                raise LabError("--solo: no tenant %s" % ", ".join(sorted(want - {t.name for t in solo_tenants})))
        steps += len(solo_tenants)
        Progress.start(steps)
        self.prepare_image()
        results = {s.name: [] for s in runnable}
        errors = {s.name: [] for s in runnable}
        solo = {}
        solo_sched = self.solo_sched()
        for t in solo_tenants:
            st, en = t.window(scn.duration)
            Progress.next("solo %s on %s" % (t.name, solo_sched))
            sysd = os.path.join(self.out, "runs", "solo-%s" % t.name)
            os.makedirs(sysd, exist_ok=True)
            s = Ours(solo_sched, solo_sched)
            with self.lock:
                cr = s.run(self, sysd, [t], en, scn.seed, shift=st)
            if cr.error:
                note("solo %s: %s" % (t.name, cr.error))
                continue
            a = analyse(self, cr, [t], en - st)
            solo[t.name] = a["tenants"].get(t.name)
        for r in range(args.rounds):
            order = list(runnable)
            if r and order:
                k = r % len(order)
                order = order[k:] + order[:k]
            if r == 0 and fifo in order:
                order.remove(fifo)
                order.insert(0, fifo)
            for s in order:
                Progress.next("round %d/%d %s" % (r + 1, args.rounds, s.name))
                sysd = os.path.join(self.out, "runs", "r%d-%s" % (r + 1, safe_name(s.name)))
                os.makedirs(sysd, exist_ok=True)
                # The simulator is cheap and deterministic per seed: it runs
                # --sim-rounds seeds in each round, and the medians take them all.
                for k in range(1 if s.server else args.sim_rounds):
                    d = sysd if k == 0 else "%s-seed%d" % (sysd, k)
                    os.makedirs(d, exist_ok=True)
                    self.run_one(s, r, k, d, fifo, results, errors, solo)
        Progress.clear()
        return self.report(runnable, skipped, results, errors, solo)

    def solo_sched(self):
        """fifo for the runs alone, unless a group has what fifo refuses
        (a boost, a latency target, a cap or a reservation): then cfq,
        with the tenant alone on the device all the same."""
        for g in self.scn.groups.values():
            if g.get("boost") or g.get("latency_target") or any(
                    g.get(q["name"]) for q in self.scn.qos_keys):
                return "cfq"
        return "fifo"

    def run_one(self, s, r, k, sysd, fifo, results, errors, solo):
        scn = self.scn
        args = self.args
        seed = scn.seed + r + 1000 * k
        try:
            if s.server:
                with self.lock:
                    cr = s.run(self, sysd, scn.tenants, scn.duration, seed)
            else:
                cr = s.run(self, sysd, scn.tenants, scn.duration, seed)
        except LabError as e:
            cr = ClientRun()
            cr.error = str(e)
        if cr.error:
            errors[s.name].append(cr.error)
            note("round %d %s: %s" % (r + 1, s.name, cr.error))
            return
        a = analyse(self, cr, scn.tenants, scn.duration, solo if args.solo else None)
        if getattr(cr, "server_stats", None) is not None:
            a["server_stats"] = server_summary(cr.server_stats)
        if getattr(cr, "limits", None):
            a["limits_bps"] = cr.limits
        a["events"] = [{"t": round(w - cr.t0, 3), "command": c, "answer": ans}
                       for w, c, ans in cr.events]
        results[s.name].append(a)
        if s is fifo and self.capacity_bps is None and a.get("total_mibs"):
            self.capacity_bps = a["total_mibs"] * MiB

    def report(self, runnable, skipped, results, errors, solo):
        scn = self.scn
        rep = {"scenario": {
            "name": scn.name, "path": scn.path, "duration_s": scn.duration,
            "emulate": scn.emulate, "image_size": scn.image_size,
            "image_rbd": self.image if self.ceph else None,
            "overrides": scn.overrides, "share_unit": self.args.share_unit,
            "rounds": self.args.rounds,
            "groups": list(scn.groups.values()),
            "tenants": [dict(t.d) for t in scn.tenants],
            "events": scn.events,
            "date": time.strftime("%Y-%m-%d %H:%M:%S"),
            "loadavg": open("/proc/loadavg").read().split()[:3],
            "git": git_head(self.tools.root),
        }, "systems": []}
        for s in self.systems:
            e = {"name": s.name, "kind": s.kind, "label": s.label()}
            if s.name in skipped:
                e["status"] = "skipped"
                e["why"] = skipped[s.name]
            elif not results.get(s.name):
                e["status"] = "failed"
                e["why"] = "; ".join(errors.get(s.name, [])) or "no result"
            else:
                c = combine_rounds(results[s.name], scn.tenants)
                e["status"] = "ok"
                e.update(c)
                if errors.get(s.name):
                    e["errors"] = errors[s.name]
                e["raw_rounds"] = [strip_round(a) for a in results[s.name]]
                if results[s.name][0].get("limits_bps"):
                    e["limits_bps"] = results[s.name][0]["limits_bps"]
                for t in scn.tenants:
                    x = e["tenants"].get(t.name)
                    if x and solo.get(t.name) and x.get("iops"):
                        x["slowdown"] = solo[t.name]["iops"] / x["iops"]
                    if x and solo.get(t.name) and x.get("done_s") and solo[t.name].get("done_s"):
                        x["done_slowdown"] = x["done_s"] / solo[t.name]["done_s"]
            rep["systems"].append(e)
        rep["solo"] = {k: {"iops": v["iops"], "mibs": v["mibs"], "lat_ms": v["lat_ms"],
                           "done_s": v.get("done_s"), "scheduler": self.solo_sched()}
                       for k, v in solo.items() if v}
        text = table(rep)
        with open(os.path.join(self.out, "report.txt"), "w") as f:
            f.write(text)
        plots = []
        if not self.args.no_plots:
            plots = make_plots(self.out, rep)
        rep["plots"] = plots
        for e in rep["systems"]:
            for x in (e.get("tenants") or {}).values():
                if x.get("bins"):
                    x["cdf_ms"] = cdf_points(x["bins"])
                elif x.get("cdf"):
                    x["cdf_ms"] = x["cdf"]
                x.pop("bins", None)
                x.pop("cdf", None)
        with open(os.path.join(self.out, "report.json"), "w") as f:
            json.dump(rep, f, indent=1, sort_keys=False)
        return rep, text
