#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make cs-etm-ab [RUNS=N] [AB_KERNELS="series base core driver"]: the
# SET_OUTPUT redirect through the real TRBE and ETE drivers, on the emulated
# Armv9 CPU (rig/qemu, -cpu max,x-trbe=on).
#
# For each kernel: build it (arm64; `series` the whole series, `base` the
# pristine base, `core` only the perf/core patches, `driver` only the
# coresight patches: rig/tree.sh PARTIAL=), build the perf_events kselftests,
# then RUNS times: boot the model and run the aux_set_output kselftest's
# redirect tests with AUX_SET_OUTPUT_PMU=cs_etm AUX_SET_OUTPUT_ETE_MODEL=1
# (the cs_etm event's sink is the TRBE of CPU X, the trace the model's
# records: every record checked by cpu, pid and sequence number), then the
# guest's dmesg. One boot per run: a kernel that oopses ends its boot.
#
# Each run is clean (every test passes but the two snapshot variants of
# aux_records and the four of wake_old, which skip by design; dmesg clean), shows the bug (the
# kernel oopses or warns, or a scenario test that checks the old buffer
# (ASSERTED below) fails), or is broken (neither: a hang, a test that
# could not run). Verdicts:
#   series  every run clean;
#   base    every run shows the bug;
#   core, driver: measured, not asserted; the result line says what each
#           showed (the answer to "fix only the core").
# Exit 0 when every asserted kernel met its verdict. Output: out/cs-etm-ab/.
# AB_NOBUILD=1 (one kernel, for make kernel-ab): use the tree, kernel and
# kselftests as they are; the tree must be that kernel's.
. "$(dirname "$0")/../lib.sh"
kernels=${AB_KERNELS:-series base core driver}
runs=${RUNS:-10}
case "$runs" in '' | *[!0-9]* | 0) die "RUNS must be a positive number (got '$runs')" ;; esac
for k in $kernels; do
	case "$k" in series | base | core | driver) ;; *) die "AB_KERNELS: unknown kernel '$k' (series, base, core, driver)" ;; esac
done
stage "cs-etm-ab ($kernels, $runs runs each)"
cd "$RIG_TOP" || exit 1
D=$OUT/cs-etm-ab
mkdir -p "$D"
QEMU_BIN=$(bash rig/qemu/build.sh --path) || die "make qemu failed"

# The tests that show the bug: after SET_OUTPUT returned, the old buffer is
# written (or the new one gets records traced before the old one's last),
# or PERF_RECORD_AUX lands in the wrong ring. unmap_new, stress and p_active
# are not asserted on the base (as in make kernel-ab): their outcome there
# depends on timing, not on the bug.
ASSERTED='redirect\.[a-z_]+\.(switch_buffer|repeated|to_none|unmap_old)|redirect\.(one_child|many_children)\.aux_records'
TESTS=40
# wake_old needs a transaction that writes no record until the redirect,
# which only swaux can hold.
SKIPS='redirect\.[a-z_]+_snapshot\.aux_records|redirect\.[a-z_]+\.wake_old'
fail=0
bad() {
	echo "cs-etm-ab: FAIL: $*" >&2
	fail=1
}

summary=()
for k in $kernels; do
	base=0 partial=
	case "$k" in base) base=1 ;; core | driver) partial=$k ;; esac
	R=$D/$k
	rm -rf "$R" && mkdir -p "$R"
	want=series
	case "$k" in base) want=overlay ;; core | driver) want=partial-$k ;; esac
	if [ "${AB_NOBUILD:-0}" = 1 ]; then
		[ "$(git -C "$TREE" rev-parse HEAD)" = "$(git -C "$TREE" rev-parse "$want")" ] ||
			die "AB_NOBUILD=1: build/linux is not the $k tree ($want)"
		[ -x "$BUILD/payload-arm64/selftests/aux_set_output" ] || die "AB_NOBUILD=1: no kselftests in the payload"
	else
		info "$k kernel: tree, arm64 kernel, kselftests"
		BASE=$base PARTIAL=$partial bash rig/tree.sh >"$R/tree.log" 2>&1 || { tail -20 "$R/tree.log" >&2; die "make tree for the $k kernel failed"; }
		grep -E '^rig: build/linux is' "$R/tree.log" >&2 || true
		bash rig/kernel.sh arm64 >"$R/kernel.log" 2>&1 || { tail -20 "$R/kernel.log" >&2; die "the $k arm64 kernel did not build"; }
		bash rig/selftests/build.sh arm64 >"$R/selftests-build.log" 2>&1 ||
			{ tail -20 "$R/selftests-build.log" >&2; die "the kselftests did not build for the $k kernel"; }
	fi
	P=$BUILD/payload-arm64
	cp rig/guest/quiet-cpu.sh "$P/selftests/"
	# One boot per run: a kernel that oopses ends its boot, and a run
	# must not inherit what an earlier one left behind.
	# The kselftest writes straight to the console, between two markers:
	# what it printed before an oops is kept.
	# The probe lines go to the console too (loglevel 4 keeps them off it).
	cmd="sh /selftests/quiet-cpu.sh 1 >/dev/null
