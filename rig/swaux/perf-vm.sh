#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make swaux-perf: perf record on the swaux software AUX PMU in the x86_64 VM
# (rig/swaux/guest.sh) with the host-built perf, then perf report -D and perf
# script of the recordings on the host (rig/swaux/check.sh).
#   - perf_swaux.ko is built from build/linux's module source (SWAUX_MSRC=<dir>
#     overrides) against build/kbuild-x86_64 into build/swaux-perf/ (not the
#     selftests' directory, which make selftests rebuilds);
#   - SWAUX_PERF=<perf binary> overrides build/perf/perf (it must be readable
#     from the guest: anything on the host's root is);
#   - SWAUX_RECORDS="aio ..." runs only those recordings, SWAUX_OUT=<dir>
#     puts the results there instead of out/swaux-perf;
#   - results: out/swaux-perf/{results.txt,check.tap,*.data,*.script.txt,
#     *.report-D.txt,vm.log}.
# Exit status: non-zero on a failed record or check, a guest timeout or a splat.
# shellcheck source=rig/lib.sh
. "$(dirname "$0")/../lib.sh"
stage "swaux-perf x86_64"

PERF=${SWAUX_PERF:-$BUILD/perf/perf}
O=$(kbuild_dir x86_64)
R=${SWAUX_OUT:-$OUT/swaux-perf}
D=$BUILD/swaux-perf
# SWAUX_RECORDS: which recordings (default all; rig/swaux/aio-ab.sh: aio)
RECORDS=${SWAUX_RECORDS:-sys-a cpu0 fork thread snap aio}
export SWAUX_RECORDS=$RECORDS
# The module source: the tree's (what make tree built), or SWAUX_MSRC=<dir>.
MSRC=${SWAUX_MSRC:-$TREE/tools/testing/selftests/perf_events/test_modules}

[ -x "$PERF" ] || die "no perf at $PERF: run 'make perf' (or set SWAUX_PERF)"
"$PERF" version --build-options >/dev/null || die "$PERF does not run"
[ -f "$O/arch/x86/boot/bzImage" ] || die "no x86_64 kernel in ${O#"$RIG_TOP"/}: run 'make kernel ARCH=x86_64' first"
[ -f "$O/Module.symvers" ] || die "no Module.symvers in ${O#"$RIG_TOP"/}: run 'make kernel ARCH=x86_64' first"

rm -rf "$R" "$D"
mkdir -p "$R" "$D/module"
(tree_lock shared && cp "$MSRC/perf_swaux.c" "$MSRC/swaux_abi.h" "$MSRC/Makefile" "$D/module/") ||
	die "no module source in $MSRC: run 'make tree' first"
cp "$RIG_TOP/rig/swaux/guest.sh" "$D/"

# shellcheck disable=SC2207
KARGS=($(kmake_args x86_64))
info "building perf_swaux.ko against ${O#"$RIG_TOP"/} (log: ${R#"$RIG_TOP"/}/module-build.log)"
# The kernel O= dir points at build/linux: keep the tree still while building
# (a subshell, so the lock is not held during the VM run).
if ! (tree_lock shared && make -C "$O" "${KARGS[@]}" CC="$(kcc x86_64)" M="$D/module" W=1 modules) \
	>"$R/module-build.log" 2>&1; then
	tail -30 "$R/module-build.log" >&2
	die "perf_swaux.ko build failed: see ${R#"$RIG_TOP"/}/module-build.log"
fi

info "running perf on swaux in the x86_64 guest with $PERF (log: ${R#"$RIG_TOP"/}/vm.log)"
set +e
VM_DIR=$OUT/vm-swaux-perf VM_TIMEOUT=${VM_TIMEOUT:-1200} \
	bash "$RIG_TOP/rig/vm.sh" x86_64 "sh $D/guest.sh $PERF $D/module/perf_swaux.ko $R '$RECORDS'" >"$R/vm.log" 2>&1
rc=$?
set -e
cp "$OUT/vm-swaux-perf/console.log" "$R/console.log" 2>/dev/null || true
if [ ! -s "$R/results.txt" ]; then
	tail -40 "$R/vm.log" >&2
	die "no results from the guest: see ${R#"$RIG_TOP"/}/vm.log and console.log"
fi
sed 's/^/  /' "$R/results.txt" >&2
if [ "$rc" = 0 ] && grep -q '^swaux-perf: not ok' "$R/results.txt"; then
	rc=1
fi
info "swaux-perf: vm exit $rc; decoding the recordings on the host"
bash "$RIG_TOP/rig/swaux/check.sh" "$PERF" "$R" | tee "$R/check.tap" || rc=1
info "swaux-perf: exit $rc; results in ${R#"$RIG_TOP"/}/{results.txt,check.tap}"
exit "$rc"
