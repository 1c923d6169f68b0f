#!/bin/bash
# 'perf data convert --to-trace-dat' command test
# SPDX-License-Identifier: GPL-2.0
#
# Records sched, irq and printk:console tracepoints (console messages longer
# than 112 bytes make large events, idle gaps of more than 2^27 ns make
# TIME_EXTENDs), converts to trace.dat v7 and v6, compressed and not, from a
# file, a pipe and a -z recording, and checks that 'trace-cmd report' shows
# the same events as 'perf script': name, CPU, pid, timestamp and fields.
# Then checks the bad-input cases.

set -e

err=0
mounted_tracefs=""
tracefs=/sys/kernel/tracing

shelldir=$(dirname "$0")
if [ -e "${shelldir}"/lib/setup_python.sh ]; then
	# shellcheck source=lib/setup_python.sh
	. "${shelldir}"/lib/setup_python.sh
else
	# Run from outside a perf tree (the rig's overlay copy).
	PYTHON=${PYTHON:-python3}
fi

if ! command -v trace-cmd >/dev/null; then
	echo "trace-cmd not installed [Skipped]"
	exit 2
fi
if ! perf data convert --to-trace-dat 2>&1 | grep -q -- "--to-trace-dat"; then
	echo "perf without --to-trace-dat [Skipped]"
	exit 2
fi

tmpdir=$(mktemp -d /tmp/__perf_test.trace_dat.XXXXX)

cleanup()
{
	if [ -z "${TRACE_DAT_KEEP}" ]; then
		rm -rf "${tmpdir}"
	else
		echo "kept ${tmpdir}"
	fi
	if [ -n "${mounted_tracefs}" ]; then
		umount "${tracefs}" || true
	fi
	trap - EXIT TERM INT
}

trap_cleanup()
{
	echo "Unexpected signal in ${FUNCNAME[1]}"
	cleanup
	exit 1
}
trap trap_cleanup EXIT TERM INT

if [ ! -e "${tracefs}/events/header_page" ]; then
	if ! mount -t tracefs nodev "${tracefs}" 2>/dev/null; then
		echo "tracefs not available [Skipped]"
		cleanup
		exit 2
	fi
	mounted_tracefs=1
fi

events="-e sched:sched_switch -e sched:sched_wakeup -e irq:softirq_entry"
events="${events} -e irq:softirq_exit -e printk:console"

# Console messages of various lengths, up to 300 bytes, and idle gaps.
workload()
{
	local i msg=""

	for i in $(seq 1 30); do
		msg="${msg}0123456789"
		if [ $((i % 3)) = 0 ]; then
			echo "perf trace.dat test ${#msg}: ${msg}" > /dev/kmsg
		fi
	done
	sleep 0.3
	perf test -w noploop 0.2 >/dev/null 2>&1 || true
	sleep 0.3
}

record()
{
	# shellcheck disable=SC2086
	perf record -q -a "$@" ${events} -- bash -c "$(declare -f workload); workload" \
		2>"${tmpdir}/record.err"
}

# trace-cmd report and perf script, normalised to one line per event:
# "<ts ns> <cpu> <pid> <event> <fields>", sorted.
compare()
{
	local data=$1 dat=$2 what=$3

	shift 3

	if ! trace-cmd report -t "${dat}" >"${tmpdir}/report.raw" 2>"${tmpdir}/report.err"; then
		echo "trace-cmd report failed on ${what}:"
		head -5 "${tmpdir}/report.err"
		err=1
		return
	fi
	perf script -i "${data}" --ns -F tid,cpu,time,event,trace "$@" \
		>"${tmpdir}/script.raw" 2>/dev/null
	$PYTHON - "${tmpdir}/report.raw" "${tmpdir}/script.raw" "${what}" <<'EOF'
import re, sys
from collections import Counter

def norm_fields(s):
    return ' '.join(s.split())

def report(path):
    out = []
    pat = re.compile(r'^\s*(.*)-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+([\w]+):\s?(.*)$')
    for line in open(path, errors='replace'):
        m = pat.match(line.rstrip('\n'))
        if not m:
            continue
        _, pid, cpu, sec, frac, name, rest = m.groups()
        frac = (frac + '000000000')[:9]
        if name.startswith('perf_') or name in ('sample', 'lost', 'aux',
                                                 'lost_samples'):
            continue
        out.append((int(sec) * 10**9 + int(frac), int(cpu), int(pid), name,
                    norm_fields(rest)))
    return out

def script(path):
    out = []
    pat = re.compile(r'^\s*(-?\d+)\s+\[(\d+)\]\s+(\d+)\.(\d+):\s+(\w+):(\w+):\s?(.*)$')
    for line in open(path, errors='replace'):
        m = pat.match(line.rstrip('\n'))
        if not m:
            continue
        pid, cpu, sec, frac, system, name, rest = m.groups()
        frac = (frac + '000000000')[:9]
        out.append((int(sec) * 10**9 + int(frac), int(cpu), int(pid), name,
                    norm_fields(rest)))
    return out

r = report(sys.argv[1])
s = script(sys.argv[2])
what = sys.argv[3]
names = sorted(set(e[3] for e in s))
if not s:
    print(f'{what}: perf script shows no events')
    sys.exit(1)
# perf script prints tid -1 for samples of threads it already saw exit;
# compare those without the pid, all others with it.
def nopid(e):
    return (e[0], e[1], e[3], e[4])
only_r = Counter(map(nopid, r)) - Counter(map(nopid, s))
only_s = Counter(map(nopid, s)) - Counter(map(nopid, r))
full = Counter(r)
bad_pid = [e for e in s if e[2] != -1 and full[e] == 0]
if not only_r and not only_s and not bad_pid:
    unk = sum(1 for e in s if e[2] == -1)
    print(f'{what}: {len(r)} events match ({", ".join(names)}); '
          f'{unk} without a pid in perf script')
    sys.exit(0)
print(f'{what}: trace-cmd report has {len(r)} events, perf script {len(s)}')
for e in sorted(only_r.elements())[:5]:
    print(f'  only in trace-cmd report: {e}')
for e in sorted(only_s.elements())[:5]:
    print(f'  only in perf script:      {e}')
for e in bad_pid[:5]:
    print(f'  pid differs:              {e}')
sys.exit(1)
EOF
	[ $? = 0 ] || err=1
}

