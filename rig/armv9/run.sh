#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# rig/armv9/run.sh: the TRBE SET_OUTPUT redirect scenario (the aux_set_output
# kselftest with AUX_SET_OUTPUT_PMU=cs_etm) on a real Armv9 machine or Arm FVP
# (ETE + TRBE, cs_etm PMU), alone and under perf record, then `perf test
# coresight`. Run it on the target, as root, with the patched kernel booted
# and a perf built from the patched tree with libopencsd. `run.sh --help` says
# what it does. CI has no TRBE hardware: make cs-etm runs it on the series'
# emulated Armv9 CPU (rig/qemu) with --ete-model. Exit 0 ok, 1 failure, 2 not
# run.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PERF=${PERF:-perf}
CPU=${CPU:-1}
OUT=${OUT:-./out-armv9}
KSELFTEST=${KSELFTEST:-}
NCHILD=${NCHILD:-4}
PERF_TEST=${PERF_TEST:-1}
CC=${CC:-cc}
WORKLOAD=${WORKLOAD:-}
ETE_MODEL=${ARMV9_ETE_MODEL:-0}
SYSFS=${ARMV9_SYSFS:-/sys}
TEST_PMU=${ARMV9_TEST_PMU:-}

usage() {
	cat <<EOF
usage: rig/armv9/run.sh [--perf PATH] [--kselftest PATH] [--workload PATH]
                        [--cpu N] [--out DIR] [--no-perf-test] [--ete-model]

Runs on an Armv9 machine or Arm FVP with ETE and TRBE, as root, with the
patched kernel booted. Exit status: 0 every check passed, 1 a check failed,
2 not run (no cs_etm PMU, no TRBE sink for the CPU, not root, no perf with
libopencsd, no C compiler, no aux_set_output kselftest, bad arguments).

  1. Checks: /sys/bus/event_source/devices/cs_etm exists; a TRBE sink
     (cs_etm/sinks/trbeN) exists for CPU; prints the TRBE evidence found
     (sinks, /sys/devices/platform/*trbe*, dmesg lines), root, perf has
     libopencsd (perf version --build-options), \$CC exists, the
     aux_set_output kselftest exists (source or binary).
  2. Builds rig/armv9/redirect.c (the workload of step 4; unless
     --workload) and, from its source, the kselftest with
     "\$CC -O2 -Wall" into OUT.
  3. The redirect scenario: the kselftest's redirect tests with
     AUX_SET_OUTPUT_PMU=cs_etm AUX_SET_OUTPUT_CPU=CPU: a per-task,
     inherited cs_etm event P (sink trbeCPU) on CPU, SET_OUTPUT into
     buffer A, children tracing on CPU, P redirected to buffer B while
     they run (and A -> B -> A..., to none, B unmapped meanwhile, a
     stress mix). Checks: A's aux_head and data do not change once
     SET_OUTPUT returned, the children's data reaches B, no kernel splat.
     A redirect during which a child was switched out proves nothing and
     is tried again (20 tries); on a busy CPU all may be inconclusive,
     which fails the run. Pick an idle CPU, or first move unbound kernel
     threads and workqueues off it with rig/guest/quiet-cpu.sh CPU (as the
     CI's guests do; it changes the workqueue cpumask until reboot, so
     run.sh does not do it itself).
  4. The scenario (the kselftest's switch_buffer tests) while "perf record
     -e cs_etm//u" records a forking workload ("redirect spin") pinned to
     the same CPU, so both sessions share its TRBE; then "perf report -D"
     and "perf script" on perf.data must succeed and show trace. (perf's
     own cs_etm event cannot be the redirected one: perf mmaps it, and
     SET_OUTPUT refuses mmapped events.)
  5. "perf test coresight" (unless --no-perf-test): no test may fail, one
     must pass.
  6. dmesg since the start (a marker written to /dev/kmsg) must have no
     WARNING, BUG, Oops, lockdep or KASAN/UBSAN report and no TRBE or
     CoreSight error line. Reports already there before are only listed.
Ends with "armv9: verdict: ok" or "armv9: verdict: FAIL"; everything is
kept in OUT (report.txt, logs, perf.data, dmesg).

Options (environment variable in brackets):
  --perf PATH      perf binary [PERF, default "perf" from PATH]
  --workload PATH  a binary built from rig/armv9/redirect.c (static for a
                   machine without a compiler) [WORKLOAD, default: built
                   from the source with \$CC]
  --kselftest PATH the aux_set_output kselftest: its source (built with
                   \$CC) or a binary [KSELFTEST, default: the source in
                   the tree of a perf built in place, e.g. linux/tools/
                   testing/selftests/perf_events/aux_set_output.c for
                   --perf linux/tools/perf/perf]
  --cpu N          CPU to trace on; needs a TRBE sink trbeN [CPU, default 1]
  --out DIR        output directory [OUT, default ./out-armv9]
  --no-perf-test   skip "perf test coresight" [PERF_TEST=0]
  --ete-model      the CPU is QEMU's TRBE/ETE test model (the series'
                   repository, rig/qemu: -cpu max,x-trbe=on), not hardware
                   [ARMV9_ETE_MODEL=1]: the kselftest checks the model's
                   records (AUX_SET_OUTPUT_ETE_MODEL=1); the model has no
                   instruction trace, so "perf script" must only succeed;
                   and perf.data must get the swaux checker's "verdict: ok"
                   (PERF_SWAUX_ETE_MODEL=shared perf report -D: a perf with
                   the repository's swaux support), every record
                   attributed, no sequence gap inside a transaction
  -h, --help       this text
Also: NCHILD (children of the step 4 workload, default 4), CC (default cc).
Testing hooks, not for real runs: ARMV9_SYSFS (sysfs root for the checks of
step 1), ARMV9_TEST_PMU (use that AUX PMU instead of cs_etm, also for the
kselftest, e.g. swaux with perf_swaux.ko loaded, and skip the TRBE,
libopencsd and perf test steps; the verdict then says TEST MODE).
EOF
}

die_usage() {
	echo "armv9: $*; see --help" >&2
	exit 2
}

while [ $# -gt 0 ]; do
	case "$1" in
	-h | --help) usage; exit 0 ;;
	--perf | --kselftest | --workload | --cpu | --out)
		[ $# -ge 2 ] || die_usage "$1 needs a value"
		case "$1" in
		--perf) PERF=$2 ;;
		--workload) WORKLOAD=$2 ;;
		--kselftest) KSELFTEST=$2 ;;
		--cpu) CPU=$2 ;;
		--out) OUT=$2 ;;
		esac
		shift 2 ;;
	--perf=*) PERF=${1#*=}; shift ;;
	--workload=*) WORKLOAD=${1#*=}; shift ;;
	--ete-model) ETE_MODEL=1; shift ;;
	--kselftest=*) KSELFTEST=${1#*=}; shift ;;
	--cpu=*) CPU=${1#*=}; shift ;;
	--out=*) OUT=${1#*=}; shift ;;
	--no-perf-test) PERF_TEST=0; shift ;;
	*) die_usage "unknown argument '$1'" ;;
	esac
done

say() { echo "armv9: $*"; }
refuse() {
	echo "armv9: cannot run: $*" >&2
	echo "armv9: verdict: not run"
	exit 2
}

for v in CPU NCHILD; do
	[[ ${!v} =~ ^[0-9]+$ ]] || die_usage "$v must be a number, not '${!v}'"
done

# 1. What this machine has.
pmu=cs_etm
[ -z "$TEST_PMU" ] || pmu=$TEST_PMU
pmudir=$SYSFS/bus/event_source/devices/$pmu
[ -d "$pmudir" ] || refuse "no $pmu PMU: $pmudir does not exist. This needs an Armv9 CPU (or FVP) with ETE and TRBE and a kernel with CONFIG_CORESIGHT, CONFIG_CORESIGHT_SOURCE_ETM4X and CONFIG_CORESIGHT_TRBE"

say "kernel $(uname -r) $(uname -m), $(getconf _NPROCESSORS_ONLN 2>/dev/null || nproc) CPUs online, $pmu PMU type $(cat "$pmudir/type" 2>/dev/null || echo '?')"
if [ -z "$TEST_PMU" ]; then
	sinks=()
	if [ -d "$pmudir/sinks" ]; then
		mapfile -t sinks < <(ls "$pmudir/sinks")
	fi
	mapfile -t trbe_sinks < <(printf '%s\n' "${sinks[@]}" | grep -E '^trbe[0-9]+$' || true)
	mapfile -t trbe_plat < <(compgen -G "$SYSFS/devices/platform/*trbe*" || true)
	mapfile -t trbe_dmesg < <(dmesg 2>/dev/null | grep -i trbe | tail -5 || true)
	say "cs_etm sinks: ${sinks[*]:-none}"
	say "TRBE sinks: ${trbe_sinks[*]:-none}"
	say "TRBE platform devices: ${trbe_plat[*]:-none}"
	say "dmesg lines mentioning TRBE: ${#trbe_dmesg[@]}${trbe_dmesg[0]:+ (last ones below)}"
	for l in "${trbe_dmesg[@]}"; do echo "    $l"; done
	[ ${#trbe_sinks[@]} -gt 0 ] || refuse "no TRBE sink in $pmudir/sinks (the scenario is about TRBE; an ETR/ETB-only system does not exercise it). Is CONFIG_CORESIGHT_TRBE set, are the TRBE DT/ACPI nodes enabled, does firmware allow TRBE at EL1/EL2 (TF-A ENABLE_TRBE_FOR_NS=1)?"
	[ -e "$pmudir/sinks/trbe$CPU" ] || refuse "CPU $CPU has no TRBE sink (have: ${trbe_sinks[*]}); pick one with --cpu N"
fi
[ "$(id -u)" = 0 ] || refuse "must run as root (per-task events on other processes, dmesg, /dev/kmsg)"
cpudir=$SYSFS/devices/system/cpu/cpu$CPU
[ -d "$cpudir" ] || refuse "CPU $CPU does not exist"
[ "$(cat "$cpudir/online" 2>/dev/null || echo 1)" = 1 ] || refuse "CPU $CPU is offline"
perf_bin=$(command -v "$PERF") || refuse "perf not found ('$PERF'); build it from the patched tree (see the README) and pass --perf PATH"
if [ -z "$TEST_PMU" ]; then
	"$perf_bin" version --build-options 2>/dev/null | grep -Eq 'libopencsd: +\[ on' ||
		refuse "$perf_bin was built without libopencsd, so perf report/script cannot decode cs_etm trace: install libopencsd-dev and build perf with CORESIGHT=1"
fi
[ -z "$WORKLOAD" ] || [ -x "$WORKLOAD" ] || refuse "--workload $WORKLOAD is not an executable"
case "$WORKLOAD:${KSELFTEST:-x.c}" in
:* | *.c) command -v "$CC" >/dev/null || refuse "no C compiler '$CC' (set CC, or install gcc; or pass --workload and --kselftest binaries)" ;;
esac
if [ "$ETE_MODEL" = 1 ]; then
	export AUX_SET_OUTPUT_ETE_MODEL=1
	grep -q PERF_SWAUX_ETE_MODEL "$perf_bin" 2>/dev/null ||
		refuse "--ete-model: $perf_bin has no swaux checker (PERF_SWAUX_ETE_MODEL): build perf from the series' repository tree"
fi
say "perf: $perf_bin ($("$perf_bin" --version 2>/dev/null || echo 'version unknown'))"
# The kselftest: its source in the patched tree (next to the perf built
# there, by default) or a binary built from it.
ksft=${KSELFTEST:-$(dirname "$perf_bin")/../testing/selftests/perf_events/aux_set_output.c}
ksft_usable() { # ksft_usable PATH: aux_set_output.c in a kernel tree, or an executable
	case "$1" in
	*.c) [ -f "$1" ] && [ -f "$(dirname "$1")/../kselftest_harness.h" ] ;;
	*) [ -f "$1" ] && [ -x "$1" ] ;;
	esac
}
ksft_usable "$ksft" ||
	refuse "no aux_set_output kselftest: '$ksft' is neither aux_set_output.c in a kernel tree (next to ../kselftest_harness.h) nor an executable; pass --kselftest PATH: the patched tree's tools/testing/selftests/perf_events/aux_set_output.c, or a binary built from it"
ksft=$(cd "$(dirname "$ksft")" && pwd)/$(basename "$ksft")
say "kselftest: $ksft"

if [ -z "$TEST_PMU" ]; then
	say "CPU $CPU: sink trbe$CPU, sinkid $(cat "$pmudir/sinks/trbe$CPU" 2>/dev/null || echo '?') (the kselftest puts it in config2)"
else
	say "TEST MODE: PMU $pmu instead of cs_etm; TRBE, libopencsd and perf test steps skipped"
fi

mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
REPORT=$OUT/report.txt
: >"$REPORT"
# shellcheck source=rig/splat.sh
. "$HERE/../splat.sh"
TRBE_ERR_RE='error|fail|unable|invalid|timeout|timed out|stuck|corrupt|wrong'
trbe_errors() { # trbe_errors FILE: TRBE/CoreSight/ETE lines that report a problem
	grep -iE 'trbe|coresight|[^a-z]ete[0-9]*[^a-z]' "$1" | grep -iE "$TRBE_ERR_RE" || true
}

results=()
failed=0
result() { # result NAME ok|FAIL|skipped [DETAIL]
	results+=("$(printf '%-44s %s%s' "$1" "$2" "${3:+ ($3)}")")
	[ "$2" != FAIL ] || failed=1
}

# dmesg: what was there before, then a marker that starts this run.
dmesg >"$OUT/dmesg-before.txt" 2>&1 || refuse "dmesg failed"
if splat_scan "$OUT/dmesg-before.txt" >"$OUT/splats-before.txt"; then
	say "note: dmesg already has kernel reports from before this run (not counted): $OUT/splats-before.txt"
fi
trbe_errors "$OUT/dmesg-before.txt" >"$OUT/trbe-errors-before.txt"
if [ -s "$OUT/trbe-errors-before.txt" ]; then
	say "note: dmesg already has TRBE/CoreSight error lines from before this run (not counted):"
	sed 's/^/    /' "$OUT/trbe-errors-before.txt" | head -10
fi
marker="armv9-run: start $$ $(date +%s)"
kmsg() { echo "$*" >/dev/kmsg 2>/dev/null || true; }
kmsg "$marker"

perf_pid=
# shellcheck disable=SC2317 # reached through the EXIT trap
cleanup() {
	if [ -n "$perf_pid" ] && kill -0 "$perf_pid" 2>/dev/null; then
		touch "$OUT/flow-perf/stop" 2>/dev/null || true
		kill -INT "$perf_pid" 2>/dev/null || true
		wait "$perf_pid" 2>/dev/null || true
	fi
}
trap cleanup EXIT

# 2. The workload of step 4 and the kselftest.
build() { # build WHAT OUTPUT SOURCE [LIBS...]
	local what=$1 bin=$2 src=$3
	shift 3
	say "building $src"
	"$CC" -O2 -Wall -o "$bin" "$src" "$@" >"$bin.build.log" 2>&1 || {
		cat "$bin.build.log" >&2
		say "verdict: FAIL ($what did not build, see $bin.build.log)"
		exit 1
	}
}
workload=$WORKLOAD
if [ -z "$workload" ]; then
	build "the workload" "$OUT/redirect" "$HERE/redirect.c"
	workload=$OUT/redirect
fi
ksft_bin=$ksft
case "$ksft" in
*.c)
	build "the kselftest" "$OUT/aux_set_output" "$ksft" -lpthread
	ksft_bin=$OUT/aux_set_output
	;;
esac

run_kselftest() { # run_kselftest NAME LOG [HARNESS ARGS...]: the scenario with $pmu on $CPU
	local name=$1 log=$2 rc=0 n_ok n_skip n_fail
	shift 2
	AUX_SET_OUTPUT_PMU=$pmu AUX_SET_OUTPUT_CPU=$CPU "$ksft_bin" "$@" >"$log" 2>&1 || rc=$?
	# Results, and what a failed check printed (not the per-test PMU line)
	grep -E '^(ok|not ok) |^# [^ ]*\.c:[0-9]+:|^# Totals' "$log" |
		grep -vE ':PMU [^ ]+ \(type |: ?[0-9]+ iterations$' | sed 's/^/    /' || true
	n_skip=$(grep -cE '^ok [0-9]+ .*# SKIP' "$log" || true)
	n_ok=$(($(grep -cE '^ok [0-9]+ ' "$log" || true) - n_skip))
	n_fail=$(grep -cE '^not ok [0-9]+ ' "$log" || true)
	if [ $rc = 0 ] && [ "$n_fail" = 0 ] && [ "$n_ok" -gt 0 ]; then
		result "$name" ok "$n_ok passed, $n_skip skipped"
	elif [ $rc = 4 ]; then
		result "$name" FAIL "the kselftest skipped: $(grep -m1 -o 'SKIP.*' "$log" || true), see $log"
	else
		result "$name" FAIL "exit $rc, $n_ok passed, $n_fail failed, $n_skip skipped, see $log"
	fi
}

# 3. The scenario alone.
say "phase 1: the redirect scenario on CPU $CPU (aux_set_output -f redirect, log: $OUT/kselftest.log)"
kmsg "armv9-run: phase 1: aux_set_output"
run_kselftest "redirect scenario (kselftest)" "$OUT/kselftest.log" -f redirect

# 4. The scenario while perf record traces a forking workload on the same CPU.
say "phase 2: perf record -e $pmu//u on a forking workload, the redirect scenario alongside"
kmsg "armv9-run: phase 2: perf record + aux_set_output"
flow=$OUT/flow-perf
rm -rf "$flow" "$OUT/perf.data" "$OUT/perf.data.old"
mkdir -p "$flow"
"$perf_bin" record -e "$pmu//u" -o "$OUT/perf.data" -- \
	"$workload" spin "$flow" "$CPU" "$NCHILD" >"$OUT/record.log" 2>&1 &
perf_pid=$!
waited=0
while [ ! -e "$flow/started" ] && kill -0 "$perf_pid" 2>/dev/null && [ $waited -lt 1200 ]; do
	sleep 0.1
	waited=$((waited + 1))
done
if [ -e "$flow/started" ]; then
	run_kselftest "redirect scenario during perf record" "$OUT/kselftest-perf.log" -t switch_buffer
else
	result "redirect scenario during perf record" FAIL "perf record's workload did not start, see $OUT/record.log"
fi
touch "$flow/stop"
rec_rc=0
wait "$perf_pid" || rec_rc=$?
perf_pid=
sed 's/^/    /' "$OUT/record.log" | tail -5
if [ $rec_rc = 0 ] && [ -s "$OUT/perf.data" ]; then
	result "perf record -e $pmu//u (forking workload)" ok
else
	result "perf record -e $pmu//u (forking workload)" FAIL "exit $rec_rc, see $OUT/record.log"
fi

# Decode what perf recorded.
if [ -s "$OUT/perf.data" ]; then
	say "perf report -D and perf script on $OUT/perf.data"
	# The dump of decoded trace packets can be huge: keep its head, count the rest.
	rc=0
	n=$("$perf_bin" report -D -i "$OUT/perf.data" 2>&1 |
		awk -v f="$OUT/report-D.txt" 'NR <= 20000 { print > f } /PERF_RECORD_AUXTRACE / { n++ } END { print n + 0 }') || rc=$?
	if [ $rc = 0 ] && [ "$n" -gt 0 ]; then
		result "perf report -D" ok "$n PERF_RECORD_AUXTRACE"
	else
		result "perf report -D" FAIL "exit $rc, $n PERF_RECORD_AUXTRACE, see $OUT/report-D.txt (first 20000 lines)"
	fi
	rc=0
	"$perf_bin" script -i "$OUT/perf.data" --itrace=i100000i >"$OUT/script.txt" 2>"$OUT/script.err" || rc=$?
	n=$(wc -l <"$OUT/script.txt")
	tids=$(awk '$1 == "redirect" { print $2 }' "$OUT/script.txt" | sort -u | wc -l)
	if [ $rc = 0 ] && { [ "$n" -gt 0 ] || [ "$ETE_MODEL" = 1 ]; }; then
		result "perf script" ok "$n lines, $tids redirect threads$([ "$ETE_MODEL" = 1 ] && echo '; the model has no instruction trace')"
	else
		result "perf script" FAIL "exit $rc, $n lines, see $OUT/script.err"
	fi
	if [ "$ETE_MODEL" = 1 ]; then
		# Every model record attributed to (cpu, pid, sequence number).
		# The kselftest traced on the same CPU meanwhile: its records
		# leave sequence gaps between perf's transactions ("shared").
		PERF_SWAUX_ETE_MODEL=shared "$perf_bin" report -D -i "$OUT/perf.data" 2>&1 |
			grep '^swaux: ' >"$OUT/check.txt" || true
		verdict=$(grep '^swaux: verdict' "$OUT/check.txt" || echo 'no verdict')
		recs=$(sed -n 's/^swaux: total .* records=\([0-9]*\) .*/\1/p' "$OUT/check.txt")
		if [ "$verdict" = "swaux: verdict: ok" ] && [ "${recs:-0}" -gt 0 ]; then
			result "the ETE model records (swaux checker)" ok "$recs records attributed"
		else
			result "the ETE model records (swaux checker)" FAIL "${verdict#swaux: }, ${recs:-0} records, see $OUT/check.txt"
		fi
	fi
else
	result "perf report -D" FAIL "no perf.data"
	result "perf script" FAIL "no perf.data"
fi

# 5. perf test coresight. perf finds its shell tests relative to the current
# directory or to its binary: run it from the binary's directory.
if [ "$PERF_TEST" = 0 ] || [ -n "$TEST_PMU" ]; then
	result "perf test coresight" skipped
else
	say "phase 3: perf test coresight (log: $OUT/perf-test.log)"
	kmsg "armv9-run: phase 3: perf test coresight"
	rc=0
	(cd "$(dirname "$perf_bin")" && "$perf_bin" test coresight) >"$OUT/perf-test.log" 2>&1 || rc=$?
	n_ok=$(grep -cE ': Ok$' "$OUT/perf-test.log" || true)
	n_fail=$(grep -c 'FAILED!' "$OUT/perf-test.log" || true)
	n_skip=$(grep -cE ': Skip' "$OUT/perf-test.log" || true)
	grep -E ': (Ok|FAILED!|Skip)' "$OUT/perf-test.log" | sed 's/^/    /' || true
	sed -n '/=== Test Summary ===/,$p' "$OUT/perf-test.log" | sed 's/^/    /'
	detail="exit $rc, $n_ok passed, $n_skip skipped, $n_fail failed"
	if [ $rc = 0 ] && [ "$n_fail" = 0 ] && [ "$n_ok" -gt 0 ]; then
		result "perf test coresight" ok "$detail"
	else
		result "perf test coresight" FAIL "$detail"
	fi
fi

# 6. dmesg since the marker.
kmsg "armv9-run: end"
dmesg >"$OUT/dmesg-after.txt" 2>&1 || true
awk -v m="$marker" 'f { print } index($0, m) { f = 1 }' "$OUT/dmesg-after.txt" >"$OUT/dmesg-new.txt"
if ! grep -qF "$marker" "$OUT/dmesg-after.txt"; then
	result "dmesg" FAIL "the start marker is gone from dmesg (ring buffer overrun?): check $OUT/dmesg-after.txt by hand"
elif splat_scan "$OUT/dmesg-new.txt" >"$OUT/splats.txt"; then
	sed 's/^/    /' "$OUT/splats.txt" | head -40
	result "dmesg" FAIL "kernel reports since the start, see $OUT/splats.txt"
else
	trbe_errors "$OUT/dmesg-new.txt" >"$OUT/trbe-errors.txt"
	if [ -s "$OUT/trbe-errors.txt" ]; then
		sed 's/^/    /' "$OUT/trbe-errors.txt" | head -20
		result "dmesg" FAIL "TRBE/CoreSight errors since the start, see $OUT/trbe-errors.txt"
	else
		result "dmesg" ok "no WARN/BUG/Oops/lockdep/TRBE error since the start"
	fi
fi

{
	echo "armv9: ---- $(uname -r), CPU $CPU, $pmu"
	for r in "${results[@]}"; do echo "armv9: $r"; done
	if [ -n "$TEST_PMU" ]; then
		echo "armv9: TEST MODE ($pmu instead of cs_etm): not a result for TRBE"
	fi
	if [ "$ETE_MODEL" = 1 ]; then
		echo "armv9: on QEMU's TRBE/ETE test model (--ete-model), not on hardware"
	fi
	if [ $failed = 0 ]; then
		echo "armv9: verdict: ok"
	else
		echo "armv9: verdict: FAIL"
	fi
} | tee "$REPORT"
exit $failed
