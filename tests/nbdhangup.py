#!/usr/bin/python3
"""nbdhangup.py: NBD clients that go away with requests in flight.

    nbdhangup.py SOCKET EXPORT close-reads N SIZE   handshake, N reads of SIZE
                                                 bytes, close without
                                                 reading a reply
    nbdhangup.py SOCKET EXPORT close-writes N SIZE  the same with writes (their
                                                 data sent whole)
    nbdhangup.py SOCKET EXPORT kill N SIZE          a libnbd client issues N
                                                 reads of SIZE and is killed
                                                 with SIGKILL once they are
                                                 all sent

    nbdhangup.py SOCKET EXPORT stall N SIZE      N reads of SIZE, then no reply
                                                 read for --hold seconds; exit
                                                 0 if the server closed the
                                                 connection in that time, 3
                                                 if not

Each speaks the fixed newstyle handshake with NBD_OPT_GO itself (only the
kill mode uses libnbd), so that the requests reach the server exactly as
written: nothing waits for a reply.  Offsets are SIZE-aligned and spread
over the first 64 MiB of the export (--span changes that).  Exit status 0
when the requests were sent, 1 when the server refused or closed first.
"""

import argparse
import os
import select
import signal
import socket
import struct
import sys
import time

NBD_OPT_GO = 7
NBD_REP_ACK = 1
NBD_REP_FLAG_ERROR = 1 << 31
OPT_REPLY_MAGIC = 0x3e889045565a9
REQUEST_MAGIC = 0x25609513
CMD_READ, CMD_WRITE = 0, 1


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise EOFError("server closed the connection during the handshake")
        buf += chunk
    return buf


def handshake(path, export):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    magic, opt, _flags = struct.unpack(">8s8sH", recv_exact(s, 18))
    if magic != b"NBDMAGIC" or opt != b"IHAVEOPT":
        raise RuntimeError("not a newstyle NBD server")
    s.sendall(struct.pack(">I", 3))         # FIXED_NEWSTYLE | NO_ZEROES
    name = export.encode()
    data = struct.pack(">I", len(name)) + name + struct.pack(">H", 0)
    s.sendall(b"IHAVEOPT" + struct.pack(">II", NBD_OPT_GO, len(data)) + data)
    while True:
        rmagic, _opt, rtype, rlen = struct.unpack(">QIII", recv_exact(s, 20))
        if rmagic != OPT_REPLY_MAGIC:
            raise RuntimeError("bad option reply magic")
        recv_exact(s, rlen)
        if rtype & NBD_REP_FLAG_ERROR:
            raise RuntimeError("NBD_OPT_GO refused (reply type 0x%x)" % rtype)
        if rtype == NBD_REP_ACK:
            return s


def offsets(n, size, span):
    slots = max(1, span // size)
    return [(i * 7919 % slots) * size for i in range(n)]


def close_with_requests(args, cmd):
    s = handshake(args.socket, args.export)
    payload = b"\x5a" * args.size if cmd == CMD_WRITE else b""
    out = bytearray()
    for i, off in enumerate(offsets(args.n, args.size, args.span)):
        out += struct.pack(">IHHQQI", REQUEST_MAGIC, 0, cmd, i + 1, off,
                           args.size)
        out += payload
    s.sendall(out)
    # Leave the replies unread: with data in its receive queue the close
    # resets the connection, as a crashed client's would.
    s.close()


def stall(args):
    s = handshake(args.socket, args.export)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    out = bytearray()
    for i, off in enumerate(offsets(args.n, args.size, args.span)):
        out += struct.pack(">IHHQQI", REQUEST_MAGIC, 0, CMD_READ, i + 1, off,
                           args.size)
    s.sendall(out)
    # Read nothing; watch for the server shutting the connection down
    # (POLLRDHUP is set even with its replies still unread).
    p = select.poll()
    p.register(s, select.POLLRDHUP)
    deadline = time.monotonic() + args.hold
    while time.monotonic() < deadline:
        if p.poll(100):
            print("closed by the server after %.1f s" %
                  (args.hold - (deadline - time.monotonic())))
            s.close()
            return 0
    s.close()
    return 3


def kill_with_reads(args):
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.close(rfd)
            import nbd
            h = nbd.NBD()
            h.connect_uri("nbd+unix:///%s?socket=%s" % (args.export,
                                                          args.socket))
            bufs = []
            for off in offsets(args.n, args.size, args.span):
                b = nbd.Buffer(args.size)
                bufs.append(b)
                h.aio_pread(b, off)
            # Until every request is on the socket.
            while h.aio_get_direction() & nbd.AIO_DIRECTION_WRITE:
                h.poll(1)
            os.write(wfd, b"sent")
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(wfd)
    with os.fdopen(rfd, "rb") as r:
        sent = r.read(4) == b"sent"
    # Replies are on their way: kill it a moment later, at a different
    # moment each run.
    time.sleep((os.getpid() % 5) / 1000.0)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return 0 if sent else 1


def main():
    p = argparse.ArgumentParser()
    p.add_argument("socket")
    p.add_argument("export")
    p.add_argument("mode", choices=["close-reads", "close-writes", "kill",
                                    "stall"])
    p.add_argument("n", type=int)
    p.add_argument("size", type=int)
    p.add_argument("--span", type=int, default=64 << 20)
    p.add_argument("--hold", type=float, default=10)
    args = p.parse_args()
    try:
        if args.mode == "close-reads":
            close_with_requests(args, CMD_READ)
        elif args.mode == "close-writes":
            close_with_requests(args, CMD_WRITE)
        elif args.mode == "stall":
            return stall(args)
        else:
            return kill_with_reads(args)
    except (OSError, EOFError, RuntimeError) as e:
        print("nbdhangup.py: %s" % e, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
