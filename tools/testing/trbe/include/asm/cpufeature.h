/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <asm/cpufeature.h>: same include guard, contents come from the shims. */
#ifndef __ASM_CPUFEATURE_H
#define __ASM_CPUFEATURE_H

#include "trbe_shim.h"

#endif /* __ASM_CPUFEATURE_H */
