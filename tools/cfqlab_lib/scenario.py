"""The scenario: tools/cfqconf --json resolves the file (one parser,
core/config.c), and this gives its tenants, groups, exports and events
to the rest of the lab."""

import json
import os
import subprocess

from .common import LabError
from .util import MiB, NS, ROOT

# Tenants' workloads run by fio, and those on a file system of their own.


FIO_WORKLOADS = ("fio", "mmap")
FS_WORKLOADS = ("fs_mark", "fsync-tester", "dd", "mmap")


class Tools:
    def __init__(self, build):
        self.root = build or ROOT
        t = os.path.join(self.root, "tools")
        self.cfqconf = os.path.join(t, "cfqconf")
        self.cfqsim = os.path.join(t, "cfqsim")
        self.plugin = os.path.join(self.root, "plugin", "nbdkit-cfq-plugin.so")
        for p in (self.cfqconf,):
            if not os.access(p, os.X_OK):
                raise LabError("%s is not built (run make)" % p)


class Tenant:
    def __init__(self, d, scn):
        self.d = d
        self.name = d["name"]
        self.export = d["export"]
        self.group = d["group"]
        self.conns = int(d["connections"])
        self.rw = d["rw"]
        self.bs = int(d["bs"])
        self.iodepth = int(d["iodepth"])
        self.start = d["start_ns"] / NS
        self.stop = d["stop_ns"] / NS if d.get("stop_ns") else None
        self.workload = d.get("workload", "fio")
        self.cls = d.get("class", "be")
        exp = scn.exports[self.export]
        self.exp_offset = exp["offset"]
        self.exp_size = exp["size"]

    def window(self, duration):
        """(start, stop) in seconds into the run."""
        stop = self.stop if self.stop is not None else duration
        return self.start, min(stop, duration)

    def demand(self):
        """Bytes/s the tenant asks for at most, or None: its rate caps, and
        with a think time at most iodepth requests per think time per
        connection (an upper bound: it ignores the service time)."""
        d = self.d
        caps = []
        if d.get("thinktime_ns"):
            per_think = d.get("thinktime_blocks") or self.iodepth
            caps.append(per_think * self.bs * self.conns * NS / d["thinktime_ns"])
        if d.get("rate"):
            caps.append(d["rate"] * self.conns)
        if d.get("rate_iops"):
            caps.append(d["rate_iops"] * self.bs * self.conns)
        return min(caps) if caps else None


class Scenario:
    def __init__(self, path, tools, overrides, image_size, duration, device, only=None):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.tools = tools
        self.overrides = list(overrides)
        if device:
            self.overrides.append("emulate=%s" % device)
        # First pass on an enormous device: which regions do the exports
        # need?  Then the model on the image the lab will serve.
        probe = self.cfqconf(1 << 50)
        need = 0
        open_ended = False
        for e in probe["exports"]:
            if e.get("file"):
                raise LabError("%s: export %r has its own file: the lab serves "
                               "one image" % (path, e["name"]))
            end = e["offset"] + e["size"]
            if end >= 1 << 50:
                open_ended = True
            else:
                need = max(need, end)
        if image_size:
            self.image_size = image_size
        elif open_ended:
            self.image_size = max(need, 2 << 30)
        else:
            self.image_size = need
        self.image_size = (self.image_size + MiB - 1) // MiB * MiB
        if self.image_size < need:
            raise LabError("--image-size %d is smaller than the exports need (%d)"
                           % (self.image_size, need))
        self.m = self.cfqconf(self.image_size)
        m = self.m
        self.emulate = m["device"].get("emulate") or "none"
        self.groups = {g["name"]: g for g in m["groups"]}
        # Which group keys are caps and reservations: core's key table,
        # as cfqconf lists it.
        self.qos_keys = m["qos_keys"]
        self.exports = {e["name"]: e for e in m["exports"]}
        self.tenants = [Tenant(t, self) for t in m.get("tenants", [])]
        if only:
            names = [n for n in only.split(",") if n]
            bad = [n for n in names if n not in [t.name for t in self.tenants]]
            if bad:
                raise LabError("--only: no tenant %s in %s" % (", ".join(bad), path))
            self.tenants = [t for t in self.tenants if t.name in names]
            self.only = ",".join(t.name for t in self.tenants)
        else:
            self.only = None
        if not self.tenants:
            raise LabError("%s: no [tenant] section: nothing to run" % path)
        sim = m.get("sim") or {}
        self.duration = duration or (sim.get("duration_ns", 10 * NS) / NS)
        self.seed = int(sim.get("seed", 1))
        self.events = sorted(m.get("events", []), key=lambda e: e["at_ns"])
        for t in self.tenants:
            if t.start >= self.duration:
                raise LabError("tenant %s starts at %gs, after the run's end (%gs)"
                               % (t.name, t.start, self.duration))

    def cfqconf(self, size):
        # The lab serves its own image: a placeholder device file (with
        # --size, cfqconf does not open it).
        cmd = [self.tools.cfqconf, "--json", "--size", str(size), self.path,
               "file=/cfqlab/image"]
        cmd += self.overrides
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            raise LabError("scenario refused:\n" + (p.stderr or p.stdout).strip())
        return json.loads(p.stdout)

    def weights_at(self, t_rel, applied):
        """Group weights at T_REL seconds, after the events applied by then.
        APPLIED: [(t_rel, command)] as really applied during the run."""
        w = {g: self.groups[g]["weight"] for g in self.groups}
        for at, cmd in applied:
            if at > t_rel:
                break
            p = cmd.split()
            if len(p) == 3 and p[0] == "weight" and p[1] in w:
                w[p[1]] = int(p[2])
        return w
