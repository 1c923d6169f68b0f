#!/bin/bash
# perf record --aio to a pipe, with and without -z: works or refuses, never loops
# SPDX-License-Identifier: GPL-2.0
#
# aio_write() needs a file offset, which a pipe does not have. perf record
# --aio -o - must either produce a stream that perf script decodes, or stop
# at once with an error that names --aio and pipe mode. It must never keep
# retrying: that used to loop forever, writing gigabytes to stderr.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_aio_pipe.XXXXX)

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

if ! perf record -h 2>&1 | grep -q -- '--aio'; then
	echo "perf built without aio support [Skipped]"
	exit 2
fi

# $1: name, rest: extra perf record options
run_case() {
	local name=$1
	shift
	local out="${tmpdir}/${name}.pipe" log="${tmpdir}/${name}.err"
	local rc start secs

	echo "--- ${name}: perf record --aio $* -o - | cat"
	start=$(date +%s)
	# Bound both the time and what a looping perf could write to stderr.
	timeout -s KILL 20 perf record --aio "$@" -e cpu-clock -o - -- \
		perf test -w noploop 1 2> >(head -c 65536 >"${log}") |
		head -c 268435456 >"${out}"
	rc=${PIPESTATUS[0]}
	secs=$(($(date +%s) - start))
	# Let the process substitution finish writing the log.
	wait
	echo "${name}: perf record exited ${rc} after ${secs}s," \
	     "$(wc -c <"${out}") bytes on the pipe, $(wc -c <"${log}") bytes on stderr"
	if [ "${rc}" = 137 ] || [ "${secs}" -ge 20 ]; then
		echo "${name}: perf record did not finish: looping?"
		grep -v schedstat "${log}" | head -3
		err=1
		return
	fi
	if [ "${rc}" = 0 ]; then
		if grep -Eq "Illegal seek|temporarily unavailable|failed to" "${log}"; then
			echo "${name}: write errors although perf record succeeded:"
			head -3 "${log}"
			err=1
			return
		fi
		if ! perf script -i - <"${out}" >"${out}.script" 2>"${out}.serr" ||
		   grep -Eq "decompress|failed to process|processing failed" "${out}.serr" ||
		   ! grep -q cpu-clock "${out}.script"; then
			echo "${name}: the piped stream does not decode:"
			head -3 "${out}.serr"
			err=1
			return
		fi
		echo "${name}: recorded and decoded $(wc -l <"${out}.script") samples"
		return
	fi
	# Refused: the error must say why, once.
	if ! grep -q -- "--aio" "${log}" || ! grep -qi "pipe" "${log}"; then
		echo "${name}: failed without a clear --aio/pipe error:"
		grep -v schedstat "${log}" | head -3
		err=1
		return
	fi
	if [ "$(wc -c <"${log}")" -gt 4096 ]; then
		echo "${name}: too much error output"
		err=1
		return
	fi
	echo "${name}: refused up front: $(grep -- --aio "${log}" | head -1)"
}

run_case plain
run_case zstd -z

if [ "${err}" = 0 ]; then
	echo "perf record --aio pipe test [Success]"
else
	echo "perf record --aio pipe test [Failed]"
fi
exit "${err}"
