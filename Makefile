# kp - small, fast C filters for kernel profiling.
#
#   make              build every filter into build/bin/
#   make check        build, check the threads under TSan (test-tsan),
#                     run all tests, then again under ASan+UBSan
#   make test         run the tests once (no sanitizer pass)
#   make asan         the sanitizer build, in build-asan/bin/
#   make test-tsan    perf2kp's two threads and their shared tables
#                     under ThreadSanitizer (tests/tsan.sh)
#   make fuzz         libFuzzer targets (clang), each run FUZZ_SECONDS
#   make bench        the benchmarks in bench/ (figures on stdout)
#   make deps         install the Debian packages listed in deps/*.txt
#   make deps-run     only those building and running kp needs (deps/run.txt)
#   make install      PREFIX=/usr/local DESTDIR= : programs and man pages
#
# Every filters/NAME.c is a program; common/*.c is the shared library;
# tests/unit/*.c are unit tests; tests/fuzz/*.c are fuzz targets.
# V=1 shows the commands; EXTRA_CFLAGS and EXTRA_LDFLAGS are added.

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DESTDIR ?=
FUZZ_SECONDS ?= 60
B ?= build

CC ?= cc
ifeq ($(CC),)
CC := cc
endif
PKGS := libdw libelf zlib libzstd
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null || echo -ldw -lelf -lz -lzstd)

WARN := -Wall -Wextra -Werror -Wshadow -Wformat=2 -Wstrict-prototypes \
	-Wold-style-definition -Wno-format-nonliteral
OPT ?= -O2 -g
CFLAGS_ALL = -std=gnu11 -D_GNU_SOURCE $(OPT) $(WARN) -Icommon $(PKG_CFLAGS) \
	$(SAN) $(EXTRA_CFLAGS)
LDFLAGS_ALL = $(SAN) $(EXTRA_LDFLAGS)
LDLIBS_ALL = $(PKG_LIBS) -liberty -lm -lpthread

ifeq ($(V),1)
Q :=
else
Q := @
endif

