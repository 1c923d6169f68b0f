/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Every shadow header under include/ resolves to this file: the shims
 * are split by role into dup.h (copied definitions), stubs.h (no-ops)
 * and custom.h (behaviour routed into the models).
 */
#ifndef __TRBE_TEST_SHIM_H
#define __TRBE_TEST_SHIM_H

#include "dup.h"
#include "stubs.h"
#include "custom.h"

#endif /* __TRBE_TEST_SHIM_H */
