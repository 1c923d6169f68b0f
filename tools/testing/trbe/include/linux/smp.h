/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/smp.h>: same include guard, contents come from the shims. */
#ifndef __LINUX_SMP_H
#define __LINUX_SMP_H

#include "trbe_shim.h"

#endif /* __LINUX_SMP_H */
