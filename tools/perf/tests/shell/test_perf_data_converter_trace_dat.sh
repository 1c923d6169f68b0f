#!/bin/bash
# 'perf data convert --to-trace-dat' command test (exclusive)
# SPDX-License-Identifier: GPL-2.0
#
# Records sched, irq and printk:console tracepoints (console messages longer
# than 112 bytes make large events, idle gaps of more than 2^27 ns make
# TIME_EXTENDs), converts to trace.dat v7 and v6, compressed and not, from a
# file, a pipe and a -z recording, and checks that 'trace-cmd report' shows
# the same events as 'perf script': name, CPU, pid, timestamp and fields,
# and that every pid in an event has a name.  Every file converted is read
# by 'trace-cmd report' under valgrind, which must report nothing.
# Then: short-lived tasks have names; %ps fields resolve through the
# kallsyms of the recording's kernel (its own /proc/kallsyms text, or its
# kernel map relocated when it ran at other addresses); UNAME and VERSION;
# --tod gives the times 'perf script --tod' prints, and the trace clock is
# that of perf record -k; --all adds the perf:* events, and converts a
# recording without tracepoints (samples, callchains).  AUX, LOST and
# LOST_SAMPLES records, which need an AUX PMU or an overloaded machine to
# appear, events too big for a page, and samples of the idle task and of
# tid -1 are appended to a pipe recording by a script.  A per-thread
# recording, where several ring buffers feed one CPU, comes out in time
# order.  Then checks the bad-input cases: non-zero exit, one line on
# stderr that names the problem (a directory, a missing input, a full
# disk...), no output.

set -e

err=0
nvalgrind=0
nnames=0
mounted_tracefs=""
tracefs=/sys/kernel/tracing

shelldir=$(dirname "$0")
if [ -e "${shelldir}"/lib/setup_python.sh ]; then
	# shellcheck source=lib/setup_python.sh
	. "${shelldir}"/lib/setup_python.sh
else
	# Run from outside a perf tree.
	PYTHON=${PYTHON:-python3}
fi

if ! command -v trace-cmd >/dev/null; then
	echo "trace-cmd not installed [Skipped]"
	exit 2
fi
# It compares trace-cmd report with perf script, and crafts records.
if ! command -v "${PYTHON}" >/dev/null; then
	echo "no ${PYTHON} [Skipped]"
	exit 2
fi
if ! perf data convert --to-trace-dat 2>&1 | grep -q -- "--to-trace-dat"; then
	echo "perf without --to-trace-dat [Skipped]"
	exit 2
fi
valgrind=""
if command -v valgrind >/dev/null; then
	valgrind=valgrind
else
	echo "valgrind not installed: trace-cmd report not checked under valgrind [Skipped part]"
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
# trace-cmd shows a task without a command line as "<...>-pid".
noname = sorted(set(int(m.group(1)) for m in
                    (re.match(r'^\s*<\.\.\.>-(\d+)\s', l)
                     for l in open(sys.argv[1], errors='replace')) if m))
if noname:
    print(f'{what}: {len(noname)} pids without a name in trace-cmd report: '
          f'{noname[:10]}')
    sys.exit(1)
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

# trace-cmd report under valgrind: it must read only what the file holds.
check_valgrind()
{
	local dat=$1

	[ -n "${valgrind}" ] || return 0
	if ! valgrind -q --error-exitcode=1 trace-cmd report "${dat}" \
		>/dev/null 2>"${tmpdir}/valgrind.err"; then
		echo "valgrind trace-cmd report ${dat##*/}:"
		grep -m4 -E "Invalid|uninitialised|   (at|by) 0x" "${tmpdir}/valgrind.err" ||
			head -4 "${tmpdir}/valgrind.err"
		err=1
		return 1
	fi
	nvalgrind=$((nvalgrind + 1))
}

# Every pid of an event has a command line: trace-cmd shows "<...>-pid" for
# one without.
check_names()
{
	local dat=$1 n

	n=$(trace-cmd report "${dat}" 2>/dev/null | grep -Ec '^ *<\.\.\.>-[0-9]+ ' || true)
	if [ "${n}" != 0 ]; then
		echo "${dat##*/}: ${n} events of tasks without a name (<...>):"
		trace-cmd report "${dat}" 2>/dev/null | grep -E -m3 '^ *<\.\.\.>-[0-9]+ '
		err=1
	fi
	nnames=$((nnames + 1))
}

# perf data convert "$@"; the trace.dat it writes is checked under valgrind
# and for tasks without a name.
convert()
{
	local a out=""

	perf data convert "$@" 2>"${tmpdir}/convert.err" || {
		echo "perf data convert $* failed:"
		cat "${tmpdir}/convert.err"
		err=1
		return 1
	}
	for a in "$@"; do
		if [ "${out}" = next ]; then
			out=${a}
		fi
		if [ "${a}" = --to-trace-dat ]; then
			out=next
		fi
	done
	check_valgrind "${out}" || true
	check_names "${out}"
}

test_file_v7()
{
	echo "Testing trace.dat v7 from a file"
	record -o "${tmpdir}/perf.data"
	convert -v -i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/v7.dat" || return
	# A per-CPU recording (-a) is read in file order, in one pass.
	if ! grep -q "^trace.dat: converted in file order" "${tmpdir}/convert.err" ||
	   grep -q "converting again" "${tmpdir}/convert.err"; then
		echo "v7: a per-CPU recording not converted in file order in one pass:"
		grep "order" "${tmpdir}/convert.err"
		err=1
	fi
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
		if ! perf version --build-options 2>/dev/null | grep -Eq "^ *${c}: \[ on"; then
			echo "perf is built without ${c} [Skipped ${c}]"
			continue
		fi
		if ! convert -i "${tmpdir}/perf.data" --to-trace-dat \
			"${tmpdir}/v7-${c}.dat" --trace-dat-compression ${c}; then
			continue
		fi
		compare "${tmpdir}/perf.data" "${tmpdir}/v7-${c}.dat" "v7 ${c}"
	done
	v=$(trace-cmd dump --summary "${tmpdir}/v6.dat" 2>/dev/null |
		awk '/\[Version\]/ {print $1}')
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
	echo "Testing tracepoints only by default, perf:sample events with --all"
	perf record -q -a -o "${tmpdir}/mixed.data" -e cpu-clock -c 1000000 \
		-e sched:sched_switch -- perf test -w noploop 0.2 2>/dev/null
	convert -i "${tmpdir}/mixed.data" --to-trace-dat "${tmpdir}/mixed.dat" \
		--all || return
	if ! trace-cmd report "${tmpdir}/mixed.dat" 2>/dev/null |
		grep -q "sample:.*cpu-clock ip="; then
		echo "--all: no perf:sample events in trace-cmd report"
		err=1
	fi
	convert -i "${tmpdir}/mixed.data" --to-trace-dat "${tmpdir}/tp.dat" ||
		return
	if trace-cmd report "${tmpdir}/tp.dat" 2>/dev/null | grep -q " sample: "; then
		echo "default conversion has perf:sample events"
		err=1
	fi
	compare "${tmpdir}/mixed.data" "${tmpdir}/tp.dat" "tracepoints by default"
}

# A recording without tracepoints has no tracing data: --all converts its
# samples all the same, with their CPU, pid, tid, period and ip, and the
# callchain of a -g recording, innermost frame first.
test_no_tracing_data()
{
	local g n_perf n_dat

	echo "Testing --all on recordings without tracepoints (samples, callchains)"
	for g in "" -g; do
		perf record -q ${g} -o "${tmpdir}/samples${g}.data" -e cpu-clock \
			-c 100000 -- perf test -w noploop 0.2 2>/dev/null
		convert -i "${tmpdir}/samples${g}.data" --all \
			--to-trace-dat "${tmpdir}/samples${g}.dat" || continue
		perf script -i "${tmpdir}/samples${g}.data" -F pid,tid,time \
			2>/dev/null | grep -c . > "${tmpdir}/n_perf" || true
		n_perf=$(cat "${tmpdir}/n_perf")
		n_dat=$(trace-cmd report "${tmpdir}/samples${g}.dat" 2>/dev/null |
			grep -cE "sample: +cpu-clock ip=[^ ]+ pid=[0-9]+ tid=[0-9]+ period=100000")
		if [ "${n_perf}" = 0 ] || [ "${n_perf}" != "${n_dat}" ]; then
			echo "--all${g:+ $g}: ${n_perf} samples in perf script," \
				"${n_dat} in trace-cmd report"
			err=1
		fi
		[ -n "${g}" ] || continue
		# Every sample has a callchain.
		n_dat=$(trace-cmd report "${tmpdir}/samples${g}.dat" 2>/dev/null |
			grep -cE "sample: .* callchain=[^ ]")
		if [ "${n_dat}" != "${n_perf}" ]; then
			echo "--all -g: ${n_dat} of ${n_perf} samples with a callchain"
			err=1
		fi
		if ! trace-cmd report "${tmpdir}/samples${g}.dat" 2>/dev/null |
			grep -qE "callchain=[a-z_][^ ]*\+0x[0-9a-f]+ <- [a-z_]"; then
			echo "--all -g: no callchain with resolved frames"
			err=1
		fi
	done
}

# --all makes perf:switch events of PERF_RECORD_SWITCH records: one per
# record perf script shows, in and out, with the task that switched.
test_switch_events()
{
	local n_perf n_dat

	echo "Testing perf:switch events for PERF_RECORD_SWITCH records with --all"
	perf record -q --switch-events -o "${tmpdir}/switch.data" -e cpu-clock \
		-c 100000 -- perf test -w noploop 0.2 2>/dev/null
	convert -i "${tmpdir}/switch.data" --all \
		--to-trace-dat "${tmpdir}/switch.dat" || return
	n_perf=$(perf script -i "${tmpdir}/switch.data" --show-switch-events \
		-F pid,tid,time 2>/dev/null | grep -c "PERF_RECORD_SWITCH")
	trace-cmd report "${tmpdir}/switch.dat" 2>/dev/null > "${tmpdir}/switch.txt"
	n_dat=$(grep -cE "switch: +(in|out)( preempt)? next_prev_pid=-1 next_prev_tid=-1" \
		"${tmpdir}/switch.txt")
	if [ "${n_perf}" = 0 ] || [ "${n_perf}" != "${n_dat}" ]; then
		echo "--all: ${n_perf} switch records in perf script," \
			"${n_dat} perf:switch events in trace-cmd report"
		return 1
	fi
	if ! grep -qE "switch: +out" "${tmpdir}/switch.txt" ||
		! grep -qE "switch: +in" "${tmpdir}/switch.txt"; then
		echo "--all: no perf:switch event in or out"
		return 1
	fi
}

