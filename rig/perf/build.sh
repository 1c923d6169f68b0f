#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make perf [BASE=1]: build perf from a kernel tree into an O dir under the CPU
# lock, with ccache, and insist on the features the perf -z work needs.
#
#   build.sh <O dir>                 switch build/linux with tree.sh (BASE from
#                                    the environment) and build from it; the
#                                    tree lock is held exclusively throughout,
#                                    so nobody flips the tree under the build
#   build.sh <O dir> <kernel tree>   build from that tree (no tree switch)
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
odir=${1:?usage: build.sh <O dir> [kernel tree]}
src=${2:-}
stage "perf -> ${odir#"$RIG_TOP"/}"

if [ -z "$src" ]; then
	src=$TREE
	tree_lock exclusive
	bash "$RIG_TOP/rig/tree.sh"
fi
[ -d "$src/tools/perf" ] || die "$src/tools/perf not found; run 'make tree' first"
mkdir -p "$odir"

info "building $(git -C "$src" describe --always --tags 2>/dev/null || echo "$src") tools/perf (log: ${odir#"$RIG_TOP"/}/build.log)"
if ! cpu_lock make -C "$src/tools/perf" O="$odir" NO_RUST=1 CC="ccache gcc" \
	-j"$(nproc)" >"$odir/build.log" 2>&1; then
	tail -40 "$odir/build.log" >&2
	die "perf build failed, full log in ${odir#"$RIG_TOP"/}/build.log"
fi

# The feature summary is only printed on the first build of an O dir, so
# ask the binary instead.
echo "perf: feature summary ($odir/perf version --build-options):"
"$odir/perf" version --build-options
missing=
for f in libtraceevent zstd libelf dwarf aio; do
	if ! "$odir/perf" version --build-options | grep -Eq "^ +$f: \[ on  \]"; then
		missing="$missing $f"
	fi
done
[ -z "$missing" ] || die "perf: required feature(s) off:$missing; run 'make deps' (see /work/shared/notes/machine-facts.md) and rebuild"
info "$odir/perf OK"
