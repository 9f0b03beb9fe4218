/* cfq.c: Completely Fair Queueing (Linux 2.6.36 semantics) on a virtual clock.
 *
 * What CFQ decides, and why
 * -------------------------
 * A disk is a single server whose cost per request depends on what it did
 * just before: a request next to the previous one is nearly free, a seek on
 * a rotating disk costs milliseconds.  Serving requests in arrival order
 * (FIFO) or strictly by sector (deadline) is fair to requests, not to the
 * clients issuing them: a streaming writer with a deep queue takes the disk
 * from a reader that issues one request at a time and thinks in between.
 * CFQ is fair to clients instead.  It gives each client queue (cfqq) the disk
 * for a time slice, during which only that queue dispatches, in sector order.
 * When the queue runs dry before its slice ends, CFQ may leave the disk idle
 * for a few ms (slice_idle) because a synchronous client that just got its
 * data back usually sends the next nearby request at once: waiting costs
 * less than the seek to another client's area, and it stops the reader from
 * being starved by writers that always have something queued.
 *
 * Around that core:
 * - Classes are strict: RT queues are served before BE, BE before IDLE,
 *   and within a class the level (0..7) scales the slice length:
 *   slice = base + base/5 * (4 - level).
 * - Inside a group, queues sit on service trees by workload: SYNC (sync
 *   queues that idle), SYNC_NOIDLE (seeky or thinking sync queues: idling
 *   for each does not pay, so CFQ idles once for the whole tree) and ASYNC.
 *   A workload keeps the disk for a workload slice sized from target_latency
 *   and how many queues it has against the group's busy average.
 * - Groups (tenants here, cgroups in Linux) share the disk by weight: each
 *   has a virtual disk time that grows by the time it used, times 500/weight;
 *   the group with the smallest vdisktime goes next.  With slice_idle=0 on a
 *   queueing device the time a group "used" is meaningless, so CFQ charges
 *   requests instead (IOPS mode).  group_idle keeps a group's turn alive for
 *   a moment when its last queue runs dry, or a sparse tenant would lose its
 *   share to a greedy one every time it thinks.
 * - low_latency shortens slices so that all busy queues of a group get a
 *   turn within target_latency, and keeps async writers shallow while sync
 *   requests are being delayed.
 * - Preemption lets a more urgent queue (RT over BE, sync over async, a
 *   request right next to the head while the active queue idles) take the
 *   disk early; the preempted queue keeps its unused slice as a credit.
 * - Cooperating queues: two clients reading one area in turns (a thread
 *   pool) look seeky one by one but sequential together; CFQ notices the
 *   queue whose next request is close to the head, serves it instead of
 *   idling, and merges the two into one queue; it splits them again when
 *   the shared queue turns seeky.
 *
 * Data structures
 * ---------------
 *
 *   cfqd --grp_st (rb by vdisktime, leftmost cached)
 *          |
 *          +-- cfqg "a" weight 500 ----------------------------------+
 *          |     st[RT][ASYNC] st[RT][SYNC_NOIDLE] st[RT][SYNC]      |
 *          |     st[BE][ASYNC] st[BE][SYNC_NOIDLE] st[BE][SYNC]      |
 *          |     st_idle       (each: rb of cfqq by rb_key)          |
 *          |                    |                                     |
 *          |                    +-- cfqq (sync, one per connection)   |
 *          |                    |     sort_list: rb of rq by sector   |
 *          |                    |     fifo: list of rq by arrival     |
 *          |                    |     next_rq -> best rq after head   |
 *          |                    +-- cfqq ...                          |
 *          |     async[RT|BE][level], async_idle: embedded cfqq      |
 *          |     prio_trees[level]: rb of cfqq by next_rq sector     |
 *          +-- cfqg "b" ...                                           |
 *
 *   sched_queue (a connection = Linux's cfq_io_context) --cfqq--> the sync
 *   cfqq now serving it: its own embedded one, or another connection's
 *   after a merge.
 *
 * Kernel names kept: cfqd (struct cfqd, cfq_data), cfqg (struct
 * sched_group, cfq_group), cfqq (struct cfqq, cfq_queue), rq (struct rq),
 * service_tree/st (struct rb_root of cfqq), grp_st (grp_service_tree), cic
 * (struct sched_queue: what cfq_io_context was: the submitter's identity,
 * think time, and the pointer to its sync queue).  Functions are named after
 * the kernel ones they mirror (cfq_select_queue, cfq_may_dispatch,
 * cfq_arm_slice_timer, ...) so the two can be read side by side.
 *
 * Deviations from the kernel
 * --------------------------
 * - Time: jiffies become ns passed in by the caller; HZ-based constants are
 *   taken at HZ=1000 (a jiffy = 1 ms: CFQ_MIN_TT 2 ms, CFQ_IDLE_DELAY 200 ms,
 *   the "1 jiffy left" tests use 1 ms).  IOPS mode charges 1 ms per request,
 *   which is what one request "weighs" against CFQ_IDLE_DELAY at HZ=1000.
 * - Timers: there is no timer.  The idle timer is a deadline (idle_timer)
 *   that dispatch() returns in *next, and that every entry point fires if it
 *   has passed.  cfq_schedule_dispatch() has no equivalent: the mechanism
 *   calls dispatch() after every insert and completion anyway.
 * - No cgroups: groups are tenants created by group_new(); a queue created
 *   with no group goes to the root group (weight 1000, as in CFQ).
 * - io_context -> connection (struct sched_queue); one sync cfqq each.  No
 *   process priorities, no nice, no prio boost: class and level are fixed
 *   when the connection is created.
 * - Async queues are per (group, class, level) as in Linux 4.x, not per
 *   device as in 2.6.36 (tenants' writes must be charged to the tenant);
 *   they are embedded in the group, so nothing is allocated on the request
 *   path.
 * - group_isolation is fixed at 1: seeky queues stay in their group (CFQ's
 *   default 0 moved them to the root group, which lets a tenant escape its
 *   weight; 2.6.39 made isolation unconditional).  The tunable exists so
 *   configurations written for 2.6.36 load, and refuses 0.
 * - hw_tag (not a CFQ tunable) can force the queueing detection's answer:
 *   2 (default) detects as CFQ does, 0 or 1 pin it.
 * - merge (not in CFQ) switches the cooperating-queue logic off, to measure
 *   what it brings; the default 1 is CFQ.
 * - The queue run after a completion: in Linux the driver's completion path
 *   runs the queue (cfq_dispatch_requests) before the submitting task can
 *   wake up and send its next request, so a depth-1 reader is seen empty at
 *   every completion.  Our completed() does the queue choice of that run
 *   (cfq_select_queue, no dispatch) for the same effect, whatever order the
 *   mechanism calls us in afterwards; and if that run would have dispatched
 *   from the chosen queue, a preemption arriving before our next dispatch()
 *   is applied after that one request (run_queue, preempt_pending).
 * - Idle-class grace: when only IDLE-class queues have work, none starts
 *   until 100 ms after the last non-IDLE completion (CFQ_IDLE_GRACE of CFQ
 *   up to 2.6.27; 2.6.36 has only the class order inside a group).
 * - Cooperator lookup: one prio tree per (group, level) instead of per
 *   level per device (cooperators must share a group anyway); a queue is
 *   re-keyed whenever its next_rq changes (the kernel leaves stale keys),
 *   and both neighbours of the head position are looked at.
 * - cfq_should_wait_busy does not extend a slice while the queue still has
 *   requests (as in 2.6.37).
 * - Requests with equal sectors are kept side by side in the sort tree
 *   (the kernel's elv_rb_add dispatches the alias at once); no front/back
 *   merging, that is the block layer's and the engine's job.
 * - Merged queues: the kernel allocates a fresh cfqq on split; we send the
 *   connection back to its own embedded cfqq, so nothing is allocated.
 *   The connection whose embedded cfqq is the shared one stays in it, and
 *   the others leave, each at its next request (sending the owner "back"
 *   to the queue it is in left the others merged for good).
 * - must_dispatch for an expired fifo (Linux 3.x/4.x, not 2.6.36): a queue
 *   whose fifo head expired must dispatch it, past the sync-in-flight and
 *   depth limits (cfq_may_dispatch), and a sync request does not preempt
 *   an async queue in that state (cfq_should_preempt).  Our completion
 *   run looks at the fifo as the kernel's queue run would.  Taken because
 *   the issue requires an async writer not to be starved under busy sync
 *   readers with low_latency, and later CFQ fixed preemption this way.
 * - Async deadline (ours, in no kernel): must_dispatch alone does not
 *   keep a writer alive on a disk with 4 idling readers (lowlat-4.job:
 *   17.8% of its solo rate), because there the preemption is not what
 *   delays it: the async queue's rb_key offset, (busy - 1) * (180 - 40)
 *   ms against (busy - 1) * (180 - 100) for a reader, brings its turn
 *   back only every ~560 ms, two rounds of reader slices.  So when the
 *   group's async queue holds a request past fifo_expire_async and had
 *   no turn for fifo_expire_async, it is overdue: the ASYNC workload is
 *   chosen at the next queue switch whatever the keys and the remaining
 *   sync workload slice say, and a sync slice of the group ends at the
 *   next queue choice (cfq_async_overdue).  At most one forced turn per
 *   fifo_expire_async, so a deep writer cannot take over; its turn is
 *   still bounded by the async workload slice and slice_async_rq.
 * - group_idle on a queueing SSD (Linux 3.x/4.x, not 2.6.37): 2.6.37 never
 *   arms the idle timer when the device is non-rotational and queues, so
 *   with slice_idle=0 a tenant whose client needs a round trip before its
 *   next request (an NBD client: the reply travels back first) empties
 *   its group, leaves the service tree and comes back at its end; three
 *   tenants weighted 100/200/400 then got 16/30/53% on the emulated SSD
 *   (tests/sim/ssd-group-share.job: 1/3 each).  Later CFQ arms group_idle
 *   there ("!cfq_group_idle" in the SSD test of cfq_arm_slice_timer); we
 *   do too, but only while another group is busy: alone, a group has no
 *   share to protect and the window cost 8 ms per reader turn
 *   (ssd-group-idle.job).  Queue idling stays off there, as in 2.6.37.
 * - Group place on re-add (ours; the 2.6.36 source says "Later implement
 *   something so that groups get lesser vtime based on their weights, so
 *   that if group does not loose all if it was not continously
 *   backlogged"): a group that left the tree and is busy again within
 *   CFQ_GROUP_KEEP (200 ms) keeps its own vdisktime, raised to
 *   min_vdisktime so it cannot bank service; later than that it goes to
 *   the end as in 2.6.36.  A client stalled for longer than group_idle
 *   (a loaded machine deschedules it) so loses only the turn it missed,
 *   not its place: measured with the NBD test under CPU load, large's
 *   share 53.5% with group_idle alone, 56.5% with both (want 57.1%).
 * - Drain charge (ours; CFQ 2.6.36 to 4.x fail here the same way): a slice
 *   expires at the first completion after slice_end (cfq_completed), and
 *   in time mode the group is charged now - slice_start, capped at the
 *   allocated slice; the next queue's slice starts at its own first
 *   completion.  On a disk that queues (hw_tag), a deep reader still has
 *   quantum/2 = 4 requests in the driver when it expires: the disk serves
 *   them (~30 ms on the emulated HDD) before the next queue's first
 *   completion, and that time is charged to nobody.  Every turn so costs
 *   ~30 ms free of charge, worth most to the group with the shortest
 *   slice: 100/200/400 got 18.2/29.0/52.8% (tests/sim/hdd-group-deep.job,
 *   trace: small used 82 ms per turn for 43 charged, large 127 for 100).
 *   So a group that expires in time mode with its queue's requests in the
 *   driver is charged, on top, the time until its last one completes or
 *   until one of its queues is made active again, whichever is first
 *   (drain_since): 15.0/28.6/56.4%.  Where the next queue's first
 *   completion overtakes the drain, that overlap is charged to both.
 * - Seek history of a new queue (ours): the kernel starts a sync queue
 *   with its idle window on and an empty seek history that counts as "no
 *   seeks", so a random reader is idled for until its fifth seek.  With
 *   32 random readers at depth 1 on the emulated disk, every reader's
 *   first requests each cost an idle window and the first round took
 *   seconds: max read latency 3.2 s against FIFO's 0.38 s through the
 *   server (tests/sim/hdd-32-readers.job: 2.1 s against 0.40 s).  Here a
 *   queue is seeky when more than one in eight of the requests judged so
 *   far were seeks (the kernel's "more than 4 of the last 32" once 32
 *   are known), and its first request, which has no distance of its own,
 *   is judged by its distance from the head until the second one gives a
 *   real sample.  A reader whose first request is where the head is
 *   idles as in the kernel; a sequential one that starts far away idles
 *   from its third request (think time needs three samples anyway).  A
 *   new queue whose first request is seeky joins SYNC_NOIDLE right away
 *   (the kernel puts every new queue on SYNC first), unless slice_idle=0,
 *   where nothing idles and the kernel's placement is kept.
 * - Service tree keys (ours): a queue joining a tree is keyed now +
 *   (nr_cfqq - 1) * (its slice's shortfall), measured from a level-4 sync
 *   queue instead of from level 0.  Between queues of different levels
 *   or kinds the difference of two keys taken at the same nr_cfqq is the
 *   kernel's; between equal queues it is now their arrival order.  The
 *   kernel's form adds 80 ms per busy queue to every level-4 reader, so
 *   one that joins while many are busy goes behind all that join later
 *   while few are: 128 connections reading at random in one group got
 *   per-connection Jain 0.79 and a worst latency of 3.8 s against FIFO's
 *   1.00 and 0.11 s (tests/sim/many-conns.job).
 * - Seek cost (ours): the kernel takes "does the device seek" from the
 *   queue's rotational flag; a virtio disk or a RAID controller on flash
 *   says it rotates (vda here), and CFQ then idles for every sync queue
 *   and charges groups by time on a device where waiting gains nothing.
 *   So the policy also measures it: a read dispatched more than
 *   CFQQ_SEEK_THR from the head is timed from its dispatch (or from the
 *   completion before it, if that came later) to its completion, as a
 *   think-time style average.  After 16 such reads, a device that says it
 *   rotates but serves them in under 1 ms on average (a disk needs 3 ms
 *   and more for a seek and a rotation) is taken as non-rotational
 *   (seek_fast), and back above 2 ms; only reads count, since a write
 *   cache makes a disk's writes look free.  cfq_nonrot() is then true:
 *   seek detection by request size, no queue idling when it queues, and
 *   IOPS charging under mode=auto.
 * - mode=auto charges by requests on a non-rotational device whatever
 *   slice_idle is (as Linux 4.x, "Make CFQ default to IOPS mode on
 *   SSDs"), besides 2.6.36's "slice_idle=0 and the device queues".  The
 *   rule used to live in the plugin; here cfqsim applies it too.
 * - Flash that queues (ours): 2.6.37 stops idling on a non-rotational
 *   device with hw_tag, but a sync queue that is the last of its tree
 *   still kept the device while its requests were in flight
 *   (cfq_should_idle's "last queue of its tree" rule, used by
 *   cfq_select_queue): a writer with four 1 MiB writes out made four
 *   random readers wait for all of them, every round (tests/sim/
 *   readers-writer.job on the SSD model: 469 reader IOPS against FIFO's
 *   35,471).  There cfq_should_idle is now false.
 * - Preemption key (ours): a preempting queue goes to the front of its
 *   tree, keyed just before its first queue; the kernel keys it a second
 *   (HZ) before.  Seeky readers preempting one another on SYNC_NOIDLE
 *   (one does at every arrival, "count == 2") so drove that tree's keys
 *   further into the past at each preemption, and cfq_choose_wl, which
 *   serves the tree whose first key is lowest, never chose SYNC again
 *   while they kept it busy: a sequential writer beside four random
 *   readers on the disk got 8% of its solo rate (25% now), and a new
 *   reader's first request waited 1.4 s there.
 * - Flushes: the kernel's flushes bypass the elevator; ours are sync
 *   requests of the connection's queue, so that a client's flush waits
 *   its turn like its writes, but they have no place on the disk: they
 *   move neither the queue's seek history and position nor the head
 *   (each flush used to count as a request at sector 0, so a journal
 *   writing sequentially with a flush after each write looked seeky).
 * - Plain writes: whether a request is sync is the rule of core/sched.c
 *   (sched_classify): NBD has no sync flag, so a connection's plain
 *   writes are sync while it reads, flushes or writes FUA, and
 *   writeback-like (async) when it only streams writes.
 * - Writeback backlog (ours): the kernel lets the only busy queue put any
 *   number of requests at the device.  For an async queue on a disk that
 *   is a backlog every later sync request waits behind: a tenant streaming
 *   1 MiB writes 16 deep kept ~110 ms of them at the disk between the
 *   fsyncs of a tenant beside it, and each fsync waited for them
 *   (tests/sim/fsync-writer.job: fsync p90 135 ms, FIFO's 267).  On a
 *   rotational device an async queue now gets at most quantum requests at
 *   the device even alone (p90 84 ms; the writer keeps its rate: a disk
 *   serves a stream in order, and depth beyond a few requests gains it
 *   nothing).  Sync queues and flash keep the kernel's rule.
 * - Caps and reservations (ours, issue 13; the rules are in core/qos.c):
 *   the reserved group whose mClock tag is due dispatches before CFQ
 *   chooses, uncharged; a group its caps hold is skipped in the group
 *   choice (its lag kept, at most a round), ends its turn when refused,
 *   and when released is served between turns while owed service,
 *   charged as CFQ would.  With no group capped or reserved none of this
 *   runs (qos_on()).
 * Known CFQ faults kept as the default (see cfq.md, complaints): idling on a
 * queueing SSD unless slice_idle=0 (a better choice is slice_idle=0 there;
 * mode=iops forces request charging); target_latency cutting sequential
 * throughput with many readers (a better choice is 600 ms); group_idle
 * costing throughput when groups cannot keep the disk busy; hw_tag starting
 * at "unknown = queues", so slice_idle=0 on a lightly loaded disk (never
 * more than 5 requests) stays in IOPS mode for good (hw_tag=0 or mode=time
 * pins time mode); async waiting while any sync request is in flight
 * unless its fifo expired (the async deadline above bounds the damage; a
 * better choice is BFQ's or iocost's budgets for writes); the elevator
 * order inside a slice with the fifo looked at once per slice, so a deep
 * random reader's request can miss two rounds (a better choice is checking
 * the fifo at every dispatch).
 *
 * Memory and threading: everything is allocated in create, group_new and
 * queue_new; insert/dispatch/completed never allocate.  A connection (and
 * the cfqq embedded in it) is freed when it is dead (queue_free), no
 * request of it is pending, and no other connection or merge link refers to
 * its cfqq (the counts nr_conn, nr_rq, nr_link are the kernel's cfqq->ref
 * split by kind).  One thread (the dispatcher) owns a struct cfqd and all
 * that hangs from it.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfq.h"
#include "qos.h"
#include "sched.h"
#include "units.h"

/* ---- Tunables: the one table ------------------------------------------ */