# Append records after the last sample of the pipe-mode recording $2,
# writing $3, and print the time of that sample: with $1 = aux,
# PERF_RECORD_AUX, LOST and LOST_SAMPLES records (the sample_id trailer of
# each follows the first attr); with big, a copy of the last sample whose
# raw data is larger than a ring-buffer page; with deferred, a copy of the
# last sample with period 777777 whose callchain ends after its kernel
# frames in PERF_CONTEXT_USER_DEFERRED and a cookie; with ksym:ADDR, a
# KSYMBOL record of a BPF program rig_bpf_prog at ADDR, then a copy of
# the last sample with period 777778 and the callchain ADDR+0x10.
add_records()
{
	$PYTHON - "$1" "$2" "$3" <<'EOF'
import struct, sys

mode = sys.argv[1]
data = open(sys.argv[2], 'rb').read()
if data[:8] != b'PERFILE2' or struct.unpack_from('<Q', data, 8)[0] != 16:
    sys.exit('not a little-endian pipe-mode perf.data')
IP, TID, TIME, ADDR, READ, CALLCHAIN, ID, CPU, PERIOD, STREAM_ID, RAW = \
    1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024
IDENTIFIER = 65536
sample_type = None
last = 0
last_pos = None
feature = {}                                    # feature id: record offset
pos = 16
while pos + 8 <= len(data):
    typ, _, size = struct.unpack_from('<IHH', data, pos)
    if size < 8:
        sys.exit('bad record size')
    if typ == 64 and sample_type is None:       # HEADER_ATTR
        sample_type, = struct.unpack_from('<Q', data, pos + 8 + 24)
        flags, = struct.unpack_from('<Q', data, pos + 8 + 40)
        if not flags & (1 << 18) or not sample_type & TIME:
            sys.exit('need sample_id_all and PERF_SAMPLE_TIME')
    elif typ == 80:                             # HEADER_FEATURE
        feature[struct.unpack_from('<Q', data, pos + 8)[0]] = pos
    elif typ == 9 and sample_type is not None:  # SAMPLE: ident, ip, tid, time
        off = pos + 8 + 8 * bool(sample_type & IDENTIFIER) + \
            8 * bool(sample_type & IP) + 8 * bool(sample_type & TID)
        t = struct.unpack_from('<Q', data, off)[0]
        if t >= last:
            last, last_pos = t, pos
    pos += size
    if typ == 66:                               # HEADER_TRACING_DATA
        pos += struct.unpack_from('<I', data, pos - size + 8)[0]

def record(typ, body, t, misc=0):
    # sample_id: tid, time, id, stream_id, cpu, identifier; id 0 is the
    # first event.
    for bit, fmt, val in ((TID, '<II', (0, 0)), (TIME, '<Q', (t,)),
                          (ID, '<Q', (0,)), (STREAM_ID, '<Q', (0,)),
                          (CPU, '<II', (0, 0)), (IDENTIFIER, '<Q', (0,))):
        if sample_type & bit:
            body += struct.pack(fmt, *val)
    return struct.pack('<IHH', typ, misc, 8 + len(body)) + body

def sample_copy(raw_size=0, dt=1000, cpu=None):
    # The last sample, dt ns later (on CPU cpu), with its raw data padded
    # with zeros to raw_size bytes.
    typ, misc, size = struct.unpack_from('<IHH', data, last_pos)
    body = bytearray(data[last_pos + 8:last_pos + size])
    if sample_type & (READ | CALLCHAIN) or not sample_type & RAW:
        sys.exit('sample layout not handled')
    off = 0
    for bit in (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
                PERIOD):
        if not sample_type & bit:
            continue
        if bit == TIME:
            struct.pack_into('<Q', body, off, last + dt)
        elif bit == CPU and cpu is not None:
            struct.pack_into('<II', body, off, cpu, 0)
        off += 8
    rsize, = struct.unpack_from('<I', body, off)
    raw = bytes(body[off + 4:off + 4 + rsize])
    rest = bytes(body[off + 4 + rsize:])
    raw = raw + bytes(max(raw_size - len(raw), 0))
    body = bytes(body[:off]) + struct.pack('<I', len(raw)) + raw + rest
    return struct.pack('<IHH', typ, misc, 8 + len(body)) + body

def sample_chain(period, dt, chain):
    # The last sample, dt ns after it, with the period and the callchain
    # chain(ips) makes of its own.
    typ, misc, size = struct.unpack_from('<IHH', data, last_pos)
    body = bytes(data[last_pos + 8:last_pos + size])
    if sample_type & READ or not sample_type & CALLCHAIN or \
            not sample_type & PERIOD:
        sys.exit('sample layout not handled')
    head = b''
    for bit in (IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU,
                PERIOD):
        if not sample_type & bit:
            continue
        val = body[len(head):len(head) + 8]
        if bit == TIME:
            val = struct.pack('<Q', last + dt)
        elif bit == PERIOD:
            val = struct.pack('<Q', period)
        head += val
    nr, = struct.unpack_from('<Q', body, len(head))
    ips = chain(list(struct.unpack_from(f'<{nr}Q', body, len(head) + 8)))
    body = head + struct.pack(f'<{len(ips) + 1}Q', len(ips), *ips) + \
        body[len(head) + 8 + 8 * nr:]
    return struct.pack('<IHH', typ, misc, 8 + len(body)) + body

def deferred(ips):
    # As a kernel that defers the user callchain to a CALLCHAIN_DEFERRED
    # record writes the sample's: the kernel frames, the marker and the
    # cookie that names the record.
    user = 2**64 - 512                          # PERF_CONTEXT_USER
    if user in ips:
        ips = ips[:ips.index(user)]
    return ips + [2**64 - 640, 0x5eed5eed5eed5eed]

t = last + 1000
if mode == 'aux':
    recs = record(11, struct.pack('<QQQ', 0x1000, 4096, 0x1 | 0x4), t)    # AUX
    recs += record(2, struct.pack('<QQ', 0, 7), t + 1000)                 # LOST
    recs += record(13, struct.pack('<Q', 5), t + 2000)                    # LOST_SAMPLES
    recs += record(11, struct.pack('<QQQ', 0x2000, 8192, 0x8), t + 3000)  # AUX
elif mode == 'big':
    recs = sample_copy(raw_size=3 * 4096 + 4)
elif mode.startswith('cpus:'):
    # The last sample again on each of CPUs 0 to N - 1, 1 us apart, in a
    # recording of N CPUs: HEADER_NRCPUS says N available (perf takes a
    # sample of a CPU beyond it for CPU 0) and at most N online (perf
    # refuses more online than available), and the CPU topology, which has
    # an entry for each CPU, goes.
    n = int(mode[5:])
    recs = b''.join(sample_copy(dt=1000 * (c + 1), cpu=c) for c in range(n))
    if 7 not in feature:
        sys.exit('no HEADER_NRCPUS record')
    data = bytearray(data)
    online, = struct.unpack_from('<I', data, feature[7] + 20)
    struct.pack_into('<II', data, feature[7] + 16, n, min(online, n))
    if 13 in feature:                           # after HEADER_NRCPUS
        top = feature[13]
        del data[top:top + struct.unpack_from('<H', data, top + 6)[0]]
elif mode == 'deferred':
    recs = sample_chain(777777, 1000, deferred)
elif mode.startswith('ksym:'):
    # A BPF program at the address given (KSYMBOL register, 256 bytes),
    # then a sample of period 777778 whose callchain is 16 bytes into it.
    addr = int(mode[5:], 0)
    name = b'rig_bpf_prog'
    body = struct.pack('<QIHH', addr, 256, 1, 0) + name + \
        bytes(8 - len(name) % 8)
    recs = record(17, body, t)
    recs += sample_chain(777778, 2000, lambda ips: [2**64 - 128, addr + 16])
elif mode.startswith('poke:'):
    # TEXT_POKE of two bytes of kernel code at the address given (cpumode
    # kernel), as an intel_pt recording has them.
    body = struct.pack('<QHH', int(mode[5:], 0), 2, 2) + bytes(4)
    recs = record(20, body, t, misc=1)
else:
    sys.exit('unknown mode ' + mode)
open(sys.argv[3], 'wb').write(data + recs)
print(f'{last // 10**9}.{last % 10**9:09d}')
EOF
}

test_aux_lost()
{
	local e last s0 l0 rep="${tmpdir}/aux.report"
	local added="aux: *offset=0x1000|lost: *id=0 lost=7|lost_samples: *lost=5"

	added="${added}|aux: *offset=0x2000"

	echo "Testing perf:aux and perf:lost events for AUX and LOST records with --all"
	if ! last=$(add_records aux "${tmpdir}/pipe.data" "${tmpdir}/aux.data"); then
		echo "cannot add AUX and LOST records to the pipe recording"
		err=1
		return
	fi
	# The recording may have LOST records of its own (a loaded machine):
	# count those first.
	convert -i - --to-trace-dat "${tmpdir}/aux0.dat" --all < "${tmpdir}/pipe.data" ||
		return
	s0=$(sed -n 's/.* \([0-9]*\) synthetic,.*/\1/p' "${tmpdir}/convert.err")
	l0=$(sed -n 's/.* (\([0-9]*\) after lost events).*/\1/p' "${tmpdir}/convert.err")
	convert -i - --to-trace-dat "${tmpdir}/aux.dat" --all < "${tmpdir}/aux.data" ||
		return
	trace-cmd report "${tmpdir}/aux.dat" > "${rep}" 2>/dev/null
	for e in "aux: *offset=0x1000 size=4096 flags=TRUNCATED|PARTIAL" \
		 "lost: *id=0 lost=7" "lost_samples: *lost=5" \
		 "aux: *offset=0x2000 size=8192 flags=COLLISION"; do
		if ! grep -q "\[000\] .* ${e}\$" "${rep}"; then
			echo "no '${e}' event in trace-cmd report"
			err=1
		fi
	done
	if ! grep -Eq " $((s0 + 4)) synthetic, .* \($((l0 + 1)) after lost events\)" \
		"${tmpdir}/convert.err"; then
		echo "AUX/LOST records not counted as 4 more synthetic events" \
			"(${s0} before) and a lost page (${l0} before):"
		cat "${tmpdir}/convert.err"
		err=1
	fi
	if grep -q "not marked" "${tmpdir}/convert.err"; then
		echo "--all: a loss said to be unmarked:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
	compare "${tmpdir}/aux.data" "${tmpdir}/aux.dat" "pipe with AUX/LOST"
	convert -i - --to-trace-dat "${tmpdir}/aux-tp.dat" \
		< "${tmpdir}/aux.data" || return
	if trace-cmd report "${tmpdir}/aux-tp.dat" 2>/dev/null |
		grep -Eq " (aux|lost|lost_samples): "; then
		echo "default conversion has perf:aux/perf:lost events"
		err=1
	fi
	# The LOST record follows CPU 0's last event: no page to flag.
	if ! grep -q "lost after the last event of [1-9][0-9]* CPU(s) are not marked" \
		"${tmpdir}/convert.err"; then
		echo "default conversion: no warning about the loss after the last event:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
	# The records follow the last sample: --time up to it leaves them out,
	# what the recording had stays.
	convert -i - --to-trace-dat "${tmpdir}/aux0-time.dat" --all \
		--time ",${last}" < "${tmpdir}/pipe.data" || return
	e=$(sed -n 's/.* \([0-9]* synthetic,.*after lost events)\), \([0-9]*\) skipped.*/\1 \2/p' \
		"${tmpdir}/convert.err")
	convert -i - --to-trace-dat "${tmpdir}/aux-time.dat" --all \
		--time ",${last}" < "${tmpdir}/aux.data" || return
	if trace-cmd report "${tmpdir}/aux-time.dat" 2>/dev/null | grep -Eq "${added}"; then
		echo "--time ,${last} left the added perf:aux/perf:lost events in"
		err=1
	fi
	if ! grep -Fq " ${e% *}, $((${e##* } + 4)) skipped" "${tmpdir}/convert.err"; then
		echo "--time ,${last}: AUX/LOST records not skipped:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
}

