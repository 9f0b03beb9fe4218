# nbdkit-cfq: a CFQ-scheduled, io_uring-backed nbdkit plugin.
#
#   make            build the plugin, the tools and the tests
#   make deps       install the Debian packages we need (apt-get, as root)
#   make check      run the test suite; ends with "N passed, N failed, N skipped"
#   make demo       serve a demo image and show how to connect
#   make bench      run the benchmarks (not tests: numbers, not verdicts)
#   make bench-seeds  the seeds' experiments over NBD, fifo against cfq
#   make lab SCENARIO=FILE  the fairness lab on one scenario
#   make install    install the plugin into nbdkit's plugin directory
#
# CI builds with WERROR=-Werror.

CC      ?= cc
CFLAGS  ?= -O2 -g
WERROR  ?=
WARN    := -Wall -Wextra -Wshadow -Wno-unused-parameter
CPPFLAGS_ALL := -iquote include -D_GNU_SOURCE
CFLAGS_ALL   := -std=gnu11 -fPIC $(WARN) $(WERROR) $(CFLAGS)
DEPFLAGS = -MMD -MP

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
PLUGIN_LIBS := $(URING_LIBS) -lev $(INIH_LIBS) -lpthread -lm

# ---- tools/: cfqsim (core only), cfqctl ----------------------------------
TOOL_SRC := $(wildcard tools/*.c)
TOOLS    := $(TOOL_SRC:.c=)

# ---- tests ------------------------------------------------------------------
# tests/unit/test-*.c: unit tests of core/, linked with core only, and of
# the plugin pieces that need no nbdkit (PLUGIN_UNIT), linked with the
# plugin files they test.
# tests/nbd/*.c: libnbd client programs used by the shell tests.
UNIT_SRC := $(wildcard tests/unit/test-*.c)
UNIT_BIN := $(UNIT_SRC:.c=)
NBDP_SRC := $(wildcard tests/nbd/*.c)
NBDP_BIN := $(NBDP_SRC:.c=)

# ---- bench/: C benchmark programs (bench/*.c, core only) ---------------
BENCH_SRC := $(wildcard bench/*.c)
BENCH_BIN := $(BENCH_SRC:.c=)

# ---- the manual page -------------------------------------------------------
MAN     := plugin/nbdkit-cfq-plugin.1
MANDIR  ?= /usr/local/share/man

ALL := $(CORE_LIB) $(PLUGIN) $(TOOLS) $(UNIT_BIN) $(NBDP_BIN) $(BENCH_BIN) $(MAN)

.PHONY: all deps deps-kernel check check-kernel demo bench bench-seeds lab install clean
all: $(ALL)

core/%.o: core/%.c
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(DEPFLAGS) -c -o $@ $<

$(CORE_LIB): $(CORE_OBJ)
	rm -f $@
	ar rcs $@ $^

plugin/%.o: plugin/%.c
	$(CC) $(CPPFLAGS_ALL) $(NBDKIT_CFLAGS) $(CFLAGS_ALL) -fvisibility=hidden \
	  -DCFQ_LIBURING_VERSION='"$(URING_VERSION)"' $(DEPFLAGS) -c -o $@ $<

$(PLUGIN): $(PLUGIN_OBJ) $(CORE_LIB)
	$(CC) -shared -Wl,-z,nodelete -o $@ $(PLUGIN_OBJ) $(CORE_LIB) $(PLUGIN_LIBS)

$(MAN): plugin/nbdkit-cfq-plugin.pod
	pod2man --section=1 --center="nbdkit-cfq" --release="nbdkit-cfq" \
	  --name=nbdkit-cfq-plugin $< > $@.tmp && mv $@.tmp $@

tools/%: tools/%.c $(CORE_LIB)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(CORE_LIB) $(INIH_LIBS) -lm

tests/unit/%: tests/unit/%.c $(CORE_LIB)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(CORE_LIB) $(INIH_LIBS) -lm

PLUGIN_UNIT := tests/unit/test-engine tests/unit/test-hold tests/unit/test-rangelock
tests/unit/test-engine: plugin/engine.o plugin/hold.o plugin/backend-null.o
tests/unit/test-hold: plugin/hold.o
tests/unit/test-rangelock: plugin/rangelock.o
$(PLUGIN_UNIT): tests/unit/%: tests/unit/%.c $(CORE_LIB)
	$(CC) $(CPPFLAGS_ALL) -iquote plugin $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< \
	  $(filter plugin/%.o,$^) $(CORE_LIB) $(INIH_LIBS) -lev -lpthread -lm

tests/nbd/%: tests/nbd/%.c
	$(CC) $(CPPFLAGS_ALL) $(NBD_CFLAGS) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(NBD_LIBS) -lpthread

bench/%: bench/%.c $(CORE_LIB)
	$(CC) $(CPPFLAGS_ALL) $(CFLAGS_ALL) $(DEPFLAGS) -o $@ $< $(CORE_LIB) $(INIH_LIBS) -lm

-include $(wildcard core/*.d plugin/*.d tools/*.d tests/unit/*.d tests/nbd/*.d bench/*.d)

# Debian packages: build, run, test and benchmark.
DEB_PKGS := build-essential pkg-config nbdkit nbdkit-plugin-dev libnbd-dev \
	libnbd-bin python3-libnbd liburing-dev libev-dev libinih-dev fio \
	qemu-utils fsmark valgrind e2fsprogs util-linux fuse3 procps \
	qemu-system-common perl gnuplot-nox
deps:
	@if [ "$$(id -u)" = 0 ]; then \
	  apt-get update -qq && \
	  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $(DEB_PKGS); \
	else \
	  echo "run as root: apt-get update && apt-get install -y $(DEB_PKGS)"; \
	fi

check: all
	@tests/run.sh


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

# The seeds' experiments over NBD, fifo against cfq (bench/seeds.py).
bench-seeds: all
	@/usr/bin/python3 bench/seeds.py

install: $(PLUGIN) $(MAN)
	install -d $(DESTDIR)$(PLUGINDIR)
	install -m 0755 $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/nbdkit-cfq-plugin.so
	install -d $(DESTDIR)$(MANDIR)/man1
	install -m 0644 $(MAN) $(DESTDIR)$(MANDIR)/man1/nbdkit-cfq-plugin.1

clean:
	rm -f $(CORE_OBJ) $(CORE_LIB) $(PLUGIN_OBJ) $(PLUGIN) $(TOOLS) $(MAN) \
	  $(UNIT_BIN) $(NBDP_BIN) $(BENCH_BIN) \
	  core/*.d plugin/*.d tools/*.d tests/unit/*.d tests/nbd/*.d bench/*.d
	rm -rf tests/logs
