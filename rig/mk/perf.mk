# SPDX-License-Identifier: GPL-2.0
# perf tools: build perf from the rig's tree and run the perf -z shell tests.
#
#   make perf [BASE=1]       build/perf/perf (series) or build/perf-base/perf (base)
#   make perf-test [BASE=1]  run the issue-5 perf shell tests with that binary
#   make perf-ab             assert: new tests fail on base, pass on the series
#   make perf-suite          perf's whole `perf test`, base vs series: no test
#                            that passes with the base may fail with the series
#                            [PERF_SUITE_RUNS=N: the series suite N times; the
#                            project's own tests must be Ok in every run]
#   make bench-record        perf record -z throughput, base vs series perf
#
# `make perf` switches build/linux itself (rig/tree.sh) and builds while holding
# the tree lock, so a concurrent `make tree` cannot change the sources mid-build.
# PERF_SRC=<kernel tree> skips the tree switch and builds from that tree.

PERF_BASE   := $(if $(filter 1 y yes,$(BASE)),1,0)
PERF_ODIR   := $(CURDIR)/build/$(if $(filter 1,$(PERF_BASE)),perf-base,perf)
PERF_BIN    := $(PERF_ODIR)/perf
# The issue-5 tests; other fragments may append their own tests to PERF_TESTS.
PERF_Z_TESTS := $(sort $(wildcard $(CURDIR)/tools/perf/tests/shell/record+zstd_*.sh))
PERF_TESTS  += $(PERF_Z_TESTS)

EXTRA_HELP += '  make perf [BASE=1]         perf from build/linux into build/perf (BASE=1: build/perf-base)' \
	'  make perf-test [BASE=1]    perf shell tests (PERF_TESTS) with that perf, on the host' \
	'  make perf-ab               perf -z, printk-format, push and LBR-stitch tests fail on the base perf, pass with the series; then make libperf-ab' \
	'  make libperf-ab            libperf tests: perf_mmap__read_done() loses no event with the series, does with the base libperf' \
	'  make perf-suite            whole perf test, base vs series perf: no new failure (slow, not in check)' \
	'  make perf-flaky [FLAKY_RUNS=300]  task-exit and sw-clock alone, base vs series perf: failure counts (slow, not in check)' \
	'  make bench-record          perf record -z cost, base vs series: replayed compression (instructions, goal) and live runs'

.PHONY: perf perf-test perf-ab perf-suite perf-flaky bench-record

perf-flaky:
	@bash rig/perf/flaky.sh

perf:
	@BASE=$(PERF_BASE) PERF_SHARE_ODIR=$(CURDIR)/build/perf \
		bash rig/perf/build.sh $(PERF_ODIR) $(PERF_SRC)

perf-test:
	rig/perf/run-tests.sh $(PERF_BIN) $(PERF_TESTS)

# The A/B tests of the perf tools fixes other than the converter's
PERF_PRINTK_TEST := $(CURDIR)/tools/perf/tests/shell/report_printk_format.sh
# record_push_once.sh stops perf record under gdb (rig/deps.sh installs it)
PERF_PUSH_TEST := $(CURDIR)/tools/perf/tests/shell/record_push_once.sh
# report_lbr_stitch.sh: --stitch-lbr of a crafted recording, under valgrind
PERF_LBR_TEST := $(CURDIR)/tools/perf/tests/shell/report_lbr_stitch.sh
PERF_AB_TESTS := $(PERF_Z_TESTS) $(PERF_PRINTK_TEST) $(PERF_PUSH_TEST) $(PERF_LBR_TEST)
PERF_TESTS  += $(PERF_PRINTK_TEST) $(PERF_PUSH_TEST) $(PERF_LBR_TEST)

perf-ab:
	rig/perf/ab.sh $(PERF_AB_TESTS)
	@bash rig/perf/libperf-ab.sh

# libperf's tests: the series' test_mmap_read_done fails with the base
# libperf.so and passes with the series' (part of perf-ab)
.PHONY: libperf-ab
libperf-ab:
	@bash rig/perf/libperf-ab.sh

# Not a check stage: two full perf test runs under the CPU lock.
perf-suite:
	@bash rig/perf/suite.sh

# A measurement, not a check stage.
bench-record:
	@bash rig/perf/bench-record.sh

# perf-ab: every record+zstd_*.sh test, report_printk_format.sh,
# record_push_once.sh and report_lbr_stitch.sh fail on the base perf and
# pass with the series.
CHECK_STAGES += perf-ab
# fuzz.mk: the fixed fuzz findings, with the series perf perf-ab leaves built
CHECK_STAGES += fuzz-regress
