# SPDX-License-Identifier: GPL-2.0
# TRBE model harness (issue 3): tools/testing/trbe runs the tree's
# coresight-trbe.c against TRBE hardware, perf AUX and etm-perf models.
#
#   make trbe-test [BASE=1]  make tree, then build the harness from
#                            build/linux/tools/testing/trbe into
#                            build/trbe-<base|series> and run it
#   make trbe-ab             base fails exactly rig/trbe/expected-base-failures,
#                            series passes every test
#
# KSRC=<kernel tree with the overlay copied in> skips `make tree`; for
# trbe-ab use KSRC_BASE=<tree> KSRC_SERIES=<tree>.

TRBE_KIND := $(if $(filter 1 y yes,$(BASE)),base,series)
# The rig's build directory (rig/lib.sh: BUILD, default build/).
TRBE_BUILD := $(if $(BUILD),$(abspath $(BUILD)),$(CURDIR)/build)

.PHONY: trbe-test trbe-ab

EXTRA_HELP += '  make trbe-test [BASE=1]   TRBE driver model harness (build/trbe-<base|series>)' \
	'  make trbe-ab              harness: expected failures on the base, all pass with the series'

trbe-test:
ifeq ($(KSRC),)
	@$(MAKE) --no-print-directory tree BASE=$(BASE)
	@bash rig/trbe/run.sh $(TRBE_KIND) $(TRBE_BUILD)/linux
else
	@bash rig/trbe/run.sh $(TRBE_KIND) $(abspath $(KSRC))
endif

trbe-ab:
	@bash rig/trbe/ab.sh

# Passes reliably (make tree BASE=1, then the series; about 100 s): part of make check.
CHECK_STAGES += trbe-ab
