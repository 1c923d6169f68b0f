#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make selftests (build half): the perf_events kselftests of build/linux built
# by their own Makefile (make -C tools/testing/selftests TARGETS=perf_events,
# test_modules/perf_swaux.ko against build/kbuild-$ARCH; x86_64 in the tree,
# arm64 static into out/kselftest-arm64 and installed into the payload);
# copies of aux_set_output, mmap and perf_swaux.ko, guest.sh and ksft.sh (how
# the guest runs the kselftest form) into build/selftests-$ARCH/ and, for
# arm64, build/payload-arm64/selftests/.
. "$(dirname "$0")/../lib.sh"
arch=${1:-x86_64}
arch_check "$arch"
stage "selftests-build $arch"

O=$(kbuild_dir "$arch")
SRC=$TREE/tools/testing/selftests/perf_events
DST=$BUILD/selftests-$arch
[ -f "$O/Module.symvers" ] || die "no kernel build in ${O#"$RIG_TOP"/}: run 'make kernel ARCH=$arch' first"
[ -f "$SRC/aux_set_output.c" ] || die "no aux_set_output.c in ${SRC#"$RIG_TOP"/}: run 'make tree' first"

# BASE=1: the pristine tree has no kselftest wiring for aux_set_output and
# its module (the series' selftests build patch): apply that patch's test
# directory changes alone, so that the kernel under test is the only
# difference (the next `make tree` restores the tree).
if ! grep -q aux_set_output "$SRC/Makefile"; then
	git -C "$TREE" apply "$RIG_TOP/patches/selftests-perf_events-build-aux_set_output.patch" ||
		die "cannot apply the selftests build patch to the base tree"
	info "base tree: applied patches/selftests-perf_events-build-aux_set_output.patch (tests only)"
fi

# The directory's settings must cover every test's declared timeout:
# kselftest's runner kills the whole program at the settings timeout.
declared=$(awk -f "$RIG_TOP/rig/selftests/timeouts.awk" "$SRC/aux_set_output.c")
allowed=$(sed -n 's/^timeout=//p' "$SRC/settings")
[ "${declared:-0}" -gt 0 ] && [ "${allowed:-0}" -ge "$declared" ] ||
	die "aux_set_output declares ${declared:-?} s of test timeouts, perf_events/settings allows ${allowed:-?} s"
info "aux_set_output: declared timeouts ${declared} s, settings timeout ${allowed} s"

rm -rf "$DST"
mkdir -p "$DST" "$OUT"
# The kselftest's own build (tools/testing/selftests/Makefile, lib.mk), the
# module (TEST_GEN_MODS_DIR test_modules/) against the kernel build in KDIR.
#   x86_64: in the source tree, as `make -C tools/testing/selftests
#           TARGETS=perf_events run_tests` builds; the guest (the host's root,
#           read-only) runs that very command: everything is up to date, and
#           aux_set_output finds test_modules/perf_swaux.ko next to it.
#   arm64:  O=out/kselftest-arm64, static, `make install` into the payload;
#           the busybox guest (no make) runs run_kselftest.sh -c perf_events.
S=$TREE/tools/testing/selftests
KS=$OUT/kselftest-$arch
P=$BUILD/payload-arm64/selftests
rm -rf "$KS" "$P"
# Another arch's or kernel's programs and module objects must never look
# up to date: start from the sources.
git -C "$TREE" clean -q -fdx -- tools/testing/selftests/perf_events
# shellcheck disable=SC2207
KARGS=($(kmake_args "$arch"))
KSFT=(make -C "$S" TARGETS=perf_events KDIR="$O" W=1 USERCFLAGS=-Werror "${KARGS[@]}")
case "$arch" in
x86_64)
	goal=(all)
	K=$S/perf_events ;;
arm64)
	KSFT+=(O="$KS" USERLDFLAGS=-static)
	goal=(install INSTALL_PATH="$P/kselftest")
	K=$KS/kselftest/perf_events ;;
esac
log=$OUT/selftests-$arch-build.log
info "make -C tools/testing/selftests TARGETS=perf_events KDIR=${O#"$RIG_TOP"/} ${goal[0]} (log: ${log#"$RIG_TOP"/})"
# Five small programs and one module: seconds of CPU, no cpu.lock.
if ! "${KSFT[@]}" "${goal[@]}" >"$log" 2>&1; then
	tail -30 "$log" >&2
	die "kselftest build failed: see ${log#"$RIG_TOP"/}"
fi
if grep -q 'warning:' "$log"; then
	grep 'warning:' "$log" >&2
	die "perf_events selftests or perf_swaux.ko build with warnings"
fi
M=$S/perf_events/test_modules
[ -f "$M/perf_swaux.ko" ] || die "no perf_swaux.ko after the kselftest build (KDIR=$O)"
cp "$M/perf_swaux.ko" "$K/aux_set_output" "$K/mmap" "$DST/"
cp "$RIG_TOP/rig/selftests/guest.sh" "$RIG_TOP/rig/guest/quiet-cpu.sh" "$DST/"
# How the guest runs the perf_events kselftests in their upstream form, and
# where aux_set_output is for RUNS > 1.
case "$arch" in
x86_64)
	printf 'exec make -C %s TARGETS=perf_events run_tests\n' "$S" >"$DST/ksft.sh"
	echo "$K" >"$DST/ksft.dir" ;;
arm64)
	printf 'cd /selftests/kselftest && exec ./run_kselftest.sh -c perf_events\n' >"$DST/ksft.sh"
	echo /selftests/kselftest/perf_events >"$DST/ksft.dir" ;;
esac

if [ "$arch" = arm64 ]; then
	mkdir -p "$P"
	cp "$DST/perf_swaux.ko" "$DST/aux_set_output" "$DST/mmap" "$DST/guest.sh" \
		"$DST/quiet-cpu.sh" "$DST/ksft.sh" "$DST/ksft.dir" "$P/"
	info "payload: ${P#"$RIG_TOP"/} (kselftest install in ${P#"$RIG_TOP"/}/kselftest)"
fi
info "built: $(cd "$DST" && echo perf_swaux.ko aux_set_output mmap)"
