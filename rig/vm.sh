#!/usr/bin/env bash
# shellcheck disable=SC2054 # QEMU options contain commas
# make vm ARCH=x86_64|arm64 CMD='...': boot build/kbuild-$ARCH under QEMU (TCG) and
# run CMD in the guest. The guest's exit status becomes ours; the run fails on a
# timeout, a panic, or any WARN/BUG/Oops/lockdep/KASAN/UBSAN report in dmesg.
#   x86_64: the host's / is the guest's root (read-only 9p), out/ is writable at the
#           same path, /tmp is a tmpfs; CMD runs in the checkout directory.
#   arm64:  initramfs with busybox, rig/guest/init and build/payload-arm64/*; CMD runs in /.
. "$(dirname "$0")/lib.sh"
arch=${1:-x86_64}
cmd=${2:-}
arch_check "$arch"
[ -n "$cmd" ] || cmd='uname -a'
stage "vm $arch"

O=$(kbuild_dir "$arch")
# VM_DIR: where this run's files go (default out/vm-$ARCH; one run per directory).
V=${VM_DIR:-$OUT/vm-$arch}
rm -rf "$V" && mkdir -p "$V"
TIMEOUT=${VM_TIMEOUT:-900}
MEM=${VM_MEM:-2G}
printf '%s\n' "$cmd" >"$V/cmd.sh"

case "$arch" in
x86_64)
	img=$O/arch/x86/boot/bzImage
	[ -f "$img" ] || die "no $img: run 'make kernel ARCH=x86_64' first"
	# la57=off: 4-level paging, the layout KASAN and most machines use; with
	# TCG's default 5-level paging an early interrupt hit a KASAN wild access.
	QEMU=(qemu-system-x86_64 -accel tcg -cpu "${VM_CPU:-max,la57=off}" -smp 2 -m "$MEM" -nographic -no-reboot -nic none
		-kernel "$img"
		-fsdev "local,id=root,path=/,security_model=none,readonly=on,multidevs=remap"
		-device virtio-9p-pci,fsdev=root,mount_tag=/dev/root
		-fsdev "local,id=out,path=$OUT,security_model=none,multidevs=remap"
		-device virtio-9p-pci,fsdev=out,mount_tag=rigout
		-append "console=ttyS0 loglevel=4 panic=-1 acpi=noirq kasan_multi_shot root=/dev/root rootfstype=9p rootflags=trans=virtio,version=9p2000.L,msize=262144 ro init=$RIG_TOP/rig/guest/init rig.cmd=$V/cmd.sh rig.out=$OUT rig.dir=$RIG_TOP")
	;;
arm64)
	img=$O/arch/arm64/boot/Image
	[ -f "$img" ] || die "no $img: run 'make kernel ARCH=arm64' first"
	BB=$RIG_CACHE/busybox-arm64/busybox
	[ -x "$BB" ] || die "no arm64 busybox in $BB: run 'make deps'"
	S=$BUILD/initramfs-arm64
	rm -rf "$S" && mkdir -p "$S"/{bin,proc,sys,dev,tmp,run,rig}
	cp "$BB" "$S/bin/busybox"
	ln -s busybox "$S/bin/sh"
	# rig-send FILE NAME: send FILE to the host over the console ($V/files/NAME).
	printf '%s\n' '#!/bin/sh' 'echo "@@RIG-FILE-BEGIN $2@@"' 'gzip -c "$1" | base64' 'echo "@@RIG-FILE-END@@"' >"$S/bin/rig-send"
	chmod +x "$S/bin/rig-send"
	cp "$RIG_TOP/rig/guest/init" "$S/init"
	cp "$V/cmd.sh" "$S/rig/cmd.sh"
	# VM_PAYLOAD: a directory copied into the initramfs' root (default
	# build/payload-arm64).
	payload=${VM_PAYLOAD:-$BUILD/payload-arm64}
	if [ -d "$payload" ]; then
		cp -a "$payload/." "$S/"
	fi
	(cd "$S" && find . | cpio -o -H newc -R 0:0 --quiet | gzip -1) >"$V/initramfs.cpio.gz"
	# VM_QEMU, VM_CPU: the emulated Armv9 CPU is VM_QEMU=<make qemu's binary>
	# VM_CPU=max,pauth-impdef=on,x-trbe=on (rig/qemu); the default is the
	# system's QEMU, which has no TRBE or ETE.
	cpu=${VM_CPU:-max,pauth-impdef=on}
	QEMU=("${VM_QEMU:-qemu-system-aarch64}" -M virt -cpu "$cpu" -smp 2 -m "$MEM" -nographic -no-reboot)
	# QEMU's virt device tree plus TRBE and SPE nodes: without the model the
	# drivers probe, find no hardware on any CPU and must fail quietly. This
	# keeps the driver's probe and error paths in every arm64 run. With the
	# model (x-trbe=on) QEMU writes the trbe and ete nodes itself.
	trbe_node='\ttrbe {\n\t\tcompatible = "arm,trace-buffer-extension";\n\t\tinterrupts = <0x01 0x0f 0x04>;\n\t};\n'
	case ",$cpu," in *,x-trbe=on,*) trbe_node= ;; esac
	dtb=$V/virt-trbe.dtb
	"${QEMU[@]}" -machine dumpdtb="$V/virt.dtb" >/dev/null 2>&1 || die "qemu could not dump its device tree"
	{
		dtc -q -I dtb -O dts "$V/virt.dtb"
		printf '/ {\n%b' "$trbe_node"
		printf '\tspe {\n\t\tcompatible = "arm,statistical-profiling-extension-v1";\n\t\tinterrupts = <0x01 0x05 0x04>;\n\t};\n};\n'
	} | dtc -q -I dts -O dtb -o "$dtb" - || die "dtc failed to build $dtb"
	QEMU+=(-dtb "$dtb" -kernel "$img" -initrd "$V/initramfs.cpio.gz"
		-append "console=ttyAMA0 loglevel=4 panic=-1 rdinit=/init rig.cmd=/rig/cmd.sh rig.dir=/")
	;;
