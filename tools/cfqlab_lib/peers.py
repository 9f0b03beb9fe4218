"""The peers: the kernel's BFQ with cgroup weights, qemu-storage-daemon's
throttle groups, nbdkit's rate filter, and the kernel's io controller
with iocost (the fairness matrix's).  A peer that cannot run here says
why and is skipped."""

import json
import os
import re
import shutil
import socket
import subprocess
import time

from .clients import ClientRun, fio_time, run_clients
from .common import (LabError, drop_caches, fresh, load_fio_json, sock_path, stop_proc,
                     wait_path)
from .systems import Peer, System, launch, our_server_args, qos_needs_cfq, unknown_group
from .util import note, parse_size, tail


class BFQ(Peer):
    kind = "bfq"

    def label(self):
        return "kernel BFQ + blkio weights, nbdkit file cache=none per tenant"

    def check(self, lab):
        why = Peer.check(self, lab)
        if why:
            return why
        if os.geteuid() != 0:
            return "needs root (I/O scheduler and cgroups)"
        if shutil.which("nbdkit") is None:
            return "nbdkit not installed"
        dev = block_device_of(lab.image_dir)
        if dev is None:
            return "cannot tell which disk holds %s" % lab.image_dir
        schedf = "/sys/block/%s/queue/scheduler" % dev
        try:
            with open(schedf) as f:
                have = f.read()
        except OSError:
            return "%s: no I/O scheduler file" % dev
        if "bfq" not in have.replace("[", " ").replace("]", " ").split():
            return "%s has no bfq scheduler (modprobe bfq): %s" % (dev, have.strip())
        self.dev = dev
        self.cg = cgroup_weight_file()
        if self.cg is None:
            return "no cgroup with BFQ weights (blkio.bfq.weight or io.bfq.weight)"
        return None

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        base, wfile = self.cg
        schedf = "/sys/block/%s/queue/scheduler" % self.dev
        with open(schedf) as f:
            old = re.search(r"\[(\S+)\]", f.read()).group(1)
        made, srvs = [], []
        logs = []
        try:
            with open(schedf, "w") as f:
                f.write("bfq\n")
            lab.restore_sched = (schedf, old)
            for g in scn.groups:
                d = os.path.join(base, "cfqlab-%d-%s" % (os.getpid(), g))
                os.makedirs(d, exist_ok=True)
                made.append(d)
                with open(os.path.join(d, wfile), "w") as f:
                    f.write("%d\n" % scn.groups[g]["weight"])
            drop_caches()
            targets = {}
            for t in tenants:
                sock = os.path.join(rundir, "t-%s.sock" % t.name)
                fresh(sock)
                d = os.path.join(base, "cfqlab-%d-%s" % (os.getpid(), t.group))
                cls = {"rt": "1", "be": "2", "idle": "3"}.get(scn.groups[t.group]["class"], "2")
                args = ["ionice", "-c", cls]
                if cls != "3":
                    args += ["-n", str(scn.groups[t.group]["prio"])]
                args += ["nbdkit", "-f", "--exit-with-parent", "-U", sock,
                         "--threads", str(max(16, t.iodepth)), "file", lab.image,
                         "cache=none"]
                log = open(os.path.join(rundir, "server-%s.log" % t.name), "w")
                logs.append(log)
                procs = os.path.join(d, "cgroup.procs")
                p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=_join_cgroup(procs))
                srvs.append(p)
                lab.procs.append(p)
                targets[t.name] = ("nbd+unix:///?socket=%s" % sock, t.exp_offset)
            for t, p in zip(tenants, srvs):
                if not wait_path(os.path.join(rundir, "t-%s.sock" % t.name), p, 30):
                    raise LabError("nbdkit file for %s did not start" % t.name)

            def event(cmd):
                a = cmd.split()
                if len(a) == 3 and a[0] == "weight" and a[1] in scn.groups:
                    with open(os.path.join(base, "cfqlab-%d-%s" % (os.getpid(), a[1]),
                                           wfile), "w") as f:
                        f.write("%d\n" % int(a[2]))
                    return "ok"
                return "error: BFQ has no equivalent of %r" % cmd
            cr = run_clients(lab, scn, tenants, targets, rundir, duration, seed,
                             event, shift)
            return cr
        finally:
            for p in srvs:
                stop_proc(p)
            for log in logs:
                log.close()
            try:
                with open(schedf, "w") as f:
                    f.write(old + "\n")
                lab.restore_sched = None
            except OSError as e:
                note("could not restore %s to %s: %s" % (schedf, old, e))
            for d in made:
                for _ in range(50):
                    try:
                        os.rmdir(d)
                        break
                    except OSError:
                        time.sleep(0.1)


