#!/bin/bash
# perf report of a trace_printk() format too short for libtraceevent
# SPDX-License-Identifier: GPL-2.0
#
# The tracing data of a perf.data file carries the kernel's printk formats,
# one '0x<address> : "<format>"' line each. libtraceevent's
# tep_register_print_string() looks two bytes before the closing quote for
# a "\n": with fewer than two characters between the quotes it reads before
# its copy of the format. perf must not hand it such a format. A file is
# recorded, one printk format in it is replaced by "" (the line padded with
# newlines to its length) and perf report -D reads it under valgrind, which
# sees the read; perf must read the file without one.

set -u

err=0
tmpdir=$(mktemp -d /tmp/__perf_test.printk_format.XXXXX)

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

if ! command -v valgrind >/dev/null; then
	echo "no valgrind [Skipped]"
	exit 2
fi
if ! command -v perl >/dev/null; then
	echo "no perl [Skipped]"
	exit 2
fi

data="${tmpdir}/perf.data"
if ! perf record -e sched:sched_process_exec -o "${data}" true >/dev/null 2>&1; then
	echo "cannot record sched:sched_process_exec [Skipped]"
	exit 2
fi

# The first printk format of the tracing data, made empty.
if ! perl -0777 -pi -e '
	BEGIN { $n = 0 }
	$n += s{(0x[0-9a-f]+ : )("[^"\n]{2,}")}{
		$1 . "\"\"" . ("\n" x (length($2) - 2))
	}e;
	END { exit !$n }' "${data}"; then
	echo "no printk format in the tracing data [Skipped]"
	exit 2
fi

# An invalid read in the parsing of the printk formats (perf's
# parse_ftrace_printk() or libtraceevent's tep_register_print_string()
# on its stack) fails the test; other memcheck reports, in perf's
# libraries say, are shown but not judged here. perf's own exit status
# does not matter, only that it ran to its end.
valgrind --num-callers=30 perf report -D -i "${data}" \
	>"${tmpdir}/report.out" 2>"${tmpdir}/report.err"
rc=$?
awk -v dir="${tmpdir}" '/== Invalid read/ { blk = $0; inb = 1; next }
	inb && /^==[0-9]+== *$/ {
		f = blk ~ /parse_ftrace_printk|tep_register_print_string/ ? "printk" : "other"
		print blk >(dir "/reads." f)
		inb = 0
		next
	}
	inb { blk = blk "\n" $0 }' "${tmpdir}/report.err"
if [ -s "${tmpdir}/reads.other" ]; then
	echo "valgrind reports an invalid read elsewhere (not judged):"
	head -6 "${tmpdir}/reads.other"
fi
if [ -s "${tmpdir}/reads.printk" ]; then
	echo "valgrind reports an invalid read reading the printk formats:"
	head -8 "${tmpdir}/reads.printk"
	err=1
elif [ "${rc}" -gt 128 ]; then
	echo "perf report -D died of signal $((rc - 128))"
	err=1
elif ! grep -q 'PERF_RECORD_SAMPLE' "${tmpdir}/report.out"; then
	echo "perf report -D decoded no sample (exit ${rc}):"
	tail -3 "${tmpdir}/report.err"
	err=1
fi

if [ "${err}" = 0 ]; then
	echo "perf report of a short printk format test [Success]"
else
	echo "perf report of a short printk format test [Failed]"
fi
exit "${err}"
