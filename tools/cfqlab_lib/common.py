"""What the fairness lab (tools/cfqlab) and the benchmarks (bench/) share:
medians and Jain's index, the page cache, fio's JSON, the bench lock, the
control socket, and starting and stopping servers.

Plain standard library: /usr/bin/python3.
"""

import fcntl
import json
import os
import signal
import socket
import statistics
import subprocess
import time


class LabError(Exception):
    """What the lab or a benchmark cannot do, said to the user."""


def median(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def jain(xs):
    xs = [x for x in xs if x is not None]
    if not xs or sum(x * x for x in xs) == 0:
        return None
    return sum(xs) ** 2 / (len(xs) * sum(x * x for x in xs))


def fio_json(text, what):
    """fio's JSON in TEXT (the nbd engine prints lines before it)."""
    i = text.find("{")
    if i < 0:
        raise LabError("%s: no JSON from fio" % what)
    return json.loads(text[i:])


def load_fio_json(path):
    """fio's JSON from the file PATH (its --output)."""
    with open(path, errors="replace") as f:
        return fio_json(f.read(), path)


def run_fio(args, timeout=None, cwd=None, env=None, save=None):
    """fio ARGS (options and job files) with its JSON on stdout, parsed
    (and written to the file SAVE); LabError with the end of its errors
    if it fails."""
    p = subprocess.run(["fio", "--output-format=json"] + list(args), capture_output=True,
                       text=True, timeout=timeout, cwd=cwd, env=env)
    if save:
        with open(save, "w") as f:
            f.write(p.stdout)
    if p.returncode != 0:
        raise LabError("fio failed (exit %d): %s" % (p.returncode, p.stderr.strip()[-2000:]))
    return fio_json(p.stdout, "fio " + " ".join(args))


def fill_image(path, size, lock=None):
    """SIZE bytes of data at PATH by O_DIRECT writes (a hole, or a
    preallocated extent, reads without touching the disk), under LOCK (a
    Lock): its writes would disturb whoever is measuring meanwhile."""
    with lock or Lock(None):
        p = subprocess.run(["fio", "--name=fill", "--filename=" + path,
                            "--size=%d" % size, "--rw=write", "--bs=1M",
                            "--iodepth=8", "--ioengine=io_uring", "--direct=1",
                            "--end_fsync=1"], capture_output=True, text=True)
    if p.returncode != 0:
        raise LabError("filling the image failed: %s" % p.stderr.strip()[-300:])


def drop_caches():
    if os.geteuid() != 0:
        return False
    os.sync()
    try:
        with open("/proc/sys/vm/drop_caches", "w") as f:
            f.write("3\n")
    except OSError:
        return False
    return True


def fresh(*paths):
    """Remove stale sockets: nbdkit does not unlink its socket at exit."""
    for p in paths:
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass


# A Unix socket's path holds at most 107 bytes (sun_path).
SOCK_PATH_MAX = 100
# The directories sock_path made (by run directory), which
# remove_sock_dirs removes.
SOCK_DIRS = {}


def sock_path(rundir, name):
    """Where a run's socket NAME goes: in RUNDIR, or when that path would
    be too long for a Unix socket (a long system name in a deep --out), in
    a fresh private directory under /tmp (mkdtemp, the same for every
    socket of the run)."""
    p = os.path.join(rundir, name)
    if len(p) <= SOCK_PATH_MAX:
        return p
    key = os.path.abspath(rundir)
    if key not in SOCK_DIRS:
        import tempfile
        SOCK_DIRS[key] = tempfile.mkdtemp(prefix="cfqlab-")
    return os.path.join(SOCK_DIRS[key], name)


def remove_sock_dirs():
    """Remove the directories sock_path made (at the lab's end)."""
    import shutil
    while SOCK_DIRS:
        shutil.rmtree(SOCK_DIRS.popitem()[1], ignore_errors=True)


def wait_path(path, proc, secs, kind="socket"):
    end = time.monotonic() + secs
    while time.monotonic() < end:
        if os.path.exists(path):
            return True
        if proc is not None and proc.poll() is not None:
            return False
        time.sleep(0.05)
    return False


def stop_proc(p, grace=5.0):
    if p is None or p.poll() is not None:
        return
    try:
        p.send_signal(signal.SIGTERM)
        p.wait(grace)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
    except ProcessLookupError:
        pass


class Lock:
    """flock on a file around each timing run (--lock / BENCH_LOCK); no
    path, no lock.  ON_WAIT(path), if given, is called before waiting."""

    def __init__(self, path, on_wait=None):
        self.path = path
        self.on_wait = on_wait
        self.fd = None

    def __enter__(self):
        if self.path:
            self.fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o666)
            if self.on_wait is not None:
                self.on_wait(self.path)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *a):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)
            self.fd = None


def ctl_call(path, line, timeout=10):
    """One command on our control socket; the answer without its blank line."""
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    try:
        s.connect(path)
        s.sendall(line.encode() + b"\n")
        buf = b""
        while not (buf.endswith(b"\n\n") or buf == b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    finally:
        s.close()
    return buf.decode(errors="replace").rstrip("\n")


def log_tail(path, n=3):
    """The last N lines of the file PATH, joined with " | "."""
    try:
        with open(path, errors="replace") as f:
            return " | ".join(l.strip() for l in f.read().strip().splitlines()[-n:])
    except OSError:
        return "(no log)"


def nbdkit_cmd(plugin, sock, args, threads=32):
    """nbdkit serving PLUGIN with ARGS on the Unix socket SOCK, in the
    foreground, gone with its parent."""
    return ["nbdkit", "-f", "--exit-with-parent", "-U", sock, "--threads", str(threads),
            plugin] + list(args)


def start_server(cmd, sock, log, env=None, timeout=30.0):
    """Start CMD, a server that listens on the Unix socket SOCK, with its
    output in the file LOG, and wait until it listens.  Returns its Popen;
    LabError with the log's last lines if it exits or does not listen
    within TIMEOUT s."""
    fresh(sock)
    with open(log, "w") as f:
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env)
    if not wait_path(sock, p, timeout):
        stop_proc(p)
        raise LabError("%s did not start: %s" % (cmd[0], log_tail(log)))
    return p


def proc_usage(pid):
    """What process PID has used so far: (CPU seconds, utime + stime of
    the whole process; {tid: context switches} of its live threads).  A
    thread's count goes with it when it exits (nbdkit's workers exit with
    their connection): take both snapshots while the clients run."""
    with open("/proc/%d/stat" % pid) as f:
        st = f.read().rsplit(")", 1)[1].split()
    cpu = (int(st[11]) + int(st[12])) / os.sysconf("SC_CLK_TCK")
    cs = {}
    try:
        tids = os.listdir("/proc/%d/task" % pid)
    except OSError:
        tids = []
    for tid in tids:
        n = 0
        try:
            with open("/proc/%d/task/%s/status" % (pid, tid)) as f:
                for line in f:
                    if line.startswith(("voluntary_ctxt_switches:",
                                        "nonvoluntary_ctxt_switches:")):
                        n += int(line.split()[1])
        except OSError:
            continue
        cs[tid] = n
    return cpu, cs


def usage_between(a, b):
    """(CPU seconds, context switches) between two proc_usage snapshots: a
    thread new in B counts from zero, one gone from B counts nothing."""
    return b[0] - a[0], sum(n - a[1].get(tid, 0) for tid, n in b[1].items())
