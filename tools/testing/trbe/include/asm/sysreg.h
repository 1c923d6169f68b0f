/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shadow of <asm/sysreg.h>. The register encodings and field definitions
 * are the ones the kernel build generates from arch/arm64/tools/sysreg
 * with arch/arm64/tools/gen-sysreg.awk; the Makefile runs the same script
 * on the tree under test. Accessors are routed into the TRBE model by
 * custom.h.
 */
#ifndef __ASM_SYSREG_H
#define __ASM_SYSREG_H

#include "trbe_shim.h"
#include <asm/sysreg-defs.h>

#endif /* __ASM_SYSREG_H */
