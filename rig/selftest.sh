#!/usr/bin/env bash
# make rig-selftest: the rig checks its own guards.
#  1. the overlay copy refuses to overwrite an upstream file;
#  2. a patch that needs fuzz fails the series check (and a clean one passes);
#  3. rig/armv9/run.sh (real Armv9/FVP only) refuses with exit 2 here, where
#     there is no cs_etm PMU; rig/armv9/lint.sh (make armv9-lint) passes;
#  4. `make vm` fails on a guest whose dmesg has a WARN or a lockdep report,
#     passes a clean guest and returns a failing guest command's status, and
#     runs from a checkout under /tmp;
#  5. make perf-suite's verdict (fake perf binaries): a test the series fails
#     alone too is a regression, one that fails alone with both perfs is
#     flaky and not counted, one that fails only in the suite is counted;
#  6. the emulated Armv9 CPU (rig/qemu/selftest.sh, make qemu-selftest).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/series.sh"
stage rig-selftest
cd "$RIG_TOP" || exit 1
[ -d "$TREE/.git" ] || die "no $TREE: run 'make tree' first"
pass=0 fail=0 n=0
t() { # t NAME EXPECT(0|fail) CMD...
	local name=$1 expect=$2 rc=0
	shift 2
	n=$((n + 1))
	"$@" >"$BUILD/selftest-$n.log" 2>&1 || rc=$?
	if { [ "$expect" = 0 ] && [ $rc = 0 ]; } || { [ "$expect" = fail ] && [ $rc != 0 ]; }; then
		echo "ok $n - $name"
		pass=$((pass + 1))
	else
		echo "not ok $n - $name (rc=$rc, expected $expect; log build/selftest-$n.log)"
		tail -15 "$BUILD/selftest-$n.log" | sed 's/^/#   /'
		fail=$((fail + 1))
	fi
}
expect_rc() { # expect_rc N CMD...: succeed iff CMD exits with status N
	local want=$1 rc=0
	shift
	"$@" || rc=$?
	echo "exit status $rc (want $want)"
	[ "$rc" = "$want" ]
}

# 1. Overlay guard.
t "overlay guard refuses an upstream path (drivers/hwtracing/coresight/coresight-trbe.c)" fail \
	overlay_guard "$TREE" drivers/hwtracing/coresight/coresight-trbe.c
t "overlay guard refuses an upstream path (Makefile)" fail overlay_guard "$TREE" Makefile
t "overlay guard accepts a new path" 0 overlay_guard "$TREE" tools/testing/rig-selftest/new-file.c

# 2. Fuzz: make a patch against the base, then shift its context by one line
#    change so that patch(1) would apply it with fuzz but git apply must not.
w=$BUILD/selftest-fuzz
rm -rf "$w" && mkdir -p "$w"
f=kernel/events/ring_buffer.c
git -C "$TREE" show "refs/tags/base:$f" >"$w/orig.c"
mkdir -p "$w/a/$(dirname "$f")" "$w/b/$(dirname "$f")"
cp "$w/orig.c" "$w/a/$f"
awk '/^void \*perf_aux_output_begin\(/ {a=1} {print} a && /^\{$/ {print "\t/* rig self-test */"; a=0}' "$w/orig.c" >"$w/b/$f"
(cd "$w" && diff -u "a/$f" "b/$f" >clean.diff) || true
grep -q 'rig self-test' "$w/clean.diff" || die "selftest: could not make the test patch"
{ printf 'From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001\nFrom: Rig <rig@localhost>\nSubject: [PATCH] rig: self-test\n\nrig self-test\n---\n'; cat "$w/clean.diff"; } >"$w/clean.patch"
# Same hunk, but one context line no longer matches the base.
awk 'BEGIN{d=0} /^ / && !d && ++c==2 {print " " "/* drifted context */"; d=1; next} {print}' "$w/clean.patch" >"$w/fuzz.patch"
t "a clean patch passes the series check" 0 series_apply_check "$TREE" refs/tags/base "$w/clean.patch"
t "the drifted patch applies with fuzz 2 in patch(1) (so it needs fuzz)" 0 \
	bash -c "cd '$w/a' && patch -p1 --dry-run -F2 <'$w/fuzz.patch'"
t "the drifted patch fails the series check (fuzz 0)" fail series_apply_check "$TREE" refs/tags/base "$w/fuzz.patch"

# 3. The Armv9/FVP script cannot run here: it must refuse, not fail.
if [ ! -e /sys/bus/event_source/devices/cs_etm ]; then
	t "rig/armv9/run.sh refuses without a cs_etm PMU (exit 2)" 0 expect_rc 2 bash rig/armv9/run.sh
fi
t "make armv9-lint (shellcheck, redirect.c -Werror x86_64/arm64, run.sh refusals)" 0 bash rig/armv9/lint.sh

# 4. make vm catches kernel reports (x86_64 guest).
O=$(kbuild_dir x86_64)
[ -f "$O/arch/x86/boot/bzImage" ] || die "no x86_64 kernel: run 'make kernel ARCH=x86_64' first"
m=$BUILD/rig-splat
rm -rf "$m" && mkdir -p "$m" && cp rig/splat/rig_splat.c rig/splat/Kbuild "$m/"
# One small file: no need to queue behind the cpu lock.
make -s -C "$TREE" O="$O" ARCH=x86_64 CC="$(kcc x86_64)" M="$m" modules >"$BUILD/rig-splat.log" 2>&1 ||
	{ cat "$BUILD/rig-splat.log" >&2; die "could not build rig/splat for x86_64"; }
