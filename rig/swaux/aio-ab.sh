#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make swaux-aio-ab: the A/B of "perf record: Do not write AUX area data over
# queued --aio writes". `perf record -a -z --aio -e swaux//` in the x86_64
# VM, decoded on the host, with two perf binaries:
#   - build/perf-noaio/perf: the series without that patch (the base perf
#     cannot record swaux at all, so the A side is the series minus the fix);
#     its recording must fail to decode;
#   - build/perf/perf (make perf): the series; the recording must decode with
#     "swaux: verdict: ok".
# The A side is built in build/perf from build/linux with the fix reverted
# (an incremental build), copied to build/perf-noaio, and build/perf is
# rebuilt from the series; both only when the series changes.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage "swaux-aio-ab"

FIX_SUBJECT="perf record: Do not write AUX area data over queued --aio writes"
ODIR=$BUILD/perf-noaio
fail=0

[ -x "$BUILD/perf/perf" ] || make -s --no-print-directory -C "$RIG_TOP" perf BASE=0
make -s --no-print-directory -C "$RIG_TOP" kernel ARCH=x86_64 BASE=0

# The A side: the series minus the fix, built incrementally in build/perf
# (only builtin-record.c and the link differ) and copied out, then
# build/perf is brought back to the series. Rebuilt when the series changes.
(
	tree_lock exclusive
	BASE=0 bash "$RIG_TOP/rig/tree.sh" >"$OUT/perf-noaio-build.log" 2>&1 ||
		{ tail -20 "$OUT/perf-noaio-build.log" >&2; die "make tree failed"; }
	series=$(git -C "$TREE" rev-parse series)
	if [ "$(cat "$ODIR/.rig-series" 2>/dev/null)" != "$series" ] || [ ! -x "$ODIR/perf" ]; then
		info "building ${ODIR#"$RIG_TOP"/}/perf: series $series without \"$FIX_SUBJECT\""
		G() { git -C "$TREE" -c user.name=rig -c user.email=rig@localhost "$@"; }
		fix=$(G log --format=%H --fixed-strings --grep="$FIX_SUBJECT" -1 series)
		[ -n "$fix" ] || die "the series has no commit \"$FIX_SUBJECT\""
		rm -f "$ODIR/.rig-series"
		# Whatever happens, build/linux goes back to the series and
		# build/perf/perf is the series' or absent (then rebuilt).
		# (set -e applies in the trap too: a revert --abort with no revert in
		# progress must not become the subshell's status.)
		trap 'G revert --abort >/dev/null 2>&1 || true; G checkout -q -f series; [ -f "$BUILD/perf/.rig-ok" ] || rm -f "$BUILD/perf/perf"' EXIT
		rm -f "$BUILD/perf/.rig-ok"
		G checkout -q --detach series
		G revert --no-edit "$fix" >/dev/null
		rc=0
		bash "$RIG_TOP/rig/perf/build.sh" "$BUILD/perf" "$TREE" >>"$OUT/perf-noaio-build.log" 2>&1 || rc=$?
		if [ $rc = 0 ]; then
			mkdir -p "$ODIR"
			cp "$BUILD/perf/perf" "$ODIR/perf"
		fi
		rm -f "$BUILD/perf/perf"
		G checkout -q -f series
		bash "$RIG_TOP/rig/perf/build.sh" "$BUILD/perf" "$TREE" >>"$OUT/perf-noaio-build.log" 2>&1 ||
			{ tail -20 "$OUT/perf-noaio-build.log" >&2; die "rebuilding build/perf/perf (series) failed"; }
		touch "$BUILD/perf/.rig-ok"
		[ $rc = 0 ] || { tail -20 "$OUT/perf-noaio-build.log" >&2; die "building $ODIR/perf failed"; }
		echo "$series" >"$ODIR/.rig-series"
	fi
)

run() { # run KIND PERF: 0 iff the aio recording decoded with verdict ok
	SWAUX_RECORDS=aio SWAUX_OUT=$OUT/swaux-aio-$1 SWAUX_PERF=$2 \
		bash "$RIG_TOP/rig/swaux/perf-vm.sh" >"$OUT/swaux-aio-$1.log" 2>&1
}

rc=0
run noaio "$ODIR/perf" || rc=$?
grep -E '^(not )?ok ' "$OUT/swaux-aio-noaio/check.tap" 2>/dev/null | sed 's/^/  without the fix: /' >&2
if [ "$rc" = 0 ]; then
	echo "swaux-aio-ab: FAIL: perf without the fix decoded its --aio recording" >&2
	fail=1
elif ! grep -q '^ok [0-9]* - aio: recorded\|^swaux-perf: ok aio: perf record exits 0' \
	"$OUT/swaux-aio-noaio/results.txt" "$OUT/swaux-aio-noaio/check.tap" 2>/dev/null; then
	echo "swaux-aio-ab: FAIL: without the fix, perf record itself failed (want: a recording that does not decode)" >&2
	fail=1
fi

rc=0
run series "$BUILD/perf/perf" || rc=$?
grep -E '^(not )?ok ' "$OUT/swaux-aio-series/check.tap" 2>/dev/null | sed 's/^/  with the series: /' >&2
if [ "$rc" != 0 ]; then
	echo "swaux-aio-ab: FAIL: the series perf did not decode its --aio recording (see out/swaux-aio-series.log)" >&2
	fail=1
fi

[ $fail = 0 ] || die "swaux-aio-ab failed"
echo "swaux-aio-ab: OK: perf record -z --aio of an AUX event is unreadable without the fix, decodes with it" >&2
