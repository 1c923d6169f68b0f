#!/bin/bash
# perf record -z of incompressible data: full 16 and 256 MiB buffers, sync and --aio (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Data that does not compress comes out of zstd bigger than it went in: raw
# blocks (3 bytes of header per 128 KiB) and the header of each 64 KiB
# PERF_RECORD_COMPRESSED2 (16 bytes), 35856 bytes for 128 MiB and 71712 for
# 256 MiB. perf record compresses what a push takes from a ring buffer, up
# to all of it, into a buffer that must hold the result: one page of slack
# is 67616 bytes short of that for a full 256 MiB buffer, 400 for 16 MiB.
#
# Why the push of a full buffer of incompressible data happens by
# construction rather than by timing:
# - The data: cksum(1) reads /dev/urandom into a 64 KiB buffer on its stack.
#   The event is syscalls:sys_enter_read, one sample per read(2), with a
#   32 KiB --call-graph dwarf stack dump: each sample carries 32 KiB of
#   random bytes that no other sample holds, as every read refills the
#   buffer. (A timer event takes several samples of one buffer content,
#   which zstd finds; with dumps below about 24 KiB, the header, registers
#   and call chain, alike in every sample, let zstd compress some blocks.)
# - The full buffer: cksum is stopped, perf record attaches to it with one
#   buffer (-p, --per-thread) and its events disabled (-D -1), enables them
#   through its control fifo and is stopped (SIGSTOP) once it acknowledged.
#   cksum then runs until it made more reads (/proc/PID/io syscr) than the
#   buffer has room for samples: the kernel fills the buffer and drops the
#   rest (PERF_RECORD_LOST). cksum is killed and perf continued: its next
#   push takes the whole buffer but less than one sample (33064 bytes),
#   from its start, as nothing but a few side-band records came before, to
#   cksum's EXIT record, the last of the recording.
# - The sizes: that push of 256 MiB comes out of zstd at least 67616 -
#   33064 bytes, some 34 KB, bigger than the buffer perf record had for it
#   before that buffer was sized for zstd's output: it fails on every run,
#   sync or --aio. The next size down is not certain to fail: 128 MiB lacks
#   31760 bytes, less than a sample. A push of 16 MiB fails only when it is
#   within 400 bytes of full, rarely: that case checks -m 16M -z, as in
#   the 2025 reports ("Couldn't decompress data", "failed to write perf
#   data, error: Bad address"), with a full buffer.
# Checked afterwards: the buffer was full (LOST records), the push took it
# (perf's "original" size, the samples decoded), the data did not compress
# (ratio below 1.1), no write failed, and the file decodes to its end (the
# EXIT record; a stream not drained after each push loses it).

set -u

err=0
not_judged=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_incompressible.XXXXX)
cksum_pid=
perf_pid=
stack=32768

cleanup() {
	if [ -n "${perf_pid}" ]; then
		kill -CONT "${perf_pid}" 2>/dev/null
	fi
	if [ -n "${cksum_pid}" ]; then
		kill -KILL "${cksum_pid}" 2>/dev/null
		wait "${cksum_pid}" 2>/dev/null
	fi
	if [ -n "${perf_pid}" ]; then
		kill -INT "${perf_pid}" 2>/dev/null
		wait "${perf_pid}" 2>/dev/null
	fi
	cksum_pid=
	perf_pid=
}
cleanup_exit() {
	cleanup
	rm -rf "${tmpdir}"
	trap - EXIT TERM INT
}
trap_cleanup() {
	cleanup_exit
	exit 1
}
trap cleanup_exit EXIT
trap trap_cleanup TERM INT

