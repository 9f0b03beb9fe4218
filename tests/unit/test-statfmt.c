/* test-statfmt.c: one walk over tables of fields gives the three texts
 * (plugin/statfmt.c), exactly.
 *
 * A device record and two group records (one a name that needs escaping)
 * with every kind of field: counters and gauges, a negative integer, a
 * boolean, fixed-point numbers, a divisor for JSON, another for the flat
 * records and another for Prometheus, strings (as labels of an info
 * family in Prometheus), a field left out while 0, a labelled table, a
 * summary, settings (STAT_KV) with a field shown flat only beside them,
 * a labelled STAT_KV, named tables with their own Prometheus prefix, an
 * inline table whose help qualifies its fields', a share shown for the
 * groups only, a list shown in JSON only, and a flat order of its own.  Checked: the JSON, the
 * flat lines and the Prometheus text, byte for byte.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "statfmt.h"

struct snap {
  uint64_t reqs;
  unsigned depth;
  int tag;
  bool busy;
  double bps;
  const char *name, *none;
  uint64_t used_ns, zero;
  double share;
  uint64_t ops[2];
  struct { uint64_t p50, sum, count; } lat;
  struct stat_kvs set;
  uint64_t held;
  struct stat_kvs figs;
};

#define O(f) offsetof (struct snap, f)

static const struct stat_field op_fields[] = {
  { .name = "read", .flat = "reads", .unit = "requests", .repr = STAT_U64,
    .off = O (ops[0]), .show = STAT_ALL, .help = "Reads." },
  { .name = "write", .flat = "writes", .unit = "requests",
    .repr = STAT_U64, .off = O (ops[1]), .show = STAT_JP,
    .help = "Writes." },
};

static const struct stat_field lat_fields[] = {
  { .name = "p50_ms", .prom = "0.5", .unit = "ms", .repr = STAT_U64,
    .off = O (lat.p50), .show = STAT_ALL, .div = 1e6, .dec = 3,
    .pdiv = 1e9, .help = "Median." },
  { .name = "sum_ns", .prom = "_sum", .unit = "ns", .repr = STAT_U64,
    .off = O (lat.sum), .show = STAT_P, .pdiv = 1e9, .help = "Sum." },
  { .name = "count", .prom = "_count", .unit = "requests",
    .repr = STAT_U64, .off = O (lat.count), .show = STAT_P,
    .help = "Count." },
};

static const struct stat_field main_fields[] = {
  { .name = "reqs", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = O (reqs), .show = STAT_ALL,
    .help = "Requests." },
  { .name = "depth", .unit = "requests", .repr = STAT_UINT,
    .off = O (depth), .show = STAT_ALL, .help = "Depth." },
  { .name = "tag", .unit = "bool", .repr = STAT_INT, .off = O (tag),
    .show = STAT_ALL, .help = "Tag." },
  { .name = "busy", .unit = "bool", .repr = STAT_BOOL, .off = O (busy),
    .show = STAT_ALL, .help = "Busy." },
  { .name = "mibs", .prom = "bytes_per_second", .unit = "MiB/s",
    .repr = STAT_DOUBLE, .off = O (bps), .show = STAT_ALL, .div = 1048576,
    .dec = 3, .help = "Bytes per second." },
  { .name = "name", .prom = "info", .repr = STAT_STR, .off = O (name),
    .show = STAT_ALL, .help = "Who; always 1." },
  { .name = "none", .prom = "info", .repr = STAT_STR, .off = O (none),
    .show = STAT_ALL, .help = "Nothing." },
  { .name = "used_ns", .flat = "used_ms", .prom = "used_seconds",
    .unit = "ns", .type = STAT_COUNTER, .repr = STAT_U64,
    .off = O (used_ns), .show = STAT_ALL, .fdiv = 1e6, .pdiv = 1e9,
    .help = "Used." },
  { .name = "zero", .unit = "requests", .repr = STAT_U64, .off = O (zero),
    .show = STAT_ALL | STAT_NONZERO, .help = "Zero." },
  { .name = "share", .unit = "%", .repr = STAT_DOUBLE, .off = O (share),
    .show = STAT_ALL | STAT_P_PEERS, .dec = 1, .pdiv = 100,
    .help = "Share." },
  { .name = "ops", .type = STAT_COUNTER, .label = "op", .show = STAT_ALL,
    STAT_SUB (op_fields), .help = "By op." },
  { .name = "lat", .prom = "latency_seconds", .type = STAT_SUMMARY,
    .label = "quantile", .show = STAT_ALL, STAT_SUB (lat_fields),
    .help = "Latency." },
};

static const struct stat_field q_fields[] = {
  { .repr = STAT_KV, .unit = "the key's", .off = O (set), .show = STAT_JF,
    .help = "Settings." },
  { .name = "held", .unit = "requests", .type = STAT_COUNTER,
    .repr = STAT_U64, .off = O (held),
    .show = STAT_ALL | STAT_F_SET, .help = "Held." },
};

static const struct stat_field c_fields[] = {
  { .name = "model", .label = "figure", .unit = "the figure's",
    .repr = STAT_KV, .off = O (figs), .show = STAT_JP, .help = "Figures." },
};

/* The flat records' order: depth before reqs. */
#define MAIN_FORDER STAT_FORDER (1, 0, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11)

