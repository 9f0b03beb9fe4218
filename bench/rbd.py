#!/usr/bin/python3
"""bench/rbd.py: our plugin's backend=rbd against its peers, on one Ceph
cluster, side by side in one run.

    bench/rbd.py [single] [tenants]      default: both

The cluster: a single-node one started for the run (tests/ceph/cluster.sh
in BENCH_DIR/cfq-rbdbench.XXXX, mon on 127.0.0.1:BENCH_CEPH_PORT) and
stopped at exit, or the one BENCH_CEPH_CONF names (used, left running).
The script needs root (the cluster's OSD, dropping the page cache).  Its
images are filled with data before any run (an RBD read of a never
written object is answered without touching the store), and removed at
exit.

single: one tenant, make bench's four workloads (bench/WORKLOAD.fio, one
fio job, one NBD connection over a Unix socket), through
  ours    nbdkit cfq backend=rbd scheduler=fifo (librbd's cache off)
  tuned   the same with GLIBC_TUNABLES=TUNED (below): nbdkit allocates a
          buffer per request, and glibc unmaps (over 128 KiB) or trims
          it when freed, so each 256k read's buffer is fresh memory that
          librados' messenger thread faults in page by page as it copies
          the reply into it
  qsd     qemu-storage-daemon --blockdev driver=rbd,cache.direct=on
          (cache.direct=on: QEMU turns librbd's cache off, as ours does)
  rbd-nbd only where the kernel has an nbd driver (rbd-nbd serves the
          kernel's /dev/nbdX, not NBD clients); else reported skipped
on one image.  Per row, medians over rounds: IOPS, p99 completion latency,
the server's CPU time and context switches per request (utime+stime of
the process, and the switches of its threads, from /proc between two
snapshots within the measured run, over the requests fio counted in that
time at its mean rate).  Ratios: ours' median IOPS over each peer's.

tenants: three tenants of weights 100/200/400 (bench/scenarios/
three-weights-disk.conf's), each one fio job reading 4k at random 16 deep
through its own export, each export an image of its own:
  fifo     ours, scheduler=fifo, no limits: the capacity C (total IOPS)
  cfq      ours, scheduler=cfq mode=iops, the weights, slice_idle=0
           group_idle=8ms (tests/ceph/test-rbd-weights.sh's), queue_depth
           BENCH_RBD_TENANT_QD (so that the scheduler, not the cluster's
           queue, decides)
  cfqwc    the same with group_idle=0 and queue_depth 32: the groups
           share the queue request by request (wc_depth, group_lag)
  librbd   librbd's own QoS: rbd_qos_iops_limit of each image (rbd config
           image set) = C x weight/700, served by qemu-storage-daemon
  qsdtg    qemu-storage-daemon's throttle groups, one per tenant with
           limits.iops-total = C x weight/700 (as the lab's qsd peer)
C is the median over the rounds so far of fifo's total (fifo runs first in
each round).  Per row, medians over rounds: the total, each tenant's share
and Jain's index of IOPS/weight (1.0: shares exactly the weights').

Noise: every round runs every row once, in an order rotated from round to
round; each run starts a fresh server after syncing and dropping the page
cache, warms up BENCH_RAMP s (fio's ramp_time) and measures BENCH_RUNTIME
s; with BENCH_LOCK=FILE each run holds flock on FILE.  The load
(uptime) is recorded before and after each section.  Results (fio's JSON,
server logs, summary.txt) go to BENCH_RESULTS/rbd-DATE/.

Environment (defaults):
  BENCH_ROUNDS=3  BENCH_RUNTIME=10  BENCH_RAMP=2
  BENCH_WORKLOADS="randread-4k-qd1 randread-4k-qd32 randwrite-4k-qd32 seqread-256k-qd8"
  BENCH_RBD_SIZE=1G          the single section's image (and each tenant's: a third)
  BENCH_RBD_TENANT_QD=4      queue_depth of the cfq row
  BENCH_CEPH_PORT=3330       the cluster's mon port
  BENCH_CEPH_CONF=           use this cluster instead of starting one
  BENCH_DIR=/var/tmp         where the cluster's files go (a real disk)
  BENCH_RESULTS=bench/results  BENCH_LOCK=  BENCH_DROP_CACHES=1
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.realpath(__file__))
ROOT = os.path.dirname(HERE)
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(ROOT, "tools"))
from cfqlab_lib.ceph import Cluster  # noqa: E402
from cfqlab_lib.common import (LabError, Lock, drop_caches, fio_json, jain,  # noqa: E402
                               log_tail, median, proc_usage, start_server, stop_proc,
                               usage_between)

# The tuned row: glibc's malloc keeps freed request buffers instead of
# unmapping or trimming them (nbdkit allocates one per request).
TUNED = "glibc.malloc.mmap_threshold=33554432:glibc.malloc.trim_threshold=134217728"
PLUGIN = os.path.join(ROOT, "plugin", "nbdkit-cfq-plugin.so")
WEIGHTS = {"small": 100, "medium": 200, "large": 400}

ROUNDS = int(os.environ.get("BENCH_ROUNDS", "3"))
RUNTIME = int(os.environ.get("BENCH_RUNTIME", "10"))
RAMP = int(os.environ.get("BENCH_RAMP", "2"))
WORKLOADS = os.environ.get("BENCH_WORKLOADS", "randread-4k-qd1 randread-4k-qd32 "
                           "randwrite-4k-qd32 seqread-256k-qd8").split()
SIZE = os.environ.get("BENCH_RBD_SIZE", "1G")
TENANT_QD = int(os.environ.get("BENCH_RBD_TENANT_QD", "4"))
PORT = os.environ.get("BENCH_CEPH_PORT", "3330")
LOCK = os.environ.get("BENCH_LOCK") or None
DROP = os.environ.get("BENCH_DROP_CACHES", "1") == "1"
BASE = os.environ.get("BENCH_DIR", "/var/tmp")

out_lines = []


def say(msg):
    print(msg, flush=True)
    out_lines.append(msg)


def sh(*args, **kw):
    return subprocess.run(list(args), check=True, capture_output=True, text=True, **kw).stdout


def mib(size):
    return int(sh("numfmt", "--from=iec", size)) >> 20


def uptime():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def rbd_nbd_why():
    """Why rbd-nbd cannot serve here, or None."""
    if shutil.which("rbd-nbd") is None:
        return "rbd-nbd not installed"
    if not os.path.exists("/sys/module/nbd"):
        r = subprocess.run(["modprobe", "nbd"], capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists("/sys/module/nbd"):
            return ("rbd-nbd serves only the kernel's nbd driver (/dev/nbdX) and this "
                    "kernel (%s) has none: %s" % (os.uname().release,
                                                  r.stderr.strip() or "no /sys/module/nbd"))
    return None


class Bench:
    def __init__(self):
        stamp = time.strftime("%Y%m%d-%H%M%S")
        self.res = os.path.join(os.environ.get("BENCH_RESULTS", os.path.join(HERE, "results")),
                                "rbd-" + stamp)
        os.makedirs(self.res)
        self.dir = tempfile.mkdtemp(prefix="cfq-rbdbench.", dir=BASE)
        self.cluster = Cluster(ROOT, self.dir, PORT, os.environ.get("BENCH_CEPH_CONF"))
        self.conf = None
        self.n = 0

    # ---- the cluster and its images ---------------------------------------
    def start(self):
        t = time.monotonic()
        self.cluster.start()
        self.conf = self.cluster.conf
        if self.cluster.own:
            say("cluster up in %.0f s: %s (mon port %s)" % (time.monotonic() - t, self.conf, PORT))

    def stop(self):
        self.cluster.stop()
        shutil.rmtree(self.dir, ignore_errors=True)

    def image(self, name, size_mib, fill=True):
        """A new image of SIZE_MIB in the pool "rbd", filled once; its name."""
        ref = self.cluster.create("cfqbench-%d-%s" % (os.getpid(), name), size_mib << 20,
                                  fill, Lock(LOCK))
        return ref.split("/", 1)[1]

    # ---- servers -------------------------------------------------------------
    def rundir(self, name):
        self.n += 1
        d = os.path.join(self.res, "%03d-%s" % (self.n, name))
        os.makedirs(d)
        return d

    def ours(self, d, args, config=None, env=None):
        sock = os.path.join(d, "nbd.sock")
        cmd = ["nbdkit", "-f", "--exit-with-parent", "-U", sock, "--threads", "64", PLUGIN,
               "backend=rbd", "conf=" + self.conf] + args
        if config:
            with open(os.path.join(d, "tenants.conf"), "w") as f:
                f.write(config)
            cmd.append("config=" + os.path.join(d, "tenants.conf"))
        return start_server(cmd, sock, os.path.join(d, "server.log"),
                            env=dict(os.environ, **env) if env else None, timeout=60), sock

    def qsd(self, d, images, throttle=None, names=None):
        """qemu-storage-daemon exporting each of IMAGES (names NAMES; one
        image: the default export), each through a throttle group of
        THROTTLE[i] IOPS if given."""
        sock = os.path.join(d, "nbd.sock")
        names = names or [""]
        cmd = ["setpriv", "--pdeathsig", "KILL", "qemu-storage-daemon"]
        for i, img in enumerate(images):
            cmd += ["--blockdev", self.cluster.qsd_blockdev("rbd:rbd/" + img, "r%d" % i)]
            node = "r%d" % i
            if throttle:
                cmd += ["--object", "throttle-group,id=tg%d,limits.iops-total=%d"
                        % (i, throttle[i]),
                        "--blockdev", "driver=throttle,node-name=t%d,throttle-group=tg%d,file=r%d"
                        % (i, i, i)]
                node = "t%d" % i
            cmd += ["--export", "type=nbd,id=e%d,node-name=%s,name=%s,writable=on"
                    % (i, node, names[i])]
        cmd[4:4] = ["--nbd-server", "addr.type=unix,addr.path=" + sock]
        return start_server(cmd, sock, os.path.join(d, "server.log"), timeout=60), sock

    def measure(self, d, start, jobs):
        """Drop the caches, START() a server, wait until it answers, run
        fio with JOBS (a list of fio option lists, one job each, given the
        socket), stop it.  fio's JSON, or None with the reason said."""
        if DROP and not drop_caches():
            raise LabError("cannot drop the page cache (run as root, or BENCH_DROP_CACHES=0)")
        srv = None
        try:
            with Lock(LOCK):
                srv, sock = start()
                uri = "nbd+unix:///%s?socket=" + sock
                if subprocess.run(["nbdinfo", "--size", uri % (jobs[0][0] if jobs[0] else "")],
                                  capture_output=True).returncode != 0:
                    raise LabError("the server does not answer: " +
                                   log_tail(os.path.join(d, "server.log")))
                args = ["--time_based", "--runtime=%d" % RUNTIME, "--ramp_time=%d" % RAMP,
                        "--ioengine=nbd", "--randseed=4242"]
                for export, job in jobs:
                    args += ["--name=" + (export or "j"), "--uri=" + uri % export] + job
                return self.fio(srv.pid, args, os.path.join(d, "fio.json"))
        except (LabError, subprocess.TimeoutExpired) as e:
            say("  %s: %s" % (os.path.basename(d), e))
            return None
        finally:
            stop_proc(srv)

    def fio(self, pid, args, save):
        """fio ARGS against server PID; its JSON, with "server" added:
        the server's CPU seconds and context switches over the measured
        part (snapshots at its start and 0.5 s before its end, while the
        connections' threads exist) and the seconds between them."""
        p = subprocess.Popen(["fio", "--output-format=json"] + args, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        try:
            time.sleep(RAMP + 0.2)
            a, t0 = proc_usage(pid), time.monotonic()
            time.sleep(max(RUNTIME - 0.7, 0.5))
            b, t1 = proc_usage(pid), time.monotonic()
            out, err = p.communicate(timeout=RUNTIME + RAMP + 120)
        except (OSError, subprocess.TimeoutExpired):
            p.kill()
            p.communicate()
            raise
        with open(save, "w") as f:
            f.write(out)
        if p.returncode != 0:
            raise LabError("fio failed (exit %d): %s" % (p.returncode, err.strip()[-500:]))
        j = fio_json(out, "fio")
        cpu, cs = usage_between(a, b)
        j["server"] = {"cpu": cpu, "cs": cs, "secs": t1 - t0}
        return j

    # ---- single: one tenant, four workloads ----------------------------------
    def single(self):
        why = rbd_nbd_why()
        say("== single: one tenant, ours against qemu-storage-daemon's rbd driver")
        say("rbd-nbd: skipped: %s" % why if why else "rbd-nbd: available but not run")
        img = self.image("single", mib(SIZE))
        rows = ["ours", "tuned", "qsd"]
        starts = {"ours": lambda d: self.ours(d, ["image=" + img, "scheduler=fifo"]),
                  "tuned": lambda d: self.ours(d, ["image=" + img, "scheduler=fifo"],
                                               env={"GLIBC_TUNABLES": TUNED}),
                  "qsd": lambda d: self.qsd(d, [img])}
        res = {(w, r): [] for w in WORKLOADS for r in rows}
        say("load before: %s" % uptime())
        for rnd in range(ROUNDS):
            for w in WORKLOADS:
                order = rows[rnd % len(rows):] + rows[:rnd % len(rows)]
                for r in order:
                    d = self.rundir("%s-%s-r%d" % (w, r, rnd))
                    job = self.jobfile(w)
                    j = self.measure(d, lambda d=d, r=r: starts[r](d), [("", job)])
                    if j:
                        x = j["jobs"][0]
                        iops = x["read"]["iops"] + x["write"]["iops"]
                        dd = x["write"] if x["write"]["total_ios"] > x["read"]["total_ios"] \
                            else x["read"]
                        p99 = dd["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6
                        sv = j["server"]
                        nreq = iops * sv["secs"]
                        cpu = 1e6 * sv["cpu"] / nreq if nreq else None
                        cs = sv["cs"] / nreq if nreq else None
                        res[(w, r)].append((iops, p99, cpu, cs))
                        say("  round %d %-18s %-5s %9.0f IOPS  p99 %6.2f ms  server %s us"
                            " %s cs a request" % (rnd + 1, w, r, iops, p99, fmt(cpu, "%.0f"),
                                                  fmt(cs, "%.1f")))
        say("load after: %s" % uptime())
        say("")
        say("| workload | ours IOPS | tuned IOPS | qsd IOPS | ours/qsd | tuned/qsd |"
            " p99 ms ours / tuned / qsd | cpu us ours / tuned / qsd |"
            " cs ours / tuned / qsd | rounds |")
        say("|---|---|---|---|---|---|---|---|---|---|")
        for w in WORKLOADS:
            m = {(r, i): median([v[i] for v in res[(w, r)]]) for r in rows for i in range(4)}
            q = m[("qsd", 0)]

            def ratio(r):
                o = m[(r, 0)]
                return "%.2fx %s" % (o / q, "met" if o >= q else "NOT MET") if o and q else "n/a"

            say("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
                w, fmt(m[("ours", 0)]), fmt(m[("tuned", 0)]), fmt(q), ratio("ours"),
                ratio("tuned"), " / ".join(fmt(m[(r, 1)], "%.1f") for r in rows),
                " / ".join(fmt(m[(r, 2)], "%.0f") for r in rows),
                " / ".join(fmt(m[(r, 3)], "%.1f") for r in rows),
                "/".join(str(len(res[(w, r)])) for r in rows)))
        say("")

    def jobfile(self, w):
        src = os.path.join(HERE, w + ".fio")
        with open(src) as f:
            text = f.read()
        text = text.replace("${BENCH_RUNTIME}", str(RUNTIME)).replace("${BENCH_SEED}", "4242")
        # Keep only the job's own lines: fio takes them as options here.
        opts, sec = [], None
        for line in text.splitlines():
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            if line.startswith("["):
                sec = line
                continue
            if sec != "[global]":
                opts.append("--" + line)
        return opts

    # ---- tenants: three weighted tenants -------------------------------------
    def tenants(self):
        say("== tenants: weights 100/200/400, 4k random reads 16 deep each, an image each")
        third = max(mib(SIZE) // 3, 64)
        imgs = {g: self.image(g, third) for g in WEIGHTS}
        dev = self.image("dev", 16, fill=False)
        groups = "".join("[group %s]\nweight = %d\n" % (g, w) for g, w in WEIGHTS.items())
        exports = "".join("[export %s]\ngroup = %s\nfile = rbd:%s\n" % (g, g, imgs[g])
                          for g in WEIGHTS)

        def conf(sched, qd, idle="8ms"):
            return ("[device]\nfile = rbd:rbd/%s\nmode = iops\nqueue_depth = %d\n\n"
                    "[scheduler]\nscheduler = %s\nslice_idle = 0\ngroup_idle = %s\n"
                    "rotational = 0\n\n%s\n%s" % (dev, qd, sched, idle, groups, exports))

        order = list(WEIGHTS)
        rows = ["fifo", "cfq", "cfqwc", "librbd", "qsdtg"]
        job = ["--rw=randread", "--bs=4k", "--iodepth=16", "--randseed=4242"]
        jobs = [(g, job) for g in order]
        res = {r: [] for r in rows}
        caps = []

        def limits():
            c = median(caps)
            return [max(1, int(c * WEIGHTS[g] / sum(WEIGHTS.values()))) for g in order]

        def set_qos(lim):
            for g, n in zip(order, lim):
                if n:
                    sh("rbd", "config", "image", "set", "rbd/" + imgs[g], "rbd_qos_iops_limit",
                       str(n))
                else:
                    subprocess.run(["rbd", "config", "image", "remove", "rbd/" + imgs[g],
                                    "rbd_qos_iops_limit"], capture_output=True)

        def librbd(d):
            set_qos(limits())
            return self.qsd(d, [imgs[g] for g in order], names=order)

        starts = {
            "fifo": lambda d: self.ours(d, [], conf("fifo", 32)),
            "cfq": lambda d: self.ours(d, [], conf("cfq", TENANT_QD)),
            "cfqwc": lambda d: self.ours(d, [], conf("cfq", 32, "0")),
            "librbd": librbd,
            "qsdtg": lambda d: self.qsd(d, [imgs[g] for g in order], throttle=limits(),
                                        names=order),
        }
        say("load before: %s" % uptime())
        for rnd in range(ROUNDS):
            rest = rows[1:]
            k = rnd % len(rest)
            for r in ["fifo"] + rest[k:] + rest[:k]:
                if r != "fifo" and not caps:
                    say("  round %d %s: skipped, no capacity from fifo yet" % (rnd + 1, r))
                    continue
                d = self.rundir("tenants-%s-r%d" % (r, rnd))
                try:
                    j = self.measure(d, lambda d=d, r=r: starts[r](d), jobs)
                finally:
                    if r == "librbd":
                        set_qos([0, 0, 0])
                if not j:
                    continue
                iops = {x["jobname"]: x["read"]["iops"] for x in j["jobs"]}
                tot = sum(iops.values())
                ji = jain([iops[g] / WEIGHTS[g] for g in order])
                if r == "fifo":
                    caps.append(tot)
                res[r].append((tot, [iops[g] / tot for g in order], ji))
                say("  round %d %-6s total %7.0f  shares %s  Jain %.3f%s" % (
                    rnd + 1, r, tot, " ".join("%.3f" % (iops[g] / tot) for g in order), ji,
                    "  limits %s" % "/".join(map(str, limits()))
                    if r in ("librbd", "qsdtg") else ""))
        say("load after: %s" % uptime())
        want = [w / sum(WEIGHTS.values()) for w in WEIGHTS.values()]
        say("")
        say("| row | total IOPS | /fifo | shares (want %s) | Jain (IOPS/weight) | rounds |"
            % " / ".join("%.3f" % x for x in want))
        say("|---|---|---|---|---|---|")
        f = median([v[0] for v in res["fifo"]])
        for r in rows:
            if not res[r]:
                say("| %s | n/a | | | | 0 |" % r)
                continue
            tot = median([v[0] for v in res[r]])
            sh_ = [median([v[1][i] for v in res[r]]) for i in range(3)]
            ji = median([v[2] for v in res[r]])
            mark = ""
            if r in ("cfq", "cfqwc"):
                mark = " met" if ji >= 0.99 else " NOT MET"
            say("| %s | %s | %.2fx | %s | %.3f%s | %d |" % (
                r, fmt(tot), tot / f if f else 0, " / ".join("%.3f" % x for x in sh_), ji,
                mark, len(res[r])))
        say("")


def fmt(v, f="{:,.0f}"):
    if v is None:
        return "-"
    return f % v if "%" in f else f.format(v)


def main():
    parts = sys.argv[1:] or ["single", "tenants"]
    for p in parts:
        if p not in ("single", "tenants"):
            sys.exit(__doc__.split("\n\n")[1] + "\n\nunknown part %r" % p)
    if os.geteuid() != 0 and not os.environ.get("BENCH_CEPH_CONF"):
        sys.exit("bench/rbd.py: run as root (the cluster's OSD), or name a cluster "
                 "with BENCH_CEPH_CONF")
    for c in ("fio", "nbdkit", "nbdinfo", "rbd", "qemu-storage-daemon"):
        if shutil.which(c) is None:
            sys.exit("bench/rbd.py: %s not found (make deps)" % c)
    if "cfq_rbd=yes" not in sh("nbdkit", PLUGIN, "--dump-plugin"):
        sys.exit("bench/rbd.py: the plugin was built without librbd (no backend=rbd)")
    b = Bench()
    try:
        commit = sh("git", "-C", ROOT, "rev-parse", "--short", "HEAD").strip()
        say("bench/rbd.py %s: %s, commit %s, rounds %d, runtime %d s, ramp %d s, image %s, "
            "load %s" % (" ".join(parts), time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                         commit, ROUNDS, RUNTIME, RAMP, SIZE, uptime()))
        b.start()
        if "single" in parts:
            b.single()
        if "tenants" in parts:
            b.tenants()
    except LabError as e:
        say("bench/rbd.py: error: %s" % e)
        return 1
    finally:
        b.stop()
        with open(os.path.join(b.res, "summary.txt"), "w") as f:
            f.write("\n".join(out_lines) + "\n")
        print("results: %s" % b.res)
    return 0


if __name__ == "__main__":
    sys.exit(main())
