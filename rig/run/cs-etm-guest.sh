#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# make run ARCH=arm64, in the guest (the emulated Armv9 CPU, busybox):
#   cs-etm-guest.sh DIR CPU
# perf record -e cs_etm//u -p PID of rig/run/cs-etm-flow.c's workload while
# its controller redirects perf's inherited cs_etm event of CPU from perf's
# buffer to one of its own and back, with children tracing on CPU. perf.data
# and the controller's buffer go to the host with rig-send; lines starting
# with "RUN:" are for the host's report.
d=${1:?usage: cs-etm-guest.sh DIR CPU}
cpu=${2:?usage: cs-etm-guest.sh DIR CPU}
flow=/armv9/cs-etm-flow
say() { echo "RUN: $*"; }

say "kernel $(uname -r)"
for s in /sys/bus/event_source/devices/cs_etm/sinks/*; do say "cs_etm sink ${s##*/}"; done
say "$(sh /armv9/quiet-cpu.sh "$cpu" 2>/dev/null)"
rm -rf "$d" && mkdir -p "$d"

"$flow" work "$d" "$cpu" 4 >"$d/work.log" 2>&1 &
work_pid=$!
i=0
while [ ! -e "$d/ready" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
[ -e "$d/ready" ] || { say "the workload did not start"; cat "$d/work.log"; exit 1; }
# -m 16,32: a 128 KiB AUX buffer per CPU, so that the TRBE interrupt of
# perf's buffer comes every second or so. perf record runs off CPU: the
# TRBE interrupt wakes it where it fires, and a woken fair task preempts
# the SCHED_FIFO child there (the fair server), which made the controller's
# tries inconclusive, every one of ten in a row at times.
n=$(grep -c ^processor /proc/cpuinfo)
others=$(printf %x $(( (1 << n) - 1 - (1 << cpu) )))
taskset "$others" /armv9/perf record -m 16,32 -e cs_etm//u -p "$work_pid" -o "$d/perf.data" >"$d/record.log" 2>&1 &
perf_pid=$!
# The controller's lines go to the console as they come: a kernel that
# oopses in the redirect leaves them in the log.
"$flow" ctl "$d" "$cpu" "$perf_pid" "$d/bufA.bin" 2>&1
ctl_rc=$?
# The controller wrote DIR/stop (or died): the workload ends, and perf
# record -p with it. A controller that died leaves the workload waiting.
[ -e "$d/stop" ] || : >"$d/stop"
wait "$work_pid"
work_rc=$?
i=0
while kill -0 "$perf_pid" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
kill -INT "$perf_pid" 2>/dev/null && say "perf record did not end with the workload: interrupted"
wait "$perf_pid"
rec_rc=$?
say "perf record exit $rec_rc, controller exit $ctl_rc, workload exit $work_rc"
sed 's/^/  record: /' "$d/record.log"
[ ! -s "$d/perf.data" ] || rig-send "$d/perf.data" perf.data
[ ! -s "$d/bufA.bin" ] || rig-send "$d/bufA.bin" bufA.bin
[ ! -s "$d/bufA.bin.ring" ] || rig-send "$d/bufA.bin.ring" bufA.ring
[ "$ctl_rc" = 0 ] && [ "$rec_rc" = 0 ] && [ "$work_rc" = 0 ]