#define MS NSEC_PER_MSEC

enum {
  T_QUANTUM,
  T_FIFO_EXPIRE_SYNC,
  T_FIFO_EXPIRE_ASYNC,
  T_BACK_SEEK_MAX,
  T_BACK_SEEK_PENALTY,
  T_SLICE_SYNC,
  T_SLICE_ASYNC,
  T_SLICE_ASYNC_RQ,
  T_SLICE_IDLE,
  T_GROUP_IDLE,
  T_LOW_LATENCY,
  T_TARGET_LATENCY,
  T_MODE,
  T_ROTATIONAL,
  T_GROUP_ISOLATION,
  T_MERGE,
  T_HW_TAG,
  T_NR,
};

const struct cfq_tunable cfq_tunables[T_NR] = {
  [T_QUANTUM] = { "quantum", "requests", 8, 1, 1024,
    "cap on the active queue's requests in the driver" },
  [T_FIFO_EXPIRE_SYNC] = { "fifo_expire_sync", "ns", 125 * MS, 1 * MS,
    60000 * MS, "sync request deadline, checked once per slice" },
  [T_FIFO_EXPIRE_ASYNC] = { "fifo_expire_async", "ns", 250 * MS, 1 * MS,
    60000 * MS, "async request deadline, checked once per slice" },
  [T_BACK_SEEK_MAX] = { "back_seek_max", "KiB", 16384, 0, 1 << 30,
    "backward requests within this distance are candidates" },
  [T_BACK_SEEK_PENALTY] = { "back_seek_penalty", "factor", 2, 1, 1000,
    "backward distance is multiplied by this" },
  [T_SLICE_SYNC] = { "slice_sync", "ns", 100 * MS, 1 * MS, 10000 * MS,
    "base time slice of a sync queue (level 4)" },
  [T_SLICE_ASYNC] = { "slice_async", "ns", 40 * MS, 1 * MS, 10000 * MS,
    "base time slice of an async queue (level 4)" },
  [T_SLICE_ASYNC_RQ] = { "slice_async_rq", "requests", 2, 1, 1024,
    "async queue expires after 2*(n + n*(7-level)) dispatches" },
  [T_SLICE_IDLE] = { "slice_idle", "ns", 8 * MS, 0, 1000 * MS,
    "idle window for a sync queue; 0 disables (IOPS mode with NCQ)" },
  [T_GROUP_IDLE] = { "group_idle", "ns", 8 * MS, 0, 1000 * MS,
    "idle window for a group's last queue when queue idling is off" },
  [T_LOW_LATENCY] = { "low_latency", "bool", 1, 0, 1,
    "scale slices to target_latency; ramp async depth after delays" },
  [T_TARGET_LATENCY] = { "target_latency", "ns", 300 * MS, 1 * MS,
    10000 * MS, "time in which every busy queue of a group gets a turn" },
  [T_MODE] = { "mode", "mode", CFQ_MODE_AUTO, 0, 2,
    "group charge: 0 time, 1 iops, 2 auto (iops on flash; or NCQ, no idle)" },
  [T_ROTATIONAL] = { "rotational", "bool", 1, 0, 1,
    "device seeks (1) or not (0): seek detection and idling rules" },
  [T_GROUP_ISOLATION] = { "group_isolation", "bool", 1, 1, 1,
    "always 1: seeky queues stay in their group (CFQ's 0 is not offered)" },
  [T_MERGE] = { "merge", "bool", 1, 0, 1,
    "cooperating queues: serve a close queue instead of idling, merge them" },
  [T_HW_TAG] = { "hw_tag", "mode", 2, 0, 2,
    "device queues: 0 no, 1 yes (forced), 2 detect (starts assuming yes)" },
};
const size_t cfq_nr_tunables = T_NR;

/* Constants of cfq-iosched.c, HZ=1000. */
#define CFQ_IDLE_DELAY          (200 * MS)      /* HZ / 5 */
/* ns: a group that left the tree and is back within this keeps its place
 * (ours, see the essay); HZ / 5 again, the kernel's idea of "idle".
 */
#define CFQ_GROUP_KEEP          CFQ_IDLE_DELAY
#define CFQ_MIN_TT              (2 * MS)        /* 2 jiffies */
#define CFQ_JIFFY               (1 * MS)
#define CFQ_FRONT_OFFSET        1               /* ns before the first queue's
                                                   key: add_front (the kernel's
                                                   HZ, see the essay) */
#define CFQ_SLICE_SCALE         5
#define CFQ_HW_QUEUE_MIN        5
#define CFQ_HW_SAMPLES          50
#define CFQ_SERVICE_SHIFT       12
#define CFQ_WEIGHT_DEFAULT      500
#define CFQ_ROOT_WEIGHT         1000    /* 2 * BLKIO_WEIGHT_DEFAULT */
#define CFQ_IOPS_CHARGE         CFQ_JIFFY       /* one request, IOPS mode */
#define CFQ_HIST_DIVISOR        4
#define CFQQ_SEEK_THR           (8 * 100)       /* sectors */
#define CFQQ_CLOSE_THR          (8 * 1024)      /* sectors */
#define CFQQ_SECT_THR_NONROT    (2 * 32)        /* sectors */
#define CFQ_PAGE_SIZE           4096
#define CFQ_IDLE_GRACE          (100 * MS)      /* HZ / 10, CFQ <= 2.6.27 */
#define CFQ_PRIO_LISTS          SCHED_LEVELS
#define CFQ_PRIO_DEFAULT        4               /* IOPRIO_NORM */
#define CFQ_SAMPLE_VALID(s)     ((s) > 80)
/* Seek cost (ours): after this many seeky reads, a "rotational" device
 * whose mean service time for them is under CFQ_SEEK_FAST is taken as
 * non-rotational, and taken back as rotational above CFQ_SEEK_SLOW.
 */
#define CFQ_SEEK_SAMPLES        16
#define CFQ_SEEK_FAST           (1 * MS)
#define CFQ_SEEK_SLOW           (2 * MS)
#define CFQ_RQ_SEEK             0x01    /* rq->pflags: a read dispatched
                                           away from the head */

/* ---- Structures --------------------------------------------------------- */

enum wl_prio { BE_WORKLOAD = 0, RT_WORKLOAD = 1, IDLE_WORKLOAD = 2 };
enum wl_type { ASYNC_WORKLOAD = 0, SYNC_NOIDLE_WORKLOAD = 1, SYNC_WORKLOAD = 2 };

struct cfqd;

/* A queue: the unit that gets time slices. */
struct cfqq {
  struct cfqd *cfqd;
  struct sched_group *cfqg;     /* group charged for its service */
  struct sched_queue *owner;    /* connection embedding it; NULL: async */

  /* Position on a service tree while busy (on_rr). */
  struct rb_node rb_node;
  int64_t rb_key;               /* ns: virtual service start */
  struct rb_root *service_tree; /* tree it is on, NULL if none */

  /* Position on the group's prio tree (cooperator lookup). */
  struct rb_node p_node;
  struct rb_root *p_root;       /* NULL if not on one */

  struct rb_root sort_list;     /* queued rqs by sector */
  struct rq *next_rq;           /* best next rq after the head */
  unsigned queued[2];           /* queued rqs: [async, sync] */
  struct list fifo;             /* queued rqs by arrival */

  uint64_t dispatch_start;      /* ns: made active */
  uint64_t allocated_slice;     /* ns: slice length given */
  uint64_t slice_start;         /* ns: first completion in slice */
  uint64_t slice_end;           /* ns: slice ends (valid if !slice_new) */
  int64_t slice_resid;          /* ns: unused slice carried (<0: overrun) */
  unsigned slice_dispatch;      /* requests dispatched in this slice */
  uint64_t last_served;         /* ns: end of its last slice that
                                   dispatched (async deadline rule) */

  unsigned meta_pending;        /* queued RQ_META rqs */
  unsigned dispatched;          /* rqs in the driver */

  unsigned short ioprio;        /* level 0..7 */
  unsigned short ioprio_class;  /* enum sched_class */

  uint32_t seek_history;        /* 1 bit per request: was it a seek */
  unsigned seek_samples;        /* requests judged in seek_history, <= 32 */
  bool seek_first;              /* no sample yet: its first request was far
                                   from the head */
  uint64_t last_request_pos;    /* sector after the last queued rq */

  struct cfqq *new_cfqq;        /* merge target (cfq_setup_merge) */

  /* The kernel's cfqq->ref, by kind.  Async cfqqs are never freed. */
  unsigned nr_conn;             /* connections whose ->cfqq is this */
  unsigned nr_rq;               /* rqs inserted here, not completed */
  unsigned nr_link;             /* cfqqs whose new_cfqq is this */

  /* State flags (cfq_cfqq_*). */
  bool on_rr;                   /* on a service tree */
  bool wait_request;            /* idle timer armed for it */
  bool must_dispatch;           /* rq arrived while idling: let it out */
  bool fifo_expire;             /* fifo checked in this slice */
  bool idle_window;             /* idling enabled by history */
  bool slice_new;               /* no completion yet in this slice */
  bool sync;                    /* sync queue */
  bool coop;                    /* shared by merged connections */
  bool split_coop;              /* shared queue turned seeky: split */
  bool deep;                    /* saw >= 4 queued rqs */
  bool wait_busy;               /* slice extended to keep group busy */
};

/* A group (tenant): its queues' service trees and its share. */
struct sched_group {
  struct cfqd *cfqd;
  struct list link;             /* on cfqd->groups */
  char name[32];
  unsigned weight;              /* 100..1000 */

  struct rb_node rb_node;       /* on cfqd->grp_st while busy */
  bool on_st;
  uint64_t vdisktime;           /* (ns << 12) * 500 / weight, cumulative */
  bool has_left;                /* left the tree at least once */
  uint64_t left_at;             /* ns: when it last left the tree */

  unsigned nr_cfqq;             /* busy queues of the group */
  unsigned dispatched;          /* rqs of the group in the driver */
  uint64_t drain_since;         /* ns: its slice expired with requests in
                                   the driver, whose time is not charged
                                   yet (drain charge); 0: none pending */
  unsigned busy_queues_avg[2];  /* [BE, RT]: decaying average of busy */

  /* Lifetime counters of what happened to the group's queues, the same
   * events as cfqd->stats counts device-wide (cfq_group_get_stats).
   */
  uint64_t st_slices;           /* its queues made active */
  uint64_t st_idle_arms;        /* idle timer armed for it (slice_idle) */
  uint64_t st_group_idle_arms;  /* idle timer armed for it (group_idle) */
  uint64_t st_idle_hits;        /* requests arriving while it idled */
  uint64_t st_idle_timeouts;    /* its idle windows that ran out */
  uint64_t st_preemptions;      /* its active queue preempted */
  uint64_t st_dispatched;       /* requests dispatched, lifetime */
  uint64_t st_used_ns;          /* ns: slice usage at each expiry plus
                                   the drain charge */

  struct rb_root st[2][3];      /* [BE, RT][ASYNC, SYNC_NOIDLE, SYNC] */
  struct rb_root st_idle;       /* IDLE class: one tree */

  uint64_t saved_workload_slice;        /* ns left of the workload slice */
  enum wl_type saved_workload;
  enum wl_prio saved_serving_prio;

  struct rb_root prio_trees[CFQ_PRIO_LISTS];    /* cfqq by next_rq sector */

  struct cfqq async_cfqq[2][SCHED_LEVELS];      /* [RT, BE][level] */
  struct cfqq async_idle_cfqq;

  struct qos_group qos;         /* caps and reservation (core/qos.c) */
  unsigned qos_orphans;         /* its rqs in the driver when a cap ended
                                   its turn, not charged yet (time mode) */
};

/* A connection (the kernel's cfq_io_context). */
struct sched_queue {
  struct cfqd *cfqd;
  struct list link;             /* on cfqd->conns */
  struct sched_group *cfqg;
  unsigned short cls;           /* enum sched_class */
  unsigned short level;         /* 0..7 */
  struct cfqq *cfqq;            /* sync queue serving it now */
  struct cfqq own;              /* storage of its own sync queue */

  uint64_t last_end_request;    /* ns: last sync completion; NEVER: none */
  struct sched_wstate wstate;   /* what sched_classify remembers */
  uint64_t ttime_total;         /* think time EWMA numerator (ns * 256) */
  uint64_t ttime_samples;       /* EWMA weight, 256 = one full sample */
  uint64_t ttime_mean;          /* ns */
  unsigned nr_rq;               /* its rqs inserted, not completed */
  bool dead;                    /* queue_free called */
};

struct cfq_grp_st {
  struct rb_root rb;            /* groups by vdisktime */
  struct sched_group *active;   /* group being served */
  uint64_t min_vdisktime;
  unsigned total_weight;        /* of groups on the tree */
};

struct cfqd {
  struct sched s;               /* must be first */
  uint64_t tun[T_NR];           /* tunable values, units of the table */

  struct cfq_grp_st grp_st;
  struct list groups;           /* all groups */
  struct list conns;            /* all connections, dead ones too */
  struct sched_group *root_group;       /* for queues with no group */
  struct sched_queue *root_conn;        /* for rqs with no queue */

  enum wl_prio serving_prio;
  enum wl_type serving_type;
  uint64_t workload_expires;    /* ns */
  struct sched_group *serving_group;

  unsigned busy_queues;         /* queues on rr */
  unsigned busy_idle_queues;    /* of which IDLE class */
  uint64_t last_end_nonidle;    /* ns: last completion of a non-IDLE rq */
  unsigned rq_queued;           /* rqs inserted, not dispatched */
  unsigned rq_in_driver;        /* rqs dispatched, not completed */
  unsigned rq_in_flight[2];     /* same, by queue sync-ness */

  int hw_tag;                   /* -1 unknown, 0, 1 */
  unsigned hw_tag_est_depth;    /* peak rq_in_driver */
  unsigned hw_tag_samples;

  uint64_t idle_timer;          /* ns: idle window end; NEVER: none */
  struct cfqq *active_queue;
  struct sched_queue *active_cic;       /* connection of 1st rq of slice */
  uint64_t last_position;       /* sector after the last dispatched rq */
  /* Seek cost (ours, see the essay): service time of reads dispatched
   * away from the head, as a think-time style EWMA.
   */
  uint64_t last_completion;     /* ns: latest completion of any rq */
  uint64_t seek_total;          /* EWMA numerator (ns * 256) */
  uint64_t seek_weight;         /* EWMA weight, 256 = one full sample */
  uint64_t seek_cost;           /* ns: mean service time of those reads */
  unsigned seek_seen;           /* such reads completed (saturates) */
  bool seek_fast;               /* rotational=1, but seeks cost < 1 ms */
  uint64_t last_delayed_sync;   /* ns: a sync rq completed late */
  uint64_t now;                 /* ns: latest time passed in */
  struct cfqq *run_queue;       /* queue the post-completion run serves */
  struct cfqq *preempt_pending; /* preemption deferred until that run */

  struct qos_sched qos;         /* groups with caps or a reservation */
  bool qos_refused;             /* a cap refused the last request chosen */
  uint64_t qos_last_done;       /* ns: last completion, while qos_on() */

  struct cfq_stats stats;
};

#define CFQD(sp) container_of (sp, struct cfqd, s)

static inline uint64_t t_get (const struct cfqd *cfqd, int t)
{ return cfqd->tun[t]; }
static inline uint64_t umin64 (uint64_t a, uint64_t b) { return a < b ? a : b; }
static inline uint64_t umax64 (uint64_t a, uint64_t b) { return a > b ? a : b; }

