#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# Runs inside the guest (busybox sh on arm64): checks that aux_set_output
# skips when it finds no perf_swaux.ko next to it, runs the perf_events
# kselftests through kselftest's own runner (DIR/ksft.sh; aux_set_output
# loads and unloads the module itself), then loads the module for the mmap
# test's aux variants.
# Every output line is prefixed with the program's name; "SELFTESTS: result
# <prog> <exit status>" lines summarise. Exit 0 iff all passed.
#
# RUNS > 1: aux_set_output (from the kselftest directory, so it loads its
# module as in the runner) runs RUNS - 1 more times on this boot; its lines
# are prefixed "aux_set_output-rN: " and "SELFTESTS: result aux_set_output-rN
# <status>" ends each.
dir=${1:?usage: guest.sh DIR [RESULTS_FILE] [RUNS]}
res=${2:-}
[ "$res" != - ] || res=
runs=${3:-1}
mkdir -p /tmp
mount -t debugfs none /sys/kernel/debug 2>/dev/null
[ -n "$res" ] && : >"$res"

say() {
	echo "$*"
	[ -z "$res" ] || echo "$*" >>"$res"
}

run() {
	name=$1
	shift
	"$@" >/tmp/selftest.log 2>&1
	st=$?
	while IFS= read -r line; do
		say "$name: $line"
	done </tmp/selftest.log
	say "SELFTESTS: result $name $st"
	return $st
}

# The programs of the perf_events kselftest (its Makefile's TEST_GEN_PROGS)
# that must pass here. Two upstream ones must run but fail in these TCG
# guests, on the base as with the series: remove_on_exec cannot open its
# PERF_TYPE_HARDWARE event (no PMU on x86_64 TCG; arm64's fails too) and
# sigtrap_threads' signal_stress tests outlast the harness' 30 s.
KSFT_PROGS="watermark_signal mmap aux_set_output mmap_aux.sh"
KSFT_OTHER="sigtrap_threads remove_on_exec"
rc=0
ncpu=$(grep -c ^processor /proc/cpuinfo)
say "SELFTESTS: begin $(uname -r) cpus=$ncpu"
say "SELFTESTS: pmus $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
# aux_set_output's CPU X is the last online CPU
say "SELFTESTS: $(sh "$dir/quiet-cpu.sh" $((ncpu - 1)))"
rmmod perf_swaux 2>/dev/null
# The module's lifetime mode (a write after ->free_aux() becomes a KASAN
# report) is asked for where KASAN is on: the x86_64 guest, booted with
# kasan_multi_shot so that a report fails the run rather than ending it.
swaux_params=
if grep -q kasan_multi_shot /proc/cmdline; then
	swaux_params=lifetime=1
fi
export AUX_SET_OUTPUT_MODPARAMS="$swaux_params"
# No perf_swaux.ko next to it: SKIP (4), never fail.
mkdir -p /tmp/noswaux
cp "$dir/aux_set_output" /tmp/noswaux/
run noswaux /tmp/noswaux/aux_set_output
[ "$st" = 4 ] || { say "SELFTESTS: aux_set_output without the module exited $st, want 4"; rc=1; }

# The perf_events kselftests in their upstream form (ksft.sh: x86_64 `make
# -C tools/testing/selftests TARGETS=perf_events run_tests`, arm64 the
# installed run_kselftest.sh -c perf_events); aux_set_output loads
# perf_swaux.ko from its directory's test_modules/ and unloads it. The
# runner's nested TAP ("# ...") becomes "<prog>: ..." lines ("ksft-mmap: "
# for mmap, whose aux variant skips there: the module is not loaded; it runs
# in mmap_aux.sh, which loads it, and below), and each "ok N selftests: perf_events: <prog>" a "SELFTESTS:
# result <prog> <status>".
# Append mode: the runner writes each program's output through its own
# open of /dev/stdout (its $logfile), which must not be overwritten.
: >/tmp/ksft.log
sh "$dir/ksft.sh" >>/tmp/ksft.log 2>&1
ksft_rc=$?
awk '
/^# selftests: perf_events: / { prog = $NF; label = (prog == "mmap") ? "ksft-mmap" : prog; next }
/^(not )?ok [0-9]+ selftests: perf_events: / {
	st = 0
	if ($1 == "not")
		st = 1
	if (match($0, /# exit=[0-9]+/))
		st = substr($0, RSTART + 7, RLENGTH - 7)
	else if ($0 ~ /# TIMEOUT/)
		st = 124
	else if ($0 ~ /# SKIP/)
		st = 4
	name = ($1 == "not") ? $6 : $5
	print "SELFTESTS: result " name " " st
	prog = ""
	next
}
prog != "" && /^# / { print label ": " substr($0, 3); next }
prog != "" && /^#$/ { print label ":"; next }
/^# / { print "ksft: " $0; next }
{ print "ksft: " $0 }' /tmp/ksft.log >/tmp/ksft.lines
while IFS= read -r line; do
	say "$line"
done </tmp/ksft.lines
# The runner's status (arm64's run_kselftest.sh fails when any program
# fails, x86_64's make run_tests does not) counts nothing here: the
# per-program results below do.
say "SELFTESTS: kselftest runner exit $ksft_rc"
for p in $KSFT_PROGS; do
	grep -q "^SELFTESTS: result $p 0\$" /tmp/ksft.lines ||
		{ say "SELFTESTS: $p did not pass in the kselftest run"; rc=1; }
done
for p in $KSFT_OTHER; do
	grep -q "^SELFTESTS: result $p " /tmp/ksft.lines ||
		{ say "SELFTESTS: $p did not run in the kselftest run"; rc=1; }
done
if [ -d /sys/module/perf_swaux ]; then
	say "SELFTESTS: aux_set_output left perf_swaux loaded"
	rc=1
	rmmod perf_swaux
fi

ksft_dir=$(cat "$dir/ksft.dir")
i=2
while [ "$i" -le "$runs" ]; do
	(cd "$ksft_dir" && ./aux_set_output) >/tmp/repeat.log 2>&1
	st=$?
	while IFS= read -r line; do
		say "aux_set_output-r$i: $line"
	done </tmp/repeat.log
	say "SELFTESTS: result aux_set_output-r$i $st"
	[ "$st" = 0 ] || rc=1
	if [ -d /sys/module/perf_swaux ]; then
		say "SELFTESTS: aux_set_output left perf_swaux loaded"
		rc=1
		rmmod perf_swaux
	fi
	i=$((i + 1))
done

# shellcheck disable=SC2086 # no parameter or one
if ! insmod "$dir/perf_swaux.ko" $swaux_params; then
	say "SELFTESTS: insmod perf_swaux.ko failed"
	exit 1
fi
say "SELFTESTS: swaux lifetime $(cat /sys/module/perf_swaux/parameters/lifetime)"
run mmap "$dir/mmap" || rc=1
rmmod perf_swaux || { say "SELFTESTS: rmmod perf_swaux failed"; rc=1; }
say "SELFTESTS: end rc=$rc"
exit $rc
