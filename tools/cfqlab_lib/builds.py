"""Builds to compare (bench/ab, bench/fidelity_sim.py): a directory that
holds a tree of nbdkit-cfq, built there with its own Makefile, or a git
revision of this repository, whose tree git archive writes into a
directory of its own under the run's work directory, built there and
removed with it.  Each build's own Makefile knows its layout (cfqsim was
one file, tools/cfqsim.c, before it was tools/cfqsim-*.c): the targets
are asked of make, never compiled here."""

import os
import subprocess

from .common import LabError
from .util import ROOT

# What bench/ab serves, and what fidelity_sim.py runs.
PLUGIN = "plugin/nbdkit-cfq-plugin.so"
CFQSIM = "tools/cfqsim"


class Build:
    """One tree and what was made in it."""

    def __init__(self, spec, root, commit):
        self.spec = spec          # as the user wrote it
        self.root = root          # the tree (absolute)
        self.commit = commit      # its commit, short; "+" when a tree differs from it
        self.plugin = os.path.join(root, PLUGIN)
        self.cfqsim = os.path.join(root, CFQSIM)

    def name(self):
        return self.spec if self.spec == self.commit else "%s (%s)" % (self.spec, self.commit)


def git(*args, cwd=ROOT):
    p = subprocess.run(["git", "-C", cwd] + list(args), capture_output=True, text=True)
    return p.stdout.strip() if p.returncode == 0 else None


def tree_commit(root):
    """The commit of the tree at ROOT, with "+" if it has changes; "-"
    outside git."""
    c = git("rev-parse", "--short", "HEAD", cwd=root)
    if c is None:
        return "-"
    dirty = git("status", "--porcelain", "--untracked-files=no", cwd=root)
    return c + ("+" if dirty else "")


def make(root, targets, jobs=2):
    """make TARGETS in the tree at ROOT; LabError with the end of its
    output if it fails."""
    p = subprocess.run(["make", "-C", root, "-j%d" % jobs] + list(targets),
                       capture_output=True, text=True)
    if p.returncode != 0:
        out = (p.stdout + p.stderr).strip().splitlines()[-8:]
        raise LabError("make %s in %s failed:\n  %s" % (" ".join(targets), root,
                                                        "\n  ".join(out)))


def resolve(spec, workdir, targets, cache):
    """The Build SPEC names (a directory, or a revision of this
    repository exported under WORKDIR), with TARGETS made in it.  CACHE
    ({key: Build}) makes the same tree or commit once."""
    if os.path.isdir(spec):
        root = os.path.realpath(spec)
        key = root
        if key not in cache:
            make(root, targets)
            cache[key] = Build(spec, root, tree_commit(root))
        return cache[key]
    sha = git("rev-parse", "--verify", "--quiet", spec + "^{commit}")
    if not sha:
        raise LabError("%s: neither a directory nor a commit of %s" % (spec, ROOT))
    if sha not in cache:
        root = os.path.join(workdir, "build-" + sha[:12])
        os.makedirs(root)
        # The commit's tree, and nothing of the repository's state: no
        # worktree to register or forget.
        arch = subprocess.Popen(["git", "-C", ROOT, "archive", "--format=tar", sha],
                                stdout=subprocess.PIPE)
        tar = subprocess.run(["tar", "-x", "-C", root], stdin=arch.stdout,
                             capture_output=True, text=True)
        arch.stdout.close()
        if arch.wait() != 0 or tar.returncode != 0:
            raise LabError("git archive %s into %s failed: %s" % (spec, root, tar.stderr.strip()))
        make(root, targets)
        cache[sha] = Build(spec, root, sha[:7])
    return cache[sha]
