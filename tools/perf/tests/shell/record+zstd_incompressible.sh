#!/bin/bash
# perf record -z of incompressible data: -m 16M and 64M, sync and --aio, every push fits
# SPDX-License-Identifier: GPL-2.0
#
# Data that does not compress comes out of zstd bigger than it went in
# (raw blocks, a frame header, and 16 bytes of record header plus padding
# per 64 KiB PERF_RECORD_COMPRESSED2), so the buffer a push is compressed
# into must be bigger than the ring buffer. --call-graph dwarf stack dumps
# of a process whose stack buffer holds random bytes (head reading
# /dev/urandom) hardly compress. Record them with big ring buffers, the
# -z --aio and -m 16M -z combinations of two 2025 reports ("Couldn't
# decompress data", "failed to write perf data, error: Bad address"), and
# check that no write fails, that the files decode and that the data was
# indeed incompressible (ratio below 1.1).

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_incompressible.XXXXX)

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
	local ratio samples

	echo "--- ${name}: perf record $*"
	if ! timeout -k 5 60 perf record "$@" -e cpu-clock -c 100000 \
		--call-graph dwarf,8192 -o "${data}" -- \
		head -c 200M /dev/urandom >/dev/null 2>"${data}.rec"; then
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
	samples=$(awk '$1 == "SAMPLE" { print $3; exit }' "${data}.stats")
	ratio=$(sed -nE 's/.*ratio is ([0-9.]+).*/\1/p' "${data}.rec")
	echo "${name}: ${samples:-0} samples decoded, $(grep -o 'original [^)]*' "${data}.rec")"
	if [ "${samples:-0}" -lt 100 ]; then
		echo "${name}: too few samples"
		err=1
	fi
	if ! awk -v r="${ratio:-99}" 'BEGIN { exit !(r < 1.1) }'; then
		echo "${name}: the data compressed (ratio ${ratio:-?}): not the case under test"
		err=1
	fi
}

skip_if_no_z_record
check_case z-aio -z --aio
check_case m16M-z -m 16M -z
check_case m16M-z-aio -m 16M -z --aio
check_case m64M-z -m 64M -z

if [ "${err}" = 0 ]; then
	echo "perf record -z incompressible data test [Success]"
else
	echo "perf record -z incompressible data test [Failed]"
fi
exit "${err}"
