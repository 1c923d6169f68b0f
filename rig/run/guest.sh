#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make run, guest half: load perf_swaux.ko, run the redirect scenario, unload.
#
#   guest.sh PERF KO FLOW R CPU [RUNS]
#
# x86_64 (the host root is the guest's root over 9p): perf records two swaux
# events, both per task on the workload: swaux_owner (mmapped: perf's AUX
# buffer B per CPU; left disabled) and swaux_p (perf SET_OUTPUTs it into B;
# enabled through --control), with sched tracepoints. The controller
# (swaux-flow ctl) takes perf's swaux_p fd for CPU and redirects it to its
# own buffer A, lets the workload fork, and redirects it back to B while an
# inherited child has a transaction open on A. Results go to R/; the host
# decodes perf.data. A scenario the controller could not set up (exit 2:
# no child wrote into A, no try conclusive) runs again, up to 3 times.
# (make run ARCH=arm64 is rig/run/cs-etm-guest.sh.)
#
# RUNS > 1: the scenario RUNS times on this boot, the module reloaded each
# time, results in R/run-N/; "RUN: iteration N begin|end" lines delimit each.
perf=${1:?usage: guest.sh PERF KO FLOW R CPU [RUNS]}
ko=$2 flow=$3 R=$4 cpu=$5 runs=${6:-1}
mount -t debugfs none /sys/kernel/debug 2>/dev/null

say() { echo "RUN: $*"; }

say "kernel $(uname -r) $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs"

finish() {
	say "module mismatches $(cat /sys/module/perf_swaux/parameters/mismatches) dead_writes $(cat /sys/module/perf_swaux/parameters/dead_writes)"
	rmmod perf_swaux || say "rmmod perf_swaux failed"
	say "end $*"
}

# one DIR: the scenario once, results in DIR
one() {
	d=$1
	mkdir -p /tmp/flow "$d"
	rm -rf /tmp/flow/*
	# Short transactions, so an inherited writer overflows (ends and begins
	# a transaction) before it is next scheduled out. (The kselftest sets its own.)
	# lifetime=0: the flow judges where data went; on the base a late write
	# into an unmapped buffer is counted, not a KASAN report ending the boot.
	insmod "$ko" overflow_bytes=512 bytes_per_tick=128 period_us=500 lifetime=0 ||
		{ say "insmod $ko failed"; return 1; }

	mkfifo /tmp/flow/ctl /tmp/flow/ack
	exec 8<>/tmp/flow/ctl 9<>/tmp/flow/ack
	# -m 4M: the data ring holds the sched events of a whole run even when
	# perf (compressing, under TCG) falls behind.
	"$perf" record -z --aio -D -1 --control=fd:8,9 -m 4M,1M \
		-e swaux/name=swaux_owner/ -e swaux/name=swaux_p/ \
		-e sched:sched_switch -e sched:sched_process_fork -e sched:sched_process_exit \
		-o /tmp/flow/perf.data -- "$flow" work /tmp/flow "$cpu" 4 400 >"$d/record.log" 2>&1 &
	perf_pid=$!
	# swaux_owner only owns B: keep it disabled. "disable" also marks it
	# disabled for perf, whose AUX read_finish() otherwise enables the first
	# AUX event after each read of its buffer (B, written by swaux_p), and the
	# sink would be busy with the owner instead of swaux_p.
	for cmd in "disable swaux_owner" "enable swaux_p" "enable sched:sched_switch" \
		"enable sched:sched_process_fork" "enable sched:sched_process_exit"; do
		echo "$cmd" >&8
		# shellcheck disable=SC3045 # read -t: bash (x86_64 guest)
		if ! read -r -t 300 ack <&9; then
			say "perf record did not answer '$cmd'"
			kill "$perf_pid" 2>/dev/null
			wait "$perf_pid"
			exec 8>&- 9>&-
			cat "$d/record.log"
			finish "perf record hung"
			return 1
		fi
		[ "$ack" = ack ] || say "perf: $cmd: $ack"
	done
	"$flow" ctl /tmp/flow "$cpu" "$perf_pid" "$d/bufA.bin" >"$d/ctl.log" 2>&1
	ctl_rc=$?
	# A controller that gave up leaves the workload waiting: let it end.
	for s in 1 2 3; do : >"/tmp/flow/stage$s"; done
	wait "$perf_pid"
	rec_rc=$?
	exec 8>&- 9>&-
	cat "$d/ctl.log"
	say "perf record exit $rec_rc, controller exit $ctl_rc"
	tail -3 "$d/record.log" | sed 's/^/  /'

	# perf record cannot write to the 9p share (the AUX mapping): copy. The
	# host decodes it (perf under TCG + KASAN is slow).
	cp /tmp/flow/perf.data "$d/perf.data" || say "copying perf.data to $d failed"
	finish "rec=$rec_rc ctl=$ctl_rc"
	return "$ctl_rc"
}

# settled DIR: the scenario until the controller could set it up, 3 times
# at most; the last attempt's results stay in DIR.
settled() {
	n=1
	while :; do
		one "$1"
		rc=$?
		[ $rc = 2 ] && [ $n -lt 3 ] || return $rc
		say "attempt $n: the controller could not set the scenario up (exit 2): again"
		n=$((n + 1))
	done
}

if [ "$runs" = 1 ]; then
	settled "$R"
	exit
fi
i=1 rc=0
while [ "$i" -le "$runs" ]; do
	say "iteration $i begin"
	settled "$R/run-$i" || rc=1
	say "iteration $i end"
	i=$((i + 1))
done
exit $rc
