#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz [FUZZ_SECONDS=3600]: AFL++ over perf's reading of perf.data files
# (perf report -D) and over perf data convert --to-trace-dat, with perf of
# the series tree built with ASan/UBSan. Not a check stage: an hour on both
# cores by default.
#
#   1. build/perf-fuzz/perf                          (build.sh, CPU lock)
#   2. out/fuzz/seeds: recordings made now           (seeds.sh)
#   3. afl-fuzz, one instance per target, FUZZ_SECONDS (afl.sh, CPU lock)
# Results: out/fuzz/{report,convert}.log (afl-fuzz), out/fuzz/afl/<target>/
# (queue, crashes, hangs, fuzzer_stats), out/fuzz/findings/ (each crashing
# or hanging input with its sanitizer report). Exits non-zero on any crash
# or hang. FUZZ_NOBUILD=1 fuzzes build/perf-fuzz/perf as it is.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
secs=${FUZZ_SECONDS:-3600}
case $secs in
''|*[!0-9]*) die "FUZZ_SECONDS must be a number of seconds (got '$secs')" ;;
esac
stage "fuzz ${secs}s"

[ "$(id -u)" = 0 ] || die "fuzz: must run as root (the seeds record tracepoints)"
perf=$BUILD/perf-fuzz/perf
if [ "${FUZZ_NOBUILD:-0}" != 1 ] || [ ! -x "$perf" ]; then
	bash "$RIG_TOP/rig/fuzz/build.sh" "$BUILD/perf-fuzz"
fi

home=$(mktemp -d /tmp/rig-fuzz-home.XXXXXX)
PERF_CONFIG=/dev/null PERF_CONFIG_NOSYSTEM=1 HOME=$home \
	ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
	bash "$RIG_TOP/rig/fuzz/seeds.sh" "$perf" "$OUT/fuzz/seeds"
rm -rf "$home"

info "fuzz: waiting for the CPU lock, then $secs s of afl-fuzz on two targets"
cpu_lock bash "$RIG_TOP/rig/fuzz/afl.sh" "$perf" "$OUT/fuzz/seeds" "$OUT/fuzz" "$secs"
