# SPDX-License-Identifier: GPL-2.0
# TRBE model harness (issue 3): tools/testing/trbe runs the tree's
# coresight-trbe.c against TRBE hardware, perf AUX and etm-perf models.
#
#   make trbe-test [BASE=1] [CORE=base|fixed|both]
#                            make tree, then build the harness from
#                            build/linux/tools/testing/trbe into
#                            build/trbe-<base|series> and run it with the
#                            perf core model CORE (default: base with
#                            BASE=1, fixed for the series)
#   make trbe-ab             the four (driver, core) pairs fail exactly what
#                            rig/trbe/expected-base-failures lists; the
#                            series (series driver, fixed core) passes all
#   make trbe-soak [SOAK_STEPS=n]
#                            the series' random tests over fresh seeds, both
#                            core models, until n steps (default 100000)
#
# KSRC=<kernel tree with the overlay copied in> skips `make tree`; for
# trbe-ab use KSRC_BASE=<tree> KSRC_SERIES=<tree>.

TRBE_KIND := $(if $(filter 1 y yes,$(BASE)),base,series)
# The rig's build directory (rig/lib.sh: BUILD, default build/).
TRBE_BUILD := $(if $(BUILD),$(abspath $(BUILD)),$(CURDIR)/build)

.PHONY: trbe-test trbe-ab trbe-soak

EXTRA_HELP += '  make trbe-test [BASE=1] [CORE=base|fixed|both]  TRBE driver model harness (build/trbe-<base|series>)' \
	'  make trbe-ab              harness: expected failures per (driver, core), all pass with the series' \
	'  make trbe-soak [SOAK_STEPS=n]  harness random tests over fresh seeds (default 10^5 steps)'

trbe-test:
ifeq ($(KSRC),)
	@$(MAKE) --no-print-directory tree BASE=$(BASE)
	@bash rig/trbe/run.sh $(TRBE_KIND) $(TRBE_BUILD)/linux $(CORE)
else
	@bash rig/trbe/run.sh $(TRBE_KIND) $(abspath $(KSRC)) $(CORE)
endif

trbe-ab:
	@bash rig/trbe/ab.sh

trbe-soak:
ifeq ($(KSRC),)
	@$(MAKE) --no-print-directory tree
	@bash rig/trbe/soak.sh $(TRBE_BUILD)/linux $(SOAK_STEPS)
else
	@bash rig/trbe/soak.sh $(abspath $(KSRC)) $(SOAK_STEPS)
endif

# Passes reliably (make tree BASE=1, then the series; about 100 s): part of make check.
CHECK_STAGES += trbe-ab