static inline bool cfq_class_idle (const struct cfqq *cfqq)
{ return cfqq->ioprio_class == SCHED_CLASS_IDLE; }
static inline bool cfq_class_rt (const struct cfqq *cfqq)
{ return cfqq->ioprio_class == SCHED_CLASS_RT; }
/* Non-rotational as CFQ sees it: the device says so, or it says it seeks
 * and the measured cost of seeky reads says it does not (seek cost).
 */
static inline bool cfq_nonrot (const struct cfqd *cfqd)
{ return !t_get (cfqd, T_ROTATIONAL) || cfqd->seek_fast; }
static inline uint32_t rq_sectors (const struct rq *rq)
{ return (rq->len + 511) >> 9; }

/* Seeky: more than one in eight of the requests judged were seeks, which
 * with a full history is the kernel's "more than 4 of the last 32"; with
 * none judged yet, its first request was far from the head (deviation,
 * see the essay: "Seek history of a new queue").
 */
#define CFQQ_SEEKY(cfqq) \
  ((cfqq)->seek_samples \
   ? (unsigned) __builtin_popcount ((cfqq)->seek_history) * 8 \
     > (cfqq)->seek_samples \
   : (cfqq)->seek_first)

static bool
iops_mode (const struct cfqd *cfqd)
{
  switch (t_get (cfqd, T_MODE)) {
  case CFQ_MODE_TIME: return false;
  case CFQ_MODE_IOPS: return true;
  default:
    /* Charge by requests on flash (ours: a device that does not seek has
     * no time to share out), or by CFQ's test "!slice_idle && hw_tag",
     * where hw_tag -1 counts as NCQ.
     */
    return cfq_nonrot (cfqd)
      || (!t_get (cfqd, T_SLICE_IDLE) && cfqd->hw_tag != 0);
  }
}

static enum wl_prio
cfqq_prio (const struct cfqq *cfqq)
{
  if (cfq_class_idle (cfqq))
    return IDLE_WORKLOAD;
  if (cfq_class_rt (cfqq))
    return RT_WORKLOAD;
  return BE_WORKLOAD;
}

static enum wl_type
cfqq_type (const struct cfqq *cfqq)
{
  if (!cfqq->sync)
    return ASYNC_WORKLOAD;
  if (!cfqq->idle_window)
    return SYNC_NOIDLE_WORKLOAD;
  return SYNC_WORKLOAD;
}

static struct rb_root *
service_tree_for (struct sched_group *cfqg, enum wl_prio prio,
                  enum wl_type type)
{
  if (!cfqg)
    return NULL;
  if (prio == IDLE_WORKLOAD)
    return &cfqg->st_idle;
  return &cfqg->st[prio][type];
}

static unsigned
cfq_group_busy_queues_wl (enum wl_prio wl, struct sched_group *cfqg)
{
  if (wl == IDLE_WORKLOAD)
    return cfqg->st_idle.count;
  return cfqg->st[wl][ASYNC_WORKLOAD].count
    + cfqg->st[wl][SYNC_NOIDLE_WORKLOAD].count
    + cfqg->st[wl][SYNC_WORKLOAD].count;
}

static unsigned
cfqg_busy_async_queues (struct sched_group *cfqg)
{
  return cfqg->st[RT_WORKLOAD][ASYNC_WORKLOAD].count
    + cfqg->st[BE_WORKLOAD][ASYNC_WORKLOAD].count;
}

#define cfqq_of(n) container_of (n, struct cfqq, rb_node)
#define cfqq_of_p(n) container_of (n, struct cfqq, p_node)
#define cfqg_of(n) container_of (n, struct sched_group, rb_node)
#define rq_of(n) container_of (n, struct rq, rb)

/* ---- Slices ---------------------------------------------------------- */

static uint64_t
cfq_prio_slice (const struct cfqd *cfqd, bool sync, unsigned prio)
{
  const int64_t base = t_get (cfqd, sync ? T_SLICE_SYNC : T_SLICE_ASYNC);
  int64_t s = base + base / CFQ_SLICE_SCALE * (4 - (int64_t) prio);

  return s > 0 ? (uint64_t) s : 1;
}

static uint64_t
cfq_prio_to_slice (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  return cfq_prio_slice (cfqd, cfqq->sync, cfqq->ioprio);
}

static uint64_t
cfq_scale_slice (uint64_t delta, const struct sched_group *cfqg)
{
  return (delta << CFQ_SERVICE_SHIFT) * CFQ_WEIGHT_DEFAULT / cfqg->weight;
}

static void
update_min_vdisktime (struct cfq_grp_st *st)
{
  uint64_t vdisktime = st->min_vdisktime;

  if (st->active)
    vdisktime = st->active->vdisktime;
  if (rb_first (&st->rb)) {
    uint64_t v = cfqg_of (rb_first (&st->rb))->vdisktime;
    if (!st->active || (int64_t) (v - vdisktime) < 0)
      vdisktime = v;
  }
  if ((int64_t) (vdisktime - st->min_vdisktime) > 0)
    st->min_vdisktime = vdisktime;
}

/* Busy queues of a class, averaged so that it follows rises at once and
 * falls slowly (cfq_group_get_avg_queues).
 */
static unsigned
cfq_group_get_avg_queues (struct sched_group *cfqg, bool rt)
{
  unsigned mult = CFQ_HIST_DIVISOR - 1, round = CFQ_HIST_DIVISOR / 2;
  unsigned busy = cfq_group_busy_queues_wl (rt, cfqg);
  unsigned avg = cfqg->busy_queues_avg[rt];
  unsigned min_q = avg < busy ? avg : busy, max_q = avg < busy ? busy : avg;

  cfqg->busy_queues_avg[rt] = (mult * max_q + min_q + round)
    / CFQ_HIST_DIVISOR;
  return cfqg->busy_queues_avg[rt];
}

static uint64_t
cfq_group_slice (const struct cfqd *cfqd, const struct sched_group *cfqg)
{
  unsigned tw = cfqd->grp_st.total_weight;

  if (!tw)
    tw = cfqg->weight;
  return t_get (cfqd, T_TARGET_LATENCY) * cfqg->weight / tw;
}

static void
cfq_set_prio_slice (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  uint64_t slice = cfq_prio_to_slice (cfqd, cfqq);

  if (t_get (cfqd, T_LOW_LATENCY)) {
    /* Queues of the same class in the group we expect to take turns. */
    unsigned iq = cfq_group_get_avg_queues (cfqq->cfqg, cfq_class_rt (cfqq));
    uint64_t sync_slice = t_get (cfqd, T_SLICE_SYNC);
    uint64_t expect_latency = sync_slice * iq;
    uint64_t group_slice = cfq_group_slice (cfqd, cfqq->cfqg);

    if (expect_latency > group_slice) {
      uint64_t base_low_slice = 2 * t_get (cfqd, T_SLICE_IDLE);
      uint64_t low_slice = umin64 (slice, base_low_slice * slice / sync_slice);
      slice = umax64 (slice * group_slice / expect_latency, low_slice);
    }
  }
  cfqq->slice_start = now;
  cfqq->slice_end = now + slice;
  cfqq->allocated_slice = slice;
}

static bool
cfq_slice_used (const struct cfqq *cfqq, uint64_t now)
{
  if (cfqq->slice_new)
    return false;
  return now >= cfqq->slice_end;
}

/* ---- Request choice inside a queue ---------------------------------- */

/* Which of rq1 and rq2 is better served after position last: sync before
 * async, META first, then the shortest head movement, where going back at
 * most back_seek_max costs back_seek_penalty times the distance and going
 * back further is a wrap (cfq_choose_req, from AS).
 */
static struct rq *
cfq_choose_req (const struct cfqd *cfqd, struct rq *rq1, struct rq *rq2,
                uint64_t last)
{
  uint64_t s1, s2, d1 = 0, d2 = 0, back_max;
  unsigned wrap = 0;

  if (rq1 == NULL || rq1 == rq2)
    return rq2;
  if (rq2 == NULL)
    return rq1;
  if (rq_is_sync (rq1) != rq_is_sync (rq2))
    return rq_is_sync (rq1) ? rq1 : rq2;
  if ((rq1->flags & RQ_META) != (rq2->flags & RQ_META))
    return (rq1->flags & RQ_META) ? rq1 : rq2;

  s1 = rq_sector (rq1);
  s2 = rq_sector (rq2);
  back_max = t_get (cfqd, T_BACK_SEEK_MAX) * 2;         /* KiB -> sectors */

  if (s1 >= last)
    d1 = s1 - last;
  else if (s1 + back_max >= last)
    d1 = (last - s1) * t_get (cfqd, T_BACK_SEEK_PENALTY);
  else
    wrap |= 1;
  if (s2 >= last)
    d2 = s2 - last;
  else if (s2 + back_max >= last)
    d2 = (last - s2) * t_get (cfqd, T_BACK_SEEK_PENALTY);
  else
    wrap |= 2;

  switch (wrap) {
  case 0:
    if (d1 < d2)
      return rq1;
    if (d2 < d1)
      return rq2;
    return s1 >= s2 ? rq1 : rq2;
  case 2:
    return rq1;
  case 1:
    return rq2;
  default:
    /* Both behind: start with the one further back (one back seek). */
    return s1 <= s2 ? rq1 : rq2;
  }
}

static struct rq *
cfq_find_next_rq (const struct cfqd *cfqd, struct cfqq *cfqq, struct rq *last)
{
  struct rb_node *rbnext = rb_next (&last->rb);
  struct rb_node *rbprev = rb_prev (&last->rb);
  struct rq *next = NULL, *prev = NULL;

  if (rbprev)
    prev = rq_of (rbprev);
  if (rbnext)
    next = rq_of (rbnext);
  else {
    rbnext = rb_first (&cfqq->sort_list);
    if (rbnext && rbnext != &last->rb)
      next = rq_of (rbnext);
  }
  return cfq_choose_req (cfqd, next, prev, rq_sector (last));
}

/* Tracing hook (cfq_set_trace, at the end of this file). */
static cfq_trace_fn cfq_trace_hook;
static void *cfq_trace_opaque;
static void cfq_trace (const struct cfqd *cfqd, const struct cfqq *cfqq,
                       const char *fmt, ...)
  __attribute__ ((format (printf, 3, 4)));
#define CFQ_TRACE(cfqd, cfqq, ...) \
  do { if (cfq_trace_hook) cfq_trace (cfqd, cfqq, __VA_ARGS__); } while (0)

/* ---- Group service tree ---------------------------------------------- */

static bool
cfqg_less (const struct rb_node *a, const struct rb_node *b)
{
  return (int64_t) (cfqg_of (a)->vdisktime - cfqg_of (b)->vdisktime) < 0;
}

static void
cfq_group_service_tree_add (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct rb_node *n;

  cfqg->nr_cfqq++;
  if (cfqg->on_st)
    return;
  /* A group that becomes busy goes to the end of the tree, so it cannot
   * bank service while idle.  As in 2.6.36 the CFQ_IDLE_DELAY offset is
   * added unscaled to the shifted vdisktime: a few us of service.
   * Deviation: a group back within CFQ_GROUP_KEEP of leaving keeps its
   * own vdisktime, raised to min_vdisktime so it still banks nothing.
   */
  n = rb_last (&st->rb);
  if (cfqg->has_left && cfqd->now - cfqg->left_at <= CFQ_GROUP_KEEP) {
    if ((int64_t) (cfqg->vdisktime - st->min_vdisktime) < 0)
      cfqg->vdisktime = st->min_vdisktime;
    CFQ_TRACE (cfqd, NULL, "group %s back after %llu us: keeps its place",
               cfqg->name,
               (unsigned long long) ((cfqd->now - cfqg->left_at) / 1000));
  }
  else if (n)
    cfqg->vdisktime = cfqg_of (n)->vdisktime + CFQ_IDLE_DELAY;
  else
    cfqg->vdisktime = st->min_vdisktime;
  rb_insert (&st->rb, &cfqg->rb_node, cfqg_less);
  cfqg->on_st = true;
  st->total_weight += cfqg->weight;
}

static void
cfq_group_service_tree_del (struct cfqd *cfqd, struct sched_group *cfqg)
{
  struct cfq_grp_st *st = &cfqd->grp_st;

  if (st->active == cfqg)
    st->active = NULL;
  cfqg->nr_cfqq--;
  if (cfqg->nr_cfqq)
    return;
  cfqg->on_st = false;
  cfqg->has_left = true;
  cfqg->left_at = cfqd->now;
  st->total_weight -= cfqg->weight;
  if (rb_linked (&cfqg->rb_node))
    rb_erase (&st->rb, &cfqg->rb_node);
  cfqg->saved_workload_slice = 0;
}

static uint64_t
cfq_cfqq_slice_usage (const struct cfqq *cfqq, uint64_t now)
{
  uint64_t used;

  /* Expired before a request completed, or right at the first one:
   * charge the time since it was made active (the seek), at least 1.
   */
  if (cfqq->slice_new || cfqq->slice_start == now)
    used = umax64 (now - cfqq->dispatch_start, 1);
  else {
    used = now - cfqq->slice_start;
    if (used > cfqq->allocated_slice)
      used = cfqq->allocated_slice;
  }
  return used;
}

/* Add charge (ns of disk time) to the group's vdisktime, scaled by its
 * weight.  The key may not change while the group is on the tree.
 */
static void
cfq_group_charge (struct cfqd *cfqd, struct sched_group *cfqg,
                  uint64_t charge)
{
  struct cfq_grp_st *st = &cfqd->grp_st;

  if (cfqg->on_st)
    rb_erase (&st->rb, &cfqg->rb_node);
  cfqg->vdisktime += cfq_scale_slice (charge, cfqg);
  if (cfqg->on_st)
    rb_insert (&st->rb, &cfqg->rb_node, cfqg_less);
}

/* Drain charge (ours, see the essay): the time from the group's expiry
 * until its last request in the driver completed, or until it is made
 * active again, whichever comes first.
 */
static void
cfq_group_drain_done (struct cfqd *cfqd, struct sched_group *cfqg,
                      uint64_t now)
{
  if (!cfqg->drain_since)
    return;
  if (now > cfqg->drain_since) {
    cfq_group_charge (cfqd, cfqg, now - cfqg->drain_since);
    cfqg->st_used_ns += now - cfqg->drain_since;
  }
  cfqg->drain_since = 0;
}

static void
cfq_group_served (struct cfqd *cfqd, struct sched_group *cfqg,
                  struct cfqq *cfqq, uint64_t now)
{
  unsigned nr_sync = cfqg->nr_cfqq - cfqg_busy_async_queues (cfqg)
    - cfqg->st_idle.count;
  uint64_t charge;

  charge = cfq_cfqq_slice_usage (cfqq, now);
  cfqg->st_used_ns += charge;
  if (iops_mode (cfqd))
    charge = (uint64_t) cfqq->slice_dispatch * CFQ_IOPS_CHARGE;
  else if (!cfqq->sync && !nr_sync)
    charge = cfqq->allocated_slice;     /* async-only group: full slice */
  else if (cfqq->dispatched && !cfqq->slice_new)
    /* Its requests still in the driver hold the disk after the expiry
     * and delay the next queue's first completion, where that queue's
     * slice starts: charge that time to this group as it drains.
     */
    cfqg->drain_since = now;

  cfq_group_charge (cfqd, cfqg, charge);

  /* Save the workload context: the group resumes it on its next turn. */
  if (cfqd->workload_expires > now) {
    cfqg->saved_workload_slice = cfqd->workload_expires - now;
    cfqg->saved_workload = cfqd->serving_type;
    cfqg->saved_serving_prio = cfqd->serving_prio;
  }
  else
    cfqg->saved_workload_slice = 0;
}

/* ---- Queue service trees --------------------------------------------- */

static int64_t
cfq_slice_offset (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  /* Just an approximation: lower levels start later.  Measured from a
   * level-4 sync queue, not from level 0 as in the kernel (deviation, see
   * the essay: "Service tree keys"), so that queues of the same kind are
   * served in the order they became busy whatever nr_cfqq was then.
   */
  return ((int64_t) cfqq->cfqg->nr_cfqq - 1)
    * ((int64_t) cfq_prio_slice (cfqd, 1, CFQ_PRIO_DEFAULT)
       - (int64_t) cfq_prio_slice (cfqd, cfqq->sync, cfqq->ioprio));
}

static void
cfq_st_insert (struct rb_root *st, struct cfqq *cfqq)
{
  struct rb_node **p = &st->node, *parent = NULL;
  bool left = true;

  while (*p) {
    parent = *p;
    if (cfqq->rb_key < cfqq_of (parent)->rb_key)
      p = &parent->left;
    else {
      p = &parent->right;
      left = false;
    }
  }
  rb_insert_at (st, &cfqq->rb_node, parent, p, left);
}

