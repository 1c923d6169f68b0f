#!/usr/bin/env bash
# make run: the main job. Fetch the base, apply the series, build the patched
# x86_64 kernel, boot it in QEMU and show what the guest sees.
. "$(dirname "$0")/lib.sh"
stage run
cd "$RIG_TOP" || exit 1
bash rig/deps.sh
BASE=${BASE:-0} bash rig/tree.sh
arch=${ARCH:-x86_64}
bash rig/kernel.sh "$arch"
case "$arch" in
x86_64) pmus=/sys/bus/event_source/devices ;;
arm64) pmus=/sys/bus/event_source/devices ;;
esac
bash rig/vm.sh "$arch" "echo \"kernel: \$(uname -r) (\$(uname -m))\"; echo \"perf PMUs: \$(ls $pmus | tr '\n' ' ')\""
echo "run: console and dmesg in out/vm-$arch/"
