"""bench/workloads.py: what bench/ab runs on each build (bench/ab --help).

A workload serves bench/ab's image (or a config on it) through one
server and runs its clients for the run's seconds; its run() returns the
run's numbers, {metric: value}, the same metrics for both builds.

    NAME             bench/NAME.fio (run.sh's job files), one connection
    PATH.fio         any such job file (it may use ${BENCH_RUNTIME} and
                     ${BENCH_SEED})
    fio:K=V,...      one fio job written inline: fio:rw=randread,bs=4k,iodepth=3
    flush[:K=V,...]  4k random writes with a flush after every fsync= of
                     them, jobs= connections qd= deep each, the server's
                     cache= and writes= (doc/design.md, "Flushes")
    qos-ssd, qos-hdd, qos-real
                     bench/qos.sh's three tenants in three groups, with
                     no cap and no reservation: the total and each share
    ROW              a fidelity row (bench/fidelity.py: hdd32, fsw, wg4_ssd, ...)
"""

import os
import sys

HERE = os.path.dirname(os.path.realpath(__file__))
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tools"))
import fidelity  # noqa: E402
from cfqlab_lib.common import LabError, drop_caches, run_fio  # noqa: E402

GiB = 1 << 30


def params(spec, defaults):
    """K=V,... after the workload's name, over DEFAULTS."""
    out = dict(defaults)
    for kv in [x for x in spec.split(",") if x]:
        k, sep, v = kv.partition("=")
        if not sep or (defaults and k not in defaults):
            raise LabError("%r: want KEY=VALUE%s" % (
                kv, " with KEY one of " + ", ".join(defaults) if defaults else ""))
        out[k] = v
    return out


def fio_metrics(j):
    """A run's numbers from fio's JSON: IOPS and MiB/s (reads and writes,
    every job), completion latency p50 and p99 (one job: its busier
    direction's); with several jobs each one's share of the requests."""
    jobs = j["jobs"]
    iops = [x["read"]["iops"] + x["write"]["iops"] for x in jobs]
    tot = sum(iops)
    m = {"IOPS": tot,
         "MiB/s": sum(x["read"]["bw_bytes"] + x["write"]["bw_bytes"] for x in jobs) / 2**20}
    if len(jobs) == 1:
        x = jobs[0]
        d = x["write"] if x["write"]["total_ios"] > x["read"]["total_ios"] else x["read"]
        pct = d["clat_ns"].get("percentile", {})
        m["p50 ms"] = pct.get("50.000000", 0) / 1e6
        m["p99 ms"] = pct.get("99.000000", 0) / 1e6
    else:
        for x, v in zip(jobs, iops):
            m["share " + x["jobname"]] = v / tot if tot else None
            d = x["write"] if x["write"]["total_ios"] > x["read"]["total_ios"] else x["read"]
            m["p99 ms " + x["jobname"]] = d["clat_ns"].get("percentile", {}).get("99.000000", 0) / 1e6
    return m


def nbd_uri(sock, export=""):
    return "nbd+unix:///%s?socket=%s" % (export, sock)


class Workload:
    """What every workload has: its name, the image it needs (KIND
    "data", "alloc" or "sparse"; SIZE None: bench/ab's --image-size), and
    whether its clients warm up for --ramp s before the measured run."""
    kind, size = "data", None
    ramps = False

    def __init__(self, spec):
        self.spec = spec

    def describe(self):
        return self.spec


class FioFile(Workload):
    """A job file: warmed up for the ramp unmeasured, the page cache
    dropped, then measured (bench/run.sh's way)."""
    ramps = True

    def __init__(self, spec, path):
        Workload.__init__(self, spec)
        self.path = path

    def run(self, r):
        uri = nbd_uri(r.serve(["file=" + r.image] + r.args))
        base = ["--ioengine=nbd", "--uri=" + uri, self.path]
        if r.ramp > 0:
            env = dict(os.environ, BENCH_RUNTIME=str(r.ramp), BENCH_SEED=str(999 + r.round))
            run_fio(base, timeout=r.ramp + 120, env=env)
        drop_caches()
        env = dict(os.environ, BENCH_RUNTIME=str(r.runtime), BENCH_SEED=str(1000 + r.round))
        r.sample()
        return fio_metrics(run_fio(base, timeout=r.runtime + 120, env=env,
                                   save=os.path.join(r.rundir, "fio.json")))


