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

bash rig/deps.sh
# arm64: the kernel side only (no perf for arm64 here): swaux-flow solo.
# BASE=1 reuses the series perf if it is built: building it switches the
# shared tree to the series and back, which costs a kernel relink.
PERF=$BUILD/perf/perf
if [ "$arch" = x86_64 ] && { [ $base = 0 ] || [ ! -x "$PERF" ]; }; then
	make -s --no-print-directory perf BASE=0
fi
make -s --no-print-directory kernel ARCH="$arch" BASE=$base
bash rig/selftests/build.sh "$arch"
KO=$BUILD/selftests-$arch/perf_swaux.ko
FLOW=$BUILD/run-$arch/swaux-flow
mkdir -p "$BUILD/run-$arch"
case "$arch" in
x86_64) CC=(gcc) ;;
arm64) CC=(aarch64-linux-gnu-gcc -static) ;;
esac
"${CC[@]}" -Wall -Wextra -Werror -O2 -I"$RIG_TOP/tools/testing/selftests/perf_events/test_modules" \
	-o "$FLOW" rig/run/swaux-flow.c || die "building swaux-flow failed"
if [ "$arch" = x86_64 ]; then
	cmd="bash $RIG_TOP/rig/run/guest.sh $PERF $KO $FLOW $R $cpu"
else
	P=$BUILD/payload-arm64/swaux-run
	rm -rf "$P" && mkdir -p "$P"
	cp "$KO" "$FLOW" rig/run/guest.sh "$P/"
	cmd="sh /swaux-run/guest.sh - /swaux-run/perf_swaux.ko /swaux-run/swaux-flow /tmp/run $cpu"
fi

info "booting the $kind kernel; the flow runs in the guest (log: ${R#"$RIG_TOP"/}/vm.log)"
set +e
make -s --no-print-directory vm ARCH="$arch" CMD="$cmd" >"$R/vm.log.raw" 2>&1
vm_rc=$?
set -e
tr -d '\r' <"$R/vm.log.raw" >"$R/vm.log" && rm -f "$R/vm.log.raw"
cp "$OUT/vm-$arch/console.log" "$R/console.log" 2>/dev/null || true

# The verdict's inputs: the controller, the module, perf's decoder.
g() { grep -m1 "$1" "$2" 2>/dev/null || true; }
ctl=$(g '^ctl: A buf_id=' "$R/vm.log")
val() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }
mism=$(sed -n 's/^RUN: module mismatches \([0-9]*\) .*/\1/p' "$R/vm.log")
bad=""
[ $vm_rc = 0 ] || bad="$bad guest-exit=$vm_rc"
[ -n "$ctl" ] || bad="$bad no-controller-summary"
[ "$(val "$ctl" after_redirect)" = 0 ] || bad="$bad inherited-records-in-A-after-redirect=$(val "$ctl" after_redirect)"
[ "$(val "$ctl" mismatch)" = 0 ] || bad="$bad mismatch-records-in-A=$(val "$ctl" mismatch)"
[ "${mism:-x}" = 0 ] || bad="$bad module-mismatches=${mism:-?}"
# P's writers must have written into A before the redirect back, or the
# scenario was not exercised at all.
[ "$(val "$ctl" records)" -gt 0 ] 2>/dev/null || bad="$bad scenario-not-exercised(A-empty)"

verdict() {
	if [ -z "$bad" ]; then
		echo "verdict: no misplaced or unflagged AUX data"
		exit 0
	fi
	echo "verdict: MISPLACED or UNFLAGGED AUX data:$bad"
	# A flow that broke (no perf verdict, no controller summary) is no verdict.
	case "$bad" in *no-perf-verdict*|*no-controller-summary*|*not-exercised*) exit 1 ;; esac
	exit 3
}

