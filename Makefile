# Makefile for madlib_dl: the PostgreSQL extension (PGXS), the engine's
# unit tests (cmocka) and the regression tests (pg_regress).
#
#   make                 build the extension
#   make install         install it into the server found by pg_config
#   make unit            build and run the engine's cmocka tests
#   make unit SANITIZE=1 the same under AddressSanitizer + UBSan
#   make installcheck    pg_regress against a running server
#   scripts/test.sh      everything, with its own temporary server

EXTENSION = madlib_dl
EXTVERSION = 0.2.0
MODULE_big = madlib_dl
PGFILEDESC = "madlib_dl - deep learning in the database"

# The ONNX protobuf code (src/engine/onnx.pb-c.[ch]) is generated at build
# time by protoc-c from the onnx.proto that Debian's libonnx-dev ships
# (docs/interchange.md); it is not in the repository.
ONNX_PROTO ?= /usr/include/onnx/onnx.proto
ONNX_PB = src/engine/onnx.pb-c.c
ENGINE_SRCS = $(sort $(wildcard src/engine/*.c) $(ONNX_PB))
PG_SRCS = $(sort $(wildcard src/pg/*.c src/pg/*/*.c))
OBJS = $(ENGINE_SRCS:.c=.o) $(PG_SRCS:.c=.o)

# The install script is assembled from the pieces in src/sql/, one per
# topic, in this order (a piece comes after the pieces whose functions it
# calls: Greenplum checks that at CREATE FUNCTION time).
SQL_TOPICS = header util architecture preprocess transform fit evaluate_predict \
	interchange serving model_selection custom_functions fit_multiple automl \
	progress step limits plproxy gpu greenplum help
# help is generated: build/help.sql, every help function (fn(), fn('usage'))
# from the text in src/help/help.json (scripts/make-help-sql.py).
SQL_PIECES = $(foreach t,$(SQL_TOPICS),$(if $(filter help,$(t)),build/help.sql,src/sql/$(t).sql))
DATA_built = $(EXTENSION)--$(EXTVERSION).sql
# Earlier releases' install scripts and the upgrade scripts between
# versions, kept in src/sql/releases/ (docs/releasing.md); sql/ and
# expected/ hold pg_regress's tests only.
DATA = $(sort $(wildcard src/sql/releases/$(EXTENSION)--*.sql))
EXTRA_CLEAN = $(EXTENSION)--$(EXTVERSION).sql build results regression.diffs regression.out tmp_check

# pg_regress reads sql/*.sql and expected/*.out; tests are listed
# explicitly so sql/ can also hold nothing else by accident.
REGRESS = $(sort $(notdir $(basename $(wildcard sql/[0-9][0-9]_*.sql))))
REGRESS_OPTS = --inputdir=. --load-extension=$(EXTENSION)

