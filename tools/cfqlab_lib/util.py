"""The lab's small pieces: where the tree is, units, messages, the progress
line, and how numbers and names are written."""

import os
import re
import signal
import subprocess
import sys
import time

from .common import LabError, Lock, log_tail

# The top of the tree: tools/cfqlab_lib/util.py is two levels below it.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
# The lab's program, which runs itself for the file-system clients.
ENTRY = os.path.join(ROOT, "tools", "cfqlab")


MiB = 1 << 20


FIO_DDIR = {0: "read", 1: "write", 2: "trim"}    # fio logs' direction column
NS = 1e9
PROG = "cfqlab"


def die(msg):
    print("%s: error: %s" % (PROG, msg), file=sys.stderr)
    sys.exit(1)


def note(msg):
    Progress.clear()
    print("%s: %s" % (PROG, msg), file=sys.stderr, flush=True)


class Progress:
    """One line on stderr: which run of how many, what, and its seconds."""
    tty = sys.stderr.isatty()
    quiet = False
    shown = False
    last_line = 0.0
    steps = 1
    step = 0
    what = ""

    @classmethod
    def start(cls, steps):
        cls.steps = max(1, steps)
        cls.step = 0

    @classmethod
    def next(cls, what):
        cls.step += 1
        cls.what = what
        cls.last_line = 0.0
        cls.show("")

    @classmethod
    def show(cls, detail):
        if cls.quiet:
            return
        line = "%s: [%d/%d] %s %s" % (PROG, cls.step, cls.steps, cls.what, detail)
        if cls.tty:
            sys.stderr.write("\r\033[K" + line)
            sys.stderr.flush()
            cls.shown = True
        elif time.monotonic() - cls.last_line >= 10 or not detail:
            print(line, file=sys.stderr, flush=True)
            cls.last_line = time.monotonic()

    @classmethod
    def clear(cls):
        if cls.shown:
            sys.stderr.write("\r\033[K")
            sys.stderr.flush()
            cls.shown = False


def parse_size(s):
    """1G, 512M, 4096: powers of 1024, as the config's sizes."""
    m = re.fullmatch(r"\s*(\d+)\s*([bkmgtpe]?)\s*", str(s), re.I)
    if not m:
        raise LabError("not a size: %r" % s)
    return int(m.group(1)) << (10 * " kmgtpe".index(m.group(2).lower() or " "))


def parse_time(s):
    """10s, 500ms, 2.5s -> seconds (float)."""
    m = re.fullmatch(r"\s*([0-9.]+)\s*(ns|us|ms|s|m)?\s*", str(s))
    if not m:
        raise LabError("not a time: %r" % s)
    mult = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, None: 1.0}
    return float(m.group(1)) * mult[m.group(2)]


def fmt(x, nd=1):
    if x is None:
        return "-"
    if isinstance(x, str):
        return x
    if abs(x) >= 100:
        return "%.0f" % x
    return "%.*f" % (nd, x)


def tail(rundir, name, n=3):
    """The last N lines of the log RUNDIR/NAME."""
    return log_tail(os.path.join(rundir, name), n)


def safe_name(s):
    return re.sub(r"[^A-Za-z0-9_.=-]", "_", s)


def git_head(tree=ROOT):
    """The commit TREE (a git work tree) is at, short; None if not one."""
    p = subprocess.run(["git", "-C", tree, "rev-parse", "--short", "HEAD"],
                       capture_output=True, text=True)
    return p.stdout.strip() or None


def lab_lock(path):
    """The bench lock (--lock, BENCH_LOCK), saying on the progress line
    that it waits."""
    return Lock(path, lambda p: Progress.show("(waiting for %s)" % p))


def catch_signals():
    """SIGTERM and SIGHUP end a run as ^C does: servers stopped, the image
    removed, the I/O scheduler and cgroups put back."""
    def on_signal(sig, frame):
        print("%s: signal %d" % (PROG, sig), file=sys.stderr)
        raise KeyboardInterrupt
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
