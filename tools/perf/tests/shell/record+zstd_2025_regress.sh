#!/bin/bash
# perf record -z 2025 regressions: -z --aio and -m 16M -z decode
# SPDX-License-Identifier: GPL-2.0
#
# Regression guard for the 2025 reports against PERF_RECORD_COMPRESSED2:
# "perf record -z --aio --call-graph dwarf" and "perf record -m 16M -z
# --call-graph dwarf" produced files that perf script could not read
# ("Couldn't decompress data", "Data corruption detected"), and the latter
# also "failed to write perf data, error: Bad address". Both are fixed in
# the base this test was written for: it is expected to pass with and
# without the -z series.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_2025.XXXXX)

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

if ! perf record -h 2>&1 | grep -q -- '-z, --compression-level'; then
	echo "perf built without zstd support [Skipped]"
	exit 2
fi

# $1: name, rest: perf record options
run_case() {
	local name=$1
	shift
	local data="${tmpdir}/${name}.data"

	echo "--- ${name}: perf record $*"
	if ! timeout -k 5 60 perf record "$@" -e cpu-clock --call-graph dwarf \
		-o "${data}" -- perf test -w noploop 1 >"${data}.rec" 2>&1; then
		echo "${name}: perf record failed:"
		tail -3 "${data}.rec"
		err=1
		return
	fi
	if grep -q "failed to write perf data" "${data}.rec"; then
		echo "${name}: perf record failed to write data:"
		grep "failed to write" "${data}.rec" | head -3
		err=1
		return
	fi
	if ! perf script -i "${data}" >"${data}.script" 2>"${data}.err" ||
	   grep -Eq "decompress|failed to process|processing failed|corrupt" "${data}.err"; then
		echo "${name}: perf script failed:"
		head -3 "${data}.err"
		err=1
		return
	fi
	if ! grep -q noploop "${data}.script"; then
		echo "${name}: no noploop samples decoded"
		err=1
		return
	fi
	echo "${name}: $(grep -c cpu-clock "${data}.script") samples decoded"
}

run_case z-aio -z --aio
run_case m16M-z -m 16M -z

if [ "${err}" = 0 ]; then
	echo "perf record -z 2025 regression test [Success]"
else
	echo "perf record -z 2025 regression test [Failed]"
fi
exit "${err}"
