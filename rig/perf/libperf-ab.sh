#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make libperf-ab (part of make perf-ab): libperf's own tests
# (tools/lib/perf/tests, as 'make -C tools/lib/perf tests' runs them), the
# series' tests-shared binary against the series' libperf.so and against the
# base's. The series' test_mmap_read_done (events written after the last
# perf_mmap__read_event() and before perf_mmap__read_done() must be read by
# the next round) must fail with the base libperf and pass with the series'.
# Only that test is asserted: others depend on the machine (the syscalls
# tracepoints, a PMU that multiplexes) and are listed.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage libperf-ab
B=$BUILD/libperf
mkdir -p "$OUT"

build() { # build base|series O TARGET: libperf from the tree switched to it
	local kind=$1 o=$2 target=$3
	mkdir -p "$o"
	BASE=$([ "$kind" = base ] && echo 1 || echo 0) bash "$RIG_TOP/rig/tree.sh" >/dev/null
	if ! cpu_lock env -u ARCH -u MAKEFLAGS -u MAKELEVEL make -C "$TREE/tools/lib/perf" O="$o/" \
		CC="ccache gcc" -j"$(nproc)" "$target" >"$o/build.log" 2>&1; then
		tail -20 "$o/build.log" >&2
		die "libperf ($kind) did not build: ${o#"$RIG_TOP"/}/build.log"
	fi
}

# tests_build: the series' tests-shared, compiled as libperf's Makefile
# compiles them (its make-tests target cannot build into an O= directory:
# tests-in.o is linked from the current directory).
tests_build() {
	local t=$TREE/tools/lib/perf a=x86
	if ! cpu_lock gcc -g -Wall -Werror -I"$t/include" -I"$TREE/tools/lib/" \
		-I"$TREE/tools/include" -I"$TREE/tools/arch/$a/include/" \
		-I"$TREE/tools/arch/$a/include/uapi" -I"$TREE/tools/include/uapi" \
		-o "$B/series/tests-shared" "$t"/tests/main.c "$t"/tests/test-evsel.c \
		"$t"/tests/test-evlist.c "$t"/tests/test-cpumap.c "$t"/tests/test-threadmap.c \
		-L"$B/series" -lperf "$B/series/libapi.a" >"$B/series/tests.log" 2>&1; then
		cat "$B/series/tests.log" >&2
		die "libperf's tests did not build: ${B#"$RIG_TOP"/}/series/tests.log"
	fi
}

tree_lock exclusive
build base "$B/base" libs
build series "$B/series" libs
tests_build
if [ ! -e "$B/base/libperf.so.0" ] || [ ! -x "$B/series/tests-shared" ]; then
	die "no libperf.so.0 in ${B#"$RIG_TOP"/}/base or tests-shared in ${B#"$RIG_TOP"/}/series"
fi

run() { # run base|series: the series' tests against that libperf.so
	local kind=$1 log=$OUT/libperf-tests-$1.txt
	(cd "$B/series" && LD_LIBRARY_PATH=$B/$kind ./tests-shared -v) >"$log" 2>&1 || true
	grep -q 'running .*test-evlist\.c' "$log" ||
		die "libperf's tests did not reach test-evlist.c with the $kind libperf (${log#"$RIG_TOP"/})"
	# test_evlist() ran to its end (__T_END: "OK" or "FAILED (N)").
	grep -qE 'test-evlist\.c\.\.\.OK$|^  FAILED \([0-9]+\)$' "$log" ||
		die "libperf's test_evlist() did not finish with the $kind libperf (${log#"$RIG_TOP"/})"
	grep -E '^FAILED ' "$log" | sed "s/^/  $kind libperf: /" >&2 || true
}
run base
run series
fail=0
if ! grep -q '^FAILED .*read_done: .*after the last read' "$OUT/libperf-tests-base.txt"; then
	echo "libperf-ab: FAIL: test_mmap_read_done passed with the base libperf (want: fail)" >&2
	fail=1
fi
if grep -q '^FAILED .*read_done: ' "$OUT/libperf-tests-series.txt"; then
	echo "libperf-ab: FAIL: test_mmap_read_done failed with the series' libperf" >&2
	fail=1
fi
[ "$fail" = 0 ] || exit 1
info "libperf-ab: test_mmap_read_done fails with the base libperf ($(grep -o 'read_done: .*' "$OUT/libperf-tests-base.txt" | head -1)), passes with the series'"