dmesg | grep -E 'coresight ete[0-9]+: CPU[0-9]+: ete v' | sed 's/^/csetm-probe: /'
echo csetm-begin
AUX_SET_OUTPUT_PMU=cs_etm AUX_SET_OUTPUT_ETE_MODEL=1 AUX_SET_OUTPUT_CPU=1 \\
	/selftests/aux_set_output -f redirect 2>&1
echo \"csetm-rc: \$?\"
exit 0"
	n_clean=0 n_bug=0 n_broken=0 line="$k:"
	for i in $(seq 1 "$runs"); do
		V=$R/run$i
		vm_rc=0
		VM_DIR=$V VM_QEMU=$QEMU_BIN VM_CPU=max,pauth-impdef=on,x-trbe=on VM_PAYLOAD=$P VM_TIMEOUT=600 \
			bash rig/vm.sh arm64 "$cmd" >"$V.log" 2>&1 || vm_rc=$?
		tr -d '\r' <"$V/console.log" 2>/dev/null | sed -n '/^csetm-begin$/,$p' >"$V/ksft.txt" || true
		rc=$(tr -d '\r' <"$V/console.log" 2>/dev/null | sed -n 's/^csetm-rc: \([0-9]*\)$/\1/p')
		probed=$(tr -d '\r' <"$V/console.log" 2>/dev/null | grep -cE '^csetm-probe: .*coresight ete[01]: CPU[01]: ete v[0-9.]* initialized' || true)
		# splat_scan's lines are "N:match" and "N-context": the first report
		splat=$(grep -m1 -E '^[0-9]+:' "$V/splats.txt" 2>/dev/null | sed 's/^[0-9]*://' || true)
		where=$(grep -m1 -oE '^ *(pc : )?[a-z_0-9]+trbe[a-z_0-9]*\+0x[0-9a-f]+' "$V/dmesg.txt" 2>/dev/null | sed 's/^ *//' || true)
		n_ok=$(grep -cE '^ok [0-9]+ ' "$V/ksft.txt" || true)
		n_fail=$(grep -cE '^not ok [0-9]+ ' "$V/ksft.txt" || true)
		n_skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$V/ksft.txt" || true)
		odd_skip=$(grep -E '^ok [0-9]+ .*# SKIP' "$V/ksft.txt" | grep -cvE "^ok [0-9]+ ($SKIPS) # SKIP" || true)
		asserted=$(grep -E "^not ok [0-9]+ ($ASSERTED)\$" "$V/ksft.txt" | awk '{ print $4 }' | paste -sd, || true)
		misplaced=$(grep -cE 'old buffer written after SET_OUTPUT returned|A written after SET_OUTPUT returned|new records from sequence' "$V/ksft.txt" || true)
		grep -E '^not ok ' "$V/ksft.txt" | sed "s/^/  $k run $i: /" >&2 || true
		[ "$probed" = 2 ] || bad "$k run $i: the ETE driver did not probe both CPUs: the model is not in use ($V/console.log)"
		[ "$odd_skip" = 0 ] || bad "$k run $i: $odd_skip tests skipped that must run"
		if [ -z "$splat" ] && [ "$vm_rc" = 0 ] && [ "$rc" = 0 ] && [ "$n_fail" = 0 ] && [ $((n_ok + n_fail)) = "$TESTS" ]; then
			what="clean: $((n_ok - n_skip)) passed, $n_skip skipped"
			n_clean=$((n_clean + 1))
		elif [ -n "$splat" ] || [ -n "$asserted" ]; then
			what="BUG:${splat:+ kernel: $splat${where:+ at $where};}${asserted:+ failed: $asserted;} $misplaced misplaced-data reports, $((n_ok + n_fail)) of $TESTS tests ran"
			n_bug=$((n_bug + 1))
		else
			what="BROKEN: vm exit $vm_rc, kselftest exit ${rc:-none}, $n_fail failed, $((n_ok + n_fail)) of $TESTS tests ran"
			n_broken=$((n_broken + 1))
		fi
		echo "cs-etm-ab: $k run $i: $what" | tee -a "$R/runs.txt" >&2
	done
	line="$k: $runs runs: $n_clean clean, $n_bug showed the bug, $n_broken broken"
	summary+=("$line")
	case "$k" in
	series) [ "$n_clean" = "$runs" ] || bad "series: $((runs - n_clean)) of $runs runs not clean" ;;
	base) [ "$n_bug" = "$runs" ] || bad "base: $n_bug of $runs runs showed the bug, want all" ;;
	esac
done
{
	echo "cs-etm-ab: $runs runs per kernel on the emulated TRBE/ETE (the aux_set_output redirect tests, cs_etm, ETE model records)"
	for l in "${summary[@]}"; do echo "cs-etm-ab: $l"; done
} | tee "$D/summary.txt" >&2
[ "$fail" = 0 ] || die "the emulated-TRBE A/B failed: see ${D#"$RIG_TOP"/}/"
case " $kernels " in
*" series "* | *" base "*) echo "cs-etm-ab: OK:$(case " $kernels " in *" base "*) echo " the base shows the bug in every run" ;; esac)$(case " $kernels " in *" series "*) echo " the series is clean in every run" ;; esac)" >&2 ;;
*) echo "cs-etm-ab: measured (no verdict is asserted for $kernels)" >&2 ;;
esac
