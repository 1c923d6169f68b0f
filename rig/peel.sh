#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The peels of patches/upstream.conf ('peel PATCH FILE', see rig/upstream.sh)
# as commits of a scratch git repository, to edit and write back:
#
#   rig/peel.sh init DIR    DIR: a git repository of the carried overlay
#                           files as the overlay has them (branch
#                           "overlay"), then one commit per peel file in the
#                           order upstream.sh applies them (the last
#                           patch's first): the committed peels rebased
#                           from the committed overlay onto the overlay as
#                           it is, so that a peel an overlay change breaks
#                           stops there with its conflicts
#   rig/peel.sh export DIR  the peel commits of DIR back into patches/peel/
#                           (git format-patch), under the names upstream.conf
#                           gives them
#
# After an overlay change a peel does not take, 'upstream.sh conf' fails:
# init, resolve the conflicts the rebase leaves (edit, git add, git rebase
# --continue), then export.
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
	G() { git -C "$dir" -c user.name=rig -c user.email=rig@localhost "$@"; }
	mapfile -t files < <(cd "$RIG_TOP" && awk '$1 == "carry" { for (i = 3; i <= NF; i++) print $i }' "$CONF" |
		while read -r g; do
			# shellcheck disable=SC2086 # a glob
			git ls-files -- $g
		done | sort -u)
	# The overlay and the peels as committed (where the peels apply), then
	# the peels rebased onto the overlay as it is: git merges what changed.
	for f in "${files[@]}"; do
		mkdir -p "$dir/$(dirname "$f")"
		git -C "$RIG_TOP" show "HEAD:$f" >"$dir/$f" 2>/dev/null || cp -p "$RIG_TOP/$f" "$dir/$f"
	done
	G add -A
	G commit -q -m "overlay (committed)"
	G tag committed
	for f in $(peels); do
		git -C "$RIG_TOP" show "HEAD:patches/peel/$f" >"$dir/.peel" 2>/dev/null ||
			cp "$RIG_TOP/patches/peel/$f" "$dir/.peel"
		G am -q "$dir/.peel" || { echo "peel: the committed $f does not apply to the committed overlay" >&2; exit 1; }
	done
	rm -f "$dir/.peel"
	G branch -q peels
	G checkout -q -b overlay committed
	for f in "${files[@]}"; do cp -p "$RIG_TOP/$f" "$dir/$f"; done
	G add -A
	G commit -q --allow-empty -m overlay
	G checkout -q peels
	if ! G rebase -q --onto overlay committed; then
		echo "peel: a peel conflicts with the overlay's changes: resolve in $dir (git status; edit, git add, git rebase --continue), then export" >&2
		exit 1
	fi
	echo "peel: $dir: the overlay and $(git -C "$dir" rev-list --count overlay..HEAD) peels"
	;;
export)
	mapfile -t names < <(peels)
	mapfile -t commits < <(git -C "$dir" rev-list --reverse overlay..HEAD)
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
