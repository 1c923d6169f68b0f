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
#   PERF_SUITE_RUNS=N       run the series suite N times in a row (default 1)
#   PERF_SUITE_RECHECK=N    reruns of a test that passed with the base and
#                           failed with the series (default 100, 0: none;
#                           once per test, later runs reuse the counts)
#
# A test that passed in the base run and failed in a series run is run
# again alone, PERF_SUITE_RECHECK times with each perf, alternating. It is
# a regression when the series fails there and the base does not, or when
# neither fails (not reproduced: still counted, the suite saw it). When the
# base fails too, the test is flaky with both perfs: reported with both
# counts, not counted against the series.
#
# The project's own shell tests (tools/perf/tests/shell/*.sh of this
# repository) must be Ok with the series perf in every run: they run in
# perf's parallel harness beside everything else, as perf runs them.
#
# Both runs use the same copy of the series tree's tools/perf/tests/shell
# (perf test finds ./tests/shell first), taken under the tree lock, so the
# shell tests are the same for both binaries. Each run holds the CPU lock:
# builds on the machine would otherwise make timing-sensitive tests flaky.
# Results: out/perf-suite-{base,series}.txt (raw), .res (desc<TAB>result);
# with PERF_SUITE_RUNS > 1, run K of the series is out/perf-suite-series.K.*.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
start=$(date +%s)
stage "perf-suite"
if [ "$(id -u)" != 0 ]; then
	die "perf-suite: must run as root"
fi
perf_pair perf-suite "${PERF_SUITE_NOBUILD:-0}"

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

runs=${PERF_SUITE_RUNS:-1}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "perf-suite: PERF_SUITE_RUNS must be a number >= 1"

# The descriptions of the project's own tests, as perf test prints them.
own=$work/own
for t in "$RIG_TOP"/tools/perf/tests/shell/*.sh; do
	sed -n '2s/^# //p' "$t" | sed 's/ (exclusive)$//'
done | sort >"$own"
[ -s "$own" ] || die "perf-suite: no shell tests in $RIG_TOP/tools/perf/tests/shell"

# fails <perf> <desc>: whether `perf test <desc>` run alone fails
fails() {
	local out
	out=$(cd "$work" && COLUMNS=300 PATH="$(dirname "$1"):$PATH" \
		timeout -k 10 300 "$1" test "$2" 2>&1) || return 0
	grep -qE ': (FAILED!|Skip)' <<<"$out" && return 0
	grep -q ': Ok' <<<"$out" && return 1
	return 0
}

# recheck <k> <desc> <series result>: the suite's base Ok and series failure
# of <desc> in run <k>, rerun alone with both perfs; sets bad on a regression
recheck() {
	local k=$1 desc=$2 sres=$3 n=${PERF_SUITE_RECHECK:-100} fb fs lockfd=
	[[ $n =~ ^[0-9]+$ ]] || die "perf-suite: PERF_SUITE_RECHECK must be a number"
	if [ "$n" = 0 ]; then
		echo "perf-suite: run $k of $runs: REGRESSION: '$desc': base Ok, series $sres (no recheck)"
		bad=1
		return
	fi
	# A test is rerun once per suite invocation; later runs reuse its counts.
	if [ -z "${rechecked[$desc]:-}" ]; then
		fb=0 fs=0
		# Under the CPU lock, like the suites.
		if [ "${RIG_CPU_LOCK_HELD:-}" != 1 ]; then
			exec {lockfd}>"$RIG_CACHE/cpu.lock"
			flock "$lockfd"
		fi
		for _ in $(seq "$n"); do
			if fails "$BUILD/perf-base/perf" "$desc"; then fb=$((fb + 1)); fi
			if fails "$BUILD/perf/perf" "$desc"; then fs=$((fs + 1)); fi
		done
		if [ -n "$lockfd" ]; then
			exec {lockfd}>&-
		fi
		rechecked[$desc]="$fb $fs"
	fi
	read -r fb fs <<<"${rechecked[$desc]}"
	if [ "$fb" -gt 0 ]; then
		echo "perf-suite: run $k of $runs: flaky with both perfs: '$desc': base Ok, series $sres" \
			"in the suite; rerun alone $n times each: base failed $fb, series $fs; not counted"
		flaky=$((flaky + 1))
	elif [ "$fs" -gt 0 ]; then
		echo "perf-suite: run $k of $runs: REGRESSION: '$desc': base Ok, series $sres;" \
			"rerun alone $n times each: base failed 0, series $fs"
		bad=1
	else
		echo "perf-suite: run $k of $runs: REGRESSION: '$desc': base Ok, series $sres;" \
			"not reproduced in $n reruns alone of either perf: counted"
		bad=1
	fi
}

# judge <k>: the series run just made against the base run and the
# project's tests; sets bad
judge() {
	local k=$1 desc result s b

	while IFS=$'\t' read -r desc result; do
		s=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$OUT/perf-suite-series.res")
		if [ "$result" = Ok ] && [ "$s" != Ok ]; then
			recheck "$k" "$desc" "${s:-missing}"
		fi
	done <"$OUT/perf-suite-base.res"
	while read -r desc; do
		s=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$OUT/perf-suite-series.res")
		if [ "$s" != Ok ]; then
			echo "perf-suite: run $k of $runs: project test '$desc': ${s:-missing}"
			bad=1
		fi
	done <"$own"
	[ "$k" = 1 ] || return 0
	while IFS=$'\t' read -r desc result; do
		b=$(awk -F'\t' -v d="$desc" '$1 == d { print $2; exit }' "$OUT/perf-suite-base.res")
		if [ "$result" = Ok ] && [ "$b" != Ok ]; then
			echo "perf-suite: fixed or new: '$desc': base ${b:-missing}, series Ok"
		fi
	done <"$OUT/perf-suite-series.res"
}

run_suite base "$BUILD/perf-base/perf"
bad=0
flaky=0
declare -A rechecked=()
for k in $(seq "$runs"); do
	run_suite series "$BUILD/perf/perf"
	judge "$k"
	if [ "$runs" -gt 1 ]; then
		cp "$OUT/perf-suite-series.txt" "$OUT/perf-suite-series.$k.txt"
		cp "$OUT/perf-suite-series.res" "$OUT/perf-suite-series.$k.res"
	fi
done
echo "perf-suite: done in $(( $(date +%s) - start )) s"
if [ $bad != 0 ]; then
	echo "perf-suite: a test that passes with the base, or a project test, failed with the series" \
		"(above); logs in out/perf-suite-*.txt" >&2
	exit 1
fi
echo "perf-suite: no test that passes with the base fails with the series, and the" \
	"$(wc -l <"$own") project tests are Ok, in each of $runs run(s)" \
	"($flaky failure(s) of tests flaky with both perfs, above)"
