#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The peels of patches/upstream.conf ('peel PATCH FILE', see rig/upstream.sh)
# as commits of a scratch git repository, to edit and write back:
#
#   rig/peel.sh init DIR    DIR: a git repository of the carried overlay
#                           files as the overlay has them (commit "overlay"),
#                           then one commit per peel file in the order
#                           upstream.sh applies them (the last patch's
#                           first), with git am --3way: a peel that no
#                           longer applies stops there with its conflicts
#   rig/peel.sh export DIR  the peel commits of DIR back into patches/peel/
#                           (git format-patch), under the names upstream.conf
#                           gives them
#
# After an overlay change a peel does not take, 'upstream.sh conf' fails:
# init, resolve the conflicts git am --3way leaves (edit, git add, git am
# --continue), git am --3way the peels after it by hand, then export.
set -euo pipefail
RIG_TOP=$(cd "$(dirname "$0")/.." && pwd)
CONF=$RIG_TOP/patches/upstream.conf
cmd=${1:-}
dir=${2:-}
[ -n "$dir" ] || { echo "usage: rig/peel.sh init|export DIR" >&2; exit 2; }

# The peel files, the last patch's first (the order upstream.sh applies).
peels() {
	local p
	awk '$1 == "peel" { for (i = 3; i <= NF; i++) print $2, $i }' "$CONF" |
		while read -r p f; do
			n=$(grep -nxF "$p" <(sed -e 's/#.*//' -e 's/[[:space:]]*$//' "$RIG_TOP/patches/series") | cut -d: -f1)
			echo "$n $f"
		done | sort -rn -s -k1,1 | cut -d' ' -f2
}

case "$cmd" in
init)
	[ ! -e "$dir" ] || { echo "peel: $dir exists" >&2; exit 1; }
	mkdir -p "$dir"
	git -C "$dir" init -q
	(cd "$RIG_TOP" && awk '$1 == "carry" { for (i = 3; i <= NF; i++) print $i }' "$CONF" |
		while read -r g; do
			# shellcheck disable=SC2086 # a glob
			git ls-files -- $g
		done | sort -u | tar -cf - -T -) | tar -xf - -C "$dir"
	git -C "$dir" add -A
	git -C "$dir" -c user.name=rig -c user.email=rig@localhost commit -q -m overlay
	for f in $(peels); do
		echo "peel: $f"
		git -C "$dir" -c user.name=rig -c user.email=rig@localhost am -q --3way "$RIG_TOP/patches/peel/$f" ||
			{ echo "peel: $f does not apply: resolve in $dir (git am --continue), then the rest by hand" >&2; exit 1; }
	done
	echo "peel: $dir: $(git -C "$dir" rev-list --count HEAD) commits (overlay + peels)"
	;;
export)
	mapfile -t names < <(peels)
	mapfile -t commits < <(git -C "$dir" rev-list --reverse HEAD | tail -n +2)
	[ ${#names[@]} = ${#commits[@]} ] ||
		{ echo "peel: $dir has ${#commits[@]} peel commits, upstream.conf ${#names[@]} peels" >&2; exit 1; }
	for i in "${!names[@]}"; do
		git -C "$dir" format-patch -q -1 -N --no-signature --zero-commit --stdout "${commits[$i]}" \
			>"$RIG_TOP/patches/peel/${names[$i]}"
		echo "peel: patches/peel/${names[$i]}"
	done
	;;
*)
	echo "usage: rig/peel.sh init|export DIR" >&2
	exit 2 ;;
esac
