#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-record: perf record -z throughput, base perf vs series perf.
#
# A workload runs in the background; each perf record -z attaches to it
# (-p) with cpu-clock samples every 50 us and 8 KiB dwarf stack dumps, which
# gives some 100+ MB/s of records to compress. Two workloads: perf test -w
# noploop (the same stack in every sample: zstd compresses it some 400x) and
# cksum(1) of /dev/urandom (random bytes in its stack buffer: some 4.5x, zstd
# does real work). Throughput is the "original" size perf record reports (MB of
# records fed to the compressor) divided by the CPU time of perf record
# itself (user + sys, /usr/bin/time; its only child is the sleep that
# bounds the run). perf record and the workload run on CPUs of their own.
# Two measurements, runs alternating base and series (which goes first
# alternates too), BENCH_RUNS (>= 5) of each; each prints every run, the
# median and the spread (min..max) per binary, the series/base ratio of the
# medians and the median of the per-pair ratios (run i of each), on which
# the goal is judged:
#
#   record    perf record -z -B for BENCH_SECS (default 10) s, on each
#             workload: reading the ring buffers, compressing, writing;
#             what the record -z fixes change. The goal is a ratio of at
#             least 0.98 (the fixes cost at most 2%).
#   +buildid  perf record -z of noploop for BENCH_BUILDID_SECS (default 3)
#             s, with the
#             build-id pass that reads the whole file back at the end (what
#             a user runs by default). Not a goal: the base perf keeps every
#             decompressed buffer until that pass ends (peak RSS printed),
#             the series releases them, so the series is faster here.
#
# The target fails only if a run fails, as the ratios are measurements on a
# shared machine.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${BENCH_RUNS:-9}
secs=${BENCH_SECS:-10}
bsecs=${BENCH_BUILDID_SECS:-3}
[ "$runs" -ge 5 ] || die "bench-record: BENCH_RUNS must be >= 5"
[ "$(id -u)" = 0 ] || die "bench-record: must run as root"
[ "${RIG_CPU_LOCK_HELD:-}" = 1 ] || stage "bench-record ($runs runs x (${secs} + ${bsecs}) s per perf)"
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

# The workload and perf record on CPUs of their own (the last two): each
# run then competes with neither the other nor the scheduler's choices.
ncpu=$(nproc)
[ "$ncpu" -ge 2 ] || die "bench-record: needs two CPUs"
wl_cpu=$((ncpu - 1))
perf_cpu=$((ncpu - 2))

work=$(mktemp -d /tmp/bench-record.XXXXXX)
wl=
trap 'if [ -n "$wl" ]; then kill "$wl" 2>/dev/null; fi; rm -rf "$work"' EXIT

# workload noploop|cksum: start it in the background, its pid in wl
workload() {
	case $1 in
	noploop) taskset -c "$wl_cpu" "$series" test -w noploop 100000 & ;;
	cksum) taskset -c "$wl_cpu" cksum /dev/urandom >/dev/null & ;;
	esac
	wl=$!
	sleep 0.5
}

# end_workload: stop the workload
end_workload() {
	kill "$wl" 2>/dev/null
	wait "$wl" 2>/dev/null || true
	wl=
}

# one_run <perf> <secs> [args]:
# prints "<MB in> <cpu s> <MB/s> <peak RSS MB> <compression ratio>"
one_run() {
	local perf=$1 secs=$2 mb cpu rss ratio
	shift 2
	/usr/bin/time -f "cpu %U %S %M" -o "$work/time" \
		taskset -c "$perf_cpu" "$perf" record "$@" -z -p "$wl" -e cpu-clock -c 50000 \
		--call-graph dwarf,8192 -o "$work/perf.data" -- sleep "$secs" \
		>"$work/rec.out" 2>&1 || die "bench-record: $perf record failed: $(tail -3 "$work/rec.out")"
	mb=$(sed -nE 's/.*original ([0-9.]+) MB.*/\1/p' "$work/rec.out" | tail -1)
	cpu=$(awk '$1 == "cpu" { print $2 + $3 }' "$work/time")
	rss=$(awk '$1 == "cpu" { print $4 / 1024 }' "$work/time")
	ratio=$(sed -nE 's/.*ratio is ([0-9.]+).*/\1/p' "$work/rec.out" | tail -1)
	if [ -z "$mb" ] || [ -z "$cpu" ]; then
		die "bench-record: no size or time: $(cat "$work/rec.out")"
	fi
	awk -v m="$mb" -v c="$cpu" -v r="$rss" -v z="${ratio:-0}" \
		'BEGIN { printf "%.1f %.2f %.1f %.0f %.1f\n", m, c, (c > 0 ? m / c : 0), r, z }'
}

# stats <file>: "median min max" of column 3
stats() {
	awk '{ print $3 }' "$1" | sort -n | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.1f %.1f %.1f\n", m, v[1], v[NR] }'
}

# measure <name> <workload> <secs> [args]: the alternating runs, the
# medians, the ratio
measure() {
	local name="$1 $2" secs=$3 i which order p r pr bm bmin bmax sm smin smax
	workload "$2"
	shift 3
	: >"$work/base"
	: >"$work/series"
	for i in $(seq "$runs"); do
		# Which goes first alternates, so neither is always second.
		order="base series"
		[ $((i % 2)) = 1 ] || order="series base"
		for which in $order; do
			if [ $which = base ]; then p=$base; else p=$series; fi
			r=$(one_run "$p" "$secs" "$@")
			echo "bench-record: $name run $i $which: $r (MB in, CPU s, MB/s, peak RSS MB, zstd ratio)"
			echo "$r" >>"$work/$which"
		done
	done
	end_workload
	read -r bm bmin bmax < <(stats "$work/base")
	read -r sm smin smax < <(stats "$work/series")
	echo "bench-record: $name base   median ${bm} MB/s (spread ${bmin}..${bmax}, $runs runs)"
	echo "bench-record: $name series median ${sm} MB/s (spread ${smin}..${smax}, $runs runs)"
	# Run i of the series against run i of the base: drift of the
	# machine's speed over the measurement cancels in each pair.
	pr=$(paste -d' ' "$work/base" "$work/series" |
		awk '{ print ($3 > 0 ? $8 / $3 : 0) }' | sort -n | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }')
	awk -v s="$sm" -v b="$bm" -v n="$name" -v g="$goal" -v pr="$pr" 'BEGIN {
		split(pr, p, " ")
		printf "bench-record: %s series/base: ratio of medians %.3f; per pair median %.3f (%.3f..%.3f)", n, s / b, p[1], p[2], p[3]
		if (g)
			printf " (goal: per pair median >= 0.98: %s)\n", (p[1] >= 0.98 ? "met" : "NOT met")
		else
			printf " (no goal)\n"
	}'
}

goal=1
measure record noploop "$secs" -B
measure record cksum "$secs" -B
goal=0
measure +buildid noploop "$bsecs"
