/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <asm/barrier.h>: same include guard, contents come from the shims. */
#ifndef __ASM_BARRIER_H
#define __ASM_BARRIER_H

#include "trbe_shim.h"

#endif /* __ASM_BARRIER_H */