# An event larger than a ring-buffer page cannot be written: a warning
# says how many were left out.
test_too_big()
{
	echo "Testing an event too big for a page"
	if ! add_records big "${tmpdir}/pipe.data" "${tmpdir}/big.data" >/dev/null; then
		echo "cannot add a big sample to the pipe recording"
		err=1
		return
	fi
	convert -i - --to-trace-dat "${tmpdir}/big.dat" < "${tmpdir}/big.data" ||
		return
	if ! grep -q "trace.dat: 1 events too big for a page, largest 12292 bytes" \
		"${tmpdir}/convert.err"; then
		echo "no warning about the event too big for a page:"
		cat "${tmpdir}/convert.err"
		err=1
	fi
}

# Events on more CPUs than the soft limit of open files allows spill files
# for (one for each CPU but the one written in place): the converter
# raises the limit, as perf does for the files of its events.  The limit:
# 20 more than this shell has open; the CPUs: 50 more than that (at most
# 4096: perf takes a sample of a CPU beyond for CPU 0).
test_many_cpus()
{
	local limit n got hard

	limit=$(( $(find /proc/self/fd/ -mindepth 1 -maxdepth 1 | wc -l) + 20 ))
	n=$((limit + 50))
	hard=$(ulimit -H -n)
	if [ "${n}" -gt 4096 ] ||
	   { [ "${hard}" != unlimited ] && [ "${hard}" -lt "${limit}" ]; } ||
	   { [ "${hard}" != unlimited ] && [ "${hard}" -lt $((n + limit)) ] &&
	     [ "$(id -u)" != 0 ]; }; then
		echo "events on ${n} CPUs, a hard limit of ${hard} open files [Skipped]"
		return
	fi
	echo "Testing events on ${n} CPUs with a soft limit of ${limit} open files"
	if ! add_records "cpus:${n}" "${tmpdir}/pipe.data" "${tmpdir}/cpus.data" \
		>/dev/null; then
		echo "cannot add samples on ${n} CPUs to the pipe recording"
		err=1
		return
	fi
	if ! (ulimit -S -n "${limit}" &&
	      perf data convert -i - --to-trace-dat "${tmpdir}/cpus.dat" \
		< "${tmpdir}/cpus.data") 2>"${tmpdir}/convert.err"; then
		echo "${n} CPUs, soft limit of ${limit} open files: conversion failed:"
		cat "${tmpdir}/convert.err"
		err=1
		return
	fi
	got=$(trace-cmd report "${tmpdir}/cpus.dat" 2>/dev/null |
		grep -c "\[0*$((n - 1))\] " || true)
	if [ "${got}" != 1 ]; then
		echo "${n} CPUs: ${got} events on CPU $((n - 1)) in trace-cmd report, want 1"
		err=1
	fi
	rm -f "${tmpdir}/cpus.data" "${tmpdir}/cpus.dat"
}

# Every task has a name, also those that exited before the end: a shell
# that runs /bin/true three times, each a short-lived child whose pid the
# shell writes down, then forks a subshell that never calls exec (named
# after its parent: a FORK record and no COMM of its own).
test_task_names()
{
	local pid n=0

	echo "Testing names of short-lived tasks"
	: > "${tmpdir}/true.pids"
	# shellcheck disable=SC2016 # expanded by sh
	perf record -q -a -o "${tmpdir}/tasks.data" -e sched:sched_process_exec \
		-e sched:sched_process_exit -e sched:sched_switch -e sched:sched_wakeup \
		-- sh -c 'for i in 1 2 3; do /bin/true & echo $! >> "$1"; wait; done
			  (exit 0) & echo $! > "$1.sub"; wait' \
		sh "${tmpdir}/true.pids" 2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/tasks.data" --to-trace-dat "${tmpdir}/tasks.dat" ||
		return
	compare "${tmpdir}/tasks.data" "${tmpdir}/tasks.dat" "short-lived tasks"
	# The exit event of each /bin/true shows it under its name.
	for pid in $(cat "${tmpdir}/true.pids"); do
		if grep -Eq "^ *true-${pid} .* sched_process_exit: +comm=true pid=${pid} " \
			"${tmpdir}/report.raw"; then
			n=$((n + 1))
		else
			echo "short-lived tasks: the exit of /bin/true ${pid}" \
				"is not shown as true-${pid}:"
			grep -E "sched_process_exit: +comm=true pid=${pid} " "${tmpdir}/report.raw"
		fi
	done
	if [ "${n}" != 3 ]; then
		echo "short-lived tasks: ${n} of 3 exits of /bin/true named true"
		err=1
	fi
	pid=$(cat "${tmpdir}/true.pids.sub")
	if ! grep -Eq "^ *sh-${pid} .* sched_process_exit: +comm=sh pid=${pid} " \
		"${tmpdir}/report.raw"; then
		echo "short-lived tasks: the exit of the subshell ${pid} is not shown as sh-${pid}:"
		grep -E "sched_process_exit: .* pid=${pid} " "${tmpdir}/report.raw"
		err=1
	fi
	# Names libtraceevent's saved_cmdlines parser stops at (a newline,
	# nothing or only spaces after the pid) must not hide the names of
	# other tasks (check_names() in convert).
	# shellcheck disable=SC2016 # expanded by sh
	perf record -q -o "${tmpdir}/odd.data" -e sched:sched_process_exit \
		-e sched:sched_switch -- sh -c 'for i in 1 2 3 4 5 6; do
			sh -c "printf \"odd\\nname\" > /proc/self/comm; /bin/true"
			sh -c "printf \"\\n\" > /proc/self/comm; /bin/true"
			sh -c "printf \" \" > /proc/self/comm; echo \$\$ >> $1; /bin/true"
			/bin/true; done' sh "${tmpdir}/space.pids" 2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/odd.data" --to-trace-dat "${tmpdir}/odd.dat" || return
	trace-cmd report "${tmpdir}/odd.dat" >"${tmpdir}/odd.report" 2>/dev/null
	if ! grep -q '^ *odd?name-[0-9]' "${tmpdir}/odd.report"; then
		echo "task names with a newline: none shown as odd?name"
		err=1
	fi
	# A name of spaces only: each such task shows as "?".
	for pid in $(cat "${tmpdir}/space.pids"); do
		if ! grep -Eq "^ *\?-${pid} " "${tmpdir}/odd.report"; then
			echo "a task named ' ' (pid ${pid}) is not shown as ?-${pid}"
			err=1
		fi
	done
	if [ ! -s "${tmpdir}/space.pids" ]; then
		echo "no task was named ' '"
		err=1
	fi
}

# %ps fields resolve through the kallsyms taken from the kernel map.
test_kallsyms()
{
	local n raw

	echo "Testing kallsyms: %ps fields resolve to symbols"
	perf record -q -a -o "${tmpdir}/ksym.data" -e timer:hrtimer_start \
		-- sh -c 'sleep 0.1; sleep 0.1' 2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/ksym.data" --to-trace-dat "${tmpdir}/ksym.dat" ||
		return
	trace-cmd report "${tmpdir}/ksym.dat" >"${tmpdir}/ksym.report" 2>/dev/null
	n=$(grep -Ec "hrtimer_start: .*function=[a-z_][a-z0-9_.]*" \
		"${tmpdir}/ksym.report" || true)
	raw=$(grep -Ec "hrtimer_start: .*function=(0x)?[0-9a-f]{8,} " \
		"${tmpdir}/ksym.report" || true)
	if [ "${n}" = 0 ] || [ "${raw}" != 0 ] ||
		! grep -q "function=hrtimer_wakeup" "${tmpdir}/ksym.report"; then
		echo "kallsyms: ${n} hrtimer_start events with a symbol," \
			"${raw} with an address, hrtimer_wakeup of sleep expected:"
		grep -m3 "hrtimer_start:" "${tmpdir}/ksym.report"
		err=1
	fi
}

