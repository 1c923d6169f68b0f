# SPDX-License-Identifier: GPL-2.0
# The emulated Armv9 CPU (issue 26): Debian's QEMU + rig/qemu/*.patch, a
# TRBE/ETE/TRF model behind -cpu max,x-trbe=on.
#
#   make qemu            build (or reuse from $RIG_CACHE/qemu) qemu-system-aarch64
#   make qemu-selftest   boot the arm64 kernel on it: the TRBE and ETE drivers
#                        probe, the model self-test module finds the
#                        architectural TRBSR_EL1 status for misprogrammed
#                        buffers, and -cpu max without the property still hides
#                        the features (part of make rig-selftest)

.PHONY: qemu qemu-selftest

EXTRA_HELP += '  make qemu                 qemu-system-aarch64 with the TRBE/ETE/TRF model (rig/qemu), cached in $$RIG_CACHE' \
	'  make qemu-selftest        arm64 guest on the model: drivers probe, model self-test, -cpu max unchanged'

qemu:
	@bash rig/qemu/build.sh

qemu-selftest:
	@$(MAKE) --no-print-directory kernel-arm64
	@bash rig/qemu/selftest.sh

# make cs-etm: perf record -e cs_etm//u in the arm64 guest on the model, perf.data
# decoded on the host by OpenCSD and judged by the swaux checker (every record
# attributed to cpu, pid and sequence number; no unflagged gap).
.PHONY: cs-etm
EXTRA_HELP += '  make cs-etm               perf record -e cs_etm//u on the emulated TRBE, decoded and judged on the host (out/cs-etm)'

cs-etm:
	@$(MAKE) --no-print-directory kernel-arm64
	@$(MAKE) --no-print-directory perf
	@bash rig/qemu/cs-etm.sh

CHECK_STAGES += cs-etm

# make cs-etm-perf-test: make cs-etm, and perf's own CoreSight shell tests
# (perf test coresight) in the same boot, listed, not asserted.
.PHONY: cs-etm-perf-test
EXTRA_HELP += '  make cs-etm-perf-test     make cs-etm + perf test coresight in the guest (results listed in out/cs-etm/perf-test.log)'

cs-etm-perf-test:
	@$(MAKE) --no-print-directory kernel-arm64
	@$(MAKE) --no-print-directory perf
	@CS_ETM_PERF_TEST=1 bash rig/qemu/cs-etm.sh

# make qemu-bench: the guest-time cost of the model (trace on vs off), ratios of
# medians within one run; not part of make check.
.PHONY: qemu-bench
EXTRA_HELP += '  make qemu-bench           guest-time cost of the TRBE/ETE model: trace on vs off (ratios)'

qemu-bench:
	@bash rig/qemu/bench.sh

# make cs-etm-ab: the SET_OUTPUT redirect through the real TRBE and ETE drivers
# on the emulated CPU (the aux_set_output kselftest with cs_etm, checked by the
# model's records), one boot per run: every base run shows the bug, every
# series run is clean; core/driver: the partial series, measured. make
# kernel-ab runs it for series and base (RUNS=1) on the kernels it builds.
.PHONY: cs-etm-ab
EXTRA_HELP += '  make cs-etm-ab [RUNS=10] [AB_KERNELS="series base core driver"]   the redirect kselftest through the real TRBE driver (emulated CPU)'

cs-etm-ab:
	@bash rig/qemu/redirect-ab.sh
