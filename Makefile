# nbdkit-cfq: a CFQ-scheduled, io_uring-backed nbdkit plugin.
#
#   make            build the plugin, the tools and the tests
#   make deps       install the Debian packages we need (apt-get, as root)
#   make check      run the test suite; ends with "N passed, N failed, N skipped"
#   make check-stress  the long hostile-tenant tests (tests/stress/)
#   make check-ceph  backend=rbd against a single-node Ceph cluster it starts
#                   and stops (tests/ceph/; root and the Ceph packages)
#   make lint       shellcheck every shell script, pyflakes3 every Python
#                   program; tools/lint-words; no cycles between core/'s or
#                   plugin/'s files; tools/lint-size (files, functions)
#   make SANITIZE=address,undefined check
#                   everything built with those sanitizers, the whole suite
#                   under them; any sanitizer report fails its test
#   make fuzz       run each libFuzzer target FUZZ_SECONDS (needs clang)
#   make demo       serve a demo image and show how to connect
#   make bench      run the benchmarks (not tests: numbers, not verdicts)
#   make bench-seeds  the seeds' experiments over NBD, fifo against cfq
#   make bench-rbd  backend=rbd against qemu-storage-daemon's rbd driver and
#                   librbd's QoS on a Ceph cluster it starts (root)
#   make lab SCENARIO=FILE  the fairness lab on one scenario
#   make lab-matrix  the fairness matrix: unlike tenants, fractions of solo
#   make install    install the plugin into nbdkit's plugin directory
#
# CI builds with WERROR=-Werror.

CC      ?= cc
CFLAGS  ?= -O2 -g
WERROR  ?=
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter
# The stricter set, for everything we compile: core/, plugin/, tools/,
# tests/ and bench/.
WARN_STRICT := -Wmissing-prototypes -Wstrict-prototypes -Wformat=2
CPPFLAGS_ALL := -iquote include -D_GNU_SOURCE

# ---- sanitizers -------------------------------------------------------------
# SANITIZE=address,undefined (any -fsanitize= list) builds everything with
# it, gcc or clang.  A report aborts (no recovery), and tests/run.sh fails a
# test that leaves one.  nbdkit itself is not instrumented and ASan must be
# the first library in a process, so the tests run nbdkit with the runtime
# in LD_PRELOAD whenever it loads our plugin (tests/sanitizer/nbdkit).
# clang links its runtime statically into programs and not at all into
# shared objects: there we use the shared runtime everywhere, found by rpath.
SANITIZE ?=
SAN_CFLAGS  :=
SAN_LDFLAGS :=
ifneq ($(SANITIZE),)
SAN_CFLAGS  := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
SAN_LDFLAGS := $(SAN_CFLAGS)
ifneq ($(shell $(CC) --version 2>/dev/null | grep -c clang),0)
SAN_LDFLAGS += -shared-libsan -Wl,-rpath,$(dir $(shell $(CC) \
	-print-file-name=libclang_rt.asan-x86_64.so))
endif
endif

CFLAGS_STRICT := -std=gnu11 -fPIC $(WARN) $(WARN_STRICT) $(WERROR) \
	$(SAN_CFLAGS) $(CFLAGS)
LDFLAGS_ALL  := $(SAN_LDFLAGS) $(LDFLAGS)
DEPFLAGS = -MMD -MP

# backend=rbd: built where librbd's and librados' headers are (Debian ships
# no .pc for them); RBD=no builds without it, to check that build too.
RBD ?= $(if $(wildcard /usr/include/rbd/librbd.h),yes,no)
ifeq ($(RBD),yes)
RBD_CFLAGS := -DHAVE_RBD
RBD_LIBS   := -lrbd -lrados
endif
# librados (limits held across servers, plugin/gateway.c): built in when
# its header is there (librados-dev; it ships no pkg-config file on
# Debian 12), left out with RADOS=no.
RADOS ?= $(if $(wildcard /usr/include/rados/librados.h),yes,no)
ifeq ($(RADOS),yes)
RADOS_CFLAGS := -DHAVE_RADOS $(shell pkg-config --cflags librados 2>/dev/null)
RADOS_LIBS   := $(shell pkg-config --libs librados 2>/dev/null || echo -lrados)
endif

