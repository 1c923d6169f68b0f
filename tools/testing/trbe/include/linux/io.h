/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/io.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_IO_H
#define _LINUX_IO_H

#include "trbe_shim.h"

#endif /* _LINUX_IO_H */
