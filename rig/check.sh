#!/usr/bin/env bash
# make check: run every stage (make targets, see CHECK_STAGES in the Makefile and
# rig/mk/*.mk), keep going after a failure, print TAP lines with wall times and a
# closing "N passed, N failed" line. Exit status 1 if any stage failed.
. "$(dirname "$0")/lib.sh"
cd "$RIG_TOP" || exit 1
mkdir -p "$OUT"
stages=("$@")
[ ${#stages[@]} -gt 0 ] || die "no stages given"
t0=$(date +%s)
# The whole output also goes to RIG_CACHE/logs (the last 20 runs are kept):
# a failed CI run can be read after its checkout is gone.
logdir=$RIG_CACHE/logs
if mkdir -p "$logdir" 2>/dev/null; then
	log=$logdir/check-$(date -u +%Y%m%d-%H%M%S)-$$.log
	# shellcheck disable=SC2012
	ls -1t "$logdir"/check-*.log 2>/dev/null | tail -n +20 | xargs -r rm -f || true
	exec > >(tee "$log") 2>&1
	teepid=$!
fi
pass=0 failn=0 n=0
summary=()
echo "TAP version 13"
echo "1..${#stages[@]}"
[ -z "${log:-}" ] || echo "# full log: $log"
for s in "${stages[@]}"; do
	n=$((n + 1))
	echo "# ---- stage $n/${#stages[@]}: $s ($(date -u +%H:%M:%S))"
	ts=$(date +%s)
	# Stage output is indented (TAP subtest style), so the nested "ok N"
	# lines of the suites never read as results of this plan.
	if make --no-print-directory "$s" BASE=0 </dev/null 2>&1 | sed -u 's/^/    /'; [ "${PIPESTATUS[0]}" = 0 ]; then
		res="ok"
		pass=$((pass + 1))
	else
		res="not ok"
		failn=$((failn + 1))
	fi
	dt=$(( $(date +%s) - ts ))
	echo "$res $n - $s # ${dt}s"
	summary+=("$(printf '%-8s %-22s %5ss' "$res" "$s" "$dt")")
done
echo "# ---- stage wall times (total $(( $(date +%s) - t0 ))s)"
printf '# %s\n' "${summary[@]}"
echo "# $pass passed, $failn failed"
echo "$pass passed, $failn failed"
if [ -n "${teepid:-}" ]; then
	# Let tee write the last lines before make returns.
	exec >&- 2>&-
	wait "$teepid" 2>/dev/null || true
fi
[ "$failn" = 0 ]
