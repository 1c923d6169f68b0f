# SPDX-License-Identifier: GPL-2.0
# The rig: Debian's linux-source-7.3 + patches/series + overlay -> built, booted,
# tested kernels. Never copied into the kernel tree. `make help` lists the targets.

ARCH ?= x86_64
BASE ?= 0
CMD ?=
export ARCH BASE

# Stages of `make check`, in order. Fragments in rig/mk/ append to it.
# vm-x86_64 and vm-arm64 are not stages: kernel-ab boots both kernels and
# checks what they check (PMUs, the TRBE probe) on its own boots.
CHECK_STAGES := deps tree kernel-x86_64 kernel-arm64 qemu rig-selftest lint

.PHONY: help deps tree kernel vm lint cocci check run clean rig-selftest \
	kernel-x86_64 kernel-arm64 vm-x86_64 vm-arm64

help:
	@echo 'Main commands:'
	@echo '  make run [ARCH=x86_64]    build the patched kernel, boot it in QEMU, record under redirection (default: arm64, cs_etm on the emulated TRBE)'
	@echo '  make check                every test (what CI runs); ends with "N passed, N failed"'
	@echo 'Building blocks:'
	@echo '  make deps                 apt-get install what the rig needs (idempotent)'
	@echo '  make tree [BASE=1]        build/linux: base + overlay + series (BASE=1: no series)'
	@echo '  make kernel ARCH=x86_64|arm64 [BASE=1]   build into build/kbuild-$$ARCH'
	@echo '  make vm ARCH=... CMD=...  boot the built kernel under QEMU TCG and run CMD in the guest'
	@echo '  make lint                 series lint, checkpatch --strict, sparse + W=1 vs the base'
	@echo '  make cocci                coccicheck of the kernel files the series touches, vs the base (slow)'
	@echo '  make rig-selftest         the rig checks itself (overlay guard, fuzz, splat detection)'
	@echo '  make clean                remove build/ and out/ (the cache in $$RIG_CACHE stays)'
	@$(if $(EXTRA_HELP),printf '%s\n' 'More targets:' $(EXTRA_HELP))
	@echo 'Variables: ARCH=$(ARCH) BASE=$(BASE) RIG_CACHE=$${RIG_CACHE:-/var/cache/trbe-rig}'

deps:
	@bash rig/deps.sh

tree:
	@bash rig/tree.sh

kernel:
	@$(MAKE) --no-print-directory tree BASE=$(BASE)
	@bash rig/kernel.sh $(ARCH)

vm:
	@bash rig/vm.sh $(ARCH) "$(CMD)"

lint:
	@bash rig/lint.sh

cocci:
	@bash rig/cocci.sh

rig-selftest:
	@bash rig/selftest.sh

kernel-x86_64 kernel-arm64: kernel-%:
	@$(MAKE) --no-print-directory tree BASE=0
	@bash rig/kernel.sh $*

vm-x86_64 vm-arm64: vm-%:
	@bash rig/vm-smoke.sh $*

# make run: the emulated Armv9 CPU (perf record -e cs_etm//u through the real
# TRBE and ETE drivers) unless ARCH is given; ARCH=x86_64 is the software AUX
# PMU flow.
RUN_ARCH := $(if $(filter command line environment,$(origin ARCH)),$(ARCH),arm64)
run:
	@ARCH=$(RUN_ARCH) RUN_DOC_PNG=1 bash rig/run.sh

check:
	@bash rig/check.sh $(CHECK_STAGES)

clean:
	rm -rf build out

-include $(sort $(wildcard rig/mk/*.mk))
