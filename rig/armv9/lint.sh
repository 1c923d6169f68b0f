#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make armv9-lint (also run by make rig-selftest): what can be checked of
# rig/armv9 on a machine without Armv9 trace hardware. shellcheck -x of
# run.sh; redirect.c (run.sh's perf record workload) and the aux_set_output
# kselftest that run.sh runs with cs_etm build with -Wall -Wextra -Werror for
# x86_64 and, static, for arm64 (the kselftest needs kselftest_harness.h from
# build/linux: skipped before `make tree`); run.sh refuses with exit 2 and
# says why: here (no cs_etm PMU), with a fake sysfs tree (ARMV9_SYSFS) that
# has a cs_etm PMU without a TRBE sink, or TRBE sinks but none for the chosen
# CPU, and (as root) without the kselftest.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage armv9-lint
cd "$RIG_TOP" || exit 1
W=$BUILD/armv9
rm -rf "$W"
mkdir -p "$W"
fail=0
ok() { echo "ok - $*"; }
bad() { echo "not ok - $*"; fail=1; }

if shellcheck -x rig/armv9/run.sh rig/armv9/lint.sh; then
	ok "shellcheck -x rig/armv9/run.sh rig/armv9/lint.sh"
else
	bad "shellcheck -x rig/armv9/run.sh rig/armv9/lint.sh"
fi
for cc in "x86_64 gcc" "arm64 aarch64-linux-gnu-gcc -static"; do
	arch=${cc%% *}
	cc=${cc#* }
	# shellcheck disable=SC2086 # cc is a command and its flags
	if $cc -Wall -Wextra -Werror -O2 -o "$W/redirect-$arch" rig/armv9/redirect.c; then
		ok "$cc -Wall -Wextra -Werror -O2 rig/armv9/redirect.c"
	else
		bad "$cc -Wall -Wextra -Werror -O2 rig/armv9/redirect.c"
	fi
	# The overlay's kselftest against the tree's harness (its ../kselftest_harness.h)
	t=tools/testing/selftests/perf_events/aux_set_output.c
	# shellcheck disable=SC2086 # cc is a command and its flags
	if [ ! -f "$TREE/tools/testing/selftests/kselftest_harness.h" ]; then
		ok "# SKIP $cc $t: no ${TREE#"$RIG_TOP"/}/tools/testing/selftests/kselftest_harness.h (make tree)"
	elif $cc -Wall -Wextra -Werror -O2 -I"$TREE/tools/testing/selftests/perf_events" \
		-o "$W/aux_set_output-$arch" "$t" -lpthread; then
		ok "$cc -Wall -Wextra -Werror -O2 $t"
	else
		bad "$cc -Wall -Wextra -Werror -O2 $t"
	fi
done

refuses() { # refuses WHAT PATTERN [VAR=value...]: run.sh exits 2 and prints PATTERN
	local what=$1 pat=$2 rc=0 out
	shift 2
	out=$(env OUT="$W/out" "$@" bash rig/armv9/run.sh 2>&1) || rc=$?
	if [ "$rc" = 2 ] && grep -qF "$pat" <<<"$out" && [ ! -e "$W/out" ]; then
		ok "run.sh refuses $what: exit 2, \"$pat\""
	else
		bad "run.sh $what: exit $rc, want 2, \"$pat\" and no output directory"
		while IFS= read -r l; do echo "#   $l"; done <<<"$out"
	fi
}
if [ -e /sys/bus/event_source/devices/cs_etm ]; then
	ok "# SKIP run.sh without a cs_etm PMU: this machine has one"
else
	refuses "without a cs_etm PMU" "no cs_etm PMU"
fi
F=$W/sysfs
d=$F/bus/event_source/devices/cs_etm
mkdir -p "$d/sinks" "$F/devices/system/cpu/cpu1"
echo 42 >"$d/type"
echo 0x1 >"$d/sinks/tmc_etr0"
refuses "with cs_etm but no TRBE sink" "no TRBE sink" ARMV9_SYSFS="$F"
echo 0x2 >"$d/sinks/trbe0"
refuses "for a CPU without a TRBE sink" "CPU 1 has no TRBE sink" ARMV9_SYSFS="$F" CPU=1
refuses "a bad --cpu" "CPU must be a number" ARMV9_SYSFS="$F" CPU=one
# Past the PMU, root, perf and compiler checks (test mode skips the TRBE and
# libopencsd ones): no kselftest next to this perf, or at the path given.
if [ "$(id -u)" != 0 ]; then
	ok "# SKIP run.sh without the kselftest: not root (run.sh refuses that first)"
else
	refuses "without the kselftest next to perf" "no aux_set_output kselftest" \
		ARMV9_SYSFS="$F" ARMV9_TEST_PMU=cs_etm PERF=true KSELFTEST= CC=gcc
	refuses "with --kselftest that does not exist" "no aux_set_output kselftest" \
		ARMV9_SYSFS="$F" ARMV9_TEST_PMU=cs_etm PERF=true KSELFTEST="$W/none/aux_set_output.c" CC=gcc
fi

[ "$fail" = 0 ]
