#!/usr/bin/env bash
# make cs-etm (a make check stage): `perf record -e cs_etm//u` on the emulated
# Armv9 CPU (rig/qemu, -cpu max,x-trbe=on), judged on the host.
#  - perf for the guest: cross-built from the tree, static, for arm64
#    (build/perf-arm64), with Debian's arm64 OpenCSD (make deps unpacks it
#    into $RIG_CACHE/arm64-debs) and no other library;
#  - in the guest: the ETE and TRBE drivers probed, then perf record of a
#    forking workload (a shell loop starting processes) with the TRBE as the
#    sink of each CPU and a 64 KiB AUX buffer, so that the TRBE interrupt
#    fires (checked in /proc/interrupts); perf.data comes back over the
#    console;
#  - on the host, with the series perf (make perf, CORESIGHT=1):
#    perf report -D decodes it with OpenCSD (every model record's Timestamp
#    and Context packet, no decode error), perf script reads it (no samples:
#    the model has no instruction trace), and the swaux checker
#    (PERF_SWAUX_ETE_MODEL=1 perf report -D, tools/perf/util/swaux.c)
#    attributes every record to (cpu, pid, seq): no record in another CPU's
#    buffer, no gap that neither an Overflow packet nor perf flagged, none
#    invalid; a verdict over no records is a failure, and the same recording
#    with one record's sequence number changed must get an error verdict;
#  - in the same boot, rig/armv9/run.sh --ete-model (what users run on
#    Armv9 hardware or FVP: the aux_set_output redirect tests with cs_etm,
#    then alone and beside a perf record of its workload on the same TRBE,
#    perf report -D, perf script and the checker in the guest, dmesg) must
#    end with "armv9: verdict: ok";
#  - with CS_ETM_PERF_TEST=1 (make cs-etm-perf-test, not part of make check),
#    perf's own CoreSight shell tests (perf test coresight) run in the same
#    boot and their results are listed, not asserted: most look for
#    instruction trace (branch samples) the model does not produce.
# Output in out/cs-etm/.
. "$(dirname "$0")/../lib.sh"
stage cs-etm
cd "$RIG_TOP" || exit 1
O=$(kbuild_dir arm64)
D=$OUT/cs-etm
rm -rf "$D" && mkdir -p "$D"
[ -f "$O/arch/arm64/boot/Image" ] || die "no arm64 kernel: run 'make kernel ARCH=arm64' first"
PERF=${PERF:-$BUILD/perf/perf}
[ -x "$PERF" ] || die "no host perf at $PERF: run 'make perf'"
"$PERF" version --build-options | grep -Eq '^ +libopencsd: \[ on  \]' ||
	die "$PERF has no OpenCSD (libopencsd: off): run 'make deps' and 'make perf'"
QEMU_BIN=$(bash rig/qemu/build.sh --path) || die "make qemu failed"

# 1. perf for the guest.
bash rig/qemu/perf-arm64.sh
PA=$BUILD/perf-arm64
A64=$RIG_CACHE/arm64-debs/x
tree_lock shared

# 2. The guest: probe, then perf record.
P=$BUILD/cs-etm-payload
rm -rf "$P" && mkdir -p "$P/bin" "$P/armv9/tests" "$P/rig/armv9"
# rig/armv9/run.sh and perf test in the guest: bash, perf with its shell
# tests next to it, the kselftest and run.sh's workload as static binaries.
cp "$A64/bin/bash-static" "$P/bin/bash"
cp "$PA/perf" "$P/armv9/perf"
cp -r "$TREE/tools/perf/tests/shell" "$P/armv9/tests/"
cp rig/armv9/run.sh "$P/rig/armv9/"
cp rig/guest/quiet-cpu.sh "$P/armv9/"
cp rig/splat.sh "$P/rig/"
perf_test=${CS_ETM_PERF_TEST:-0}
# perf's shell tests ask mktemp for templates busybox's mktemp refuses.
[ "$perf_test" = 0 ] || cp rig/qemu/mktemp "$P/armv9/mktemp"
bash rig/selftests/build.sh arm64 >"$D/selftests-build.log" 2>&1 ||
	{ tail -20 "$D/selftests-build.log" >&2; die "the kselftests did not build (${D#"$RIG_TOP"/}/selftests-build.log)"; }
cp "$BUILD/selftests-arm64/aux_set_output" "$P/armv9/"
aarch64-linux-gnu-gcc -static -O2 -Wall -Werror -o "$P/armv9/redirect" rig/armv9/redirect.c ||
	die "rig/armv9/redirect.c did not build for arm64"
cat >"$P/workload.sh" <<'EOF'
#!/bin/sh
# A forking workload: 200 short processes, each a few system calls.
i=0
while [ $i -lt 200 ]; do
	/bin/true
	echo $i >/dev/null
	i=$((i + 1))
