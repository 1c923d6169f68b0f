#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz (fuzzing step): one afl-fuzz instance per target, both at once
# (one per core), for <seconds>; run it under the CPU lock (run.sh does).
#
#   afl.sh <perf> <seed dir> <out dir> <seconds>
#   afl.sh <perf> - <out dir> triage     only rerun and judge an earlier run's findings
#
# Targets (AFL replaces @@ with the path of the mutated input):
#   report   perf report -D -i @@ --symfs <empty dir>
#            perf_session__process_events() over every record, COMPRESSED2
#            decompression included, and -D dumps each event and parses each
#            sample's fields (evsel__parse_sample(), callchains, regs, ...);
#            report's own tool then handles samples, mmaps, comms, forks as
#            it would for a real report. --stats would be cheaper but its
#            tool leaves TRACING_DATA unhandled, so in a pipe-mode file the
#            tracing data is then read as events and the rest of the file
#            is never reached. --symfs points at an empty directory: no DSO
#            or kallsyms of this host is ever opened (hermetic and fast).
#   convert  perf data convert -i @@ --to-trace-dat <tmpfs>/out.dat --all --force
#            the tracing data feature (libtraceevent), COMPRESSED2, and the
#            trace.dat writer; --all also converts the other samples and
#            records into the synthetic "perf" events.
# perf runs hermetic: PERF_CONFIG=/dev/null and no system perfconfig, HOME
# (and so the build-id cache, ~/.debug) in a fresh temporary directory, no
# debuginfod, and TRACEFS_PATH/DEBUGFS_PATH at an empty directory: -D names
# the tracepoint of each attr by walking the host's tracefs (11000 opens per
# exec for four tracepoint attrs, 2.3 s instead of 0.4 s under strace), and
# nothing that reads a file needs the host's tracepoints. ASan/UBSan abort on the first report, so AFL sees a crash;
# leak detection is off (perf does not free everything at exit).
#
# Prints a progress line per target every minute, and at the end execs,
# execs/s, coverage, crashes and hangs per target. Each crashing or hanging
# input goes to <out dir>/findings/ with the sanitizer report of a rerun.
# A crash that matches rig/fuzz/known-findings.txt (a bug of a library perf
# calls, or a report of an older build's sanitizer options) and a hang that
# does not hang when rerun alone are reported but not counted. Exit status: 0 when no other crash or hang was found, 1
# otherwise.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
perf=${1:?usage: afl.sh <perf> <seed dir> <out dir> <seconds>}
seeds=${2:?}
out=${3:?}
secs=${4:?}
TARGETS=(report convert)
# An exec over FUZZ_TMOUT_MS is a timeout (the seeds take 50-150 ms each
# on an idle machine with ASan); a timeout that still runs after
# FUZZ_HANG_MS when rerun is a hang.
FUZZ_TMOUT_MS=${FUZZ_TMOUT_MS:-2000}
FUZZ_HANG_MS=${FUZZ_HANG_MS:-10000}

command -v afl-fuzz >/dev/null || die "afl-fuzz not found: run 'make deps' (Debian's afl++)"
[ -x "$perf" ] || die "$perf not built"

w=$(mktemp -d /dev/shm/rig-fuzz.XXXXXX)
pids=()
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$w"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
mkdir -p "$w/home" "$w/symfs" "$w/convert" "$w/tracefs"

