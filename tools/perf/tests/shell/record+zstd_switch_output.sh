#!/bin/bash
# perf record -z with --switch-output: every file decodes, no record lost
# SPDX-License-Identifier: GPL-2.0
#
# With -z, every output file of --switch-output must start a new zstd
# stream: a file that continues the stream of the previous one cannot be
# decoded on its own. Record a workload that runs /bin/true a known number
# of times, switch files on a signal and by size, with and without --aio,
# and check that every file decodes and that the files together hold
# exactly one exec COMM record per run of /bin/true.
#
# Why not a tracepoint and time-based switching, as this test first did:
# - perf record reads tracefs for the tracing data of every file it
#   writes; when tracefs is unmounted meanwhile (a test that mounted it
#   cleans up), the file is unreadable. Exec COMM records need no tracefs.
# - --switch-output=<time> arms its alarm before perf record's setup and
#   drops an alarm that fires before recording starts, never re-arming it:
#   when setup outlasts the period (a loaded machine, as in perf test's
#   parallel run; or -D 1500 with 1s) no file is ever switched. The
#   workload sends the SIGUSR2 of --switch-output=signal itself instead,
#   after a second of work, when recording has surely started.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.zstd_switch.XXXXX)

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

rounds=2
per_round=10
expected=$((rounds * per_round))
# Each round runs /bin/true per_round times, keeps a CPU busy for a second
# so that cpu-clock samples fill the files, and signals perf record (its
# parent) to switch files, but for the last round, which the exit ends:
# the file names have a resolution of 10 ms and a switch within 10 ms of
# the previous one renames its file over that one's.
workload="for r in \$(seq ${rounds}); do
	for t in \$(seq ${per_round}); do /bin/true; done
	perf test -w noploop 1
	[ \$r = ${rounds} ] || kill -USR2 \$PPID
done"

# $1: name, rest: extra perf record options
run_case() {
	local name=$1
	shift
	local dir="${tmpdir}/${name}"
	local files total=0 nr=0 lost=0 dumps f n

	mkdir -p "${dir}"
	echo "--- ${name}: perf record -z $*"
	if ! timeout -k 5 60 perf record -z -e cpu-clock -c 250000 -g \
		-o "${dir}/perf.data" "$@" \
		-- bash -c "${workload}" >"${dir}/record.out" 2>&1; then
		echo "${name}: perf record failed"
		tail -5 "${dir}/record.out"
		err=1
		return
	fi
	files=$(ls "${dir}"/perf.data.* 2>/dev/null)
	for f in ${files}; do
		nr=$((nr + 1))
		if ! perf script -i "${f}" --show-task-events --show-lost-events \
			-F comm,pid,event \
			>"${f}.script" 2>"${f}.err" ||
		   grep -Eq "decompress|failed to process|processing failed" "${f}.err"; then
			echo "${name}: $(basename "${f}") does not decode:"
			grep -Ev "not valid for" "${f}.err" | head -3
			err=1
		fi
		n=$(grep -c "PERF_RECORD_COMM exec: true:" "${f}.script")
		total=$((total + n))
		lost=$((lost + $(grep -c "PERF_RECORD_LOST" "${f}.script")))
	done
	if [ "${nr}" -lt 2 ]; then
		echo "${name}: only ${nr} output file(s), the switch was not exercised"
		err=1
	fi
	echo "${name}: ${nr} files, ${total} of ${expected} exec COMM records decoded," \
	     "${lost} LOST records"
	# A LOST record can take an exec COMM with it, and a switch within
	# 10 ms of the previous one renames its file over that one's (same
	# name): fewer COMMs are then not a decoding failure (one would show
	# above), and not judged.
	dumps=$(grep -c '^\[ perf record: Dump ' "${dir}/record.out")
	if [ "${total}" -lt "${expected}" ] && [ "${lost}" -gt 0 ]; then
		echo "${name}: ${lost} LOST records, the COMM count is not judged"
	elif [ "${total}" -lt "${expected}" ] && [ "${nr}" -lt "${dumps}" ]; then
		echo "${name}: ${dumps} files written, ${nr} left (same names): not judged"
	elif [ "${total}" -ne "${expected}" ]; then
		err=1
	fi
}

run_case signal --switch-output=signal
run_case size --switch-output=16K
run_case size-aio --switch-output=16K --aio

if [ "${err}" = 0 ]; then
	echo "perf record -z --switch-output test [Success]"
else
	echo "perf record -z --switch-output test [Failed]"
fi
exit "${err}"
