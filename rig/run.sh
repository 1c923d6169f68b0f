#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make run [BASE=1] [ARCH=x86_64|arm64]: the whole flow. Fetch the base,
# apply the series (BASE=1: not), build the kernel and perf, boot the kernel
# in QEMU and record a workload whose inherited AUX event is redirected
# (PERF_EVENT_IOC_SET_OUTPUT) away from perf's buffer and back while its
# children write, then judge where the AUX data went, convert perf.data to
# trace.dat and print a report with a verdict.
#   x86_64: the software AUX PMU (perf_swaux.ko), `perf record -z --aio`
#           with sched tracepoints (rig/run/guest.sh, swaux-flow.c).
#   arm64:  the emulated Armv9 CPU (rig/qemu: QEMU with the TRBE/ETE model,
#           the real TRBE and ETE drivers), `perf record -e cs_etm//u -p`
#           of rig/run/cs-etm-flow.c's workload (rig/run/cs-etm-guest.sh);
#           one boot per run. A kernel report from the TRBE driver or the
#           perf AUX code during the scenario is the bug shown through the
#           driver (exit 3); any other report breaks the run.
# perf is always the series' perf (the base perf cannot decode swaux); only
# the kernel differs with BASE=1.
#
# Exit status: 0 "no misplaced or unflagged AUX data", 3 misplaced or
# unflagged AUX data found (expected with BASE=1), 1 the flow itself failed.
#
# RUNS=N (default 1): the scenario N times (x86_64: on one boot, the module
# reloaded each time; arm64: N boots), one verdict line per run and a count;
# exit 0 if every run found nothing, 3 if every run found misplaced data, 1
# otherwise (mixed results: the A/B would depend on chance).
. "$(dirname "$0")/lib.sh"
arch=${ARCH:-arm64}
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
# BASE=1 reuses the series perf (and arm64 the series' guest perf) if it is
# built: building it switches the shared tree to the series and back, which
# costs a kernel relink.
PERF=$BUILD/perf/perf
if [ $base = 0 ] || [ ! -x "$PERF" ]; then
	make -s --no-print-directory perf BASE=0
fi
if [ "$arch" = arm64 ]; then
	if [ $base = 0 ] || [ ! -x "$BUILD/perf-arm64/perf" ]; then
		bash rig/qemu/perf-arm64.sh
	fi
	QEMU_BIN=$(bash rig/qemu/build.sh --path) || die "make qemu failed"
	"$PERF" version --build-options | grep -Eq '^ +libopencsd: \[ on  \]' ||
		die "$PERF has no OpenCSD (libopencsd: off): run 'make deps' and 'make perf'"
fi
make -s --no-print-directory kernel ARCH="$arch" BASE=$base
if [ "$arch" = x86_64 ]; then
	bash rig/selftests/build.sh "$arch"
	KO=$BUILD/selftests-$arch/perf_swaux.ko
	FLOW=$BUILD/run-$arch/swaux-flow
	mkdir -p "$BUILD/run-$arch"
	gcc -Wall -Wextra -Werror -O2 -I"$RIG_TOP/tools/testing/selftests/perf_events/test_modules" \
		-o "$FLOW" rig/run/swaux-flow.c || die "building swaux-flow failed"
	cmd="bash $RIG_TOP/rig/run/guest.sh $PERF $KO $FLOW $R $cpu $runs"
else
	P=$BUILD/payload-run-arm64
	rm -rf "$P" && mkdir -p "$P/armv9" "$P/rig-run"
	cp "$BUILD/perf-arm64/perf" rig/guest/quiet-cpu.sh "$P/armv9/"
	cp rig/run/cs-etm-guest.sh "$P/rig-run/"
	aarch64-linux-gnu-gcc -Wall -Wextra -Werror -O2 -static -pthread -o "$P/armv9/cs-etm-flow" \
		rig/run/cs-etm-flow.c || die "building cs-etm-flow for arm64 failed"
	cmd="sh /rig-run/cs-etm-guest.sh /tmp/flow $cpu"
	export VM_QEMU=$QEMU_BIN VM_CPU=max,pauth-impdef=on,x-trbe=on VM_PAYLOAD=$P
fi

# boot DIR: the guest runs $cmd; its output in DIR/vm.log, make vm's files
# (console, dmesg, the files the guest sent) in DIR/vm; sets vm_rc.
boot() {
	local d=$1
	mkdir -p "$d"
	set +e
	VM_DIR=$d/vm bash rig/vm.sh "$arch" "$cmd" >"$d/vm.log.raw" 2>&1
	vm_rc=$?
	set -e
	tr -d '\r' <"$d/vm.log.raw" >"$d/vm.log" && rm -f "$d/vm.log.raw"
	cp "$d/vm/console.log" "$d/console.log" 2>/dev/null || true
}

