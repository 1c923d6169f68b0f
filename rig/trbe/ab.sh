#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# trbe-ab: the TRBE harness on the base must fail exactly the tests listed in
# rig/trbe/expected-base-failures, and on the series every test must pass.
# KSRC_BASE / KSRC_SERIES (kernel trees with the overlay) replace `make tree`.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage "trbe-ab"

expected=$RIG_TOP/rig/trbe/expected-base-failures
mk() { make --no-print-directory -C "$RIG_TOP" "$@"; }
# Never compare against the logs of an earlier run.
rm -f "$OUT/trbe/base.log" "$OUT/trbe/series.log"

if [ -n "${KSRC_BASE:-}" ]; then
	mk trbe-test KSRC="$KSRC_BASE" BASE=1 || true
else
	mk trbe-test BASE=1 || true
fi
if [ -n "${KSRC_SERIES:-}" ]; then
	mk trbe-test KSRC="$KSRC_SERIES" || true
else
	mk trbe-test || true
fi

summary() { grep -E '^[0-9]+ tests run, [0-9]+ passed, [0-9]+ failed\.$' "$1" || true; }
failures() { sed -n 's/^not ok [0-9]* - //p' "$1" | sort; }
tests_of() { sed -n 's/^\(not \)\{0,1\}ok [0-9]* - //p' "$1" | sort; }

bad=0
for kind in base series; do
	log=$OUT/trbe/$kind.log
	[ -f "$log" ] || die "no $log: 'make trbe-test${kind/base/ BASE=1}' did not run the harness"
	if [ -z "$(summary "$log")" ]; then
		echo "trbe-ab: $kind: no summary line in $log (harness crashed or did not build)"
		bad=1
	fi
done
[ "$bad" = 0 ] || die "see out/trbe/{base,series}.log"

want=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$expected" | sort)
got_base=$(failures "$OUT/trbe/base.log")
got_series=$(failures "$OUT/trbe/series.log")

echo "trbe-ab: base:   $(summary "$OUT/trbe/base.log")"
echo "trbe-ab: series: $(summary "$OUT/trbe/series.log")"
if [ "$(tests_of "$OUT/trbe/base.log")" != "$(tests_of "$OUT/trbe/series.log")" ]; then
	echo "trbe-ab: BAD: base and series ran different test lists"
	bad=1
fi
for t in $(tests_of "$OUT/trbe/series.log"); do
	a=pass; b=pass; w=pass
	grep -qx "$t" <<<"$got_base" && a=FAIL
	grep -qx "$t" <<<"$got_series" && b=FAIL
	grep -qx "$t" <<<"$want" && w=FAIL
	if [ "$a" = "$w" ] && [ "$b" = pass ]; then v=ok; else v=BAD; bad=1; fi
	printf 'trbe-ab: %-36s base=%-4s (want %-4s) series=%-4s (want pass) %s\n' \
		"$t" "$a" "$w" "$b" "$v"
done
# The diagnostics a test printed (the lines before its ok/not ok line).
block() {
	awk -v t="$2" '/^(not )?ok [0-9]+ - / { if ($NF == t) { printf "%s", b; exit } b = ""; next }
		{ b = b $0 "\n" }' "$1"
}
for t in $want; do
	grep -qx "$t" <<<"$(tests_of "$OUT/trbe/series.log")" ||
		{ echo "trbe-ab: BAD: expected base failure $t is not a test of the harness"; bad=1; continue; }
	# It must fail for the right reason: the IRQ rebind happened, then a
	# caught crash, a WARN or a broken invariant.
	b=$(block "$OUT/trbe/base.log" "$t")
	if grep -q 'rebinds the handle' <<<"$b" &&
	   grep -qE 'runtime error|AddressSanitizer|killed by signal|VIOLATION|WARNING' <<<"$b"; then
		echo "trbe-ab: $t on base: $(grep -m1 'rebinds the handle' <<<"$b" | sed 's/^# //')"
		echo "trbe-ab: $t on base: $(grep -m1 -E 'runtime error|AddressSanitizer|killed by signal|VIOLATION|WARNING' <<<"$b" | sed 's/^# //')"
	else
		echo "trbe-ab: BAD: $t failed on base without the IRQ rebind and a crash or broken invariant"
		bad=1
	fi
done
if [ "$bad" != 0 ]; then
	die "A/B mismatch: compare out/trbe/{base,series}.log with rig/trbe/expected-base-failures; any other base failure is a harness bug"
fi
echo "trbe-ab: base fails exactly $(wc -w <<<"$want") expected test(s), series passes all"