PROGS := $(sort $(patsubst filters/%.c,%,$(wildcard filters/*.c)))
COMMON_SRC := $(sort $(wildcard common/*.c))
COMMON_HDR := $(wildcard common/*.h)
UNIT_SRC := $(sort $(wildcard tests/unit/*.c))
FUZZ_SRC := $(sort $(filter-out tests/fuzz/fuzz-main.c,$(wildcard tests/fuzz/*.c)))
MANPAGES := $(sort $(wildcard man/*.[1-8]))

BIN := $(B)/bin
LIB := $(B)/libkp.a
COMMON_OBJ := $(patsubst common/%.c,$(B)/common/%.o,$(COMMON_SRC))
GEN_OBJ := $(B)/gen/flame_js.o
PROG_BIN := $(addprefix $(BIN)/,$(PROGS))
UNIT_BIN := $(patsubst tests/unit/%.c,$(B)/tests/%,$(UNIT_SRC))
REPLAY_BIN := $(patsubst tests/fuzz/%.c,$(B)/fuzz-replay/%,$(FUZZ_SRC))

.DELETE_ON_ERROR:
.PHONY: all check test test-asan asan test-tsan tsan fuzz fuzz-build bench deps \
	deps-run install \
	uninstall clean format

all: $(PROG_BIN) $(UNIT_BIN) $(REPLAY_BIN)

$(B)/common/%.o: common/%.c $(COMMON_HDR)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(LIB): $(COMMON_OBJ) $(GEN_OBJ)
	$(Q)rm -f $@ && ar rcs $@ $^

# common/flame.js, the script of kp-flame's SVG, as a C array for the
# library (od is POSIX; the file's first comment, for its readers, is
# left out of the SVG)
$(B)/gen/flame_js.c: common/flame.js
	@mkdir -p $(@D)
	@$(if $(Q),echo "  GEN     $@")
	$(Q){ echo '/* generated from common/flame.js by the Makefile */'; \
	  echo '#include <stddef.h>'; \
	  echo 'extern const unsigned char kp_flame_js[];'; \
	  echo 'extern const size_t kp_flame_js_len;'; \
	  echo 'const unsigned char kp_flame_js[] = {'; \
	  sed '1,/\*\//d' $< | od -An -v -tx1 | \
	  sed 's/ \([0-9a-f][0-9a-f]\)/0x\1,/g'; \
	  echo '};'; \
	  echo 'const size_t kp_flame_js_len = sizeof(kp_flame_js);'; } > $@
$(B)/gen/%.o: $(B)/gen/%.c
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(B)/filters/%.o: filters/%.c $(COMMON_HDR)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) -c -o $@ $<

$(PROG_BIN): $(BIN)/%: $(B)/filters/%.o $(LIB)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  LD      $@")
	$(Q)$(CC) $(LDFLAGS_ALL) -o $@ $< $(LIB) $(LDLIBS_ALL)

$(UNIT_BIN): $(B)/tests/%: tests/unit/%.c $(LIB) $(COMMON_HDR)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< $(LIB) $(LDLIBS_ALL)

# each fuzz target also builds as a plain program that replays saved inputs
$(REPLAY_BIN): $(B)/fuzz-replay/%: tests/fuzz/%.c tests/fuzz/fuzz-main.c $(LIB) $(COMMON_HDR)
	@mkdir -p $(@D)
	@$(if $(Q),echo "  CC      $<")
	$(Q)$(CC) $(CFLAGS_ALL) $(LDFLAGS_ALL) -o $@ $< tests/fuzz/fuzz-main.c $(LIB) $(LDLIBS_ALL)

# the tests: tests/run.sh ends with "N passed, N failed"
test: all
	$(Q)KP_BUILD=$(B) bash tests/run.sh

SAN_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all \
	-fno-omit-frame-pointer
asan:
	$(Q)$(MAKE) --no-print-directory B=build-asan OPT="-O1 -g" \
		SAN="$(SAN_FLAGS)" all

test-asan: asan
	$(Q)ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
		UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
		KP_BUILD=build-asan KP_SANITIZED=1 bash tests/run.sh

# what runs on two threads (perf2kp, the tables it shares), built with
# -fsanitize=thread: a data race fails the run
tsan:
	$(Q)$(MAKE) --no-print-directory B=build-tsan OPT="-O1 -g" \
		SAN="-fsanitize=thread" build-tsan/bin/perf2kp \
		build-tsan/tests/test_idagg

test-tsan: all tsan
	$(Q)bash tests/tsan.sh build-tsan $(B)

# (the ASan pass last: its "N passed, N failed" ends the output)
check: all
	$(Q)$(MAKE) --no-print-directory test-tsan
	$(Q)KP_BUILD=$(B) bash tests/run.sh
	$(Q)$(MAKE) --no-print-directory test-asan

FUZZ_CC ?= clang
FUZZ_FLAGS := -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all -g -O1
# the library too stops at the first undefined behaviour: recoverable,
# UBSan printed it in the fuzz log and the run passed
fuzz-build:
	$(Q)$(MAKE) --no-print-directory B=build-fuzz CC=$(FUZZ_CC) OPT="-O1 -g" \
		SAN="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=all -DKP_FUZZ" \
		$(B:build=build-fuzz)/libkp.a
	@mkdir -p build-fuzz/fuzz
	$(Q)set -e; for f in $(FUZZ_SRC); do \
		n=$$(basename $$f .c); \
		$(FUZZ_CC) -std=gnu11 -D_GNU_SOURCE $(FUZZ_FLAGS) -Icommon $(PKG_CFLAGS) \
			-o build-fuzz/fuzz/$$n $$f build-fuzz/libkp.a $(LDLIBS_ALL); \
	done

fuzz: fuzz-build
	$(Q)bash tests/fuzz/run-fuzz.sh build-fuzz/fuzz $(FUZZ_SECONDS)

bench: all
	$(Q)KP_BUILD=$(B) bash bench/run.sh

deps:
	$(Q)bash .ci/deps.sh
# only what building and running kp needs (deps/run.txt): no test tools
deps-run:
	$(Q)bash .ci/deps.sh run

install: $(PROG_BIN)
	install -d $(DESTDIR)$(BINDIR)
	install -m 0755 $(PROG_BIN) $(DESTDIR)$(BINDIR)/
	set -e; for m in $(MANPAGES); do \
		s=$${m##*.}; install -d $(DESTDIR)$(MANDIR)/man$$s; \
		install -m 0644 $$m $(DESTDIR)$(MANDIR)/man$$s/; done

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGS))
	set -e; for m in $(MANPAGES); do \
		s=$${m##*.}; rm -f $(DESTDIR)$(MANDIR)/man$$s/$$(basename $$m); done

format:
	clang-format -i common/*.[ch] filters/*.c tests/unit/*.c tests/fuzz/*.c

clean:
	rm -rf build build-asan build-fuzz build-tsan
