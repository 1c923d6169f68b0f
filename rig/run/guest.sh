#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make run, guest half (x86_64; the host root is the guest's root over 9p):
# load perf_swaux.ko, record the redirect scenario with perf, decode it.
#
#   guest.sh PERF KO FLOW R CPU
#
# PERF "-": no perf (the arm64 guest): swaux-flow solo runs the scenario
# with its own buffers and checks them.
#
# perf records two swaux events, both per task on the workload: swaux_owner
# (mmapped: perf's AUX buffer B per CPU; left disabled) and swaux_p (perf
# SET_OUTPUTs it into B; enabled through --control), with sched tracepoints.
# The controller (swaux-flow ctl) takes perf's swaux_p fd for CPU and
# redirects it to its own buffer A, lets the workload fork, and redirects it
# back to B while the inherited children run. Results go to R/.
perf=${1:?usage: guest.sh PERF KO FLOW R CPU}
ko=$2 flow=$3 R=$4 cpu=$5
mount -t debugfs none /sys/kernel/debug 2>/dev/null
mkdir -p /tmp/flow "$R"
rm -f /tmp/flow/stage* "$R/perf.data" "$R/bufA.bin"

say() { echo "RUN: $*"; }

say "kernel $(uname -r) $(uname -m), $(grep -c ^processor /proc/cpuinfo) CPUs"
# Short transactions, so an inherited writer overflows (ends and begins a
# transaction) before it is next scheduled out.
insmod "$ko" overflow_bytes=512 bytes_per_tick=128 period_us=500 ||
	{ say "insmod $ko failed"; exit 1; }

finish() {
	say "module mismatches $(cat /sys/module/perf_swaux/parameters/mismatches) dead_writes $(cat /sys/module/perf_swaux/parameters/dead_writes)"
	rmmod perf_swaux || say "rmmod perf_swaux failed"
	say "end $*"
}

if [ "$perf" = - ]; then
	"$flow" solo /tmp/flow "$cpu" 4 400 "$R/bufA.bin" >"$R/ctl.log" 2>&1
	rc=$?
	cat "$R/ctl.log"
	finish "solo=$rc"
	exit 0
fi

mkfifo /tmp/flow/ctl /tmp/flow/ack
exec 8<>/tmp/flow/ctl 9<>/tmp/flow/ack
"$perf" record -z --aio -D -1 --control=fd:8,9 -m ,1M \
	-e swaux/name=swaux_owner/ -e swaux/name=swaux_p/ \
	-e sched:sched_switch -e sched:sched_process_fork -e sched:sched_process_exit \
	-o /tmp/flow/perf.data -- "$flow" work /tmp/flow "$cpu" 4 400 >"$R/record.log" 2>&1 &
perf_pid=$!
# swaux_owner only owns B: keep it disabled. "disable" also marks it
# disabled for perf, whose AUX read_finish() otherwise enables the first
# AUX event after each read of its buffer (B, written by swaux_p), and the
# sink would be busy with the owner instead of swaux_p.
for cmd in "disable swaux_owner" "enable swaux_p" "enable sched:sched_switch" \
	"enable sched:sched_process_fork" "enable sched:sched_process_exit"; do
	echo "$cmd" >&8
	# shellcheck disable=SC3045 # read -t: bash (x86_64 guest) and busybox ash
	read -r -t 300 ack <&9 || { say "perf record did not answer '$cmd'"; cat "$R/record.log"; exit 1; }
	[ "$ack" = ack ] || say "perf: $cmd: $ack"
done
"$flow" ctl /tmp/flow "$cpu" "$perf_pid" "$R/bufA.bin" >"$R/ctl.log" 2>&1
ctl_rc=$?
wait "$perf_pid"
rec_rc=$?
exec 8>&- 9>&-
cat "$R/ctl.log"
say "perf record exit $rec_rc, controller exit $ctl_rc"
tail -3 "$R/record.log" | sed 's/^/  /'

# perf record cannot write to the 9p share (the AUX mapping): copy. The
# host decodes it (perf under TCG + KASAN is slow).
cp /tmp/flow/perf.data "$R/perf.data" || say "copying perf.data to $R failed"
finish "rec=$rec_rc ctl=$ctl_rc"
