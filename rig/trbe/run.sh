#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh KIND TREE [CORE]: build tools/testing/trbe of the kernel tree TREE
# into build/trbe-KIND (KIND = base or series: which driver the tree has)
# and run it with the perf core model CORE (base, fixed or both; default:
# base for KIND=base, fixed for KIND=series, the two sides of trbe-ab).
# Each run's output is also kept in out/trbe/KIND-driver+CORE-core.log.
# Exits with the harness' status (non-zero if any run failed).
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
kind=${1:?usage: run.sh base|series TREE [base|fixed|both]}
tree=${2:?usage: run.sh base|series TREE [base|fixed|both]}
core=${3:-}
stage "trbe-test ($kind driver)"

case "$kind" in
base) core=${core:-base} ;;
series) core=${core:-fixed} ;;
*) die "KIND must be base or series (got '$kind')" ;;
esac
case "$core" in
base|fixed) cores=$core ;;
both) cores="base fixed" ;;
*) die "CORE must be base, fixed or both (got '$core')" ;;
esac
[ -f "$tree/tools/testing/trbe/Makefile" ] ||
	die "$tree has no tools/testing/trbe: run 'make tree' (or copy the overlay into KSRC)"
[ -f "$tree/drivers/hwtracing/coresight/coresight-trbe.c" ] ||
	die "$tree is not a kernel tree (no coresight-trbe.c)"

odir=$BUILD/trbe-$kind
mkdir -p "$odir" "$OUT/trbe"
# A few seconds of CPU for one ASan/UBSan translation unit: no build lock.
make --no-print-directory -s -C "$tree/tools/testing/trbe" OUTPUT="$odir" ||
	die "building the TRBE harness failed: see the compiler output above"
status=0
for c in $cores; do
	log=$OUT/trbe/$kind-driver+$c-core.log
	info "running $odir/trbe_test CORE=$c ($kind driver from $tree)"
	# On screen each line names its pair: the base pairs' expected
	# "not ok" lines are then not taken for failures of this run.
	set +e
	"$odir/trbe_test" CORE="$c" 2>&1 | tee "$log" | sed "s/^/$kind+$c| /"
	rc=${PIPESTATUS[0]}
	set -e
	if [ "$rc" -ne 0 ]; then
		info "harness failed ($kind driver, $c core, rc=$rc); full output in $log"
		status=$rc
	fi
done
exit "$status"
