# SPDX-License-Identifier: GPL-2.0
# perf tools: fuzz perf's perf.data reader and the trace.dat converter (issue 16).
#
#   make fuzz [FUZZ_SECONDS=3600]   build/perf-fuzz/perf (series tree, AFL++
#                                   instrumentation, ASan/UBSan), seeds recorded
#                                   now, then one afl-fuzz per target (perf
#                                   report -D, perf data convert --to-trace-dat)
#                                   for FUZZ_SECONDS on both cores; fails on any
#                                   crash or hang, inputs in out/fuzz/findings/
#
# Not a check stage: it holds the CPU lock for FUZZ_SECONDS.

FUZZ_SECONDS ?= 3600

EXTRA_HELP += '  make fuzz [FUZZ_SECONDS=3600]  AFL++ over perf report -D and --to-trace-dat, ASan/UBSan perf (not in check)'

.PHONY: fuzz

fuzz:
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash rig/fuzz/run.sh