# The target's environment (afl-fuzz passes its own on).
export PERF_CONFIG=/dev/null PERF_CONFIG_NOSYSTEM=1 HOME=$w/home TERM=dumb
export TRACEFS_PATH=$w/tracefs DEBUGFS_PATH=$w/tracefs
unset DEBUGINFOD_URLS PERF_BUILDID_DIR PERF_EXEC_PATH
# max_allocation_size_mb: perf mallocs sizes read from the file (e.g. the
# saved cmdlines of the tracing data: 9 GB from a 14 KB input); ASan then
# writes the allocation's shadow, 1/8 of its size, which takes 20 s and
# 1.1 GB, where a plain perf only reserves address space and fails the read
# right after. Over 256 MB malloc returns NULL, as perf must handle anyway.
SAN_COMMON=abort_on_error=1:symbolize=0:detect_leaks=0:allocator_may_return_null=1:max_allocation_size_mb=256
export ASAN_OPTIONS=$SAN_COMMON:malloc_context_size=0:detect_odr_violation=0
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=0:print_stacktrace=0
export AFL_SKIP_CPUFREQ=1 AFL_I_DONT_CARE_ABOUT_MISSING_CRASHES=1 AFL_NO_UI=1
# The machine is shared: do not pin to a core another process may own.
export AFL_NO_AFFINITY=1 AFL_HANG_TMOUT=$FUZZ_HANG_MS
# perf with ASan runs 5-10 execs/s: trimming the 14-18 KB seeds took the
# whole of a 5-minute run on the first two seeds (no new path), and
# calibration runs each new input 8 times. No trimming, 3 calibration runs.
export AFL_DISABLE_TRIM=1 AFL_FAST_CAL=1
# perf has ~143000 edges, more than AFL's default map: ask the binary.
AFL_MAP_SIZE=$(AFL_DUMP_MAP_SIZE=1 "$perf" --version 2>/dev/null || true)
case $AFL_MAP_SIZE in
''|*[!0-9]*) die "$perf did not report its AFL map size (not built by rig/fuzz/build.sh?)" ;;
esac
export AFL_MAP_SIZE

target_cmd() {
	case $1 in
	report) echo "$perf report -D -i @@ --symfs $w/symfs" ;;
	convert) echo "$perf data convert -i @@ --to-trace-dat $w/convert/out.dat --all --force" ;;
	esac
}

# secs "triage": no fuzzing, only the rerun and the verdicts below, over the
# crashes and hangs of an earlier run in <out dir>/afl (make fuzz-triage).
triage=0
if [ "$secs" = triage ]; then
	triage=1
	for t in "${TARGETS[@]}"; do
		[ -f "$out/afl/$t/default/fuzzer_stats" ] ||
			die "fuzz: no earlier run in $out/afl/$t: run 'make fuzz' first"
	done
	rm -rf "$out/findings"
	mkdir -p "$out/findings"
else
	rm -rf "$out/afl" "$out/findings"
	mkdir -p "$out/afl" "$out/findings"
fi
for t in "${TARGETS[@]}"; do
	[ "$triage" = 1 ] && break
	mkdir -p "$w/tmp-$t"
	read -r -a cmd <<<"$(target_cmd "$t")"
	info "fuzz: $t: afl-fuzz -V $secs -t $FUZZ_TMOUT_MS -m none -- ${cmd[*]}"
	AFL_TMPDIR=$w/tmp-$t afl-fuzz -V "$secs" -t "$FUZZ_TMOUT_MS" -m none \
		-i "$seeds" -o "$out/afl/$t" -- "${cmd[@]}" >"$out/$t.log" 2>&1 &
	pids+=($!)
done

# fstat TARGET KEY: a value from the instance's fuzzer_stats ("" before the first write).
fstat() {
	awk -v k="$2" '$1 == k { sub(/^[^:]*: */, ""); print; exit }' \
		"$out/afl/$1/default/fuzzer_stats" 2>/dev/null || true
}

t0=$(date +%s)
running() {
	local p
	for p in "${pids[@]}"; do
		kill -0 "$p" 2>/dev/null && return 0
	done
	return 1
}
while running; do
	for _ in $(seq 60); do
		running || break
		sleep 1
	done
	line="fuzz: $(($(date +%s) - t0))s"
	for t in "${TARGETS[@]}"; do
		line="$line | $t: execs $(fstat "$t" execs_done) ($(fstat "$t" execs_ps_last_min)/s)"
		line="$line edges $(fstat "$t" edges_found) ($(fstat "$t" bitmap_cvg))"
		line="$line crashes $(fstat "$t" saved_crashes) hangs $(fstat "$t" saved_hangs)"
	done
	echo "$line"
done

# known_bug LOG: the NAME of the known-findings.txt entry that matches the
# crash of LOG, if any. The signature: the sanitizer's first error line and
# the first two stack frames, joined with " | ".
known_bug() {
	local sig name ere
	sig="$(grep -m1 -E 'ERROR: |runtime error: ' "$1") | $(grep -m1 -E '^ +#0 ' "$1") | $(grep -m1 -E '^ +#1 ' "$1")"
	while IFS=$'\t' read -r name ere _; do
		case $name in ''|'#'*) continue ;; esac
		if grep -qE -- "$ere" <<<"$sig"; then
			echo "$name"
			return 0
		fi
	done <"$RIG_TOP/rig/fuzz/known-findings.txt"
	return 1
}

