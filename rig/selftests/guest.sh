#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh on arm64): checks that the tests skip
# without the module, loads perf_swaux.ko, runs the perf_events selftests and
# unloads the module. Every output line is prefixed with the program's name;
# "SELFTESTS: result <prog> <exit status>" lines summarise. Exit 0 iff all passed.
dir=${1:?usage: guest.sh DIR [RESULTS_FILE]}
res=${2:-}
mkdir -p /tmp
mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -n "$res" ] && : >"$res"

say() {
	echo "$*"
	[ -z "$res" ] || echo "$*" >>"$res"
}

run() {
	name=$1
	shift
	"$@" >/tmp/selftest.log 2>&1
	st=$?
	while IFS= read -r line; do
		say "$name: $line"
	done </tmp/selftest.log
	say "SELFTESTS: result $name $st"
	return $st
}

rc=0
say "SELFTESTS: begin $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo)"
say "SELFTESTS: pmus $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
rmmod perf_swaux 2>/dev/null
# Without the module: SKIP (4), never fail.
run noswaux "$dir/aux_set_output"
[ "$st" = 4 ] || { say "SELFTESTS: aux_set_output without the module exited $st, want 4"; rc=1; }

if ! insmod "$dir/perf_swaux.ko"; then
	say "SELFTESTS: insmod perf_swaux.ko failed"
	exit 1
fi
run aux_set_output "$dir/aux_set_output" || rc=1
run mmap "$dir/mmap" || rc=1
for f in mismatches dead_writes; do
	say "SELFTESTS: swaux $f $(cat /sys/module/perf_swaux/parameters/$f)"
done
rmmod perf_swaux || { say "SELFTESTS: rmmod perf_swaux failed"; rc=1; }
say "SELFTESTS: end rc=$rc"
exit $rc