# Checks on the recording itself so the test exercises what it claims.
check_coverage()
{
	local dat=$1

	# Large events: console messages longer than 112 bytes.
	if ! grep -q "perf trace.dat test 300" "${tmpdir}/report.raw"; then
		echo "no large printk:console event in the output"
		err=1
	fi
	# The converter's summary counts large events.
	if ! grep -Eq " [1-9][0-9]* large," "${tmpdir}/convert.err"; then
		echo "no large events in the conversion:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
	if ! trace-cmd dump --summary "${dat}" >/dev/null 2>&1; then
		echo "trace-cmd dump --summary failed"
		err=1
	fi
}

convert()
{
	perf data convert "$@" 2>"${tmpdir}/convert.err" || {
		echo "perf data convert $* failed:"
		cat "${tmpdir}/convert.err"
		err=1
		return 1
	}
}

test_file_v7()
{
	echo "Testing trace.dat v7 from a file"
	record -o "${tmpdir}/perf.data"
	convert -i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/v7.dat" || return
	compare "${tmpdir}/perf.data" "${tmpdir}/v7.dat" "v7 none"
	check_coverage "${tmpdir}/v7.dat"
}

test_time_extend()
{
	echo "Testing TIME_EXTEND: events 0.3 s apart on one CPU"
	perf record -q -a -o "${tmpdir}/gaps.data" -e printk:console -- \
		taskset -c 0 bash -c 'for i in 1 2 3; do
			echo "perf trace.dat gap $i" > /dev/kmsg; sleep 0.3; done' \
		2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/gaps.data" --to-trace-dat "${tmpdir}/gaps.dat" ||
		return
	compare "${tmpdir}/gaps.data" "${tmpdir}/gaps.dat" "gaps"
	if ! grep -Eq " [1-9][0-9]* time extends" "${tmpdir}/convert.err"; then
		echo "no TIME_EXTEND in the conversion:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
}

test_versions_compression()
{
	local v c

	echo "Testing trace.dat v6, and v7 with zlib and zstd"
	convert -i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/v6.dat" \
		--trace-dat-version 6 &&
		compare "${tmpdir}/perf.data" "${tmpdir}/v6.dat" "v6"
	for c in zstd zlib; do
		if ! trace-cmd list -c 2>/dev/null | grep -q "${c}"; then
			echo "trace-cmd cannot read ${c} [Skipped ${c}]"
			continue
		fi
		if ! convert -i "${tmpdir}/perf.data" --to-trace-dat \
			"${tmpdir}/v7-${c}.dat" --trace-dat-compression ${c}; then
			continue
		fi
		compare "${tmpdir}/perf.data" "${tmpdir}/v7-${c}.dat" "v7 ${c}"
	done
	v=$(trace-cmd dump --summary "${tmpdir}/v6.dat" 2>/dev/null | awk '/\[Version\]/ {print $1}')
	if [ "${v}" != 6 ]; then
		echo "v6 file reports version '${v}'"
		err=1
	fi
}

