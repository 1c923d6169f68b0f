#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run-ab [RUNS=10] [AB_ARCHES="x86_64 arm64"]: the make run flow RUNS
# times on one boot of each kernel and arch (make run RUNS=N). Every run on
# the series must find no misplaced data (exit 0), every run on the base
# must find some (exit 3): the end-to-end A/B does not depend on chance.
# Series runs first, then base runs: the shared tree switches once.
. "$(dirname "$0")/lib.sh"
arches=${AB_ARCHES:-x86_64 arm64}
runs=${RUNS:-10}
stage "run-ab ($arches, RUNS=$runs)"
cd "$RIG_TOP" || exit 1
mkdir -p "$OUT"
fail=0
for kind in series base; do
	for arch in $arches; do
		b=$([ $kind = base ] && echo 1 || echo 0)
		want=$([ $kind = base ] && echo 3 || echo 0)
		log=$OUT/run-ab-$arch-$kind.log
		rc=0
		ARCH=$arch BASE=$b RUNS=$runs bash rig/run.sh >"$log" 2>&1 || rc=$?
		sed -n '/^==== make run/,$p' "$log" | sed 's/^/  /'
		if [ "$rc" = "$want" ]; then
			echo "run-ab: ok: $arch $kind kernel: exit $rc in $runs of $runs runs"
		else
			echo "run-ab: FAIL: $arch $kind kernel: exit $rc, want $want (log: ${log#"$RIG_TOP"/})"
			tail -15 "$log"
			fail=1
		fi
	done
done
[ $fail = 0 ] || die "run-ab failed"
echo "run-ab: OK: $arches: misplaced AUX data in every base run, in no series run ($runs runs each)"
