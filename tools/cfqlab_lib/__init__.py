"""cfqlab: the fairness lab.  Describe tenants once, run them everywhere.

    tools/cfqlab [OPTIONS] SCENARIO
    make lab SCENARIO=bench/scenarios/noisy-neighbour.conf

A scenario is the server's own config file (`[device]`, `[scheduler]`,
`[group]`, `[export]`) plus `[tenant NAME]` workloads in fio's terms, a
`[sim]` section (the run's length and seed) and `[event NAME]` control
commands at set times (see man cfqlab, tools/cfqlab.pod).  `tools/cfqconf
--json` resolves it (one parser: core/config.c); this runner never parses
the INI itself.  It then runs the same tenants through each system:

  cfq, fifo    our server (scheduler=cfq, scheduler=fifo; `cfq:KEY=V,...`
               adds overrides), fio's nbd engine, one fio job and one NBD
               connection per tenant connection, on a Unix socket
  sim          tools/cfqsim on the same device model (also sim:fifo ...)
  bfq          the kernel's BFQ on the real disk, blkio cgroup weights
               (v1 blkio.bfq.weight or v2 io.bfq.weight), one stock
               `nbdkit file FILE cache=none` per tenant in its group's
               cgroup, ionice'd to the group's class
  qsd          qemu-storage-daemon, one throttle group per group, each
               limited to weight/sum(weights) of the capacity our fifo
               server measured in the same run
  rate         `nbdkit --filter=rate file`, one server per group, each
               limited the same way

A peer that cannot run here (not root, no BFQ, emulate= scenarios: the
peers have no device model) says why and is skipped, never faked.

Measurements come from the clients (fio's JSON with latency histograms,
and its bandwidth logs averaged over 1 s), the same for every system; for
our server the control socket's `stats` is kept next to them.  The report
(report.txt, report.json, shares.png, latency.png in --out) gives per
tenant its share of the bytes against its weight's share, IOPS, MiB/s,
p50/p99/p99.9/max latency and (--solo) its slowdown against running
alone; per system Jain's index of the weight-normalised shares, the
min/max ratio, the total work, and work conservation: when a tenant
stops, how long the others take to absorb its share.

Shares are computed on steady one-second bins only (no tenant starting or
stopping and no event inside the bin).  A tenant's expected share in a
bin is its group's weight over the weights of the groups active in that
bin, split over the group's active tenants by connections (CFQ 2.6.36
shares groups by weight whatever their class: the class orders queues
inside a group), water-filled so that a tenant capped by rate= or
rate_iops= (or, with --solo, by what it did alone) gets no more than it
asks for.

Every timing run (a server, its clients, its teardown) holds the lock
file named by --lock or BENCH_LOCK, so benchmarks on a shared machine do
not overlap; the page cache is dropped before each server when root.

The modules, in the order a run uses them:

  util.py       where the tree is, units, messages, the progress line
  common.py     what bench/ shares: medians, Jain's index, the page cache,
                fio's JSON, the bench lock, servers, the control socket
  builds.py     a build of the tree at a path or a commit (bench/ab)
  scenario.py   the scenario, through tools/cfqconf --json
  clients.py    fio jobs for the tenants; the file-system workloads
  fsclients.py  the file-system workloads' programs (--client)
  systems.py    our server (cfq, fifo) and cfqsim; the peers' base
  peers.py      bfq, qsd, rate and iocost
  analysis.py   shares, Jain, work conservation, caps' and reservations'
                verdicts, medians over rounds, the matrix's fractions
  plots.py      gnuplot: shares, latency tails, heat maps
  report.py     the tables
  lab.py        a scenario through each system, round after round
  matrix.py     the fairness matrix (--matrix)

tools/cfqlab is the program: its options and main().  Plain standard
library, /usr/bin/python3; nothing here writes bytecode into the tree
(the programs that import it set sys.dont_write_bytecode first).
"""
