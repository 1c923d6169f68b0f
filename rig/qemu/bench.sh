#!/usr/bin/env bash
# make qemu-bench: what the TRBE/ETE model costs the guest. The forking
# workload of make cs-etm (200 processes), timed in the guest (/proc/uptime,
# 10 ms), QEMU_BENCH_RUNS (5) times per case, cases alternating within a boot:
#   off     -cpu max (the model absent): the workload alone
#   idle    -cpu max,x-trbe=on: the workload alone (model present, trace off)
#   dummy   -cpu max,x-trbe=on: under perf record -e dummy:u (perf, no trace)
#   traced  -cpu max,x-trbe=on: under perf record -e cs_etm//u (trace on:
#           the model writes a record at each EL0 entry and exit, the TRBE
#           interrupt fires, perf copies the AUX data)
# Ratios of medians: idle/off (the model's presence), traced/dummy (trace on
# against the same perf command without it; goal <= 1.10), traced/idle.
# Needs make cs-etm's payload (build/cs-etm-payload: the guest perf and the
# workload). Not part of make check.
. "$(dirname "$0")/../lib.sh"
stage qemu-bench
cd "$RIG_TOP" || exit 1
RUNS=${QEMU_BENCH_RUNS:-5}
P=$BUILD/cs-etm-payload
[ -x "$P/perf" ] && [ -x "$P/workload.sh" ] || die "no $P: run 'make cs-etm' first"
QEMU_BIN=$(bash rig/qemu/build.sh --path) || die "make qemu failed"
D=$OUT/qemu-bench
rm -rf "$D" && mkdir -p "$D"

# bench_cmd CASES...: guest script printing "case <name> <centiseconds>" lines
bench_cmd() {
	local c
	echo 'now() { read -r u _ </proc/uptime; echo "${u%.*}${u#*.}"; }'
	echo "i=0; while [ \$i -lt $RUNS ]; do"
	for c in "$@"; do
		case $c in
		off|idle) echo "t0=\$(now); /workload.sh; echo \"case $c \$((\$(now) - t0))\"" ;;
		dummy) echo "t0=\$(now); /perf record -q -e dummy:u -o /tmp/d.data -- /workload.sh >/dev/null 2>&1; echo \"case $c \$((\$(now) - t0))\"" ;;
		traced) echo "t0=\$(now); /perf record -q -e cs_etm//u -o /tmp/t.data -- /workload.sh >/dev/null 2>&1; echo \"case $c \$((\$(now) - t0))\"" ;;
		esac
	done
	echo 'i=$((i + 1)); done'
}

run() { # run NAME CPU CASES...
	local name=$1 cpu=$2
	shift 2
	VM_DIR=$D/$name VM_QEMU=$QEMU_BIN VM_CPU=$cpu VM_PAYLOAD=$P VM_TIMEOUT=900 \
		bash rig/vm.sh arm64 "$(bench_cmd "$@")" >"$D/$name.log" 2>&1 ||
		{ tail -20 "$D/$name.log" >&2; die "the $name guest failed"; }
}
info "booting -cpu max, then -cpu max,x-trbe=on; $RUNS runs per case"
run off max,pauth-impdef=on off
run on max,pauth-impdef=on,x-trbe=on idle dummy traced
med() { # med CASE: median centiseconds of the case's runs
	grep -h "^case $1 " "$D"/*.log | awk '{print $3}' | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR + 1) / 2)]}'
}
declare -A M
for c in off idle dummy traced; do
	n=$(grep -h "^case $c " "$D"/*.log | wc -l)
	[ "$n" = "$RUNS" ] || die "case $c: $n runs, want $RUNS (no data, no verdict)"
	M[$c]=$(med "$c")
	[ "${M[$c]}" -gt 0 ] || die "case $c: median 0 (no data, no verdict)"
	echo "qemu-bench: $c: median ${M[$c]}0 ms (runs: $(grep -h "^case $c " "$D"/*.log | awk '{printf "%s0 ", $3}')ms)"
done
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {printf "%.3f", a / b}'; }
r_trace=$(ratio "${M[traced]}" "${M[dummy]}")
echo "qemu-bench: idle/off (model present, trace off): $(ratio "${M[idle]}" "${M[off]}")"
echo "qemu-bench: traced/dummy (trace on vs the same perf record without it): $r_trace (goal <= 1.10: $(awk -v r="$r_trace" 'BEGIN {print (r <= 1.10) ? "met" : "NOT met"}'))"
echo "qemu-bench: traced/idle (perf record -e cs_etm//u vs the workload alone): $(ratio "${M[traced]}" "${M[idle]}")"
