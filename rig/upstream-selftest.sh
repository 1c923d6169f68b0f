#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make upstream-selftest: `rig/upstream.sh conf` passes on this checkout and
# fails, naming the problem, on copies of it where patches/series, the overlay
# and patches/upstream.conf disagree in each way a merge can make them.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/lib.sh"
stage upstream-selftest
cd "$RIG_TOP" || exit 1
fail=0
n=0

# The checkout's own state first.
if out=$(bash rig/upstream.sh conf 2>&1); then
	echo "ok: this checkout: $(grep -o 'upstream.conf: .*' <<<"$out")" >&2
else
	echo "$out" >&2
	echo "FAIL: patches/upstream.conf disagrees with patches/series or the overlay" >&2
	fail=1
fi

tmp=$(mktemp -d /tmp/upstream-selftest.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
# A scratch copy: rig/, patches/ and the overlay (conf mode reads nothing else).
copy() {
	rm -rf "$tmp/c"
	mkdir -p "$tmp/c"
	git ls-files -co --exclude-standard -- rig patches arch drivers kernel include lib mm tools Documentation |
		tar -cf - -T - | tar -xf - -C "$tmp/c"
	git -C "$tmp/c" init -q
	git -C "$tmp/c" add -A
}
# expect NAME PATTERN: conf fails in the copy and prints PATTERN.
expect() {
	local out
	n=$((n + 1))
	if out=$(bash "$tmp/c/rig/upstream.sh" conf 2>&1); then
		echo "FAIL: $1: the consistency check passed" >&2
		fail=1
	elif ! grep -qE "$2" <<<"$out"; then
		echo "$out" >&2
		echo "FAIL: $1: failed, but without /$2/" >&2
		fail=1
	else
		echo "ok: $1: $(grep -E "$2" <<<"$out" | head -1)" >&2
	fi
}
conf=$tmp/c/patches/upstream.conf
series=$tmp/c/patches/series
first=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' patches/series | head -1)
rigonly=$(awk '$1 == "rig-only" { print $2; exit }' patches/upstream.conf)

copy
cp "$tmp/c/patches/$first" "$tmp/c/patches/new-fix.patch"
echo new-fix.patch >>"$series"
expect "a new patch in patches/series, in no tree" "lists new-fix.patch, which upstream.conf neither assigns"

copy
sed -i "s/^$first\$/renamed-$first/" "$series"
mv "$tmp/c/patches/$first" "$tmp/c/patches/renamed-$first"
expect "a renamed patch (old name in upstream.conf)" "names $first, which patches/series does not list"

copy
sed -i "/^[a-z-]*[[:space:]]*[a-z-]*[[:space:]]*$first\$/d" "$conf"
expect "a patch whose tree line was dropped" "lists $first, which upstream.conf neither assigns"

copy
mkdir -p "$tmp/c/tools/perf/util"
echo '// SPDX-License-Identifier: GPL-2.0' >"$tmp/c/tools/perf/util/new-file.c"
git -C "$tmp/c" add -A
expect "a new overlay file, neither carried nor not-posted" "tools/perf/util/new-file.c is neither carried"

copy
mkdir -p "$tmp/c/drivers/hwtracing/coresight"
echo '// SPDX-License-Identifier: GPL-2.0' >"$tmp/c/drivers/hwtracing/coresight/new-file.c"
git -C "$tmp/c" add -A
expect "a new overlay file under drivers/" "drivers/hwtracing/coresight/new-file.c is neither carried"

copy
sed -i "s|^rig-only[[:space:]].*|patch perf-tools $rigonly|" "$conf"
expect "the rig-only patch posted (its section says rig-only)" "$rigonly under a rig-only comment, but upstream.conf posts it"

copy
sed -i 's/rig-only/test aid/' "$series"
expect "the rig-only marker dropped from patches/series" "rig-only in upstream.conf, but the comment above it"

copy
grep -m1 '^carry' patches/upstream.conf | awk '{ print "carry", $2, "tools/perf/util/swaux.c" }' >>"$conf"
expect "a rig-only file carried by a posted patch" "swaux.c is carried by .* but also not-posted"

copy
echo "carry $first tools/no-such-file.c" >>"$conf"
expect "a carry glob that matches nothing" "matches no overlay file"

copy
echo "not-posted tools/testing/trbe/main.c" >>"$conf"
expect "not-posted without a reason" "needs two fields or more"

copy
echo "patch no-such-tree $first" >>"$conf"
expect "a patch in two trees / an undeclared tree" "assigned twice|is not declared"

copy
rm "$tmp/c/patches/cover/$(awk '$1 == "tree" { print $2; exit }' patches/upstream.conf).txt"
expect "a tree without a cover letter" "has no cover letter"

peeled=$(awk '$1 == "peel" { print $3; exit }' patches/upstream.conf)
if [ -n "$peeled" ]; then
	copy
	# An overlay change inside what a peel takes out: it no longer applies.
	f=$(sed -n 's|^diff --git a/\(.*\) b/.*|\1|p' "patches/peel/$peeled" | head -1)
	line=$(awk '/^diff --git/ { n++ } n == 1 && /^-[^-]/ { print substr($0, 2); exit }' "patches/peel/$peeled")
	awk -v l="$line" '!done && $0 == l { $0 = $0 " /* changed */"; done = 1 } { print }' \
		"$tmp/c/$f" >"$tmp/c/$f.new" && mv "$tmp/c/$f.new" "$tmp/c/$f"
	git -C "$tmp/c" add -A
	expect "an overlay change a peel does not take (patches/peel/)" "does not apply .* regenerate it"

	copy
	echo "peel $first no-such.patch" >>"$conf"
	expect "a peel file that does not exist" "no patches/peel/no-such.patch"
fi

[ $fail = 0 ] || die "upstream-selftest failed"
info "upstream-selftest: the checkout agrees, and $n kinds of disagreement are caught"