static const struct stat_field main_table = {
  .show = STAT_ALL, STAT_SUB (main_fields), .forder = MAIN_FORDER,
};
static const struct stat_field main_all = {
  .show = STAT_ALL, STAT_SUB (main_fields), .forder = MAIN_FORDER,
  .help = "all of them",
};
static const struct stat_field q_table = {
  .name = "q", .show = STAT_ALL, STAT_SUB (q_fields),
};
static const struct stat_field c_table = {
  .name = "c", .prom = "c_", .show = STAT_JP, STAT_SUB (c_fields),
};

static void
walk (enum statfmt_kind kind, struct strbuf *o)
{
  static const struct stat_rec dev = {
    .key = "device", .kind = "device", .name = "-", .prom = "device_",
  };
  static const char *const names[2] = { "g1", "g \"2\"" };
  struct snap s = {
    .reqs = 7, .depth = 32, .tag = -1, .busy = true, .bps = 3145728,
    .name = "a b", .used_ns = 2500000000ULL, .share = 12.34,
    .ops = { 5, 2 }, .lat = { 1234567, 3000000000ULL, 7 },
    .figs = { 2, { { "rbps", 100 }, { "rrandiops", 200 } } },
  };
  struct statfmt w;

  statfmt_init (&w, kind, o);
  statfmt_rec_begin (&w, &dev);
  statfmt_table (&w, &main_all, &s);
  statfmt_table (&w, &c_table, &s);
  statfmt_list_begin (&w, "parts", STAT_J);
  {
    static const struct stat_rec part = { 0 };
    statfmt_rec_begin (&w, &part);
    statfmt_table (&w, &q_table, &s);
    statfmt_rec_end (&w);
  }
  statfmt_list_end (&w);
  statfmt_rec_end (&w);
  statfmt_list_begin (&w, "groups", STAT_ALL);
  for (int i = 0; i < 2; i++) {
    struct stat_rec g = {
      .kind = "group", .name = names[i], .prom = "group_",
      .labels = { "group", names[i] },
    };

    s.set.n = 0;
    if (i == 1)
      s.set = (struct stat_kvs) { 1, { { "iops_max", 100 } } };
    s.held = i;
    statfmt_rec_begin (&w, &g);
    statfmt_table (&w, &main_table, &s);
    statfmt_table (&w, &q_table, &s);
    statfmt_rec_end (&w);
  }
  statfmt_list_end (&w);
  statfmt_finish (&w);
}

static const char want_json[] =
  "{\"device\":{\"reqs\":7,\"depth\":32,\"tag\":-1,\"busy\":true,"
  "\"mibs\":3.000,\"name\":\"a b\",\"used_ns\":2500000000,\"share\":12.3,"
  "\"ops\":{\"read\":5,\"write\":2},\"lat\":{\"p50_ms\":1.235},"
  "\"c\":{\"model\":{\"rbps\":100,\"rrandiops\":200}},"
  "\"parts\":[{\"q\":{\"held\":0}}]},"
  "\"groups\":[{\"reqs\":7,\"depth\":32,\"tag\":-1,\"busy\":true,"
  "\"mibs\":3.000,\"name\":\"a b\",\"used_ns\":2500000000,\"share\":12.3,"
  "\"ops\":{\"read\":5,\"write\":2},\"lat\":{\"p50_ms\":1.235},"
  "\"q\":{\"held\":0}},"
  "{\"reqs\":7,\"depth\":32,\"tag\":-1,\"busy\":true,"
  "\"mibs\":3.000,\"name\":\"a b\",\"used_ns\":2500000000,\"share\":12.3,"
  "\"ops\":{\"read\":5,\"write\":2},\"lat\":{\"p50_ms\":1.235},"
  "\"q\":{\"iops_max\":100,\"held\":1}}]}\n";

