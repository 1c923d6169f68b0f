#!/usr/bin/env bash
# make qemu: qemu-system-aarch64 with the TRBE/ETE/TRF model (-cpu max,x-trbe=on).
#   Debian's QEMU source (rig/qemu/UPSTREAM, sha256-checked) + rig/qemu/series
#   (git am, fuzz 0) -> $RIG_CACHE/qemu/bin-<key>/qemu-system-aarch64, where
#   <key> hashes the pinned source, the patches and the configure options, so
#   a checkout whose series did not change reuses the binary (0 s).
#   The build directory and ccache live in $RIG_CACHE too: after a patch
#   change only what it touches is rebuilt.
# build.sh --path prints the binary's path (building it if needed); progress
# goes to stderr.
. "$(dirname "$0")/../lib.sh"
stage qemu
Q=$RIG_CACHE/qemu
QD=$RIG_TOP/rig/qemu
# shellcheck source=rig/qemu/UPSTREAM
. "$QD/UPSTREAM"
mapfile -t PATCHES < <(grep -v '^\s*\(#\|$\)' "$QD/series")
[ ${#PATCHES[@]} -gt 0 ] || die "rig/qemu/series lists no patches"
# The board and the features nothing here needs are left out: TCG, the virt
# board (PL011, GIC, virtio-mmio, fw_cfg) and a system libfdt are what the
# guests use.
CONFIGURE=(--target-list=aarch64-softmmu --without-default-features
	--without-default-devices --with-devices-aarch64=rig-virt --enable-tcg
	--enable-fdt=system --disable-docs --disable-install-blobs --disable-werror)
# CXL: the virt board selects ACPI_CXL, whose code calls into hw/cxl, which
# only a default-devices build enables (link errors otherwise); CXL needs PXB
# and the CXL memory device, its root port the PCIe root port.
DEVICES=(CONFIG_ARM_VIRT=y CONFIG_PXB=y CONFIG_CXL=y CONFIG_CXL_MEM_DEVICE=y CONFIG_PCIE_PORT=y)

key=$({
	cat "$QD/UPSTREAM" "$QD/series"
	for p in "${PATCHES[@]}"; do cat "$QD/$p"; done
	printf '%s\n' "${CONFIGURE[@]}" "${DEVICES[@]}"
} | sha256sum | cut -c1-16)
BIN=$Q/bin-$key/qemu-system-aarch64

if [ ! -x "$BIN" ]; then
	mkdir -p "$Q/dl"
	# 1. Source and meson: private apt configurations, sha256 of every file.
	need=0
	for f in "$DSC:$DSC_SHA256" "$ORIG:$ORIG_SHA256" "$DEBIAN:$DEBIAN_SHA256"; do
		[ "$(sha256sum "$Q/dl/${f%%:*}" 2>/dev/null | cut -d' ' -f1)" = "${f#*:}" ] || need=1
	done
	if [ $need = 1 ]; then
		papt_setup qemu-src amd64 "$SOURCES"
		info "fetching the QEMU source package $PACKAGE=$VERSION (about 40 MB)"
		# shellcheck disable=SC2046
		(cd "$Q/dl" && apt-get $(papt_opts qemu-src) -q source --download-only "$PACKAGE=$VERSION" >"$Q/dl/fetch.log" 2>&1) ||
			{ tail -5 "$Q/dl/fetch.log" >&2
			  die "apt-get source $PACKAGE=$VERSION failed: if the mirror dropped this version, pin one it lists (apt-get $(papt_opts qemu-src) showsrc qemu) in rig/qemu/UPSTREAM with the sha256 sums of its .dsc, and check that rig/qemu/series still applies"; }
		for f in "$DSC:$DSC_SHA256" "$ORIG:$ORIG_SHA256" "$DEBIAN:$DEBIAN_SHA256"; do
			sum=$(sha256sum "$Q/dl/${f%%:*}" | cut -d' ' -f1)
			[ "$sum" = "${f#*:}" ] || die "$Q/dl/${f%%:*}: sha256 $sum, rig/qemu/UPSTREAM says ${f#*:}: delete it and rerun, or re-pin"
		done
	fi
	if [ "$(sha256sum "$Q/dl/$MESON_DEB" 2>/dev/null | cut -d' ' -f1)" != "$MESON_SHA256" ]; then
		papt_setup qemu-meson amd64 "$MESON_SOURCES"
		info "fetching $MESON_DEB"
		# shellcheck disable=SC2046
		(cd "$Q/dl" && apt-get $(papt_opts qemu-meson) -q download "meson=$MESON_VERSION" >/dev/null) ||
			die "could not download meson=$MESON_VERSION (rig/qemu/UPSTREAM: MESON_VERSION, MESON_SOURCES)"
		sum=$(sha256sum "$Q/dl/$MESON_DEB" | cut -d' ' -f1)
		[ "$sum" = "$MESON_SHA256" ] || die "$Q/dl/$MESON_DEB: sha256 $sum, rig/qemu/UPSTREAM says $MESON_SHA256"
	fi
	if [ ! -f "$Q/meson/$MESON_SHA256" ]; then
		rm -rf "$Q/meson" && mkdir -p "$Q/meson"
		dpkg-deb -x "$Q/dl/$MESON_DEB" "$Q/meson"
		touch "$Q/meson/$MESON_SHA256"
	fi
	export PYTHONPATH=$Q/meson/usr/lib/python3/dist-packages
	export PATH=$Q/meson/usr/bin:$PATH

	# 2. A git repository of the unpacked source: tag pristine, branch rig.
	S=$Q/src
	srcid=$ORIG_SHA256-$DEBIAN_SHA256
	if [ "$(cat "$S/.git/rig-source" 2>/dev/null)" != "$srcid" ]; then
		info "unpacking $DSC into $S"
		rm -rf "$S" "$Q/build"
		dpkg-source -q -x --no-check "$Q/dl/$DSC" "$S" >"$Q/dl/unpack.log" 2>&1 ||
			{ cat "$Q/dl/unpack.log" >&2; die "dpkg-source -x $DSC failed"; }
		git -C "$S" init -q -b debian
		git -C "$S" config gc.auto 0
		git -C "$S" add -Af .
		GIT_AUTHOR_DATE="2000-01-01T00:00:00Z" GIT_COMMITTER_DATE="2000-01-01T00:00:00Z" \
			git -C "$S" -c user.name=rig -c user.email=rig@localhost commit -q -m "$PACKAGE $VERSION (Debian source, its patches applied)"
		git -C "$S" tag pristine
		echo "$srcid" >"$S/.git/rig-source"
	fi
	G() { git -C "$S" -c user.name=rig -c user.email=rig@localhost "$@"; }
	G am --abort >/dev/null 2>&1 || true
	G checkout -q -f -B rig refs/tags/pristine
	G clean -q -fdx -e .pc
	for p in "${PATCHES[@]}"; do
		G am -q --whitespace=nowarn "$QD/$p" >"$Q/am.log" 2>&1 ||
			{ cat "$Q/am.log" >&2; G am --abort >/dev/null 2>&1 || true
			  die "rig/qemu/$p does not apply to $PACKAGE $VERSION with git am (fuzz 0)"; }
	done
	printf '%s\n' "${DEVICES[@]}" >"$S/configs/devices/aarch64-softmmu/rig-virt.mak"

	# 3. Configure (once per build directory) and build the one binary.
	B=$Q/build
	if [ ! -f "$B/build.ninja" ] || [ "$(cat "$B/.rig-configure" 2>/dev/null)" != "${CONFIGURE[*]} ${DEVICES[*]}" ]; then
		rm -rf "$B" && mkdir -p "$B"
		info "configuring QEMU in $B"
		(cd "$B" && CC="ccache gcc" "$S/configure" --python=/usr/bin/python3 "${CONFIGURE[@]}") \
			>"$Q/configure.log" 2>&1 || { tail -30 "$Q/configure.log" >&2; die "QEMU configure failed (log: $Q/configure.log)"; }
		echo "${CONFIGURE[*]} ${DEVICES[*]}" >"$B/.rig-configure"
	fi
	info "building qemu-system-aarch64 (cold: about 9 minutes on 2 cores; log: $Q/build.log)"
	# One line of progress a minute; the whole log on failure.
	if ! cpu_lock bash -c 'ninja -C "$1" -j"$(nproc)" qemu-system-aarch64 >"$2" 2>&1 & p=$!
		while kill -0 $p 2>/dev/null; do sleep 60; kill -0 $p 2>/dev/null && echo "rig: qemu: $(grep -o "^\[[0-9]*/[0-9]*\]" "$2" | tail -1)" >&2; done
		wait $p' _ "$B" "$Q/build.log"; then
		grep -E 'error|FAILED' "$Q/build.log" | head -30 >&2
		die "QEMU build failed (log: $Q/build.log)"
	fi
	# A binary that links but cannot start (a QOM type whose parent the
	# device selection left out) is never installed as the cached one.
	"$B/qemu-system-aarch64" -M virt -cpu help >/dev/null 2>&1 ||
		die "the new qemu-system-aarch64 does not start: $("$B/qemu-system-aarch64" -M virt -cpu help 2>&1 | tail -1)"
	mkdir -p "$(dirname "$BIN")"
	cp "$B/qemu-system-aarch64" "$BIN.tmp" && mv "$BIN.tmp" "$BIN"
	# Binaries of other series versions: the newest stays for a checkout
	# one commit back, older ones go (about 70 MB each).
	# shellcheck disable=SC2010,SC2012 # rig-made names: bin-<hex>
	# (grep finds nothing on a cold cache: not an error.)
	{ ls -dt "$Q"/bin-* 2>/dev/null | grep -vxF "$(dirname "$BIN")" || true; } | tail -n +2 | xargs -r rm -rf
	ccache -s 2>/dev/null | grep -iE 'hits|misses' | head -3 | sed 's/^/rig: ccache: /' >&2 || true
fi
"$BIN" -M virt -cpu help >/dev/null 2>&1 || die "$BIN does not run: $("$BIN" -M virt -cpu help 2>&1 | tail -1)"
info "qemu: ${BIN} ($("$BIN" --version | head -1))"
[ "${1:-}" = --path ] && echo "$BIN"
exit 0
