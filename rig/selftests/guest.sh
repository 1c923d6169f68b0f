#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh on arm64): checks that aux_set_output
# skips when it finds no perf_swaux.ko next to it, runs it (it loads and
# unloads the module itself), then loads the module for the mmap test.
# Every output line is prefixed with the program's name; "SELFTESTS: result
# <prog> <exit status>" lines summarise. Exit 0 iff all passed.
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
ncpu=$(grep -c ^processor /proc/cpuinfo)
say "SELFTESTS: begin $(uname -r) cpus=$ncpu"
say "SELFTESTS: pmus $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
# aux_set_output's CPU X is the last online CPU
say "SELFTESTS: $(sh "$dir/quiet-cpu.sh" $((ncpu - 1)))"
rmmod perf_swaux 2>/dev/null
# No perf_swaux.ko next to it: SKIP (4), never fail.
mkdir -p /tmp/noswaux
cp "$dir/aux_set_output" /tmp/noswaux/
run noswaux /tmp/noswaux/aux_set_output
[ "$st" = 4 ] || { say "SELFTESTS: aux_set_output without the module exited $st, want 4"; rc=1; }

# aux_set_output loads perf_swaux.ko from its directory and unloads it.
run aux_set_output "$dir/aux_set_output" || rc=1
if [ -d /sys/module/perf_swaux ]; then
	say "SELFTESTS: aux_set_output left perf_swaux loaded"
	rc=1
	rmmod perf_swaux
fi

if ! insmod "$dir/perf_swaux.ko"; then
	say "SELFTESTS: insmod perf_swaux.ko failed"
	exit 1
fi
say "SELFTESTS: swaux lifetime $(cat /sys/module/perf_swaux/parameters/lifetime)"
run mmap "$dir/mmap" || rc=1
rmmod perf_swaux || { say "SELFTESTS: rmmod perf_swaux failed"; rc=1; }
say "SELFTESTS: end rc=$rc"
exit $rc
