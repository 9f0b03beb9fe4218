/* test-iostat.c: counters by op, the queue/device latency split, rates
 * over the last tick and since start, errors kept apart.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "iostat.h"

int
main (void)
{
  struct iostat st;
  struct rq rq;
  const uint64_t S = NSEC_PER_SEC;

  iostat_init (&st, 10 * S);
  memset (&rq, 0, sizeof rq);
  /* 100 reads of 4 KiB: 1 ms in queue, 2 ms at the device. */
  for (int i = 0; i < 100; i++) {
    rq.op = RQ_READ;
    rq.len = 4096;
    rq.t_insert = 10 * S + i * 1000000ULL;
    rq.t_dispatch = rq.t_insert + 1000000;
    iostat_done (&st, &rq, rq.t_dispatch + 2000000, 0);
  }
  /* 10 writes of 64 KiB and one failure, then a trim (not data). */
  for (int i = 0; i < 10; i++) {
    rq.op = RQ_WRITE;
    rq.len = 65536;
    rq.t_insert = rq.t_dispatch = 10 * S;
    iostat_done (&st, &rq, 10 * S + 500000, 0);
  }
  iostat_done (&st, &rq, 11 * S, -5);
  rq.op = RQ_TRIM;
  rq.len = 1 << 30;
  rq.t_insert = rq.t_dispatch = 11 * S - 1000000;
  iostat_done (&st, &rq, 11 * S, 0);

  CHECK_EQ (st.reqs[RQ_READ], 100);
  CHECK_EQ (st.reqs[RQ_WRITE], 10);
  CHECK_EQ (st.reqs[RQ_TRIM], 1);
  CHECK_EQ (st.errors, 1);
  CHECK_EQ (iostat_total_reqs (&st), 111);
  CHECK_EQ (iostat_total_bytes (&st), 100 * 4096 + 10 * 65536);
  CHECK_EQ (st.qlat.count, 111);
  CHECK_EQ (st.dlat.count, 111);
  /* Reads waited 1 ms in queue: p50 of qlat within one bucket of 1 ms. */
  uint64_t q50 = hist_quantile (&st.qlat, 0.5);
  CHECK_GE (q50, 1000000);
  CHECK_LE (q50, 1000000 + 1000000 / 8);
  CHECK_EQ (st.lat.max, 3000000);

  /* A tick 2 s after start: all of it happened in that interval. */
  iostat_tick (&st, 12 * S);
  CHECK_LT (fabs (st.iops - 111 / 2.0), 1e-9);
  CHECK_LT (fabs (st.bps - (100 * 4096 + 10 * 65536) / 2.0), 1e-6);
  /* Nothing more: the next interval's rate is zero, the average is not. */
  iostat_tick (&st, 13 * S);
  CHECK_EQ (st.iops, 0);
  CHECK_EQ (st.bps, 0);
  CHECK_LT (fabs (iostat_avg_iops (&st, 13 * S) - 111 / 3.0), 1e-9);
  /* A tick that does not move time forward changes nothing. */
  iostat_tick (&st, 13 * S);
  CHECK_EQ (st.iops, 0);
  iostat_free (&st);
  printf ("iostat: ok\n");
  check_done ("test-iostat");
  return 0;
}
