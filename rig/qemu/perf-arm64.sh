#!/usr/bin/env bash
# rig/qemu/perf-arm64.sh: perf for the arm64 guest, cross-built from the
# series tree (build/linux, switched to the series) into build/perf-arm64:
# static, with Debian's arm64 OpenCSD (make deps unpacks it into
# $RIG_CACHE/arm64-debs) to decode cs_etm in the guest, every other library
# off. Used by make cs-etm and make run ARCH=arm64; prints nothing on success.
. "$(dirname "$0")/../lib.sh"
cd "$RIG_TOP" || exit 1
PA=$BUILD/perf-arm64
A64=$RIG_CACHE/arm64-debs/x
{ [ -f "$A64/usr/lib/aarch64-linux-gnu/libopencsd_c_api.a" ] && [ -x "$A64/bin/bash-static" ]; } ||
	die "no arm64 OpenCSD or bash-static in $A64: run 'make deps'"
# The series' perf whatever the tree holds now (make run BASE=1 may have
# left the base there): switch it under the exclusive lock, as make perf does.
tree_lock exclusive
BASE=0 bash rig/tree.sh >"$BUILD/perf-arm64-tree.log" 2>&1 ||
	{ cat "$BUILD/perf-arm64-tree.log" >&2; die "make tree failed"; }
[ -d "$TREE/tools/perf" ] || die "no $TREE: run 'make tree' first"
mkdir -p "$PA"
# The same tree, cross compiler and OpenCSD give the same binary (bin_key).
key=$(bin_key "$TREE" "$(aarch64-linux-gnu-gcc --version | head -1)" \
	"$(cat "$A64"/usr/lib/aarch64-linux-gnu/libopencsd*.a | sha256sum)")
if ! bin_get perf-arm64 "$key" "$PA/perf"; then
	info "cross-building a static perf for the arm64 guest (log: ${PA#"$RIG_TOP"/}/build.log)"
	cpu_lock make -C "$TREE/tools/perf" O="$PA" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		CC="ccache aarch64-linux-gnu-gcc" LDFLAGS=-static WERROR=0 NO_RUST=1 NO_SHELLCHECK=1 \
		CORESIGHT=1 CSINCLUDES="$A64/usr/include" CSLIBS="$A64/usr/lib/aarch64-linux-gnu" \
		NO_LIBELF=1 NO_LIBTRACEEVENT=1 NO_LIBPYTHON=1 NO_LIBPERL=1 NO_JVMTI=1 NO_LIBBPF=1 \
		NO_BPF_SKEL=1 NO_LIBDW=1 NO_SLANG=1 NO_GTK2=1 NO_LIBUNWIND=1 NO_LIBNUMA=1 NO_LIBCAP=1 \
		NO_LIBZSTD=1 NO_LZMA=1 NO_LIBCRYPTO=1 NO_LIBPFM4=1 NO_LIBBABELTRACE=1 NO_CAPSTONE=1 \
		NO_LIBLLVM=1 NO_LIBDEBUGINFOD=1 NO_SDT=1 -j"$(nproc)" perf >"$PA/build.log" 2>&1 ||
		{ grep -E 'error' "$PA/build.log" | head -20 >&2; die "perf cross-build failed: ${PA#"$RIG_TOP"/}/build.log"; }
	bin_put perf-arm64 "$key" "$PA/perf"
fi
file "$PA/perf" | grep -q 'ARM aarch64.*statically linked' || die "$PA/perf is not a static arm64 binary"
grep -q 'cs_etm_decoder' "$PA/build.log" "$PA/perf" 2>/dev/null ||
	die "$PA/perf was built without OpenCSD (no cs_etm decoder): see ${PA#"$RIG_TOP"/}/build.log"
