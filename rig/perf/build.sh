#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Build perf from <kernel tree>/tools/perf into <O dir> under the CPU lock,
# with ccache, and insist on the features the perf -z work needs.
set -euo pipefail

src=${1:?usage: build.sh <kernel tree> <O dir>}
odir=${2:?usage: build.sh <kernel tree> <O dir>}
lock=/var/cache/trbe-rig/cpu.lock
start=$(date +%s)

if [ ! -d "$src/tools/perf" ]; then
	echo "perf: $src/tools/perf not found; run 'make tree' first" >&2
	exit 1
fi
mkdir -p "$odir"

echo "perf: building $src/tools/perf -> $odir (waiting for $lock)"
flock "$lock" env CCACHE_DIR=/var/cache/trbe-rig/ccache \
	make -C "$src/tools/perf" O="$odir" NO_RUST=1 CC="ccache gcc" \
	-j"$(nproc)" >"$odir/build.log" 2>&1 || {
	tail -40 "$odir/build.log" >&2
	echo "perf: build failed, full log in $odir/build.log" >&2
	exit 1
}

# The feature summary is only printed on the first build of an O dir, so
# ask the binary instead.
echo "perf: feature summary ($odir/perf version --build-options):"
"$odir/perf" version --build-options
missing=
for f in libtraceevent zstd libelf dwarf aio; do
	if ! "$odir/perf" version --build-options |
	     grep -Eq "^ +$f: \[ on  \]"; then
		missing="$missing $f"
	fi
done
if [ -n "$missing" ]; then
	echo "perf: required feature(s) off:$missing; install the -dev packages" \
	     "listed in /work/shared/notes/machine-facts.md and rebuild" >&2
	exit 1
fi
echo "perf: $odir/perf OK ($(( $(date +%s) - start )) s)"