class FioInline(FioFile):
    """fio:K=V,...: one job of those options, time based, the run's seed."""

    def __init__(self, spec):
        Workload.__init__(self, spec)
        self.opts = params(spec.partition(":")[2], {})
        if not self.opts:
            raise LabError("%s: no fio options (fio:rw=randread,bs=4k,iodepth=1)" % spec)

    def run(self, r):
        uri = nbd_uri(r.serve(["file=" + r.image] + r.args))
        opts = ["--%s=%s" % kv for kv in self.opts.items()]
        base = ["--name=ab", "--ioengine=nbd", "--uri=" + uri, "--time_based"] + opts
        if r.ramp > 0:
            run_fio(base + ["--runtime=%d" % r.ramp, "--randseed=%d" % (999 + r.round)],
                    timeout=r.ramp + 120)
        drop_caches()
        r.sample()
        return fio_metrics(run_fio(base + ["--runtime=%d" % r.runtime,
                                           "--randseed=%d" % (1000 + r.round)],
                                   timeout=r.runtime + 120,
                                   save=os.path.join(r.rundir, "fio.json")))


class Flush(Workload):
    """4k random writes, a flush after every FSYNC of them, JOBS
    connections QD deep, on a preallocated 1 GiB image; scheduler=cfq,
    the device's cache= and the export's writes= (auto|sync|async)."""
    kind, size = "alloc", GiB
    DEFAULTS = {"jobs": "4", "qd": "1", "fsync": "1", "cache": "none", "writes": "auto"}

    def __init__(self, spec):
        Workload.__init__(self, spec)
        self.p = params(spec.partition(":")[2], self.DEFAULTS)

    def describe(self):
        return "flush " + " ".join("%s=%s" % kv for kv in self.p.items())

    def run(self, r):
        conf = os.path.join(r.rundir, "s.conf")
        with open(conf, "w") as f:
            f.write("[device]\nfile = %s\ncache = %s\n[scheduler]\nscheduler = cfq\n"
                    "[export]\nwrites = %s\n" % (r.image, self.p["cache"], self.p["writes"]))
        uri = nbd_uri(r.serve(["config=" + conf] + r.args))
        p = self.p
        r.sample()
        return fio_metrics(run_fio(
            ["--name=w", "--ioengine=nbd", "--uri=" + uri, "--rw=randwrite", "--bs=4k",
             "--iodepth=" + p["qd"], "--numjobs=" + p["jobs"], "--fsync=" + p["fsync"],
             "--size=%d" % r.image_size, "--runtime=%d" % r.runtime, "--time_based",
             "--group_reporting"], timeout=r.runtime + 120,
            save=os.path.join(r.rundir, "fio.json")))


