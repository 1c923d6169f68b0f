/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/device.h>: same include guard, contents come from the shims. */
#ifndef _DEVICE_H_
#define _DEVICE_H_

#include "trbe_shim.h"

#endif /* _DEVICE_H_ */
