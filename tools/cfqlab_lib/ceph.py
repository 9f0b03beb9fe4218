"""Ceph for the lab: a scenario served from an RBD image instead of a file.

--ceph starts a single-node cluster (tests/ceph/cluster.sh: one mon, one
mgr, one OSD, a pool "rbd" of size 1) under --dir for the run and stops it
afterwards; --ceph-conf uses a running cluster.  The image is
rbd:POOL/IMAGE.  --image may name one (filled by the caller); else the lab
creates one of the scenario's size in the pool "rbd" and fills it with rbd
bench's sequential writes, since an object never written is answered by
the OSD without touching its store, as a file's holes are by the kernel.

Who serves it: our server (file=rbd:POOL/IMAGE conf=...) and
qemu-storage-daemon through its rbd driver; the peers that serve a file
(BFQ, nbdkit's rate filter, the io controller) say they cannot."""

import json
import os
import shutil
import subprocess
import tempfile

from .common import LabError

PREFIX = "rbd:"


def is_rbd(image):
    return bool(image) and image.startswith(PREFIX)


def split(image):
    """rbd:POOL/IMAGE -> (POOL, IMAGE); rbd:IMAGE is in the pool "rbd"."""
    name = image[len(PREFIX):]
    pool, _, img = name.rpartition("/")
    if not img:
        raise LabError("%s: no image name after the pool" % image)
    return pool or "rbd", img


class Cluster:
    """A cluster the lab uses: its own (started in DIR on PORT) or CONF's."""

    def __init__(self, root, base, port, conf=None):
        self.script = os.path.join(root, "tests", "ceph", "cluster.sh")
        self.base = base
        self.port = str(port)
        self.conf = os.path.abspath(conf) if conf else None
        self.own = None          # the directory of a cluster we started
        self.images = []         # "pool/image" we created, removed at stop

    def start(self):
        if self.conf:
            os.environ["CEPH_CONF"] = self.conf
            return
        if shutil.which("rbd") is None:
            raise LabError("--ceph: no rbd command: install ceph (make deps)")
        why = subprocess.run([self.script, "check"], capture_output=True, text=True)
        if why.returncode != 0:
            raise LabError("--ceph: %s" % why.stdout.strip())
        self.own = tempfile.mkdtemp(prefix="cfqlab-ceph.", dir=self.base)
        p = subprocess.run([self.script, "start", self.own, self.port],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise LabError("--ceph: the cluster did not start (mon port %s): %s"
                           % (self.port, p.stderr.strip()[-500:]))
        self.conf = p.stdout.strip()
        os.environ["CEPH_CONF"] = self.conf

    def stop(self):
        for img in self.images:
            subprocess.run(["rbd", "rm", "--no-progress", img], capture_output=True)
        self.images = []
        if self.own:
            subprocess.run([self.script, "stop", self.own], capture_output=True)
            shutil.rmtree(self.own, ignore_errors=True)
            self.own = None

    def _rbd(self, *args):
        p = subprocess.run(["rbd", "--conf", self.conf] + list(args),
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise LabError("rbd %s: %s" % (" ".join(args), p.stderr.strip()[-300:]))
        return p.stdout

    def size(self, image):
        """Bytes of rbd:POOL/IMAGE."""
        pool, img = split(image)
        return json.loads(self._rbd("info", "--format", "json", "%s/%s" % (pool, img)))["size"]

    def create(self, name, size, fill, lock):
        """A new image NAME of SIZE bytes in the pool "rbd", its data
        written once (FILL) under LOCK; returns rbd:rbd/NAME."""
        ref = "rbd/" + name
        mib = max(1, (size + (1 << 20) - 1) >> 20)
        self._rbd("create", "--size", "%dM" % mib, "--image-feature", "layering", ref)
        self.images.append(ref)
        if fill:
            with lock:
                self._rbd("bench", "--io-type", "write", "--io-size", "4M",
                          "--io-threads", "4", "--io-total", "%dM" % mib,
                          "--io-pattern", "seq", ref)
        return PREFIX + ref

    def qsd_blockdev(self, image, node):
        """qemu-storage-daemon's --blockdev for IMAGE as node NODE (librbd's
        cache off, as our server's is)."""
        pool, img = split(image)
        return ("driver=rbd,node-name=%s,pool=%s,image=%s,conf=%s,cache.direct=on"
                % (node, pool, img, self.conf))
