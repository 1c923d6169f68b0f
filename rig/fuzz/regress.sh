#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz-regress: every input make fuzz found and the series fixed
# (rig/fuzz/regress/*.data) through both fuzz targets of a plain perf under
# valgrind. Fails on any valgrind error, a signal or a timeout; perf's exit
# status otherwise does not matter (the inputs are corrupt, and perf may
# refuse them).
#
#   regress.sh [perf]   default build/perf/perf
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
perf=${1:-$BUILD/perf/perf}
[ -x "$perf" ] || die "$perf not built: run 'make perf'"
command -v valgrind >/dev/null || die "valgrind not found: run 'make deps'"

w=$(mktemp -d /tmp/rig-fuzz-regress.XXXXXX)
trap 'rm -rf "$w"' EXIT
mkdir -p "$w/home" "$w/symfs" "$w/tracefs"
export PERF_CONFIG=/dev/null PERF_CONFIG_NOSYSTEM=1 HOME=$w/home
export TRACEFS_PATH=$w/tracefs DEBUGFS_PATH=$w/tracefs
unset DEBUGINFOD_URLS

t0=$(date +%s)
pass=0 fail=0
for f in "$RIG_TOP"/rig/fuzz/regress/*.data; do
	for t in report convert; do
		case $t in
		report) cmd=("$perf" report -D -i "$f" --symfs "$w/symfs") ;;
		convert) cmd=("$perf" data convert -i "$f" --to-trace-dat "$w/out.dat" --all --force) ;;
		esac
		s=0
		timeout -k 5 120 valgrind -q --error-exitcode=99 "${cmd[@]}" \
			>/dev/null 2>"$w/err" || s=$?
		name="$(basename "$f") $t"
		# valgrind runs perf to its end and says so when a signal
		# killed it; perf exits with 255 on a file it refuses.
		if [ "$s" = 99 ] || [ "$s" = 124 ] || [ "$s" = 137 ] ||
		   grep -q 'Process terminating with default action' "$w/err"; then
			echo "fuzz-regress: FAIL $name (exit $s)"
			grep -m1 -A6 -E 'Invalid|uninitialised|Process terminating' "$w/err" |
				sed 's/^/  | /' || true
			fail=$((fail + 1))
		else
			echo "fuzz-regress: ok   $name (perf exit $s, no valgrind error)"
			pass=$((pass + 1))
		fi
	done
done
echo "fuzz-regress: $pass passed, $fail failed ($(($(date +%s) - t0)) s, $perf)"
[ "$fail" = 0 ]
