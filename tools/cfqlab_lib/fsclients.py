"""The file-system workloads' programs: tools/cfqlab --client WORKLOAD
runs one of them in the tenant's mounted file system and writes JSON
lines (clients.py reads them)."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from .util import MiB


class Recorder:
    """JSON lines: one per operation (its latency), one per wall second
    (bytes and operations, fio's log convention: the second that ends at t),
    and a last "done" line with the totals."""

    def __init__(self, path, start):
        self.f = open(path, "w", buffering=1)
        self.start = start
        self.sec_end = start + 1.0
        self.sec_bytes = 0
        self.sec_ios = 0
        self.bytes = self.ios = self.flushes = 0

    def op(self, t_done, lat, nbytes, flushes=0):
        self.tick(t_done)
        self.bytes += nbytes
        self.ios += 1
        self.flushes += flushes
        self.sec_bytes += nbytes
        self.sec_ios += 1
        if lat is not None:
            self.f.write(json.dumps({"kind": "io", "t": round(t_done, 6),
                                     "lat_s": round(lat, 9)}) + "\n")

    def spread(self, t0, t1, nbytes, nios):
        """NBYTES and NIOS done evenly over [t0, t1] (fs_mark's loops)."""
        t = t0
        while t < t1 - 1e-9:
            self.tick(t)
            seg = min(t1, self.sec_end) - t
            frac = seg / (t1 - t0)
            self.sec_bytes += nbytes * frac
            self.sec_ios += nios * frac
            t += seg
        self.bytes += nbytes
        self.ios += nios

    def tick(self, now):
        while now >= self.sec_end:
            self.f.write(json.dumps({"kind": "second", "t": round(self.sec_end, 3),
                                     "bytes": round(self.sec_bytes),
                                     "ios": round(self.sec_ios, 3)}) + "\n")
            self.sec_end += 1.0
            self.sec_bytes = self.sec_ios = 0

    def done(self, end, metric=None, error=None):
        self.tick(end)
        self.f.write(json.dumps({"kind": "done", "start": self.start, "end": end,
                                 "bytes": self.bytes, "ios": self.ios,
                                 "flushes": self.flushes, "metric": metric,
                                 "error": error}) + "\n")
        self.f.close()


def sleep_until(t):
    while True:
        d = t - time.time()
        if d <= 0:
            return
        time.sleep(min(d, 0.2))


def client_fsync_tester(a):
    """Seed 000's fsync tester: write bs at offset 0 of one file, fsync, note
    how long the two took, sleep thinktime, again."""
    import mmap
    path = os.path.join(a.client_dir, "fsync-tester")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o644)
    buf = mmap.mmap(-1, a.client_bs)
    buf.write(os.urandom(a.client_bs))
    sleep_until(a.client_start)
    rec = Recorder(a.client_out, time.time())
    while time.time() < a.client_stop:
        t0 = time.time()
        os.pwrite(fd, buf, 0)
        os.fsync(fd)
        t1 = time.time()
        rec.op(t1, t1 - t0, a.client_bs, 1)
        if a.client_think > 0:
            sleep_until(min(a.client_stop, t1 + a.client_think))
    os.close(fd)
    rec.done(time.time())


def client_dd(a):
    """dd if=/dev/zero of=big bs=BS oflag=direct, over and over a file of at
    most 256 MiB (or a quarter of the file system): a writer that keeps the
    device busy without filling the file system or the page cache."""
    import mmap
    st = os.statvfs(a.client_dir)
    span = min(256 * MiB, st.f_blocks * st.f_frsize // 4) // a.client_bs * a.client_bs
    span = max(span, a.client_bs)
    path = os.path.join(a.client_dir, "big")
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_DIRECT, 0o644)
    buf = mmap.mmap(-1, a.client_bs)
    sleep_until(a.client_start)
    rec = Recorder(a.client_out, time.time())
    off = 0
    while time.time() < a.client_stop:
        t0 = time.time()
        os.pwrite(fd, buf, off)
        t1 = time.time()
        rec.op(t1, t1 - t0, a.client_bs)
        off = (off + a.client_bs) % span
    os.close(fd)
    rec.done(time.time(), {"name": "MiB/s", "value": rec.bytes / MiB / max(1e-9, time.time() - rec.start)})


def client_fs_mark(a):
    """fs_mark -s BS -n 50 -S 1 (fsync before close) in loops until the
    stop time; each loop's line is timed as it comes."""
    d = os.path.join(a.client_dir, "fsm")
    os.makedirs(d, exist_ok=True)
    # fs_mark refuses a directory path of 40 bytes or more (it prints its
    # usage and exits): give it a short symlink to the mount's directory.
    link = os.path.join(tempfile.mkdtemp(prefix="fsm", dir="/tmp"), "d")
    os.symlink(d, link)
    nfiles = 50
    cmd = ["stdbuf", "-oL", "fs_mark", "-d", link, "-s", str(a.client_bs),
           "-n", str(nfiles), "-L", "1000000", "-S", "1", "-t", str(a.client_threads)]
    sleep_until(a.client_start)
    rec = Recorder(a.client_out, time.time())
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                         cwd=os.path.dirname(link))
    stop = [False]

    def stopper():
        sleep_until(a.client_stop)
        stop[0] = True
        try:
            p.terminate()
        except ProcessLookupError:
            pass
    threading.Thread(target=stopper, daemon=True).start()
    last = rec.start
    files = 0
    err = None
    lines = []
    for line in p.stdout:
        now = time.time()
        lines.append(line.rstrip())
        f = line.split()
        if len(f) == 5 and all(re.fullmatch(r"[0-9.]+", x) for x in f):
            n = nfiles * a.client_threads
            if not stop[0]:
                rec.spread(last, now, n * a.client_bs, n)
                files += n
                last = now
    p.wait()
    shutil.rmtree(os.path.dirname(link), ignore_errors=True)
    if files == 0:
        # fs_mark says what went wrong first, then prints its usage.
        sys.stderr.write("\n".join(lines) + "\n")
        err = "fs_mark finished no loop: %s" % " | ".join(
            [l for l in lines if l.strip() and not l.startswith(("\t", " \t", "Usage"))][:3])
    rec.done(last, {"name": "files/s", "value": files / max(1e-9, last - rec.start)}, err)


def client_main(a):
    """Get ready, say so, and read the run's start (wall time) on stdin:
    --client-start and --client-stop are seconds after it."""
    try:
        print("ready", flush=True)
        t0 = float(sys.stdin.readline())
        a.client_start += t0
        a.client_stop += t0
        {"fsync-tester": client_fsync_tester, "dd": client_dd,
         "fs_mark": client_fs_mark}[a.client](a)
    except OSError as e:
        with open(a.client_out, "a") as f:
            f.write(json.dumps({"kind": "done", "error": str(e), "start": 0, "end": 0,
                                "bytes": 0, "ios": 0}) + "\n")
        sys.exit(1)
