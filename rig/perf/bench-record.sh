#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench-record: perf record -z throughput, base perf vs series perf.
#
# Two measurements, each base against series in the same run:
#
#   replay    The code the record -z fixes change, on the same input for
#             both: perf record -B (no -z) of a workload for
#             BENCH_REPLAY_SECS (default 2) s (at least 16 MB of records,
#             or the target fails), then its records, cut into
#             pushes of 64 KiB and of 512 KiB as a ring buffer hands them
#             to record__pushfn(), compressed by rig/perf/bench-zstd.c
#             built against the base tree's and the series'
#             tools/perf/util/zstd.c (zstd_compress_stream_to_records(),
#             level 1, COMPRESSED2 records as perf record writes them).
#             Counted two ways: instructions of the compression (valgrind
#             --tool=callgrind, one pass each; the same every run, so the
#             ratio does not depend on the machine), on which the goal is
#             judged: series/base instructions <= 1.02, i.e. throughput
#             within 2%; and CPU seconds of BENCH_RUNS alternating runs
#             (median of the per-pair ratios, shown, no goal).
#   record    perf record -z -B of the live workload for BENCH_SECS
#             (default 10) s: MB of records fed to the compressor per CPU
#             second of perf record (user + sys, /usr/bin/time), runs
#             alternating base and series. Shown with no goal: perf record
#             spends under a second of CPU per run here and the run-to-run
#             spread is +-30%, fifteen times the 2% to be shown.
#   +buildid  perf record -z of noploop for BENCH_BUILDID_SECS (default 3)
#             s with the build-id pass that reads the whole file back (what
#             a user runs by default). No goal: the base perf keeps every
#             decompressed buffer until that pass ends (peak RSS printed),
#             the series releases them, so the series is faster here.
#
# Workloads: perf test -w noploop (the same stack in every sample: zstd
# compresses it some 900x) and cksum(1) of /dev/urandom (random bytes in its
# stack buffer: some 4.5x, zstd does real work), sampled with cpu-clock
# every 50 us with 8 KiB dwarf stack dumps; workload and perf on CPUs of
# their own. BENCH_RUNS (default 9, at least 5) runs per binary; which goes
# first alternates. The target fails if a run fails or the replay goal is
# missed.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
runs=${BENCH_RUNS:-9}
secs=${BENCH_SECS:-10}
bsecs=${BENCH_BUILDID_SECS:-3}
rsecs=${BENCH_REPLAY_SECS:-2}
[ "$runs" -ge 5 ] || die "bench-record: BENCH_RUNS must be >= 5"
[ "$(id -u)" = 0 ] || die "bench-record: must run as root"
[ "${RIG_CPU_LOCK_HELD:-}" = 1 ] || stage "bench-record (replay, then $runs runs x (${secs} + ${bsecs}) s per perf)"
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
command -v valgrind >/dev/null || die "bench-record: valgrind not installed (make deps)"

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

# build_replay: rig/perf/bench-zstd.c against each tree's zstd.c, into
# $work/bench-zstd-{base,series}. The tree's tags name the two versions;
# util/debug.h is replaced by a stub with the one macro zstd.c uses.
build_replay() {
	local v d
	mkdir -p "$work/stub/util"
	printf '%s\n' '#include <stdio.h>' \
		'#define pr_err(...) fprintf(stderr, __VA_ARGS__)' >"$work/stub/util/debug.h"
	for v in base series; do
		d=$work/src-$v
		mkdir -p "$d/util"
		git -C "$TREE" show "$v:tools/perf/util/zstd.c" >"$d/util/zstd.c"
		git -C "$TREE" show "$v:tools/perf/util/compress.h" >"$d/util/compress.h"
		gcc -O2 -g -Wall -Werror -DHAVE_ZSTD_SUPPORT -I"$work/stub" -I"$d" \
			-I"$TREE/tools/include" -o "$work/bench-zstd-$v" \
			"$RIG_TOP/rig/perf/bench-zstd.c" "$d/util/zstd.c" -lzstd ||
			die "bench-record: cannot build rig/perf/bench-zstd.c against the $v tree"
	done
}

