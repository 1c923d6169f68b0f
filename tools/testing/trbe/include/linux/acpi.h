/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/acpi.h>: same include guard, contents come from the shims. */
#ifndef _LINUX_ACPI_H
#define _LINUX_ACPI_H

#include "trbe_shim.h"

#endif /* _LINUX_ACPI_H */
