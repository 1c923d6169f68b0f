/* SPDX-License-Identifier: GPL-2.0 */
/* Shadow of <linux/perf/arm_pmu.h>: same include guard, contents come from the shims. */
#ifndef __ARM_PMU_H__
#define __ARM_PMU_H__

#include "trbe_shim.h"

#endif /* __ARM_PMU_H__ */
