#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make perf-flaky [FLAKY_RUNS=300] [FLAKY_TESTS='desc|desc']: perf tests
# that fail now and then with either perf, each run alone FLAKY_RUNS times
# with the base perf and with the series perf, alternating (so both see the
# same machine), under the CPU lock. Prints, per test, the failures of each
# perf. Default tests: the two that perf's whole suite showed flaky with
# both perfs, task-exit.c and sw-clock.c, readers of perf_mmap__read_event()
# and perf_mmap__read_done() (the libperf read_done patch of the series).
# No verdict on counts of chance: the numbers are for the notes and the
# cover letter; the script fails only if a perf is missing or a test was
# not found (every run of it skipped or gave no result).
#
#   PERF_FLAKY_NOBUILD=1    use build/perf-base/perf and build/perf/perf as built
# Results: out/perf-flaky.txt (one line per test).
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
start=$(date +%s)
stage "perf-flaky"
[ "$(id -u)" = 0 ] || die "perf-flaky: must run as root"
runs=${FLAKY_RUNS:-300}
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "perf-flaky: FLAKY_RUNS must be a positive number (got '$runs')"
IFS='|' read -r -a tests <<<"${FLAKY_TESTS:-Number of exit events of a simple workload|Software clock events period values}"
perf_pair perf-flaky "${PERF_FLAKY_NOBUILD:-0}"
work=$(mktemp -d /tmp/perf-flaky.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$OUT"

# result <perf> <desc>: Ok, FAILED, Skip or none (no result line)
result() {
	local out
	out=$(cd "$work" && COLUMNS=300 timeout -k 10 300 "$1" test "$2" 2>&1) || true
	if grep -q ': FAILED!' <<<"$out"; then echo FAILED
	elif grep -q ': Skip' <<<"$out"; then echo Skip
	elif grep -q ': Ok' <<<"$out"; then echo Ok
	else echo none
	fi
}

exec {lockfd}>"$RIG_CACHE/cpu.lock"
flock "$lockfd"
: >"$OUT/perf-flaky.txt"
bad=0
for t in "${tests[@]}"; do
	declare -A n=()
	info "perf-flaky: '$t': $runs runs with each perf, alternating"
	for i in $(seq "$runs"); do
		for k in base series; do
			p=$BUILD/perf/perf
			[ $k = base ] && p=$BUILD/perf-base/perf
			r=$(result "$p" "$t")
			n[$k.$r]=$(( ${n[$k.$r]:-0} + 1 ))
		done
		if [ $((i % 50)) = 0 ]; then
			info "perf-flaky: '$t': $i of $runs: base failed ${n[base.FAILED]:-0}, series ${n[series.FAILED]:-0}"
		fi
	done
	line="perf-flaky: '$t': $runs runs each: base failed ${n[base.FAILED]:-0} (Ok ${n[base.Ok]:-0}, skip ${n[base.Skip]:-0}, no result ${n[base.none]:-0}); series failed ${n[series.FAILED]:-0} (Ok ${n[series.Ok]:-0}, skip ${n[series.Skip]:-0}, no result ${n[series.none]:-0})"
	echo "$line" | tee -a "$OUT/perf-flaky.txt"
	for k in base series; do
		[ $(( ${n[$k.Ok]:-0} + ${n[$k.FAILED]:-0} )) -gt 0 ] ||
			{ echo "perf-flaky: '$t' gave no result with the $k perf"; bad=1; }
	done
	unset n
done
[ $bad = 0 ] || die "perf-flaky: a test gave no result (see above)"
echo "perf-flaky: done in $(($(date +%s) - start)) s; results in ${OUT#"$RIG_TOP"/}/perf-flaky.txt"
