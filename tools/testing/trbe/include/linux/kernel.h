/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/kernel.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_KERNEL_H
#define _LINUX_KERNEL_H

#include "trbe_shim.h"

#endif /* _LINUX_KERNEL_H */
