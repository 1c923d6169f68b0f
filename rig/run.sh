#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run [BASE=1] [ARCH=x86_64]: the whole flow. Fetch the base, apply the
# series (BASE=1: not), build the kernel and perf, boot the kernel in QEMU,
# load the software AUX PMU, record a workload whose swaux event is
# redirected (PERF_EVENT_IOC_SET_OUTPUT) while inherited children write,
# with `perf record -z --aio` and sched tracepoints, decode the AUX data,
# convert perf.data to trace.dat and print a report with a verdict.
# perf is always the series' perf (the base perf cannot decode swaux); only
# the kernel differs with BASE=1.
#
# Exit status: 0 "no misplaced or unflagged AUX data", 3 misplaced or
# unflagged AUX data found (expected with BASE=1), 1 the flow itself failed.
#
# RUNS=N (default 1): the scenario N times on one boot (the module reloaded
# each time), one verdict line per run and a count; exit 0 if every run
# found nothing, 3 if every run found misplaced data, 1 otherwise (mixed
# results: the A/B would depend on chance).
. "$(dirname "$0")/lib.sh"
arch=${ARCH:-x86_64}
arch_check "$arch"
base=${BASE:-0}
case "$base" in 1|y|yes) base=1 ;; *) base=0 ;; esac
kind=$([ $base = 1 ] && echo base || echo series)
stage "run $arch ($kind kernel)"
cd "$RIG_TOP" || exit 1

sfx=""
if [ $base = 1 ]; then sfx=-base; fi
R=$OUT/run-$arch$sfx
rm -rf "$R"
mkdir -p "$R"
cpu=1
runs=${RUNS:-1}
case "$runs" in ''|*[!0-9]*|0) die "RUNS must be a positive number (got '$runs')" ;; esac

bash rig/deps.sh
# arm64: the kernel side only (no perf for arm64 here): the kselftest's
# switch_buffer scenario (tools/testing/selftests/perf_events/aux_set_output.c).
# BASE=1 reuses the series perf if it is built: building it switches the
# shared tree to the series and back, which costs a kernel relink.
PERF=$BUILD/perf/perf
if [ "$arch" = x86_64 ] && { [ $base = 0 ] || [ ! -x "$PERF" ]; }; then
	make -s --no-print-directory perf BASE=0
fi
make -s --no-print-directory kernel ARCH="$arch" BASE=$base
bash rig/selftests/build.sh "$arch"
KO=$BUILD/selftests-$arch/perf_swaux.ko
if [ "$arch" = x86_64 ]; then
	FLOW=$BUILD/run-$arch/swaux-flow
	mkdir -p "$BUILD/run-$arch"
	gcc -Wall -Wextra -Werror -O2 -I"$RIG_TOP/tools/testing/selftests/perf_events/test_modules" \
		-o "$FLOW" rig/run/swaux-flow.c || die "building swaux-flow failed"
	cmd="bash $RIG_TOP/rig/run/guest.sh $PERF $KO $FLOW $R $cpu $runs"
else
	# selftests/build.sh put perf_swaux.ko and aux_set_output into the payload.
	P=$BUILD/payload-arm64/swaux-run
	rm -rf "$P" && mkdir -p "$P"
	cp rig/run/guest.sh rig/guest/quiet-cpu.sh "$P/"
	cmd="sh /swaux-run/guest.sh - /selftests/perf_swaux.ko /selftests/aux_set_output /tmp/run $cpu $runs"
fi

info "booting the $kind kernel; the flow runs in the guest (log: ${R#"$RIG_TOP"/}/vm.log)"
# make vm's 900 s are for one run; a scenario run takes under 4 minutes.
t=$((600 + runs * 240)); [ $t -ge 900 ] || t=900
export VM_TIMEOUT=${VM_TIMEOUT:-$t}
set +e
make -s --no-print-directory vm ARCH="$arch" CMD="$cmd" >"$R/vm.log.raw" 2>&1
vm_rc=$?
set -e
tr -d '\r' <"$R/vm.log.raw" >"$R/vm.log" && rm -f "$R/vm.log.raw"
cp "$OUT/vm-$arch/console.log" "$R/console.log" 2>/dev/null || true

g() { grep -m1 "$1" "$2" 2>/dev/null || true; }
val() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }

