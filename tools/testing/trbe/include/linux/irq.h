/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/irq.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_IRQ_H
#define _LINUX_IRQ_H

#include "trbe_shim.h"

#endif /* _LINUX_IRQ_H */