if [ "$arch" = x86_64 ]; then
	info "booting the $kind kernel; the flow runs in the guest (log: ${R#"$RIG_TOP"/}/vm.log)"
	# make vm's 900 s are for one run; a scenario run takes under 4 minutes.
	t=$((600 + runs * 240)); [ $t -ge 900 ] || t=900
	export VM_TIMEOUT=${VM_TIMEOUT:-$t}
	boot "$R"
fi

g() { grep -m1 "$1" "$2" 2>/dev/null || true; }
val() { echo "$1" | sed -n "s/.* $2=\([0-9]*\).*/\1/p"; }

# host_trace_dat DIR: DIR/perf.data -> DIR/trace.dat (--all), trace-cmd
# report, a KernelShark screenshot; sets ks. arm64: also the controller's
# buffer A (DIR/bufA.ring: the PERF_RECORD_AUX records its data ring held)
# as DIR/trace-A.dat, opened as a second stream in a session that frames
# the redirect on CPU $cpu; sets trace_a.
host_trace_dat() {
	local d=$1 session="" caption="" frame
	info "converting perf.data to trace.dat"
	"$PERF" data convert -i "$d/perf.data" --to-trace-dat="$d/trace.dat" --force --all \
		>"$d/convert.log" 2>&1 || { cat "$d/convert.log" >&2; die "perf data convert --to-trace-dat failed"; }
	trace-cmd report -i "$d/trace.dat" >"$d/trace-cmd.txt" 2>"$d/trace-cmd.err" ||
		{ tail "$d/trace-cmd.err" >&2; die "trace-cmd report failed on ${d#"$RIG_TOP"/}/trace.dat"; }
	trace_a=""
	if [ -s "$d/bufA.ring" ]; then
		if python3 rig/run/ring-to-perfdata.py "$d/perf.data" "$d/bufA.ring" "$d/A.perf.data" \
				>"$d/convert-A.log" 2>&1 &&
			"$PERF" data convert -i "$d/A.perf.data" --to-trace-dat="$d/trace-A.dat" --force --all \
				>>"$d/convert-A.log" 2>&1 &&
			trace-cmd report -i "$d/trace-A.dat" >"$d/trace-cmd-A.txt" 2>>"$d/convert-A.log" &&
			frame=$(python3 rig/run/ks-session.py "$cpu" "$d/trace.dat" "$d/trace-cmd.txt" \
				"$d/trace-A.dat" "$d/trace-cmd-A.txt" "$d/kernelshark.json" 2>>"$d/convert-A.log"); then
			session=$d/kernelshark.json
			trace_a="${d#"$RIG_TOP"/}/trace-A.dat: $(grep -c ' aux: ' "$d/trace-cmd-A.txt" || true) aux events; ${frame#ks-session: }"
			caption="Upper CPU rows: perf's buffer B (perf.data). Lower CPU rows: the controller's buffer A (its data ring).
${frame#ks-session: }"
		else
			trace_a="failed (see ${d#"$RIG_TOP"/}/convert-A.log)"
		fi
	fi
	if CAPTION=$caption bash rig/tracedat/kernelshark.sh "$PERF" "$d" "$d/trace.dat" $session \
			>"$d/kernelshark.out" 2>&1; then
		ks=${d#"$RIG_TOP"/}/kernelshark.png
	else
		ks="failed (see ${d#"$RIG_TOP"/}/kernelshark.out)"
	fi
}

# trace_cmd_summary DIR: the report's lines of trace-cmd's output.
trace_cmd_summary() {
	local d=$1
	echo "trace-cmd:  $(grep -c . "$d/trace-cmd.txt" || true) lines; by event:" \
		"$(awk '{for (i = 1; i <= NF; i++) if ($i ~ /^[a-z_]+:$/ && i > 3) { print $i; break } }' "$d/trace-cmd.txt" |
			sort | uniq -c | sort -rn | head -6 | awk '{printf "%s %s  ", $2, $1}')"
	echo "trace.dat:  ${d#"$RIG_TOP"/}/trace.dat"
}

# judge_arm64 DIR: one boot of the cs_etm flow (DIR/vm.log, DIR/vm/...);
# sets bad, prints the report (one line with RUNS > 1).
judge_arm64() {
	local d=$1 ctl seqs="" verdict_line="" splat="" in_driver="" ks trace_a=""
	ctl=$(g '^ctl: A records=' "$d/vm.log")
	# A kernel report: the bug shown through the driver if its report or
	# backtrace is in the TRBE/CoreSight driver or perf's AUX code.
	if grep -q '^rig: vm: kernel reported a problem' "$d/vm.log"; then
		splat=$(grep -m1 -E "$SPLAT_RE" "$d/vm/dmesg.txt" | sed 's/^\[[ 0-9.]*\] //' || true)
		if grep -m1 -A40 -E "$SPLAT_RE" "$d/vm/dmesg.txt" |
			grep -qE 'trbe|coresight|etm4|etm_event|perf_aux|rb_free_aux|perf_mmap|perf_event_set_output'; then
			in_driver=1
			bad="$bad kernel-report-in-the-AUX-path(${splat// /_})"
		else
			bad="$bad guest-broke(kernel-report:${splat// /_})"
		fi
	elif grep -qE '^rig: vm: (the guest did not finish|TIMEOUT)' "$d/vm.log"; then
		bad="$bad guest-broke(timeout)"
	fi
	if [ -z "$in_driver" ]; then
		[ -n "$ctl" ] || bad="$bad no-controller-summary"
		[ "$(val "$ctl" records)" -gt 0 ] 2>/dev/null || bad="$bad scenario-not-exercised(A-empty)"
		# A record in A after the ioctl returned is the bug, switch or
		# not (a child switched in again begins on P's new buffer);
		# none proves something only if no child was switched out.
		if [ "$(val "$ctl" after_redirect)" != 0 ]; then
			bad="$bad records-in-A-after-redirect=$(val "$ctl" after_redirect)"
		elif [ "$(val "$ctl" conclusive)" != 1 ]; then
			bad="$bad not-exercised(a-child-was-switched-out-in-every-try)"
		fi
		[ "$(val "$ctl" invalid)$(val "$ctl" other_cpu)" = 00 ] || bad="$bad bad-records-in-A"
	fi
	if [ -s "$d/vm/files/perf.data" ]; then
		cp "$d/vm/files/perf.data" "$d/perf.data"
		cp "$d/vm/files/bufA.bin" "$d/bufA.bin" 2>/dev/null || true
		cp "$d/vm/files/bufA.ring" "$d/bufA.ring" 2>/dev/null || true
		"$PERF" report -D -i "$d/perf.data" >"$d/report-D.txt" 2>"$d/report-D.err" || true
		PERF_SWAUX_ETE_MODEL=shared "$PERF" report -D -i "$d/perf.data" >"$d/check.txt" 2>"$d/check.err" || true
		verdict_line=$(grep -h '^swaux: verdict' "$d/check.txt" 2>/dev/null | tail -1 || true)
		case "$verdict_line" in
		"swaux: verdict: ok"*) ;;
		"") bad="$bad no-perf-verdict" ;;
		*) bad="$bad perf:${verdict_line#swaux: verdict:}" ;;
		esac
		seqs=$(python3 rig/run/ete-seqs.py "$cpu" "$d/bufA.bin" "$d/report-D.txt" 2>&1 || true)
		[ "$(val "$seqs" duplicates)" = 0 ] || bad="$bad records-in-both-A-and-perf's-buffer=$(val "$seqs" duplicates)"
		[ "$(val "$seqs" b_after_a)" -gt 0 ] 2>/dev/null ||
			[ -n "$in_driver" ] || bad="$bad no-child-trace-in-perf's-buffer-after-the-redirect"
	elif [ -z "$in_driver" ]; then
		bad="$bad no-perf.data"
	fi
	if [ "$runs" != 1 ]; then
		echo "$(basename "$d"): ${ctl:-no controller summary}; ${seqs:-no perf.data}; perf: ${verdict_line#swaux: verdict: }${splat:+; kernel: $splat}"
		return 0
	fi
	ks="not taken"
	# Host half: trace.dat (perf:aux records: the file has no tracepoints).
	[ ! -s "$d/perf.data" ] || host_trace_dat "$d"
	echo
	echo "==== make run: $kind kernel, $arch (emulated Armv9: TRBE and ETE drivers, perf record -e cs_etm//u) ===="
	grep -h '^RUN: kernel' "$d/vm.log" | sed 's/^RUN: /kernel:     /'
	echo "sinks:      $(sed -n 's/^RUN: cs_etm sink //p' "$d/vm.log" | tr '\n' ' ')"
	{ grep -h '^ctl: ' "$d/vm.log" | grep -v '^ctl: A records=' || true; } | sed 's/^ctl: /redirect:   /'
	echo "A (ctl):    ${ctl#ctl: A }"
	if [ -s "$d/perf.data" ]; then
		echo "perf.data:  ${d#"$RIG_TOP"/}/perf.data ($(stat -c %s "$d/perf.data") bytes)"
		echo "perf record: $(sed -n 's/^  record: \[ perf record: \(Captured.*\) \]$/\1/p' "$d/vm.log" | head -1)"
		echo "B (perf):"
		{ grep -h '^swaux: buffer' "$d/check.txt" || true; } | sed 's/^swaux: /  /'
		echo "A vs B:     ${seqs#ete-seqs: }"
		echo "perf:       ${verdict_line:-no swaux verdict line}"
		trace_cmd_summary "$d"
		echo "trace.dat A: ${trace_a:-no record of the data ring of A}"
	fi
	if [ -n "$splat" ]; then
		echo "kernel:     $splat"
		# Where: pc and the innermost frames of the first report.
		{ grep -m1 -A40 -E "$SPLAT_RE" "$d/vm/dmesg.txt" || true; } |
			grep -E '(pc|lr) : |Call trace:|^ *[a-z_0-9.]+\+0x[0-9a-f]+/' | head -8 | sed 's/^ */  /'
	fi
	echo "KernelShark screenshot: $ks"
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
	# Host half: trace.dat (--all: perf's AUX records and samples as
	# perf:* events beside the sched tracepoints).
	host_trace_dat "$d"

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
	trace_cmd_summary "$d"
	echo "KernelShark screenshot: $ks"
}