# judge_arm64 DIR: the kselftest's verdict from DIR/vm.log; sets bad, prints
# the report (one line with RUNS > 1).
judge_arm64() {
	local d=$1 tap mism
	tap=$(grep -m1 -E '^(not )?ok [0-9]+ redirect\.many_children\.switch_buffer' "$d/vm.log" || true)
	mism=$(sed -n 's/^RUN: module mismatches \([0-9]*\) .*/\1/p' "$d/vm.log")
	case "$tap" in
	"ok "*) ;;
	"not ok "*) bad="$bad kselftest:switch_buffer-failed" ;;
	*) bad="$bad no-kselftest-result" ;;
	esac
	[ "${mism:-x}" = 0 ] || bad="$bad module-mismatches=${mism:-?}"
	[ "$runs" = 1 ] || return 0
	echo
	echo "==== make run: $kind kernel, $arch (kernel side: kselftest aux_set_output, no perf) ===="
	grep -h '^RUN: kernel' "$d/vm.log" | sed 's/^RUN: /kernel:     /'
	echo "kselftest:  ${tap:-no result}"
	{ grep -E '^# .*aux_set_output\.c:[0-9]+:' "$d/vm.log" || true; } | sed 's|^# .*/aux_set_output\.c:|  aux_set_output.c:|' | head -8
	echo "module:     mismatches=${mism:-?}"
}

# judge_x86 DIR: decode DIR/perf.data, check the controller's and the
# module's counts; sets bad, prints the report (one line with RUNS > 1).
judge_x86() {
	local d=$1 ctl mism verdict_line lost ks
	ctl=$(g '^ctl: A buf_id=' "$d/vm.log")
	mism=$(sed -n 's/^RUN: module mismatches \([0-9]*\) .*/\1/p' "$d/vm.log")
	[ -n "$ctl" ] || bad="$bad no-controller-summary"
	[ "$(val "$ctl" after_redirect)" = 0 ] || bad="$bad inherited-records-in-A-after-redirect=$(val "$ctl" after_redirect)"
	[ "$(val "$ctl" mismatch)" = 0 ] || bad="$bad mismatch-records-in-A=$(val "$ctl" mismatch)"
	[ "${mism:-x}" = 0 ] || bad="$bad module-mismatches=${mism:-?}"
	# P's writers must have written into A before the redirect back, or the
	# scenario was not exercised at all.
	[ "$(val "$ctl" records)" -gt 0 ] 2>/dev/null || bad="$bad scenario-not-exercised(A-empty)"
	[ -s "$d/perf.data" ] || { bad="$bad no-perf.data"; return 0; }
	"$PERF" report -D -i "$d/perf.data" >"$d/report-D.txt" 2>"$d/report-D.err" || true
	"$PERF" script -i "$d/perf.data" >"$d/script.txt" 2>"$d/script.err" || true
	verdict_line=$(grep -h '^swaux: verdict' "$d/report-D.txt" 2>/dev/null | tail -1 || true)
	case "$verdict_line" in
	"swaux: verdict: ok"*) ;;
	"") bad="$bad no-perf-verdict" ;;
	*) bad="$bad perf:${verdict_line#swaux: verdict:}" ;;
	esac
	# Lost events: perf says so; the demo must not lose any.
	lost=$(grep -hoE 'lost [0-9.]+%|[0-9]+ lost (samples|events)|LOST events' "$d/record.log" "$d/report-D.err" "$d/script.err" 2>/dev/null | head -1 || true)
	if [ "$runs" != 1 ]; then
		echo "$(basename "$d"): $(g '^ctl: redirect ' "$d/vm.log" | sed 's/^ctl: //'); A: ${ctl#ctl: A }; perf: ${verdict_line#swaux: verdict: }; module mismatches=${mism:-?}${lost:+; $lost}"
		return 0
	fi
	# Host half: convert, trace-cmd, KernelShark.
	info "converting perf.data to trace.dat"
	"$PERF" data convert -i "$d/perf.data" --to-trace-dat="$d/trace.dat" --force \
		>"$d/convert.log" 2>&1 || { cat "$d/convert.log" >&2; die "perf data convert --to-trace-dat failed"; }
	trace-cmd report -i "$d/trace.dat" >"$d/trace-cmd.txt" 2>"$d/trace-cmd.err" ||
		{ tail "$d/trace-cmd.err" >&2; die "trace-cmd report failed on ${d#"$RIG_TOP"/}/trace.dat"; }
	ks="not taken"
	if bash rig/tracedat/kernelshark.sh "$PERF" "$d" "$d/trace.dat" >"$d/kernelshark.out" 2>&1; then
		ks=${d#"$RIG_TOP"/}/kernelshark.png
	else
		ks="failed (see ${d#"$RIG_TOP"/}/kernelshark.out)"
	fi

	echo
	echo "==== make run: $kind kernel, $arch ===="
	grep -h '^RUN: kernel' "$d/vm.log" | sed 's/^RUN: /kernel:     /'
	echo "perf.data:  ${d#"$RIG_TOP"/}/perf.data ($(stat -c %s "$d/perf.data") bytes)"
	echo "perf record: $(grep -h '^\[ perf record: Captured' "$d/record.log" | head -1)${lost:+ ($lost)}"
	# Summaries of the outputs; a missing match is an empty summary, not an error.
	count_types() { sed -n 's/^[0-9].*\]: PERF_RECORD_\([A-Z_0-9]*\).*/\1/p' "$1" | sort | uniq -c | sort -rn |
		head -"$2" | awk '{printf "%s %s  ", $2, $1}'; }
	echo "events:     $(grep -c . "$d/script.txt" || true) perf script lines; records: $(count_types "$d/report-D.txt" 8)"
	echo "redirect:   $(g "^ctl: redirect " "$d/vm.log" | sed "s/^ctl: redirect //")"
	echo "AUX buffers:"
	{ grep -h '^swaux: buffer' "$d/report-D.txt" || true; } | sed 's/^swaux: /  B (perf)   /'
	echo "  A (ctl)    ${ctl#ctl: A }"
	echo "gaps:       $({ grep -h '^swaux: gap' "$d/report-D.txt" || true; } | wc -l) (every one must be flagged by perf)"
	{ grep -h '^swaux: gap' "$d/report-D.txt" || true; } | head -10 | sed 's/^swaux: /  /'
	echo "perf:       ${verdict_line:-no swaux verdict line}"
	echo "module:     mismatches=${mism:-?}"
	echo "trace-cmd:  $(grep -c . "$d/trace-cmd.txt" || true) lines; by event:" \
		"$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/ && i > 3) { print $i; break } }' "$d/trace-cmd.txt" |
			sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s  ", $2, $1}')"
	echo "trace.dat:  ${d#"$RIG_TOP"/}/trace.dat"
	echo "KernelShark screenshot: $ks"
}