static void
cfq_service_tree_add (struct cfqd *cfqd, struct cfqq *cfqq, bool add_front,
                      uint64_t now)
{
  struct rb_root *st = service_tree_for (cfqq->cfqg, cfqq_prio (cfqq),
                                         cfqq_type (cfqq));
  int64_t rb_key;
  bool new_cfqq = true;

  if (cfq_class_idle (cfqq)) {
    struct rb_node *last = rb_last (st);
    rb_key = CFQ_IDLE_DELAY;
    if (last && last != &cfqq->rb_node)
      rb_key += cfqq_of (last)->rb_key;
    else
      rb_key += (int64_t) now;
  }
  else if (!add_front) {
    /* Subtract the residual slice carried from the last service: a
     * negative residual (overrun) puts the queue further back.
     */
    rb_key = cfq_slice_offset (cfqd, cfqq) + (int64_t) now;
    rb_key -= cfqq->slice_resid;
    cfqq->slice_resid = 0;
  }
  else {
    struct rb_node *first = rb_first (st);
    rb_key = -(int64_t) CFQ_FRONT_OFFSET;
    rb_key += first ? cfqq_of (first)->rb_key : (int64_t) now;
  }

  if (rb_linked (&cfqq->rb_node)) {
    new_cfqq = false;
    if (rb_key == cfqq->rb_key && cfqq->service_tree == st)
      return;
    rb_erase (cfqq->service_tree, &cfqq->rb_node);
    cfqq->service_tree = NULL;
  }
  cfqq->rb_key = rb_key;
  cfqq->service_tree = st;
  cfq_st_insert (st, cfqq);
  if (add_front || !new_cfqq)
    return;
  cfq_group_service_tree_add (cfqd, cfqq->cfqg);
}

/* Cooperator lookup tree: queues by the sector of their next request. */
static void
cfq_prio_tree_del (struct cfqq *cfqq)
{
  if (cfqq->p_root) {
    rb_erase (cfqq->p_root, &cfqq->p_node);
    cfqq->p_root = NULL;
  }
}

static void
cfq_prio_tree_add (struct cfqd *cfqd, struct cfqq *cfqq)
{
  struct rb_node **p, *parent = NULL;
  uint64_t sector;
  bool left = true;

  (void) cfqd;
  cfq_prio_tree_del (cfqq);
  if (cfq_class_idle (cfqq) || !cfqq->next_rq)
    return;
  cfqq->p_root = &cfqq->cfqg->prio_trees[cfqq->ioprio];
  sector = rq_sector (cfqq->next_rq);
  p = &cfqq->p_root->node;
  while (*p) {
    parent = *p;
    if (sector < rq_sector (cfqq_of_p (parent)->next_rq))
      p = &parent->left;
    else {
      p = &parent->right;
      left = false;
    }
  }
  rb_insert_at (cfqq->p_root, &cfqq->p_node, parent, p, left);
}

static void
cfq_resort_rr_list (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  if (cfqq->on_rr) {
    cfq_service_tree_add (cfqd, cfqq, false, now);
    cfq_prio_tree_add (cfqd, cfqq);
  }
}

static void
cfq_add_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  cfqq->on_rr = true;
  cfqd->busy_queues++;
  cfqd->busy_idle_queues += cfq_class_idle (cfqq);
  cfq_resort_rr_list (cfqd, cfqq, now);
}

static void
cfq_del_cfqq_rr (struct cfqd *cfqd, struct cfqq *cfqq)
{
  cfqq->on_rr = false;
  if (rb_linked (&cfqq->rb_node)) {
    rb_erase (cfqq->service_tree, &cfqq->rb_node);
    cfqq->service_tree = NULL;
  }
  cfq_prio_tree_del (cfqq);
  cfq_group_service_tree_del (cfqd, cfqq->cfqg);
  cfqd->busy_queues--;
  cfqd->busy_idle_queues -= cfq_class_idle (cfqq);
}

/* ---- Requests in a queue --------------------------------------------- */

static bool
rq_sector_less (const struct rb_node *a, const struct rb_node *b)
{
  return rq_sector (rq_of (a)) < rq_sector (rq_of (b));
}

static void
cfq_add_rq_rb (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
               uint64_t now)
{
  struct rq *prev;

  cfqq->queued[rq_is_sync (rq)]++;
  rb_insert (&cfqq->sort_list, &rq->rb, rq_sector_less);
  if (!cfqq->on_rr)
    cfq_add_cfqq_rr (cfqd, cfqq, now);
  prev = cfqq->next_rq;
  cfqq->next_rq = cfq_choose_req (cfqd, cfqq->next_rq, rq,
                                  cfqd->last_position);
  if (prev != cfqq->next_rq)
    cfq_prio_tree_add (cfqd, cfqq);
}

static void
cfq_remove_request (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq)
{
  if (cfqq->next_rq == rq) {
    cfqq->next_rq = cfq_find_next_rq (cfqd, cfqq, rq);
    if (cfqq->next_rq == rq)
      cfqq->next_rq = NULL;
  }
  list_del (&rq->fifo);
  cfqq->queued[rq_is_sync (rq)]--;
  rb_erase (&cfqq->sort_list, &rq->rb);
  if (rb_empty (&cfqq->sort_list))
    cfqq->next_rq = NULL;
  /* The queue leaves the service tree when it expires; the prio tree
   * follows next_rq at once.
   */
  if (cfqq->next_rq)
    cfq_prio_tree_add (cfqd, cfqq);
  else
    cfq_prio_tree_del (cfqq);
  cfqd->rq_queued--;
  if (rq->flags & RQ_META)
    cfqq->meta_pending--;
}

/* ---- Active queue ------------------------------------------------------ */

static void
cfq_del_timer (struct cfqd *cfqd)
{
  cfqd->idle_timer = SCHED_NEVER;
}

static void
__cfq_set_active_queue (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  if (cfqq) {
    /* Its group's drain charge ends here: from now on the time is the
     * new slice's.
     */
    cfq_group_drain_done (cfqd, cfqq->cfqg, now);
    cfqq->slice_start = 0;
    cfqq->dispatch_start = now;
    cfqq->allocated_slice = 0;
    cfqq->slice_end = 0;
    cfqq->slice_dispatch = 0;
    cfqq->wait_request = false;
    cfqq->must_dispatch = false;
    cfqq->fifo_expire = false;
    cfqq->slice_new = true;
    cfq_del_timer (cfqd);
    cfqd->stats.slices++;
    cfqq->cfqg->st_slices++;
    CFQ_TRACE (cfqd, cfqq, "active: %s queued=%u vdisktime=%llu",
               cfqq->sync ? "sync" : "async",
               cfqq->queued[0] + cfqq->queued[1],
               (unsigned long long) cfqq->cfqg->vdisktime);
  }
  cfqd->active_queue = cfqq;
}

static void
__cfq_slice_expired (struct cfqd *cfqd, struct cfqq *cfqq, bool timed_out,
                     uint64_t now)
{
  CFQ_TRACE (cfqd, cfqq, "slice expired: %s, dispatched %u, queued %u",
             timed_out ? "timed out (slice used, or preempted)"
             : cfqq->slice_new ? "no completion yet"
             : now >= cfqq->slice_end ? "slice used" : "queue empty",
             cfqq->slice_dispatch, cfqq->queued[0] + cfqq->queued[1]);
  if (cfqq->wait_request)
    cfq_del_timer (cfqd);
  cfqq->wait_request = false;
  cfqq->wait_busy = false;

  /* A shared queue that turned seeky is split at its next request. */
  if (cfqq->coop && CFQQ_SEEKY (cfqq))
    cfqq->split_coop = true;

  /* Keep what was left of the slice if it idled out or was preempted. */
  if (timed_out && !cfqq->slice_new)
    cfqq->slice_resid = (int64_t) (cfqq->slice_end - now);
  if (cfqq->slice_dispatch)
    cfqq->last_served = now;

  cfq_group_served (cfqd, cfqq->cfqg, cfqq, now);

  if (cfqq->on_rr && rb_empty (&cfqq->sort_list))
    cfq_del_cfqq_rr (cfqd, cfqq);
  cfq_resort_rr_list (cfqd, cfqq, now);

  if (cfqq == cfqd->active_queue)
    cfqd->active_queue = NULL;
  if (cfqq == cfqd->run_queue)
    cfqd->run_queue = NULL;
  if (cfqq == cfqd->preempt_pending)
    cfqd->preempt_pending = NULL;
  if (cfqd->grp_st.active == cfqq->cfqg)
    cfqd->grp_st.active = NULL;
  cfqd->active_cic = NULL;
}

static void
cfq_slice_expired (struct cfqd *cfqd, bool timed_out, uint64_t now)
{
  if (cfqd->active_queue)
    __cfq_slice_expired (cfqd, cfqd->active_queue, timed_out, now);
}

static struct cfqq *
cfq_get_next_queue (struct cfqd *cfqd)
{
  struct rb_root *st = service_tree_for (cfqd->serving_group,
                                         cfqd->serving_prio,
                                         cfqd->serving_type);

  if (!cfqd->rq_queued || !st || rb_empty (st))
    return NULL;
  return cfqq_of (rb_first (st));
}

static uint64_t
cfq_dist_from_last (const struct cfqd *cfqd, const struct rq *rq)
{
  uint64_t s = rq_sector (rq);
  return s >= cfqd->last_position ? s - cfqd->last_position
                                  : cfqd->last_position - s;
}

static bool
cfq_rq_close (const struct cfqd *cfqd, const struct rq *rq)
{
  return cfq_dist_from_last (cfqd, rq) <= CFQQ_CLOSE_THR;
}

/* The queue in cur's prio tree whose next request is closest to the head,
 * if close enough (cfqq_close).
 */
static struct cfqq *
cfqq_close (struct cfqd *cfqd, struct cfqq *cur)
{
  struct rb_root *root = &cur->cfqg->prio_trees[cur->ioprio];
  struct rb_node *n = root->node, *floor = NULL, *ceil = NULL;
  uint64_t sector = cfqd->last_position;
  struct cfqq *best = NULL;

  while (n) {
    uint64_t s = rq_sector (cfqq_of_p (n)->next_rq);
    if (s == sector && cfqq_of_p (n) != cur)
      return cfqq_of_p (n);
    if (s < sector) {
      floor = n;
      n = n->right;
    }
    else {
      ceil = n;
      n = n->left;
    }
  }
  if (floor && cfqq_of_p (floor) == cur)
    floor = rb_prev (floor);
  if (ceil && cfqq_of_p (ceil) == cur)
    ceil = rb_next (ceil);
  if (floor && cfq_rq_close (cfqd, cfqq_of_p (floor)->next_rq))
    best = cfqq_of_p (floor);
  if (ceil && cfq_rq_close (cfqd, cfqq_of_p (ceil)->next_rq)
      && (!best || cfq_dist_from_last (cfqd, cfqq_of_p (ceil)->next_rq)
          < cfq_dist_from_last (cfqd, best->next_rq)))
    best = cfqq_of_p (ceil);
  return best;
}

static struct cfqq *
cfq_close_cooperator (struct cfqd *cfqd, struct cfqq *cur)
{
  struct cfqq *cfqq;

  if (!t_get (cfqd, T_MERGE))
    return NULL;
  if (cfq_class_idle (cur) || !cur->sync || CFQQ_SEEKY (cur))
    return NULL;
  /* Don't search if it's the only queue of the group. */
  if (cur->cfqg->nr_cfqq == 1)
    return NULL;
  cfqq = cfqq_close (cfqd, cur);
  if (!cfqq)
    return NULL;
  if (cur->cfqg != cfqq->cfqg)
    return NULL;
  if (!cfqq->sync || CFQQ_SEEKY (cfqq))
    return NULL;
  if (cfq_class_rt (cfqq) != cfq_class_rt (cur))
    return NULL;
  return cfqq;
}

static bool
cfq_should_idle (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  const struct rb_root *st = cfqq->service_tree;

  if (cfqq_prio (cfqq) == IDLE_WORKLOAD)
    return false;
  if (!t_get (cfqd, T_SLICE_IDLE))
    return false;
  /* Queues marked with the idle window, unless the device is an SSD that
   * queues (idling there costs more than it saves).
   */
  if (cfqq->idle_window && !(cfq_nonrot (cfqd) && cfqd->hw_tag))
    return true;
  /* Otherwise only the last sync queue of its tree (SYNC_NOIDLE): idle
   * once for the whole tree so it keeps its share against others; not on
   * a flash device that queues (ours, see the essay: "Flash that
   * queues"): there waiting only keeps the others off an idle device.
   */
  if (cfq_nonrot (cfqd) && cfqd->hw_tag)
    return false;
  if (st && st->count == 1 && cfqq->sync)
    return true;
  return false;
}

static void
cfq_arm_slice_timer (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;
  struct sched_queue *cic;
  uint64_t sl, group_idle = 0;

  /* SSD that queues: never idle for a queue (2.6.37).  Idle for the group
   * only when another group is busy (our deviation, see the essay): a
   * group whose last request just completed would otherwise leave the
   * service tree and come back at its end, losing its weight.  With a
   * single busy group there is no share to protect, and the window cost
   * 8 ms per reader turn (tests/sim/ssd-group-idle.job).
   */
  if (cfq_nonrot (cfqd) && cfqd->hw_tag) {
    group_idle = t_get (cfqd, T_GROUP_IDLE);
    if (!group_idle || cfqd->grp_st.total_weight <= cfqq->cfqg->weight)
      return;
  }
  else if (!cfq_should_idle (cfqd, cfqq)) {
    group_idle = t_get (cfqd, T_GROUP_IDLE);
    if (!group_idle)
      return;
  }
  /* Still requests in flight from this queue: no idle. */
  if (cfqq->dispatched)
    return;
  /* The connection has gone: nobody will send the next request. */
  cic = cfqd->active_cic;
  if (!cic || cic->dead)
    return;
  /* Think time longer than what is left of the slice: don't overrun. */
  if (CFQ_SAMPLE_VALID (cic->ttime_samples)
      && (int64_t) (cfqq->slice_end - now) < (int64_t) cic->ttime_mean)
    return;
  /* Other queues in the group: no group idle. */
  if (group_idle && cfqq->cfqg->nr_cfqq > 1)
    return;

  cfqq->wait_request = true;
  sl = group_idle ? group_idle : t_get (cfqd, T_SLICE_IDLE);
  cfqd->idle_timer = now + sl;
  CFQ_TRACE (cfqd, cfqq, "idle armed: %s %llu us",
             group_idle ? "group_idle" : "slice_idle",
             (unsigned long long) (sl / 1000));
  if (group_idle) {
    cfqd->stats.group_idle_arms++;
    cfqq->cfqg->st_group_idle_arms++;
  }
  else {
    cfqd->stats.idle_arms++;
    cfqq->cfqg->st_idle_arms++;
  }
}

static void
cfq_dispatch_insert (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                     uint64_t now)
{
  cfqq->next_rq = cfq_find_next_rq (cfqd, cfqq, rq);
  cfq_remove_request (cfqd, cfqq, rq);
  qos_dequeue (&cfqq->cfqg->qos, rq);
  cfqq->dispatched++;
  cfqq->cfqg->dispatched++;
  cfqd->rq_in_flight[cfqq->sync]++;
  /* cfq_activate_request */
  cfqd->rq_in_driver++;
  rq->pflags = 0;
  if (rq->op == RQ_READ && cfq_dist_from_last (cfqd, rq) > CFQQ_SEEK_THR)
    rq->pflags |= CFQ_RQ_SEEK;
  if (rq->op != RQ_FLUSH)
    cfqd->last_position = rq_sector (rq) + rq_sectors (rq);
  rq->t_dispatch = now;
  cfqd->stats.dispatched++;
  cfqq->cfqg->st_dispatched++;
}

/* The oldest request if its deadline passed; checked once per slice. */
static struct rq *
cfq_check_fifo (struct cfqq *cfqq, uint64_t now)
{
  struct list *p;
  struct rq *rq;

  if (cfqq->fifo_expire)
    return NULL;
  cfqq->fifo_expire = true;
  p = list_first (&cfqq->fifo);
  if (!p)
    return NULL;
  rq = list_entry (p, struct rq, fifo);
  if (now < rq->t_fifo)
    return NULL;
  return rq;
}

/* Would cfq_check_fifo find an expired request now?  (Does not use up
 * the once-per-slice look.)
 */
static bool
cfq_fifo_expired (const struct cfqq *cfqq, uint64_t now)
{
  struct list *p;

  if (cfqq->fifo_expire)
    return false;
  p = list_first (&cfqq->fifo);
  return p && now >= list_entry (p, struct rq, fifo)->t_fifo;
}

static unsigned
cfq_prio_to_maxrq (const struct cfqd *cfqd, const struct cfqq *cfqq)
{
  unsigned base_rq = t_get (cfqd, T_SLICE_ASYNC_RQ);
  return 2 * (base_rq + base_rq * (CFQ_PRIO_LISTS - 1 - cfqq->ioprio));
}

/* Link cfqq to merge with new_cfqq at its connections' next request, in
 * the direction of the lesser amount of work (cfq_setup_merge).
 */
static void
cfq_setup_merge (struct cfqq *cfqq, struct cfqq *new_cfqq)
{
  struct cfqq *c;
  int guard = 0;

  if (!new_cfqq->nr_conn)
    return;
  /* Avoid a circular list and skip interim queue merges. */
  while ((c = new_cfqq->new_cfqq)) {
    if (c == cfqq || ++guard > 64)
      return;
    new_cfqq = c;
  }
  if (!cfqq->nr_conn || !new_cfqq->nr_conn || cfqq == new_cfqq)
    return;
  if (new_cfqq->nr_conn >= cfqq->nr_conn) {
    cfqq->new_cfqq = new_cfqq;
    new_cfqq->nr_link++;
  }
  else {
    new_cfqq->new_cfqq = cfqq;
    cfqq->nr_link++;
  }
}

/* The async deadline (ours, see the essay): the group's async queue of
 * class prio holds a request past fifo_expire_async and had no turn for
 * fifo_expire_async.  It then gets the next turn: its workload is chosen
 * at the next queue switch, and a sync slice of the group ends early.
 * The second condition bounds it to one turn per fifo_expire_async, so
 * a writer with a deep backlog cannot take the disk from the readers.
 */
