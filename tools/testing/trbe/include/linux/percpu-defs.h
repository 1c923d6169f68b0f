/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/percpu-defs.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_PERCPU_DEFS_H
#define _LINUX_PERCPU_DEFS_H

#include "trbe_shim.h"

#endif /* _LINUX_PERCPU_DEFS_H */
