# SPDX-License-Identifier: GPL-2.0
# The series as maintainers receive it (issue 17), driven by patches/upstream.conf
# and the cover letters in patches/cover/<tree>.txt.
#
#   make upstream [AUTHOR="Name <email>"]   out/upstream/<tree>/: git format-patch
#                            --cover-letter per target tree; without AUTHOR no
#                            Signed-off-by, and it says that it cannot be posted
#   make upstream-check [AUTHOR=...]        each tree's mails: git am onto the pristine
#                            base, checkpatch --strict with the sign-off, every
#                            patch built on its own (kernels x86_64 + arm64 with
#                            W=1 on the touched directories, perf); slow, not
#                            part of make check
#   make upstream-selftest   upstream.conf agrees with patches/series and the
#                            overlay, and the consistency check catches each kind
#                            of disagreement (a few seconds; part of make check)

.PHONY: upstream upstream-check upstream-selftest

EXTRA_HELP += '  make upstream [AUTHOR="Name <email>"]  per-tree postable series in out/upstream/<tree>/ (patches/upstream.conf)' \
	'  make upstream-check [AUTHOR=...]  each tree: git am on the base, checkpatch --strict, every patch builds (slow)' \
	'  make upstream-selftest    patches/upstream.conf agrees with patches/series and the overlay; the check catches drift'

upstream:
	@$(MAKE) --no-print-directory tree BASE=0
	@AUTHOR='$(AUTHOR)' bash rig/upstream.sh write

upstream-check:
	@$(MAKE) --no-print-directory tree BASE=0
	@AUTHOR='$(AUTHOR)' bash rig/upstream.sh check

upstream-selftest:
	@bash rig/upstream-selftest.sh

CHECK_STAGES += upstream-selftest
