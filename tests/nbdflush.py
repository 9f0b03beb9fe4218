# nbdflush.py: what the flush tests' Python needs (test-flush-error.sh,
# test-flush-race.sh), which run Python with PYTHONPATH=$TESTS_DIR.
import errno
import nbd


def conn(sock):
    """A connection to the Unix socket sock, without libnbd's checks."""
    h = nbd.NBD()
    h.set_strict_mode(0)
    h.connect_unix(sock)
    return h


def result(fn):
    """Run fn: "ok", "EIO", or "errno N"."""
    try:
        fn()
        return "ok"
    except nbd.Error as e:
        return "EIO" if e.errnum == errno.EIO else "errno %d" % e.errnum


def flush(h):
    return result(h.flush)
