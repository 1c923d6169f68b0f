/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/bitops.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_BITOPS_H
#define _LINUX_BITOPS_H

#include "trbe_shim.h"

#endif /* _LINUX_BITOPS_H */
