/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/of.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_OF_H
#define _LINUX_OF_H

#include "trbe_shim.h"

#endif /* _LINUX_OF_H */