# verdict_rc: 0 nothing found, 3 misplaced data, 1 the flow broke
verdict_rc() {
	[ -n "$bad" ] || return 0
	case "$bad" in *no-perf-verdict*|*no-controller-summary*|*not-exercised*|*no-perf.data*|*guest-broke*|*guest-exit*) return 1 ;; esac
	return 3
}

# x86_64: a kernel splat or a guest that never finished spoils every run of
# the boot (make vm says so); that is a broken run, never a verdict on the
# data. arm64 (one boot per run): judge_arm64 tells a report from the AUX
# path (the bug) from any other.
vm_broke=""
if [ "$arch" = x86_64 ] &&
	grep -qE '^rig: vm: (kernel reported a problem|the guest did not finish|TIMEOUT)' "$R/vm.log" 2>/dev/null; then
	vm_broke=" guest-broke(splat-or-timeout:see-${R#"$RIG_TOP"/}/vm.log)"
fi
# shellcheck source=rig/splat.sh
. rig/splat.sh

if [ "$runs" = 1 ]; then
	bad=$vm_broke
	if [ "$arch" = arm64 ]; then
		info "booting the $kind kernel on the emulated Armv9 CPU; the flow runs in the guest (log: ${R#"$RIG_TOP"/}/vm.log)"
		export VM_TIMEOUT=${VM_TIMEOUT:-900}
		boot "$R"
	fi
	# The guest's status is the flow's (the verdict is the host's).
	[ $vm_rc = 0 ] || [ "$arch" = arm64 ] || bad="$bad guest-exit=$vm_rc"
	judge_"${arch/x86_64/x86}" "$R"
	rc=0
	verdict_rc || rc=$?
	if [ $rc = 0 ]; then
		echo "verdict: no misplaced or unflagged AUX data"
		# make run (not the A/B targets): the README's picture of the redirect.
		if [ "${RUN_DOC_PNG:-0}" = 1 ] && [ "$arch" = arm64 ] && [ $base = 0 ] &&
			[ -s "$R/kernelshark.json" ] && [ -s "$R/kernelshark.png" ]; then
			mkdir -p rig/doc && cp "$R/kernelshark.png" rig/doc/make-run-arm64.png
			info "rig/doc/make-run-arm64.png: the README's screenshot, from this run"
		fi
	else
		echo "verdict: MISPLACED or UNFLAGGED AUX data:$bad"
	fi
	exit $rc
fi

# RUNS > 1: split the guest's output per iteration (arm64: boot once per
# run), judge each.
echo
echo "==== make run RUNS=$runs: $kind kernel, $arch ===="
if [ "$arch" = x86_64 ]; then
	{ grep -h '^RUN: kernel' "$R/vm.log" || true; } | sed 's/^RUN: /kernel:     /'
	[ $vm_rc = 0 ] || echo "guest exit status $vm_rc (make vm: see ${R#"$RIG_TOP"/}/vm.log)"
fi
export VM_TIMEOUT=${VM_TIMEOUT:-900}
nok=0 nmis=0 nbroken=0
for i in $(seq 1 "$runs"); do
	d=$R/run-$i
	mkdir -p "$d"
	if [ "$arch" = arm64 ]; then
		info "run $i of $runs: booting the $kind kernel on the emulated Armv9 CPU"
		boot "$d"
	else
		sed -n "/^RUN: iteration $i begin\$/,/^RUN: iteration $i end\$/p" "$R/vm.log" >"$d/vm.log"
	fi
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
