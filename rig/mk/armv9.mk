# SPDX-License-Identifier: GPL-2.0
# rig/armv9: the redirect scenario (the aux_set_output kselftest with
# AUX_SET_OUTPUT_PMU=cs_etm) on real Armv9 hardware or Arm FVP
# (rig/armv9/run.sh, run by hand on the target, never here or in CI).
#
#   make armv9-lint   shellcheck; redirect.c and aux_set_output.c (the
#                     latter once build/linux exists) -Werror for x86_64
#                     and arm64; run.sh refuses (exit 2) without cs_etm,
#                     TRBE or the kselftest; make rig-selftest runs it too

EXTRA_HELP += '  make armv9-lint           rig/armv9 (Armv9/FVP script): shellcheck, -Werror builds, refusal without cs_etm/TRBE/kselftest'

.PHONY: armv9-lint

armv9-lint:
	@bash rig/armv9/lint.sh
