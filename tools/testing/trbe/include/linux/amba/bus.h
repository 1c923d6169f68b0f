/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/amba/bus.h>: same include guard, contents come from the shims. */
#ifndef ASMARM_AMBA_H
#define ASMARM_AMBA_H

#include "trbe_shim.h"

#endif /* ASMARM_AMBA_H */
