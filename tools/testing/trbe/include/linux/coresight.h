/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/coresight.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_CORESIGHT_H
#define _LINUX_CORESIGHT_H

#include "trbe_shim.h"

#endif /* _LINUX_CORESIGHT_H */