ko=$m/rig_splat.ko
t "make vm passes a clean guest (insmod rig_splat what=none)" 0 bash rig/vm.sh x86_64 "insmod $ko what=none"
t "make vm returns the guest command's status (exit 3)" 0 expect_rc 3 bash rig/vm.sh x86_64 "exit 3"
t "make vm fails a guest that WARNs" fail bash rig/vm.sh x86_64 "insmod $ko what=warn"
t "make vm fails a guest with a lockdep report" fail bash rig/vm.sh x86_64 "insmod $ko what=lockdep"
grep -q 'circular locking dependency' "$OUT/vm-x86_64/dmesg.txt" && lockdep_seen=0 || lockdep_seen=1
t "  ... and the lockdep report is what failed it" 0 test "$lockdep_seen" = 0
# A checkout under /tmp, which the x86_64 guest covers with its own tmpfs: the
# guest command runs in the checkout's directory and writes to its out/.
tmp_checkout() {
	local d rc=0
	d=$(mktemp -d /tmp/rig-selftest.XXXXXX)
	cp -a "$RIG_TOP/rig" "$d/rig"
	env -u OUT BUILD="$BUILD" bash "$d/rig/vm.sh" x86_64 \
		"[ \"\$(pwd)\" = $d ] && [ -f rig/guest/init ] && echo in-checkout >out/from-guest" || rc=$?
	echo "guest wrote: $(cat "$d/out/from-guest" 2>/dev/null)"
	[ "$rc" = 0 ] && [ "$(cat "$d/out/from-guest" 2>/dev/null)" = in-checkout ] || rc=1
	rm -rf "$d"
	return "$rc"
}
t "make vm runs from a checkout under /tmp (cwd and out/ in the guest)" 0 tmp_checkout

# 5. perf-suite's verdict, with fake perfs that print `perf test` lines: a
#    test "Flaky thing" and the project's shell tests, all Ok unless
#    FAKE_SUITE_MODE says otherwise for the series perf (build/perf/perf),
#    in the whole suite (one argument) or alone (two or more).
fb=$BUILD/selftest-suite
rm -rf "$fb" && mkdir -p "$fb/perf-base" "$fb/perf" "$fb/linux/tools/perf/tests/shell" "$fb/out"
for t in tools/perf/tests/shell/*.sh; do
	sed -n '2s/^# //p' "$t" | sed 's/ (exclusive)$//'
done >"$fb/own"
cat >"$fb/perf-base/perf" <<'FAKE'
#!/bin/bash
role=$(basename "$(dirname "$0")")
alone=0
[ $# -gt 1 ] && alone=1
res=Ok
case $FAKE_SUITE_MODE/$role/$alone in
regress/perf/*|flaky/perf/0|suite-only/perf/0) res=FAILED! ;;
flaky/*/1)
	n=$(cat "$0.n" 2>/dev/null || echo 0)
	echo $((n + 1)) >"$0.n"
	[ $((n % 2)) = 1 ] && res=FAILED!
	;;
esac
printf ' 1: Flaky thing : %s\n' "$res"
[ $alone = 1 ] && exit 0
n=2
while read -r d; do
	printf ' %d: %s : Ok\n' $n "$d"
	n=$((n + 1))
done <"$FAKE_SUITE_OWN"
FAKE
chmod +x "$fb/perf-base/perf"
cp "$fb/perf-base/perf" "$fb/perf/perf"
fake_suite() { # fake_suite MODE WANT-RC PATTERN: rig/perf/suite.sh's verdict
	rm -f "$fb"/perf*/perf.n
	local out rc=0
	out=$(FAKE_SUITE_MODE=$1 FAKE_SUITE_OWN=$fb/own BUILD=$fb OUT=$fb/out \
		RIG_CPU_LOCK_HELD=1 PERF_SUITE_NOBUILD=1 PERF_SUITE_RUNS=2 \
		PERF_SUITE_RECHECK=4 bash rig/perf/suite.sh 2>&1) || rc=$?
	echo "$out"
	echo "exit status $rc (want $2), want a line matching: $3"
	[ "$rc" = "$2" ] && grep -qE "$3" <<<"$out"
}
t "perf-suite: all Ok passes" 0 fake_suite ok 0 'no test that passes with the base fails'
t "perf-suite: a test the series fails alone too is a regression" 0 \
	fake_suite regress 1 "REGRESSION: 'Flaky thing'.*base failed 0, series 4"
t "perf-suite: a test that fails alone with both perfs is flaky, not counted" 0 \
	fake_suite flaky 0 "flaky with both perfs: 'Flaky thing'.*base failed 2, series 2"
t "perf-suite: a failure that does not recur alone is still counted" 0 \
	fake_suite suite-only 1 "REGRESSION: 'Flaky thing'.*not reproduced in 4 reruns"

# 6. The emulated Armv9 CPU (rig/qemu): the TRBE and ETE drivers probe on
#    -cpu max,x-trbe=on, the model's self-test module sees the architectural
#    TRBSR_EL1 status for misprogrammed buffers, -cpu max alone hides both.
t "emulated Armv9 CPU: drivers probe, model self-test, -cpu max unchanged (rig/qemu/selftest.sh)" 0 \
	bash rig/qemu/selftest.sh

echo "# rig-selftest: $pass passed, $fail failed"
[ "$fail" = 0 ]