def _join_cgroup(procs):
    def f():
        with open(procs, "w") as fh:
            fh.write("%d\n" % os.getpid())
    return f


def block_device_of(path):
    """The whole-disk name (vda) holding PATH, or None."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    maj, mn = os.major(st.st_dev), os.minor(st.st_dev)
    sysp = "/sys/dev/block/%d:%d" % (maj, mn)
    if not os.path.exists(sysp):
        return None
    real = os.path.realpath(sysp)
    if os.path.exists(os.path.join(real, "partition")):
        real = os.path.dirname(real)
    name = os.path.basename(real)
    return name if os.path.exists("/sys/block/%s/queue/scheduler" % name) else None


def cgroup_weight_file():
    """(cgroup base dir, weight file name) for BFQ weights, or None."""
    v1 = "/sys/fs/cgroup/blkio"
    if os.path.exists(os.path.join(v1, "cgroup.procs")):
        probe = os.path.join(v1, "cfqlab-probe-%d" % os.getpid())
        try:
            os.mkdir(probe)
            ok = os.path.exists(os.path.join(probe, "blkio.bfq.weight"))
            os.rmdir(probe)
            if ok:
                return v1, "blkio.bfq.weight"
        except OSError:
            pass
    for v2 in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified"):
        ctl = os.path.join(v2, "cgroup.controllers")
        try:
            with open(ctl) as f:
                if "io" not in f.read().split():
                    continue
            sub = os.path.join(v2, "cgroup.subtree_control")
            with open(sub, "w") as f:
                f.write("+io\n")
            probe = os.path.join(v2, "cfqlab-probe-%d" % os.getpid())
            os.mkdir(probe)
            ok = os.path.exists(os.path.join(probe, "io.bfq.weight"))
            os.rmdir(probe)
            if ok:
                return v2, "io.bfq.weight"
        except OSError:
            continue
    return None


class Throttled(Peer):
    """A peer that caps each group at weight/sum(weights) of a capacity our
    fifo server measured in this run (the first fifo run)."""

    def limits(self, lab, weights):
        cap = lab.capacity_bps
        if cap is None:
            raise LabError("no capacity: the fifo system has not finished a run")
        tw = sum(weights.values())
        return {g: max(4096, int(cap * w / tw)) for g, w in weights.items()}

    def check(self, lab):
        why = Peer.check(self, lab)
        if why:
            return why
        if not any(s.kind == "ours" and s.sched == "fifo" for s in lab.systems):
            return "needs the fifo system in the same run: its throughput sets the limits"
        why = qos_needs_cfq("fifo", lab.scn)
        if why:
            return "needs the fifo system, which cannot run here (%s): its throughput sets the limits" % why
        return None


# A group's caps (its keys as in the config file) and the throttle-group
# limits that are qemu's for them.
QSD_CAPS = {"iops_max": "iops-total", "read_iops_max": "iops-read",
            "write_iops_max": "iops-write", "bps_max": "bps-total",
            "read_bps_max": "bps-read", "write_bps_max": "bps-write"}


class QSD(Throttled):
    """qemu-storage-daemon: a throttle group per group, over the image (the
    real disk) or, with an emulated device, over our server with
    scheduler=fifo serving the scenario's exports on the model.  The
    limits: the weight share of fifo's capacity (bps-total), or the caps
    the system names (qsd:group.NAME.bps_max=20M,...; groups not named are
    not throttled)."""
    kind = "qsd"
    serves_rbd = True

    def __init__(self, spec, overrides=()):
        Throttled.__init__(self, spec, None, overrides)
        if self.overrides:
            raise LabError("system %r: qsd takes only group.NAME.KEY=VALUE (KEY: %s)"
                           % (spec, ", ".join(QSD_CAPS)))
        self.caps = {}
        for g, k, v in self.group_ov:
            if k not in QSD_CAPS:
                raise LabError("system %r: %s: qsd caps a group by %s"
                               % (spec, k, ", ".join(QSD_CAPS)))
            n = parse_size(v) if "bps" in k else int(v)
            if n <= 0:
                raise LabError("system %r: %s=%s: a cap is above 0" % (spec, k, v))
            self.caps.setdefault(g, {})[QSD_CAPS[k]] = n

    def label(self):
        if self.caps:
            how = "caps " + ", ".join(
                "%s %s" % (g, " ".join("%s=%d" % kv for kv in sorted(c.items())))
                for g, c in sorted(self.caps.items()))
        else:
            how = "bps = weight share of fifo's capacity"
        return "qemu-storage-daemon, a throttle group per group (%s)%s" % (
            how, "" if self.emulate in ("none", None) else
            ", over our server with scheduler=fifo emulating %s" % self.emulate)

    emulate = None

    def check(self, lab):
        if shutil.which("qemu-storage-daemon") is None:
            return "qemu-storage-daemon not installed"
        why = unknown_group(lab.scn, self.group_ov)
        if why:
            return why
        self.emulate = lab.scn.emulate
        if self.emulate not in ("none", None):
            if not os.path.exists(lab.tools.plugin):
                return "plugin not built (%s): it serves the emulated device" % lab.tools.plugin
            why = qos_needs_cfq("fifo", lab.scn)
            if why:
                return "the emulated device is served by fifo, which cannot run here (%s)" % why
        if self.caps:
            return None
        return Throttled.check(self, lab) if self.emulate in ("none", None) else (
            None if any(s.kind == "ours" and s.sched == "fifo" for s in lab.systems)
            else "needs the fifo system in the same run: its throughput sets the limits")

    def tg_limits(self, lab, weights):
        if self.caps:
            return {g: dict(self.caps.get(g, {})) for g in weights}
        return {g: {"bps-total": v} for g, v in self.limits(lab, weights).items()}

    def backend(self, lab, rundir):
        """Our server, scheduler=fifo, on the emulated device: its process,
        log and socket."""
        scn = lab.scn
        sock = sock_path(rundir, "dev.sock")
        fresh(sock)
        # No extents: the image is sparse, and qemu's NBD server answers a
        # read of a hole from the block status without reading (nor
        # throttling) it.
        args = our_server_args(lab, sock, scn.tenants, "fifo",
                               filters=["noextents"])
        with open(os.path.join(rundir, "backend.cmd"), "w") as f:
            f.write(" ".join(args) + "\n")
        log = open(os.path.join(rundir, "backend.log"), "w")
        try:
            p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
        except OSError as e:
            log.close()
            raise LabError("our fifo server under qsd: %s" % e)
        lab.procs.append(p)
        if not wait_path(sock, p, 30):
            stop_proc(p)
            log.close()
            raise LabError("our fifo server under qsd did not start: %s"
                           % tail(rundir, "backend.log"))
        return p, log, sock

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        sock = sock_path(rundir, "nbd.sock")
        qmp = sock_path(rundir, "qmp.sock")
        fresh(sock, qmp)
        weights = {g: scn.groups[g]["weight"] for g in scn.groups}
        lim = self.tg_limits(lab, weights)
        gid = {g: "tg%d" % i for i, g in enumerate(scn.groups)}
        used = sorted({t.export for t in tenants})
        emulated = self.emulate not in ("none", None)
        be = None
        args = ["setpriv", "--pdeathsig", "KILL", "qemu-storage-daemon"]
        if lab.ceph:
            args += ["--blockdev", lab.ceph.qsd_blockdev(lab.image, "f")]
        elif not emulated:
            args += ["--blockdev", "driver=file,node-name=f,filename=%s,aio=io_uring,"
                     "cache.direct=on" % lab.image]
        for g in scn.groups:
            args += ["--object", json.dumps({"qom-type": "throttle-group", "id": gid[g],
                                             "limits": lim[g]})]
        try:
            if emulated:
                be = self.backend(lab, rundir)
            for i, e in enumerate(used):
                ex = scn.exports[e]
                if emulated:
                    # Each export's own NBD connection to the model.
                    args += ["--blockdev", "driver=nbd,node-name=r%d,server.type=unix,"
                             "server.path=%s,export=%s" % (i, be[2], e)]
                else:
                    args += ["--blockdev", "driver=raw,node-name=r%d,file=f,offset=%d,size=%d"
                             % (i, ex["offset"], ex["size"])]
                args += ["--blockdev", "driver=throttle,node-name=t%d,throttle-group=%s,file=r%d"
                         % (i, gid[ex["group"]], i)]
            args += ["--nbd-server", "addr.type=unix,addr.path=%s" % sock]
            for i, e in enumerate(used):
                args += ["--export", "type=nbd,id=e%d,node-name=t%d,name=%s,writable=on"
                         % (i, i, e)]
            args += ["--chardev", "socket,id=qmp,path=%s,server=on,wait=off" % qmp,
                     "--monitor", "chardev=qmp"]
            srv, log = launch(lab, rundir, args)
        except BaseException:
            if be:
                stop_proc(be[0])
                be[1].close()
            raise
        try:
            if not (wait_path(sock, srv, 30) and wait_path(qmp, srv, 30)):
                raise LabError("qemu-storage-daemon did not start: %s"
                               % tail(rundir, "server.log"))
            targets = {t.name: ("nbd+unix:///%s?socket=%s" % (t.export, sock), 0)
                       for t in tenants}

            def event(cmd):
                a = cmd.split()
                if len(a) == 3 and a[0] == "weight" and a[1] in weights and not self.caps:
                    weights[a[1]] = int(a[2])
                    new = self.tg_limits(lab, weights)
                    for g in weights:
                        r = qmp_call(qmp, "qom-set", {"path": gid[g], "property": "limits",
                                                      "value": new[g]})
                        if "error" in r:
                            return "error: %s" % r["error"]
                    return "ok"
                return "error: qemu-storage-daemon has no equivalent of %r" % cmd
            cr = run_clients(lab, scn, tenants, targets, rundir, duration, seed,
                             event, shift)
            if not self.caps:
                cr.limits = {g: v["bps-total"] for g, v in lim.items()}
            if be and be[0].poll() is not None and not cr.error:
                cr.error = "our fifo server under qsd died: %s" % tail(rundir, "backend.log")
            return cr
        finally:
            stop_proc(srv)
            log.close()
            if be:
                stop_proc(be[0])
                be[1].close()


def qmp_call(path, cmd, args):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    s.connect(path)
    f = s.makefile("rw")
    try:
        f.readline()
        f.write(json.dumps({"execute": "qmp_capabilities"}) + "\n")
        f.flush()
        f.readline()
        f.write(json.dumps({"execute": cmd, "arguments": args}) + "\n")
        f.flush()
        while True:
            r = json.loads(f.readline())
            if "return" in r or "error" in r:
                return r
    finally:
        f.close()
        s.close()


class Rate(Throttled):
    kind = "rate"

    def label(self):
        return "nbdkit file cache=none + rate filter, a server per group (rate = weight share of fifo's capacity)"

    def check(self, lab):
        why = Throttled.check(self, lab)
        if why:
            return why
        p = subprocess.run(["nbdkit", "--filter=rate", "null", "--dump-plugin"],
                           capture_output=True)
        if p.returncode != 0:
            return "nbdkit has no rate filter (nbdkit-rate-filter)"
        return None

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        weights = {g: scn.groups[g]["weight"] for g in scn.groups}
        lim = self.limits(lab, weights)
        used = sorted({t.group for t in tenants})
        srvs, logs, targets = {}, [], {}
        rate_files = {}
        drop_caches()
        try:
            for g in used:
                sock = os.path.join(rundir, "g-%s.sock" % g)
                fresh(sock)
                rf = os.path.join(rundir, "g-%s.rate" % g)
                with open(rf, "w") as f:
                    f.write("%d\n" % (lim[g] * 8))
                rate_files[g] = rf
                args = ["nbdkit", "-f", "--exit-with-parent", "-U", sock,
                        "--threads", str(max(16, max(t.iodepth for t in tenants))),
                        "--filter=rate", "file", lab.image, "cache=none",
                        "rate=%d" % (lim[g] * 8), "rate-file=%s" % rf]
                log = open(os.path.join(rundir, "server-%s.log" % g), "w")
                logs.append(log)
                p = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
                srvs[g] = p
                lab.procs.append(p)
            for g, p in srvs.items():
                if not wait_path(os.path.join(rundir, "g-%s.sock" % g), p, 30):
                    raise LabError("nbdkit rate server for %s did not start" % g)
            for t in tenants:
                targets[t.name] = ("nbd+unix:///?socket=%s" % os.path.join(
                    rundir, "g-%s.sock" % t.group), t.exp_offset)

            def event(cmd):
                a = cmd.split()
                if len(a) == 3 and a[0] == "weight" and a[1] in weights:
                    weights[a[1]] = int(a[2])
                    new = self.limits(lab, weights)
                    for g, rf in rate_files.items():
                        with open(rf + ".tmp", "w") as f:
                            f.write("%d\n" % (new[g] * 8))
                        os.rename(rf + ".tmp", rf)
                    return "ok"
                return "error: the rate filter has no equivalent of %r" % cmd
            cr = run_clients(lab, scn, tenants, targets, rundir, duration, seed,
                             event, shift)
            cr.limits = lim
            return cr
        finally:
            for p in srvs.values():
                stop_proc(p)
            for log in logs:
                log.close()


# ---- the kernel's io controller with iocost, as a peer of the matrix ----

def _mounts():
    try:
        with open("/proc/mounts") as f:
            return [l.split() for l in f]
    except OSError:
        return []


def _kconfig(name):
    """'y', 'm', 'n' from /proc/config.gz, or None when it cannot be read."""
    import gzip
    try:
        with gzip.open("/proc/config.gz", "rt") as f:
            for line in f:
                if line.startswith(name + "="):
                    return line.strip().split("=", 1)[1]
                if line.startswith("# %s is not set" % name):
                    return "n"
    except OSError:
        return None
    return "n"


def iocost_where():
    """(cgroup v2 root, None) when the io controller with iocost can be had,
    or (None, why not)."""
    if os.geteuid() != 0:
        return None, "needs root (cgroups and the root cgroup's io.cost.qos)"
    if _kconfig("CONFIG_BLK_CGROUP_IOCOST") == "n":
        return None, "the kernel is built without CONFIG_BLK_CGROUP_IOCOST"
    ms = _mounts()
    v2 = [m[1] for m in ms if len(m) > 2 and m[2] == "cgroup2"]
    v1 = [m[1] for m in ms if len(m) > 3 and m[2] == "cgroup"
          and "blkio" in m[3].split(",")]
    if not v2:
        return None, "no cgroup v2 hierarchy is mounted"
    root = v2[0]
    try:
        with open(os.path.join(root, "cgroup.controllers")) as f:
            ctls = f.read().split()
    except OSError as e:
        return None, "%s: %s" % (root, e)
    if "io" not in ctls:
        if v1:
            return None, ("the io controller is bound to the cgroup v1 blkio hierarchy "
                          "mounted at %s (cgroup v2 at %s offers only: %s); the lab "
                          "does not unmount the machine's cgroups"
                          % (v1[0], root, " ".join(ctls) or "nothing"))
        return None, "cgroup v2 at %s has no io controller (%s)" % (root, " ".join(ctls))
    if not os.path.exists(os.path.join(root, "io.cost.qos")):
        return None, ("%s has no io.cost.qos (the kernel has no iocost, or %s is not "
                      "the root of the hierarchy)" % (root, root))
    return root, None


class IOCost(System):
    """The kernel's io controller: iocost (io.cost.qos enabled on the disk
    holding the image, the default linear cost model) and io.weight per
    group, one cgroup v2 per group.  Its tenants are fio processes on the
    image itself (io_uring, O_DIRECT, the export's region), one per tenant
    in its group's cgroup: no NBD server in between, so it has its own solo
    runs.  The root's io.cost.qos for the disk is restored afterwards and
    the cgroups removed, also on failure."""
    kind = "iocost"
    solo_family = "local"

    def label(self):
        return "kernel io controller, iocost + io.weight, fio on the image per tenant"

    def check(self, lab):
        if lab.scn.emulate not in ("none", None):
            return ("emulate=%s: the peers have no device model, only our server "
                    "emulates one" % lab.scn.emulate)
        root, why = iocost_where()
        if why:
            return why
        dev = block_device_of(lab.image_dir)
        if dev is None:
            return "cannot tell which disk holds %s" % lab.image_dir
        self.root = root
        with open("/sys/block/%s/dev" % dev) as f:
            self.devno = f.read().strip()
        return None

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        root = self.root
        qos = os.path.join(root, "io.cost.qos")
        old = "enable=0"
        with open(qos) as f:
            for line in f:
                p = line.split()
                if p and p[0] == self.devno:
                    old = " ".join(x for x in p[1:] if x.startswith(("enable=", "ctrl=")))
        made, procs, outs = [], [], {}
        cr = ClientRun()
        try:
            with open(os.path.join(root, "cgroup.subtree_control"), "w") as f:
                f.write("+io\n")
            with open(qos, "w") as f:
                f.write("%s enable=1 ctrl=auto\n" % self.devno)
            for t in tenants:
                d = os.path.join(root, "cfqlab-%d-%s" % (os.getpid(), t.group))
                if d not in made:
                    os.makedirs(d, exist_ok=True)
                    made.append(d)
                    with open(os.path.join(d, "io.weight"), "w") as f:
                        f.write("default %d\n" % scn.groups[t.group]["weight"])
            drop_caches()
            cr.t0 = time.time()
            for i, t in enumerate(tenants):
                d = os.path.join(root, "cfqlab-%d-%s" % (os.getpid(), t.group))
                x = t.d
                job = ["fio", "--name=%s.0" % t.name, "--ioengine=io_uring", "--direct=1",
                       "--thread", "--time_based", "--norandommap", "--randrepeat=0",
                       "--filename=%s" % lab.image, "--rw=%s" % t.rw, "--bs=%d" % t.bs,
                       "--iodepth=%d" % t.iodepth,
                       "--offset=%d" % (t.exp_offset + x["offset"]), "--size=%d" % x["size"],
                       "--runtime=%s" % fio_time(duration),
                       "--randseed=%d" % (seed * 1000003 + i),
                       "--output-format=json", "--output=%s" % os.path.join(
                           rundir, "fio-%s.json" % t.name)]
                if t.rw in ("rw", "randrw", "readwrite"):
                    job.append("--rwmixread=%d" % x["rwmixread"])
                if x.get("fsync"):
                    job.append("--fsync=%d" % x["fsync"])
                log = open(os.path.join(rundir, "fio-%s.log" % t.name), "w")
                p = subprocess.Popen(job, stdout=log, stderr=subprocess.STDOUT,
                                     preexec_fn=_join_cgroup(os.path.join(d, "cgroup.procs")))
                log.close()
                procs.append(p)
                lab.procs.append(p)
                outs[t.name] = os.path.join(rundir, "fio-%s.json" % t.name)
            for p in procs:
                try:
                    p.wait(duration + 60)
                except subprocess.TimeoutExpired:
                    cr.error = "fio did not finish in %d s" % (duration + 60)
            for t, p in zip(tenants, procs):
                if p.returncode:
                    cr.error = cr.error or "fio for %s failed (exit %d)" % (t.name, p.returncode)
            if not cr.error:
                for t in tenants:
                    cr.jobs[t.name] = load_fio_json(outs[t.name])["jobs"]
            return cr
        finally:
            for p in procs:
                stop_proc(p, 2)
            try:
                with open(qos, "w") as f:
                    f.write("%s %s\n" % (self.devno, old))
            except OSError as e:
                note("could not restore %s for %s to %s: %s" % (qos, self.devno, old, e))
            for d in made:
                for _ in range(50):
                    try:
                        os.rmdir(d)
                        break
                    except OSError:
                        time.sleep(0.1)
