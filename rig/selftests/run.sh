#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make selftests ARCH=x86_64|arm64 [BASE=1]: build the tree and kernel (series,
# or the pristine base with BASE=1), perf_swaux.ko and the perf_events
# selftests, boot the kernel with `make vm` and run them (rig/selftests/guest.sh).
# Results: out/selftests-$ARCH[-base]/{results.txt,console.log,vm.log}.
# Exit status: the VM run's (non-zero on a failed test or a splat in dmesg).
. "$(dirname "$0")/../lib.sh"
arch=${1:-x86_64}
arch_check "$arch"
base=${BASE:-0}
case "$base" in 1|y|yes) base=1 ;; *) base=0 ;; esac
stage "selftests $arch$([ $base = 1 ] && echo ' (base)')"

sfx=""
if [ $base = 1 ]; then sfx=-base; fi
R=$OUT/selftests-$arch$sfx
mkdir -p "$R"
rm -f "$R/results.txt" "$R/console.log" "$R/vm.log"

make -s -C "$RIG_TOP" --no-print-directory tree BASE=$base
make -s -C "$RIG_TOP" --no-print-directory kernel ARCH="$arch" BASE=$base
bash "$RIG_TOP/rig/selftests/build.sh" "$arch"

DST=$BUILD/selftests-$arch
runs=${RUNS:-1}
case "$runs" in ''|*[!0-9]*|0) die "RUNS must be a positive number (got '$runs')" ;; esac
case "$arch" in
x86_64) cmd="sh $DST/guest.sh $DST $R/results.txt $runs" ;;
arm64) cmd="sh /selftests/guest.sh /selftests - $runs" ;;
esac
# make vm's 900 s are for one run; each further aux_set_output run takes
# well under 5 minutes on TCG.
t=$((900 + (runs - 1) * 300))
export VM_TIMEOUT=${VM_TIMEOUT:-$t}
info "running the selftests in the $arch guest (log: ${R#"$RIG_TOP"/}/vm.log)"
set +e
make -s -C "$RIG_TOP" --no-print-directory vm ARCH="$arch" CMD="$cmd" >"$R/vm.log" 2>&1
rc=$?
set -e
cp "$OUT/vm-$arch/console.log" "$R/console.log" 2>/dev/null || true
# arm64 (and x86_64 if the guest could not write out/): results from the console.
if [ ! -s "$R/results.txt" ] && [ -f "$R/console.log" ]; then
	tr -d '\r' <"$R/console.log" |
		grep -E '^(SELFTESTS: |ksft: |noswaux: |aux_set_output(-r[0-9]+)?: |mmap: |ksft-mmap: |mmap_aux.sh: |sigtrap_threads: |remove_on_exec: |watermark_signal: )' >"$R/results.txt" || true
fi
[ -s "$R/results.txt" ] || { tail -40 "$R/vm.log" >&2; die "no selftest output: see ${R#"$RIG_TOP"/}/vm.log and console.log"; }

grep -E '^(aux_set_output|mmap): (not )?ok ' "$R/results.txt" | sed 's/^/  /' >&2 || true
if [ "$runs" -gt 1 ]; then
	# Every test's outcome over the RUNS runs of aux_set_output on this boot.
	sed -nE 's/^aux_set_output(-r[0-9]+)?: (not ok|ok) [0-9]+ ([^ ]+).*/\3 \2/p' "$R/results.txt" |
		sort | uniq -c | awk -v n="$runs" '
		{ c[$2] += $1; if ($3 == "not") bad[$2] += $1 }
		END {
			for (t in c) {
				total++
				if (c[t] != n) { printf "  %s: %d results in %d runs\n", t, c[t], n; odd++ }
				if (bad[t]) { printf "  %s: failed %d of %d\n", t, bad[t], c[t]; flaky++ }
			}
			printf "selftests repeat: %d runs, %d tests, %d failed at least once, %d with missing results\n", n, total, flaky, odd
		}' | tee "$R/repeat.txt" >&2
	grep -q ' 0 failed at least once, 0 with missing results$' "$R/repeat.txt" || rc=1
fi
grep -E '^SELFTESTS: ' "$R/results.txt" | sed 's/^/  /' >&2
info "selftests $arch$([ $base = 1 ] && echo ' (base)'): vm exit $rc; results in ${R#"$RIG_TOP"/}/results.txt"
exit $rc