# kallsyms is the kernel's own text (/proc/kallsyms here) only when it has
# _text where the recording's kernel had it; a recording whose kernel map
# puts _text elsewhere (another boot of the kernel, KASLR: here its kernel
# MMAP2 record moved by 2 MiB) gets the symbols of the kernel map, which
# perf relocates to the recording's addresses.
test_kallsyms_relocated()
{
	local a b

	echo "Testing kallsyms of another boot of the recording's kernel"
	perf data convert -v -i "${tmpdir}/ksym.data" --to-trace-dat \
		"${tmpdir}/ksym-raw.dat" >"${tmpdir}/ksym-raw.err" 2>&1
	if ! grep -q "^trace.dat: kallsyms from /proc/kallsyms" "${tmpdir}/ksym-raw.err"; then
		echo "kallsyms: this boot's recording did not take /proc/kallsyms:"
		grep kallsyms "${tmpdir}/ksym-raw.err"
		err=1
	fi
	"${PYTHON}" - "${tmpdir}/ksym.data" "${tmpdir}/reloc.data" <<'PY'
import struct, sys
d = bytearray(open(sys.argv[1], 'rb').read())
i = d.find(b'[kernel.kallsyms]_text\0')
for off, typ in ((40, 1), (72, 10)):	# PERF_RECORD_MMAP, PERF_RECORD_MMAP2
    if i >= off and struct.unpack_from('<I', d, i - off)[0] == typ:
        pgoff = i - off + 32
        break
else:
    sys.exit('no kernel map record')
struct.pack_into('<Q', d, pgoff, struct.unpack_from('<Q', d, pgoff)[0] + (2 << 20))
open(sys.argv[2], 'wb').write(d)
PY
	[ -s "${tmpdir}/reloc.data" ] || { err=1; return; }
	perf data convert -v -i "${tmpdir}/reloc.data" --to-trace-dat \
		"${tmpdir}/reloc.dat" >"${tmpdir}/reloc.err" 2>&1
	if ! grep -q "^trace.dat: /proc/kallsyms not used for kallsyms" "${tmpdir}/reloc.err"; then
		echo "kallsyms: /proc/kallsyms taken for a kernel map 2 MiB away:"
		grep kallsyms "${tmpdir}/reloc.err"
		err=1
	fi
	a=$(trace-cmd report -f "${tmpdir}/ksym-raw.dat" 2>/dev/null |
		awk '$2 == "hrtimer_wakeup" { print $1; exit }')
	b=$(trace-cmd report -f "${tmpdir}/reloc.dat" 2>/dev/null |
		awk '$2 == "hrtimer_wakeup" { print $1; exit }')
	if [ -z "${a}" ] || [ -z "${b}" ] ||
		[ $((0x${b} - 0x${a})) != $((2 << 20)) ]; then
		echo "kallsyms: hrtimer_wakeup at '${a}', moved kernel '${b}' (2 MiB more expected)"
		err=1
	fi
}

# A perf record --kcore recording (a directory: data, kcore_dir/kallsyms)
# has its kernel's kallsyms: those, not this machine's /proc/kallsyms
# (here a copy of it with hrtimer_wakeup renamed, to tell them apart).
test_kallsyms_kcore()
{
	local kd="${tmpdir}/kcore.data"

	echo "Testing kallsyms of a perf record --kcore recording"
	mkdir -p "${kd}/kcore_dir"
	cp "${tmpdir}/ksym.data" "${kd}/data"
	sed 's/ hrtimer_wakeup$/ hrtimer_wakeup_kcore/' /proc/kallsyms \
		>"${kd}/kcore_dir/kallsyms"
	if ! grep -q " hrtimer_wakeup_kcore$" "${kd}/kcore_dir/kallsyms"; then
		echo "kallsyms: no hrtimer_wakeup in /proc/kallsyms [Skipped]"
		return
	fi
	perf data convert -v -i "${kd}" --to-trace-dat "${tmpdir}/kcore.dat" \
		>"${tmpdir}/kcore.err" 2>&1
	if ! grep -qF "trace.dat: kallsyms from ${kd}/kcore_dir/kallsyms" \
		"${tmpdir}/kcore.err" ||
	   ! trace-cmd report "${tmpdir}/kcore.dat" 2>/dev/null |
		grep -q "function=hrtimer_wakeup_kcore"; then
		echo "kallsyms: the recording's kcore_dir/kallsyms not taken:"
		grep -i "kallsyms\|error" "${tmpdir}/kcore.err"
		err=1
	fi
}

# Every hrtimer_start event of trace-cmd report's output $2 shows its
# function as an address: no symbols of another kernel.
check_unresolved()
{
	local n raw

	n=$(grep -c "hrtimer_start: " "$2" || true)
	raw=$(grep -Ec "hrtimer_start: .*function=(0x)?[0-9a-f]{8,} " "$2" || true)
	if [ "${n}" = 0 ] || [ "${raw}" != "${n}" ]; then
		echo "kallsyms: $1: ${raw} of ${n} hrtimer_start events show an" \
			"address, not this machine's symbols:"
		grep -m3 "hrtimer_start:" "$2"
		err=1
	fi
}

# The running kernel's build-id, for the cases that give a recording
# another kernel's; without one, a line that says the case ($1) is
# skipped, and a non-zero status.
kernel_buildid()
{
	local bid

	bid=$(perf buildid-list -k 2>/dev/null)
	if [ "${#bid}" -lt 16 ]; then
		echo "$1: no build-id of the running kernel [Skipped]" >&2
		return 1
	fi
	echo "${bid}"
}

# A copy $2 of the recording $1 whose kernel build-id $3 is changed, as
# if another kernel had made it; prints the changed build-id.
other_kernel()
{
	"${PYTHON}" - "$@" <<'PY'
import sys
d = open(sys.argv[1], 'rb').read()
bid = bytes.fromhex(sys.argv[3])
if bid not in d:
    sys.exit('the kernel build-id is not in the recording')
other = bytes(b ^ 0xff for b in bid[:4]) + bid[4:]
open(sys.argv[2], 'wb').write(d.replace(bid, other))
print(other.hex())
PY
}

# A recording whose kernel does not run here (a copy with its kernel
# build-id changed): kallsyms come from the build-id cache's copy of that
# kernel's, or not at all; never from this machine's /proc/kallsyms.
test_kallsyms_other_kernel()
{
	local a bid obid home="${tmpdir}/home"

	echo "Testing kallsyms of a kernel that does not run here"
	bid=$(kernel_buildid kallsyms) || return 0
	if ! obid=$(other_kernel "${tmpdir}/ksym.data" "${tmpdir}/obid.data" "${bid}"); then
		err=1
		return
	fi
	mkdir -p "${home}"
	if ! HOME="${home}" perf data convert -i "${tmpdir}/obid.data" \
		--to-trace-dat "${tmpdir}/obid.dat" >/dev/null 2>"${tmpdir}/obid.err"; then
		echo "kallsyms: the recording of another kernel did not convert:"
		cat "${tmpdir}/obid.err"
		err=1
		return
	fi
	if ! grep -q "build-id ${obid}) does not run here and neither the build-id cache" \
		"${tmpdir}/obid.err"; then
		echo "kallsyms: no warning that another kernel's kallsyms are left empty:"
		cat "${tmpdir}/obid.err"
		err=1
	fi
	trace-cmd report "${tmpdir}/obid.dat" >"${tmpdir}/obid.report" 2>/dev/null
	check_unresolved "another kernel's recording" "${tmpdir}/obid.report"
	# A TEXT_POKE record (code bytes, which intel_pt recordings have) in
	# the kernel does not load this machine's kallsyms either.
	a=$(awk '$3 == "_text" { print $1; exit }' /proc/kallsyms)
	perf record -q -a -o - -e timer:hrtimer_start -- sh -c 'sleep 0.1; sleep 0.1' \
		>"${tmpdir}/ksym-pipe.data" 2>"${tmpdir}/record.err"
	if [ -z "${a}" ] ||
	   ! add_records "poke:0x${a}" "${tmpdir}/ksym-pipe.data" \
		"${tmpdir}/poke.data" >/dev/null ||
	   ! other_kernel "${tmpdir}/poke.data" "${tmpdir}/opoke.data" "${bid}" >/dev/null; then
		echo "kallsyms: no recording with a TEXT_POKE of another kernel"
		err=1
		return
	fi
	HOME="${home}" perf data convert -i "${tmpdir}/opoke.data" \
		--to-trace-dat "${tmpdir}/opoke.dat" >/dev/null 2>&1
	trace-cmd report "${tmpdir}/opoke.dat" >"${tmpdir}/opoke.report" 2>/dev/null
	check_unresolved "another kernel's recording with a TEXT_POKE" \
		"${tmpdir}/opoke.report"
	# With that kernel's kallsyms in the build-id cache: those.
	mkdir -p "${home}/.debug/[kernel.kallsyms]/${obid}"
	cp /proc/kallsyms "${home}/.debug/[kernel.kallsyms]/${obid}/kallsyms"
	HOME="${home}" perf data convert -v -i "${tmpdir}/obid.data" \
		--to-trace-dat "${tmpdir}/obid2.dat" >"${tmpdir}/obid2.err" 2>&1
	if ! grep -qF "trace.dat: kallsyms from ${home}/.debug/[kernel.kallsyms]/${obid}/kallsyms" \
		"${tmpdir}/obid2.err" ||
	   ! trace-cmd report "${tmpdir}/obid2.dat" 2>/dev/null |
		grep -q "function=hrtimer_wakeup"; then
		echo "kallsyms: the build-id cache's kallsyms of another kernel not taken:"
		grep kallsyms "${tmpdir}/obid2.err"
		err=1
	fi
}

# --all: the kernel frames of the callchains of a kernel that does not run
# here stay addresses; perf would otherwise load this machine's kallsyms
# for them.  Context switches (-e cs) are taken in the kernel: each sample
# has kernel frames, which resolve in the recording as it is.
test_kallsyms_other_kernel_callchain()
{
	local bid obid n

	echo "Testing --all callchains of a kernel that does not run here"
	bid=$(kernel_buildid callchains) || return 0
	perf record -q -a -g -e cs -c 1 -o "${tmpdir}/cs.data" \
		-- sh -c 'sleep 0.1; sleep 0.1' 2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/cs.data" --all --to-trace-dat "${tmpdir}/cs.dat" ||
		return
	n=$(trace-cmd report "${tmpdir}/cs.dat" 2>/dev/null |
		grep -c "callchain=.*schedule+0x" || true)
	if [ "${n}" = 0 ]; then
		echo "callchains: no context switch with the kernel's schedule() frames"
		err=1
		return
	fi
	if ! obid=$(other_kernel "${tmpdir}/cs.data" "${tmpdir}/ocs.data" "${bid}"); then
		err=1
		return
	fi
	mkdir -p "${tmpdir}/home-cs"
	HOME="${tmpdir}/home-cs" perf data convert -v -i "${tmpdir}/ocs.data" --all \
		--to-trace-dat "${tmpdir}/ocs.dat" >"${tmpdir}/ocs.err" 2>&1
	trace-cmd report "${tmpdir}/ocs.dat" >"${tmpdir}/ocs.report" 2>/dev/null
	n=$(grep -c "callchain=.*0xffff[0-9a-f]\{12\}" "${tmpdir}/ocs.report" || true)
	if grep -q "Using /proc/kallsyms for symbols" "${tmpdir}/ocs.err" ||
	   grep -q "callchain=.*schedule+0x" "${tmpdir}/ocs.report" ||
	   [ "${n}" = 0 ] ||
	   ! grep -q "build-id ${obid}) does not run here" "${tmpdir}/ocs.err"; then
		echo "callchains of another kernel: resolved with this machine's symbols," \
			"or without a warning (${n} with kernel addresses):"
		grep -i "kallsyms\|build-id" "${tmpdir}/ocs.err"
		grep -m2 "callchain=" "${tmpdir}/ocs.report" | cut -c1-200
		err=1
	fi
}

