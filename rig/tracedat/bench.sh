#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: throughput (input MB/s), peak RSS and peak anonymous memory
# (RssAnon: peak RSS also counts perf's file-backed mapping of the input) of
#   perf data convert --to-trace-dat, --to-json, perf report --stats,
#   perf script -F time
# on system-wide tracepoint recordings, plain and recorded with perf record
# -z: INPUTS (default "sched:50 sched:500 heavy:450") and ZINPUTS (default
# "sched:50 sched:500 heavy:40"), KIND:MB each, MB the size of the file.
#   sched  scheduler events of perf bench sched messaging (events of 70 to
#          100 bytes with perf's sample header)
#   heavy  millions of small events: sched_switch/wakeup, kmem:kmalloc/kfree
#          and softirq_entry of find(1) runs over /usr
# Each number is the median of REPEAT (default 5) runs.  The converter and
# perf report --stats run in pairs, one after the other, which goes first
# alternating, and their ratio is the median of the per-pair ratios: the
# speed of this shared machine drifts by tens of percent over a minute, and
# a ratio of two medians taken a minute apart carries that drift.  Checked
# against the goals (exit 1 if one is missed): per input, --to-trace-dat at
# least 3x the MB/s of --to-json and at most 1.2x the time of perf report
# --stats (which reads every event and does nothing per event); peak
# anonymous memory of the inputs within 16 MB of each other, for plain and
# -z inputs.
# Runs under the rig's CPU lock; recordings are kept in $out for reruns
# (delete them to record again with a new perf).
set -euo pipefail

perf=${1:?usage: bench.sh <perf binary> <out dir>}
out=${2:?usage: bench.sh <perf binary> <out dir>}
inputs=${INPUTS:-sched:50 sched:500 heavy:450}
zinputs=${ZINPUTS:-sched:50 sched:500 heavy:40}
lock=${RIG_CACHE:-/var/cache/trbe-rig}/cpu.lock
tracefs=/sys/kernel/tracing
mounted=""
t_start=$(date +%s)

if [ ! -x "$perf" ]; then
	echo "bench: $perf not built; run 'make perf'" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "bench: must run as root (system-wide tracepoint recording)" >&2
	exit 1
fi
mkdir -p "$out"
cleanup() {
	rm -f "$out"/bench.dat "$out"/bench.json "$out"/bench.dat.tmp*
	if [ -n "$mounted" ]; then umount "$tracefs" || true; fi
}
trap cleanup EXIT
if [ ! -e "$tracefs/events/header_page" ]; then
	mount -t tracefs nodev "$tracefs"
	mounted=1
fi

# Record a KIND ($1) input until the file reaches about $2 MB into $3
# ($4 = z: with perf record -z).
record() {
	local kind=$1 mb=$2 data=$3 z=${4:-} ev work

	[ -s "$data" ] && return 0
	case "$kind" in
	sched)
		ev="-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_stat_runtime"
		ev="$ev -e irq:softirq_entry -e irq:softirq_exit"
		work="'$perf' bench sched messaging -g 4 -l 200 >/dev/null 2>&1" ;;
	heavy)
		ev="-e sched:sched_switch -e sched:sched_wakeup -e kmem:kmalloc"
		ev="$ev -e kmem:kfree -e irq:softirq_entry"
		work="find /usr -xdev >/dev/null 2>&1" ;;
	*)
		echo "bench: unknown input kind '$kind' (sched or heavy)" >&2
		return 1 ;;
	esac
	echo "bench: recording ~${mb} MB of $kind events${z:+ with -z} into $data"
	# shellcheck disable=SC2086 # $ev is a list of options
	"$perf" record -q -a -o "$data" -m 1024 ${z:+-z} $ev -- bash -c "
			while [ \$(stat -c %s '$data' 2>/dev/null || echo 0) -lt $((mb * 1000000)) ]; do
				$work
			done" 2>/dev/null
}