esac

info "booting $(basename "$img") ($arch, TCG, timeout ${TIMEOUT}s); console: ${V#"$RIG_TOP"/}/console.log"
set +e
timeout -k 10 "$TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | sed -u 's/\r$//' | tee "$V/console.log" |
	awk '/@@RIG-CMD-END@@/{p=0} /^@@RIG-FILE-BEGIN /{f=1} p && !f {print; fflush()} /^@@RIG-FILE-END@@/{f=0} /@@RIG-CMD-BEGIN@@/{p=1}'
qrc=${PIPESTATUS[0]}
set -e

sed -n '/@@RIG-DMESG-BEGIN@@/,/@@RIG-DMESG-END@@/p' "$V/console.log" | sed '1d;$d' >"$V/dmesg.txt"
# Files the arm64 guest sent over the console (rig-send FILE NAME: gzip,
# base64) land in $V/files/NAME.
for name in $(sed -n 's/^@@RIG-FILE-BEGIN \([A-Za-z0-9._-]*\)@@$/\1/p' "$V/console.log"); do
	mkdir -p "$V/files"
	sed -n "/^@@RIG-FILE-BEGIN $name@@\$/,/^@@RIG-FILE-END@@\$/p" "$V/console.log" | sed '1d;$d' |
		base64 -d | gunzip >"$V/files/$name" || { echo "rig: vm: file $name from the guest is corrupt" >&2; rm -f "$V/files/$name"; }
done
rc=$(sed -n 's/^@@RIG-RC=\([0-9]*\)@@$/\1/p' "$V/console.log" | tail -1)
fail=0
if [ -z "$rc" ]; then
	[ "$qrc" = 124 ] && echo "rig: vm: TIMEOUT after ${TIMEOUT}s" >&2
	echo "rig: vm: the guest did not finish (qemu rc $qrc); last console lines:" >&2
	tail -25 "$V/console.log" >&2
	fail=1
	# Without the dmesg dump, scan the whole console.
	cp "$V/console.log" "$V/dmesg.txt"
fi
# shellcheck source=rig/splat.sh
. "$RIG_TOP/rig/splat.sh"
if splat_scan "$V/dmesg.txt" >"$V/splats.txt"; then
	echo "rig: vm: kernel reported a problem (full log ${V#"$RIG_TOP"/}/dmesg.txt):" >&2
	cat "$V/splats.txt" >&2
	fail=1
fi
if [ "$fail" = 0 ] && [ "$rc" != 0 ]; then
	echo "rig: vm: guest command exited with status $rc" >&2
	exit "$rc"
fi
[ "$fail" = 0 ] || exit 1
info "vm: guest command succeeded, dmesg clean"
