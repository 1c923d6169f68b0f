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
#   upstream   the shipped source built with ASan: the same
#   patched    that source + the patches (git am), ASan: every case exits 0
#              with no sanitizer report
# The shipped source is upstream libtraceevent 1.8.4 as Debian ships it: the
# orig tarball of Debian 13's source package libtraceevent 1:1.8.4-2
# (LTE_DEB_VERSION), its URI and sha256 taken from the Sources index of the
# rig's private apt configuration (trixie deb-src), the sha256 also pinned
# here (LTE_ORIG_SHA256), downloaded with apt-helper and cached in
# $RIG_CACHE. Only the orig tarball: the patches are against upstream 1.8.4,
# and Debian's mirror answers 404 for this version's .dsc and packaging
# tarball (and for 1.7.1's tarballs). Or, with LTE_SRC, commit LTE_BASE of a
# libtraceevent git repository. Not a check stage. Ends with
# "N passed, N failed".
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../../lib.sh"
start=$(date +%s)
stage "libtraceevent-ab"
here=$RIG_TOP/rig/fuzz/libtraceevent
LTE_BASE=bd47bd544c9ebc9f44bd88c2b2f2049230741058
LTE_DEB_VERSION=1:1.8.4-2
LTE_ORIG_SHA256=d4d206a9bf53f613f7e2e6bc10c8909c895456f2ea37e03f6741de77c9c9532f
[ -f /usr/include/traceevent/event-parse.h ] ||
	die "libtraceevent-dev is not installed (make deps installs it)"

work=$(mktemp -d /tmp/lte-ab.XXXXXX)
trap 'rm -rf "$work"' EXIT

# debian_source: the orig tarball of Debian's source package, unpacked into
# a one-commit git repository at $work/src.
debian_source() {
	local d=$RIG_CACHE/libtraceevent/${LTE_DEB_VERSION#*:} uri file sum
	if [ ! -f "$d/ok" ]; then
		info "fetching libtraceevent $LTE_DEB_VERSION's orig tarball from Debian 13's source packages"
		papt_setup lte-src amd64 \
			"deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie main"
		rm -rf "$d" && mkdir -p "$d"
		# 'URI' name size SHA256:hash, one line a file of the package.
		# shellcheck disable=SC2046 # papt_opts is a list of options
		(cd "$d" && apt-get $(papt_opts lte-src) -q source --print-uris \
			"libtraceevent=$LTE_DEB_VERSION") >"$d/uris" 2>"$d/fetch.log" ||
			{ cat "$d/fetch.log" >&2; die "Debian's deb-src (trixie) does not list libtraceevent $LTE_DEB_VERSION: set LTE_DEB_VERSION and LTE_ORIG_SHA256 in ${BASH_SOURCE[0]#"$RIG_TOP"/} to a version 'apt-cache showsrc libtraceevent' lists whose orig tarball is upstream 1.8.4, or pass LTE_SRC=<libtraceevent git repository>"; }
		read -r uri file _ sum < <(grep "\.orig\.tar\." "$d/uris") ||
			die "no orig tarball in the Sources entry of libtraceevent $LTE_DEB_VERSION ($d/uris)"
		uri=${uri//\'/} sum=${sum#SHA256:}
		[ "$sum" = "$LTE_ORIG_SHA256" ] ||
			die "libtraceevent $LTE_DEB_VERSION: the Sources index gives $file sha256 '$sum', want $LTE_ORIG_SHA256"
		/usr/lib/apt/apt-helper -q download-file "$uri" "$d/$file" "SHA256:$sum" \
			>>"$d/fetch.log" 2>&1 ||
			{ cat "$d/fetch.log" >&2; die "could not download $uri (sha256 $sum)"; }
		{ mkdir "$d/s" && tar -xf "$d/$file" -C "$d/s" --strip-components=1; } ||
			die "could not unpack $file"
		touch "$d/ok"
	fi
	cp -a "$d/s" "$work/src"
	if ! { git -C "$work/src" init -q && git -C "$work/src" add -A -f &&
	       git -C "$work/src" -c user.name=rig -c user.email=rig@localhost commit -q \
		-m "libtraceevent ${LTE_DEB_VERSION#*:} (orig tarball of Debian's source package)"; }; then
		die "could not make a git repository of libtraceevent $LTE_DEB_VERSION"
	fi
}

if [ -n "${LTE_SRC:-}" ]; then
	src=$LTE_SRC base=$LTE_BASE label="upstream ${LTE_BASE:0:12} from $LTE_SRC"
	git -C "$src" cat-file -e "$base^{commit}" 2>/dev/null ||
		die "LTE_SRC=$src has no commit $base (libtraceevent 1.8.4)"
else
	debian_source
	src=$work/src base=$(git -C "$src" rev-parse HEAD) label="${LTE_DEB_VERSION#*:} (Debian orig tarball)"
fi
san="-g -O1 -fno-omit-frame-pointer -fsanitize=address"
# shellcheck disable=SC2086 # san is a list of options
gcc $san -Wall -I/usr/include/traceevent -o "$work/repro-debian" "$here/repro.c" -ltraceevent ||
	die "repro.c does not build against the installed libtraceevent"
for v in upstream patched; do
	git clone -q --no-checkout "$src" "$work/$v" || die "cannot clone $src"
	git -C "$work/$v" checkout -q "$base" || die "cannot check out $base from $src"
	if [ $v = patched ]; then
		git -C "$work/$v" -c user.name=rig -c user.email=rig@localhost am -q "$here"/0*.patch ||
			die "the patches do not apply to $label"
	fi
	info "building libtraceevent, $label ($v, ASan)"
	cpu_lock make -s -C "$work/$v" -j"$(nproc)" EXTRA_CFLAGS="$san" libtraceevent.a \
		>"$work/$v.log" 2>&1 || { tail -20 "$work/$v.log" >&2; die "libtraceevent ($v) build failed"; }
	a=$(find "$work/$v" -name libtraceevent.a | head -1)
	[ -n "$a" ] || die "no libtraceevent.a in $work/$v"
	# shellcheck disable=SC2086 # san is a list of options
	gcc $san -Wall -I"$work/$v/include/traceevent" -o "$work/repro-$v" "$here/repro.c" "$a" -ldl ||
		die "repro.c does not build against libtraceevent ($v)"
done
builds="debian upstream patched"

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
[ $fail = 0 ]