# Everything is rebuilt when the compiler, CFLAGS or SANITIZE change: the
# objects depend on .build-flags, which is rewritten only when they differ.
BUILD_FLAGS := $(CC) | $(CFLAGS) | $(SANITIZE) | $(RBD) | $(RADOS)
FLAGS_STAMP := .build-flags

PKG_PLUGIN := nbdkit liburing libev
NBDKIT_CFLAGS := $(shell pkg-config --cflags nbdkit 2>/dev/null)
URING_LIBS    := $(shell pkg-config --libs liburing 2>/dev/null || echo -luring)
NBD_CFLAGS    := $(shell pkg-config --cflags libnbd 2>/dev/null)
NBD_LIBS      := $(shell pkg-config --libs libnbd 2>/dev/null || echo -lnbd)
INIH_LIBS     := $(shell pkg-config --libs inih 2>/dev/null || echo -linih)
PLUGINDIR     := $(shell pkg-config --variable=plugindir nbdkit 2>/dev/null)
URING_VERSION := $(shell pkg-config --modversion liburing 2>/dev/null)

# ---- core/: policy, a static library with no outside dependencies -------
CORE_SRC := $(wildcard core/*.c)
CORE_OBJ := $(CORE_SRC:.c=.o)
CORE_LIB := core/libcfqcore.a

# ---- plugin/: mechanism ---------------------------------------------------
PLUGIN_SRC := $(wildcard plugin/*.c)
PLUGIN_OBJ := $(PLUGIN_SRC:.c=.o)
PLUGIN     := plugin/nbdkit-cfq-plugin.so
PLUGIN_LIBS := $(URING_LIBS) -lev $(INIH_LIBS) $(RBD_LIBS) $(RADOS_LIBS) -lpthread -lm

# ---- tools/: cfqsim (core only), cfqconf, cfqctl --------------------------
# One file a tool, but cfqsim: tools/cfqsim-*.c behind tools/cfqsim.h.
# tests/sim/cfqsim-broken is cfqsim with tests/sim/broken-scheds.c in place
# of tools/cfqsim-scheds.c (the policies beyond core's): the watchdog test's.
CFQSIM_SRC := $(wildcard tools/cfqsim-*.c)
CFQSIM_OBJ := $(CFQSIM_SRC:.c=.o)
CFQSIM_BROKEN := tests/sim/cfqsim-broken
TOOL_SRC := $(filter-out $(CFQSIM_SRC),$(wildcard tools/*.c))
TOOLS    := $(TOOL_SRC:.c=) tools/cfqsim

# ---- tests ------------------------------------------------------------------
# tests/unit/test-*.c: unit tests of core/, linked with core only, and of
# the plugin pieces that need no nbdkit (PLUGIN_UNIT), linked with the
# plugin files they test.
# tests/nbd/*.c: libnbd client programs used by the shell tests.
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:.c=)
NBDP_SRC := $(wildcard tests/nbd/*.c)
NBDP_BIN := $(NBDP_SRC:.c=)

# tests/fuzz/fuzz-NAME.c: libFuzzer targets of core/, and of plugin/
# without nbdkit (FUZZ_PLUGIN: the control protocol).  replay-NAME runs
# one on its committed corpus (tests/fuzz/corpus/NAME) without libFuzzer:
# built with the rest, run by make check.  fuzz-NAME itself needs clang
# (make fuzz).
FUZZ_NAMES  := $(patsubst tests/fuzz/fuzz-%.c,%,$(wildcard tests/fuzz/fuzz-*.c))
FUZZ_REPLAY := $(FUZZ_NAMES:%=tests/fuzz/replay-%)
FUZZ_BIN    := $(FUZZ_NAMES:%=tests/fuzz/fuzz-%)
FUZZ_CC     ?= clang
FUZZ_SECONDS ?= 60
FUZZ_FLAGS  := -g -O1 -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=all

# ---- bench/: C benchmark programs (bench/*.c, core only) ---------------
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:.c=)

# ---- the manual pages ------------------------------------------------------
# The plugin's, and one per tool (tools/NAME.pod).
MAN     := plugin/nbdkit-cfq-plugin.1
TOOL_MAN := $(patsubst %.pod,%.1,$(wildcard tools/*.pod))
MANDIR  ?= /usr/local/share/man

ALL := $(CORE_LIB) $(PLUGIN) $(TOOLS) $(CFQSIM_BROKEN) $(UNIT_BIN) $(NBDP_BIN) \
	$(FUZZ_REPLAY) $(BENCH_BIN) $(MAN) $(TOOL_MAN)
# With sanitizers: what tests/sanitizer/nbdkit preloads besides the runtime.
SAN_SHIM := tests/sanitizer/nofreelocale.so
ifneq ($(SANITIZE),)
ALL += $(SAN_SHIM)
endif

.PHONY: all deps deps-kernel check check-stress check-ceph check-kernel \
	check-tsan lint fuzz \
	demo bench bench-seeds bench-rbd lab lab-matrix install clean FORCE
all: $(ALL)

$(FLAGS_STAMP): FORCE
	@if [ "$$(cat $@ 2>/dev/null)" != '$(BUILD_FLAGS)' ]; then \
	  echo '$(BUILD_FLAGS)' > $@; fi

core/%.o: core/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

plugin/%.o: plugin/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(NBDKIT_CFLAGS) $(RBD_CFLAGS) $(RADOS_CFLAGS) $(CFLAGS_STRICT) \
	  -fvisibility=hidden -DCFQ_LIBURING_VERSION='"$(URING_VERSION)"' $(DEPFLAGS) -c -o $@ $<

$(PLUGIN): $(PLUGIN_OBJ) $(CORE_LIB)
	$(CC) -shared -Wl,-z,nodelete $(LDFLAGS_ALL) -o $@ $(PLUGIN_OBJ) \
	  $(CORE_LIB) $(PLUGIN_LIBS)

$(MAN): plugin/nbdkit-cfq-plugin.pod
	pod2man --section=1 --center="nbdkit-cfq" --release="nbdkit-cfq" \
	  --name=nbdkit-cfq-plugin $< > $@.tmp && mv $@.tmp $@

tools/%.1: tools/%.pod
	pod2man --section=1 --center="nbdkit-cfq" --release="nbdkit-cfq" \
	  --name=$* $< > $@.tmp && mv $@.tmp $@

tools/cfqsim-%.o tests/sim/%.o: CPPFLAGS_ALL += -iquote tools
tools/cfqsim-%.o: tools/cfqsim-%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) -c -o $@ $<

tests/sim/%.o: tests/sim/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) -c -o $@ $<

tools/cfqsim: $(CFQSIM_OBJ) $(CORE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(INIH_LIBS) -lm

$(CFQSIM_BROKEN): $(filter-out tools/cfqsim-scheds.o,$(CFQSIM_OBJ)) \
	  tests/sim/broken-scheds.o $(CORE_LIB)
	$(CC) $(LDFLAGS_ALL) -o $@ $^ $(INIH_LIBS) -lm

# cfqconf reads the device's rotational flag as the plugin does.
tools/cfqconf: tools/cfqconf.c plugin/device.o $(CORE_LIB) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) -iquote plugin $(CFLAGS_STRICT) $(DEPFLAGS) \
	  $(LDFLAGS_ALL) -o $@ $< plugin/device.o $(CORE_LIB) $(INIH_LIBS) -lm

tools/%: tools/%.c $(CORE_LIB) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $< \
	  $(CORE_LIB) $(INIH_LIBS) -lm

tests/unit/%: tests/unit/%.c $(CORE_LIB) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $< \
	  $(CORE_LIB) $(INIH_LIBS) -lm

tests/nbd/%: tests/nbd/%.c $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(NBD_CFLAGS) $(CFLAGS_STRICT) $(DEPFLAGS) \
	  $(LDFLAGS_ALL) -o $@ $< $(NBD_LIBS) -lpthread

# Unit tests of plugin/ parts, linked with those objects.
PLUGIN_UNIT := tests/unit/test-engine tests/unit/test-hold tests/unit/test-rangelock \
  tests/unit/test-loglimit tests/unit/test-statfmt
tests/unit/test-engine: plugin/engine.o plugin/hold.o plugin/backend-null.o \
	  plugin/bounce.o plugin/bigmem.o
tests/unit/test-hold: plugin/hold.o
tests/unit/test-rangelock: plugin/rangelock.o
tests/unit/test-loglimit: plugin/loglimit.o
tests/unit/test-statfmt: plugin/statfmt.o plugin/strbuf.o
$(PLUGIN_UNIT): tests/unit/%: tests/unit/%.c $(CORE_LIB) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) -iquote plugin $(CFLAGS_STRICT) $(DEPFLAGS) \
	  $(LDFLAGS_ALL) -o $@ $< $(filter plugin/%.o,$^) $(CORE_LIB) $(INIH_LIBS) \
	  -lev -lpthread -lm

$(SAN_SHIM): tests/sanitizer/nofreelocale.c
	$(CC) -shared -fPIC -O2 -o $@ $<

tests/fuzz/replay-%: tests/fuzz/replay.c tests/fuzz/fuzz-%.c $(CORE_LIB) \
	  tests/fuzz/fuzz.h tests/unit/check.h $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(LDFLAGS_ALL) -o $@ \
	  tests/fuzz/replay.c tests/fuzz/fuzz-$*.c $(CORE_LIB) $(INIH_LIBS) -lm

# The fuzzers compile core/ themselves: libFuzzer needs its coverage
# instrumentation there, not only in the target.
tests/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(CORE_SRC) $(wildcard include/*.h core/*.h) \
	  tests/fuzz/fuzz.h tests/unit/check.h
	$(FUZZ_CC) $(CPPFLAGS_ALL) -std=gnu11 $(WARN) $(WARN_STRICT) $(WERROR) \
	  $(FUZZ_FLAGS) -o $@ $< $(CORE_SRC) $(INIH_LIBS) -lm

# Targets of plugin/: every plugin file but plugin.c (nbdkit's edge; the
# target stands in for the three nbdkit functions the rest calls).
FUZZ_PLUGIN := tests/fuzz/fuzz-control
FUZZ_PLUGIN_SRC := $(filter-out plugin/plugin.c,$(PLUGIN_SRC))
FUZZ_PLUGIN_LIBS := $(URING_LIBS) -lev $(INIH_LIBS) $(RBD_LIBS) $(RADOS_LIBS) -lpthread -lm
$(FUZZ_PLUGIN:tests/fuzz/fuzz-%=tests/fuzz/replay-%): tests/fuzz/replay-%: \
	  tests/fuzz/replay.c tests/fuzz/fuzz-%.c $(FUZZ_PLUGIN_SRC:.c=.o) \
	  $(CORE_LIB) tests/fuzz/fuzz.h tests/unit/check.h $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) -iquote plugin $(CFLAGS_STRICT) $(LDFLAGS_ALL) \
	  -o $@ tests/fuzz/replay.c tests/fuzz/fuzz-$*.c \
	  $(FUZZ_PLUGIN_SRC:.c=.o) $(CORE_LIB) $(FUZZ_PLUGIN_LIBS)
$(FUZZ_PLUGIN): tests/fuzz/fuzz-%: tests/fuzz/fuzz-%.c $(FUZZ_PLUGIN_SRC) \
	  $(CORE_SRC) $(wildcard include/*.h plugin/*.h) tests/fuzz/fuzz.h \
	  tests/unit/check.h
	$(FUZZ_CC) $(CPPFLAGS_ALL) -iquote plugin $(NBDKIT_CFLAGS) -std=gnu11 \
	  $(WARN) $(WERROR) $(FUZZ_FLAGS) -o $@ $< $(FUZZ_PLUGIN_SRC) \
	  $(CORE_SRC) $(FUZZ_PLUGIN_LIBS)

bench/%: bench/%.c $(CORE_LIB) $(FLAGS_STAMP)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_STRICT) $(DEPFLAGS) $(LDFLAGS_ALL) -o $@ $< \
	  $(CORE_LIB) $(INIH_LIBS) -lm

# tools/cfqsim.d: left by the one-file cfqsim, it names tools/cfqsim.c.
-include $(filter-out tools/cfqsim.d,$(wildcard core/*.d plugin/*.d tools/*.d \
	tests/unit/*.d tests/nbd/*.d tests/sim/*.d bench/*.d))

# Debian packages: build, run, test and benchmark.
DEB_PKGS := build-essential pkg-config nbdkit nbdkit-plugin-dev libnbd-dev \
	libnbd-bin python3-libnbd liburing-dev libev-dev libinih-dev fio \
	qemu-utils fsmark valgrind e2fsprogs util-linux fuse3 procps \
	qemu-system-common perl shellcheck pyflakes3 clang libclang-rt-dev gnuplot-nox time \
	librbd-dev librados-dev ceph-mon ceph-mgr ceph-osd ceph-common rbd-nbd \
	qemu-block-extra uuid-runtime
deps:
	@if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PKGS); \
	else \
	  echo "run as root: apt-get update && apt-get install -y $(DEB_PKGS)"; \
	fi

# Under sanitizers everything runs slower: each test gets three times its
# limit.
check: all
	@CFQ_TIMEOUT_SCALE=$(if $(SANITIZE),3,1) tests/run.sh

# The threaded pieces of the plugin under ThreadSanitizer: the engine with
# many workers on the null backend, the range lock, the hold.  Rebuilds
# everything with SANITIZE=thread (the next plain make rebuilds it back);
# tests/run.sh fails a test that leaves a report.
TSAN_TESTS := tests/unit/test-engine tests/unit/test-rangelock \
	tests/unit/test-hold
check-tsan:
	$(MAKE) SANITIZE=thread $(TSAN_TESTS)
	@CFQ_TIMEOUT_SCALE=3 tests/run.sh $(TSAN_TESTS)

# Every shell script, at warning level (.shellcheckrc lets it follow the
# scripts' ". functions.sh"); and no variables made by name (printf -v
# "${NAME}_..."), which shellcheck cannot follow: per-server values live in
# arrays keyed by name (NBDKIT_SOCK[NAME] ...).  And core/'s files, and
# plugin/'s, call one way only: tools/filegraph fails on a cycle between
# them, from the symbols of their objects (so lint builds them first).
SHELL_SCRIPTS := $(wildcard tests/*.sh tests/*/*.sh bench/*.sh) \
	tests/sanitizer/nbdkit .ci/run tools/lint-words tools/lint-size
# Every Python program and module: the *.py files, and the programs
# without the suffix (a python3 #! line).  pyflakes reads them without
# importing them, so no bytecode is written.
PY_FILES := $(wildcard tools/*.py tools/*/*.py bench/*.py tests/*.py tests/*/*.py) \
	$(shell grep -lsE '^\#!.*python' tools/* bench/* tests/* 2>/dev/null | grep -v '\.py$$')
# tools/lint-words: no file speaks of how the tree was made (its header
# lists the words).
lint: $(CORE_OBJ) $(PLUGIN_OBJ)
	shellcheck -S warning $(SHELL_SCRIPTS)
	pyflakes3 $(PY_FILES)
	tools/lint-words
	tools/lint-size
	tools/filegraph --check core
	tools/filegraph --check plugin
	@if grep -n 'printf -v "\$$' $(SHELL_SCRIPTS); then \
	  echo "lint: a variable made by name (above): use an array"; exit 1; fi

# Each libFuzzer target for FUZZ_SECONDS, from its committed corpus; new
# inputs go to a scratch directory, crashes to tests/logs/fuzz/.
fuzz: $(FUZZ_BIN)
	@tests/fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_NAMES)

# The hostile-tenant tests that take minutes (tests/stress/): a command
# flood, 1,000 connections, kill -9 durability, disconnect churn.  Their
# length: CFQ_STRESS_SECONDS, CFQ_STRESS_ROUNDS (see each test); .ci/run
# runs a bounded form.  Timing-sensitive: run them on a quiet machine.
check-stress: all
	@tests/run.sh tests/stress/test-*.sh

# backend=rbd in front of a real cluster: tests/ceph/run.sh starts one
# single-node cluster for the whole suite (about 15 s) and stops it after;
# skips where it cannot run one.  CFQ_CEPH_CONF=FILE uses a running one.
check-ceph: all
	@tests/ceph/run.sh


# The real kernel NBD client runs in a software-emulated VM: its packages
# are big, so they are only installed for this target.  INITRD=No: the VM
# boots with its own tiny initramfs, Debian's would only cost a minute;
# no recommends: qemu-system-gui alone would pull in GTK.
KERNEL_PKGS := linux-image-amd64 qemu-system-x86 nbd-client busybox-static cpio kmod
deps-kernel:
	@if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && \
	  INITRD=No DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
	    --no-install-recommends $(KERNEL_PKGS); \
	else \
	  echo "run as root: apt-get install -y $(KERNEL_PKGS)"; \
	fi

check-kernel: all
	@tests/kernel/run.sh

demo:
	@bench/demo.sh

bench: all
	@bench/corebench
	@echo
	@bench/run.sh

# The fairness lab: make lab SCENARIO=bench/scenarios/live-weight.conf
# (LAB_ARGS="--solo --rounds 3" for more).
lab: all
	@test -n "$(SCENARIO)" || { echo "make lab SCENARIO=FILE (see bench/scenarios/)"; exit 2; }
	@tools/cfqlab $(LAB_ARGS) $(SCENARIO)

# The fairness matrix (man cfqlab): pairs of unlike tenants on the device
# models and the real disk, about 40 minutes; MATRIX_ARGS="--devices ssd
# --rounds 1" for a short one.
lab-matrix: all
	@tools/cfqlab --matrix $(MATRIX_ARGS)

# The seeds' experiments over NBD, fifo against cfq (bench/seeds.py).
bench-seeds: all
	@/usr/bin/python3 bench/seeds.py

# backend=rbd against its peers on a single-node Ceph cluster of its own
# (bench/rbd.py; root, the Ceph packages and qemu-storage-daemon).
bench-rbd: all
	@/usr/bin/python3 bench/rbd.py

# The plugin and the manual pages.  The tools and the lab (tools/cfqlab,
# its modules in tools/cfqlab_lib/) run from the built tree.
install: $(PLUGIN) $(MAN) $(TOOL_MAN)
	install -d $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/nbdkit-cfq-plugin.so
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MAN) $(TOOL_MAN) $(DESTDIR)$(MANDIR)/man1/

clean:
	rm -f $(CORE_OBJ) $(CORE_LIB) $(PLUGIN_OBJ) $(PLUGIN) $(TOOLS) $(MAN) $(TOOL_MAN) \
	  $(CFQSIM_OBJ) $(CFQSIM_BROKEN) tests/sim/*.o \
	  $(UNIT_BIN) $(NBDP_BIN) $(FUZZ_REPLAY) $(FUZZ_BIN) $(BENCH_BIN) $(SAN_SHIM) \
	  $(FLAGS_STAMP) core/*.d plugin/*.d tools/*.d tests/unit/*.d \
	  tests/nbd/*.d tests/sim/*.d bench/*.d
	rm -rf tests/logs tools/cfqlab_lib/__pycache__ bench/__pycache__