done
EOF
chmod +x "$P/workload.sh"
# A 64 KiB AUX buffer (-m 16,16): the TRBE fills again and again, so its
# interrupt handler ends and begins the perf AUX transactions (counted in
# /proc/interrupts before and after).
cmd='for s in /sys/bus/event_source/devices/cs_etm/sinks/*; do echo "cs_etm sink: ${s##*/}"; done
trbe_irqs() { awk "/arm_trbe/ {n = 0; for (i = 2; i <= NF && \$i ~ /^[0-9]+\$/; i++) n += \$i; print n}" /proc/interrupts; }
echo "trbe-irqs-before: $(trbe_irqs)"
/armv9/perf record -m 16,16 -e cs_etm//u -o /tmp/perf.data -- /workload.sh >/tmp/record.log 2>&1
rc=$?
cat /tmp/record.log
echo "trbe-irqs-after: $(trbe_irqs)"
echo "perf-record-rc: $rc"
[ $rc = 0 ] || exit 1
rig-send /tmp/perf.data perf.data
# What users run on Armv9 hardware, on the model, on CPU 1 with the
# unbound kernel threads moved off it as for the other guests'"'"' SET_OUTPUT
# tests: each of them that runs there preempts the SCHED_FIFO children, and
# in one boot every try of a redirect saw a switch.
echo "armv9-quiet: $(sh /armv9/quiet-cpu.sh 1)"
PATH=/armv9:$PATH bash /rig/armv9/run.sh --ete-model --no-perf-test --perf /armv9/perf \
	--kselftest /armv9/aux_set_output --workload /armv9/redirect --out /tmp/armv9 \
	--cpu 1 >/tmp/armv9.log 2>&1
echo "armv9-rc: $?"
sed "s/^/armv9-log: /" /tmp/armv9.log
sed "s/^/armv9-log: /" /tmp/armv9/check.txt 2>/dev/null
[ ! -s /tmp/armv9/perf.data ] || rig-send /tmp/armv9/perf.data armv9-perf.data
# perf test coresight: listed, not asserted (run from perf'"'"'s directory).
if [ -x /armv9/mktemp ]; then
	(cd /armv9 && PATH=/armv9:$PATH TMPDIR=/tmp ./perf test -v coresight) >/tmp/perf-test.log 2>&1
	echo "perf-test-rc: $?"
	sed "s/^/perf-test: /" /tmp/perf-test.log
fi
exit 0'
rc=0
VM_DIR=$D/vm VM_QEMU=$QEMU_BIN VM_CPU=max,pauth-impdef=on,x-trbe=on VM_PAYLOAD=$P VM_TIMEOUT=1200 \
	bash rig/vm.sh arm64 "$cmd" >"$D/vm.log" 2>&1 || rc=$?
grep -E 'cs_etm sink:|perf record|perf-record-rc|trbe-irqs|armv9-quiet|rig: vm' "$D/vm.log" | sed 's/^/  guest: /' >&2 || true
[ "$rc" = 0 ] || die "the guest failed (rc $rc): ${D#"$RIG_TOP"/}/vm.log, ${D#"$RIG_TOP"/}/vm/console.log"
for c in 0 1; do
	line=$(grep -m1 "coresight ete$c: CPU$c: ete v[0-9.]* initialized" "$D/vm/dmesg.txt") ||
		die "the ETE driver did not probe cpu$c (no 'coresight ete$c: CPU$c: ete ... initialized' in dmesg)"
	grep -q "^cs_etm sink: trbe$c\$" "$D/vm.log" || die "no cs_etm sink trbe$c: the TRBE driver did not probe cpu$c"
	info "cpu$c: $line; TRBE sink trbe$c"
done
irq0=$(sed -n 's/^trbe-irqs-before: \([0-9]*\)$/\1/p' "$D/vm.log")
irq1=$(sed -n 's/^trbe-irqs-after: \([0-9]*\)$/\1/p' "$D/vm.log")
[ -n "$irq0" ] && [ -n "$irq1" ] && [ "$irq1" -gt "$irq0" ] ||
	die "the TRBE interrupt did not fire during perf record (arm_trbe in /proc/interrupts: '$irq0' -> '$irq1')"
info "TRBE interrupts during perf record: $((irq1 - irq0))"
[ -s "$D/vm/files/perf.data" ] || die "no perf.data came back from the guest"
cp "$D/vm/files/perf.data" "$D/perf.data"
info "perf.data: $(stat -c %s "$D/perf.data") bytes"

# 3. The host: OpenCSD decode, then the checker.
fail=0
"$PERF" report -D -i "$D/perf.data" >"$D/report-D.txt" 2>"$D/report-D.err" ||
	{ echo "cs-etm: FAIL: perf report -D (OpenCSD) failed, see ${D#"$RIG_TOP"/}/report-D.err" >&2; fail=1; }