skip_if_unsupported() {
	local avail space

	if ! perf record -h 2>&1 | grep -q -- '-z, --compression-level'; then
		echo "perf built without zstd support [Skipped]"
		exit 2
	fi
	if ! perf version --build-options | grep -Eq "dwarf-unwind: +\[ on"; then
		echo "perf built without dwarf unwinding [Skipped]"
		exit 2
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "needs root: 256 MiB locked ring buffer, syscall tracepoints [Skipped]"
		exit 2
	fi
	# The 256 MiB cases: the ring buffer, perf's compression buffers and
	# a perf.data file of that size each.
	avail=$(awk '$1 == "MemAvailable:" { print int($2 / 1024) }' /proc/meminfo)
	if [ "${avail:-0}" -lt 1536 ]; then
		echo "needs 1.5 GiB of available memory for its 256 MiB buffers" \
			"(${avail:-?} MiB) [Skipped]"
		exit 2
	fi
	space=$(df -Pm "${tmpdir}" | awk 'NR == 2 { print $4 }')
	if [ "${space:-0}" -lt 1024 ]; then
		echo "needs 1 GiB free in ${tmpdir} for its perf.data files" \
			"(${space:-?} MiB) [Skipped]"
		exit 2
	fi
	if [ ! -r /proc/self/io ]; then
		echo "no /proc/PID/io (CONFIG_TASK_IO_ACCOUNTING) [Skipped]"
		exit 2
	fi
	if ! perf record -e syscalls:sys_enter_read -o "${tmpdir}/tp.data" true \
		>/dev/null 2>&1; then
		echo "no syscalls:sys_enter_read tracepoint [Skipped]"
		exit 2
	fi
}

# The state letter of /proc/$1/stat, and the read(2) calls of $1 so far.
proc_state() {
	sed -E 's/^.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null
}
proc_reads() {
	awk '$1 == "syscr:" { print $2 }' "/proc/$1/io" 2>/dev/null
}

# stop_wait PID: SIGSTOP PID and wait (10 s at most) until it is stopped.
stop_wait() {
	kill -STOP "$1" || return 1
	for _ in $(seq 1000); do
		[ "$(proc_state "$1")" = T ] && return 0
		sleep 0.01
	done
	echo "pid $1 did not stop"
	return 1
}

# fill NAME MB OPTIONS...: record a full MB MiB buffer of incompressible
# samples, pushed at once; see the top of the file.
fill() {
	local name=$1 mb=$2
	shift 2
	local data="${tmpdir}/${name}.data"
	local ctl="${tmpdir}/${name}.ctl" ack="${tmpdir}/${name}.ack"
	local reads need reply ctl_fd ack_fd

	mkfifo "${ctl}" "${ack}" || return 1
	exec {ctl_fd}<>"${ctl}" {ack_fd}<>"${ack}"

	cksum /dev/urandom >/dev/null &
	cksum_pid=$!
	# Past its start: no sample of it may come from outside the read loop.
	for _ in $(seq 1000); do
		[ "$(proc_reads "${cksum_pid}")" -ge 100 ] 2>/dev/null && break
		sleep 0.01
	done
	stop_wait "${cksum_pid}" || return 1

	# -B: no build-id pass at the end, which would decompress it all again.
	perf record -D -1 --control "fifo:${ctl},${ack}" -B -p "${cksum_pid}" --per-thread \
		-m "${mb}M" "$@" -e syscalls:sys_enter_read --filter 'count == 65536' -c 1 \
		--call-graph "dwarf,${stack}" -o "${data}" 2>"${data}.rec" &
	perf_pid=$!
	echo enable >&"${ctl_fd}"
	read -r -t 60 -u "${ack_fd}" reply
	exec {ctl_fd}>&- {ack_fd}>&-
	if [ "${reply:-}" != ack ]; then
		echo "${name}: perf record did not enable its events"
		grep -v schedstat "${data}.rec" | tail -3
		return 1
	fi
	stop_wait "${perf_pid}" || return 1

	# A sample of a read takes more than ${stack} bytes: more reads than
	# that fit in the buffer fill it.
	reads=$(proc_reads "${cksum_pid}")
	need=$((mb * 1048576 / stack + 64))
	kill -CONT "${cksum_pid}"
	for _ in $(seq 6000); do
		[ $(($(proc_reads "${cksum_pid}") - reads)) -ge "${need}" ] && break
		sleep 0.01
	done
	stop_wait "${cksum_pid}" || return 1
	reads=$(($(proc_reads "${cksum_pid}") - reads))
	echo "${name}: ${reads} reads of 64 KiB sampled while perf record was stopped" \
	     "(${need} fill the buffer)"
	if [ "${reads}" -lt "${need}" ]; then
		echo "${name}: cksum did not read enough in 60 s"
		return 1
	fi

	# cksum exits before perf record continues: its EXIT record, with
	# the LOST record, takes some of the room no sample fitted in, so the
	# push of the full buffer is the last one and ends the recording.
	kill -KILL "${cksum_pid}"
	wait "${cksum_pid}" 2>/dev/null
	cksum_pid=
	kill -CONT "${perf_pid}"
	wait "${perf_pid}"
	local rc=$?
	perf_pid=
	if [ "${rc}" != 0 ]; then
		echo "${name}: perf record exited with ${rc}:"
		grep -Ev "schedstat|Events (en|dis)abled" "${data}.rec" | tail -3
		return 1
	fi
	return 0
}