# verdict_rc: 0 nothing found, 3 misplaced data, 1 the flow broke
verdict_rc() {
	[ -n "$bad" ] || return 0
	case "$bad" in *no-perf-verdict*|*no-controller-summary*|*not-exercised*|*no-kselftest-result*|*no-perf.data*|*guest-broke*|*guest-exit*) return 1 ;; esac
	return 3
}

# A kernel splat or a guest that never finished spoils every run of the boot
# (make vm says so); that is a broken run, never a verdict on the data.
vm_broke=""
if grep -qE '^rig: vm: (kernel reported a problem|the guest did not finish|TIMEOUT)' "$R/vm.log.raw" "$R/vm.log" 2>/dev/null; then
	vm_broke=" guest-broke(splat-or-timeout:see-${R#"$RIG_TOP"/}/vm.log)"
fi

if [ "$runs" = 1 ]; then
	bad=$vm_broke
	# x86_64: the guest's status is the flow's (the verdict is the host's);
	# arm64: it is the kselftest's, judged from its TAP line.
	[ "$arch" = arm64 ] || [ $vm_rc = 0 ] || bad="$bad guest-exit=$vm_rc"
	judge_"${arch/x86_64/x86}" "$R"
	rc=0
	verdict_rc || rc=$?
	if [ $rc = 0 ]; then
		echo "verdict: no misplaced or unflagged AUX data"
	else
		echo "verdict: MISPLACED or UNFLAGGED AUX data:$bad"
	fi
	exit $rc
fi

# RUNS > 1: split the guest's output per iteration, judge each.
echo
echo "==== make run RUNS=$runs: $kind kernel, $arch ===="
{ grep -h '^RUN: kernel' "$R/vm.log" || true; } | sed 's/^RUN: /kernel:     /'
[ $vm_rc = 0 ] || echo "guest exit status $vm_rc (make vm: see ${R#"$RIG_TOP"/}/vm.log)"
nok=0 nmis=0 nbroken=0
for i in $(seq 1 "$runs"); do
	d=$R/run-$i
	mkdir -p "$d"
	sed -n "/^RUN: iteration $i begin\$/,/^RUN: iteration $i end\$/p" "$R/vm.log" >"$d/vm.log"
	# Each run on its own evidence; a broken boot breaks them all.
	bad=$vm_broke
	judge_"${arch/x86_64/x86}" "$d"
	rc=0
	verdict_rc || rc=$?
	case $rc in
	0) nok=$((nok + 1)); echo "run $i: no misplaced or unflagged AUX data" ;;
	3) nmis=$((nmis + 1)); echo "run $i: MISPLACED or UNFLAGGED AUX data:$bad" ;;
	*) nbroken=$((nbroken + 1)); echo "run $i: BROKEN:$bad" ;;
	esac
done
echo "runs: $runs; no misplaced data: $nok; misplaced data: $nmis; broken: $nbroken"
[ $nok = "$runs" ] && exit 0
[ $nmis = "$runs" ] && exit 3
exit 1