# measure <cmd...>: run it $REPEAT times (default 3) and print the median
# "<seconds> <peak RSS KB> <peak RssAnon KB>".  Peak RSS counts perf's
# file-backed mapping of the input; RssAnon is the memory the tool
# allocates, sampled every 10 ms from /proc/<pid>/status.
measure() {
	local pid t0 t1 k v st hwm anon maxanon rows="" tick
	exec {tick}<> <(:)
	for _ in $(seq 1 "${REPEAT:-5}"); do
		maxanon=0
		hwm=0
		# No earlier run's output left to write back during this one:
		# a 200 MB -z conversion writes 1.5 GB (spill files and the
		# output), and back-to-back runs reach the dirty page limits.
		rm -f "$out"/bench.dat "$out"/bench.json
		sync
		t0=$(date +%s%N)
		"$@" >/dev/null 2>&1 &
		pid=$!
		st=R
		# Until it exits (a zombie until the wait below).
		while [ "$st" != Z ] && [ -e "/proc/$pid/status" ]; do
			anon=0
			while read -r k v _; do
				case "$k" in
				State:) st=$v ;;
				RssAnon:) anon=$v ;;
				VmHWM:) [ "$v" -gt "$hwm" ] && hwm=$v ;;
				esac
			done 2>/dev/null <"/proc/$pid/status" || true
			[ "$anon" -gt "$maxanon" ] && maxanon=$anon
			read -r -t 0.01 -u "$tick" _ || true
		done
		if ! wait "$pid"; then
			echo "bench: failed: $*" >&2
			exec {tick}<&-
			return 1
		fi
		t1=$(date +%s%N)
		rows="$rows$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }') $hwm $maxanon
"
	done
	exec {tick}<&-
	# The median of each column on its own.
	printf '%s' "$rows" | median3
}

# median3: the median of each of the (up to three) columns of stdin
median3() {
	awk '{ for (c = 1; c <= 3; c++) v[c, NR] = $c }
		function med(c, n,   i, j, x, t) {
			for (i = 1; i <= n; i++)
				x[i] = v[c, i]
			for (i = 2; i <= n; i++) {
				t = x[i]
				for (j = i - 1; j > 0 && x[j] > t; j--)
					x[j + 1] = x[j]
				x[j + 1] = t
			}
			return x[int((n + 1) / 2)]
		}
		END { print med(1, NR), med(2, NR), med(3, NR) }'
}

run_input() {
	local kind=${1%%:*} mb=${1#*:} z=${2:-}
	local data="$out/bench-$kind-${mb}MB${z:+-z}.data" in_mb
	local dat json stats ftime

	record "$kind" "$mb" "$data" "$z"
	in_mb=$(awk -v s="$(stat -c %s "$data")" 'BEGIN { printf "%.1f", s / 1e6 }')
	local i d st pairs="" dats="" statss=""
	# The converter and report --stats in pairs (see the top).
	for i in $(seq 1 "${REPEAT:-5}"); do
		if [ $((i % 2)) = 1 ]; then
			d=$(REPEAT=1 measure "$perf" data convert -i "$data" --force \
				--to-trace-dat "$out/bench.dat")
			st=$(REPEAT=1 measure "$perf" report -i "$data" --stats)
		else
			st=$(REPEAT=1 measure "$perf" report -i "$data" --stats)
			d=$(REPEAT=1 measure "$perf" data convert -i "$data" --force \
				--to-trace-dat "$out/bench.dat")
		fi
		dats="$dats$d
"
		statss="$statss$st
"
		pairs="$pairs$(awk -v d="$d" -v s="$st" 'BEGIN {
			split(d, a); split(s, b); printf "%.4f", a[1] / b[1] }')
"
	done
	dat=$(printf '%s' "$dats" | median3)
	stats=$(printf '%s' "$statss" | median3)
	pair=$(printf '%s' "$pairs" | median3 | awk '{ print $1 }')
	json=$(measure "$perf" data convert -i "$data" --force --to-json "$out/bench.json")
	ftime=$(measure "$perf" script -i "$data" -F time)
	awk -v kind="$kind" -v mb="$in_mb" -v z="${z:+-z}" -v dat="$dat" -v json="$json" -v stats="$stats" \
	    -v ftime="$ftime" -v pair="$pair" -v pairs="$(printf '%s' "$pairs" | sort -n | tr '\n' ' ')" 'BEGIN {
		split(dat, d); split(json, j); split(stats, s); split(ftime, f)
		printf "bench: %s %s MB %sinput (median of %d runs)\n", kind, mb, z ? "-z " : "", '"${REPEAT:-5}"'
		printf "  %-22s %8s %9s %12s %14s\n", "tool", "seconds", "MB/s", "peak RSS MB", "peak anon MB"
		printf "  %-22s %8.2f %9.1f %12.1f %14.1f\n", "--to-trace-dat", d[1], mb / d[1], d[2] / 1024, d[3] / 1024
		printf "  %-22s %8.2f %9.1f %12.1f %14.1f\n", "--to-json", j[1], mb / j[1], j[2] / 1024, j[3] / 1024
		printf "  %-22s %8.2f %9.1f %12.1f %14.1f\n", "perf report --stats", s[1], mb / s[1], s[2] / 1024, s[3] / 1024
		printf "  %-22s %8.2f %9.1f %12.1f %14.1f\n", "perf script -F time", f[1], mb / f[1], f[2] / 1024, f[3] / 1024
		printf "  ratio MB/s trace-dat/json         %.2fx (goal >= 3)\n", j[1] / d[1]
		printf "  ratio time trace-dat/report-stats %.2fx, median of the pairs (goal <= 1.2; pairs: %s)\n", pair, pairs
		printf "RESULT kind=%s size=%s z=%s dat_s=%s dat_rss_kb=%s dat_anon_kb=%s json_s=%s stats_s=%s ftime_s=%s pair=%s\n", \
			kind, mb, z ? 1 : 0, d[1], d[2], d[3], j[1], s[1], f[1], pair
	}' | tee -a "$out/bench.txt"
}

