#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make selftests-ab / make kernel-ab: the kernel A/B.
#
# With the series every perf_events selftest passes (the swaux module tests,
# the SET_OUTPUT scenario, the mmap aux variants run and do not skip) and
# dmesg stays clean; on the pristine base the SET_OUTPUT scenario tests fail
# and every other test passes. With AB_RUN=1 (make kernel-ab) the main job,
# make run ARCH=arm64 (perf record -e cs_etm//u of the redirect through the
# real TRBE and ETE drivers on the emulated Armv9 CPU), is part of it:
# verdict "no misplaced or unflagged AUX data" (exit 0) with the series, the
# bug shown through the driver (exit 3) on the base. The x86_64 flow (swaux)
# is make run ARCH=x86_64 and make run-ab, not make check. On arm64 each
# kernel also runs the redirect tests through the real TRBE driver on the
# emulated Armv9 CPU (rig/qemu/redirect-ab.sh, AB_CSETM_RUNS runs, default
# 1): the base shows the bug, the series is clean.
#
# All base runs come first, then all series runs, so the shared tree and
# each kernel build switch once (a relink of the changed files), and the
# tree is left at the series, where the stages after this one build.
#   AB_ARCHES="x86_64 arm64" (default both), AB_RUN=0|1 (default 0)
. "$(dirname "$0")/../lib.sh"
arches=${AB_ARCHES:-x86_64 arm64}
ab_run=${AB_RUN:-0}
# AB_CSETM_RUNS: runs of make cs-etm-ab per arm64 kernel (0: none)
csetm_runs=${AB_CSETM_RUNS:-1}
case "$csetm_runs" in '' | *[!0-9]*) die "AB_CSETM_RUNS must be a number (got '$csetm_runs')" ;; esac
stage "kernel A/B ($arches$([ "$ab_run" = 1 ] && echo ', with make run'))"

# Scenario tests: fail on the base (aux_records and wake_old run in the two
# stream variants only). throttle.set_output passes on the base, which has
# no restart to start a throttled event twice. unmap_new, stress, p_active
# and the snapshot variants of to_none are only required on the series: on
# the base their outcome depends on timing (unmap_new: when the munmap of B
# wins the race, perf_mmap_close() stops the children that write for B's
# events before they write into A again; stress checks only the module's
# counters and dmesg; p_active: the base leaves P stopped until its task is
# scheduled in again; snapshot to_none: seen passing on the x86_64 base
# once, many_children_snapshot with the host busy building perf: a child
# shows the bug only if it holds a transaction begun on the old buffer
# when SET_OUTPUT -1 comes; one that begins its next transaction after it
# finds no buffer and writes nowhere).
SCEN='^aux_set_output: (not )?ok [0-9]+ (redirect\.[a-z_]+\.(switch_buffer|repeated|unmap_old)|redirect\.(one_child|many_children)\.(to_none|aux_records|wake_old)|global\.(per_cpu_all|per_task_inherit))( |$)'
SCEN_N=20
STRESS='^aux_set_output: (not )?ok [0-9]+ redirect\.([a-z_]+\.(unmap_new|stress|p_active)|[a-z_]+_snapshot\.to_none)( |$)'
# Skipped by design: snapshot buffers have no stream of records to check
# and no reader to wake.
SKIP_OK='^aux_set_output: ok [0-9]+ redirect\.[a-z_]+_snapshot\.(aux_records|wake_old) # SKIP'
fail=0
bad() { echo "kernel-ab: FAIL: $*" >&2; fail=1; }
sfx() { if [ "$1" = base ]; then echo -base; fi; }