#define FLAT_MAIN " depth=32 reqs=7 tag=-1 busy=1 mibs=3.000 name=a_b" \
  " used_ms=2500 share=12.3 reads=5 p50_ms=1.235"
static const char want_flat[] =
  "device -" FLAT_MAIN "\n"
  "group g1" FLAT_MAIN "\n"
  "group g_\"2\"" FLAT_MAIN " iops_max=100 held=1\n";

static const char want_prom[] =
  "# HELP nbdkit_cfq_device_reqs_total Requests, all of them.\n"
  "# TYPE nbdkit_cfq_device_reqs_total counter\n"
  "nbdkit_cfq_device_reqs_total 7\n"
  "# HELP nbdkit_cfq_device_depth Depth, all of them.\n"
  "# TYPE nbdkit_cfq_device_depth gauge\n"
  "nbdkit_cfq_device_depth 32\n"
  "# HELP nbdkit_cfq_device_tag Tag, all of them.\n"
  "# TYPE nbdkit_cfq_device_tag gauge\n"
  "nbdkit_cfq_device_tag -1\n"
  "# HELP nbdkit_cfq_device_busy Busy, all of them.\n"
  "# TYPE nbdkit_cfq_device_busy gauge\n"
  "nbdkit_cfq_device_busy 1\n"
  "# HELP nbdkit_cfq_device_bytes_per_second Bytes per second, all of"
  " them.\n"
  "# TYPE nbdkit_cfq_device_bytes_per_second gauge\n"
  "nbdkit_cfq_device_bytes_per_second 3145728\n"
  "# HELP nbdkit_cfq_info Who; always 1.\n"
  "# TYPE nbdkit_cfq_info gauge\n"
  "nbdkit_cfq_info{name=\"a b\"} 1\n"
  "nbdkit_cfq_info{group=\"g1\",name=\"a b\"} 1\n"
  "nbdkit_cfq_info{group=\"g \\\"2\\\"\",name=\"a b\"} 1\n"
  "# HELP nbdkit_cfq_device_used_seconds_total Used, all of them.\n"
  "# TYPE nbdkit_cfq_device_used_seconds_total counter\n"
  "nbdkit_cfq_device_used_seconds_total 2.5\n"
  "# HELP nbdkit_cfq_device_zero Zero, all of them.\n"
  "# TYPE nbdkit_cfq_device_zero gauge\n"
  "nbdkit_cfq_device_zero 0\n"
  "# HELP nbdkit_cfq_device_ops_total By op, all of them.\n"
  "# TYPE nbdkit_cfq_device_ops_total counter\n"
  "nbdkit_cfq_device_ops_total{op=\"read\"} 5\n"
  "nbdkit_cfq_device_ops_total{op=\"write\"} 2\n"
  "# HELP nbdkit_cfq_device_latency_seconds Latency, all of them.\n"
  "# TYPE nbdkit_cfq_device_latency_seconds summary\n"
  "nbdkit_cfq_device_latency_seconds{quantile=\"0.5\"} 0.001234567\n"
  "nbdkit_cfq_device_latency_seconds_sum 3\n"
  "nbdkit_cfq_device_latency_seconds_count 7\n"
  "# HELP nbdkit_cfq_c_model Figures.\n"
  "# TYPE nbdkit_cfq_c_model gauge\n"
  "nbdkit_cfq_c_model{figure=\"rbps\"} 100\n"
  "nbdkit_cfq_c_model{figure=\"rrandiops\"} 200\n"
  "# HELP nbdkit_cfq_group_reqs_total Requests.\n"
  "# TYPE nbdkit_cfq_group_reqs_total counter\n"
  "nbdkit_cfq_group_reqs_total{group=\"g1\"} 7\n"
  "nbdkit_cfq_group_reqs_total{group=\"g \\\"2\\\"\"} 7\n"
  "# HELP nbdkit_cfq_group_depth Depth.\n"
  "# TYPE nbdkit_cfq_group_depth gauge\n"
  "nbdkit_cfq_group_depth{group=\"g1\"} 32\n"
  "nbdkit_cfq_group_depth{group=\"g \\\"2\\\"\"} 32\n"
  "# HELP nbdkit_cfq_group_tag Tag.\n"
  "# TYPE nbdkit_cfq_group_tag gauge\n"
  "nbdkit_cfq_group_tag{group=\"g1\"} -1\n"
  "nbdkit_cfq_group_tag{group=\"g \\\"2\\\"\"} -1\n"
  "# HELP nbdkit_cfq_group_busy Busy.\n"
  "# TYPE nbdkit_cfq_group_busy gauge\n"
  "nbdkit_cfq_group_busy{group=\"g1\"} 1\n"
  "nbdkit_cfq_group_busy{group=\"g \\\"2\\\"\"} 1\n"
  "# HELP nbdkit_cfq_group_bytes_per_second Bytes per second.\n"
  "# TYPE nbdkit_cfq_group_bytes_per_second gauge\n"
  "nbdkit_cfq_group_bytes_per_second{group=\"g1\"} 3145728\n"
  "nbdkit_cfq_group_bytes_per_second{group=\"g \\\"2\\\"\"} 3145728\n"
  "# HELP nbdkit_cfq_group_used_seconds_total Used.\n"
  "# TYPE nbdkit_cfq_group_used_seconds_total counter\n"
  "nbdkit_cfq_group_used_seconds_total{group=\"g1\"} 2.5\n"
  "nbdkit_cfq_group_used_seconds_total{group=\"g \\\"2\\\"\"} 2.5\n"
  "# HELP nbdkit_cfq_group_zero Zero.\n"
  "# TYPE nbdkit_cfq_group_zero gauge\n"
  "nbdkit_cfq_group_zero{group=\"g1\"} 0\n"
  "nbdkit_cfq_group_zero{group=\"g \\\"2\\\"\"} 0\n"
  "# HELP nbdkit_cfq_group_share Share.\n"
  "# TYPE nbdkit_cfq_group_share gauge\n"
  "nbdkit_cfq_group_share{group=\"g1\"} 0.1234\n"
  "nbdkit_cfq_group_share{group=\"g \\\"2\\\"\"} 0.1234\n"
  "# HELP nbdkit_cfq_group_ops_total By op.\n"
  "# TYPE nbdkit_cfq_group_ops_total counter\n"
  "nbdkit_cfq_group_ops_total{group=\"g1\",op=\"read\"} 5\n"
  "nbdkit_cfq_group_ops_total{group=\"g1\",op=\"write\"} 2\n"
  "nbdkit_cfq_group_ops_total{group=\"g \\\"2\\\"\",op=\"read\"} 5\n"
  "nbdkit_cfq_group_ops_total{group=\"g \\\"2\\\"\",op=\"write\"} 2\n"
  "# HELP nbdkit_cfq_group_latency_seconds Latency.\n"
  "# TYPE nbdkit_cfq_group_latency_seconds summary\n"
  "nbdkit_cfq_group_latency_seconds{group=\"g1\",quantile=\"0.5\"}"
  " 0.001234567\n"
  "nbdkit_cfq_group_latency_seconds_sum{group=\"g1\"} 3\n"
  "nbdkit_cfq_group_latency_seconds_count{group=\"g1\"} 7\n"
  "nbdkit_cfq_group_latency_seconds{group=\"g \\\"2\\\"\",quantile=\"0.5\"}"
  " 0.001234567\n"
  "nbdkit_cfq_group_latency_seconds_sum{group=\"g \\\"2\\\"\"} 3\n"
  "nbdkit_cfq_group_latency_seconds_count{group=\"g \\\"2\\\"\"} 7\n"
  "# HELP nbdkit_cfq_group_q_held_total Held.\n"
  "# TYPE nbdkit_cfq_group_q_held_total counter\n"
  "nbdkit_cfq_group_q_held_total{group=\"g1\"} 0\n"
  "nbdkit_cfq_group_q_held_total{group=\"g \\\"2\\\"\"} 1\n";

static void
check_text (enum statfmt_kind kind, const char *want)
{
  struct strbuf o = { 0 };

  walk (kind, &o);
  CHECK (!o.oom);
  CHECK_STREQ (o.s, want);
  strbuf_free (&o);
}

int
main (void)
{
  check_text (STATFMT_JSON, want_json);
  check_text (STATFMT_FLAT, want_flat);
  check_text (STATFMT_PROM, want_prom);
  printf ("statfmt: ok\n");
  check_done ("test-statfmt");
  return 0;
}