# TAP tests (test/t/*.pl) run in make installcheck and make
# prove_installcheck once there are any; they need a non-root user
# (initdb refuses root; scripts/test.sh arranges one).
ifneq ($(wildcard test/t/*.pl),)
TAP_TESTS = 1
PROVE_TESTS = $(sort $(wildcard test/t/*.pl))
endif

PG_CPPFLAGS = -Iinclude -Isrc/engine -Isrc/pg -Isrc/pg/api -Isrc/pg/runtime -Isrc/pg/transport
PG_CFLAGS = -std=gnu11 -fvect-cost-model=dynamic -fno-math-errno -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers
SHLIB_LINK = -lopenblas -ljson-c -lprotobuf-c -lm
# .keras and .h5 files (load_keras_file): libzip and libhdf5, Debian's
# libzip-dev and libhdf5-dev (serial; pkg-config finds its include
# directory, /usr/include/hdf5/serial).
KERAS_FILE_CFLAGS := $(shell pkg-config --cflags hdf5 libzip 2>/dev/null || echo -I/usr/include/hdf5/serial)
KERAS_FILE_LIBS := $(shell pkg-config --libs hdf5 libzip 2>/dev/null || echo -L/usr/lib/x86_64-linux-gnu/hdf5/serial -lhdf5 -lzip)
PG_CPPFLAGS += $(KERAS_FILE_CFLAGS)
SHLIB_LINK += $(KERAS_FILE_LIBS)

# Rebuild objects when headers change.  PGXS's Makefile.global assigns
# autodepend from configure (empty unless --enable-depend), after this
# file's own assignments: only override keeps it.  The .Po files go to
# .deps/ under the top directory (no two sources share a base name).
override autodepend = yes

# Skip LLVM bitcode: the JIT gains nothing for these functions.
override with_llvm = no

PG_CONFIG ?= pg_config

# Greenplum / Cloudberry: detected by pg_config (docs/greenplum.md).  The
# same sources build there; the ParallelContext segments are compiled out.
GP_VERSION := $(shell $(PG_CONFIG) --gp_version 2>/dev/null)
ifeq ($(strip $(GP_VERSION)),)
GP_VERSION := $(shell grep -s 'define GP_VERSION_NUM' $(shell $(PG_CONFIG) --includedir-server)/pg_config.h)
endif
ifneq ($(strip $(GP_VERSION)),)
$(info madlib_dl: building for the Greenplum family ($(GP_VERSION)))
# The other tests' expected output is PostgreSQL's; 97_greenplum_cluster
# checks the cluster (docs/greenplum.md, "Checklist").
REGRESS = 00_create_extension 97_greenplum_cluster
endif
# oneDNN for the convolutions (docs/performance.md): built in when
# Debian's libdnnl-dev is installed (scripts/install-deps.sh installs it);
# make WITH_ONEDNN=0 builds without it (im2col + sgemm only).
WITH_ONEDNN ?= $(if $(wildcard /usr/include/oneapi/dnnl/dnnl.h),1,0)
ifeq ($(WITH_ONEDNN),1)
PG_CPPFLAGS += -DDL_HAVE_DNNL
SHLIB_LINK += -ldnnl -lgomp
endif

PGXS := $(shell $(PG_CONFIG) --pgxs)
include $(PGXS)

$(EXTENSION)--$(EXTVERSION).sql: $(SQL_PIECES)
	cat $^ > $@

build/help.sql: src/help/help.json scripts/make-help-sql.py
	@mkdir -p build
	python3 scripts/make-help-sql.py $< > $@.tmp && mv $@.tmp $@

# The pieces in order, for scripts (check-pg-compat.sh).
print-sql-pieces: build/help.sql
	@echo $(SQL_PIECES)
.PHONY: print-sql-pieces

# protoc-c writes onnx.pb-c.c and onnx.pb-c.h next to the copy of the
# schema; the engine files that use it depend on the header.
src/engine/onnx.pb-c.h: $(ONNX_PROTO)
	@test -f $(ONNX_PROTO) || { echo "onnx.proto not found at $(ONNX_PROTO): install libonnx-dev (scripts/install-deps.sh)"; exit 1; }
	cp $(ONNX_PROTO) build/onnx.proto 2>/dev/null || { mkdir -p build && cp $(ONNX_PROTO) build/onnx.proto; }
	protoc-c --proto_path=build --c_out=build build/onnx.proto
	sed '/^[[:space:]]*assert(.*);[[:space:]]*$$/d' build/onnx.pb-c.c > src/engine/onnx.pb-c.c
	@if grep -n -E '\<(assert|abort|exit|_exit)[[:space:]]*\(' src/engine/onnx.pb-c.c; then \
	  echo "src/engine/onnx.pb-c.c: protoc-c wrote a call above that can stop the server"; rm -f src/engine/onnx.pb-c.c; exit 1; fi
	cp build/onnx.pb-c.h src/engine/onnx.pb-c.h
src/engine/onnx.pb-c.c: src/engine/onnx.pb-c.h
	@test -f $@
src/engine/onnx_export.o src/engine/onnx_import.o src/engine/onnx_import_core.o src/engine/onnx_import_fold.o src/engine/onnx_import_ops.o \
	src/engine/onnx_import_rnn.o src/engine/onnx_pb.o: src/engine/onnx.pb-c.h
EXTRA_CLEAN += src/engine/onnx.pb-c.c src/engine/onnx.pb-c.h
# protoc-c's generated code checks its own invariants with assert() (a
# message's descriptor in each pack/unpack helper), which would abort the
# backend: the rule above deletes those lines from the generated source,
# in every build (server, unit, fuzz, bench), and fails if any call that
# stops a process is left; -DNDEBUG in the server's object as well, for
# protobuf-c's own headers.  The converters check every input themselves.
src/engine/onnx.pb-c.o: CPPFLAGS += -DNDEBUG

# ---------------------------------------------------------------------
# Engine unit tests: plain C, no server.
# ---------------------------------------------------------------------
UNIT_CC ?= cc
UNIT_CFLAGS = -std=gnu11 -O2 -fno-math-errno -g -Wall -Wextra -Wno-unused-parameter -Wno-missing-field-initializers \
	-Iinclude -Isrc/engine -Itest/unit $(KERAS_FILE_CFLAGS)
UNIT_LIBS = -lcmocka -lopenblas -ljson-c -lprotobuf-c -lm $(KERAS_FILE_LIBS)
ifeq ($(WITH_ONEDNN),1)
UNIT_CFLAGS += -DDL_HAVE_DNNL
UNIT_LIBS += -ldnnl -lgomp
endif
ifeq ($(SANITIZE),1)
UNIT_BUILD = build/asan
UNIT_CC = clang
UNIT_CFLAGS += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
else
UNIT_BUILD = build/unit
UNIT_CFLAGS += -fvect-cost-model=dynamic
endif

UNIT_TEST_SRCS = $(sort $(wildcard test/unit/test_*.c))
UNIT_SUPPORT_SRCS = $(filter-out $(UNIT_TEST_SRCS),$(wildcard test/unit/*.c))
UNIT_ENGINE_OBJS = $(patsubst src/engine/%.c,$(UNIT_BUILD)/engine/%.o,$(ENGINE_SRCS))
UNIT_SUPPORT_OBJS = $(patsubst test/unit/%.c,$(UNIT_BUILD)/support/%.o,$(UNIT_SUPPORT_SRCS))
UNIT_BINS = $(patsubst test/unit/%.c,$(UNIT_BUILD)/%,$(UNIT_TEST_SRCS))

$(UNIT_BUILD)/engine/%.o: src/engine/%.c $(wildcard include/madlib_dl/*.h src/engine/*.h) src/engine/onnx.pb-c.h
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -c -o $@ $<

$(UNIT_BUILD)/support/%.o: test/unit/%.c $(wildcard test/unit/*.h include/madlib_dl/*.h src/engine/*.h)
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -c -o $@ $<

$(UNIT_BUILD)/test_%: test/unit/test_%.c $(UNIT_ENGINE_OBJS) $(UNIT_SUPPORT_OBJS)
	@mkdir -p $(dir $@)
	$(UNIT_CC) $(UNIT_CFLAGS) -o $@ $< $(UNIT_ENGINE_OBJS) $(UNIT_SUPPORT_OBJS) $(UNIT_LIBS)

unit-build: $(UNIT_BINS)

unit: unit-build
	@status=0; for t in $(UNIT_BINS); do \
		echo "== $$t"; \
		OPENBLAS_NUM_THREADS=1 CMOCKA_TEST_ABORT=0 TEST_FIXTURES=test/unit/fixtures $$t || status=1; \
	done; exit $$status

.PHONY: unit unit-build

# ---------------------------------------------------------------------
# TAP tests alone, against the installed extension (PGXS has no target
# for this; installcheck runs them after pg_regress).  Not as root.
# ---------------------------------------------------------------------
prove_installcheck:
ifdef TAP_TESTS
	$(prove_installcheck)
else
	@echo "no TAP tests in test/t"
endif

.PHONY: prove_installcheck
