/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/platform_device.h>: same include guard, contents come from the shims. */
#ifndef _PLATFORM_DEVICE_H_
#define _PLATFORM_DEVICE_H_

#include "trbe_shim.h"

#endif /* _PLATFORM_DEVICE_H_ */
