# SPDX-License-Identifier: GPL-2.0
# perf tools: perf data convert --to-trace-dat (issue 6).
#
#   make tracedat-unit   the writer alone (no perf, no root): every byte order,
#                        long size, version and compression, read back with
#                        trace-cmd report (rig/tracedat/writer-test.{c,sh})
#   make tracedat-test   the trace.dat shell test with build/perf/perf
#                        (trace-cmd report vs perf script, v6/v7, compression,
#                        pipe, -z input, perf:* events, bad input)
#   make tracedat-ks     open a converted file in KernelShark under xvfb-run,
#                        screenshot to out/tracedat/kernelshark.png
#   make bench           MB/s, peak RSS and peak RssAnon of --to-trace-dat vs
#                        --to-json, perf report --stats and perf script -F
#                        time, plain and -z inputs, median of 3 runs
#
# TRACEDAT_PERF=<perf binary> overrides build/perf/perf.

TRACEDAT_PERF  ?= $(CURDIR)/build/perf/perf
TRACEDAT_TESTS := $(CURDIR)/tools/perf/tests/shell/test_perf_data_converter_trace_dat.sh

PERF_TESTS += $(TRACEDAT_TESTS)
EXTRA_HELP += "  make tracedat-unit        trace.dat writer vs trace-cmd report (le/be, long 4/8, v6/v7)" \
	      "  make tracedat-test        perf data convert --to-trace-dat vs trace-cmd report" \
	      "  make tracedat-ks          KernelShark opens a converted trace.dat (xvfb)" \
	      "  make bench                --to-trace-dat throughput/RSS/RssAnon vs --to-json, perf report --stats"

.PHONY: tracedat-unit tracedat-test tracedat-ks bench

CHECK_STAGES += tracedat-unit tracedat-test tracedat-ks

tracedat-unit:
	rig/tracedat/writer-test.sh

tracedat-test:
	@test -x $(TRACEDAT_PERF) || $(MAKE) --no-print-directory perf
	rig/perf/run-tests.sh $(TRACEDAT_PERF) $(TRACEDAT_TESTS)

tracedat-ks:
	@test -x $(TRACEDAT_PERF) || $(MAKE) --no-print-directory perf
	rig/tracedat/kernelshark.sh $(TRACEDAT_PERF) $(CURDIR)/out/tracedat

bench:
	rig/tracedat/bench.sh $(TRACEDAT_PERF) $(CURDIR)/out/tracedat