# replay <workload>: record it without -z, then compress the recording
# with both builds of bench-zstd: instructions (the goal) and CPU time.
replay() {
	local w=$1 kib which i order r n ib is ratio pr mb bm bmin bmax sm smin smax
	workload "$w"
	taskset -c "$perf_cpu" "$series" record -B -p "$wl" -e cpu-clock -c 50000 \
		--call-graph dwarf,8192 -o "$work/replay.data" -- sleep "$rsecs" \
		>"$work/rec.out" 2>&1 || die "bench-record: perf record failed: $(tail -3 "$work/rec.out")"
	end_workload
	mb=$(stat -c %s "$work/replay.data")
	[ "$mb" -ge 16000000 ] ||
		die "bench-record: replay: $w gave only $mb bytes in $rsecs s; a busy machine? (BENCH_REPLAY_SECS)"
	for kib in 64 512; do
		for which in base series; do
			valgrind --tool=callgrind --toggle-collect=replay \
				--callgrind-out-file=/dev/null "$work/bench-zstd-$which" \
				"$work/replay.data" "$kib" 1 >"$work/cg.out" 2>"$work/cg.err" ||
				die "bench-record: bench-zstd-$which under callgrind failed: $(tail -3 "$work/cg.err")"
			n=$(sed -nE 's/.*Collected : ([0-9]+).*/\1/p' "$work/cg.err")
			# Zero when --toggle-collect found no replay(): no data, no verdict.
			[ -n "$n" ] && [ "$n" -gt 0 ] ||
				die "bench-record: no instruction count from callgrind: $(tail -3 "$work/cg.err")"
			if [ $which = base ]; then ib=$n; else is=$n; fi
			read -r mb _ _ r _ <"$work/cg.out"
			echo "bench-record: replay $w ${kib} KiB pushes $which: $mb MB in, $r bytes out, $n instructions"
		done
		ratio=$(awk -v b="$ib" -v s="$is" 'BEGIN { printf "%.4f", s / b }')
		awk -v r="$ratio" -v n="replay $w ${kib} KiB pushes" 'BEGIN {
			printf "bench-record: %s series/base instructions %.4f (goal: <= 1.02: %s)\n", n, r, (r <= 1.02 ? "met" : "NOT met")
		}'
		awk -v r="$ratio" 'BEGIN { exit !(r <= 1.02) }' || missed=1
		# CPU time, alternating, BENCH_REPLAY_PASSES (3) passes per run
		: >"$work/base"
		: >"$work/series"
		for i in $(seq "$runs"); do
			order="base series"
			[ $((i % 2)) = 1 ] || order="series base"
			for which in $order; do
				taskset -c "$perf_cpu" "$work/bench-zstd-$which" "$work/replay.data" \
					"$kib" "${BENCH_REPLAY_PASSES:-3}" >"$work/r.out" ||
					die "bench-record: bench-zstd-$which failed"
				# bench-zstd prints "<MB in> <CPU s> <MB/s> ...": keep
				# the three columns stats() and the pair ratio read
				awk '{ print $1, $2, $3 }' "$work/r.out" >>"$work/$which"
			done
		done
		read -r bm bmin bmax < <(stats "$work/base")
		read -r sm smin smax < <(stats "$work/series")
		pr=$(pair_ratios | awk '{ printf "%.3f (%.3f..%.3f)", $1, $2, $3 }')
		echo "bench-record: replay $w ${kib} KiB pushes CPU time: base median $bm MB/s ($bmin..$bmax), series $sm ($smin..$smax), series/base per pair $pr, $runs runs (no goal)"
	done
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

# pair_ratios: "median min max" of series/base of column 3 (MB/s), run i of
# $work/series against run i of $work/base: drift of the machine's speed
# over the measurement cancels in each pair.
pair_ratios() {
	paste -d' ' <(awk '{ print $3 }' "$work/base") <(awk '{ print $3 }' "$work/series") |
		awk '{ print ($1 > 0 ? $2 / $1 : 0) }' | sort -n | awk '{ v[NR] = $1 } END {
		m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		printf "%.3f %.3f %.3f\n", m, v[1], v[NR] }'
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
	pr=$(pair_ratios)
	awk -v s="$sm" -v b="$bm" -v n="$name" -v g="$goal" -v pr="$pr" 'BEGIN {
		split(pr, p, " ")
		printf "bench-record: %s series/base: ratio of medians %.3f; per pair median %.3f (%.3f..%.3f)", n, s / b, p[1], p[2], p[3]
		if (g)
			printf " (goal: per pair median >= 0.98: %s)\n", (p[1] >= 0.98 ? "met" : "NOT met")
		else
			printf " (no goal)\n"
	}'
}

missed=0
build_replay
replay noploop
replay cksum
goal=0
measure record noploop "$secs" -B
measure record cksum "$secs" -B
measure +buildid noploop "$bsecs"
if [ $missed != 0 ]; then
	echo "bench-record: the replay goal (series/base instructions <= 1.02) is NOT met" >&2
	exit 1
fi
