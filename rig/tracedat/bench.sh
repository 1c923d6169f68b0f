#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make bench: throughput (input MB/s) and peak RSS of
#   perf data convert --to-trace-dat, --to-json, perf script, perf script -F time
# on tracepoint recordings of about 50 MB and 500 MB (SIZES="50 500", in MB),
# printed with ratios against --to-json and perf script -F time, then checked
# against the goals (exit 1 if one is missed): per size, --to-trace-dat at
# least 3x the MB/s of --to-json, at most 1.5x the time of perf script -F time
# and at most 32 MB more peak RSS than it; peak RSS of the largest input at
# most 16 MB above that of the smallest (flat).
# Runs under the rig's CPU lock; recordings are kept in $out for reruns.
set -euo pipefail

perf=${1:?usage: bench.sh <perf binary> <out dir>}
out=${2:?usage: bench.sh <perf binary> <out dir>}
sizes=${SIZES:-50 500}
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

# Record until the file reaches about $1 MB.
record() {
	local mb=$1 data=$2

	[ -s "$data" ] && return 0
	echo "bench: recording ~${mb} MB into $data"
	"$perf" record -q -a -o "$data" -m 1024 \
		-e sched:sched_switch -e sched:sched_wakeup \
		-e sched:sched_stat_runtime -e irq:softirq_entry \
		-e irq:softirq_exit -- bash -c "
			while [ \$(stat -c %s '$data' 2>/dev/null || echo 0) -lt $((mb * 1000000)) ]; do
				'$perf' bench sched messaging -g 4 -l 200 >/dev/null 2>&1
			done" 2>/dev/null
}

# measure <label> <cmd...>: prints "<seconds> <max RSS KB>"
measure() {
	local tf
	tf=$(mktemp)
	/usr/bin/time -f "%e %M" -o "$tf" "$@" >/dev/null 2>&1 || {
		echo "bench: failed: $*" >&2
		rm -f "$tf"
		return 1
	}
	tail -1 "$tf"
	rm -f "$tf"
}

run_size() {
	local mb=$1
	local data="$out/bench-${mb}MB.data" in_mb
	local dat json script ftime

	record "$mb" "$data"
	in_mb=$(awk -v s="$(stat -c %s "$data")" 'BEGIN { printf "%.1f", s / 1e6 }')
	dat=$(measure "$perf" data convert -i "$data" --force --to-trace-dat "$out/bench.dat")
	json=$(measure "$perf" data convert -i "$data" --force --to-json "$out/bench.json")
	script=$(measure "$perf" script -i "$data")
	ftime=$(measure "$perf" script -i "$data" -F time)
	awk -v mb="$in_mb" -v dat="$dat" -v json="$json" -v script="$script" \
	    -v ftime="$ftime" 'BEGIN {
		split(dat, d); split(json, j); split(script, s); split(ftime, f)
		printf "bench: %s MB input\n", mb
		printf "  %-22s %8s %9s %10s\n", "tool", "seconds", "MB/s", "peak RSS MB"
		printf "  %-22s %8.2f %9.1f %10.1f\n", "--to-trace-dat", d[1], mb / d[1], d[2] / 1024
		printf "  %-22s %8.2f %9.1f %10.1f\n", "--to-json", j[1], mb / j[1], j[2] / 1024
		printf "  %-22s %8.2f %9.1f %10.1f\n", "perf script", s[1], mb / s[1], s[2] / 1024
		printf "  %-22s %8.2f %9.1f %10.1f\n", "perf script -F time", f[1], mb / f[1], f[2] / 1024
		printf "  ratio MB/s trace-dat/json      %.2fx (goal >= 3)\n", j[1] / d[1]
		printf "  ratio time trace-dat/-F time   %.2fx (goal <= 1.5)\n", d[1] / f[1]
		printf "  RSS trace-dat - (-F time)      %+.1f MB (goal <= 32)\n", (d[2] - f[2]) / 1024
		printf "RESULT size=%s dat_s=%s dat_rss_kb=%s json_s=%s script_s=%s ftime_s=%s ftime_rss_kb=%s\n", \
			mb, d[1], d[2], j[1], s[1], f[1], f[2]
	}' | tee -a "$out/bench.txt"
}

: > "$out/bench.txt"
for mb in $sizes; do
	if [ "${RIG_CPU_LOCK_HELD:-}" = 1 ]; then
		run_size "$mb"
	else
		RIG_CPU_LOCK_HELD=1 flock "$lock" bash -c "$(declare -f record measure run_size); \
			perf='$perf' out='$out'; run_size $mb"
	fi
done
rc=0
awk '/^RESULT/ { split($0, a, /[ =]/); rss[n++] = a[7] }
     END { if (n > 1) printf "bench: --to-trace-dat peak RSS %0.1f MB -> %0.1f MB from smallest to largest input\n", rss[0] / 1024, rss[n - 1] / 1024 }' \
	"$out/bench.txt" | tee -a "$out/bench.txt"
awk 'function goal(ok, what) {
		printf "bench: goal %-58s %s\n", what, ok ? "met" : "MISSED"
		if (!ok)
			missed++
	}
	/^RESULT/ {
		split($0, a, /[ =]/)
		mb = a[3]; dat = a[5]; rss = a[7]; json = a[9]; ftime = a[13]; frss = a[15]
		goal(json / dat >= 3, sprintf("%s MB: MB/s >= 3x --to-json (%.2fx)", mb, json / dat))
		goal(dat / ftime <= 1.5, sprintf("%s MB: time <= 1.5x -F time (%.2fx)", mb, dat / ftime))
		goal(rss - frss <= 32 * 1024, sprintf("%s MB: RSS <= -F time + 32 MB (%+.1f MB)", mb, (rss - frss) / 1024))
		r[n++] = rss
	}
	END {
		if (n > 1)
			goal(r[n - 1] - r[0] <= 16 * 1024, sprintf("RSS flat, largest - smallest input <= 16 MB (%+.1f MB)", (r[n - 1] - r[0]) / 1024))
		exit missed > 0
	}' "$out/bench.txt" >"$out/goals.txt" || rc=1
tee -a "$out/bench.txt" <"$out/goals.txt"
rm -f "$out/goals.txt"
echo "bench: done in $(( $(date +%s) - t_start )) s; results in $out/bench.txt"
exit $rc
