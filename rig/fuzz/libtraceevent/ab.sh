#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# make libtraceevent-ab [LTE_SRC=<libtraceevent git repository>]: the four
# libtraceevent format-parser bugs make fuzz found (rig/fuzz/known-findings.txt),
# and the patches next to this script that fix them (git format-patch against
# upstream libtraceevent 1.8.4, commit LTE_BASE, for linux-trace-devel; they
# apply to 1.7.1 as well).
#
# repro.c parses one crafted event format per bad case with tep_parse_event()
# and parses and prints good formats. Three builds of it:
#   debian     against the installed libtraceevent (Debian's, what perf
#              links): each bad case must crash, the good cases pass
#   upstream   against LTE_BASE of LTE_SRC, built with ASan: the same
#   patched    LTE_BASE + the patches (git am), ASan: every case exits 0 with
#              no sanitizer report
# Debian's mirror here serves binary packages only, so the source comes from
# a git repository of libtraceevent: LTE_SRC (default: the workplace's mirror
# if it exists). Without one, only the debian half runs and the target fails
# saying so. Not a check stage. Ends with "N passed, N failed".
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../../lib.sh"
start=$(date +%s)
stage "libtraceevent-ab"
here=$RIG_TOP/rig/fuzz/libtraceevent
LTE_BASE=bd47bd544c9ebc9f44bd88c2b2f2049230741058
src=${LTE_SRC:-/work/.mirror/rostedt+libtraceevent/repo}
[ -f /usr/include/traceevent/event-parse.h ] ||
	die "libtraceevent-dev is not installed (make deps installs it)"

work=$(mktemp -d /tmp/lte-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT
san="-g -O1 -fno-omit-frame-pointer -fsanitize=address"
# shellcheck disable=SC2086 # san is a list of options
gcc $san -Wall -I/usr/include/traceevent -o "$work/repro-debian" "$here/repro.c" -ltraceevent ||
	die "repro.c does not build against the installed libtraceevent"
builds=debian
if git -C "$src" cat-file -e "$LTE_BASE^{commit}" 2>/dev/null; then
	for v in upstream patched; do
		git clone -q --no-checkout "$src" "$work/$v" || die "cannot clone $src"
		git -C "$work/$v" checkout -q "$LTE_BASE" || die "cannot check out $LTE_BASE from $src"
		if [ $v = patched ]; then
			git -C "$work/$v" -c user.name=rig -c user.email=rig@localhost am -q "$here"/0*.patch ||
				die "the patches do not apply to $LTE_BASE"
		fi
		info "building libtraceevent ${LTE_BASE:0:12} ($v, ASan)"
		cpu_lock make -s -C "$work/$v" -j"$(nproc)" EXTRA_CFLAGS="$san" libtraceevent.a \
			>"$work/$v.log" 2>&1 || { tail -20 "$work/$v.log" >&2; die "libtraceevent ($v) build failed"; }
		a=$(find "$work/$v" -name libtraceevent.a | head -1)
		[ -n "$a" ] || die "no libtraceevent.a in $work/$v"
		# shellcheck disable=SC2086 # san is a list of options
		gcc $san -Wall -I"$work/$v/include/traceevent" -o "$work/repro-$v" "$here/repro.c" "$a" -ldl ||
			die "repro.c does not build against libtraceevent ($v)"
	done
	builds="debian upstream patched"
fi

pass=0 fail=0
# one <build> <case> <expect: crash|clean>
one() {
	local v=$1 c=$2 want=$3 rc=0 got why=""
	ASAN_OPTIONS=detect_leaks=0 "$work/repro-$v" "$c" >"$work/out" 2>&1 || rc=$?
	if grep -q 'ERROR: AddressSanitizer' "$work/out"; then
		got=crash
		why=" ($(grep -m1 'ERROR: AddressSanitizer' "$work/out" | sed -E 's/.*ERROR: AddressSanitizer: ([A-Za-z-]+).*/\1/'))"
	elif [ $rc -ge 128 ]; then
		got=crash
		why=" (signal $((rc - 128)))"
	elif [ $rc = 0 ] && ! grep -q 'runtime error:' "$work/out"; then
		got=clean
	else
		got="exit $rc"
	fi
	if [ "$got" = "$want" ]; then
		pass=$((pass + 1))
		echo "ok: $c, $v libtraceevent: $got$why"
	else
		fail=$((fail + 1))
		echo "FAIL: $c, $v libtraceevent: $got$why, expected $want"
		tail -15 "$work/out"
	fi
}
for v in $builds; do
	for c in flag-field array-eof op-eof div-zero; do
		if [ "$v" = patched ]; then one "$v" "$c" clean; else one "$v" "$c" crash; fi
	done
	one "$v" good clean
done
echo "libtraceevent-ab: done in $(( $(date +%s) - start )) s"
echo "$pass passed, $fail failed"
if [ "$builds" = debian ]; then
	echo "libtraceevent-ab: no libtraceevent source with $LTE_BASE (LTE_SRC=$src):" \
		"the patches were not tested" >&2
	exit 1
fi
[ $fail = 0 ]