rc=0
i=0
nfail=0 nknown=0 nstall=0
for t in "${TARGETS[@]}"; do
	[ "$triage" = 1 ] && break
	st=0
	wait "${pids[$i]}" || st=$?
	i=$((i + 1))
	if [ ! -f "$out/afl/$t/default/fuzzer_stats" ]; then
		tail -30 "$out/$t.log" >&2
		die "fuzz: $t: afl-fuzz did not start (exit $st, log $out/$t.log)"
	fi
done
pids=()

# Rerun an input on the fuzz perf with symbolized reports.
export ASAN_OPTIONS=${SAN_COMMON/symbolize=0/symbolize=1}
export UBSAN_OPTIONS=halt_on_error=1:abort_on_error=1:symbolize=1:print_stacktrace=1
ASAN_SYMBOLIZER_PATH=$(command -v llvm-symbolizer || true)
export ASAN_SYMBOLIZER_PATH
if [ "$triage" = 1 ]; then echo "fuzz: results of the earlier run in $out/afl, judged again (perf: $perf)"; else echo "fuzz: results after ${secs}s (perf: $perf)"; fi
for t in "${TARGETS[@]}"; do
	d=$out/afl/$t/default
	rt=$(fstat "$t" run_time)
	printf 'fuzz: %-8s execs %s in %s s (%s execs/s), edges %s of %s (bitmap_cvg %s), corpus %s, crashes %s, hangs %s\n' \
		"$t" "$(fstat "$t" execs_done)" "$rt" "$(fstat "$t" execs_per_sec)" \
		"$(fstat "$t" edges_found)" "$(fstat "$t" total_edges)" "$(fstat "$t" bitmap_cvg)" \
		"$(fstat "$t" corpus_count)" "$(fstat "$t" saved_crashes)" "$(fstat "$t" saved_hangs)"
	for kind in crashes hangs; do
		for f in "$d/$kind"/id:*; do
			[ -f "$f" ] || continue
			id=${f##*/id:}
			id=${id%%,*}
			case $kind in
			crashes) base=$out/findings/$t-crash-$id ;;
			hangs) base=$out/findings/$t-hang-$id ;;
			esac
			cp "$f" "$base.data"
			read -r -a cmd <<<"$(target_cmd "$t")"
			cmd=("${cmd[@]/@@/$base.data}")
			s=0
			t1=$(date +%s%N)
			# An inner shell that outlives perf: bash reports a child
			# killed by a signal ("Aborted"), and that child is this one.
			bash -c '"$@"; exit $?' rerun timeout -k 5 60 "${cmd[@]}" \
				>/dev/null 2>"$base.log" || s=$?
			ms=$((($(date +%s%N) - t1) / 1000000))
			{
				echo "# input: $f"
				echo "# rerun: ${cmd[*]}: exit $s after $ms ms"
			} >>"$base.log"
			what=$(grep -m1 -E 'ERROR: |runtime error|SUMMARY' "$base.log" || echo 'no sanitizer report')
			verdict=
			if [ "$kind" = crashes ] && known=$(known_bug "$base.log"); then
				verdict=" [known finding $known: not counted]"
				nknown=$((nknown + 1))
			elif [ "$kind" = hangs ] && [ "$ms" -lt "$FUZZ_HANG_MS" ] && [ "$s" != 124 ] && [ "$s" != 137 ]; then
				# perf is deterministic for one input: an exec that took
				# over FUZZ_HANG_MS once and ends in less when rerun
				# alone was stalled by the machine, not by the input.
				verdict=" [not reproduced: the rerun ended in $ms ms; not counted]"
				nstall=$((nstall + 1))
			else
				rc=1
				nfail=$((nfail + 1))
			fi
			echo "fuzz: $t: $kind: $base.data (rerun: exit $s after $ms ms): $what$verdict"
		done
	done
done
echo "fuzz: findings: $nfail failing, $nknown known (rig/fuzz/known-findings.txt), $nstall hangs not reproduced"
exit $rc
