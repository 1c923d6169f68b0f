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
#   make fuzz-triage                rerun and judge the crashes and hangs of
#                                   the last make fuzz (out/fuzz/afl) again,
#                                   e.g. after rig/fuzz/known-findings.txt changed
#   make fuzz-regress               every input make fuzz found that the series
#                                   fixed (rig/fuzz/regress/), through both
#                                   targets of build/perf/perf under valgrind
#   make libtraceevent-ab           the four libtraceevent bugs make fuzz found:
#                                   upstream 1.8.4, the orig tarball of Debian's
#                                   source package (apt, pinned) built with ASan
#                                   as shipped (each crafted format crashes it)
#                                   and with rig/fuzz/libtraceevent/*.patch (none
#                                   does); the patches are for linux-trace-devel
#
# fuzz is not a check stage: it holds the CPU lock for FUZZ_SECONDS.
# fuzz-regress is (about 30 s); report_printk_format.sh in make perf-ab is
# the A/B test of the fix those inputs found.

FUZZ_SECONDS ?= 3600

EXTRA_HELP += '  make fuzz [FUZZ_SECONDS=3600]  AFL++ over perf report -D and --to-trace-dat, ASan/UBSan perf (not in check)'

EXTRA_HELP += '  make fuzz-regress          the inputs make fuzz found, fixed since, under valgrind (in check)'

EXTRA_HELP += '  make fuzz-triage           the last make fuzz run'"'"'s findings rerun and judged again (known-findings.txt)'

EXTRA_HELP += '  make libtraceevent-ab      libtraceevent format-parser fixes: shipped source crashes, patched does not'

.PHONY: fuzz fuzz-regress fuzz-triage libtraceevent-ab

libtraceevent-ab:
	@bash rig/fuzz/libtraceevent/ab.sh

fuzz:
	@FUZZ_SECONDS=$(FUZZ_SECONDS) bash rig/fuzz/run.sh

fuzz-regress:
	@test -x build/perf/perf || $(MAKE) --no-print-directory perf
	@bash rig/fuzz/regress.sh $(CURDIR)/build/perf/perf

# The check stage is added in perf.mk, after perf-ab has built build/perf/perf.

fuzz-triage:
	@bash rig/fuzz/afl.sh $(CURDIR)/build/perf-fuzz/perf - $(CURDIR)/out/fuzz triage