static bool
cfq_async_overdue (const struct cfqd *cfqd, struct sched_group *cfqg,
                   enum wl_prio prio, uint64_t now)
{
  const uint64_t expire = t_get (cfqd, T_FIFO_EXPIRE_ASYNC);
  struct rb_node *n;
  struct cfqq *cfqq;
  struct list *p;

  if (!cfqg || prio == IDLE_WORKLOAD)
    return false;
  n = rb_first (&cfqg->st[prio][ASYNC_WORKLOAD]);
  if (!n)
    return false;
  cfqq = cfqq_of (n);
  p = list_first (&cfqq->fifo);
  if (!p || now < list_entry (p, struct rq, fifo)->t_fifo)
    return false;
  return now - cfqq->last_served >= expire;
}

static enum wl_type
cfq_choose_wl (struct sched_group *cfqg, enum wl_prio prio)
{
  enum wl_type cur_best = SYNC_NOIDLE_WORKLOAD;
  bool key_valid = false;
  int64_t lowest_key = 0;

  for (int i = 0; i <= SYNC_WORKLOAD; i++) {
    struct rb_node *n = rb_first (service_tree_for (cfqg, prio, i));
    if (n && (!key_valid || cfqq_of (n)->rb_key < lowest_key)) {
      lowest_key = cfqq_of (n)->rb_key;
      cur_best = i;
      key_valid = true;
    }
  }
  return cur_best;
}

static void
choose_service_tree (struct cfqd *cfqd, struct sched_group *cfqg,
                     uint64_t now)
{
  uint64_t slice, group_slice;
  unsigned count, busy;
  struct rb_root *st;

  if (!cfqg) {
    cfqd->serving_prio = IDLE_WORKLOAD;
    cfqd->workload_expires = now + CFQ_JIFFY;
    return;
  }
  /* Classes are strict: RT > BE > IDLE. */
  if (cfq_group_busy_queues_wl (RT_WORKLOAD, cfqg))
    cfqd->serving_prio = RT_WORKLOAD;
  else if (cfq_group_busy_queues_wl (BE_WORKLOAD, cfqg))
    cfqd->serving_prio = BE_WORKLOAD;
  else {
    cfqd->serving_prio = IDLE_WORKLOAD;
    cfqd->workload_expires = now + CFQ_JIFFY;
    return;
  }

  /* Keep the workload type while its slice lasts and it has queues. */
  st = service_tree_for (cfqg, cfqd->serving_prio, cfqd->serving_type);
  count = st->count;
  if (cfq_async_overdue (cfqd, cfqg, cfqd->serving_prio, now))
    cfqd->serving_type = ASYNC_WORKLOAD;        /* async deadline */
  else if (count && now < cfqd->workload_expires)
    return;
  else
    cfqd->serving_type = cfq_choose_wl (cfqg, cfqd->serving_prio);
  st = service_tree_for (cfqg, cfqd->serving_prio, cfqd->serving_type);
  count = st->count;

  /* The workload slice: the group's share of target_latency, in
   * proportion to this workload's queues against the class's.
   */
  group_slice = cfq_group_slice (cfqd, cfqg);
  busy = cfq_group_busy_queues_wl (cfqd->serving_prio, cfqg);
  if (cfqg->busy_queues_avg[cfqd->serving_prio] > busy)
    busy = cfqg->busy_queues_avg[cfqd->serving_prio];
  slice = group_slice * count / (busy ? busy : 1);

  if (cfqd->serving_type == ASYNC_WORKLOAD) {
    /* Async is capped by its share of all busy queues, and scaled by
     * the async/sync slice ratio.
     */
    uint64_t tmp = t_get (cfqd, T_TARGET_LATENCY)
      * cfqg_busy_async_queues (cfqg);
    tmp /= cfqd->busy_queues ? cfqd->busy_queues : 1;
    slice = umin64 (slice, tmp);
    slice = slice * t_get (cfqd, T_SLICE_ASYNC) / t_get (cfqd, T_SLICE_SYNC);
  }
  else
    /* A sync workload gets at least two idle windows. */
    slice = umax64 (slice, 2 * t_get (cfqd, T_SLICE_IDLE));

  slice = umax64 (slice, CFQ_MIN_TT);
  cfqd->workload_expires = now + slice;
}

/* Caps and reservations: the section after cfq_dispatch_one. */
static struct sched_group *cfq_qos_next_cfqg (struct cfqd *cfqd);
static bool cfq_qos_admit (struct cfqd *cfqd, struct cfqq *cfqq,
                           struct rq *rq, uint64_t now);
static void cfq_qos_completed (struct cfqd *cfqd, struct rq *rq,
                               uint64_t now);

static struct sched_group *
cfq_get_next_cfqg (struct cfqd *cfqd)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg;

  if (rb_empty (&st->rb))
    return NULL;
  cfqg = cfqg_of (rb_first (&st->rb));
  if (qos_on (&cfqd->qos) && !(cfqg = cfq_qos_next_cfqg (cfqd)))
    return NULL;                /* every busy group held by a cap */
  st->active = cfqg;
  update_min_vdisktime (st);
  return cfqg;
}

static void
cfq_choose_cfqg (struct cfqd *cfqd, uint64_t now)
{
  struct sched_group *cfqg = cfq_get_next_cfqg (cfqd);

  cfqd->serving_group = cfqg;
  if (cfqg && cfqg->saved_workload_slice) {
    /* Resume the workload the group was in. */
    cfqd->workload_expires = now + cfqg->saved_workload_slice;
    cfqd->serving_type = cfqg->saved_workload;
    cfqd->serving_prio = cfqg->saved_serving_prio;
  }
  else
    cfqd->workload_expires = 0;      /* expired: choose again */
  choose_service_tree (cfqd, cfqg, now);
}

/* Idle-class grace (CFQ_IDLE_GRACE of CFQ up to 2.6.27, kept because
 * "IDLE only when nothing else waits" should survive a sync reader's think
 * time): when only IDLE-class queues have work, none starts until 100 ms
 * after the last completion of a non-IDLE request.  2.6.36 relies on the
 * class order inside a group only.  Across groups an IDLE queue still gets
 * its group's turn while other groups are busy, as in 2.6.36.
 */
static bool
cfq_idle_grace_wait (const struct cfqd *cfqd, uint64_t now)
{
  return cfqd->busy_queues && cfqd->busy_queues == cfqd->busy_idle_queues
    && now - cfqd->last_end_nonidle < CFQ_IDLE_GRACE;
}

/* Keep serving the active queue, or expire it and choose the next one.
 * NULL: nothing to dispatch now (idling, or waiting for completions).
 */
static struct cfqq *
cfq_select_queue (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue, *new_cfqq = NULL;

  if (!cfqq)
    goto new_queue;
  if (!cfqd->rq_queued)
    return NULL;

  /* We were waiting for the group to get backlogged: it did. */
  if (cfqq->wait_busy && !rb_empty (&cfqq->sort_list))
    goto expire;

  /* Async deadline: the group's writer is overdue, end the sync slice. */
  if (cfqq->sync && !cfqq->must_dispatch
      && cfq_async_overdue (cfqd, cfqq->cfqg, cfqq_prio (cfqq), now))
    goto expire;

  if (cfq_slice_used (cfqq, now) && !cfqq->must_dispatch) {
    /* The slice ran out while the group's only queue waited for its
     * last request: let it complete so the group keeps its place.
     */
    if (cfqq->cfqg->nr_cfqq == 1 && rb_empty (&cfqq->sort_list)
        && cfqq->dispatched && cfq_should_idle (cfqd, cfqq))
      return NULL;
    goto check_group_idle;
  }

  if (!rb_empty (&cfqq->sort_list))
    return cfqq;

  /* A queue with a request near the head: serve it rather than idle,
   * and set the two up to merge.
   */
  new_cfqq = cfq_close_cooperator (cfqd, cfqq);
  if (new_cfqq) {
    if (!cfqq->new_cfqq)
      cfq_setup_merge (cfqq, new_cfqq);
    goto expire;
  }

  /* Idling, or requests in flight and idling allowed: wait. */
  if (cfqd->idle_timer != SCHED_NEVER)
    return NULL;
  if (cfqq->dispatched && cfq_should_idle (cfqd, cfqq))
    return NULL;

check_group_idle:
  /* group_idle: the group's last queue has requests in flight. */
  if (t_get (cfqd, T_GROUP_IDLE) && cfqq->cfqg->nr_cfqq == 1
      && cfqq->cfqg->dispatched)
    return NULL;

expire:
  cfq_slice_expired (cfqd, false, now);
new_queue:
  if (!new_cfqq && cfq_idle_grace_wait (cfqd, now))
    return NULL;
  if (!new_cfqq)
    cfq_choose_cfqg (cfqd, now);
  else
    /* The cooperator's group is still the serving group. */
    cfqd->grp_st.active = new_cfqq->cfqg;
  cfqq = new_cfqq ? new_cfqq : cfq_get_next_queue (cfqd);
  __cfq_set_active_queue (cfqd, cfqq, now);
  return cfqq;
}

static bool
cfq_slice_used_soon (const struct cfqd *cfqd, const struct cfqq *cfqq,
                     uint64_t now)
{
  /* No request completed yet: can't estimate. */
  if (cfqq->slice_new)
    return true;
  return now + t_get (cfqd, T_SLICE_IDLE) * cfqq->dispatched
    > cfqq->slice_end;
}

/* Async depth allowed by low_latency: one more per slice_sync since the
 * last delayed sync completion.
 */
static unsigned
cfq_async_depth (const struct cfqd *cfqd, uint64_t now)
{
  uint64_t last_sync = now - cfqd->last_delayed_sync;
  uint64_t depth = last_sync / t_get (cfqd, T_SLICE_SYNC);

  return depth > 1u << 30 ? 1u << 30 : (unsigned) depth;
}

static bool
cfq_may_dispatch (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  unsigned max_dispatch;

  /* A request that must go (expired fifo, or the one we idled for) goes
   * past every limit below: later CFQ, see cfq_dispatch_request.
   */
  if (cfqq->must_dispatch)
    return true;
  /* Drain async requests before starting sync I/O that idles. */
  if (cfq_should_idle (cfqd, cfqq) && cfqd->rq_in_flight[0])
    return false;
  /* Async queue while sync I/O is in flight: wait. */
  if (cfqd->rq_in_flight[1] && !cfqq->sync)
    return false;

  max_dispatch = t_get (cfqd, T_QUANTUM) / 2;
  if (max_dispatch < 1)
    max_dispatch = 1;
  if (cfq_class_idle (cfqq))
    max_dispatch = 1;

  if (cfqq->dispatched >= max_dispatch) {
    /* An idle-class queue has at most one request in flight. */
    if (cfq_class_idle (cfqq))
      return false;
    /* Others wait: no more from this one if its slice ends soon. */
    if (cfqd->busy_queues > 1 && cfq_slice_used_soon (cfqd, cfqq, now))
      return false;
    /* Sole busy queue: no limit, except for writeback on a disk (ours,
     * see the essay: "Writeback backlog"); else deeper early in the
     * slice.
     */
    if (cfqd->busy_queues == 1 && (cfqq->sync || cfq_nonrot (cfqd)))
      max_dispatch = ~0u;
    else
      max_dispatch = t_get (cfqd, T_QUANTUM);
  }

  /* Async: ramp up the depth after sync requests were delayed. */
  if (!cfqq->sync && t_get (cfqd, T_LOW_LATENCY)) {
    unsigned depth = cfq_async_depth (cfqd, now);
    if (!depth && !cfqq->dispatched)
      depth = 1;
    if (depth < max_dispatch)
      max_dispatch = depth;
  }
  return cfqq->dispatched < max_dispatch;
}

static struct rq *
cfq_dispatch_request (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  struct rq *rq;

  /* An expired request must go out now, even past the sync-in-flight
   * and depth limits, and no sync arrival may preempt the queue before it
   * did (must_dispatch; Linux 3.x/4.x, not 2.6.36, which looked at the
   * fifo only once the queue could dispatch anyway).  Without this an
   * async writer whose requests all expired still waits for every sync
   * reader's slice, round after round.
   */
  rq = cfq_check_fifo (cfqq, now);
  if (rq)
    cfqq->must_dispatch = true;
  if (!cfq_may_dispatch (cfqd, cfqq, now))
    return NULL;
  if (qos_on (&cfqd->qos)
      && !cfq_qos_admit (cfqd, cfqq, rq ? rq : cfqq->next_rq, now))
    return NULL;                /* a cap holds it: the slice ended */
  if (rq)
    cfqd->stats.fifo_expired++;
  else
    rq = cfqq->next_rq;
  cfq_dispatch_insert (cfqd, cfqq, rq, now);
  if (qos_on (&cfqd->qos))
    qos_account (&cfqq->cfqg->qos, rq, now, false);
  if (!cfqd->active_cic) {
    struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
    if (!cic->dead)
      cfqd->active_cic = cic;
  }
  return rq;
}

/* ---- Connections, merging, freeing ------------------------------------ */

static void cfq_conn_maybe_free (struct cfqd *cfqd, struct sched_queue *cic);

static void
cfq_drop_link (struct cfqd *cfqd, struct cfqq *cfqq)
{
  struct cfqq *target = cfqq->new_cfqq;

  if (!target)
    return;
  cfqq->new_cfqq = NULL;
  target->nr_link--;
  if (target->owner)
    cfq_conn_maybe_free (cfqd, target->owner);
}

/* A connection stops pointing at cfqq. */
static void
cfq_put_conn_ref (struct cfqd *cfqd, struct cfqq *cfqq)
{
  cfqq->nr_conn--;
  if (!cfqq->nr_conn)
    cfq_drop_link (cfqd, cfqq);
  if (cfqq->nr_conn < 2)
    cfqq->coop = cfqq->split_coop = false;
  if (cfqq->owner)
    cfq_conn_maybe_free (cfqd, cfqq->owner);
}

static void
cfq_conn_maybe_free (struct cfqd *cfqd, struct sched_queue *cic)
{
  /* Freeing one connection drops its merge link, which may free the
   * target's connection in turn: walk the chain (links never cycle).
   */
  while (cic) {
    struct cfqq *own = &cic->own;
    struct sched_queue *next = NULL;

    if (!cic->dead || cic->nr_rq || own->nr_conn || own->nr_rq
        || own->nr_link)
      return;
    if (cfqd->active_queue == own)
      __cfq_slice_expired (cfqd, own, false, cfqd->now);
    if (own->on_rr)
      cfq_del_cfqq_rr (cfqd, own);
    cfq_prio_tree_del (own);
    if (own->new_cfqq) {
      own->new_cfqq->nr_link--;
      next = own->new_cfqq->owner;
      own->new_cfqq = NULL;
    }
    list_del (&cic->link);
    free (cic);
    cic = next;
  }
}

/* The sync queue a new request of cic goes to: split a shared queue that
 * turned seeky, follow a pending merge (cfq_set_request).
 */
static struct cfqq *
cfq_sync_queue (struct cfqd *cfqd, struct sched_queue *cic)
{
  struct cfqq *cfqq = cic->cfqq;

  if (cfqq->coop && cfqq->split_coop) {
    if (cfqq->nr_conn == 1) {
      cfqq->coop = cfqq->split_coop = false;
    }
    else if (cfqq != &cic->own) {
      /* The owner of the shared queue stays in it; the others leave, each
       * at its next request (the kernel gives the splitting connection a
       * fresh queue instead, whichever it is).
       */
      struct cfqq *own = &cic->own;
      cic->cfqq = own;
      own->nr_conn++;
      cfq_drop_link (cfqd, own);
      own->coop = own->split_coop = false;
      cfq_put_conn_ref (cfqd, cfqq);
      cfqd->stats.splits++;
      cfqq = own;
    }
  }
  if (cfqq->new_cfqq) {
    struct cfqq *target = cfqq->new_cfqq;
    cic->cfqq = target;
    target->nr_conn++;
    target->coop = true;
    cfq_put_conn_ref (cfqd, cfqq);
    cfqd->stats.merges++;
    cfqq = target;
  }
  return cfqq;
}

/* ---- Insertion ---------------------------------------------------------- */

static void
cfq_update_io_thinktime (struct cfqd *cfqd, struct sched_queue *cic,
                         uint64_t now)
{
  uint64_t elapsed = 0, ttime;

  if (cic->last_end_request != SCHED_NEVER && now > cic->last_end_request)
    elapsed = now - cic->last_end_request;
  ttime = umin64 (elapsed, 2 * t_get (cfqd, T_SLICE_IDLE));
  cic->ttime_samples = (7 * cic->ttime_samples + 256) / 8;
  cic->ttime_total = (7 * cic->ttime_total + 256 * ttime) / 8;
  cic->ttime_mean = (cic->ttime_total + 128) / cic->ttime_samples;
}

/* Would a queue's first request be a seek?  On a disk it has no distance
 * of its own, so it is judged by its distance from the head.
 */
static bool
cfq_first_rq_seeky (const struct cfqd *cfqd, const struct rq *rq)
{
  if (cfq_nonrot (cfqd))
    return rq_sectors (rq) < CFQQ_SECT_THR_NONROT;
  return cfq_dist_from_last (cfqd, rq) > CFQQ_SEEK_THR;
}

