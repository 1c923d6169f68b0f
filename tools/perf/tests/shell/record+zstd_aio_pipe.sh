#!/bin/bash
# perf record to a pipe with record.aio in perfconfig: warns, writes synchronously
# SPDX-License-Identifier: GPL-2.0
#
# record.aio in a perfconfig file turns --aio on for every perf record.
# aio_write() needs a file offset, which a pipe does not have, so with
# pipe output perf record must warn and write synchronously, as it does
# for --timestamp-filename: 'perf record -o - | perf report -i -' keeps
# working, with and without -z. It must neither fail nor loop retrying
# the writes (that wrote gigabytes of errors to stderr).

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

printf '[record]\n\taio = 2\n' >"${tmpdir}/perfconfig"
export PERF_CONFIG="${tmpdir}/perfconfig"

# $1: name, rest: extra perf record options
run_case() {
	local name=$1
	shift
	local out="${tmpdir}/${name}.pipe" log="${tmpdir}/${name}.err"
	local rc n hpid

	echo "--- ${name}: perf record $* -o - | perf report -i - (record.aio = 2)"
	# Bound what a looping perf could write: with stderr closed after
	# 64 KiB it dies of SIGPIPE. The time bound is only a last resort,
	# far above the few seconds this takes even on a loaded machine.
	mkfifo "${tmpdir}/${name}.fifo"
	head -c 65536 <"${tmpdir}/${name}.fifo" >"${log}" &
	hpid=$!
	timeout -s KILL 120 perf record "$@" -e cpu-clock -c 100000 -o - -- \
		perf test -w noploop 1 2>"${tmpdir}/${name}.fifo" |
		head -c 268435456 >"${out}"
	rc=${PIPESTATUS[0]}
	# The log is complete once head has exited.
	wait "${hpid}"
	if [ "${rc}" != 0 ]; then
		echo "${name}: perf record exited ${rc}:"
		grep -v schedstat "${log}" | head -3
		err=1
		return
	fi
	if ! grep -q -- "--aio option is not available in pipe mode" "${log}"; then
		echo "${name}: no warning that --aio is off in pipe mode"
		err=1
	fi
	if grep -Eq "Illegal seek|temporarily unavailable|failed to" "${log}"; then
		echo "${name}: write errors:"
		grep -E "Illegal seek|temporarily unavailable|failed to" "${log}" | head -3
		err=1
		return
	fi
	if ! perf report -i - --stdio --sort comm <"${out}" >"${out}.report" \
		2>"${out}.rerr" || ! grep -q noploop "${out}.report"; then
		echo "${name}: perf report cannot read the stream:"
		head -3 "${out}.rerr"
		err=1
		return
	fi
	n=$(perf script -i - -F comm <"${out}" 2>/dev/null | grep -c noploop)
	if [ "${n}" -lt 100 ]; then
		echo "${name}: only ${n} noploop samples in perf script"
		err=1
		return
	fi
	echo "${name}: ok, ${n} samples"
}

run_case plain
run_case zstd -z

if [ "${err}" = 0 ]; then
	echo "perf record with record.aio, pipe output test [Success]"
else
	echo "perf record with record.aio, pipe output test [Failed]"
fi
exit "${err}"
