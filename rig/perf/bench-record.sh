#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-record: perf record -z throughput, base perf vs series perf.
#
# A busy-looping workload (perf test -w noploop) runs in the background;
# each perf record -z attaches to it (-p) for BENCH_SECS seconds with
# cpu-clock samples every 50 us and 8 KiB dwarf stack dumps, which gives
# some 100+ MB/s of records to compress. Throughput is the "original" size
# perf record reports (MB of records fed to the compressor) divided by the
# CPU time of perf record itself (user + sys, /usr/bin/time; its only child
# is the sleep that bounds the run). Runs alternate base and series,
# BENCH_RUNS (>= 5) of each; prints each run, the median and the spread
# (min..max) per binary, and the series/base ratio of the medians. The goal
# is a ratio of at least 0.98 (the fixes cost at most 2%); the target fails
# only if a run fails, as the ratio is a measurement on a shared machine.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${BENCH_RUNS:-7}
secs=${BENCH_SECS:-3}
[ "$runs" -ge 5 ] || die "bench-record: BENCH_RUNS must be >= 5"
[ "$(id -u)" = 0 ] || die "bench-record: must run as root"
[ "${RIG_CPU_LOCK_HELD:-}" = 1 ] || stage "bench-record ($runs runs x ${secs}s per perf)"
if [ "${BENCH_NOBUILD:-0}" != 1 ]; then
	make -C "$RIG_TOP" --no-print-directory perf BASE=1
	make -C "$RIG_TOP" --no-print-directory perf
fi
# Measure under the CPU lock, workload included: builds would skew it.
if [ "${RIG_CPU_LOCK_HELD:-}" != 1 ]; then
	info "waiting for the CPU lock"
	BENCH_NOBUILD=1 cpu_lock bash "$0"
	exit
fi
base=$BUILD/perf-base/perf
series=$BUILD/perf/perf
for p in "$base" "$series"; do
	[ -x "$p" ] || die "bench-record: $p not built"
done

work=$(mktemp -d /tmp/bench-record.XXXXXX)
"$series" test -w noploop 100000 &
wl=$!
trap 'kill "$wl" 2>/dev/null; rm -rf "$work"' EXIT
sleep 0.5

# one_run <perf>: prints "<MB in> <cpu s> <MB/s>"
one_run() {
	local perf=$1 mb cpu
	/usr/bin/time -f "cpu %U %S" -o "$work/time" \
		"$perf" record -z -p "$wl" -e cpu-clock -c 50000 \
		--call-graph dwarf,8192 -o "$work/perf.data" -- sleep "$secs" \
		>"$work/rec.out" 2>&1 || die "bench-record: $perf record failed: $(tail -3 "$work/rec.out")"
	mb=$(sed -nE 's/.*original ([0-9.]+) MB.*/\1/p' "$work/rec.out" | tail -1)
	cpu=$(awk '$1 == "cpu" { print $2 + $3 }' "$work/time")
	if [ -z "$mb" ] || [ -z "$cpu" ]; then
		die "bench-record: no size or time: $(cat "$work/rec.out")"
	fi
	awk -v m="$mb" -v c="$cpu" 'BEGIN { printf "%.1f %.2f %.1f\n", m, c, (c > 0 ? m / c : 0) }'
}

: >"$work/base"
: >"$work/series"
for i in $(seq "$runs"); do
	for which in base series; do
		if [ $which = base ]; then p=$base; else p=$series; fi
		r=$(one_run "$p")
		echo "bench-record: run $i $which: $r (MB in, CPU s, MB/s)"
		echo "$r" >>"$work/$which"
	done
done

# stats <file>: "median min max" of column 3
stats() {
	awk '{ print $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}
read -r bm bmin bmax < <(stats "$work/base")
read -r sm smin smax < <(stats "$work/series")
echo "bench-record: base   median ${bm} MB/s (spread ${bmin}..${bmax}, $runs runs)"
echo "bench-record: series median ${sm} MB/s (spread ${smin}..${smax}, $runs runs)"
awk -v s="$sm" -v b="$bm" 'BEGIN {
	r = s / b
	printf "bench-record: series/base = %.3f (goal >= 0.98: %s)\n", r, (r >= 0.98 ? "met" : "NOT met")
}'