: > "$out/bench.txt"
for z in "" z; do
	list=$inputs
	[ -n "$z" ] && list=$zinputs
	for inp in $list; do
		if [ "${RIG_CPU_LOCK_HELD:-}" = 1 ]; then
			run_input "$inp" "$z"
		else
			RIG_CPU_LOCK_HELD=1 flock "$lock" bash -c "set -euo pipefail; \
				$(declare -f record measure median3 run_input); \
				perf='$perf' out='$out' REPEAT='${REPEAT:-5}'; run_input '$inp' '$z'"
		fi
	done
done
rc=0
awk 'function goal(ok, what) {
		printf "bench: goal %-66s %s\n", what, ok ? "met" : "MISSED"
		if (!ok)
			missed++
	}
	/^RESULT/ {
		split($0, a, /[ =]/)
		kind = a[3]; mb = a[5]; z = a[7]; dat = a[9]; anon = a[13]; json = a[15]; pair = a[21]
		zs = z ? " -z" : ""
		what = sprintf("%s %s MB%s", kind, mb, zs)
		goal(json / dat >= 3, sprintf("%s: MB/s >= 3x --to-json (%.2fx)", what, json / dat))
		goal(pair <= 1.2, sprintf("%s: time <= 1.2x perf report --stats (%.2fx)", what, pair))
		n[z]++
		if (n[z] == 1 || anon < lo[z])
			lo[z] = anon
		if (n[z] == 1 || anon > hi[z])
			hi[z] = anon
	}
	END {
		# z is an array index here, a string: "0" is true, z + 0 is not.
		for (z in n) {
			what = sprintf("anon memory flat%s, largest - smallest <= 16 MB",
				       z + 0 ? " (-z)" : " (plain)")
			if (n[z] < 2)
				printf "bench: goal %-66s %s\n", what, "not judged: one input"
			else
				goal(hi[z] - lo[z] <= 16 * 1024,
				     sprintf("%s (%+.1f MB)", what, (hi[z] - lo[z]) / 1024))
		}
		exit missed > 0
	}' "$out/bench.txt" >"$out/goals.txt" || rc=1
tee -a "$out/bench.txt" <"$out/goals.txt"
rm -f "$out/goals.txt"
echo "bench: done in $(( $(date +%s) - t_start )) s; results in $out/bench.txt"
exit $rc
