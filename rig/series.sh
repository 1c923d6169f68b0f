# shellcheck shell=bash
# Functions shared by tree.sh, lint.sh and the rig self-tests.

# overlay_guard TREE FILE...: fail if any overlay FILE exists in the upstream
# base of TREE (tag base) or already in its work tree. Upstream files change
# only through patches/.
overlay_guard() {
	local tree=$1 f rc=0
	shift
	for f in "$@"; do
		if git -C "$tree" cat-file -e "refs/tags/base:$f" 2>/dev/null || [ -e "$tree/$f" ]; then
			echo "rig: error: overlay file $f exists in the upstream tree: change it with a patch in patches/, never by copying" >&2
			rc=1
		fi
	done
	return $rc
}

# series_apply_check TREE REV PATCH...: apply the patches in order to REV in a
# scratch index (the work tree is not touched); git apply never fuzzes and
# -C3 demands all three lines of context. Prints the first failure.
series_apply_check() {
	local tree=$1 rev=$2 idx p rc=0
	shift 2
	idx=$(mktemp)
	GIT_INDEX_FILE=$idx git -C "$tree" read-tree "$rev"
	for p in "$@"; do
		if ! GIT_INDEX_FILE=$idx git -C "$tree" apply --cached -C3 "$p" 2>"$idx.err"; then
			echo "rig: $(basename "$p") does not apply with fuzz 0: $(head -2 "$idx.err" | tr '\n' ' ')" >&2
			rc=1
			break
		fi
	done
	rm -f "$idx" "$idx.err"
	return $rc
}