# A pipe recording of context switches with callchains, to append
# records to: made once, by the first case that needs it.
cs_pipe()
{
	[ -s "${tmpdir}/cs-pipe.data" ] ||
		perf record -q -a -g -e cs -o - -- sh -c 'sleep 0.1; sleep 0.1' \
			>"${tmpdir}/cs-pipe.data" 2>"${tmpdir}/record.err"
}

# --all: a sample whose user callchain the kernel defers has its kernel
# frames, then PERF_CONTEXT_USER_DEFERRED and a cookie naming the
# CALLCHAIN_DEFERRED record with the user part; the cookie is no frame.
test_deferred_callchain()
{
	local line rep="${tmpdir}/deferred.report"

	echo "Testing --all callchains whose user part is deferred"
	cs_pipe
	if ! add_records deferred "${tmpdir}/cs-pipe.data" \
		"${tmpdir}/deferred.data" >/dev/null; then
		echo "deferred callchains: no recording with a deferred callchain"
		err=1
		return
	fi
	convert -i "${tmpdir}/deferred.data" --all \
		--to-trace-dat "${tmpdir}/deferred.dat" || return
	trace-cmd report "${tmpdir}/deferred.dat" >"${rep}" 2>/dev/null
	line=$(grep "period=777777 " "${rep}" || true)
	case "${line}" in
	*" callchain="*"+0x"*" <- (user callchain deferred)") ;;
	*)
		echo "deferred callchains: not the kernel frames and the marker:"
		echo "${line:-no sample with period 777777}" | cut -c1-300
		err=1 ;;
	esac
}

# --all in file order (a per-CPU perf.data file): the kernel's maps
# (modules and BPF programs: MMAP, KSYMBOL) go in file order, as user
# space ones do, and a sample after a BPF program was loaded resolves in
# it.  The recording: a pipe recording with a KSYMBOL and a sample in the
# program appended, written to a file by perf inject.
test_file_order_ksymbol()
{
	local line

	echo "Testing --all callchains into a BPF program in file order"
	cs_pipe
	if ! add_records ksym:0xffffffffc0123000 "${tmpdir}/cs-pipe.data" \
		"${tmpdir}/ks-pipe2.data" >/dev/null ||
	   ! perf inject -i "${tmpdir}/ks-pipe2.data" -o "${tmpdir}/ks.data" \
		2>"${tmpdir}/inject.err"; then
		echo "file order: no recording with a KSYMBOL:"
		cat "${tmpdir}/inject.err"
		err=1
		return
	fi
	convert -v -i "${tmpdir}/ks.data" --all --to-trace-dat "${tmpdir}/ks.dat" ||
		return
	line=$(trace-cmd report "${tmpdir}/ks.dat" 2>/dev/null |
		grep "period=777778 " || true)
	if ! grep -q "^trace.dat: converted in file order" "${tmpdir}/convert.err" ||
	   [ "${line##* callchain=}" != "rig_bpf_prog+0x10" ]; then
		echo "file order: not converted in file order, or the frame not" \
			"in the BPF program:"
		grep "order" "${tmpdir}/convert.err"
		echo "${line:-no sample with period 777778}" | cut -c1-300
		err=1
	fi
}

# UNAME and VERSION are those of the recording and of this perf
# ('trace-cmd report --uname' and '--version' print them after "cpus=N").
test_uname_version()
{
	local f u v

	echo "Testing the UNAME and VERSION options"
	u="Linux $(uname -n) $(uname -r) $(uname -m)"
	v=$(perf --version)
	for f in v7 v6; do
		if ! trace-cmd report --uname "${tmpdir}/${f}.dat" 2>/dev/null |
			grep -qxF "${u}"; then
			echo "${f}: UNAME is not '${u}':"
			trace-cmd report --uname "${tmpdir}/${f}.dat" 2>&1 | head -3
			err=1
		fi
		if ! trace-cmd report --version "${tmpdir}/${f}.dat" 2>/dev/null |
			grep -qxF "${v}"; then
			echo "${f}: VERSION is not '${v}':"
			trace-cmd report --version "${tmpdir}/${f}.dat" 2>&1 | head -3
			err=1
		fi
	done
}

# Without the kernel's build-id (-B --no-buildid-mmap), kallsyms could
# only come from this machine's /proc/kallsyms: right for a recording made
# here, wrong for one made elsewhere (here: another host name, in a UTS
# namespace).
test_kallsyms_no_buildid()
{
	local n

	echo "Testing kallsyms without a kernel build-id"
	perf record -q -B --no-buildid-mmap -a -o "${tmpdir}/nobid.data" -e timer:hrtimer_start \
		-- sh -c 'sleep 0.1; sleep 0.1' 2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/nobid.data" --to-trace-dat "${tmpdir}/nobid.dat" ||
		return
	n=$(trace-cmd report "${tmpdir}/nobid.dat" 2>/dev/null |
		grep -c "hrtimer_start: .*function=hrtimer_wakeup" || true)
	if [ "${n}" = 0 ]; then
		echo "kallsyms: a recording made here without build-ids has no symbols"
		err=1
	fi
	if ! unshare --uts true 2>/dev/null; then
		echo "kallsyms: no UTS namespace (unshare --uts): the other-machine case is not run"
		return
	fi
	unshare --uts sh -c 'hostname trace-dat-other-host &&
		exec perf record -q -B --no-buildid-mmap -a -o "$1" -e timer:hrtimer_start \
			-- sh -c "sleep 0.1; sleep 0.1"' sh "${tmpdir}/other.data" \
		2>"${tmpdir}/record.err"
	if ! perf data convert -i "${tmpdir}/other.data" \
		--to-trace-dat "${tmpdir}/other.dat" 2>"${tmpdir}/other.err"; then
		echo "kallsyms: the recording of another host did not convert:"
		cat "${tmpdir}/other.err"
		err=1
		return
	fi
	if ! grep -q "made on another machine (trace-dat-other-host" \
		"${tmpdir}/other.err"; then
		echo "kallsyms: no warning that the other host's kallsyms are left empty:"
		cat "${tmpdir}/other.err"
		err=1
	fi
	trace-cmd report "${tmpdir}/other.dat" >"${tmpdir}/other.report" 2>/dev/null
	check_unresolved "another host's recording" "${tmpdir}/other.report"
}

# --tod: trace-cmd's timestamps are the wall clock times perf script --tod
# prints for the same events.
test_tod()
{
	echo "Testing --tod"
	perf record -q -a -k CLOCK_MONOTONIC -o "${tmpdir}/tod.data" \
		-e sched:sched_switch -e sched:sched_wakeup -- sleep 0.2 \
		2>"${tmpdir}/record.err"
	convert -i "${tmpdir}/tod.data" --to-trace-dat "${tmpdir}/tod.dat" --tod ||
		return
	# perf record -k CLOCK_MONOTONIC: ftrace's "mono" clock.
	if ! trace-cmd dump --clock "${tmpdir}/tod.dat" 2>/dev/null | grep -q "\[mono\]"; then
		echo "--tod: the trace clock is not [mono]:"
		trace-cmd dump --clock "${tmpdir}/tod.dat" 2>&1 | tail -2
		err=1
	fi
	trace-cmd report -t "${tmpdir}/tod.dat" >"${tmpdir}/tod.report" 2>/dev/null
	TZ=UTC perf script -i "${tmpdir}/tod.data" --ns -F tod,cpu,event \
		>"${tmpdir}/tod.script" 2>/dev/null
	$PYTHON - "${tmpdir}/tod.report" "${tmpdir}/tod.script" <<'EOF' || err=1
import calendar, re, sys, time
from collections import Counter

r, s = Counter(), Counter()
pat = re.compile(r'^\s*.*-\d+\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):')
for line in open(sys.argv[1]):
    m = pat.match(line)
    if m:
        cpu, sec, ns, name = m.groups()
        r[(int(sec) * 10**9 + int(ns), int(cpu), name)] += 1
# perf script prints the CPU, then the time of day, then the event.
pat = re.compile(r'^\s*\[(\d+)\]\s+(\d+-\d+-\d+ \d+:\d+:\d+)\.(\d{9})\s+\w+:(\w+):')
for line in open(sys.argv[2]):
    m = pat.match(line)
    if m:
        cpu, date, ns, name = m.groups()
        sec = calendar.timegm(time.strptime(date, '%Y-%m-%d %H:%M:%S'))
        s[(sec * 10**9 + int(ns), int(cpu), name)] += 1
year = 365 * 86400 * 10**9
if not s or r != s or min(s)[0] < 40 * year:
    print(f'--tod: {sum(r.values())} events in trace-cmd report, '
          f'{sum(s.values())} in perf script --tod, {len(r - s)} differ')
    for e in sorted((r - s).elements())[:3]:
        print(f'  only in trace-cmd report: {e}')
    for e in sorted((s - r).elements())[:3]:
        print(f'  only in perf script:      {e}')
    sys.exit(1)
print(f'--tod: {sum(r.values())} events at the times of perf script --tod')
EOF
}

