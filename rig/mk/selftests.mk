# SPDX-License-Identifier: GPL-2.0
# perf_events selftests against the perf_swaux software AUX PMU (issue 4).
#
#   make selftests ARCH=x86_64|arm64 [BASE=1] [RUNS=N]   build kernel, module, tests; run
#        them in the VM in kselftest's form (RUNS=N: aux_set_output N times on one boot,
#        a per-test count of failures in out/selftests-ARCH/repeat.txt)
#   make selftests-ab [AB_ARCHES="x86_64 arm64"] scenario fails on the base, all pass with the series
#   make kernel-ab       selftests-ab and make run ARCH=arm64 on both kernels (make check)

.PHONY: selftests selftests-ab kernel-ab

EXTRA_HELP += '  make selftests ARCH=... [BASE=1] [RUNS=N]  perf_events kselftests + perf_swaux.ko in the VM (out/selftests-ARCH); RUNS: aux_set_output N times' \
	'  make selftests-ab         SET_OUTPUT tests fail on the base, all pass with the series' \
	'  make kernel-ab            selftests-ab + make run ARCH=arm64: the bug on the base only'

selftests:
	@bash rig/selftests/run.sh $(ARCH)

selftests-ab:
	@AB_RUN=0 bash rig/selftests/ab.sh

kernel-ab:
	@AB_RUN=1 bash rig/selftests/ab.sh

# The kernel A/B: kselftests on both kernels and arches, make run ARCH=arm64 on both kernels
CHECK_STAGES += kernel-ab

EXTRA_HELP += '  make run-ab [RUNS=10]      make run RUNS=N on both kernels and arches: every base run misplaces data, no series run does'
.PHONY: run-ab
run-ab:
	@bash rig/run-ab.sh
