#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make selftests (build half): perf_swaux.ko against build/kbuild-$ARCH and the
# perf_events selftests (aux_set_output, mmap) from build/linux, into
# build/selftests-$ARCH/ (x86_64: run in place by the guest) and, for arm64,
# static binaries + the .ko copied into build/payload-arm64/selftests/.
. "$(dirname "$0")/../lib.sh"
arch=${1:-x86_64}
arch_check "$arch"
stage "selftests-build $arch"

O=$(kbuild_dir "$arch")
SRC=$TREE/tools/testing/selftests/perf_events
DST=$BUILD/selftests-$arch
[ -f "$O/Module.symvers" ] || die "no kernel build in ${O#"$RIG_TOP"/}: run 'make kernel ARCH=$arch' first"
[ -f "$SRC/aux_set_output.c" ] || die "no aux_set_output.c in ${SRC#"$RIG_TOP"/}: run 'make tree' first"

rm -rf "$DST"
mkdir -p "$DST/module"
cp "$SRC"/test_modules/*.[ch] "$SRC/test_modules/Makefile" "$DST/module/"
# shellcheck disable=SC2207
KARGS=($(kmake_args "$arch"))
info "building perf_swaux.ko against ${O#"$RIG_TOP"/} (log: out/selftests-$arch-build.log)"
mkdir -p "$OUT"
# One small file: a few seconds of CPU, below the cpu.lock threshold.
if ! make -C "$O" "${KARGS[@]}" CC="$(kcc "$arch")" M="$DST/module" W=1 modules \
	>"$OUT/selftests-$arch-build.log" 2>&1; then
	tail -30 "$OUT/selftests-$arch-build.log" >&2
	die "module build failed: see out/selftests-$arch-build.log"
fi
if grep -q 'warning:' "$OUT/selftests-$arch-build.log"; then
	grep 'warning:' "$OUT/selftests-$arch-build.log" >&2
	die "perf_swaux.ko builds with warnings: fix the module"
fi
cp "$DST/module/perf_swaux.ko" "$DST/"

case "$arch" in
x86_64) CC=(gcc) ;;
arm64) CC=(aarch64-linux-gnu-gcc -static) ;;
esac
for t in aux_set_output mmap; do
	"${CC[@]}" -Wall -O2 -I"$SRC/.." -Wl,-no-as-needed -o "$DST/$t" "$SRC/$t.c" -lpthread \
		2>"$DST/$t.cc.log" || { cat "$DST/$t.cc.log" >&2; die "building $t failed"; }
	if [ -s "$DST/$t.cc.log" ]; then
		cat "$DST/$t.cc.log" >&2
		die "$t builds with warnings"
	fi
done
cp "$RIG_TOP/rig/selftests/guest.sh" "$RIG_TOP/rig/guest/quiet-cpu.sh" "$DST/"

if [ "$arch" = arm64 ]; then
	P=$BUILD/payload-arm64/selftests
	rm -rf "$P"
	mkdir -p "$P"
	cp "$DST/perf_swaux.ko" "$DST/aux_set_output" "$DST/mmap" "$DST/guest.sh" \
		"$DST/quiet-cpu.sh" "$P/"
	info "payload: ${P#"$RIG_TOP"/}"
fi
info "built: $(cd "$DST" && echo perf_swaux.ko aux_set_output mmap)"