# A per-thread recording (--per-thread -p) of two busy tasks on CPU 0: each
# task has its own ring buffer, so the events of CPU 0 come from two buffers
# and interleave in the file.  The converter writes a per-CPU recording in
# file order; here it must notice that the order does not hold and sort the
# events with perf's ordered-events queue: the times are those perf script
# prints, none "out of order".
test_per_thread()
{
	local p1 p2 pid n

	echo "Testing a per-thread recording: two ring buffers feed CPU 0"
	taskset -c 0 perf test -w noploop 3 & p1=$!
	taskset -c 0 perf test -w noploop 3 & p2=$!
	perf record -q --per-thread -p "${p1},${p2}" -o "${tmpdir}/thread.data" \
		-e sched:sched_switch -e irq:softirq_entry -e irq:softirq_exit \
		-- sleep 1 2>"${tmpdir}/record.err"
	kill "${p1}" "${p2}" 2>/dev/null
	wait "${p1}" "${p2}" 2>/dev/null
	convert -v -i "${tmpdir}/thread.data" --to-trace-dat "${tmpdir}/thread.dat" ||
		return
	if ! grep -q "converting again with the ordered events queue" "${tmpdir}/convert.err"; then
		echo "per-thread: the interleaved ring buffers went unnoticed"
		err=1
	fi
	if grep -q "out of order" "${tmpdir}/convert.err"; then
		grep "out of order" "${tmpdir}/convert.err"
		err=1
	fi
	compare "${tmpdir}/thread.data" "${tmpdir}/thread.dat" "per-thread"
	for pid in "${p1}" "${p2}"; do
		n=$(grep -Ec -- "-${pid} +\[000\] " "${tmpdir}/report.raw" || true)
		if [ "${n}" -lt 10 ]; then
			echo "per-thread: ${n} events of task ${pid} on CPU 0, 10 or more expected"
			err=1
		fi
	done
}

