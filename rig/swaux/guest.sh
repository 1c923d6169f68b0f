#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the x86_64 guest (make swaux-perf): loads perf_swaux.ko and
# records the swaux PMU with the host-built perf in several modes into DIR
# (out/, writable from the guest). The recordings are decoded and checked on
# the host (rig/swaux/check.sh): perf is slow to start under TCG with KASAN.
# Prints "swaux-perf: ok|not ok <what>" per step; exit 0 iff all are ok.
perf=${1:?usage: guest.sh PERF KO DIR [RECORDINGS]}
ko=${2:?usage: guest.sh PERF KO DIR [RECORDINGS]}
dir=${3:?usage: guest.sh PERF KO DIR [RECORDINGS]}
mkdir -p "$dir" /tmp
cd /tmp || exit 1
: >"$dir/results.txt"
rc=0

say() {
	echo "$*"
	echo "$*" >>"$dir/results.txt"
}

check() {
	what=$1
	shift
	if "$@"; then
		say "swaux-perf: ok $what"
	else
		say "swaux-perf: not ok $what"
		rc=1
	fi
}

# Record to /tmp (tmpfs), then copy to DIR: writing the AUX area straight
# to the 9p share fails with EFAULT (9p pins the user pages of a write, and
# perf's AUX mapping is VM_PFNMAP).
record() {
	name=$1
	shift
	"$perf" record --no-buildid-cache -e swaux// -o "/tmp/$name.data" "$@" \
		>"$dir/$name.record.log" 2>&1
	st=$?
	check "$name: perf record exits 0 ($st)" [ "$st" = 0 ]
	cp "/tmp/$name.data" "$dir/$name.data" && rm -f "/tmp/$name.data"
}

say "swaux-perf: begin $(uname -r) cpus=$(grep -c ^processor /proc/cpuinfo) perf=$perf"
grep -c ^processor /proc/cpuinfo >"$dir/ncpu"
if ! insmod "$ko"; then
	say "swaux-perf: not ok insmod $ko"
	exit 1
fi

# System wide, one CPU, a workload with forks (inherited per-CPU events),
# per thread, snapshots (SIGUSR2 and at exit).
# SWAUX_RECORDS (the 4th argument) selects some of them: "aio" for the
# --aio A/B (rig/swaux/aio-ab.sh).
records=${4:-sys-a cpu0 fork thread snap aio}
want() { case " $records " in *" $1 "*) return 0 ;; esac; return 1; }
want sys-a && record sys-a -a -- sleep 2
want cpu0 && record cpu0 -C 0 -- sleep 1
want fork && record fork -- sh -c 'for i in 1 2 3 4 5 6; do (n=0; while [ $n -lt 100000 ]; do n=$((n + 1)); done) & done; wait'
want thread && record thread --per-thread -i -- sh -c 'n=0; while [ $n -lt 50000 ]; do n=$((n + 1)); done'
want snap && record snap -a -Se -- sh -c 'sleep 1; kill -USR2 $PPID; sleep 1'
# Compressed, asynchronous writes: the AUX data must not land on top of
# the queued aio writes of the ring buffers.
want aio && record aio -a -z --aio -- sleep 2

for f in mismatches dead_writes; do
	v=$(cat /sys/module/perf_swaux/parameters/$f)
	check "module $f = 0 ($v)" [ "$v" = 0 ]
done
rmmod perf_swaux || { say "swaux-perf: not ok rmmod perf_swaux"; rc=1; }
say "swaux-perf: end rc=$rc"
exit $rc
