#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make selftests-ab [AB_ARCHES="x86_64 arm64"]: on the pristine base the
# SET_OUTPUT scenario tests must fail and every other test pass (the swaux
# module tests, the mmap aux variants run, not skipped); with the series
# every test must pass and dmesg stay clean.
. "$(dirname "$0")/../lib.sh"
arches=${AB_ARCHES:-x86_64}
stage "selftests-ab ($arches)"

# Scenario tests: fail on the base. stress is only required on the series
# (on the base its outcome depends on timing).
SCEN='^aux_set_output: (not )?ok [0-9]+ redirect\.[a-z_]+\.(switch_buffer|repeated|to_none|unmap_new)( |$)'
STRESS='^aux_set_output: (not )?ok [0-9]+ redirect\.[a-z_]+\.stress( |$)'
fail=0
bad() { echo "selftests-ab: FAIL: $*" >&2; fail=1; }

check() { # check ARCH base|series
	local arch=$1 kind=$2 R n
	R=$OUT/selftests-$arch$([ "$kind" = base ] && echo -base)
	local res=$R/results.txt
	[ -s "$res" ] || { bad "$arch $kind: no results"; return; }
	grep -q '^SELFTESTS: result noswaux 4$' "$res" || bad "$arch $kind: aux_set_output does not skip (4) without the module"
	n=$(grep -cE '^(aux_set_output|mmap): (not )?ok ' "$res" || true)
	[ "$n" -ge 30 ] || bad "$arch $kind: only $n test results"
	grep -E '^(aux_set_output|mmap): ok .*# SKIP' "$res" | sed 's/^/  skipped: /' >&2 && bad "$arch $kind: tests skipped"
	grep -qE '^mmap: ok [0-9]+ perf_mmap\.aux\.' "$res" || bad "$arch $kind: mmap aux variants did not run"
	# Module tests and mmap pass on both.
	grep -E '^(aux_set_output: not ok [0-9]+ swaux\.|mmap: not ok )' "$res" | sed 's/^/  /' >&2 &&
		bad "$arch $kind: module or mmap tests failed"
	if [ "$kind" = base ]; then
		n=$(grep -cE "$SCEN" "$res" || true)
		[ "$n" -ge 16 ] || bad "$arch base: $n scenario tests ran, want 16"
		grep -E "$SCEN" "$res" | grep -E '^aux_set_output: ok ' | sed 's/^/  passed on base: /' >&2 &&
			bad "$arch base: scenario tests pass without the fix"
		grep -E "$STRESS" "$res" | sed 's/^/  (not asserted on base) /' >&2 || true
	else
		grep -E '^(aux_set_output|mmap): not ok ' "$res" | sed 's/^/  /' >&2 && bad "$arch series: tests failed"
		grep -q '^SELFTESTS: end rc=0$' "$res" || bad "$arch series: guest run failed"
	fi
	echo "selftests-ab: $arch $kind: $(grep -cE '^(aux_set_output|mmap): ok ' "$res") ok, $(grep -cE '^(aux_set_output|mmap): not ok ' "$res") not ok" >&2
}

for arch in $arches; do
	BASE=1 bash "$RIG_TOP/rig/selftests/run.sh" "$arch" || info "$arch base: VM run failed (expected: scenario tests fail)"
	check "$arch" base
	if ! BASE=0 bash "$RIG_TOP/rig/selftests/run.sh" "$arch"; then
		bad "$arch series: VM run failed (a test failed or dmesg has a splat)"
	fi
	check "$arch" series
done
[ $fail = 0 ] || die "selftests-ab failed: see out/selftests-*/results.txt"
echo "selftests-ab: OK ($arches): scenario fails on the base, everything passes with the series" >&2
