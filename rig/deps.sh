#!/usr/bin/env bash
# make deps: install what the rig needs. Idempotent and quiet when nothing is missing.
. "$(dirname "$0")/lib.sh"
stage deps

PKGS=(
	build-essential gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	flex bison bc libssl-dev libelf-dev cpio kmod rsync xz-utils zstd file git
	ccache coccinelle dpkg-dev python3 pkg-config shellcheck
	qemu-system-x86 qemu-system-arm busybox-static
	libdw-dev libzstd-dev zlib1g-dev liblzma-dev libcap-dev libnuma-dev
	libslang2-dev libunwind-dev libtraceevent-dev libtracefs-dev python3-dev
	libperl-dev systemtap-sdt-dev libdebuginfod-dev libcapstone-dev libpfm4-dev
	trace-cmd valgrind kernelshark xvfb xauth xdotool imagemagick fonts-dejavu-core time device-tree-compiler ocaml-nox
	# scripts/spdxcheck.py, which checkpatch runs on new files (make upstream-check)
	python3-ply python3-git
	# make fuzz: AFL++ (afl-clang-fast, afl-fuzz) and its LLVM; llvm-symbolizer
	# for the sanitizer reports of the findings
	afl++ clang llvm
	# record_push_once.sh (make perf-ab) stops perf record under gdb
	gdb
	# make qemu: qemu-system-aarch64 with the TRBE/ETE model (rig/qemu)
	ninja-build python3-venv libglib2.0-dev libfdt-dev
	# perf CORESIGHT=1: OpenCSD decodes the emulated CPU's cs_etm trace
	libopencsd-dev
	# the arm64 guest's static perf links OpenCSD (C++)
	libstdc++-12-dev-arm64-cross
)

mkdir -p "$RIG_CACHE"
missing=()
for p in "${PKGS[@]}"; do
	st=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
	[ "$st" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	info "installing ${#missing[@]} packages: ${missing[*]}"
	apt-get -q update >/dev/null || die "apt-get update failed: check the network"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" \
		>"$RIG_CACHE/deps-install.log" 2>&1 ||
		{ tail -20 "$RIG_CACHE/deps-install.log" >&2; die "apt-get install failed (log: $RIG_CACHE/deps-install.log)"; }
fi

mkdir -p "$RIG_CACHE" "$CCACHE_DIR"
ccache -M 20G >/dev/null

# sparse: bookworm's 0.6.4 is too old for a 7.x tree (checker-valid.sh rejects it
# and C=1 is silently off). Build sid's source package once into the cache.
SPARSE=$RIG_CACHE/sparse/bin/sparse
if [ ! -x "$SPARSE" ]; then
	info "building sparse from Debian sid's source package"
	papt_setup src amd64 "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian sid main"
	w=$RIG_CACHE/sparse/src
	rm -rf "$w" && mkdir -p "$w"
	# shellcheck disable=SC2046
	(cd "$w" && apt-get $(papt_opts src) -q source --download-only sparse >/dev/null) ||
		die "could not fetch the sparse source package"
	(cd "$w" && dpkg-source -q -x --no-check ./*.dsc s >/dev/null) || die "could not unpack sparse"
	make -s -C "$w/s" -j2 CC=gcc sparse >/dev/null || die "sparse build failed in $w/s"
	mkdir -p "$RIG_CACHE/sparse/bin" && cp "$w/s/sparse" "$SPARSE"
fi
"$SPARSE" --version >/dev/null 2>&1 || die "$SPARSE does not run"

# busybox-static for arm64 (no dpkg architecture is added).
BB=$RIG_CACHE/busybox-arm64/busybox
if [ ! -x "$BB" ]; then
	info "fetching busybox-static:arm64"
	papt_setup arm64 arm64 "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main"
	w=$RIG_CACHE/busybox-arm64
	rm -rf "$w/x" && mkdir -p "$w/x"
	# shellcheck disable=SC2046
	(cd "$w" && rm -f ./*.deb && apt-get $(papt_opts arm64) -o APT::Architectures::=arm64 -q download busybox-static:arm64 >/dev/null) ||
		die "could not download busybox-static:arm64"
	dpkg-deb -x "$w"/busybox-static_*_arm64.deb "$w/x"
	cp "$w/x/bin/busybox" "$BB"
fi
file "$BB" | grep -q 'ARM aarch64' || die "$BB is not an arm64 binary"

# For the arm64 guest on the emulated Armv9 CPU (rig/armv9/run.sh runs there):
# bash-static (bin/bash-static) and OpenCSD's static libraries for the
# guest's perf (usr/include, usr/lib/aarch64-linux-gnu), unpacked into
# $RIG_CACHE/arm64-debs/x.
A64=$RIG_CACHE/arm64-debs
A64_PKGS=(bash-static libopencsd-dev)
if [ ! -f "$A64/x/.rig-done" ] || [ "$(cat "$A64/x/.rig-done")" != "${A64_PKGS[*]}" ]; then
	info "fetching ${A64_PKGS[*]} for arm64"
	papt_setup arm64 arm64 "deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian bookworm main"
	rm -rf "$A64" && mkdir -p "$A64/x"
	# shellcheck disable=SC2046
	(cd "$A64" && apt-get $(papt_opts arm64) -o APT::Architectures::=arm64 -q download \
		$(printf '%s:arm64 ' "${A64_PKGS[@]}") >/dev/null) ||
		die "could not download ${A64_PKGS[*]} for arm64"
	for d in "$A64"/*_arm64.deb; do dpkg-deb -x "$d" "$A64/x"; done
	echo "${A64_PKGS[*]}" >"$A64/x/.rig-done"
fi
file -L "$A64/x/bin/bash-static" | grep -q 'ARM aarch64.*statically linked' ||
	die "$A64/x/bin/bash-static is not a static arm64 binary"
[ -f "$A64/x/usr/lib/aarch64-linux-gnu/libopencsd_c_api.a" ] || die "no arm64 libopencsd_c_api.a in $A64/x"