# check_case NAME MB OPTIONS...
check_case() {
	local name=$1 mb=$2
	local data="${tmpdir}/${name}.data"
	local lost exits samples original ratio

	echo "--- ${name}: perf record -m ${mb}M ${*:3}"
	if ! fill "$@"; then
		err=1
		cleanup
		return
	fi
	if grep -Eq "failed to|[Ee]rror" "${data}.rec"; then
		echo "${name}: perf record errors:"
		grep -E "failed to|[Ee]rror" "${data}.rec" | head -3
		err=1
		return
	fi
	if ! perf report -i "${data}" --stats >"${data}.stats" 2>"${data}.err" ||
	   grep -Eq "decompress|failed to process|processing failed" "${data}.err"; then
		echo "${name}: perf report failed:"
		grep -v schedstat "${data}.err" | head -3
		err=1
		return
	fi
	samples=$(awk '$1 == "SAMPLE" { print $3; exit }' "${data}.stats")
	lost=$(awk '$1 == "LOST" && $2 == "events:" { print $3; exit }' "${data}.stats")
	exits=$(awk '$1 == "EXIT" && $2 == "events:" { print $3; exit }' "${data}.stats")
	original=$(sed -nE 's/.*original ([0-9.]+) MB.*/\1/p' "${data}.rec")
	ratio=$(sed -nE 's/.*ratio is ([0-9.]+).*/\1/p' "${data}.rec")
	echo "${name}: ${samples:-0} samples, ${lost:-0} LOST and ${exits:-0} EXIT records" \
	     "decoded, $(grep -o 'original [^)]*' "${data}.rec")"
	if [ "${samples:-0}" = 0 ] && [ "${lost:-0}" = 0 ]; then
		# The case rests on cksum reading 64 KiB into its stack: a
		# cksum that reads otherwise leaves the filter nothing.
		echo "${name}: no read(2) of 64 KiB sampled: this cksum reads otherwise, not judged"
		not_judged=$((not_judged + 1))
		return
	fi
	if [ "${exits:-0}" -lt 1 ]; then
		echo "${name}: no EXIT record: the end of the recording was lost"
		err=1
	elif [ "${lost:-0}" -lt 1 ]; then
		echo "${name}: no LOST record: the buffer was never full, not the case under test" \
		     "(throttled? kernel.perf_event_max_sample_rate is" \
		     "$(cat /proc/sys/kernel/perf_event_max_sample_rate))"
		err=1
	fi
	if [ "${samples:-0}" -lt $((mb * 1048576 / (stack + 1024))) ]; then
		echo "${name}: too few samples decoded for a full buffer"
		err=1
	fi
	# The full buffer, less one sample and its header, went through zstd.
	if ! awk -v o="${original:-0}" -v mb="${mb}" -v s="${stack}" \
		'BEGIN { exit !(o * 1048576 >= mb * 1048576 - s - 4096) }'; then
		echo "${name}: only ${original:-0} MB recorded: no push of a full buffer"
		err=1
	fi
	if ! awk -v r="${ratio:-99}" 'BEGIN { exit !(r < 1.1) }'; then
		echo "${name}: the data compressed (ratio ${ratio:-?}): not the case under test"
		err=1
	fi
}

skip_if_unsupported
check_case m16M-z 16 -z
check_case m256M-z 256 -z
check_case m256M-z-aio 256 -z --aio

if [ "${err}" = 0 ] && [ "${not_judged}" = 3 ]; then
	echo "cksum does not read 64 KiB at a time [Skipped]"
	exit 2
elif [ "${err}" = 0 ]; then
	echo "perf record -z incompressible data test [Success]"
else
	echo "perf record -z incompressible data test [Failed]"
fi
exit "${err}"
