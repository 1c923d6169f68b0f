#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# run.sh KIND TREE: build tools/testing/trbe of the kernel tree TREE into
# build/trbe-KIND (KIND = base or series) and run it; the output is also
# kept in out/trbe/KIND.log. Exits with the harness' status.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
kind=${1:?usage: run.sh base|series TREE}
tree=${2:?usage: run.sh base|series TREE}
stage "trbe-test ($kind)"

case "$kind" in
base|series) ;;
*) die "KIND must be base or series (got '$kind')" ;;
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
info "running $odir/trbe_test (driver from $tree)"
rc=0
"$odir/trbe_test" 2>&1 | tee "$OUT/trbe/$kind.log" || rc=$?
[ "$rc" -eq 0 ] || info "harness failed (rc=$rc); full output in $OUT/trbe/$kind.log"
exit "$rc"