# bench/qos.sh's scenarios with nothing set: the config's device and
# scheduler, and the tenants (name, rw, bs, depth, region in GiB or None:
# a third of the image).
QOS = {
    "qos-ssd": ("sparse", 64 * GiB,
                "emulate = ssd\nmode = iops\nmodel.channels = 2\nmodel.read = 1ms\n"
                "model.write = 1ms\nmodel.seed = 1\n",
                "scheduler = cfq\nslice_idle = 0\ngroup_idle = 8ms\nrotational = 0\n",
                [("capped", "randread", "4k", 32, 500, 0, 10),
                 ("gold", "randread", "4k", 32, 100, 10, 10),
                 ("bulk", "randread", "4k", 32, 500, 20, 10)], []),
    "qos-hdd": ("sparse", 1024 * GiB,
                "emulate = hdd\nmode = time\nmodel.seed = 1\n", "scheduler = cfq\n",
                [("capped", "read", "64k", 32, 1000, 0, 300),
                 ("s1", "read", "64k", 4, 100, 300, 300),
                 ("r2", "randread", "4k", 8, 100, 600, 100)], []),
    "qos-real": ("data", None, "", "",
                 [("capped", "randread", "4k", 16, 500, None, None),
                  ("gold", "randread", "4k", 16, 100, None, None),
                  ("bulk", "randread", "4k", 16, 500, None, None)],
                 ["mode=iops", "slice_idle=0", "group_idle=8ms", "rotational=0"]),
}


class Qos(Workload):
    """Three tenants in three groups (name, rw, bs, depth, weight, offset
    and size in GiB), fio's ramp unmeasured inside the run; the total
    IOPS and each tenant's share."""
    ramps = True

    def __init__(self, spec):
        Workload.__init__(self, spec)
        self.kind, self.size, self.dev, self.sched, self.tenants, self.extra = QOS[spec]

    def conf(self, r):
        third = r.image_size // 3 // 2**20 * 2**20
        lines = ["[device]", "file = %s" % r.image, self.dev.rstrip("\n")]
        if self.sched:
            lines += ["[scheduler]", self.sched.rstrip("\n")]
        for n, rw, bs, d, w, off, size in self.tenants:
            lines += ["[group %s]" % n, "weight = %d" % w]
        for i, (n, rw, bs, d, w, off, size) in enumerate(self.tenants):
            o, s = (i * third, third) if off is None else (off * GiB, size * GiB)
            lines += ["[export %s]" % n, "group = %s" % n, "offset = %d" % o, "size = %d" % s]
        return "\n".join(x for x in lines if x) + "\n"

    def run(self, r):
        conf = os.path.join(r.rundir, "s.conf")
        with open(conf, "w") as f:
            f.write(self.conf(r))
        sock = r.serve(["config=" + conf] + self.extra + r.args)
        job = ["[global]", "ioengine=nbd", "time_based=1", "ramp_time=%d" % r.ramp,
               "runtime=%d" % r.runtime]
        for n, rw, bs, d, w, off, size in self.tenants:
            job += ["[%s]" % n, "uri=" + nbd_uri(sock, n), "rw=" + rw, "bs=" + bs,
                    "iodepth=%d" % d]
        path = os.path.join(r.rundir, "job.fio")
        with open(path, "w") as f:
            f.write("\n".join(job) + "\n")
        r.sample(r.ramp)
        return fio_metrics(run_fio([path], timeout=r.ramp + r.runtime + 60,
                                   save=os.path.join(r.rundir, "fio.json")))


class Fidelity(Workload):
    """A fidelity row of bench/fidelity.py on a 2 GiB image of data."""
    size = fidelity.IMAGE_SIZE

    def run(self, r):
        def serve(args, conf=None):
            sock = r.serve((["config=" + conf] if conf else ["file=" + r.image]) + args)
            r.sample()
            return sock
        return fidelity.run_row(self.spec, serve, r.args, r.runtime, r.rundir, r.image)


def workload(spec):
    """The Workload SPEC names; LabError if none."""
    name = spec.partition(":")[0]
    if name == "fio":
        return FioInline(spec)
    if name == "flush":
        return Flush(spec)
    if spec in QOS:
        return Qos(spec)
    if spec.endswith(".fio") and os.path.isfile(spec):
        return FioFile(spec, os.path.abspath(spec))
    if os.path.isfile(os.path.join(HERE, spec + ".fio")):
        return FioFile(spec, os.path.join(HERE, spec + ".fio"))
    if fidelity.known(spec):
        return Fidelity(spec)
    raise LabError("no workload %r (bench/ab --help)" % spec)
