#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Run perf shell tests with a given perf binary (first on PATH).
# Prints one "RESULT <test> PASS|FAIL|SKIP <seconds>" line per test and
# exits non-zero if any test failed.  RESULTS_FILE=<path> also saves them.
set -euo pipefail

perf=${1:?usage: run-tests.sh <perf binary> <test.sh>...}
shift
if [ ! -x "$perf" ]; then
	echo "perf-test: $perf not built; run 'make perf' (or 'make perf BASE=1')" >&2
	exit 1
fi
if [ "$(id -u)" != 0 ]; then
	echo "perf-test: must run as root (perf record of kernel events, tracefs)" >&2
	exit 1
fi
PATH=$(dirname "$(readlink -f "$perf")"):$PATH
export PATH
results=${RESULTS_FILE:-/dev/null}
: >"$results"
start=$(date +%s)
fail=0

echo "perf-test: $(command -v perf) ($(perf version))"
for t in "$@"; do
	name=$(basename "$t")
	t0=$(date +%s)
	log=$(mktemp /tmp/perf-test-log.XXXXXX)
	rc=0
	timeout -k 10 600 bash "$t" >"$log" 2>&1 || rc=$?
	case $rc in
	0) res=PASS ;;
	2) res=SKIP ;;
	*) res=FAIL; fail=1 ;;
	esac
	# A failure shows the whole log: its first message may be far from
	# the end.
	if [ "$res" = FAIL ] || [ -n "${VERBOSE:-}" ]; then
		sed "s/^/  | /" "$log"
	elif [ "$res" != PASS ]; then
		sed "s/^/  | /" "$log" | tail -40
	fi
	rm -f "$log"
	line="RESULT $name $res $(( $(date +%s) - t0 ))s"
	echo "$line"
	echo "$line" >>"$results"
done
echo "perf-test: done in $(( $(date +%s) - start )) s"
if [ $fail != 0 ]; then
	echo "perf-test: failures above; rerun one with 'bash -x <test>' and PATH set to the perf dir" >&2
fi
exit $fail