# Append to the pipe-mode recording $1, writing $2, two copies of its last
# sample of a non-tracepoint event, after every sample: one of the idle
# task (pid and tid 0), one of a task perf cannot name (pid and tid -1: a
# task that is exiting, once its pid is released).  Print their times.
add_task_samples()
{
	$PYTHON - "$1" "$2" <<'EOF'
import struct, sys

data = open(sys.argv[1], 'rb').read()
if data[:8] != b'PERFILE2' or struct.unpack_from('<Q', data, 8)[0] != 16:
    sys.exit('not a little-endian pipe-mode perf.data')
IP, TID, TIME, IDENTIFIER = 1, 2, 4, 65536
attrs = {}
last_t, last = 0, None
pos = 16
while pos + 8 <= len(data):
    typ, _, size = struct.unpack_from('<IHH', data, pos)
    if size < 8:
        sys.exit('bad record size')
    if typ == 64:                               # HEADER_ATTR
        atype, asize = struct.unpack_from('<II', data, pos + 8)
        st, = struct.unpack_from('<Q', data, pos + 8 + 24)
        for k in range((size - 8 - asize) // 8):
            i, = struct.unpack_from('<Q', data, pos + 8 + asize + 8 * k)
            attrs[i] = (atype, st)
    elif typ == 9:                              # SAMPLE
        i, = struct.unpack_from('<Q', data, pos + 8)
        atype, st = attrs.get(i, (None, 0))
        if not st & IDENTIFIER or not st & TID or not st & TIME:
            sys.exit('need PERF_SAMPLE_IDENTIFIER, TID and TIME')
        tid_off = 8 + 8 + 8 * bool(st & IP)
        t, = struct.unpack_from('<Q', data, pos + tid_off + 8)
        last_t = max(last_t, t)
        if atype != 2:                          # not a tracepoint
            last = (pos, size, tid_off)
    pos += size
    if typ == 66:                               # HEADER_TRACING_DATA
        pos += struct.unpack_from('<I', data, pos - size + 8)[0]
if last is None:
    sys.exit('no sample of a non-tracepoint event')
pos, size, tid_off = last
recs, times = b'', []
for k, task in ((1, 0), (2, -1)):
    rec = bytearray(data[pos:pos + size])
    struct.pack_into('<iiQ', rec, tid_off, task, task, last_t + 1000 * k)
    recs += bytes(rec)
    times.append(f'{(last_t + 1000 * k) // 10**9}.{(last_t + 1000 * k) % 10**9:09d}')
open(sys.argv[2], 'wb').write(data + recs)
print(*times)
EOF
}

# A synthetic perf:sample event of the idle task is the idle task's
# (<idle>-0); one of a task perf cannot name (tid -1) is not: it keeps pid
# -1, under a name of its own.
test_unknown_task()
{
	local t0 t1 pat rep="${tmpdir}/tid.report"

	echo "Testing perf:sample events of the idle task and of tid -1"
	perf record -q -a -o - -e cpu-clock -c 1000000 -e sched:sched_switch \
		-- perf test -w noploop 0.2 > "${tmpdir}/mixed-pipe.data" 2>/dev/null
	if ! read -r t0 t1 < <(add_task_samples "${tmpdir}/mixed-pipe.data" \
				"${tmpdir}/tid.data"); then
		echo "cannot add samples to the pipe recording"
		err=1
		return
	fi
	convert -i - --to-trace-dat "${tmpdir}/tid.dat" --all < "${tmpdir}/tid.data" ||
		return
	trace-cmd report -t "${tmpdir}/tid.dat" > "${rep}" 2>/dev/null
	if ! grep -Eq "^ *<idle>-0 +\[[0-9]+\] +${t0}: +sample: +cpu-clock ip=.* pid=0 tid=0 " \
		"${rep}"; then
		echo "the sample of the idle task at ${t0} is not <idle>-0 with pid=0 tid=0:"
		grep -F "${t0}:" "${rep}"
		err=1
	fi
	pat="^ *<unknown>--1 +\[[0-9]+\] +${t1}: +sample: +cpu-clock ip=.* pid=-1 tid=-1 "
	if ! grep -Eq "${pat}" "${rep}"; then
		echo "the sample of tid -1 at ${t1} is not <unknown>--1 with pid=-1 tid=-1:"
		grep -F "${t1}:" "${rep}"
		err=1
	fi
}

expect_fail()
{
	local what=$1 out=$2

	shift 2
	if perf data convert "$@" 2>"${tmpdir}/bad.err" < "${stdin:-/dev/null}"; then
		echo "${what}: conversion did not fail"
		err=1
	elif [ "$(wc -l < "${tmpdir}/bad.err")" != 1 ]; then
		echo "${what}: not a one-line error:"
		cat "${tmpdir}/bad.err"
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

# expect_fail, and the one line names the problem ($2).
expect_message()
{
	local what=$1 msg=$2

	shift 2
	expect_fail "${what}" "$@"
	if ! grep -q "${msg}" "${tmpdir}/bad.err"; then
		echo "${what}: the error does not say \"${msg}\":"
		cat "${tmpdir}/bad.err"
		err=1
	fi
}

# Where the complete temporary output cannot be linked into place (a
# file system without hard links; no /proc and no right to AT_EMPTY_PATH),
# its data go to a named file that takes the name: linkat() fails with
# EPERM here by strace's fault injection, with and without --force.
test_link_fails()
{
	local out="${tmpdir}/nolink.dat" f

	if ! strace -f -qq -o /dev/null -e trace=linkat \
		-e inject=linkat:error=EPERM true 2>/dev/null; then
		echo "linkat() failing: no strace with fault injection [Skipped]"
		return
	fi
	for f in "" --force; do
		if ! strace -f -qq -o "${tmpdir}/nolink.strace" \
			-e trace=linkat -e inject=linkat:error=EPERM \
			perf data convert ${f:+"${f}"} -i "${tmpdir}/perf.data" \
			--to-trace-dat "${out}" 2>"${tmpdir}/nolink.err" ||
		   ! grep -q "INJECTED" "${tmpdir}/nolink.strace" ||
		   ! trace-cmd report "${out}" >/dev/null 2>&1 ||
		   ls "${out}".tmp* >/dev/null 2>&1; then
			echo "linkat() failing${f:+ with ${f}}: no trace.dat, no" \
				"failed linkat(), or a temporary file left:"
			ls "${out}"*
			cat "${tmpdir}/nolink.err"
			err=1
		fi
	done
	# Nor copy_file_range() (another file system): read() and write(),
	# whose short write is completed, not taken for an error with the
	# errno of an earlier call.  The same bytes as a conversion without,
	# but the first 4: strace's injected return value skips the call.
	if ! perf data convert -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/ref.dat" 2>"${tmpdir}/nolink.err"; then
		echo "linkat() failing: the reference conversion failed:"
		cat "${tmpdir}/nolink.err"
		err=1
	elif ! strace -f -qq -o "${tmpdir}/nolink.strace" \
		-e trace=linkat,copy_file_range,pwrite64 \
		-e inject=linkat:error=EPERM \
		-e inject=copy_file_range:error=EXDEV \
		-e inject=pwrite64:retval=4:when=1 \
		perf data convert --force -i "${tmpdir}/perf.data" \
		--to-trace-dat "${out}" 2>"${tmpdir}/nolink.err" ||
	   ! grep -q "= 4 (INJECTED)" "${tmpdir}/nolink.strace" ||
	   ! cmp -s -i 4 "${tmpdir}/ref.dat" "${out}"; then
		echo "linkat() and copy_file_range() failing, a short write:" \
			"no trace.dat, no short write, or not the same bytes:"
		cat "${tmpdir}/nolink.err"
		err=1
	fi
	rm -f "${out}" "${tmpdir}/ref.dat"
	link_fails_interrupt
}

# SIGTERM during that copy, which takes as long as the output is large
# (its first write held 2 s): the conversion ends by the signal, with
# its message, no output and no temporary file.  perf's pid is written by
# the shell that execs it under strace, and the signal is sent once strace
# has logged the write it holds.  (Not SIGINT: a background job of a
# script starts with it ignored.)
link_fails_interrupt()
{
	local out="${tmpdir}/nolink.dat" pidf="${tmpdir}/nolink.pid"
	local what="SIGTERM during the copy" spid pid="" i rc=0

	if ! strace -f -qq -o /dev/null -e trace=pwrite64 \
		-e inject=pwrite64:delay_enter=1 true 2>/dev/null; then
		echo "${what}: no strace with delay injection [Skipped]"
		return
	fi
	rm -f "${out}"* "${pidf}" "${tmpdir}/nolink.strace"
	strace -f -qq -o "${tmpdir}/nolink.strace" \
		-e trace=linkat,copy_file_range,pwrite64 \
		-e inject=linkat:error=EPERM \
		-e inject=copy_file_range:error=EXDEV \
		-e inject=pwrite64:delay_enter=2000000:when=1 \
		sh -c 'echo $$ > "$0"; exec "$@"' "${pidf}" \
		perf data convert -i "${tmpdir}/perf.data" \
		--to-trace-dat "${out}" 2>"${tmpdir}/nolink.err" &
	spid=$!
	for i in $(seq 300); do
		[ -s "${pidf}" ] &&
			grep -q " pwrite64(" "${tmpdir}/nolink.strace" 2>/dev/null &&
			break
		kill -0 "${spid}" 2>/dev/null || break
		sleep 0.1
	done
	pid=$(cat "${pidf}" 2>/dev/null) || true
	if [ -z "${pid}" ] || ! ls "${out}".tmp* >/dev/null 2>&1; then
		echo "${what}: no perf, no held write or no temporary file" \
			"(${i} tries)"
		err=1
	else
		kill -TERM "${pid}" 2>/dev/null || true
	fi
	wait "${spid}" || rc=$?
	# The signal came while the copy's first write was held.
	if [ "${rc}" != 143 ] || [ -e "${out}" ] ||
	   ls "${out}".tmp* >/dev/null 2>&1 ||
	   ! grep -q "interrupted, ${out} not written" "${tmpdir}/nolink.err" ||
	   ! grep -q "(DELAYED)" "${tmpdir}/nolink.strace"; then
		echo "${what}: exit ${rc} (143 expected), no message, no held" \
			"write, or the output or a temporary file left:"
		ls "${out}"* 2>/dev/null
		cat "${tmpdir}/nolink.err"
		err=1
	fi
	rm -f "${out}"* "${pidf}"
}

# Copy perf.data $1 to $2 with the CPU count of HEADER_NRCPUS set to $3 and
# no CPU topology (it has an entry for each CPU).
set_nrcpus()
{
	"${PYTHON}" - "$1" "$2" "$3" <<'EOF'
import struct, sys

data = bytearray(open(sys.argv[1], 'rb').read())
if data[:8] != b'PERFILE2':
    sys.exit('not a little-endian perf.data file')
data_off, data_size = struct.unpack_from('<QQ', data, 40)
feats = int.from_bytes(data[72:104], 'little')
NRCPUS, CPU_TOPOLOGY = 7, 13
if not feats >> NRCPUS & 1:
    sys.exit('no HEADER_NRCPUS in ' + sys.argv[1])

def section(bit):
    # The sections of the features present, in the order of their bits.
    return data_off + data_size + 16 * bin(feats & ((1 << bit) - 1)).count('1')

off, _ = struct.unpack_from('<QQ', data, section(NRCPUS))
struct.pack_into('<I', data, off, int(sys.argv[3]))     # nr_cpus_avail
if feats >> CPU_TOPOLOGY & 1:
    # Its entry out of the table; what the entries point to stays.
    s, end = section(CPU_TOPOLOGY), section(256)
    data[s:end - 16] = data[s + 16:end]
    feats &= ~(1 << CPU_TOPOLOGY)
    data[72:104] = feats.to_bytes(32, 'little')
open(sys.argv[2], 'wb').write(data)
EOF
}

# A copy of the recording $1 whose tracing data says pages of 4160 bytes.
bad_page_size()
{
	"${PYTHON}" - "$1" "$2" <<'EOF'
import struct, sys

data = bytearray(open(sys.argv[1], 'rb').read())
start = data.find(b'\x17\x08\x44tracing')
if start < 0:
    sys.exit('no tracing data in ' + sys.argv[1])
# The version string, then the endian and long size bytes.
end = data.index(b'\0', start + 10)
order = '>' if data[end + 1] else '<'
struct.pack_into(order + 'I', data, end + 3, 4096 + 64)
open(sys.argv[2], 'wb').write(data)
EOF
}

test_bad_input()
{
	local size free left cpus want

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
	if ! grep -q -- "--all" "${tmpdir}/bad.err"; then
		echo "no tracing data: the error does not point to --all"
		err=1
	fi
	expect_message "--trace-dat-version without --to-trace-dat" \
		"need --to-trace-dat" "${tmpdir}/bad7.json" \
		-i "${tmpdir}/perf.data" --to-json "${tmpdir}/bad7.json" \
		--trace-dat-version 6
	expect_message "--trace-dat-compression without --to-trace-dat" \
		"need --to-trace-dat" "${tmpdir}/bad8.json" \
		-i "${tmpdir}/perf.data" --to-json "${tmpdir}/bad8.json" \
		--trace-dat-compression zstd
	expect_message "--trace-dat-version 0" "version must be 6 or 7" \
		"${tmpdir}/bad9.dat" -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/bad9.dat" --trace-dat-version 0
	expect_message "--trace-dat-version=-1" "version must be 6 or 7" \
		"${tmpdir}/bad9.dat" -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/bad9.dat" --trace-dat-version=-1
	expect_message "compressed version 6" "version 6 cannot be compressed" \
		"${tmpdir}/bad9.dat" -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/bad9.dat" --trace-dat-version 6 \
		--trace-dat-compression zstd
	expect_message "unknown compression" "Unknown trace.dat compression" \
		"${tmpdir}/bad9.dat" -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/bad9.dat" --trace-dat-compression lz4
	expect_message "directory output" "is a directory" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}"
	expect_message "missing input" "No such file or directory" "${tmpdir}/bad5.dat" \
		-i "${tmpdir}/missing.data" --to-trace-dat "${tmpdir}/bad5.dat"
	expect_message "stream output" "not a regular file" "" --force \
		-i "${tmpdir}/perf.data" --to-trace-dat /dev/null
	# Without --force too: --force would not help.
	expect_message "stream output without --force" "not a regular file" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat /dev/null
	if [ "$(id -u)" != 0 ]; then
		cp "${tmpdir}/perf.data" "${tmpdir}/unreadable.data"
		chmod 000 "${tmpdir}/unreadable.data"
		expect_message "unreadable input" "Permission denied" "${tmpdir}/bad6.dat" \
			-i "${tmpdir}/unreadable.data" --to-trace-dat "${tmpdir}/bad6.dat"
	elif [ -s "${tmpdir}/v7.dat" ] && mkdir "${tmpdir}/small" &&
	     mount -t tmpfs -o size=1m tmpfs "${tmpdir}/small" 2>/dev/null; then
		# Leave half of what this conversion writes (at least a page)
		# free, whatever the size of the recording: the write fails
		# part way through the output.
		free=$(( $(stat -c %s "${tmpdir}/v7.dat") / 2 / 4096 * 4096 ))
		[ "${free}" -ge 4096 ] || free=4096
		dd if=/dev/zero of="${tmpdir}/small/.fill" bs=4096 \
		   count=$(( (1048576 - free) / 4096 )) 2>/dev/null
		expect_message "full disk (${free} bytes free)" \
			"No space left on device" "" \
			-i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/small/bad.dat"
		rm -f "${tmpdir}/small/.fill"
		left=$(ls -A "${tmpdir}/small")
		if [ -n "${left}" ]; then
			echo "full disk: left ${left} behind"
			err=1
		fi
		umount "${tmpdir}/small"
	fi
	# --force through a symlink replaces its target and keeps the link.
	echo keep > "${tmpdir}/target.dat"
	ln -s target.dat "${tmpdir}/link.dat"
	if ! perf data convert -i "${tmpdir}/perf.data" --force \
		--to-trace-dat "${tmpdir}/link.dat" 2>/dev/null ||
	   [ ! -L "${tmpdir}/link.dat" ] ||
	   ! trace-cmd report "${tmpdir}/target.dat" >/dev/null 2>&1; then
		echo "--force through a symlink: link or target not kept"
		err=1
	fi
	echo keep > "${tmpdir}/exists.dat"
	expect_fail "output exists" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat "${tmpdir}/exists.dat"
	if [ "$(cat "${tmpdir}/exists.dat")" != keep ]; then
		echo "output exists: file was overwritten without --force"
		err=1
	fi
	# --force: the old file is replaced (by a trace.dat), and removed.
	if ! perf data convert -i "${tmpdir}/perf.data" --force \
		--to-trace-dat "${tmpdir}/exists.dat" 2>/dev/null ||
	   ! trace-cmd report "${tmpdir}/exists.dat" >/dev/null 2>&1; then
		echo "--force did not overwrite with a trace.dat"
		err=1
	fi
	if ls "${tmpdir}"/*.dat.tmp* >/dev/null 2>&1; then
		echo "--force left the old file or a temporary file behind:"
		ls "${tmpdir}"/*.dat.tmp*
		err=1
	fi
	ln -s missing.dat "${tmpdir}/dangling.dat"
	expect_message "symlink to nothing" "symbolic link to a file that does not exist" \
		"${tmpdir}/missing.dat" --force -i "${tmpdir}/perf.data" \
		--to-trace-dat "${tmpdir}/dangling.dat"
	expect_fail "unwritable output" "" \
		-i "${tmpdir}/perf.data" --to-trace-dat /proc/perf-trace-dat.dat
	test_link_fails
	# What the writer or --tod refuses when the first event comes: its
	# one line, none of perf's about that event.
	expect_message "--tod without clock data" "missing clock data" \
		"${tmpdir}/bad10.dat" -i "${tmpdir}/perf.data" --tod \
		--to-trace-dat "${tmpdir}/bad10.dat"
	bad_page_size "${tmpdir}/perf.data" "${tmpdir}/badpage.data"
	expect_message "page size 4160" "bad page size 4160" \
		"${tmpdir}/bad10.dat" -i "${tmpdir}/badpage.data" \
		--to-trace-dat "${tmpdir}/bad10.dat"
	bad_page_size "${tmpdir}/pipe.data" "${tmpdir}/badpage-pipe.data"
	stdin="${tmpdir}/badpage-pipe.data" expect_message \
		"page size 4160 (pipe)" "bad page size 4160" \
		"${tmpdir}/bad10.dat" -i - --to-trace-dat "${tmpdir}/bad10.dat"
	# A CPU count no kernel has: not the size of the output's CPU table.
	if set_nrcpus "${tmpdir}/perf.data" "${tmpdir}/nrcpus.data" 1000000 &&
	   convert -i "${tmpdir}/nrcpus.data" --to-trace-dat "${tmpdir}/nrcpus.dat"; then
		cpus=$(trace-cmd report "${tmpdir}/nrcpus.dat" 2>/dev/null | sed -n 's/^cpus=//p')
		want=$(trace-cmd report "${tmpdir}/v7.dat" 2>/dev/null | sed -n 's/^cpus=//p')
		if ! grep -q "says 1000000 CPUs, more than the 8192 the converter takes" \
			"${tmpdir}/convert.err" ||
		   [ -z "${cpus}" ] || [ -z "${want}" ] || [ "${cpus}" -gt "${want}" ]; then
			echo "HEADER_NRCPUS of 1000000: cpus=${cpus:-?} (recording: ${want:-?})," \
				"or no warning:"
			cat "${tmpdir}/convert.err"
			err=1
		fi
	else
		err=1
	fi
	rm -f "${tmpdir}/nrcpus.data" "${tmpdir}/nrcpus.dat"
	test_truncated_pipe
	test_error_stops_writer
	test_interrupt
}

# Whether process $1 has an unnamed (O_TMPFILE) file of directory $2 open.
unnamed_open()
{
	local fd

	for fd in "/proc/$1/fd/"*; do
		case "$(readlink "${fd}" 2>/dev/null)" in
		"$2/#"*) return 0 ;;
		esac
	done
	return 1
}

# A signal while a conversion waits for its input: no output, no temporary
# file, the message (not for SIGKILL, which perf cannot see), and perf
# ends by the signal (exit status 128 + its number).  The converter reads
# half of a pipe recording from a FIFO the test keeps open, and gets the
# signals once the temporary file exists: one without a name (O_TMPFILE,
# an open file of perf's in ${tmpdir}), or a named one where the file
# system cannot make that.
# A background job of a script starts with SIGINT ignored, and perf must
# leave it so: "INT TERM" ends by the SIGTERM.  With "dfl", perf starts
# with SIGINT's default action (set by ${PYTHON} before it runs perf).
interrupt_case()
{
	local sigs=$1 want=$2 fifo="${tmpdir}/int.fifo" out="${tmpdir}/int.dat"
	local pid rc=0 i s what="${1// /, then } (${3:-SIGINT ignored})" named=""
	local -a cmd=(perf data convert -i - --to-trace-dat "${out}")

	rm -f "${fifo}"
	mkfifo "${fifo}"
	if [ -n "${3:-}" ]; then
		"${PYTHON}" -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])' "${cmd[@]}" <"${fifo}" 2>"${tmpdir}/int.err" &
	else
		"${cmd[@]}" <"${fifo}" 2>"${tmpdir}/int.err" &
	fi
	pid=$!
	exec 9>"${fifo}"
	head -c $(( $(stat -c %s "${tmpdir}/pipe.data") / 2 )) \
		"${tmpdir}/pipe.data" >&9
	for i in $(seq 300); do
		ls "${out}".tmp* >/dev/null 2>&1 && named=1 && break
		unnamed_open "${pid}" "${tmpdir}" && break
		sleep 0.1
	done
	if [ "${i}" = 300 ]; then
		echo "${what}: no temporary output after 30 s"
		err=1
	fi
	for s in ${sigs}; do
		kill -"${s}" "${pid}"
	done
	# It must end while its input is still open.
	for i in $(seq 100); do
		kill -0 "${pid}" 2>/dev/null || break
		sleep 0.1
	done
	if [ "${i}" = 100 ]; then
		echo "${what}: perf did not end while it waited for its input"
		err=1
	fi
	exec 9>&-
	wait "${pid}" || rc=$?
	if [ "${sigs}" = KILL ]; then
		grep -q "interrupted, ${out} not written" "${tmpdir}/int.err" &&
			rc="${rc} and a message"
	elif ! grep -q "interrupted, ${out} not written" "${tmpdir}/int.err"; then
		rc="${rc} and no message"
	fi
	# Where the file system has no O_TMPFILE, the named file stays: perf
	# cannot see SIGKILL.
	if [ "${sigs}" = KILL ] && [ -n "${named}" ] &&
	   ! "${PYTHON}" -c 'import os, sys
os.close(os.open(sys.argv[1], os.O_TMPFILE | os.O_RDWR, 0o600))' "${tmpdir}" 2>/dev/null; then
		echo "${what}: no O_TMPFILE in the test's directory, a named" \
			"temporary file stays [not checked]"
		rm -f "${out}".tmp*
	fi
	if [ "${rc}" != "${want}" ] || [ -e "${out}" ] ||
	   ls "${out}".tmp* >/dev/null 2>&1; then
		echo "${what}: exit ${rc} (${want} expected), or the output" \
			"or a temporary file left:"
		ls "${out}"* 2>/dev/null
		cat "${tmpdir}/int.err"
		err=1
	fi
	rm -f "${out}"*
}

test_interrupt()
{
	echo "Testing SIGTERM, SIGINT and SIGKILL during a conversion"
	interrupt_case TERM 143
	interrupt_case "INT TERM" 143
	interrupt_case INT 130 "SIGINT default"
	# (Without the shell's "Killed" notice on stderr.)
	interrupt_case KILL 137 2>/dev/null
}

# The records of the pipe recording $1, a line each: offset, type, size
# and, for the tracing data, the length of what follows the record.
pipe_records()
{
	$PYTHON - "$1" <<'EOF'
import signal, struct, sys

# Quietly, when the reader has what it wanted.
signal.signal(signal.SIGPIPE, signal.SIG_DFL)
data = open(sys.argv[1], 'rb').read()
pos = 16
while pos + 8 <= len(data):
    typ, _, size = struct.unpack_from('<IHH', data, pos)
    if size < 8:
        break
    extra = struct.unpack_from('<I', data, pos + 8)[0] if typ == 66 else 0
    print(pos, typ, size, extra)
    pos += size + extra
EOF
}

# head -c N of a pipe recording, N inside the tracing data, and inside the
# header and the body of a sample: the stream ends inside an event, which
# must fail with one line and leave no output.
test_truncated_pipe()
{
	local n cuts size

	size=$(stat -c %s "${tmpdir}/pipe.data")
	cuts=$(pipe_records "${tmpdir}/pipe.data" | awk -v len="${size}" '
		$2 == 66 && !td { td = $1 + $3 + 100 }
		$2 == 9 && td && $1 > len / 2 && $3 > 16 {
			print td, $1 + 4, $1 + 12
			exit
		}')
	if [ -z "${cuts}" ]; then
		echo "no tracing data or sample to cut in the pipe recording"
		err=1
		return
	fi
	for n in ${cuts}; do
		head -c "${n}" "${tmpdir}/pipe.data" > "${tmpdir}/cut.data"
		stdin="${tmpdir}/cut.data" expect_fail \
			"pipe cut at byte ${n} of ${size}" "${tmpdir}/bad4.dat" \
			-i - --to-trace-dat "${tmpdir}/bad4.dat"
		if [ -e "${tmpdir}/bad4.dat" ]; then
			echo "pipe cut at byte ${n}: left ${tmpdir}/bad4.dat"
			rm -f "${tmpdir}/bad4.dat"
			err=1
		fi
	done
}

# A conversion that fails after pages were queued for the writer's
# thread: the thread must be stopped before the output is closed, or its
# writes go to a closed descriptor (or to a file opened meanwhile).  Each
# write is held for 0.1 s (strace's delay injection), so pages are still
# being written when the cut pipe ends the conversion.
test_error_stops_writer()
{
	local rec="${tmpdir}/pipe-big.data" st="${tmpdir}/stop.strace" cut
	local what="a failed conversion stops its writer"

	# --seccomp-bpf: perf's many reads of the pipe do not stop it.
	if ! strace --seccomp-bpf -f -qq -o /dev/null -e trace=write \
		-e inject=write:delay_enter=1 true 2>/dev/null; then
		echo "${what}: no strace with delay injection [Skipped]"
		return
	fi
	# One CPU: its pages go to the output itself (v7), each write of them
	# to the descriptor that the output's close would take away.
	if ! perf record -q -C 0 -e sched:sched_switch -e sched:sched_wakeup \
		-o - -- taskset -c 0 perf bench sched pipe -l 40000 \
		> "${rec}" 2>"${tmpdir}/stop.err"; then
		echo "${what}: perf record failed:"
		cat "${tmpdir}/stop.err"
		err=1
		return
	fi
	# Into the sample that makes 6 MB of samples (about 3 MB of pages, the
	# thread is woken at 2 MB): "unexpected end of event stream".
	cut=$(pipe_records "${rec}" | awk '
		$2 == 9 {
			s += $3
			if (s >= 6 * 2^20 && $3 > 16) {
				print $1 + 12
				found = 1
				exit
			}
		}
		END { if (!found) print "short", s }')
	case "${cut}" in
	''|short*)
		echo "${what}: not 6 MB of samples in the recording (${cut})"
		err=1
		return ;;
	esac
	head -c "${cut}" "${rec}" > "${tmpdir}/cut-big.data"
	if strace --seccomp-bpf -f -qq -o "${st}" -e trace=write \
		-e inject=write:delay_enter=100000 perf data convert -i - \
		--to-trace-dat "${tmpdir}/bad11.dat" < "${tmpdir}/cut-big.data" \
		2>"${tmpdir}/stop.err"; then
		echo "${what}: the cut pipe converted"
		err=1
	elif ! grep -q "unexpected end of event stream" "${tmpdir}/stop.err"; then
		echo "${what}: not the error of a cut pipe:"
		cat "${tmpdir}/stop.err"
		err=1
	elif grep -q EBADF "${st}"; then
		echo "${what}: pages written after the output" \
			"was closed:"
		grep EBADF "${st}"
		err=1
	elif ! grep -Eq '= [0-9]{4,} \(DELAYED\)' "${st}"; then
		echo "${what}: no pages written before the end:" \
			"nothing shown"
		err=1
	fi
	if [ -e "${tmpdir}/bad11.dat" ]; then
		echo "${what}: left ${tmpdir}/bad11.dat"
		err=1
	fi
	rm -f "${rec}" "${tmpdir}/cut-big.data" "${tmpdir}/bad11.dat"
}

test_file_v7 || err=1
test_time_extend || err=1
test_versions_compression || err=1
test_uname_version || err=1
test_time_range || err=1
test_pipe || err=1
test_aux_lost || err=1
test_too_big || err=1
test_many_cpus || err=1
test_compressed_input || err=1
test_synthetic || err=1
test_no_tracing_data || err=1
test_switch_events || err=1
test_task_names || err=1
test_kallsyms || err=1
test_kallsyms_relocated || err=1
test_kallsyms_kcore || err=1
test_kallsyms_other_kernel || err=1
test_kallsyms_other_kernel_callchain || err=1
test_deferred_callchain || err=1
test_file_order_ksymbol || err=1
test_kallsyms_no_buildid || err=1
test_tod || err=1
test_per_thread || err=1
test_unknown_task || err=1
test_bad_input || err=1

cleanup
if [ -n "${valgrind}" ]; then
	echo "valgrind: trace-cmd report clean on ${nvalgrind} converted files"
fi
echo "names: ${nnames} converted files checked for tasks without a name"

if [ ${err} = 0 ]; then
	echo "perf data convert --to-trace-dat [SUCCESS]"
fi
exit ${err}
