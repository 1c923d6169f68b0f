#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make swaux-perf, host half: decode the VM's swaux recordings with
# `perf report -D` and `perf script` (tools/perf/util/swaux.c) and check them.
#   check.sh PERF DIR     DIR: out/swaux-perf (the *.data files and ncpu)
# TAP output; exit 0 iff every check passed.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
# The checks look at exit statuses themselves.
set +e
PERF=${1:?usage: check.sh PERF DIR}
R=${2:?usage: check.sh PERF DIR}
[ -s "$R/ncpu" ] || die "no $R/ncpu: the guest did not run"
ncpu=$(cat "$R/ncpu")
allcpus=$(seq 0 $((ncpu - 1)) | tr '\n' ' ' | sed 's/ $//')

n=0
failed=0
check() {
	local what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=$((failed + 1))
	fi
}

# decode NAME: the swaux lines of perf report -D, and perf script, of NAME.data
decode() {
	"$PERF" report -D -i "$R/$1.data" 2>"$R/$1.report-D.err" |
		grep -E '^(\. swaux |\. \.\.\. swaux |swaux: )' >"$R/$1.report-D.txt"
	echo "${PIPESTATUS[0]}" >"$R/$1.report-D.rc"
	"$PERF" script -i "$R/$1.data" >"$R/$1.script.txt" 2>"$R/$1.script.err"
	echo $? >"$R/$1.script.rc"
	grep '^swaux: \(buffer\|total\|verdict\|record cpus\|error\)' "$R/$1.script.txt" | head -20 | sed 's/^/# /'
}

# verdict_ok NAME: both decoders say ok and exit 0
verdict_ok() {
	grep -qx 'swaux: verdict: ok' "$R/$1.script.txt" &&
		grep -qx 'swaux: verdict: ok' "$R/$1.report-D.txt" &&
		[ "$(cat "$R/$1.script.rc")" = 0 ] && [ "$(cat "$R/$1.report-D.rc")" = 0 ]
}

# cpus NAME LIST: the records were written on exactly these CPUs
cpus() {
	grep -qx "swaux: record cpus: $2" "$R/$1.script.txt"
}

# buffers NAME N: N perf buffers, each with records
buffers() {
	[ "$(grep -c '^swaux: buffer ' "$R/$1.script.txt")" = "$2" ] &&
		! grep '^swaux: buffer ' "$R/$1.script.txt" | grep -q ' records=0 '
}

# dumped NAME: report -D dumped every record with its fields
dumped() {
	local d t
	d=$(grep -c '^\. swaux rec 0x[0-9a-f]*: seq [0-9]* cpu [0-9]* pid [0-9]* tid [0-9]* buf_id [0-9]* handle_buf_id [0-9]* flags ' \
		"$R/$1.report-D.txt")
	t=$(sed -n 's/^swaux: total .* records=\([0-9]*\) .*/\1/p' "$R/$1.report-D.txt")
	[ "$d" -gt 0 ] && [ "$d" = "$t" ]
}

echo "# perf: $PERF; recordings: ${R#"$RIG_TOP"/}; guest cpus: $allcpus"
for name in ${SWAUX_RECORDS:-sys-a cpu0 fork thread snap aio}; do
	if [ ! -s "$R/$name.data" ]; then
		check "$name: recorded" false
		continue
	fi
	decode "$name"
	check "$name: verdict ok, report -D and script exit 0" verdict_ok "$name"
	case $name in
	sys-a)
		check "sys-a: records from every cpu ($allcpus)" cpus sys-a "$allcpus"
		check "sys-a: one buffer per cpu, none empty" buffers sys-a "$ncpu"
		check "sys-a: report -D dumps every record" dumped sys-a
		check "sys-a: full mode, no gaps" grep -q '^swaux: total .* gaps_flagged=0 gaps_unflagged=0 ' "$R/sys-a.script.txt"
		;;
	cpu0)
		check "cpu0: records only from cpu 0" cpus cpu0 0
		check "cpu0: one buffer" buffers cpu0 1
		;;
	fork)
		check "fork: records from every cpu ($allcpus)" cpus fork "$allcpus"
		check "fork: inherited records" grep -q ' flags 0x[0-9a-f]* \[[A-Z,]*INHERITED' "$R/fork.report-D.txt"
		check "fork: report -D dumps every record" dumped fork
		;;
	thread)
		check "thread: one buffer with records" buffers thread 1
		;;
	aio)
		check "aio: records from every cpu ($allcpus)" cpus aio "$allcpus"
		check "aio: one buffer per cpu, none empty" buffers aio "$ncpu"
		check "aio: report -D dumps every record" dumped aio
		;;
	snap)
		check "snap: snapshot mode" grep -q '^swaux: buffer .* mode=snapshot' "$R/snap.script.txt"
		check "snap: snapshot records" grep -q ' flags 0x[0-9a-f]* \[[A-Z,]*SNAPSHOT' "$R/snap.report-D.txt"
		;;
	esac
done
echo "1..$n"
echo "# swaux-perf check: $((n - failed)) passed, $failed failed"
[ "$failed" = 0 ]
