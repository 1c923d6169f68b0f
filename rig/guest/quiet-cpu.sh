#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# quiet-cpu.sh X: runs in the guest before the SET_OUTPUT tests. Unbound
# kernel threads (the RCU grace-period kthread above all) and unbound
# workqueues are moved off CPU X, where the tests' SCHED_FIFO children trace:
# each time one of them runs on X it preempts the child, and a redirect
# during which a child was switched out proves nothing and is repeated.
# Measured in the arm64 guest: rcu_sched woke on X hundreds of times per
# second in some phases, and every redirect of a test saw a switch.
# Per-CPU kthreads (kworker/X:*, ksoftirqd/X, migration/X) cannot move;
# user tasks are left alone (the tests read their affinity).
x=${1:?usage: quiet-cpu.sh CPU}
n=$(grep -c ^processor /proc/cpuinfo)
mask=$(printf %x $(( (1 << n) - 1 - (1 << x) )))
[ "$mask" != 0 ] || { echo "quiet-cpu: CPU $x is the only one"; exit 0; }
echo "$mask" >/sys/devices/virtual/workqueue/cpumask 2>/dev/null ||
	echo "quiet-cpu: cannot set the unbound workqueue cpumask"
moved=0
for s in /proc/[0-9]*/stat; do
	read -r pid _ _ ppid _ <"$s" 2>/dev/null || continue
	# kthreadd and its children: kernel threads
	[ "$pid" = 2 ] || [ "$ppid" = 2 ] || continue
	taskset -p "$mask" "$pid" >/dev/null 2>&1 && moved=$((moved + 1))
done
echo "quiet-cpu: CPU $x: unbound workqueues and $moved kernel threads moved to mask $mask"