static void
cfq_update_io_seektime (struct cfqd *cfqd, struct cfqq *cfqq,
                        const struct rq *rq)
{
  uint64_t sdist, pos = rq_sector (rq);

  /* On a disk a queue's first request is judged by its distance from the
   * head, and that guess stands until the second request gives a real
   * sample.  The kernel counts it as no seek.
   */
  if (!cfqq->last_request_pos && !cfq_nonrot (cfqd)) {
    cfqq->seek_first = cfq_first_rq_seeky (cfqd, rq);
    return;
  }
  if (cfqq->last_request_pos)
    sdist = pos > cfqq->last_request_pos ? pos - cfqq->last_request_pos
                                         : cfqq->last_request_pos - pos;
  else
    sdist = 0;
  cfqq->seek_history <<= 1;
  if (cfqq->seek_samples < 32)
    cfqq->seek_samples++;
  if (cfq_nonrot (cfqd))
    cfqq->seek_history |= (rq_sectors (rq) < CFQQ_SECT_THR_NONROT);
  else
    cfqq->seek_history |= (sdist > CFQQ_SEEK_THR);
}

/* Idle for a queue unless it thinks too long or seeks so much that idling
 * does not pay.
 */
static void
cfq_update_idle_window (struct cfqd *cfqd, struct cfqq *cfqq,
                        const struct sched_queue *cic)
{
  bool enable_idle;

  if (!cfqq->sync || cfq_class_idle (cfqq))
    return;
  enable_idle = cfqq->idle_window;
  if (cfqq->queued[0] + cfqq->queued[1] >= 4)
    cfqq->deep = true;
  if (cic->dead || !t_get (cfqd, T_SLICE_IDLE)
      || (!cfqq->deep && CFQQ_SEEKY (cfqq)))
    enable_idle = false;
  else if (CFQ_SAMPLE_VALID (cic->ttime_samples))
    enable_idle = cic->ttime_mean <= t_get (cfqd, T_SLICE_IDLE);
  cfqq->idle_window = enable_idle;
}

/* Should new_cfqq, which just got rq, preempt the active queue?  The
 * rules in CFQ's order (cfq_should_preempt).
 */
static bool
cfq_should_preempt (struct cfqd *cfqd, struct cfqq *new_cfqq,
                    const struct rq *rq, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;

  if (!cfqq)
    return false;
  if (cfq_class_idle (new_cfqq))
    return false;
  /* A group its caps hold cannot use the disk it would take. */
  if (qos_on (&cfqd->qos) && qos_held (&new_cfqq->cfqg->qos, now))
    return false;
  if (cfq_class_idle (cfqq))
    return true;
  /* A non-RT request does not preempt an RT slice. */
  if (cfq_class_rt (cfqq) && !cfq_class_rt (new_cfqq))
    return false;
  /* Sync request, async active queue: unless the queue has a request
   * that must go first (expired fifo; later CFQ, see the essay).
   */
  if (rq_is_sync (rq) && !cfqq->sync && !cfqq->must_dispatch)
    return true;
  if (new_cfqq->cfqg != cfqq->cfqg)
    return false;
  if (cfq_slice_used (cfqq, now))
    return true;
  /* Idling on the sync-noidle tree for a queue that has nothing. */
  if (cfqd->serving_type == SYNC_NOIDLE_WORKLOAD
      && cfqq_type (new_cfqq) == SYNC_NOIDLE_WORKLOAD
      && new_cfqq->service_tree && new_cfqq->service_tree->count == 2
      && rb_empty (&cfqq->sort_list))
    return true;
  /* Metadata before regular I/O. */
  if ((rq->flags & RQ_META) && !cfqq->meta_pending)
    return true;
  /* RT preempts a non-RT slice. */
  if (cfq_class_rt (new_cfqq) && !cfq_class_rt (cfqq))
    return true;
  if (!cfqd->active_cic || !cfqq->wait_request)
    return false;
  /* As good as what we are idling for: close to the head. */
  return cfq_rq_close (cfqd, rq);
}

static void
cfq_preempt_queue (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  cfqd->stats.preemptions++;
  if (cfqd->active_queue)
    cfqd->active_queue->cfqg->st_preemptions++;
  cfq_slice_expired (cfqd, true, now);
  /* The new queue goes to the front of its tree: served next within its
   * workload.  As in 2.6.36 the group resumes its saved workload: a sync
   * request preempting an async queue inside the async workload slice
   * waits for that slice to end, which is what keeps a writer alive
   * under sync readers.  (2.6.39 clears the saved slice when the types
   * differ, so the sync queue runs at once and the writer starves.)
   */
  cfq_service_tree_add (cfqd, cfqq, true, now);
  cfqq->slice_end = 0;
  cfqq->slice_new = true;
}

static void
cfq_rq_enqueued (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
                 struct sched_queue *cic, uint64_t now)
{
  cfqd->rq_queued++;
  if (rq->flags & RQ_META)
    cfqq->meta_pending++;

  cfq_update_io_thinktime (cfqd, cic, now);
  /* A flush has no place on the disk (the kernel's flushes bypass the
   * elevator): it moves neither the seek history nor the position.
   */
  if (rq->op != RQ_FLUSH)
    cfq_update_io_seektime (cfqd, cfqq, rq);
  cfq_update_idle_window (cfqd, cfqq, cic);
  if (rq->op != RQ_FLUSH)
    cfqq->last_request_pos = rq_sector (rq) + rq_sectors (rq);

  if (cfqq == cfqd->active_queue) {
    /* The request we idled for.  Larger than a page, or others waiting:
     * dispatch it now; else let it out when the timer fires, so tiny
     * requests get a chance to merge first (must_dispatch).
     */
    if (cfqq->wait_request) {
      cfqd->stats.idle_hits++;
      cfqq->cfqg->st_idle_hits++;
      if (rq->len > CFQ_PAGE_SIZE || cfqd->busy_queues > 1) {
        cfq_del_timer (cfqd);
        cfqq->wait_request = false;
      }
      else
        cfqq->must_dispatch = true;
    }
  }
  else if (cfq_should_preempt (cfqd, cfqq, rq, now)) {
    if (cfqd->run_queue && cfqd->run_queue == cfqd->active_queue) {
      if (!cfqd->preempt_pending)
        cfqd->preempt_pending = cfqq;
    }
    else
      cfq_preempt_queue (cfqd, cfqq, now);
  }
}

/* ---- The idle timer ------------------------------------------------------ */

static void
cfq_idle_slice_timer (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *cfqq = cfqd->active_queue;
  bool timed_out = true;

  cfq_del_timer (cfqd);
  CFQ_TRACE (cfqd, cfqq, "idle fired%s",
             cfqq && cfqq->must_dispatch ? ": request arrived" : "");
  if (cfqq) {
    timed_out = false;
    /* A request came in during the window: let it through. */
    if (cfqq->must_dispatch)
      return;
    if (cfq_slice_used (cfqq, now))
      goto expire;
    /* Nobody else waits: keep the queue (and its slice). */
    if (!cfqd->busy_queues)
      return;
    if (!rb_empty (&cfqq->sort_list))
      return;
    /* The idle did not pay: forget the queue was deep. */
    cfqq->deep = false;
    cfqd->stats.idle_timeouts++;
    cfqq->cfqg->st_idle_timeouts++;
  }
expire:
  cfq_slice_expired (cfqd, timed_out, now);
}

static void
cfq_run_timer (struct cfqd *cfqd, uint64_t now)
{
  if (cfqd->idle_timer != SCHED_NEVER && now >= cfqd->idle_timer)
    cfq_idle_slice_timer (cfqd, now);
}

/* ---- Ops ----------------------------------------------------------------- */

static void
cfq_init_cfqq (struct cfqd *cfqd, struct cfqq *cfqq, struct sched_group *cfqg,
               struct sched_queue *owner, bool sync, unsigned cls,
               unsigned level)
{
  memset (cfqq, 0, sizeof *cfqq);
  cfqq->cfqd = cfqd;
  cfqq->cfqg = cfqg;
  cfqq->owner = owner;
  rb_clear (&cfqq->rb_node);
  rb_clear (&cfqq->p_node);
  rb_root_init (&cfqq->sort_list);
  list_init (&cfqq->fifo);
  cfqq->ioprio_class = cls;
  cfqq->ioprio = cls == SCHED_CLASS_IDLE ? SCHED_LEVELS - 1 : level;
  cfqq->sync = sync;
  if (sync && cls != SCHED_CLASS_IDLE)
    cfqq->idle_window = true;
  cfqq->slice_new = true;
}

static struct sched_group *
cfq_group_alloc (struct cfqd *cfqd, const char *name, unsigned weight)
{
  struct sched_group *cfqg;

  if (weight < SCHED_WEIGHT_MIN || weight > SCHED_WEIGHT_MAX)
    return NULL;
  cfqg = calloc (1, sizeof *cfqg);
  if (!cfqg)
    return NULL;
  cfqg->cfqd = cfqd;
  snprintf (cfqg->name, sizeof cfqg->name, "%s", name ? name : "");
  cfqg->weight = weight;
  rb_clear (&cfqg->rb_node);
  qos_group_init (&cfqg->qos);
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 3; j++)
      rb_root_init (&cfqg->st[i][j]);
  rb_root_init (&cfqg->st_idle);
  for (int i = 0; i < CFQ_PRIO_LISTS; i++)
    rb_root_init (&cfqg->prio_trees[i]);
  for (int l = 0; l < SCHED_LEVELS; l++) {
    cfq_init_cfqq (cfqd, &cfqg->async_cfqq[0][l], cfqg, NULL, false,
                   SCHED_CLASS_RT, l);
    cfq_init_cfqq (cfqd, &cfqg->async_cfqq[1][l], cfqg, NULL, false,
                   SCHED_CLASS_BE, l);
  }
  cfq_init_cfqq (cfqd, &cfqg->async_idle_cfqq, cfqg, NULL, false,
                 SCHED_CLASS_IDLE, SCHED_LEVELS - 1);
  list_add_tail (&cfqg->link, &cfqd->groups);
  return cfqg;
}

static struct sched_queue *
cfq_conn_alloc (struct cfqd *cfqd, struct sched_group *cfqg,
                enum sched_class cls, unsigned level)
{
  struct sched_queue *cic;

  if (cls < SCHED_CLASS_RT || cls > SCHED_CLASS_IDLE || level >= SCHED_LEVELS)
    return NULL;
  cic = calloc (1, sizeof *cic);
  if (!cic)
    return NULL;
  cic->cfqd = cfqd;
  cic->cfqg = cfqg;
  cic->cls = cls;
  cic->level = level;
  cic->last_end_request = SCHED_NEVER;
  cfq_init_cfqq (cfqd, &cic->own, cfqg, cic, true, cls, level);
  cic->cfqq = &cic->own;
  cic->own.nr_conn = 1;
  list_add_tail (&cic->link, &cfqd->conns);
  return cic;
}

static struct sched *
cfq_create (void)
{
  struct cfqd *cfqd = calloc (1, sizeof *cfqd);

  if (!cfqd)
    return NULL;
  cfqd->s.ops = &cfq_ops;
  for (int i = 0; i < T_NR; i++)
    cfqd->tun[i] = cfq_tunables[i].def;
  rb_root_init (&cfqd->grp_st.rb);
  qos_sched_init (&cfqd->qos);
  qos_sched_set_slice (&cfqd->qos, t_get (cfqd, T_ROTATIONAL)
                       ? QOS_SLICE_ROT : QOS_SLICE_NONROT);
  list_init (&cfqd->groups);
  list_init (&cfqd->conns);
  cfqd->hw_tag = -1;
  cfqd->idle_timer = SCHED_NEVER;
  cfqd->serving_type = SYNC_NOIDLE_WORKLOAD;
  /* Start as if no sync request was delayed in the last second, so async
   * gets some depth at once (CFQ: jiffies - HZ).  now is 0 here; the
   * subtraction in cfq_async_depth is modular so this works from any
   * starting clock.
   */
  cfqd->last_delayed_sync = (uint64_t) 0 - NSEC_PER_SEC;
  cfqd->last_end_nonidle = (uint64_t) 0 - NSEC_PER_SEC;
  cfqd->root_group = cfq_group_alloc (cfqd, "root", CFQ_ROOT_WEIGHT);
  if (!cfqd->root_group)
    goto err;
  cfqd->root_conn = cfq_conn_alloc (cfqd, cfqd->root_group, SCHED_CLASS_BE, 4);
  if (!cfqd->root_conn)
    goto err;
  return &cfqd->s;

 err:
  if (cfqd->root_group)
    free (cfqd->root_group);
  free (cfqd);
  return NULL;
}

static void
cfq_destroy (struct sched *s)
{
  struct cfqd *cfqd = CFQD (s);
  struct list *p, *n;

  list_for_each_safe (p, n, &cfqd->conns)
    free (list_entry (p, struct sched_queue, link));
  list_for_each_safe (p, n, &cfqd->groups)
    free (list_entry (p, struct sched_group, link));
  free (cfqd);
}

const struct cfq_tunable *
cfq_tunable_lookup (const char *name)
{
  for (size_t i = 0; i < T_NR; i++)
    if (strcmp (cfq_tunables[i].name, name) == 0)
      return &cfq_tunables[i];
  return NULL;
}

int
cfq_tunable_check (const char *name, uint64_t val)
{
  const struct cfq_tunable *t = cfq_tunable_lookup (name);

  if (!t)
    return -ENOENT;
  if (val < t->min || val > t->max)
    return -ERANGE;
  return 0;
}

/* Tunables as text.  The unit string of the table decides the grammar
 * (include/units.h for times, sizes and booleans); the tunables of unit
 * "mode" take one of their names (listed here in the order messages give
 * them) or its number.  Every reader of a value (the config file, the control
 * socket's set, cfqsim) goes through cfq_tunable_parse, so they accept
 * the same text.
 */
struct cfq_name {
  const char *name;
  uint64_t val;
};

static const struct cfq_name cfq_mode_names[] = {
  { "auto", CFQ_MODE_AUTO }, { "time", CFQ_MODE_TIME },
  { "iops", CFQ_MODE_IOPS }, { NULL, 0 },
};
static const struct cfq_name cfq_hw_tag_names[] = {
  { "detect", 2 }, { "no", 0 }, { "yes", 1 }, { NULL, 0 },
};

enum tunit { TU_TIME, TU_KIB, TU_BOOL, TU_NAME, TU_COUNT };

static enum tunit
tunit (const struct cfq_tunable *t)
{
  if (strcmp (t->unit, "ns") == 0)
    return TU_TIME;
  if (strcmp (t->unit, "KiB") == 0)
    return TU_KIB;
  if (strcmp (t->unit, "bool") == 0)
    return TU_BOOL;
  if (strcmp (t->unit, "mode") == 0)
    return TU_NAME;
  return TU_COUNT;
}

static const struct cfq_name *
tunable_names (const struct cfq_tunable *t)
{
  return t == &cfq_tunables[T_HW_TAG] ? cfq_hw_tag_names : cfq_mode_names;
}

int
cfq_tunable_parse (const char *name, const char *text, uint64_t *val)
{
  const struct cfq_tunable *t = cfq_tunable_lookup (name);
  const struct cfq_name *n;
  uint64_t v = 0;
  bool b;
  int r = -EINVAL;

  if (!t)
    return -ENOENT;
  switch (tunit (t)) {
  case TU_TIME:
    r = units_parse_time (text, NSEC_PER_MSEC, &v);
    break;
  case TU_KIB:
    /* A bare number is KiB, as in sysfs; with a suffix, a size. */
    if (text[0] && strchr ("0123456789", text[strlen (text) - 1]))
      r = units_parse_count (text, &v);
    else if ((r = units_parse_size (text, &v)) == 0) {
      if (v % 1024)
        return -EINVAL;
      v /= 1024;
    }
    break;
  case TU_BOOL:
    r = units_parse_bool (text, &b);
    if (r == 0)
      v = b;
    break;
  case TU_NAME:
    /* The name, or its number (as sched_set takes it). */
    r = units_parse_count (text, &v);
    for (n = tunable_names (t); n->name; n++)
      if (strcmp (text, n->name) == 0) {
        v = n->val;
        r = 0;
      }
    break;
  case TU_COUNT:
    r = units_parse_count (text, &v);
    break;
  }
  if (r < 0)
    return -EINVAL;             /* overflow too: not of the grammar */
  if (v < t->min || v > t->max)
    return -ERANGE;
  *val = v;
  return 0;
}

char *
cfq_tunable_format (const struct cfq_tunable *t, uint64_t val, char *buf,
                    size_t len)
{
  switch (tunit (t)) {
  case TU_TIME:
    return units_format_time (val, buf, len);
  case TU_KIB:
    if (val <= UINT64_MAX / 1024)
      return units_format_size (val * 1024, buf, len);
    break;
  case TU_NAME:
    for (const struct cfq_name *n = tunable_names (t); n->name; n++)
      if (n->val == val) {
        snprintf (buf, len, "%s", n->name);
        return buf;
      }
    break;
  default:
    break;
  }
  snprintf (buf, len, "%llu", (unsigned long long) val);
  return buf;
}

