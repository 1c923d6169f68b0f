#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make swaux-mangle: negative tests of the perf swaux decoder on the host.
# Damaged copies (rig/swaux/mangle.py) of a VM recording (make swaux-perf,
# out/swaux-perf/sys-a.data) must give the error verdict from perf script and
# perf report -D, and a non-zero exit from perf script (perf report exits 0
# whatever happens); the unchanged copy and a gap explained by a TRUNCATED
# PERF_RECORD_AUX of the same CPU must give "verdict: ok".
#   mangle-test.sh [PERF] [perf.data]
# TAP output; exit 0 iff every case passed.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
# The checks look at exit statuses themselves.
set +e
PERF=${1:-${SWAUX_PERF:-$BUILD/perf/perf}}
IN=${2:-$OUT/swaux-perf/sys-a.data}
W=$OUT/swaux-mangle
[ -x "$PERF" ] || die "no perf at $PERF: run 'make perf'"
[ -s "$IN" ] || die "no recording $IN: run 'make swaux-perf' first"
rm -rf "$W"
mkdir -p "$W"

n=0
failed=0
tap() {
	n=$((n + 1))
	if [ "$1" = 0 ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		failed=$((failed + 1))
	fi
}

# field FILE NAME: NAME=value of the "swaux: total" line
field() {
	sed -n "s/^swaux: total .* $2=\([0-9]*\).*/\1/p" "$1"
}

# case MODE WANT_VERDICT [FIELD=VALUE...]
run_case() {
	local mode=$1 want=$2 f st rst ok=0 kv
	shift 2
	f=$W/$mode
	python3 "$RIG_TOP/rig/swaux/mangle.py" "$IN" "$f.data" "$mode" >"$f.mangle" 2>&1 ||
		{ cat "$f.mangle" >&2; tap 1 "$mode: mangle.py"; return; }
	"$PERF" script -i "$f.data" >"$f.script" 2>"$f.script.err"
	st=$?
	"$PERF" report -D -i "$f.data" 2>"$f.report.err" | grep '^swaux: ' >"$f.report"
	rst=${PIPESTATUS[0]}
	grep -qx "swaux: verdict: $want" "$f.script" || ok=1
	grep -qx "swaux: verdict: $want" "$f.report" || ok=1
	# perf report exits 0 whatever the session status: only script's counts.
	[ "$rst" = 0 ] || ok=1
	if [ "$want" = ok ]; then
		[ "$st" = 0 ] || ok=1
	else
		[ "$st" != 0 ] || ok=1
	fi
	for kv in "$@"; do
		[ "$(field "$f.script" "${kv%%=*}")" = "${kv#*=}" ] || ok=1
	done
	[ "$ok" = 0 ] || { sed 's/^/# /' "$f.mangle"; grep '^swaux: \(total\|verdict\|error\)' "$f.script" | sed 's/^/# /'; }
	tap "$ok" "$mode: verdict '$want', exit $st/$rst $(cat "$f.mangle" | cut -d' ' -f3-) $*"
}

echo "# perf: $PERF; recording: $IN"
run_case none ok gaps_unflagged=0 misplaced=0 invalid=0
run_case gap "1 errors" gaps_unflagged=1 gaps_flagged=0
run_case gap-flagged ok gaps_unflagged=0 gaps_flagged=1
run_case gap-otherflag "1 errors" gaps_unflagged=1 gaps_flagged=0
run_case mismatch "1 errors" misplaced=1 gaps_unflagged=0
run_case bufid "2 errors" misplaced=1 gaps_unflagged=1
run_case magic "2 errors" invalid=1 gaps_unflagged=1
echo "1..$n"
echo "# swaux-mangle: $((n - failed)) passed, $failed failed (files in ${W#"$RIG_TOP"/})"
[ "$failed" = 0 ]
