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
# With BASE=1 and PERF_SHARE_ODIR=<series O dir> (make perf BASE=1), the base
# is built in the series' O dir and only the binary goes to <O dir>; the
# series is rebuilt there afterwards.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
odir=${1:?usage: build.sh <O dir> [kernel tree]}
src=${2:-}
stage "perf -> ${odir#"$RIG_TOP"/}"

# build_in O: build perf from $src into O. Left out, as nothing here uses
# them and ccache cannot speed them up: NO_SHELLCHECK=1 (perf's build would
# run shellcheck on each of its ~150 shell tests, about two minutes on two
# cores; make lint runs shellcheck on the tests this project adds),
# BUILD_BPF_SKEL=0 (clang-built BPF skeletons), NO_LIBPYTHON=1 (the python
# extension and perf script's python engine). CORESIGHT=1: OpenCSD decodes
# the cs_etm recordings of the emulated Armv9 CPU (rig/qemu).
# A binary of the same tree comes from the cache (bin_key in rig/lib.sh).
build_in() {
	local o=$1 key
	key=$(bin_key "$src" "$(perf_libs)")
	bin_get perf "$key" "$o/perf" && return 0
	mkdir -p "$o"
	info "building $(git -C "$src" describe --always --tags 2>/dev/null || echo "$src") tools/perf into ${o#"$RIG_TOP"/} (log: ${o#"$RIG_TOP"/}/build.log)"
	# The host's perf: not the ARCH of `make run ARCH=arm64`, which a
	# recipe's make passes down in MAKEFLAGS (the -j is explicit).
	if ! cpu_lock env -u ARCH -u MAKEFLAGS -u MAKELEVEL make -C "$src/tools/perf" O="$o" NO_RUST=1 NO_SHELLCHECK=1 BUILD_BPF_SKEL=0 \
		NO_LIBPYTHON=1 CORESIGHT=1 CC="ccache gcc" \
		-j"$(nproc)" >"$o/build.log" 2>&1; then
		tail -40 "$o/build.log" >&2
		die "perf build failed, full log in ${o#"$RIG_TOP"/}/build.log"
	fi
	bin_put perf "$key" "$o/perf"
}

share=${PERF_SHARE_ODIR:-}
switched=0

# The base perf is built from the pristine tree: the `overlay` tag adds
# this project's files, which no pristine Build file names. A binary
# built once is kept in the cache (bin_get) under a key of the base tree,
# the toolchain and this script; `make perf BASE=1` takes it from there
# without switching build/linux to the base (make perf-ab in a fresh clone:
# no base build, no series rebuild after it).
base_key=
cached=0
if [ -z "$src" ] && [ -n "$share" ] && [ "${BASE:-0}" = 1 ] &&
   [ "${RIG_BIN_CACHE:-1}" != 0 ] && [ -d "$TREE/.git" ]; then
	base_key=$({ git -C "$TREE" rev-parse 'base^{tree}' && perf_libs &&
		     sha256sum <"$0"; } | sha256sum | cut -c1-16)
fi
if bin_get perf-base "$base_key" "$odir/perf"; then
	cached=1
elif [ -z "$src" ]; then
	src=$TREE
	tree_lock exclusive
	bash "$RIG_TOP/rig/tree.sh"
	switched=1
fi
if [ $cached = 1 ]; then
	:
elif [ ! -d "$src/tools/perf" ]; then
	die "$src/tools/perf not found; run 'make tree' first"
elif [ -n "$share" ] && [ "${BASE:-0}" = 1 ] && [ $switched = 1 ]; then
	# The base is built in the series' O dir (perf's objects in another O
	# dir miss ccache: the generated headers' paths differ), the binary is
	# copied out, and the series is rebuilt there: only the files the
	# series changes and their dependents are compiled each way.
	build_in "$share"
	mkdir -p "$odir"
	cp "$share/perf" "$odir/perf"
	bin_put perf-base "$base_key" "$share/perf"
	# Never leave the base binary where the series' is expected: if the
	# rebuild below fails, build/perf/perf is missing and gets rebuilt.
	rm -f "$share/perf"
	BASE=0 bash "$RIG_TOP/rig/tree.sh"
	build_in "$share"
else
	build_in "$odir"
fi

# The feature summary is only printed on the first build of an O dir, so
# ask the binary instead.
echo "perf: feature summary ($odir/perf version --build-options):"
"$odir/perf" version --build-options
missing=
for f in libtraceevent zstd libelf dwarf aio libopencsd; do
	if ! "$odir/perf" version --build-options | grep -Eq "^ +$f: \[ on  \]"; then
		missing="$missing $f"
	fi
done
[ -z "$missing" ] || die "perf: required feature(s) off:$missing; run 'make deps' (see /work/shared/notes/machine-facts.md) and rebuild"
info "$odir/perf OK"
