#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make tracedat-unit: build rig/tracedat/writer-test.c against the overlay's
# tools/perf/util/trace-dat-writer.c and check, with trace-cmd report, the
# files it writes for every byte order (le, be), kernel long size (4, 8),
# version (6, 7) and compression trace-cmd can read: each event's time,
# CPU, pid and fields, the large events, TIME_EXTENDs and the page marked
# after lost events.  Then the peak RSS of the writer for 8 and 64 MB of
# events, per compression: it must not grow with the input. Then crafted
# tracing data (writer-test crafted, under ASan).  Then spill files on a
# full file system (writer-test full).
set -euo pipefail

top=$(cd "$(dirname "$0")/../.." && pwd)
ksrc=${TRACEDAT_KSRC:-$top/build/linux}
t0=$(date +%s)

if [ ! -e "$ksrc/tools/include/linux/zalloc.h" ]; then
	echo "tracedat-unit: $ksrc has no tools/include; run 'make tree' or set TRACEDAT_KSRC" >&2
	exit 1
fi
if ! command -v trace-cmd >/dev/null; then
	echo "tracedat-unit: trace-cmd missing; run 'make deps'" >&2
	exit 1
fi
work=$(mktemp -d /tmp/tracedat-unit.XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/shim"
cat > "$work/shim/debug.h" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0 */
#include <stdio.h>
#define pr_err(...) fprintf(stderr, __VA_ARGS__)
EOF
# perf's strbuf.c includes perf's own debug.h (next to it): its two symbols.
cat > "$work/shim/debug-stubs.c" <<'EOF'
/* SPDX-License-Identifier: GPL-2.0 */
int verbose;
int eprintf(int level, int var, const char *fmt, ...);
int eprintf(int level, int var, const char *fmt, ...) { return 0; }
EOF

libs=""
defs=""
if pkg-config --exists libzstd; then defs="$defs -DHAVE_ZSTD_SUPPORT"; libs="$libs -lzstd"; fi
if pkg-config --exists zlib; then defs="$defs -DHAVE_ZLIB_SUPPORT"; libs="$libs -lz"; fi
# shellcheck disable=SC2086
gcc -O2 -g -Wall -Werror -D_GNU_SOURCE $defs -fsanitize=address,undefined -fno-sanitize-recover=all \
	-I"$work/shim" -I"$top/tools/perf" -I"$ksrc/tools/perf/util" -I"$ksrc/tools/perf" \
	-I"$ksrc/tools/include" -I"$ksrc/tools/lib/perf/include" -I"$ksrc/tools/lib" \
	-I"$ksrc/tools/arch/x86/include" -include "$ksrc/tools/include/linux/zalloc.h" \
	-o "$work/writer-test" "$top/rig/tracedat/writer-test.c" \
	"$top/tools/perf/util/trace-dat-writer.c" "$ksrc/tools/lib/zalloc.c" \
	"$ksrc/tools/perf/util/strbuf.c" "$ksrc/tools/perf/util/rlimit.c" \
	"$ksrc/tools/lib/perf/lib.c" "$work/shim/debug-stubs.c" \
	-pthread $libs

comps=none
for c in zstd zlib; do
	if trace-cmd list -c 2>/dev/null | grep -q "$c"; then comps="$comps $c"; fi
done

valgrind=""
if command -v valgrind >/dev/null; then
	valgrind=valgrind
else
	echo "tracedat-unit: valgrind missing (make deps): trace-cmd not checked under valgrind"
fi

pass=0
fail=0
for endian in le be; do
	for lsize in 8 4; do
		for ver in 7 6; do
			for comp in $comps; do
				[ "$ver" = 6 ] && [ "$comp" != none ] && continue
				name="$endian-long$lsize-v$ver-$comp"
				if ! "$work/writer-test" "$endian" "$lsize" "$ver" "$comp" \
					"$work/$name.dat" "$work/$name.exp" >"$work/$name.txt"; then
					fail=$((fail + 1))
					echo "tracedat-unit: FAIL $name: writer-test failed"
					continue
				fi
				# v7 without compression: CPU 0's pages, all written in
				# place as they filled, at the first page after the headers.
				if [ "$ver-$comp" = 7-none ]; then
					inplace=$(sed -n 's/.* \([0-9]*\) pages in place$/\1/p' "$work/$name.txt")
					cpu0=$(trace-cmd report --stat "$work/$name.dat" 2>/dev/null |
						awk '/^CPU0 data recorded at offset=/ { sub(/.*=/, ""); off = $0; getline; print off, $1 }')
					if [ "$cpu0" != "0x1000 $((inplace * 4096))" ]; then
						fail=$((fail + 1))
						echo "tracedat-unit: FAIL $name: CPU 0's data (offset, size) '$cpu0', want 0x1000 and the $inplace pages written in place"
						continue
					fi
				fi
				trace-cmd report -t "$work/$name.dat" >"$work/$name.rep" 2>&1 || true
				# trace-cmd must read only what the file holds.
				if [ -n "$valgrind" ] && ! valgrind -q --error-exitcode=1 \
					trace-cmd report "$work/$name.dat" >/dev/null 2>"$work/$name.vg"; then
					fail=$((fail + 1))
					echo "tracedat-unit: FAIL $name: valgrind trace-cmd report:"
					grep -m3 -E "Invalid|uninitialised|at 0x" "$work/$name.vg" || head -3 "$work/$name.vg"
					continue
				fi
				if /usr/bin/python3 - "$work/$name.rep" "$work/$name.exp" <<'EOF'
import re, sys
pat = re.compile(r'^\s*.*-(\d+)\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+(\w+):\s+(.*)$')
got = []
dropped = 0
for line in open(sys.argv[1]):
    if '[EVENTS DROPPED]' in line:
        dropped += 1
    m = pat.match(line.rstrip('\n'))
    if m:
        pid, cpu, sec, ns, name, rest = m.groups()
        got.append(f'{int(sec) * 10**9 + int(ns)} {int(cpu)} {pid} {name} {rest.strip()}')
exp = [l.rstrip('\n') for l in open(sys.argv[2])]
if sorted(got) != sorted(exp) or dropped != 1:
    print(f'  {len(got)} events read, {len(exp)} expected, {dropped} drop marks (1 expected)')
    for a, b in zip(sorted(got), sorted(exp)):
        if a != b:
            print(f'  got {a[:100]}\n  exp {b[:100]}')
            break
    sys.exit(1)
EOF
				then
					pass=$((pass + 1))
					echo "tracedat-unit: PASS $name"
				else
					fail=$((fail + 1))
					echo "tracedat-unit: FAIL $name (trace-cmd report output: $work/$name.rep)"
					head -3 "$work/$name.rep"
				fi
			done
		done
	done
done

# same_file NAME WHAT VAR=VALUE: writer-test le 8 7 none with VAR set in
# its environment must write le-long8-v7-none.dat again, byte for byte.
same_file() {
	local name=$1 what=$2

	if env "$3" "$work/writer-test" le 8 7 none "$work/$name.dat" "$work/$name.exp" \
		>/dev/null && cmp -s "$work/$name.dat" "$work/le-long8-v7-none.dat"; then
		pass=$((pass + 1))
		echo "tracedat-unit: PASS $name ($what: same file)"
	else
		fail=$((fail + 1))
		echo "tracedat-unit: FAIL $name: $what: writer-test failed or wrote another file"
	fi
}

# Spill files on tmpfs, the output elsewhere: the writer copies them with
# read() and stdio where copy_file_range() fails (EXDEV across file systems
# since Linux 5.19).
if [ "$(stat -f -c %T /dev/shm)" = tmpfs ] && [ "$(stat -f -c %T "$work")" != tmpfs ]; then
	same_file le-long8-v7-none-xfs "spill files on /dev/shm" WRITER_TEST_TMPDIR=/dev/shm
fi
# A writer deleted after it put pages in the output (a conversion that
# starts again with the ordered events queue), then the real one.
same_file le-long8-v7-none-restart "2 MB of pages left by a deleted writer" WRITER_TEST_STALE=1

# Events a little out of time order are put in their place: the file is
# the one written from the events in time order, byte for byte.
for v in le:8 be:4; do
	name="reorder-${v%:*}-long${v#*:}"
	if ! "$work/writer-test" reorder "${v%:*}" "${v#*:}" "$work/$name-sorted.dat" \
		"$work/$name-late.dat" >"$work/$name.txt"; then
		fail=$((fail + 1))
		echo "tracedat-unit: FAIL $name: writer-test reorder failed"
		continue
	fi
	events=$(trace-cmd report "$work/$name-late.dat" 2>/dev/null | grep -c " wtest: " || true)
	if cmp -s "$work/$name-sorted.dat" "$work/$name-late.dat" && [ "$events" = 3000 ]; then
		pass=$((pass + 1))
		echo "tracedat-unit: PASS $name ($(sed 's/^writer-test reorder [a-z]* long=[0-9]*: //' "$work/$name.txt"); same file as in time order)"
	else
		fail=$((fail + 1))
		echo "tracedat-unit: FAIL $name: $(cat "$work/$name.txt"); the file differs from the one in time order, or trace-cmd report shows $events of 3000 events"
	fi
done

# Bounded memory: spill files and output are on disk, at most a batch of
# pages per CPU and one compressed chunk are in memory.
for comp in $comps; do
	name="rss-$comp"
	for mb in 8 64; do
		ASAN_OPTIONS=quarantine_size_mb=16 "$work/writer-test" rss "$comp" "$mb" \
			"$work/$name.dat" >"$work/$name-$mb.txt"
	done
	small=$(sed -n 's/.*maxrss_kb=//p' "$work/$name-8.txt")
	big=$(sed -n 's/.*maxrss_kb=//p' "$work/$name-64.txt")
	events=$(trace-cmd report "$work/$name.dat" 2>/dev/null | grep -c " wtest: " || true)
	if [ $((big - small)) -le 16384 ] && [ "$events" = 64000 ]; then
		pass=$((pass + 1))
		echo "tracedat-unit: PASS $name (peak RSS $((small / 1024)) MB for 8 MB, $((big / 1024)) MB for 64 MB)"
	else
		fail=$((fail + 1))
		echo "tracedat-unit: FAIL $name: peak RSS $((small / 1024)) MB for 8 MB, $((big / 1024)) MB for 64 MB of events (16 MB more allowed); trace-cmd report shows $events of 64000 events"
	fi
	rm -f "$work/$name.dat"
done
# Many CPUs with large pages: a batch is 64 KB of pages, at least two, so
# each CPU holds two 64 KB pages in memory, not 16 (64 MB for 64 CPUs);
# compressed, the 10-page chunks are read into a buffer of their own (ASan
# sees an overflow of the batch). The limit: two pages per CPU and 12 MB
# (the spill queue's 4 MB, ASan) over the 2-CPU run of 8 MB.
for comp in $comps; do
	name=rss-64cpus-64k-$comp
	ASAN_OPTIONS=quarantine_size_mb=16 "$work/writer-test" rss "$comp" 64 "$work/$name.dat" \
		64 65536 >"$work/$name.txt" 2>&1 || true
	small=$(sed -n 's/.*maxrss_kb=//p' "$work/rss-$comp-8.txt")
	big=$(sed -n 's/.*maxrss_kb=//p' "$work/$name.txt")
	limit=$((64 * 2 * 64 + 12 * 1024))
	events=$(trace-cmd report "$work/$name.dat" 2>/dev/null | grep -c " wtest: " || true)
	if [ -n "$big" ] && [ $((big - small)) -le $limit ] && [ "$events" = 64000 ]; then
		pass=$((pass + 1))
		echo "tracedat-unit: PASS $name (peak RSS $((big / 1024)) MB for 64 MB on 64 CPUs with 64 KB pages, $((small / 1024)) MB for 8 MB on 2 CPUs)"
	else
		fail=$((fail + 1))
		echo "tracedat-unit: FAIL $name: peak RSS $((${big:-0} / 1024)) MB for 64 MB on 64 CPUs with 64 KB pages, $((small / 1024)) MB for 8 MB on 2 CPUs ($((limit / 1024)) MB more allowed); trace-cmd report shows $events of 64000 events"
		grep -m3 -E "ERROR|SUMMARY" "$work/$name.txt" || true
	fi
	rm -f "$work/$name.dat"
done

# Crafted tracing data: refused or parsed within its bounds (ASan), and the
# writer's own tracing data for a recording without tracepoints.
if "$work/writer-test" crafted >"$work/crafted.txt" 2>&1; then
	pass=$((pass + 1))
	echo "tracedat-unit: PASS crafted (page size 2 GiB and 4160 refused, data cut in its first 64 bytes refused, page data past the commit field refused, a format that ends the data, empty tracing data le/be long 4/8, saved_cmdlines lines libtraceevent stops at, no output or /dev/null refused)"
else
	fail=$((fail + 1))
	echo "tracedat-unit: FAIL crafted:"
	head -20 "$work/crafted.txt"
fi

# A full disk under the spill files, then under the output (where one
# CPU's pages go), written on a thread of their own: the error must reach
# the caller (-ENOSPC), and the writer must end cleanly.
# A private 1 MB tmpfs for 8 MB of events (a user namespace when not root;
# a container may allow neither: then it is skipped, and says so).
mkdir "$work/full"
ns=""
for try in "-m" "-r -m"; do
	# shellcheck disable=SC2086 # options
	if unshare $try true 2>/dev/null; then
		ns=$try
		break
	fi
done
# shellcheck disable=SC2016,SC2086 # expanded by the inner shell; options
if [ -z "$ns" ]; then
	echo "tracedat-unit: SKIP spill-full (no mount namespace here: unshare -m fails)"
else
	for where in spill output; do
		spill="$work/full" out="$work/full.dat"
		[ $where = output ] && spill=$work out="$work/full/full.dat"
		if timeout 120 unshare $ns sh -c \
			'mount -t tmpfs -o size=1m tmpfs "$1" && "$2" full "$3" "$4"' \
			sh "$work/full" "$work/writer-test" "$spill" "$out" >"$work/full.txt" 2>&1; then
			pass=$((pass + 1))
			echo "tracedat-unit: PASS $where-full ($(sed -n 's/^writer-test full: //p' "$work/full.txt"))"
		else
			fail=$((fail + 1))
			echo "tracedat-unit: FAIL $where-full (a 1 MB tmpfs for the $where):"
			head -20 "$work/full.txt"
		fi
	done
fi

echo "tracedat-unit: $pass passed, $fail failed ($(( $(date +%s) - t0 )) s)"
[ "$fail" = 0 ]
