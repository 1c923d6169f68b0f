#!/bin/bash
# perf record writes each event once when the kernel writes during a push (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# perf_mmap__push() writes out a ring buffer from its tail to the head that
# perf_mmap__read_init() read, then moves the tail. Moved to a head read
# before that one, the tail stays behind what was written out, and the next
# push writes the events the kernel added in between a second time. The
# window is a few instructions wide, so perf record runs under gdb, which
# stops it at the entry of perf_mmap__read_init() for the ring buffer of
# one CPU three times, half a second each, while the workload, pinned to
# that CPU, keeps writing samples there. Every sample must be in perf.data
# once. Exclusive: the workload must get its CPU while perf record waits.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.record_push_once.XXXXX)

cleanup() {
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}
trap_cleanup() {
	cleanup
	exit 1
}
trap cleanup EXIT
trap trap_cleanup TERM INT

perf_bin=$(command -v perf)
if [ -z "${perf_bin}" ]; then
	echo "no perf on PATH [Skipped]"
	exit 2
fi
if ! command -v gdb >/dev/null || ! command -v taskset >/dev/null; then
	echo "needs gdb and taskset [Skipped]"
	exit 2
fi
if ! gdb -q -batch -ex 'ptype struct perf_mmap' "${perf_bin}" 2>/dev/null | grep -q prev; then
	echo "${perf_bin} has no debug info for gdb [Skipped]"
	exit 2
fi
# The first CPU this test may run on.
cpu=$(taskset -pc $$ | sed -E 's/.*: *([0-9]+).*/\1/')
if ! taskset -c "${cpu}" true 2>/dev/null; then
	echo "cannot pin a task to a CPU [Skipped]"
	exit 2
fi
if ! "${perf_bin}" record -k boottime -e cpu-clock -o "${tmpdir}/pre.data" true \
		>/dev/null 2>&1; then
	echo "cannot record cpu-clock with -k boottime [Skipped]"
	exit 2
fi
if ! gdb -q -batch -ex run --args true 2>&1 | grep -q 'exited normally'; then
	echo "gdb cannot run a program here (ptrace) [Skipped]"
	exit 2
fi

# Each stop writes when it starts and ends, in seconds of CLOCK_BOOTTIME
# (/proc/uptime), the clock the samples are recorded with.
cat >"${tmpdir}/stop.gdb" <<EOF
set pagination off
set confirm off
set \$stops = 0
break perf_mmap__read_init if map->cpu.cpu == ${cpu}
commands
silent
set \$stops = \$stops + 1
shell echo "stop \$(cut -d' ' -f1 /proc/uptime)" >>"${tmpdir}/stops"
shell sleep 0.5
shell echo "resume \$(cut -d' ' -f1 /proc/uptime)" >>"${tmpdir}/stops"
if \$stops >= 3
delete
end
continue
end
run
EOF

# --no-bpf-event: no side band thread, whose ring buffers are read with
# perf_mmap__read_init() too; only perf_mmap__push() may stop.
timeout -s KILL 120 gdb -q -batch -x "${tmpdir}/stop.gdb" --args "${perf_bin}" record \
	--no-bpf-event -k boottime -e cpu-clock -c 1000000 -o "${tmpdir}/perf.data" -- \
	taskset -c "${cpu}" "${perf_bin}" test -w noploop 3 >"${tmpdir}/gdb.log" 2>&1
if ! grep -q 'exited normally' "${tmpdir}/gdb.log" || [ ! -s "${tmpdir}/stops" ]; then
	echo "perf record under gdb did not stop and exit normally:"
	tail -5 "${tmpdir}/gdb.log"
	exit 1
fi

if ! "${perf_bin}" script -i "${tmpdir}/perf.data" -F tid,time,ip --ns >"${tmpdir}/samples" \
		2>"${tmpdir}/script.err"; then
	echo "perf script failed:"
	head -3 "${tmpdir}/script.err"
	exit 1
fi
total=$(wc -l <"${tmpdir}/samples")
dups=$(sort "${tmpdir}/samples" | uniq -d | wc -l)
# Not a test unless the kernel wrote while perf record was stopped: the
# samples well inside a stop (10 ms from either end, /proc/uptime's step).
during=$(awk 'FILENAME == ARGV[1] {
		if ($1 == "stop")
			s[n] = $2
		else
			e[n++] = $2
		next
	}
	{
		t = $2 + 0
		for (i = 0; i < n; i++)
			if (t > s[i] + 0.01 && t < e[i] - 0.01)
				c++
	}
	END { print c + 0 }' "${tmpdir}/stops" "${tmpdir}/samples")
echo "${total} samples, ${during} of them written while perf record was stopped" \
	"($(grep -c '^stop' "${tmpdir}/stops") stops), ${dups} more than once"
if [ "${during}" = 0 ]; then
	echo "no sample was written while perf record was stopped: nothing tested"
	err=1
fi
if [ "${total}" -lt 1000 ]; then
	echo "too few samples for a 3 s workload sampled every 1 ms"
	err=1
fi
if [ "${dups}" != 0 ]; then
	echo "events written twice (tid, time, ip):"
	sort "${tmpdir}/samples" | uniq -d | head -3
	err=1
fi
exit ${err}
