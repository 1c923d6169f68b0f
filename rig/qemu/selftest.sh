#!/usr/bin/env bash
# make qemu-selftest (part of make rig-selftest): the emulated Armv9 CPU.
#  1. -cpu max,x-trbe=on: the real arm_trbe and ETE drivers probe on both CPUs
#     (coresight devices ete0/ete1 and trbe0/trbe1, cs_etm sinks trbe0/trbe1,
#     no "TRBE is not implemented"), and rig/qemu/selftest/trbe_model_test.ko
#     misprograms the TRBE from the guest and finds the status in TRBSR_EL1
#     (buffer full, unmapped page: as the architecture says; limit below base,
#     pointer outside: the model's choice where the architecture says
#     CONSTRAINED UNPREDICTABLE; lost records flagged), not a QEMU crash;
#  2. the same QEMU with plain -cpu max still hides the features: the TRBE
#     driver reports "TRBE is not implemented" and no ETE probes.
# Needs the arm64 kernel (make kernel ARCH=arm64); builds QEMU (make qemu) if
# its cached binary is missing.
. "$(dirname "$0")/../lib.sh"
stage qemu-selftest
cd "$RIG_TOP" || exit 1
O=$(kbuild_dir arm64)
[ -f "$O/arch/arm64/boot/Image" ] || die "no arm64 kernel: run 'make kernel ARCH=arm64' first"
QEMU_BIN=$(bash rig/qemu/build.sh --path) || die "make qemu failed"

# The self-test module, against the arm64 kernel.
m=$BUILD/qemu-selftest/module
rm -rf "$m" && mkdir -p "$m"
cp rig/qemu/selftest/trbe_model_test.c rig/qemu/selftest/Kbuild "$m/"
tree_lock shared
# shellcheck disable=SC2046
make -s -C "$TREE" O="$O" $(kmake_args arm64) CC="$(kcc arm64)" M="$m" modules >"$m/build.log" 2>&1 ||
	{ cat "$m/build.log" >&2; die "could not build trbe_model_test.ko for arm64"; }
p=$BUILD/qemu-selftest/payload
rm -rf "$p" && mkdir -p "$p"
cp "$m/trbe_model_test.ko" "$p/"

pass=0 fail=0
check() { # check NAME CMD...
	if "${@:2}"; then
		echo "ok - $1"
		pass=$((pass + 1))
	else
		echo "not ok - $1"
		fail=$((fail + 1))
	fi
}

# 1. The model on.
V1=$OUT/qemu-selftest-trbe
cmd='for d in /sys/bus/coresight/devices/*; do echo "coresight: ${d##*/}"; done
for s in /sys/bus/event_source/devices/cs_etm/sinks/*; do echo "cs_etm sink: ${s##*/}"; done
insmod /trbe_model_test.ko; echo "insmod: $?"'
rc=0
VM_DIR=$V1 VM_QEMU=$QEMU_BIN VM_CPU=max,pauth-impdef=on,x-trbe=on VM_PAYLOAD=$p VM_TIMEOUT=300 \
	bash rig/vm.sh arm64 "$cmd" >"$V1.log" 2>&1 || rc=$?
sed -n 's/^/    /p' "$V1.log" | grep -E 'coresight:|sink:|insmod:|trbe_model_test|rig: vm' || true
d=$V1/dmesg.txt
check "x-trbe=on: the guest ran, dmesg clean (make vm rc $rc)" test "$rc" = 0
for c in 0 1; do
	check "x-trbe=on: ETE driver probed cpu$c (coresight device ete$c)" grep -q "coresight: ete$c\$" "$V1.log"
	check "x-trbe=on: TRBE driver probed cpu$c (coresight device trbe$c, cs_etm sink trbe$c)" \
		bash -c "grep -q 'coresight: trbe$c\$' '$V1.log' && grep -q 'cs_etm sink: trbe$c\$' '$V1.log'"
done
check "x-trbe=on: no 'TRBE is not implemented' in dmesg" bash -c "! grep -q 'TRBE is not implemented' '$d'"
for t in "good" "fill" "lost (stopped)" "lost (next record)" "limit below base" "pointer below base" "unmapped buffer page"; do
	check "model self-test: $t" grep -qF "trbe_model_test: $t: ok:" "$d"
done
check "model self-test: the module loaded (every case passed)" grep -q '^insmod: 0$' "$V1.log"

# 2. The same QEMU without the property.
V2=$OUT/qemu-selftest-max
rc=0
VM_DIR=$V2 VM_QEMU=$QEMU_BIN VM_CPU=max,pauth-impdef=on VM_TIMEOUT=300 \
	bash rig/vm.sh arm64 'ls /sys/bus/coresight/devices' >"$V2.log" 2>&1 || rc=$?
check "-cpu max (no x-trbe): the guest ran (make vm rc $rc)" test "$rc" = 0
check "-cpu max (no x-trbe): 'TRBE is not implemented on cpu 0' and on cpu 1" \
	bash -c "grep -q 'TRBE is not implemented on cpu 0' '$V2/dmesg.txt' && grep -q 'TRBE is not implemented on cpu 1' '$V2/dmesg.txt'"
check "-cpu max (no x-trbe): no ETE device" bash -c "! grep -q '^ete' '$V2.log'"

echo "qemu-selftest: $pass passed, $fail failed (logs: ${V1#"$RIG_TOP"/}.log, ${V2#"$RIG_TOP"/}.log)"
[ "$fail" = 0 ]
