#!/usr/bin/env bash
# make kernel ARCH=x86_64|arm64: out-of-tree build of build/linux (whatever state
# `make tree` left it in) into build/kbuild-$ARCH from tinyconfig + rig/config fragments.
. "$(dirname "$0")/lib.sh"
arch=${1:-x86_64}
arch_check "$arch"
stage "kernel $arch"

tree_lock shared
[ -f "$TREE/Makefile" ] || die "no kernel tree in $TREE: run 'make tree' first"
O=$(kbuild_dir "$arch")
mkdir -p "$O" "$OUT"
# shellcheck disable=SC2207
KARGS=($(kmake_args "$arch"))
KCC=$(kcc "$arch")
mapfile -t FRAGS < <(ls "$RIG_TOP"/rig/config/common/*.config "$RIG_TOP/rig/config/$arch"/*.config 2>/dev/null)
[ ${#FRAGS[@]} -gt 0 ] || die "no config fragments in rig/config"

km() { make -s -C "$TREE" O="$O" "${KARGS[@]}" CC="$KCC" "$@"; }

cfghash=$(cat "${FRAGS[@]}" | sha256sum | cut -c1-16)
if [ ! -f "$O/.config" ] || [ "$(cat "$O/.rig-config" 2>/dev/null)" != "$cfghash" ]; then
	info "configuring: tinyconfig + ${FRAGS[*]#"$RIG_TOP"/}"
	km tinyconfig >/dev/null
	# merge_config.sh writes a temp file in the current directory: run it in $O.
	(cd "$O" && "$TREE/scripts/kconfig/merge_config.sh" -m -O "$O" "$O/.config" "${FRAGS[@]}" >"$O/merge_config.log" 2>&1) ||
		{ cat "$O/merge_config.log" >&2; die "merge_config.sh failed"; }
	km olddefconfig >/dev/null
	# Every option a fragment asks for must have survived olddefconfig.
	bad=0
	while read -r line; do
		case "$line" in
		CONFIG_*=*)
			grep -qxF "$line" "$O/.config" || { echo "rig: config: wanted '$line', got '$(grep -E "^(# )?${line%%=*}[= ]" "$O/.config" || echo absent)'" >&2; bad=1; } ;;
		"# CONFIG_"*" is not set")
			sym=${line#\# }; sym=${sym%% *}
			! grep -q "^$sym=" "$O/.config" || { echo "rig: config: wanted '$line'" >&2; bad=1; } ;;
		esac
	done < <(cat "${FRAGS[@]}")
	[ $bad = 0 ] || die "config fragments not satisfied (missing dependency or unknown symbol): fix rig/config/"
	echo "$cfghash" >"$O/.rig-config"
fi

info "building $(git -C "$TREE" describe --always --tags 2>/dev/null) for $arch in ${O#"$RIG_TOP"/} (log: out/kbuild-$arch.log)"
if ! cpu_lock make -C "$TREE" O="$O" "${KARGS[@]}" CC="$KCC" -j"$(nproc)" all >"$OUT/kbuild-$arch.log" 2>&1; then
	grep -E 'error|Error' "$OUT/kbuild-$arch.log" | head -30 >&2
	die "kernel build failed for $arch: see out/kbuild-$arch.log"
fi
grep -E 'warning:' "$OUT/kbuild-$arch.log" | sort -u | head -20 >&2 || true
case "$arch" in
x86_64) img=$O/arch/x86/boot/bzImage ;;
arm64) img=$O/arch/arm64/boot/Image ;;
esac
[ -f "$img" ] || die "no kernel image at $img"
git -C "$TREE" describe --always --tags >"$O/.rig-tree"
info "$(make -s -C "$TREE" O="$O" "${KARGS[@]}" kernelrelease): ${img#"$RIG_TOP"/}"
ccache -s 2>/dev/null | grep -iE 'hits|misses' | head -3 | sed 's/^/rig: ccache: /' >&2 || true