ts=$(grep -c 'I_TIMESTAMP' "$D/report-D.txt" || true)
ctxt=$(grep -c 'I_CTXT' "$D/report-D.txt" || true)
bad=$(grep -cE 'I_BAD_SEQUENCE|I_BAD_TRACEMODE|I_RESERVED|I_INCOMPLETE_EOT' "$D/report-D.txt" || true)
info "OpenCSD packet dump: $ts Timestamp, $ctxt Context packets, $bad bad packets"
# perf script decodes through OpenCSD too; the model has no instruction
# trace (no atoms), so no branch samples come out: it must only not fail.
"$PERF" script -i "$D/perf.data" >"$D/script.txt" 2>"$D/script.err" ||
	{ echo "cs-etm: FAIL: perf script failed, see ${D#"$RIG_TOP"/}/script.err" >&2; fail=1; }
PERF_SWAUX_ETE_MODEL=1 "$PERF" report -D -i "$D/perf.data" >"$D/check.txt" 2>"$D/check.err" || true
grep '^swaux:' "$D/check.txt" | sed 's/^/  /' >&2 || true
recs=$(sed -n 's/^swaux: total .* records=\([0-9]*\) .*/\1/p' "$D/check.txt")
[ "$ts" -gt 0 ] && [ "$ts" = "$ctxt" ] || { echo "cs-etm: FAIL: OpenCSD saw $ts Timestamp and $ctxt Context packets" >&2; fail=1; }
[ "$bad" = 0 ] || { echo "cs-etm: FAIL: OpenCSD reported $bad bad packets" >&2; fail=1; }
grep -qx 'swaux: verdict: ok' "$D/check.txt" || { echo "cs-etm: FAIL: the checker's verdict is not ok" >&2; fail=1; }
[ "${recs:-0}" -ge 200 ] || { echo "cs-etm: FAIL: the checker attributed ${recs:-0} records (want >= 200: one per workload process at least)" >&2; fail=1; }
[ "${recs:-0}" = "$ts" ] || { echo "cs-etm: FAIL: the checker attributed ${recs:-0} records, OpenCSD decoded $ts Timestamp packets" >&2; fail=1; }
# The checker must fail the same recording with one record's sequence number
# changed (seq XOR 2 in the 500th record: an unflagged gap).
python3 - "$D/perf.data" "$D/perf-bad.data" <<'PY'
import sys
b = bytearray(open(sys.argv[1], 'rb').read())
head = bytes(11) + bytes([0x80, 0x01, 0x00, 0x04, 0x02])
i, n = -1, 0
while n < 500:
    i = b.find(head, i + 1)
    if i < 0:
        sys.exit('fewer than 500 model records in ' + sys.argv[1])
    n += 1
b[i + len(head)] ^= 0x02
open(sys.argv[2], 'wb').write(b)
PY
PERF_SWAUX_ETE_MODEL=1 "$PERF" report -D -i "$D/perf-bad.data" >"$D/check-bad.txt" 2>&1 || true
if grep -q 'swaux: error: .*unflagged gap' "$D/check-bad.txt" && grep -q '^swaux: verdict: [1-9][0-9]* errors' "$D/check-bad.txt"; then
	info "the checker fails the recording with one sequence number changed: $(grep '^swaux: verdict' "$D/check-bad.txt")"
else
	echo "cs-etm: FAIL: the checker did not catch a changed sequence number (${D#"$RIG_TOP"/}/check-bad.txt)" >&2
	fail=1
fi

# 4. rig/armv9/run.sh in the guest, then perf test coresight (listed).
tr -d '\r' <"$D/vm/console.log" | sed -n 's/^armv9-log: //p' >"$D/armv9.log"
tr -d '\r' <"$D/vm/console.log" | sed -n 's/^perf-test: //p' >"$D/perf-test.log"
grep -E '^armv9: ' "$D/armv9.log" | sed 's/^/  guest: /' >&2 || true
if ! grep -qx 'armv9: verdict: ok' "$D/armv9.log"; then
	echo "cs-etm: FAIL: rig/armv9/run.sh --ete-model in the guest: $(grep '^armv9: verdict' "$D/armv9.log" || echo 'no verdict'), see ${D#"$RIG_TOP"/}/armv9.log" >&2
	fail=1
fi
if [ "$perf_test" = 0 ]; then
	info "perf test coresight: not run (make cs-etm-perf-test runs it)"
else
	info "perf test coresight in the guest (not asserted: the model has no instruction trace):"
	grep -E '^ *[0-9]+(\.[0-9]+)?: .*: (Ok|FAILED!|Skip)' "$D/perf-test.log" | sed 's/^/  guest: /' >&2 ||
		info "no perf test result lines: see ${D#"$RIG_TOP"/}/perf-test.log"
	grep -E '^mktemp: ' "$D/perf-test.log" | sed 's/^/  guest: /' >&2 &&
		{ echo "cs-etm: FAIL: perf's tests could not make their temporary files" >&2; fail=1; }
fi
[ "$fail" = 0 ] || exit 1
info "cs-etm: perf record -e cs_etm//u on the emulated TRBE: $recs records, every one attributed, decoded by OpenCSD; verdict ok"
