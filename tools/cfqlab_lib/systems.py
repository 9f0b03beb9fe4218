"""Systems: what serves the tenants.  Ours (cfq, fifo: our server with
its control socket), Sim (tools/cfqsim on the same device model), and
Peer, the base of the stock servers in peers.py."""

import json
import os
import subprocess

from .clients import ClientRun, run_clients
from .common import LabError, ctl_call, drop_caches, fresh, sock_path, stop_proc, wait_path
from .util import note, tail



def launch(lab, rundir, args):
    """Start a server: ARGS written to RUNDIR/server.cmd, the page cache
    dropped, its output to RUNDIR/server.log, the process in lab.procs (so
    that the lab stops it).  Returns the process and the open log."""
    with open(os.path.join(rundir, "server.cmd"), "w") as f:
        f.write(" ".join(args) + "\n")
    log = open(os.path.join(rundir, "server.log"), "w")
    drop_caches()
    srv = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT)
    lab.procs.append(srv)
    return srv, log

def our_server_args(lab, sock, tenants, sched, control=None, filters=()):
    """nbdkit with our plugin on the lab's scenario and image, listening
    on SOCK, with SCHED, a thread per request the deepest of TENANTS
    keeps (at least 16), FILTERS before the plugin, the control socket
    CONTROL if one, and the scenario's overrides."""
    args = ["nbdkit", "-f", "--exit-with-parent", "-U", sock,
            "--threads", str(max(16, max(t.iodepth for t in tenants)))]
    args += ["--filter=" + f for f in filters]
    args += [lab.tools.plugin, "config=" + os.path.abspath(lab.scn.path),
             "file=" + lab.image]
    if control:
        args.append("control=" + control)
    args.append("scheduler=" + sched)
    if lab.ceph:
        args += ["backend=rbd", "conf=" + lab.ceph.conf]
    return args + lab.scn.overrides


def split_group_overrides(spec, overrides):
    """A system's overrides split into the server's KEY=VALUE and the
    groups' settings: group.NAME.KEY=VALUE -> (NAME, KEY, VALUE) (a group
    name may hold dots, a key does not)."""
    plain, groups = [], []
    for o in overrides:
        k, _, v = o.partition("=")
        if not k.startswith("group."):
            plain.append(o)
            continue
        name, _, key = k[len("group."):].rpartition(".")
        if not name or not key or not v:
            raise LabError("system %r: %r is not group.NAME.KEY=VALUE" % (spec, o))
        groups.append((name, key, v))
    return plain, groups


def unknown_group(scn, group_ov):
    """Why GROUP_OV names a group SCN has not, or None."""
    for g, _, _ in group_ov:
        if g not in scn.groups:
            return "no group %r in the scenario (%s)" % (g, ", ".join(scn.groups))
    return None


class System:
    kind = "?"
    server = True

    def __init__(self, name, sched=None, overrides=()):
        self.name = name
        self.sched = sched
        # group.NAME.KEY=VALUE: a group's key, set on the control socket
        # (qos NAME KEY VALUE) before the clients start.
        self.overrides, self.group_ov = split_group_overrides(name, overrides)

    def label(self):
        return self.name

    def check(self, lab):
        """None if this system can run the scenario here, else why not."""
        return None


def qos_needs_cfq(sched, scn):
    """Why SCHED cannot serve SCN (a group with a cap or a reservation
    under fifo, which the server and cfqsim refuse), or None."""
    if sched != "fifo":
        return None
    for g in scn.groups.values():
        for q in scn.qos_keys:
            k = q["name"]
            if g.get(k):
                return ("group %s has %s: caps and reservations need scheduler = cfq"
                        % (g["name"], k))
    return None


