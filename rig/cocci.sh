#!/usr/bin/env bash
# make cocci: coccicheck (report mode) on the kernel C files the series
# touches, every semantic patch of scripts/coccinelle, base vs series: a new
# report fails. Run outside `make check`: about 10 s per script and file here.
. "$(dirname "$0")/lib.sh"
stage cocci
cd "$RIG_TOP" || exit 1
[ -d "$TREE/.git" ] || die "no $TREE: run 'make tree' first"
tree_lock exclusive
bash rig/tree.sh
mapfile -t KFILES < <(git -C "$TREE" diff --name-only overlay series -- . ':!tools' ':!Documentation' ':!scripts' | grep -E '\.c$' || true)
[ ${#KFILES[@]} -gt 0 ] || { info "the series touches no kernel C file"; exit 0; }
run() { # run base|series
	local L=$BUILD/cocci-$1.log
	(cd "$TREE" && grep -l '^virtual report' -r scripts/coccinelle --include='*.cocci' | sort |
		while read -r c; do for f in "${KFILES[@]}"; do printf '%s\n%s\n' "$c" "$f"; done; done |
		cpu_lock xargs -n2 -P2 sh -c 'spatch -D report --no-show-diff --very-quiet --no-includes --include-headers --cocci-file "$0" "$1" 2>&1 | sed "s|^|$0: |"') >"$L" || true
	grep -v ': *$' "$L" | sed -E 's/:[0-9]+(:[0-9]+(-[0-9]+)?)?:/:/' | sort -u >"$L.norm"
	info "$1: $(wc -l <"$L.norm") coccinelle report lines on ${KFILES[*]}"
}
BASE=1 bash rig/tree.sh
run base
bash rig/tree.sh
run series
comm -13 "$BUILD/cocci-base.log.norm" "$BUILD/cocci-series.log.norm" >"$BUILD/cocci-new.txt"
if [ -s "$BUILD/cocci-new.txt" ]; then
	cat "$BUILD/cocci-new.txt" >&2
	die "coccicheck: new reports on the files the series touches"
fi
info "coccicheck: no new report on ${KFILES[*]}"