const char *
cfq_tunable_explain (const struct cfq_tunable *t, const char *text, int err,
                     char *buf, size_t len)
{
  char b1[32], b2[32], want[96];
  uint64_t v;
  size_t off;

  if (err == -ERANGE) {
    snprintf (buf, len, "out of range %s..%s",
              cfq_tunable_format (t, t->min, b1, sizeof b1),
              cfq_tunable_format (t, t->max, b2, sizeof b2));
    return buf;
  }
  switch (tunit (t)) {
  case TU_TIME:
    snprintf (buf, len, "not a time (want %s)",
              units_expect_time (NSEC_PER_MSEC, want, sizeof want));
    break;
  case TU_KIB:
    if (units_parse_size (text, &v) == 0)
      snprintf (buf, len, "not a whole number of KiB");
    else
      snprintf (buf, len, "not a size (a bare number is KiB)");
    break;
  case TU_BOOL:
    snprintf (buf, len, "not a boolean (want %s)", UNITS_EXPECT_BOOL);
    break;
  case TU_NAME:
    off = snprintf (buf, len, "want");
    for (const struct cfq_name *n = tunable_names (t); n->name && off < len;
         n++)
      off += snprintf (buf + off, len - off, "%s %s", n == tunable_names (t)
                       ? "" : n[1].name ? "," : " or", n->name);
    break;
  case TU_COUNT:
    snprintf (buf, len, "not a number");
    break;
  }
  return buf;
}

int
cfq_mode_parse (const char *str, uint64_t *val)
{
  return cfq_tunable_parse ("mode", str, val);
}

const char *
cfq_mode_name (uint64_t val)
{
  for (const struct cfq_name *n = cfq_mode_names; n->name; n++)
    if (n->val == val)
      return n->name;
  return "?";
}

/* The one setter: validates against the table, never clamps silently. */
static int
cfq_set (struct sched *s, const char *key, uint64_t val)
{
  struct cfqd *cfqd = CFQD (s);
  const struct cfq_tunable *t = cfq_tunable_lookup (key);
  int r = cfq_tunable_check (key, val);

  if (r < 0)
    return r;
  cfqd->tun[t - cfq_tunables] = val;
  if (t == &cfq_tunables[T_ROTATIONAL])
    qos_sched_set_slice (&cfqd->qos, val ? QOS_SLICE_ROT : QOS_SLICE_NONROT);
  if (t == &cfq_tunables[T_HW_TAG]) {
    /* Forced, or detection from scratch (CFQ's initial -1). */
    cfqd->hw_tag = val == 2 ? -1 : (int) val;
    cfqd->hw_tag_samples = 0;
  }
  return 0;
}

static int
cfq_get (struct sched *s, const char *key, uint64_t *val)
{
  struct cfqd *cfqd = CFQD (s);
  const struct cfq_tunable *t = cfq_tunable_lookup (key);

  if (!t)
    return -ENOENT;
  *val = cfqd->tun[t - cfq_tunables];
  return 0;
}

static struct sched_group *
cfq_group_new (struct sched *s, const char *name, unsigned weight)
{
  return cfq_group_alloc (CFQD (s), name, weight);
}

static int
cfq_group_set_weight (struct sched *s, struct sched_group *cfqg, unsigned w)
{
  struct cfqd *cfqd = CFQD (s);

  if (w < SCHED_WEIGHT_MIN || w > SCHED_WEIGHT_MAX)
    return -ERANGE;
  if (cfqg->on_st)
    cfqd->grp_st.total_weight = cfqd->grp_st.total_weight - cfqg->weight + w;
  cfqg->weight = w;
  return 0;
}

static int
cfq_group_set_qos (struct sched *s, struct sched_group *cfqg,
                   const struct qos_conf *c)
{
  struct cfqd *cfqd = CFQD (s);
  const struct qos_key *k, *o;
  char why[160];

  if (qos_conf_check (c, why, sizeof why, &k, &o) < 0)
    return -EINVAL;
  qos_group_set (&cfqd->qos, &cfqg->qos, c, cfqd->now);
  CFQ_TRACE (cfqd, NULL, "group %s: caps and reservation %s", cfqg->name,
             cfqg->qos.on ? "set" : "removed");
  return 0;
}

static struct sched_queue *
cfq_queue_new (struct sched *s, struct sched_group *cfqg,
               enum sched_class cls, unsigned level)
{
  struct cfqd *cfqd = CFQD (s);

  return cfq_conn_alloc (cfqd, cfqg ? cfqg : cfqd->root_group, cls, level);
}

static void
cfq_queue_free (struct sched *s, struct sched_queue *cic)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = cic->cfqq;

  if (cic->dead)
    return;
  cic->dead = true;
  if (cfqd->active_cic == cic)
    cfqd->active_cic = NULL;
  /* The task exited (cfq_exit_cfqq): stop serving its queue. */
  if (cfqd->active_queue == cfqq && cfqq->nr_conn == 1)
    cfq_slice_expired (cfqd, false, cfqd->now);
  /* Pin cic while dropping its reference: the merge chain may lead back
   * to its own queue.
   */
  cic->nr_rq++;
  cfq_put_conn_ref (cfqd, cfqq);
  cic->nr_rq--;
  cfq_conn_maybe_free (cfqd, cic);
}

static void
cfq_insert (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
  struct cfqq *cfqq;

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cic->nr_rq++;
  sched_classify (&cic->wstate, rq, now);
  if (rq_is_sync (rq))
    cfqq = cfq_sync_queue (cfqd, cic);
  else if (cic->cls == SCHED_CLASS_IDLE)
    cfqq = &cic->cfqg->async_idle_cfqq;
  else
    cfqq = &cic->cfqg->async_cfqq[cic->cls == SCHED_CLASS_RT ? 0 : 1]
                                 [cic->level];
  cfqq->nr_rq++;
  rq->sq = cfqq;
  rq->t_insert = now;
  rq->t_fifo = now + t_get (cfqd, rq_is_sync (rq) ? T_FIFO_EXPIRE_SYNC
                                                  : T_FIFO_EXPIRE_ASYNC);
  rq->t_dispatch = 0;
  rb_clear (&rq->rb);
  list_add_tail (&rq->fifo, &cfqq->fifo);
  /* A new sync queue joins the tree its first request says it belongs
   * to (see the essay: "Seek history of a new queue").  With slice_idle=0
   * nothing idles, and the kernel's placement (SYNC) is kept.
   */
  if (cfqq->sync && !cfqq->last_request_pos && !cfqq->on_rr
      && rq->op != RQ_FLUSH && cfqq->idle_window
      && t_get (cfqd, T_SLICE_IDLE) && cfq_first_rq_seeky (cfqd, rq))
    cfqq->idle_window = false;
  if (!cfqq->last_request_pos && rq->op != RQ_FLUSH)
    CFQ_TRACE (cfqd, cfqq, "first request: sector %llu, head %llu, %s",
               (unsigned long long) rq_sector (rq),
               (unsigned long long) cfqd->last_position,
               cfqq->idle_window ? "idles" : "does not idle");
  qos_enqueue (&cfqq->cfqg->qos, rq, now);
  cfq_add_rq_rb (cfqd, cfqq, rq, now);
  cfq_rq_enqueued (cfqd, cfqq, rq, cic, now);
  cfqd->stats.inserted++;
}

/* The next time something changes without an insert or a completion:
 * the idle timer, the end of the active slice, the async depth growing.
 * Fifo deadlines wake nothing in CFQ: they are only looked at when a
 * slice starts, which one of the other events causes.
 */
static uint64_t
cfq_next_deadline (struct cfqd *cfqd, uint64_t now)
{
  uint64_t next = cfqd->idle_timer;
  struct cfqq *cfqq = cfqd->active_queue;

  if (qos_on (&cfqd->qos))      /* a hold ends, a reservation comes due */
    next = umin64 (next, qos_next_event (&cfqd->qos, now));
  if (!cfqd->busy_queues)
    return next;
  if (!cfqq && cfq_idle_grace_wait (cfqd, now))
    next = umin64 (next, cfqd->last_end_nonidle + CFQ_IDLE_GRACE);
  if (cfqq && !cfqq->slice_new && cfqq->slice_end > now)
    next = umin64 (next, cfqq->slice_end);
  if (cfqq && !cfqq->sync && !rb_empty (&cfqq->sort_list)
      && t_get (cfqd, T_LOW_LATENCY)) {
    uint64_t ss = t_get (cfqd, T_SLICE_SYNC);
    uint64_t d = cfq_async_depth (cfqd, now);
    if (d < 1u << 30)
      next = umin64 (next, cfqd->last_delayed_sync + (d + 1) * ss);
  }
  return next;
}

/* One request from the queue to serve, if any. */
static struct rq *
cfq_dispatch_one (struct cfqd *cfqd, uint64_t now)
{
  struct rq *rq = NULL;
  struct cfqq *cfqq;

  if (cfqd->busy_queues && (cfqq = cfq_select_queue (cfqd, now)) != NULL
      && !rb_empty (&cfqq->sort_list)
      && (rq = cfq_dispatch_request (cfqd, cfqq, now)) != NULL) {
    cfqq->slice_dispatch++;
    cfqq->must_dispatch = false;
    /* An async queue expires once it used its request budget, an idle
     * class queue after every dispatch, if others wait.
     */
    if (cfqd->busy_queues > 1
        && ((!cfqq->sync && cfqq->slice_dispatch >= cfq_prio_to_maxrq (cfqd, cfqq))
            || cfq_class_idle (cfqq))) {
      cfqq->slice_end = now + 1;
      cfq_slice_expired (cfqd, false, now);
    }
  }
  return rq;
}

/* ---- Caps and reservations (the rules: core/qos.c) ---------------------- */

/* Rule 3: the leftmost group on the tree that no cap holds.  Held groups
 * left of it keep their lag, but at most a round of virtual time
 * (target_latency): enough to catch up on the turns their caps cut short,
 * not enough to bank what a cap below their share refuses for ever.
 */
static struct sched_group *
cfq_qos_next_cfqg (struct cfqd *cfqd)
{
  struct cfq_grp_st *st = &cfqd->grp_st;
  struct sched_group *cfqg = NULL;
  struct rb_node *n, *next;
  uint64_t floor;

  for (n = rb_first (&st->rb); n && !cfqg; n = rb_next (n))
    if (!qos_held (&cfqg_of (n)->qos, cfqd->now))
      cfqg = cfqg_of (n);
  if (!cfqg)
    return NULL;
  floor = cfqg->vdisktime
    - (t_get (cfqd, T_TARGET_LATENCY) << CFQ_SERVICE_SHIFT);
  for (n = rb_first (&st->rb); n != &cfqg->rb_node; n = next) {
    struct sched_group *held = cfqg_of (n);
    next = rb_next (n);
    if ((int64_t) (held->vdisktime - floor) < 0) {
      rb_erase (&st->rb, n);
      held->vdisktime = floor;
      rb_insert (&st->rb, n, cfqg_less);
    }
  }
  qos_turn (&cfqg->qos);
  return cfqg;
}

/* Rule 4: may the active queue dispatch rq under its group's caps?  If
 * not, its turn ends as if it had run dry, and the caller chooses again.
 */
static bool
cfq_qos_admit (struct cfqd *cfqd, struct cfqq *cfqq, struct rq *rq,
               uint64_t now)
{
  uint64_t until = qos_admit (&cfqq->cfqg->qos, rq, now);

  if (!until)
    return true;
  CFQ_TRACE (cfqd, cfqq, "held by a cap for %llu us: slice ends",
             (unsigned long long) ((until - now) / 1000));
  cfqd->qos_refused = true;
  cfq_slice_expired (cfqd, false, now);
  /* Time mode: a turn a cap ends is charged the time up to now, which is
   * nothing for the requests it leaves at the device; their device time
   * is charged as they complete (cfq_qos_completed), or a capped group
   * would use the disk for free whatever its weight.
   */
  if (!iops_mode (cfqd))
    cfqq->cfqg->qos_orphans = cfqq->cfqg->dispatched;
  return false;
}

/* A request completed: if its group's turn was ended by a cap with it at
 * the device, charge the group its device time, estimated as the time
 * since the previous completion or its dispatch, whichever is later (one
 * request at a time on a disk).
 */
static void
cfq_qos_completed (struct cfqd *cfqd, struct rq *rq, uint64_t now)
{
  struct cfqq *cfqq = rq->sq;
  struct sched_group *cfqg = cfqq->cfqg;
  uint64_t start = umax64 (rq->t_dispatch, cfqd->qos_last_done);

  if (cfqg->qos_orphans) {
    cfqg->qos_orphans--;
    if (now > start && !iops_mode (cfqd)) {
      cfq_group_charge (cfqd, cfqg, now - start);
      cfqg->st_used_ns += now - start;
    }
  }
  cfqd->qos_last_done = now;
}

/* The first queue with requests of a group's tree (the active queue may
 * have none left).
 */
static struct cfqq *
cfq_qos_tree_first (struct rb_root *st)
{
  for (struct rb_node *n = rb_first (st); n; n = rb_next (n))
    if (!rb_empty (&cfqq_of (n)->sort_list))
      return cfqq_of (n);
  return NULL;
}

/* The queue a reserved dispatch of cfqg takes its request from: the one
 * CFQ would serve first in the group (RT, then BE, then IDLE; the workload
 * whose first queue has the lowest key).
 */
static struct cfqq *
cfq_qos_pick_queue (struct cfqd *cfqd, struct sched_group *cfqg)
{
  static const enum wl_prio prios[2] = { RT_WORKLOAD, BE_WORKLOAD };
  struct cfqq *best = NULL;

  for (int p = 0; p < 2 && !best; p++)
    for (int t = 0; t <= SYNC_WORKLOAD; t++) {
      struct cfqq *c = cfq_qos_tree_first (&cfqg->st[prios[p]][t]);
      if (c && (!best || c->rb_key < best->rb_key))
        best = c;
    }
  if (!best)
    best = cfq_qos_tree_first (&cfqg->st_idle);
  return best;
}

/* A request of cfqg dispatched outside CFQ's turns (rules 1 and 5), if
 * its caps let it go: for the reservation the oldest request of the queue
 * CFQ would serve first (mClock serves each client in arrival order),
 * else the request CFQ would take next from it.  Only a released group's
 * request is charged, as CFQ would charge it: one request in IOPS mode,
 * its device time at completion in time mode.
 */
static struct rq *
cfq_qos_dispatch_from (struct cfqd *cfqd, struct sched_group *cfqg,
                       bool reserved, uint64_t now)
{
  struct cfqq *cfqq = cfq_qos_pick_queue (cfqd, cfqg);
  struct sched_group *active;
  struct rq *rq;

  if (!cfqq)
    return NULL;
  /* The oldest: always for the reservation, and for a released group
   * once its fifo deadline passed (CFQ looks at the fifo once per slice;
   * between turns there is no slice, and a random reader's far request
   * would wait for ever behind the near ones).
   */
  rq = list_entry (list_first (&cfqq->fifo), struct rq, fifo);
  if (!reserved && now < rq->t_fifo)
    rq = cfqq->next_rq;
  if (qos_admit (&cfqg->qos, rq, now))
    return NULL;                /* rule 6: its caps hold it */
  cfq_dispatch_insert (cfqd, cfqq, rq, now);
  qos_account (&cfqg->qos, rq, now, reserved);
  if (!reserved) {
    if (iops_mode (cfqd))
      cfq_group_charge (cfqd, cfqg, CFQ_IOPS_CHARGE);
    else
      cfqg->qos_orphans++;
  }
  CFQ_TRACE (cfqd, cfqq, "%s dispatch, tag %lld us from now",
             reserved ? "reserved" : "released",
             (long long) ((int64_t) (cfqg->qos.r_tag - now) / 1000));
  /* Emptied: off the tree now, as an expiry would have done (the active
   * queue stays until it expires).  The group keeps being the served one
   * if it was.
   */
  active = cfqd->grp_st.active;
  if (rb_empty (&cfqq->sort_list) && cfqq != cfqd->active_queue)
    cfq_del_cfqq_rr (cfqd, cfqq);
  if (active == cfqg && cfqg->on_st)
    cfqd->grp_st.active = active;
  return rq;
}

/* Rule 1: the reserved group whose tag is due goes first. */
static struct rq *
cfq_qos_dispatch_reserved (struct cfqd *cfqd, uint64_t now)
{
  for (int tries = 0; tries < 4; tries++) {
    struct qos_group *qg = qos_due (&cfqd->qos, now);
    struct rq *rq;

    if (!qg)
      return NULL;
    rq = cfq_qos_dispatch_from (cfqd, container_of (qg, struct sched_group,
                                                    qos), true, now);
    if (rq)
      return rq;
  }
  return NULL;
}

/* Is cfqg owed service next to the group being served?  Its vdisktime is
 * not above the active group's with the service of this slice so far
 * (what the expiry would charge).  On flash that is all: groups waiting
 * for their turn are served a slice at a time, and counted against the
 * one waiting longest a released group would lose its tokens whenever a
 * turn is long (doc/qos.md).  On a disk, where each excursion costs two
 * seeks, it must also be behind every other group no cap holds, so that
 * it would be the next one chosen.
 */
static bool
cfq_qos_owed (struct cfqd *cfqd, struct sched_group *cfqg, uint64_t now)
{
  struct cfqq *active = cfqd->active_queue;
  uint64_t charge, v;

  charge = iops_mode (cfqd)
    ? (uint64_t) active->slice_dispatch * CFQ_IOPS_CHARGE
    : cfq_cfqq_slice_usage (active, now);
  v = active->cfqg->vdisktime + cfq_scale_slice (charge, active->cfqg);
  if ((int64_t) (cfqg->vdisktime - v) > 0)
    return false;
  if (cfq_nonrot (cfqd))
    return true;
  for (struct rb_node *n = rb_first (&cfqd->grp_st.rb); n; n = rb_next (n)) {
    struct sched_group *g = cfqg_of (n);
    if (g == cfqg || g == active->cfqg || qos_held (&g->qos, now))
      continue;
    return (int64_t) (cfqg->vdisktime - g->vdisktime) < 0;
  }
  return true;
}

