#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# soak.sh TREE [STEPS]: build the TRBE harness of TREE (the series) into
# build/trbe-soak and run its random tests (test_random_sequence and
# test_random_sequence_redirect) over fresh seeds, alternating the base
# and the fixed perf core model, until STEPS random steps (default 10^5)
# have run. Any failure stops the soak and names its seed; the summary
# gives steps, seeds and steps per second. Output: out/trbe/soak.log.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
tree=${1:?usage: soak.sh TREE [STEPS]}
want=${2:-100000}
per_run=${SOAK_RUN_STEPS:-3000}
stage "trbe-soak ($want steps)"

[ -f "$tree/tools/testing/trbe/Makefile" ] ||
	die "$tree has no tools/testing/trbe: run 'make tree' (or copy the overlay into KSRC)"
case "$want$per_run" in
*[!0-9]*) die "STEPS and SOAK_RUN_STEPS must be numbers" ;;
esac
odir=$BUILD/trbe-soak
mkdir -p "$odir" "$OUT/trbe"
make --no-print-directory -s -C "$tree/tools/testing/trbe" OUTPUT="$odir" ||
	die "building the TRBE harness failed: see the compiler output above"

log=$OUT/trbe/soak.log
: >"$log"
steps=0 seeds=0 runs=0
start=$(date +%s%N)
while [ "$steps" -lt "$want" ]; do
	seed=0x$(od -An -N8 -tx8 /dev/urandom | tr -d ' \n')
	core=base
	[ $((seeds % 2)) = 1 ] && core=fixed
	seeds=$((seeds + 1))
	rc=0
	out=$("$odir/trbe_test" CORE="$core" SEED="$seed" STEPS="$per_run" \
		test_random_sequence test_random_sequence_redirect 2>&1) || rc=$?
	printf '%s\n' "$out" >>"$log"
	if [ "$rc" -ne 0 ] || ! grep -q '^2 tests run, 2 passed, 0 failed\.$' <<<"$out"; then
		printf '%s\n' "$out" | tail -n 40
		die "soak failed with SEED=$seed CORE=$core STEPS=$per_run after $steps steps (rerun: $odir/trbe_test CORE=$core SEED=$seed STEPS=$per_run test_random_sequence test_random_sequence_redirect)"
	fi
	# Steps are counted from the lines of runs that completed.
	n=$(sed -n 's/^# \([0-9][0-9]*\) steps: .*/\1/p' <<<"$out" | awk '{ s += $1 } END { print s + 0 }')
	[ "$n" -gt 0 ] || die "SEED=$seed: no step count in the output"
	steps=$((steps + n))
	runs=$((runs + 2))
done
ms=$((($(date +%s%N) - start) / 1000000))
[ "$ms" -gt 0 ] || ms=1
echo "trbe-soak: $steps steps in $runs runs over $seeds fresh seeds (both core models), $((ms / 1000)).$(printf '%03d' $((ms % 1000))) s, $((steps * 1000 / ms)) steps/s, no failure"
echo "trbe-soak: seeds and per-run summaries in $log"
