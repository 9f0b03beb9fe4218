"""Clients: fio jobs for the tenants (fio's nbd engine, one job a
connection), and the file-system workloads (ext4 over nbdfuse and a
direct-I/O loop device, their programs in fsclients.py), run against a
system's servers with the scenario's events at their times."""

import json
import os
import shutil
import statistics
import subprocess
import sys
import time

from .analysis import pct_from_bins
from .common import LabError, drop_caches, load_fio_json, stop_proc, wait_path
from .scenario import FIO_WORKLOADS, FS_WORKLOADS
from .util import ENTRY, MiB, NS, Progress, note, tail


def fio_time(secs):
    return "%dms" % max(1, round(secs * 1000))


def fio_jobfile(path, scn, tenants, targets, logdir, duration, seed, shift=0.0,
                mounts=None, lat_logged=()):
    """One fio job per connection of each fio tenant, and one per reader of
    each mmap tenant (on its file system, MOUNTS[name]).  TARGETS[name] =
    (uri, base): where its export is and the export's offset in that URI's
    device (0 for our server, whose exports are their own devices).  SHIFT
    moves every start earlier (solo runs start at once).  The tenants named
    in LAT_LOGGED also log each request's completion latency.  Returns the jobs
    [(tenant, k, jobname)], or [] if no tenant runs fio."""
    # The iops log without log_avg_msec holds every completed request
    # (time, 1, direction, size): the series are exact.  fio's averaged
    # logs are not: their first sample covers the time since the job's
    # start (more than a second on a loaded machine) and the last partial
    # second is sometimes never written.
    lines = ["[global]", "time_based=1", "thread=1",
             "log_unix_epoch=1", "norandommap=1",
             "randrepeat=0", "group_reporting=0", ""]
    jobs = []
    for t in tenants:
        if t.workload not in FIO_WORKLOADS:
            continue
        uri, base = targets[t.name]
        d = t.d
        start, stop = t.window(duration)
        start -= shift
        stop -= shift
        rw = t.rw + (":%d" % d["skip"] if d.get("skip") else "")
        mmap = t.workload == "mmap"
        for k in range(t.iodepth if mmap else t.conns):
            name = "%s.%d" % (t.name, k)
            jobs.append((t.name, k, name))
            lines.append("[%s]" % name)
            if mmap:
                m = mounts[t.name]
                lines += ["ioengine=mmap", "filename=%s" % m.file,
                          "size=%d" % m.file_size, "iodepth=1", "rw=randread"]
            else:
                lines += ["ioengine=nbd", "uri=%s" % uri, "rw=%s" % rw,
                          "iodepth=%d" % t.iodepth,
                          "offset=%d" % (base + d["offset"]), "size=%d" % d["size"]]
            lines += ["bs=%d" % t.bs,
                      "randseed=%d" % (seed * 1000003 + len(jobs)),
                      "runtime=%s" % fio_time(stop - start),
                      "write_iops_log=%s/%s" % (logdir, name)]
            if t.name in lat_logged:
                lines.append("write_lat_log=%s/%s" % (logdir, name))
            if not mmap:
                if t.rw in ("rw", "randrw", "readwrite"):
                    lines.append("rwmixread=%d" % d["rwmixread"])
                if d.get("thinktime_ns"):
                    lines.append("thinktime=%d" % max(1, d["thinktime_ns"] // 1000))
                    if d.get("thinktime_blocks"):
                        lines.append("thinktime_blocks=%d" % d["thinktime_blocks"])
                if d.get("rate_iops"):
                    lines.append("rate_iops=%d" % d["rate_iops"])
                if d.get("rate"):
                    lines.append("rate=%d" % d["rate"])
                if d.get("fsync"):
                    lines.append("fsync=%d" % d["fsync"])
                if d.get("number_ios"):
                    # A fixed amount of work: fio ignores number_ios in a
                    # time_based job.
                    lines += ["number_ios=%d" % d["number_ios"], "time_based=0"]
            if start > 0:
                lines.append("startdelay=%s" % fio_time(start))
            lines.append("")
    if jobs:
        with open(path, "w") as f:
            f.write("\n".join(lines))
    return jobs


def read_io_log(path):
    """fio's per-request iops log: [(time_ms, ddir, bytes)]."""
    out = []
    with open(path) as f:
        for line in f:
            p = line.split(",")
            if len(p) >= 4:
                out.append((int(p[0]), int(p[2]), int(p[3])))
    return out


class ClientRun:
    """What the clients saw in one run: per tenant, per connection, fio's
    job (JSON) and per-request log; special workloads' results."""

    def __init__(self):
        self.t0 = None            # wall time (s) the clients were started
        self.jobs = {}            # tenant -> [job json]
        self.bw = {}              # tenant -> [[(t_ms, KiB/s, ddir)]] per conn
        self.iops = {}            #   (special workloads: per-second samples)
        self.ios = {}             # tenant -> [[(t_ms, ddir, bytes)]] per conn
        self.clat = {}            # tenant -> [[(t_ms, clat_ns)]] per conn (--lat-target)
        self.windows = {}         # tenant -> [(start_s, end_s)] wall, per conn
        self.events = []          # [(wall_s, command, answer)]
        self.special = {}         # tenant -> numbers of a file-system workload
        self.error = None


# ---- file-system workloads: ext4 over nbdfuse and a direct-I/O loop device ----

def run_cmd(cmd, what, timeout=120, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    if p.returncode != 0:
        raise LabError("%s failed: %s" % (what, (p.stderr or p.stdout).strip()[-300:]))
    return p.stdout


class FsMount:
    """The tenant's export as ext4: made on the image at the export's region
    before the run (no server involved), then attached through the system's
    server: nbdfuse shows the export as a file, a loop device with direct
    I/O (so the page cache does not hide the traffic) makes it a block
    device, mounted with noinit_itable (no background zeroing)."""

    def __init__(self, lab, rundir, t, uri, base):
        self.lab, self.t, self.uri, self.base = lab, t, uri, base
        self.fusedir = os.path.join(rundir, "fuse-" + t.name)
        self.mnt = os.path.join(rundir, "mnt-" + t.name)
        self.fuse = None
        self.loop = None
        self.mounted = False
        self.file = os.path.join(self.mnt, "data")
        self.file_size = 0

    def mkfs(self):
        scn = self.lab.scn
        exp = scn.exports[self.t.export]
        run_cmd(["mkfs.ext4", "-q", "-F", "-b", "4096",
                 "-E", "offset=%d,lazy_itable_init=1,lazy_journal_init=1,nodiscard"
                 % exp["offset"], self.lab.image, "%dk" % (exp["size"] // 1024)],
                "mkfs.ext4 for tenant %s" % self.t.name)

    def attach(self):
        os.makedirs(self.fusedir, exist_ok=True)
        os.makedirs(self.mnt, exist_ok=True)
        f = os.path.join(self.fusedir, "nbd")
        cmd = ["nbdfuse"]
        if self.t.conns > 1:
            cmd += ["-C", str(self.t.conns)]
        cmd += [f, self.uri]
        self.fuse = subprocess.Popen(cmd, stdout=subprocess.DEVNULL,
                                     stderr=open(self.fusedir + ".log", "w"))
        self.lab.procs.append(self.fuse)
        if not wait_path(f, self.fuse, 30):
            raise LabError("nbdfuse for %s did not start: %s"
                           % (self.t.name, open(self.fusedir + ".log").read()[-300:]))
        size = self.lab.scn.exports[self.t.export]["size"]
        cmd = ["losetup", "-f", "--show", "--direct-io=on"]
        if self.base:
            cmd += ["--offset", str(self.base), "--sizelimit", str(size)]
        self.loop = run_cmd(cmd + [f], "losetup").strip()
        run_cmd(["mount", "-o", "noinit_itable", self.loop, self.mnt], "mount")
        self.mounted = True

    def prepare(self):
        """What the workload needs before the clock starts."""
        t = self.t
        if t.workload == "mmap":
            # The file the readers map: half the file system, at most 1 GiB.
            exp = self.lab.scn.exports[t.export]
            self.file_size = max(t.bs, min(exp["size"] // 2, 1 << 30)) // MiB * MiB
            run_cmd(["fio", "--name=make", "--filename=" + self.file,
                     "--size=%d" % self.file_size, "--rw=write", "--bs=1M",
                     "--ioengine=psync", "--end_fsync=1"],
                    "writing the mmap file", timeout=600)
        elif t.workload == "fs_mark":
            os.makedirs(os.path.join(self.mnt, "fsm"), exist_ok=True)
        os.sync()

    def detach(self):
        if self.mounted:
            if subprocess.run(["umount", self.mnt], capture_output=True).returncode:
                subprocess.run(["umount", "-l", self.mnt], capture_output=True)
            self.mounted = False
        if self.loop:
            subprocess.run(["losetup", "-d", self.loop], capture_output=True)
            self.loop = None
        if self.fuse is not None:
            subprocess.run(["fusermount3", "-u", self.fusedir], capture_output=True)
            stop_proc(self.fuse)
            self.fuse = None


def fs_requirements():
    """None if file-system workloads can run here, else why not."""
    if os.geteuid() != 0:
        return "needs root (loop devices, mounts)"
    for c in ("nbdfuse", "losetup", "mkfs.ext4", "fusermount3"):
        if shutil.which(c) is None:
            return "needs %s" % c
    if not os.path.exists("/dev/fuse"):
        return "no /dev/fuse"
    return None


def start_special(lab, t, mount, rundir, start, stop):
    """A file-system workload other than mmap, as a child process (this
    program in --client mode) that writes JSON lines to a file.  Once
    started (Python takes a while on a busy machine) it says "ready" on
    stdout and waits for the run's start (wall time) on stdin: START and
    STOP are seconds after it."""
    out = os.path.join(rundir, "special-%s.jsonl" % t.name)
    cmd = [sys.executable, ENTRY, "--client", t.workload,
           "--client-out", out, "--client-dir", mount.mnt,
           "--client-start", "%.3f" % start, "--client-stop", "%.3f" % stop,
           "--client-bs", str(t.bs), "--client-threads", str(t.iodepth),
           "--client-think", "%.6f" % (t.d.get("thinktime_ns", 0) / NS), "x"]
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         stderr=open(out + ".log", "w"), text=True)
    lab.procs.append(p)
    return p, out


def specials_go(specials, t0, timeout=60):
    """Wait until every special client is ready, then tell them T0."""
    end = time.monotonic() + timeout
    for name, (p, out) in specials.items():
        line = ""
        while time.monotonic() < end and p.poll() is None:
            line = p.stdout.readline()
            if line:
                break
        if line.strip() != "ready":
            raise LabError("the %s client did not get ready: %s"
                           % (name, tail(os.path.dirname(out), os.path.basename(out) + ".log")))
    for p, _ in specials.values():
        p.stdin.write("%.6f\n" % t0)
        p.stdin.flush()


def special_numbers(t, out, start_wall, stop_wall):
    """Numbers of a special workload from its JSON lines: what run_clients
    keeps for fio tenants (totals, latency bins, per-second samples)."""
    recs = []
    try:
        with open(out) as f:
            for line in f:
                line = line.strip()
                if line:
                    recs.append(json.loads(line))
    except (OSError, ValueError) as e:
        raise LabError("tenant %s: no results from its %s: %s" % (t.name, t.workload, e))
    done = [r for r in recs if r.get("kind") == "done"]
    if not done:
        raise LabError("tenant %s: %s did not finish (see %s.log)" % (t.name, t.workload, out))
    d = done[-1]
    if d.get("error"):
        raise LabError("tenant %s: %s: %s" % (t.name, t.workload, d["error"]))
    rt = max(1e-9, d["end"] - d["start"])
    lat = [r["lat_s"] for r in recs if r.get("kind") == "io"]
    bins = {}
    for v in lat:
        k = int(round(v * 1e9 / 1000.0)) * 1000
        bins[k] = bins.get(k, 0) + 1
    p50, p90, p99, p999 = pct_from_bins(bins, (50, 90, 99, 99.9)) if bins else [None] * 4
    x = {"bytes": d["bytes"], "ios": d["ios"], "runtime_s": rt,
         "iops": d["ios"] / rt, "mibs": d["bytes"] / rt / MiB,
         "lat_ms": {"p50": p50, "p90": p90, "p99": p99, "p999": p999,
                    "max": max(lat) * 1000 if lat else None,
                    "mean": statistics.mean(lat) * 1000 if lat else None},
         "flushes": d.get("flushes", 0), "bins": bins or None,
         "workload": t.workload, "metric": d.get("metric")}
    samples = [(int(r["t"] * 1000), r["bytes"] / 1024.0, 1)
               for r in recs if r.get("kind") == "second"]
    isamples = [(int(r["t"] * 1000), float(r["ios"]), 1)
                for r in recs if r.get("kind") == "second"]
    return x, samples, isamples, (d["start"], d["end"])


def run_clients(lab, scn, tenants, targets, rundir, duration, seed,
                apply_event=None, shift=0.0):
    """Run the tenants' clients against TARGETS: fio for fio and mmap
    tenants, the file-system workloads on their mounts; apply the scenario's
    events at their times through APPLY_EVENT(command) -> answer.  Returns
    a ClientRun."""
    cr = ClientRun()
    logdir = os.path.join(rundir, "logs")
    os.makedirs(logdir, exist_ok=True)
    mounts = {}
    specials = {}
    p = None
    errf = None
    try:
        fs_ts = [t for t in tenants if t.workload in FS_WORKLOADS]
        if fs_ts:
            why = fs_requirements()
            if why:
                cr.error = "file-system workloads: " + why
                return cr
            Progress.show("(file systems)")
            for t in fs_ts:
                uri, base = targets[t.name]
                m = FsMount(lab, rundir, t, uri, base)
                mounts[t.name] = m
                m.mkfs()
                m.attach()
                m.prepare()
            drop_caches()
        jobfile = os.path.join(rundir, "clients.fio")
        lat_logged = getattr(lab, "lat_targets", None) or {}
        jobs = fio_jobfile(jobfile, scn, tenants, targets, logdir, duration, seed,
                           shift, mounts, lat_logged)
        out = os.path.join(rundir, "fio.json")
        for t in fs_ts:
            if t.workload == "mmap":
                continue
            st, en = t.window(duration)
            specials[t.name] = start_special(lab, t, mounts[t.name], rundir,
                                             st - shift, en - shift)
        cr.t0 = time.time()
        mono0 = time.monotonic()
        if jobs:
            errf = open(os.path.join(rundir, "fio.log"), "w")
            p = subprocess.Popen(["fio", "--output-format=json+", "--output=" + out,
                                  jobfile], stdout=errf, stderr=subprocess.STDOUT,
                                 cwd=rundir)
        if specials:
            # fio takes about half a second to connect: start with its jobs.
            specials_go(specials, cr.t0 + (0.5 if jobs else 0.1))
        events = [] if apply_event is None else list(scn.events)
        watch_clients(cr, p, specials, events, apply_event, mono0, duration, shift,
                      len(jobs))
    except LabError as e:
        cr.error = str(e)
    finally:
        if p is not None and p.poll() is None:
            p.kill()
            p.wait()
        if errf:
            errf.close()
        for sp, _ in specials.values():
            stop_proc(sp, 2)
        for m in mounts.values():
            m.detach()
    if not cr.error:
        collect_clients(cr, p, tenants, specials, jobs, rundir, logdir, out)
    return cr


def watch_clients(cr, p, specials, events, apply_event, mono0, duration, shift, njobs):
    """While fio (P) or a special client runs: apply EVENTS at their times,
    show the progress, give up 60 s after the run's end."""
    t_end = time.monotonic() + duration + 60 + njobs * 0.05

    def running():
        return ((p is not None and p.poll() is None)
                or any(sp.poll() is None for sp, _ in specials.values()))
    while running():
        el = time.monotonic() - mono0
        while events and events[0]["at_ns"] / NS - shift <= el:
            ev = events.pop(0)
            try:
                ans = apply_event(ev["command"])
            except Exception as e:     # noqa: a failed event is reported
                ans = "error: %s" % e
            cr.events.append((time.time(), ev["command"], ans))
            if ans.startswith("error"):
                note("event %s (%s): %s" % (ev.get("name", "?"), ev["command"], ans))
        Progress.show("%3.0f/%.0f s" % (min(el, duration), duration))
        if time.monotonic() > t_end:
            cr.error = "the clients did not finish in %d s" % (duration + 60)
            break
        time.sleep(0.1)


def collect_clients(cr, p, tenants, specials, jobs, rundir, logdir, out):
    """What the clients of a finished run saw, into CR: the special
    clients' JSON lines, fio's jobs (OUT) and per-request logs (LOGDIR),
    each connection's window; or CR.error."""
    if p is not None and p.returncode != 0:
        with open(os.path.join(rundir, "fio.log")) as f:
            last = f.read().strip().splitlines()[-5:]
        cr.error = "fio failed (exit %d): %s" % (p.returncode, " | ".join(last))
        return
    try:
        for t in tenants:
            if t.name in specials:
                x, bw, io, win = special_numbers(t, specials[t.name][1], 0, 0)
                cr.special[t.name] = x
                cr.bw[t.name] = [bw]
                cr.iops[t.name] = [io]
                cr.windows[t.name] = [win]
    except LabError as e:
        cr.error = str(e)
        return
    if not jobs:
        return
    j = load_fio_json(out)
    byname = {job["jobname"]: job for job in j["jobs"]}
    for tname, k, name in jobs:
        job = byname.get(name)
        if job is None:
            cr.error = "fio has no job %s" % name
            return
        if job.get("error"):
            cr.error = "fio job %s: error %s" % (name, job["error"])
            return
        io = _log(logdir, name, "iops")
        cr.jobs.setdefault(tname, []).append(job)
        cr.ios.setdefault(tname, []).append(io)
        clat = _log(logdir, name, "clat", raw=True)
        if clat:
            cr.clat.setdefault(tname, []).append(clat)
        # The job ran job_runtime up to its last completion.
        rt = job["job_runtime"] / 1000.0
        if io:
            en = max(x[0] for x in io) / 1000.0
            st = min(en - rt, min(x[0] for x in io) / 1000.0)
        else:
            st = cr.t0
            en = st + rt
        cr.windows.setdefault(tname, []).append((st, en))


def _log(logdir, name, kind, raw=False):
    """fio's log KIND (iops, clat) of job NAME: read_io_log's tuples, or
    with RAW its first two columns (time ms, value)."""
    import glob
    fs = sorted(glob.glob(os.path.join(logdir, "%s_%s.*.log" % (name, kind))))
    if not fs:
        return []
    if not raw:
        return read_io_log(fs[0])
    out = []
    with open(fs[0]) as f:
        for line in f:
            p = line.split(",")
            if len(p) >= 2:
                out.append((int(p[0]), int(p[1])))
    return out
