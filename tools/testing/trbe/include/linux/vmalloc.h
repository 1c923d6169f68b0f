/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/vmalloc.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_VMALLOC_H
#define _LINUX_VMALLOC_H

#include "trbe_shim.h"

#endif /* _LINUX_VMALLOC_H */