if [ "$arch" = arm64 ]; then
	ctlb=$(g '^ctl: B buf_id=' "$R/vm.log")
	for k in invalid gaps mismatch; do
		[ "$(val "$ctlb" $k)" = 0 ] || bad="$bad B-$k=$(val "$ctlb" $k)"
	done
	echo
	echo "==== make run: $kind kernel, $arch (kernel side: swaux-flow solo, no perf) ===="
	grep -h '^RUN: kernel' "$R/vm.log" | sed 's/^RUN: /kernel:     /'
	echo "AUX buffers:"
	echo "  ${ctl#ctl: }"
	echo "  ${ctlb#ctl: }"
	echo "module:     mismatches=${mism:-?}"
	verdict
fi

[ -s "$R/perf.data" ] || { tail -40 "$R/vm.log" >&2; die "the guest left no perf.data: see ${R#"$RIG_TOP"/}/vm.log"; }
"$PERF" report -D -i "$R/perf.data" >"$R/report-D.txt" 2>"$R/report-D.err" || true
"$PERF" script -i "$R/perf.data" >"$R/script.txt" 2>"$R/script.err" || true
verdict_line=$(grep -h '^swaux: verdict' "$R/report-D.txt" 2>/dev/null | tail -1)
case "$verdict_line" in
"swaux: verdict: ok"*) ;;
"") bad="$bad no-perf-verdict" ;;
*) bad="$bad perf:${verdict_line#swaux: verdict:}" ;;
esac

# Host half: convert, trace-cmd, KernelShark.
info "converting perf.data to trace.dat"
"$PERF" data convert -i "$R/perf.data" --to-trace-dat="$R/trace.dat" --force \
	>"$R/convert.log" 2>&1 || { cat "$R/convert.log" >&2; die "perf data convert --to-trace-dat failed"; }
trace-cmd report -i "$R/trace.dat" >"$R/trace-cmd.txt" 2>"$R/trace-cmd.err" ||
	{ tail "$R/trace-cmd.err" >&2; die "trace-cmd report failed on ${R#"$RIG_TOP"/}/trace.dat"; }
ks="not taken"
if bash rig/tracedat/kernelshark.sh "$PERF" "$R" "$R/trace.dat" >"$R/kernelshark.out" 2>&1; then
	ks=${R#"$RIG_TOP"/}/kernelshark.png
else
	ks="failed (see ${R#"$RIG_TOP"/}/kernelshark.out)"
fi

# The report.
echo
echo "==== make run: $kind kernel, $arch ===="
grep -h '^RUN: kernel' "$R/vm.log" | sed 's/^RUN: /kernel:     /'
echo "perf.data:  ${R#"$RIG_TOP"/}/perf.data ($(stat -c %s "$R/perf.data") bytes)"
# Summaries of the outputs; a missing match is an empty summary, not an error.
count_types() { sed -n 's/^[0-9].*\]: PERF_RECORD_\([A-Z_0-9]*\).*/\1/p' "$1" | sort | uniq -c | sort -rn |
	head -"$2" | awk '{printf "%s %s  ", $2, $1}'; }
echo "events:     $(grep -c . "$R/script.txt" || true) perf script lines; records: $(count_types "$R/report-D.txt" 8)"
echo "AUX buffers:"
{ grep -h '^swaux: buffer' "$R/report-D.txt" || true; } | sed 's/^swaux: /  B (perf)   /'
echo "  A (ctl)    ${ctl#ctl: A }"
echo "gaps:       $({ grep -h '^swaux: gap' "$R/report-D.txt" || true; } | wc -l) (every one must be flagged by perf)"
{ grep -h '^swaux: gap' "$R/report-D.txt" || true; } | head -10 | sed 's/^swaux: /  /'
echo "perf:       ${verdict_line:-no swaux verdict line}"
echo "module:     mismatches=${mism:-?}"
echo "trace-cmd:  $(grep -c . "$R/trace-cmd.txt" || true) lines; by event:" \
	"$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/ && i > 3) { print $i; break } }' "$R/trace-cmd.txt" |
		sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s  ", $2, $1}')"
echo "trace.dat:  ${R#"$RIG_TOP"/}/trace.dat"
echo "KernelShark screenshot: $ks"

verdict