test_time_range()
{
	echo "Testing --time"
	convert -i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/time.dat" \
		--time 0%-50% || return
	compare "${tmpdir}/perf.data" "${tmpdir}/time.dat" "--time 0%-50%" \
		--time 0%-50%
	if ! grep -Eq " [1-9][0-9]* skipped" "${tmpdir}/convert.err"; then
		echo "--time 0%-50% skipped nothing"
		err=1
	fi
}

test_pipe()
{
	echo "Testing trace.dat from pipe input"
	record -o - > "${tmpdir}/pipe.data"
	convert -i - --to-trace-dat "${tmpdir}/pipe.dat" < "${tmpdir}/pipe.data" ||
		return
	compare "${tmpdir}/pipe.data" "${tmpdir}/pipe.dat" "pipe"
}

test_compressed_input()
{
	echo "Testing trace.dat from a perf record -z recording"
	if ! record -z -o "${tmpdir}/z.data"; then
		echo "perf record -z not supported [Skipped]"
		return
	fi
	convert -i "${tmpdir}/z.data" --to-trace-dat "${tmpdir}/z.dat" || return
	compare "${tmpdir}/z.data" "${tmpdir}/z.dat" "-z input"
}

test_synthetic()
{
	echo "Testing perf:sample events for non-tracepoint samples"
	perf record -q -a -o "${tmpdir}/mixed.data" -e cpu-clock -c 1000000 \
		-e sched:sched_switch -- perf test -w noploop 0.2 2>/dev/null
	convert -i "${tmpdir}/mixed.data" --to-trace-dat "${tmpdir}/mixed.dat" ||
		return
	if ! trace-cmd report "${tmpdir}/mixed.dat" 2>/dev/null |
		grep -q "sample:.*cpu-clock ip="; then
		echo "no perf:sample events in trace-cmd report"
		err=1
	fi
	convert -i "${tmpdir}/mixed.data" --to-trace-dat "${tmpdir}/tp.dat" \
		--tracepoints-only || return
	if trace-cmd report "${tmpdir}/tp.dat" 2>/dev/null | grep -q " sample: "; then
		echo "--tracepoints-only left perf:sample events in"
		err=1
	fi
	compare "${tmpdir}/mixed.data" "${tmpdir}/tp.dat" "tracepoints-only"
}

expect_fail()
{
	local what=$1 out=$2

	shift 2
	if perf data convert "$@" 2>"${tmpdir}/bad.err"; then
		echo "${what}: conversion did not fail"
		err=1
	elif [ "$(wc -l < "${tmpdir}/bad.err")" -lt 1 ]; then
		echo "${what}: no error message"
		err=1
	fi
	if [ -n "${out}" ] && [ -s "${out}" ]; then
		echo "${what}: left a non-empty ${out} behind"
		err=1
	fi
	if ls "${tmpdir}"/bad*.dat.tmp* >/dev/null 2>&1; then
		echo "${what}: left a temporary file behind"
		err=1
	fi
}

test_bad_input()
{
	local size

	echo "Testing bad input"
	size=$(stat -c %s "${tmpdir}/perf.data")
	head -c $((size / 2)) "${tmpdir}/perf.data" > "${tmpdir}/trunc.data"
	expect_fail "truncated input" "${tmpdir}/bad1.dat" \
		-i "${tmpdir}/trunc.data" --to-trace-dat "${tmpdir}/bad1.dat"
	head -c 4096 /dev/urandom > "${tmpdir}/garbage.data"
	expect_fail "corrupt input" "${tmpdir}/bad2.dat" \
		-i "${tmpdir}/garbage.data" --to-trace-dat "${tmpdir}/bad2.dat"
	perf record -q -o "${tmpdir}/notp.data" -e cpu-clock -- true 2>/dev/null
	expect_fail "no tracing data" "${tmpdir}/bad3.dat" \
		-i "${tmpdir}/notp.data" --to-trace-dat "${tmpdir}/bad3.dat"
	echo keep > "${tmpdir}/exists.dat"
	expect_fail "output exists" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/exists.dat"
	if [ "$(cat "${tmpdir}/exists.dat")" != keep ]; then
		echo "output exists: file was overwritten without --force"
		err=1
	fi
	perf data convert -i "${tmpdir}/perf.data" --force \
		--to-trace-dat "${tmpdir}/exists.dat" 2>/dev/null || {
		echo "--force did not overwrite"
		err=1
	}
	expect_fail "unwritable output" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat /proc/perf-trace-dat.dat
}

test_file_v7 || err=1
test_time_extend || err=1
test_versions_compression || err=1
test_time_range || err=1
test_pipe || err=1
test_compressed_input || err=1
test_synthetic || err=1
test_bad_input || err=1

cleanup
if [ ${err} = 0 ]; then
	echo "perf data convert --to-trace-dat [SUCCESS]"
fi
exit ${err}