/* Rule 5: a group whose hold ended dispatches out of band while it is
 * owed service: CFQ's turns are far longer than a cap's bucket, and ending
 * the active slice for it instead was tried and starves a sequential
 * reader on a disk (each cut finds its requests in flight, its group off
 * the tree, and hands its turn to the next group; doc/qos.md).
 */
static struct rq *
cfq_qos_dispatch_released (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *active = cfqd->active_queue;
  struct list *p;

  if (!active)
    return NULL;                /* CFQ chooses a group now anyway */
  list_for_each (p, &cfqd->qos.groups) {
    struct qos_group *qg = list_entry (p, struct qos_group, link);
    struct sched_group *cfqg = container_of (qg, struct sched_group, qos);
    struct rq *rq;

    if (!qos_released (qg, now) || !cfqg->on_st)
      continue;
    /* Served by CFQ now: back to CFQ's turns.  Not owed now: on flash
     * maybe at the next call, as the active slice's service grows, so it
     * stays released until CFQ gives it a turn (else its bucket overflows
     * while it waits); on a disk, where every excursion to it costs two
     * seeks, it goes back to CFQ's turns (doc/qos.md).
     */
    if (cfqg == active->cfqg)
      qos_turn (qg);
    else if (!cfq_qos_owed (cfqd, cfqg, now)) {
      if (!cfq_nonrot (cfqd))
        qos_turn (qg);
    }
    else if ((rq = cfq_qos_dispatch_from (cfqd, cfqg, false, now)))
      return rq;
  }
  return NULL;
}

static struct rq *
cfq_qos_dispatch (struct cfqd *cfqd, uint64_t now)
{
  struct rq *rq;

  rq = cfq_qos_dispatch_reserved (cfqd, now);
  if (!rq)
    rq = cfq_qos_dispatch_released (cfqd, now);
  /* A refusal ends a turn (rule 4): choose again, a few times. */
  for (int tries = 0; !rq && tries < 4; tries++) {
    cfqd->qos_refused = false;
    rq = cfq_dispatch_one (cfqd, now);
    if (!cfqd->qos_refused)
      break;
  }
  return rq;
}

/* cfq_dispatch_requests: one request, if any. */
static struct rq *
cfq_dispatch_requests (struct cfqd *cfqd, uint64_t now)
{
  if (qos_on (&cfqd->qos))
    return cfq_qos_dispatch (cfqd, now);
  return cfq_dispatch_one (cfqd, now);
}

/* The queue run owed to the last completion is done: a preemption that
 * arrived after the completion takes effect now.
 */
static void
cfq_finish_queue_run (struct cfqd *cfqd, uint64_t now)
{
  struct cfqq *p = cfqd->preempt_pending;

  cfqd->preempt_pending = NULL;
  cfqd->run_queue = NULL;
  if (p && p->on_rr && cfqd->active_queue && cfqd->active_queue != p)
    cfq_preempt_queue (cfqd, p, now);
}

static struct rq *
cfq_dispatch (struct sched *s, uint64_t now, uint64_t *next)
{
  struct cfqd *cfqd = CFQD (s);
  struct rq *rq;

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  rq = cfq_dispatch_requests (cfqd, now);
  if (cfqd->run_queue || cfqd->preempt_pending) {
    bool pending = cfqd->preempt_pending != NULL;
    cfq_finish_queue_run (cfqd, now);
    if (!rq && pending)
      rq = cfq_dispatch_requests (cfqd, now);
  }
  *next = cfq_next_deadline (cfqd, now);
  return rq;
}

/* hw_tag: does the device queue?  Peak depth in the driver over 50
 * samples taken under enough load (cfq_update_hw_tag).
 */
static void
cfq_update_hw_tag (struct cfqd *cfqd)
{
  struct cfqq *cfqq = cfqd->active_queue;

  if (cfqd->rq_in_driver > cfqd->hw_tag_est_depth)
    cfqd->hw_tag_est_depth = cfqd->rq_in_driver;
  if (cfqd->hw_tag == 1 || t_get (cfqd, T_HW_TAG) != 2)
    return;
  if (cfqd->rq_queued <= CFQ_HW_QUEUE_MIN
      && cfqd->rq_in_driver <= CFQ_HW_QUEUE_MIN)
    return;
  /* An idling queue without enough requests can't fill the device:
   * don't conclude there is no queueing from that.
   */
  if (cfqq && cfqq->idle_window
      && cfqq->dispatched + cfqq->queued[0] + cfqq->queued[1] < CFQ_HW_QUEUE_MIN
      && cfqd->rq_in_driver < CFQ_HW_QUEUE_MIN)
    return;
  if (cfqd->hw_tag_samples++ < CFQ_HW_SAMPLES)
    return;
  cfqd->hw_tag = cfqd->hw_tag_est_depth >= CFQ_HW_QUEUE_MIN;
}

/* Seek cost (ours, see the essay): a read that was dispatched away from
 * the head took from its dispatch, or from the completion before it if
 * that came later (the device was busy with something else until then),
 * to now.  On a disk that is a seek and a rotation, 3 ms and more; on
 * flash that claims to rotate (a virtio disk, a RAID controller) it is a
 * fraction of a millisecond, and idling for such a device only wastes it.
 */
static void
cfq_update_seek_cost (struct cfqd *cfqd, const struct rq *rq, uint64_t now)
{
  uint64_t from = umax64 (rq->t_dispatch, cfqd->last_completion);
  uint64_t svc = now > from ? now - from : 0;

  cfqd->seek_weight = (7 * cfqd->seek_weight + 256) / 8;
  cfqd->seek_total = (7 * cfqd->seek_total + 256 * svc) / 8;
  cfqd->seek_cost = (cfqd->seek_total + 128) / cfqd->seek_weight;
  if (cfqd->seek_seen < CFQ_SEEK_SAMPLES) {
    cfqd->seek_seen++;
    return;
  }
  if (!cfqd->seek_fast && cfqd->seek_cost < CFQ_SEEK_FAST) {
    cfqd->seek_fast = true;
    CFQ_TRACE (cfqd, NULL, "seeks cost %llu us: not rotational",
               (unsigned long long) (cfqd->seek_cost / 1000));
  }
  else if (cfqd->seek_fast && cfqd->seek_cost > CFQ_SEEK_SLOW) {
    cfqd->seek_fast = false;
    CFQ_TRACE (cfqd, NULL, "seeks cost %llu us: rotational",
               (unsigned long long) (cfqd->seek_cost / 1000));
  }
}

static bool
cfq_should_wait_busy (struct cfqd *cfqd, struct cfqq *cfqq, uint64_t now)
{
  struct sched_queue *cic = cfqd->active_cic;

  if (!rb_empty (&cfqq->sort_list))
    return false;
  if (cfqq->cfqg->nr_cfqq > 1)
    return false;
  if (cfq_slice_used (cfqq, now))
    return true;
  if (cic && CFQ_SAMPLE_VALID (cic->ttime_samples)
      && (int64_t) (cfqq->slice_end - now) < (int64_t) cic->ttime_mean)
    return true;
  /* "Only one jiffy left". */
  if (cfqq->slice_end - now <= CFQ_JIFFY)
    return true;
  return false;
}

static void
cfq_completed (struct sched *s, struct rq *rq, uint64_t now)
{
  struct cfqd *cfqd = CFQD (s);
  struct cfqq *cfqq = rq->sq;
  struct sched_queue *cic = rq->q ? rq->q : cfqd->root_conn;
  const bool sync = rq_is_sync (rq);

  cfqd->now = now;
  cfq_run_timer (cfqd, now);
  cfq_update_hw_tag (cfqd);
  if (qos_on (&cfqd->qos))
    cfq_qos_completed (cfqd, rq, now);
  cfqd->rq_in_driver--;
  cfqq->dispatched--;
  cfqq->cfqg->dispatched--;
  if (!cfqq->cfqg->dispatched)
    cfq_group_drain_done (cfqd, cfqq->cfqg, now);
  cfqd->rq_in_flight[cfqq->sync]--;
  if (rq->pflags & CFQ_RQ_SEEK)
    cfq_update_seek_cost (cfqd, rq, now);
  cfqd->last_completion = now;
  cfqd->stats.completed++;
  if (!cfq_class_idle (cfqq))
    cfqd->last_end_nonidle = now;

  if (sync) {
    cic->last_end_request = now;
    if (rq->t_insert + t_get (cfqd, T_FIFO_EXPIRE_SYNC) <= now)
      cfqd->last_delayed_sync = now;
  }

  if (cfqd->active_queue == cfqq) {
    const bool cfqq_empty = rb_empty (&cfqq->sort_list);

    /* The slice starts at the first completion. */
    if (cfqq->slice_new) {
      cfq_set_prio_slice (cfqd, cfqq, now);
      cfqq->slice_new = false;
    }
    /* Group's only queue about to run out: extend the slice by an idle
     * window so the group keeps its place on the tree.
     */
    if (cfq_should_wait_busy (cfqd, cfqq, now)) {
      uint64_t extend = t_get (cfqd, T_SLICE_IDLE);
      if (!extend)
        extend = t_get (cfqd, T_GROUP_IDLE);
      cfqq->slice_end = now + extend;
      cfqq->wait_busy = true;
      cfqd->stats.wait_busy++;
    }
    /* No idling for expired, idle-class or async queues, queues with
     * requests left, or when a close cooperator is ready.
     */
    if (cfq_slice_used (cfqq, now) || cfq_class_idle (cfqq))
      cfq_slice_expired (cfqd, true, now);
    else if (sync && cfqq_empty && !cfq_close_cooperator (cfqd, cfqq))
      cfq_arm_slice_timer (cfqd, now);
  }

  /* The queue run that follows a completion in Linux: choose the queue
   * now, before the completed request's owner can resubmit; if that run
   * would dispatch from it, a preemption arriving before our next
   * dispatch() waits until that request went (cfq_finish_queue_run).
   */
  if (cfqd->busy_queues) {
    struct cfqq *run = cfq_select_queue (cfqd, now);
    if (run && !rb_empty (&run->sort_list)) {
      /* That run looks at the fifo first (cfq_dispatch_request): an
       * expired request must go, and no sync arrival preempts it.
       */
      if (cfq_fifo_expired (run, now))
        run->must_dispatch = true;
      if (cfq_may_dispatch (cfqd, run, now))
        cfqd->run_queue = run;
    }
  }

  /* cfq_put_request: drop the request's references.  cic stays pinned
   * while the queue's owner goes, so a merge chain can't free it first.
   */
  cfqq->nr_rq--;
  if (cfqq->owner && cfqq->owner != cic)
    cfq_conn_maybe_free (cfqd, cfqq->owner);
  cic->nr_rq--;
  cfq_conn_maybe_free (cfqd, cic);
}

static bool
cfq_has_work (struct sched *s)
{
  return CFQD (s)->rq_queued > 0;
}

void
cfq_get_stats (struct sched *s, struct cfq_stats *st)
{
  struct cfqd *cfqd = CFQD (s);

  *st = cfqd->stats;
  st->hw_tag = cfqd->hw_tag;
  st->hw_tag_est_depth = cfqd->hw_tag_est_depth;
  st->iops_mode = iops_mode (cfqd);
  st->seek_cost = cfqd->seek_cost;
  st->seek_fast = cfqd->seek_fast;
  st->busy_queues = cfqd->busy_queues;
  st->rq_queued = cfqd->rq_queued;
  st->rq_in_driver = cfqd->rq_in_driver;
}

uint64_t
cfq_group_vdisktime (struct sched *s, struct sched_group *cfqg)
{
  (void) s;
  return cfqg->vdisktime;
}

struct dumpbuf {
  char *buf;
  size_t len, pos;
};

static void __attribute__ ((format (printf, 2, 3)))
dump_printf (struct dumpbuf *d, const char *fmt, ...)
{
  va_list ap;
  int n;

  va_start (ap, fmt);
  n = vsnprintf (d->pos < d->len ? d->buf + d->pos : NULL,
                 d->pos < d->len ? d->len - d->pos : 0, fmt, ap);
  va_end (ap);
  if (n > 0)
    d->pos += n;
}

size_t
cfq_dump (struct sched *s, char *buf, size_t len)
{
  struct cfqd *cfqd = CFQD (s);
  struct dumpbuf d = { buf, len, 0 };
  struct list *p;

  if (len)
    buf[0] = '\0';
  for (size_t i = 0; i < T_NR; i++)
    dump_printf (&d, "%s=%llu %s\n", cfq_tunables[i].name,
                 (unsigned long long) cfqd->tun[i], cfq_tunables[i].unit);
  dump_printf (&d, "hw_tag=%d depth=%u iops_mode=%d seek_cost=%lluus "
               "seek_fast=%d busy_queues=%u "
               "rq_queued=%u rq_in_driver=%u idle_timer=%lld\n",
               cfqd->hw_tag, cfqd->hw_tag_est_depth, iops_mode (cfqd),
               (unsigned long long) (cfqd->seek_cost / 1000),
               cfqd->seek_fast,
               cfqd->busy_queues, cfqd->rq_queued, cfqd->rq_in_driver,
               cfqd->idle_timer == SCHED_NEVER ? -1LL
               : (long long) cfqd->idle_timer);
  list_for_each (p, &cfqd->groups) {
    struct sched_group *g = list_entry (p, struct sched_group, link);
    dump_printf (&d, "group %s weight=%u on_st=%d vdisktime=%llu "
                 "busy=%u dispatched=%u%s\n", g->name, g->weight, g->on_st,
                 (unsigned long long) g->vdisktime, g->nr_cfqq, g->dispatched,
                 cfqd->serving_group == g ? " serving" : "");
    if (g->qos.on)
      dump_printf (&d, "  qos held=%d throttled=%llu reserved=%llu "
                   "r_tag=%lld\n", qos_held (&g->qos, cfqd->now),
                   (unsigned long long) g->qos.st_held,
                   (unsigned long long) g->qos.st_reserved,
                   (long long) (g->qos.r_tag - cfqd->now));
  }
  if (cfqd->active_queue) {
    struct cfqq *q = cfqd->active_queue;
    dump_printf (&d, "active: class=%u level=%u sync=%d queued=%u "
                 "dispatched=%u slice_new=%d slice_end=%llu idle_window=%d "
                 "wait_request=%d coop=%d\n", q->ioprio_class, q->ioprio,
                 q->sync, q->queued[0] + q->queued[1], q->dispatched,
                 q->slice_new, (unsigned long long) q->slice_end,
                 q->idle_window, q->wait_request, q->coop);
  }
  return d.pos;
}

const struct sched_ops cfq_ops = {
  .name = "cfq",
  .create = cfq_create,
  .destroy = cfq_destroy,
  .set = cfq_set,
  .get = cfq_get,
  .group_new = cfq_group_new,
  .group_set_weight = cfq_group_set_weight,
  .group_set_qos = cfq_group_set_qos,
  .queue_new = cfq_queue_new,
  .queue_free = cfq_queue_free,
  .insert = cfq_insert,
  .dispatch = cfq_dispatch,
  .completed = cfq_completed,
  .has_work = cfq_has_work,
};

/* ---- Tracing ------------------------------------------------------------- */

static void
cfq_trace (const struct cfqd *cfqd, const struct cfqq *cfqq,
           const char *fmt, ...)
{
  char msg[256];
  int n = 0;
  va_list ap;

  if (cfqq)
    n = snprintf (msg, sizeof msg, "group %s q%p: ", cfqq->cfqg->name,
                  (const void *) cfqq);
  if (n < 0 || (size_t) n >= sizeof msg)
    n = 0;
  va_start (ap, fmt);
  vsnprintf (msg + n, sizeof msg - n, fmt, ap);
  va_end (ap);
  (void) cfqd;
  cfq_trace_hook (cfq_trace_opaque, msg);
}

void
cfq_set_trace (struct sched *s, cfq_trace_fn fn, void *opaque)
{
  (void) s;
  cfq_trace_opaque = opaque;
  cfq_trace_hook = fn;
}

void
cfq_group_get_stats (struct sched *s, struct sched_group *cfqg,
                     struct cfq_group_stats *st)
{
  st->weight = cfqg->weight;
  st->vdisktime = cfqg->vdisktime;
  st->busy_queues = cfqg->nr_cfqq;
  st->in_driver = cfqg->dispatched;
  st->on_service_tree = cfqg->on_st;
  st->serving = CFQD (s)->serving_group == cfqg;
  st->slices = cfqg->st_slices;
  st->idle_arms = cfqg->st_idle_arms;
  st->group_idle_arms = cfqg->st_group_idle_arms;
  st->idle_hits = cfqg->st_idle_hits;
  st->idle_timeouts = cfqg->st_idle_timeouts;
  st->preemptions = cfqg->st_preemptions;
  st->dispatched = cfqg->st_dispatched;
  st->used_ns = cfqg->st_used_ns;
  st->qos_held = qos_held (&cfqg->qos, CFQD (s)->now);
  st->qos_throttled = cfqg->qos.st_held;
  st->qos_reserved = cfqg->qos.st_reserved;
}