class Ours(System):
    kind = "ours"

    def label(self):
        s = "ours, scheduler=%s" % self.sched
        ov = self.overrides + ["%s %s=%s" % x for x in self.group_ov]
        return s + (" " + " ".join(ov) if ov else "")

    def check(self, lab):
        if not os.path.exists(lab.tools.plugin):
            return "plugin not built (%s)" % lab.tools.plugin
        return unknown_group(lab.scn, self.group_ov) or qos_needs_cfq(self.sched, lab.scn)

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        sock = sock_path(rundir, "nbd.sock")
        ctl = sock_path(rundir, "ctl.sock")
        fresh(sock, ctl)
        args = our_server_args(lab, sock, tenants, self.sched, control=ctl)
        args += self.overrides + lab.args.server_arg
        srv, log = launch(lab, rundir, args)
        try:
            if not (wait_path(sock, srv, 30) and wait_path(ctl, srv, 30)):
                log.flush()
                raise LabError("server did not start: %s" % tail(rundir, "server.log"))
            for g, k, v in self.group_ov:
                ans = ctl_call(ctl, "qos %s %s %s" % (g, k, v))
                if ans.strip() != "ok":
                    raise LabError("qos %s %s %s: %s" % (g, k, v, ans.strip()))
            ctl_call(ctl, "reset")
            targets = {t.name: ("nbd+unix:///%s?socket=%s" % (t.export, sock), 0)
                       for t in tenants}

            def event(cmd):
                return ctl_call(ctl, cmd)
            cr = run_clients(lab, scn, tenants, targets, rundir, duration, seed,
                             event, shift)
            try:
                st = ctl_call(ctl, "stats")
                cr.server_stats = json.loads(st)
                with open(os.path.join(rundir, "stats.json"), "w") as f:
                    f.write(st + "\n")
            except (OSError, ValueError) as e:
                cr.server_stats = None
                note("%s: stats: %s" % (self.name, e))
            if srv.poll() is not None and not cr.error:
                cr.error = "server died during the run: %s" % tail(rundir, "server.log")
            return cr
        finally:
            stop_proc(srv)
            log.close()


class Sim(System):
    kind = "sim"
    server = False

    def label(self):
        s = "cfqsim, scheduler=%s" % self.sched
        return s + (" " + " ".join(self.overrides) if self.overrides else "")

    def check(self, lab):
        if self.group_ov:
            return "group.NAME.KEY overrides are for our server and qsd"
        if not os.access(lab.tools.cfqsim, os.X_OK):
            return "cfqsim not built"
        if lab.scn.emulate in ("none", None):
            return ("the scenario runs on the real disk (emulate=none): the "
                    "simulator has no model of it")
        return qos_needs_cfq(self.sched, lab.scn)

    def run(self, lab, rundir, tenants, duration, seed, shift=0.0):
        scn = lab.scn
        cmd = [lab.tools.cfqsim, "--json", "--duration", "%dms" % round(duration * 1000),
               "--seed", str(seed), "--sched", self.sched]
        # The model's capacity is the image's size, as in our server,
        # unless the scenario or --set names one (our server keeps it too).
        if "capacity" not in (scn.m["device"].get("model") or {}):
            cmd += ["--dev", "capacity=%d" % scn.image_size]
        for o in scn.overrides + self.overrides:
            cmd += ["--set", o]
        if scn.only or len(tenants) != len(scn.tenants):
            cmd += ["--only", ",".join(t.name for t in tenants)]
        cmd.append(scn.path)
        with open(os.path.join(rundir, "sim.cmd"), "w") as f:
            f.write(" ".join(cmd) + "\n")
        p = subprocess.run(cmd, capture_output=True, text=True)
        cr = ClientRun()
        cr.t0 = 0.0
        if p.returncode != 0:
            cr.error = "cfqsim failed (exit %d): %s" % (
                p.returncode, " | ".join(p.stderr.strip().splitlines()[-3:]))
            return cr
        with open(os.path.join(rundir, "sim.json"), "w") as f:
            f.write(p.stdout)
        cr.sim = json.loads(p.stdout)
        return cr


class Peer(System):
    """A peer: stock servers on the image, clients address the whole file."""
    serves_rbd = False          # it can serve an RBD image (--ceph)

    def check(self, lab):
        if lab.scn.emulate not in ("none", None):
            return ("emulate=%s: the peers have no device model, only our "
                    "server emulates one" % lab.scn.emulate)
        if lab.ceph and not self.serves_rbd:
            return "the image is in Ceph: this peer serves a file on a local disk"
        return None
