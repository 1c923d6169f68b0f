# SPDX-License-Identifier: GPL-2.0
# perf tools support for the swaux software AUX PMU (issue 7).
#
#   make swaux-perf     perf_swaux.ko + build/perf/perf in the x86_64 VM: perf record
#                       -e swaux// (-a, -C 0, workload with forks, --per-thread, -S),
#                       perf report -D and perf script must say "swaux: verdict: ok"
#                       with records from every CPU; then swaux-mangle on its recording
#   make swaux-aio-ab   perf record -a -z --aio of swaux: unreadable with the series
#                       minus the --aio fix (build/perf-noaio), ok with the series
#   make swaux-mangle   host only: damaged copies of out/swaux-perf/sys-a.data must
#                       give the error verdict (unflagged gap, misplaced, invalid)
#
# SWAUX_PERF=<perf binary> overrides build/perf/perf. Needs make kernel ARCH=x86_64
# and make perf (the series with perf-tools-add-swaux-aux-pmu-support.patch).

SWAUX_PERF ?= $(CURDIR)/build/perf/perf
export SWAUX_PERF

EXTRA_HELP += '  make swaux-perf           perf record/report/script on the swaux AUX PMU in the x86_64 VM' \
	'  make swaux-aio-ab         perf record -z --aio of an AUX event: broken without the fix, ok with it' \
	'  make swaux-mangle         perf swaux decoder flags damaged AUX data (host, uses swaux-perf output)'

.PHONY: swaux-perf swaux-mangle swaux-aio-ab

swaux-perf:
	@bash rig/swaux/perf-vm.sh
	@bash rig/swaux/mangle-test.sh

swaux-mangle:
	@bash rig/swaux/mangle-test.sh

swaux-aio-ab:
	@bash rig/swaux/aio-ab.sh

# perf record -z --aio of an AUX event: the series minus the fix vs the series
CHECK_STAGES += swaux-aio-ab