check() { # check ARCH base|series
	local arch=$1 kind=$2 R n
	R=$OUT/selftests-$arch$(sfx "$kind")
	local res=$R/results.txt
	[ -s "$res" ] || { bad "$arch $kind: no results"; return; }
	grep -q '^SELFTESTS: result noswaux 4$' "$res" || bad "$arch $kind: aux_set_output does not skip (4) without the module"
	n=$(grep -cE '^(aux_set_output|mmap): (not )?ok ' "$res" || true)
	[ "$n" -ge 30 ] || bad "$arch $kind: only $n test results"
	grep -E '^(aux_set_output|mmap): ok .*# SKIP' "$res" | grep -vE "$SKIP_OK" | sed 's/^/  skipped: /' >&2 &&
		bad "$arch $kind: tests skipped"
	grep -qE '^mmap: ok [0-9]+ perf_mmap\.aux\.' "$res" || bad "$arch $kind: mmap aux variants did not run"
	grep -qE '^mmap_aux\.sh: ok [0-9]+ perf_mmap\.aux\.' "$res" ||
		bad "$arch $kind: mmap_aux.sh did not run the mmap aux variant in the kselftest runner"
	# What make vm-$arch checks on its own boot, from this one: the PMUs the
	# tests rely on, and on arm64 the TRBE driver probing its device tree
	# node and reporting the missing hardware.
	case "$arch" in
	x86_64) want_pmus="software tracepoint" ;;
	arm64) want_pmus="software tracepoint cs_etm armv8_pmuv3(_0)?" ;;
	esac
	for n in $want_pmus; do
		grep -qE "^SELFTESTS: pmus .*\<$n\>" "$res" || bad "$arch $kind: no $n PMU in the guest"
	done
	if [ "$arch" = arm64 ]; then
		grep -q 'TRBE is not implemented on cpu 0' "$R/console.log" ||
			bad "arm64 $kind: the TRBE driver did not probe its device tree node"
	fi
	# Module tests and mmap pass on both.
	grep -E '^(aux_set_output: not ok [0-9]+ swaux\.|mmap: not ok )' "$res" | sed 's/^/  /' >&2 &&
		bad "$arch $kind: module or mmap tests failed"
	if [ "$kind" = base ]; then
		n=$(grep -cE "$SCEN" "$res" || true)
		[ "$n" -ge $SCEN_N ] || bad "$arch base: $n scenario tests ran, want $SCEN_N"
		grep -E "$SCEN" "$res" | grep -E '^aux_set_output: ok ' | sed 's/^/  passed on base: /' >&2 &&
			bad "$arch base: scenario tests pass without the fix"
		grep -E "$STRESS" "$res" | sed 's/^/  (not asserted on base) /' >&2 || true
	else
		grep -E '^(aux_set_output|mmap): not ok ' "$res" | sed 's/^/  /' >&2 && bad "$arch series: tests failed"
		grep -q '^SELFTESTS: end rc=0$' "$res" || bad "$arch series: guest run failed"
	fi
	echo "kernel-ab: selftests $arch $kind: $(grep -cE '^(aux_set_output|mmap): ok ' "$res") ok, $(grep -cE '^(aux_set_output|mmap): not ok ' "$res") not ok" >&2
}

run_flow() { # run_flow ARCH base|series
	local arch=$1 kind=$2 rc=0 want log
	want=$([ "$kind" = base ] && echo 3 || echo 0)
	log=$OUT/run-$arch$(sfx "$kind").out
	ARCH=$arch BASE=$([ "$kind" = base ] && echo 1 || echo 0) bash "$RIG_TOP/rig/run.sh" >"$log" 2>&1 || rc=$?
	sed -n '/^==== make run/,$p' "$log" | sed 's/^/  /' >&2
	if [ "$rc" != "$want" ]; then
		tail -20 "$log" >&2
		bad "make run ARCH=$arch ($kind kernel) exited $rc, want $want (log: ${log#"$RIG_TOP"/})"
	fi
}

for kind in base series; do
	for arch in $arches; do
		if ! BASE=$([ $kind = base ] && echo 1 || echo 0) bash "$RIG_TOP/rig/selftests/run.sh" "$arch"; then
			if [ $kind = base ]; then
				info "$arch base: VM run failed (expected: scenario tests fail)"
			else
				bad "$arch series: VM run failed (a test failed or dmesg has a splat)"
			fi
		fi
		check "$arch" $kind
		# arm64: the redirect tests through the real TRBE driver on the
		# emulated CPU (make cs-etm-ab), on this kernel and its kselftests.
		if [ "$arch" = arm64 ] && [ "$csetm_runs" -gt 0 ]; then
			AB_NOBUILD=1 AB_KERNELS=$kind RUNS=$csetm_runs bash "$RIG_TOP/rig/qemu/redirect-ab.sh" ||
				bad "arm64 $kind: the redirect through the emulated TRBE (make cs-etm-ab) failed"
		fi
		# The main job on this kernel: make run ARCH=arm64.
		if [ "$ab_run" = 1 ] && [ "$arch" = arm64 ]; then
			run_flow "$arch" $kind
		fi
	done
done
[ $fail = 0 ] || die "kernel A/B failed: see out/selftests-*/results.txt and out/run-*"
echo "kernel-ab: OK ($arches): SET_OUTPUT scenario fails on the base, everything passes with the series$([ "$ab_run" = 1 ] && case " $arches " in *" arm64 "*) echo '; make run ARCH=arm64 (perf record -e cs_etm//u): the bug through the driver on the base, no misplaced or unflagged AUX data with the series' ;; esac)$(case " $arches " in *" arm64 "*) [ "$csetm_runs" -gt 0 ] && echo "; the emulated TRBE ($csetm_runs run(s) per kernel): the base shows the bug, the series is clean" ;; esac)" >&2
