#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# trbe-ab: run the TRBE harness for the four (driver, perf core model)
# pairs, base/series driver x CORE=base/fixed, and check each against
# rig/trbe/expected-base-failures: exactly the listed tests fail, each for
# its listed reason, and the series side (series driver, fixed core)
# passes every test. KSRC_BASE / KSRC_SERIES (kernel trees with the
# overlay) replace `make tree`.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage "trbe-ab"

expected=$RIG_TOP/rig/trbe/expected-base-failures
mk() { make --no-print-directory -C "$RIG_TOP" "$@"; }
log_of() { echo "$OUT/trbe/$1-driver+$2-core.log"; }
pairs="base:base base:fixed series:base series:fixed"
# Never compare against the logs of an earlier run.
for p in $pairs; do rm -f "$(log_of "${p%:*}" "${p#*:}")"; done

if [ -n "${KSRC_BASE:-}" ]; then
	mk trbe-test KSRC="$KSRC_BASE" BASE=1 CORE=both || true
else
	mk trbe-test BASE=1 CORE=both || true
fi
if [ -n "${KSRC_SERIES:-}" ]; then
	mk trbe-test KSRC="$KSRC_SERIES" CORE=both || true
else
	mk trbe-test CORE=both || true
fi

summary() { grep -E '^[0-9]+ tests run, [0-9]+ passed, [0-9]+ failed\.$' "$1" || true; }
failures() { sed -n 's/^not ok [0-9]* - //p' "$1" | sort; }
tests_of() { sed -n 's/^\(not \)\{0,1\}ok [0-9]* - //p' "$1" | sort; }
# The expected failures of a pair, one test per line.
want_of() {
	sed -e 's/#.*//' "$expected" |
		awk -v d="$1" -v c="$2" '$1 == d && $2 == c { print $3 }' | sort
}
# The reason (an ERE) listed for a failure of a pair.
reason_of() {
	sed -e '/^[[:space:]]*#/d' "$expected" |
		awk -v d="$1" -v c="$2" -v t="$3" '$1 == d && $2 == c && $3 == t {
			sub(/^[[:space:]]*[^[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+[^[:space:]]+[[:space:]]+/, "")
			print; exit }'
}
# The diagnostics a test printed (the lines before its ok/not ok line).
block() {
	awk -v t="$2" '/^(not )?ok [0-9]+ - / { if ($NF == t) { printf "%s", b; exit } b = ""; next }
		{ b = b $0 "\n" }' "$1"
}

bad=0
for p in $pairs; do
	log=$(log_of "${p%:*}" "${p#*:}")
	[ -f "$log" ] || die "no $log: the harness did not run (see the output above)"
	if [ -z "$(summary "$log")" ]; then
		echo "trbe-ab: ${p%:*} driver, ${p#*:} core: no summary line in $log (harness crashed or did not build)"
		bad=1
	fi
done
[ "$bad" = 0 ] || die "see out/trbe/*-driver+*-core.log"

# Every line of the expectations names a known pair and has a reason.
while read -r d c t r; do
	case "$d:$c" in
	series:fixed)
		echo "trbe-ab: BAD: $expected lists $t for the series side (series driver, fixed core)"
		bad=1 ;;
	base:base|base:fixed|series:base) ;;
	*)
		echo "trbe-ab: BAD: $expected: unknown pair '$d $c'"
		bad=1 ;;
	esac
	[ -n "$r" ] || { echo "trbe-ab: BAD: $expected: no reason for $d $c $t"; bad=1; }
done < <(sed -e '/^[[:space:]]*#/d' -e '/^[[:space:]]*$/d' "$expected")

all=$(tests_of "$(log_of series fixed)")
for p in $pairs; do
	d=${p%:*} c=${p#*:}
	log=$(log_of "$d" "$c")
	echo "trbe-ab: $d driver + $c core: $(summary "$log")"
	if [ "$(tests_of "$log")" != "$all" ]; then
		echo "trbe-ab: BAD: $d driver + $c core ran another test list than series driver + fixed core"
		bad=1
	fi
done
printf 'trbe-ab: %-36s %-12s %-12s %-12s %-12s\n' "test (got/want)" \
	"base+base" "base+fixed" "series+base" "series+fixed"
for t in $all; do
	line=$(printf 'trbe-ab: %-36s' "$t")
	for p in $pairs; do
		d=${p%:*} c=${p#*:}
		got=pass; want=pass
		grep -qxF "$t" <<<"$(failures "$(log_of "$d" "$c")")" && got=FAIL
		grep -qxF "$t" <<<"$(want_of "$d" "$c")" && want=FAIL
		v=$got/$want
		[ "$got" = "$want" ] || { v="$v!"; bad=1; }
		line="$line $(printf '%-12s' "$v")"
	done
	echo "$line"
done
# Each expected failure must fail for its reason.
for p in base:base base:fixed series:base; do
	d=${p%:*} c=${p#*:}
	for t in $(want_of "$d" "$c"); do
		grep -qxF "$t" <<<"$all" ||
			{ echo "trbe-ab: BAD: expected failure $t is not a test of the harness"; bad=1; continue; }
		reason=$(reason_of "$d" "$c" "$t")
		b=$(block "$(log_of "$d" "$c")" "$t")
		if hit=$(grep -m1 -E -- "$reason" <<<"$b"); then
			echo "trbe-ab: $t ($d driver, $c core): ${hit#\# }"
		else
			echo "trbe-ab: BAD: $t ($d driver, $c core) failed without '$reason'"
			bad=1
		fi
	done
done
if [ "$bad" != 0 ]; then
	die "A/B mismatch: compare out/trbe/*-driver+*-core.log with rig/trbe/expected-base-failures; any other failure is a harness bug"
fi
echo "trbe-ab: base (base driver, base core) fails exactly $(want_of base base | wc -l) expected test(s)," \
	"the series (series driver, fixed core) passes all $(wc -l <<<"$all");" \
	"base driver + fixed core fails $(want_of base fixed | wc -l), series driver + base core fails $(want_of series base | wc -l), as expected"
