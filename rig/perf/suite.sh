#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make perf-suite: run perf's whole `perf test` (parallel, as perf runs it by
# default) with the base perf and with the series perf, and fail if a test
# that passes with the base fails with the series. Tests that fail or are
# skipped with the base are reported, never judged: this VM has no PMU, so
# many fail on both.
#
#   suite.sh                build both perfs (make perf BASE=1), run both suites
#   PERF_SUITE_NOBUILD=1    use build/perf-base/perf and build/perf/perf as built
#   PERF_SUITE_ARGS='...'   extra `perf test` arguments (e.g. a test number)
#
# Both runs use the same copy of the series tree's tools/perf/tests/shell
# (perf test finds ./tests/shell first), taken under the tree lock, so the
# shell tests are the same for both binaries. Each run holds the CPU lock:
# builds on the machine would otherwise make timing-sensitive tests flaky.
# Results: out/perf-suite-{base,series}.txt (raw), .res (desc<TAB>result).
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
start=$(date +%s)
stage "perf-suite"
if [ "$(id -u)" != 0 ]; then
	die "perf-suite: must run as root"
fi
if [ "${PERF_SUITE_NOBUILD:-0}" != 1 ]; then
	make -C "$RIG_TOP" --no-print-directory perf BASE=1
	make -C "$RIG_TOP" --no-print-directory perf
fi
for p in "$BUILD/perf-base/perf" "$BUILD/perf/perf"; do
	[ -x "$p" ] || die "perf-suite: $p not built; run 'make perf BASE=1' and 'make perf'"
done

work=$(mktemp -d /tmp/perf-suite.XXXXXX)
trap 'rm -rf "$work"' EXIT
(
	tree_lock shared
	[ -d "$TREE/tools/perf/tests/shell" ] || die "no $TREE/tools/perf/tests/shell; run 'make tree'"
	mkdir -p "$work/tests"
	cp -a "$TREE/tools/perf/tests/shell" "$work/tests/shell"
)
mkdir -p "$OUT"

# run_suite <name> <perf binary>: out/perf-suite-<name>.{txt,res}
run_suite() {
	local name=$1 perf=$2 t0 rc=0
	local raw="$OUT/perf-suite-$name.txt" res="$OUT/perf-suite-$name.res"

	t0=$(date +%s)
	info "perf test with $perf (log: ${raw#"$RIG_TOP"/})"
	# shellcheck disable=SC2086 # PERF_SUITE_ARGS is a list of arguments
	(cd "$work" && COLUMNS=300 PATH="$(dirname "$perf"):$PATH" cpu_lock \
		timeout -k 30 5400 "$perf" test ${PERF_SUITE_ARGS:-} ) >"$raw" 2>&1 || rc=$?
	# " 12: desc : Ok", " 12.3: desc : FAILED!", " 7: desc : Skip (reason)"
	sed -nE 's/^ *[0-9]+(\.[0-9]+)?: (.*[^ ]) +: (Ok|FAILED!|Skip)( .*)?$/\2\t\3/p' \
		"$raw" | sort >"$res"
	info "$name: $(grep -c $'\tOk$' "$res") ok, $(grep -c $'\tFAILED!$' "$res") failed," \
		"$(grep -c $'\tSkip$' "$res") skipped in $(( $(date +%s) - t0 )) s (perf test exit $rc)"
	[ -s "$res" ] || die "perf-suite: no test results from $perf; see ${raw#"$RIG_TOP"/}"
}

run_suite base "$BUILD/perf-base/perf"
run_suite series "$BUILD/perf/perf"

bad=0
while IFS=$'\t' read -r desc result; do
	s=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$OUT/perf-suite-series.res")
	if [ "$result" = Ok ] && [ "$s" != Ok ]; then
		echo "perf-suite: REGRESSION: '$desc': base Ok, series ${s:-missing}"
		bad=1
	fi
done <"$OUT/perf-suite-base.res"
while IFS=$'\t' read -r desc result; do
	b=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$OUT/perf-suite-base.res")
	if [ "$result" = Ok ] && [ "$b" != Ok ]; then
		echo "perf-suite: fixed or new: '$desc': base ${b:-missing}, series Ok"
	fi
done <"$OUT/perf-suite-series.res"
echo "perf-suite: done in $(( $(date +%s) - start )) s"
if [ $bad != 0 ]; then
	echo "perf-suite: tests that pass with the base fail with the series (above); logs in out/perf-suite-*.txt" >&2
	exit 1
fi
echo "perf-suite: no test that passes with the base fails with the series"
