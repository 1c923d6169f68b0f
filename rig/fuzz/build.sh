#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make fuzz (build step): perf of the series tree, instrumented for AFL++ and
# built with ASan and UBSan, into build/perf-fuzz (or <O dir>).
#
#   build.sh [<O dir>]
#
# build/linux is switched to the series (rig/tree.sh, BASE=0) and held with
# the tree lock throughout, like rig/perf/build.sh; the compile runs under the
# CPU lock. Compiler: afl-clang-fast (Debian's afl++, LLVM 14 PCGUARD edge
# coverage) through ccache; -fsanitize=address,undefined
# -fno-sanitize-recover=all, so any UB report aborts and AFL sees a crash
# (alignment excepted, see SAN below).
#
# Kept: libzstd (PERF_RECORD_COMPRESSED2), libtraceevent (the tracing data
# feature and --to-trace-dat), libelf/libdw (perf needs libelf; build ids).
# Left out, as the fuzzed commands never use them and each costs build time
# or start-up time on every exec: python and perl scripting (NO_LIBPYTHON,
# libperl is opt-in), the pmu-events tables (NO_JEVENTS: a large generated
# C file, and perf's start-up walks them), libbpf and BPF skeletons, the TUI
# and GTK (NO_SLANG, no GTK2: report must never open a browser), debuginfod
# (it would go to the network for build ids), capstone, libpfm4, libnuma,
# libLLVM, babeltrace2, SDT markers, JVMTI, Rust, shellcheck of perf's tests.
# WERROR=0: clang warns where gcc does not, and this binary is not shipped.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
odir=${1:-$BUILD/perf-fuzz}
stage "perf-fuzz -> ${odir#"$RIG_TOP"/}"

command -v afl-clang-fast >/dev/null || die "afl-clang-fast not found: run 'make deps' (Debian's afl++)"

tree_lock exclusive
BASE=0 bash "$RIG_TOP/rig/tree.sh"
src=$TREE
[ -d "$src/tools/perf" ] || die "$src/tools/perf not found; run 'make tree' first"

# -fno-sanitize=alignment: perf reads each event where it lies in the file,
# and PERF_RECORD_COMPRESSED records of older perf have sizes that are not
# multiples of 8, so events at any alignment are valid input (x86 loads
# them in hardware); rig/fuzz/known-findings.txt has the reports of builds
# made before.
SAN="-fsanitize=address,undefined -fno-sanitize=alignment -fno-sanitize-recover=all"
mkdir -p "$odir"
info "building $(git -C "$src" describe --always --tags 2>/dev/null || echo "$src") tools/perf with afl-clang-fast + ASan/UBSan into ${odir#"$RIG_TOP"/} (log: ${odir#"$RIG_TOP"/}/build.log)"
t0=$(date +%s)
# perf's Makefile.config replaces CC with $(CLANG) when CC is clang: set both.
if ! AFL_QUIET=1 cpu_lock /usr/bin/time -f 'rig: perf-fuzz compile: %e s wall, %U s user, %S s sys' \
	make -C "$src/tools/perf" O="$odir" \
	CC="ccache afl-clang-fast" CLANG="ccache afl-clang-fast" HOSTCC=gcc \
	EXTRA_CFLAGS="$SAN -fno-omit-frame-pointer -g" LDFLAGS="$SAN" \
	WERROR=0 NO_RUST=1 NO_SHELLCHECK=1 BUILD_BPF_SKEL=0 NO_LIBBPF=1 \
	NO_LIBPYTHON=1 NO_JEVENTS=1 NO_SLANG=1 NO_LIBDEBUGINFOD=1 \
	NO_CAPSTONE=1 NO_LIBPFM4=1 NO_LIBNUMA=1 NO_LIBLLVM=1 \
	NO_BABELTRACE2=1 NO_SDT=1 NO_JVMTI=1 \
	-j"$(nproc)" >"$odir/build.log" 2>&1; then
	tail -40 "$odir/build.log" >&2
	die "perf-fuzz build failed, full log in ${odir#"$RIG_TOP"/}/build.log"
fi
info "perf-fuzz built in $(($(date +%s) - t0)) s with the CPU lock wait;" \
	"$(grep -m1 '^rig: perf-fuzz compile:' "$odir/build.log" | sed 's/^rig: //')"

perf=$odir/perf
opts=$(ASAN_OPTIONS=detect_leaks=0 "$perf" version --build-options) ||
	die "$perf does not run"
printf '%s\n' "$opts"
missing=
for f in libtraceevent zstd libelf; do
	grep -Eq "^ +$f: \[ on  \]" <<<"$opts" || missing="$missing $f"
done
[ -z "$missing" ] || die "perf-fuzz: required feature(s) off:$missing (see $odir/build.log)"
syms=$(nm "$perf")
grep -q ' __asan_init$' <<<"$syms" || die "$perf is not built with ASan"
grep -q ' __ubsan_handle_' <<<"$syms" || die "$perf is not built with UBSan"
grep -q ' __afl_area_ptr$' <<<"$syms" || die "$perf is not AFL-instrumented"
# Every perf object, not only the AFL runtime: perf.o must update the edge
# map (AFL's PCGUARD pass writes to __afl_area_ptr inline).
grep -q ' U __afl_area_ptr$' <<<"$(nm "$odir/perf.o")" ||
	die "$odir/perf.o is not instrumented (CC or CLANG not afl-clang-fast?)"
info "$perf OK (AFL++ instrumentation, ASan, UBSan)"
