#!/bin/bash
# perf record -z end of stream: the last records of incompressible data are not lost
# SPDX-License-Identifier: GPL-2.0
#
# perf record -z must leave nothing in the zstd compression stream when it
# closes the file, and perf report must leave nothing in the decoder after
# the last compressed record. Data that does not compress shows it: with
# --call-graph dwarf stack dumps of a process whose stack buffer holds
# random bytes (head reading /dev/urandom), a flushed zstd block is bigger
# than the room left in the last record. Whatever stays behind holds the
# last records of the recording, among them the workload's EXIT: check
# that it is decoded, in sync and --aio mode, at -m 16M and 64M.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_eos.XXXXX)

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

skip_if_no_z_record() {
	if [ "$(id -u)" != 0 ]; then
		echo "needs root: 64 MiB of locked ring buffer [Skipped]"
		exit 2
	fi
	if ! perf record -h 2>&1 | grep -q -- '-z, --compression-level'; then
		echo "perf built without zstd support [Skipped]"
		exit 2
	fi
	if ! perf version --build-options | grep -Eq "dwarf-unwind: +\[ on"; then
		echo "perf built without dwarf unwinding [Skipped]"
		exit 2
	fi
}

# $1: name, rest: perf record options
check_case() {
	local name=$1
	shift
	local data="${tmpdir}/${name}.data"
	local exits samples

	echo "--- ${name}: perf record -z $*"
	# --per-thread: one ring buffer of the size asked for, not one a CPU.
	if ! timeout -k 5 60 perf record -z "$@" --per-thread -e cpu-clock -c 250000 \
		--call-graph dwarf,4096 -o "${data}" -- \
		head -c 100M /dev/urandom >/dev/null 2>"${data}.rec"; then
		echo "${name}: perf record failed:"
		grep -v schedstat "${data}.rec" | tail -3
		err=1
		return
	fi
	if grep -q "failed to" "${data}.rec"; then
		echo "${name}: perf record errors:"
		grep "failed to" "${data}.rec" | head -3
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
	exits=$(awk '$1 == "EXIT" { print $3; exit }' "${data}.stats")
	samples=$(awk '$1 == "SAMPLE" { print $3; exit }' "${data}.stats")
	echo "${name}: ${samples:-0} samples, ${exits:-0} EXIT," \
	     "$(grep -o 'original [^)]*' "${data}.rec")"
	if [ "${exits:-0}" -lt 1 ]; then
		echo "${name}: the workload's EXIT is missing: the end of the stream was lost"
		err=1
	fi
}

skip_if_no_z_record
check_case m16M-sync -m 16M
check_case m16M-aio -m 16M --aio
check_case m64M-sync -m 64M

if [ "${err}" = 0 ]; then
	echo "perf record -z end of stream test [Success]"
else
	echo "perf record -z end of stream test [Failed]"
fi
exit "${err}"
