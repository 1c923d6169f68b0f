/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/pm_runtime.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_PM_RUNTIME_H
#define _LINUX_PM_RUNTIME_H

#include "trbe_shim.h"

#endif /* _LINUX_PM_RUNTIME_H */
