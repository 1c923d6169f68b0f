#!/usr/bin/env bash
# make vm-x86_64 / vm-arm64 (check stages): boot the patched kernel and check
# that the guest sees what the tests rely on.
#   x86_64: perf's software and tracepoint PMUs, tracefs, the host's root.
#   arm64:  cs_etm (CoreSight built in), armv8_pmuv3, and the TRBE/SPE drivers
#           probing the device tree nodes and reporting the missing hardware.
. "$(dirname "$0")/lib.sh"
arch=${1:-x86_64}
arch_check "$arch"
stage "vm-smoke $arch"
cd "$RIG_TOP" || exit 1
O=$(kbuild_dir "$arch")
case "$arch" in
x86_64) img=$O/arch/x86/boot/bzImage ;;
arm64) img=$O/arch/arm64/boot/Image ;;
esac
[ -f "$img" ] || bash rig/kernel.sh "$arch"

cmd='uname -r; echo "pmus: $(ls /sys/bus/event_source/devices | tr "\n" " ")"'
case "$arch" in
x86_64)
	bash rig/vm.sh x86_64 "$cmd; test -d /sys/bus/event_source/devices/software && test -d /sys/bus/event_source/devices/tracepoint && test -e /sys/kernel/tracing/events/sched/sched_switch/id && test -x $RIG_TOP/rig/vm.sh"
	;;
arm64)
	bash rig/vm.sh arm64 "$cmd; test -d /sys/bus/event_source/devices/cs_etm && test -d /sys/bus/event_source/devices/armv8_pmuv3_0 -o -d /sys/bus/event_source/devices/armv8_pmuv3"
	grep -q 'TRBE is not implemented on cpu 0' "out/vm-arm64/dmesg.txt" ||
		die "arm64: the TRBE driver did not probe the device tree node (no 'TRBE is not implemented' in dmesg)"
	info "arm64: TRBE driver probed the DT node and reported the missing hardware: $(grep -c 'TRBE is not implemented' out/vm-arm64/dmesg.txt) CPUs"
	;;
esac
